-- StepLR(opt, {step_size =, gamma = 0.1}): lr * gamma every step_size epochs
local LRScheduler = require "tide.optim.lr_scheduler.LRScheduler"

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

-- the lr at last_epoch from base_lrs (PyTorch's _get_closed_form_lr; SequentialLR uses it)
function StepLR:closed_form()
    local r = {}
    local k = math.floor(self.last_epoch / self.step_size)
    for i, base in ipairs(self.base_lrs) do
        r[i] = base * self.gamma ^ k
    end
    return r
end

return StepLR
