-- tide.profiler (torch.profiler): ops timed by name, ranges, backward nodes, memory, shapes,
-- stacks, schedules, PyTorch's table layout and the trace exports; nothing left wrapped after.
local tide = require("tide")
local json = require("tide.models._json")
local compat = require("tide._compat")
local nn = tide.nn
local P = tide.profiler

local function by_key(list)
    local r = {}
    for _, e in ipairs(list) do
        r[e.key] = e
    end
    return r
end

local function mlp()
    tide.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
end

describe("tide.profiler.profile", function()
    it("times each op tide runs, by tide's op names, inside record_function's range", function()
        local m, x = mlp(), tide.randn({5, 8})
        local prof = P.profile({ activities = { P.ProfilerActivity.CPU } }, function()
            P.record_function("model_inference", function()
                return m(x)
            end)
        end)
        local avg = by_key(prof:key_averages())
        assert.are.equal(1, avg.model_inference.count)
        assert.are.equal(2, avg.linear.count)
        assert.are.equal(1, avg.relu.count)
        for _, e in ipairs(prof:events()) do
            assert.is_true(e.self_cpu_time_total <= e.cpu_time_total + 1e-9)
            if e.name ~= "model_inference" then
                assert.are.equal("model_inference", e.cpu_parent.name) -- nested by time
            end
        end
        local range, children = avg.model_inference, 0
        for _, e in ipairs(prof:events()) do
            children = children + (e.cpu_parent and e.cpu_time_total or 0)
        end
        assert.is_true(range.cpu_time_total >= children)
        assert.is_true(math.abs(range.self_cpu_time_total - (range.cpu_time_total - children))
            < 1e-6)
    end)

    it("records backward nodes as evaluate_function ranges and the optimizer's step", function()
        local m, x = mlp(), tide.randn({5, 8})
        local opt = tide.optim.Adam(m:parameters())
        local prof = P.profile({}, function()
            opt:zero_grad()
            m(x):sum():backward()
            opt:step()
        end)
        local avg = by_key(prof:key_averages())
        assert.are.equal(1, avg["autograd::engine::evaluate_function: SumBackward0"].count)
        assert.are.equal(1, avg["autograd::engine::evaluate_function: ReluBackward0"].count)
        assert.are.equal(4, avg.adam_step_.count) -- one fused kernel per parameter
        local step = avg["Optimizer.step#Adam.step"] -- PyTorch's range around the whole step
        assert.are.equal(1, step.count)
        assert.is_true(step.cpu_time_total >= avg.adam_step_.cpu_time_total)
        assert.are.equal(1, avg["Optimizer.zero_grad#Adam.zero_grad"].count)
    end)

    it("counts the bytes each op allocates with profile_memory, and its input shapes", function()
        local x = tide.randn({4, 8})
        local prof = P.profile({ profile_memory = true, record_shapes = true }, function()
            P.record_function("two", function()
                local y = tide.zeros({4, 8}) -- 128 bytes
                return x + y                 -- 128 more
            end)
        end)
        local avg = by_key(prof:key_averages({ group_by_input_shape = true }))
        assert.are.equal(128, avg.zeros.cpu_memory_usage)
        assert.are.equal(128, avg.add.cpu_memory_usage)
        assert.are.equal(256, avg.two.cpu_memory_usage)
        assert.are.equal(0, avg.two.self_cpu_memory_usage)
        assert.are.same({ { 4, 8 }, { 4, 8 } }, avg.add.input_shapes)
        assert.are.equal("", by_key(prof:key_averages()).add.input_shapes) -- not grouped
        local text = prof:key_averages({ group_by_input_shape = true }):table()
        assert.truthy(text:find("CPU Mem  Self CPU Mem    # of Calls", 1, true))
        assert.truthy(text:find("add  .*  128 b         128 b             1      " ..
            "%[%[4, 8%], %[4, 8%]%]  \n"))
    end)

    it("prints PyTorch's table: columns, sort_by, row_limit, the total", function()
        local x = tide.randn({64, 64})
        local prof = P.profile({}, function()
            for _ = 1, 3 do
                x = x:matmul(x):tanh()
            end
            x:sum()
        end)
        local avg = prof:key_averages()
        local text = avg:table({ sort_by = "cpu_time_total", row_limit = 2 })
        local lines = {}
        for l in text:gmatch("[^\n]+") do
            lines[#lines + 1] = l
        end
        assert.are.equal(7, #lines) -- rule, header, rule, 2 rows, rule, total
        local sep = ("-"):rep(12) .. "  "
        assert.are.equal(("-"):rep(10) .. "  " .. sep:rep(6), lines[1]) -- "matmul" + 4
        assert.are.equal("      Name    Self CPU %      Self CPU   CPU total %     CPU " ..
            "total  CPU time avg    # of Calls  ", lines[2])
        assert.truthy(lines[7]:match("^Self CPU time total: [%d.]+[mu]?s$"))
        local first, second = lines[4]:match("^%s*(%S+)"), lines[5]:match("^%s*(%S+)")
        local a = by_key(avg)
        assert.is_true(a[first].cpu_time_total >= a[second].cpu_time_total)
        assert.truthy(lines[4]:find("%d%.%d%d%%") and lines[4]:find("  3  $"))
        assert.are.equal(text, tostring(avg:table({ sort_by = "cpu_time_total", row_limit = 2 })))
        assert.has_error(function() avg:table({ sort_by = "cpu_total" }) end,
            "tide: table: sort_by = cpu_total; expected one of cpu_time_total, " ..
            "self_cpu_time_total, cpu_time, cuda_time_total, self_cuda_time_total, cuda_time, " ..
            "cpu_memory_usage, self_cpu_memory_usage, cuda_memory_usage, " ..
            "self_cuda_memory_usage, count")
        assert.has_error(function() avg:table({ sortby = "count" }) end)
    end)

    it("leaves every function as it was after stop, also when the profiled code raises", function()
        local core = tide.core
        local add, mt_add = core.add, getmetatable(tide.ones({ 1 })).__add
        local relu, tensor_add = tide.relu, core.Tensor.add
        assert.has_error(function()
            P.profile({}, function()
                assert.are_not.equal(add, core.add) -- wrapped while recording
                error("stop here")
            end)
        end, "stop here")
        assert.are.equal(add, core.add)
        assert.are.equal(mt_add, getmetatable(tide.ones({ 1 })).__add)
        assert.are.equal(relu, tide.relu)
        assert.are.equal(tensor_add, core.Tensor.add)
        -- a tide module loaded while recording, holding a timed closure, gets the original back
        P.profile({}, function()
            package.loaded["tide.profiler_spec_late"] = { add = core.add }
        end)
        assert.are.equal(add, package.loaded["tide.profiler_spec_late"].add)
        package.loaded["tide.profiler_spec_late"] = nil
        -- an op that raises while recording leaves no event and no open frame behind it
        local prof = P.profile({}, function()
            pcall(function() return tide.ones({ 2 }) + tide.ones({ 3 }) end)
            tide.ones({ 2 }):exp()
        end)
        for _, e in ipairs(prof:events()) do
            assert.is_nil(e.cpu_parent)
        end
        assert.is_nil(by_key(prof:key_averages()).add)
        assert.are.equal(1, by_key(prof:key_averages()).exp.count)
    end)

    it("follows a schedule: steps ranges, one on_trace_ready per cycle", function()
        local ready, x = {}, tide.ones({ 3 })
        local prof = P.profile({
            schedule = P.schedule({ wait = 1, warmup = 1, active = 2, ["repeat"] = 2 }),
            on_trace_ready = function(p)
                ready[#ready + 1] = by_key(p:key_averages())
            end,
        })
        prof:start()
        for _ = 1, 10 do
            x = x:exp():log()
            prof:step()
        end
        prof:stop()
        assert.are.equal(2, #ready)
        for c, avg in ipairs(ready) do
            assert.are.equal(2, avg.exp.count)
            local first = (c - 1) * 4 + 2
            assert.are.equal(1, avg["ProfilerStep#" .. first].count)
            assert.are.equal(1, avg["ProfilerStep#" .. first + 1].count)
        end
        local s = P.schedule({ wait = 1, warmup = 1, active = 2, skip_first = 1 })
        local got = {}
        for step = 0, 5 do
            got[#got + 1] = s(step)
        end
        assert.are.same({ "NONE", "NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE", "NONE" }, got)
        assert.has_error(function() P.schedule({ wait = 1, active = 2 }) end,
            "tide: schedule: warmup is required, as in {wait = 1, warmup = 1, active = 3}")
    end)

    it("refuses a second profiler, unknown options and what it cannot do", function()
        local prof = P.profile({}):start()
        assert.has_error(function() P.profile({}, function() end) end,
            "tide: profile: a profiler is already running in this Lua state; stop it first " ..
            "(prof:stop())")
        assert.has_error(function() prof:key_averages() end,
            "tide: key_averages: the profiler is still recording; call prof:stop() first")
        prof:stop()
        assert.has_error(function() P.profile({ record_shape = true }) end)
        assert.has_error(function() P.profile({ with_modules = true }) end,
            "tide: profile: with_modules is not supported by tide's profiler; leave it false")
        assert.has_error(function() P.profile({ with_flops = 1 }) end,
            "tide: profile: with_flops must be true or false, got 1")
        assert.has_error(function() P.profile({ activities = { "TPU" } }) end,
            "tide: profile: unknown activity TPU; expected ProfilerActivity.CPU or " ..
            "ProfilerActivity.CUDA")
    end)

    -- PyTorch 1.13's numbers for the same calls (with_flops=True): conv2d 442368, addmm 720
    -- (its linear's 400 and the direct 320), mm 640 (the direct and matmul's), bmm and baddbmm
    -- 240, mul and add 40 a call. tide's linear and matmul are one op each, so their FLOPs
    -- are theirs; an op inside another with a count (addmm's add, bmm's matmul) adds none.
    it("counts FLOPs with with_flops, by PyTorch's formulas, once per op", function()
        tide.manual_seed(0)
        local x = tide.randn(8, 3, 16, 16)
        local conv = nn.Conv2d(3, 4, 3, { padding = 1 })
        local lin = nn.Linear(10, 5)
        local a, b, c = tide.randn(4, 10), tide.randn(2, 3, 4), tide.randn(2, 4, 5)
        local prof = P.profile({ with_flops = true }, function()
            lin(a)
            tide.bmm(b, c)
            tide.mm(a, a:t())
            tide.matmul(a, a:t())
            tide.addmm(tide.zeros(4, 4), a, a:t())
            tide.baddbmm(tide.zeros(2, 3, 5), b, c)
            local _ = a * a + a
            a:add(1)
        end)
        local k = by_key(prof:key_averages())
        assert.are.equal(400, k.linear.flops)
        assert.are.equal(320, k.mm.flops)
        assert.are.equal(320, k.matmul.flops) -- the direct call only (mm and bmm run matmul)
        assert.are.equal(320, k.addmm.flops)
        assert.are.equal(240, k.bmm.flops)
        assert.are.equal(240, k.baddbmm.flops)
        assert.are.equal(40, k.mul.flops)
        assert.are.equal(80, k.add.flops) -- the two direct adds, not addmm's or baddbmm's
        assert.are.equal(0, k.t.flops)
        -- with_flops records the shapes too, as PyTorch's
        assert.are.same({ { 4, 10 }, {} }, prof:events()[#prof:events()].input_shapes) -- a:add(1)
        -- the column, scaled by the smallest count as PyTorch's auto_scale_flops
        local text = prof:key_averages():table({ sort_by = "cpu_time_total" })
        assert.truthy(text:find("Total FLOPs", 1, true))
        assert.truthy(text:find("     400.000  ", 1, true))
        -- a convolution's count, on conv2d where the device's own convolution runs (oneDNN),
        -- else on the matmul of its im2col path, which runs after conv2d declined (no oneDNN)
        -- (and then its bias is an add of its own)
        local t2 = P.profile({ with_flops = true }, function() conv(x) end)
        local k2 = by_key(t2:key_averages())
        assert.are.equal(442368, k2.conv2d.flops > 0 and k2.conv2d.flops or k2.matmul.flops)
        local lines = t2:key_averages():table()
        assert.truthy(lines:find("Total KFLOPs", 1, true))
        assert.truthy(lines:find("     442.368  ", 1, true))
        -- without with_flops, no column and no counts
        local t3 = P.profile({}, function() conv(x) end)
        assert.is_nil(t3:key_averages():table():find("FLOPs", 1, true))
        for _, e in ipairs(t3:key_averages()) do
            assert.are.equal(0, e.flops)
        end
    end)

    it("exports a Chrome trace, a TensorBoard trace file and flame-graph stacks", function()
        local dir = os.tmpname()
        os.remove(dir)
        local seen
        local prof = P.profile({ with_stack = true, record_shapes = true,
            on_trace_ready = P.tensorboard_trace_handler(dir, "worker0") }, function()
            P.record_function("block \"one\"", function() -- a name JSON must escape
                return tide.ones({ 2, 3 }):exp()
            end)
        end)
        local path = dir .. "/trace.json"
        prof:export_chrome_trace(path)
        local f = assert(io.open(path))
        local trace = json.decode(f:read("*a"), path)
        f:close()
        local names = {}
        for _, e in ipairs(trace.traceEvents) do
            assert.are.equal("X", e.ph)
            assert.is_true(e.dur >= 0 and e.ts >= 0)
            names[e.name] = e
        end
        assert.truthy(names['block "one"'])
        assert.are.same({ { 2, 3 } }, names.exp.args["Input Dims"])
        local p = io.popen("ls " .. dir)
        for name in p:lines() do
            seen = seen or name:match("^worker0%.%d+%.pt%.trace%.json$")
        end
        p:close()
        assert.truthy(seen)
        local exp = by_key(prof:events()).exp
        assert.truthy(exp.stack[1]:match("profiler_spec%.lua%(%d+%)"))
        prof:export_stacks(dir .. "/stacks.txt", "self_cpu_time_total")
        os.execute("rm -rf " .. dir)
    end)

    it("answers to other names: autograd.profiler, a range object, a decorator", function()
        local x = tide.ones({ 2 })
        local prof = tide.autograd.profiler.profile({ use_cuda = false, record_shapes = true },
            function()
                local r = P.record_function("manual"):__enter()
                x:exp()
                r:__exit()
                local f = P.record_function("decorated")(function(y) return y:log() end)
                f(x)
            end)
        local avg = by_key(prof:key_averages())
        assert.are.equal(1, avg.manual.count)
        assert.are.equal(1, avg.decorated.count)
        assert.are.equal(avg.manual, by_key(prof:key_averages()).manual and avg.manual)
        assert.is_true(prof.self_cpu_time_total > 0)
        assert.are.equal(1, P.record_function("off", function() return 1 end)) -- no profiler
    end)

    it("gives every Tensor method and operator the same results and errors", function()
        local R = require("spec.support.method_recipes")(require("spec.support.device"))
        local names, fns = R.walk()
        -- fresh memory each run: its address, its uninitialized values
        local DIFFERENT = { data_ptr = true, new_empty = true, new_empty_strided = true,
            __gc = true, __close = true }
        local function run(m)
            tide.manual_seed(7)
            local x, y, z = R.inputs()
            local args = R.RECIPES[m] and R.RECIPES[m](x, y, z) or R.tries(m, x, y, z)[1]
            if args == R.SKIP then
                args = { x }
            end
            -- looked up now: while recording, the timed closures
            local f = fns[m]
            if m ~= "__index" and m ~= "__newindex" then
                f = tide.core.Tensor[m] or getmetatable(x)[m]
            end
            return compat.pack(pcall(f, compat.unpack(args)))
        end
        local function same_value(a, b, m)
            if tide.is_tensor(a) then
                assert.is_true(tide.is_tensor(b), m)
                assert.are.same(a.shape, b.shape, m)
                assert.is_true(a:detach():cpu():equal(b:detach():cpu()) or
                    a:isnan():any():item(), m)
            elseif type(a) == "table" then
                assert.are.equal("table", type(b), m)
                for k, v in pairs(a) do
                    same_value(v, b[k], m .. "." .. tostring(k))
                end
            elseif type(a) ~= "function" and type(a) ~= "userdata" then
                assert.are.same(a, b, m)
            end
        end
        local function same(a, b, m)
            assert.are.equal(a.n, b.n, m)
            for i = 1, a.n do
                same_value(a[i], b[i], m)
            end
        end
        local plain, checked = {}, 0
        for _, m in ipairs(names) do
            plain[m] = run(m)
        end
        P.profile({}, function()
            for _, m in ipairs(names) do
                if not DIFFERENT[m] then
                    same(plain[m], run(m), m)
                    checked = checked + 1
                end
            end
        end)
        assert.is_true(checked > 400, "checked " .. checked)
    end)

    it("with the CUDA activity, makes an op on a CUDA tensor wait for its kernels #cuda", function()
        if not tide.cuda.is_available() then
            pending("no CUDA device: " .. tostring(tide.cuda.unavailable_reason()))
            return
        end
        local x = tide.randn({ 64, 64 }, { device = "cuda" })
        local cpu = tide.randn({ 4 })
        local both = { P.ProfilerActivity.CPU, P.ProfilerActivity.CUDA }
        local prof = P.profile({ activities = both }, function()
            x:matmul(x):relu()
            cpu:exp()
        end)
        local avg = by_key(prof:key_averages())
        assert.is_true(avg.matmul.cuda_time_total > 0)
        assert.are.equal(avg.matmul.cpu_time_total, avg.matmul.cuda_time_total)
        assert.are.equal(0, avg.exp.cuda_time_total) -- a CPU tensor's op is no CUDA time
        local text = prof:key_averages():table()
        assert.truthy(text:find("Self CUDA %", 1, true))
        assert.truthy(text:find("Self CUDA time total: ", 1, true))
    end)
end)
