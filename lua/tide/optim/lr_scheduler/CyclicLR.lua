-- CyclicLR(opt, {base_lr =, max_lr =, step_size_up = 2000, step_size_down = step_size_up,
-- mode = "triangular" | "triangular2" | "exp_range", gamma = 1, scale_fn =, scale_mode =
-- "cycle" | "iterations", cycle_momentum = true, base_momentum = 0.8, max_momentum = 0.9}):
-- PyTorch 1.13's cyclical learning rate, stepped once per batch. The lr climbs from base_lr to
-- max_lr over step_size_up steps and back over step_size_down, its amplitude scaled per cycle
-- (triangular: 1, triangular2: halved each cycle) or per iteration (exp_range: gamma^step), or
-- by scale_fn(cycle or step) with scale_mode; with cycle_momentum the momentum moves the other
-- way between max_momentum and base_momentum. base_lr, max_lr and the momenta may be lists,
-- one per group. At construction each group's lr is set to base_lr (and its momentum to
-- base_momentum). Its state_dict keeps the epoch; the rest comes from the options.
local LRScheduler = require("tide.optim.lr_scheduler.LRScheduler")
local raise = require("tide.autograd").raise

local CyclicLR = LRScheduler:extend("CyclicLR", {
    "base_lr", "max_lr", "step_size_up", "step_size_down", "mode", "gamma", "scale_fn",
    "scale_mode", "cycle_momentum", "base_momentum", "max_momentum",
})
-- PyTorch's state dict also keeps what tide rebuilds from the options
CyclicLR.torch_only = { max_lrs = true, total_size = true, step_ratio = true, mode = true,
    gamma = true, _scale_fn_custom = true, _scale_fn_ref = true, scale_mode = true,
    cycle_momentum = true, base_momentums = true, max_momentums = true }

local MODES = {
    triangular = { "cycle", function() return 1.0 end },
    triangular2 = { "cycle", function(_, x) return 1 / (2.0 ^ (x - 1)) end },
    exp_range = { "iterations", function(self, x) return self.gamma ^ x end },
}

local function positive(self, opts, key, default)
    return self:number(opts, key, default, function(v) return v > 0 end, "a number > 0")
end

function CyclicLR:init(opts)
    local groups = self.optimizer.param_groups
    local base_lrs = self:per_group(opts.base_lr == nil and self:number(opts, "base_lr") or
        opts.base_lr, "base_lr")
    self.max_lrs = self:per_group(opts.max_lr == nil and self:number(opts, "max_lr") or
        opts.max_lr, "max_lr")
    local up = positive(self, opts, "step_size_up", 2000)
    local down = opts.step_size_down == nil and up or positive(self, opts, "step_size_down")
    self.total_size = up + down + 0.0 -- a float, as PyTorch's float(step_size_up) + ...
    self.step_ratio = up / self.total_size
    self.gamma = self:number(opts, "gamma", 1.0)
    self.mode = opts.mode or "triangular" -- PyTorch's attribute (scale_fn, if given, wins)
    local fn = opts.scale_fn
    if fn ~= nil then
        if type(fn) ~= "function" then
            raise("tide: CyclicLR: expected scale_fn to be a function, got " .. type(fn))
        end
        local mode = opts.scale_mode or "cycle"
        if mode ~= "cycle" and mode ~= "iterations" then
            raise('tide: CyclicLR: scale_mode must be "cycle" or "iterations", got ' ..
                (type(mode) == "string" and '"' .. mode .. '"' or type(mode)))
        end
        self.scale_mode = mode
        self.scale = function(_, x) return fn(x) end
    else
        local mode = opts.mode or "triangular"
        local m = MODES[mode]
        if not m then
            raise('tide: CyclicLR: mode must be "triangular", "triangular2" or "exp_range" ' ..
                "(or give scale_fn), got " ..
                (type(mode) == "string" and '"' .. mode .. '"' or type(mode)))
        end
        self.scale_mode, self.scale = m[1], m[2]
    end
    if opts.cycle_momentum ~= nil and type(opts.cycle_momentum) ~= "boolean" then
        raise("tide: CyclicLR: expected cycle_momentum to be a boolean, got " ..
            type(opts.cycle_momentum))
    end
    self.cycle_momentum = opts.cycle_momentum ~= false
    local base_m
    if self.cycle_momentum then
        local defaults = self.optimizer.defaults
        if type(defaults) ~= "table" or defaults.momentum == nil then
            raise(string.format("tide: CyclicLR: the optimizer has no momentum to cycle (%s); " ..
                "pass cycle_momentum = false", tostring(self.optimizer.__name)))
        end
        base_m = self:per_group(opts.base_momentum == nil and 0.8 or opts.base_momentum,
            "base_momentum")
        self.max_momentums = self:per_group(opts.max_momentum == nil and 0.9 or
            opts.max_momentum, "max_momentum")
    end
    -- every option checked: now the groups start at base_lr (and base_momentum)
    for i, g in ipairs(groups) do
        g.lr = base_lrs[i]
        if base_m then
            g.momentum = base_m[i]
        end
    end
    if base_m then
        self.base_momentums = {}
        for i, g in ipairs(groups) do
            self.base_momentums[i] = g.momentum
        end
    end
    self.cyclic_base_lrs = base_lrs
end

-- PyTorch's order: the base scheduler's construction (its first step from each group's
-- initial_lr), then base_lrs set to base_lr
function CyclicLR.new(cls, opt, opts)
    local self = LRScheduler.new(cls, opt, opts)
    local b = {}
    for i, v in ipairs(self.cyclic_base_lrs) do
        b[i] = v
    end
    self.base_lrs = b
    return self
end

function CyclicLR:get_lr()
    local e = self.last_epoch
    local cycle = math.floor(1 + e / self.total_size)
    local x = 1.0 + e / self.total_size - cycle
    local scale_factor
    if x <= self.step_ratio then
        scale_factor = x / self.step_ratio
    else
        scale_factor = (x - 1) / (self.step_ratio - 1)
    end
    local at = self.scale_mode == "cycle" and cycle or e
    local lrs = {}
    for i, base in ipairs(self.base_lrs) do
        local s = self:scale(at)
        if type(s) ~= "number" then
            raise("tide: CyclicLR: scale_fn returned a " .. type(s) .. " for " .. at ..
                ", expected a number")
        end
        lrs[i] = base + (self.max_lrs[i] - base) * scale_factor * s
    end
    if self.cycle_momentum then
        for i, g in ipairs(self.optimizer.param_groups) do
            local base_height = (self.max_momentums[i] - self.base_momentums[i]) * scale_factor
            g.momentum = self.max_momentums[i] - base_height * self:scale(at)
        end
    end
    return lrs
end

return CyclicLR
