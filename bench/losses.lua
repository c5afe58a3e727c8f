-- losses.lua — the pointwise losses (mse, l1, smooth_l1, huber, binary_cross_entropy_with_logits,
-- with a weight too (bce_with_logits_w), soft_margin; reduction "mean") against PyTorch's at its
-- best thread setting
-- (bench/compare.lua), float32: the forward, and a forward and backward to the input, at a
-- million elements and at 4096.
--   lua5.4 bench/losses.lua [REPS [ROUNDS]]     (bench/run.sh sets the paths)
local tide = require("tide")
local compare = require("bench.compare")
local F = tide.nn.functional

local REPS = tonumber(arg[1]) or 10
local ROUNDS = tonumber(arg[2]) or 3
local clock = tide.wall_time or os.clock

local LOSSES = { "mse", "l1", "smooth_l1", "huber", "bce_with_logits", "bce_with_logits_w",
    "soft_margin" }
local FN = { mse = F.mse_loss, l1 = F.l1_loss, smooth_l1 = F.smooth_l1_loss, huber = F.huber_loss,
    bce_with_logits = F.binary_cross_entropy_with_logits, soft_margin = F.soft_margin_loss }
local SIZES = { { "1m", 1000000 }, { "4k", 4096 } }

-- bench/losses.py's values: input 2 sin(i), target 2 cos(i) (in [0, 1] for bce_with_logits,
-- its sign for soft_margin); bce_with_logits_w's weight 1.5 + sin(3 i), of the input's shape
local function inputs(n, loss)
    local i = tide.arange(n, { dtype = "float32" })
    local x, t = i:sin():mul(2), i:cos():mul(2)
    if loss == "bce_with_logits" or loss == "bce_with_logits_w" then
        t = t:add(2):div(4)
    elseif loss == "soft_margin" then
        t = t:sign()
    end
    if loss == "bce_with_logits_w" then
        local w = i:mul(3):sin():add(1.5)
        FN[loss] = function(a, b)
            return F.binary_cross_entropy_with_logits(a, b, { weight = w })
        end
    end
    return x, t
end

local function keys()
    local k = {}
    for _, size in ipairs(SIZES) do
        for _, loss in ipairs(LOSSES) do
            k[#k + 1] = loss .. "_" .. size[1]
            k[#k + 1] = loss .. "_bwd_" .. size[1]
        end
    end
    return k
end

local function run_tide()
    local out = {}
    for _, size in ipairs(SIZES) do
        for _, loss in ipairs(LOSSES) do
            local x, t = inputs(size[2], loss)
            local f, xg = FN[loss], x:clone():requires_grad_(true)
            out[loss .. "_" .. size[1]] = compare.best_ms(function() return f(x, t) end, REPS,
                clock)
            out[loss .. "_bwd_" .. size[1]] = compare.best_ms(function()
                xg.grad = nil
                f(xg, t):backward()
            end, REPS, clock)
        end
    end
    return out
end

local res, why = compare.run { rounds = ROUNDS, tide = run_tide,
    reference = string.format("bench/losses.py %d", REPS) }
print(string.format("pointwise losses: float32, reduction mean, fastest of %d calls per round " ..
    "(_bwd: forward and backward)", REPS))
compare.print_lines(keys(), res, why, ROUNDS)
