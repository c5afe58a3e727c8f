-- The base of tide.optim.lr_scheduler's schedulers, PyTorch 1.13's _LRScheduler: at
-- construction each group's initial_lr is set (when absent) and kept in base_lrs, last_epoch
-- starts at -1 and one step() runs, setting the lr of epoch 0. Each step() then advances
-- last_epoch and writes get_lr()'s values into the groups' lr (the chainable forms, as
-- PyTorch's, so several schedulers on one optimizer compose the same way).
--
--     local sched = tide.optim.lr_scheduler.StepLR(opt, {step_size = 30, gamma = 0.1})
--     for epoch = 1, 100 do train(); sched:step() end
--
-- state_dict() is a flat table of tensors (tide.save writes it; see optim/flat_state.lua).
local compat = require "tide._compat"
local core = require "tide.core"
local autograd = require "tide.autograd"
local raise = autograd.raise
local flat = require "tide.optim.flat_state"

local LRScheduler = {}
LRScheduler.__index = LRScheduler

-- the state every scheduler saves, beside its class's own `saved` fields
local STATE = { "last_epoch", "_step_count", "base_lrs", "_last_lr" }

-- LRScheduler:extend(name, options, saved) -> a class; cls(opt, opts) makes a scheduler.
-- options: the option names; saved: the fields its state_dict keeps beside STATE
function LRScheduler:extend(name, options, saved)
    local cls = { __name = name, options = options, saved = saved or {} }
    cls.__index = cls
    return setmetatable(cls, {
        __index = self,
        __call = function(c, opt, opts)
            return LRScheduler.new(c, opt, opts)
        end,
    })
end

function LRScheduler.new(cls, opt, opts)
    local who = cls.__name
    if type(opt) ~= "table" or type(opt.param_groups) ~= "table" then
        raise("tide: " .. who .. ": expected an optimizer (tide.optim.SGD(...) etc.), got " ..
            type(opt))
    end
    if opts ~= nil and type(opts) ~= "table" then
        raise("tide: " .. who .. ": options must be a table, got " .. type(opts))
    end
    opts = opts or {}
    core._check_options(opts, who, cls.options)
    local self = setmetatable({ optimizer = opt }, cls)
    self:init(opts)
    for _, g in ipairs(opt.param_groups) do
        if g.initial_lr == nil then
            g.initial_lr = g.lr
        end
    end
    self.base_lrs = {}
    for i, g in ipairs(opt.param_groups) do
        self.base_lrs[i] = g.initial_lr
    end
    self.last_epoch = -1
    self._step_count = 0
    self:step()
    return self
end

function LRScheduler:init() end

-- helpers for init(): an option's value, checked
function LRScheduler:number(opts, key, default, check, expected)
    local v = opts[key]
    if v == nil then
        v = default
    end
    if v == nil then
        raise("tide: " .. self.__name .. ": option " .. key .. " is required")
    end
    if type(v) ~= "number" or (check and not check(v)) then
        raise(string.format("tide: %s: %s = %s; expected %s", self.__name, key, tostring(v),
            expected or "a number"))
    end
    return v
end

function LRScheduler:integer(opts, key, default, min)
    return self:number(opts, key, default, function(v)
        return compat.is_integer(v) and v >= min
    end, "an integer >= " .. min)
end

-- one value per group: a number for all, or a list of #groups numbers
function LRScheduler:per_group(value, key)
    local n = #self.optimizer.param_groups
    if type(value) == "number" then
        local r = {}
        for i = 1, n do
            r[i] = value
        end
        return r
    end
    if type(value) ~= "table" or #value ~= n then
        raise(string.format("tide: %s: expected %s to be a number or a list of %d numbers " ..
            "(one per parameter group), got %s", self.__name, key, n,
            type(value) == "table" and ("a list of " .. #value) or type(value)))
    end
    return value
end

function LRScheduler:get_lr()
    raise("tide: " .. self.__name .. ": get_lr is not defined")
end

function LRScheduler:step(epoch)
    if epoch ~= nil then
        raise("tide: " .. self.__name .. ":step: the epoch argument is not supported " ..
            "(deprecated in PyTorch); call step() once per epoch or batch")
    end
    self._step_count = self._step_count + 1
    self.last_epoch = self.last_epoch + 1
    local lrs = self:get_lr()
    local last = {}
    for i, g in ipairs(self.optimizer.param_groups) do
        g.lr = lrs[i]
        last[i] = lrs[i]
    end
    self._last_lr = last
end

-- the learning rates of the groups as the last step() set them (a fresh list)
function LRScheduler:get_last_lr()
    return compat.move(self._last_lr, 1, #self._last_lr, 1, {})
end

function LRScheduler:state_dict()
    local sd = {}
    for _, list in ipairs({ STATE, self.saved }) do
        for _, k in ipairs(list) do
            sd[k] = flat.encode(self[k])
        end
    end
    return sd
end

function LRScheduler:load_state_dict(sd)
    local who = self.__name .. ":load_state_dict"
    if type(sd) ~= "table" then
        raise("tide: " .. who .. ": expected a state dict (sched:state_dict() or tide.load's " ..
            "table), got " .. type(sd))
    end
    local values = {}
    for _, list in ipairs({ STATE, self.saved }) do
        for _, k in ipairs(list) do
            if sd[k] == nil then
                raise("tide: " .. who .. ": the state dict lacks '" .. k .. "'")
            end
            values[k] = flat.decode(sd[k], who, k)
        end
    end
    for k, v in pairs(values) do
        self[k] = v
    end
end

return LRScheduler
