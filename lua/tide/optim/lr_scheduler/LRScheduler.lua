-- The base of tide.optim.lr_scheduler's schedulers, PyTorch 1.13's _LRScheduler: at
-- construction each group's initial_lr is set (when absent) and kept in base_lrs, last_epoch
-- starts at -1 and one step() runs, setting the lr of epoch 0. Each step() then advances
-- last_epoch and writes get_lr()'s values into the groups' lr (the chainable forms, as
-- PyTorch's, so several schedulers on one optimizer compose the same way).
--
--     local sched = tide.optim.lr_scheduler.StepLR(opt, {step_size = 30, gamma = 0.1})
--     for epoch = 1, 100 do train(); sched:step() end
--
-- state_dict() holds PyTorch's keys and plain Lua values (last_epoch a number, base_lrs and
-- _last_lr lists of numbers), so a PyTorch scheduler's state dict written as a Lua table
-- loads. tide.save writes lr_scheduler.to_tensors(sd) (the values as 0-d and 1-d tensors,
-- nested state dicts under dotted names), and load_state_dict takes tide.load's table back.
-- load_state_dict checks every value's type before it changes anything, and names the key at
-- fault.
local compat = require("tide._compat")
local merge_positional = require("tide.pytorch_args").merge
local args = require("tide.op_args")
local autograd = require("tide.autograd")
local raise = autograd.raise
local is_tensor = autograd.is_tensor
local flat = require("tide.optim.flat_state")

local LRScheduler = {}
LRScheduler.__index = LRScheduler

-- the state every scheduler saves, beside its class's own `saved` fields
local STATE = { "last_epoch", "_step_count", "base_lrs", "_last_lr" }

-- the kind of each value a scheduler's state dict holds, by PyTorch's key ("lrs": a list of
-- numbers, one per parameter group)
local KIND = {
    last_epoch = "integer", _step_count = "integer", base_lrs = "lrs", _last_lr = "lrs",
    step_size = "integer", gamma = "number", milestones = "integers", T_max = "integer",
    eta_min = "number", start_factor = "number", end_factor = "number", total_iters = "integer",
    total_steps = "integer", T_0 = "integer", T_i = "integer", T_mult = "integer",
    T_cur = "number", _milestones = "integers",
    factor = "number", min_lrs = "lrs", patience = "integer", verbose = "boolean",
    cooldown = "integer", cooldown_counter = "integer", mode = "string", threshold = "number",
    threshold_mode = "string", best = "number", num_bad_epochs = "integer",
    mode_worse = "number", eps = "number",
}

-- the keys of PyTorch's state dicts that tide keeps no value for: loading skips them
local TORCH_ONLY = { verbose = true, _get_lr_called_within_step = true }

local EXPECTED = {
    integer = "an integer", number = "a number", integers = "a list of integers",
    boolean = "a boolean", string = "a string",
}

local function described(v)
    if v ~= v then
        return "nan"
    elseif is_tensor(v) then
        return "a tensor"
    end
    return "a " .. type(v)
end

-- the value v of key k checked against the key's kind (a 0-d or 1-d tensor, as tide.load gives
-- it, decoded first) and returned as the scheduler keeps it; raises naming the key
function LRScheduler.check_value(who, k, v, ngroups)
    local kind = KIND[k] or "number"
    if is_tensor(v) and kind == "string" then
        v = flat.decode_string(v) or v -- to_tensors' bytes
    elseif is_tensor(v) and v:dim() <= 1 then
        v = flat.decode(v, who, k)
    end
    local function fail(got)
        local want = EXPECTED[kind] or string.format("a list of %d number%s (one per " ..
            "parameter group)", ngroups, ngroups == 1 and "" or "s")
        raise(string.format("tide: %s: '%s' must be %s, got %s; pass the state dict " ..
            "sched:state_dict() gave", who, k, want, got))
    end
    if kind == "integer" or kind == "number" then
        if type(v) ~= "number" or v ~= v then
            fail(described(v))
        end
        if kind == "integer" then
            local i = compat.tointeger(v)
            if i == nil then
                fail(tostring(v))
            end
            v = i
        end
        return v
    elseif kind == "boolean" or kind == "string" then
        if type(v) ~= kind then
            fail(described(v))
        end
        return v
    end
    -- a list: "integers" or "lrs"
    if type(v) ~= "table" then
        fail(described(v))
    end
    local n = #v
    if kind == "lrs" and n ~= ngroups then
        fail("a list of " .. n)
    end
    for key in pairs(v) do
        if not (compat.is_integer(key) and key >= 1 and key <= n) then
            fail("a table with the key " .. tostring(key) .. ", not a list")
        end
    end
    local out = {}
    for i = 1, n do
        local x = v[i]
        if type(x) ~= "number" or x ~= x then
            fail(described(x) .. " at position " .. i)
        end
        if kind == "integers" then
            x = compat.tointeger(x)
            if x == nil then
                fail(tostring(v[i]) .. " at position " .. i)
            end
        end
        out[i] = x
    end
    return out
end

-- the checked values of `keys` in sd (each required unless `optional` lists it); any other key
-- raises, except PyTorch's own (TORCH_ONLY, and the class's `torch_only`). The first half of a
-- load: nothing has changed yet
function LRScheduler.read_state(who, sd, keys, ngroups, optional, torch_only)
    if type(sd) ~= "table" then
        raise("tide: " .. who .. ": expected a state dict (sched:state_dict(), tide.load's " ..
            "table or PyTorch's as a Lua table), got " .. (is_tensor(sd) and "a tensor" or
            type(sd)))
    end
    local values, known = {}, {}
    for _, k in ipairs(keys) do
        known[k] = true
        local v = sd[k]
        if v == nil then
            if not (optional and optional[k]) then
                raise("tide: " .. who .. ": the state dict lacks '" .. k .. "'")
            end
        else
            values[k] = LRScheduler.check_value(who, k, v, ngroups)
        end
    end
    for k in pairs(sd) do
        if not known[k] and not TORCH_ONLY[k] and not (torch_only and torch_only[k]) then
            raise(string.format("tide: %s: unexpected key '%s'; a %s state dict has %s", who,
                tostring(k), who:match("^[^:]*"), table.concat(keys, ", ")))
        end
    end
    return values
end

-- a state value as a state dict holds it: lists copied, not shared with the scheduler
function LRScheduler.copy_value(v)
    if type(v) == "table" then
        return compat.move(v, 1, #v, 1, {})
    end
    return v
end

-- LRScheduler:extend(name, options, saved) -> a class; cls(opt, opts) makes a scheduler.
-- options: the option names, in torch 1.13's order of its parameters after the optimizer, so
-- that they are also the positional ones: StepLR(opt, 30, 0.1) is StepLR(opt, {step_size = 30,
-- gamma = 0.1}) (tide.pytorch_args.merge); saved: the fields its state_dict keeps beside STATE
function LRScheduler:extend(name, options, saved)
    -- PyTorch's last two parameters of every scheduler, last_epoch (-1) and verbose, unless the
    -- class reads last_epoch itself (SWALR resumes from one, and has no verbose)
    local all, has = {}, {}
    for i, k in ipairs(options) do
        all[i], has[k] = k, true
    end
    local generic = not has.last_epoch
    if generic then
        all[#all + 1], all[#all + 2] = "last_epoch", "verbose"
    end
    local cls = { __name = name, options = all, saved = saved or {},
        _generic_last_epoch = generic, _generic_verbose = generic }
    cls.__index = cls
    return setmetatable(cls, {
        __index = self,
        __call = function(c, opt, ...)
            local named, rest = LRScheduler.named_optimizer(c.__name, opt, select("#", ...))
            if named then
                return c.new(c, named, rest)
            end
            return c.new(c, opt, merge_positional(c.__name, c.options, ...))
        end,
    })
end

-- PyTorch's StepLR(optimizer=opt, step_size=2), every argument by name, is one table in Lua:
-- StepLR({optimizer = opt, step_size = 2}). Returns its optimizer and the other names as the
-- options; nil when opt is not such a table (an optimizer has param_groups, that table has not)
function LRScheduler.named_optimizer(who, opt, nextra)
    if type(opt) ~= "table" or opt.param_groups ~= nil or opt.optimizer == nil then
        return nil
    end
    if nextra > 0 then
        raise(string.format("tide: %s: the optimizer came by name in a table and %d more " ..
            "argument(s) followed it; put them all in that table: %s({optimizer = opt, ...})",
            who, nextra, who))
    end
    local rest = {}
    for k, v in pairs(opt) do
        if k ~= "optimizer" then
            rest[k] = v
        end
    end
    return opt.optimizer, rest
end

-- checks opt, an optimizer, for the scheduler `who`
function LRScheduler.check_optimizer(who, opt)
    if type(opt) ~= "table" or type(opt.param_groups) ~= "table" then
        raise("tide: " .. who .. ": expected an optimizer (tide.optim.SGD(...) etc.), got " ..
            type(opt))
    end
end

-- extra arguments go to init after opts
function LRScheduler.new(cls, opt, opts, ...)
    local who = cls.__name
    LRScheduler.check_optimizer(who, opt)
    opts = args.options(who, opts, cls.options)
    if cls._generic_last_epoch and opts.last_epoch ~= nil and opts.last_epoch ~= -1 then
        raise(("tide: %s: last_epoch = %s: a schedule resumes from its state_dict " ..
            "(scheduler:load_state_dict(sd)); last_epoch = -1, PyTorch's default, starts it")
            :format(who, tostring(opts.last_epoch)))
    end
    if cls._generic_verbose and opts.verbose ~= nil and type(opts.verbose) ~= "boolean" then
        raise(("tide: %s: verbose must be true or false, got %s"):format(who,
            type(opts.verbose)))
    end
    local self = setmetatable({ optimizer = opt }, cls)
    if cls._generic_verbose then
        self.verbose = opts.verbose == true
    end
    self:init(opts, ...)
    -- the groups as they were: the first step can still fail (a lr_lambda returning nil), and a
    -- failed construction leaves the optimizer as it found it
    local before = {}
    for i, g in ipairs(opt.param_groups) do
        before[i] = { lr = g.lr, initial_lr = g.initial_lr }
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
    local ok, err = pcall(self.step, self)
    if not ok then
        for i, g in ipairs(opt.param_groups) do
            g.lr, g.initial_lr = before[i].lr, before[i].initial_lr
        end
        error(err, 0)
    end
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

-- an integral float (StepLR(opt, 1.0), a ported Python computation's value) is that integer
function LRScheduler:integer(opts, key, default, min)
    return compat.tointeger(self:number(opts, key, default, function(v)
        local i = compat.tointeger(v) -- v is a number (checked first)
        return i ~= nil and i >= min
    end, "an integer >= " .. min))
end

-- one value per group: a number for all, or a list of #groups numbers (each checked: a NaN or
-- a non-number raises, naming its position)
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
    for i = 1, n do
        if type(value[i]) ~= "number" or value[i] ~= value[i] then
            raise(string.format("tide: %s: expected %s to be a number or a list of numbers, " ..
                "got %s at position %d", self.__name, key,
                value[i] ~= value[i] and "nan" or type(value[i]), i))
        end
    end
    return value
end

function LRScheduler:get_lr()
    raise("tide: " .. self.__name .. ": get_lr is not defined")
end

-- writes lrs into the groups' lr and keeps a copy as _last_lr: the first #lrs groups, as
-- PyTorch's zip pairs them (a group added later by add_param_group keeps its own lr)
function LRScheduler:set_lrs(lrs)
    local last = {}
    for i, g in ipairs(self.optimizer.param_groups) do
        if lrs[i] == nil then
            break
        end
        g.lr = lrs[i]
        last[i] = lrs[i]
        if self.verbose == true and self._generic_verbose then -- PyTorch 1.13's print_lr
            print(("Adjusting learning rate of group %d to %.4e."):format(i, lrs[i]))
        end
    end
    self._last_lr = last
end

-- set_lrs(get_lr()) over the groups this scheduler was made with: get_lr runs with the
-- optimizer's groups cut to those (PyTorch zips its lists with the groups), so a group added by
-- opt:add_param_group afterwards keeps its own lr instead of breaking the step
function LRScheduler:update_lrs()
    local opt, n = self.optimizer, #self.base_lrs
    local all = opt.param_groups
    if #all <= n then
        return self:set_lrs(self:get_lr())
    end
    opt.param_groups = compat.move(all, 1, n, 1, {})
    local ok, lrs = pcall(self.get_lr, self)
    opt.param_groups = all
    if not ok then
        error(lrs, 0)
    end
    self:set_lrs(lrs)
end

function LRScheduler:step(epoch)
    if epoch ~= nil then
        raise("tide: " .. self.__name .. ":step: the epoch argument is not supported " ..
            "(deprecated in PyTorch); call step() once per epoch or batch")
    end
    self._step_count = self._step_count + 1
    self.last_epoch = self.last_epoch + 1
    self:update_lrs()
end

-- PyTorch's step(epoch), which SequentialLR calls at a milestone (epoch 0): the schedule's
-- closed form at that epoch where the class has one (PyTorch's _get_closed_form_lr:
-- closed_lr(base), a group's lr from its base lr), else get_lr()
function LRScheduler:_step_at(epoch)
    self._step_count = self._step_count + 1
    self.last_epoch = epoch
    local lrs
    if not self.closed_lr then
        return self:update_lrs()
    end
    lrs = {}
    for i, base in ipairs(self.base_lrs) do
        lrs[i] = self:closed_lr(base)
    end
    self:set_lrs(lrs)
end

-- the learning rates of the groups as the last step() set them (a fresh list)
function LRScheduler:get_last_lr()
    return compat.move(self._last_lr, 1, #self._last_lr, 1, {})
end

-- the keys of this scheduler's state dict
function LRScheduler:state_keys()
    local keys = compat.move(STATE, 1, #STATE, 1, {})
    return compat.move(self.saved, 1, #self.saved, #keys + 1, keys)
end

function LRScheduler:state_dict()
    local sd = {}
    for _, k in ipairs(self:state_keys()) do
        sd[k] = LRScheduler.copy_value(self[k])
    end
    return sd
end

-- the checked values of sd; nothing changes until apply_state (SequentialLR and
-- ChainedScheduler check every scheduler's part before they apply any)
function LRScheduler:read_state_dict(sd)
    return LRScheduler.read_state(self.__name .. ":load_state_dict", sd, self:state_keys(),
        #self.optimizer.param_groups, nil, self.torch_only)
end

function LRScheduler:apply_state(values)
    for k, v in pairs(values) do
        self[k] = v
    end
end

function LRScheduler:load_state_dict(sd)
    self:apply_state(self:read_state_dict(sd))
end

return LRScheduler
