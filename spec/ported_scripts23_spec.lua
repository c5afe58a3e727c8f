-- ported_scripts23_spec.lua — Karpathy's makemore.py (every model: Transformer, BoW, RNN/GRU, MLP,
-- Bigram; CharDataset with -1 masking, create_datasets, InfiniteDataLoader over a RandomSampler
-- with replacement, evaluate, generate with top_k and do_sample) and llama2.c's model.py
-- (RMSNorm, RoPE as real/imag pairs checked against PyTorch 1.13, repeat_kv, Attention's manual and
-- flash paths, SwiGLU FeedForward, weight tying, scaled init, configure_optimizers, estimate_mfu,
-- generate), ported line for line, shrunk to tiny sizes. The Python line stands above each Lua
-- line that differs from it. Dims, indices and class targets are 1-based: makemore's token 0
-- (<START>/<STOP>) is token 1 here and its characters 2..n+1.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list
local isinstance = tide.isinstance

local function flat(t)
    local out = {}
    local x = t:contiguous():view(-1)
    for i = 1, x:numel() do out[i] = x[i]:item() end
    return out
end

---------------------------------------------------------------------------------------------
-- 1. makemore.py
---------------------------------------------------------------------------------------------
describe("makemore.py", function()
    -- @dataclass class ModelConfig
    local function ModelConfig(args)
        local c = { block_size = nil, vocab_size = nil, n_layer = 4, n_embd = 64, n_embd2 = 64, n_head = 4 }
        for k, v in pairs(args or {}) do c[k] = v end
        return c
    end

    -- class NewGELU(nn.Module)
    local NewGELU = nn.Module:extend("NewGELU")
    function NewGELU:forward(x)
        -- return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))
        return 0.5 * x * (1.0 + tide.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * tide.pow(x, 3.0))))
    end

    local CausalSelfAttention = nn.Module:extend("CausalSelfAttention")
    function CausalSelfAttention:init(config)
        assert(config.n_embd % config.n_head == 0)
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd)
        -- self.register_buffer("bias", torch.tril(torch.ones(config.block_size, config.block_size))
        --                              .view(1, 1, config.block_size, config.block_size))
        self:register_buffer("bias", tide.tril(tide.ones(config.block_size, config.block_size))
            :view(1, 1, config.block_size, config.block_size))
        self.n_head = config.n_head
        self.n_embd = config.n_embd
    end

    function CausalSelfAttention:forward(x)
        -- B, T, C = x.size()
        local B, T, C = unpack(x:size())
        -- q, k ,v  = self.c_attn(x).split(self.n_embd, dim=2)
        local q, k, v = unpack(self.c_attn(x):split(self.n_embd, { dim = 3 }))
        -- k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) # (B, nh, T, hs)
        k = k:view(B, T, self.n_head, math.floor(C / self.n_head)):transpose(2, 3)
        q = q:view(B, T, self.n_head, math.floor(C / self.n_head)):transpose(2, 3)
        v = v:view(B, T, self.n_head, math.floor(C / self.n_head)):transpose(2, 3)
        -- att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        local att = (q:matmul(k:transpose(-2, -1))) * (1.0 / math.sqrt(k:size(-1)))
        -- att = att.masked_fill(self.bias[:,:,:T,:T] == 0, float('-inf'))
        att = att:masked_fill(self.bias[{ {}, {}, { 1, T }, { 1, T } }]:eq(0), -math.huge)
        -- att = F.softmax(att, dim=-1)
        att = F.softmax(att, { dim = -1 })
        -- y = att @ v
        local y = att:matmul(v)
        -- y = y.transpose(1, 2).contiguous().view(B, T, C)
        y = y:transpose(2, 3):contiguous():view(B, T, C)
        y = self.c_proj(y)
        return y
    end

    local Block = nn.Module:extend("Block")
    function Block:init(config)
        self.ln_1 = nn.LayerNorm(config.n_embd)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd)
        -- self.mlp = nn.ModuleDict(dict(c_fc = ..., c_proj = ..., act = NewGELU()))
        self.mlp = nn.ModuleDict({
            c_fc = nn.Linear(config.n_embd, 4 * config.n_embd),
            c_proj = nn.Linear(4 * config.n_embd, config.n_embd),
            act = NewGELU(),
        })
        local m = self.mlp
        -- self.mlpf = lambda x: m.c_proj(m.act(m.c_fc(x))) # MLP forward
        self.mlpf = function(x) return m.c_proj(m.act(m.c_fc(x))) end
    end

    function Block:forward(x)
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlpf(self.ln_2(x))
        return x
    end

    local Transformer = nn.Module:extend("Transformer")
    function Transformer:init(config)
        self.block_size = config.block_size
        local h = {}
        for _ = 1, config.n_layer do h[#h + 1] = Block(config) end
        self.transformer = nn.ModuleDict({
            wte = nn.Embedding(config.vocab_size, config.n_embd),
            wpe = nn.Embedding(config.block_size, config.n_embd),
            -- h = nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            h = nn.ModuleList(h),
            ln_f = nn.LayerNorm(config.n_embd),
        })
        -- self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, { bias = false })
        -- n_params = sum(p.numel() for p in self.transformer.parameters())
        local n_params = 0
        for _, p in ipairs(self.transformer:parameters()) do n_params = n_params + p:numel() end
        self.n_params = n_params
    end

    function Transformer:get_block_size()
        return self.block_size
    end

    function Transformer:forward(idx, targets)
        local device = idx.device
        -- b, t = idx.size()
        local _, t = unpack(idx:size())
        assert(t <= self.block_size, string.format(
            "Cannot forward sequence of length %d, block size is only %d", t, self.block_size))
        -- pos = torch.arange(0, t, dtype=torch.long, device=device).unsqueeze(0) # shape (1, t); 1-based ids
        local pos = tide.arange(1, t + 1, { dtype = tide.long, device = device }):unsqueeze(1)
        local tok_emb = self.transformer.wte(idx)
        local pos_emb = self.transformer.wpe(pos)
        local x = tok_emb + pos_emb
        -- for block in self.transformer.h:
        for _, block in ipairs(self.transformer.h) do
            x = block(x)
        end
        x = self.transformer.ln_f(x)
        local logits = self.lm_head(x)
        local loss = nil
        if targets ~= nil then
            -- loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
            loss = F.cross_entropy(logits:view(-1, logits:size(-1)), targets:view(-1), { ignore_index = -1 })
        end
        return logits, loss
    end

    -- Bag of Words (BoW) language model
    local CausalBoW = nn.Module:extend("CausalBoW")
    function CausalBoW:init(config)
        self.block_size = config.block_size
        self:register_buffer("bias", tide.tril(tide.ones(config.block_size, config.block_size))
            :view(1, config.block_size, config.block_size))
    end

    function CausalBoW:forward(x)
        local B, T, _ = unpack(x:size())
        -- att = torch.zeros((B, T, T), device=x.device)
        local att = tide.zeros({ B, T, T }, { device = x.device })
        -- att = att.masked_fill(self.bias[:,:T,:T] == 0, float('-inf'))
        att = att:masked_fill(self.bias[{ {}, { 1, T }, { 1, T } }]:eq(0), -math.huge)
        att = F.softmax(att, { dim = -1 })
        -- y = att @ x
        local y = att:matmul(x)
        return y
    end

    local BoWBlock = nn.Module:extend("BoWBlock")
    function BoWBlock:init(config)
        self.cbow = CausalBoW(config)
        self.mlp = nn.ModuleDict({
            c_fc = nn.Linear(config.n_embd, config.n_embd2),
            c_proj = nn.Linear(config.n_embd2, config.n_embd),
        })
        local m = self.mlp
        -- self.mlpf = lambda x: m.c_proj(F.tanh(m.c_fc(x))) # MLP forward
        self.mlpf = function(x) return m.c_proj(F.tanh(m.c_fc(x))) end
    end

    function BoWBlock:forward(x)
        x = x + self.cbow(x)
        x = x + self.mlpf(x)
        return x
    end

    local BoW = nn.Module:extend("BoW")
    function BoW:init(config)
        self.block_size = config.block_size
        self.vocab_size = config.vocab_size
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.wpe = nn.Embedding(config.block_size, config.n_embd)
        self.context_block = BoWBlock(config)
        self.lm_head = nn.Linear(config.n_embd, self.vocab_size)
    end

    function BoW:get_block_size()
        return self.block_size
    end

    function BoW:forward(idx, targets)
        local device = idx.device
        local _, t = unpack(idx:size())
        assert(t <= self.block_size)
        local pos = tide.arange(1, t + 1, { dtype = tide.long, device = device }):unsqueeze(1)
        local tok_emb = self.wte(idx)
        local pos_emb = self.wpe(pos)
        local x = tok_emb + pos_emb
        x = self.context_block(x)
        local logits = self.lm_head(x)
        local loss = nil
        if targets ~= nil then
            loss = F.cross_entropy(logits:view(-1, logits:size(-1)), targets:view(-1), { ignore_index = -1 })
        end
        return logits, loss
    end

    -- Recurrent Neural Net language model
    local RNNCell = nn.Module:extend("RNNCell")
    function RNNCell:init(config)
        self.xh_to_h = nn.Linear(config.n_embd + config.n_embd2, config.n_embd2)
    end

    function RNNCell:forward(xt, hprev)
        -- xh = torch.cat([xt, hprev], dim=1)
        local xh = tide.cat({ xt, hprev }, { dim = 2 })
        local ht = F.tanh(self.xh_to_h(xh))
        return ht
    end

    local GRUCell = nn.Module:extend("GRUCell")
    function GRUCell:init(config)
        self.xh_to_z = nn.Linear(config.n_embd + config.n_embd2, config.n_embd2)
        self.xh_to_r = nn.Linear(config.n_embd + config.n_embd2, config.n_embd2)
        self.xh_to_hbar = nn.Linear(config.n_embd + config.n_embd2, config.n_embd2)
    end

    function GRUCell:forward(xt, hprev)
        local xh = tide.cat({ xt, hprev }, { dim = 2 })
        local r = F.sigmoid(self.xh_to_r(xh))
        local hprev_reset = r * hprev
        local xhr = tide.cat({ xt, hprev_reset }, { dim = 2 })
        local hbar = F.tanh(self.xh_to_hbar(xhr))
        local z = F.sigmoid(self.xh_to_z(xh))
        local ht = (1 - z) * hprev + z * hbar
        return ht
    end

    local RNN = nn.Module:extend("RNN")
    function RNN:init(config, cell_type)
        self.block_size = config.block_size
        self.vocab_size = config.vocab_size
        -- self.start = nn.Parameter(torch.zeros(1, config.n_embd2)) # the starting hidden state
        self.start = nn.Parameter(tide.zeros(1, config.n_embd2))
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        if cell_type == "rnn" then
            self.cell = RNNCell(config)
        elseif cell_type == "gru" then
            self.cell = GRUCell(config)
        end
        self.lm_head = nn.Linear(config.n_embd2, self.vocab_size)
    end

    function RNN:get_block_size()
        return self.block_size
    end

    function RNN:forward(idx, targets)
        local b, t = unpack(idx:size())
        local emb = self.wte(idx)
        -- hprev = self.start.expand((b, -1)) # expand out the batch dimension
        local hprev = self.start:expand({ b, -1 })
        local hiddens = {}
        -- for i in range(t):
        for i = 1, t do
            -- xt = emb[:, i, :] # (b, n_embd)
            local xt = emb[{ {}, i, {} }]
            local ht = self.cell(xt, hprev)
            hprev = ht
            hiddens[#hiddens + 1] = ht
        end
        -- hidden = torch.stack(hiddens, 1) # (b, t, n_embd2)
        local hidden = tide.stack(hiddens, 2)
        local logits = self.lm_head(hidden)
        local loss = nil
        if targets ~= nil then
            loss = F.cross_entropy(logits:view(-1, logits:size(-1)), targets:view(-1), { ignore_index = -1 })
        end
        return logits, loss
    end

    -- MLP language model
    local MLP = nn.Module:extend("MLP")
    function MLP:init(config)
        self.block_size = config.block_size
        self.vocab_size = config.vocab_size
        self.wte = nn.Embedding(config.vocab_size + 1, config.n_embd)
        self.mlp = nn.Sequential(
            nn.Linear(self.block_size * config.n_embd, config.n_embd2),
            nn.Tanh(),
            nn.Linear(config.n_embd2, self.vocab_size)
        )
    end

    function MLP:get_block_size()
        return self.block_size
    end

    function MLP:forward(idx, targets)
        local embs = {}
        -- for k in range(self.block_size):
        for _ = 1, self.block_size do
            local tok_emb = self.wte(idx)
            -- idx = torch.roll(idx, 1, 1)
            idx = tide.roll(idx, 1, 2)
            -- idx[:, 0] = self.vocab_size # special <BLANK> token (1-based: vocab_size + 1)
            idx[{ {}, 1 }] = self.vocab_size + 1
            embs[#embs + 1] = tok_emb
        end
        -- x = torch.cat(embs, -1)
        local x = tide.cat(embs, -1)
        local logits = self.mlp(x)
        local loss = nil
        if targets ~= nil then
            loss = F.cross_entropy(logits:view(-1, logits:size(-1)), targets:view(-1), { ignore_index = -1 })
        end
        return logits, loss
    end

    -- Bigram language model
    local Bigram = nn.Module:extend("Bigram")
    function Bigram:init(config)
        local n = config.vocab_size
        -- self.logits = nn.Parameter(torch.zeros((n, n)))
        self.logits = nn.Parameter(tide.zeros({ n, n }))
    end

    function Bigram:get_block_size()
        return 1
    end

    function Bigram:forward(idx, targets)
        -- logits = self.logits[idx]
        local logits = self.logits[idx]
        local loss = nil
        if targets ~= nil then
            loss = F.cross_entropy(logits:view(-1, logits:size(-1)), targets:view(-1), { ignore_index = -1 })
        end
        return logits, loss
    end

    -- @torch.no_grad()
    -- def generate(model, idx, max_new_tokens, temperature=1.0, do_sample=False, top_k=None):
    local function generate(model, idx, max_new_tokens, temperature, do_sample, top_k)
        temperature = temperature or 1.0
        return tide.no_grad(function()
            local block_size = model:get_block_size()
            for _ = 1, max_new_tokens do
                -- idx_cond = idx if idx.size(1) <= block_size else idx[:, -block_size:]
                local idx_cond = idx:size(2) <= block_size and idx or idx[{ {}, { -block_size, -1 } }]
                -- logits, _ = model(idx_cond)
                local logits, _ = model(idx_cond)
                -- logits = logits[:, -1, :] / temperature
                logits = logits[{ {}, -1, {} }] / temperature
                if top_k ~= nil then
                    -- v, _ = torch.topk(logits, top_k)
                    local v, _ = tide.topk(logits, top_k)
                    -- logits[logits < v[:, [-1]]] = -float('Inf')
                    logits[logits:lt(v[{ {}, { -1 } }])] = -math.huge
                end
                -- probs = F.softmax(logits, dim=-1)
                local probs = F.softmax(logits, { dim = -1 })
                local idx_next
                if do_sample then
                    -- idx_next = torch.multinomial(probs, num_samples=1)
                    idx_next = tide.multinomial(probs, { num_samples = 1 })
                else
                    -- _, idx_next = torch.topk(probs, k=1, dim=-1)
                    _, idx_next = tide.topk(probs, { k = 1, dim = -1 })
                end
                -- idx = torch.cat((idx, idx_next), dim=1)
                idx = tide.cat({ idx, idx_next }, { dim = 2 })
            end
            return idx
        end)
    end

    -- @torch.inference_mode()
    -- def evaluate(model, dataset, batch_size=50, max_batches=None):
    local function evaluate(model, dataset, batch_size, max_batches)
        batch_size = batch_size or 50
        return tide.inference_mode(function()
            model:eval()
            -- loader = DataLoader(dataset, shuffle=True, batch_size=batch_size, num_workers=0)
            local loader = tide.data.DataLoader(dataset, { shuffle = true, batch_size = batch_size, num_workers = 0 })
            local losses = {}
            -- for i, batch in enumerate(loader):
            local i = 0
            for X0, Y0 in loader:iter() do
                local batch = { X0, Y0 }
                -- batch = [t.to(args.device) for t in batch]
                for j, t in ipairs(batch) do batch[j] = t:to("cpu") end
                local X, Y = unpack(batch)
                local _, loss = model(X, Y)
                losses[#losses + 1] = loss:item()
                if max_batches ~= nil and i >= max_batches then
                    break
                end
                i = i + 1
            end
            -- mean_loss = torch.tensor(losses).mean().item()
            local mean_loss = tide.tensor(losses):mean():item()
            model:train()
            return mean_loss
        end)
    end

    -- class CharDataset(Dataset)
    local CharDataset = tide.data.Dataset:extend("CharDataset")
    function CharDataset:init(words, chars, max_word_length)
        self.words = words
        self.chars = chars
        self.max_word_length = max_word_length
        -- self.stoi = {ch:i+1 for i,ch in enumerate(chars)}: 1-based, token 1 is <START>/<STOP>
        self.stoi = {}
        for i, ch in ipairs(chars) do self.stoi[ch] = i + 1 end
        -- self.itos = {i:s for s,i in self.stoi.items()} # inverse mapping
        self.itos = {}
        for s, i in pairs(self.stoi) do self.itos[i] = s end
    end

    function CharDataset:__len__()
        return #self.words
    end

    function CharDataset:contains(word)
        for _, w in ipairs(self.words) do
            if w == word then return true end
        end
        return false
    end

    function CharDataset:get_vocab_size()
        return #self.chars + 1
    end

    function CharDataset:get_output_length()
        return self.max_word_length + 1
    end

    function CharDataset:encode(word)
        -- ix = torch.tensor([self.stoi[w] for w in word], dtype=torch.long)
        local ids = {}
        for w in word:gmatch(".") do ids[#ids + 1] = self.stoi[w] end
        local ix = tide.tensor(ids, { dtype = tide.long })
        return ix
    end

    function CharDataset:decode(ix)
        -- word = ''.join(self.itos[i] for i in ix)
        local parts = {}
        for _, i in ipairs(ix) do parts[#parts + 1] = self.itos[i] end
        local word = table.concat(parts)
        return word
    end

    function CharDataset:__getitem__(idx)
        local word = self.words[idx]
        local ix = self:encode(word)
        -- x = torch.zeros(self.max_word_length + 1, dtype=torch.long): token 1 (<START>) here
        local x = tide.ones(self.max_word_length + 1, { dtype = tide.long })
        local y = tide.ones(self.max_word_length + 1, { dtype = tide.long })
        -- x[1:1+len(ix)] = ix
        x[{ { 2, 1 + #word } }] = ix
        -- y[:len(ix)] = ix
        y[{ { 1, #word } }] = ix
        -- y[len(ix)+1:] = -1 # index -1 will mask the loss at the inactive locations
        y[{ { #word + 2, -1 } }] = -1
        return x, y
    end

    -- def create_datasets(input_file): the file's text is a string here
    local function create_datasets(data)
        -- words = data.splitlines(); words = [w.strip() for w in words]; words = [w for w in words if w]
        local words = {}
        for line in (data .. "\n"):gmatch("(.-)\n") do
            local w = line:match("^%s*(.-)%s*$")
            if w ~= "" then words[#words + 1] = w end
        end
        -- chars = sorted(list(set(''.join(words))))
        local set, chars = {}, {}
        for c in table.concat(words):gmatch(".") do
            if not set[c] then set[c] = true; chars[#chars + 1] = c end
        end
        table.sort(chars)
        -- max_word_length = max(len(w) for w in words)
        local max_word_length = 0
        for _, w in ipairs(words) do max_word_length = math.max(max_word_length, #w) end
        -- test_set_size = min(1000, int(len(words) * 0.1))
        local test_set_size = math.min(1000, math.floor(#words * 0.1))
        -- rp = torch.randperm(len(words)).tolist()  (1-based positions)
        local rp = tide.randperm(#words):tolist()
        -- train_words = [words[i] for i in rp[:-test_set_size]]
        local train_words, test_words = {}, {}
        for j = 1, #rp - test_set_size do train_words[#train_words + 1] = words[rp[j]] end
        -- test_words = [words[i] for i in rp[-test_set_size:]]
        for j = #rp - test_set_size + 1, #rp do test_words[#test_words + 1] = words[rp[j]] end
        local train_dataset = CharDataset(train_words, chars, max_word_length)
        local test_dataset = CharDataset(test_words, chars, max_word_length)
        return train_dataset, test_dataset
    end

    -- class InfiniteDataLoader
    local InfiniteDataLoader = ported.class("InfiniteDataLoader")
    function InfiniteDataLoader:__init__(dataset, kwargs)
        -- train_sampler = torch.utils.data.RandomSampler(dataset, replacement=True, num_samples=int(1e10))
        local train_sampler = tide.data.RandomSampler(dataset, { replacement = true, num_samples = 1e10 })
        -- self.train_loader = DataLoader(dataset, sampler=train_sampler, **kwargs)
        local opts = { sampler = train_sampler }
        for k, v in pairs(kwargs) do opts[k] = v end
        self.train_loader = tide.data.DataLoader(dataset, opts)
        -- self.data_iter = iter(self.train_loader)
        self.data_iter = self.train_loader:iter()
    end

    function InfiniteDataLoader:next()
        -- batch = next(self.data_iter): the iterator returns the batch's fields, packed in a list
        -- here; StopIteration is an empty list
        local batch = { self.data_iter() }
        if #batch == 0 then
            self.data_iter = self.train_loader:iter()
            batch = { self.data_iter() }
        end
        return batch
    end

    local names = [[
emma
olivia
 ava
isabella
sophia

mia
amelia
harper
evelyn
abigail
emily
ella
luna
lily
zoe
nora
]]

    it("CharDataset: encode/decode, __getitem__'s x/y with -1 masking, create_datasets", function()
        tide.manual_seed(3407)
        local train_dataset, test_dataset = create_datasets(names)
        assert.are.equal(15, train_dataset:len()) -- len(train_dataset) (#train_dataset on 5.2+)
        assert.are.equal(1, test_dataset:len())
        assert.are.equal(8, train_dataset.max_word_length)
        local vocab_size = train_dataset:get_vocab_size()
        assert.are.equal(#train_dataset.chars + 1, vocab_size)
        -- encode/decode round trip
        assert.are.equal("luna", train_dataset:decode(train_dataset:encode("luna"):tolist()))
        -- "ava" is 3 letters: x = <START> a v a <START>...; y = a v a <STOP> -1 -1 -1 -1 -1
        local ds = CharDataset({ "ava" }, train_dataset.chars, 8)
        local x, y = ds:__getitem__(1)
        local a, v = ds.stoi["a"], ds.stoi["v"]
        assert.are.same({ 1, a, v, a, 1, 1, 1, 1, 1 }, x:tolist())
        assert.are.same({ a, v, a, 1, -1, -1, -1, -1, -1 }, y:tolist())
        -- a word of max_word_length: y[len(ix)+1:] is empty
        local ds2 = CharDataset({ "isabella" }, train_dataset.chars, 8)
        local _, y2 = ds2:__getitem__(1)
        assert.are.equal(1, y2[9]:item())
        assert.are.equal(0, y2:eq(-1):sum():item())
        -- ds[i] through the DataLoader's path
        local sx, sy = unpack(ds[1])
        assert.are.same(x:tolist(), sx:tolist())
        assert.are.same(y:tolist(), sy:tolist())
        assert.is_true(test_dataset:contains(test_dataset.words[1]))
    end)

    local function train_type(model_type, steps)
        tide.manual_seed(3407)
        local train_dataset, test_dataset = create_datasets(names)
        local vocab_size = train_dataset:get_vocab_size()
        local block_size = train_dataset:get_output_length()
        local config = ModelConfig({ vocab_size = vocab_size, block_size = block_size,
            n_layer = 2, n_head = 2, n_embd = 16, n_embd2 = 16 })
        local model
        if model_type == "transformer" then
            model = Transformer(config)
        elseif model_type == "bigram" then
            model = Bigram(config)
        elseif model_type == "mlp" then
            model = MLP(config)
        elseif model_type == "rnn" then
            model = RNN(config, "rnn")
        elseif model_type == "gru" then
            model = RNN(config, "gru")
        elseif model_type == "bow" then
            model = BoW(config)
        else
            error("model type " .. model_type .. " is not recognized")
        end
        model:to("cpu")
        -- optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=args.weight_decay, betas=(0.9, 0.99), eps=1e-8)
        local optimizer = tide.optim.AdamW(model:parameters(), { lr = 1e-2, weight_decay = 0.01,
            betas = { 0.9, 0.99 }, eps = 1e-8 })
        -- batch_loader = InfiniteDataLoader(train_dataset, batch_size=args.batch_size, pin_memory=True, num_workers=args.num_workers)
        local batch_loader = InfiniteDataLoader(train_dataset, { batch_size = 14, pin_memory = true, num_workers = 4 })
        -- fixed batch for a decreasing check, as well as the loader's batches
        local losses = {}
        for step = 0, steps - 1 do
            local batch = batch_loader:next()
            -- batch = [t.to(args.device) for t in batch]
            for j, t in ipairs(batch) do batch[j] = t:to("cpu") end
            local X, Y = unpack(batch)
            assert.are.same({ 14, block_size }, X:size())
            local _, loss = model(X, Y)
            -- MLP's idx[:, 0] = ... writes into torch.roll's new tensor, not into X
            assert.are.equal(14, X[{ {}, 1 }]:eq(1):sum():item())
            -- model.zero_grad(set_to_none=True)
            model:zero_grad({ set_to_none = true })
            loss:backward()
            optimizer:step()
            assert_finite(loss:item(), model_type .. " loss at step " .. step)
            losses[#losses + 1] = loss:item()
        end
        local train_loss = evaluate(model, train_dataset, 100, 10)
        local test_loss = evaluate(model, test_dataset, 100, 10)
        assert_finite(train_loss, "train loss")
        assert_finite(test_loss, "test loss")
        assert.is_true(model.training)
        -- the loss on the whole train set went down from the first batch's
        assert.is_true(train_loss < losses[1], model_type .. ": " .. train_loss .. " >= " .. losses[1])
        -- print_samples: X_init = torch.zeros(num, 1, dtype=torch.long) (token 1 = <START> here)
        local X_init = tide.ones(3, 1, { dtype = tide.long }):to("cpu")
        local steps_out = train_dataset:get_output_length() - 1
        local X_samp = generate(model, X_init, steps_out, nil, true, 3):to("cpu")
        assert.are.same({ 3, steps_out + 1 }, X_samp:size())
        for i = 1, X_samp:size(1) do
            -- row = X_samp[i, 1:].tolist()
            local row = X_samp[{ i, { 2, -1 } }]:tolist()
            -- crop_index = row.index(0) if 0 in row else len(row)  (token 1 here)
            local crop_index = #row
            for j, r in ipairs(row) do
                if r == 1 then crop_index = j - 1; break end
            end
            local cropped = {}
            for j = 1, crop_index do cropped[j] = row[j] end
            local word_samp = train_dataset:decode(cropped)
            assert.are.equal(crop_index, #word_samp)
        end
        -- greedy decoding (do_sample=False)
        local X_greedy = generate(model, X_init, 2)
        assert.are.same({ 3, 3 }, X_greedy:size())
        return model
    end

    for _, model_type in ipairs({ "transformer", "bow", "rnn", "gru", "mlp", "bigram" }) do
        it("--type " .. model_type .. ": AdamW steps over an InfiniteDataLoader, evaluate, generate", function()
            train_type(model_type, 6)
        end)
    end
end)

---------------------------------------------------------------------------------------------
-- 2. llama2.c model.py
---------------------------------------------------------------------------------------------
describe("llama2.c model.py", function()
    -- @dataclass class ModelArgs (the 7B defaults; each test passes tiny ones)
    local function ModelArgs(args)
        local a = { dim = 4096, n_layers = 32, n_heads = 32, n_kv_heads = nil, vocab_size = 32000,
            hidden_dim = nil, multiple_of = 256, norm_eps = 1e-5, max_seq_len = 2048, dropout = 0.0 }
        for k, v in pairs(args or {}) do a[k] = v end
        return a
    end

    local RMSNorm = nn.Module:extend("RMSNorm")
    function RMSNorm:init(dim, eps)
        self.eps = eps
        -- self.weight = nn.Parameter(torch.ones(dim))
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
        local freqs = 1.0 / (theta ^ (tide.arange(0, dim, 2)[{ { 1, math.floor(dim / 2) } }]:float() / dim))
        -- t = torch.arange(end, device=freqs.device)
        local t = tide.arange(end_, { device = freqs.device })
        -- freqs = torch.outer(t, freqs).float()
        freqs = tide.outer(t, freqs):float()
        local freqs_cos = tide.cos(freqs) -- real part
        local freqs_sin = tide.sin(freqs) -- imaginary part
        return freqs_cos, freqs_sin
    end

    local function reshape_for_broadcast(freqs_cis, x)
        local ndim = x.ndim
        assert(1 < ndim)
        -- assert freqs_cis.shape == (x.shape[1], x.shape[-1])
        assert.are.same({ x.shape[2], x.shape[-1] }, freqs_cis.shape)
        -- shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
        local shape = {}
        for i, d in ipairs(x:size()) do
            shape[i] = (i == 2 or i == ndim) and d or 1
        end
        return freqs_cis:view(shape)
    end

    local function apply_rotary_emb(xq, xk, freqs_cos, freqs_sin)
        -- xq_r, xq_i = xq.float().reshape(xq.shape[:-1] + (-1, 2)).unbind(-1)
        -- (GAP fixed: a tide.Size + a list concatenates, as torch.Size + tuple)
        local xq_r, xq_i = unpack(xq:float():reshape(xq.shape[{ { 1, -2 } }] + { -1, 2 }):unbind(-1))
        local xk_r, xk_i = unpack(xk:float():reshape(xk.shape[{ { 1, -2 } }] + { -1, 2 }):unbind(-1))

        freqs_cos = reshape_for_broadcast(freqs_cos, xq_r)
        freqs_sin = reshape_for_broadcast(freqs_sin, xq_r)

        local xq_out_r = xq_r * freqs_cos - xq_i * freqs_sin
        local xq_out_i = xq_r * freqs_sin + xq_i * freqs_cos
        local xk_out_r = xk_r * freqs_cos - xk_i * freqs_sin
        local xk_out_i = xk_r * freqs_sin + xk_i * freqs_cos

        -- xq_out = torch.stack([xq_out_r, xq_out_i], dim=-1).flatten(3)
        local xq_out = tide.stack({ xq_out_r, xq_out_i }, { dim = -1 }):flatten(4)
        local xk_out = tide.stack({ xk_out_r, xk_out_i }, { dim = -1 }):flatten(4)

        return xq_out:type_as(xq), xk_out:type_as(xk)
    end

    local function repeat_kv(x, n_rep)
        -- bs, slen, n_kv_heads, head_dim = x.shape
        local bs, slen, n_kv_heads, head_dim = unpack(x.shape)
        if n_rep == 1 then
            return x
        end
        -- x[:, :, :, None, :].expand(...).reshape(...)
        return x[{ {}, {}, {}, tide.newaxis, {} }]
            :expand(bs, slen, n_kv_heads, n_rep, head_dim)
            :reshape(bs, slen, n_kv_heads * n_rep, head_dim)
    end

    local Attention = nn.Module:extend("Attention")
    function Attention:init(args, use_flash)
        -- self.n_kv_heads = args.n_heads if args.n_kv_heads is None else args.n_kv_heads
        self.n_kv_heads = args.n_kv_heads == nil and args.n_heads or args.n_kv_heads
        assert(args.n_heads % self.n_kv_heads == 0)
        local model_parallel_size = 1
        self.n_local_heads = math.floor(args.n_heads / model_parallel_size)
        self.n_local_kv_heads = math.floor(self.n_kv_heads / model_parallel_size)
        self.n_rep = math.floor(self.n_local_heads / self.n_local_kv_heads)
        self.head_dim = math.floor(args.dim / args.n_heads)
        self.wq = nn.Linear(args.dim, args.n_heads * self.head_dim, { bias = false })
        self.wk = nn.Linear(args.dim, self.n_kv_heads * self.head_dim, { bias = false })
        self.wv = nn.Linear(args.dim, self.n_kv_heads * self.head_dim, { bias = false })
        self.wo = nn.Linear(args.n_heads * self.head_dim, args.dim, { bias = false })
        self.attn_dropout = nn.Dropout(args.dropout)
        self.resid_dropout = nn.Dropout(args.dropout)
        self.dropout = args.dropout

        -- self.flash = hasattr(torch.nn.functional, 'scaled_dot_product_attention')
        -- (the test picks the path: both are ported)
        self.flash = F.scaled_dot_product_attention ~= nil and use_flash
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
        local bsz, seqlen, _ = unpack(x.shape)

        local xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)
        xq = xq:view(bsz, seqlen, self.n_local_heads, self.head_dim)
        xk = xk:view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)
        xv = xv:view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)

        xq, xk = apply_rotary_emb(xq, xk, freqs_cos, freqs_sin)

        xk = repeat_kv(xk, self.n_rep)
        xv = repeat_kv(xv, self.n_rep)

        -- xq = xq.transpose(1, 2)
        xq = xq:transpose(2, 3)
        xk = xk:transpose(2, 3)
        xv = xv:transpose(2, 3)

        local output
        if self.flash then
            -- output = torch.nn.functional.scaled_dot_product_attention(xq, xk, xv, attn_mask=None, dropout_p=self.dropout if self.training else 0.0, is_causal=True)
            output = F.scaled_dot_product_attention(xq, xk, xv, { attn_mask = nil,
                dropout_p = self.training and self.dropout or 0.0, is_causal = true })
        else
            -- scores = torch.matmul(xq, xk.transpose(2, 3)) / math.sqrt(self.head_dim)
            local scores = tide.matmul(xq, xk:transpose(3, 4)) / math.sqrt(self.head_dim)
            assert(self.mask ~= nil)
            -- scores = scores + self.mask[:, :, :seqlen, :seqlen]
            scores = scores + self.mask[{ {}, {}, { 1, seqlen }, { 1, seqlen } }]
            -- scores = F.softmax(scores.float(), dim=-1).type_as(xq)
            scores = F.softmax(scores:float(), { dim = -1 }):type_as(xq)
            scores = self.attn_dropout(scores)
            output = tide.matmul(scores, xv)
        end

        -- output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        output = output:transpose(2, 3):contiguous():view(bsz, seqlen, -1)

        output = self.wo(output)
        output = self.resid_dropout(output)
        return output
    end

    local FeedForward = nn.Module:extend("FeedForward")
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

    local TransformerBlock = nn.Module:extend("TransformerBlock")
    function TransformerBlock:init(layer_id, args, use_flash)
        self.n_heads = args.n_heads
        self.dim = args.dim
        self.head_dim = math.floor(args.dim / args.n_heads)
        self.attention = Attention(args, use_flash)
        -- self.feed_forward = FeedForward(dim=args.dim, hidden_dim=args.hidden_dim, multiple_of=args.multiple_of, dropout=args.dropout)
        self.feed_forward = FeedForward(args.dim, args.hidden_dim, args.multiple_of, args.dropout)
        self.layer_id = layer_id
        -- self.attention_norm = RMSNorm(args.dim, eps=args.norm_eps)
        self.attention_norm = RMSNorm(args.dim, args.norm_eps)
        self.ffn_norm = RMSNorm(args.dim, args.norm_eps)
    end

    function TransformerBlock:forward(x, freqs_cos, freqs_sin)
        local h = x + self.attention:forward(self.attention_norm(x), freqs_cos, freqs_sin)
        local out = h + self.feed_forward:forward(self.ffn_norm(h))
        return out
    end

    local Transformer = nn.Module:extend("Transformer")
    function Transformer:init(params, use_flash)
        self.params = params
        self.vocab_size = params.vocab_size
        self.n_layers = params.n_layers

        self.tok_embeddings = nn.Embedding(params.vocab_size, params.dim)
        self.dropout = nn.Dropout(params.dropout)
        -- self.layers = torch.nn.ModuleList()
        self.layers = nn.ModuleList()
        -- for layer_id in range(params.n_layers):
        for layer_id = 0, params.n_layers - 1 do
            self.layers:append(TransformerBlock(layer_id, params, use_flash))
        end
        self.norm = RMSNorm(params.dim, params.norm_eps)
        self.output = nn.Linear(params.dim, params.vocab_size, { bias = false })

        -- share the unembedding parameters with the embedding parameters
        self.tok_embeddings.weight = self.output.weight

        -- freqs_cos, freqs_sin = precompute_freqs_cis(self.params.dim // self.params.n_heads, self.params.max_seq_len)
        local freqs_cos, freqs_sin = precompute_freqs_cis(math.floor(self.params.dim / self.params.n_heads),
            self.params.max_seq_len)
        -- self.register_buffer("freqs_cos", freqs_cos, persistent=False)
        self:register_buffer("freqs_cos", freqs_cos, { persistent = false })
        self:register_buffer("freqs_sin", freqs_sin, { persistent = false })

        -- self.apply(self._init_weights)
        self:apply(function(module) return self:_init_weights(module) end)
        -- apply special scaled init to the residual projections, per GPT-2 paper
        -- for pn, p in self.named_parameters():
        for pn, p in self:named_parameters() do
            -- if pn.endswith('w3.weight') or pn.endswith('wo.weight'):
            if pn:sub(-#"w3.weight") == "w3.weight" or pn:sub(-#"wo.weight") == "wo.weight" then
                -- torch.nn.init.normal_(p, mean=0.0, std=0.02/math.sqrt(2 * params.n_layers))
                nn.init.normal_(p, { mean = 0.0, std = 0.02 / math.sqrt(2 * params.n_layers) })
            end
        end

        self.last_loss = nil
    end

    function Transformer:_init_weights(module)
        if isinstance(module, nn.Linear) then
            nn.init.normal_(module.weight, { mean = 0.0, std = 0.02 })
            if module.bias ~= nil then
                nn.init.zeros_(module.bias)
            end
        elseif isinstance(module, nn.Embedding) then
            nn.init.normal_(module.weight, { mean = 0.0, std = 0.02 })
        end
    end

    function Transformer:forward(tokens, targets)
        -- _bsz, seqlen = tokens.shape
        local _, seqlen = unpack(tokens.shape)
        local h = self.tok_embeddings(tokens)
        h = self.dropout(h)
        -- freqs_cos = self.freqs_cos[:seqlen]
        local freqs_cos = self.freqs_cos[{ { 1, seqlen } }]
        local freqs_sin = self.freqs_sin[{ { 1, seqlen } }]

        for _, layer in ipairs(self.layers) do
            h = layer(h, freqs_cos, freqs_sin)
        end
        h = self.norm(h)

        local logits
        if targets ~= nil then
            logits = self.output(h)
            -- self.last_loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
            self.last_loss = F.cross_entropy(logits:view(-1, logits:size(-1)), targets:view(-1), { ignore_index = -1 })
        else
            -- logits = self.output(h[:, [-1], :]) # note: using list [-1] to preserve the time dim
            logits = self.output(h[{ {}, { -1 }, {} }])
            self.last_loss = nil
        end
        return logits
    end

    function Transformer:configure_optimizers(weight_decay, learning_rate, betas, device_type)
        -- param_dict = {pn: p for pn, p in self.named_parameters()}
        local param_dict = {}
        local order = {}
        for pn, p in self:named_parameters() do
            param_dict[pn] = p; order[#order + 1] = pn
        end
        -- param_dict = {pn: p for pn, p in param_dict.items() if p.requires_grad}
        local kept = {}
        for _, pn in ipairs(order) do
            if param_dict[pn].requires_grad then kept[#kept + 1] = pn end
        end
        -- decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
        local decay_params, nodecay_params = {}, {}
        for _, pn in ipairs(kept) do
            local p = param_dict[pn]
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
        local num_decay_params, num_nodecay_params = 0, 0
        for _, p in ipairs(decay_params) do num_decay_params = num_decay_params + p:numel() end
        for _, p in ipairs(nodecay_params) do num_nodecay_params = num_nodecay_params + p:numel() end
        self.num_decay_params, self.num_nodecay_params = num_decay_params, num_nodecay_params
        self.n_decay, self.n_nodecay = #decay_params, #nodecay_params
        -- use_fused = fused_available and device_type == 'cuda'
        local use_fused = device_type == "cuda"
        local extra_args = use_fused and { fused = true } or {}
        -- optimizer = torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas, **extra_args)
        local opts = { lr = learning_rate, betas = betas }
        for k, v in pairs(extra_args) do opts[k] = v end
        local optimizer = tide.optim.AdamW(optim_groups, opts)
        return optimizer
    end

    function Transformer:estimate_mfu(fwdbwd_per_iter, dt)
        -- N = sum(p.numel() for p in self.parameters())
        local N = 0
        for _, p in ipairs(self:parameters()) do N = N + p:numel() end
        local cfg = self.params
        -- L, H, Q, T = cfg.n_layers, cfg.n_heads, cfg.dim//cfg.n_heads, cfg.max_seq_len
        local L, H, Q, T = cfg.n_layers, cfg.n_heads, math.floor(cfg.dim / cfg.n_heads), cfg.max_seq_len
        local flops_per_token = 6 * N + 12 * L * H * Q * T
        local flops_per_fwdbwd = flops_per_token * T
        local flops_per_iter = flops_per_fwdbwd * fwdbwd_per_iter
        local flops_achieved = flops_per_iter * (1.0 / dt)
        local flops_promised = 312e12
        local mfu = flops_achieved / flops_promised
        return mfu
    end

    -- @torch.inference_mode()
    function Transformer:generate(idx, max_new_tokens, temperature, top_k)
        temperature = temperature or 1.0
        return tide.inference_mode(function()
            for _ = 1, max_new_tokens do
                -- idx_cond = idx if idx.size(1) <= self.params.max_seq_len else idx[:, -self.params.max_seq_len:]
                local idx_cond = idx:size(2) <= self.params.max_seq_len and idx
                    or idx[{ {}, { -self.params.max_seq_len, -1 } }]
                local logits = self(idx_cond)
                -- logits = logits[:, -1, :] # crop to just the final time step
                logits = logits[{ {}, -1, {} }]
                local idx_next
                if temperature == 0.0 then
                    -- _, idx_next = torch.topk(logits, k=1, dim=-1)
                    _, idx_next = tide.topk(logits, { k = 1, dim = -1 })
                else
                    logits = logits / temperature
                    if top_k ~= nil then
                        -- v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                        local v, _ = tide.topk(logits, math.min(top_k, logits:size(-1)))
                        -- logits[logits < v[:, [-1]]] = -float('Inf')
                        logits[logits:lt(v[{ {}, { -1 } }])] = -math.huge
                    end
                    local probs = F.softmax(logits, { dim = -1 })
                    idx_next = tide.multinomial(probs, { num_samples = 1 })
                end
                -- idx = torch.cat((idx, idx_next), dim=1)
                idx = tide.cat({ idx, idx_next }, { dim = 2 })
            end
            return idx
        end)
    end

    it("precompute_freqs_cis, apply_rotary_emb, RMSNorm, repeat_kv match PyTorch 1.13", function()
        -- freqs_cos, freqs_sin = precompute_freqs_cis(4, 5)
        local fc, fs = precompute_freqs_cis(4, 5)
        assert.are.same({ 5, 2 }, fc:size())
        assert_close_list({ 1.0, 1.0, 0.540302, 0.99995, -0.416147, 0.9998, -0.989992, 0.99955, -0.653644, 0.9992 },
            flat(fc), 1e-5, "freqs_cos")
        assert_close_list({ 0.0, 0.0, 0.841471, 0.01, 0.909297, 0.019999, 0.14112, 0.029995, -0.756802, 0.039989 },
            flat(fs), 1e-5, "freqs_sin")
        -- xq = torch.sin(torch.arange(24).float()).view(1,3,2,4)
        local xq = tide.sin(tide.arange(24):float()):view(1, 3, 2, 4)
        -- xk = torch.cos(torch.arange(24).float()*0.5).view(1,3,2,4)
        local xk = tide.cos(tide.arange(24):float() * 0.5):view(1, 3, 2, 4)
        -- oq, ok = apply_rotary_emb(xq, xk, fc[:3], fs[:3])
        local oq, ok = apply_rotary_emb(xq, xk, fc[{ { 1, 3 } }], fs[{ { 1, 3 } }])
        assert_close_list({ 0.0, 0.841471, 0.909297, 0.14112, -0.756802, -0.958924, -0.279415, 0.656987,
            0.187767, 1.055185, -0.533994, -1.00538, -0.64347, -0.224493, 0.984055, 0.660161, 0.994006,
            0.138293, -0.753834, 0.134828, -1.140688, 0.481967, 0.008074, -0.846228 }, flat(oq), 1e-5, "xq_out")
        assert_close_list({ 1.0, 0.877583, 0.540302, 0.070737, -0.416147, -0.801144, -0.989992, -0.936457,
            -0.175787, -0.663916, 0.276561, 0.711471, -0.302988, 1.335608, 0.750398, 0.354157, 0.607957,
            0.118223, -0.891006, -1.015194, 0.781582, -0.565072, -0.005241, 0.483297 }, flat(ok), 1e-5, "xk_out")
        -- RMSNorm(4, 1e-5) of torch.sin(torch.arange(12).float()).view(1,3,4)
        local n = RMSNorm(4, 1e-5)
        assert_close_list({ 0.0, 1.349661, 1.45845, 0.226347, -1.069738, -1.355436, -0.394953, 0.928648,
            1.265538, 0.527161, -0.695885, -1.279138 }, flat(n(tide.sin(tide.arange(12):float()):view(1, 3, 4))),
            1e-5, "RMSNorm")
        -- repeat_kv(torch.arange(8).float().view(1,2,2,2), 2)
        local r = repeat_kv(tide.arange(8):float():view(1, 2, 2, 2), 2)
        assert.are.same({ 1, 2, 4, 2 }, r:size())
        assert.are.same({ 0, 1, 0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7 }, flat(r))
        -- repeat_kv is torch.repeat_interleave(x, dim=2, repeats=n_rep)
        local x = tide.randn(1, 2, 2, 2)
        assert.is_true(tide.equal(repeat_kv(x, 3), tide.repeat_interleave(x, { dim = 3, repeats = 3 })))
    end)

    it("register_buffer(name, t, persistent=False): out of state_dict, still moved by .to()", function()
        local M = nn.Module:extend("M")
        function M:init()
            self:register_buffer("kept", tide.ones(2))
            self:register_buffer("freqs_cos", tide.ones(2), { persistent = false })
            -- the positional form: register_buffer(name, tensor, False)
            self:register_buffer("freqs_sin", tide.ones(2), false)
        end
        local m = M()
        local keys = {}
        for k in m:state_dict() do keys[#keys + 1] = k end
        assert.are.same({ "kept" }, keys)
        assert.are.equal(3, #m:buffers())
        m:to(tide.float64)
        assert.are.equal(tide.float64, m.freqs_cos.dtype)
        -- load_state_dict(strict) does not expect them
        m:load_state_dict({ kept = tide.zeros(2) })
        assert.are.equal(0, m.kept:sum():item())
        -- registering it again as persistent brings it back
        m:register_buffer("freqs_sin", m.freqs_sin, true)
        assert.is_not_nil(m:state_dict()["freqs_sin"])
        -- bad input names the value and the fix, and registers nothing
        local ok, err = pcall(m.register_buffer, m, "other", tide.ones(1), 0)
        assert.is_false(ok)
        assert.matches("persistent must be true or false, got 0", err, 1, true)
        assert.is_nil(m.other)
        ok, err = pcall(m.register_buffer, m, "other", tide.ones(1), { persistant = false })
        assert.is_false(ok)
        assert.matches("unknown option 'persistant'", err, 1, true)
        assert.is_nil(m.other)
    end)

    local function build(use_flash)
        tide.manual_seed(42)
        local args = ModelArgs({ dim = 16, n_layers = 2, n_heads = 4, n_kv_heads = 2, vocab_size = 11,
            multiple_of = 8, max_seq_len = 8, dropout = 0.0 })
        return Transformer(args, use_flash), args
    end

    for _, use_flash in ipairs({ false, true }) do
        it("Transformer (" .. (use_flash and "flash: F.scaled_dot_product_attention" or "manual mask buffer") ..
            "): weight tying, scaled init, configure_optimizers, train, estimate_mfu, generate", function()
            local model, args = build(use_flash)
            -- weight tying: one tensor
            assert.is_true(rawequal(model.tok_embeddings.weight, model.output.weight))
            -- FeedForward: hidden_dim = multiple_of * ceil(int(2*4*dim/3) / multiple_of) = 8 * ceil(42/8) = 48
            assert.are.same({ 48, 16 }, model.layers[1].feed_forward.w1.weight:size())
            -- the scaled init: w3/wo std 0.02/sqrt(2*n_layers) = 0.01
            local wo_std = model.layers[1].attention.wo.weight:std():item()
            assert.is_true(wo_std < 0.015 and wo_std > 0.006, "wo std " .. wo_std)
            -- freqs buffers are not persistent; the mask buffer is
            local sd = model:state_dict()
            assert.is_nil(sd["freqs_cos"])
            assert.is_nil(sd["freqs_sin"])
            assert.are.equal(not use_flash, sd["layers.1.attention.mask"] ~= nil)
            -- optimizer = model.configure_optimizers(weight_decay, learning_rate, (beta1, beta2), device_type)
            local optimizer = model:configure_optimizers(1e-1, 1e-2, { 0.9, 0.95 }, "cpu")
            -- decayed: tied embedding once + 7 Linear weights per layer; not: 2 RMSNorms per layer + final
            assert.are.equal(1 + 7 * 2, model.n_decay)
            assert.are.equal(2 * 2 + 1, model.n_nodecay)
            assert.are.equal(5 * 16, model.num_nodecay_params)
            assert.are.equal(0.0, optimizer.param_groups[2].weight_decay)
            -- a fixed batch: targets with ignore_index=-1 at the tail
            local X = tide.randint(1, args.vocab_size + 1, { 4, 8 })
            local Y = tide.roll(X, -1, 2)
            Y[{ {}, -1 }] = -1
            local losses = {}
            for _ = 1, 8 do
                local _ = model(X, Y)
                local loss = model.last_loss
                assert_finite(loss:item(), "loss")
                losses[#losses + 1] = loss:item()
                -- optimizer.zero_grad(set_to_none=True); loss.backward(); optimizer.step()
                optimizer:zero_grad({ set_to_none = true })
                loss:backward()
                optimizer:step()
            end
            assert.is_true(losses[#losses] < losses[1], losses[#losses] .. " >= " .. losses[1])
            -- the tied weight got both gradients, and is one parameter
            assert.are.equal(#model:parameters(), 1 + 7 * 2 + 2 * 2 + 1)
            -- inference: only the last position
            model:eval()
            local logits = model(X)
            assert.is_nil(model.last_loss)
            assert.are.same({ 4, 1, args.vocab_size }, logits:size())
            -- mfu = model.estimate_mfu(batch_size * gradient_accumulation_steps, dt)
            local mfu = model:estimate_mfu(4, 0.5)
            local N = 0
            for _, p in ipairs(model:parameters()) do N = N + p:numel() end
            assert.are.equal((6 * N + 12 * 2 * 4 * 4 * 8) * 8 * 4 * 2 / 312e12, mfu)
            -- generate: past max_seq_len the context is cropped; top_k; greedy with temperature 0
            local start = tide.ones(2, 1, { dtype = tide.long })
            local y = model:generate(start, 10, 0.8, 3)
            assert.are.same({ 2, 11 }, y:size())
            assert.is_true(y:min():item() >= 1 and y:max():item() <= args.vocab_size)
            local g1 = model:generate(start, 4, 0.0)
            local g2 = model:generate(start, 4, 0.0)
            assert.is_true(tide.equal(g1, g2))
        end)
    end

    it("the flash path and the manual mask path agree", function()
        local manual = build(false)
        local flash = build(true)
        -- same seeds, same weights (the mask buffer draws nothing)
        local X = tide.randint(1, 12, { 2, 6 })
        local Y = tide.randint(1, 12, { 2, 6 })
        manual(X, Y)
        flash(X, Y)
        assert.is_true(math.abs(manual.last_loss:item() - flash.last_loss:item()) < 1e-5)
    end)
end)
