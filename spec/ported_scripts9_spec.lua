-- ported_scripts9_spec.lua — real PyTorch scripts ported line for line: pytorch/examples'
-- mnist/main.py (the CNN, train/test with log_interval, Adadelta and StepLR, torch.save),
-- mnist_forward_forward/main.py (Hinton's Forward-Forward: overlay_y_on_x, Layer(nn.Linear) with
-- its own train and Adam, Net.predict by goodness per label), regression/main.py (polynomial
-- features, smooth_l1_loss, the manual param.data.add_ update until loss < 1e-3) and the
-- tutorial "Text classification with the torchtext library" (EmbeddingBag with offsets,
-- collate_batch, clip_grad_norm_, SGD with StepLR stepped on no improvement, predict) with a tiny
-- hand-made vocabulary in place of AG_NEWS. Tiny random data, a few training steps, values
-- against PyTorch 1.13 on fixed weights. The Python line stands above each Lua line that differs
-- from it; a line tide cannot write as Python does is marked `-- GAP:`. Dims, indices, tokens,
-- offsets and class targets are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite, close, assert_close_list = ported.assert_finite, ported.close, ported.assert_close_list

-- a tensor's values as a flat Lua list
local function flat(t)
    return t:detach():reshape(-1):totable()
end

-- fixed weights, the same in the PyTorch reference: sin(k * a + b) for k = 0, 1, ...
local function fill(shape, a, b)
    local n = 1
    for _, s in ipairs(shape) do
        n = n * s
    end
    local v = {}
    for k = 0, n - 1 do
        v[k + 1] = math.sin(k * a + b)
    end
    return tide.tensor(v, { dtype = tide.float32 }):reshape(shape)
end

-- the message of the error f(...) raises
local function catch(f, ...)
    local ok, err = pcall(f, ...)
    assert(not ok, "expected an error")
    return tostring(err)
end

---------------------------------------------------------------------------------------------
-- 1. mnist/main.py
---------------------------------------------------------------------------------------------
describe("mnist/main.py", function()
    -- class Net(nn.Module):
    local Net = nn.Module:extend("Net")
    function Net:init()
        -- super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)
    end

    function Net:forward(x)
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        -- x = torch.flatten(x, 1)
        x = tide.flatten(x, 2)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        -- output = F.log_softmax(x, dim=1)
        local output = F.log_softmax(x, { dim = 2 })
        return output
    end

    -- def train(args, model, device, train_loader, optimizer, epoch):
    local function train(args, model, device, train_loader, optimizer, epoch, printed, losses)
        model:train()
        -- for batch_idx, (data, target) in enumerate(train_loader):
        local batch_idx = 0
        for data, target in train_loader:iter() do
            -- data, target = data.to(device), target.to(device)
            data, target = data:to(device), target:to(device)
            optimizer:zero_grad()
            local output = model(data)
            local loss = F.nll_loss(output, target)
            loss:backward()
            optimizer:step()
            losses[#losses + 1] = loss:item()
            if batch_idx % args.log_interval == 0 then
                -- print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                --     epoch, batch_idx * len(data), len(train_loader.dataset),
                --     100. * batch_idx / len(train_loader), loss.item()))
                printed[#printed + 1] = string.format("Train Epoch: %d [%d/%d (%.0f%%)]\tLoss: %.6f",
                    epoch, batch_idx * #data, train_loader.dataset:len(),
                    100. * batch_idx / train_loader:len(), loss:item())
                if args.dry_run then
                    break
                end
            end
            batch_idx = batch_idx + 1
        end
    end

    -- def test(model, device, test_loader):
    local function test(model, device, test_loader, printed)
        model:eval()
        local test_loss = 0
        local correct = 0
        -- with torch.no_grad():
        tide.no_grad(function()
            for data, target in test_loader:iter() do
                data, target = data:to(device), target:to(device)
                local output = model(data)
                -- test_loss += F.nll_loss(output, target, reduction='sum').item()  # sum up batch loss
                test_loss = test_loss + F.nll_loss(output, target, { reduction = "sum" }):item()
                -- pred = output.argmax(dim=1, keepdim=True)  # get the index of the max log-probability
                local pred = output:argmax({ dim = 2, keepdim = true })
                -- correct += pred.eq(target.view_as(pred)).sum().item()
                correct = correct + pred:eq(target:view_as(pred)):sum():item()
            end
        end)

        -- test_loss /= len(test_loader.dataset)
        test_loss = test_loss / test_loader.dataset:len()

        -- print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
        --     test_loss, correct, len(test_loader.dataset),
        --     100. * correct / len(test_loader.dataset)))
        printed[#printed + 1] = string.format("\nTest set: Average loss: %.4f, Accuracy: %d/%d " ..
            "(%.0f%%)\n", test_loss, correct, test_loader.dataset:len(),
            100. * correct / test_loader.dataset:len())
        return test_loss, correct
    end

    it("Net, train/test with log_interval, Adadelta(lr=1.0), StepLR(step_size=1, gamma=0.7), " ..
        "torch.save(model.state_dict())", function()
        -- parser.add_argument(...): the defaults, as args = parser.parse_args() gives them
        local args = { batch_size = 64, test_batch_size = 1000, epochs = 14, lr = 1.0, gamma = 0.7,
            no_accel = false, dry_run = false, seed = 1, log_interval = 10, save_model = false }
        -- shrunk: 12 training and 6 test images, 2 epochs, a log line every 2 batches
        args.batch_size, args.test_batch_size, args.epochs, args.log_interval = 4, 3, 2, 2
        args.save_model = true

        -- use_accel = not args.no_accel and torch.accelerator.is_available()
        local use_accel = not args.no_accel and tide.accelerator.is_available()

        -- torch.manual_seed(args.seed)
        tide.manual_seed(args.seed)

        local device
        if use_accel then
            -- device = torch.accelerator.current_accelerator()
            device = tide.accelerator.current_accelerator()
        else
            -- device = torch.device("cpu")
            device = tide.device("cpu")
        end

        -- train_kwargs = {'batch_size': args.batch_size}
        local train_kwargs = { batch_size = args.batch_size }
        local test_kwargs = { batch_size = args.test_batch_size }
        -- accel_kwargs = {'num_workers': 1, 'persistent_workers': True, 'pin_memory': True,
        --                 'shuffle': True}
        local accel_kwargs = { num_workers = 1, persistent_workers = true, pin_memory = true,
            shuffle = true }
        -- train_kwargs.update(accel_kwargs) (here on every machine: the loader takes them)
        for k, v in pairs(accel_kwargs) do
            train_kwargs[k] = v
        end

        -- transform=transforms.Compose([transforms.ToTensor(),
        --     transforms.Normalize((0.1307,), (0.3081,))])
        -- dataset1 = datasets.MNIST('../data', train=True, download=True, transform=transform)
        local function fake_mnist(n)
            local images = (tide.rand(n, 1, 28, 28) - 0.1307) / 0.3081
            return tide.data.TensorDataset(images, tide.randint(1, 11, { n }))
        end
        local dataset1 = fake_mnist(12)
        local dataset2 = fake_mnist(6)
        -- train_loader = torch.utils.data.DataLoader(dataset1,**train_kwargs)
        local train_loader = tide.utils.data.DataLoader(dataset1, train_kwargs)
        local test_loader = tide.utils.data.DataLoader(dataset2, test_kwargs)
        assert.are.equal(3, train_loader:len())

        -- model = Net().to(device)
        local model = Net():to(device)
        -- optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
        local optimizer = optim.Adadelta(model:parameters(), { lr = args.lr })

        -- scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
        local scheduler = optim.lr_scheduler.StepLR(optimizer, { step_size = 1, gamma = args.gamma })
        local printed, losses, lrs = {}, {}, {}
        -- for epoch in range(1, args.epochs + 1):
        for epoch = 1, args.epochs do
            train(args, model, device, train_loader, optimizer, epoch, printed, losses)
            test(model, device, test_loader, printed)
            scheduler:step()
            lrs[epoch] = optimizer.param_groups[1].lr
        end
        assert_close_list({ 0.7, 0.49 }, lrs, 1e-12, "lr")
        -- 2 log lines (batches 0 and 2) and a test line per epoch
        assert.are.equal(6, #printed)
        assert.is_truthy(printed[1]:match("^Train Epoch: 1 %[0/12 %(0%%%)%]\tLoss: %d+%.%d%d%d%d%d%d$"),
            printed[1])
        assert.is_truthy(printed[2]:match("^Train Epoch: 1 %[8/12 %(67%%%)%]\tLoss: "), printed[2])
        assert.is_truthy(printed[3]:match("^\nTest set: Average loss: %d+%.%d%d%d%d, Accuracy: %d/6 " ..
            "%(%d+%%%)\n$"), printed[3])
        assert.are.equal(6, #losses)
        for _, l in ipairs(losses) do
            assert_finite(l, "loss")
        end

        -- args.dry_run: one logged batch, then break
        args.dry_run = true
        local dry = {}
        train(args, model, device, train_loader, optimizer, 3, dry, {})
        assert.are.equal(1, #dry)

        if args.save_model then
            -- torch.save(model.state_dict(), "mnist_cnn.pt") (a temporary file here)
            local path = os.tmpname()
            tide.save(model:state_dict(), path)
            local loaded = Net()
            loaded:load_state_dict(tide.load(path))
            os.remove(path)
            loaded:eval()
            model:eval()
            local x = dataset2:get(1):unsqueeze(1)
            assert.is_true(tide.equal(model(x), loaded(x)))
        end
    end)

    it("the pieces against PyTorch 1.13: log_softmax + nll_loss with Adadelta and StepLR, " ..
        "reduction='sum', argmax(dim=1, keepdim=True), pred.eq(target.view_as(pred))", function()
        local lin = nn.Linear(6, 4)
        tide.no_grad(function()
            lin.weight:copy_(fill({ 4, 6 }, 0.37, 0.1) * 0.5)
            lin.bias:copy_(fill({ 4 }, 1.3, 0.2) * 0.1)
        end)
        local x = fill({ 5, 6 }, 0.71, 0.3)
        local t = tide.tensor({ 1, 0, 3, 2, 1 }) + 1 -- PyTorch's classes, 1-based
        local optimizer = optim.Adadelta(lin:parameters(), { lr = 1.0 })
        local scheduler = optim.lr_scheduler.StepLR(optimizer, { step_size = 1, gamma = 0.7 })
        local losses, lrs = {}, {}
        for epoch = 1, 3 do
            optimizer:zero_grad()
            local out = F.log_softmax(lin(x), { dim = 2 })
            local loss = F.nll_loss(out, t)
            loss:backward()
            optimizer:step()
            losses[epoch] = loss:item()
            scheduler:step()
            lrs[epoch] = optimizer.param_groups[1].lr
        end
        assert_close_list({ 2.212246894836426, 2.1989951133728027, 2.1895415782928467 }, losses,
            1e-5, "loss")
        assert_close_list({ 0.7, 0.48999999999999994, 0.3429999999999999 }, lrs, 1e-12, "lr")
        assert_close_list({ 0.0429245, 0.2194331, 0.3652999, 0.4607632, 0.5069472, 0.4714844 },
            { unpack(flat(lin.weight), 1, 6) }, 1e-5, "weight")
        assert_close_list({ 0.0127963, 0.1067804, 0.0265531, -0.0888147 }, flat(lin.bias), 1e-5,
            "bias")
        local output = F.log_softmax(lin(x), { dim = 2 })
        assert.is_true(close(F.nll_loss(output, t, { reduction = "sum" }):item(),
            10.914223670959473, 1e-5))
        local pred = output:argmax({ dim = 2, keepdim = true })
        assert.are.same({ 5, 1 }, pred.shape)
        -- PyTorch's [3, 2, 1, 1, 0], 1-based
        assert.are.same({ 4, 3, 2, 2, 1 }, flat(pred))
        assert.are.equal(0, pred:eq(t:view_as(pred)):sum():item())
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. mnist_forward_forward/main.py
---------------------------------------------------------------------------------------------
describe("mnist_forward_forward/main.py", function()
    -- the script's globals: args (parser.parse_args()) and device, read by Layer and get_y_neg
    local args, device

    -- Python's l.index(v), 1-based
    local function index(l, v)
        for i, x in ipairs(l) do
            if x == v then
                return i
            end
        end
        error("not in list: " .. tostring(v))
    end

    -- Python's sum(list): 0 + list[1] + list[2] + ...
    local function sum(list)
        local s = 0
        for _, v in ipairs(list) do
            s = s + v
        end
        return s
    end

    -- def get_y_neg(y):
    local function get_y_neg(y)
        local y_neg = y:clone()
        -- for idx, y_samp in enumerate(y):
        for idx, y_samp in ipairs(y:unbind()) do
            -- allowed_indices = list(range(10)) (the classes, 1-based)
            local allowed_indices = {}
            for c = 1, 10 do
                allowed_indices[c] = c
            end
            -- allowed_indices.remove(y_samp.item())
            table.remove(allowed_indices, index(allowed_indices, y_samp:item()))
            -- y_neg[idx] = torch.tensor(allowed_indices)[
            --     torch.randint(len(allowed_indices), size=(1,))
            -- ].item()
            -- (randint(high) draws 0..high-1, PyTorch's; a 1-based index is randint(1, high + 1))
            y_neg[idx] = tide.tensor(allowed_indices)[
                tide.randint(1, #allowed_indices + 1, { size = { 1 } })
            ]:item()
        end
        return y_neg:to(device)
    end

    -- def overlay_y_on_x(x, y, classes=10):
    local function overlay_y_on_x(x, y, classes)
        classes = classes or 10
        local x_ = x:clone()
        -- x_[:, :classes] *= 0.0
        -- GAP: Lua has no *=; the in-place op on the view writes through, as Python's does
        x_[{ {}, { 1, classes } }]:mul_(0.0)
        -- x_[range(x.shape[0]), y] = x.max()
        x_[{ tide.arange(1, x.shape[1] + 1), y }] = x:max()
        return x_
    end

    -- class Layer(nn.Linear):
    local Layer = nn.Linear:extend("Layer")
    -- def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
    function Layer:init(in_features, out_features, bias, device_, dtype)
        if bias == nil then
            bias = true
        end
        -- super().__init__(in_features, out_features, bias, device, dtype)
        nn.Linear.init(self, in_features, out_features, bias, device_, dtype)
        self.relu = nn.ReLU()
        -- self.opt = Adam(self.parameters(), lr=args.lr)
        self.opt = optim.Adam(self:parameters(), { lr = args.lr })
        self.threshold = args.threshold
        self.num_epochs = args.epochs
    end

    function Layer:forward(x)
        -- x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)
        local x_direction = x / (x:norm(2, 2, { keepdim = true }) + 1e-4)
        -- return self.relu(torch.mm(x_direction, self.weight.T) + self.bias.unsqueeze(0))
        return self.relu(tide.mm(x_direction, self.weight.T) + self.bias:unsqueeze(1))
    end

    -- (overrides nn.Module.train, as the script's does)
    function Layer:train(x_pos, x_neg, losses)
        -- for i in range(self.num_epochs):
        for i = 0, self.num_epochs - 1 do
            -- g_pos = self.forward(x_pos).pow(2).mean(1)
            local g_pos = self:forward(x_pos):pow(2):mean(2)
            local g_neg = self:forward(x_neg):pow(2):mean(2)
            -- loss = torch.log1p(torch.exp(torch.cat([-g_pos + self.threshold,
            --     g_neg - self.threshold]))).mean()
            local loss = tide.log1p(
                tide.exp(
                    tide.cat({ -g_pos + self.threshold, g_neg - self.threshold })
                )
            ):mean()
            self.opt:zero_grad()
            loss:backward()
            self.opt:step()
            if losses then
                losses[#losses + 1] = loss:item()
            end
            -- if i % args.log_interval == 0: print("Loss: ", loss.item())
            if i % args.log_interval == 0 then
                assert_finite(loss:item(), "loss")
            end
        end
        -- return self.forward(x_pos).detach(), self.forward(x_neg).detach()
        return self:forward(x_pos):detach(), self:forward(x_neg):detach()
    end

    -- class Net(torch.nn.Module):
    local Net = nn.Module:extend("Net")
    function Net:init(dims)
        -- self.layers = [] (a plain list: its layers are not registered, as PyTorch's)
        self.layers = {}
        -- for d in range(len(dims) - 1):
        for d = 1, #dims - 1 do
            -- self.layers = self.layers + [Layer(dims[d], dims[d + 1]).to(device)]
            self.layers[#self.layers + 1] = Layer(dims[d], dims[d + 1]):to(device)
        end
    end

    function Net:predict(x)
        local goodness_per_label = {}
        -- for label in range(10):
        for label = 1, 10 do
            local h = overlay_y_on_x(x, label)
            local goodness = {}
            for _, layer in ipairs(self.layers) do
                h = layer(h)
                -- goodness = goodness + [h.pow(2).mean(1)]
                goodness[#goodness + 1] = h:pow(2):mean(2)
            end
            -- goodness_per_label += [sum(goodness).unsqueeze(1)]
            goodness_per_label[#goodness_per_label + 1] = sum(goodness):unsqueeze(2)
        end
        -- goodness_per_label = torch.cat(goodness_per_label, 1)
        goodness_per_label = tide.cat(goodness_per_label, 2)
        -- return goodness_per_label.argmax(1)
        return goodness_per_label:argmax(2), goodness_per_label
    end

    function Net:train(x_pos, x_neg, losses)
        local h_pos, h_neg = x_pos, x_neg
        -- for i, layer in enumerate(self.layers):
        for i, layer in ipairs(self.layers) do
            -- print("training layer: ", i)
            losses[i] = {}
            h_pos, h_neg = layer:train(h_pos, h_neg, losses[i])
        end
    end

    it("overlay_y_on_x, Layer(nn.Linear) with its own train and Adam, Net.predict, get_y_neg " ..
        "and the randperm negatives, on 64 samples of 784 features", function()
        -- parser.add_argument(...): the defaults
        args = { epochs = 1000, lr = 0.03, no_accel = false, seed = 1, save_model = false,
            train_size = 50000, threshold = 2, test_size = 10000, log_interval = 10 }
        -- shrunk: 64 training and 32 test samples, 12 epochs per layer
        args.train_size, args.test_size, args.epochs, args.log_interval = 64, 32, 12, 4
        tide.manual_seed(args.seed)
        -- use_accel = not args.no_accel and torch.accelerator.is_available()
        local use_accel = not args.no_accel and tide.accelerator.is_available()
        if use_accel then
            device = tide.accelerator.current_accelerator()
        else
            device = tide.device("cpu")
        end
        -- train_kwargs = {"batch_size": args.train_size}
        local train_kwargs = { batch_size = args.train_size }
        local test_kwargs = { batch_size = args.test_size }
        -- transform = Compose([ToTensor(), Normalize((0.1307,), (0.3081,)),
        --     Lambda(lambda x: torch.flatten(x))])
        local function fake_mnist(n)
            local images = (tide.rand(n, 1, 28, 28) - 0.1307) / 0.3081
            return tide.data.TensorDataset(tide.flatten(images, 2), tide.randint(1, 11, { n }))
        end
        -- train_loader = DataLoader(MNIST("./data/", train=True, ...), **train_kwargs)
        local train_loader = tide.data.DataLoader(fake_mnist(64), train_kwargs)
        local test_loader = tide.data.DataLoader(fake_mnist(32), test_kwargs)
        -- net = Net([784, 500, 500]) (64 units here)
        local net = Net({ 784, 64, 64 })
        assert.are.equal(2, #net.layers)
        assert.is_true(tide.isinstance(net.layers[1], nn.Linear))
        -- a plain list registers nothing: PyTorch's net.state_dict() is empty too
        assert.are.equal(0, #net:parameters())
        assert.are.equal(2, #net.layers[1]:parameters())
        -- x, y = next(iter(train_loader))
        local x, y = train_loader:iter()()
        -- x, y = x.to(device), y.to(device)
        x, y = x:to(device), y:to(device)
        assert.are.same({ 64, 784 }, x.shape)
        local x_pos = overlay_y_on_x(x, y)
        local y_neg = get_y_neg(y)
        assert.are.equal(0, y_neg:eq(y):sum():item()) -- every negative label is another
        assert.is_true(y_neg:min():item() >= 1 and y_neg:max():item() <= 10)
        local x_neg = overlay_y_on_x(x, y_neg)
        -- the first 10 features are zero but the label's, which is x.max()
        local m = x:max():item()
        assert.are.equal(64, x_pos[{ {}, { 1, 10 } }]:ne(0):sum(2):eq(1):sum():item())
        assert.is_true(tide.equal(x_pos[{ tide.arange(1, 65), y }], tide.full({ 64 }, m)))
        assert.is_true(tide.equal(x_pos[{ {}, { 11, -1 } }], x[{ {}, { 11, -1 } }]))

        local losses = {}
        net:train(x_pos, x_neg, losses)
        for i = 1, 2 do
            assert.are.equal(12, #losses[i])
            for _, l in ipairs(losses[i]) do
                assert_finite(l, "loss")
            end
            assert.is_true(losses[i][12] < losses[i][1], "layer " .. i .. " loss fell: " ..
                losses[i][1] .. " -> " .. losses[i][12])
        end
        -- print("train error:", 1.0 - net.predict(x).eq(y).float().mean().item())
        local train_error = 1.0 - net:predict(x):eq(y):float():mean():item()
        assert.is_true(train_error >= 0 and train_error <= 1)
        -- x_te, y_te = next(iter(test_loader))
        local x_te, y_te = test_loader:iter()()
        local test_error = 1.0 - net:predict(x_te):eq(y_te):float():mean():item()
        assert.is_true(test_error >= 0 and test_error <= 1)

        -- the earlier version's negatives: rnd = torch.randperm(x.size(0));
        -- x_neg = overlay_y_on_x(x, y[rnd])
        local rnd = tide.randperm(x:size(1))
        x_neg = overlay_y_on_x(x, y[rnd])
        assert.is_true(tide.equal(x_neg[{ tide.arange(1, 65), y[rnd] }], tide.full({ 64 }, m)))
    end)

    it("overlay_y_on_x, Layer.forward, train's losses (log1p and the earlier log(1 + exp)) and " ..
        "predict's goodness against PyTorch 1.13", function()
        args = { epochs = 3, lr = 0.03, threshold = 2.0, log_interval = 10 }
        device = tide.device("cpu")
        local x = fill({ 4, 12 }, 0.7, 0.1)
        local y = tide.tensor({ 3, 0, 9, 5 }) + 1 -- PyTorch's labels, 1-based
        local o = flat(overlay_y_on_x(x, y))
        assert_close_list({ 0.0, 0.0, 0.0, 0.9999937, 0.0, 0, 0, 0, 0, 0.0, 0.728969, 0.9985433,
            0.9999937, 0.0, 0, 0, 0, 0, 0.0, 0.0, 0.0, 0.0, 0.2064675, -0.472422, 0, 0, 0, 0.0,
            0.0, 0.0, 0.0, 0.0, 0, 0.9999937, -0.9434015, -0.5078966, 0.0, 0.0, 0.0, 0.0, 0.0,
            0.9999937, 0, 0, 0, 0.0, 0.7733279, 0.9999118 }, o, 1e-6, "overlay")
        local l1, l2 = Layer(12, 6), Layer(6, 5)
        tide.no_grad(function()
            l1.weight:copy_(fill({ 6, 12 }, 0.3, 0.2))
            l1.bias:copy_(fill({ 6 }, 1.1, 0.5) * 0.5)
            l2.weight:copy_(fill({ 5, 6 }, 0.53, 0.4))
            l2.bias:copy_(fill({ 5 }, 0.9, 0.1) * 0.5)
        end)
        assert_close_list({ 0.5531144, 0.5552406, 0.0, 0.3790866, 0.0, 0.6382987, 0.5528487, 0.0,
            1.2621635, 0.0, 0.4713183, 0.0, 0.5620728, 0.0759116, 0.6515573, 0.0, 0.0, 0.0,
            0.60932, 0.6727237, 0.0, 0.7403176, 0.0, 0.9603263 }, flat(l1(overlay_y_on_x(x, y))),
            1e-5, "forward")
        -- the earlier version's loss: torch.log(1 + torch.exp(...)).mean(), the same value
        local g_pos = l1:forward(overlay_y_on_x(x, y)):pow(2):mean(2)
        local g_neg = l1:forward(overlay_y_on_x(x, y[tide.tensor({ 3, 1, 4, 2 })])):pow(2):mean(2)
        local z = tide.cat({ -g_pos + l1.threshold, g_neg - l1.threshold })
        assert.is_true(close(tide.log(1 + tide.exp(z)):mean():item(), 1.050486445426941, 1e-5))
        -- x_pos = overlay_y_on_x(x, y); x_neg = overlay_y_on_x(x, y[rnd]), rnd fixed here
        local x_pos = overlay_y_on_x(x, y)
        local x_neg = overlay_y_on_x(x, y[tide.tensor({ 3, 1, 4, 2 })])
        local net = Net({})
        net.layers = { l1, l2 }
        local losses = {}
        net:train(x_pos, x_neg, losses)
        assert_close_list({ 1.050486445426941, 1.030693531036377, 1.0089848041534424 }, losses[1],
            1e-5, "layer 1 loss")
        assert_close_list({ 0.8429678678512573, 0.8137317895889282, 0.7855014204978943 },
            losses[2], 1e-5, "layer 2 loss")
        local pred, goodness = net:predict(x)
        -- PyTorch's [9, 0, 0, 9], 1-based
        assert.are.same({ 10, 1, 1, 10 }, flat(pred))
        assert_close_list({ 1.5028548, 1.5355592, 1.511894, 1.6021135, 1.6259604, 1.8492836,
            1.9359827, 2.1046097, 2.2538195, 2.3172634 }, flat(goodness[1]), 1e-5, "goodness")
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. regression/main.py
---------------------------------------------------------------------------------------------
describe("regression/main.py", function()
    local POLY_DEGREE = 4
    local W_target, b_target

    -- def make_features(x):
    --     """Builds features i.e. a matrix with columns [x, x^2, x^3, x^4]."""
    local function make_features(x)
        -- x = x.unsqueeze(1)
        x = x:unsqueeze(2)
        -- return torch.cat([x ** i for i in range(1, POLY_DEGREE+1)], 1)
        local cols = {}
        for i = 1, POLY_DEGREE do
            cols[#cols + 1] = x ^ i
        end
        return tide.cat(cols, 2)
    end

    -- def f(x):
    --     """Approximated function."""
    local function f(x)
        -- return x.mm(W_target) + b_target.item()
        return x:mm(W_target) + b_target:item()
    end

    -- def poly_desc(W, b):
    --     """Creates a string description of a polynomial."""
    local function poly_desc(W, b)
        local result = "y = "
        -- for i, w in enumerate(W):
        for i, w in ipairs(W:unbind()) do
            -- result += '{:+.2f} x^{} '.format(w, i + 1)
            -- GAP: string.format's %f takes a Lua number, never a tensor (Python's format
            -- calls the 0-d tensor's __format__): w:item()
            result = result .. string.format("%+.2f x^%d ", w:item(), i)
        end
        -- result += '{:+.2f}'.format(b[0])
        result = result .. string.format("%+.2f", b[1]:item())
        return result
    end

    -- def get_batch(batch_size=32):
    --     """Builds a batch i.e. (x, f(x)) pair."""
    local function get_batch(batch_size)
        batch_size = batch_size or 32
        local random = tide.randn(batch_size)
        local x = make_features(random)
        local y = f(x)
        return x, y
    end

    it("make_features, f, poly_desc and the manual update against PyTorch 1.13", function()
        W_target = tide.tensor({ { 1.5 }, { -2.0 }, { 0.5 }, { 0.25 } })
        b_target = tide.tensor({ 0.7 })
        local xc = make_features(tide.tensor({ -1.0, 0.5, 2.0, 1.25 }))
        assert_close_list({ -1.0, 1.0, -1.0, 1.0, 0.5, 0.25, 0.125, 0.0625, 2.0, 4.0, 8.0, 16.0,
            1.25, 1.5625, 1.953125, 2.4414062 }, flat(xc), 1e-6, "features")
        assert_close_list({ -3.05, 1.028125, 3.7, 1.0369141 }, flat(f(xc)), 1e-6, "f")
        -- poly_desc(W_target.view(-1), b_target)
        assert.are.equal("y = +1.50 x^1 -2.00 x^2 +0.50 x^3 +0.25 x^4 +0.70",
            poly_desc(W_target:view(-1), b_target))
        -- fc = torch.nn.Linear(W_target.size(0), 1)
        local fc = nn.Linear(W_target:size(1), 1)
        tide.no_grad(function()
            fc.weight:copy_(fill({ 1, 4 }, 0.8, 0.3))
            fc.bias:copy_(tide.tensor({ 0.1 }))
        end)
        local losses = {}
        for k = 1, 3 do
            fc:zero_grad()
            local output = F.smooth_l1_loss(fc(xc), f(xc))
            losses[k] = output:item()
            output:backward()
            -- for param in fc.parameters(): param.data.add_(-0.1 * param.grad)
            for _, param in ipairs(fc:parameters()) do
                param.data:add_(-0.1 * param.grad)
            end
        end
        assert_close_list({ 5.1232171058654785, 1.9476773738861084, 1.8573487997055054 }, losses,
            1e-5, "loss")
        assert_close_list({ 0.2890248, 0.6599847, 0.7425952, -0.1502145 }, flat(fc.weight), 1e-5,
            "weight")
        assert_close_list({ 0.0017688 }, flat(fc.bias), 1e-4, "bias")
        -- the 2017-2020 versions' update, param.data.add_(-0.1 * param.grad.data), and the
        -- keyword form param.data.add_(param.grad, alpha=-0.1) take the same step
        -- GAP: the deprecated overload add_(Number alpha, Tensor other) that PyTorch 1.13 still
        -- takes with a warning, param.data.add_(-0.1, param.grad), raises in tide (C: tensor.c)
        local w0 = fc.weight:clone()
        fc:zero_grad()
        F.smooth_l1_loss(fc(xc), f(xc)):backward()
        local want = w0 - 0.1 * fc.weight.grad
        fc.weight.data:add_(-0.1 * fc.weight.grad.data)
        assert.is_true(tide.allclose(fc.weight, want))
        fc.weight.data:add_(fc.weight.grad, { alpha = -0.1 })
        assert.is_true(tide.allclose(fc.weight, want - 0.1 * fc.weight.grad))
    end)

    it("the loop: fc.zero_grad(), F.smooth_l1_loss, loss.item(), param.data.add_(-0.1 * " ..
        "param.grad) until loss < 1e-3", function()
        tide.manual_seed(1)
        -- W_target = torch.randn(POLY_DEGREE, 1) * 5
        W_target = tide.randn(POLY_DEGREE, 1) * 5
        -- b_target = torch.randn(1) * 5
        b_target = tide.randn(1) * 5

        -- Define model
        -- fc = torch.nn.Linear(W_target.size(0), 1)
        local fc = nn.Linear(W_target:size(1), 1)

        local loss, batch_idx
        -- for batch_idx in count(1):
        for i = 1, 3000 do
            batch_idx = i
            -- Get data
            local batch_x, batch_y = get_batch()

            -- Reset gradients
            fc:zero_grad()

            -- Forward pass
            local output = F.smooth_l1_loss(fc(batch_x), batch_y)
            loss = output:item()

            -- Backward pass
            output:backward()

            -- Apply gradients
            for _, param in ipairs(fc:parameters()) do
                param.data:add_(-0.1 * param.grad)
            end

            -- Stop criterion
            if loss < 1e-3 then
                break
            end
        end

        -- print('Loss: {:.6f} after {} batches'.format(loss, batch_idx))
        local line = string.format("Loss: %.6f after %d batches", loss, batch_idx)
        assert.is_true(loss < 1e-3, line)
        -- print('==> Learned function:\t' + poly_desc(fc.weight.view(-1), fc.bias))
        local learned = "==> Learned function:\t" .. poly_desc(fc.weight:view(-1), fc.bias)
        -- print('==> Actual function:\t' + poly_desc(W_target.view(-1), b_target))
        local actual = "==> Actual function:\t" .. poly_desc(W_target:view(-1), b_target)
        assert.is_truthy(learned:match("^==> Learned function:\ty = [+-]%d+%.%d%d x%^1 "), learned)
        -- the learned coefficients are the target's to 0.1
        local got, want = flat(fc.weight), flat(W_target)
        for i = 1, POLY_DEGREE do
            assert.is_true(math.abs(got[i] - want[i]) < 0.1, learned .. " / " .. actual)
        end
        assert.is_true(math.abs(fc.bias:item() - b_target:item()) < 0.1, learned .. " / " .. actual)
    end)
end)

---------------------------------------------------------------------------------------------
-- 4. The tutorial "Text classification with the torchtext library"
--    (beginner_source/text_sentiment_ngrams_tutorial.py), AG_NEWS replaced by a tiny hand-made
--    corpus of four topics and torchtext's tokenizer and vocabulary by small Lua ones
---------------------------------------------------------------------------------------------
describe("text_sentiment_ngrams_tutorial.py", function()
    -- get_tokenizer("basic_english"): lower case, words and punctuation apart
    local function tokenizer(s)
        local out = {}
        for w in s:lower():gmatch("[%w']+") do
            out[#out + 1] = w
        end
        return out
    end

    -- build_vocab_from_iterator(iterator, specials=[...]) and vocab.set_default_index: torchtext's
    -- order (the specials, then the tokens by count, ties alphabetical), ids 1-based; vocab(tokens)
    -- gives their ids, vocab[token] one
    local function build_vocab_from_iterator(iterator, specials)
        local counts, words = {}, {}
        for tokens in iterator do
            for _, t in ipairs(tokens) do
                if not counts[t] then
                    words[#words + 1] = t
                end
                counts[t] = (counts[t] or 0) + 1
            end
        end
        table.sort(words, function(a, b)
            if counts[a] ~= counts[b] then
                return counts[a] > counts[b]
            end
            return a < b
        end)
        local itos = {}
        for _, s in ipairs(specials) do
            itos[#itos + 1] = s
        end
        for _, w in ipairs(words) do
            itos[#itos + 1] = w
        end
        local stoi = {}
        for i, w in ipairs(itos) do
            stoi[w] = i
        end
        local vocab = { itos = itos, stoi = stoi }
        function vocab.set_default_index(i)
            vocab.default = i
        end
        function vocab.len()
            return #itos
        end
        return setmetatable(vocab, {
            __index = function(_, token)
                return stoi[token] or vocab.default
            end,
            __call = function(_, tokens)
                local ids = {}
                for k, t in ipairs(tokens) do
                    ids[k] = stoi[t] or vocab.default
                end
                return ids
            end,
        })
    end

    -- AG_NEWS(split="train"): (label, text) pairs, labels "1".."4" (World, Sports, Business,
    -- Sci/Tec), each text a few words of its topic and some common words
    local TOPICS = {
        { "war", "president", "election", "nation", "minister", "treaty" },
        { "game", "team", "score", "player", "coach", "league" },
        { "market", "stock", "bank", "profit", "shares", "investors" },
        { "computer", "software", "space", "science", "internet", "chip" },
    }
    local COMMON = { "the", "a", "on", "in", "reuters", "new" }
    local function AG_NEWS(n)
        local out = {}
        local draws = tide.randint(1, 7, { n, 6 }):totable()
        local labels = tide.randint(1, 5, { n }):totable()
        for i = 1, n do
            local words = {}
            for k = 1, 4 + i % 3 do
                local pool = k % 2 == 0 and COMMON or TOPICS[labels[i]]
                words[#words + 1] = pool[draws[i][k]]
            end
            out[i] = { tostring(labels[i]), table.concat(words, " ") .. "." }
        end
        return out
    end

    -- def yield_tokens(data_iter): for _, text in data_iter: yield tokenizer(text)
    local function yield_tokens(data_iter)
        return coroutine.wrap(function()
            for _, sample in ipairs(data_iter) do
                local text = sample[2]
                coroutine.yield(tokenizer(text))
            end
        end)
    end

    -- class TextClassificationModel(nn.Module):
    local TextClassificationModel = nn.Module:extend("TextClassificationModel")
    function TextClassificationModel:init(vocab_size, embed_dim, num_class)
        -- self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, sparse=False)
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, { sparse = false })
        self.fc = nn.Linear(embed_dim, num_class)
        self:init_weights()
    end

    function TextClassificationModel:init_weights()
        local initrange = 0.5
        -- self.embedding.weight.data.uniform_(-initrange, initrange)
        self.embedding.weight.data:uniform_(-initrange, initrange)
        self.fc.weight.data:uniform_(-initrange, initrange)
        -- self.fc.bias.data.zero_()
        self.fc.bias.data:zero_()
    end

    function TextClassificationModel:forward(text, offsets)
        local embedded = self.embedding(text, offsets)
        return self.fc(embedded)
    end

    it("the vocabulary, collate_batch, TextClassificationModel, train/evaluate with " ..
        "clip_grad_norm_, SGD(lr=5) and StepLR(1.0, gamma=0.1) on no improvement, predict",
        function()
        tide.manual_seed(0)
        -- train_iter = AG_NEWS(split="train")
        local train_iter = AG_NEWS(48)
        -- tokenizer = get_tokenizer("basic_english")
        -- vocab = build_vocab_from_iterator(yield_tokens(train_iter), specials=["<unk>"])
        local vocab = build_vocab_from_iterator(yield_tokens(train_iter), { "<unk>" })
        -- vocab.set_default_index(vocab["<unk>"])
        vocab.set_default_index(vocab["<unk>"])
        assert.are.equal(1, vocab["<unk>"])
        assert.are.equal(1, vocab["never-seen"])

        -- text_pipeline = lambda x: vocab(tokenizer(x))
        local text_pipeline = function(x)
            return vocab(tokenizer(x))
        end
        -- label_pipeline = lambda x: int(x) - 1 (the classes 1-based: int(x))
        local label_pipeline = function(x)
            return math.floor(tonumber(x))
        end
        local ids = text_pipeline("The game, the TEAM")
        assert.are.same({ vocab["the"], vocab["game"], vocab["the"], vocab["team"] }, ids)

        -- device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        local device = tide.device(tide.cuda.is_available() and "cuda" or "cpu")

        -- def collate_batch(batch):
        local function collate_batch(batch)
            -- label_list, text_list, offsets = [], [], [0] (the first bag starts at 1)
            local label_list, text_list, offsets = {}, {}, { 1 }
            -- for _label, _text in batch:
            for _, sample in ipairs(batch) do
                local _label, _text = sample[1], sample[2]
                -- label_list.append(label_pipeline(_label))
                label_list[#label_list + 1] = label_pipeline(_label)
                -- processed_text = torch.tensor(text_pipeline(_text), dtype=torch.int64)
                local processed_text = tide.tensor(text_pipeline(_text), { dtype = tide.int64 })
                text_list[#text_list + 1] = processed_text
                -- offsets.append(processed_text.size(0))
                offsets[#offsets + 1] = processed_text:size(1)
            end
            -- label_list = torch.tensor(label_list, dtype=torch.int64)
            label_list = tide.tensor(label_list, { dtype = tide.int64 })
            -- offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
            offsets = tide.tensor({ unpack(offsets, 1, #offsets - 1) }):cumsum({ dim = 1 })
            -- text_list = torch.cat(text_list)
            text_list = tide.cat(text_list)
            return label_list:to(device), text_list:to(device), offsets:to(device)
        end

        -- dataloader = DataLoader(train_iter, batch_size=8, shuffle=False, collate_fn=collate_batch)
        local dataloader = tide.data.DataLoader(train_iter, { batch_size = 8, shuffle = false,
            collate_fn = collate_batch })
        local label, text, offsets = dataloader:iter()()
        assert.are.same({ 8 }, label.shape)
        assert.are.same({ 8 }, offsets.shape)
        assert.are.equal(1, offsets[1]:item())
        -- each bag's offset is the one before plus its text's length
        local first = text_pipeline(train_iter[1][2])
        assert.are.equal(1 + #first, offsets[2]:item())
        assert.are.same(first, text[{ { 1, #first } }]:totable())
        assert.are.equal(label_pipeline(train_iter[1][1]), label[1]:item())

        -- num_class = len(set([label for (label, text) in train_iter]))
        local set, num_class = {}, 0
        for _, sample in ipairs(train_iter) do
            if not set[sample[1]] then
                set[sample[1]], num_class = true, num_class + 1
            end
        end
        assert.are.equal(4, num_class)
        -- vocab_size = len(vocab)
        local vocab_size = vocab.len()
        -- emsize = 64 (16 here)
        local emsize = 16
        local model = TextClassificationModel(vocab_size, emsize, num_class):to(device)
        assert.is_true(model.embedding.weight:abs():max():item() <= 0.5)
        assert.are.equal(0, model.fc.bias:abs():sum():item())

        local criterion, optimizer, scheduler
        local printed = {}
        local epoch

        -- def train(dataloader):
        local function train(dataloader_)
            model:train()
            local total_acc, total_count = 0, 0
            local log_interval = 2
            local start_time = os.clock()
            -- for idx, (label, text, offsets) in enumerate(dataloader):
            local idx = 0
            for label_, text_, offsets_ in dataloader_:iter() do
                optimizer:zero_grad()
                local predicted_label = model(text_, offsets_)
                local loss = criterion(predicted_label, label_)
                loss:backward()
                -- torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
                nn.utils.clip_grad_norm_(model:parameters(), 0.1)
                optimizer:step()
                -- total_acc += (predicted_label.argmax(1) == label).sum().item()
                -- GAP: Lua's == on two tensors is identity (one boolean); elementwise is :eq
                total_acc = total_acc + predicted_label:argmax(2):eq(label_):sum():item()
                -- total_count += label.size(0)
                total_count = total_count + label_:size(1)
                if idx % log_interval == 0 and idx > 0 then
                    local elapsed = os.clock() - start_time
                    assert.is_true(elapsed >= 0)
                    -- print("| epoch {:3d} | {:5d}/{:5d} batches "
                    --       "| accuracy {:8.3f}".format(epoch, idx, len(dataloader),
                    --                                   total_acc / total_count))
                    printed[#printed + 1] = string.format("| epoch %3d | %5d/%5d batches " ..
                        "| accuracy %8.3f", epoch, idx, dataloader_:len(), total_acc / total_count)
                    total_acc, total_count = 0, 0
                    start_time = os.clock()
                end
                idx = idx + 1
            end
        end

        -- def evaluate(dataloader):
        local function evaluate(dataloader_)
            model:eval()
            local total_acc, total_count = 0, 0
            tide.no_grad(function()
                for label_, text_, offsets_ in dataloader_:iter() do
                    local predicted_label = model(text_, offsets_)
                    local loss = criterion(predicted_label, label_)
                    assert_finite(loss:item(), "loss")
                    total_acc = total_acc + predicted_label:argmax(2):eq(label_):sum():item()
                    total_count = total_count + label_:size(1)
                end
            end)
            return total_acc / total_count
        end

        -- Hyperparameters
        local EPOCHS = 6 -- epoch
        local LR = 5 -- learning rate
        local BATCH_SIZE = 8 -- batch size for training

        criterion = nn.CrossEntropyLoss()
        -- optimizer = torch.optim.SGD(model.parameters(), lr=LR)
        optimizer = optim.SGD(model:parameters(), { lr = LR })
        -- scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.1)
        scheduler = optim.lr_scheduler.StepLR(optimizer, 1.0, { gamma = 0.1 })
        local total_accu = nil
        -- train_iter, test_iter = AG_NEWS()
        local test_iter = AG_NEWS(16)
        -- train_dataset = to_map_style_dataset(train_iter) (a list is one already)
        local train_dataset = train_iter
        local test_dataset = test_iter
        -- num_train = int(len(train_dataset) * 0.95)
        local num_train = math.floor(#train_dataset * 0.95)
        -- split_train_, split_valid_ = random_split(
        --     train_dataset, [num_train, len(train_dataset) - num_train])
        local split_train_, split_valid_ = unpack(tide.data.random_split(
            train_dataset, { num_train, #train_dataset - num_train }))
        assert.are.equal(45, split_train_:len())
        assert.are.equal(3, split_valid_:len())

        -- train_dataloader = DataLoader(split_train_, batch_size=BATCH_SIZE, shuffle=True,
        --                               collate_fn=collate_batch)
        local train_dataloader = tide.data.DataLoader(split_train_, { batch_size = BATCH_SIZE,
            shuffle = true, collate_fn = collate_batch })
        local valid_dataloader = tide.data.DataLoader(split_valid_, { batch_size = BATCH_SIZE,
            shuffle = true, collate_fn = collate_batch })
        local test_dataloader = tide.data.DataLoader(test_dataset, { batch_size = BATCH_SIZE,
            shuffle = true, collate_fn = collate_batch })

        local accs, lrs = {}, {}
        -- for epoch in range(1, EPOCHS + 1):
        for e = 1, EPOCHS do
            epoch = e
            local epoch_start_time = os.clock()
            train(train_dataloader)
            local accu_val = evaluate(valid_dataloader)
            -- if total_accu is not None and total_accu > accu_val:
            if total_accu ~= nil and total_accu > accu_val then
                scheduler:step()
            else
                total_accu = accu_val
            end
            accs[e], lrs[e] = accu_val, optimizer.param_groups[1].lr
            -- print("-" * 59)
            printed[#printed + 1] = string.rep("-", 59)
            -- print("| end of epoch {:3d} | time: {:5.2f}s | "
            --       "valid accuracy {:8.3f} ".format(epoch, time.time() - epoch_start_time, accu_val))
            printed[#printed + 1] = string.format("| end of epoch %3d | time: %5.2fs | " ..
                "valid accuracy %8.3f ", epoch, os.clock() - epoch_start_time, accu_val)
        end
        -- 6 batches an epoch: log lines at idx 2 and 4, then the two end-of-epoch lines
        assert.are.equal(EPOCHS * 4, #printed)
        assert.is_truthy(printed[1]:match("^| epoch   1 |     2/    6 batches | accuracy    %d%.%d%d%d$"),
            printed[1])
        assert.are.equal(string.rep("-", 59), printed[3])
        assert.is_truthy(printed[4]:match("^| end of epoch   1 | time: +%d+%.%d%ds | valid accuracy"),
            printed[4])
        -- the lr fell by 10 at each epoch whose accuracy was below the best
        local best, lr = accs[1], 5
        for e = 2, EPOCHS do
            if best > accs[e] then
                lr = lr * 0.1
            else
                best = accs[e]
            end
            assert.is_true(close(lrs[e], lr, 1e-9), "epoch " .. e .. " lr " .. lrs[e])
        end

        -- accu_test = evaluate(test_dataloader)
        local accu_test = evaluate(test_dataloader)
        -- the topics' words tell the classes apart
        assert.is_true(accu_test >= 0.75, "test accuracy " .. accu_test)

        -- ag_news_label = {1: "World", 2: "Sports", 3: "Business", 4: "Sci/Tec"}
        local ag_news_label = { [1] = "World", [2] = "Sports", [3] = "Business", [4] = "Sci/Tec" }

        -- def predict(text, text_pipeline):
        local function predict(text_, text_pipeline_)
            -- with torch.no_grad():
            return tide.no_grad(function()
                -- text = torch.tensor(text_pipeline(text))
                text_ = tide.tensor(text_pipeline_(text_))
                -- output = model(text, torch.tensor([0])) (the one bag starts at 1)
                local output = model(text_, tide.tensor({ 1 }))
                -- return output.argmax(1).item() + 1 (argmax is 1-based: AG_NEWS's labels)
                return output:argmax(2):item()
            end)
        end

        local ex_text_str = "The team won the game: the coach praised every player in the league."
        -- model = model.to("cpu")
        model = model:to("cpu")
        -- print("This is a %s news" % ag_news_label[predict(ex_text_str, text_pipeline)])
        assert.are.equal("This is a Sports news",
            string.format("This is a %s news", ag_news_label[predict(ex_text_str, text_pipeline)]))
    end)

    it("EmbeddingBag with offsets, SGD(lr=5) with clip_grad_norm_(0.1) against PyTorch 1.13; " ..
        "sparse=False and PyTorch's other defaults pass, by name and by position", function()
        local model = TextClassificationModel(12, 4, 3)
        tide.no_grad(function()
            model.embedding.weight:copy_(fill({ 12, 4 }, 0.61, 0.2) * 0.5)
            model.fc.weight:copy_(fill({ 3, 4 }, 0.43, 0.9) * 0.5)
        end)
        -- PyTorch's ids [1, 4, 5, 2, 7, 9, 11, 3], offsets [0, 3, 5], labels [0, 2, 1]; 1-based
        local text = tide.tensor({ 1, 4, 5, 2, 7, 9, 11, 3 }) + 1
        local offsets = tide.tensor({ 0, 3, 5 }) + 1
        local label = tide.tensor({ 0, 2, 1 }) + 1
        assert_close_list({ -0.1694914, 0.0479112, 0.1552473, -0.310624, -0.195972, 0.3688868,
            0.0583434, 0.16805, -0.1083049 }, flat(model(text, offsets)), 1e-5, "output")
        local optimizer = optim.SGD(model:parameters(), { lr = 5 })
        local criterion = nn.CrossEntropyLoss()
        local losses, norms = {}, {}
        for k = 1, 3 do
            optimizer:zero_grad()
            local loss = criterion(model(text, offsets), label)
            loss:backward()
            -- total_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1).item()
            -- GAP: tide's clip_grad_norm_ returns the total norm as a Lua number (docs/API.md),
            -- PyTorch's a 0-d tensor: there is no .item() to call
            norms[k] = nn.utils.clip_grad_norm_(model:parameters(), 0.1)
            optimizer:step()
            losses[k] = loss:item()
        end
        assert_close_list({ 0.9982298016548157, 0.8373265266418457, 0.6822564005851746 }, losses,
            1e-5, "loss")
        assert_close_list({ 0.33553457260131836, 0.3162616789340973, 0.30463477969169617 }, norms,
            1e-5, "grad norm")
        assert_close_list({ 0.4219986, 0.0615988, -0.5057973, -0.6217857, -0.8056548, 1.2611074,
            0.1629859, 0.6813679, -0.6505269 }, flat(model(text, offsets)), 1e-4, "output after")

        -- sparse=False (PyTorch's default) passes everywhere; sparse=True still raises, as every
        -- option tide lacks (dense gradients only)
        local w = fill({ 12, 4 }, 0.61, 0.2)
        local want = F.embedding_bag(text, w, offsets)
        assert.is_true(tide.equal(want, F.embedding_bag(text, w, offsets, { sparse = false })))
        assert.is_true(tide.equal(F.embedding(text, w), F.embedding(text, w, { sparse = false })))
        assert.are.same({ 5, 2 }, nn.Embedding(5, 2, { sparse = false }).weight.shape)
        -- nn.EmbeddingBag(n, d, None, 2.0, False, "sum", False): PyTorch's positional defaults
        local bag = nn.EmbeddingBag(12, 4, nil, 2.0, false, "sum", false)
        assert.are.equal("sum", bag.mode)
        assert.is_true(tide.isinstance(F.embedding_bag(text, w, offsets, nil, 2.0, false, "sum",
            false), tide.Tensor))
        -- sparse = true is taken (the gradient dense: optim.SparseAdam)
        assert.are.equal("EmbeddingBag(12, 4, mode=mean, sparse=True)  [48 parameters]",
            tostring(nn.EmbeddingBag(12, 4, { sparse = true })))
        assert.is_true(tide.equal(want, F.embedding_bag(text, w, offsets, { sparse = true })))
        assert.matches('tide: embedding_bag: option "scale_grad_by_freq" is not supported yet',
            catch(F.embedding_bag, text, w, offsets, { scale_grad_by_freq = true }), 1, true)
        assert.matches("tide: EmbeddingBag: expected sparse to be a boolean, got number (1)",
            catch(nn.EmbeddingBag, 12, 4, { sparse = 1 }), 1, true)
        assert.matches("tide: EmbeddingBag: expected norm_type to be a number, got string",
            catch(nn.EmbeddingBag, 12, 4, { norm_type = "2" }), 1, true)
        -- max_norm is taken (PyTorch's; spec/module_options_spec.lua has its values)
        assert.are.equal(1.0, nn.EmbeddingBag(12, 4, { max_norm = 1.0 }).max_norm)
        -- the bad input changed nothing
        assert.is_true(tide.equal(w, fill({ 12, 4 }, 0.61, 0.2)))
    end)

    it("a plain Lua list as a dataset: DataLoader, random_split and Subset take one, as " ..
        "PyTorch's take a Python list", function()
        local pairs_ = { { "1", "a b c" }, { "2", "d e" }, { "3", "f" }, { "1", "g h" },
            { "2", "i" } }
        local seen = {}
        local dl = tide.data.DataLoader(pairs_, { batch_size = 2, collate_fn = function(batch)
            seen[#seen + 1] = batch
            return #batch, batch[1][1], batch[1][2]
        end })
        assert.are.equal(3, dl:len())
        assert.are.equal(5, dl.dataset:len())
        assert.is_true(rawequal(pairs_, dl.dataset.list))
        local got = {}
        for n, l, t in dl:iter() do
            got[#got + 1] = { n, l, t }
        end
        assert.are.same({ { 2, "1", "a b c" }, { 2, "3", "f" }, { 1, "2", "i" } }, got)
        -- each sample a (label, text) pair, as the Python tuple
        assert.are.same({ "2", "d e" }, { seen[1][2][1], seen[1][2][2] })
        -- a list of tensors: the default collate stacks them
        local xs = { tide.tensor({ 1, 2 }), tide.tensor({ 3, 4 }), tide.tensor({ 5, 6 }) }
        local batches = {}
        for x in tide.data.DataLoader(xs, { batch_size = 2 }):iter() do
            batches[#batches + 1] = x:totable()
        end
        assert.are.same({ { { 1, 2 }, { 3, 4 } }, { { 5, 6 } } }, batches)
        -- an empty list is an empty dataset
        assert.are.equal(0, tide.data.DataLoader({}, { batch_size = 2 }):len())
        -- random_split and Subset of a list
        local a, b = unpack(tide.data.random_split(pairs_, { 3, 2 }, { seed = 1 }))
        assert.are.equal(3, a:len())
        assert.are.equal(2, b:len())
        local labels = {}
        for i = 1, 3 do
            labels[#labels + 1] = (a:get(i))
        end
        for i = 1, 2 do
            labels[#labels + 1] = (b:get(i))
        end
        table.sort(labels)
        assert.are.same({ "1", "1", "2", "2", "3" }, labels)
        local s = tide.data.Subset(pairs_, { 5, 1 })
        assert.are.same({ "2", "i" }, { s:get(1) })
        assert.are.same({ "1", "a b c" }, { s:get(2) })
        -- an options table or a dict is no list: still refused
        assert.matches("tide: DataLoader: expected a dataset", catch(tide.data.DataLoader,
            { x = 1 }), 1, true)
        assert.matches("tide: random_split: expected a dataset", catch(tide.data.random_split,
            { x = 1 }, { 1 }), 1, true)
        assert.matches("tide: Subset: expected a dataset", catch(tide.data.Subset, 42, { 1 }),
            1, true)
    end)
end)

---------------------------------------------------------------------------------------------
-- PyTorch's factory arguments device= and dtype= of the layers with parameters (the forward-
-- forward script's Layer calls super().__init__(in_features, out_features, bias, device, dtype))
---------------------------------------------------------------------------------------------
describe("layers' device and dtype arguments", function()
    it("nn.Linear(in, out, bias, device, dtype) by position and by name, a subclass's " ..
        "super().__init__, and the other layers by name", function()
        -- class Layer(nn.Linear): def __init__(self, in_features, out_features, bias=True,
        --     device=None, dtype=None): super().__init__(in_features, out_features, bias, device,
        --     dtype)
        local Layer = nn.Linear:extend("FactoryLayer")
        function Layer:init(in_features, out_features, bias, device, dtype)
            if bias == nil then
                bias = true
            end
            nn.Linear.init(self, in_features, out_features, bias, device, dtype)
            self.opt = optim.Adam(self:parameters(), { lr = 0.03 })
        end
        local l = Layer(3, 2, true, tide.device("cpu"), tide.float64)
        assert.are.equal("float64", l.weight.dtype)
        assert.are.equal("float64", l.bias.dtype)
        assert.are.equal("float64", l(tide.randn(4, 3, { dtype = tide.float64 })).dtype)
        -- the optimizer built after holds the cast parameters
        assert.is_true(rawequal(l.opt.param_groups[1].params[1], l.weight))
        l = Layer(3, 2) -- device=None, dtype=None
        assert.are.equal("float32", l.weight.dtype)

        -- nn.Linear(3, 2, True, "cpu", torch.float64) and by name
        local a = nn.Linear(3, 2, true, "cpu", tide.float64)
        assert.are.same({ "float64", "float64" }, { a.weight.dtype, a.bias.dtype })
        local b = nn.Linear(3, 2, { bias = false, dtype = tide.float64, device = "cpu" })
        assert.are.equal("float64", b.weight.dtype)
        assert.is_nil(b.bias)
        assert.are.equal("float64", nn.Linear(3, 2, false, nil, "float64").weight.dtype)
        assert.is_true(a.weight.requires_grad)

        -- the other layers by name (and the conv's by position, PyTorch's 11 arguments)
        for _, m in ipairs({
            nn.Conv2d(1, 2, 3, { dtype = tide.float64 }),
            nn.Conv2d(1, 2, 3, 1, 0, 1, 1, true, "zeros", "cpu", tide.float64),
            nn.Conv1d(1, 2, 3, { device = "cpu", dtype = tide.float64 }),
            nn.ConvTranspose2d(1, 2, 3, { dtype = tide.float64 }),
            nn.LayerNorm(3, { dtype = tide.float64 }),
            nn.LayerNorm(3, 1e-5, true, "cpu", tide.float64),
            nn.BatchNorm1d(3, { dtype = tide.float64 }),
            nn.Embedding(5, 2, { dtype = tide.float64 }),
            nn.EmbeddingBag(5, 2, { dtype = tide.float64 }),
        }) do
            assert.are.equal("float64", m.weight.dtype, tostring(m))
        end
        local bn = nn.BatchNorm1d(3, { dtype = tide.float64 })
        assert.are.same({ "float64", "int64" }, { bn.running_mean.dtype,
            bn.num_batches_tracked.dtype })
        -- a lazy layer is built in its dtype at its first input
        local lazy = nn.LazyLinear(2, { dtype = tide.float64 })
        lazy(tide.randn(4, 3, { dtype = tide.float64 }))
        assert.are.same({ "float64", 3 }, { lazy.weight.dtype, lazy.weight:size(2) })

        -- a dtype that is not floating raises, naming it
        assert.matches("tide: Linear: dtype must be a floating-point dtype (tide.float32, " ..
            "tide.float64, tide.float16, tide.bfloat16), got int64",
            catch(nn.Linear, 3, 2, { dtype = tide.int64 }), 1, true)
        assert.matches("tide: LayerNorm: dtype must be a floating-point dtype",
            catch(nn.LayerNorm, 3, { dtype = "bool" }), 1, true)
        -- a bad device raises naming the layer, before anything is drawn
        local state = tide.get_rng_state()
        assert.matches('tide: Linear: device must be a device or a device name such as "cpu" ' ..
            'or "cuda:0", got number', catch(nn.Linear, 3, 2, true, 5), 1, true)
        assert.matches('tide: Conv2d: device must be a device or a device name such as "cpu" ' ..
            'or "cuda:0", got "gpu" (unknown device "gpu"',
            catch(nn.Conv2d, 1, 2, 3, { device = "gpu" }), 1, true)
        assert.is_true(tide.equal(state, tide.get_rng_state()))
        -- past PyTorch's five arguments raises
        assert.matches("tide: Linear: expected at most 5 arguments and an options table, got 6",
            catch(nn.Linear, 3, 2, true, "cpu", "float32", 1), 1, true)
        -- a layer without parameters takes none, as PyTorch's
        assert.matches('tide: ReLU:', catch(nn.ReLU, { dtype = tide.float64 }), 1, true)
    end)
end)
