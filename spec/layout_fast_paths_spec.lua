-- layout_fast_paths_spec.lua — the ops whose CPU speed bench/indexing.lua measures, against
-- PyTorch 1.13's values (pasted from its output): roll and flip (block copies, a negative-stride
-- read), t[{rows}] = src (one scatter_, its index expanded over the rows), embedding_bag mode
-- "max" (PyTorch's fold: a NaN counts only first, the first of equals stays) and clamp with
-- tensor bounds (one pass where nothing records): non-contiguous inputs, shifts
-- past the size, several dims, 0-d and empty tensors, integer and bool dtypes, NaN, -0.0 and
-- duplicate indices, the gradients too. Indices are 1-based (PyTorch's + 1).
local tide = require("tide")
local F = tide.nn.functional

local nan, NZ = 0 / 0, -1 / math.huge -- (-0.0: 5.1 and LuaJIT fold a -0.0 literal into 0)
local F32 = { dtype = "float32" }

local function long(v) return tide.tensor(v, { dtype = "int64" }) end

-- got (a tensor) holds want's values: NaN for NaN, zeros of want's sign
local function same(want, got, path)
    path = path or "value"
    if type(want) == "table" then
        local g = type(got) == "table" and got or got:totable()
        assert.are.equal(#want, #g, path .. ": length")
        for i = 1, #want do
            same(want[i], g[i], path .. "[" .. i .. "]")
        end
        return
    end
    if want ~= want then
        assert.is_true(got ~= got, path .. ": expected NaN, got " .. tostring(got))
    else
        assert.are.equal(want, got, path)
        if want == 0 and type(got) == "number" then
            assert.are.equal(1 / want, 1 / got, path .. ": the sign of zero")
        end
    end
end

local function B() return tide.arange(24, F32):view(2, 3, 4) end

describe("roll against PyTorch 1.13", function()
    it("rolls a non-contiguous input", function()
        same({ { { 3, 15 }, { 7, 19 }, { 11, 23 } }, { { 0, 12 }, { 4, 16 }, { 8, 20 } },
            { { 1, 13 }, { 5, 17 }, { 9, 21 } }, { { 2, 14 }, { 6, 18 }, { 10, 22 } } },
            B():transpose(1, 3):roll(1, 1))
    end)

    it("takes negative shifts and shifts past the size, several dims, a dim twice", function()
        -- x.roll((-7, 9), (2, 1))
        local want = { { { 3, 0, 1, 2 }, { 7, 4, 5, 6 }, { 11, 8, 9, 10 } },
            { { 15, 12, 13, 14 }, { 19, 16, 17, 18 }, { 23, 20, 21, 22 } } }
        same(want, B():roll({ -7, 9 }, { 3, 2 }))
        same(want, B():roll(1, 3)) -- the inner dim alone: its rows moved as one block
        -- x.roll((1, 2), (2, 2)): 3 places
        same({ { { 1, 2, 3, 0 }, { 5, 6, 7, 4 }, { 9, 10, 11, 8 } },
            { { 13, 14, 15, 12 }, { 17, 18, 19, 16 }, { 21, 22, 23, 20 } } },
            B():roll({ 1, 2 }, { 3, 3 }))
        -- x.roll((1, 3), (0, 2)): an outer and the inner dim
        same({ { { 13, 14, 15, 12 }, { 17, 18, 19, 16 }, { 21, 22, 23, 20 } },
            { { 1, 2, 3, 0 }, { 5, 6, 7, 4 }, { 9, 10, 11, 8 } } }, B():roll({ 1, 3 }, { 1, 3 }))
    end)

    it("rolls the flattened tensor without dims; 0-d and empty tensors", function()
        same({ { { 5, 6, 7, 8 }, { 9, 10, 11, 12 }, { 13, 14, 15, 16 } },
            { { 17, 18, 19, 20 }, { 21, 22, 23, 0 }, { 1, 2, 3, 4 } } }, B():roll(-5))
        local z = tide.tensor(5.0):roll(1)
        assert.are.same({}, z:size())
        assert.are.equal(5, z:item())
        assert.are.same({ 0, 3 }, tide.zeros(0, 3):roll(2, 2):size())
        assert.are.same({ 2, 0 }, tide.zeros(2, 0):roll(1, 2):size())
        assert.are.same({ 4, 0 }, tide.zeros(4, 0):roll(1, 1):size())
    end)

    it("rolls integers, bools and NaN", function()
        same({ { 3, 1, 2 }, { 6, 4, 5 } },
            tide.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }, { dtype = "int32" }):roll(1, 2))
        same({ false, false, true }, tide.tensor({ true, false, false }):roll(-1))
        same({ NZ, nan, 1 }, tide.tensor({ nan, 1, NZ }):roll(1))
    end)
end)

describe("flip against PyTorch 1.13", function()
    it("flips a non-contiguous input, several dims, a negative dim", function()
        same({ { { 11, 23 }, { 7, 19 }, { 3, 15 } }, { { 10, 22 }, { 6, 18 }, { 2, 14 } },
            { { 9, 21 }, { 5, 17 }, { 1, 13 } }, { { 8, 20 }, { 4, 16 }, { 0, 12 } } },
            B():transpose(1, 3):flip({ 1, 2 }))
        same({ { { 23, 22, 21, 20 }, { 19, 18, 17, 16 }, { 15, 14, 13, 12 } },
            { { 11, 10, 9, 8 }, { 7, 6, 5, 4 }, { 3, 2, 1, 0 } } }, B():flip({ 1, 2, 3 }))
        same({ { { 3, 2, 1, 0 }, { 7, 6, 5, 4 }, { 11, 10, 9, 8 } },
            { { 15, 14, 13, 12 }, { 19, 18, 17, 16 }, { 23, 22, 21, 20 } } }, B():flip(-1))
    end)

    it("flips 0-d and empty tensors, integers, bools and NaN", function()
        assert.are.equal(5, tide.tensor(5.0):flip({}):item())
        assert.are.same({ 0, 3 }, tide.zeros(0, 3):flip(1):size())
        -- empty with a dim of 3 to reverse: no memory to point into (the fuzzer's UBSan finding)
        assert.are.same({ 3, 0 }, tide.zeros(3, 0):flip({ 1, 2 }):size())
        same({ { 3, 2, 1 }, { 6, 5, 4 } }, long({ { 1, 2, 3 }, { 4, 5, 6 } }):flip(2))
        same({ { false, false, true } }, tide.tensor({ { true, false, false } }):flip(2))
        same({ 250, 2, 1 }, tide.tensor({ 1, 2, 250 }, { dtype = "uint8" }):flip(1))
        same({ NZ, 1, nan }, tide.tensor({ nan, 1, NZ }):flip(1))
    end)

    it("keeps its gradient: the flipped gradient", function()
        local x = tide.tensor({ 1, 2, 3 }, { dtype = "float32", requires_grad = true })
        local y = x:flip(1):roll(1);
        (y * tide.tensor({ 1, 10, 100 })):sum():backward()
        same({ 1, 100, 10 }, x.grad) -- y = {1, 3, 2}
    end)
end)

describe("t[{rows}] = src against PyTorch 1.13", function()
    local function Y()
        return tide.tensor({ { 1, nan, 3 }, { 4, 5, 6 }, { 7, 8, 9 }, { 10, 11, 12 } })
    end

    it("writes src's bits, -0.0 and NaN, over NaN", function()
        local z = Y()
        z[{ long({ 4, 1 }) }] = tide.tensor({ { NZ, 0, nan }, { 1, -2, 3 } })
        same({ { 1, -2, 3 }, { 4, 5, 6 }, { 7, 8, 9 }, { NZ, 0, nan } }, z)
    end)

    it("lets the last of duplicate rows win", function()
        local z = Y()
        z[{ long({ 3, 1, 3 }) }] = tide.tensor({ { 1, 1, 1 }, { 2, 2, 2 }, { 3, 3, 3 } })
        same({ { 2, 2, 2 }, { 4, 5, 6 }, { 3, 3, 3 }, { 10, 11, 12 } }, z)
    end)

    it("writes columns by negative index, and a broadcast row", function()
        local z = Y()
        z[{ {}, long({ -1, 1 }) }] = tide.tensor({ { NZ, 1 }, { 2, 3 }, { 4, 5 }, { 6, 7 } })
        same({ { 1, nan, NZ }, { 3, 5, 2 }, { 5, 8, 4 }, { 7, 11, 6 } }, z)
        z = Y()
        z[{ long({ 2, 3 }) }] = tide.tensor({ { -1, -2, -3 } })
        same({ { 1, nan, 3 }, { -1, -2, -3 }, { -1, -2, -3 }, { 10, 11, 12 } }, z)
    end)

    it("writes integers and bools", function()
        local zi = tide.arange(12, { dtype = "int32" }):view(4, 3)
        zi[{ long({ 2 }) }] = tide.tensor({ { 7, 8, 9 } }, { dtype = "int32" })
        same({ { 0, 1, 2 }, { 7, 8, 9 }, { 6, 7, 8 }, { 9, 10, 11 } }, zi)
        local zb = tide.zeros({ 3, 2 }, { dtype = "bool" })
        zb[{ long({ 3, 1 }) }] = tide.tensor({ { true, false }, { false, true } })
        same({ { false, true }, { false, false }, { true, false } }, zb)
    end)

    it("writes rows along an inner dim, float16 bits, and many rows", function()
        -- t[:, [3, 0]] = src for t = arange(24).view(2, 4, 3)
        local t = tide.arange(24, F32):view(2, 4, 3)
        t[{ {}, long({ 4, 1 }) }] = tide.tensor({ { { NZ, 1, nan }, { 2, 3, 4 } },
            { { 5, 6, 7 }, { 8, 9, 10 } } })
        same({ { { 2, 3, 4 }, { 3, 4, 5 }, { 6, 7, 8 }, { NZ, 1, nan } },
            { { 8, 9, 10 }, { 15, 16, 17 }, { 18, 19, 20 }, { 5, 6, 7 } } }, t)
        local h = tide.zeros({ 3, 4 }, { dtype = "float16" })
        h[{ long({ 3, 1 }) }] = tide.tensor({ { 1.5, NZ, 65504, nan }, { 0.1, 2, 3, 4 } },
            { dtype = "float16" })
        same({ { 0.0999755859375, 2, 3, 4 }, { 0, 0, 0, 0 }, { 1.5, NZ, 65504, nan } },
            h:to("float64"))
        -- 3000 of 5000 rows, each row r given the values 64 r .. 64 r + 63: every element lands
        local big = tide.zeros({ 5000, 64 }, { dtype = "int64" })
        local rows = tide.arange(3000, { dtype = "int64" }):mul(7):remainder(5000):add(1)
        big[{ rows }] = rows:view(3000, 1):mul(64) + tide.arange(64, { dtype = "int64" })
        local want = tide.zeros({ 5000 }, { dtype = "int64" }):index_fill_(1, rows, 1)
        assert.are.same(want:totable(), big:select(2, 1):ne(0):long():totable())
        assert.is_true(big:index_select(1, rows):equal(rows:view(3000, 1):mul(64) +
            tide.arange(64, { dtype = "int64" })))
    end)

    it("scatters and gathers through an expanded index, and checks each position", function()
        -- x.scatter_(0, i, s) and a.gather(0, i), i = tensor([2, 0]).view(2, 1).expand(2, 4)
        local i = long({ 3, 1 }):view(2, 1):expand(2, 4)
        same({ { 4, 5, 6, 7 }, { 0, 0, 0, 0 }, { 0, 1, 2, 3 } },
            tide.zeros({ 3, 4 }):scatter_(1, i, tide.arange(8, F32):view(2, 4)))
        same({ { 8, 9, 10, 11 }, { 0, 1, 2, 3 } }, tide.arange(12, F32):view(3, 4):gather(1, i))
        local x = tide.zeros({ 3, 4 })
        assert.has_error(function()
            x:scatter_(1, long({ 3, 4 }):view(2, 1):expand(2, 4), tide.ones({ 2, 4 }))
        end, "tide: scatter_: index 4 is out of range for dim 1 of size 3; indices are 1-based: " ..
            "use 1..3")
        assert.are.equal(0, x:abs():sum():item())
    end)

    it("gives PyTorch's gradients to the tensor and to src", function()
        local a = tide.tensor({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, { dtype = "float32",
            requires_grad = true })
        local s = tide.tensor({ { 10, 20 }, { 30, 40 } }, { dtype = "float32",
            requires_grad = true })
        local b = a * 1
        b[{ long({ 3, 1 }) }] = s * 2;
        (b * tide.tensor({ { 1, 2 }, { 3, 4 }, { 5, 6 } })):sum():backward()
        same({ { 0, 0 }, { 3, 4 }, { 0, 0 } }, a.grad)
        same({ { 10, 12 }, { 2, 4 } }, s.grad)
    end)
end)

describe("embedding_bag mode max against PyTorch 1.13", function()
    local function W()
        return tide.tensor({ { 1, nan }, { nan, 2 }, { 0, NZ }, { NZ, 0 }, { 3, 3 }, { -5, 7 } },
            { requires_grad = true })
    end

    local function run(ids, offsets, opts)
        local w = W()
        local y = F.embedding_bag(ids, w, offsets, opts)
        y:sum():backward()
        return y, w.grad
    end

    it("counts a NaN only first, keeps the first of equals; empty bags give 0", function()
        -- ids {0, 1, 4, 2, 3, 0, 5, 5, 2}, offsets {0, 2, 2, 3, 6}
        local ids, offs = long({ 1, 2, 5, 3, 4, 1, 6, 6, 3 }), long({ 1, 3, 3, 4, 7 })
        local y, g = run(ids, offs, { mode = "max" })
        same({ { 1, nan }, { 0, 0 }, { 3, 3 }, { 1, NZ }, { 0, 7 } }, y)
        same({ { 2, 1 }, { 0, 0 }, { 1, 1 }, { 0, 0 }, { 1, 1 }, { 0, 1 } }, g)
        y, g = run(ids, offs, { mode = "max", padding_idx = 5 })
        same({ { 1, nan }, { 0, 0 }, { 0, 0 }, { 1, NZ }, { 0, 7 } }, y)
        same({ { 2, 1 }, { 0, 0 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, { 0, 1 } }, g)
    end)

    it("folds bags of 2-D ids, longer than the fold's 16 steps", function()
        local ids = {}
        for i = 1, 3 do
            ids[i] = {}
            for j = 1, 20 do
                ids[i][j] = ((i - 1) * 7 + (j - 1) * 3) % 6 + 1
            end
        end
        local y, g = run(long(ids), nil, { mode = "max" })
        same({ { 1, nan }, { nan, 3 }, { 0, 7 } }, y)
        same({ { 1, 1 }, { 1, 0 }, { 1, 0 }, { 0, 0 }, { 0, 1 }, { 0, 1 } }, g)
    end)

    it("places bags of unequal lengths, padding left out", function()
        local ids = {}
        for i = 1, 30 do
            ids[i] = ((i - 1) * 5) % 6 + 1
        end
        local y, g = run(long(ids), long({ 1, 2, 2, 26 }), { mode = "max", padding_idx = 1 })
        same({ { 0, 0 }, { 0, 0 }, { 3, 7 }, { 3, 7 } }, y)
        same({ { 0, 0 }, { 0, 0 }, { 0, 0 }, { 0, 0 }, { 2, 0 }, { 0, 2 } }, g)
    end)

    it("takes one bag at a time when the longest is far longer than the rest", function()
        local ids = {}
        for i = 1, 1100 do
            ids[i] = ((i - 1) * 5 + 3) % 6 + 1
        end
        local y, g = run(long(ids), tide.arange(1, 11, { dtype = "int64" }), { mode = "max" })
        same({ { NZ, 0 }, { 0, NZ }, { nan, 2 }, { 1, nan }, { -5, 7 }, { 3, 3 }, { NZ, 0 },
            { 0, NZ }, { nan, 2 }, { 3, nan } }, y)
        same({ { 1, 2 }, { 2, 2 }, { 2, 2 }, { 2, 2 }, { 2, 1 }, { 1, 1 } }, g)
    end)
end)

describe("clamp with tensor bounds against PyTorch 1.13", function()
    local X = { 1, nan, 3, 0.5, -2, 7 }
    local LO, HI = { nan, 0, 2, 1, 0, 8 }, { 5, 5, nan, 0, 3, 2 }

    it("propagates NaN in x and the bounds; min above max gives max", function()
        local x, lo, hi = tide.tensor(X), tide.tensor(LO), tide.tensor(HI)
        same({ nan, nan, nan, 0, 0, 2 }, x:clamp(lo, hi))
        same({ nan, nan, 3, 1, 0, 8 }, x:clamp(lo))
        same({ 1, nan, nan, 0, -2, 2 }, x:clamp(nil, hi))
    end)

    it("broadcasts integers, and promotes to the bounds' float dtype", function()
        same({ { 2, 5, 6 }, { 1, 0, 1 } },
            long({ { 1, 5, 9 }, { -4, 0, 4 } }):clamp(long({ 2, 0, 5 }), long({ { 6 }, { 1 } })))
        local r = long({ 1, 5, 9 }):clamp(tide.tensor({ 1.5 }), tide.tensor({ 6.5 }))
        assert.are.equal("float32", r.dtype)
        same({ 1.5, 5, 6.5 }, r)
    end)

    it("takes bounds of x's shape in one pass: float dtypes, non-contiguous, integers", function()
        local inf = math.huge
        local XS = { 1, nan, 3, 0.5, -2, 7, NZ, 0, inf, -inf }
        local LS, HS = { nan, 0, 2, 1, 0, 8, 0, -1, 0, -inf }, { 5, 5, nan, 0, 3, 2, 1, NZ, 1, -5 }
        for _, dt in ipairs({ "float32", "float64" }) do
            local o = { dtype = dt }
            local x, lo, hi = tide.tensor(XS, o), tide.tensor(LS, o), tide.tensor(HS, o)
            -- PyTorch's float32 values (its scalar rule at the ties of zeros, as above)
            same({ nan, nan, nan, 0, 0, 2, NZ, 0, 1, -inf }, x:clamp(lo, hi), dt)
            -- x.view(2, 5).t().clamp(lo.view(5, 2), hi.view(2, 5).t())
            same({ { nan, 2 }, { nan, 1 }, { nan, NZ }, { 0, 1 }, { 0, -inf } },
                x:view(2, 5):t():clamp(lo:view(5, 2), hi:view(2, 5):t()), dt)
        end
        for _, dt in ipairs({ "int32", "int64", "uint8" }) do
            local o = { dtype = dt }
            local r = tide.tensor({ 0, 5, 9, 200, 7, 3 }, o):clamp(tide.tensor({ 1, 6, 2, 100, 8, 3 },
                o), tide.tensor({ 4, 7, 8, 150, 2, 3 }, o))
            assert.are.equal(dt, r.dtype)
            same({ 1, 6, 8, 150, 2, 3 }, r, dt)
        end
    end)

    it("gives the selects' values (recorded) on long rows, in place too", function()
        local n = 1000
        local i = tide.arange(n)
        local x = i:mul(0.37):sin()
        x[{ { 1, n, 97 } }] = nan
        local lo, hi = i:mul(0.11):cos():mul(0.5), i:mul(0.23):sin():mul(0.5):add(0.2)
        lo[{ { 5, n, 89 } }] = nan
        hi[{ { 9, n, 83 } }] = nan
        local want = x:clone():requires_grad_():clamp(lo, hi):detach()
        same(want:totable(), x:clamp(lo, hi))
        same(want:totable(), x:clone():clamp_(lo, hi))
    end)

    it("keeps x at a tie of zeros, in every lane (PyTorch's scalar rule; its AVX lanes take the " ..
        "bound)", function()
        local n = 40
        local function rep(v) return tide.full({ n }, v) end
        local want_neg, want_pos = {}, {}
        for i = 1, n do
            want_neg[i], want_pos[i] = NZ, 0
        end
        same(want_neg, rep(NZ):clamp(rep(0), rep(1)))
        same(want_pos, rep(0):clamp(rep(-1), rep(NZ)))
        -- recording: the same values through the selects
        local x = rep(NZ):requires_grad_()
        same(want_neg, x:clamp(rep(0), rep(1)))
    end)
end)

-- the same ops on the GPU (its copy entry read with negative strides; index_add_, masked_fill_,
-- where, maximum and minimum) against the CPU's results
describe("roll, flip, t[{rows}] = src, embedding_bag max, tensor clamp: cuda against cpu #cuda",
    function()
        it("gives the CPU's values", function()
            if not tide.cuda.is_available() then
                pending("no CUDA device")
                return
            end
            local function both(f)
                local c, g = f("cpu"), f("cuda")
                same(c:totable(), g:cpu())
            end
            local function X(dev)
                local x = tide.arange(60, { dtype = "float32", device = dev }):view(3, 4, 5)
                x[{ 2, 3, 4 }] = nan
                return x:transpose(1, 3)
            end
            both(function(dev) return X(dev):roll({ -7, 2 }, { 1, 3 }) end)
            both(function(dev) return X(dev):contiguous():roll(1, 3) end)
            both(function(dev) return X(dev):flip({ 1, 3 }) end)
            both(function(dev) return X(dev):to("int32"):flip(2) end)
            both(function(dev)
                local z = X(dev):contiguous()
                z[{ tide.tensor({ 4, 1 }, { dtype = "int64", device = dev }) }] =
                    tide.full({ 2, 4, 3 }, NZ, { device = dev })
                return z
            end)
            both(function(dev)
                local w = tide.tensor({ { 1, nan }, { nan, 2 }, { 0, NZ }, { NZ, 0 } },
                    { device = dev })
                local ids = tide.tensor({ 1, 2, 4, 3, 4, 1, 3 }, { dtype = "int64", device = dev })
                return F.embedding_bag(ids, w, tide.tensor({ 1, 3, 3, 4 }, { dtype = "int64",
                    device = dev }), { mode = "max", padding_idx = 2 })
            end)
            both(function(dev)
                local x = tide.tensor({ 1, nan, 3, 0.5, -2, 7, NZ }, { device = dev })
                return x:clamp(tide.tensor({ nan, 0, 2, 1, 0, 8, 0 }, { device = dev }),
                    tide.tensor({ 5, 5, nan, 0, 3, 2, 1 }, { device = dev }))
            end)
        end)
    end)

describe("scatter_reduce amax and amin against PyTorch 1.13", function()
    -- x.scatter_reduce(0, idx, src, reduce, include_self=...)
    local function X() return tide.tensor({ 5, -1, nan, 1, 0, 2 }) end
    local IDX = { 1, 2, 2, 4, 4, 5, 5, 1, 6 } -- PyTorch's {0, 1, 1, 3, 3, 4, 4, 0, 5}
    local function S() return tide.tensor({ 7, 0, 3, nan, 2, -0.5, 0.5, 9, -1 }) end

    it("propagates NaN from src and self", function()
        local want = {
            amax = { [true] = { 9, 3, nan, nan, 0.5, 2 }, [false] = { 9, 3, nan, nan, 0.5, -1 } },
            amin = { [true] = { 5, -1, nan, nan, -0.5, -1 },
                [false] = { 7, 0, nan, nan, -0.5, -1 } },
        }
        for _, how in ipairs({ "amax", "amin" }) do
            for _, inc in ipairs({ true, false }) do
                same(want[how][inc], X():scatter_reduce(1, long(IDX), S(), how,
                    { include_self = inc }), how .. (inc and " with self" or " without self"))
            end
        end
    end)

    it("reduces integers, duplicates included", function()
        local x, i, s = long({ 5, 0, -3, 1 }), long({ 1, 2, 2, 3, 3 }), long({ 2, -7, 4, -9, -9 })
        same({ 5, 4, -3, 1 }, x:scatter_reduce(1, i, s, "amax"))
        same({ 2, 4, -9, 1 }, x:scatter_reduce(1, i, s, "amax", { include_self = false }))
        same({ 2, -7, -9, 1 }, x:scatter_reduce(1, i, s, "amin"))
        same({ 2, -7, -9, 1 }, x:scatter_reduce(1, i, s, "amin", { include_self = false }))
    end)

    it("splits the gradient evenly among ties", function()
        local x = tide.tensor({ 1, 2, 3, 4 }, { dtype = "float32", requires_grad = true })
        local s = tide.tensor({ 4, 4, 1, 4, 3 }, { dtype = "float32", requires_grad = true })
        x:scatter_reduce(1, long({ 1, 1, 2, 4, 4 }), s, "amax"):sum():backward()
        same({ 0, 1, 1, 0.5 }, x.grad)
        same({ 0.5, 0.5, 0, 0.5, 0 }, s.grad)
    end)
end)

describe("scatter_reduce amax and amin at ties of zeros, as PyTorch 1.13", function()
    it("keeps self, or without self the first value sent", function()
        -- x [0, -0, 0, -0], index [0, 0, 1, 1, 2, 2, 3, 3], src [-0, 0, 0, -0, -0, 0, 0, -0]
        local function run(how, inc)
            return tide.tensor({ 0, NZ, 0, NZ }):scatter_reduce(1, long({ 1, 1, 2, 2, 3, 3, 4, 4 }),
                tide.tensor({ NZ, 0, 0, NZ, NZ, 0, 0, NZ }), how, { include_self = inc })
        end
        for _, how in ipairs({ "amax", "amin" }) do
            same({ 0, NZ, 0, NZ }, run(how, true), how .. " with self")
            same({ NZ, 0, NZ, 0 }, run(how, false), how .. " without self")
        end
    end)
end)
