-- ported_scripts143_spec.lua — pytorch/examples' mnist_forward_forward/main.py (overlay_y_on_x,
-- get_y_neg, Net of Layer objects, Layer as an nn.Linear subclass with its own Adam, the
-- positive / negative goodness and softplus loss per layer, predict by the goodness per label),
-- siamese_network/main.py (SiameseNetwork, APP_MATCHER's pairing, train with BCELoss and
-- Adadelta + StepLR, test with torch.where(outputs > 0.5, 1, 0)) and gcn/main.py (GraphConv over
-- a sparse adjacency with torch.spmm, load_cora's D^-1/2 (A + I) D^-1/2 with
-- torch.sparse_coo_tensor, the GCN with dropout, train_iter / test with NLLLoss over index
-- masks), ported line for line at tiny sizes. MNIST and Cora are replaced by random or formula
-- tensors (only the data); torchvision's resnet18 is replaced by a tiny conv stack
-- (conv1, bn1, relu, avgpool, fc, so that children()[:-1] still drops the fc). The Python line
-- stands above each Lua line that differs from it. Dims and indices are 1-based; MNIST's class
-- values (0..9) stay values, and the GCN's labels are class indices, so 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- a * fn(k * b + c) over the flat index k, the fixed inputs and weights both sides share
local function fm(shape, a, b, c, fn)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    local t = tide.arange(n):float() * b + c
    return (a * (fn == "cos" and t:cos() or t:sin())):view(unpack(shape))
end

local function set_(p, v)
    tide.no_grad(function() p:copy_(v) end)
end

---------------------------------------------------------------------------------------------
-- 1. mnist_forward_forward/main.py
---------------------------------------------------------------------------------------------
-- args = parser.parse_args() (tiny: 2 epochs per layer, a log every step)
local args = { epochs = 2, lr = 0.03, threshold = 2, log_interval = 1 }
local device = "cpu"
-- print("Loss: ", loss.item()) is kept in this list for the checks
local ff_log = {}

-- def get_y_neg(y):
local function get_y_neg(y)
    local y_neg = y:clone()
    -- for idx, y_samp in enumerate(y):
    for idx, y_samp in ipairs(y:unbind()) do
        -- allowed_indices = list(range(10))
        local allowed_indices = {}
        for v = 0, 9 do
            -- allowed_indices.remove(y_samp.item())
            if v ~= y_samp:item() then allowed_indices[#allowed_indices + 1] = v end
        end
        -- y_neg[idx] = torch.tensor(allowed_indices)[
        --     torch.randint(len(allowed_indices), size=(1,))
        -- ].item()
        y_neg[idx] = tide.tensor(allowed_indices)[
            tide.randint(1, #allowed_indices + 1, { 1 })
        ]:item()
    end
    return y_neg:to(device)
end

-- def overlay_y_on_x(x, y, classes=10):
local function overlay_y_on_x(x, y, classes)
    classes = classes or 10
    local x_ = x:clone()
    -- x_[:, :classes] *= 0.0
    x_[{ {}, { 1, classes } }]:mul_(0.0)
    -- x_[range(x.shape[0]), y] = x.max()
    -- (y holds MNIST's class values 0..9: the column is y + 1)
    x_[{ tide.arange(1, x.shape[1] + 1), y + 1 }] = x:max()
    return x_
end

-- class Layer(nn.Linear):
local Layer = nn.Linear:extend("FFLayer")
-- def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
function Layer:init(in_features, out_features, bias, dev, dtype)
    if bias == nil then bias = true end
    -- super().__init__(in_features, out_features, bias, device, dtype)
    nn.Linear.init(self, in_features, out_features, bias, dev, dtype)
    self.relu = nn.ReLU()
    -- self.opt = Adam(self.parameters(), lr=args.lr)
    self.opt = optim.Adam(self:parameters(), { lr = args.lr })
    self.threshold = args.threshold
    self.num_epochs = args.epochs
end

function Layer:forward(x)
    -- x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)
    local x_direction = x / (x:norm(2, 2, true) + 1e-4)
    -- return self.relu(torch.mm(x_direction, self.weight.T) + self.bias.unsqueeze(0))
    return self.relu(tide.mm(x_direction, self.weight.T) + self.bias:unsqueeze(1))
end

-- def train(self, x_pos, x_neg):  (overrides Module.train, as the script's does)
function Layer:train(x_pos, x_neg)
    -- for i in range(self.num_epochs):
    for i = 0, self.num_epochs - 1 do
        -- g_pos = self.forward(x_pos).pow(2).mean(1)
        local g_pos = self:forward(x_pos):pow(2):mean(2)
        local g_neg = self:forward(x_neg):pow(2):mean(2)
        -- loss = torch.log1p(torch.exp(torch.cat([-g_pos + self.threshold, g_neg - self.threshold])
        --     )).mean()
        local loss = tide.log1p(
            tide.exp(
                tide.cat({ -g_pos + self.threshold, g_neg - self.threshold })
            )
        ):mean()
        self.opt:zero_grad()
        loss:backward()
        self.opt:step()
        if i % args.log_interval == 0 then
            -- print("Loss: ", loss.item())
            ff_log[#ff_log + 1] = loss:item()
        end
    end
    -- return self.forward(x_pos).detach(), self.forward(x_neg).detach()
    return self:forward(x_pos):detach(), self:forward(x_neg):detach()
end

-- class Net(torch.nn.Module):
local Net = nn.Module:extend("FFNet")
-- def __init__(self, dims):
function Net:init(dims)
    self.layers = {}
    -- for d in range(len(dims) - 1):
    for d = 1, #dims - 1 do
        -- self.layers = self.layers + [Layer(dims[d], dims[d + 1]).to(device)]
        self.layers[#self.layers + 1] = Layer(dims[d], dims[d + 1]):to(device)
    end
end

-- def predict(self, x):
function Net:predict(x)
    local goodness_per_label = {}
    -- for label in range(10):
    for label = 0, 9 do
        local h = overlay_y_on_x(x, label)
        local goodness = {}
        -- for layer in self.layers:
        for _, layer in ipairs(self.layers) do
            h = layer(h)
            -- goodness = goodness + [h.pow(2).mean(1)]
            goodness[#goodness + 1] = h:pow(2):mean(2)
        end
        -- goodness_per_label += [sum(goodness).unsqueeze(1)]
        local s = goodness[1]
        for k = 2, #goodness do s = s + goodness[k] end
        goodness_per_label[#goodness_per_label + 1] = s:unsqueeze(2)
    end
    -- goodness_per_label = torch.cat(goodness_per_label, 1)
    goodness_per_label = tide.cat(goodness_per_label, 2)
    -- return goodness_per_label.argmax(1)  (1-based columns: label + 1)
    return goodness_per_label:argmax(2), goodness_per_label
end

-- def train(self, x_pos, x_neg):
function Net:train(x_pos, x_neg)
    local h_pos, h_neg = x_pos, x_neg
    -- for i, layer in enumerate(self.layers):
    for _, layer in ipairs(self.layers) do
        h_pos, h_neg = layer:train(h_pos, h_neg)
    end
end

-- fixed weights (formulas) for the comparison with PyTorch
local function ff_fixed_net()
    -- net = Net([784, 500, 500])  (tiny: 12 features, 8 and 6 units)
    local net = Net({ 12, 8, 6 })
    for _, l in ipairs(net.layers) do
        set_(l.weight, fm({ l.out_features, l.in_features }, 0.3, 0.3, 0.5, "cos"))
        set_(l.bias, fm({ l.out_features }, 0.05, 1.0, 1.0))
    end
    return net
end

describe("ported pytorch/examples mnist_forward_forward", function()
    it("overlay_y_on_x and get_y_neg follow the script", function()
        local x = fm({ 6, 12 }, 1.0, 0.37, 0.1)
        local y = tide.tensor({ 3, 0, 7, 1, 9, 4 })
        local x_pos = overlay_y_on_x(x, y)
        assert_close_list({ 0.0, 0.0, 0.0, 0.9999576210975647, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
            -0.6118578314781189, -0.8564780354499817 }, x_pos[1]:totable(), 1e-6, "x_pos[1]")
        -- x itself is untouched (x_ is a clone)
        assert.is_true(x[{ 1, 1 }]:item() ~= 0)
        local y_neg = get_y_neg(y)
        assert.same({ 6 }, y_neg.shape)
        for i = 1, 6 do
            local v = y_neg[i]:item()
            assert.is_true(v ~= y[i]:item() and v >= 0 and v <= 9)
        end
    end)

    it("per-layer losses for 2 steps and the predictions match PyTorch", function()
        ff_log = {}
        local net = ff_fixed_net()
        local x = fm({ 6, 12 }, 1.0, 0.37, 0.1)
        local y = tide.tensor({ 3, 0, 7, 1, 9, 4 })
        -- y_neg = get_y_neg(y)  (fixed choices here)
        local y_neg = tide.tensor({ 5, 2, 1, 8, 0, 6 })
        local x_pos = overlay_y_on_x(x, y)
        local x_neg = overlay_y_on_x(x, y_neg)
        net:train(x_pos, x_neg)
        assert_close_list({ 1.1097420454025269, 1.100957989692688, 1.113385796546936,
            1.1046632528305054 }, ff_log, 1e-5, "ff losses")
        local pred, gpl = net:predict(x)
        assert_close_list({ 0.2165866196155548, 0.261165976524353, 0.21667540073394775,
            0.22471410036087036, 0.19860205054283142, 0.15803003311157227, 0.1579720824956894,
            0.17026591300964355, 0.13432811200618744, 0.1555086374282837 }, gpl[1]:totable(),
            1e-5, "goodness per label")
        -- PyTorch's [1, 9, 9, 1, 3, 9], 1-based
        assert.same({ 2, 10, 10, 2, 4, 10 }, pred:totable())
        -- print("train error:", 1.0 - net.predict(x).eq(y).float().mean().item())
        local err = 1.0 - (pred - 1):eq(y):float():mean():item()
        -- PyTorch's one right row of six
        assert.near(5 / 6, err, 1e-6)
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. siamese_network/main.py
---------------------------------------------------------------------------------------------
-- torchvision.models.resnet18(weights=None) with conv1 for 1 channel, tiny: conv1, bn1, relu,
-- avgpool, fc (fc.in_features 4)
local function tiny_resnet()
    local m = nn.Sequential()
    -- self.resnet.conv1 = nn.Conv2d(1, 64, kernel_size=(7, 7), stride=(2, 2), padding=(3, 3),
    --     bias=False)
    m:add_module("conv1", nn.Conv2d(1, 4, { kernel_size = 3, stride = 2, padding = 1,
        bias = false }))
    m:add_module("bn1", nn.BatchNorm2d(4))
    m:add_module("relu", nn.ReLU(true))
    m:add_module("avgpool", nn.AdaptiveAvgPool2d({ 1, 1 }))
    m:add_module("fc", nn.Linear(4, 1000))
    return m
end

-- class SiameseNetwork(nn.Module):
local SiameseNetwork = nn.Module:extend("SiameseNetwork")
function SiameseNetwork:init()
    -- self.resnet = torchvision.models.resnet18(weights=None)
    self.resnet = tiny_resnet()
    -- self.fc_in_features = self.resnet.fc.in_features
    self.fc_in_features = self.resnet.fc.in_features
    -- self.resnet = torch.nn.Sequential(*(list(self.resnet.children())[:-1]))
    local children = self.resnet:children()
    self.resnet = nn.Sequential(unpack(children, 1, #children - 1))
    self.fc = nn.Sequential(
        nn.Linear(self.fc_in_features * 2, 16),
        -- nn.ReLU(inplace=True),
        nn.ReLU(true),
        nn.Linear(16, 1)
    )
    self.sigmoid = nn.Sigmoid()
    -- self.resnet.apply(self.init_weights)
    self.resnet:apply(function(m) self:init_weights(m) end)
    self.fc:apply(function(m) self:init_weights(m) end)
end

function SiameseNetwork:init_weights(m)
    -- if isinstance(m, nn.Linear):
    if tide.isinstance(m, nn.Linear) then
        nn.init.xavier_uniform_(m.weight)
        -- m.bias.data.fill_(0.01)
        m.bias.data:fill_(0.01)
    end
end

function SiameseNetwork:forward_once(x)
    local output = self.resnet(x)
    -- output = output.view(output.size()[0], -1)
    output = output:view(output:size()[1], -1)
    return output
end

function SiameseNetwork:forward(input1, input2)
    local output1 = self:forward_once(input1)
    local output2 = self:forward_once(input2)
    -- output = torch.cat((output1, output2), 1)
    local output = tide.cat({ output1, output2 }, 2)
    output = self.fc(output)
    output = self.sigmoid(output)
    return output
end

-- class APP_MATCHER(Dataset):  (random.randint is the given randint: fixed choices in tests)
local APP_MATCHER = tide.data.Dataset:extend("APP_MATCHER")
-- def __init__(self, root, train, download=False):  (the images and targets instead of MNIST)
function APP_MATCHER:init(images, targets, randint)
    self.randint = randint
    -- self.dataset = datasets.MNIST(root, train=train, download=download)
    self.dataset = { data = images, targets = targets }
    -- self.data = self.dataset.data.unsqueeze(1).clone()
    self.data = self.dataset.data:unsqueeze(2):clone()
    self:group_examples()
end

function APP_MATCHER:group_examples()
    -- np_arr = np.array(self.dataset.targets.clone(), dtype=None, copy=None)
    local np_arr = self.dataset.targets:clone()
    self.grouped_examples = {}
    -- for i in range(0,10):
    for i = 0, 9 do
        -- self.grouped_examples[i] = np.where((np_arr==i))[0]  (1-based positions)
        self.grouped_examples[i] = tide.nonzero(np_arr:eq(i)):view(-1)
    end
end

function APP_MATCHER:__len__()
    -- return self.data.shape[0]
    return self.data.shape[1]
end

-- def __getitem__(self, index):  (index 1-based: Python's index % 2 == 0 is Lua's odd index)
function APP_MATCHER:__getitem__(index)
    local random = { randint = self.randint }
    local selected_class = random.randint(0, 9)
    -- random_index_1 = random.randint(0, self.grouped_examples[selected_class].shape[0]-1)
    local random_index_1 = random.randint(1, self.grouped_examples[selected_class].shape[1])
    local index_1 = self.grouped_examples[selected_class][random_index_1]
    -- image_1 = self.data[index_1].clone().float()
    local image_1 = self.data[index_1]:clone():float()
    local image_2, target
    -- if index % 2 == 0:
    if (index - 1) % 2 == 0 then
        -- random_index_2 = random.randint(0, self.grouped_examples[selected_class].shape[0]-1)
        local random_index_2 = random.randint(1, self.grouped_examples[selected_class].shape[1])
        while random_index_2 == random_index_1 do
            random_index_2 = random.randint(1, self.grouped_examples[selected_class].shape[1])
        end
        local index_2 = self.grouped_examples[selected_class][random_index_2]
        image_2 = self.data[index_2]:clone():float()
        -- target = torch.tensor(1, dtype=torch.float)
        target = tide.tensor(1, { dtype = tide.float32 })
    else
        local other_selected_class = random.randint(0, 9)
        while other_selected_class == selected_class do
            other_selected_class = random.randint(0, 9)
        end
        -- random_index_2 = random.randint(0, self.grouped_examples[other_selected_class]
        --     .shape[0]-1)
        local random_index_2 = random.randint(1,
            self.grouped_examples[other_selected_class].shape[1])
        local index_2 = self.grouped_examples[other_selected_class][random_index_2]
        image_2 = self.data[index_2]:clone():float()
        target = tide.tensor(0, { dtype = tide.float32 })
    end
    return image_1, image_2, target
end

-- def train(args, model, device, train_loader, optimizer, epoch):  (returns the logged losses)
local function siamese_train(sargs, model, dev, train_loader, optimizer, epoch) -- luacheck: ignore
    model:train()
    local criterion = nn.BCELoss()
    local logged = {}
    -- for batch_idx, (images_1, images_2, targets) in enumerate(train_loader):
    for batch_idx, images_1, images_2, targets in train_loader:enumerate(0) do
        images_1, images_2, targets = images_1:to(dev), images_2:to(dev), targets:to(dev)
        optimizer:zero_grad()
        -- outputs = model(images_1, images_2).squeeze()
        local outputs = model(images_1, images_2):squeeze()
        local loss = criterion(outputs, targets)
        loss:backward()
        optimizer:step()
        if batch_idx % sargs.log_interval == 0 then
            -- print('Train Epoch: ...'.format(..., loss.item()))
            logged[#logged + 1] = loss:item()
            if sargs.dry_run then
                break
            end
        end
    end
    return logged
end

-- def test(model, device, test_loader):  (returns test_loss and correct, which it prints)
local function siamese_test(model, dev, test_loader)
    model:eval()
    local test_loss = 0
    local correct = 0
    local criterion = nn.BCELoss()
    -- with torch.no_grad():
    tide.no_grad(function()
        -- for (images_1, images_2, targets) in test_loader:
        for images_1, images_2, targets in test_loader:iter() do
            images_1, images_2, targets = images_1:to(dev), images_2:to(dev), targets:to(dev)
            local outputs = model(images_1, images_2):squeeze()
            -- test_loss += criterion(outputs, targets).sum().item()  # sum up batch loss
            test_loss = test_loss + criterion(outputs, targets):sum():item()
            -- pred = torch.where(outputs > 0.5, 1, 0)
            local pred = tide.where(outputs:gt(0.5), 1, 0)
            -- correct += pred.eq(targets.view_as(pred)).sum().item()
            correct = correct + pred:eq(targets:view_as(pred)):sum():item()
        end
    end)
    -- test_loss /= len(test_loader.dataset)
    -- (ds:len(): Lua 5.1 and LuaJIT call no __len of a table)
    test_loss = test_loss / test_loader.dataset:len()
    return test_loss, correct
end

local function siamese_fixed()
    local model = SiameseNetwork()
    set_(model.resnet[1].weight, fm({ 4, 1, 3, 3 }, 0.4, 0.7, 0.2))
    set_(model.fc[1].weight, fm({ 16, 8 }, 0.3, 0.45, 0.3, "cos"))
    set_(model.fc[3].weight, fm({ 1, 16 }, 0.5, 0.9, 0.1))
    return model
end

-- a scripted random.randint: the choices in order
local function scripted(choices)
    local k = 0
    return function(a, b)
        k = k + 1
        local v = assert(choices[k], "scripted randint ran out")
        assert(v >= a and v <= b, "scripted choice out of range")
        return v
    end
end

describe("ported pytorch/examples siamese_network", function()
    it("outputs, the first losses and test's accuracy match PyTorch", function()
        local model = siamese_fixed()
        -- the fc init: xavier_uniform_ weights, biases 0.01
        assert.near(0.01, model.fc[1].bias[1]:item(), 1e-7)
        assert.equal(3, #model.resnet:children() - 1)
        local i1 = fm({ 4, 1, 8, 8 }, 1.0, 0.13, 0.0)
        local i2 = fm({ 4, 1, 8, 8 }, 1.0, 0.29, 0.7, "cos")
        local t = tide.tensor({ 1, 0, 1, 0 }, { dtype = tide.float32 })
        -- optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
        local optimizer = optim.Adadelta(model:parameters(), { lr = 1.0 })
        -- scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
        local scheduler = optim.lr_scheduler.StepLR(optimizer, { step_size = 1, gamma = 0.7 })
        local ds = tide.data.TensorDataset(i1, i2, t)
        local loader = tide.data.DataLoader(ds, { batch_size = 4 })
        local first = model(i1, i2):squeeze()
        assert_close_list({ 0.6028244495391846, 0.5942925214767456, 0.6075130105018616,
            0.6412573456764221 }, first:totable(), 1e-5, "siamese outputs")
        local losses = {}
        for epoch = 1, 2 do
            local l = siamese_train({ log_interval = 1, dry_run = false }, model, "cpu",
                loader, optimizer, epoch)
            losses[#losses + 1] = l[1]
            if epoch == 1 then scheduler:step() end
        end
        -- after scheduler.step() epoch 2 runs at lr 0.7 (PyTorch's values below are at lr 1.0):
        -- step 1 is compared, step 2 falls
        assert_close_list({ 0.7329459190368652 }, { losses[1] }, 1e-5, "siamese loss")
        assert_finite(losses[2], "siamese loss 2")
        assert.is_true(losses[2] < losses[1])
        assert.near(0.7, optimizer.param_groups[1].lr, 1e-12)
    end)

    it("two Adadelta steps at lr 1 and test() match PyTorch", function()
        local model = siamese_fixed()
        local i1 = fm({ 4, 1, 8, 8 }, 1.0, 0.13, 0.0)
        local i2 = fm({ 4, 1, 8, 8 }, 1.0, 0.29, 0.7, "cos")
        local t = tide.tensor({ 1, 0, 1, 0 }, { dtype = tide.float32 })
        local optimizer = optim.Adadelta(model:parameters(), { lr = 1.0 })
        local loader = tide.data.DataLoader(tide.data.TensorDataset(i1, i2, t),
            { batch_size = 4 })
        local losses = {}
        for epoch = 1, 2 do
            losses[epoch] = siamese_train({ log_interval = 1 }, model, "cpu", loader,
                optimizer, epoch)[1]
        end
        assert_close_list({ 0.7329459190368652, 0.7255635261535645 }, losses, 1e-5,
            "siamese losses")
        local test_loss, correct = siamese_test(model, "cpu", loader)
        -- PyTorch: 0.7147723436355591 over the batch, / len(dataset) 4; pred [1, 1, 1, 1]
        assert.near(0.7147723436355591 / 4, test_loss, 1e-5)
        assert.equal(2, correct)
    end)

    it("APP_MATCHER pairs same and other classes with fixed choices", function()
        tide.manual_seed(1)
        -- MNIST's data: 20 random uint8 8x8 images, two of each class
        local images = tide.randint(0, 256, { 20, 8, 8 }, { dtype = tide.uint8 })
        local targets = tide.tensor({ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 })
        -- item 1 (Python's 0, even): class 3, position 1; then position 1 again (redrawn), 2
        -- item 2 (odd): class 5, position 2; other class 5 (redrawn), then 7, position 1
        local ds = APP_MATCHER(images, targets, scripted({ 3, 1, 1, 2, 5, 2, 5, 7, 1 }))
        assert.equal(20, ds:len())
        assert.same({ 4, 14 }, ds.grouped_examples[3]:totable())
        local a1, a2, ta = ds:__getitem__(1)
        assert.same({ 1, 8, 8 }, a1.shape)
        assert.equal(tide.float32, a1.dtype)
        assert.is_true(a1:equal(images[4]:unsqueeze(1):float()))
        assert.is_true(a2:equal(images[14]:unsqueeze(1):float()))
        assert.equal(1, ta:item())
        local b1, b2, tb = ds:__getitem__(2)
        assert.is_true(b1:equal(images[16]:unsqueeze(1):float()))
        assert.is_true(b2:equal(images[8]:unsqueeze(1):float()))
        assert.equal(0, tb:item())
        -- one dry-run epoch through a DataLoader over it, with random choices
        local rng = tide.Generator():manual_seed(3)
        local train_ds = APP_MATCHER(images, targets, function(a, b)
            return a + tide.randint(0, b - a + 1, { 1 }, { generator = rng }):item()
        end)
        local model = SiameseNetwork()
        local optimizer = optim.Adadelta(model:parameters(), { lr = 1.0 })
        local loader = tide.data.DataLoader(train_ds, { batch_size = 8 })
        local logged = siamese_train({ log_interval = 1, dry_run = true }, model, "cpu",
            loader, optimizer, 1)
        assert.equal(1, #logged)
        assert_finite(logged[1], "APP_MATCHER loss")
        local _, correct = siamese_test(model, "cpu", loader)
        assert.is_true(correct >= 0 and correct <= 20)
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. gcn/main.py
---------------------------------------------------------------------------------------------
-- class GraphConv(nn.Module):
local GraphConv = nn.Module:extend("GraphConv")
-- def __init__(self, input_dim, output_dim, use_bias=False):
function GraphConv:init(input_dim, output_dim, use_bias)
    -- self.kernel = nn.Parameter(torch.Tensor(input_dim, output_dim))
    self.kernel = nn.Parameter(tide.empty(input_dim, output_dim))
    nn.init.xavier_normal_(self.kernel)
    self.bias = nil
    if use_bias then
        -- self.bias = nn.Parameter(torch.Tensor(output_dim))
        self.bias = nn.Parameter(tide.empty(output_dim))
        nn.init.zeros_(self.bias)
    end
end

function GraphConv:forward(input_tensor, adj_mat)
    -- support = torch.mm(input_tensor, self.kernel)
    local support = tide.mm(input_tensor, self.kernel)
    -- output = torch.spmm(adj_mat, support)
    local output = tide.spmm(adj_mat, support)
    -- if self.bias is not None:
    if self.bias ~= nil then
        output = output + self.bias
    end
    return output
end

-- class GCN(nn.Module):
local GCN = nn.Module:extend("GCN")
-- def __init__(self, input_dim, hidden_dim, output_dim, use_bias=True, dropout_p=0.1):
function GCN:init(input_dim, hidden_dim, output_dim, use_bias, dropout_p)
    if use_bias == nil then use_bias = true end
    -- self.gc1 = GraphConv(input_dim, hidden_dim, use_bias=use_bias)
    self.gc1 = GraphConv(input_dim, hidden_dim, use_bias)
    self.gc2 = GraphConv(hidden_dim, output_dim, use_bias)
    -- self.dropout = nn.Dropout(dropout_p)
    self.dropout = nn.Dropout(dropout_p or 0.1)
end

function GCN:forward(input_tensor, adj_mat)
    local x = self.gc1(input_tensor, adj_mat)
    x = F.relu(x)
    x = self.dropout(x)
    x = self.gc2(x, adj_mat)
    -- return F.log_softmax(x, dim=1)
    return F.log_softmax(x, { dim = 2 })
end

-- def load_cora(path='./cora', device='cpu'):  (the files' contents given: features, labels and
-- edges as node positions, 1-based)
local function load_cora(features, labels, edges, dev)
    -- scale_vector = torch.sum(features, dim=1)
    local scale_vector = tide.sum(features, 2)
    scale_vector = 1 / scale_vector
    -- scale_vector[scale_vector == float('inf')] = 0
    scale_vector[scale_vector:eq(math.huge)] = 0
    -- scale_vector = torch.diag(scale_vector).to_sparse()
    scale_vector = tide.diag(scale_vector):to_sparse()
    -- features = scale_vector @ features
    features = scale_vector:matmul(features)
    -- V = len(idx)
    local V = features:size(1)
    -- E = edges.shape[0]
    local E = edges.shape[1]
    -- adj_mat = torch.sparse_coo_tensor(edges.T, torch.ones(E), (V, V), dtype=torch.int64)
    local adj_mat = tide.sparse_coo_tensor(edges.T, tide.ones(E), { V, V }, { dtype = tide.int64 })
    -- adj_mat = torch.eye(V) + adj_mat
    adj_mat = tide.eye(V) + adj_mat
    -- degree_mat = torch.sum(adj_mat, dim=1)
    local degree_mat = tide.sum(adj_mat, 2)
    degree_mat = tide.sqrt(1 / degree_mat)
    degree_mat[degree_mat:eq(math.huge)] = 0
    degree_mat = tide.diag(degree_mat):to_sparse()
    -- adj_mat = degree_mat @ adj_mat @ degree_mat
    -- (dense @ sparse, PyTorch 2.x's; 1.13 raises on it, and tide's matmul refuses a sparse
    -- operand: tide.mm takes it)
    adj_mat = tide.mm(degree_mat:matmul(adj_mat), degree_mat)
    -- return features.to_sparse().to(device), labels.to(device), adj_mat.to_sparse().to(device)
    return features:to_sparse():to(dev), labels:to(dev), adj_mat:to_sparse():to(dev)
end

-- def test(model, criterion, input, target, mask):
local function gcn_test(model, criterion, input, target, mask)
    model:eval()
    local loss, acc
    tide.no_grad(function()
        -- output = model(*input)
        local output = model(unpack(input))
        -- output, target = output[mask], target[mask]
        output, target = output[mask], target[mask]
        loss = criterion(output, target)
        -- acc = (output.argmax(dim=1) == target).float().sum() / len(target)
        acc = output:argmax({ dim = 2 }):eq(target):float():sum() / #target
    end)
    return loss:item(), acc:item()
end

-- def train_iter(epoch, model, optimizer, criterion, input, target, mask_train, mask_val,
--     print_every=10):  (returns the training step's loss and what it prints)
local function train_iter(epoch, model, optimizer, criterion, input, target, mask_train, mask_val)
    model:train()
    optimizer:zero_grad()
    local output = model(unpack(input))
    -- loss = criterion(output[mask_train], target[mask_train])
    local loss = criterion(output[mask_train], target[mask_train])
    loss:backward()
    optimizer:step()
    local loss_train, acc_train = gcn_test(model, criterion, input, target, mask_train)
    local loss_val, acc_val = gcn_test(model, criterion, input, target, mask_val)
    return loss:item(), { epoch, loss_train, acc_train, loss_val, acc_val }
end

local function cora_data()
    local V = 10
    -- features: 0/1 bag-of-words rows, node 5 (Python's 4) without a word
    local features = fm({ V, 6 }, 1.0, 1.3, 0.2):gt(0.3):float()
    features[5] = 0
    -- labels: PyTorch's [0, 1, 2, 3, 0, 1, 2, 3, 1, 2], 1-based
    local labels = tide.tensor({ 1, 2, 3, 4, 1, 2, 3, 4, 2, 3 })
    local edges = tide.tensor({ { 0, 1 }, { 1, 2 }, { 2, 3 }, { 3, 4 }, { 5, 6 }, { 6, 7 },
        { 7, 8 }, { 8, 9 }, { 9, 0 }, { 2, 7 }, { 4, 5 } }, { dtype = tide.int32 }) + 1
    return load_cora(features, labels, edges, "cpu")
end

local function gcn_fixed(features, labels, dropout_p)
    -- gcn = GCN(features.shape[1], args.hidden_dim, labels.max().item() + 1, args.include_bias,
    --     args.dropout_p)  (1-based labels: the largest is the class count)
    local gcn = GCN(features.shape[2], 5, labels:max():item(), true, dropout_p)
    set_(gcn.gc1.kernel, fm({ 6, 5 }, 0.5, 0.61, 0.3))
    set_(gcn.gc2.kernel, fm({ 5, 4 }, 0.5, 0.83, 0.9, "cos"))
    return gcn
end

describe("ported pytorch/examples gcn", function()
    it("load_cora's normalised adjacency, the log-probabilities and 2 losses match", function()
        local features, labels, adj_mat = cora_data()
        assert.is_true(features.is_sparse and adj_mat.is_sparse)
        assert.same({ 10, 10 }, adj_mat.shape)
        assert_close_list({ 0.0, 0.0, 0.3333333134651184, 0.40824827551841736, 0.0, 0.0, 0.0,
            0.40824827551841736, 0.0, 0.0 }, adj_mat:to_dense()[3]:totable(), 1e-6, "adj[3]")
        -- idx_test, idx_val, idx_train = idx[:1000], idx[1000:1500], idx[1500:]  (fixed)
        local idx_val = tide.tensor({ 4, 10 })
        local idx_train = tide.tensor({ 1, 3, 5, 7, 8 })
        local gcn = gcn_fixed(features, labels, 0.0)
        -- optimizer = Adam(gcn.parameters(), lr=args.lr, weight_decay=args.l2)
        local optimizer = optim.Adam(gcn:parameters(), { lr = 0.01, weight_decay = 5e-4 })
        local criterion = nn.NLLLoss()
        gcn:eval()
        local out = tide.no_grad(function() return gcn(features, adj_mat) end)
        assert_close_list({ -1.3815006017684937, -1.3856630325317383, -1.388907790184021,
            -1.389125108718872 }, out[1]:totable(), 1e-5, "log-probs[1]")
        assert_close_list({ -1.3849401473999023, -1.3859953880310059, -1.3869829177856445,
            -1.3872605562210083 }, out[5]:totable(), 1e-5, "log-probs[5]")
        local losses, vals = {}, {}
        -- for epoch in range(args.epochs):
        for epoch = 1, 2 do
            local l, printed = train_iter(epoch, gcn, optimizer, criterion, { features, adj_mat },
                labels, idx_train, idx_val)
            losses[epoch], vals[epoch] = l, printed[4]
        end
        assert_close_list({ 1.3855525255203247, 1.3748465776443481 }, losses, 1e-5, "gcn losses")
        assert_close_list({ 1.3907058238983154, 1.395128846168518 }, vals, 1e-5, "val losses")
    end)

    it("trains with dropout, and test() gives loss and accuracy", function()
        tide.manual_seed(42)
        local features, labels, adj_mat = cora_data()
        -- idx = torch.randperm(len(labels)).to(device)
        local idx = tide.randperm(#labels):to("cpu")
        -- idx_test, idx_val, idx_train = idx[:1000], idx[1000:1500], idx[1500:]  (3, 2, 5)
        local idx_test, idx_val, idx_train =
            idx[{ { 1, 3 } }], idx[{ { 4, 5 } }], idx[{ { 6, 10 } }]
        local gcn = GCN(features.shape[2], 5, labels:max():item(), true, 0.5)
        local optimizer = optim.Adam(gcn:parameters(), { lr = 0.01, weight_decay = 5e-4 })
        local criterion = nn.NLLLoss()
        local losses = {}
        for epoch = 1, 3 do
            losses[epoch] = train_iter(epoch, gcn, optimizer, criterion, { features, adj_mat },
                labels, idx_train, idx_val)
            assert_finite(losses[epoch], "gcn loss")
        end
        local loss_test, acc_test = gcn_test(gcn, criterion, { features, adj_mat }, labels,
            idx_test)
        assert_finite(loss_test, "test loss")
        assert.is_true(acc_test >= 0 and acc_test <= 1)
        assert.is_true(gcn.gc1.kernel.grad ~= nil)
    end)
end)
