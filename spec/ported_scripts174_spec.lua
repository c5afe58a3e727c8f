-- ported_scripts174_spec.lua — bentrevett/pytorch-sentiment-analysis: "1 - Neural Bag of
-- Words.ipynb" (NBoW) and legacy/ "1 - Simple Sentiment Analysis.ipynb" (RNN, binary_accuracy,
-- train, evaluate), "2 - Upgraded Sentiment Analysis.ipynb" (bidirectional 2-layer LSTM over
-- pack_padded_sequence / pad_packed_sequence, pretrained embedding with unk / pad rows zeroed),
-- "3 - Faster Sentiment Analysis.ipynb" (generate_bigrams, FastText) and "4 - Convolutional
-- Sentiment Analysis.ipynb" (CNN over Conv2d, CNN1d), ported line for line at tiny sizes (vocab
-- 20, embedding 6, hidden 5, batch 3, lengths {5, 3, 2}). The Python line stands above each Lua
-- line that differs from it. Ids are 1-based: torchtext's unk 0 / pad 1 are tide's 1 / 2.
-- Reference values: PyTorch 1.13 on the same weights (each parameter in named_parameters order
-- is sin(arange(numel) * 2.3 + i) * 0.5; the GloVe vectors are sin(arange(120) * 0.7) * 0.5).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

local TOL = 1e-4
-- V, E, H, B = 20, 6, 5, 3
local V, E, H = 20, 6, 5
-- PAD_IDX, UNK_IDX = 1, 0
local PAD_IDX, UNK_IDX = 2, 1
-- text = [sent len, batch size]: PyTorch's ids {{4, 5, 11}, {7, 9, 2}, {0, 3, 1}, ...} plus one
local text = tide.tensor({ { 5, 6, 12 }, { 8, 10, 3 }, { 1, 4, 2 }, { 13, 2, 2 }, { 20, 2, 2 } },
    { dtype = "int64" })
local text_lengths = tide.tensor({ 5, 3, 2 }, { dtype = "int64" })
local label = tide.tensor({ 1, 0, 1 })

local function flat(t)
    return t:detach():contiguous():view(-1):tolist()
end

-- pretrained_embeddings = TEXT.vocab.vectors (GloVe replaced by a fixed table)
local pretrained_embeddings = tide.sin(tide.arange(V * E) * 0.7):view(V, E) * 0.5

local function fill(model)
    tide.no_grad(function()
        local i = 0
        for _, p in model:named_parameters() do
            p:copy_((tide.sin(tide.arange(p:numel()) * 2.3 + i) * 0.5):view(p.shape))
            i = i + 1
        end
    end)
    -- model.embedding.weight.data.copy_(pretrained_embeddings)
    model.embedding.weight.data:copy_(pretrained_embeddings)
    -- model.embedding.weight.data[UNK_IDX] = torch.zeros(EMBEDDING_DIM)
    model.embedding.weight.data[UNK_IDX] = tide.zeros(E)
    -- model.embedding.weight.data[PAD_IDX] = torch.zeros(EMBEDDING_DIM)
    model.embedding.weight.data[PAD_IDX] = tide.zeros(E)
end

---------------------------------------------------------------------------------------------
-- 1 - Neural Bag of Words.ipynb
---------------------------------------------------------------------------------------------
-- class NBoW(nn.Module):
local NBoW = nn.Module:extend("NBoW")
function NBoW:init(vocab_size, embedding_dim, output_dim, pad_index)
    -- self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=pad_index)
    self.embedding = nn.Embedding(vocab_size, embedding_dim, { padding_idx = pad_index })
    self.fc = nn.Linear(embedding_dim, output_dim)
end

function NBoW:forward(ids)
    -- ids = [batch size, seq len]
    local embedded = self.embedding(ids)
    -- pooled = embedded.mean(dim=1)
    local pooled = embedded:mean({ dim = 2 })
    local prediction = self.fc(pooled)
    return prediction
end

---------------------------------------------------------------------------------------------
-- legacy/1 - Simple Sentiment Analysis.ipynb
---------------------------------------------------------------------------------------------
-- class RNN(nn.Module):
local SimpleRNN = nn.Module:extend("SimpleRNN")
function SimpleRNN:init(input_dim, embedding_dim, hidden_dim, output_dim)
    self.embedding = nn.Embedding(input_dim, embedding_dim)
    self.rnn = nn.RNN(embedding_dim, hidden_dim)
    self.fc = nn.Linear(hidden_dim, output_dim)
end

function SimpleRNN:forward(text_)
    --text = [sent len, batch size]
    local embedded = self.embedding(text_)
    local output, hidden = self.rnn(embedded)
    -- assert torch.equal(output[-1,:,:], hidden.squeeze(0))
    assert(tide.equal(output[-1], hidden:squeeze(1)))
    -- return self.fc(hidden.squeeze(0))
    return self.fc(hidden:squeeze(1))
end

-- def binary_accuracy(preds, y):
local function binary_accuracy(preds, y)
    --round predictions to the closest integer
    -- rounded_preds = torch.round(torch.sigmoid(preds))
    local rounded_preds = tide.round(tide.sigmoid(preds))
    -- correct = (rounded_preds == y).float() #convert into float for division
    local correct = rounded_preds:eq(y):float()
    -- acc = correct.sum() / len(correct)
    local acc = correct:sum() / #correct
    return acc
end

-- def train(model, iterator, optimizer, criterion):
-- (the batch's fields are the forward's arguments; the iterator is a list of batches)
local function train(model, iterator, optimizer, criterion)
    local epoch_loss, epoch_acc = 0, 0
    model:train()
    local losses = {}
    for _, batch in ipairs(iterator) do
        optimizer:zero_grad()
        -- predictions = model(batch.text).squeeze(1)
        local predictions = model(unpack(batch.text)):squeeze(2)
        local loss = criterion(predictions, batch.label)
        local acc = binary_accuracy(predictions, batch.label)
        loss:backward()
        if batch.on_grad then batch.on_grad(model) end
        optimizer:step()
        epoch_loss = epoch_loss + loss:item()
        epoch_acc = epoch_acc + acc:item()
        losses[#losses + 1] = loss:item()
    end
    return epoch_loss / #iterator, epoch_acc / #iterator, losses
end

-- def evaluate(model, iterator, criterion):
local function evaluate(model, iterator, criterion)
    local epoch_loss, epoch_acc = 0, 0
    model:eval()
    -- with torch.no_grad():
    tide.no_grad(function()
        for _, batch in ipairs(iterator) do
            local predictions = model(unpack(batch.text)):squeeze(2)
            local loss = criterion(predictions, batch.label)
            local acc = binary_accuracy(predictions, batch.label)
            epoch_loss = epoch_loss + loss:item()
            epoch_acc = epoch_acc + acc:item()
        end
    end)
    return epoch_loss / #iterator, epoch_acc / #iterator
end

---------------------------------------------------------------------------------------------
-- legacy/2 - Upgraded Sentiment Analysis.ipynb
---------------------------------------------------------------------------------------------
-- class RNN(nn.Module):
-- (enforce_sorted is an extra argument, the notebook's default True, to test both paths)
local RNN = nn.Module:extend("RNN")
function RNN:init(vocab_size, embedding_dim, hidden_dim, output_dim, n_layers,
                  bidirectional, dropout, pad_idx, enforce_sorted)
    -- self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx = pad_idx)
    self.embedding = nn.Embedding(vocab_size, embedding_dim, { padding_idx = pad_idx })
    -- self.rnn = nn.LSTM(embedding_dim, hidden_dim, num_layers=n_layers,
    --                    bidirectional=bidirectional, dropout=dropout)
    self.rnn = nn.LSTM(embedding_dim, hidden_dim, { num_layers = n_layers,
        bidirectional = bidirectional, dropout = dropout })
    self.fc = nn.Linear(hidden_dim * 2, output_dim)
    self.dropout = nn.Dropout(dropout)
    self.enforce_sorted = enforce_sorted ~= false
end

function RNN:forward(text_, lengths)
    local embedded = self.dropout(self.embedding(text_))
    -- lengths need to be on CPU!
    -- packed_embedded = nn.utils.rnn.pack_padded_sequence(embedded, text_lengths.to('cpu'))
    local packed_embedded = nn.utils.rnn.pack_padded_sequence(embedded, lengths:to("cpu"),
        { enforce_sorted = self.enforce_sorted })
    -- packed_output, (hidden, cell) = self.rnn(packed_embedded)
    local packed_output, hc = self.rnn(packed_embedded)
    local hidden = hc[1]
    --unpack sequence
    -- output, output_lengths = nn.utils.rnn.pad_packed_sequence(packed_output)
    local output, output_lengths = nn.utils.rnn.pad_packed_sequence(packed_output)
    self.last = { output = output, output_lengths = output_lengths, hidden = hidden }
    -- hidden = self.dropout(torch.cat((hidden[-2,:,:], hidden[-1,:,:]), dim = 1))
    hidden = self.dropout(tide.cat({ hidden[-2], hidden[-1] }, { dim = 2 }))
    return self.fc(hidden)
end

---------------------------------------------------------------------------------------------
-- legacy/3 - Faster Sentiment Analysis.ipynb
---------------------------------------------------------------------------------------------
-- def generate_bigrams(x):
local function generate_bigrams(x)
    -- n_grams = set(zip(*[x[i:] for i in range(2)]))
    -- GAP: a Lua table has no set of tuples; the set is the joined strings, kept in first-seen
    -- order (Python's set order is its hash order: the test compares the bigrams as a set)
    local n_grams, seen = {}, {}
    for i = 1, #x - 1 do
        local n_gram = x[i] .. " " .. x[i + 1]
        if not seen[n_gram] then
            seen[n_gram] = true
            n_grams[#n_grams + 1] = n_gram
        end
    end
    -- for n_gram in n_grams: x.append(' '.join(n_gram))
    for _, n_gram in ipairs(n_grams) do
        x[#x + 1] = n_gram
    end
    return x
end

-- class FastText(nn.Module):
local FastText = nn.Module:extend("FastText")
function FastText:init(vocab_size, embedding_dim, output_dim, pad_idx)
    self.embedding = nn.Embedding(vocab_size, embedding_dim, { padding_idx = pad_idx })
    self.fc = nn.Linear(embedding_dim, output_dim)
end

function FastText:forward(text_)
    local embedded = self.embedding(text_)
    -- embedded = embedded.permute(1, 0, 2)
    embedded = embedded:permute(2, 1, 3)
    -- pooled = F.avg_pool2d(embedded, (embedded.shape[1], 1)).squeeze(1)
    local pooled = F.avg_pool2d(embedded, { embedded.shape[2], 1 }):squeeze(2)
    return self.fc(pooled)
end

---------------------------------------------------------------------------------------------
-- legacy/4 - Convolutional Sentiment Analysis.ipynb
---------------------------------------------------------------------------------------------
-- class CNN(nn.Module):
local CNN = nn.Module:extend("CNN")
function CNN:init(vocab_size, embedding_dim, n_filters, filter_sizes, output_dim, dropout,
                  pad_idx)
    self.embedding = nn.Embedding(vocab_size, embedding_dim, { padding_idx = pad_idx })
    -- self.convs = nn.ModuleList([nn.Conv2d(in_channels = 1, out_channels = n_filters,
    --     kernel_size = (fs, embedding_dim)) for fs in filter_sizes])
    local convs = {}
    for _, fs in ipairs(filter_sizes) do
        convs[#convs + 1] = nn.Conv2d(1, n_filters, { kernel_size = { fs, embedding_dim } })
    end
    self.convs = nn.ModuleList(convs)
    self.fc = nn.Linear(#filter_sizes * n_filters, output_dim)
    self.dropout = nn.Dropout(dropout)
end

function CNN:forward(text_)
    --text = [batch size, sent len]
    local embedded = self.embedding(text_)
    -- embedded = embedded.unsqueeze(1)
    embedded = embedded:unsqueeze(2)
    -- conved = [F.relu(conv(embedded)).squeeze(3) for conv in self.convs]
    local conved = {}
    for _, conv in ipairs(self.convs) do
        conved[#conved + 1] = F.relu(conv(embedded)):squeeze(4)
    end
    -- pooled = [F.max_pool1d(conv, conv.shape[2]).squeeze(2) for conv in conved]
    local pooled = {}
    for _, conv in ipairs(conved) do
        pooled[#pooled + 1] = F.max_pool1d(conv, conv.shape[3]):squeeze(3)
    end
    -- cat = self.dropout(torch.cat(pooled, dim = 1))
    local cat = self.dropout(tide.cat(pooled, { dim = 2 }))
    return self.fc(cat)
end

-- class CNN1d(nn.Module):
local CNN1d = nn.Module:extend("CNN1d")
function CNN1d:init(vocab_size, embedding_dim, n_filters, filter_sizes, output_dim, dropout,
                    pad_idx)
    self.embedding = nn.Embedding(vocab_size, embedding_dim, { padding_idx = pad_idx })
    -- self.convs = nn.ModuleList([nn.Conv1d(in_channels = embedding_dim,
    --     out_channels = n_filters, kernel_size = fs) for fs in filter_sizes])
    local convs = {}
    for _, fs in ipairs(filter_sizes) do
        convs[#convs + 1] = nn.Conv1d(embedding_dim, n_filters, { kernel_size = fs })
    end
    self.convs = nn.ModuleList(convs)
    self.fc = nn.Linear(#filter_sizes * n_filters, output_dim)
    self.dropout = nn.Dropout(dropout)
end

function CNN1d:forward(text_)
    local embedded = self.embedding(text_)
    -- embedded = embedded.permute(0, 2, 1)
    embedded = embedded:permute(1, 3, 2)
    local conved = {}
    for _, conv in ipairs(self.convs) do
        conved[#conved + 1] = F.relu(conv(embedded))
    end
    local pooled = {}
    for _, conv in ipairs(conved) do
        pooled[#pooled + 1] = F.max_pool1d(conv, conv.shape[3]):squeeze(3)
    end
    local cat = self.dropout(tide.cat(pooled, { dim = 2 }))
    return self.fc(cat)
end

---------------------------------------------------------------------------------------------
-- the notebooks' training: 2 steps on the one batch, then evaluate
---------------------------------------------------------------------------------------------
local function run(model, args, make_opt, on_grad)
    fill(model)
    -- criterion = nn.BCEWithLogitsLoss()
    local criterion = nn.BCEWithLogitsLoss()
    local optimizer = make_opt(model:parameters())
    local preds = tide.no_grad(function() return model(unpack(args)):squeeze(2) end)
    local acc0 = binary_accuracy(preds, label):item()
    local batches = {
        { text = args, label = label, on_grad = on_grad },
        { text = args, label = label },
    }
    local _, _, losses = train(model, batches, optimizer, criterion)
    local valid_loss, valid_acc = evaluate(model, { { text = args, label = label } }, criterion)
    losses[3] = valid_loss
    for i = 1, 3 do assert_finite(losses[i], "loss") end
    assert(losses[3] < losses[2] and losses[2] < losses[1], "loss did not fall")
    return flat(preds), acc0, losses, valid_acc
end

local function adam(ps) return optim.Adam(ps) end

describe("ported bentrevett/pytorch-sentiment-analysis", function()
    it("NBoW: the mean of the embeddings through Linear", function()
        local model = NBoW(V, E, 2, PAD_IDX)
        fill(model)
        local pred = tide.no_grad(function() return model(text:t()) end)
        assert.same({ 3, 2 }, pred.shape)
        assert_close_list({ 0.34705889, -0.44926563, 0.48973104, -0.4953869, 0.52736479,
            -0.43256581 }, flat(pred), TOL, "nbow")
    end)

    it("simple RNN: predictions, binary_accuracy, SGD steps", function()
        local model = SimpleRNN(V, E, H, 1)
        -- optimizer = optim.SGD(model.parameters(), lr=1e-3)
        local preds, acc, losses, valid_acc = run(model, { text },
            function(ps) return optim.SGD(ps, { lr = 1e-3 }) end)
        assert_close_list({ 0.16956472, 0.1959084, 0.19471249 }, preds, TOL, "rnn preds")
        assert.near(2 / 3, acc, 1e-6)
        assert.near(2 / 3, valid_acc, 1e-6)
        assert_close_list({ 0.66945606, 0.66938812, 0.66932029 }, losses, 1e-5, "rnn losses")
    end)

    it("LSTM: packed bidirectional 2 layers, Adam steps, the embedding's gradient", function()
        local model = RNN(V, E, H, 1, 2, true, 0, PAD_IDX)
        local grad
        local preds, acc, losses, valid_acc = run(model, { text, text_lengths }, adam,
            function(m) grad = flat(m.embedding.weight.grad) end)
        assert_close_list({ -0.70578384, -0.71916544, -0.67153096 }, preds, TOL, "lstm preds")
        assert.near(1 / 3, acc, 1e-6)
        assert.near(1 / 3, valid_acc, 1e-6)
        assert_close_list({ 0.86272508, 0.85970306, 0.85671729 }, losses, TOL, "lstm losses")
        local want = {
            0.0014501387, 0.00069775316, -0.0023799445, 0.0024736468, -0.00091633725,
            -0.0012526111, 0, 0, 0, 0, 0, 0, -0.0046878611, 0.0048812069, -0.0018166045,
            -0.0024604895, 0.0050953138, -0.0043292637, 0.0023480966, -0.0031981692,
            0.001913637, 0.00064815156, -0.0027773203, 0.0030527643, 0.0040829922,
            -0.0038688467, 0.0010724405, 0.0024397487, -0.004323524, 0.0033215699,
            -0.0015025854, 0.00085222663, 0.00036695422, -0.0013412074, 0.0014202746,
            -0.00055137591, 0, 0, 0, 0, 0, 0, 0.002980219, -0.0018748067, -0.00048194762,
            0.0025170234, -0.0028721236, 0.0013102071, 0, 0, 0, 0, 0, 0, -0.0002646771,
            -0.00055423577, 0.0010032308, -0.00078262133, 3.9660983e-05, 0.00072978262,
            0, 0, 0, 0, 0, 0, 0.0014659279, -8.837576e-05, -0.0013481781, 0.0018848879,
            -0.0011635367, -0.00033442397, -0.0011182609, 0.0039035152, -0.0040833964,
            0.0015378243, 0.0020341387, -0.0042484473,
        }
        for _ = 1, 36 do want[#want + 1] = 0 end
        for _, v in ipairs({ -0.0044066985, 0.0087860078, -0.0073011322, 0.00094312953,
            0.0060443492, -0.0089975046 }) do
            want[#want + 1] = v
        end
        assert_close_list(want, grad, 1e-6, "lstm embedding grad")
    end)

    it("LSTM: pad_packed_sequence's output and enforce_sorted = false", function()
        local model = RNN(V, E, H, 1, 2, true, 0, PAD_IDX)
        fill(model)
        tide.no_grad(function() return model(text, text_lengths) end)
        local output, lens, hidden = model.last.output, model.last.output_lengths,
            model.last.hidden
        assert.same({ 5, 3, 2 * H }, output.shape)
        assert.same({ 5, 3, 2 }, lens:tolist())
        assert.same({ 4, 3, H }, hidden.shape)
        assert_close_list({ 0.081946224, -0.21620716, 0.11088528, -0.011069238, -0.15681446,
            0.03546248, 0.035669327, -0.055183426, 0.36805895, -0.089932285 },
            flat(output[1][1]), TOL, "output[0, 0]")
        assert_close_list({ 0.033077598, -0.25662225, 0.23960114, 0.052800059, -0.27779037,
            0.045212295, 0.033014189, -0.10421623, 0.11098123, -0.030507371 },
            flat(output[3][2]), TOL, "output[2, 1]")
        -- output over padding tokens are zero tensors
        assert.equal(0, output[4][2]:abs():sum():item())
        assert.equal(0, output[{ { 3, 5 }, 3 }]:abs():sum():item())
        -- the final forward state is the output at each sequence's last step, the backward one
        -- the output at step 1
        for b, L in ipairs({ 5, 3, 2 }) do
            assert_close_list(flat(hidden[-2][b]), flat(output[L][b]:narrow(1, 1, H)), 1e-6, "fwd")
            assert_close_list(flat(hidden[-1][b]), flat(output[1][b]:narrow(1, H + 1, H)), 1e-6,
                "bwd")
        end
        -- the batch in another order: enforce_sorted = True raises, False sorts
        local perm = tide.tensor({ 2, 1, 3 }, { dtype = "int64" })
        local t2, l2 = text:index_select(2, perm), text_lengths:index_select(1, perm)
        assert.has_error(function() model(t2, l2) end)
        local ok, err = pcall(model.forward, model, t2, l2)
        assert.is_false(ok)
        assert.truthy(tostring(err):find("tide: pack_padded_sequence: lengths must be sorted", 1,
            true))
        local model2 = RNN(V, E, H, 1, 2, true, 0, PAD_IDX, false)
        fill(model2)
        local p2 = tide.no_grad(function() return model2(t2, l2):squeeze(2) end)
        assert_close_list({ -0.71916544, -0.70578384, -0.67153096 }, flat(p2), TOL, "unsorted")
    end)

    it("generate_bigrams appends each bigram once", function()
        local x = generate_bigrams({ "This", "film", "is", "terrible" })
        assert.equal(7, #x)
        assert.same({ "This", "film", "is", "terrible" }, { x[1], x[2], x[3], x[4] })
        local got = { x[5], x[6], x[7] }
        table.sort(got)
        assert.same({ "This film", "film is", "is terrible" }, got)
        assert.equal(6, #generate_bigrams({ "a", "b", "a", "b" }))
    end)

    it("FastText: avg_pool2d over the sentence, Adam steps", function()
        local preds, acc, losses = run(FastText(V, E, 1, PAD_IDX), { text }, adam)
        assert_close_list({ 0.34705889, 0.48973104, 0.52736479 }, preds, TOL, "fasttext preds")
        assert.near(2 / 3, acc, 1e-6)
        assert_close_list({ 0.65537661, 0.65455908, 0.65374404 }, losses, TOL, "fasttext losses")
    end)

    it("CNN (Conv2d) and CNN1d: max_pool1d over time, Adam steps", function()
        local preds, acc, losses = run(CNN(V, E, 2, { 2, 3, 4 }, 1, 0, PAD_IDX), { text:t() },
            adam)
        assert_close_list({ 0.58971471, 0.59816217, 0.81646764 }, preds, TOL, "cnn preds")
        assert.near(2 / 3, acc, 1e-6)
        assert_close_list({ 0.61449021, 0.61178142, 0.60907894 }, losses, TOL, "cnn losses")
        preds, acc, losses = run(CNN1d(V, E, 2, { 2, 3, 4 }, 1, 0, PAD_IDX), { text:t() }, adam)
        assert_close_list({ 0.59602791, 0.63864589, 0.78380769 }, preds, TOL, "cnn1d preds")
        assert.near(2 / 3, acc, 1e-6)
        assert_close_list({ 0.62588537, 0.62274873, 0.61963648 }, losses, TOL, "cnn1d losses")
    end)
end)
