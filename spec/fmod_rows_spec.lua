-- fmod_rows_spec.lua — float32 fmod, remainder and floor_divide on contiguous rows compute
-- fmod in double arithmetic (src/cpu/fmod_rows.c): every result is the general path's (libm's
-- fmodf, taken by strided operands), bit for bit, over magnitudes 10^-12 to 10^12, exact
-- multiples, zeros of both signs, infinities, NaN, subnormals and quotients past 2^29.
local tide = require("tide")

-- the same values, strided: the general row loop (fmodf) computes on these
local function strided(x)
    return tide.stack({ x, x }, 2):select(2, 1) -- stride 2
end

local function same_bits(a, b)
    local na, nb = a:isnan(), b:isnan()
    assert.is_true(na:equal(nb))
    local fa, fb = a:masked_fill(na, 0), b:masked_fill(nb, 0)
    assert.is_true(fa:equal(fb))
    -- the sign of zeros too: 1 / -0 is -inf
    assert.is_true((1 / fa):masked_fill(na, 0):equal((1 / fb):masked_fill(nb, 0)))
end

describe("float32 fmod, remainder and floor_divide rows", function()
    it("give the general path's results bit for bit", function()
        tide.manual_seed(12)
        local n = 20000
        local a = (tide.rand(n) * 2 - 1) * tide.pow(10, tide.rand(n) * 24 - 12)
        local b = (tide.rand(n) * 2 - 1) * tide.pow(10, tide.rand(n) * 16 - 8)
        local special = { 0, -1 / math.huge, math.huge, -math.huge, 0 / 0, 1e-45, -1e-45, 3.4e38,
            -3.4e38, 1, -1, 0.5, 3, 7, 1e-38 }
        for i = 1, 600 do
            a[(i * 37) % n + 1] = special[i % #special + 1]
            b[(i * 53) % n + 1] = special[(i * 7) % #special + 1]
        end
        for i = 1, 300 do -- exact multiples
            local k = (i * 97) % n + 1
            local v = b[k]:item() * ((i % 41) - 20)
            if v == v and math.abs(v) < 3e38 then
                a[k] = v
            end
        end
        assert.is_true(a:is_contiguous() and not strided(a):is_contiguous())
        for _, op in ipairs({ "fmod", "remainder", "floor_divide" }) do
            same_bits(tide[op](a, b), tide[op](strided(a), strided(b)))
            for _, s in ipairs({ 0.3, -7.5, 1e-30, 1e30 }) do
                same_bits(tide[op](a, s), tide[op](strided(a), s))
            end
            -- in place: the tensor is read before it is written
            local c = a:clone()
            c[op .. "_"](c, b)
            same_bits(c, tide[op](strided(a), strided(b)))
        end
        -- fmod is exact: float64's fmod of the same values, rounded, is the same
        same_bits(a:fmod(b), a:double():fmod(b:double()):float())
    end)
end)
