-- scan.lua — cumsum (the kernel row cumsum: a float64 accumulator for float32, as PyTorch's CPU
-- kernel) against PyTorch's torch.cumsum at its best thread setting (bench/compare.lua), float32:
-- one long vector, a matrix along each dim, and the small rows of a sequence model's batch; then
-- the rows cumprod, cummax (values and indices) and logcumsumexp on the 1000x1000 matrix.
--   lua5.4 bench/scan.lua [REPS [ROUNDS]]     (bench/run.sh sets the paths)
local tide = require("tide")
local compare = require("bench.compare")

local REPS = tonumber(arg[1]) or 20
local ROUNDS = tonumber(arg[2]) or 3
local clock = tide.wall_time or os.clock

-- name, shape, dim (1-based; bench/scan.py's are 0-based)
local CASES = {
    { "n1e6", { 1000000 }, 1 },
    { "m1000_last", { 1000, 1000 }, 2 },
    { "m1000_first", { 1000, 1000 }, 1 },
    { "b64x128_last", { 64, 128 }, 2 },
}

-- the values bench/scan.py builds: sin of the element's index
local function input(shape)
    local n = 1
    for _, s in ipairs(shape) do
        n = n * s
    end
    return tide.arange(n, { dtype = "float32" }):sin():view(shape)
end

-- name, op, dim of the 1000x1000 matrix (bench/scan.py's OPS)
local OPS = {
    { "cumprod_last", "cumprod", 2 },
    { "cummax_last", "cummax", 2 },
    { "cummax_first", "cummax", 1 },
    { "logcumsumexp_last", "logcumsumexp", 2 },
}

local function best_of(x, op, d)
    return compare.best_ms(function() return x[op](x, d) end, REPS, clock)
end

local function run_tide()
    local out = {}
    for _, c in ipairs(CASES) do
        out[c[1]] = best_of(input(c[2]), "cumsum", c[3])
    end
    local m = input({ 1000, 1000 })
    for _, c in ipairs(OPS) do
        -- cumprod of values near 1, so that the products stay finite
        out[c[1]] = best_of(c[2] == "cumprod" and m:mul(0.001):add(1) or m, c[2], c[3])
    end
    return out
end

local res, why = compare.run { rounds = ROUNDS, tide = run_tide,
    reference = string.format("bench/scan.py %d", REPS) }
print(string.format("scans: float32, fastest of %d calls per round", REPS))
local lines = {}
for _, c in ipairs(CASES) do
    lines[#lines + 1] = { "cumsum " .. c[1], c[1] }
end
for _, c in ipairs(OPS) do
    lines[#lines + 1] = { c[1]:gsub("_", " ", 1), c[1] }
end
for _, l in ipairs(lines) do
    local r = res and res[l[2]]
    if r then
        compare.print_line(l[1], r, "ms", 1, ROUNDS)
    else
        print(string.format("%s: pytorch n/a (%s)", l[1], why or "no figure"))
    end
end
