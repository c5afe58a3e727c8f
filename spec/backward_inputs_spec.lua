-- t:backward{inputs = ...} and tide.autograd.backward(..., {inputs = ...}): PyTorch 1.13's
-- Tensor.backward(inputs=...) fills the .grad of the listed tensors only. Values from PyTorch 1.13
-- on the graph of mk(): h = a * b; y = (h * c + b:exp()):sum()
local tide = require("tide")
local autograd = require("tide.autograd")

local function F(v, rg)
    return tide.tensor(v, { dtype = "float32", requires_grad = rg })
end

local function mk()
    local a, b, c = F({ 1, 2 }, true), F({ 3, -1 }, true), F({ 0.5, 4 }, true)
    local h = a * b
    return a, b, c, h, (h * c + b:exp()):sum()
end

local function close(t, want)
    assert.is_not_nil(t)
    local got = t:reshape(-1):totable()
    assert.are.equal(#want, #got)
    for i = 1, #want do
        if math.abs(got[i] - want[i]) > 1e-4 then
            error(string.format("element %d: got %.7g, expected %.7g", i, got[i], want[i]), 2)
        end
    end
end

-- the message of f's error, its "file:line: " taken off
local function err(f)
    local ok, e = pcall(f)
    assert.is_false(ok)
    return (tostring(e):gsub("^[^:]*:%d+: ", ""))
end

describe("backward with inputs", function()
    it("fills only the inputs' .grad, accumulating across calls", function()
        local a, b, c, _, y = mk()
        y:backward({ inputs = { a }, retain_graph = true })
        -- PyTorch: a.grad [1.5, -4.0], b.grad None, c.grad None
        close(a.grad, { 1.5, -4 })
        assert.is_nil(b.grad)
        assert.is_nil(c.grad)
        y:backward({ inputs = a, retain_graph = true }) -- a tensor alone
        close(a.grad, { 3, -8 })
        assert.is_nil(b.grad)
        y:backward({ inputs = { b, c } })
        -- PyTorch: a [3, -8], b [20.5855, 8.3679], c [3, -2]
        close(a.grad, { 3, -8 })
        close(b.grad, { 20.5855, 8.3679 })
        close(c.grad, { 3, -2 })
        -- the same input twice counts once; an input the output does not reach keeps nil
        local a2, _, _, _, y2 = mk()
        local d = F({ 1 }, true)
        y2:backward({ inputs = { a2, d, a2 } })
        close(a2.grad, { 1.5, -4 })
        assert.is_nil(d.grad)
        -- the graph was freed along the way to a: backward through it again refuses
        local a3, _, c3, _, y3 = mk()
        y3:backward({ inputs = { c3 } })
        assert.are.equal("tide: backward: trying to backward through the graph a second time; " ..
            "pass {retain_graph = true} to the first backward",
            err(function() y3:backward({ inputs = { c3 } }) end))
        assert.is_nil(a3.grad)
    end)

    it("a non-leaf input gets its .grad, keeps retaining it, and its node is freed", function()
        local a, b, c, h, y = mk()
        y:backward({ inputs = { h, c }, retain_graph = true })
        -- PyTorch: h.grad [0.5, 4.0], h.retains_grad True, a.grad None, c.grad [3, -2]
        close(h.grad, { 0.5, 4 })
        assert.is_true(h.retains_grad)
        assert.is_nil(a.grad)
        assert.is_nil(b.grad)
        close(c.grad, { 3, -2 })
        y:backward() -- PyTorch: h.grad [1, 8], a.grad [1.5, -4]
        close(h.grad, { 1, 8 })
        close(a.grad, { 1.5, -4 })
        -- the non-leaf input's node runs, so is freed (PyTorch: "Trying to backward through the
        -- graph a second time"); a graph beside it is untouched
        local a2, b2, _, h2, y2 = mk()
        local z = (a2 * b2):sum()
        y2:backward({ inputs = { h2 } })
        assert.are.equal("tide: backward: trying to backward through the graph a second time; " ..
            "pass {retain_graph = true} to the first backward",
            err(function() h2:sum():backward({ inputs = { a2 } }) end))
        z:backward()
        close(a2.grad, { 3, -1 })
        -- the output itself as the input: PyTorch y.grad 1.0
        local _, _, _, _, y3 = mk()
        y3:backward({ inputs = { y3 } })
        close(y3.grad, { 1 })
    end)

    it("hooks and retain_grad run on the path to the inputs only", function()
        local a, b, _, h, y = mk()
        local log = {}
        a:register_hook(function(g) log[#log + 1] = { "a", g:totable() } end)
        b:register_hook(function(g) log[#log + 1] = { "b", g:totable() } end)
        h:register_hook(function(g) log[#log + 1] = { "h", g:totable() } end)
        y:backward({ inputs = { a } })
        -- PyTorch: [('h', [0.5, 4.0]), ('a', [1.5, -4.0])]
        assert.are.same({ { "h", { 0.5, 4 } }, { "a", { 1.5, -4 } } }, log)
        local a2, _, _, _, y2 = mk()
        a2:register_hook(function(g) return g * 10 end)
        y2:backward({ inputs = { a2 } })
        close(a2.grad, { 15, -40 }) -- PyTorch: [15, -40]
        local _, b3, c3, h3 = mk()
        h3:retain_grad()
        local m = h3 * c3
        m:retain_grad()
        ;(m + b3:exp()):sum():backward({ inputs = { c3 } })
        -- PyTorch: h.grad None (its node leads to no input), m.grad [1, 1], c.grad [3, -2]
        assert.is_nil(h3.grad)
        close(m.grad, { 1, 1 })
        close(c3.grad, { 3, -2 })
        -- a grad-ready hook fires for an input leaf, not for the leaves left alone
        local a4, b4, _, _, y4 = mk()
        local ready = {}
        autograd.register_grad_ready_hook(a4, function() ready[#ready + 1] = "a" end)
        autograd.register_grad_ready_hook(b4, function() ready[#ready + 1] = "b" end)
        y4:backward({ inputs = { a4 } })
        assert.are.same({ "a" }, ready)
    end)

    it("create_graph, a gradient, by position, autograd.backward", function()
        local a, b, _, _, y = mk()
        y:backward({ inputs = { b }, create_graph = true })
        -- PyTorch: b.grad [20.5855, 8.3679] with a grad_fn, a.grad None
        close(b.grad, { 20.5855, 8.3679 })
        assert.is_true(b.grad.requires_grad)
        assert.is_nil(a.grad)
        b.grad:sum():backward({ inputs = { a } })
        close(a.grad, { 0.5, 4 }) -- PyTorch: [0.5, 4.0]
        close(b.grad, { 20.5855, 8.3679 })
        local a2, b2, _, h2 = mk()
        h2:backward(F({ 1, 1 }), { inputs = { a2 }, retain_graph = true })
        close(a2.grad, { 3, -1 }) -- PyTorch: [3, -1]
        h2:backward(F({ 1, 1 }), nil, nil, { a2 })
        close(a2.grad, { 6, -2 })
        assert.is_nil(b2.grad)
        local a3, b3, _, h3 = mk()
        autograd.backward({ h3 }, { F({ 1, 2 }) }, { inputs = { b3 } })
        close(b3.grad, { 1, 4 }) -- PyTorch: a.grad None, b.grad [1, 4]
        assert.is_nil(a3.grad)
    end)

    it("errors", function()
        local a, _, _, _, y = mk()
        -- PyTorch: "'inputs' argument to backward() cannot be empty."
        assert.are.equal("tide: backward: inputs cannot be empty; list the tensors whose .grad " ..
            "to fill, or leave inputs out to fill every leaf's",
            err(function() y:backward({ inputs = {}, retain_graph = true }) end))
        assert.are.equal("tide: autograd.backward: inputs cannot be empty; list the tensors " ..
            "whose .grad to fill, or leave inputs out to fill every leaf's",
            err(function() autograd.backward({ y }, { inputs = {}, retain_graph = true }) end))
        -- PyTorch: "can't retain_grad on Tensor that has requires_grad=False"
        assert.are.equal("tide: backward: inputs[2] does not require grad; create it with " ..
            "{requires_grad = true}",
            err(function() y:backward({ inputs = { a, F({ 1 }) }, retain_graph = true }) end))
        assert.are.equal("tide: backward: inputs[1] does not require grad; create it with " ..
            "{requires_grad = true}",
            err(function() y:backward({ inputs = F({ 1 }), retain_graph = true }) end))
        -- PyTorch: "all inputs have to be Tensors, but got int"
        assert.are.equal("tide: backward: expected inputs[2] to be a tensor, got number",
            err(function() y:backward({ inputs = { a, 3 }, retain_graph = true }) end))
        assert.are.equal("tide: backward: inputs must be a tensor or a list of tensors, got " ..
            "number", err(function() y:backward({ inputs = 5, retain_graph = true }) end))
        assert.is_nil(a.grad) -- nothing ran
        y:backward({ inputs = { a } }) -- the graph is still whole
        close(a.grad, { 1.5, -4 })
    end)
end)
