-- fixtures.lua — the PyTorch fixtures the specs compare with ({shape =, data =} tables written
-- by spec/fixtures/make_*.py): read as tensors, and tensors checked against them.
--
--   local fx = require("spec.support.fixtures")
--   fx.tensor(r[, {dtype =, device =}])  -- int64 for integral data, float64 otherwise
--   fx.close(t, r[, tol[, what]])        -- shape equal, each element within tol relative
local assert = require("luassert")
local host = require("spec.support.host")

local M = {}

-- integer data (class targets): the integer subtype on 5.3+; on 5.1 and LuaJIT, where 2.0 reads
-- as 2, every element integral
function M.integral(data)
    if host.integers then
        return math.type(data[1]) == "integer"
    end
    for _, v in ipairs(data) do
        if v ~= math.floor(v) then
            return false
        end
    end
    return #data > 0
end

function M.tensor(r, opts)
    local tide = require("tide")
    opts = opts or {}
    local dtype = opts.dtype or (M.integral(r.data) and "int64" or "float64")
    local t = tide.tensor(r.data, { dtype = dtype, device = opts.device })
    if #r.shape == 0 then
        return t:reshape({})
    end
    return t:reshape(r.shape)
end

-- t's elements as doubles, on the host, in order
function M.flat(t)
    return t:detach():to("cpu"):contiguous():reshape(-1):double():totable()
end

-- t has r's shape and each element is r's (equal, or within tol * max(1, |r|); default 1e-9);
-- the error names what and the element, at the caller's caller
function M.close(t, r, tol, what)
    tol = tol or 1e-9
    assert.are.same(r.shape, t.shape, (what or "") .. ": shape")
    local got = M.flat(t)
    for i = 1, #r.data do
        local g, w = got[i], r.data[i]
        if not (g == w or math.abs(g - w) <= tol * math.max(1, math.abs(w))) then
            error(string.format("%s element %d: got %.10g, expected %.10g", what or "", i, g, w),
                3)
        end
    end
end

-- a and b hold the same values within tol (absolute; default exact)
function M.same(a, b, tol)
    local x, y = M.flat(a), M.flat(b)
    if #x ~= #y then
        return false
    end
    for i = 1, #x do
        if math.abs(x[i] - y[i]) > (tol or 0) then
            return false
        end
    end
    return true
end

return M
