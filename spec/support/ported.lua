-- spec/support/ported.lua — what the ported-scripts specs (spec/ported_scripts*_spec.lua) share:
-- finiteness checks for a training loop's losses, a relative comparison of numbers and of
-- lists of them against PyTorch's values, and Python's plain classes.
local P = {}

function P.is_finite(x)
    return x == x and x ~= math.huge and x ~= -math.huge
end

function P.assert_finite(x, what)
    assert(P.is_finite(x), (what or "value") .. " is not finite: " .. tostring(x))
end

-- a and b agree to tol relative to b (absolute below 1)
function P.close(a, b, tol)
    return math.abs(a - b) <= tol * math.max(1, math.abs(b))
end

-- got, a list of numbers, agrees with PyTorch's want entry by entry
function P.assert_close_list(want, got, tol, what)
    assert(#want == #got, string.format("%s: %d values, PyTorch %d", what or "value", #got, #want))
    for i = 1, #want do
        assert(P.close(got[i], want[i], tol), string.format("%s[%d]: %.8g, PyTorch %.8g",
            what or "value", i, got[i], want[i]))
    end
end

-- Python's plain class: cls(...) runs __init__ on a new instance, instance(...) its __call__
function P.class(name)
    local cls = { __name = name }
    cls.__index = cls
    cls.__call = function(self, ...)
        return self:__call__(...)
    end
    cls.__init__ = function() end
    return setmetatable(cls, {
        __call = function(c, ...)
            local o = setmetatable({}, c)
            o:__init__(...)
            return o
        end,
    })
end

return P
