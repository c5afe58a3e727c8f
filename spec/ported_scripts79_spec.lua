-- ported_scripts79_spec.lua — Hugging Face transformers v4.30.0's
-- src/transformers/models/t5/modeling_t5.py (T5LayerNorm, T5DenseActDense, T5DenseGatedActDense,
-- T5LayerFF, T5Attention with _relative_position_bucket / compute_bias / the past_key_value
-- cache, T5LayerSelfAttention, T5LayerCrossAttention, T5Block, T5Stack, T5PreTrainedModel's
-- _init_weights and _shift_right, T5ForConditionalGeneration), with modeling_utils.py's
-- ModuleUtilsMixin masks (get_extended_attention_mask, create_extended_attention_mask_for_decoder,
-- invert_attention_mask) and activations.py's NewGELUActivation ("gelu_new"), ported line for
-- line at tiny sizes; then greedy decoding (generation/utils.py's greedy_search core) with and
-- without past_key_values, and 2 AdamW steps. The Python line stands above each Lua line that
-- differs from it. Dims are 1-based, and so are token ids: HF's pad / decoder start id 0 is 1
-- here; a relative-position bucket stays 0-based (PyTorch's values) and is shifted by 1 where it
-- indexes the relative_attention_bias Embedding. Heads pruning, model parallel (device_map),
-- gradient checkpointing, head masks and output_attentions / hidden_states are not ported.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- Python's tuples: t[i] with a None (nil) inside, their length kept in n
local function tuple(...)
    return { n = select("#", ...), ... }
end
-- t[i:j] (Lua's 1-based inclusive i..j; j defaults to the end)
local function slice(t, i, j)
    local r = { n = 0 }
    for k = i, j or t.n do
        r.n = r.n + 1
        r[r.n] = t[k]
    end
    return r
end
-- a + b
local function concat(a, b)
    local r = slice(a, 1)
    for k = 1, b.n do
        r.n = r.n + 1
        r[r.n] = b[k]
    end
    return r
end

-- T5Config (configuration_t5.py) at the tiny sizes; feed_forward_proj="gated-gelu" sets
-- dense_act_fn="gelu_new" and is_gated_act=True; dropout_rate 0 keeps training deterministic
local function T5Config(kw)
    local c = {
        vocab_size = 30, d_model = 16, d_kv = 4, d_ff = 24, num_layers = 2,
        num_decoder_layers = 2, num_heads = 2, relative_attention_num_buckets = 8,
        relative_attention_max_distance = 16, dropout_rate = 0.0, layer_norm_epsilon = 1e-6,
        initializer_factor = 1.0, feed_forward_proj = "gated-gelu", is_encoder_decoder = true,
        use_cache = true, tie_word_embeddings = true, is_decoder = false,
        -- pad_token_id=0, decoder_start_token_id=0 (1-based ids)
        pad_token_id = 1, decoder_start_token_id = 1,
    }
    for k, v in pairs(kw or {}) do c[k] = v end
    -- act_info = self.feed_forward_proj.split("-")
    local gated = c.feed_forward_proj:match("^gated%-(.*)$")
    c.dense_act_fn = gated or c.feed_forward_proj
    c.is_gated_act = gated ~= nil
    -- if feed_forward_proj == "gated-gelu": self.dense_act_fn = "gelu_new"
    if c.feed_forward_proj == "gated-gelu" then c.dense_act_fn = "gelu_new" end
    return c
end

-- copy.deepcopy(config)
local function copy_config(c)
    local r = {}
    for k, v in pairs(c) do r[k] = v end
    return r
end

-- activations.py: class NewGELUActivation(nn.Module)
local NewGELUActivation = nn.Module:extend("NewGELUActivation")
function NewGELUActivation:forward(input)
    -- return 0.5 * input * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (input + 0.044715 *
    --     torch.pow(input, 3.0))))
    return 0.5 * input * (1.0 + tide.tanh(math.sqrt(2.0 / math.pi) * (input + 0.044715 *
        tide.pow(input, 3.0))))
end
-- ACT2FN
local ACT2FN = { gelu_new = NewGELUActivation, relu = nn.ReLU }

-- class T5LayerNorm(nn.Module):
local T5LayerNorm = nn.Module:extend("T5LayerNorm")
function T5LayerNorm:init(hidden_size, eps)
    -- self.weight = nn.Parameter(torch.ones(hidden_size))
    self.weight = nn.Parameter(tide.ones(hidden_size))
    self.variance_epsilon = eps or 1e-6
end

function T5LayerNorm:forward(hidden_states)
    -- variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
    local variance = hidden_states:to(tide.float32):pow(2):mean(-1, { keepdim = true })
    -- hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
    hidden_states = hidden_states * tide.rsqrt(variance + self.variance_epsilon)
    -- convert into half-precision if necessary
    -- if self.weight.dtype in [torch.float16, torch.bfloat16]:
    if self.weight.dtype == tide.float16 or self.weight.dtype == tide.bfloat16 then
        hidden_states = hidden_states:to(self.weight.dtype)
    end
    return self.weight * hidden_states
end

-- class T5DenseActDense(nn.Module):
local T5DenseActDense = nn.Module:extend("T5DenseActDense")
function T5DenseActDense:init(config)
    -- self.wi = nn.Linear(config.d_model, config.d_ff, bias=False)
    self.wi = nn.Linear(config.d_model, config.d_ff, { bias = false })
    self.wo = nn.Linear(config.d_ff, config.d_model, { bias = false })
    self.dropout = nn.Dropout(config.dropout_rate)
    -- self.act = ACT2FN[config.dense_act_fn]
    self.act = ACT2FN[config.dense_act_fn]()
end

function T5DenseActDense:forward(hidden_states)
    hidden_states = self.wi(hidden_states)
    hidden_states = self.act(hidden_states)
    hidden_states = self.dropout(hidden_states)
    -- if (isinstance(self.wo.weight, torch.Tensor) and hidden_states.dtype !=
    --     self.wo.weight.dtype and self.wo.weight.dtype != torch.int8):
    if hidden_states.dtype ~= self.wo.weight.dtype then
        hidden_states = hidden_states:to(self.wo.weight.dtype)
    end
    hidden_states = self.wo(hidden_states)
    return hidden_states
end

-- class T5DenseGatedActDense(nn.Module):
local T5DenseGatedActDense = nn.Module:extend("T5DenseGatedActDense")
function T5DenseGatedActDense:init(config)
    self.wi_0 = nn.Linear(config.d_model, config.d_ff, { bias = false })
    self.wi_1 = nn.Linear(config.d_model, config.d_ff, { bias = false })
    self.wo = nn.Linear(config.d_ff, config.d_model, { bias = false })
    self.dropout = nn.Dropout(config.dropout_rate)
    self.act = ACT2FN[config.dense_act_fn]()
end

function T5DenseGatedActDense:forward(hidden_states)
    local hidden_gelu = self.act(self.wi_0(hidden_states))
    local hidden_linear = self.wi_1(hidden_states)
    hidden_states = hidden_gelu * hidden_linear
    hidden_states = self.dropout(hidden_states)
    if hidden_states.dtype ~= self.wo.weight.dtype then
        hidden_states = hidden_states:to(self.wo.weight.dtype)
    end
    hidden_states = self.wo(hidden_states)
    return hidden_states
end

-- class T5LayerFF(nn.Module):
local T5LayerFF = nn.Module:extend("T5LayerFF")
function T5LayerFF:init(config)
    if config.is_gated_act then
        self.DenseReluDense = T5DenseGatedActDense(config)
    else
        self.DenseReluDense = T5DenseActDense(config)
    end
    self.layer_norm = T5LayerNorm(config.d_model, config.layer_norm_epsilon)
    self.dropout = nn.Dropout(config.dropout_rate)
end

function T5LayerFF:forward(hidden_states)
    local forwarded_states = self.layer_norm(hidden_states)
    forwarded_states = self.DenseReluDense(forwarded_states)
    hidden_states = hidden_states + self.dropout(forwarded_states)
    return hidden_states
end

-- class T5Attention(nn.Module):
local T5Attention = nn.Module:extend("T5Attention")
-- def __init__(self, config: T5Config, has_relative_attention_bias=False):
function T5Attention:init(config, has_relative_attention_bias)
    self.is_decoder = config.is_decoder
    self.has_relative_attention_bias = has_relative_attention_bias or false
    self.relative_attention_num_buckets = config.relative_attention_num_buckets
    self.relative_attention_max_distance = config.relative_attention_max_distance
    self.d_model = config.d_model
    self.key_value_proj_dim = config.d_kv
    self.n_heads = config.num_heads
    self.dropout = config.dropout_rate
    self.inner_dim = self.n_heads * self.key_value_proj_dim

    -- Mesh TensorFlow initialization to avoid scaling before softmax
    self.q = nn.Linear(self.d_model, self.inner_dim, { bias = false })
    self.k = nn.Linear(self.d_model, self.inner_dim, { bias = false })
    self.v = nn.Linear(self.d_model, self.inner_dim, { bias = false })
    self.o = nn.Linear(self.inner_dim, self.d_model, { bias = false })

    if self.has_relative_attention_bias then
        -- self.relative_attention_bias = nn.Embedding(self.relative_attention_num_buckets,
        --     self.n_heads)
        self.relative_attention_bias = nn.Embedding(self.relative_attention_num_buckets,
            self.n_heads)
    end
end

-- @staticmethod
-- def _relative_position_bucket(relative_position, bidirectional=True, num_buckets=32,
--     max_distance=128):
function T5Attention._relative_position_bucket(relative_position, bidirectional, num_buckets,
    max_distance)
    if bidirectional == nil then bidirectional = true end
    num_buckets, max_distance = num_buckets or 32, max_distance or 128
    local relative_buckets = 0
    if bidirectional then
        -- num_buckets //= 2
        num_buckets = math.floor(num_buckets / 2)
        -- relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_buckets = relative_buckets + relative_position:gt(0):to(tide.long) * num_buckets
        relative_position = tide.abs(relative_position)
    else
        -- relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
        relative_position = -tide.min(relative_position, tide.zeros_like(relative_position))
    end
    -- now relative_position is in the range [0, inf)

    -- half of the buckets are for exact increments in positions
    -- max_exact = num_buckets // 2
    local max_exact = math.floor(num_buckets / 2)
    -- is_small = relative_position < max_exact
    local is_small = relative_position:lt(max_exact)

    -- The other half of the buckets are for logarithmically bigger bins in positions up to
    -- max_distance
    -- relative_position_if_large = max_exact + (
    --     torch.log(relative_position.float() / max_exact)
    --     / math.log(max_distance / max_exact)
    --     * (num_buckets - max_exact)
    -- ).to(torch.long)
    local relative_position_if_large = max_exact + (
        tide.log(relative_position:float() / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ):to(tide.long)
    -- relative_position_if_large = torch.min(
    --     relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1)
    -- )
    relative_position_if_large = tide.min(
        relative_position_if_large, tide.full_like(relative_position_if_large, num_buckets - 1)
    )

    -- relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
    relative_buckets = relative_buckets + tide.where(is_small, relative_position,
        relative_position_if_large)
    return relative_buckets
end

-- def compute_bias(self, query_length, key_length, device=None):
function T5Attention:compute_bias(query_length, key_length, device)
    if device == nil then
        device = self.relative_attention_bias.weight.device
    end
    -- context_position = torch.arange(query_length, dtype=torch.long, device=device)[:, None]
    local context_position = tide.arange(query_length, { dtype = tide.long, device = device })[
        { {}, tide.newaxis }]
    -- memory_position = torch.arange(key_length, dtype=torch.long, device=device)[None, :]
    local memory_position = tide.arange(key_length, { dtype = tide.long, device = device })[
        { tide.newaxis, {} }]
    local relative_position = memory_position - context_position -- shape (q_len, k_len)
    local relative_position_bucket = self._relative_position_bucket(
        relative_position, -- shape (query_length, key_length)
        -- bidirectional=(not self.is_decoder),
        not self.is_decoder,
        self.relative_attention_num_buckets,
        self.relative_attention_max_distance
    )
    -- values = self.relative_attention_bias(relative_position_bucket)
    -- (the 0-based bucket indexes a 1-based Embedding)
    local values = self.relative_attention_bias(relative_position_bucket + 1)
    -- values = values.permute([2, 0, 1]).unsqueeze(0)  # shape (1, num_heads, q_len, k_len)
    values = values:permute({ 3, 1, 2 }):unsqueeze(1)
    return values
end

-- def forward(self, hidden_states, mask=None, key_value_states=None, position_bias=None,
--     past_key_value=None, layer_head_mask=None, query_length=None, use_cache=False,
--     output_attentions=False):
function T5Attention:forward(hidden_states, kw)
    kw = kw or {}
    local mask, key_value_states, position_bias = kw.mask, kw.key_value_states, kw.position_bias
    local past_key_value, query_length, use_cache = kw.past_key_value, kw.query_length,
        kw.use_cache
    -- Input is (batch_size, seq_length, dim)
    -- batch_size, seq_length = hidden_states.shape[:2]
    local batch_size, seq_length = hidden_states.shape[1], hidden_states.shape[2]

    local real_seq_length = seq_length

    if past_key_value ~= nil then
        -- if len(past_key_value) != 2:
        if past_key_value.n ~= 2 then
            error(("past_key_value should have 2 past states: keys and values. Got %d " ..
                "past states"):format(past_key_value.n))
        end
        -- real_seq_length += past_key_value[0].shape[2] if query_length is None else query_length
        real_seq_length = real_seq_length + (query_length == nil and past_key_value[1].shape[3]
            or query_length)
    end

    -- key_length = real_seq_length if key_value_states is None else key_value_states.shape[1]
    local key_length = key_value_states == nil and real_seq_length or key_value_states.shape[2]

    local function shape(states)
        -- projection
        -- return states.view(batch_size, -1, self.n_heads, self.key_value_proj_dim)
        --     .transpose(1, 2)
        return states:view(batch_size, -1, self.n_heads, self.key_value_proj_dim)
            :transpose(2, 3)
    end

    local function unshape(states)
        -- reshape
        -- return states.transpose(1, 2).contiguous().view(batch_size, -1, self.inner_dim)
        return states:transpose(2, 3):contiguous():view(batch_size, -1, self.inner_dim)
    end

    -- def project(hidden_states, proj_layer, key_value_states, past_key_value):
    local function project(hidden_states_, proj_layer, key_value_states_, past_key_value_)
        -- projects hidden states correctly to key/query states
        if key_value_states_ == nil then
            -- self-attn
            -- (batch_size, n_heads, seq_length, dim_per_head)
            hidden_states_ = shape(proj_layer(hidden_states_))
        elseif past_key_value_ == nil then
            -- cross-attn
            -- (batch_size, n_heads, seq_length, dim_per_head)
            hidden_states_ = shape(proj_layer(key_value_states_))
        end

        if past_key_value_ ~= nil then
            if key_value_states_ == nil then
                -- self-attn
                -- (batch_size, n_heads, key_length, dim_per_head)
                -- hidden_states = torch.cat([past_key_value, hidden_states], dim=2)
                hidden_states_ = tide.cat({ past_key_value_, hidden_states_ }, 3)
            -- elif past_key_value.shape[2] != key_value_states.shape[1]:
            elseif past_key_value_.shape[3] ~= key_value_states_.shape[2] then
                -- checking that the `sequence_length` of the `past_key_value` is the same as
                -- the provided `key_value_states` to support prefix tuning
                -- cross-attn
                -- (batch_size, n_heads, seq_length, dim_per_head)
                hidden_states_ = shape(proj_layer(key_value_states_))
            else
                -- cross-attn
                hidden_states_ = past_key_value_
            end
        end
        return hidden_states_
    end

    -- get query states
    -- (batch_size, n_heads, seq_length, dim_per_head)
    local query_states = shape(self.q(hidden_states))

    -- get key/value states
    -- key_states = project(hidden_states, self.k, key_value_states,
    --     past_key_value[0] if past_key_value is not None else None)
    local key_states = project(hidden_states, self.k, key_value_states,
        past_key_value ~= nil and past_key_value[1] or nil)
    local value_states = project(hidden_states, self.v, key_value_states,
        past_key_value ~= nil and past_key_value[2] or nil)

    -- compute scores
    -- scores = torch.matmul(query_states, key_states.transpose(3, 2))
    -- equivalent of torch.einsum("bnqd,bnkd->bnqk", query_states, key_states), compatible with
    -- onnx op>9
    local scores = tide.matmul(query_states, key_states:transpose(4, 3))

    if position_bias == nil then
        if not self.has_relative_attention_bias then
            -- position_bias = torch.zeros((1, self.n_heads, real_seq_length, key_length),
            --     device=scores.device, dtype=scores.dtype)
            position_bias = tide.zeros({ 1, self.n_heads, real_seq_length, key_length },
                { device = scores.device, dtype = scores.dtype })
        else
            position_bias = self:compute_bias(real_seq_length, key_length, scores.device)
        end

        -- if key and values are already calculated
        -- we want only the last query position bias
        if past_key_value ~= nil then
            -- position_bias = position_bias[:, :, -hidden_states.size(1) :, :]
            position_bias = position_bias[{ {}, {}, { -hidden_states:size(2), -1 }, {} }]
        end

        if mask ~= nil then
            -- (batch_size, n_heads, seq_length, key_length)
            position_bias = position_bias + mask
        end
    end

    local position_bias_masked = position_bias

    -- scores += position_bias_masked
    scores = scores + position_bias_masked
    -- attn_weights = nn.functional.softmax(scores.float(), dim=-1).type_as(scores)
    -- (batch_size, n_heads, seq_length, key_length)
    local attn_weights = F.softmax(scores:float(), { dim = -1 }):type_as(scores)
    -- attn_weights = nn.functional.dropout(attn_weights, p=self.dropout,
    --     training=self.training)
    attn_weights = F.dropout(attn_weights, { p = self.dropout, training = self.training })

    -- attn_output = unshape(torch.matmul(attn_weights, value_states))
    -- (batch_size, seq_length, dim)
    local attn_output = unshape(tide.matmul(attn_weights, value_states))
    attn_output = self.o(attn_output)

    -- present_key_value_state = (key_states, value_states) if (self.is_decoder and use_cache)
    --     else None
    local present_key_value_state = (self.is_decoder and use_cache)
        and tuple(key_states, value_states) or nil
    -- outputs = (attn_output,) + (present_key_value_state,) + (position_bias,)
    return tuple(attn_output, present_key_value_state, position_bias)
end

-- class T5LayerSelfAttention(nn.Module):
local T5LayerSelfAttention = nn.Module:extend("T5LayerSelfAttention")
function T5LayerSelfAttention:init(config, has_relative_attention_bias)
    -- self.SelfAttention = T5Attention(config,
    --     has_relative_attention_bias=has_relative_attention_bias)
    self.SelfAttention = T5Attention(config, has_relative_attention_bias)
    self.layer_norm = T5LayerNorm(config.d_model, config.layer_norm_epsilon)
    self.dropout = nn.Dropout(config.dropout_rate)
end

-- def forward(self, hidden_states, attention_mask=None, position_bias=None,
--     layer_head_mask=None, past_key_value=None, use_cache=False, output_attentions=False):
function T5LayerSelfAttention:forward(hidden_states, kw)
    kw = kw or {}
    local normed_hidden_states = self.layer_norm(hidden_states)
    -- attention_output = self.SelfAttention(normed_hidden_states, mask=attention_mask,
    --     position_bias=position_bias, ..., past_key_value=past_key_value, use_cache=use_cache)
    local attention_output = self.SelfAttention(normed_hidden_states, {
        mask = kw.attention_mask, position_bias = kw.position_bias,
        past_key_value = kw.past_key_value, use_cache = kw.use_cache })
    -- hidden_states = hidden_states + self.dropout(attention_output[0])
    hidden_states = hidden_states + self.dropout(attention_output[1])
    -- outputs = (hidden_states,) + attention_output[1:]  # add attentions if we output them
    return concat(tuple(hidden_states), slice(attention_output, 2))
end

-- class T5LayerCrossAttention(nn.Module):
local T5LayerCrossAttention = nn.Module:extend("T5LayerCrossAttention")
function T5LayerCrossAttention:init(config)
    -- self.EncDecAttention = T5Attention(config, has_relative_attention_bias=False)
    self.EncDecAttention = T5Attention(config, false)
    self.layer_norm = T5LayerNorm(config.d_model, config.layer_norm_epsilon)
    self.dropout = nn.Dropout(config.dropout_rate)
end

-- def forward(self, hidden_states, key_value_states, attention_mask=None, position_bias=None,
--     layer_head_mask=None, past_key_value=None, use_cache=False, query_length=None,
--     output_attentions=False):
function T5LayerCrossAttention:forward(hidden_states, key_value_states, kw)
    kw = kw or {}
    local normed_hidden_states = self.layer_norm(hidden_states)
    local attention_output = self.EncDecAttention(normed_hidden_states, {
        mask = kw.attention_mask, key_value_states = key_value_states,
        position_bias = kw.position_bias, past_key_value = kw.past_key_value,
        use_cache = kw.use_cache, query_length = kw.query_length })
    -- layer_output = hidden_states + self.dropout(attention_output[0])
    local layer_output = hidden_states + self.dropout(attention_output[1])
    -- outputs = (layer_output,) + attention_output[1:]  # add attentions if we output them
    return concat(tuple(layer_output), slice(attention_output, 2))
end

-- class T5Block(nn.Module):
local T5Block = nn.Module:extend("T5Block")
function T5Block:init(config, has_relative_attention_bias)
    self.is_decoder = config.is_decoder
    self.layer = nn.ModuleList()
    -- self.layer.append(T5LayerSelfAttention(config,
    --     has_relative_attention_bias=has_relative_attention_bias))
    self.layer:append(T5LayerSelfAttention(config, has_relative_attention_bias))
    if self.is_decoder then
        self.layer:append(T5LayerCrossAttention(config))
    end
    self.layer:append(T5LayerFF(config))
end

-- def forward(self, hidden_states, attention_mask=None, position_bias=None,
--     encoder_hidden_states=None, encoder_attention_mask=None,
--     encoder_decoder_position_bias=None, layer_head_mask=None, cross_attn_layer_head_mask=None,
--     past_key_value=None, use_cache=False, output_attentions=False, return_dict=True):
function T5Block:forward(hidden_states, kw)
    kw = kw or {}
    local encoder_hidden_states, past_key_value = kw.encoder_hidden_states, kw.past_key_value
    local use_cache = kw.use_cache
    local self_attn_past_key_value, cross_attn_past_key_value
    if past_key_value ~= nil then
        if not self.is_decoder then
            error("`past_key_values` is passed to the encoder. Please make sure this is intended.")
        end
        -- expected_num_past_key_values = 2 if encoder_hidden_states is None else 4
        local expected_num_past_key_values = encoder_hidden_states == nil and 2 or 4

        -- if len(past_key_value) != expected_num_past_key_values:
        if past_key_value.n ~= expected_num_past_key_values then
            error(("There should be %d past states. Got %d past key / value states")
                :format(expected_num_past_key_values, past_key_value.n))
        end

        -- self_attn_past_key_value = past_key_value[:2]
        self_attn_past_key_value = slice(past_key_value, 1, 2)
        -- cross_attn_past_key_value = past_key_value[2:]
        cross_attn_past_key_value = slice(past_key_value, 3)
    end

    -- self_attention_outputs = self.layer[0](hidden_states, attention_mask=attention_mask,
    --     position_bias=position_bias, layer_head_mask=layer_head_mask,
    --     past_key_value=self_attn_past_key_value, use_cache=use_cache, ...)
    local self_attention_outputs = self.layer[1](hidden_states, {
        attention_mask = kw.attention_mask, position_bias = kw.position_bias,
        past_key_value = self_attn_past_key_value, use_cache = use_cache })
    -- hidden_states, present_key_value_state = self_attention_outputs[:2]
    hidden_states = self_attention_outputs[1]
    local present_key_value_state = self_attention_outputs[2]
    -- attention_outputs = self_attention_outputs[2:]  # Keep self-attention outputs and
    -- relative position weights
    local attention_outputs = slice(self_attention_outputs, 3)

    -- clamp inf values to enable fp16 training
    if hidden_states.dtype == tide.float16 then
        -- clamp_value = torch.where(torch.isinf(hidden_states).any(),
        --     torch.finfo(hidden_states.dtype).max - 1000, torch.finfo(hidden_states.dtype).max)
        local clamp_value = hidden_states:isinf():any():item()
            and tide.finfo(hidden_states.dtype).max - 1000 or tide.finfo(hidden_states.dtype).max
        hidden_states = tide.clamp(hidden_states, -clamp_value, clamp_value)
    end

    -- do_cross_attention = self.is_decoder and encoder_hidden_states is not None
    local do_cross_attention = self.is_decoder and encoder_hidden_states ~= nil
    if do_cross_attention then
        -- the actual query length is unknown for cross attention
        -- if using past key value states. Need to inject it here
        local query_length
        if present_key_value_state ~= nil then
            -- query_length = present_key_value_state[0].shape[2]
            query_length = present_key_value_state[1].shape[3]
        end

        -- cross_attention_outputs = self.layer[1](hidden_states,
        --     key_value_states=encoder_hidden_states, attention_mask=encoder_attention_mask,
        --     position_bias=encoder_decoder_position_bias, ...,
        --     past_key_value=cross_attn_past_key_value, query_length=query_length,
        --     use_cache=use_cache, output_attentions=output_attentions)
        local cross_attention_outputs = self.layer[2](hidden_states, encoder_hidden_states, {
            attention_mask = kw.encoder_attention_mask,
            position_bias = kw.encoder_decoder_position_bias,
            past_key_value = cross_attn_past_key_value, query_length = query_length,
            use_cache = use_cache })
        hidden_states = cross_attention_outputs[1]

        -- Combine self attn and cross attn key value states
        if present_key_value_state ~= nil then
            -- present_key_value_state = present_key_value_state + cross_attention_outputs[1]
            present_key_value_state = concat(present_key_value_state, cross_attention_outputs[2])
        end

        -- Keep cross-attention outputs and relative position weights
        -- attention_outputs = attention_outputs + cross_attention_outputs[2:]
        attention_outputs = concat(attention_outputs, slice(cross_attention_outputs, 3))
    end

    -- Apply Feed Forward layer
    -- hidden_states = self.layer[-1](hidden_states)
    hidden_states = self.layer[#self.layer](hidden_states)

    local outputs = tuple(hidden_states)

    if use_cache then
        -- outputs = outputs + (present_key_value_state,) + attention_outputs
        outputs = concat(concat(outputs, tuple(present_key_value_state)), attention_outputs)
    else
        outputs = concat(outputs, attention_outputs)
    end

    -- hidden-states, present_key_value_states, (self-attention position bias),
    -- (self-attention weights), (cross-attention position bias), (cross-attention weights)
    return outputs
end

-- modeling_utils.py, ModuleUtilsMixin.create_extended_attention_mask_for_decoder
local function create_extended_attention_mask_for_decoder(input_shape, attention_mask, device)
    -- batch_size, seq_length = input_shape
    local batch_size, seq_length = input_shape[1], input_shape[2]
    local seq_ids = tide.arange(seq_length, { device = device })
    -- causal_mask = seq_ids[None, None, :].repeat(batch_size, seq_length, 1) <=
    --     seq_ids[None, :, None]
    local row = seq_ids[{ tide.newaxis, tide.newaxis, {} }]
    local causal_mask = row["repeat"](row, batch_size, seq_length, 1)
        :le(seq_ids[{ tide.newaxis, {}, tide.newaxis }])
    -- in case past_key_values are used we need to add a prefix ones mask to the causal mask
    causal_mask = causal_mask:to(attention_mask.dtype)

    if causal_mask.shape[2] < attention_mask.shape[2] then
        local prefix_seq_len = attention_mask.shape[2] - causal_mask.shape[2]
        -- causal_mask = torch.cat([torch.ones((batch_size, seq_length, prefix_seq_len),
        --     device=device, dtype=causal_mask.dtype), causal_mask], axis=-1)
        causal_mask = tide.cat({ tide.ones({ batch_size, seq_length, prefix_seq_len },
            { device = device, dtype = causal_mask.dtype }), causal_mask }, -1)
    end

    -- extended_attention_mask = causal_mask[:, None, :, :] * attention_mask[:, None, None, :]
    return causal_mask[{ {}, tide.newaxis, {}, {} }]
        * attention_mask[{ {}, tide.newaxis, tide.newaxis, {} }]
end

-- class T5Stack(T5PreTrainedModel):
local T5Stack = nn.Module:extend("T5Stack")
-- def __init__(self, config, embed_tokens=None):
function T5Stack:init(config, embed_tokens)
    self.config = config
    self.embed_tokens = embed_tokens
    self.is_decoder = config.is_decoder

    -- self.block = nn.ModuleList(
    --     [T5Block(config, has_relative_attention_bias=bool(i == 0))
    --      for i in range(config.num_layers)])
    local block = {}
    for i = 0, config.num_layers - 1 do
        block[#block + 1] = T5Block(config, i == 0)
    end
    self.block = nn.ModuleList(block)
    self.final_layer_norm = T5LayerNorm(config.d_model, config.layer_norm_epsilon)
    self.dropout = nn.Dropout(config.dropout_rate)
end

-- ModuleUtilsMixin.get_extended_attention_mask(self, attention_mask, input_shape, ...)
function T5Stack:get_extended_attention_mask(attention_mask, input_shape)
    -- dtype = self.dtype
    local dtype = self.final_layer_norm.weight.dtype
    local extended_attention_mask
    -- if attention_mask.dim() == 3:
    if attention_mask:dim() == 3 then
        extended_attention_mask = attention_mask[{ {}, tide.newaxis, {}, {} }]
    elseif attention_mask:dim() == 2 then
        -- Provided a padding mask of dimensions [batch_size, seq_length]
        -- - if the model is a decoder, apply a causal mask in addition to the padding mask
        -- - if the model is an encoder, make the mask broadcastable to [batch_size, num_heads,
        --   seq_length, seq_length]
        if self.config.is_decoder then
            extended_attention_mask = create_extended_attention_mask_for_decoder(
                input_shape, attention_mask, attention_mask.device)
        else
            -- extended_attention_mask = attention_mask[:, None, None, :]
            extended_attention_mask = attention_mask[{ {}, tide.newaxis, tide.newaxis, {} }]
        end
    end
    -- extended_attention_mask = extended_attention_mask.to(dtype=dtype)  # fp16 compatibility
    extended_attention_mask = extended_attention_mask:to(dtype)
    -- extended_attention_mask = (1.0 - extended_attention_mask) * torch.finfo(dtype).min
    return (1.0 - extended_attention_mask) * tide.finfo(dtype).min
end

-- ModuleUtilsMixin.invert_attention_mask(self, encoder_attention_mask)
function T5Stack:invert_attention_mask(encoder_attention_mask)
    local dtype = self.final_layer_norm.weight.dtype
    local encoder_extended_attention_mask
    if encoder_attention_mask:dim() == 3 then
        encoder_extended_attention_mask = encoder_attention_mask[{ {}, tide.newaxis, {}, {} }]
    end
    if encoder_attention_mask:dim() == 2 then
        -- encoder_extended_attention_mask = encoder_attention_mask[:, None, None, :]
        encoder_extended_attention_mask = encoder_attention_mask[
            { {}, tide.newaxis, tide.newaxis, {} }]
    end
    encoder_extended_attention_mask = encoder_extended_attention_mask:to(dtype)
    return (1.0 - encoder_extended_attention_mask) * tide.finfo(dtype).min
end

-- def forward(self, input_ids=None, attention_mask=None, encoder_hidden_states=None,
--     encoder_attention_mask=None, inputs_embeds=None, head_mask=None,
--     cross_attn_head_mask=None, past_key_values=None, use_cache=None, ...):
-- (returns (last_hidden_state, present_key_value_states), return_dict=False's tuple)
function T5Stack:forward(input_ids, kw)
    kw = kw or {}
    local attention_mask, encoder_hidden_states = kw.attention_mask, kw.encoder_hidden_states
    local encoder_attention_mask, past_key_values = kw.encoder_attention_mask, kw.past_key_values
    local inputs_embeds = kw.inputs_embeds
    -- use_cache = use_cache if use_cache is not None else self.config.use_cache
    local use_cache = kw.use_cache
    if use_cache == nil then use_cache = self.config.use_cache end

    local input_shape
    if input_ids ~= nil then
        -- input_shape = input_ids.size()
        input_shape = input_ids:size()
        -- input_ids = input_ids.view(-1, input_shape[-1])
        input_ids = input_ids:view(-1, input_shape[#input_shape])
    else
        input_shape = slice(inputs_embeds:size(), 1, inputs_embeds:dim() - 1)
    end

    if inputs_embeds == nil then
        assert(self.embed_tokens ~= nil, "You have to initialize the model with valid token " ..
            "embeddings")
        inputs_embeds = self.embed_tokens(input_ids)
    end

    -- batch_size, seq_length = input_shape
    local batch_size, seq_length = input_shape[1], input_shape[2]

    -- required mask seq length can be calculated via length of past
    -- mask_seq_length = past_key_values[0][0].shape[2] + seq_length if past_key_values is not
    --     None else seq_length
    local mask_seq_length = past_key_values ~= nil
        and past_key_values[1][1].shape[3] + seq_length or seq_length

    if use_cache == true then
        assert(self.is_decoder, "`use_cache` can only be set to `True` if " ..
            tostring(self) .. " is used as a decoder")
    end

    if attention_mask == nil then
        -- attention_mask = torch.ones(batch_size, mask_seq_length, device=inputs_embeds.device)
        attention_mask = tide.ones({ batch_size, mask_seq_length },
            { device = inputs_embeds.device })
    end
    if self.is_decoder and encoder_attention_mask == nil and encoder_hidden_states ~= nil then
        local encoder_seq_length = encoder_hidden_states.shape[2]
        -- encoder_attention_mask = torch.ones(batch_size, encoder_seq_length,
        --     device=inputs_embeds.device, dtype=torch.long)
        encoder_attention_mask = tide.ones({ batch_size, encoder_seq_length },
            { device = inputs_embeds.device, dtype = tide.long })
    end

    -- initialize past_key_values with `None` if past does not exist
    -- if past_key_values is None: past_key_values = [None] * len(self.block)
    -- (Lua: a missing entry reads nil)
    past_key_values = past_key_values or {}

    -- We can provide a self-attention mask of dimensions [batch_size, from_seq_length,
    -- to_seq_length] ourselves in which case we just need to make it broadcastable to all heads.
    local extended_attention_mask = self:get_extended_attention_mask(attention_mask,
        input_shape)

    -- If a 2D or 3D attention mask is provided for the cross-attention
    -- we need to make broadcastable to [batch_size, num_heads, seq_length, seq_length]
    local encoder_extended_attention_mask
    if self.is_decoder and encoder_hidden_states ~= nil then
        -- encoder_batch_size, encoder_sequence_length, _ = encoder_hidden_states.size()
        local encoder_batch_size, encoder_sequence_length = encoder_hidden_states.shape[1],
            encoder_hidden_states.shape[2]
        local encoder_hidden_shape = { encoder_batch_size, encoder_sequence_length }
        if encoder_attention_mask == nil then
            encoder_attention_mask = tide.ones(encoder_hidden_shape,
                { device = inputs_embeds.device })
        end
        encoder_extended_attention_mask = self:invert_attention_mask(encoder_attention_mask)
    end

    -- present_key_value_states = () if use_cache else None
    local present_key_value_states = use_cache and tuple() or nil
    local position_bias
    local encoder_decoder_position_bias

    local hidden_states = self.dropout(inputs_embeds)

    -- for i, (layer_module, past_key_value) in enumerate(zip(self.block, past_key_values)):
    for i = 1, #self.block do
        local layer_module, past_key_value = self.block[i], past_key_values[i]
        -- layer_outputs = layer_module(hidden_states, attention_mask=extended_attention_mask,
        --     position_bias=position_bias, encoder_hidden_states=encoder_hidden_states,
        --     encoder_attention_mask=encoder_extended_attention_mask,
        --     encoder_decoder_position_bias=encoder_decoder_position_bias, ...,
        --     past_key_value=past_key_value, use_cache=use_cache, ...)
        local layer_outputs = layer_module(hidden_states, {
            attention_mask = extended_attention_mask, position_bias = position_bias,
            encoder_hidden_states = encoder_hidden_states,
            encoder_attention_mask = encoder_extended_attention_mask,
            encoder_decoder_position_bias = encoder_decoder_position_bias,
            past_key_value = past_key_value, use_cache = use_cache })

        -- layer_outputs is a tuple with:
        -- hidden-states, key-value-states, (self-attention position bias), (self-attention
        -- weights), (cross-attention position bias), (cross-attention weights)
        if use_cache == false then
            -- layer_outputs = layer_outputs[:1] + (None,) + layer_outputs[1:]
            layer_outputs = concat(concat(slice(layer_outputs, 1, 1), tuple(nil)),
                slice(layer_outputs, 2))
        end

        -- hidden_states, present_key_value_state = layer_outputs[:2]
        hidden_states = layer_outputs[1]
        local present_key_value_state = layer_outputs[2]

        -- We share the position biases between the layers - the first layer store them
        -- layer_outputs = hidden-states, key-value-states (self-attention position bias),
        -- (self-attention weights), (cross-attention position bias), (cross-attention weights)
        -- position_bias = layer_outputs[2]
        position_bias = layer_outputs[3]
        if self.is_decoder and encoder_hidden_states ~= nil then
            -- encoder_decoder_position_bias = layer_outputs[4 if output_attentions else 3]
            encoder_decoder_position_bias = layer_outputs[4]
        end
        -- append next layer key value states
        if use_cache then
            -- present_key_value_states = present_key_value_states + (present_key_value_state,)
            present_key_value_states = concat(present_key_value_states,
                tuple(present_key_value_state))
        end
    end

    hidden_states = self.final_layer_norm(hidden_states)
    hidden_states = self.dropout(hidden_states)

    -- return tuple(v for v in [hidden_states, present_key_value_states, ...] if v is not None)
    return hidden_states, present_key_value_states
end

-- T5PreTrainedModel._init_weights(self, module)
local T5ForConditionalGeneration
local function _init_weights(config, module)
    -- Initialize the weights
    local factor = config.initializer_factor -- Used for testing weights initialization
    -- if isinstance(module, T5LayerNorm):
    if tide.isinstance(module, T5LayerNorm) then
        -- module.weight.data.fill_(factor * 1.0)
        module.weight.data:fill_(factor * 1.0)
    elseif tide.isinstance(module, T5ForConditionalGeneration) then
        -- Mesh TensorFlow embeddings initialization
        -- See https://github.com/tensorflow/mesh/blob/fa19d69eafc9a482aff0b59ddd96b025c0cb207d/
        -- mesh_tensorflow/layers.py#L1624
        -- module.shared.weight.data.normal_(mean=0.0, std=factor * 1.0)
        module.shared.weight.data:normal_(0.0, factor * 1.0)
        -- if hasattr(module, "lm_head") and not self.config.tie_word_embeddings:
        if module.lm_head ~= nil and not config.tie_word_embeddings then
            module.lm_head.weight.data:normal_(0.0, factor * 1.0)
        end
    elseif tide.isinstance(module, T5DenseActDense) then
        -- Mesh TensorFlow FF initialization
        -- module.wi.weight.data.normal_(mean=0.0, std=factor * ((self.config.d_model) ** -0.5))
        module.wi.weight.data:normal_(0.0, factor * config.d_model ^ -0.5)
        -- if hasattr(module.wi, "bias") and module.wi.bias is not None:
        if module.wi.bias ~= nil then
            module.wi.bias.data:zero_()
        end
        module.wo.weight.data:normal_(0.0, factor * config.d_ff ^ -0.5)
        if module.wo.bias ~= nil then
            module.wo.bias.data:zero_()
        end
    elseif tide.isinstance(module, T5DenseGatedActDense) then
        module.wi_0.weight.data:normal_(0.0, factor * config.d_model ^ -0.5)
        if module.wi_0.bias ~= nil then
            module.wi_0.bias.data:zero_()
        end
        module.wi_1.weight.data:normal_(0.0, factor * config.d_model ^ -0.5)
        if module.wi_1.bias ~= nil then
            module.wi_1.bias.data:zero_()
        end
        module.wo.weight.data:normal_(0.0, factor * config.d_ff ^ -0.5)
        if module.wo.bias ~= nil then
            module.wo.bias.data:zero_()
        end
    elseif tide.isinstance(module, T5Attention) then
        -- Mesh TensorFlow attention initialization to avoid scaling before softmax
        -- See https://github.com/tensorflow/mesh/blob/fa19d69eafc9a482aff0b59ddd96b025c0cb207d/
        -- mesh_tensorflow/transformer/attention.py#L136
        local d_model = config.d_model
        local key_value_proj_dim = config.d_kv
        local n_heads = config.num_heads
        -- module.q.weight.data.normal_(mean=0.0,
        --     std=factor * ((d_model * key_value_proj_dim) ** -0.5))
        module.q.weight.data:normal_(0.0, factor * (d_model * key_value_proj_dim) ^ -0.5)
        module.k.weight.data:normal_(0.0, factor * d_model ^ -0.5)
        module.v.weight.data:normal_(0.0, factor * d_model ^ -0.5)
        module.o.weight.data:normal_(0.0, factor * (n_heads * key_value_proj_dim) ^ -0.5)
        if module.has_relative_attention_bias then
            module.relative_attention_bias.weight.data:normal_(0.0, factor * d_model ^ -0.5)
        end
    end
end

-- class T5ForConditionalGeneration(T5PreTrainedModel):
T5ForConditionalGeneration = nn.Module:extend("T5ForConditionalGeneration")
function T5ForConditionalGeneration:init(config)
    self.config = config
    self.model_dim = config.d_model

    self.shared = nn.Embedding(config.vocab_size, config.d_model)

    -- encoder_config = copy.deepcopy(config)
    local encoder_config = copy_config(config)
    encoder_config.is_decoder = false
    encoder_config.use_cache = false
    encoder_config.is_encoder_decoder = false
    self.encoder = T5Stack(encoder_config, self.shared)

    local decoder_config = copy_config(config)
    decoder_config.is_decoder = true
    decoder_config.is_encoder_decoder = false
    decoder_config.num_layers = config.num_decoder_layers
    self.decoder = T5Stack(decoder_config, self.shared)

    -- self.lm_head = nn.Linear(config.d_model, config.vocab_size, bias=False)
    self.lm_head = nn.Linear(config.d_model, config.vocab_size, { bias = false })

    -- Initialize weights and apply final processing
    -- self.post_init()  (init_weights: self.apply(self._init_weights), then tie_weights)
    self:apply(function(module) _init_weights(config, module) end)
    if config.tie_word_embeddings then
        -- output_embeddings.weight = input_embeddings.weight
        self.lm_head.weight = self.shared.weight
    end
end

-- T5PreTrainedModel._shift_right(self, input_ids)
function T5ForConditionalGeneration:_shift_right(input_ids)
    local decoder_start_token_id = self.config.decoder_start_token_id
    local pad_token_id = self.config.pad_token_id

    if decoder_start_token_id == nil then
        error("self.model.config.decoder_start_token_id has to be defined. In T5 it is " ..
            "usually set to the pad_token_id. See T5 docs for more information.")
    end

    -- shift inputs to the right
    -- shifted_input_ids = input_ids.new_zeros(input_ids.shape)
    local shifted_input_ids = input_ids:new_zeros(input_ids.shape)
    -- shifted_input_ids[..., 1:] = input_ids[..., :-1].clone()
    shifted_input_ids[{ "...", { 2, -1 } }] = input_ids[{ "...", { 1, -2 } }]:clone()
    -- shifted_input_ids[..., 0] = decoder_start_token_id
    shifted_input_ids[{ "...", 1 }] = decoder_start_token_id

    if pad_token_id == nil then
        error("self.model.config.pad_token_id has to be defined.")
    end
    -- replace possible -100 values in labels by `pad_token_id`
    -- shifted_input_ids.masked_fill_(shifted_input_ids == -100, pad_token_id)
    shifted_input_ids:masked_fill_(shifted_input_ids:eq(-100), pad_token_id)

    return shifted_input_ids
end

-- def forward(self, input_ids=None, attention_mask=None, decoder_input_ids=None,
--     decoder_attention_mask=None, ..., encoder_outputs=None, past_key_values=None,
--     inputs_embeds=None, decoder_inputs_embeds=None, labels=None, use_cache=None, ...):
-- (returns return_dict=False's (loss, lm_logits, past_key_values, encoder_last_hidden_state))
function T5ForConditionalGeneration:forward(kw)
    local labels, decoder_input_ids = kw.labels, kw.decoder_input_ids
    local use_cache = kw.use_cache
    if use_cache == nil then use_cache = self.config.use_cache end
    local encoder_outputs = kw.encoder_outputs
    -- Encode if needed (training, first prediction pass)
    if encoder_outputs == nil then
        -- Convert encoder inputs in embeddings if needed
        -- encoder_outputs = self.encoder(input_ids=input_ids, attention_mask=attention_mask,
        --     inputs_embeds=inputs_embeds, ...)
        encoder_outputs = tuple(self.encoder(kw.input_ids, {
            attention_mask = kw.attention_mask, inputs_embeds = kw.inputs_embeds }))
    end

    -- hidden_states = encoder_outputs[0]
    local hidden_states = encoder_outputs[1]

    if labels ~= nil and decoder_input_ids == nil and kw.decoder_inputs_embeds == nil then
        -- get decoder inputs from shifting lm labels to the right
        decoder_input_ids = self:_shift_right(labels)
    end

    -- Decode
    -- decoder_outputs = self.decoder(input_ids=decoder_input_ids,
    --     attention_mask=decoder_attention_mask, inputs_embeds=decoder_inputs_embeds,
    --     past_key_values=past_key_values, encoder_hidden_states=hidden_states,
    --     encoder_attention_mask=attention_mask, ..., use_cache=use_cache, ...)
    local sequence_output, presents = self.decoder(decoder_input_ids, {
        attention_mask = kw.decoder_attention_mask, inputs_embeds = kw.decoder_inputs_embeds,
        past_key_values = kw.past_key_values, encoder_hidden_states = hidden_states,
        encoder_attention_mask = kw.attention_mask, use_cache = use_cache })

    if self.config.tie_word_embeddings then
        -- Rescale output before projecting on vocab
        -- See https://github.com/tensorflow/mesh/blob/fa19d69eafc9a482aff0b59ddd96b025c0cb207d/
        -- mesh_tensorflow/transformer/transformer.py#L586
        -- sequence_output = sequence_output * (self.model_dim**-0.5)
        sequence_output = sequence_output * self.model_dim ^ -0.5
    end

    local lm_logits = self.lm_head(sequence_output)

    local loss
    if labels ~= nil then
        -- loss_fct = CrossEntropyLoss(ignore_index=-100)
        local loss_fct = nn.CrossEntropyLoss({ ignore_index = -100 })
        -- move labels to correct device to enable PP
        labels = labels:to(lm_logits.device)
        -- loss = loss_fct(lm_logits.view(-1, lm_logits.size(-1)), labels.view(-1))
        loss = loss_fct(lm_logits:view(-1, lm_logits:size(-1)), labels:view(-1))
    end

    return loss, lm_logits, presents, hidden_states
end

-- generation/utils.py greedy_search's loop (prepare_inputs_for_generation feeds only the last
-- token once past_key_values is set; next_tokens = torch.argmax(next_token_logits, dim=-1))
local function greedy(model, input_ids, attention_mask, steps, cached)
    -- encoder_outputs = self.encoder(input_ids, attention_mask=attention_mask)
    local encoder_outputs = tuple(model.encoder(input_ids, { attention_mask = attention_mask }))
    -- decoder_input_ids = torch.full((batch, 1), decoder_start_token_id)
    local decoder_input_ids = tide.full({ input_ids.shape[1], 1 },
        model.config.decoder_start_token_id, { dtype = tide.long })
    local past, logits
    for _ = 1, steps do
        -- if past is not None: input_ids = input_ids[:, -1:]
        local ids = (cached and past ~= nil) and decoder_input_ids[{ {}, { -1, -1 } }]
            or decoder_input_ids
        local _
        _, logits, past = model({ attention_mask = attention_mask,
            decoder_input_ids = ids, encoder_outputs = encoder_outputs,
            past_key_values = cached and past or nil, use_cache = cached })
        -- next_token_logits = outputs.logits[:, -1, :]
        local next_token_logits = logits[{ {}, -1, {} }]
        -- next_tokens = torch.argmax(next_tokens_scores, dim=-1)
        local next_tokens = tide.argmax(next_token_logits, { dim = -1 })
        -- input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
        decoder_input_ids = tide.cat({ decoder_input_ids, next_tokens[{ {}, tide.newaxis }] }, -1)
    end
    return decoder_input_ids, logits[{ {}, -1, {} }]
end

-- the weights of the PyTorch reference: parameter k (1-based, named_parameters order), element
-- j (0-based, flat) is 0.5 sin(0.7 j + 1.3 k), and 1 + 0.2 of that in a layer_norm's
local set_weights = tide.no_grad()(function(module)
    for k, np in ipairs(module:named_parameters()) do
        local name, p = np[1], np[2]
        local j = tide.arange(p:numel(), { dtype = tide.float64 })
        local v = 0.5 * tide.sin(0.7 * j + 1.3 * k)
        if name:find("layer_norm", 1, true) then v = 1 + 0.2 * v end
        p:copy_(v:view(p.shape):float())
    end
end)

-- PyTorch 1.13 ids are these minus 1 (pad 0 -> 1); -100 stays -100
local input_ids = tide.tensor({ { 4, 8, 13, 6, 10 }, { 5, 29, 2, 1, 1 } })
local attention_mask = tide.tensor({ { 1, 1, 1, 1, 1 }, { 1, 1, 1, 0, 0 } })
local labels = tide.tensor({ { 6, 3, -100, 9 }, { 12, -100, -100, 7 } })

local function flat(t)
    return t:reshape(-1):tolist()
end

describe("transformers v4.30.0 models/t5/modeling_t5.py", function()
    it("_relative_position_bucket: bidirectional and causal buckets match PyTorch", function()
        local rp = tide.arange(-20, 21)
        -- PyTorch 1.13, T5Attention._relative_position_bucket(torch.arange(-20, 21), ..., 8, 16)
        assert.are.same({ 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 1, 0, 5, 6,
            6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7 },
            T5Attention._relative_position_bucket(rp, true, 8, 16):tolist())
        assert.are.same({ 7, 7, 7, 7, 7, 7, 7, 7, 7, 6, 6, 6, 6, 5, 5, 4, 4, 3, 2, 1, 0, 0, 0,
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
            T5Attention._relative_position_bucket(rp, false, 8, 16):tolist())
        -- compute_bias: (1, num_heads, q_len, k_len), each entry the bucket's Embedding row
        local attn = T5Attention(T5Config(), true)
        local bias = attn:compute_bias(3, 5)
        assert.are.same({ 1, 2, 3, 5 }, bias.shape)
        -- position 3 to key 1: relative -2, bidirectional bucket 2 (row 3)
        assert.are.equal(attn.relative_attention_bias.weight[{ 3, 2 }]:item(),
            bias[{ 1, 2, 3, 1 }]:item())
    end)

    it("T5LayerFF with T5DenseActDense (relu) matches PyTorch", function()
        local ff = T5LayerFF(T5Config({ feed_forward_proj = "relu" }))
        assert.is_true(tide.isinstance(ff.DenseReluDense, T5DenseActDense))
        set_weights(ff)
        local x = tide.sin(tide.arange(32, { dtype = tide.float32 })):view(2, 16)
        -- PyTorch 1.13: ff(x.unsqueeze(0))[0, 1, :6]
        assert_close_list({ -1.0745294094085693, 0.7392896413803101, -1.5313013792037964,
            -0.8318618535995483, 2.5977916717529297, 0.266049325466156 },
            ff(x:unsqueeze(1))[{ 1, 2, { 1, 6 } }]:tolist(), 1e-5, "T5LayerFF")
    end)

    it("T5ForConditionalGeneration: encoder output, logits and loss match PyTorch", function()
        local model = T5ForConditionalGeneration(T5Config())
        -- 51 parameters: lm_head.weight and the stacks' embed_tokens are shared.weight
        assert.are.equal(51, #model:named_parameters())
        assert.are.equal(model.shared.weight, model.lm_head.weight)
        assert.is_nil(model.encoder.block[2].layer[1].SelfAttention.relative_attention_bias)
        set_weights(model)
        model:eval()
        -- _shift_right: start token, the -100s become pad
        assert.are.same({ { 1, 6, 3, 1 }, { 1, 12, 1, 1 } }, model:_shift_right(labels):tolist())

        local loss, logits, _, enc = model({ input_ids = input_ids,
            attention_mask = attention_mask, labels = labels })
        -- PyTorch 1.13, the same weights
        assert_close_list({ 1.4349727630615234, -0.5501636266708374, -0.7392253279685974,
            1.3530198335647583, -0.254896342754364, -0.9179964661598206 },
            enc[{ 1, 1, { 1, 6 } }]:tolist(), 1e-4, "encoder[0, 0]")
        assert_close_list({ 1.223486065864563, 0.8819696307182312, -0.29003944993019104,
            1.2934000492095947, 0.4294179379940033, -1.4741877317428589 },
            enc[{ 2, 3, { 1, 6 } }]:tolist(), 1e-4, "encoder[1, 2]")
        assert_close_list({ 8.703146934509277 }, { enc:sum():item() }, 1e-4, "encoder sum")
        assert_close_list({ 0.5792661309242249, 0.9130495190620422, -0.20855912566184998,
            -0.997726559638977, -0.19652757048606873, 0.9179345369338989 },
            logits[{ 1, 2, { 1, 6 } }]:tolist(), 1e-4, "logits[0, 1]")
        assert_close_list({ 0.35996946692466736, 1.127382755279541, 0.09775896370410919,
            -1.0876916646957397, -0.5393723845481873, 0.8687013387680054 },
            logits[{ 2, 4, { 1, 6 } }]:tolist(), 1e-4, "logits[1, 3]")
        assert_close_list({ 9.223482131958008 }, { logits:sum():item() }, 1e-4, "logits sum")
        assert_close_list({ 3.4846572875976562 }, { loss:item() }, 1e-5, "loss")
    end)

    it("greedy decoding with past_key_values equals recomputing the sequence", function()
        local model = T5ForConditionalGeneration(T5Config())
        set_weights(model)
        model:eval()
        tide.no_grad()(function()
            local cached, last_cached = greedy(model, input_ids, attention_mask, 4, true)
            local full, last_full = greedy(model, input_ids, attention_mask, 4, false)
            -- PyTorch 1.13's tokens [[0, 19, 10, 10, 10], [0, 1, 15, 15, 15]], 1-based
            assert.are.same({ { 1, 20, 11, 11, 11 }, { 1, 2, 16, 16, 16 } }, cached:tolist())
            assert.are.same(cached:tolist(), full:tolist())
            assert.is_true(tide.allclose(last_cached, last_full, { atol = 1e-5 }))
            assert_close_list({ 0.47524917125701904, 0.873874306678772, -0.12044768780469894,
                -0.9227772355079651, -0.12661629915237427, 1.1219806671142578,
                0.5821513533592224, -0.8856214880943298 },
                flat(last_cached[{ {}, { 1, 4 } }]), 1e-4, "last step logits")
        end)()
    end)

    it("_init_weights scales each module's normal_; 2 AdamW steps lower the loss", function()
        tide.manual_seed(0)
        local config = T5Config({ d_model = 32, d_ff = 48 })
        local model = T5ForConditionalGeneration(config)
        local att = model.encoder.block[1].layer[1].SelfAttention
        local ff = model.decoder.block[1].layer[3].DenseReluDense
        -- std factor * (d_model * d_kv) ** -0.5 for q, d_model ** -0.5 for k, v and wi_*,
        -- (n_heads * d_kv) ** -0.5 for o, d_ff ** -0.5 for wo, 1 for shared; LayerNorms 1
        for _, c in ipairs({ { att.q.weight, (32 * 4) ^ -0.5 }, { att.k.weight, 32 ^ -0.5 },
            { att.o.weight, 8 ^ -0.5 }, { ff.wi_0.weight, 32 ^ -0.5 },
            { ff.wo.weight, 48 ^ -0.5 }, { model.shared.weight, 1 } }) do
            local std = c[1]:std():item()
            assert.is_true(math.abs(std / c[2] - 1) < 0.25, ("std %g, want %g"):format(std, c[2]))
        end
        assert.are.same(tide.ones(32):tolist(), model.decoder.final_layer_norm.weight:tolist())

        model = T5ForConditionalGeneration(T5Config())
        set_weights(model)
        model:train()
        local optimizer = optim.AdamW(model:parameters(), { lr = 3e-3 })
        local losses = {}
        for step = 1, 3 do
            optimizer:zero_grad()
            local loss = model({ input_ids = input_ids, attention_mask = attention_mask,
                labels = labels })
            losses[step] = loss:item()
            assert_finite(losses[step], "loss")
            if step < 3 then
                loss:backward()
                optimizer:step()
            end
        end
        -- PyTorch 1.13's AdamW(lr=3e-3), dropout_rate 0
        assert_close_list({ 3.4846572875976562, 3.1674346923828125, 3.1633517742156982 },
            losses, 1e-4, "AdamW losses")
        assert.is_true(losses[3] < losses[2] and losses[2] < losses[1])
    end)
end)
