-- ported_scripts83_spec.lua — Andras7/word2vec-pytorch: word2vec/model.py (SkipGramModel with
-- sparse u_embeddings / v_embeddings, forward, save_embedding), word2vec/data_reader.py
-- (DataReader's read_words, initTableNegatives, initTableDiscards, getNegatives;
-- Word2vecDataset's __getitem__ with subsampling, and collate) and word2vec/trainer.py's train
-- loop (SparseAdam, CosineAnnealingLR stepped per batch, running_loss), ported line for line at
-- tiny sizes (vocab 12, emb_dimension 4, a six-sentence corpus written to a temporary file).
-- The Python line stands above each Lua line that differs from it. Word ids are 1-based.
-- numpy's draws (np.random.rand, np.random.randint, np.random.shuffle) go through `np_random`:
-- tide's generator in the training test, the draws of the PyTorch run pasted in the value check.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local init = nn.init
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

local CORPUS = {
    "the quick brown fox jumps over the lazy dog",
    "the dog jumps and the fox run",
    "a quick cat jumps over a lazy fox",
    "the cat and the dog run",
    "a brown dog jumps over the cat",
    "the fox and a cat run quick",
}

-- numpy's random functions on tide's generator
local tide_random = {
    rand = function() return tide.rand({ 1 }):item() end,
    -- np.random.randint(low, high): low..high-1
    randint = function(low, high) return tide.randint(low, high, { 1 }):item() end,
    shuffle = function(list)
        local perm, copy = tide.randperm(#list), { unpack(list) }
        for i = 1, #list do list[i] = copy[perm[i]:item()] end
    end,
}

---------------------------------------------------------------------------------------------
-- word2vec/data_reader.py
---------------------------------------------------------------------------------------------
-- class DataReader:
local DataReader = ported.class("DataReader")
-- NEGATIVE_TABLE_SIZE = 1e8 (60 at this vocabulary)
DataReader.NEGATIVE_TABLE_SIZE = 60

-- def __init__(self, inputFileName, min_count):
function DataReader:__init__(inputFileName, min_count, np_random)
    self.np_random = np_random
    self.negatives = {}
    self.discards = {}
    -- self.negpos = 0 (an index into the table: 1-based)
    self.negpos = 1

    self.word2id = {}
    self.id2word = {}
    self.sentences_count = 0
    self.token_count = 0
    self.word_frequency = {}

    self.inputFileName = inputFileName
    self:read_words(min_count)
    self:initTableNegatives()
    self:initTableDiscards()
end

-- def read_words(self, min_count):
function DataReader:read_words(min_count)
    -- word_frequency = dict() (with the order of first sight, as a Python dict's)
    local word_frequency, order = {}, {}
    -- for line in open(self.inputFileName, encoding="utf8"):
    for line in io.lines(self.inputFileName) do
        -- line = line.split()
        local words = {}
        for w in line:gmatch("%S+") do words[#words + 1] = w end
        -- if len(line) > 1:
        if #words > 1 then
            self.sentences_count = self.sentences_count + 1
            -- for word in line:
            for _, word in ipairs(words) do
                if #word > 0 then
                    self.token_count = self.token_count + 1
                    -- word_frequency[word] = word_frequency.get(word, 0) + 1
                    if not word_frequency[word] then order[#order + 1] = word end
                    word_frequency[word] = (word_frequency[word] or 0) + 1
                end
            end
        end
    end

    -- wid = 0
    local wid = 1
    -- for w, c in word_frequency.items():
    for _, w in ipairs(order) do
        local c = word_frequency[w]
        if c >= min_count then
            self.word2id[w] = wid
            self.id2word[wid] = w
            self.word_frequency[wid] = c
            wid = wid + 1
        end
    end
end

-- def initTableDiscards(self):
function DataReader:initTableDiscards()
    -- t = 0.0001 (0.05 at this corpus of 44 tokens: 1e-4 would discard nearly every word)
    local t = 0.05
    -- f = np.array(list(self.word_frequency.values())) / self.token_count
    local f = tide.tensor(self.word_frequency, { dtype = tide.float64 }) / self.token_count
    -- self.discards = np.sqrt(t / f) + (t / f)
    self.discards = ((t / f):sqrt() + (t / f)):tolist()
end

-- def initTableNegatives(self):
function DataReader:initTableNegatives()
    -- pow_frequency = np.array(list(self.word_frequency.values())) ** 0.5
    local pow_frequency = tide.tensor(self.word_frequency, { dtype = tide.float64 }) ^ 0.5
    -- words_pow = sum(pow_frequency)
    local words_pow = pow_frequency:sum()
    local ratio = pow_frequency / words_pow
    -- count = np.round(ratio * DataReader.NEGATIVE_TABLE_SIZE)
    local count = tide.round(ratio * DataReader.NEGATIVE_TABLE_SIZE):tolist()
    -- for wid, c in enumerate(count):
    for wid, c in ipairs(count) do
        -- self.negatives += [wid] * int(c)
        for _ = 1, math.floor(c) do self.negatives[#self.negatives + 1] = wid end
    end
    -- np.random.shuffle(self.negatives) (a Lua list, shuffled in place)
    self.np_random.shuffle(self.negatives)
end

-- def getNegatives(self, target, size):  # TODO check equality with target
function DataReader:getNegatives(_, size)
    -- response = self.negatives[self.negpos:self.negpos + size]
    local response = {}
    for i = self.negpos, math.min(self.negpos + size - 1, #self.negatives) do
        response[#response + 1] = self.negatives[i]
    end
    -- self.negpos = (self.negpos + size) % len(self.negatives)
    self.negpos = (self.negpos - 1 + size) % #self.negatives + 1
    if #response ~= size then
        -- return np.concatenate((response, self.negatives[0:self.negpos]))
        for i = 1, self.negpos - 1 do response[#response + 1] = self.negatives[i] end
    end
    return response
end

-- class Word2vecDataset(Dataset):
local Word2vecDataset = tide.data.Dataset:extend("Word2vecDataset")
-- def __init__(self, data, window_size):
function Word2vecDataset:init(data, window_size)
    self.data = data
    self.window_size = window_size
    -- self.input_file = open(data.inputFileName, encoding="utf8")
    self.input_file = assert(io.open(data.inputFileName, "r"))
end

-- def __len__(self):
function Word2vecDataset:__len__()
    return self.data.sentences_count
end

-- def __getitem__(self, idx):
function Word2vecDataset:__getitem__(_)
    local np_random = self.data.np_random
    while true do
        -- line = self.input_file.readline()
        local line = self.input_file:read("*l")
        -- if not line:
        if not line then
            -- self.input_file.seek(0, 0)
            self.input_file:seek("set", 0)
            line = self.input_file:read("*l")
        end

        if #line > 1 then
            local words = {}
            for w in line:gmatch("%S+") do words[#words + 1] = w end

            if #words > 1 then
                -- word_ids = [self.data.word2id[w] for w in words if
                --     w in self.data.word2id and np.random.rand() < self.data.discards[...]]
                local word_ids = {}
                for _, w in ipairs(words) do
                    local id = self.data.word2id[w]
                    if id and np_random.rand() < self.data.discards[id] then
                        word_ids[#word_ids + 1] = id
                    end
                end

                -- boundary = np.random.randint(1, self.window_size)
                local boundary = np_random.randint(1, self.window_size)
                -- return [(u, v, self.data.getNegatives(v, 5)) for i, u in enumerate(word_ids)
                --         for j, v in enumerate(word_ids[max(i - boundary, 0):i + boundary])
                --         if u != v]
                local pairs = {}
                for i, u in ipairs(word_ids) do
                    for j = math.max(i - boundary, 1), math.min(i + boundary - 1, #word_ids) do
                        local v = word_ids[j]
                        if u ~= v then
                            pairs[#pairs + 1] = { u, v, self.data:getNegatives(v, 5) }
                        end
                    end
                end
                return pairs
            end
        end
    end
end

-- @staticmethod def collate(batches):
function Word2vecDataset.collate(batches)
    -- all_u = [u for batch in batches for u, _, _ in batch if len(batch) > 0] (and v, neg_v)
    local all_u, all_v, all_neg_v = {}, {}, {}
    for _, batch in ipairs(batches) do
        for _, s in ipairs(batch) do
            all_u[#all_u + 1], all_v[#all_v + 1], all_neg_v[#all_neg_v + 1] = s[1], s[2], s[3]
        end
    end

    -- return torch.LongTensor(all_u), torch.LongTensor(all_v), torch.LongTensor(all_neg_v)
    return tide.LongTensor(all_u), tide.LongTensor(all_v), tide.LongTensor(all_neg_v)
end

---------------------------------------------------------------------------------------------
-- word2vec/model.py
---------------------------------------------------------------------------------------------
-- class SkipGramModel(nn.Module):
local SkipGramModel = nn.Module:extend("SkipGramModel")
-- def __init__(self, emb_size, emb_dimension):
function SkipGramModel:init(emb_size, emb_dimension)
    self.emb_size = emb_size
    self.emb_dimension = emb_dimension
    -- self.u_embeddings = nn.Embedding(emb_size, emb_dimension, sparse=True)
    self.u_embeddings = nn.Embedding(emb_size, emb_dimension, { sparse = true })
    self.v_embeddings = nn.Embedding(emb_size, emb_dimension, { sparse = true })

    local initrange = 1.0 / self.emb_dimension
    -- init.uniform_(self.u_embeddings.weight.data, -initrange, initrange)
    init.uniform_(self.u_embeddings.weight.data, -initrange, initrange)
    -- init.constant_(self.v_embeddings.weight.data, 0)
    init.constant_(self.v_embeddings.weight.data, 0)
end

-- def forward(self, pos_u, pos_v, neg_v):
function SkipGramModel:forward(pos_u, pos_v, neg_v)
    local emb_u = self.u_embeddings(pos_u)
    local emb_v = self.v_embeddings(pos_v)
    local emb_neg_v = self.v_embeddings(neg_v)

    -- score = torch.sum(torch.mul(emb_u, emb_v), dim=1)
    local score = tide.sum(tide.mul(emb_u, emb_v), { dim = 2 })
    -- score = torch.clamp(score, max=10, min=-10)
    score = tide.clamp(score, { max = 10, min = -10 })
    -- score = -F.logsigmoid(score)
    score = -F.logsigmoid(score)

    -- neg_score = torch.bmm(emb_neg_v, emb_u.unsqueeze(2)).squeeze()
    local neg_score = tide.bmm(emb_neg_v, emb_u:unsqueeze(3)):squeeze()
    neg_score = tide.clamp(neg_score, { max = 10, min = -10 })
    -- neg_score = -torch.sum(F.logsigmoid(-neg_score), dim=1)
    neg_score = -tide.sum(F.logsigmoid(-neg_score), { dim = 2 })

    -- return torch.mean(score + neg_score)
    return tide.mean(score + neg_score)
end

-- def save_embedding(self, id2word, file_name):
function SkipGramModel:save_embedding(id2word, file_name)
    -- embedding = self.u_embeddings.weight.cpu().data.numpy()
    local embedding = self.u_embeddings.weight:cpu().data:tolist()
    -- with open(file_name, 'w') as f:
    local f = assert(io.open(file_name, "w"))
    -- f.write('%d %d\n' % (len(id2word), self.emb_dimension))
    f:write(string.format("%d %d\n", #id2word, self.emb_dimension))
    -- for wid, w in id2word.items():
    for wid, w in ipairs(id2word) do
        -- e = ' '.join(map(lambda x: str(x), embedding[wid])) (%.9g: float32's digits)
        local e = {}
        for k, x in ipairs(embedding[wid]) do e[k] = string.format("%.9g", x) end
        f:write(string.format("%s %s\n", w, table.concat(e, " ")))
    end
    f:close()
end

---------------------------------------------------------------------------------------------
-- word2vec/trainer.py
---------------------------------------------------------------------------------------------
-- class Word2VecTrainer:
local Word2VecTrainer = ported.class("Word2VecTrainer")
-- def __init__(self, input_file, output_file, emb_dimension=100, batch_size=32, window_size=5,
--              iterations=3, initial_lr=0.001, min_count=12):
function Word2VecTrainer:__init__(input_file, output_file, o)
    -- self.data = DataReader(input_file, min_count)
    self.data = DataReader(input_file, o.min_count, o.np_random)
    local dataset = Word2vecDataset(self.data, o.window_size)
    -- self.dataloader = DataLoader(dataset, batch_size=batch_size,
    --                              shuffle=False, num_workers=0, collate_fn=dataset.collate)
    self.dataloader = tide.data.DataLoader(dataset, { batch_size = o.batch_size,
        shuffle = false, num_workers = 0, collate_fn = dataset.collate })

    self.output_file_name = output_file
    -- self.emb_size = len(self.data.word2id)
    self.emb_size = #self.data.id2word
    self.emb_dimension = o.emb_dimension
    self.batch_size = o.batch_size
    self.iterations = o.iterations
    self.initial_lr = o.initial_lr
    self.skip_gram_model = SkipGramModel(self.emb_size, self.emb_dimension)
    if o.u_weight then -- the value check: PyTorch's initial u_embeddings
        self.skip_gram_model.u_embeddings.weight.data:copy_(o.u_weight)
    end
    self.losses, self.lrs, self.running_losses = {}, {}, {}
end

-- def train(self):
function Word2VecTrainer:train()
    -- for iteration in range(self.iterations):
    for _ = 1, self.iterations do
        -- optimizer = optim.SparseAdam(self.skip_gram_model.parameters(), lr=self.initial_lr)
        local optimizer = optim.SparseAdam(self.skip_gram_model:parameters(),
            { lr = self.initial_lr })
        -- scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, len(self.dataloader))
        -- (loader:len(), the #loader of 5.4, which 5.1 and LuaJIT read raw on a table)
        local scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, self.dataloader:len())

        local running_loss = 0.0
        -- for i, sample_batched in enumerate(tqdm(self.dataloader)):
        for _, pos_u, pos_v, neg_v in self.dataloader:enumerate(0) do
            -- if len(sample_batched[0]) > 1:
            if #pos_u > 1 then
                scheduler:step()
                optimizer:zero_grad()
                local loss = self.skip_gram_model:forward(pos_u, pos_v, neg_v)
                loss:backward()
                optimizer:step()

                -- running_loss = running_loss * 0.9 + loss.item() * 0.1
                running_loss = running_loss * 0.9 + loss:item() * 0.1
                self.losses[#self.losses + 1] = loss:item()
                self.lrs[#self.lrs + 1] = optimizer.param_groups[1].lr
            end
        end
        self.running_losses[#self.running_losses + 1] = running_loss

        self.skip_gram_model:save_embedding(self.data.id2word, self.output_file_name)
    end
end

-- writes the corpus to a temporary file: DataReader and Word2vecDataset read it as input.txt
local function corpus_file()
    local name = os.tmpname()
    local f = assert(io.open(name, "w"))
    f:write(table.concat(CORPUS, "\n") .. "\n")
    f:close()
    return name
end

-- the first pairs of the corpus with fixed negatives, for a loss before and after training
local function fixed_batch(data)
    local batch = {}
    local uv = { { 1, 2 }, { 2, 3 }, { 3, 4 }, { 4, 5 }, { 5, 6 }, { 6, 1 }, { 8, 9 }, { 9, 10 },
        { 10, 11 }, { 11, 12 }, { 12, 1 } }
    for k, p in ipairs(uv) do
        local neg, start = {}, ((k - 1) * 5) % 55
        for n = 1, 5 do neg[n] = data.negatives[start + n] end
        batch[k] = { p[1], p[2], neg }
    end
    return Word2vecDataset.collate({ batch })
end

describe("Andras7/word2vec-pytorch word2vec", function()
    it("matches PyTorch 1.13: draws, losses, SparseAdam steps, cosine lrs, saved file", function()
        -- np.random's draws of the PyTorch run (np.random.seed(12345)), in their order
        local RAND = { 0.8183500114, 0.5002227528, 0.8101894088, 0.0959685257, 0.2189500437,
            0.2587190616, 0.468105754, 0.4593732026, 0.7095097802, 0.9132591228, 0.0246128229,
            0.8373783214, 0.3832052419, 0.2987710283, 0.0062970903, 0.4375574253, 0.3773449538,
            0.848601412, 0.9110972286, 0.3838487212, 0.3154959034, 0.5683941528, 0.187818035,
            0.1258415438, 0.7354026571, 0.9764371185, 0.7058857603, 0.9517646777, 0.9278475336,
            0.4100309349, 0.3516165299, 0.7142303685, 0.5039291164, 0.2256376065, 0.2449744402,
            0.7928007, 0.4951724145, 0.7508920427, 0.6578983332, 0.3606972862, 0.3783229792,
            0.6496319202, 0.0556368269, 0.0782592835, 0.3535656467, 0.6508517866, 0.3129328953,
            0.7687354472, 0.7818371034, 0.8524094829, 0.9499057402, 0.1073229122, 0.910725356,
            0.3145660447, 0.3507318713, 0.7611428577, 0.098851183, 0.9314603231, 0.3260790752,
            0.4266356534, 0.1429450198, 0.5158265192, 0.6893413297, 0.8566258108, 0.6473616833,
            0.5816186755, 0.7111159551, 0.252416857, 0.5542347166, 0.5706111567, 0.4621102807,
            0.9488288213, 0.3447739297, 0.8844490773, 0.4895403906, 0.9264901713, 0.5158797722,
            0.0721598817, 0.5675082982, 0.6152431837, 0.9415462945, 0.7651110982, 0.5798991553,
            0.3781231007, 0.6223932912, 0.7391726973, 0.9133829154, 0.5321036035 }
        local RINT = { 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1 }
        -- np.random.shuffle's permutation of the negatives table, 1-based
        local PERM = { 52, 46, 36, 40, 27, 44, 26, 43, 22, 7, 31, 29, 21, 47, 13, 41, 23, 9, 3,
            54, 25, 49, 20, 51, 45, 33, 57, 6, 4, 16, 1, 5, 55, 48, 34, 32, 53, 24, 8, 39, 19,
            18, 11, 14, 12, 10, 17, 28, 56, 15, 50, 58, 59, 61, 60, 42, 37, 2, 30, 38, 35 }
        local nr, ni = 0, 0
        local pasted = {
            rand = function() nr = nr + 1; return RAND[nr] end,
            randint = function(low, high)
                ni = ni + 1
                assert(low == 1 and high == 3 and RINT[ni])
                return RINT[ni]
            end,
            shuffle = function(list)
                -- the table np.random.shuffle got: 8, 5, 4, 5, 5, 5, 4, 5, ... of each id
                local counts = {}
                for _, w in ipairs(list) do counts[w] = (counts[w] or 0) + 1 end
                assert.same({ 8, 5, 4, 5, 5, 5, 4, 5, 5, 5, 5, 5 }, counts)
                local copy = {}
                for i, w in ipairs(list) do copy[i] = w end
                for i, p in ipairs(PERM) do list[i] = copy[p] end
            end,
        }
        -- the PyTorch run's initial u_embeddings (torch.manual_seed(0), uniform_(-1/4, 1/4))
        local U0 = tide.tensor({ 0.1248287558555603, 0.05232533812522888, -0.19502100348472595,
            -0.14395487308502197, 0.2351873219013214, 0.16845446825027466, -0.10900628566741943,
            -0.0629211962223053, -0.2381495237350464, -0.004493534564971924,
            -0.18826472759246826, -0.19283917546272278, -0.013774901628494263,
            0.03753626346588135, -0.10238257050514221, 0.14834439754486084, -0.15213477611541748,
            0.22684252262115479, 0.1713249683380127, -0.210820734500885, -0.06222108006477356,
            0.011280655860900879, 0.03647527098655701, 0.05929356813430786, 0.09810706973075867,
            0.014975041151046753, -0.12198218703269958, 0.11829724907875061,
            -0.2398122251033783, -0.1481766700744629, -0.06258246302604675,
            -0.12177833914756775, -0.08745834231376648, -0.2049054205417633,
            -0.05317878723144531, 0.05343911051750183, -0.16286644339561462,
            -0.012829840183258057, 0.17896270751953125, -0.02570006251335144,
            0.00694805383682251, -0.021567225456237793, 0.05059534311294556, 0.15895986557006836,
            0.2368115484714508, 0.15876397490501404, 0.2373533844947815, -0.018080413341522217 })
        local input, output = corpus_file(), os.tmpname()
        -- w2v = Word2VecTrainer(input_file="input.txt", output_file="out.vec") at tiny sizes
        local w2v = Word2VecTrainer(input, output, { emb_dimension = 4, batch_size = 2,
            window_size = 3, iterations = 2, initial_lr = 0.1, min_count = 1,
            np_random = pasted, u_weight = U0:view(12, 4) })
        local data = w2v.data
        assert.are.equal(12, w2v.emb_size)
        assert.are.equal(44, data.token_count)
        assert.are.equal(6, data.sentences_count)
        assert.are.equal(3, w2v.dataloader:len())
        assert_close_list({ 0.799404, 1.589682, 2.148809, 1.29162, 1.29162, 1.589682, 2.148809,
            1.29162, 1.589682, 1.589682, 1.29162, 1.29162 }, data.discards, 1e-6, "discards")
        assert.same({ 11, 9, 7, 8, 5, 9, 5, 9, 4, 1, 6, 6, 4, 10, 2, 8, 5, 2, 1, 11 },
            { unpack(data.negatives, 1, 20) })
        local m = w2v.skip_gram_model
        assert.is_true(m.u_embeddings.sparse)
        -- v_embeddings start at 0: every pair's loss is 6 log 2
        local fixed_u, fixed_v, fixed_neg = fixed_batch(data)
        local before = m:forward(fixed_u, fixed_v, fixed_neg):item()
        assert.is_true(ported.close(before, 6 * math.log(2), 1e-6))

        w2v:train()

        assert.are.equal(88, nr)
        assert.are.equal(12, ni)
        assert_close_list({ 4.1588826179504395, 4.1610870361328125, 4.14402437210083,
            4.142116069793701, 4.127624988555908, 4.102009296417236 }, w2v.losses, 1e-5, "loss")
        -- scheduler.step() before optimizer.step(), as the script: the first step's lr is epoch 1's
        assert_close_list({ 0.075, 0.025, 0, 0.075, 0.025, 0 }, w2v.lrs, 1e-9, "lr")
        -- SparseAdam on tide's dense gradients: PyTorch's on its sparse ones (every looked-up
        -- row after the first step has a nonzero gradient; u's all-zero first gradients leave
        -- zero moments either way)
        local U = { 0.106226549, 0.0709275454, -0.213621914, -0.162557065, 0.117585376,
            0.249232695, -0.227206677, -0.144055888, -0.313145131, 0.0705037341, -0.263263047,
            -0.11784289, -0.132386774, 0.150604323, -0.218641415, 0.0332136378, -0.112931952,
            0.345466822, 0.0527221188, -0.324149281, -0.180754796, 0.126746804, 0.0754936412,
            -0.0590440743, -0.0198591594, 0.133560598, -0.0413164198, 0.00706374645,
            -0.351561397, -0.0296702962, 0.00902412273, -0.080950588, -0.202428952,
            -0.251681358, -0.134367198, -0.0587277561, -0.278886378, 0.10301891, 0.217088461,
            -0.144316569, -0.0302581582, 0.0156387743, 0.0133916456, 0.121755853, 0.199605301,
            0.158765003, 0.200146943, -0.0552865788 }
        local V = { 0.191266641, -0.194759041, 0.151744843, 0.192903653, 0.195445329,
            -0.174762875, -0.161204785, -0.0165081881, 0.196066052, 0.000592602417,
            0.00869628973, 0.0212608241, 0.00696704071, -0.19467175, 0.163605347,
            -0.00218637288, 0.00133848935, -0.199106574, 0.0151536372, 0.199405596, 0.179870531,
            -0.198468551, 0.137320042, 0.181266561, -0.000400666147, -0.185356393,
            -0.0191214178, 0.0292418487, 0.15424414, 0.16297245, 0.0123582426, 0.158288226,
            0.153133184, 0.15919891, 0.15561676, 0.00254886411, 0.141287461, -0.197899252,
            0.171149626, 0.170743063, 0.195457146, -0.185490802, 0.167650551, 0.187525049,
            0.161060318, -0.00803534873, -0.0158543698, -0.0127809681 }
        assert_close_list(U, m.u_embeddings.weight:flatten():tolist(), 1e-5, "u_embeddings")
        assert_close_list(V, m.v_embeddings.weight:flatten():tolist(), 1e-5, "v_embeddings")
        -- PyTorch's model after training: 4.081099033355713 on the fixed batch
        local after = m:forward(fixed_u, fixed_v, fixed_neg):item()
        assert.is_true(ported.close(after, 4.081099033355713, 1e-5), tostring(after))

        -- the saved file: "12 4", then each word and PyTorch's u_embeddings row
        local lines = {}
        for line in io.lines(output) do lines[#lines + 1] = line end
        os.remove(input)
        os.remove(output)
        assert.are.equal(13, #lines)
        assert.are.equal("12 4", lines[1])
        local words = { "the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "and",
            "run", "a", "cat" }
        for wid, w in ipairs(words) do
            local fields = {}
            for x in lines[wid + 1]:gmatch("%S+") do fields[#fields + 1] = x end
            assert.are.equal(w, fields[1])
            assert.are.equal(5, #fields)
            for k = 1, 4 do
                assert.is_true(ported.close(tonumber(fields[k + 1]), U[(wid - 1) * 4 + k], 1e-5),
                    lines[wid + 1])
            end
        end
    end)

    it("trains on tide's draws: losses finite, the fixed batch's loss falls", function()
        tide.manual_seed(83)
        local input, output = corpus_file(), os.tmpname()
        local w2v = Word2VecTrainer(input, output, { emb_dimension = 4, batch_size = 2,
            window_size = 3, iterations = 2, initial_lr = 0.1, min_count = 1,
            np_random = tide_random })
        local m = w2v.skip_gram_model
        local u, v, neg = fixed_batch(w2v.data)
        assert.same({ 11, 5 }, { neg:size(1), neg:size(2) })
        local before = m:forward(u, v, neg):item()
        w2v:train()
        os.remove(input)
        os.remove(output)
        assert.is_true(#w2v.losses >= 4)
        for _, l in ipairs(w2v.losses) do assert_finite(l, "loss") end
        for _, l in ipairs(w2v.running_losses) do assert_finite(l, "running_loss") end
        local after = m:forward(u, v, neg):item()
        assert.is_true(after < before - 0.01, before .. " -> " .. after)
        -- the epoch's last batch runs at lr 0, as PyTorch's CosineAnnealingLR(opt, 3)
        assert.are.equal(0, w2v.lrs[#w2v.lrs])
    end)
end)
