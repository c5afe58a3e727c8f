-- ported_scripts22_spec.lua — yunjey/pytorch-tutorial ported line for line: 01-basics (pytorch_basics,
-- linear_regression, logistic_regression, feedforward_neural_network), 02-intermediate
-- (convolutional_neural_network, deep_residual_network, recurrent_neural_network,
-- bidirectional_recurrent_neural_network, language_model with data_utils' Dictionary/Corpus) and
-- 03-advanced (generative_adversarial_network, variational_autoencoder, image_captioning/model.py).
-- MNIST/CIFAR are random 1x8x8 / 3x16x16 images, the pretrained resnets small conv models. The
-- Python line stands above each Lua line that differs from it; `-- GAP:` marks a form tide
-- cannot write as Python does. Dims, indices and class targets are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- datasets.MNIST(..., transform=transforms.ToTensor()): n random 1x8x8 images in [0, 1], labels 1..10
local function mnist(n)
    return tide.data.TensorDataset(tide.rand(n, 1, 8, 8), tide.randint(1, 11, { n }))
end

-- the scripts' train loop: for epoch ...: for i, (images, labels) in enumerate(train_loader): ...
-- prepare(images) is the script's reshape/.to(device); returns the losses
local function train(model, criterion, optimizer, train_loader, num_epochs, prepare)
    local losses = {}
    -- total_step = len(train_loader)
    local total_step = train_loader:len()
    for epoch = 0, num_epochs - 1 do
        -- for i, (images, labels) in enumerate(train_loader):
        local i = 0
        for images, labels in train_loader:iter() do
            images = prepare(images)
            -- Forward pass
            local outputs = model(images)
            local loss = criterion(outputs, labels)
            -- Backward and optimize
            optimizer:zero_grad()
            loss:backward()
            optimizer:step()
            -- if (i+1) % 100 == 0: print ('Epoch [{}/{}], Step [{}/{}], Loss: {:.4f}'.format(...))
            local _ = string.format("Epoch [%d/%d], Step [%d/%d], Loss: %.4f", epoch + 1, num_epochs,
                i + 1, total_step, loss:item())
            losses[#losses + 1] = loss:item()
            i = i + 1
        end
    end
    return losses
end

-- the scripts' test: with torch.no_grad(): ... correct += (predicted == labels).sum().item()
local function test(model, test_loader, prepare)
    local correct, total = 0, 0
    tide.no_grad(function()
        for images, labels in test_loader:iter() do
            images = prepare(images)
            local outputs = model(images)
            -- _, predicted = torch.max(outputs.data, 1)
            local _, predicted = tide.max(outputs.data, 2)
            -- total += labels.size(0)
            total = total + labels:size(1)
            -- correct += (predicted == labels).sum().item()
            -- GAP: Lua's == on two tensors is identity; elementwise is :eq
            correct = correct + predicted:eq(labels):sum():item()
        end
    end)
    -- print('Accuracy of the model on the 10000 test images: {} %'.format(100 * correct / total))
    return 100 * correct / total
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

-- the loss of the last epoch's batches is below the first's
local function assert_learns(losses, per_epoch)
    local first, last = 0, 0
    for k = 1, per_epoch do
        assert_finite(losses[k], "loss")
        first = first + losses[k]
        last = last + losses[#losses - per_epoch + k]
    end
    assert.is_true(last < first, ("loss %g -> %g"):format(first, last))
end

---------------------------------------------------------------------------------------------
-- 1. 01-basics
---------------------------------------------------------------------------------------------
describe("01-basics/pytorch_basics/main.py", function()
    it("autograd examples 1 and 2 against PyTorch's numbers", function()
        -- x = torch.tensor(1., requires_grad=True)
        local x = tide.tensor(1., { requires_grad = true })
        local w = tide.tensor(2., { requires_grad = true })
        local b = tide.tensor(3., { requires_grad = true })
        -- y = w * x + b    # y = 2 * x + 3
        local y = w * x + b
        y:backward()
        -- print(x.grad)    # x.grad = 2 (w.grad = 1, b.grad = 1)
        assert.are.same({ 2, 1, 1 }, { x.grad:item(), w.grad:item(), b.grad:item() })

        -- x = torch.randn(10, 3); y = torch.randn(10, 2) (fixed numbers here, PyTorch's run on them)
        x = tide.arange(30.):reshape(10, 3) / 10 - 1
        y = tide.arange(20.):reshape(10, 2) / 20
        -- linear = nn.Linear(3, 2)
        local linear = nn.Linear(3, 2)
        tide.no_grad(function()
            linear.weight:copy_(tide.tensor({ { 0.1, -0.2, 0.3 }, { 0.4, 0.5, -0.6 } }))
            linear.bias:copy_(tide.tensor({ 0.05, -0.05 }))
        end)
        -- print ('w: ', linear.weight)
        local _ = tostring(linear.weight) .. tostring(linear.bias)
        -- criterion = nn.MSELoss()
        local criterion = nn.MSELoss()
        -- optimizer = torch.optim.SGD(linear.parameters(), lr=0.01)
        local optimizer = tide.optim.SGD(linear:parameters(), { lr = 0.01 })
        local pred = linear(x)
        local loss = criterion(pred, y)
        -- print('loss: ', loss.item())
        assert_close_list({ 0.1816750168800354 }, { loss:item() }, 1e-5, "loss")
        loss:backward()
        -- print ('dL/dw: ', linear.weight.grad)
        assert_close_list({ -0.2005, -0.2295, -0.2585, -0.205, -0.2565, -0.308 },
            linear.weight.grad:view(-1):totable(), 1e-5, "dL/dw")
        assert_close_list({ -0.29, -0.515 }, linear.bias.grad:totable(), 1e-5, "dL/db")
        -- optimizer.step()
        optimizer:step()
        -- pred = linear(x); loss = criterion(pred, y)
        pred = linear(x)
        loss = criterion(pred, y)
        -- print('loss after 1 step optimization: ', loss.item())
        assert_close_list({ 0.17465387284755707 }, { loss:item() }, 1e-5, "loss after 1 step")
        -- the low-level form: linear.weight.data.sub_(0.01 * linear.weight.grad.data)
        linear.weight.data:sub_(0.01 * linear.weight.grad.data)
        linear.bias.data:sub_(0.01 * linear.bias.grad.data)
        assert.is_true(criterion(linear(x), y):item() < 0.17465387284755707)
    end)

    it("numpy conversion, the input pipeline, a CustomDataset, the finetuning model, save/load",
        function()
            tide.manual_seed(1)
            -- x = np.array([[1, 2], [3, 4]]); y = torch.from_numpy(x); z = y.numpy()
            -- (tide has no numpy: a Lua table is the array; tide.tensor and :totable convert)
            local x = { { 1, 2 }, { 3, 4 } }
            local y = tide.tensor(x)
            local z = y:totable()
            assert.are.same(x, z)
            assert.are.equal(tide.int64, y.dtype)

            -- train_dataset = torchvision.datasets.CIFAR10(...): 8 random 3x16x16 images
            local train_dataset = tide.data.TensorDataset(tide.rand(8, 3, 16, 16),
                tide.randint(1, 11, { 8 }))
            -- image, label = train_dataset[0]
            -- GAP: Lua's a, b = t[k] takes one value: the sample is the pair {image, label}
            local image, label = unpack(train_dataset[1])
            -- print (image.size())
            assert.are.same({ 3, 16, 16 }, image:size())
            assert.is_true(label:item() >= 1 and label:item() <= 10)
            -- train_loader = torch.utils.data.DataLoader(dataset=train_dataset, batch_size=64, shuffle=True)
            local train_loader = tide.data.DataLoader(train_dataset, { batch_size = 4, shuffle = true })
            -- data_iter = iter(train_loader)
            local data_iter = train_loader:iter()
            -- images, labels = data_iter.next()
            local images, labels = data_iter()
            assert.are.same({ 4, 3, 16, 16 }, images:size())
            assert.are.same({ 4 }, labels:size())
            -- for images, labels in train_loader: pass
            local n = 0
            for _ in train_loader:iter() do
                n = n + 1
            end
            assert.are.equal(2, n)

            -- class CustomDataset(torch.utils.data.Dataset):
            local CustomDataset = tide.data.Dataset:extend("CustomDataset")
            function CustomDataset:init(n_samples)
                -- 1. Initialize file paths or a list of file names. (n random samples here)
                self.n = n_samples or 0
            end

            function CustomDataset:__getitem__(index)
                -- 3. Return a data pair (e.g. image and label).
                return tide.full({ 3, 16, 16 }, index), index
            end

            function CustomDataset:__len__()
                -- You should change 0 to the total size of your dataset.
                return self.n
            end

            -- custom_dataset = CustomDataset()  (its __len__ returns 0)
            -- train_loader = torch.utils.data.DataLoader(dataset=custom_dataset, batch_size=64, shuffle=True)
            -- PyTorch 1.13 raises here: RandomSampler refuses num_samples=0; so does tide
            local ok, err = pcall(tide.data.DataLoader, CustomDataset(), { batch_size = 64, shuffle = true })
            assert.is_false(ok)
            assert.matches("tide: DataLoader: shuffle = true needs samples to draw, but the " ..
                "dataset's len() is 0; give the dataset samples or leave shuffle out", tostring(err),
                1, true)
            assert.matches("leave shuffle out", tostring(err), 1, true)
            -- without shuffle an empty loader is empty (PyTorch's SequentialSampler)
            assert.are.equal(0, tide.data.DataLoader(CustomDataset(), { batch_size = 64 }):len())
            -- with the TODO done (5 samples)
            local custom_dataset = CustomDataset(5)
            train_loader = tide.data.DataLoader(custom_dataset, { batch_size = 64, shuffle = true })
            local imgs, idx = train_loader:iter()()
            assert.are.same({ 5, 3, 16, 16 }, imgs:size())
            assert.are.equal(15, idx:sum():item())

            -- resnet = torchvision.models.resnet18(pretrained=True): a small conv model with
            -- resnet's last children (avgpool, fc)
            local ResNetLike = nn.Module:extend("ResNetLike")
            function ResNetLike:init()
                self.conv1 = nn.Conv2d(3, 4, 3, { padding = 1 })
                self.relu = nn.ReLU()
                self.avgpool = nn.AdaptiveAvgPool2d({ 1, 1 })
                self.fc = nn.Linear(4, 1000)
            end

            function ResNetLike:forward(t)
                return self.fc(tide.flatten(self.avgpool(self.relu(self.conv1(t))), 2))
            end

            local resnet = ResNetLike()
            -- for param in resnet.parameters(): param.requires_grad = False
            for _, param in ipairs(resnet:parameters()) do
                param.requires_grad = false
            end
            -- resnet.fc = nn.Linear(resnet.fc.in_features, 100)  # 100 is an example.
            resnet.fc = nn.Linear(resnet.fc.in_features, 100)
            -- images = torch.randn(64, 3, 224, 224)
            images = tide.randn(2, 3, 16, 16)
            local outputs = resnet(images)
            -- print (outputs.size())     # (64, 100)
            assert.are.same({ 2, 100 }, outputs:size())
            assert.is_true(resnet.fc.weight.requires_grad)
            assert.is_false(resnet.conv1.weight.requires_grad)

            -- torch.save(resnet, 'model.ckpt')
            local path = os.tmpname()
            tide.save(resnet, path)
            -- model = torch.load('model.ckpt')
            local model = tide.load(path)
            assert.are.equal(ResNetLike, getmetatable(model))
            assert.are.same(outputs:totable(), model(images):totable())
            assert.is_false(model.conv1.weight.requires_grad)
            -- torch.save(resnet.state_dict(), 'params.ckpt')
            tide.save(resnet:state_dict(), path)
            -- resnet.load_state_dict(torch.load('params.ckpt'))
            local other = ResNetLike()
            other.fc = nn.Linear(other.fc.in_features, 100)
            other:load_state_dict(tide.load(path))
            os.remove(path)
            assert.is_true(other(images):equal(outputs))
        end)
end)

describe("01-basics/linear_regression/main.py", function()
    it("nn.Linear(1, 1), MSELoss, SGD over the toy dataset: PyTorch's losses", function()
        -- input_size = 1; output_size = 1; num_epochs = 60; learning_rate = 0.001
        local input_size, output_size, num_epochs, learning_rate = 1, 1, 60, 0.001
        -- x_train = np.array([[3.3], [4.4], ...], dtype=np.float32)
        local x_train = { { 3.3 }, { 4.4 }, { 5.5 }, { 6.71 }, { 6.93 }, { 4.168 }, { 9.779 },
            { 6.182 }, { 7.59 }, { 2.167 }, { 7.042 }, { 10.791 }, { 5.313 }, { 7.997 }, { 3.1 } }
        local y_train = { { 1.7 }, { 2.76 }, { 2.09 }, { 3.19 }, { 1.694 }, { 1.573 }, { 3.366 },
            { 2.596 }, { 2.53 }, { 1.221 }, { 2.827 }, { 3.465 }, { 1.65 }, { 2.904 }, { 1.3 } }
        -- model = nn.Linear(input_size, output_size)
        local model = nn.Linear(input_size, output_size)
        -- (PyTorch's run fills weight 0.5, bias 0.1 under no_grad for comparable numbers)
        tide.no_grad(function()
            model.weight:fill_(0.5)
            model.bias:fill_(0.1)
        end)
        local criterion = nn.MSELoss()
        -- optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)
        local optimizer = tide.optim.SGD(model:parameters(), { lr = learning_rate })
        local printed = {}
        for epoch = 0, num_epochs - 1 do
            -- inputs = torch.from_numpy(x_train)
            local inputs = tide.tensor(x_train, { dtype = tide.float32 })
            local targets = tide.tensor(y_train, { dtype = tide.float32 })
            local outputs = model(inputs)
            local loss = criterion(outputs, targets)
            optimizer:zero_grad()
            loss:backward()
            optimizer:step()
            -- if (epoch+1) % 5 == 0:
            if (epoch + 1) % 5 == 0 then
                printed[#printed + 1] = loss:item()
            end
        end
        assert_close_list({ 0.6708112359046936, 0.4068477749824524, 0.29982301592826843,
            0.25637707114219666, 0.238688126206398, 0.23143386840820312, 0.22840727865695953,
            0.22709347307682037, 0.2264738231897354, 0.22613555192947388, 0.22591160237789154,
            0.22573412954807281 }, printed, 1e-5, "loss")
        -- predicted = model(torch.from_numpy(x_train)).detach().numpy()
        local predicted = model(tide.tensor(x_train, { dtype = tide.float32 })):detach():totable()
        assert.are.equal(15, #predicted)
        assert_close_list({ 0.3552115559577942, 0.08962364494800568 },
            { model.weight:item(), model.bias:item() }, 1e-5, "weight, bias")
    end)
end)

describe("01-basics logistic_regression and feedforward_neural_network", function()
    it("logistic regression: nn.Linear(input_size, num_classes), CrossEntropyLoss, SGD", function()
        tide.manual_seed(2)
        -- input_size = 28 * 28 (8 * 8 here); num_classes = 10; batch_size = 100 (8)
        local input_size, num_classes, num_epochs, batch_size, learning_rate = 8 * 8, 10, 4, 8, 0.1
        local train_dataset, test_dataset = mnist(16), mnist(8)
        -- train_loader = torch.utils.data.DataLoader(dataset=train_dataset, batch_size=batch_size, shuffle=True)
        local train_loader = tide.data.DataLoader(train_dataset, { batch_size = batch_size, shuffle = true })
        local test_loader = tide.data.DataLoader(test_dataset, { batch_size = batch_size, shuffle = false })
        local model = nn.Linear(input_size, num_classes)
        -- criterion = nn.CrossEntropyLoss()
        local criterion = nn.CrossEntropyLoss()
        local optimizer = tide.optim.SGD(model:parameters(), { lr = learning_rate })
        -- images = images.reshape(-1, input_size)
        local losses = train(model, criterion, optimizer, train_loader, num_epochs, function(images)
            return images:reshape(-1, input_size)
        end)
        assert_learns(losses, 2)
        local acc = test(model, test_loader, function(images)
            return images:reshape(-1, input_size)
        end)
        assert.is_true(acc >= 0 and acc <= 100)
        -- torch.save(model.state_dict(), 'model.ckpt')
        local path = os.tmpname()
        tide.save(model:state_dict(), path)
        os.remove(path)
    end)

    it("feedforward: NeuralNet(input_size, hidden_size, num_classes) with Adam", function()
        tide.manual_seed(3)
        -- device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
        local device = tide.device(tide.cuda.is_available() and "cuda" or "cpu")
        local input_size, hidden_size, num_classes, num_epochs, batch_size, learning_rate =
            64, 32, 10, 4, 8, 0.01

        -- class NeuralNet(nn.Module):
        local NeuralNet = nn.Module:extend("NeuralNet")
        function NeuralNet:init(input_size_, hidden_size_, num_classes_)
            self.fc1 = nn.Linear(input_size_, hidden_size_)
            self.relu = nn.ReLU()
            self.fc2 = nn.Linear(hidden_size_, num_classes_)
        end

        function NeuralNet:forward(x)
            local out = self.fc1(x)
            out = self.relu(out)
            out = self.fc2(out)
            return out
        end

        -- model = NeuralNet(input_size, hidden_size, num_classes).to(device)
        local model = NeuralNet(input_size, hidden_size, num_classes):to(device)
        local criterion = nn.CrossEntropyLoss()
        -- optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
        local optimizer = tide.optim.Adam(model:parameters(), { lr = learning_rate })
        local train_loader = tide.data.DataLoader(mnist(16), { batch_size = batch_size, shuffle = true })
        -- images = images.reshape(-1, 28*28).to(device)
        local function prepare(images)
            return images:reshape(-1, 8 * 8):to(device)
        end
        assert_learns(train(model, criterion, optimizer, train_loader, num_epochs, prepare), 2)
        local acc = test(model, tide.data.DataLoader(mnist(8), { batch_size = batch_size }), prepare)
        assert.is_true(acc >= 0 and acc <= 100)
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. 02-intermediate
---------------------------------------------------------------------------------------------
describe("02-intermediate", function()
    it("convolutional_neural_network: ConvNet of two Conv2d/BatchNorm2d/ReLU/MaxPool2d layers", function()
        tide.manual_seed(4)
        local num_classes, num_epochs, batch_size, learning_rate = 10, 3, 8, 0.01
        -- class ConvNet(nn.Module):
        local ConvNet = nn.Module:extend("ConvNet")
        -- def __init__(self, num_classes=10):
        function ConvNet:init(num_classes_)
            num_classes_ = num_classes_ or 10
            -- self.layer1 = nn.Sequential(nn.Conv2d(1, 16, kernel_size=5, stride=1, padding=2), ...)
            self.layer1 = nn.Sequential(
                nn.Conv2d(1, 16, { kernel_size = 5, stride = 1, padding = 2 }),
                nn.BatchNorm2d(16),
                nn.ReLU(),
                nn.MaxPool2d({ kernel_size = 2, stride = 2 }))
            self.layer2 = nn.Sequential(
                nn.Conv2d(16, 32, { kernel_size = 5, stride = 1, padding = 2 }),
                nn.BatchNorm2d(32),
                nn.ReLU(),
                nn.MaxPool2d({ kernel_size = 2, stride = 2 }))
            -- self.fc = nn.Linear(7*7*32, num_classes)  (8x8 images: 2*2*32)
            self.fc = nn.Linear(2 * 2 * 32, num_classes_)
        end

        function ConvNet:forward(x)
            local out = self.layer1(x)
            out = self.layer2(out)
            -- out = out.reshape(out.size(0), -1)
            out = out:reshape(out:size(1), -1)
            out = self.fc(out)
            return out
        end

        local device = tide.device("cpu")
        local model = ConvNet(num_classes):to(device)
        local criterion = nn.CrossEntropyLoss()
        local optimizer = tide.optim.Adam(model:parameters(), { lr = learning_rate })
        local train_loader = tide.data.DataLoader(mnist(16), { batch_size = batch_size, shuffle = true })
        local function prepare(images)
            return images:to(device)
        end
        assert_learns(train(model, criterion, optimizer, train_loader, num_epochs, prepare), 2)
        -- model.eval()  # eval mode (batchnorm uses moving mean/variance instead of mini-batch mean/variance)
        model:eval()
        local acc = test(model, tide.data.DataLoader(mnist(8), { batch_size = batch_size }), prepare)
        assert.is_true(acc >= 0 and acc <= 100)
        assert.is_false(model.layer1[2].training)
    end)

    it("deep_residual_network: conv3x3, ResidualBlock, ResNet.make_layer, update_lr", function()
        tide.manual_seed(5)
        local num_epochs, learning_rate = 2, 0.01
        -- def conv3x3(in_channels, out_channels, stride=1):
        local function conv3x3(in_channels, out_channels, stride)
            -- return nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=stride, padding=1, bias=False)
            return nn.Conv2d(in_channels, out_channels, { kernel_size = 3, stride = stride or 1,
                padding = 1, bias = false })
        end

        -- class ResidualBlock(nn.Module):
        local ResidualBlock = nn.Module:extend("ResidualBlock")
        -- def __init__(self, in_channels, out_channels, stride=1, downsample=None):
        function ResidualBlock:init(in_channels, out_channels, stride, downsample)
            self.conv1 = conv3x3(in_channels, out_channels, stride)
            self.bn1 = nn.BatchNorm2d(out_channels)
            -- self.relu = nn.ReLU(inplace=True)
            self.relu = nn.ReLU({ inplace = true })
            self.conv2 = conv3x3(out_channels, out_channels)
            self.bn2 = nn.BatchNorm2d(out_channels)
            self.downsample = downsample
        end

        function ResidualBlock:forward(x)
            local residual = x
            local out = self.conv1(x)
            out = self.bn1(out)
            out = self.relu(out)
            out = self.conv2(out)
            out = self.bn2(out)
            if self.downsample then
                residual = self.downsample(x)
            end
            -- out += residual
            out = out + residual
            out = self.relu(out)
            return out
        end

        -- class ResNet(nn.Module):
        local ResNet = nn.Module:extend("ResNet")
        -- def __init__(self, block, layers, num_classes=10):
        function ResNet:init(block, layers, num_classes)
            self.in_channels = 16
            self.conv = conv3x3(3, 16)
            self.bn = nn.BatchNorm2d(16)
            self.relu = nn.ReLU({ inplace = true })
            -- self.layer1 = self.make_layer(block, 16, layers[0])
            self.layer1 = self:make_layer(block, 16, layers[1])
            self.layer2 = self:make_layer(block, 32, layers[2], 2)
            self.layer3 = self:make_layer(block, 64, layers[3], 2)
            -- self.avg_pool = nn.AvgPool2d(8)  (16x16 images: 4x4 at layer3)
            self.avg_pool = nn.AvgPool2d(4)
            self.fc = nn.Linear(64, num_classes or 10)
        end

        -- def make_layer(self, block, out_channels, blocks, stride=1):
        function ResNet:make_layer(block, out_channels, blocks, stride)
            stride = stride or 1
            local downsample = nil
            -- if (stride != 1) or (self.in_channels != out_channels):
            if (stride ~= 1) or (self.in_channels ~= out_channels) then
                downsample = nn.Sequential(
                    conv3x3(self.in_channels, out_channels, stride),
                    nn.BatchNorm2d(out_channels))
            end
            local layers = {}
            -- layers.append(block(self.in_channels, out_channels, stride, downsample))
            layers[#layers + 1] = block(self.in_channels, out_channels, stride, downsample)
            self.in_channels = out_channels
            -- for i in range(1, blocks):
            for _ = 1, blocks - 1 do
                layers[#layers + 1] = block(out_channels, out_channels)
            end
            -- return nn.Sequential(*layers)
            return nn.Sequential(unpack(layers))
        end

        function ResNet:forward(x)
            local out = self.conv(x)
            out = self.bn(out)
            out = self.relu(out)
            out = self.layer1(out)
            out = self.layer2(out)
            out = self.layer3(out)
            out = self.avg_pool(out)
            -- out = out.view(out.size(0), -1)
            out = out:view(out:size(1), -1)
            out = self.fc(out)
            return out
        end

        -- model = ResNet(ResidualBlock, [2, 2, 2]).to(device)
        local model = ResNet(ResidualBlock, { 2, 2, 2 })
        assert.are.equal(2, #model.layer1)
        assert.is_nil(model.layer1[1].downsample)
        assert.is_not_nil(model.layer2[1].downsample)
        local criterion = nn.CrossEntropyLoss()
        local optimizer = tide.optim.Adam(model:parameters(), { lr = learning_rate })

        -- def update_lr(optimizer, lr):
        local function update_lr(optimizer_, lr)
            -- for param_group in optimizer.param_groups: param_group['lr'] = lr
            for _, param_group in ipairs(optimizer_.param_groups) do
                param_group['lr'] = lr
            end
        end

        -- CIFAR-10: 8 random 3x16x16 images
        local ds = tide.data.TensorDataset(tide.rand(8, 3, 16, 16), tide.randint(1, 11, { 8 }))
        local train_loader = tide.data.DataLoader(ds, { batch_size = 4, shuffle = true })
        local curr_lr = learning_rate
        local losses = {}
        for epoch = 0, num_epochs - 1 do
            for images, labels in train_loader:iter() do
                local outputs = model(images)
                local loss = criterion(outputs, labels)
                optimizer:zero_grad()
                loss:backward()
                optimizer:step()
                losses[#losses + 1] = loss:item()
            end
            -- if (epoch+1) % 20 == 0: curr_lr /= 3; update_lr(optimizer, curr_lr)  (every epoch here)
            if (epoch + 1) % 1 == 0 then
                curr_lr = curr_lr / 3
                update_lr(optimizer, curr_lr)
            end
        end
        assert_learns(losses, 2)
        assert.is_true(ported.close(optimizer.param_groups[1].lr, 0.01 / 9, 1e-12))
        -- the new lr reaches the optimizer's state_dict
        assert.is_true(ported.close(optimizer:state_dict()["param_groups"][1]["lr"], 0.01 / 9, 1e-12))
        model:eval()
        local acc = test(model, tide.data.DataLoader(ds, { batch_size = 4 }), function(images)
            return images
        end)
        assert.is_true(acc >= 0 and acc <= 100)
    end)

    -- recurrent_neural_network (bidirectional = false) and bidirectional_recurrent_neural_network
    local function rnn_model(bidirectional)
        -- sequence_length = 28; input_size = 28 (8 and 8 here); hidden_size = 128; num_layers = 2
        local sequence_length, input_size, hidden_size, num_layers, num_classes = 8, 8, 12, 2, 10
        local device = tide.device("cpu")
        -- class RNN(nn.Module) / class BiRNN(nn.Module):
        local RNN = nn.Module:extend(bidirectional and "BiRNN" or "RNN")
        function RNN:init(input_size_, hidden_size_, num_layers_, num_classes_)
            self.hidden_size = hidden_size_
            self.num_layers = num_layers_
            if bidirectional then
                -- self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True, bidirectional=True)
                self.lstm = nn.LSTM(input_size_, hidden_size_, num_layers_, { batch_first = true,
                    bidirectional = true })
                -- self.fc = nn.Linear(hidden_size*2, num_classes)  # 2 for bidirection
                self.fc = nn.Linear(hidden_size_ * 2, num_classes_)
            else
                -- self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True)
                self.lstm = nn.LSTM(input_size_, hidden_size_, num_layers_, { batch_first = true })
                self.fc = nn.Linear(hidden_size_, num_classes_)
            end
        end

        function RNN:forward(x)
            local d = bidirectional and 2 or 1
            -- h0 = torch.zeros(self.num_layers, x.size(0), self.hidden_size).to(device)
            -- (BiRNN: self.num_layers*2)
            local h0 = tide.zeros(self.num_layers * d, x:size(1), self.hidden_size):to(device)
            local c0 = tide.zeros(self.num_layers * d, x:size(1), self.hidden_size):to(device)
            -- out, _ = self.lstm(x, (h0, c0))
            local out, _ = self.lstm(x, { h0, c0 })
            -- out = self.fc(out[:, -1, :])
            out = self.fc(out[{ {}, -1, {} }])
            return out
        end

        local model = RNN(input_size, hidden_size, num_layers, num_classes):to(device)
        -- images = images.reshape(-1, sequence_length, input_size).to(device)
        local function prepare(images)
            return images:reshape(-1, sequence_length, input_size):to(device)
        end
        return model, prepare
    end

    for _, bi in ipairs({ false, true }) do
        local name = bi and "bidirectional_recurrent_neural_network: BiRNN" or
            "recurrent_neural_network: RNN"
        it(name .. ", LSTM(batch_first=True) from zero states, fc on out[:, -1, :]", function()
            tide.manual_seed(6)
            local model, prepare = rnn_model(bi)
            local criterion = nn.CrossEntropyLoss()
            local optimizer = tide.optim.Adam(model:parameters(), { lr = 0.01 })
            local train_loader = tide.data.DataLoader(mnist(16), { batch_size = 8, shuffle = true })
            assert_learns(train(model, criterion, optimizer, train_loader, 3, prepare), 2)
            model:eval()
            local acc = test(model, tide.data.DataLoader(mnist(8), { batch_size = 8 }), prepare)
            assert.is_true(acc >= 0 and acc <= 100)
        end)
    end

    it("language_model: Dictionary/Corpus, RNNLM with detached states, clip_grad_norm_, " ..
        "sampling with torch.multinomial", function()
            tide.manual_seed(7)
            -- class Dictionary(object):
            local Dictionary = ported.class("Dictionary")
            function Dictionary:__init__()
                self.word2idx = {}
                self.idx2word = {}
                -- self.idx = 0  (1-based: the first word's id is 1, an Embedding row)
                self.idx = 1
            end

            function Dictionary:add_word(word)
                -- if not word in self.word2idx:
                if self.word2idx[word] == nil then
                    self.word2idx[word] = self.idx
                    self.idx2word[self.idx] = word
                    self.idx = self.idx + 1
                end
            end

            -- def __len__(self): return len(self.word2idx)
            function Dictionary:__len__()
                return self.idx - 1
            end

            -- class Corpus(object):
            local Corpus = ported.class("Corpus")
            function Corpus:__init__()
                self.dictionary = Dictionary()
            end

            local function split(line)
                local words = {}
                for word in line:gmatch("%S+") do
                    words[#words + 1] = word
                end
                return words
            end

            -- def get_data(self, path, batch_size=20):  (the file's text is a string here)
            function Corpus:get_data(text, batch_size)
                batch_size = batch_size or 20
                local tokens = 0
                -- for line in f:
                for line in text:gmatch("[^\n]+") do
                    -- words = line.split() + ['<eos>']
                    local words = split(line)
                    words[#words + 1] = '<eos>'
                    tokens = tokens + #words
                    for _, word in ipairs(words) do
                        self.dictionary:add_word(word)
                    end
                end
                -- ids = torch.LongTensor(tokens)
                local ids = tide.LongTensor(tokens)
                -- token = 0
                local token = 1
                for line in text:gmatch("[^\n]+") do
                    local words = split(line)
                    words[#words + 1] = '<eos>'
                    for _, word in ipairs(words) do
                        -- ids[token] = self.dictionary.word2idx[word]
                        ids[token] = self.dictionary.word2idx[word]
                        token = token + 1
                    end
                end
                -- num_batches = ids.size(0) // batch_size
                local num_batches = math.floor(ids:size(1) / batch_size)
                -- ids = ids[:num_batches*batch_size]
                ids = ids[{ { 1, num_batches * batch_size } }]
                -- return ids.view(batch_size, -1)
                return ids:view(batch_size, -1)
            end

            local device = tide.device("cpu")
            -- embed_size = 128; hidden_size = 1024; num_layers = 1; ...; batch_size = 20; seq_length = 30
            local embed_size, hidden_size, num_layers, num_epochs, num_samples, batch_size,
            seq_length, learning_rate = 8, 16, 1, 6, 12, 2, 4, 0.02
            local text = "the cat sat on the mat\nthe dog sat on the log\n" ..
                "a cat and a dog sat on a mat\nthe log is on the mat\n"
            local corpus = Corpus()
            -- ids = corpus.get_data('data/train.txt', batch_size)
            local ids = corpus:get_data(text, batch_size)
            -- vocab_size = len(corpus.dictionary)
            local vocab_size = corpus.dictionary:__len__()
            assert.are.equal(11, vocab_size)
            assert.are.same({ 2, 15 }, ids:size())
            assert.are.equal(corpus.dictionary.word2idx["the"], ids[1][1]:item())
            -- num_batches = ids.size(1) // seq_length
            local num_batches = math.floor(ids:size(2) / seq_length)

            -- class RNNLM(nn.Module):
            local RNNLM = nn.Module:extend("RNNLM")
            function RNNLM:init(vocab_size_, embed_size_, hidden_size_, num_layers_)
                self.embed = nn.Embedding(vocab_size_, embed_size_)
                self.lstm = nn.LSTM(embed_size_, hidden_size_, num_layers_, { batch_first = true })
                self.linear = nn.Linear(hidden_size_, vocab_size_)
            end

            function RNNLM:forward(x, h)
                x = self.embed(x)
                -- out, (h, c) = self.lstm(x, h)
                local out, hc = self.lstm(x, h)
                local c
                h, c = hc[1], hc[2]
                -- out = out.reshape(out.size(0)*out.size(1), out.size(2))
                out = out:reshape(out:size(1) * out:size(2), out:size(3))
                out = self.linear(out)
                return out, { h, c }
            end

            local model = RNNLM(vocab_size, embed_size, hidden_size, num_layers):to(device)
            local criterion = nn.CrossEntropyLoss()
            local optimizer = tide.optim.Adam(model:parameters(), { lr = learning_rate })

            -- def detach(states): return [state.detach() for state in states]
            local function detach(states)
                local r = {}
                for k, state in ipairs(states) do
                    r[k] = state:detach()
                end
                return r
            end

            local epoch_loss = {}
            for epoch = 0, num_epochs - 1 do
                -- states = (torch.zeros(num_layers, batch_size, hidden_size).to(device), ...)
                local states = { tide.zeros(num_layers, batch_size, hidden_size):to(device),
                    tide.zeros(num_layers, batch_size, hidden_size):to(device) }
                local total = 0
                -- for i in range(0, ids.size(1) - seq_length, seq_length):
                for i = 0, ids:size(2) - seq_length - 1, seq_length do
                    -- inputs = ids[:, i:i+seq_length].to(device)
                    local inputs = ids[{ {}, { i + 1, i + seq_length } }]:to(device)
                    -- targets = ids[:, (i+1):(i+1)+seq_length].to(device)
                    local targets = ids[{ {}, { (i + 1) + 1, (i + 1) + seq_length } }]:to(device)
                    states = detach(states)
                    local outputs
                    outputs, states = model(inputs, states)
                    local loss = criterion(outputs, targets:reshape(-1))
                    optimizer:zero_grad()
                    loss:backward()
                    -- clip_grad_norm_(model.parameters(), 0.5)
                    nn.utils.clip_grad_norm_(model:parameters(), 0.5)
                    optimizer:step()
                    -- step = (i+1) // seq_length
                    local step = math.floor((i + 1) / seq_length)
                    -- print ('... Loss: {:.4f}, Perplexity: {:5.2f}'.format(..., loss.item(), np.exp(loss.item())))
                    local _ = string.format("Epoch [%d/%d], Step[%d/%d], Loss: %.4f, Perplexity: %5.2f",
                        epoch + 1, num_epochs, step, num_batches, loss:item(), math.exp(loss:item()))
                    assert.is_false(states[1].requires_grad and states[1].grad_fn == nil)
                    total = total + loss:item()
                end
                assert_finite(total, "loss")
                epoch_loss[#epoch_loss + 1] = total
            end
            assert.is_true(epoch_loss[#epoch_loss] < epoch_loss[1])

            -- with torch.no_grad(): with open('sample.txt', 'w') as f:  (f is a list of strings)
            local f = {}
            tide.no_grad(function()
                local state = { tide.zeros(num_layers, 1, hidden_size):to(device),
                    tide.zeros(num_layers, 1, hidden_size):to(device) }
                -- prob = torch.ones(vocab_size)
                local prob = tide.ones(vocab_size)
                -- input = torch.multinomial(prob, num_samples=1).unsqueeze(1).to(device)
                local input = tide.multinomial(prob, { num_samples = 1 }):unsqueeze(2):to(device)
                for _ = 0, num_samples - 1 do
                    local output
                    output, state = model(input, state)
                    -- prob = output.exp()
                    prob = output:exp()
                    -- word_id = torch.multinomial(prob, num_samples=1).item()
                    local word_id = tide.multinomial(prob, { num_samples = 1 }):item()
                    -- input.fill_(word_id)
                    input:fill_(word_id)
                    -- word = corpus.dictionary.idx2word[word_id]
                    local word = corpus.dictionary.idx2word[word_id]
                    -- word = '\n' if word == '<eos>' else word + ' '
                    word = word == '<eos>' and '\n' or word .. ' '
                    -- f.write(word)
                    f[#f + 1] = word
                end
            end)
            assert.are.equal(num_samples, #f)
            -- torch.save(model.state_dict(), 'model.ckpt')
            local path = os.tmpname()
            tide.save(model:state_dict(), path)
            os.remove(path)
        end)
end)

---------------------------------------------------------------------------------------------
-- 3. 03-advanced
---------------------------------------------------------------------------------------------
describe("03-advanced", function()
    it("generative_adversarial_network: D and G as nn.Sequential, BCELoss, denorm, reset_grad", function()
        tide.manual_seed(8)
        local device = tide.device("cpu")
        -- latent_size = 64; hidden_size = 256; image_size = 784; batch_size = 100
        local latent_size, hidden_size, image_size, num_epochs, batch_size = 8, 16, 64, 3, 8
        -- transforms.Normalize(mean=[0.5], std=[0.5]): images in [-1, 1]
        local mnist_ds = tide.data.TensorDataset(tide.rand(16, 1, 8, 8) * 2 - 1, tide.randint(1, 11, { 16 }))
        local data_loader = tide.data.DataLoader(mnist_ds, { batch_size = batch_size, shuffle = true })
        -- D = nn.Sequential(nn.Linear(image_size, hidden_size), nn.LeakyReLU(0.2), ...)
        local D = nn.Sequential(
            nn.Linear(image_size, hidden_size),
            nn.LeakyReLU(0.2),
            nn.Linear(hidden_size, hidden_size),
            nn.LeakyReLU(0.2),
            nn.Linear(hidden_size, 1),
            nn.Sigmoid())
        local G = nn.Sequential(
            nn.Linear(latent_size, hidden_size),
            nn.ReLU(),
            nn.Linear(hidden_size, hidden_size),
            nn.ReLU(),
            nn.Linear(hidden_size, image_size),
            nn.Tanh())
        D = D:to(device)
        G = G:to(device)
        local criterion = nn.BCELoss()
        -- d_optimizer = torch.optim.Adam(D.parameters(), lr=0.0002)
        local d_optimizer = tide.optim.Adam(D:parameters(), { lr = 0.002 })
        local g_optimizer = tide.optim.Adam(G:parameters(), { lr = 0.002 })

        -- def denorm(x):
        local function denorm(x)
            local out = (x + 1) / 2
            -- return out.clamp(0, 1)
            return out:clamp(0, 1)
        end

        -- def reset_grad():
        local function reset_grad()
            d_optimizer:zero_grad()
            g_optimizer:zero_grad()
        end

        local d_losses, fake_images, images = {}, nil, nil
        for epoch = 0, num_epochs - 1 do
            -- for i, (images, _) in enumerate(data_loader):
            for batch in data_loader:iter() do
                images = batch
                -- images = images.reshape(batch_size, -1).to(device)
                images = images:reshape(batch_size, -1):to(device)
                -- real_labels = torch.ones(batch_size, 1).to(device)
                local real_labels = tide.ones(batch_size, 1):to(device)
                local fake_labels = tide.zeros(batch_size, 1):to(device)
                -- Train the discriminator
                local outputs = D(images)
                local d_loss_real = criterion(outputs, real_labels)
                local real_score = outputs
                -- z = torch.randn(batch_size, latent_size).to(device)
                local z = tide.randn(batch_size, latent_size):to(device)
                fake_images = G(z)
                outputs = D(fake_images)
                local d_loss_fake = criterion(outputs, fake_labels)
                local fake_score = outputs
                local d_loss = d_loss_real + d_loss_fake
                reset_grad()
                d_loss:backward()
                d_optimizer:step()
                -- Train the generator
                z = tide.randn(batch_size, latent_size):to(device)
                fake_images = G(z)
                outputs = D(fake_images)
                local g_loss = criterion(outputs, real_labels)
                reset_grad()
                g_loss:backward()
                g_optimizer:step()
                -- print('... d_loss: {:.4f}, g_loss: {:.4f}, D(x): {:.2f}, D(G(z)): {:.2f}'.format(...))
                local _ = string.format("Epoch [%d/%d], d_loss: %.4f, g_loss: %.4f, D(x): %.2f, D(G(z)): %.2f",
                    epoch, num_epochs, d_loss:item(), g_loss:item(), real_score:mean():item(),
                    fake_score:mean():item())
                assert_finite(g_loss:item(), "g_loss")
                d_losses[#d_losses + 1] = d_loss:item()
            end
            -- if (epoch+1) == 1: images = images.reshape(images.size(0), 1, 28, 28); save_image(denorm(images), ...)
            if (epoch + 1) == 1 then
                images = images:reshape(images:size(1), 1, 8, 8)
                local real = denorm(images)
                assert.is_true(real:min():item() >= 0 and real:max():item() <= 1)
            end
            -- fake_images = fake_images.reshape(fake_images.size(0), 1, 28, 28)
            fake_images = fake_images:reshape(fake_images:size(1), 1, 8, 8)
            assert.are.same({ batch_size, 1, 8, 8 }, denorm(fake_images):size())
        end
        assert_learns(d_losses, 2)
    end)

    it("variational_autoencoder: VAE, binary_cross_entropy(size_average=False) + KL, the samples", function()
        tide.manual_seed(9)
        local device = tide.device("cpu")
        -- image_size = 784; h_dim = 400; z_dim = 20; batch_size = 128; learning_rate = 1e-3
        local image_size, h_dim, z_dim, num_epochs, batch_size, learning_rate = 64, 16, 4, 4, 8, 1e-2
        local data_loader = tide.data.DataLoader(mnist(16), { batch_size = batch_size, shuffle = true })

        -- class VAE(nn.Module):
        local VAE = nn.Module:extend("VAE")
        -- def __init__(self, image_size=784, h_dim=400, z_dim=20):
        function VAE:init(image_size_, h_dim_, z_dim_)
            self.fc1 = nn.Linear(image_size_, h_dim_)
            self.fc2 = nn.Linear(h_dim_, z_dim_)
            self.fc3 = nn.Linear(h_dim_, z_dim_)
            self.fc4 = nn.Linear(z_dim_, h_dim_)
            self.fc5 = nn.Linear(h_dim_, image_size_)
        end

        function VAE:encode(x)
            local h = F.relu(self.fc1(x))
            return self.fc2(h), self.fc3(h)
        end

        function VAE:reparameterize(mu, log_var)
            -- std = torch.exp(log_var/2)
            local std = tide.exp(log_var / 2)
            local eps = tide.randn_like(std)
            return mu + eps * std
        end

        function VAE:decode(z)
            local h = F.relu(self.fc4(z))
            -- return F.sigmoid(self.fc5(h))
            return F.sigmoid(self.fc5(h))
        end

        function VAE:forward(x)
            local mu, log_var = self:encode(x)
            local z = self:reparameterize(mu, log_var)
            local x_reconst = self:decode(z)
            return x_reconst, mu, log_var
        end

        -- model = VAE().to(device)
        local model = VAE(image_size, h_dim, z_dim):to(device)
        local optimizer = tide.optim.Adam(model:parameters(), { lr = learning_rate })
        local losses, x = {}, nil
        -- size_average=False is PyTorch's legacy reduction='sum': it warns once, as PyTorch
        -- and F.sigmoid in decode is deprecated in PyTorch 1.13, which warns once too
        require("tide._warn").reset("legacy_reduction_sum")
        require("tide._warn").reset("F.sigmoid")
        local warned = capture_stderr(function()
            for _ = 0, num_epochs - 1 do
                for batch in data_loader:iter() do
                    -- x = x.to(device).view(-1, image_size)
                    x = batch:to(device):view(-1, image_size)
                    local x_reconst, mu, log_var = model(x)
                    -- reconst_loss = F.binary_cross_entropy(x_reconst, x, size_average=False)
                    local reconst_loss = F.binary_cross_entropy(x_reconst, x, { size_average = false })
                    -- kl_div = - 0.5 * torch.sum(1 + log_var - mu.pow(2) - log_var.exp())
                    local kl_div = -0.5 * tide.sum(1 + log_var - mu:pow(2) - log_var:exp())
                    local loss = reconst_loss + kl_div
                    optimizer:zero_grad()
                    loss:backward()
                    optimizer:step()
                    -- size_average=False is a sum over the batch's elements
                    assert.is_true(ported.close(reconst_loss:item(),
                        F.binary_cross_entropy(x_reconst, x, { reduction = "sum" }):item(), 1e-5))
                    losses[#losses + 1] = loss:item()
                end
                -- with torch.no_grad():
                tide.no_grad(function()
                    local z = tide.randn(batch_size, z_dim):to(device)
                    -- out = model.decode(z).view(-1, 1, 28, 28)
                    local out = model:decode(z):view(-1, 1, 8, 8)
                    assert.are.same({ batch_size, 1, 8, 8 }, out:size())
                    -- out, _, _ = model(x)
                    out = model(x)
                    -- x_concat = torch.cat([x.view(-1, 1, 28, 28), out.view(-1, 1, 28, 28)], dim=3)
                    local x_concat = tide.cat({ x:view(-1, 1, 8, 8), out:view(-1, 1, 8, 8) }, { dim = 4 })
                    assert.are.same({ batch_size, 1, 8, 16 }, x_concat:size())
                end)
            end
        end)
        local _, count = warned:gsub("please use reduction='sum' instead", "")
        assert.are.equal(1, count)
        _, count = warned:gsub("tide: warning: nn.functional.sigmoid is deprecated. Use torch.sigmoid instead.", "")
        assert.are.equal(1, count)
        assert_learns(losses, 2)
    end)

    it("F.sigmoid and F.tanh warn as PyTorch 1.13's deprecated functions, and compute", function()
        local x = tide.tensor({ -1, 0, 2 })
        local warn = require("tide._warn")
        warn.reset("F.sigmoid")
        warn.reset("F.tanh")
        local s, t
        local warned = capture_stderr(function()
            s, t = F.sigmoid(x), F.tanh(x)
            F.sigmoid(x)
        end)
        assert.is_true(s:equal(tide.sigmoid(x)))
        assert.is_true(t:equal(tide.tanh(x)))
        assert.matches("ported_scripts22_spec.lua:%d+: tide: warning: nn.functional.sigmoid is " ..
            "deprecated. Use torch.sigmoid instead.", warned)
        assert.is_truthy(warned:find("nn.functional.tanh is deprecated. Use torch.tanh instead.", 1, true))
        local _, count = warned:gsub("tide: warning", "")
        assert.are.equal(2, count)
        -- bad input raises before any warning
        warn.reset("F.sigmoid")
        warned = capture_stderr(function()
            assert.has_error(function()
                F.sigmoid("x")
            end)
        end)
        assert.are.equal("", warned)
    end)

    it("image_captioning/model.py: EncoderCNN, DecoderRNN with pack_padded_sequence, sample()", function()
        tide.manual_seed(10)
        local pack_padded_sequence = nn.utils.rnn.pack_padded_sequence
        -- resnet = models.resnet152(pretrained=True): a small conv model with resnet's children
        local SmallResNet = nn.Module:extend("SmallResNet")
        function SmallResNet:init()
            self.conv1 = nn.Conv2d(3, 8, 3, { stride = 2, padding = 1 })
            self.bn1 = nn.BatchNorm2d(8)
            self.relu = nn.ReLU({ inplace = true })
            self.avgpool = nn.AdaptiveAvgPool2d({ 1, 1 })
            self.fc = nn.Linear(8, 1000)
        end

        -- class EncoderCNN(nn.Module):
        local EncoderCNN = nn.Module:extend("EncoderCNN")
        function EncoderCNN:init(embed_size)
            local resnet = SmallResNet()
            -- modules = list(resnet.children())[:-1]      # delete the last fc layer.
            local children = resnet:children()
            local modules = { unpack(children, 1, #children - 1) }
            -- self.resnet = nn.Sequential(*modules)
            self.resnet = nn.Sequential(unpack(modules))
            -- self.linear = nn.Linear(resnet.fc.in_features, embed_size)
            self.linear = nn.Linear(resnet.fc.in_features, embed_size)
            -- self.bn = nn.BatchNorm1d(embed_size, momentum=0.01)
            self.bn = nn.BatchNorm1d(embed_size, { momentum = 0.01 })
        end

        function EncoderCNN:forward(images)
            -- with torch.no_grad(): features = self.resnet(images)
            local features
            tide.no_grad(function()
                features = self.resnet(images)
            end)
            -- features = features.reshape(features.size(0), -1)
            features = features:reshape(features:size(1), -1)
            features = self.bn(self.linear(features))
            return features
        end

        -- class DecoderRNN(nn.Module):
        local DecoderRNN = nn.Module:extend("DecoderRNN")
        -- def __init__(self, embed_size, hidden_size, vocab_size, num_layers, max_seq_length=20):
        function DecoderRNN:init(embed_size, hidden_size, vocab_size, num_layers, max_seq_length)
            self.embed = nn.Embedding(vocab_size, embed_size)
            self.lstm = nn.LSTM(embed_size, hidden_size, num_layers, { batch_first = true })
            self.linear = nn.Linear(hidden_size, vocab_size)
            self.max_seg_length = max_seq_length or 20
        end

        function DecoderRNN:forward(features, captions, lengths)
            local embeddings = self.embed(captions)
            -- embeddings = torch.cat((features.unsqueeze(1), embeddings), 1)
            embeddings = tide.cat({ features:unsqueeze(2), embeddings }, 2)
            -- packed = pack_padded_sequence(embeddings, lengths, batch_first=True)
            local packed = pack_padded_sequence(embeddings, lengths, { batch_first = true })
            local hiddens, _ = self.lstm(packed)
            -- outputs = self.linear(hiddens[0])  (a PackedSequence is a tuple; [1] is its data)
            local outputs = self.linear(hiddens[1])
            return outputs
        end

        -- def sample(self, features, states=None):
        function DecoderRNN:sample(features, states)
            local sampled_ids = {}
            local inputs = features:unsqueeze(2)
            for _ = 0, self.max_seg_length - 1 do
                -- hiddens, states = self.lstm(inputs, states)          # hiddens: (batch_size, 1, hidden_size)
                local hiddens
                hiddens, states = self.lstm(inputs, states)
                -- outputs = self.linear(hiddens.squeeze(1))
                local outputs = self.linear(hiddens:squeeze(2))
                -- _, predicted = outputs.max(1)
                local _, predicted = outputs:max(2)
                -- sampled_ids.append(predicted)
                sampled_ids[#sampled_ids + 1] = predicted
                inputs = self.embed(predicted)
                inputs = inputs:unsqueeze(2)
            end
            -- sampled_ids = torch.stack(sampled_ids, 1)                # sampled_ids: (batch_size, max_seq_length)
            sampled_ids = tide.stack(sampled_ids, 2)
            return sampled_ids
        end

        -- train.py's step: embed_size = 256; hidden_size = 512; num_layers = 1
        local embed_size, hidden_size, vocab_size, num_layers = 8, 12, 15, 1
        local encoder = EncoderCNN(embed_size)
        assert.are.equal(4, #encoder.resnet)
        local decoder = DecoderRNN(embed_size, hidden_size, vocab_size, num_layers, 5)
        local criterion = nn.CrossEntropyLoss()
        -- params = list(decoder.parameters()) + list(encoder.linear.parameters()) + list(encoder.bn.parameters())
        local params = decoder:parameters()
        for _, p in ipairs(encoder.linear:parameters()) do
            params[#params + 1] = p
        end
        for _, p in ipairs(encoder.bn:parameters()) do
            params[#params + 1] = p
        end
        local optimizer = tide.optim.Adam(params, { lr = 0.01 })
        -- images: 3 random 3x16x16; captions padded, longest first; lengths with the feature step
        local images = tide.rand(3, 3, 16, 16)
        local captions = tide.randint(1, vocab_size + 1, { 3, 5 })
        local lengths = { 6, 4, 3 }
        -- targets = pack_padded_sequence(captions, lengths, batch_first=True)[0]
        -- (train.py's captions start with <start>; the feature step predicts captions[:, 0])
        local targets = pack_padded_sequence(tide.cat({ captions, captions[{ {}, { 1, 1 } }] }, 2),
            lengths, { batch_first = true })[1]
        assert.are.same({ 13 }, targets:size())
        local losses = {}
        for _ = 1, 6 do
            -- features = encoder(images); outputs = decoder(features, captions, lengths)
            local features = encoder(images)
            local outputs = decoder(features, captions, lengths)
            assert.are.same({ 13, vocab_size }, outputs:size())
            local loss = criterion(outputs, targets)
            -- decoder.zero_grad(); encoder.zero_grad()
            decoder:zero_grad()
            encoder:zero_grad()
            loss:backward()
            optimizer:step()
            losses[#losses + 1] = loss:item()
        end
        assert_finite(losses[1], "loss")
        assert.is_true(losses[#losses] < losses[1])
        -- encoder.resnet ran under no_grad: its conv got no gradient
        assert.is_nil(encoder.resnet[1].weight.grad)
        -- sample.py: encoder.eval(); feature = encoder(image); sampled_ids = decoder.sample(feature)
        encoder:eval()
        local feature = encoder(images[{ { 1, 1 } }])
        local sampled_ids = decoder:sample(feature)
        assert.are.same({ 1, 5 }, sampled_ids:size())
        -- sampled_ids = sampled_ids[0].cpu().numpy()
        local ids = sampled_ids[1]:cpu():totable()
        for _, id in ipairs(ids) do
            assert.is_true(id >= 1 and id <= vocab_size)
        end
    end)

    it("a PackedSequence reads as PyTorch's 4-tuple, 1-based; other indices raise", function()
        local seq = nn.utils.rnn.pack_padded_sequence(tide.randn(2, 3, 4), { 3, 2 }, { batch_first = true })
        -- seq[0], seq[1] in PyTorch: data, batch_sizes
        assert.are.equal(seq.data, seq[1])
        assert.are.equal(seq.batch_sizes, seq[2])
        assert.are.same({ 2, 2, 1 }, seq[2]:totable())
        -- sorted: sorted_indices and unsorted_indices are None
        assert.is_nil(seq[3])
        assert.is_nil(seq[4])
        local unsorted = nn.utils.rnn.pack_padded_sequence(tide.randn(2, 3, 4), { 2, 3 },
            { batch_first = true, enforce_sorted = false })
        assert.are.same({ 2, 1 }, unsorted[3]:totable())
        assert.are.same({ 2, 1 }, unsorted[4]:totable())
        for _, k in ipairs({ 0, 5, -1 }) do
            local ok, err = pcall(function()
                return seq[k]
            end)
            assert.is_false(ok)
            assert.matches("tide: PackedSequence: index " .. k .. " out of range", tostring(err), 1, true)
            assert.matches("seq[1] is data (PyTorch's seq[0])", tostring(err), 1, true)
        end
        -- fields by name still read as before
        assert.are.same({ 5, 4 }, seq.data:size())
    end)
end)
