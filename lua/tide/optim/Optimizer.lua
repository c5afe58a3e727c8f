-- the base of tide.optim's optimizers: parameter groups, per-parameter state kept on the
-- parameter's device, zero_grad.
--
-- State is keyed by the parameter object. Module:to moves parameters in place (set_), so the
-- key stays valid; the state's tensors follow lazily: each step compares the device and dtype
-- recorded with the state against the parameter's and moves them when they differ.
local core = require "tide.core"
local autograd = require "tide.autograd"
local raise = autograd.raise

local is_tensor = autograd.is_tensor

local Optimizer = {}
Optimizer.__index = Optimizer

-- Optimizer:extend("SGD", defaults) -> a class; SGD(params, opts) makes an optimizer
function Optimizer:extend(name, defaults)
    local cls = { __name = name, defaults = defaults }
    cls.__index = cls
    return setmetatable(cls, {
        __index = self,
        __call = function(c, params, opts)
            return Optimizer.new(c, params, opts)
        end,
    })
end

local function param_list(params, who)
    if type(params) == "table" and params.__ismodule then
        return params:parameters()
    end
    if type(params) ~= "table" then
        raise("tide: " .. who .. ": expected a list of parameters " ..
            "(model:parameters()), got " .. type(params))
    end
    return params
end

function Optimizer.new(cls, params, opts)
    local who = cls.__name
    opts = opts or {}
    if type(opts) ~= "table" then
        raise("tide: " .. who .. ": expected an options table such as {lr = 0.01}, got " ..
            type(opts))
    end
    local known = {}
    for d in pairs(cls.defaults) do
        known[#known + 1] = d
    end
    table.sort(known)
    core._check_options(opts, who, known)
    params = param_list(params, who)
    -- a list of tensors is one group; a list of {params = ..., lr = ...} tables is several
    local groups = {}
    if params[1] ~= nil and not is_tensor(params[1]) then
        for i, g in ipairs(params) do
            groups[i] = g
        end
    else
        groups[1] = { params = params }
    end
    for _, g in ipairs(groups) do
        g.params = param_list(g.params, who)
        for k, v in pairs(cls.defaults) do
            if g[k] == nil then
                local o = opts[k]
                if o == nil then
                    o = v
                end
                g[k] = o
            end
        end
        for i, p in ipairs(g.params) do
            if not is_tensor(p) then
                raise("tide: " .. who .. ": parameter " .. i .. " is a " .. type(p) ..
                    ", expected a tensor")
            end
        end
        for k, v in pairs(cls.defaults) do
            if type(v) ~= type(g[k]) then
                raise("tide: " .. who .. ": expected " .. k .. " to be a " .. type(v) ..
                    ", got " .. type(g[k]))
            end
        end
        if g.lr < 0 then
            raise("tide: " .. who .. ": expected lr >= 0, got " .. tostring(g.lr))
        end
    end
    local self = setmetatable({ param_groups = groups, state = {} }, cls)
    self:check_options()
    self:init_state()
    return self
end

function Optimizer:check_options() end

-- state made at construction (Adagrad's sums); others make theirs at the first step
function Optimizer:init_state() end

-- opt:state_dict() / opt:load_state_dict(sd): flat tables of tensors (optim/state_dict.lua)
local state_dict = require "tide.optim.state_dict"
Optimizer.state_dict, Optimizer.load_state_dict = state_dict.state_dict, state_dict.load_state_dict

function Optimizer:zero_grad()
    for _, g in ipairs(self.param_groups) do
        for _, p in ipairs(g.params) do
            autograd.set_grad(p, nil)
        end
    end
end

-- the state table of p, its tensors moved to p's device and dtype when p has moved
function Optimizer:state_of(p)
    local st = self.state[p]
    local dev, dt = p.device, p.dtype
    if not st then
        st = { device = dev, dtype = dt }
        self.state[p] = st
    elseif st.device ~= dev or st.dtype ~= dt then
        for k, v in pairs(st) do
            if is_tensor(v) then
                if autograd.FLOAT[v.dtype] and v.dtype ~= dt then
                    v = v:to(dt)
                end
                st[k] = v:to(dev)
            end
        end
        st.device, st.dtype = dev, dt
    end
    return st
end

function Optimizer.zeros_like(p)
    return core.zeros(p.shape, { device = p.device, dtype = p.dtype })
end

-- the fused kernels take a contiguous float parameter and a gradient of its dtype and shape
local FUSED_DTYPE = { float32 = true, float64 = true }
function Optimizer.fusable(p, g)
    return FUSED_DTYPE[p.dtype] and g.dtype == p.dtype and p:is_contiguous() or false
end

local set_grad_enabled = core.set_grad_enabled

-- step() runs update(group, p, grad) for each parameter with a gradient, without recording
local function run(self)
    local update = self.update
    for _, g in ipairs(self.param_groups) do
        for _, p in ipairs(g.params) do
            local grad = p.grad
            if grad then
                update(self, g, p, grad)
            end
        end
    end
end

function Optimizer:step(closure)
    local loss
    if closure then
        loss = closure()
    end
    local prev = set_grad_enabled(false)
    local ok, err = pcall(run, self)
    set_grad_enabled(prev)
    if not ok then
        error(err, 0)
    end
    return loss
end

return Optimizer
