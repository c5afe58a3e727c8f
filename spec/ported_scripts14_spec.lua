-- ported_scripts14_spec.lua — PyTorch tutorial recipes ported line for line: amp_recipe.py
-- (autocast + GradScaler on the CPU in bfloat16, scaler state_dict save/load),
-- save_load_across_devices.py, saving_and_loading_a_general_checkpoint.py,
-- warmstarting_model_using_parameters_from_a_different_model.py, what_is_state_dict.py (the
-- virtual device "cpu:1" stands for the GPU), tensorboard_with_pytorch.py and the NLP tutorial's
-- deep_learning_tutorial.py (BoWClassifier). The Python line stands above each Lua line that
-- differs from it; a line tide cannot write as Python does is marked `-- GAP:`. Dims, indices
-- and class targets are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite

local function tmpname(suffix)
    local p = os.tmpname()
    os.remove(p)
    return p .. suffix
end

---------------------------------------------------------------------------------------------
-- 1. recipes/amp_recipe.py
---------------------------------------------------------------------------------------------
describe("recipes/amp_recipe.py", function()
    it("make_model, autocast('cpu', bfloat16) + GradScaler loop, unscale_ + clip, checkpoint", function()
        tide.manual_seed(0)
        -- def make_model(in_size, out_size, num_layers):
        local function make_model(in_size, out_size, num_layers)
            local layers = {}
            -- for _ in range(num_layers - 1):
            for _ = 1, num_layers - 1 do
                -- layers.append(torch.nn.Linear(in_size, in_size))
                table.insert(layers, nn.Linear(in_size, in_size))
                table.insert(layers, nn.ReLU())
            end
            table.insert(layers, nn.Linear(in_size, out_size))
            -- return torch.nn.Sequential(*tuple(layers)).cuda()
            return nn.Sequential(unpack(layers)):to("cpu:1")
        end

        local batch_size, in_size, out_size, num_layers, num_batches, epochs = 8, 16, 16, 3, 4, 3
        local device = "cpu:1"
        -- data = [torch.randn(batch_size, in_size, device="cuda") for _ in range(num_batches)]
        local data, targets = {}, {}
        for i = 1, num_batches do
            data[i] = tide.randn(batch_size, in_size, { device = device })
            targets[i] = tide.randn(batch_size, out_size, { device = device })
        end
        -- loss_fn = torch.nn.MSELoss().cuda()
        local loss_fn = nn.MSELoss():to(device)

        -- Default precision
        local net = make_model(in_size, out_size, num_layers)
        local opt = optim.SGD(net:parameters(), { lr = 0.001 })
        for _ = 1, epochs do
            -- for input, target in zip(data, targets):
            for i = 1, num_batches do
                local input, target = data[i], targets[i]
                local output = net(input)
                local loss = loss_fn(output, target)
                loss:backward()
                opt:step()
                opt:zero_grad()
            end
        end

        -- Adding autocast: with torch.cuda.amp.autocast(): (the CPU notes: torch.autocast("cpu",
        -- dtype=torch.bfloat16))
        local input, target = data[1], targets[1]
        local loss = tide.autocast("cpu", { dtype = tide.bfloat16 }, function()
            local output = net(input)
            -- assert output.dtype is torch.float16  (bfloat16 on the CPU)
            assert.are.equal(tide.bfloat16, output.dtype)
            local loss = loss_fn(output, target)
            -- assert loss.dtype is torch.float32
            assert.are.equal(tide.float32, loss.dtype)
            return loss
        end)
        loss:backward()
        opt:step()
        opt:zero_grad()

        -- All together
        local use_amp = true
        net = make_model(in_size, out_size, num_layers)
        opt = optim.SGD(net:parameters(), { lr = 0.001 })
        -- scaler = torch.cuda.amp.GradScaler(enabled=use_amp)
        local scaler = tide.cuda.amp.GradScaler({ enabled = use_amp })
        local losses = {}
        for _ = 1, epochs do
            for i = 1, num_batches do
                input, target = data[i], targets[i]
                -- with torch.autocast(device_type="cpu", dtype=torch.bfloat16, enabled=use_amp):
                loss = tide.autocast("cpu", { dtype = tide.bfloat16, enabled = use_amp }, function()
                    local output = net(input)
                    return loss_fn(output, target)
                end)
                scaler:scale(loss):backward()
                scaler:step(opt)
                scaler:update()
                opt:zero_grad()
                losses[#losses + 1] = loss:item()
            end
        end
        for _, l in ipairs(losses) do assert_finite(l, "amp loss") end

        -- Inspecting/modifying gradients (e.g., clipping)
        input, target = data[1], targets[1]
        loss = tide.cuda.amp.autocast(function()
            local output = net(input)
            return loss_fn(output, target)
        end)
        scaler:scale(loss):backward()
        -- scaler.unscale_(opt)
        scaler:unscale_(opt)
        -- torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm=0.1)
        nn.utils.clip_grad_norm_(net:parameters(), { max_norm = 0.1 })
        local total = 0
        for _, p in ipairs(net:parameters()) do total = total + p.grad:pow(2):sum():item() end
        assert.is_true(math.sqrt(total) <= 0.1 + 1e-5)
        scaler:step(opt)
        scaler:update()
        opt:zero_grad()

        -- checkpoint = {"model": net.state_dict(), "optimizer": opt.state_dict(), "scaler": scaler.state_dict()}
        local checkpoint = { model = net:state_dict(), optimizer = opt:state_dict(), scaler = scaler:state_dict() }
        -- torch.save(checkpoint, "filename")
        local filename = tmpname(".safetensors")
        tide.save(checkpoint, filename)
        -- checkpoint = torch.load(args.resume, map_location = lambda storage, loc: storage.cuda(torch.cuda.current_device()))
        checkpoint = tide.load(filename, {
            map_location = function(storage, loc) return storage:to("cpu:1") end })
        os.remove(filename)
        assert.are.equal("cpu:1", tostring(checkpoint.model["1.weight"].device))
        -- net.load_state_dict(checkpoint["model"])
        net:load_state_dict(checkpoint["model"])
        opt:load_state_dict(checkpoint["optimizer"])
        scaler:load_state_dict(checkpoint["scaler"])
        assert.are.equal(scaler:get_scale(), checkpoint.scaler.scale)
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. the saving/loading recipes: one Net
---------------------------------------------------------------------------------------------
-- class Net(nn.Module):
local Net = nn.Module:extend("Net")
function Net:init()
    self.conv1 = nn.Conv2d(3, 6, 5)
    self.pool = nn.MaxPool2d(2, 2)
    self.conv2 = nn.Conv2d(6, 16, 5)
    self.fc1 = nn.Linear(16 * 5 * 5, 120)
    self.fc2 = nn.Linear(120, 84)
    self.fc3 = nn.Linear(84, 10)
end

function Net:forward(x)
    x = self.pool(F.relu(self.conv1(x)))
    x = self.pool(F.relu(self.conv2(x)))
    -- x = x.flatten(start_dim=1)
    x = x:flatten({ start_dim = 2 })
    x = F.relu(self.fc1(x))
    x = F.relu(self.fc2(x))
    x = self.fc3(x)
    return x
end

describe("recipes/save_load_across_devices.py", function()
    it("save on the GPU, load on the CPU / GPU, map_location, DataParallel's module", function()
        tide.manual_seed(0)
        -- net = Net()  (trained on the "GPU")
        local net = Net():to("cpu:1")
        assert.is_truthy(tostring(net):find("conv1"))
        local PATH = tmpname(".pt")

        -- 3. Save on GPU, Load on CPU
        tide.save(net:state_dict(), PATH)
        -- device = torch.device('cpu')
        local device = tide.device("cpu")
        local model = Net()
        -- model.load_state_dict(torch.load(PATH, map_location=device))
        model:load_state_dict(tide.load(PATH, { map_location = device }))
        assert.are.equal("cpu", tostring(model.fc1.weight.device))
        assert.is_true(tide.equal(model.fc1.weight, net.fc1.weight:cpu()))
        local x = tide.randn(2, 3, 32, 32)
        assert.is_true(tide.allclose(model(x), net(x:to("cpu:1")):cpu(), { atol = 1e-6 }))

        -- 4. Save on GPU, Load on GPU
        tide.save(net:state_dict(), PATH)
        device = tide.device("cpu:1")
        model = Net()
        -- torch.load restores each tensor to the device it was saved from
        local loaded = tide.load(PATH)
        assert.are.equal("cpu:1", tostring(loaded["fc1.weight"].device))
        model:load_state_dict(loaded)
        model:to(device)
        assert.are.equal("cpu:1", tostring(model.fc1.weight.device))
        -- map_location as torch.load's dict {saved location: location} and function
        loaded = tide.load(PATH, { map_location = { ["cpu:1"] = "cpu" } })
        assert.are.equal("cpu", tostring(loaded["fc1.weight"].device))
        local seen = {}
        loaded = tide.load(PATH, { map_location = function(storage, loc)
            seen[loc] = true
            return storage
        end })
        assert.are.same({ ["cpu:1"] = true }, seen)
        assert.are.equal("cpu", tostring(loaded["fc1.weight"].device))
        -- a nil result restores the saved location, as PyTorch's None
        loaded = tide.load(PATH, { map_location = function() return nil end })
        assert.are.equal("cpu:1", tostring(loaded["fc1.weight"].device))
        assert.has_error(function()
            tide.load(PATH, { map_location = function() return 3 end })
        end, "tide: load: " .. PATH .. ": map_location returned a number for conv1.bias; "
            .. "return a tensor (storage:to(device)) or nil")
        assert.has_error(function()
            tide.load(PATH, { map_location = { ["cpu:1"] = 7 } })
        end, "tide: load: map_location[cpu:1] = 7: a dict map_location maps device names to "
            .. "devices ({[\"cuda:1\"] = \"cuda:0\"})")

        -- 5. Save on CPU, Load on GPU
        local cpu_net = Net()
        tide.save(cpu_net:state_dict(), PATH)
        model = Net()
        -- model.load_state_dict(torch.load(PATH, map_location="cuda:0"))
        local sd = tide.load(PATH, { map_location = "cpu:1" })
        assert.are.equal("cpu:1", tostring(sd["fc1.weight"].device))
        model:load_state_dict(sd)
        -- load_state_dict copies into the model's own (CPU) parameters, as PyTorch
        assert.are.equal("cpu", tostring(model.fc1.weight.device))
        model:to(device)
        assert.are.equal("cpu:1", tostring(model.fc1.weight.device))
        assert.is_true(tide.equal(model.fc1.weight:cpu(), cpu_net.fc1.weight))

        -- 6. Saving torch.nn.DataParallel Models: torch.save(net.module.state_dict(), PATH)
        net = nn.DataParallel(cpu_net)
        tide.save(net.module:state_dict(), PATH)
        model = Net()
        model:load_state_dict(tide.load(PATH, "cpu"))
        assert.is_true(tide.equal(model.conv2.weight, cpu_net.conv2.weight))
        os.remove(PATH)
    end)
end)

describe("recipes/saving_and_loading_a_general_checkpoint.py", function()
    it("saves epoch, model, optimizer, loss; loads them into a new model and optimizer", function()
        tide.manual_seed(0)
        local net = Net()
        -- optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
        local optimizer = optim.SGD(net:parameters(), { lr = 0.001, momentum = 0.9 })
        -- a few steps, so that the momentum buffers are in the state
        local x, y = tide.randn(4, 3, 32, 32), tide.randint(1, 11, { 4 })
        local losses = {}
        for i = 1, 3 do
            optimizer:zero_grad()
            local loss = F.cross_entropy(net(x), y)
            loss:backward()
            optimizer:step()
            losses[i] = loss:item()
        end
        assert.is_true(losses[3] < losses[1])

        local EPOCH = 5
        local PATH = tmpname(".pt")
        local LOSS = 0.4
        -- torch.save({'epoch': EPOCH, 'model_state_dict': net.state_dict(), ...}, PATH)
        tide.save({
            epoch = EPOCH,
            model_state_dict = net:state_dict(),
            optimizer_state_dict = optimizer:state_dict(),
            loss = LOSS,
        }, PATH)

        local model = Net()
        -- optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)  (the recipe's net)
        optimizer = optim.SGD(model:parameters(), { lr = 0.001, momentum = 0.9 })

        local checkpoint = tide.load(PATH)
        os.remove(PATH)
        model:load_state_dict(checkpoint["model_state_dict"])
        optimizer:load_state_dict(checkpoint["optimizer_state_dict"])
        local epoch = checkpoint["epoch"]
        local loss = checkpoint["loss"]
        assert.are.equal(5, epoch)
        assert.are.equal(0.4, loss)

        model:eval()
        assert.is_false(model.training)
        -- - or -
        model:train()
        -- resuming: the same next step as the original
        local function step(m, o)
            o:zero_grad()
            local l = F.cross_entropy(m(x), y)
            l:backward()
            o:step()
        end
        local opt_net = optim.SGD(net:parameters(), { lr = 0.001, momentum = 0.9 })
        opt_net:load_state_dict(checkpoint["optimizer_state_dict"])
        step(net, opt_net)
        step(model, optimizer)
        assert.is_true(tide.allclose(model.fc3.weight, net.fc3.weight, { atol = 1e-6 }))
    end)
end)

describe("recipes/warmstarting_model_using_parameters_from_a_different_model.py", function()
    it("netB.load_state_dict(torch.load(PATH), strict=False)", function()
        tide.manual_seed(0)
        local NetA, NetB = Net, Net:extend("NetB")
        local netA = NetA()
        local netB = NetB()
        local PATH = tmpname(".pt")
        tide.save(netA:state_dict(), PATH)
        -- netB.load_state_dict(torch.load(PATH), strict=False)
        local result = netB:load_state_dict(tide.load(PATH), { strict = false })
        assert.are.same({}, result.missing_keys)
        assert.are.same({}, result.unexpected_keys)
        assert.is_true(tide.equal(netA.fc2.bias, netB.fc2.bias))
        -- a partial state_dict: some keys renamed
        local sd = tide.load(PATH)
        sd["fc3.w"] = sd["fc3.weight"]
        sd["fc3.weight"] = nil
        local r = netB:load_state_dict(sd, false)
        assert.are.same({ "fc3.weight" }, r.missing_keys)
        assert.are.same({ "fc3.w" }, r.unexpected_keys)
        os.remove(PATH)
    end)
end)

describe("recipes/what_is_state_dict.py", function()
    it("the model's and the optimizer's state_dict", function()
        local net = Net()
        local optimizer = optim.SGD(net:parameters(), { lr = 0.001, momentum = 0.9 })
        -- for param_tensor in net.state_dict():
        local names = {}
        -- (the state dict is callable: registration order on every Lua, where pairs is on 5.4)
        for param_tensor in net:state_dict() do
            -- print(param_tensor, "\t", net.state_dict()[param_tensor].size())
            names[#names + 1] = param_tensor .. "\t" .. tostring(net:state_dict()[param_tensor]:size())
        end
        assert.are.same({
            "conv1.weight\ttide.Size({6, 3, 5, 5})", "conv1.bias\ttide.Size({6})",
            "conv2.weight\ttide.Size({16, 6, 5, 5})", "conv2.bias\ttide.Size({16})",
            "fc1.weight\ttide.Size({120, 400})", "fc1.bias\ttide.Size({120})",
            "fc2.weight\ttide.Size({84, 120})", "fc2.bias\ttide.Size({84})",
            "fc3.weight\ttide.Size({10, 84})", "fc3.bias\ttide.Size({10})" }, names)
        -- for var_name in optimizer.state_dict(): print(var_name, "\t", optimizer.state_dict()[var_name])
        local sd = optimizer:state_dict()
        assert.are.same({}, sd["state"])
        assert.are.equal(0.001, sd["param_groups"][1].lr)
        assert.are.equal(0.9, sd["param_groups"][1].momentum)
        assert.are.same({ 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 }, sd["param_groups"][1].params)
        -- the keys stay the flat names (what tide.save writes): the view is read only
        for k in pairs(sd) do assert.is_truthy(k:find("^param_groups%.1%.")) end
        -- after a step: state[i].momentum_buffer, parameter i's (1-based)
        F.cross_entropy(net(tide.randn(2, 3, 32, 32)), tide.tensor({ 1, 2 })):backward()
        optimizer:step()
        sd = optimizer:state_dict()
        assert.is_true(tide.equal(sd["state"][10].momentum_buffer, net.fc3.bias.grad))
        assert.is_nil(sd["params"])
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. recipes/tensorboard_with_pytorch.py
---------------------------------------------------------------------------------------------
describe("recipes/tensorboard_with_pytorch.py", function()
    it("add_scalar of the loss in a linear regression loop, flush, close", function()
        tide.manual_seed(0)
        local SummaryWriter = require("tide.utils.tensorboard").SummaryWriter
        local dir = tmpname("_runs")
        -- writer = SummaryWriter()  (a temporary log_dir here, not ./runs)
        local writer = SummaryWriter(dir)
        -- x = torch.arange(-5, 5, 0.1).view(-1, 1)
        local x = tide.arange(-5, 5, 0.1):view(-1, 1)
        -- y = -5 * x + 0.1 * torch.randn(x.size())
        local y = -5 * x + 0.1 * tide.randn(x:size())
        local model = nn.Linear(1, 1)
        local criterion = nn.MSELoss()
        -- optimizer = torch.optim.SGD(model.parameters(), lr = 0.1)
        local optimizer = optim.SGD(model:parameters(), { lr = 0.1 })
        local losses = {}
        -- def train_model(iter):
        local function train_model(iter)
            -- for epoch in range(iter):
            for epoch = 0, iter - 1 do
                local y1 = model(x)
                local loss = criterion(y1, y)
                -- writer.add_scalar("Loss/train", loss, epoch)
                writer:add_scalar("Loss/train", loss, epoch)
                optimizer:zero_grad()
                loss:backward()
                optimizer:step()
                losses[#losses + 1] = loss:item()
            end
        end
        train_model(10)
        writer:flush()
        assert.is_true(losses[10] < losses[1])
        writer:close()
        local found
        for f in io.popen('ls "' .. dir .. '"'):lines() do
            if f:find("events.out.tfevents", 1, true) then found = f end
        end
        assert.is_truthy(found)
        os.execute('rm -rf "' .. dir .. '"')
    end)
end)

---------------------------------------------------------------------------------------------
-- 4. beginner_source/nlp/deep_learning_tutorial.py
---------------------------------------------------------------------------------------------
describe("nlp/deep_learning_tutorial.py", function()
    -- Python's str.split()
    local function split(s)
        local words = {}
        for w in s:gmatch("%S+") do words[#words + 1] = w end
        return words
    end

    it("affine maps, non-linearities, softmax", function()
        tide.manual_seed(1)
        local lin = nn.Linear(5, 3)
        -- data = torch.randn(2, 5)
        local data = tide.randn(2, 5)
        assert.are.same({ 2, 3 }, { lin(data):size(1), lin(data):size(2) })
        data = tide.randn(2, 2)
        assert.is_true(tide.equal(F.relu(data), data:clamp({ min = 0 })))
        data = tide.randn(5)
        -- print(F.softmax(data, dim=0))
        local sm = F.softmax(data, { dim = 1 })
        -- print(F.softmax(data, dim=0).sum())
        assert.is_true(math.abs(F.softmax(data, { dim = 1 }):sum():item() - 1) < 1e-6)
        -- print(F.log_softmax(data, dim=0))
        assert.is_true(tide.allclose(F.log_softmax(data, { dim = 1 }), sm:log(), { atol = 1e-6 }))
    end)

    it("BoWClassifier, make_bow_vector, NLLLoss, SGD", function()
        tide.manual_seed(1)
        local data = { { split("me gusta comer en la cafeteria"), "SPANISH" },
            { split("Give it to me"), "ENGLISH" },
            { split("No creo que sea una buena idea"), "SPANISH" },
            { split("No it is not a good idea to get lost at sea"), "ENGLISH" } }
        local test_data = { { split("Yo creo que si"), "SPANISH" },
            { split("it is lost on me"), "ENGLISH" } }

        -- word_to_ix maps each word in the vocab to a unique integer (1-based here)
        local word_to_ix, n = {}, 0
        -- for sent, _ in data + test_data:
        for _, d in ipairs({ data, test_data }) do
            for _, pair in ipairs(d) do
                for _, word in ipairs(pair[1]) do
                    if word_to_ix[word] == nil then
                        n = n + 1
                        word_to_ix[word] = n
                    end
                end
            end
        end
        local VOCAB_SIZE = n
        local NUM_LABELS = 2
        assert.are.equal(26, VOCAB_SIZE)

        -- class BoWClassifier(nn.Module):
        local BoWClassifier = nn.Module:extend("BoWClassifier")
        function BoWClassifier:init(num_labels, vocab_size)
            self.linear = nn.Linear(vocab_size, num_labels)
        end

        function BoWClassifier:forward(bow_vec)
            return F.log_softmax(self.linear(bow_vec), { dim = 2 })
        end

        local function make_bow_vector(sentence, word_to_ix)
            -- vec = torch.zeros(len(word_to_ix))
            local vec = tide.zeros(VOCAB_SIZE)
            for _, word in ipairs(sentence) do
                -- vec[word_to_ix[word]] += 1
                vec[word_to_ix[word]] = vec[word_to_ix[word]] + 1
            end
            return vec:view(1, -1)
        end

        local function make_target(label, label_to_ix)
            -- return torch.LongTensor([label_to_ix[label]])
            return tide.LongTensor({ label_to_ix[label] })
        end

        local model = BoWClassifier(NUM_LABELS, VOCAB_SIZE)
        local nparams = 0
        for _, param in ipairs(model:parameters()) do nparams = nparams + param:numel() end
        assert.are.equal(2 * 26 + 2, nparams)

        local sample = data[1]
        local bow_vector = make_bow_vector(sample[1], word_to_ix)
        assert.are.equal(6, bow_vector:sum():item())
        -- log_probs = model(autograd.Variable(bow_vector))
        local log_probs = model(tide.autograd.Variable(bow_vector))
        assert.are.same({ 1, 2 }, { log_probs:size(1), log_probs:size(2) })

        local label_to_ix = { SPANISH = 1, ENGLISH = 2 }

        local before = {}
        -- with torch.no_grad():
        tide.no_grad(function()
            for i, pair in ipairs(test_data) do
                local instance = pair[1]
                local bow_vec = make_bow_vector(instance, word_to_ix)
                before[i] = model(bow_vec)
            end
        end)
        -- print(next(model.parameters())[:, word_to_ix["creo"]])
        local creo_before = model:parameters()[1][{ {}, word_to_ix["creo"] }]:clone()

        local loss_function = nn.NLLLoss()
        local optimizer = optim.SGD(model:parameters(), { lr = 0.1 })
        local first, last
        for _ = 1, 100 do
            for _, pair in ipairs(data) do
                local instance, label = pair[1], pair[2]
                model:zero_grad()
                local bow_vec = make_bow_vector(instance, word_to_ix)
                local target = make_target(label, label_to_ix)
                log_probs = model(bow_vec)
                local loss = loss_function(log_probs, target)
                loss:backward()
                optimizer:step()
                first = first or loss:item()
                last = loss:item()
            end
        end
        assert.is_true(last < first)

        tide.no_grad(function()
            local lp1 = model(make_bow_vector(test_data[1][1], word_to_ix))
            local lp2 = model(make_bow_vector(test_data[2][1], word_to_ix))
            -- Spanish is much higher in the first example, English in the second
            assert.is_true(lp1[1][1]:item() > lp1[1][2]:item())
            assert.is_true(lp2[1][2]:item() > lp2[1][1]:item())
        end)
        -- Index corresponding to Spanish goes up, English goes down!
        local creo_after = model:parameters()[1][{ {}, word_to_ix["creo"] }]
        assert.is_true(creo_after[1]:item() > creo_before[1]:item())
        assert.is_true(creo_after[2]:item() < creo_before[2]:item())
    end)
end)
