-- ConstantLR(opt, {factor = 1/3, total_iters = 5}): the lr times factor for the first
-- total_iters epochs, then the lr itself (PyTorch 1.13's recursive form)
local LRScheduler = require("tide.optim.lr_scheduler.LRScheduler")

local ConstantLR = LRScheduler:extend("ConstantLR", { "factor", "total_iters" },
    { "factor", "total_iters" })

function ConstantLR:init(opts)
    self.factor = self:number(opts, "factor", 1.0 / 3, function(v)
        return v >= 0 and v <= 1
    end, "a number in [0, 1]")
    self.total_iters = self:integer(opts, "total_iters", 5, 0)
end

function ConstantLR:get_lr()
    local e, n = self.last_epoch, self.total_iters
    local r = {}
    for i, g in ipairs(self.optimizer.param_groups) do
        if e == 0 then
            r[i] = g.lr * self.factor
        elseif e == n then
            r[i] = g.lr * (1.0 / self.factor)
        else
            r[i] = g.lr
        end
    end
    return r
end

-- the lr at last_epoch from a base lr (LRScheduler:_step_at, SequentialLR's milestones)
function ConstantLR:closed_lr(base)
    return base * (self.factor + (self.last_epoch >= self.total_iters and 1 or 0) *
        (1 - self.factor))
end

return ConstantLR
