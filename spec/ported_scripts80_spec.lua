-- ported_scripts80_spec.lua — Hugging Face transformers v4.31.0's
-- src/transformers/models/llama/modeling_llama.py (real-valued rotary embeddings, tuple
-- past_key_values, no Cache classes): LlamaRMSNorm, LlamaRotaryEmbedding and its
-- LinearScaling / DynamicNTKScaling variants, rotate_half, apply_rotary_pos_emb, LlamaMLP
-- (pretraining_tp = 1), repeat_kv, LlamaAttention, LlamaDecoderLayer, _make_causal_mask,
-- _expand_mask, LlamaModel, LlamaForCausalLM, _init_weights; then greedy generation with
-- past_key_values and 2 AdamW steps, at tiny sizes. The Python line stands above each Lua line
-- that differs from it. Token ids, padding_idx and position_ids are 1-based (position_ids index
-- the cos/sin caches); Python's ValueError is a Lua error with the same text.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- Python's tuple repr of a size, for the ValueError texts
local function size_str(t)
    return "(" .. table.concat(t, ", ") .. ")"
end

-- attn_weights.size() != (bsz, ...)
local function size_ne(t, want)
    local got = t.shape
    if #got ~= #want then return true end
    for i = 1, #want do
        if got[i] ~= want[i] then return true end
    end
    return false
end

-- class LlamaConfig(PretrainedConfig): (the fields modeling_llama.py reads, v4.31 defaults)
local function LlamaConfig(kw)
    local c = { vocab_size = 32000, hidden_size = 4096, intermediate_size = 11008,
        num_hidden_layers = 32, num_attention_heads = 32, num_key_value_heads = nil,
        hidden_act = "silu", max_position_embeddings = 2048, initializer_range = 0.02,
        rms_norm_eps = 1e-6, use_cache = true, pad_token_id = nil, pretraining_tp = 1,
        rope_scaling = nil }
    for k, v in pairs(kw) do c[k] = v end
    -- if num_key_value_heads is None: num_key_value_heads = num_attention_heads
    if c.num_key_value_heads == nil then c.num_key_value_heads = c.num_attention_heads end
    return c
end

-- def _make_causal_mask(input_ids_shape, dtype, device, past_key_values_length=0):
local function _make_causal_mask(input_ids_shape, dtype, device, past_key_values_length)
    past_key_values_length = past_key_values_length or 0
    local bsz, tgt_len = input_ids_shape[1], input_ids_shape[2]
    -- mask = torch.full((tgt_len, tgt_len), torch.finfo(dtype).min, device=device)
    local mask = tide.full({ tgt_len, tgt_len }, tide.finfo(dtype).min, { device = device })
    -- mask_cond = torch.arange(mask.size(-1), device=device)
    local mask_cond = tide.arange(mask:size(-1), { device = device })
    -- mask.masked_fill_(mask_cond < (mask_cond + 1).view(mask.size(-1), 1), 0)
    mask:masked_fill_(mask_cond:lt((mask_cond + 1):view(mask:size(-1), 1)), 0)
    mask = mask:to(dtype)
    if past_key_values_length > 0 then
        -- mask = torch.cat([torch.zeros(tgt_len, past_key_values_length, dtype=dtype,
        --     device=device), mask], dim=-1)
        mask = tide.cat({ tide.zeros(tgt_len, past_key_values_length,
            { dtype = dtype, device = device }), mask }, { dim = -1 })
    end
    -- return mask[None, None, :, :].expand(bsz, 1, tgt_len, tgt_len + past_key_values_length)
    return mask[{ tide.newaxis, tide.newaxis, {}, {} }]
        :expand(bsz, 1, tgt_len, tgt_len + past_key_values_length)
end

-- def _expand_mask(mask: torch.Tensor, dtype: torch.dtype, tgt_len: Optional[int] = None):
local function _expand_mask(mask, dtype, tgt_len)
    -- bsz, src_len = mask.size()
    local bsz, src_len = unpack(mask:size())
    -- tgt_len = tgt_len if tgt_len is not None else src_len
    tgt_len = tgt_len or src_len
    -- expanded_mask = mask[:, None, None, :].expand(bsz, 1, tgt_len, src_len).to(dtype)
    local expanded_mask = mask[{ {}, tide.newaxis, tide.newaxis, {} }]
        :expand(bsz, 1, tgt_len, src_len):to(dtype)
    local inverted_mask = 1.0 - expanded_mask
    -- return inverted_mask.masked_fill(inverted_mask.to(torch.bool), torch.finfo(dtype).min)
    return inverted_mask:masked_fill(inverted_mask:to("bool"), tide.finfo(dtype).min)
end

-- class LlamaRMSNorm(nn.Module):
local LlamaRMSNorm = nn.Module:extend("LlamaRMSNorm")
function LlamaRMSNorm:init(hidden_size, eps)
    self.weight = nn.Parameter(tide.ones(hidden_size))
    self.variance_epsilon = eps or 1e-6
end

function LlamaRMSNorm:forward(hidden_states)
    local input_dtype = hidden_states.dtype
    -- hidden_states = hidden_states.to(torch.float32)
    hidden_states = hidden_states:to("float32")
    -- variance = hidden_states.pow(2).mean(-1, keepdim=True)
    local variance = hidden_states:pow(2):mean(-1, { keepdim = true })
    -- hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
    hidden_states = hidden_states * tide.rsqrt(variance + self.variance_epsilon)
    return self.weight * hidden_states:to(input_dtype)
end

-- class LlamaRotaryEmbedding(torch.nn.Module):
local LlamaRotaryEmbedding = nn.Module:extend("LlamaRotaryEmbedding")
-- def __init__(self, dim, max_position_embeddings=2048, base=10000, device=None):
function LlamaRotaryEmbedding:init(dim, max_position_embeddings, base, device)
    self.dim = dim
    self.max_position_embeddings = max_position_embeddings or 2048
    self.base = base or 10000
    -- inv_freq = 1.0 / (self.base ** (torch.arange(0, self.dim, 2).float().to(device) / self.dim))
    local inv_freq = 1.0 / (self.base ^ (tide.arange(0, self.dim, 2):float():to(device) / self.dim))
    self:register_buffer("inv_freq", inv_freq)
    -- Build here to make `torch.jit.trace` work.
    -- self._set_cos_sin_cache(seq_len=max_position_embeddings, device=self.inv_freq.device,
    --     dtype=torch.get_default_dtype())
    self:_set_cos_sin_cache(self.max_position_embeddings, self.inv_freq.device,
        tide.get_default_dtype())
end

function LlamaRotaryEmbedding:_set_cos_sin_cache(seq_len, device, dtype)
    self.max_seq_len_cached = seq_len
    -- t = torch.arange(self.max_seq_len_cached, device=device, dtype=self.inv_freq.dtype)
    local t = tide.arange(self.max_seq_len_cached, { device = device, dtype = self.inv_freq.dtype })
    -- freqs = torch.einsum("i,j->ij", t, self.inv_freq)
    local freqs = tide.einsum("i,j->ij", t, self.inv_freq)
    -- Different from paper, but it uses a different permutation in order to obtain the same
    -- calculation
    -- emb = torch.cat((freqs, freqs), dim=-1)
    local emb = tide.cat({ freqs, freqs }, { dim = -1 })
    -- self.register_buffer("cos_cached", emb.cos()[None, None, :, :].to(dtype), persistent=False)
    self:register_buffer("cos_cached", emb:cos()[{ tide.newaxis, tide.newaxis, {}, {} }]:to(dtype),
        { persistent = false })
    self:register_buffer("sin_cached", emb:sin()[{ tide.newaxis, tide.newaxis, {}, {} }]:to(dtype),
        { persistent = false })
end

function LlamaRotaryEmbedding:forward(x, seq_len)
    -- x: [bs, num_attention_heads, seq_len, head_size]
    if seq_len > self.max_seq_len_cached then
        self:_set_cos_sin_cache(seq_len, x.device, x.dtype)
    end
    -- return (self.cos_cached[:, :, :seq_len, ...].to(dtype=x.dtype),
    --     self.sin_cached[:, :, :seq_len, ...].to(dtype=x.dtype))
    return self.cos_cached[{ {}, {}, { 1, seq_len }, "..." }]:to(x.dtype),
        self.sin_cached[{ {}, {}, { 1, seq_len }, "..." }]:to(x.dtype)
end

-- class LlamaLinearScalingRotaryEmbedding(LlamaRotaryEmbedding):
local LlamaLinearScalingRotaryEmbedding = LlamaRotaryEmbedding:extend(
    "LlamaLinearScalingRotaryEmbedding")
-- def __init__(self, dim, max_position_embeddings=2048, base=10000, device=None,
--     scaling_factor=1.0):
function LlamaLinearScalingRotaryEmbedding:init(dim, max_position_embeddings, base, device,
                                                scaling_factor)
    self.scaling_factor = scaling_factor or 1.0
    -- super().__init__(dim, max_position_embeddings, base, device)
    LlamaRotaryEmbedding.init(self, dim, max_position_embeddings, base, device)
end

function LlamaLinearScalingRotaryEmbedding:_set_cos_sin_cache(seq_len, device, dtype)
    self.max_seq_len_cached = seq_len
    local t = tide.arange(self.max_seq_len_cached, { device = device, dtype = self.inv_freq.dtype })
    t = t / self.scaling_factor
    local freqs = tide.einsum("i,j->ij", t, self.inv_freq)
    local emb = tide.cat({ freqs, freqs }, { dim = -1 })
    self:register_buffer("cos_cached", emb:cos()[{ tide.newaxis, tide.newaxis, {}, {} }]:to(dtype),
        { persistent = false })
    self:register_buffer("sin_cached", emb:sin()[{ tide.newaxis, tide.newaxis, {}, {} }]:to(dtype),
        { persistent = false })
end

-- class LlamaDynamicNTKScalingRotaryEmbedding(LlamaRotaryEmbedding):
local LlamaDynamicNTKScalingRotaryEmbedding = LlamaRotaryEmbedding:extend(
    "LlamaDynamicNTKScalingRotaryEmbedding")
function LlamaDynamicNTKScalingRotaryEmbedding:init(dim, max_position_embeddings, base, device,
                                                    scaling_factor)
    self.scaling_factor = scaling_factor or 1.0
    LlamaRotaryEmbedding.init(self, dim, max_position_embeddings, base, device)
end

function LlamaDynamicNTKScalingRotaryEmbedding:_set_cos_sin_cache(seq_len, device, dtype)
    self.max_seq_len_cached = seq_len
    if seq_len > self.max_position_embeddings then
        -- base = self.base * ((self.scaling_factor * seq_len / self.max_position_embeddings)
        --     - (self.scaling_factor - 1)) ** (self.dim / (self.dim - 2))
        local base = self.base * ((self.scaling_factor * seq_len / self.max_position_embeddings)
            - (self.scaling_factor - 1)) ^ (self.dim / (self.dim - 2))
        -- inv_freq = 1.0 / (base ** (torch.arange(0, self.dim, 2).float().to(device) / self.dim))
        local inv_freq = 1.0 / (base ^ (tide.arange(0, self.dim, 2):float():to(device) / self.dim))
        self:register_buffer("inv_freq", inv_freq)
    end
    local t = tide.arange(self.max_seq_len_cached, { device = device, dtype = self.inv_freq.dtype })
    local freqs = tide.einsum("i,j->ij", t, self.inv_freq)
    local emb = tide.cat({ freqs, freqs }, { dim = -1 })
    self:register_buffer("cos_cached", emb:cos()[{ tide.newaxis, tide.newaxis, {}, {} }]:to(dtype),
        { persistent = false })
    self:register_buffer("sin_cached", emb:sin()[{ tide.newaxis, tide.newaxis, {}, {} }]:to(dtype),
        { persistent = false })
end

-- def rotate_half(x):
local function rotate_half(x)
    -- x1 = x[..., : x.shape[-1] // 2]
    local half = math.floor(x:size(-1) / 2)
    local x1 = x[{ "...", { 1, half } }]
    -- x2 = x[..., x.shape[-1] // 2 :]
    local x2 = x[{ "...", { half + 1, -1 } }]
    -- return torch.cat((-x2, x1), dim=-1)
    return tide.cat({ -x2, x1 }, { dim = -1 })
end

-- def apply_rotary_pos_emb(q, k, cos, sin, position_ids):
local function apply_rotary_pos_emb(q, k, cos, sin, position_ids)
    -- The first two dimensions of cos and sin are always 1, so we can `squeeze` them.
    -- cos = cos.squeeze(1).squeeze(0)  # [seq_len, dim]
    cos = cos:squeeze(2):squeeze(1)
    sin = sin:squeeze(2):squeeze(1)
    -- cos = cos[position_ids].unsqueeze(1)  # [bs, 1, seq_len, dim]
    cos = cos[position_ids]:unsqueeze(2)
    sin = sin[position_ids]:unsqueeze(2)
    local q_embed = (q * cos) + (rotate_half(q) * sin)
    local k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed
end

-- class LlamaMLP(nn.Module):
local LlamaMLP = nn.Module:extend("LlamaMLP")
function LlamaMLP:init(config)
    self.config = config
    self.hidden_size = config.hidden_size
    self.intermediate_size = config.intermediate_size
    -- self.gate_proj = nn.Linear(self.hidden_size, self.intermediate_size, bias=False)
    self.gate_proj = nn.Linear(self.hidden_size, self.intermediate_size, { bias = false })
    self.up_proj = nn.Linear(self.hidden_size, self.intermediate_size, { bias = false })
    self.down_proj = nn.Linear(self.intermediate_size, self.hidden_size, { bias = false })
    -- self.act_fn = ACT2FN[config.hidden_act]
    assert(config.hidden_act == "silu")
    self.act_fn = nn.SiLU()
end

function LlamaMLP:forward(x)
    -- if self.config.pretraining_tp > 1: (the weight-slicing path is not ported)
    assert(self.config.pretraining_tp == 1)
    -- down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))
    return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))
end

-- def repeat_kv(hidden_states: torch.Tensor, n_rep: int) -> torch.Tensor:
local function repeat_kv(hidden_states, n_rep)
    -- batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    local batch, num_key_value_heads, slen, head_dim = unpack(hidden_states.shape)
    if n_rep == 1 then
        return hidden_states
    end
    -- hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep,
    --     slen, head_dim)
    hidden_states = hidden_states[{ {}, {}, tide.newaxis, {}, {} }]
        :expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states:reshape(batch, num_key_value_heads * n_rep, slen, head_dim)
end

-- class LlamaAttention(nn.Module):
local LlamaAttention = nn.Module:extend("LlamaAttention")
function LlamaAttention:init(config)
    self.config = config
    self.hidden_size = config.hidden_size
    self.num_heads = config.num_attention_heads
    -- self.head_dim = self.hidden_size // self.num_heads
    self.head_dim = math.floor(self.hidden_size / self.num_heads)
    self.num_key_value_heads = config.num_key_value_heads
    self.num_key_value_groups = math.floor(self.num_heads / self.num_key_value_heads)
    self.pretraining_tp = config.pretraining_tp
    self.max_position_embeddings = config.max_position_embeddings
    if (self.head_dim * self.num_heads) ~= self.hidden_size then
        -- raise ValueError(f"hidden_size must be divisible by num_heads (got `hidden_size`: ..."
        error(("hidden_size must be divisible by num_heads (got `hidden_size`: %d and"
            .. " `num_heads`: %d)."):format(self.hidden_size, self.num_heads))
    end
    -- self.q_proj = nn.Linear(self.hidden_size, self.num_heads * self.head_dim, bias=False)
    self.q_proj = nn.Linear(self.hidden_size, self.num_heads * self.head_dim, { bias = false })
    self.k_proj = nn.Linear(self.hidden_size, self.num_key_value_heads * self.head_dim,
        { bias = false })
    self.v_proj = nn.Linear(self.hidden_size, self.num_key_value_heads * self.head_dim,
        { bias = false })
    self.o_proj = nn.Linear(self.num_heads * self.head_dim, self.hidden_size, { bias = false })
    self:_init_rope()
end

function LlamaAttention:_init_rope()
    if self.config.rope_scaling == nil then
        -- self.rotary_emb = LlamaRotaryEmbedding(self.head_dim,
        --     max_position_embeddings=self.max_position_embeddings)
        self.rotary_emb = LlamaRotaryEmbedding(self.head_dim, self.max_position_embeddings)
    else
        -- scaling_type = self.config.rope_scaling["type"]
        local scaling_type = self.config.rope_scaling["type"]
        local scaling_factor = self.config.rope_scaling["factor"]
        if scaling_type == "linear" then
            -- LlamaLinearScalingRotaryEmbedding(self.head_dim,
            --     max_position_embeddings=self.max_position_embeddings, scaling_factor=...)
            self.rotary_emb = LlamaLinearScalingRotaryEmbedding(self.head_dim,
                self.max_position_embeddings, nil, nil, scaling_factor)
        elseif scaling_type == "dynamic" then
            self.rotary_emb = LlamaDynamicNTKScalingRotaryEmbedding(self.head_dim,
                self.max_position_embeddings, nil, nil, scaling_factor)
        else
            -- raise ValueError(f"Unknown RoPE scaling type {scaling_type}")
            error("Unknown RoPE scaling type " .. tostring(scaling_type))
        end
    end
end

-- def forward(self, hidden_states, attention_mask=None, position_ids=None, past_key_value=None,
--     output_attentions=False, use_cache=False):
function LlamaAttention:forward(hidden_states, attention_mask, position_ids, past_key_value,
                                output_attentions, use_cache)
    -- bsz, q_len, _ = hidden_states.size()
    local bsz, q_len = unpack(hidden_states:size())
    assert(self.pretraining_tp == 1) -- (the pretraining_tp > 1 slices are not ported)
    local query_states = self.q_proj(hidden_states)
    local key_states = self.k_proj(hidden_states)
    local value_states = self.v_proj(hidden_states)

    -- query_states = query_states.view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
    query_states = query_states:view(bsz, q_len, self.num_heads, self.head_dim):transpose(2, 3)
    key_states = key_states:view(bsz, q_len, self.num_key_value_heads, self.head_dim)
        :transpose(2, 3)
    value_states = value_states:view(bsz, q_len, self.num_key_value_heads, self.head_dim)
        :transpose(2, 3)

    -- kv_seq_len = key_states.shape[-2]
    local kv_seq_len = key_states:size(-2)
    if past_key_value ~= nil then
        -- kv_seq_len += past_key_value[0].shape[-2]
        kv_seq_len = kv_seq_len + past_key_value[1]:size(-2)
    end
    -- cos, sin = self.rotary_emb(value_states, seq_len=kv_seq_len)
    local cos, sin = self.rotary_emb(value_states, kv_seq_len)
    query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin,
        position_ids)

    if past_key_value ~= nil then
        -- reuse k, v, self_attention
        -- key_states = torch.cat([past_key_value[0], key_states], dim=2)
        key_states = tide.cat({ past_key_value[1], key_states }, { dim = 3 })
        value_states = tide.cat({ past_key_value[2], value_states }, { dim = 3 })
    end
    -- past_key_value = (key_states, value_states) if use_cache else None
    past_key_value = use_cache and { key_states, value_states } or nil

    -- repeat k/v heads if n_kv_heads < n_heads
    key_states = repeat_kv(key_states, self.num_key_value_groups)
    value_states = repeat_kv(value_states, self.num_key_value_groups)

    -- attn_weights = torch.matmul(query_states, key_states.transpose(2, 3))
    --     / math.sqrt(self.head_dim)
    local attn_weights = tide.matmul(query_states, key_states:transpose(3, 4))
        / math.sqrt(self.head_dim)

    -- if attn_weights.size() != (bsz, self.num_heads, q_len, kv_seq_len):
    if size_ne(attn_weights, { bsz, self.num_heads, q_len, kv_seq_len }) then
        -- raise ValueError(f"Attention weights should be of size {(bsz, self.num_heads, q_len,
        --     kv_seq_len)}, but is {attn_weights.size()}")
        error("Attention weights should be of size "
            .. size_str({ bsz, self.num_heads, q_len, kv_seq_len }) .. ", but is "
            .. size_str(attn_weights.shape))
    end

    if attention_mask ~= nil then
        if size_ne(attention_mask, { bsz, 1, q_len, kv_seq_len }) then
            -- raise ValueError(f"Attention mask should be of size {(bsz, 1, q_len, kv_seq_len)},
            --     but is {attention_mask.size()}")
            error("Attention mask should be of size " .. size_str({ bsz, 1, q_len, kv_seq_len })
                .. ", but is " .. size_str(attention_mask.shape))
        end
        attn_weights = attn_weights + attention_mask
    end

    -- upcast attention to fp32
    -- attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32)
    --     .to(query_states.dtype)
    attn_weights = F.softmax(attn_weights, { dim = -1, dtype = "float32" }):to(query_states.dtype)
    local attn_output = tide.matmul(attn_weights, value_states)

    if size_ne(attn_output, { bsz, self.num_heads, q_len, self.head_dim }) then
        error("`attn_output` should be of size "
            .. size_str({ bsz, self.num_heads, q_len, self.head_dim }) .. ", but is "
            .. size_str(attn_output.shape))
    end

    -- attn_output = attn_output.transpose(1, 2).contiguous()
    attn_output = attn_output:transpose(2, 3):contiguous()
    attn_output = attn_output:reshape(bsz, q_len, self.hidden_size)
    attn_output = self.o_proj(attn_output)

    if not output_attentions then
        attn_weights = nil
    end
    -- return attn_output, attn_weights, past_key_value
    return { attn_output, attn_weights, past_key_value }
end

-- class LlamaDecoderLayer(nn.Module):
local LlamaDecoderLayer = nn.Module:extend("LlamaDecoderLayer")
function LlamaDecoderLayer:init(config)
    self.hidden_size = config.hidden_size
    -- self.self_attn = LlamaAttention(config=config)
    self.self_attn = LlamaAttention(config)
    self.mlp = LlamaMLP(config)
    -- self.input_layernorm = LlamaRMSNorm(config.hidden_size, eps=config.rms_norm_eps)
    self.input_layernorm = LlamaRMSNorm(config.hidden_size, config.rms_norm_eps)
    self.post_attention_layernorm = LlamaRMSNorm(config.hidden_size, config.rms_norm_eps)
end

function LlamaDecoderLayer:forward(hidden_states, attention_mask, position_ids, past_key_value,
                                   output_attentions, use_cache)
    local residual = hidden_states
    hidden_states = self.input_layernorm(hidden_states)
    -- Self Attention
    -- hidden_states, self_attn_weights, present_key_value = self.self_attn(...)
    local out = self.self_attn(hidden_states, attention_mask, position_ids, past_key_value,
        output_attentions, use_cache)
    local self_attn_weights, present_key_value
    hidden_states, self_attn_weights, present_key_value = out[1], out[2], out[3]
    hidden_states = residual + hidden_states
    -- Fully Connected
    residual = hidden_states
    hidden_states = self.post_attention_layernorm(hidden_states)
    hidden_states = self.mlp(hidden_states)
    hidden_states = residual + hidden_states
    -- outputs = (hidden_states,)
    local outputs = { hidden_states }
    if output_attentions then
        -- outputs += (self_attn_weights,)
        outputs[#outputs + 1] = self_attn_weights
    end
    if use_cache then
        outputs[#outputs + 1] = present_key_value
    end
    return outputs
end

-- class LlamaPreTrainedModel(PreTrainedModel): _init_weights
-- def _init_weights(self, module):
local function _init_weights(config, module)
    local std = config.initializer_range
    -- if isinstance(module, nn.Linear):
    if tide.isinstance(module, nn.Linear) then
        -- module.weight.data.normal_(mean=0.0, std=std)
        module.weight.data:normal_(0.0, std)
        if module.bias ~= nil then
            module.bias.data:zero_()
        end
    elseif tide.isinstance(module, nn.Embedding) then
        module.weight.data:normal_(0.0, std)
        if module.padding_idx ~= nil then
            -- module.weight.data[module.padding_idx].zero_()
            module.weight.data[module.padding_idx]:zero_()
        end
    end
end

-- def post_init(self): self.apply(self._init_weights)  (PreTrainedModel's, for the one hook)
local function post_init(model, config)
    model:apply(function(m) _init_weights(config, m) end)
end

-- class LlamaModel(LlamaPreTrainedModel):
local LlamaModel = nn.Module:extend("LlamaModel")
function LlamaModel:init(config)
    self.config = config
    self.padding_idx = config.pad_token_id
    self.vocab_size = config.vocab_size
    -- self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size, self.padding_idx)
    self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size, self.padding_idx)
    -- self.layers = nn.ModuleList([LlamaDecoderLayer(config) for _ in
    --     range(config.num_hidden_layers)])
    local layers = {}
    for _ = 1, config.num_hidden_layers do
        layers[#layers + 1] = LlamaDecoderLayer(config)
    end
    self.layers = nn.ModuleList(layers)
    self.norm = LlamaRMSNorm(config.hidden_size, config.rms_norm_eps)
    self.gradient_checkpointing = false
    -- self.post_init()
    post_init(self, config)
end

-- def _prepare_decoder_attention_mask(self, attention_mask, input_shape, inputs_embeds,
--     past_key_values_length):
function LlamaModel:_prepare_decoder_attention_mask(attention_mask, input_shape, inputs_embeds,
                                                    past_key_values_length)
    -- create causal mask
    -- [bsz, seq_len] -> [bsz, 1, tgt_seq_len, src_seq_len]
    local combined_attention_mask = nil
    -- if input_shape[-1] > 1:
    if input_shape[#input_shape] > 1 then
        combined_attention_mask = _make_causal_mask(input_shape, inputs_embeds.dtype,
            inputs_embeds.device, past_key_values_length)
    end
    if attention_mask ~= nil then
        -- expanded_attn_mask = _expand_mask(attention_mask, inputs_embeds.dtype,
        --     tgt_len=input_shape[-1]).to(inputs_embeds.device)
        local expanded_attn_mask = _expand_mask(attention_mask, inputs_embeds.dtype,
            input_shape[#input_shape]):to(inputs_embeds.device)
        -- combined_attention_mask = (expanded_attn_mask if combined_attention_mask is None
        --     else expanded_attn_mask + combined_attention_mask)
        combined_attention_mask = combined_attention_mask == nil and expanded_attn_mask
            or expanded_attn_mask + combined_attention_mask
    end
    return combined_attention_mask
end

-- def forward(self, input_ids=None, attention_mask=None, position_ids=None,
--     past_key_values=None, inputs_embeds=None, use_cache=None, output_attentions=None,
--     output_hidden_states=None, return_dict=None):  (an options table; the outputs a table)
function LlamaModel:forward(o)
    local input_ids, attention_mask, position_ids = o.input_ids, o.attention_mask, o.position_ids
    local past_key_values, inputs_embeds = o.past_key_values, o.inputs_embeds
    local use_cache, output_attentions = o.use_cache, o.output_attentions
    local output_hidden_states = o.output_hidden_states
    -- use_cache = use_cache if use_cache is not None else self.config.use_cache
    if use_cache == nil then use_cache = self.config.use_cache end

    -- retrieve input_ids and inputs_embeds
    local batch_size, seq_length
    if input_ids ~= nil and inputs_embeds ~= nil then
        error("You cannot specify both decoder_input_ids and decoder_inputs_embeds at the same"
            .. " time")
    elseif input_ids ~= nil then
        -- batch_size, seq_length = input_ids.shape
        batch_size, seq_length = unpack(input_ids.shape)
    elseif inputs_embeds ~= nil then
        batch_size, seq_length = unpack(inputs_embeds.shape)
    else
        error("You have to specify either decoder_input_ids or decoder_inputs_embeds")
    end

    local seq_length_with_past = seq_length
    local past_key_values_length = 0

    if past_key_values ~= nil then
        -- past_key_values_length = past_key_values[0][0].shape[2]
        past_key_values_length = past_key_values[1][1]:size(3)
        seq_length_with_past = seq_length_with_past + past_key_values_length
    end

    if position_ids == nil then
        local device = input_ids ~= nil and input_ids.device or inputs_embeds.device
        -- position_ids = torch.arange(past_key_values_length, seq_length +
        --     past_key_values_length, dtype=torch.long, device=device)  (1-based: they index)
        position_ids = tide.arange(past_key_values_length + 1,
            seq_length + past_key_values_length + 1, { dtype = "int64", device = device })
        -- position_ids = position_ids.unsqueeze(0).view(-1, seq_length)
        position_ids = position_ids:unsqueeze(1):view(-1, seq_length)
    else
        -- position_ids = position_ids.view(-1, seq_length).long()
        position_ids = position_ids:view(-1, seq_length):long()
    end

    if inputs_embeds == nil then
        inputs_embeds = self.embed_tokens(input_ids)
    end
    -- embed positions
    if attention_mask == nil then
        -- attention_mask = torch.ones((batch_size, seq_length_with_past), dtype=torch.bool,
        --     device=inputs_embeds.device)
        attention_mask = tide.ones({ batch_size, seq_length_with_past },
            { dtype = "bool", device = inputs_embeds.device })
    end
    attention_mask = self:_prepare_decoder_attention_mask(attention_mask,
        { batch_size, seq_length }, inputs_embeds, past_key_values_length)

    local hidden_states = inputs_embeds

    -- decoder layers
    local all_hidden_states = output_hidden_states and {} or nil
    local all_self_attns = output_attentions and {} or nil
    local next_decoder_cache = use_cache and {} or nil

    -- for idx, decoder_layer in enumerate(self.layers):
    for idx, decoder_layer in ipairs(self.layers) do
        if output_hidden_states then
            all_hidden_states[#all_hidden_states + 1] = hidden_states
        end
        -- past_key_value = past_key_values[idx] if past_key_values is not None else None
        local past_key_value = past_key_values ~= nil and past_key_values[idx] or nil
        local layer_outputs = decoder_layer(hidden_states, attention_mask, position_ids,
            past_key_value, output_attentions, use_cache)
        hidden_states = layer_outputs[1]
        if use_cache then
            -- next_decoder_cache += (layer_outputs[2 if output_attentions else 1],)
            next_decoder_cache[#next_decoder_cache + 1] =
                layer_outputs[output_attentions and 3 or 2]
        end
        if output_attentions then
            all_self_attns[#all_self_attns + 1] = layer_outputs[2]
        end
    end
    hidden_states = self.norm(hidden_states)
    -- add hidden states from the last decoder layer
    if output_hidden_states then
        all_hidden_states[#all_hidden_states + 1] = hidden_states
    end
    -- return BaseModelOutputWithPast(last_hidden_state=hidden_states,
    --     past_key_values=next_cache, hidden_states=all_hidden_states, attentions=all_self_attns)
    return { last_hidden_state = hidden_states, past_key_values = next_decoder_cache,
        hidden_states = all_hidden_states, attentions = all_self_attns }
end

-- class LlamaForCausalLM(LlamaPreTrainedModel):
local LlamaForCausalLM = nn.Module:extend("LlamaForCausalLM")
function LlamaForCausalLM:init(config)
    self.config = config
    self.model = LlamaModel(config)
    self.vocab_size = config.vocab_size
    -- self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
    self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, { bias = false })
    post_init(self, config)
end

function LlamaForCausalLM:forward(o)
    -- outputs = self.model(input_ids=input_ids, ...)
    local outputs = self.model(o)
    -- hidden_states = outputs[0]
    local hidden_states = outputs.last_hidden_state
    assert(self.config.pretraining_tp == 1)
    local logits = self.lm_head(hidden_states)
    logits = logits:float()

    local loss = nil
    local labels = o.labels
    if labels ~= nil then
        -- Shift so that tokens < n predict n
        -- shift_logits = logits[..., :-1, :].contiguous()
        local shift_logits = logits[{ "...", { 1, -2 }, {} }]:contiguous()
        -- shift_labels = labels[..., 1:].contiguous()
        local shift_labels = labels[{ "...", { 2, -1 } }]:contiguous()
        -- Flatten the tokens
        local loss_fct = nn.CrossEntropyLoss()
        shift_logits = shift_logits:view(-1, self.config.vocab_size)
        shift_labels = shift_labels:view(-1)
        -- Enable model parallelism
        shift_labels = shift_labels:to(shift_logits.device)
        loss = loss_fct(shift_logits, shift_labels)
    end
    -- return CausalLMOutputWithPast(loss=loss, logits=logits, ...)
    return { loss = loss, logits = logits, past_key_values = outputs.past_key_values,
        hidden_states = outputs.hidden_states, attentions = outputs.attentions }
end

---------------------------------------------------------------------------------------------
-- the test: the same weights as the PyTorch 1.13 reference (the v4.31 lines above pasted into a
-- script), a formula over each parameter's index in named_parameters order
---------------------------------------------------------------------------------------------
local function fill(model)
    tide.no_grad(function()
        for i, np in ipairs(model:named_parameters()) do
            local p = np[2]
            -- j = torch.arange(p.numel(), dtype=torch.float64)
            local j = tide.arange(p:numel(), { dtype = "float64" })
            -- p.copy_((0.3 * torch.sin(0.7 * j + 1.3 * (i + 1))).view(p.shape).float())
            p:copy_((0.3 * tide.sin(0.7 * j + 1.3 * i)):view(p.shape):float())
        end
    end)
end

local function config_tiny(kw)
    local c = { vocab_size = 30, hidden_size = 16, intermediate_size = 24, num_hidden_layers = 2,
        num_attention_heads = 4, num_key_value_heads = 2, max_position_embeddings = 32,
        pad_token_id = 1 }
    for k, v in pairs(kw or {}) do c[k] = v end
    return LlamaConfig(c)
end

local function row(t)
    return t:tolist()
end

describe("transformers v4.31 models/llama/modeling_llama.py", function()
    it("LlamaRotaryEmbedding caches, cache growth, linear and dynamic NTK scaling", function()
        local r = LlamaRotaryEmbedding(4, 32)
        assert.are.same({ 1, 1, 32, 4 }, r.cos_cached.shape)
        -- persistent=False: the caches stay out of state_dict, inv_freq is in it
        local sd = r:state_dict()
        assert.is_nil(sd["cos_cached"])
        assert.is_not_nil(sd["inv_freq"])
        local want5 = { 0.28366219997406006, 0.9987502694129944, 0.28366219997406006,
            0.9987502694129944 }
        assert_close_list(want5, row(r.cos_cached[{ 1, 1, 6 }]), 1e-6, "cos_cached[5]")
        assert_close_list({ -0.4040376543998718, 0.30505862832069397, -0.4040376543998718,
            0.30505862832069397 }, row(r.sin_cached[{ 1, 1, 32 }]), 1e-5, "sin_cached[31]")
        -- growing past max_seq_len_cached
        local c = r(tide.zeros(1), 40)
        assert.are.equal(40, r.max_seq_len_cached)
        assert.are.same({ 1, 1, 40, 4 }, r.cos_cached.shape)
        assert.are.same({ 1, 1, 40, 4 }, c.shape)
        assert_close_list({ 0.2666429281234741, 0.9249090552330017, 0.2666429281234741,
            0.9249090552330017 }, row(c[{ 1, 1, 40 }]), 1e-5, "grown cos[39]")

        local d = LlamaDynamicNTKScalingRotaryEmbedding(4, 32, nil, nil, 2.0)
        local dc, ds = d(tide.zeros(1), 40)
        assert_close_list({ 1.0, 0.006666666828095913 }, row(d.inv_freq), 1e-6, "ntk inv_freq")
        assert.are.same({ 1, 1, 40, 4 }, dc.shape)
        assert_close_list({ 0.2666429281234741, 0.9663899540901184, 0.2666429281234741,
            0.9663899540901184 }, row(dc[{ 1, 1, 40 }]), 1e-5, "ntk cos[39]")
        assert_close_list({ 0.9637954235076904, 0.2570805847644806, 0.9637954235076904,
            0.2570805847644806 }, row(ds[{ 1, 1, 40 }]), 1e-5, "ntk sin[39]")

        local l = LlamaLinearScalingRotaryEmbedding(4, 32, nil, nil, 2.0)
        assert_close_list({ -0.8011435866355896, 0.9996875524520874, -0.8011435866355896,
            0.9996875524520874 }, row(l.cos_cached[{ 1, 1, 6 }]), 1e-6, "linear cos[5]")
        assert_close_list({ -0.35078322887420654, 0.03499285504221916, -0.35078322887420654,
            0.03499285504221916 }, row(l.sin_cached[{ 1, 1, 8 }]), 1e-6, "linear sin[7]")
    end)

    it("LlamaForCausalLM: left-padded logits and loss, cached generation, AdamW", function()
        tide.manual_seed(0)
        local config = config_tiny()
        local m = LlamaForCausalLM(config)
        -- _init_weights: N(0, 0.02) Linear weights, the padding row of the embedding zeroed
        local emb = m.model.embed_tokens.weight
        assert.are.same({ 30, 16 }, emb.shape)
        assert.are.equal(0, emb[1]:abs():sum():item())
        local wstd = m.lm_head.weight:std():item()
        assert.is_true(wstd > 0.012 and wstd < 0.028, "lm_head std " .. wstd)
        m:eval()
        fill(m)
        assert.are.equal(21, #m:named_parameters())

        -- PyTorch's ids + 1
        local ids = tide.tensor({ { 1, 1, 6, 10, 14, 3 }, { 4, 8, 12, 18, 24, 30 } })
        local am = tide.tensor({ { 0, 0, 1, 1, 1, 1 }, { 1, 1, 1, 1, 1, 1 } })
        local labels = tide.tensor({ { 5, 5, 7, 2, 9, 28 }, { 3, 4, 6, 8, 12, 14 } })
        local out = m({ input_ids = ids, attention_mask = am, labels = labels })
        assert.are.same({ 2, 6, 30 }, out.logits.shape)
        assert.are.equal("float32", out.logits.dtype)
        assert.is_true(ported.close(out.loss:item(), 3.416274309158325, 1e-5))
        local want01 = tide.tensor({ 0.0062156496569514275, 0.04295565187931061,
            0.011224767193198204, -0.03839829936623573, -0.02681484818458557, 0.02751118689775467,
            0.037984661757946014, -0.012089083902537823, -0.0428929477930069,
            -0.005325888749212027, 0.04073059931397438, 0.02186289243400097,
            -0.03185402601957321, -0.034795958548784256, 0.017726533114910126,
            0.04199308529496193, -0.000676938274409622, -0.04226791858673096,
            -0.01648426242172718, 0.03557516261935234, 0.030928120017051697,
            -0.023018039762973785, -0.040273670107126236, 0.0066665601916611195,
            0.0429803766310215, 0.010783897712826729, -0.038601990789175034,
            -0.026456672698259354, 0.027860337868332863, 0.03776823729276657 })
        assert.is_true(tide.allclose(out.logits[{ 1, -1 }], want01, { rtol = 1e-4, atol = 1e-6 }))
        local want12 = tide.tensor({ 0.010340889915823936, -0.006195939611643553,
            -0.012856502085924149, 0.000976078154053539, 0.013252805918455124,
            0.004404689650982618, -0.011464462615549564, -0.009059380739927292,
            0.007786259055137634, 0.012220682576298714, -0.002824566327035427,
            -0.01336747221648693, -0.0026027513667941093, 0.012310714460909367,
            0.007601028773933649, -0.009224624373018742, -0.011346329934895039,
            0.0046179210767149925, 0.013221233151853085, 0.0007500295760110021,
            -0.012916718609631062, -0.0059943548403680325, 0.010482949204742908,
            0.010250546969473362, -0.006321129389107227, -0.012816975824534893,
            0.0011172976810485125, 0.013270615600049496, 0.00427070539444685,
            -0.011536677367985249 })
        assert.is_true(tide.allclose(out.logits[{ 2, 3 }], want12, { rtol = 1e-4, atol = 1e-6 }))
        assert.is_true(ported.close(out.logits:abs():sum():item(), 7.970332145690918, 1e-4))

        -- the shape checks raise as the source's ValueError
        local attn = m.model.layers[1].self_attn
        local h = tide.zeros(2, 6, 16)
        local pos = tide.arange(1, 7):unsqueeze(1)
        local ok, err = pcall(attn.forward, attn, h, tide.zeros(2, 1, 6, 5), pos)
        assert.is_false(ok)
        assert.matches("Attention mask should be of size (2, 1, 6, 6), but is (2, 1, 6, 5)",
            tostring(err), 1, true)

        -- greedy generation with past_key_values equals recomputing the full sequence
        local seq = tide.tensor({ { 2, 5, 10 } })
        local inp, pkv, toks = seq, nil, {}
        tide.no_grad(function()
            for _ = 1, 4 do
                local o = m({ input_ids = inp, past_key_values = pkv, use_cache = true })
                pkv = o.past_key_values
                -- nxt = lg[:, -1].argmax(-1, keepdim=True)
                local nxt = o.logits[{ {}, -1 }]:argmax(-1, { keepdim = true })
                toks[#toks + 1] = nxt:item()
                local full = m({ input_ids = seq, use_cache = false }).logits[{ {}, -1 }]
                assert.are.equal(full:argmax(-1):item(), nxt:item())
                assert.is_true(tide.allclose(full, o.logits[{ {}, -1 }], { atol = 1e-6 }))
                seq = tide.cat({ seq, nxt }, { dim = 2 })
                inp = nxt
            end
        end)
        -- PyTorch's [20, 20, 7, 13] + 1
        assert.are.same({ 21, 21, 8, 14 }, toks)
        assert.are.same({ 1, 2, 6, 4 }, pkv[1][1].shape)

        -- 2 AdamW steps: PyTorch's losses
        local opt = tide.optim.AdamW(m:parameters(), { lr = 1e-2 })
        m:train()
        local losses = {}
        for step = 1, 3 do
            opt:zero_grad()
            local loss = m({ input_ids = ids, attention_mask = am, labels = labels }).loss
            assert_finite(loss:item())
            loss:backward()
            if step < 3 then opt:step() end
            losses[step] = loss:item()
        end
        assert_close_list({ 3.416274309158325, 3.336846113204956, 3.2638943195343018 }, losses,
            1e-4, "AdamW losses")
        assert.is_true(losses[3] < losses[2] and losses[2] < losses[1])
    end)
    it("rope_scaling: the dynamic NTK cache grows in the model; an unknown type raises", function()
        local m = LlamaForCausalLM(config_tiny({ rope_scaling = { type = "dynamic",
            factor = 2.0 } }))
        m:eval()
        fill(m)
        -- ids2 = (torch.arange(34) * 7 % 30).view(1, 34)  (+ 1)
        local ids = (tide.arange(34) * 7 % 30 + 1):view(1, 34)
        local logits = tide.no_grad(function()
            return m({ input_ids = ids, use_cache = false }).logits
        end)
        local rope = m.model.layers[1].self_attn.rotary_emb
        assert.are.equal(34, rope.max_seq_len_cached)
        assert_close_list({ 1.0, 0.008888889104127884 }, row(rope.inv_freq), 1e-6, "inv_freq")
        assert.is_true(ported.close(logits:abs():sum():item(), 20.009605407714844, 1e-4))
        assert_close_list({ 0.023397065699100494, -0.01605532132089138, -0.02991568110883236,
            0.003909259103238583 }, row(logits[{ 1, -1, { 1, 4 } }]), 1e-5, "logits[-1, :4]")
        local ok, err = pcall(LlamaAttention, config_tiny({ rope_scaling = { type = "yarn",
            factor = 2.0 } }))
        assert.is_false(ok)
        assert.matches("Unknown RoPE scaling type yarn", tostring(err), 1, true)
    end)
end)
