-- ported_scripts44_spec.lua — tide.profiler as the PyTorch tutorials use torch.profiler, ported
-- line for line: recipes/profiler_recipe.py, beginner_source/profiler.py ("Profiling your
-- PyTorch Module"), intermediate_source/tensorboard_profiler_tutorial.py, and
-- recipes/saving_multiple_models_in_one_file.py. torchvision's resnet18 is replaced by a small
-- conv net with resnet18's layer kinds (conv, batch norm, relu, max pool, avg pool, fc); sizes
-- are tiny. Tables are checked for names, counts and self <= total, never for times. The Python
-- line stands above each Lua line that differs from it; `-- GAP:` marks what tide cannot do.
-- (timer_quick_start.py / benchmark.py are in ported_scripts24_spec.lua; memory_format_tutorial
-- is left: tide has no channels_last layout, see the report.)
local tide = require("tide")
local nn = tide.nn
local json = require("tide.models._json")

-- from torch.profiler import profile, record_function, ProfilerActivity
local profile, record_function = tide.profiler.profile, tide.profiler.record_function
local ProfilerActivity = tide.profiler.ProfilerActivity

-- models.resnet18(), shrunk: conv-bn-relu-maxpool, one basic block, avgpool, fc
local function resnet_small()
    tide.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, { stride = 2, padding = 1, bias = false }), nn.BatchNorm2d(8),
        nn.ReLU({ inplace = true }), nn.MaxPool2d({ kernel_size = 3, stride = 2, padding = 1 }),
        nn.Conv2d(8, 8, 3, { padding = 1, bias = false }), nn.BatchNorm2d(8), nn.ReLU(),
        nn.AdaptiveAvgPool2d({ 1, 1 }), nn.Flatten(), nn.Linear(8, 10))
end

local function by_key(list)
    local r = {}
    for _, e in ipairs(list) do
        if r[e.key] == nil then r[e.key] = e end
    end
    return r
end

local function rows_sane(list)
    for _, e in ipairs(list) do
        assert.is_true(e.count >= 1)
        assert.is_true(e.self_cpu_time_total <= e.cpu_time_total + 1e-6, e.key)
    end
end

-- the Name of a table's first row (after the header's second rule)
local function first_row(text)
    local lines = {}
    for line in text:gmatch("[^\n]*") do
        if line ~= "" then lines[#lines + 1] = line end
    end
    return lines[4]:match("^%s*(.-)%s%s")
end

local function read(path)
    local f = assert(io.open(path))
    local s = f:read("*a")
    f:close()
    return s
end

local tmp = os.tmpname()
os.remove(tmp)

---------------------------------------------------------------------------------------------
-- 1. recipes/profiler_recipe.py
---------------------------------------------------------------------------------------------
describe("recipes/profiler_recipe.py", function()
    it("3. execution time: record_function label, sort_by, group_by_input_shape", function()
        -- model = models.resnet18(); inputs = torch.randn(5, 3, 224, 224)
        local model = resnet_small()
        local inputs = tide.randn(5, 3, 16, 16)
        -- with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        --     with record_function("model_inference"):
        --         model(inputs)
        local prof = profile({ activities = { ProfilerActivity.CPU }, record_shapes = true },
            function()
                record_function("model_inference", function() return model(inputs) end)
            end)
        -- print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
        local text = prof:key_averages():table({ sort_by = "cpu_time_total", row_limit = 10 })
        assert.truthy(text:find("Name    Self CPU %      Self CPU   CPU total %     CPU total" ..
            "  CPU time avg    # of Calls", 1, true))
        assert.truthy(text:find("\n *model_inference  ")) -- the label is the costliest row
        assert.are.equal("model_inference", first_row(text))
        assert.truthy(text:find("Self CPU time total: ", 1, true))
        local avg = by_key(prof:key_averages())
        assert.are.equal(1, avg.model_inference.count)
        assert.are.equal(2, avg.conv2d.count)
        assert.are.equal(1, avg.linear.count)
        assert.are.equal(1, avg.maxpool2d.count) -- tide's op name for aten::max_pool2d
        rows_sane(prof:key_averages())
        -- print(prof.key_averages(group_by_input_shape=True).table(sort_by="cpu_time_total", row_limit=10))
        local grouped = prof:key_averages({ group_by_input_shape = true })
        text = grouped:table({ sort_by = "cpu_time_total", row_limit = 10 })
        assert.truthy(text:find("Input Shapes", 1, true))
        local convs = {}
        for _, e in ipairs(grouped) do
            if e.key == "conv2d" then convs[#convs + 1] = e.input_shapes[1] end
        end
        -- the two convolutions, told apart by their input shapes
        table.sort(convs, function(a, b) return a[3] > b[3] end)
        assert.are.same({ { 5, 3, 16, 16 }, { 5, 8, 4, 4 } }, convs)
    end)

    it("CUDA section: the sort key device .. '_time_total' (here without a GPU)", function()
        -- activities = [ProfilerActivity.CPU]; if torch.cuda.is_available(): ...
        local activities, device = { ProfilerActivity.CPU }, "cpu"
        if tide.cuda.is_available() then
            device = "cuda"
            activities[#activities + 1] = ProfilerActivity.CUDA
        end
        -- sort_by_keyword = device + "_time_total"
        local sort_by_keyword = device .. "_time_total"
        local model = resnet_small():to(device)
        local inputs = tide.randn(5, 3, 16, 16):to(device)
        local prof = profile({ activities = activities, record_shapes = true }, function()
            record_function("model_inference", function() return model(inputs) end)
        end)
        local text = prof:key_averages():table({ sort_by = sort_by_keyword, row_limit = 10 })
        assert.truthy(text:find("model_inference", 1, true))
        -- the self_cuda key sorts a CPU-only profile too (its column is all zero)
        assert.truthy(prof:key_averages():table({ sort_by = "self_cuda_time_total",
            row_limit = 2 }):find("# of Calls", 1, true))
    end)

    it("4. memory: profile_memory, sort_by self_cpu_memory_usage and cpu_memory_usage", function()
        local model = resnet_small()
        local inputs = tide.randn(5, 3, 16, 16)
        -- with profile(activities=[ProfilerActivity.CPU], profile_memory=True, record_shapes=True) as prof:
        local prof = profile({ activities = { ProfilerActivity.CPU }, profile_memory = true,
            record_shapes = true }, function()
            model(inputs)
        end)
        -- print(prof.key_averages().table(sort_by="self_cpu_memory_usage", row_limit=10))
        local text = prof:key_averages():table({ sort_by = "self_cpu_memory_usage",
            row_limit = 10 })
        assert.truthy(text:find("CPU Mem  Self CPU Mem    # of Calls", 1, true))
        -- print(prof.key_averages().table(sort_by="cpu_memory_usage", row_limit=10))
        text = prof:key_averages():table({ sort_by = "cpu_memory_usage", row_limit = 10 })
        assert.truthy(text:find("CPU Mem", 1, true))
        local avg = by_key(prof:key_averages())
        -- conv2d (5, 8, 8, 8) float32 output: 10240 bytes made by the first conv
        assert.is_true(avg.conv2d.cpu_memory_usage >= 5 * 8 * 8 * 8 * 4)
        assert.are.equal(5 * 10 * 4, avg.linear.cpu_memory_usage)
        for _, e in ipairs(prof:key_averages()) do
            assert.is_true(e.self_cpu_memory_usage <= e.cpu_memory_usage, e.key)
        end
        -- the table's rows go by memory, largest first
        local most = 0
        for _, e in ipairs(prof:key_averages()) do most = math.max(most, e.cpu_memory_usage) end
        assert.are.equal(most, by_key(prof:key_averages())[first_row(text)].cpu_memory_usage)
    end)

    it("5. export_chrome_trace; 6. with_stack and group_by_stack_n", function()
        local model = resnet_small()
        local inputs = tide.randn(5, 3, 16, 16)
        -- with profile(activities=activities) as prof: model(inputs)
        local prof = profile({ activities = { ProfilerActivity.CPU } }, function()
            model(inputs)
        end)
        -- prof.export_chrome_trace("trace.json")
        prof:export_chrome_trace(tmp .. "trace.json")
        local trace = json.decode(read(tmp .. "trace.json"))
        os.remove(tmp .. "trace.json")
        local names = {}
        for _, ev in ipairs(trace.traceEvents) do
            if ev.ph == "X" then names[ev.name] = (names[ev.name] or 0) + 1 end
        end
        assert.are.equal(2, names.conv2d)
        assert.are.equal(1, names.linear)
        -- sort_by_keyword = "self_" + device + "_time_total"
        local sort_by_keyword = "self_" .. "cpu" .. "_time_total"
        -- with profile(activities=activities, with_stack=True) as prof: model(inputs)
        prof = profile({ activities = { ProfilerActivity.CPU }, with_stack = true }, function()
            model(inputs) -- the call site the stacks name
        end)
        -- print(prof.key_averages(group_by_stack_n=5).table(sort_by=sort_by_keyword, row_limit=2))
        local text = prof:key_averages({ group_by_stack_n = 5 }):table({
            sort_by = sort_by_keyword, row_limit = 2 })
        assert.truthy(text:find("Source Location", 1, true))
        assert.truthy(text:find("ported_scripts44_spec.lua%(%d+%)"))
        for _, e in ipairs(prof:key_averages({ group_by_stack_n = 5 })) do
            if e.key == "conv2d" then
                assert.is_true(#e.stack >= 1 and #e.stack <= 5)
                assert.truthy(e.stack[1]:find("ported_scripts44_spec.lua", 1, true))
            end
        end
    end)

    it("7. long-running jobs: schedule(skip_first, wait, warmup, active, repeat), on_trace_ready, p.step()", function()
        -- my_schedule = schedule(skip_first=10, wait=5, warmup=1, active=3, repeat=2)
        local my_schedule = tide.profiler.schedule({ skip_first = 10, wait = 5, warmup = 1,
            active = 3, ["repeat"] = 2 })
        -- PyTorch 1.13's actions for steps 0..30
        local expect = {}
        for i = 0, 30 do
            local a = "NONE"
            if i == 15 or i == 24 then a = "WARMUP"
            elseif (i >= 16 and i <= 17) or (i >= 25 and i <= 26) then a = "RECORD"
            elseif i == 18 or i == 27 then a = "RECORD_AND_SAVE" end
            expect[#expect + 1] = a
        end
        local got = {}
        for i = 0, 30 do got[#got + 1] = tostring(my_schedule(i)) end
        assert.are.same(expect, got)

        local model = resnet_small()
        local inputs = tide.randn(2, 3, 8, 8)
        local sort_by_keyword = "self_cpu_time_total"
        local seen = {}
        -- def trace_handler(p):
        local function trace_handler(p)
            -- output = p.key_averages().table(sort_by=sort_by_keyword, row_limit=10)
            local output = p:key_averages():table({ sort_by = sort_by_keyword, row_limit = 10 })
            assert.truthy(output:find("ProfilerStep#", 1, true))
            -- p.export_chrome_trace("/tmp/trace_" + str(p.step_num) + ".json")
            local path = tmp .. "trace_" .. tostring(p.step_num) .. ".json"
            p:export_chrome_trace(path)
            seen[#seen + 1] = { p.step_num, by_key(p:key_averages()) }
            os.remove(path)
        end
        -- with profile(activities=activities, schedule=torch.profiler.schedule(wait=1, warmup=1, active=2), on_trace_ready=trace_handler) as p:
        --     for idx in range(8):
        --         model(inputs)
        --         p.step()
        profile({ activities = { ProfilerActivity.CPU },
            schedule = tide.profiler.schedule({ wait = 1, warmup = 1, active = 2 }),
            on_trace_ready = trace_handler }, function(p)
            for _ = 0, 7 do
                model(inputs)
                p:step()
            end
        end)
        -- as PyTorch: step_num 4 and 8 at the two cycles' ends, steps 2-3 and 6-7 recorded
        assert.are.equal(2, #seen)
        assert.are.equal(4, seen[1][1])
        assert.are.equal(8, seen[2][1])
        assert.truthy(seen[1][2]["ProfilerStep#2"] and seen[1][2]["ProfilerStep#3"])
        assert.truthy(seen[2][2]["ProfilerStep#6"] and seen[2][2]["ProfilerStep#7"])
        assert.are.equal(4, seen[1][2].conv2d.count) -- two steps, two convs each
    end)

    it("Memory Timeline: export_memory_timeline raises naming what to use", function()
        local model = resnet_small()
        local inputs = tide.randn(2, 3, 8, 8)
        local prof = profile({ activities = { ProfilerActivity.CPU }, profile_memory = true,
            record_shapes = true, with_stack = true }, function() model(inputs) end)
        -- GAP: prof.export_memory_timeline("memory_timeline.html") (PyTorch 2.1) needs frees
        assert.has_error(function() prof:export_memory_timeline("memory_timeline.html") end,
            "tide: export_memory_timeline(memory_timeline.html): not supported by tide's " ..
            "profiler (tide does not record when storage is freed); profile with " ..
            "profile_memory = true and read prof:key_averages():table({sort_by = " ..
            "\"self_cpu_memory_usage\"}), or prof:export_chrome_trace(path)")
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. beginner_source/profiler.py
---------------------------------------------------------------------------------------------
describe("beginner_source/profiler.py", function()
    -- import torch.autograd.profiler as profiler
    local profiler = tide.autograd.profiler

    it("MyModule: record_function labels in forward, with_stack, profile_memory, the nonzero fix", function()
        -- class MyModule(nn.Module):
        local MyModule = nn.Module:extend("MyModule")
        -- def __init__(self, in_features: int, out_features: int, bias: bool = True):
        function MyModule:init(in_features, out_features, bias)
            if bias == nil then bias = true end
            self.linear = nn.Linear(in_features, out_features, bias)
        end
        -- the first version: np.argwhere on the mask copied to the CPU
        function MyModule:forward(input, mask)
            local out, hi_idx
            -- with profiler.record_function("LINEAR PASS"):
            profiler.record_function("LINEAR PASS", function()
                out = self.linear(input)
            end)
            -- with profiler.record_function("MASK INDICES"):
            profiler.record_function("MASK INDICES", function()
                -- threshold = out.sum(axis=1).mean().item()
                local threshold = out:sum({ axis = 2 }):mean():item()
                -- hi_idx = np.argwhere(mask.cpu().numpy() > threshold)
                -- hi_idx = torch.from_numpy(hi_idx).cuda()
                -- (no numpy in Lua: argwhere is nonzero() on the CPU copy)
                hi_idx = mask:cpu():gt(threshold):nonzero()
            end)
            return out, hi_idx
        end

        tide.manual_seed(0)
        -- model = MyModule(500, 10).cuda(); input = torch.rand(128, 500).cuda()
        local model = MyModule(50, 10)
        local input = tide.rand(16, 50)
        -- mask = torch.rand((500, 500, 500), dtype=torch.double).cuda()
        local mask = tide.rand({ 10, 10, 10 }, { dtype = tide.double })
        -- warm-up
        model(input, mask)
        -- with profiler.profile(with_stack=True, profile_memory=True) as prof:
        --     out, idx = model(input, mask)
        local out, idx
        local prof = profiler.profile({ with_stack = true, profile_memory = true }, function()
            out, idx = model(input, mask)
        end)
        -- print(prof.key_averages(group_by_stack_n=5).table(sort_by='self_cpu_time_total', row_limit=5))
        local text = prof:key_averages({ group_by_stack_n = 5 }):table({
            sort_by = "self_cpu_time_total", row_limit = 5 })
        assert.truthy(text:find("Self CPU Mem", 1, true))
        assert.truthy(text:find("Source Location", 1, true))
        local avg = by_key(prof:key_averages())
        assert.are.equal(1, avg["LINEAR PASS"].count)
        assert.are.equal(1, avg["MASK INDICES"].count)
        assert.are.equal(1, avg.linear.count)
        assert.are.equal(1, avg.nonzero.count)
        rows_sane(prof:key_averages())
        for _, e in ipairs(prof:events()) do
            if e.name == "linear" then assert.are.equal("LINEAR PASS", e.cpu_parent.name) end
            if e.name == "nonzero" then assert.are.equal("MASK INDICES", e.cpu_parent.name) end
        end
        assert.are.same({ 16, 10 }, { out:size(1), out:size(2) })
        assert.are.equal(3, idx:size(2))

        -- Improve memory performance: mask = torch.rand((500, 500, 500), dtype=torch.float)
        local mask_f = tide.rand({ 10, 10, 10 }, { dtype = tide.float })
        model(input, mask_f)
        prof = profiler.profile({ with_stack = true, profile_memory = true }, function()
            out, idx = model(input, mask_f)
        end)
        assert.truthy(by_key(prof:key_averages())["MASK INDICES"])

        -- Improve time performance: torch's nonzero() instead of numpy
        function MyModule:forward(input2, mask2)
            local out2, hi_idx
            profiler.record_function("LINEAR PASS", function()
                out2 = self.linear(input2)
            end)
            profiler.record_function("MASK INDICES", function()
                -- threshold = out.sum(axis=1).mean()
                local threshold = out2:sum({ axis = 2 }):mean()
                -- hi_idx = (mask > threshold).nonzero(as_tuple=True)
                -- (Lua's > cannot return a tensor: mask:gt(threshold))
                hi_idx = mask2:gt(threshold):nonzero({ as_tuple = true }) -- a list of 3 index tensors
            end)
            return out2, hi_idx
        end
        model = MyModule(50, 10)
        model(input, mask_f)
        prof = profiler.profile({ with_stack = true, profile_memory = true }, function()
            out, idx = model(input, mask_f)
        end)
        avg = by_key(prof:key_averages())
        assert.are.equal(1, avg.gt.count)
        assert.are.equal(1, avg.nonzero.count)
        assert.is_nil(avg.item) -- no host round trip now
        assert.are.equal(3, #idx)
        local th = out:sum({ axis = 2 }):mean():item()
        local n = 0
        for _, v in ipairs(mask_f:reshape(-1):tolist()) do
            if v > th then n = n + 1 end
        end
        assert.are.equal(n, idx[1]:numel())
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. intermediate_source/tensorboard_profiler_tutorial.py
---------------------------------------------------------------------------------------------
describe("intermediate_source/tensorboard_profiler_tutorial.py", function()
    it("schedule(wait=1, warmup=1, active=3, repeat=2) with tensorboard_trace_handler writes two traces", function()
        tide.manual_seed(0)
        -- train_set = CIFAR10(..., transform=transform): 24 random 3x8x8 images in [-1, 1]
        local train_set = tide.data.TensorDataset(tide.rand(24, 3, 8, 8) * 2 - 1,
            tide.randint(1, 11, { 24 }))
        -- train_loader = torch.utils.data.DataLoader(train_set, batch_size=32, shuffle=True)
        local train_loader = tide.data.DataLoader(train_set, { batch_size = 2, shuffle = true })
        -- device = torch.device("cuda:0")
        local device = tide.device("cpu")
        -- model = torchvision.models.resnet18(pretrained=True).cuda(device)
        local model = resnet_small():to(device)
        -- criterion = torch.nn.CrossEntropyLoss().cuda(device)
        local criterion = nn.CrossEntropyLoss():to(device)
        -- optimizer = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
        local optimizer = tide.optim.SGD(model:parameters(), { lr = 0.001, momentum = 0.9 })
        model:train()
        local losses = {}

        -- def train(data):
        local function train(data)
            -- inputs, labels = data[0].to(device=device), data[1].to(device=device)
            local inputs, labels = data[1]:to({ device = device }), data[2]:to({ device = device })
            local outputs = model(inputs)
            local loss = criterion(outputs, labels)
            optimizer:zero_grad()
            loss:backward()
            optimizer:step()
            losses[#losses + 1] = loss:item()
        end

        local logdir = tmp .. "_log/resnet18"
        -- with torch.profiler.profile(
        --         schedule=torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=2),
        --         on_trace_ready=torch.profiler.tensorboard_trace_handler('./log/resnet18'),
        --         record_shapes=True,
        --         with_stack=True
        -- ) as prof:
        local prof = tide.profiler.profile({
            schedule = tide.profiler.schedule({ wait = 1, warmup = 1, active = 3, ["repeat"] = 2 }),
            on_trace_ready = tide.profiler.tensorboard_trace_handler(logdir),
            record_shapes = true,
            with_stack = true,
        })
        prof:__enter()
        -- for step, batch_data in enumerate(train_loader):
        -- (a batch comes unpacked; enumerate(0) numbers from 0 as Python's)
        for step, inputs, labels in train_loader:enumerate(0) do
            local batch_data = { inputs, labels }
            -- if step >= (1 + 1 + 3) * 2: break
            if step >= (1 + 1 + 3) * 2 then break end
            train(batch_data)
            prof:step() -- Need call this at the end of each step to notify profiler of steps' boundary.
        end
        prof:__exit()

        assert.are.equal(10, #losses)
        for _, l in ipairs(losses) do assert.is_true(l == l and l < math.huge) end
        -- the two spans, each a .pt.trace.json that parses with its traceEvents
        local files = {}
        local p = io.popen('ls "' .. logdir .. '"')
        for name in p:lines() do files[#files + 1] = name end
        p:close()
        assert.are.equal(2, #files)
        local steps = {}
        for _, name in ipairs(files) do
            assert.truthy(name:find("%.pt%.trace%.json$"))
            local trace = json.decode(read(logdir .. "/" .. name))
            assert.is_true(#trace.traceEvents > 0)
            for _, ev in ipairs(trace.traceEvents) do
                local s = ev.name and ev.name:match("^ProfilerStep#(%d+)$")
                if s then steps[#steps + 1] = tonumber(s) end
                if ev.name == "conv2d" then assert.truthy(ev.args["Input Dims"]) end
            end
            os.remove(logdir .. "/" .. name)
        end
        table.sort(steps)
        assert.are.same({ 2, 3, 4, 7, 8, 9 }, steps)
        os.remove(logdir)
        os.remove(tmp .. "_log")
    end)
end)

---------------------------------------------------------------------------------------------
-- 4. recipes/saving_multiple_models_in_one_file.py
---------------------------------------------------------------------------------------------
describe("recipes/saving_multiple_models_in_one_file.py", function()
    it("saves netA, netB and their optimizers in one dict and loads them back", function()
        tide.manual_seed(0)
        -- class Net(nn.Module): the recipe's LeNet (conv1, pool, conv2, fc1..fc3)
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
            x = self.pool(nn.functional.relu(self.conv1(x)))
            x = self.pool(nn.functional.relu(self.conv2(x)))
            x = x:view(-1, 16 * 5 * 5)
            x = nn.functional.relu(self.fc1(x))
            x = nn.functional.relu(self.fc2(x))
            return self.fc3(x)
        end
        local netA, netB = Net(), Net()
        -- optimizerA = optim.SGD(netA.parameters(), lr=0.001, momentum=0.9)
        local optimizerA = tide.optim.SGD(netA:parameters(), { lr = 0.001, momentum = 0.9 })
        local optimizerB = tide.optim.SGD(netB:parameters(), { lr = 0.001, momentum = 0.9 })
        local x, y = tide.randn(2, 3, 32, 32), tide.tensor({ 1, 2 })
        for _ = 1, 2 do
            for _, pair in ipairs({ { netA, optimizerA }, { netB, optimizerB } }) do
                pair[2]:zero_grad()
                nn.functional.cross_entropy(pair[1](x), y):backward()
                pair[2]:step()
            end
        end
        -- PATH = "model.pt"
        local PATH = tmp .. "model.pt"
        -- torch.save({'modelA_state_dict': netA.state_dict(), ...}, PATH)
        tide.save({
            modelA_state_dict = netA:state_dict(),
            modelB_state_dict = netB:state_dict(),
            optimizerA_state_dict = optimizerA:state_dict(),
            optimizerB_state_dict = optimizerB:state_dict(),
        }, PATH)
        -- modelA = Net(); modelB = Net(); optimModelA = optim.SGD(...); optimModelB = optim.SGD(...)
        local modelA, modelB = Net(), Net()
        local optimModelA = tide.optim.SGD(modelA:parameters(), { lr = 0.001, momentum = 0.9 })
        local optimModelB = tide.optim.SGD(modelB:parameters(), { lr = 0.001, momentum = 0.9 })
        -- checkpoint = torch.load(PATH, weights_only=True)
        local checkpoint = tide.load(PATH, { weights_only = true })
        os.remove(PATH)
        modelA:load_state_dict(checkpoint["modelA_state_dict"])
        modelB:load_state_dict(checkpoint["modelB_state_dict"])
        optimModelA:load_state_dict(checkpoint["optimizerA_state_dict"])
        optimModelB:load_state_dict(checkpoint["optimizerB_state_dict"])
        modelA:eval()
        modelB:eval()
        -- - or - modelA.train(); modelB.train()
        netA:eval()
        assert.are.same(netA(x):tolist(), modelA(x):tolist())
        local buf = optimModelA:state_dict().state[1].momentum_buffer
        assert.are.same(optimizerA:state_dict().state[1].momentum_buffer:tolist(), buf:tolist())
    end)
end)
