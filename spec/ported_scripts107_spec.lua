-- ported_scripts107_spec.lua — audio losses on torch.stft: kan-bayashi/ParallelWaveGAN's
-- parallel_wavegan/losses/stft_loss.py (stft() with torch.stft(..., return_complex=False) and its
-- real/imag clamp magnitude, SpectralConvergengeLoss, LogSTFTMagnitudeLoss, STFTLoss with its
-- registered window buffer, MultiResolutionSTFTLoss) and jik876/hifi-gan's meldataset.py
-- (mel_spectrogram: reflect padding, torch.stft with center=False in the real [..., 2] form, the
-- magnitude sqrt(pow(2).sum(-1) + 1e-9), the mel basis matmul, spectral_normalize_torch /
-- dynamic_range_compression_torch), ported line for line at tiny sizes (fft sizes {16, 32}, hops
-- {4, 8}, wins {12, 24}, batch 2 of 200 samples) on deterministic signals. The Python line stands
-- above each Lua line that differs from it. Dims are 1-based. Values checked against PyTorch 1.13.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list

-- the signals, in float64 then rounded to float32 (the same formulas on PyTorch's side):
-- x[b, t] = 0.5 sin(0.07 t (b + 1)) + 0.1 cos(0.31 t), y[b, t] = 0.4 sin(0.05 t (b + 2) + 0.3)
-- + 0.2 cos(0.17 t), b 0-based, t = 0..199
local T = 200
local function signals()
    local t = tide.arange(0, T, { dtype = "float64" })
    local b = tide.arange(0, 2, { dtype = "float64" }):unsqueeze(2)
    local x = (0.5 * tide.sin(0.07 * t * (b + 1)) + 0.1 * tide.cos(0.31 * t)):float()
    local y = (0.4 * tide.sin(0.05 * t * (b + 2) + 0.3) + 0.2 * tide.cos(0.17 * t)):float()
    return x, y
end

---------------------------------------------------------------------------------------------
-- 1. kan-bayashi/ParallelWaveGAN parallel_wavegan/losses/stft_loss.py
---------------------------------------------------------------------------------------------
-- is_pytorch_17plus = LooseVersion(torch.__version__) >= LooseVersion("1.7"): true (the
-- return_complex branch is the one ported)

-- def stft(x, fft_size, hop_size, win_length, window):
local function stft(x, fft_size, hop_size, win_length, window)
    -- x_stft = torch.stft(
    --     x, fft_size, hop_size, win_length, window, return_complex=False
    -- )
    local x_stft = tide.stft(x, fft_size, hop_size, win_length, window, { return_complex = false })
    -- real = x_stft[..., 0]
    local real = x_stft[{ "...", 1 }]
    -- imag = x_stft[..., 1]
    local imag = x_stft[{ "...", 2 }]

    -- NOTE(kan-bayashi): clamp is needed to avoid nan or inf
    -- return torch.sqrt(torch.clamp(real**2 + imag**2, min=1e-7)).transpose(2, 1)
    return tide.sqrt(tide.clamp(real ^ 2 + imag ^ 2, { min = 1e-7 })):transpose(3, 2)
end

-- class SpectralConvergenceLoss(torch.nn.Module):
local SpectralConvergenceLoss = nn.Module:extend("SpectralConvergenceLoss")
-- def forward(self, x_mag, y_mag):
function SpectralConvergenceLoss:forward(x_mag, y_mag)
    -- return torch.norm(y_mag - x_mag, p="fro") / torch.norm(y_mag, p="fro")
    return tide.norm(y_mag - x_mag, { p = "fro" }) / tide.norm(y_mag, { p = "fro" })
end

-- class LogSTFTMagnitudeLoss(torch.nn.Module):
local LogSTFTMagnitudeLoss = nn.Module:extend("LogSTFTMagnitudeLoss")
-- def forward(self, x_mag, y_mag):
function LogSTFTMagnitudeLoss:forward(x_mag, y_mag)
    -- return F.l1_loss(torch.log(y_mag), torch.log(x_mag))
    return F.l1_loss(tide.log(y_mag), tide.log(x_mag))
end

-- class STFTLoss(torch.nn.Module):
local STFTLoss = nn.Module:extend("STFTLoss")
-- def __init__(
--     self, fft_size=1024, shift_size=120, win_length=600, window="hann_window"
-- ):
function STFTLoss:init(fft_size, shift_size, win_length, window)
    self.fft_size = fft_size or 1024
    self.shift_size = shift_size or 120
    self.win_length = win_length or 600
    self.spectral_convergence_loss = SpectralConvergenceLoss()
    self.log_stft_magnitude_loss = LogSTFTMagnitudeLoss()
    -- NOTE(kan-bayashi): Use register_buffer to fix #223
    -- self.register_buffer("window", getattr(torch, window)(win_length))
    self:register_buffer("window", tide[window or "hann_window"](self.win_length))
end

-- def forward(self, x, y):
function STFTLoss:forward(x, y)
    local x_mag = stft(x, self.fft_size, self.shift_size, self.win_length, self.window)
    local y_mag = stft(y, self.fft_size, self.shift_size, self.win_length, self.window)
    local sc_loss = self.spectral_convergence_loss(x_mag, y_mag)
    local mag_loss = self.log_stft_magnitude_loss(x_mag, y_mag)

    return sc_loss, mag_loss
end

-- class MultiResolutionSTFTLoss(torch.nn.Module):
local MultiResolutionSTFTLoss = nn.Module:extend("MultiResolutionSTFTLoss")
-- def __init__(self, fft_sizes=[1024, 2048, 512], hop_sizes=[120, 240, 50],
--              win_lengths=[600, 1200, 240], window="hann_window"):
function MultiResolutionSTFTLoss:init(fft_sizes, hop_sizes, win_lengths, window)
    fft_sizes = fft_sizes or { 1024, 2048, 512 }
    hop_sizes = hop_sizes or { 120, 240, 50 }
    win_lengths = win_lengths or { 600, 1200, 240 }
    window = window or "hann_window"
    -- assert len(fft_sizes) == len(hop_sizes) == len(win_lengths)
    assert(#fft_sizes == #hop_sizes and #hop_sizes == #win_lengths)
    self.stft_losses = nn.ModuleList()
    -- for fs, ss, wl in zip(fft_sizes, hop_sizes, win_lengths):
    for i = 1, #fft_sizes do
        local fs, ss, wl = fft_sizes[i], hop_sizes[i], win_lengths[i]
        -- self.stft_losses += [STFTLoss(fs, ss, wl, window)]
        self.stft_losses:extend({ STFTLoss(fs, ss, wl, window) })
    end
end

-- def forward(self, x, y):
function MultiResolutionSTFTLoss:forward(x, y)
    -- if len(x.shape) == 3:
    if #x.shape == 3 then
        -- x = x.view(-1, x.size(2))  # (B, C, T) -> (B x C, T)
        x = x:view(-1, x:size(3)) -- (B, C, T) -> (B x C, T)
        -- y = y.view(-1, y.size(2))  # (B, C, T) -> (B x C, T)
        y = y:view(-1, y:size(3)) -- (B, C, T) -> (B x C, T)
    end
    local sc_loss = 0.0
    local mag_loss = 0.0
    -- for f in self.stft_losses:
    for _, f in ipairs(self.stft_losses) do
        local sc_l, mag_l = f(x, y)
        -- sc_loss += sc_l
        sc_loss = sc_loss + sc_l
        -- mag_loss += mag_l
        mag_loss = mag_loss + mag_l
    end
    -- sc_loss /= len(self.stft_losses)
    sc_loss = sc_loss / #self.stft_losses
    -- mag_loss /= len(self.stft_losses)
    mag_loss = mag_loss / #self.stft_losses

    return sc_loss, mag_loss
end

describe("ported ParallelWaveGAN stft_loss.py", function()
    it("stft() gives PyTorch's clamped magnitude [B, frames, bins]", function()
        local x = signals()
        local mag = stft(x, 16, 4, 12, tide.hann_window(12))
        assert.are.same({ 2, 51, 9 }, mag.shape)
        assert_close_list({ 0.8422949910163879, 0.5386679172515869, 0.0540597178041935,
            0.0973997712135315, 0.5205721855163574 }, { mag[1][1][1]:item(),
            mag[1][1][2]:item(), mag[1][1][3]:item(), mag[1][1][4]:item(),
            mag[2][6][3]:item() }, 1e-5, "mag")
    end)

    it("STFTLoss at each resolution: PyTorch's sc and log-magnitude losses", function()
        local x, y = signals()
        local want = { [16] = { 0.8276441693305969, 0.7106466293334961 },
            [32] = { 0.745457649230957, 0.6026573181152344 } }
        for _, r in ipairs({ { 16, 4, 12 }, { 32, 8, 24 } }) do
            local l = STFTLoss(r[1], r[2], r[3])
            local sc, mg = l(x, y)
            assert.are.equal(0, sc:dim())
            assert_close_list(want[r[1]], { sc:item(), mg:item() }, 1e-5, "stftloss " .. r[1])
        end
    end)

    it("MultiResolutionSTFTLoss: buffers, losses and the gradient to x are PyTorch's", function()
        local x, y = signals()
        local crit = MultiResolutionSTFTLoss({ 16, 32 }, { 4, 8 }, { 12, 24 })
        local names = {}
        for name in pairs(crit:state_dict()) do
            names[#names + 1] = name
        end
        table.sort(names)
        -- the windows are buffers (saved); PyTorch's keys are stft_losses.0.window and
        -- stft_losses.1.window (tide's ModuleList names its modules "1".."k")
        assert.are.same({ "stft_losses.1.window", "stft_losses.2.window" }, names)
        assert.are.equal(0, #crit:parameters())
        local xp = x:clone():requires_grad_()
        local sc, mg = crit(xp, y)
        assert_close_list({ 0.7865508794784546, 0.6566519737243652 }, { sc:item(), mg:item() },
            1e-5, "mr loss")
        -- (sc+mg).backward()
        local loss = sc + mg
        loss:backward()
        -- float32: PyTorch's own float32 gradient is 8.5e-4 from its float64 one (1 / |X| of the
        -- log-magnitude loss amplifies rounding): compared at 1e-3 here, at 1e-9 in float64 below
        local function grad_entries(g)
            return { g:norm():item(), g[1][1]:item(), g[1][2]:item(), g[1][101]:item(),
                g[2][58]:item(), g[2][200]:item() }
        end
        assert_close_list({ 29.785879135131836, 0.5588725209236145, -0.7622326612472534,
            0.9195785522460938, -2.34574818611145, -0.7010742425918579 }, grad_entries(xp.grad),
            1e-3, "grad (norm, entries)")
        -- the same in float64 (criterion.double(), the float32 signals widened). PyTorch's
        -- float32 hann_window is computed in float32 (an ulp off, not symmetric); tide's is
        -- float64 rounded once, so PyTorch's side used hann_window(n, float64).float() as the
        -- buffer (an ulp moves the log-magnitude loss by 1e-5: bins near the clamp)
        crit:double()
        local xd = x:double():requires_grad_()
        local sc64, mg64 = crit(xd, y:double())
        assert.are.equal("float64", crit.stft_losses[1].window.dtype)
        assert_close_list({ 0.7865509067138146, 0.6566461665714808 }, { sc64:item(),
            mg64:item() }, 1e-12, "mr loss float64")
        local loss64 = sc64 + mg64
        loss64:backward()
        assert_close_list({ 29.786699331971835, 0.5588713624818308, -0.762230785647167,
            0.9193539615429445, -2.3461373025255443, -0.7010739882238981 },
            grad_entries(xd.grad), 1e-12, "grad float64 (norm, entries)")
        -- the (B, C, T) input path
        local sc3, mg3 = crit(x:view(2, 1, T), y:view(2, 1, T))
        assert_close_list({ 0.7865508794784546, 0.6566519737243652 }, { sc3:item(), mg3:item() },
            1e-5, "mr loss 3-D")
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. jik876/hifi-gan meldataset.py
---------------------------------------------------------------------------------------------
-- def dynamic_range_compression_torch(x, C=1, clip_val=1e-5):
local function dynamic_range_compression_torch(x, C, clip_val)
    C, clip_val = C or 1, clip_val or 1e-5
    -- return torch.log(torch.clamp(x, min=clip_val) * C)
    return tide.log(tide.clamp(x, { min = clip_val }) * C)
end

-- def spectral_normalize_torch(magnitudes):
local function spectral_normalize_torch(magnitudes)
    local output = dynamic_range_compression_torch(magnitudes)
    return output
end

-- librosa.filters.mel(sr=800, n_fft=16, n_mels=4, fmin=0, fmax=400) (Slaney scale and norm, its
-- float32 numbers: librosa is not in the reference venv, the filterbank was written out in numpy)
local MEL_800_16_4 = {
    { 0.0, 0.0078125, 0.00937500037252903, 0.0015625000232830644, 0.0, 0.0, 0.0, 0.0, 0.0 },
    { 0.0, 0.0, 0.0031250000465661287, 0.010937499813735485, 0.0062500000931322575, 0.0, 0.0,
        0.0, 0.0 },
    { 0.0, 0.0, 0.0, 0.0, 0.0062500000931322575, 0.010937499813735485, 0.0031250000465661287,
        0.0, 0.0 },
    { 0.0, 0.0, 0.0, 0.0, 0.0, 0.0015625000232830644, 0.00937500037252903, 0.0078125, 0.0 },
}
local function librosa_mel_fn(sampling_rate, n_fft, num_mels, fmin, fmax)
    assert(sampling_rate == 800 and n_fft == 16 and num_mels == 4 and fmin == 0 and fmax == 400)
    return MEL_800_16_4
end

-- mel_basis = {}
local mel_basis = {}
-- hann_window = {}
local hann_window = {}

-- def mel_spectrogram(y, n_fft, num_mels, sampling_rate, hop_size, win_size, fmin, fmax,
--                     center=False):
local function mel_spectrogram(y, n_fft, num_mels, sampling_rate, hop_size, win_size, fmin, fmax,
                               center)
    center = center or false
    -- if torch.min(y) < -1.:
    if tide.min(y):item() < -1. then
        print("min value is ", tide.min(y))
    end
    if tide.max(y):item() > 1. then
        print("max value is ", tide.max(y))
    end

    -- if fmax not in mel_basis:  (the key it tests is never the one it stores: kept)
    if mel_basis[fmax] == nil then
        local mel = librosa_mel_fn(sampling_rate, n_fft, num_mels, fmin, fmax)
        -- mel_basis[str(fmax)+'_'+str(y.device)] = torch.from_numpy(mel).float().to(y.device)
        mel_basis[tostring(fmax) .. "_" .. tostring(y.device)] =
            tide.tensor(mel):float():to(y.device)
        -- hann_window[str(y.device)] = torch.hann_window(win_size).to(y.device)
        hann_window[tostring(y.device)] = tide.hann_window(win_size):to(y.device)
    end

    -- y = torch.nn.functional.pad(y.unsqueeze(1), (int((n_fft-hop_size)/2),
    --     int((n_fft-hop_size)/2)), mode='reflect')
    local p = math.floor((n_fft - hop_size) / 2)
    y = F.pad(y:unsqueeze(2), { p, p }, "reflect")
    -- y = y.squeeze(1)
    y = y:squeeze(2)

    -- spec = torch.stft(y, n_fft, hop_length=hop_size, win_length=win_size,
    --     window=hann_window[str(y.device)], center=center, pad_mode='reflect',
    --     normalized=False, onesided=True)
    -- (no return_complex: PyTorch 1.13 warns once and returns the real [..., 2] form; tide too)
    local spec = tide.stft(y, n_fft, { hop_length = hop_size, win_length = win_size,
        window = hann_window[tostring(y.device)], center = center, pad_mode = "reflect",
        normalized = false, onesided = true })

    -- spec = torch.sqrt(spec.pow(2).sum(-1)+(1e-9))
    spec = tide.sqrt(spec:pow(2):sum(-1) + 1e-9)

    -- spec = torch.matmul(mel_basis[str(fmax)+'_'+str(y.device)], spec)
    spec = tide.matmul(mel_basis[tostring(fmax) .. "_" .. tostring(y.device)], spec)
    spec = spectral_normalize_torch(spec)

    return spec
end

-- a stderr stand-in that keeps what tide warns
local function capture_stderr(f)
    local saved, out = io.stderr, {}
    io.stderr = { write = function(_, ...) -- luacheck: ignore
        for i = 1, select("#", ...) do
            out[#out + 1] = tostring(select(i, ...))
        end
    end }
    local ok, err = pcall(f)
    io.stderr = saved -- luacheck: ignore
    if not ok then
        error(err, 0)
    end
    return table.concat(out)
end

describe("ported hifi-gan meldataset.py mel_spectrogram", function()
    it("gives PyTorch's log-mel values [B, mels, frames], warning as PyTorch 1.13", function()
        local x = signals()
        local ms
        require("tide._warn").reset("stft.return_complex")
        local warned = capture_stderr(function()
            ms = mel_spectrogram(x, 16, 4, 800, 4, 16, 0, 400)
        end)
        assert.truthy(warned:find("tide: warning: stft will soon require the return_complex",
            1, true))
        assert.are.same({ 2, 4, 50 }, ms.shape)
        assert_close_list({ -5.197227478027344, -6.75884485244751, -7.586584568023682,
            -8.027271270751953 }, ms[{ 1, {}, 1 }]:totable(), 1e-5, "ms[1, :, 1]")
        assert_close_list({ -4.74343729019165, -6.759665012359619, -8.51754379272461,
            -9.714303016662598 }, ms[{ 2, {}, 11 }]:totable(), 1e-5, "ms[2, :, 11]")
        assert_close_list({ -3060.76513671875, -11.512925148010254 },
            { ms:sum():item(), ms:min():item() }, 1e-5, "ms sum, min")
    end)
end)
