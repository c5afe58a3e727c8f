-- ported_scripts64_spec.lua — facebookresearch/DiT's models.py (modulate, TimestepEmbedder,
-- LabelEmbedder, DiTBlock with adaLN-Zero, FinalLayer, DiT with initialize_weights, unpatchify,
-- forward and forward_with_cfg, the 2-D sin-cos positional embedding of MAE's pos_embed.py) and
-- the training step of its train.py (AdamW, update_ema, requires_grad), with timm's PatchEmbed,
-- Attention and Mlp (timm.models.vision_transformer / layers, the version DiT imports) written
-- out, ported line for line at tiny sizes on random data; the loss is gaussian_diffusion's eps MSE
-- on q_sample over the linear beta schedule. The Python line stands above each Lua line that
-- differs from it; a line tide cannot write as Python does is marked `-- GAP:`. Dims and class
-- labels are 1-based: DiT's null (CFG) class num_classes is num_classes + 1 here. numpy's lines
-- (pos_embed) are written with tide tensors. Reference values: PyTorch 1.13 on this code.
local tide = require("tide")
local nn = tide.nn
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

---------------------------------------------------------------------------------------------
-- timm: PatchEmbed, Attention, Mlp
---------------------------------------------------------------------------------------------
-- class PatchEmbed(nn.Module):
local PatchEmbed = nn.Module:extend("PatchEmbed")
-- def __init__(self, img_size=224, patch_size=16, in_chans=3, embed_dim=768, norm_layer=None,
--              flatten=True, bias=True):
function PatchEmbed:init(img_size, patch_size, in_chans, embed_dim, norm_layer, flatten, bias)
    -- img_size = to_2tuple(img_size); patch_size = to_2tuple(patch_size)
    img_size, patch_size = { img_size, img_size }, { patch_size, patch_size }
    self.img_size = img_size
    self.patch_size = patch_size
    -- self.grid_size = (img_size[0] // patch_size[0], img_size[1] // patch_size[1])
    self.grid_size = { math.floor(img_size[1] / patch_size[1]),
        math.floor(img_size[2] / patch_size[2]) }
    self.num_patches = self.grid_size[1] * self.grid_size[2]
    -- self.flatten = flatten
    self.flatten = flatten ~= false
    -- self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size,
    --                       bias=bias)
    self.proj = nn.Conv2d(in_chans, embed_dim, { kernel_size = patch_size, stride = patch_size,
        bias = bias ~= false })
    -- self.norm = norm_layer(embed_dim) if norm_layer else nn.Identity()
    self.norm = norm_layer and norm_layer(embed_dim) or nn.Identity()
end

function PatchEmbed:forward(x)
    -- B, C, H, W = x.shape
    x = self.proj(x)
    if self.flatten then
        -- x = x.flatten(2).transpose(1, 2)  # BCHW -> BNC
        x = x:flatten(3):transpose(2, 3)
    end
    x = self.norm(x)
    return x
end

-- class Attention(nn.Module):
local Attention = nn.Module:extend("Attention")
-- def __init__(self, dim, num_heads=8, qkv_bias=False, attn_drop=0., proj_drop=0.):
function Attention:init(dim, opts)
    opts = opts or {}
    self.num_heads = opts.num_heads or 8
    -- head_dim = dim // num_heads
    local head_dim = math.floor(dim / self.num_heads)
    -- self.scale = head_dim ** -0.5
    self.scale = head_dim ^ -0.5
    -- self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
    self.qkv = nn.Linear(dim, dim * 3, { bias = opts.qkv_bias or false })
    self.attn_drop = nn.Dropout(opts.attn_drop or 0)
    self.proj = nn.Linear(dim, dim)
    self.proj_drop = nn.Dropout(opts.proj_drop or 0)
end

function Attention:forward(x)
    -- B, N, C = x.shape
    local B, N, C = x.shape[1], x.shape[2], x.shape[3]
    -- qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads)
    --     .permute(2, 0, 3, 1, 4)
    local qkv = self.qkv(x):reshape(B, N, 3, self.num_heads, math.floor(C / self.num_heads))
        :permute(3, 1, 4, 2, 5)
    -- q, k, v = qkv.unbind(0)   # make torchscript happy (cannot use tensor as tuple)
    local q, k, v = unpack(qkv:unbind(1))
    -- attn = (q @ k.transpose(-2, -1)) * self.scale
    local attn = q:matmul(k:transpose(-2, -1)) * self.scale
    -- attn = attn.softmax(dim=-1)
    attn = attn:softmax(-1)
    attn = self.attn_drop(attn)
    -- x = (attn @ v).transpose(1, 2).reshape(B, N, C)
    x = attn:matmul(v):transpose(2, 3):reshape(B, N, C)
    x = self.proj(x)
    x = self.proj_drop(x)
    return x
end

-- class Mlp(nn.Module):
local Mlp = nn.Module:extend("Mlp")
-- def __init__(self, in_features, hidden_features=None, out_features=None, act_layer=nn.GELU,
--              bias=True, drop=0.):
function Mlp:init(opts)
    -- out_features = out_features or in_features
    local out_features = opts.out_features or opts.in_features
    -- hidden_features = hidden_features or in_features
    local hidden_features = opts.hidden_features or opts.in_features
    local act_layer = opts.act_layer or nn.GELU
    local bias = opts.bias ~= false
    -- self.fc1 = nn.Linear(in_features, hidden_features, bias=bias)
    self.fc1 = nn.Linear(opts.in_features, hidden_features, { bias = bias })
    self.act = act_layer()
    self.drop1 = nn.Dropout(opts.drop or 0)
    -- self.fc2 = nn.Linear(hidden_features, out_features, bias=bias)
    self.fc2 = nn.Linear(hidden_features, out_features, { bias = bias })
    self.drop2 = nn.Dropout(opts.drop or 0)
end

function Mlp:forward(x)
    x = self.fc1(x)
    x = self.act(x)
    x = self.drop1(x)
    x = self.fc2(x)
    x = self.drop2(x)
    return x
end

---------------------------------------------------------------------------------------------
-- DiT models.py
---------------------------------------------------------------------------------------------
-- def modulate(x, shift, scale):
local function modulate(x, shift, scale)
    -- return x * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)
    return x * (1 + scale:unsqueeze(2)) + shift:unsqueeze(2)
end

-- class TimestepEmbedder(nn.Module):
local TimestepEmbedder = nn.Module:extend("TimestepEmbedder")
-- def __init__(self, hidden_size, frequency_embedding_size=256):
function TimestepEmbedder:init(hidden_size, frequency_embedding_size)
    frequency_embedding_size = frequency_embedding_size or 256
    self.mlp = nn.Sequential(
    -- nn.Linear(frequency_embedding_size, hidden_size, bias=True),
        nn.Linear(frequency_embedding_size, hidden_size, { bias = true }),
        nn.SiLU(),
        -- nn.Linear(hidden_size, hidden_size, bias=True),
        nn.Linear(hidden_size, hidden_size, { bias = true })
    )
    self.frequency_embedding_size = frequency_embedding_size
end

-- @staticmethod
-- def timestep_embedding(t, dim, max_period=10000):
function TimestepEmbedder.timestep_embedding(t, dim, max_period)
    max_period = max_period or 10000
    -- half = dim // 2
    local half = math.floor(dim / 2)
    -- freqs = torch.exp(
    --     -math.log(max_period) * torch.arange(start=0, end=half, dtype=torch.float32) / half
    -- ).to(device=t.device)
    local freqs = tide.exp(
        -math.log(max_period) * tide.arange(0, half, { dtype = "float32" }) / half
    ):to(t.device)
    -- args = t[:, None].float() * freqs[None]
    local args = t:unsqueeze(2):float() * freqs:unsqueeze(1)
    -- embedding = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
    local embedding = tide.cat({ tide.cos(args), tide.sin(args) }, -1)
    if dim % 2 == 1 then
        -- embedding = torch.cat([embedding, torch.zeros_like(embedding[:, :1])], dim=-1)
        embedding = tide.cat({ embedding, tide.zeros_like(embedding[{ {}, { 1, 1 } }]) }, -1)
    end
    return embedding
end

function TimestepEmbedder:forward(t)
    -- t_freq = self.timestep_embedding(t, self.frequency_embedding_size)
    local t_freq = self.timestep_embedding(t, self.frequency_embedding_size)
    local t_emb = self.mlp(t_freq)
    return t_emb
end

-- class LabelEmbedder(nn.Module):
local LabelEmbedder = nn.Module:extend("LabelEmbedder")
-- def __init__(self, num_classes, hidden_size, dropout_prob):
function LabelEmbedder:init(num_classes, hidden_size, dropout_prob)
    -- use_cfg_embedding = dropout_prob > 0
    local use_cfg_embedding = dropout_prob > 0 and 1 or 0
    -- self.embedding_table = nn.Embedding(num_classes + use_cfg_embedding, hidden_size)
    self.embedding_table = nn.Embedding(num_classes + use_cfg_embedding, hidden_size)
    self.num_classes = num_classes
    self.dropout_prob = dropout_prob
end

-- def token_drop(self, labels, force_drop_ids=None):
function LabelEmbedder:token_drop(labels, force_drop_ids)
    local drop_ids
    if force_drop_ids == nil then
        -- drop_ids = torch.rand(labels.shape[0], device=labels.device) < self.dropout_prob
        -- GAP: Lua's `<` on a table must return a boolean, so the elementwise compare is :lt
        drop_ids = tide.rand(labels.shape[1], { device = labels.device }):lt(self.dropout_prob)
    else
        -- drop_ids = force_drop_ids == 1
        drop_ids = force_drop_ids:eq(1)
    end
    -- labels = torch.where(drop_ids, self.num_classes, labels)
    -- (1-based labels: the null class is num_classes + 1)
    labels = tide.where(drop_ids, self.num_classes + 1, labels)
    return labels
end

-- def forward(self, labels, train, force_drop_ids=None):
function LabelEmbedder:forward(labels, train, force_drop_ids)
    local use_dropout = self.dropout_prob > 0
    -- if (train and use_dropout) or (force_drop_ids is not None):
    if (train and use_dropout) or (force_drop_ids ~= nil) then
        labels = self:token_drop(labels, force_drop_ids)
    end
    local embeddings = self.embedding_table(labels)
    return embeddings
end

-- class DiTBlock(nn.Module):
local DiTBlock = nn.Module:extend("DiTBlock")
-- def __init__(self, hidden_size, num_heads, mlp_ratio=4.0, **block_kwargs):
function DiTBlock:init(hidden_size, num_heads, mlp_ratio)
    mlp_ratio = mlp_ratio or 4.0
    -- self.norm1 = nn.LayerNorm(hidden_size, elementwise_affine=False, eps=1e-6)
    self.norm1 = nn.LayerNorm(hidden_size, { elementwise_affine = false, eps = 1e-6 })
    -- self.attn = Attention(hidden_size, num_heads=num_heads, qkv_bias=True, **block_kwargs)
    self.attn = Attention(hidden_size, { num_heads = num_heads, qkv_bias = true })
    -- self.norm2 = nn.LayerNorm(hidden_size, elementwise_affine=False, eps=1e-6)
    self.norm2 = nn.LayerNorm(hidden_size, { elementwise_affine = false, eps = 1e-6 })
    -- mlp_hidden_dim = int(hidden_size * mlp_ratio)
    local mlp_hidden_dim = math.floor(hidden_size * mlp_ratio)
    -- approx_gelu = lambda: nn.GELU(approximate="tanh")
    local approx_gelu = function() return nn.GELU({ approximate = "tanh" }) end
    -- self.mlp = Mlp(in_features=hidden_size, hidden_features=mlp_hidden_dim,
    --                act_layer=approx_gelu, drop=0)
    self.mlp = Mlp({ in_features = hidden_size, hidden_features = mlp_hidden_dim,
        act_layer = approx_gelu, drop = 0 })
    self.adaLN_modulation = nn.Sequential(
        nn.SiLU(),
        -- nn.Linear(hidden_size, 6 * hidden_size, bias=True)
        nn.Linear(hidden_size, 6 * hidden_size, { bias = true })
    )
end

function DiTBlock:forward(x, c)
    -- shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp =
    --     self.adaLN_modulation(c).chunk(6, dim=1)
    local ch = self.adaLN_modulation(c):chunk(6, 2)
    local shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp =
        ch[1], ch[2], ch[3], ch[4], ch[5], ch[6]
    -- x = x + gate_msa.unsqueeze(1) * self.attn(modulate(self.norm1(x), shift_msa, scale_msa))
    x = x + gate_msa:unsqueeze(2) * self.attn(modulate(self.norm1(x), shift_msa, scale_msa))
    -- x = x + gate_mlp.unsqueeze(1) * self.mlp(modulate(self.norm2(x), shift_mlp, scale_mlp))
    x = x + gate_mlp:unsqueeze(2) * self.mlp(modulate(self.norm2(x), shift_mlp, scale_mlp))
    return x
end

-- class FinalLayer(nn.Module):
local FinalLayer = nn.Module:extend("FinalLayer")
-- def __init__(self, hidden_size, patch_size, out_channels):
function FinalLayer:init(hidden_size, patch_size, out_channels)
    -- self.norm_final = nn.LayerNorm(hidden_size, elementwise_affine=False, eps=1e-6)
    self.norm_final = nn.LayerNorm(hidden_size, { elementwise_affine = false, eps = 1e-6 })
    -- self.linear = nn.Linear(hidden_size, patch_size * patch_size * out_channels, bias=True)
    self.linear = nn.Linear(hidden_size, patch_size * patch_size * out_channels, { bias = true })
    self.adaLN_modulation = nn.Sequential(
        nn.SiLU(),
        -- nn.Linear(hidden_size, 2 * hidden_size, bias=True)
        nn.Linear(hidden_size, 2 * hidden_size, { bias = true })
    )
end

function FinalLayer:forward(x, c)
    -- shift, scale = self.adaLN_modulation(c).chunk(2, dim=1)
    local ch = self.adaLN_modulation(c):chunk(2, 2)
    local shift, scale = ch[1], ch[2]
    x = modulate(self.norm_final(x), shift, scale)
    x = self.linear(x)
    return x
end

local get_2d_sincos_pos_embed -- defined below, as in models.py

-- class DiT(nn.Module):
local DiT = nn.Module:extend("DiT")
-- def __init__(self, input_size=32, patch_size=2, in_channels=4, hidden_size=1152, depth=28,
--     num_heads=16, mlp_ratio=4.0, class_dropout_prob=0.1, num_classes=1000, learn_sigma=True):
function DiT:init(o)
    local input_size, patch_size, in_channels = o.input_size or 32, o.patch_size or 2,
        o.in_channels or 4
    local hidden_size, depth, num_heads = o.hidden_size or 1152, o.depth or 28, o.num_heads or 16
    local mlp_ratio, class_dropout_prob = o.mlp_ratio or 4.0, o.class_dropout_prob or 0.1
    local num_classes = o.num_classes or 1000
    local learn_sigma = o.learn_sigma ~= false
    self.learn_sigma = learn_sigma
    self.in_channels = in_channels
    -- self.out_channels = in_channels * 2 if learn_sigma else in_channels
    self.out_channels = learn_sigma and in_channels * 2 or in_channels
    self.patch_size = patch_size
    self.num_heads = num_heads

    -- self.x_embedder = PatchEmbed(input_size, patch_size, in_channels, hidden_size, bias=True)
    self.x_embedder = PatchEmbed(input_size, patch_size, in_channels, hidden_size, nil, true, true)
    self.t_embedder = TimestepEmbedder(hidden_size)
    self.y_embedder = LabelEmbedder(num_classes, hidden_size, class_dropout_prob)
    local num_patches = self.x_embedder.num_patches
    -- Will use fixed sin-cos embedding:
    -- self.pos_embed = nn.Parameter(torch.zeros(1, num_patches, hidden_size),
    --                               requires_grad=False)
    self.pos_embed = nn.Parameter(tide.zeros(1, num_patches, hidden_size),
        { requires_grad = false })

    -- self.blocks = nn.ModuleList([
    --     DiTBlock(hidden_size, num_heads, mlp_ratio=mlp_ratio) for _ in range(depth)
    -- ])
    local blocks = {}
    for i = 1, depth do blocks[i] = DiTBlock(hidden_size, num_heads, mlp_ratio) end
    self.blocks = nn.ModuleList(blocks)
    self.final_layer = FinalLayer(hidden_size, patch_size, self.out_channels)
    self:initialize_weights()
end

function DiT:initialize_weights()
    -- Initialize transformer layers:
    local function _basic_init(module)
        -- if isinstance(module, nn.Linear):
        if tide.isinstance(module, nn.Linear) then
            -- torch.nn.init.xavier_uniform_(module.weight)
            nn.init.xavier_uniform_(module.weight)
            if module.bias ~= nil then
                nn.init.constant_(module.bias, 0)
            end
        end
    end
    self:apply(_basic_init)

    -- Initialize (and freeze) pos_embed by sin-cos embedding:
    -- pos_embed = get_2d_sincos_pos_embed(self.pos_embed.shape[-1],
    --                                     int(self.x_embedder.num_patches ** 0.5))
    local pos_embed = get_2d_sincos_pos_embed(self.pos_embed.shape[3],
        math.floor(self.x_embedder.num_patches ^ 0.5))
    -- self.pos_embed.data.copy_(torch.from_numpy(pos_embed).float().unsqueeze(0))
    self.pos_embed.data:copy_(pos_embed:float():unsqueeze(1))

    -- Initialize patch_embed like nn.Linear (instead of nn.Conv2d):
    local w = self.x_embedder.proj.weight.data
    -- nn.init.xavier_uniform_(w.view([w.shape[0], -1]))
    nn.init.xavier_uniform_(w:view({ w.shape[1], -1 }))
    nn.init.constant_(self.x_embedder.proj.bias, 0)

    -- Initialize label embedding table:
    -- nn.init.normal_(self.y_embedder.embedding_table.weight, std=0.02)
    nn.init.normal_(self.y_embedder.embedding_table.weight, { std = 0.02 })

    -- Initialize timestep embedding MLP:
    -- nn.init.normal_(self.t_embedder.mlp[0].weight, std=0.02)
    nn.init.normal_(self.t_embedder.mlp[1].weight, { std = 0.02 })
    -- nn.init.normal_(self.t_embedder.mlp[2].weight, std=0.02)
    nn.init.normal_(self.t_embedder.mlp[3].weight, { std = 0.02 })

    -- Zero-out adaLN modulation layers in DiT blocks:
    -- for block in self.blocks:
    for _, block in ipairs(self.blocks) do
        nn.init.constant_(block.adaLN_modulation[-1].weight, 0)
        nn.init.constant_(block.adaLN_modulation[-1].bias, 0)
    end

    -- Zero-out output layers:
    nn.init.constant_(self.final_layer.adaLN_modulation[-1].weight, 0)
    nn.init.constant_(self.final_layer.adaLN_modulation[-1].bias, 0)
    nn.init.constant_(self.final_layer.linear.weight, 0)
    nn.init.constant_(self.final_layer.linear.bias, 0)
end

function DiT:unpatchify(x)
    local c = self.out_channels
    -- p = self.x_embedder.patch_size[0]
    local p = self.x_embedder.patch_size[1]
    -- h = w = int(x.shape[1] ** 0.5)
    local h = math.floor(x.shape[2] ^ 0.5)
    -- assert h * w == x.shape[1]
    assert(h * h == x.shape[2])

    -- x = x.reshape(shape=(x.shape[0], h, w, p, p, c))
    x = x:reshape({ x.shape[1], h, h, p, p, c })
    -- x = torch.einsum('nhwpqc->nchpwq', x)
    x = tide.einsum("nhwpqc->nchpwq", x)
    -- imgs = x.reshape(shape=(x.shape[0], c, h * p, h * p))
    local imgs = x:reshape({ x.shape[1], c, h * p, h * p })
    return imgs
end

function DiT:forward(x, t, y)
    -- x = self.x_embedder(x) + self.pos_embed  # (N, T, D), where T = H * W / patch_size ** 2
    x = self.x_embedder(x) + self.pos_embed
    t = self.t_embedder(t)                 -- (N, D)
    y = self.y_embedder(y, self.training)  -- (N, D)
    local c = t + y                        -- (N, D)
    -- for block in self.blocks:
    for _, block in ipairs(self.blocks) do
        x = block(x, c)                    -- (N, T, D)
    end
    x = self.final_layer(x, c)             -- (N, T, patch_size ** 2 * out_channels)
    x = self:unpatchify(x)                 -- (N, out_channels, H, W)
    return x
end

function DiT:forward_with_cfg(x, t, y, cfg_scale)
    -- half = x[: len(x) // 2]
    local half = x[{ { 1, math.floor(#x / 2) } }]
    -- combined = torch.cat([half, half], dim=0)
    local combined = tide.cat({ half, half }, 1)
    local model_out = self:forward(combined, t, y)
    -- eps, rest = model_out[:, :3], model_out[:, 3:]
    local eps, rest = model_out[{ {}, { 1, 3 } }], model_out[{ {}, { 4, -1 } }]
    -- cond_eps, uncond_eps = torch.split(eps, len(eps) // 2, dim=0)
    local sp = tide.split(eps, math.floor(#eps / 2), 1)
    local cond_eps, uncond_eps = sp[1], sp[2]
    local half_eps = uncond_eps + cfg_scale * (cond_eps - uncond_eps)
    -- eps = torch.cat([half_eps, half_eps], dim=0)
    eps = tide.cat({ half_eps, half_eps }, 1)
    -- return torch.cat([eps, rest], dim=1)
    return tide.cat({ eps, rest }, 2)
end

-- Sine/Cosine Positional Embedding Functions (MAE's util/pos_embed.py; numpy there)
-- def get_1d_sincos_pos_embed_from_grid(embed_dim, pos):
local function get_1d_sincos_pos_embed_from_grid(embed_dim, pos)
    assert(embed_dim % 2 == 0)
    -- omega = np.arange(embed_dim // 2, dtype=np.float64)
    local omega = tide.arange(math.floor(embed_dim / 2), { dtype = "float64" })
    -- omega /= embed_dim / 2.
    omega:div_(embed_dim / 2.)
    -- omega = 1. / 10000**omega  # (D/2,)
    omega = 1. / tide.pow(10000, omega)

    -- pos = pos.reshape(-1)  # (M,)
    pos = pos:reshape(-1):double()
    -- out = np.einsum('m,d->md', pos, omega)  # (M, D/2), outer product
    local out = tide.einsum("m,d->md", pos, omega)

    -- emb_sin = np.sin(out) # (M, D/2)
    local emb_sin = tide.sin(out)
    -- emb_cos = np.cos(out) # (M, D/2)
    local emb_cos = tide.cos(out)

    -- emb = np.concatenate([emb_sin, emb_cos], axis=1)  # (M, D)
    local emb = tide.cat({ emb_sin, emb_cos }, 2)
    return emb
end

-- def get_2d_sincos_pos_embed_from_grid(embed_dim, grid):
local function get_2d_sincos_pos_embed_from_grid(embed_dim, grid)
    assert(embed_dim % 2 == 0)
    -- use half of dimensions to encode grid_h
    -- emb_h = get_1d_sincos_pos_embed_from_grid(embed_dim // 2, grid[0])  # (H*W, D/2)
    local emb_h = get_1d_sincos_pos_embed_from_grid(math.floor(embed_dim / 2), grid[1])
    -- emb_w = get_1d_sincos_pos_embed_from_grid(embed_dim // 2, grid[1])  # (H*W, D/2)
    local emb_w = get_1d_sincos_pos_embed_from_grid(math.floor(embed_dim / 2), grid[2])
    -- emb = np.concatenate([emb_h, emb_w], axis=1) # (H*W, D)
    local emb = tide.cat({ emb_h, emb_w }, 2)
    return emb
end

-- def get_2d_sincos_pos_embed(embed_dim, grid_size, cls_token=False, extra_tokens=0):
function get_2d_sincos_pos_embed(embed_dim, grid_size, cls_token, extra_tokens)
    extra_tokens = extra_tokens or 0
    -- grid_h = np.arange(grid_size, dtype=np.float32)
    local grid_h = tide.arange(grid_size, { dtype = "float32" })
    -- grid_w = np.arange(grid_size, dtype=np.float32)
    local grid_w = tide.arange(grid_size, { dtype = "float32" })
    -- grid = np.meshgrid(grid_w, grid_h)  # here w goes first
    local grid = tide.meshgrid(grid_w, grid_h, { indexing = "xy" })
    -- grid = np.stack(grid, axis=0)
    grid = tide.stack(grid, 1)

    -- grid = grid.reshape([2, 1, grid_size, grid_size])
    grid = grid:reshape({ 2, 1, grid_size, grid_size })
    local pos_embed = get_2d_sincos_pos_embed_from_grid(embed_dim, grid)
    if cls_token and extra_tokens > 0 then
        -- pos_embed = np.concatenate([np.zeros([extra_tokens, embed_dim]), pos_embed], axis=0)
        pos_embed = tide.cat({ tide.zeros({ extra_tokens, embed_dim }, { dtype = "float64" }),
            pos_embed }, 1)
    end
    return pos_embed
end

---------------------------------------------------------------------------------------------
-- DiT train.py helpers
---------------------------------------------------------------------------------------------
-- @torch.no_grad()
-- def update_ema(ema_model, model, decay=0.9999):
local update_ema = tide.no_grad()(function(ema_model, model, decay)
    decay = decay or 0.9999
    -- ema_params = OrderedDict(ema_model.named_parameters())
    local ema_params = {}
    for _, np in ipairs(ema_model:named_parameters()) do ema_params[np[1]] = np[2] end
    -- model_params = OrderedDict(model.named_parameters())
    -- for name, param in model_params.items():
    for _, np in ipairs(model:named_parameters()) do
        local name, param = np[1], np[2]
        -- ema_params[name].mul_(decay).add_(param.data, alpha=1 - decay)
        ema_params[name]:mul_(decay):add_(param.data, { alpha = 1 - decay })
    end
end)

-- def requires_grad(model, flag=True):
local function requires_grad(model, flag)
    if flag == nil then flag = true end
    -- for p in model.parameters():
    for _, p in ipairs(model:parameters()) do
        p.requires_grad = flag
    end
end

---------------------------------------------------------------------------------------------
-- checks
---------------------------------------------------------------------------------------------
local function tiny()
    return DiT({ input_size = 8, patch_size = 2, in_channels = 4, hidden_size = 32, depth = 2,
        num_heads = 4, num_classes = 5 })
end

-- the weights the PyTorch 1.13 script fills: the i-th of named_parameters (1-based) gets
-- 0.08 * sin(0.7 * j + 1.3 * i) at flat index j (0-based); pos_embed keeps its sin-cos values
local function fill(model)
    tide.no_grad(function()
        for i, np in ipairs(model:named_parameters()) do
            local name, p = np[1], np[2]
            if name ~= "pos_embed" then
                local j = tide.arange(p:numel(), { dtype = "float32" })
                p:copy_((0.08 * tide.sin(0.7 * j + 1.3 * i)):view(p.shape))
            end
        end
    end)
end

local function weighted_sum(out)
    local w = tide.cos(0.01 * tide.arange(out:numel(), { dtype = "float32" })):view(out.shape)
    return (out * w):sum():item()
end

local function list(t)
    return t:double():flatten():tolist()
end

describe("facebookresearch/DiT models.py", function()
    it("timestep_embedding and the 2-D sin-cos pos_embed match PyTorch / numpy", function()
        -- TimestepEmbedder.timestep_embedding(torch.tensor([0., 1.5, 999.]), 7): odd dim, pad
        local te = TimestepEmbedder.timestep_embedding(tide.tensor({ 0., 1.5, 999. }), 7)
        assert.are.same({ 3, 7 }, te.shape)
        assert_close_list({ 1, 1, 1, 0, 0, 0, 0, 0.070737198, 0.99757725, 0.999994814,
            0.997494996, 0.069567591, 0.00323164649, 0, 0.999649823, -0.728670716, -0.549264669,
            -0.0264607519, 0.684864163, 0.835648477, 0 }, list(te), 1e-5, "timestep_embedding")
        -- get_2d_sincos_pos_embed(8, 2): float64 as numpy's
        local pe = get_2d_sincos_pos_embed(8, 2)
        assert.are.same({ 4, 8 }, pe.shape)
        assert.are.equal("float64", pe.dtype)
        assert_close_list({ 0, 0, 1, 1, 0, 0, 1, 1, 0.841470985, 0.00999983333, 0.540302306,
            0.99995, 0, 0, 1, 1, 0, 0, 1, 1, 0.841470985, 0.00999983333, 0.540302306, 0.99995,
            0.841470985, 0.00999983333, 0.540302306, 0.99995, 0.841470985, 0.00999983333,
            0.540302306, 0.99995 }, list(pe), 1e-8, "pos_embed(8, 2)")
        -- cls_token with extra_tokens: a zero row first
        assert.are.same({ 5, 8 }, get_2d_sincos_pos_embed(8, 2, true, 1).shape)
    end)

    it("DiTBlock (adaLN-Zero, timm Attention, Mlp with tanh GELU) matches PyTorch 1.13", function()
        local b = DiTBlock(8, 2)
        -- the i-th of named_parameters gets 0.5 * sin(0.7 * j + 1.3 * i), j the 0-based index
        tide.no_grad(function()
            for i, np in ipairs(b:named_parameters()) do
                local j = tide.arange(np[2]:numel(), { dtype = "float32" })
                np[2]:copy_((0.5 * tide.sin(0.7 * j + 1.3 * i)):view(np[2].shape))
            end
        end)
        local x = 2 * tide.sin(0.3 * tide.arange(2 * 3 * 8, { dtype = "float32" })):view(2, 3, 8)
        local c = tide.cos(0.2 * tide.arange(16, { dtype = "float32" })):view(2, 8)
        local out = b(x, c)
        assert.are.same({ 2, 3, 8 }, out.shape)
        -- (exact GELU in place of approx_gelu moves these by up to 5e-5)
        assert_close_list({ 2.22694397, -1.40290403, 7.29462099, 3.43416405, -0.740621328,
            6.03704691, 3.43095684, 4.30283022, 5.87107325, -13.7442741, 5.05053854, -1.46585584,
            -8.87632656, 5.848557, -10.2748041, -6.02132511, -0.763691187, -2.05073595,
            2.78429174, 0.989633501, -1.27981925, 1.71480906, 2.86179471, 3.90577388, 3.1330924,
            0.360872149, 4.12978649, 0.452119946, 1.72092962, 3.94059515, -0.563704312,
            -0.398858428, 0.260350198, -0.27459085, -1.40536046, -2.35466075, -1.56231165,
            0.237318397, -3.74193358, -1.17441368, 0.0253367424, -1.8781507, 1.03699815,
            1.70923972, 1.88562679, -0.424234748, 4.97965193, 1.04307497 }, list(out), 5e-6,
            "DiTBlock")
    end)

    it("DiT builds with initialize_weights: frozen pos_embed, zero adaLN, zero output", function()
        tide.manual_seed(0)
        local m = tiny()
        assert.are.equal(16, m.x_embedder.num_patches)
        assert.are.same({ 1, 16, 32 }, m.pos_embed.shape)
        assert.is_false(m.pos_embed.requires_grad)
        -- PyTorch 1.13: m.pos_embed.sum(), (m.pos_embed * cos(0.01 * arange)).sum()
        assert.is_true(ported.close(m.pos_embed:sum():item(), 254.989013671875, 1e-5))
        assert.is_true(ported.close(weighted_sum(m.pos_embed), -47.7485466003418, 1e-5))
        -- named_parameters: PyTorch's 32 in its order (pos_embed first: own before children)
        local names = {}
        for _, np in ipairs(m:named_parameters()) do names[#names + 1] = np[1] end
        assert.are.equal(32, #names)
        assert.are.equal("pos_embed", names[1])
        assert.are.equal("x_embedder.proj.weight", names[2])
        assert.are.equal("y_embedder.embedding_table.weight", names[8])
        -- tide's names count list entries from 1: PyTorch's "final_layer.adaLN_modulation.1.bias"
        assert.are.equal("final_layer.adaLN_modulation.2.bias", names[32])
        -- the null class row: num_classes + 1 embeddings with dropout_prob > 0
        assert.are.same({ 6, 32 }, m.y_embedder.embedding_table.weight.shape)
        -- xavier_uniform_ through the view reached the conv weight: bound sqrt(6 / (32 + 16))
        local wx = m.x_embedder.proj.weight
        assert.are.same({ 32, 4, 2, 2 }, wx.shape)
        local amax = wx:abs():max():item()
        assert.is_true(amax > 0.2 and amax <= math.sqrt(6 / 48) + 1e-6)
        -- _basic_init: a Linear's bias zeroed, the attention's qkv xavier
        assert.are.equal(0, m.blocks[1].attn.qkv.bias:abs():sum():item())
        assert.is_true(m.blocks[1].attn.qkv.weight:abs():max():item() > 0)
        -- normal_(std=0.02) on the timestep MLP and the label table
        local sd = m.t_embedder.mlp[1].weight:std():item()
        assert.is_true(sd > 0.015 and sd < 0.025)
        -- adaLN-Zero: the output is exactly zero at init
        local x = tide.randn(2, 4, 8, 8)
        local out = m(x, tide.tensor({ 3., 500. }), tide.tensor({ 2, 5 }))
        assert.are.same({ 2, 8, 8, 8 }, out.shape)
        assert.are.equal(0, out:abs():sum():item())
    end)

    it("forward and forward_with_cfg match PyTorch 1.13 for the same weights", function()
        tide.manual_seed(0)
        local m = tiny()
        fill(m)
        m:eval()
        local x = tide.sin(0.1 * tide.arange(2 * 4 * 8 * 8, { dtype = "float32" })):view(2, 4, 8, 8)
        -- t = torch.tensor([3., 500.]); y = torch.tensor([1, 4])  (1-based: 2, 5)
        local out = m(x, tide.tensor({ 3., 500. }), tide.tensor({ 2, 5 }))
        assert.are.same({ 2, 8, 8, 8 }, out.shape)
        assert.is_true(ported.close(out:sum():item(), 2.8218278884887695, 1e-4))
        assert.is_true(ported.close(weighted_sum(out), 20.012784957885742, 1e-4))
        assert_close_list({ -0.125613838, 0.269567609, -0.0380157828, 0.168647557, 0.128373086,
            0.0164989009 }, list(out:flatten():narrow(1, 1, 6)), 1e-4, "out")
        assert.is_true(ported.close(out[{ 2, 8, 8, 8 }]:item(), -0.410947144, 1e-4))

        -- forward_with_cfg: labels {2, 5, null, null} (PyTorch's [1, 4, 5, 5]), scale 4
        local x4 = tide.sin(0.1 * tide.arange(4 * 4 * 8 * 8, { dtype = "float32" }))
            :view(4, 4, 8, 8)
        local o = m:forward_with_cfg(x4, tide.tensor({ 3., 500., 3., 500. }),
            tide.tensor({ 2, 5, 6, 6 }), 4.0)
        assert.are.same({ 4, 8, 8, 8 }, o.shape)
        assert.is_true(ported.close(o:sum():item(), 5.563032627105713, 1e-4))
        assert.is_true(ported.close(weighted_sum(o), 18.715347290039062, 1e-4))
        assert_close_list({ -0.166001588, 0.362499028, -0.254567921, 0.210136726, -0.224398285,
            -0.0187351219, -0.00935688615, -0.153851047 }, list(o[{ 1, {}, 1, 1 }]), 1e-4,
            "cfg[0, :, 0, 0]")
        assert_close_list({ -0.3684614, 0.208522886, -0.0272945128, -0.00149261206, 0.281248897,
            -0.27594772, 0.327557892, -0.407224536 }, list(o[{ 4, {}, 8, 8 }]), 1e-4,
            "cfg[3, :, 7, 7]")
        -- the guided eps is the same for both halves; the rest (channels 4..8) differs
        assert.is_true(tide.equal(o[{ { 1, 2 }, { 1, 3 } }], o[{ { 3, 4 }, { 1, 3 } }]))
    end)

    it("token_drop: rand < dropout_prob, force_drop_ids, the CFG null class", function()
        local le = LabelEmbedder(5, 8, 0.5)
        local labels = tide.tensor({ 1, 2, 3, 4 })
        -- force_drop_ids == 1 -> the null class num_classes + 1
        local dropped = le:token_drop(labels, tide.tensor({ 1, 0, 1, 0 }))
        assert.are.same({ 6, 2, 6, 4 }, dropped:tolist())
        -- random drops: each label kept or replaced by 6
        tide.manual_seed(3)
        local seen = {}
        for _ = 1, 4 do
            for i, v in ipairs(le:token_drop(labels):tolist()) do
                assert.is_true(v == i or v == 6)
                seen[v == 6] = true
            end
        end
        assert.is_true(seen[true] and seen[false])
        -- forward in train mode embeds the dropped labels; eval (train false) never drops
        assert.are.same({ 4, 8 }, le(labels, true).shape)
        assert.is_true(tide.equal(le(labels, false), le.embedding_table(labels)))
    end)

    it("train.py: AdamW on the eps MSE with an EMA copy (requires_grad false)", function()
        tide.manual_seed(0)
        local model = tiny()
        -- set adaLN and the final layer off zero so every weight gets a gradient at step 1
        fill(model)
        -- ema = deepcopy(model).to(device)
        local ema = tide.deepcopy(model)
        requires_grad(ema, false)
        -- opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0)
        local opt = optim.AdamW(model:parameters(), { lr = 1e-4, weight_decay = 0 })
        update_ema(ema, model, 0) -- Ensure EMA is initialized with synced weights
        model:train()
        ema:eval()
        for _, p in ipairs(ema:parameters()) do assert.is_false(p.requires_grad) end
        local frozen = model.pos_embed:clone()
        local w0 = model.blocks[1].attn.qkv.weight:clone()

        tide.manual_seed(1)
        local x = tide.randn(4, 4, 8, 8)
        local y = tide.randint(1, 6, { 4 })   -- y = randint over the 5 classes (1-based)
        local noise = tide.randn(4, 4, 8, 8)
        -- create_diffusion(timestep_respacing=""): get_named_beta_schedule("linear", 1000)
        -- betas = np.linspace(beta_start, beta_end, num_diffusion_timesteps, dtype=np.float64)
        local betas = tide.linspace(0.0001, 0.02, 1000, { dtype = "float64" })
        -- alphas_cumprod = np.cumprod(1.0 - betas, axis=0)  (float32 here, the model's dtype)
        local alphas_cumprod = tide.cumprod(1.0 - betas, 1):float()
        local losses, ema_before = {}, nil
        for step = 1, 3 do
            -- t = torch.randint(0, diffusion.num_timesteps, (x.shape[0],), device=device)
            local t = tide.randint(0, 1000, { x.shape[1] })
            -- diffusion.training_losses: q_sample(x_start, t, noise) on the linear schedule,
            -- sqrt(alphas_cumprod[t]) * x_start + sqrt(1 - alphas_cumprod[t]) * noise
            -- (t is 0-based as the timestep the model embeds; +1 to index)
            local a = alphas_cumprod:index_select(1, t + 1):view(-1, 1, 1, 1)
            local x_t = a:sqrt() * x + (1 - a):sqrt() * noise
            local model_output = model(x_t, t:float(), y)
            -- model_output, model_var_values = th.split(model_output, C, dim=1)  (learn_sigma)
            local sp = tide.split(model_output, 4, 2)
            local eps, var = sp[1], sp[2]
            assert.are.same({ 4, 4, 8, 8 }, var.shape)
            -- terms["mse"] = mean_flat((target - model_output) ** 2); loss = ....mean()
            local loss = ((noise - eps) ^ 2):mean({ 2, 3, 4 }):mean()
            losses[step] = loss:item()
            assert_finite(losses[step], "loss")
            opt:zero_grad()
            loss:backward()
            opt:step()
            if step == 3 then ema_before = ema.blocks[1].attn.qkv.weight:clone() end
            update_ema(ema, model)
        end
        assert.is_true(losses[3] < losses[1])
        -- pos_embed stays frozen (no grad, AdamW skips it)
        assert.is_nil(model.pos_embed.grad)
        assert.is_true(tide.equal(model.pos_embed, frozen))
        -- EMA moved toward the model: ema = decay * ema + (1 - decay) * param at each step, so
        -- it left the initial weights by a small step in the direction the model went
        local ema_w, w = ema.blocks[1].attn.qkv.weight, model.blocks[1].attn.qkv.weight
        local moved, went = ema_w - w0, w - w0
        assert.is_true(went:abs():max():item() > 1e-4) -- AdamW moved the model ~lr per step
        local m_ema = moved:abs():max():item()
        assert.is_true(m_ema > 0 and m_ema < 1e-3 * went:abs():max():item())
        -- (elementwise the step is near float32's spacing at these weights: the sum says it)
        assert.is_true((moved * went):sum():item() > 0)
        -- the last update is exactly train.py's formula, in float32
        local want = ema_before * 0.9999 + w * (1 - 0.9999)
        assert.is_true(tide.allclose(ema_w, want, { atol = 1e-7, rtol = 0 }))
        -- the frozen pos_embed goes through update_ema too: the model's up to rounding (train.py's
        -- TODO: "small numerical changes of pos_embed")
        assert.is_true(tide.allclose(ema.pos_embed, model.pos_embed, { atol = 1e-6, rtol = 0 }))
    end)
end)
