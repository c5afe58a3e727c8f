-- CosineAnnealingWarmRestarts(opt, T_0[, {T_mult = 1, eta_min = 0}]): PyTorch 1.13's SGDR
-- (also CosineAnnealingWarmRestarts(opt, T_0, T_mult, eta_min) and (opt, {T_0 =, ...})).
-- The lr follows eta_min + (base - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2, T_cur counting
-- the epochs since the last restart and T_i the length of the current cycle (T_0, then times
-- T_mult after each restart). step() advances one epoch; step(epoch) sets the epoch, which may
-- be fractional (step(epoch + i / iters) once per batch):
--
--     local s = lr_scheduler.CosineAnnealingWarmRestarts(opt, 10, {T_mult = 2})
--     for epoch = 0, 19 do for i = 0, iters - 1 do train(); s:step(epoch + i / iters) end end
local LRScheduler = require("tide.optim.lr_scheduler.LRScheduler")
local compat = require("tide._compat")
local raise = require("tide.autograd").raise

local CAWR = LRScheduler:extend("CosineAnnealingWarmRestarts", { "T_0", "T_mult", "eta_min" },
    { "T_0", "T_i", "T_mult", "eta_min", "T_cur" })

function CAWR:init(opts)
    -- an integral float (10.0) is that integer
    local T_0 = type(opts.T_0) == "number" and compat.tointeger(opts.T_0) or nil
    if T_0 == nil or T_0 < 1 then
        T_0 = opts.T_0
        raise(string.format("tide: CosineAnnealingWarmRestarts: T_0 = %s; expected a positive " ..
            "integer (the epochs of the first cycle): CosineAnnealingWarmRestarts(opt, 10[, " ..
            "{T_mult =, eta_min =}])", type(T_0) == "number" and tostring(T_0) or type(T_0)))
    end
    self.T_0, self.T_i = T_0, T_0
    self.T_mult = self:integer(opts, "T_mult", 1, 1)
    self.eta_min = self:number(opts, "eta_min", 0)
    self.T_cur = -1
end

function CAWR:get_lr()
    local r, eta = {}, self.eta_min
    local c = (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
    for i, base in ipairs(self.base_lrs) do
        r[i] = eta + (base - eta) * c
    end
    return r
end

-- PyTorch's step: it counts no _step_count (its override skips the base class's)
function CAWR:step(epoch)
    if epoch == nil and self.last_epoch < 0 then
        epoch = 0
    end
    if epoch == nil then
        epoch = self.last_epoch + 1
        self.T_cur = self.T_cur + 1
        if self.T_cur >= self.T_i then
            self.T_cur = self.T_cur - self.T_i
            self.T_i = self.T_i * self.T_mult
        end
    else
        if type(epoch) ~= "number" or epoch ~= epoch or epoch < 0 or epoch == math.huge then
            raise(string.format("tide: CosineAnnealingWarmRestarts:step: expected an epoch >= " ..
                "0, got %s", type(epoch) == "number" and tostring(epoch) or type(epoch)))
        end
        local T_0, m = self.T_0, self.T_mult
        if epoch >= T_0 then
            if m == 1 then
                self.T_cur = epoch % T_0
            else
                -- int(math.log(x, m)) as Python computes it: log(x) / log(m), truncated
                local n = math.floor(math.log(epoch / T_0 * (m - 1) + 1) / math.log(m))
                self.T_cur = epoch - T_0 * (m ^ n - 1) / (m - 1)
                self.T_i = T_0 * compat.tointeger(m ^ n)
            end
        else
            self.T_i = T_0
            self.T_cur = epoch
        end
    end
    self.last_epoch = compat.tointeger(math.floor(epoch))
    self:update_lrs()
end

-- SequentialLR's step at a milestone: PyTorch calls step(0)
function CAWR:_step_at(epoch)
    self:step(epoch)
end

return CAWR
