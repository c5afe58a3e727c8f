-- SequentialLR(opt, schedulers, milestones): PyTorch 1.13's. The schedulers (built on opt) take
-- turns: the first until epoch milestones[1], the second until milestones[2], ... Each one
-- starts from its own epoch 0 at its milestone (PyTorch's step(0): the schedule's closed form
-- where it has one), and the groups' lr starts from initial_lr.
--
--     local warm = lr_scheduler.LinearLR(opt, {start_factor = 0.1, total_iters = 5})
--     local decay = lr_scheduler.CosineAnnealingLR(opt, {T_max = 95})
--     local s = lr_scheduler.SequentialLR(opt, {warm, decay}, {5})
--
-- state_dict(): PyTorch's keys (_milestones, last_epoch, _last_lr) and _schedulers, the list of
-- the schedulers' own state dicts (lr_scheduler.to_tensors(sd) flattens it for tide.save).
local compat = require("tide._compat")
local class = require("tide._class")
local args = require("tide.op_args")
local raise = require("tide.autograd").raise
local LRScheduler = require("tide.optim.lr_scheduler.LRScheduler")
local flat = require("tide.optim.flat_state")

local SequentialLR = { __name = "SequentialLR" }
SequentialLR.__index = SequentialLR

local KEYS = { "_milestones", "last_epoch", "_last_lr" }

-- a list of schedulers of one optimizer (`opt`, else the first's), checked for `who`
local NAMES = { "schedulers", "milestones", "last_epoch", "verbose" }

function SequentialLR.check_schedulers(who, schedulers, opt)
    if type(schedulers) ~= "table" or getmetatable(schedulers) ~= nil or #schedulers == 0 then
        raise(string.format("tide: %s: expected a list of schedulers such as {warmup, decay}, " ..
            "got %s", who, type(schedulers) == "table" and (getmetatable(schedulers) and
            "a scheduler (put it in a list)" or "an empty list") or type(schedulers)))
    end
    opt = opt or (type(schedulers[1]) == "table" and schedulers[1].optimizer)
    for i, s in ipairs(schedulers) do
        if type(s) ~= "table" or type(s.step) ~= "function" or s.optimizer == nil then
            raise(string.format("tide: %s: scheduler %d is a %s, expected a scheduler of " ..
                "tide.optim.lr_scheduler", who, i, type(s)))
        end
        if not rawequal(s.optimizer, opt) then
            raise(string.format("tide: %s: scheduler %d belongs to another optimizer than %s; " ..
                "build every scheduler on the same optimizer", who, i,
                who == "SequentialLR" and "the one given" or "scheduler 1"))
        end
    end
    return opt
end

-- SequentialLR(optimizer, schedulers, milestones[, last_epoch[, verbose]]), any of them after
-- the optimizer by name in a trailing table (PyTorch 1.13's keywords), or all in one table
function SequentialLR.new(opt, ...)
    local who = "SequentialLR"
    local named, rest = LRScheduler.named_optimizer(who, opt, select("#", ...))
    if named then
        opt = named
    else
        rest = require("tide.pytorch_args").merge(who, NAMES, ...)
    end
    rest = args.options(who, rest, NAMES)
    if rest.last_epoch ~= nil and rest.last_epoch ~= -1 then
        raise(("tide: %s: last_epoch = %s: a schedule resumes from its state_dict " ..
            "(scheduler:load_state_dict(sd)); last_epoch = -1, PyTorch's default, starts it")
            :format(who, tostring(rest.last_epoch)))
    end
    local schedulers, milestones = rest.schedulers, rest.milestones
    LRScheduler.check_optimizer(who, opt)
    SequentialLR.check_schedulers(who, schedulers, opt)
    for i, s in ipairs(schedulers) do
        if type(s._step_at) ~= "function" then
            raise(string.format("tide: %s: scheduler %d (%s) cannot be sequenced: its step " ..
                "takes no epoch (PyTorch's SequentialLR cannot hold it either)", who, i,
                tostring(s.__name)))
        end
    end
    if type(milestones) ~= "table" or #milestones ~= #schedulers - 1 then
        raise(string.format("tide: %s: expected %d milestone%s (one fewer than the %d " ..
            "schedulers), got %s", who, #schedulers - 1, #schedulers == 2 and "" or "s",
            #schedulers, type(milestones) == "table" and #milestones or type(milestones)))
    end
    local given = milestones
    milestones = {}
    for i = 1, #given do
        -- an integral float (5.0) is that epoch
        local m = type(given[i]) == "number" and compat.tointeger(given[i]) or nil
        if m == nil or (i > 1 and m < milestones[i - 1]) then
            raise(string.format("tide: %s: milestone %d is %s; expected increasing integer " ..
                "epochs", who, i, tostring(given[i])))
        end
        milestones[i] = m
    end
    local self = setmetatable({ optimizer = opt, _schedulers = compat.move(schedulers, 1,
        #schedulers, 1, {}), _milestones = compat.move(milestones, 1, #milestones, 1, {}),
        last_epoch = 0 }, SequentialLR)
    -- PyTorch's start: the groups back at initial_lr, the step each scheduler made at its
    -- construction undone, then the first scheduler's initial step alone
    for _, g in ipairs(opt.param_groups) do
        g.lr = g.initial_lr
    end
    for _, s in ipairs(schedulers) do
        s.last_epoch = s.last_epoch - 1
    end
    local first = schedulers[1]
    first._step_count = 0
    first:step()
    self._last_lr = first:get_last_lr()
    return self
end

class.callable(SequentialLR)

-- step(epoch) of a scheduler that drives others (SequentialLR, ChainedScheduler): refused
function SequentialLR.check_no_epoch(who, epoch)
    if epoch ~= nil then
        raise("tide: " .. who .. ":step: the epoch argument is not supported; call step() " ..
            "once per epoch or batch")
    end
end

function SequentialLR:step(epoch)
    SequentialLR.check_no_epoch("SequentialLR", epoch)
    self.last_epoch = self.last_epoch + 1
    local e, ms = self.last_epoch, self._milestones
    local idx = 0 -- bisect_right: the milestones <= e
    while idx < #ms and ms[idx + 1] <= e do
        idx = idx + 1
    end
    local s = self._schedulers[idx + 1]
    if idx > 0 and ms[idx] == e then
        s:_step_at(0)
    else
        s:step()
    end
    self._last_lr = s:get_last_lr()
end

function SequentialLR:get_last_lr()
    return compat.move(self._last_lr, 1, #self._last_lr, 1, {})
end

function SequentialLR:state_dict()
    local sd = {}
    for _, k in ipairs(self.keys) do
        sd[k] = LRScheduler.copy_value(self[k])
    end
    sd._schedulers = {}
    for i, s in ipairs(self._schedulers) do
        sd._schedulers[i] = s:state_dict()
    end
    return sd
end

-- every part checked (the schedulers' too) before anything changes
function SequentialLR:read_state_dict(sd)
    local who = self.__name .. ":load_state_dict"
    local own, subs = {}, nil
    if type(sd) == "table" then
        -- tide.load's flat form: the schedulers' parts under "_schedulers.<i>.<key>"
        subs = sd._schedulers or flat.nested(sd, "_schedulers")
        for k, v in pairs(sd) do
            if k ~= "_schedulers" and not tostring(k):match("^_schedulers%.") then
                own[k] = v
            end
        end
    end
    local values = LRScheduler.read_state(who, type(sd) == "table" and own or sd, self.keys,
        #self.optimizer.param_groups)
    local n = #self._schedulers
    if type(subs) ~= "table" or #subs ~= n then
        raise(string.format("tide: %s: '_schedulers' must be a list of %d state dicts (one " ..
            "per scheduler), got %s", who, n, type(subs) == "table" and ("a list of " .. #subs)
            or subs == nil and "none" or type(subs)))
    end
    if values._milestones and #values._milestones ~= #self._milestones then
        raise(string.format("tide: %s: '_milestones' has %d entries; this %s has %d", who,
            #values._milestones, self.__name, #self._milestones))
    end
    local parts = {}
    for i, s in ipairs(self._schedulers) do
        parts[i] = s:read_state_dict(subs[i])
    end
    return { own = values, parts = parts }
end

function SequentialLR:apply_state(values)
    for k, v in pairs(values.own) do
        self[k] = v
    end
    for i, s in ipairs(self._schedulers) do
        s:apply_state(values.parts[i])
    end
end

function SequentialLR:load_state_dict(sd)
    self:apply_state(self:read_state_dict(sd))
end

SequentialLR.keys = KEYS

return SequentialLR
