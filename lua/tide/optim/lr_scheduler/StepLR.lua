-- StepLR(opt, {step_size =, gamma = 0.1}): lr * gamma every step_size epochs
local LRScheduler = require("tide.optim.lr_scheduler.LRScheduler")

local StepLR = LRScheduler:extend("StepLR", { "step_size", "gamma" }, { "step_size", "gamma" })

function StepLR:init(opts)
    self.step_size = self:integer(opts, "step_size", nil, 1)
    self.gamma = self:number(opts, "gamma", 0.1)
end

function StepLR:get_lr()
    local r = {}
    local decay = self.last_epoch ~= 0 and self.last_epoch % self.step_size == 0
    for i, g in ipairs(self.optimizer.param_groups) do
        r[i] = decay and g.lr * self.gamma or g.lr
    end
    return r
end

-- the lr at last_epoch from a base lr (LRScheduler:_step_at, SequentialLR's milestones)
function StepLR:closed_lr(base)
    return base * self.gamma ^ math.floor(self.last_epoch / self.step_size)
end

return StepLR
