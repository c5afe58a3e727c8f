-- ported_scripts8_spec.lua — real PyTorch scripts ported line for line: Karpathy's minGPT
-- (mingpt/model.py: NewGELU, CausalSelfAttention with its tril buffer, Block's ModuleDict and
-- mlpf lambda, GPT's _init_weights, configure_optimizers' decay sets and generate; its
-- trainer.py loop and the demo's SortDataset), the tutorials "NLP From Scratch: Classifying
-- Names / Generating Names with a Character-Level RNN" (hand-written RNNs, one-hot letters,
-- manual SGD through p.data), and the NLP tutorials "Word Embeddings" (the N-gram language
-- model and a CBOW) and "Sequence Models and LSTMs" (the step-by-step LSTM and the LSTMTagger).
-- Tiny data, a few training steps, values against PyTorch 1.13 on fixed weights. The Python
-- line stands above each Lua line that differs from it; a line tide cannot write as Python does
-- is marked `-- GAP:`. Dims, indices, tokens and class targets are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite, close, assert_close_list = ported.assert_finite, ported.close, ported.assert_close_list

-- Python's isinstance(m, cls), cls a class or a tuple of classes (a Lua list)
local isinstance = tide.isinstance

-- Python's s.endswith(suffix)
local function endswith(s, suffix)
    return suffix == "" or s:sub(-#suffix) == suffix
end

-- Python's l.index(v), 1-based
local function index(l, v)
    for i, x in ipairs(l) do
        if x == v then
            return i
        end
    end
    error("not in list: " .. tostring(v))
end

-- Python's s.split(): the words of s
local function split(s)
    local out = {}
    for w in s:gmatch("%S+") do
        out[#out + 1] = w
    end
    return out
end

-- every parameter set to 0.1 * sin(0.37 k + 0.1 n), k = 0..n-1 in row-major order, n its size:
-- the same formula in the PyTorch reference script gives the same model there
local function fill(model)
    tide.no_grad(function()
        for _, p in ipairs(model:parameters()) do
            local n = p:numel()
            p:copy_(((tide.arange(0, n, { dtype = tide.float32 }) * 0.37 + 0.1 * n):sin() * 0.1)
                :view(p.shape))
        end
    end)
end

---------------------------------------------------------------------------------------------
-- 1. minGPT: mingpt/model.py, mingpt/trainer.py and the demo's SortDataset
---------------------------------------------------------------------------------------------
-- from mingpt.utils import CfgNode as CN: a lightweight configuration class
local function CN(kwargs)
    local C = {}
    for k, v in pairs(kwargs or {}) do
        C[k] = v
    end
    -- def merge_from_dict(self, d): self.__dict__.update(d)
    function C.merge_from_dict(self, d)
        for k, v in pairs(d) do
            self[k] = v
        end
    end
    return C
end

-- class NewGELU(nn.Module):
local NewGELU = nn.Module:extend("NewGELU")
function NewGELU:forward(x)
    -- return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))
    return 0.5 * x * (1.0 + tide.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * tide.pow(x, 3.0))))
end

local CausalSelfAttention = nn.Module:extend("CausalSelfAttention")
function CausalSelfAttention:init(config)
    assert(config.n_embd % config.n_head == 0)
    -- key, query, value projections for all heads, but in a batch
    self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
    -- output projection
    self.c_proj = nn.Linear(config.n_embd, config.n_embd)
    -- regularization
    self.attn_dropout = nn.Dropout(config.attn_pdrop)
    self.resid_dropout = nn.Dropout(config.resid_pdrop)
    -- causal mask to ensure that attention is only applied to the left in the input sequence
    -- self.register_buffer("bias", torch.tril(torch.ones(config.block_size, config.block_size))
    --                              .view(1, 1, config.block_size, config.block_size))
    self:register_buffer("bias", tide.tril(tide.ones(config.block_size, config.block_size))
        :view(1, 1, config.block_size, config.block_size))
    self.n_head = config.n_head
    self.n_embd = config.n_embd
end

function CausalSelfAttention:forward(x)
    -- B, T, C = x.size() # batch size, sequence length, embedding dimensionality (n_embd)
    local B, T, C = unpack(x:size())

    -- q, k ,v  = self.c_attn(x).split(self.n_embd, dim=2)
    -- (split returns a Lua list: unpack is Python's tuple unpacking)
    local q, k, v = unpack(self.c_attn(x):split(self.n_embd, { dim = 3 }))
    -- k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) # (B, nh, T, hs)
    k = k:view(B, T, self.n_head, math.floor(C / self.n_head)):transpose(2, 3)
    q = q:view(B, T, self.n_head, math.floor(C / self.n_head)):transpose(2, 3)
    v = v:view(B, T, self.n_head, math.floor(C / self.n_head)):transpose(2, 3)

    -- att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    local att = q:matmul(k:transpose(-2, -1)) * (1.0 / math.sqrt(k:size(-1)))
    -- att = att.masked_fill(self.bias[:,:,:T,:T] == 0, float('-inf'))
    -- GAP: Lua's == on a tensor and a number is false without calling __eq; :eq(0)
    att = att:masked_fill(self.bias[{ {}, {}, { 1, T }, { 1, T } }]:eq(0), -math.huge)
    -- att = F.softmax(att, dim=-1)
    att = F.softmax(att, { dim = -1 })
    att = self.attn_dropout(att)
    -- y = att @ v # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)
    local y = att:matmul(v)
    -- y = y.transpose(1, 2).contiguous().view(B, T, C) # re-assemble all head outputs side by side
    y = y:transpose(2, 3):contiguous():view(B, T, C)

    -- output projection
    y = self.resid_dropout(self.c_proj(y))
    return y
end

local Block = nn.Module:extend("Block")
function Block:init(config)
    self.ln_1 = nn.LayerNorm(config.n_embd)
    self.attn = CausalSelfAttention(config)
    self.ln_2 = nn.LayerNorm(config.n_embd)
    -- self.mlp = nn.ModuleDict(dict(c_fc = ..., c_proj = ..., act = NewGELU(), dropout = ...))
    -- (a {name = module} table: ModuleDict sorts the names, where Python keeps dict order)
    self.mlp = nn.ModuleDict({
        c_fc    = nn.Linear(config.n_embd, 4 * config.n_embd),
        c_proj  = nn.Linear(4 * config.n_embd, config.n_embd),
        act     = NewGELU(),
        dropout = nn.Dropout(config.resid_pdrop),
    })
    local m = self.mlp
    -- self.mlpf = lambda x: m.dropout(m.c_proj(m.act(m.c_fc(x)))) # MLP forward
    self.mlpf = function(x) return m.dropout(m.c_proj(m.act(m.c_fc(x)))) end
end

function Block:forward(x)
    x = x + self.attn(self.ln_1(x))
    x = x + self.mlpf(self.ln_2(x))
    return x
end

local GPT = nn.Module:extend("GPT")

-- @staticmethod def get_default_config():
function GPT.get_default_config()
    local C = CN()
    -- either model_type or (n_layer, n_head, n_embd) must be given in the config
    C.model_type = "gpt"
    C.n_layer = nil
    C.n_head = nil
    C.n_embd = nil
    -- these options must be filled in externally
    C.vocab_size = nil
    C.block_size = nil
    -- dropout hyperparameters
    C.embd_pdrop = 0.1
    C.resid_pdrop = 0.1
    C.attn_pdrop = 0.1
    return C
end

function GPT:init(config)
    assert(config.vocab_size ~= nil)
    assert(config.block_size ~= nil)
    self.block_size = config.block_size

    local type_given = config.model_type ~= nil
    local params_given = config.n_layer ~= nil and config.n_head ~= nil and config.n_embd ~= nil
    -- assert type_given ^ params_given # exactly one of these (XOR)
    assert(type_given ~= params_given)
    if type_given then
        -- translate from model_type to detailed configuration
        config:merge_from_dict(({
            -- names follow the huggingface naming conventions
            ["openai-gpt"]  = { n_layer = 12, n_head = 12, n_embd = 768 }, -- 117M params
            ["gpt2"]        = { n_layer = 12, n_head = 12, n_embd = 768 }, -- 124M params
            ["gpt2-medium"] = { n_layer = 24, n_head = 16, n_embd = 1024 }, -- 350M params
            ["gpt2-large"]  = { n_layer = 36, n_head = 20, n_embd = 1280 }, -- 774M params
            ["gpt2-xl"]     = { n_layer = 48, n_head = 25, n_embd = 1600 }, -- 1558M params
            -- Gophers
            ["gopher-44m"]  = { n_layer = 8, n_head = 16, n_embd = 512 },
            -- I made these tiny models up
            ["gpt-mini"]    = { n_layer = 6, n_head = 6, n_embd = 192 },
            ["gpt-micro"]   = { n_layer = 4, n_head = 4, n_embd = 128 },
            ["gpt-nano"]    = { n_layer = 3, n_head = 3, n_embd = 48 },
        })[config.model_type])
    end

    local h = {}
    -- h = nn.ModuleList([Block(config) for _ in range(config.n_layer)])
    for i = 1, config.n_layer do
        h[i] = Block(config)
    end
    -- self.transformer = nn.ModuleDict(dict(wte = ..., wpe = ..., drop = ..., h = ..., ln_f = ...))
    -- ({name, module} pairs keep Python's dict order)
    self.transformer = nn.ModuleDict({
        { "wte",  nn.Embedding(config.vocab_size, config.n_embd) },
        { "wpe",  nn.Embedding(config.block_size, config.n_embd) },
        { "drop", nn.Dropout(config.embd_pdrop) },
        { "h",    nn.ModuleList(h) },
        { "ln_f", nn.LayerNorm(config.n_embd) },
    })
    -- self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
    self.lm_head = nn.Linear(config.n_embd, config.vocab_size, { bias = false })

    -- init all weights, and apply a special scaled init to the residual projections, per GPT-2 paper
    -- self.apply(self._init_weights)
    -- (Lua has no bound methods: self._init_weights would take the module as self)
    self:apply(function(module) self:_init_weights(module) end)
    -- for pn, p in self.named_parameters():
    for pn, p in self:named_parameters() do
        -- if pn.endswith('c_proj.weight'):
        if endswith(pn, "c_proj.weight") then
            -- torch.nn.init.normal_(p, mean=0.0, std=0.02/math.sqrt(2 * config.n_layer))
            nn.init.normal_(p, { mean = 0.0, std = 0.02 / math.sqrt(2 * config.n_layer) })
        end
    end

    -- report number of parameters (note we don't count the decoder parameters in lm_head)
    -- n_params = sum(p.numel() for p in self.transformer.parameters())
    local n_params = 0
    for _, p in ipairs(self.transformer:parameters()) do
        n_params = n_params + p:numel()
    end
    -- print("number of parameters: %.2fM" % (n_params/1e6,))
    self.report = string.format("number of parameters: %.2fM", n_params / 1e6)
    self.n_params = n_params
end

function GPT:_init_weights(module)
    -- if isinstance(module, nn.Linear):
    if isinstance(module, nn.Linear) then
        -- torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
        nn.init.normal_(module.weight, { mean = 0.0, std = 0.02 })
        -- if module.bias is not None:
        if module.bias ~= nil then
            nn.init.zeros_(module.bias)
        end
    elseif isinstance(module, nn.Embedding) then
        nn.init.normal_(module.weight, { mean = 0.0, std = 0.02 })
    elseif isinstance(module, nn.LayerNorm) then
        nn.init.zeros_(module.bias)
        nn.init.ones_(module.weight)
    end
end

-- Python's set operations on {name = true} tables
local function set_and(a, b)
    local out = {}
    for k in pairs(a) do
        if b[k] then
            out[k] = true
        end
    end
    return out
end

local function set_or(a, b)
    local out = {}
    for k in pairs(a) do
        out[k] = true
    end
    for k in pairs(b) do
        out[k] = true
    end
    return out
end

local function set_minus(a, b)
    local out = {}
    for k in pairs(a) do
        if not b[k] then
            out[k] = true
        end
    end
    return out
end

local function len(s)
    local n = 0
    for _ in pairs(s) do
        n = n + 1
    end
    return n
end

-- sorted(list(s))
local function sorted(s)
    local out = {}
    for k in pairs(s) do
        out[#out + 1] = k
    end
    table.sort(out)
    return out
end

function GPT:configure_optimizers(train_config)
    -- separate out all parameters to those that will and won't experience regularizing weight decay
    -- decay = set(); no_decay = set()
    local decay, no_decay = {}, {}
    -- whitelist_weight_modules = (torch.nn.Linear, )
    local whitelist_weight_modules = { nn.Linear }
    -- blacklist_weight_modules = (torch.nn.LayerNorm, torch.nn.Embedding)
    local blacklist_weight_modules = { nn.LayerNorm, nn.Embedding }
    -- for mn, m in self.named_modules():
    for mn, m in self:named_modules() do
        -- for pn, p in m.named_parameters():
        for pn, _ in m:named_parameters() do
            -- fpn = '%s.%s' % (mn, pn) if mn else pn # full param name
            -- ("" is true in Lua: the root's name "" is tested as such)
            local fpn = mn ~= "" and string.format("%s.%s", mn, pn) or pn
            -- if pn.endswith('bias'):
            if endswith(pn, "bias") then
                -- all biases will not be decayed
                no_decay[fpn] = true
            -- elif pn.endswith('weight') and isinstance(m, whitelist_weight_modules):
            elseif endswith(pn, "weight") and isinstance(m, whitelist_weight_modules) then
                -- weights of whitelist modules will be weight decayed
                decay[fpn] = true
            elseif endswith(pn, "weight") and isinstance(m, blacklist_weight_modules) then
                -- weights of blacklist modules will NOT be weight decayed
                no_decay[fpn] = true
            end
        end
    end

    -- validate that we considered every parameter
    -- param_dict = {pn: p for pn, p in self.named_parameters()}
    local param_dict, param_names = {}, {}
    for pn, p in self:named_parameters() do
        param_dict[pn] = p
        param_names[pn] = true
    end
    -- inter_params = decay & no_decay
    local inter_params = set_and(decay, no_decay)
    -- union_params = decay | no_decay
    local union_params = set_or(decay, no_decay)
    -- assert len(inter_params) == 0, "parameters %s made it into both decay/no_decay sets!" % (str(inter_params), )
    assert(len(inter_params) == 0, string.format("parameters %s made it into both decay/no_decay sets!",
        table.concat(sorted(inter_params), ", ")))
    -- assert len(param_dict.keys() - union_params) == 0, "parameters %s were not separated into either decay/no_decay set!" % ...
    assert(len(set_minus(param_names, union_params)) == 0, string.format(
        "parameters %s were not separated into either decay/no_decay set!",
        table.concat(sorted(set_minus(param_names, union_params)), ", ")))

    -- create the pytorch optimizer object
    -- optim_groups = [
    --     {"params": [param_dict[pn] for pn in sorted(list(decay))], "weight_decay": train_config.weight_decay},
    --     {"params": [param_dict[pn] for pn in sorted(list(no_decay))], "weight_decay": 0.0},
    -- ]
    local decay_params, no_decay_params = {}, {}
    for _, pn in ipairs(sorted(decay)) do
        decay_params[#decay_params + 1] = param_dict[pn]
    end
    for _, pn in ipairs(sorted(no_decay)) do
        no_decay_params[#no_decay_params + 1] = param_dict[pn]
    end
    local optim_groups = {
        { params = decay_params, weight_decay = train_config.weight_decay },
        { params = no_decay_params, weight_decay = 0.0 },
    }
    -- optimizer = torch.optim.AdamW(optim_groups, lr=train_config.learning_rate, betas=train_config.betas)
    local optimizer = optim.AdamW(optim_groups, { lr = train_config.learning_rate,
        betas = train_config.betas })
    return optimizer, sorted(decay), sorted(no_decay)
end

function GPT:forward(idx, targets)
    local device = idx.device
    -- b, t = idx.size()
    local _, t = unpack(idx:size())
    -- assert t <= self.block_size, f"Cannot forward sequence of length {t}, block size is only {self.block_size}"
    assert(t <= self.block_size, string.format(
        "Cannot forward sequence of length %d, block size is only %d", t, self.block_size))
    -- pos = torch.arange(0, t, dtype=torch.long, device=device).unsqueeze(0) # shape (1, t)
    -- (the positions index wpe: 1..t; arange(0, t) raises "id 0 out of range ... 1-based")
    local pos = tide.arange(1, t + 1, { dtype = tide.long, device = device }):unsqueeze(1)

    -- forward the GPT model itself
    local tok_emb = self.transformer.wte(idx) -- token embeddings of shape (b, t, n_embd)
    local pos_emb = self.transformer.wpe(pos) -- position embeddings of shape (1, t, n_embd)
    local x = self.transformer.drop(tok_emb + pos_emb)
    -- for block in self.transformer.h:
    for _, block in ipairs(self.transformer.h) do
        x = block(x)
    end
    x = self.transformer.ln_f(x)
    local logits = self.lm_head(x)

    -- if we are given some desired targets also calculate the loss
    local loss = nil
    if targets ~= nil then
        -- loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        loss = F.cross_entropy(logits:view(-1, logits:size(-1)), targets:view(-1), { ignore_index = -1 })
    end

    return logits, loss
end

-- @torch.no_grad()
-- def generate(self, idx, max_new_tokens, temperature=1.0, do_sample=False, top_k=None):
GPT.generate = tide.no_grad()(function(self, idx, max_new_tokens, temperature, do_sample, top_k)
    temperature = temperature or 1.0
    -- for _ in range(max_new_tokens):
    for _ = 1, max_new_tokens do
        -- if the sequence context is growing too long we must crop it at block_size
        -- idx_cond = idx if idx.size(1) <= self.block_size else idx[:, -self.block_size:]
        local idx_cond = idx
        if idx:size(2) > self.block_size then
            idx_cond = idx[{ {}, { -self.block_size, -1 } }]
        end
        -- forward the model to get the logits for the index in the sequence
        -- logits, _ = self(idx_cond)
        local logits = self(idx_cond)
        -- pluck the logits at the final step and scale by desired temperature
        -- logits = logits[:, -1, :] / temperature
        logits = logits[{ {}, -1, {} }] / temperature
        -- optionally crop the logits to only the top k options
        if top_k ~= nil then
            -- v, _ = torch.topk(logits, top_k)
            local v = tide.topk(logits, top_k)
            -- logits[logits < v[:, [-1]]] = -float('Inf')
            -- GAP: Lua makes the result of < one boolean (tide raises for a tensor of many
            -- elements: "has no single truth value; compare elementwise with t:lt(u)"); :lt
            logits[logits:lt(v[{ {}, { -1 } }])] = -math.huge
        end
        -- apply softmax to convert logits to (normalized) probabilities
        -- probs = F.softmax(logits, dim=-1)
        local probs = F.softmax(logits, { dim = -1 })
        -- either sample from the distribution or take the most likely element
        local idx_next
        if do_sample then
            -- idx_next = torch.multinomial(probs, num_samples=1)
            idx_next = tide.multinomial(probs, { num_samples = 1 })
        else
            -- _, idx_next = torch.topk(probs, k=1, dim=-1)
            local _
            _, idx_next = tide.topk(probs, { k = 1, dim = -1 })
        end
        -- append sampled index to the running sequence and continue
        -- idx = torch.cat((idx, idx_next), dim=1)
        idx = tide.cat({ idx, idx_next }, { dim = 2 })
    end

    return idx
end)

-- the demo notebook's SortDataset: sort `length` digits; 1-based tokens 1..num_digits
local SortDataset = tide.data.Dataset:extend("SortDataset")
function SortDataset:init(split, length, num_digits)
    -- assert split in {'train', 'test'}
    assert(split == "train" or split == "test")
    self.split = split
    self.length = length or 6
    self.num_digits = num_digits or 3
end

function SortDataset:__len__()
    return 10000 -- ...
end

function SortDataset:get_vocab_size()
    return self.num_digits
end

function SortDataset:get_block_size()
    -- the length of the sequence that will feed into transformer,
    -- containing concatenated input and the output, but -1 because
    -- the transformer starts making predictions at the last input element
    return self.length * 2 - 1
end

function SortDataset:__getitem__(idx)
    local inp
    -- use rejection sampling to generate an input example from the desired split
    while true do
        -- inp = torch.randint(self.num_digits, size=(self.length,), dtype=torch.long)
        -- (1-based tokens: 1..num_digits)
        inp = tide.randint(1, self.num_digits + 1, { size = { self.length }, dtype = tide.long })
        -- half of the time let's try to boost the number of examples that
        -- have a large number of repeats, as this is what the model seems to struggle
        -- with later in training, and they are kind of rate
        -- if torch.rand(1).item() < 0.5:
        local retry = false
        if tide.rand(1):item() < 0.5 then
            -- if inp.unique().nelement() > self.length // 2:
            if inp:unique():nelement() > math.floor(self.length / 2) then
                -- too many unqiue digits, re-sample
                retry = true
            end
        end
        if not retry then
            -- figure out if this generated example is train or test based on its hash
            -- h = hash(pickle.dumps(inp.tolist())); inp_split = 'test' if h % 4 == 0 else 'train'
            -- (a deterministic stand-in for Python's hash: the digits as a base-num_digits number)
            local h = 0
            for _, d in ipairs(inp:tolist()) do
                h = h * self.num_digits + d - 1
            end
            local inp_split = h % 4 == 0 and "test" or "train"
            if inp_split == self.split then
                break -- ok
            end
        end
    end

    -- solve the task: i.e. sort
    -- sol = torch.sort(inp)[0]
    local sol = tide.sort(inp)

    -- concatenate the problem specification and the solution
    -- cat = torch.cat((inp, sol), dim=0)
    local cat = tide.cat({ inp, sol }, { dim = 1 })

    -- the inputs to the transformer will be the offset sequence
    -- x = cat[:-1].clone()
    local x = cat[{ { 1, -2 } }]:clone()
    -- y = cat[1:].clone()
    local y = cat[{ { 2, -1 } }]:clone()
    -- we only want to predict at output locations, mask out the loss at the input locations
    -- y[:self.length-1] = -1
    y[{ { 1, self.length - 1 } }] = -1
    return x, y
end

-- class Trainer: the loop of mingpt/trainer.py
local Trainer = {}
Trainer.__index = Trainer

function Trainer.get_default_config()
    local C = CN()
    -- device to train on
    C.device = "auto"
    -- dataloder parameters
    C.num_workers = 4
    -- optimizer parameters
    C.max_iters = nil
    C.batch_size = 64
    C.learning_rate = 3e-4
    C.betas = { 0.9, 0.95 }
    C.weight_decay = 0.1 -- only applied on matmul weights
    C.grad_norm_clip = 1.0
    return C
end

function Trainer.new(config, model, train_dataset)
    local self = setmetatable({}, Trainer)
    self.config = config
    self.model = model
    self.optimizer = nil
    self.train_dataset = train_dataset
    -- self.callbacks = defaultdict(list)
    self.callbacks = {}

    -- determine the device we'll train on
    if config.device == "auto" then
        -- self.device = 'cuda' if torch.cuda.is_available() else 'cpu'
        -- (the spec stays on the CPU)
        self.device = "cpu"
    else
        self.device = config.device
    end
    self.model = self.model:to(self.device)

    -- variables that will be assigned to trainer class later for logging and etc
    self.iter_num = 0
    self.iter_time = 0.0
    self.iter_dt = 0.0
    return self
end

function Trainer:add_callback(onevent, callback)
    self.callbacks[onevent] = self.callbacks[onevent] or {}
    table.insert(self.callbacks[onevent], callback)
end

function Trainer:trigger_callbacks(onevent)
    -- for callback in self.callbacks.get(onevent, []):
    for _, callback in ipairs(self.callbacks[onevent] or {}) do
        callback(self)
    end
end

function Trainer:run()
    local model, config = self.model, self.config

    -- setup the optimizer
    self.optimizer = model:configure_optimizers(config)

    -- setup the dataloader
    -- train_loader = DataLoader(
    --     self.train_dataset,
    --     sampler=torch.utils.data.RandomSampler(self.train_dataset, replacement=True, num_samples=int(1e10)),
    --     shuffle=False,
    --     pin_memory=True,
    --     batch_size=config.batch_size,
    --     num_workers=config.num_workers,
    -- )
    local train_loader = tide.data.DataLoader(self.train_dataset, {
        sampler = tide.data.RandomSampler(self.train_dataset, { replacement = true,
            num_samples = math.floor(1e10) }),
        shuffle = false,
        pin_memory = true,
        batch_size = config.batch_size,
        num_workers = config.num_workers,
    })

    model:train()
    self.iter_num = 0
    self.iter_time = tide.wall_time()
    -- data_iter = iter(train_loader)
    local data_iter = train_loader:iter()
    while true do
        -- fetch the next batch (x, y) and re-init iterator if needed
        -- try: batch = next(data_iter) except StopIteration: ...
        local x, y = data_iter()
        if x == nil then
            data_iter = train_loader:iter()
            x, y = data_iter()
        end
        -- batch = [t.to(self.device) for t in batch]
        x, y = x:to(self.device), y:to(self.device)

        -- forward the model
        -- logits, self.loss = model(x, y)
        local _
        _, self.loss = model(x, y)

        -- backprop and update the parameters
        -- model.zero_grad(set_to_none=True)
        model:zero_grad({ set_to_none = true })
        self.loss:backward()
        -- torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_norm_clip)
        nn.utils.clip_grad_norm_(model:parameters(), config.grad_norm_clip)
        self.optimizer:step()

        self:trigger_callbacks("on_batch_end")
        self.iter_num = self.iter_num + 1
        local tnow = tide.wall_time()
        self.iter_dt = tnow - self.iter_time
        self.iter_time = tnow

        -- termination conditions
        if config.max_iters ~= nil and self.iter_num >= config.max_iters then
            break
        end
    end
end

describe("minGPT mingpt/model.py and trainer.py", function()
    it("NewGELU is GELU's tanh form (PyTorch's numbers)", function()
        local x = tide.tensor({ -2.0, -0.5, 0.0, 0.5, 2.0 })
        local want = { -0.04540228843688965, -0.1542859971523285, 0.0, 0.3457140028476715,
            1.9545977115631104 }
        assert_close_list(want, NewGELU()(x):tolist(), 1e-6, "NewGELU")
        -- F.gelu(x, approximate='tanh') is the same function
        assert_close_list(want, F.gelu(x, { approximate = "tanh" }):tolist(), 1e-6, "gelu tanh")
    end)

    it("GPT on fixed weights: the masked loss (ignore_index=-1) and generate, as PyTorch's", function()
        -- C = GPT.get_default_config(); C.model_type = None; C.n_layer, C.n_head, C.n_embd = 2, 2, 8
        local C = GPT.get_default_config()
        C.model_type = nil
        C.n_layer, C.n_head, C.n_embd = 2, 2, 8
        C.vocab_size, C.block_size = 5, 6
        C.embd_pdrop, C.resid_pdrop, C.attn_pdrop = 0.0, 0.0, 0.0
        local model = GPT(C)
        -- n_params = sum(p.numel() for p in self.transformer.parameters()): PyTorch's 1848
        assert.are.equal(1848, model.n_params)
        assert.are.equal("number of parameters: 0.00M", model.report)
        fill(model)
        -- PyTorch's tokens [[0, 1, 2, 3, 4, 0], [4, 3, 2, 1, 0, 1]], one more here
        local idx = tide.tensor({ { 1, 2, 3, 4, 5, 1 }, { 5, 4, 3, 2, 1, 2 } }, { dtype = tide.long })
        local targets = tide.tensor({ { -1, -1, 3, 4, 5, 1 }, { -1, 4, 3, -1, 1, 2 } },
            { dtype = tide.long })
        local logits, loss = model(idx, targets)
        assert.are.same({ 2, 6, 5 }, logits.shape)
        assert(close(loss:item(), 1.6085790395736694, 1e-5), "GPT loss " .. loss:item())
        -- logits[1, 2] in PyTorch's 0-based indices
        assert_close_list({ -0.042760398238897324, 0.04738375544548035, -0.05044887587428093,
            0.05185496062040329, -0.05155578628182411 }, logits[2][3]:tolist(), 1e-4, "logits")
        -- with no targets the loss is None
        local _, none = model(idx)
        assert.is_nil(none)
        -- a sequence past block_size is refused with the script's message
        local ok, err = pcall(model.forward, model, tide.ones(1, 7, { dtype = tide.long }))
        assert.is_false(ok)
        assert.is_truthy(tostring(err):find("Cannot forward sequence of length 7, block size is only 6", 1, true))

        -- out = m.generate(idx[:, :3], 4, do_sample=False): PyTorch's tokens + 1; the last step
        -- crops the 7 tokens to block_size
        local out = model:generate(idx[{ {}, { 1, 3 } }], 4, 1.0, false)
        assert.are.same({ { 1, 2, 3, 4, 2, 4, 4 }, { 5, 4, 3, 4, 2, 4, 4 } }, out:tolist())
        assert.is_nil(out.grad_fn)
        -- generate(..., do_sample=False, top_k=2, temperature=0.7)
        out = model:generate(idx[{ {}, { 1, 3 } }], 4, 0.7, false, 2)
        assert.are.same({ { 1, 2, 3, 4, 2, 4, 4 }, { 5, 4, 3, 4, 2, 4, 4 } }, out:tolist())
        -- do_sample=True, top_k=1: only the top token keeps any probability
        out = model:generate(idx[{ {}, { 1, 3 } }], 2, 1.0, true, 1)
        assert.are.same({ { 1, 2, 3, 4, 2 }, { 5, 4, 3, 4, 2 } }, out:tolist())
        -- a model_type fills n_layer, n_head, n_embd (giving both is refused)
        local C2 = GPT.get_default_config()
        C2.model_type = "gpt-nano"
        C2.vocab_size, C2.block_size = 3, 4
        local nano = GPT(C2)
        assert.are.same({ 3, 3, 48 }, { C2.n_layer, C2.n_head, C2.n_embd })
        assert.are.equal(3, #nano.transformer.h)
        C2.model_type = "gpt-nano"
        assert.has_error(function() GPT(C2) end) -- both given: type_given ^ params_given fails
    end)

    it("configure_optimizers' decay sets, isinstance on tuples of classes, the Trainer on SortDataset", function()
        tide.manual_seed(3407)
        -- train_dataset = SortDataset('train'); test_dataset = SortDataset('test')
        local train_dataset = SortDataset("train")
        local test_dataset = SortDataset("test")
        -- x, y = train_dataset[0]
        local x, y = train_dataset:__getitem__(1)
        assert.are.same({ 11 }, x.shape)
        assert.are.equal(tide.long, y.dtype)
        -- the first length-1 targets are masked out, the rest is the sorted input
        local yl, xl = y:tolist(), x:tolist()
        for i = 1, 5 do
            assert.are.equal(-1, yl[i])
        end
        local want = { xl[1], xl[2], xl[3], xl[4], xl[5], xl[6] }
        table.sort(want)
        assert.are.same(want, { yl[6], yl[7], yl[8], yl[9], yl[10], yl[11] })

        -- model_config = GPT.get_default_config(); model_config.model_type = 'gpt-nano' (shrunk)
        local model_config = GPT.get_default_config()
        model_config.model_type = nil
        model_config.n_layer, model_config.n_head, model_config.n_embd = 1, 2, 16
        model_config.vocab_size = train_dataset:get_vocab_size()
        model_config.block_size = train_dataset:get_block_size()
        local model = GPT(model_config)
        -- the scaled init: c_proj weights have std 0.02/sqrt(2 * n_layer), LayerNorms are 1 and 0
        local blk = model.transformer.h[1]
        assert.are.equal(1, blk.ln_1.weight:mean():item())
        assert.are.equal(0, blk.ln_1.bias:abs():sum():item())
        assert.are.equal(0, blk.attn.c_attn.bias:abs():sum():item())
        -- isinstance with a tuple of classes (a Lua list), as configure_optimizers asks it
        assert.is_true(isinstance(blk.mlp.c_fc, { nn.Linear }))
        assert.is_true(isinstance(blk.ln_1, { nn.LayerNorm, nn.Embedding }))
        assert.is_true(isinstance(model.transformer.wte, { nn.LayerNorm, nn.Embedding }))
        assert.is_false(isinstance(blk.mlp.c_fc, { nn.LayerNorm, nn.Embedding }))
        assert.is_false(isinstance(blk.mlp.act, {}))
        assert.is_true(isinstance(blk.mlp.act, { nn.Linear, { NewGELU } }))
        assert.is_true(isinstance(tide.ones(1), { nn.Linear, tide.Tensor }))

        -- train_config = Trainer.get_default_config()
        local train_config = Trainer.get_default_config()
        -- train_config.learning_rate = 5e-4 # the model we're using is so small that we can go a bit faster
        train_config.learning_rate = 5e-3
        train_config.max_iters = 6
        train_config.batch_size = 16
        local optimizer, decay, no_decay = model:configure_optimizers(train_config)
        -- sorted(list(decay)): the full names, the lm_head first
        assert.are.same({ "lm_head.weight", "transformer.h.1.attn.c_attn.weight",
            "transformer.h.1.attn.c_proj.weight", "transformer.h.1.mlp.c_fc.weight",
            "transformer.h.1.mlp.c_proj.weight" }, decay)
        -- biases, LayerNorm weights, the two embeddings; the "bias" buffer is not a parameter
        assert.are.equal(12, #no_decay) -- 4 biases, 3 LayerNorms (6), wte and wpe
        assert.are.equal(#model:parameters(), #decay + #no_decay)
        assert.are.equal("transformer.h.1.attn.c_attn.bias", no_decay[1])
        assert.are.equal(0.1, optimizer.param_groups[1].weight_decay)
        assert.are.equal(0.0, optimizer.param_groups[2].weight_decay)
        assert.are.same({ 0.9, 0.95 }, optimizer.param_groups[1].betas)

        -- trainer = Trainer(train_config, model, train_dataset)
        local trainer = Trainer.new(train_config, model, train_dataset)
        local losses = {}
        -- def batch_end_callback(trainer):
        --     if trainer.iter_num % 100 == 0:
        --         print(f"iter_dt {trainer.iter_dt * 1000:.2f}ms; iter {trainer.iter_num}: train loss {trainer.loss.item():.5f}")
        -- trainer.set_callback('on_batch_end', batch_end_callback)
        trainer:add_callback("on_batch_end", function(tr)
            losses[#losses + 1] = tr.loss:item()
            local line = string.format("iter_dt %.2fms; iter %d: train loss %.5f", tr.iter_dt * 1000,
                tr.iter_num, tr.loss:item())
            assert.is_truthy(line:find("train loss", 1, true))
        end)
        trainer:run()
        assert.are.equal(6, trainer.iter_num)
        assert.are.equal(6, #losses)
        for _, l in ipairs(losses) do
            assert_finite(l, "minGPT loss")
        end
        -- about log(3) at init, falling
        assert.is_true(math.abs(losses[1] - math.log(3)) < 0.3, "first loss " .. losses[1])
        assert.is_true(losses[6] < losses[1], "minGPT loss " .. losses[1] .. " -> " .. losses[6])

        -- model.eval(); the demo's eval_split: the sorted tail generated from the prompt
        model:eval()
        local n = train_dataset.length
        -- x, y = test_dataset[0]; inp = x[:n].unsqueeze(0)
        x = test_dataset:__getitem__(1)
        local inp = x[{ { 1, n } }]:unsqueeze(1)
        -- cat = model.generate(inp, n, do_sample=False) # using greedy argmax, not sampling
        local cat = model:generate(inp, n, 1.0, false)
        -- sol_candidate = cat[:, n:]
        local sol_candidate = cat[{ {}, { n + 1, -1 } }]
        assert.are.same({ 1, n }, sol_candidate.shape)
        for _, d in ipairs(sol_candidate[1]:tolist()) do
            assert.is_true(d >= 1 and d <= 3)
        end
    end)

    it("a batch whose targets are all -1: the loss is NaN, the gradient 0 (PyTorch's), AdamW goes on", function()
        tide.manual_seed(5)
        local C = GPT.get_default_config()
        C.model_type = nil
        C.n_layer, C.n_head, C.n_embd = 1, 2, 8
        C.vocab_size, C.block_size = 3, 5
        local model = GPT(C)
        local optimizer = model:configure_optimizers({ learning_rate = 1e-3, betas = { 0.9, 0.95 },
            weight_decay = 0.1 })
        local idx = tide.randint(1, 4, { 2, 5 })
        -- every target masked out, as SortDataset's y[:length-1] = -1 with length 1 past the end
        local targets = tide.full({ 2, 5 }, -1, { dtype = tide.long })
        local _, loss = model(idx, targets)
        -- PyTorch: tensor(nan), 0/0
        assert.is_true(loss:item() ~= loss:item())
        model:zero_grad({ set_to_none = true })
        loss:backward()
        -- PyTorch's nll_loss backward skips ignored rows: every gradient is 0, none NaN
        for pn, p in model:named_parameters() do
            assert.are.equal(0, p.grad:abs():sum():item(), pn)
        end
        optimizer:step()
        for pn, p in model:named_parameters() do
            assert.is_false(p:isnan():any():item(), pn)
        end
        -- the same model and batch with one real target still has a real loss and gradient
        targets[1][5] = 2
        _, loss = model(idx, targets)
        assert_finite(loss:item(), "one-target loss")
        model:zero_grad()
        loss:backward()
        assert.is_true(model.lm_head.weight.grad:abs():sum():item() > 0)
        -- F.cross_entropy alone, PyTorch 1.13: loss nan, grad zeros
        local logits = tide.randn(3, 4, { requires_grad = true })
        loss = F.cross_entropy(logits, tide.tensor({ -1, -1, -1 }), { ignore_index = -1 })
        loss:backward()
        assert.is_true(loss:item() ~= loss:item())
        assert.are.same({ { 0, 0, 0, 0 }, { 0, 0, 0, 0 }, { 0, 0, 0, 0 } }, logits.grad:tolist())
        -- summed, nothing to divide: 0 and zeros, as PyTorch's
        logits.grad = nil
        loss = F.cross_entropy(logits, tide.tensor({ -1, -1, -1 }), { ignore_index = -1, reduction = "sum" })
        loss:backward()
        assert.are.equal(0, loss:item())
        assert.are.equal(0, logits.grad:abs():sum():item())
    end)

    it("every target ignored on the other paths (nll_loss, weight, label_smoothing): NaN, gradient 0", function()
        -- PyTorch 1.13: F.cross_entropy(x, t, ignore_index=-1, **kw) with t all -1 is nan, and
        -- x.grad is all 0, for kw in {}, weight, label_smoothing, both; so is F.nll_loss
        local t = tide.full({ 3 }, -1, { dtype = tide.long })
        for _, kw in ipairs({ {}, { weight = tide.ones(4) }, { label_smoothing = 0.1 },
            { weight = tide.ones(4), label_smoothing = 0.1 } }) do
            local x = tide.randn(3, 4):requires_grad_()
            kw.ignore_index = -1
            local loss = F.cross_entropy(x, t, kw)
            loss:backward()
            assert.is_true(loss:item() ~= loss:item())
            assert.are.equal(0, x.grad:abs():sum():item())
        end
        local x = tide.randn(3, 4):requires_grad_()
        local loss = F.nll_loss(F.log_softmax(x, 2), t, { ignore_index = -1 })
        loss:backward()
        assert.is_true(loss:item() ~= loss:item())
        assert.are.equal(0, x.grad:abs():sum():item())
        -- one real target: PyTorch's weighted mean over it alone
        local y = tide.tensor({ { 1, 2, 3, 4 } }):float():requires_grad_()
        local l1 = F.cross_entropy(y, tide.tensor({ 4 }), { weight = tide.ones(4), ignore_index = -1 })
        assert.is_true(math.abs(l1:item() - 0.44018972) < 1e-6, tostring(l1:item()))
    end)

    it("tide.isinstance refuses what is neither a class nor a list of classes", function()
        local m = nn.Linear(2, 2)
        -- isinstance(m, None) is Python's TypeError; a misspelled class is nil in Lua
        local ok, err = pcall(isinstance, m, nn.Lineer)
        assert.is_false(ok)
        assert.is_truthy(tostring(err):find("tide: isinstance: cls must be a class or a list of classes, got nil", 1, true))
        ok, err = pcall(isinstance, m, "Linear")
        assert.is_false(ok)
        assert.is_truthy(tostring(err):find('got the string "Linear"', 1, true))
        ok, err = pcall(isinstance, m, { nn.Linear, 3 })
        assert.is_false(ok)
        assert.is_truthy(tostring(err):find("holds number 3 at position 2", 1, true))
        -- a class itself is not a list: one class is still one class
        assert.is_true(isinstance(m, nn.Linear))
        assert.is_true(isinstance(m, nn.Module))
        assert.is_false(isinstance(m, nn.Embedding))
        assert.is_false(isinstance(3, { nn.Linear }))
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. NLP From Scratch: char_rnn_classification_tutorial.py and char_rnn_generation_tutorial.py
---------------------------------------------------------------------------------------------
-- tiny made-up name lists, plain ASCII (the tutorial reads data/names/*.txt through
-- unicodeToAscii)
local all_categories = { "English", "Italian", "Japanese" }
local category_lines = {
    English = { "Smith", "Jones", "Brown", "Taylor" },
    Italian = { "Rossi", "Russo", "Bruno", "Ricci" },
    Japanese = { "Sato", "Suzuki", "Takahashi", "Abe" },
}
local n_categories = #all_categories

-- def randomChoice(l): return l[random.randint(0, len(l) - 1)]
local function randomChoice(l)
    return l[math.random(1, #l)]
end

describe("char_rnn_classification_tutorial.py", function()
    -- all_letters = string.ascii_letters + " .,;'"
    local all_letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ .,;'"
    local n_letters = #all_letters

    -- Find letter index from all_letters, e.g. "a" = 0 (here 1: a tensor index)
    local function letterToIndex(letter)
        -- return all_letters.find(letter)
        return all_letters:find(letter, 1, true)
    end

    -- Just for demonstration, turn a letter into a <1 x n_letters> Tensor
    local function letterToTensor(letter)
        local tensor = tide.zeros(1, n_letters)
        -- tensor[0][letterToIndex(letter)] = 1
        tensor[1][letterToIndex(letter)] = 1
        return tensor
    end

    -- Turn a line into a <line_length x 1 x n_letters>, or an array of one-hot letter vectors
    local function lineToTensor(line)
        local tensor = tide.zeros(#line, 1, n_letters)
        -- for li, letter in enumerate(line):
        for li = 1, #line do
            local letter = line:sub(li, li)
            -- tensor[li][0][letterToIndex(letter)] = 1
            tensor[li][1][letterToIndex(letter)] = 1
        end
        return tensor
    end

    local RNN = nn.Module:extend("RNN")
    function RNN:init(input_size, hidden_size, output_size)
        self.hidden_size = hidden_size
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.i2o = nn.Linear(input_size + hidden_size, output_size)
        -- self.softmax = nn.LogSoftmax(dim=1)
        self.softmax = nn.LogSoftmax({ dim = 2 })
    end

    function RNN:forward(input, hidden)
        -- combined = torch.cat((input, hidden), 1)
        local combined = tide.cat({ input, hidden }, 2)
        hidden = self.i2h(combined)
        local output = self.i2o(combined)
        output = self.softmax(output)
        return output, hidden
    end

    function RNN:initHidden()
        return tide.zeros(1, self.hidden_size)
    end

    it("letterToTensor, lineToTensor, the RNN on fixed weights (PyTorch's numbers)", function()
        -- print(letterToTensor('J')): a one at J's place, 36 (0-based 35)
        local J = letterToTensor("J")
        assert.are.same({ 1, n_letters }, J.shape)
        assert.are.equal(1, J:sum():item())
        assert.are.equal(1, J[1][36]:item())
        -- print(lineToTensor('Jones').size())
        assert.are.same({ 5, 1, 57 }, lineToTensor("Jones"):size())
        assert.are.equal(5, lineToTensor("Jones"):sum():item())

        local rnn = RNN(n_letters, 16, n_categories)
        fill(rnn)
        local function evaluate(line_tensor)
            local hidden = rnn:initHidden()
            local output
            -- for i in range(line_tensor.size()[0]):
            for i = 1, line_tensor:size()[1] do
                output, hidden = rnn(line_tensor[i], hidden)
            end
            return output
        end
        local output = evaluate(lineToTensor("Albert"))
        assert_close_list({ -1.259780764579773, -1.1022090911865234, -0.956729531288147 },
            output[1]:tolist(), 1e-5, "rnn output")
        -- one manual SGD step: p.data.add_(p.grad.data, alpha=-learning_rate)
        local criterion = nn.NLLLoss()
        rnn:zero_grad()
        local loss = criterion(evaluate(lineToTensor("Albert")), tide.tensor({ 2 }, { dtype = tide.long }))
        loss:backward()
        for _, p in ipairs(rnn:parameters()) do
            p.data:add_(p.grad.data, { alpha = -0.005 })
        end
        assert(close(loss:item(), 1.1022090911865234, 1e-5))
        local after = criterion(evaluate(lineToTensor("Albert")), tide.tensor({ 2 }, { dtype = tide.long }))
        assert(close(after:item(), 1.094264268875122, 1e-5), "after one step " .. after:item())
    end)

    it("train() with rnn.zero_grad() and manual SGD, evaluate, the confusion matrix, predict", function()
        tide.manual_seed(0)
        math.randomseed(0)
        -- n_hidden = 128
        local n_hidden = 128
        local rnn = RNN(n_letters, n_hidden, n_categories)

        -- input = letterToTensor('A'); hidden = torch.zeros(1, n_hidden)
        local input = letterToTensor("A")
        local hidden = tide.zeros(1, n_hidden)
        -- output, next_hidden = rnn(input, hidden)
        local output, next_hidden = rnn(input, hidden)
        assert.are.same({ 1, n_categories }, output.shape)
        assert.are.same({ 1, n_hidden }, next_hidden.shape)
        -- input = lineToTensor('Albert'); output, next_hidden = rnn(input[0], hidden)
        input = lineToTensor("Albert")
        output, next_hidden = rnn(input[1], hidden)
        assert.are.same({ 1, n_categories }, output.shape)

        local function categoryFromOutput(out)
            -- top_n, top_i = output.topk(1)
            local _, top_i = out:topk(1)
            -- category_i = top_i[0].item()
            local category_i = top_i[1]:item()
            return all_categories[category_i], category_i
        end
        -- the largest of the three log-probabilities
        local guess, guess_i = categoryFromOutput(tide.tensor({ { -2.0, -0.1, -3.0 } }))
        assert.are.same({ "Italian", 2 }, { guess, guess_i })

        local function randomTrainingExample()
            local category = randomChoice(all_categories)
            local line = randomChoice(category_lines[category])
            -- category_tensor = torch.tensor([all_categories.index(category)], dtype=torch.long)
            local category_tensor = tide.tensor({ index(all_categories, category) }, { dtype = tide.long })
            local line_tensor = lineToTensor(line)
            return category, line, category_tensor, line_tensor
        end

        local criterion = nn.NLLLoss()
        -- learning_rate = 0.005 # If you set this too high, it might explode. If too low, it might not learn
        local learning_rate = 0.005

        local function train(category_tensor, line_tensor)
            hidden = rnn:initHidden()

            rnn:zero_grad()

            -- for i in range(line_tensor.size()[0]):
            for i = 1, line_tensor:size()[1] do
                output, hidden = rnn(line_tensor[i], hidden)
            end

            local loss = criterion(output, category_tensor)
            loss:backward()

            -- Add parameters' gradients to their values, multiplied by learning rate
            -- for p in rnn.parameters():
            --     p.data.add_(p.grad.data, alpha=-learning_rate)
            for _, p in ipairs(rnn:parameters()) do
                p.data:add_(p.grad.data, { alpha = -learning_rate })
            end

            return output, loss:item()
        end

        -- Just return an output given a line
        local function evaluate(line_tensor)
            hidden = rnn:initHidden()
            for i = 1, line_tensor:size()[1] do
                output, hidden = rnn(line_tensor[i], hidden)
            end
            return output
        end

        local function mean_loss()
            local total, n = 0, 0
            tide.no_grad(function()
                for ci, category in ipairs(all_categories) do
                    for _, line in ipairs(category_lines[category]) do
                        total = total + criterion(evaluate(lineToTensor(line)),
                            tide.tensor({ ci }, { dtype = tide.long })):item()
                        n = n + 1
                    end
                end
            end)
            return total / n
        end

        local n_iters, print_every, plot_every = 48, 16, 8
        local current_loss = 0
        local all_losses = {}
        local printed = {}
        local before = mean_loss()
        -- for iter in range(1, n_iters + 1):
        for iter = 1, n_iters do
            local category, line, category_tensor, line_tensor = randomTrainingExample()
            local loss
            output, loss = train(category_tensor, line_tensor)
            current_loss = current_loss + loss
            -- Print ``iter`` number, loss, name and guess
            if iter % print_every == 0 then
                guess = categoryFromOutput(output)
                -- correct = '✓' if guess == category else '✗ (%s)' % category
                local correct = guess == category and "✓" or string.format("✗ (%s)", category)
                -- print('%d %d%% (%s) %.4f %s / %s %s' % (iter, iter / n_iters * 100, timeSince(start), loss, line, guess, correct))
                -- (Lua's %d takes no fraction: math.floor is Python's %d of a float)
                printed[#printed + 1] = string.format("%d %d%% (%s) %.4f %s / %s %s", iter,
                    math.floor(iter / n_iters * 100), "0m 0s", loss, line, guess, correct)
            end
            -- Add current loss avg to list of losses
            if iter % plot_every == 0 then
                all_losses[#all_losses + 1] = current_loss / plot_every
                current_loss = 0
            end
        end
        assert.are.equal(3, #printed)
        assert.is_truthy(printed[3]:find("^48 100%% %(0m 0s%) "))
        assert.are.equal(6, #all_losses)
        for _, l in ipairs(all_losses) do
            assert_finite(l, "char rnn loss")
        end
        local after = mean_loss()
        assert.is_true(after < before, "classification loss " .. before .. " -> " .. after)

        -- Keep track of correct guesses in a confusion matrix
        local confusion = tide.zeros(n_categories, n_categories)
        local n_confusion = 12
        -- Go through a bunch of examples and record which are correctly guessed
        for _ = 1, n_confusion do
            local category, _, _, line_tensor = randomTrainingExample()
            output = evaluate(line_tensor)
            local _, gi = categoryFromOutput(output)
            local category_i = index(all_categories, category)
            -- confusion[category_i][guess_i] += 1
            -- GAP: Lua has no +=; the element is read, changed and written back
            confusion[category_i][gi] = confusion[category_i][gi] + 1
        end
        assert.are.equal(n_confusion, confusion:sum():item())
        -- Normalize by dividing every row by its sum
        for i = 1, n_categories do
            if confusion[i]:sum():item() > 0 then
                -- confusion[i] = confusion[i] / confusion[i].sum()
                confusion[i] = confusion[i] / confusion[i]:sum()
                assert(close(confusion[i]:sum():item(), 1, 1e-6))
            end
        end

        -- def predict(input_line, n_predictions=3):
        local function predict(input_line, n_predictions)
            n_predictions = n_predictions or 3
            local predictions = {}
            -- with torch.no_grad():
            tide.no_grad(function()
                output = evaluate(lineToTensor(input_line))
                -- Get top N categories
                -- topv, topi = output.topk(n_predictions, 1, True)
                local topv, topi = output:topk(n_predictions, 2, true)
                for i = 1, n_predictions do
                    -- value = topv[0][i].item()
                    local value = topv[1][i]:item()
                    -- category_index = topi[0][i].item()
                    local category_index = topi[1][i]:item()
                    -- print('(%.2f) %s' % (value, all_categories[category_index]))
                    -- predictions.append([value, all_categories[category_index]])
                    predictions[#predictions + 1] = { value, all_categories[category_index] }
                end
            end)
            return predictions
        end
        local p = predict("Dovesky")
        assert.are.equal(3, #p)
        assert.is_true(p[1][1] >= p[2][1] and p[2][1] >= p[3][1])
        local total = 0
        for _, pr in ipairs(p) do
            total = total + math.exp(pr[1])
        end
        assert(close(total, 1, 1e-5), "three log-probabilities sum to " .. total)
        assert.are.equal(2, #predict("Satoshi", 2))
    end)

    it("the 2024 rewrite's NamesDataset and random_split(alldata, [.85, .15], generator=torch.Generator(device=device).manual_seed(2024))", function()
        -- class NamesDataset(Dataset): (read from the lists instead of data/names/*.txt)
        local NamesDataset = tide.data.Dataset:extend("NamesDataset")
        function NamesDataset:init()
            self.data, self.data_tensors, self.labels, self.labels_tensors = {}, {}, {}, {}
            -- labels_set = set() #set of all classes
            local labels_set = {}
            self.labels_uniq = {}
            for _, label in ipairs(all_categories) do
                for _, name in ipairs(category_lines[label]) do
                    self.data[#self.data + 1] = name
                    self.data_tensors[#self.data_tensors + 1] = lineToTensor(name)
                    self.labels[#self.labels + 1] = label
                    if not labels_set[label] then
                        labels_set[label] = true
                        self.labels_uniq[#self.labels_uniq + 1] = label
                    end
                end
            end
            -- for idx in range(len(self.labels)):
            for idx = 1, #self.labels do
                -- temp_tensor = torch.tensor([self.labels_uniq.index(self.labels[idx])], dtype=torch.long)
                local temp_tensor = tide.tensor({ index(self.labels_uniq, self.labels[idx]) },
                    { dtype = tide.long })
                self.labels_tensors[#self.labels_tensors + 1] = temp_tensor
            end
        end

        function NamesDataset:__len__()
            return #self.data
        end

        function NamesDataset:__getitem__(idx)
            local data_item = self.data[idx]
            local data_label = self.labels[idx]
            local data_tensor = self.data_tensors[idx]
            local label_tensor = self.labels_tensors[idx]
            return label_tensor, data_tensor, data_label, data_item
        end

        local alldata = NamesDataset()
        assert.are.equal(12, alldata:len())
        local label_tensor, data_tensor, data_label, data_item = alldata:__getitem__(5)
        assert.are.same({ { 2 }, "Italian", "Rossi" }, { label_tensor:tolist(), data_label, data_item })
        assert.are.same({ 5, 1, n_letters }, data_tensor.shape)

        local device = "cpu"
        -- train_set, test_set = torch.utils.data.random_split(alldata, [.85, .15],
        --     generator=torch.Generator(device=device).manual_seed(2024))
        -- (random_split returns a Lua list: unpack is Python's tuple unpacking)
        local train_set, test_set = unpack(tide.data.random_split(alldata, { .85, .15 },
            { generator = tide.Generator({ device = device }):manual_seed(2024) }))
        -- PyTorch's lengths: floor(12 * .85) = 10 and floor(12 * .15) = 1, the one left over
        -- going to the first
        assert.are.same({ 11, 1 }, { train_set:len(), test_set:len() })
        -- the keyword form is the positional one: the same generator, the same split
        local again = tide.data.random_split(alldata, { .85, .15 },
            { generator = tide.Generator(device):manual_seed(2024) })
        assert.are.equal(11, #train_set.indices)
        assert.are.same(train_set.indices, again[1].indices)
        assert.are.equal("Generator(device=cpu, initial_seed=2024)",
            tostring(tide.Generator({ device = device }):manual_seed(2024)))
        -- an unknown option is refused, naming the one PyTorch's takes
        local ok, err = pcall(tide.Generator, { devic = device })
        assert.is_false(ok)
        assert.is_truthy(tostring(err):find("tide: Generator: unknown option devic; PyTorch's " ..
            "Generator takes only device", 1, true))
    end)
end)

describe("char_rnn_generation_tutorial.py", function()
    -- all_letters = string.ascii_letters + " .,;'-"
    local all_letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ .,;'-"
    -- n_letters = len(all_letters) + 1 # Plus EOS marker
    local n_letters = #all_letters + 1

    local RNN = nn.Module:extend("RNN")
    function RNN:init(input_size, hidden_size, output_size)
        self.hidden_size = hidden_size
        self.i2h = nn.Linear(n_categories + input_size + hidden_size, hidden_size)
        self.i2o = nn.Linear(n_categories + input_size + hidden_size, output_size)
        self.o2o = nn.Linear(hidden_size + output_size, output_size)
        self.dropout = nn.Dropout(0.1)
        -- self.softmax = nn.LogSoftmax(dim=1)
        self.softmax = nn.LogSoftmax({ dim = 2 })
    end

    function RNN:forward(category, input, hidden)
        -- input_combined = torch.cat((category, input, hidden), 1)
        local input_combined = tide.cat({ category, input, hidden }, 2)
        hidden = self.i2h(input_combined)
        local output = self.i2o(input_combined)
        -- output_combined = torch.cat((hidden, output), 1)
        local output_combined = tide.cat({ hidden, output }, 2)
        output = self.o2o(output_combined)
        output = self.dropout(output)
        output = self.softmax(output)
        return output, hidden
    end

    function RNN:initHidden()
        return tide.zeros(1, self.hidden_size)
    end

    -- Get a random category and random line from that category
    local function randomTrainingPair()
        local category = randomChoice(all_categories)
        local line = randomChoice(category_lines[category])
        return category, line
    end

    -- One-hot vector for category
    local function categoryTensor(category)
        local li = index(all_categories, category)
        local tensor = tide.zeros(1, n_categories)
        -- tensor[0][li] = 1
        tensor[1][li] = 1
        return tensor
    end

    -- One-hot matrix of first to last letters (not including EOS) for input
    local function inputTensor(line)
        local tensor = tide.zeros(#line, 1, n_letters)
        -- for li in range(len(line)):
        for li = 1, #line do
            local letter = line:sub(li, li)
            -- tensor[li][0][all_letters.find(letter)] = 1
            tensor[li][1][all_letters:find(letter, 1, true)] = 1
        end
        return tensor
    end

    -- ``LongTensor`` of second letter to end (EOS) for target
    local function targetTensor(line)
        -- letter_indexes = [all_letters.find(line[li]) for li in range(1, len(line))]
        local letter_indexes = {}
        for li = 2, #line do
            letter_indexes[#letter_indexes + 1] = all_letters:find(line:sub(li, li), 1, true)
        end
        -- letter_indexes.append(n_letters - 1) # EOS (1-based: the last class, n_letters)
        letter_indexes[#letter_indexes + 1] = n_letters
        -- return torch.LongTensor(letter_indexes)
        return tide.LongTensor(letter_indexes)
    end

    -- Make category, input, and target tensors from a random category, line pair
    local function randomTrainingExample()
        local category, line = randomTrainingPair()
        local category_tensor = categoryTensor(category)
        local input_line_tensor = inputTensor(line)
        local target_line_tensor = targetTensor(line)
        return category_tensor, input_line_tensor, target_line_tensor
    end

    local criterion = nn.NLLLoss()

    -- the loss of train() without its update: the summed NLL over the line, per letter
    local function line_loss(rnn, category_tensor, input_line_tensor, target_line_tensor)
        -- target_line_tensor.unsqueeze_(-1)
        target_line_tensor:unsqueeze_(-1)
        local hidden = rnn:initHidden()
        -- loss = torch.Tensor([0]) # you can also just simply use ``loss = 0``
        local loss = tide.Tensor({ 0 })
        local output
        -- for i in range(input_line_tensor.size(0)):
        for i = 1, input_line_tensor:size(1) do
            output, hidden = rnn(category_tensor, input_line_tensor[i], hidden)
            local l = criterion(output, target_line_tensor[i])
            -- loss += l
            -- GAP: Lua has no +=; a new tensor (PyTorch adds in place into the {1} tensor)
            loss = loss + l
        end
        return loss, output
    end

    it("inputTensor, targetTensor with EOS, the summed loss on fixed weights (PyTorch's numbers)", function()
        local rnn = RNN(n_letters, 16, n_letters)
        fill(rnn)
        rnn:eval()
        -- categoryTensor('Italian'): PyTorch's tensor[0][1] = 1
        local cat = categoryTensor("Italian")
        assert.are.same({ { 0, 1, 0 } }, cat:tolist())
        local inp, tgt = inputTensor("Ivan"), targetTensor("Ivan")
        assert.are.same({ 4, 1, n_letters }, inp.shape)
        -- PyTorch's [21, 0, 13, 58]: v, a, n, EOS, one more here
        assert.are.same({ 22, 1, 14, 59 }, tgt:tolist())
        assert.are.equal(tide.long, tgt.dtype)
        local loss = line_loss(rnn, cat, inp, tgt)
        -- unsqueeze_ reshaped the caller's tensor in place
        assert.are.same({ 4, 1 }, tgt.shape)
        assert.are.same({ 1 }, loss.shape)
        assert(close(loss:item() / inp:size(1), 4.150820255279541, 1e-5), "gen loss " .. loss:item() / 4)
    end)

    it("train() with the loss summed over the sequence and manual SGD, sample() under no_grad", function()
        tide.manual_seed(0)
        math.randomseed(1)
        -- learning_rate = 0.0005 (raised for a few steps)
        local learning_rate = 0.005
        -- rnn = RNN(n_letters, 128, n_letters)
        local rnn = RNN(n_letters, 128, n_letters)

        local function train(category_tensor, input_line_tensor, target_line_tensor)
            rnn:zero_grad()
            local loss, output = line_loss(rnn, category_tensor, input_line_tensor, target_line_tensor)
            loss:backward()

            -- for p in rnn.parameters():
            --     p.data.add_(p.grad.data, alpha=-learning_rate)
            for _, p in ipairs(rnn:parameters()) do
                p.data:add_(p.grad.data, { alpha = -learning_rate })
            end

            -- return output, loss.item() / input_line_tensor.size(0)
            return output, loss:item() / input_line_tensor:size(1)
        end

        local function mean_loss()
            rnn:eval()
            local total, n = 0, 0
            tide.no_grad(function()
                for _, category in ipairs(all_categories) do
                    for _, line in ipairs(category_lines[category]) do
                        local loss = line_loss(rnn, categoryTensor(category), inputTensor(line),
                            targetTensor(line))
                        total = total + loss:item() / #line
                        n = n + 1
                    end
                end
            end)
            rnn:train()
            return total / n
        end

        local n_iters, plot_every = 24, 8
        local all_losses = {}
        local total_loss = 0 -- Reset every ``plot_every`` ``iters``
        local before = mean_loss()
        -- for iter in range(1, n_iters + 1):
        for iter = 1, n_iters do
            -- output, loss = train(*randomTrainingExample())
            local output, loss = train(randomTrainingExample())
            assert.are.same({ 1, n_letters }, output.shape)
            total_loss = total_loss + loss
            if iter % plot_every == 0 then
                all_losses[#all_losses + 1] = total_loss / plot_every
                total_loss = 0
            end
        end
        assert.are.equal(3, #all_losses)
        for _, l in ipairs(all_losses) do
            assert_finite(l, "generation loss")
        end
        local after = mean_loss()
        assert.is_true(after < before, "generation loss " .. before .. " -> " .. after)

        local max_length = 20
        rnn:eval()
        -- Sample from a category and starting letter
        local function sample(category, start_letter)
            start_letter = start_letter or "A"
            -- with torch.no_grad():  # no need to track history in sampling
            return tide.no_grad(function()
                local category_tensor = categoryTensor(category)
                local input = inputTensor(start_letter)
                local hidden = rnn:initHidden()

                local output_name = start_letter

                for _ = 1, max_length do
                    local output
                    output, hidden = rnn(category_tensor, input[1], hidden)
                    assert.is_nil(output.grad_fn)
                    -- topv, topi = output.topk(1)
                    local _, topi = output:topk(1)
                    -- topi = topi[0][0]
                    topi = topi[1][1]
                    local letter
                    -- if topi == n_letters - 1:
                    -- GAP: Lua's == on a tensor and a number is false without calling __eq;
                    -- :item() (EOS is the last class, n_letters, 1-based)
                    if topi:item() == n_letters then
                        break
                    else
                        -- letter = all_letters[topi]
                        -- GAP: a Lua string takes no tensor index: :item()
                        letter = all_letters:sub(topi:item(), topi:item())
                        output_name = output_name .. letter
                    end
                    input = inputTensor(letter)
                end

                return output_name
            end)
        end

        -- def samples(category, start_letters='ABC'):
        local function samples(category, start_letters)
            local out = {}
            -- for start_letter in start_letters:
            for i = 1, #start_letters do
                out[i] = sample(category, start_letters:sub(i, i))
            end
            return out
        end
        local names = samples("Italian", "RUS")
        assert.are.equal(3, #names)
        for i, name in ipairs(names) do
            assert.are.equal(("RUS"):sub(i, i), name:sub(1, 1))
            assert.is_true(#name >= 1 and #name <= max_length + 1)
            assert.is_truthy(name:find("^[%a .,;'%-]+$"), name)
        end
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. beginner_source/nlp: word_embeddings_tutorial.py and sequence_models_tutorial.py
---------------------------------------------------------------------------------------------
describe("word_embeddings_tutorial.py", function()
    local CONTEXT_SIZE = 2
    local EMBEDDING_DIM = 10

    local NGramLanguageModeler = nn.Module:extend("NGramLanguageModeler")
    function NGramLanguageModeler:init(vocab_size, embedding_dim, context_size)
        self.embeddings = nn.Embedding(vocab_size, embedding_dim)
        self.linear1 = nn.Linear(context_size * embedding_dim, 128)
        self.linear2 = nn.Linear(128, vocab_size)
    end

    function NGramLanguageModeler:forward(inputs)
        -- embeds = self.embeddings(inputs).view((1, -1))
        local embeds = self.embeddings(inputs):view({ 1, -1 })
        local out = F.relu(self.linear1(embeds))
        out = self.linear2(out)
        -- log_probs = F.log_softmax(out, dim=1)
        local log_probs = F.log_softmax(out, { dim = 2 })
        return log_probs
    end

    it("nn.Embedding lookup, the N-gram model on fixed weights (PyTorch's numbers)", function()
        tide.manual_seed(1)
        -- word_to_ix = {"hello": 0, "world": 1}
        local word_to_ix = { hello = 1, world = 2 }
        -- embeds = nn.Embedding(2, 5)  # 2 words in vocab, 5 dimensional embeddings
        local embeds = nn.Embedding(2, 5)
        -- lookup_tensor = torch.tensor([word_to_ix["hello"]], dtype=torch.long)
        local lookup_tensor = tide.tensor({ word_to_ix["hello"] }, { dtype = tide.long })
        local hello_embed = embeds(lookup_tensor)
        assert.are.same({ 1, 5 }, hello_embed.shape)
        assert.is_true(tide.equal(hello_embed[1]:detach(), embeds.weight[1]:detach()))

        -- PyTorch: NGramLanguageModeler(7, 10, 2) filled, context [3, 5], target 2, one SGD step
        local model = NGramLanguageModeler(7, EMBEDDING_DIM, CONTEXT_SIZE)
        fill(model)
        local loss_function = nn.NLLLoss()
        local optimizer = optim.SGD(model:parameters(), { lr = 0.001 })
        local log_probs = model(tide.tensor({ 4, 6 }, { dtype = tide.long }))
        assert.are.same({ 1, 7 }, log_probs.shape)
        local loss = loss_function(log_probs, tide.tensor({ 3 }, { dtype = tide.long }))
        model:zero_grad()
        loss:backward()
        optimizer:step()
        assert(close(loss:item(), 2.0224380493164062, 1e-5), "ngram loss " .. loss:item())
        local after = loss_function(model(tide.tensor({ 4, 6 }, { dtype = tide.long })),
            tide.tensor({ 3 }, { dtype = tide.long }))
        assert(close(after:item(), 2.0208263397216797, 1e-5), "after one step " .. after:item())
        -- print(model.embeddings.weight[...]): PyTorch's row 2, 1-based 3
        local row = model.embeddings.weight[3]
        assert.are.equal("SelectBackward0", tostring(row.grad_fn))
        assert_close_list({ 0.09656579047441483, 0.08063549548387527, 0.053791593760252 },
            { row[1]:item(), row[2]:item(), row[3]:item() }, 1e-5, "embedding row")
    end)

    it("N-gram language modeling on Sonnet 2: total_loss += loss.item() falls each epoch", function()
        tide.manual_seed(1)
        -- We will use Shakespeare Sonnet 2
        local test_sentence = split([[When forty winters shall besiege thy brow,
And dig deep trenches in thy beauty's field,
Thy youth's proud livery so gazed on now,
Will be a totter'd weed of small worth held:
Then being asked, where all thy beauty lies,
Where all the treasure of thy lusty days;
To say, within thine own deep sunken eyes,
Were an all-eating shame, and thriftless praise.
How much more praise deserv'd thy beauty's use,
If thou couldst answer 'This fair child of mine
Shall sum my count, and make my old excuse,'
Proving his beauty by succession thine!
This were to be new made when thou art old,
And see thy blood warm when thou feel'st it cold.]])
        -- we should tokenize the input, but we will ignore that for now
        -- build a list of tuples.
        -- Each tuple is ([ word_{i-CONTEXT_SIZE}, ..., word_{i-1} ], target word)
        -- ngrams = [([test_sentence[i - j - 1] for j in range(CONTEXT_SIZE)], test_sentence[i])
        --           for i in range(CONTEXT_SIZE, len(test_sentence))]
        local ngrams = {}
        for i = CONTEXT_SIZE + 1, #test_sentence do
            local context = {}
            for j = 0, CONTEXT_SIZE - 1 do
                context[#context + 1] = test_sentence[i - j - 1]
            end
            ngrams[#ngrams + 1] = { context, test_sentence[i] }
        end
        -- print(ngrams[:3]): [(['forty', 'When'], 'winters'), ...]
        assert.are.same({ { "forty", "When" }, "winters" }, ngrams[1])

        -- vocab = set(test_sentence); word_to_ix = {word: i for i, word in enumerate(vocab)}
        local vocab, word_to_ix = {}, {}
        for _, w in ipairs(test_sentence) do
            if word_to_ix[w] == nil then
                vocab[#vocab + 1] = w
                word_to_ix[w] = #vocab
            end
        end
        assert.are.equal(97, #vocab)

        local losses = {}
        local loss_function = nn.NLLLoss()
        -- model = NGramLanguageModeler(len(vocab), EMBEDDING_DIM, CONTEXT_SIZE)
        local model = NGramLanguageModeler(#vocab, EMBEDDING_DIM, CONTEXT_SIZE)
        -- optimizer = optim.SGD(model.parameters(), lr=0.001)
        local optimizer = optim.SGD(model:parameters(), { lr = 0.001 })

        -- for epoch in range(10): (two here)
        for _ = 1, 2 do
            local total_loss = 0
            -- for context, target in ngrams:
            for _, ng in ipairs(ngrams) do
                local context, target = ng[1], ng[2]
                -- Step 1. Prepare the inputs to be passed to the model (i.e, turn the words
                -- into integer indices and wrap them in tensors)
                -- context_idxs = torch.tensor([word_to_ix[w] for w in context], dtype=torch.long)
                local idxs = {}
                for k, w in ipairs(context) do
                    idxs[k] = word_to_ix[w]
                end
                local context_idxs = tide.tensor(idxs, { dtype = tide.long })

                -- Step 2. Recall that torch *accumulates* gradients. Before passing in a
                -- new instance, you need to zero out the gradients from the old instance
                model:zero_grad()

                -- Step 3. Run the forward pass, getting log probabilities over next words
                local log_probs = model(context_idxs)

                -- Step 4. Compute your loss function. (Again, Torch wants the target
                -- word wrapped in a tensor)
                -- loss = loss_function(log_probs, torch.tensor([word_to_ix[target]], dtype=torch.long))
                local loss = loss_function(log_probs, tide.tensor({ word_to_ix[target] }, { dtype = tide.long }))

                -- Step 5. Do the backward pass and update the gradient
                loss:backward()
                optimizer:step()

                -- Get the Python number from a 1-element Tensor by calling tensor.item()
                -- total_loss += loss.item()
                total_loss = total_loss + loss:item()
            end
            losses[#losses + 1] = total_loss
        end
        -- print(losses)  # The loss decreased every iteration over the training data!
        assert_finite(losses[1], "ngram epoch loss")
        -- about log(97) per n-gram at init
        assert.is_true(math.abs(losses[1] / #ngrams - math.log(97)) < 0.3, "first epoch " .. losses[1])
        assert.is_true(losses[2] < losses[1], "ngram loss " .. losses[1] .. " -> " .. losses[2])

        -- To get the embedding of a particular word, e.g. "beauty"
        -- print(model.embeddings.weight[word_to_ix["beauty"]])
        local beauty = model.embeddings.weight[word_to_ix["beauty"]]
        assert.are.same({ EMBEDDING_DIM }, beauty.shape)
    end)

    it("the CBOW exercise: context of two words each side, summed embeddings", function()
        tide.manual_seed(2)
        local CBOW_CONTEXT_SIZE = 2 -- 2 words to the left, 2 to the right
        local raw_text = split([[We are about to study the idea of a computational process.
Computational processes are abstract beings that inhabit computers.
As they evolve, processes manipulate other abstract things called data.
The evolution of a process is directed by a pattern of rules
called a program. People create programs to direct processes. In effect,
we conjure the spirits of the computer with our spells.]])

        -- By deriving a set from `raw_text`, we deduplicate the array
        local vocab, word_to_ix = {}, {}
        for _, w in ipairs(raw_text) do
            if word_to_ix[w] == nil then
                vocab[#vocab + 1] = w
                word_to_ix[w] = #vocab
            end
        end
        local vocab_size = #vocab

        local data = {}
        -- for i in range(CONTEXT_SIZE, len(raw_text) - CONTEXT_SIZE):
        for i = CBOW_CONTEXT_SIZE + 1, #raw_text - CBOW_CONTEXT_SIZE do
            -- context = ([raw_text[i - j - 1] for j in range(CONTEXT_SIZE)]
            --            + [raw_text[i + j + 1] for j in range(CONTEXT_SIZE)])
            local context = {}
            for j = 0, CBOW_CONTEXT_SIZE - 1 do
                context[#context + 1] = raw_text[i - j - 1]
            end
            for j = 0, CBOW_CONTEXT_SIZE - 1 do
                context[#context + 1] = raw_text[i + j + 1]
            end
            local target = raw_text[i]
            -- data.append((context, target))
            data[#data + 1] = { context, target }
        end
        -- print(data[:5]): [(['are', 'We', 'to', 'study'], 'about'), ...]
        assert.are.same({ { "are", "We", "to", "study" }, "about" }, data[1])

        -- class CBOW(nn.Module): (the exercise's blanks, filled the usual way)
        local CBOW = nn.Module:extend("CBOW")
        function CBOW:init(vocab_size_, embedding_dim)
            self.embeddings = nn.Embedding(vocab_size_, embedding_dim)
            self.linear = nn.Linear(embedding_dim, vocab_size_)
        end

        function CBOW:forward(inputs)
            -- embeds = self.embeddings(inputs).sum(dim=0).view((1, -1))
            local embeds = self.embeddings(inputs):sum({ dim = 1 }):view({ 1, -1 })
            -- return F.log_softmax(self.linear(embeds), dim=1)
            return F.log_softmax(self.linear(embeds), { dim = 2 })
        end

        -- def make_context_vector(context, word_to_ix):
        local function make_context_vector(context, to_ix)
            -- idxs = [word_to_ix[w] for w in context]
            local idxs = {}
            for k, w in ipairs(context) do
                idxs[k] = to_ix[w]
            end
            -- return torch.tensor(idxs, dtype=torch.long)
            return tide.tensor(idxs, { dtype = tide.long })
        end

        -- make_context_vector(data[0][0], word_to_ix)  # example
        local v = make_context_vector(data[1][1], word_to_ix)
        assert.are.same({ word_to_ix["are"], word_to_ix["We"], word_to_ix["to"], word_to_ix["study"] },
            v:tolist())

        local model = CBOW(vocab_size, 10)
        local loss_function = nn.NLLLoss()
        local optimizer = optim.SGD(model:parameters(), { lr = 0.05 })
        local losses = {}
        for _ = 1, 3 do
            local total_loss = 0
            for _, d in ipairs(data) do
                local context_vector = make_context_vector(d[1], word_to_ix)
                model:zero_grad()
                local log_probs = model(context_vector)
                local loss = loss_function(log_probs, tide.tensor({ word_to_ix[d[2]] }, { dtype = tide.long }))
                loss:backward()
                optimizer:step()
                total_loss = total_loss + loss:item()
            end
            losses[#losses + 1] = total_loss
        end
        for _, l in ipairs(losses) do
            assert_finite(l, "CBOW loss")
        end
        assert.is_true(losses[3] < losses[1], "CBOW loss " .. losses[1] .. " -> " .. losses[3])
    end)
end)

describe("sequence_models_tutorial.py", function()
    it("the LSTM step by step and all at once: the last slice of out is the hidden state", function()
        tide.manual_seed(1)
        local lstm = nn.LSTM(3, 3) -- Input dim is 3, output dim is 3
        -- inputs = [torch.randn(1, 3) for _ in range(5)]  # make a sequence of length 5
        local inputs = {}
        for k = 1, 5 do
            inputs[k] = tide.randn(1, 3)
        end

        -- initialize the hidden state.
        -- hidden = (torch.randn(1, 1, 3), torch.randn(1, 1, 3))
        local hidden = { tide.randn(1, 1, 3), tide.randn(1, 1, 3) }
        local h0 = hidden
        local out
        -- for i in inputs:
        for _, i in ipairs(inputs) do
            -- Step through the sequence one element at a time.
            -- after each step, hidden contains the hidden state.
            -- out, hidden = lstm(i.view(1, 1, -1), hidden)
            out, hidden = lstm(i:view(1, 1, -1), hidden)
        end
        assert.are.same({ 1, 1, 3 }, out.shape)
        local stepped = hidden

        -- alternatively, we can do the entire sequence all at once.
        -- Add the extra 2nd dimension
        -- inputs = torch.cat(inputs).view(len(inputs), 1, -1)
        inputs = tide.cat(inputs):view(#inputs, 1, -1)
        assert.are.same({ 5, 1, 3 }, inputs.shape)
        -- from the same start, the whole sequence ends where the steps did
        local out_all, hidden_all = lstm(inputs, h0)
        assert.is_true(tide.allclose(hidden_all[1], stepped[1], 1e-5, 1e-6))
        assert.is_true(tide.allclose(hidden_all[2], stepped[2], 1e-5, 1e-6))
        -- hidden = (torch.randn(1, 1, 3), torch.randn((1, 1, 3)))  # clean out hidden state
        hidden = { tide.randn(1, 1, 3), tide.randn({ 1, 1, 3 }) }
        -- out, hidden = lstm(inputs, hidden)
        out, hidden = lstm(inputs, hidden)
        assert.are.same({ 5, 1, 3 }, out.shape)
        assert.are.same({ 1, 1, 3 }, hidden[1].shape)
        -- (compare the last slice of "out" with "hidden" below, they are the same)
        assert.is_true(tide.equal(out[-1], hidden[1][1]))
        assert.is_false(tide.equal(out_all, out))
    end)

    -- def prepare_sequence(seq, to_ix):
    local function prepare_sequence(seq, to_ix)
        -- idxs = [to_ix[w] for w in seq]
        local idxs = {}
        for k, w in ipairs(seq) do
            idxs[k] = to_ix[w]
        end
        -- return torch.tensor(idxs, dtype=torch.long)
        return tide.tensor(idxs, { dtype = tide.long })
    end

    local LSTMTagger = nn.Module:extend("LSTMTagger")
    function LSTMTagger:init(embedding_dim, hidden_dim, vocab_size, tagset_size)
        self.hidden_dim = hidden_dim

        self.word_embeddings = nn.Embedding(vocab_size, embedding_dim)

        -- The LSTM takes word embeddings as inputs, and outputs hidden states
        -- with dimensionality hidden_dim.
        self.lstm = nn.LSTM(embedding_dim, hidden_dim)

        -- The linear layer that maps from hidden state space to tag space
        self.hidden2tag = nn.Linear(hidden_dim, tagset_size)
    end

    function LSTMTagger:forward(sentence)
        local embeds = self.word_embeddings(sentence)
        -- lstm_out, _ = self.lstm(embeds.view(len(sentence), 1, -1))
        local lstm_out = self.lstm(embeds:view(#sentence, 1, -1))
        -- tag_space = self.hidden2tag(lstm_out.view(len(sentence), -1))
        local tag_space = self.hidden2tag(lstm_out:view(#sentence, -1))
        -- tag_scores = F.log_softmax(tag_space, dim=1)
        local tag_scores = F.log_softmax(tag_space, { dim = 2 })
        return tag_scores
    end

    it("LSTMTagger on fixed weights: the tag scores of 'The dog ate the apple' (PyTorch's numbers)", function()
        local model = LSTMTagger(6, 6, 9, 3)
        fill(model)
        local want = {
            { -1.1220109462738037, -1.1159411668777466, -1.0590968132019043 },
            { -1.1204555034637451, -1.124812364578247, -1.0522382259368896 },
            { -1.1183909177780151, -1.1294596195220947, -1.0498595237731934 },
            { -1.118696928024292, -1.1311652660369873, -1.0480018854141235 },
            { -1.1191823482513428, -1.1319427490234375, -1.046834945678711 },
        }
        -- with torch.no_grad(): tag_scores = model(inputs)
        local tag_scores = tide.no_grad(function()
            return model(tide.tensor({ 1, 2, 3, 4, 5 }, { dtype = tide.long }))
        end)
        assert.is_nil(tag_scores.grad_fn)
        for i = 1, 5 do
            assert_close_list(want[i], tag_scores[i]:tolist(), 1e-5, "tag scores row " .. i)
        end
    end)

    it("LSTMTagger: training with NLLLoss and SGD tags the training sentence right", function()
        tide.manual_seed(1)
        local training_data = {
            -- ("The dog ate the apple".split(), ["DET", "NN", "V", "DET", "NN"]),
            { split("The dog ate the apple"), { "DET", "NN", "V", "DET", "NN" } },
            { split("Everybody read that book"), { "NN", "V", "DET", "NN" } },
        }
        local word_to_ix = {}
        local n_words = 0
        -- For each words-list (sentence) and tags-list in each tuple of training_data
        for _, st in ipairs(training_data) do
            for _, word in ipairs(st[1]) do
                -- if word not in word_to_ix: # word has not been assigned an index yet
                if word_to_ix[word] == nil then
                    -- word_to_ix[word] = len(word_to_ix)  # Assign each word with a unique index
                    n_words = n_words + 1
                    word_to_ix[word] = n_words
                end
            end
        end
        -- tag_to_ix = {"DET": 0, "NN": 1, "V": 2}  # Assign each tag with a unique index
        local tag_to_ix = { DET = 1, NN = 2, V = 3 }
        local len_tag_to_ix = 3

        -- These will usually be more like 32 or 64 dimensional.
        -- We will keep them small, so we can see how the weights change as we train.
        local EMBEDDING_DIM = 6
        local HIDDEN_DIM = 6

        -- model = LSTMTagger(EMBEDDING_DIM, HIDDEN_DIM, len(word_to_ix), len(tag_to_ix))
        local model = LSTMTagger(EMBEDDING_DIM, HIDDEN_DIM, n_words, len_tag_to_ix)
        local loss_function = nn.NLLLoss()
        -- optimizer = optim.SGD(model.parameters(), lr=0.1)
        local optimizer = optim.SGD(model:parameters(), { lr = 0.1 })

        -- See what the scores are before training
        -- Note that element i,j of the output is the score for tag j for word i.
        -- Here we don't need to train, so the code is wrapped in torch.no_grad()
        local before = tide.no_grad(function()
            local inputs = prepare_sequence(training_data[1][1], word_to_ix)
            local tag_scores = model(inputs)
            return loss_function(tag_scores, prepare_sequence(training_data[1][2], tag_to_ix)):item()
        end)

        -- for epoch in range(300):  # again, normally you would NOT do 300 epochs, it is toy data
        for _ = 1, 300 do
            -- for sentence, tags in training_data:
            for _, st in ipairs(training_data) do
                local sentence, tags = st[1], st[2]
                -- Step 1. Remember that Pytorch accumulates gradients.
                -- We need to clear them out before each instance
                model:zero_grad()

                -- Step 2. Get our inputs ready for the network, that is, turn them into
                -- Tensors of word indices.
                local sentence_in = prepare_sequence(sentence, word_to_ix)
                local targets = prepare_sequence(tags, tag_to_ix)

                -- Step 3. Run our forward pass.
                local tag_scores = model(sentence_in)

                -- Step 4. Compute the loss, gradients, and update the parameters by
                --  calling optimizer.step()
                local loss = loss_function(tag_scores, targets)
                loss:backward()
                optimizer:step()
            end
        end

        -- See what the scores are after training
        tide.no_grad(function()
            local inputs = prepare_sequence(training_data[1][1], word_to_ix)
            local tag_scores = model(inputs)
            local after = loss_function(tag_scores, prepare_sequence(training_data[1][2], tag_to_ix)):item()
            assert.is_true(after < before, "tagger loss " .. before .. " -> " .. after)
            -- The sentence is "the dog ate the apple".  i,j corresponds to score for tag j
            -- for word i. The predicted tag is the maximum scoring tag.
            -- Here, we can see the predicted sequence below is 0 1 2 0 1 (1-based: 1 2 3 1 2)
            -- since 0 is index of the maximum value of row 1,
            -- 1 is the index of maximum value of row 2, etc.
            -- Which is DET NOUN VERB DET NOUN, the correct sequence!
            local _, predicted = tag_scores:max(2)
            assert.are.same({ 1, 2, 3, 1, 2 }, predicted:tolist())
        end)
    end)
end)
