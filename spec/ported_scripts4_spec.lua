-- ported_scripts4_spec.lua — three PyTorch tutorials ported line for line: "Spatial Transformer
-- Networks" (intermediate/spatial_transformer_tutorial.py: affine_grid, grid_sample, .data
-- writes into a Sequential's layer), "NLP From Scratch: Translation with a Sequence to Sequence
-- Network and Attention" (intermediate/seq2seq_translation_tutorial.py: EncoderRNN,
-- BahdanauAttention, AttnDecoderRNN, two Adam optimizers) and "Language Modeling with
-- nn.Transformer" (beginner/transformer_tutorial.py: PositionalEncoding's register_buffer,
-- TransformerEncoder with a square subsequent mask, batchify/get_batch, clip_grad_norm_, StepLR).
-- Each port keeps the script's layers, calls and keyword arguments (a Python keyword is a name
-- in a trailing table), shrunk to tiny sizes and random data, and runs a few training steps.
-- The Python line stands above each Lua line that differs from it; a line tide cannot write as
-- Python does is marked `-- GAP:`. Dims, indices and class targets are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite

local function max_abs_diff(a, b)
    return (a - b):abs():max():item()
end

-- a stderr stand-in that keeps what tide warns
local function capture_stderr(f)
    local saved, out = io.stderr, {}
    io.stderr = { write = function(_, ...) -- luacheck: ignore
        for i = 1, select("#", ...) do
            out[#out + 1] = tostring(select(i, ...))
        end
    end }
    local ok, err = pcall(f)
    io.stderr = saved -- luacheck: ignore
    if not ok then
        error(err, 0)
    end
    return table.concat(out)
end

---------------------------------------------------------------------------------------------
-- 1. intermediate/spatial_transformer_tutorial.py
---------------------------------------------------------------------------------------------
describe("spatial_transformer_tutorial.py", function()
    -- class Net(nn.Module):
    local Net = nn.Module:extend("Net")
    function Net:init()
        -- self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv1 = nn.Conv2d(1, 10, { kernel_size = 5 })
        self.conv2 = nn.Conv2d(10, 20, { kernel_size = 5 })
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

        -- Spatial transformer localization-network
        self.localization = nn.Sequential(
            -- nn.Conv2d(1, 8, kernel_size=7),
            nn.Conv2d(1, 8, { kernel_size = 7 }),
            -- nn.MaxPool2d(2, stride=2),
            nn.MaxPool2d(2, { stride = 2 }),
            nn.ReLU(true),
            nn.Conv2d(8, 10, { kernel_size = 5 }),
            nn.MaxPool2d(2, { stride = 2 }),
            nn.ReLU(true)
        )

        -- Regressor for the 3 * 2 affine matrix
        self.fc_loc = nn.Sequential(
            nn.Linear(10 * 3 * 3, 32),
            nn.ReLU(true),
            nn.Linear(32, 3 * 2)
        )

        -- Initialize the weights/bias with identity transformation
        -- self.fc_loc[2].weight.data.zero_()
        self.fc_loc[3].weight.data:zero_()
        -- self.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))
        self.fc_loc[3].bias.data:copy_(tide.tensor({ 1, 0, 0, 0, 1, 0 }, { dtype = tide.float }))
    end

    -- Spatial transformer network forward function
    function Net:stn(x)
        local xs = self.localization(x)
        -- xs = xs.view(-1, 10 * 3 * 3)
        xs = xs:view(-1, 10 * 3 * 3)
        local theta = self.fc_loc(xs)
        theta = theta:view(-1, 2, 3)

        -- grid = F.affine_grid(theta, x.size())
        local grid = F.affine_grid(theta, x:size())
        x = F.grid_sample(x, grid)

        return x
    end

    function Net:forward(x)
        -- transform the input
        x = self:stn(x)

        -- Perform the usual forward pass
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x:view(-1, 320)
        x = F.relu(self.fc1(x))
        -- x = F.dropout(x, training=self.training)
        x = F.dropout(x, { training = self.training })
        x = self.fc2(x)
        -- return F.log_softmax(x, dim=1)
        return F.log_softmax(x, { dim = 2 })
    end

    it("Net: identity-initialized fc_loc, stn, nll_loss with SGD, test loop", function()
        tide.manual_seed(0)
        -- device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        local device = tide.device("cpu")
        -- datasets.MNIST with ToTensor() and Normalize((0.1307,), (0.3081,)): 8 random 1x28x28
        -- images, 1-based labels, batch 4
        local images = (tide.rand(8, 1, 28, 28) - 0.1307) / 0.3081
        local labels = tide.randint(1, 11, { 8 })
        local ds = tide.data.TensorDataset(images, labels)
        -- train_loader = torch.utils.data.DataLoader(..., batch_size=64, shuffle=True, num_workers=4)
        local train_loader = tide.data.DataLoader(ds, { batch_size = 4, shuffle = true, num_workers = 4 })
        local test_loader = tide.data.DataLoader(ds, { batch_size = 4, shuffle = true, num_workers = 4 })

        -- model = Net().to(device)
        local model = Net():to(device)
        -- the identity initialization: fc_loc's last layer gives theta = [[1, 0, 0], [0, 1, 0]]
        assert.are.equal(0, model.fc_loc[3].weight:abs():sum():item())
        assert.are.same({ 1, 0, 0, 0, 1, 0 }, model.fc_loc[3].bias:tolist())
        assert.is_true(model.fc_loc[3].weight.requires_grad)
        -- so the untrained stn hands the input back (bilinear sampling at the pixel centres)
        tide.no_grad(function()
            local x = images[{ { 1, 4 } }]
            assert.is_true(max_abs_diff(model:stn(x), x) < 1e-5)
        end)

        -- optimizer = optim.SGD(model.parameters(), lr=0.01)
        local optimizer = optim.SGD(model:parameters(), { lr = 0.01 })

        local function train(epoch)
            model:train()
            local losses = {}
            local batch_idx = 0
            -- for batch_idx, (data, target) in enumerate(train_loader):
            for data, target in train_loader:iter() do
                -- data, target = data.to(device), target.to(device)
                data, target = data:to(device), target:to(device)

                optimizer:zero_grad()
                local output = model(data)
                assert.are.same({ 4, 10 }, output.shape)
                local loss = F.nll_loss(output, target)
                loss:backward()
                optimizer:step()
                losses[#losses + 1] = loss:item()
                if batch_idx % 500 == 0 then
                    -- print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                    --     epoch, batch_idx * len(data), len(train_loader.dataset),
                    --     100. * batch_idx / len(train_loader), loss.item()))
                    local line = string.format("Train Epoch: %d [%d/%d (%.0f%%)]\tLoss: %.6f",
                        epoch, batch_idx * #data, train_loader.dataset:len(),
                        100. * batch_idx / train_loader:len(), loss:item())
                    assert.is_truthy(line:find("Train Epoch: " .. epoch, 1, true))
                end
                batch_idx = batch_idx + 1
            end
            return losses
        end

        -- A simple test procedure to measure the STN performances on MNIST.
        local function test()
            local test_loss, correct = 0, 0
            -- with torch.no_grad():
            tide.no_grad(function()
                model:eval()
                for data, target in test_loader:iter() do
                    data, target = data:to(device), target:to(device)
                    local output = model(data)

                    -- sum up batch loss
                    -- test_loss += F.nll_loss(output, target, size_average=False).item()
                    test_loss = test_loss + F.nll_loss(output, target, { size_average = false }):item()
                    -- get the index of the max log-probability
                    -- pred = output.max(1, keepdim=True)[1]
                    -- (a Python tuple's [1] is Lua's second return value)
                    local _, pred = output:max(2, { keepdim = true })
                    assert.are.same({ 4, 1 }, pred.shape)
                    assert.are.equal("int64", pred.dtype)
                    -- correct += pred.eq(target.view_as(pred)).sum().item()
                    correct = correct + pred:eq(target:view_as(pred)):sum():item()
                end
            end)

            -- test_loss /= len(test_loader.dataset)
            test_loss = test_loss / test_loader.dataset:len()
            -- print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'
            --       .format(test_loss, correct, len(test_loader.dataset),
            --               100. * correct / len(test_loader.dataset)))
            return test_loss, correct
        end

        local first, last
        local warned = capture_stderr(function()
            -- for epoch in range(1, 20 + 1):
            for epoch = 1, 3 do
                local losses = train(epoch)
                assert.are.equal(2, #losses)
                for _, l in ipairs(losses) do
                    assert_finite(l, "nll_loss")
                end
                first = first or (losses[1] + losses[2]) / 2
                last = (losses[1] + losses[2]) / 2
                local test_loss, correct = test()
                assert_finite(test_loss, "test_loss")
                assert.is_true(correct >= 0 and correct <= 8)
            end
        end)
        -- size_average=False is PyTorch's legacy reduction="sum", warned about once
        assert.is_truthy(warned:find("please use reduction='sum' instead", 1, true))
        assert.is_true(last < first, "STN loss fell: " .. first .. " -> " .. last)
        -- training moved the localization regressor off the identity
        assert.is_true(model.fc_loc[3].weight:abs():sum():item() > 0)
    end)

    it("affine_grid and grid_sample match PyTorch 1.13 on a fixed theta", function()
        -- x = (torch.arange(16, dtype=torch.float)/16).view(1,1,4,4)
        local x = (tide.arange(16, { dtype = tide.float }) / 16):view(1, 1, 4, 4)
        local theta = tide.tensor({ { { 0.9, 0.1, 0.05 }, { -0.1, 0.8, -0.02 } } })
        local grid = F.affine_grid(theta, x:size())
        local y = F.grid_sample(x, grid)
        local want_grid = tide.tensor({ -0.69999993, -0.54500002, -0.24999999, -0.59500003,
            0.19999997, -0.64499998 })
        assert.is_true(max_abs_diff(grid:view(-1)[{ { 1, 6 } }], want_grid) < 1e-6)
        local want = tide.tensor({ 0.10875000, 0.13999999, 0.17125000, 0.20249999, 0.31500003,
            0.34625000, 0.37750000, 0.40875003, 0.52124995, 0.55250001, 0.58374995, 0.61500001,
            0.72749996, 0.75874996, 0.79000002, 0.73350012 })
        assert.is_true(max_abs_diff(y:view(-1), want) < 1e-6)
    end)

    it("the losses take PyTorch's legacy size_average and reduce, as 1.13 does", function()
        local logp = F.log_softmax(tide.tensor({ { 1.0, 2.0, 0.5 }, { 0.1, -1.0, 2.0 } }), 2)
        local target = tide.tensor({ 2, 3 })
        local sum = F.nll_loss(logp, target, { reduction = "sum" })
        local mean = F.nll_loss(logp, target)
        local none = F.nll_loss(logp, target, { reduction = "none" })
        capture_stderr(function()
            -- F.nll_loss(output, target, size_average=False): reduction='sum'
            assert.are.equal(sum:item(), F.nll_loss(logp, target, { size_average = false }):item())
            -- size_average=True / reduce=True: 'mean'; reduce=False: 'none' whatever size_average
            assert.are.equal(mean:item(), F.nll_loss(logp, target, { size_average = true }):item())
            assert.are.equal(mean:item(), F.nll_loss(logp, target, { reduce = true }):item())
            assert.are.same(none:tolist(), F.nll_loss(logp, target, { reduce = false }):tolist())
            assert.are.same(none:tolist(),
                F.nll_loss(logp, target, { size_average = true, reduce = false }):tolist())
            -- the legacy pair wins over reduction=, as PyTorch's legacy_get_string
            assert.are.equal(sum:item(),
                F.nll_loss(logp, target, { size_average = false, reduction = "none" }):item())
            -- by position, PyTorch's slots: nll_loss(input, target, weight, size_average)
            assert.are.equal(sum:item(), F.nll_loss(logp, target, nil, false):item())
            -- the other losses PyTorch gives the pair to
            local a, b = tide.tensor({ 1.0, 2.0 }), tide.tensor({ 0.0, 4.0 })
            assert.are.equal(5, F.mse_loss(a, b, { size_average = false }):item())
            assert.are.same({ 1, 2 }, F.l1_loss(a, b, { reduce = false }):tolist())
            local ce = F.cross_entropy(tide.zeros(3, 4), tide.tensor({ 1, 2, 3 }), { size_average = false })
            assert.is_true(math.abs(ce:item() - 3 * math.log(4)) < 1e-5)
            -- and the modules: nn.NLLLoss(size_average=False), nn.MSELoss(reduce=False)
            assert.are.equal(sum:item(), nn.NLLLoss({ size_average = false })(logp, target):item())
            assert.are.same({ 1, 4 }, nn.MSELoss({ reduce = false })(a, b):tolist())
        end)
        -- the warning names the reduction to use, once
        require("tide._warn").reset("legacy_reduction_sum")
        local warned = capture_stderr(function()
            F.mse_loss(tide.ones(2), tide.zeros(2), { size_average = false })
            F.mse_loss(tide.ones(2), tide.zeros(2), { size_average = false })
        end)
        assert.is_truthy(warned:find(
            "tide: warning: size_average and reduce args will be deprecated, please use " ..
            "reduction='sum' instead.", 1, true))
        local _, count = warned:gsub("tide: warning", "")
        assert.are.equal(1, count)
        -- a value that is not a boolean names itself; losses PyTorch gives no pair raise as before
        assert.has_error(function() F.nll_loss(logp, target, { size_average = 0 }) end,
            "tide: nll_loss: size_average must be a boolean (or nil), got number 0; " ..
            "use reduction = \"mean\", \"sum\" or \"none\"")
        assert.has_error(function() F.huber_loss(tide.ones(2), tide.zeros(2), { reduce = false }) end)
        assert.has_error(function() nn.NLLLoss({ reduce = "sum" }) end,
            'tide: NLLLoss: reduce must be a boolean (or nil), got string "sum"; ' ..
            'use reduction = "mean", "sum" or "none"')
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. intermediate/seq2seq_translation_tutorial.py
---------------------------------------------------------------------------------------------
describe("seq2seq_translation_tutorial.py", function()
    -- SOS_token = 0; EOS_token = 1 (1-based here: class targets and embedding rows count from 1)
    local SOS_token = 1
    local EOS_token = 2
    local MAX_LENGTH = 5
    -- device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    local device = tide.device("cpu")

    -- class Lang:
    local Lang = {}
    Lang.__index = Lang
    function Lang.new(name)
        local self = setmetatable({}, Lang)
        self.name = name
        self.word2index = {}
        self.word2count = {}
        -- self.index2word = {0: "SOS", 1: "EOS"}
        self.index2word = { [SOS_token] = "SOS", [EOS_token] = "EOS" }
        self.n_words = 2 -- Count SOS and EOS
        return self
    end

    function Lang:addSentence(sentence)
        -- for word in sentence.split(' '):
        for word in sentence:gmatch("[^ ]+") do
            self:addWord(word)
        end
    end

    function Lang:addWord(word)
        if self.word2index[word] == nil then
            -- self.word2index[word] = self.n_words (the next 1-based index)
            self.word2index[word] = self.n_words + 1
            self.word2count[word] = 1
            self.index2word[self.n_words + 1] = word
            self.n_words = self.n_words + 1
        else
            self.word2count[word] = self.word2count[word] + 1
        end
    end

    -- class EncoderRNN(nn.Module):
    local EncoderRNN = nn.Module:extend("EncoderRNN")
    function EncoderRNN:init(input_size, hidden_size, dropout_p)
        dropout_p = dropout_p or 0.1
        self.hidden_size = hidden_size

        self.embedding = nn.Embedding(input_size, hidden_size)
        -- self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.gru = nn.GRU(hidden_size, hidden_size, { batch_first = true })
        self.dropout = nn.Dropout(dropout_p)
    end

    function EncoderRNN:forward(input)
        local embedded = self.dropout(self.embedding(input))
        local output, hidden = self.gru(embedded)
        return output, hidden
    end

    -- class BahdanauAttention(nn.Module):
    local BahdanauAttention = nn.Module:extend("BahdanauAttention")
    function BahdanauAttention:init(hidden_size)
        self.Wa = nn.Linear(hidden_size, hidden_size)
        self.Ua = nn.Linear(hidden_size, hidden_size)
        self.Va = nn.Linear(hidden_size, 1)
    end

    function BahdanauAttention:forward(query, keys)
        -- scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
        local scores = self.Va(tide.tanh(self.Wa(query) + self.Ua(keys)))
        -- scores = scores.squeeze(2).unsqueeze(1)
        scores = scores:squeeze(3):unsqueeze(2)

        -- weights = F.softmax(scores, dim=-1)
        local weights = F.softmax(scores, { dim = -1 })
        -- context = torch.bmm(weights, keys)
        local context = tide.bmm(weights, keys)

        return context, weights
    end

    -- class AttnDecoderRNN(nn.Module):
    local AttnDecoderRNN = nn.Module:extend("AttnDecoderRNN")
    function AttnDecoderRNN:init(hidden_size, output_size, dropout_p)
        dropout_p = dropout_p or 0.1
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.attention = BahdanauAttention(hidden_size)
        -- self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, { batch_first = true })
        self.out = nn.Linear(hidden_size, output_size)
        self.dropout = nn.Dropout(dropout_p)
    end

    function AttnDecoderRNN:forward(encoder_outputs, encoder_hidden, target_tensor)
        -- batch_size = encoder_outputs.size(0)
        local batch_size = encoder_outputs:size(1)
        -- decoder_input = torch.empty(batch_size, 1, dtype=torch.long, device=device).fill_(SOS_token)
        local decoder_input = tide.empty(batch_size, 1, { dtype = tide.long, device = device }):fill_(SOS_token)
        local decoder_hidden = encoder_hidden
        local decoder_outputs = {}
        local attentions = {}

        -- for i in range(MAX_LENGTH):
        for i = 1, MAX_LENGTH do
            local decoder_output, attn_weights
            -- decoder_output, decoder_hidden, attn_weights = self.forward_step(
            --     decoder_input, decoder_hidden, encoder_outputs)
            decoder_output, decoder_hidden, attn_weights = self:forward_step(
                decoder_input, decoder_hidden, encoder_outputs)
            -- decoder_outputs.append(decoder_output)
            decoder_outputs[#decoder_outputs + 1] = decoder_output
            attentions[#attentions + 1] = attn_weights

            if target_tensor ~= nil then
                -- Teacher forcing: Feed the target as the next input
                -- decoder_input = target_tensor[:, i].unsqueeze(1) # Teacher forcing
                decoder_input = target_tensor[{ {}, i }]:unsqueeze(2) -- Teacher forcing
            else
                -- Without teacher forcing: use its own predictions as the next input
                -- _, topi = decoder_output.topk(1)
                local _, topi = decoder_output:topk(1)
                -- decoder_input = topi.squeeze(-1).detach()  # detach from history as input
                decoder_input = topi:squeeze(-1):detach() -- detach from history as input
            end
        end

        -- decoder_outputs = torch.cat(decoder_outputs, dim=1)
        decoder_outputs = tide.cat(decoder_outputs, { dim = 2 })
        -- decoder_outputs = F.log_softmax(decoder_outputs, dim=-1)
        decoder_outputs = F.log_softmax(decoder_outputs, { dim = -1 })
        -- attentions = torch.cat(attentions, dim=1)
        attentions = tide.cat(attentions, { dim = 2 })

        return decoder_outputs, decoder_hidden, attentions
    end

    function AttnDecoderRNN:forward_step(input, hidden, encoder_outputs)
        local embedded = self.dropout(self.embedding(input))

        -- query = hidden.permute(1, 0, 2)
        local query = hidden:permute(2, 1, 3)
        local context, attn_weights = self.attention(query, encoder_outputs)
        -- input_gru = torch.cat((embedded, context), dim=2)
        local input_gru = tide.cat({ embedded, context }, { dim = 3 })

        local output
        output, hidden = self.gru(input_gru, hidden)
        output = self.out(output)

        return output, hidden, attn_weights
    end

    -- def indexesFromSentence(lang, sentence):
    --     return [lang.word2index[word] for word in sentence.split(' ')]
    local function indexesFromSentence(lang, sentence)
        local ids = {}
        for word in sentence:gmatch("[^ ]+") do
            ids[#ids + 1] = lang.word2index[word]
        end
        return ids
    end

    local function tensorFromSentence(lang, sentence)
        local indexes = indexesFromSentence(lang, sentence)
        -- indexes.append(EOS_token)
        indexes[#indexes + 1] = EOS_token
        -- return torch.tensor(indexes, dtype=torch.long, device=device).view(1, -1)
        return tide.tensor(indexes, { dtype = tide.long, device = device }):view(1, -1)
    end

    -- tiny language pairs: 8 words a side plus SOS and EOS (10 each), sentences under MAX_LENGTH
    local pairs_ = {
        { "je suis grand", "i am tall" }, { "il est petit", "he is small" },
        { "je suis petit", "i am small" }, { "il est froid", "he is cold" },
        { "il est grand", "he is tall" }, { "je suis chaud", "i am hot" },
        { "je suis froid", "i am cold" }, { "il est chaud", "he is hot" },
    }

    local function get_dataloader(batch_size)
        -- input_lang, output_lang, pairs = prepareData('eng', 'fra', True)
        local input_lang, output_lang = Lang.new("fra"), Lang.new("eng")
        for _, pair in ipairs(pairs_) do
            input_lang:addSentence(pair[1])
            output_lang:addSentence(pair[2])
        end

        local n = #pairs_
        -- input_ids = np.zeros((n, MAX_LENGTH), dtype=np.int32)
        -- GAP: numpy's zeros pad with index 0, which is SOS_token in Python; 1-based ids pad with
        -- SOS_token (1), and int64 at once: torch.LongTensor(t) of an int32 tensor raises in
        -- PyTorch as in tide (only numpy's arrays convert)
        local input_ids = tide.full({ n, MAX_LENGTH }, SOS_token, { dtype = tide.long })
        local target_ids = tide.full({ n, MAX_LENGTH }, SOS_token, { dtype = tide.long })
        -- for idx, (inp, tgt) in enumerate(pairs):
        for idx, pair in ipairs(pairs_) do
            local inp, tgt = pair[1], pair[2]
            local inp_ids = indexesFromSentence(input_lang, inp)
            local tgt_ids = indexesFromSentence(output_lang, tgt)
            inp_ids[#inp_ids + 1] = EOS_token
            tgt_ids[#tgt_ids + 1] = EOS_token
            -- input_ids[idx, :len(inp_ids)] = inp_ids
            -- (numpy takes a list there; a torch tensor raises "can't assign a list", as tide)
            input_ids[{ idx, { 1, #inp_ids } }] = tide.tensor(inp_ids)
            target_ids[{ idx, { 1, #tgt_ids } }] = tide.tensor(tgt_ids)
        end

        -- train_data = TensorDataset(torch.LongTensor(input_ids).to(device),
        --                            torch.LongTensor(target_ids).to(device))
        local train_data = tide.data.TensorDataset(tide.LongTensor(input_ids):to(device),
            tide.LongTensor(target_ids):to(device))
        -- train_sampler = RandomSampler(train_data)
        local train_sampler = tide.data.RandomSampler(train_data)
        -- train_dataloader = DataLoader(train_data, sampler=train_sampler, batch_size=batch_size)
        local train_dataloader = tide.data.DataLoader(train_data, { sampler = train_sampler,
            batch_size = batch_size })
        return input_lang, output_lang, train_dataloader
    end

    local function train_epoch(dataloader, encoder, decoder, encoder_optimizer,
                               decoder_optimizer, criterion)
        local total_loss = 0
        -- for data in dataloader:
        --     input_tensor, target_tensor = data
        for input_tensor, target_tensor in dataloader:iter() do
            encoder_optimizer:zero_grad()
            decoder_optimizer:zero_grad()

            local encoder_outputs, encoder_hidden = encoder(input_tensor)
            local decoder_outputs = decoder(encoder_outputs, encoder_hidden, target_tensor)

            -- loss = criterion(
            --     decoder_outputs.view(-1, decoder_outputs.size(-1)),
            --     target_tensor.view(-1)
            -- )
            local loss = criterion(
                decoder_outputs:view(-1, decoder_outputs:size(-1)),
                target_tensor:view(-1)
            )
            loss:backward()

            encoder_optimizer:step()
            decoder_optimizer:step()

            total_loss = total_loss + loss:item()
        end

        -- return total_loss / len(dataloader)
        return total_loss / dataloader:len()
    end

    local function evaluate(encoder, decoder, sentence, input_lang, output_lang)
        local decoded_words, decoder_attn
        -- with torch.no_grad():
        tide.no_grad(function()
            local input_tensor = tensorFromSentence(input_lang, sentence)

            local encoder_outputs, encoder_hidden = encoder(input_tensor)
            local decoder_outputs, _
            decoder_outputs, _, decoder_attn = decoder(encoder_outputs, encoder_hidden)

            local _, topi = decoder_outputs:topk(1)
            local decoded_ids = topi:squeeze()

            decoded_words = {}
            -- for idx in decoded_ids:
            for k = 1, #decoded_ids do
                local idx = decoded_ids[k]
                if idx:item() == EOS_token then
                    decoded_words[#decoded_words + 1] = "<EOS>"
                    break
                end
                decoded_words[#decoded_words + 1] = output_lang.index2word[idx:item()]
            end
        end)
        return decoded_words, decoder_attn
    end

    it("BahdanauAttention matches PyTorch 1.13 on fixed weights", function()
        local attention = BahdanauAttention(3)
        -- with torch.no_grad(): a.Wa.weight.copy_(...); a.Wa.bias.fill_(0.1); ...
        tide.no_grad(function()
            attention.Wa.weight:copy_(tide.arange(9.):view(3, 3) / 10 - 0.4)
            attention.Wa.bias:fill_(0.1)
            attention.Ua.weight:copy_(0.3 - tide.arange(9.):view(3, 3) / 20)
            attention.Ua.bias:zero_()
            attention.Va.weight:copy_(tide.tensor({ { 1.0, -2.0, 0.5 } }))
            attention.Va.bias:fill_(0.2)
        end)
        -- query = (torch.arange(6.).view(2,1,3) - 2) / 3; keys = torch.sin(torch.arange(24.).view(2,4,3))
        local query = (tide.arange(6.):view(2, 1, 3) - 2) / 3
        local keys = tide.sin(tide.arange(24.):view(2, 4, 3))
        local context, weights = attention(query, keys)
        local want_context = tide.tensor({ 0.06573811, 0.05257282, -0.00892769, 0.00403970,
            0.08258732, 0.08520457 })
        local want_weights = tide.tensor({ 0.24620341, 0.24855538, 0.25675854, 0.24848263,
            0.26632804, 0.23346567, 0.26666969, 0.23353665 })
        assert.is_true(max_abs_diff(context:view(-1), want_context) < 1e-6)
        assert.is_true(max_abs_diff(weights:view(-1), want_weights) < 1e-6)
        assert.is_truthy(context.grad_fn)
    end)

    it("EncoderRNN, BahdanauAttention, AttnDecoderRNN: teacher forcing, NLLLoss, two Adams", function()
        tide.manual_seed(3)
        local hidden_size, batch_size = 16, 4
        local input_lang, output_lang, train_dataloader = get_dataloader(batch_size)
        assert.are.equal(10, input_lang.n_words)
        assert.are.equal(10, output_lang.n_words)
        assert.are.equal(2, train_dataloader:len())

        -- encoder = EncoderRNN(input_lang.n_words, hidden_size).to(device)
        local encoder = EncoderRNN(input_lang.n_words, hidden_size):to(device)
        local decoder = AttnDecoderRNN(hidden_size, output_lang.n_words):to(device)

        -- the attention's shapes and weights on one batch
        tide.no_grad(function()
            local attention = BahdanauAttention(hidden_size)
            local query, keys = tide.randn(batch_size, 1, hidden_size), tide.randn(batch_size, 5, hidden_size)
            local context, weights = attention(query, keys)
            assert.are.same({ batch_size, 1, hidden_size }, context.shape)
            assert.are.same({ batch_size, 1, 5 }, weights.shape)
            assert.is_true(max_abs_diff(weights:sum(-1), tide.ones(batch_size, 1)) < 1e-6)
        end)

        -- def train(train_dataloader, encoder, decoder, n_epochs, learning_rate=0.001, ...):
        local learning_rate = 0.01
        -- encoder_optimizer = optim.Adam(encoder.parameters(), lr=learning_rate)
        local encoder_optimizer = optim.Adam(encoder:parameters(), { lr = learning_rate })
        local decoder_optimizer = optim.Adam(decoder:parameters(), { lr = learning_rate })
        local criterion = nn.NLLLoss()

        local losses = {}
        -- for epoch in range(1, n_epochs + 1):
        for epoch = 1, 6 do
            local loss = train_epoch(train_dataloader, encoder, decoder, encoder_optimizer,
                decoder_optimizer, criterion)
            assert_finite(loss, "seq2seq loss")
            losses[epoch] = loss
        end
        -- the first loss is near log(10) (10 output words), and it falls
        assert.is_true(math.abs(losses[1] - math.log(10)) < 0.6, "first loss " .. losses[1])
        assert.is_true(losses[6] < losses[1] - 0.3, "loss fell: " .. losses[1] .. " -> " .. losses[6])

        -- encoder.eval(); decoder.eval(); evaluateRandomly(encoder, decoder)
        encoder:eval()
        decoder:eval()
        local output_words, attentions = evaluate(encoder, decoder, "je suis grand", input_lang, output_lang)
        assert.is_true(#output_words >= 1 and #output_words <= MAX_LENGTH)
        for _, w in ipairs(output_words) do
            assert.is_true(w == "<EOS>" or output_lang.word2index[w] ~= nil or w == "SOS", w)
        end
        -- attentions: one row of 4 input positions (3 words and EOS) per decoded step
        assert.are.same({ 1, MAX_LENGTH, 4 }, attentions.shape)
        assert.is_true(max_abs_diff(attentions:sum(-1), tide.ones(1, MAX_LENGTH)) < 1e-5)
        assert.is_nil(attentions.grad_fn)
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. beginner/transformer_tutorial.py
---------------------------------------------------------------------------------------------
describe("transformer_tutorial.py", function()
    -- from torch.nn import TransformerEncoder, TransformerEncoderLayer
    local TransformerEncoder, TransformerEncoderLayer = nn.TransformerEncoder, nn.TransformerEncoderLayer

    -- class PositionalEncoding(nn.Module):
    local PositionalEncoding = nn.Module:extend("PositionalEncoding")
    -- def __init__(self, d_model: int, dropout: float = 0.1, max_len: int = 5000):
    function PositionalEncoding:init(d_model, dropout, max_len)
        dropout = dropout or 0.1
        max_len = max_len or 5000
        -- self.dropout = nn.Dropout(p=dropout)
        self.dropout = nn.Dropout({ p = dropout })

        -- position = torch.arange(max_len).unsqueeze(1)
        local position = tide.arange(max_len):unsqueeze(2)
        -- div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        local div_term = tide.exp(tide.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        local pe = tide.zeros(max_len, 1, d_model)
        -- pe[:, 0, 0::2] = torch.sin(position * div_term)
        pe[{ {}, 1, { 1, -1, 2 } }] = tide.sin(position * div_term)
        -- pe[:, 0, 1::2] = torch.cos(position * div_term)
        pe[{ {}, 1, { 2, -1, 2 } }] = tide.cos(position * div_term)
        -- self.register_buffer('pe', pe)
        self:register_buffer("pe", pe)
    end

    function PositionalEncoding:forward(x)
        -- x = x + self.pe[:x.size(0)]
        x = x + self.pe[{ { 1, x:size(1) } }]
        return self.dropout(x)
    end

    -- class TransformerModel(nn.Module):
    local TransformerModel = nn.Module:extend("TransformerModel")
    function TransformerModel:init(ntoken, d_model, nhead, d_hid, nlayers, dropout)
        dropout = dropout or 0.5
        self.model_type = "Transformer"
        self.pos_encoder = PositionalEncoding(d_model, dropout)
        local encoder_layers = TransformerEncoderLayer(d_model, nhead, d_hid, dropout)
        self.transformer_encoder = TransformerEncoder(encoder_layers, nlayers)
        self.encoder = nn.Embedding(ntoken, d_model)
        self.d_model = d_model
        self.decoder = nn.Linear(d_model, ntoken)

        self:init_weights()
    end

    function TransformerModel:init_weights()
        local initrange = 0.1
        -- self.encoder.weight.data.uniform_(-initrange, initrange)
        self.encoder.weight.data:uniform_(-initrange, initrange)
        self.decoder.bias.data:zero_()
        self.decoder.weight.data:uniform_(-initrange, initrange)
    end

    function TransformerModel:forward(src, src_mask)
        -- src = self.encoder(src) * math.sqrt(self.d_model)
        src = self.encoder(src) * math.sqrt(self.d_model)
        src = self.pos_encoder(src)
        local output = self.transformer_encoder(src, src_mask)
        output = self.decoder(output)
        return output
    end

    -- def generate_square_subsequent_mask(sz: int) -> Tensor:
    --     return torch.triu(torch.ones(sz, sz) * float('-inf'), diagonal=1)
    local function generate_square_subsequent_mask(sz)
        return tide.triu(tide.ones(sz, sz) * -math.huge, { diagonal = 1 })
    end

    it("PositionalEncoding and the square subsequent mask match PyTorch 1.13", function()
        local pos = PositionalEncoding(8, 0.1, 5)
        assert.are.same({ 5, 1, 8 }, pos.pe.shape)
        -- a buffer: in the state dict, not a parameter
        assert.is_truthy(pos:state_dict().pe)
        assert.are.equal(0, #pos:parameters())
        -- torch: pe[3, 0] and pe.sum()
        local want = tide.tensor({ 0.14112000, -0.98999250, 0.29552019, 0.95533651, 0.02999550,
            0.99955004, 0.00300000, 0.99999553 })
        assert.is_true(max_abs_diff(pos.pe[{ 4, 1 }], want) < 1e-6)
        assert.is_true(math.abs(pos.pe:sum():item() - 16.55898285) < 1e-5)
        -- eval: dropout off, x + pe[:seq_len]
        pos:eval()
        local x = tide.zeros(3, 2, 8)
        assert.is_true(max_abs_diff(pos(x), pos.pe[{ { 1, 3 } }]:expand(3, 2, 8)) == 0)

        local mask = generate_square_subsequent_mask(3)
        local ninf = -math.huge
        assert.are.same({ { 0, ninf, ninf }, { 0, 0, ninf }, { 0, 0, 0 } }, mask:tolist())
    end)

    it("TransformerModel: batchify, get_batch, clip_grad_norm_, StepLR, evaluate", function()
        tide.manual_seed(5)
        local device = tide.device("cpu")

        -- def batchify(data: Tensor, bsz: int) -> Tensor:
        local function batchify(data, bsz)
            -- seq_len = data.size(0) // bsz
            local seq_len = math.floor(data:size(1) / bsz)
            -- data = data[:seq_len * bsz]
            data = data[{ { 1, seq_len * bsz } }]
            -- data = data.view(bsz, seq_len).t().contiguous()
            data = data:view(bsz, seq_len):t():contiguous()
            return data:to(device)
        end

        -- train_data = data_process(train_iter): a tiny corpus of 10 tokens that repeats, so the
        -- model can learn it
        local ntokens = 10
        local pattern = tide.tensor({ 1, 4, 2, 7, 3, 9, 5, 10, 6, 8 })
        -- (PyTorch's t.repeat(n): `repeat` is a Lua keyword, so tide spells it tile, which is
        -- also PyTorch's name for it)
        local train_data = pattern:tile(11) -- 110 tokens
        local val_data = pattern:tile(3)
        local batch_size = 4
        local eval_batch_size = 2
        train_data = batchify(train_data, batch_size) -- shape [seq_len, batch_size]
        val_data = batchify(val_data, eval_batch_size)
        assert.are.same({ 27, 4 }, train_data.shape)
        assert.are.same({ 15, 2 }, val_data.shape)
        -- batchify's columns are consecutive runs of the corpus
        assert.are.same({ 1, 4, 2 }, train_data[{ { 1, 3 }, 1 }]:tolist())
        assert.are.same({ 10, 6, 8 }, train_data[{ { 1, 3 }, 2 }]:tolist())

        local bptt = 8
        -- def get_batch(source: Tensor, i: int) -> Tuple[Tensor, Tensor]:
        -- (i is 1-based: Python's i + 1)
        local function get_batch(source, i)
            -- seq_len = min(bptt, len(source) - 1 - i)
            local seq_len = math.min(bptt, #source - i)
            -- data = source[i:i+seq_len]
            local data = source[{ { i, i + seq_len - 1 } }]
            -- target = source[i+1:i+1+seq_len].reshape(-1)
            local target = source[{ { i + 1, i + seq_len } }]:reshape(-1)
            return data, target
        end
        do
            local data, target = get_batch(train_data, 1)
            assert.are.same({ bptt, batch_size }, data.shape)
            assert.are.same({ bptt * batch_size }, target.shape)
            assert.are.same(train_data[{ { 2, 3 } }]:reshape(-1):tolist(), target[{ { 1, 8 } }]:tolist())
            -- the last batch is shorter: 27 rows, i = 25 gives 2
            local last = get_batch(train_data, 25)
            assert.are.same({ 2, batch_size }, last.shape)
        end

        local emsize = 16 -- embedding dimension
        local d_hid = 32 -- dimension of the feedforward network model in nn.TransformerEncoder
        local nlayers = 2 -- number of nn.TransformerEncoderLayer in nn.TransformerEncoder
        local nhead = 2 -- number of heads in nn.MultiheadAttention
        local dropout = 0.2 -- dropout probability
        -- model = TransformerModel(ntokens, emsize, nhead, d_hid, nlayers, dropout).to(device)
        local model = TransformerModel(ntokens, emsize, nhead, d_hid, nlayers, dropout):to(device)
        assert.are.equal(0, model.decoder.bias:abs():sum():item())
        assert.is_true(model.encoder.weight:abs():max():item() <= 0.1)
        assert.are.equal(nlayers, #model.transformer_encoder.layers)

        local criterion = nn.CrossEntropyLoss()
        local lr = 5.0 -- learning rate
        -- optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        local optimizer = tide.optim.SGD(model:parameters(), { lr = lr })
        -- scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.95)
        local scheduler = tide.optim.lr_scheduler.StepLR(optimizer, 1.0, { gamma = 0.95 })

        local function train(epoch)
            model:train() -- turn on train mode
            local total_loss = 0.
            local log_interval = 2
            local losses = {}
            -- src_mask = generate_square_subsequent_mask(bptt).to(device)
            local src_mask = generate_square_subsequent_mask(bptt):to(device)

            -- num_batches = len(train_data) // bptt
            local num_batches = math.floor(#train_data / bptt)
            local batch = 0
            -- for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
            for i = 1, train_data:size(1) - 1, bptt do
                local data, targets = get_batch(train_data, i)
                -- seq_len = data.size(0)
                local seq_len = data:size(1)
                if seq_len ~= bptt then -- only on last batch
                    -- src_mask = src_mask[:seq_len, :seq_len]
                    src_mask = src_mask[{ { 1, seq_len }, { 1, seq_len } }]
                end
                local output = model(data, src_mask)
                assert.are.same({ seq_len, batch_size, ntokens }, output.shape)
                -- loss = criterion(output.view(-1, ntokens), targets)
                local loss = criterion(output:view(-1, ntokens), targets)

                optimizer:zero_grad()
                loss:backward()
                -- torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
                tide.nn.utils.clip_grad_norm_(model:parameters(), 0.5)
                optimizer:step()

                total_loss = total_loss + loss:item()
                losses[#losses + 1] = loss:item()
                if batch % log_interval == 0 and batch > 0 then
                    -- lr = scheduler.get_last_lr()[0]
                    local cur_lr = scheduler:get_last_lr()[1]
                    local cur_loss = total_loss / log_interval
                    local ppl = math.exp(cur_loss)
                    -- print(f'| epoch {epoch:3d} | {batch:5d}/{num_batches:5d} batches | '
                    --       f'lr {lr:02.2f} | loss {cur_loss:5.2f} | ppl {ppl:8.2f}')
                    local line = string.format("| epoch %3d | %5d/%5d batches | lr %02.2f | " ..
                        "loss %5.2f | ppl %8.2f", epoch, batch, num_batches, cur_lr, cur_loss, ppl)
                    assert.is_truthy(line:find("batches", 1, true))
                    total_loss = 0
                end
                batch = batch + 1
            end
            assert.are.equal(4, batch)
            return losses
        end

        -- def evaluate(model: nn.Module, eval_data: Tensor) -> float:
        local function evaluate(eval_model, eval_data)
            eval_model:eval() -- turn on evaluation mode
            local total_loss = 0.
            local src_mask = generate_square_subsequent_mask(bptt):to(device)
            -- with torch.no_grad():
            tide.no_grad(function()
                -- for i in range(0, eval_data.size(0) - 1, bptt):
                for i = 1, eval_data:size(1) - 1, bptt do
                    local data, targets = get_batch(eval_data, i)
                    local seq_len = data:size(1)
                    if seq_len ~= bptt then
                        src_mask = src_mask[{ { 1, seq_len }, { 1, seq_len } }]
                    end
                    local output = eval_model(data, src_mask)
                    assert.is_nil(output.grad_fn)
                    local output_flat = output:view(-1, ntokens)
                    -- total_loss += seq_len * criterion(output_flat, targets).item()
                    total_loss = total_loss + seq_len * criterion(output_flat, targets):item()
                end
            end)
            -- return total_loss / (len(eval_data) - 1)
            return total_loss / (#eval_data - 1)
        end

        local val_losses = {}
        local best_val_loss = math.huge
        local best_model_params
        local epochs = 3
        for epoch = 1, epochs do
            local losses = train(epoch)
            for _, l in ipairs(losses) do
                assert_finite(l, "transformer loss")
            end
            local val_loss = evaluate(model, val_data)
            assert_finite(val_loss, "val_loss")
            -- eval mode: dropout off, so evaluate gives the same number again
            assert.is_true(math.abs(evaluate(model, val_data) - val_loss) < 1e-6)
            val_losses[epoch] = val_loss
            if val_loss < best_val_loss then
                best_val_loss = val_loss
                -- torch.save(model.state_dict(), best_model_params_path)
                best_model_params = tide.deepcopy(model:state_dict())
            end
            scheduler:step()
            -- StepLR(optimizer, 1.0, gamma=0.95): lr * 0.95 ** epoch
            assert.is_true(math.abs(scheduler:get_last_lr()[1] - lr * 0.95 ^ epoch) < 1e-9)
        end
        -- model.load_state_dict(torch.load(best_model_params_path)) # load best model states
        model:load_state_dict(best_model_params)
        assert.is_true(math.abs(evaluate(model, val_data) - best_val_loss) < 1e-5)
        -- the first validation loss is near log(10); training on the repeating corpus lowers it
        assert.is_true(val_losses[1] < math.log(10) + 1, "first val loss " .. val_losses[1])
        assert.is_true(best_val_loss < val_losses[1] or val_losses[1] < 1.5,
            "val loss fell: " .. table.concat(val_losses, ", "))
    end)
end)
