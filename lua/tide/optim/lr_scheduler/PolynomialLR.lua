-- PolynomialLR(opt, {total_iters = 5, power = 1}): the lr decays as (1 - epoch / total_iters)
-- ^ power to 0 at total_iters, then stays (PyTorch 1.13's recursive form)
local LRScheduler = require("tide.optim.lr_scheduler.LRScheduler")

local PolynomialLR = LRScheduler:extend("PolynomialLR", { "total_iters", "power" },
    { "total_iters", "power" })

function PolynomialLR:init(opts)
    self.total_iters = self:integer(opts, "total_iters", 5, 1)
    self.power = self:number(opts, "power", 1.0)
end

function PolynomialLR:get_lr()
    local e, n = self.last_epoch, self.total_iters
    local r = {}
    for i, g in ipairs(self.optimizer.param_groups) do
        if e == 0 or e > n then
            r[i] = g.lr
        else
            r[i] = g.lr * ((1.0 - e / n) / (1.0 - (e - 1) / n)) ^ self.power
        end
    end
    return r
end

function PolynomialLR:closed_lr(base)
    return base * (1.0 - math.min(self.total_iters, self.last_epoch) / self.total_iters) ^
        self.power
end

return PolynomialLR
