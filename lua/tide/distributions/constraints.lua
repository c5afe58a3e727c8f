-- tide.distributions.constraints: PyTorch 1.13's torch.distributions.constraints, the regions
-- a value may lie in: objects with check(value) (a bool tensor of the value's shape less the
-- constraint's event_dim rightmost dims: true where the event is valid), event_dim and
-- is_discrete. The singletons (real, positive, unit_interval, simplex, lower_cholesky, ...)
-- are instances; the parametrized ones (greater_than(b), interval(a, b), independent(c, n),
-- cat, stack, ...) are classes, called to make one. Bounds are numbers or tensors (a tensor
-- bound broadcasts against the value). A constraint's class is what biject_to and
-- transform_to look up (tide.distributions.constraint_registry). The classes are small, so
-- they share this file, as PyTorch's do. Constraint:extend(name) makes one's own.
local autograd = require("tide.autograd")
local core = require("tide.core")
local args = require("tide.op_args")
local raise = autograd.raise
local is_tensor = autograd.is_tensor

local C = {}

local function construct(c, ...)
    local obj = setmetatable({}, c)
    c.init(obj, ...)
    return obj
end

local function tostr(self)
    return self:_repr()
end

local Constraint = {}
Constraint.__index = Constraint
Constraint.__name = "Constraint"
Constraint.__tostring = tostr
Constraint.is_discrete = false
Constraint.event_dim = 0

-- Constraint:extend(name): a subclass; Sub(...) makes an instance and calls Sub.init(self, ...)
function Constraint:extend(name)
    local cls = setmetatable({}, { __index = self, __call = construct })
    cls.__index = cls
    cls.__name = name
    cls.__tostring = tostr
    return cls
end

function Constraint:init(...)
    args.no_extra(self.__name, 1, ...)
end

function Constraint:check()
    raise(("tide: %s.check: not defined for this constraint"):format(self.__name))
end

function Constraint:_repr()
    return self.__name .. "()"
end

-- what a valid value is, for error texts ("the values must be <text>")
function Constraint:_text()
    return "inside " .. tostring(self)
end

-- the value checked to be a tensor (the constraints compare tensors)
function Constraint:_value(value)
    if not is_tensor(value) then
        raise(("tide: %s.check: expected a tensor, got %s"):format(self.__name, type(value)))
    end
    return value
end

setmetatable(Constraint, { __call = function()
    raise("tide: Constraint: the base class constrains nothing; use the constraints of " ..
        "tide.distributions.constraints (real, positive, interval(a, b), ...) or extend it")
end })
C.Constraint = Constraint

local function bound(who, name, v)
    if type(v) ~= "number" and not is_tensor(v) then
        raise(("tide: %s: %s must be a number or a tensor, got %s"):format(who, name, type(v)))
    end
    return v
end

local function num(v)
    if is_tensor(v) then
        return v:numel() == 1 and ("%g"):format(v:item()) or "a tensor"
    end
    return ("%g"):format(v)
end

local function integral(value)
    if args.FLOAT[value.dtype] then
        return value:remainder(1):eq(0)
    end
    return value:eq(value)
end

-- ---- the dependent placeholder ----

local Dependent = Constraint:extend("Dependent")
Dependent.event_dim = nil -- (unknown statically)
Dependent.is_discrete = nil
function Dependent:check()
    raise("tide: Dependent.check: cannot determine the validity of a dependent constraint")
end
C.dependent = Dependent()

-- is_dependent(c): whether c is the dependent placeholder
function C.is_dependent(c)
    return getmetatable(c) == Dependent
end

-- ---- independent(c, n): c over n more rightmost dims ----

local Independent = Constraint:extend("IndependentConstraint")
function Independent:init(base, n, ...)
    local who = "constraints.independent"
    args.no_extra(who, 3, ...)
    if type(base) ~= "table" or not base.check then
        raise(("tide: %s: expected a constraint as the base, got %s"):format(who, type(base)))
    end
    if not require("tide._compat").is_integer(n) or n < 0 then
        raise(("tide: %s: reinterpreted_batch_ndims must be an integer >= 0, got %s")
            :format(who, tostring(n)))
    end
    self.base_constraint, self.reinterpreted_batch_ndims = base, n
    self.is_discrete = base.is_discrete
    self.event_dim = base.event_dim + n
end
function Independent:check(value)
    local result = self.base_constraint:check(self:_value(value))
    local n = self.reinterpreted_batch_ndims
    if result:dim() < n then
        raise(("tide: %s.check: expected a value of at least %d dims, got %d"):format(
            self.__name, self.event_dim, value:dim()))
    end
    if n == 0 then
        return result
    end
    local shape = result:size()
    local keep = {}
    for i = 1, #shape - n do
        keep[i] = shape[i]
    end
    keep[#keep + 1] = -1
    return result:reshape(keep):all(-1)
end
function Independent:_repr()
    return ("IndependentConstraint(%s, %d)"):format(tostring(self.base_constraint),
        self.reinterpreted_batch_ndims)
end
function Independent:_text()
    return self.base_constraint:_text()
end
C.independent = Independent

-- ---- discrete ----

local Boolean = Constraint:extend("Boolean")
Boolean.is_discrete = true
function Boolean:check(value)
    value = self:_value(value)
    return value:eq(0):logical_or(value:eq(1))
end
function Boolean:_text()
    return "0 or 1"
end
C.boolean = Boolean()

local OneHot = Constraint:extend("OneHot")
OneHot.is_discrete = true
OneHot.event_dim = 1
function OneHot:check(value)
    value = self:_value(value)
    local is_boolean = value:eq(0):logical_or(value:eq(1))
    return is_boolean:all(-1):logical_and(value:sum(-1):eq(1))
end
function OneHot:_text()
    return "one-hot vectors"
end
C.one_hot = OneHot()

local IntegerInterval = Constraint:extend("IntegerInterval")
IntegerInterval.is_discrete = true
function IntegerInterval:init(lower_bound, upper_bound, ...)
    local who = "constraints.integer_interval"
    args.no_extra(who, 3, ...)
    self.lower_bound = bound(who, "lower_bound", lower_bound)
    self.upper_bound = bound(who, "upper_bound", upper_bound)
end
function IntegerInterval:check(value)
    value = self:_value(value)
    return integral(value):logical_and(value:ge(self.lower_bound))
        :logical_and(value:le(self.upper_bound))
end
function IntegerInterval:_repr()
    return ("IntegerInterval(lower_bound=%s, upper_bound=%s)"):format(num(self.lower_bound),
        num(self.upper_bound))
end
function IntegerInterval:_text()
    return ("integers in [%s, %s]"):format(num(self.lower_bound), num(self.upper_bound))
end
C.integer_interval = IntegerInterval

local IntegerGreaterThan = Constraint:extend("IntegerGreaterThan")
IntegerGreaterThan.is_discrete = true
function IntegerGreaterThan:init(lower_bound, ...)
    args.no_extra("IntegerGreaterThan", 2, ...)
    self.lower_bound = bound("IntegerGreaterThan", "lower_bound", lower_bound)
end
function IntegerGreaterThan:check(value)
    value = self:_value(value)
    return integral(value):logical_and(value:ge(self.lower_bound))
end
function IntegerGreaterThan:_repr()
    return ("IntegerGreaterThan(lower_bound=%s)"):format(num(self.lower_bound))
end
function IntegerGreaterThan:_text()
    return ("integers >= %s"):format(num(self.lower_bound))
end
C.nonnegative_integer = IntegerGreaterThan(0)
C.positive_integer = IntegerGreaterThan(1)

-- ---- real ----

local Real = Constraint:extend("Real")
function Real:check(value)
    value = self:_value(value)
    return value:eq(value) -- (false for NaN)
end
function Real:_text()
    return "real numbers (not NaN)"
end
C.real = Real()
C.real_vector = Independent(C.real, 1)

-- the half lines and intervals: fields, a comparison and a text
local function half_line(name, public, field, op, sym)
    local cls = Constraint:extend(name)
    local who = "constraints." .. public
    function cls:init(b, ...)
        args.no_extra(who, 2, ...)
        self[field] = bound(who, field, b)
    end
    function cls:check(value)
        value = self:_value(value)
        return value[op](value, self[field])
    end
    function cls:_repr()
        return ("%s(%s=%s)"):format(name, field, num(self[field]))
    end
    function cls:_text()
        if op == "gt" and type(self[field]) == "number" and self[field] == 0 then
            return "positive"
        end
        local b = self[field]
        if is_tensor(b) and b:numel() > 1 then
            return sym .. " the " .. (field == "lower_bound" and "lower" or "upper") .. " bound"
        end
        return sym .. " " .. num(b)
    end
    return cls
end

C.greater_than = half_line("GreaterThan", "greater_than", "lower_bound", "gt", ">")
C.greater_than_eq = half_line("GreaterThanEq", "greater_than_eq", "lower_bound", "ge", ">=")
C.less_than = half_line("LessThan", "less_than", "upper_bound", "lt", "<")
C.positive = C.greater_than(0)
C.nonnegative = C.greater_than_eq(0)

local function interval(name, upper_op, close)
    local cls = Constraint:extend(name)
    local who = "constraints." .. (name == "Interval" and "interval" or "half_open_interval")
    function cls:init(lower_bound, upper_bound, ...)
        args.no_extra(who, 3, ...)
        self.lower_bound = bound(who, "lower_bound", lower_bound)
        self.upper_bound = bound(who, "upper_bound", upper_bound)
    end
    function cls:check(value)
        value = self:_value(value)
        return value:ge(self.lower_bound):logical_and(value[upper_op](value, self.upper_bound))
    end
    function cls:_repr()
        return ("%s(lower_bound=%s, upper_bound=%s)"):format(name, num(self.lower_bound),
            num(self.upper_bound))
    end
    function cls:_text()
        return ("in [%s, %s%s"):format(num(self.lower_bound), num(self.upper_bound), close)
    end
    return cls
end

C.interval = interval("Interval", "le", "]")
C.half_open_interval = interval("HalfOpenInterval", "lt", ")")
C.unit_interval = C.interval(0, 1)

-- ---- vectors and matrices ----

local Simplex = Constraint:extend("Simplex")
Simplex.event_dim = 1
function Simplex:check(value)
    value = self:_value(value)
    return value:ge(0):all(-1):logical_and((value:sum(-1) - 1):abs():lt(1e-6))
end
function Simplex:_text()
    return "on the simplex (>= 0, summing to 1 along the last dim)"
end
C.simplex = Simplex()

local Multinomial = Constraint:extend("Multinomial")
Multinomial.is_discrete = true
Multinomial.event_dim = 1
function Multinomial:init(upper_bound, ...)
    args.no_extra("constraints.multinomial", 2, ...)
    self.upper_bound = bound("constraints.multinomial", "upper_bound", upper_bound)
end
function Multinomial:check(value)
    value = self:_value(value)
    return value:ge(0):all(-1):logical_and(value:sum(-1):le(self.upper_bound))
end
function Multinomial:_text()
    return ("counts >= 0 summing to at most %s"):format(num(self.upper_bound))
end
C.multinomial = Multinomial

local function matrix(who, value)
    if value:dim() < 2 then
        raise(("tide: %s.check: expected matrices (at least 2 dims), got %d dims")
            :format(who, value:dim()))
    end
end

-- true where each matrix of value holds everywhere in ok (a bool tensor of value's shape)
local function all_matrix(ok)
    return ok:all(-1):all(-1)
end

local LowerTriangular = Constraint:extend("LowerTriangular")
LowerTriangular.event_dim = 2
function LowerTriangular:check(value)
    value = self:_value(value)
    matrix(self.__name, value)
    return all_matrix(value:tril():eq(value))
end
function LowerTriangular:_text()
    return "lower-triangular matrices"
end
C.lower_triangular = LowerTriangular()

local LowerCholesky = Constraint:extend("LowerCholesky")
LowerCholesky.event_dim = 2
function LowerCholesky:check(value)
    value = self:_value(value)
    matrix(self.__name, value)
    local lower = all_matrix(value:tril():eq(value))
    return lower:logical_and(value:diagonal(0, -2, -1):gt(0):all(-1))
end
function LowerCholesky:_text()
    return "lower-triangular matrices with a positive diagonal"
end
C.lower_cholesky = LowerCholesky()

local EPS = require("tide.distributions.transforms._util").EPS

local CorrCholesky = Constraint:extend("CorrCholesky")
CorrCholesky.event_dim = 2
function CorrCholesky:check(value)
    value = self:_value(value)
    matrix(self.__name, value)
    local n = value:size()
    local tol = (EPS[value.dtype] or 0) * n[#n] * 10 -- (PyTorch's fudge factor, 10)
    local row_norm = require("tide.linalg").vector_norm(value:detach(), { dim = -1 })
    local unit = (row_norm - 1):abs():le(tol):all(-1)
    return LowerCholesky.check(self, value):logical_and(unit)
end
function CorrCholesky:_text()
    return "Cholesky factors of correlation matrices (lower-triangular, positive diagonal, " ..
        "rows of unit norm)"
end
C.corr_cholesky = CorrCholesky()

local Square = Constraint:extend("Square")
Square.event_dim = 2
function Square:check(value)
    value = self:_value(value)
    matrix(self.__name, value)
    local s = value:size()
    local batch = {}
    for i = 1, #s - 2 do
        batch[i] = s[i]
    end
    return core.full(batch, s[#s - 1] == s[#s] and 1 or 0, { dtype = "bool",
        device = value.device })
end
function Square:_text()
    return "square matrices"
end
C.square = Square()

local Symmetric = Square:extend("Symmetric")
function Symmetric:check(value)
    local sq = Square.check(self, value)
    if not sq:all():item() then
        return sq
    end
    return all_matrix(value:isclose(value:transpose(-2, -1), 1e-5, 1e-6))
end
function Symmetric:_text()
    return "symmetric matrices"
end
C.symmetric = Symmetric()

local PositiveSemidefinite = Symmetric:extend("PositiveSemidefinite")
function PositiveSemidefinite:check(value)
    local sym = Symmetric.check(self, value)
    if not sym:all():item() then
        return sym
    end
    return require("tide.linalg").eigvalsh(value):ge(0):all(-1)
end
function PositiveSemidefinite:_text()
    return "positive semidefinite matrices"
end
C.positive_semidefinite = PositiveSemidefinite()

local PositiveDefinite = Symmetric:extend("PositiveDefinite")
function PositiveDefinite:check(value)
    local sym = Symmetric.check(self, value)
    if not sym:all():item() then
        return sym
    end
    local _, info = require("tide.linalg").cholesky_ex(value)
    return info:eq(0)
end
function PositiveDefinite:_text()
    return "positive definite matrices"
end
C.positive_definite = PositiveDefinite()

-- ---- cat and stack: constraints side by side along a dim (1-based, negative from the end) ----

local function constraint_list(who, cseq)
    if type(cseq) ~= "table" or getmetatable(cseq) or #cseq == 0 then
        raise(("tide: %s: expected a list of constraints, got %s"):format(who, type(cseq)))
    end
    for i, c in ipairs(cseq) do
        if type(c) ~= "table" or not c.check then
            raise(("tide: %s: element %d is no constraint (a %s)"):format(who, i, type(c)))
        end
    end
    return cseq
end

local function dim_of(who, value, dim)
    local n = value:dim()
    if dim < -n or dim > n or dim == 0 then
        raise(("tide: %s.check: dim %d is out of range for a value of %d dims"):format(who,
            dim, n))
    end
    return dim
end

local Cat = Constraint:extend("Cat")
function Cat:init(cseq, opts, ...)
    local who = "constraints.cat"
    args.no_extra(who, 3, ...)
    self.cseq = constraint_list(who, cseq)
    local o = args.options(who, opts, { "dim", "lengths" }, "{dim = 1, lengths = {2, 3}}")
    self.dim = o.dim == nil and 1 or args.integer(who, o.dim, "dim")
    if self.dim == 0 then
        raise(("tide: %s: dim = 0; dims are 1-based (1 the first, -1 the last)"):format(who))
    end
    local lengths = o.lengths
    if lengths == nil then
        lengths = {}
        for i = 1, #cseq do
            lengths[i] = 1
        end
    elseif type(lengths) ~= "table" or #lengths ~= #cseq then
        raise(("tide: %s: lengths must be a list of %d sizes, one a constraint"):format(who,
            #cseq))
    end
    self.lengths = lengths
    local ed, disc = 0, false
    for _, c in ipairs(cseq) do
        ed = math.max(ed, c.event_dim)
        disc = disc or c.is_discrete
    end
    self.event_dim, self.is_discrete = ed, disc
end
function Cat:check(value)
    value = self:_value(value)
    local dim = dim_of(self.__name, value, self.dim)
    local checks, start = {}, 1
    for i, c in ipairs(self.cseq) do
        checks[i] = c:check(value:narrow(dim, start, self.lengths[i]))
        start = start + self.lengths[i]
    end
    return core.cat(checks, dim)
end
C.cat = Cat

local Stack = Constraint:extend("Stack")
function Stack:init(cseq, opts, ...)
    local who = "constraints.stack"
    args.no_extra(who, 3, ...)
    self.cseq = constraint_list(who, cseq)
    local o = args.options(who, opts, { "dim" }, "{dim = 1}")
    self.dim = o.dim == nil and 1 or args.integer(who, o.dim, "dim")
    if self.dim == 0 then
        raise(("tide: %s: dim = 0; dims are 1-based (1 the first, -1 the last)"):format(who))
    end
    local ed, disc = 0, false
    for _, c in ipairs(cseq) do
        ed = math.max(ed, c.event_dim)
        disc = disc or c.is_discrete
    end
    -- (PyTorch's: a dim counted from the end past the events adds one)
    local d0 = self.dim > 0 and self.dim - 1 or self.dim
    if d0 + ed < 0 then
        ed = ed + 1
    end
    self.event_dim, self.is_discrete = ed, disc
end
function Stack:check(value)
    value = self:_value(value)
    local dim = dim_of(self.__name, value, self.dim)
    local checks = {}
    for i = 1, value:size(dim) do
        local c = self.cseq[i]
        if not c then
            raise(("tide: %s.check: the value has %d entries along dim %d and the stack %d " ..
                "constraints"):format(self.__name, value:size(dim), dim, #self.cseq))
        end
        checks[i] = c:check(value:select(dim, i))
    end
    return core.stack(checks, dim)
end
C.stack = Stack

return C
