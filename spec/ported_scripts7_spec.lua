-- ported_scripts7_spec.lua — the PyTorch tutorials ported line for line: "Learn the Basics"
-- (beginner_source/basics: quickstart, tensors, datasets & dataloaders, transforms, build model,
-- autograd, optimization), the blitz "Training a Classifier" (blitz/cifar10_tutorial.py) and
-- "What is torch.nn really?" (beginner_source/nn_tutorial.py: the model from scratch, then
-- F.cross_entropy, nn.Module/nn.Parameter, nn.Linear, optim, TensorDataset, DataLoader,
-- validation, fit/get_data, the CNN, the Lambda layer in nn.Sequential, WrappedDataLoader and
-- AdaptiveAvgPool2d). FashionMNIST, CIFAR10 and MNIST are tiny random tensors of their shapes;
-- a few training steps each, and values checked against PyTorch 1.13 where the tutorial's own
-- lines compute them on fixed inputs. The Python line stands above each Lua line that differs
-- from it; a line tide cannot write as Python does is marked `-- GAP:`. Dims, indices and
-- class targets are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite, close = ported.assert_finite, ported.close

local function assert_close(want, got, tol, what)
    assert(close(got, want, tol), ("%s: want %.7g, got %.7g"):format(what or "value", want, got))
end

local function assert_list_close(want, got, tol, what)
    assert.are.equal(#want, #got)
    for i = 1, #want do
        assert_close(want[i], got[i], tol, (what or "list") .. "[" .. i .. "]")
    end
end

-- the fixed inputs the PyTorch reference values were computed on:
-- (torch.sin(torch.arange(n, dtype=torch.float64) * a) * s).float().view(*shape)
local function fill(shape, a, s)
    local n = 1
    for _, d in ipairs(shape) do
        n = n * d
    end
    return (tide.sin(tide.arange(n, { dtype = tide.float64 }) * a) * s):float():view(shape)
end

-- every parameter, in named_parameters order, filled as set_fill(m) in the reference script:
-- p.copy_(fill(tuple(p.shape), 0.5 + 0.1 * i, 0.3)) for i, (name, p) in enumerate(...)
local function set_fill(m)
    tide.no_grad(function()
        local i = 0
        for _, p in m:named_parameters() do
            p:copy_(fill(p.shape, 0.5 + 0.1 * i, 0.3))
            i = i + 1
        end
    end)
end

local classes_fashion = {
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
}

-- datasets.FashionMNIST(root="data", train=..., download=True, transform=ToTensor()): n random
-- 1x28x28 images in [0, 1] with labels 1..10
local function fake_fashion(n)
    return tide.data.TensorDataset(tide.rand(n, 1, 28, 28), tide.randint(1, 11, { n }))
end

---------------------------------------------------------------------------------------------
-- 1. Learn the Basics (beginner_source/basics/*.py)
---------------------------------------------------------------------------------------------
describe("Learn the Basics", function()
    it("tensorqs_tutorial.py: creation, attributes, indexing, cat, matmul/mul with out=, " ..
        "item, add_, the bridge", function()
        tide.manual_seed(0)
        -- data = [[1, 2],[3, 4]]
        local data = { { 1, 2 }, { 3, 4 } }
        -- x_data = torch.tensor(data)
        local x_data = tide.tensor(data)
        assert.are.equal("int64", x_data.dtype)
        -- np_array = np.array(data); x_np = torch.from_numpy(np_array)
        -- GAP: Lua has no NumPy; a nested Lua table is the array, read by tide.tensor
        local x_np = tide.tensor(data)
        assert.is_true(x_np:equal(x_data))

        -- x_ones = torch.ones_like(x_data) # retains the properties of x_data
        local x_ones = tide.ones_like(x_data)
        -- print(f"Ones Tensor: \n {x_ones} \n")
        local line = string.format("Ones Tensor: \n %s \n", tostring(x_ones))
        assert.is_truthy(line:find("int64", 1, true))
        assert.are.equal("int64", x_ones.dtype)
        -- x_rand = torch.rand_like(x_data, dtype=torch.float) # overrides the datatype of x_data
        local x_rand = tide.rand_like(x_data, { dtype = tide.float })
        assert.are.equal("float32", x_rand.dtype)
        assert.are.same({ 2, 2 }, x_rand.shape)

        -- shape = (2,3,)
        local shape = { 2, 3 }
        -- rand_tensor = torch.rand(shape)
        local rand_tensor = tide.rand(shape)
        local ones_tensor = tide.ones(shape)
        local zeros_tensor = tide.zeros(shape)
        assert.are.same({ 2, 3 }, rand_tensor.shape)
        assert.are.equal(6, ones_tensor:sum():item())
        assert.are.equal(0, zeros_tensor:sum():item())

        -- tensor = torch.rand(3,4)
        local tensor = tide.rand(3, 4)
        -- print(f"Shape of tensor: {tensor.shape}")
        assert.are.same({ 3, 4 }, tensor.shape)
        -- print(f"Datatype of tensor: {tensor.dtype}")
        assert.are.equal("float32", tensor.dtype)
        -- print(f"Device tensor is stored on: {tensor.device}")
        assert.are.equal("cpu", tostring(tensor.device))

        -- if torch.cuda.is_available() & (torch.device('cuda').index is not None):
        -- GAP: Python's & evaluates both sides; tide.device('cuda') raises where no CUDA driver
        -- is found (PyTorch's makes a device object anyway), so Lua's short-circuit `and` is needed
        if tide.cuda.is_available() and tide.device("cuda").index ~= nil then
            tensor = tensor:to("cuda")
        end

        -- tensor = torch.ones(4, 4)
        tensor = tide.ones(4, 4)
        -- print('First row: ', tensor[0])
        assert.are.same({ 1, 1, 1, 1 }, tensor[1]:totable())
        -- print('First column: ', tensor[:, 0])
        assert.are.same({ 1, 1, 1, 1 }, tensor[{ {}, 1 }]:totable())
        -- print('Last column:', tensor[..., -1])
        assert.are.same({ 1, 1, 1, 1 }, tensor[{ "...", -1 }]:totable())
        -- tensor[:,1] = 0
        tensor[{ {}, 2 }] = 0
        assert.are.same({ 1, 0, 1, 1 }, tensor[3]:totable())

        -- t1 = torch.cat([tensor, tensor, tensor], dim=1)
        local t1 = tide.cat({ tensor, tensor, tensor }, { dim = 2 })
        assert.are.same({ 4, 12 }, t1.shape)
        assert.are.same({ 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1 }, t1[1]:totable())

        -- y1 = tensor @ tensor.T
        -- GAP: Lua has no @ operator; tensor @ tensor.T is tensor:matmul(tensor.T)
        local y1 = tensor:matmul(tensor.T)
        -- y2 = tensor.matmul(tensor.T)
        local y2 = tensor:matmul(tensor.T)
        -- y3 = torch.rand_like(tensor)
        local y3 = tide.rand_like(tensor)
        -- torch.matmul(tensor, tensor.T, out=y3)
        tide.matmul(tensor, tensor.T, { out = y3 })
        -- each row of tensor is [1, 0, 1, 1]: every dot product is 3
        assert.are.same(tide.full({ 4, 4 }, 3):totable(), y1:totable())
        assert.is_true(y1:equal(y2))
        assert.is_true(y1:equal(y3))

        -- z1 = tensor * tensor
        local z1 = tensor * tensor
        -- z2 = tensor.mul(tensor)
        local z2 = tensor:mul(tensor)
        -- z3 = torch.rand_like(tensor)
        local z3 = tide.rand_like(tensor)
        -- torch.mul(tensor, tensor, out=z3)
        tide.mul(tensor, tensor, { out = z3 })
        assert.is_true(z1:equal(tensor))
        assert.is_true(z1:equal(z2))
        assert.is_true(z1:equal(z3))

        -- agg = tensor.sum()
        local agg = tensor:sum()
        -- agg_item = agg.item()
        local agg_item = agg:item()
        -- print(agg_item, type(agg_item))
        assert.are.equal(12, agg_item)
        assert.are.equal("number", type(agg_item))

        -- tensor.add_(5)
        local same = tensor:add_(5)
        assert.is_true(rawequal(same, tensor))
        assert.are.same({ 6, 5, 6, 6 }, tensor[1]:totable())

        -- t = torch.ones(5)
        local t = tide.ones(5)
        -- n = t.numpy()
        -- GAP: no NumPy; t:totable() (tide's bridge) copies the values into a Lua list, so
        -- a later t.add_(1) does not show in it (NumPy's array shares t's memory)
        local n = t:totable()
        -- t.add_(1)
        t:add_(1)
        assert.are.same({ 2, 2, 2, 2, 2 }, t:totable())
        assert.are.same({ 1, 1, 1, 1, 1 }, n)
        -- n = np.ones(5)
        -- t = torch.from_numpy(n)
        t = tide.ones(5, { dtype = tide.float64 })
        -- np.add(n, 1, out=n)
        -- GAP: the tensor plays the array: out= the tensor itself adds in place
        tide.add(t, 1, { out = t })
        assert.are.same({ 2, 2, 2, 2, 2 }, t:totable())
    end)

    it("data_tutorial.py and transforms_tutorial.py: a custom Dataset, DataLoader, " ..
        "next(iter(...)), Lambda's one-hot target_transform", function()
        tide.manual_seed(1)
        -- labels_map = {0: "T-Shirt", ...}: 1-based, class 1 is "T-Shirt"
        local labels_map = { "T-Shirt", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
            "Sneaker", "Bag", "Ankle Boot" }

        -- class CustomImageDataset(Dataset):
        local CustomImageDataset = tide.data.Dataset:extend("CustomImageDataset")
        -- def __init__(self, annotations_file, img_dir, transform=None, target_transform=None):
        -- (the CSV of file names and labels and the image files are n random images and labels)
        function CustomImageDataset:init(n, transform, target_transform)
            -- self.img_labels = pd.read_csv(annotations_file)
            self.img_labels = tide.randint(1, 11, { n })
            self.images = tide.randint(0, 256, { n, 1, 28, 28 }):to(tide.uint8)
            self.transform = transform
            self.target_transform = target_transform
        end

        -- def __len__(self):
        function CustomImageDataset:__len__()
            -- return len(self.img_labels)
            return #self.img_labels
        end

        -- def __getitem__(self, idx):
        function CustomImageDataset:__getitem__(idx)
            -- image = read_image(img_path)
            local image = self.images[idx]
            -- label = self.img_labels.iloc[idx, 1]
            local label = self.img_labels[idx]:item()
            if self.transform then
                image = self.transform(image)
            end
            if self.target_transform then
                label = self.target_transform(label)
            end
            return image, label
        end

        -- ToTensor(): a uint8 image to float in [0, 1]
        local function ToTensor(img)
            return img:float() / 255
        end
        -- target_transform = Lambda(lambda y: torch.zeros(
        --     10, dtype=torch.float).scatter_(dim=0, index=torch.tensor(y), value=1))
        -- (torchvision's Lambda(f) calls f: a Lua function is the transform itself)
        local target_transform = function(y)
            return tide.zeros(10, { dtype = tide.float }):scatter_({ dim = 1, index = tide.tensor(y),
                value = 1 })
        end
        -- the other form in the tutorial: .scatter_(0, torch.tensor(y), value=1)
        local function one_hot(y)
            return tide.zeros(10, { dtype = tide.float }):scatter_(1, tide.tensor(y), { value = 1 })
        end
        -- torch: torch.zeros(10).scatter_(0, torch.tensor(3), value=1) is 1 at index 3, which is
        -- label 4 here
        assert.are.same({ 0, 0, 0, 1, 0, 0, 0, 0, 0, 0 }, target_transform(4):totable())
        assert.are.same({ 0, 0, 0, 1, 0, 0, 0, 0, 0, 0 }, one_hot(4):totable())

        local training_data = CustomImageDataset(100, ToTensor)
        local test_data = CustomImageDataset(20, ToTensor, target_transform)
        -- len(training_data)
        assert.are.equal(100, training_data:len())

        -- for i in range(1, cols * rows + 1):
        local cols, rows = 3, 3
        for _ = 1, cols * rows do
            -- sample_idx = torch.randint(len(training_data), size=(1,)).item()
            -- (1-based: randint(1, len + 1))
            local sample_idx = tide.randint(1, training_data:len() + 1, { size = { 1 } }):item()
            -- img, label = training_data[sample_idx]
            -- GAP: ds[i] is the sample's fields in a Lua list (Python's tuple): unpack
            local img, label = unpack(training_data[sample_idx])
            assert.are.equal(label, select(2, training_data:get(sample_idx)))
            -- plt.title(labels_map[label]); plt.imshow(img.squeeze(), cmap="gray")
            assert.is_string(labels_map[label])
            assert.are.same({ 28, 28 }, img:squeeze().shape)
            assert.is_true(img:max():item() <= 1)
        end
        -- the one-hot label of the test set
        local _, hot = test_data:get(1)
        assert.are.same({ 10 }, hot.shape)
        assert.are.equal(1, hot:sum():item())
        assert.are.equal(test_data.img_labels[1]:item(), hot:argmax():item())

        -- train_dataloader = DataLoader(training_data, batch_size=64, shuffle=True)
        local train_dataloader = tide.data.DataLoader(training_data, { batch_size = 64, shuffle = true })
        local test_dataloader = tide.data.DataLoader(test_data, { batch_size = 64, shuffle = true })

        -- train_features, train_labels = next(iter(train_dataloader))
        local train_features, train_labels = train_dataloader:iter()()
        -- print(f"Feature batch shape: {train_features.size()}")
        assert.are.same({ 64, 1, 28, 28 }, train_features:size())
        -- print(f"Labels batch shape: {train_labels.size()}")
        assert.are.same({ 64 }, train_labels:size())
        -- img = train_features[0].squeeze()
        local img = train_features[1]:squeeze()
        -- label = train_labels[0]
        local label = train_labels[1]
        assert.are.same({ 28, 28 }, img.shape)
        assert.is_string(labels_map[label:item()])
        -- the one-hot labels batch to a 2-D tensor
        local test_features, test_labels = test_dataloader:iter()()
        assert.are.same({ 20, 10 }, test_labels.shape)
        assert.is_true(test_labels:sum(2):eq(1):all():item())

        -- the one-hot targets go to nn.CrossEntropyLoss as they are (class probabilities, PyTorch
        -- 1.10+), the same loss as the class indices give
        local model = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 10))
        local loss_fn = nn.CrossEntropyLoss()
        local indices = test_labels:argmax(2)
        local loss = loss_fn(model(test_features), test_labels)
        assert_close(loss_fn(model(test_features), indices):item(), loss:item(), 1e-5, "one-hot")
        local optimizer = optim.SGD(model:parameters(), { lr = 0.1 })
        local first = loss:item()
        for _ = 1, 3 do
            optimizer:zero_grad()
            loss = loss_fn(model(test_features), test_labels)
            loss:backward()
            optimizer:step()
        end
        assert.is_true(loss_fn(model(test_features), test_labels):item() < first)
    end)

    it("cross_entropy takes class probabilities (a floating-point target of the input's " ..
        "shape), as PyTorch 1.10+", function()
        local x = tide.tensor({ { 0.2, -1.0, 0.5 }, { 1.5, 0.3, -0.7 } }, { requires_grad = true })
        local t = tide.tensor({ { 0.1, 0.6, 0.3 }, { 0.0, 0.0, 1.0 } })
        local w = tide.tensor({ 0.5, 2.0, 1.0 })
        -- torch: F.cross_entropy(x, t, **kw) for each kw
        assert_close(2.074981212615967, F.cross_entropy(x, t):item(), 1e-6, "mean")
        assert_close(4.149962425231934, F.cross_entropy(x, t, { reduction = "sum" }):item(), 1e-6,
            "sum")
        assert_list_close({ 1.604956865310669, 2.5450053215026855 },
            F.cross_entropy(x, t, { reduction = "none" }):totable(), 1e-6, "none")
        assert_close(2.703094005584717, F.cross_entropy(x, t, { weight = w }):item(), 1e-6, "weight")
        assert_close(1.935314416885376, F.cross_entropy(x, t, { label_smoothing = 0.2 }):item(), 1e-6,
            "label_smoothing")
        assert_list_close({ 2.6564364433288574, 2.4231722354888916 }, F.cross_entropy(x, t,
            { weight = w, label_smoothing = 0.2, reduction = "none" }):totable(), 1e-6, "both")
        assert_close(2.6214492321014404, nn.CrossEntropyLoss({ weight = w, label_smoothing = 0.1 })(
            x, t):item(), 1e-6, "module")
        -- the unbatched {C} form
        assert_close(1.604956865310669, F.cross_entropy(x[1], t[1]):item(), 1e-6, "unbatched")
        F.cross_entropy(x, t):backward()
        assert_list_close({ 0.1386042982339859, -0.24319347739219666, 0.10458916425704956 },
            x.grad[1]:totable(), 1e-5, "grad")
        assert_list_close({ 0.3541083335876465, 0.10665536671876907, -0.46076369285583496 },
            x.grad[2]:totable(), 1e-5, "grad")
        -- {N, C, d1, d2}: the classes on dim 2
        local x4 = tide.arange(24, { dtype = tide.float }):view(2, 3, 2, 2):sin()
        local t4 = tide.softmax(tide.arange(24, { dtype = tide.float }):view(2, 3, 2, 2):cos(), 2)
        assert_close(1.3108998537063599, F.cross_entropy(x4, t4):item(), 1e-5, "4-d")
        assert.are.same({ 2, 2, 2 }, F.cross_entropy(x4, t4, { reduction = "none" }).shape)
        -- an empty batch's mean is NaN, as PyTorch's
        local nan = F.cross_entropy(tide.zeros(0, 3), tide.zeros(0, 3)):item()
        assert.is_true(nan ~= nan)

        -- bad input raises, naming the fix, and leaves the tensors as they were
        local before = t:clone()
        local function err(f)
            local ok, e = pcall(f)
            assert.is_false(ok)
            return tostring(e)
        end
        assert.matches("tide: cross_entropy: ignore_index is not supported with class-probability " ..
            "targets (a floating-point target of the input's shape), got 1; pass 1-based integer " ..
            "class targets to ignore a class", err(function()
                return F.cross_entropy(x, t, { ignore_index = 1 })
            end), 1, true)
        assert.matches("tide: cross_entropy: a target of the input's shape {2, 3} holds class " ..
            "probabilities and must be floating point, got int64; convert it with target:float(), " ..
            "or pass 1-based class indices of shape {2}", err(function()
                return F.cross_entropy(x, t:long())
            end), 1, true)
        assert.matches("tide: CrossEntropyLoss: expected integer class targets (int64, 1-based), " ..
            "got float32 of shape {2}; convert with target:long() (a floating-point target holds " ..
            "class probabilities, of the input's shape {2, 3})", err(function()
                return nn.CrossEntropyLoss()(x, tide.tensor({ 1, 3 }, { dtype = tide.float }))
            end), 1, true)
        assert.matches("tide: cross_entropy: expected weight of shape {3} (one per class), got {2}",
            err(function()
                return F.cross_entropy(x, t, { weight = tide.ones(2) })
            end), 1, true)
        assert.matches("tide: cross_entropy: expected label_smoothing in [0, 1], got 2",
            err(function()
                return F.cross_entropy(x, t, { label_smoothing = 2 })
            end), 1, true)
        assert.is_true(t:equal(before))
        -- nll_loss takes class indices only (PyTorch's too)
        assert.matches("tide: nll_loss: expected integer class targets", err(function()
            return F.nll_loss(F.log_softmax(x, 2), t)
        end), 1, true)
    end)

    -- class NeuralNetwork(nn.Module): (buildmodel_tutorial.py; quickstart's ends with a ReLU)
    local function NeuralNetworkClass(final_relu)
        local NeuralNetwork = nn.Module:extend("NeuralNetwork")
        function NeuralNetwork:init()
            self.flatten = nn.Flatten()
            -- self.linear_relu_stack = nn.Sequential(
            --     nn.Linear(28*28, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10),
            --     nn.ReLU())
            local layers = { nn.Linear(28 * 28, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                nn.Linear(512, 10) }
            if final_relu then
                layers[#layers + 1] = nn.ReLU()
            end
            self.linear_relu_stack = nn.Sequential(unpack(layers))
        end

        function NeuralNetwork:forward(x)
            x = self.flatten(x)
            local logits = self.linear_relu_stack(x)
            return logits
        end

        return NeuralNetwork
    end

    it("buildmodel_tutorial.py: the model, nn.Softmax(dim=1), the layers one by one, " ..
        "named_parameters", function()
        tide.manual_seed(2)
        -- device = 'cuda' if torch.cuda.is_available() else 'cpu'
        local device = tide.cuda.is_available() and "cuda" or "cpu"
        -- print('Using {} device'.format(device))
        assert.is_truthy(("Using %s device"):format(device):match("^Using %a+ device$"))
        local NeuralNetwork = NeuralNetworkClass(false)
        -- model = NeuralNetwork().to(device)
        local model = NeuralNetwork():to(device)
        -- print(model)
        assert.is_truthy(tostring(model):find("linear_relu_stack", 1, true))

        -- X = torch.rand(1, 28, 28, device=device)
        local X = tide.rand(1, 28, 28, { device = device })
        local logits = model(X)
        -- pred_probab = nn.Softmax(dim=1)(logits)
        local pred_probab = nn.Softmax({ dim = 2 })(logits)
        -- y_pred = pred_probab.argmax(1)
        local y_pred = pred_probab:argmax(2)
        -- print(f"Predicted class: {y_pred}")
        assert.are.same({ 1 }, y_pred.shape)
        assert.is_true(close(pred_probab:sum():item(), 1, 1e-5))
        -- nn.Softmax(1) by position is the same module
        assert.is_true(nn.Softmax(2)(logits):equal(pred_probab))

        -- input_image = torch.rand(3,28,28)
        local input_image = tide.rand(3, 28, 28)
        assert.are.same({ 3, 28, 28 }, input_image:size())
        -- flatten = nn.Flatten()
        local flatten = nn.Flatten()
        local flat_image = flatten(input_image)
        assert.are.same({ 3, 784 }, flat_image:size())
        -- layer1 = nn.Linear(in_features=28*28, out_features=20)
        local layer1 = nn.Linear({ in_features = 28 * 28, out_features = 20 })
        local hidden1 = layer1(flat_image)
        assert.are.same({ 3, 20 }, hidden1:size())
        -- print(f"Before ReLU: {hidden1}\n\n")
        -- hidden1 = nn.ReLU()(hidden1)
        hidden1 = nn.ReLU()(hidden1)
        assert.is_true(hidden1:min():item() >= 0)

        -- seq_modules = nn.Sequential(flatten, layer1, nn.ReLU(), nn.Linear(20, 10))
        local seq_modules = nn.Sequential(flatten, layer1, nn.ReLU(), nn.Linear(20, 10))
        input_image = tide.rand(3, 28, 28)
        logits = seq_modules(input_image)
        -- softmax = nn.Softmax(dim=1)
        local softmax = nn.Softmax({ dim = 2 })
        pred_probab = softmax(logits)
        assert.are.same({ 3, 10 }, pred_probab.shape)
        assert.is_true(pred_probab:sum(2):sub(1):abs():max():item() < 1e-5)

        -- print("Model structure: ", model, "\n\n")
        -- for name, param in model.named_parameters():
        local names, sizes = {}, {}
        for name, param in model:named_parameters() do
            -- print(f"Layer: {name} | Size: {param.size()} | Values : {param[:2]} \n")
            local row = string.format("Layer: %s | Size: %s | Values : %s \n", name,
                tostring(param:size()), tostring(param[{ { 1, 2 } }]))
            assert.is_truthy(row:find(name, 1, true))
            assert.are.equal(2, param[{ { 1, 2 } }]:size(1))
            names[#names + 1] = name
            sizes[#sizes + 1] = param:size()
        end
        -- PyTorch's names: linear_relu_stack.0.weight ... (Sequential's indices are 1-based here)
        assert.are.same({ "linear_relu_stack.1.weight", "linear_relu_stack.1.bias",
            "linear_relu_stack.3.weight", "linear_relu_stack.3.bias", "linear_relu_stack.5.weight",
            "linear_relu_stack.5.bias" }, names)
        assert.are.same({ { 512, 784 }, { 512 }, { 512, 512 }, { 512 }, { 10, 512 }, { 10 } }, sizes)
    end)

    it("autogradqs_tutorial.py: BCE with logits, grad_fn, backward, no_grad, detach, " ..
        "the Jacobian product with retain_graph", function()
        tide.manual_seed(3)
        -- x = torch.ones(5)  # input tensor
        local x = tide.ones(5)
        -- y = torch.zeros(3)  # expected output
        local y = tide.zeros(3)
        -- w = torch.randn(5, 3, requires_grad=True)
        local w = tide.randn(5, 3, { requires_grad = true })
        -- b = torch.randn(3, requires_grad=True)
        local b = tide.randn(3, { requires_grad = true })
        assert.is_true(w.requires_grad and b.requires_grad and w.is_leaf)
        -- the reference values use fixed w and b instead of the draws
        tide.no_grad(function()
            w:copy_(fill({ 5, 3 }, 0.7, 1.0))
            b:copy_(fill({ 3 }, 1.3, 0.5))
        end)
        -- z = torch.matmul(x, w)+b
        local z = tide.matmul(x, w) + b
        -- loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
        local loss = tide.nn.functional.binary_cross_entropy_with_logits(z, y)

        -- print(f"Gradient function for z = {z.grad_fn}")
        assert.is_truthy(tostring(z.grad_fn):find("AddBackward0", 1, true))
        -- print(f"Gradient function for loss = {loss.grad_fn}")
        -- (PyTorch's node is BinaryCrossEntropyWithLogitsBackward0; tide's loss is composed of ops
        -- and its last node is the mean's)
        assert.is_truthy(loss.grad_fn)

        -- loss.backward()
        loss:backward()
        -- print(w.grad); print(b.grad)
        -- torch: loss 1.369490623474121, w.grad[0] = b.grad = [0.234432, 0.270236, 0.235803]
        assert_close(1.369490623474121, loss:item(), 1e-6, "loss")
        local want = { 0.23443223536014557, 0.27023598551750183, 0.23580344021320343 }
        assert_list_close(want, b.grad:totable(), 1e-5, "b.grad")
        for i = 1, 5 do
            assert_list_close(want, w.grad[i]:totable(), 1e-5, "w.grad")
        end

        -- z = torch.matmul(x, w)+b
        z = tide.matmul(x, w) + b
        -- print(z.requires_grad)
        assert.is_true(z.requires_grad)
        -- with torch.no_grad():
        tide.no_grad(function()
            z = tide.matmul(x, w) + b
        end)
        assert.is_false(z.requires_grad)

        -- z = torch.matmul(x, w)+b
        z = tide.matmul(x, w) + b
        -- z_det = z.detach()
        local z_det = z:detach()
        assert.is_false(z_det.requires_grad)
        assert.is_true(z.requires_grad)

        -- inp = torch.eye(4, 5, requires_grad=True)
        local inp = tide.eye(4, 5, { requires_grad = true })
        -- out = (inp+1).pow(2).t()
        local out = (inp + 1):pow(2):t()
        -- out.backward(torch.ones_like(out), retain_graph=True)
        out:backward(tide.ones_like(out), { retain_graph = true })
        -- print(f"First call\n{inp.grad}")
        -- torch: 4 on the diagonal, 2 elsewhere (d/dx (x+1)^2 = 2(x+1))
        local first = tide.full({ 4, 5 }, 2):add(tide.eye(4, 5) * 2)
        assert.is_true(inp.grad:equal(first))
        -- out.backward(torch.ones_like(out), retain_graph=True)
        out:backward(tide.ones_like(out), { retain_graph = true })
        -- print(f"\nSecond call\n{inp.grad}"): accumulated, twice the first
        assert.is_true(inp.grad:equal(first * 2))
        -- inp.grad.zero_()
        inp.grad:zero_()
        -- out.backward(torch.ones_like(out), retain_graph=True)
        out:backward(tide.ones_like(out), { retain_graph = true })
        -- print(f"\nCall after zeroing gradients\n{inp.grad}")
        assert.is_true(inp.grad:equal(first))
    end)

    -- def train(dataloader, model, loss_fn, optimizer): (quickstart_tutorial.py)
    local function quickstart_train(dataloader, model, loss_fn, optimizer, device, printed)
        -- size = len(dataloader.dataset)
        local size = dataloader.dataset:len()
        local losses = {}
        -- for batch, (X, y) in enumerate(dataloader):
        local batch = 0
        for X, y in dataloader:iter() do
            -- X, y = X.to(device), y.to(device)
            X, y = X:to(device), y:to(device)

            -- Compute prediction error
            local pred = model(X)
            local loss = loss_fn(pred, y)

            -- Backpropagation
            optimizer:zero_grad()
            loss:backward()
            optimizer:step()
            losses[#losses + 1] = loss:item()

            -- if batch % 100 == 0: (every batch here)
            if batch % 1 == 0 then
                -- loss, current = loss.item(), batch * len(X)
                local current
                loss, current = loss:item(), batch * #X
                -- print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")
                printed[#printed + 1] = string.format("loss: %7f  [%5d/%5d]", loss, current, size)
            end
            batch = batch + 1
        end
        return losses
    end

    -- def test(dataloader, model, loss_fn):
    local function quickstart_test(dataloader, model, loss_fn, device, printed)
        -- size = len(dataloader.dataset)
        local size = dataloader.dataset:len()
        -- num_batches = len(dataloader)
        local num_batches = dataloader:len()
        model:eval()
        -- test_loss, correct = 0, 0
        local test_loss, correct = 0, 0
        -- with torch.no_grad():
        tide.no_grad(function()
            for X, y in dataloader:iter() do
                X, y = X:to(device), y:to(device)
                local pred = model(X)
                -- test_loss += loss_fn(pred, y).item()
                test_loss = test_loss + loss_fn(pred, y):item()
                -- correct += (pred.argmax(1) == y).type(torch.float).sum().item()
                -- GAP: Lua's == on two tensors is identity (one boolean); elementwise is :eq
                correct = correct + pred:argmax(2):eq(y):type(tide.float):sum():item()
            end
        end)
        -- test_loss /= num_batches
        test_loss = test_loss / num_batches
        -- correct /= size
        correct = correct / size
        -- print(f"Test Error: \n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")
        printed[#printed + 1] = string.format("Test Error: \n Accuracy: %0.1f%%, Avg loss: %8f \n",
            100 * correct, test_loss)
        return test_loss, correct
    end

    it("quickstart_tutorial.py: train/test loops, torch.save/load of the state_dict, " ..
        "a prediction in eval mode", function()
        tide.manual_seed(4)
        local training_data, test_data = fake_fashion(48), fake_fashion(20)
        -- batch_size = 64 (16 here)
        local batch_size = 16

        -- train_dataloader = DataLoader(training_data, batch_size=batch_size)
        local train_dataloader = tide.data.DataLoader(training_data, { batch_size = batch_size })
        local test_dataloader = tide.data.DataLoader(test_data, { batch_size = batch_size })

        -- for X, y in test_dataloader:
        for X, y in test_dataloader:iter() do
            -- print("Shape of X [N, C, H, W]: ", X.shape)
            assert.are.same({ 16, 1, 28, 28 }, X.shape)
            -- print("Shape of y: ", y.shape, y.dtype)
            assert.are.same({ 16 }, y.shape)
            assert.are.equal("int64", y.dtype)
            break
        end

        -- device = "cuda" if torch.cuda.is_available() else "cpu"
        -- (the spec stays on the CPU)
        local device = "cpu"
        local NeuralNetwork = NeuralNetworkClass(true)
        -- model = NeuralNetwork().to(device)
        local model = NeuralNetwork():to(device)

        -- loss_fn = nn.CrossEntropyLoss()
        local loss_fn = nn.CrossEntropyLoss()
        -- optimizer = torch.optim.SGD(model.parameters(), lr=1e-3) (a larger lr for few steps)
        local optimizer = tide.optim.SGD(model:parameters(), { lr = 5e-2 })

        local printed = {}
        local first_test, last_test, first_train, last_train
        -- epochs = 5
        local epochs = 3
        -- for t in range(epochs):
        for t = 0, epochs - 1 do
            -- print(f"Epoch {t+1}\n-------------------------------")
            printed[#printed + 1] = string.format("Epoch %d\n-------------------------------", t + 1)
            model:train()
            local losses = quickstart_train(train_dataloader, model, loss_fn, optimizer, device,
                printed)
            assert.are.equal(3, #losses)
            -- the same batches each epoch (no shuffle): the first batch's loss falls
            first_train = first_train or losses[1]
            last_train = losses[1]
            local test_loss, correct = quickstart_test(test_dataloader, model, loss_fn, device,
                printed)
            assert_finite(test_loss, "test loss")
            assert.is_true(correct >= 0 and correct <= 1)
            first_test = first_test or test_loss
            last_test = test_loss
        end
        assert.are.equal("Epoch 1\n-------------------------------", printed[1])
        assert.is_truthy(printed[2]:match("^loss: %s*%d+%.%d+  %[    0/   48%]$"), printed[2])
        assert.is_truthy(printed[3]:match("%[   16/   48%]$"), printed[3])
        assert.is_truthy(printed[5]:match("^Test Error: \n Accuracy: %d+%.%d%%, Avg loss: "), printed[5])
        assert.is_true(last_train < first_train, "train loss fell: " .. first_train .. " -> " .. last_train)
        assert_finite(first_test)
        assert_finite(last_test)

        -- torch.save(model.state_dict(), "model.pth")
        local path = os.tmpname()
        tide.save(model:state_dict(), path)

        -- model = NeuralNetwork()
        local trained = model
        model = NeuralNetwork()
        -- model.load_state_dict(torch.load("model.pth"))
        model:load_state_dict(tide.load(path))
        os.remove(path)
        for name, p in trained:named_parameters() do
            assert.is_true(p:equal(model:state_dict()[name]), name)
        end

        -- classes = ["T-shirt/top", "Trouser", ...]
        local classes = classes_fashion

        model:eval()
        -- x, y = test_data[0][0], test_data[0][1]
        local x, y = test_data[1][1], test_data[1][2]
        -- with torch.no_grad():
        tide.no_grad(function()
            local pred = model(x)
            -- predicted, actual = classes[pred[0].argmax(0)], classes[y]
            -- GAP: a Lua table indexed by a tensor reads the key itself (nil here, no error):
            -- a 0-d index tensor goes through :item()
            assert.is_nil(classes[pred[1]:argmax(1)])
            local predicted, actual = classes[pred[1]:argmax(1):item()], classes[y:item()]
            -- print(f'Predicted: "{predicted}", Actual: "{actual}"')
            local line = string.format('Predicted: "%s", Actual: "%s"', predicted, actual)
            assert.is_string(predicted)
            assert.is_string(actual)
            assert.is_truthy(line:find(actual, 1, true))
            -- the same prediction the trained model makes
            assert.are.equal(trained(x)[1]:argmax(1):item(), pred[1]:argmax(1):item())
        end)
    end)

    it("optimization_tutorial.py: train_loop/test_loop with model.train()/model.eval()", function()
        tide.manual_seed(5)
        local training_data, test_data = fake_fashion(40), fake_fashion(16)
        -- learning_rate = 1e-3; batch_size = 64; epochs = 5 (a larger lr, smaller batches here)
        local learning_rate = 5e-2
        local batch_size = 16
        -- train_dataloader = DataLoader(training_data, batch_size=64)
        local train_dataloader = tide.data.DataLoader(training_data, { batch_size = batch_size })
        local test_dataloader = tide.data.DataLoader(test_data, { batch_size = batch_size })
        -- model = NeuralNetwork()
        local model = NeuralNetworkClass(false)()

        local printed = {}
        -- def train_loop(dataloader, model, loss_fn, optimizer):
        local function train_loop(dataloader, model_, loss_fn, optimizer)
            -- size = len(dataloader.dataset)
            local size = dataloader.dataset:len()
            -- model.train()
            model_:train()
            assert.is_true(model_.training and model_.linear_relu_stack.training)
            local losses = {}
            local batch = 0
            -- for batch, (X, y) in enumerate(dataloader):
            for X, y in dataloader:iter() do
                -- Compute prediction and loss
                local pred = model_(X)
                local loss = loss_fn(pred, y)

                -- Backpropagation
                optimizer:zero_grad()
                loss:backward()
                optimizer:step()
                losses[#losses + 1] = loss:item()

                if batch % 100 == 0 then
                    -- loss, current = loss.item(), batch * batch_size + len(X)
                    local current
                    loss, current = loss:item(), batch * batch_size + #X
                    -- print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")
                    printed[#printed + 1] = string.format("loss: %7f  [%5d/%5d]", loss, current, size)
                end
                batch = batch + 1
            end
            return losses
        end

        -- def test_loop(dataloader, model, loss_fn):
        local function test_loop(dataloader, model_, loss_fn)
            -- model.eval()
            model_:eval()
            assert.is_false(model_.training or model_.flatten.training)
            local size = dataloader.dataset:len()
            local num_batches = dataloader:len()
            local test_loss, correct = 0, 0
            -- with torch.no_grad():
            tide.no_grad(function()
                for X, y in dataloader:iter() do
                    local pred = model_(X)
                    assert.is_nil(pred.grad_fn)
                    test_loss = test_loss + loss_fn(pred, y):item()
                    -- correct += (pred.argmax(1) == y).type(torch.float).sum().item()
                    correct = correct + pred:argmax(2):eq(y):type(tide.float):sum():item()
                end
            end)
            test_loss = test_loss / num_batches
            correct = correct / size
            printed[#printed + 1] = string.format(
                "Test Error: \n Accuracy: %0.1f%%, Avg loss: %8f \n", 100 * correct, test_loss)
            return test_loss, correct
        end

        -- loss_fn = nn.CrossEntropyLoss()
        local loss_fn = nn.CrossEntropyLoss()
        -- optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)
        local optimizer = tide.optim.SGD(model:parameters(), { lr = learning_rate })

        -- epochs = 10
        local epochs = 3
        local first, last
        for t = 0, epochs - 1 do
            printed[#printed + 1] = string.format("Epoch %d\n-------------------------------", t + 1)
            local losses = train_loop(train_dataloader, model, loss_fn, optimizer)
            -- 40 samples in batches of 16: 16, 16, 8
            assert.are.equal(3, #losses)
            first = first or losses[1]
            last = losses[1]
            local test_loss = test_loop(test_dataloader, model, loss_fn)
            assert_finite(test_loss, "test loss")
        end
        -- print("Done!")
        -- batch 0: current = 0 * 16 + 16
        assert.is_truthy(printed[2]:match("%[   16/   40%]$"), printed[2])
        assert_finite(first)
        assert.is_true(last < first, "loss fell: " .. first .. " -> " .. last)
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. blitz/cifar10_tutorial.py: Training a Classifier
---------------------------------------------------------------------------------------------
describe("blitz/cifar10_tutorial.py", function()
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
        -- x = torch.flatten(x, 1) # flatten all dimensions except batch
        x = tide.flatten(x, 2)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x
    end

    -- classes = ('plane', 'car', 'bird', 'cat', 'deer', 'dog', 'frog', 'horse', 'ship', 'truck')
    local classes = { "plane", "car", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck" }

    it("Net's forward, CrossEntropyLoss and SGD(momentum=0.9) match PyTorch on fixed weights",
        function()
            local net = Net()
            set_fill(net)
            local imgs = fill({ 2, 3, 32, 32 }, 0.23, 1.0)
            local o = net(imgs)
            -- torch: net(imgs)[0]
            assert_list_close({ 0.4295840859413147, -0.20504111051559448, 0.39965859055519104,
                -0.1962345838546753, -0.5834978818893433, 0.7055060863494873, -0.08950579166412354,
                -0.11490906774997711, 0.05935931205749512, -0.4989118278026581 }, o[1]:totable(), 1e-4,
                "net out")
            -- criterion = nn.CrossEntropyLoss()
            local criterion = nn.CrossEntropyLoss()
            -- labels 3, 7 in PyTorch
            local labels = tide.tensor({ 4, 8 })
            assert_close(2.5693702697753906, criterion(o, labels):item(), 1e-5, "loss")
            -- _, predicted = torch.max(outputs.data, 1)
            local _, predicted = tide.max(o.data, 2)
            -- torch: [5, 5]
            assert.are.same({ 6, 6 }, predicted:totable())
            -- optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
            local optimizer = optim.SGD(net:parameters(), { lr = 0.001, momentum = 0.9 })
            for _ = 1, 3 do
                optimizer:zero_grad()
                local loss = criterion(net(imgs), labels)
                loss:backward()
                optimizer:step()
            end
            -- torch: 2.191640853881836 after three steps
            assert_close(2.191640853881836, criterion(net(imgs), labels):item(), 1e-4, "loss after")
        end)

    it("trains, saves and reloads, then counts accuracy overall and per class", function()
        tide.manual_seed(6)
        -- transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5, 0.5, 0.5),
        --     (0.5, 0.5, 0.5))]): 3x32x32 images in [-1, 1]
        local function cifar(n)
            return tide.data.TensorDataset(tide.rand(n, 3, 32, 32) * 2 - 1, tide.randint(1, 11, { n }))
        end
        -- batch_size = 4
        local batch_size = 4
        -- trainset = torchvision.datasets.CIFAR10(root='./data', train=True, download=True,
        --     transform=transform)
        local trainset = cifar(24)
        -- trainloader = torch.utils.data.DataLoader(trainset, batch_size=batch_size,
        --     shuffle=True, num_workers=2)
        local trainloader = tide.utils.data.DataLoader(trainset, { batch_size = batch_size,
            shuffle = true, num_workers = 2 })
        local testset = cifar(12)
        local testloader = tide.utils.data.DataLoader(testset, { batch_size = batch_size,
            shuffle = false, num_workers = 2 })

        -- dataiter = iter(trainloader)
        local dataiter = trainloader:iter()
        -- images, labels = next(dataiter)
        local images, labels = dataiter()
        -- print(' '.join(f'{classes[labels[j]]:5s}' for j in range(batch_size)))
        local names = {}
        for j = 1, batch_size do
            -- GAP: a tensor key reads nothing from a Lua table: labels[j] goes through :item()
            names[#names + 1] = string.format("%-5s", classes[labels[j]:item()])
        end
        assert.are.equal(4, #names)
        assert.are.same({ 4, 3, 32, 32 }, images.shape)

        local net = Net()
        -- criterion = nn.CrossEntropyLoss()
        local criterion = nn.CrossEntropyLoss()
        -- optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9) (lr 0.01 for few steps)
        local optimizer = optim.SGD(net:parameters(), { lr = 0.01, momentum = 0.9 })

        local printed, all = {}, {}
        -- for epoch in range(2):  # loop over the dataset multiple times
        for epoch = 0, 1 do
            -- running_loss = 0.0
            local running_loss = 0.0
            -- for i, data in enumerate(trainloader, 0):
            -- GAP: a Lua for takes the loader's values one by one (`for data in` would keep the
            -- inputs only): inputs, labels = data is the loop's two names
            local i = 0
            for inputs, labels_ in trainloader:iter() do
                -- zero the parameter gradients
                optimizer:zero_grad()

                -- forward + backward + optimize
                local outputs = net(inputs)
                local loss = criterion(outputs, labels_)
                loss:backward()
                optimizer:step()

                -- running_loss += loss.item()
                running_loss = running_loss + loss:item()
                all[#all + 1] = loss:item()
                -- if i % 2000 == 1999:    # print every 2000 mini-batches (every 3 here)
                if i % 3 == 2 then
                    -- print(f'[{epoch + 1}, {i + 1:5d}] loss: {running_loss / 2000:.3f}')
                    printed[#printed + 1] = string.format("[%d, %5d] loss: %.3f", epoch + 1, i + 1,
                        running_loss / 3)
                    running_loss = 0.0
                end
                i = i + 1
            end
        end
        -- print('Finished Training')
        assert.are.equal(4, #printed)
        assert.is_truthy(printed[1]:match("^%[1,     3%] loss: %d+%.%d%d%d$"), printed[1])
        assert.is_truthy(printed[4]:match("^%[2,     6%] loss: "), printed[4])
        for _, l in ipairs(all) do
            assert_finite(l, "loss")
        end
        local first = (all[1] + all[2] + all[3]) / 3
        local last = (all[10] + all[11] + all[12]) / 3
        assert.is_true(last < first, "loss fell: " .. first .. " -> " .. last)

        -- PATH = './cifar_net.pth'
        local PATH = os.tmpname()
        -- torch.save(net.state_dict(), PATH)
        tide.save(net:state_dict(), PATH)

        -- dataiter = iter(testloader)
        dataiter = testloader:iter()
        -- images, labels = next(dataiter)
        images, labels = dataiter()

        -- net = Net()
        local trained = net
        net = Net()
        -- net.load_state_dict(torch.load(PATH))
        net:load_state_dict(tide.load(PATH))
        os.remove(PATH)

        -- outputs = net(images)
        local outputs = net(images)
        -- _, predicted = torch.max(outputs, 1)
        local _, predicted = tide.max(outputs, 2)
        assert.is_true(predicted:equal(select(2, tide.max(trained(images), 2))))
        -- print('Predicted: ', ' '.join(f'{classes[predicted[j]]:5s}' for j in range(4)))
        for j = 1, 4 do
            assert.is_string(classes[predicted[j]:item()])
        end

        -- correct = 0; total = 0
        local correct, total = 0, 0
        -- with torch.no_grad():
        tide.no_grad(function()
            -- for data in testloader:
            --     images, labels = data
            for images_, labels_ in testloader:iter() do
                -- outputs = net(images)
                local outputs_ = net(images_)
                -- _, predicted = torch.max(outputs.data, 1)
                local _, predicted_ = tide.max(outputs_.data, 2)
                -- total += labels.size(0)
                total = total + labels_:size(1)
                -- correct += (predicted == labels).sum().item()
                correct = correct + predicted_:eq(labels_):sum():item()
            end
        end)
        assert.are.equal(12, total)
        -- print(f'Accuracy of the network on the 10000 test images: {100 * correct // total} %')
        -- (no // on Lua 5.1: math.floor)
        local line = string.format("Accuracy of the network on the 10000 test images: %d %%",
            math.floor(100 * correct / total))
        assert.is_truthy(line:match(": %d+ %%$"))

        -- correct_pred = {classname: 0 for classname in classes}
        local correct_pred, total_pred = {}, {}
        for _, classname in ipairs(classes) do
            correct_pred[classname] = 0
            -- total_pred = {classname: 0 for classname in classes}
            total_pred[classname] = 0
        end

        tide.no_grad(function()
            for images_, labels_ in testloader:iter() do
                local outputs_ = net(images_)
                -- _, predictions = torch.max(outputs, 1)
                local _, predictions = tide.max(outputs_, 2)
                -- for label, prediction in zip(labels, predictions):
                for k, label in ipairs(labels_:unbind()) do
                    local prediction = predictions[k]
                    -- if label == prediction:
                    -- GAP: Lua's == on two 0-d tensors is identity, always false here: :eq
                    assert.is_false(label == prediction)
                    if label:eq(prediction):item() then
                        -- correct_pred[classes[label]] += 1
                        correct_pred[classes[label:item()]] = correct_pred[classes[label:item()]] + 1
                    end
                    -- total_pred[classes[label]] += 1
                    total_pred[classes[label:item()]] = total_pred[classes[label:item()]] + 1
                end
            end
        end)

        -- for classname, correct_count in correct_pred.items():
        local counted, right = 0, 0
        for _, classname in ipairs(classes) do
            local correct_count = correct_pred[classname]
            if total_pred[classname] > 0 then
                -- accuracy = 100 * float(correct_count) / total_pred[classname]
                local accuracy = 100 * correct_count / total_pred[classname]
                -- print(f'Accuracy for class: {classname:5s} is {accuracy:.1f} %')
                local row = string.format("Accuracy for class: %-5s is %.1f %%", classname, accuracy)
                assert.is_truthy(row:find(classname, 1, true))
            end
            counted = counted + total_pred[classname]
            right = right + correct_count
        end
        assert.are.equal(total, counted)
        assert.are.equal(correct, right)
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. nn_tutorial.py: What is torch.nn really?
---------------------------------------------------------------------------------------------
describe("nn_tutorial.py", function()
    -- ((x_train, y_train), (x_valid, y_valid), _) = pickle.load(f, encoding="latin-1"):
    -- flattened 28x28 images in [0, 1] whose class lights a band of 78 pixels, labels 1..10
    local function fake_mnist(n)
        local y = tide.randint(1, 11, { n })
        local x = tide.rand(n, 784) * 0.2
        for i = 1, n do
            local c = y[i]:item()
            x[{ i, { (c - 1) * 78 + 1, c * 78 } }] = 1.0
        end
        return x, y
    end

    local function log_softmax(x)
        -- return x - x.exp().sum(-1).log().unsqueeze(-1)
        return x - x:exp():sum(-1):log():unsqueeze(-1)
    end

    -- def nll(input, target):
    local function nll(input, target)
        -- return -input[range(target.shape[0]), target].mean()
        -- GAP: a Lua list in an index is a range ({first, last}), so the rows 0..n-1 that
        -- Python's range gives are an index tensor: tide.arange(1, n + 1)
        return -input[{ tide.arange(1, target.shape[1] + 1), target }]:mean()
    end

    -- def accuracy(out, yb):
    local function accuracy(out, yb)
        -- preds = torch.argmax(out, dim=1)
        local preds = tide.argmax(out, { dim = 2 })
        -- return (preds == yb).float().mean()
        return preds:eq(yb):float():mean()
    end

    it("from scratch: weights.requires_grad_(), log_softmax and nll by hand, the manual " ..
        "SGD loop; then F.cross_entropy (values against PyTorch)", function()
        -- the reference script's fixed data: x_train = fill((n, 784), 0.37, 0.1).abs(),
        -- y_train = (torch.arange(n) * 7) % 10
        local n_rows = 100
        local x_train = fill({ n_rows, 784 }, 0.37, 0.1):abs()
        local y_train = tide.arange(n_rows) * 7 % 10 + 1
        -- n, c = x_train.shape
        -- GAP: no tuple assignment from a Size: unpack
        local n, c = unpack(x_train.shape)
        assert.are.equal(100, n)
        assert.are.equal(784, c)
        -- print(y_train.min(), y_train.max())
        assert.are.equal(1, y_train:min():item())
        assert.are.equal(10, y_train:max():item())

        -- weights = torch.randn(784, 10) / math.sqrt(784)
        local weights = tide.randn(784, 10) / math.sqrt(784)
        -- (fixed for the reference values: fill((784, 10), 0.11, 1.0) / math.sqrt(784))
        weights = fill({ 784, 10 }, 0.11, 1.0) / math.sqrt(784)
        -- weights.requires_grad_()
        weights:requires_grad_()
        -- bias = torch.zeros(10, requires_grad=True)
        local bias = tide.zeros(10, { requires_grad = true })
        assert.is_true(weights.requires_grad and weights.is_leaf)

        -- def model(xb):
        local function model(xb)
            -- return log_softmax(xb @ weights + bias)
            -- GAP: Lua has no @ operator: xb:matmul(weights)
            return log_softmax(xb:matmul(weights) + bias)
        end

        -- bs = 64  # batch size
        local bs = 64
        -- xb = x_train[0:bs]  # a mini-batch from x
        local xb = x_train[{ { 1, bs } }]
        -- preds = model(xb)  # predictions
        local preds = model(xb)
        -- print(preds[0], preds.shape)
        assert.are.same({ 64, 10 }, preds.shape)
        assert.is_truthy(preds.grad_fn)

        -- loss_func = nll
        local loss_func = nll
        -- yb = y_train[0:bs]
        local yb = y_train[{ { 1, bs } }]
        -- print(loss_func(preds, yb)); print(accuracy(preds, yb))
        -- torch: 2.302546501159668, 0.078125
        assert_close(2.302546501159668, loss_func(preds, yb):item(), 1e-5, "first loss")
        assert_close(0.078125, accuracy(preds, yb):item(), 1e-6, "first accuracy")
        -- the hand-written pair is F.nll_loss(F.log_softmax(...))
        assert_close(F.nll_loss(F.log_softmax(xb:matmul(weights) + bias, 2), yb):item(),
            loss_func(preds, yb):item(), 1e-5, "nll")

        -- lr = 0.5  # learning rate
        local lr = 0.5
        -- epochs = 2  # how many epochs to train for
        local epochs = 2

        -- for epoch in range(epochs):
        for _ = 1, epochs do
            -- for i in range((n - 1) // bs + 1):
            for i = 0, math.floor((n - 1) / bs) do
                -- start_i = i * bs
                local start_i = i * bs
                -- end_i = start_i + bs
                local end_i = start_i + bs
                -- xb = x_train[start_i:end_i]
                -- GAP: Python's slice stops at the end of the tensor (the last batch here has
                -- 36 rows); tide's range {first, last} past the end raises, so last is clamped
                xb = x_train[{ { start_i + 1, math.min(end_i, n) } }]
                -- yb = y_train[start_i:end_i]
                yb = y_train[{ { start_i + 1, math.min(end_i, n) } }]
                local pred = model(xb)
                local loss = loss_func(pred, yb)

                loss:backward()
                -- with torch.no_grad():
                tide.no_grad(function()
                    -- weights -= weights.grad * lr
                    -- GAP: Lua has no -=; sub_ is what -= does to a tensor
                    weights:sub_(weights.grad * lr)
                    -- bias -= bias.grad * lr
                    bias:sub_(bias.grad * lr)
                    -- weights.grad.zero_()
                    weights.grad:zero_()
                    -- bias.grad.zero_()
                    bias.grad:zero_()
                end)
            end
        end
        assert.are.equal(36, xb:size(1))

        -- print(loss_func(model(xb), yb), accuracy(model(xb), yb))
        -- torch: 2.295602560043335, 0.1666666716337204
        assert_close(2.295602560043335, loss_func(model(xb), yb):item(), 1e-5, "loss after")
        assert_close(0.1666666716337204, accuracy(model(xb), yb):item(), 1e-6, "accuracy after")

        -- loss_func = F.cross_entropy
        loss_func = F.cross_entropy
        -- def model(xb): return xb @ weights + bias
        model = function(xb_)
            return xb_:matmul(weights) + bias
        end
        -- print(loss_func(model(xb), yb), accuracy(model(xb), yb)): the same as before
        -- torch: 2.2956020832061768
        assert_close(2.2956020832061768, loss_func(model(xb), yb):item(), 1e-5, "cross_entropy")
        assert_close(0.1666666716337204, accuracy(model(xb), yb):item(), 1e-6, "accuracy")
    end)

    it("nn.Module with nn.Parameter, nn.Linear, optim, TensorDataset, DataLoader, " ..
        "validation", function()
        tide.manual_seed(7)
        local x_train, y_train = fake_mnist(160)
        local x_valid, y_valid = fake_mnist(64)
        local n = x_train:size(1)
        local bs, lr, epochs = 64, 0.5, 2
        local loss_func = F.cross_entropy

        -- class Mnist_Logistic(nn.Module):
        local Mnist_Logistic = nn.Module:extend("Mnist_Logistic")
        function Mnist_Logistic:init()
            -- self.weights = nn.Parameter(torch.randn(784, 10) / math.sqrt(784))
            self.weights = nn.Parameter(tide.randn(784, 10) / math.sqrt(784))
            -- self.bias = nn.Parameter(torch.zeros(10))
            self.bias = nn.Parameter(tide.zeros(10))
        end

        function Mnist_Logistic:forward(xb)
            -- return xb @ self.weights + self.bias
            return xb:matmul(self.weights) + self.bias
        end

        -- model = Mnist_Logistic()
        local model = Mnist_Logistic()
        assert.are.equal(2, #model:parameters())
        local xb, yb = x_train[{ { 1, bs } }], y_train[{ { 1, bs } }]
        -- print(loss_func(model(xb), yb))
        local before = loss_func(model(xb), yb):item()
        assert_finite(before)

        -- def fit():
        local function fit()
            for _ = 1, epochs do
                for i = 0, math.floor((n - 1) / bs) do
                    local start_i = i * bs
                    local end_i = start_i + bs
                    xb = x_train[{ { start_i + 1, math.min(end_i, n) } }]
                    yb = y_train[{ { start_i + 1, math.min(end_i, n) } }]
                    local pred = model(xb)
                    local loss = loss_func(pred, yb)

                    loss:backward()
                    -- with torch.no_grad():
                    tide.no_grad(function()
                        -- for p in model.parameters(): p -= p.grad * lr
                        for _, p in ipairs(model:parameters()) do
                            p:sub_(p.grad * lr)
                        end
                        -- model.zero_grad()
                        model:zero_grad()
                    end)
                end
            end
        end

        fit()
        -- print(loss_func(model(xb), yb))
        local after = loss_func(model(xb), yb):item()
        assert.is_true(after < before, "Mnist_Logistic: " .. before .. " -> " .. after)

        -- class Mnist_Logistic(nn.Module): (with nn.Linear)
        Mnist_Logistic = nn.Module:extend("Mnist_Logistic")
        function Mnist_Logistic:init()
            -- self.lin = nn.Linear(784, 10)
            self.lin = nn.Linear(784, 10)
        end

        function Mnist_Logistic:forward(xb_)
            return self.lin(xb_)
        end

        model = Mnist_Logistic()
        xb, yb = x_train[{ { 1, bs } }], y_train[{ { 1, bs } }]
        before = loss_func(model(xb), yb):item()
        fit()
        after = loss_func(model(xb), yb):item()
        assert.is_true(after < before, "nn.Linear: " .. before .. " -> " .. after)

        -- def get_model():
        local function get_model()
            local model_ = Mnist_Logistic()
            -- return model, optim.SGD(model.parameters(), lr=lr)
            return model_, optim.SGD(model_:parameters(), { lr = lr })
        end

        -- model, opt = get_model()
        local opt
        model, opt = get_model()
        xb, yb = x_train[{ { 1, bs } }], y_train[{ { 1, bs } }]
        before = loss_func(model(xb), yb):item()
        for _ = 1, epochs do
            for i = 0, math.floor((n - 1) / bs) do
                local start_i = i * bs
                local end_i = start_i + bs
                xb = x_train[{ { start_i + 1, math.min(end_i, n) } }]
                yb = y_train[{ { start_i + 1, math.min(end_i, n) } }]
                local pred = model(xb)
                local loss = loss_func(pred, yb)

                loss:backward()
                -- opt.step()
                opt:step()
                -- opt.zero_grad()
                opt:zero_grad()
            end
        end
        after = loss_func(model(xb), yb):item()
        assert.is_true(after < before, "optim: " .. before .. " -> " .. after)

        -- train_ds = TensorDataset(x_train, y_train)
        local train_ds = tide.data.TensorDataset(x_train, y_train)
        model, opt = get_model()
        for _ = 1, epochs do
            for i = 0, math.floor((n - 1) / bs) do
                -- xb, yb = train_ds[i * bs: i * bs + bs]
                -- GAP: the slice is a Lua list (unpack), and its end is clamped as above
                xb, yb = unpack(train_ds[{ i * bs + 1, math.min(i * bs + bs, n) }])
                local pred = model(xb)
                local loss = loss_func(pred, yb)

                loss:backward()
                opt:step()
                opt:zero_grad()
            end
        end
        assert.are.same({ 32, 784 }, xb.shape)
        assert.are.same({ 32 }, yb.shape)
        assert.is_true(loss_func(model(xb), yb):item() < before)

        -- train_dl = DataLoader(train_ds, batch_size=bs)
        local train_dl = tide.data.DataLoader(train_ds, { batch_size = bs })
        model, opt = get_model()
        for _ = 1, epochs do
            -- for xb, yb in train_dl:
            for xb_, yb_ in train_dl:iter() do
                local pred = model(xb_)
                local loss = loss_func(pred, yb_)

                loss:backward()
                opt:step()
                opt:zero_grad()
            end
        end
        assert.is_true(loss_func(model(xb), yb):item() < before)

        -- train_dl = DataLoader(train_ds, batch_size=bs, shuffle=True)
        train_dl = tide.data.DataLoader(train_ds, { batch_size = bs, shuffle = true })
        -- valid_ds = TensorDataset(x_valid, y_valid)
        local valid_ds = tide.data.TensorDataset(x_valid, y_valid)
        -- valid_dl = DataLoader(valid_ds, batch_size=bs * 2)
        local valid_dl = tide.data.DataLoader(valid_ds, { batch_size = bs * 2 })

        model, opt = get_model()
        local valid = {}
        for epoch = 0, epochs - 1 do
            -- model.train()
            model:train()
            for xb_, yb_ in train_dl:iter() do
                local pred = model(xb_)
                local loss = loss_func(pred, yb_)

                loss:backward()
                opt:step()
                opt:zero_grad()
            end

            -- model.eval()
            model:eval()
            local valid_loss
            -- with torch.no_grad():
            tide.no_grad(function()
                -- valid_loss = sum(loss_func(model(xb), yb) for xb, yb in valid_dl)
                valid_loss = 0
                for xb_, yb_ in valid_dl:iter() do
                    valid_loss = valid_loss + loss_func(model(xb_), yb_)
                end
            end)

            -- print(epoch, valid_loss / len(valid_dl))
            valid[epoch + 1] = (valid_loss / valid_dl:len()):item()
            assert.is_nil(valid_loss.grad_fn)
        end
        assert_finite(valid[1])
        assert.is_true(valid[2] < valid[1], "valid loss " .. valid[1] .. " -> " .. valid[2])
    end)

    -- def loss_batch(model, loss_func, xb, yb, opt=None):
    local function loss_batch(model, loss_func, xb, yb, opt)
        local loss = loss_func(model(xb), yb)

        -- if opt is not None:
        if opt ~= nil then
            loss:backward()
            opt:step()
            opt:zero_grad()
        end

        -- return loss.item(), len(xb)
        return loss:item(), #xb
    end

    -- def fit(epochs, model, loss_func, opt, train_dl, valid_dl):
    local function fit(epochs, model, loss_func, opt, train_dl, valid_dl)
        local printed = {}
        for epoch = 0, epochs - 1 do
            model:train()
            for xb, yb in train_dl:iter() do
                loss_batch(model, loss_func, xb, yb, opt)
            end

            model:eval()
            local losses, nums
            tide.no_grad(function()
                -- losses, nums = zip(
                --     *[loss_batch(model, loss_func, xb, yb) for xb, yb in valid_dl]
                -- )
                -- GAP: no zip(*...): the loop fills both lists
                losses, nums = {}, {}
                for xb, yb in valid_dl:iter() do
                    losses[#losses + 1], nums[#nums + 1] = loss_batch(model, loss_func, xb, yb)
                end
            end)
            -- val_loss = np.sum(np.multiply(losses, nums)) / np.sum(nums)
            -- (no NumPy: tide's tensors of the two lists)
            local val_loss = tide.sum(tide.mul(tide.tensor(losses), tide.tensor(nums))) /
                tide.sum(tide.tensor(nums))

            -- print(epoch, val_loss)
            printed[#printed + 1] = val_loss:item()
        end
        return printed
    end

    -- def get_data(train_ds, valid_ds, bs):
    local function get_data(train_ds, valid_ds, bs)
        return
            tide.data.DataLoader(train_ds, { batch_size = bs, shuffle = true }),
            tide.data.DataLoader(valid_ds, { batch_size = bs * 2 })
    end

    -- class Mnist_CNN(nn.Module):
    local Mnist_CNN = nn.Module:extend("Mnist_CNN")
    function Mnist_CNN:init()
        -- self.conv1 = nn.Conv2d(1, 16, kernel_size=3, stride=2, padding=1)
        self.conv1 = nn.Conv2d(1, 16, { kernel_size = 3, stride = 2, padding = 1 })
        self.conv2 = nn.Conv2d(16, 16, { kernel_size = 3, stride = 2, padding = 1 })
        self.conv3 = nn.Conv2d(16, 10, { kernel_size = 3, stride = 2, padding = 1 })
    end

    function Mnist_CNN:forward(xb)
        -- xb = xb.view(-1, 1, 28, 28)
        xb = xb:view(-1, 1, 28, 28)
        xb = F.relu(self.conv1(xb))
        xb = F.relu(self.conv2(xb))
        xb = F.relu(self.conv3(xb))
        -- xb = F.avg_pool2d(xb, 4)
        xb = F.avg_pool2d(xb, 4)
        -- return xb.view(-1, xb.size(1))
        return xb:view(-1, xb:size(2))
    end

    -- class Lambda(nn.Module):
    local Lambda = nn.Module:extend("Lambda")
    -- def __init__(self, func):
    function Lambda:init(func)
        -- self.func = func
        self.func = func
    end

    -- def forward(self, x):
    function Lambda:forward(x)
        -- return self.func(x)
        return self.func(x)
    end

    it("Mnist_CNN's forward matches PyTorch on fixed weights", function()
        local cnn = Mnist_CNN()
        set_fill(cnn)
        local x = fill({ 100, 784 }, 0.37, 0.1):abs()[{ { 1, 2 } }]
        local out = cnn(x)
        assert.are.same({ 2, 10 }, out.shape)
        -- torch: cnn(x_train[0:2])[0] and [1].sum()
        assert_list_close({ 0.0043306197039783, 0.3632807731628418, 0.3137482702732086,
            0.005346756428480148, 0.08874344080686569, 0.0, 0.005481351166963577,
            0.36921027302742004, 0.17420105636119843, 0.22181104123592377 }, out[1]:totable(), 1e-4,
            "cnn out")
        assert_close(1.5466551780700684, out[2]:sum():item(), 1e-4, "cnn out[2] sum")
        -- torch: F.cross_entropy(out, y_train[0:2]) with labels 0, 7
        assert_close(2.282309055328369, F.cross_entropy(out, tide.tensor({ 1, 8 })):item(), 1e-5,
            "cnn loss")
    end)

    it("fit/get_data with loss_batch; Mnist_CNN; nn.Sequential with Lambda layers; " ..
        "WrappedDataLoader and AdaptiveAvgPool2d", function()
        tide.manual_seed(8)
        local x_train, y_train = fake_mnist(160)
        local x_valid, y_valid = fake_mnist(64)
        local bs, lr, epochs = 64, 0.5, 2
        local loss_func = F.cross_entropy
        local train_ds = tide.data.TensorDataset(x_train, y_train)
        local valid_ds = tide.data.TensorDataset(x_valid, y_valid)

        local Mnist_Logistic = nn.Module:extend("Mnist_Logistic")
        function Mnist_Logistic:init()
            self.lin = nn.Linear(784, 10)
        end

        function Mnist_Logistic:forward(xb)
            return self.lin(xb)
        end

        local function get_model()
            local model = Mnist_Logistic()
            return model, optim.SGD(model:parameters(), { lr = lr })
        end

        -- train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
        local train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
        -- model, opt = get_model()
        local model, opt = get_model()
        -- fit(epochs, model, loss_func, opt, train_dl, valid_dl)
        local printed = fit(epochs, model, loss_func, opt, train_dl, valid_dl)
        assert.are.equal(2, #printed)
        assert.is_true(printed[2] < printed[1], "fit: " .. printed[1] .. " -> " .. printed[2])
        -- the weighted mean over one batch of 64 is that batch's loss
        local direct = tide.no_grad(function()
            return loss_func(model(x_valid), y_valid):item()
        end)
        assert_close(direct, printed[2], 1e-5, "val_loss")

        -- lr = 0.1
        lr = 0.1
        -- model = Mnist_CNN()
        model = Mnist_CNN()
        -- opt = optim.SGD(model.parameters(), lr=lr, momentum=0.9)
        opt = optim.SGD(model:parameters(), { lr = lr, momentum = 0.9 })
        printed = fit(epochs, model, loss_func, opt, train_dl, valid_dl)
        assert_finite(printed[1], "Mnist_CNN val loss")
        assert_finite(printed[2], "Mnist_CNN val loss")

        -- def preprocess(x):
        local function preprocess(x)
            -- return x.view(-1, 1, 28, 28)
            return x:view(-1, 1, 28, 28)
        end

        -- model = nn.Sequential(
        model = nn.Sequential(
            Lambda(preprocess),
            nn.Conv2d(1, 16, { kernel_size = 3, stride = 2, padding = 1 }),
            nn.ReLU(),
            nn.Conv2d(16, 16, { kernel_size = 3, stride = 2, padding = 1 }),
            nn.ReLU(),
            nn.Conv2d(16, 10, { kernel_size = 3, stride = 2, padding = 1 }),
            nn.ReLU(),
            nn.AvgPool2d(4),
            -- Lambda(lambda x: x.view(x.size(0), -1)),
            Lambda(function(x) return x:view(x:size(1), -1) end)
        )
        assert.are.same({ 5, 10 }, model(x_train[{ { 1, 5 } }]).shape)
        -- the Lambda layers hold no parameters: the three convs' six
        assert.are.equal(6, #model:parameters())

        opt = optim.SGD(model:parameters(), { lr = lr, momentum = 0.9 })
        printed = fit(epochs, model, loss_func, opt, train_dl, valid_dl)
        assert_finite(printed[2], "Sequential val loss")

        -- def preprocess(x, y):
        local function preprocess2(x, y)
            -- return x.view(-1, 1, 28, 28), y
            return x:view(-1, 1, 28, 28), y
        end

        -- class WrappedDataLoader:
        local WrappedDataLoader = {}
        WrappedDataLoader.__index = WrappedDataLoader
        setmetatable(WrappedDataLoader, {
            -- def __init__(self, dl, func):
            __call = function(cls, dl, func)
                return setmetatable({ dl = dl, func = func }, cls)
            end,
        })
        -- def __len__(self):
        function WrappedDataLoader:len()
            -- return len(self.dl)
            return self.dl:len()
        end

        -- def __iter__(self):
        -- GAP: a Python generator is a coroutine here; tide's loaders are walked with :iter()
        function WrappedDataLoader:iter()
            return coroutine.wrap(function()
                -- batches = iter(self.dl)
                -- for b in batches:
                for xb, yb in self.dl:iter() do
                    -- yield (self.func(*b))
                    coroutine.yield(self.func(xb, yb))
                end
            end)
        end

        -- train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
        train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
        -- train_dl = WrappedDataLoader(train_dl, preprocess)
        train_dl = WrappedDataLoader(train_dl, preprocess2)
        valid_dl = WrappedDataLoader(valid_dl, preprocess2)
        assert.are.equal(3, train_dl:len())
        for xb in train_dl:iter() do
            assert.are.same({ 64, 1, 28, 28 }, xb.shape)
            break
        end

        -- model = nn.Sequential(..., nn.AdaptiveAvgPool2d(1), Lambda(lambda x: x.view(x.size(0), -1)))
        model = nn.Sequential(
            nn.Conv2d(1, 16, { kernel_size = 3, stride = 2, padding = 1 }),
            nn.ReLU(),
            nn.Conv2d(16, 16, { kernel_size = 3, stride = 2, padding = 1 }),
            nn.ReLU(),
            nn.Conv2d(16, 10, { kernel_size = 3, stride = 2, padding = 1 }),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
            Lambda(function(x) return x:view(x:size(1), -1) end)
        )
        -- any input size: 20x20 images go through as well
        assert.are.same({ 2, 10 }, model(tide.rand(2, 1, 20, 20)).shape)

        opt = optim.SGD(model:parameters(), { lr = lr, momentum = 0.9 })
        printed = fit(epochs, model, loss_func, opt, train_dl, valid_dl)
        assert_finite(printed[2], "AdaptiveAvgPool2d val loss")

        -- print(torch.cuda.is_available())
        -- dev = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
        local dev = tide.cuda.is_available() and tide.device("cuda") or tide.device("cpu")
        -- (the spec stays on the CPU)
        dev = tide.device("cpu")

        -- def preprocess(x, y):
        local function preprocess3(x, y)
            -- return x.view(-1, 1, 28, 28).to(dev), y.to(dev)
            return x:view(-1, 1, 28, 28):to(dev), y:to(dev)
        end

        train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
        train_dl = WrappedDataLoader(train_dl, preprocess3)
        valid_dl = WrappedDataLoader(valid_dl, preprocess3)

        -- model.to(dev)
        model:to(dev)
        opt = optim.SGD(model:parameters(), { lr = lr, momentum = 0.9 })
        -- fit(epochs, model, loss_func, opt, train_dl, valid_dl)
        local more = fit(epochs, model, loss_func, opt, train_dl, valid_dl)
        assert_finite(more[2], "on dev val loss")
    end)
end)
