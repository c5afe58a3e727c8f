-- MultiStepLR(opt, {milestones = {30, 80}, gamma = 0.1}): lr * gamma at each milestone epoch
-- (a milestone listed twice decays twice, as PyTorch's Counter)
local compat = require "tide._compat"
local LRScheduler = require "tide.optim.lr_scheduler.LRScheduler"
local raise = require("tide.autograd").raise

local MultiStepLR = LRScheduler:extend("MultiStepLR", { "milestones", "gamma" },
    { "milestones", "gamma" })

function MultiStepLR:init(opts)
    local m = opts.milestones
    if type(m) ~= "table" then
        raise("tide: MultiStepLR: option milestones is required: a list of epochs such as {30, 80}")
    end
    for i = 1, #m do
        if not compat.is_integer(m[i]) then
            raise("tide: MultiStepLR: milestone " .. i .. " is " .. tostring(m[i]) ..
                "; expected an integer epoch")
        end
    end
    self.milestones = compat.move(m, 1, #m, 1, {})
    self.gamma = self:number(opts, "gamma", 0.1)
end

function MultiStepLR:get_lr()
    local count = 0
    for _, e in ipairs(self.milestones) do
        if e == self.last_epoch then
            count = count + 1
        end
    end
    local r = {}
    for i, g in ipairs(self.optimizer.param_groups) do
        r[i] = count == 0 and g.lr or g.lr * self.gamma ^ count
    end
    return r
end

return MultiStepLR
