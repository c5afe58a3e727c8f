-- ported_scripts50_spec.lua — rasbt/LLMs-from-scratch bonus code ported line for line:
-- ch04/03_kv-cache's gpt_with_kv_cache.py (register_buffer("cache_k", None, persistent=False),
-- torch.cat into the cache, ptr_current_pos mask slicing, reset_cache / reset_kv_cache,
-- generate_text_simple_cached, cached == uncached tokens) and gpt_with_kv_cache_optimized.py
-- (a preallocated sliding-window cache written by slice assignment, an offset causal mask),
-- and ch05/07_gpt_to_llama's Llama 3.2 standalone code (RMSNorm, SiLU FeedForward,
-- compute_rope_params with theta_base and Llama 3 frequency smoothing, apply_rope,
-- GroupedQueryAttention with repeat_interleave, Llama3Model with non-persistent cos/sin buffers,
-- nn.RMSNorm(emb_dim, eps=1e-5, dtype=...)) and ch05/11_qwen3's standalone Qwen3Model (its own
-- qwen3_compatible RMSNorm, q/k norms in GroupedQueryAttention, head_dim apart from emb_dim).
-- Gap fixed here: nn.RMSNorm takes PyTorch 2.4's device and dtype (positional or by name).
-- Tiny configs (vocab 50, context 16, emb 16-32, 2 layers, 2-4 heads), values checked against
-- PyTorch 1.13 on deterministic weights. The Python line stands above each Lua line that differs
-- from it. Dims and token ids are 1-based.
local tide = require("tide")
local nn = tide.nn
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local is_finite = ported.is_finite

local function assert_close(want, got, tol, what)
    assert(math.abs(want - got) <= (tol or 1e-4),
        ("%s: want %.6f, got %.6f"):format(what or "value", want, got))
end

-- PyTorch 1.13 numbers (/tmp/kw/p50check*.py: the repository's classes, the same weights)
local PT = {
    kv_logits_sum = 0.102206,
    kv_logits_last = { 0.135851, 0.219948, 0.275350, 0.294830, 0.275847 },
    kv_tokens = { 15, 2, 27, 8, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3 },
    rope_cos_sum = 97.428940, rope_sin_sum = 4.164418, rope_sin_last = 0.017627,
    rope_plain_cos_sum = 86.309570,
    llama_logits_sum = 0.054396,
    llama_logits_last = { -0.022161, 0.010622, 0.038043, 0.046259, 0.031122 },
    qwen_logits_sum = -0.047253,
    qwen_logits_last = { 0.042210, 0.030684, 0.003669, -0.025199, -0.041345 },
}

-- deterministic weights, the same in the Python check:
-- for i, (n, p) in enumerate(model.named_parameters()):
--     p.copy_(torch.sin(torch.arange(p.numel()) * 0.37 + i).reshape(p.shape) * 0.2)
local function det_init(model)
    tide.no_grad(function()
        for i, np in ipairs(model:named_parameters()) do
            local p = np[2]
            p:copy_((tide.sin(tide.arange(0, p:numel()) * 0.37 + (i - 1)) * 0.2):reshape(p.shape))
        end
    end)
end

---------------------------------------------------------------------------------------------
-- 1. ch04/03_kv-cache/gpt_with_kv_cache.py
---------------------------------------------------------------------------------------------
-- class MultiHeadAttention(nn.Module):
local MultiHeadAttention = nn.Module:extend("MultiHeadAttention")
-- def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
function MultiHeadAttention:init(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
    assert(d_out % num_heads == 0, "d_out must be divisible by num_heads")
    self.d_out = d_out
    self.num_heads = num_heads
    -- self.head_dim = d_out // num_heads
    self.head_dim = math.floor(d_out / num_heads)
    self.W_query = nn.Linear(d_in, d_out, { bias = qkv_bias })
    self.W_key = nn.Linear(d_in, d_out, { bias = qkv_bias })
    self.W_value = nn.Linear(d_in, d_out, { bias = qkv_bias })
    self.out_proj = nn.Linear(d_out, d_out)
    self.dropout = nn.Dropout(dropout)
    -- self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1),
    --     persistent=False)
    self:register_buffer("mask",
        tide.triu(tide.ones(context_length, context_length), { diagonal = 1 }),
        { persistent = false })

    -- self.register_buffer("cache_k", None, persistent=False)
    self:register_buffer("cache_k", nil, { persistent = false })
    self:register_buffer("cache_v", nil, { persistent = false })
    self.ptr_current_pos = 0
end

-- def forward(self, x, use_cache=False):
function MultiHeadAttention:forward(x, use_cache)
    local b, num_tokens, d_in = unpack(x.shape) -- luacheck: ignore d_in

    local keys_new = self.W_key(x)
    local values_new = self.W_value(x)
    local queries = self.W_query(x)

    keys_new = keys_new:view(b, num_tokens, self.num_heads, self.head_dim)
    values_new = values_new:view(b, num_tokens, self.num_heads, self.head_dim)
    queries = queries:view(b, num_tokens, self.num_heads, self.head_dim)

    local keys, values
    if use_cache then
        -- if self.cache_k is None:
        if self.cache_k == nil then
            self.cache_k, self.cache_v = keys_new, values_new
        else
            -- self.cache_k = torch.cat([self.cache_k, keys_new], dim=1)
            self.cache_k = tide.cat({ self.cache_k, keys_new }, { dim = 2 })
            self.cache_v = tide.cat({ self.cache_v, values_new }, { dim = 2 })
        end
        keys, values = self.cache_k, self.cache_v
    else
        keys, values = keys_new, values_new
    end

    keys = keys:transpose(2, 3)
    queries = queries:transpose(2, 3)
    values = values:transpose(2, 3)

    local attn_scores = queries:matmul(keys:transpose(3, 4))

    local num_tokens_Q = queries.shape[-2]
    local num_tokens_K = keys.shape[-2]
    local mask_bool
    if use_cache then
        -- mask_bool = self.mask.bool()[
        --     self.ptr_current_pos:self.ptr_current_pos + num_tokens_Q, :num_tokens_K]
        mask_bool = self.mask:bool()[{
            { self.ptr_current_pos + 1, self.ptr_current_pos + num_tokens_Q }, { 1, num_tokens_K } }]
        self.ptr_current_pos = self.ptr_current_pos + num_tokens_Q
    else
        -- mask_bool = self.mask.bool()[:num_tokens_Q, :num_tokens_K]
        mask_bool = self.mask:bool()[{ { 1, num_tokens_Q }, { 1, num_tokens_K } }]
    end

    attn_scores:masked_fill_(mask_bool, -tide.inf)

    local attn_weights = tide.softmax(attn_scores / keys.shape[-1] ^ 0.5, { dim = -1 })
    attn_weights = self.dropout(attn_weights)

    local context_vec = attn_weights:matmul(values):transpose(2, 3)
    context_vec = context_vec:contiguous():view(b, num_tokens, self.d_out)
    context_vec = self.out_proj(context_vec)
    return context_vec
end
nn.signature(MultiHeadAttention, "self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False")
nn.signature(MultiHeadAttention, "self, x, use_cache=False", "forward")

function MultiHeadAttention:reset_cache()
    self.cache_k, self.cache_v = nil, nil
    self.ptr_current_pos = 0
end

-- class LayerNorm(nn.Module):
local LayerNorm = nn.Module:extend("LayerNorm")
function LayerNorm:init(emb_dim)
    self.eps = 1e-5
    self.scale = nn.Parameter(tide.ones(emb_dim))
    self.shift = nn.Parameter(tide.zeros(emb_dim))
end

function LayerNorm:forward(x)
    local mean = x:mean({ dim = -1, keepdim = true })
    local var = x:var({ dim = -1, keepdim = true, unbiased = false })
    local norm_x = (x - mean) / tide.sqrt(var + self.eps)
    return self.scale * norm_x + self.shift
end

local GELU = nn.Module:extend("GELU")
function GELU:init() end

function GELU:forward(x)
    return 0.5 * x * (1 + tide.tanh(
        tide.sqrt(tide.tensor(2.0 / tide.pi)) *
        (x + 0.044715 * tide.pow(x, 3))
    ))
end

local FeedForward = nn.Module:extend("FeedForward")
function FeedForward:init(cfg)
    self.layers = nn.Sequential(
        nn.Linear(cfg["emb_dim"], 4 * cfg["emb_dim"]),
        GELU(),
        nn.Linear(4 * cfg["emb_dim"], cfg["emb_dim"])
    )
end

function FeedForward:forward(x)
    return self.layers(x)
end

local TransformerBlock = nn.Module:extend("TransformerBlock")
function TransformerBlock:init(cfg)
    -- self.att = MultiHeadAttention(d_in=cfg["emb_dim"], d_out=cfg["emb_dim"],
    --     context_length=cfg["context_length"], num_heads=cfg["n_heads"],
    --     dropout=cfg["drop_rate"], qkv_bias=cfg["qkv_bias"])
    self.att = MultiHeadAttention({
        d_in = cfg["emb_dim"],
        d_out = cfg["emb_dim"],
        context_length = cfg["context_length"],
        num_heads = cfg["n_heads"],
        dropout = cfg["drop_rate"],
        qkv_bias = cfg["qkv_bias"] })
    self.ff = FeedForward(cfg)
    self.norm1 = LayerNorm(cfg["emb_dim"])
    self.norm2 = LayerNorm(cfg["emb_dim"])
    self.drop_shortcut = nn.Dropout(cfg["drop_rate"])
end

-- def forward(self, x, use_cache=False):
function TransformerBlock:forward(x, use_cache)
    local shortcut = x
    x = self.norm1(x)
    -- x = self.att(x, use_cache=use_cache)
    x = self.att(x, { use_cache = use_cache })
    x = self.drop_shortcut(x)
    x = x + shortcut

    shortcut = x
    x = self.norm2(x)
    x = self.ff(x)
    x = self.drop_shortcut(x)
    x = x + shortcut
    return x
end
nn.signature(TransformerBlock, "self, x, use_cache=False", "forward")

-- class GPTModel(nn.Module):
local GPTModel = nn.Module:extend("GPTModel")
function GPTModel:init(cfg)
    self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
    self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
    self.drop_emb = nn.Dropout(cfg["drop_rate"])

    -- self.trf_blocks = nn.ModuleList(
    --     [TransformerBlock(cfg) for _ in range(cfg["n_layers"])])
    local blocks = {}
    for _ = 1, cfg["n_layers"] do blocks[#blocks + 1] = TransformerBlock(cfg) end
    self.trf_blocks = nn.ModuleList(blocks)

    self.current_pos = 0

    self.final_norm = LayerNorm(cfg["emb_dim"])
    self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], { bias = false })
end

-- def forward(self, in_idx, use_cache=False):
function GPTModel:forward(in_idx, use_cache)
    local batch_size, seq_len = unpack(in_idx.shape) -- luacheck: ignore batch_size
    local tok_embeds = self.tok_emb(in_idx)

    local pos_ids
    if use_cache then
        -- pos_ids = torch.arange(self.current_pos, self.current_pos + seq_len, device=in_idx.device, dtype=torch.long)
        -- (positions are 1-based)
        pos_ids = tide.arange(self.current_pos + 1, self.current_pos + seq_len + 1,
            { device = in_idx.device, dtype = tide.long })
        self.current_pos = self.current_pos + seq_len
    else
        -- pos_ids = torch.arange(0, seq_len, device=in_idx.device, dtype=torch.long)
        pos_ids = tide.arange(1, seq_len + 1, { device = in_idx.device, dtype = tide.long })
    end
    local pos_embeds = self.pos_emb(pos_ids):unsqueeze(1)

    local x = tok_embeds + pos_embeds
    x = self.drop_emb(x)

    -- for blk in self.trf_blocks:
    --     x = blk(x, use_cache=use_cache)
    for _, blk in ipairs(self.trf_blocks) do
        x = blk(x, { use_cache = use_cache })
    end

    x = self.final_norm(x)
    local logits = self.out_head(x)
    return logits
end
nn.signature(GPTModel, "self, in_idx, use_cache=False", "forward")

function GPTModel:reset_kv_cache()
    for _, blk in ipairs(self.trf_blocks) do
        blk.att:reset_cache()
    end
    self.current_pos = 0
end

local function generate_text_simple(model, idx, max_new_tokens, context_size)
    for _ = 1, max_new_tokens do
        -- idx_cond = idx[:, -context_size:]
        local idx_cond = idx[{ {}, { -context_size, -1 } }]
        local logits = tide.no_grad(function() return model(idx_cond) end)
        -- logits = logits[:, -1, :]
        logits = logits[{ {}, -1, {} }]
        local idx_next = tide.argmax(logits, { dim = -1, keepdim = true })
        -- idx = torch.cat((idx, idx_next), dim=1)
        idx = tide.cat({ idx, idx_next }, { dim = 2 })
    end
    return idx
end

-- def generate_text_simple_cached(model, idx, max_new_tokens, context_size=None, use_cache=True):
local function generate_text_simple_cached(model, idx, max_new_tokens, context_size, use_cache)
    if use_cache == nil then use_cache = true end
    model:eval()
    -- ctx_len = context_size or model.pos_emb.num_embeddings
    local ctx_len = context_size or model.pos_emb.num_embeddings

    tide.no_grad(function()
        if use_cache then
            model:reset_kv_cache()
            -- logits = model(idx[:, -ctx_len:], use_cache=True)
            local logits = model(idx[{ {}, { -ctx_len, -1 } }], { use_cache = true })

            for _ = 1, max_new_tokens do
                -- next_idx = logits[:, -1].argmax(dim=-1, keepdim=True)
                local next_idx = logits[{ {}, -1 }]:argmax({ dim = -1, keepdim = true })
                idx = tide.cat({ idx, next_idx }, { dim = 2 })
                logits = model(next_idx, { use_cache = true })
            end
        else
            for _ = 1, max_new_tokens do
                local logits = model(idx[{ {}, { -ctx_len, -1 } }], { use_cache = false })
                local next_idx = logits[{ {}, -1 }]:argmax({ dim = -1, keepdim = true })
                idx = tide.cat({ idx, next_idx }, { dim = 2 })
            end
        end
    end)
    return idx
end

local GPT_CONFIG_TINY = {
    vocab_size = 50, context_length = 16, emb_dim = 16, n_heads = 2, n_layers = 2,
    drop_rate = 0.1, qkv_bias = false,
}

describe("LLMs-from-scratch ch04/03_kv-cache/gpt_with_kv_cache.py", function()
    it("register_buffer(name, None, persistent=False), cache buffers set and reset", function()
        tide.manual_seed(123)
        local mha = MultiHeadAttention(16, 16, 16, 0.0, 2)
        assert.is_nil(mha.cache_k)
        assert.is_nil(mha:state_dict()["mask"]) -- persistent=False
        local x = tide.randn(1, 3, 16)
        local y = mha(x, { use_cache = true })
        assert.same({ 1, 3, 16 }, y.shape)
        assert.same({ 1, 3, 2, 8 }, mha.cache_k.shape)
        assert.equal(3, mha.ptr_current_pos)
        mha(tide.randn(1, 1, 16), { use_cache = true })
        assert.same({ 1, 4, 2, 8 }, mha.cache_k.shape)
        -- cache_k is a (non-persistent) buffer while set
        local names = {}
        for _, nb in ipairs(mha:named_buffers()) do names[#names + 1] = nb[1] end
        table.sort(names)
        assert.same({ "cache_k", "cache_v", "mask" }, names)
        assert.is_nil(mha:state_dict()["cache_k"])
        mha:reset_cache()
        assert.is_nil(mha.cache_k)
        assert.equal(0, mha.ptr_current_pos)
    end)

    it("GPTModel: logits match PyTorch, cached generation == uncached", function()
        tide.manual_seed(123)
        local model = GPTModel(GPT_CONFIG_TINY)
        det_init(model)
        model:eval()
        -- encoded_tensor = torch.tensor(encoded, device=device).unsqueeze(0)
        local encoded = { 16, 3, 28, 9 } -- 0-based [15, 2, 27, 8]
        local encoded_tensor = tide.tensor(encoded):unsqueeze(1)
        local logits = tide.no_grad(function() return model(encoded_tensor) end)
        assert.same({ 1, 4, 50 }, logits.shape)
        -- PyTorch 1.13, the same weights: logits.sum(), logits[0, -1, :5]
        assert_close(PT.kv_logits_sum, logits:sum():item(), 2e-3, "logits.sum()")
        for j = 1, 5 do
            assert_close(PT.kv_logits_last[j], logits[{ 1, -1, j }]:item(), 1e-4, "logits[0, -1, j]")
        end

        -- token_ids = generate_text_simple_cached(model=model, idx=encoded_tensor, max_new_tokens=10)
        local token_ids = generate_text_simple_cached(model, encoded_tensor, 10)
        assert.same({ 1, 14 }, token_ids.shape)
        local uncached = generate_text_simple_cached(model, encoded_tensor, 10, nil, false)
        local simple = generate_text_simple(model, encoded_tensor, 10, GPT_CONFIG_TINY["context_length"])
        assert.same(uncached:tolist(), token_ids:tolist())
        assert.same(simple:tolist(), token_ids:tolist())
        -- PyTorch's tokens (0-based) + 1
        local want = {}
        for i, t in ipairs(PT.kv_tokens) do want[i] = t + 1 end
        assert.same({ want }, token_ids:tolist())
        -- len(token_ids[0])
        assert.equal(14, #token_ids[1])
    end)
end)

---------------------------------------------------------------------------------------------
-- 1b. ch04/03_kv-cache/gpt_with_kv_cache_optimized.py: a preallocated sliding-window cache
---------------------------------------------------------------------------------------------
local MHAOpt = nn.Module:extend("MultiHeadAttention")
-- def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False, max_seq_len=None, window_size=None):
function MHAOpt:init(d_in, d_out, context_length, dropout, num_heads, qkv_bias, max_seq_len, window_size)
    assert(d_out % num_heads == 0, "d_out must be divisible by num_heads")
    self.d_out = d_out
    self.num_heads = num_heads
    self.head_dim = math.floor(d_out / num_heads)
    self.W_query = nn.Linear(d_in, d_out, { bias = qkv_bias })
    self.W_key = nn.Linear(d_in, d_out, { bias = qkv_bias })
    self.W_value = nn.Linear(d_in, d_out, { bias = qkv_bias })
    self.out_proj = nn.Linear(d_out, d_out)
    self.dropout = nn.Dropout(dropout)

    self.max_seq_len = max_seq_len or context_length
    self.window_size = window_size or self.max_seq_len
    self:register_buffer("cache_k", nil, { persistent = false })
    self:register_buffer("cache_v", nil, { persistent = false })
end
nn.signature(MHAOpt, "self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False, " ..
    "max_seq_len=None, window_size=None")

function MHAOpt:forward(x, use_cache)
    local b, num_tokens, d_in = unpack(x.shape) -- luacheck: ignore d_in
    if use_cache then
        assert(num_tokens <= self.window_size, ("Input chunk size (%d) exceeds KV cache window size (%d). ")
            :format(num_tokens, self.window_size))
    end

    local keys_new = self.W_key(x)
    local values_new = self.W_value(x)
    local queries = self.W_query(x)

    keys_new = keys_new:view(b, num_tokens, self.num_heads, self.head_dim)
    values_new = values_new:view(b, num_tokens, self.num_heads, self.head_dim)
    queries = queries:view(b, num_tokens, self.num_heads, self.head_dim)

    keys_new = keys_new:transpose(2, 3)
    values_new = values_new:transpose(2, 3)
    queries = queries:transpose(2, 3)

    local keys, values
    if use_cache then
        -- if self.cache_k is None or self.cache_k.size(0) != b:
        if self.cache_k == nil or self.cache_k:size(1) ~= b then
            -- self.cache_k = torch.zeros(b, self.num_heads, self.window_size, self.head_dim, device=x.device)
            self.cache_k = tide.zeros(b, self.num_heads,
                self.window_size, self.head_dim,
                { device = x.device })
            self.cache_v = tide.zeros_like(self.cache_k)
            self.ptr_cur = 0
        end

        if self.ptr_cur + num_tokens > self.window_size then
            local overflow = self.ptr_cur + num_tokens - self.window_size
            -- self.cache_k[:, :, :-overflow, :] = self.cache_k[:, :, overflow:, :].clone()
            self.cache_k[{ {}, {}, { 1, -overflow - 1 }, {} }] = self.cache_k[{ {}, {}, { overflow + 1, -1 }, {} }]:clone()
            self.cache_v[{ {}, {}, { 1, -overflow - 1 }, {} }] = self.cache_v[{ {}, {}, { overflow + 1, -1 }, {} }]:clone()
            self.ptr_cur = self.ptr_cur - overflow
        end

        -- self.cache_k[:, :, self.ptr_cur:self.ptr_cur + num_tokens, :] = keys_new
        self.cache_k[{ {}, {}, { self.ptr_cur + 1, self.ptr_cur + num_tokens }, {} }] = keys_new
        self.cache_v[{ {}, {}, { self.ptr_cur + 1, self.ptr_cur + num_tokens }, {} }] = values_new
        self.ptr_cur = self.ptr_cur + num_tokens

        -- keys = self.cache_k[:, :, :self.ptr_cur, :]
        keys = self.cache_k[{ {}, {}, { 1, self.ptr_cur }, {} }]
        values = self.cache_v[{ {}, {}, { 1, self.ptr_cur }, {} }]
    else
        keys, values = keys_new, values_new
        self.ptr_cur = 0
    end
    local attn_scores = queries:matmul(keys:transpose(3, 4))

    -- K = attn_scores.size(-1)
    local K = attn_scores:size(-1)
    local causal_mask
    if num_tokens == K then
        causal_mask = tide.triu(tide.ones(num_tokens, K, { device = x.device, dtype = tide.bool }), { diagonal = 1 })
    else
        local offset = K - num_tokens
        -- row_idx = torch.arange(num_tokens, device=x.device).unsqueeze(1)
        local row_idx = tide.arange(num_tokens, { device = x.device }):unsqueeze(2)
        local col_idx = tide.arange(K, { device = x.device }):unsqueeze(1)
        -- causal_mask = row_idx + offset < col_idx   (Lua's < gives one boolean: lt)
        causal_mask = (row_idx + offset):lt(col_idx)
    end

    -- attn_scores.masked_fill_(causal_mask.unsqueeze(0).unsqueeze(0), -torch.inf)
    attn_scores:masked_fill_(causal_mask:unsqueeze(1):unsqueeze(1), -tide.inf)

    local attn_weights = tide.softmax(attn_scores / keys.shape[-1] ^ 0.5, { dim = -1 })
    attn_weights = self.dropout(attn_weights)
    local context_vec = attn_weights:matmul(values):transpose(2, 3)
    context_vec = context_vec:contiguous():view(b, num_tokens, self.d_out)
    context_vec = self.out_proj(context_vec)
    return context_vec
end
nn.signature(MHAOpt, "self, x, use_cache=False", "forward")

function MHAOpt:reset_cache()
    self.cache_k, self.cache_v = nil, nil
end

describe("LLMs-from-scratch ch04/03_kv-cache/gpt_with_kv_cache_optimized.py", function()
    it("preallocated cache: token-by-token == full pass; a full window slides", function()
        tide.manual_seed(3)
        local mha = MHAOpt({ d_in = 16, d_out = 16, context_length = 16, dropout = 0.0, num_heads = 2,
            window_size = 4 })
        mha:eval()
        local x = tide.randn(2, 4, 16)
        tide.no_grad(function()
            local full = mha(x)
            local steps = {}
            for t = 1, 4 do
                steps[t] = mha(x[{ {}, { t, t }, {} }], { use_cache = true })
            end
            assert.same({ 2, 4, 8, 4 }, { mha.cache_k.shape[1], mha.cache_k.shape[3], mha.cache_k.shape[4], mha.ptr_cur })
            assert(tide.allclose(full, tide.cat(steps, { dim = 2 }), { atol = 1e-5 }))
            -- a fifth token overflows the window of 4: the oldest key shifts out
            local k2 = mha.cache_k[{ {}, {}, 2, {} }]:clone()
            mha(tide.randn(2, 1, 16), { use_cache = true })
            assert.equal(4, mha.ptr_cur)
            assert(tide.equal(k2, mha.cache_k[{ {}, {}, 1, {} }]))
            mha:reset_cache()
            assert.is_nil(mha.cache_k)
        end)
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. ch05/07_gpt_to_llama/standalone-llama32.ipynb
---------------------------------------------------------------------------------------------
-- class FeedForward(nn.Module):
local LlamaFeedForward = nn.Module:extend("FeedForward")
function LlamaFeedForward:init(cfg)
    -- self.fc1 = nn.Linear(cfg["emb_dim"], cfg["hidden_dim"], dtype=cfg["dtype"], bias=False)
    self.fc1 = nn.Linear(cfg["emb_dim"], cfg["hidden_dim"], { dtype = cfg["dtype"], bias = false })
    self.fc2 = nn.Linear(cfg["emb_dim"], cfg["hidden_dim"], { dtype = cfg["dtype"], bias = false })
    self.fc3 = nn.Linear(cfg["hidden_dim"], cfg["emb_dim"], { dtype = cfg["dtype"], bias = false })
end

function LlamaFeedForward:forward(x)
    local x_fc1 = self.fc1(x)
    local x_fc2 = self.fc2(x)
    -- x = nn.functional.silu(x_fc1) * x_fc2
    x = nn.functional.silu(x_fc1) * x_fc2
    return self.fc3(x)
end

-- def compute_rope_params(head_dim, theta_base=10_000, context_length=4096, freq_config=None,
--                         dtype=torch.float32):
local function compute_rope_params(head_dim, theta_base, context_length, freq_config, dtype)
    theta_base, context_length = theta_base or 10000, context_length or 4096
    dtype = dtype or tide.float32
    assert(head_dim % 2 == 0, "Embedding dimension must be even")

    -- inv_freq = 1.0 / (theta_base ** (torch.arange(0, head_dim, 2, dtype=dtype)[: (head_dim // 2)].float() / head_dim))
    local inv_freq = 1.0 / (theta_base ^ (tide.arange(0, head_dim, 2, { dtype = dtype })[{
        { 1, math.floor(head_dim / 2) } }]:float() / head_dim))

    if freq_config ~= nil then
        local low_freq_wavelen = freq_config["original_context_length"] / freq_config["low_freq_factor"]
        local high_freq_wavelen = freq_config["original_context_length"] / freq_config["high_freq_factor"]

        local wavelen = 2 * tide.pi / inv_freq

        -- inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / freq_config["factor"], inv_freq)
        local inv_freq_llama = tide.where(
            wavelen:gt(low_freq_wavelen), inv_freq / freq_config["factor"], inv_freq
        )

        local smooth_factor = (freq_config["original_context_length"] / wavelen - freq_config["low_freq_factor"]) / (
            freq_config["high_freq_factor"] - freq_config["low_freq_factor"]
        )

        local smoothed_inv_freq = (
            (1 - smooth_factor) * (inv_freq / freq_config["factor"]) + smooth_factor * inv_freq
        )

        -- is_medium_freq = (wavelen <= low_freq_wavelen) & (wavelen >= high_freq_wavelen)
        -- (Lua 5.1 and LuaJIT have no `&` operator: logical_and, as on bool tensors in PyTorch)
        local is_medium_freq = wavelen:le(low_freq_wavelen):logical_and(wavelen:ge(high_freq_wavelen))
        inv_freq_llama = tide.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)
        inv_freq = inv_freq_llama
    end

    local positions = tide.arange(context_length, { dtype = dtype })
    local angles = positions:unsqueeze(2) * inv_freq:unsqueeze(1)
    -- angles = torch.cat([angles, angles], dim=1)
    angles = tide.cat({ angles, angles }, { dim = 2 })

    local cos = tide.cos(angles)
    local sin = tide.sin(angles)
    return cos, sin
end

local function apply_rope(x, cos, sin)
    local batch_size, num_heads, seq_len, head_dim = unpack(x.shape) -- luacheck: ignore
    assert(head_dim % 2 == 0, "Head dimension must be even")

    -- x1 = x[..., : head_dim // 2]
    local x1 = x[{ "...", { 1, math.floor(head_dim / 2) } }]
    -- x2 = x[..., head_dim // 2 :]
    local x2 = x[{ "...", { math.floor(head_dim / 2) + 1, -1 } }]

    -- cos = cos[:seq_len, :].unsqueeze(0).unsqueeze(0)
    cos = cos[{ { 1, seq_len }, {} }]:unsqueeze(1):unsqueeze(1)
    sin = sin[{ { 1, seq_len }, {} }]:unsqueeze(1):unsqueeze(1)

    -- rotated = torch.cat((-x2, x1), dim=-1)
    local rotated = tide.cat({ -x2, x1 }, { dim = -1 })
    local x_rotated = (x * cos) + (rotated * sin)

    -- return x_rotated.to(dtype=x.dtype)
    return x_rotated:to({ dtype = x.dtype })
end

-- class GroupedQueryAttention(nn.Module):
local GroupedQueryAttention = nn.Module:extend("GroupedQueryAttention")
-- def __init__(self, d_in, d_out, num_heads, num_kv_groups, dtype=None):
function GroupedQueryAttention:init(d_in, d_out, num_heads, num_kv_groups, dtype)
    assert(d_out % num_heads == 0, "d_out must be divisible by num_heads")
    assert(num_heads % num_kv_groups == 0, "num_heads must be divisible by num_kv_groups")

    self.d_out = d_out
    self.num_heads = num_heads
    self.head_dim = math.floor(d_out / num_heads)

    -- self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=False, dtype=dtype)
    self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, { bias = false, dtype = dtype })
    self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, { bias = false, dtype = dtype })
    self.num_kv_groups = num_kv_groups
    -- self.group_size = num_heads // num_kv_groups
    self.group_size = math.floor(num_heads / num_kv_groups)

    self.W_query = nn.Linear(d_in, d_out, { bias = false, dtype = dtype })
    self.out_proj = nn.Linear(d_out, d_out, { bias = false, dtype = dtype })
end
nn.signature(GroupedQueryAttention, "self, d_in, d_out, num_heads, num_kv_groups, dtype=None")

function GroupedQueryAttention:forward(x, mask, cos, sin)
    local b, num_tokens, d_in = unpack(x.shape) -- luacheck: ignore d_in

    local queries = self.W_query(x)
    local keys = self.W_key(x)
    local values = self.W_value(x)

    queries = queries:view(b, num_tokens, self.num_heads, self.head_dim)
    keys = keys:view(b, num_tokens, self.num_kv_groups, self.head_dim)
    values = values:view(b, num_tokens, self.num_kv_groups, self.head_dim)

    keys = keys:transpose(2, 3)
    values = values:transpose(2, 3)
    queries = queries:transpose(2, 3)

    keys = apply_rope(keys, cos, sin)
    queries = apply_rope(queries, cos, sin)

    -- keys = keys.repeat_interleave(self.group_size, dim=1)
    keys = keys:repeat_interleave(self.group_size, { dim = 2 })
    values = values:repeat_interleave(self.group_size, { dim = 2 })

    local attn_scores = queries:matmul(keys:transpose(3, 4))
    attn_scores = attn_scores:masked_fill(mask, -tide.inf)

    local attn_weights = tide.softmax(attn_scores / keys.shape[-1] ^ 0.5, { dim = -1 })
    assert(keys.shape[-1] == self.head_dim)

    local context_vec = attn_weights:matmul(values):transpose(2, 3)
    context_vec = context_vec:reshape(b, num_tokens, self.d_out)
    context_vec = self.out_proj(context_vec)
    return context_vec
end

local LlamaBlock = nn.Module:extend("TransformerBlock")
function LlamaBlock:init(cfg)
    -- self.att = GroupedQueryAttention(d_in=cfg["emb_dim"], d_out=cfg["emb_dim"],
    --     num_heads=cfg["n_heads"], num_kv_groups=cfg["n_kv_groups"], dtype=cfg["dtype"])
    self.att = GroupedQueryAttention({
        d_in = cfg["emb_dim"],
        d_out = cfg["emb_dim"],
        num_heads = cfg["n_heads"],
        num_kv_groups = cfg["n_kv_groups"],
        dtype = cfg["dtype"] })
    self.ff = LlamaFeedForward(cfg)
    -- self.norm1 = nn.RMSNorm(cfg["emb_dim"], eps=1e-5, dtype=cfg["dtype"])
    self.norm1 = nn.RMSNorm(cfg["emb_dim"], { eps = 1e-5, dtype = cfg["dtype"] })
    self.norm2 = nn.RMSNorm(cfg["emb_dim"], { eps = 1e-5, dtype = cfg["dtype"] })
end

function LlamaBlock:forward(x, mask, cos, sin)
    local shortcut = x
    x = self.norm1(x)
    x = self.att(x, mask, cos, sin)
    x = x + shortcut

    shortcut = x
    x = self.norm2(x)
    x = self.ff(x)
    x = x + shortcut
    return x
end

-- class Llama3Model(nn.Module):
local Llama3Model = nn.Module:extend("Llama3Model")
function Llama3Model:init(cfg)
    self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"], { dtype = cfg["dtype"] })

    local blocks = {}
    for _ = 1, cfg["n_layers"] do blocks[#blocks + 1] = LlamaBlock(cfg) end
    self.trf_blocks = nn.ModuleList(blocks)

    self.final_norm = nn.RMSNorm(cfg["emb_dim"], { eps = 1e-5, dtype = cfg["dtype"] })
    self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], { bias = false, dtype = cfg["dtype"] })

    -- cos, sin = compute_rope_params(head_dim=cfg["emb_dim"] // cfg["n_heads"],
    --     theta_base=cfg["rope_base"], context_length=cfg["context_length"],
    --     freq_config=cfg["rope_freq"])
    local cos, sin = compute_rope_params(
        math.floor(cfg["emb_dim"] / cfg["n_heads"]),
        cfg["rope_base"],
        cfg["context_length"],
        cfg["rope_freq"]
    )
    self:register_buffer("cos", cos, { persistent = false })
    self:register_buffer("sin", sin, { persistent = false })
    self.cfg = cfg
end

function Llama3Model:forward(in_idx)
    local tok_embeds = self.tok_emb(in_idx)
    local x = tok_embeds

    local num_tokens = x.shape[2]
    -- mask = torch.triu(torch.ones(num_tokens, num_tokens, device=x.device, dtype=torch.bool), diagonal=1)
    local mask = tide.triu(tide.ones(num_tokens, num_tokens, { device = x.device, dtype = tide.bool }),
        { diagonal = 1 })

    for _, block in ipairs(self.trf_blocks) do
        x = block(x, mask, self.cos, self.sin)
    end
    x = self.final_norm(x)
    local logits = self.out_head(x:to(self.cfg["dtype"]))
    return logits
end

local LLAMA32_CONFIG = {
    vocab_size = 50,
    context_length = 16,
    emb_dim = 32,
    n_heads = 4,
    n_layers = 2,
    hidden_dim = 64,
    n_kv_groups = 2,
    rope_base = 500000.0,
    dtype = tide.float32,
    rope_freq = {
        factor = 32.0,
        low_freq_factor = 1.0,
        high_freq_factor = 4.0,
        original_context_length = 64, -- 8192 in Llama 3.2: 64 puts one of head_dim 8's 4 frequencies in each band
    },
}

describe("LLMs-from-scratch ch05/07_gpt_to_llama/standalone-llama32.ipynb", function()
    it("compute_rope_params with Llama 3 frequency smoothing matches PyTorch", function()
        local cos, sin = compute_rope_params(8, 500000.0, 16, LLAMA32_CONFIG["rope_freq"])
        assert.same({ 16, 8 }, cos.shape)
        assert_close(PT.rope_cos_sum, cos:sum():item(), 1e-4, "cos.sum()")
        assert_close(PT.rope_sin_sum, sin:sum():item(), 1e-4, "sin.sum()")
        assert_close(PT.rope_sin_last, sin[{ -1, 2 }]:item(), 1e-5, "sin[-1, 1]")
        -- no freq_config: plain RoPE
        local cos2 = compute_rope_params(8, 10000, 16)
        assert_close(PT.rope_plain_cos_sum, cos2:sum():item(), 1e-4, "plain cos.sum()")
    end)

    it("Llama3Model: GQA with repeat_interleave, RMSNorm(dtype=), logits match PyTorch; trains", function()
        tide.manual_seed(123)
        local model = Llama3Model(LLAMA32_CONFIG)
        det_init(model)
        local idx = tide.tensor({ { 16, 3, 28, 9, 41, 2 } })
        local logits = tide.no_grad(function() return model(idx) end)
        assert.same({ 1, 6, 50 }, logits.shape)
        assert_close(PT.llama_logits_sum, logits:sum():item(), 2e-3, "logits.sum()")
        for j = 1, 5 do
            assert_close(PT.llama_logits_last[j], logits[{ 1, -1, j }]:item(), 1e-4, "logits[0, -1, j]")
        end
        assert.is_nil(model:state_dict()["cos"]) -- persistent=False

        -- a few AdamW steps on a random batch: the loss falls
        tide.manual_seed(1)
        local optimizer = tide.optim.AdamW(model:parameters(), { lr = 0.004, weight_decay = 0.1 })
        local x = tide.randint(1, 51, { 4, 16 })
        local y = tide.randint(1, 51, { 4, 16 })
        local losses = {}
        for step = 1, 5 do
            optimizer:zero_grad()
            local out = model(x)
            -- loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), target_batch.flatten())
            local loss = nn.functional.cross_entropy(out:flatten(1, 2), y:flatten())
            loss:backward()
            optimizer:step()
            losses[step] = loss:item()
            assert(is_finite(losses[step]))
        end
        assert(losses[5] < losses[1], "loss should fall")
    end)
end)

describe("nn.RMSNorm takes PyTorch 2.4's device and dtype", function()
    it("nn.RMSNorm(emb_dim, eps=1e-5, dtype=...), positionally and by name; bad dtype raises", function()
        -- nn.RMSNorm(cfg["emb_dim"], eps=1e-5, dtype=torch.float64)
        local m = nn.RMSNorm(8, { eps = 1e-5, dtype = tide.float64 })
        assert.equal("float64", m.weight.dtype)
        assert.equal(1e-5, m.eps)
        -- nn.RMSNorm(8, 1e-5, True, None, torch.float64)
        assert.equal("float64", nn.RMSNorm(8, 1e-5, true, nil, tide.float64).weight.dtype)
        assert.equal("float32", nn.RMSNorm({ 8 }, { eps = 1e-6 }).weight.dtype)
        assert.is_nil(nn.RMSNorm(8, { elementwise_affine = false, dtype = tide.float64 }).weight)
        local y = m(tide.randn(2, 8, { dtype = tide.float64 }))
        assert.equal("float64", y.dtype)
        assert.has_error(function() nn.RMSNorm(8, { eps = 1e-5, dtype = "int9" }) end,
            "tide: RMSNorm: dtype must be a floating-point dtype (tide.float32, tide.float64, " ..
            "tide.float16, tide.bfloat16), got int9; the parameters are floating point")
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. ch05/11_qwen3/standalone-qwen3.ipynb (FeedForward, compute_rope_params and apply_rope are
-- the Llama 3.2 notebook's, above: Qwen3's compute_rope_params is it without freq_config)
---------------------------------------------------------------------------------------------
-- class RMSNorm(nn.Module):
local QwenRMSNorm = nn.Module:extend("RMSNorm")
-- def __init__(self, emb_dim, eps=1e-6, bias=False, qwen3_compatible=True):
function QwenRMSNorm:init(emb_dim, eps, bias, qwen3_compatible)
    self.eps = eps
    self.qwen3_compatible = qwen3_compatible
    self.scale = nn.Parameter(tide.ones(emb_dim))
    -- self.shift = nn.Parameter(torch.zeros(emb_dim)) if bias else None
    self.shift = bias and nn.Parameter(tide.zeros(emb_dim)) or nil
end
nn.signature(QwenRMSNorm, "self, emb_dim, eps=1e-6, bias=False, qwen3_compatible=True")

function QwenRMSNorm:forward(x)
    local input_dtype = x.dtype
    if self.qwen3_compatible then
        x = x:to(tide.float32)
    end
    local variance = x:pow(2):mean({ dim = -1, keepdim = true })
    local norm_x = x * tide.rsqrt(variance + self.eps)
    norm_x = norm_x * self.scale
    -- if self.shift is not None:
    if self.shift ~= nil then
        norm_x = norm_x + self.shift
    end
    return norm_x:to(input_dtype)
end

local QwenGQA = nn.Module:extend("GroupedQueryAttention")
-- def __init__(self, d_in, num_heads, num_kv_groups, head_dim=None, qk_norm=False, dtype=None):
function QwenGQA:init(d_in, num_heads, num_kv_groups, head_dim, qk_norm, dtype)
    assert(num_heads % num_kv_groups == 0, "num_heads must be divisible by num_kv_groups")
    self.num_heads = num_heads
    self.num_kv_groups = num_kv_groups
    self.group_size = math.floor(num_heads / num_kv_groups)

    if head_dim == nil then
        assert(d_in % num_heads == 0, "`d_in` must be divisible by `num_heads` if `head_dim` is not set")
        head_dim = math.floor(d_in / num_heads)
    end
    self.head_dim = head_dim
    self.d_out = num_heads * head_dim

    self.W_query = nn.Linear(d_in, self.d_out, { bias = false, dtype = dtype })
    self.W_key = nn.Linear(d_in, num_kv_groups * head_dim, { bias = false, dtype = dtype })
    self.W_value = nn.Linear(d_in, num_kv_groups * head_dim, { bias = false, dtype = dtype })
    self.out_proj = nn.Linear(self.d_out, d_in, { bias = false, dtype = dtype })

    if qk_norm then
        -- self.q_norm = RMSNorm(head_dim, eps=1e-6)
        self.q_norm = QwenRMSNorm(head_dim, { eps = 1e-6 })
        self.k_norm = QwenRMSNorm(head_dim, { eps = 1e-6 })
    else
        -- self.q_norm = self.k_norm = None
        self.q_norm, self.k_norm = nil, nil
    end
end
nn.signature(QwenGQA, "self, d_in, num_heads, num_kv_groups, head_dim=None, qk_norm=False, dtype=None")

function QwenGQA:forward(x, mask, cos, sin)
    local b, num_tokens = x.shape[1], x.shape[2]

    local queries = self.W_query(x)
    local keys = self.W_key(x)
    local values = self.W_value(x)

    queries = queries:view(b, num_tokens, self.num_heads, self.head_dim):transpose(2, 3)
    keys = keys:view(b, num_tokens, self.num_kv_groups, self.head_dim):transpose(2, 3)
    values = values:view(b, num_tokens, self.num_kv_groups, self.head_dim):transpose(2, 3)

    -- if self.q_norm:
    if self.q_norm then
        queries = self.q_norm(queries)
    end
    if self.k_norm then
        keys = self.k_norm(keys)
    end

    queries = apply_rope(queries, cos, sin)
    keys = apply_rope(keys, cos, sin)

    keys = keys:repeat_interleave(self.group_size, { dim = 2 })
    values = values:repeat_interleave(self.group_size, { dim = 2 })

    local attn_scores = queries:matmul(keys:transpose(3, 4))
    attn_scores = attn_scores:masked_fill(mask, -tide.inf)
    local attn_weights = tide.softmax(attn_scores / self.head_dim ^ 0.5, { dim = -1 })

    -- context = (attn_weights @ values).transpose(1, 2).reshape(b, num_tokens, self.d_out)
    local context = attn_weights:matmul(values):transpose(2, 3):reshape(b, num_tokens, self.d_out)
    return self.out_proj(context)
end

local QwenBlock = nn.Module:extend("TransformerBlock")
function QwenBlock:init(cfg)
    self.att = QwenGQA({
        d_in = cfg["emb_dim"],
        num_heads = cfg["n_heads"],
        head_dim = cfg["head_dim"],
        num_kv_groups = cfg["n_kv_groups"],
        qk_norm = cfg["qk_norm"],
        dtype = cfg["dtype"] })
    self.ff = LlamaFeedForward(cfg)
    self.norm1 = QwenRMSNorm(cfg["emb_dim"], { eps = 1e-6 })
    self.norm2 = QwenRMSNorm(cfg["emb_dim"], { eps = 1e-6 })
end
QwenBlock.forward = LlamaBlock.forward -- the same residual forward(x, mask, cos, sin)

local Qwen3Model = nn.Module:extend("Qwen3Model")
function Qwen3Model:init(cfg)
    self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"], { dtype = cfg["dtype"] })
    local blocks = {}
    for _ = 1, cfg["n_layers"] do blocks[#blocks + 1] = QwenBlock(cfg) end
    self.trf_blocks = nn.ModuleList(blocks)
    self.final_norm = QwenRMSNorm(cfg["emb_dim"])
    self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], { bias = false, dtype = cfg["dtype"] })

    local head_dim
    if cfg["head_dim"] == nil then
        head_dim = math.floor(cfg["emb_dim"] / cfg["n_heads"])
    else
        head_dim = cfg["head_dim"]
    end
    -- cos, sin = compute_rope_params(head_dim=head_dim, theta_base=cfg["rope_base"], context_length=cfg["context_length"])
    local cos, sin = compute_rope_params(head_dim, cfg["rope_base"], cfg["context_length"])
    self:register_buffer("cos", cos, { persistent = false })
    self:register_buffer("sin", sin, { persistent = false })
    self.cfg = cfg
end
Qwen3Model.forward = Llama3Model.forward -- the notebook's forward is Llama3Model's, line for line

local QWEN3_CONFIG = {
    vocab_size = 50, context_length = 16, emb_dim = 32, n_heads = 4, n_layers = 2, hidden_dim = 64,
    head_dim = 16, -- 128 in 0.6B: num_heads * head_dim (64) need not be emb_dim
    qk_norm = true, n_kv_groups = 2, rope_base = 1000000.0, dtype = tide.float32,
}

describe("LLMs-from-scratch ch05/11_qwen3/standalone-qwen3.ipynb", function()
    it("Qwen3Model: q/k RMSNorm, head_dim != emb_dim / n_heads; logits match PyTorch; trains", function()
        tide.manual_seed(123)
        local model = Qwen3Model(QWEN3_CONFIG)
        det_init(model)
        assert.same({ 64, 32 }, model.trf_blocks[1].att.W_query.weight.shape)
        local idx = tide.tensor({ { 16, 3, 28, 9, 41, 2 } })
        local logits = tide.no_grad(function() return model(idx) end)
        assert.same({ 1, 6, 50 }, logits.shape)
        assert_close(PT.qwen_logits_sum, logits:sum():item(), 2e-3, "logits.sum()")
        for j = 1, 5 do
            assert_close(PT.qwen_logits_last[j], logits[{ 1, -1, j }]:item(), 1e-4, "logits[0, -1, j]")
        end

        -- qwen3_compatible RMSNorm on bfloat16 input computes in float32 and returns bfloat16
        local n = QwenRMSNorm(8, { eps = 1e-6 })
        assert.equal("bfloat16", n(tide.randn(2, 8):to(tide.bfloat16)).dtype)
        assert.is_nil(QwenGQA(32, 4, 2).q_norm)

        tide.manual_seed(1)
        local optimizer = tide.optim.AdamW(model:parameters(), { lr = 0.004, weight_decay = 0.1 })
        local x = tide.randint(1, 51, { 4, 16 })
        local y = tide.randint(1, 51, { 4, 16 })
        local first, last
        for _ = 1, 5 do
            optimizer:zero_grad()
            local loss = nn.functional.cross_entropy(model(x):flatten(1, 2), y:flatten())
            loss:backward()
            optimizer:step()
            first = first or loss:item()
            last = loss:item()
            assert(is_finite(last))
        end
        assert(last < first, "loss should fall")
    end)
end)
