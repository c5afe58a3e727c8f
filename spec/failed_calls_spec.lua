-- failed_calls_spec.lua — docs/API.md's rule that a refused call changes nothing: each case
-- snapshots what the call could reach (tensor values, shapes, dtypes, devices, versions, a
-- module's state_dict and training flag, an optimizer's state_dict and param_groups, a
-- scheduler's state, the grad mode, the default dtype, autocast), makes the call fail with a
-- `tide:` error, and compares. In-place ops with one bad operand or index among good ones,
-- every optimizer whose 2nd of 3 parameters has a misfit gradient with momentum state present,
-- load_state_dict of optimizers, schedulers and modules with one bad entry, Module:to,
-- register_*, the grad / autocast modes around a function that raises, clip_grad_norm_ /
-- clip_grad_value_ with an integer gradient after float ones, vector_to_parameters with a short
-- vector, GradScaler:step over a misfit gradient, and a DataLoader whose collate_fn raises.
local tide = require("tide")
local nn, optim = tide.nn, tide.optim
local F32 = { dtype = tide.float32 }

-- a deep copy of v with every tensor cloned and described (dtype, shape, device, version)
local function snap(v)
    if tide.is_tensor(v) then
        return { __t = v:detach():clone(), dtype = tostring(v.dtype), device = tostring(v.device),
            shape = table.concat(v:size(), ","), version = v:_version() }
    end
    if type(v) ~= "table" then
        return v
    end
    local r = {}
    for k, x in pairs(v) do
        r[k] = snap(x)
    end
    return r
end

local function same(a, b, path)
    if type(a) ~= type(b) then
        error(path .. ": " .. type(a) .. " became " .. type(b), 0)
    end
    if type(a) ~= "table" then
        if not (a == b or (a ~= a and b ~= b)) then
            error(path .. ": " .. tostring(a) .. " became " .. tostring(b), 0)
        end
        return
    end
    if a.__t then
        for _, k in ipairs({ "dtype", "device", "shape", "version" }) do
            if a[k] ~= b[k] then
                error(path .. "'s " .. k .. ": " .. tostring(a[k]) .. " became " ..
                    tostring(b[k]), 0)
            end
        end
        if not tide.equal(a.__t, b.__t) and not (tide.is_floating_point(a.__t) and
            tide.allclose(a.__t, b.__t, 0, 0, true)) then
            error(path .. ": values changed", 0)
        end
        return
    end
    for k, x in pairs(a) do
        same(x, b[k], path .. "." .. tostring(k))
    end
    for k in pairs(b) do
        if a[k] == nil then
            error(path .. "." .. tostring(k) .. " was added", 0)
        end
    end
end

local function modes()
    return { grad = tide.is_grad_enabled(), dtype = tostring(tide.get_default_dtype()),
        autocast = tide.is_autocast_cpu_enabled() }
end

-- fails(what, call, pattern): call raises a tide: error matching pattern (plain) and leaves
-- what() (and the global modes) as it was
local function fails(what, call, pattern)
    local before, m0 = snap(what()), modes()
    local ok, err = pcall(call)
    assert(not ok, "expected an error matching " .. pattern)
    err = tostring(err)
    assert(err:find("tide: ", 1, true), "not a tide: error: " .. err)
    assert(err:find(pattern, 1, true), "expected '" .. pattern .. "' in: " .. err)
    same(before, snap(what()), "state")
    same(m0, modes(), "modes")
end

local function params3()
    tide.manual_seed(0)
    return { nn.Parameter(tide.randn(3)), nn.Parameter(tide.randn(3)),
        nn.Parameter(tide.randn(3)) }
end

local function set_grads(ps)
    for _, p in ipairs(ps) do
        p.grad = tide.randn(3)
    end
end

-- p.grad refuses a misfit (as PyTorch's); a fitting one reshaped in place reaches the step
local function misfit_grad(p, g)
    p.grad = tide.zeros_like(p)
    p.grad:set_(g)
end

describe("a failed call changes nothing", function()
    it("in-place tensor ops with a bad operand, index or bound", function()
        local a = tide.tensor({ 1.5, 2.5, 3.5, 4.5, 5.5 })
        local m = tide.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }, F32) -- (5.1: {1., 2.} is int64)
        local function ta() return { a, m } end
        local idx = tide.tensor({ 1, 9 }, { dtype = tide.int64 })
        local two = tide.tensor({ 7, 7 }, F32)
        fails(ta, function() m:add_(tide.tensor({ 1, 2 }, F32)) end, "add_: shapes [2, 3] and [2]")
        fails(ta, function() a:index_add_(1, idx, two) end, "index 9 is out of range")
        fails(ta, function() a:index_copy_(1, idx, two) end, "index_copy: index 9 is out of range")
        fails(ta, function() a:index_fill_(1, idx, 0) end, "index_fill: index 9 is out of range")
        fails(ta, function() a:index_put_({ idx }, two, true) end, "index_put_: index 9")
        fails(ta, function() a:scatter_(1, idx, two) end, "scatter_: index 9")
        fails(ta, function() a:scatter_add_(1, idx, two) end, "scatter_add_: index 9")
        fails(ta, function() a:put_(idx, two, true) end, "put_: index 9")
        fails(ta, function() a[idx] = 3 end, "index 9 is out of range")
        fails(ta, function() a:masked_scatter_(tide.tensor({ true, true, true, false, false }),
            two) end, "mask selects 3 elements but source has only 2")
        fails(ta, function() a:copy_(two) end, "copy_: cannot copy a tensor of shape [2]")
        fails(ta, function() a:clamp_(tide.zeros(5), two) end, "clamp_: shapes [5] and [2]")
        fails(ta, function() a:addcmul_(two, a) end, "addcmul: shapes [2] and [5] cannot be")
        fails(ta, function() a:lerp_(a, two) end, "lerp: shapes [2] and [5] cannot be")
        -- ops written over others name themselves, not the where, ge or maximum inside
        for _, op in ipairs({ "fmax", "fmin", "heaviside", "xlogy", "logaddexp", "logaddexp2",
            "ldexp", "nextafter", "float_power", "dist", "allclose", "isclose" }) do
            fails(ta, function() return a[op](a, two) end, op .. ": shapes [5] and [2] cannot " ..
                "be broadcast: size 5 vs 2 at dim 1")
        end
        fails(ta, function() a:bernoulli_(tide.full({ 2 }, 0.5)) end, "bernoulli_: shapes [5] " ..
            "and [2] cannot be broadcast")
        fails(ta, function() a:normal_(0, -1) end, "normal_: std -1 is negative")
        fails(ta, function() m:transpose_(1, 5) end, "transpose_: dim 5 is out of range")
        fails(ta, function() m:resize_(-1, 2) end, "resize_: size 1 is -1")
        fails(ta, function() m.data = "x" end, "t.data = v: v must be a tensor")
        local i = tide.tensor({ 1, 2 })
        fails(function() return { i } end, function() i:add_(tide.tensor({ 0.5, 0.5 })) end,
            "cannot be written into a int64 tensor in place")
        local p1, p2, p3 = tide.tensor({ 1, 2 }, F32), tide.tensor({ 1, 2, 3 }, F32), tide.ones(1)
        fails(function() return { p1, p2, p3 } end, function()
            tide._foreach_add_({ p1, p2, p3 }, { tide.ones(2), tide.ones(2), tide.ones(1) })
        end, "_foreach_add_: element 2")
    end)

    it("every optimizer: a misfit gradient on the 2nd of 3 parameters moves none", function()
        local cfg = { SGD = { lr = 0.1, momentum = 0.9 }, Adam = { lr = 0.1 },
            AdamW = { lr = 0.1, amsgrad = true }, Adagrad = { lr = 0.1 }, Adadelta = {},
            Adamax = {}, NAdam = {}, RAdam = {}, RMSprop = { momentum = 0.9, centered = true },
            Rprop = {}, ASGD = {} }
        for name, opts in pairs(cfg) do
            for _, bad in ipairs({ "shape", "device" }) do
                local ps = params3()
                local opt = optim[name](ps, opts)
                set_grads(ps)
                opt:step() -- state present (momentum buffers, step counters)
                set_grads(ps)
                if bad == "shape" then
                    misfit_grad(ps[2], tide.randn(4))
                else
                    misfit_grad(ps[2], tide.randn(3):to("cpu:1"))
                end
                fails(function() return { ps, opt:state_dict(), opt.param_groups } end,
                    function() opt:step() end,
                    name .. ": the gradient of parameter 2 " ..
                    (bad == "shape" and "has shape {4}, expected {3}" or "is on cpu:1"))
                -- a state entry of the wrong shape, loaded: the step refuses it first too
                set_grads(ps)
                local sd = tide.deepcopy(opt:state_dict())
                local key
                for k, v in pairs(sd.state[2]) do
                    if tide.is_tensor(v) and v:numel() == 3 and (key == nil or k < key) then
                        key = k
                    end
                end
                sd.state[2][key] = tide.zeros(4)
                opt:load_state_dict(sd)
                fails(function() return { ps, opt:state_dict() } end, function() opt:step() end,
                    name .. ": the state of parameter 2: " .. key .. " has shape {4}")
            end
        end
    end)

    it("optimizer add_param_group and load_state_dict with one bad entry", function()
        local ps = params3()
        local opt = optim.Adam({ { params = { ps[1] } }, { params = { ps[2], ps[3] },
            lr = 0.5 } }, { lr = 0.1 })
        set_grads(ps)
        opt:step()
        local function o() return { ps, opt:state_dict(), opt.param_groups } end
        fails(o, function() opt:add_param_group({ params = { tide.nn.Parameter(tide.ones(2)),
            ps[1] } }) end, "parameter 2 is already in a parameter group")
        fails(o, function() opt:add_param_group({ params = { nn.Parameter(tide.ones(2)) },
            lr = -1 }) end, "expected lr >= 0, got -1")
        local function bad(f)
            local s = tide.deepcopy(opt:state_dict())
            s.param_groups[1].lr = 0.7 -- a good entry before the bad one
            s.state[1].exp_avg = tide.ones(3)
            f(s)
            return s
        end
        fails(o, function() opt:load_state_dict(bad(function(s) s.param_groups[2].lr = "x" end))
        end, "param_groups.2.lr was set to a string")
        fails(o, function() opt:load_state_dict(bad(function(s) s.param_groups[2].betas = { 0.9 }
        end)) end, "'param_groups.2.betas' must be a list of 2 numbers")
        fails(o, function() opt:load_state_dict(bad(function(s) s.state[9] = s.state[1] end))
        end, "state.9 belongs to no parameter of the groups")
        fails(o, function() opt:load_state_dict(bad(function(s) s.param_groups[2].params = { 1 }
        end)) end, "parameter group 2 has 1 parameters in the state dict and 2")
    end)

    it("scheduler load_state_dict and step with a bad entry", function()
        local ps = params3()
        local opt = optim.SGD(ps, { lr = 0.1, momentum = 0.9 })
        local sch = optim.lr_scheduler.StepLR(opt, 2, 0.5)
        set_grads(ps)
        opt:step()
        sch:step()
        sch:step()
        assert.near(0.05, sch:get_last_lr()[1], 1e-15)
        local function s() return { sch:state_dict(), sch:get_last_lr(), opt.param_groups } end
        local sd = sch:state_dict()
        fails(s, function()
            local b = tide.deepcopy(sd)
            b.step_size, b.last_epoch = 9, "x"
            sch:load_state_dict(b)
        end, "StepLR:load_state_dict: 'last_epoch' must be an integer")
        fails(s, function()
            local b = tide.deepcopy(sd)
            b.step_size, b.zzz = 9, 1
            sch:load_state_dict(b)
        end, "unexpected key 'zzz'")
        local pl = optim.lr_scheduler.ReduceLROnPlateau(opt, { patience = 0 })
        pl:step(1.0)
        fails(function() return { pl:state_dict(), opt.param_groups } end,
            function() pl:step("x") end, "expected the metric as a number")
    end)

    it("module load_state_dict, to, register_* and add_module refused", function()
        tide.manual_seed(0)
        local model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3), nn.ReLU(), nn.Linear(3, 2))
        local function ms()
            local names = {}
            for n in model:named_modules() do
                names[#names + 1] = n
            end
            local buffers = {}
            for n, b in model:named_buffers() do
                buffers[n] = b
            end
            return { model:state_dict(), model.training, names, buffers, model[1].weight.dtype }
        end
        local function bad(f)
            local s = {}
            for k, v in pairs(model:state_dict()) do
                s[k] = v:clone()
            end
            s["1.weight"] = tide.ones(3, 2) -- a good entry before the bad one
            f(s)
            return s
        end
        fails(ms, function() model:load_state_dict(bad(function(s) s["4.weight"] =
            tide.zeros(5, 5) end)) end, "size mismatch for '4.weight'")
        fails(ms, function() model:load_state_dict(bad(function(s) s["4.bias"] = nil end)) end,
            "missing keys: 4.bias")
        fails(ms, function() model:load_state_dict(bad(function(s) s["9.bias"] = tide.ones(2)
        end)) end, "unexpected keys: 9.bias")
        fails(ms, function() model:load_state_dict(bad(function(s) s["4.bias"] = tide.ones(7)
        end), false) end, "size mismatch for '4.bias'")
        fails(ms, function() model:to("float99") end, '"float99" is neither a device nor a dtype')
        fails(ms, function() model:to(tide.int64) end, "expected a floating-point dtype")
        local lin = model[1]
        fails(ms, function() lin:register_buffer("weight", tide.zeros(2)) end,
            "'weight' is already registered as a parameter")
        fails(ms, function() lin:register_buffer("a.b", tide.zeros(2)) end, "without '.'")
        fails(ms, function() lin:register_parameter("w2", "x") end, "expected a tensor for 'w2'")
        fails(ms, function() lin:add_module("weight", nn.ReLU()) end, "'weight' is already")
        fails(ms, function() lin:add_module("sub", 3) end, "expected a Module for 'sub'")
        fails(ms, function() model:train("x") end, "training mode is expected to be boolean")
        -- a forward that raises at the 4th layer: PyTorch's BatchNorm before it has counted
        -- the batch too; a raise before any layer changes nothing
        fails(ms, function() model(tide.randn(4, 5)) end, "Linear: expected input with last dim 2")
    end)

    it("grad and autocast modes come back after a function that raises", function()
        local function none() return {} end
        fails(none, function() tide.no_grad(function() error("tide: boom") end) end, "boom")
        fails(none, function() tide.no_grad(function() tide.enable_grad(function()
            error("tide: inner") end) end) end, "inner")
        fails(none, function() tide.set_grad_enabled(false, function() error("tide: sg") end) end,
            "sg")
        fails(none, function() tide.inference_mode(function() error("tide: inf") end) end, "inf")
        fails(none, function() tide.autocast("cpu", function() error("tide: ac") end) end, "ac")
        fails(none, function() tide.autocast("cpu", { dtype = tide.int64 }, function() end) end,
            'dtype must be "float16" or "bfloat16"')
        fails(none, function() tide.set_default_dtype(tide.int64) end,
            'the default dtype is "float32" or "float64"')
        fails(function() return { tide.get_rng_state() } end, function() tide.manual_seed("x") end,
            "expected the seed to be an integer")
        assert.is_true(tide.is_grad_enabled())
    end)

    it("clip_grad_norm_, clip_grad_value_ and vector_to_parameters refuse before writing",
        function()
        local ps = params3()
        set_grads(ps)
        local function gs() return { ps[1].grad, ps[2].grad, ps[3].grad } end
        fails(gs, function() nn.utils.clip_grad_norm_(ps, 0.1, "x") end, "norm_type x is not")
        fails(gs, function() nn.utils.clip_grad_norm_(ps, 0.1, -1) end, "norm_type -1 is not")
        fails(gs, function() nn.utils.clip_grad_norm_({ ps[1], ps[2], "x" }, 0.1) end,
            "parameter 3 is a string")
        ps[3].grad[1] = 0 / 0
        fails(gs, function() nn.utils.clip_grad_norm_(ps, 0.1, 2, { error_if_nonfinite = true })
        end, "the total norm of order 2 of the gradients is non-finite (nan)")
        misfit_grad(ps[3], tide.tensor({ 1, 2, 3 }))
        -- float gradients 1 and 2 stay as they were (they were scaled, then int64 raised)
        fails(gs, function() nn.utils.clip_grad_norm_(ps, 0.01) end,
            "clip_grad_norm_: the gradient of parameter 3 has dtype int64")
        fails(gs, function() nn.utils.clip_grad_value_(ps, 0.01) end,
            "clip_grad_value_: the gradient of parameter 3 has dtype int64")
        local function pv() return { ps[1], ps[2], ps[3] } end
        fails(pv, function() nn.utils.vector_to_parameters(tide.zeros(7), ps) end,
            "vec has 7 elements, the parameters 9")
        fails(pv, function() nn.utils.vector_to_parameters(tide.zeros(9), { ps[1], ps[2], 3 }) end,
            "parameter 3 is a number")
        fails(pv, function() nn.utils.vector_to_parameters(tide.zeros(3, 3), ps) end,
            "expected a 1-D vec")
        -- the good call: every element written
        nn.utils.vector_to_parameters(tide.arange(1, 10):float(), ps)
        assert.same({ 7, 8, 9 }, ps[3]:tolist())
    end)

    it("GradScaler:step over a misfit gradient leaves the gradients scaled", function()
        local ps = params3()
        local opt = optim.SGD(ps, { lr = 0.1, momentum = 0.9 })
        set_grads(ps)
        opt:step()
        local sc = tide.amp.GradScaler({ init_scale = 4.0 })
        opt:zero_grad()
        sc:scale((ps[1] * ps[2] * ps[3]):sum()):backward()
        local want1 = (ps[2] * ps[3]):mul(4)
        misfit_grad(ps[2], tide.ones(4))
        local function st() return { ps, ps[1].grad, ps[3].grad, opt:state_dict(),
            sc:state_dict() } end
        fails(st, function() sc:step(opt) end, "SGD: the gradient of parameter 2 has shape {4}")
        fails(st, function() sc:step("x") end, "GradScaler:step: expected an optimizer")
        fails(st, function() sc:update("x") end, "new_scale must be a finite number > 0")
        assert.is_true(tide.allclose(ps[1].grad, want1, 0, 0))
        -- with an inf among the gradients the step is skipped without running, as PyTorch's:
        -- no error, the scale backs off
        ps[3].grad[1] = math.huge
        local p1 = ps[1]:clone()
        sc:step(opt)
        sc:update()
        assert.equal(2.0, sc:get_scale())
        assert.is_true(tide.equal(p1, ps[1]))
        -- the misfit fixed: the step unscales once and runs
        ps[2].grad = tide.ones(3)
        opt:zero_grad()
        sc:scale((ps[1] * ps[2] * ps[3]):sum()):backward()
        local g1 = (ps[2] * ps[3]):detach()
        local before = ps[1]:detach():clone()
        local buf = opt.state[ps[1]].momentum_buffer:clone()
        sc:step(opt)
        local want = before - (buf * 0.9 + g1) * 0.1
        assert.is_true(tide.allclose(ps[1], want, 1e-6, 1e-6))
    end)

    it("a DataLoader whose collate_fn raises starts clean on the next iter()", function()
        local D = tide.utils.data
        local ds = D.TensorDataset(tide.arange(1, 9):float())
        local k = 0
        local dl = D.DataLoader(ds, { batch_size = 2, collate_fn = function(b)
            k = k + 1
            if k == 2 then
                error("tide: collate boom")
            end
            return D.default_collate(b)
        end })
        local ok, err = pcall(function()
            for _ in dl:iter() do end
        end)
        assert.is_false(ok)
        assert.truthy(tostring(err):find("tide: collate boom", 1, true))
        local firsts = {}
        for b in dl:iter() do
            local t = tide.is_tensor(b) and b or b[1]
            firsts[#firsts + 1] = t:reshape(-1)[1]:item()
        end
        assert.same({ 1, 3, 5, 7 }, firsts)
    end)
end)

describe("SummaryWriter:add_scalars refused", function()
    it("leaves no sub-run behind (every value and the step checked first)", function()
        local dir = os.tmpname()
        os.remove(dir)
        local w = require("tide.utils.tensorboard").SummaryWriter(dir)
        assert.has_error(function() w:add_scalars("m", { a = 1, b = "x" }, 1) end)
        assert.has_error(function() w:add_scalars("n", { a = 1 }, "x") end)
        w:close()
        local listing = io.popen("ls " .. dir):read("*a")
        assert.is_nil(listing:find("m_a", 1, true), listing)
        assert.is_nil(listing:find("n_a", 1, true), listing)
        os.execute("rm -rf " .. dir)
    end)
end)

describe("out= of several results", function()
    it("refuses an out of another dtype for an integer result, writing nothing", function()
        local m = tide.tensor({ { 1, 5, 2 }, { 7, 3, 4 } }, { dtype = "float32" })
        local v, i = tide.full({ 2 }, 9.5), tide.full({ 2 }, 9.5)
        assert.has_error(function() tide.max(m, 2, { out = { v, i } }) end,
            "tide: max: out[2] must be int64, as the result it takes (as PyTorch's: expected " ..
            "out tensor to have dtype int64, but got float32)")
        assert.are.same({ 9.5, 9.5 }, v:totable())
        local e = tide.zeros(2, 3)
        assert.has_error(function() tide.frexp(m, { out = { tide.zeros(2, 3), e } }) end,
            "tide: frexp: out[2] must be int32, as the result it takes (as PyTorch's: expected " ..
            "out tensor to have dtype int32, but got float32)")
        local ii = tide.zeros({ 2 }, { dtype = "int64" })
        tide.max(m, 2, { out = { v, ii } })
        assert.are.same({ 2, 1 }, ii:totable())
    end)
end)

describe("resize_ past any memory", function()
    it("raises naming resize_ and the shape, the tensor as it was", function()
        local t = tide.tensor({ 1, 2 }, { dtype = "float32" })
        assert.has_error(function() t:resize_(1048576, 1073741824, 16) end,
            "tide: resize_: a tensor of shape {1048576, 1073741824, 16} has more elements " ..
            "than any memory holds")
        assert.are.same({ 1, 2 }, t:totable())
    end)
end)
