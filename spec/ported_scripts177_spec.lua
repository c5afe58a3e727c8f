-- ported_scripts177_spec.lua — black-forest-labs/flux's src/flux/math.py (attention, rope,
-- apply_rope) and src/flux/modules/layers.py (EmbedND, timestep_embedding, MLPEmbedder, RMSNorm,
-- QKNorm, SelfAttention, ModulationOut, Modulation, DoubleStreamBlock, SingleStreamBlock,
-- LastLayer), ported line for line at tiny sizes (hidden 16, 2 heads of 8, axes_dim {2, 2, 4},
-- 6 img tokens on a 2 x 3 grid, 3 txt tokens, batch 2). einops is tide.einops, the attention
-- tide's F.scaled_dot_product_attention. The Python line stands above each Lua line that
-- differs from it. Dims and indices are 1-based.
-- The reference values are PyTorch 1.13's on the same modules (SDPA written out, einops as
-- reshape / permute), every parameter in named_parameters order (k = 0, 1, ...) set to
-- 0.3 * sin(0.731 * arange(numel) + 1.37 * k), each module on its own.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local einops = tide.einops
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list

local REF = {
    rope_shape = { 2, 9, 2, 2, 2 },
    rope = { 1, -0, 0, 1, 1, -0, 0, 1, 56.991245, 77.895729, 77.655739 },
    pe_shape = { 2, 1, 9, 4, 2, 2 },
    pe = { 1, -0, 0, 1, 123.47487, 154.47702, 149.09224 },
    vec = { -0.23604554, 0.099988908, 0.30545676, 0.25462246, 0.43467882, 4.7855072, 4.7518978 },
    double_names = { "img_mod.lin.weight", "img_mod.lin.bias", "img_attn.qkv.weight",
        "img_attn.qkv.bias",
        "img_attn.norm.query_norm.scale", "img_attn.norm.key_norm.scale", "img_attn.proj.weight",
        "img_attn.proj.bias", "img_mlp.0.weight", "img_mlp.0.bias", "img_mlp.2.weight",
        "img_mlp.2.bias", "txt_mod.lin.weight", "txt_mod.lin.bias", "txt_attn.qkv.weight",
        "txt_attn.qkv.bias", "txt_attn.norm.query_norm.scale", "txt_attn.norm.key_norm.scale",
        "txt_attn.proj.weight", "txt_attn.proj.bias", "txt_mlp.0.weight", "txt_mlp.0.bias",
        "txt_mlp.2.weight", "txt_mlp.2.bias" },
    double_img = { 0.20780694, 0.089637622, 0.49652842, 1.0824343, 3.0152442, 129.73215,
        129.75922 },
    double_txt = { 0.4938848, 0.087997943, 0.24979064, 0.95280808, -12.458704, 66.806892,
        66.92691 },
    single_names = { "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias",
        "norm.query_norm.scale", "norm.key_norm.scale", "modulation.lin.weight",
        "modulation.lin.bias" },
    single = { 0.29392397, 0.32766739, 0.36305523, 0.41785234, -21.49292, 202.57539, 202.46312 },
    final_shape = { 2, 6, 4 },
    final = { -0.31161118, 0.01533547, 0.3831231, 0.49681821, 12.290361, 23.862755, 21.360598 },
    loss = 0.32635519,
    qkv_grad = { -0.00016948274, -0.00021032615, -0.0002024244, -0.000140403, 0.00035325927,
        1.2737989,
        1.2737997 },
}

-- every parameter, in named_parameters order, from the formula above
local function fill(model)
    tide.no_grad(function()
        for k, np_ in ipairs(model:named_parameters()) do
            local p = np_[2]
            local v = (tide.arange(p:numel()):float() * 0.731 + 1.37 * (k - 1)):sin() * 0.3
            p:copy_(v:view(p.shape))
        end
    end)
end

-- torch.sin(a * torch.arange(n).float() + b)
local function seq(n, a, b)
    return (tide.arange(n):float() * a + b):sin()
end

-- the checks: the first n values, then sum, abs sum and abs sum about the mean
local function summary(t, n)
    local f = t:detach():flatten():tolist()
    local out = {}
    for i = 1, n or 0 do out[i] = f[i] end
    local d = t:detach()
    out[#out + 1] = d:sum():item()
    out[#out + 1] = d:abs():sum():item()
    out[#out + 1] = (d - d:mean()):abs():sum():item()
    return out
end

-- the parameter names, a Sequential's children renamed to PyTorch's 0-based "img_mlp.0"
-- (tide names them 1-based, as its indices: "img_mlp.1"); the order is PyTorch's
local function names(model)
    local out = {}
    for i, np_ in ipairs(model:named_parameters()) do
        out[i] = np_[1]:gsub("%.(%d+)%.", function(d) return "." .. (tonumber(d) - 1) .. "." end)
    end
    return out
end

---------------------------------------------------------------------------------------------
-- 1. src/flux/math.py
---------------------------------------------------------------------------------------------
local apply_rope

-- def attention(q: Tensor, k: Tensor, v: Tensor, pe: Tensor) -> Tensor:
local function attention(q, k, v, pe)
    q, k = apply_rope(q, k, pe)

    -- x = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    local x = F.scaled_dot_product_attention(q, k, v)
    x = einops.rearrange(x, "B H L D -> B L (H D)")

    return x
end

-- def rope(pos: Tensor, dim: int, theta: int) -> Tensor:
local function rope(pos, dim, theta)
    assert(dim % 2 == 0)
    -- scale = torch.arange(0, dim, 2, dtype=pos.dtype, device=pos.device) / dim
    local scale = tide.arange(0, dim, 2, { dtype = pos.dtype, device = pos.device }) / dim
    -- omega = 1.0 / (theta**scale)
    local omega = 1.0 / (theta ^ scale)
    local out = tide.einsum("...n,d->...nd", pos, omega)
    -- out = torch.stack([torch.cos(out), -torch.sin(out), torch.sin(out), torch.cos(out)], dim=-1)
    out = tide.stack({ tide.cos(out), -tide.sin(out), tide.sin(out), tide.cos(out) }, -1)
    -- out = rearrange(out, "b n d (i j) -> b n d i j", i=2, j=2)
    out = einops.rearrange(out, "b n d (i j) -> b n d i j", { i = 2, j = 2 })
    return out:float()
end

-- def apply_rope(xq: Tensor, xk: Tensor, freqs_cis: Tensor) -> tuple[Tensor, Tensor]:
function apply_rope(xq, xk, freqs_cis)
    -- xq_ = xq.float().reshape(*xq.shape[:-1], -1, 1, 2)
    local xq_ = xq:float():reshape(xq.shape[{ { 1, -2 } }] + { -1, 1, 2 })
    -- xk_ = xk.float().reshape(*xk.shape[:-1], -1, 1, 2)
    local xk_ = xk:float():reshape(xk.shape[{ { 1, -2 } }] + { -1, 1, 2 })
    -- xq_out = freqs_cis[..., 0] * xq_[..., 0] + freqs_cis[..., 1] * xq_[..., 1]
    local xq_out = freqs_cis[{ "...", 1 }] * xq_[{ "...", 1 }]
        + freqs_cis[{ "...", 2 }] * xq_[{ "...", 2 }]
    -- xk_out = freqs_cis[..., 0] * xk_[..., 0] + freqs_cis[..., 1] * xk_[..., 1]
    local xk_out = freqs_cis[{ "...", 1 }] * xk_[{ "...", 1 }]
        + freqs_cis[{ "...", 2 }] * xk_[{ "...", 2 }]
    -- return xq_out.reshape(*xq.shape).type_as(xq), xk_out.reshape(*xk.shape).type_as(xk)
    return xq_out:reshape(xq.shape):type_as(xq), xk_out:reshape(xk.shape):type_as(xk)
end

---------------------------------------------------------------------------------------------
-- 2. src/flux/modules/layers.py
---------------------------------------------------------------------------------------------
-- class EmbedND(nn.Module):
local EmbedND = nn.Module:extend("EmbedND")
-- def __init__(self, dim: int, theta: int, axes_dim: list[int]):
function EmbedND:init(dim, theta, axes_dim)
    nn.Module.init(self)
    self.dim = dim
    self.theta = theta
    self.axes_dim = axes_dim
end

-- def forward(self, ids: Tensor) -> Tensor:
function EmbedND:forward(ids)
    -- n_axes = ids.shape[-1]
    local n_axes = ids:size(-1)
    -- emb = torch.cat(
    --     [rope(ids[..., i], self.axes_dim[i], self.theta) for i in range(n_axes)],
    --     dim=-3,
    -- )
    local parts = {}
    for i = 1, n_axes do
        parts[i] = rope(ids[{ "...", i }], self.axes_dim[i], self.theta)
    end
    local emb = tide.cat(parts, -3)

    -- return emb.unsqueeze(1)
    return emb:unsqueeze(2)
end

-- def timestep_embedding(t: Tensor, dim, max_period=10000, time_factor: float = 1000.0):
local function timestep_embedding(t, dim, max_period, time_factor)
    max_period, time_factor = max_period or 10000, time_factor or 1000.0
    t = time_factor * t
    -- half = dim // 2
    local half = math.floor(dim / 2)
    -- freqs = torch.exp(-math.log(max_period) * torch.arange(start=0, end=half,
    --     dtype=torch.float32) / half).to(t.device)
    local freqs = tide.exp(-math.log(max_period) * tide.arange(0, half, { dtype = "float32" })
        / half):to(t.device)

    -- args = t[:, None].float() * freqs[None]
    local args = t[{ {}, tide.newaxis }]:float() * freqs[{ tide.newaxis }]
    -- embedding = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
    local embedding = tide.cat({ tide.cos(args), tide.sin(args) }, -1)
    if dim % 2 == 1 then
        -- embedding = torch.cat([embedding, torch.zeros_like(embedding[:, :1])], dim=-1)
        embedding = tide.cat({ embedding, tide.zeros_like(embedding[{ {}, { 1, 1 } }]) }, -1)
    end
    -- if torch.is_floating_point(t):
    if tide.is_floating_point(t) then
        embedding = embedding:to(t)
    end
    return embedding
end

-- class MLPEmbedder(nn.Module):
local MLPEmbedder = nn.Module:extend("MLPEmbedder")
-- def __init__(self, in_dim: int, hidden_dim: int):
function MLPEmbedder:init(in_dim, hidden_dim)
    nn.Module.init(self)
    -- self.in_layer = nn.Linear(in_dim, hidden_dim, bias=True)
    self.in_layer = nn.Linear(in_dim, hidden_dim, { bias = true })
    self.silu = nn.SiLU()
    -- self.out_layer = nn.Linear(hidden_dim, hidden_dim, bias=True)
    self.out_layer = nn.Linear(hidden_dim, hidden_dim, { bias = true })
end

-- def forward(self, x: Tensor) -> Tensor:
function MLPEmbedder:forward(x)
    return self.out_layer(self.silu(self.in_layer(x)))
end

-- class RMSNorm(torch.nn.Module):
local RMSNorm = nn.Module:extend("RMSNorm")
-- def __init__(self, dim: int):
function RMSNorm:init(dim)
    nn.Module.init(self)
    -- self.scale = nn.Parameter(torch.ones(dim))
    self.scale = nn.Parameter(tide.ones(dim))
end

-- def forward(self, x: Tensor):
function RMSNorm:forward(x)
    local x_dtype = x.dtype
    x = x:float()
    -- rrms = torch.rsqrt(torch.mean(x**2, dim=-1, keepdim=True) + 1e-6)
    local rrms = tide.rsqrt(tide.mean(x ^ 2, { dim = -1, keepdim = true }) + 1e-6)
    -- return (x * rrms).to(dtype=x_dtype) * self.scale
    return (x * rrms):to({ dtype = x_dtype }) * self.scale
end

-- class QKNorm(torch.nn.Module):
local QKNorm = nn.Module:extend("QKNorm")
-- def __init__(self, dim: int):
function QKNorm:init(dim)
    nn.Module.init(self)
    self.query_norm = RMSNorm(dim)
    self.key_norm = RMSNorm(dim)
end

-- def forward(self, q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
function QKNorm:forward(q, k, v)
    q = self.query_norm(q)
    k = self.key_norm(k)
    -- return q.to(v), k.to(v)
    return q:to(v), k:to(v)
end

-- class SelfAttention(nn.Module):
local SelfAttention = nn.Module:extend("SelfAttention")
-- def __init__(self, dim: int, num_heads: int = 8, qkv_bias: bool = False):
function SelfAttention:init(dim, num_heads, qkv_bias)
    nn.Module.init(self)
    self.num_heads = num_heads or 8
    -- head_dim = dim // num_heads
    local head_dim = math.floor(dim / self.num_heads)

    -- self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
    self.qkv = nn.Linear(dim, dim * 3, { bias = qkv_bias or false })
    self.norm = QKNorm(head_dim)
    self.proj = nn.Linear(dim, dim)
end

-- def forward(self, x: Tensor, pe: Tensor) -> Tensor:
function SelfAttention:forward(x, pe)
    local qkv = self.qkv(x)
    -- q, k, v = rearrange(qkv, "B L (K H D) -> K B H L D", K=3, H=self.num_heads)
    local q, k, v = unpack(einops.rearrange(qkv, "B L (K H D) -> K B H L D",
        { K = 3, H = self.num_heads }):unbind(1))
    q, k = self.norm(q, k, v)
    -- x = attention(q, k, v, pe=pe)
    x = attention(q, k, v, pe)
    x = self.proj(x)
    return x
end

-- @dataclass
-- class ModulationOut:
local ModulationOut = ported.class("ModulationOut")
-- shift: Tensor; scale: Tensor; gate: Tensor
function ModulationOut:__init__(shift, scale, gate)
    self.shift, self.scale, self.gate = shift, scale, gate
end

-- class Modulation(nn.Module):
local Modulation = nn.Module:extend("Modulation")
-- def __init__(self, dim: int, double: bool):
function Modulation:init(dim, double)
    nn.Module.init(self)
    self.is_double = double
    -- self.multiplier = 6 if double else 3
    self.multiplier = double and 6 or 3
    -- self.lin = nn.Linear(dim, self.multiplier * dim, bias=True)
    self.lin = nn.Linear(dim, self.multiplier * dim, { bias = true })
end

-- def forward(self, vec: Tensor) -> tuple[ModulationOut, ModulationOut | None]:
function Modulation:forward(vec)
    -- out = self.lin(nn.functional.silu(vec))[:, None, :].chunk(self.multiplier, dim=-1)
    local out = self.lin(F.silu(vec))[{ {}, tide.newaxis, {} }]:chunk(self.multiplier, -1)

    -- return (
    --     ModulationOut(*out[:3]),
    --     ModulationOut(*out[3:]) if self.is_double else None,
    -- )
    return ModulationOut(out[1], out[2], out[3]),
        self.is_double and ModulationOut(out[4], out[5], out[6]) or nil
end

-- class DoubleStreamBlock(nn.Module):
local DoubleStreamBlock = nn.Module:extend("DoubleStreamBlock")
-- def __init__(self, hidden_size: int, num_heads: int, mlp_ratio: float, qkv_bias: bool = False):
function DoubleStreamBlock:init(hidden_size, num_heads, mlp_ratio, qkv_bias)
    nn.Module.init(self)

    -- mlp_hidden_dim = int(hidden_size * mlp_ratio)
    local mlp_hidden_dim = math.floor(hidden_size * mlp_ratio)
    self.num_heads = num_heads
    self.hidden_size = hidden_size
    -- self.img_mod = Modulation(hidden_size, double=True)
    self.img_mod = Modulation(hidden_size, true)
    -- self.img_norm1 = nn.LayerNorm(hidden_size, elementwise_affine=False, eps=1e-6)
    self.img_norm1 = nn.LayerNorm(hidden_size, { elementwise_affine = false, eps = 1e-6 })
    -- self.img_attn = SelfAttention(dim=hidden_size, num_heads=num_heads, qkv_bias=qkv_bias)
    self.img_attn = SelfAttention(hidden_size, num_heads, qkv_bias)

    -- self.img_norm2 = nn.LayerNorm(hidden_size, elementwise_affine=False, eps=1e-6)
    self.img_norm2 = nn.LayerNorm(hidden_size, { elementwise_affine = false, eps = 1e-6 })
    -- self.img_mlp = nn.Sequential(
    --     nn.Linear(hidden_size, mlp_hidden_dim, bias=True),
    --     nn.GELU(approximate="tanh"),
    --     nn.Linear(mlp_hidden_dim, hidden_size, bias=True),
    -- )
    self.img_mlp = nn.Sequential(
        nn.Linear(hidden_size, mlp_hidden_dim, { bias = true }),
        nn.GELU({ approximate = "tanh" }),
        nn.Linear(mlp_hidden_dim, hidden_size, { bias = true })
    )

    -- self.txt_mod = Modulation(hidden_size, double=True)
    self.txt_mod = Modulation(hidden_size, true)
    -- self.txt_norm1 = nn.LayerNorm(hidden_size, elementwise_affine=False, eps=1e-6)
    self.txt_norm1 = nn.LayerNorm(hidden_size, { elementwise_affine = false, eps = 1e-6 })
    -- self.txt_attn = SelfAttention(dim=hidden_size, num_heads=num_heads, qkv_bias=qkv_bias)
    self.txt_attn = SelfAttention(hidden_size, num_heads, qkv_bias)

    -- self.txt_norm2 = nn.LayerNorm(hidden_size, elementwise_affine=False, eps=1e-6)
    self.txt_norm2 = nn.LayerNorm(hidden_size, { elementwise_affine = false, eps = 1e-6 })
    -- self.txt_mlp = nn.Sequential(...) as img_mlp
    self.txt_mlp = nn.Sequential(
        nn.Linear(hidden_size, mlp_hidden_dim, { bias = true }),
        nn.GELU({ approximate = "tanh" }),
        nn.Linear(mlp_hidden_dim, hidden_size, { bias = true })
    )
end

-- def forward(self, img: Tensor, txt: Tensor, vec: Tensor, pe: Tensor) -> tuple[Tensor, Tensor]:
function DoubleStreamBlock:forward(img, txt, vec, pe)
    local img_mod1, img_mod2 = self.img_mod(vec)
    local txt_mod1, txt_mod2 = self.txt_mod(vec)

    -- prepare image for attention
    local img_modulated = self.img_norm1(img)
    img_modulated = (1 + img_mod1.scale) * img_modulated + img_mod1.shift
    local img_qkv = self.img_attn.qkv(img_modulated)
    -- img_q, img_k, img_v = rearrange(img_qkv, "B L (K H D) -> K B H L D", K=3, H=self.num_heads)
    local img_q, img_k, img_v = unpack(einops.rearrange(img_qkv, "B L (K H D) -> K B H L D",
        { K = 3, H = self.num_heads }):unbind(1))
    img_q, img_k = self.img_attn.norm(img_q, img_k, img_v)

    -- prepare txt for attention
    local txt_modulated = self.txt_norm1(txt)
    txt_modulated = (1 + txt_mod1.scale) * txt_modulated + txt_mod1.shift
    local txt_qkv = self.txt_attn.qkv(txt_modulated)
    -- txt_q, txt_k, txt_v = rearrange(txt_qkv, "B L (K H D) -> K B H L D", K=3, H=self.num_heads)
    local txt_q, txt_k, txt_v = unpack(einops.rearrange(txt_qkv, "B L (K H D) -> K B H L D",
        { K = 3, H = self.num_heads }):unbind(1))
    txt_q, txt_k = self.txt_attn.norm(txt_q, txt_k, txt_v)

    -- run actual attention
    -- q = torch.cat((txt_q, img_q), dim=2)
    local q = tide.cat({ txt_q, img_q }, 3)
    -- k = torch.cat((txt_k, img_k), dim=2)
    local k = tide.cat({ txt_k, img_k }, 3)
    -- v = torch.cat((txt_v, img_v), dim=2)
    local v = tide.cat({ txt_v, img_v }, 3)

    -- attn = attention(q, k, v, pe=pe)
    local attn = attention(q, k, v, pe)
    -- txt_attn, img_attn = attn[:, : txt.shape[1]], attn[:, txt.shape[1] :]
    local txt_attn, img_attn = attn[{ {}, { 1, txt.shape[2] } }],
        attn[{ {}, { txt.shape[2] + 1, -1 } }]

    -- calculate the img blocks
    img = img + img_mod1.gate * self.img_attn.proj(img_attn)
    -- img = img + img_mod2.gate * self.img_mlp((1 + img_mod2.scale) * self.img_norm2(img)
    --     + img_mod2.shift)
    img = img + img_mod2.gate * self.img_mlp((1 + img_mod2.scale) * self.img_norm2(img)
        + img_mod2.shift)

    -- calculate the txt blocks
    txt = txt + txt_mod1.gate * self.txt_attn.proj(txt_attn)
    -- txt = txt + txt_mod2.gate * self.txt_mlp((1 + txt_mod2.scale) * self.txt_norm2(txt)
    --     + txt_mod2.shift)
    txt = txt + txt_mod2.gate * self.txt_mlp((1 + txt_mod2.scale) * self.txt_norm2(txt)
        + txt_mod2.shift)
    return img, txt
end

-- class SingleStreamBlock(nn.Module):
--     A DiT block with parallel linear layers as described in
--     https://arxiv.org/abs/2302.05442 and adapted modulation interface.
local SingleStreamBlock = nn.Module:extend("SingleStreamBlock")
-- def __init__(self, hidden_size: int, num_heads: int, mlp_ratio: float = 4.0,
--     qk_scale: float | None = None):
function SingleStreamBlock:init(hidden_size, num_heads, mlp_ratio, qk_scale)
    nn.Module.init(self)
    mlp_ratio = mlp_ratio or 4.0
    self.hidden_dim = hidden_size
    self.num_heads = num_heads
    -- head_dim = hidden_size // num_heads
    local head_dim = math.floor(hidden_size / num_heads)
    -- self.scale = qk_scale or head_dim**-0.5
    self.scale = qk_scale or head_dim ^ -0.5

    -- self.mlp_hidden_dim = int(hidden_size * mlp_ratio)
    self.mlp_hidden_dim = math.floor(hidden_size * mlp_ratio)
    -- qkv and mlp_in
    self.linear1 = nn.Linear(hidden_size, hidden_size * 3 + self.mlp_hidden_dim)
    -- proj and mlp_out
    self.linear2 = nn.Linear(hidden_size + self.mlp_hidden_dim, hidden_size)

    self.norm = QKNorm(head_dim)

    self.hidden_size = hidden_size
    -- self.pre_norm = nn.LayerNorm(hidden_size, elementwise_affine=False, eps=1e-6)
    self.pre_norm = nn.LayerNorm(hidden_size, { elementwise_affine = false, eps = 1e-6 })

    -- self.mlp_act = nn.GELU(approximate="tanh")
    self.mlp_act = nn.GELU({ approximate = "tanh" })
    -- self.modulation = Modulation(hidden_size, double=False)
    self.modulation = Modulation(hidden_size, false)
end

-- def forward(self, x: Tensor, vec: Tensor, pe: Tensor) -> Tensor:
function SingleStreamBlock:forward(x, vec, pe)
    -- mod, _ = self.modulation(vec)
    local mod = self.modulation(vec)
    local x_mod = (1 + mod.scale) * self.pre_norm(x) + mod.shift
    -- qkv, mlp = torch.split(self.linear1(x_mod), [3 * self.hidden_size, self.mlp_hidden_dim],
    --     dim=-1)
    local qkv, mlp = unpack(tide.split(self.linear1(x_mod),
        { 3 * self.hidden_size, self.mlp_hidden_dim }, -1))

    -- q, k, v = rearrange(qkv, "B L (K H D) -> K B H L D", K=3, H=self.num_heads)
    local q, k, v = unpack(einops.rearrange(qkv, "B L (K H D) -> K B H L D",
        { K = 3, H = self.num_heads }):unbind(1))
    q, k = self.norm(q, k, v)

    -- compute attention
    -- attn = attention(q, k, v, pe=pe)
    local attn = attention(q, k, v, pe)
    -- compute activation in mlp stream, cat again and run second linear layer
    -- output = self.linear2(torch.cat((attn, self.mlp_act(mlp)), 2))
    local output = self.linear2(tide.cat({ attn, self.mlp_act(mlp) }, 3))
    return x + mod.gate * output
end

-- class LastLayer(nn.Module):
local LastLayer = nn.Module:extend("LastLayer")
-- def __init__(self, hidden_size: int, patch_size: int, out_channels: int):
function LastLayer:init(hidden_size, patch_size, out_channels)
    nn.Module.init(self)
    -- self.norm_final = nn.LayerNorm(hidden_size, elementwise_affine=False, eps=1e-6)
    self.norm_final = nn.LayerNorm(hidden_size, { elementwise_affine = false, eps = 1e-6 })
    -- self.linear = nn.Linear(hidden_size, patch_size * patch_size * out_channels, bias=True)
    self.linear = nn.Linear(hidden_size, patch_size * patch_size * out_channels, { bias = true })
    -- self.adaLN_modulation = nn.Sequential(nn.SiLU(), nn.Linear(hidden_size, 2 * hidden_size,
    --     bias=True))
    self.adaLN_modulation = nn.Sequential(nn.SiLU(), nn.Linear(hidden_size, 2 * hidden_size,
        { bias = true }))
end

-- def forward(self, x: Tensor, vec: Tensor) -> Tensor:
function LastLayer:forward(x, vec)
    -- shift, scale = self.adaLN_modulation(vec).chunk(2, dim=1)
    local shift, scale = unpack(self.adaLN_modulation(vec):chunk(2, 2))
    -- x = (1 + scale[:, None, :]) * self.norm_final(x) + shift[:, None, :]
    x = (1 + scale[{ {}, tide.newaxis, {} }]) * self.norm_final(x)
        + shift[{ {}, tide.newaxis, {} }]
    x = self.linear(x)
    return x
end

---------------------------------------------------------------------------------------------
-- 3. the checks against PyTorch 1.13
---------------------------------------------------------------------------------------------
local HID, NH, B, LI, LT = 16, 2, 2, 6, 3
local TOL = 2e-4

-- the position ids: txt all zeros, img (0, row, col) on a 2 x 3 grid
local function make_ids()
    local img_ids = tide.zeros(2, 3, 3)
    img_ids[{ "...", 2 }] = img_ids[{ "...", 2 }] + tide.arange(2)[{ {}, tide.newaxis }]
    img_ids[{ "...", 3 }] = img_ids[{ "...", 3 }] + tide.arange(3)[{ tide.newaxis, {} }]
    img_ids = img_ids:reshape(1, LI, 3)["repeat"](img_ids:reshape(1, LI, 3), B, 1, 1)
    local txt_ids = tide.zeros(B, LT, 3)
    return tide.cat({ txt_ids, img_ids }, 2)
end

describe("ported flux (math.py, modules/layers.py)", function()
    local ids, pe, vec, time_in, double, single, final, img2, txt2, x, y

    setup(function()
        ids = make_ids()
        pe = EmbedND(HID, 10000, { 2, 2, 4 })(ids)
        time_in = MLPEmbedder(8, HID)
        fill(time_in)
        vec = time_in(timestep_embedding(tide.tensor({ 0.25, 0.75 }), 8))
        local img = seq(B * LI * HID, 0.37, 0.1):view(B, LI, HID)
        local txt = seq(B * LT * HID, 0.53, 0.2):view(B, LT, HID)
        double = DoubleStreamBlock(HID, NH, 2.0, true)
        fill(double)
        img2, txt2 = double(img, txt, vec, pe)
        single = SingleStreamBlock(HID, NH, 2.0)
        fill(single)
        x = single(tide.cat({ txt2, img2 }, 2), vec, pe)
        final = LastLayer(HID, 1, 4)
        fill(final)
        y = final(x[{ {}, { LT + 1, -1 }, "..." }], vec)
    end)

    it("rope: the 2 x 2 rotation blocks over one axis", function()
        local r = rope(ids[{ "...", 3 }], 4, 10000)
        assert.are.same(REF.rope_shape, r.shape)
        assert_close_list(REF.rope, summary(r, 8), TOL, "rope")
        -- each block is a rotation: cos on the diagonal, -sin above
        assert.is_true(r[{ "...", 1, 1 }]:equal(r[{ "...", 2, 2 }]))
        assert.is_true(r[{ "...", 1, 2 }]:equal(-r[{ "...", 2, 1 }]))
    end)

    it("EmbedND: cat over the axes, unsqueezed for the heads", function()
        assert.are.same(REF.pe_shape, pe.shape)
        assert_close_list(REF.pe, summary(pe, 4), TOL, "pe")
        assert_close_list(REF.vec, summary(vec, 4), TOL, "vec")
    end)

    it("DoubleStreamBlock: img and txt streams", function()
        assert.are.same(REF.double_names, names(double))
        assert.are.same({ B, LI, HID }, img2.shape)
        assert.are.same({ B, LT, HID }, txt2.shape)
        assert_close_list(REF.double_img, summary(img2, 4), TOL, "double img")
        assert_close_list(REF.double_txt, summary(txt2, 4), TOL, "double txt")
    end)

    it("SingleStreamBlock and LastLayer", function()
        assert.are.same(REF.single_names, names(single))
        assert_close_list(REF.single, summary(x, 4), TOL, "single")
        assert.are.same(REF.final_shape, y.shape)
        assert_close_list(REF.final, summary(y, 4), TOL, "final")
    end)

    it("the gradient w.r.t. the double block's img qkv weight", function()
        local loss = y:pow(2):mean()
        loss:backward()
        assert_close_list({ REF.loss }, { loss:item() }, TOL, "loss")
        local g = double.img_attn.qkv.weight.grad
        assert.are.same({ 3 * HID, HID }, g.shape)
        assert_close_list(REF.qkv_grad, summary(g, 4), 1e-3, "qkv grad")
    end)
end)

