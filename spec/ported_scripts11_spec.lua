-- ported_scripts11_spec.lua — Sebastian Raschka's "LLMs from scratch" (rasbt/LLMs-from-scratch)
-- chapters 3-6 ported line for line: ch03's simple attention, SelfAttention_v1/v2,
-- CausalAttention, MultiHeadAttentionWrapper and MultiHeadAttention (causal mask buffer,
-- masked_fill_ with -inf); ch04's ExampleDeepNeuralNetwork (shortcuts, gradient means) and
-- GPTModel (hand-written LayerNorm and GELU, generate_text_simple), both checked against
-- PyTorch 1.13 with fixed weights; ch05's loss by hand, AdamW steps (PyTorch's numbers),
-- training loop (GPTDatasetV1 sliding window with a char-level tokenizer, calc_loss_batch,
-- calc_loss_loader, evaluate_model, train_model_simple), generate() with temperature, top_k and
-- eos_id, torch.save / load of model and optimizer; ch06's classification finetuning (frozen
-- body, a new out_head, the last block and final_norm unfrozen, SpamDataset padding,
-- calc_accuracy_loader, train_classifier_simple). Tiny config: vocab 30, context 8, emb 16,
-- 2 heads, 2 layers. The Python line stands above each Lua line that differs from it; a line
-- tide cannot write as Python does is marked `-- GAP:`. Dims, token ids and class labels are
-- 1-based.
local tide = require("tide")
local nn = tide.nn
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local is_finite = ported.is_finite

local function assert_close(want, got, tol, what)
    assert(math.abs(want - got) <= (tol or 1e-4),
        ("%s: want %.6f, got %.6f"):format(what or "value", want, got))
end

---------------------------------------------------------------------------------------------
-- ch03 / ch04: previous_chapters.py (gpt.py)
---------------------------------------------------------------------------------------------
-- class MultiHeadAttention(nn.Module):
local MultiHeadAttention = nn.Module:extend("MultiHeadAttention")
-- def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
function MultiHeadAttention:init(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
    qkv_bias = qkv_bias or false
    -- assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
    assert(d_out % num_heads == 0, "d_out must be divisible by num_heads")
    self.d_out = d_out
    self.num_heads = num_heads
    -- self.head_dim = d_out // num_heads
    self.head_dim = math.floor(d_out / num_heads)

    -- self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
    self.W_query = nn.Linear(d_in, d_out, { bias = qkv_bias })
    self.W_key = nn.Linear(d_in, d_out, { bias = qkv_bias })
    self.W_value = nn.Linear(d_in, d_out, { bias = qkv_bias })
    self.out_proj = nn.Linear(d_out, d_out)
    self.dropout = nn.Dropout(dropout)
    -- self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))
    self:register_buffer("mask", tide.triu(tide.ones(context_length, context_length), { diagonal = 1 }))
end

function MultiHeadAttention:forward(x)
    -- b, num_tokens, d_in = x.shape
    local b, num_tokens, d_in = unpack(x.shape) -- luacheck: ignore d_in

    local keys = self.W_key(x)
    local queries = self.W_query(x)
    local values = self.W_value(x)

    keys = keys:view(b, num_tokens, self.num_heads, self.head_dim)
    values = values:view(b, num_tokens, self.num_heads, self.head_dim)
    queries = queries:view(b, num_tokens, self.num_heads, self.head_dim)

    -- keys = keys.transpose(1, 2)
    keys = keys:transpose(2, 3)
    queries = queries:transpose(2, 3)
    values = values:transpose(2, 3)

    -- attn_scores = queries @ keys.transpose(2, 3)
    local attn_scores = queries:matmul(keys:transpose(3, 4))

    -- mask_bool = self.mask.bool()[:num_tokens, :num_tokens]
    local mask_bool = self.mask:bool()[{ { 1, num_tokens }, { 1, num_tokens } }]

    -- attn_scores.masked_fill_(mask_bool, -torch.inf)
    attn_scores:masked_fill_(mask_bool, -tide.inf)

    -- attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
    local attn_weights = tide.softmax(attn_scores / keys.shape[-1] ^ 0.5, { dim = -1 })
    attn_weights = self.dropout(attn_weights)

    -- context_vec = (attn_weights @ values).transpose(1, 2)
    local context_vec = attn_weights:matmul(values):transpose(2, 3)

    context_vec = context_vec:contiguous():view(b, num_tokens, self.d_out)
    context_vec = self.out_proj(context_vec)

    return context_vec
end

-- class LayerNorm(nn.Module):
local LayerNorm = nn.Module:extend("LayerNorm")
function LayerNorm:init(emb_dim)
    self.eps = 1e-5
    self.scale = nn.Parameter(tide.ones(emb_dim))
    self.shift = nn.Parameter(tide.zeros(emb_dim))
end

function LayerNorm:forward(x)
    -- mean = x.mean(dim=-1, keepdim=True)
    local mean = x:mean({ dim = -1, keepdim = true })
    -- var = x.var(dim=-1, keepdim=True, unbiased=False)
    local var = x:var({ dim = -1, keepdim = true, unbiased = false })
    -- norm_x = (x - mean) / torch.sqrt(var + self.eps)
    local norm_x = (x - mean) / tide.sqrt(var + self.eps)
    return self.scale * norm_x + self.shift
end

-- class GELU(nn.Module):
local GELU = nn.Module:extend("GELU")
function GELU:init() end

function GELU:forward(x)
    -- return 0.5 * x * (1 + torch.tanh(
    --     torch.sqrt(torch.tensor(2.0 / torch.pi)) *
    --     (x + 0.044715 * torch.pow(x, 3))
    -- ))
    return 0.5 * x * (1 + tide.tanh(
        tide.sqrt(tide.tensor(2.0 / tide.pi)) *
        (x + 0.044715 * tide.pow(x, 3))
    ))
end

-- class FeedForward(nn.Module):
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

-- class TransformerBlock(nn.Module):
local TransformerBlock = nn.Module:extend("TransformerBlock")
function TransformerBlock:init(cfg)
    -- self.att = MultiHeadAttention(d_in=cfg["emb_dim"], d_out=cfg["emb_dim"],
    --     context_length=cfg["context_length"], num_heads=cfg["n_heads"],
    --     dropout=cfg["drop_rate"], qkv_bias=cfg["qkv_bias"])
    -- (a Lua-defined module takes its own parameters in order)
    self.att = MultiHeadAttention(cfg["emb_dim"], cfg["emb_dim"], cfg["context_length"],
        cfg["drop_rate"], cfg["n_heads"], cfg["qkv_bias"])
    self.ff = FeedForward(cfg)
    self.norm1 = LayerNorm(cfg["emb_dim"])
    self.norm2 = LayerNorm(cfg["emb_dim"])
    self.drop_shortcut = nn.Dropout(cfg["drop_rate"])
end

function TransformerBlock:forward(x)
    -- Shortcut connection for attention block
    local shortcut = x
    x = self.norm1(x)
    x = self.att(x)
    x = self.drop_shortcut(x)
    x = x + shortcut

    -- Shortcut connection for feed-forward block
    shortcut = x
    x = self.norm2(x)
    x = self.ff(x)
    x = self.drop_shortcut(x)
    x = x + shortcut

    return x
end

-- class GPTModel(nn.Module):
local GPTModel = nn.Module:extend("GPTModel")
function GPTModel:init(cfg)
    self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
    self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
    self.drop_emb = nn.Dropout(cfg["drop_rate"])

    -- self.trf_blocks = nn.Sequential(
    --     *[TransformerBlock(cfg) for _ in range(cfg["n_layers"])])
    local blocks = {}
    for _ = 1, cfg["n_layers"] do
        blocks[#blocks + 1] = TransformerBlock(cfg)
    end
    self.trf_blocks = nn.Sequential(unpack(blocks))

    self.final_norm = LayerNorm(cfg["emb_dim"])
    -- self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)
    self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], { bias = false })
end

function GPTModel:forward(in_idx)
    -- batch_size, seq_len = in_idx.shape
    local batch_size, seq_len = unpack(in_idx.shape) -- luacheck: ignore batch_size
    local tok_embeds = self.tok_emb(in_idx)
    -- pos_embeds = self.pos_emb(torch.arange(seq_len, device=in_idx.device))
    -- (positions are 1-based: arange(1, seq_len + 1))
    local pos_embeds = self.pos_emb(tide.arange(1, seq_len + 1, { device = in_idx.device }))
    local x = tok_embeds + pos_embeds
    x = self.drop_emb(x)
    x = self.trf_blocks(x)
    x = self.final_norm(x)
    local logits = self.out_head(x)
    return logits
end

-- def generate_text_simple(model, idx, max_new_tokens, context_size):
local function generate_text_simple(model, idx, max_new_tokens, context_size)
    for _ = 1, max_new_tokens do
        -- idx_cond = idx[:, -context_size:]
        local idx_cond = idx[{ {}, { -context_size, -1 } }]

        -- with torch.no_grad():
        --     logits = model(idx_cond)
        local logits = tide.no_grad(function()
            return model(idx_cond)
        end)

        -- logits = logits[:, -1, :]
        logits = logits[{ {}, -1, {} }]

        -- probas = torch.softmax(logits, dim=-1)
        local probas = tide.softmax(logits, { dim = -1 })

        -- idx_next = torch.argmax(probas, dim=-1, keepdim=True)
        local idx_next = tide.argmax(probas, { dim = -1, keepdim = true })

        -- idx = torch.cat((idx, idx_next), dim=1)
        idx = tide.cat({ idx, idx_next }, { dim = 2 })
    end
    return idx
end

-- GPT_CONFIG_124M shrunk
local function tiny_config()
    return {
        vocab_size = 30,
        context_length = 8,
        emb_dim = 16,
        n_heads = 2,
        n_layers = 2,
        drop_rate = 0.0,
        qkv_bias = false,
    }
end

-- every parameter, in registration order (k = 1, 2, ...), set to 0.5 * sin(0.37 j + 1.3 k)
-- over its flat elements j = 0, 1, ...: the same fill as the PyTorch reference script
local function fixed_weights(model)
    tide.no_grad(function()
        for k, p in ipairs(model:parameters()) do
            local n = p:numel()
            local j = tide.arange(n, { dtype = tide.float64 })
            p:copy_((0.5 * tide.sin(0.37 * j + 1.3 * k)):view_as(p):float())
        end
    end)
end

describe("LLMs from scratch ch03/ch04: MultiHeadAttention and GPTModel", function()
    it("ch03 3.3-3.5: simple attention, SelfAttention_v1/v2, CausalAttention, the wrapper", function()
        -- inputs = torch.tensor([[0.43, 0.15, 0.89], # Your (x^1) ...
        local inputs = tide.tensor({
            { 0.43, 0.15, 0.89 }, { 0.55, 0.87, 0.66 }, { 0.57, 0.85, 0.64 },
            { 0.22, 0.58, 0.33 }, { 0.77, 0.25, 0.10 }, { 0.05, 0.80, 0.55 },
        })
        -- query = inputs[1]  # 2nd input token is the query
        local query = inputs[2]
        -- attn_scores_2 = torch.empty(inputs.shape[0])
        local attn_scores_2 = tide.empty(inputs.shape[1])
        -- for i, x_i in enumerate(inputs):
        for i, x_i in ipairs(inputs:unbind()) do
            -- attn_scores_2[i] = torch.dot(x_i, query)
            attn_scores_2[i] = tide.dot(x_i, query)
        end
        -- attn_weights_2 = torch.softmax(attn_scores_2, dim=0)
        local attn_weights_2 = tide.softmax(attn_scores_2, { dim = 1 })
        local want_w = { 0.13854756951332092, 0.2378913015127182, 0.23327402770519257,
            0.12399158626794815, 0.10818186402320862, 0.15811361372470856 }
        for i = 1, 6 do
            assert_close(want_w[i], attn_weights_2[i]:item(), 1e-6, "attn_weights_2")
        end
        -- context_vec_2 = torch.zeros(query.shape)
        local context_vec_2 = tide.zeros(query.shape)
        for i, x_i in ipairs(inputs:unbind()) do
            -- context_vec_2 += attn_weights_2[i]*x_i
            context_vec_2 = context_vec_2 + attn_weights_2[i] * x_i
        end
        -- attn_scores = inputs @ inputs.T; attn_weights = torch.softmax(attn_scores, dim=-1)
        local attn_weights = tide.softmax(inputs:matmul(inputs.T), { dim = -1 })
        -- all_context_vecs = attn_weights @ inputs
        local all_context_vecs = attn_weights:matmul(inputs)
        local want_c = { 0.4418657124042511, 0.6514819860458374, 0.5683088302612305 }
        for i = 1, 3 do
            assert_close(want_c[i], context_vec_2[i]:item(), 1e-6, "context_vec_2")
            assert_close(want_c[i], all_context_vecs[{ 2, i }]:item(), 1e-6, "all_context_vecs[2]")
        end

        tide.manual_seed(123)
        local x_2 = inputs[2]
        -- d_in = inputs.shape[1]; d_out = 2
        local d_in, d_out = inputs.shape[2], 2
        -- W_query = torch.nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)
        local W_query = nn.Parameter(tide.rand(d_in, d_out), { requires_grad = false })
        local W_key = nn.Parameter(tide.rand(d_in, d_out), { requires_grad = false })
        assert.is_false(W_query.requires_grad)
        -- query_2 = x_2 @ W_query; keys = inputs @ W_key
        local query_2 = x_2:matmul(W_query)
        local keys = inputs:matmul(W_key)
        -- attn_score_22 = query_2.dot(keys_2); attn_scores_2 = query_2 @ keys.T
        local attn_score_22 = query_2:dot(keys[2])
        local scores_2 = query_2:matmul(keys.T)
        assert_close(attn_score_22:item(), scores_2[2]:item(), 1e-6, "attn_score_22")
        -- d_k = keys.shape[-1]
        local d_k = keys.shape[-1]
        assert.are.equal(2, d_k)

        -- class SelfAttention_v1(nn.Module):
        local SelfAttention_v1 = nn.Module:extend("SelfAttention_v1")
        function SelfAttention_v1:init(d_in_, d_out_)
            -- self.W_query = nn.Parameter(torch.rand(d_in, d_out))
            self.W_query = nn.Parameter(tide.rand(d_in_, d_out_))
            self.W_key = nn.Parameter(tide.rand(d_in_, d_out_))
            self.W_value = nn.Parameter(tide.rand(d_in_, d_out_))
        end
        function SelfAttention_v1:forward(x)
            local keys_ = x:matmul(self.W_key)
            local queries = x:matmul(self.W_query)
            local values = x:matmul(self.W_value)
            local attn_scores = queries:matmul(keys_.T) -- omega
            local attn_weights_ = tide.softmax(attn_scores / keys_.shape[-1] ^ 0.5, { dim = -1 })
            return attn_weights_:matmul(values)
        end

        -- class SelfAttention_v2(nn.Module):
        local SelfAttention_v2 = nn.Module:extend("SelfAttention_v2")
        function SelfAttention_v2:init(d_in_, d_out_, qkv_bias)
            self.W_query = nn.Linear(d_in_, d_out_, { bias = qkv_bias or false })
            self.W_key = nn.Linear(d_in_, d_out_, { bias = qkv_bias or false })
            self.W_value = nn.Linear(d_in_, d_out_, { bias = qkv_bias or false })
        end
        function SelfAttention_v2:forward(x)
            local keys_ = self.W_key(x)
            local queries = self.W_query(x)
            local values = self.W_value(x)
            local attn_scores = queries:matmul(keys_.T)
            local attn_weights_ = tide.softmax(attn_scores / keys_.shape[-1] ^ 0.5, { dim = -1 })
            return attn_weights_:matmul(values)
        end

        local sa_v2 = SelfAttention_v2(d_in, d_out)
        local sa_v1 = SelfAttention_v1(d_in, d_out)
        -- sa_v1.W_query = torch.nn.Parameter(sa_v2.W_query.weight.T)  (the exercise: same weights)
        sa_v1.W_query = nn.Parameter(sa_v2.W_query.weight.T)
        sa_v1.W_key = nn.Parameter(sa_v2.W_key.weight.T)
        sa_v1.W_value = nn.Parameter(sa_v2.W_value.weight.T)
        assert.is_true(tide.allclose(sa_v1(inputs), sa_v2(inputs), { atol = 1e-6 }))
        assert.are.equal(3, #sa_v1:parameters())

        -- queries = sa_v2.W_query(inputs); ...; attn_weights = torch.softmax(...)
        local queries = sa_v2.W_query(inputs)
        keys = sa_v2.W_key(inputs)
        local attn_scores = queries:matmul(keys.T)
        attn_weights = tide.softmax(attn_scores / keys.shape[-1] ^ 0.5, { dim = -1 })
        -- context_length = attn_scores.shape[0]
        local context_length = attn_scores.shape[1]
        -- mask_simple = torch.tril(torch.ones(context_length, context_length))
        local mask_simple = tide.tril(tide.ones(context_length, context_length))
        local masked_simple = attn_weights * mask_simple
        -- row_sums = masked_simple.sum(dim=-1, keepdim=True)
        local row_sums = masked_simple:sum({ dim = -1, keepdim = true })
        local masked_simple_norm = masked_simple / row_sums
        -- mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)
        local mask = tide.triu(tide.ones(context_length, context_length), { diagonal = 1 })
        -- masked = attn_scores.masked_fill(mask.bool(), -torch.inf)
        local masked = attn_scores:masked_fill(mask:bool(), -tide.inf)
        attn_weights = tide.softmax(masked / keys.shape[-1] ^ 0.5, { dim = -1 })
        -- the -inf mask and the renormalised tril mask give the same weights
        assert.is_true(tide.allclose(masked_simple_norm, attn_weights, { atol = 1e-6 }))

        -- dropout = torch.nn.Dropout(0.5); example = torch.ones(6, 6)
        local dropout = nn.Dropout(0.5)
        local example = tide.ones(6, 6)
        local dropped = dropout(example)
        -- kept elements are scaled by 1 / (1 - p)
        for _, v in ipairs(dropped:flatten():totable()) do
            assert.is_true(v == 0 or v == 2)
        end

        -- batch = torch.stack((inputs, inputs), dim=0)
        local batch = tide.stack({ inputs, inputs }, { dim = 1 })

        -- class CausalAttention(nn.Module):
        local CausalAttention = nn.Module:extend("CausalAttention")
        function CausalAttention:init(d_in_, d_out_, context_length_, dropout_, qkv_bias)
            self.d_out = d_out_
            self.W_query = nn.Linear(d_in_, d_out_, { bias = qkv_bias or false })
            self.W_key = nn.Linear(d_in_, d_out_, { bias = qkv_bias or false })
            self.W_value = nn.Linear(d_in_, d_out_, { bias = qkv_bias or false })
            self.dropout = nn.Dropout(dropout_)
            self:register_buffer("mask", tide.triu(tide.ones(context_length_, context_length_),
                { diagonal = 1 }))
        end
        function CausalAttention:forward(x)
            local b, num_tokens, d_in_ = unpack(x.shape) -- luacheck: ignore d_in_ b
            local keys_ = self.W_key(x)
            local queries_ = self.W_query(x)
            local values = self.W_value(x)
            -- attn_scores = queries @ keys.transpose(1, 2)
            local attn_scores_ = queries_:matmul(keys_:transpose(2, 3))
            -- attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
            attn_scores_:masked_fill_(self.mask:bool()[{ { 1, num_tokens }, { 1, num_tokens } }],
                -tide.inf)
            local attn_weights_ = tide.softmax(attn_scores_ / keys_.shape[-1] ^ 0.5, { dim = -1 })
            attn_weights_ = self.dropout(attn_weights_)
            return attn_weights_:matmul(values)
        end

        -- class MultiHeadAttentionWrapper(nn.Module):
        local MultiHeadAttentionWrapper = nn.Module:extend("MultiHeadAttentionWrapper")
        function MultiHeadAttentionWrapper:init(d_in_, d_out_, context_length_, dropout_, num_heads,
                                                qkv_bias)
            -- self.heads = nn.ModuleList([CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
            --     for _ in range(num_heads)])
            local heads = {}
            for _ = 1, num_heads do
                heads[#heads + 1] = CausalAttention(d_in_, d_out_, context_length_, dropout_, qkv_bias)
            end
            self.heads = nn.ModuleList(heads)
        end
        function MultiHeadAttentionWrapper:forward(x)
            -- return torch.cat([head(x) for head in self.heads], dim=-1)
            local outs = {}
            for _, head in ipairs(self.heads) do
                outs[#outs + 1] = head(x)
            end
            return tide.cat(outs, { dim = -1 })
        end

        tide.manual_seed(123)
        -- context_length = batch.shape[1] # This is the number of tokens
        context_length = batch.shape[2]
        local ca = CausalAttention(d_in, d_out, context_length, 0.0)
        assert.are.same({ 2, 6, 2 }, ca(batch).shape)
        local mha = MultiHeadAttentionWrapper(d_in, d_out, context_length, 0.0, 2)
        local context_vecs = mha(batch)
        assert.are.same({ 2, 6, 4 }, context_vecs.shape)
        -- each head's columns are its own CausalAttention
        assert.is_true(tide.allclose(mha.heads[2](batch), context_vecs[{ {}, {}, { 3, 4 } }]))
    end)

    it("MultiHeadAttention: the triu mask buffer, causal weights, shapes", function()
        tide.manual_seed(123)
        -- inputs = torch.tensor([[0.43, 0.15, 0.89], ...]); batch = torch.stack((inputs, inputs), dim=0)
        local inputs = tide.tensor({
            { 0.43, 0.15, 0.89 }, { 0.55, 0.87, 0.66 }, { 0.57, 0.85, 0.64 },
            { 0.22, 0.58, 0.33 }, { 0.77, 0.25, 0.10 }, { 0.05, 0.80, 0.55 },
        })
        local batch = tide.stack({ inputs, inputs }, { dim = 1 })
        -- batch_size, context_length, d_in = batch.shape
        local batch_size, context_length, d_in = unpack(batch.shape)
        local d_out = 2
        -- mha = MultiHeadAttention(d_in, d_out, context_length, 0.0, num_heads=2)
        local mha = MultiHeadAttention(d_in, d_out, context_length, 0.0, 2)
        local context_vecs = mha(batch)
        -- context_vecs.shape: torch.Size([2, 6, 2])
        assert.are.same({ batch_size, context_length, d_out }, context_vecs.shape)
        -- the two batch rows are the same input: the same output
        assert.is_true(tide.allclose(context_vecs[1], context_vecs[2]))
        -- the buffer is in the state_dict (persistent), not among the parameters
        assert.are.same({ 6, 6 }, mha:state_dict()["mask"].shape)
        for _, p in ipairs(mha:parameters()) do
            assert.is_false(rawequal(p, mha.mask))
        end
        -- causal: the first token's output depends on the first token only
        local changed = batch:clone()
        changed[{ {}, { 2, -1 } }] = 0
        local first = mha(changed)[{ {}, 1 }]
        assert.is_true(tide.allclose(first, context_vecs[{ {}, 1 }], { atol = 1e-6 }))
        -- a shorter input uses the top-left corner of the mask
        assert.are.same({ 2, 3, 2 }, mha(batch[{ {}, { 1, 3 } }]).shape)
    end)

    it("ch04 4.4: ExampleDeepNeuralNetwork with and without shortcuts matches PyTorch 1.13",
        function()
            -- class ExampleDeepNeuralNetwork(nn.Module):
            local ExampleDeepNeuralNetwork = nn.Module:extend("ExampleDeepNeuralNetwork")
            function ExampleDeepNeuralNetwork:init(layer_sizes, use_shortcut)
                self.use_shortcut = use_shortcut
                -- self.layers = nn.ModuleList([
                --     nn.Sequential(nn.Linear(layer_sizes[0], layer_sizes[1]), GELU()), ...])
                self.layers = nn.ModuleList({
                    nn.Sequential(nn.Linear(layer_sizes[1], layer_sizes[2]), GELU()),
                    nn.Sequential(nn.Linear(layer_sizes[2], layer_sizes[3]), GELU()),
                    nn.Sequential(nn.Linear(layer_sizes[3], layer_sizes[4]), GELU()),
                    nn.Sequential(nn.Linear(layer_sizes[4], layer_sizes[5]), GELU()),
                    nn.Sequential(nn.Linear(layer_sizes[5], layer_sizes[6]), GELU()),
                })
            end
            function ExampleDeepNeuralNetwork:forward(x)
                -- for layer in self.layers:
                for _, layer in ipairs(self.layers) do
                    local layer_output = layer(x)
                    -- if self.use_shortcut and x.shape == layer_output.shape:
                    if self.use_shortcut and x.shape == layer_output.shape then
                        x = x + layer_output
                    else
                        x = layer_output
                    end
                end
                return x
            end

            local want = {
                [false] = { 0.19624370336532593, { 3.145610389765352e-05, 2.803637289616745e-05,
                    0.0002615562407299876, 0.0015159986214712262, 0.04669015482068062 } },
                [true] = { -0.09861693531274796, { 0.011763673275709152, 0.0016964332899078727,
                    0.007930836640298367, 0.002378053031861782, 0.041516419500112534 } },
            }
            for _, use_shortcut in ipairs({ false, true }) do
                -- layer_sizes = [3, 3, 3, 3, 3, 1]
                local layer_sizes = { 3, 3, 3, 3, 3, 1 }
                -- sample_input = torch.tensor([[1., 0., -1.]])
                -- (1. and 0. are floats on Lua 5.3+ only: the dtype says it everywhere)
                local sample_input = tide.tensor({ { 1., 0., -1. } }, { dtype = tide.float32 })
                local model = ExampleDeepNeuralNetwork(layer_sizes, use_shortcut)
                fixed_weights(model)
                -- def print_gradients(model, x):
                local output = model(sample_input)
                -- target = torch.tensor([[0.]])
                local target = tide.tensor({ { 0. } }, { dtype = tide.float32 })
                -- loss = nn.MSELoss(); loss = loss(output, target)
                local loss = nn.MSELoss()
                loss = loss(output, target)
                loss:backward()
                assert_close(want[use_shortcut][1], output:item(), 1e-6, "output")
                local k = 0
                -- for name, param in model.named_parameters():
                for name, param in model:named_parameters() do
                    -- if 'weight' in name:
                    if name:find("weight", 1, true) then
                        k = k + 1
                        -- print(f"{name} has gradient mean of {param.grad.abs().mean().item()}")
                        local g = param.grad:abs():mean():item()
                        local w = want[use_shortcut][2][k]
                        assert(math.abs(g - w) <= 1e-4 * w + 1e-8,
                            ("%s has gradient mean of %g, PyTorch %g"):format(name, g, w))
                    end
                end
                assert.are.equal(5, k)
            end
        end)

    it("GPTModel forward, parameter count and generate_text_simple match PyTorch 1.13", function()
        local cfg = tiny_config()
        tide.manual_seed(123)
        -- model = GPTModel(GPT_CONFIG_124M)
        local model = GPTModel(cfg)
        -- total_params = sum(p.numel() for p in model.parameters())
        local total_params = 0
        for _, p in ipairs(model:parameters()) do
            total_params = total_params + p:numel()
        end
        assert.are.equal(7584, total_params) -- PyTorch 1.13's count for this config
        -- the parameter names, in PyTorch's order (Sequential children 1-based here)
        assert.is_not_nil(model:state_dict()["trf_blocks.1.att.W_query.weight"])
        assert.is_not_nil(model:state_dict()["trf_blocks.2.ff.layers.3.bias"])
        assert.is_nil(model:state_dict()["out_head.bias"])
        assert.are.equal(31, #model:parameters())

        fixed_weights(model)
        model:eval()
        -- token ids from the reference script, plus one (1-based embedding rows)
        local x = tide.tensor({ { 3, 14, 7, 25, 0 }, { 9, 1, 28, 4, 17 } }) + 1
        local logits = model(x)
        assert.are.same({ 2, 5, 30 }, logits.shape)
        -- PyTorch 1.13: logits[0, 0, :4], logits[1, 4, -4:], logits.sum(), logits.abs().mean()
        local want1 = { 0.49109071493148804, 1.0662472248077393, 1.50230073928833, 1.7423644065856934 }
        local want2 = { -0.5197994709014893, -1.092189908027649, -1.5220931768417358, -1.7534241676330566 }
        local got1 = logits[{ 1, 1, { 1, 4 } }]:totable()
        local got2 = logits[{ 2, 5, { -4, -1 } }]:totable()
        for i = 1, 4 do
            assert_close(want1[i], got1[i], 1e-4, "logits[1, 1, " .. i .. "]")
            assert_close(want2[i], got2[i], 1e-4, "logits[2, 5, " .. (26 + i) .. "]")
        end
        assert_close(49.17737579345703, logits:sum():item(), 2e-3, "logits:sum()")
        assert_close(1.1434440612792969, logits:abs():mean():item(), 1e-4, "logits:abs():mean()")

        -- out = generate_text_simple(model=model, idx=encoded_tensor, max_new_tokens=6,
        --     context_size=GPT_CONFIG_124M["context_length"])
        -- (4 prompt tokens + 6 new: the context is cropped to 8 for the last two)
        local out = generate_text_simple(model, x[{ { 1 }, { 1, 4 } }], 6, cfg["context_length"])
        -- PyTorch: [[3, 14, 7, 25, 21, 21, 21, 21, 21, 21]]
        assert.are.same({ { 4, 15, 8, 26, 22, 22, 22, 22, 22, 22 } }, out:totable())
    end)
end)

---------------------------------------------------------------------------------------------
-- ch05: gpt_train.py, gpt_generate.py
---------------------------------------------------------------------------------------------
-- a char-level tokenizer in place of tiktoken's gpt2 (ids 1..#chars, 1-based)
local function CharTokenizer(text)
    local chars, seen = {}, {}
    for c in text:gmatch(".") do
        if not seen[c] then
            seen[c] = true
            chars[#chars + 1] = c
        end
    end
    table.sort(chars)
    local stoi, itos = {}, {}
    for i, c in ipairs(chars) do
        stoi[c], itos[i] = i, c
    end
    return {
        n_vocab = #chars,
        encode = function(s)
            local ids = {}
            for c in s:gmatch(".") do
                ids[#ids + 1] = stoi[c]
            end
            return ids
        end,
        decode = function(ids)
            local out = {}
            for i, id in ipairs(ids) do
                out[i] = itos[id]
            end
            return table.concat(out)
        end,
    }
end

-- class GPTDatasetV1(Dataset):
local GPTDatasetV1 = tide.data.Dataset:extend("GPTDatasetV1")
function GPTDatasetV1:init(txt, tokenizer, max_length, stride)
    self.input_ids = {}
    self.target_ids = {}

    -- token_ids = tokenizer.encode(txt, allowed_special={"<|endoftext|>"})
    local token_ids = tokenizer.encode(txt)

    -- for i in range(0, len(token_ids) - max_length, stride):
    for i = 1, #token_ids - max_length, stride do
        -- input_chunk = token_ids[i:i + max_length]
        local input_chunk = { unpack(token_ids, i, i + max_length - 1) }
        -- target_chunk = token_ids[i + 1: i + max_length + 1]
        local target_chunk = { unpack(token_ids, i + 1, i + max_length) }
        -- self.input_ids.append(torch.tensor(input_chunk))
        self.input_ids[#self.input_ids + 1] = tide.tensor(input_chunk)
        self.target_ids[#self.target_ids + 1] = tide.tensor(target_chunk)
    end
end

function GPTDatasetV1:__len__()
    return #self.input_ids
end

function GPTDatasetV1:__getitem__(idx)
    return self.input_ids[idx], self.target_ids[idx]
end

-- def create_dataloader_v1(txt, batch_size=4, max_length=256, stride=128, shuffle=True,
--                          drop_last=True, num_workers=0):
local function create_dataloader_v1(txt, tokenizer, opts)
    -- dataset = GPTDatasetV1(txt, tokenizer, max_length, stride)
    local dataset = GPTDatasetV1(txt, tokenizer, opts.max_length, opts.stride)
    -- dataloader = DataLoader(dataset, batch_size=batch_size, shuffle=shuffle,
    --     drop_last=drop_last, num_workers=num_workers)
    return tide.data.DataLoader(dataset, { batch_size = opts.batch_size, shuffle = opts.shuffle,
        drop_last = opts.drop_last, num_workers = 0 })
end

-- def text_to_token_ids(text, tokenizer):
local function text_to_token_ids(text, tokenizer)
    local encoded = tokenizer.encode(text)
    -- encoded_tensor = torch.tensor(encoded).unsqueeze(0)
    local encoded_tensor = tide.tensor(encoded):unsqueeze(1)
    return encoded_tensor
end

local function token_ids_to_text(token_ids, tokenizer)
    -- flat = token_ids.squeeze(0)
    local flat = token_ids:squeeze(1)
    return tokenizer.decode(flat:tolist())
end

-- def calc_loss_batch(input_batch, target_batch, model, device):
local function calc_loss_batch(input_batch, target_batch, model, device)
    input_batch, target_batch = input_batch:to(device), target_batch:to(device)
    local logits = model(input_batch)
    -- loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), target_batch.flatten())
    local loss = nn.functional.cross_entropy(logits:flatten(1, 2), target_batch:flatten())
    return loss
end

-- def calc_loss_loader(data_loader, model, device, num_batches=None):
local function calc_loss_loader(data_loader, model, device, num_batches)
    local total_loss = 0.
    -- if len(data_loader) == 0:
    -- (data_loader:len() on Lua 5.2+; Lua 5.1 and LuaJIT call no __len for a table: len() is everywhere)
    if data_loader:len() == 0 then
        return 0 / 0 -- float("nan")
    elseif num_batches == nil then
        num_batches = data_loader:len()
    else
        num_batches = math.min(num_batches, data_loader:len())
    end
    -- for i, (input_batch, target_batch) in enumerate(data_loader):
    local i = 0
    for input_batch, target_batch in data_loader:iter() do
        if i < num_batches then
            local loss = calc_loss_batch(input_batch, target_batch, model, device)
            total_loss = total_loss + loss:item()
        else
            break
        end
        i = i + 1
    end
    return total_loss / num_batches
end

-- def evaluate_model(model, train_loader, val_loader, device, eval_iter):
local function evaluate_model(model, train_loader, val_loader, device, eval_iter, loss_loader)
    loss_loader = loss_loader or calc_loss_loader
    model:eval()
    -- with torch.no_grad():
    local train_loss, val_loss = tide.no_grad(function()
        local tl = loss_loader(train_loader, model, device, eval_iter)
        local vl = loss_loader(val_loader, model, device, eval_iter)
        return tl, vl
    end)
    model:train()
    return train_loss, val_loss
end

-- def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, eos_id=None):
local function generate(model, idx, max_new_tokens, context_size, temperature, top_k, eos_id)
    temperature = temperature or 0.0
    for _ = 1, max_new_tokens do
        -- idx_cond = idx[:, -context_size:]
        local idx_cond = idx[{ {}, { -context_size, -1 } }]
        local logits = tide.no_grad(function()
            return model(idx_cond)
        end)
        logits = logits[{ {}, -1, {} }]

        -- if top_k is not None:
        if top_k ~= nil then
            -- top_logits, _ = torch.topk(logits, top_k)
            local top_logits, _ = tide.topk(logits, top_k)
            -- min_val = top_logits[:, -1]
            local min_val = top_logits[{ {}, -1 }]
            -- logits = torch.where(logits < min_val, torch.tensor(float("-inf")).to(logits.device), logits)
            -- (Lua's < gives one boolean: lt is the elementwise form)
            logits = tide.where(logits:lt(min_val), tide.tensor(-math.huge):to(logits.device), logits)
        end

        local idx_next
        if temperature > 0.0 then
            logits = logits / temperature
            -- logits = logits - logits.max(dim=-1, keepdim=True).values
            local max_values = logits:max({ dim = -1, keepdim = true })
            logits = logits - max_values
            -- probs = torch.softmax(logits, dim=-1)
            local probs = tide.softmax(logits, { dim = -1 })
            -- idx_next = torch.multinomial(probs, num_samples=1)
            idx_next = tide.multinomial(probs, { num_samples = 1 })
        else
            -- idx_next = torch.argmax(logits, dim=-1, keepdim=True)
            idx_next = tide.argmax(logits, { dim = -1, keepdim = true })
        end

        -- if idx_next == eos_id:
        -- (== on a tensor is Lua's identity: compare the item)
        if idx_next:item() == eos_id then
            break
        end

        idx = tide.cat({ idx, idx_next }, { dim = 2 })
    end
    return idx
end

-- def train_model_simple(model, train_loader, val_loader, optimizer, device, num_epochs,
--                        eval_freq, eval_iter, start_context, tokenizer):
local function train_model_simple(model, train_loader, val_loader, optimizer, device, num_epochs,
                                  eval_freq, eval_iter, start_context, tokenizer)
    -- train_losses, val_losses, track_tokens_seen = [], [], []
    local train_losses, val_losses, track_tokens_seen = {}, {}, {}
    local tokens_seen = 0
    local global_step = -1
    local samples = {}

    for epoch = 1, num_epochs do -- luacheck: ignore epoch
        model:train()

        -- for input_batch, target_batch in train_loader:
        for input_batch, target_batch in train_loader:iter() do
            optimizer:zero_grad()
            local loss = calc_loss_batch(input_batch, target_batch, model, device)
            loss:backward()
            optimizer:step()
            -- tokens_seen += input_batch.numel()
            tokens_seen = tokens_seen + input_batch:numel()
            global_step = global_step + 1

            -- if global_step % eval_freq == 0:
            if global_step % eval_freq == 0 then
                local train_loss, val_loss = evaluate_model(
                    model, train_loader, val_loader, device, eval_iter)
                train_losses[#train_losses + 1] = train_loss
                val_losses[#val_losses + 1] = val_loss
                track_tokens_seen[#track_tokens_seen + 1] = tokens_seen
            end
        end

        -- generate_and_print_sample(model, tokenizer, device, start_context)
        model:eval()
        -- context_size = model.pos_emb.weight.shape[0]
        local context_size = model.pos_emb.weight.shape[1]
        local encoded = text_to_token_ids(start_context, tokenizer):to(device)
        local token_ids = tide.no_grad(function()
            return generate_text_simple(model, encoded, 10, context_size)
        end)
        samples[#samples + 1] = token_ids_to_text(token_ids, tokenizer)
        model:train()
    end

    return train_losses, val_losses, track_tokens_seen, samples
end

-- the first batch of a loader
local function first_batch(loader)
    for a, b in loader:iter() do
        return a, b
    end
end

local TEXT = "I HAD always thought Jack Gisburn rather a cheap genius--though a good fellow " ..
    "enough--so it was no great surprise to me to hear that, in the height of his glory, " ..
    "he had dropped his painting, married a rich widow, and established himself in a villa " ..
    "on the Riviera."

describe("LLMs from scratch ch05: pretraining on unlabeled data", function()
    it("5.1: the loss by hand (target probas, log, mean, negative) equals cross_entropy", function()
        tide.manual_seed(123)
        local model = GPTModel(tiny_config())
        model:eval()
        -- inputs = torch.tensor([[16833, 3626, 6100], [40, 1107, 588]])  ("every effort moves", ...)
        local inputs = tide.tensor({ { 17, 4, 6 }, { 2, 11, 29 } })
        local targets = tide.tensor({ { 4, 6, 12 }, { 11, 29, 30 } })
        -- with torch.no_grad(): logits = model(inputs)
        local logits = tide.no_grad(function()
            return model(inputs)
        end)
        -- probas = torch.softmax(logits, dim=-1)
        local probas = tide.softmax(logits, { dim = -1 })
        -- token_ids = torch.argmax(probas, dim=-1, keepdim=True)
        local token_ids = tide.argmax(probas, { dim = -1, keepdim = true })
        assert.are.same({ 2, 3, 1 }, token_ids.shape)
        -- text_idx = 0
        local text_idx = 1
        -- target_probas_1 = probas[text_idx, [0, 1, 2], targets[text_idx]]
        -- (a Lua list in an index is a range {first, last, step}: {1, 2, 3} would be 1..2 by 3,
        -- a [1, 3] result; the list of positions is an int64 tensor)
        local target_probas_1 = probas[{ text_idx, tide.tensor({ 1, 2, 3 }), targets[text_idx] }]
        text_idx = 2
        local target_probas_2 = probas[{ text_idx, tide.tensor({ 1, 2, 3 }), targets[text_idx] }]
        assert.are.same({ 3 }, target_probas_1.shape)
        assert_close(probas[{ 1, 2, 6 }]:item(), target_probas_1[2]:item(), 1e-7, "target_probas_1")
        -- log_probas = torch.log(torch.cat((target_probas_1, target_probas_2)))
        local log_probas = tide.log(tide.cat({ target_probas_1, target_probas_2 }))
        -- avg_log_probas = torch.mean(log_probas)
        local avg_log_probas = tide.mean(log_probas)
        local neg_avg_log_probas = avg_log_probas * -1
        -- logits_flat = logits.flatten(0, 1); targets_flat = targets.flatten()
        local logits_flat = logits:flatten(1, 2)
        local targets_flat = targets:flatten()
        assert.are.same({ 6, 30 }, logits_flat.shape)
        -- loss = torch.nn.functional.cross_entropy(logits_flat, targets_flat)
        local loss = nn.functional.cross_entropy(logits_flat, targets_flat)
        assert_close(neg_avg_log_probas:item(), loss:item(), 1e-5, "cross_entropy")
        -- perplexity = torch.exp(loss)
        local perplexity = tide.exp(loss)
        assert_close(math.exp(loss:item()), perplexity:item(), 1e-3, "perplexity")
    end)

    it("AdamW steps on calc_loss_batch match PyTorch 1.13", function()
        tide.manual_seed(123)
        local model = GPTModel(tiny_config())
        fixed_weights(model)
        local device = tide.device("cpu")
        local x = tide.tensor({ { 3, 14, 7, 25, 0 }, { 9, 1, 28, 4, 17 } }) + 1
        local y = tide.tensor({ { 14, 7, 25, 0, 9 }, { 1, 28, 4, 17, 3 } }) + 1
        model:train()
        -- optimizer = torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.1)
        local optimizer = tide.optim.AdamW(model:parameters(), { lr = 0.01, weight_decay = 0.1 })
        local want = { 3.9504470825195312, 3.754093647003174, 3.572878360748291 }
        for s = 1, 3 do
            optimizer:zero_grad()
            local loss = calc_loss_batch(x, y, model, device)
            loss:backward()
            optimizer:step()
            assert_close(want[s], loss:item(), 2e-4, "loss at step " .. s)
        end
        assert_close(3.4010798931121826, calc_loss_batch(x, y, model, device):item(), 5e-4,
            "loss after 3 steps")
    end)

    it("GPTDatasetV1 sliding window, train_model_simple, generate with top_k/temperature, save/load",
        function()
            tide.manual_seed(123)
            local device = tide.device("cpu")
            local tokenizer = CharTokenizer(TEXT)
            local cfg = tiny_config()
            cfg["vocab_size"] = tokenizer.n_vocab
            assert.is_true(cfg["vocab_size"] <= 40)

            -- the sliding window: inputs and targets are shifted by one, stride apart
            local ds = GPTDatasetV1("abcdefghij", CharTokenizer("abcdefghij"), 4, 2)
            assert.are.equal(3, ds:len())
            local inp, tgt = ds:get(2)
            assert.are.same({ 3, 4, 5, 6 }, inp:totable())
            assert.are.same({ 4, 5, 6, 7 }, tgt:totable())

            -- train_ratio = 0.90; split_idx = int(train_ratio * len(text_data))
            local train_ratio = 0.90
            local split_idx = math.floor(train_ratio * #TEXT)
            -- train_loader = create_dataloader_v1(text_data[:split_idx], batch_size=..., ...)
            local train_loader = create_dataloader_v1(TEXT:sub(1, split_idx), tokenizer, {
                batch_size = 4, max_length = cfg["context_length"],
                stride = cfg["context_length"], drop_last = true, shuffle = true })
            local val_loader = create_dataloader_v1(TEXT:sub(split_idx + 1), tokenizer, {
                batch_size = 4, max_length = cfg["context_length"],
                stride = cfg["context_length"], drop_last = false, shuffle = false })
            assert.are.equal(7, train_loader:len()) -- 29 windows of 8, 4 a batch, the last one dropped
            assert.are.equal(1, val_loader:len())

            -- model = GPTModel(gpt_config); model.to(device)
            local model = GPTModel(cfg)
            model:to(device)
            -- optimizer = torch.optim.AdamW(model.parameters(), lr=..., weight_decay=...)
            local optimizer = tide.optim.AdamW(model:parameters(), { lr = 5e-3, weight_decay = 0.1 })

            local initial = evaluate_model(model, train_loader, val_loader, device, 2)
            -- close to a uniform guess over the vocabulary at the start
            assert.is_true(math.abs(initial - math.log(cfg["vocab_size"])) < 0.5)

            -- (a char tokenizer knows only the text's characters: the prompts come from it)
            local train_losses, val_losses, tokens_seen, samples = train_model_simple(
                model, train_loader, val_loader, optimizer, device,
                4, 5, 1, "Jack Gisburn", tokenizer)
            -- 28 steps, evaluated at steps 0, 5, ..., 25
            assert.are.equal(6, #train_losses)
            assert.are.equal(6, #val_losses)
            for i = 1, 6 do
                assert.is_true(is_finite(train_losses[i]) and is_finite(val_losses[i]))
            end
            assert.are.same({ 32, 192, 352, 512, 672, 832 }, tokens_seen)
            assert.is_true(train_losses[6] < train_losses[1] - 0.3,
                ("train loss %.3f -> %.3f"):format(train_losses[1], train_losses[6]))
            assert.are.equal(4, #samples)
            assert.are.equal(#"Jack Gisburn" + 10, #samples[4])
            assert.are.equal("Jack Gisburn", samples[4]:sub(1, 12))

            -- calc_loss_loader over an empty loader is nan
            local empty = create_dataloader_v1("short", tokenizer, {
                batch_size = 4, max_length = 8, stride = 8, drop_last = false, shuffle = false })
            local nan = calc_loss_loader(empty, model, device)
            assert.is_true(nan ~= nan)

            -- token_ids = generate(model=model, idx=text_to_token_ids("Every effort moves you", tokenizer),
            --     max_new_tokens=15, context_size=GPT_CONFIG_124M["context_length"], top_k=25, temperature=1.4)
            model:eval()
            tide.manual_seed(123)
            local token_ids = generate(model, text_to_token_ids("Jack Gisburn", tokenizer),
                15, cfg["context_length"], 1.4, 25)
            assert.are.same({ 1, 12 + 15 }, token_ids.shape)
            assert.is_true(token_ids:min():item() >= 1 and token_ids:max():item() <= cfg["vocab_size"])
            -- top_k = 1 is greedy: the same as generate_text_simple
            local prompt = text_to_token_ids("Jack", tokenizer)
            local greedy = generate_text_simple(model, prompt, 6, cfg["context_length"])
            assert.are.same(greedy:totable(), generate(model, prompt, 6, cfg["context_length"], 1.0, 1):totable())
            assert.are.same(greedy:totable(), generate(model, prompt, 6, cfg["context_length"]):totable())
            -- eos_id: generation stops before the first token equal to it
            local eos_id = greedy[{ 1, 6 }]:item()
            local stopped = generate(model, prompt, 6, cfg["context_length"], 0.0, nil, eos_id)
            assert.are.same(greedy[{ {}, { 1, 5 } }]:totable(), stopped:totable())
            -- the top_k filter: only the k largest logits survive, the rest are -inf
            local logits = tide.tensor({ { 4.0, 1.0, -2.0, 3.0, 0.5 } })
            local top_logits, _ = tide.topk(logits, 2)
            local min_val = top_logits[{ {}, -1 }]
            local filtered = tide.where(logits:lt(min_val), tide.tensor(-math.huge):to(logits.device), logits)
            assert.are.same({ { 4.0, -math.huge, -math.huge, 3.0, -math.huge } }, filtered:totable())

            -- torch.save({"model_state_dict": model.state_dict(),
            --             "optimizer_state_dict": optimizer.state_dict()}, "model_and_optimizer.pth")
            local path = os.tmpname()
            tide.save({
                model_state_dict = model:state_dict(),
                optimizer_state_dict = optimizer:state_dict(),
            }, path)
            -- checkpoint = torch.load("model_and_optimizer.pth", map_location=device)
            local checkpoint = tide.load(path, { map_location = device })
            os.remove(path)
            -- model = GPTModel(GPT_CONFIG_124M)
            local model2 = GPTModel(cfg)
            model2:load_state_dict(checkpoint["model_state_dict"])
            -- optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.1)
            local optimizer2 = tide.optim.AdamW(model2:parameters(), { lr = 5e-4, weight_decay = 0.1 })
            optimizer2:load_state_dict(checkpoint["optimizer_state_dict"])
            model2:eval()
            local xb = first_batch(val_loader)
            assert.is_true(tide.equal(model(xb), model2(xb)))
            -- the Adam moments came back: one more step of each moves them the same way
            model:train()
            model2:train()
            local xin, yt = first_batch(val_loader)
            for _, pair in ipairs({ { model, optimizer }, { model2, optimizer2 } }) do
                pair[2]:zero_grad()
                calc_loss_batch(xin, yt, pair[1], device):backward()
                pair[2]:step()
            end
            model:eval()
            model2:eval()
            assert.is_true(tide.allclose(model(xb), model2(xb), { atol = 1e-6 }))
        end)
end)

---------------------------------------------------------------------------------------------
-- ch06: gpt_class_finetune.py
---------------------------------------------------------------------------------------------
-- class SpamDataset(Dataset):
local SpamDataset = tide.data.Dataset:extend("SpamDataset")
-- def __init__(self, csv_file, tokenizer, max_length=None, pad_token_id=50256):
-- (csv_file: the rows pd.read_csv would give, {Text =, Label =})
function SpamDataset:init(rows, tokenizer, max_length, pad_token_id)
    pad_token_id = pad_token_id or 1
    -- self.data = pd.read_csv(csv_file)
    self.data = rows

    -- self.encoded_texts = [tokenizer.encode(text) for text in self.data["Text"]]
    self.encoded_texts = {}
    for i, row in ipairs(self.data) do
        self.encoded_texts[i] = tokenizer.encode(row["Text"])
    end

    if max_length == nil then
        self.max_length = self:_longest_encoded_length()
    else
        self.max_length = max_length
        -- self.encoded_texts = [encoded_text[:self.max_length] for encoded_text in self.encoded_texts]
        for i, encoded_text in ipairs(self.encoded_texts) do
            self.encoded_texts[i] = { unpack(encoded_text, 1, math.min(#encoded_text, self.max_length)) }
        end
    end

    -- self.encoded_texts = [
    --     encoded_text + [pad_token_id] * (self.max_length - len(encoded_text))
    --     for encoded_text in self.encoded_texts]
    for _, encoded_text in ipairs(self.encoded_texts) do
        for _ = 1, self.max_length - #encoded_text do
            encoded_text[#encoded_text + 1] = pad_token_id
        end
    end
end

function SpamDataset:__getitem__(index)
    local encoded = self.encoded_texts[index]
    -- label = self.data.iloc[index]["Label"]
    local label = self.data[index]["Label"]
    -- return (torch.tensor(encoded, dtype=torch.long), torch.tensor(label, dtype=torch.long))
    return tide.tensor(encoded, { dtype = tide.long }), tide.tensor(label, { dtype = tide.long })
end

function SpamDataset:__len__()
    return #self.data
end

function SpamDataset:_longest_encoded_length()
    local max_length = 0
    for _, encoded_text in ipairs(self.encoded_texts) do
        local encoded_length = #encoded_text
        if encoded_length > max_length then
            max_length = encoded_length
        end
    end
    return max_length
end

-- def calc_accuracy_loader(data_loader, model, device, num_batches=None):
local function calc_accuracy_loader(data_loader, model, device, num_batches)
    model:eval()
    local correct_predictions, num_examples = 0, 0

    if num_batches == nil then
        num_batches = data_loader:len()
    else
        num_batches = math.min(num_batches, data_loader:len())
    end
    local i = 0
    for input_batch, target_batch in data_loader:iter() do
        if i < num_batches then
            input_batch, target_batch = input_batch:to(device), target_batch:to(device)

            -- with torch.no_grad():
            --     logits = model(input_batch)[:, -1, :]
            local logits = tide.no_grad(function()
                return model(input_batch)[{ {}, -1, {} }]
            end)
            -- predicted_labels = torch.argmax(logits, dim=-1)
            local predicted_labels = tide.argmax(logits, { dim = -1 })

            -- num_examples += predicted_labels.shape[0]
            num_examples = num_examples + predicted_labels.shape[1]
            -- correct_predictions += (predicted_labels == target_batch).sum().item()
            correct_predictions = correct_predictions + predicted_labels:eq(target_batch):sum():item()
        else
            break
        end
        i = i + 1
    end
    return correct_predictions / num_examples
end

-- def calc_loss_batch(input_batch, target_batch, model, device):  (ch06's: the last token)
local function calc_loss_batch_cls(input_batch, target_batch, model, device)
    input_batch, target_batch = input_batch:to(device), target_batch:to(device)
    -- logits = model(input_batch)[:, -1, :]
    local logits = model(input_batch)[{ {}, -1, {} }]
    local loss = nn.functional.cross_entropy(logits, target_batch)
    return loss
end

-- ch06's calc_loss_loader: ch05's with its calc_loss_batch
local function calc_loss_loader_cls(data_loader, model, device, num_batches)
    local total_loss = 0.
    if data_loader:len() == 0 then
        return 0 / 0
    elseif num_batches == nil then
        num_batches = data_loader:len()
    else
        num_batches = math.min(num_batches, data_loader:len())
    end
    local i = 0
    for input_batch, target_batch in data_loader:iter() do
        if i < num_batches then
            local loss = calc_loss_batch_cls(input_batch, target_batch, model, device)
            total_loss = total_loss + loss:item()
        else
            break
        end
        i = i + 1
    end
    return total_loss / num_batches
end

-- def train_classifier_simple(model, train_loader, val_loader, optimizer, device, num_epochs,
--                             eval_freq, eval_iter):
local function train_classifier_simple(model, train_loader, val_loader, optimizer, device,
                                       num_epochs, eval_freq, eval_iter)
    local train_losses, val_losses, train_accs, val_accs = {}, {}, {}, {}
    local examples_seen, global_step = 0, -1

    for epoch = 1, num_epochs do -- luacheck: ignore epoch
        model:train()

        for input_batch, target_batch in train_loader:iter() do
            optimizer:zero_grad()
            local loss = calc_loss_batch_cls(input_batch, target_batch, model, device)
            loss:backward()
            optimizer:step()
            -- examples_seen += input_batch.shape[0]
            examples_seen = examples_seen + input_batch.shape[1]
            global_step = global_step + 1

            if global_step % eval_freq == 0 then
                local train_loss, val_loss = evaluate_model(
                    model, train_loader, val_loader, device, eval_iter, calc_loss_loader_cls)
                train_losses[#train_losses + 1] = train_loss
                val_losses[#val_losses + 1] = val_loss
            end
        end

        local train_accuracy = calc_accuracy_loader(train_loader, model, device, eval_iter)
        local val_accuracy = calc_accuracy_loader(val_loader, model, device, eval_iter)
        train_accs[#train_accs + 1] = train_accuracy
        val_accs[#val_accs + 1] = val_accuracy
    end

    return train_losses, val_losses, train_accs, val_accs, examples_seen
end

describe("LLMs from scratch ch06: finetuning for classification", function()
    it("SpamDataset padding, frozen body with a new out_head, train_classifier_simple", function()
        tide.manual_seed(123)
        local device = tide.device("cpu")
        -- spam: texts with "win" and "free", ham: plain words
        local words_spam = { "win", "free", "cash", "prize" }
        local words_ham = { "see", "you", "at", "home", "ok" }
        local function message(words, n)
            local out = {}
            for k = 1, n do
                out[k] = words[math.random(#words)]
            end
            return table.concat(out, " ")
        end
        math.randomseed(7)
        local rows = {}
        for i = 1, 32 do
            local spam = i % 2 == 0
            rows[i] = { Text = message(spam and words_spam or words_ham, math.random(1, 3)),
                Label = spam and 1 or 0 }
        end
        -- labels are class indices: 1-based here (ham 1, spam 2)
        for _, row in ipairs(rows) do
            row["Label"] = row["Label"] + 1
        end
        local all_text = {}
        for i, row in ipairs(rows) do
            all_text[i] = row["Text"]
        end
        -- a char tokenizer over the messages, one id kept for padding (the last one)
        local tokenizer = CharTokenizer(table.concat(all_text, " "))
        local pad_token_id = tokenizer.n_vocab + 1

        local train_rows, val_rows = {}, {}
        for i, row in ipairs(rows) do
            local into = i <= 24 and train_rows or val_rows
            into[#into + 1] = row
        end
        -- train_dataset = SpamDataset(csv_file="train.csv", max_length=None, tokenizer=tokenizer)
        local train_dataset = SpamDataset(train_rows, tokenizer, nil, pad_token_id)
        -- val_dataset = SpamDataset(csv_file="validation.csv", max_length=train_dataset.max_length, ...)
        local val_dataset = SpamDataset(val_rows, tokenizer, 8, pad_token_id)
        assert.is_true(train_dataset.max_length > 8)
        -- every text padded to max_length with pad_token_id
        for i = 1, train_dataset:len() do
            local enc, label = train_dataset:get(i)
            assert.are.same({ train_dataset.max_length }, enc.shape)
            assert.are.equal(tide.int64, enc.dtype)
            assert.are.same({}, label.shape)
            local text = train_rows[i]["Text"]
            assert.are.equal(train_dataset.max_length - #text, enc:eq(pad_token_id):sum():item())
        end
        -- val texts truncated to 8
        assert.are.same({ 8 }, val_dataset:get(1).shape)

        local cfg = tiny_config()
        cfg["vocab_size"] = pad_token_id
        -- the context must hold the longest text
        cfg["context_length"] = train_dataset.max_length
        local train_loader = tide.data.DataLoader(train_dataset, { batch_size = 8, shuffle = true,
            num_workers = 0, drop_last = true })
        local val_loader = tide.data.DataLoader(val_dataset, { batch_size = 8, num_workers = 0,
            drop_last = false })

        local model = GPTModel(cfg)
        -- ("pretrained" weights: a few next-token steps would go here; random is enough)
        model:eval()

        -- for param in model.parameters():
        --     param.requires_grad = False
        for _, param in ipairs(model:parameters()) do
            param.requires_grad = false
        end

        -- torch.manual_seed(123)
        tide.manual_seed(123)
        local num_classes = 2
        -- model.out_head = torch.nn.Linear(in_features=BASE_CONFIG["emb_dim"], out_features=num_classes)
        model.out_head = nn.Linear({ in_features = cfg["emb_dim"], out_features = num_classes })

        -- for param in model.trf_blocks[-1].parameters():
        for _, param in ipairs(model.trf_blocks[-1]:parameters()) do
            param.requires_grad = true
        end

        -- for param in model.final_norm.parameters():
        for _, param in ipairs(model.final_norm:parameters()) do
            param.requires_grad = true
        end

        -- the trainable ones: the new head (with bias), the last block and final_norm
        local trainable, frozen_before = 0, {}
        for _, p in ipairs(model:parameters()) do
            if p.requires_grad then
                trainable = trainable + p:numel()
            end
        end
        local block_params = 0
        for _, p in ipairs(model.trf_blocks[2]:parameters()) do
            block_params = block_params + p:numel()
        end
        assert.are.equal(block_params + 2 * 16 + (16 * 2 + 2), trainable)
        assert.is_false(model.trf_blocks[1].att.W_query.weight.requires_grad)
        assert.is_true(rawequal(model.trf_blocks[-1], model.trf_blocks[2]))
        for i, p in ipairs(model.trf_blocks[1]:parameters()) do
            frozen_before[i] = p:clone()
        end
        local tok_before = model.tok_emb.weight:clone()

        -- inputs = tokenizer.encode("Do you have time"); inputs = torch.tensor(inputs).unsqueeze(0)
        local inputs = tide.tensor(tokenizer.encode("see you")):unsqueeze(1)
        local outputs = tide.no_grad(function()
            return model(inputs)
        end)
        -- outputs.shape: torch.Size([1, 4, 2])
        assert.are.same({ 1, 7, 2 }, outputs.shape)
        -- probas = torch.softmax(outputs[:, -1, :], dim=-1); label = torch.argmax(probas)
        local probas = tide.softmax(outputs[{ {}, -1, {} }], { dim = -1 })
        local label = tide.argmax(probas)
        assert.is_true(label:item() == 1 or label:item() == 2)

        -- train_accuracy = calc_accuracy_loader(train_loader, model, device, num_batches=10)
        local train_accuracy = calc_accuracy_loader(train_loader, model, device, 10)
        assert.is_true(train_accuracy >= 0 and train_accuracy <= 1)

        -- optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5, weight_decay=0.1)
        local optimizer = tide.optim.AdamW(model:parameters(), { lr = 5e-3, weight_decay = 0.1 })
        local train_losses, val_losses, train_accs, val_accs, examples_seen =
            train_classifier_simple(model, train_loader, val_loader, optimizer, device, 8, 4, 2)
        assert.are.equal(8 * 24, examples_seen)
        assert.are.equal(6, #train_losses) -- 24 steps, evaluated at 0, 4, ..., 20
        assert.are.equal(#train_losses, #val_losses)
        assert.are.equal(8, #train_accs)
        assert.are.equal(8, #val_accs)
        assert.is_true(train_losses[#train_losses] < train_losses[1],
            ("train loss %.3f -> %.3f"):format(train_losses[1], train_losses[#train_losses]))
        assert.is_true(train_accs[8] >= 0.75, "train accuracy " .. train_accs[8])
        -- the frozen parts did not move (AdamW's weight decay skips parameters without grads)
        for i, p in ipairs(model.trf_blocks[1]:parameters()) do
            assert.is_true(tide.equal(frozen_before[i], p))
        end
        assert.is_true(tide.equal(tok_before, model.tok_emb.weight))
    end)
end)

---------------------------------------------------------------------------------------------
-- gaps met in these chapters, and their fixes
---------------------------------------------------------------------------------------------
describe("LLMs from scratch: gaps", function()
    it("nn.Parameter takes requires_grad by name (ch03's nn.Parameter(t, requires_grad=False))",
        function()
            local t = tide.rand(3, 2)
            -- W_query = torch.nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)
            local frozen = nn.Parameter(t, { requires_grad = false })
            assert.is_false(frozen.requires_grad)
            assert.is_true(nn.Parameter(t, { requires_grad = true }).requires_grad)
            assert.is_true(nn.Parameter(t, {}).requires_grad)
            assert.is_false(nn.Parameter(t, nil, { requires_grad = false }).requires_grad)
            -- a module registers it as a (frozen) parameter
            local m = nn.Module()
            m.W = frozen
            assert.are.equal(1, #m:parameters())
            assert.are.equal("tide: Parameter: requires_grad given both by position and by " ..
                "name; give it once",
                select(2, pcall(nn.Parameter, t, false, { requires_grad = false })):match("tide:.*"))
            assert.are.equal("tide: Parameter: unknown option requires_gard; the only one is " ..
                "requires_grad (nn.Parameter(t, {requires_grad = false}))",
                select(2, pcall(nn.Parameter, t, { requires_gard = false })):match("tide:.*"))
            assert.are.equal("tide: Parameter: requires_grad must be true or false, got 0",
                select(2, pcall(nn.Parameter, t, { requires_grad = 0 })):match("tide:.*"))
            assert.are.equal("tide: Parameter: expected (t[, requires_grad]), got 4 arguments",
                select(2, pcall(nn.Parameter, t, false, 1, 2)):match("tide:.*"))
            assert.is_false(t.requires_grad) -- the input is left as it was
        end)

    it("ch05's top-k filter with torch.where's names (condition by position)", function()
        local next_token_logits = tide.tensor({ 4.51, 0.89, -1.90, 6.75, 1.63, -1.62, -1.89, 6.28, 1.79 })
        local top_k = 3
        -- top_logits, top_pos = torch.topk(next_token_logits, top_k)
        local top_logits, top_pos = tide.topk(next_token_logits, top_k)
        assert.are.same({ 4, 8, 1 }, top_pos:totable())
        -- new_logits = torch.where(condition=next_token_logits < top_logits[-1],
        --     input=torch.tensor(float("-inf")), other=next_token_logits)
        local new_logits = tide.where({ condition = next_token_logits:lt(top_logits[-1]),
            input = tide.tensor(-tide.inf), other = next_token_logits })
        -- topk_probas = torch.softmax(new_logits, dim=0)
        local topk_probas = tide.softmax(new_logits, { dim = 1 })
        assert.are.equal(6, topk_probas:eq(0):sum():item())
        assert_close(0.0615, topk_probas[1]:item(), 1e-4, "topk_probas[1]")
        assert_close(0.5775, topk_probas[4]:item(), 1e-4, "topk_probas[4]")
        assert_close(0.3610, topk_probas[8]:item(), 1e-4, "topk_probas[8]")
    end)
end)
