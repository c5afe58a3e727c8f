-- ported_scripts190_spec.lua — huggingface/transformers src/transformers/models/t5/modeling_t5.py
-- (v4.46.3): T5LayerNorm (RMS norm without mean, variance in float32), T5DenseActDense and
-- T5DenseGatedActDense (gelu_new, activations.py's NewGELUActivation), T5Attention with
-- _relative_position_bucket (bidirectional and causal), compute_bias and the forward without
-- past key values (position_bias plus the mask added to the scores, softmax in float32, dropout
-- off in eval), T5LayerSelfAttention and T5LayerFF (pre-norm residuals) and an encoder T5Block
-- (self-attention + FF), ported line for line at tiny sizes (d_model 8, d_kv 4, num_heads 2,
-- d_ff 16, 8 buckets, max_distance 16, seq 5, batch 2). The attention mask is T5Stack's
-- encoder one, (1 - mask)[:, None, None, :] * finfo(float32).min, padding the last position of
-- the second sequence. Checked against PyTorch 1.13 running transformers 4.46.3's own classes
-- with the same weights (a formula over each parameter's index in named_parameters order):
-- buckets, bias, each layer's output, the block's, and the gradients of sum(out * w) with
-- respect to the input and relative_attention_bias.weight. The Python line stands above each
-- Lua line that differs from it. Bucket ids stay 0-based as T5's (they are relative positions);
-- they become 1-based (+ 1) only where they index the nn.Embedding table.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list

-- ACT2FN["gelu_new"]: NewGELUActivation
-- return 0.5 * input * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (input + 0.044715 *
--     torch.pow(input, 3.0))))
local function gelu_new(input)
    return 0.5 * input * (1.0 + tide.tanh(math.sqrt(2.0 / math.pi) * (input + 0.044715 *
        tide.pow(input, 3.0))))
end
local ACT2FN = { gelu_new = gelu_new }

-- class T5LayerNorm(nn.Module):
local T5LayerNorm = nn.Module:extend("T5LayerNorm")
-- def __init__(self, hidden_size, eps=1e-6):
function T5LayerNorm:init(hidden_size, eps)
    -- self.weight = nn.Parameter(torch.ones(hidden_size))
    self.weight = nn.Parameter(tide.ones(hidden_size))
    self.variance_epsilon = eps or 1e-6
end
function T5LayerNorm:forward(hidden_states)
    -- variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
    local variance = hidden_states:to("float32"):pow(2):mean(-1, { keepdim = true })
    -- hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
    hidden_states = hidden_states * tide.rsqrt(variance + self.variance_epsilon)
    -- if self.weight.dtype in [torch.float16, torch.bfloat16]:
    if self.weight.dtype == "float16" or self.weight.dtype == "bfloat16" then
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
    self.act = ACT2FN[config.dense_act_fn]
end
function T5DenseActDense:forward(hidden_states)
    hidden_states = self.wi(hidden_states)
    hidden_states = self.act(hidden_states)
    hidden_states = self.dropout(hidden_states)
    -- if (isinstance(self.wo.weight, torch.Tensor) and hidden_states.dtype != self.wo.weight.dtype
    --         and self.wo.weight.dtype != torch.int8):
    if hidden_states.dtype ~= self.wo.weight.dtype and self.wo.weight.dtype ~= "int8" then
        hidden_states = hidden_states:to(self.wo.weight.dtype)
    end
    hidden_states = self.wo(hidden_states)
    return hidden_states
end

-- class T5DenseGatedActDense(nn.Module):
local T5DenseGatedActDense = nn.Module:extend("T5DenseGatedActDense")
function T5DenseGatedActDense:init(config)
    -- self.wi_0 = nn.Linear(config.d_model, config.d_ff, bias=False)
    self.wi_0 = nn.Linear(config.d_model, config.d_ff, { bias = false })
    self.wi_1 = nn.Linear(config.d_model, config.d_ff, { bias = false })
    self.wo = nn.Linear(config.d_ff, config.d_model, { bias = false })
    self.dropout = nn.Dropout(config.dropout_rate)
    self.act = ACT2FN[config.dense_act_fn]
end
function T5DenseGatedActDense:forward(hidden_states)
    local hidden_gelu = self.act(self.wi_0(hidden_states))
    local hidden_linear = self.wi_1(hidden_states)
    hidden_states = hidden_gelu * hidden_linear
    hidden_states = self.dropout(hidden_states)
    if hidden_states.dtype ~= self.wo.weight.dtype and self.wo.weight.dtype ~= "int8" then
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
    -- self.layer_norm = T5LayerNorm(config.d_model, eps=config.layer_norm_epsilon)
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
-- def __init__(self, config, has_relative_attention_bias=False, layer_idx=None):
function T5Attention:init(config, has_relative_attention_bias, layer_idx)
    self.is_decoder = config.is_decoder
    self.has_relative_attention_bias = has_relative_attention_bias or false
    self.relative_attention_num_buckets = config.relative_attention_num_buckets
    self.relative_attention_max_distance = config.relative_attention_max_distance
    self.d_model = config.d_model
    self.key_value_proj_dim = config.d_kv
    self.n_heads = config.num_heads
    self.dropout = config.dropout_rate
    self.inner_dim = self.n_heads * self.key_value_proj_dim
    self.layer_idx = layer_idx
    -- self.q = nn.Linear(self.d_model, self.inner_dim, bias=False)
    self.q = nn.Linear(self.d_model, self.inner_dim, { bias = false })
    self.k = nn.Linear(self.d_model, self.inner_dim, { bias = false })
    self.v = nn.Linear(self.d_model, self.inner_dim, { bias = false })
    self.o = nn.Linear(self.inner_dim, self.d_model, { bias = false })
    if self.has_relative_attention_bias then
        self.relative_attention_bias = nn.Embedding(self.relative_attention_num_buckets,
            self.n_heads)
    end
    self.pruned_heads = {}
    self.gradient_checkpointing = false
end

-- @staticmethod
-- def _relative_position_bucket(relative_position, bidirectional=True, num_buckets=32,
--         max_distance=128):
function T5Attention._relative_position_bucket(relative_position, bidirectional, num_buckets,
        max_distance)
    if bidirectional == nil then bidirectional = true end
    num_buckets, max_distance = num_buckets or 32, max_distance or 128
    local relative_buckets = 0
    if bidirectional then
        -- num_buckets //= 2
        num_buckets = math.floor(num_buckets / 2)
        -- relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_buckets = relative_buckets + relative_position:gt(0):to("int64") * num_buckets
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
    ):to("int64")
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

-- def compute_bias(self, query_length, key_length, device=None, cache_position=None):
function T5Attention:compute_bias(query_length, key_length, device, cache_position)
    if device == nil then
        device = self.relative_attention_bias.weight.device
    end
    local context_position
    if cache_position == nil then
        -- context_position = torch.arange(query_length, dtype=torch.long, device=device)[:, None]
        context_position = tide.arange(query_length, { dtype = "int64", device = device })
            [{ {}, tide.newaxis }]
    else
        -- context_position = cache_position[:, None].to(device)
        context_position = cache_position[{ {}, tide.newaxis }]:to(device)
    end
    -- memory_position = torch.arange(key_length, dtype=torch.long, device=device)[None, :]
    local memory_position = tide.arange(key_length, { dtype = "int64", device = device })
        [{ tide.newaxis, {} }]
    local relative_position = memory_position - context_position -- (query_length, key_length)
    -- relative_position_bucket = self._relative_position_bucket(relative_position,
    --     bidirectional=(not self.is_decoder), num_buckets=self.relative_attention_num_buckets,
    --     max_distance=self.relative_attention_max_distance)
    local relative_position_bucket = self._relative_position_bucket(relative_position,
        not self.is_decoder, self.relative_attention_num_buckets,
        self.relative_attention_max_distance)
    -- values = self.relative_attention_bias(relative_position_bucket)
    -- (bucket ids are 0-based; tide's nn.Embedding takes 1-based rows)
    local values = self.relative_attention_bias(relative_position_bucket + 1)
    -- values = values.permute([2, 0, 1]).unsqueeze(0)  # (1, num_heads, query_length, key_length)
    values = values:permute({ 3, 1, 2 }):unsqueeze(1)
    return values
end

-- def forward(self, hidden_states, mask=None, key_value_states=None, position_bias=None,
--         past_key_value=None, layer_head_mask=None, query_length=None, use_cache=False,
--         output_attentions=False, cache_position=None):
-- (the port keeps the path without past_key_value, Hugging Face's Cache classes, and without
-- pruned heads, which this check does not use; the keyword arguments are an options table)
function T5Attention:forward(hidden_states, opts)
    opts = opts or {}
    local mask, key_value_states, position_bias = opts.mask, opts.key_value_states,
        opts.position_bias
    local layer_head_mask, query_length = opts.layer_head_mask, opts.query_length
    local output_attentions, cache_position = opts.output_attentions, opts.cache_position
    -- batch_size, seq_length = hidden_states.shape[:2]
    local batch_size, seq_length = hidden_states:size(1), hidden_states:size(2)

    local is_cross_attention = key_value_states ~= nil

    local query_states = self.q(hidden_states)
    -- query_states = query_states.view(batch_size, -1, self.n_heads,
    --     self.key_value_proj_dim).transpose(1, 2)
    query_states = query_states:view(batch_size, -1, self.n_heads, self.key_value_proj_dim)
        :transpose(2, 3)

    -- current_states = key_value_states if is_cross_attention else hidden_states
    local current_states = is_cross_attention and key_value_states or hidden_states
    local key_states = self.k(current_states)
    local value_states = self.v(current_states)
    key_states = key_states:view(batch_size, -1, self.n_heads, self.key_value_proj_dim)
        :transpose(2, 3)
    value_states = value_states:view(batch_size, -1, self.n_heads, self.key_value_proj_dim)
        :transpose(2, 3)

    -- scores = torch.matmul(query_states, key_states.transpose(3, 2))
    local scores = tide.matmul(query_states, key_states:transpose(4, 3))

    if position_bias == nil then
        -- key_length = key_states.shape[-2]
        local key_length = key_states:size(-2)
        -- real_seq_length = query_length if query_length is not None else cache_position[-1] + 1
        local real_seq_length = query_length or cache_position[-1]:item() + 1
        if not self.has_relative_attention_bias then
            -- position_bias = torch.zeros((1, self.n_heads, seq_length, key_length),
            --     device=scores.device, dtype=scores.dtype)
            position_bias = tide.zeros({ 1, self.n_heads, seq_length, key_length },
                { device = scores.device, dtype = scores.dtype })
            if self.gradient_checkpointing and self.training then
                position_bias.requires_grad = true
            end
        else
            position_bias = self:compute_bias(real_seq_length, key_length, scores.device,
                cache_position)
            -- position_bias = position_bias[:, :, -seq_length:, :]
            position_bias = position_bias[{ {}, {}, { -seq_length, -1 }, {} }]
        end

        if mask ~= nil then
            -- causal_mask = mask[:, :, :, : key_states.shape[-2]]
            local causal_mask = mask[{ {}, {}, {}, { 1, key_states:size(-2) } }]
            position_bias = position_bias + causal_mask
        end
    end
    local position_bias_masked = position_bias

    -- scores += position_bias_masked
    scores = scores + position_bias_masked

    -- attn_weights = nn.functional.softmax(scores.float(), dim=-1).type_as(scores)
    local attn_weights = F.softmax(scores:float(), { dim = -1 }):type_as(scores)
    -- attn_weights = nn.functional.dropout(attn_weights, p=self.dropout, training=self.training)
    attn_weights = F.dropout(attn_weights, { p = self.dropout, training = self.training })

    if layer_head_mask ~= nil then
        attn_weights = attn_weights * layer_head_mask
    end

    local attn_output = tide.matmul(attn_weights, value_states)

    -- attn_output = attn_output.transpose(1, 2).contiguous()
    attn_output = attn_output:transpose(2, 3):contiguous()
    attn_output = attn_output:view(batch_size, -1, self.inner_dim)
    attn_output = self.o(attn_output)

    -- outputs = (attn_output, past_key_value, position_bias)
    local outputs = { attn_output, false, position_bias }

    if output_attentions then
        outputs[#outputs + 1] = attn_weights
    end
    return outputs
end

-- class T5LayerSelfAttention(nn.Module):
local T5LayerSelfAttention = nn.Module:extend("T5LayerSelfAttention")
function T5LayerSelfAttention:init(config, has_relative_attention_bias, layer_idx)
    self.SelfAttention = T5Attention(config, has_relative_attention_bias, layer_idx)
    self.layer_norm = T5LayerNorm(config.d_model, config.layer_norm_epsilon)
    self.dropout = nn.Dropout(config.dropout_rate)
end
function T5LayerSelfAttention:forward(hidden_states, opts)
    opts = opts or {}
    local normed_hidden_states = self.layer_norm(hidden_states)
    -- attention_output = self.SelfAttention(normed_hidden_states, mask=attention_mask,
    --     position_bias=position_bias, ..., cache_position=cache_position)
    local attention_output = self.SelfAttention(normed_hidden_states, {
        mask = opts.attention_mask, position_bias = opts.position_bias,
        layer_head_mask = opts.layer_head_mask, output_attentions = opts.output_attentions,
        cache_position = opts.cache_position })
    -- hidden_states = hidden_states + self.dropout(attention_output[0])
    hidden_states = hidden_states + self.dropout(attention_output[1])
    -- outputs = (hidden_states,) + attention_output[1:]
    local outputs = { hidden_states }
    for i = 2, #attention_output do outputs[#outputs + 1] = attention_output[i] end
    return outputs
end

-- class T5Block(nn.Module):  (the encoder's: no cross-attention layer)
local T5Block = nn.Module:extend("T5Block")
function T5Block:init(config, has_relative_attention_bias, layer_idx)
    self.is_decoder = config.is_decoder
    -- (the decoder's T5LayerCrossAttention is not ported: an encoder block)
    assert(not self.is_decoder, "the port has no T5LayerCrossAttention")
    -- self.layer = nn.ModuleList(); self.layer.append(T5LayerSelfAttention(...))
    self.layer = nn.ModuleList()
    self.layer:append(T5LayerSelfAttention(config, has_relative_attention_bias, layer_idx))
    self.layer:append(T5LayerFF(config))
end
function T5Block:forward(hidden_states, opts)
    opts = opts or {}
    -- self_attention_outputs = self.layer[0](hidden_states, attention_mask=attention_mask, ...)
    local self_attention_outputs = self.layer[1](hidden_states, {
        attention_mask = opts.attention_mask, position_bias = opts.position_bias,
        layer_head_mask = opts.layer_head_mask, output_attentions = opts.output_attentions,
        cache_position = opts.cache_position })
    -- hidden_states, past_key_value = self_attention_outputs[:2]
    hidden_states = self_attention_outputs[1]
    -- attention_outputs = self_attention_outputs[2:]
    local attention_outputs = {}
    for i = 3, #self_attention_outputs do
        attention_outputs[#attention_outputs + 1] = self_attention_outputs[i]
    end

    -- clamp inf values to enable fp16 training
    if hidden_states.dtype == "float16" then
        -- clamp_value = torch.where(torch.isinf(hidden_states).any(),
        --     torch.finfo(hidden_states.dtype).max - 1000, torch.finfo(hidden_states.dtype).max)
        local fmax = tide.finfo(hidden_states.dtype).max
        local clamp_value = tide.isinf(hidden_states):any():item() and fmax - 1000 or fmax
        hidden_states = tide.clamp(hidden_states, -clamp_value, clamp_value)
    end

    -- hidden_states = self.layer[-1](hidden_states)
    hidden_states = self.layer[#self.layer](hidden_states)

    -- outputs = (hidden_states,) + attention_outputs  (use_cache False)
    local outputs = { hidden_states }
    for _, a in ipairs(attention_outputs) do outputs[#outputs + 1] = a end
    return outputs
end

---------------------------------------------------------------------------------------------
-- the check against PyTorch 1.13 + transformers 4.46.3 (/tmp script: T5Config(d_model=8,
-- d_kv=4, num_heads=2, d_ff=16, relative_attention_num_buckets=8,
-- relative_attention_max_distance=16, feed_forward_proj="gated-gelu", dropout_rate=0.1), eval)
---------------------------------------------------------------------------------------------
local function config(over)
    local c = { d_model = 8, d_kv = 4, num_heads = 2, d_ff = 16,
        relative_attention_num_buckets = 8, relative_attention_max_distance = 16,
        dropout_rate = 0.1, layer_norm_epsilon = 1e-6, is_decoder = false,
        is_gated_act = true, dense_act_fn = "gelu_new" }
    for k, v in pairs(over or {}) do c[k] = v end
    return c
end

-- with torch.no_grad(): for i, (n, p) in enumerate(net.named_parameters()):
--     p.copy_((0.3 * torch.sin(0.37 * j + 1.1 * (i + 1))).view(p.shape))
local function fill(net)
    local names = {}
    tide.no_grad(function()
        for i, pair in ipairs(net:named_parameters()) do
            local p = pair[2]
            local v = {}
            for j = 0, p:numel() - 1 do v[j + 1] = 0.3 * math.sin(0.37 * j + 1.1 * i) end
            p:copy_(tide.tensor(v):view(p:size()))
            names[i] = pair[1]
        end
    end)
    return names
end

-- torch.sin(0.13 * j + ph).float().view(*shape)
local function inp(shape, ph)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    local v = {}
    for j = 0, n - 1 do v[j + 1] = math.sin(0.13 * j + ph) end
    return tide.tensor(v):view(shape)
end

-- the flat values of a tensor
local function flat(t)
    local f = t:detach():reshape(-1):to("float64")
    local out = {}
    for i = 1, f:numel() do out[i] = f[i]:item() end
    return out
end

-- shape, sum, sum of squares and four entries (first, 8th, middle, last), as the reference prints
local function check(t, shape, want, tol, what)
    assert.same(shape, t:size())
    local f = t:detach():reshape(-1):to("float64")
    local n = f:numel()
    local got = { f:sum():item(), (f * f):sum():item(), f[1]:item(), f[8]:item(),
        f[math.floor(n / 2) + 1]:item(), f[n]:item() }
    assert_close_list(want, got, tol, what)
end

local x = inp({ 2, 5, 8 }, 0.4)
local w = inp({ 2, 5, 8 }, 1.7)
-- cache_position = torch.arange(5)  (T5Stack's, past_key_values_length 0)
local cache_position = tide.arange(5, { dtype = "int64" })
-- attention_mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 1, 0]])
local attention_mask = tide.tensor({ { 1, 1, 1, 1, 1 }, { 1, 1, 1, 1, 0 } }, { dtype = "int64" })
-- causal_mask = attention_mask[:, None, None, :].to(dtype=inputs_embeds.dtype)
local causal_mask = attention_mask[{ {}, tide.newaxis, tide.newaxis, {} }]:to("float32")
-- causal_mask = (1.0 - causal_mask) * torch.finfo(inputs_embeds.dtype).min
causal_mask = (1.0 - causal_mask) * tide.finfo("float32").min

-- the bias tensor, (1, 2, 5, 5), PyTorch's
local BIAS = { -0.2116620988, 0.06686697155, -0.1478184164, -0.1478184164, -0.1478184164,
    -0.01295156591, -0.2116620988, 0.06686697155, -0.1478184164, -0.1478184164, 0.1925334483,
    -0.01295156591, -0.2116620988, 0.06686697155, -0.1478184164, 0.1925334483, 0.1925334483,
    -0.01295156591, -0.2116620988, 0.06686697155, 0.1925334483, 0.1925334483, 0.1925334483,
    -0.01295156591, -0.2116620988, -0.1204585806, -0.04341363907, -0.2322166711, -0.2322166711,
    -0.2322166711, 0.09630838782, -0.1204585806, -0.04341363907, -0.2322166711, -0.2322166711,
    0.2627000213, 0.09630838782, -0.1204585806, -0.04341363907, -0.2322166711, 0.2627000213,
    0.2627000213, 0.09630838782, -0.1204585806, -0.04341363907, 0.2627000213, 0.2627000213,
    0.2627000213, 0.09630838782, -0.1204585806 }

describe("ported_scripts190: transformers T5 relative position bias vs PyTorch 1.13", function()
    it("_relative_position_bucket gives T5's 0-based buckets, bidirectional and causal", function()
        -- rp = torch.arange(-20, 21)
        local rp = tide.arange(-20, 21, { dtype = "int64" })
        local bid = T5Attention._relative_position_bucket(rp, true, 8, 16)
        assert.equal("int64", bid.dtype)
        assert.same({ 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 1, 0, 5, 6, 6, 6,
            6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7 }, bid:tolist())
        local causal = T5Attention._relative_position_bucket(rp, false, 8, 16)
        assert.same({ 7, 7, 7, 7, 7, 7, 7, 7, 7, 6, 6, 6, 6, 5, 5, 4, 4, 3, 2, 1, 0, 0, 0, 0, 0,
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, causal:tolist())
        -- compute_bias's relative_position = memory_position - context_position, seq 5
        local rel = tide.arange(5)[{ tide.newaxis, {} }] - tide.arange(5)[{ {}, tide.newaxis }]
        assert.same({ { 0, 5, 6, 6, 6 }, { 1, 0, 5, 6, 6 }, { 2, 1, 0, 5, 6 }, { 2, 2, 1, 0, 5 },
            { 2, 2, 2, 1, 0 } }, T5Attention._relative_position_bucket(rel, true, 8, 16):tolist())
        assert.same({ { 0, 0, 0, 0, 0 }, { 1, 0, 0, 0, 0 }, { 2, 1, 0, 0, 0 }, { 3, 2, 1, 0, 0 },
            { 4, 3, 2, 1, 0 } }, T5Attention._relative_position_bucket(rel, false, 8, 16):tolist())
    end)

    it("T5Block: names, bias, each layer, the block and the gradients match", function()
        -- blk = T5Block(cfg, has_relative_attention_bias=True).eval()
        local blk = T5Block(config(), true):eval()
        -- PyTorch's order; a ModuleList names its children "1".."n" in tide (docs/API.md),
        -- where PyTorch writes layer.0 / layer.1 (nn.utils.state_dict_from_torch shifts them)
        assert.same({ "layer.1.SelfAttention.q.weight", "layer.1.SelfAttention.k.weight",
            "layer.1.SelfAttention.v.weight", "layer.1.SelfAttention.o.weight",
            "layer.1.SelfAttention.relative_attention_bias.weight", "layer.1.layer_norm.weight",
            "layer.2.DenseReluDense.wi_0.weight", "layer.2.DenseReluDense.wi_1.weight",
            "layer.2.DenseReluDense.wo.weight", "layer.2.layer_norm.weight" }, fill(blk))
        local att = blk.layer[1].SelfAttention
        -- bias = att.compute_bias(5, 5)
        local bias = att:compute_bias(5, 5)
        assert.same({ 1, 2, 5, 5 }, bias:size())
        assert_close_list(BIAS, flat(bias), 1e-6, "bias")

        local xr = x:clone():requires_grad_(true)
        check(blk.layer[1].layer_norm(xr), { 2, 5, 8 }, { 2.706582793, 3.541031529,
            0.04873663932, 0.09029089659, -0.1657098681, -0.09313759953 }, 1e-5, "layer_norm")
        -- sa = blk.layer[0](xr, attention_mask=cm, cache_position=torch.arange(5))
        local sa = blk.layer[1](xr, { attention_mask = causal_mask,
            cache_position = cache_position })
        check(sa[1], { 2, 5, 8 }, { 9.369862857, 40.25662179, 0.3999688327, 0.9537728429,
            -0.6015748978, -0.9330103397 }, 1e-5, "T5LayerSelfAttention")
        -- the returned position_bias: the bias plus the mask, (2, 2, 5, 5)
        local pb = sa[3]
        assert.same({ 2, 2, 5, 5 }, pb:size())
        assert_close_list(BIAS, flat(pb[1]), 1e-6, "position_bias[0]")
        local last = flat(pb[{ 2, {}, {}, 5 }])
        for i = 1, #last do assert(last[i] <= -3.4e38, "masked key " .. last[i]) end
        assert_close_list(flat(bias[{ 1, {}, {}, { 1, 4 } }]), flat(pb[{ 2, {}, {}, { 1, 4 } }]),
            1e-6, "position_bias[1, ..., :4]")
        -- ff = blk.layer[1](sa[0])
        check(blk.layer[2](sa[1]), { 2, 5, 8 }, { 8.076680839, 39.75418817, 0.3521486521,
            1.00320065, -0.6534085274, -0.8844373226 }, 1e-5, "T5LayerFF")

        -- out = blk(xr, attention_mask=cm, cache_position=torch.arange(5))
        local out = blk(xr, { attention_mask = causal_mask, cache_position = cache_position })
        check(out[1], { 2, 5, 8 }, { 8.076680839, 39.75418817, 0.3521486521, 1.00320065,
            -0.6534085274, -0.8844373226 }, 1e-5, "T5Block")
        assert.same({ 2, 2, 5, 5 }, out[2]:size())
        -- (out[0] * w).sum().backward()
        local loss = (out[1] * w):sum()
        loss:backward()
        check(xr.grad, { 2, 5, 8 }, { -7.749836044, 41.71720187, 0.9488213658, 0.5659462214,
            0.4764371812, -0.4933758676 }, 1e-5, "input grad")
        -- buckets 3 and 4 (0-based; rows 4-5 here) are not used at seq 5: zero gradient
        assert_close_list({ -0.003815503092, 0.02406101488, -0.02637131698, 0.01852494478,
            -0.009611153975, -0.0188393984, 0, 0, 0, 0, 0.03572516888, -0.006426076405,
            0.00407280447, -0.01732048765, 0, 0 }, flat(att.relative_attention_bias.weight.grad),
            1e-5, "relative_attention_bias grad")
    end)

    it("T5LayerFF with T5DenseActDense (gelu_new) matches", function()
        -- cfg2 = T5Config(..., feed_forward_proj="relu"); cfg2.dense_act_fn = "gelu_new"
        local ffl = T5LayerFF(config({ is_gated_act = false })):eval()
        assert.same({ "DenseReluDense.wi.weight", "DenseReluDense.wo.weight",
            "layer_norm.weight" }, fill(ffl))
        check(ffl(x), { 2, 5, 8 }, { 10.06347445, 39.64382895, 0.2989352047, 1.052280307,
            -0.585991025, -0.8839051127 }, 1e-5, "T5DenseActDense")
    end)

    it("a decoder T5Attention (causal buckets) matches", function()
        -- a3 = T5Attention(cfg3 (is_decoder=True), has_relative_attention_bias=True, layer_idx=0)
        local a3 = T5Attention(config({ is_decoder = true }), true, 0):eval()
        fill(a3)
        assert_close_list({ -0.2116620988, -0.2116620988, -0.2116620988, -0.2116620988,
            -0.2116620988, -0.01295156591, -0.2116620988, -0.2116620988, -0.2116620988,
            -0.2116620988, 0.1925334483, -0.01295156591, -0.2116620988, -0.2116620988,
            -0.2116620988, 0.2973113656, 0.1925334483, -0.01295156591, -0.2116620988,
            -0.2116620988, 0.2465767413, 0.2973113656, 0.1925334483, -0.01295156591,
            -0.2116620988, -0.1204585806, -0.1204585806, -0.1204585806, -0.1204585806,
            -0.1204585806, 0.09630838782, -0.1204585806, -0.1204585806, -0.1204585806,
            -0.1204585806, 0.2627000213, 0.09630838782, -0.1204585806, -0.1204585806,
            -0.1204585806, 0.2916830182, 0.2627000213, 0.09630838782, -0.1204585806,
            -0.1204585806, 0.1680974513, 0.2916830182, 0.2627000213, 0.09630838782,
            -0.1204585806 }, flat(a3:compute_bias(5, 5)), 1e-6, "causal bias")
        -- o3 = a3(x, cache_position=torch.arange(5))
        local o3 = a3(x, { cache_position = cache_position })
        check(o3[1], { 2, 5, 8 }, { 0.1283026608, 1.702331449, 0.08146203309, -0.1830545813,
            0.02533317357, 0.1315174699 }, 1e-5, "decoder T5Attention")
    end)
end)
