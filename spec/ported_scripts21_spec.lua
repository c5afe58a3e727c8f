-- ported_scripts21_spec.lua — karpathy/build-nanogpt's train_gpt2.py and harvardnlp's The Annotated
-- Transformer (the_annotated_transformer.py, the copy task) ported line for line, shrunk to tiny
-- sizes and random data. The Python line stands above each Lua line that differs from it; a line
-- tide cannot write as Python does is marked `-- GAP:`. Dims, indices and class targets are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local isinstance = tide.isinstance

---------------------------------------------------------------------------------------------
-- 1. build-nanogpt train_gpt2.py (DDP and the HellaSwag eval skipped: no process group, no data)
---------------------------------------------------------------------------------------------
local CausalSelfAttention = nn.Module:extend("CausalSelfAttention")
function CausalSelfAttention:init(config)
    assert(config.n_embd % config.n_head == 0)
    -- key, query, value projections for all heads, but in a batch
    self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
    -- output projection
    self.c_proj = nn.Linear(config.n_embd, config.n_embd)
    self.c_proj.NANOGPT_SCALE_INIT = 1
    -- regularization
    self.n_head = config.n_head
    self.n_embd = config.n_embd
end

function CausalSelfAttention:forward(x)
    -- B, T, C = x.size()
    local B, T, C = unpack(x:size())
    local qkv = self.c_attn(x)
    -- q, k, v = qkv.split(self.n_embd, dim=2)
    local q, k, v = unpack(qkv:split(self.n_embd, { dim = 3 }))
    -- k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) # (B, nh, T, hs)
    k = k:view(B, T, self.n_head, math.floor(C / self.n_head)):transpose(2, 3)
    q = q:view(B, T, self.n_head, math.floor(C / self.n_head)):transpose(2, 3)
    v = v:view(B, T, self.n_head, math.floor(C / self.n_head)):transpose(2, 3)
    -- y = F.scaled_dot_product_attention(q, k, v, is_causal=True) # flash attention
    local y = F.scaled_dot_product_attention(q, k, v, { is_causal = true })
    -- y = y.transpose(1, 2).contiguous().view(B, T, C)
    y = y:transpose(2, 3):contiguous():view(B, T, C)
    -- output projection
    y = self.c_proj(y)
    return y
end

local MLP = nn.Module:extend("MLP")
function MLP:init(config)
    self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd)
    -- self.gelu = nn.GELU(approximate='tanh')
    self.gelu = nn.GELU({ approximate = "tanh" })
    self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd)
    self.c_proj.NANOGPT_SCALE_INIT = 1
end

function MLP:forward(x)
    x = self.c_fc(x)
    x = self.gelu(x)
    x = self.c_proj(x)
    return x
end

local Block = nn.Module:extend("Block")
function Block:init(config)
    self.ln_1 = nn.LayerNorm(config.n_embd)
    self.attn = CausalSelfAttention(config)
    self.ln_2 = nn.LayerNorm(config.n_embd)
    self.mlp = MLP(config)
end

function Block:forward(x)
    x = x + self.attn(self.ln_1(x))
    x = x + self.mlp(self.ln_2(x))
    return x
end

-- @dataclass class GPTConfig: block_size 1024, vocab_size 50257, n_layer 12, n_head 12, n_embd 768
local function GPTConfig(args)
    local config = { block_size = 1024, vocab_size = 50257, n_layer = 12, n_head = 12, n_embd = 768 }
    for k, v in pairs(args or {}) do
        config[k] = v
    end
    return config
end

local GPT = nn.Module:extend("GPT")
function GPT:init(config)
    self.config = config
    local h = {}
    -- h = nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
    for _ = 1, config.n_layer do
        h[#h + 1] = Block(config)
    end
    -- self.transformer = nn.ModuleDict(dict(wte = ..., wpe = ..., h = ..., ln_f = ...))
    self.transformer = nn.ModuleDict({
        { "wte",  nn.Embedding(config.vocab_size, config.n_embd) },
        { "wpe",  nn.Embedding(config.block_size, config.n_embd) },
        { "h",    nn.ModuleList(h) },
        { "ln_f", nn.LayerNorm(config.n_embd) },
    })
    -- self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
    self.lm_head = nn.Linear(config.n_embd, config.vocab_size, { bias = false })

    -- weight sharing scheme
    self.transformer.wte.weight = self.lm_head.weight

    -- init params
    -- self.apply(self._init_weights)
    self:apply(function(module) return self:_init_weights(module) end)
end

function GPT:_init_weights(module)
    if isinstance(module, nn.Linear) then
        local std = 0.02
        -- if hasattr(module, 'NANOGPT_SCALE_INIT'):
        -- (Python's hasattr is a nil test: a module's missing field reads nil)
        if module.NANOGPT_SCALE_INIT ~= nil then
            -- std *= (2 * self.config.n_layer) ** -0.5
            std = std * (2 * self.config.n_layer) ^ -0.5
        end
        -- torch.nn.init.normal_(module.weight, mean=0.0, std=std)
        nn.init.normal_(module.weight, { mean = 0.0, std = std })
        if module.bias ~= nil then
            nn.init.zeros_(module.bias)
        end
    elseif isinstance(module, nn.Embedding) then
        nn.init.normal_(module.weight, { mean = 0.0, std = 0.02 })
    end
end

function GPT:forward(idx, targets)
    -- idx is of shape (B, T)
    -- B, T = idx.size()
    local _, T = unpack(idx:size())
    assert(T <= self.config.block_size, string.format(
        "Cannot forward sequence of length %d, block size is only %d", T, self.config.block_size))
    -- pos = torch.arange(0, T, dtype=torch.long, device=idx.device) # shape (T): 1-based ids
    local pos = tide.arange(1, T + 1, { dtype = tide.long, device = idx.device })
    local pos_emb = self.transformer.wpe(pos) -- position embeddings of shape (T, n_embd)
    local tok_emb = self.transformer.wte(idx) -- token embeddings of shape (B, T, n_embd)
    local x = tok_emb + pos_emb
    -- for block in self.transformer.h:
    for _, block in ipairs(self.transformer.h) do
        x = block(x)
    end
    x = self.transformer.ln_f(x)
    local logits = self.lm_head(x) -- (B, T, vocab_size)
    local loss = nil
    if targets ~= nil then
        -- loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        loss = F.cross_entropy(logits:view(-1, logits:size(-1)), targets:view(-1))
    end
    return logits, loss
end

local master_process = false
function GPT:configure_optimizers(weight_decay, learning_rate, device_type)
    -- param_dict = {pn: p for pn, p in self.named_parameters()}
    -- param_dict = {pn: p for pn, p in param_dict.items() if p.requires_grad}
    local param_dict = {}
    for _, np in ipairs(self:named_parameters()) do
        if np[2].requires_grad then
            param_dict[#param_dict + 1] = np
        end
    end
    -- decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
    -- nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
    local decay_params, nodecay_params = {}, {}
    for _, np in ipairs(param_dict) do
        if np[2]:dim() >= 2 then
            decay_params[#decay_params + 1] = np[2]
        end
    end
    for _, np in ipairs(param_dict) do
        if np[2]:dim() < 2 then
            nodecay_params[#nodecay_params + 1] = np[2]
        end
    end
    local optim_groups = {
        { params = decay_params,   weight_decay = weight_decay },
        { params = nodecay_params, weight_decay = 0.0 },
    }
    -- num_decay_params = sum(p.numel() for p in decay_params)
    local num_decay_params, num_nodecay_params = 0, 0
    for _, p in ipairs(decay_params) do num_decay_params = num_decay_params + p:numel() end
    for _, p in ipairs(nodecay_params) do num_nodecay_params = num_nodecay_params + p:numel() end
    if master_process then
        print(string.format("num decayed parameter tensors: %d, with %d parameters", #decay_params,
            num_decay_params))
    end
    -- fused_available = 'fused' in inspect.signature(torch.optim.AdamW).parameters
    local fused_available = true
    local use_fused = fused_available and device_type == "cuda"
    -- optimizer = torch.optim.AdamW(optim_groups, lr=learning_rate, betas=(0.9, 0.95), eps=1e-8, fused=use_fused)
    local optimizer = tide.optim.AdamW(optim_groups, { lr = learning_rate, betas = { 0.9, 0.95 },
        eps = 1e-8, fused = use_fused })
    return optimizer, num_decay_params, num_nodecay_params
end

-- class DataLoaderLite: the shards are one tiny random token tensor (load_tokens of a list)
local DataLoaderLite = ported.class("DataLoaderLite")
function DataLoaderLite:__init__(B, T, process_rank, num_processes, split, shards)
    self.B = B
    self.T = T
    self.process_rank = process_rank
    self.num_processes = num_processes
    assert(split == "train" or split == "val")
    self.shards = shards
    assert(#shards > 0, "no shards found for split " .. split)
    self:reset()
end

function DataLoaderLite:reset()
    -- state, init at shard zero
    self.current_shard = 1
    self.tokens = self.shards[self.current_shard]
    self.current_position = self.B * self.T * self.process_rank
end

function DataLoaderLite:next_batch()
    local B, T = self.B, self.T
    -- buf = self.tokens[self.current_position : self.current_position+B*T+1]
    local buf = self.tokens[{ { self.current_position + 1, self.current_position + B * T + 1 } }]
    -- x = (buf[:-1]).view(B, T) # inputs
    local x = (buf[{ { 1, -2 } }]):view(B, T)
    -- y = (buf[1:]).view(B, T) # targets
    local y = (buf[{ { 2, -1 } }]):view(B, T)
    -- advance the position in the tensor
    self.current_position = self.current_position + B * T * self.num_processes
    -- if self.current_position + (B * T * self.num_processes + 1) > len(self.tokens):
    if self.current_position + (B * T * self.num_processes + 1) > #self.tokens then
        self.current_shard = self.current_shard % #self.shards + 1
        self.tokens = self.shards[self.current_shard]
        self.current_position = B * T * self.process_rank
    end
    return x, y
end

describe("build-nanogpt train_gpt2.py", function()
    it("GPT with tied weights, scaled init, decay groups, warmup+cosine lr, grad accumulation, bf16 autocast", function()
        tide.manual_seed(1337)
        local device, device_type = "cpu", "cpu"
        local ddp_rank, ddp_world_size = 0, 1
        local vocab = 32
        -- a repeating token stream the model can learn in a few steps
        local stream = {}
        for i = 1, 400 do stream[i] = (i * 7) % vocab + 1 end
        -- ptt = torch.tensor(npt, dtype=torch.long)
        local ptt = tide.tensor(stream, { dtype = tide.long })

        -- total_batch_size = 524288; B = 64; T = 1024 (shrunk)
        local total_batch_size = 64
        local B = 2
        local T = 16
        assert(total_batch_size % (B * T * ddp_world_size) == 0)
        -- grad_accum_steps = total_batch_size // (B * T * ddp_world_size)
        local grad_accum_steps = math.floor(total_batch_size / (B * T * ddp_world_size))
        local train_loader = DataLoaderLite(B, T, ddp_rank, ddp_world_size, "train", { ptt })
        -- torch.set_float32_matmul_precision('high')
        tide.set_float32_matmul_precision("high")

        -- model = GPT(GPTConfig(vocab_size=50304))
        local model = GPT(GPTConfig({ vocab_size = vocab, block_size = 16, n_layer = 2, n_head = 2,
            n_embd = 16 }))
        model:to(device)
        local raw_model = model
        assert.are.equal(model.transformer.wte.weight, model.lm_head.weight)
        -- NANOGPT_SCALE_INIT: c_proj weights have std 0.02 / sqrt(2 * n_layer)
        local s = model.transformer.h[1].mlp.c_proj.weight:std():item()
        assert.is_true(s < 0.02 * 0.75, "c_proj std " .. s)

        local max_lr = 6e-3
        local min_lr = max_lr * 0.1
        local warmup_steps = 2
        local max_steps = 8
        local function get_lr(it)
            -- 1) linear warmup for warmup_iters steps
            if it < warmup_steps then
                return max_lr * (it + 1) / warmup_steps
            end
            -- 2) if it > lr_decay_iters, return min learning rate
            if it > max_steps then
                return min_lr
            end
            -- 3) in between, use cosine decay down to min learning rate
            local decay_ratio = (it - warmup_steps) / (max_steps - warmup_steps)
            assert(0 <= decay_ratio and decay_ratio <= 1)
            local coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
            return min_lr + coeff * (max_lr - min_lr)
        end

        -- optimizer = raw_model.configure_optimizers(weight_decay=0.1, learning_rate=6e-4, device_type=device_type)
        local optimizer, ndecay, nnodecay = raw_model:configure_optimizers(0.1, 6e-4, device_type)
        assert.are.equal(#optimizer.param_groups, 2)
        assert.are.equal(optimizer.param_groups[1].weight_decay, 0.1)
        assert.are.equal(optimizer.param_groups[2].weight_decay, 0.0)
        -- wte/lm_head counted once
        assert.are.equal(ndecay, vocab * 16 + 16 * 16 + 2 * (16 * 48 + 16 * 16 + 16 * 64 + 64 * 16))
        assert.is_true(nnodecay > 0)

        local losses = {}
        -- for step in range(max_steps):
        for step = 0, max_steps - 1 do
            -- do one step of the optimization
            model:train()
            optimizer:zero_grad()
            local loss_accum = 0.0
            for _ = 0, grad_accum_steps - 1 do
                local x, y = train_loader:next_batch()
                x, y = x:to(device), y:to(device)
                -- with torch.autocast(device_type=device_type, dtype=torch.bfloat16):
                --     logits, loss = model(x, y)
                local logits, loss = tide.autocast({ device_type = device_type, dtype = tide.bfloat16 },
                    function() return model(x, y) end)
                assert.are.equal(logits.dtype, tide.bfloat16)
                -- we have to scale the loss to account for gradient accumulation
                loss = loss / grad_accum_steps
                -- loss_accum += loss.detach()
                loss_accum = loss_accum + loss:detach()
                loss:backward()
            end
            -- norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            local norm = nn.utils.clip_grad_norm_(model:parameters(), 1.0)
            -- determine and set the learning rate for this iteration
            local lr = get_lr(step)
            -- for param_group in optimizer.param_groups: param_group['lr'] = lr
            for _, param_group in ipairs(optimizer.param_groups) do
                param_group["lr"] = lr
            end
            optimizer:step()
            -- print(f"step {step:5d} | loss: {loss_accum.item():.6f} | lr {lr:.4e} | norm: {norm:.4f} | ...")
            local line = string.format("step %5d | loss: %.6f | lr %.4e | norm: %.4f", step,
                loss_accum:item(), lr, norm)
            assert.is_truthy(line:find("step"))
            assert_finite(loss_accum:item(), "loss")
            losses[#losses + 1] = loss_accum:item()
        end
        assert.is_true(losses[#losses] < losses[1] - 0.3, losses[1] .. " -> " .. losses[#losses])
    end)
end)

describe("torch.autocast's keyword form (build-nanogpt)", function()
    it("tide.autocast({device_type =, dtype =}, fn) runs the region; bad forms raise naming the fix", function()
        local a = tide.randn(2, 3)
        local b = tide.randn(3, 2)
        -- with torch.autocast(device_type="cpu", dtype=torch.bfloat16): y = a @ b
        local y = tide.autocast({ device_type = "cpu", dtype = tide.bfloat16 }, function()
            assert.is_true(tide.is_autocast_enabled("cpu"))
            return a:matmul(b)
        end)
        assert.are.equal(y.dtype, tide.bfloat16)
        assert.is_false(tide.is_autocast_enabled("cpu"))
        -- enabled=False by name too
        local z = tide.autocast({ device_type = "cpu", dtype = tide.bfloat16, enabled = false },
            function() return a:matmul(b) end)
        assert.are.equal(z.dtype, tide.float32)
        assert.has_error(function() tide.autocast({ dtype = tide.bfloat16 }, function() end) end,
            "tide: autocast: the options table has no device_type; write tide.autocast({device_type = " ..
            "\"cpu\", dtype = tide.bfloat16}, fn) or tide.autocast(\"cpu\", {dtype = tide.bfloat16}, fn)")
        assert.has_error(function()
            tide.autocast({ device_type = "cpu" }, { dtype = tide.bfloat16 }, function() end)
        end, "tide: autocast: the options came twice (a table with device_type, then another " ..
            "table); put them all in the first: tide.autocast({device_type = \"cpu\", dtype = " ..
            "tide.bfloat16}, fn)")
        assert.has_error(function()
            tide.autocast({ device_type = "cuda:0" }, function() end)
        end, "tide: autocast: device_type must be \"cuda\" or \"cpu\", got \"cuda:0\"; autocast " ..
            "covers every device of a type: pass \"cuda\"")
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. The Annotated Transformer (the_annotated_transformer.py): the copy task. Token ids are
-- 1-based: the script's <blank> 0 is 1, its start symbol 1 is 2, its tokens 1..V-1 are 2..V.
---------------------------------------------------------------------------------------------
local EncoderDecoder = nn.Module:extend("EncoderDecoder")
function EncoderDecoder:init(encoder, decoder, src_embed, tgt_embed, generator)
    self.encoder = encoder
    self.decoder = decoder
    self.src_embed = src_embed
    self.tgt_embed = tgt_embed
    self.generator = generator
end

function EncoderDecoder:forward(src, tgt, src_mask, tgt_mask)
    -- "Take in and process masked src and target sequences."
    return self:decode(self:encode(src, src_mask), src_mask, tgt, tgt_mask)
end

function EncoderDecoder:encode(src, src_mask)
    return self.encoder(self.src_embed(src), src_mask)
end

function EncoderDecoder:decode(memory, src_mask, tgt, tgt_mask)
    return self.decoder(self.tgt_embed(tgt), memory, src_mask, tgt_mask)
end

local Generator = nn.Module:extend("Generator")
function Generator:init(d_model, vocab)
    self.proj = nn.Linear(d_model, vocab)
end

function Generator:forward(x)
    -- return log_softmax(self.proj(x), dim=-1)
    return F.log_softmax(self.proj(x), { dim = -1 })
end

local function clones(module, N)
    -- "Produce N identical layers."
    -- return nn.ModuleList([copy.deepcopy(module) for _ in range(N)])
    local layers = {}
    for _ = 1, N do
        layers[#layers + 1] = tide.deepcopy(module)
    end
    return nn.ModuleList(layers)
end

local ATLayerNorm = nn.Module:extend("LayerNorm")
function ATLayerNorm:init(features, eps)
    -- def __init__(self, features, eps=1e-6):
    if eps == nil then eps = 1e-6 end
    self.a_2 = nn.Parameter(tide.ones(features))
    self.b_2 = nn.Parameter(tide.zeros(features))
    self.eps = eps
end

function ATLayerNorm:forward(x)
    -- mean = x.mean(-1, keepdim=True)
    local mean = x:mean(-1, { keepdim = true })
    -- std = x.std(-1, keepdim=True)
    local std = x:std(-1, { keepdim = true })
    return self.a_2 * (x - mean) / (std + self.eps) + self.b_2
end

local Encoder = nn.Module:extend("Encoder")
function Encoder:init(layer, N)
    self.layers = clones(layer, N)
    self.norm = ATLayerNorm(layer.size)
end

function Encoder:forward(x, mask)
    -- "Pass the input (and mask) through each layer in turn."
    for _, layer in ipairs(self.layers) do
        x = layer(x, mask)
    end
    return self.norm(x)
end

local SublayerConnection = nn.Module:extend("SublayerConnection")
function SublayerConnection:init(size, dropout)
    self.norm = ATLayerNorm(size)
    self.dropout = nn.Dropout(dropout)
end

function SublayerConnection:forward(x, sublayer)
    -- "Apply residual connection to any sublayer with the same size."
    return x + self.dropout(sublayer(self.norm(x)))
end

local EncoderLayer = nn.Module:extend("EncoderLayer")
function EncoderLayer:init(size, self_attn, feed_forward, dropout)
    self.self_attn = self_attn
    self.feed_forward = feed_forward
    self.sublayer = clones(SublayerConnection(size, dropout), 2)
    self.size = size
end

function EncoderLayer:forward(x, mask)
    -- x = self.sublayer[0](x, lambda x: self.self_attn(x, x, x, mask))
    x = self.sublayer[1](x, function(x_) return self.self_attn(x_, x_, x_, mask) end)
    return self.sublayer[2](x, self.feed_forward)
end

local Decoder = nn.Module:extend("Decoder")
function Decoder:init(layer, N)
    self.layers = clones(layer, N)
    self.norm = ATLayerNorm(layer.size)
end

function Decoder:forward(x, memory, src_mask, tgt_mask)
    for _, layer in ipairs(self.layers) do
        x = layer(x, memory, src_mask, tgt_mask)
    end
    return self.norm(x)
end

local DecoderLayer = nn.Module:extend("DecoderLayer")
function DecoderLayer:init(size, self_attn, src_attn, feed_forward, dropout)
    self.size = size
    self.self_attn = self_attn
    self.src_attn = src_attn
    self.feed_forward = feed_forward
    self.sublayer = clones(SublayerConnection(size, dropout), 3)
end

function DecoderLayer:forward(x, memory, src_mask, tgt_mask)
    -- "Follow Figure 1 (right) for connections."
    local m = memory
    x = self.sublayer[1](x, function(x_) return self.self_attn(x_, x_, x_, tgt_mask) end)
    x = self.sublayer[2](x, function(x_) return self.src_attn(x_, m, m, src_mask) end)
    return self.sublayer[3](x, self.feed_forward)
end

local function subsequent_mask(size)
    -- "Mask out subsequent positions."
    local attn_shape = { 1, size, size }
    -- subsequent_mask = torch.triu(torch.ones(attn_shape), diagonal=1).type(torch.uint8)
    local mask = tide.triu(tide.ones(attn_shape), { diagonal = 1 }):type(tide.uint8)
    -- return subsequent_mask == 0 (Lua's == on a tensor is identity: eq)
    return mask:eq(0)
end

local function attention(query, key, value, mask, dropout)
    -- "Compute 'Scaled Dot Product Attention'"
    local d_k = query:size(-1)
    -- scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    local scores = tide.matmul(query, key:transpose(-2, -1)) / math.sqrt(d_k)
    if mask ~= nil then
        -- scores = scores.masked_fill(mask == 0, -1e9)
        scores = scores:masked_fill(mask:eq(0), -1e9)
    end
    -- p_attn = scores.softmax(dim=-1)
    local p_attn = scores:softmax({ dim = -1 })
    if dropout ~= nil then
        p_attn = dropout(p_attn)
    end
    return tide.matmul(p_attn, value), p_attn
end

local MultiHeadedAttention = nn.Module:extend("MultiHeadedAttention")
function MultiHeadedAttention:init(h, d_model, dropout)
    -- "Take in model size and number of heads."
    if dropout == nil then dropout = 0.1 end
    assert(d_model % h == 0)
    -- We assume d_v always equals d_k
    self.d_k = math.floor(d_model / h)
    self.h = h
    self.linears = clones(nn.Linear(d_model, d_model), 4)
    self.attn = nil
    -- self.dropout = nn.Dropout(p=dropout)
    self.dropout = nn.Dropout({ p = dropout })
end

function MultiHeadedAttention:forward(query, key, value, mask)
    -- "Implements Figure 2"
    if mask ~= nil then
        -- Same mask applied to all h heads.
        mask = mask:unsqueeze(2)
    end
    local nbatches = query:size(1)
    -- 1) Do all the linear projections in batch from d_model => h x d_k
    -- query, key, value = [lin(x).view(nbatches, -1, self.h, self.d_k).transpose(1, 2)
    --                      for lin, x in zip(self.linears, (query, key, value))]
    local qkv = {}
    for i, x in ipairs({ query, key, value }) do
        local lin = self.linears[i]
        qkv[i] = lin(x):view(nbatches, -1, self.h, self.d_k):transpose(2, 3)
    end
    query, key, value = unpack(qkv)
    -- 2) Apply attention on all the projected vectors in batch.
    -- x, self.attn = attention(query, key, value, mask=mask, dropout=self.dropout)
    local x
    x, self.attn = attention(query, key, value, mask, self.dropout)
    -- 3) "Concat" using a view and apply a final linear.
    x = x:transpose(2, 3):contiguous():view(nbatches, -1, self.h * self.d_k)
    -- return self.linears[-1](x)
    return self.linears[-1](x)
end

local PositionwiseFeedForward = nn.Module:extend("PositionwiseFeedForward")
function PositionwiseFeedForward:init(d_model, d_ff, dropout)
    if dropout == nil then dropout = 0.1 end
    self.w_1 = nn.Linear(d_model, d_ff)
    self.w_2 = nn.Linear(d_ff, d_model)
    self.dropout = nn.Dropout(dropout)
end

function PositionwiseFeedForward:forward(x)
    -- return self.w_2(self.dropout(self.w_1(x).relu()))
    return self.w_2(self.dropout(self.w_1(x):relu()))
end

local Embeddings = nn.Module:extend("Embeddings")
function Embeddings:init(d_model, vocab)
    self.lut = nn.Embedding(vocab, d_model)
    self.d_model = d_model
end

function Embeddings:forward(x)
    return self.lut(x) * math.sqrt(self.d_model)
end

local PositionalEncoding = nn.Module:extend("PositionalEncoding")
function PositionalEncoding:init(d_model, dropout, max_len)
    -- def __init__(self, d_model, dropout, max_len=5000):
    if max_len == nil then max_len = 5000 end
    self.dropout = nn.Dropout({ p = dropout })
    -- Compute the positional encodings once in log space.
    local pe = tide.zeros(max_len, d_model)
    -- position = torch.arange(0, max_len).unsqueeze(1)
    local position = tide.arange(0, max_len):unsqueeze(2)
    -- div_term = torch.exp(torch.arange(0, d_model, 2) * -(math.log(10000.0) / d_model))
    local div_term = tide.exp(tide.arange(0, d_model, 2) * -(math.log(10000.0) / d_model))
    -- pe[:, 0::2] = torch.sin(position * div_term)
    pe[{ {}, { 1, -1, 2 } }] = tide.sin(position * div_term)
    -- pe[:, 1::2] = torch.cos(position * div_term)
    pe[{ {}, { 2, -1, 2 } }] = tide.cos(position * div_term)
    pe = pe:unsqueeze(1)
    self:register_buffer("pe", pe)
end

function PositionalEncoding:forward(x)
    -- x = x + self.pe[:, : x.size(1)].requires_grad_(False)
    x = x + self.pe[{ {}, { 1, x:size(2) } }]:requires_grad_(false)
    return self.dropout(x)
end

local function make_model(src_vocab, tgt_vocab, N, d_model, d_ff, h, dropout)
    -- def make_model(src_vocab, tgt_vocab, N=6, d_model=512, d_ff=2048, h=8, dropout=0.1):
    N, d_model, d_ff, h = N or 6, d_model or 512, d_ff or 2048, h or 8
    if dropout == nil then dropout = 0.1 end
    -- "Helper: Construct a model from hyperparameters."
    local c = tide.deepcopy
    local attn = MultiHeadedAttention(h, d_model)
    local ff = PositionwiseFeedForward(d_model, d_ff, dropout)
    local position = PositionalEncoding(d_model, dropout)
    local model = EncoderDecoder(
        Encoder(EncoderLayer(d_model, c(attn), c(ff), dropout), N),
        Decoder(DecoderLayer(d_model, c(attn), c(attn), c(ff), dropout), N),
        nn.Sequential(Embeddings(d_model, src_vocab), c(position)),
        nn.Sequential(Embeddings(d_model, tgt_vocab), c(position)),
        Generator(d_model, tgt_vocab))
    -- Initialize parameters with Glorot / fan_avg.
    for _, p in ipairs(model:parameters()) do
        if p:dim() > 1 then
            nn.init.xavier_uniform_(p)
        end
    end
    return model
end

-- class Batch: "Object for holding a batch of data with mask during training."
local Batch = ported.class("Batch")
function Batch:__init__(src, tgt, pad)
    if pad == nil then pad = 3 end -- 2 = <blank>, 1-based
    self.src = src
    -- self.src_mask = (src != pad).unsqueeze(-2)
    self.src_mask = src:ne(pad):unsqueeze(-2)
    if tgt ~= nil then
        -- self.tgt = tgt[:, :-1]
        self.tgt = tgt[{ {}, { 1, -2 } }]
        -- self.tgt_y = tgt[:, 1:]
        self.tgt_y = tgt[{ {}, { 2, -1 } }]
        self.tgt_mask = Batch.make_std_mask(self.tgt, pad)
        -- self.ntokens = (self.tgt_y != pad).data.sum()
        self.ntokens = self.tgt_y:ne(pad).data:sum()
    end
end

-- @staticmethod
function Batch.make_std_mask(tgt, pad)
    -- "Create a mask to hide padding and future words."
    local tgt_mask = tgt:ne(pad):unsqueeze(-2)
    -- tgt_mask = tgt_mask & subsequent_mask(tgt.size(-1)).type_as(tgt_mask.data)
    tgt_mask = tgt_mask:bitwise_and(subsequent_mask(tgt:size(-1)):type_as(tgt_mask.data))
    return tgt_mask
end

-- class TrainState: "Track number of steps, examples, and tokens processed"
local function TrainState()
    return { step = 0, accum_step = 0, samples = 0, tokens = 0 }
end

-- DummyOptimizer(torch.optim.Optimizer) and DummyScheduler
local DummyOptimizer = ported.class("DummyOptimizer")
function DummyOptimizer:__init__() self.param_groups = { { lr = 0 } } end
function DummyOptimizer:step() end
function DummyOptimizer:zero_grad() end
local DummyScheduler = ported.class("DummyScheduler")
function DummyScheduler:step() end

local function run_epoch(data_iter, model, loss_compute, optimizer, scheduler, mode, accum_iter,
                         train_state)
    -- mode="train", accum_iter=1, train_state=TrainState()
    mode, accum_iter, train_state = mode or "train", accum_iter or 1, train_state or TrainState()
    -- "Train a single epoch"
    local total_tokens = 0
    local total_loss = 0
    local tokens = 0
    local n_accum = 0
    -- for i, batch in enumerate(data_iter):
    local i = -1
    for batch in data_iter do
        i = i + 1
        -- out = model.forward(batch.src, batch.tgt, batch.src_mask, batch.tgt_mask)
        local out = model:forward(batch.src, batch.tgt, batch.src_mask, batch.tgt_mask)
        local loss, loss_node = loss_compute(out, batch.tgt_y, batch.ntokens)
        if mode == "train" or mode == "train+log" then
            loss_node:backward()
            train_state.step = train_state.step + 1
            -- train_state.samples += batch.src.shape[0]
            train_state.samples = train_state.samples + batch.src.shape[1]
            train_state.tokens = train_state.tokens + batch.ntokens
            if i % accum_iter == 0 then
                optimizer:step()
                -- optimizer.zero_grad(set_to_none=True)
                optimizer:zero_grad({ set_to_none = true })
                n_accum = n_accum + 1
                train_state.accum_step = train_state.accum_step + 1
            end
            scheduler:step()
        end
        total_loss = total_loss + loss
        total_tokens = total_tokens + batch.ntokens
        tokens = tokens + batch.ntokens
        if i % 40 == 1 and (mode == "train" or mode == "train+log") then
            -- lr = optimizer.param_groups[0]["lr"]
            local lr = optimizer.param_groups[1]["lr"]
            assert_finite(lr, "lr")
        end
    end
    return total_loss / total_tokens, train_state
end

local function rate(step, model_size, factor, warmup)
    -- we have to default the step to 1 for LambdaLR function to avoid zero raising to negative power.
    if step == 0 then
        step = 1
    end
    -- return factor * (model_size ** (-0.5) * min(step ** (-0.5), step * warmup ** (-1.5)))
    return factor * (model_size ^ (-0.5) * math.min(step ^ (-0.5), step * warmup ^ (-1.5)))
end

local LabelSmoothing = nn.Module:extend("LabelSmoothing")
function LabelSmoothing:init(size, padding_idx, smoothing)
    -- "Implement label smoothing."
    if smoothing == nil then smoothing = 0.0 end
    -- self.criterion = nn.KLDivLoss(reduction="sum")
    self.criterion = nn.KLDivLoss({ reduction = "sum" })
    self.padding_idx = padding_idx
    self.confidence = 1.0 - smoothing
    self.smoothing = smoothing
    self.size = size
    self.true_dist = nil
end

function LabelSmoothing:forward(x, target)
    -- assert x.size(1) == self.size
    assert(x:size(2) == self.size)
    local true_dist = x.data:clone()
    true_dist:fill_(self.smoothing / (self.size - 2))
    -- true_dist.scatter_(1, target.data.unsqueeze(1), self.confidence)
    true_dist:scatter_(2, target.data:unsqueeze(2), self.confidence)
    -- true_dist[:, self.padding_idx] = 0
    true_dist[{ {}, self.padding_idx }] = 0
    -- mask = torch.nonzero(target.data == self.padding_idx)
    local mask = tide.nonzero(target.data:eq(self.padding_idx))
    if mask:dim() > 0 then
        -- true_dist.index_fill_(0, mask.squeeze(), 0.0)
        true_dist:index_fill_(1, mask:squeeze(), 0.0)
    end
    self.true_dist = true_dist
    return self.criterion(x, true_dist:clone():detach())
end

local function data_gen(V, batch_size, nbatches)
    -- "Generate random data for a src-tgt copy task." (a generator: a Lua iterator)
    local i = 0
    return function()
        i = i + 1
        if i > nbatches then return nil end
        -- data = torch.randint(1, V, size=(batch_size, 10))
        local data = tide.randint(2, V + 1, { size = { batch_size, 10 } })
        -- data[:, 0] = 1
        data[{ {}, 1 }] = 2
        local src = data:requires_grad_(false):clone():detach()
        local tgt = data:requires_grad_(false):clone():detach()
        -- yield Batch(src, tgt, 0)
        return Batch(src, tgt, 1)
    end
end

-- class SimpleLossCompute: "A simple loss compute and train function."
local SimpleLossCompute = ported.class("SimpleLossCompute")
function SimpleLossCompute:__init__(generator, criterion)
    self.generator = generator
    self.criterion = criterion
end

function SimpleLossCompute:__call__(x, y, norm)
    x = self.generator(x)
    -- sloss = self.criterion(x.contiguous().view(-1, x.size(-1)), y.contiguous().view(-1)) / norm
    local sloss = self.criterion(x:contiguous():view(-1, x:size(-1)), y:contiguous():view(-1)) / norm
    return sloss.data * norm, sloss
end

local function greedy_decode(model, src, src_mask, max_len, start_symbol)
    local memory = model:encode(src, src_mask)
    -- ys = torch.zeros(1, 1).fill_(start_symbol).type_as(src.data)
    local ys = tide.zeros(1, 1):fill_(start_symbol):type_as(src.data)
    for _ = 0, max_len - 2 do
        -- out = model.decode(memory, src_mask, ys, subsequent_mask(ys.size(1)).type_as(src.data))
        local out = model:decode(memory, src_mask, ys, subsequent_mask(ys:size(2)):type_as(src.data))
        -- prob = model.generator(out[:, -1])
        local prob = model.generator(out[{ {}, -1 }])
        -- _, next_word = torch.max(prob, dim=1)
        local _, next_word = tide.max(prob, { dim = 2 })
        -- next_word = next_word.data[0]
        next_word = next_word.data[1]
        -- ys = torch.cat([ys, torch.zeros(1, 1).type_as(src.data).fill_(next_word)], dim=1)
        ys = tide.cat({ ys, tide.zeros(1, 1):type_as(src.data):fill_(next_word) }, { dim = 2 })
    end
    return ys
end

describe("The Annotated Transformer", function()
    it("make_model, Batch masks, LabelSmoothing + KLDivLoss, rate under LambdaLR: the copy task", function()
        tide.manual_seed(0)
        -- V = 11
        local V = 11
        -- criterion = LabelSmoothing(size=V, padding_idx=0, smoothing=0.0)
        local criterion = LabelSmoothing(V, 1, 0.0)
        -- model = make_model(V, V, N=2)  (shrunk: N=1, d_model=32, d_ff=64, h=4)
        local model = make_model(V, V, 1, 32, 64, 4)
        -- optimizer = torch.optim.Adam(model.parameters(), lr=0.5, betas=(0.9, 0.98), eps=1e-9)
        local optimizer = tide.optim.Adam(model:parameters(), { lr = 0.5, betas = { 0.9, 0.98 }, eps = 1e-9 })
        -- lr_scheduler = LambdaLR(optimizer=optimizer, lr_lambda=lambda step: rate(
        --     step, model_size=model.src_embed[0].d_model, factor=1.0, warmup=400))
        local lr_scheduler = tide.optim.lr_scheduler.LambdaLR({ optimizer = optimizer,
            lr_lambda = function(step) return rate(step, model.src_embed[1].d_model, 1.0, 20) end })
        local batch_size = 32
        local losses = {}
        for _ = 1, 12 do
            model:train()
            run_epoch(data_gen(V, batch_size, 10), model, SimpleLossCompute(model.generator, criterion),
                optimizer, lr_scheduler, "train")
            model:eval()
            local l = run_epoch(data_gen(V, batch_size, 2), model,
                SimpleLossCompute(model.generator, criterion), DummyOptimizer(), DummyScheduler(),
                "eval")
            assert_finite(l:item(), "eval loss")
            losses[#losses + 1] = l:item()
        end
        assert.is_true(losses[#losses] < 0.6 * losses[1], table.concat(losses, ", "))
        model:eval()
        -- src = torch.LongTensor([[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]])
        local src = tide.LongTensor({ { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 } })
        local max_len = src.shape[2]
        local src_mask = tide.ones(1, 1, max_len)
        local ys = greedy_decode(model, src, src_mask, max_len, 1)
        assert.are.same(ys:size(), tide.Size({ 1, 10 }))
        -- (this tiny model, trained under 2 s, copies only part of the sequence: check its start)
        assert.are.equal(ys[1][1]:item(), 1)
    end)
end)

describe("LambdaLR(optimizer=, lr_lambda=) (The Annotated Transformer)", function()
    it("takes every argument by name in one table; more arguments after it raise", function()
        local p = nn.Parameter(tide.ones(2))
        local opt = tide.optim.Adam({ p }, { lr = 0.5 })
        local s = tide.optim.lr_scheduler.LambdaLR({ optimizer = opt, lr_lambda = function(step) return 0.1 * (step + 1) end })
        assert.is_true(math.abs(opt.param_groups[1].lr - 0.05) < 1e-12)
        s:step()
        assert.is_true(math.abs(opt.param_groups[1].lr - 0.1) < 1e-12)
        assert.has_error(function()
            tide.optim.lr_scheduler.LambdaLR({ optimizer = opt }, function() return 1 end)
        end, "tide: LambdaLR: the optimizer came by name in a table and 1 more argument(s) " ..
            "followed it; put them all in that table: LambdaLR({optimizer = opt, ...})")
        assert.is_true(math.abs(opt.param_groups[1].lr - 0.1) < 1e-12)
    end)
end)

describe("The Annotated Transformer: values against PyTorch 1.13", function()
    it("LabelSmoothing's true_dist and KLDivLoss sum, rate under LambdaLR, PositionalEncoding, std", function()
        -- crit = LabelSmoothing(5, 0, 0.4)  (padding index 0 is 1)
        local crit = LabelSmoothing(5, 1, 0.4)
        -- predict = torch.FloatTensor([[0, 0.2, 0.7, 0.1, 0], ...]) (zeros made 0.05: PyTorch's
        -- KLDivLoss gives nan for log(0) under a zero target, as tide's)
        local rows = {}
        for i = 1, 5 do rows[i] = { 0.05, 0.2, 0.6, 0.1, 0.05 } end
        local predict = tide.FloatTensor(rows)
        -- crit(x=predict.log(), target=torch.LongTensor([2, 1, 0, 3, 3]))
        local l = crit(predict:log(), tide.LongTensor({ 3, 2, 1, 4, 4 }))
        assert.is_true(ported.close(l:item(), 2.64528632, 1e-5), tostring(l:item()))
        local a, b = 0.13333334028720856, 0.6000000238418579
        ported.assert_close_list({ 0, a, b, a, a, 0, b, a, a, a, 0, 0, 0, 0, 0, 0, a, a, b, a, 0, a, a, b, a },
            crit.true_dist:flatten():tolist(), 1e-6, "true_dist")
        -- the zero-probability form gives nan, as PyTorch's
        local zeros = {}
        for i = 1, 5 do zeros[i] = { 0, 0.2, 0.7, 0.1, 0 } end
        local ln = crit(tide.FloatTensor(zeros):log(), tide.LongTensor({ 3, 2, 1, 4, 4 })):item()
        assert.is_true(ln ~= ln)

        -- LambdaLR(optimizer=opt, lr_lambda=lambda step: rate(step, model_size=512, factor=1.0, warmup=3))
        local p = nn.Parameter(tide.ones(2))
        local opt = tide.optim.Adam({ p }, { lr = 1.0, betas = { 0.9, 0.98 }, eps = 1e-9 })
        local s = tide.optim.lr_scheduler.LambdaLR({ optimizer = opt,
            lr_lambda = function(step) return rate(step, 512, 1.0, 3) end })
        local lrs = {}
        for _ = 1, 6 do
            lrs[#lrs + 1] = opt.param_groups[1]["lr"]
            p.grad = tide.ones(2)
            opt:step()
            s:step()
        end
        ported.assert_close_list({ 0.008505172718, 0.008505172718, 0.01701034544, 0.02551551815,
            0.02209708691, 0.01976423538 }, lrs, 1e-9, "lr")

        -- PositionalEncoding(6, 0, max_len=4).pe
        local pe = PositionalEncoding(6, 0, 4).pe
        ported.assert_close_list({ 0, 1, 0, 1, 0, 1, 0.841471, 0.540302, 0.046399, 0.998923, 0.002154,
            0.999998, 0.909297, -0.416147, 0.092698, 0.995694, 0.004309, 0.999991, 0.141120, -0.989992,
            0.138798, 0.990321, 0.006463, 0.999979 }, pe:flatten():tolist(), 1e-5, "pe")

        -- x.std(-1, keepdim=True): unbiased, as PyTorch's
        assert.is_true(ported.close(tide.tensor({ { 1, 2, 4, 7 } }, { dtype = tide.float32 }):std(-1, { keepdim = true }):item(),
            2.6457512378692627, 1e-6))
    end)
end)
