-- tide.distributions.constraint_registry: PyTorch 1.13's: ConstraintRegistry (a table from
-- constraint classes to factories, factory(constraint) -> transform) and its two instances:
-- biject_to(c), a bijective transform from the reals onto c (for HMC-like samplers), and
-- transform_to(c), a transform onto c, not necessarily bijective (for optimizing a
-- constrained parameter through an unconstrained one). PyTorch's table: real -> the
-- identity; positive, nonnegative, greater_than, greater_than_eq -> exp then
-- AffineTransform(lower_bound, 1); less_than -> exp then AffineTransform(upper_bound, -1);
-- interval, half_open_interval -> SigmoidTransform (for [0, 1]) or sigmoid then
-- AffineTransform(lower, upper - lower); simplex -> StickBreakingTransform (biject_to) or
-- SoftmaxTransform (transform_to); lower_cholesky -> LowerCholeskyTransform (transform_to
-- only); corr_cholesky -> CorrCholeskyTransform; independent, cat, stack -> the same of their
-- parts'. registry.register(c, factory) (or registry.register(c)(factory)) adds or replaces
-- the factory of c's class (c a constraint or a constraint class), looked up by the exact
-- class.
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise
local C = require("tide.distributions.constraints")

local function T(name)
    return require("tide.distributions.transforms." .. name)
end

local Registry = {}
Registry.__index = Registry
Registry.__name = "ConstraintRegistry"

-- a constraint class (or an instance's class), or nil
local function class_of(c)
    if type(c) ~= "table" then
        return nil
    end
    local cls = rawget(c, "__index") == c and c or getmetatable(c)
    local k = cls
    while type(k) == "table" do
        if k == C.Constraint then
            return cls
        end
        local mt = getmetatable(k)
        k = mt and rawget(mt, "__index")
    end
    return nil
end

function Registry:register(constraint, factory, ...)
    local who = self._name .. ".register"
    args.no_extra(who, 3, ...)
    local cls = class_of(constraint)
    if not cls or cls == C.Constraint then
        raise(("tide: %s: expected a constraint or a constraint class such as " ..
            "constraints.positive, got %s"):format(who, autograd.is_tensor(constraint) and
            "a tensor" or type(constraint)))
    end
    if factory == nil then -- (PyTorch's decorator form)
        return function(f)
            return self:register(constraint, f)
        end
    end
    if type(factory) ~= "function" then
        raise(("tide: %s: the factory must be a function (constraint) -> transform, got %s")
            :format(who, type(factory)))
    end
    self._registry[cls] = factory
    return factory
end

function Registry:__call(constraint, ...)
    args.no_extra(self._name, 2, ...)
    local cls = class_of(constraint)
    if not cls or cls == constraint then
        raise(("tide: %s: expected a constraint such as constraints.positive, got %s")
            :format(self._name, cls and "a constraint class (make one: call it)" or
            (autograd.is_tensor(constraint) and "a tensor" or type(constraint))))
    end
    local factory = self._registry[cls]
    if not factory then
        raise(("tide: %s: cannot transform %s constraints; register a factory with %s" ..
            ".register(constraint, factory)"):format(self._name, cls.__name, self._name))
    end
    return factory(constraint)
end

function Registry:__tostring()
    return self._name .. "()"
end

local function new(name)
    return setmetatable({ _registry = {}, _name = name }, Registry)
end

-- ConstraintRegistry(): an empty registry
local M = {}
M.ConstraintRegistry = setmetatable({}, { __call = function(_, ...)
    args.no_extra("ConstraintRegistry", 1, ...)
    return new("ConstraintRegistry")
end })

local biject_to = new("biject_to")
local transform_to = new("transform_to")
M.biject_to, M.transform_to = biject_to, transform_to

-- ---- PyTorch's table, in its order (a later registration of a class replaces one before) ----

local function both(c, f)
    biject_to:register(c, f)
    transform_to:register(c, f)
end

both(C.real, function()
    return require("tide.distributions.transforms").identity_transform
end)

biject_to:register(C.independent, function(c)
    return T("IndependentTransform")(biject_to(c.base_constraint), c.reinterpreted_batch_ndims)
end)
transform_to:register(C.independent, function(c)
    return T("IndependentTransform")(transform_to(c.base_constraint),
        c.reinterpreted_batch_ndims)
end)

both(C.positive, function()
    return T("ExpTransform")()
end)
both(C.nonnegative, function()
    return T("ExpTransform")()
end)

-- (positive is a greater_than: this replaces the exp above, as in PyTorch)
local function greater(c)
    return T("ComposeTransform")({ T("ExpTransform")(), T("AffineTransform")(c.lower_bound, 1) })
end
both(C.greater_than, greater)
both(C.greater_than_eq, greater)

both(C.less_than, function(c)
    return T("ComposeTransform")({ T("ExpTransform")(), T("AffineTransform")(c.upper_bound, -1) })
end)

local function interval(c)
    if c.lower_bound == 0 and c.upper_bound == 1 then -- (numbers: the unit interval)
        return T("SigmoidTransform")()
    end
    return T("ComposeTransform")({ T("SigmoidTransform")(),
        T("AffineTransform")(c.lower_bound, c.upper_bound - c.lower_bound) })
end
both(C.interval, interval)
both(C.half_open_interval, interval)

biject_to:register(C.simplex, function()
    return T("StickBreakingTransform")()
end)
transform_to:register(C.simplex, function()
    return T("SoftmaxTransform")()
end)

transform_to:register(C.lower_cholesky, function()
    return T("LowerCholeskyTransform")()
end)

both(C.corr_cholesky, function()
    return T("CorrCholeskyTransform")()
end)

local function parts(reg, cseq)
    local out = {}
    for i, c in ipairs(cseq) do
        out[i] = reg(c)
    end
    return out
end

biject_to:register(C.cat, function(c)
    return T("CatTransform")(parts(biject_to, c.cseq), { dim = c.dim, lengths = c.lengths })
end)
transform_to:register(C.cat, function(c)
    return T("CatTransform")(parts(transform_to, c.cseq), { dim = c.dim, lengths = c.lengths })
end)

biject_to:register(C.stack, function(c)
    return T("StackTransform")(parts(biject_to, c.cseq), { dim = c.dim })
end)
transform_to:register(C.stack, function(c)
    return T("StackTransform")(parts(transform_to, c.cseq), { dim = c.dim })
end)

return M
