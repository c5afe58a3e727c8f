-- parity2_spec.lua — issue 27: DataLoader batch counts at the integer limit and bad sampler
-- values, F.batch_norm validating before it updates, *_like of a non-tensor, non-integer dims
-- and sizes in the Lua-side ops, optimizers validating every state before a step and the value
-- types of a loaded state dict. Every failed call raises `tide: <op>:` at this file's line and
-- changes nothing.
local tide = require("tide")

-- a gradient that does not fit its parameter: PyTorch's (and tide's) t.grad = g refuses one, so
-- it is reshaped, converted or moved in place after a fitting assignment (g:set_), which
-- reaches the step; the step's own checks stay the last fence
local function misfit_grad(p, g)
    p.grad = tide.zeros_like(p)
    p.grad:set_(g)
end
local data = require("tide.data")
local F = tide.nn.functional

-- the error of f(...), asserted to be a tide error at this file's line
local function err_of(f, ...)
    local ok, err = pcall(f, ...)
    assert.is_false(ok, "expected an error")
    assert.is_string(err)
    assert.matches("parity2_spec%.lua:%d+: tide: ", err)
    return err
end

local function ids_of(loader)
    local out, batches = {}, 0
    for x in loader:iter() do
        batches = batches + 1
        for _, v in ipairs(x:totable()) do
            out[#out + 1] = v
        end
    end
    return out, batches
end

describe("DataLoader at batch_size = math.maxinteger (issue 27) #lua53", function()
    local ds = data.TensorDataset(tide.arange(1, 11))
    local Items = data.Dataset:extend("Items")
    function Items:len() return 4 end
    function Items:get(i) return tide.tensor({ i }) end

    it("is one batch of everything, without overflowing; none with drop_last = true",
        function()
        for _, opts in ipairs({ { batch_size = math.maxinteger },
            { batch_size = math.maxinteger, drop_last = false } }) do
            local loader = data.DataLoader(ds, opts)
            assert.are.equal(1, #loader)
            local ids, batches = ids_of(loader)
            assert.are.equal(1, batches)
            assert.are.same({ 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 }, ids)
        end
        local loader = data.DataLoader(Items(), { batch_size = math.maxinteger, shuffle = true,
            seed = 3 })
        assert.are.equal(1, #loader)
        local n = 0
        for x in loader:iter() do
            n = n + 1
            assert.are.same({ 4, 1 }, x.shape)
        end
        assert.are.equal(1, n)
        -- is no batch with drop_last = true, or for an empty dataset
        local loader = data.DataLoader(ds, { batch_size = math.maxinteger, drop_last = true })
        assert.are.equal(0, #loader)
        local _, batches = ids_of(loader)
        assert.are.equal(0, batches)
        local empty = data.TensorDataset(tide.zeros(0))
        assert.are.equal(0, #data.DataLoader(empty, { batch_size = math.maxinteger }))
    end)

    it("still counts ordinary batches by ceiling division", function()
        assert.are.equal(4, #data.DataLoader(ds, { batch_size = 3 }))
        assert.are.equal(3, #data.DataLoader(ds, { batch_size = 3, drop_last = true }))
        assert.are.equal(2, #data.DataLoader(ds, { batch_size = 5 }))
        assert.are.equal(1, #data.DataLoader(ds, { batch_size = math.maxinteger - 1 }))
    end)
end)

describe("DataLoader over a sampler giving a non-integer (issue 27)", function()
    local ds = data.TensorDataset(tide.arange(1, 11))

    it("raises a DataLoader error naming the value and its position", function()
        local err = err_of(function()
            for _ in data.DataLoader(ds, { sampler = { 1, 1.5 } }):iter() do end
        end)
        assert.matches("tide: DataLoader: the sampler gave 1%.5 at position 2; sample " ..
            "indices must be integers in 1%.%.10", err)
        err = err_of(function()
            for _ in data.DataLoader(ds, { sampler = { 1, "2" } }):iter() do end
        end)
        assert.matches('tide: DataLoader: the sampler gave "2" %(a string%) at position 2; ' ..
            "sample indices must be integers in 1%.%.10", err)
        local S = {}
        function S.len() return 2 end
        function S.iter()
            local k = 0
            return function()
                k = k + 1
                if k == 1 then return 1 elseif k == 2 then return {} end
            end
        end
        err = err_of(function()
            for _ in data.DataLoader(ds, { sampler = S }):iter() do end
        end)
        assert.matches("tide: DataLoader: the sampler gave a table at position 2", err)
        err = err_of(function()
            for _ in data.DataLoader(ds, { sampler = { 1, 0 / 0 } }):iter() do end
        end)
        assert.matches("tide: DataLoader: the sampler gave nan at position 2", err)
    end)

    it("takes integral floats and still names an index out of range", function()
        local ids = ids_of(data.DataLoader(ds, { sampler = { 3, 2.0 }, batch_size = 2 }))
        assert.are.same({ 3, 2 }, ids)
        local err = err_of(function()
            for _ in data.DataLoader(ds, { sampler = { 11 } }):iter() do end
        end)
        assert.matches("tide: DataLoader: the sampler gave index 11 %(position 1%), out of " ..
            "range 1%.%.10", err)
    end)
end)

describe("F.batch_norm checks everything before it updates the running stats (issue 27)", function()
    local x = tide.randn(4, 3)

    local function call(rm, rv, opts)
        opts = opts or {}
        opts.training = true
        return F.batch_norm(x, rm, rv, opts)
    end

    local function fails_unchanged(rm, rv, opts, pattern)
        local m0, v0 = rm:clone(), rv:clone()
        local err = err_of(call, rm, rv, opts)
        assert.matches("tide: batch_norm: " .. pattern, err)
        assert.is_true(rm:to("float64"):equal(m0:to("float64")), "running_mean changed")
        assert.is_true(rv:to("float64"):equal(v0:to("float64")), "running_var changed")
    end

    it("a running_var of the wrong shape leaves running_mean unchanged", function()
        fails_unchanged(tide.zeros(3), tide.ones(3, 1), nil,
            "expected running_var of shape {3} %(the input's channels%), got {3, 1}")
        fails_unchanged(tide.zeros(3, 1), tide.ones(3), nil,
            "expected running_mean of shape {3} %(the input's channels%), got {3, 1}")
    end)

    it("a running stat of an integer dtype or an expanded view, a bad weight or bias: " ..
        "nothing changes; good ones still update", function()
        fails_unchanged(tide.zeros(3), tide.ones({ 3 }, { dtype = "int64" }), nil,
            "running_var must be floating%-point to hold the running estimate, got int64")
        fails_unchanged(tide.zeros(3), tide.ones({ 3 }, { dtype = "bool" }), nil,
            "running_var must be floating%-point")
        fails_unchanged(tide.zeros(3), tide.ones(1):expand(3), nil,
            "running_var is an expanded view")
        -- a bad weight or bias also fails before the update
        fails_unchanged(tide.zeros(3), tide.ones(3), { weight = tide.ones(4) },
            "expected weight with 3 elements")
        fails_unchanged(tide.zeros(3), tide.ones(3), { bias = tide.ones(2) },
            "expected bias with 3 elements")
        -- good running stats are updated as before
        local rm, rv = tide.zeros(3), tide.ones(3)
        call(rm, rv)
        local m = x:mean(1)
        assert.is_true(rm:allclose(m * 0.1, 1e-5, 1e-6))
        -- float64 estimates under a float32 input raise, as PyTorch's (layer_dtypes_spec.lua)
        fails_unchanged(tide.zeros({ 3 }, { dtype = "float64" }),
            tide.ones({ 3 }, { dtype = "float64" }), nil,
            "the input is float32 and the running_mean float64")
    end)
end)

describe("*_like of a non-tensor (issue 27)", function()
    it("raises `tide: <op>: expected a tensor, got <type>`", function()
        local ops = { "zeros_like", "ones_like", "rand_like", "randn_like", "empty_like" }
        for _, op in ipairs(ops) do
            for _, v in ipairs({ { 3, "number" }, { {}, "table" }, { "s", "string" } }) do
                local err = err_of(function() return tide[op](v[1]) end)
                assert.matches("tide: " .. op .. ": expected a tensor.*, got " .. v[2], err)
            end
            local err = err_of(function() return tide[op](nil) end)
            assert.matches("tide: " .. op .. ": expected a tensor.*, got nil", err)
        end
        local err = err_of(function() return tide.full_like(3, 1) end)
        assert.matches("tide: full_like: expected a tensor.*, got number", err)
        err = err_of(function() return tide.full_like(nil, 1) end)
        assert.matches("tide: full_like: expected a tensor.*, got nil", err)
        assert.are.same({ 2, 3 }, tide.zeros_like(tide.ones(2, 3)).shape)
    end)
end)

describe("dims and sizes that are no integers (issue 27)", function()
    local x = tide.ones(2, 4)
    local BAD = { { math.huge, "inf" }, { -math.huge, "%-inf" }, { 1e308, "1e%+308" },
        { 2.5, "2%.5" }, { 0 / 0, "nan" } }

    it("raise `tide: <op>: ... must be an integer, got <value>`; integral floats work", function()
        for _, b in ipairs(BAD) do
            local v, shown = b[1], b[2]
            local cases = {
                { "cumsum", "dim", function() return x:cumsum(v) end },
                { "var", "dim", function() return x:var(v) end },
                { "any", "dim", function() return x:any(v) end },
                { "flatten", "dim", function() return x:flatten(v) end },
                { "unbind", "dim", function() return x:unbind(v) end },
                { "split", "split_size", function() return x:split(v) end },
                { "split", "size 1", function() return x:split({ v, 2 }, 2) end },
                { "chunk", "chunks", function() return x:chunk(v) end },
                { "unflatten", "size 1", function() return x:unflatten(2, { v, 1 }) end },
                { "tile", "reps 1", function() return x:tile(v, 1) end },
                { "linspace", "steps", function() return tide.linspace(0, 1, v) end },
                { "randint", "high", function() return tide.randint(0, v, { 2 }) end },
            }
            for _, c in ipairs(cases) do
                local err = err_of(c[3])
                assert.matches("tide: " .. c[1] .. ": " .. c[2] .. " must be an integer, got " ..
                    shown, err)
            end
        end
        -- an integral float still works
        assert.are.same({ 2 }, x:sum(2.0).shape)
        assert.are.equal(2, #x:chunk(2.0, 2))
        assert.are.same({ 8 }, x:flatten(1.0).shape)
    end)

    it("std and var take an integer correction only", function()
        for _, b in ipairs({ { 2.5, "2%.5" }, { math.huge, "inf" }, { 0 / 0, "nan" } }) do
            for _, op in ipairs({ "var", "std" }) do
                local err = err_of(function() return x[op](x, { correction = b[1] }) end)
                assert.matches("tide: " .. op .. ": correction must be an integer, got " ..
                    b[2], err)
            end
        end
        local err = err_of(function() return x:var({ correction = "1" }) end)
        assert.matches("tide: var: correction must be an integer, got string", err)
        assert.is_true(math.abs(x:var({ correction = 2 }):item()) < 1e-12)
        assert.is_true(math.abs(x:var({ correction = 2.0 }):item()) < 1e-12)
    end)
end)

describe("optimizer steps validate every parameter's state first (issue 27)", function()
    local function setup(kind, opts)
        local p1 = tide.tensor({ 1.0, 2.0 }, { dtype = "float32" }):requires_grad_(true)
        local p2 = tide.tensor({ 1.0, 2.0, 3.0 }, { dtype = "float32" }):requires_grad_(true)
        local opt = tide.optim[kind]({ p1, p2 }, opts)
        p1.grad, p2.grad = tide.ones(2), tide.ones(3)
        return p1, p2, opt
    end

    for _, kind in ipairs({ "Adam", "AdamW" }) do
        it(kind .. ": a loaded exp_avg of the wrong shape for parameter 2 changes nothing",
            function()
                local p1, p2, opt = setup(kind, { lr = 0.1 })
                opt:step()
                local sd = opt:state_dict()
                sd["state.2.exp_avg"] = tide.zeros(4)
                local q1, q2, opt2 = setup(kind, { lr = 0.1 })
                opt2:load_state_dict(sd)
                local before1, before2 = q1:totable(), q2:totable()
                local m1 = opt2.state[q1].exp_avg:totable()
                local err = err_of(function() opt2:step() end)
                assert.matches("tide: " .. kind .. ": the state of parameter 2: exp_avg has " ..
                    "shape {4}, expected {3}", err)
                assert.are.same(before1, q1:totable())
                assert.are.same(before2, q2:totable())
                assert.are.equal(1, opt2.state[q1].step)
                assert.are.same(m1, opt2.state[q1].exp_avg:totable())
                local _ = p1, p2
            end)
    end

    it("Adam: a missing exp_avg_sq or a step that is not a number changes nothing", function()
        local q1, q2, opt = setup("Adam", { lr = 0.1 })
        opt:step()
        opt.state[q2].exp_avg_sq = nil
        local b1 = q1:totable()
        local err = err_of(function() opt:step() end)
        assert.matches("tide: Adam: the state of parameter 2: exp_avg_sq is missing", err)
        assert.are.same(b1, q1:totable())
        assert.are.equal(1, opt.state[q1].step)
        opt.state[q2].exp_avg_sq = tide.zeros(3)
        opt.state[q2].step = { 1 }
        err = err_of(function() opt:step() end)
        assert.matches("tide: Adam: the state of parameter 2: step must be a number", err)
        assert.are.same(b1, q1:totable())
        assert.are.equal(1, opt.state[q1].step)
    end)

    it("SGD with momentum: a bad momentum_buffer for parameter 2 creates no buffer for 1",
        function()
            local q1, q2, opt = setup("SGD", { lr = 0.1, momentum = 0.9 })
            opt.state[q2] = { device = q2.device, dtype = q2.dtype,
                momentum_buffer = tide.zeros(2) }
            local b1, b2 = q1:totable(), q2:totable()
            local err = err_of(function() opt:step() end)
            assert.matches("tide: SGD: the state of parameter 2: momentum_buffer has shape " ..
                "{2}, expected {3}", err)
            assert.are.same(b1, q1:totable())
            assert.are.same(b2, q2:totable())
            assert.is_nil(opt.state[q1] and opt.state[q1].momentum_buffer)
            opt.state[q2].momentum_buffer = nil
            opt:step()
            assert.is_not_nil(opt.state[q1].momentum_buffer)
        end)

    it("a gradient of another shape for parameter 2 changes nothing", function()
        for _, kind in ipairs({ "SGD", "Adam" }) do
            local q1, q2, opt = setup(kind, { lr = 0.1, momentum = kind == "SGD" and 0.9 or nil })
            assert.has_error(function() q2.grad = tide.ones(2) end,
                "tide: t.grad = g: g has shape {2}, the tensor {3} (as PyTorch's: assigned " ..
                "grad has data of a different size)")
            misfit_grad(q2, tide.ones(2))
            local b1 = q1:totable()
            local err = err_of(function() opt:step() end)
            assert.matches("tide: " .. kind .. ": the gradient of parameter 2 has shape {2}, " ..
                "expected {3}", err)
            assert.are.same(b1, q1:totable())
            assert.is_nil(opt.state[q1] and (opt.state[q1].momentum_buffer or
                opt.state[q1].step))
        end
    end)
end)

describe("optimizer load_state_dict checks value types (issue 27)", function()
    local function setup()
        local p = tide.tensor({ 1.0, 2.0 }, { dtype = "float32" }):requires_grad_(true)
        local opt = tide.optim.Adam({ p }, { lr = 0.1 })
        p.grad = tide.ones(2)
        opt:step()
        return p, opt
    end

    local function rejects(key, value, pattern)
        local p, opt = setup()
        local sd = opt:state_dict()
        sd[key] = value
        local lr, step = opt.param_groups[1].lr, opt.state[p].step
        local err = err_of(function() opt:load_state_dict(sd) end)
        assert.matches("tide: Adam:load_state_dict: " .. pattern, err)
        assert.are.equal(lr, opt.param_groups[1].lr)
        assert.are.equal(step, opt.state[p].step)
    end

    it("a list where a number belongs names the key; a good state dict still loads",
        function()
        rejects("state.1.step", tide.zeros(2), "'state%.1%.step' must be a number, got a table")
        rejects("state.1.step", tide.tensor(true),
            "'state%.1%.step' must be a number, got a boolean")
        rejects("param_groups.1.lr", tide.zeros(2),
            "'param_groups%.1%.lr' must be a number, got a table")
        rejects("param_groups.1.lr", tide.tensor(true),
            "'param_groups%.1%.lr' must be a number, got a boolean")
        rejects("param_groups.1.maximize", tide.tensor(1.5),
            "'param_groups%.1%.maximize' must be a boolean, got a number")
        rejects("param_groups.1.betas", tide.tensor(0.9),
            "'param_groups%.1%.betas' must be a table, got a number")
        rejects("state.1.step", {}, "expected a tensor for 'state%.1%.step', got table")
        rejects("param_groups.1.lr", "x", "expected a tensor for 'param_groups%.1%.lr', got string")
        -- a good state dict still loads
        local p, opt = setup()
        local sd = opt:state_dict()
        local q = tide.tensor({ 1.0, 2.0 }, { dtype = "float32" }):requires_grad_(true)
        local opt2 = tide.optim.Adam({ q }, { lr = 0.5 })
        opt2:load_state_dict(sd)
        assert.are.equal(0.1, opt2.param_groups[1].lr)
        assert.are.equal(1, opt2.state[q].step)
        local _ = p
    end)
end)

-- the float32 bits of PyTorch 1.13's torch.linspace(-1.3, 2.9, n) (Debian's python3-torch, the
-- scalar path: n below one SIMD vector, or a vector's first point); the points past one vector
-- depend on PyTorch's SIMD width (8 or 16 floats), which fuses differently
describe("linspace (issue 27) #lua53", function()
    local TORCH = {
        [5] = { 0xbfa66666, 0xbe800000, 0x3f4cccd0, 0x3fecccce, 0x4039999a },
        [7] = { 0xbfa66666, 0xbf199999, 0x3dccccd0, 0x3f4ccccf, 0x3fc00001, 0x400ccccd,
            0x4039999a },
        [10] = { 0xbfa66666, 0xbf555555, 0xbebbbbbc, 0x3dccccc8, 0x3f111110, 0x3f844446,
            0x3fc00002, 0x3ffbbbbd, 0x401bbbbc, 0x4039999a },
    }
    it("gives PyTorch's float32 points bit for bit (each rounded once)", function()
        for n, bits in pairs(TORCH) do
            local got = tide.linspace(-1.3, 2.9, n):totable()
            for k, want in ipairs(bits) do
                local b = string.unpack("<I4", string.pack("<f", got[k]))
                assert.are.equal(string.format("n=%d point %d: 0x%08x", n, k, want),
                    string.format("n=%d point %d: 0x%08x", n, k, b))
            end
        end
    end)
end)

describe("messages that were internal Lua errors (issue 27)", function()
    it("a bool class target to nll_loss, cross_entropy and CrossEntropyLoss", function()
        local F = require("tide.nn.functional")
        local nn = require("tide.nn")
        local x = tide.randn(3, 4)
        local t = tide.tensor({ true, false, true })
        for _, c in ipairs({
            { "nll_loss", function() return F.nll_loss(F.log_softmax(x, 2), t) end },
            { "cross_entropy", function() return F.cross_entropy(x, t) end },
            { "CrossEntropyLoss", function() return nn.CrossEntropyLoss()(x, t) end },
        }) do
            local ok, err = pcall(c[2])
            assert.is_false(ok)
            assert.matches("parity2_spec%.lua:%d+: tide: " .. c[1] .. ": the target is a bool " ..
                "tensor; class targets are integer class indices", err)
        end
    end)

    it("autograd.grad with grad_outputs that is no tensor nor list", function()
        local autograd = require("tide.autograd")
        local a = tide.randn(3, { requires_grad = true })
        local y = (a * 2):sum()
        local ok, err = pcall(autograd.grad, { y }, { a }, { grad_outputs = 1 })
        assert.is_false(ok)
        assert.matches("tide: autograd.grad: grad_outputs must be a tensor or a list of " ..
            "tensors %(one per output%), got a number", err)
        -- the same call with a tensor works
        local one = tide.tensor(1.0, { dtype = "float32" })
        local g = autograd.grad({ y }, { a }, { grad_outputs = one })
        assert.are.same({ 2, 2, 2 }, g[1]:totable())
    end)
end)

-- PyTorch 1.13's names (torch.matmul(...).grad_fn.name() with Debian's python3-torch)
describe("matmul's grad_fn reads as PyTorch's (issue 27)", function()
    it("Mm, Mv, Dot, Squeeze, Clone or UnsafeView by the operands' dims", function()
        local function rg(...)
            return tide.randn(...):requires_grad_(true)
        end
        local cases = {
            { "MmBackward0", rg(2, 3), tide.randn(3, 2) },
            { "MmBackward0", tide.randn(2, 3), rg(3, 2) },
            { "MvBackward0", rg(2, 3), tide.randn(3) },
            { "DotBackward0", rg(3), tide.randn(3) },
            { "SqueezeBackward3", rg(3), tide.randn(3, 2) },
            { "CloneBackward0", rg(2, 3), tide.randn(4, 3, 2) },
            { "UnsafeViewBackward0", rg(4, 2, 3), tide.randn(4, 3, 2) },
            { "UnsafeViewBackward0", rg(4, 2, 3), tide.randn(3) },
        }
        for _, c in ipairs(cases) do
            assert.are.equal(c[1], tostring(c[2]:matmul(c[3]).grad_fn))
        end
    end)
end)

describe("layers refuse an input of another dtype than their weight (issue 27)", function()
    it("Linear, Conv1d, Conv2d, ConvTranspose2d and F's name both dtypes and the fix", function()
        local nn = require("tide.nn")
        local F = require("tide.nn.functional")
        local lin, c2, c1 = nn.Linear(3, 2), nn.Conv2d(1, 2, 3), nn.Conv1d(1, 2, 3)
        local x2, x4 = tide.randn(4, 3, { dtype = "float64" }),
            tide.randn(1, 1, 5, 5, { dtype = "float64" })
        local x3 = tide.randn(1, 1, 5, { dtype = "float64" })
        local cases = {
            { "Linear", lin, x2 },
            { "Conv2d", c2, x4 },
            { "Conv1d", c1, x3 },
            { "ConvTranspose2d", nn.ConvTranspose2d(1, 2, 3), x4 },
            { "linear", function(x) return F.linear(x, lin.weight, lin.bias) end, x2 },
            { "conv2d", function(x) return F.conv2d(x, c2.weight, c2.bias) end, x4 },
            { "conv1d", function(x) return F.conv1d(x, c1.weight, c1.bias) end, x3 },
        }
        for _, c in ipairs(cases) do
            local ok, err = pcall(function() return c[2](c[3]) end)
            assert.is_false(ok, c[1])
            assert.matches("tide: " .. c[1] .. ": the input is float64 and the weight float32; " ..
                "convert the input %(x:to%(\"float32\"%)%) or the model %(model:to%(\"float64\"%)%)",
                err)
            -- and in the weight's dtype it runs
            assert.are.equal("float32", c[2](c[3]:float()).dtype)
        end
    end)
end)

describe("convolution geometry near the int range (issue 27)", function()
    local F = tide.nn.functional
    local big = 2147483647 -- 2^31 - 1, the largest geometry a kernel takes

    it("conv1d with stride = padding = 2^31 - 1 gives PyTorch's three outputs", function()
        -- windows start at -p, 0 and p of the padded input: only the middle one sees data
        local x = tide.tensor({ { { 1, 2, 3, 4, 5 } } }, { dtype = "float32" })
        local w = tide.tensor({ { { 1, 10, 100 } } }, { dtype = "float32" })
        local y = F.conv1d(x, w, nil, { stride = big, padding = big })
        assert.are.same({ 1, 1, 3 }, y:size())
        assert.are.same({ 0, 321, 0 }, y:view(-1):totable())
    end)

    it("conv2d with dilation = padding = 2^30 reads only the kernel's centre", function()
        local x = tide.arange(1, 26, 1, { dtype = "float32" }):view(1, 1, 5, 5)
        local w = tide.zeros({ 1, 1, 3, 3 }, { dtype = "float32" })
        w[1][1][2][2] = 2
        w[1][1][1][1] = 7 -- lands in the padding for every output
        local y = F.conv2d(x, w, nil, { dilation = 1073741824, padding = 1073741824 })
        assert.are.same({ 1, 1, 5, 5 }, y:size())
        assert.are.same((x * 2):view(-1):totable(), y:view(-1):totable())
    end)
end)

describe("a size the user gives is checked before anything is built from it (issue 27)", function()
    local F = tide.nn.functional
    local x = tide.zeros({ 1, 2, 5, 5 }, { dtype = "float32" })
    local function raises_at_once(fn, pattern)
        local t0 = os.clock()
        local ok, err = pcall(fn)
        assert.is_false(ok)
        assert.matches(pattern, tostring(err))
        assert.is_true(os.clock() - t0 < 1)
    end

    it("adaptive_avg_pool2d to a huge output raises naming the size and the fix", function()
        raises_at_once(function() return F.adaptive_avg_pool2d(x, { 100000000, 100000000 }) end,
            "tide: adaptive_avg_pool2d: an output of 100000000 x 100000000 per plane would take " ..
            ".- more than the .- this process may use .-; ask for a smaller output_size")
    end)

    it("chunk of an empty dim into a huge number of pieces raises", function()
        raises_at_once(function() return tide.zeros({ 0, 3 }):chunk(1000000000000) end,
            "tide: chunk: 1000000000000 empty views of dim 1 %(size 0%) would take .-; " ..
            "ask for fewer chunks")
        assert.are.equal(5, #tide.zeros({ 0, 3 }):chunk(5)) -- as PyTorch: 5 empty pieces
    end)

    it("F.pad in replicate mode by a huge size raises", function()
        raises_at_once(function()
            return F.pad(x, { 1000000000000, 0, 0, 0 }, { mode = "replicate" })
        end, "tide: pad: dim 4 padded to 1000000000005 would take .-; pad by less")
    end)

    it("the budget is tide.memory_limit() when one is set", function()
        local old = tide.memory_limit()
        tide.set_memory_limit(1024 * 1024)
        local ok, err = pcall(F.adaptive_avg_pool2d, x, { 300, 300 })
        tide.set_memory_limit(old)
        assert.is_false(ok)
        assert.matches("more than the .- this process may use %(what tide.memory_limit%(%) leaves%)",
            err)
    end)

    it("adaptive_avg_pool2d still gives PyTorch's windows", function()
        local y = tide.arange(1, 8, { dtype = "float32" }):view(1, 1, 1, 7)
        local z = F.adaptive_avg_pool2d(y, { 1, 3 })
        -- windows [0, 3), [2, 5), [4, 7) of 1..7
        assert.are.same({ 2, 4, 6 }, z:view(-1):totable())
    end)
end)

describe("tied weights (issue 27)", function()
    local nn = tide.nn
    local function tied()
        local emb, dec = nn.Embedding(10, 4), nn.Linear(4, 10)
        dec.weight = emb.weight -- as every language model ties them
        return nn.Sequential(emb, dec), emb, dec
    end

    it("state_dict holds both keys, one tensor; parameters() yields it once", function()
        local model, emb = tied()
        local sd = model:state_dict()
        assert.is_not_nil(sd["1.weight"])
        assert.is_not_nil(sd["2.weight"])
        sd["1.weight"]:fill_(3) -- state_dict's tensors share the parameters' memory
        assert.are.equal(3, emb.weight[1][1]:item())
        assert.are.equal(3, sd["2.weight"][1][1]:item())
        assert.are.equal(2, #model:parameters()) -- the tied weight and the bias
    end)

    it("a PyTorch-style state dict with both keys loads; one key alone is missing the other",
        function()
            local model, emb, dec = tied()
            local sd = {}
            for k, v in pairs(model:state_dict()) do
                sd[k] = v:clone():fill_(0.5)
            end
            model:load_state_dict(sd)
            assert.are.equal(0.5, emb.weight[2][3]:item())
            assert.are.equal(emb.weight, dec.weight)
            sd["2.weight"] = nil
            local ok, err = pcall(model.load_state_dict, model, sd)
            assert.is_false(ok)
            assert.matches("tide: load_state_dict: missing keys: 2.weight", err)
        end)
end)

describe("loss weights are buffers (issue 27)", function()
    it("CrossEntropyLoss and NLLLoss keep weight in state_dict and move it with :to()", function()
        for _, name in ipairs({ "CrossEntropyLoss", "NLLLoss" }) do
            local w = tide.tensor({ 1, 2, 3 }, { dtype = "float32" })
            local loss = tide.nn[name]({ weight = w })
            assert.are.same({ 1, 2, 3 }, loss:state_dict().weight:totable())
            loss:to("cpu:1")
            assert.are.equal("cpu:1", tostring(loss.weight.device))
        end
    end)
end)
