-- ported_scripts78_spec.lua — Hugging Face transformers' src/transformers/models/gpt2/
-- modeling_gpt2.py (the v4.29 release: GPT2Attention with the persistent "bias" / "masked_bias"
-- buffers, _attn, _split_heads/_merge_heads, layer_past and use_cache; GPT2MLP, GPT2Block,
-- GPT2PreTrainedModel._init_weights, GPT2Model.forward's position_ids and attention_mask
-- preparation, GPT2LMHeadModel with the tied lm_head and the shifted loss), with
-- pytorch_utils.py's Conv1D and activations.py's NewGELUActivation ("gelu_new"), ported line
-- for line at tiny sizes (n_embd 16, n_head 2, n_layer 2, vocab 30, n_positions 16). The Python
-- line stands above each Lua line that differs from it. Token ids and position ids are 1-based
-- (Python's id t is tide's t + 1); layer_idx stays 0-based (it names modules).
local tide = require("tide")
local nn = tide.nn
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

---------------------------------------------------------------------------------------------
-- configuration_gpt2.py's GPT2Config (the fields modeling_gpt2.py reads, with their aliases)
---------------------------------------------------------------------------------------------
local function GPT2Config(kw)
    local c = {
        vocab_size = 50257, n_positions = 1024, n_embd = 768, n_layer = 12, n_head = 12,
        n_inner = nil, activation_function = "gelu_new", resid_pdrop = 0.1, embd_pdrop = 0.1,
        attn_pdrop = 0.1, layer_norm_epsilon = 1e-5, initializer_range = 0.02,
        scale_attn_weights = true, use_cache = true, scale_attn_by_inverse_layer_idx = false,
        reorder_and_upcast_attn = false,
    }
    for k, v in pairs(kw) do c[k] = v end
    -- attribute_map = {"hidden_size": "n_embd", "max_position_embeddings": "n_positions", ...}
    c.hidden_size, c.max_position_embeddings = c.n_embd, c.n_positions
    c.num_attention_heads, c.num_hidden_layers = c.n_head, c.n_layer
    return c
end

---------------------------------------------------------------------------------------------
-- activations.py
---------------------------------------------------------------------------------------------
-- class NewGELUActivation(nn.Module):
local NewGELUActivation = nn.Module:extend("NewGELUActivation")
function NewGELUActivation:forward(input)
    -- return 0.5 * input * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (input + 0.044715 *
    --     torch.pow(input, 3.0))))
    return 0.5 * input * (1.0 + tide.tanh(math.sqrt(2.0 / math.pi) * (input + 0.044715 *
        tide.pow(input, 3.0))))
end
-- ACT2FN = ClassInstantier(ACT2CLS)
local ACT2FN = setmetatable({}, { __index = function(_, name)
    assert(name == "gelu_new", name)
    return NewGELUActivation()
end })

---------------------------------------------------------------------------------------------
-- pytorch_utils.py
---------------------------------------------------------------------------------------------
-- class Conv1D(nn.Module):
local Conv1D = nn.Module:extend("Conv1D")
-- def __init__(self, nf, nx):
function Conv1D:init(nf, nx)
    self.nf = nf
    -- w = torch.empty(nx, nf)
    local w = tide.empty(nx, nf)
    -- nn.init.normal_(w, std=0.02)
    nn.init.normal_(w, { std = 0.02 })
    self.weight = nn.Parameter(w)
    self.bias = nn.Parameter(tide.zeros(nf))
end

function Conv1D:forward(x)
    -- size_out = x.size()[:-1] + (self.nf,)
    local size_out = x:size()
    size_out[#size_out] = self.nf
    -- x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
    x = tide.addmm(self.bias, x:view(-1, x:size(-1)), self.weight)
    x = x:view(size_out)
    return x
end

---------------------------------------------------------------------------------------------
-- models/gpt2/modeling_gpt2.py
---------------------------------------------------------------------------------------------
-- class GPT2Attention(nn.Module):
local GPT2Attention = nn.Module:extend("GPT2Attention")
-- def __init__(self, config, is_cross_attention=False, layer_idx=None):
function GPT2Attention:init(config, is_cross_attention, layer_idx)
    local max_positions = config.max_position_embeddings
    -- self.register_buffer("bias", torch.tril(torch.ones((max_positions, max_positions),
    --     dtype=torch.bool)).view(1, 1, max_positions, max_positions))
    self:register_buffer("bias", tide.tril(tide.ones({ max_positions, max_positions },
        { dtype = "bool" })):view(1, 1, max_positions, max_positions))
    self:register_buffer("masked_bias", tide.tensor(-1e4))

    self.embed_dim = config.hidden_size
    self.num_heads = config.num_attention_heads
    -- self.head_dim = self.embed_dim // self.num_heads
    self.head_dim = math.floor(self.embed_dim / self.num_heads)
    self.split_size = self.embed_dim
    if self.head_dim * self.num_heads ~= self.embed_dim then
        error(("`embed_dim` must be divisible by num_heads (got `embed_dim`: %d and " ..
            "`num_heads`: %d)."):format(self.embed_dim, self.num_heads))
    end
    self.scale_attn_weights = config.scale_attn_weights
    self.is_cross_attention = is_cross_attention or false
    self.scale_attn_by_inverse_layer_idx = config.scale_attn_by_inverse_layer_idx
    self.layer_idx = layer_idx
    self.reorder_and_upcast_attn = config.reorder_and_upcast_attn
    -- (is_cross_attention's q_attn and reorder_and_upcast_attn's baddbmm path are not ported)
    assert(not self.is_cross_attention and not self.reorder_and_upcast_attn)
    self.c_attn = Conv1D(3 * self.embed_dim, self.embed_dim)
    self.c_proj = Conv1D(self.embed_dim, self.embed_dim)
    self.attn_dropout = nn.Dropout(config.attn_pdrop)
    self.resid_dropout = nn.Dropout(config.resid_pdrop)
end

function GPT2Attention:_attn(query, key, value, attention_mask, head_mask)
    -- attn_weights = torch.matmul(query, key.transpose(-1, -2))
    local attn_weights = tide.matmul(query, key:transpose(-1, -2))
    if self.scale_attn_weights then
        -- attn_weights = attn_weights / torch.full([], value.size(-1) ** 0.5,
        --     dtype=attn_weights.dtype, device=attn_weights.device)
        attn_weights = attn_weights / tide.full({}, value:size(-1) ^ 0.5,
            { dtype = attn_weights.dtype, device = attn_weights.device })
    end
    if self.scale_attn_by_inverse_layer_idx then
        attn_weights = attn_weights / (self.layer_idx + 1)
    end
    if not self.is_cross_attention then
        -- query_length, key_length = query.size(-2), key.size(-2)
        local query_length, key_length = query:size(-2), key:size(-2)
        -- causal_mask = self.bias[:, :, key_length - query_length : key_length, :key_length]
        local causal_mask = self.bias[{ {}, {}, { key_length - query_length + 1, key_length },
            { 1, key_length } }]
        -- mask_value = torch.finfo(attn_weights.dtype).min
        local mask_value = tide.finfo(attn_weights.dtype).min
        -- mask_value = torch.full([], mask_value, dtype=attn_weights.dtype).to(attn_weights.device)
        mask_value = tide.full({}, mask_value, { dtype = attn_weights.dtype }):to(
            attn_weights.device)
        -- attn_weights = torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value)
        attn_weights = tide.where(causal_mask, attn_weights:to(attn_weights.dtype), mask_value)
    end
    if attention_mask ~= nil then
        attn_weights = attn_weights + attention_mask
    end
    -- attn_weights = nn.functional.softmax(attn_weights, dim=-1)
    attn_weights = nn.functional.softmax(attn_weights, { dim = -1 })
    -- attn_weights = attn_weights.type(value.dtype)
    attn_weights = attn_weights:type(value.dtype)
    attn_weights = self.attn_dropout(attn_weights)
    if head_mask ~= nil then
        attn_weights = attn_weights * head_mask
    end
    local attn_output = tide.matmul(attn_weights, value)
    return attn_output, attn_weights
end

function GPT2Attention:_split_heads(tensor, num_heads, attn_head_size)
    -- new_shape = tensor.size()[:-1] + (num_heads, attn_head_size)
    local new_shape = tensor:size()
    new_shape[#new_shape] = num_heads
    new_shape[#new_shape + 1] = attn_head_size
    tensor = tensor:view(new_shape)
    -- return tensor.permute(0, 2, 1, 3)  # (batch, head, seq_length, head_features)
    return tensor:permute(1, 3, 2, 4)
end

function GPT2Attention:_merge_heads(tensor, num_heads, attn_head_size)
    -- tensor = tensor.permute(0, 2, 1, 3).contiguous()
    tensor = tensor:permute(1, 3, 2, 4):contiguous()
    -- new_shape = tensor.size()[:-2] + (num_heads * attn_head_size,)
    local new_shape = tensor:size()
    new_shape[#new_shape] = nil
    new_shape[#new_shape] = num_heads * attn_head_size
    return tensor:view(new_shape)
end

-- def forward(self, hidden_states, layer_past=None, attention_mask=None, head_mask=None,
--     encoder_hidden_states=None, encoder_attention_mask=None, use_cache=False,
--     output_attentions=False):
function GPT2Attention:forward(hidden_states, kw)
    kw = kw or {}
    -- query, key, value = self.c_attn(hidden_states).split(self.split_size, dim=2)
    local query, key, value = unpack(self.c_attn(hidden_states):split(self.split_size,
        { dim = 3 }))
    query = self:_split_heads(query, self.num_heads, self.head_dim)
    key = self:_split_heads(key, self.num_heads, self.head_dim)
    value = self:_split_heads(value, self.num_heads, self.head_dim)
    if kw.layer_past ~= nil then
        -- past_key, past_value = layer_past
        local past_key, past_value = unpack(kw.layer_past)
        -- key = torch.cat((past_key, key), dim=-2)
        key = tide.cat({ past_key, key }, { dim = -2 })
        value = tide.cat({ past_value, value }, { dim = -2 })
    end
    local present
    if kw.use_cache == true then
        -- present = (key, value)
        present = { key, value }
    end
    local attn_output, attn_weights = self:_attn(query, key, value, kw.attention_mask,
        kw.head_mask)
    attn_output = self:_merge_heads(attn_output, self.num_heads, self.head_dim)
    attn_output = self.c_proj(attn_output)
    attn_output = self.resid_dropout(attn_output)
    -- outputs = (attn_output, present); if output_attentions: outputs += (attn_weights,)
    return attn_output, present, kw.output_attentions and attn_weights or nil
end

-- class GPT2MLP(nn.Module):
local GPT2MLP = nn.Module:extend("GPT2MLP")
function GPT2MLP:init(intermediate_size, config)
    local embed_dim = config.hidden_size
    self.c_fc = Conv1D(intermediate_size, embed_dim)
    self.c_proj = Conv1D(embed_dim, intermediate_size)
    self.act = ACT2FN[config.activation_function]
    self.dropout = nn.Dropout(config.resid_pdrop)
end

function GPT2MLP:forward(hidden_states)
    hidden_states = self.c_fc(hidden_states)
    hidden_states = self.act(hidden_states)
    hidden_states = self.c_proj(hidden_states)
    hidden_states = self.dropout(hidden_states)
    return hidden_states
end

-- class GPT2Block(nn.Module):
local GPT2Block = nn.Module:extend("GPT2Block")
function GPT2Block:init(config, layer_idx)
    local hidden_size = config.hidden_size
    -- inner_dim = config.n_inner if config.n_inner is not None else 4 * hidden_size
    local inner_dim = config.n_inner or 4 * hidden_size
    -- self.ln_1 = nn.LayerNorm(hidden_size, eps=config.layer_norm_epsilon)
    self.ln_1 = nn.LayerNorm(hidden_size, { eps = config.layer_norm_epsilon })
    self.attn = GPT2Attention(config, false, layer_idx)
    self.ln_2 = nn.LayerNorm(hidden_size, { eps = config.layer_norm_epsilon })
    self.mlp = GPT2MLP(inner_dim, config)
end

-- returns hidden_states, present (when use_cache), attentions (when output_attentions)
function GPT2Block:forward(hidden_states, kw)
    kw = kw or {}
    local residual = hidden_states
    hidden_states = self.ln_1(hidden_states)
    -- attn_outputs = self.attn(hidden_states, layer_past=layer_past, ...)
    local attn_output, present, attn_weights = self.attn(hidden_states, {
        layer_past = kw.layer_past, attention_mask = kw.attention_mask,
        head_mask = kw.head_mask, use_cache = kw.use_cache,
        output_attentions = kw.output_attentions })
    -- residual connection
    hidden_states = attn_output + residual
    residual = hidden_states
    hidden_states = self.ln_2(hidden_states)
    local feed_forward_hidden_states = self.mlp(hidden_states)
    -- residual connection
    hidden_states = residual + feed_forward_hidden_states
    -- if use_cache: outputs = (hidden_states,) + outputs
    -- else: outputs = (hidden_states,) + outputs[1:]
    return hidden_states, present, attn_weights
end

-- class GPT2PreTrainedModel(PreTrainedModel):
local GPT2PreTrainedModel = nn.Module:extend("GPT2PreTrainedModel")

-- ModuleUtilsMixin.dtype: the dtype of the module's first floating-point parameter
function GPT2PreTrainedModel:dtype()
    for _, p in self:named_parameters() do
        if p:is_floating_point() then return p.dtype end
    end
end

-- def _init_weights(self, module):
function GPT2PreTrainedModel:_init_weights(module)
    -- if isinstance(module, (nn.Linear, Conv1D)):
    if tide.isinstance(module, { nn.Linear, Conv1D }) then
        -- module.weight.data.normal_(mean=0.0, std=self.config.initializer_range)
        module.weight.data:normal_({ mean = 0.0, std = self.config.initializer_range })
        if module.bias ~= nil then
            module.bias.data:zero_()
        end
    elseif tide.isinstance(module, nn.Embedding) then
        module.weight.data:normal_({ mean = 0.0, std = self.config.initializer_range })
        if module.padding_idx ~= nil then
            module.weight.data[module.padding_idx]:zero_()
        end
    elseif tide.isinstance(module, nn.LayerNorm) then
        module.bias.data:zero_()
        module.weight.data:fill_(1.0)
    end
    -- for name, p in module.named_parameters():
    for name, p in module:named_parameters() do
        if name == "c_proj.weight" then
            -- p.data.normal_(mean=0.0, std=(self.config.initializer_range /
            --     math.sqrt(2 * self.config.n_layer)))
            p.data:normal_({ mean = 0.0, std = (self.config.initializer_range /
                math.sqrt(2 * self.config.n_layer)) })
        end
    end
end

-- PreTrainedModel.post_init -> init_weights: self.apply(self._init_weights), then tie_weights
function GPT2PreTrainedModel:post_init()
    self:apply(function(m) self:_init_weights(m) end)
    if self.tie_weights then self:tie_weights() end
end

-- class GPT2Model(GPT2PreTrainedModel):
local GPT2Model = GPT2PreTrainedModel:extend("GPT2Model")
function GPT2Model:init(config)
    self.config = config
    self.embed_dim = config.hidden_size
    self.wte = nn.Embedding(config.vocab_size, self.embed_dim)
    self.wpe = nn.Embedding(config.max_position_embeddings, self.embed_dim)
    self.drop = nn.Dropout(config.embd_pdrop)
    -- self.h = nn.ModuleList([GPT2Block(config, layer_idx=i)
    --     for i in range(config.num_hidden_layers)])
    local h = {}
    for i = 0, config.num_hidden_layers - 1 do
        h[#h + 1] = GPT2Block(config, i)
    end
    self.h = nn.ModuleList(h)
    self.ln_f = nn.LayerNorm(self.embed_dim, { eps = config.layer_norm_epsilon })
    self:post_init()
end

-- def forward(self, input_ids=None, past_key_values=None, attention_mask=None, ...):
-- returns last_hidden_state, presents (return_dict=False's tuple)
function GPT2Model:forward(input_ids, kw)
    kw = kw or {}
    local use_cache = kw.use_cache
    -- use_cache = use_cache if use_cache is not None else self.config.use_cache
    if use_cache == nil then use_cache = self.config.use_cache end
    -- input_shape = input_ids.size()
    local input_shape = input_ids:size()
    -- input_ids = input_ids.view(-1, input_shape[-1])
    input_ids = input_ids:view(-1, input_shape[#input_shape])
    -- batch_size = input_ids.shape[0]
    local batch_size = input_ids.shape[1]
    local device = input_ids.device
    local past_key_values, past_length = kw.past_key_values, nil
    if past_key_values == nil then
        past_length = 0
        -- past_key_values = tuple([None] * len(self.h))
        past_key_values = {}
    else
        -- past_length = past_key_values[0][0].size(-2)
        past_length = past_key_values[1][1]:size(-2)
    end
    local position_ids = kw.position_ids
    if position_ids == nil then
        -- position_ids = torch.arange(past_length, input_shape[-1] + past_length,
        --     dtype=torch.long, device=device)
        position_ids = tide.arange(past_length + 1, input_shape[#input_shape] + past_length + 1,
            { dtype = "int64", device = device })
        -- position_ids = position_ids.unsqueeze(0).view(-1, input_shape[-1])
        position_ids = position_ids:unsqueeze(1):view(-1, input_shape[#input_shape])
    end
    local attention_mask = kw.attention_mask
    if attention_mask ~= nil then
        if batch_size <= 0 then error("batch_size has to be defined and > 0") end
        attention_mask = attention_mask:view(batch_size, -1)
        -- attention_mask = attention_mask[:, None, None, :]
        attention_mask = attention_mask[{ {}, tide.newaxis, tide.newaxis, {} }]
        -- attention_mask = attention_mask.to(dtype=self.dtype)  # fp16 compatibility
        attention_mask = attention_mask:to({ dtype = self:dtype() })
        -- attention_mask = (1.0 - attention_mask) * torch.finfo(self.dtype).min
        attention_mask = (1.0 - attention_mask) * tide.finfo(self:dtype()).min
    end
    -- head_mask = self.get_head_mask(head_mask, self.config.n_layer): None per layer
    local head_mask = {}
    local inputs_embeds = self.wte(input_ids)
    local position_embeds = self.wpe(position_ids)
    local hidden_states = inputs_embeds + position_embeds
    hidden_states = self.drop(hidden_states)
    -- output_shape = input_shape + (hidden_states.size(-1),)
    local output_shape = { unpack(input_shape) }
    output_shape[#output_shape + 1] = hidden_states:size(-1)
    -- presents = () if use_cache else None
    local presents = use_cache and {} or nil
    -- for i, (block, layer_past) in enumerate(zip(self.h, past_key_values)):
    for i, block in ipairs(self.h) do
        local layer_past = past_key_values[i]
        local present
        hidden_states, present = block(hidden_states, { layer_past = layer_past,
            attention_mask = attention_mask, head_mask = head_mask[i], use_cache = use_cache })
        if use_cache == true then
            -- presents = presents + (outputs[1],)
            presents[#presents + 1] = present
        end
    end
    hidden_states = self.ln_f(hidden_states)
    hidden_states = hidden_states:view(output_shape)
    return hidden_states, presents
end

-- class GPT2LMHeadModel(GPT2PreTrainedModel):
local GPT2LMHeadModel = GPT2PreTrainedModel:extend("GPT2LMHeadModel")
function GPT2LMHeadModel:init(config)
    self.config = config
    self.transformer = GPT2Model(config)
    -- self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
    self.lm_head = nn.Linear(config.n_embd, config.vocab_size, { bias = false })
    self:post_init()
end

-- PreTrainedModel.tie_weights: output_embeddings.weight = input_embeddings.weight
function GPT2LMHeadModel:tie_weights()
    self.lm_head.weight = self.transformer.wte.weight
end

-- returns loss (nil without labels), lm_logits, presents
function GPT2LMHeadModel:forward(input_ids, kw)
    kw = kw or {}
    -- transformer_outputs = self.transformer(input_ids, past_key_values=past_key_values, ...)
    local hidden_states, presents = self.transformer(input_ids, {
        past_key_values = kw.past_key_values, attention_mask = kw.attention_mask,
        position_ids = kw.position_ids, use_cache = kw.use_cache })
    local lm_logits = self.lm_head(hidden_states)
    local loss
    local labels = kw.labels
    if labels ~= nil then
        labels = labels:to(lm_logits.device)
        -- shift_logits = lm_logits[..., :-1, :].contiguous()
        local shift_logits = lm_logits[{ "...", { 1, -2 }, {} }]:contiguous()
        -- shift_labels = labels[..., 1:].contiguous()
        local shift_labels = labels[{ "...", { 2, -1 } }]:contiguous()
        local loss_fct = nn.CrossEntropyLoss()
        -- loss = loss_fct(shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1))
        loss = loss_fct(shift_logits:view(-1, shift_logits:size(-1)), shift_labels:view(-1))
    end
    return loss, lm_logits, presents
end

---------------------------------------------------------------------------------------------
-- the checks
---------------------------------------------------------------------------------------------
local config = GPT2Config({ n_embd = 16, n_head = 2, n_layer = 2, vocab_size = 30,
    n_positions = 16 })

-- every parameter (named_parameters order, the tied weight once) set to
-- 0.6 sin(1.3 i + 0.7 j) cos(0.23 i j) over its flat index j, as the PyTorch reference does
local function set_weights(model)
    local i = 0
    tide.no_grad(function()
        for _, p in model:named_parameters() do
            i = i + 1
            local j = tide.arange(p:numel(), { dtype = "float64" })
            p:copy_((0.6 * tide.sin(1.3 * i + 0.7 * j) * tide.cos(0.23 * i * j)):view(p.shape))
        end
    end)
    return i
end

-- PyTorch 1.13 (the reference in /tmp, the same modeling lines), token ids shifted by 1
local IDS = { { 4, 8, 2, 13, 30, 1 }, { 6, 6, 10, 3, 15, 9 } }
local MASK = { { 1, 1, 1, 1, 1, 1 }, { 0, 0, 1, 1, 1, 1 } }
local WANT = {
    loss = 3.7730088233947754,
    b1_last = { -1.6976357698440552, 0.08589199185371399, 0.5536726117134094,
        -0.14901262521743774, 1.1253384351730347, -1.0905300378799438, -0.9421681761741638,
        1.2352019548416138 },
    b2_last = { -1.6288669109344482, -0.19680501520633698, 0.38831833004951477,
        0.1626611202955246, 1.22042715549469, -1.1057766675949097, -1.089309811592102,
        0.9767876267433167 },
    b2_pos3 = { -0.9929421544075012, -0.6151176691055298, -0.09527113288640976,
        0.08372367173433304, 1.469445824623108, -0.43606874346733093, -1.2947564125061035,
        0.27988776564598083 },
    abs_sum = 264.8819885253906,
    gen = { 4, 8, 2, 30, 24, 30, 24, 24 },
}

local function row(t)
    local out, flat = {}, t:flatten()
    for k = 1, t:numel() do out[k] = flat[k]:item() end
    return out
end

describe("huggingface/transformers models/gpt2/modeling_gpt2.py", function()
    it("Conv1D, gelu_new, _init_weights: c_proj.weight scaled by 1/sqrt(2 n_layer)", function()
        tide.manual_seed(78)
        local conv = Conv1D(5, 3)
        assert.are.same({ 3, 5 }, conv.weight.shape)
        local x = tide.randn(2, 4, 3)
        local y = conv(x)
        assert.are.same({ 2, 4, 5 }, y.shape)
        assert.is_true(tide.allclose(y, x:matmul(conv.weight) + conv.bias, { atol = 1e-6 }))
        -- gelu_new is GELU's tanh approximation
        local g = NewGELUActivation()(x)
        assert.is_true(tide.allclose(g, nn.functional.gelu(x, { approximate = "tanh" }),
            { atol = 1e-6 }))

        local model = GPT2LMHeadModel(config)
        -- lm_head tied to wte: one tensor, counted once
        assert.are.equal(model.transformer.wte.weight, model.lm_head.weight)
        local n = 0
        for _ in model:named_parameters() do n = n + 1 end
        assert.are.equal(28, n)
        local h1 = model.transformer.h[1]
        assert.are.same({ 1, 1, 16, 16 }, h1.attn.bias.shape)
        assert.are.equal("bool", h1.attn.bias.dtype)
        assert.is_true(h1.attn.bias[{ 1, 1, 2, 1 }]:item() and
            not h1.attn.bias[{ 1, 1, 1, 2 }]:item())
        assert.is_true(h1.attn.c_attn.bias:eq(0):all():item())
        assert.is_true(h1.ln_1.weight:eq(1):all():item())
        -- std 0.02 for c_attn (768 draws), 0.01 for the scaled c_proj (2 x (256 + 1024))
        local s_attn = tide.cat({ h1.attn.c_attn.weight:flatten(),
            model.transformer.h[2].attn.c_attn.weight:flatten() }):std():item()
        local s_proj = tide.cat({ h1.attn.c_proj.weight:flatten(), h1.mlp.c_proj.weight:flatten(),
            model.transformer.h[2].mlp.c_proj.weight:flatten() }):std():item()
        assert.is_true(math.abs(s_attn - 0.02) < 0.002, s_attn)
        assert.is_true(math.abs(s_proj - 0.01) < 0.001, s_proj)
    end)

    it("GPT2LMHeadModel against PyTorch: padded attention_mask, shifted loss, cache", function()
        local model = GPT2LMHeadModel(config)
        assert.are.equal(28, set_weights(model))
        model:eval()
        local ids, mask = tide.tensor(IDS), tide.tensor(MASK)
        local loss, logits, presents = model(ids, { attention_mask = mask, labels = ids })
        assert.is_true(ported.close(loss:item(), WANT.loss, 1e-5))
        assert.are.same({ 2, 6, 30 }, logits.shape)
        assert_close_list(WANT.b1_last, row(logits[{ 1, 6, { 1, 8 } }]), 1e-4, "logits[1, 6]")
        assert_close_list(WANT.b2_last, row(logits[{ 2, 6, { 1, 8 } }]), 1e-4, "logits[2, 6]")
        assert_close_list(WANT.b2_pos3, row(logits[{ 2, 3, { 1, 8 } }]), 1e-4, "logits[2, 3]")
        assert.is_true(ported.close(logits:abs():sum():item(), WANT.abs_sum, 1e-4))
        -- the mask matters: unmasked, sequence 2's logits change, sequence 1's do not
        local _, plain = model(ids)
        assert.is_true(tide.allclose(plain[1], logits[1], { atol = 1e-5 }))
        assert.is_false(tide.allclose(plain[2], logits[2], { atol = 1e-3 }))
        -- presents: n_layer (key, value) pairs of (batch, head, seq, head_dim)
        assert.are.equal(2, #presents)
        assert.are.same({ 2, 2, 6, 8 }, presents[1][1].shape)
        assert.are.same({ 2, 2, 6, 8 }, presents[2][2].shape)
        -- use_cache=False: no presents
        local _, _, none = model(ids, { use_cache = false })
        assert.is_nil(none)

        -- greedy generation, token by token with past_key_values
        local out = tide.tensor({ { 4, 8, 2 } })
        local _, lg, past = model(out)
        for _ = 1, 5 do
            -- next_tokens = torch.argmax(next_token_logits, dim=-1)
            local nxt = lg[{ {}, -1, {} }]:argmax({ dim = -1, keepdim = true })
            out = tide.cat({ out, nxt }, { dim = 2 })
            _, lg, past = model(nxt, { past_key_values = past })
        end
        assert.are.same(WANT.gen, row(out))
        assert.are.same({ 1, 2, 8, 8 }, past[1][1].shape)
        -- recomputing the whole sequence gives the cached step's logits and the same tokens
        local _, full = model(out)
        assert.is_true(tide.allclose(full[{ {}, -1, {} }], lg[{ {}, -1, {} }], { atol = 1e-5 }))
        local again = tide.tensor({ { 4, 8, 2 } })
        for _ = 1, 5 do
            local _, l = model(again, { use_cache = false })
            local nxt = l[{ {}, -1, {} }]:argmax({ dim = -1, keepdim = true })
            again = tide.cat({ again, nxt }, { dim = 2 })
        end
        assert.is_true(tide.equal(out, again))
    end)

    it("two AdamW steps on random tokens: the loss falls", function()
        tide.manual_seed(7)
        local model = GPT2LMHeadModel(config)
        local ids = tide.randint(1, 31, { 4, 8 })
        local optimizer = optim.AdamW(model:parameters(), { lr = 1e-2 })
        model:eval()
        local before = tide.no_grad(function() return (model(ids, { labels = ids })) end):item()
        assert_finite(before)
        model:train()
        for _ = 1, 2 do
            optimizer:zero_grad()
            local loss = model(ids, { labels = ids })
            assert_finite(loss:item())
            loss:backward()
            optimizer:step()
        end
        -- the tied weight got gradients from the embedding and the head, and moved
        assert.is_not_nil(model.transformer.wte.weight.grad)
        model:eval()
        local after = tide.no_grad(function() return (model(ids, { labels = ids })) end):item()
        assert_finite(after)
        assert.is_true(after < before - 0.05, before .. " -> " .. after)
    end)
end)
