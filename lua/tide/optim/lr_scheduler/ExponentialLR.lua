-- ExponentialLR(opt, {gamma =}): lr * gamma every epoch
local LRScheduler = require("tide.optim.lr_scheduler.LRScheduler")

local ExponentialLR = LRScheduler:extend("ExponentialLR", { "gamma" }, { "gamma" })

function ExponentialLR:init(opts)
    self.gamma = self:number(opts, "gamma")
end

function ExponentialLR:get_lr()
    local r = {}
    for i, g in ipairs(self.optimizer.param_groups) do
        r[i] = self.last_epoch == 0 and g.lr or g.lr * self.gamma
    end
    return r
end

-- the lr at last_epoch from a base lr (LRScheduler:_step_at, SequentialLR's milestones)
function ExponentialLR:closed_lr(base)
    return base * self.gamma ^ self.last_epoch
end

return ExponentialLR
