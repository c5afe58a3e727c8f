-- ported_scripts166_spec.lua — pytorch/torchtune's attention building blocks at HEAD, ported line
-- for line at tiny sizes (embed 16, 4 heads, 2 kv heads, head dim 4, seq 6, batch 2) with fixed
-- weights (sin formulas), values against PyTorch 1.13 running the same Python:
--   torchtune/modules/position_embeddings.py  RotaryPositionalEmbeddings (rope_init,
--                                             build_rope_cache, forward with input_pos)
--   torchtune/modules/rms_norm.py             RMSNorm (fp32 compute)
--   torchtune/modules/kv_cache.py             KVCache (reset, size, update via cache_pos)
--   torchtune/modules/attention.py            MultiHeadAttention (GQA, pos_embeddings, q_norm /
--                                             k_norm, mask / is_causal, the kv_cache decode path)
--   torchtune/modules/attention_utils.py      _sdpa_or_flex_attention's _sdpa_call
--   torchtune/modules/feed_forward.py         FeedForward (gate / down / up)
--   torchtune/modules/transformer.py          TransformerSelfAttentionLayer (forward and caches)
-- Left out: VisionRotaryPositionalEmbeddings, the functional rms_norm, flex attention and
-- BlockMask (torchtune uses them only for packed samples on PyTorch >= 2.5 with CUDA),
-- mask_mod, TransformerCrossAttentionLayer / TransformerDecoder, logging.
-- Python's keyword-only arguments are one options table. Positions (input_pos, cache_pos) keep
-- torchtune's 0-based values, as they are data; where they index a tensor they add 1.
-- The Python line stands above each Lua line that differs from it.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list

---------------------------------------------------------------------------------------------
-- position_embeddings.py
---------------------------------------------------------------------------------------------
-- class RotaryPositionalEmbeddings(nn.Module):
local RotaryPositionalEmbeddings = nn.Module:extend("RotaryPositionalEmbeddings")
-- def __init__(self, dim: int, max_seq_len: int = 4096, base: int = 10_000) -> None:
function RotaryPositionalEmbeddings:init(dim, max_seq_len, base)
    self.dim = dim
    self.base = base or 10000
    self.max_seq_len = max_seq_len or 4096
    self:rope_init()
end

function RotaryPositionalEmbeddings:rope_init()
    -- theta = 1.0 / (
    --     self.base
    --     ** (torch.arange(0, self.dim, 2)[: (self.dim // 2)].float() / self.dim)
    -- )
    -- (Lua 5.1 and LuaJIT have no //: math.floor(a / b) throughout)
    local theta = 1.0 / (self.base
        ^ (tide.arange(0, self.dim, 2)[{ { 1, math.floor(self.dim / 2) } }]:float() / self.dim))
    self:register_buffer("theta", theta, false)
    self:build_rope_cache(self.max_seq_len)
end

-- def build_rope_cache(self, max_seq_len: int = 4096) -> None:
function RotaryPositionalEmbeddings:build_rope_cache(max_seq_len)
    max_seq_len = max_seq_len or 4096
    -- seq_idx = torch.arange(
    --     max_seq_len, dtype=self.theta.dtype, device=self.theta.device
    -- )
    local seq_idx = tide.arange(max_seq_len, { dtype = self.theta.dtype,
        device = self.theta.device })
    -- idx_theta = torch.einsum("i, j -> ij", seq_idx, self.theta).float()
    local idx_theta = tide.einsum("i, j -> ij", seq_idx, self.theta):float()
    -- cache = torch.stack([torch.cos(idx_theta), torch.sin(idx_theta)], dim=-1)
    local cache = tide.stack({ tide.cos(idx_theta), tide.sin(idx_theta) }, -1)
    self:register_buffer("cache", cache, false)
end

-- def forward(self, x: torch.Tensor, *, input_pos: Optional[torch.Tensor] = None):
function RotaryPositionalEmbeddings:forward(x, opts)
    local input_pos = opts and opts.input_pos
    -- seq_len = x.size(1)
    local seq_len = x:size(2)
    -- rope_cache = (
    --     self.cache[:seq_len] if input_pos is None else self.cache[input_pos]
    -- )
    local rope_cache
    if input_pos == nil then
        rope_cache = self.cache[{ { 1, seq_len } }]
    else
        rope_cache = self.cache[input_pos + 1]
    end
    -- xshaped = x.float().reshape(*x.shape[:-1], -1, 2)
    local xshaped = x:float():reshape(x.shape[{ { 1, -2 } }] + { -1, 2 })
    -- rope_cache = rope_cache.view(-1, xshaped.size(1), 1, xshaped.size(3), 2)
    rope_cache = rope_cache:view(-1, xshaped:size(2), 1, xshaped:size(4), 2)
    -- x_out = torch.stack(
    --     [
    --         xshaped[..., 0] * rope_cache[..., 0]
    --         - xshaped[..., 1] * rope_cache[..., 1],
    --         xshaped[..., 1] * rope_cache[..., 0]
    --         + xshaped[..., 0] * rope_cache[..., 1],
    --     ],
    --     -1,
    -- )
    local x_out = tide.stack({
        xshaped[{ "...", 1 }] * rope_cache[{ "...", 1 }]
            - xshaped[{ "...", 2 }] * rope_cache[{ "...", 2 }],
        xshaped[{ "...", 2 }] * rope_cache[{ "...", 1 }]
            + xshaped[{ "...", 1 }] * rope_cache[{ "...", 2 }],
    }, -1)
    -- x_out = x_out.flatten(3)
    x_out = x_out:flatten(4)
    return x_out:type_as(x)
end

---------------------------------------------------------------------------------------------
-- rms_norm.py
---------------------------------------------------------------------------------------------
-- class RMSNorm(nn.Module):
local RMSNorm = nn.Module:extend("RMSNorm")
-- def __init__(self, dim: int, eps: float = 1e-6) -> None:
function RMSNorm:init(dim, eps)
    -- self.normalized_shape = (dim,)
    self.normalized_shape = { dim }
    self.eps = eps or 1e-6
    self.scale = nn.Parameter(tide.ones(dim))
end

function RMSNorm:forward(x)
    -- computation is in fp32
    local x_fp32 = x:float()
    -- x_normed = (
    --     x_fp32 * torch.rsqrt(x_fp32.pow(2).mean(-1, keepdim=True) + self.eps)
    -- ).type_as(x)
    local x_normed = (x_fp32 * tide.rsqrt(x_fp32:pow(2):mean(-1, { keepdim = true })
        + self.eps)):type_as(x)
    return x_normed * self.scale
end

---------------------------------------------------------------------------------------------
-- kv_cache.py
---------------------------------------------------------------------------------------------
-- class KVCache(nn.Module):
local KVCache = nn.Module:extend("KVCache")
-- def __init__(self, batch_size, max_seq_len, num_kv_heads, head_dim, dtype) -> None:
function KVCache:init(batch_size, max_seq_len, num_kv_heads, head_dim, dtype)
    -- cache_shape = (batch_size, num_kv_heads, max_seq_len, head_dim)
    local cache_shape = { batch_size, num_kv_heads, max_seq_len, head_dim }
    -- self.register_buffer(
    --     "k_cache", torch.zeros(cache_shape, dtype=dtype), persistent=False
    -- )
    self:register_buffer("k_cache", tide.zeros(cache_shape, { dtype = dtype }), false)
    self:register_buffer("v_cache", tide.zeros(cache_shape, { dtype = dtype }), false)
    -- self.register_buffer(
    --     "cache_pos", torch.arange(0, cache_shape[2]), persistent=False
    -- )
    self:register_buffer("cache_pos", tide.arange(0, cache_shape[3]), false)
    self.batch_size = batch_size
end

-- def reset(self) -> None:
function KVCache:reset()
    self.k_cache:zero_()
    self.v_cache:zero_()
    -- self.cache_pos -= self.size
    self.cache_pos:sub_(self:size())
end

-- @property
-- def size(self) -> int:
function KVCache:size()
    -- return self.cache_pos[0].item()
    return self.cache_pos[1]:item()
end

-- def update(self, k_val: torch.Tensor, v_val: torch.Tensor):
function KVCache:update(k_val, v_val)
    -- bsz, _, seq_len, _ = k_val.shape
    local bsz, _, seq_len = unpack(k_val.shape)
    -- if bsz > self.k_cache.shape[0]:
    if bsz > self.k_cache.shape[1] then
        -- raise ValueError(
        error(string.format("The current cache has been setup with a batch size of %d"
            .. ", but found new key tensors with batch size %d!", self.k_cache.shape[1],
            k_val.shape[1]))
    end
    -- assert (self.cache_pos[0] + seq_len) <= self.k_cache.shape[2]
    assert((self.cache_pos[1] + seq_len):item() <= self.k_cache.shape[3])
    local k_out = self.k_cache
    local v_out = self.v_cache
    -- k_out[:, :, self.cache_pos[:seq_len]] = k_val
    k_out[{ {}, {}, self.cache_pos[{ { 1, seq_len } }] + 1 }] = k_val
    -- v_out[:, :, self.cache_pos[:seq_len]] = v_val
    v_out[{ {}, {}, self.cache_pos[{ { 1, seq_len } }] + 1 }] = v_val
    -- forward cache_pos seq_len positions along
    self.cache_pos:add_(seq_len)
    return k_out, v_out
end

---------------------------------------------------------------------------------------------
-- attention_utils.py (_sdpa_or_flex_attention without flex) and attention.py
---------------------------------------------------------------------------------------------
-- def _sdpa_call(q, k, v, mask, dropout_p, is_causal):
local function _sdpa_call(q, k, v, mask, dropout_p, is_causal)
    -- shape: [b, 1, s, s]
    if mask ~= nil then
        -- mask = mask[:, None, :, :]
        mask = mask[{ {}, tide.newaxis, {}, {} }]
    end
    -- return nn.functional.scaled_dot_product_attention(
    --     q, k, v, attn_mask=mask, dropout_p=dropout_p, is_causal=is_causal
    -- )
    return F.scaled_dot_product_attention(q, k, v,
        { attn_mask = mask, dropout_p = dropout_p, is_causal = is_causal })
end

-- class MultiHeadAttention(nn.Module):
local MultiHeadAttention = nn.Module:extend("MultiHeadAttention")
-- def __init__(self, *, embed_dim, num_heads, num_kv_heads, head_dim, q_proj, k_proj, v_proj,
--              output_proj, pos_embeddings=None, q_norm=None, k_norm=None, kv_cache=None,
--              max_seq_len=4096, is_causal=True, attn_dropout=0.0) -> None:
function MultiHeadAttention:init(o)
    local embed_dim, num_heads, num_kv_heads = o.embed_dim, o.num_heads, o.num_kv_heads
    local max_seq_len, attn_dropout = o.max_seq_len or 4096, o.attn_dropout or 0.0
    local is_causal = o.is_causal
    if is_causal == nil then is_causal = true end
    if num_heads % num_kv_heads ~= 0 then
        -- raise ValueError(
        error(string.format("num_heads (%d) must be divisible by num_kv_heads (%d)",
            num_heads, num_kv_heads))
    end
    if embed_dim % num_heads ~= 0 then
        error(string.format("embed_dim (%d) must be divisible by num_heads (%d)",
            embed_dim, num_heads))
    end
    if attn_dropout < 0 or attn_dropout > 1 then
        -- raise ValueError(f"attn_dropout ({embed_dim}) must be between 0.0 and 1.0")
        error(string.format("attn_dropout (%d) must be between 0.0 and 1.0", embed_dim))
    end
    -- if bool(q_norm) ^ bool(k_norm):
    if (o.q_norm ~= nil) ~= (o.k_norm ~= nil) then
        error("q and k norm must be set together")
    end
    -- Set attributes
    self.num_heads = num_heads
    self.num_kv_heads = num_kv_heads
    self.embed_dim = embed_dim
    self.attn_dropout = attn_dropout
    self.head_dim = o.head_dim
    self.max_seq_len = max_seq_len
    self.is_causal = is_causal
    -- Set layers
    self.kv_cache = o.kv_cache
    self.q_proj = o.q_proj
    self.k_proj = o.k_proj
    self.v_proj = o.v_proj
    self.output_proj = o.output_proj
    self.q_norm = o.q_norm
    self.k_norm = o.k_norm
    self.pos_embeddings = o.pos_embeddings
    -- self._attention_call = _sdpa_or_flex_attention()
    self._attention_call = _sdpa_call
    self.cache_enabled = false
end

-- def setup_cache(self, batch_size: int, dtype: torch.dtype, max_seq_len: int) -> None:
function MultiHeadAttention:setup_cache(batch_size, dtype, max_seq_len)
    -- Don't overwrite user defined kv_cache from init
    if self.kv_cache ~= nil then
        -- logger.warning("Key value caches are already setup. You cannot call "
        --                "``setup_caches()`` twice. Skipping.")
        io.stderr:write("Key value caches are already setup. You cannot call "
            .. "``setup_caches()`` twice. Skipping.\n")
    else
        -- self.kv_cache = KVCache(
        --     batch_size=batch_size, max_seq_len=max_seq_len, num_kv_heads=self.num_kv_heads,
        --     head_dim=self.head_dim, dtype=dtype,
        -- )
        self.kv_cache = KVCache(batch_size, max_seq_len, self.num_kv_heads, self.head_dim, dtype)
        self.cache_enabled = true
    end
end

function MultiHeadAttention:reset_cache()
    if self.kv_cache == nil then
        -- raise RuntimeError(
        error("Key value caches are not setup. Call ``setup_caches()`` first.")
    end
    self.kv_cache:reset()
end

-- def forward(self, x, y=None, *, mask=None, input_pos=None) -> torch.Tensor:
function MultiHeadAttention:forward(x, y, opts)
    opts = opts or {}
    local mask, input_pos = opts.mask, opts.input_pos
    -- x has shape [b, s_x, d]
    -- y has shape [b, s_y, d]
    -- b, s_x, _ = x.shape
    local b, s_x = x:size(1), x:size(2)
    -- s_y = y.shape[1] if y is not None else 0
    local s_y = y ~= nil and y.shape[2] or 0

    -- q has shape [b, s_x, num_heads * head_dim]
    local q = self.q_proj(x)

    -- number of queries per key/value
    -- q_per_kv = self.num_heads // self.num_kv_heads
    local q_per_kv = math.floor(self.num_heads / self.num_kv_heads)
    q = q:view(b, s_x, self.num_kv_heads * q_per_kv, self.head_dim)

    -- Apply positional embeddings
    if self.pos_embeddings ~= nil then
        -- q = self.pos_embeddings(q, input_pos=input_pos)
        q = self.pos_embeddings(q, { input_pos = input_pos })
    end

    -- [b, n_h, s_x, h_d]
    -- q = q.transpose(1, 2)
    q = q:transpose(2, 3)

    -- Normalize q
    if self.q_norm ~= nil then
        q = self.q_norm(q)
    end

    local k, v
    if y == nil then
        if self.kv_cache == nil or not self.cache_enabled then
            -- raise ValueError(
            error("Must provide y input or use kv_cache to enable streaming decoding")
        end
        k = self.kv_cache.k_cache
        v = self.kv_cache.v_cache
    else
        -- Update k and v shape, positional embeddings, and normalization

        -- k,v shape [b, s_y, num_kv_heads * head_dim]
        k = self.k_proj(y)
        v = self.v_proj(y)

        -- Apply positional embeddings
        -- k,v shape: [b, s_y, n_kv, h_d]
        k = k:view(b, s_y, -1, self.head_dim)
        v = v:view(b, s_y, -1, self.head_dim)
        if self.pos_embeddings ~= nil then
            -- k = self.pos_embeddings(k, input_pos=input_pos)
            k = self.pos_embeddings(k, { input_pos = input_pos })
        end

        -- k,v shape: [b, n_kv, s_y, h_d]
        -- k = k.transpose(1, 2)
        k = k:transpose(2, 3)
        -- v = v.transpose(1, 2)
        v = v:transpose(2, 3)

        -- Normalize k
        if self.k_norm ~= nil then
            k = self.k_norm(k)
        end

        -- Update key-value cache
        if self.kv_cache ~= nil and self.cache_enabled then
            k, v = self.kv_cache:update(k, v)
        end
    end

    -- If needed, expand the key and value tensors to have the same shape
    -- as the query tensor by copying values across the relevant dim
    -- k,v shape: [b, n_kv, s, h_d] -> [b, n_h, s, h_d]
    if self.num_heads ~= self.num_kv_heads then
        -- expand_shape = (b, self.num_kv_heads, q_per_kv, -1, self.head_dim)
        local expand_shape = { b, self.num_kv_heads, q_per_kv, -1, self.head_dim }
        -- k = k.unsqueeze(2).expand(expand_shape).flatten(1, 2)
        k = k:unsqueeze(3):expand(expand_shape):flatten(2, 3)
        -- v = v.unsqueeze(2).expand(expand_shape).flatten(1, 2)
        v = v:unsqueeze(3):expand(expand_shape):flatten(2, 3)
    end

    -- output = self._attention_call(
    --     q, k, v, mask=mask,
    --     dropout_p=self.attn_dropout if self.training else 0.0,
    --     is_causal=self.kv_cache is None and mask is None and self.is_causal,
    -- )
    local output = self._attention_call(q, k, v, mask,
        self.training and self.attn_dropout or 0.0,
        self.kv_cache == nil and mask == nil and self.is_causal)

    -- reshape the output to be the same shape as the input
    -- output = output.transpose(1, 2).contiguous().view(b, s_x, -1)
    output = output:transpose(2, 3):contiguous():view(b, s_x, -1)
    return self.output_proj(output)
end

---------------------------------------------------------------------------------------------
-- feed_forward.py
---------------------------------------------------------------------------------------------
-- class FeedForward(nn.Module):
local FeedForward = nn.Module:extend("FeedForward")
-- def __init__(self, *, gate_proj, down_proj, up_proj=None, activation=nn.SiLU()):
function FeedForward:init(o)
    self.w1 = o.gate_proj
    self.w2 = o.down_proj
    self.w3 = o.up_proj
    self.activation = o.activation or nn.SiLU()
end

function FeedForward:forward(x)
    local h = self.activation(self.w1(x))
    if self.w3 ~= nil then
        h = h * self.w3(x)
    end
    h = self.w2(h)
    return h
end

---------------------------------------------------------------------------------------------
-- transformer.py
---------------------------------------------------------------------------------------------
-- class TransformerSelfAttentionLayer(nn.Module):
local TransformerSelfAttentionLayer = nn.Module:extend("TransformerSelfAttentionLayer")
-- def __init__(self, attn, mlp, *, sa_norm=None, mlp_norm=None, sa_scale=None,
--              mlp_scale=None, mask_mod=None) -> None:
function TransformerSelfAttentionLayer:init(attn, mlp, o)
    o = o or {}
    self.attn = attn
    self.mlp = mlp
    -- self.sa_norm = sa_norm or nn.Identity()
    self.sa_norm = o.sa_norm or nn.Identity()
    self.mlp_norm = o.mlp_norm or nn.Identity()
    self.sa_scale = o.sa_scale or nn.Identity()
    self.mlp_scale = o.mlp_scale or nn.Identity()
end

-- def setup_caches(self, batch_size, dtype, *, encoder_max_seq_len, decoder_max_seq_len):
function TransformerSelfAttentionLayer:setup_caches(batch_size, dtype, o)
    -- self.attn.setup_cache(batch_size, dtype, max_seq_len=decoder_max_seq_len)
    self.attn:setup_cache(batch_size, dtype, o.decoder_max_seq_len)
end

function TransformerSelfAttentionLayer:caches_are_setup()
    return self.attn.kv_cache ~= nil
end

function TransformerSelfAttentionLayer:caches_are_enabled()
    return self.attn.cache_enabled
end

function TransformerSelfAttentionLayer:reset_cache()
    self.attn:reset_cache()
end

-- def forward(self, x, *, mask=None, input_pos=None, **kwargs) -> torch.Tensor:
function TransformerSelfAttentionLayer:forward(x, opts)
    opts = opts or {}
    -- Input tensor and attention output have the same shape
    -- [b, s, d]
    -- Norm applied before self-attention
    local h = self.sa_norm(x)
    -- attn_out = self.attn(h, h, mask=mask, input_pos=input_pos)
    local attn_out = self.attn(h, h, { mask = opts.mask, input_pos = opts.input_pos })
    -- Residual connection; shape: [batch_size, seq_length, embed_dim]
    h = self.sa_scale(attn_out) + x

    -- Norm applied before the feedforward layer
    local mlp_out = self.mlp(self.mlp_norm(h))

    -- Residual connection; shape: [batch_size, seq_length, embed_dim]
    local out = h + self.mlp_scale(mlp_out)
    return out
end

---------------------------------------------------------------------------------------------
-- the checks, against /tmp's PyTorch 1.13 script running the same Python
---------------------------------------------------------------------------------------------
local E, H, KV, HD, S, B, MAXS = 16, 4, 2, 4, 6, 2, 8

-- fixed((o, i), off, scale): sin(0.37 * k + off) * scale over the flat index k, reshaped
local function fixed(shape, off, scale)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    return (tide.arange(0, n):float() * 0.37 + off):sin():mul(scale or 0.3):reshape(shape)
end

local function lin(i, o, off)
    local l = nn.Linear(i, o, { bias = false })
    tide.no_grad(function() l.weight:copy_(fixed({ o, i }, off)) end)
    return l
end

local function make(qk_norm)
    return MultiHeadAttention({ embed_dim = E, num_heads = H, num_kv_heads = KV, head_dim = HD,
        q_proj = lin(E, H * HD, 0.0), k_proj = lin(E, KV * HD, 1.0),
        v_proj = lin(E, KV * HD, 2.0), output_proj = lin(H * HD, E, 3.0),
        pos_embeddings = RotaryPositionalEmbeddings(HD, MAXS),
        q_norm = qk_norm and RMSNorm(HD) or nil, k_norm = qk_norm and RMSNorm(HD) or nil,
        max_seq_len = MAXS })
end

local function flat(t) return t:detach():reshape(-1):tolist() end
local TOL = 2e-5

describe("ported torchtune attention modules (position_embeddings, rms_norm, kv_cache, "
    .. "attention, feed_forward, transformer)", function()
    local x = fixed({ B, S, E }, 0.5, 1.0)

    it("RotaryPositionalEmbeddings: theta, the cos/sin cache, forward with and without input_pos",
        function()
            local rope = RotaryPositionalEmbeddings(HD, MAXS)
            assert_close_list({ 1.0, 0.01 }, flat(rope.theta), 1e-6, "theta")
            assert.are.same({ MAXS, HD / 2, 2 }, rope.cache.shape)
            -- non-persistent buffers stay out of the state dict, as in torchtune
            assert.is_nil(next(rope:state_dict()))
            local xr = fixed({ B, S, H, HD }, 0.1, 1.0)
            local out = rope(xr)
            assert.are.same({ B, S, H, HD }, out.shape)
            -- rope(xr)[:, :, 0].reshape(-1)[:24]
            assert_close_list({ 0.0998334, 0.4528863, 0.7446432, 0.935616, -0.2302742,
                -0.1613125, 0.4514367, 0.7537264, 0.47452, -0.4275144, 0.1040634, 0.4671701,
                0.9093623, 0.4569159, -0.2504663, 0.1126921, 0.0084902, 1.282726, -0.5650398,
                -0.2631692, -1.2154615, 0.6723229, -0.7987219, -0.6102049 },
                flat(out[{ {}, {}, 1 }]:reshape(-1)[{ { 1, 24 } }]), TOL, "rope")
            -- ipos = torch.tensor([[2, 3, 4, 5, 6, 7], [0, 1, 2, 0, 1, 2]]) (packed samples)
            local ipos = tide.tensor({ { 2, 3, 4, 5, 6, 7 }, { 0, 1, 2, 0, 1, 2 } })
            assert_close_list({ -0.5639105, -0.2271152, 0.1404227, 0.4889514, 0.0264454,
                -0.9920664, -0.2219331, 0.1449516, 1.1462145, -0.5422515, -0.5482147,
                -0.224828, -0.9930612, -0.9683837, -0.8126407, -0.5469112, 0.3573057,
                -1.2829427, -0.9585263, -0.818276, 1.0853909, -0.233822, -0.9750765,
                -0.9845915 }, flat(rope(xr, { input_pos = ipos })[{ 2, {}, 2 }]), TOL,
                "rope_pos")
            -- type_as: a float64 input comes back float64
            assert.are.equal("float64", rope(xr:double()).dtype)
        end)

    it("RMSNorm computes in fp32 and scales", function()
        local norm = RMSNorm(E)
        tide.no_grad(function() norm.scale:copy_(1 + fixed({ E }, 0.2, 0.1)) end)
        assert_close_list({ -0.9471284, -1.3032314, -1.4881783, -1.459691, -1.2148783,
            -0.794149, -0.2719339, 0.2625151, 0.7269465, 1.0624133, 1.2391987, 1.252651,
            1.1137176, 0.8407846, 0.4574195, -0.0038398 }, flat(norm(x)[{ 2, 3 }]), TOL, "rms")
        assert.are.equal("float64", norm(x:double()).dtype)
    end)

    it("MultiHeadAttention with GQA: causal pass, gradient w.r.t. q_proj.weight", function()
        local attn = make(false)
        local out = attn(x, x)
        assert.are.same({ B, S, E }, out.shape)
        -- out[:, -2:]
        assert_close_list({ 3.6267664, 2.3475225, 0.7620206, -0.9228944, -2.4874091,
            -3.7274148, -4.4811444, -4.6502638, -4.212708, -3.2255628, -1.8176128, -0.1725329,
            1.4950505, 2.967591, 4.0529857, 4.6096234, 1.6619643, 0.9447775, 0.1043352,
            -0.7497194, -1.5059656, -2.0657418, -2.3560243, -2.3389373, -2.0167148, -1.4313898,
            -0.6593271, 0.1987537, 1.0309013, 1.7285579, 2.2007124, 2.3857605, 0.3457706,
            0.9848822, 1.4955065, 1.8110268, 1.8902806, 1.7229282, 1.330803, 0.765061, 0.0995094,
            -0.5790252, -1.1820195, -1.6308085, -1.8668395, -1.8593214, -1.6092448, -1.1492226,
            -0.1771129, 0.4445833, 1.0082794, 1.4404352, 1.6846724, 1.709126, 1.5106083,
            1.1150163, 0.5739589, -0.0419781, -0.6524372, -1.1777812, -1.5494678, -1.7190112,
            -1.6643003, -1.3924603 }, flat(out[{ {}, { -2, -1 } }]), TOL, "attn_full_last")
        out:pow(2):sum():backward()
        local g = attn.q_proj.weight.grad
        assert_close_list({ -16.9290524, -20.6969929, -21.6637573, -19.6983871, -15.0669565,
            -8.3962612, -0.5891889, 7.2976274, 14.1967649, 19.1744366, 21.5569096, 21.0217609,
            17.6414204, 11.8734255, 4.4984012, -3.4854732 }, flat(g:reshape(-1)[{ { 1, 16 } }]),
            1e-4, "q_proj grad")
        assert_close_list({ 1980.6595458984375 }, { g:abs():sum():item() }, 1e-5, "grad sum")
    end)

    it("MultiHeadAttention with q_norm / k_norm, and with a bool mask [b, s, s]", function()
        local attn2 = make(true)
        assert_close_list({ 2.5662086, 1.3610674, -0.021639, -1.4015218, -2.5985627, -3.4565942,
            -3.8636806, -3.7667096, -3.1783345, -2.1753123, -0.8885013, 0.5142274, 1.8498644,
            2.9441698, 3.6543846, 3.8878455 }, flat(attn2(x, x)[{ 1, 4 }]), TOL, "attn_qknorm")
        -- mask = torch.ones(B, S, S, dtype=torch.bool).tril()
        local mask = tide.ones(B, S, S, { dtype = "bool" }):tril()
        -- mask[1, :, 0] = False; mask[1, 0, 0] = True
        mask[{ 2, {}, 1 }] = false
        mask[{ 2, 1, 1 }] = true
        assert_close_list({ 3.0727253, 2.6758492, 1.9298825, 0.9321433, -0.1872039, -1.2821281,
            -2.2097857, -2.8491566, -3.1168239, -2.9778709, -2.4504278, -1.6032991, -0.5470045,
            0.5806543, 1.6325577, 2.4714756, 1.9344199, 1.9526716, 1.7161787, 1.2557923,
            0.6315756, -0.0750367, -0.7718596, -1.367987, -1.7856448, -1.9703479, -1.8980011,
            -1.5780405, -1.0522071, -0.3891017, 0.3247619, 0.9962553 },
            flat(attn2(x, x, { mask = mask })[{ 2, { 1, 2 } }]), TOL, "attn_mask")
        assert.has_error(function()
            make(false)(x)
        end, "Must provide y input or use kv_cache to enable streaming decoding")
    end)

    it("KVCache decoding: prefill 4 tokens, 2 steps match the full pass's last rows; reset",
        function()
            local full = make(false)(x, x)
            local dec = make(false)
            dec:setup_cache(B, "float32", MAXS)
            assert.is_true(dec.cache_enabled)
            -- causal = torch.tril(torch.ones(MAXS, MAXS, dtype=torch.bool))
            local causal = tide.tril(tide.ones(MAXS, MAXS, { dtype = "bool" }))
            tide.no_grad(function()
                -- pos = torch.arange(4)
                local pos = tide.arange(4)
                -- dec(x[:, :4], x[:, :4], mask=causal[None, pos].expand(B, -1, -1),
                --     input_pos=pos.expand(B, -1))
                local xp = x[{ {}, { 1, 4 } }]
                local o1 = dec(xp, xp, { mask = causal[{ tide.newaxis, pos + 1 }]:expand(B, -1, -1),
                    input_pos = pos:expand(B, -1) })
                assert_close_list(flat(full[{ {}, { 1, 4 } }]), flat(o1), TOL, "prefill")
                assert.are.equal(4, dec.kv_cache:size())
                -- for t in (4, 5):
                for t = 4, 5 do
                    -- pos = torch.tensor([t])
                    pos = tide.tensor({ t })
                    -- x[:, t:t+1]
                    local xt = x[{ {}, { t + 1, t + 1 } }]
                    local o = dec(xt, xt, { mask = causal[{ tide.newaxis, pos + 1 }]:expand(B, -1,
                        -1), input_pos = pos:expand(B, -1) })
                    assert.are.same({ B, 1, E }, o.shape)
                    assert_close_list(flat(full[{ {}, { t + 1, t + 1 } }]), flat(o), TOL,
                        "decode step " .. t)
                end
            end)
            assert.are.equal(6, dec.kv_cache:size())
            assert.are.same({ 6, 7, 12, 13 }, tide.cat({ dec.kv_cache.cache_pos[{ { 1, 2 } }],
                dec.kv_cache.cache_pos[{ { -2, -1 } }] }):tolist())
            dec:reset_cache()
            assert.are.equal(0, dec.kv_cache:size())
            assert.are.equal(0, dec.kv_cache.k_cache:abs():sum():item())
            assert.has_error(function()
                dec.kv_cache:update(tide.zeros(3, KV, 1, HD), tide.zeros(3, KV, 1, HD))
            end, "The current cache has been setup with a batch size of 2, but found new key "
                .. "tensors with batch size 3!")
        end)

    it("TransformerSelfAttentionLayer with RMSNorm and FeedForward (SiLU gate)", function()
        local layer = TransformerSelfAttentionLayer(make(false), FeedForward({
            gate_proj = lin(E, 24, 4.0), down_proj = lin(24, E, 5.0), up_proj = lin(E, 24, 6.0) }),
            { sa_norm = RMSNorm(E), mlp_norm = RMSNorm(E) })
        assert.is_false(layer:caches_are_setup())
        assert_close_list({ -6.1725535, 6.3763361, -0.9268184, -0.5918559, 5.9890261, -6.2681026,
            7.0252519, -4.8287973, 0.6776414, 1.722981, -6.6986399, 5.9378281, -7.4864788,
            3.1237674, -0.8416727, -3.5376613 }, flat(layer(x)[{ 2, 6 }]), 1e-4, "layer")
        layer:setup_caches(B, "float32", { encoder_max_seq_len = MAXS, decoder_max_seq_len = MAXS })
        assert.is_true(layer:caches_are_setup() and layer:caches_are_enabled())
    end)
end)
