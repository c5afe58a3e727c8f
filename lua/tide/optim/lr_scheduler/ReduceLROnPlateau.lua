-- ReduceLROnPlateau(opt[, {mode = "min", factor = 0.1, patience = 10, threshold = 1e-4,
-- threshold_mode = "rel", cooldown = 0, min_lr = 0, eps = 1e-8, verbose = false}]): PyTorch
-- 1.13's. step(metric) once per epoch with the monitored value (a number or a one-element
-- tensor); after more than `patience` epochs without an improvement (by `threshold`, relative
-- or absolute) each group's lr becomes max(lr * factor, min_lr), unless that changes it by eps
-- or less, and `cooldown` epochs pass before bad epochs count again.
--
--     local s = lr_scheduler.ReduceLROnPlateau(opt, {patience = 2})
--     for epoch = 1, n do train(); s:step(validate()) end
--
-- Not a chainable scheduler (as in PyTorch): it keeps no base_lrs, and SequentialLR cannot hold
-- it. state_dict() holds PyTorch's keys (best, num_bad_epochs, cooldown_counter, ...).
local compat = require("tide._compat")
local class = require("tide._class")
local args = require("tide.op_args")
local autograd = require("tide.autograd")
local raise = autograd.raise
local LRScheduler = require("tide.optim.lr_scheduler.LRScheduler")
local merge_positional = require("tide.pytorch_args").merge

local ReduceLROnPlateau = { __name = "ReduceLROnPlateau" }
ReduceLROnPlateau.__index = ReduceLROnPlateau
-- the option checks of the other schedulers
ReduceLROnPlateau.number, ReduceLROnPlateau.integer = LRScheduler.number, LRScheduler.integer
ReduceLROnPlateau.per_group = LRScheduler.per_group

local OPTIONS = { "mode", "factor", "patience", "threshold", "threshold_mode", "cooldown",
    "min_lr", "eps", "verbose" }

-- the state dict's keys, PyTorch's (its _last_lr appears after the first step)
local KEYS = { "factor", "min_lrs", "patience", "verbose", "cooldown", "cooldown_counter", "mode",
    "threshold", "threshold_mode", "best", "num_bad_epochs", "mode_worse", "eps", "last_epoch",
    "_last_lr" }
local OPTIONAL = { _last_lr = true }

local function check_modes(who, mode, threshold_mode)
    if mode ~= "min" and mode ~= "max" then
        raise(string.format('tide: %s: mode = %s; expected "min" or "max"', who, tostring(mode)))
    end
    if threshold_mode ~= "rel" and threshold_mode ~= "abs" then
        raise(string.format('tide: %s: threshold_mode = %s; expected "rel" or "abs"', who,
            tostring(threshold_mode)))
    end
end

-- (opt, mode, factor, patience, ...) too: PyTorch's positional parameters, OPTIONS' order
function ReduceLROnPlateau.new(opt, ...)
    local who = "ReduceLROnPlateau"
    local named, opts = LRScheduler.named_optimizer(who, opt, select("#", ...))
    if named then
        opt = named
    else
        opts = merge_positional(who, OPTIONS, ...)
    end
    LRScheduler.check_optimizer(who, opt)
    opts = args.options(who, opts, OPTIONS, "{patience = 5}")
    local self = setmetatable({ optimizer = opt }, ReduceLROnPlateau)
    self.factor = self:number(opts, "factor", 0.1, function(v)
        return v < 1
    end, "a number < 1")
    local n = #opt.param_groups
    local min_lr = opts.min_lr == nil and 0 or opts.min_lr
    if type(min_lr) == "table" then
        if #min_lr ~= n then
            raise(string.format("tide: %s: expected min_lr to be a number or a list of %d " ..
                "numbers (one per parameter group), got a list of %d", who, n, #min_lr))
        end
        self.min_lrs = compat.move(min_lr, 1, n, 1, {})
    else
        self.min_lrs = self:per_group(self:number(opts, "min_lr", 0), "min_lr")
    end
    for i = 1, n do
        if type(self.min_lrs[i]) ~= "number" then
            raise(string.format("tide: %s: min_lr %d is a %s, expected a number", who, i,
                type(self.min_lrs[i])))
        end
    end
    self.patience = self:integer(opts, "patience", 10, 0)
    self.verbose = opts.verbose and true or false
    self.cooldown = self:integer(opts, "cooldown", 0, 0)
    self.cooldown_counter = 0
    self.mode = opts.mode == nil and "min" or opts.mode
    self.threshold = self:number(opts, "threshold", 1e-4)
    self.threshold_mode = opts.threshold_mode == nil and "rel" or opts.threshold_mode
    check_modes(who, self.mode, self.threshold_mode)
    self.eps = self:number(opts, "eps", 1e-8)
    self.last_epoch = 0
    self.mode_worse = self.mode == "min" and math.huge or -math.huge
    self.best = self.mode_worse
    self.num_bad_epochs = 0
    return self
end

class.callable(ReduceLROnPlateau)

function ReduceLROnPlateau:is_better(a, best)
    local t = self.threshold
    if self.mode == "min" then
        return self.threshold_mode == "rel" and a < best * (1 - t) or
            self.threshold_mode == "abs" and a < best - t
    end
    return self.threshold_mode == "rel" and a > best * (t + 1) or
        self.threshold_mode == "abs" and a > best + t
end

function ReduceLROnPlateau:step(metric, epoch)
    local who = "ReduceLROnPlateau:step"
    if epoch ~= nil then
        raise("tide: " .. who .. ": the epoch argument is not supported (deprecated in " ..
            "PyTorch); call step(metric) once per epoch")
    end
    if autograd.is_tensor(metric) then
        if metric:numel() ~= 1 then
            raise(string.format("tide: %s: expected the metric as a number or a one-element " ..
                "tensor, got a tensor of %d elements", who, metric:numel()))
        end
        if metric.dtype == "bool" then -- item() would give a Lua boolean
            raise("tide: " .. who .. ": expected the metric as a number or a one-element " ..
                "tensor of numbers, got a bool tensor")
        end
        metric = metric:item()
    elseif type(metric) ~= "number" then
        raise("tide: " .. who .. ": expected the metric as a number (such as the validation " ..
            "loss), got " .. type(metric))
    end
    metric = metric + 0.0 -- PyTorch's float(metrics): best is a float (5.4's 1 is 1.0)
    self.last_epoch = self.last_epoch + 1
    if self:is_better(metric, self.best) then
        self.best = metric
        self.num_bad_epochs = 0
    else
        self.num_bad_epochs = self.num_bad_epochs + 1
    end
    if self.cooldown_counter > 0 then
        self.cooldown_counter = self.cooldown_counter - 1
        self.num_bad_epochs = 0 -- bad epochs in cooldown do not count
    end
    if self.num_bad_epochs > self.patience then
        for i, g in ipairs(self.optimizer.param_groups) do
            local old = g.lr
            local new = math.max(old * self.factor, self.min_lrs[i])
            if old - new > self.eps then
                g.lr = new
                if self.verbose then
                    print(string.format("Epoch %05d: reducing learning rate of group %d to %.4e.",
                        self.last_epoch, i - 1, new))
                end
            end
        end
        self.cooldown_counter = self.cooldown
        self.num_bad_epochs = 0
    end
    local last = {}
    for i, g in ipairs(self.optimizer.param_groups) do
        last[i] = g.lr
    end
    self._last_lr = last
end

-- the groups' lr as the last step left them (their current lr before any step)
function ReduceLROnPlateau:get_last_lr()
    local r = {}
    for i, g in ipairs(self.optimizer.param_groups) do
        r[i] = self._last_lr and self._last_lr[i] or g.lr
    end
    return r
end

function ReduceLROnPlateau:state_dict()
    local sd = {}
    for _, k in ipairs(KEYS) do
        sd[k] = LRScheduler.copy_value(self[k])
    end
    return sd
end

function ReduceLROnPlateau:read_state_dict(sd)
    local who = "ReduceLROnPlateau:load_state_dict"
    local values = LRScheduler.read_state(who, sd, KEYS, #self.optimizer.param_groups, OPTIONAL)
    check_modes(who, values.mode, values.threshold_mode)
    return values
end

function ReduceLROnPlateau:apply_state(values)
    self._last_lr = nil
    LRScheduler.apply_state(self, values)
end

ReduceLROnPlateau.load_state_dict = LRScheduler.load_state_dict

function ReduceLROnPlateau:__tostring()
    return string.format("ReduceLROnPlateau(mode=%s, factor=%s, patience=%d)", self.mode,
        tostring(self.factor), self.patience)
end

return ReduceLROnPlateau
