-- ported_scripts106_spec.lua — raoyongming/GFNet's gfnet.py (Mlp, GlobalFilter: the
-- complex_weight parameter [h, w, dim, 2] read through torch.view_as_complex, rfft2 / the
-- elementwise complex product / irfft2 with norm='ortho'; Block, PatchEmbed, GFNet with its
-- DropPath off) and facebookresearch/llama's original llama/model.py (commit 1076b9c, the
-- LLaMA 1 release: RMSNorm, precompute_freqs_cis with torch.outer and torch.polar,
-- reshape_for_broadcast, apply_rotary_emb through view_as_complex / view_as_real, Attention with
-- its kv cache and start_pos, FeedForward with multiple_of, TransformerBlock, Transformer with
-- the causal mask), ported line for line at tiny sizes (GFNet: image 3x8x8, patch 2, embed 8,
-- depth 2, 3 classes; LLaMA: dim 16, 2 layers, 2 heads, vocab 11, max_seq_len 8). The Python
-- line stands above each Lua line that differs from it. Dims and class targets are 1-based;
-- start_pos stays 0-based (a count of cached positions), token ids are 1-based.
-- fairscale is not used: ColumnParallelLinear / RowParallelLinear are nn.Linear(bias = False)
-- and ParallelEmbedding is nn.Embedding, as they are on one model-parallel rank; the kv cache
-- stays on the CPU (model.py calls .cuda() on it).
-- The values were computed with PyTorch 1.13 on the same weights (a formula over each
-- parameter's index in named_parameters order) and the same inputs.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- every parameter, in named_parameters order (k = 0, 1, ...), set from a fixed formula:
-- p.copy_((0.3 * torch.sin(0.731 * torch.arange(p.numel()).float() + 1.37 * k)).view(p.shape))
local function fill_from_formula(model)
    tide.no_grad(function()
        for k, np in ipairs(model:named_parameters()) do
            local p = np[2]
            local v = (tide.arange(p:numel()):float() * 0.731 + 1.37 * (k - 1)):sin() * 0.3
            p:copy_(v:view(p.shape))
        end
    end)
end

-- torch.sin(a * torch.arange(n).float() + b).view(*shape)
local function sinx(shape, a, b)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    return (tide.arange(n):float() * (a or 0.37) + (b or 0.5)):sin():view(unpack(shape))
end

---------------------------------------------------------------------------------------------
-- 1. raoyongming/GFNet gfnet.py
---------------------------------------------------------------------------------------------
-- class Mlp(nn.Module):
local Mlp = nn.Module:extend("Mlp")
-- def __init__(self, in_features, hidden_features=None, out_features=None, act_layer=nn.GELU,
--              drop=0.):
function Mlp:init(in_features, hidden_features, out_features, act_layer, drop)
    act_layer, drop = act_layer or nn.GELU, drop or 0
    out_features = out_features or in_features
    hidden_features = hidden_features or in_features
    self.fc1 = nn.Linear(in_features, hidden_features)
    self.act = act_layer()
    self.fc2 = nn.Linear(hidden_features, out_features)
    self.drop = nn.Dropout(drop)
end
function Mlp:forward(x)
    x = self.fc1(x)
    x = self.act(x)
    x = self.drop(x)
    x = self.fc2(x)
    x = self.drop(x)
    return x
end

-- class GlobalFilter(nn.Module):
local GlobalFilter = nn.Module:extend("GlobalFilter")
-- def __init__(self, dim, h=14, w=8):
function GlobalFilter:init(dim, h, w)
    h, w = h or 14, w or 8
    -- self.complex_weight = nn.Parameter(torch.randn(h, w, dim, 2, dtype=torch.float32) * 0.02)
    self.complex_weight = nn.Parameter(tide.randn(h, w, dim, 2, { dtype = "float32" }) * 0.02)
    self.w = w
    self.h = h
end
-- def forward(self, x, spatial_size=None):
function GlobalFilter:forward(x, spatial_size)
    -- B, N, C = x.shape
    local B, N, C = unpack(x.shape)
    local a, b
    if spatial_size == nil then
        -- a = b = int(math.sqrt(N))
        a = math.floor(math.sqrt(N))
        b = a
    else
        a, b = unpack(spatial_size)
    end

    x = x:view(B, a, b, C)

    -- x = x.to(torch.float32)
    x = x:to("float32")

    -- x = torch.fft.rfft2(x, dim=(1, 2), norm='ortho')
    x = tide.fft.rfft2(x, { dim = { 2, 3 }, norm = "ortho" })
    -- weight = torch.view_as_complex(self.complex_weight)
    local weight = tide.view_as_complex(self.complex_weight)
    x = x * weight
    -- x = torch.fft.irfft2(x, s=(a, b), dim=(1, 2), norm='ortho')
    x = tide.fft.irfft2(x, { s = { a, b }, dim = { 2, 3 }, norm = "ortho" })

    x = x:reshape(B, N, C)

    return x
end

-- class Block(nn.Module):
local Block = nn.Module:extend("Block")
-- def __init__(self, dim, mlp_ratio=4., drop=0., drop_path=0., act_layer=nn.GELU,
--              norm_layer=nn.LayerNorm, h=14, w=8):
function Block:init(dim, o)
    o = o or {}
    local mlp_ratio, drop, drop_path = o.mlp_ratio or 4, o.drop or 0, o.drop_path or 0
    local act_layer, norm_layer = o.act_layer or nn.GELU, o.norm_layer or nn.LayerNorm
    self.norm1 = norm_layer(dim)
    -- self.filter = GlobalFilter(dim, h=h, w=w)
    self.filter = GlobalFilter(dim, o.h or 14, o.w or 8)
    -- self.drop_path = DropPath(drop_path) if drop_path > 0. else nn.Identity()
    -- (timm's DropPath is not ported: this port runs with drop_path_rate 0, as the brief asks)
    assert(drop_path == 0, "DropPath is off in this port")
    self.drop_path = nn.Identity()
    self.norm2 = norm_layer(dim)
    -- mlp_hidden_dim = int(dim * mlp_ratio)
    local mlp_hidden_dim = math.floor(dim * mlp_ratio)
    self.mlp = Mlp(dim, mlp_hidden_dim, nil, act_layer, drop)
end
function Block:forward(x)
    x = x + self.drop_path(self.mlp(self.norm2(self.filter(self.norm1(x)))))
    return x
end

-- class PatchEmbed(nn.Module):
local PatchEmbed = nn.Module:extend("PatchEmbed")
-- def __init__(self, img_size=224, patch_size=16, in_chans=3, embed_dim=768):
function PatchEmbed:init(img_size, patch_size, in_chans, embed_dim)
    -- img_size = to_2tuple(img_size)
    img_size = { img_size or 224, img_size or 224 }
    patch_size = { patch_size or 16, patch_size or 16 }
    -- num_patches = (img_size[1] // patch_size[1]) * (img_size[0] // patch_size[0])
    local num_patches = math.floor(img_size[2] / patch_size[2]) *
        math.floor(img_size[1] / patch_size[1])
    self.img_size = img_size
    self.patch_size = patch_size
    self.num_patches = num_patches

    -- self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)
    self.proj = nn.Conv2d(in_chans or 3, embed_dim or 768,
        { kernel_size = patch_size, stride = patch_size })
end
function PatchEmbed:forward(x)
    local _, _, H, W = unpack(x.shape)
    assert(H == self.img_size[1] and W == self.img_size[2],
        ("Input image size (%d*%d) doesn't match model (%d*%d)."):format(H, W,
            self.img_size[1], self.img_size[2]))
    -- x = self.proj(x).flatten(2).transpose(1, 2)
    x = self.proj(x):flatten(3):transpose(2, 3)
    return x
end

-- class GFNet(nn.Module):
local GFNet = nn.Module:extend("GFNet")
-- def __init__(self, img_size=224, patch_size=16, in_chans=3, num_classes=1000, embed_dim=768,
--              depth=12, mlp_ratio=4., representation_size=None, uniform_drop=False,
--              drop_rate=0., drop_path_rate=0., norm_layer=None, dropcls=0):
function GFNet:init(o)
    local img_size, patch_size = o.img_size or 224, o.patch_size or 16
    local num_classes, embed_dim, depth = o.num_classes or 1000, o.embed_dim or 768, o.depth or 12
    local mlp_ratio, drop_rate = o.mlp_ratio or 4, o.drop_rate or 0
    self.num_classes = num_classes
    self.embed_dim = embed_dim
    self.num_features = embed_dim -- num_features for consistency with other models
    -- norm_layer = norm_layer or partial(nn.LayerNorm, eps=1e-6)
    local norm_layer = o.norm_layer or function(d) return nn.LayerNorm(d, { eps = 1e-6 }) end

    self.patch_embed = PatchEmbed(img_size, patch_size, o.in_chans or 3, embed_dim)
    local num_patches = self.patch_embed.num_patches

    self.pos_embed = nn.Parameter(tide.zeros(1, num_patches, embed_dim))
    -- self.pos_drop = nn.Dropout(p=drop_rate)
    self.pos_drop = nn.Dropout({ p = drop_rate })

    -- h = img_size // patch_size
    local h = math.floor(img_size / patch_size)
    -- w = h // 2 + 1
    local w = math.floor(h / 2) + 1

    -- dpr = [x.item() for x in torch.linspace(0, drop_path_rate, depth)]
    local dpr = tide.linspace(0, o.drop_path_rate or 0, depth):tolist()

    -- self.blocks = nn.ModuleList([Block(dim=embed_dim, mlp_ratio=mlp_ratio, drop=drop_rate,
    --     drop_path=dpr[i], norm_layer=norm_layer, h=h, w=w) for i in range(depth)])
    local blocks = {}
    for i = 1, depth do
        blocks[i] = Block(embed_dim, { mlp_ratio = mlp_ratio, drop = drop_rate,
            drop_path = dpr[i], norm_layer = norm_layer, h = h, w = w })
    end
    self.blocks = nn.ModuleList(blocks)

    self.norm = norm_layer(embed_dim)
    -- (representation_size None)
    self.pre_logits = nn.Identity()
    -- self.head = nn.Linear(self.num_features, num_classes) if num_classes > 0 else nn.Identity()
    self.head = num_classes > 0 and nn.Linear(self.num_features, num_classes) or nn.Identity()
    -- (dropcls 0)
    self.final_dropout = nn.Identity()

    -- trunc_normal_(self.pos_embed, std=.02)
    nn.init.trunc_normal_(self.pos_embed, { std = .02 })
    -- self.apply(self._init_weights)
    self:apply(function(m) self:_init_weights(m) end)
end
function GFNet:_init_weights(m)
    -- if isinstance(m, nn.Linear):
    if tide.isinstance(m, nn.Linear) then
        nn.init.trunc_normal_(m.weight, { std = .02 })
        if m.bias ~= nil then
            nn.init.constant_(m.bias, 0)
        end
    elseif tide.isinstance(m, nn.LayerNorm) then
        nn.init.constant_(m.bias, 0)
        nn.init.constant_(m.weight, 1.0)
    end
end
function GFNet:forward_features(x)
    x = self.patch_embed(x)
    x = x + self.pos_embed
    x = self.pos_drop(x)

    -- for blk in self.blocks:
    for _, blk in ipairs(self.blocks) do
        x = blk(x)
    end

    -- x = self.norm(x).mean(1)
    x = self.norm(x):mean(2)
    return x
end
function GFNet:forward(x)
    x = self:forward_features(x)
    x = self.final_dropout(x)
    x = self.head(x)
    return x
end

local GF_REF = {
    -- GlobalFilter(8, h=4, w=3) on sinx(2, 16, 8): the first 16 outputs
    gf_out = { 0.258034, -0.04626, -0.165254, 0.025174, -0.014709, -0.064982, 0.171554,
        0.137376, -0.22263, 0.003286, 0.138337, 0.017098, 0.020046, 0.03479, -0.147879,
        -0.121885 },
    logits = { 0.427815, 0.575788, 0.53742, 0.413997, 0.557934, 0.518859 },
    -- the loss before each of 2 AdamW steps, then after them
    losses = { 1.132463, 1.10158, 1.072421 },
    -- blocks[0].filter.complex_weight[0, 1] after the steps
    cw_after = { -0.070126, 0.144068, 0.256083, 0.288498, 0.169174, -0.082205, -0.222842,
        -0.315236, -0.181799, -0.021701, 0.178355, 0.277988, 0.263934, 0.047869, -0.164638,
        -0.296361 },
}

describe("raoyongming/GFNet gfnet.py", function()
    it("GlobalFilter: rfft2 * view_as_complex(weight), irfft2, as PyTorch's", function()
        local gf = GlobalFilter(8, 4, 3)
        fill_from_formula(gf)
        local x = sinx({ 2, 16, 8 }):requires_grad_()
        local y = gf(x)
        assert.same({ 2, 16, 8 }, y.shape)
        assert.equal("float32", y.dtype)
        assert_close_list(GF_REF.gf_out, y:flatten():narrow(1, 1, 16):tolist(), 1e-5, "gf_out")
        -- the gradient reaches the real parameter through view_as_complex, and x
        y:pow(2):sum():backward()
        assert.same({ 4, 3, 8, 2 }, gf.complex_weight.grad.shape)
        assert.is_true(gf.complex_weight.grad:abs():sum():item() > 0)
        assert_finite(x.grad, "x.grad")
    end)

    it("GFNet logits and 2 AdamW steps as PyTorch's", function()
        local model = GFNet({ img_size = 8, patch_size = 2, in_chans = 3, num_classes = 3,
            embed_dim = 8, depth = 2 })
        -- the complex weight is a real parameter [h, w, dim, 2] (h = 4, w = 4 // 2 + 1)
        assert.same({ 4, 3, 8, 2 }, model.blocks[1].filter.complex_weight.shape)
        fill_from_formula(model)
        local img = sinx({ 2, 3, 8, 8 })
        -- y = torch.tensor([0, 2])
        local y = tide.tensor({ 1, 3 })
        local logits = model(img)
        assert.same({ 2, 3 }, logits.shape)
        assert_close_list(GF_REF.logits, logits:flatten():tolist(), 1e-5, "logits")
        local opt = optim.AdamW(model:parameters(), { lr = 0.01, weight_decay = 0.05 })
        local losses = {}
        for _ = 1, 2 do
            local loss = F.cross_entropy(model(img), y)
            opt:zero_grad()
            loss:backward()
            opt:step()
            losses[#losses + 1] = loss:item()
        end
        losses[#losses + 1] = F.cross_entropy(model(img), y):item()
        assert_close_list(GF_REF.losses, losses, 1e-5, "losses")
        assert.is_true(losses[3] < losses[1])
        -- model.blocks[0].filter.complex_weight[0, 1]
        local cw = model.blocks[1].filter.complex_weight[{ 1, 2 }]
        assert_close_list(GF_REF.cw_after, cw:flatten():tolist(), 1e-5, "complex_weight")
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. facebookresearch/llama llama/model.py (LLaMA 1)
---------------------------------------------------------------------------------------------
-- @dataclass class ModelArgs:
local function ModelArgs(o)
    return {
        dim = o.dim or 512,
        n_layers = o.n_layers or 8,
        n_heads = o.n_heads or 8,
        vocab_size = o.vocab_size or -1, -- defined later by tokenizer
        multiple_of = o.multiple_of or 256, -- make SwiGLU hidden layer size multiple of 2^k
        norm_eps = o.norm_eps or 1e-5,
        max_batch_size = o.max_batch_size or 32,
        max_seq_len = o.max_seq_len or 1024,
    }
end

-- class RMSNorm(torch.nn.Module):
local RMSNorm = nn.Module:extend("RMSNorm")
-- def __init__(self, dim: int, eps: float = 1e-6):
function RMSNorm:init(dim, eps)
    self.eps = eps or 1e-6
    self.weight = nn.Parameter(tide.ones(dim))
end
function RMSNorm:_norm(x)
    -- return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
    return x * tide.rsqrt(x:pow(2):mean(-1, true) + self.eps)
end
function RMSNorm:forward(x)
    -- output = self._norm(x.float()).type_as(x)
    local output = self:_norm(x:float()):type_as(x)
    return output * self.weight
end

-- def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0):
local function precompute_freqs_cis(dim, end_, theta)
    theta = theta or 10000.0
    -- freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    local half = math.floor(dim / 2)
    local freqs = 1.0 / (theta ^ (tide.arange(0, dim, 2)[{ { 1, half } }]:float() / dim))
    -- t = torch.arange(end, device=freqs.device)  # type: ignore
    local t = tide.arange(end_, { device = freqs.device })
    -- freqs = torch.outer(t, freqs).float()  # type: ignore
    freqs = tide.outer(t, freqs):float()
    -- freqs_cis = torch.polar(torch.ones_like(freqs), freqs)  # complex64
    local freqs_cis = tide.polar(tide.ones_like(freqs), freqs)
    return freqs_cis
end

-- def reshape_for_broadcast(freqs_cis: torch.Tensor, x: torch.Tensor):
local function reshape_for_broadcast(freqs_cis, x)
    local ndim = x.ndim
    -- assert 0 <= 1 < ndim
    assert(0 <= 1 and 1 < ndim)
    -- assert freqs_cis.shape == (x.shape[1], x.shape[-1])
    -- GAP: a Size equals a plain list ({a, b}) only on Lua 5.3+ (5.1 and LuaJIT call __eq
    -- for two tables of one metatable only), so the tuple is a tide.Size here
    assert(freqs_cis.shape == tide.Size({ x.shape[2], x.shape[-1] }))
    -- shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
    local shape = {}
    for i, d in ipairs(x.shape) do
        shape[i] = (i == 2 or i == ndim) and d or 1
    end
    -- return freqs_cis.view(*shape)
    return freqs_cis:view(unpack(shape))
end

-- def apply_rotary_emb(xq, xk, freqs_cis) -> Tuple[torch.Tensor, torch.Tensor]:
local function apply_rotary_emb(xq, xk, freqs_cis)
    -- xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    local xq_ = tide.view_as_complex(xq:float():reshape(xq.shape[{ { 1, -2 } }] + { -1, 2 }))
    -- xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    local xk_ = tide.view_as_complex(xk:float():reshape(xk.shape[{ { 1, -2 } }] + { -1, 2 }))
    freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
    -- xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    local xq_out = tide.view_as_real(xq_ * freqs_cis):flatten(4)
    -- xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    local xk_out = tide.view_as_real(xk_ * freqs_cis):flatten(4)
    -- return xq_out.type_as(xq), xk_out.type_as(xk)
    return xq_out:type_as(xq), xk_out:type_as(xk)
end

-- class Attention(nn.Module):
local Attention = nn.Module:extend("Attention")
-- def __init__(self, args: ModelArgs):
function Attention:init(args)
    -- self.n_local_heads = args.n_heads // fs_init.get_model_parallel_world_size()
    self.n_local_heads = math.floor(args.n_heads / 1) -- one model-parallel rank
    -- self.head_dim = args.dim // args.n_heads
    self.head_dim = math.floor(args.dim / args.n_heads)

    -- self.wq = ColumnParallelLinear(args.dim, args.n_heads * self.head_dim, bias=False,
    --     gather_output=False, init_method=lambda x: x)
    self.wq = nn.Linear(args.dim, args.n_heads * self.head_dim, { bias = false })
    self.wk = nn.Linear(args.dim, args.n_heads * self.head_dim, { bias = false })
    self.wv = nn.Linear(args.dim, args.n_heads * self.head_dim, { bias = false })
    -- self.wo = RowParallelLinear(args.n_heads * self.head_dim, args.dim, bias=False,
    --     input_is_parallel=True, init_method=lambda x: x)
    self.wo = nn.Linear(args.n_heads * self.head_dim, args.dim, { bias = false })

    -- self.cache_k = torch.zeros(
    --     (args.max_batch_size, args.max_seq_len, self.n_local_heads, self.head_dim)).cuda()
    self.cache_k = tide.zeros(args.max_batch_size, args.max_seq_len, self.n_local_heads,
        self.head_dim)
    self.cache_v = tide.zeros(args.max_batch_size, args.max_seq_len, self.n_local_heads,
        self.head_dim)
end
-- def forward(self, x, start_pos: int, freqs_cis, mask: Optional[torch.Tensor]):
function Attention:forward(x, start_pos, freqs_cis, mask)
    local bsz, seqlen = x:size(1), x:size(2)
    -- xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)
    local xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)

    xq = xq:view(bsz, seqlen, self.n_local_heads, self.head_dim)
    xk = xk:view(bsz, seqlen, self.n_local_heads, self.head_dim)
    xv = xv:view(bsz, seqlen, self.n_local_heads, self.head_dim)

    -- xq, xk = apply_rotary_emb(xq, xk, freqs_cis=freqs_cis)
    xq, xk = apply_rotary_emb(xq, xk, freqs_cis)

    self.cache_k = self.cache_k:to(xq)
    self.cache_v = self.cache_v:to(xq)

    -- self.cache_k[:bsz, start_pos : start_pos + seqlen] = xk
    self.cache_k[{ { 1, bsz }, { start_pos + 1, start_pos + seqlen } }] = xk
    self.cache_v[{ { 1, bsz }, { start_pos + 1, start_pos + seqlen } }] = xv

    -- keys = self.cache_k[:bsz, : start_pos + seqlen]
    local keys = self.cache_k[{ { 1, bsz }, { 1, start_pos + seqlen } }]
    local values = self.cache_v[{ { 1, bsz }, { 1, start_pos + seqlen } }]

    -- xq = xq.transpose(1, 2)
    xq = xq:transpose(2, 3)
    keys = keys:transpose(2, 3)
    values = values:transpose(2, 3)
    -- scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.head_dim)
    local scores = tide.matmul(xq, keys:transpose(3, 4)) / math.sqrt(self.head_dim)
    if mask ~= nil then
        scores = scores + mask -- (bs, n_local_heads, slen, cache_len + slen)
    end
    -- scores = F.softmax(scores.float(), dim=-1).type_as(xq)
    scores = F.softmax(scores:float(), { dim = -1 }):type_as(xq)
    local output = tide.matmul(scores, values) -- (bs, n_local_heads, slen, head_dim)
    -- output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
    output = output:transpose(2, 3):contiguous():view(bsz, seqlen, -1)

    return self.wo(output)
end

-- class FeedForward(nn.Module):
local FeedForward = nn.Module:extend("FeedForward")
-- def __init__(self, dim: int, hidden_dim: int, multiple_of: int):
function FeedForward:init(dim, hidden_dim, multiple_of)
    -- hidden_dim = int(2 * hidden_dim / 3)
    hidden_dim = math.floor(2 * hidden_dim / 3)
    -- hidden_dim = multiple_of * ((hidden_dim + multiple_of - 1) // multiple_of)
    hidden_dim = multiple_of * math.floor((hidden_dim + multiple_of - 1) / multiple_of)

    -- self.w1 = ColumnParallelLinear(dim, hidden_dim, bias=False, gather_output=False,
    --     init_method=lambda x: x)
    self.w1 = nn.Linear(dim, hidden_dim, { bias = false })
    -- self.w2 = RowParallelLinear(hidden_dim, dim, bias=False, input_is_parallel=True,
    --     init_method=lambda x: x)
    self.w2 = nn.Linear(hidden_dim, dim, { bias = false })
    self.w3 = nn.Linear(dim, hidden_dim, { bias = false })
end
function FeedForward:forward(x)
    return self.w2(F.silu(self.w1(x)) * self.w3(x))
end

-- class TransformerBlock(nn.Module):
local TransformerBlock = nn.Module:extend("TransformerBlock")
-- def __init__(self, layer_id: int, args: ModelArgs):
function TransformerBlock:init(layer_id, args)
    self.n_heads = args.n_heads
    self.dim = args.dim
    -- self.head_dim = args.dim // args.n_heads
    self.head_dim = math.floor(args.dim / args.n_heads)
    self.attention = Attention(args)
    -- self.feed_forward = FeedForward(dim=args.dim, hidden_dim=4 * args.dim,
    --     multiple_of=args.multiple_of)
    self.feed_forward = FeedForward(args.dim, 4 * args.dim, args.multiple_of)
    self.layer_id = layer_id
    -- self.attention_norm = RMSNorm(args.dim, eps=args.norm_eps)
    self.attention_norm = RMSNorm(args.dim, args.norm_eps)
    self.ffn_norm = RMSNorm(args.dim, args.norm_eps)
end
function TransformerBlock:forward(x, start_pos, freqs_cis, mask)
    -- h = x + self.attention.forward(self.attention_norm(x), start_pos, freqs_cis, mask)
    local h = x + self.attention:forward(self.attention_norm(x), start_pos, freqs_cis, mask)
    -- out = h + self.feed_forward.forward(self.ffn_norm(h))
    local out = h + self.feed_forward:forward(self.ffn_norm(h))
    return out
end

-- class Transformer(nn.Module):
local Transformer = nn.Module:extend("Transformer")
-- def __init__(self, params: ModelArgs):
function Transformer:init(params)
    self.params = params
    self.vocab_size = params.vocab_size
    self.n_layers = params.n_layers

    -- self.tok_embeddings = ParallelEmbedding(params.vocab_size, params.dim,
    --     init_method=lambda x: x)
    self.tok_embeddings = nn.Embedding(params.vocab_size, params.dim)

    self.layers = nn.ModuleList()
    -- for layer_id in range(params.n_layers):
    for layer_id = 0, params.n_layers - 1 do
        self.layers:append(TransformerBlock(layer_id, params))
    end

    -- self.norm = RMSNorm(params.dim, eps=params.norm_eps)
    self.norm = RMSNorm(params.dim, params.norm_eps)
    -- self.output = ColumnParallelLinear(params.dim, params.vocab_size, bias=False,
    --     init_method=lambda x: x)
    self.output = nn.Linear(params.dim, params.vocab_size, { bias = false })

    -- self.freqs_cis = precompute_freqs_cis(
    --     self.params.dim // self.params.n_heads, self.params.max_seq_len * 2)
    self.freqs_cis = precompute_freqs_cis(
        math.floor(self.params.dim / self.params.n_heads), self.params.max_seq_len * 2
    )
end
-- @torch.inference_mode()
-- def forward(self, tokens: torch.Tensor, start_pos: int):
Transformer.forward = tide.inference_mode()(function(self, tokens, start_pos)
    local _, seqlen = unpack(tokens.shape)
    local h = self.tok_embeddings(tokens)
    self.freqs_cis = self.freqs_cis:to(h.device)
    -- freqs_cis = self.freqs_cis[start_pos : start_pos + seqlen]
    local freqs_cis = self.freqs_cis[{ { start_pos + 1, start_pos + seqlen } }]

    local mask = nil
    if seqlen > 1 then
        -- mask = torch.full((1, 1, seqlen, seqlen), float("-inf"), device=tokens.device)
        mask = tide.full({ 1, 1, seqlen, seqlen }, -math.huge, { device = tokens.device })
        -- mask = torch.triu(mask, diagonal=start_pos + 1).type_as(h)
        mask = tide.triu(mask, { diagonal = start_pos + 1 }):type_as(h)
    end

    -- for layer in self.layers:
    for _, layer in ipairs(self.layers) do
        h = layer(h, start_pos, freqs_cis, mask)
    end
    h = self.norm(h)
    -- output = self.output(h[:, -1, :])  # only compute last logits
    local output = self.output(h[{ {}, -1, {} }])
    return output:float()
end)

local LL_REF = {
    -- view_as_real(precompute_freqs_cis(8, 16))[:5]
    freqs_cis = { 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.540302, 0.841471, 0.995004,
        0.099833, 0.99995, 0.01, 1.0, 0.001, -0.416147, 0.909297, 0.980067, 0.198669, 0.9998,
        0.019999, 0.999998, 0.002, -0.989992, 0.14112, 0.955337, 0.29552, 0.99955, 0.029995,
        0.999996, 0.003, -0.653644, -0.756802, 0.92106 },
    -- apply_rotary_emb(sinx(1, 3, 2, 8), sinx(1, 3, 2, 8, 0.23, 0.1), freqs_cis[0:3]): the
    -- second position of each (the first is a rotation by 0)
    rot_q = { -0.334755, 0.377027, 0.670225, 1.019982, 0.989744, 0.924649, 0.706264, 0.403693,
        0.293052, -0.13497, -0.550012, -0.934474 },
    rot_k = { 0.32032, -0.91386, -0.78912, -1.054818, -0.990109, -0.986366, -0.900704,
        -0.779974, 0.020593, -0.744834, -0.203459, 0.006532 },
    prompt = { -0.005562, -0.00057, 0.004827, 0.006793, 0.003929, -0.001728, -0.006157,
        -0.006208, -0.001846, 0.003828, 0.006781 },
    dec1 = { -0.009043, -0.012436, -0.006987, 0.003429, 0.011406, 0.011275, 0.003127,
        -0.007243, -0.012464, -0.008826, 0.001087 },
    dec2 = { -0.002706, -0.024142, -0.028415, -0.012487, 0.012318, 0.028365, 0.024247,
        0.002892, -0.02052, -0.029345, -0.017307 },
}

describe("facebookresearch/llama llama/model.py", function()
    it("precompute_freqs_cis and apply_rotary_emb as PyTorch's", function()
        local fc = precompute_freqs_cis(8, 16)
        assert.equal("complex64", fc.dtype)
        assert.same({ 16, 4 }, fc.shape)
        -- the real tensor's properties over the complex dims (they read nil before)
        assert.equal(2, fc.ndim)
        assert.same({ 4, 16 }, fc.mT.shape)
        -- fc.H[0, 1] is conj(fc[1, 0]) = cos(1) - sin(1) j
        local re, im = fc.H[{ 1, 2 }]:item()
        assert_close_list({ 0.540302, -0.841471 }, { re, im }, 1e-6, "fc.H[0, 1]")
        local got = tide.view_as_real(fc):flatten():narrow(1, 1, #LL_REF.freqs_cis):tolist()
        assert_close_list(LL_REF.freqs_cis, got, 1e-5, "freqs_cis")
        local xq = sinx({ 1, 3, 2, 8 })
        local xk = sinx({ 1, 3, 2, 8 }, 0.23, 0.1)
        -- apply_rotary_emb(xq, xk, fc[0:3])
        local oq, ok = apply_rotary_emb(xq, xk, fc[{ { 1, 3 } }])
        assert.same({ 1, 3, 2, 8 }, oq.shape)
        assert.equal("float32", ok.dtype)
        -- position 0 is a rotation by angle 0: the input itself
        assert_close_list(xq[{ 1, 1 }]:flatten():tolist(), oq[{ 1, 1 }]:flatten():tolist(),
            1e-6, "rot_q at 0")
        assert_close_list(LL_REF.rot_q, oq[{ 1, 2 }]:flatten():narrow(1, 1, 12):tolist(), 1e-5,
            "rot_q")
        assert_close_list(LL_REF.rot_k, ok[{ 1, 2 }]:flatten():narrow(1, 1, 12):tolist(), 1e-5,
            "rot_k")
    end)

    it("Transformer: a 3-token prompt then 2 decode steps through the kv cache", function()
        local args = ModelArgs({ dim = 16, n_layers = 2, n_heads = 2, vocab_size = 11,
            multiple_of = 32, max_batch_size = 1, max_seq_len = 8 })
        local llama = Transformer(args)
        fill_from_formula(llama)
        -- int(2 * 64 / 3) = 42, rounded up to a multiple of 32
        assert.same({ 64, 16 }, llama.layers[1].feed_forward.w1.weight.shape)
        -- the caches are plain attributes, not parameters or buffers (as in model.py)
        assert.is_nil(llama:state_dict()["layers.0.attention.cache_k"])
        -- tokens = torch.tensor([[1, 5, 9]])
        local logits = llama(tide.tensor({ { 2, 6, 10 } }), 0)
        assert.same({ 1, 11 }, logits.shape)
        assert.is_false(logits.requires_grad)
        assert_close_list(LL_REF.prompt, logits:flatten():tolist(), 2e-6, "prompt logits")
        -- the decode steps feed fixed tokens (PyTorch's 3 and 4; the argmax of these tiny
        -- logits is within 2e-5 of a tie), one at a time at start_pos 3 and 4
        logits = llama(tide.tensor({ { 4 } }), 3)
        assert_close_list(LL_REF.dec1, logits:flatten():tolist(), 2e-6, "decode 1")
        logits = llama(tide.tensor({ { 5 } }), 4)
        assert_close_list(LL_REF.dec2, logits:flatten():tolist(), 2e-6, "decode 2")
        -- the cache holds the 5 positions written, zeros after
        local ck = llama.layers[1].attention.cache_k
        assert.is_true(ck[{ 1, 5 }]:abs():sum():item() > 0)
        assert.equal(0, ck[{ 1, { 6, 8 } }]:abs():sum():item())
    end)
end)
