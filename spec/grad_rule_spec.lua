-- grad_rule_spec.lua — gradients that used to be silently wrong (issue 10, items 4a and 4b):
-- prod at zeros, remainder and fmod, and the rule checked over every Tensor method: with an
-- input that requires grad, a float result records a gradient or the call raises
-- `tide: <op>: not differentiable ...`; never a silently detached result.
-- Runs on the device under test (spec/support/device.lua).
local tide = require("tide")
local gradcheck = require("spec.support.gradcheck")
local D = require("spec.support.device")
local idiv = require("spec.support.host").idiv -- a // b (tide.floor_divide before 5.3)

if D.kind == "cuda" and not tide.cuda.is_available() then
    describe("gradient rules on " .. D.name, function()
        it("needs a CUDA device", function()
            pending("no CUDA device")
        end)
    end)
    return
end

local function G(v)
    return tide.tensor(v, { dtype = "float64", requires_grad = true, device = D.name })
end

local function vals(t)
    return t:cpu():totable()
end

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

describe("prod's gradient on " .. D.name, function()
    it("is the product of the other elements, also at zeros (as PyTorch)", function()
        local x = G({ 1.0, 0.0, 2.0 })
        x:prod():backward()
        assert.are.same({ 0, 2, 0 }, vals(x.grad))
        local y = G({ 0.0, 3.0, 0.0 })
        y:prod():backward()
        assert.are.same({ 0, 0, 0 }, vals(y.grad))
        local z = G({ 2.0, 3.0, 4.0 })
        z:prod():backward()
        assert.are.same({ 12, 8, 6 }, vals(z.grad))
    end)

    it("over a dim, with and without keepdim, and for every shape", function()
        local x = G({ { 1, 0, 2 }, { 3, 4, 5 }, { 0, 0, 7 } })
        x:prod(2):sum():backward()
        assert.are.same({ { 0, 2, 0 }, { 20, 15, 12 }, { 0, 0, 0 } }, vals(x.grad))
        local w = G({ { 1, 0 }, { 3, 4 } })
        w:prod(1, true):mul(G({ { 10, 100 } })):sum():backward()
        assert.are.same({ { 30, 400 }, { 10, 0 } }, vals(w.grad))
        local s = G(5)
        s:prod():backward()
        assert.are.equal(1, s.grad:item())
        tide.manual_seed(1)
        for _, shape in ipairs({ { 7 }, { 3, 5 }, { 2, 3, 4 } }) do
            local r = tide.randn(shape, { dtype = "float64", device = D.name }):requires_grad_(true)
            assert.is_true(gradcheck(function(t) return t:prod() end, { r }))
            for d = 1, #shape do
                assert.is_true(gradcheck(function(t) return t:prod(d) end, { r }))
                assert.is_true(gradcheck(function(t) return t:prod(-d, true) end, { r }))
            end
        end
    end)
end)

describe("remainder, fmod, floor_divide and sign under autograd on " .. D.name, function()
    it("% no longer cuts the graph: (a*a + a % 2):sum() gives 2a + 1 (as PyTorch)", function()
        local a = G({ 0.5, 1.5 })
        local r = a % 2
        assert.is_true(r.requires_grad)
        ;(a * a + r):sum():backward()
        assert.are.same({ 2, 4 }, vals(a.grad))
    end)

    it("d/da = 1, d/db = -floor(a/b) for remainder and -trunc(a/b) for fmod", function()
        local a, b = G({ -7.5, 7.5, 5.25 }), G({ 2, 2, -2 })
        a:remainder(b):sum():backward()
        assert.are.same({ 1, 1, 1 }, vals(a.grad))
        assert.are.same({ 4, -3, 3 }, vals(b.grad)) -- -floor({-3.75, 3.75, -2.625})
        local c, e = G({ -7.5, 7.5, 5.25 }), G({ 2, 2, -2 })
        c:fmod(e):sum():backward()
        assert.are.same({ 1, 1, 1 }, vals(c.grad))
        assert.are.same({ 3, -3, 2 }, vals(e.grad)) -- -trunc({-3.75, 3.75, -2.625})
        -- numbers on either side
        local x = G({ -7.5, 2.5 })
        ;(7 % x):sum():backward()
        assert.are.same({ 1, -2 }, vals(x.grad)) -- -floor(7 / x): -floor(-0.93), -floor(2.8)
        local y = G({ -7.5, 2.5 })
        ;(tide.fmod(7, y)):sum():backward()
        assert.are.same({ 0, -2 }, vals(y.grad)) -- -trunc(-0.93), -trunc(2.8)
        tide.manual_seed(5)
        local p = tide.randn({ 3, 4 }, { dtype = "float64", device = D.name }):mul(3)
            :requires_grad_(true)
        local q = tide.rand({ 4 }, { dtype = "float64", device = D.name }):add(0.7)
            :requires_grad_(true)
        assert.is_true(gradcheck(function(u, v) return u:remainder(v) end, { p, q }))
        assert.is_true(gradcheck(function(u, v) return u:fmod(v) end, { p, q }))
        assert.is_true(gradcheck(function(u) return u % 1.3 end, { p }))
        assert.is_true(gradcheck(function(u) return u:fmod(-1.3) end, { p }))
    end)

    it("floor_divide and sign record a zero gradient (as floor and sign in PyTorch)", function()
        local a, b = G({ 3.5, -2 }), G({ 2, 3 })
        local q = idiv(a, b)
        assert.is_true(q.requires_grad)
        ;(q + a:sign() + a):sum():backward()
        assert.are.same({ 1, 1 }, vals(a.grad))
        assert.are.same({ 0, 0 }, vals(b.grad))
    end)
end)

-- ---- the rule, over every Tensor method and metamethod ------------------------------------------
-- With an input that requires grad and grad mode on, a call either returns no float tensor
-- (comparisons and argmax give bool/int64 tensors, as in PyTorch; integer casts end the graph),
-- returns float tensors that require grad and backpropagate, or raises
-- `tide: <op>: not differentiable ...`. An in-place method writes into a tensor that does not
-- require grad, given arguments that do: it cannot record, so it must raise.

local FLOAT = { float32 = true, float64 = true, float16 = true, bfloat16 = true }

-- not ops on values: documented to give a tensor without history, or to release one
local EXEMPT = {
    detach = "detach() returns a tensor without history by definition",
    set_ = "set_ swaps the tensor a userdata holds (p.data = q in PyTorch), not a computation",
    free = "releases the tensor", __gc = "releases the tensor", __close = "releases the tensor",
}
for _, m in ipairs({ "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "new",
    "new_empty_strided" }) do
    EXEMPT[m] = "makes a new tensor (t's dtype and device only), as tide.zeros does"
end

local R = require("spec.support.method_recipes")(D)
local SKIP, RECIPES, inputs, tries, walk = R.SKIP, R.RECIPES, R.inputs, R.tries, R.walk

-- an in-place op on a tensor that requires grad is refused (its own rule, docs/internals.md)
local REFUSED = "in%-place operation on a leaf tensor that requires grad"

local function any_requires_grad(args)
    for i = 1, args.n or #args do
        if tide.is_tensor(args[i]) and args[i].requires_grad then
            return true
        end
    end
    return false
end

-- float results PyTorch defines without a gradient (their result number): slogdet's sign
local NO_GRAD_RESULT = { slogdet = { [1] = true } }

-- calls f(args); false and the error when it raises; else true and the rule's violations
local function check_call(m, f, args, problems)
    local res = table.pack(pcall(f, table.unpack(args, 1, args.n or #args)))
    if not res[1] then
        return false, tostring(res[2])
    end
    if not any_requires_grad(args) then
        return true -- the rule says nothing here
    end
    for i = 2, res.n do
        local r = res[i]
        if NO_GRAD_RESULT[m] and NO_GRAD_RESULT[m][i - 1] then
            if r.requires_grad then
                problems[#problems + 1] = m .. ": result " .. (i - 1) .. " requires grad"
            end
        elseif tide.is_tensor(r) and FLOAT[r.dtype] then
            if not r.requires_grad then
                problems[#problems + 1] = m .. ": a float result that does not require grad"
            else
                -- results of one op may share a graph (qr's Q and R): keep it for the next
                local ok, err = pcall(function()
                    r:double():sum():backward({ retain_graph = i < res.n })
                end)
                if not ok then
                    problems[#problems + 1] = m .. ": backward through the result fails: " ..
                        tostring(err)
                end
            end
        end
    end
    return true
end

describe("every op either records a gradient or raises 'not differentiable' on " .. D.name, function()
    it("over every Tensor method and metamethod", function()
        local names, fns = walk()
        assert.is_true(#names > 80, "found " .. #names .. " methods")
        local checked, problems = 0, {}
        for _, m in ipairs(names) do
            if not EXEMPT[m] then
                local x, y, z = inputs()
                local f = fns[m]
                local list
                if RECIPES[m] then
                    local a = RECIPES[m](x, y, z)
                    list = a ~= SKIP and { a } or {}
                else
                    list = tries(m, x, y, z)
                end
                local done, errs = #list == 0, {}
                for _, args in ipairs(list) do
                    local ok, err = check_call(m, f, args, problems)
                    if ok or err:find("tide: [%w_%[%] =]+: not differentiable") or err:find(REFUSED) then
                        done = true
                        break
                    end
                    errs[#errs + 1] = err
                end
                if not done then
                    problems[#problems + 1] = m .. ": no call succeeded; add a recipe. Errors: " ..
                        table.concat(errs, " | ")
                end
                checked = checked + 1
            end
        end
        assert.are.same({}, problems)
        assert.is_true(checked > 80)
    end)

    it("an in-place op from an argument that requires grad records it (as in PyTorch)", function()
        local _, y, z = inputs()
        z:add_(y)
        assert.is_true(z.requires_grad)
        z:sum():backward()
        for _, g in ipairs(y.grad:cpu():view(-1):totable()) do
            assert.are.equal(1, g)
        end
        -- under no_grad, or with a detached argument, nothing is recorded
        local _, y2, z2 = inputs()
        tide.no_grad(function() z2:add_(y2) end)
        z2:add_(y2:detach())
        assert.is_false(z2.requires_grad)
    end)
end)
