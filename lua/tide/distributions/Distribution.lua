-- tide.distributions.Distribution: the base of the distributions. A subclass (made with
-- Distribution:extend(name)) sets self.batch_shape and self.event_shape in init, and defines
-- rsample(shape) or sample(shape), log_prob(value), entropy(), and the moments as methods
-- (mean(), stddev(), variance(); PyTorch's properties). sample(shape) defaults to rsample
-- without recording. `shape`, the sample shape, is a list of sizes (default {}): a draw has the
-- shape sample_shape .. batch_shape .. event_shape.
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise
local is_tensor = autograd.is_tensor
local compat = require("tide._compat")
local P = require("tide.pytorch_args")

local Distribution = {}
Distribution.__index = Distribution
Distribution.__name = "Distribution"

-- PyTorch's positional tensor parameters of the classes whose init takes them in an options
-- table: cls.positional_params = {after = k, names = {...}} reads the arguments after the k
-- first as names[1], names[2], ... while they are tensors or numbers (nil holds a place), then
-- an options table for the rest: Categorical(p) is Categorical({probs = p}), Binomial(10, p,
-- {validate_args = false}) is Binomial(10, {probs = p, validate_args = false}),
-- Categorical(nil, l) is Categorical({logits = l}). A name given both ways raises; a table in
-- the first place is today's options form, passed on as it is.
local function merge_params(c, ...)
    local spec = c.positional_params
    local n, a = select("#", ...), { ... }
    local k, names = spec.after, spec.names
    local first = a[k + 1]
    if type(first) == "table" and not is_tensor(first) then
        return ...
    end
    local given, any, at = {}, false, k + 1
    for i, name in ipairs(names) do
        local v = a[k + i]
        if v ~= nil and not (is_tensor(v) or type(v) == "number") then
            break
        end
        given[name], any, at = v, any or v ~= nil, k + i + 1
    end
    if not any then
        return ...
    end
    local opts = a[at]
    if opts ~= nil and (type(opts) ~= "table" or is_tensor(opts)) then
        return ... -- (init names what is wrong)
    end
    local merged = {}
    for key, v in pairs(opts or {}) do
        merged[key] = v
    end
    for _, name in ipairs(names) do
        if given[name] ~= nil then
            if merged[name] ~= nil then
                P.twice(c.__name, name, k + P.position(names, name))
            end
            merged[name] = given[name]
        end
    end
    -- nothing may follow the options table (counted as the user wrote the call)
    args.no_extra(c.__name, at, compat.unpack(a, at + 1, n))
    local out = {}
    for i = 1, k do
        out[i] = a[i]
    end
    out[k + 1] = merged
    for i = at + 1, n do
        out[k + 2 + i - at - 1] = a[i]
    end
    return compat.unpack(out, 1, k + 1 + math.max(0, n - at))
end

-- PyTorch's leading parameters by name: cls.arg_names = {names..., options = true when init
-- takes an options table after them} reads them from a trailing table, as Python's keywords:
-- Normal({loc = 0, scale = 1}), Independent(base, {reinterpreted_batch_ndims = 1}),
-- MultivariateNormal({loc = m, scale_tril = L}). validate_args is accepted (tide checks always).
local function lift_names(c, names, ...)
    local n, a = select("#", ...), { ... }
    local t = a[n]
    if n == 0 or n > #names + 1 or not P.is_options(t) then
        return ...
    end
    local rest, lifted = {}, false
    for key, v in pairs(t) do
        rest[key] = v
    end
    for i, name in ipairs(names) do
        if rest[name] ~= nil then
            if i < n and a[i] ~= nil then
                if names.options then
                    return compat.unpack(a, 1, n) -- (init's own "unknown option")
                end
                P.twice(c.__name, name, i)
            end
            a[i], rest[name], lifted = rest[name], nil, true
        elseif i >= n then
            a[i] = nil
        end
    end
    if not lifted and (names.options or next(t) == nil and n <= #names) then
        return ... -- (a table in a parameter's place: init names what is wrong)
    end
    if names.options then
        a[#names + 1] = rest
        return compat.unpack(a, 1, #names + 1)
    end
    for key, v in pairs(rest) do
        if key ~= "validate_args" or (v ~= nil and type(v) ~= "boolean") then
            raise(("tide: %s: unknown option %s; it takes %s and validate_args"):format(
                c.__name, tostring(key), table.concat(names, ", ")))
        end
    end
    return compat.unpack(a, 1, #names)
end

-- PyTorch's validate_args by position, its last parameter (Normal(loc, scale, True)): a
-- trailing boolean after at least one argument becomes {validate_args = b}, merged into an
-- options table just before it (given both ways, it raises)
local function trailing_validate(c, ...)
    local n = select("#", ...)
    if n < 2 or type((select(n, ...))) ~= "boolean" then
        return ...
    end
    local a = { ... }
    local last, opts = a[n], a[n - 1]
    if P.is_options(opts) then
        if opts.validate_args ~= nil then
            P.twice(c.__name, "validate_args", n)
        end
        local merged = { validate_args = last }
        for key, v in pairs(opts) do
            merged[key] = v
        end
        a[n - 1] = merged
        return compat.unpack(a, 1, n - 1)
    end
    a[n] = { validate_args = last }
    return compat.unpack(a, 1, n)
end

-- PyTorch's validate_args = false: the parameter checks (Distribution.require) skipped while
-- such a distribution is built; Distribution.set_default_validate_args(false) skips every check
-- (Distribution._validate_args, PyTorch's class attribute, true by default as 1.13's __debug__;
-- setting it directly does the same)
local unvalidated = 0
Distribution._validate_args = true

local function without_checks(c, ...)
    unvalidated = unvalidated + 1
    local ok, obj = pcall(c._call, c, ...)
    unvalidated = unvalidated - 1
    if not ok then
        error(obj, 0)
    end
    return obj
end

local function construct(c, ...)
    local n = select("#", ...)
    local last = n > 0 and select(n, ...) or nil
    if type(last) == "table" and not is_tensor(last) and rawget(last, "validate_args") == false then
        return without_checks(c, ...)
    end
    return c._call(c, ...)
end

-- PyTorch's Distribution.set_default_validate_args(value): whether checks run by default
function Distribution.set_default_validate_args(value, ...)
    args.no_extra("set_default_validate_args", 1, ...)
    if type(value) ~= "boolean" then
        raise(("tide: set_default_validate_args: expected a boolean, got %s"):format(type(value)))
    end
    Distribution._validate_args = value
end

-- Distribution:extend(name): a subclass; Sub(...) makes an instance and calls Sub.init(self, ...)
function Distribution:extend(name)
    local cls = setmetatable({}, { __index = self, __call = function(c, ...)
        return construct(c, trailing_validate(c, ...))
    end })
    rawset(cls, "_call", function(c, ...)
        local obj = setmetatable({}, c)
        local names = rawget(c, "arg_names")
        if names then
            if c.positional_params then
                c.init(obj, merge_params(c, lift_names(c, names, ...)))
            else
                c.init(obj, lift_names(c, names, ...))
            end
            return obj
        end
        if c.positional_params then
            c.init(obj, merge_params(c, ...))
        else
            c.init(obj, ...)
        end
        return obj
    end)
    cls.__index = cls
    cls.__name = name
    cls.__tostring = Distribution.__tostring
    return cls
end

function Distribution:init()
    raise("tide: Distribution: the base class has no parameters; use Normal, Categorical, " ..
        "Bernoulli or Uniform, or extend it")
end

local function not_defined(what)
    return function(self)
        raise(("tide: %s: %s is not defined for this distribution"):format(self.__name, what))
    end
end
Distribution.rsample = not_defined("rsample (the draw is not differentiable; use sample)")
Distribution.log_prob = not_defined("log_prob")
Distribution.entropy = not_defined("entropy")
Distribution.cdf = not_defined("cdf")
Distribution.icdf = not_defined("icdf")
-- PyTorch's base properties raise NotImplementedError where a family defines none
Distribution.mean = not_defined("mean")
Distribution.variance = not_defined("variance")
Distribution.mode = not_defined("mode")

-- PyTorch's class field: whether enumerate_support() lists the values (Bernoulli,
-- Categorical, Binomial, OneHotCategorical); their arg_constraints are in each class file
Distribution.has_enumerate_support = false

-- PyTorch's perplexity(): the exponential of the entropy
function Distribution:perplexity()
    return self:entropy():exp()
end

-- PyTorch's base stddev: the square root of the variance
function Distribution:stddev()
    return self:variance():sqrt()
end

-- PyTorch's param_shape of the probs/logits families: the shape of the parameters
function Distribution:param_shape()
    local p = self.probs or self.logits
    if not is_tensor(p) then
        raise(("tide: %s: param_shape is not defined for this distribution (no probs or " ..
            "logits)"):format(self.__name))
    end
    return p:size()
end

-- d:enumerate_support([expand = true]) (or {expand =}): every value of the support along a
-- new first dim, shape {n, 1..., event} (batch dims as 1s) or expanded to {n, batch, event};
-- `values` the list as a tensor {n, event...}, event_nd its event dims
function Distribution:_enumerate(values, event_nd, expand)
    local who = self.__name .. ".enumerate_support"
    if type(expand) == "table" and not is_tensor(expand) then
        for key in pairs(expand) do
            if key ~= "expand" then
                raise(("tide: %s: unknown option %s; it takes expand"):format(who, tostring(key)))
            end
        end
        expand = expand.expand
    end
    if expand ~= nil and type(expand) ~= "boolean" then
        raise(("tide: %s: expand must be true or false, got %s"):format(who, type(expand)))
    end
    local vs, shape, full = values:size(), { values:size(1) }, { values:size(1) }
    for _, s in ipairs(self.batch_shape) do
        shape[#shape + 1], full[#full + 1] = 1, s
    end
    for i = 2, 1 + event_nd do
        shape[#shape + 1], full[#full + 1] = vs[i], vs[i]
    end
    values = values:reshape(shape)
    return expand == false and values or values:expand(full)
end

-- the constraint the values lie in (PyTorch's support property, a method here as the moments):
-- a tide.distributions.constraints object; the families' own in tide.distributions._support
function Distribution:support()
    return require("tide.distributions._support")(self)
end

function Distribution:sample(shape)
    self:extended_shape(shape, self.__name .. ".sample") -- (its errors named as this call)
    return autograd.no_grad(function()
        return self:rsample(shape)
    end)
end

-- the full shape of a draw: sample_shape .. batch_shape .. event_shape
function Distribution:extended_shape(shape, who)
    who = who or self.__name .. ".sample"
    if shape ~= nil and (type(shape) ~= "table" or is_tensor(shape)) then
        raise(("tide: %s: the sample shape must be a list of sizes such as {10}, got %s")
            :format(who, is_tensor(shape) and "a tensor" or type(shape)))
    end
    if shape ~= nil and shape[1] == nil and next(shape) ~= nil then -- {sample_shape =}, by name
        for key in pairs(shape) do
            if key ~= "sample_shape" then
                raise(("tide: %s: unknown option %s; it takes sample_shape"):format(who,
                    tostring(key)))
            end
        end
        return self:extended_shape(shape.sample_shape, who)
    end
    local out = {}
    for i, s in ipairs(shape or {}) do
        out[i] = args.integer(who, s, "a sample size")
    end
    for _, s in ipairs(self.batch_shape) do
        out[#out + 1] = s
    end
    for _, s in ipairs(self.event_shape) do
        out[#out + 1] = s
    end
    return out
end

-- d:expand(batch_shape): PyTorch's, for the families without an expand of their own: the
-- distribution with its batch broadcast to batch_shape (tide.distributions._expanded: draws,
-- log_prob, cdf, icdf, entropy and the moments of the new shape), an instance of that wrapper
-- rather than of d's class; the families with their own (Categorical, ...) keep theirs
function Distribution:expand(batch_shape, ...)
    local who = self.__name .. ":expand"
    if select("#", ...) > 0 and select(1, ...) ~= nil then -- PyTorch's private _instance
        raise(("tide: %s: expected (batch_shape), got %d more argument(s)"):format(who,
            select("#", ...)))
    end
    if type(batch_shape) == "table" and batch_shape.batch_shape ~= nil then
        batch_shape = batch_shape.batch_shape -- {batch_shape = ...}, PyTorch's keyword
    end
    if type(batch_shape) ~= "table" then
        raise(("tide: %s: batch_shape must be a list of sizes, got %s"):format(who,
            type(batch_shape)))
    end
    local shape = {}
    for i = 1, #batch_shape do
        shape[i] = batch_shape[i]
    end
    return require("tide.distributions._expanded")(self, shape, who)
end

function Distribution:__tostring()
    local parts = {}
    for _, name in ipairs(self._params or {}) do
        local v = self[name]
        parts[#parts + 1] = name .. ": " .. args.shape_str(v:size())
    end
    return self.__name .. "(" .. table.concat(parts, ", ") .. ")"
end

-- ---- helpers of the subclasses ----

-- the parameters as tensors of one dtype and device, broadcast to one shape: numbers take the
-- dtype and device of the tensors among them (float32 on the cpu when none is)
function Distribution.broadcast_params(who, names, values)
    local like
    for i = 1, #names do -- (not ipairs: a missing parameter is a hole in values)
        local v = values[i]
        if is_tensor(v) then
            like = like or v
        elseif type(v) ~= "number" then
            raise(("tide: %s: %s must be a tensor or a number, got %s"):format(who, names[i],
                type(v)))
        end
    end
    local dtype = like and like.dtype or core.get_default_dtype()
    if not args.FLOAT[dtype] then
        raise(("tide: %s: %s must be floating-point, got %s"):format(who, names[1], dtype))
    end
    local opts = { dtype = dtype, device = like and like.device or nil }
    local out = {}
    for i = 1, #names do
        local v = values[i]
        if is_tensor(v) then
            if v.device ~= like.device then
                raise(("tide: %s: %s is on %s and %s on %s; move one with :to(\"%s\")")
                    :format(who, names[1], tostring(like.device), names[i], tostring(v.device),
                    tostring(like.device)))
            end
            out[i] = v.dtype == dtype and v or v:to(dtype)
        else
            out[i] = core.full({}, v, opts)
        end
    end
    local shape = out[1]:detach()
    for i = 2, #out do
        shape = shape + out[i]:detach()
    end
    shape = shape:size()
    for i = 1, #out do
        out[i] = out[i]:expand(shape)
    end
    return out, shape
end

-- raises unless ok (a bool tensor) holds everywhere: the validation PyTorch's validate_args does
function Distribution.require(ok, who, what)
    if unvalidated > 0 or not Distribution._validate_args then
        return
    end
    if ok:numel() > 0 and not ok:all():item() then
        raise(("tide: %s: %s"):format(who, what))
    end
end

-- value as a tensor on the distribution's device (a number in its dtype)
function Distribution:value_tensor(value, who, like)
    if type(value) == "table" and not is_tensor(value) and value.value ~= nil
        and next(value, next(value)) == nil then
        value = value.value -- (PyTorch's keyword: log_prob({value = x}))
    end
    if type(value) == "number" then
        return core.full({}, value, { dtype = like.dtype, device = like.device })
    elseif not is_tensor(value) then
        raise(("tide: %s: expected a tensor or a number, got %s"):format(who, type(value)))
    end
    if value.device ~= like.device then
        raise(("tide: %s: the value is on %s and the distribution on %s; move it with " ..
            ":to(\"%s\")"):format(who, tostring(value.device), tostring(like.device),
            tostring(like.device)))
    end
    if Distribution._validate_args and (who:find("%.log_prob$") or who:find("%.cdf$")) then
        self:_validate_shape(value, who)
    end
    return value
end

local function size_str(s)
    local o = {}
    for i, n in ipairs(s) do
        o[i] = tostring(n)
    end
    return "[" .. table.concat(o, ", ") .. "]"
end

-- PyTorch's _validate_sample shape check: a value whose last dims are the event shape
-- broadcasts with batch_shape .. event_shape
function Distribution:_validate_shape(value, who)
    local vs, bs, es = value:size(), self.batch_shape, self.event_shape
    if type(bs) ~= "table" or type(es) ~= "table" then
        return
    end
    local nv, ne = #vs, #es
    local ok = nv >= ne
    for i = 1, ne do
        ok = ok and vs[nv - ne + i] == es[i]
    end
    if not ok then
        return -- (each family names its event shape: "the values must be one-hot vectors of 2")
    end
    local full = {}
    for i, n in ipairs(bs) do
        full[i] = n
    end
    for i = 1, ne do
        full[#full + 1] = es[i]
    end
    for k = 0, math.min(nv, #full) - 1 do
        local a, b = vs[nv - k], full[#full - k]
        if a ~= 1 and b ~= 1 and a ~= b then
            raise(("tide: %s: Value is not broadcastable with batch_shape+event_shape: %s " ..
                "vs %s."):format(who, size_str(vs), size_str(full)))
        end
    end
end

-- Distribution(...) itself: its init says what to use instead (a call, not Lua's "attempt to
-- call a table value")
setmetatable(Distribution, { __call = function(c, ...)
    local obj = setmetatable({}, c)
    c.init(obj, ...)
    return obj
end })

return Distribution
