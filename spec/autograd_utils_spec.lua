-- autograd_utils_spec.lua — PyTorch's names that ported scripts meet around autograd, nn.utils,
-- nn.init and data: anomaly mode (the NaN gradient's op and its forward line), gradcheck and
-- gradgradcheck (passing on right formulas, failing with their entries on a wrong
-- autograd.Function), autograd.Variable, inference_mode and grad_mode, nn.utils' fusion
-- (against PyTorch 1.13's values: spec/fixtures/autograd_utils_torch.lua, written by
-- spec/fixtures/make_autograd_utils.py), skip_init, clip_grad_norm,
-- convert_conv2d_weight_memory_format and the submodules, nn.init's deprecated names and
-- sparse_, tide.data.Sampler and default_convert.
local tide = require("tide")
local compat = require("tide._compat")
local warn = require("tide._warn")

local autograd, nn, data = tide.autograd, tide.nn, tide.data
local T = dofile("spec/fixtures/autograd_utils_torch.lua")

local function t64(v, rg)
    return tide.tensor(v, { dtype = "float64", requires_grad = rg })
end

local function catch(f, ...)
    local ok, err = pcall(f, ...)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

-- the message of err without its "file:line: " position
local function bare(err)
    return err:match("^.-:%d+: (tide: .*)$") or err
end

-- the line of the caller
local function here()
    return debug.getinfo(2, "l").currentline
end

-- what fn writes to io.stderr while it runs (with the once-only warnings of keys forgotten)
local function stderr_of(keys, fn, ...)
    for _, k in ipairs(keys) do
        warn.reset(k)
    end
    local buf, real = {}, io.stderr
    io.stderr = { write = function(_, s) buf[#buf + 1] = s end }
    local r = compat.pack(pcall(fn, ...))
    io.stderr = real
    if not r[1] then
        error(r[2], 0)
    end
    return table.concat(buf), compat.unpack(r, 2, r.n)
end

local function close(a, b, tol, what)
    local x, y = a, b
    if tide.is_tensor(x) then
        x = x:detach():reshape(-1):totable()
    end
    if tide.is_tensor(y) then
        y = y:detach():reshape(-1):totable()
    end
    assert.are.equal(#y, #x, what)
    for i = 1, #x do
        assert(math.abs(x[i] - y[i]) <= tol, string.format("%s element %d: %.17g vs %.17g",
            what or "", i, x[i], y[i]))
    end
end

-- nested Lua table -> flat list
local function flat(v, out)
    out = out or {}
    if type(v) == "table" then
        for i = 1, #v do
            flat(v[i], out)
        end
    else
        out[#out + 1] = v
    end
    return out
end

describe("anomaly mode", function()
    after_each(function()
        tide.set_anomaly_enabled(false)
    end)

    it("is off by default and set and read back by torch's names", function()
        assert.is_false(tide.is_anomaly_enabled())
        assert.is_false(tide.is_anomaly_check_nan_enabled())
        tide.set_anomaly_enabled(true)
        assert.is_true(tide.is_anomaly_enabled())
        assert.is_true(tide.is_anomaly_check_nan_enabled())
        tide.set_anomaly_enabled(true, false)
        assert.is_true(tide.is_anomaly_enabled())
        assert.is_false(tide.is_anomaly_check_nan_enabled())
        tide.set_anomaly_enabled(false)
        assert.is_false(tide.is_anomaly_enabled())
        assert.is_false(tide.is_anomaly_check_nan_enabled())
        assert.is_false(autograd.set_detect_anomaly(true))
        assert.is_true(tide.is_anomaly_enabled())
        assert.is_true(autograd.set_detect_anomaly(false))
    end)

    it("detect_anomaly runs fn with the mode on and restores it, also on error", function()
        local msg, a, b = stderr_of({ "detect_anomaly" }, autograd.detect_anomaly,
            function(x, y)
                assert.is_true(tide.is_anomaly_enabled())
                assert.is_true(tide.is_anomaly_check_nan_enabled())
                return x + y, "two"
            end, 1, 2)
        assert.are.equal(3, a)
        assert.are.equal("two", b)
        assert.truthy(msg:find("tide: warning: anomaly detection is on", 1, true), msg)
        assert.is_false(tide.is_anomaly_enabled())
        autograd.detect_anomaly(false, function()
            assert.is_true(tide.is_anomaly_enabled())
            assert.is_false(tide.is_anomaly_check_nan_enabled())
        end)
        local err = catch(autograd.detect_anomaly, function() error("boom", 0) end)
        assert.are.equal("boom", err)
        assert.is_false(tide.is_anomaly_enabled())
    end)

    it("records the forward traceback on each node only while on", function()
        local x = t64({ 1, 2 }, true)
        assert.is_nil((x * 2).grad_fn.trace)
        local line
        local y = autograd.detect_anomaly(function()
            line = here(); local e = x:exp() -- (not a tail call: that frame would be gone)
            return e
        end)
        assert.truthy(y.grad_fn.trace:find("autograd_utils_spec.lua:" .. line, 1, true),
            y.grad_fn.trace)
    end)

    it("names the op whose gradient has NaN values and the forward line (sqrt of -1)", function()
        local x = t64({ -1, 4 }, true)
        local line
        local err = catch(autograd.detect_anomaly, function()
            line = here(); local y = x:sqrt()
            local z = y * 2
            z:sum():backward()
        end)
        local head = bare(err):match("^[^\n]*")
        assert.are.equal("tide: backward: the gradient of sqrt (its argument #1) has NaN " ..
            "values; sqrt was called here (traced in anomaly mode): keep its inputs where its " ..
            "derivative is finite (clamp them, add an epsilon)", head)
        assert.truthy(err:find("autograd_utils_spec.lua:" .. line .. ":", 1, true), err)
        assert.is_nil(x.grad) -- the pass stopped there
    end)

    it("catches sqrt of 0 times a zero gradient (0 / 0) and points at the forward", function()
        local x = t64({ 0, 4 }, true)
        local line
        local err = catch(autograd.detect_anomaly, function()
            line = here(); local y = x:sqrt()
            local z = y * t64({ 0, 1 })
            z:sum():backward()
        end)
        assert.truthy(bare(err):find("^tide: backward: the gradient of sqrt %(its argument " ..
            "#1%) has NaN values"), err)
        assert.truthy(err:find("autograd_utils_spec.lua:" .. line .. ":", 1, true), err)
    end)

    it("without the mode (or with check_nan false) the NaN gradient goes through", function()
        local x = t64({ -1, 4 }, true)
        x:sqrt():sum():backward()
        assert.is_true(x.grad[1]:item() ~= x.grad[1]:item())
        x.grad = nil
        autograd.detect_anomaly(false, function()
            x:sqrt():sum():backward()
        end)
        assert.is_true(x.grad[1]:item() ~= x.grad[1]:item())
    end)

    it("names autograd.grad, and says to trace the forward when it was not", function()
        local x = t64({ -1, 4 }, true)
        local y = x:sqrt() -- recorded with the mode off: no traceback
        local err = catch(autograd.detect_anomaly, function()
            return autograd.grad(y:sum(), x)
        end)
        assert.are.equal("tide: autograd.grad: the gradient of sqrt (its argument #1) has NaN " ..
            "values; run the forward pass in anomaly mode too (tide.autograd.detect_anomaly) " ..
            "to see where sqrt was called", bare(err))
    end)

    it("appends the forward traceback to an error raised in a node's backward", function()
        local Fails = autograd.Function:extend("AUFails")
        function Fails.forward(_, t)
            return t * 2
        end
        function Fails.backward()
            error("tide: AUFails.backward: broken", 0)
        end
        local x = t64({ 1, 2 }, true)
        local line
        local err = catch(autograd.detect_anomaly, function()
            line = here(); local y = Fails.apply(x)
            y:sum():backward()
        end)
        assert.truthy(err:find("tide: backward: AUFails.backward: broken", 1, true) or
            err:find("tide: AUFails.backward: broken", 1, true), err)
        assert.truthy(err:find("(anomaly mode) the forward call of Function.AUFails, whose " ..
            "backward failed:", 1, true), err)
        assert.truthy(err:find("autograd_utils_spec.lua:" .. line .. ":", 1, true), err)
    end)

    it("refuses a mode that is not a boolean, changing nothing", function()
        assert.are.equal("tide: set_anomaly_enabled: expected the mode to be a boolean, got " ..
            "string; pass true or false", bare(catch(tide.set_anomaly_enabled, "yes")))
        assert.are.equal("tide: set_anomaly_enabled: expected check_nan to be a boolean, got " ..
            "number; pass true or false", bare(catch(tide.set_anomaly_enabled, true, 1)))
        assert.is_false(tide.is_anomaly_enabled())
        assert.are.equal("tide: autograd.detect_anomaly: expected a function (or check_nan, " ..
            "then a function), got number", bare(catch(autograd.detect_anomaly, 42)))
        assert.are.equal("tide: autograd.detect_anomaly: expected a function after check_nan, " ..
            "got nil", bare(catch(autograd.detect_anomaly, true)))
        assert.is_false(tide.is_anomaly_enabled())
    end)
end)

-- x^3 with a wrong backward (x^2 instead of 3 x^2)
local BadCube = autograd.Function:extend("AUBadCube")
function BadCube.forward(ctx, x)
    ctx:save_for_backward(x)
    return x * x * x
end
function BadCube.backward(ctx, g)
    local x = ctx.saved_tensors[1]
    return g * x * x
end

-- x^2 with a backward that ignores its incoming gradient
local Deaf = autograd.Function:extend("AUDeaf")
function Deaf.forward(ctx, x)
    ctx:save_for_backward(x)
    return x * x
end
function Deaf.backward(ctx)
    return ctx.saved_tensors[1] * 2
end

-- x^2 with a backward that adds noise (not reentrant)
local Noisy = autograd.Function:extend("AUNoisy")
function Noisy.forward(ctx, x)
    ctx:save_for_backward(x)
    return x * x
end
function Noisy.backward(ctx, g)
    return g * (ctx.saved_tensors[1] * 2 + tide.randn(g.shape, { dtype = g.dtype }) * 1e-3)
end

-- x^2 whose backward, 2 x g, is right but differentiates wrongly (its own backward halves it)
local Twice = autograd.Function:extend("AUTwice")
function Twice.forward(_, x)
    return x * 2
end
function Twice.backward(_, g)
    return g -- wrong: d(2x)/dx is 2
end
local Square = autograd.Function:extend("AUSquare")
function Square.forward(ctx, x)
    ctx:save_for_backward(x)
    return x * x
end
function Square.backward(ctx, g)
    return g * Twice.apply(ctx.saved_tensors[1])
end

describe("autograd.gradcheck and gradgradcheck", function()
    local X = { 0.5, -1.2, 2.0 }
    local W = { { 1.5, 0.25, 1 }, { -0.5, 2.0, 3 } }

    it("passes on right formulas: several inputs and outputs, a list, fast mode", function()
        local x, w = t64(X, true), t64(W, true)
        assert.is_true(autograd.gradcheck(function(t) return t:sin() * t end, x))
        local function two(t, m, k)
            return m:matmul(t):tanh() * k, t:exp():sum()
        end
        assert.is_true(autograd.gradcheck(two, { x, w, 3 }))
        assert.is_true(autograd.gradcheck(function(t, m)
            return { m:matmul(t), t:pow(2) }
        end, { x, w }))
        assert.is_true(autograd.gradcheck(two, { x, w, 3 }, { fast_mode = true }))
        -- values and indices: the integer output is not checked
        assert.is_true(autograd.gradcheck(function(t) return t:sort() end, { x }))
        assert.is_true(autograd.gradcheck(Square.apply, { x }))
    end)

    it("perturbs the inputs a module reads as parameters, and sets them back", function()
        local lin = nn.Linear(3, 2):to("float64")
        local x = t64({ { 0.5, -1, 2 } }, true)
        local before = lin.weight:clone()
        assert.is_true(autograd.gradcheck(function(a) return lin(a) end,
            { x, lin.weight, lin.bias }))
        assert.are.same(before:totable(), lin.weight:totable())
        assert.is_nil(lin.weight.grad)
        assert.is_nil(x.grad)
        -- a non-contiguous input
        local xt = t64(W):t():requires_grad_(true)
        assert.is_false(xt:is_contiguous())
        assert.is_true(autograd.gradcheck(function(a) return a:exp() end, { xt }))
    end)

    it("raises with the mismatching entries on a wrong autograd.Function", function()
        local x = t64(X, true)
        local err = catch(autograd.gradcheck, BadCube.apply, { x })
        assert.are.equal("tide: autograd.gradcheck: Jacobian mismatch for output 1 with " ..
            "respect to input 1: d out[1] / d in[1]: numerical 0.75, analytical 0.25; " ..
            "d out[2] / d in[2]: numerical 4.32, analytical 1.44; d out[3] / d in[3]: " ..
            "numerical 12, analytical 4 (3 of 9 entries differ by more than atol + rtol * " ..
            "|numerical|, atol = 1e-05, rtol = 0.001); check the backward formula of the ops " ..
            "fn uses (an autograd.Function's backward, an autograd.def's), or loosen atol and " ..
            "rtol where fn is ill-conditioned", bare(err))
        assert.truthy(err:find("autograd_utils_spec.lua:%d+: tide:"), err)
        assert.is_false(autograd.gradcheck(BadCube.apply, { x }, { raise_exception = false }))
        assert.are.same(X, x:totable())
        local fast = bare(catch(autograd.gradcheck, BadCube.apply, { x }, { fast_mode = true }))
        assert.truthy(fast:find("^tide: autograd.gradcheck: Jacobian mismatch for output 1 " ..
            "with respect to input 1 %(fast mode: v%^T J u numerical [%d.]+, analytical " ..
            "[%d.]+%): d out%[1%] / d in%[1%]: numerical 0.75, analytical 0.25;"), fast)
    end)

    it("checks that backward scales by its gradient and is reentrant", function()
        local x = t64(X, true)
        assert.are.equal("tide: autograd.gradcheck: backward not multiplied by grad_output: " ..
            "with zero output gradients the gradient of input 1 is not zero; a backward " ..
            "formula must scale what it returns by its incoming gradient",
            bare(catch(autograd.gradcheck, Deaf.apply, { x })))
        local err = bare(catch(autograd.gradcheck, Noisy.apply, { x }))
        assert.truthy(err:find("^tide: autograd.gradcheck: backward is not reentrant: running " ..
            "it twice with the same input and grad_output gave values [%d.e%-]+ apart " ..
            "%(nondet_tol = 0%)"), err)
        assert.is_true(autograd.gradcheck(Noisy.apply, { x }, { nondet_tol = 1, atol = 1e-1 }))
    end)

    it("refuses a function whose outputs do not require grad but change", function()
        local x = t64(X, true)
        assert.are.equal("tide: autograd.gradcheck: no output of fn requires grad, but output " ..
            "1 changes with input 1 (d out[1] / d in[1] = 2 numerically); fn cuts the graph " ..
            "(detach, no_grad, a cast to an integer dtype), or grad mode is off",
            bare(catch(autograd.gradcheck, function(t) return t:detach() * 2 end, { x })))
        -- a constant output is fine
        assert.is_true(autograd.gradcheck(function(t) return t:detach():mul(0):add(1) end, x))
    end)

    it("warns once about an input that is not float64", function()
        local x = tide.tensor({ 1, 2 }, { dtype = "float32", requires_grad = true })
        local msg, ok = stderr_of({ "gradcheck.float64" }, autograd.gradcheck,
            function(t) return t * 2 end, { x }, { raise_exception = false })
        assert.truthy(msg:find("tide: warning: autograd.gradcheck: input 1 requires grad " ..
            "and is float32, not float64: the check will likely fail unless every input is " ..
            "float64 (convert with x:double())", 1, true), msg)
        assert.is_boolean(ok)
        local again = stderr_of({}, autograd.gradcheck, function(t) return t * 2 end, { x },
            { raise_exception = false })
        assert.are.equal("", again)
    end)

    it("refuses bad arguments and options, naming them", function()
        local x = t64(X, true)
        local f = function(t) return t * 2 end
        assert.truthy(bare(catch(autograd.gradcheck, f, { x }, { tol = 1 })):find(
            '^tide: autograd.gradcheck: unknown option "tol"'))
        assert.are.equal("tide: autograd.gradcheck: check_forward_ad = true needs " ..
            "forward-mode AD, which tide has not; leave it false",
            bare(catch(autograd.gradcheck, f, { x }, { check_forward_ad = true })))
        assert.is_true(autograd.gradcheck(f, { x }, { check_forward_ad = false,
            check_batched_grad = false, check_undefined_grad = true, check_grad_dtypes = true }))
        assert.are.equal("tide: autograd.gradcheck: expected eps to be a number > 0, got 0",
            bare(catch(autograd.gradcheck, f, { x }, { eps = 0 })))
        assert.are.equal("tide: autograd.gradcheck: no input requires grad; create the inputs " ..
            "to check with {dtype = \"float64\", requires_grad = true}",
            bare(catch(autograd.gradcheck, f, { t64(X) })))
        assert.are.equal("tide: autograd.gradcheck: input 1 has a dimension with stride 0 " ..
            "(its elements share memory), so finite differences cannot perturb them one by " ..
            "one; pass x:contiguous()", bare(catch(autograd.gradcheck, f,
                { t64({ 1 }):expand({ 3 }):requires_grad_(true) })))
        assert.are.equal("tide: autograd.gradcheck: fn's result 2 is a string; fn must " ..
            "return tensors", bare(catch(autograd.gradcheck, function(t) return t, "s" end,
                { x })))
        assert.are.equal("tide: autograd.gradcheck: expected a function, got number",
            bare(catch(autograd.gradcheck, 1, { x })))
    end)

    it("gradgradcheck checks second derivatives", function()
        local x, w = t64(X, true), t64(W, true)
        assert.is_true(autograd.gradgradcheck(function(t, m) return m:matmul(t):tanh() end,
            { x, w }))
        assert.is_true(autograd.gradgradcheck(function(t) return t:pow(3) end, { x },
            t64({ 1, -1, 0.5 }, true)))
        assert.is_true(autograd.gradgradcheck(function(t) return t:pow(3) end, { x },
            { fast_mode = true }))
        -- Square's first derivative is right, its second (through Twice) is not
        assert.is_true(autograd.gradcheck(Square.apply, { x }))
        local err = bare(catch(autograd.gradgradcheck, Square.apply, { x }))
        assert.truthy(err:find("^tide: autograd.gradgradcheck: Jacobian mismatch for output 1 " ..
            "with respect to input 1: d out%[1%] / d in%[1%]: numerical [%d.%-]+, analytical"),
            err)
        assert.is_false(autograd.gradgradcheck(Square.apply, { x }, { raise_exception = false }))
        assert.are.equal("tide: autograd.gradgradcheck: check_fwd_over_rev = true needs " ..
            "forward-mode AD, which tide has not; leave it false",
            bare(catch(autograd.gradgradcheck, Square.apply, { x },
                { check_fwd_over_rev = true })))
    end)
end)

describe("autograd.Variable, inference_mode, grad_mode", function()
    it("Variable returns a new leaf sharing the tensor's storage, as PyTorch's", function()
        local t = t64({ 1, 2 })
        local v = autograd.Variable(t)
        assert.is_false(rawequal(v, t))
        assert.is_false(v.requires_grad)
        local r = autograd.Variable(t, true)
        assert.is_true(r.requires_grad)
        assert.is_false(t.requires_grad)
        assert.is_true(r:_shares_storage(t))
        local b = t64({ 1, 2 }, true) * 2
        local vb = autograd.Variable(b)
        assert.is_nil(vb.grad_fn)
        assert.is_false(vb.requires_grad)
        assert.is_true(autograd.Variable(t, { requires_grad = true }).requires_grad)
        local msg = stderr_of({ "Variable.volatile" }, autograd.Variable, t, { volatile = true })
        assert.truthy(msg:find("autograd.Variable: volatile was removed and has no effect", 1,
            true), msg)
        assert.are.equal("tide: autograd.Variable: only floating-point tensors can require " ..
            "grad, this one is int64; convert it first (t:double())",
            bare(catch(autograd.Variable, tide.tensor({ 1, 2 }), true)))
        assert.are.equal("tide: autograd.Variable: expected a tensor, got number; make one " ..
            "with tide.tensor(data) first", bare(catch(autograd.Variable, 3)))
        assert.truthy(bare(catch(autograd.Variable, t, { bogus = 1 })):find(
            '^tide: autograd.Variable: unknown option "bogus"'))
    end)

    it("inference_mode and grad_mode are tide's functions", function()
        assert.is_false(tide.is_inference_mode_enabled()) -- (tide's lazy stubs replaced)
        assert.is_true(rawequal(autograd.inference_mode, tide.inference_mode))
        local gm = autograd.grad_mode
        assert.is_true(rawequal(gm.no_grad, tide.no_grad))
        assert.is_true(rawequal(gm.enable_grad, tide.enable_grad))
        assert.is_true(rawequal(gm.set_grad_enabled, tide.set_grad_enabled))
        assert.is_true(rawequal(gm.inference_mode, tide.inference_mode))
        local x = t64({ 1 }, true)
        assert.is_false(autograd.inference_mode(function()
            assert.is_true(tide.is_inference_mode_enabled())
            return (x * 2).requires_grad
        end))
    end)

    it("has no graph.saved_tensors_hooks (a node's saved tensors have no one store)", function()
        assert.is_nil(autograd.graph)
    end)
end)

describe("nn.utils: fusion, skip_init, clip_grad_norm, memory format", function()
    local function set(t, v)
        tide.no_grad(function() t:copy_(t64(v)) end)
    end

    -- the tide layer of a fixture case, its batch norm, in eval mode
    local function build(c, layer, bn)
        layer = layer:to("float64")
        set(layer.weight, c.weight)
        if c.bias then
            set(layer.bias, c.bias)
        end
        bn = bn:to("float64")
        set(bn.running_mean, c.running_mean)
        set(bn.running_var, c.running_var)
        if c.bn_weight then
            set(bn.weight, c.bn_weight)
            set(bn.bias, c.bn_bias)
        end
        return layer:eval(), bn:eval()
    end

    local CASES = {
        { "conv2d", function() return nn.Conv2d(2, 3, 2), nn.BatchNorm2d(3, { eps = 1e-3 }) end },
        { "conv2d_nobias", function()
            return nn.Conv2d(2, 3, 2, { bias = false }), nn.BatchNorm2d(3, { eps = 1e-3 })
        end },
        { "conv2d_noaffine", function()
            return nn.Conv2d(2, 3, 2), nn.BatchNorm2d(3, { eps = 1e-3, affine = false })
        end },
        { "conv_transpose2d", function()
            return nn.ConvTranspose2d(3, 2, 2), nn.BatchNorm2d(2, { eps = 1e-3 })
        end, true },
        { "conv1d", function() return nn.Conv1d(2, 3, 2), nn.BatchNorm1d(3, { eps = 1e-3 }) end },
    }
    for _, case in ipairs(CASES) do
        it("fuse_conv_bn_eval gives PyTorch's weights and the pair's output: " .. case[1],
            function()
                local c = T[case[1]]
                local conv, bn = build(c, case[2]())
                local fused = nn.utils.fuse_conv_bn_eval(conv, bn, case[3])
                close(fused.weight, flat(c.fused_weight), 1e-12, "weight")
                close(fused.bias, c.fused_bias, 1e-12, "bias")
                assert.is_true(fused.weight.requires_grad)
                local x = t64(c.x)
                local y = tide.no_grad(function() return fused(x) end)
                close(y, flat(c.y), 1e-10, "fused output vs PyTorch's")
                close(y, tide.no_grad(function() return bn(conv(x)) end), 1e-10,
                    "fused output vs conv then bn")
                -- the originals are as they were
                close(conv.weight, flat(c.weight), 0, "conv weight")
                assert.are.equal(conv.__name, fused.__name)
            end)
    end

    it("fuse_linear_bn_eval and the fusion submodule", function()
        local c = T.linear
        local lin, bn = build(c, nn.Linear(3, 4), nn.BatchNorm1d(4, { eps = 1e-3 }))
        local F = nn.utils.fusion
        local fused = F.fuse_linear_bn_eval(lin, bn)
        close(fused.weight, flat(c.fused_weight), 1e-12, "weight")
        close(fused.bias, c.fused_bias, 1e-12, "bias")
        close(tide.no_grad(function() return fused(t64(c.x)) end), flat(c.y), 1e-10, "output")
        assert.is_true(rawequal(F.fuse_conv_bn_eval, nn.utils.fuse_conv_bn_eval))
        assert.is_true(rawequal(F.fuse_conv_bn_weights, nn.utils.fuse_conv_bn_weights))
        local w, b = F.fuse_linear_bn_weights(lin.weight, lin.bias, bn.running_mean,
            bn.running_var, bn.eps, bn.weight, bn.bias)
        close(w, flat(c.fused_weight), 1e-12, "weight")
        close(b, c.fused_bias, 1e-12, "bias")
    end)

    it("fuse_conv_bn_weights returns PyTorch's values as new parameters", function()
        local c = T.conv_transpose2d
        local w, b = nn.utils.fuse_conv_bn_weights(t64(c.weight), t64(c.bias),
            t64(c.running_mean), t64(c.running_var), c.eps, t64(c.bn_weight), t64(c.bn_bias),
            true)
        close(w, flat(c.fused_weight), 1e-12, "weight")
        close(b, c.fused_bias, 1e-12, "bias")
        assert.is_true(w.requires_grad and w.is_leaf)
        local n = T.conv2d_noaffine
        local w2, b2 = nn.utils.fuse_conv_bn_weights(t64(n.weight), t64(n.bias),
            t64(n.running_mean), t64(n.running_var), n.eps, nil, nil)
        close(w2, flat(n.fused_weight), 1e-12, "weight")
        close(b2, n.fused_bias, 1e-12, "bias")
    end)

    it("refuses training mode and a batch norm of another width", function()
        local conv, bn = nn.Conv2d(2, 3, 2), nn.BatchNorm2d(3)
        assert.are.equal("tide: fuse_conv_bn_eval: fusion is for eval mode only (it folds the " ..
            "running statistics, which training mode does not use); call :eval() on both " ..
            "modules first", bare(catch(nn.utils.fuse_conv_bn_eval, conv, bn:eval())))
        assert.are.equal("tide: fuse_conv_bn_eval: the batch norm has 4 channels (running " ..
            "mean) and the weight 3 output channels (dim 1 of shape {3, 2, 2, 2}); fuse a " ..
            "layer with the batch norm that follows it", bare(catch(nn.utils.fuse_conv_bn_eval,
                conv:eval(), nn.BatchNorm2d(4):eval())))
        assert.are.equal("tide: fuse_conv_bn_weights: expected bn_eps to be a number, got nil",
            bare(catch(nn.utils.fuse_conv_bn_weights, conv.weight, nil, bn.running_mean,
                bn.running_var)))
    end)

    it("skip_init constructs without initial values and without drawing", function()
        tide.manual_seed(3)
        local m = nn.utils.skip_init(nn.Linear, 4, 2)
        local after = tide.rand({ 3 }):totable()
        tide.manual_seed(3)
        assert.are.same(tide.rand({ 3 }):totable(), after)
        assert.are.same({ 2, 4 }, m.weight.shape)
        assert.is_true(m.weight.requires_grad)
        assert.are.equal(0, m.weight:abs():sum():item())
        assert.are.equal(0, m.bias:abs():sum():item())
        local bn = nn.utils.init.skip_init(nn.BatchNorm1d, 3, { eps = 1e-3 })
        assert.are.equal(1e-3, bn.eps)
        assert.are.equal(0, bn.running_var:sum():item())
        assert.is_true(rawequal(nn.utils.init.skip_init, nn.utils.skip_init))
        assert.are.equal("tide: skip_init: expected a Module class (such as nn.Linear), got a " ..
            "module instance; pass the class and its constructor's arguments",
            bare(catch(nn.utils.skip_init, nn.Linear(2, 2))))
        assert.truthy(bare(catch(nn.utils.skip_init, nn.Linear, 0.5, 2)):find("^tide: Linear:"))
    end)

    it("clip_grad_norm is clip_grad_norm_ with PyTorch's deprecation warning, once", function()
        local p = t64({ 3, 4 }, true)
        p.grad = t64({ 3, 4 })
        local msg, total = stderr_of({ "clip_grad_norm" }, nn.utils.clip_grad_norm, { p }, 1)
        assert.are.equal(5, total)
        close(p.grad, { 0.6, 0.8 }, 1e-6, "clipped")
        assert.truthy(msg:find("tide: warning: nn.utils.clip_grad_norm is now deprecated in " ..
            "favor of nn.utils.clip_grad_norm_\n", 1, true), msg)
        assert.truthy(msg:find("autograd_utils_spec.lua", 1, true), msg)
        local again = stderr_of({}, nn.utils.clip_grad_norm, { p }, 1)
        assert.are.equal("", again)
        local cg = nn.utils.clip_grad
        assert.is_true(rawequal(cg.clip_grad_norm_, nn.utils.clip_grad_norm_))
        assert.is_true(rawequal(cg.clip_grad_norm, nn.utils.clip_grad_norm))
        assert.is_true(rawequal(cg.clip_grad_value_, nn.utils.clip_grad_value_))
        local cp = nn.utils.convert_parameters
        assert.is_true(rawequal(cp.parameters_to_vector, nn.utils.parameters_to_vector))
        assert.is_true(rawequal(cp.vector_to_parameters, nn.utils.vector_to_parameters))
    end)

    it("convert_conv2d_weight_memory_format returns the module as it is", function()
        local m = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU())
        local w = m[1].weight:clone()
        local f = nn.utils.convert_conv2d_weight_memory_format
        assert.is_true(rawequal(m, f(m, "channels_last")))
        assert.is_true(rawequal(m, f(m, "contiguous_format")))
        assert.are.same(w:totable(), m[1].weight:totable())
        assert.is_true(m[1].weight:is_contiguous())
        assert.is_true(rawequal(f, nn.utils.memory_format.convert_conv2d_weight_memory_format))
        assert.are.equal("tide: convert_conv2d_weight_memory_format: memory_format " ..
            "\"channels_first\" is not one of \"channels_last\" and \"contiguous_format\" " ..
            "(PyTorch's names, as strings); tide keeps every weight contiguous, so either " ..
            "leaves the module as it is", bare(catch(f, m, "channels_first")))
        assert.are.equal("tide: convert_conv2d_weight_memory_format: expected a module, got " ..
            "string", bare(catch(f, "m", "channels_last")))
    end)
end)

describe("nn.init: PyTorch's deprecated names and sparse_", function()
    local OLD = { "uniform", "normal", "constant", "xavier_uniform", "xavier_normal",
        "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse", "dirac", "eye" }
    local ARGS = { constant = { 0.5 }, sparse = { 0.5 } }

    it("each old name is its _ function, warning once", function()
        for _, old in ipairs(OLD) do
            local shape = old == "dirac" and { 2, 2, 3 } or { 3, 4 }
            tide.manual_seed(5)
            local a = tide.empty(shape)
            local msg = stderr_of({ "nn.init." .. old }, nn.init[old], a,
                compat.unpack(ARGS[old] or {}))
            tide.manual_seed(5)
            local b = nn.init[old .. "_"](tide.empty(shape), compat.unpack(ARGS[old] or {}))
            assert.are.same(b:totable(), a:totable(), old)
            assert.truthy(msg:find("tide: warning: nn.init." .. old .. " is now deprecated in " ..
                "favor of nn.init." .. old .. "_\n", 1, true), msg)
            assert.are.equal("", (stderr_of({}, nn.init[old], a, compat.unpack(ARGS[old] or {}))))
        end
    end)

    it("sparse_ zeros ceil(sparsity * rows) entries of each column", function()
        tide.manual_seed(1)
        local w = tide.empty({ 10, 6 }, { dtype = "float64" }):requires_grad_(true)
        assert.is_true(rawequal(w, nn.init.sparse_(w, 0.25, { std = 2 })))
        local zeros = w:eq(0):sum(1):totable()
        assert.are.same({ 3, 3, 3, 3, 3, 3 }, zeros)
        local nz = w:detach():masked_select(w:ne(0))
        assert.is_true(math.abs(nz:std():item() - 2) < 0.8)
        nn.init.sparse_(w, 0)
        assert.are.same({ 0, 0, 0, 0, 0, 0 }, w:eq(0):sum(1):totable())
        assert.is_true(w:detach():abs():max():item() < 0.1) -- std 0.01
        nn.init.sparse_(w, 1)
        assert.are.equal(0, w:detach():abs():sum():item())
        assert.are.equal("tide: nn.init.sparse_: only 2-D tensors are supported, got 1-D",
            bare(catch(nn.init.sparse_, tide.empty(3), 0.1)))
        assert.are.equal("tide: nn.init.sparse_: expected sparsity, the fraction of each " ..
            "column set to zero, to be a number in [0, 1], got 1.5",
            bare(catch(nn.init.sparse_, w, 1.5)))
        assert.truthy(bare(catch(nn.init.sparse_, w, 0.1, { mean = 0 })):find(
            '^tide: nn.init.sparse_: unknown option "mean"'))
    end)
end)

describe("tide.data.Sampler and default_convert", function()
    it("the samplers derive from Sampler, as they did before", function()
        for _, name in ipairs({ "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
            "WeightedRandomSampler", "BatchSampler" }) do
            assert.is_true(rawequal(data[name].super, data.Sampler), name)
        end
        local s = data.SequentialSampler(4)
        assert.are.same({ 1, 2, 3, 4 }, s:indices())
        assert.are.equal(4, s:len())
        assert.are.same({ { 1, 2 }, { 3, 4 } }, data.BatchSampler(s, 2, false):batches())
        assert.is_nil(data.BatchSampler(s, 2, false).indices)
    end)

    it("a Sampler subclass with len() and indices() drives a DataLoader", function()
        local Evens = data.Sampler:extend("Evens")
        function Evens:init(n)
            self.n = n
        end
        function Evens:len()
            return math.floor(self.n / 2)
        end
        function Evens:indices()
            local r = {}
            for i = 2, self.n, 2 do
                r[#r + 1] = i
            end
            return r
        end
        local s = Evens(6)
        assert.is_true(rawequal(s.super, data.Sampler))
        local got = {}
        for i in s:iter() do
            got[#got + 1] = i
        end
        assert.are.same({ 2, 4, 6 }, got)
        local ds = data.TensorDataset(tide.arange(1, 7))
        local seen = {}
        for x in data.DataLoader(ds, { sampler = s, batch_size = 2 }):iter() do
            for _, v in ipairs(x:totable()) do
                seen[#seen + 1] = v
            end
        end
        assert.are.same({ 2, 4, 6 }, seen)
        local Bare = data.Sampler:extend("Bare")
        assert.are.equal("tide: Bare: len() is not defined; define it in the subclass",
            bare(catch(function() return Bare():len() end)))
        assert.are.equal("tide: Bare: iter() is not defined; define iter() or indices() in the " ..
            "subclass", bare(catch(function() return Bare():iter() end)))
    end)

    it("default_convert keeps the structure and every value, as PyTorch's without NumPy",
        function()
            local t = tide.tensor({ 1, 2 })
            local inner = { 3, "s" }
            local sample = compat.pack(t, 2.5, { a = inner, b = true })
            local r = data.default_convert(sample)
            assert.is_false(rawequal(r, sample))
            assert.are.equal(3, r.n)
            assert.is_true(rawequal(r[1], t))
            assert.are.equal(2.5, r[2])
            assert.are.same({ 3, "s" }, r[3].a)
            assert.is_false(rawequal(r[3].a, inner))
            assert.is_true(r[3].b)
            assert.are.equal(3, data.default_convert(3))
            assert.are.equal("x", data.default_convert("x"))
            assert.is_true(rawequal(t, data.default_convert(t)))
            local obj = setmetatable({}, { __index = {} })
            assert.is_true(rawequal(obj, data.default_convert({ obj })[1]))
            local cyc = {}
            cyc[1] = cyc
            assert.are.equal("tide: default_convert: the data.1 is a table that contains it " ..
                "(a cycle); a sample must be a tree of tables",
                bare(catch(data.default_convert, cyc)))
        end)
end)
