-- ported_scripts120_spec.lua — acids-ircam/ddsp_pytorch's ddsp/core.py (safe_log,
-- mean_std_loudness, multiscale_fft: stft with return_complex then abs, resample, upsample,
-- remove_above_nyquist, scale_function, mlp, gru, harmonic_synth, amp_to_impulse_response:
-- stack / view_as_complex / irfft / roll / hann window / pad / roll back, fft_convolve: rfft of
-- both padded signals, product, irfft, crop) and ddsp/model.py (Reverb, DDSP), with train.py's
-- multiscale spectral loss and two Adam steps, ported line for line at tiny sizes (sample rate
-- 800, block size 8, 3 harmonics, 5 noise bands, hidden 4, batch 2, 4 frames, scales {16, 8}).
-- The Python line stands above each Lua line that differs from it. Dims are 1-based.
-- Not ported: extract_loudness (librosa's stft, fft_frequencies and A_weighting) and
-- extract_pitch (crepe); DDSP.realtime_forward (the forward with a GRU cache and a phase).
-- Reference values: PyTorch 1.13 on the same weights (0.4 sin(0.37 j + 0.91 k), j the flat
-- index, k the 1-based index in named_parameters order) and the same fixed inputs.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local fft = tide.fft
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

---------------------------------------------------------------------------------------------
-- ddsp/core.py
---------------------------------------------------------------------------------------------
-- Python's int(v) of a number or a one-element tensor (DDSP passes its block_size buffer)
local function int(v)
    if tide.is_tensor(v) then v = v:item() end
    return v < 0 and math.ceil(v) or math.floor(v)
end

local function safe_log(x)
    return tide.log(x + 1e-7)
end

-- @torch.no_grad()
-- def mean_std_loudness(dataset):
local function mean_std_loudness(dataset)
    return tide.no_grad(function()
        local mean = 0
        local std = 0
        local n = 0
        -- for _, _, l in dataset:
        for _, item in ipairs(dataset) do
            local l = item[3]
            n = n + 1
            mean = mean + (l:mean():item() - mean) / n
            std = std + (l:std():item() - std) / n
        end
        return mean, std
    end)
end

local function multiscale_fft(signal, scales, overlap)
    local stfts = {}
    -- for s in scales:
    for _, s in ipairs(scales) do
        -- S = torch.stft(signal, s, int(s * (1 - overlap)), s,
        --     torch.hann_window(s).to(signal), True, normalized=True, return_complex=True).abs()
        local S = tide.stft(signal, s, math.floor(s * (1 - overlap)), s,
            tide.hann_window(s):to(signal), true,
            { normalized = true, return_complex = true }):abs()
        -- stfts.append(S)
        stfts[#stfts + 1] = S
    end
    return stfts
end

local function resample(x, factor)
    -- batch, frame, channel = x.shape
    local batch, frame, channel = x:size(1), x:size(2), x:size(3)
    -- x = x.permute(0, 2, 1).reshape(batch * channel, 1, frame)
    x = x:permute(1, 3, 2):reshape(batch * channel, 1, frame)

    -- window = torch.hann_window(factor * 2, dtype=x.dtype, device=x.device).reshape(1, 1, -1)
    local window = tide.hann_window(factor * 2, { dtype = x.dtype, device = x.device })
        :reshape(1, 1, -1)
    -- y = torch.zeros(x.shape[0], x.shape[1], factor * x.shape[2]).to(x)
    local y = tide.zeros(x.shape[1], x.shape[2], factor * x.shape[3]):to(x)
    -- y[..., ::factor] = x
    y[{ "...", { 1, -1, factor } }] = x
    -- y[..., -1:] = x[..., -1:]
    y[{ "...", { -1, -1 } }] = x[{ "...", { -1, -1 } }]
    y = F.pad(y, { factor, factor })
    -- y = torch.nn.functional.conv1d(y, window)[..., :-1]
    y = F.conv1d(y, window)[{ "...", { 1, -2 } }]

    -- y = y.reshape(batch, channel, factor * frame).permute(0, 2, 1)
    y = y:reshape(batch, channel, factor * frame):permute(1, 3, 2)

    return y
end

local function upsample(signal, factor)
    -- signal = signal.permute(0, 2, 1)
    signal = signal:permute(1, 3, 2)
    -- signal = nn.functional.interpolate(signal, size=signal.shape[-1] * factor)
    signal = F.interpolate(signal, { size = signal:size(-1) * factor })
    -- return signal.permute(0, 2, 1)
    return signal:permute(1, 3, 2)
end

local function remove_above_nyquist(amplitudes, pitch, sampling_rate)
    -- n_harm = amplitudes.shape[-1]
    local n_harm = amplitudes:size(-1)
    -- pitches = pitch * torch.arange(1, n_harm + 1).to(pitch)
    local pitches = pitch * tide.arange(1, n_harm + 1):to(pitch)
    -- aa = (pitches < sampling_rate / 2).float() + 1e-4
    local aa = pitches:lt(sampling_rate / 2):float() + 1e-4
    return amplitudes * aa
end

local function scale_function(x)
    -- return 2 * torch.sigmoid(x)**(math.log(10)) + 1e-7
    return 2 * tide.sigmoid(x) ^ math.log(10) + 1e-7
end

local function mlp(in_size, hidden_size, n_layers)
    -- channels = [in_size] + (n_layers) * [hidden_size]
    local channels = { in_size }
    for _ = 1, n_layers do channels[#channels + 1] = hidden_size end
    local net = {}
    -- for i in range(n_layers):
    for i = 1, n_layers do
        -- net.append(nn.Linear(channels[i], channels[i + 1]))
        net[#net + 1] = nn.Linear(channels[i], channels[i + 1])
        net[#net + 1] = nn.LayerNorm(channels[i + 1])
        net[#net + 1] = nn.LeakyReLU()
    end
    -- return nn.Sequential(*net)
    return nn.Sequential(unpack(net))
end

local function gru(n_input, hidden_size)
    -- return nn.GRU(n_input * hidden_size, hidden_size, batch_first=True)
    return nn.GRU(n_input * hidden_size, hidden_size, { batch_first = true })
end

local function harmonic_synth(pitch, amplitudes, sampling_rate)
    -- n_harmonic = amplitudes.shape[-1]
    local n_harmonic = amplitudes:size(-1)
    -- omega = torch.cumsum(2 * math.pi * pitch / sampling_rate, 1)
    local omega = tide.cumsum(2 * math.pi * pitch / sampling_rate, 2)
    -- omegas = omega * torch.arange(1, n_harmonic + 1).to(omega)
    local omegas = omega * tide.arange(1, n_harmonic + 1):to(omega)
    -- signal = (torch.sin(omegas) * amplitudes).sum(-1, keepdim=True)
    local signal = (tide.sin(omegas) * amplitudes):sum(-1, true)
    return signal
end

local function amp_to_impulse_response(amp, target_size)
    -- amp = torch.stack([amp, torch.zeros_like(amp)], -1)
    amp = tide.stack({ amp, tide.zeros_like(amp) }, -1)
    amp = tide.view_as_complex(amp)
    amp = fft.irfft(amp)

    -- filter_size = amp.shape[-1]
    local filter_size = amp:size(-1)

    -- amp = torch.roll(amp, filter_size // 2, -1)
    amp = tide.roll(amp, math.floor(filter_size / 2), -1)
    -- win = torch.hann_window(filter_size, dtype=amp.dtype, device=amp.device)
    local win = tide.hann_window(filter_size, { dtype = amp.dtype, device = amp.device })

    amp = amp * win

    -- amp = nn.functional.pad(amp, (0, int(target_size) - int(filter_size)))
    amp = F.pad(amp, { 0, int(target_size) - int(filter_size) })
    -- amp = torch.roll(amp, -filter_size // 2, -1)
    amp = tide.roll(amp, math.floor(-filter_size / 2), -1)

    return amp
end

local function fft_convolve(signal, kernel)
    -- signal = nn.functional.pad(signal, (0, signal.shape[-1]))
    signal = F.pad(signal, { 0, signal:size(-1) })
    -- kernel = nn.functional.pad(kernel, (kernel.shape[-1], 0))
    kernel = F.pad(kernel, { kernel:size(-1), 0 })

    local output = fft.irfft(fft.rfft(signal) * fft.rfft(kernel))
    -- output = output[..., output.shape[-1] // 2:]
    output = output[{ "...", { math.floor(output:size(-1) / 2) + 1, -1 } }]

    return output
end

-- the test's fixed "uniform" noise in place of DDSP.forward's torch.rand (the generators differ)
local function fixed_noise(...)
    local shape = { ... }
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    local i = tide.arange(n, { dtype = "float32" })
    return (0.5 + 0.5 * tide.sin(1.7 * i + 0.3)):reshape(unpack(shape))
end

---------------------------------------------------------------------------------------------
-- ddsp/model.py
---------------------------------------------------------------------------------------------
-- class Reverb(nn.Module):
local Reverb = nn.Module:extend("Reverb")
-- def __init__(self, length, sampling_rate, initial_wet=0, initial_decay=5):
function Reverb:init(length, sampling_rate, initial_wet, initial_decay)
    initial_wet, initial_decay = initial_wet or 0, initial_decay or 5
    nn.Module.init(self)
    self.length = length
    self.sampling_rate = sampling_rate

    -- self.noise = nn.Parameter((torch.rand(length) * 2 - 1).unsqueeze(-1))
    self.noise = nn.Parameter((tide.rand(length) * 2 - 1):unsqueeze(-1))
    -- self.decay = nn.Parameter(torch.tensor(float(initial_decay)))
    -- (float(v): tide.tensor of an integral Lua number is int64 as torch.tensor(int), so the
    -- dtype is named)
    self.decay = nn.Parameter(tide.tensor(initial_decay, { dtype = "float32" }))
    -- self.wet = nn.Parameter(torch.tensor(float(initial_wet)))
    self.wet = nn.Parameter(tide.tensor(initial_wet, { dtype = "float32" }))

    -- t = torch.arange(self.length) / self.sampling_rate
    local t = tide.arange(self.length) / self.sampling_rate
    t = t:reshape(1, -1, 1)
    self:register_buffer("t", t)
end

function Reverb:build_impulse()
    -- t = torch.exp(-nn.functional.softplus(-self.decay) * self.t * 500)
    local t = tide.exp(-F.softplus(-self.decay) * self.t * 500)
    local noise = self.noise * t
    -- impulse = noise * torch.sigmoid(self.wet)
    local impulse = noise * tide.sigmoid(self.wet)
    -- impulse[:, 0] = 1
    impulse[{ {}, 1 }] = 1
    return impulse
end

function Reverb:forward(x)
    -- lenx = x.shape[1]
    local lenx = x:size(2)
    local impulse = self:build_impulse()
    -- impulse = nn.functional.pad(impulse, (0, 0, 0, lenx - self.length))
    impulse = F.pad(impulse, { 0, 0, 0, lenx - self.length })

    -- x = fft_convolve(x.squeeze(-1), impulse.squeeze(-1)).unsqueeze(-1)
    x = fft_convolve(x:squeeze(-1), impulse:squeeze(-1)):unsqueeze(-1)

    return x
end

-- class DDSP(nn.Module):
local DDSP = nn.Module:extend("DDSP")
-- def __init__(self, hidden_size, n_harmonic, n_bands, sampling_rate, block_size):
function DDSP:init(hidden_size, n_harmonic, n_bands, sampling_rate, block_size)
    nn.Module.init(self)
    -- self.register_buffer("sampling_rate", torch.tensor(sampling_rate))
    self:register_buffer("sampling_rate", tide.tensor(sampling_rate))
    self:register_buffer("block_size", tide.tensor(block_size))

    -- self.in_mlps = nn.ModuleList([mlp(1, hidden_size, 3)] * 2)
    local in_mlp = mlp(1, hidden_size, 3)
    self.in_mlps = nn.ModuleList({ in_mlp, in_mlp })
    self.gru = gru(2, hidden_size)
    self.out_mlp = mlp(hidden_size + 2, hidden_size, 3)

    -- self.proj_matrices = nn.ModuleList([
    self.proj_matrices = nn.ModuleList({
        nn.Linear(hidden_size, n_harmonic + 1),
        nn.Linear(hidden_size, n_bands),
    })

    self.reverb = Reverb(sampling_rate, sampling_rate)

    -- self.register_buffer("cache_gru", torch.zeros(1, 1, hidden_size))
    self:register_buffer("cache_gru", tide.zeros(1, 1, hidden_size))
    self:register_buffer("phase", tide.zeros(1))
end

function DDSP:forward(pitch, loudness)
    -- hidden = torch.cat([self.in_mlps[0](pitch), self.in_mlps[1](loudness)], -1)
    local hidden = tide.cat({ self.in_mlps[1](pitch), self.in_mlps[2](loudness) }, -1)
    -- hidden = torch.cat([self.gru(hidden)[0], pitch, loudness], -1)
    hidden = tide.cat({ (self.gru(hidden)), pitch, loudness }, -1)
    hidden = self.out_mlp(hidden)

    -- harmonic part
    -- param = scale_function(self.proj_matrices[0](hidden))
    local param = scale_function(self.proj_matrices[1](hidden))

    -- total_amp = param[..., :1]
    local total_amp = param[{ "...", { 1, 1 } }]
    -- amplitudes = param[..., 1:]
    local amplitudes = param[{ "...", { 2, -1 } }]

    amplitudes = remove_above_nyquist(amplitudes, pitch, self.sampling_rate)
    -- amplitudes /= amplitudes.sum(-1, keepdim=True)
    amplitudes:div_(amplitudes:sum(-1, true))
    -- amplitudes *= total_amp
    amplitudes:mul_(total_amp)

    amplitudes = upsample(amplitudes, self.block_size)
    pitch = upsample(pitch, self.block_size)

    local harmonic = harmonic_synth(pitch, amplitudes, self.sampling_rate)

    -- noise part
    -- param = scale_function(self.proj_matrices[1](hidden) - 5)
    param = scale_function(self.proj_matrices[2](hidden) - 5)

    local impulse = amp_to_impulse_response(param, self.block_size)
    -- noise = torch.rand(impulse.shape[0], impulse.shape[1], self.block_size).to(impulse) * 2 - 1
    -- the noise is the test's fixed one, not torch.rand (tide.rand(2, 4, self.block_size) takes
    -- the 0-d buffer as a size, as PyTorch's); fixed_noise counts in Lua, hence int()
    local noise = fixed_noise(impulse:size(1), impulse:size(2), int(self.block_size)):to(impulse)
        * 2 - 1

    -- noise = fft_convolve(noise, impulse).contiguous()
    noise = fft_convolve(noise, impulse):contiguous()
    -- noise = noise.reshape(noise.shape[0], -1, 1)
    noise = noise:reshape(noise:size(1), -1, 1)

    local signal = harmonic + noise

    -- reverb part
    signal = self.reverb(signal)

    return signal
end

---------------------------------------------------------------------------------------------
-- the checks
---------------------------------------------------------------------------------------------
-- PyTorch's value: {sum, sum of x * sin(0.61 j + 0.2)} over the flat (0-based j) elements
local function checksum(t)
    t = t:detach():double():reshape(-1)
    local w = tide.sin(tide.arange(t:numel(), { dtype = "float64" }) * 0.61 + 0.2)
    return { t:sum():item(), (t * w):sum():item() }
end

local function ar(n, a, b)
    return tide.sin(tide.arange(n, { dtype = "float32" }) * a + b)
end

local SR, BS, NH, NB, H = 800, 8, 3, 5, 4
local SCALES, OVERLAP = { 16, 8 }, .75
local TOL = 2e-5

local function inputs()
    local f32 = { dtype = "float32" }
    local pitch = tide.tensor({ { 110, 150, 220, 90 }, { 140, 95, 180, 130 } }, f32):unsqueeze(-1)
    local loud = tide.tensor({ { -0.5, 0.2, 1, 0.3 }, { 0.8, -1.2, 0.1, 0.6 } }, f32):unsqueeze(-1)
    local sig = (0.5 * ar(64, 0.83, 0.1)):reshape(2, 32)
    return pitch, loud, sig
end

describe("acids-ircam/ddsp_pytorch ddsp/core.py", function()
    it("safe_log, mean_std_loudness, scale_function, remove_above_nyquist as PyTorch's", function()
        assert_close_list({ -16.11809539794922, -0.6931469440460205, 0.6931471824645996 },
            safe_log(tide.tensor({ 0, 0.5, 2 }, { dtype = "float32" })):tolist(), 1e-6, "safe_log")
        local f32 = { dtype = "float32" }
        local mean, std = mean_std_loudness({ { nil, nil, tide.tensor({ 1, 2, 4 }, f32) },
            { nil, nil, tide.tensor({ 0, 3, 3, 6 }, f32) } })
        assert_close_list({ 2.666666626930237, 1.9885075092315674 }, { mean, std }, 1e-6, "msl")
        local x = ar(24, 0.45, 0.7):reshape(2, 4, 3)
        assert_close_list({ 12.06096371, 1.703348023 }, checksum(scale_function(x)), TOL, "scale")
        local pitch = inputs()
        local amps = (ar(24, 0.3, 0.2) ^ 2):reshape(2, 4, 3)
        local ran = remove_above_nyquist(amps, pitch, SR)
        assert.are.same({ 2, 4, 3 }, ran.shape)
        assert_close_list({ 0.03947345167398453, 0.22987185418605804, 0.5146511793136597,
            0.7943300604820251, 0.9712083339691162, 9.83399004326202e-05, 0.8269044160842896,
            5.5607604735996574e-05, 2.6574154617264867e-05, 0.057245925068855286,
            0.0034078871831297874, 0.12306135147809982, 0.37440773844718933, 0.6696443557739258,
            9.055465488927439e-05, 0.9999465942382812, 0.9196277856826782, 0.6927381753921509,
            0.3985375165939331, 0.13979767262935638, 6.903879352648801e-07, 0.04628123715519905,
            0.244172602891922, 0.5314489603042603 }, ran:reshape(-1):tolist(), 1e-6, "ran")
    end)

    it("multiscale_fft, resample, upsample, harmonic_synth as PyTorch's", function()
        local pitch, _, sig = inputs()
        local S = multiscale_fft(sig, SCALES, OVERLAP)
        assert.are.same({ 2, 9, 9 }, S[1].shape)
        assert.are.same({ 2, 5, 17 }, S[2].shape)
        assert.are.equal("float32", S[1].dtype)
        assert_close_list({ 20.79984756, 1.127033191 }, checksum(S[1]), TOL, "mfft 16")
        assert_close_list({ 26.87506986, -0.111118486 }, checksum(S[2]), TOL, "mfft 8")
        local x = ar(24, 0.45, 0.7):reshape(2, 4, 3)
        local r = resample(x, 8)
        assert.are.same({ 2, 32, 3 }, r.shape)
        assert_close_list({ -23.29935385, -0.1981036805 }, checksum(r), TOL, "resample")
        local u = upsample(x, 8)
        assert.are.same({ 2, 32, 3 }, u.shape)
        assert_close_list({ 10.99904335, -0.8267303185 }, checksum(u), TOL, "upsample")
        local amps = (ar(24, 0.3, 0.2) ^ 2):reshape(2, 4, 3)
        local h = harmonic_synth(upsample(pitch, 8), upsample(amps, 8), SR)
        assert.are.same({ 2, 32, 1 }, h.shape)
        assert_close_list({ -0.4716846272, -2.187262245 }, checksum(h), 1e-4, "hsynth")
    end)

    it("amp_to_impulse_response and fft_convolve (view_as_complex, irfft, rfft)", function()
        local a5 = (ar(40, 0.7, 0.4) ^ 2):reshape(2, 4, 5)
        local ir = amp_to_impulse_response(a5, 8)
        assert.are.same({ 2, 4, 8 }, ir.shape)
        assert_close_list({ 4.191061498, -0.5702124108 }, checksum(ir), TOL, "ir")
        local fc = fft_convolve(ar(64, 0.5, 0.9):reshape(2, 4, 8),
            ar(64, 1.1, 0.5):reshape(2, 4, 8))
        assert.are.same({ 2, 4, 8 }, fc.shape)
        assert_close_list({ -10.76287622, 3.236094263 }, checksum(fc), TOL, "fconv")
    end)
end)

describe("acids-ircam/ddsp_pytorch ddsp/model.py DDSP", function()
    it("synthesizes PyTorch's signal and loss, and two Adam steps lower it as PyTorch's", function()
        local pitch, loud, sig = inputs()
        local model = DDSP(H, NH, NB, SR, BS)
        local names = {}
        local k = 0
        for name, p in model:named_parameters() do
            k = k + 1
            names[k] = name
            local j = tide.arange(p:numel(), { dtype = "float32" })
            tide.no_grad(function()
                p:copy_((0.4 * tide.sin(0.37 * j + 0.91 * k)):reshape(p.shape))
            end)
        end
        -- PyTorch's named_parameters: the shared in_mlp once, as in_mlps.0.*
        assert.are.equal(35, k)
        assert.are.equal("in_mlps.1.1.weight", names[1])
        assert.are.equal("gru.weight_ih_l0", names[13])
        assert.are.equal("reverb.wet", names[35])

        local opt = tide.optim.Adam(model:parameters(), { lr = 1e-2 })
        local function lossf()
            -- y = model(p, l).squeeze(-1)
            local y = model(pitch, loud):squeeze(-1)
            local ori = multiscale_fft(sig, SCALES, OVERLAP)
            local rec = multiscale_fft(y, SCALES, OVERLAP)
            local loss = 0
            -- for s_x, s_y in zip(ori_stft, rec_stft):
            for i = 1, #ori do
                local s_x, s_y = ori[i], rec[i]
                local lin_loss = (s_x - s_y):abs():mean()
                local log_loss = (safe_log(s_x) - safe_log(s_y)):abs():mean()
                loss = loss + lin_loss + log_loss
            end
            return y, loss
        end
        local y, loss = lossf()
        assert.are.same({ 2, 32 }, y.shape)
        assert_close_list({ 1.428610167, -1.367733339 }, checksum(y), 1e-4, "signal")
        local losses = { loss:item() }
        for _ = 1, 2 do
            opt:zero_grad()
            loss:backward()
            opt:step()
            y, loss = lossf()
            losses[#losses + 1] = loss:item()
        end
        for i = 1, 3 do assert_finite(losses[i], "loss") end
        assert_close_list({ 4.728888512, 4.645702362, 4.603253365 }, losses, 1e-4, "losses")
    end)
end)
