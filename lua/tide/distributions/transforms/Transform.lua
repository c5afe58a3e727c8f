-- tide.distributions.transforms.Transform: the base of the transforms, PyTorch 1.13's
-- torch.distributions.transforms.Transform: invertible maps with a computable log |det J|.
-- t(x) (or t:forward(x)) computes y, t.inv is the inverse transform (t.inv.inv is t: t.inv(y)
-- inverts), t:log_abs_det_jacobian(x, y) log |dy/dx|, and the fields domain and codomain (the
-- constraints of x and y), bijective, sign (+1 or -1, or a tensor, for bijective univariate
-- ones), event_dim; forward_shape(shape) and inverse_shape(shape) map shapes (lists).
-- {cache_size = 1} keeps the last x and y: t(x) again returns the same y, t.inv(y) that x
-- (PyTorch's caching, by identity); 0 (the default) keeps nothing. Transforms compare with ==
-- as PyTorch's __eq__ (the same kind, equal parameters).
--
-- A subclass (Transform:extend(name)) defines _call(x), _inverse(y), log_abs_det_jacobian and
-- the fields; a field computed from the instance is a getter: Sub._getters.name = function(self)
-- ... end (PyTorch's properties).
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise

local Transform = {}
Transform.__name = "Transform"
Transform._getters = {}
Transform.bijective = false
Transform._cache_size = 0

-- the getter or the field k of cls or its bases, the nearest first
local function lookup(cls, k)
    local c = cls
    while c do
        local g = rawget(c, "_getters")
        g = g and g[k]
        if g then
            return g, true
        end
        local v = rawget(c, k)
        if v ~= nil then
            return v, false
        end
        c = rawget(c, "_super")
    end
    return nil, false
end

-- the metamethods every class carries (Lua reads them raw, and 5.1 calls __eq only when both
-- sides share one)
local function eq(a, b)
    return a:_eq(b)
end

local function call(self, x)
    return self:forward(x)
end

local function tostr(self)
    return self:_repr()
end

local function setup(cls)
    cls.__index = function(self, k)
        local v, getter = lookup(cls, k)
        if getter then
            return v(self)
        end
        return v
    end
    cls.__call = call
    cls.__eq = eq
    cls.__tostring = tostr
end

local function construct(c, ...)
    local obj = setmetatable({}, c)
    c.init(obj, ...)
    return obj
end

-- Transform:extend(name): a subclass; Sub(...) makes an instance and calls Sub.init(self, ...)
function Transform:extend(name)
    local cls = { __name = name, _super = self, _getters = {} }
    setup(cls)
    return setmetatable(cls, { __index = self, __call = construct })
end

setup(Transform)
setmetatable(Transform, { __call = function()
    raise("tide: Transform: the base class transforms nothing; use ExpTransform, " ..
        "AffineTransform, ... or extend it (Transform:extend(name))")
end })

-- the options {cache_size =} (and `known` more): returns the checked table
function Transform:_options(opts, known, example)
    local names = { "cache_size" }
    for _, k in ipairs(known or {}) do
        names[#names + 1] = k
    end
    local o = args.options(self.__name, opts, names, example or "{cache_size = 1}")
    self:_set_cache(o.cache_size)
    return o
end

function Transform:_set_cache(n)
    n = n == nil and 0 or n
    if n ~= 0 and n ~= 1 then
        raise(("tide: %s: cache_size must be 0 or 1, got %s"):format(self.__name, tostring(n)))
    end
    self._cache_size = n
end

-- a transform without parameters: Sub([{cache_size =}])
function Transform:init(opts, ...)
    args.no_extra(self.__name, 2, ...)
    self:_options(opts)
end

local function not_defined(what)
    return function(self)
        raise(("tide: %s: %s is not defined for this transform"):format(self.__name, what))
    end
end
Transform._call = not_defined("the forward map")
Transform._inverse = not_defined("the inverse map")
Transform.log_abs_det_jacobian = not_defined("log_abs_det_jacobian")
Transform._getters.sign = not_defined("sign")
Transform._getters.domain = not_defined("domain")
Transform._getters.codomain = not_defined("codomain")

Transform._getters.event_dim = function(self)
    local d, c = self.domain.event_dim, self.codomain.event_dim
    if d ~= c then
        raise(("tide: %s: domain and codomain have event dims %d and %d; read " ..
            "domain.event_dim or codomain.event_dim"):format(self.__name, d, c))
    end
    return d
end

-- the inverse transform, made once and kept
Transform._getters.inv = function(self)
    local inv = rawget(self, "_inv_obj")
    if not inv then
        inv = require("tide.distributions.transforms._InverseTransform")(self)
        rawset(self, "_inv_obj", inv)
    end
    return inv
end

-- y = t(x), through the cache when cache_size is 1
function Transform:forward(x)
    self:_tensor(x)
    if self._cache_size == 0 then
        return self:_call(x)
    end
    local c = rawget(self, "_cached")
    if c and rawequal(c[1], x) then
        return c[2]
    end
    local y = self:_call(x)
    rawset(self, "_cached", { x, y })
    return y
end

-- x = t^-1(y), through the cache when cache_size is 1
function Transform:_inv_call(y)
    self:_tensor(y, self.__name .. ".inv")
    if self._cache_size == 0 then
        return self:_inverse(y)
    end
    local c = rawget(self, "_cached")
    if c and rawequal(c[2], y) then
        return c[1]
    end
    local x = self:_inverse(y)
    rawset(self, "_cached", { x, y })
    return x
end

-- the same transform with cache_size n (1 by default); self when it has it already
function Transform:with_cache(n, ...)
    args.no_extra(self.__name .. ".with_cache", 2, ...)
    n = n == nil and 1 or n
    if self._cache_size == n then
        return self
    end
    local cls = getmetatable(self)
    if lookup(cls, "init") ~= Transform.init then
        raise(("tide: %s.with_cache: not defined for this transform; define with_cache in " ..
            "the subclass"):format(self.__name))
    end
    return cls({ cache_size = n })
end

function Transform:_eq(other)
    return rawequal(self, other)
end

-- PyTorch's __eq__ of the parameterless transforms: the same class
function Transform:_same_class(other)
    return getmetatable(self) == getmetatable(other)
end

function Transform:forward_shape(shape)
    return shape
end

function Transform:inverse_shape(shape)
    return shape
end

function Transform:_repr()
    return self.__name .. "()"
end

-- the checked input of a map: a tensor
function Transform:_tensor(x, who)
    if not autograd.is_tensor(x) then
        raise(("tide: %s: expected a tensor, got %s"):format(who or self.__name, type(x)))
    end
    return x
end

-- the checked shape argument: a list of sizes
function Transform:_shape(shape, who)
    if type(shape) ~= "table" or autograd.is_tensor(shape) then
        raise(("tide: %s: the shape must be a list of sizes such as {2, 3}, got %s"):format(who,
            autograd.is_tensor(shape) and "a tensor" or type(shape)))
    end
    return args.check_list(who, shape, "the shape")
end

-- whether v is a transform (an instance of Transform or of a subclass)
function Transform.is_transform(v)
    if type(v) ~= "table" then
        return false
    end
    local c = getmetatable(v)
    while type(c) == "table" do
        if c == Transform then
            return true
        end
        c = rawget(c, "_super")
    end
    return false
end

-- the checked list of transforms (a transform alone is a list of one when single_ok)
function Transform.transform_list(who, list, what)
    if type(list) ~= "table" or getmetatable(list) then
        raise(("tide: %s: %s must be a list of transforms, got %s"):format(who, what,
            Transform.is_transform(list) and "a transform" or type(list)))
    end
    for i = 1, #list do
        if not Transform.is_transform(list[i]) then
            raise(("tide: %s: %s[%d] is no transform (a %s)"):format(who, what, i,
                type(list[i])))
        end
    end
    args.check_list(who, list, what)
    return list
end

Transform._lookup = lookup
return Transform
