-- CosineAnnealingLR(opt, {T_max =, eta_min = 0}): eta_min + (base - eta_min) *
-- (1 + cos(pi * epoch / T_max)) / 2, in PyTorch's recursive form (past T_max it climbs back)
local LRScheduler = require("tide.optim.lr_scheduler.LRScheduler")

local CosineAnnealingLR = LRScheduler:extend("CosineAnnealingLR", { "T_max", "eta_min" },
    { "T_max", "eta_min" })

function CosineAnnealingLR:init(opts)
    self.T_max = self:integer(opts, "T_max", nil, 1)
    self.eta_min = self:number(opts, "eta_min", 0)
end

function CosineAnnealingLR:get_lr()
    local e, T, eta = self.last_epoch, self.T_max, self.eta_min
    local r = {}
    for i, g in ipairs(self.optimizer.param_groups) do
        local base = self.base_lrs[i]
        if e == 0 then
            r[i] = g.lr
        elseif self._step_count == 1 and e > 0 then
            r[i] = eta + (base - eta) * (1 + math.cos(e * math.pi / T)) / 2
        elseif (e - 1 - T) % (2 * T) == 0 then
            r[i] = g.lr + (base - eta) * (1 - math.cos(math.pi / T)) / 2
        else
            r[i] = (1 + math.cos(math.pi * e / T)) / (1 + math.cos(math.pi * (e - 1) / T)) *
                (g.lr - eta) + eta
        end
    end
    return r
end

-- the lr at last_epoch from a base lr (LRScheduler:_step_at, SequentialLR's milestones)
function CosineAnnealingLR:closed_lr(base)
    local eta = self.eta_min
    return eta + (base - eta) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
end

return CosineAnnealingLR
