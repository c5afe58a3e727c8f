-- spec/support/ported.lua — what the ported-scripts specs (spec/ported_scripts*_spec.lua) share:
-- finiteness checks for a training loop's losses, and a relative comparison of numbers and of
-- lists of them against PyTorch's values.
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

return P
