-- ported_scripts165_spec.lua — descriptinc/melgan-neurips: mel2wav/modules.py (weights_init,
-- WNConv1d / WNConvTranspose1d with weight_norm, Audio2Mel with torch.stft in its old real
-- [..., 2] form (no return_complex given: PyTorch 1.13's warning, printed once, then the real
-- tensor; tide does the same), ResnetBlock, Generator, NLayerDiscriminator, Discriminator) and the
-- training step of scripts/train.py (hinge losses on D, feature matching over the D_fake / D_real
-- lists, the mel reconstruction error), one step of each Adam, ported line for line at tiny sizes
-- (audio 2 x 1 x 1024, n_fft 64, hop 16, 8 mels, ngf 4). The Python line stands above each Lua
-- line that differs from it. Dims are 1-based; the ModuleDict names stay PyTorch's.
-- librosa.filters.mel (0.7, slaney mel scale, slaney norm) is ported below with the same formula,
-- in both this file and the PyTorch reference (no librosa in either venv); values were checked
-- against PyTorch 1.13 with fixed weights (the formulas of set_fixed_weights) and audio.
-- Sizes: sampling_rate 4000 (22050 leaves most of 8 filters over 33 bins empty), Generator
-- ratios {8, 2} (hop 16 = the stft's; the file's {8, 8, 2, 2} is checked for its shape),
-- ndf 4, n_layers_D 2, the nf cap 16 instead of 1024 (see NLayerDiscriminator), train.py's
-- num_D 3, downsamp_factor 4, lambda_feat 10, Adam(lr 1e-4, betas (0.5, 0.9)). No GAP: every
-- call has tide's own spelling.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

-- Python's a // b (Lua 5.1 and LuaJIT have no //)
local function idiv(a, b)
    return math.floor(a / b)
end

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- from torch.nn.utils import weight_norm
local weight_norm = nn.utils.weight_norm

-- librosa.filters.mel(sr, n_fft, n_mels, fmin, fmax) of librosa 0.7 (htk=False, norm=1), in
-- float64 as librosa; returned as a float32 [n_mels, 1 + n_fft // 2] tensor
local function hz_to_mel(f)
    local f_min, f_sp = 0.0, 200.0 / 3
    local mels = (f - f_min) / f_sp
    local min_log_hz = 1000.0
    local min_log_mel = (min_log_hz - f_min) / f_sp
    local logstep = math.log(6.4) / 27.0
    if f >= min_log_hz then
        mels = min_log_mel + math.log(f / min_log_hz) / logstep
    end
    return mels
end

local function mel_to_hz(m)
    local f_min, f_sp = 0.0, 200.0 / 3
    local freqs = f_min + f_sp * m
    local min_log_hz = 1000.0
    local min_log_mel = (min_log_hz - f_min) / f_sp
    local logstep = math.log(6.4) / 27.0
    if m >= min_log_mel then
        freqs = min_log_hz * math.exp(logstep * (m - min_log_mel))
    end
    return freqs
end

local function librosa_mel_fn(sr, n_fft, n_mels, fmin, fmax)
    fmax = fmax or sr / 2
    local n_freq = 1 + idiv(n_fft, 2)
    -- fftfreqs = np.linspace(0, float(sr) / 2, int(1 + n_fft // 2), endpoint=True)
    local fftfreqs = {}
    for k = 1, n_freq do fftfreqs[k] = (k - 1) * (sr / 2) / (n_freq - 1) end
    -- mel_f = mel_to_hz(np.linspace(hz_to_mel(fmin), hz_to_mel(fmax), n_mels + 2))
    local mlo, mhi = hz_to_mel(fmin), hz_to_mel(fmax)
    local mel_f = {}
    for k = 1, n_mels + 2 do mel_f[k] = mel_to_hz(mlo + (k - 1) * (mhi - mlo) / (n_mels + 1)) end
    local weights = {}
    for i = 1, n_mels do
        -- lower = -ramps[i] / fdiff[i]; upper = ramps[i + 2] / fdiff[i + 1]
        local row = {}
        -- enorm = 2.0 / (mel_f[2:n_mels + 2] - mel_f[:n_mels])
        local enorm = 2.0 / (mel_f[i + 2] - mel_f[i])
        for k = 1, n_freq do
            local lower = -(mel_f[i] - fftfreqs[k]) / (mel_f[i + 1] - mel_f[i])
            local upper = (mel_f[i + 2] - fftfreqs[k]) / (mel_f[i + 2] - mel_f[i + 1])
            row[k] = math.max(0, math.min(lower, upper)) * enorm
        end
        weights[i] = row
    end
    return tide.tensor(weights, { dtype = "float64" })
end

---------------------------------------------------------------------------------------------
-- mel2wav/modules.py
---------------------------------------------------------------------------------------------
-- def weights_init(m):
local function weights_init(m)
    -- classname = m.__class__.__name__
    local classname = m.__name
    -- if classname.find("Conv") != -1:
    if classname:find("Conv") then
        -- m.weight.data.normal_(0.0, 0.02)
        -- (as in PyTorch, the weight of a weight_norm'd conv is recomputed from weight_g and
        -- weight_v at each forward, so this draw is lost: the file's init is weight_norm's)
        m.weight.data:normal_(0.0, 0.02)
    elseif classname:find("BatchNorm2d") then
        m.weight.data:normal_(1.0, 0.02)
        m.bias.data:fill_(0)
    end
end

-- def WNConv1d(*args, **kwargs): return weight_norm(nn.Conv1d(*args, **kwargs))
local function WNConv1d(...)
    return weight_norm(nn.Conv1d(...))
end

local function WNConvTranspose1d(...)
    return weight_norm(nn.ConvTranspose1d(...))
end

-- class Audio2Mel(nn.Module):
local Audio2Mel = nn.Module:extend("Audio2Mel")
-- def __init__(self, n_fft=1024, hop_length=256, win_length=1024, sampling_rate=22050,
--              n_mel_channels=80, mel_fmin=0.0, mel_fmax=None):
function Audio2Mel:init(opts)
    opts = opts or {}
    local n_fft, hop_length = opts.n_fft or 1024, opts.hop_length or 256
    local win_length, sampling_rate = opts.win_length or 1024, opts.sampling_rate or 22050
    local n_mel_channels, mel_fmin = opts.n_mel_channels or 80, opts.mel_fmin or 0.0
    local mel_fmax = opts.mel_fmax
    -- window = torch.hann_window(win_length).float()
    local window = tide.hann_window(win_length):float()
    -- mel_basis = librosa_mel_fn(sampling_rate, n_fft, n_mel_channels, mel_fmin, mel_fmax)
    local mel_basis = librosa_mel_fn(sampling_rate, n_fft, n_mel_channels, mel_fmin, mel_fmax)
    -- mel_basis = torch.from_numpy(mel_basis).float()
    mel_basis = mel_basis:float()
    self:register_buffer("mel_basis", mel_basis)
    self:register_buffer("window", window)
    self.n_fft = n_fft
    self.hop_length = hop_length
    self.win_length = win_length
    self.sampling_rate = sampling_rate
    self.n_mel_channels = n_mel_channels
end

function Audio2Mel:forward(audio)
    -- p = (self.n_fft - self.hop_length) // 2
    local p = idiv(self.n_fft - self.hop_length, 2)
    -- audio = F.pad(audio, (p, p), "reflect").squeeze(1)
    audio = F.pad(audio, { p, p }, "reflect"):squeeze(2)
    -- fft = torch.stft(audio, n_fft=self.n_fft, hop_length=self.hop_length,
    --                  win_length=self.win_length, window=self.window, center=False)
    local fft = tide.stft(audio, { n_fft = self.n_fft, hop_length = self.hop_length,
        win_length = self.win_length, window = self.window, center = false })
    -- real_part, imag_part = fft.unbind(-1)
    local real_part, imag_part = unpack(fft:unbind(-1))
    -- magnitude = torch.sqrt(real_part ** 2 + imag_part ** 2)
    local magnitude = tide.sqrt(real_part ^ 2 + imag_part ^ 2)
    local mel_output = tide.matmul(self.mel_basis, magnitude)
    -- log_mel_spec = torch.log10(torch.clamp(mel_output, min=1e-5))
    local log_mel_spec = tide.log10(tide.clamp(mel_output, { min = 1e-5 }))
    return log_mel_spec
end

-- class ResnetBlock(nn.Module):
local ResnetBlock = nn.Module:extend("ResnetBlock")
-- def __init__(self, dim, dilation=1):
function ResnetBlock:init(dim, dilation)
    dilation = dilation or 1
    self.block = nn.Sequential(
        nn.LeakyReLU(0.2),
        nn.ReflectionPad1d(dilation),
        -- WNConv1d(dim, dim, kernel_size=3, dilation=dilation),
        WNConv1d(dim, dim, 3, { dilation = dilation }),
        nn.LeakyReLU(0.2),
        -- WNConv1d(dim, dim, kernel_size=1),
        WNConv1d(dim, dim, 1)
    )
    -- self.shortcut = WNConv1d(dim, dim, kernel_size=1)
    self.shortcut = WNConv1d(dim, dim, 1)
end

function ResnetBlock:forward(x)
    -- return self.shortcut(x) + self.block(x)
    return self.shortcut(x) + self.block(x)
end

-- class Generator(nn.Module):
local Generator = nn.Module:extend("Generator")
-- def __init__(self, input_size, ngf, n_residual_layers):
-- (ratios is an argument here, [8, 8, 2, 2] by default: the tiny test runs hop 16 = 8 * 2)
function Generator:init(input_size, ngf, n_residual_layers, ratios)
    -- ratios = [8, 8, 2, 2]
    ratios = ratios or { 8, 8, 2, 2 }
    -- self.hop_length = np.prod(ratios)
    local prod = 1
    for _, r in ipairs(ratios) do prod = prod * r end
    self.hop_length = prod
    -- mult = int(2 ** len(ratios))
    local mult = math.floor(2 ^ #ratios)

    -- model = [nn.ReflectionPad1d(3), WNConv1d(input_size, mult * ngf, kernel_size=7, padding=0)]
    local model = {
        nn.ReflectionPad1d(3),
        WNConv1d(input_size, mult * ngf, 7, { padding = 0 }),
    }

    -- Upsample to raw audio scale
    -- for i, r in enumerate(ratios):
    for _, r in ipairs(ratios) do
        -- model += [nn.LeakyReLU(0.2), WNConvTranspose1d(mult * ngf, mult * ngf // 2,
        --     kernel_size=r * 2, stride=r, padding=r // 2 + r % 2, output_padding=r % 2)]
        model[#model + 1] = nn.LeakyReLU(0.2)
        model[#model + 1] = WNConvTranspose1d(mult * ngf, idiv(mult * ngf, 2), r * 2,
            { stride = r, padding = idiv(r, 2) + r % 2, output_padding = r % 2 })

        -- for j in range(n_residual_layers):
        for j = 0, n_residual_layers - 1 do
            -- model += [ResnetBlock(mult * ngf // 2, dilation=3 ** j)]
            model[#model + 1] = ResnetBlock(idiv(mult * ngf, 2), math.floor(3 ^ j))
        end

        -- mult //= 2
        mult = idiv(mult, 2)
    end

    -- model += [nn.LeakyReLU(0.2), nn.ReflectionPad1d(3),
    --           WNConv1d(ngf, 1, kernel_size=7, padding=0), nn.Tanh()]
    model[#model + 1] = nn.LeakyReLU(0.2)
    model[#model + 1] = nn.ReflectionPad1d(3)
    model[#model + 1] = WNConv1d(ngf, 1, 7, { padding = 0 })
    model[#model + 1] = nn.Tanh()

    -- self.model = nn.Sequential(*model)
    self.model = nn.Sequential(unpack(model))
    self:apply(weights_init)
end

function Generator:forward(x)
    return self.model(x)
end

-- class NLayerDiscriminator(nn.Module):
local NLayerDiscriminator = nn.Module:extend("NLayerDiscriminator")
-- def __init__(self, ndf, n_layers, downsampling_factor):
-- (max_nf is the file's 1024 cap, an argument here: the file's layer n_layers + 1 takes nf_prev
-- input channels, which equal nf only once the cap is reached; the tiny test caps at 16)
function NLayerDiscriminator:init(ndf, n_layers, downsampling_factor, max_nf)
    max_nf = max_nf or 1024
    local model = nn.ModuleDict()

    -- model["layer_0"] = nn.Sequential(nn.ReflectionPad1d(7),
    --     WNConv1d(1, ndf, kernel_size=15), nn.LeakyReLU(0.2, True))
    model["layer_0"] = nn.Sequential(
        nn.ReflectionPad1d(7),
        WNConv1d(1, ndf, 15),
        nn.LeakyReLU(0.2, true)
    )

    local nf = ndf
    local stride = downsampling_factor
    local nf_prev
    -- for n in range(1, n_layers + 1):
    for n = 1, n_layers do
        nf_prev = nf
        nf = math.min(nf * stride, max_nf)

        -- model["layer_%d" % n] = nn.Sequential(WNConv1d(nf_prev, nf,
        --     kernel_size=stride * 10 + 1, stride=stride, padding=stride * 5,
        --     groups=nf_prev // 4), nn.LeakyReLU(0.2, True))
        model[string.format("layer_%d", n)] = nn.Sequential(
            WNConv1d(nf_prev, nf, stride * 10 + 1,
                { stride = stride, padding = stride * 5, groups = idiv(nf_prev, 4) }),
            nn.LeakyReLU(0.2, true)
        )
    end

    nf = math.min(nf * 2, max_nf)
    -- model["layer_%d" % (n_layers + 1)] = nn.Sequential(
    --     WNConv1d(nf_prev, nf, kernel_size=5, stride=1, padding=2), nn.LeakyReLU(0.2, True))
    model[string.format("layer_%d", n_layers + 1)] = nn.Sequential(
        WNConv1d(nf_prev, nf, 5, { stride = 1, padding = 2 }),
        nn.LeakyReLU(0.2, true)
    )

    -- model["layer_%d" % (n_layers + 2)] = WNConv1d(nf, 1, kernel_size=3, stride=1, padding=1)
    model[string.format("layer_%d", n_layers + 2)] = WNConv1d(nf, 1, 3,
        { stride = 1, padding = 1 })

    self.model = model
end

function NLayerDiscriminator:forward(x)
    local results = {}
    -- for key, layer in self.model.items():
    for _, layer in self.model:items() do
        x = layer(x)
        -- results.append(x)
        results[#results + 1] = x
    end
    return results
end

-- class Discriminator(nn.Module):
local Discriminator = nn.Module:extend("Discriminator")
-- def __init__(self, num_D, ndf, n_layers, downsampling_factor):
function Discriminator:init(num_D, ndf, n_layers, downsampling_factor, max_nf)
    self.model = nn.ModuleDict()
    -- for i in range(num_D):
    for i = 0, num_D - 1 do
        -- self.model[f"disc_{i}"] = NLayerDiscriminator(ndf, n_layers, downsampling_factor)
        self.model["disc_" .. i] = NLayerDiscriminator(ndf, n_layers, downsampling_factor,
            max_nf)
    end

    -- self.downsample = nn.AvgPool1d(4, stride=2, padding=1, count_include_pad=False)
    self.downsample = nn.AvgPool1d(4, { stride = 2, padding = 1, count_include_pad = false })
    self:apply(weights_init)
end

function Discriminator:forward(x)
    local results = {}
    for _, disc in self.model:items() do
        -- results.append(disc(x))
        results[#results + 1] = disc(x)
        x = self.downsample(x)
    end
    return results
end

---------------------------------------------------------------------------------------------
-- the test's fixed weights and audio (the same formulas in the PyTorch reference)
---------------------------------------------------------------------------------------------
-- conv number c in modules() order (PyTorch's pre-order), element i 0-based, row-major
local function set_fixed_weights(model)
    local c = 0
    tide.no_grad(function()
        for _, m in ipairs(model:modules()) do
            if m.__name == "Conv1d" or m.__name == "ConvTranspose1d" then
                c = c + 1
                local v, g, b = m.weight_v, m.weight_g, m.bias
                local idx = tide.arange(v:numel(), { dtype = "float64" })
                v:copy_(tide.sin(0.7 * idx + 0.3 * c):view(v.shape))
                local gi = tide.arange(g:numel(), { dtype = "float64" })
                g:copy_((0.9 + 0.2 * tide.cos(0.9 * gi + c)):view(g.shape))
                local bi = tide.arange(b:numel(), { dtype = "float64" })
                b:copy_(0.05 * tide.sin(1.3 * bi - c))
            end
        end
    end)
    return c
end

local function make_audio()
    local t = tide.arange(2 * 1024, { dtype = "float64" }):view(2, 1, 1024)
    return (0.5 * tide.sin(0.05 * t) + 0.3 * tide.sin(0.31 * t + 1) * tide.cos(0.002 * t)):float()
end

-- k evenly spaced entries of t flattened (Python's pick)
local function pick(t, k)
    local f = t:reshape(-1)
    local n = f:numel()
    local out = {}
    for j = 0, k - 1 do
        out[#out + 1] = f[math.floor(j * (n - 1) / (k - 1)) + 1]:item()
    end
    return out
end

local function shape_of(t)
    local s = {}
    for i = 1, t.ndim do s[i] = t:size(i) end
    return s
end

-- PyTorch 1.13's values (/tmp reference script: the modules above in Python, same formulas)
local REF = {
    mel_basis_sum = 0.127918661,
    mel_basis_pick = { -0, 0.00186010939, 0.00523390388, 0.00337379472, 1.66423688e-05, 0, 0, 0 },
    s_t_sum = -4042.12061,
    s_t_pick = {
        -1.33807242, -3.89721155, -4.71782112, -5, -2.3430295, -4.14969349, -5, -3.55298686
    },
    x_pred_sum = -250.980896,
    x_pred_pick = {
        -0.118599534, -0.111428872, -0.136134297, -0.10090138, -0.139807329, -0.114979193,
        -0.132148668, -0.100529708
    },
    D_shapes = {
        { { 2, 4, 1024 }, { 2, 16, 256 }, { 2, 16, 64 }, { 2, 16, 64 }, { 2, 1, 64 } },
        { { 2, 4, 512 }, { 2, 16, 128 }, { 2, 16, 32 }, { 2, 16, 32 }, { 2, 1, 32 } },
        { { 2, 4, 256 }, { 2, 16, 64 }, { 2, 16, 16 }, { 2, 16, 16 }, { 2, 1, 16 } },
    },
    D_sums = {
        { 620.657776, 125.12838, 23.7740364, 27.8608894, 7.04233313 },
        { 587.537476, 434.396637, 27.0516262, 14.9508791, 1.3487978 },
        { 112.932457, 37.4019699, 7.69349003, 5.63558817, -1.14263368 },
    },
    D_score_pick = {
        { 0.05467337, 0.0545127615, 0.0548056029, 0.0522203632 },
        { 0.0216340534, 0.0246123075, 0.0252253041, 0.0194155127 },
        { -0.0389477089, -0.0343521014, -0.0404739156, -0.029481627 },
    },
    losses = { 5.99747276, -0.0375117473, 0.312910944, 0.778718829 },
    g_moved = 2.11487007,
}

describe("ported scripts 165: melgan-neurips (mel2wav/modules.py, scripts/train.py)", function()
    local fft = Audio2Mel({ n_fft = 64, hop_length = 16, win_length = 64, sampling_rate = 4000,
        n_mel_channels = 8 })
    local x_t = make_audio()

    it("Audio2Mel: the mel basis buffer and the log-mel of the audio match PyTorch's", function()
        assert.same({ 8, 33 }, shape_of(fft.mel_basis))
        assert.equal("float32", fft.mel_basis.dtype)
        assert_close_list({ REF.mel_basis_sum }, { fft.mel_basis:sum():item() }, 1e-5, "mel sum")
        assert_close_list(REF.mel_basis_pick, pick(fft.mel_basis, 8), 1e-5, "mel_basis")
        local s_t = fft(x_t)
        assert.same({ 2, 8, 64 }, shape_of(s_t))
        assert_close_list({ REF.s_t_sum }, { s_t:sum():item() }, 1e-4, "s_t sum")
        assert_close_list(REF.s_t_pick, pick(s_t, 8), 1e-4, "s_t")
        -- the buffers are the module's, in its state_dict
        local sd = fft:state_dict()
        assert.truthy(sd.mel_basis and sd.window)
    end)

    it("Generator and Discriminator: outputs, feature maps and the training step", function()
        -- s_t = fft(x_t).detach()
        local s_t = fft(x_t):detach()
        -- netG = Generator(args.n_mel_channels, args.ngf, args.n_residual_layers)
        local netG = Generator(8, 4, 3, { 8, 2 })
        -- netD = Discriminator(args.num_D, args.ndf, args.n_layers_D, args.downsamp_factor)
        local netD = Discriminator(3, 4, 2, 4, 16)
        assert.equal(1 + 2 * (1 + 3 * 3) + 1, set_fixed_weights(netG))
        assert.equal(3 * 5, set_fixed_weights(netD))
        assert.equal(16, netG.hop_length)
        -- optG = torch.optim.Adam(netG.parameters(), lr=1e-4, betas=(0.5, 0.9))
        local optG = optim.Adam(netG:parameters(), { lr = 1e-4, betas = { 0.5, 0.9 } })
        local optD = optim.Adam(netD:parameters(), { lr = 1e-4, betas = { 0.5, 0.9 } })

        -- x_pred_t = netG(s_t.cuda())
        local x_pred_t = netG(s_t)
        assert.same({ 2, 1, 1024 }, shape_of(x_pred_t))
        assert_close_list({ REF.x_pred_sum }, { x_pred_t:sum():item() }, 1e-4, "x_pred sum")
        assert_close_list(REF.x_pred_pick, pick(x_pred_t, 8), 1e-4, "x_pred")

        -- with torch.no_grad():
        local s_error = tide.no_grad(function()
            -- s_pred_t = fft(x_pred_t.detach())
            local s_pred_t = fft(x_pred_t:detach())
            -- s_error = F.l1_loss(s_t, s_pred_t).item()
            return F.l1_loss(s_t, s_pred_t):item()
        end)

        -- Train Discriminator
        local D_fake_det = netD(x_pred_t:detach())
        local D_real = netD(x_t)

        -- each scale's feature maps and score (D before its step)
        assert.equal(3, #D_real)
        for i, sc in ipairs(D_real) do
            assert.equal(5, #sc)
            for j, f in ipairs(sc) do
                assert.same(REF.D_shapes[i][j], shape_of(f))
                assert_close_list({ REF.D_sums[i][j] }, { f:sum():item() }, 1e-4,
                    string.format("D_real[%d][%d] sum", i, j))
            end
            assert_close_list(REF.D_score_pick[i], pick(sc[#sc], 4), 1e-4, "score " .. i)
        end

        local loss_D = 0
        -- for scale in D_fake_det: loss_D += F.relu(1 + scale[-1]).mean()
        for _, scale in ipairs(D_fake_det) do
            loss_D = loss_D + F.relu(1 + scale[#scale]):mean()
        end
        -- for scale in D_real: loss_D += F.relu(1 - scale[-1]).mean()
        for _, scale in ipairs(D_real) do
            loss_D = loss_D + F.relu(1 - scale[#scale]):mean()
        end

        netD:zero_grad()
        loss_D:backward()
        optD:step()

        -- Train Generator
        local D_fake = netD(x_pred_t)

        local loss_G = 0
        -- for scale in D_fake: loss_G += -scale[-1].mean()
        for _, scale in ipairs(D_fake) do
            loss_G = loss_G + -scale[#scale]:mean()
        end

        local loss_feat = 0
        -- feat_weights = 4.0 / (args.n_layers_D + 1)
        local feat_weights = 4.0 / (2 + 1)
        -- D_weights = 1.0 / args.num_D
        local D_weights = 1.0 / 3
        local wt = D_weights * feat_weights
        -- for i in range(args.num_D):
        for i = 1, 3 do
            -- for j in range(len(D_fake[i]) - 1):
            for j = 1, #D_fake[i] - 1 do
                -- loss_feat += wt * F.l1_loss(D_fake[i][j], D_real[i][j].detach())
                loss_feat = loss_feat + wt * F.l1_loss(D_fake[i][j], D_real[i][j]:detach())
            end
        end

        netG:zero_grad()
        -- (loss_G + args.lambda_feat * loss_feat).backward()
        -- (Lua reads "f()\n(x)" as one call: the sum is named first)
        local loss_total = loss_G + 10 * loss_feat
        loss_total:backward()
        optG:step()

        local costs = { loss_D:item(), loss_G:item(), loss_feat:item(), s_error }
        for _, v in ipairs(costs) do assert_finite(v, "cost") end
        -- loss_G and loss_feat read D after optD's step
        assert_close_list(REF.losses, costs, 2e-4, "losses")

        -- optG's step: how far the generator's output moved
        local moved = tide.no_grad(function()
            return (netG(s_t) - x_pred_t:detach()):abs():sum():item()
        end)
        assert_close_list({ REF.g_moved }, { moved }, 2e-3, "G moved")
    end)

    it("Generator with the file's ratios [8, 8, 2, 2]: 256 samples a frame", function()
        local g2 = Generator(8, 1, 1)
        assert.equal(256, g2.hop_length)
        local y = g2(tide.randn(2, 8, 4))
        assert.same({ 2, 1, 1024 }, shape_of(y))
        assert.is_true(y:abs():max():item() <= 1)
    end)
end)
