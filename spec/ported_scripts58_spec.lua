-- ported_scripts58_spec.lua — rasbt/LLMs-from-scratch's Qwen3 from scratch:
-- pkg/llms_from_scratch/qwen3.py (RMSNorm with qwen3_compatible, compute_rope_params, apply_rope,
-- GroupedQueryAttention with q_norm/k_norm, FeedForward (SwiGLU), TransformerBlock, Qwen3Model
-- with its causal mask, and load_weights_into_qwen's tied out_head
-- `model.out_head.weight = model.tok_emb.weight`), its KV-cache variant
-- pkg/llms_from_scratch/kv_cache/qwen3.py (apply_rope's offset, start_pos, current_pos,
-- reset_kv_cache), kv_cache/utils.py's KVCache and kv_cache/generate.py's generate_text_simple
-- (use_cache true and false), the same code as ch05/11_qwen3/standalone-qwen3(-plus-kvcache).ipynb;
-- ported line for line at a tiny config with weights from a fixed formula (the same in PyTorch
-- 1.13 for the reference values). The Python line stands above each Lua line that differs.
-- Dims, token ids (tide's nn.Embedding takes 1..vocab_size, argmax gives the next id as is,
-- cross_entropy's targets are the ids) and the KV cache's layer index are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

---------------------------------------------------------------------------------------------
-- qwen3.py (the kv_cache variant's classes take start_pos and cache; without a cache they are
-- qwen3.py's: start_pos 0, the mask over the tokens given)
---------------------------------------------------------------------------------------------

-- class RMSNorm(nn.Module):
local RMSNorm = nn.Module:extend("RMSNorm")
-- def __init__(self, emb_dim, eps=1e-6, bias=False, qwen3_compatible=True):
function RMSNorm:init(emb_dim, opts)
    opts = opts or {}
    self.eps = opts.eps or 1e-6
    local bias = opts.bias or false
    -- self.qwen3_compatible = qwen3_compatible
    self.qwen3_compatible = opts.qwen3_compatible ~= false
    -- self.scale = nn.Parameter(torch.ones(emb_dim))
    self.scale = nn.Parameter(tide.ones(emb_dim))
    -- self.shift = nn.Parameter(torch.zeros(emb_dim)) if bias else None
    self.shift = bias and nn.Parameter(tide.zeros(emb_dim)) or nil
end

function RMSNorm:forward(x)
    local input_dtype = x.dtype

    if self.qwen3_compatible then
        -- x = x.to(torch.float32)
        x = x:to(tide.float32)
    end

    -- variance = x.pow(2).mean(dim=-1, keepdim=True)
    local variance = x:pow(2):mean({ dim = -1, keepdim = true })
    -- norm_x = x * torch.rsqrt(variance + self.eps)
    local norm_x = x * tide.rsqrt(variance + self.eps)
    norm_x = norm_x * self.scale

    -- if self.shift is not None:
    if self.shift ~= nil then
        norm_x = norm_x + self.shift
    end

    -- return norm_x.to(input_dtype)
    return norm_x:to(input_dtype)
end

-- def compute_rope_params(head_dim, theta_base=10_000, context_length=4096, dtype=torch.float32):
local function compute_rope_params(head_dim, theta_base, context_length, dtype)
    theta_base, context_length = theta_base or 10000, context_length or 4096
    dtype = dtype or tide.float32
    assert(head_dim % 2 == 0, "Embedding dimension must be even")

    -- Compute the inverse frequencies
    -- inv_freq = 1.0 / (theta_base ** (torch.arange(0, head_dim, 2, dtype=dtype)
    --                                  [: (head_dim // 2)].float() / head_dim))
    local inv_freq = 1.0 / (theta_base ^ (tide.arange(0, head_dim, 2, { dtype = dtype })
        [{ { 1, math.floor(head_dim / 2) } }]:float() / head_dim))

    -- Generate position indices
    -- positions = torch.arange(context_length, dtype=dtype)
    local positions = tide.arange(context_length, { dtype = dtype })

    -- Compute the angles
    -- angles = positions[:, None] * inv_freq[None, :]  # Shape: (context_length, head_dim // 2)
    local angles = positions[{ {}, tide.newaxis }] * inv_freq[{ tide.newaxis, {} }]

    -- Expand angles to match the head_dim
    -- angles = torch.cat([angles, angles], dim=1)  # Shape: (context_length, head_dim)
    angles = tide.cat({ angles, angles }, 2)

    -- Precompute sine and cosine
    -- cos = torch.cos(angles)
    local cos = tide.cos(angles)
    local sin = tide.sin(angles)

    return cos, sin
end

-- def apply_rope(x, cos, sin, offset=0):
local function apply_rope(x, cos, sin, offset)
    offset = offset or 0
    -- x: (batch_size, num_heads, seq_len, head_dim)
    -- batch_size, num_heads, seq_len, head_dim = x.shape
    local _, _, seq_len, head_dim = unpack(x.shape)
    assert(head_dim % 2 == 0, "Head dimension must be even")

    -- Split x into first half and second half
    -- x1 = x[..., : head_dim // 2]  # First half
    local x1 = x[{ "...", { 1, math.floor(head_dim / 2) } }]
    -- x2 = x[..., head_dim // 2:]  # Second half
    local x2 = x[{ "...", { math.floor(head_dim / 2) + 1, -1 } }]

    -- Adjust sin and cos shapes
    -- cos = cos[offset:offset + seq_len, :].unsqueeze(0).unsqueeze(0)  # (1, 1, seq_len, head_dim)
    cos = cos[{ { offset + 1, offset + seq_len }, {} }]:unsqueeze(1):unsqueeze(1)
    sin = sin[{ { offset + 1, offset + seq_len }, {} }]:unsqueeze(1):unsqueeze(1)

    -- Apply the rotary transformation
    -- rotated = torch.cat((-x2, x1), dim=-1)
    local rotated = tide.cat({ -x2, x1 }, -1)
    local x_rotated = (x * cos) + (rotated * sin)

    -- It's ok to use lower-precision after applying cos and sin rotation
    -- return x_rotated.to(dtype=x.dtype)
    return x_rotated:to({ dtype = x.dtype })
end

-- class GroupedQueryAttention(nn.Module):
local GroupedQueryAttention = nn.Module:extend("GroupedQueryAttention")
-- def __init__(self, d_in, num_heads, num_kv_groups, head_dim=None, qk_norm=False, dtype=None):
function GroupedQueryAttention:init(d_in, num_heads, num_kv_groups, opts)
    opts = opts or {}
    local head_dim, qk_norm, dtype = opts.head_dim, opts.qk_norm or false, opts.dtype
    assert(num_heads % num_kv_groups == 0, "num_heads must be divisible by num_kv_groups")

    self.num_heads = num_heads
    self.num_kv_groups = num_kv_groups
    -- self.group_size = num_heads // num_kv_groups
    self.group_size = math.floor(num_heads / num_kv_groups)

    -- if head_dim is None:
    if head_dim == nil then
        assert(d_in % num_heads == 0,
            "`d_in` must be divisible by `num_heads` if `head_dim` is not set")
        -- head_dim = d_in // num_heads
        head_dim = math.floor(d_in / num_heads)
    end

    self.head_dim = head_dim
    self.d_out = num_heads * head_dim

    -- self.W_query = nn.Linear(d_in, self.d_out, bias=False, dtype=dtype)
    self.W_query = nn.Linear(d_in, self.d_out, { bias = false, dtype = dtype })
    self.W_key = nn.Linear(d_in, num_kv_groups * head_dim, { bias = false, dtype = dtype })
    self.W_value = nn.Linear(d_in, num_kv_groups * head_dim, { bias = false, dtype = dtype })

    self.out_proj = nn.Linear(self.d_out, d_in, { bias = false, dtype = dtype })

    if qk_norm then
        -- self.q_norm = RMSNorm(head_dim, eps=1e-6)
        self.q_norm = RMSNorm(head_dim, { eps = 1e-6 })
        self.k_norm = RMSNorm(head_dim, { eps = 1e-6 })
    else
        -- self.q_norm = self.k_norm = None
        self.q_norm, self.k_norm = nil, nil
    end
end

-- def forward(self, x, mask, cos, sin, start_pos=0, cache=None):
function GroupedQueryAttention:forward(x, mask, cos, sin, start_pos, cache)
    start_pos = start_pos or 0
    -- b, num_tokens, _ = x.shape
    local b, num_tokens = unpack(x.shape)

    -- Apply projections
    local queries = self.W_query(x) -- (b, num_tokens, num_heads * head_dim)
    local keys = self.W_key(x) -- (b, num_tokens, num_kv_groups * head_dim)
    local values = self.W_value(x) -- (b, num_tokens, num_kv_groups * head_dim)

    -- Reshape
    -- queries = queries.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
    queries = queries:view(b, num_tokens, self.num_heads, self.head_dim):transpose(2, 3)
    local keys_new = keys:view(b, num_tokens, self.num_kv_groups, self.head_dim):transpose(2, 3)
    local values_new = values:view(b, num_tokens, self.num_kv_groups, self.head_dim)
        :transpose(2, 3)

    -- Optional normalization
    if self.q_norm then
        queries = self.q_norm(queries)
    end
    if self.k_norm then
        keys_new = self.k_norm(keys_new)
    end

    -- Apply RoPE
    -- queries = apply_rope(queries, cos, sin, offset=start_pos)
    queries = apply_rope(queries, cos, sin, start_pos)
    keys_new = apply_rope(keys_new, cos, sin, start_pos)

    local next_cache
    -- if cache is not None:
    if cache ~= nil then
        -- prev_k, prev_v = cache
        local prev_k, prev_v = unpack(cache)
        -- keys = torch.cat([prev_k, keys_new], dim=2)
        keys = tide.cat({ prev_k, keys_new }, 3)
        values = tide.cat({ prev_v, values_new }, 3)
        -- next_cache = (keys, values)
        next_cache = { keys, values }
    else
        start_pos = 0 -- luacheck: ignore (reset RoPE)
        keys, values = keys_new, values_new
        next_cache = { keys, values }
    end

    -- Expand K and V to match number of heads
    -- keys = keys.repeat_interleave(self.group_size, dim=1)
    keys = keys:repeat_interleave(self.group_size, { dim = 2 })
    values = values:repeat_interleave(self.group_size, { dim = 2 })

    -- Attention
    -- attn_scores = queries @ keys.transpose(2, 3)
    local attn_scores = queries:matmul(keys:transpose(3, 4))
    -- attn_scores = attn_scores.masked_fill(mask, -torch.inf)
    attn_scores = attn_scores:masked_fill(mask, -math.huge)
    -- attn_weights = torch.softmax(attn_scores / self.head_dim**0.5, dim=-1)
    local attn_weights = tide.softmax(attn_scores / self.head_dim ^ 0.5, { dim = -1 })

    -- context = (attn_weights @ values).transpose(1, 2).reshape(b, num_tokens, self.d_out)
    local context = attn_weights:matmul(values):transpose(2, 3):reshape(b, num_tokens, self.d_out)
    -- return self.out_proj(context), next_cache
    return self.out_proj(context), next_cache
end

-- class FeedForward(nn.Module):
local FeedForward = nn.Module:extend("FeedForward")
function FeedForward:init(cfg)
    -- self.fc1 = nn.Linear(cfg["emb_dim"], cfg["hidden_dim"], dtype=cfg["dtype"], bias=False)
    self.fc1 = nn.Linear(cfg.emb_dim, cfg.hidden_dim, { dtype = cfg.dtype, bias = false })
    self.fc2 = nn.Linear(cfg.emb_dim, cfg.hidden_dim, { dtype = cfg.dtype, bias = false })
    self.fc3 = nn.Linear(cfg.hidden_dim, cfg.emb_dim, { dtype = cfg.dtype, bias = false })
end

function FeedForward:forward(x)
    local x_fc1 = self.fc1(x)
    local x_fc2 = self.fc2(x)
    -- x = nn.functional.silu(x_fc1) * x_fc2
    x = F.silu(x_fc1) * x_fc2
    return self.fc3(x)
end

-- class TransformerBlock(nn.Module):
local TransformerBlock = nn.Module:extend("TransformerBlock")
function TransformerBlock:init(cfg)
    -- self.att = GroupedQueryAttention(d_in=cfg["emb_dim"], num_heads=cfg["n_heads"],
    --     head_dim=cfg["head_dim"], num_kv_groups=cfg["n_kv_groups"], qk_norm=cfg["qk_norm"],
    --     dtype=cfg["dtype"])
    self.att = GroupedQueryAttention(cfg.emb_dim, cfg.n_heads, cfg.n_kv_groups,
        { head_dim = cfg.head_dim, qk_norm = cfg.qk_norm, dtype = cfg.dtype })
    -- if "num_experts" in cfg and cfg["num_experts"] > 0: self.ff = MoEFeedForward(cfg)
    -- (MoEFeedForward is not ported: the dense models' config) else:
    self.ff = FeedForward(cfg)
    -- self.norm1 = RMSNorm(cfg["emb_dim"], eps=1e-6)
    self.norm1 = RMSNorm(cfg.emb_dim, { eps = 1e-6 })
    self.norm2 = RMSNorm(cfg.emb_dim, { eps = 1e-6 })
end

-- def forward(self, x, mask, cos, sin, start_pos=0, cache=None):
function TransformerBlock:forward(x, mask, cos, sin, start_pos, cache)
    -- Shortcut connection for attention block
    local shortcut = x
    x = self.norm1(x)
    -- x, next_cache = self.att(x, mask, cos, sin, start_pos=start_pos, cache=cache)
    local next_cache
    x, next_cache = self.att(x, mask, cos, sin, start_pos, cache)
    x = x + shortcut -- Add the original input back

    -- Shortcut connection for feed-forward block
    shortcut = x
    x = self.norm2(x)
    x = self.ff(x)
    x = x + shortcut -- Add the original input back

    return x, next_cache
end

-- class Qwen3Model(nn.Module):
local Qwen3Model = nn.Module:extend("Qwen3Model")
function Qwen3Model:init(cfg)
    -- Main model parameters
    -- self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"], dtype=cfg["dtype"])
    self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.emb_dim, { dtype = cfg.dtype })

    -- self.trf_blocks = nn.ModuleList([TransformerBlock(cfg) for _ in range(cfg["n_layers"])])
    local blocks = {}
    for i = 1, cfg.n_layers do
        blocks[i] = TransformerBlock(cfg)
    end
    self.trf_blocks = nn.ModuleList(blocks)
    self.final_norm = RMSNorm(cfg.emb_dim)
    -- self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False, dtype=cfg["dtype"])
    self.out_head = nn.Linear(cfg.emb_dim, cfg.vocab_size, { bias = false, dtype = cfg.dtype })

    -- Reusable utilities
    local head_dim
    -- if cfg["head_dim"] is None:
    if cfg.head_dim == nil then
        -- head_dim = cfg["emb_dim"] // cfg["n_heads"]
        head_dim = math.floor(cfg.emb_dim / cfg.n_heads)
    else
        head_dim = cfg.head_dim
    end
    -- cos, sin = compute_rope_params(head_dim=head_dim, theta_base=cfg["rope_base"],
    --                                context_length=cfg["context_length"])
    local cos, sin = compute_rope_params(head_dim, cfg.rope_base, cfg.context_length)
    -- self.register_buffer("cos", cos, persistent=False)
    self:register_buffer("cos", cos, false)
    self:register_buffer("sin", sin, false)
    self.cfg = cfg
    self.current_pos = 0 -- Track current position in KV cache
end

-- def forward(self, in_idx, cache=None):
function Qwen3Model:forward(in_idx, cache)
    -- Forward pass
    local tok_embeds = self.tok_emb(in_idx)
    local x = tok_embeds

    -- num_tokens = x.shape[1]
    local num_tokens = x.shape[2]
    local pos_start, mask
    if cache ~= nil then
        pos_start = self.current_pos
        local pos_end = pos_start + num_tokens
        self.current_pos = pos_end
        -- mask = torch.triu(torch.ones(pos_end, pos_end, device=x.device, dtype=torch.bool),
        --                   diagonal=1)[pos_start:pos_end, :pos_end]
        mask = tide.triu(tide.ones(pos_end, pos_end, { device = x.device, dtype = tide.bool }),
            { diagonal = 1 })[{ { pos_start + 1, pos_end }, { 1, pos_end } }]
    else
        pos_start = 0 -- Not strictly necessary but helps torch.compile
        mask = tide.triu(tide.ones(num_tokens, num_tokens, { device = x.device,
            dtype = tide.bool }), { diagonal = 1 })
    end
    -- Shape (1, 1, num_tokens, num_tokens) to broadcast across batch and heads
    -- mask = mask[None, None, :, :]
    mask = mask[{ tide.newaxis, tide.newaxis, {}, {} }]

    -- for i, block in enumerate(self.trf_blocks):
    for i, block in ipairs(self.trf_blocks) do
        -- blk_cache = cache.get(i) if cache else None
        local blk_cache = cache and cache:get(i) or nil
        -- x, new_blk_cache = block(x, mask, self.cos, self.sin, start_pos=pos_start,
        --                          cache=blk_cache)
        local new_blk_cache
        x, new_blk_cache = block(x, mask, self.cos, self.sin, pos_start, blk_cache)
        if cache ~= nil then
            cache:update(i, new_blk_cache)
        end
    end

    x = self.final_norm(x)
    -- logits = self.out_head(x.to(self.cfg["dtype"]))
    local logits = self.out_head(x:to(self.cfg.dtype))
    return logits
end

function Qwen3Model:reset_kv_cache()
    self.current_pos = 0
end

---------------------------------------------------------------------------------------------
-- kv_cache/utils.py and kv_cache/generate.py
---------------------------------------------------------------------------------------------

-- class KVCache:
local KVCache = ported.class("KVCache")
function KVCache:__init__(n_layers)
    -- self.cache = [None] * n_layers  (Lua: false marks an empty slot, a nil would end the list)
    self.cache = {}
    for i = 1, n_layers do
        self.cache[i] = false
    end
end

function KVCache:get(layer_idx)
    -- return self.cache[layer_idx]
    return self.cache[layer_idx] or nil
end

function KVCache:update(layer_idx, value)
    self.cache[layer_idx] = value
end

function KVCache:get_all()
    return self.cache
end

function KVCache:reset()
    -- for i in range(len(self.cache)): self.cache[i] = None
    for i = 1, #self.cache do
        self.cache[i] = false
    end
end

-- def generate_text_simple(model, idx, max_new_tokens, context_size=None, use_cache=True):
local function generate_text_simple(model, idx, max_new_tokens, context_size, use_cache)
    if use_cache == nil then use_cache = true end
    model:eval()
    -- ctx_len = context_size or model.cfg["context_length"]
    local ctx_len = context_size or model.cfg.context_length

    -- with torch.no_grad():
    return tide.no_grad(function()
        if use_cache then
            -- cache = KVCache(n_layers=model.cfg["n_layers"])
            local cache = KVCache(model.cfg.n_layers)
            model:reset_kv_cache()
            -- logits = model(idx[:, -ctx_len:], cache=cache)
            local logits = model(idx[{ {}, { -ctx_len, -1 } }], cache)

            for _ = 1, max_new_tokens do
                -- next_idx = logits[:, -1].argmax(dim=-1, keepdim=True)
                local next_idx = logits[{ {}, -1 }]:argmax({ dim = -1, keepdim = true })
                -- idx = torch.cat([idx, next_idx], dim=1)
                idx = tide.cat({ idx, next_idx }, 2)
                -- logits = model(next_idx, cache=cache)
                logits = model(next_idx, cache)
            end
        else
            for _ = 1, max_new_tokens do
                -- logits = model(idx[:, -ctx_len:], cache=None)
                local logits = model(idx[{ {}, { -ctx_len, -1 } }], nil)
                local next_idx = logits[{ {}, -1 }]:argmax({ dim = -1, keepdim = true })
                idx = tide.cat({ idx, next_idx }, 2)
            end
        end
        return idx
    end)
end

---------------------------------------------------------------------------------------------
-- the tests
---------------------------------------------------------------------------------------------

-- QWEN_CONFIG_06_B's keys at a tiny size (float32: the value checks need PyTorch's rounding)
local CFG = {
    vocab_size = 50, context_length = 32, emb_dim = 16, n_heads = 4, n_layers = 2,
    hidden_dim = 24, head_dim = 4, qk_norm = true, n_kv_groups = 2, rope_base = 1000000.0,
    dtype = tide.float32,
}

-- every parameter, in named_parameters order (k = 0, 1, ...), set from a fixed formula:
-- p.copy_((0.3 * torch.sin(0.731 * torch.arange(p.numel()) + 1.37 * k)).view(p.shape))
local function fill_from_formula(model)
    tide.no_grad(function()
        for k, np in ipairs(model:named_parameters()) do
            local p = np[2]
            local v = (tide.arange(p:numel()):float() * 0.731 + 1.37 * (k - 1)):sin() * 0.3
            p:copy_(v:view(p.shape))
        end
    end)
end

-- Python's ids [[3, 17, 42, 8, 25, 0], [49, 1, 30, 12, 7, 33]], plus one
local IDS = { { 4, 18, 43, 9, 26, 1 }, { 50, 2, 31, 13, 8, 34 } }

describe("rasbt/LLMs-from-scratch Qwen3 (qwen3.py, kv_cache/qwen3.py)", function()
    it("compute_rope_params and apply_rope match PyTorch", function()
        local cos, sin = compute_rope_params(4, 10000, 8)
        assert.are.same({ 8, 4 }, cos.shape)
        -- Python's None in an index is tide.newaxis; the string "None" is refused by name
        assert.has_error(function() return tide.arange(4.)[{ {}, "None" }] end,
            'tide: index: index 2 must be a number, a range table, a tensor, "..." or ' ..
            'tide.newaxis, got "None"')
        -- cos[3] = cos(3 * inv_freq) with inv_freq = (1, 10000^-0.5), repeated
        assert_close_list({ math.cos(3), math.cos(0.03), math.cos(3), math.cos(0.03) },
            cos[4]:tolist(), 1e-6, "cos[3]")
        -- x = torch.arange(1., 17.).view(1, 2, 2, 4).sin(); apply_rope(x, cos, sin, offset=3)
        local x = tide.arange(1., 17.):view(1, 2, 2, 4):sin()
        local y = apply_rope(x, cos, sin, 3)
        assert.are.same({ 1, 2, 2, 4 }, y.shape)
        assert_close_list({ -0.8529648184776306, 0.9315889477729797, -0.020959362387657166,
            -0.7291871309280396, 1.1240038871765137, -0.31875574588775635,
            0.29628121852874756, 0.9773932099342346 },
            y[{ 1, 1 }]:flatten():tolist(), 1e-5, "apply_rope")
        -- RMSNorm: x * rsqrt(mean(x^2) + eps) * scale, computed in float32 and cast back
        local norm = RMSNorm(4)
        local h = tide.tensor({ { 1, 2, 3, 4 } }):to(tide.float64)
        local out = norm(h)
        assert.are.equal("float64", out.dtype)
        local r = 1 / math.sqrt(7.5 + 1e-6)
        assert_close_list({ r, 2 * r, 3 * r, 4 * r }, out[1]:tolist(), 1e-6, "RMSNorm")
    end)

    it("Qwen3Model's logits match PyTorch 1.13 with the same weights", function()
        tide.manual_seed(0)
        local model = Qwen3Model(CFG)
        -- named_parameters: tok_emb, 2 x (att: W_query W_key W_value out_proj q_norm k_norm,
        -- ff: fc1 fc2 fc3, norm1 norm2), final_norm, out_head
        local names = {}
        for i, np in ipairs(model:named_parameters()) do names[i] = np[1] end
        assert.are.equal(25, #names)
        assert.are.equal("trf_blocks.1.att.q_norm.scale", names[6])
        assert.are.equal("out_head.weight", names[25])
        -- the cos/sin buffers are not persistent: not in the state_dict
        local sd = model:state_dict()
        assert.is_nil(sd["cos"])
        assert.is_not_nil(sd["tok_emb.weight"])
        fill_from_formula(model)
        model:eval()
        local idx = tide.tensor(IDS, { dtype = tide.int64 })
        local logits = model(idx)
        assert.are.same({ 2, 6, 50 }, logits.shape)
        -- PyTorch 1.13, qwen3.py's Qwen3Model with the same config and fill (logits[0, -1, :6],
        -- logits[1, 2, :6], logits.sum())
        assert_close_list({ -0.03981618210673332, 0.018044881522655487, 0.06307781487703323,
            0.06326770782470703, 0.018480295315384865, -0.03944583237171173 },
            logits[{ 1, -1, { 1, 6 } }]:tolist(), 1e-4, "logits[0, -1]")
        assert_close_list({ -0.055249545723199844, 0.02352874167263508, 0.08557938784360886,
            0.08679092675447464, 0.02630193904042244, -0.0528864823281765 },
            logits[{ 2, 3, { 1, 6 } }]:tolist(), 1e-4, "logits[1, 2]")
        assert_close_list({ 0.038448452949523926 }, { logits:sum():item() }, 1e-3, "logits.sum()")
    end)

    it("the KV-cached generation gives the uncached tokens and logits", function()
        tide.manual_seed(0)
        local model = Qwen3Model(CFG)
        fill_from_formula(model)
        local idx = tide.tensor({ IDS[1] }, { dtype = tide.int64 })
        local plain = generate_text_simple(model, idx, 5, nil, false)
        local cached = generate_text_simple(model, idx, 5, nil, true)
        assert.are.same({ 1, 11 }, plain.shape)
        assert.are.same(plain:tolist(), cached:tolist())
        -- PyTorch 1.13's generate_text_simple (both paths) with the same weights:
        -- [[3, 17, 42, 8, 25, 0, 17, 10, 42, 35, 28]], plus one
        assert.are.same({ { 4, 18, 43, 9, 26, 1, 18, 11, 43, 36, 29 } }, plain:tolist())
        assert.are.equal(11, model.current_pos)

        -- the cache step by step: the prompt, then one token at a time at start_pos
        local cache = KVCache(CFG.n_layers)
        model:reset_kv_cache()
        local full = tide.no_grad(function() return model(plain) end)
        local l1 = tide.no_grad(function() return model(plain[{ {}, { 1, 8 } }], cache) end)
        assert.are.same({ 1, 8, 50 }, l1.shape)
        local k1, v1 = unpack(cache:get(2))
        -- (b, num_kv_groups, tokens so far, head_dim)
        assert.are.same({ 1, 2, 8, 4 }, k1.shape)
        assert.are.same({ 1, 2, 8, 4 }, v1.shape)
        local l2 = tide.no_grad(function() return model(plain[{ {}, { 9, 11 } }], cache) end)
        assert.are.same({ 1, 2, 11, 4 }, cache:get(1)[1].shape)
        assert.is_true(tide.allclose(tide.cat({ l1, l2 }, 2), full, { atol = 1e-5 }))
        assert.are.equal(2, #cache:get_all())
        cache:reset()
        assert.is_nil(cache:get(1))
    end)

    it("tied out_head (model.out_head.weight = model.tok_emb.weight) trains: loss falls",
        function()
            tide.manual_seed(0)
            local model = Qwen3Model(CFG)
            -- load_weights_into_qwen without "lm_head.weight": weight tying
            model.out_head.weight = model.tok_emb.weight
            assert.are.equal(24, #model:parameters())
            model:train()
            -- ch05's calc_loss_batch: the next token of each position
            tide.manual_seed(1)
            local batch = tide.randint(1, CFG.vocab_size + 1, { 4, 9 })
            local input_batch = batch[{ {}, { 1, 8 } }]
            local target_batch = batch[{ {}, { 2, 9 } }]
            -- optimizer = torch.optim.AdamW(model.parameters(), lr=0.0004, weight_decay=0.1)
            local optimizer = tide.optim.AdamW(model:parameters(), { lr = 1e-2,
                weight_decay = 0.1 })
            local losses = {}
            for step = 1, 3 do
                optimizer:zero_grad()
                local logits = model(input_batch)
                -- loss = F.cross_entropy(logits.flatten(0, 1), target_batch.flatten())
                local loss = F.cross_entropy(logits:flatten(1, 2), target_batch:flatten())
                loss:backward()
                optimizer:step()
                losses[step] = loss:item()
                assert_finite(losses[step], "loss")
            end
            -- the tied weight took both gradients and still is one tensor
            assert.are.equal(model.tok_emb.weight, model.out_head.weight)
            assert.is_true(losses[2] < losses[1] and losses[3] < losses[2])
        end)
end)
