-- ported_scripts195_spec.lua — lucidrains/denoising-diffusion-pytorch (version 2.3.1, commit
-- faed4db), denoising_diffusion_pytorch/denoising_diffusion_pytorch.py: Upsample / Downsample,
-- RMSNorm (F.normalize * g * sqrt(dim)), SinusoidalPosEmb, Block (this version has plain
-- nn.Conv2d, no WeightStandardizedConv2d), ResnetBlock with its time MLP, LinearAttention,
-- Attention (attend.py's Attend, the non-flash einsum path), Unet's forward, extract, the linear
-- and cosine beta schedules, GaussianDiffusion's buffers, loss_weight (min-SNR weighting),
-- predict_v, q_sample and p_losses with objective 'pred_noise' and 'pred_v'; ported line for line
-- at tiny sizes (dim 8, dim_mults {1, 2}, 2 heads of 4, channels 3, image 8 x 8, batch 2,
-- timesteps 10). The Python line stands above each Lua line that differs from it.
-- p_losses takes its noise and t from the caller (torch.randn_like / torch.randint replaced by
-- given tensors; no offset noise, no self-conditioning, no immiscible assignment).
-- Reference values: PyTorch 1.13 running the same modules pasted into a script, with einops'
-- rearrange / repeat / Rearrange written out with view / permute / expand (einops is not in the
-- venv); here tide.einops and tide.einsum run the original patterns. Weights are formulas over
-- each parameter's index in named_parameters order (the same order as PyTorch's).
-- Dims are 1-based; the diffusion time t stays 0-based (it is a value fed to the model), so
-- extract's gather indexes with t + 1.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local einops = tide.einops
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- def exists(x): return x is not None
local function exists(x)
    return x ~= nil
end

local function default(val, d)
    if exists(val) then
        return val
    end
    -- return d() if callable(d) else d
    if type(d) == "function" then return d() end
    return d
end

-- def cast_tuple(t, length = 1)
local function cast_tuple(t, length)
    -- if isinstance(t, tuple): return t
    if type(t) == "table" then return t end
    local r = {}
    for i = 1, length or 1 do r[i] = t end
    return r
end

-- Python's map over a list, as a list
local function map(fn, list)
    local r = {}
    for i, x in ipairs(list) do r[i] = fn(x) end
    return r
end

local function divisible_by(numer, denom)
    return (numer % denom) == 0
end

-- small helper modules

local function Upsample(dim, dim_out)
    return nn.Sequential(
        -- nn.Upsample(scale_factor = 2, mode = 'nearest'),
        nn.Upsample({ scale_factor = 2, mode = "nearest" }),
        -- nn.Conv2d(dim, default(dim_out, dim), 3, padding = 1)
        nn.Conv2d(dim, default(dim_out, dim), 3, { padding = 1 })
    )
end

local function Downsample(dim, dim_out)
    return nn.Sequential(
        -- Rearrange('b c (h p1) (w p2) -> b (c p1 p2) h w', p1 = 2, p2 = 2),
        einops.layers.Rearrange("b c (h p1) (w p2) -> b (c p1 p2) h w", { p1 = 2, p2 = 2 }),
        nn.Conv2d(dim * 4, default(dim_out, dim), 1)
    )
end

local RMSNorm = nn.Module:extend("RMSNorm")
function RMSNorm:init(dim)
    self.scale = dim ^ 0.5
    self.g = nn.Parameter(tide.ones(1, dim, 1, 1))
end

function RMSNorm:forward(x)
    -- return F.normalize(x, dim = 1) * self.g * self.scale
    return F.normalize(x, { dim = 2 }) * self.g * self.scale
end

-- sinusoidal positional embeds

local SinusoidalPosEmb = nn.Module:extend("SinusoidalPosEmb")
function SinusoidalPosEmb:init(dim, theta)
    self.dim = dim
    self.theta = theta or 10000
end

function SinusoidalPosEmb:forward(x)
    -- half_dim = self.dim // 2
    local half_dim = math.floor(self.dim / 2)
    local emb = math.log(self.theta) / (half_dim - 1)
    -- emb = torch.exp(torch.arange(half_dim, device=device) * -emb)
    emb = tide.exp(tide.arange(half_dim) * -emb)
    -- emb = x[:, None] * emb[None, :]
    emb = x:unsqueeze(2) * emb:unsqueeze(1)
    -- emb = torch.cat((emb.sin(), emb.cos()), dim=-1)
    emb = tide.cat({ emb:sin(), emb:cos() }, -1)
    return emb
end

-- building block modules

local Block = nn.Module:extend("Block")
function Block:init(dim, dim_out, dropout)
    self.proj = nn.Conv2d(dim, dim_out, 3, { padding = 1 })
    self.norm = RMSNorm(dim_out)
    self.act = nn.SiLU()
    self.dropout = nn.Dropout(dropout or 0)
end

function Block:forward(x, scale_shift)
    x = self.proj(x)
    x = self.norm(x)

    if exists(scale_shift) then
        -- scale, shift = scale_shift
        local scale, shift = scale_shift[1], scale_shift[2]
        x = x * (scale + 1) + shift
    end

    x = self.act(x)
    return self.dropout(x)
end

local ResnetBlock = nn.Module:extend("ResnetBlock")
-- def __init__(self, dim, dim_out, *, time_emb_dim = None, dropout = 0.):
function ResnetBlock:init(dim, dim_out, opts)
    opts = opts or {}
    -- self.mlp = nn.Sequential(nn.SiLU(), nn.Linear(time_emb_dim, dim_out * 2))
    --     if exists(time_emb_dim) else None
    self.mlp = exists(opts.time_emb_dim)
        and nn.Sequential(nn.SiLU(), nn.Linear(opts.time_emb_dim, dim_out * 2)) or nil

    self.block1 = Block(dim, dim_out, opts.dropout)
    self.block2 = Block(dim_out, dim_out)
    -- self.res_conv = nn.Conv2d(dim, dim_out, 1) if dim != dim_out else nn.Identity()
    self.res_conv = dim ~= dim_out and nn.Conv2d(dim, dim_out, 1) or nn.Identity()
end

function ResnetBlock:forward(x, time_emb)
    local scale_shift = nil
    if exists(self.mlp) and exists(time_emb) then
        time_emb = self.mlp(time_emb)
        -- time_emb = rearrange(time_emb, 'b c -> b c 1 1')
        time_emb = einops.rearrange(time_emb, "b c -> b c 1 1")
        -- scale_shift = time_emb.chunk(2, dim = 1)
        scale_shift = time_emb:chunk(2, 2)
    end

    -- h = self.block1(x, scale_shift = scale_shift)
    local h = self.block1(x, scale_shift)

    h = self.block2(h)

    return h + self.res_conv(x)
end

local LinearAttention = nn.Module:extend("LinearAttention")
-- def __init__(self, dim, heads = 4, dim_head = 32, num_mem_kv = 4):
function LinearAttention:init(dim, heads, dim_head, num_mem_kv)
    heads, dim_head, num_mem_kv = heads or 4, dim_head or 32, num_mem_kv or 4
    self.scale = dim_head ^ -0.5
    self.heads = heads
    local hidden_dim = dim_head * heads

    self.norm = RMSNorm(dim)

    self.mem_kv = nn.Parameter(tide.randn(2, heads, dim_head, num_mem_kv))
    -- self.to_qkv = nn.Conv2d(dim, hidden_dim * 3, 1, bias = False)
    self.to_qkv = nn.Conv2d(dim, hidden_dim * 3, 1, { bias = false })

    self.to_out = nn.Sequential(
        nn.Conv2d(hidden_dim, dim, 1),
        RMSNorm(dim)
    )
end

function LinearAttention:forward(x)
    -- b, c, h, w = x.shape
    local b, _, h, w = unpack(x:size())

    x = self.norm(x)

    -- qkv = self.to_qkv(x).chunk(3, dim = 1)
    local qkv = self.to_qkv(x):chunk(3, 2)
    -- q, k, v = map(lambda t: rearrange(t, 'b (h c) x y -> b h c (x y)', h = self.heads), qkv)
    local q, k, v = unpack(map(function(t)
        return einops.rearrange(t, "b (h c) x y -> b h c (x y)", { h = self.heads })
    end, qkv))

    -- mk, mv = map(lambda t: repeat(t, 'h c n -> b h c n', b = b), self.mem_kv)
    local mk = einops.repeat_(self.mem_kv[1], "h c n -> b h c n", { b = b })
    local mv = einops.repeat_(self.mem_kv[2], "h c n -> b h c n", { b = b })
    -- k, v = map(partial(torch.cat, dim = -1), ((mk, k), (mv, v)))
    k, v = tide.cat({ mk, k }, -1), tide.cat({ mv, v }, -1)

    -- q = q.softmax(dim = -2)
    q = q:softmax(-2)
    k = k:softmax(-1)

    q = q * self.scale

    -- context = torch.einsum('b h d n, b h e n -> b h d e', k, v)
    local context = tide.einsum("b h d n, b h e n -> b h d e", k, v)

    local out = tide.einsum("b h d e, b h d n -> b h e n", context, q)
    -- out = rearrange(out, 'b h c (x y) -> b (h c) x y', h = self.heads, x = h, y = w)
    out = einops.rearrange(out, "b h c (x y) -> b (h c) x y", { h = self.heads, x = h, y = w })
    return self.to_out(out)
end

-- attend.py's Attend (flash = False: the einsum path; the SDPA branch needs PyTorch 2)
local Attend = nn.Module:extend("Attend")
function Attend:init(dropout, flash, scale)
    self.dropout = dropout or 0
    self.scale = scale
    self.attn_dropout = nn.Dropout(self.dropout)
    self.flash = flash or false
end

function Attend:forward(q, k, v)
    assert(not self.flash) -- (flash_attn: F.scaled_dot_product_attention, not ported)
    -- scale = default(self.scale, q.shape[-1] ** -0.5)
    local scale = default(self.scale, q:size(-1) ^ -0.5)

    -- sim = einsum(f"b h i d, b h j d -> b h i j", q, k) * scale
    local sim = tide.einsum("b h i d, b h j d -> b h i j", q, k) * scale

    local attn = sim:softmax(-1)
    attn = self.attn_dropout(attn)

    local out = tide.einsum("b h i j, b h j d -> b h i d", attn, v)

    return out
end

local Attention = nn.Module:extend("Attention")
-- def __init__(self, dim, heads = 4, dim_head = 32, num_mem_kv = 4, flash = False):
function Attention:init(dim, heads, dim_head, num_mem_kv, flash)
    heads, dim_head, num_mem_kv = heads or 4, dim_head or 32, num_mem_kv or 4
    self.heads = heads
    local hidden_dim = dim_head * heads

    self.norm = RMSNorm(dim)
    -- self.attend = Attend(flash = flash)
    self.attend = Attend(0, flash)

    self.mem_kv = nn.Parameter(tide.randn(2, heads, num_mem_kv, dim_head))
    self.to_qkv = nn.Conv2d(dim, hidden_dim * 3, 1, { bias = false })
    self.to_out = nn.Conv2d(hidden_dim, dim, 1)
end

function Attention:forward(x)
    local b, _, h, w = unpack(x:size())

    x = self.norm(x)

    local qkv = self.to_qkv(x):chunk(3, 2)
    -- q, k, v = map(lambda t: rearrange(t, 'b (h c) x y -> b h (x y) c', h = self.heads), qkv)
    local q, k, v = unpack(map(function(t)
        return einops.rearrange(t, "b (h c) x y -> b h (x y) c", { h = self.heads })
    end, qkv))

    -- mk, mv = map(lambda t: repeat(t, 'h n d -> b h n d', b = b), self.mem_kv)
    local mk = einops.repeat_(self.mem_kv[1], "h n d -> b h n d", { b = b })
    local mv = einops.repeat_(self.mem_kv[2], "h n d -> b h n d", { b = b })
    -- k, v = map(partial(torch.cat, dim = -2), ((mk, k), (mv, v)))
    k, v = tide.cat({ mk, k }, -2), tide.cat({ mv, v }, -2)

    local out = self.attend(q, k, v)

    -- out = rearrange(out, 'b h (x y) d -> b (h d) x y', x = h, y = w)
    out = einops.rearrange(out, "b h (x y) d -> b (h d) x y", { x = h, y = w })
    return self.to_out(out)
end

-- model

local Unet = nn.Module:extend("Unet")
-- def __init__(self, dim, init_dim = None, out_dim = None, dim_mults = (1, 2, 4, 8), channels = 3,
--     self_condition = False, learned_variance = False, learned_sinusoidal_cond = False,
--     random_fourier_features = False, learned_sinusoidal_dim = 16,
--     sinusoidal_pos_emb_theta = 10000, dropout = 0., attn_dim_head = 32, attn_heads = 4,
--     full_attn = None, flash_attn = False):
function Unet:init(dim, opts)
    opts = opts or {}
    local dim_mults = opts.dim_mults or { 1, 2, 4, 8 }
    local channels = opts.channels or 3
    local full_attn = opts.full_attn
    local attn_heads, attn_dim_head = opts.attn_heads or 4, opts.attn_dim_head or 32
    -- (learned / random Fourier time features: RandomOrLearnedSinusoidalPosEmb, not ported)
    assert(not opts.learned_sinusoidal_cond and not opts.random_fourier_features)

    -- determine dimensions

    self.channels = channels
    self.self_condition = opts.self_condition or false
    -- input_channels = channels * (2 if self_condition else 1)
    local input_channels = channels * (self.self_condition and 2 or 1)

    local init_dim = default(opts.init_dim, dim)
    -- self.init_conv = nn.Conv2d(input_channels, init_dim, 7, padding = 3)
    self.init_conv = nn.Conv2d(input_channels, init_dim, 7, { padding = 3 })

    -- dims = [init_dim, *map(lambda m: dim * m, dim_mults)]
    local dims = { init_dim, unpack(map(function(m) return dim * m end, dim_mults)) }
    -- in_out = list(zip(dims[:-1], dims[1:]))
    local in_out = {}
    for i = 1, #dims - 1 do in_out[i] = { dims[i], dims[i + 1] } end

    -- time embeddings

    local time_dim = dim * 4

    self.random_or_learned_sinusoidal_cond = false

    -- sinu_pos_emb = SinusoidalPosEmb(dim, theta = sinusoidal_pos_emb_theta)
    local sinu_pos_emb = SinusoidalPosEmb(dim, opts.sinusoidal_pos_emb_theta or 10000)
    local fourier_dim = dim

    self.time_mlp = nn.Sequential(
        sinu_pos_emb,
        nn.Linear(fourier_dim, time_dim),
        nn.GELU(),
        nn.Linear(time_dim, time_dim)
    )

    -- attention

    if not full_attn then
        -- full_attn = (*((False,) * (len(dim_mults) - 1)), True)
        full_attn = {}
        for i = 1, #dim_mults - 1 do full_attn[i] = false end
        full_attn[#dim_mults] = true
    end

    local num_stages = #dim_mults
    full_attn = cast_tuple(full_attn, num_stages)
    attn_heads = cast_tuple(attn_heads, num_stages)
    attn_dim_head = cast_tuple(attn_dim_head, num_stages)

    assert(#full_attn == #dim_mults)

    -- prepare blocks

    -- FullAttention = partial(Attention, flash = flash_attn)
    local function FullAttention(d, heads, dim_head)
        return Attention(d, heads, dim_head, nil, opts.flash_attn)
    end
    -- resnet_block = partial(ResnetBlock, time_emb_dim = time_dim, dropout = dropout)
    local function resnet_block(d, d_out)
        return ResnetBlock(d, d_out, { time_emb_dim = time_dim, dropout = opts.dropout })
    end

    -- layers

    self.downs = nn.ModuleList({})
    self.ups = nn.ModuleList({})
    local num_resolutions = #in_out

    -- for ind, ((dim_in, dim_out), layer_full_attn, layer_attn_heads, layer_attn_dim_head)
    --     in enumerate(zip(in_out, full_attn, attn_heads, attn_dim_head)):
    for ind = 1, #in_out do
        local dim_in, dim_out = in_out[ind][1], in_out[ind][2]
        local layer_full_attn = full_attn[ind]
        local layer_attn_heads, layer_attn_dim_head = attn_heads[ind], attn_dim_head[ind]
        -- is_last = ind >= (num_resolutions - 1)
        local is_last = ind >= num_resolutions

        local attn_klass = layer_full_attn and FullAttention or LinearAttention

        self.downs:append(nn.ModuleList({
            resnet_block(dim_in, dim_in),
            resnet_block(dim_in, dim_in),
            -- attn_klass(dim_in, dim_head = layer_attn_dim_head, heads = layer_attn_heads),
            attn_klass(dim_in, layer_attn_heads, layer_attn_dim_head),
            -- Downsample(dim_in, dim_out) if not is_last
            --     else nn.Conv2d(dim_in, dim_out, 3, padding = 1)
            (not is_last) and Downsample(dim_in, dim_out)
                or nn.Conv2d(dim_in, dim_out, 3, { padding = 1 }),
        }))
    end

    -- mid_dim = dims[-1]
    local mid_dim = dims[#dims]
    self.mid_block1 = resnet_block(mid_dim, mid_dim)
    -- self.mid_attn = FullAttention(mid_dim, heads = attn_heads[-1],
    --     dim_head = attn_dim_head[-1])
    self.mid_attn = FullAttention(mid_dim, attn_heads[#attn_heads], attn_dim_head[#attn_dim_head])
    self.mid_block2 = resnet_block(mid_dim, mid_dim)

    -- for ind, (...) in enumerate(zip(*map(reversed, (in_out, full_attn, attn_heads,
    --     attn_dim_head)))):
    for ind = 1, #in_out do
        local r = #in_out - ind + 1
        local dim_in, dim_out = in_out[r][1], in_out[r][2]
        local layer_full_attn = full_attn[r]
        local layer_attn_heads, layer_attn_dim_head = attn_heads[r], attn_dim_head[r]
        -- is_last = ind == (len(in_out) - 1)
        local is_last = ind == #in_out

        local attn_klass = layer_full_attn and FullAttention or LinearAttention

        self.ups:append(nn.ModuleList({
            resnet_block(dim_out + dim_in, dim_out),
            resnet_block(dim_out + dim_in, dim_out),
            attn_klass(dim_out, layer_attn_heads, layer_attn_dim_head),
            (not is_last) and Upsample(dim_out, dim_in)
                or nn.Conv2d(dim_out, dim_in, 3, { padding = 1 }),
        }))
    end

    -- default_out_dim = channels * (1 if not learned_variance else 2)
    local default_out_dim = channels * (opts.learned_variance and 2 or 1)
    self.out_dim = default(opts.out_dim, default_out_dim)

    self.final_res_block = resnet_block(init_dim * 2, init_dim)
    self.final_conv = nn.Conv2d(init_dim, self.out_dim, 1)
end

-- @property def downsample_factor(self): return 2 ** (len(self.downs) - 1)
function Unet:downsample_factor()
    return 2 ^ (#self.downs - 1)
end

function Unet:forward(x, time, x_self_cond)
    -- assert all([divisible_by(d, self.downsample_factor) for d in x.shape[-2:]]), f'...'
    for _, d in ipairs({ x:size(-2), x:size(-1) }) do
        assert(divisible_by(d, self:downsample_factor()),
            "your input dimensions need to be divisible by " .. self:downsample_factor())
    end

    if self.self_condition then
        -- x_self_cond = default(x_self_cond, lambda: torch.zeros_like(x))
        x_self_cond = default(x_self_cond, function() return tide.zeros_like(x) end)
        x = tide.cat({ x_self_cond, x }, 2)
    end

    x = self.init_conv(x)
    local r = x:clone()

    local t = self.time_mlp(time)

    local h = {}

    -- for block1, block2, attn, downsample in self.downs:
    for _, stage in ipairs(self.downs) do
        local block1, block2, attn, downsample = stage[1], stage[2], stage[3], stage[4]
        x = block1(x, t)
        -- h.append(x)
        h[#h + 1] = x

        x = block2(x, t)
        x = attn(x) + x
        h[#h + 1] = x

        x = downsample(x)
    end

    x = self.mid_block1(x, t)
    x = self.mid_attn(x) + x
    x = self.mid_block2(x, t)

    for _, stage in ipairs(self.ups) do
        local block1, block2, attn, upsample = stage[1], stage[2], stage[3], stage[4]
        -- x = torch.cat((x, h.pop()), dim = 1)
        x = tide.cat({ x, table.remove(h) }, 2)
        x = block1(x, t)

        x = tide.cat({ x, table.remove(h) }, 2)
        x = block2(x, t)
        x = attn(x) + x

        x = upsample(x)
    end

    x = tide.cat({ x, r }, 2)

    x = self.final_res_block(x, t)
    return self.final_conv(x)
end

-- gaussian diffusion trainer class

local function extract(a, t, x_shape)
    -- b, *_ = t.shape
    local b = t:size(1)
    -- out = a.gather(-1, t)
    local out = a:gather(-1, t + 1) -- (t is 0-based; tide's gather indexes from 1)
    -- return out.reshape(b, *((1,) * (len(x_shape) - 1)))
    local shape = { b }
    for i = 2, #x_shape do shape[i] = 1 end
    return out:reshape(unpack(shape))
end

local function linear_beta_schedule(timesteps)
    local scale = 1000 / timesteps
    local beta_start = scale * 0.0001
    local beta_end = scale * 0.02
    -- return torch.linspace(beta_start, beta_end, timesteps, dtype = torch.float64)
    return tide.linspace(beta_start, beta_end, timesteps, { dtype = "float64" })
end

local function cosine_beta_schedule(timesteps, s)
    s = s or 0.008
    local steps = timesteps + 1
    -- t = torch.linspace(0, timesteps, steps, dtype = torch.float64) / timesteps
    local t = tide.linspace(0, timesteps, steps, { dtype = "float64" }) / timesteps
    -- alphas_cumprod = torch.cos((t + s) / (1 + s) * math.pi * 0.5) ** 2
    local alphas_cumprod = tide.cos((t + s) / (1 + s) * math.pi * 0.5) ^ 2
    -- alphas_cumprod = alphas_cumprod / alphas_cumprod[0]
    alphas_cumprod = alphas_cumprod / alphas_cumprod[1]
    -- betas = 1 - (alphas_cumprod[1:] / alphas_cumprod[:-1])
    local betas = 1 - (alphas_cumprod[{ { 2, steps } }] / alphas_cumprod[{ { 1, steps - 1 } }])
    return tide.clip(betas, 0, 0.999)
end

local GaussianDiffusion = nn.Module:extend("GaussianDiffusion")
-- def __init__(self, model, *, image_size, timesteps = 1000, sampling_timesteps = None,
--     objective = 'pred_v', beta_schedule = 'sigmoid', schedule_fn_kwargs = dict(),
--     ddim_sampling_eta = 0., auto_normalize = True, offset_noise_strength = 0.,
--     min_snr_loss_weight = False, min_snr_gamma = 5, immiscible = False):
function GaussianDiffusion:init(model, opts)
    local timesteps = opts.timesteps or 1000
    local objective = opts.objective or "pred_v"
    local beta_schedule = opts.beta_schedule or "sigmoid"
    local min_snr_gamma = opts.min_snr_gamma or 5
    -- assert not (type(self) == GaussianDiffusion and model.channels != model.out_dim)
    assert(not (model.channels ~= model.out_dim))

    self.model = model

    self.channels = self.model.channels
    self.self_condition = self.model.self_condition

    local image_size = opts.image_size
    -- if isinstance(image_size, int): image_size = (image_size, image_size)
    if type(image_size) == "number" then image_size = { image_size, image_size } end
    self.image_size = image_size

    self.objective = objective

    assert(({ pred_noise = true, pred_x0 = true, pred_v = true })[objective],
        "objective must be either pred_noise (predict noise) or pred_x0 (predict image start) "
        .. "or pred_v (predict v)")

    local beta_schedule_fn
    if beta_schedule == "linear" then
        beta_schedule_fn = linear_beta_schedule
    elseif beta_schedule == "cosine" then
        beta_schedule_fn = cosine_beta_schedule
    else
        -- (sigmoid_beta_schedule: not ported)
        error("unknown beta schedule " .. tostring(beta_schedule))
    end

    local betas = beta_schedule_fn(timesteps)

    local alphas = 1 - betas
    -- alphas_cumprod = torch.cumprod(alphas, dim=0)
    local alphas_cumprod = tide.cumprod(alphas, 1)
    -- alphas_cumprod_prev = F.pad(alphas_cumprod[:-1], (1, 0), value = 1.)
    local alphas_cumprod_prev = F.pad(alphas_cumprod[{ { 1, -2 } }], { 1, 0 }, "constant", 1)

    -- timesteps, = betas.shape
    timesteps = betas:size(1)
    self.num_timesteps = timesteps

    -- helper function to register buffer from float64 to float32

    -- register_buffer = lambda name, val: self.register_buffer(name, val.to(torch.float32))
    local function register_buffer(name, val)
        self:register_buffer(name, val:to("float32"))
    end

    register_buffer("betas", betas)
    register_buffer("alphas_cumprod", alphas_cumprod)
    register_buffer("alphas_cumprod_prev", alphas_cumprod_prev)

    -- calculations for diffusion q(x_t | x_{t-1}) and others

    register_buffer("sqrt_alphas_cumprod", tide.sqrt(alphas_cumprod))
    register_buffer("sqrt_one_minus_alphas_cumprod", tide.sqrt(1 - alphas_cumprod))
    register_buffer("log_one_minus_alphas_cumprod", tide.log(1 - alphas_cumprod))
    register_buffer("sqrt_recip_alphas_cumprod", tide.sqrt(1 / alphas_cumprod))
    register_buffer("sqrt_recipm1_alphas_cumprod", tide.sqrt(1 / alphas_cumprod - 1))

    -- calculations for posterior q(x_{t-1} | x_t, x_0)

    local posterior_variance = betas * (1 - alphas_cumprod_prev) / (1 - alphas_cumprod)

    register_buffer("posterior_variance", posterior_variance)

    -- register_buffer('posterior_log_variance_clipped',
    --     torch.log(posterior_variance.clamp(min =1e-20)))
    register_buffer("posterior_log_variance_clipped",
        tide.log(posterior_variance:clamp({ min = 1e-20 })))
    register_buffer("posterior_mean_coef1",
        betas * tide.sqrt(alphas_cumprod_prev) / (1 - alphas_cumprod))
    register_buffer("posterior_mean_coef2",
        (1 - alphas_cumprod_prev) * tide.sqrt(alphas) / (1 - alphas_cumprod))

    -- derive loss weight
    -- snr - signal noise ratio

    local snr = alphas_cumprod / (1 - alphas_cumprod)

    -- https://arxiv.org/abs/2303.09556

    local maybe_clipped_snr = snr:clone()
    if opts.min_snr_loss_weight then
        -- maybe_clipped_snr.clamp_(max = min_snr_gamma)
        maybe_clipped_snr:clamp_({ max = min_snr_gamma })
    end

    if objective == "pred_noise" then
        register_buffer("loss_weight", maybe_clipped_snr / snr)
    elseif objective == "pred_x0" then
        register_buffer("loss_weight", maybe_clipped_snr)
    elseif objective == "pred_v" then
        register_buffer("loss_weight", maybe_clipped_snr / (snr + 1))
    end
end

function GaussianDiffusion:predict_v(x_start, t, noise)
    -- (x_start.shape: a tide.Size, a list)
    local shape = x_start:size()
    return extract(self.sqrt_alphas_cumprod, t, shape) * noise -
        extract(self.sqrt_one_minus_alphas_cumprod, t, shape) * x_start
end

-- @autocast('cuda', enabled = False)
-- def q_sample(self, x_start, t, noise = None):
function GaussianDiffusion:q_sample(x_start, t, noise)
    -- noise = default(noise, lambda: torch.randn_like(x_start))
    noise = default(noise, function() return tide.randn_like(x_start) end)
    local shape = x_start:size()
    return extract(self.sqrt_alphas_cumprod, t, shape) * x_start +
        extract(self.sqrt_one_minus_alphas_cumprod, t, shape) * noise
end

-- def p_losses(self, x_start, t, noise = None, offset_noise_strength = None,
--     loss_reduction = 'mean'):
-- (noise and t given by the caller; offset noise and self-conditioning left out)
function GaussianDiffusion:p_losses(x_start, t, noise, loss_reduction)
    loss_reduction = loss_reduction or "mean"
    -- noise sample

    -- x = self.q_sample(x_start = x_start, t = t, noise = noise)
    local x = self:q_sample(x_start, t, noise)

    -- predict and take gradient step

    -- model_out = self.model(x, t, x_self_cond)
    local model_out = self.model(x, t, nil)

    local target
    if self.objective == "pred_noise" then
        target = noise
    elseif self.objective == "pred_x0" then
        target = x_start
    elseif self.objective == "pred_v" then
        local v = self:predict_v(x_start, t, noise)
        target = v
    else
        error("unknown objective " .. self.objective)
    end

    -- loss = F.mse_loss(model_out, target, reduction = 'none')
    local loss = F.mse_loss(model_out, target, { reduction = "none" })
    -- loss = reduce(loss, 'b ... -> b', 'mean')
    loss = einops.reduce(loss, "b ... -> b", "mean")

    -- loss = loss * extract(self.loss_weight, t, loss.shape)
    loss = loss * extract(self.loss_weight, t, loss:size())

    if loss_reduction == "none" then
        return loss
    end

    return loss:mean()
end
local WANT = {
    posemb = { 6.98044772644, 8.96043272514, -1.90540553011 },
    rmsnorm = { 6.64478413918, 1101.48491918, 0.0298908002098 },
    block = { 555.025947991, 703.959830281, -7.34319293636 },
    resnet = { 463.861912865, 974.048219409, -0.0955088691581 },
    linattn = { -700.719163552, 837.893037453, 4.25261704182 },
    attn = { -173.755242343, 196.707907121, 0.638681042461 },
    down = { -9.48547416367, 586.591098269, 13.8263773407 },
    up = { 571.037791356, 2033.72572403, 0.101496501776 },
    linear_betas = {
        0.01, 0.231111111111, 0.452222222222, 0.673333333333, 0.894444444444, 1.11555555556,
        1.33666666667, 1.55777777778, 1.77888888889, 2
    },
    cosine_betas = {
        0.027907262886, 0.0754936372967, 0.124395986369, 0.177189525402, 0.237281530191,
        0.309883440109, 0.40400314304, 0.536998177643, 0.743829366895, 0.999
    },
    pred_noise = {
        loss_weight = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 },
        q_sample = { 2.02696027793, 230.665732389, -1.99837684374 },
        unet = { 67.0510678366, 69.7727681771, -0.437106667162 },
        loss = 0.48332887888,
        grad_x = { -0.52273097578, 6.19417387505, -0.174871272155 },
        grad_init_conv = { 4.43694710639, 222.490684493, -3.86269800853 },
        grad_final_conv_b = { 0.112641043961, 0.130412876606, 0.130026996136 },
        init_conv_after = { 0.453391978343, 149.635302849, -0.260695355269 },
        final_conv_b_after = { 0.195045977831, 0.167473211884, 0.117096498609 },
        losses = { 0.48332887888, 0.484679281712, 0.45105868578 },
    },
    pred_v = {
        loss_weight = {
            0.139536321163, 0.506470382214, 0.786910533905, 0.647478222847, 0.493843585253,
            0.340809643269, 0.203121468425, 0.0940456092358, 0.0240917243063, 2.40917233896e-05
        },
        q_sample = { 2.02696027793, 230.665732389, -1.99837684374 },
        unet = { 67.0510678366, 69.7727681771, -0.437106667162 },
        loss = 0.187548458576,
        grad_x = { -0.109887891027, 2.75977965952, -0.0863369695527 },
        grad_init_conv = { 3.15890941872, 94.7514969726, -1.72626358443 },
        grad_final_conv_b = { 0.0395848788321, 0.045482493937, 0.0516702234745 },
        init_conv_after = { 0.415389703645, 149.633299963, -0.234756733 },
        final_conv_b_after = { 0.195045977831, 0.167473211884, 0.117096498609 },
        losses = { 0.187548458576, 0.185855031013, 0.172020852566 },
    },
}

---------------------------------------------------------------------------------------------
-- checks against PyTorch 1.13 (values from the reference script described in the header)
---------------------------------------------------------------------------------------------
-- each parameter, i-th (0-based) in named_parameters order: sin(arange(numel) * 0.37 + i) *
-- scale, plus 1 for an RMSNorm gain g
local function set_params(m, scale)
    scale = scale or 0.3
    tide.no_grad()(function()
        local i = 0
        for n, p in m:named_parameters() do
            local v = tide.sin(tide.arange(p:numel()):float() * 0.37 + i) * scale
            if n == "g" or n:sub(-2) == ".g" then v = v + 1 end
            p:copy_(v:view(p:size()))
            i = i + 1
        end
    end)()
end

local function fixed(shape, a, b)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    return tide.sin(tide.arange(n):float() * a + (b or 0)):view(unpack(shape))
end

-- a tensor's shape as a plain list
local function shape(x)
    return { unpack(x:size()) }
end

-- sum, abs sum, cos-weighted sum
local function cs(t)
    t = t:detach():reshape(-1):double()
    local w = tide.cos(tide.arange(t:numel()):double() * 0.7)
    return { t:sum():item(), t:abs():sum():item(), (t * w):sum():item() }
end

describe("denoising-diffusion-pytorch building blocks", function()
    local x8 = fixed({ 2, 8, 8, 8 }, 0.13)
    local t = tide.tensor({ 3, 7 })

    it("SinusoidalPosEmb, RMSNorm, Block, ResnetBlock match PyTorch", function()
        assert_close_list(WANT.posemb, cs(SinusoidalPosEmb(8)(t:float())), 1e-5, "posemb")
        local m = RMSNorm(8); set_params(m)
        assert_close_list(WANT.rmsnorm, cs(m(x8)), 1e-5, "rmsnorm")
        m = Block(8, 8); set_params(m)
        local y = m(x8, { fixed({ 2, 8, 1, 1 }, 0.5), fixed({ 2, 8, 1, 1 }, 0.3) })
        assert_close_list(WANT.block, cs(y), 1e-5, "block")
        m = ResnetBlock(8, 16, { time_emb_dim = 32 }); set_params(m)
        y = m(x8, fixed({ 2, 32 }, 0.21))
        assert.are.same({ 2, 16, 8, 8 }, shape(y))
        -- its cos-weighted sum cancels to 1e-4 of the abs sum: float32's rounding (which moves
        -- with the SIMD width of the kernels) is bounded relative to the abs sum, not to the sum
        local got = cs(y)
        for i = 1, 3 do
            assert(math.abs(got[i] - WANT.resnet[i]) <= 1e-6 * WANT.resnet[2],
                string.format("resnet[%d]: %.8g, PyTorch %.8g", i, got[i], WANT.resnet[i]))
        end
    end)

    it("LinearAttention, Attention, Downsample, Upsample match PyTorch", function()
        local m = LinearAttention(8, 2, 4); set_params(m)
        assert_close_list(WANT.linattn, cs(m(x8)), 1e-5, "linattn")
        m = Attention(8, 2, 4); set_params(m)
        assert_close_list(WANT.attn, cs(m(x8)), 1e-5, "attn")
        m = Downsample(8, 16); set_params(m)
        local y = m(x8)
        assert.are.same({ 2, 16, 4, 4 }, shape(y))
        assert_close_list(WANT.down, cs(y), 1e-5, "down")
        m = Upsample(8, 4); set_params(m)
        y = m(x8)
        assert.are.same({ 2, 4, 16, 16 }, shape(y))
        assert_close_list(WANT.up, cs(y), 1e-5, "up")
    end)

    it("linear and cosine beta schedules match PyTorch's float64 values", function()
        assert_close_list(WANT.linear_betas, linear_beta_schedule(10):tolist(), 1e-10, "linear")
        assert_close_list(WANT.cosine_betas, cosine_beta_schedule(10):tolist(), 1e-10, "cosine")
    end)

    local x_start = fixed({ 2, 3, 8, 8 }, 0.1)
    local noise = tide.cos(tide.arange(384):float() * 0.23):view(2, 3, 8, 8)
    for _, case in ipairs({ { "pred_noise", false }, { "pred_v", true } }) do
        local objective, snrw = case[1], case[2]
        it("Unet + GaussianDiffusion p_losses (" .. objective .. ", cosine) match PyTorch",
            function()
                local W = WANT[objective]
                local model = Unet(8, { dim_mults = { 1, 2 }, channels = 3, attn_dim_head = 4,
                    attn_heads = 2 })
                set_params(model, 0.2)
                local names = {}
                for n in model:named_parameters() do names[#names + 1] = n end
                assert.are.equal(141, #names)
                -- PyTorch's 'downs.0.2.mem_kv' (a module's own parameters before its children's)
                assert.are.equal("downs.1.3.mem_kv", names[23])
                assert.are.equal("final_conv.bias", names[141])
                local d = GaussianDiffusion(model, { image_size = 8, timesteps = 10,
                    objective = objective, beta_schedule = "cosine", min_snr_loss_weight = snrw })
                assert_close_list(W.loss_weight, d.loss_weight:tolist(), 1e-5, "loss_weight")
                assert_close_list(W.q_sample, cs(d:q_sample(x_start, t, noise)), 1e-5, "q_sample")
                local out = model(x_start, t)
                assert.are.same({ 2, 3, 8, 8 }, shape(out))
                assert_close_list(W.unet, cs(out), 1e-4, "unet")
                local xs = x_start:clone():requires_grad_()
                local loss = d:p_losses(xs, t, noise)
                loss:backward()
                assert.is_true(ported.close(loss:item(), W.loss, 1e-4))
                assert_close_list(W.grad_x, cs(xs.grad), 1e-3, "grad x")
                assert_close_list(W.grad_init_conv, cs(model.init_conv.weight.grad), 1e-3,
                    "grad init_conv")
                assert_close_list(W.grad_final_conv_b, model.final_conv.bias.grad:tolist(), 1e-3,
                    "grad final_conv.bias")
                -- opt = torch.optim.AdamW(model.parameters(), lr=1e-3); opt.step()
                local opt = tide.optim.AdamW(model:parameters(), { lr = 1e-3 })
                opt:step()
                -- AdamW's first step moves each weight by lr times its gradient's sign: one of
                -- init_conv's gradients is 1e-6 (of an abs sum of 222), a cancelling float32 sum
                -- whose sign rounding decides (tide's vector sin and cos moved it), so the sums
                -- may differ by one such step, 2 lr
                local after = cs(model.init_conv.weight)
                for i, want in ipairs(W.init_conv_after) do
                    assert(math.abs(after[i] - want) <= 1e-4 * math.max(1, math.abs(want)) + 2e-3,
                        string.format("init_conv after[%d]: %.8g, PyTorch %.8g", i, after[i], want))
                end
                assert_close_list(W.final_conv_b_after, model.final_conv.bias:tolist(), 1e-4,
                    "final_conv.bias after")
                local losses = { loss:item() }
                for _ = 1, 2 do
                    opt:zero_grad()
                    local l = d:p_losses(x_start, t, noise)
                    l:backward()
                    opt:step()
                    losses[#losses + 1] = l:item()
                    assert_finite(losses[#losses], "loss")
                end
                -- (after that step the trajectories may part by that weight: 2.6e-3 at the third)
                assert_close_list(W.losses, losses, 5e-3, "losses")
                assert.is_true(losses[3] < losses[1])
            end)
    end
end)
