-- ported_scripts68_spec.lua — karpathy/llama2.c's model.py (ModelArgs, RMSNorm,
-- precompute_freqs_cis, reshape_for_broadcast, apply_rotary_emb, repeat_kv, Attention with the
-- manual causal-mask path and the flash (SDPA is_causal) path, FeedForward (SwiGLU),
-- TransformerBlock, Transformer with weight tying, _init_weights and the scaled init,
-- configure_optimizers, estimate_mfu, generate) and train.py's inner loop (get_lr's cosine
-- schedule with warmup, AdamW, clip_grad_norm_), ported line for line at tiny sizes on fixed
-- tokens. The Python line stands above each Lua line that differs from it. Token ids and class
-- targets are 1-based (-1 stays the ignore_index); layer_id stays 0-based (it names layers).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- @dataclass class ModelArgs: (the defaults of the Llama 7B model; a call fills the rest)
local MODEL_ARGS_DEFAULTS = { dim = 4096, n_layers = 32, n_heads = 32, n_kv_heads = nil,
    vocab_size = 32000, hidden_dim = nil, multiple_of = 256, norm_eps = 1e-5,
    max_seq_len = 2048, dropout = 0.0 }
local function ModelArgs(kw)
    local a = {}
    for k, v in pairs(MODEL_ARGS_DEFAULTS) do a[k] = v end
    for k, v in pairs(kw or {}) do
        assert(MODEL_ARGS_DEFAULTS[k] ~= nil or k == "n_kv_heads" or k == "hidden_dim",
            "ModelArgs: unexpected keyword argument " .. k)
        a[k] = v
    end
    return a
end

-- class RMSNorm(torch.nn.Module):
local RMSNorm = nn.Module:extend("RMSNorm")
function RMSNorm:init(dim, eps)
    self.eps = eps
    self.weight = nn.Parameter(tide.ones(dim))
end

function RMSNorm:_norm(x)
    -- return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
    return x * tide.rsqrt(x:pow(2):mean(-1, { keepdim = true }) + self.eps)
end

function RMSNorm:forward(x)
    -- output = self._norm(x.float()).type_as(x)
    local output = self:_norm(x:float()):type_as(x)
    return output * self.weight
end

-- def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0):
local function precompute_freqs_cis(dim, end_, theta)
    theta = theta or 10000.0
    -- freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    local freqs = 1.0 / (theta ^ (tide.arange(0, dim, 2)[{ { 1, math.floor(dim / 2) } }]:float()
        / dim))
    -- t = torch.arange(end, device=freqs.device)
    local t = tide.arange(end_, { device = freqs.device })
    -- freqs = torch.outer(t, freqs).float()
    freqs = tide.outer(t, freqs):float()
    local freqs_cos = tide.cos(freqs) -- real part
    local freqs_sin = tide.sin(freqs) -- imaginary part
    return freqs_cos, freqs_sin
end

-- def reshape_for_broadcast(freqs_cis: torch.Tensor, x: torch.Tensor):
local function reshape_for_broadcast(freqs_cis, x)
    local ndim = x.ndim
    -- assert 0 <= 1 < ndim
    assert(1 < ndim)
    -- assert freqs_cis.shape == (x.shape[1], x.shape[-1])
    assert(freqs_cis.shape == tide.Size({ x.shape[2], x.shape[ndim] }))
    -- shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
    local shape = {}
    for i, d in ipairs(x:size()) do
        shape[i] = (i == 2 or i == ndim) and d or 1
    end
    return freqs_cis:view(shape)
end

-- def apply_rotary_emb(xq, xk, freqs_cos, freqs_sin) -> Tuple[torch.Tensor, torch.Tensor]:
local function apply_rotary_emb(xq, xk, freqs_cos, freqs_sin)
    -- reshape xq and xk to match the complex representation
    -- xq_r, xq_i = xq.float().reshape(xq.shape[:-1] + (-1, 2)).unbind(-1)
    local xq_r, xq_i = unpack(xq:float():reshape(xq.shape[{ { 1, -2 } }] + { -1, 2 }):unbind(-1))
    local xk_r, xk_i = unpack(xk:float():reshape(xk.shape[{ { 1, -2 } }] + { -1, 2 }):unbind(-1))

    -- reshape freqs_cos and freqs_sin for broadcasting
    freqs_cos = reshape_for_broadcast(freqs_cos, xq_r)
    freqs_sin = reshape_for_broadcast(freqs_sin, xq_r)

    -- apply rotation using real numbers
    local xq_out_r = xq_r * freqs_cos - xq_i * freqs_sin
    local xq_out_i = xq_r * freqs_sin + xq_i * freqs_cos
    local xk_out_r = xk_r * freqs_cos - xk_i * freqs_sin
    local xk_out_i = xk_r * freqs_sin + xk_i * freqs_cos

    -- flatten last two dimensions
    -- xq_out = torch.stack([xq_out_r, xq_out_i], dim=-1).flatten(3)
    local xq_out = tide.stack({ xq_out_r, xq_out_i }, { dim = -1 }):flatten(4)
    local xk_out = tide.stack({ xk_out_r, xk_out_i }, { dim = -1 }):flatten(4)

    return xq_out:type_as(xq), xk_out:type_as(xk)
end

-- def repeat_kv(x: torch.Tensor, n_rep: int) -> torch.Tensor:
local function repeat_kv(x, n_rep)
    -- """torch.repeat_interleave(x, dim=2, repeats=n_rep)"""
    local bs, slen, n_kv_heads, head_dim = unpack(x:size())
    if n_rep == 1 then
        return x
    end
    -- x[:, :, :, None, :].expand(...).reshape(bs, slen, n_kv_heads * n_rep, head_dim)
    return x[{ {}, {}, {}, tide.newaxis, {} }]
        :expand(bs, slen, n_kv_heads, n_rep, head_dim)
        :reshape(bs, slen, n_kv_heads * n_rep, head_dim)
end

-- the spec's switch between the two attention paths (llama2.c picks by the PyTorch version)
local FORCE_SLOW_ATTENTION = false

-- class Attention(nn.Module):
local Attention = nn.Module:extend("Attention")
function Attention:init(args)
    -- self.n_kv_heads = args.n_heads if args.n_kv_heads is None else args.n_kv_heads
    self.n_kv_heads = args.n_kv_heads == nil and args.n_heads or args.n_kv_heads
    assert(args.n_heads % self.n_kv_heads == 0)
    local model_parallel_size = 1
    -- self.n_local_heads = args.n_heads // model_parallel_size
    self.n_local_heads = math.floor(args.n_heads / model_parallel_size)
    -- self.n_local_kv_heads = self.n_kv_heads // model_parallel_size
    self.n_local_kv_heads = math.floor(self.n_kv_heads / model_parallel_size)
    -- self.n_rep = self.n_local_heads // self.n_local_kv_heads
    self.n_rep = math.floor(self.n_local_heads / self.n_local_kv_heads)
    -- self.head_dim = args.dim // args.n_heads
    self.head_dim = math.floor(args.dim / args.n_heads)
    -- self.wq = nn.Linear(args.dim, args.n_heads * self.head_dim, bias=False)
    self.wq = nn.Linear(args.dim, args.n_heads * self.head_dim, { bias = false })
    self.wk = nn.Linear(args.dim, self.n_kv_heads * self.head_dim, { bias = false })
    self.wv = nn.Linear(args.dim, self.n_kv_heads * self.head_dim, { bias = false })
    self.wo = nn.Linear(args.n_heads * self.head_dim, args.dim, { bias = false })
    self.attn_dropout = nn.Dropout(args.dropout)
    self.resid_dropout = nn.Dropout(args.dropout)
    self.dropout = args.dropout

    -- use flash attention or a manual implementation?
    -- self.flash = hasattr(torch.nn.functional, 'scaled_dot_product_attention')
    self.flash = F.scaled_dot_product_attention ~= nil and not FORCE_SLOW_ATTENTION
    if not self.flash then
        -- mask = torch.full((1, 1, args.max_seq_len, args.max_seq_len), float("-inf"))
        local mask = tide.full({ 1, 1, args.max_seq_len, args.max_seq_len }, -math.huge)
        -- mask = torch.triu(mask, diagonal=1)
        mask = tide.triu(mask, { diagonal = 1 })
        self:register_buffer("mask", mask)
    end
end

function Attention:forward(x, freqs_cos, freqs_sin)
    -- bsz, seqlen, _ = x.shape
    local bsz, seqlen = unpack(x:size())

    -- QKV
    local xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)
    xq = xq:view(bsz, seqlen, self.n_local_heads, self.head_dim)
    xk = xk:view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)
    xv = xv:view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)

    -- RoPE relative positional embeddings
    xq, xk = apply_rotary_emb(xq, xk, freqs_cos, freqs_sin)

    -- grouped multiquery attention: expand out keys and values
    xk = repeat_kv(xk, self.n_rep) -- (bs, seqlen, n_local_heads, head_dim)
    xv = repeat_kv(xv, self.n_rep) -- (bs, seqlen, n_local_heads, head_dim)

    -- make heads into a batch dimension
    -- xq = xq.transpose(1, 2)  # (bs, n_local_heads, seqlen, head_dim)
    xq = xq:transpose(2, 3)
    xk = xk:transpose(2, 3)
    xv = xv:transpose(2, 3)

    local output
    -- flash implementation
    if self.flash then
        -- F.scaled_dot_product_attention(xq, xk, xv, attn_mask=None,
        --     dropout_p=self.dropout if self.training else 0.0, is_causal=True)
        output = F.scaled_dot_product_attention(xq, xk, xv, { attn_mask = nil,
            dropout_p = self.training and self.dropout or 0.0, is_causal = true })
    else
        -- manual implementation
        -- scores = torch.matmul(xq, xk.transpose(2, 3)) / math.sqrt(self.head_dim)
        local scores = tide.matmul(xq, xk:transpose(3, 4)) / math.sqrt(self.head_dim)
        assert(self.mask ~= nil)
        -- scores = scores + self.mask[:, :, :seqlen, :seqlen]
        scores = scores + self.mask[{ {}, {}, { 1, seqlen }, { 1, seqlen } }]
        -- scores = F.softmax(scores.float(), dim=-1).type_as(xq)
        scores = F.softmax(scores:float(), { dim = -1 }):type_as(xq)
        scores = self.attn_dropout(scores)
        output = tide.matmul(scores, xv) -- (bs, n_local_heads, seqlen, head_dim)
    end

    -- restore time as batch dimension and concat heads
    -- output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
    output = output:transpose(2, 3):contiguous():view(bsz, seqlen, -1)

    -- final projection into the residual stream
    output = self.wo(output)
    output = self.resid_dropout(output)
    return output
end

-- class FeedForward(nn.Module):
local FeedForward = nn.Module:extend("FeedForward")
-- def __init__(self, dim: int, hidden_dim: int, multiple_of: int, dropout: float):
function FeedForward:init(dim, hidden_dim, multiple_of, dropout)
    if hidden_dim == nil then
        hidden_dim = 4 * dim
        -- hidden_dim = int(2 * hidden_dim / 3)
        hidden_dim = math.floor(2 * hidden_dim / 3)
        -- hidden_dim = multiple_of * ((hidden_dim + multiple_of - 1) // multiple_of)
        hidden_dim = multiple_of * math.floor((hidden_dim + multiple_of - 1) / multiple_of)
    end
    self.w1 = nn.Linear(dim, hidden_dim, { bias = false })
    self.w2 = nn.Linear(hidden_dim, dim, { bias = false })
    self.w3 = nn.Linear(dim, hidden_dim, { bias = false })
    self.dropout = nn.Dropout(dropout)
end

function FeedForward:forward(x)
    return self.dropout(self.w2(F.silu(self.w1(x)) * self.w3(x)))
end

-- class TransformerBlock(nn.Module):
local TransformerBlock = nn.Module:extend("TransformerBlock")
function TransformerBlock:init(layer_id, args)
    self.n_heads = args.n_heads
    self.dim = args.dim
    -- self.head_dim = args.dim // args.n_heads
    self.head_dim = math.floor(args.dim / args.n_heads)
    self.attention = Attention(args)
    -- FeedForward(dim=args.dim, hidden_dim=args.hidden_dim, multiple_of=args.multiple_of,
    --     dropout=args.dropout)
    self.feed_forward = FeedForward(args.dim, args.hidden_dim, args.multiple_of, args.dropout)
    self.layer_id = layer_id
    -- self.attention_norm = RMSNorm(args.dim, eps=args.norm_eps)
    self.attention_norm = RMSNorm(args.dim, args.norm_eps)
    self.ffn_norm = RMSNorm(args.dim, args.norm_eps)
end

function TransformerBlock:forward(x, freqs_cos, freqs_sin)
    -- h = x + self.attention.forward(self.attention_norm(x), freqs_cos, freqs_sin)
    local h = x + self.attention:forward(self.attention_norm(x), freqs_cos, freqs_sin)
    -- out = h + self.feed_forward.forward(self.ffn_norm(h))
    local out = h + self.feed_forward:forward(self.ffn_norm(h))
    return out
end

-- class Transformer(nn.Module):
local Transformer = nn.Module:extend("Transformer")
function Transformer:init(params)
    self.params = params
    self.vocab_size = params.vocab_size
    self.n_layers = params.n_layers

    self.tok_embeddings = nn.Embedding(params.vocab_size, params.dim)
    self.dropout = nn.Dropout(params.dropout)
    -- self.layers = torch.nn.ModuleList()
    self.layers = nn.ModuleList()
    -- for layer_id in range(params.n_layers):
    for layer_id = 0, params.n_layers - 1 do
        self.layers:append(TransformerBlock(layer_id, params))
    end
    -- self.norm = RMSNorm(params.dim, eps=params.norm_eps)
    self.norm = RMSNorm(params.dim, params.norm_eps)
    -- self.output = nn.Linear(params.dim, params.vocab_size, bias=False)
    self.output = nn.Linear(params.dim, params.vocab_size, { bias = false })

    -- share the unembedding parameters with the embedding parameters
    self.tok_embeddings.weight = self.output.weight

    -- some useful precompute for the RoPE relative positional embeddings
    -- precompute_freqs_cis(self.params.dim // self.params.n_heads, self.params.max_seq_len)
    local freqs_cos, freqs_sin = precompute_freqs_cis(
        math.floor(self.params.dim / self.params.n_heads), self.params.max_seq_len)
    -- self.register_buffer("freqs_cos", freqs_cos, persistent=False)
    self:register_buffer("freqs_cos", freqs_cos, { persistent = false })
    self:register_buffer("freqs_sin", freqs_sin, { persistent = false })

    -- init all weights
    -- self.apply(self._init_weights)
    self:apply(function(m) self:_init_weights(m) end)
    -- apply special scaled init to the residual projections, per GPT-2 paper
    -- for pn, p in self.named_parameters():
    for _, np in ipairs(self:named_parameters()) do
        local pn, p = np[1], np[2]
        -- if pn.endswith('w3.weight') or pn.endswith('wo.weight'):
        if pn:sub(-#"w3.weight") == "w3.weight" or pn:sub(-#"wo.weight") == "wo.weight" then
            -- torch.nn.init.normal_(p, mean=0.0, std=0.02/math.sqrt(2 * params.n_layers))
            nn.init.normal_(p, { mean = 0.0, std = 0.02 / math.sqrt(2 * params.n_layers) })
        end
    end

    -- Initialize attribute for the loss of the last forward call.
    self.last_loss = nil
end

function Transformer:_init_weights(module)
    -- if isinstance(module, nn.Linear):
    if tide.isinstance(module, nn.Linear) then
        nn.init.normal_(module.weight, { mean = 0.0, std = 0.02 })
        if module.bias ~= nil then
            nn.init.zeros_(module.bias)
        end
    elseif tide.isinstance(module, nn.Embedding) then
        nn.init.normal_(module.weight, { mean = 0.0, std = 0.02 })
    end
end

-- def forward(self, tokens: torch.Tensor, targets: Optional[torch.Tensor] = None) -> torch.Tensor:
function Transformer:forward(tokens, targets)
    -- _bsz, seqlen = tokens.shape
    local _, seqlen = unpack(tokens:size())
    local h = self.tok_embeddings(tokens)
    h = self.dropout(h)
    -- freqs_cos = self.freqs_cos[:seqlen]
    local freqs_cos = self.freqs_cos[{ { 1, seqlen } }]
    local freqs_sin = self.freqs_sin[{ { 1, seqlen } }]

    -- for layer in self.layers:
    for _, layer in ipairs(self.layers) do
        h = layer(h, freqs_cos, freqs_sin)
    end
    h = self.norm(h)

    local logits
    if targets ~= nil then
        -- if we are given some desired targets also calculate the loss
        logits = self.output(h)
        -- F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        self.last_loss = F.cross_entropy(logits:view(-1, logits:size(-1)), targets:view(-1),
            { ignore_index = -1 })
    else
        -- inference-time mini-optimization: only forward the output on the very last position
        -- logits = self.output(h[:, [-1], :]) # note: using list [-1] to preserve the time dim
        logits = self.output(h[{ {}, tide.tensor({ -1 }), {} }])
        self.last_loss = nil
    end

    return logits
end

-- def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
-- (print: the spec passes one to read the lines)
function Transformer:configure_optimizers(weight_decay, learning_rate, betas, device_type, print)
    print = print or _G.print
    -- start with all of the candidate parameters
    -- param_dict = {pn: p for pn, p in self.named_parameters()}  (an ordered list of pairs)
    local param_dict = self:named_parameters()
    -- filter out those that do not require grad
    -- param_dict = {pn: p for pn, p in param_dict.items() if p.requires_grad}
    local kept = {}
    for _, np in ipairs(param_dict) do
        if np[2].requires_grad then kept[#kept + 1] = np end
    end
    param_dict = kept
    -- create optim groups. Any parameters that is 2D will be weight decayed, otherwise no.
    -- decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
    -- nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
    local decay_params, nodecay_params = {}, {}
    for _, np in ipairs(param_dict) do
        local p = np[2]
        if p:dim() >= 2 then
            decay_params[#decay_params + 1] = p
        else
            nodecay_params[#nodecay_params + 1] = p
        end
    end
    local optim_groups = {
        { params = decay_params, weight_decay = weight_decay },
        { params = nodecay_params, weight_decay = 0.0 },
    }
    -- num_decay_params = sum(p.numel() for p in decay_params)
    local num_decay_params, num_nodecay_params = 0, 0
    for _, p in ipairs(decay_params) do num_decay_params = num_decay_params + p:numel() end
    for _, p in ipairs(nodecay_params) do num_nodecay_params = num_nodecay_params + p:numel() end
    -- print(f"num decayed parameter tensors: {len(decay_params)}, with {num_decay_params:,} ...")
    print(("num decayed parameter tensors: %d, with %d parameters")
        :format(#decay_params, num_decay_params))
    print(("num non-decayed parameter tensors: %d, with %d parameters")
        :format(#nodecay_params, num_nodecay_params))
    -- Create AdamW optimizer and use the fused version if it is available
    -- fused_available = 'fused' in inspect.signature(torch.optim.AdamW).parameters
    local fused_available = true -- tide's AdamW takes fused
    local use_fused = fused_available and device_type == "cuda"
    -- extra_args = dict(fused=True) if use_fused else dict()
    local opts = { lr = learning_rate, betas = betas }
    if use_fused then opts.fused = true end
    -- optimizer = torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas, **extra_args)
    local optimizer = tide.optim.AdamW(optim_groups, opts)
    print(("using fused AdamW: %s"):format(use_fused and "True" or "False"))

    return optimizer
end

-- def estimate_mfu(self, fwdbwd_per_iter, dt):
function Transformer:estimate_mfu(fwdbwd_per_iter, dt)
    -- N = sum(p.numel() for p in self.parameters())
    local N = 0
    for _, p in ipairs(self:parameters()) do N = N + p:numel() end
    local cfg = self.params
    -- L, H, Q, T = cfg.n_layers, cfg.n_heads, cfg.dim//cfg.n_heads, cfg.max_seq_len
    local L, H, Q, T = cfg.n_layers, cfg.n_heads, math.floor(cfg.dim / cfg.n_heads),
        cfg.max_seq_len
    local flops_per_token = 6 * N + 12 * L * H * Q * T
    local flops_per_fwdbwd = flops_per_token * T
    local flops_per_iter = flops_per_fwdbwd * fwdbwd_per_iter
    -- express our flops throughput as ratio of A100 bfloat16 peak flops
    local flops_achieved = flops_per_iter * (1.0 / dt) -- per second
    local flops_promised = 312e12 -- A100 GPU bfloat16 peak flops is 312 TFLOPS
    local mfu = flops_achieved / flops_promised
    return mfu
end

-- @torch.inference_mode()
-- def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
function Transformer:generate(idx, max_new_tokens, temperature, top_k)
    if temperature == nil then temperature = 1.0 end
    return tide.inference_mode(function()
        -- for _ in range(max_new_tokens):
        for _ = 1, max_new_tokens do
            -- if the sequence context is growing too long we must crop it at block_size
            -- idx_cond = idx if idx.size(1) <= self.params.max_seq_len
            --     else idx[:, -self.params.max_seq_len:]
            local idx_cond = idx:size(2) <= self.params.max_seq_len and idx
                or idx[{ {}, { -self.params.max_seq_len, -1 } }]
            -- forward the model to get the logits for the index in the sequence
            local logits = self(idx_cond)
            -- logits = logits[:, -1, :] # crop to just the final time step
            logits = logits[{ {}, -1, {} }]
            local idx_next
            if temperature == 0.0 then
                -- "sample" the single most likely index
                -- _, idx_next = torch.topk(logits, k=1, dim=-1)
                _, idx_next = tide.topk(logits, { k = 1, dim = -1 })
            else
                -- pluck the logits at the final step and scale by desired temperature
                logits = logits / temperature
                -- optionally crop the logits to only the top k options
                if top_k ~= nil then
                    -- v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                    local v = tide.topk(logits, math.min(top_k, logits:size(-1)))
                    -- logits[logits < v[:, [-1]]] = -float('Inf')
                    logits[logits:lt(v[{ {}, tide.tensor({ -1 }) }])] = -math.huge
                end
                -- apply softmax to convert logits to (normalized) probabilities
                local probs = F.softmax(logits, { dim = -1 })
                -- idx_next = torch.multinomial(probs, num_samples=1)
                idx_next = tide.multinomial(probs, { num_samples = 1 })
            end
            -- append sampled index to the running sequence and continue
            -- idx = torch.cat((idx, idx_next), dim=1)
            idx = tide.cat({ idx, idx_next }, { dim = 2 })
        end

        return idx
    end)
end

---------------------------------------------------------------------------------------------
-- the checks: PyTorch 1.13's values for the same weights (llama2.c's model.py run as is, on its
-- manual attention path since 1.13 has no SDPA)
---------------------------------------------------------------------------------------------
local ARGS = { dim = 32, n_layers = 2, n_heads = 4, n_kv_heads = 2, vocab_size = 40,
    multiple_of = 8, max_seq_len = 16, dropout = 0.0 }

-- the deterministic weights: parameter i (0-based, named_parameters order, the tied weight once)
-- is 0.1 * sin(0.37 * k + i) over its flat index k, plus 0.5 for the 1-D (RMSNorm) weights
local function fill_weights(model)
    tide.no_grad(function()
        for i, np in ipairs(model:named_parameters()) do
            local p = np[2]
            local k = tide.arange(p:numel(), { dtype = tide.float64 })
            p:copy_((0.1 * tide.sin(0.37 * k + (i - 1)) + (p:dim() == 1 and 0.5 or 0))
                :float():view(p.shape))
        end
    end)
end

local function flat(t) return t:detach():double():flatten():tolist() end

-- PyTorch's tokens + 1; targets + 1 with -1 kept
local TOKENS = { { 4, 8, 2, 1, 40, 13 }, { 6, 6, 21, 34, 3, 9 } }
local TARGETS = { { 8, 2, 1, 40, 13, -1 }, { 6, 21, -1, 3, 9, 10 } }

describe("karpathy/llama2.c model.py", function()
    it("precompute_freqs_cis and apply_rotary_emb match PyTorch", function()
        local cos, sin = precompute_freqs_cis(8, 16)
        assert.are.same({ 16, 4 }, cos.shape)
        local rows = tide.tensor({ 2, 6, 16 })
        assert_close_list({ 0.54030234, 0.99500418, 0.99994999, 0.99999952, 0.2836622,
            0.87758255, 0.99875027, 0.99998754, -0.7596879, 0.0707372, 0.98877108, 0.99988753 },
            flat(cos:index_select(1, rows)), 1e-5, "freqs_cos")
        assert_close_list({ 0.84147096, 0.09983342, 0.00999983, 0.001, -0.95892429, 0.47942555,
            0.04997917, 0.00499998, 0.65028787, 0.997495, 0.14943813, 0.01499944 },
            flat(sin:index_select(1, rows)), 1e-5, "freqs_sin")
        local xq = tide.sin(tide.arange(2 * 3 * 4 * 8, { dtype = tide.float32 }) * 0.3)
            :view(2, 3, 4, 8)
        local xk = tide.cos(tide.arange(2 * 3 * 2 * 8, { dtype = tide.float32 }) * 0.2)
            :view(2, 3, 2, 8)
        local oq, ok = apply_rotary_emb(xq, xk, cos[{ { 1, 3 } }], sin[{ { 1, 3 } }])
        assert.are.same({ 2, 3, 4, 8 }, oq.shape)
        assert.are.same({ 2, 3, 2, 8 }, ok.shape)
        assert_close_list({ 1.159096, -0.31441909, -0.78118008, -1.15726149, -0.86099052,
            -0.71024287, -0.4485209, -0.16562334, -0.43860114, -0.05323752, 0.48609233,
            0.97563696, 0.9520638, 1.01721382, 0.93300194, 0.78957045, -0.5122503, 0.39293391,
            0.06429919, -0.28159332, -0.54310328, -0.78993064, -0.92745709, -0.99882656,
            1.19406295, -0.52625799, -0.58091778, -0.56034362, -0.15110451, 0.1477637,
            0.43480211, 0.6834861 }, flat(oq[{ 2, 3 }]), 1e-5, "xq_out")
        assert_close_list({ 0.27415162, -1.36239934, -0.81331331, -0.87654269, -0.6487084,
            -0.49677238, -0.30722049, -0.11245991, -0.1914175, 0.22689135, 0.40281272,
            0.67829585, 0.76667196, 0.89323086, 0.95917326, 0.99750179 },
            flat(ok[{ 1, 2 }]), 1e-5, "xk_out")
        -- repeat_kv is repeat_interleave on dim 3
        assert.is_true(tide.equal(repeat_kv(ok, 2), ok:repeat_interleave(2, { dim = 3 })))
    end)

    it("Transformer: tying, init, logits and loss, last-position logits, generate", function()
        tide.manual_seed(68)
        local args = ModelArgs(ARGS)
        local model = Transformer(args)
        -- weight tying: one parameter under tok_embeddings' name
        assert.are.equal(model.output.weight, model.tok_embeddings.weight)
        local names = {}
        for _, np in ipairs(model:named_parameters()) do names[#names + 1] = np[1] end
        -- PyTorch's named_parameters() (ModuleList entries are 1-based in tide: layers.1 is 0)
        local want = { "tok_embeddings.weight" }
        for l = 1, 2 do
            for _, n in ipairs({ "attention.wq", "attention.wk", "attention.wv", "attention.wo",
                "feed_forward.w1", "feed_forward.w2", "feed_forward.w3", "attention_norm",
                "ffn_norm" }) do
                want[#want + 1] = ("layers.%d.%s.weight"):format(l, n)
            end
        end
        want[#want + 1] = "norm.weight"
        assert.are.same(want, names)
        -- hidden_dim = 8 * ceil(int(2 * 128 / 3) / 8) = 88
        assert.are.same({ 88, 32 }, model.layers[1].feed_forward.w1.weight.shape)
        -- the scaled init: w3 and wo at std 0.02 / sqrt(4) = 0.01, the others 0.02
        assert.is_true(model.layers[1].feed_forward.w3.weight:std():item() < 0.013)
        assert.is_true(model.layers[1].feed_forward.w1.weight:std():item() > 0.017)
        assert.is_nil(model:state_dict()["freqs_cos"]) -- persistent=False

        fill_weights(model)
        local tokens, targets = tide.tensor(TOKENS), tide.tensor(TARGETS)
        local logits = model(tokens, targets)
        assert.are.same({ 2, 6, 40 }, logits.shape)
        assert.is_true(ported.close(model.last_loss:item(), 3.8401901721954346, 1e-5))
        assert_close_list({ 0.45718974, -0.28482348, -0.88305193, -1.03549778, -0.66520333,
            0.04089937, 0.7263552, 1.04513216 }, flat(logits[{ 2, 4, { 1, 8 } }]), 1e-4, "logits")
        assert_close_list({ 0.10601678, 0.57745707, 0.75738531, 0.55496997 },
            flat(logits[{ 1, 6, { -4, -1 } }]), 1e-4, "logits")
        assert.is_true(ported.close(logits:sum():item(), -1.134913682937622, 1e-3))

        local last = model(tokens)
        assert.is_nil(model.last_loss)
        assert.are.same({ 2, 1, 40 }, last.shape)
        assert_close_list({ -0.58205247, -0.11308095, 0.41297621, 0.73055452, 0.67933404,
            0.28517193, -0.25295085, -0.66337883 }, flat(last[{ 1, 1, { 1, 8 } }]), 1e-4, "last")
        assert_close_list({ -0.06229146, -0.69532162, -0.97733927, -0.76597607 },
            flat(last[{ 2, 1, { -4, -1 } }]), 1e-4, "last")

        -- the manual causal-mask path (PyTorch 1.13's) agrees with the flash path
        assert.is_true(model.layers[1].attention.flash)
        FORCE_SLOW_ATTENTION = true
        local slow = Transformer(args)
        FORCE_SLOW_ATTENTION = false
        assert.is_false(slow.layers[1].attention.flash)
        assert.are.same({ 1, 1, 16, 16 }, slow.layers[1].attention.mask.shape)
        fill_weights(slow)
        local slow_logits = slow(tokens, targets)
        assert.is_true(tide.allclose(slow_logits, logits, { atol = 1e-5 }))

        -- greedy generation (temperature 0): PyTorch's tokens + 1
        local out = model:generate(tokens[{ {}, { 1, 3 } }], 5, 0.0)
        assert.are.same({ { 4, 8, 2, 10, 1, 1, 27, 27 }, { 6, 6, 21, 4, 30, 13, 22, 22 } },
            out:tolist())
        -- past max_seq_len the context is cropped to the last 16 tokens
        local long = model:generate(tide.ones(1, 15, { dtype = tide.long }), 3, 0.0)
        assert.are.same({ 1, 18 }, long.shape)
        local cropped = model(long[{ {}, { 2, 17 } }])
        assert.are.equal(tide.argmax(cropped[{ 1, 1 }]):item(), long[{ 1, 18 }]:item())
        -- top_k sampling: each new token among the top 3 of its step's logits
        tide.manual_seed(1)
        local sampled = model:generate(tokens[{ {}, { 1, 3 } }], 4, 0.8, 3)
        assert.are.same({ 2, 7 }, sampled.shape)
        for t = 4, 7 do
            local ctx = sampled[{ {}, { 1, t - 1 } }]
            local _, top = tide.topk(model(ctx)[{ {}, -1, {} }], 3)
            for b = 1, 2 do
                local tok = sampled[{ b, t }]:item()
                assert.is_true(top[b]:eq(tok):any():item(), "token outside the top 3")
            end
        end
    end)

    it("configure_optimizers, estimate_mfu and train.py's loop with get_lr and clipping", function()
        tide.manual_seed(7)
        local model = Transformer(ModelArgs(ARGS))
        fill_weights(model)
        local lines = {}
        local optimizer = model:configure_optimizers(0.1, 5e-4, { 0.9, 0.95 }, "cpu",
            function(s) lines[#lines + 1] = s end)
        assert.are.same({ "num decayed parameter tensors: 15, with 24320 parameters",
            "num non-decayed parameter tensors: 5, with 160 parameters",
            "using fused AdamW: False" }, lines)
        assert.are.equal(0.1, optimizer.param_groups[1].weight_decay)
        assert.are.equal(0.0, optimizer.param_groups[2].weight_decay)
        assert.is_true(ported.close(model:estimate_mfu(4, 0.5), 6.52996923076923e-08, 1e-9))

        -- train.py: learning rate decay scheduler (cosine with warmup), tiny settings
        local warmup_iters, lr_decay_iters, learning_rate, min_lr = 10, 100, 5e-4, 0.0
        local function get_lr(it)
            -- 1) linear warmup for warmup_iters steps
            if it < warmup_iters then
                return learning_rate * it / warmup_iters
            end
            -- 2) if it > lr_decay_iters, return min learning rate
            if it > lr_decay_iters then
                return min_lr
            end
            -- 3) in between, use cosine decay down to min learning rate
            local decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
            assert(0 <= decay_ratio and decay_ratio <= 1)
            local coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio)) -- coeff ranges 0..1
            return min_lr + coeff * (learning_rate - min_lr)
        end
        local lrs = {}
        for _, it_ in ipairs({ 0, 5, 10, 55, 100, 101 }) do lrs[#lrs + 1] = get_lr(it_) end
        assert_close_list({ 0.0, 0.00025, 0.0005, 0.00025, 0.0, 0.0 }, lrs, 1e-12, "get_lr")

        -- the inner loop on one fixed batch, lr from get_lr past warmup (x40: 3 steps must show
        -- it), 2 micro steps, grad_clip = 1.0; X = (arange(32).view(4, 8) * 7 + 3) % 40 + 1
        local X = (tide.arange(32):view(4, 8) * 7 + 3):remainder(40) + 1
        local Y = (tide.arange(32):view(4, 8) * 11 + 5):remainder(40) + 1
        local grad_clip, gradient_accumulation_steps = 1.0, 2
        local losses = {}
        for iter_num = 1, 3 do
            local lr = get_lr(iter_num + warmup_iters) * 40
            for _, param_group in ipairs(optimizer.param_groups) do
                param_group.lr = lr
            end
            local loss
            for _ = 1, gradient_accumulation_steps do
                model(X, Y)
                loss = model.last_loss
                loss = loss / gradient_accumulation_steps
                loss:backward()
            end
            -- torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
            -- (tide's returns the total norm as a number)
            local norm = nn.utils.clip_grad_norm_(model:parameters(), grad_clip)
            assert_finite(norm, "grad norm")
            local sq = 0
            for _, p in ipairs(model:parameters()) do sq = sq + p.grad:pow(2):sum():item() end
            assert.is_true(math.sqrt(sq) <= math.min(norm, grad_clip) * (1 + 1e-5))
            optimizer:step()
            -- optimizer.zero_grad(set_to_none=True)
            optimizer:zero_grad({ set_to_none = true })
            losses[iter_num] = loss:item() * gradient_accumulation_steps
            assert_finite(losses[iter_num], "loss")
        end
        assert_close_list({ 3.7977614402770996, 3.611501455307007, 3.41471004486084 }, losses,
            1e-4, "train loss")
        assert.is_true(losses[3] < losses[1] - 0.3)
    end)
end)
