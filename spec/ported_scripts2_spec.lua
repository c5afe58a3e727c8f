-- ported_scripts2_spec.lua — more real PyTorch scripts ported line for line: pytorch/examples'
-- vae/main.py, time_sequence_prediction/train.py (and generate_sine_wave.py),
-- siamese_network/main.py (its resnet18 shrunk to a small conv tower with resnet18's children),
-- and Karpathy's makemore MLP ("Building makemore" parts 2 and 3: embedding lookup C[X], the
-- hand-written BatchNorm, manual SGD and sampling with torch.multinomial). Each port keeps the
-- script's layers, calls and keyword arguments (a Python keyword is a name in a trailing table),
-- shrunk to tiny sizes and random data, and runs a few training steps. The Python line stands
-- above each Lua line that differs from it; a line tide cannot write as Python does is marked
-- `-- GAP:`. Dims, indices and class targets are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite

-- Python's isinstance(m, cls)
local isinstance = tide.isinstance

---------------------------------------------------------------------------------------------
-- 1. vae/main.py
---------------------------------------------------------------------------------------------
describe("vae/main.py", function()
    it("VAE: reparameterize, binary_cross_entropy(reduction='sum') + KLD, Adam", function()
        local batch_size, log_interval = 8, 1
        tide.manual_seed(1)
        local device = tide.device("cpu")
        -- datasets.MNIST(..., transform=transforms.ToTensor()): 16 random 1x28x28 images in [0, 1]
        local images = tide.rand(16, 1, 28, 28)
        local ds = tide.data.TensorDataset(images, tide.randint(1, 11, { 16 }))
        -- train_loader = torch.utils.data.DataLoader(..., batch_size=args.batch_size, shuffle=True, **kwargs)
        local train_loader = tide.data.DataLoader(ds, { batch_size = batch_size, shuffle = true })
        local test_loader = tide.data.DataLoader(ds, { batch_size = batch_size, shuffle = false })

        -- class VAE(nn.Module):
        local VAE = nn.Module:extend("VAE")
        function VAE:init()
            self.fc1 = nn.Linear(784, 400)
            self.fc21 = nn.Linear(400, 20)
            self.fc22 = nn.Linear(400, 20)
            self.fc3 = nn.Linear(20, 400)
            self.fc4 = nn.Linear(400, 784)
        end

        function VAE:encode(x)
            local h1 = F.relu(self.fc1(x))
            return self.fc21(h1), self.fc22(h1)
        end

        function VAE:reparameterize(mu, logvar)
            -- std = torch.exp(0.5*logvar)
            local std = tide.exp(0.5 * logvar)
            -- eps = torch.randn_like(std)
            local eps = tide.randn_like(std)
            return mu + eps * std
        end

        function VAE:decode(z)
            local h3 = F.relu(self.fc3(z))
            -- return torch.sigmoid(self.fc4(h3))
            return tide.sigmoid(self.fc4(h3))
        end

        function VAE:forward(x)
            -- mu, logvar = self.encode(x.view(-1, 784))
            local mu, logvar = self:encode(x:view(-1, 784))
            local z = self:reparameterize(mu, logvar)
            return self:decode(z), mu, logvar
        end

        -- model = VAE().to(device)
        local model = VAE():to(device)
        -- optimizer = optim.Adam(model.parameters(), lr=1e-3)
        local optimizer = optim.Adam(model:parameters(), { lr = 1e-3 })

        -- Reconstruction + KL divergence losses summed over all elements and batch
        local function loss_function(recon_x, x, mu, logvar)
            -- BCE = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction='sum')
            local BCE = F.binary_cross_entropy(recon_x, x:view(-1, 784), { reduction = "sum" })
            -- KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
            local KLD = -0.5 * tide.sum(1 + logvar - mu:pow(2) - logvar:exp())
            return BCE + KLD, BCE, KLD
        end

        -- the loss function's value against PyTorch 1.13 on fixed inputs
        do
            local r = tide.tensor({ { 0.2, 0.7 }, { 0.9, 0.4 } })
            local x = tide.tensor({ { 0.0, 1.0 }, { 0.5, 0.25 } })
            local mu = tide.tensor({ { 0.5, -1.0 } })
            local logvar = tide.tensor({ { 0.1, -0.3 } })
            local bce = F.binary_cross_entropy(r, x, { reduction = "sum" })
            -- torch: F.binary_cross_entropy(r, x, reduction='sum') = 2.39598...
            assert.is_true(math.abs(bce:item() - 2.3959829807281494) < 1e-5)
            local kld = -0.5 * tide.sum(1 + logvar - mu:pow(2) - logvar:exp())
            -- torch: -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) = 0.64799...
            assert.is_true(math.abs(kld:item() - 0.6479945778846741) < 1e-5)
        end

        local function train(epoch)
            model:train()
            local train_loss = 0
            local losses = {}
            local batch_idx = 0
            -- for batch_idx, (data, _) in enumerate(train_loader):
            for data, _ in train_loader:iter() do
                data = data:to(device)
                optimizer:zero_grad()
                -- recon_batch, mu, logvar = model(data)
                local recon_batch, mu, logvar = model(data)
                assert.are.same({ batch_size, 784 }, recon_batch.shape)
                assert.are.same({ batch_size, 20 }, mu.shape)
                local loss = loss_function(recon_batch, data, mu, logvar)
                loss:backward()
                train_loss = train_loss + loss:item()
                optimizer:step()
                losses[#losses + 1] = loss:item() / #data
                if batch_idx % log_interval == 0 then
                    -- print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(epoch,
                    --     batch_idx * len(data), len(train_loader.dataset),
                    --     100. * batch_idx / len(train_loader), loss.item() / len(data)))
                    local line = string.format("Train Epoch: %d [%d/%d (%.0f%%)]\tLoss: %.6f", epoch,
                        batch_idx * #data, train_loader.dataset:len(),
                        100. * batch_idx / train_loader:len(), loss:item() / #data)
                    assert.is_truthy(line:find("Train Epoch: " .. epoch, 1, true))
                end
                batch_idx = batch_idx + 1
            end
            -- print('====> Epoch: {} Average loss: {:.4f}'.format(epoch, train_loss / len(train_loader.dataset)))
            return train_loss / train_loader.dataset:len(), losses
        end

        local dir = os.tmpname()
        os.remove(dir)
        local function test(epoch)
            model:eval()
            local test_loss = 0
            -- with torch.no_grad():
            tide.no_grad(function()
                local i = 0
                -- for i, (data, _) in enumerate(test_loader):
                for data, _ in test_loader:iter() do
                    data = data:to(device)
                    local recon_batch, mu, logvar = model(data)
                    test_loss = test_loss + loss_function(recon_batch, data, mu, logvar):item()
                    if i == 0 then
                        -- n = min(data.size(0), 8)
                        local n = math.min(data:size(1), 8)
                        -- comparison = torch.cat([data[:n],
                        --                       recon_batch.view(args.batch_size, 1, 28, 28)[:n]])
                        local comparison = tide.cat({ data[{ { 1, n } }],
                            recon_batch:view(batch_size, 1, 28, 28)[{ { 1, n } }] })
                        assert.are.same({ 2 * n, 1, 28, 28 }, comparison.shape)
                        -- save_image(comparison.cpu(), 'results/reconstruction_' + str(epoch) + '.png', nrow=n)
                        tide.utils.save_image(comparison:cpu(), dir .. "_reconstruction_" .. epoch .. ".png",
                            { nrow = n })
                        os.remove(dir .. "_reconstruction_" .. epoch .. ".png")
                    end
                    i = i + 1
                end
            end)
            -- test_loss /= len(test_loader.dataset)
            test_loss = test_loss / test_loader.dataset:len()
            return test_loss
        end

        local first, last
        -- for epoch in range(1, args.epochs + 1):
        for epoch = 1, 3 do
            local avg, losses = train(epoch)
            assert_finite(avg, "VAE train loss")
            assert.are.equal(2, #losses)
            first = first or losses[1]
            last = losses[#losses]
            local test_loss = test(epoch)
            assert_finite(test_loss, "VAE test loss")
            -- with torch.no_grad():
            tide.no_grad(function()
                -- sample = torch.randn(64, 20).to(device)
                local sample = tide.randn(64, 20):to(device)
                -- sample = model.decode(sample).cpu()
                sample = model:decode(sample):cpu()
                assert.is_nil(sample.grad_fn)
                -- save_image(sample.view(64, 1, 28, 28), 'results/sample_' + str(epoch) + '.png')
                tide.utils.save_image(sample:view(64, 1, 28, 28), dir .. "_sample_" .. epoch .. ".png")
                os.remove(dir .. "_sample_" .. epoch .. ".png")
            end)
        end
        -- the per-sample loss starts near 784 * log(2) (sigmoid outputs near 0.5) and falls
        assert.is_true(first > 400 and first < 700, "first VAE loss " .. first)
        assert.is_true(last < first, "VAE loss fell: " .. first .. " -> " .. last)
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. time_sequence_prediction/generate_sine_wave.py and train.py
---------------------------------------------------------------------------------------------
describe("time_sequence_prediction/train.py", function()
    it("two LSTMCells over input.split(1, dim=1), torch.cat(outputs, dim=1), double, LBFGS", function()
        -- generate_sine_wave.py, shrunk: T, L, N = 20, 1000, 100
        local T, L, N = 20, 12, 6
        tide.manual_seed(2)
        -- x = np.empty((N, L), 'int64')
        -- x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
        local x = tide.arange(L) + tide.randint(-4 * T, 4 * T, { N }):reshape(N, 1)
        assert.are.equal("int64", x.dtype)
        -- data = np.sin(x / 1.0 / T).astype('float64')
        local data = tide.sin(x:double() / 1.0 / T)
        assert.are.equal("float64", data.dtype)

        local H = 51
        -- class Sequence(nn.Module):
        local Sequence = nn.Module:extend("Sequence")
        function Sequence:init()
            self.lstm1 = nn.LSTMCell(1, H)
            self.lstm2 = nn.LSTMCell(H, H)
            self.linear = nn.Linear(H, 1)
        end

        -- def forward(self, input, future = 0):
        function Sequence:forward(input, future)
            future = future or 0
            local outputs = {}
            -- h_t = torch.zeros(input.size(0), 51, dtype=torch.double)
            local h_t = tide.zeros(input:size(1), H, { dtype = tide.double })
            local c_t = tide.zeros(input:size(1), H, { dtype = tide.double })
            local h_t2 = tide.zeros(input:size(1), H, { dtype = tide.double })
            local c_t2 = tide.zeros(input:size(1), H, { dtype = tide.double })

            local output
            -- for input_t in input.split(1, dim=1):
            for _, input_t in ipairs(input:split(1, { dim = 2 })) do
                -- h_t, c_t = self.lstm1(input_t, (h_t, c_t))
                h_t, c_t = self.lstm1(input_t, { h_t, c_t })
                h_t2, c_t2 = self.lstm2(h_t, { h_t2, c_t2 })
                output = self.linear(h_t2)
                -- outputs += [output]
                outputs[#outputs + 1] = output
            end
            -- for i in range(future):# if we should predict the future
            for _ = 1, future do
                h_t, c_t = self.lstm1(output, { h_t, c_t })
                h_t2, c_t2 = self.lstm2(h_t, { h_t2, c_t2 })
                output = self.linear(h_t2)
                outputs[#outputs + 1] = output
            end
            -- outputs = torch.cat(outputs, dim=1)
            outputs = tide.cat(outputs, { dim = 2 })
            return outputs
        end

        -- np.random.seed(0); torch.manual_seed(0)
        tide.manual_seed(0)
        -- input = torch.from_numpy(data[3:, :-1])
        local input = data[{ { 4, -1 }, { 1, -2 } }]
        -- target = torch.from_numpy(data[3:, 1:])
        local target = data[{ { 4, -1 }, { 2, -1 } }]
        -- test_input = torch.from_numpy(data[:3, :-1])
        local test_input = data[{ { 1, 3 }, { 1, -2 } }]
        -- test_target = torch.from_numpy(data[:3, 1:])
        local test_target = data[{ { 1, 3 }, { 2, -1 } }]
        assert.are.same({ N - 3, L - 1 }, input.shape)
        assert.are.same({ 3, L - 1 }, test_target.shape)
        -- build the model
        local seq = Sequence()
        seq:double()
        assert.are.equal("float64", seq.lstm1.weight_ih.dtype)
        local criterion = nn.MSELoss()
        -- optimizer = optim.LBFGS(seq.parameters(), lr=0.8)
        local optimizer = optim.LBFGS(seq:parameters(), { lr = 0.8 })
        local step_losses = {}
        -- for i in range(opt.steps): (15 in the script; 2 here, each up to 20 evaluations)
        for i = 1, 2 do
            local closure_losses = {}
            local function closure()
                optimizer:zero_grad()
                local out = seq(input)
                local loss = criterion(out, target)
                closure_losses[#closure_losses + 1] = loss:item()
                loss:backward()
                return loss
            end
            -- optimizer.step(closure)
            local orig = optimizer:step(closure)
            -- LBFGS.step returns the loss of the closure's first call
            assert.are.equal(closure_losses[1], orig:item())
            assert.is_true(#closure_losses >= 2, "LBFGS evaluated the closure more than once")
            step_losses[i] = closure_losses[#closure_losses]
            -- begin to predict, no need to track gradient here
            -- with torch.no_grad():
            tide.no_grad(function()
                local future = 5
                -- pred = seq(test_input, future=future)
                local pred = seq(test_input, future)
                assert.are.same({ 3, L - 1 + future }, pred.shape)
                assert.are.equal("float64", pred.dtype)
                -- loss = criterion(pred[:, :-future], test_target)
                local loss = criterion(pred[{ {}, { 1, -future - 1 } }], test_target)
                assert_finite(loss:item(), "test loss")
                -- y = pred.detach().numpy()
                local y = pred:detach():tolist()
                assert.are.equal(L - 1 + future, #y[1])
            end)
        end
        for i = 1, #step_losses do
            assert_finite(step_losses[i], "LBFGS loss")
        end
        assert.is_true(step_losses[#step_losses] < step_losses[1],
            "LBFGS loss fell: " .. step_losses[1] .. " -> " .. step_losses[#step_losses])
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. siamese_network/main.py
---------------------------------------------------------------------------------------------
describe("siamese_network/main.py", function()
    -- torchvision.models.resnet18(weights=None), shrunk: the same children (conv1, bn1, relu,
    -- maxpool, layer1, avgpool, fc) around one small residual-free conv block
    local function resnet_tiny()
        local m = nn.Module()
        m.conv1 = nn.Conv2d(3, 8, { kernel_size = 7, stride = 2, padding = 3, bias = false })
        m.bn1 = nn.BatchNorm2d(8)
        m.relu = nn.ReLU({ inplace = true })
        m.maxpool = nn.MaxPool2d({ kernel_size = 3, stride = 2, padding = 1 })
        m.layer1 = nn.Sequential(nn.Conv2d(8, 8, 3, { padding = 1, bias = false }), nn.BatchNorm2d(8),
            nn.ReLU({ inplace = true }))
        m.avgpool = nn.AdaptiveAvgPool2d({ 1, 1 })
        m.fc = nn.Linear(8, 1000)
        return m
    end

    -- class SiameseNetwork(nn.Module):
    local SiameseNetwork = nn.Module:extend("SiameseNetwork")
    function SiameseNetwork:init()
        -- self.resnet = torchvision.models.resnet18(weights=None)
        self.resnet = resnet_tiny()
        -- self.resnet.conv1 = nn.Conv2d(1, 64, kernel_size=(7, 7), stride=(2, 2), padding=(3, 3), bias=False)
        self.resnet.conv1 = nn.Conv2d(1, 8, { kernel_size = { 7, 7 }, stride = { 2, 2 }, padding = { 3, 3 },
            bias = false })
        self.fc_in_features = self.resnet.fc.in_features
        -- self.resnet = torch.nn.Sequential(*(list(self.resnet.children())[:-1]))
        local children = self.resnet:children()
        self.resnet = nn.Sequential(unpack(children, 1, #children - 1))
        -- self.fc = nn.Sequential(nn.Linear(self.fc_in_features * 2, 256), nn.ReLU(inplace=True), nn.Linear(256, 1))
        self.fc = nn.Sequential(
            nn.Linear(self.fc_in_features * 2, 256),
            nn.ReLU({ inplace = true }),
            nn.Linear(256, 1)
        )
        self.sigmoid = nn.Sigmoid()
        -- initialize the weights
        -- self.resnet.apply(self.init_weights)
        self.resnet:apply(function(m) self:init_weights(m) end)
        self.fc:apply(function(m) self:init_weights(m) end)
    end

    function SiameseNetwork:init_weights(m)
        -- if isinstance(m, nn.Linear):
        if isinstance(m, nn.Linear) then
            -- torch.nn.init.xavier_uniform_(m.weight)
            nn.init.xavier_uniform_(m.weight)
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

    -- class APP_MATCHER(Dataset):
    local APP_MATCHER = tide.data.Dataset:extend("APP_MATCHER")
    function APP_MATCHER:init(n)
        -- self.dataset = datasets.MNIST(root, train=train, download=download): n random images
        self.dataset = { data = tide.randint(0, 256, { n, 28, 28 }), targets = tide.arange(n) % 10 }
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
            -- self.grouped_examples[i] = np.where((np_arr==i))[0]
            self.grouped_examples[i] = tide.where(np_arr:eq(i))[1]
        end
    end

    function APP_MATCHER:__len__()
        -- return self.data.shape[0]
        return self.data.shape[1]
    end

    function APP_MATCHER:__getitem__(index)
        -- selected_class = random.randint(0, 9)
        local selected_class = math.random(0, 9)
        -- random_index_1 = random.randint(0, self.grouped_examples[selected_class].shape[0]-1)
        local random_index_1 = math.random(1, self.grouped_examples[selected_class].shape[1])
        local index_1 = self.grouped_examples[selected_class][random_index_1]
        -- image_1 = self.data[index_1].clone().float()
        local image_1 = self.data[index_1]:clone():float()
        local image_2, target
        -- if index % 2 == 0: (index is 0-based there)
        if (index - 1) % 2 == 0 then
            local random_index_2 = math.random(1, self.grouped_examples[selected_class].shape[1])
            while random_index_2 == random_index_1 do
                random_index_2 = math.random(1, self.grouped_examples[selected_class].shape[1])
            end
            local index_2 = self.grouped_examples[selected_class][random_index_2]
            image_2 = self.data[index_2]:clone():float()
            -- target = torch.tensor(1, dtype=torch.float)
            target = tide.tensor(1, { dtype = tide.float })
        else
            local other_selected_class = math.random(0, 9)
            while other_selected_class == selected_class do
                other_selected_class = math.random(0, 9)
            end
            local random_index_2 = math.random(1, self.grouped_examples[other_selected_class].shape[1])
            local index_2 = self.grouped_examples[other_selected_class][random_index_2]
            image_2 = self.data[index_2]:clone():float()
            target = tide.tensor(0, { dtype = tide.float })
        end
        return image_1, image_2, target
    end

    it("conv tower, torch.cat((o1, o2), 1), BCELoss on pairs, Adadelta and StepLR", function()
        tide.manual_seed(1)
        math.randomseed(1)
        local device = tide.device("cpu")
        local lr, gamma = 1.0, 0.7
        local train_dataset = APP_MATCHER(40)
        local test_dataset = APP_MATCHER(20)
        -- the grouping: 4 examples of each digit, at the 1-based positions i, i + 10, ...
        assert.are.same({ 1, 11, 21, 31 }, train_dataset.grouped_examples[0]:tolist())
        local a, b, t = train_dataset:get(1)
        assert.are.same({ 1, 28, 28 }, a.shape)
        assert.are.same({ 1, 28, 28 }, b.shape)
        assert.are.equal(1, t:item()) -- index 0 (even): a positive pair
        assert.are.equal(0, select(3, train_dataset:get(2)):item())
        -- train_loader = torch.utils.data.DataLoader(train_dataset,**train_kwargs)
        local train_loader = tide.data.DataLoader(train_dataset, { batch_size = 8, shuffle = true })
        local test_loader = tide.data.DataLoader(test_dataset, { batch_size = 10 })

        -- model = SiameseNetwork().to(device)
        local model = SiameseNetwork():to(device)
        assert.are.equal(8, model.fc_in_features)
        assert.are.equal(6, #model.resnet:children())
        assert.is_true(math.abs(model.fc[1].bias[1]:item() - 0.01) < 1e-7)
        -- optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
        local optimizer = optim.Adadelta(model:parameters(), { lr = lr })
        -- scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
        local scheduler = optim.lr_scheduler.StepLR(optimizer, { step_size = 1, gamma = gamma })

        local function train()
            model:train()
            local criterion = nn.BCELoss()
            local losses = {}
            -- for batch_idx, (images_1, images_2, targets) in enumerate(train_loader):
            for images_1, images_2, targets in train_loader:iter() do
                -- images_1, images_2, targets = images_1.to(device), images_2.to(device), targets.to(device)
                images_1, images_2, targets = images_1:to(device), images_2:to(device), targets:to(device)
                optimizer:zero_grad()
                -- outputs = model(images_1, images_2).squeeze()
                local outputs = model(images_1, images_2):squeeze()
                assert.are.same({ 8 }, outputs.shape)
                local loss = criterion(outputs, targets)
                loss:backward()
                optimizer:step()
                losses[#losses + 1] = loss:item()
            end
            return losses
        end

        local function test()
            model:eval()
            local test_loss, correct = 0, 0
            local criterion = nn.BCELoss()
            tide.no_grad(function()
                for images_1, images_2, targets in test_loader:iter() do
                    local outputs = model(images_1, images_2):squeeze()
                    -- test_loss += criterion(outputs, targets).sum().item()  # sum up batch loss
                    test_loss = test_loss + criterion(outputs, targets):sum():item()
                    -- pred = torch.where(outputs > 0.5, 1, 0)
                    -- GAP: Lua's < and > on a tensor must give one boolean, so tide raises there;
                    -- the elementwise comparison is written outputs:gt(0.5)
                    local pred = tide.where(outputs:gt(0.5), 1, 0)
                    assert.are.equal("int64", pred.dtype)
                    -- correct += pred.eq(targets.view_as(pred)).sum().item()
                    correct = correct + pred:eq(targets:view_as(pred)):sum():item()
                end
            end)
            -- test_loss /= len(test_loader.dataset)
            test_loss = test_loss / test_loader.dataset:len()
            return test_loss, correct
        end

        local all = {}
        -- for epoch in range(1, args.epochs + 1):
        for epoch = 1, 2 do
            local losses = train()
            assert.are.equal(5, #losses)
            for _, l in ipairs(losses) do
                assert_finite(l, "BCELoss")
                all[#all + 1] = l
            end
            local test_loss, correct = test()
            assert_finite(test_loss, "test loss")
            assert.is_true(correct >= 0 and correct <= 20)
            scheduler:step()
            assert.is_true(math.abs(optimizer.param_groups[1].lr - lr * gamma ^ epoch) < 1e-12)
        end
        -- BCE of sigmoid outputs against 0/1 targets starts near log(2)
        assert.is_true(all[1] > 0.3 and all[1] < 1.5, "first BCE " .. all[1])
    end)
end)

---------------------------------------------------------------------------------------------
-- 4. karpathy's makemore MLP ("Building makemore" parts 2 and 3)
---------------------------------------------------------------------------------------------
describe("makemore MLP (Building makemore parts 2 and 3)", function()
    it("C[X], emb.view, manual BatchNorm, F.cross_entropy, manual SGD, multinomial sampling", function()
        -- words = open('names.txt', 'r').read().splitlines()
        local words = { "emma", "olivia", "ava", "isabella", "sophia", "charlotte", "mia", "amelia",
            "harper", "evelyn", "abigail", "emily", "elizabeth", "mila", "ella", "avery" }
        -- chars = sorted(list(set(''.join(words))))
        local set = {}
        for _, w in ipairs(words) do
            for ch in w:gmatch(".") do
                set[ch] = true
            end
        end
        local chars = {}
        for ch in pairs(set) do
            chars[#chars + 1] = ch
        end
        table.sort(chars)
        -- stoi = {s:i+1 for i,s in enumerate(chars)}; stoi['.'] = 0 (1-based here: '.' is 1)
        local stoi = { ["."] = 1 }
        for i, s in ipairs(chars) do
            stoi[s] = i + 1
        end
        -- itos = {i:s for s,i in stoi.items()}
        local itos = {}
        for s, i in pairs(stoi) do
            itos[i] = s
        end
        -- vocab_size = len(itos)
        local vocab_size = #itos
        assert.are.equal(#chars + 1, vocab_size)

        local block_size = 3
        local function build_dataset(ws)
            local X, Y = {}, {}
            for _, w in ipairs(ws) do
                -- context = [0] * block_size
                local context = {}
                for k = 1, block_size do
                    context[k] = 1
                end
                -- for ch in w + '.':
                for ch in (w .. "."):gmatch(".") do
                    local ix = stoi[ch]
                    X[#X + 1] = context
                    Y[#Y + 1] = ix
                    -- context = context[1:] + [ix]
                    context = { context[2], context[3], ix }
                end
            end
            -- X = torch.tensor(X); Y = torch.tensor(Y)
            return tide.tensor(X), tide.tensor(Y)
        end

        -- n1 = int(0.8*len(words))
        local n1 = math.floor(0.8 * #words)
        -- Xtr, Ytr = build_dataset(words[:n1]); Xdev, Ydev = build_dataset(words[n1:])
        local Xtr, Ytr = build_dataset({ unpack(words, 1, n1) })
        local Xdev, Ydev = build_dataset({ unpack(words, n1 + 1) })
        assert.are.equal("int64", Xtr.dtype)
        assert.are.same({ Ytr:size(1), block_size }, Xtr.shape)

        local n_embd, n_hidden = 10, 64
        -- g = torch.Generator().manual_seed(2147483647)
        local g = tide.Generator():manual_seed(2147483647)
        -- C  = torch.randn((vocab_size, n_embd),            generator=g)
        local C = tide.randn({ vocab_size, n_embd }, { generator = g })
        -- W1 = torch.randn((n_embd * block_size, n_hidden), generator=g) * (5/3)/((n_embd * block_size)**0.5)
        local W1 = tide.randn({ n_embd * block_size, n_hidden }, { generator = g }) * (5 / 3) /
            ((n_embd * block_size) ^ 0.5)
        -- b1 = torch.randn(n_hidden,                        generator=g) * 0.01
        local b1 = tide.randn(n_hidden, { generator = g }) * 0.01
        -- W2 = torch.randn((n_hidden, vocab_size),          generator=g) * 0.01
        local W2 = tide.randn({ n_hidden, vocab_size }, { generator = g }) * 0.01
        -- b2 = torch.randn(vocab_size,                      generator=g) * 0
        local b2 = tide.randn(vocab_size, { generator = g }) * 0
        -- bngain = torch.ones((1, n_hidden)); bnbias = torch.zeros((1, n_hidden))
        local bngain = tide.ones({ 1, n_hidden })
        local bnbias = tide.zeros({ 1, n_hidden })
        local bnmean_running = tide.zeros({ 1, n_hidden })
        local bnstd_running = tide.ones({ 1, n_hidden })

        local parameters = { C, W1, W2, b2, bngain, bnbias }
        -- print(sum(p.nelement() for p in parameters))
        local nparams = 0
        for _, p in ipairs(parameters) do
            nparams = nparams + p:nelement()
        end
        assert.are.equal(vocab_size * n_embd + 30 * n_hidden + n_hidden * vocab_size + vocab_size +
            2 * n_hidden, nparams)
        for _, p in ipairs(parameters) do
            p.requires_grad = true
        end

        local max_steps, batch_size = 30, 32
        local lossi, losses = {}, {}
        for i = 0, max_steps - 1 do
            -- ix = torch.randint(0, Xtr.shape[0], (batch_size,), generator=g)
            -- (1-based indices: randint(1, n + 1))
            local ix = tide.randint(1, Xtr.shape[1] + 1, { batch_size }, { generator = g })
            -- Xb, Yb = Xtr[ix], Ytr[ix]
            local Xb, Yb = Xtr[ix], Ytr[ix]
            -- emb = C[Xb]
            local emb = C[Xb]
            assert.are.same({ batch_size, block_size, n_embd }, emb.shape)
            -- embcat = emb.view(emb.shape[0], -1)
            local embcat = emb:view(emb.shape[1], -1)
            -- hpreact = embcat @ W1 #+ b1
            -- GAP: Lua has no @ operator; embcat @ W1 is written embcat:matmul(W1)
            local hpreact = embcat:matmul(W1)
            -- bnmeani = hpreact.mean(0, keepdim=True)
            local bnmeani = hpreact:mean(1, { keepdim = true })
            -- bnstdi = hpreact.std(0, keepdim=True)
            local bnstdi = hpreact:std(1, { keepdim = true })
            assert.are.same({ 1, n_hidden }, bnstdi.shape)
            hpreact = bngain * (hpreact - bnmeani) / bnstdi + bnbias
            -- with torch.no_grad():
            tide.no_grad(function()
                bnmean_running = 0.999 * bnmean_running + 0.001 * bnmeani
                bnstd_running = 0.999 * bnstd_running + 0.001 * bnstdi
            end)
            assert.is_false(bnmean_running.requires_grad)
            local h = tide.tanh(hpreact)
            local logits = h:matmul(W2) + b2
            local loss = F.cross_entropy(logits, Yb)

            for _, p in ipairs(parameters) do
                -- p.grad = None
                p.grad = nil
            end
            loss:backward()

            -- lr = 0.1 if i < 100000 else 0.01
            local lr = i < 20 and 0.1 or 0.01
            for _, p in ipairs(parameters) do
                -- p.data += -lr * p.grad
                -- GAP: Lua has no +=: the in-place add is what += does to p.data
                p.data:add_(-lr * p.grad)
            end
            -- lossi.append(loss.log10().item())
            lossi[#lossi + 1] = loss:log10():item()
            losses[#losses + 1] = loss:item()
        end
        -- the first loss is near -log(1/vocab_size): W2 * 0.01 makes the logits near 0
        assert.is_true(math.abs(losses[1] - math.log(vocab_size)) < 0.05, "first loss " .. losses[1])
        assert.is_true(math.abs(lossi[1] - math.log(losses[1]) / math.log(10)) < 1e-5)
        local early, late = 0, 0
        for k = 1, 5 do
            early = early + losses[k]
            late = late + losses[max_steps - 5 + k]
        end
        assert.is_true(late < early, "makemore loss fell: " .. early / 5 .. " -> " .. late / 5)
        -- the running mean moved 0.1% of the way per step toward the batch means
        assert.is_true(bnmean_running:abs():max():item() > 0)

        -- calibrate the batch norm at the end of training
        local bnmean, bnstd
        tide.no_grad(function()
            local emb = C[Xtr]
            local embcat = emb:view(emb.shape[1], -1)
            local hpreact = embcat:matmul(W1) -- + b1
            bnmean = hpreact:mean(1, { keepdim = true })
            bnstd = hpreact:std(1, { keepdim = true })
            -- the batch's std is the unbiased one (PyTorch's default): n - 1 in the denominator
            local n = hpreact:size(1)
            local var = ((hpreact - bnmean) ^ 2):sum(1, { keepdim = true }) / (n - 1)
            assert.is_true((var:sqrt() - bnstd):abs():max():item() < 1e-4)
        end)

        -- @torch.no_grad() def split_loss(split):
        local split_loss = tide.no_grad()(function(split)
            -- x,y = {'train': (Xtr, Ytr), 'val': (Xdev, Ydev)}[split]
            local x, y = unpack(({ train = { Xtr, Ytr }, val = { Xdev, Ydev } })[split])
            local emb = C[x]
            local embcat = emb:view(emb.shape[1], -1)
            local hpreact = embcat:matmul(W1)
            hpreact = bngain * (hpreact - bnmean) / bnstd + bnbias
            local h = tide.tanh(hpreact)
            local logits = h:matmul(W2) + b2
            local loss = F.cross_entropy(logits, y)
            assert.is_nil(loss.grad_fn)
            return loss:item()
        end)
        assert_finite(split_loss("train"), "train split loss")
        assert_finite(split_loss("val"), "val split loss")

        -- sample from the model
        -- g = torch.Generator().manual_seed(2147483647 + 10)
        g = tide.Generator():manual_seed(2147483647 + 10)
        local names = {}
        for _ = 1, 5 do
            local out = {}
            local context = { 1, 1, 1 }
            while true do
                -- emb = C[torch.tensor([context])] # (1,block_size,d)
                local emb = C[tide.tensor({ context })]
                assert.are.same({ 1, block_size, n_embd }, emb.shape)
                -- h = torch.tanh(emb.view(1, -1) @ W1 + b1)
                local h = tide.tanh(emb:view(1, -1):matmul(W1) + b1)
                local logits = h:matmul(W2) + b2
                -- probs = F.softmax(logits, dim=1)
                local probs = F.softmax(logits, 2)
                -- ix = torch.multinomial(probs, num_samples=1, generator=g).item()
                local ix = tide.multinomial(probs, { num_samples = 1, generator = g }):item()
                assert.is_true(ix >= 1 and ix <= vocab_size)
                -- context = context[1:] + [ix]
                context = { context[2], context[3], ix }
                out[#out + 1] = ix
                if ix == 1 or #out >= 30 then
                    break
                end
            end
            -- print(''.join(itos[i] for i in out))
            local s = {}
            for k, i in ipairs(out) do
                s[k] = itos[i]
            end
            names[#names + 1] = table.concat(s)
        end
        assert.are.equal(5, #names)
        -- the same generator seed draws the same names
        g = tide.Generator():manual_seed(2147483647 + 10)
        local probs = F.softmax(tide.zeros(1, vocab_size), 2)
        local a = tide.multinomial(probs, { num_samples = 1, generator = g }):item()
        g = tide.Generator():manual_seed(2147483647 + 10)
        assert.are.equal(a, tide.multinomial(probs, { num_samples = 1, generator = g }):item())
    end)
end)

---------------------------------------------------------------------------------------------
-- the gaps these ports met, fixed (values from PyTorch 1.13)
---------------------------------------------------------------------------------------------
describe("makemore's other forms", function()
    it("F.pixel_shuffle(x, upscale_factor=2) and F.pixel_unshuffle by name", function()
        local x = tide.arange(1, 17):float():view(1, 4, 2, 2)
        local y = F.pixel_shuffle(x, { upscale_factor = 2 })
        -- PyTorch 1.13: F.pixel_shuffle(torch.arange(1., 17).view(1, 4, 2, 2), 2)[0, 0, 0]
        assert.are.same({ 1, 5, 2, 6 }, y[1][1][1]:tolist())
        assert.is_true(y:equal(F.pixel_shuffle(x, 2)))
        assert.is_true(F.pixel_unshuffle(y, { downscale_factor = 2 }):equal(x))
        assert.has_error(function() F.pixel_shuffle(x, 2, { upscale_factor = 2 }) end,
            "tide: pixel_shuffle: upscale_factor given twice, as argument #2 and by name; " ..
            "pass it once")
    end)

    it("p.data = p.data - lr * p.grad: p takes the values, keeping its identity and gradient", function()
        local p = tide.tensor({ 1, 2 }, { dtype = "float64" }):requires_grad_()
        p:mul(p):sum():backward()
        local g = p.grad
        p.data = p.data - 0.5 * p.grad
        assert.are.same({ 0, 0 }, p:tolist())
        assert.is_true(p.requires_grad)
        assert.are.equal(g, p.grad)
        assert.is_true(p.is_leaf)
        -- it trains on: the next backward reaches p
        p.grad = nil
        p:add(1):pow(2):sum():backward()
        assert.are.same({ 2, 2 }, p.grad:tolist())
        assert.has_error(function() p.data = 5 end,
            "tide: t.data = v: v must be a tensor, got number")
        assert.are.same({ 0, 0 }, p:tolist())
    end)

    it("keepdims/axis (NumPy's names), F.one_hot(num_classes=), histogram(density=), F.glu/linear/pdist by name",
        function()
            -- makemore part 1: P = N.float(); P /= P.sum(1, keepdims=True)
            local N = tide.tensor({ { 1, 3 }, { 2, 2 } }):float()
            local P = N / N:sum(2, { keepdims = true })
            assert.are.same({ { 0.25, 0.75 }, { 0.5, 0.5 } }, P:tolist())
            assert.are.same({ 2, 1 }, tide.sum(N, { axis = 2, keepdims = true }).shape)
            assert.are.same({ 3, 5 }, N:sum({ axis = 1 }):tolist())
            assert.are.same({ 2, 1 }, N:std({ axis = 2, correction = 0, keepdims = true }).shape)
            assert.are.same({ 2, 2 }, N:cumsum({ axis = 2 }).shape)
            assert.has_error(function() N:sum(2, { axis = 2 }) end,
                "tide: sum: axis given twice, as dim (argument #2) and by name; pass it once")
            -- xenc = F.one_hot(xs, num_classes=27).float()
            local xenc = F.one_hot(tide.tensor({ 1, 3 }), { num_classes = 4 }):float()
            assert.are.same({ { 1, 0, 0, 0 }, { 0, 0, 1, 0 } }, xenc:tolist())
            assert.has_error(function() F.one_hot(tide.tensor({ 1 }), { num_class = 4 }) end,
                'tide: one_hot: unknown option "num_class" (did you mean "num_classes"?)')
            -- hy, hx = torch.histogram(t, density=True) (bins=100 by default)
            local hy, hx = tide.histogram(tide.tensor({ -2.0, -1.0, 0.0, 0.5, 2.0 }), { bins = 4,
                density = true })
            assert.is_true((hy - tide.tensor({ 0.2, 0.2, 0.4, 0.2 })):abs():max():item() < 1e-6)
            assert.are.same({ -2, -1, 0, 1, 2 }, hx:tolist())
            assert.are.same({ 100 }, tide.histogram(tide.randn(50), { density = true }).shape)
            local y = tide.randn(2, 4)
            assert.are.same({ 2, 2 }, F.glu(y, { dim = 2 }).shape)
            assert.has_error(function() F.glu(y, { dimm = 2 }) end,
                'tide: glu: unknown option "dimm" (did you mean "dim"?)')
            local w, b = tide.randn(3, 4), tide.randn(3)
            assert.is_true(tide.equal(F.linear(y, w, { bias = b }), F.linear(y, w, b)))
            assert.has_error(function() F.linear(y, w, { bais = b }) end,
                'tide: linear: unknown option "bais" (did you mean "bias"?)')
            assert.is_true(tide.equal(F.pdist(y, { p = 1 }), F.pdist(y, 1)))
        end)
end)

describe("tide.isinstance", function()
    it("is Python's isinstance for tide's classes and tensors", function()
        local lin = nn.Linear(2, 2)
        assert.is_true(tide.isinstance(lin, nn.Linear))
        assert.is_true(tide.isinstance(lin, nn.Module))
        assert.is_false(tide.isinstance(lin, nn.Conv2d))
        assert.is_true(tide.isinstance(optim.SGD(lin:parameters(), { lr = 0.1 }), optim.Optimizer))
        assert.is_true(tide.isinstance(tide.zeros(2), tide.Tensor))
        assert.is_false(tide.isinstance(tide.zeros(2), nn.Module))
        assert.is_false(tide.isinstance(3, nn.Module))
        assert.is_false(tide.isinstance({}, nn.Module))
    end)
end)
