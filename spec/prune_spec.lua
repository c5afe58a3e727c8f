-- prune_spec.lua — tide.nn.utils.prune against PyTorch 1.13's torch.nn.utils.prune
-- (spec/fixtures/prune_torch.lua, written by spec/fixtures/make_prune.py): masks, pruned
-- weights, forward results and gradients to weight_orig for l1_unstructured, ln_structured,
-- importance scores, repeated pruning (the masks combined as PyTorch's PruningContainer),
-- global_unstructured over two layers, custom_from_mask and remove; random pruning by its
-- properties; state_dict keys, is_pruned, the errors and a refused call that changes nothing,
-- on the device under test.
local tide = require("tide")
local nn = tide.nn
local prune = nn.utils.prune
local D = require("spec.support.device")
local P = require("spec.support.porting")

local T = dofile("spec/fixtures/prune_torch.lua")
local V = T.values
local DEV = D.name

local function t64(v, ...)
    local t = P.t64(v, DEV)
    if select("#", ...) > 0 then
        t = t:view(...)
    end
    return t
end

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

-- the error's text without its position
local function message(f)
    return (catch(f):gsub("^[^:]*:%d+: ", ""))
end

local function linear()
    local m = nn.Linear(4, 3):to("float64"):to(DEV)
    tide.no_grad(function()
        m.weight:copy_(t64(T.LW, 3, 4))
        m.bias:copy_(t64(T.LB))
    end)
    return m
end

local function conv()
    local m = nn.Conv1d(2, 4, 3):to("float64"):to(DEV)
    tide.no_grad(function()
        m.weight:copy_(t64(T.CW, 4, 2, 3))
        m.bias:zero_()
    end)
    return m
end

local function lx()
    return t64(T.LX, 2, 4)
end

local function cx()
    return t64(T.CX, 1, 2, 5)
end

-- the fixture's run(): mask, pruned weight, forward, gradients to weight_orig and bias
local function check_run(W, m, x, what)
    P.close(W.mask, m.weight_mask, 0, what .. " mask")
    P.close(W.weight, m.weight, 1e-15, what .. " weight")
    local y = m(x)
    assert.are.equal(tide.device(DEV), y.device)
    P.close(W.out, y, 1e-13, what .. " out")
    local loss = (y * P.weight_like(y)):sum()
    loss:backward()
    P.close(W.grad_orig, m.weight_orig.grad, 1e-12, what .. " grad weight_orig")
    P.close(W.grad_bias, m.bias.grad, 1e-12, what .. " grad bias")
end

local function keys(m)
    local names = {}
    for name in m:state_dict() do
        names[#names + 1] = name
    end
    return names
end

local function zeros(t)
    return (t:eq(0):sum():item())
end

describe("nn.utils.prune, PyTorch's values (" .. DEV .. ")", function()
    it("l1_unstructured by a fraction: weight_orig, weight_mask, forward and gradients", function()
        local m = linear()
        local w = m.weight
        assert.are.equal(m, prune.l1_unstructured(m, "weight", 0.3))
        assert.are.equal(w, m.weight_orig) -- the same tensor
        assert.are.equal("parameter", m._kind.weight_orig)
        assert.are.equal("buffer", m._kind.weight_mask)
        assert.is_nil(m._kind.weight)
        assert.are.equal("float64", m.weight_mask.dtype)
        assert.are.same({ "bias", "weight_orig", "weight_mask" }, keys(m))
        check_run(V.l1_frac, m, lx(), "l1_frac")
    end)

    it("l1_unstructured twice: the second amount of the entries left (4.5 rounds to 4)", function()
        local m = linear()
        prune.l1_unstructured(m, "weight", 3)
        P.close(V.l1_twice.first, m.weight_mask, 0, "first mask")
        prune.l1_unstructured(m, "weight", 0.5)
        check_run(V.l1_twice, m, lx(), "l1_twice")
        assert.are.equal(1, #m._forward_pre_hooks) -- one hook, as PyTorch's container
    end)

    it("l1_unstructured then ln_structured on a conv: channels still unpruned", function()
        local m = conv()
        prune.l1_unstructured(m, "weight", 0.25)
        prune.ln_structured(m, "weight", 1, 2, 1)
        check_run(V.l1_then_ln, m, cx(), "l1_then_ln")
    end)

    it("ln_structured: the max norm along the last dim, and L1 twice along dim 1", function()
        local m = conv()
        prune.ln_structured(m, "weight", 0.34, math.huge, -1)
        check_run(V.ln_inf_last, m, cx(), "ln_inf_last")
        m = conv()
        prune.ln_structured(m, "weight", 1, 1, 1)
        prune.ln_structured(m, "weight", 0.5, 1, 1)
        P.close(V.ln_l1_twice.mask, m.weight_mask, 0, "ln_l1_twice")
        m = conv()
        prune.ln_structured(m, "weight", 1, "fro", 1) -- "fro" is 2
        local n = conv()
        prune.ln_structured(n, "weight", 1, 2, 1)
        assert.is_true(m.weight_mask:equal(n.weight_mask))
    end)

    it("importance_scores choose the entries and channels", function()
        local m = linear()
        prune.l1_unstructured(m, "weight", 5, { importance_scores = t64(T.SC, 3, 4) })
        P.close(V.scores.l1, m.weight_mask, 0, "l1 scores")
        m = linear()
        prune.ln_structured(m, "weight", 0.5, 1, 2, { importance_scores = t64(T.SC, 3, 4) })
        P.close(V.scores.ln, m.weight_mask, 0, "ln scores")
    end)

    it("global_unstructured over two layers, again, and with importance scores", function()
        local function pair()
            local a = nn.Linear(4, 3):to("float64"):to(DEV)
            local b = nn.Linear(3, 2):to("float64"):to(DEV)
            tide.no_grad(function()
                a.weight:copy_(t64(T.AW, 3, 4))
                b.weight:copy_(t64(T.BW, 2, 3))
            end)
            return a, b
        end
        local a, b = pair()
        local params = { { a, "weight" }, { b, "weight" } }
        assert.is_nil(prune.global_unstructured(params, prune.l1_unstructured, { amount = 0.4 }))
        P.close(V.global.a1, a.weight_mask, 0, "a1")
        P.close(V.global.b1, b.weight_mask, 0, "b1")
        prune.global_unstructured(params, "l1_unstructured", { amount = 3 })
        P.close(V.global.a2, a.weight_mask, 0, "a2")
        P.close(V.global.b2, b.weight_mask, 0, "b2")
        P.close(t64(T.AW, 3, 4):mul(a.weight_mask):to("cpu"):totable(), a.weight, 0, "a weight")
        local c, d = pair()
        prune.global_unstructured({ { c, "weight" }, { d, "weight" } }, prune.l1_unstructured,
            { amount = 6, importance_scores = { t64(T.SC, 3, 4) } })
        P.close(V.global.c_scored, c.weight_mask, 0, "c scored")
        P.close(V.global.d_scored, d.weight_mask, 0, "d scored")
        -- identity: masks of ones
        local e, f = pair()
        prune.global_unstructured({ { e, "weight" }, { f, "bias" } }, prune.identity)
        assert.are.equal(0, zeros(e.weight_mask) + zeros(f.bias_mask))
    end)

    it("custom_from_mask, then l1_unstructured on what it left", function()
        local m = linear()
        local mask = tide.tensor(T.CM, { device = DEV }):view(3, 4):to("bool")
        prune.custom_from_mask(m, "weight", mask)
        P.close(V.custom_then_l1.first, m.weight_mask, 0, "custom mask")
        assert.are.equal("float64", m.weight_mask.dtype)
        prune.l1_unstructured(m, "weight", 2)
        check_run(V.custom_then_l1, m, lx(), "custom_then_l1")
    end)

    it("remove: the pruned value is the parameter again, the same tensor", function()
        local m = linear()
        prune.l1_unstructured(m, "weight", 0.5)
        local orig = m.weight_orig
        assert.is_true(prune.is_pruned(m))
        assert.are.equal(m, prune.remove(m, "weight"))
        assert.is_false(prune.is_pruned(m))
        assert.are.equal(orig, m.weight)
        assert.are.equal("parameter", m._kind.weight)
        assert.is_nil(m._kind.weight_orig)
        assert.is_nil(m._kind.weight_mask)
        assert.is_nil(m.weight_mask)
        assert.is_nil(m._forward_pre_hooks)
        assert.are.same({ "bias", "weight" }, keys(m))
        local W = V.removed
        P.close(W.weight, m.weight, 0, "removed weight")
        local y = m(lx())
        P.close(W.out, y, 1e-13, "removed out")
        local loss = (y * P.weight_like(y)):sum()
        loss:backward()
        P.close(W.grad, m.weight.grad, 1e-12, "removed grad")
    end)
end)

describe("nn.utils.prune, the mechanics (" .. DEV .. ")", function()
    it("the pruned weight follows weight_orig at each forward; is_pruned sees children", function()
        local m = linear()
        local seq = nn.Sequential(m, nn.ReLU())
        assert.is_false(prune.is_pruned(seq))
        prune.l1_unstructured(m, "weight", 6)
        assert.is_true(prune.is_pruned(seq))
        tide.no_grad(function() m.weight_orig:mul_(2) end)
        seq(lx())
        P.close(t64(T.LW, 3, 4):mul(2):mul(m.weight_mask):to("cpu"):totable(), m.weight, 0,
            "recomputed")
        -- a user's pre-hook still runs, and the mask can be edited in place
        local calls = 0
        m:register_forward_pre_hook(function() calls = calls + 1 end)
        tide.no_grad(function() m.weight_mask:fill_(1) end)
        m(lx())
        assert.are.equal(1, calls)
        assert.are.equal(0, zeros(m.weight))
    end)

    it("identity, a bias, and a state dict that loads back", function()
        local m = linear()
        prune.identity(m, "weight")
        prune.l1_unstructured(m, "bias", 1)
        assert.are.same({ "weight_orig", "bias_orig", "weight_mask", "bias_mask" }, keys(m))
        assert.are.equal(0, zeros(m.weight_mask))
        P.close({ 0, 1, 1 }, m.bias_mask, 0, "bias mask") -- |0.1| the least
        local sd = m:state_dict()
        local n = linear()
        prune.identity(n, "weight")
        prune.identity(n, "bias")
        n:load_state_dict(sd)
        n(lx())
        P.close({ 0, -0.2, 0.3 }, n.bias, 1e-15, "loaded bias")
    end)

    it("random_unstructured and random_structured: counts, the same under manual_seed", function()
        local function draw(seed)
            tide.manual_seed(seed)
            local m = conv()
            prune.random_unstructured(m, "weight", 0.25)
            prune.random_unstructured(m, "weight", 3) -- 3 of the 18 left
            return m
        end
        local a, b, c = draw(7), draw(7), draw(8)
        assert.are.equal(9, zeros(a.weight_mask))
        assert.is_true(a.weight_mask:equal(b.weight_mask))
        assert.is_false(a.weight_mask:equal(c.weight_mask) and
            draw(9).weight_mask:equal(c.weight_mask))
        tide.manual_seed(3)
        local m = conv()
        prune.random_structured(m, "weight", 0.5, 1) -- 2 of 4 output channels
        local per = m.weight_mask:reshape(4, -1):sum(2):to("cpu"):totable()
        table.sort(per)
        assert.are.same({ 0, 0, 6, 6 }, per)
        prune.random_structured(m, "weight", 1, 1) -- 1 of the 2 left
        assert.are.equal(18, zeros(m.weight_mask))
        prune.random_structured(m, "weight", 1, -1) -- a column of the last channel
        assert.are.equal(20, zeros(m.weight_mask))
        prune.random_unstructured(m, "weight", 0) -- nothing
        assert.are.equal(20, zeros(m.weight_mask))
    end)

    it("moves with the model: prune on the host, run on the device", function()
        local m = nn.Linear(4, 3):to("float64")
        tide.no_grad(function()
            m.weight:copy_(P.t64(T.LW, "cpu"):view(3, 4))
            m.bias:copy_(P.t64(T.LB, "cpu"))
        end)
        prune.l1_unstructured(m, "weight", 0.3)
        m:to(DEV)
        assert.are.equal(tide.device(DEV), m.weight_mask.device)
        local y = m(lx())
        assert.are.equal(tide.device(DEV), m.weight.device)
        P.close(V.l1_frac.out, y, 1e-13, "moved out")
    end)
end)

describe("nn.utils.prune, errors (" .. DEV .. ")", function()
    -- the module as it is: kinds, fields, hooks, values
    local function snapshot(m)
        local s = { keys = keys(m), hooks = m._forward_pre_hooks and #m._forward_pre_hooks,
            weight = m.weight, orig = m.weight_orig }
        s.mask = m.weight_mask and m.weight_mask:clone()
        return s
    end
    local function same(s, m)
        assert.are.same(s.keys, keys(m))
        assert.are.equal(s.hooks, m._forward_pre_hooks and #m._forward_pre_hooks)
        assert.are.equal(s.weight, m.weight)
        assert.are.equal(s.orig, m.weight_orig)
        if s.mask then
            assert.is_true(s.mask:equal(m.weight_mask))
        end
    end

    it("bad amounts, names, dims, n, shapes and options, with the fix", function()
        local m = linear()
        local cases = {
            { function() prune.l1_unstructured(m, "weight", 1.5) end,
                "tide: l1_unstructured: amount = 1.5 must be an integer count or a fraction " ..
                "in [0, 1]" },
            { function() prune.random_unstructured(m, "weight", -2) end,
                "tide: random_unstructured: amount = -2 must be an integer count or a " ..
                "fraction in [0, 1]" },
            { function() prune.l1_unstructured(m, "weight", "half") end,
                "tide: l1_unstructured: amount must be an integer count or a fraction in " ..
                "[0, 1], got string" },
            { function() prune.l1_unstructured(m, "weight", 13) end,
                "tide: l1_unstructured: amount = 13 is more than the 12 entries of 'weight' " ..
                "left to prune; give at most 12, or a fraction" },
            { function() prune.ln_structured(m, "weight", 4, 2, 1) end,
                "tide: ln_structured: amount = 4 is more than the 3 channels of 'weight' " ..
                "left to prune; give at most 3, or a fraction" },
            { function() prune.l1_unstructured(m, "kernel", 1) end,
                "tide: l1_unstructured: Linear has no parameter 'kernel'" },
            { function() prune.l1_unstructured(m, 1, 1) end,
                "tide: l1_unstructured: name must be a string such as \"weight\", got number" },
            { function() prune.identity({}, "weight") end,
                "tide: identity: expected a Module, got table" },
            { function() prune.ln_structured(m, "weight", 1, 2, 3) end,
                "tide: ln_structured: dim = 3 is not a dim of 'weight' (shape {3, 4}); give " ..
                "1..2 (1-based) or -2..-1" },
            { function() prune.random_structured(m, "weight", 1, 0) end,
                "tide: random_structured: dim = 0 is not a dim of 'weight' (shape {3, 4}); " ..
                "give 1..2 (1-based) or -2..-1" },
            { function() prune.ln_structured(m, "bias", 1, 2, 1) end,
                "tide: ln_structured: structured pruning needs a tensor of 2 or more dims; " ..
                "'bias' has shape {3}" },
            { function() prune.ln_structured(m, "weight", 1, "nuc", 1) end,
                "tide: ln_structured: n must be a number (math.huge for the max norm) or " ..
                "\"fro\", got \"nuc\"" },
            { function()
                prune.l1_unstructured(m, "weight", 1, { importance_scores = t64(T.LB) })
            end, "tide: l1_unstructured: importance_scores has shape {3}, 'weight' has " ..
                "{3, 4}; give scores of its shape" },
            { function()
                prune.l1_unstructured(m, "weight", 1, { importance = t64(T.LB) })
            end, "tide: l1_unstructured: unknown option \"importance\"; options are " ..
                "importance_scores" },
            { function() prune.custom_from_mask(m, "weight", { 1, 0 }) end,
                "tide: custom_from_mask: mask must be a tensor of 0s and 1s, got table" },
            { function() prune.remove(m, "weight") end,
                "tide: remove: 'weight' of Linear is not pruned; prune it before removing " ..
                "the pruning" },
            { function() prune.global_unstructured({}, prune.l1_unstructured, { amount = 1 }) end,
                "tide: global_unstructured: parameters must be a non-empty list of " ..
                "{module, name} pairs, got an empty table" },
            { function()
                prune.global_unstructured({ { m, "weight" } }, prune.ln_structured, { amount = 1 })
            end, "tide: global_unstructured: pruning_method ln_structured is not " ..
                "unstructured; give l1_unstructured, random_unstructured or identity" },
            { function()
                prune.global_unstructured({ { m, "weight" } }, "l2", { amount = 1 })
            end, "tide: global_unstructured: pruning_method must be prune.l1_unstructured, " ..
                "prune.random_unstructured or prune.identity (or its name), got \"l2\"" },
            { function()
                prune.global_unstructured({ { m, "weight" }, { m, "bias" } },
                    prune.l1_unstructured, { amount = 16 })
            end, "tide: global_unstructured: amount = 16 is more than the 15 entries of " ..
                "'the parameters' left to prune; give at most 15, or a fraction" },
            { function()
                prune.global_unstructured({ { m, "weight" } }, prune.l1_unstructured,
                    { amount = 1, importance_scores = { [2] = t64(T.LB) } })
            end, "tide: global_unstructured: importance_scores[2] names no parameter; its " ..
                "keys are 1..1, as the parameters'" },
        }
        for i, c in ipairs(cases) do
            local got = message(c[1])
            assert(got:find(c[2], 1, true) == 1, "case " .. i .. ": " .. got)
        end
        assert.is_false(prune.is_pruned(m))
        assert.are.same({ "weight", "bias" }, keys(m))
    end)

    it("a refused repeated pruning changes nothing (PyTorch would drop the hook)", function()
        local m = linear()
        prune.l1_unstructured(m, "weight", 10)
        local s = snapshot(m)
        local err = message(function() prune.l1_unstructured(m, "weight", 3) end)
        assert.are.equal("tide: l1_unstructured: amount = 3 is more than the 2 entries of " ..
            "'weight' left to prune; give at most 2, or a fraction", err)
        same(s, m)
        err = message(function() prune.ln_structured(m, "weight", 1, 2, 5) end)
        assert.truthy(err:find("dim = 5 is not a dim", 1, true))
        same(s, m)
        -- global: one bad pair and nothing is pruned
        local other = linear()
        err = message(function()
            prune.global_unstructured({ { other, "weight" }, { m, "nope" } },
                prune.l1_unstructured, { amount = 1 })
        end)
        assert.are.equal("tide: global_unstructured: Linear has no parameter 'nope'", err)
        assert.is_false(prune.is_pruned(other))
        same(s, m)
    end)

    it("a mask or scores on another device, and parameters on two devices", function()
        local m = linear()
        local mask = tide.ones({ 3, 4 }, { dtype = "float64", device = D.other })
        local err = message(function() prune.custom_from_mask(m, "weight", mask) end)
        assert.truthy(err:find("^tide: custom_from_mask: mask is on "), err)
        assert.truthy(err:find("move it there", 1, true), err)
        local n = nn.Linear(2, 2):to(D.other)
        err = message(function()
            prune.global_unstructured({ { m, "weight" }, { n, "weight" } }, "l1_unstructured",
                { amount = 1 })
        end)
        assert.truthy(err:find("^tide: global_unstructured: parameters%[2%] is on "), err)
        assert.is_false(prune.is_pruned(m) or prune.is_pruned(n))
    end)
end)
