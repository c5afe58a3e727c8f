-- the base of tide.optim's optimizers: parameter groups, per-parameter state kept on the
-- parameter's device, zero_grad.
--
-- State is keyed by the parameter object. Module:to moves parameters in place (set_), so the
-- key stays valid; the state's tensors follow lazily: each step compares the device and dtype
-- recorded with the state against the parameter's and moves them when they differ.
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise

local is_tensor = autograd.is_tensor
local Complex = require("tide.complex.tensor")
local merge_positional = require("tide.pytorch_args").merge
-- a recording profiler's ranges: PyTorch's "Optimizer.step#Adam.step" and zero_grad's
local prof = require("tide.profiler.hooks")

local Optimizer = {}
Optimizer.__index = Optimizer

-- Optimizer:extend("SGD", defaults, positional) -> a class; SGD(params, opts) makes an
-- optimizer, and so does SGD(params, 0.1, {momentum = 0.9}): positional lists the option names
-- torch 1.13 takes positionally after params, in its order (default: lr alone); SGD({params = ps,
-- lr = 0.1}) takes every argument by name (PyTorch's SGD(params=ps, lr=0.1))
--
-- A class that defines its own constructor, as a torch.optim.Optimizer subclass defines
-- __init__: Optimizer:extend(name) then function Cls:init(params, ...) ... end, which calls
-- PyTorch's super().__init__(params, defaults) as Optimizer.init(self, params, defaults)
-- (labml_nn's GenericAdaptiveOptimizer). Cls(...) makes the object and runs its init with the
-- arguments as given.
function Optimizer:extend(name, defaults, positional)
    if defaults ~= nil and type(defaults) ~= "table" then
        raise("tide: Optimizer:extend: expected defaults to be a table such as {lr = 0.01} " ..
            "or nil (a class whose init calls Optimizer.init(self, params, defaults)), got " ..
            type(defaults))
    end
    local cls = { __name = name, defaults = defaults,
        positional = positional or (defaults and (defaults.lr ~= nil and { "lr" } or {})) }
    cls.__index = cls
    return setmetatable(cls, {
        __index = self,
        __call = function(c, params, ...)
            if c.init ~= Optimizer.init then
                local obj = setmetatable({}, c)
                c.init(obj, params, ...)
                if obj.param_groups == nil then
                    raise("tide: " .. c.__name .. ": its init did not call " ..
                        "Optimizer.init(self, params, defaults) (PyTorch's " ..
                        "super().__init__(params, defaults)); the optimizer has no param_groups")
                end
                return obj
            end
            if c.defaults == nil then
                raise("tide: " .. c.__name .. ": the class has no defaults and no init; " ..
                    "give Optimizer:extend(name, {lr = 0.01, ...}) its defaults, or define " ..
                    "function " .. c.__name .. ":init(params, ...) that calls " ..
                    "Optimizer.init(self, params, defaults)")
            end
            if select("#", ...) == 0 and type(params) == "table" and not params.__ismodule
                and not is_tensor(params) and params[1] == nil and params.params ~= nil then
                -- PyTorch's Adam(params=ps, lr=1e-3): one table holds every argument by name
                local opts = {}
                for k, v in pairs(params) do
                    if k ~= "params" then opts[k] = v end
                end
                return c.new(c, params.params, opts)
            end
            return c.new(c, params, merge_positional(c.__name, c.positional or {}, ...))
        end,
    })
end

-- PyTorch's options whose only effect is speed (foreach, fused: the kernel a step runs;
-- capturable: CUDA-graph capture): tide's steps give the same values whatever they say, so
-- they are checked and dropped. differentiable = true (a step autograd records) is refused.
-- Each is nil or a boolean. LBFGS, as PyTorch's, takes none (cls.speed_options = {}).
local SPEED_OPTIONS = { "capturable", "differentiable", "foreach", "fused" }
Optimizer.speed_options = SPEED_OPTIONS

local function check_speed_options(who, opts, names)
    for _, k in ipairs(names) do
        local v = opts[k]
        if v ~= nil and type(v) ~= "boolean" then
            raise("tide: " .. who .. ": expected " .. k .. " to be a boolean or nil, got " ..
                (is_tensor(v) and "a tensor" or type(v)))
        end
    end
    if opts.differentiable then
        raise("tide: " .. who .. ": differentiable = true is not supported yet (tide's step " ..
            "runs without recording); leave it out or false")
    end
end

-- A complex parameter is stepped as its real pair (view_as_real), as PyTorch's optimizers step
-- one: the update, its state (kept under the pair) and the checks see the real tensor.
local real_of = Complex.ri
local is_complex = Complex.is
local function real_param(p)
    return is_complex(p) and real_of(p) or p
end
Optimizer.real_param = real_param

local function param_list(params, who)
    if type(params) == "table" and params.__ismodule then
        return params:parameters()
    end
    if is_tensor(params) or is_complex(params) then -- PyTorch's TypeError for SGD(w)
        raise("tide: " .. who .. ": expected a list of parameters (model:parameters()), got a " ..
            "tensor; params argument given to the optimizer should be an iterable of Tensors " ..
            "or dicts: pass {w}")
    end
    if type(params) ~= "table" then
        raise("tide: " .. who .. ": expected a list of parameters " ..
            "(model:parameters()), got " .. type(params))
    end
    return params
end

-- PyTorch 1.13's warning for a parameter twice in one group (each copy is stepped)
local function warn_duplicates(g)
    local seen = {}
    for _, p in ipairs(g.params) do
        if seen[p] then
            require("tide._warn").once("optim.duplicate_params", "optimizer contains a " ..
                "parameter group with duplicate parameters; in future, this will cause an " ..
                "error; see github.com/pytorch/pytorch/issues/40967 for more information")
            return
        end
        seen[p] = true
    end
end

-- a group's parameters as a list (one tensor alone too), its options not given taken from
-- defaults, each of the type of the class's default (types; who names the call in errors)
local function fill_group(who, g, defaults, types)
    g.params = (is_tensor(g.params) or is_complex(g.params)) and { g.params } or
        param_list(g.params, who)
    for k, v in pairs(defaults) do
        if g[k] == nil then
            g[k] = v
        end
    end
    for i, p in ipairs(g.params) do
        if not is_tensor(p) and not is_complex(p) then
            raise("tide: " .. who .. ": parameter " .. i .. " is a " .. type(p) ..
                ", expected a tensor (optimizer can only optimize Tensors)")
        end
    end
    warn_duplicates(g)
    for k, v in pairs(types) do
        if type(v) ~= type(g[k]) then
            raise("tide: " .. who .. ": expected " .. k .. " to be a " .. type(v) ..
                ", got " .. type(g[k]))
        end
    end
    if g.lr ~= nil and g.lr < 0 then -- nil: a subclass's lr=None default (Adafactor's)
        raise("tide: " .. who .. ": expected lr >= 0, got " .. tostring(g.lr))
    end
end

-- the groups of params (a list of tensors is one group; a list of {params = ..., lr = ...}
-- tables is several), each option a group leaves out taken from defaults (fill_group)
local function param_groups(who, params, defaults, types)
    local groups = {}
    local first = params[1]
    if first ~= nil and type(first) ~= "table" and not is_tensor(first) then
        raise("tide: " .. who .. ": optimizer can only optimize Tensors, but one of the " ..
            "params is " .. type(first))
    end
    if first ~= nil and not is_tensor(first) and not is_complex(first) then
        for i, g in ipairs(params) do
            if type(g) ~= "table" or g.__ismodule then
                raise("tide: " .. who .. ": parameter group " .. i .. " is a " ..
                    (type(g) == "table" and "module" or type(g)) .. "; expected a table such as " ..
                    "{params = {...}, lr = 0.1}")
            end
            if g.params == nil and is_tensor(g[1]) then
                raise("tide: " .. who .. ": parameter group " .. i .. " is a list of " .. #g ..
                    " tensors without a params key: a list of parameter lists is not a " ..
                    "parameter list; join them as itertools.chain does with " ..
                    "tide.utils.chain(a, b), or give groups {{params = a}, {params = b}}")
            end
            groups[i] = g
        end
    else
        groups[1] = { params = params }
    end
    for _, g in ipairs(groups) do
        fill_group(who, g, defaults, types)
    end
    return groups
end

-- PyTorch's ValueError for a parameter in two groups (after the class's own checks: LBFGS
-- names its refusal of groups first)
local function check_disjoint(who, groups)
    local owner = {}
    for gi, g in ipairs(groups) do
        for _, p in ipairs(g.params) do
            if owner[p] and owner[p] ~= gi then
                raise("tide: " .. who .. ": some parameters appear in more than one " ..
                    "parameter group (groups " .. owner[p] .. " and " .. gi .. ")")
            end
            owner[p] = gi
        end
    end
end

-- PyTorch's Optimizer.__init__(params, defaults), for a subclass's own init (super().__init__):
-- self.defaults is defaults, self.param_groups the groups of params (a list of parameters or
-- of {params = ..., lr = ...} groups), each option a group leaves out taken from defaults, and
-- self.state PyTorch's defaultdict(dict): self.state[p] is an empty table on first read. The
-- state and update are the subclass's (its step); tide's init_state hook is not called.
function Optimizer.init(self, params, defaults)
    local who = self.__name or "Optimizer"
    if type(defaults) ~= "table" or is_tensor(defaults) then
        raise("tide: " .. who .. ": Optimizer.init(self, params, defaults): expected defaults " ..
            "to be a table such as {lr = 0.01}, got " ..
            (is_tensor(defaults) and "a tensor" or type(defaults)))
    end
    params = param_list(params, who)
    if params[1] == nil then
        raise("tide: " .. who .. ": optimizer got an empty parameter list")
    end
    local groups = param_groups(who, params, defaults, {})
    check_disjoint(who, groups)
    self.defaults = defaults
    self.param_groups = groups
    self.state = setmetatable({}, { __index = function(st, p)
        if not is_tensor(p) and not is_complex(p) then
            return nil
        end
        local t = {}
        rawset(st, p, t)
        return t
    end })
    self._python_init = true
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
    local speed = cls.speed_options
    for _, k in ipairs(speed) do
        if cls.defaults[k] == nil then
            known[#known + 1] = k
        end
    end
    table.sort(known)
    core._check_options(opts, who, known)
    check_speed_options(who, opts, speed)
    -- the class's defaults under the constructor's options: what a group leaves out takes
    -- (add_param_group's too, as PyTorch's optimizer.defaults)
    local defaults = {}
    for k, v in pairs(cls.defaults) do
        if opts[k] == nil then
            defaults[k] = v
        else
            defaults[k] = opts[k]
        end
    end
    params = param_list(params, who)
    if params[1] == nil then
        raise("tide: " .. who .. ": optimizer got an empty parameter list")
    end
    local groups = param_groups(who, params, defaults, cls.defaults)
    local self = setmetatable({ param_groups = groups, state = {}, defaults = defaults }, cls)
    self:check_groups(who)
    check_disjoint(who, groups)
    self:init_state()
    return self
end

-- every group's nonnegative options (cls.nonnegative), then the class's own checks
function Optimizer:check_groups(who)
    for _, g in ipairs(self.param_groups) do
        for _, k in ipairs(self.nonnegative or {}) do
            if g[k] < 0 then
                raise("tide: " .. who .. ": expected " .. k .. " >= 0, got " .. tostring(g[k]))
            end
        end
    end
    self:check_options()
end

-- opt:add_param_group({params = ..., lr = ..., ...}): PyTorch's. The options the group leaves
-- out are the optimizer's (its constructor's, else the class's defaults); a parameter already
-- in a group is refused; the new parameters' state is made as the constructor makes it. A
-- refused group leaves the optimizer as it was.
function Optimizer:add_param_group(group)
    local who = self.__name .. ":add_param_group"
    if type(group) ~= "table" or group.__ismodule or is_tensor(group) then
        raise("tide: " .. who .. ": expected a table such as {params = model:parameters(), " ..
            "lr = 0.01}, got " .. (is_tensor(group) and "a tensor" or type(group) == "table" and
            "a module" or type(group)))
    end
    if group.params == nil then
        raise("tide: " .. who .. ": the group has no params; {params = {...}, lr = 0.01}")
    end
    fill_group(who, group, self.defaults, self._python_init and {} or getmetatable(self).defaults)
    local seen = {}
    for _, g in ipairs(self.param_groups) do
        for _, p in ipairs(g.params) do
            seen[p] = true
        end
    end
    -- one in another group raises (PyTorch's ValueError); twice in this group warned (fill_group)
    for i, p in ipairs(group.params) do
        if seen[p] then
            raise("tide: " .. who .. ": parameter " .. i .. " is already in a parameter group " ..
                "of this optimizer; a parameter belongs to one group (some parameters appear " ..
                "in more than one parameter group)")
        end
    end
    local groups = self.param_groups
    groups[#groups + 1] = group
    local ok, err = pcall(self.check_groups, self, who)
    if not ok then
        groups[#groups] = nil
        error(err, 0)
    end
    -- (a subclass with its own init keeps its state as PyTorch's do: its step makes it)
    if not self._python_init then
        self:init_state()
    end
end

-- cls.nonnegative: the options each group must have >= 0 (checked after lr, before
-- check_options)
function Optimizer:check_options() end

-- g as an update reads it: negated with maximize, plus weight_decay * p (Adagrad, RMSprop)
function Optimizer.regularized_grad(group, p, g)
    if group.maximize then
        g = g:neg()
    end
    local wd = group.weight_decay
    if wd ~= 0 then
        g = g:add(p, wd)
    end
    return g
end

-- p's state for this step (Adamax, NAdam, RAdam, Adadelta): at the first, step 0 and a zero
-- tensor like p for each of names; then the step counted. Returns the state
function Optimizer:count_step(p, names)
    local st = self:state_of(p)
    if st[names[1]] == nil then
        st.step = 0
        for _, k in ipairs(names) do
            st[k] = Optimizer.zeros_like(p)
        end
    end
    st.step = st.step + 1
    return st
end

-- state made at construction (Adagrad's sums); others make theirs at the first step
function Optimizer:init_state() end

-- opt:state_dict() / opt:load_state_dict(sd): flat tables of tensors (optim/state_dict.lua)
local state_dict = require("tide.optim.state_dict")
Optimizer.state_dict, Optimizer.load_state_dict = state_dict.state_dict, state_dict.load_state_dict

-- opt:zero_grad([set_to_none]): nil or true sets the gradients to nil, false zeroes them in
-- place (PyTorch 1.13's default; tide._set_to_none)
function Optimizer:zero_grad(...)
    local range = prof.open and prof.open("Optimizer.zero_grad#" .. self.__name .. ".zero_grad")
    local params = {}
    for _, g in ipairs(self.param_groups) do
        for _, p in ipairs(g.params) do
            params[#params + 1] = p
        end
    end
    require("tide._set_to_none")("zero_grad", params, ...)
    if range then
        prof.close(range)
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

-- the state a parameter's update reads, for the checks before a step: anchor (the entry whose
-- presence means the state exists: without it the update makes a fresh state) and the entries
-- then required, each { name, "tensor" (p's shape) or "number" (>= 0) }; nil: no state read.
-- always = true: the state is required even without the anchor (Adagrad's, made at
-- construction). Each optimizer overrides it.
function Optimizer:state_spec(group) -- luacheck: ignore
    return nil
end

local shape_text, same_shape = args.shape_str, args.same_shape

-- the state tensors a check has passed, per state table (weak keys): an update writes them in
-- place, so the next step checks one identity each instead of shape, device and dtype
local validated = setmetatable({}, { __mode = "k" })

-- the checks of one parameter (index i over the groups, as state_dict numbers them) before any
-- parameter moves: its gradient, and each state entry as state_of will hand it to the update
local function check_param(self, group, i, p, grad)
    local who = self.__name
    if not is_tensor(grad) then
        raise(string.format("tide: %s: the gradient of parameter %d is a %s, expected a tensor",
            who, i, type(grad)))
    end
    local pshape = p.shape
    if not same_shape(grad.shape, pshape) then
        raise(string.format("tide: %s: the gradient of parameter %d has shape %s, expected %s " ..
            "(the parameter's shape); set p.grad to a tensor of the parameter's shape", who, i,
            shape_text(grad.shape), shape_text(pshape)))
    end
    if grad.device ~= p.device then
        raise(string.format("tide: %s: the gradient of parameter %d is on %s, the parameter " ..
            "on %s; move the gradient with :to(\"%s\")", who, i, tostring(grad.device),
            tostring(p.device), tostring(p.device)))
    end
    local anchor, keys, always = self:state_spec(group)
    local st = self.state[p]
    if not keys or not (always or (st and st[anchor] ~= nil)) then
        return
    end
    local fix = "load a state dict saved from an optimizer over the same parameters"
    if not st then
        raise(string.format("tide: %s: parameter %d has no state; %s", who, i, fix))
    end
    -- state_of moves the state's tensors when the parameter has moved (float ones to its dtype)
    local moves = st.device ~= p.device or st.dtype ~= p.dtype
    local seen = validated[st]
    if moves or not seen then
        seen = {}
        validated[st] = seen
    end
    for _, spec in ipairs(keys) do
        local name, kind = spec[1], spec[2]
        local v = st[name]
        -- a tensor checked at an earlier step (and written in place since) passes at once, as
        -- does a number in range
        local ok = v ~= nil and (kind == "tensor" and rawequal(seen[name], v) or
            kind == "number" and type(v) == "number" and v >= 0 and v < math.huge)
        if not ok then
            local prefix = string.format("tide: %s: the state of parameter %d: %s", who, i, name)
            if v == nil then
                raise(prefix .. " is missing; " .. fix)
            elseif kind == "number" then
                if type(v) ~= "number" or v ~= v or v < 0 or v == math.huge then
                    raise(string.format("%s must be a number >= 0, got %s; %s", prefix,
                        type(v) == "number" and tostring(v) or type(v), fix))
                end
            else
                if not is_tensor(v) then
                    raise(string.format("%s must be a tensor, got %s; %s", prefix, type(v), fix))
                end
                if not same_shape(v.shape, pshape) then
                    raise(string.format("%s has shape %s, expected %s (the parameter's shape); %s",
                        prefix, shape_text(v.shape), shape_text(pshape), fix))
                end
                local dev, dt = v.device, v.dtype
                if moves then
                    dev, dt = p.device, autograd.FLOAT[dt] and p.dtype or dt
                end
                if dev ~= p.device then
                    raise(string.format("%s is on %s, the parameter on %s; %s", prefix,
                        tostring(dev), tostring(p.device), fix))
                end
                if dt ~= p.dtype then
                    raise(string.format("%s has dtype %s, the parameter %s; %s", prefix, dt,
                        p.dtype, fix))
                end
                seen[name] = v
            end
        end
    end
end

-- a group's numeric options (a number, or a list such as betas, in the defaults) still
-- numbers: a scheduler or the user may have set them since, and a string met inside the update
-- would fail after some parameters moved
local function shown(v, k)
    if type(v) == "string" then
        return string.format("%q", v)
    elseif is_tensor(v) then
        return "a tensor (its number: " .. k .. ":item())"
    elseif type(v) == "table" then
        local parts = {}
        for j = 1, #v do
            parts[j] = type(v[j]) == "string" and string.format("%q", v[j]) or tostring(v[j])
        end
        return "{" .. table.concat(parts, ", ") .. "}"
    end
    return tostring(v)
end

local function check_group_numbers(self, g, gi)
    for k, d in pairs(self.defaults or {}) do
        local v, bad = g[k], false
        if type(d) == "number" then
            bad = type(v) ~= "number"
        elseif type(d) == "table" and type(d[1]) == "number" then
            bad = type(v) ~= "table" or is_tensor(v) or #v ~= #d
            for j = 1, bad and 0 or #d do
                bad = bad or type(v[j]) ~= "number"
            end
        end
        if bad then
            raise(string.format("tide: %s: step: param_groups[%d].%s is %s; expected %s",
                self.__name or "Optimizer", gi, k, shown(v, k), type(d) == "number" and
                "a number" or "a list of " .. #d .. " numbers"))
        end
    end
end

-- every parameter with a gradient checked before the first one is updated: a failed step
-- changes nothing (no parameter, no state)
function Optimizer:check_step()
    local i = 0
    for gi, g in ipairs(self.param_groups) do
        check_group_numbers(self, g, gi)
        for _, p in ipairs(g.params) do
            i = i + 1
            p = real_param(p)
            local grad = p.grad
            if grad then
                check_param(self, g, i, p, grad)
            end
        end
    end
end

-- step() runs update(group, p, grad) for each parameter with a gradient, without recording
local function run(self)
    if rawget(self, "_step_checked") then -- GradScaler:step checked just before unscaling
        rawset(self, "_step_checked", nil)
    else
        self:check_step()
    end
    local update = self.update
    for _, g in ipairs(self.param_groups) do
        for _, p in ipairs(g.params) do
            p = real_param(p)
            local grad = p.grad
            if grad then
                update(self, g, p, grad)
            end
        end
    end
end

function Optimizer:step(closure)
    local loss
    if closure ~= nil and type(closure) ~= "function" and not (getmetatable(closure) or {}).__call then
        raise("tide: " .. self.__name .. ": step: expected a closure function, got " ..
            (is_tensor(closure) and "tide.Tensor" or type(closure)))
    end
    local range = prof.open and prof.open("Optimizer.step#" .. self.__name .. ".step")
    if closure then
        loss = closure()
    end
    local prev = set_grad_enabled(false)
    local ok, err = pcall(run, self)
    set_grad_enabled(prev)
    if range then
        prof.close(range)
    end
    if not ok then
        error(err, 0)
    end
    return loss
end

return Optimizer
