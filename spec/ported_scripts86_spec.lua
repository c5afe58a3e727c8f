-- ported_scripts86_spec.lua — CompVis/stable-diffusion's autoencoder:
-- ldm/modules/diffusionmodules/model.py (nonlinearity, Normalize, Upsample, Downsample,
-- ResnetBlock, AttnBlock, make_attn, Encoder, Decoder), ldm/modules/distributions/
-- distributions.py (DiagonalGaussianDistribution) and ldm/models/autoencoder.py's AutoencoderKL
-- (encode / decode / forward, without the Lightning parts: the loss is a plain L1 reconstruction
-- + 1e-6 * kl, 2 Adam steps), ported line for line at tiny sizes (ch 8, ch_mult (1, 2), one res
-- block, attention at 8x8, z_channels 2) on fixed data. The Python line stands above each Lua
-- line that differs from it. Dims are 1-based; i_level / i_block stay 0-based as in model.py
-- (they name modules), indexing adds 1.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

---------------------------------------------------------------------------------------------
-- ldm/modules/diffusionmodules/model.py
---------------------------------------------------------------------------------------------
-- def nonlinearity(x):
local function nonlinearity(x)
    -- swish
    -- return x*torch.sigmoid(x)
    return x * tide.sigmoid(x)
end

-- tiny-size change: model.py's default num_groups=32 divides neither 8 nor 16 channels, so the
-- default here is 4 (the PyTorch check below makes the same change)
-- def Normalize(in_channels, num_groups=32):
local function Normalize(in_channels, num_groups)
    num_groups = num_groups or 4
    -- return torch.nn.GroupNorm(num_groups=num_groups, num_channels=in_channels, eps=1e-6,
    --                           affine=True)
    return nn.GroupNorm(num_groups, in_channels, { eps = 1e-6, affine = true })
end

-- class Upsample(nn.Module):
local Upsample = nn.Module:extend("Upsample")
function Upsample:init(in_channels, with_conv)
    self.with_conv = with_conv
    if self.with_conv then
        -- self.conv = torch.nn.Conv2d(in_channels, in_channels, kernel_size=3, stride=1,
        --                             padding=1)
        self.conv = nn.Conv2d(in_channels, in_channels,
            { kernel_size = 3, stride = 1, padding = 1 })
    end
end

function Upsample:forward(x)
    -- x = torch.nn.functional.interpolate(x, scale_factor=2.0, mode="nearest")
    x = F.interpolate(x, { scale_factor = 2.0, mode = "nearest" })
    if self.with_conv then
        x = self.conv(x)
    end
    return x
end

-- class Downsample(nn.Module):
local Downsample = nn.Module:extend("Downsample")
function Downsample:init(in_channels, with_conv)
    self.with_conv = with_conv
    if self.with_conv then
        -- no asymmetric padding in torch conv, must do it ourselves
        -- self.conv = torch.nn.Conv2d(in_channels, in_channels, kernel_size=3, stride=2,
        --                             padding=0)
        self.conv = nn.Conv2d(in_channels, in_channels,
            { kernel_size = 3, stride = 2, padding = 0 })
    end
end

function Downsample:forward(x)
    if self.with_conv then
        -- pad = (0,1,0,1)
        local pad = { 0, 1, 0, 1 }
        -- x = torch.nn.functional.pad(x, pad, mode="constant", value=0)
        x = F.pad(x, pad, { mode = "constant", value = 0 })
        x = self.conv(x)
    else
        -- x = torch.nn.functional.avg_pool2d(x, kernel_size=2, stride=2)
        x = F.avg_pool2d(x, { kernel_size = 2, stride = 2 })
    end
    return x
end

-- class ResnetBlock(nn.Module):
local ResnetBlock = nn.Module:extend("ResnetBlock")
-- def __init__(self, *, in_channels, out_channels=None, conv_shortcut=False,
--              dropout, temb_channels=512):
function ResnetBlock:init(opts)
    local in_channels, out_channels = opts.in_channels, opts.out_channels
    local conv_shortcut, dropout = opts.conv_shortcut or false, opts.dropout
    local temb_channels = opts.temb_channels or 512
    self.in_channels = in_channels
    -- out_channels = in_channels if out_channels is None else out_channels
    if out_channels == nil then out_channels = in_channels end
    self.out_channels = out_channels
    self.use_conv_shortcut = conv_shortcut

    self.norm1 = Normalize(in_channels)
    -- self.conv1 = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=1, padding=1)
    self.conv1 = nn.Conv2d(in_channels, out_channels, { kernel_size = 3, stride = 1, padding = 1 })
    if temb_channels > 0 then
        -- self.temb_proj = torch.nn.Linear(temb_channels, out_channels)
        self.temb_proj = nn.Linear(temb_channels, out_channels)
    end
    self.norm2 = Normalize(out_channels)
    -- self.dropout = torch.nn.Dropout(dropout)
    self.dropout = nn.Dropout(dropout)
    -- self.conv2 = torch.nn.Conv2d(out_channels, out_channels, kernel_size=3, stride=1,
    --                              padding=1)
    self.conv2 = nn.Conv2d(out_channels, out_channels,
        { kernel_size = 3, stride = 1, padding = 1 })
    if self.in_channels ~= self.out_channels then
        if self.use_conv_shortcut then
            -- self.conv_shortcut = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3,
            --                                      stride=1, padding=1)
            self.conv_shortcut = nn.Conv2d(in_channels, out_channels,
                { kernel_size = 3, stride = 1, padding = 1 })
        else
            -- self.nin_shortcut = torch.nn.Conv2d(in_channels, out_channels, kernel_size=1,
            --                                     stride=1, padding=0)
            self.nin_shortcut = nn.Conv2d(in_channels, out_channels,
                { kernel_size = 1, stride = 1, padding = 0 })
        end
    end
end

function ResnetBlock:forward(x, temb)
    local h = x
    h = self.norm1(h)
    h = nonlinearity(h)
    h = self.conv1(h)

    if temb ~= nil then
        -- h = h + self.temb_proj(nonlinearity(temb))[:,:,None,None]
        h = h + self.temb_proj(nonlinearity(temb))[{ {}, {}, tide.newaxis, tide.newaxis }]
    end

    h = self.norm2(h)
    h = nonlinearity(h)
    h = self.dropout(h)
    h = self.conv2(h)

    if self.in_channels ~= self.out_channels then
        if self.use_conv_shortcut then
            x = self.conv_shortcut(x)
        else
            x = self.nin_shortcut(x)
        end
    end

    return x + h
end

-- class AttnBlock(nn.Module):
local AttnBlock = nn.Module:extend("AttnBlock")
function AttnBlock:init(in_channels)
    self.in_channels = in_channels

    self.norm = Normalize(in_channels)
    -- self.q = torch.nn.Conv2d(in_channels, in_channels, kernel_size=1, stride=1, padding=0)
    self.q = nn.Conv2d(in_channels, in_channels, { kernel_size = 1, stride = 1, padding = 0 })
    -- self.k = torch.nn.Conv2d(in_channels, in_channels, kernel_size=1, stride=1, padding=0)
    self.k = nn.Conv2d(in_channels, in_channels, { kernel_size = 1, stride = 1, padding = 0 })
    -- self.v = torch.nn.Conv2d(in_channels, in_channels, kernel_size=1, stride=1, padding=0)
    self.v = nn.Conv2d(in_channels, in_channels, { kernel_size = 1, stride = 1, padding = 0 })
    -- self.proj_out = torch.nn.Conv2d(in_channels, in_channels, kernel_size=1, stride=1,
    --                                 padding=0)
    self.proj_out = nn.Conv2d(in_channels, in_channels,
        { kernel_size = 1, stride = 1, padding = 0 })
end

function AttnBlock:forward(x)
    local h_ = x
    h_ = self.norm(h_)
    local q = self.q(h_)
    local k = self.k(h_)
    local v = self.v(h_)

    -- compute attention
    -- b,c,h,w = q.shape
    local b, c, h, w = unpack(q.shape)
    q = q:reshape(b, c, h * w)
    -- q = q.permute(0,2,1)   # b,hw,c
    q = q:permute(1, 3, 2)
    k = k:reshape(b, c, h * w) -- b,c,hw
    -- w_ = torch.bmm(q,k)     # b,hw,hw    w[b,i,j]=sum_c q[b,i,c]k[b,c,j]
    local w_ = tide.bmm(q, k)
    -- w_ = w_ * (int(c)**(-0.5))
    w_ = w_ * (math.floor(c) ^ (-0.5))
    -- w_ = torch.nn.functional.softmax(w_, dim=2)
    w_ = F.softmax(w_, { dim = 3 })

    -- attend to values
    v = v:reshape(b, c, h * w)
    -- w_ = w_.permute(0,2,1)   # b,hw,hw (first hw of k, second of q)
    w_ = w_:permute(1, 3, 2)
    -- h_ = torch.bmm(v,w_)     # b, c,hw (hw of q) h_[b,c,j] = sum_i v[b,c,i] w_[b,i,j]
    h_ = tide.bmm(v, w_)
    h_ = h_:reshape(b, c, h, w)

    h_ = self.proj_out(h_)

    return x + h_
end

-- def make_attn(in_channels, attn_type="vanilla"):
local function make_attn(in_channels, attn_type)
    attn_type = attn_type or "vanilla"
    -- assert attn_type in ["vanilla", "linear", "none"], f'attn_type {attn_type} unknown'
    assert(attn_type == "vanilla" or attn_type == "linear" or attn_type == "none",
        "attn_type " .. tostring(attn_type) .. " unknown")
    -- (model.py prints "making attention of type ..." here; left out of the test's output)
    if attn_type == "vanilla" then
        return AttnBlock(in_channels)
    elseif attn_type == "none" then
        return nn.Identity(in_channels)
    end
    -- GAP: not ported: LinAttnBlock (ldm/modules/attention.py's LinearAttention, einops)
    error("linear attention is not ported here")
end

-- (1,)+tuple(ch_mult)
local function one_plus(ch_mult)
    local t = { 1 }
    for _, m in ipairs(ch_mult) do t[#t + 1] = m end
    return t
end

-- curr_res in attn_resolutions
local function contains(list, x)
    for _, v in ipairs(list) do
        if v == x then return true end
    end
    return false
end

-- class Encoder(nn.Module):
local Encoder = nn.Module:extend("Encoder")
-- def __init__(self, *, ch, out_ch, ch_mult=(1,2,4,8), num_res_blocks,
--              attn_resolutions, dropout=0.0, resamp_with_conv=True, in_channels,
--              resolution, z_channels, double_z=True, use_linear_attn=False, attn_type="vanilla",
--              **ignore_kwargs):
function Encoder:init(o)
    local ch, ch_mult, num_res_blocks = o.ch, o.ch_mult or { 1, 2, 4, 8 }, o.num_res_blocks
    local attn_resolutions, dropout = o.attn_resolutions, o.dropout or 0.0
    local resamp_with_conv = o.resamp_with_conv ~= false
    local double_z, attn_type = o.double_z ~= false, o.attn_type or "vanilla"
    if o.use_linear_attn then attn_type = "linear" end
    self.ch = ch
    self.temb_ch = 0
    self.num_resolutions = #ch_mult
    self.num_res_blocks = num_res_blocks
    self.resolution = o.resolution
    self.in_channels = o.in_channels

    -- downsampling
    -- self.conv_in = torch.nn.Conv2d(in_channels, self.ch, kernel_size=3, stride=1, padding=1)
    self.conv_in = nn.Conv2d(o.in_channels, self.ch, { kernel_size = 3, stride = 1, padding = 1 })

    local curr_res = o.resolution
    -- in_ch_mult = (1,)+tuple(ch_mult)
    local in_ch_mult = one_plus(ch_mult)
    self.in_ch_mult = in_ch_mult
    self.down = nn.ModuleList()
    local block_in
    -- for i_level in range(self.num_resolutions):
    for i_level = 0, self.num_resolutions - 1 do
        local block = nn.ModuleList()
        local attn = nn.ModuleList()
        -- block_in = ch*in_ch_mult[i_level]
        block_in = ch * in_ch_mult[i_level + 1]
        -- block_out = ch*ch_mult[i_level]
        local block_out = ch * ch_mult[i_level + 1]
        for _ = 0, self.num_res_blocks - 1 do
            -- block.append(ResnetBlock(in_channels=block_in, out_channels=block_out,
            --                          temb_channels=self.temb_ch, dropout=dropout))
            block:append(ResnetBlock({ in_channels = block_in, out_channels = block_out,
                temb_channels = self.temb_ch, dropout = dropout }))
            block_in = block_out
            if contains(attn_resolutions, curr_res) then
                attn:append(make_attn(block_in, attn_type))
            end
        end
        local down = nn.Module()
        down.block = block
        down.attn = attn
        if i_level ~= self.num_resolutions - 1 then
            down.downsample = Downsample(block_in, resamp_with_conv)
            -- curr_res = curr_res // 2
            curr_res = math.floor(curr_res / 2)
        end
        self.down:append(down)
    end

    -- middle
    self.mid = nn.Module()
    self.mid.block_1 = ResnetBlock({ in_channels = block_in, out_channels = block_in,
        temb_channels = self.temb_ch, dropout = dropout })
    self.mid.attn_1 = make_attn(block_in, attn_type)
    self.mid.block_2 = ResnetBlock({ in_channels = block_in, out_channels = block_in,
        temb_channels = self.temb_ch, dropout = dropout })

    -- end
    self.norm_out = Normalize(block_in)
    -- self.conv_out = torch.nn.Conv2d(block_in, 2*z_channels if double_z else z_channels,
    --                                 kernel_size=3, stride=1, padding=1)
    self.conv_out = nn.Conv2d(block_in, double_z and 2 * o.z_channels or o.z_channels,
        { kernel_size = 3, stride = 1, padding = 1 })
end

function Encoder:forward(x)
    -- timestep embedding
    local temb = nil

    -- downsampling
    local hs = { self.conv_in(x) }
    for i_level = 0, self.num_resolutions - 1 do
        for i_block = 0, self.num_res_blocks - 1 do
            -- h = self.down[i_level].block[i_block](hs[-1], temb)
            local h = self.down[i_level + 1].block[i_block + 1](hs[#hs], temb)
            -- if len(self.down[i_level].attn) > 0:
            if #self.down[i_level + 1].attn > 0 then
                h = self.down[i_level + 1].attn[i_block + 1](h)
            end
            hs[#hs + 1] = h
        end
        if i_level ~= self.num_resolutions - 1 then
            -- hs.append(self.down[i_level].downsample(hs[-1]))
            hs[#hs + 1] = self.down[i_level + 1].downsample(hs[#hs])
        end
    end

    -- middle
    local h = hs[#hs]
    h = self.mid.block_1(h, temb)
    h = self.mid.attn_1(h)
    h = self.mid.block_2(h, temb)

    -- end
    h = self.norm_out(h)
    h = nonlinearity(h)
    h = self.conv_out(h)
    return h
end

-- class Decoder(nn.Module):
local Decoder = nn.Module:extend("Decoder")
-- def __init__(self, *, ch, out_ch, ch_mult=(1,2,4,8), num_res_blocks,
--              attn_resolutions, dropout=0.0, resamp_with_conv=True, in_channels,
--              resolution, z_channels, give_pre_end=False, tanh_out=False, use_linear_attn=False,
--              attn_type="vanilla", **ignorekwargs):
function Decoder:init(o)
    local ch, ch_mult, num_res_blocks = o.ch, o.ch_mult or { 1, 2, 4, 8 }, o.num_res_blocks
    local attn_resolutions, dropout = o.attn_resolutions, o.dropout or 0.0
    local resamp_with_conv = o.resamp_with_conv ~= false
    local attn_type = o.attn_type or "vanilla"
    if o.use_linear_attn then attn_type = "linear" end
    self.ch = ch
    self.temb_ch = 0
    self.num_resolutions = #ch_mult
    self.num_res_blocks = num_res_blocks
    self.resolution = o.resolution
    self.in_channels = o.in_channels
    self.give_pre_end = o.give_pre_end or false
    self.tanh_out = o.tanh_out or false

    -- compute in_ch_mult, block_in and curr_res at lowest res
    -- block_in = ch*ch_mult[self.num_resolutions-1]
    local block_in = ch * ch_mult[self.num_resolutions]
    -- curr_res = resolution // 2**(self.num_resolutions-1)
    local curr_res = math.floor(o.resolution / 2 ^ (self.num_resolutions - 1))
    -- self.z_shape = (1,z_channels,curr_res,curr_res)
    self.z_shape = { 1, o.z_channels, curr_res, curr_res }
    -- (model.py prints "Working with z of shape ..." here; left out of the test's output)

    -- z to block_in
    -- self.conv_in = torch.nn.Conv2d(z_channels, block_in, kernel_size=3, stride=1, padding=1)
    self.conv_in = nn.Conv2d(o.z_channels, block_in, { kernel_size = 3, stride = 1, padding = 1 })

    -- middle
    self.mid = nn.Module()
    self.mid.block_1 = ResnetBlock({ in_channels = block_in, out_channels = block_in,
        temb_channels = self.temb_ch, dropout = dropout })
    self.mid.attn_1 = make_attn(block_in, attn_type)
    self.mid.block_2 = ResnetBlock({ in_channels = block_in, out_channels = block_in,
        temb_channels = self.temb_ch, dropout = dropout })

    -- upsampling
    self.up = nn.ModuleList()
    -- for i_level in reversed(range(self.num_resolutions)):
    for i_level = self.num_resolutions - 1, 0, -1 do
        local block = nn.ModuleList()
        local attn = nn.ModuleList()
        -- block_out = ch*ch_mult[i_level]
        local block_out = ch * ch_mult[i_level + 1]
        for _ = 0, self.num_res_blocks do
            block:append(ResnetBlock({ in_channels = block_in, out_channels = block_out,
                temb_channels = self.temb_ch, dropout = dropout }))
            block_in = block_out
            if contains(attn_resolutions, curr_res) then
                attn:append(make_attn(block_in, attn_type))
            end
        end
        local up = nn.Module()
        up.block = block
        up.attn = attn
        if i_level ~= 0 then
            up.upsample = Upsample(block_in, resamp_with_conv)
            curr_res = curr_res * 2
        end
        -- self.up.insert(0, up) # prepend to get consistent order
        self.up:insert(1, up)
    end

    -- end
    self.norm_out = Normalize(block_in)
    -- self.conv_out = torch.nn.Conv2d(block_in, out_ch, kernel_size=3, stride=1, padding=1)
    self.conv_out = nn.Conv2d(block_in, o.out_ch, { kernel_size = 3, stride = 1, padding = 1 })
end

function Decoder:forward(z)
    self.last_z_shape = z.shape

    -- timestep embedding
    local temb = nil

    -- z to block_in
    local h = self.conv_in(z)

    -- middle
    h = self.mid.block_1(h, temb)
    h = self.mid.attn_1(h)
    h = self.mid.block_2(h, temb)

    -- upsampling
    for i_level = self.num_resolutions - 1, 0, -1 do
        for i_block = 0, self.num_res_blocks do
            -- h = self.up[i_level].block[i_block](h, temb)
            h = self.up[i_level + 1].block[i_block + 1](h, temb)
            if #self.up[i_level + 1].attn > 0 then
                h = self.up[i_level + 1].attn[i_block + 1](h)
            end
        end
        if i_level ~= 0 then
            h = self.up[i_level + 1].upsample(h)
        end
    end

    -- end
    if self.give_pre_end then
        return h
    end

    h = self.norm_out(h)
    h = nonlinearity(h)
    h = self.conv_out(h)
    if self.tanh_out then
        h = tide.tanh(h)
    end
    return h
end

---------------------------------------------------------------------------------------------
-- ldm/modules/distributions/distributions.py
---------------------------------------------------------------------------------------------
-- class DiagonalGaussianDistribution(object):
local DiagonalGaussianDistribution = ported.class("DiagonalGaussianDistribution")
-- def __init__(self, parameters, deterministic=False):
function DiagonalGaussianDistribution:__init__(parameters, deterministic)
    self.parameters = parameters
    -- self.mean, self.logvar = torch.chunk(parameters, 2, dim=1)
    self.mean, self.logvar = unpack(tide.chunk(parameters, 2, { dim = 2 }))
    self.logvar = tide.clamp(self.logvar, -30.0, 20.0)
    self.deterministic = deterministic or false
    self.std = tide.exp(0.5 * self.logvar)
    self.var = tide.exp(self.logvar)
    if self.deterministic then
        -- self.var = self.std = torch.zeros_like(self.mean).to(device=self.parameters.device)
        self.std = tide.zeros_like(self.mean):to({ device = self.parameters.device })
        self.var = self.std
    end
end

-- noise: the check's addition, so that PyTorch and tide draw the same sample
function DiagonalGaussianDistribution:sample(noise)
    -- x = self.mean + self.std * torch.randn(self.mean.shape).to(device=self.parameters.device)
    noise = noise or tide.randn(self.mean.shape):to({ device = self.parameters.device })
    local x = self.mean + self.std * noise
    return x
end

function DiagonalGaussianDistribution:kl(other)
    if self.deterministic then
        -- return torch.Tensor([0.])
        return tide.Tensor({ 0. })
    end
    if other == nil then
        -- return 0.5 * torch.sum(torch.pow(self.mean, 2)
        --                        + self.var - 1.0 - self.logvar,
        --                        dim=[1, 2, 3])
        return 0.5 * tide.sum(tide.pow(self.mean, 2) + self.var - 1.0 - self.logvar,
            { dim = { 2, 3, 4 } })
    end
    -- return 0.5 * torch.sum(
    --     torch.pow(self.mean - other.mean, 2) / other.var
    --     + self.var / other.var - 1.0 - self.logvar + other.logvar,
    --     dim=[1, 2, 3])
    return 0.5 * tide.sum(
        tide.pow(self.mean - other.mean, 2) / other.var
        + self.var / other.var - 1.0 - self.logvar + other.logvar,
        { dim = { 2, 3, 4 } })
end

-- def nll(self, sample, dims=[1,2,3]):
function DiagonalGaussianDistribution:nll(sample, dims)
    dims = dims or { 2, 3, 4 }
    if self.deterministic then
        return tide.Tensor({ 0. })
    end
    -- logtwopi = np.log(2.0 * np.pi)
    local logtwopi = math.log(2.0 * math.pi)
    -- return 0.5 * torch.sum(
    --     logtwopi + self.logvar + torch.pow(sample - self.mean, 2) / self.var,
    --     dim=dims)
    return 0.5 * tide.sum(
        logtwopi + self.logvar + tide.pow(sample - self.mean, 2) / self.var,
        { dim = dims })
end

function DiagonalGaussianDistribution:mode()
    return self.mean
end

---------------------------------------------------------------------------------------------
-- ldm/models/autoencoder.py (AutoencoderKL without pl.LightningModule, the loss config,
-- checkpoints and logging)
---------------------------------------------------------------------------------------------
-- class AutoencoderKL(pl.LightningModule):
local AutoencoderKL = nn.Module:extend("AutoencoderKL")
-- def __init__(self, ddconfig, lossconfig, embed_dim, ...):
function AutoencoderKL:init(ddconfig, embed_dim)
    -- self.encoder = Encoder(**ddconfig)
    self.encoder = Encoder(ddconfig)
    -- self.decoder = Decoder(**ddconfig)
    self.decoder = Decoder(ddconfig)
    -- assert ddconfig["double_z"]
    assert(ddconfig.double_z)
    -- self.quant_conv = torch.nn.Conv2d(2*ddconfig["z_channels"], 2*embed_dim, 1)
    self.quant_conv = nn.Conv2d(2 * ddconfig.z_channels, 2 * embed_dim, 1)
    -- self.post_quant_conv = torch.nn.Conv2d(embed_dim, ddconfig["z_channels"], 1)
    self.post_quant_conv = nn.Conv2d(embed_dim, ddconfig.z_channels, 1)
    self.embed_dim = embed_dim
end

function AutoencoderKL:encode(x)
    local h = self.encoder(x)
    local moments = self.quant_conv(h)
    local posterior = DiagonalGaussianDistribution(moments)
    return posterior
end

function AutoencoderKL:decode(z)
    z = self.post_quant_conv(z)
    local dec = self.decoder(z)
    return dec
end

-- def forward(self, input, sample_posterior=True):   (noise: the check's, passed to sample)
function AutoencoderKL:forward(input, sample_posterior, noise)
    if sample_posterior == nil then sample_posterior = true end
    local posterior = self:encode(input)
    local z
    if sample_posterior then
        z = posterior:sample(noise)
    else
        z = posterior:mode()
    end
    local dec = self:decode(z)
    return dec, posterior
end

---------------------------------------------------------------------------------------------
-- the check: PyTorch 1.13's values for the same weights (0.2 sin(0.37 j + 1.1 k) for parameter
-- k in named_parameters order, element j; GroupNorm weights 1 + that) and inputs
-- (sin(a j) cos(b j)), from the same source lines with num_groups=4, eval mode
---------------------------------------------------------------------------------------------
local function set_weights(m)
    tide.no_grad(function()
        for k, np in ipairs(m:named_parameters()) do
            local name, p = np[1], np[2]
            local j = tide.arange(0, p:numel(), { dtype = tide.float64 })
            local v = (j * 0.37 + 1.1 * k):sin() * 0.2
            if name:find("norm") and name:sub(-6) == "weight" then v = v + 1.0 end
            p:copy_(v:view(p.shape):float())
        end
    end)
end

local function pixels(shape, a, b)
    a, b = a or 0.3, b or 0.11
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    local j = tide.arange(0, n, { dtype = tide.float64 })
    return ((j * a):sin() * (j * b):cos()):view(unpack(shape)):float()
end

-- every step-th entry of t flattened (Python's t.reshape(-1)[::step]) and the sum of all
local function pick(t, step)
    local flat = t:detach():reshape(-1):double()
    return flat[{ { 1, -1, step } }]:totable(), flat:sum():item()
end

local function check(want, want_sum, t, step, what)
    local got, sum = pick(t, step)
    assert_close_list(want, got, 1e-4, what)
    assert(ported.close(sum, want_sum, 1e-4), what .. " sum " .. sum .. ", PyTorch " .. want_sum)
end

local DDCONFIG = { double_z = true, z_channels = 2, resolution = 16, in_channels = 3, out_ch = 3,
    ch = 8, ch_mult = { 1, 2 }, num_res_blocks = 1, attn_resolutions = { 8 }, dropout = 0.0 }

describe("CompVis/stable-diffusion ldm autoencoder", function()
    it("AttnBlock, Downsample (conv and avg_pool2d) and a conv_shortcut ResnetBlock", function()
        local a = AttnBlock(8)
        set_weights(a)
        a:eval()
        check({ -0.134329259, 0.135656163, 0.392439067, 0.511876583 }, -2.58297178,
            a(pixels({ 1, 8, 4, 4 })), 32, "AttnBlock")
        local d = Downsample(8, true)
        set_weights(d)
        local y = d(pixels({ 1, 8, 5, 5 }))
        assert.are.same({ 1, 8, 2, 2 }, y:size())
        check({ 0.356602758, 0.908406854, -0.053238865, -0.845581114, -0.112392023, 0.653104186,
            -0.078709006, -0.995882511 }, -0.862576097, y, 4, "Downsample conv")
        d = Downsample(8, false)
        assert.are.equal(0, #d:parameters())
        check({ 0.496846735, 0.153339207, 0.458059669, 0.242225632, 0.314394683, 0.238573536,
            0.084968269, 0.167570621 }, 0.681365954, d(pixels({ 1, 8, 4, 4 })), 4,
            "Downsample avg_pool2d")
        local r = ResnetBlock({ in_channels = 8, out_channels = 16, conv_shortcut = true,
            dropout = 0.0, temb_channels = 0 })
        assert.is_nil(r.nin_shortcut)
        assert.are.same({ 16, 8, 3, 3 }, r.conv_shortcut.weight:size())
        set_weights(r)
        r:eval()
        check({ 0.807186723, 0.024209619, -0.433045924, -0.811548173 }, 2.89775316,
            r(pixels({ 1, 8, 4, 4 }), nil), 64, "ResnetBlock conv_shortcut")
    end)

    it("AutoencoderKL: moments, the posterior's mode / std / kl / nll / sample, decode", function()
        local m = AutoencoderKL(DDCONFIG, 2)
        local named = m:named_parameters()
        local numel = 0
        for _, np in ipairs(named) do numel = numel + np[2]:numel() end
        assert.are.equal(154, #named)
        assert.are.equal(46137, numel)
        -- attention only at 8x8: down.1 (after the downsample) and up.1, and the mids
        assert.are.equal(0, #m.encoder.down[1].attn)
        assert.are.equal(1, #m.encoder.down[2].attn)
        assert.are.equal(0, #m.decoder.up[1].attn)
        assert.are.equal(2, #m.decoder.up[2].attn)
        assert.are.same({ 1, 2, 8, 8 }, m.decoder.z_shape)
        set_weights(m)
        m:eval()
        local x = pixels({ 2, 3, 16, 16 })
        local post = m:encode(x)
        assert.are.same({ 2, 4, 8, 8 }, post.parameters:size())
        check({ 0.055404022, -0.050983489, -0.359254062, -0.347754508, 0.254629195,
            -0.133122697, -0.573374629, -0.304444611 }, -78.6907192, post.parameters, 64,
            "moments")
        check({ 0.055404022, -0.050983489, 0.254629195, -0.133122697 }, -73.3876653,
            post:mode(), 64, "mode")
        check({ 0.835581779, 0.84040004, 0.750746429, 0.858797312 }, 262.502204, post.std, 64,
            "std")
        check({ 33.1014404, 31.3705997 }, 64.4720402, post:kl(), 1, "kl")
        local other = DiagonalGaussianDistribution(pixels({ 2, 4, 8, 8 }, 0.2, 0.05))
        check({ 55.1008339, 53.6206856 }, 108.721519, post:kl(other), 1, "kl(other)")
        local noise = pixels({ 2, 2, 8, 8 }, 0.7, 0.13)
        local z = post:sample(noise)
        check({ 0.055404022, -0.326485753, -0.19203198, 0.404408336 }, -72.8887852, z, 64,
            "sample")
        check({ 133.038528, 131.279953 }, 264.318481, post:nll(z), 1, "nll")
        local nll2 = post:nll(z, { 2, 3 })
        assert.are.same({ 2, 8 }, nll2:size())
        check({ 15.9678335, 17.3928242, 16.2252922, 16.9939747, 16.2165222, 15.7313118 },
            264.318484, nll2, 3, "nll dims [1, 2]")
        -- an unseeded sample has the mean's shape and differs from the mode
        local s = post:sample()
        assert.are.same({ 2, 2, 8, 8 }, s:size())
        assert.is_true((s - post:mode()):abs():max():item() > 0)
        -- deterministic: std and var zero, kl and nll [0.]
        local det = DiagonalGaussianDistribution(post.parameters, true)
        assert.are.equal(0, det.std:abs():max():item())
        assert.are.same({ 0 }, det:kl():totable())
        assert.are.same({ 0 }, det:nll(z):totable())

        local dec = m:decode(post:mode())
        assert.are.same({ 2, 3, 16, 16 }, dec:size())
        check({ 0.657064795, -0.240630656, 0.298488379, -0.910486102, -2.04684997, 0.706816673,
            0.081205241, -0.604085326, 1.13410735, 0.774829388, -0.239568889, -2.18268108,
            -0.084578335, 0.472404271, -0.231654853, 0.545660615 }, 192.135606, dec, 97,
            "decoder output")
        -- forward with sample_posterior=False decodes the mode
        local dec2, post2 = m(x, false)
        assert_close_list(pick(dec, 97), pick(dec2, 97), 1e-6, "forward(mode)")
        assert.are.same({ 2, 2, 8, 8 }, post2:mode():size())
        m.decoder.give_pre_end = true
        local pre = m:decode(post:mode())
        assert.are.same({ 2, 8, 16, 16 }, pre:size())
        check({ 0.64719367, -2.95902634, -6.57942247, -5.09002972, 1.02069831, 2.98414779,
            -0.932116032, -1.08115804, 1.53119135, -1.77523863, -5.8781538, -3.14432216,
            1.69931138, 1.96938705, -0.417934954, -0.821273327 }, -2785.02264, pre, 257,
            "give_pre_end")
    end)

    it("trains: L1 reconstruction + 1e-6 * kl, 2 Adam steps, PyTorch's losses", function()
        local m = AutoencoderKL(DDCONFIG, 2)
        set_weights(m)
        m:train()
        local x = pixels({ 1, 3, 16, 16 })
        local noise = pixels({ 1, 2, 8, 8 }, 0.7, 0.13)
        local opt = optim.Adam(m:parameters(), { lr = 1e-3 })
        local losses = {}
        -- two steps, then the loss after them (no graph)
        for step = 1, 3 do
            tide.set_grad_enabled(step < 3)
            local rec, posterior = m(x, true, noise)
            local loss = (x - rec):abs():mean() + 1e-6 * posterior:kl():mean()
            losses[step] = loss:item()
            tide.set_grad_enabled(true)
            assert_finite(losses[step], "loss")
            if step < 3 then
                opt:zero_grad()
                loss:backward()
                opt:step()
            end
        end
        assert_close_list({ 0.755646646, 0.69117713, 0.631648242 }, losses, 1e-4, "losses")
        assert.is_true(losses[3] < losses[2] and losses[2] < losses[1])
    end)
end)
