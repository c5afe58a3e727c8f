-- ported_scripts48_spec.lua — lucidrains/denoising-diffusion-pytorch's
-- denoising_diffusion_pytorch.py (and attend.py's Attend, einsum path) ported line for line with
-- tide.einops: the helpers, Upsample/Downsample, RMSNorm, the sinusoidal embeddings, Block,
-- ResnetBlock, LinearAttention, Attention against PyTorch 1.13's values (deterministic weights),
-- the Unet (forward, every parameter gets a gradient), and GaussianDiffusion (the beta schedules
-- against PyTorch, the buffers, q_sample, p_losses for each objective, a training step,
-- p_sample_loop and ddim_sample under tide.inference_mode, interpolate, self-conditioning, offset
-- noise, min-SNR weights), Attend's flash path (sdpa_kernel(**config._asdict())), q_sample's
-- @autocast('cuda', enabled = False) decorator, and the Trainer's loop (cycle(dl), gradient
-- accumulation, clip_grad_norm_, EMA by lerp_, num_to_groups sampling, save_image, save/load).
-- Tiny sizes: dim 8, dim_mults (1, 2),
-- 8x8 images, 10 timesteps. The Python line stands above each Lua line that differs from it.
-- Times stay 0-based values (they feed the sinusoidal embedding); extract gathers at t + 1.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local unpack = table.unpack or unpack -- luacheck: ignore
local einops = tide.einops
local rearrange, reduce, repeat_ = einops.rearrange, einops.reduce, einops.repeat_
local Rearrange = einops.layers.Rearrange
local Module, ModuleList = nn.Module, nn.ModuleList

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- deterministic weights, the same in the Python check: parameter k (1-based, parameters() order)
-- is 0.3 * sin(0.37 * arange(numel) + 0.1 * k)
local function det_fill(model)
    tide.no_grad(function()
        for k, p in ipairs(model:parameters()) do
            p:copy_((tide.arange(p:numel()):double() * 0.37 + 0.1 * k):sin():mul(0.3):reshape(p:size()))
        end
    end)
end

local function det_input(...)
    local shape = { ... }
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    return (tide.arange(n):double() * 0.53):cos():reshape(shape):float()
end

local function first(t, n)
    local l = t:reshape(-1):tolist()
    local r = {}
    for i = 1, n do r[i] = l[i] end
    return r
end

---------------------------------------------------------------------------------------------
-- the script's module level, line for line
---------------------------------------------------------------------------------------------
-- ModelPrediction =  namedtuple('ModelPrediction', ['pred_noise', 'pred_x_start'])
local function ModelPrediction(pred_noise, pred_x_start)
    return { pred_noise, pred_x_start, pred_noise = pred_noise, pred_x_start = pred_x_start }
end

-- def exists(x): return x is not None
local function exists(x)
    return x ~= nil
end

local function callable(d)
    return type(d) == "function"
end

local function default(val, d)
    if exists(val) then
        return val
    end
    -- return d() if callable(d) else d
    if callable(d) then return d() end
    return d
end

-- def cast_tuple(t, length = 1): tuples are Lua lists
local function cast_tuple(t, length)
    length = length or 1
    if type(t) == "table" then
        return t
    end
    local r = {}
    for i = 1, length do r[i] = t end
    return r
end

local function divisible_by(numer, denom)
    return (numer % denom) == 0
end

local function identity(t)
    return t
end

local function normalize_to_neg_one_to_one(img)
    return img * 2 - 1
end

local function unnormalize_to_zero_to_one(t)
    return (t + 1) * 0.5
end

local function Upsample(dim, dim_out)
    return nn.Sequential(
        -- nn.Upsample(scale_factor = 2, mode = 'nearest'),
        nn.Upsample({ scale_factor = 2, mode = "nearest" }),
        nn.Conv2d(dim, default(dim_out, dim), 3, { padding = 1 })
    )
end

local function Downsample(dim, dim_out)
    return nn.Sequential(
        -- Rearrange('b c (h p1) (w p2) -> b (c p1 p2) h w', p1 = 2, p2 = 2),
        Rearrange("b c (h p1) (w p2) -> b (c p1 p2) h w", { p1 = 2, p2 = 2 }),
        nn.Conv2d(dim * 4, default(dim_out, dim), 1)
    )
end

local RMSNorm = Module:extend("RMSNorm")
function RMSNorm:init(dim)
    self.scale = dim ^ 0.5
    self.g = nn.Parameter(tide.ones(1, dim, 1, 1))
end

function RMSNorm:forward(x)
    -- return F.normalize(x, dim = 1) * self.g * self.scale
    return F.normalize(x, { dim = 2 }) * self.g * self.scale
end

local SinusoidalPosEmb = Module:extend("SinusoidalPosEmb")
nn.signature(SinusoidalPosEmb, "dim, theta = 10000")
function SinusoidalPosEmb:init(dim, theta)
    self.dim = dim
    self.theta = theta
end

function SinusoidalPosEmb:forward(x)
    local device = x.device
    -- half_dim = self.dim // 2
    local half_dim = math.floor(self.dim / 2)
    local emb = math.log(self.theta) / (half_dim - 1)
    -- emb = torch.exp(torch.arange(half_dim, device=device) * -emb)
    emb = tide.exp(tide.arange(half_dim, { device = device }) * -emb)
    -- emb = x[:, None] * emb[None, :]
    emb = x[{ {}, tide.newaxis }] * emb[{ tide.newaxis, {} }]
    -- emb = torch.cat((emb.sin(), emb.cos()), dim=-1)
    emb = tide.cat({ emb:sin(), emb:cos() }, { dim = -1 })
    return emb
end

local RandomOrLearnedSinusoidalPosEmb = Module:extend("RandomOrLearnedSinusoidalPosEmb")
nn.signature(RandomOrLearnedSinusoidalPosEmb, "dim, is_random = False")
function RandomOrLearnedSinusoidalPosEmb:init(dim, is_random)
    assert(divisible_by(dim, 2))
    local half_dim = math.floor(dim / 2)
    -- self.weights = nn.Parameter(torch.randn(half_dim), requires_grad = not is_random)
    self.weights = nn.Parameter(tide.randn(half_dim), { requires_grad = not is_random })
end

function RandomOrLearnedSinusoidalPosEmb:forward(x)
    x = rearrange(x, "b -> b 1")
    local freqs = x * rearrange(self.weights, "d -> 1 d") * 2 * math.pi
    local fouriered = tide.cat({ freqs:sin(), freqs:cos() }, { dim = -1 })
    fouriered = tide.cat({ x, fouriered }, { dim = -1 })
    return fouriered
end

local Block = Module:extend("Block")
nn.signature(Block, "dim, dim_out, dropout = 0.")
function Block:init(dim, dim_out, dropout)
    self.proj = nn.Conv2d(dim, dim_out, 3, { padding = 1 })
    self.norm = RMSNorm(dim_out)
    self.act = nn.SiLU()
    self.dropout = nn.Dropout(dropout)
end

function Block:forward(x, scale_shift)
    x = self.proj(x)
    x = self.norm(x)

    if exists(scale_shift) then
        local scale, shift = unpack(scale_shift)
        x = x * (scale + 1) + shift
    end

    x = self.act(x)
    return self.dropout(x)
end
nn.signature(Block, "x, scale_shift = None", "forward")

local ResnetBlock = Module:extend("ResnetBlock")
nn.signature(ResnetBlock, "dim, dim_out, *, time_emb_dim = None, dropout = 0.")
function ResnetBlock:init(dim, dim_out, time_emb_dim, dropout)
    -- self.mlp = nn.Sequential(...) if exists(time_emb_dim) else None
    if exists(time_emb_dim) then
        self.mlp = nn.Sequential(
            nn.SiLU(),
            nn.Linear(time_emb_dim, dim_out * 2)
        )
    end

    -- self.block1 = Block(dim, dim_out, dropout = dropout)
    self.block1 = Block(dim, dim_out, { dropout = dropout })
    self.block2 = Block(dim_out, dim_out)
    -- self.res_conv = nn.Conv2d(dim, dim_out, 1) if dim != dim_out else nn.Identity()
    self.res_conv = dim ~= dim_out and nn.Conv2d(dim, dim_out, 1) or nn.Identity()
end

function ResnetBlock:forward(x, time_emb)
    local scale_shift = nil
    if exists(self.mlp) and exists(time_emb) then
        time_emb = self.mlp(time_emb)
        time_emb = rearrange(time_emb, "b c -> b c 1 1")
        -- scale_shift = time_emb.chunk(2, dim = 1)
        scale_shift = time_emb:chunk(2, { dim = 2 })
    end

    -- h = self.block1(x, scale_shift = scale_shift)
    local h = self.block1(x, { scale_shift = scale_shift })

    h = self.block2(h)

    return h + self.res_conv(x)
end

local LinearAttention = Module:extend("LinearAttention")
nn.signature(LinearAttention, "dim, heads = 4, dim_head = 32, num_mem_kv = 4")
function LinearAttention:init(dim, heads, dim_head, num_mem_kv)
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

-- Python's map(f, xs), unpacked
local function map(f, xs)
    local r = {}
    for i, x in ipairs(xs) do r[i] = f(x) end
    return unpack(r)
end

function LinearAttention:forward(x)
    -- b, c, h, w = x.shape
    local b, c, h, w = unpack(x.shape)

    x = self.norm(x)

    -- qkv = self.to_qkv(x).chunk(3, dim = 1)
    local qkv = self.to_qkv(x):chunk(3, { dim = 2 })
    -- q, k, v = map(lambda t: rearrange(t, 'b (h c) x y -> b h c (x y)', h = self.heads), qkv)
    local q, k, v = map(function(t) return rearrange(t, "b (h c) x y -> b h c (x y)", { h = self.heads }) end, qkv)

    -- mk, mv = map(lambda t: repeat(t, 'h c n -> b h c n', b = b), self.mem_kv)
    local mk, mv = map(function(t) return repeat_(t, "h c n -> b h c n", { b = b }) end, self.mem_kv:unbind())
    -- k, v = map(partial(torch.cat, dim = -1), ((mk, k), (mv, v)))
    k, v = map(function(ts) return tide.cat(ts, { dim = -1 }) end, { { mk, k }, { mv, v } })

    -- q = q.softmax(dim = -2)
    q = q:softmax({ dim = -2 })
    k = k:softmax({ dim = -1 })

    q = q * self.scale

    local context = tide.einsum("b h d n, b h e n -> b h d e", k, v)

    local out = tide.einsum("b h d e, b h d n -> b h e n", context, q)
    out = rearrange(out, "b h c (x y) -> b (h c) x y", { h = self.heads, x = h, y = w })
    return self.to_out(out)
end

-- attend.py
local Attend = Module:extend("Attend")
nn.signature(Attend, "dropout = 0., flash = False, scale = None")
function Attend:init(dropout, flash, scale)
    self.dropout = dropout
    self.scale = scale
    self.attn_dropout = nn.Dropout(dropout)

    self.flash = flash

    -- determine efficient attention configs for cuda and cpu
    -- AttentionConfig = namedtuple('AttentionConfig', ['backends']): a table; its _asdict() is itself
    local SDPBackend = nn.attention.SDPBackend
    -- self.cpu_config = AttentionConfig([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH, SDPBackend.EFFICIENT_ATTENTION])
    self.cpu_config = { backends = { SDPBackend.FLASH_ATTENTION, SDPBackend.MATH, SDPBackend.EFFICIENT_ATTENTION } }
    self.cuda_config = nil

    if not tide.cuda.is_available() or not flash then
        return
    end
    self.cuda_config = { backends = { SDPBackend.MATH, SDPBackend.EFFICIENT_ATTENTION } }
end

function Attend:flash_attn(q, k, v)
    -- _, heads, q_len, _, k_len, is_cuda, device = *q.shape, k.shape[-2], q.is_cuda, q.device
    local is_cuda = q.is_cuda

    if exists(self.scale) then
        local default_scale = q.shape[-1]
        q = q * (self.scale / default_scale)
    end

    -- q, k, v = map(lambda t: t.contiguous(), (q, k, v))
    q, k, v = map(function(t) return t:contiguous() end, { q, k, v })

    local config = is_cuda and self.cuda_config or self.cpu_config

    -- with torch.nn.attention.sdpa_kernel(**config._asdict()):
    --     out = F.scaled_dot_product_attention(q, k, v, dropout_p = self.dropout if self.training else 0.)
    local out = nn.attention.sdpa_kernel(config, function()
        return F.scaled_dot_product_attention(
            q, k, v,
            { dropout_p = self.training and self.dropout or 0. }
        )
    end)

    return out
end

function Attend:forward(q, k, v)
    -- q_len, k_len, device = q.shape[-2], k.shape[-2], q.device
    local q_len, k_len, device = q.shape[-2], k.shape[-2], q.device -- luacheck: ignore

    if self.flash then
        return self:flash_attn(q, k, v)
    end

    -- scale = default(self.scale, q.shape[-1] ** -0.5)
    local scale = default(self.scale, q.shape[-1] ^ -0.5)

    -- sim = einsum(f"b h i d, b h j d -> b h i j", q, k) * scale
    local sim = tide.einsum("b h i d, b h j d -> b h i j", q, k) * scale

    local attn = sim:softmax({ dim = -1 })
    attn = self.attn_dropout(attn)

    local out = tide.einsum("b h i j, b h j d -> b h i d", attn, v)

    return out
end

local Attention = Module:extend("Attention")
nn.signature(Attention, "dim, heads = 4, dim_head = 32, num_mem_kv = 4, flash = False")
function Attention:init(dim, heads, dim_head, num_mem_kv, flash)
    self.heads = heads
    local hidden_dim = dim_head * heads

    self.norm = RMSNorm(dim)
    -- self.attend = Attend(flash = flash)
    self.attend = Attend({ flash = flash })

    self.mem_kv = nn.Parameter(tide.randn(2, heads, num_mem_kv, dim_head))
    self.to_qkv = nn.Conv2d(dim, hidden_dim * 3, 1, { bias = false })
    self.to_out = nn.Conv2d(hidden_dim, dim, 1)
end

function Attention:forward(x)
    local b, c, h, w = unpack(x.shape) -- luacheck: ignore

    x = self.norm(x)

    local qkv = self.to_qkv(x):chunk(3, { dim = 2 })
    local q, k, v = map(function(t) return rearrange(t, "b (h c) x y -> b h (x y) c", { h = self.heads }) end, qkv)

    local mk, mv = map(function(t) return repeat_(t, "h n d -> b h n d", { b = b }) end, self.mem_kv:unbind())
    -- k, v = map(partial(torch.cat, dim = -2), ((mk, k), (mv, v)))
    k, v = map(function(ts) return tide.cat(ts, { dim = -2 }) end, { { mk, k }, { mv, v } })

    local out = self.attend(q, k, v)

    out = rearrange(out, "b h (x y) d -> b (h d) x y", { x = h, y = w })
    return self.to_out(out)
end

-- model

local Unet = Module:extend("Unet")
nn.signature(Unet, [[dim, init_dim = None, out_dim = None, dim_mults = (1, 2, 4, 8), channels = 3,
    self_condition = False, learned_variance = False, learned_sinusoidal_cond = False,
    random_fourier_features = False, learned_sinusoidal_dim = 16, sinusoidal_pos_emb_theta = 10000,
    dropout = 0., attn_dim_head = 32, attn_heads = 4, full_attn = None, flash_attn = False]])
function Unet:init(dim, init_dim, out_dim, dim_mults, channels, self_condition, learned_variance,
                   learned_sinusoidal_cond, random_fourier_features, learned_sinusoidal_dim,
                   sinusoidal_pos_emb_theta, dropout, attn_dim_head, attn_heads, full_attn, flash_attn)
    -- determine dimensions

    self.channels = channels
    self.self_condition = self_condition
    -- input_channels = channels * (2 if self_condition else 1)
    local input_channels = channels * (self_condition and 2 or 1)

    init_dim = default(init_dim, dim)
    self.init_conv = nn.Conv2d(input_channels, init_dim, 7, { padding = 3 })

    -- dims = [init_dim, *map(lambda m: dim * m, dim_mults)]
    local dims = { init_dim, map(function(m) return dim * m end, dim_mults) }
    -- in_out = list(zip(dims[:-1], dims[1:]))
    local in_out = {}
    for i = 1, #dims - 1 do in_out[i] = { dims[i], dims[i + 1] } end

    -- time embeddings

    local time_dim = dim * 4

    self.random_or_learned_sinusoidal_cond = learned_sinusoidal_cond or random_fourier_features

    local sinu_pos_emb, fourier_dim
    if self.random_or_learned_sinusoidal_cond then
        sinu_pos_emb = RandomOrLearnedSinusoidalPosEmb(learned_sinusoidal_dim, random_fourier_features)
        fourier_dim = learned_sinusoidal_dim + 1
    else
        -- sinu_pos_emb = SinusoidalPosEmb(dim, theta = sinusoidal_pos_emb_theta)
        sinu_pos_emb = SinusoidalPosEmb(dim, { theta = sinusoidal_pos_emb_theta })
        fourier_dim = dim
    end

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
    local function FullAttention(d, kw)
        kw.flash = flash_attn
        return Attention(d, kw)
    end
    -- resnet_block = partial(ResnetBlock, time_emb_dim = time_dim, dropout = dropout)
    local function resnet_block(a, b)
        return ResnetBlock(a, b, { time_emb_dim = time_dim, dropout = dropout })
    end

    -- layers

    self.downs = ModuleList({})
    self.ups = ModuleList({})
    local num_resolutions = #in_out

    -- for ind, ((dim_in, dim_out), layer_full_attn, layer_attn_heads, layer_attn_dim_head) in enumerate(zip(...)):
    for ind = 1, #in_out do
        local dim_in, dim_out = unpack(in_out[ind])
        local layer_full_attn, layer_attn_heads, layer_attn_dim_head = full_attn[ind], attn_heads[ind], attn_dim_head[ind]
        -- is_last = ind >= (num_resolutions - 1)   (ind is 1-based here)
        local is_last = ind >= num_resolutions

        -- attn_klass = FullAttention if layer_full_attn else LinearAttention
        local attn_klass = layer_full_attn and FullAttention or LinearAttention

        self.downs:append(ModuleList({
            resnet_block(dim_in, dim_in),
            resnet_block(dim_in, dim_in),
            -- attn_klass(dim_in, dim_head = layer_attn_dim_head, heads = layer_attn_heads),
            attn_klass(dim_in, { dim_head = layer_attn_dim_head, heads = layer_attn_heads }),
            -- Downsample(dim_in, dim_out) if not is_last else nn.Conv2d(dim_in, dim_out, 3, padding = 1)
            (not is_last) and Downsample(dim_in, dim_out) or nn.Conv2d(dim_in, dim_out, 3, { padding = 1 }),
        }))
    end

    -- mid_dim = dims[-1]
    local mid_dim = dims[#dims]
    self.mid_block1 = resnet_block(mid_dim, mid_dim)
    -- self.mid_attn = FullAttention(mid_dim, heads = attn_heads[-1], dim_head = attn_dim_head[-1])
    self.mid_attn = FullAttention(mid_dim, { heads = attn_heads[#attn_heads], dim_head = attn_dim_head[#attn_dim_head] })
    self.mid_block2 = resnet_block(mid_dim, mid_dim)

    -- for ind, (...) in enumerate(zip(*map(reversed, (in_out, full_attn, attn_heads, attn_dim_head)))):
    for ind = 1, #in_out do
        local r = #in_out - ind + 1
        local dim_in, dim_out = unpack(in_out[r])
        local layer_full_attn, layer_attn_heads, layer_attn_dim_head = full_attn[r], attn_heads[r], attn_dim_head[r]
        -- is_last = ind == (len(in_out) - 1)
        local is_last = ind == #in_out

        local attn_klass = layer_full_attn and FullAttention or LinearAttention

        self.ups:append(ModuleList({
            resnet_block(dim_out + dim_in, dim_out),
            resnet_block(dim_out + dim_in, dim_out),
            attn_klass(dim_out, { dim_head = layer_attn_dim_head, heads = layer_attn_heads }),
            (not is_last) and Upsample(dim_out, dim_in) or nn.Conv2d(dim_out, dim_in, 3, { padding = 1 }),
        }))
    end

    -- default_out_dim = channels * (1 if not learned_variance else 2)
    local default_out_dim = channels * ((not learned_variance) and 1 or 2)
    self.out_dim = default(out_dim, default_out_dim)

    self.final_res_block = resnet_block(init_dim * 2, init_dim)
    self.final_conv = nn.Conv2d(init_dim, self.out_dim, 1)
end

-- @property def downsample_factor(self)
function Unet:downsample_factor()
    return 2 ^ (#self.downs - 1)
end

function Unet:forward(x, time, x_self_cond)
    -- assert all([divisible_by(d, self.downsample_factor) for d in x.shape[-2:]]), f'...'
    for _, d in ipairs({ x.shape[-2], x.shape[-1] }) do
        assert(divisible_by(d, self:downsample_factor()), "your input dimensions need to be divisible by " ..
            self:downsample_factor() .. ", given the unet")
    end

    if self.self_condition then
        -- x_self_cond = default(x_self_cond, lambda: torch.zeros_like(x))
        x_self_cond = default(x_self_cond, function() return tide.zeros_like(x) end)
        x = tide.cat({ x_self_cond, x }, { dim = 2 })
    end

    x = self.init_conv(x)
    local r = x:clone()

    local t = self.time_mlp(time)

    local h = {}

    -- for block1, block2, attn, downsample in self.downs:
    for _, layers in ipairs(self.downs) do
        local block1, block2, attn, downsample = unpack(layers)
        x = block1(x, t)
        -- h.append(x)
        table.insert(h, x)

        x = block2(x, t)
        x = attn(x) + x
        table.insert(h, x)

        x = downsample(x)
    end

    x = self.mid_block1(x, t)
    x = self.mid_attn(x) + x
    x = self.mid_block2(x, t)

    for _, layers in ipairs(self.ups) do
        local block1, block2, attn, upsample = unpack(layers)
        -- x = torch.cat((x, h.pop()), dim = 1)
        x = tide.cat({ x, table.remove(h) }, { dim = 2 })
        x = block1(x, t)

        x = tide.cat({ x, table.remove(h) }, { dim = 2 })
        x = block2(x, t)
        x = attn(x) + x

        x = upsample(x)
    end

    x = tide.cat({ x, r }, { dim = 2 })

    x = self.final_res_block(x, t)
    return self.final_conv(x)
end
nn.signature(Unet, "x, time, x_self_cond = None", "forward")

-- gaussian diffusion trainer class

local function extract(a, t, x_shape)
    -- b, *_ = t.shape
    local b = t.shape[1]
    -- out = a.gather(-1, t)   (t holds 0-based times; tide's gather index is 1-based)
    local out = a:gather(-1, t + 1)
    -- return out.reshape(b, *((1,) * (len(x_shape) - 1)))
    local shape = { b }
    for i = 2, #x_shape do shape[i] = 1 end
    return out:reshape(shape)
end

local function linear_beta_schedule(timesteps)
    local scale = 1000 / timesteps
    local beta_start = scale * 0.0001
    local beta_end = scale * 0.02
    -- return torch.linspace(beta_start, beta_end, timesteps, dtype = torch.float64)
    return tide.linspace(beta_start, beta_end, timesteps, { dtype = tide.float64 })
end

local function cosine_beta_schedule(timesteps, s)
    s = s or 0.008
    local steps = timesteps + 1
    local t = tide.linspace(0, timesteps, steps, { dtype = tide.float64 }) / timesteps
    local alphas_cumprod = tide.cos((t + s) / (1 + s) * math.pi * 0.5) ^ 2
    -- alphas_cumprod = alphas_cumprod / alphas_cumprod[0]
    alphas_cumprod = alphas_cumprod / alphas_cumprod[1]
    -- betas = 1 - (alphas_cumprod[1:] / alphas_cumprod[:-1])
    local betas = 1 - (alphas_cumprod[{ { 2, -1 } }] / alphas_cumprod[{ { 1, -2 } }])
    return tide.clip(betas, 0, 0.999)
end

-- def sigmoid_beta_schedule(timesteps, start = -3, end = 3, tau = 1, clamp_min = 1e-5)
local function sigmoid_beta_schedule(timesteps, kw)
    kw = kw or {}
    local start, end_, tau = kw.start or -3, kw["end"] or 3, kw.tau or 1
    local steps = timesteps + 1
    local t = tide.linspace(0, timesteps, steps, { dtype = tide.float64 }) / timesteps
    local v_start = tide.tensor(start / tau):sigmoid()
    local v_end = tide.tensor(end_ / tau):sigmoid()
    -- alphas_cumprod = (-((t * (end - start) + start) / tau).sigmoid() + v_end) / (v_end - v_start)
    local alphas_cumprod = (-((t * (end_ - start) + start) / tau):sigmoid() + v_end) / (v_end - v_start)
    alphas_cumprod = alphas_cumprod / alphas_cumprod[1]
    local betas = 1 - (alphas_cumprod[{ { 2, -1 } }] / alphas_cumprod[{ { 1, -2 } }])
    return tide.clip(betas, 0, 0.999)
end

local GaussianDiffusion = Module:extend("GaussianDiffusion")
nn.signature(GaussianDiffusion, [[model, *, image_size, timesteps = 1000, sampling_timesteps = None,
    objective = 'pred_v', beta_schedule = 'sigmoid', schedule_fn_kwargs = None, ddim_sampling_eta = 0.,
    auto_normalize = True, offset_noise_strength = 0., min_snr_loss_weight = False, min_snr_gamma = 5,
    immiscible = False]])
function GaussianDiffusion:init(model, image_size, timesteps, sampling_timesteps, objective, beta_schedule,
                                schedule_fn_kwargs, ddim_sampling_eta, auto_normalize, offset_noise_strength,
                                min_snr_loss_weight, min_snr_gamma, immiscible)
    -- assert not (type(self) == GaussianDiffusion and model.channels != model.out_dim)
    assert(not (self.__class__ == GaussianDiffusion and model.channels ~= model.out_dim))
    assert(not model.random_or_learned_sinusoidal_cond)

    self.model = model

    self.channels = self.model.channels
    self.self_condition = self.model.self_condition

    if type(image_size) == "number" then
        image_size = { image_size, image_size }
    end
    assert(type(image_size) == "table" and #image_size == 2, "image size must be a integer or a tuple/list of two integers")
    self.image_size = image_size

    self.objective = objective

    local objectives = { pred_noise = true, pred_x0 = true, pred_v = true }
    assert(objectives[objective], "objective must be either pred_noise (predict noise) or pred_x0 (predict image start) or pred_v")

    local beta_schedule_fn
    if beta_schedule == "linear" then
        beta_schedule_fn = linear_beta_schedule
    elseif beta_schedule == "cosine" then
        beta_schedule_fn = cosine_beta_schedule
    elseif beta_schedule == "sigmoid" then
        beta_schedule_fn = sigmoid_beta_schedule
    else
        error("unknown beta schedule " .. tostring(beta_schedule))
    end

    -- betas = beta_schedule_fn(timesteps, **schedule_fn_kwargs)
    local betas = beta_schedule_fn(timesteps, schedule_fn_kwargs)

    local alphas = 1. - betas
    -- alphas_cumprod = torch.cumprod(alphas, dim=0)
    local alphas_cumprod = tide.cumprod(alphas, { dim = 1 })
    -- alphas_cumprod_prev = F.pad(alphas_cumprod[:-1], (1, 0), value = 1.)
    local alphas_cumprod_prev = F.pad(alphas_cumprod[{ { 1, -2 } }], { 1, 0 }, { value = 1. })

    -- timesteps, = betas.shape
    timesteps = betas.shape[1]
    self.num_timesteps = math.floor(timesteps)

    -- sampling related parameters

    self.sampling_timesteps = default(sampling_timesteps, timesteps)

    assert(self.sampling_timesteps <= timesteps)
    self.is_ddim_sampling = self.sampling_timesteps < timesteps
    self.ddim_sampling_eta = ddim_sampling_eta

    -- register_buffer = lambda name, val: self.register_buffer(name, val.to(torch.float32))
    local register_buffer = function(name, val) self:register_buffer(name, val:to(tide.float32)) end

    register_buffer("betas", betas)
    register_buffer("alphas_cumprod", alphas_cumprod)
    register_buffer("alphas_cumprod_prev", alphas_cumprod_prev)

    register_buffer("sqrt_alphas_cumprod", tide.sqrt(alphas_cumprod))
    register_buffer("sqrt_one_minus_alphas_cumprod", tide.sqrt(1. - alphas_cumprod))
    register_buffer("log_one_minus_alphas_cumprod", tide.log(1. - alphas_cumprod))
    register_buffer("sqrt_recip_alphas_cumprod", tide.sqrt(1. / alphas_cumprod))
    register_buffer("sqrt_recipm1_alphas_cumprod", tide.sqrt(1. / alphas_cumprod - 1))

    local posterior_variance = betas * (1. - alphas_cumprod_prev) / (1. - alphas_cumprod)

    register_buffer("posterior_variance", posterior_variance)

    -- register_buffer('posterior_log_variance_clipped', torch.log(posterior_variance.clamp(min =1e-20)))
    register_buffer("posterior_log_variance_clipped", tide.log(posterior_variance:clamp({ min = 1e-20 })))
    register_buffer("posterior_mean_coef1", betas * tide.sqrt(alphas_cumprod_prev) / (1. - alphas_cumprod))
    register_buffer("posterior_mean_coef2", (1. - alphas_cumprod_prev) * tide.sqrt(alphas) / (1. - alphas_cumprod))

    self.immiscible = immiscible

    self.offset_noise_strength = offset_noise_strength

    local snr = alphas_cumprod / (1 - alphas_cumprod)

    local maybe_clipped_snr = snr:clone()
    if min_snr_loss_weight then
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

    self.normalize = auto_normalize and normalize_to_neg_one_to_one or identity
    self.unnormalize = auto_normalize and unnormalize_to_zero_to_one or identity
end

-- @property def device(self): a method here
function GaussianDiffusion:device()
    return self.betas.device
end

function GaussianDiffusion:predict_start_from_noise(x_t, t, noise)
    return (
        extract(self.sqrt_recip_alphas_cumprod, t, x_t.shape) * x_t -
        extract(self.sqrt_recipm1_alphas_cumprod, t, x_t.shape) * noise
    )
end

function GaussianDiffusion:predict_noise_from_start(x_t, t, x0)
    return (
        (extract(self.sqrt_recip_alphas_cumprod, t, x_t.shape) * x_t - x0) /
        extract(self.sqrt_recipm1_alphas_cumprod, t, x_t.shape)
    )
end

function GaussianDiffusion:predict_v(x_start, t, noise)
    return (
        extract(self.sqrt_alphas_cumprod, t, x_start.shape) * noise -
        extract(self.sqrt_one_minus_alphas_cumprod, t, x_start.shape) * x_start
    )
end

function GaussianDiffusion:predict_start_from_v(x_t, t, v)
    return (
        extract(self.sqrt_alphas_cumprod, t, x_t.shape) * x_t -
        extract(self.sqrt_one_minus_alphas_cumprod, t, x_t.shape) * v
    )
end

function GaussianDiffusion:q_posterior(x_start, x_t, t)
    local posterior_mean = (
        extract(self.posterior_mean_coef1, t, x_t.shape) * x_start +
        extract(self.posterior_mean_coef2, t, x_t.shape) * x_t
    )
    local posterior_variance = extract(self.posterior_variance, t, x_t.shape)
    local posterior_log_variance_clipped = extract(self.posterior_log_variance_clipped, t, x_t.shape)
    return posterior_mean, posterior_variance, posterior_log_variance_clipped
end

function GaussianDiffusion:model_predictions(x, t, x_self_cond, clip_x_start, rederive_pred_noise)
    local model_output = self.model(x, t, x_self_cond)
    -- maybe_clip = partial(torch.clamp, min = -1., max = 1.) if clip_x_start else identity
    local maybe_clip = clip_x_start and function(v) return tide.clamp(v, { min = -1., max = 1. }) end or identity

    local pred_noise, x_start
    if self.objective == "pred_noise" then
        pred_noise = model_output
        x_start = self:predict_start_from_noise(x, t, pred_noise)
        x_start = maybe_clip(x_start)

        if clip_x_start and rederive_pred_noise then
            pred_noise = self:predict_noise_from_start(x, t, x_start)
        end
    elseif self.objective == "pred_x0" then
        x_start = model_output
        x_start = maybe_clip(x_start)
        pred_noise = self:predict_noise_from_start(x, t, x_start)
    elseif self.objective == "pred_v" then
        local v = model_output
        x_start = self:predict_start_from_v(x, t, v)
        x_start = maybe_clip(x_start)
        pred_noise = self:predict_noise_from_start(x, t, x_start)
    end

    return ModelPrediction(pred_noise, x_start)
end
nn.signature(GaussianDiffusion, "x, t, x_self_cond = None, clip_x_start = False, rederive_pred_noise = False",
    "model_predictions")

function GaussianDiffusion:p_mean_variance(x, t, x_self_cond, clip_denoised)
    local preds = self:model_predictions(x, t, x_self_cond)
    local x_start = preds.pred_x_start

    if clip_denoised then
        x_start:clamp_(-1., 1.)
    end

    -- model_mean, ... = self.q_posterior(x_start = x_start, x_t = x, t = t)
    local model_mean, posterior_variance, posterior_log_variance = self:q_posterior(x_start, x, t)
    return model_mean, posterior_variance, posterior_log_variance, x_start
end
nn.signature(GaussianDiffusion, "x, t, x_self_cond = None, clip_denoised = True", "p_mean_variance")

-- @torch.inference_mode()
-- def p_sample(self, x, t: int, x_self_cond = None):
GaussianDiffusion.p_sample = tide.inference_mode()(function(self, x, t, x_self_cond)
    -- b, *_, device = *x.shape, self.device
    local b, device = x.shape[1], self:device()
    -- batched_times = torch.full((b,), t, device = device, dtype = torch.long)
    local batched_times = tide.full({ b }, t, { device = device, dtype = tide.long })
    local model_mean, _, model_log_variance, x_start = self:p_mean_variance(
        { x = x, t = batched_times, x_self_cond = x_self_cond, clip_denoised = true })
    -- noise = torch.randn_like(x) if t > 0 else 0. # no noise if t == 0
    local noise = t > 0 and tide.randn_like(x) or 0.
    local pred_img = model_mean + (0.5 * model_log_variance):exp() * noise
    return pred_img, x_start
end)

GaussianDiffusion.p_sample_loop = tide.inference_mode()(function(self, shape, return_all_timesteps)
    local batch, device = shape[1], self:device() -- luacheck: ignore

    -- img = torch.randn(shape, device = device)
    local img = tide.randn(shape, { device = device })
    local imgs = { img }

    local x_start = nil

    -- for t in tqdm(reversed(range(0, self.num_timesteps)), ...):
    for t = self.num_timesteps - 1, 0, -1 do
        local self_cond = self.self_condition and x_start or nil
        img, x_start = self:p_sample(img, t, self_cond)
        table.insert(imgs, img)
    end

    -- ret = img if not return_all_timesteps else torch.stack(imgs, dim = 1)
    local ret = (not return_all_timesteps) and img or tide.stack(imgs, { dim = 2 })

    ret = self.unnormalize(ret)
    return ret
end)

GaussianDiffusion.ddim_sample = tide.inference_mode()(function(self, shape, return_all_timesteps)
    local batch, device, total_timesteps, sampling_timesteps, eta, objective = shape[1], self:device(), -- luacheck: ignore
        self.num_timesteps, self.sampling_timesteps, self.ddim_sampling_eta, self.objective

    -- times = torch.linspace(-1, total_timesteps - 1, steps = sampling_timesteps + 1)
    local times = tide.linspace(-1, total_timesteps - 1, { steps = sampling_timesteps + 1 })
    -- times = list(reversed(times.int().tolist()))
    local tl = times:int():tolist()
    times = {}
    for i = #tl, 1, -1 do times[#times + 1] = tl[i] end
    -- time_pairs = list(zip(times[:-1], times[1:]))
    local time_pairs = {}
    for i = 1, #times - 1 do time_pairs[i] = { times[i], times[i + 1] } end

    local img = tide.randn(shape, { device = device })
    local imgs = { img }

    local x_start = nil

    for _, pair in ipairs(time_pairs) do
        local time, time_next = unpack(pair)
        local time_cond = tide.full({ batch }, time, { device = device, dtype = tide.long })
        local self_cond = self.self_condition and x_start or nil
        -- pred_noise, x_start, *_ = self.model_predictions(img, time_cond, self_cond, clip_x_start = True, rederive_pred_noise = True)
        local pred_noise
        pred_noise, x_start = unpack(self:model_predictions(img, time_cond, self_cond,
            { clip_x_start = true, rederive_pred_noise = true }))

        if time_next < 0 then
            img = x_start
            table.insert(imgs, img)
        else
            -- alpha = self.alphas_cumprod[time]   (0-based time)
            local alpha = self.alphas_cumprod[time + 1]
            local alpha_next = self.alphas_cumprod[time_next + 1]

            local sigma = eta * ((1 - alpha / alpha_next) * (1 - alpha_next) / (1 - alpha)):sqrt()
            local c = (1 - alpha_next - sigma ^ 2):sqrt()

            local noise = tide.randn_like(img)

            img = x_start * alpha_next:sqrt() +
                c * pred_noise +
                sigma * noise

            table.insert(imgs, img)
        end
    end

    local ret = (not return_all_timesteps) and img or tide.stack(imgs, { dim = 2 })

    ret = self.unnormalize(ret)
    return ret
end)

function GaussianDiffusion:sample(batch_size, return_all_timesteps)
    batch_size = batch_size or 16
    local h, w = unpack(self.image_size)
    local channels = self.channels
    local sample_fn = (not self.is_ddim_sampling) and self.p_sample_loop or self.ddim_sample
    return sample_fn(self, { batch_size, channels, h, w }, return_all_timesteps)
end

-- @autocast('cuda', enabled = False)
-- def q_sample(self, x_start, t, noise = None):
GaussianDiffusion.q_sample = tide.autocast("cuda", { enabled = false })(function(self, x_start, t, noise)
    noise = default(noise, function() return tide.randn_like(x_start) end)

    return (
        extract(self.sqrt_alphas_cumprod, t, x_start.shape) * x_start +
        extract(self.sqrt_one_minus_alphas_cumprod, t, x_start.shape) * noise
    )
end)
nn.signature(GaussianDiffusion, "x_start, t, noise = None", "q_sample")

function GaussianDiffusion:p_losses(x_start, t, noise, offset_noise_strength, loss_reduction)
    local b, c, h, w = unpack(x_start.shape) -- luacheck: ignore

    noise = default(noise, function() return tide.randn_like(x_start) end)

    offset_noise_strength = default(offset_noise_strength, self.offset_noise_strength)

    if offset_noise_strength > 0. then
        -- offset_noise = torch.randn(x_start.shape[:2], device = self.device)
        local offset_noise = tide.randn(x_start.shape[{ { 1, 2 } }], { device = self:device() })
        -- noise += offset_noise_strength * rearrange(offset_noise, 'b c -> b c 1 1')
        noise = noise + offset_noise_strength * rearrange(offset_noise, "b c -> b c 1 1")
    end

    -- x = self.q_sample(x_start = x_start, t = t, noise = noise)
    local x = self:q_sample({ x_start = x_start, t = t, noise = noise })

    local x_self_cond = nil
    if self.self_condition and math.random() < 0.5 then
        tide.no_grad(function()
            x_self_cond = self:model_predictions(x, t).pred_x_start
            x_self_cond:detach_()
        end)
    end

    local model_out = self.model(x, t, x_self_cond)

    local target
    if self.objective == "pred_noise" then
        target = noise
    elseif self.objective == "pred_x0" then
        target = x_start
    elseif self.objective == "pred_v" then
        local v = self:predict_v(x_start, t, noise)
        target = v
    else
        error("unknown objective " .. tostring(self.objective))
    end

    -- loss = F.mse_loss(model_out, target, reduction = 'none')
    local loss = F.mse_loss(model_out, target, { reduction = "none" })
    loss = reduce(loss, "b ... -> b", "mean")

    loss = loss * extract(self.loss_weight, t, loss.shape)

    if loss_reduction == "none" then
        return loss
    end

    return loss:mean()
end
nn.signature(GaussianDiffusion, "x_start, t, noise = None, offset_noise_strength = None, loss_reduction = 'mean'",
    "p_losses")

function GaussianDiffusion:random_times(batch_size)
    -- return torch.randint(0, self.num_timesteps, (batch_size,), device = self.device).long()
    return tide.randint(0, self.num_timesteps, { batch_size }, { device = self:device() }):long()
end

-- def forward(self, img, *args, times = None, loss_reduction = 'mean', **kwargs)
function GaussianDiffusion:forward(img, kw)
    kw = kw or {}
    local b, c, h, w = unpack(img.shape) -- luacheck: ignore
    local img_size = self.image_size
    assert(h == img_size[1] and w == img_size[2], "height and width of image must be " .. img_size[1])

    local times = default(kw.times, function() return self:random_times(b) end)

    img = self.normalize(img)
    -- return self.p_losses(img, times, *args, loss_reduction = loss_reduction, **kwargs)
    return self:p_losses(img, times, { loss_reduction = kw.loss_reduction or "mean" })
end

-- PyTorch 1.13's values for the same modules, weights and inputs (the einops calls written as
-- reshape/permute/expand in the Python check)
local PY = {
    resnet = { 0.53884184, 0.44293493, 0.33156711, 0.21328194 },
    linattn = { 0.10270612, 0.10270574, 0.10270668, 0.10270937 },
    attn = { 0.15636156, 0.15636002, 0.15636779, 0.15638636 },
}

---------------------------------------------------------------------------------------------
-- the tests
---------------------------------------------------------------------------------------------
describe("denoising-diffusion-pytorch: helpers and building blocks", function()
    it("helpers", function()
        assert.is_true(exists(0))
        assert.is_false(exists(nil))
        assert.are.equal(3, default(nil, 3))
        assert.are.equal(4, default(nil, function() return 4 end))
        assert.are.equal(5, default(5, 3))
        assert.are.same({ 7, 7, 7 }, cast_tuple(7, 3))
        assert.are.same({ 1, 2 }, cast_tuple({ 1, 2 }, 3))
        assert.is_true(divisible_by(8, 2))
        assert.is_false(divisible_by(7, 2))
        local x = tide.tensor({ 0, 0.5, 1 })
        assert.are.same({ -1, 0, 1 }, normalize_to_neg_one_to_one(x):tolist())
        assert.are.same({ 0, 0.5, 1 }, unnormalize_to_zero_to_one(normalize_to_neg_one_to_one(x)):tolist())
        assert.are.equal(x, identity(x))
    end)

    it("Upsample/Downsample, RMSNorm, SinusoidalPosEmb against PyTorch", function()
        local up, down = Upsample(4, 2), Downsample(4, 6)
        local x = det_input(2, 4, 4, 4)
        det_fill(up); det_fill(down)
        local u, d = up(x), down(x)
        assert.are.equal(tide.Size({ 2, 2, 8, 8 }), u:size())
        assert.are.equal(tide.Size({ 2, 6, 2, 2 }), d:size())
        -- PyTorch 1.13, the same ops (einops' Rearrange written as view/permute)
        assert_close_list({ 0.76373851, 1.16431677, 1.44664848, 1.84498799 }, first(u, 4), 1e-4, "Upsample")
        assert_close_list({ -1.15866125, -0.31764212, 0.39105976, -0.82407069 }, first(d, 4), 1e-4, "Downsample")
        local norm = RMSNorm(4)
        det_fill(norm)
        assert_close_list({ 0.03907412, 0.03588493, 0.02231198, -0.00089424 }, first(norm(x), 4), 1e-4, "RMSNorm")
        local emb = SinusoidalPosEmb(8)
        local e = emb(tide.tensor({ 0, 3, 9 }))
        assert.are.equal(tide.Size({ 3, 8 }), e:size())
        assert_close_list({ 0.14112, 0.13879809, 0.00646326, 0.0003, -0.9899925, 0.99032068, 0.99997914, 0.99999994 },
            e[2]:tolist(), 1e-5, "SinusoidalPosEmb")
        local lemb = RandomOrLearnedSinusoidalPosEmb(16)
        assert.are.equal(tide.Size({ 3, 17 }), lemb(tide.tensor({ 0, 3, 9 })):size())
        assert.is_true(lemb.weights.requires_grad)
        assert.is_false(RandomOrLearnedSinusoidalPosEmb(16, true).weights.requires_grad)
    end)

    it("ResnetBlock (time scale-shift), LinearAttention, Attention against PyTorch", function()
        local block = ResnetBlock(4, 6, { time_emb_dim = 5 })
        det_fill(block)
        local x = det_input(2, 4, 4, 4)
        local temb = det_input(2, 5)
        local out = block(x, temb)
        assert.are.equal(tide.Size({ 2, 6, 4, 4 }), out:size())
        assert_close_list(PY.resnet, first(out, 4), 1e-4, "ResnetBlock")
        local la = LinearAttention(4, { heads = 2, dim_head = 3, num_mem_kv = 2 })
        det_fill(la)
        local lo = la(x)
        assert.are.equal(tide.Size({ 2, 4, 4, 4 }), lo:size())
        assert_close_list(PY.linattn, first(lo, 4), 1e-4, "LinearAttention")
        local at = Attention(4, { heads = 2, dim_head = 3, num_mem_kv = 2 })
        det_fill(at)
        local ao = at(x)
        assert.are.equal(tide.Size({ 2, 4, 4, 4 }), ao:size())
        assert_close_list(PY.attn, first(ao, 4), 1e-4, "Attention")
        -- flash = True: F.scaled_dot_product_attention under sdpa_kernel(**config._asdict()),
        -- the same values
        local fa = Attention(4, { heads = 2, dim_head = 3, num_mem_kv = 2, flash = true })
        det_fill(fa)
        assert.is_true(fa.attend.flash)
        assert_close_list(PY.attn, first(fa(x), 4), 1e-4, "Attention(flash = True)")
        -- sdpa_kernel(backends=[...], set_priority=...) by name, one table; an unknown name raises
        local SDPBackend = nn.attention.SDPBackend
        assert.are.equal(7, nn.attention.sdpa_kernel({ backends = { SDPBackend.MATH }, set_priority = true },
            function() return 7 end))
        assert.has_error(function() nn.attention.sdpa_kernel({ backend = { SDPBackend.MATH } }, function() end) end,
            "tide: sdpa_kernel: unknown keyword backend; PyTorch's are backends and set_priority: "
            .. "sdpa_kernel({backends = {SDPBackend.MATH}}, function() ... end)")
    end)
end)

describe("denoising-diffusion-pytorch: Unet", function()
    it("Unet(dim = 8, dim_mults = (1, 2)): forward on a batch, shapes, every parameter gets a gradient", function()
        tide.manual_seed(0)
        -- model = Unet(dim = 8, dim_mults = (1, 2), attn_dim_head = 4, attn_heads = 2)
        local model = Unet({ dim = 8, dim_mults = { 1, 2 }, attn_dim_head = 4, attn_heads = 2 })
        assert.are.equal(3, model.channels)
        assert.are.equal(3, model.out_dim)
        assert.are.equal(2, #model.downs)
        assert.are.equal(2, model:downsample_factor())
        -- full_attn defaults to (False, True): LinearAttention then Attention
        assert.are.equal("LinearAttention", model.downs[1][3].__class__.__name__)
        assert.are.equal("Attention", model.downs[2][3].__class__.__name__)
        assert.are.equal("Attention", model.ups[1][3].__class__.__name__)
        assert.are.equal("Sequential", model.downs[1][4].__class__.__name__)
        assert.are.equal("Conv2d", model.downs[2][4].__class__.__name__)
        local x = tide.randn(2, 3, 8, 8)
        local t = tide.randint(0, 10, { 2 }):long()
        local out = model(x, t)
        assert.are.equal(tide.Size({ 2, 3, 8, 8 }), out:size())
        out:sum():backward()
        -- for name, p in model.named_parameters(): assert p.grad is not None
        local count = 0
        for _, np in ipairs(model:named_parameters()) do
            local name, p = np[1], np[2]
            assert(p.grad ~= nil, name .. " has no gradient")
            count = count + 1
        end
        assert.are.equal(#model:parameters(), count)
        -- an input the Unet cannot halve raises the script's assert
        assert.has_error(function() model(tide.randn(1, 3, 7, 7), tide.tensor({ 1 }):long()) end)
        -- self_condition doubles the input channels; learned_sinusoidal_cond uses the learned embedding
        local sc = Unet(8, { dim_mults = { 1, 2 }, attn_dim_head = 4, attn_heads = 2, self_condition = true,
            learned_sinusoidal_cond = true, full_attn = { false, false } })
        assert.are.equal(6, sc.init_conv.in_channels)
        assert.are.equal(tide.Size({ 1, 3, 8, 8 }), sc(tide.randn(1, 3, 8, 8), tide.tensor({ 3.0 })):size())
    end)
end)

describe("denoising-diffusion-pytorch: GaussianDiffusion", function()
    it("the beta schedules against PyTorch", function()
        assert_close_list({ 0.01, 0.2311111111, 0.4522222222, 0.6733333333, 0.8944444444, 1.1155555556, 1.3366666667,
            1.5577777778, 1.7788888889, 2.0 }, linear_beta_schedule(10):tolist(), 1e-9, "linear")
        assert_close_list({ 0.0279072629, 0.0754936373, 0.1243959864, 0.1771895254, 0.2372815302, 0.3098834401,
            0.404003143, 0.5369981776, 0.7438293669, 0.999 }, cosine_beta_schedule(10):tolist(), 1e-8, "cosine")
        assert_close_list({ 0.0394927824, 0.0674928357, 0.1105484166, 0.1703906001, 0.2434785936, 0.3218396619,
            0.4003302063, 0.4869571744, 0.6214270043, 0.999 }, sigmoid_beta_schedule(10):tolist(), 1e-8, "sigmoid")
        assert.are.equal(tide.float64, linear_beta_schedule(10).dtype)
    end)

    it("the buffers, q_sample, predict_start_from_noise, q_posterior", function()
        tide.manual_seed(0)
        local model = Unet({ dim = 8, dim_mults = { 1, 2 }, attn_dim_head = 4, attn_heads = 2 })
        -- diffusion = GaussianDiffusion(model, image_size = 8, timesteps = 10)
        local diffusion = GaussianDiffusion(model, { image_size = 8, timesteps = 10 })
        assert.are.equal(10, diffusion.num_timesteps)
        assert.is_false(diffusion.is_ddim_sampling)
        -- type(self) == GaussianDiffusion: learned_variance's out_dim (2 * channels) is refused
        assert.are.equal(GaussianDiffusion, diffusion.__class__)
        assert.has_error(function()
            GaussianDiffusion(Unet(8, { dim_mults = { 1, 2 }, attn_dim_head = 4, attn_heads = 2, learned_variance = true }),
                { image_size = 8, timesteps = 10 })
        end)
        assert.are.same({ 8, 8 }, diffusion.image_size)
        assert.are.equal(tide.float32, diffusion.betas.dtype)
        local names = {}
        for _, nb in ipairs(diffusion:named_buffers()) do names[nb[1]] = true end
        assert.is_true(names.posterior_mean_coef2 and names.loss_weight and names.sqrt_alphas_cumprod)
        assert_close_list({ -46.05170059, -3.6670804, -2.86969757, -2.28103805, -1.80109775, -1.41272628, -1.10226583,
            -0.83672929, -0.54561526, -0.0412548 }, diffusion.posterior_log_variance_clipped:tolist(), 1e-5, "logvar")
        assert_close_list({ 1.0, 0.63407385, 0.51453435, 0.44851896, 0.39588147, 0.34433073, 0.29261357, 0.24515754,
            0.20896502, 0.19853704 }, diffusion.posterior_mean_coef1:tolist(), 1e-5, "coef1")
        assert_close_list({ 0.96050721, 0.89567989, 0.79666388, 0.66091985, 0.5, 0.33908018, 0.20333613, 0.10432015,
            0.03949279, 3.949e-05 }, diffusion.loss_weight:tolist(), 1e-5, "loss_weight (pred_v)")

        local x_start = tide.rand(2, 3, 8, 8) * 2 - 1
        local noise = tide.randn(2, 3, 8, 8)
        local t = tide.tensor({ 0, 9 }):long()
        -- x = diffusion.q_sample(x_start = x_start, t = t, noise = noise)
        local x = diffusion:q_sample({ x_start = x_start, t = t, noise = noise })
        -- predict_start_from_noise inverts q_sample
        local back = diffusion:predict_start_from_noise(x, t, noise)
        assert.is_true(tide.allclose(back, x_start, { atol = 1e-4 }))
        -- and predict_start_from_v inverts predict_v
        local v = diffusion:predict_v(x_start, t, noise)
        assert.is_true(tide.allclose(diffusion:predict_start_from_v(x, t, v), x_start, { atol = 1e-4 }))
        -- @autocast('cuda', enabled = False) on q_sample: the decorator form, autocast off inside
        local inside = tide.autocast("cuda", { enabled = false })(function(a)
            return tide.is_autocast_enabled("cuda"), a
        end)
        local on, a = tide.autocast("cuda", function() return inside(5) end)
        assert.is_false(on)
        assert.are.equal(5, a)
        assert.has_error(function() tide.autocast("cuda")(5) end,
            "tide: autocast: the decorator form takes one function, got number; write "
            .. "f = tide.autocast(\"cuda\", {enabled = false})(function(...) ... end)")
        local mean, var, logvar = diffusion:q_posterior(x_start, x, t)
        assert.are.equal(tide.Size({ 2, 3, 8, 8 }), mean:size())
        assert.are.equal(tide.Size({ 2, 1, 1, 1 }), var:size())
        assert_close_list({ -46.05170059, -0.0412548 }, logvar:reshape(-1):tolist(), 1e-5, "q_posterior logvar")
        -- at t = 0 the posterior mean is x_start itself (coef1 = 1, coef2 = 0)
        assert.is_true(tide.allclose(mean[1], x_start[1], { atol = 1e-5 }))
    end)

    it("p_losses with pred_noise, pred_x0, pred_v; a few Adam steps", function()
        tide.manual_seed(1)
        -- one Unet for the three objectives (each wraps it in its own GaussianDiffusion)
        local model = Unet({ dim = 8, dim_mults = { 1, 2 }, attn_dim_head = 4, attn_heads = 2 })
        for _, objective in ipairs({ "pred_noise", "pred_x0", "pred_v" }) do
            local diffusion = GaussianDiffusion(model, { image_size = 8, timesteps = 10, objective = objective,
                beta_schedule = "cosine" })
            local training_images = tide.rand(2, 3, 8, 8)
            -- Trainer's Adam(diffusion_model.parameters(), lr = train_lr, betas = adam_betas)
            local opt = tide.optim.Adam(diffusion:parameters(), { lr = 2e-3, betas = { 0.9, 0.99 } })
            local times = tide.tensor({ 2, 7 }):long()
            local noise = tide.randn(2, 3, 8, 8)
            local losses = {}
            for step = 1, 2 do
                -- loss = diffusion(training_images) (fixed times and noise here, to compare the steps)
                local loss = diffusion:p_losses(diffusion.normalize(training_images), times, { noise = noise })
                assert_finite(loss:item(), objective .. " loss")
                losses[step] = loss:item()
                opt:zero_grad()
                loss:backward()
                opt:step()
            end
            assert(losses[2] < losses[1], objective .. ": loss did not decrease: " .. losses[1] .. " -> " .. losses[2])
            if objective == "pred_v" then
                -- the script's forward: random times; loss_reduction = 'none' gives one loss per image
                local per = diffusion(training_images, { loss_reduction = "none" })
                assert.are.equal(tide.Size({ 2 }), per:size())
            end
        end
    end)

    it("p_sample_loop and ddim_sample under tide.inference_mode", function()
        tide.manual_seed(2)
        local model = Unet({ dim = 8, dim_mults = { 1, 2 }, attn_dim_head = 4, attn_heads = 2 })
        local diffusion = GaussianDiffusion(model, { image_size = 8, timesteps = 4, objective = "pred_noise" })
        -- sampled_images = diffusion.sample(batch_size = 2)
        local sampled_images = diffusion:sample(2)
        assert.are.equal(tide.Size({ 2, 3, 8, 8 }), sampled_images:size())
        assert.is_false(sampled_images.requires_grad)
        assert.is_true(sampled_images:isfinite():all():item())
        local all = diffusion:p_sample_loop({ 1, 3, 8, 8 }, true)
        assert.are.equal(tide.Size({ 1, 5, 3, 8, 8 }), all:size())
        -- sampling_timesteps < timesteps: DDIM
        local ddim = GaussianDiffusion(model, { image_size = 8, timesteps = 10, sampling_timesteps = 3,
            ddim_sampling_eta = 0.5 })
        assert.is_true(ddim.is_ddim_sampling)
        local imgs = ddim:sample(2, true)
        assert.are.equal(tide.Size({ 2, 4, 3, 8, 8 }), imgs:size())
        assert.is_true(imgs:isfinite():all():item())
        -- the generated images are clipped to [-1, 1] then unnormalized to [0, 1] at the last step
        local last = imgs[{ {}, -1 }]
        assert.is_true(last:min():item() >= 0 and last:max():item() <= 1)
    end)
end)

-- the Trainer's helpers
local function has_int_squareroot(num)
    return (math.sqrt(num) ^ 2) == num
end

local function num_to_groups(num, divisor)
    -- groups = num // divisor
    local groups = math.floor(num / divisor)
    local remainder = num % divisor
    -- arr = [divisor] * groups
    local arr = {}
    for i = 1, groups do arr[i] = divisor end
    if remainder > 0 then
        table.insert(arr, remainder)
    end
    return arr
end

-- def cycle(dl): while True: for data in dl: yield data
local function cycle(dl)
    return coroutine.wrap(function()
        while true do
            for data in dl:iter() do
                coroutine.yield(data)
            end
        end
    end)
end

describe("denoising-diffusion-pytorch: the other paths and the Trainer's loop", function()
    it("self_condition, offset noise, min_snr_loss_weight, interpolate", function()
        tide.manual_seed(3)
        math.randomseed(3)
        local model = Unet({ dim = 8, dim_mults = { 1, 2 }, attn_dim_head = 4, attn_heads = 2, self_condition = true })
        local diffusion = GaussianDiffusion(model, { image_size = { 8, 8 }, timesteps = 10, offset_noise_strength = 0.1,
            min_snr_loss_weight = true, min_snr_gamma = 5 })
        -- maybe_clipped_snr.clamp_(max = min_snr_gamma): loss_weight is min(snr, 5) / (snr + 1)
        assert.is_true(diffusion.loss_weight:max():item() <= 5 / 6 + 1e-6)
        local img = tide.rand(2, 3, 8, 8)
        for _ = 1, 2 do
            local loss = diffusion(img)
            assert_finite(loss:item(), "self-conditioned loss")
            loss:backward()
        end
        -- interpolate(x1, x2, t = None, lam = 0.5)
        local interpolate = tide.inference_mode()(function(self, x1, x2, t, lam)
            lam = lam or 0.5
            local b, device = x1.shape[1], x1.device
            t = default(t, self.num_timesteps - 1)

            assert(x1.shape == x2.shape)

            -- t_batched = torch.full((b,), t, device = device)
            local t_batched = tide.full({ b }, t, { device = device })
            local xt1, xt2 = map(function(x) return self:q_sample(x, { t = t_batched }) end, { x1, x2 })

            local out = (1 - lam) * xt1 + lam * xt2

            local x_start = nil

            -- for i in tqdm(reversed(range(0, t)), ...):
            for i = t - 1, 0, -1 do
                local self_cond = self.self_condition and x_start or nil
                out, x_start = self:p_sample(out, i, self_cond)
            end

            return out
        end)
        local mid = interpolate(diffusion, tide.randn(2, 3, 8, 8), tide.randn(2, 3, 8, 8), 3)
        assert.are.equal(tide.Size({ 2, 3, 8, 8 }), mid:size())
        assert.is_true(mid:isfinite():all():item())
    end)

    it("Trainer.train: cycle(dl), gradient accumulation, clip_grad_norm_, EMA, num_to_groups sampling", function()
        tide.manual_seed(4)
        assert.is_true(has_int_squareroot(16))
        assert.is_false(has_int_squareroot(10))
        assert.are.same({ 4, 4, 1 }, num_to_groups(9, 4))
        local model = Unet({ dim = 8, dim_mults = { 1, 2 }, attn_dim_head = 4, attn_heads = 2 })
        local diffusion = GaussianDiffusion(model, { image_size = 8, timesteps = 10, sampling_timesteps = 2 })
        -- dl = DataLoader(self.ds, batch_size = train_batch_size, shuffle = True, pin_memory = True, num_workers = cpu_count())
        local ds = tide.data.TensorDataset(tide.rand(8, 3, 8, 8))
        local dl = tide.data.DataLoader(ds, { batch_size = 4, shuffle = true, pin_memory = true })
        local next_ = cycle(dl)
        -- self.opt = Adam(diffusion_model.parameters(), lr = train_lr, betas = adam_betas)
        local opt = tide.optim.Adam(diffusion:parameters(), { lr = 1e-3, betas = { 0.9, 0.99 } })
        -- self.ema = EMA(diffusion_model, beta = ema_decay, update_every = ema_update_every): ema_pytorch's
        -- copy.deepcopy(model) and its lerp_ update
        local ema_model = tide.deepcopy(diffusion)
        local gradient_accumulate_every, max_grad_norm, ema_decay = 2, 1., 0.995
        for _ = 1, 2 do
            diffusion:train()
            local total_loss = 0.
            for _ = 1, gradient_accumulate_every do
                -- data = next(self.dl).to(device)
                local data = next_():to("cpu")
                local loss = diffusion(data)
                loss = loss / gradient_accumulate_every
                total_loss = total_loss + loss:item()
                loss:backward()
            end
            assert_finite(total_loss, "total_loss")
            nn.utils.clip_grad_norm_(diffusion:parameters(), max_grad_norm)
            opt:step()
            opt:zero_grad()
            -- self.ema.update(): torch._foreach_lerp_(ema_params, current_params, 1. - beta)
            tide.no_grad(function()
                local ps, eps = diffusion:parameters(), ema_model:parameters()
                local before = eps[1]:clone()
                tide._foreach_lerp_(eps, ps, 1. - ema_decay)
                assert.is_true(before:lerp(ps[1], 1. - ema_decay):allclose(eps[1]))
            end)
        end
        ema_model:eval()
        -- batches = num_to_groups(self.num_samples, self.batch_size)
        local batches = num_to_groups(5, 4)
        -- all_images_list = list(map(lambda n: self.ema.ema_model.sample(batch_size=n), batches))
        local all_images_list = { map(function(n) return ema_model:sample(n) end, batches) }
        local all_images = tide.cat(all_images_list, { dim = 1 })
        assert.are.equal(tide.Size({ 5, 3, 8, 8 }), all_images:size())
        -- utils.save_image(all_images, str(self.results_folder / f'sample-{milestone}.png'), nrow = int(math.sqrt(self.num_samples)))
        local path = os.tmpname() .. ".png"
        tide.utils.save_image(all_images, path, { nrow = math.floor(math.sqrt(5)) })
        local f = assert(io.open(path, "rb"))
        assert.are.equal("\137PNG", f:read(4))
        f:close()
        os.remove(path)

        -- Trainer.save(milestone) / Trainer.load(milestone)
        local data = {
            step = 2,
            model = diffusion:state_dict(),
            opt = opt:state_dict(),
            ema = ema_model:state_dict(),
            scaler = nil,
            version = "2.1.1",
        }
        local ckpt = os.tmpname()
        tide.save(data, ckpt)
        -- data = torch.load(str(...), map_location=device, weights_only=True)
        local loaded = tide.load(ckpt, { map_location = "cpu", weights_only = true })
        os.remove(ckpt)
        local model2 = Unet({ dim = 8, dim_mults = { 1, 2 }, attn_dim_head = 4, attn_heads = 2 })
        local diffusion2 = GaussianDiffusion(model2, { image_size = 8, timesteps = 10, sampling_timesteps = 2 })
        diffusion2:load_state_dict(loaded["model"])
        local opt2 = tide.optim.Adam(diffusion2:parameters(), { lr = 1e-3, betas = { 0.9, 0.99 } })
        opt2:load_state_dict(loaded["opt"])
        assert.are.equal(2, loaded["step"])
        assert.are.equal("2.1.1", loaded["version"])
        assert.is_true(tide.equal(diffusion2.model.final_conv.weight, diffusion.model.final_conv.weight))
        assert.is_true(tide.equal(diffusion2.loss_weight, diffusion.loss_weight))
    end)
end)
