-- tide.amp.GradScaler([{init_scale = 65536, growth_factor = 2, backoff_factor = 0.5,
-- growth_interval = 2000, enabled = true}]): PyTorch 1.13's torch.cuda.amp.GradScaler (and 2.x's
-- torch.amp.GradScaler(device, ...): tide.amp.GradScaler("cuda", {enabled = ...})), loss
-- scaling for float16 training. The loss is multiplied by the scale before backward, so that
-- small float16 gradients do not underflow; step unscales the gradients, checks them for inf
-- and NaN, and skips the optimizer's step when it finds any; update halves the scale after
-- such a step and doubles it after growth_interval clean ones in a row.
--
--     local scaler = tide.amp.GradScaler()
--     scaler:scale(loss):backward()
--     scaler:step(opt)         -- or scaler:unscale_(opt), clip_grad_norm_, then scaler:step(opt)
--     scaler:update()
--
-- As PyTorch's: the scale is a 1-element float32 tensor (the growth tracker an int32 one) made
-- on the device of the first tensor scaled; each optimizer (keyed by the object) goes READY ->
-- UNSCALED (unscale_) -> STEPPED (step) until update() clears them all; the scale's updates are
-- PyTorch's kernel's (the float32 scale times the factor in float64, rounded to float32; growth
-- that would reach inf is not applied). Unlike PyTorch's (which refuses them), float16 and
-- bfloat16 gradients are unscaled too, each value times 1/scale in float32 and rounded once.
-- Nothing here reads a tensor back to Lua but step's one check of the gradients found inf per
-- device, get_scale and state_dict.
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local compat = require("tide._compat")
local class = require("tide._class")
local flat = require("tide.optim.flat_state")
local Optimizer = require("tide.optim.Optimizer")
local raise = autograd.raise
local is_tensor = autograd.is_tensor
local Complex = require("tide.complex.tensor")

local GradScaler = { __name = "GradScaler" }
GradScaler.__index = GradScaler
class.class(GradScaler)

local WHO = "GradScaler"
local OPTIONS = { "init_scale", "growth_factor", "backoff_factor", "growth_interval", "enabled" }
local READY, UNSCALED, STEPPED = "ready", "unscaled", "stepped"
local HALF = args.HALF

local function shown(v)
    if type(v) == "number" then
        return v ~= v and "nan" or tostring(v)
    end
    return is_tensor(v) and "a tensor" or "a " .. type(v)
end

local function finite(v)
    return type(v) == "number" and v == v and v > -math.huge and v < math.huge
end

-- the checks of the settings (options, setters, load_state_dict): each returns the value as kept
local CHECK = {
    init_scale = function(v)
        return finite(v) and v > 0, "a finite number > 0"
    end,
    scale = function(v)
        return finite(v) and v > 0, "a finite number > 0"
    end,
    growth_factor = function(v)
        return finite(v) and v > 1, "a finite number > 1"
    end,
    backoff_factor = function(v)
        return finite(v) and v > 0 and v < 1, "a number in (0, 1)"
    end,
    growth_interval = function(v)
        local i = type(v) == "number" and compat.tointeger(v)
        return i and i >= 1, "an integer >= 1"
    end,
    _growth_tracker = function(v)
        local i = type(v) == "number" and compat.tointeger(v)
        return i and i >= 0, "an integer >= 0"
    end,
}
CHECK.new_scale = CHECK.scale

local INTEGRAL = { growth_interval = true, _growth_tracker = true }

local function checked(who, key, v, fix)
    local ok, want = CHECK[key](v)
    if not ok then
        raise(("tide: %s: %s must be %s, got %s; %s"):format(who, key, want, shown(v), fix))
    end
    if INTEGRAL[key] then
        return compat.tointeger(v)
    end
    return v
end

-- PyTorch's defaults, as the fix of a bad option shows them (tostring(2.0) is "2" on 5.1)
local SHOWN = { init_scale = "65536.0", growth_factor = "2.0", backoff_factor = "0.5",
    growth_interval = "2000" }

local function option(opts, key, default)
    local v = opts[key]
    if v == nil then
        return default
    end
    return checked(WHO, key, v, ("pass e.g. {%s = %s}"):format(key, SHOWN[key]))
end

-- PyTorch 2.x's torch.amp.GradScaler(device="cuda", ...): the device first by position
-- ("cuda", "cpu", "cuda:N" or a tide.device) or {device =} by name; kept as scaler.device (the
-- scale is made on the device of the first tensor scaled, as before)
local function device_name(v)
    local s = (type(v) == "string" or (type(v) == "table" or type(v) == "userdata") and
        not is_tensor(v)) and tostring(v) or nil
    if s and (s:match("^cpu$") or s:match("^cuda$") or s:match("^cuda:%d+$") or
        s:match("^cpu:%d+$")) then
        return s
    end
    raise(("tide: GradScaler: device must be \"cuda\", \"cpu\", \"cuda:N\" or a tide.device, " ..
        "got %s; write tide.amp.GradScaler(\"cuda\", {enabled = true}) or " ..
        "tide.amp.GradScaler(\"cpu\")"):format(type(v) == "string" and ("%q"):format(v) or
        shown(v)))
end

function GradScaler.new(cls, opts, ...)
    local device
    if type(opts) == "string" or (type(opts) == "table" or type(opts) == "userdata") and
        getmetatable(opts) ~= nil and not is_tensor(opts) then
        device = device_name(opts)
        opts = ...
        args.no_extra(WHO, 2, select(2, ...))
    else
        args.no_extra(WHO, 1, ...)
    end
    if type(opts) == "table" and getmetatable(opts) == nil and opts.device ~= nil then
        if device ~= nil then
            raise("tide: GradScaler: device given both by position and by name; give it once")
        end
        local rest = {}
        for k, v in pairs(opts) do
            if k ~= "device" then
                rest[k] = v
            end
        end
        device = device_name(opts.device)
        opts = rest
    end
    opts = args.options(WHO, opts, OPTIONS, "{init_scale = 1024}")
    local enabled = opts.enabled
    if enabled == nil then
        enabled = true
    elseif type(enabled) ~= "boolean" then
        raise("tide: GradScaler: enabled must be true or false, got " .. shown(enabled))
    end
    return setmetatable({
        device = device or "cuda",
        _enabled = enabled,
        _init_scale = option(opts, "init_scale", 65536.0),
        _growth_factor = option(opts, "growth_factor", 2.0),
        _backoff_factor = option(opts, "backoff_factor", 0.5),
        _growth_interval = option(opts, "growth_interval", 2000),
        _init_growth_tracker = 0,
        _scale = nil,          -- made by the first scale(), on its tensor's device
        _growth_tracker = nil,
        _per_optimizer_states = {},
    }, cls)
end

-- ---- scale ----

local function check_outputs(who, v, path)
    if is_tensor(v) then
        return
    end
    if type(v) ~= "table" then
        raise(("tide: %s: %s is a %s; expected a tensor or a (nested) list of tensors")
            :format(who, path, type(v)))
    end
    for k in pairs(v) do
        if not (compat.is_integer(k) and k >= 1 and k <= #v) then
            raise(("tide: %s: %s has the key %s; expected a tensor or a (nested) list of " ..
                "tensors"):format(who, path, tostring(k)))
        end
    end
    for i = 1, #v do
        check_outputs(who, v[i], path .. "[" .. i .. "]")
    end
end

function GradScaler:_lazy_init_scale_growth_tracker(device)
    self._scale = core.full({ 1 }, self._init_scale, { dtype = "float32", device = device })
    self._growth_tracker = core.full({ 1 }, self._init_growth_tracker,
        { dtype = "int32", device = device })
end

-- scale(outputs): outputs * scale (a tensor, or a new list of the same nesting); the tensor
-- itself when disabled
function GradScaler:scale(outputs, ...)
    local who = "GradScaler:scale"
    args.no_extra(who, 1, ...)
    if not self._enabled then
        return outputs
    end
    check_outputs(who, outputs, "outputs")
    -- one copy of the scale per device this call meets (PyTorch's _MultiDeviceReplicator)
    local copies = {}
    local function apply(v)
        if is_tensor(v) then
            if self._scale == nil then
                self:_lazy_init_scale_growth_tracker(v.device)
            end
            local key = tostring(v.device)
            local s = copies[key]
            if s == nil then
                local scale = self._scale
                s = key == tostring(scale.device) and scale or scale:to(v.device)
                copies[key] = s
            end
            return v * s
        end
        local out = {}
        for i = 1, #v do
            out[i] = apply(v[i])
        end
        return out
    end
    return apply(outputs)
end

-- ---- unscale_, step ----

local function check_optimizer(who, optimizer)
    if type(optimizer) ~= "table" or type(optimizer.param_groups) ~= "table" then
        raise(("tide: %s: expected an optimizer (tide.optim.SGD(...) etc.), got %s")
            :format(who, shown(optimizer)))
    end
end

function GradScaler:_check_scale_growth_tracker(who)
    if self._scale == nil then
        raise(("tide: %s: the scale is not set up yet; call scaler:scale(loss) (then " ..
            "backward) earlier in the iteration"):format(who))
    end
    return self._scale, self._growth_tracker
end

function GradScaler:_state_of(optimizer)
    local st = self._per_optimizer_states[optimizer]
    if st == nil then
        st = { stage = READY, found_inf_per_device = {} }
        self._per_optimizer_states[optimizer] = st
    end
    return st
end

-- the gradients of optimizer's parameters by device ({key =, device =, grads = {...}} in the
-- order met), all checked before any is changed
local function grads_by_device(who, optimizer)
    local by, list, i = {}, {}, 0
    for _, group in ipairs(optimizer.param_groups) do
        for _, p in ipairs(group.params or {}) do
            i = i + 1
            if Complex.is(p) then -- a complex parameter's gradient is its real pair's
                p = Complex.ri(p)
            end
            local g = is_tensor(p) and p.grad or nil
            if g ~= nil then
                if not is_tensor(g) or not args.FLOAT[g.dtype] then
                    raise(("tide: %s: the gradient of parameter %d is %s; expected a " ..
                        "floating-point tensor"):format(who, i,
                        is_tensor(g) and "a " .. g.dtype .. " tensor" or shown(g)))
                end
                local key = tostring(g.device)
                local d = by[key]
                if d == nil then
                    d = { key = key, device = g.device, grads = {} }
                    by[key] = d
                    list[#list + 1] = d
                end
                d.grads[#d.grads + 1] = g
            end
        end
    end
    return list
end

-- PyTorch's _amp_foreach_non_finite_check_and_unscale_ per device: found_inf (a 1-element
-- float32 tensor on the device, 1 where any gradient there has an inf or NaN) and every
-- gradient multiplied in place by inv_scale (float16 and bfloat16 ones in float32, rounded
-- once). One isfinite + all per gradient, no read back
local function unscale_grads(self, devices)
    -- the reciprocal in float64, as PyTorch's (float32's can be off by an ulp)
    local inv = self._scale:double():reciprocal():float():reshape({})
    local home = tostring(inv.device)
    local found = {}
    autograd.no_grad(function()
        for _, d in ipairs(devices) do
            local dinv = d.key == home and inv or inv:to(d.device)
            local ok
            for _, g in ipairs(d.grads) do
                local fine = g:isfinite():all()
                ok = ok and ok:logical_and(fine) or fine
                if HALF[g.dtype] then
                    -- mul_ would round the float32 factor to g's dtype first
                    g:copy_(g:float():mul(dinv))
                else
                    g:mul_(dinv)
                end
            end
            found[d.key] = ok:logical_not():float():reshape({ 1 })
        end
    end)
    return found
end

-- unscale_(optimizer): divides the optimizer's gradients by the scale in place and records
-- whether any has an inf or NaN; once per optimizer between updates, before step
function GradScaler:unscale_(optimizer, ...)
    local who = "GradScaler:unscale_"
    args.no_extra(who, 1, ...)
    check_optimizer(who, optimizer)
    if not self._enabled then
        return
    end
    self:_check_scale_growth_tracker(who)
    local st = self._per_optimizer_states[optimizer]
    local stage = st and st.stage or READY
    if stage == UNSCALED then
        raise("tide: GradScaler:unscale_: unscale_() has already been called on this " ..
            "optimizer since the last update(); call it once per optimizer per iteration")
    elseif stage == STEPPED then
        raise("tide: GradScaler:unscale_: unscale_() is being called after step(); call it " ..
            "before scaler:step(optimizer), or after scaler:update() for the next iteration")
    end
    local found = unscale_grads(self, grads_by_device(who, optimizer))
    st = self:_state_of(optimizer)
    st.found_inf_per_device = found
    st.stage = UNSCALED
end

-- a closure argument (PyTorch refuses closure= when enabled: it would run after unscaling)
local function check_no_closure(...)
    for k = 1, select("#", ...) do
        local v = select(k, ...)
        local mt = type(v) == "table" and getmetatable(v)
        if type(v) == "function" or (mt and mt.__call) or
            (type(v) == "table" and not is_tensor(v) and v.closure ~= nil) then
            raise("tide: GradScaler:step: closure use is not supported while the scaler is " ..
                "enabled; compute the loss, call scaler:scale(loss):backward(), then " ..
                "scaler:step(optimizer) without a closure")
        end
    end
end

local function any_inf(st)
    for _, f in pairs(st.found_inf_per_device) do
        if f:item() ~= 0 then
            return true
        end
    end
    return false
end

-- a step that will raise (a gradient or state that does not fit its parameter) raises before
-- the gradients are unscaled, so the refused call changes nothing; only for tide's own
-- Optimizer:step (which runs the same check), and only when every gradient is finite: with an
-- inf or NaN the step is skipped without running, as PyTorch's (its found_inf is the same test)
local function precheck_step(optimizer, devices)
    if optimizer.step ~= Optimizer.step or type(optimizer.check_step) ~= "function" then
        return false
    end
    local ok, err = pcall(optimizer.check_step, optimizer)
    if ok then
        return true
    end
    for _, d in ipairs(devices) do
        for _, g in ipairs(d.grads) do
            if not g:isfinite():all():item() then
                return false
            end
        end
    end
    error(err, 0)
end

-- step(optimizer, ...): unscale_ unless done, then optimizer:step(...) (returning its result)
-- unless a gradient had an inf or NaN; disabled: optimizer:step(...)
function GradScaler:step(optimizer, ...)
    local who = "GradScaler:step"
    check_optimizer(who, optimizer)
    if not self._enabled then
        return optimizer:step(...)
    end
    check_no_closure(...)
    self:_check_scale_growth_tracker(who)
    local st = self._per_optimizer_states[optimizer]
    local stage = st and st.stage or READY
    if stage == STEPPED then
        raise("tide: GradScaler:step: step() has already been called since the last " ..
            "update(); call scaler:update() once per iteration, after the steps")
    end
    local checked = false -- the step's checks made here (unscaling keeps shapes and dtypes)
    local none = "no inf checks were recorded for this optimizer: none of its parameters has " ..
        "a gradient; call scaler:scale(loss):backward() before scaler:step(optimizer)"
    if stage == READY then
        local devices = grads_by_device(who, optimizer)
        if #devices == 0 then -- checked first: a refused step changes nothing
            raise("tide: GradScaler:step: " .. none)
        end
        checked = precheck_step(optimizer, devices)
        local found = unscale_grads(self, devices)
        st = self:_state_of(optimizer)
        st.found_inf_per_device = found
        st.stage = UNSCALED
    elseif next(st.found_inf_per_device) == nil then
        raise("tide: GradScaler:step: " .. none)
    end
    local retval
    if not any_inf(st) then
        -- (the step then skips the checks precheck_step made: once per step, not twice)
        rawset(optimizer, "_step_checked", checked or nil)
        retval = optimizer:step(...)
    end
    st.stage = STEPPED
    return retval
end

-- ---- update ----

-- PyTorch's _amp_update_scale_ as tensor ops on the scale's device (no read back): an inf
-- found backs off and resets the tracker; else the tracker counts, and at growth_interval the
-- scale grows (unless that reaches inf) and the tracker resets
local function update_scale_(scale, tracker, found_inf, growth, backoff, interval)
    local found = found_inf:ne(0)
    local wide = scale:double()
    local successful = tracker:add(1)
    local grow = successful:eq(interval):logical_and(found:logical_not())
    local grown = wide:mul(growth):float()
    local kept = core.where(grow:logical_and(grown:isfinite()), grown, scale)
    scale:copy_(core.where(found, wide:mul(backoff):float(), kept))
    tracker:copy_(successful:masked_fill(found:logical_or(grow), 0))
end

-- update([new_scale]): the scale for the next iteration (new_scale, a number or a 1-element
-- float32 tensor, sets it), and every optimizer's stage back to READY
function GradScaler:update(new_scale, ...)
    local who = "GradScaler:update"
    args.no_extra(who, 1, ...)
    local fix = "pass a number such as 1024, a 1-element float32 tensor, or nothing"
    if is_tensor(new_scale) then
        if new_scale.dtype ~= "float32" or new_scale:numel() ~= 1 or new_scale.requires_grad then
            raise(("tide: %s: new_scale must be a 1-element float32 tensor that does not " ..
                "require grad, got a %s tensor of %d elements%s; %s"):format(who,
                new_scale.dtype, new_scale:numel(),
                new_scale.requires_grad and " that requires grad" or "", fix))
        end
    elseif new_scale ~= nil then
        checked(who, "new_scale", new_scale, fix)
    end
    if not self._enabled then
        return
    end
    local scale, tracker = self:_check_scale_growth_tracker(who)
    if type(new_scale) == "number" then
        scale:fill_(new_scale)
    elseif new_scale ~= nil then
        scale:copy_(new_scale:detach():reshape({ 1 }):to(scale.device))
    else
        local home = tostring(scale.device)
        local found
        for _, st in pairs(self._per_optimizer_states) do
            for key, f in pairs(st.found_inf_per_device) do
                if key ~= home then
                    f = f:to(scale.device)
                end
                found = found and found:add(f) or f
            end
        end
        if found == nil then
            raise("tide: GradScaler:update: no inf checks were recorded prior to update(); " ..
                "call scaler:step(optimizer) (or scaler:unscale_(optimizer)) for the " ..
                "optimizers with gradients first")
        end
        update_scale_(scale, tracker, found, self._growth_factor, self._backoff_factor,
            self._growth_interval)
    end
    self._per_optimizer_states = {}
end

-- ---- the settings ----

-- get_scale(): the scale as a number (init_scale before the first scale(), 1 when disabled)
function GradScaler:get_scale()
    if not self._enabled then
        return 1.0
    end
    if self._scale == nil then
        return self._init_scale
    end
    return self._scale:item()
end

function GradScaler:_get_growth_tracker()
    if not self._enabled then
        return 0
    end
    if self._growth_tracker == nil then
        return self._init_growth_tracker
    end
    return compat.tointeger(self._growth_tracker:item())
end

function GradScaler:is_enabled()
    return self._enabled
end

-- get_/set_growth_factor, backoff_factor, growth_interval (the setters check as the options)
for _, key in ipairs({ "growth_factor", "backoff_factor", "growth_interval" }) do
    local field = "_" .. key
    GradScaler["get_" .. key] = function(self)
        return self[field]
    end
    local who = "GradScaler:set_" .. key
    GradScaler["set_" .. key] = function(self, v, ...)
        args.no_extra(who, 2, ...)
        self[field] = checked(who, key, v, "keep the value as it was or pass a valid one")
    end
end

-- ---- state dict ----

local SD_KEYS = { "scale", "growth_factor", "backoff_factor", "growth_interval",
    "_growth_tracker" }

-- PyTorch's five entries, as Lua numbers; {} when disabled. tide.save writes
-- tide.optim.lr_scheduler.to_tensors(sd), and load_state_dict takes tide.load's table back
function GradScaler:state_dict()
    if not self._enabled then
        return {}
    end
    return {
        scale = self:get_scale(),
        growth_factor = self._growth_factor,
        backoff_factor = self._backoff_factor,
        growth_interval = self._growth_interval,
        _growth_tracker = self:_get_growth_tracker(),
    }
end

-- load_state_dict(sd): every value checked before any is set; nothing when disabled
function GradScaler:load_state_dict(sd, ...)
    local who = "GradScaler:load_state_dict"
    args.no_extra(who, 1, ...)
    if type(sd) ~= "table" or is_tensor(sd) then
        raise(("tide: %s: expected a state dict (scaler:state_dict() or tide.load's table), " ..
            "got %s"):format(who, is_tensor(sd) and "a tensor" or "a " .. type(sd)))
    end
    if not self._enabled then
        return
    end
    if next(sd) == nil then
        raise("tide: GradScaler:load_state_dict: the state dict is empty, as a disabled " ..
            "GradScaler's state_dict() is; save it from an enabled scaler")
    end
    local fix = "pass the state dict scaler:state_dict() gave"
    local known, values = {}, {}
    for _, k in ipairs(SD_KEYS) do
        known[k] = true
        local v = sd[k]
        if v == nil then
            raise(("tide: %s: the state dict lacks '%s'; %s"):format(who, k, fix))
        end
        if is_tensor(v) and v:dim() == 0 then -- tide.load's
            v = flat.decode(v, who, k)
        end
        values[k] = checked(who, k, v, fix)
    end
    for k in pairs(sd) do
        if not known[k] then
            raise(("tide: %s: unexpected key '%s'; a GradScaler state dict has %s")
                :format(who, tostring(k), table.concat(SD_KEYS, ", ")))
        end
    end
    self._init_scale = values.scale
    if self._scale ~= nil then
        self._scale:fill_(values.scale)
    end
    self._growth_factor = values.growth_factor
    self._backoff_factor = values.backoff_factor
    self._growth_interval = values.growth_interval
    self._init_growth_tracker = values._growth_tracker
    if self._growth_tracker ~= nil then
        self._growth_tracker:fill_(values._growth_tracker)
    end
end

return GradScaler
