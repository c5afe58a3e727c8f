-- ExponentialLR(opt, {gamma =}): lr * gamma every epoch
local LRScheduler = require "tide.optim.lr_scheduler.LRScheduler"

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

-- the lr at last_epoch from base_lrs (PyTorch's _get_closed_form_lr; SequentialLR uses it)
function ExponentialLR:closed_form()
    local r = {}
    for i, base in ipairs(self.base_lrs) do
        r[i] = base * self.gamma ^ self.last_epoch
    end
    return r
end

return ExponentialLR
