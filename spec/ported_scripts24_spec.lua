-- ported_scripts24_spec.lua — pytorch/examples imagenet/main.py (single process: model .to(device),
-- CrossEntropyLoss, SGD with momentum and weight_decay, StepLR, train()/validate(), AverageMeter,
-- ProgressMeter, Summary, accuracy() with topk, save_checkpoint with is_best, resume) and the
-- pytorch/tutorials recipes changing_default_device.py, module_load_state_dict_tips.py
-- (torch.load(mmap=True), load_state_dict(assign=True)), reasoning_about_shapes.py and
-- timer_quick_start.py / benchmark.py (torch.utils.benchmark: tide.utils.benchmark), ported line
-- for line on tiny random data. The Python line stands above each Lua line that differs from
-- it; a line tide cannot write as Python does is marked `-- GAP:`. Dims and classes are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local StepLR = tide.optim.lr_scheduler.StepLR
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite

---------------------------------------------------------------------------------------------
-- 1. imagenet/main.py
---------------------------------------------------------------------------------------------
describe("imagenet/main.py", function()
    -- class Summary(Enum): NONE = 0 ...
    local Summary = { NONE = 0, AVERAGE = 1, SUM = 2, COUNT = 3 }

    -- print() collected, to check the meters' formatting
    local printed
    local function print(...) -- luacheck: ignore
        printed[#printed + 1] = table.concat({ ... }, " ")
    end

    -- class AverageMeter(object):
    local AverageMeter = {}
    AverageMeter.__index = AverageMeter
    -- def __init__(self, name, use_accel, fmt=':f', summary_type=Summary.AVERAGE):
    -- (fmt is the printf form of Python's format spec: ':6.3f' -> '6.3f')
    function AverageMeter.new(name, use_accel, fmt, summary_type)
        local self = setmetatable({}, AverageMeter)
        self.name = name
        self.use_accel = use_accel
        self.fmt = fmt or "f"
        self.summary_type = summary_type or Summary.AVERAGE
        self:reset()
        return self
    end

    function AverageMeter:reset()
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0
    end

    function AverageMeter:update(val, n)
        n = n or 1
        self.val = val
        self.sum = self.sum + val * n
        self.count = self.count + n
        self.avg = self.sum / self.count
    end

    -- def __str__(self):
    function AverageMeter:__tostring()
        -- fmtstr = '{name} {val' + self.fmt + '} ({avg' + self.fmt + '})'
        local fmtstr = "%s %" .. self.fmt .. " (%" .. self.fmt .. ")"
        -- return fmtstr.format(**self.__dict__)
        return fmtstr:format(self.name, self.val, self.avg)
    end

    function AverageMeter:summary()
        local fmtstr = ""
        if self.summary_type == Summary.NONE then
            fmtstr = ""
        elseif self.summary_type == Summary.AVERAGE then
            fmtstr = ("%s %.3f"):format(self.name, self.avg)
        elseif self.summary_type == Summary.SUM then
            fmtstr = ("%s %.3f"):format(self.name, self.sum)
        elseif self.summary_type == Summary.COUNT then
            fmtstr = ("%s %.3f"):format(self.name, self.count)
        else
            error(("invalid summary type %s"):format(tostring(self.summary_type)))
        end
        return fmtstr
    end

    -- class ProgressMeter(object):
    local ProgressMeter = {}
    ProgressMeter.__index = ProgressMeter
    function ProgressMeter.new(num_batches, meters, prefix)
        local self = setmetatable({}, ProgressMeter)
        self.batch_fmtstr = self:_get_batch_fmtstr(num_batches)
        self.meters = meters
        self.prefix = prefix or ""
        return self
    end

    function ProgressMeter:display(batch)
        -- entries = [self.prefix + self.batch_fmtstr.format(batch)]
        local entries = { self.prefix .. self.batch_fmtstr:format(batch) }
        -- entries += [str(meter) for meter in self.meters]
        for _, meter in ipairs(self.meters) do
            entries[#entries + 1] = tostring(meter)
        end
        print(table.concat(entries, "\t"))
    end

    function ProgressMeter:display_summary()
        local entries = { " *" }
        for _, meter in ipairs(self.meters) do
            entries[#entries + 1] = meter:summary()
        end
        print(table.concat(entries, " "))
    end

    function ProgressMeter:_get_batch_fmtstr(num_batches)
        -- num_digits = len(str(num_batches // 1))
        local num_digits = #tostring(math.floor(num_batches))
        -- fmt = '{:' + str(num_digits) + 'd}'
        local fmt = "%" .. num_digits .. "d"
        return "[" .. fmt .. "/" .. fmt:format(num_batches) .. "]"
    end

    -- def accuracy(output, target, topk=(1,)):
    local function accuracy(output, target, topk)
        topk = topk or { 1 }
        -- with torch.no_grad():
        return tide.no_grad(function()
            -- maxk = max(topk)
            local maxk = math.max(unpack(topk))
            -- batch_size = target.size(0)
            local batch_size = target:size(1)

            -- _, pred = output.topk(maxk, 1, True, True)
            local _, pred = output:topk(maxk, 2, true, true)
            pred = pred:t()
            -- correct = pred.eq(target.view(1, -1).expand_as(pred))
            local correct = pred:eq(target:view(1, -1):expand_as(pred))

            local res = {}
            for _, k in ipairs(topk) do
                -- correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
                local correct_k = correct[{ { 1, k } }]:reshape(-1):float():sum(1, { keepdim = true })
                -- res.append(correct_k.mul_(100.0 / batch_size))
                res[#res + 1] = correct_k:mul_(100.0 / batch_size)
            end
            return res
        end)
    end

    -- def save_checkpoint(state, is_best, filename='checkpoint.pth.tar'):
    local dir = os.tmpname()
    os.remove(dir)
    local function copyfile(src, dst) -- shutil.copyfile
        local i = assert(io.open(src, "rb"))
        local o = assert(io.open(dst, "wb"))
        o:write(i:read("*a"))
        i:close()
        o:close()
    end
    local function save_checkpoint(state, is_best, filename)
        filename = filename or dir .. "-checkpoint.pth.tar"
        tide.save(state, filename)
        if is_best then
            copyfile(filename, dir .. "-model_best.pth.tar")
        end
    end

    it("accuracy(): topk, pred.t(), eq/expand_as, correct[:k] (PyTorch's numbers)", function()
        local output = tide.tensor({ { 0.1, 0.9, 0.0, 0.3, 0.2 }, { 0.8, 0.1, 0.05, 0.03, 0.02 },
            { 0.2, 0.1, 0.3, 0.25, 0.6 }, { 0.5, 0.4, 0.3, 0.2, 0.1 } })
        -- target = torch.tensor([1, 3, 0, 4]) (1-based classes)
        local target = tide.tensor({ 2, 4, 1, 5 })
        local res = accuracy(output, target, { 1, 2, 5 })
        -- PyTorch: tensor([25.]), tensor([25.]), tensor([100.])
        assert.are.equal("tide.Size({1})", tostring(res[1]:size()))
        assert.are.equal(25, res[1][1]:item())
        assert.are.equal(25, res[2][1]:item())
        assert.are.equal(100, res[3][1]:item())
    end)

    it("AverageMeter / ProgressMeter formatting (Python's str.format output)", function()
        printed = {}
        local losses = AverageMeter.new("Loss", false, ".4e", Summary.NONE)
        local top1 = AverageMeter.new("Acc@1", false, "6.2f", Summary.AVERAGE)
        losses:update(1.5, 4)
        losses:update(0.5, 4)
        top1:update(50, 2)
        top1:update(25, 2)
        -- Python: 'Loss 5.0000e-01 (1.0000e+00)', 'Acc@1  25.00 ( 37.50)'
        assert.are.equal("Loss 5.0000e-01 (1.0000e+00)", tostring(losses))
        assert.are.equal("Acc@1  25.00 ( 37.50)", tostring(top1))
        local progress = ProgressMeter.new(3, { losses, top1 }, ("Epoch: [%d]"):format(0))
        progress:display(1)
        progress:display_summary()
        assert.are.equal("Epoch: [0][1/3]\tLoss 5.0000e-01 (1.0000e+00)\tAcc@1  25.00 ( 37.50)",
            printed[1])
        assert.are.equal(" *  Acc@1 37.500", printed[2])
    end)

    it("main_worker: SGD(momentum, weight_decay), StepLR, train/validate, checkpoint, resume",
        function()
        printed = {}
        tide.manual_seed(0)
        -- parser.parse_args(), shrunk
        local args = { arch = "tiny", lr = 0.1, momentum = 0.9, weight_decay = 1e-4,
            start_epoch = 0, epochs = 3, print_freq = 1, batch_size = 4, workers = 0,
            no_accel = true, distributed = false, multiprocessing_distributed = false,
            resume = "", evaluate = false }
        local best_acc1 = 0
        -- models.__dict__[args.arch](): a small model in place of torchvision's
        local models = {
            tiny = function()
                return nn.Sequential(nn.Conv2d(3, 8, 3, { padding = 1 }), nn.ReLU(),
                    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5))
            end,
        }

        -- def train(train_loader, model, criterion, optimizer, epoch, device, args):
        local function train(train_loader, model, criterion, optimizer, epoch, device, args_)
            local use_accel = not args_.no_accel and tide.accelerator.is_available()
            local batch_time = AverageMeter.new("Time", use_accel, "6.3f", Summary.NONE)
            local data_time = AverageMeter.new("Data", use_accel, "6.3f", Summary.NONE)
            local losses = AverageMeter.new("Loss", use_accel, ".4e", Summary.NONE)
            local top1 = AverageMeter.new("Acc@1", use_accel, "6.2f", Summary.NONE)
            local top5 = AverageMeter.new("Acc@5", use_accel, "6.2f", Summary.NONE)
            -- len(train_loader)   (loader:len(): Lua 5.1 and LuaJIT call no __len on a table)
            local progress = ProgressMeter.new(
                train_loader:len(),
                { batch_time, data_time, losses, top1, top5 },
                ("Epoch: [%d]"):format(epoch))

            -- switch to train mode
            model:train()

            local end_ = os.clock()
            local seen = {}
            -- for i, (images, target) in enumerate(train_loader):
            local i = -1
            for images, target in train_loader:iter() do
                i = i + 1
                data_time:update(os.clock() - end_)
                -- images = images.to(device, non_blocking=True)
                images = images:to(device, { non_blocking = true })
                target = target:to(device, { non_blocking = true })

                local output = model(images)
                local loss = criterion(output, target)

                -- acc1, acc5 = accuracy(output, target, topk=(1, 5))
                local acc = accuracy(output, target, { 1, 5 })
                local acc1, acc5 = acc[1], acc[2]
                -- losses.update(loss.item(), images.size(0))
                losses:update(loss:item(), images:size(1))
                -- top1.update(acc1[0], images.size(0))   (Lua's string.format takes a number)
                top1:update(acc1[1]:item(), images:size(1))
                top5:update(acc5[1]:item(), images:size(1))
                seen[#seen + 1] = loss:item()

                optimizer:zero_grad()
                loss:backward()
                optimizer:step()

                batch_time:update(os.clock() - end_)
                end_ = os.clock()

                if i % args_.print_freq == 0 then
                    progress:display(i + 1)
                end
            end
            return seen
        end

        -- def validate(val_loader, model, criterion, args):
        local function validate(val_loader, model, criterion, args_)
            local use_accel = not args_.no_accel and tide.accelerator.is_available()
            local batch_time, losses, top1, top5, progress
            local function run_validate(loader, base_progress)
                base_progress = base_progress or 0
                local device
                if use_accel then
                    device = tide.accelerator.current_accelerator()
                else
                    device = tide.device("cpu")
                end
                -- with torch.no_grad():
                tide.no_grad(function()
                    local end_ = os.clock()
                    -- for i, (images, target) in enumerate(loader):
                    local n = -1
                    for images, target in loader:iter() do
                        n = n + 1
                        -- i = base_progress + i
                        local i = base_progress + n
                        if use_accel then
                            images = images:to(device)
                            target = target:to(device)
                        end
                        local output = model(images)
                        local loss = criterion(output, target)
                        local acc = accuracy(output, target, { 1, 5 })
                        losses:update(loss:item(), images:size(1))
                        top1:update(acc[1][1]:item(), images:size(1))
                        top5:update(acc[2][1]:item(), images:size(1))
                        batch_time:update(os.clock() - end_)
                        end_ = os.clock()
                        if i % args_.print_freq == 0 then
                            progress:display(i + 1)
                        end
                    end
                end)
            end
            batch_time = AverageMeter.new("Time", use_accel, "6.3f", Summary.NONE)
            losses = AverageMeter.new("Loss", use_accel, ".4e", Summary.NONE)
            top1 = AverageMeter.new("Acc@1", use_accel, "6.2f", Summary.AVERAGE)
            top5 = AverageMeter.new("Acc@5", use_accel, "6.2f", Summary.AVERAGE)
            progress = ProgressMeter.new(val_loader:len(), { batch_time, losses, top1, top5 }, "Test: ")
            model:eval()
            run_validate(val_loader)
            progress:display_summary()
            return top1.avg
        end

        -- use_accel = not args.no_accel and torch.accelerator.is_available()
        local use_accel = not args.no_accel and tide.accelerator.is_available()
        local device = use_accel and tide.accelerator.current_accelerator() or tide.device("cpu")
        -- model = models.__dict__[args.arch]()
        local model = models[args.arch]()
        model:to(device)
        -- criterion = nn.CrossEntropyLoss().to(device)
        local criterion = nn.CrossEntropyLoss():to(device)
        -- optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=args.momentum,
        --                             weight_decay=args.weight_decay)
        local optimizer = tide.optim.SGD(model:parameters(), args.lr, {
            momentum = args.momentum,
            weight_decay = args.weight_decay })
        -- scheduler = StepLR(optimizer, step_size=30, gamma=0.1)   (step_size 2 here)
        local scheduler = StepLR(optimizer, { step_size = 2, gamma = 0.1 })

        -- datasets.FakeData(...): random 3x16x16 images, 5 classes
        local train_dataset = tide.data.TensorDataset(tide.rand(8, 3, 16, 16), tide.randint(1, 6, { 8 }))
        local val_dataset = tide.data.TensorDataset(tide.rand(8, 3, 16, 16), tide.randint(1, 6, { 8 }))
        local train_sampler = nil
        -- train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=args.batch_size,
        --     shuffle=(train_sampler is None), num_workers=args.workers, pin_memory=True, sampler=train_sampler)
        local train_loader = tide.data.DataLoader(train_dataset, { batch_size = args.batch_size,
            shuffle = (train_sampler == nil), num_workers = args.workers, pin_memory = true,
            sampler = train_sampler })
        local val_loader = tide.data.DataLoader(val_dataset, { batch_size = args.batch_size,
            shuffle = false, num_workers = args.workers, pin_memory = true })

        local first_losses, last_losses
        local lrs = {}
        for epoch = args.start_epoch, args.epochs - 1 do
            local seen = train(train_loader, model, criterion, optimizer, epoch, device, args)
            first_losses = first_losses or seen
            last_losses = seen
            local acc1 = validate(val_loader, model, criterion, args)
            scheduler:step()
            lrs[#lrs + 1] = optimizer.param_groups[1].lr

            -- is_best = acc1 > best_acc1
            local is_best = acc1 > best_acc1
            best_acc1 = math.max(acc1, best_acc1)
            save_checkpoint({
                epoch = epoch + 1,
                arch = args.arch,
                state_dict = model:state_dict(),
                best_acc1 = best_acc1,
                optimizer = optimizer:state_dict(),
                scheduler = scheduler:state_dict(),
            }, is_best)
        end
        for _, l in ipairs(last_losses) do
            assert_finite(l)
        end
        local function mean(t)
            local sum = 0
            for _, v in ipairs(t) do
                sum = sum + v
            end
            return sum / #t
        end
        assert.is_true(mean(last_losses) < mean(first_losses))
        assert.truthy(printed[1]:find("^Epoch: %[0%]%[1/2%]\tTime "), printed[1])
        assert.truthy(printed[#printed]:find("^ %*   Acc@1 %d+%.%d%d%d Acc@5 100%.000$"), printed[#printed])
        -- StepLR(step_size=2, gamma=0.1) over 3 epochs: 0.1, 0.01, 0.01
        assert.is_true(math.abs(lrs[1] - 0.1) < 1e-12 and math.abs(lrs[2] - 0.01) < 1e-12)

        -- optionally resume from a checkpoint
        args.resume = dir .. "-checkpoint.pth.tar"
        local model2 = models[args.arch]()
        local optimizer2 = tide.optim.SGD(model2:parameters(), args.lr, {
            momentum = args.momentum, weight_decay = args.weight_decay })
        local scheduler2 = StepLR(optimizer2, { step_size = 2, gamma = 0.1 })
        -- checkpoint = torch.load(args.resume)
        local checkpoint = tide.load(args.resume)
        args.start_epoch = checkpoint["epoch"]
        local best = checkpoint["best_acc1"]
        model2:load_state_dict(checkpoint["state_dict"])
        optimizer2:load_state_dict(checkpoint["optimizer"])
        scheduler2:load_state_dict(checkpoint["scheduler"])
        assert.are.equal(3, args.start_epoch)
        assert.are.equal(best_acc1, best)
        assert.are.equal("tiny", checkpoint["arch"])
        assert.is_true(math.abs(optimizer2.param_groups[1].lr - 0.01) < 1e-12)
        local x = tide.rand(2, 3, 16, 16)
        model:eval()
        model2:eval()
        assert.is_true(tide.equal(model(x), model2(x)))
        -- the best model was copied next to it (shutil.copyfile)
        local f = io.open(dir .. "-model_best.pth.tar", "rb")
        assert.truthy(f)
        f:close()
        os.remove(dir .. "-checkpoint.pth.tar")
        os.remove(dir .. "-model_best.pth.tar")
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. recipes: changing_default_device.py
---------------------------------------------------------------------------------------------
describe("recipes/changing_default_device.py", function()
    it("with torch.device(...): tide.with_device; torch.set_default_device", function()
        local USE_CUDA = false

        local mod = tide.nn.Linear(20, 30)
        if USE_CUDA then
            mod:cuda()
        end

        local device = "cpu"
        if USE_CUDA then
            device = "cuda"
        end
        local inp = tide.randn(128, 20, { device = device })
        assert.are.equal("cpu", tostring(mod(inp).device))

        -- with torch.device('cuda'):       ("cpu:1", a second device, stands in for cuda)
        --     mod = torch.nn.Linear(20, 30)
        --     print(mod.weight.device)
        --     print(mod(torch.randn(128, 20)).device)
        local w_dev, out_dev = tide.with_device("cpu:1", function()
            mod = tide.nn.Linear(20, 30)
            return tostring(mod.weight.device), tostring(mod(tide.randn(128, 20)).device)
        end)
        assert.are.equal("cpu:1", w_dev)
        assert.are.equal("cpu:1", out_dev)
        assert.are.equal("cpu", tostring(tide.get_default_device()))

        -- torch.set_default_device('cuda')
        local ok, err = pcall(function()
            tide.set_default_device("cpu:1")
            mod = tide.nn.Linear(20, 30)
            assert.are.equal("cpu:1", tostring(mod.weight.device))
            assert.are.equal("cpu:1", tostring(mod(tide.randn(128, 20)).device))
        end)
        tide.set_default_device("cpu")
        assert(ok, err)
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. recipes: module_load_state_dict_tips.py
---------------------------------------------------------------------------------------------
describe("recipes/module_load_state_dict_tips.py", function()
    -- class SomeModule(torch.nn.Module):
    local SomeModule = nn.Module:extend("SomeModule")
    function SomeModule:init()
        -- self.linears = nn.ModuleList([nn.Linear(1, 1) for i in range(10)])
        local list = {}
        for _ = 1, 10 do
            list[#list + 1] = nn.Linear(1, 1)
        end
        self.linears = nn.ModuleList(list)
    end

    function SomeModule:forward(x)
        return self.linears(x)
    end

    local path = os.tmpname()

    it("torch.load(mmap=True), load_state_dict(assign=True)", function()
        local m = SomeModule()
        -- torch.save(m.state_dict(), 'checkpoint.pth')
        tide.save(m:state_dict(), path)
        -- state_dict = torch.load('checkpoint.pth', mmap=True)
        local state_dict = tide.load(path, { mmap = true })
        -- with torch.device('meta'):
        --   meta_m = SomeModule()
        -- GAP: tide has no meta device (tide.with_device("meta", ...) raises
        -- `tide: device: unknown device "meta"`); the module is built on the CPU
        local meta_m = SomeModule()
        -- meta_m.load_state_dict(state_dict, assign=True)
        local r = meta_m:load_state_dict(state_dict, { assign = true })
        assert.are.same({}, r.missing_keys)
        assert.are.same({}, r.unexpected_keys)
        -- assign: the module holds the loaded tensors (sharing their storage), still parameters
        local w = meta_m.linears[1].weight
        assert.is_true(w.requires_grad)
        assert.is_true(tide.equal(w, m.linears[1].weight))
        state_dict["linears.1.weight"]:fill_(7)
        assert.are.equal(7, meta_m.linears[1].weight:item())
        assert.are.equal(20, #meta_m:parameters())
        -- the optimizer is built after the load, and trains the assigned parameters
        local opt = tide.optim.SGD(meta_m:parameters(), { lr = 0.1 })
        local loss = meta_m.linears[1](tide.ones(3, 1)):sum()
        loss:backward()
        opt:step()
        assert.is_true(meta_m.linears[1].weight:item() < 7)

        -- state_dict = torch.load('checkpoint.pth'); m = SomeModule(); m.load_state_dict(state_dict)
        state_dict = tide.load(path)
        m = SomeModule()
        m:load_state_dict(state_dict)
        -- positional (state_dict, strict, assign), as PyTorch's
        local m2 = SomeModule()
        m2:load_state_dict(state_dict, true, true)
        state_dict["linears.2.bias"]:fill_(3)
        assert.are.equal(3, m2.linears[2].bias:item())
        assert.are_not.equal(3, m.linears[2].bias:item())
        os.remove(path)
        -- weights tied in the state dict stay tied under assign (one parameter for one tensor)
        local tied = nn.Sequential(nn.Embedding(4, 3), nn.Linear(3, 4, { bias = false }))
        tied[2].weight = tied[1].weight
        local fresh = nn.Sequential(nn.Embedding(4, 3), nn.Linear(3, 4, { bias = false }))
        fresh[2].weight = fresh[1].weight
        fresh:load_state_dict(tied:state_dict(), { assign = true })
        assert.are.equal(fresh[1].weight, fresh[2].weight)
        assert.are.equal(1, #fresh:parameters())
    end)

    it("assign: bad input raises and leaves the module unchanged; meta has no tide form", function()
        local m = SomeModule()
        local before = m.linears[1].weight
        local sd = SomeModule():state_dict()
        assert.has_error(function()
            m:load_state_dict(sd, { assign = "yes" })
        end, "tide: load_state_dict: assign must be a boolean ({assign = true}), got yes")
        assert.has_error(function()
            m:load_state_dict(sd, { asign = true })
        end)
        sd["linears.3.weight"] = tide.zeros(2, 2)
        assert.has_error(function()
            m:load_state_dict(sd, { assign = true })
        end)
        assert.are.equal(before, m.linears[1].weight)
        assert.has_error(function()
            tide.load(path, { mmap = 1 })
        end, "tide: load: mmap must be a boolean, got 1")
        local ok, err = pcall(tide.with_device, "meta", function() end)
        assert.is_false(ok)
        assert.truthy(tostring(err):find('unknown device "meta"', 1, true))
    end)
end)

---------------------------------------------------------------------------------------------
-- 4. recipes: reasoning_about_shapes.py
---------------------------------------------------------------------------------------------
describe("recipes/reasoning_about_shapes.py", function()
    it("conv output shapes and forward hooks over named_modules()", function()
        -- t = torch.rand(2, 3, 10, 10, device="meta")
        -- conv = torch.nn.Conv2d(3, 5, 2, device="meta")
        -- GAP: no meta device; the CPU computes the values too
        local t = tide.rand(2, 3, 10, 10, { device = "cpu" })
        local conv = tide.nn.Conv2d(3, 5, 2, { device = "cpu" })
        -- start = timeit.default_timer()
        local start = os.clock()
        local out = conv(t)
        local end_ = os.clock()
        assert.is_true(end_ >= start)
        assert.are.equal("tide.Size({2, 5, 9, 9})", tostring(out.shape))

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
            x = tide.flatten(x, 2) -- flatten all dimensions except batch
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            x = self.fc3(x)
            return x
        end

        local shapes = {}
        -- def fw_hook(module, input, output):
        local function fw_hook(module, input, output) -- luacheck: ignore input
            -- print(f"Shape of output to {module} is {output.shape}.")
            shapes[#shapes + 1] = ("Shape of output to %s is %s."):format(tostring(module),
                tostring(output.shape))
        end

        -- with torch.device("meta"):  (GAP: no meta device; a batch of 2 on the CPU)
        local net = Net()
        local inp = tide.randn({ 2, 3, 32, 32 })

        for _, layer in net:named_modules() do
            layer:register_forward_hook(fw_hook)
        end

        out = net(inp)
        assert.are.equal("tide.Size({2, 10})", tostring(out.shape))
        -- conv1, pool, conv2, pool, fc1, fc2, fc3 and the net itself
        assert.are.equal(8, #shapes)
        assert.truthy(shapes[1]:find("is tide.Size({2, 6, 28, 28}).", 1, true))
        assert.truthy(shapes[2]:find("is tide.Size({2, 6, 14, 14}).", 1, true))
        assert.truthy(shapes[3]:find("is tide.Size({2, 16, 10, 10}).", 1, true))
        assert.truthy(shapes[8]:find("is tide.Size({2, 10}).", 1, true))
    end)
end)

---------------------------------------------------------------------------------------------
-- 5. recipes: timer_quick_start.py and benchmark.py (torch.utils.benchmark)
---------------------------------------------------------------------------------------------
describe("recipes/timer_quick_start.py, benchmark.py", function()
    -- from torch.utils.benchmark import Language, Timer
    local benchmark = tide.utils.benchmark
    local Timer, Language = benchmark.Timer, benchmark.Language

    it("Timer(stmt, setup).blocked_autorange / timeit / Compare", function()
        -- def measure(b_size):
        local function measure(b_size)
            -- return Timer("x * y", f"""x = torch.ones((128,)) y = torch.ones(({b_size},))""",
            --     ).blocked_autorange(min_run_time=1)     (0.01 s here)
            return Timer(
                "x * y",
                ([[
                x = tide.ones({128})
                y = tide.ones({%d})
                ]]):format(b_size)
            ):blocked_autorange({ min_run_time = 0.01 })
        end
        local m = measure(128)
        assert.truthy(tostring(m):find("x * y", 1, true))
        assert.truthy(tostring(m):find("measurement", 1, true))
        assert.is_true(m.median > 0 and m.mean > 0 and #m.times >= 1)
        measure(1)

        -- benchmark.py
        -- def batched_dot_mul_sum(a, b):
        local function batched_dot_mul_sum(a, b)
            return a:mul(b):sum(-1)
        end
        local function batched_dot_bmm(a, b)
            a = a:reshape(-1, 1, a.shape[-1])
            b = b:reshape(-1, b.shape[-1], 1)
            return tide.bmm(a, b):flatten(-3)
        end
        local x = tide.randn(100, 64)
        assert(batched_dot_mul_sum(x, x):allclose(batched_dot_bmm(x, x)))

        -- t0 = benchmark.Timer(stmt='batched_dot_mul_sum(x, x)',
        --     setup='from __main__ import batched_dot_mul_sum', globals={'x': x})
        local t0 = benchmark.Timer({
            stmt = "batched_dot_mul_sum(x, x)",
            globals = { x = x, batched_dot_mul_sum = batched_dot_mul_sum } })
        local t1 = benchmark.Timer({
            stmt = "batched_dot_bmm(x, x)",
            globals = { x = x, batched_dot_bmm = batched_dot_bmm },
            num_threads = tide.get_num_threads(),
            label = "Multithreaded batch dot",
            sub_label = "Implemented using bmm" })
        local m0 = t0:timeit(10)
        assert.truthy(tostring(m0):find("1 measurement, 10 runs , 1 thread", 1, true))
        local m1 = t1:timeit(10)
        assert.truthy(tostring(m1):find("Multithreaded batch dot: Implemented using bmm", 1, true))
        -- print(f"Mean:   {m0.mean * 1e6:6.2f} us")
        assert.truthy(("Mean:   %6.2f us"):format(m0.mean * 1e6):find("us"))

        -- results.append(benchmark.Timer(..., label=label, sub_label=sub_label,
        --     description='mul/sum').blocked_autorange(min_run_time=1))
        local results = {}
        for _, b in ipairs({ 1, 64 }) do
            local label = "Batched dot"
            local sub_label = ("[%d, %d]"):format(b, 8)
            local xb = tide.ones({ b, 8 })
            results[#results + 1] = benchmark.Timer({
                stmt = "batched_dot_mul_sum(x, x)",
                globals = { x = xb, batched_dot_mul_sum = batched_dot_mul_sum },
                label = label, sub_label = sub_label, description = "mul/sum",
            }):blocked_autorange({ min_run_time = 0.005 })
            results[#results + 1] = benchmark.Timer({
                stmt = "batched_dot_bmm(x, x)",
                globals = { x = xb, batched_dot_bmm = batched_dot_bmm },
                label = label, sub_label = sub_label, description = "bmm",
            }):blocked_autorange({ min_run_time = 0.005 })
        end
        -- compare = benchmark.Compare(results); compare.print()
        local compare = benchmark.Compare(results)
        local s = tostring(compare)
        assert.truthy(s:find("Batched dot", 1, true))
        assert.truthy(s:find("mul/sum", 1, true) and s:find("bmm", 1, true))
        assert.truthy(s:find("[64, 8]", 1, true))
        -- a function as stmt
        local mf = Timer(function() return x * x end):adaptive_autorange({ max_run_time = 0.01 })
        assert.is_true(mf.median > 0)
    end)

    it("C++ and Callgrind have no tide form: clear errors", function()
        assert.has_error(function()
            Timer("x * y;", "auto x = torch::ones({{128}});", { language = Language.CPP })
        end, "tide: benchmark: Timer: language cpp has no tide form; time Lua code or a function")
        assert.has_error(function()
            Timer("x * y", "x = 1 y = 2"):collect_callgrind()
        end, "tide: benchmark: collect_callgrind: tide has no Callgrind wrapper; time with " ..
            "blocked_autorange, or run the script under valgrind --tool=callgrind")
        assert.has_error(function()
            Timer("x *** y")
        end)
        assert.has_error(function()
            Timer("x", { globalz = {} })
        end, "tide: benchmark: Timer: unknown option globalz; options are globals, label, " ..
            "sub_label, description, num_threads, env")
        assert.has_error(function()
            Timer("x"):blocked_autorange({ min_run_time = -1 })
        end, "tide: benchmark: blocked_autorange: min_run_time must be a positive number, got -1")
    end)
end)
