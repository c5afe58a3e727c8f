-- spec/support/porting.lua — what the porting specs share: the fixture's float64 inputs on the
-- device under test, the fixture's gradient weight G, and a comparison that walks nested rows.
-- A case is checked as the fixture scripts (spec/fixtures/porting_common.py) computed it: the
-- result, then the gradient of sum(result * G) for each input.
local tide = require("tide")
local unpack = table.unpack or unpack -- 5.1, LuaJIT

local P = {}

function P.t64(v, dev)
    return tide.tensor(v, { dtype = "float64", device = dev })
end

-- the fixture's G for a result: 1, -2, 3, -4, ... over its elements (porting_common.py)
function P.weight_like(out)
    local n, flat = out:numel(), {}
    for i = 1, n do
        flat[i] = i * (i % 2 == 1 and 1 or -1)
    end
    return tide.tensor(flat, { dtype = out.dtype, device = out.device }):reshape(out.shape)
end

-- want: nested Lua rows (or a number); got: a tensor on any device; tol relative, floored at 1
function P.close(want, got, tol, what)
    local g = got:to("cpu"):totable()
    local function walk(w, x, path)
        if type(w) == "table" then
            assert(type(x) == "table", what .. path .. ": expected a table")
            assert(#w == #x, what .. path .. ": length " .. #x .. ", expected " .. #w)
            for i = 1, #w do
                walk(w[i], x[i], path .. "[" .. i .. "]")
            end
        elseif w ~= w then
            assert(x ~= x, what .. path .. ": expected NaN, got " .. tostring(x))
        elseif type(w) == "boolean" then
            assert(w == x, what .. path .. ": expected " .. tostring(w))
        else
            local ok = (w == x) or math.abs(w - x) <= tol * math.max(1, math.abs(w))
            assert(ok, string.format("%s%s: got %.17g, PyTorch %.17g", what, path, x, w))
        end
    end
    if type(want) ~= "table" then
        want, g = { want }, { g }
    end
    walk(want, g, "")
end

-- runs fn on the inputs (float64 on dev, requiring grad) and compares the result and the
-- gradient of sum(result * G) for each input with the fixture's case c ({out, grads});
-- tol = {out = ..., grad = ...}
function P.check_case(c, name, dev, tol, fn, ...)
    local inputs = {}
    for i, v in ipairs({ ... }) do
        inputs[i] = P.t64(v, dev):requires_grad_(true)
    end
    local out = fn(unpack(inputs))
    assert(tide.device(dev) == out.device, name .. ": the result left " .. dev)
    P.close(c.out, out, tol.out or 1e-13, name)
    if c.grads and #c.grads > 0 then -- a case without gradients writes none (or {})
        local loss = (out * P.weight_like(out)):sum()
        loss:backward()
        for i, x in ipairs(inputs) do
            P.close(c.grads[i], x.grad or tide.zeros_like(x), tol.grad or 1e-12,
                name .. " grad " .. i)
        end
    end
end

-- one busted test per entry of CASES (name -> {fn, input, ...}), in name order: each asserts
-- the fixture has the case (T.cases[name]) and calls check(name, fn, input, ...); it is
-- busted's function (a support module does not see the spec's globals)
function P.run_cases(it, T, CASES, check)
    local names = {}
    for name in pairs(CASES) do
        names[#names + 1] = name
    end
    table.sort(names)
    for _, name in ipairs(names) do
        it(name, function()
            assert(T.cases[name], "no PyTorch fixture for " .. name)
            local c = CASES[name]
            check(name, c[1], unpack(c, 2))
        end)
    end
end

return P
