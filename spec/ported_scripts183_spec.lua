-- ported_scripts183_spec.lua — facebookresearch/esm: esm/modules.py (gelu, symmetrize, apc,
-- ESM1LayerNorm, TransformerLayer, LearnedPositionalEmbedding with padding_idx, RobertaLMHead
-- with the tied weight, ContactPredictionHead with eos/bos removal), esm/multihead_attention.py
-- (MultiheadAttention with add_bias_kv, key_padding_mask and use_rotary_embeddings),
-- esm/rotary_embedding.py (rotate_half, apply_rotary_pos_emb, RotaryEmbedding with its cached
-- cos/sin) and esm/axial_attention.py (RowSelfAttention with align_scaling and tied row
-- attention over the MSA, ColumnSelfAttention), ported line for line at tiny sizes (embed 16,
-- heads 2, an MSA of 5 sequences of length 7, batch 1, vocab 12). The Python line stands above
-- each Lua line that differs from it. Values are PyTorch 1.13's, with the same weights
-- (p = sin(arange(numel) * 0.37 + i) * 0.2 over each parameter's index i in named_parameters
-- order). Token ids and padding_idx are 1-based: ESM's pad 1, cls 0, eos 2 are tide's 2, 1, 3.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list

local function flat(t)
    return t:contiguous():view(-1):tolist()
end

---------------------------------------------------------------------------------------------
-- esm/rotary_embedding.py
---------------------------------------------------------------------------------------------
-- def rotate_half(x):
local function rotate_half(x)
    -- x1, x2 = x.chunk(2, dim=-1)
    local x1, x2 = unpack(x:chunk(2, { dim = -1 }))
    -- return torch.cat((-x2, x1), dim=-1)
    return tide.cat({ -x2, x1 }, { dim = -1 })
end

-- def apply_rotary_pos_emb(x, cos, sin):
local function apply_rotary_pos_emb(x, cos, sin)
    -- cos = cos[:, : x.shape[-2], :]
    cos = cos[{ {}, { 1, x:size(-2) }, {} }]
    sin = sin[{ {}, { 1, x:size(-2) }, {} }]
    return (x * cos) + (rotate_half(x) * sin)
end

-- class RotaryEmbedding(torch.nn.Module):
local RotaryEmbedding = nn.Module:extend("RotaryEmbedding")
-- def __init__(self, dim: int, *_, **__):
function RotaryEmbedding:init(dim)
    -- inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
    local inv_freq = 1.0 / (tide.pow(10000, tide.arange(0, dim, 2):float() / dim))
    self:register_buffer("inv_freq", inv_freq)
    self._seq_len_cached = nil
    self._cos_cached = nil
    self._sin_cached = nil
end

-- def _update_cos_sin_tables(self, x, seq_dimension=1):
function RotaryEmbedding:_update_cos_sin_tables(x, seq_dimension)
    seq_dimension = seq_dimension or 2
    -- seq_len = x.shape[seq_dimension]
    local seq_len = x:size(seq_dimension)
    -- if seq_len != self._seq_len_cached or self._cos_cached.device != x.device:
    if seq_len ~= self._seq_len_cached or self._cos_cached.device ~= x.device then
        self._seq_len_cached = seq_len
        -- t = torch.arange(x.shape[seq_dimension], device=x.device).type_as(self.inv_freq)
        local t = tide.arange(0, x:size(seq_dimension), { device = x.device })
            :type_as(self.inv_freq)
        -- freqs = torch.einsum("i,j->ij", t, self.inv_freq)
        local freqs = tide.einsum("i,j->ij", t, self.inv_freq)
        -- emb = torch.cat((freqs, freqs), dim=-1).to(x.device)
        local emb = tide.cat({ freqs, freqs }, { dim = -1 }):to(x.device)
        -- self._cos_cached = emb.cos()[None, :, :]
        self._cos_cached = emb:cos()[{ tide.newaxis, {}, {} }]
        self._sin_cached = emb:sin()[{ tide.newaxis, {}, {} }]
    end
    return self._cos_cached, self._sin_cached
end

-- def forward(self, q: torch.Tensor, k: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
function RotaryEmbedding:forward(q, k)
    -- self._cos_cached, self._sin_cached = self._update_cos_sin_tables(k, seq_dimension=-2)
    self._cos_cached, self._sin_cached = self:_update_cos_sin_tables(k, -2)
    return apply_rotary_pos_emb(q, self._cos_cached, self._sin_cached),
        apply_rotary_pos_emb(k, self._cos_cached, self._sin_cached)
end

---------------------------------------------------------------------------------------------
-- esm/multihead_attention.py (the path ESM takes with rotary embeddings or head weights;
-- incremental decoding's saved state and F.multi_head_attention_forward are not ported)
---------------------------------------------------------------------------------------------
-- def utils_softmax(x, dim: int, onnx_trace: bool = False):
local function utils_softmax(x, dim)
    -- return F.softmax(x, dim=dim, dtype=torch.float32)
    return F.softmax(x, { dim = dim, dtype = "float32" })
end

-- class MultiheadAttention(nn.Module):
local MultiheadAttention = nn.Module:extend("MultiheadAttention")
-- def __init__(self, embed_dim, num_heads, kdim=None, vdim=None, dropout=0.0, bias=True,
--              add_bias_kv=False, add_zero_attn=False, self_attention=False,
--              encoder_decoder_attention=False, use_rotary_embeddings=False):
function MultiheadAttention:init(embed_dim, num_heads, opts)
    opts = opts or {}
    local bias = opts.bias ~= false
    self.embed_dim = embed_dim
    self.kdim = opts.kdim or embed_dim
    self.vdim = opts.vdim or embed_dim
    self.qkv_same_dim = self.kdim == embed_dim and self.vdim == embed_dim
    self.num_heads = num_heads
    self.dropout = opts.dropout or 0.0
    -- self.head_dim = embed_dim // num_heads
    self.head_dim = math.floor(embed_dim / num_heads)
    assert(self.head_dim * num_heads == self.embed_dim, "embed_dim must be divisible by num_heads")
    self.scaling = self.head_dim ^ -0.5
    -- self.k_proj = nn.Linear(self.kdim, embed_dim, bias=bias)
    self.k_proj = nn.Linear(self.kdim, embed_dim, { bias = bias })
    self.v_proj = nn.Linear(self.vdim, embed_dim, { bias = bias })
    self.q_proj = nn.Linear(embed_dim, embed_dim, { bias = bias })
    self.out_proj = nn.Linear(embed_dim, embed_dim, { bias = bias })
    if opts.add_bias_kv then
        -- self.bias_k = Parameter(torch.Tensor(1, 1, embed_dim))
        self.bias_k = nn.Parameter(tide.empty(1, 1, embed_dim))
        self.bias_v = nn.Parameter(tide.empty(1, 1, embed_dim))
    end
    self.add_zero_attn = opts.add_zero_attn or false
    self:reset_parameters()
    self.rot_emb = nil
    if opts.use_rotary_embeddings then
        self.rot_emb = RotaryEmbedding(self.head_dim)
    end
end

function MultiheadAttention:reset_parameters()
    if self.qkv_same_dim then
        -- nn.init.xavier_uniform_(self.k_proj.weight, gain=1 / math.sqrt(2))
        nn.init.xavier_uniform_(self.k_proj.weight, 1 / math.sqrt(2))
        nn.init.xavier_uniform_(self.v_proj.weight, 1 / math.sqrt(2))
        nn.init.xavier_uniform_(self.q_proj.weight, 1 / math.sqrt(2))
    else
        nn.init.xavier_uniform_(self.k_proj.weight)
        nn.init.xavier_uniform_(self.v_proj.weight)
        nn.init.xavier_uniform_(self.q_proj.weight)
    end
    nn.init.xavier_uniform_(self.out_proj.weight)
    if self.out_proj.bias ~= nil then
        nn.init.constant_(self.out_proj.bias, 0.0)
    end
    if self.bias_k ~= nil then
        nn.init.xavier_normal_(self.bias_k)
    end
    if self.bias_v ~= nil then
        nn.init.xavier_normal_(self.bias_v)
    end
end

-- def forward(self, query, key, value, key_padding_mask=None, incremental_state=None,
--             need_weights=True, static_kv=False, attn_mask=None, before_softmax=False,
--             need_head_weights=False):
function MultiheadAttention:forward(query, key, value, opts)
    opts = opts or {}
    local key_padding_mask, attn_mask = opts.key_padding_mask, opts.attn_mask
    local need_weights = opts.need_weights ~= false
    if opts.need_head_weights then
        need_weights = true
    end
    -- tgt_len, bsz, embed_dim = query.size()
    local tgt_len, bsz, embed_dim = unpack(query:size())
    assert(embed_dim == self.embed_dim)
    assert(key ~= nil and value ~= nil)
    local q = self.q_proj(query)
    local k = self.k_proj(key)
    local v = self.v_proj(value)
    -- q *= self.scaling
    q:mul_(self.scaling)

    if self.bias_k ~= nil then
        assert(self.bias_v ~= nil)
        -- k = torch.cat([k, self.bias_k.repeat(1, bsz, 1)])
        -- (repeat is a Lua keyword: x["repeat"](x, ...))
        k = tide.cat({ k, self.bias_k["repeat"](self.bias_k, 1, bsz, 1) })
        -- v = torch.cat([v, self.bias_v.repeat(1, bsz, 1)])
        v = tide.cat({ v, self.bias_v["repeat"](self.bias_v, 1, bsz, 1) })
        if attn_mask ~= nil then
            -- attn_mask = torch.cat([attn_mask, attn_mask.new_zeros(attn_mask.size(0), 1)], dim=1)
            attn_mask = tide.cat({ attn_mask, attn_mask:new_zeros(attn_mask:size(1), 1) },
                { dim = 2 })
        end
        if key_padding_mask ~= nil then
            -- key_padding_mask = torch.cat([key_padding_mask,
            --     key_padding_mask.new_zeros(key_padding_mask.size(0), 1)], dim=1)
            key_padding_mask = tide.cat({ key_padding_mask,
                key_padding_mask:new_zeros(key_padding_mask:size(1), 1) }, { dim = 2 })
        end
    end

    -- q = q.contiguous().view(tgt_len, bsz * self.num_heads, self.head_dim).transpose(0, 1)
    q = q:contiguous():view(tgt_len, bsz * self.num_heads, self.head_dim):transpose(1, 2)
    k = k:contiguous():view(-1, bsz * self.num_heads, self.head_dim):transpose(1, 2)
    v = v:contiguous():view(-1, bsz * self.num_heads, self.head_dim):transpose(1, 2)
    -- src_len = k.size(1)
    local src_len = k:size(2)

    if key_padding_mask ~= nil then
        -- assert key_padding_mask.size(0) == bsz
        assert(key_padding_mask:size(1) == bsz)
        assert(key_padding_mask:size(2) == src_len)
    end
    assert(not self.add_zero_attn) -- (add_zero_attn=False in every ESM model; not ported)

    if self.rot_emb then
        q, k = self.rot_emb(q, k)
    end

    -- attn_weights = torch.bmm(q, k.transpose(1, 2))
    local attn_weights = tide.bmm(q, k:transpose(2, 3))
    -- (apply_sparse_mask is the identity)

    if attn_mask ~= nil then
        attn_mask = attn_mask:unsqueeze(1)
        attn_weights = attn_weights + attn_mask
    end

    if key_padding_mask ~= nil then
        -- don't attend to padding symbols
        attn_weights = attn_weights:view(bsz, self.num_heads, tgt_len, src_len)
        -- attn_weights = attn_weights.masked_fill(
        --     key_padding_mask.unsqueeze(1).unsqueeze(2).to(torch.bool), float("-inf"))
        attn_weights = attn_weights:masked_fill(
            key_padding_mask:unsqueeze(2):unsqueeze(3):to("bool"), -math.huge)
        attn_weights = attn_weights:view(bsz * self.num_heads, tgt_len, src_len)
    end

    local attn_weights_float = utils_softmax(attn_weights, -1)
    attn_weights = attn_weights_float:type_as(attn_weights)
    -- attn_probs = F.dropout(attn_weights_float.type_as(attn_weights), p=self.dropout,
    --                        training=self.training)
    local attn_probs = F.dropout(attn_weights_float:type_as(attn_weights),
        { p = self.dropout, training = self.training })
    local attn = tide.bmm(attn_probs, v)
    -- attn = attn.transpose(0, 1).contiguous().view(tgt_len, bsz, embed_dim)
    attn = attn:transpose(1, 2):contiguous():view(tgt_len, bsz, embed_dim)
    attn = self.out_proj(attn)
    attn_weights = nil
    if need_weights then
        -- attn_weights = attn_weights_float.view(bsz, self.num_heads, tgt_len, src_len
        --     ).type_as(attn).transpose(1, 0)
        attn_weights = attn_weights_float:view(bsz, self.num_heads, tgt_len, src_len)
            :type_as(attn):transpose(2, 1)
        if not opts.need_head_weights then
            -- attn_weights = attn_weights.mean(dim=0)
            attn_weights = attn_weights:mean({ dim = 1 })
        end
    end
    return attn, attn_weights
end

---------------------------------------------------------------------------------------------
-- esm/modules.py
---------------------------------------------------------------------------------------------
-- def gelu(x):
local function gelu(x)
    -- return x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))
    return x * 0.5 * (1.0 + tide.erf(x / math.sqrt(2.0)))
end

-- def symmetrize(x):
local function symmetrize(x)
    -- return x + x.transpose(-1, -2)
    return x + x:transpose(-1, -2)
end

-- def apc(x):
local function apc(x)
    -- a1 = x.sum(-1, keepdims=True)
    local a1 = x:sum({ dim = -1, keepdim = true })
    local a2 = x:sum({ dim = -2, keepdim = true })
    -- a12 = x.sum((-1, -2), keepdims=True)
    local a12 = x:sum({ dim = { -1, -2 }, keepdim = true })
    local avg = a1 * a2
    avg:div_(a12) -- in-place to reduce memory
    local normalized = x - avg
    return normalized
end

-- class ESM1LayerNorm(nn.Module):
local ESM1LayerNorm = nn.Module:extend("ESM1LayerNorm")
-- def __init__(self, hidden_size, eps=1e-12, affine=True):
function ESM1LayerNorm:init(hidden_size, eps, affine)
    -- self.hidden_size = (hidden_size,) if isinstance(hidden_size, int) else tuple(hidden_size)
    self.hidden_size = type(hidden_size) == "number" and { hidden_size } or hidden_size
    self.eps = eps or 1e-12
    -- self.affine = bool(affine)
    self.affine = affine ~= false
    if self.affine then
        -- self.weight = nn.Parameter(torch.ones(hidden_size))
        self.weight = nn.Parameter(tide.ones(unpack(self.hidden_size)))
        self.bias = nn.Parameter(tide.zeros(unpack(self.hidden_size)))
    end
end

function ESM1LayerNorm:forward(x)
    -- dims = tuple(-(i + 1) for i in range(len(self.hidden_size)))
    local dims = {}
    for i = 1, #self.hidden_size do
        dims[i] = -i
    end
    -- means = x.mean(dims, keepdim=True)
    local means = x:mean({ dim = dims, keepdim = true })
    local x_zeromean = x - means
    local variances = x_zeromean:pow(2):mean({ dim = dims, keepdim = true })
    -- x = x_zeromean / torch.sqrt(variances + self.eps)
    x = x_zeromean / tide.sqrt(variances + self.eps)
    if self.affine then
        x = (self.weight * x) + self.bias
    end
    return x
end

-- from torch.nn import LayerNorm as ESM1bLayerNorm   (apex's FusedLayerNorm is not there)
local ESM1bLayerNorm = nn.LayerNorm

-- class TransformerLayer(nn.Module):
local TransformerLayer = nn.Module:extend("TransformerLayer")
-- def __init__(self, embed_dim, ffn_embed_dim, attention_heads, add_bias_kv=True,
--              use_esm1b_layer_norm=False, use_rotary_embeddings: bool = False):
function TransformerLayer:init(embed_dim, ffn_embed_dim, attention_heads, add_bias_kv,
                               use_esm1b_layer_norm, use_rotary_embeddings)
    if add_bias_kv == nil then add_bias_kv = true end
    self.embed_dim = embed_dim
    self.ffn_embed_dim = ffn_embed_dim
    self.attention_heads = attention_heads
    self.use_rotary_embeddings = use_rotary_embeddings or false
    self:_init_submodules(add_bias_kv, use_esm1b_layer_norm)
end

function TransformerLayer:_init_submodules(add_bias_kv, use_esm1b_layer_norm)
    -- BertLayerNorm = ESM1bLayerNorm if use_esm1b_layer_norm else ESM1LayerNorm
    local BertLayerNorm = use_esm1b_layer_norm and ESM1bLayerNorm or ESM1LayerNorm
    -- self.self_attn = MultiheadAttention(self.embed_dim, self.attention_heads,
    --     add_bias_kv=add_bias_kv, add_zero_attn=False,
    --     use_rotary_embeddings=self.use_rotary_embeddings)
    self.self_attn = MultiheadAttention(self.embed_dim, self.attention_heads, {
        add_bias_kv = add_bias_kv, add_zero_attn = false,
        use_rotary_embeddings = self.use_rotary_embeddings })
    self.self_attn_layer_norm = BertLayerNorm(self.embed_dim)
    self.fc1 = nn.Linear(self.embed_dim, self.ffn_embed_dim)
    self.fc2 = nn.Linear(self.ffn_embed_dim, self.embed_dim)
    self.final_layer_norm = BertLayerNorm(self.embed_dim)
end

-- def forward(self, x, self_attn_mask=None, self_attn_padding_mask=None,
--             need_head_weights=False):
function TransformerLayer:forward(x, self_attn_mask, self_attn_padding_mask, need_head_weights)
    local residual = x
    x = self.self_attn_layer_norm(x)
    -- x, attn = self.self_attn(query=x, key=x, value=x,
    --     key_padding_mask=self_attn_padding_mask, need_weights=True,
    --     need_head_weights=need_head_weights, attn_mask=self_attn_mask)
    local attn
    x, attn = self.self_attn(x, x, x, { key_padding_mask = self_attn_padding_mask,
        need_weights = true, need_head_weights = need_head_weights, attn_mask = self_attn_mask })
    x = residual + x

    residual = x
    x = self.final_layer_norm(x)
    x = gelu(self.fc1(x))
    x = self.fc2(x)
    x = residual + x
    return x, attn
end

-- class LearnedPositionalEmbedding(nn.Embedding):
local LearnedPositionalEmbedding = nn.Embedding:extend("LearnedPositionalEmbedding")
-- def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int):
function LearnedPositionalEmbedding:init(num_embeddings, embedding_dim, padding_idx)
    local num_embeddings_
    if padding_idx ~= nil then
        -- num_embeddings_ = num_embeddings + padding_idx + 1   (padding_idx is 1-based here)
        num_embeddings_ = num_embeddings + padding_idx
    else
        num_embeddings_ = num_embeddings
    end
    -- super().__init__(num_embeddings_, embedding_dim, padding_idx)
    nn.Embedding.init(self, num_embeddings_, embedding_dim, padding_idx)
    self.max_positions = num_embeddings
end

function LearnedPositionalEmbedding:forward(input)
    -- if input.size(1) > self.max_positions:
    if input:size(2) > self.max_positions then
        error(string.format("Sequence length %d above maximum  sequence length of %d",
            input:size(2), self.max_positions))
    end
    -- mask = input.ne(self.padding_idx).int()
    local mask = input:ne(self.padding_idx):int()
    -- positions = (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + self.padding_idx
    local positions = (tide.cumsum(mask, 2):type_as(mask) * mask):long() + self.padding_idx
    -- return F.embedding(positions, self.weight, self.padding_idx, self.max_norm,
    --     self.norm_type, self.scale_grad_by_freq, self.sparse)
    return F.embedding(positions, self.weight, self.padding_idx, self.max_norm,
        self.norm_type, self.scale_grad_by_freq, self.sparse)
end

-- class RobertaLMHead(nn.Module):
local RobertaLMHead = nn.Module:extend("RobertaLMHead")
function RobertaLMHead:init(embed_dim, output_dim, weight)
    self.dense = nn.Linear(embed_dim, embed_dim)
    self.layer_norm = ESM1bLayerNorm(embed_dim)
    self.weight = weight
    self.bias = nn.Parameter(tide.zeros(output_dim))
end

function RobertaLMHead:forward(features)
    local x = self.dense(features)
    x = gelu(x)
    x = self.layer_norm(x)
    -- project back to size of vocabulary with bias
    x = F.linear(x, self.weight) + self.bias
    return x
end

-- class ContactPredictionHead(nn.Module):
local ContactPredictionHead = nn.Module:extend("ContactPredictionHead")
-- def __init__(self, in_features, prepend_bos, append_eos, bias=True, eos_idx=None):
function ContactPredictionHead:init(in_features, prepend_bos, append_eos, bias, eos_idx)
    if bias == nil then bias = true end
    self.in_features = in_features
    self.prepend_bos = prepend_bos
    self.append_eos = append_eos
    if append_eos and eos_idx == nil then
        error("Using an alphabet with eos token, but no eos token was passed in.")
    end
    self.eos_idx = eos_idx
    -- self.regression = nn.Linear(in_features, 1, bias)
    self.regression = nn.Linear(in_features, 1, { bias = bias })
    self.activation = nn.Sigmoid()
end

function ContactPredictionHead:forward(tokens, attentions)
    -- remove eos token attentions
    if self.append_eos then
        -- eos_mask = tokens.ne(self.eos_idx).to(attentions)
        local eos_mask = tokens:ne(self.eos_idx):type_as(attentions)
        eos_mask = eos_mask:unsqueeze(2) * eos_mask:unsqueeze(3)
        -- attentions = attentions * eos_mask[:, None, None, :, :]
        attentions = attentions * eos_mask[{ {}, tide.newaxis, tide.newaxis, {}, {} }]
        -- attentions = attentions[..., :-1, :-1]
        attentions = attentions[{ "...", { 1, -2 }, { 1, -2 } }]
    end
    -- remove cls token attentions
    if self.prepend_bos then
        -- attentions = attentions[..., 1:, 1:]
        attentions = attentions[{ "...", { 2, -1 }, { 2, -1 } }]
    end
    -- batch_size, layers, heads, seqlen, _ = attentions.size()
    local batch_size, layers, heads, seqlen = unpack(attentions:size())
    attentions = attentions:view(batch_size, layers * heads, seqlen, seqlen)
    -- features: B x C x T x T
    attentions = attentions:to(self.regression.weight.device)
    attentions = apc(symmetrize(attentions))
    -- attentions = attentions.permute(0, 2, 3, 1)
    attentions = attentions:permute(1, 3, 4, 2)
    -- return self.activation(self.regression(attentions).squeeze(3))
    return self.activation(self.regression(attentions):squeeze(4))
end

---------------------------------------------------------------------------------------------
-- esm/axial_attention.py (the max_tokens_per_msa chunked _batched_forward is not ported)
---------------------------------------------------------------------------------------------
-- class RowSelfAttention(nn.Module):
local RowSelfAttention = nn.Module:extend("RowSelfAttention")
-- def __init__(self, embed_dim, num_heads, dropout=0.0, max_tokens_per_msa: int = 2 ** 16):
function RowSelfAttention:init(embed_dim, num_heads, dropout, max_tokens_per_msa)
    self.num_heads = num_heads
    self.dropout = dropout or 0.0
    -- self.head_dim = embed_dim // num_heads
    self.head_dim = math.floor(embed_dim / num_heads)
    self.scaling = self.head_dim ^ -0.5
    self.max_tokens_per_msa = max_tokens_per_msa or 2 ^ 16
    self.attn_shape = "hnij"
    self.k_proj = nn.Linear(embed_dim, embed_dim)
    self.v_proj = nn.Linear(embed_dim, embed_dim)
    self.q_proj = nn.Linear(embed_dim, embed_dim)
    self.out_proj = nn.Linear(embed_dim, embed_dim)
    self.dropout_module = nn.Dropout(self.dropout)
end

function RowSelfAttention:align_scaling(q)
    -- num_rows = q.size(0)
    local num_rows = q:size(1)
    return self.scaling / math.sqrt(num_rows)
end

function RowSelfAttention:compute_attention_weights(x, scaling, self_attn_mask,
                                                    self_attn_padding_mask)
    local num_rows, num_cols, batch_size = unpack(x:size())
    local q = self.q_proj(x):view(num_rows, num_cols, batch_size, self.num_heads, self.head_dim)
    local k = self.k_proj(x):view(num_rows, num_cols, batch_size, self.num_heads, self.head_dim)
    -- q *= scaling
    q:mul_(scaling)
    if self_attn_padding_mask ~= nil then
        -- q *= 1 - self_attn_padding_mask.permute(1, 2, 0).unsqueeze(3).unsqueeze(4).to(q)
        q:mul_(1 - self_attn_padding_mask:permute(2, 3, 1):unsqueeze(4):unsqueeze(5):type_as(q))
    end
    -- attn_weights = torch.einsum(f"rinhd,rjnhd->{self.attn_shape}", q, k)
    local attn_weights = tide.einsum("rinhd,rjnhd->" .. self.attn_shape, q, k)
    if self_attn_mask ~= nil then
        error("NotImplementedError")
    end
    if self_attn_padding_mask ~= nil then
        -- attn_weights = attn_weights.masked_fill(
        --     self_attn_padding_mask[:, 0].unsqueeze(0).unsqueeze(2), -10000)
        attn_weights = attn_weights:masked_fill(
            self_attn_padding_mask[{ {}, 1 }]:unsqueeze(1):unsqueeze(3), -10000)
    end
    return attn_weights
end

function RowSelfAttention:compute_attention_update(x, attn_probs)
    local num_rows, num_cols, batch_size, embed_dim = unpack(x:size())
    local v = self.v_proj(x):view(num_rows, num_cols, batch_size, self.num_heads, self.head_dim)
    -- context = torch.einsum(f"{self.attn_shape},rjnhd->rinhd", attn_probs, v)
    local context = tide.einsum(self.attn_shape .. ",rjnhd->rinhd", attn_probs, v)
    context = context:contiguous():view(num_rows, num_cols, batch_size, embed_dim)
    local output = self.out_proj(context)
    return output
end

function RowSelfAttention:forward(x, self_attn_mask, self_attn_padding_mask)
    local num_rows, num_cols = unpack(x:size())
    -- if (num_rows * num_cols > self.max_tokens_per_msa) and not torch.is_grad_enabled():
    assert(num_rows * num_cols <= self.max_tokens_per_msa or tide.is_grad_enabled())
    local scaling = self:align_scaling(x)
    local attn_weights = self:compute_attention_weights(x, scaling, self_attn_mask,
        self_attn_padding_mask)
    -- attn_probs = attn_weights.softmax(-1)
    local attn_probs = attn_weights:softmax(-1)
    attn_probs = self.dropout_module(attn_probs)
    local output = self:compute_attention_update(x, attn_probs)
    return output, attn_probs
end

-- class ColumnSelfAttention(nn.Module):
local ColumnSelfAttention = nn.Module:extend("ColumnSelfAttention")
function ColumnSelfAttention:init(embed_dim, num_heads, dropout, max_tokens_per_msa)
    self.num_heads = num_heads
    self.dropout = dropout or 0.0
    self.head_dim = math.floor(embed_dim / num_heads)
    self.scaling = self.head_dim ^ -0.5
    self.max_tokens_per_msa = max_tokens_per_msa or 2 ^ 16
    self.k_proj = nn.Linear(embed_dim, embed_dim)
    self.v_proj = nn.Linear(embed_dim, embed_dim)
    self.q_proj = nn.Linear(embed_dim, embed_dim)
    self.out_proj = nn.Linear(embed_dim, embed_dim)
    self.dropout_module = nn.Dropout(self.dropout)
end

function ColumnSelfAttention:compute_attention_update(x, self_attn_mask, self_attn_padding_mask)
    local num_rows, num_cols, batch_size, embed_dim = unpack(x:size())
    local output, attn_probs
    if num_rows == 1 then
        -- attn_probs = torch.ones(self.num_heads, num_cols, batch_size, num_rows, num_rows,
        --     device=x.device, dtype=x.dtype)
        attn_probs = tide.ones(self.num_heads, num_cols, batch_size, num_rows, num_rows,
            { device = x.device, dtype = x.dtype })
        output = self.out_proj(self.v_proj(x))
    else
        local q = self.q_proj(x):view(num_rows, num_cols, batch_size, self.num_heads,
            self.head_dim)
        local k = self.k_proj(x):view(num_rows, num_cols, batch_size, self.num_heads,
            self.head_dim)
        local v = self.v_proj(x):view(num_rows, num_cols, batch_size, self.num_heads,
            self.head_dim)
        q:mul_(self.scaling)
        local attn_weights = tide.einsum("icnhd,jcnhd->hcnij", q, k)
        if self_attn_mask ~= nil then
            error("NotImplementedError")
        end
        if self_attn_padding_mask ~= nil then
            -- attn_weights = attn_weights.masked_fill(
            --     self_attn_padding_mask.permute(2, 0, 1).unsqueeze(0).unsqueeze(3), -10000)
            attn_weights = attn_weights:masked_fill(
                self_attn_padding_mask:permute(3, 1, 2):unsqueeze(1):unsqueeze(4), -10000)
        end
        attn_probs = attn_weights:softmax(-1)
        attn_probs = self.dropout_module(attn_probs)
        local context = tide.einsum("hcnij,jcnhd->icnhd", attn_probs, v)
        context = context:contiguous():view(num_rows, num_cols, batch_size, embed_dim)
        output = self.out_proj(context)
    end
    return output, attn_probs
end

function ColumnSelfAttention:forward(x, self_attn_mask, self_attn_padding_mask)
    local num_rows, num_cols = unpack(x:size())
    assert(num_rows * num_cols <= self.max_tokens_per_msa or tide.is_grad_enabled())
    return self:compute_attention_update(x, self_attn_mask, self_attn_padding_mask)
end

---------------------------------------------------------------------------------------------
-- PyTorch 1.13's values (ESM's modules pasted into a script, the same weights and inputs)
---------------------------------------------------------------------------------------------
local WANT = {
    rot_q = {
        -1.0897862, -0.21434662, -0.86502445, -0.98700815, 0.20091176, -1.1407257, -0.77255923,
        -0.49828094, 0.026967928, -0.47228289, 0.31406835, 0.62623769, 0.85945702, 0.83905882,
        1.0205811, 0.95510238,
    },
    rot_k = {
        0.58804333, 0.55142438, 1.006937, 0.93758756, 0.50263053, 0.62216234, -0.23217663,
        -0.70927423, -0.82705188, -1.1378145, -0.81020528, -0.34528613, -0.51612866, -0.16205195,
        0.86018091, 0.99407524,
    },
    y = {
        -0.92945755, -0.1532661, 0.70012665, 1.4019403, 1.772889, 1.7503039, 1.4031265,
        0.88943756, 0.37897232, -0.02056706, -0.29781318, -0.51801503, -0.76267028, -1.0626321,
        -1.3619257, -1.5332711, -1.7726467, -1.3105211, -0.61155242, 0.12034367, 0.70224714,
        1.0396361, 1.1473511, 1.1171702, 1.0516868, 1.0005653, 0.93299639, 0.76060224,
        0.39828998, -0.16982681, -0.85578656, -1.4854594,
    },
    attn = {
        0.13509719, 0.13541548, 0.13972099, 0.14441015, 0.14486471, 0.14055912, 0, 0.15993237,
        0.14075536, 0.13647646, 0.1362585, 0.14011611, 0.14451671, 0.14520918, 0, 0.15666771,
        0.1355556, 0.13574705, 0.13975348, 0.14423507, 0.14477648, 0.14077881, 0, 0.15915348,
        0.14103432, 0.13692898, 0.13658439, 0.14013861, 0.14432019, 0.14509828, 0, 0.15589525,
    },
    logits = {
        0.42440677, 0.51758701, 0.54226702, 0.49527511, 0.38291615, 0.22012365, 0.02847686,
        -0.16666397, -0.33951044, -0.46725965, -0.53309882, -0.52842224, 0.29562962, 0.43636233,
        0.51919132, 0.53335881, 0.47719106, 0.3582904, 0.19251041, 0.0018365309, -0.1885256,
        -0.35348791, -0.47138286, -0.52681351,
    },
    contact = {
        0.53800452, 0.53803957, 0.53808117, 0.53809154, 0.53805417, 0.53803957, 0.5380373,
        0.53805715, 0.53808278, 0.53805417, 0.53808117, 0.53805715, 0.53803784, 0.53804064,
        0.53805417, 0.53809154, 0.53808278, 0.53804064, 0.53800178, 0.53805417, 0.53805417,
        0.53805417, 0.53805417, 0.53805417, 0.53805417,
    },
    gq = {
        0.0014934504, 0.0014929185, 0.00073806371, -0.00027334274, -0.00097571034, -0.001036419,
        -0.00052508787, 0.00013654539, 0.00041611996, -2.5696912e-05, -0.0011315682,
        -0.0024539626, -0.0033715342, -0.0034045854, -0.0024659666, -0.00091609382, 0.0042254953,
        0.0023121182, 0.0008448906, 0.00066807395, 0.0018733282, 0.0037519024, 0.0051759193,
        0.0052080192, 0.0036176997, 0.0010308146, -0.0013699178, -0.0024404819, -0.0016588414,
        0.00060714612, 0.0032865803, 0.0051502031,
    },
    gbk = {
        0.0072238613, 0.0024508168, 0.0025086449, 0.0023922059, 0.0067226388, 0.0028266988,
        0.00063487137, -0.00036550386, -0.0059875478, -0.001952799, -0.0025201717, -0.0026713754,
        -0.0079057869, -0.0033256698, -0.0013051603, -0.00029027092,
    },
    row = {
        -1.4762032, -1.6863163, -1.6766136, -1.4480031, -1.0299739, -0.47679389, 0.13952555,
        0.73861694, 1.242224, 1.584427, 1.7202789, 1.6317029, 1.3298992, 0.85393906, 0.2656984,
        -0.35817972, 0.17835549, 0.38560691, 0.54236877, 0.62855202, 0.6332466, 0.55610639,
        0.4073562, 0.20643544, -0.02054292, -0.24418157, -0.43561324, -0.57021499, -0.63078088,
        -0.60971427, -0.50998008, -0.34468672, 0.074229948, 0.31167117, 0.50826848, 0.63873595,
        0.68638617, 0.64526898, 0.52090949, 0.32956555, 0.096100271, -0.14924255, -0.37476408,
        -0.5513941, -0.65644354, -0.67651278, -0.60919958, -0.46338323, 0.63715875, 0.5257265,
        0.34552476, 0.12042394, -0.11987436, -0.34375572, -0.52185053, -0.63089228, -0.6567533,
        -0.59627497, -0.45765495, -0.25933057, -0.027527317, 0.20720784, 0.41403443, 0.56587356,
    },
    rowp = {
        0.44205993, 0.048164152, 0.014546439, 0.42900604, 0.052422721, 0.013800684, 0,
        0.43973273, 0.048757974, 0.015901932, 0.42756939, 0.052946359, 0.015091708, 0,
    },
    col = {
        -0.89374757, -0.94223469, -0.86682224, -0.67739904, -0.3988544, -0.067804441, 0.27222073,
        0.57650042, 0.80501306, 0.92769355, 0.92839372, 0.80700916, 0.57949364, 0.27575892,
        -0.064252526, -0.39582607, -0.59274483, -0.50629669, -0.35282111, -0.15239191,
        0.06866651, 0.28123757, 0.4572477, 0.57337421, 0.61414063, 0.57397664, 0.45797819,
        0.28126574, 0.067010105, -0.1566056, -0.36009157, -0.51654607, 0.064459577, 0.25551233,
        0.41420752, 0.51978928, 0.55830771, 0.52445996, 0.42232028, 0.26485476, 0.072277218,
        -0.1305387, -0.31727797, -0.46359098, -0.5502739, -0.56578559, -0.50778556, -0.38348755,
        -0.59274483, -0.50629669, -0.35282111, -0.15239191, 0.06866651, 0.28123757, 0.4572477,
        0.57337421, 0.61414063, 0.57397664, 0.45797819, 0.28126574, 0.067010105, -0.1566056,
        -0.36009157, -0.51654607,
    },
    colp = {
        0.085642666, 0.15048967, 0.65245908, 0.11140861, 0, 0.080690801, 0.13855754, 0.67360723,
        0.10714443, 0,
    },
}

-- class Net(nn.Module): the test's container, its parameters in PyTorch's order
local Net = nn.Module:extend("Net")
function Net:init()
    -- self.embed_tokens = nn.Embedding(12, 16, padding_idx=1)
    self.embed_tokens = nn.Embedding(12, 16, 2)
    -- self.embed_positions = LearnedPositionalEmbedding(7, 16, 1)
    self.embed_positions = LearnedPositionalEmbedding(7, 16, 2)
    -- TransformerLayer(16, 32, 2, add_bias_kv=True, use_esm1b_layer_norm=False,
    --                  use_rotary_embeddings=True)
    self.layer = TransformerLayer(16, 32, 2, true, false, true)
    self.lm_head = RobertaLMHead(16, 12, self.embed_tokens.weight)
    -- self.contact_head = ContactPredictionHead(2, True, True, eos_idx=2)
    self.contact_head = ContactPredictionHead(2, true, true, nil, 3)
    self.row = RowSelfAttention(16, 2)
    self.col = ColumnSelfAttention(16, 2)
end

-- for i, (n, p) in enumerate(net.named_parameters()):
--     p.copy_((torch.sin(torch.arange(p.numel()) * 0.37 + i) * 0.2).reshape(p.shape))
local function det_init(model)
    tide.no_grad(function()
        for i, np_ in ipairs(model:named_parameters()) do
            local p = np_[2]
            p:copy_((tide.sin(tide.arange(0, p:numel()) * 0.37 + (i - 1)) * 0.2):reshape(p.shape))
        end
    end)
end

describe("ported esm (modules, multihead_attention, rotary_embedding, axial_attention)", function()
    it("rotary embedding: rotated q and k, cached cos/sin", function()
        local rot = RotaryEmbedding(8)
        -- q = torch.sin(torch.arange(2*7*8) * 0.3).reshape(2, 7, 8)
        local q = tide.sin(tide.arange(0, 2 * 7 * 8) * 0.3):reshape(2, 7, 8)
        local k = tide.cos(tide.arange(0, 2 * 8 * 8) * 0.5):reshape(2, 8, 8)
        local qr, kr = rot(q, k)
        assert.same({ 1, 8, 8 }, rot._cos_cached:size())
        assert.equal(8, rot._seq_len_cached)
        -- qr[1, 5:], kr[0, 6:]
        assert_close_list(WANT.rot_q, flat(qr[{ 2, { 6, -1 } }]), 1e-5, "rot_q")
        assert_close_list(WANT.rot_k, flat(kr[{ 1, { 7, -1 } }]), 1e-5, "rot_k")
    end)

    local net = Net()
    it("has PyTorch's 43 parameters (the tied LM weight once)", function()
        assert.equal(43, #net:named_parameters())
    end)
    det_init(net)
    -- tokens = torch.tensor([[0, 5, 6, 7, 8, 2, 1]])   (cls ... eos pad)
    local tokens = tide.tensor({ { 1, 6, 7, 8, 9, 3, 2 } }):long()
    -- pad = tokens.eq(1)
    local pad = tokens:eq(2)

    it("TransformerLayer with a padding mask, LM head, contact head, a gradient", function()
        -- x = math.sqrt(16) * net.embed_tokens(tokens)
        local x = math.sqrt(16) * net.embed_tokens(tokens)
        x = x + net.embed_positions(tokens)
        -- x = x * (1 - pad.unsqueeze(-1).type_as(x))
        x = x * (1 - pad:unsqueeze(-1):type_as(x))
        -- x = x.transpose(0, 1)
        x = x:transpose(1, 2)
        -- y, attn = net.layer(x, self_attn_padding_mask=pad, need_head_weights=True)
        local y, attn = net.layer(x, nil, pad, true)
        assert.same({ 7, 1, 16 }, y:size())
        assert.same({ 2, 1, 7, 8 }, attn:size())
        assert_close_list(WANT.y, flat(y[{ { 1, 2 } }]), 1e-4, "y")
        -- attn[:, :, :2]
        assert_close_list(WANT.attn, flat(attn[{ {}, {}, { 1, 2 } }]), 1e-4, "attn")
        -- logits = net.lm_head(y.transpose(0, 1))
        local logits = net.lm_head(y:transpose(1, 2))
        assert.same({ 1, 7, 12 }, logits:size())
        assert_close_list(WANT.logits, flat(logits[{ 1, { 1, 2 } }]), 1e-4, "logits")
        -- attentions = attn.transpose(1, 0).unsqueeze(1)[..., :-1]
        local attentions = attn:transpose(2, 1):unsqueeze(2)[{ "...", { 1, -2 } }]
        local c = net.contact_head(tokens, attentions)
        assert.same({ 1, 5, 5 }, c:size())
        assert_close_list(WANT.contact, flat(c), 1e-5, "contact")
        -- loss = (y * torch.cos(torch.arange(y.numel()) * 0.1).reshape(y.shape)).sum()
        local loss = (y * tide.cos(tide.arange(0, y:numel()) * 0.1):reshape(y.shape)):sum()
        loss:backward()
        -- net.layer.self_attn.q_proj.weight.grad[:2]
        assert_close_list(WANT.gq, flat(net.layer.self_attn.q_proj.weight.grad[{ { 1, 2 } }]),
            1e-3, "q_proj.weight.grad")
        assert_close_list(WANT.gbk, flat(net.layer.self_attn.bias_k.grad), 1e-3, "bias_k.grad")
    end)

    it("Row and Column self-attention over a padded MSA", function()
        -- X = torch.sin(torch.arange(5*7*1*16) * 0.13).reshape(5, 7, 1, 16)
        local X = tide.sin(tide.arange(0, 5 * 7 * 1 * 16) * 0.13):reshape(5, 7, 1, 16)
        -- mp = torch.zeros(1, 5, 7, dtype=torch.bool); mp[:, :, 6] = True; mp[:, 4, 5] = True
        local mp = tide.zeros(1, 5, 7, { dtype = "bool" })
        mp[{ {}, {}, 7 }] = true
        mp[{ {}, 5, 6 }] = true
        local ro, rp = net.row(X, nil, mp)
        assert.same({ 5, 7, 1, 16 }, ro:size())
        assert.same({ 2, 1, 7, 7 }, rp:size())
        assert_close_list(WANT.row, flat(ro[{ { 1, 2 }, { 1, 2 } }]), 1e-4, "row")
        assert_close_list(WANT.rowp, flat(rp[{ {}, {}, 3 }]), 1e-4, "row probs")
        local co, cp = net.col(X, nil, mp)
        assert.same({ 2, 7, 1, 5, 5 }, cp:size())
        assert_close_list(WANT.col, flat(co[{ { 4, -1 }, { 6, -1 } }]), 1e-4, "col")
        assert_close_list(WANT.colp, flat(cp[{ {}, 6, {}, 5 }]), 1e-4, "col probs")
    end)
end)
