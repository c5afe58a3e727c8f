-- SWALR(opt, {swa_lr =, anneal_epochs = 10, anneal_strategy = "cos", last_epoch = -1}):
-- PyTorch 1.13's torch.optim.swa_utils.SWALR. Over anneal_epochs steps each group's lr moves
-- from its current value to its swa_lr (a number for all groups or a list, one per group,
-- also kept in each group as g.swa_lr), along a cosine ("cos") or a line ("linear"), then
-- stays there. The formula is PyTorch's chainable one: each step infers the lr the anneal
-- started from out of the group's current lr, so other schedulers may have moved it.
--
--     local swa_sched = tide.optim.swa_utils.SWALR(opt, {swa_lr = 0.05})
--
-- PyTorch's attributes: anneal_epochs, anneal_func (t -> the anneal fraction at progress t,
-- read by every step, so one set later is what the next step uses) and verbose (false); the
-- class's static _cosine_anneal, _linear_anneal and _get_initial_lr. state_dict() holds
-- PyTorch's keys; anneal_func (a function) is not kept: the strategy comes from the options,
-- and a PyTorch state dict's anneal_func is skipped on load.
local compat = require("tide._compat")
local LRScheduler = require("tide.optim.lr_scheduler.LRScheduler")
local raise = require("tide.autograd").raise

local SWALR = LRScheduler:extend("SWALR",
    { "swa_lr", "anneal_epochs", "anneal_strategy", "last_epoch" }, { "anneal_epochs" })
SWALR.torch_only = { anneal_func = true }

local ANNEAL = {
    cos = function(t)
        return (1 - math.cos(math.pi * t)) / 2
    end,
    linear = function(t)
        return t
    end,
}
SWALR._cosine_anneal = ANNEAL.cos
SWALR._linear_anneal = ANNEAL.linear

function SWALR:init(opts)
    local n = #self.optimizer.param_groups
    if opts.swa_lr == nil then
        raise("tide: SWALR: option swa_lr is required (a number, or a list of " .. n ..
            " numbers, one per parameter group)")
    end
    local swa_lrs = self:per_group(opts.swa_lr, "swa_lr") -- each a number (checked there)
    local strategy = opts.anneal_strategy
    if strategy == nil then
        strategy = "cos"
    end
    if not ANNEAL[strategy] then
        raise('tide: SWALR: anneal_strategy must be "cos" or "linear", got ' ..
            tostring(strategy))
    end
    self.anneal_epochs = self:integer(opts, "anneal_epochs", 10, 0)
    local last = self:integer(opts, "last_epoch", -1, -1)
    if last ~= -1 then
        -- PyTorch's resume: the groups keep the initial_lr an earlier scheduler set
        for i, g in ipairs(self.optimizer.param_groups) do
            if g.initial_lr == nil then
                raise(string.format("tide: SWALR: last_epoch = %d needs 'initial_lr' in " ..
                    "param group %d (set when a scheduler first ran); pass last_epoch = -1 " ..
                    "to start anew", last, i))
            end
        end
    end
    self.anneal_strategy = strategy
    self.anneal_func = ANNEAL[strategy]
    self.verbose = false -- PyTorch 1.13's SWALR has no verbose parameter; its base sets False
    self._resume_epoch = last
    for i, g in ipairs(self.optimizer.param_groups) do
        g.swa_lr = swa_lrs[i]
    end
end

-- LRScheduler.new starts from last_epoch -1; a resumed one continues from last_epoch
function SWALR.new(cls, opt, opts, ...)
    local self = LRScheduler.new(cls, opt, opts, ...)
    self.last_epoch = self._resume_epoch + 1
    self._resume_epoch = nil
    return self
end

-- the lr the anneal started from, given the lr at anneal fraction alpha
local function initial_lr(lr, swa_lr, alpha)
    if alpha == 1 then
        return swa_lr
    end
    return (lr - alpha * swa_lr) / (1 - alpha)
end
SWALR._get_initial_lr = initial_lr

local function clamp01(t)
    return math.max(0, math.min(1, t))
end

function SWALR:get_lr()
    local anneal = self.anneal_func or ANNEAL[self.anneal_strategy]
    local step = self._step_count - 1
    if self.anneal_epochs == 0 then
        step = math.max(1, step)
    end
    local epochs = math.max(1, self.anneal_epochs)
    local prev_alpha = anneal(clamp01((step - 1) / epochs))
    local alpha = anneal(clamp01(step / epochs))
    local r = {}
    for i, g in ipairs(self.optimizer.param_groups) do
        local prev = initial_lr(g.lr, g.swa_lr, prev_alpha)
        r[i] = g.swa_lr * alpha + prev * (1 - alpha)
    end
    return r
end

-- anneal_epochs is checked as the option is: an integer >= 0
function SWALR:read_state_dict(sd)
    local values = LRScheduler.read_state_dict(self, sd)
    local e = values.anneal_epochs
    if compat.tointeger(e) == nil or e < 0 then
        raise("tide: SWALR:load_state_dict: 'anneal_epochs' must be an integer >= 0, got " ..
            tostring(e) .. "; pass the state dict sched:state_dict() gave")
    end
    values.anneal_epochs = compat.tointeger(e)
    return values
end

return SWALR
