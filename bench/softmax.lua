-- softmax.lua — softmax and log_softmax (the kernel row softmax) against PyTorch's at its best
-- thread setting (bench/compare.lua), float32: a matrix along each dim, the channels of an NCHW
-- batch (a segmentation model's log_softmax over dim 2: lines H * W apart), the small rows of
-- a sequence model's attention, and cross_entropy over 1000 classes (log_softmax and the picks).
--   lua5.4 bench/softmax.lua [REPS [ROUNDS]]     (bench/run.sh sets the paths)
local tide = require("tide")
local compare = require("bench.compare")

local REPS = tonumber(arg[1]) or 20
local ROUNDS = tonumber(arg[2]) or 3
local clock = tide.wall_time or os.clock

-- name, op, shape, dim (1-based; bench/softmax.py's are 0-based)
local CASES = {
    { "m1000_last", "softmax", { 1000, 1000 }, 2 },
    { "m1000_first", "softmax", { 1000, 1000 }, 1 },
    { "nchw_channels", "log_softmax", { 16, 21, 64, 64 }, 2 },
    { "b64x128_last", "softmax", { 64, 128 }, 2 },
    { "ce_256x1000", "cross_entropy", { 256, 1000 } },
}

-- the values bench/softmax.py builds: sin of the element's index, times 4
local function input(shape)
    local n = 1
    for _, s in ipairs(shape) do
        n = n * s
    end
    return tide.arange(n, { dtype = "float32" }):sin():mul(4):view(shape)
end

-- cross_entropy's targets: class (i * 7) % 1000 of row i, 1-based (softmax.py's, 0-based)
local function call(c, x)
    if c[2] == "cross_entropy" then
        local t = tide.arange(c[3][1]):mul(7):remainder(c[3][2]):add(1):long()
        return function() return tide.nn.functional.cross_entropy(x, t) end
    end
    return function() return x[c[2]](x, c[4]) end
end

local function run_tide()
    local out = {}
    for _, c in ipairs(CASES) do
        out[c[1]] = compare.best_ms(call(c, input(c[3])), REPS, clock)
    end
    return out
end

local res, why = compare.run { rounds = ROUNDS, tide = run_tide,
    reference = string.format("bench/softmax.py %d", REPS) }
print(string.format("softmax: float32, fastest of %d calls per round", REPS))
for _, c in ipairs(CASES) do
    local r = res and res[c[1]]
    local name = c[2] .. " " .. c[1]
    if r then
        compare.print_line(name, r, "ms", 1, ROUNDS)
    else
        print(string.format("%s: pytorch n/a (%s)", name, why or "no figure"))
    end
end
