-- ported_scripts96_spec.lua — jik876/hifi-gan's models.py (ResBlock1, ResBlock2 with
-- weight_norm'ed dilated Conv1d, utils.py's init_weights and get_padding, Generator with its
-- weight_norm'ed ConvTranspose1d ups and remove_weight_norm, DiscriminatorP,
-- MultiPeriodDiscriminator, DiscriminatorS with spectral_norm / weight_norm,
-- MultiScaleDiscriminator, feature_loss, discriminator_loss, generator_loss) and train.py's
-- training step (AdamW, the discriminator step on y and y_g_hat:detach(), the generator step),
-- ported line for line at tiny sizes. The Python line stands above each Lua line that differs
-- from it. Sizes differ from the paper's: num_mels 4 (conv_pre's hard-coded 80 reads
-- h.num_mels), upsample_rates {2, 2}, kernels {4, 4}, upsample_initial_channel 8,
-- resblock_kernel_sizes {3}; the discriminators' widths are the tables PW and SW below (32..1024
-- in models.py; the groups stay), MultiPeriodDiscriminator has the periods {2, 3} (models.py:
-- 2, 3, 5, 7, 11), MultiScaleDiscriminator two discriminators and one meanpool (models.py: three
-- and two), and the L1 mel loss is L1 on the waveform (no mel transform). Reference values:
-- PyTorch 1.13 on the same weights (eval mode, and train.py's first two steps).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- from torch.nn.utils import weight_norm, remove_weight_norm, spectral_norm
local weight_norm, remove_weight_norm = nn.utils.weight_norm, nn.utils.remove_weight_norm
local spectral_norm = nn.utils.spectral_norm
local Conv1d, ConvTranspose1d, AvgPool1d, Conv2d = nn.Conv1d, nn.ConvTranspose1d, nn.AvgPool1d,
    nn.Conv2d

local LRELU_SLOPE = 0.1

-- utils.py: def init_weights(m, mean=0.0, std=0.01):
local function init_weights(m, mean, std)
    mean, std = mean or 0.0, std or 0.01
    local classname = m.__class__.__name__
    -- if classname.find("Conv") != -1:
    if classname:find("Conv") then
        m.weight.data:normal_(mean, std)
    end
end

-- utils.py: def get_padding(kernel_size, dilation=1):
local function get_padding(kernel_size, dilation)
    dilation = dilation or 1
    -- return int((kernel_size*dilation - dilation)/2)
    return math.floor((kernel_size * dilation - dilation) / 2)
end

-- class ResBlock1(torch.nn.Module):
local ResBlock1 = nn.Module:extend("ResBlock1")
-- def __init__(self, h, channels, kernel_size=3, dilation=(1, 3, 5)):
function ResBlock1:init(h, channels, kernel_size, dilation)
    kernel_size, dilation = kernel_size or 3, dilation or { 1, 3, 5 }
    self.h = h
    self.convs1 = nn.ModuleList({
        -- weight_norm(Conv1d(channels, channels, kernel_size, 1, dilation=dilation[0],
        --                    padding=get_padding(kernel_size, dilation[0]))),
        weight_norm(Conv1d(channels, channels, kernel_size, 1, { dilation = dilation[1],
            padding = get_padding(kernel_size, dilation[1]) })),
        weight_norm(Conv1d(channels, channels, kernel_size, 1, { dilation = dilation[2],
            padding = get_padding(kernel_size, dilation[2]) })),
        weight_norm(Conv1d(channels, channels, kernel_size, 1, { dilation = dilation[3],
            padding = get_padding(kernel_size, dilation[3]) })),
    })
    self.convs1:apply(init_weights)

    self.convs2 = nn.ModuleList({
        weight_norm(Conv1d(channels, channels, kernel_size, 1, { dilation = 1,
            padding = get_padding(kernel_size, 1) })),
        weight_norm(Conv1d(channels, channels, kernel_size, 1, { dilation = 1,
            padding = get_padding(kernel_size, 1) })),
        weight_norm(Conv1d(channels, channels, kernel_size, 1, { dilation = 1,
            padding = get_padding(kernel_size, 1) })),
    })
    self.convs2:apply(init_weights)
end

function ResBlock1:forward(x)
    -- for c1, c2 in zip(self.convs1, self.convs2):
    for i = 1, #self.convs1 do
        local c1, c2 = self.convs1[i], self.convs2[i]
        local xt = F.leaky_relu(x, LRELU_SLOPE)
        xt = c1(xt)
        xt = F.leaky_relu(xt, LRELU_SLOPE)
        xt = c2(xt)
        x = xt + x
    end
    return x
end

function ResBlock1:remove_weight_norm()
    for _, l in ipairs(self.convs1) do
        remove_weight_norm(l)
    end
    for _, l in ipairs(self.convs2) do
        remove_weight_norm(l)
    end
end

-- class ResBlock2(torch.nn.Module):
local ResBlock2 = nn.Module:extend("ResBlock2")
-- def __init__(self, h, channels, kernel_size=3, dilation=(1, 3)):
function ResBlock2:init(h, channels, kernel_size, dilation)
    kernel_size, dilation = kernel_size or 3, dilation or { 1, 3 }
    self.h = h
    self.convs = nn.ModuleList({
        weight_norm(Conv1d(channels, channels, kernel_size, 1, { dilation = dilation[1],
            padding = get_padding(kernel_size, dilation[1]) })),
        weight_norm(Conv1d(channels, channels, kernel_size, 1, { dilation = dilation[2],
            padding = get_padding(kernel_size, dilation[2]) })),
    })
    self.convs:apply(init_weights)
end

function ResBlock2:forward(x)
    for _, c in ipairs(self.convs) do
        local xt = F.leaky_relu(x, LRELU_SLOPE)
        xt = c(xt)
        x = xt + x
    end
    return x
end

function ResBlock2:remove_weight_norm()
    for _, l in ipairs(self.convs) do
        remove_weight_norm(l)
    end
end

-- class Generator(torch.nn.Module):
local Generator = nn.Module:extend("Generator")
function Generator:init(h)
    self.h = h
    self.num_kernels = #h.resblock_kernel_sizes
    self.num_upsamples = #h.upsample_rates
    -- self.conv_pre = weight_norm(Conv1d(80, h.upsample_initial_channel, 7, 1, padding=3))
    self.conv_pre = weight_norm(Conv1d(h.num_mels, h.upsample_initial_channel, 7, 1,
        { padding = 3 }))
    -- resblock = ResBlock1 if h.resblock == '1' else ResBlock2
    local resblock = h.resblock == "1" and ResBlock1 or ResBlock2

    self.ups = nn.ModuleList()
    -- for i, (u, k) in enumerate(zip(h.upsample_rates, h.upsample_kernel_sizes)):
    for i = 0, #h.upsample_rates - 1 do
        local u, k = h.upsample_rates[i + 1], h.upsample_kernel_sizes[i + 1]
        -- self.ups.append(weight_norm(
        --     ConvTranspose1d(h.upsample_initial_channel//(2**i),
        --                     h.upsample_initial_channel//(2**(i+1)), k, u, padding=(k-u)//2)))
        self.ups:append(weight_norm(
            ConvTranspose1d(math.floor(h.upsample_initial_channel / 2 ^ i),
                math.floor(h.upsample_initial_channel / 2 ^ (i + 1)), k, u,
                { padding = math.floor((k - u) / 2) })))
    end

    self.resblocks = nn.ModuleList()
    local ch
    for i = 0, #self.ups - 1 do
        -- ch = h.upsample_initial_channel//(2**(i+1))
        ch = math.floor(h.upsample_initial_channel / 2 ^ (i + 1))
        -- for j, (k, d) in enumerate(zip(h.resblock_kernel_sizes, h.resblock_dilation_sizes)):
        for j = 1, #h.resblock_kernel_sizes do
            local k, d = h.resblock_kernel_sizes[j], h.resblock_dilation_sizes[j]
            self.resblocks:append(resblock(h, ch, k, d))
        end
    end

    self.conv_post = weight_norm(Conv1d(ch, 1, 7, 1, { padding = 3 }))
    self.ups:apply(init_weights)
    self.conv_post:apply(init_weights)
end

function Generator:forward(x)
    x = self.conv_pre(x)
    -- for i in range(self.num_upsamples):
    for i = 0, self.num_upsamples - 1 do
        x = F.leaky_relu(x, LRELU_SLOPE)
        -- x = self.ups[i](x)
        x = self.ups[i + 1](x)
        local xs = nil
        for j = 1, self.num_kernels do
            if xs == nil then
                -- xs = self.resblocks[i*self.num_kernels+j](x)
                xs = self.resblocks[i * self.num_kernels + j](x)
            else
                -- xs += self.resblocks[i*self.num_kernels+j](x)
                xs:add_(self.resblocks[i * self.num_kernels + j](x))
            end
        end
        x = xs / self.num_kernels
    end
    x = F.leaky_relu(x)
    x = self.conv_post(x)
    x = tide.tanh(x)

    return x
end

function Generator:remove_weight_norm()
    -- print('Removing weight norm...')
    for _, l in ipairs(self.ups) do
        remove_weight_norm(l)
    end
    for _, l in ipairs(self.resblocks) do
        l:remove_weight_norm()
    end
    remove_weight_norm(self.conv_pre)
    remove_weight_norm(self.conv_post)
end

-- the discriminators' widths: models.py's 32, 128, 512, 1024, 1024 and 128, 128, 256, 512,
-- 1024, 1024, 1024
local PW = { 4, 8, 8, 8, 8 }
local SW = { 16, 16, 16, 32, 32, 32, 32 }

-- class DiscriminatorP(torch.nn.Module):
local DiscriminatorP = nn.Module:extend("DiscriminatorP")
-- def __init__(self, period, kernel_size=5, stride=3, use_spectral_norm=False):
function DiscriminatorP:init(period, kernel_size, stride, use_spectral_norm)
    kernel_size, stride = kernel_size or 5, stride or 3
    self.period = period
    -- norm_f = weight_norm if use_spectral_norm == False else spectral_norm
    local norm_f = not use_spectral_norm and weight_norm or spectral_norm
    self.convs = nn.ModuleList({
        -- norm_f(Conv2d(1, 32, (kernel_size, 1), (stride, 1), padding=(get_padding(5, 1), 0))),
        norm_f(Conv2d(1, PW[1], { kernel_size, 1 }, { stride, 1 },
            { padding = { get_padding(5, 1), 0 } })),
        norm_f(Conv2d(PW[1], PW[2], { kernel_size, 1 }, { stride, 1 },
            { padding = { get_padding(5, 1), 0 } })),
        norm_f(Conv2d(PW[2], PW[3], { kernel_size, 1 }, { stride, 1 },
            { padding = { get_padding(5, 1), 0 } })),
        norm_f(Conv2d(PW[3], PW[4], { kernel_size, 1 }, { stride, 1 },
            { padding = { get_padding(5, 1), 0 } })),
        -- norm_f(Conv2d(1024, 1024, (kernel_size, 1), 1, padding=(2, 0))),
        norm_f(Conv2d(PW[4], PW[5], { kernel_size, 1 }, 1, { padding = { 2, 0 } })),
    })
    -- self.conv_post = norm_f(Conv2d(1024, 1, (3, 1), 1, padding=(1, 0)))
    self.conv_post = norm_f(Conv2d(PW[5], 1, { 3, 1 }, 1, { padding = { 1, 0 } }))
end

function DiscriminatorP:forward(x)
    local fmap = {}

    -- 1d to 2d
    -- b, c, t = x.shape
    local b, c, t = unpack(x.shape)
    if t % self.period ~= 0 then -- pad first
        local n_pad = self.period - (t % self.period)
        -- x = F.pad(x, (0, n_pad), "reflect")
        x = F.pad(x, { 0, n_pad }, "reflect")
        t = t + n_pad
    end
    -- x = x.view(b, c, t // self.period, self.period)
    x = x:view(b, c, math.floor(t / self.period), self.period)

    for _, l in ipairs(self.convs) do
        x = l(x)
        x = F.leaky_relu(x, LRELU_SLOPE)
        -- fmap.append(x)
        fmap[#fmap + 1] = x
    end
    x = self.conv_post(x)
    fmap[#fmap + 1] = x
    -- x = torch.flatten(x, 1, -1)
    x = tide.flatten(x, 2, -1)

    return x, fmap
end

-- class MultiPeriodDiscriminator(torch.nn.Module):
local MultiPeriodDiscriminator = nn.Module:extend("MultiPeriodDiscriminator")
function MultiPeriodDiscriminator:init()
    self.discriminators = nn.ModuleList({
        DiscriminatorP(2),
        DiscriminatorP(3),
    })
end

function MultiPeriodDiscriminator:forward(y, y_hat)
    local y_d_rs, y_d_gs, fmap_rs, fmap_gs = {}, {}, {}, {}
    -- for i, d in enumerate(self.discriminators):
    for i, d in ipairs(self.discriminators) do
        local y_d_r, fmap_r = d(y)
        local y_d_g, fmap_g = d(y_hat)
        y_d_rs[i], fmap_rs[i], y_d_gs[i], fmap_gs[i] = y_d_r, fmap_r, y_d_g, fmap_g
    end

    return y_d_rs, y_d_gs, fmap_rs, fmap_gs
end

-- class DiscriminatorS(torch.nn.Module):
local DiscriminatorS = nn.Module:extend("DiscriminatorS")
-- def __init__(self, use_spectral_norm=False):
function DiscriminatorS:init(use_spectral_norm)
    local norm_f = not use_spectral_norm and weight_norm or spectral_norm
    self.convs = nn.ModuleList({
        -- norm_f(Conv1d(1, 128, 15, 1, padding=7)),
        norm_f(Conv1d(1, SW[1], 15, 1, { padding = 7 })),
        -- norm_f(Conv1d(128, 128, 41, 2, groups=4, padding=20)),
        norm_f(Conv1d(SW[1], SW[2], 41, 2, { groups = 4, padding = 20 })),
        norm_f(Conv1d(SW[2], SW[3], 41, 2, { groups = 16, padding = 20 })),
        norm_f(Conv1d(SW[3], SW[4], 41, 4, { groups = 16, padding = 20 })),
        norm_f(Conv1d(SW[4], SW[5], 41, 4, { groups = 16, padding = 20 })),
        norm_f(Conv1d(SW[5], SW[6], 41, 1, { groups = 16, padding = 20 })),
        norm_f(Conv1d(SW[6], SW[7], 5, 1, { padding = 2 })),
    })
    self.conv_post = norm_f(Conv1d(SW[7], 1, 3, 1, { padding = 1 }))
end

function DiscriminatorS:forward(x)
    local fmap = {}
    for _, l in ipairs(self.convs) do
        x = l(x)
        x = F.leaky_relu(x, LRELU_SLOPE)
        fmap[#fmap + 1] = x
    end
    x = self.conv_post(x)
    fmap[#fmap + 1] = x
    x = tide.flatten(x, 2, -1)

    return x, fmap
end

-- class MultiScaleDiscriminator(torch.nn.Module):
local MultiScaleDiscriminator = nn.Module:extend("MultiScaleDiscriminator")
function MultiScaleDiscriminator:init()
    self.discriminators = nn.ModuleList({
        -- DiscriminatorS(use_spectral_norm=True),
        DiscriminatorS(true),
        DiscriminatorS(),
    })
    self.meanpools = nn.ModuleList({
        -- AvgPool1d(4, 2, padding=2)
        AvgPool1d(4, 2, 2),
    })
end

function MultiScaleDiscriminator:forward(y, y_hat)
    local y_d_rs, y_d_gs, fmap_rs, fmap_gs = {}, {}, {}, {}
    for i, d in ipairs(self.discriminators) do
        -- if i != 0:
        if i ~= 1 then
            -- y = self.meanpools[i-1](y)
            y = self.meanpools[i - 1](y)
            y_hat = self.meanpools[i - 1](y_hat)
        end
        local y_d_r, fmap_r = d(y)
        local y_d_g, fmap_g = d(y_hat)
        y_d_rs[i], fmap_rs[i], y_d_gs[i], fmap_gs[i] = y_d_r, fmap_r, y_d_g, fmap_g
    end

    return y_d_rs, y_d_gs, fmap_rs, fmap_gs
end

-- def feature_loss(fmap_r, fmap_g):
local function feature_loss(fmap_r, fmap_g)
    local loss = 0
    -- for dr, dg in zip(fmap_r, fmap_g):
    for i, dr in ipairs(fmap_r) do
        -- for rl, gl in zip(dr, dg):
        for j, rl in ipairs(dr) do
            -- loss += torch.mean(torch.abs(rl - gl))
            loss = loss + tide.mean(tide.abs(rl - fmap_g[i][j]))
        end
    end

    return loss * 2
end

-- def discriminator_loss(disc_real_outputs, disc_generated_outputs):
local function discriminator_loss(disc_real_outputs, disc_generated_outputs)
    local loss = 0
    local r_losses, g_losses = {}, {}
    for i, dr in ipairs(disc_real_outputs) do
        local dg = disc_generated_outputs[i]
        local r_loss = tide.mean((1 - dr) ^ 2)
        local g_loss = tide.mean(dg ^ 2)
        loss = loss + (r_loss + g_loss)
        r_losses[i] = r_loss:item()
        g_losses[i] = g_loss:item()
    end

    return loss, r_losses, g_losses
end

-- def generator_loss(disc_outputs):
local function generator_loss(disc_outputs)
    local loss = 0
    local gen_losses = {}
    for i, dg in ipairs(disc_outputs) do
        local l = tide.mean((1 - dg) ^ 2)
        gen_losses[i] = l
        loss = loss + l
    end

    return loss, gen_losses
end

---------------------------------------------------------------------------------------------
-- the check: PyTorch's weights from a formula over each parameter's 1-based index k in
-- parameters() order (named_parameters'), element j: 0.3 sin(0.9 k + 0.37 j); a spectral_norm's
-- weight_u over its module's index k in modules() order: cos(0.5 k + 0.61 j) normalized, and
-- weight_v = normalize(W^T u) (an arbitrary v makes sigma = u.Wv tiny)
---------------------------------------------------------------------------------------------
local function fill(m)
    tide.no_grad(function()
        for k, p in ipairs(m:parameters()) do
            local j = tide.arange(1, p:numel() + 1, { dtype = tide.float64 })
            p:copy_((0.3 * tide.sin(0.9 * k + 0.37 * j)):view(p.shape))
        end
        for k, mod in ipairs(m:modules()) do
            if mod.weight_u ~= nil then
                local j = tide.arange(1, mod.weight_u:numel() + 1, { dtype = tide.float64 })
                local u = tide.cos(0.5 * k + 0.61 * j)
                mod.weight_u:copy_(u / u:norm())
                local v = mod.weight_orig:view(mod.weight_orig:size(1), -1):t():mv(mod.weight_u)
                mod.weight_v:copy_(v / v:norm())
            end
        end
    end)
end

local function hparams(rb)
    return { resblock = rb, num_mels = 4, upsample_rates = { 2, 2 },
        upsample_kernel_sizes = { 4, 4 }, upsample_initial_channel = 8,
        resblock_kernel_sizes = { 3 },
        -- ResBlock1 reads three dilations (config_v1's [1,3,5]), ResBlock2 two (config_v2's)
        resblock_dilation_sizes = rb == "1" and { { 1, 3, 5 } } or { { 1, 3 } } }
end

-- a Size as a plain list
local function dims(s)
    local t = {}
    for i = 1, #s do
        t[i] = s[i]
    end
    return t
end

local function list(t)
    return t:flatten():tolist()
end

-- a mel of 4 x 6 frames and a waveform of 24 samples (6 frames x the upsampling 2 x 2)
local function inputs()
    local mel = tide.cos(0.3 * tide.arange(4):view(4, 1):float()
        + 0.7 * tide.arange(6):view(1, 6):float()):view(1, 4, 6)
    local y = (0.5 * tide.sin(0.5 * (tide.arange(24):float() + 1))):view(1, 1, 24)
    return mel, y
end

-- PyTorch 1.13's values for the same weights (eval mode)
local GEN_OUT = {
    ["1"] = { -0.27018222, -0.29082793, -0.31126797, -0.3289828, -0.32847053, -0.32881978,
        -0.32891604, -0.328951, -0.32888603, -0.32889, -0.32887754, -0.32890624, -0.32885653,
        -0.32887071, -0.32885483, -0.32885715, -0.32876718, -0.32872707, -0.32862779,
        -0.32881188, -0.32831162, -0.33121613, -0.32658014, -0.31481463 },
    ["2"] = { 0.30734769, 0.30833721, 0.30659968, 0.30234337, 0.30277601, 0.302766, 0.30274746,
        0.30273813, 0.30274475, 0.30274141, 0.30274373, 0.30273679, 0.30274433, 0.30274311,
        0.30274832, 0.30274799, 0.3027631, 0.30279085, 0.30209786, 0.30141443, 0.30206484,
        0.29494441, 0.28812283, 0.28256813 },
}
local MPD = {
    { r = { 0.24129167, 0.24129167 }, g = { 0.24129166, 0.24129166 },
        shapes = { { 1, 4, 4, 2 }, { 1, 8, 2, 2 }, { 1, 8, 1, 2 },
            { 1, 8, 1, 2 }, { 1, 8, 1, 2 }, { 1, 1, 1, 2 } },
        fmap_r = { 8.3284254, -0.16022517, 3.2204049, -0.27875376, 2.6531324, 0.48258334 },
        fmap_g = { 9.9352417, 0.029585049, 3.2243714, -0.27806869, 2.6531496, 0.48258331 } },
    { r = { -0.12951441, -0.12951441, -0.12951441 },
        g = { -0.12951441, -0.12951441, -0.12951441 },
        shapes = { { 1, 4, 3, 3 }, { 1, 8, 1, 3 }, { 1, 8, 1, 3 },
            { 1, 8, 1, 3 }, { 1, 8, 1, 3 }, { 1, 1, 1, 3 } },
        fmap_r = { -0.74641454, 3.3614585, -0.16842474, 4.8070788, -0.46761152, -0.38854325 },
        fmap_g = { -0.67489749, 3.3625629, -0.16848946, 4.8070784, -0.46761179, -0.38854325 } },
    feature_loss = 0.1923025548, disc_loss = 1.926436782, gen_loss = 1.851441145,
}
local MSD = {
    { r = { 1.1699785 }, g = { -1.1001966 },
        shapes = { { 1, 16, 24 }, { 1, 16, 12 }, { 1, 16, 6 }, { 1, 32, 2 },
            { 1, 32, 1 }, { 1, 32, 1 }, { 1, 32, 1 }, { 1, 1, 1 } },
        fmap_r = { 50.055424, 245.8287, 424.24359, 2164.4253,
            554.80511, 37.234734, 82.962265, 1.1699785 },
        fmap_g = { 30.389721, 75.476791, 242.66302, 1353.4501,
            305.47668, 24.682512, 62.461517, -1.1001966 } },
    { r = { -0.0047128722 }, g = { -0.0047128722 },
        shapes = { { 1, 16, 13 }, { 1, 16, 7 }, { 1, 16, 4 }, { 1, 32, 1 },
            { 1, 32, 1 }, { 1, 32, 1 }, { 1, 32, 1 }, { 1, 1, 1 } },
        fmap_r = { 16.560356, 10.386865, 4.7312746, 2.9951262,
            2.5085571, 2.9306607, 2.9052958, -0.0047128722 },
        fmap_g = { 20.665243, 10.404467, 4.729763, 2.995142,
            2.508559, 2.9306607, 2.9052958, -0.0047128722 } },
    feature_loss = 119.4356537, disc_loss = 2.248795033, gen_loss = 5.420273781,
}
-- train.py's first two iterations (train mode: spectral_norm's power iteration runs)
local STEP_LOSSES = { { 3.521987915, 21.42837143 }, { 3.519635201, 21.4033165 } }

local function check_discriminator(want, rs, gs, fmap_rs, fmap_gs, what)
    assert.are.equal(#want, #rs)
    for i, w in ipairs(want) do
        assert_close_list(w.r, list(rs[i]), 1e-4, what .. " y_d_r " .. i)
        assert_close_list(w.g, list(gs[i]), 1e-4, what .. " y_d_g " .. i)
        assert.are.equal(#w.shapes, #fmap_rs[i])
        local sums_r, sums_g = {}, {}
        for l, f in ipairs(fmap_rs[i]) do
            assert.are.same(w.shapes[l], dims(f:size()))
            assert.are.same(w.shapes[l], dims(fmap_gs[i][l]:size()))
            sums_r[l], sums_g[l] = f:sum():item(), fmap_gs[i][l]:sum():item()
        end
        assert_close_list(w.fmap_r, sums_r, 1e-4, what .. " fmap_r " .. i)
        assert_close_list(w.fmap_g, sums_g, 1e-4, what .. " fmap_g " .. i)
    end
end

describe("ported hifi-gan (models.py, train.py)", function()
    it("Generator (ResBlock1 and ResBlock2) gives PyTorch's waveform, the same after "
        .. "remove_weight_norm", function()
        local mel = inputs()
        for _, rb in ipairs({ "1", "2" }) do
            local g = Generator(hparams(rb))
            -- 1 + 3 convs of the Generator, 6 or 2 per ResBlock, each bias, weight_g, weight_v
            assert.are.equal(rb == "1" and 48 or 24, #g:parameters())
            fill(g)
            g:eval()
            local o = g(mel)
            assert.are.same({ 1, 1, 24 }, dims(o:size()))
            assert_close_list(GEN_OUT[rb], list(o), 1e-5, "Generator " .. rb)
            g:remove_weight_norm()
            assert.are.equal(rb == "1" and 32 or 16, #g:parameters())
            assert_close_list(list(o), list(g(mel)), 1e-6, "after remove_weight_norm " .. rb)
        end
    end)

    it("MultiPeriodDiscriminator, MultiScaleDiscriminator and the three losses", function()
        local mel, y = inputs()
        local g = Generator(hparams("1"))
        fill(g)
        g:eval()
        local y_hat = g(mel):detach()
        local mpd, msd = MultiPeriodDiscriminator(), MultiScaleDiscriminator()
        fill(mpd)
        fill(msd)
        mpd:eval()
        msd:eval()
        for _, case in ipairs({ { MPD, mpd, "mpd" }, { MSD, msd, "msd" } }) do
            local want, D, what = unpack(case)
            local rs, gs, frs, fgs = D(y, y_hat)
            check_discriminator(want, rs, gs, frs, fgs, what)
            local loss, r_losses, g_losses = discriminator_loss(rs, gs)
            assert.are.equal(#want, #r_losses)
            assert.are.equal(#want, #g_losses)
            assert_close_list({ want.feature_loss, want.disc_loss, want.gen_loss },
                { feature_loss(frs, fgs):item(), loss:item(), (generator_loss(gs)):item() },
                1e-4, what .. " losses")
        end
    end)

    it("train.py's discriminator and generator steps with AdamW", function()
        local mel, y = inputs()
        local generator = Generator(hparams("1"))
        local mpd, msd = MultiPeriodDiscriminator(), MultiScaleDiscriminator()
        fill(generator)
        fill(mpd)
        fill(msd)
        -- optim_g = torch.optim.AdamW(generator.parameters(), h.learning_rate,
        --                             betas=[h.adam_b1, h.adam_b2])
        local optim_g = optim.AdamW(generator:parameters(), 0.0002, { 0.8, 0.99 })
        -- optim_d = torch.optim.AdamW(itertools.chain(msd.parameters(), mpd.parameters()), ...)
        local d_params = msd:parameters()
        for _, p in ipairs(mpd:parameters()) do
            d_params[#d_params + 1] = p
        end
        local optim_d = optim.AdamW(d_params, 0.0002, { 0.8, 0.99 })
        generator:train()
        mpd:train()
        msd:train()
        local before = generator.conv_post.weight_v:clone()
        for step = 1, 2 do
            local y_g_hat = generator(mel)

            optim_d:zero_grad()

            -- MPD
            -- y_df_hat_r, y_df_hat_g, _, _ = mpd(y, y_g_hat.detach())
            local y_df_hat_r, y_df_hat_g = mpd(y, y_g_hat:detach())
            local loss_disc_f = discriminator_loss(y_df_hat_r, y_df_hat_g)

            -- MSD
            local y_ds_hat_r, y_ds_hat_g = msd(y, y_g_hat:detach())
            local loss_disc_s = discriminator_loss(y_ds_hat_r, y_ds_hat_g)

            local loss_disc_all = loss_disc_s + loss_disc_f

            loss_disc_all:backward()
            optim_d:step()

            -- Generator
            optim_g:zero_grad()

            -- L1 Mel-Spectrogram Loss
            -- loss_mel = F.l1_loss(y_mel, y_g_hat_mel) * 45   (here on the waveform: no mel)
            local loss_mel = F.l1_loss(y, y_g_hat) * 45

            local fmap_f_r, fmap_f_g, fmap_s_r, fmap_s_g
            -- y_df_hat_r, y_df_hat_g, fmap_f_r, fmap_f_g = mpd(y, y_g_hat)
            y_df_hat_r, y_df_hat_g, fmap_f_r, fmap_f_g = mpd(y, y_g_hat)
            y_ds_hat_r, y_ds_hat_g, fmap_s_r, fmap_s_g = msd(y, y_g_hat)
            local loss_fm_f = feature_loss(fmap_f_r, fmap_f_g)
            local loss_fm_s = feature_loss(fmap_s_r, fmap_s_g)
            local loss_gen_f = generator_loss(y_df_hat_g)
            local loss_gen_s = generator_loss(y_ds_hat_g)
            local loss_gen_all = loss_gen_s + loss_gen_f + loss_fm_s + loss_fm_f + loss_mel

            loss_gen_all:backward()
            optim_g:step()

            assert_finite(loss_disc_all:item(), "loss_disc_all")
            assert_finite(loss_gen_all:item(), "loss_gen_all")
            assert_close_list(STEP_LOSSES[step], { loss_disc_all:item(), loss_gen_all:item() },
                1e-4, "step " .. step)
        end
        -- the generator's weight_v moved
        assert.is_true((generator.conv_post.weight_v - before):abs():max():item() > 1e-5)
    end)
end)
