-- ported_scripts56_spec.lua — PyTorch 2.x scripts ported line for line: pytorch/examples'
-- mnist/main.py at HEAD (torch.accelerator and --no-accel), distributed/minGPT-ddp's trainer
-- _run_batch (torch.amp.GradScaler(device_type), torch.amp.autocast(device_type=, dtype=,
-- enabled=)), and short scripts for 2.x APIs: nn.utils.parametrizations.weight_norm (2.1),
-- nn.Buffer (2.5), F.scaled_dot_product_attention(scale=, enable_gqa=True) under
-- nn.attention.sdpa_kernel, F.rms_norm, set_default_device/get_default_device,
-- torch.compiler.disable/is_compiling. The Python line stands above each Lua line that differs
-- from it. Dims and class targets are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite

local function dims(size)
    local t = {}
    for i = 1, #size do
        t[i] = size[i]
    end
    return t
end

local function max_diff(a, b)
    return (a - b):abs():max():item()
end

---------------------------------------------------------------------------------------------
-- 1. pytorch/examples mnist/main.py (HEAD)
---------------------------------------------------------------------------------------------
describe("mnist/main.py (HEAD: torch.accelerator, --no-accel)", function()
    it("Net, Adadelta, StepLR, train and test on the accelerator or the cpu", function()
        -- class Net(nn.Module):
        local Net = nn.Module:extend("Net")
        function Net:init()
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
            x = tide.flatten(x, 2)
            x = self.fc1(x)
            x = F.relu(x)
            x = self.dropout2(x)
            x = self.fc2(x)
            -- output = F.log_softmax(x, dim=1)
            local output = F.log_softmax(x, { dim = 2 })
            return output
        end

        local function train(args, model, device, train_loader, optimizer, epoch)
            model:train()
            local losses = {}
            -- for batch_idx, (data, target) in enumerate(train_loader):
            for batch_idx, data, target in train_loader:enumerate() do
                data, target = data:to(device), target:to(device)
                optimizer:zero_grad()
                local output = model(data)
                local loss = F.nll_loss(output, target)
                loss:backward()
                optimizer:step()
                losses[#losses + 1] = loss:item()
                if batch_idx % args.log_interval == 0 then
                    assert(epoch >= 1 and #data:size() == 4)
                    if args.dry_run then
                        break
                    end
                end
            end
            return losses
        end

        local function test(model, device, test_loader)
            model:eval()
            local test_loss = 0
            local correct = 0
            tide.no_grad(function()
                for data, target in test_loader:iter() do
                    data, target = data:to(device), target:to(device)
                    local output = model(data)
                    test_loss = test_loss + F.nll_loss(output, target, { reduction = "sum" }):item()
                    local pred = output:argmax({ dim = 2, keepdim = true })
                    correct = correct + pred:eq(target:view_as(pred)):sum():item()
                end
            end)
            test_loss = test_loss / #test_loader.dataset
            return test_loss, correct
        end

        -- args = parser.parse_args() (tiny: 2 epochs of 2 batches)
        local args = { batch_size = 4, test_batch_size = 8, epochs = 2, lr = 1.0, gamma = 0.7,
            no_accel = true, dry_run = false, seed = 1, log_interval = 1, save_model = false }

        -- use_accel = not args.no_accel and torch.accelerator.is_available()
        local use_accel = not args.no_accel and tide.accelerator.is_available()
        assert.is_false(use_accel)
        tide.manual_seed(args.seed)
        local device
        if use_accel then
            device = tide.accelerator.current_accelerator()
        else
            device = tide.device("cpu")
        end
        -- torch.accelerator.current_accelerator() is None without one, as PyTorch 2.x's
        if not tide.accelerator.is_available() then
            assert.is_nil(tide.accelerator.current_accelerator())
        end

        local train_kwargs = { batch_size = args.batch_size }
        local test_kwargs = { batch_size = args.test_batch_size }
        if use_accel then
            local accel_kwargs = { num_workers = 1, persistent_workers = true, pin_memory = true,
                shuffle = true }
            for k, v in pairs(accel_kwargs) do -- train_kwargs.update(accel_kwargs)
                train_kwargs[k] = v
                test_kwargs[k] = v
            end
        end
        -- datasets.MNIST(..., transform=Normalize((0.1307,), (0.3081,))): 8 random images
        local images = (tide.rand(8, 1, 28, 28) - 0.1307) / 0.3081
        local dataset1 = tide.data.TensorDataset(images, tide.randint(1, 11, { 8 }))
        local dataset2 = dataset1
        -- train_loader = torch.utils.data.DataLoader(dataset1, **train_kwargs)
        local train_loader = tide.data.DataLoader(dataset1, train_kwargs)
        local test_loader = tide.data.DataLoader(dataset2, test_kwargs)

        local model = Net():to(device)
        -- optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
        local optimizer = optim.Adadelta(model:parameters(), { lr = args.lr })
        -- scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
        local scheduler = optim.lr_scheduler.StepLR(optimizer, { step_size = 1, gamma = args.gamma })
        local first_test
        for epoch = 1, args.epochs do
            local losses = train(args, model, device, train_loader, optimizer, epoch)
            assert_finite(losses)
            local test_loss, correct = test(model, device, test_loader)
            assert.is_true(test_loss == test_loss and correct >= 0 and correct <= 8)
            first_test = first_test or test_loss
            scheduler:step()
        end
        assert.is_true(math.abs(optimizer.param_groups[1].lr - 0.49) < 1e-9)
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. distributed/minGPT-ddp/mingpt/trainer.py: torch.amp.GradScaler(device_type)
---------------------------------------------------------------------------------------------
describe("minGPT-ddp trainer.py (torch.amp.GradScaler(device), torch.amp.autocast)", function()
    it("_run_batch with use_amp on and off", function()
        tide.manual_seed(0)
        local config = { use_amp = true, grad_norm_clip = 1.0 }
        local device_type = "cpu"
        -- a tiny model returning (logits, loss) as minGPT's GPT
        local Tiny = nn.Module:extend("Tiny")
        function Tiny:init()
            self.emb = nn.Embedding(11, 8)
            self.head = nn.Linear(8, 11)
        end

        function Tiny:forward(idx, targets)
            local logits = self.head(self.emb(idx))
            local loss = F.cross_entropy(logits:view(-1, 11), targets:view(-1))
            return logits, loss
        end

        local model = Tiny()
        local optimizer = optim.AdamW(model:parameters(), { lr = 1e-2 })
        -- self.scaler = torch.amp.GradScaler(self.device_type)
        local scaler = tide.amp.GradScaler(device_type)
        assert.equal("cpu", scaler.device)

        local function _run_batch(source, targets, train)
            local _, loss
            -- with torch.set_grad_enabled(train), torch.amp.autocast(device_type=self.device_type,
            --         dtype=torch.float16, enabled=(self.config.use_amp)):
            local prev = tide.set_grad_enabled(train)
            tide.amp.autocast({ device_type = device_type, dtype = "bfloat16",
                enabled = config.use_amp }, function()
                    _, loss = model(source, targets)
                end)
            tide.set_grad_enabled(prev)
            if train then
                -- self.optimizer.zero_grad(set_to_none=True)
                optimizer:zero_grad({ set_to_none = true })
                if config.use_amp then
                    scaler:scale(loss):backward()
                    nn.utils.clip_grad_norm_(model:parameters(), config.grad_norm_clip)
                    scaler:step(optimizer)
                    scaler:update()
                else
                    loss:backward()
                    nn.utils.clip_grad_norm_(model:parameters(), config.grad_norm_clip)
                    optimizer:step()
                end
            end
            return loss:item()
        end

        local source = tide.randint(1, 12, { 4, 6 })
        local targets = tide.randint(1, 12, { 4, 6 })
        local first = _run_batch(source, targets, true)
        local last
        for _ = 1, 5 do
            last = _run_batch(source, targets, true)
        end
        config.use_amp = false
        last = _run_batch(source, targets, true)
        assert_finite({ first, last })
        assert.is_true(last < first)
        assert.is_true(_run_batch(source, targets, false) == _run_batch(source, targets, false))
    end)

    it("torch.amp.GradScaler(\"cuda\", enabled=...), GradScaler(\"cpu\"), device by name", function()
        -- scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
        local scaler = tide.amp.GradScaler("cuda", { enabled = false })
        assert.equal("cuda", scaler.device)
        assert.is_false(scaler:is_enabled())
        -- scaler = torch.amp.GradScaler("cpu")
        assert.is_true(tide.amp.GradScaler("cpu"):is_enabled())
        assert.equal("cpu", tide.amp.GradScaler(tide.device("cpu")).device)
        -- torch.amp.GradScaler(device="cpu", init_scale=8.0)
        local s = tide.amp.GradScaler({ device = "cpu", init_scale = 8 })
        assert.equal("cpu", s.device)
        assert.equal(8, s:get_scale())
        -- torch.cuda.amp.GradScaler() (1.13's spelling) is a "cuda" scaler
        assert.equal("cuda", tide.amp.GradScaler().device)
        assert.has_error(function() tide.amp.GradScaler("mps") end,
            "tide: GradScaler: device must be \"cuda\", \"cpu\", \"cuda:N\" or a tide.device, " ..
            "got \"mps\"; write tide.amp.GradScaler(\"cuda\", {enabled = true}) or " ..
            "tide.amp.GradScaler(\"cpu\")")
        assert.has_error(function() tide.amp.GradScaler("cpu", { device = "cpu" }) end,
            "tide: GradScaler: device given both by position and by name; give it once")
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. torch.nn.utils.parametrizations.weight_norm (PyTorch 2.1)
---------------------------------------------------------------------------------------------
describe("nn.utils.parametrizations.weight_norm", function()
    it("weight_g/weight_v as parametrizations.weight.original0/original1, trains", function()
        tide.manual_seed(0)
        -- from torch.nn.utils.parametrizations import weight_norm
        local weight_norm = nn.utils.parametrizations.weight_norm
        local lin = nn.Linear(20, 40)
        local w0 = lin.weight:clone()
        -- m = weight_norm(nn.Linear(20, 40), name='weight')
        local m = weight_norm(lin, { name = "weight" })
        -- m.parametrizations.weight.original0.size() == torch.Size([40, 1])
        assert.same({ 40, 1 }, dims(m.parametrizations.weight.original0:size()))
        assert.same({ 40, 20 }, dims(m.parametrizations.weight.original1:size()))
        assert.is_true(max_diff(m.weight, w0) < 1e-6)
        local g = m.parametrizations.weight.original0
        assert.is_true(max_diff(g:view(-1), w0:norm(2, 2)) < 1e-5)
        local keys = {}
        for k in pairs(m:state_dict()) do
            keys[#keys + 1] = k
        end
        table.sort(keys)
        assert.same({ "bias", "parametrizations.weight.original0",
            "parametrizations.weight.original1" }, keys)
        -- the weight is g v / ||v|| of the originals: doubling g doubles it
        tide.no_grad(function() g:mul_(2) end)
        assert.is_true(max_diff(m.weight, w0 * 2) < 1e-5)
        -- a few SGD steps on the originals
        local opt = optim.SGD(m:parameters(), { lr = 0.1 })
        local x, y = tide.randn(8, 20), tide.randn(8, 40)
        local first, last
        for _ = 1, 5 do
            opt:zero_grad()
            local loss = F.mse_loss(m(x), y)
            loss:backward()
            opt:step()
            first = first or loss:item()
            last = loss:item()
        end
        assert.is_true(last < first)
        -- weight_norm(conv, dim=None): one g for the whole weight
        local c = weight_norm(nn.Conv1d(2, 3, 3), { name = "weight", dim = false })
        assert.equal(0, c.parametrizations.weight.original0:dim())
        -- weight_norm(m, "weight", 0) by position
        assert.same({ 4, 1 }, dims(weight_norm(nn.Linear(3, 4), "weight", 1)
            .parametrizations.weight.original0:size()))
        assert.has_error(function() weight_norm(nn.Linear(2, 2), { dim = 5 }) end,
            "tide: parametrizations.weight_norm: dim must be a dim of the 2-D weight (1-based) " ..
            "or false for the whole tensor (Python's dim=None), got 5")
    end)
end)

---------------------------------------------------------------------------------------------
-- 4. nn.Buffer (PyTorch 2.5)
---------------------------------------------------------------------------------------------
describe("nn.Buffer", function()
    it("a module attribute registers as a buffer; persistent=False keeps it out of state_dict",
        function()
            -- class RunningMean(nn.Module):
            local RunningMean = nn.Module:extend("RunningMean")
            function RunningMean:init(n)
                -- self.mean = nn.Buffer(torch.zeros(n))
                self.mean = nn.Buffer(tide.zeros(n))
                -- self.count = nn.Buffer(torch.zeros(()), persistent=False)
                self.count = nn.Buffer(tide.zeros({}), { persistent = false })
                self.proj = nn.Linear(n, n)
            end

            function RunningMean:forward(x)
                if self.training then
                    tide.no_grad(function()
                        self.mean:mul_(0.9):add_(x:mean(1), { alpha = 0.1 })
                        self.count:add_(1)
                    end)
                end
                return self.proj(x - self.mean)
            end

            local m = RunningMean(3)
            m(tide.ones(4, 3))
            assert.equal(2, #m:buffers())
            assert.equal(2, #m:parameters())
            local sd = m:state_dict()
            assert.is_not_nil(sd.mean)
            assert.is_nil(sd.count)
            assert.is_true(max_diff(sd.mean, tide.full({ 3 }, 0.1)) < 1e-6)
            assert.equal(1, m.count:item())
            assert.has_error(function() nn.Buffer(3) end,
                "tide: Buffer: expected a tensor, got number; write nn.Buffer(tide.zeros(3)) " ..
                "or nn.Buffer(t, {persistent = false})")
        end)
end)

---------------------------------------------------------------------------------------------
-- 5. scaled_dot_product_attention(scale=, enable_gqa=True), rms_norm
---------------------------------------------------------------------------------------------
describe("2.x attention and normalization functions", function()
    it("sdpa_kernel + scaled_dot_product_attention(..., scale=, enable_gqa=True)", function()
        tide.manual_seed(0)
        -- query = torch.randn(2, 8, 5, 16); key = torch.randn(2, 2, 5, 16); value = ...
        local query = tide.randn(2, 8, 5, 16)
        local key = tide.randn(2, 2, 5, 16)
        local value = tide.randn(2, 2, 5, 16)
        local out
        -- with sdpa_kernel(backends=[SDPBackend.MATH]):
        nn.attention.sdpa_kernel({ nn.attention.SDPBackend.MATH }, function()
            -- out = F.scaled_dot_product_attention(query, key, value, scale=0.5, enable_gqa=True)
            out = F.scaled_dot_product_attention(query, key, value, { scale = 0.5, enable_gqa = true })
        end)
        local k4 = key:repeat_interleave(4, { dim = 2 })
        local v4 = value:repeat_interleave(4, { dim = 2 })
        local ref = tide.softmax(query:matmul(k4:transpose(-2, -1)) * 0.5, -1):matmul(v4)
        assert.is_true(max_diff(out, ref) < 1e-5)
    end)

    it("F.rms_norm(x, normalized_shape, weight, eps)", function()
        tide.manual_seed(0)
        local x = tide.randn(2, 3, 4)
        local w = tide.randn(4)
        -- y = F.rms_norm(x, (4,), weight=w, eps=1e-6)
        local y = F.rms_norm(x, { 4 }, { weight = w, eps = 1e-6 })
        local ref = x * tide.rsqrt(x:pow(2):mean({ dim = -1, keepdim = true }) + 1e-6) * w
        assert.is_true(max_diff(y, ref) < 1e-5)
        assert.is_true(max_diff(F.rms_norm(x, { 4 }, w, 1e-6), ref) < 1e-5)
    end)
end)

---------------------------------------------------------------------------------------------
-- 6. set_default_device, torch.compiler
---------------------------------------------------------------------------------------------
describe("torch.set_default_device and torch.compiler", function()
    it("set_default_device / get_default_device", function()
        -- torch.set_default_device("cpu"); torch.get_default_device() == torch.device("cpu")
        local prev = tide.get_default_device()
        tide.set_default_device("cpu")
        assert.equal("cpu", tostring(tide.get_default_device()))
        assert.equal("cpu", tostring(tide.zeros(2).device))
        tide.set_default_device(prev)
    end)

    it("torch.compiler.disable and is_compiling", function()
        local compiler = tide.compiler or require("tide.compiler") -- see the report: tide.compiler
        -- @torch.compiler.disable
        -- def log_stats(x): ...
        local log_stats = compiler.disable(function(x)
            -- if not torch.compiler.is_compiling(): print(...)
            assert.is_false(compiler.is_compiling())
            return x:sum()
        end)
        -- @torch.compiler.disable(recursive=False)
        local helper = compiler.disable({ recursive = false })(function(x) return x * 2 end)
        local model = tide.compile(nn.Linear(3, 3))
        local x = tide.randn(2, 3)
        assert.equal(x:sum():item(), log_stats(x):item())
        assert.is_true(max_diff(helper(model(x)), model(x) * 2) == 0)
        assert.has_error(function() compiler.disable(3) end,
            "tide: compiler.disable: expected a function or a module, got number; write " ..
            "tide.compiler.disable(fn) or tide.compiler.disable({recursive = false})(fn)")
    end)
end)
