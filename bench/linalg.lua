-- linalg.lua — tide.linalg (LAPACK's kernels on the CPU: getrf, potrf, geqrf, syevd, gesdd
-- ...) against PyTorch's torch.linalg (LAPACK too) at its best setting (bench/compare.lua),
-- float64: a batch of 32 8 x 8 matrices (the small batched case a script meets: covariances,
-- Gaussian processes, per-sample transforms) and one 64 x 64. No target: the figures say what a
-- call costs around LAPACK against PyTorch's dispatch, so a user knows which sizes it suits.
--   lua5.4 bench/linalg.lua [REPS [ROUNDS]]     (bench/run.sh sets the paths)
local tide = require("tide")
local compare = require("bench.compare")
local L = tide.linalg

local REPS = tonumber(arg[1]) or 3
local ROUNDS = tonumber(arg[2]) or 3
local clock = tide.wall_time or os.clock

-- b symmetric positive-definite n x n matrices, as bench/linalg.py builds them
local function spd(b, n)
    local i = tide.arange(0, n, { dtype = "float64" })
    local k = tide.arange(0, b, { dtype = "float64" }):view(b, 1, 1)
    local a = (i:view(n, 1) * 1.3 + i:view(1, n) * 0.7 + k):sin()
    return a:matmul(a:transpose(-2, -1)) + tide.eye(n, { dtype = "float64" }) * n
end

local CASES = { { "b32_n8", 32, 8 }, { "b1_n64", 1, 64 } }
local OPS = {
    { "det", function(a) return L.det(a) end },
    { "inv", function(a) return L.inv(a) end },
    { "solve", function(a) return L.solve(a, a:narrow(-1, 1, 1)) end },
    { "cholesky", function(a) return L.cholesky(a) end },
    { "qr", function(a) local _, r = L.qr(a) return r end },
    { "eigh", function(a) return (L.eigh(a)) end },
    { "svd", function(a) local _, s = L.svd(a, { full_matrices = false }) return s end },
}

local function run_tide()
    local out = {}
    for _, c in ipairs(CASES) do
        local a = spd(c[2], c[3])
        for _, o in ipairs(OPS) do
            o[2](a) -- warm up
            local best = math.huge
            for _ = 1, REPS do
                local t0 = clock()
                o[2](a)
                best = math.min(best, clock() - t0)
            end
            out[o[1] .. "_" .. c[1]] = best * 1e3
        end
    end
    return out
end

local res, why = compare.run { rounds = ROUNDS, tide = run_tide,
    reference = string.format("bench/linalg.py %d", REPS) }
print(string.format("linalg: float64, fastest of %d calls per round", REPS))
for _, c in ipairs(CASES) do
    for _, o in ipairs(OPS) do
        local key = o[1] .. "_" .. c[1]
        local r = res and res[key]
        if r then
            compare.print_line(string.format("linalg %s %s", o[1], c[1]), r, "ms", 1, ROUNDS)
        else
            print(string.format("linalg %s %s: pytorch n/a (%s)", o[1], c[1], why or "no figure"))
        end
    end
end
