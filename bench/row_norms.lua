-- row_norms.lua — float32 x:norm(2, -1) of [1000, 1000] and [4096, 64] (rows of activations,
-- of attention heads), and F.normalize of 512 sentence embeddings of 384 (a sentence search's
-- cosine scores), against PyTorch's at its best thread setting (bench/compare.lua).
--   lua5.4 bench/row_norms.lua [REPS [ROUNDS]]     (bench/run.sh sets the paths)
local tide = require("tide")
local compare = require("bench.compare")

local REPS = tonumber(arg[1]) or 20
local ROUNDS = tonumber(arg[2]) or 3
local clock = tide.wall_time or os.clock

local OPS = { "norm_wide", "norm_narrow", "normalize" }
local CASES = { { "f32", 0 } }

local function inputs()
    -- bench/row_norms.py's values: sines of the element's index
    local function sines(r, c)
        return tide.arange(r * c, { dtype = "float32" }):sin():view(r, c)
    end
    local wide, narrow, emb = sines(1000, 1000), sines(4096, 64), sines(512, 384)
    local F = tide.nn.functional
    return {
        norm_wide = function() return wide:norm(2, -1) end,
        norm_narrow = function() return narrow:norm(2, -1) end,
        normalize = function() return F.normalize(emb, 2, -1) end,
    }
end

local res, why = compare.run { rounds = ROUNDS,
    tide = function() return compare.time_cases(CASES, OPS, inputs, REPS, clock) end,
    reference = string.format("bench/row_norms.py %d", REPS) }
print(string.format("row norms: float32, fastest of %d calls per round", REPS))
compare.print_lines(compare.case_keys(CASES, OPS), res, why, ROUNDS)
