-- ported_scripts18_spec.lua — pytorch/tutorials' introyt series ported line for line:
-- modelsyt_tutorial.py (TinyModel, parameters, Linear, the LeNet with max_pool2d and
-- num_flat_features, the LSTM tagger, unbatched MaxPool2d, BatchNorm1d, Dropout) and
-- trainingyt.py (a slice of Fashion-MNIST through DataLoaders, train_one_epoch with its running
-- loss, a validation loop, model.train(True/False), SummaryWriter add_scalar/add_scalars, saving
-- the best model's state_dict and loading it back). The Python line stands above each Lua line
-- that differs; a line tide cannot write as Python does is marked `-- GAP:`. Dims, indices and
-- class targets are 1-based. (autograd_saved_tensors_hooks_tutorial.py is not ported: tide has
-- no saved_tensors_hooks, docs/API.md "Autograd".)
local tide = require("tide")
local nn = tide.nn
local F = nn.functional

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite

local FASHION = "/usr/share/datasets/fashion-mnist"

local function tmpdir()
    local d = os.tmpname()
    os.remove(d)
    assert(os.execute("mkdir -p '" .. d .. "'"))
    return d
end

---------------------------------------------------------------------------------------------
-- 1. beginner_source/introyt/modelsyt_tutorial.py
---------------------------------------------------------------------------------------------
describe("introyt/modelsyt_tutorial.py", function()
    it("TinyModel: Linear, ReLU, Softmax() without a dim, its parameters", function()
        tide.manual_seed(0)
        -- class TinyModel(torch.nn.Module):
        local TinyModel = nn.Module:extend("TinyModel")
        function TinyModel:init()
            self.linear1 = nn.Linear(100, 200)
            self.activation = nn.ReLU()
            self.linear2 = nn.Linear(200, 10)
            -- self.softmax = torch.nn.Softmax()
            self.softmax = nn.Softmax()
        end

        function TinyModel:forward(x)
            x = self.linear1(x)
            x = self.activation(x)
            x = self.linear2(x)
            x = self.softmax(x)
            return x
        end

        local tinymodel = TinyModel()
        -- print(tinymodel)
        assert.matches("TinyModel", tostring(tinymodel))
        -- print(tinymodel.linear2)
        assert.matches("Linear", tostring(tinymodel.linear2))
        -- for param in tinymodel.parameters():
        local shapes = {}
        for _, param in ipairs(tinymodel:parameters()) do
            shapes[#shapes + 1] = table.concat(param:size(), "x")
        end
        assert.are.same({ "200x100", "200", "10x200", "10" }, shapes)
        -- for param in tinymodel.linear2.parameters():
        local n = 0
        for _, param in ipairs(tinymodel.linear2:parameters()) do
            assert.is_true(param.requires_grad)
            n = n + 1
        end
        assert.are.equal(2, n)
        -- the implicit softmax dim of a 2-D input is dim 1 (Python), 2 here: rows sum to 1
        local y = tinymodel(tide.rand(3, 100))
        assert.is_true(tide.allclose(y:sum({ dim = 2 }), tide.ones(3)))
    end)

    it("Linear: y = x W^T + b", function()
        -- lin = torch.nn.Linear(3, 2)
        local lin = nn.Linear(3, 2)
        -- x = torch.rand(1, 3)
        local x = tide.rand(1, 3)
        local y = lin(x)
        assert.is_true(tide.allclose(y, x:matmul(lin.weight:t()) + lin.bias))
    end)

    it("LeNet with F.max_pool2d((2, 2)) and num_flat_features, trained a few steps", function()
        tide.manual_seed(1)
        -- class LeNet(torch.nn.Module):
        local LeNet = nn.Module:extend("LeNet")
        function LeNet:init()
            -- self.conv1 = torch.nn.Conv2d(1, 6, 5)
            self.conv1 = nn.Conv2d(1, 6, 5)
            self.conv2 = nn.Conv2d(6, 16, 3)
            self.fc1 = nn.Linear(16 * 6 * 6, 120) -- 6*6 from image dimension
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)
        end

        function LeNet:forward(x)
            -- x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
            x = F.max_pool2d(F.relu(self.conv1(x)), { 2, 2 })
            -- If the size is a square you can only specify a single number
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            -- x = x.view(-1, self.num_flat_features(x))
            x = x:view(-1, self:num_flat_features(x))
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            x = self.fc3(x)
            return x
        end

        function LeNet:num_flat_features(x)
            -- size = x.size()[1:]  # all dimensions except the batch dimension
            local size = x:size()[{ { 2, -1 } }]
            local num_features = 1
            -- for s in size:
            for _, s in ipairs(size) do
                num_features = num_features * s
            end
            return num_features
        end

        local net = LeNet()
        local opt = tide.optim.SGD(net:parameters(), { lr = 0.01 })
        local x, target = tide.randn(4, 1, 32, 32), tide.randint(1, 11, { 4 })
        local losses = {}
        for step = 1, 4 do
            opt:zero_grad()
            local loss = F.cross_entropy(net(x), target)
            loss:backward()
            opt:step()
            losses[step] = loss:item()
            assert_finite(losses[step], "LeNet loss")
        end
        assert.is_true(losses[4] < losses[1])
        -- an unbatched 1x32x32 image goes through conv1 and the pool as in PyTorch, and
        -- through the conv the same as its batch of one
        local img = tide.randn(1, 32, 32)
        assert.are.same({ 6, 14, 14 }, F.max_pool2d(F.relu(net.conv1(img)), { 2, 2 }):size())
        assert.is_true(tide.allclose(net.conv1(img), net.conv1(img:unsqueeze(1))[1]))
    end)

    it("LSTMTagger: Embedding, LSTM over len(sentence), log_softmax(dim=1)", function()
        tide.manual_seed(2)
        -- class LSTMTagger(torch.nn.Module):
        local LSTMTagger = nn.Module:extend("LSTMTagger")
        function LSTMTagger:init(embedding_dim, hidden_dim, vocab_size, tagset_size)
            self.hidden_dim = hidden_dim
            self.word_embeddings = nn.Embedding(vocab_size, embedding_dim)
            self.lstm = nn.LSTM(embedding_dim, hidden_dim)
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

        local model = LSTMTagger(6, 6, 9, 3)
        local opt = tide.optim.SGD(model:parameters(), { lr = 0.1 })
        local sentence, tags = tide.tensor({ 1, 4, 2, 9, 5 }), tide.tensor({ 1, 2, 3, 1, 2 })
        local losses = {}
        for step = 1, 5 do
            model:zero_grad()
            local tag_scores = model(sentence)
            local loss = F.nll_loss(tag_scores, tags)
            loss:backward()
            opt:step()
            losses[step] = loss:item()
        end
        assert_finite(losses[5], "tagger loss")
        assert.is_true(losses[5] < losses[1])
    end)

    it("MaxPool2d(3) on an unbatched 1x6x6 tensor, BatchNorm1d(4), Dropout(p=0.4)", function()
        tide.manual_seed(3)
        -- my_tensor = torch.rand(1, 6, 6)
        local my_tensor = tide.rand(1, 6, 6)
        -- maxpool_layer = torch.nn.MaxPool2d(3)
        local maxpool_layer = nn.MaxPool2d(3)
        local pooled = maxpool_layer(my_tensor)
        -- each value is the maximum of its 3x3 quadrant
        assert.are.same({ 1, 2, 2 }, pooled:size())
        assert.are.equal(my_tensor[{ 1, { 1, 3 }, { 4, 6 } }]:max():item(),
            pooled[{ 1, 1, 2 }]:item())
        assert.are.equal(my_tensor[{ 1, { 4, 6 }, { 1, 3 } }]:max():item(),
            pooled[{ 1, 2, 1 }]:item())
        -- the functional and 1-d pools take unbatched input too, with return_indices
        local y, idx = F.max_pool2d(my_tensor, 3, { return_indices = true })
        assert.is_true(tide.equal(pooled, y))
        assert.are.same({ 1, 2, 2 }, idx:size())
        assert.are.same({ 1, 2, 2 }, nn.AvgPool2d(3)(my_tensor):size())
        assert.are.same({ 6, 3 }, nn.MaxPool1d(2)(my_tensor[1]):size())
        -- a 2-D input is neither batched nor unbatched
        assert.has_error(function()
            maxpool_layer(my_tensor[1])
        end, "tide: MaxPool2d: expected input {N, C, H, W} or {C, H, W}, got {6, 6}")

        -- my_tensor = torch.rand(1, 4, 4) * 20 + 5
        my_tensor = tide.rand(1, 4, 4) * 20 + 5
        assert.is_true(my_tensor:mean():item() > 5)
        -- norm_layer = torch.nn.BatchNorm1d(4)
        local norm_layer = nn.BatchNorm1d(4)
        local normed_tensor = norm_layer(my_tensor)
        assert.is_true(math.abs(normed_tensor:mean():item()) < 1e-5)

        -- my_tensor = torch.rand(1, 4, 4)
        my_tensor = tide.rand(1, 4, 4)
        -- dropout = torch.nn.Dropout(p=0.4)
        local dropout = nn.Dropout({ p = 0.4 })
        local d = dropout(my_tensor)
        -- kept elements are scaled by 1 / (1 - p)
        local kept = d:ne(0)
        assert.is_true(tide.allclose(d[kept], my_tensor[kept] / 0.6))
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. beginner_source/introyt/trainingyt.py
---------------------------------------------------------------------------------------------
describe("introyt/trainingyt.py", function()
    it("GarmentClassifier on Fashion-MNIST: train_one_epoch, validation, best model", function()
        if not io.open(FASHION .. "/train-labels-idx1-ubyte.gz", "rb") then
            pending("dataset-fashion-mnist is not installed (apt-get install " ..
                "dataset-fashion-mnist)")
            return
        end
        tide.manual_seed(4)
        -- transform = transforms.Compose(
        --     [transforms.ToTensor(), transforms.Normalize((0.5,), (0.5,))])
        -- GAP: no torchvision transforms; Normalize((0.5,), (0.5,)) applied to the tensors
        local function transform(x)
            return (x - 0.5) / 0.5
        end
        -- training_set = torchvision.datasets.FashionMNIST('./data', train=True, ...)
        local full_train, full_valid, classes = tide.data.fashion_mnist(FASHION)
        -- (a slice: 96 training and 32 validation images)
        local training_set = tide.data.TensorDataset(
            transform(full_train.tensors[1]:narrow(1, 1, 96)),
            full_train.tensors[2]:narrow(1, 1, 96))
        local validation_set = tide.data.TensorDataset(
            transform(full_valid.tensors[1]:narrow(1, 1, 32)),
            full_valid.tensors[2]:narrow(1, 1, 32))
        -- training_loader = torch.utils.data.DataLoader(training_set, batch_size=4, shuffle=True,
        --     num_workers=2)
        local training_loader = tide.utils.data.DataLoader(training_set, { batch_size = 4,
            shuffle = true, num_workers = 2 })
        local validation_loader = tide.utils.data.DataLoader(validation_set, { batch_size = 4,
            shuffle = false, num_workers = 2 })
        -- print('Training set has {} instances'.format(len(training_set)))
        -- (len(ds) is #ds on Lua 5.2+; ds:len() everywhere)
        assert.are.equal(96, training_set:len())
        assert.are.equal(32, validation_set:len())

        -- dataiter = iter(training_loader); images, labels = dataiter.next()
        local dataiter = training_loader:iter()
        local images, labels = dataiter()
        -- img_grid = torchvision.utils.make_grid(images)
        local img_grid = tide.utils.make_grid(images)
        assert.are.same({ 3, 32, 122 }, img_grid:size())
        -- img = img.mean(dim=0); img = img / 2 + 0.5     # unnormalize
        local img = img_grid:mean({ dim = 1 }) / 2 + 0.5
        assert.is_true(img:min():item() >= 0 and img:max():item() <= 1)
        -- '  '.join(classes[labels[j]] for j in range(4))
        -- (a 0-dim tensor is no Lua table key: labels[j]:item())
        local names = {}
        for j = 1, 4 do
            names[j] = classes[labels[j]:item()]
        end
        assert.are.equal(4, #names)

        -- class GarmentClassifier(nn.Module):
        local GarmentClassifier = nn.Module:extend("GarmentClassifier")
        function GarmentClassifier:init()
            self.conv1 = nn.Conv2d(1, 6, 5)
            self.pool = nn.MaxPool2d(2, 2)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 4 * 4, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)
        end

        function GarmentClassifier:forward(x)
            x = self.pool(F.relu(self.conv1(x)))
            x = self.pool(F.relu(self.conv2(x)))
            x = x:view(-1, 16 * 4 * 4)
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            x = self.fc3(x)
            return x
        end

        local model = GarmentClassifier()
        -- loss_fn = torch.nn.CrossEntropyLoss()
        local loss_fn = nn.CrossEntropyLoss()
        -- dummy_outputs = torch.rand(4, 10); dummy_labels = torch.tensor([1, 5, 3, 7])
        local dummy_outputs = tide.rand(4, 10)
        local dummy_labels = tide.tensor({ 2, 6, 4, 8 })
        local loss = loss_fn(dummy_outputs, dummy_labels)
        assert_finite(loss:item(), "dummy loss")

        -- optimizer = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
        -- (lr 0.01: a few dozen steps must show learning)
        local optimizer = tide.optim.SGD(model:parameters(), { lr = 0.01, momentum = 0.9 })

        -- def train_one_epoch(epoch_index, tb_writer):
        local function train_one_epoch(epoch_index, tb_writer)
            local running_loss = 0.
            local last_loss = 0.
            -- for i, data in enumerate(training_loader):
            local i = 0
            for inputs, labels_ in training_loader:iter() do
                optimizer:zero_grad()
                local outputs = model(inputs)
                local loss_ = loss_fn(outputs, labels_)
                loss_:backward()
                optimizer:step()
                -- running_loss += loss.item()
                running_loss = running_loss + loss_:item()
                -- if i % 1000 == 999: (every 8 batches here)
                if i % 8 == 7 then
                    last_loss = running_loss / 8 -- loss per batch
                    -- tb_x = epoch_index * len(training_loader) + i + 1
                    local tb_x = epoch_index * training_loader:len() + i + 1
                    tb_writer:add_scalar("Loss/train", last_loss, tb_x)
                    running_loss = 0.
                end
                i = i + 1
            end
            return last_loss
        end

        -- timestamp = datetime.now().strftime('%Y%m%d_%H%M%S')
        local timestamp = os.date("%Y%m%d_%H%M%S")
        local dir = tmpdir()
        -- writer = SummaryWriter('runs/fashion_trainer_{}'.format(timestamp))
        local writer = tide.utils.tensorboard.SummaryWriter(
            string.format("%s/runs/fashion_trainer_%s", dir, timestamp))
        local epoch_number = 0
        local EPOCHS = 3
        -- best_vloss = 1_000_000.
        local best_vloss = 1000000.
        local vlosses, saved = {}, nil

        for _ = 0, EPOCHS - 1 do
            -- model.train(True)
            model:train(true)
            local avg_loss = train_one_epoch(epoch_number, writer)
            assert_finite(avg_loss, "avg_loss")
            -- model.train(False)
            model:train(false)
            assert.is_false(model.training)

            local running_vloss = 0.0
            -- for i, vdata in enumerate(validation_loader):
            local i = 0
            for vinputs, vlabels in validation_loader:iter() do
                local voutputs = model(vinputs)
                local vloss = loss_fn(voutputs, vlabels)
                -- running_vloss += vloss
                running_vloss = running_vloss + vloss
                i = i + 1
            end
            -- avg_vloss = running_vloss / (i + 1)  (i counts the batches here)
            local avg_vloss = running_vloss / i
            vlosses[#vlosses + 1] = avg_vloss:item()
            -- writer.add_scalars('Training vs. Validation Loss',
            --     { 'Training' : avg_loss, 'Validation' : avg_vloss }, epoch_number + 1)
            writer:add_scalars("Training vs. Validation Loss",
                { Training = avg_loss, Validation = avg_vloss }, epoch_number + 1)
            writer:flush()

            -- if avg_vloss < best_vloss:
            -- (Lua 5.1 and LuaJIT compare no tensor with a number: avg_vloss:item(); 5.3+ take
            -- `avg_vloss < best_vloss` as written)
            if avg_vloss:item() < best_vloss then
                best_vloss = avg_vloss:item()
                -- model_path = 'model_{}_{}'.format(timestamp, epoch_number)
                local model_path = string.format("%s/model_%s_%d", dir, timestamp, epoch_number)
                -- torch.save(model.state_dict(), model_path)
                tide.save(model:state_dict(), model_path)
                saved = model_path
            end
            epoch_number = epoch_number + 1
        end
        writer:close()
        assert_finite(vlosses[EPOCHS], "validation loss")
        assert.is_true(vlosses[EPOCHS] < vlosses[1])

        -- saved_model = GarmentClassifier(); saved_model.load_state_dict(torch.load(PATH))
        local saved_model = GarmentClassifier()
        saved_model:load_state_dict(tide.load(saved))
        saved_model:eval()
        local x = validation_set.tensors[1]:narrow(1, 1, 4)
        local best = tide.load(saved)
        assert.is_true(tide.equal(best["fc3.bias"], saved_model.fc3.bias))
        assert.are.same({ 4, 10 }, saved_model(x):size())
        os.execute("rm -rf '" .. dir .. "'")
    end)
end)
