-- tide.jit (PyTorch's torch.jit for ported scripts): script and trace give the module or
-- function back (trace after one call on its example inputs), save/load are the whole-module
-- tide.save/tide.load, the decorators are identities, and bad input raises naming the fix.
local tide = require("tide")
local nn = tide.nn

describe("tide.jit", function()
    it("script and trace give the function or module back; trace runs it once", function()
        tide.manual_seed(0)
        local m = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
        assert.are.equal(m, tide.jit.script(m))
        local calls = 0
        local function f(x, y)
            calls = calls + 1
            return x + y
        end
        assert.are.equal(f, tide.jit.script(f))
        assert.are.equal(f, tide.jit.trace(f, { tide.ones({ 2 }), tide.ones({ 2 }) }))
        assert.are.equal(1, calls)
        local x = tide.randn({ 4, 3 }, { requires_grad = true })
        local traced = tide.jit.trace(m, x, { check_trace = false })
        assert.are.equal(m, traced)
        assert.is_nil(x.grad) -- the trace's call records nothing
        assert.has_error(function() tide.jit.trace(m, tide.randn({ 4, 5 })) end)
        assert.has_error(function() tide.jit.trace(m, x, { check = true }) end)
        assert.has_error(function() tide.jit.script(3) end,
            "tide: jit.script: expected a module or a function, got number")
        assert.are.equal(m, tide.jit.trace_module(m, { forward = x }))
    end)

    it("saves and loads the whole module through tide.save and tide.load", function()
        tide.manual_seed(0)
        local m = nn.Sequential(nn.Linear(3, 2), nn.Tanh())
        local path = os.tmpname()
        tide.jit.save(tide.jit.script(m), path)
        local back = tide.jit.load(path, "cpu")
        os.remove(path)
        local x = tide.randn({ 2, 3 })
        assert.is_true(back(x):equal(m(x)))
        assert.are.equal("Sequential", back.__class__.__name__)
    end)

    it("has the decorators, the predicates and fork/wait", function()
        local function g(v) return v * 2 end
        assert.are.equal(g, tide.jit.ignore(g))
        assert.are.equal(g, tide.jit.ignore({ drop = true })(g))
        assert.are.equal(g, tide.jit.unused(g))
        assert.are.equal(g, tide.jit.export(g))
        assert.has_error(function() tide.jit.ignore({ dorp = true }) end)
        assert.is_false(tide.jit.is_scripting())
        assert.is_false(tide.jit.is_tracing())
        assert.are.equal(5, tide.jit.annotate("List[int]", 5))
        local fut = tide.jit.fork(function(a, b) return a + b, a * b end, 2, 3)
        local s, p = tide.jit.wait(fut)
        assert.are.same({ 5, 6 }, { s, p })
        assert.has_error(function() tide.jit.wait(5) end,
            "tide: jit.wait: expected a future from tide.jit.fork, got number")
    end)

    it("freezes a module in eval mode only, as PyTorch", function()
        local m = nn.Linear(2, 2)
        assert.has_error(function() tide.jit.freeze(m) end, "tide: jit.freeze: freezing is " ..
            "for modules in eval mode (as PyTorch's); call m:eval() first")
        m:eval()
        assert.are.equal(m, tide.jit.freeze(m))
        local t = nn.Linear(2, 2)
        assert.are.equal(t, tide.jit.optimize_for_inference(t))
        assert.is_false(t.training)
    end)
end)
