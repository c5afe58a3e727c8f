-- LinearLR(opt, {start_factor = 1/3, end_factor = 1, total_iters = 5}): the lr factor moves
-- linearly from start_factor to end_factor over total_iters epochs (PyTorch's recursive form)
local LRScheduler = require("tide.optim.lr_scheduler.LRScheduler")

local LinearLR = LRScheduler:extend("LinearLR", { "start_factor", "end_factor", "total_iters" },
    { "start_factor", "end_factor", "total_iters" })

local function factor(v)
    return v >= 0 and v <= 1
end

function LinearLR:init(opts)
    self.start_factor = self:number(opts, "start_factor", 1.0 / 3, factor, "a number in [0, 1]")
    self.end_factor = self:number(opts, "end_factor", 1.0, factor, "a number in [0, 1]")
    self.total_iters = self:integer(opts, "total_iters", 5, 1)
end

function LinearLR:get_lr()
    local e, s, f, n = self.last_epoch, self.start_factor, self.end_factor, self.total_iters
    local r = {}
    for i, g in ipairs(self.optimizer.param_groups) do
        if e == 0 then
            r[i] = g.lr * s
        elseif e > n then
            r[i] = g.lr
        else
            r[i] = g.lr * (1.0 + (f - s) / (n * s + (e - 1) * (f - s)))
        end
    end
    return r
end

-- the lr at last_epoch from a base lr (LRScheduler:_step_at, SequentialLR's milestones)
function LinearLR:closed_lr(base)
    local s, f, n = self.start_factor, self.end_factor, self.total_iters
    return base * (s + (f - s) * math.min(n, self.last_epoch) / n)
end

return LinearLR
