-- ported_scripts193_spec.lua — huggingface/transformers v4.46
-- src/transformers/models/llama/modeling_llama.py (LlamaRMSNorm with its float32 variance,
-- LlamaRotaryEmbedding's default rope_type through modeling_rope_utils.py's
-- _compute_default_rope_parameters, rotate_half, apply_rotary_pos_emb, LlamaMLP with the silu
-- gate, repeat_kv, LlamaAttention's eager forward with grouped-query attention, one
-- LlamaDecoderLayer with pre-norm residuals, and LlamaModel's
-- _prepare_4d_causal_attention_mask_with_cache_position for a causal mask with a padded last
-- position in the second sequence), ported line for line at tiny sizes (hidden 16, heads 4,
-- key_value_heads 2, head_dim 4, intermediate 24, seq 6, batch 2). Every value is checked
-- against transformers 4.46.3 on PyTorch 1.13 with the same weights (formulas over each
-- parameter's flat index) on fixed inputs. The Python line stands above each Lua line that
-- differs from it. Dims are 1-based; positions (cache_position, position_ids) stay the
-- model's 0-based values, since they are numbers fed to the rotary frequencies, not indices.
-- The pretraining_tp > 1 branches, the KV cache and the dynamic rope types are not ported.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list

-- LlamaConfig(hidden_size=16, num_attention_heads=4, num_key_value_heads=2,
--             intermediate_size=24, rms_norm_eps=1e-6, max_position_embeddings=32)
local config = {
    hidden_size = 16, num_attention_heads = 4, num_key_value_heads = 2, intermediate_size = 24,
    rms_norm_eps = 1e-6, max_position_embeddings = 32, rope_theta = 10000.0,
    attention_dropout = 0.0, attention_bias = false, mlp_bias = false, hidden_act = "silu",
}

-- ACT2FN = ClassInstantier(ACT2CLS)  (activations.py; "silu" is nn.SiLU)
local ACT2FN = { silu = nn.SiLU() }

-- modeling_rope_utils.py
-- def _compute_default_rope_parameters(config=None, device=None, seq_len=None, **rope_kwargs):
local function _compute_default_rope_parameters(cfg)
    -- base = config.rope_theta
    local base = cfg.rope_theta
    -- head_dim = getattr(config, "head_dim", config.hidden_size // config.num_attention_heads)
    local head_dim = cfg.head_dim or math.floor(cfg.hidden_size / cfg.num_attention_heads)
    -- dim = int(head_dim * partial_rotary_factor)
    local dim = math.floor(head_dim * (cfg.partial_rotary_factor or 1.0))
    local attention_factor = 1.0 -- Unused in this type of RoPE
    -- inv_freq = 1.0
    --     / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float().to(device) / dim))
    local inv_freq = 1.0 / (base ^ (tide.arange(0, dim, 2, { dtype = "int64" }):float() / dim))
    return inv_freq, attention_factor
end
-- ROPE_INIT_FUNCTIONS = {"default": _compute_default_rope_parameters, ...}
local ROPE_INIT_FUNCTIONS = { default = _compute_default_rope_parameters }

-- class LlamaRMSNorm(nn.Module):
local LlamaRMSNorm = nn.Module:extend("LlamaRMSNorm")
-- def __init__(self, hidden_size, eps=1e-6):
function LlamaRMSNorm:init(hidden_size, eps)
    -- self.weight = nn.Parameter(torch.ones(hidden_size))
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
    -- return self.weight * hidden_states.to(input_dtype)
    return self.weight * hidden_states:to(input_dtype)
end

-- class LlamaRotaryEmbedding(nn.Module):
local LlamaRotaryEmbedding = nn.Module:extend("LlamaRotaryEmbedding")
-- def __init__(self, ..., config: Optional[LlamaConfig] = None):  (the config path)
function LlamaRotaryEmbedding:init(cfg)
    -- if config.rope_scaling is not None: ... else: self.rope_type = "default"
    if cfg.rope_scaling ~= nil then
        self.rope_type = cfg.rope_scaling.rope_type or cfg.rope_scaling.type
    else
        self.rope_type = "default"
    end
    self.max_seq_len_cached = cfg.max_position_embeddings
    self.original_max_seq_len = cfg.max_position_embeddings
    self.config = cfg
    self.rope_init_fn = ROPE_INIT_FUNCTIONS[self.rope_type]
    -- inv_freq, self.attention_scaling = self.rope_init_fn(self.config, device, **self.rope_kwargs)
    local inv_freq
    inv_freq, self.attention_scaling = self.rope_init_fn(self.config)
    -- self.register_buffer("inv_freq", inv_freq, persistent=False)
    self:register_buffer("inv_freq", inv_freq, false)
    self.original_inv_freq = self.inv_freq
end

-- @torch.no_grad()
-- def forward(self, x, position_ids):
function LlamaRotaryEmbedding:forward(x, position_ids)
    -- @torch.no_grad()
    return tide.no_grad(function()
        -- inv_freq_expanded = self.inv_freq[None, :, None].float()
        --     .expand(position_ids.shape[0], -1, 1)
        local inv_freq_expanded = self.inv_freq[{ tide.newaxis, {}, tide.newaxis }]:float()
            :expand(position_ids.shape[1], -1, 1)
        -- position_ids_expanded = position_ids[:, None, :].float()
        local position_ids_expanded = position_ids[{ {}, tide.newaxis, {} }]:float()
        -- with torch.autocast(device_type=device_type, enabled=False):  (CPU float32: none)
        -- freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
        local freqs = (inv_freq_expanded:float():matmul(position_ids_expanded:float()))
            :transpose(2, 3)
        -- emb = torch.cat((freqs, freqs), dim=-1)
        local emb = tide.cat({ freqs, freqs }, -1)
        local cos = emb:cos()
        local sin = emb:sin()
        cos = cos * self.attention_scaling
        sin = sin * self.attention_scaling
        -- return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)
        return cos:to(x.dtype), sin:to(x.dtype)
    end)
end

-- def rotate_half(x):
local function rotate_half(x)
    -- x1 = x[..., : x.shape[-1] // 2]
    local x1 = x[{ "...", { 1, math.floor(x.shape[-1] / 2) } }]
    -- x2 = x[..., x.shape[-1] // 2 :]
    local x2 = x[{ "...", { math.floor(x.shape[-1] / 2) + 1, -1 } }]
    -- return torch.cat((-x2, x1), dim=-1)
    return tide.cat({ -x2, x1 }, -1)
end

-- def apply_rotary_pos_emb(q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
local function apply_rotary_pos_emb(q, k, cos, sin, _position_ids, unsqueeze_dim)
    -- (unsqueeze_dim=1 of PyTorch's 0-based dims is tide's dim 2)
    unsqueeze_dim = unsqueeze_dim or 2
    cos = cos:unsqueeze(unsqueeze_dim)
    sin = sin:unsqueeze(unsqueeze_dim)
    -- q_embed = (q * cos) + (rotate_half(q) * sin)
    local q_embed = (q * cos) + (rotate_half(q) * sin)
    local k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed
end

-- class LlamaMLP(nn.Module):
local LlamaMLP = nn.Module:extend("LlamaMLP")
function LlamaMLP:init(cfg)
    self.config = cfg
    self.hidden_size = cfg.hidden_size
    self.intermediate_size = cfg.intermediate_size
    -- self.gate_proj = nn.Linear(self.hidden_size, self.intermediate_size, bias=config.mlp_bias)
    self.gate_proj = nn.Linear(self.hidden_size, self.intermediate_size, { bias = cfg.mlp_bias })
    self.up_proj = nn.Linear(self.hidden_size, self.intermediate_size, { bias = cfg.mlp_bias })
    self.down_proj = nn.Linear(self.intermediate_size, self.hidden_size, { bias = cfg.mlp_bias })
    self.act_fn = ACT2FN[cfg.hidden_act]
end

function LlamaMLP:forward(x)
    -- (the pretraining_tp > 1 branch is not ported)
    -- down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))
    local down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))
    return down_proj
end

-- def repeat_kv(hidden_states: torch.Tensor, n_rep: int) -> torch.Tensor:
local function repeat_kv(hidden_states, n_rep)
    -- batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    local batch, num_key_value_heads, slen, head_dim = unpack(hidden_states.shape)
    if n_rep == 1 then
        return hidden_states
    end
    -- hidden_states = hidden_states[:, :, None, :, :]
    --     .expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    hidden_states = hidden_states[{ {}, {}, tide.newaxis, {}, {} }]
        :expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    -- return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)
    return hidden_states:reshape(batch, num_key_value_heads * n_rep, slen, head_dim)
end

-- class LlamaAttention(nn.Module):
local LlamaAttention = nn.Module:extend("LlamaAttention")
-- def __init__(self, config: LlamaConfig, layer_idx: Optional[int] = None):
function LlamaAttention:init(cfg, layer_idx)
    self.config = cfg
    self.layer_idx = layer_idx
    self.attention_dropout = cfg.attention_dropout
    self.hidden_size = cfg.hidden_size
    self.num_heads = cfg.num_attention_heads
    -- self.head_dim = getattr(config, "head_dim", self.hidden_size // self.num_heads)
    self.head_dim = cfg.head_dim or math.floor(self.hidden_size / self.num_heads)
    self.num_key_value_heads = cfg.num_key_value_heads
    -- self.num_key_value_groups = self.num_heads // self.num_key_value_heads
    self.num_key_value_groups = math.floor(self.num_heads / self.num_key_value_heads)
    self.max_position_embeddings = cfg.max_position_embeddings
    self.rope_theta = cfg.rope_theta
    self.is_causal = true
    -- self.q_proj = nn.Linear(self.hidden_size, self.num_heads * self.head_dim
    --     , bias=config.attention_bias)
    self.q_proj = nn.Linear(self.hidden_size, self.num_heads * self.head_dim,
        { bias = cfg.attention_bias })
    self.k_proj = nn.Linear(self.hidden_size, self.num_key_value_heads * self.head_dim,
        { bias = cfg.attention_bias })
    self.v_proj = nn.Linear(self.hidden_size, self.num_key_value_heads * self.head_dim,
        { bias = cfg.attention_bias })
    self.o_proj = nn.Linear(self.num_heads * self.head_dim, self.hidden_size,
        { bias = cfg.attention_bias })
    -- self.rotary_emb = LlamaRotaryEmbedding(config=self.config)
    self.rotary_emb = LlamaRotaryEmbedding(self.config)
end

-- def forward(self, hidden_states, attention_mask=None, position_ids=None, past_key_value=None,
--             output_attentions=False, use_cache=False, cache_position=None,
--             position_embeddings=None, **kwargs):
function LlamaAttention:forward(hidden_states, attention_mask, position_ids, position_embeddings)
    -- bsz, q_len, _ = hidden_states.size()
    local bsz, q_len = unpack(hidden_states:size())
    local query_states = self.q_proj(hidden_states)
    local key_states = self.k_proj(hidden_states)
    local value_states = self.v_proj(hidden_states)

    -- query_states = query_states.view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
    query_states = query_states:view(bsz, q_len, self.num_heads, self.head_dim):transpose(2, 3)
    key_states = key_states:view(bsz, q_len, self.num_key_value_heads, self.head_dim)
        :transpose(2, 3)
    value_states = value_states:view(bsz, q_len, self.num_key_value_heads, self.head_dim)
        :transpose(2, 3)

    local cos, sin
    if position_embeddings == nil then
        -- cos, sin = self.rotary_emb(value_states, position_ids)
        cos, sin = self.rotary_emb(value_states, position_ids)
    else
        -- cos, sin = position_embeddings
        cos, sin = position_embeddings[1], position_embeddings[2]
    end
    query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin)
    -- (past_key_value: the cache is not ported)

    key_states = repeat_kv(key_states, self.num_key_value_groups)
    value_states = repeat_kv(value_states, self.num_key_value_groups)
    -- attn_weights = torch.matmul(query_states, key_states.transpose(2, 3))
    --     / math.sqrt(self.head_dim)
    local attn_weights = tide.matmul(query_states, key_states:transpose(3, 4))
        / math.sqrt(self.head_dim)

    if attention_mask ~= nil then -- no matter the length, we just slice it
        -- causal_mask = attention_mask[:, :, :, : key_states.shape[-2]]
        local causal_mask = attention_mask[{ {}, {}, {}, { 1, key_states.shape[-2] } }]
        attn_weights = attn_weights + causal_mask
    end

    -- upcast attention to fp32
    -- attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32)
    --     .to(query_states.dtype)
    attn_weights = F.softmax(attn_weights, -1, { dtype = "float32" }):to(query_states.dtype)
    -- attn_weights = nn.functional.dropout(attn_weights
    --     , p=self.attention_dropout, training=self.training)
    attn_weights = F.dropout(attn_weights, { p = self.attention_dropout,
        training = self.training })
    local attn_output = tide.matmul(attn_weights, value_states)

    -- if attn_output.size() != (bsz, self.num_heads, q_len, self.head_dim): raise ValueError(...)
    local want = { bsz, self.num_heads, q_len, self.head_dim }
    for d = 1, 4 do
        if attn_output:size(d) ~= want[d] then
            error(string.format("`attn_output` should be of size (%d, %d, %d, %d), but is %s",
                bsz, self.num_heads, q_len, self.head_dim, tostring(attn_output:size())))
        end
    end

    -- attn_output = attn_output.transpose(1, 2).contiguous()
    attn_output = attn_output:transpose(2, 3):contiguous()
    attn_output = attn_output:reshape(bsz, q_len, -1)
    attn_output = self.o_proj(attn_output)
    -- return attn_output, attn_weights, past_key_value  (output_attentions=False: None)
    return attn_output, nil, nil
end

-- class LlamaDecoderLayer(nn.Module):
local LlamaDecoderLayer = nn.Module:extend("LlamaDecoderLayer")
function LlamaDecoderLayer:init(cfg, layer_idx)
    self.hidden_size = cfg.hidden_size
    -- self.self_attn = LLAMA_ATTENTION_CLASSES[config._attn_implementation]
    --     (config=config, layer_idx=layer_idx)
    self.self_attn = LlamaAttention(cfg, layer_idx) -- "eager"
    self.mlp = LlamaMLP(cfg)
    -- self.input_layernorm = LlamaRMSNorm(config.hidden_size, eps=config.rms_norm_eps)
    self.input_layernorm = LlamaRMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
    self.post_attention_layernorm = LlamaRMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
end

function LlamaDecoderLayer:forward(hidden_states, attention_mask, position_ids,
                                   position_embeddings)
    local residual = hidden_states
    hidden_states = self.input_layernorm(hidden_states)
    -- Self Attention
    -- hidden_states, self_attn_weights, present_key_value = self.self_attn(...)
    hidden_states = self.self_attn(hidden_states, attention_mask, position_ids,
        position_embeddings)
    hidden_states = residual + hidden_states
    -- Fully Connected
    residual = hidden_states
    hidden_states = self.post_attention_layernorm(hidden_states)
    hidden_states = self.mlp(hidden_states)
    hidden_states = residual + hidden_states
    -- outputs = (hidden_states,)
    return { hidden_states }
end

-- LlamaModel._prepare_4d_causal_attention_mask_with_cache_position (a staticmethod)
local function _prepare_4d_causal_attention_mask_with_cache_position(attention_mask,
        sequence_length, target_length, dtype, device, cache_position, batch_size)
    local causal_mask
    -- if attention_mask is not None and attention_mask.dim() == 4:
    if attention_mask ~= nil and attention_mask:dim() == 4 then
        causal_mask = attention_mask
    else
        -- min_dtype = torch.finfo(dtype).min
        local min_dtype = tide.finfo(dtype).min
        -- causal_mask = torch.full((sequence_length, target_length)
        --     , fill_value=min_dtype, dtype=dtype, device=device)
        causal_mask = tide.full({ sequence_length, target_length }, min_dtype,
            { dtype = dtype, device = device })
        if sequence_length ~= 1 then
            -- causal_mask = torch.triu(causal_mask, diagonal=1)
            causal_mask = tide.triu(causal_mask, 1)
        end
        -- causal_mask *= torch.arange(target_length, device=device) > cache_position.reshape(-1, 1)
        causal_mask = causal_mask
            * tide.arange(0, target_length, { device = device }):gt(cache_position:reshape(-1, 1))
        -- causal_mask = causal_mask[None, None, :, :].expand(batch_size, 1, -1, -1)
        causal_mask = causal_mask[{ tide.newaxis, tide.newaxis, {}, {} }]
            :expand(batch_size, 1, -1, -1)
        if attention_mask ~= nil then
            causal_mask = causal_mask:clone() -- copy to contiguous memory for in-place edit
            local mask_length = attention_mask.shape[-1]
            -- padding_mask = causal_mask[:, :, :, :mask_length] + attention_mask[:, None, None, :]
            local padding_mask = causal_mask[{ {}, {}, {}, { 1, mask_length } }]
                + attention_mask[{ {}, tide.newaxis, tide.newaxis, {} }]
            -- padding_mask = padding_mask == 0
            padding_mask = padding_mask:eq(0)
            -- causal_mask[:, :, :, :mask_length]
            --     = causal_mask[:, :, :, :mask_length].masked_fill(padding_mask, min_dtype)
            causal_mask[{ {}, {}, {}, { 1, mask_length } }] =
                causal_mask[{ {}, {}, {}, { 1, mask_length } }]:masked_fill(padding_mask, min_dtype)
        end
    end
    return causal_mask
end

---------------------------------------------------------------------------------------------
-- the check: weights and inputs as formulas (the same in /tmp's PyTorch script)
---------------------------------------------------------------------------------------------
local B, T, H = 2, 6, 16

-- base + 0.3 sin(0.7 i + c) over the flat index i (float64, then float32: PyTorch's)
local function formula(shape, a, c, base, amp)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    local i = tide.arange(0, n, { dtype = "float64" })
    return ((i * a + c):sin() * amp + base):float():view(shape)
end

-- named_parameters() order in PyTorch: the constant c of each one's formula
local PARAM_C = {
    ["self_attn.q_proj.weight"] = 1, ["self_attn.k_proj.weight"] = 2,
    ["self_attn.v_proj.weight"] = 3, ["self_attn.o_proj.weight"] = 4,
    ["mlp.gate_proj.weight"] = 5, ["mlp.up_proj.weight"] = 6, ["mlp.down_proj.weight"] = 7,
    ["input_layernorm.weight"] = 8, ["post_attention_layernorm.weight"] = 9,
}

local function build()
    tide.manual_seed(0)
    local layer = LlamaDecoderLayer(config, 0)
    local n = 0
    tide.no_grad(function()
        for name, p in layer:named_parameters() do
            local c = assert(PARAM_C[name], name)
            local base = name:find("norm") and 1.0 or 0.0
            p:copy_(formula(p:size(), 0.7, c, base, 0.3))
            n = n + 1
        end
    end)
    assert.are.equal(9, n)
    return layer
end

-- sum, a cosine-weighted sum over the flat index, the first and the last element
local function chk(t)
    t = t:detach():double():reshape(-1)
    local w = (tide.arange(0, t:numel(), { dtype = "float64" }) * 0.1):cos()
    return { t:sum():item(), (t * w):sum():item(), t[1]:item(), t[-1]:item() }
end

-- transformers 4.46.3 on PyTorch 1.13 (the script's chk(name, tensor) lines)
local REF = {
    cos = { 11.52286404, 5.148815565, 1, 0.9987502694 },
    sin = { 0.6522481386, 3.798359493, 0, 0.0499791652 },
    rmsnorm = { 1.654709724, -8.569247602, 0.1833299845, 1.065956831 },
    mlp = { 0.03349356728, -0.001732781621, 0.006785116158, -3.490637391e-05 },
    q_embed = { -3.57069643, -0.634118933, 0.4568202794, 0.6529654264 },
    k_embed = { -2.701001561, 0.7262115072, 0.621373117, 0.650357604 },
    repeat_kv = { -5.402003122, 5.622821806, 0.621373117, 0.650357604 },
    attn = { -0.1230987221, 0.06224585933, -0.1178903952, 0.03190750629 },
    layer = { 1.503104229, 1.580833608, 0.002323543653, 0.7797232866 },
    grad_x = { -0.04650056566, -0.05703785997, -0.001247925451, -0.002266191179 },
    grad_q_proj = { -0.01021277807, -0.01385760733, 5.679456444e-05, 0.001070639817 },
    grad_in_norm = { 0.006312941201, -0.005541751264, -0.002902389038, -0.003384405281 },
    q_proj_after = { 0.7188277422, 0.7707557287, 0.2421906292, -0.1347232163 },
    in_norm_after = { 15.61551499, 10.58040688, 1.305510759, 0.9063585997 },
    down_after = { 0.715570054, 0.2536054989, 0.1868989319, -0.2830757201 },
}
local REF_LOSS, REF_LOSS2 = 1.018042803, 0.9805700183
-- the after-step sums take 1e-5: Adam's first step is near sign(grad), and a gradient near
-- zero flips it on float32 summation order
local TOL, TOL_STEP = 1e-6, 1e-5

local function inputs()
    -- x = form((B, T, H), 0.3, 0.1).requires_grad_(); tgt = form((B, T, H), 0.17, 0.5)
    local x = formula({ B, T, H }, 0.3, 0.1, 0, 1):requires_grad_()
    local tgt = formula({ B, T, H }, 0.17, 0.5, 0, 1)
    -- am = torch.tensor([[1]*6, [1]*5 + [0]])  (the second sequence's last position padded)
    local am = tide.tensor({ { 1, 1, 1, 1, 1, 1 }, { 1, 1, 1, 1, 1, 0 } }, { dtype = "int64" })
    -- cache_position = torch.arange(T); position_ids = cache_position.unsqueeze(0)
    local cache_position = tide.arange(0, T, { dtype = "int64" })
    local position_ids = cache_position:unsqueeze(1)
    local mask = _prepare_4d_causal_attention_mask_with_cache_position(am, T, T, "float32",
        "cpu", cache_position, B)
    return x, tgt, mask, position_ids
end

describe("ported transformers LlamaDecoderLayer (v4.46, eager GQA attention)", function()
    it("builds the causal mask with min float on the future and the padded key", function()
        local _, _, mask = inputs()
        assert.are.same({ B, 1, T, T }, mask:size())
        local MIN = tide.finfo("float32").min
        for b = 1, B do
            for i = 1, T do
                for j = 1, T do
                    local want = (j > i or (b == 2 and j == T)) and MIN or 0
                    assert.are.equal(want, mask[{ b, 1, i, j }]:item())
                end
            end
        end
    end)

    it("matches PyTorch module by module: rotary, RMSNorm, MLP, rope, repeat_kv, attention",
        function()
        local layer = build()
        local x, _, mask, position_ids = inputs()
        local rot = LlamaRotaryEmbedding(config)
        assert_close_list({ 1.0, 0.01 }, { rot.inv_freq[1]:item(), rot.inv_freq[2]:item() },
            1e-7, "inv_freq")
        local cos, sin = rot(x, position_ids)
        assert.are.same({ 1, T, 4 }, cos:size())
        assert.is_false(cos.requires_grad)
        assert_close_list(REF.cos, chk(cos), TOL, "cos")
        assert_close_list(REF.sin, chk(sin), TOL, "sin")
        local hn = layer.input_layernorm(x)
        assert_close_list(REF.rmsnorm, chk(hn), TOL, "rmsnorm")
        assert_close_list(REF.mlp, chk(layer.mlp(x)), TOL, "mlp")
        -- q = layer.self_attn.q_proj(hn).view(B, T, 4, 4).transpose(1, 2)
        local q = layer.self_attn.q_proj(hn):view(B, T, 4, 4):transpose(2, 3)
        local k = layer.self_attn.k_proj(hn):view(B, T, 2, 4):transpose(2, 3)
        local qe, ke = apply_rotary_pos_emb(q, k, cos, sin)
        assert_close_list(REF.q_embed, chk(qe), TOL, "q_embed")
        assert_close_list(REF.k_embed, chk(ke), TOL, "k_embed")
        local rk = repeat_kv(ke, 2)
        assert.are.same({ B, 4, T, 4 }, rk:size())
        assert_close_list(REF.repeat_kv, chk(rk), TOL, "repeat_kv")
        local attn = layer.self_attn(hn, mask, position_ids, { cos, sin })
        assert.are.same({ B, T, H }, attn:size())
        assert_close_list(REF.attn, chk(attn), TOL, "attn")
        -- without position_embeddings the layer's own rotary_emb gives the same
        local attn2 = layer.self_attn(hn, mask, position_ids)
        assert_close_list(REF.attn, chk(attn2), TOL, "attn (own rotary)")
    end)

    it("matches PyTorch's layer output, loss, gradients and one AdamW step", function()
        local layer = build()
        local x, tgt, mask, position_ids = inputs()
        local rot = LlamaRotaryEmbedding(config)
        local cos, sin = rot(x, position_ids)
        local out = layer(x, mask, position_ids, { cos, sin })[1]
        assert_close_list(REF.layer, chk(out), TOL, "layer")
        -- loss = ((out - tgt) ** 2).mean()
        local loss = ((out - tgt) ^ 2):mean()
        assert_close_list({ REF_LOSS }, { loss:item() }, TOL, "loss")
        loss:backward()
        assert_close_list(REF.grad_x, chk(x.grad), TOL, "grad x")
        assert_close_list(REF.grad_q_proj, chk(layer.self_attn.q_proj.weight.grad), TOL,
            "grad q_proj")
        assert_close_list(REF.grad_in_norm, chk(layer.input_layernorm.weight.grad), TOL,
            "grad input_layernorm")
        -- opt = torch.optim.AdamW(layer.parameters(), lr=1e-2, weight_decay=0.1)
        local opt = optim.AdamW(layer:parameters(), { lr = 1e-2, weight_decay = 0.1 })
        opt:step()
        assert_close_list(REF.q_proj_after, chk(layer.self_attn.q_proj.weight), TOL_STEP,
            "q_proj")
        assert_close_list(REF.in_norm_after, chk(layer.input_layernorm.weight), TOL_STEP,
            "input_layernorm")
        assert_close_list(REF.down_after, chk(layer.mlp.down_proj.weight), TOL_STEP,
            "down_proj")
        opt:zero_grad()
        local out2 = layer(x, mask, position_ids, { cos, sin })[1]
        local loss2 = ((out2 - tgt) ^ 2):mean():item()
        assert_close_list({ REF_LOSS2 }, { loss2 }, TOL_STEP, "loss after the step")
        assert.is_true(loss2 < loss:item())
    end)
end)
