-- ported_scripts119_spec.lua — pytorch/audio torchaudio 0.13.0 (matching PyTorch 1.13):
-- torchaudio/functional/functional.py (spectrogram, inverse_spectrogram, griffinlim,
-- amplitude_to_DB, DB_to_amplitude, _hz_to_mel, _mel_to_hz, _create_triangular_filterbank,
-- melscale_fbanks, linear_fbanks, create_dct, mu_law_encoding, mu_law_decoding, compute_deltas)
-- and torchaudio/transforms/_transforms.py (Spectrogram, InverseSpectrogram, GriffinLim,
-- AmplitudeToDB, MelScale, MelSpectrogram, MFCC, ComputeDeltas, with their registered window /
-- fb / dct_mat buffers), ported line for line over tide.stft / tide.istft and complex tensors at
-- tiny sizes (n_fft 16, hop 4, 200 samples, 6 mels, sample rate 800, 4 MFCCs). The Python line
-- stands above each Lua line that differs from it. Dims are 1-based; Python's slices become
-- narrow. Reference values: PyTorch 1.13 running the same functions on the same waveform.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list
local close = ported.close

local function warn(msg) -- warnings.warn: tide has no warnings module; printing would be noise
    return msg
end

-- torch.Size arithmetic: shape[:-k] + other[-j:]
local function shape_cat(a, a_keep, b, b_last)
    local out = {}
    for i = 1, a_keep do out[#out + 1] = a[i] end
    for i = #b - b_last + 1, #b do out[#out + 1] = b[i] end
    return out
end

---------------------------------------------------------------------------------------------
-- torchaudio/functional/functional.py
---------------------------------------------------------------------------------------------
local AF = {}

-- def _get_spec_norms(normalized: Union[str, bool]):
local function _get_spec_norms(normalized)
    local frame_length_norm, window_norm = false, false
    -- if torch.jit.isinstance(normalized, str):
    if type(normalized) == "string" then
        if normalized ~= "frame_length" and normalized ~= "window" then
            error("Invalid normalized parameter: " .. normalized)
        end
        if normalized == "frame_length" then
            frame_length_norm = true
        elseif normalized == "window" then
            window_norm = true
        end
    elseif type(normalized) == "boolean" then
        if normalized then
            window_norm = true
        end
    else
        error("Input type not supported")
    end
    return frame_length_norm, window_norm
end

-- def spectrogram(waveform, pad, window, n_fft, hop_length, win_length, power, normalized,
--                 center=True, pad_mode="reflect", onesided=True, return_complex=True):
function AF.spectrogram(waveform, pad, window, n_fft, hop_length, win_length, power, normalized,
                        center, pad_mode, onesided, return_complex)
    if center == nil then center = true end
    pad_mode = pad_mode or "reflect"
    if onesided == nil then onesided = true end
    if return_complex == nil then return_complex = true end
    if power == nil and not return_complex then
        warn("The use of pseudo complex type in spectrogram is now deprecated.")
    end
    if pad > 0 then
        -- waveform = torch.nn.functional.pad(waveform, (pad, pad), "constant")
        waveform = F.pad(waveform, { pad, pad }, "constant")
    end
    local frame_length_norm, window_norm = _get_spec_norms(normalized)
    -- pack batch
    -- shape = waveform.size()
    local shape = waveform:size()
    -- waveform = waveform.reshape(-1, shape[-1])
    waveform = waveform:reshape(-1, shape[#shape])
    -- default values are consistent with librosa.core.spectrum._spectrogram
    -- spec_f = torch.stft(input=waveform, n_fft=n_fft, hop_length=hop_length, ...)
    local spec_f = tide.stft(waveform, n_fft, {
        hop_length = hop_length, win_length = win_length, window = window, center = center,
        pad_mode = pad_mode, normalized = frame_length_norm, onesided = onesided,
        return_complex = true,
    })
    -- unpack batch
    -- spec_f = spec_f.reshape(shape[:-1] + spec_f.shape[-2:])
    spec_f = spec_f:reshape(shape_cat(shape, #shape - 1, spec_f.shape, 2))
    if window_norm then
        -- spec_f /= window.pow(2.0).sum().sqrt()
        spec_f:div_(window:pow(2.0):sum():sqrt())
    end
    if power ~= nil then
        if power == 1.0 then
            return spec_f:abs()
        end
        return spec_f:abs():pow(power)
    end
    if not return_complex then
        return tide.view_as_real(spec_f)
    end
    return spec_f
end

-- def inverse_spectrogram(spectrogram, length, pad, window, n_fft, hop_length, win_length,
--                         normalized, center=True, pad_mode="reflect", onesided=True):
function AF.inverse_spectrogram(spectrogram, length, pad, window, n_fft, hop_length, win_length,
                                normalized, center, pad_mode, onesided) -- luacheck: ignore
    if center == nil then center = true end
    if onesided == nil then onesided = true end
    local frame_length_norm, window_norm = _get_spec_norms(normalized)
    if not spectrogram:is_complex() then
        error("Expected `spectrogram` to be complex dtype.")
    end
    if window_norm then
        spectrogram = spectrogram * window:pow(2.0):sum():sqrt()
    end
    -- pack batch
    local shape = spectrogram:size()
    -- spectrogram = spectrogram.reshape(-1, shape[-2], shape[-1])
    spectrogram = spectrogram:reshape(-1, shape[#shape - 1], shape[#shape])
    -- default values are consistent with librosa.core.spectrum._spectrogram
    local waveform = tide.istft(spectrogram, n_fft, {
        hop_length = hop_length, win_length = win_length, window = window, center = center,
        normalized = frame_length_norm, onesided = onesided,
        -- length=length + 2 * pad if length is not None else None,
        length = length and length + 2 * pad or nil,
        return_complex = false,
    })
    if length ~= nil and pad > 0 then
        -- remove padding from front and back
        -- waveform = waveform[:, pad:-pad]
        waveform = waveform:narrow(2, pad + 1, waveform:size(2) - 2 * pad)
    end
    -- unpack batch
    -- waveform = waveform.reshape(shape[:-2] + waveform.shape[-1:])
    waveform = waveform:reshape(shape_cat(shape, #shape - 2, waveform.shape, 1))
    return waveform
end

-- def _get_complex_dtype(real_dtype: torch.dtype):
local function _get_complex_dtype(real_dtype)
    if real_dtype == "float64" then return tide.cdouble end
    if real_dtype == "float32" then return tide.cfloat end
    -- if real_dtype == torch.half: return torch.complex32
    -- GAP: tide has no complex32 (tide.rand(size, {dtype = "complex32"}) raises "tide: rand:
    -- expected a complex dtype (complex64, complex128), got complex32"), and tide.stft of a
    -- float16 input raises as PyTorch 1.13's CPU stft does ("tide: stft: Unsupported dtype
    -- float16 (PyTorch 1.13's fft takes float32 and float64); convert with :float()")
    error(string.format("Unexpected dtype %s", tostring(real_dtype)))
end

-- def griffinlim(specgram, window, n_fft, hop_length, win_length, power, n_iter, momentum,
--                length, rand_init):
-- init_angles (not torchaudio's): a fixed initial phase, so that the check does not depend on
-- torch.rand's stream (tide's differs)
function AF.griffinlim(specgram, window, n_fft, hop_length, win_length, power, n_iter, momentum,
                       length, rand_init, init_angles)
    -- if not 0 <= momentum < 1:
    if not (0 <= momentum and momentum < 1) then
        error(string.format("momentum must be in range [0, 1). Found: %s", momentum))
    end
    momentum = momentum / (1 + momentum)
    -- pack batch
    local shape = specgram:size()
    -- specgram = specgram.reshape([-1] + list(shape[-2:]))
    specgram = specgram:reshape(-1, shape[#shape - 1], shape[#shape])
    specgram = specgram:pow(1 / power)
    -- initialize the phase
    local angles
    if init_angles ~= nil then
        angles = init_angles:reshape(specgram.shape)
    elseif rand_init then
        -- angles = torch.rand(specgram.size(), dtype=_get_complex_dtype(specgram.dtype), ...)
        angles = tide.rand(specgram:size(), { dtype = _get_complex_dtype(specgram.dtype),
            device = specgram.device })
    else
        -- angles = torch.full(specgram.size(), 1, dtype=_get_complex_dtype(specgram.dtype), ...)
        angles = tide.full(specgram:size(), 1, { dtype = _get_complex_dtype(specgram.dtype),
            device = specgram.device })
    end
    -- And initialize the previous iterate to 0
    -- tprev = torch.tensor(0.0, dtype=specgram.dtype, device=specgram.device)
    local tprev = tide.tensor(0.0, { dtype = specgram.dtype, device = specgram.device })
    for _ = 1, n_iter do
        -- Invert with our current estimate of the phases
        -- inverse = torch.istft(specgram * angles, n_fft=n_fft, hop_length=hop_length, ...)
        local inverse = tide.istft(specgram * angles, n_fft, { hop_length = hop_length,
            win_length = win_length, window = window, length = length })
        -- Rebuild the spectrogram
        -- rebuilt = torch.stft(input=inverse, n_fft=n_fft, hop_length=hop_length, ...)
        local rebuilt = tide.stft(inverse, n_fft, { hop_length = hop_length,
            win_length = win_length, window = window, center = true, pad_mode = "reflect",
            normalized = false, onesided = true, return_complex = true })
        -- Update our phase estimates
        angles = rebuilt
        -- if momentum:
        if momentum ~= 0 then
            angles = angles - tprev:mul_(momentum)
        end
        angles = angles:div(angles:abs():add(1e-16))
        -- Store the previous iterate
        tprev = rebuilt
    end
    -- Return the final phase estimates
    local waveform = tide.istft(specgram * angles, n_fft, { hop_length = hop_length,
        win_length = win_length, window = window, length = length })
    -- unpack batch
    waveform = waveform:reshape(shape_cat(shape, #shape - 2, waveform.shape, 1))
    return waveform
end

-- def amplitude_to_DB(x, multiplier, amin, db_multiplier, top_db=None):
function AF.amplitude_to_DB(x, multiplier, amin, db_multiplier, top_db)
    -- x_db = multiplier * torch.log10(torch.clamp(x, min=amin))
    local x_db = multiplier * tide.log10(tide.clamp(x, amin))
    -- x_db -= multiplier * db_multiplier
    x_db = x_db - multiplier * db_multiplier
    if top_db ~= nil then
        -- Expand batch
        local shape = x_db:size()
        -- packed_channels = shape[-3] if x_db.dim() > 2 else 1
        local packed_channels = x_db:dim() > 2 and shape[#shape - 2] or 1
        x_db = x_db:reshape(-1, packed_channels, shape[#shape - 1], shape[#shape])
        -- x_db = torch.max(x_db, (x_db.amax(dim=(-3, -2, -1)) - top_db).view(-1, 1, 1, 1))
        x_db = tide.max(x_db, (x_db:amax({ -3, -2, -1 }) - top_db):view(-1, 1, 1, 1))
        -- Repack batch
        x_db = x_db:reshape(shape)
    end
    return x_db
end

-- def DB_to_amplitude(x, ref, power):
function AF.DB_to_amplitude(x, ref, power)
    -- return ref * torch.pow(torch.pow(10.0, 0.1 * x), power)
    return ref * tide.pow(tide.pow(10.0, 0.1 * x), power)
end

-- def _hz_to_mel(freq: float, mel_scale: str = "htk") -> float:
function AF._hz_to_mel(freq, mel_scale)
    mel_scale = mel_scale or "htk"
    if mel_scale ~= "slaney" and mel_scale ~= "htk" then
        error('mel_scale should be one of "htk" or "slaney".')
    end
    if mel_scale == "htk" then
        -- return 2595.0 * math.log10(1.0 + (freq / 700.0))
        return 2595.0 * (math.log(1.0 + (freq / 700.0)) / math.log(10)) -- Lua 5.1: no log(x, b)
    end
    -- Fill in the linear part
    local f_min = 0.0
    local f_sp = 200.0 / 3
    local mels = (freq - f_min) / f_sp
    -- Fill in the log-scale part
    local min_log_hz = 1000.0
    local min_log_mel = (min_log_hz - f_min) / f_sp
    local logstep = math.log(6.4) / 27.0
    if freq >= min_log_hz then
        mels = min_log_mel + math.log(freq / min_log_hz) / logstep
    end
    return mels
end

-- def _mel_to_hz(mels: Tensor, mel_scale: str = "htk") -> Tensor:
function AF._mel_to_hz(mels, mel_scale)
    mel_scale = mel_scale or "htk"
    if mel_scale ~= "slaney" and mel_scale ~= "htk" then
        error('mel_scale should be one of "htk" or "slaney".')
    end
    if mel_scale == "htk" then
        -- return 700.0 * (10.0**(mels / 2595.0) - 1.0)
        return 700.0 * (10.0 ^ (mels / 2595.0) - 1.0)
    end
    -- Fill in the linear scale
    local f_min = 0.0
    local f_sp = 200.0 / 3
    local freqs = f_min + f_sp * mels
    -- And now the nonlinear scale
    local min_log_hz = 1000.0
    local min_log_mel = (min_log_hz - f_min) / f_sp
    local logstep = math.log(6.4) / 27.0
    -- log_t = (mels >= min_log_mel)
    local log_t = mels:ge(min_log_mel)
    -- freqs[log_t] = min_log_hz * torch.exp(logstep * (mels[log_t] - min_log_mel))
    freqs[log_t] = min_log_hz * tide.exp(logstep * (mels[log_t] - min_log_mel))
    return freqs
end

-- def _create_triangular_filterbank(all_freqs: Tensor, f_pts: Tensor) -> Tensor:
function AF._create_triangular_filterbank(all_freqs, f_pts)
    -- calculate the difference between each filter mid point and each stft freq point in hertz
    local m = f_pts:size(1)
    -- f_diff = f_pts[1:] - f_pts[:-1]  # (n_filter + 1)
    local f_diff = f_pts:narrow(1, 2, m - 1) - f_pts:narrow(1, 1, m - 1)
    -- slopes = f_pts.unsqueeze(0) - all_freqs.unsqueeze(1)  # (n_freqs, n_filter + 2)
    local slopes = f_pts:unsqueeze(1) - all_freqs:unsqueeze(2)
    -- create overlapping triangles
    local zero = tide.zeros(1)
    -- down_slopes = (-1.0 * slopes[:, :-2]) / f_diff[:-1]  # (n_freqs, n_filter)
    local down_slopes = (-1.0 * slopes:narrow(2, 1, m - 2)) / f_diff:narrow(1, 1, m - 2)
    -- up_slopes = slopes[:, 2:] / f_diff[1:]  # (n_freqs, n_filter)
    local up_slopes = slopes:narrow(2, 3, m - 2) / f_diff:narrow(1, 2, m - 2)
    -- fb = torch.max(zero, torch.min(down_slopes, up_slopes))
    local fb = tide.max(zero, tide.min(down_slopes, up_slopes))
    return fb
end

-- def melscale_fbanks(n_freqs, f_min, f_max, n_mels, sample_rate, norm=None, mel_scale="htk"):
function AF.melscale_fbanks(n_freqs, f_min, f_max, n_mels, sample_rate, norm, mel_scale)
    mel_scale = mel_scale or "htk"
    if norm ~= nil and norm ~= "slaney" then
        error('norm must be one of None or "slaney"')
    end
    -- freq bins
    -- all_freqs = torch.linspace(0, sample_rate // 2, n_freqs)
    local all_freqs = tide.linspace(0, math.floor(sample_rate / 2), n_freqs)
    -- calculate mel freq bins
    local m_min = AF._hz_to_mel(f_min, mel_scale)
    local m_max = AF._hz_to_mel(f_max, mel_scale)
    local m_pts = tide.linspace(m_min, m_max, n_mels + 2)
    local f_pts = AF._mel_to_hz(m_pts, mel_scale)
    -- create filterbank
    local fb = AF._create_triangular_filterbank(all_freqs, f_pts)
    if norm ~= nil and norm == "slaney" then
        -- Slaney-style mel is scaled to be approx constant energy per channel
        -- enorm = 2.0 / (f_pts[2 : n_mels + 2] - f_pts[:n_mels])
        local enorm = 2.0 / (f_pts:narrow(1, 3, n_mels) - f_pts:narrow(1, 1, n_mels))
        -- fb *= enorm.unsqueeze(0)
        fb:mul_(enorm:unsqueeze(1))
    end
    -- if (fb.max(dim=0).values == 0.0).any():
    local values = fb:max(1) -- (values, indices as two Lua results)
    if values:eq(0.0):any():item() then
        warn("At least one mel filterbank has all zero values.")
    end
    return fb
end

-- def linear_fbanks(n_freqs, f_min, f_max, n_filter, sample_rate):
function AF.linear_fbanks(n_freqs, f_min, f_max, n_filter, sample_rate)
    -- freq bins
    local all_freqs = tide.linspace(0, math.floor(sample_rate / 2), n_freqs)
    -- filter mid-points
    local f_pts = tide.linspace(f_min, f_max, n_filter + 2)
    -- create filterbank
    local fb = AF._create_triangular_filterbank(all_freqs, f_pts)
    return fb
end

-- def create_dct(n_mfcc: int, n_mels: int, norm: Optional[str]) -> Tensor:
function AF.create_dct(n_mfcc, n_mels, norm)
    -- http://en.wikipedia.org/wiki/Discrete_cosine_transform#DCT-II
    -- n = torch.arange(float(n_mels))
    local n = tide.arange(n_mels, { dtype = "float32" })
    -- k = torch.arange(float(n_mfcc)).unsqueeze(1)
    local k = tide.arange(n_mfcc, { dtype = "float32" }):unsqueeze(2)
    -- dct = torch.cos(math.pi / float(n_mels) * (n + 0.5) * k)  # size (n_mfcc, n_mels)
    local dct = tide.cos(math.pi / n_mels * (n + 0.5) * k)
    if norm == nil then
        -- dct *= 2.0
        dct:mul_(2.0)
    else
        assert(norm == "ortho")
        -- dct[0] *= 1.0 / math.sqrt(2.0)
        dct[1]:mul_(1.0 / math.sqrt(2.0))
        -- dct *= math.sqrt(2.0 / float(n_mels))
        dct:mul_(math.sqrt(2.0 / n_mels))
    end
    return dct:t()
end

-- def mu_law_encoding(x: Tensor, quantization_channels: int) -> Tensor:
function AF.mu_law_encoding(x, quantization_channels)
    local mu = quantization_channels - 1.0
    if not x:is_floating_point() then
        warn("The input Tensor must be of floating type.")
        x = x:to("float32")
    end
    -- mu = torch.tensor(mu, dtype=x.dtype)
    mu = tide.tensor(mu, { dtype = x.dtype })
    -- x_mu = torch.sign(x) * torch.log1p(mu * torch.abs(x)) / torch.log1p(mu)
    local x_mu = tide.sign(x) * tide.log1p(mu * tide.abs(x)) / tide.log1p(mu)
    -- x_mu = ((x_mu + 1) / 2 * mu + 0.5).to(torch.int64)
    x_mu = ((x_mu + 1) / 2 * mu + 0.5):to("int64")
    return x_mu
end

-- def mu_law_decoding(x_mu: Tensor, quantization_channels: int) -> Tensor:
function AF.mu_law_decoding(x_mu, quantization_channels)
    local mu = quantization_channels - 1.0
    if not x_mu:is_floating_point() then
        x_mu = x_mu:to("float32")
    end
    mu = tide.tensor(mu, { dtype = x_mu.dtype })
    -- x = ((x_mu) / mu) * 2 - 1.0
    local x = ((x_mu) / mu) * 2 - 1.0
    -- x = torch.sign(x) * (torch.exp(torch.abs(x) * torch.log1p(mu)) - 1.0) / mu
    x = tide.sign(x) * (tide.exp(tide.abs(x) * tide.log1p(mu)) - 1.0) / mu
    return x
end

-- def compute_deltas(specgram: Tensor, win_length: int = 5, mode: str = "replicate") -> Tensor:
function AF.compute_deltas(specgram, win_length, mode)
    win_length, mode = win_length or 5, mode or "replicate"
    local device = specgram.device
    local dtype = specgram.dtype
    -- pack batch
    local shape = specgram:size()
    -- specgram = specgram.reshape(1, -1, shape[-1])
    specgram = specgram:reshape(1, -1, shape[#shape])
    if win_length < 3 then
        error(string.format(
            "Window length should be greater than or equal to 3. Found win_length %d", win_length))
    end
    -- n = (win_length - 1) // 2
    local n = math.floor((win_length - 1) / 2)
    -- twice sum of integer squared
    local denom = n * (n + 1) * (2 * n + 1) / 3
    -- specgram = torch.nn.functional.pad(specgram, (n, n), mode=mode)
    specgram = F.pad(specgram, { n, n }, mode)
    -- kernel = torch.arange(-n, n + 1, 1, device=device, dtype=dtype).repeat(
    --     specgram.shape[1], 1, 1)
    local kernel = tide.arange(-n, n + 1, 1, { device = device, dtype = dtype })
    kernel = kernel["repeat"](kernel, specgram.shape[2], 1, 1)
    -- output = torch.nn.functional.conv1d(specgram, kernel, groups=specgram.shape[1]) / denom
    local output = F.conv1d(specgram, kernel, { groups = specgram.shape[2] }) / denom
    -- unpack batch
    output = output:reshape(shape)
    return output
end

---------------------------------------------------------------------------------------------
-- torchaudio/transforms/_transforms.py
---------------------------------------------------------------------------------------------
local T = {}

-- class Spectrogram(torch.nn.Module):
T.Spectrogram = nn.Module:extend("Spectrogram")
-- def __init__(self, n_fft=400, win_length=None, hop_length=None, pad=0,
--              window_fn=torch.hann_window, power=2.0, normalized=False, wkwargs=None,
--              center=True, pad_mode="reflect", onesided=True, return_complex=True):
function T.Spectrogram:init(o)
    o = o or {}
    self.n_fft = o.n_fft or 400
    -- number of FFT bins. the returned STFT result will have n_fft // 2 + 1
    -- number of frequencies due to onesided=True in torch.stft
    -- self.win_length = win_length if win_length is not None else n_fft
    self.win_length = o.win_length or self.n_fft
    -- self.hop_length = hop_length if hop_length is not None else self.win_length // 2
    self.hop_length = o.hop_length or math.floor(self.win_length / 2)
    local window_fn = o.window_fn or tide.hann_window
    -- window = window_fn(self.win_length) if wkwargs is None else window_fn(self.win_length,
    --                                                                        **wkwargs)
    local window = window_fn(self.win_length, o.wkwargs)
    self:register_buffer("window", window)
    self.pad = o.pad or 0
    -- self.power = power
    if o.power == nil then self.power = 2.0 elseif o.power == false then self.power = nil
    else self.power = o.power end -- power=None is `false` here (nil is the default)
    if o.normalized == nil then self.normalized = false else self.normalized = o.normalized end
    if o.center == nil then self.center = true else self.center = o.center end
    self.pad_mode = o.pad_mode or "reflect"
    if o.onesided == nil then self.onesided = true else self.onesided = o.onesided end
    if o.return_complex == nil then self.return_complex = true
    else self.return_complex = o.return_complex end
end
-- def forward(self, waveform: Tensor) -> Tensor:
function T.Spectrogram:forward(waveform)
    return AF.spectrogram(waveform, self.pad, self.window, self.n_fft, self.hop_length,
        self.win_length, self.power, self.normalized, self.center, self.pad_mode, self.onesided,
        self.return_complex)
end

-- class InverseSpectrogram(torch.nn.Module):
T.InverseSpectrogram = nn.Module:extend("InverseSpectrogram")
-- def __init__(self, n_fft=400, win_length=None, hop_length=None, pad=0,
--              window_fn=torch.hann_window, normalized=False, wkwargs=None, center=True,
--              pad_mode="reflect", onesided=True):
function T.InverseSpectrogram:init(o)
    o = o or {}
    self.n_fft = o.n_fft or 400
    self.win_length = o.win_length or self.n_fft
    self.hop_length = o.hop_length or math.floor(self.win_length / 2)
    local window_fn = o.window_fn or tide.hann_window
    self:register_buffer("window", window_fn(self.win_length, o.wkwargs))
    self.pad = o.pad or 0
    if o.normalized == nil then self.normalized = false else self.normalized = o.normalized end
    if o.center == nil then self.center = true else self.center = o.center end
    self.pad_mode = o.pad_mode or "reflect"
    if o.onesided == nil then self.onesided = true else self.onesided = o.onesided end
end
-- def forward(self, spectrogram: Tensor, length: Optional[int] = None) -> Tensor:
function T.InverseSpectrogram:forward(spectrogram, length)
    return AF.inverse_spectrogram(spectrogram, length, self.pad, self.window, self.n_fft,
        self.hop_length, self.win_length, self.normalized, self.center, self.pad_mode,
        self.onesided)
end

-- class GriffinLim(torch.nn.Module):
T.GriffinLim = nn.Module:extend("GriffinLim")
-- def __init__(self, n_fft=400, n_iter=32, win_length=None, hop_length=None,
--              window_fn=torch.hann_window, power=2.0, wkwargs=None, momentum=0.99,
--              length=None, rand_init=True):
function T.GriffinLim:init(o)
    o = o or {}
    local momentum = o.momentum or 0.99
    -- assert momentum < 1, "momentum={} > 1 can be unstable".format(momentum)
    assert(momentum < 1, string.format("momentum=%s > 1 can be unstable", momentum))
    assert(momentum >= 0, string.format("momentum=%s < 0", momentum))
    self.n_fft = o.n_fft or 400
    self.n_iter = o.n_iter or 32
    self.win_length = o.win_length or self.n_fft
    self.hop_length = o.hop_length or math.floor(self.win_length / 2)
    local window_fn = o.window_fn or tide.hann_window
    self:register_buffer("window", window_fn(self.win_length, o.wkwargs))
    self.length = o.length
    self.power = o.power or 2.0
    self.momentum = momentum
    if o.rand_init == nil then self.rand_init = true else self.rand_init = o.rand_init end
    self.init_angles = o.init_angles -- not torchaudio's: the check's fixed phase
end
-- def forward(self, specgram: Tensor) -> Tensor:
function T.GriffinLim:forward(specgram)
    return AF.griffinlim(specgram, self.window, self.n_fft, self.hop_length, self.win_length,
        self.power, self.n_iter, self.momentum, self.length, self.rand_init, self.init_angles)
end

-- class AmplitudeToDB(torch.nn.Module):
T.AmplitudeToDB = nn.Module:extend("AmplitudeToDB")
-- def __init__(self, stype: str = "power", top_db: Optional[float] = None) -> None:
function T.AmplitudeToDB:init(stype, top_db)
    stype = stype or "power"
    if top_db ~= nil and top_db < 0 then
        error("top_db must be positive value")
    end
    self.stype = stype
    self.top_db = top_db
    -- self.multiplier = 10.0 if stype == "power" else 20.0
    self.multiplier = stype == "power" and 10.0 or 20.0
    self.amin = 1e-10
    self.ref_value = 1.0
    -- self.db_multiplier = math.log10(max(self.amin, self.ref_value))
    self.db_multiplier = math.log(math.max(self.amin, self.ref_value)) / math.log(10)
end
-- def forward(self, x: Tensor) -> Tensor:
function T.AmplitudeToDB:forward(x)
    return AF.amplitude_to_DB(x, self.multiplier, self.amin, self.db_multiplier, self.top_db)
end

-- class MelScale(torch.nn.Module):
T.MelScale = nn.Module:extend("MelScale")
-- def __init__(self, n_mels=128, sample_rate=16000, f_min=0.0, f_max=None, n_stft=201,
--              norm=None, mel_scale="htk"):
function T.MelScale:init(n_mels, sample_rate, f_min, f_max, n_stft, norm, mel_scale)
    self.n_mels = n_mels or 128
    self.sample_rate = sample_rate or 16000
    -- self.f_max = f_max if f_max is not None else float(sample_rate // 2)
    self.f_max = f_max or math.floor(self.sample_rate / 2)
    self.f_min = f_min or 0.0
    self.norm = norm
    self.mel_scale = mel_scale or "htk"
    assert(self.f_min <= self.f_max, string.format("Require f_min: %s < f_max: %s", self.f_min,
        self.f_max))
    -- fb = F.melscale_fbanks(n_stft, self.f_min, self.f_max, self.n_mels, self.sample_rate,
    --                        self.norm, self.mel_scale)
    local fb = AF.melscale_fbanks(n_stft or 201, self.f_min, self.f_max, self.n_mels,
        self.sample_rate, self.norm, self.mel_scale)
    self:register_buffer("fb", fb)
end
-- def forward(self, specgram: Tensor) -> Tensor:
function T.MelScale:forward(specgram)
    -- (..., time, freq) dot (freq, n_mels) -> (..., n_mels, time)
    -- mel_specgram = torch.matmul(specgram.transpose(-1, -2), self.fb).transpose(-1, -2)
    local mel_specgram = tide.matmul(specgram:transpose(-1, -2), self.fb):transpose(-1, -2)
    return mel_specgram
end

-- class MelSpectrogram(torch.nn.Module):
T.MelSpectrogram = nn.Module:extend("MelSpectrogram")
-- def __init__(self, sample_rate=16000, n_fft=400, win_length=None, hop_length=None,
--              f_min=0.0, f_max=None, pad=0, n_mels=128, window_fn=torch.hann_window,
--              power=2.0, normalized=False, wkwargs=None, center=True, pad_mode="reflect",
--              onesided=True, norm=None, mel_scale="htk"):
function T.MelSpectrogram:init(o)
    o = o or {}
    self.sample_rate = o.sample_rate or 16000
    self.n_fft = o.n_fft or 400
    self.win_length = o.win_length or self.n_fft
    self.hop_length = o.hop_length or math.floor(self.win_length / 2)
    self.pad = o.pad or 0
    self.power = o.power or 2.0
    if o.normalized == nil then self.normalized = false else self.normalized = o.normalized end
    self.n_mels = o.n_mels or 128 -- number of mel frequency bins
    self.f_max = o.f_max
    self.f_min = o.f_min or 0.0
    -- self.spectrogram = Spectrogram(n_fft=self.n_fft, win_length=self.win_length, ...)
    self.spectrogram = T.Spectrogram({ n_fft = self.n_fft, win_length = self.win_length,
        hop_length = self.hop_length, pad = self.pad, window_fn = o.window_fn,
        power = self.power, normalized = self.normalized, wkwargs = o.wkwargs,
        center = o.center, pad_mode = o.pad_mode, onesided = o.onesided })
    -- self.mel_scale = MelScale(self.n_mels, self.sample_rate, self.f_min, self.f_max,
    --                           self.n_fft // 2 + 1, norm, mel_scale)
    self.mel_scale = T.MelScale(self.n_mels, self.sample_rate, self.f_min, self.f_max,
        math.floor(self.n_fft / 2) + 1, o.norm, o.mel_scale)
end
-- def forward(self, waveform: Tensor) -> Tensor:
function T.MelSpectrogram:forward(waveform)
    local specgram = self.spectrogram(waveform)
    local mel_specgram = self.mel_scale(specgram)
    return mel_specgram
end

-- class MFCC(torch.nn.Module):
T.MFCC = nn.Module:extend("MFCC")
-- def __init__(self, sample_rate=16000, n_mfcc=40, dct_type=2, norm="ortho", log_mels=False,
--              melkwargs=None):
function T.MFCC:init(o)
    o = o or {}
    local supported_dct_types = { [2] = true }
    local dct_type = o.dct_type or 2
    if not supported_dct_types[dct_type] then
        error(string.format("DCT type not supported: %s", dct_type))
    end
    self.sample_rate = o.sample_rate or 16000
    self.n_mfcc = o.n_mfcc or 40
    self.dct_type = dct_type
    -- self.norm = norm   (norm=None is `false` here)
    if o.norm == nil then self.norm = "ortho" elseif o.norm == false then self.norm = nil
    else self.norm = o.norm end
    self.top_db = 80.0
    self.amplitude_to_DB = T.AmplitudeToDB("power", self.top_db)
    -- melkwargs = melkwargs or {}
    local melkwargs = {}
    for key, v in pairs(o.melkwargs or {}) do melkwargs[key] = v end
    -- self.MelSpectrogram = MelSpectrogram(sample_rate=self.sample_rate, **melkwargs)
    melkwargs.sample_rate = self.sample_rate
    self.MelSpectrogram = T.MelSpectrogram(melkwargs)
    if self.n_mfcc > self.MelSpectrogram.n_mels then
        error("Cannot select more MFCC coefficients than # mel bins")
    end
    local dct_mat = AF.create_dct(self.n_mfcc, self.MelSpectrogram.n_mels, self.norm)
    self:register_buffer("dct_mat", dct_mat)
    self.log_mels = o.log_mels or false
end
-- def forward(self, waveform: Tensor) -> Tensor:
function T.MFCC:forward(waveform)
    local mel_specgram = self.MelSpectrogram(waveform)
    if self.log_mels then
        local log_offset = 1e-6
        mel_specgram = tide.log(mel_specgram + log_offset)
    else
        mel_specgram = self.amplitude_to_DB(mel_specgram)
    end
    -- (..., time, n_mels) dot (n_mels, n_mfcc) -> (..., n_nfcc, time)
    -- mfcc = torch.matmul(mel_specgram.transpose(-1, -2), self.dct_mat).transpose(-1, -2)
    local mfcc = tide.matmul(mel_specgram:transpose(-1, -2), self.dct_mat):transpose(-1, -2)
    return mfcc
end

-- class ComputeDeltas(torch.nn.Module):
T.ComputeDeltas = nn.Module:extend("ComputeDeltas")
-- def __init__(self, win_length: int = 5, mode: str = "replicate") -> None:
function T.ComputeDeltas:init(win_length, mode)
    self.win_length = win_length or 5
    self.mode = mode or "replicate"
end
-- def forward(self, specgram: Tensor) -> Tensor:
function T.ComputeDeltas:forward(specgram)
    return AF.compute_deltas(specgram, self.win_length, self.mode)
end

---------------------------------------------------------------------------------------------
-- checks against PyTorch 1.13 (torchaudio 0.13's functions pasted into the reference script)
---------------------------------------------------------------------------------------------
local N_FFT, HOP, L, N_MELS, SR, N_MFCC = 16, 4, 200, 6, 800, 4

-- i = torch.arange(L, dtype=torch.float64); the two channels of the test waveform
local function make_wave()
    local i = tide.arange(L, { dtype = "float64" })
    local w0 = tide.sin(0.3 * i) + 0.5 * tide.sin(1.7 * i + 0.2) * tide.cos(0.05 * i)
    local w1 = tide.cos(0.9 * i + 0.1) * 0.7 + 0.2 * tide.sin(2.3 * i)
    return tide.stack({ w0, w1 }):float() -- [2, 200]
end

local function flat(v, out)
    out = out or {}
    if type(v) == "table" then
        for _, x in ipairs(v) do flat(x, out) end
    else
        out[#out + 1] = v
    end
    return out
end

local function check(want, t, tol, what)
    assert_close_list(flat(want), flat(t:tolist()), tol, what)
end

local function check_num(want, got, tol, what)
    assert(close(got, want, tol), string.format("%s: %.8g, PyTorch %.8g", what, got, want))
end

local function same_shape(want, t, what)
    assert.are.same(want, t:size(), what)
end


local REF = {
    spec_shape = {2, 9, 51},
    spec_c_re_0_3 = {-2.402713, 1.795525, -0.6021628, -0.4951011, 1.501275, -1.182274,
        0.1480484, 0.02782512, 0.01644039},
    spec_c_im_0_3 = {0, -3.255538, 1.21532, 0.1097026, 0.2477819, -0.2998295, 0.0904336,
        0.01293159, 0},
    spec_c_abs_sum = 966.7746,
    spec_p1_1_col10 = {0.003374308, 0.7974965, 2.657435, 2.002762, 0.2039016, 0.5125087,
        0.7805662, 0.3195369, 0.0221785},
    spec_p2_sum = 2423.16,
    spec_p2_0_col0 = {24.6646, 2.559917, 1.027906, 0.3929179, 0.3550089, 1.040888, 1.678171,
        0.6548499, 0.5546135},
    spec_norm_pad_shape = {2, 9, 52},
    spec_norm_pad_sum = 394.0389,
    spec_norm_pad_col5 = {2.905786, 2.557631, 0.2738733, 0.01235038, 0.2311879, 0.1397073,
        0.003630799, 7.850317e-05, 3.471029e-06},
    spec_fl_shape = {2, 16, 47},
    spec_fl_sum = 398.3454,
    spec_fl_col2 = {0.01266753, 0.2006712, 0.663944, 0.5005707, 0.0527003, 0.1252085, 0.1962617,
        0.07931547, 0.005028728, 0.07931547, 0.1962617, 0.1252085, 0.0527003, 0.5005707, 0.663944,
        0.2006712},
    spec_real_shape = {9, 51, 2},
    spec_real_7 = {{1.887739, 0}, {-1.425113, -0.7693089}, {0.4468127, 0.2875637}, {0.001085031,
        -0.04589793}, {-0.04149397, 0.1330152}, {0.1206282, -0.03307191}, {-0.03910865,
        -0.01321404}, {-0.005312586, -0.0006636231}, {-0.002734014, 0}},
    inv_err = 2.384186e-07,
    invp_shape = {2, 200},
    invp_err = 2.384186e-07,
    fb_htk = {{-0, 0, 0, 0, 0, 0}, {0.9335322, 0.0664678, 0, 0, 0, 0}, {0, 0.9339953,
        0.06600472, 0, 0, 0}, {0, 0, 0.9932811, 0.006718874, 0, 0}, {0, 0, 0.110966, 0.889034, 0,
        0}, {0, 0, 0, 0.2768836, 0.7231164, 0}, {0, 0, 0, 0, 0.4841475, 0.5158525}, {0, 0, 0, 0, 0,
        0.7269374}, {0, 0, 0, 0, 0, 0}},
    fb_slaney = {{0, 0, 0, 0, 0, 0}, {0.01134259, 0, 0, 0, 0, 0}, {0.008641974, 0.01080247, 0,
        0, 0, 0}, {0, 0.009182096, 0.01026235, 0, 0, 0}, {0, 0, 0.009722217, 0.009722229, 0, 0}, {0,
        0, 0, 0.01026234, 0.009182108, 0}, {0, 0, 0, 0, 0.01080246, 0.008641985}, {0, 0, 0, 0, 0,
        0.01134258}, {0, 0, 0, 0, 0, 0}},
    fb_slaney_hi = {{-0, 0, 0, 0, 0, 0}, {0, 0.7183415, 0.2816585, 0, 0, 0}, {0, 0, 0.1442171,
        0.8557829, 0, 0}, {0, 0, 0, 0.2451136, 0.7548864, 0}, {0, 0, 0, 0, 0.6138295, 0.3861705},
        {0, 0, 0, 0, 0.07048818, 0.9295118}, {0, 0, 0, 0, 0, 0.6967986}, {0, 0, 0, 0, 0, 0.348399},
        {0, 0, 0, 0, 0, 0}},
    fb_lin = {{-0, 0, 0, 0}, {0.625, 0, 0, 0}, {0.75, 0.25, 0, 0}, {0.125, 0.875, 0, 0}, {0,
        0.5, 0.5, 0}, {0, 0, 0.875, 0.125}, {0, 0, 0.25, 0.75}, {0, 0, 0, 0.625}, {0, 0, 0, 0}},
    mel_htk_300 = 401.9706,
    mel_sl_1500 = 20.89752,
    hz_sl = {200, 1000, 2804.644},
    dct_ortho = {{0.4082483, 0.5576775, 0.5, 0.4082483}, {0.4082483, 0.4082483, -2.523678e-08,
        -0.4082483}, {0.4082483, 0.1494293, -0.5, -0.4082483}, {0.4082483, -0.1494293, -0.4999999,
        0.4082484}, {0.4082483, -0.4082483, 6.884833e-09, 0.4082483}, {0.4082483, -0.5576776,
        0.5000001, -0.4082485}},
    dct_none = {{2, 1.931852, 1.732051, 1.414214}, {2, 1.414214, -8.742278e-08, -1.414214}, {2,
        0.5176381, -1.732051, -1.414214}, {2, -0.5176383, -1.732051, 1.414214}, {2, -1.414214,
        2.384976e-08, 1.414214}, {2, -1.931852, 1.732051, -1.414214}},
    db_p = {{13.92074, 15.06876, 11.22572, 7.614038}, {4.082259, 11.14587, 11.71849, 11.40585},
        {0.1195343, 2.010685, 2.315519, 2.647238}},
    db_top = -467.7551,
    db_top_min = -4.931239,
    db_back = {0.3162278, 1, 1.412538},
    mu_enc = {200, 247, 228, 230, 258, 259, 240, 243, 255, 238},
    mu_dec = {0.08788025, 0.7049939, 0.306334, 0.3345294, 1.139917, 1.190761, 0.5189289,
        0.5917979, 1, 0.4753715},
    mel_shape = {2, 6, 51},
    mel_col4 = {15.51759, 2.68086, 0.5141636, 1.737455, 0.7946239, 0.01200952},
    mel_sum = 1625.645,
    mfcc_shape = {2, 4, 51},
    mfcc_col7 = {-1.350275, 8.187994, -1.743913, -10.09779},
    mfcc_sum = 941.8413,
    mfcc_log_col3 = {-0.1190748, 13.44837, -3.487485, 10.1223},
    delta_col0 = {0.6010304, 3.929829, -2.385457, 2.786095},
    delta_col20 = {0.02455285, 0.01759443, 0.004182077, 0.0389822},
    delta_sum_abs = 324.2126,
    delta7_col1 = {-0.195628, 3.761003, -1.022099, 2.669133},
    gl_shape = {2, 200},
    gl_first = {0.838041, 0.4370057, -0.1975187, 0.3780107, -0.1681445, -0.9150831, -1.191441,
        -0.7431363},
    gl_sum_abs = 204.1241,
    gl0_shape = {2, 200},
    gl0_mid = {-0.02810621, 0.5188345, 0.5380003, 0.2421145, -0.1435449, -0.1351735},
    grad_0_first = {-0.01750772, 0.01439688, -0.02331622, -0.03846266, 0.09693131, 0.144921,
        -0.01445189, 0.01645533},
    grad_1_mid = {1.607725, 1.561856, 0.5813283, 2.497848, -2.236737, -2.363272, 0.1700684,
        -1.58006},
    grad_abs_sum = 606.4821,
}

describe("torchaudio 0.13 functional.py spectral functions", function()
    local wave = make_wave()
    local win = tide.hann_window(N_FFT)

    it("spectrogram: complex, power 1 and 2, normalized, pad, frame_length, view_as_real",
        function()
        local sc = AF.spectrogram(wave, 0, win, N_FFT, HOP, N_FFT, nil, false)
        assert.is_true(tide.is_complex(sc))
        same_shape(REF.spec_shape, sc, "complex spectrogram")
        check(REF.spec_c_re_0_3, sc.real[1]:select(2, 4), 1e-4, "re[0, :, 3]")
        check(REF.spec_c_im_0_3, sc.imag[1]:select(2, 4), 1e-4, "im[0, :, 3]")
        check_num(REF.spec_c_abs_sum, sc:abs():sum():item(), 1e-5, "sum |spec|")
        local s1 = AF.spectrogram(wave, 0, win, N_FFT, HOP, N_FFT, 1.0, false)
        check(REF.spec_p1_1_col10, s1[2]:select(2, 11), 1e-4, "power 1")
        local s2 = AF.spectrogram(wave, 0, win, N_FFT, HOP, N_FFT, 2.0, false)
        check_num(REF.spec_p2_sum, s2:sum():item(), 1e-5, "power 2 sum")
        check(REF.spec_p2_0_col0, s2[1]:select(2, 1), 1e-4, "power 2 frame 0")
        local sn = AF.spectrogram(wave, 2, win, N_FFT, HOP, N_FFT, 2.0, true, true, "constant")
        same_shape(REF.spec_norm_pad_shape, sn, "pad 2")
        check_num(REF.spec_norm_pad_sum, sn:sum():item(), 1e-5, "normalized, padded")
        check(REF.spec_norm_pad_col5, sn[1]:select(2, 6), 1e-4, "normalized, padded frame 5")
        local sf = AF.spectrogram(wave, 0, win, N_FFT, HOP, N_FFT, 1.0, "frame_length", false,
            "reflect", false)
        same_shape(REF.spec_fl_shape, sf, "two-sided, not centered")
        check_num(REF.spec_fl_sum, sf:sum():item(), 1e-5, "frame_length norm")
        check(REF.spec_fl_col2, sf[2]:select(2, 3), 1e-4, "frame_length frame 2")
        local sr = AF.spectrogram(wave[1], 0, win, N_FFT, HOP, N_FFT, nil, "window", true,
            "reflect", true, false)
        same_shape(REF.spec_real_shape, sr, "return_complex=False")
        check(REF.spec_real_7, sr:select(2, 8), 1e-4, "view_as_real frame 7")
        assert.has_error(function()
            AF.spectrogram(wave, 0, win, N_FFT, HOP, N_FFT, 2.0, "bogus")
        end, "Invalid normalized parameter: bogus")
    end)

    it("inverse_spectrogram round-trips, with pad and window normalization", function()
        local sc = AF.spectrogram(wave, 0, win, N_FFT, HOP, N_FFT, nil, false)
        local inv = AF.inverse_spectrogram(sc, L, 0, win, N_FFT, HOP, N_FFT, false)
        same_shape({ 2, L }, inv, "inverse")
        assert.is_true((inv - wave):abs():max():item() < 2e-6, "round trip")
        local scp = AF.spectrogram(wave, 3, win, N_FFT, HOP, N_FFT, nil, "window")
        local invp = AF.inverse_spectrogram(scp, L, 3, win, N_FFT, HOP, N_FFT, "window")
        same_shape(REF.invp_shape, invp, "padded inverse")
        assert.is_true((invp - wave):abs():max():item() < 2e-6, "padded round trip")
        assert.has_error(function()
            AF.inverse_spectrogram(sc:abs(), L, 0, win, N_FFT, HOP, N_FFT, false)
        end, "Expected `spectrogram` to be complex dtype.")
    end)

    it("mel scales, filterbanks and the DCT matrix", function()
        check_num(REF.mel_htk_300, AF._hz_to_mel(300.0), 1e-6, "htk mel")
        check_num(REF.mel_sl_1500, AF._hz_to_mel(1500.0, "slaney"), 1e-6, "slaney mel")
        check(REF.hz_sl, AF._mel_to_hz(tide.tensor({ 3.0, 15.0, 30.0 }), "slaney"), 1e-6,
            "slaney hz")
        check(REF.fb_htk, AF.melscale_fbanks(9, 0.0, SR / 2, N_MELS, SR), 1e-5, "htk fb")
        check(REF.fb_slaney, AF.melscale_fbanks(9, 20.0, 380.0, N_MELS, SR, "slaney", "slaney"),
            1e-5, "slaney fb, slaney norm")
        check(REF.fb_slaney_hi, AF.melscale_fbanks(9, 0.0, 8000.0, N_MELS, 16000, nil, "slaney"),
            1e-5, "slaney fb past 1 kHz")
        check(REF.fb_lin, AF.linear_fbanks(9, 0.0, SR / 2, 4, SR), 1e-6, "linear fb")
        check(REF.dct_ortho, AF.create_dct(N_MFCC, N_MELS, "ortho"), 1e-6, "dct ortho")
        check(REF.dct_none, AF.create_dct(N_MFCC, N_MELS, nil), 1e-6, "dct None")
        assert.has_error(function() AF._hz_to_mel(1.0, "bark") end,
            'mel_scale should be one of "htk" or "slaney".')
    end)

    it("amplitude_to_DB / DB_to_amplitude, mu-law, compute_deltas", function()
        local s2 = AF.spectrogram(wave, 0, win, N_FFT, HOP, N_FFT, 2.0, false)
        check(REF.db_p, AF.amplitude_to_DB(s2[1]:narrow(1, 1, 3):narrow(2, 1, 4), 10.0, 1e-10,
            0.0), 1e-5, "dB")
        local top = AF.amplitude_to_DB(s2, 10.0, 1e-10, 0.0, 20.0)
        check_num(REF.db_top, top:sum():item(), 1e-5, "top_db sum")
        check_num(REF.db_top_min, top:min():item(), 1e-5, "top_db floor")
        check(REF.db_back, AF.DB_to_amplitude(tide.tensor({ -10.0, 0.0, 3.0 }), 1.0, 0.5), 1e-6,
            "DB_to_amplitude")
        local ml = AF.mu_law_encoding(wave[1]:narrow(1, 1, 10) * 0.9, 256)
        assert.are.equal("int64", ml.dtype)
        assert.are.same(REF.mu_enc, ml:tolist())
        check(REF.mu_dec, AF.mu_law_decoding(ml, 256), 1e-5, "mu_law_decoding")
    end)
end)

describe("torchaudio 0.13 transforms", function()
    local wave = make_wave()

    it("MelSpectrogram, MFCC (dB and log mels) and ComputeDeltas, with their buffers", function()
        local mel = T.MelSpectrogram({ sample_rate = SR, n_fft = N_FFT, hop_length = HOP,
            n_mels = N_MELS })
        local keys = {}
        for k in pairs(mel:state_dict()) do keys[#keys + 1] = k end
        table.sort(keys)
        assert.are.same({ "mel_scale.fb", "spectrogram.window" }, keys)
        local melspec = mel(wave)
        same_shape(REF.mel_shape, melspec, "MelSpectrogram")
        check(REF.mel_col4, melspec[1]:select(2, 5), 1e-4, "mel frame 4")
        check_num(REF.mel_sum, melspec:sum():item(), 1e-5, "mel sum")
        local melkwargs = { n_fft = N_FFT, hop_length = HOP, n_mels = N_MELS }
        local mfcc_t = T.MFCC({ sample_rate = SR, n_mfcc = N_MFCC, melkwargs = melkwargs })
        same_shape({ N_MELS, N_MFCC }, mfcc_t.dct_mat, "dct_mat buffer")
        assert.is_truthy(mfcc_t:state_dict()["dct_mat"])
        local mfcc = mfcc_t(wave)
        same_shape(REF.mfcc_shape, mfcc, "MFCC")
        check(REF.mfcc_col7, mfcc[2]:select(2, 8), 1e-4, "mfcc frame 7")
        check_num(REF.mfcc_sum, mfcc:sum():item(), 1e-4, "mfcc sum")
        local mfcc_log = T.MFCC({ sample_rate = SR, n_mfcc = N_MFCC, norm = false,
            log_mels = true, melkwargs = melkwargs })(wave)
        check(REF.mfcc_log_col3, mfcc_log[1]:select(2, 4), 1e-4, "log-mel mfcc, norm None")
        -- compute_deltas' kernel: repeat with more repeats than dims adds leading ones
        local k = tide.arange(-2, 3, 1)
        assert.are.same({ 8, 1, 5 }, k["repeat"](k, 8, 1, 1):size())
        local d = T.ComputeDeltas()(mfcc)
        same_shape(REF.mfcc_shape, d, "deltas")
        check(REF.delta_col0, d[1]:select(2, 1), 1e-4, "deltas frame 0 (replicate pad)")
        check(REF.delta_col20, d[2]:select(2, 21), 1e-3, "deltas frame 20")
        check_num(REF.delta_sum_abs, d:abs():sum():item(), 1e-4, "sum |deltas|")
        check(REF.delta7_col1, T.ComputeDeltas(7, "constant")(mfcc)[1]:select(2, 2), 1e-4,
            "win 7, constant pad")
        assert.has_error(function() T.MFCC({ sample_rate = SR, n_mfcc = 7,
            melkwargs = melkwargs }) end, "Cannot select more MFCC coefficients than # mel bins")
    end)

    it("MelSpectrogram's gradient w.r.t. the waveform is PyTorch's", function()
        local mel = T.MelSpectrogram({ sample_rate = SR, n_fft = N_FFT, hop_length = HOP,
            n_mels = N_MELS })
        local wv = wave:clone():requires_grad_()
        local ms = mel(wv);
        -- (ms.sqrt() * torch.linspace(0, 1, ms.shape[-1])).sum().backward()
        (ms:sqrt() * tide.linspace(0, 1, ms:size(-1))):sum():backward()
        check(REF.grad_0_first, wv.grad[1]:narrow(1, 1, 8), 1e-3, "grad[0, :8]")
        check(REF.grad_1_mid, wv.grad[2]:narrow(1, 97, 8), 1e-3, "grad[1, 96:104]")
        check_num(REF.grad_abs_sum, wv.grad:abs():sum():item(), 1e-4, "sum |grad|")
    end)

    it("Spectrogram -> InverseSpectrogram round trip; GriffinLim with a fixed phase", function()
        local spec = T.Spectrogram({ n_fft = N_FFT, hop_length = HOP, power = false })
        local ispec = T.InverseSpectrogram({ n_fft = N_FFT, hop_length = HOP })
        same_shape({ N_FFT }, spec.window, "window buffer")
        local z = spec(wave)
        assert.is_true(tide.is_complex(z))
        local back = ispec(z, L)
        assert.is_true((back - wave):abs():max():item() < 2e-6, "round trip")
        local s2 = T.Spectrogram({ n_fft = N_FFT, hop_length = HOP })(wave)
        -- ph = torch.arange(spec_mag.numel(), dtype=torch.float64).reshape(...) * 0.61
        local ph = tide.arange(s2:numel(), { dtype = "float64" }):reshape(s2:size()) * 0.61
        -- angles0 = torch.polar(torch.ones_like(ph), ph).to(torch.cfloat)
        local angles0 = tide.polar(tide.ones_like(ph), ph):to(tide.cfloat)
        local gl = T.GriffinLim({ n_fft = N_FFT, hop_length = HOP, n_iter = 3, length = L,
            init_angles = angles0 })(s2)
        same_shape(REF.gl_shape, gl, "GriffinLim")
        check(REF.gl_first, gl[1]:narrow(1, 1, 8), 1e-3, "griffin-lim (momentum 0.99)")
        check_num(REF.gl_sum_abs, gl:abs():sum():item(), 1e-4, "sum |griffin-lim|")
        local gl0 = T.GriffinLim({ n_fft = N_FFT, hop_length = HOP, n_iter = 2, momentum = 0,
            rand_init = false })(s2)
        same_shape(REF.gl0_shape, gl0, "GriffinLim, no length")
        check(REF.gl0_mid, gl0[2]:narrow(1, 101, 6), 1e-3, "griffin-lim (momentum 0, phase 1)")
        local glr = T.GriffinLim({ n_fft = N_FFT, hop_length = HOP, n_iter = 1, length = L })(s2)
        same_shape({ 2, L }, glr, "GriffinLim, random phase")
        assert.is_true(tide.isfinite(glr):all():item())
        assert.has_error(function() AF.griffinlim(s2, spec.window, N_FFT, HOP, N_FFT, 2, 1, 1.5,
            nil, false) end, "momentum must be in range [0, 1). Found: 1.5")
    end)
end)
