-- ported_scripts38_spec.lua — graykode/nlp-tutorial ported line for line: 1-1.NNLM,
-- 1-2.Word2Vec (Skipgram, softmax), 2-1.TextCNN, 3-1.TextRNN, 3-2.TextLSTM, 3-3.Bi-LSTM,
-- 4-1.Seq2Seq, 4-2.Seq2Seq(Attention), 4-3.Bi-LSTM(Attention), each on the script's own corpus,
-- a few epochs of its training loop and its prediction lines. The Python line stands above each
-- Lua line that differs from it. Word ids are 1-based; `list(set(words))` is sorted so that
-- the vocabulary is deterministic; np.eye(n)[ids] is tide.eye(n)[tide.tensor(ids)] and a list
-- of such rows goes through tide.stack (torch.FloatTensor of a list of tensors raises in
-- PyTorch as in tide).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite

-- Python's s.split()
local function split(s)
    local out = {}
    for w in s:gmatch("%S+") do
        out[#out + 1] = w
    end
    return out
end

-- " ".join(sentences).split()
local function join_split(sentences)
    return split(table.concat(sentences, " "))
end

-- list(set(xs)), sorted
local function set_list(xs)
    local seen, out = {}, {}
    for _, x in ipairs(xs) do
        if not seen[x] then
            seen[x] = true
            out[#out + 1] = x
        end
    end
    table.sort(out)
    return out
end

-- {w: i for i, w in enumerate(word_list)}, {i: w ...}
local function dicts(word_list)
    local word_dict, number_dict = {}, {}
    for i, w in ipairs(word_list) do
        word_dict[w] = i
        number_dict[i] = w
    end
    return word_dict, number_dict
end

local function map(xs, f)
    local out = {}
    for i, x in ipairs(xs) do
        out[i] = f(x)
    end
    return out
end

-- xs[a:b] (1-based, inclusive) of a Lua list
local function slice(xs, a, b)
    local out = {}
    for i = a, b do
        out[#out + 1] = xs[i]
    end
    return out
end

---------------------------------------------------------------------------------------------
-- 1. 1-1.NNLM/NNLM.py
---------------------------------------------------------------------------------------------
describe("nlp-tutorial 1-1.NNLM", function()
    it("NNLM: Embedding, view, tanh(d + H(X)), b + W(X) + U(tanh), Adam, max(1, keepdim)", function()
        tide.manual_seed(0)
        local n_step, n_hidden, m = 2, 2, 2
        local sentences = { "i like dog", "i love coffee", "i hate milk" }
        local word_list = set_list(join_split(sentences))
        local word_dict, number_dict = dicts(word_list)
        local n_class = #word_list

        local function make_batch()
            local input_batch, target_batch = {}, {}
            for _, sen in ipairs(sentences) do
                local word = split(sen)
                -- input = [word_dict[n] for n in word[:-1]]
                local input = map(slice(word, 1, #word - 1), function(n) return word_dict[n] end)
                local target = word_dict[word[#word]]
                input_batch[#input_batch + 1] = input
                target_batch[#target_batch + 1] = target
            end
            return input_batch, target_batch
        end

        local NNLM = nn.Module:extend("NNLM")
        function NNLM:init()
            self.C = nn.Embedding(n_class, m)
            -- self.H = nn.Linear(n_step * m, n_hidden, bias=False)
            self.H = nn.Linear(n_step * m, n_hidden, { bias = false })
            self.d = nn.Parameter(tide.ones(n_hidden))
            self.U = nn.Linear(n_hidden, n_class, { bias = false })
            self.W = nn.Linear(n_step * m, n_class, { bias = false })
            self.b = nn.Parameter(tide.ones(n_class))
        end

        function NNLM:forward(X)
            X = self.C(X)
            X = X:view(-1, n_step * m)
            local tanh = tide.tanh(self.d + self.H(X))
            local output = self.b + self.W(X) + self.U(tanh)
            return output
        end

        local model = NNLM()
        local criterion = nn.CrossEntropyLoss()
        local optimizer = optim.Adam(model:parameters(), { lr = 0.01 })

        local input_batch, target_batch = make_batch()
        input_batch = tide.LongTensor(input_batch)
        target_batch = tide.LongTensor(target_batch)

        local losses = {}
        for epoch = 0, 19 do
            optimizer:zero_grad()
            local output = model(input_batch)
            local loss = criterion(output, target_batch)
            if (epoch + 1) % 10 == 0 then
                -- print('Epoch:', '%04d' % (epoch + 1), 'cost =', '{:.6f}'.format(loss))
                local _ = string.format("Epoch: %04d cost = %.6f", epoch + 1, loss:item())
            end
            losses[#losses + 1] = loss:item()
            loss:backward()
            optimizer:step()
        end
        assert_finite(losses[#losses], "loss")
        assert.is_true(losses[#losses] < losses[1])

        -- predict = model(input_batch).data.max(1, keepdim=True)[1]
        local _, predict = model(input_batch).data:max(2, { keepdim = true })
        assert.same({ 3, 1 }, predict:size())
        -- [number_dict[n.item()] for n in predict.squeeze()]
        local words = {}
        for _, n in ipairs(predict:squeeze():unbind()) do
            words[#words + 1] = number_dict[n:item()]
        end
        assert.equal(3, #words)
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. 1-2.Word2Vec/Word2Vec-Skipgram(Softmax).py
---------------------------------------------------------------------------------------------
describe("nlp-tutorial 1-2.Word2Vec", function()
    it("Skipgram: one-hot np.eye rows, Linear(bias=False) x2, random batches, W[0][i].item()", function()
        tide.manual_seed(0)
        local batch_size, embedding_size = 2, 2
        local sentences = { "apple banana fruit", "banana orange fruit", "orange banana fruit",
            "dog cat animal", "cat monkey animal", "monkey dog animal" }
        local word_sequence = join_split(sentences)
        local word_list = set_list(join_split(sentences))
        local word_dict = dicts(word_list)
        local voc_size = #word_list

        local skip_grams = {}
        -- for i in range(1, len(word_sequence) - 1):
        for i = 2, #word_sequence - 1 do
            local target = word_dict[word_sequence[i]]
            local context = { word_dict[word_sequence[i - 1]], word_dict[word_sequence[i + 1]] }
            for _, w in ipairs(context) do
                skip_grams[#skip_grams + 1] = { target, w }
            end
        end

        local function random_batch()
            local random_inputs, random_labels = {}, {}
            -- random_index = np.random.choice(range(len(skip_grams)), batch_size, replace=False)
            local random_index = tide.randperm(#skip_grams)[{ { 1, batch_size } }] + 1
            for _, i in ipairs(random_index:tolist()) do
                -- random_inputs.append(np.eye(voc_size)[skip_grams[i][0]])
                random_inputs[#random_inputs + 1] = tide.eye(voc_size)[skip_grams[i][1]]
                random_labels[#random_labels + 1] = skip_grams[i][2]
            end
            return random_inputs, random_labels
        end

        local Word2Vec = nn.Module:extend("Word2Vec")
        function Word2Vec:init()
            self.W = nn.Linear(voc_size, embedding_size, { bias = false })
            self.WT = nn.Linear(embedding_size, voc_size, { bias = false })
        end

        function Word2Vec:forward(X)
            local hidden_layer = self.W(X)
            local output_layer = self.WT(hidden_layer)
            return output_layer
        end

        local model = Word2Vec()
        local criterion = nn.CrossEntropyLoss()
        local optimizer = optim.Adam(model:parameters(), { lr = 0.001 })

        for _ = 0, 9 do
            local input_batch, target_batch = random_batch()
            -- input_batch = torch.Tensor(input_batch)
            input_batch = tide.stack(input_batch)
            target_batch = tide.LongTensor(target_batch)
            optimizer:zero_grad()
            local output = model(input_batch)
            local loss = criterion(output, target_batch)
            assert_finite(loss:item(), "loss")
            loss:backward()
            optimizer:step()
        end

        for i = 1, #word_list do
            -- W, WT = model.parameters()
            local W, WT = unpack(model:parameters())
            -- x, y = W[0][i].item(), W[1][i].item()
            local x, y = W[1][i]:item(), W[2][i]:item()
            assert_finite(x, "x")
            assert_finite(y, "y")
            assert.same({ voc_size, embedding_size }, WT:size())
        end
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. 2-1.TextCNN/TextCNN.py
---------------------------------------------------------------------------------------------
describe("nlp-tutorial 2-1.TextCNN", function()
    it("TextCNN: ModuleList of Conv2d(1, F, (size, E)), MaxPool2d, permute, cat, reshape", function()
        tide.manual_seed(0)
        local embedding_size, sequence_length, num_classes = 2, 3, 2
        local filter_sizes = { 2, 2, 2 }
        local num_filters = 3
        local sentences = { "i love you", "he loves me", "she likes baseball", "i hate you",
            "sorry for that", "this is awful" }
        local labels = { 1, 1, 1, 0, 0, 0 }
        local word_list = set_list(join_split(sentences))
        local word_dict = dicts(word_list)
        local vocab_size = #word_list

        local TextCNN = nn.Module:extend("TextCNN")
        function TextCNN:init()
            self.num_filters_total = num_filters * #filter_sizes
            self.W = nn.Embedding(vocab_size, embedding_size)
            self.Weight = nn.Linear(self.num_filters_total, num_classes, { bias = false })
            -- self.Bias = nn.Parameter(torch.ones([num_classes]))
            self.Bias = nn.Parameter(tide.ones({ num_classes }))
            -- nn.ModuleList([nn.Conv2d(1, num_filters, (size, embedding_size)) for size in filter_sizes])
            self.filter_list = nn.ModuleList(map(filter_sizes, function(size)
                return nn.Conv2d(1, num_filters, { size, embedding_size })
            end))
        end

        function TextCNN:forward(X)
            local embedded_chars = self.W(X)
            -- embedded_chars = embedded_chars.unsqueeze(1)
            embedded_chars = embedded_chars:unsqueeze(2)
            local pooled_outputs = {}
            -- for i, conv in enumerate(self.filter_list):
            for i, conv in ipairs(self.filter_list) do
                local h = F.relu(conv(embedded_chars))
                local mp = nn.MaxPool2d({ sequence_length - filter_sizes[i] + 1, 1 })
                -- pooled = mp(h).permute(0, 3, 2, 1)
                local pooled = mp(h):permute(1, 4, 3, 2)
                pooled_outputs[#pooled_outputs + 1] = pooled
            end
            -- h_pool = torch.cat(pooled_outputs, len(filter_sizes))
            local h_pool = tide.cat(pooled_outputs, #filter_sizes + 1)
            local h_pool_flat = tide.reshape(h_pool, { -1, self.num_filters_total })
            local model = self.Weight(h_pool_flat) + self.Bias
            return model
        end

        local model = TextCNN()
        local criterion = nn.CrossEntropyLoss()
        local optimizer = optim.Adam(model:parameters(), { lr = 0.01 })

        -- inputs = torch.LongTensor([np.asarray([word_dict[n] for n in sen.split()]) for sen in sentences])
        local inputs = tide.LongTensor(map(sentences, function(sen)
            return map(split(sen), function(n) return word_dict[n] end)
        end))
        -- targets = torch.LongTensor([out for out in labels]): classes 0/1 are 1/2
        local targets = tide.LongTensor(map(labels, function(out) return out + 1 end))

        local losses = {}
        for _ = 0, 19 do
            optimizer:zero_grad()
            local output = model(inputs)
            local loss = criterion(output, targets)
            losses[#losses + 1] = loss:item()
            loss:backward()
            optimizer:step()
        end
        assert_finite(losses[#losses], "loss")
        assert.is_true(losses[#losses] < losses[1])

        local test_text = "sorry hate you"
        local tests = { map(split(test_text), function(n) return word_dict[n] end) }
        local test_batch = tide.LongTensor(tests)
        local _, predict = model(test_batch).data:max(2, { keepdim = true })
        -- if predict[0][0] == 0:
        local verdict
        if predict[1][1]:item() == 1 then
            verdict = "is Bad Mean..."
        else
            verdict = "is Good Mean!!"
        end
        assert.is_string(verdict)
    end)
end)

---------------------------------------------------------------------------------------------
-- 4. 3-1.TextRNN/TextRNN.py
---------------------------------------------------------------------------------------------
describe("nlp-tutorial 3-1.TextRNN", function()
    it("TextRNN: nn.RNN(input_size=, hidden_size=), rnn(X, hidden), outputs[-1]", function()
        tide.manual_seed(0)
        local n_step, n_hidden = 2, 5
        local sentences = { "i like dog", "i love coffee", "i hate milk" }
        local word_list = set_list(join_split(sentences))
        local word_dict, number_dict = dicts(word_list)
        local n_class = #word_list
        local batch_size = #sentences

        local function make_batch()
            local input_batch, target_batch = {}, {}
            for _, sen in ipairs(sentences) do
                local word = split(sen)
                local input = map(slice(word, 1, #word - 1), function(n) return word_dict[n] end)
                local target = word_dict[word[#word]]
                -- input_batch.append(np.eye(n_class)[input])
                input_batch[#input_batch + 1] = tide.eye(n_class)[tide.tensor(input)]
                target_batch[#target_batch + 1] = target
            end
            return input_batch, target_batch
        end

        local TextRNN = nn.Module:extend("TextRNN")
        function TextRNN:init()
            -- self.rnn = nn.RNN(input_size=n_class, hidden_size=n_hidden)
            self.rnn = nn.RNN({ input_size = n_class, hidden_size = n_hidden })
            self.W = nn.Linear(n_hidden, n_class, { bias = false })
            self.b = nn.Parameter(tide.ones({ n_class }))
        end

        function TextRNN:forward(hidden, X)
            -- X = X.transpose(0, 1)
            X = X:transpose(1, 2)
            local outputs
            outputs, hidden = self.rnn(X, hidden)
            outputs = outputs[-1]
            local model = self.W(outputs) + self.b
            return model
        end

        local model = TextRNN()
        local criterion = nn.CrossEntropyLoss()
        local optimizer = optim.Adam(model:parameters(), { lr = 0.01 })

        local input_batch, target_batch = make_batch()
        -- input_batch = torch.FloatTensor(input_batch)
        input_batch = tide.stack(input_batch)
        target_batch = tide.LongTensor(target_batch)
        assert.same({ batch_size, n_step, n_class }, input_batch:size())

        local losses = {}
        for _ = 0, 19 do
            optimizer:zero_grad()
            local hidden = tide.zeros(1, batch_size, n_hidden)
            local output = model(hidden, input_batch)
            local loss = criterion(output, target_batch)
            losses[#losses + 1] = loss:item()
            loss:backward()
            optimizer:step()
        end
        assert_finite(losses[#losses], "loss")
        assert.is_true(losses[#losses] < losses[1])

        local hidden = tide.zeros(1, batch_size, n_hidden)
        local _, predict = model(hidden, input_batch).data:max(2, { keepdim = true })
        local words = {}
        for _, n in ipairs(predict:squeeze():unbind()) do
            words[#words + 1] = number_dict[n:item()]
        end
        assert.equal(3, #words)
    end)
end)

---------------------------------------------------------------------------------------------
-- 5. 3-2.TextLSTM/TextLSTM.py
---------------------------------------------------------------------------------------------
describe("nlp-tutorial 3-2.TextLSTM", function()
    it("TextLSTM: nn.LSTM, zeros(1, len(X), n_hidden), outputs, (_, _) = lstm(input, (h, c))", function()
        tide.manual_seed(0)
        local n_hidden = 128
        -- char_arr = [c for c in 'abcdefghijklmnopqrstuvwxyz']
        local char_arr = {}
        for c in ("abcdefghijklmnopqrstuvwxyz"):gmatch(".") do
            char_arr[#char_arr + 1] = c
        end
        local word_dict, number_dict = dicts(char_arr)
        local n_class = #char_arr
        local seq_data = { "make", "need", "coal", "word", "love", "hate", "live", "home", "hash", "star" }

        local function make_batch()
            local input_batch, target_batch = {}, {}
            for _, seq in ipairs(seq_data) do
                -- input = [word_dict[n] for n in seq[:-1]]
                local input = {}
                for n in seq:sub(1, -2):gmatch(".") do
                    input[#input + 1] = word_dict[n]
                end
                local target = word_dict[seq:sub(-1)]
                input_batch[#input_batch + 1] = tide.eye(n_class)[tide.tensor(input)]
                target_batch[#target_batch + 1] = target
            end
            return input_batch, target_batch
        end

        local TextLSTM = nn.Module:extend("TextLSTM")
        function TextLSTM:init()
            self.lstm = nn.LSTM({ input_size = n_class, hidden_size = n_hidden })
            self.W = nn.Linear(n_hidden, n_class, { bias = false })
            self.b = nn.Parameter(tide.ones({ n_class }))
        end

        function TextLSTM:forward(X)
            local input = X:transpose(1, 2)
            -- hidden_state = torch.zeros(1, len(X), n_hidden)
            local hidden_state = tide.zeros(1, #X, n_hidden)
            local cell_state = tide.zeros(1, #X, n_hidden)
            -- outputs, (_, _) = self.lstm(input, (hidden_state, cell_state))
            local outputs = self.lstm(input, { hidden_state, cell_state })
            outputs = outputs[-1]
            local model = self.W(outputs) + self.b
            return model
        end

        local model = TextLSTM()
        local criterion = nn.CrossEntropyLoss()
        local optimizer = optim.Adam(model:parameters(), { lr = 0.001 })

        local input_batch, target_batch = make_batch()
        input_batch = tide.stack(input_batch)
        target_batch = tide.LongTensor(target_batch)

        local losses = {}
        for _ = 0, 9 do
            optimizer:zero_grad()
            local output = model(input_batch)
            local loss = criterion(output, target_batch)
            losses[#losses + 1] = loss:item()
            loss:backward()
            optimizer:step()
        end
        assert_finite(losses[#losses], "loss")
        assert.is_true(losses[#losses] < losses[1])

        -- inputs = [sen[:3] for sen in seq_data]
        local inputs = map(seq_data, function(sen) return sen:sub(1, 3) end)
        local _, predict = model(input_batch).data:max(2, { keepdim = true })
        local out = {}
        for _, n in ipairs(predict:squeeze():unbind()) do
            out[#out + 1] = number_dict[n:item()]
        end
        assert.equal(#inputs, #out)
    end)
end)

---------------------------------------------------------------------------------------------
-- 6. 3-3.Bi-LSTM/Bi-LSTM.py
---------------------------------------------------------------------------------------------
describe("nlp-tutorial 3-3.Bi-LSTM", function()
    it("BiLSTM: LSTM(bidirectional=True) with zeros(1*2, len(X), n_hidden), padded one-hot inputs", function()
        tide.manual_seed(0)
        local n_hidden = 5
        local sentence = "Lorem ipsum dolor sit amet consectetur adipisicing elit " ..
            "sed do eiusmod tempor incididunt ut labore et dolore magna " ..
            "aliqua Ut enim ad minim veniam quis nostrud exercitation"
        local word_dict, number_dict = dicts(set_list(split(sentence)))
        local n_class = #number_dict
        local max_len = #split(sentence)

        local function make_batch()
            local input_batch, target_batch = {}, {}
            local words = split(sentence)
            -- for i, word in enumerate(words[:-1]):
            for i = 1, #words - 1 do
                -- input = [word_dict[n] for n in words[:(i + 1)]]
                local input = map(slice(words, 1, i), function(n) return word_dict[n] end)
                -- input = input + [0] * (max_len - len(input)): id 0 is the first word, 1 here
                for _ = #input + 1, max_len do
                    input[#input + 1] = 1
                end
                local target = word_dict[words[i + 1]]
                input_batch[#input_batch + 1] = tide.eye(n_class)[tide.tensor(input)]
                target_batch[#target_batch + 1] = target
            end
            return input_batch, target_batch
        end

        local BiLSTM = nn.Module:extend("BiLSTM")
        function BiLSTM:init()
            -- nn.LSTM(input_size=n_class, hidden_size=n_hidden, bidirectional=True)
            self.lstm = nn.LSTM({ input_size = n_class, hidden_size = n_hidden, bidirectional = true })
            self.W = nn.Linear(n_hidden * 2, n_class, { bias = false })
            self.b = nn.Parameter(tide.ones({ n_class }))
        end

        function BiLSTM:forward(X)
            local input = X:transpose(1, 2)
            local hidden_state = tide.zeros(1 * 2, #X, n_hidden)
            local cell_state = tide.zeros(1 * 2, #X, n_hidden)
            local outputs = self.lstm(input, { hidden_state, cell_state })
            outputs = outputs[-1]
            local model = self.W(outputs) + self.b
            return model
        end

        local model = BiLSTM()
        local criterion = nn.CrossEntropyLoss()
        local optimizer = optim.Adam(model:parameters(), { lr = 0.01 })

        local input_batch, target_batch = make_batch()
        input_batch = tide.stack(input_batch)
        target_batch = tide.LongTensor(target_batch)
        assert.same({ max_len - 1, max_len, n_class }, input_batch:size())

        local losses = {}
        for _ = 0, 9 do
            optimizer:zero_grad()
            local output = model(input_batch)
            local loss = criterion(output, target_batch)
            losses[#losses + 1] = loss:item()
            loss:backward()
            optimizer:step()
        end
        assert_finite(losses[#losses], "loss")
        assert.is_true(losses[#losses] < losses[1])

        local _, predict = model(input_batch).data:max(2, { keepdim = true })
        local out = {}
        for _, n in ipairs(predict:squeeze():unbind()) do
            out[#out + 1] = number_dict[n:item()]
        end
        assert.equal(max_len - 1, #out)
    end)
end)

---------------------------------------------------------------------------------------------
-- 7. 4-1.Seq2Seq/Seq2Seq.py
---------------------------------------------------------------------------------------------
describe("nlp-tutorial 4-1.Seq2Seq", function()
    it("Seq2Seq: enc/dec nn.RNN(dropout=0.5) (warns), loss += criterion(output[i], target[i]), translate", function()
        tide.manual_seed(0)
        local n_step, n_hidden = 5, 32
        -- char_arr = [c for c in 'SEPabcdefghijklmnopqrstuvwxyz']
        local char_arr = {}
        for c in ("SEPabcdefghijklmnopqrstuvwxyz"):gmatch(".") do
            char_arr[#char_arr + 1] = c
        end
        local num_dic = dicts(char_arr)
        local seq_data = { { "man", "women" }, { "black", "white" }, { "king", "queen" },
            { "girl", "boy" }, { "up", "down" }, { "high", "low" } }
        local n_class = #char_arr
        local batch_size = #seq_data

        -- [num_dic[n] for n in s], one-hot rows np.eye(n_class)[ids]
        local function ids(s)
            local out = {}
            for n in s:gmatch(".") do
                out[#out + 1] = num_dic[n]
            end
            return out
        end

        local function make_batch()
            local input_batch, output_batch, target_batch = {}, {}, {}
            for _, seq in ipairs(seq_data) do
                for i = 1, 2 do
                    -- seq[i] = seq[i] + 'P' * (n_step - len(seq[i]))
                    seq[i] = seq[i] .. ("P"):rep(n_step - #seq[i])
                end
                local input = ids(seq[1])
                local output = ids("S" .. seq[2])
                local target = ids(seq[2] .. "E")
                input_batch[#input_batch + 1] = tide.eye(n_class)[tide.tensor(input)]
                output_batch[#output_batch + 1] = tide.eye(n_class)[tide.tensor(output)]
                target_batch[#target_batch + 1] = target
            end
            -- return torch.FloatTensor(input_batch), torch.FloatTensor(output_batch), torch.LongTensor(target_batch)
            return tide.stack(input_batch), tide.stack(output_batch), tide.LongTensor(target_batch)
        end

        local function make_testbatch(input_word)
            local input_w = input_word .. ("P"):rep(n_step - #input_word)
            local input = ids(input_w)
            local output = ids("S" .. ("P"):rep(n_step))
            local input_batch = tide.eye(n_class)[tide.tensor(input)]
            local output_batch = tide.eye(n_class)[tide.tensor(output)]
            -- torch.FloatTensor(input_batch).unsqueeze(0), ...
            return tide.FloatTensor(input_batch):unsqueeze(1), tide.FloatTensor(output_batch):unsqueeze(1)
        end

        local Seq2Seq = nn.Module:extend("Seq2Seq")
        function Seq2Seq:init()
            self.enc_cell = nn.RNN({ input_size = n_class, hidden_size = n_hidden, dropout = 0.5 })
            self.dec_cell = nn.RNN({ input_size = n_class, hidden_size = n_hidden, dropout = 0.5 })
            self.fc = nn.Linear(n_hidden, n_class)
        end

        function Seq2Seq:forward(enc_input, enc_hidden, dec_input)
            enc_input = enc_input:transpose(1, 2)
            dec_input = dec_input:transpose(1, 2)
            -- _, enc_states = self.enc_cell(enc_input, enc_hidden)
            local _, enc_states = self.enc_cell(enc_input, enc_hidden)
            local outputs = self.dec_cell(dec_input, enc_states)
            local model = self.fc(outputs)
            return model
        end

        -- PyTorch's UserWarning for dropout on a one-layer RNN, once
        local warned = {}
        local stderr = io.stderr
        io.stderr = { write = function(_, s) warned[#warned + 1] = s end } -- luacheck: ignore
        require("tide._warn").reset("rnn_dropout_one_layer")
        local ok, model = pcall(Seq2Seq)
        io.stderr = stderr -- luacheck: ignore
        assert(ok, model)
        assert.is_truthy(table.concat(warned):find("non-zero dropout expects num_layers greater " ..
            "than 1, but got dropout=0.5 and num_layers=1", 1, true))

        local criterion = nn.CrossEntropyLoss()
        local optimizer = tide.optim.Adam(model:parameters(), { lr = 0.01 })
        local input_batch, output_batch, target_batch = make_batch()
        assert.same({ batch_size, n_step, n_class }, input_batch:size())
        assert.same({ batch_size, n_step + 1 }, target_batch:size())

        local losses = {}
        for _ = 0, 9 do
            local hidden = tide.zeros(1, batch_size, n_hidden)
            optimizer:zero_grad()
            local output = model(input_batch, hidden, output_batch)
            output = output:transpose(1, 2)
            local loss = 0
            -- for i in range(0, len(target_batch)):
            for i = 1, #target_batch do
                -- loss += criterion(output[i], target_batch[i])
                loss = loss + criterion(output[i], target_batch[i])
            end
            losses[#losses + 1] = loss:item()
            loss:backward()
            optimizer:step()
        end
        assert_finite(losses[#losses], "loss")
        assert.is_true(losses[#losses] < losses[1])

        local function translate(word)
            local input_batch_, output_batch_ = make_testbatch(word)
            local hidden = tide.zeros(1, 1, n_hidden)
            local output = model(input_batch_, hidden, output_batch_)
            -- predict = output.data.max(2, keepdim=True)[1]
            local _, predict = output.data:max(3, { keepdim = true })
            -- decoded = [char_arr[i] for i in predict]
            local decoded = {}
            for _, i in ipairs(predict:view(-1):tolist()) do
                decoded[#decoded + 1] = char_arr[i]
            end
            -- end = decoded.index('E'); translated = ''.join(decoded[:end]) (no 'E' yet: all of it)
            local stop = #decoded + 1
            for k, c in ipairs(decoded) do
                if c == "E" then
                    stop = k
                    break
                end
            end
            local translated = table.concat(slice(decoded, 1, stop - 1))
            -- return translated.replace('P', '')
            return (translated:gsub("P", ""))
        end
        assert.is_string(translate("man"))
        assert.is_string(translate("upp"))
    end)
end)

---------------------------------------------------------------------------------------------
-- 8. 4-2.Seq2Seq(Attention)/Seq2Seq(Attention).py
---------------------------------------------------------------------------------------------
describe("nlp-tutorial 4-2.Seq2Seq(Attention)", function()
    it("Attention: model[i] = out(cat), attn_scores[i] = dot(...), F.softmax without dim, bmm", function()
        tide.manual_seed(0)
        local n_hidden = 16
        local sentences = { "ich mochte ein bier P", "S i want a beer", "i want a beer E" }
        local word_list = set_list(join_split(sentences))
        local word_dict, number_dict = dicts(word_list)
        local n_class = #word_list
        local function onehot(sentence)
            -- np.eye(n_class)[[word_dict[n] for n in sentence.split()]]
            return tide.eye(n_class)[tide.tensor(map(split(sentence), function(n) return word_dict[n] end))]
        end

        local function make_batch()
            local input_batch = { onehot(sentences[1]) }
            local output_batch = { onehot(sentences[2]) }
            local target_batch = { map(split(sentences[3]), function(n) return word_dict[n] end) }
            return tide.stack(input_batch), tide.stack(output_batch), tide.LongTensor(target_batch)
        end

        local Attention = nn.Module:extend("Attention")
        function Attention:init()
            self.enc_cell = nn.RNN({ input_size = n_class, hidden_size = n_hidden, dropout = 0.5 })
            self.dec_cell = nn.RNN({ input_size = n_class, hidden_size = n_hidden, dropout = 0.5 })
            self.attn = nn.Linear(n_hidden, n_hidden)
            self.out = nn.Linear(n_hidden * 2, n_class)
        end

        function Attention:forward(enc_inputs, hidden, dec_inputs)
            enc_inputs = enc_inputs:transpose(1, 2)
            dec_inputs = dec_inputs:transpose(1, 2)
            local enc_outputs, enc_hidden = self.enc_cell(enc_inputs, hidden)
            local trained_attn = {}
            hidden = enc_hidden
            -- n_step = len(dec_inputs)
            local n_step = #dec_inputs
            -- model = torch.empty([n_step, 1, n_class])
            local model = tide.empty({ n_step, 1, n_class })
            -- for i in range(n_step):
            for i = 1, n_step do
                local dec_output
                -- dec_output, hidden = self.dec_cell(dec_inputs[i].unsqueeze(0), hidden)
                dec_output, hidden = self.dec_cell(dec_inputs[i]:unsqueeze(1), hidden)
                local attn_weights = self:get_att_weight(dec_output, enc_outputs)
                -- trained_attn.append(attn_weights.squeeze().data.numpy())
                -- t:numpy() raises naming the Lua form (tide has no NumPy): the values as a list
                local ok, err = pcall(function() return attn_weights:squeeze().data:numpy() end)
                assert.is_false(ok)
                assert.truthy(err:find("tide: numpy: tide has no NumPy arrays; for the values " ..
                    "of this float32 tensor of shape {5} as nested Lua lists use " ..
                    "t:detach():cpu():tolist()", 1, true))
                trained_attn[#trained_attn + 1] = attn_weights:squeeze().data:tolist()
                -- context = attn_weights.bmm(enc_outputs.transpose(0, 1))
                local context = attn_weights:bmm(enc_outputs:transpose(1, 2))
                dec_output = dec_output:squeeze(1)
                context = context:squeeze(2)
                -- model[i] = self.out(torch.cat((dec_output, context), 1))
                model[i] = self.out(tide.cat({ dec_output, context }, 2))
            end
            -- return model.transpose(0, 1).squeeze(0), trained_attn
            return model:transpose(1, 2):squeeze(1), trained_attn
        end

        function Attention:get_att_weight(dec_output, enc_outputs)
            local n_step = #enc_outputs
            local attn_scores = tide.zeros(n_step)
            for i = 1, n_step do
                attn_scores[i] = self:get_att_score(dec_output, enc_outputs[i])
            end
            -- return F.softmax(attn_scores).view(1, 1, -1): PyTorch 1.13 picks dim 0 with a warning
            return F.softmax(attn_scores):view(1, 1, -1)
        end

        function Attention:get_att_score(dec_output, enc_output)
            local score = self.attn(enc_output)
            return tide.dot(dec_output:view(-1), score:view(-1))
        end

        -- hidden = torch.zeros(1, 1, n_hidden)
        local hidden = tide.zeros(1, 1, n_hidden)
        local stderr = io.stderr
        io.stderr = { write = function() end } -- luacheck: ignore (the dropout and softmax warnings)
        local ok, err = pcall(function()
            local model = Attention()
            local criterion = nn.CrossEntropyLoss()
            local optimizer = tide.optim.Adam(model:parameters(), { lr = 0.01 })
            local input_batch, output_batch, target_batch = make_batch()

            local losses = {}
            for _ = 0, 9 do
                optimizer:zero_grad()
                local output = model(input_batch, hidden, output_batch)
                -- loss = criterion(output, target_batch.squeeze(0))
                local loss = criterion(output, target_batch:squeeze(1))
                losses[#losses + 1] = loss:item()
                loss:backward()
                optimizer:step()
            end
            assert_finite(losses[#losses], "loss")
            assert.is_true(losses[#losses] < losses[1])
            -- the attention Linear trains through attn_scores[i] = ... and model[i] = ...
            assert.is_true(model.attn.weight.grad:abs():sum():item() > 0)

            -- test_batch = [np.eye(n_class)[[word_dict[n] for n in 'SPPPP']]]
            local test_batch = { tide.eye(n_class)[tide.tensor(map({ "S", "P", "P", "P", "P" },
                function(n) return word_dict[n] end))] }
            test_batch = tide.stack(test_batch)
            local predict, trained_attn = model(input_batch, hidden, test_batch)
            local _
            _, predict = predict.data:max(2, { keepdim = true })
            local out = {}
            for _, n in ipairs(predict:squeeze():unbind()) do
                out[#out + 1] = number_dict[n:item()]
            end
            assert.equal(5, #out)
            assert.equal(5, #trained_attn)
            assert.equal(5, #trained_attn[1])
        end)
        io.stderr = stderr -- luacheck: ignore
        assert(ok, err)
    end)
end)

---------------------------------------------------------------------------------------------
-- 9. 4-3.Bi-LSTM(Attention)/Bi-LSTM(Attention).py
---------------------------------------------------------------------------------------------
describe("nlp-tutorial 4-3.Bi-LSTM(Attention)", function()
    it("BiLSTM_Attention: LSTM(E, H, bidirectional=True), final_state.view, bmm, softmax(_, 1)", function()
        tide.manual_seed(0)
        local embedding_dim, n_hidden, num_classes = 2, 5, 2
        local sentences = { "i love you", "he loves me", "she likes baseball", "i hate you",
            "sorry for that", "this is awful" }
        local labels = { 1, 1, 1, 0, 0, 0 }
        local word_list = set_list(join_split(sentences))
        local word_dict = dicts(word_list)
        local vocab_size = #word_list

        local BiLSTM_Attention = nn.Module:extend("BiLSTM_Attention")
        function BiLSTM_Attention:init()
            self.embedding = nn.Embedding(vocab_size, embedding_dim)
            -- self.lstm = nn.LSTM(embedding_dim, n_hidden, bidirectional=True)
            self.lstm = nn.LSTM(embedding_dim, n_hidden, { bidirectional = true })
            self.out = nn.Linear(n_hidden * 2, num_classes)
        end

        function BiLSTM_Attention:attention_net(lstm_output, final_state)
            local hidden = final_state:view(-1, n_hidden * 2, 1)
            -- attn_weights = torch.bmm(lstm_output, hidden).squeeze(2)
            local attn_weights = tide.bmm(lstm_output, hidden):squeeze(3)
            local soft_attn_weights = F.softmax(attn_weights, 2)
            -- context = torch.bmm(lstm_output.transpose(1, 2), soft_attn_weights.unsqueeze(2)).squeeze(2)
            local context = tide.bmm(lstm_output:transpose(2, 3), soft_attn_weights:unsqueeze(3)):squeeze(3)
            -- return context, soft_attn_weights.data.numpy()
            return context, soft_attn_weights.data:tolist()
        end

        function BiLSTM_Attention:forward(X)
            local input = self.embedding(X)
            -- input = input.permute(1, 0, 2)
            input = input:permute(2, 1, 3)
            local hidden_state = tide.zeros(1 * 2, #X, n_hidden)
            local cell_state = tide.zeros(1 * 2, #X, n_hidden)
            -- output, (final_hidden_state, final_cell_state) = self.lstm(input, (hidden_state, cell_state))
            local output, hc = self.lstm(input, { hidden_state, cell_state })
            local final_hidden_state, final_cell_state = hc[1], hc[2] -- luacheck: ignore
            output = output:permute(2, 1, 3)
            local attn_output, attention = self:attention_net(output, final_hidden_state)
            return self.out(attn_output), attention
        end

        local model = BiLSTM_Attention()
        local criterion = nn.CrossEntropyLoss()
        local optimizer = optim.Adam(model:parameters(), { lr = 0.01 })

        local inputs = tide.LongTensor(map(sentences, function(sen)
            return map(split(sen), function(n) return word_dict[n] end)
        end))
        local targets = tide.LongTensor(map(labels, function(out) return out + 1 end))

        local losses, attention = {}, nil
        for _ = 0, 19 do
            optimizer:zero_grad()
            local output
            output, attention = model(inputs)
            local loss = criterion(output, targets)
            losses[#losses + 1] = loss:item()
            loss:backward()
            optimizer:step()
        end
        assert_finite(losses[#losses], "loss")
        assert.is_true(losses[#losses] < losses[1])
        assert.equal(6, #attention)
        assert.equal(3, #attention[1])

        local test_text = "sorry hate you"
        local tests = { map(split(test_text), function(n) return word_dict[n] end) }
        local test_batch = tide.LongTensor(tests)
        local predict = model(test_batch)
        local _
        _, predict = predict.data:max(2, { keepdim = true })
        assert.same({ 1, 1 }, predict:size())
    end)
end)

---------------------------------------------------------------------------------------------
-- 10. 5-1.Transformer/Transformer.py (d_model 512, d_ff 2048, 6 layers, 8 heads of 64 shrunk)
---------------------------------------------------------------------------------------------
describe("nlp-tutorial 5-1.Transformer", function()
    -- vocabularies: ids 1-based, so the pad 'P' (0 in the script) is 1 and eq(0) is eq(1)
    local sentences = { "ich mochte ein bier P", "S i want a beer", "i want a beer E" }
    local src_vocab = { P = 1, ich = 2, mochte = 3, ein = 4, bier = 5 }
    local src_vocab_size = 5
    local tgt_vocab = { P = 1, i = 2, want = 3, a = 4, beer = 5, S = 6, E = 7 }
    local number_dict = { "P", "i", "want", "a", "beer", "S", "E" }
    local tgt_vocab_size = 7
    local src_len, tgt_len = 5, 5
    local d_model, d_ff = 16, 32
    local d_k, d_v = 8, 8
    local n_layers, n_heads = 2, 2

    local function make_batch(sentences_)
        local input_batch = { map(split(sentences_[1]), function(n) return src_vocab[n] end) }
        local output_batch = { map(split(sentences_[2]), function(n) return tgt_vocab[n] end) }
        local target_batch = { map(split(sentences_[3]), function(n) return tgt_vocab[n] end) }
        return tide.LongTensor(input_batch), tide.LongTensor(output_batch), tide.LongTensor(target_batch)
    end

    local function get_sinusoid_encoding_table(n_position, d_model_)
        local function cal_angle(position, hid_idx)
            -- position / np.power(10000, 2 * (hid_idx // 2) / d_model)
            return position / 10000 ^ (2 * math.floor(hid_idx / 2) / d_model_)
        end
        local function get_posi_angle_vec(position)
            local out = {}
            for hid_j = 0, d_model_ - 1 do
                out[#out + 1] = cal_angle(position, hid_j)
            end
            return out
        end
        local rows = {}
        for pos_i = 0, n_position - 1 do
            rows[#rows + 1] = get_posi_angle_vec(pos_i)
        end
        local sinusoid_table = tide.tensor(rows, { dtype = tide.float64 })
        -- sinusoid_table[:, 0::2] = np.sin(sinusoid_table[:, 0::2])
        sinusoid_table[{ {}, { 1, -1, 2 } }] = tide.sin(sinusoid_table[{ {}, { 1, -1, 2 } }])
        sinusoid_table[{ {}, { 2, -1, 2 } }] = tide.cos(sinusoid_table[{ {}, { 2, -1, 2 } }])
        -- return torch.FloatTensor(sinusoid_table): a float64 tensor (NumPy's array here) to float32
        -- (torch.FloatTensor of a float64 tensor raises in PyTorch as in tide)
        return sinusoid_table:float()
    end

    local function get_attn_pad_mask(seq_q, seq_k)
        -- batch_size, len_q = seq_q.size()
        local batch_size, len_q = unpack(seq_q:size())
        local _, len_k = unpack(seq_k:size())
        -- pad_attn_mask = seq_k.data.eq(0).unsqueeze(1): the pad id is 1
        local pad_attn_mask = seq_k.data:eq(1):unsqueeze(2)
        return pad_attn_mask:expand(batch_size, len_q, len_k)
    end

    local function get_attn_subsequent_mask(seq)
        local attn_shape = { seq:size(1), seq:size(2), seq:size(2) }
        -- subsequent_mask = np.triu(np.ones(attn_shape), k=1)
        local subsequent_mask = tide.triu(tide.ones(attn_shape), { diagonal = 1 })
        -- subsequent_mask = torch.from_numpy(subsequent_mask).byte()
        subsequent_mask = subsequent_mask:byte()
        return subsequent_mask
    end

    local ScaledDotProductAttention = nn.Module:extend("ScaledDotProductAttention")
    function ScaledDotProductAttention:forward(Q, K, V, attn_mask)
        -- scores = torch.matmul(Q, K.transpose(-1, -2)) / np.sqrt(d_k)
        local scores = tide.matmul(Q, K:transpose(-1, -2)) / math.sqrt(d_k)
        scores:masked_fill_(attn_mask, -1e9)
        -- attn = nn.Softmax(dim=-1)(scores)
        local attn = nn.Softmax({ dim = -1 })(scores)
        local context = tide.matmul(attn, V)
        return context, attn
    end

    local MultiHeadAttention = nn.Module:extend("MultiHeadAttention")
    function MultiHeadAttention:init()
        self.W_Q = nn.Linear(d_model, d_k * n_heads)
        self.W_K = nn.Linear(d_model, d_k * n_heads)
        self.W_V = nn.Linear(d_model, d_v * n_heads)
        self.linear = nn.Linear(n_heads * d_v, d_model)
        self.layer_norm = nn.LayerNorm(d_model)
    end

    function MultiHeadAttention:forward(Q, K, V, attn_mask)
        -- residual, batch_size = Q, Q.size(0)
        local residual, batch_size = Q, Q:size(1)
        -- q_s = self.W_Q(Q).view(batch_size, -1, n_heads, d_k).transpose(1,2)
        local q_s = self.W_Q(Q):view(batch_size, -1, n_heads, d_k):transpose(2, 3)
        local k_s = self.W_K(K):view(batch_size, -1, n_heads, d_k):transpose(2, 3)
        local v_s = self.W_V(V):view(batch_size, -1, n_heads, d_v):transpose(2, 3)
        -- attn_mask = attn_mask.unsqueeze(1).repeat(1, n_heads, 1, 1) (repeat is a Lua keyword)
        attn_mask = attn_mask:unsqueeze(2)["repeat"](attn_mask:unsqueeze(2), 1, n_heads, 1, 1)
        local context, attn = ScaledDotProductAttention()(q_s, k_s, v_s, attn_mask)
        -- context = context.transpose(1, 2).contiguous().view(batch_size, -1, n_heads * d_v)
        context = context:transpose(2, 3):contiguous():view(batch_size, -1, n_heads * d_v)
        local output = self.linear(context)
        return self.layer_norm(output + residual), attn
    end

    local PoswiseFeedForwardNet = nn.Module:extend("PoswiseFeedForwardNet")
    function PoswiseFeedForwardNet:init()
        -- nn.Conv1d(in_channels=d_model, out_channels=d_ff, kernel_size=1)
        self.conv1 = nn.Conv1d({ in_channels = d_model, out_channels = d_ff, kernel_size = 1 })
        self.conv2 = nn.Conv1d({ in_channels = d_ff, out_channels = d_model, kernel_size = 1 })
        self.layer_norm = nn.LayerNorm(d_model)
    end

    function PoswiseFeedForwardNet:forward(inputs)
        local residual = inputs
        -- output = nn.ReLU()(self.conv1(inputs.transpose(1, 2)))
        local output = nn.ReLU()(self.conv1(inputs:transpose(2, 3)))
        output = self.conv2(output):transpose(2, 3)
        return self.layer_norm(output + residual)
    end

    local EncoderLayer = nn.Module:extend("EncoderLayer")
    function EncoderLayer:init()
        self.enc_self_attn = MultiHeadAttention()
        self.pos_ffn = PoswiseFeedForwardNet()
    end

    function EncoderLayer:forward(enc_inputs, enc_self_attn_mask)
        local enc_outputs, attn = self.enc_self_attn(enc_inputs, enc_inputs, enc_inputs, enc_self_attn_mask)
        enc_outputs = self.pos_ffn(enc_outputs)
        return enc_outputs, attn
    end

    local DecoderLayer = nn.Module:extend("DecoderLayer")
    function DecoderLayer:init()
        self.dec_self_attn = MultiHeadAttention()
        self.dec_enc_attn = MultiHeadAttention()
        self.pos_ffn = PoswiseFeedForwardNet()
    end

    function DecoderLayer:forward(dec_inputs, enc_outputs, dec_self_attn_mask, dec_enc_attn_mask)
        local dec_outputs, dec_self_attn = self.dec_self_attn(dec_inputs, dec_inputs, dec_inputs, dec_self_attn_mask)
        local dec_enc_attn
        dec_outputs, dec_enc_attn = self.dec_enc_attn(dec_outputs, enc_outputs, enc_outputs, dec_enc_attn_mask)
        dec_outputs = self.pos_ffn(dec_outputs)
        return dec_outputs, dec_self_attn, dec_enc_attn
    end

    local Encoder = nn.Module:extend("Encoder")
    function Encoder:init()
        self.src_emb = nn.Embedding(src_vocab_size, d_model)
        -- nn.Embedding.from_pretrained(get_sinusoid_encoding_table(src_len+1, d_model),freeze=True)
        self.pos_emb = nn.Embedding.from_pretrained(get_sinusoid_encoding_table(src_len + 1, d_model), { freeze = true })
        -- self.layers = nn.ModuleList([EncoderLayer() for _ in range(n_layers)])
        local layers = {}
        for _ = 1, n_layers do
            layers[#layers + 1] = EncoderLayer()
        end
        self.layers = nn.ModuleList(layers)
    end

    function Encoder:forward(enc_inputs)
        -- self.src_emb(enc_inputs) + self.pos_emb(torch.LongTensor([[1,2,3,4,0]])): positions + 1
        local enc_outputs = self.src_emb(enc_inputs) + self.pos_emb(tide.LongTensor({ { 2, 3, 4, 5, 1 } }))
        local enc_self_attn_mask = get_attn_pad_mask(enc_inputs, enc_inputs)
        local enc_self_attns = {}
        for _, layer in ipairs(self.layers) do
            local enc_self_attn
            enc_outputs, enc_self_attn = layer(enc_outputs, enc_self_attn_mask)
            enc_self_attns[#enc_self_attns + 1] = enc_self_attn
        end
        return enc_outputs, enc_self_attns
    end

    local Decoder = nn.Module:extend("Decoder")
    function Decoder:init()
        self.tgt_emb = nn.Embedding(tgt_vocab_size, d_model)
        self.pos_emb = nn.Embedding.from_pretrained(get_sinusoid_encoding_table(tgt_len + 1, d_model), { freeze = true })
        local layers = {}
        for _ = 1, n_layers do
            layers[#layers + 1] = DecoderLayer()
        end
        self.layers = nn.ModuleList(layers)
    end

    function Decoder:forward(dec_inputs, enc_inputs, enc_outputs)
        -- self.tgt_emb(dec_inputs) + self.pos_emb(torch.LongTensor([[5,1,2,3,4]]))
        local dec_outputs = self.tgt_emb(dec_inputs) + self.pos_emb(tide.LongTensor({ { 6, 2, 3, 4, 5 } }))
        local dec_self_attn_pad_mask = get_attn_pad_mask(dec_inputs, dec_inputs)
        local dec_self_attn_subsequent_mask = get_attn_subsequent_mask(dec_inputs)
        local dec_self_attn_mask = tide.gt((dec_self_attn_pad_mask + dec_self_attn_subsequent_mask), 0)
        local dec_enc_attn_mask = get_attn_pad_mask(dec_inputs, enc_inputs)
        local dec_self_attns, dec_enc_attns = {}, {}
        for _, layer in ipairs(self.layers) do
            local dec_self_attn, dec_enc_attn
            dec_outputs, dec_self_attn, dec_enc_attn = layer(dec_outputs, enc_outputs, dec_self_attn_mask, dec_enc_attn_mask)
            dec_self_attns[#dec_self_attns + 1] = dec_self_attn
            dec_enc_attns[#dec_enc_attns + 1] = dec_enc_attn
        end
        return dec_outputs, dec_self_attns, dec_enc_attns
    end

    local Transformer = nn.Module:extend("Transformer")
    function Transformer:init()
        self.encoder = Encoder()
        self.decoder = Decoder()
        self.projection = nn.Linear(d_model, tgt_vocab_size, { bias = false })
    end

    function Transformer:forward(enc_inputs, dec_inputs)
        local enc_outputs, enc_self_attns = self.encoder(enc_inputs)
        local dec_outputs, dec_self_attns, dec_enc_attns = self.decoder(dec_inputs, enc_inputs, enc_outputs)
        local dec_logits = self.projection(dec_outputs)
        return dec_logits:view(-1, dec_logits:size(-1)), enc_self_attns, dec_self_attns, dec_enc_attns
    end

    local function showgraph(attn)
        -- attn = attn[-1].squeeze(0)[0]
        attn = attn[#attn]:squeeze(1)[1]
        -- attn = attn.squeeze(0).data.numpy() (the values as a Lua list: tide has no NumPy)
        return attn:squeeze(1).data:tolist()
    end

    it("get_sinusoid_encoding_table: PyTorch's (NumPy's) values", function()
        ported.assert_close_list({ 0.0, 1.0, 0.0, 1.0, 0.8414709568023682, 0.5403022766113281,
            0.009999833069741726, 0.9999499917030334, 0.9092974066734314, -0.416146844625473,
            0.019998665899038315, 0.9998000264167786 }, get_sinusoid_encoding_table(3, 4):view(-1):tolist(),
            1e-6, "sinusoid table")
    end)

    it("nn.Embedding.from_pretrained(t, freeze=True) shares t, frozen; positional freeze and padding_idx", function()
        local w = tide.arange(6):float():view(3, 2)
        local e = nn.Embedding.from_pretrained(w)
        assert.is_false(e.weight.requires_grad)
        assert.same({ { 4, 5 }, { 0, 1 } }, e(tide.tensor({ 3, 1 })):tolist())
        -- nn.Embedding.from_pretrained(w, False, 0): by position, padding_idx 1-based, row kept
        local e2 = nn.Embedding.from_pretrained(w, false, 1)
        assert.is_true(e2.weight.requires_grad)
        assert.equal(1, e2.padding_idx)
        assert.same({ 0, 1 }, e2.weight[1]:tolist())
        -- the weight is w itself (PyTorch's _weight=embeddings): an update shows in w
        local e3 = nn.Embedding.from_pretrained(w, { freeze = false })
        e3.weight.data:add_(1)
        assert.same({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, w:tolist())
        -- nn.EmbeddingBag.from_pretrained(w, True, None, 2.0, False, 'sum') (PyTorch: [[4., 6.]]
        -- on the updated w)
        local bag = nn.EmbeddingBag.from_pretrained(w, true, nil, 2.0, false, "sum")
        assert.same({ { 4, 6 } }, bag(tide.tensor({ { 1, 2 } })):tolist())
        w = tide.arange(6):float():view(3, 2)
        -- nn.Embedding(3, 2, _weight=w) draws no random numbers
        tide.manual_seed(5)
        local a = tide.rand(1):item()
        tide.manual_seed(5)
        local e4 = nn.Embedding(3, 2, { _weight = w })
        assert.equal(a, tide.rand(1):item())
        assert.same(w:tolist(), e4.weight:tolist())
        -- bad input raises naming the value and the fix
        assert.has_error(function() nn.Embedding.from_pretrained(tide.ones(3)) end,
            "tide: Embedding.from_pretrained: Embeddings parameter is expected to be 2-dimensional " ..
            "(num_embeddings x embedding_dim), got a tensor of shape [3]")
        assert.has_error(function() nn.Embedding.from_pretrained(w, "yes") end,
            "tide: Embedding.from_pretrained: expected freeze to be a boolean, got yes")
        assert.has_error(function() nn.Embedding(4, 2, { _weight = w }) end,
            "tide: Embedding: Shape of weight does not match num_embeddings and embedding_dim: " ..
            "_weight has shape [3, 2], expected [4, 2]")
        assert.has_error(function() nn.Embedding.from_pretrained(w, true, { freeze = false }) end,
            "tide: Embedding.from_pretrained: freeze given both by position and by name; give it once")
    end)

    it("Transformer: pad and subsequent masks, from_pretrained positions, 2 layers, Adam", function()
        tide.manual_seed(0)
        local model = Transformer()
        local criterion = nn.CrossEntropyLoss()
        local optimizer = optim.Adam(model:parameters(), { lr = 0.001 })
        local enc_inputs, dec_inputs, target_batch = make_batch(sentences)
        -- the frozen position tables are parameters without grad, as PyTorch's
        assert.is_false(model.encoder.pos_emb.weight.requires_grad)

        local losses = {}
        for _ = 0, 4 do
            optimizer:zero_grad()
            local outputs = model(enc_inputs, dec_inputs)
            -- loss = criterion(outputs, target_batch.contiguous().view(-1))
            local loss = criterion(outputs, target_batch:contiguous():view(-1))
            losses[#losses + 1] = loss:item()
            loss:backward()
            optimizer:step()
        end
        assert_finite(losses[#losses], "loss")
        assert.is_true(losses[#losses] < losses[1])

        -- predict, _, _, _ = model(enc_inputs, dec_inputs)
        local predict, enc_self_attns, dec_self_attns, dec_enc_attns = model(enc_inputs, dec_inputs)
        local _
        _, predict = predict.data:max(2, { keepdim = true })
        local out = {}
        for _, n in ipairs(predict:squeeze():unbind()) do
            out[#out + 1] = number_dict[n:item()]
        end
        assert.equal(5, #out)
        -- the decoder's self-attention never looks ahead: the first row's weights after it are 0
        local first = showgraph(dec_self_attns)
        assert.equal(5, #first)
        for j = 2, 5 do
            assert.is_true(first[1][j] < 1e-6)
        end
        -- the encoder's attention leaves the pad (the 5th source word) out
        local enc = showgraph(enc_self_attns)
        assert.is_true(enc[1][5] < 1e-6)
        assert.equal(5, #showgraph(dec_enc_attns))
    end)
end)

---------------------------------------------------------------------------------------------
-- 11. 5-2.BERT/BERT.py (d_model 768, 6 layers, 12 heads shrunk; Python's random module is a
-- seeded LCG so that the batch is the same on every Lua)
---------------------------------------------------------------------------------------------
describe("nlp-tutorial 5-2.BERT", function()
    -- Python's random: randrange(n) (0-based), random(), randint(a, b), shuffle(xs)
    local state = 12345
    local function random()
        state = (state * 1103515245 + 12345) % 2147483648
        return state / 2147483648
    end
    local function randrange(n)
        return math.floor(random() * n)
    end
    local function randint(a, b)
        return a + randrange(b - a + 1)
    end
    local function shuffle(xs)
        for i = #xs, 2, -1 do
            local j = randrange(i) + 1
            xs[i], xs[j] = xs[j], xs[i]
        end
    end

    local function gelu(x)
        -- "Implementation of the gelu activation function by Hugging Face"
        return x * 0.5 * (1.0 + tide.erf(x / math.sqrt(2.0)))
    end

    it("gelu via erf: PyTorch's values", function()
        local x = tide.tensor({ -1.5, -0.2, 0.3, 2.0 })
        ported.assert_close_list({ -0.1002107709646225, -0.08414805680513382, 0.1853734403848648,
            1.9544997215270996 }, gelu(x):tolist(), 1e-6, "gelu")
    end)

    it("BERT: masked LM + next sentence, get_attn_pad_mask, gather of masked positions, tied decoder", function()
        tide.manual_seed(0)
        local maxlen, batch_size, max_pred = 30, 6, 5
        local n_layers, n_heads, d_model = 2, 2, 16
        local d_ff = 16 * 4
        local d_k, d_v = 8, 8
        local n_segments = 2
        local text = "Hello, how are you? I am Romeo.\n" ..
            "Hello, Romeo My name is Juliet. Nice to meet you.\n" ..
            "Nice meet you too. How are you today?\n" ..
            "Great. My baseball team won the competition.\n" ..
            "Oh Congratulations, Juliet\n" ..
            "Thanks you Romeo"
        -- sentences = re.sub("[.,!?\\-]", '', text.lower()).split('\n')
        local sentences = {}
        for line in (text:lower():gsub("[%.,!%?%-]", "") .. "\n"):gmatch("(.-)\n") do
            sentences[#sentences + 1] = line
        end
        local word_list = set_list(join_split(sentences))
        -- word_dict = {'[PAD]': 0, '[CLS]': 1, '[SEP]': 2, '[MASK]': 3}: ids 1-based
        local word_dict = { ["[PAD]"] = 1, ["[CLS]"] = 2, ["[SEP]"] = 3, ["[MASK]"] = 4 }
        local number_dict = { "[PAD]", "[CLS]", "[SEP]", "[MASK]" }
        for i, w in ipairs(word_list) do
            word_dict[w] = i + 4
            number_dict[i + 4] = w
        end
        local vocab_size = #number_dict
        local token_list = {}
        for _, sentence in ipairs(sentences) do
            local arr = map(split(sentence), function(s) return word_dict[s] end)
            token_list[#token_list + 1] = arr
        end

        local function make_batch()
            local batch = {}
            local positive, negative = 0, 0
            while positive ~= batch_size / 2 or negative ~= batch_size / 2 do
                local tokens_a_index, tokens_b_index = randrange(#sentences), randrange(#sentences)
                local tokens_a, tokens_b = token_list[tokens_a_index + 1], token_list[tokens_b_index + 1]
                -- input_ids = [word_dict['[CLS]']] + tokens_a + [word_dict['[SEP]']] + tokens_b + [word_dict['[SEP]']]
                local input_ids = { word_dict["[CLS]"] }
                for _, t in ipairs(tokens_a) do input_ids[#input_ids + 1] = t end
                input_ids[#input_ids + 1] = word_dict["[SEP]"]
                for _, t in ipairs(tokens_b) do input_ids[#input_ids + 1] = t end
                input_ids[#input_ids + 1] = word_dict["[SEP]"]
                -- segment_ids = [0] * (1 + len(tokens_a) + 1) + [1] * (len(tokens_b) + 1): ids 1 and 2
                local segment_ids = {}
                for _ = 1, 1 + #tokens_a + 1 do segment_ids[#segment_ids + 1] = 1 end
                for _ = 1, #tokens_b + 1 do segment_ids[#segment_ids + 1] = 2 end
                -- n_pred = min(max_pred, max(1, int(round(len(input_ids) * 0.15))))
                local n_pred = math.min(max_pred, math.max(1, math.floor(#input_ids * 0.15 + 0.5)))
                local cand_maked_pos = {}
                for i, token in ipairs(input_ids) do
                    if token ~= word_dict["[CLS]"] and token ~= word_dict["[SEP]"] then
                        cand_maked_pos[#cand_maked_pos + 1] = i
                    end
                end
                shuffle(cand_maked_pos)
                local masked_tokens, masked_pos = {}, {}
                for _, pos in ipairs(slice(cand_maked_pos, 1, n_pred)) do
                    masked_pos[#masked_pos + 1] = pos
                    masked_tokens[#masked_tokens + 1] = input_ids[pos]
                    if random() < 0.8 then
                        input_ids[pos] = word_dict["[MASK]"]
                    elseif random() < 0.5 then
                        -- index = randint(0, vocab_size - 1)
                        local index = randint(1, vocab_size)
                        input_ids[pos] = word_dict[number_dict[index]]
                    end
                end
                -- Zero Paddings: [PAD] is id 1, and a padded masked position points at [CLS] (1)
                local n_pad = maxlen - #input_ids
                for _ = 1, n_pad do
                    input_ids[#input_ids + 1] = 1
                    segment_ids[#segment_ids + 1] = 1
                end
                if max_pred > n_pred then
                    n_pad = max_pred - n_pred
                    for _ = 1, n_pad do
                        masked_tokens[#masked_tokens + 1] = 1
                        masked_pos[#masked_pos + 1] = 1
                    end
                end
                if tokens_a_index + 1 == tokens_b_index and positive < batch_size / 2 then
                    batch[#batch + 1] = { input_ids, segment_ids, masked_tokens, masked_pos, true }
                    positive = positive + 1
                elseif tokens_a_index + 1 ~= tokens_b_index and negative < batch_size / 2 then
                    batch[#batch + 1] = { input_ids, segment_ids, masked_tokens, masked_pos, false }
                    negative = negative + 1
                end
            end
            return batch
        end

        local function get_attn_pad_mask(seq_q, seq_k)
            local batch_size_, len_q = unpack(seq_q:size())
            local _, len_k = unpack(seq_k:size())
            -- seq_k.data.eq(0).unsqueeze(1): [PAD] is id 1
            local pad_attn_mask = seq_k.data:eq(1):unsqueeze(2)
            return pad_attn_mask:expand(batch_size_, len_q, len_k)
        end

        local Embedding = nn.Module:extend("Embedding")
        function Embedding:init()
            self.tok_embed = nn.Embedding(vocab_size, d_model)
            self.pos_embed = nn.Embedding(maxlen, d_model)
            self.seg_embed = nn.Embedding(n_segments, d_model)
            self.norm = nn.LayerNorm(d_model)
        end

        function Embedding:forward(x, seg)
            local seq_len = x:size(2)
            -- pos = torch.arange(seq_len, dtype=torch.long): positions 1..seq_len
            local pos = tide.arange(1, seq_len + 1, { dtype = tide.long })
            pos = pos:unsqueeze(1):expand_as(x)
            local embedding = self.tok_embed(x) + self.pos_embed(pos) + self.seg_embed(seg)
            return self.norm(embedding)
        end

        local ScaledDotProductAttention = nn.Module:extend("ScaledDotProductAttention")
        function ScaledDotProductAttention:forward(Q, K, V, attn_mask)
            local scores = tide.matmul(Q, K:transpose(-1, -2)) / math.sqrt(d_k)
            scores:masked_fill_(attn_mask, -1e9)
            local attn = nn.Softmax({ dim = -1 })(scores)
            local context = tide.matmul(attn, V)
            return context, attn
        end

        local MultiHeadAttention = nn.Module:extend("MultiHeadAttention")
        function MultiHeadAttention:init()
            self.W_Q = nn.Linear(d_model, d_k * n_heads)
            self.W_K = nn.Linear(d_model, d_k * n_heads)
            self.W_V = nn.Linear(d_model, d_v * n_heads)
        end

        function MultiHeadAttention:forward(Q, K, V, attn_mask)
            local residual, batch_size_ = Q, Q:size(1)
            local q_s = self.W_Q(Q):view(batch_size_, -1, n_heads, d_k):transpose(2, 3)
            local k_s = self.W_K(K):view(batch_size_, -1, n_heads, d_k):transpose(2, 3)
            local v_s = self.W_V(V):view(batch_size_, -1, n_heads, d_v):transpose(2, 3)
            attn_mask = attn_mask:unsqueeze(2)["repeat"](attn_mask:unsqueeze(2), 1, n_heads, 1, 1)
            local context, attn = ScaledDotProductAttention()(q_s, k_s, v_s, attn_mask)
            context = context:transpose(2, 3):contiguous():view(batch_size_, -1, n_heads * d_v)
            -- output = nn.Linear(n_heads * d_v, d_model)(context): a new (untrained) layer each call, as written
            local output = nn.Linear(n_heads * d_v, d_model)(context)
            return nn.LayerNorm(d_model)(output + residual), attn
        end

        local PoswiseFeedForwardNet = nn.Module:extend("PoswiseFeedForwardNet")
        function PoswiseFeedForwardNet:init()
            self.fc1 = nn.Linear(d_model, d_ff)
            self.fc2 = nn.Linear(d_ff, d_model)
        end

        function PoswiseFeedForwardNet:forward(x)
            return self.fc2(gelu(self.fc1(x)))
        end

        local EncoderLayer = nn.Module:extend("EncoderLayer")
        function EncoderLayer:init()
            self.enc_self_attn = MultiHeadAttention()
            self.pos_ffn = PoswiseFeedForwardNet()
        end

        function EncoderLayer:forward(enc_inputs, enc_self_attn_mask)
            local enc_outputs, attn = self.enc_self_attn(enc_inputs, enc_inputs, enc_inputs, enc_self_attn_mask)
            enc_outputs = self.pos_ffn(enc_outputs)
            return enc_outputs, attn
        end

        local BERT = nn.Module:extend("BERT")
        function BERT:init()
            self.embedding = Embedding()
            local layers = {}
            for _ = 1, n_layers do
                layers[#layers + 1] = EncoderLayer()
            end
            self.layers = nn.ModuleList(layers)
            self.fc = nn.Linear(d_model, d_model)
            self.activ1 = nn.Tanh()
            self.linear = nn.Linear(d_model, d_model)
            self.activ2 = gelu
            self.norm = nn.LayerNorm(d_model)
            self.classifier = nn.Linear(d_model, 2)
            -- decoder is shared with embedding layer
            local embed_weight = self.embedding.tok_embed.weight
            -- n_vocab, n_dim = embed_weight.size()
            local n_vocab, n_dim = unpack(embed_weight:size())
            self.decoder = nn.Linear(n_dim, n_vocab, { bias = false })
            self.decoder.weight = embed_weight
            self.decoder_bias = nn.Parameter(tide.zeros(n_vocab))
        end

        function BERT:forward(input_ids, segment_ids, masked_pos)
            local output = self.embedding(input_ids, segment_ids)
            local enc_self_attn_mask = get_attn_pad_mask(input_ids, input_ids)
            for _, layer in ipairs(self.layers) do
                output = layer(output, enc_self_attn_mask)
            end
            -- h_pooled = self.activ1(self.fc(output[:, 0]))
            local h_pooled = self.activ1(self.fc(output[{ {}, 1 }]))
            local logits_clsf = self.classifier(h_pooled)
            -- masked_pos = masked_pos[:, :, None].expand(-1, -1, output.size(-1))
            masked_pos = masked_pos[{ {}, {}, tide.newaxis }]:expand(-1, -1, output:size(-1))
            -- h_masked = torch.gather(output, 1, masked_pos)
            local h_masked = tide.gather(output, 2, masked_pos)
            h_masked = self.norm(self.activ2(self.linear(h_masked)))
            local logits_lm = self.decoder(h_masked) + self.decoder_bias
            return logits_lm, logits_clsf
        end

        local model = BERT()
        -- the tied decoder weight is the token embedding itself, listed once
        assert.equal(model.embedding.tok_embed.weight, model.decoder.weight)
        local seen, n_params = {}, 0
        for _, p in ipairs(model:parameters()) do
            assert.is_nil(seen[p])
            seen[p] = true
            n_params = n_params + 1
        end
        assert.is_true(n_params > 0)
        local criterion = nn.CrossEntropyLoss()
        local optimizer = optim.Adam(model:parameters(), { lr = 0.001 })

        local batch = make_batch()
        assert.equal(batch_size, #batch)
        -- input_ids, segment_ids, masked_tokens, masked_pos, isNext = map(torch.LongTensor, zip(*batch))
        local function column(k)
            return tide.LongTensor(map(batch, function(row) return row[k] end))
        end
        local input_ids, segment_ids, masked_tokens, masked_pos = column(1), column(2), column(3), column(4)
        -- isNext: True/False as classes 2/1
        local isNext = column(5) + 1
        assert.same({ batch_size, maxlen }, input_ids:size())
        assert.same({ batch_size, max_pred }, masked_pos:size())
        assert.same({ 3, 3 }, { isNext:eq(2):sum():item(), isNext:eq(1):sum():item() })

        local grads_seen = false
        for _ = 0, 2 do
            optimizer:zero_grad()
            local logits_lm, logits_clsf = model(input_ids, segment_ids, masked_pos)
            assert.same({ batch_size, max_pred, vocab_size }, logits_lm:size())
            -- loss_lm = criterion(logits_lm.transpose(1, 2), masked_tokens)
            local loss_lm = criterion(logits_lm:transpose(2, 3), masked_tokens)
            loss_lm = (loss_lm:float()):mean()
            local loss_clsf = criterion(logits_clsf, isNext)
            local loss = loss_lm + loss_clsf
            assert_finite(loss:item(), "loss")
            loss:backward()
            -- the tied weight gets the embedding's and the decoder's gradients together
            grads_seen = model.decoder.weight.grad:abs():sum():item() > 0
            optimizer:step()
        end
        assert.is_true(grads_seen)

        -- Predict mask tokens and isNext: zip(batch[0]) is the first sample
        input_ids, segment_ids, masked_tokens, masked_pos = tide.LongTensor({ batch[1][1] }),
            tide.LongTensor({ batch[1][2] }), tide.LongTensor({ batch[1][3] }), tide.LongTensor({ batch[1][4] })
        local isNext1 = batch[1][5]
        -- [number_dict[w.item()] for w in input_ids[0] if number_dict[w.item()] != '[PAD]']
        local words = {}
        for _, w in ipairs(input_ids[1]:unbind()) do
            if number_dict[w:item()] ~= "[PAD]" then
                words[#words + 1] = number_dict[w:item()]
            end
        end
        assert.equal("[CLS]", words[1])
        local logits_lm, logits_clsf = model(input_ids, segment_ids, masked_pos)
        -- logits_lm = logits_lm.data.max(2)[1][0].data.numpy()
        local _, lm_ids = logits_lm.data:max(3)
        logits_lm = lm_ids[1].data:tolist()
        assert.equal(max_pred, #logits_lm)
        -- logits_clsf = logits_clsf.data.max(1)[1].data.numpy()[0]
        local _, clsf_ids = logits_clsf.data:max(2)
        logits_clsf = clsf_ids.data:tolist()[1]
        assert.is_true(logits_clsf == 1 or logits_clsf == 2)
        assert.is_boolean(isNext1)
    end)
end)
