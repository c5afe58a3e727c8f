-- tide.distributions.TransformedDistribution(base, transforms): Y = f(X) for X ~ base and f
-- the transforms (a transform or a list, applied in order), PyTorch 1.13's: log p(y) = log
-- p(x) - sum log |det J| along the inverted chain (each summed over the event dims it lacks);
-- cdf and icdf through the base's (flipped where the transforms' signs multiply to -1);
-- sample and rsample draw the base and push the draws through (rsample's gradients reach the
-- parameters when the base's rsample does). The event shape is the largest the transforms
-- make: where their domain has more event dims than the base, the base's batch dims are read
-- as event dims (Independent), and where they broadcast the base's shape, the base is
-- broadcast (expanded) first. Fields base_dist, transforms, has_rsample, batch_shape,
-- event_shape; support() is the last transform's codomain. log_prob checks its values
-- against it, as PyTorch's validate_args does.
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise
local is_tensor = autograd.is_tensor
local Distribution = require("tide.distributions.Distribution")
local Transform = require("tide.distributions.transforms.Transform")
local U = require("tide.distributions.transforms._util")

local TD = Distribution:extend("TransformedDistribution")
TD.arg_constraints = require("tide.distributions._arg_constraints").TransformedDistribution
TD.arg_names = { "base_distribution", "transforms" } -- (PyTorch's, by name too)

local function is_distribution(d)
    return type(d) == "table" and getmetatable(d) ~= nil and type(d.batch_shape) == "table"
        and type(d.event_shape) == "table"
end

-- whether d draws with gradients: its own field, else Independent and _Expanded look through,
-- else whether its class defines rsample
local function has_rsample(d)
    if type(d.has_rsample) == "boolean" then
        return d.has_rsample
    end
    local name = getmetatable(d).__name
    if name == "Independent" or name == "_Expanded" then
        return has_rsample(d.base_dist)
    end
    return d.rsample ~= Distribution.rsample
end
TD._has_rsample = has_rsample

-- a tensor of the distribution (for a number value's dtype and device)
local function like_tensor(d)
    while d do
        for _, name in ipairs(d._params or {}) do
            if is_tensor(d[name]) then
                return d[name]
            end
        end
        for _, v in pairs(d) do
            if is_tensor(v) then
                return v
            end
        end
        d = d.base_dist
    end
end

function TD:init(base, transforms, ...)
    local who = self.__name
    args.no_extra(who, 3, ...)
    if not is_distribution(base) then
        raise(("tide: %s: expected a distribution as the base, got %s"):format(who,
            is_tensor(base) and "a tensor" or type(base)))
    end
    local list
    if Transform.is_transform(transforms) then
        list = { transforms }
    else
        list = {}
        for i, t in ipairs(Transform.transform_list(who, transforms, "transforms")) do
            list[i] = t
        end
    end
    self.transforms = list
    -- the shapes, PyTorch's rules
    local base_shape = U.concat(base.batch_shape, base.event_shape)
    local base_event_dim = #base.event_shape
    local chain = require("tide.distributions.transforms.ComposeTransform")(list)
    local domain_event_dim = chain.domain.event_dim
    if #base_shape < domain_event_dim then
        raise(("tide: %s: the transforms take events of %d dims and the base's shape %s has " ..
            "fewer; give the base more batch dims"):format(who, domain_event_dim,
            U.shape_str(base_shape)))
    end
    local shape = chain:forward_shape(base_shape)
    local expanded = chain:inverse_shape(shape)
    if not U.same_shape(base_shape, expanded) then
        base = require("tide.distributions._expanded")(base, U.drop_last(expanded,
            base_event_dim), who)
    end
    local n = domain_event_dim - base_event_dim
    if n > 0 then
        base = require("tide.distributions.Independent")(base, n)
    end
    self.base_dist = base
    local event_dim = chain.codomain.event_dim + math.max(base_event_dim - domain_event_dim, 0)
    local cut = #shape - event_dim
    local batch, event = {}, {}
    for i, s in ipairs(shape) do
        if i <= cut then
            batch[#batch + 1] = s
        else
            event[#event + 1] = s
        end
    end
    self.batch_shape, self.event_shape = batch, event
    self.has_rsample = has_rsample(base)
end

function TD:support()
    local ts = self.transforms
    if #ts == 0 then
        return self.base_dist:support()
    end
    local support = ts[#ts].codomain
    if #self.event_shape > support.event_dim then
        support = require("tide.distributions.constraints").independent(support,
            #self.event_shape - support.event_dim)
    end
    return support
end

function TD:sample(shape)
    self:extended_shape(shape, self.__name .. ".sample")
    return autograd.no_grad(function()
        local x = self.base_dist:sample(shape)
        for _, t in ipairs(self.transforms) do
            x = t(x)
        end
        return x
    end)
end

function TD:rsample(shape)
    self:extended_shape(shape, self.__name .. ".rsample")
    local x = self.base_dist:rsample(shape)
    for _, t in ipairs(self.transforms) do
        x = t(x)
    end
    return x
end

-- value as a tensor, checked as PyTorch's _validate_sample: the event shape on the right, the
-- batch shape broadcasting, inside the support
function TD:_validate_sample(value, who)
    local like = like_tensor(self)
    if type(value) == "number" and like then
        value = Distribution.value_tensor(self, value, who, like)
    elseif not is_tensor(value) then
        raise(("tide: %s: expected a tensor or a number, got %s"):format(who, type(value)))
    elseif like then
        value = Distribution.value_tensor(self, value, who, like)
    end
    local shape, ev = value:size(), self.event_shape
    local cut = #shape - #ev
    local ok = cut >= 0
    for i = 1, #ev do
        ok = ok and shape[cut + i] == ev[i]
    end
    if not ok then
        raise(("tide: %s: the value's last dims must be the event shape %s, got the shape %s")
            :format(who, U.shape_str(ev), U.shape_str(shape)))
    end
    U.broadcast_shapes(who, U.drop_last(shape, #ev), self.batch_shape)
    local support = self:support()
    Distribution.require(support:check(value), who, "the values must be " .. support:_text())
    return value
end

function TD:log_prob(value)
    local who = self.__name .. ".log_prob"
    value = self:_validate_sample(value, who)
    local event_dim = #self.event_shape
    local lp = 0
    local y = value
    for i = #self.transforms, 1, -1 do
        local t = self.transforms[i]
        local x = t.inv(y)
        event_dim = event_dim + t.domain.event_dim - t.codomain.event_dim
        lp = lp - U.sum_rightmost(t:log_abs_det_jacobian(x, y), event_dim - t.domain.event_dim)
        y = x
    end
    return lp + U.sum_rightmost(self.base_dist:log_prob(y),
        event_dim - #self.base_dist.event_shape)
end

-- value flipped to 1 - value where the transforms' signs multiply to -1 (a monotone cdf)
function TD:_monotonize_cdf(value)
    local sign = 1
    for _, t in ipairs(self.transforms) do
        sign = sign * t.sign
    end
    if type(sign) == "number" and sign == 1 then
        return value
    end
    return (value - 0.5) * sign + 0.5
end

local function value_of(self, value, who)
    if type(value) == "number" then
        local like = like_tensor(self)
        return like and Distribution.value_tensor(self, value, who, like) or value
    end
    if not is_tensor(value) then
        raise(("tide: %s: expected a tensor or a number, got %s"):format(who, type(value)))
    end
    return value
end

function TD:cdf(value)
    value = value_of(self, value, self.__name .. ".cdf")
    for i = #self.transforms, 1, -1 do
        value = self.transforms[i].inv(value)
    end
    return self:_monotonize_cdf(self.base_dist:cdf(value))
end

function TD:icdf(value)
    value = value_of(self, value, self.__name .. ".icdf")
    value = self.base_dist:icdf(self:_monotonize_cdf(value))
    for _, t in ipairs(self.transforms) do
        value = t(value)
    end
    return value
end

local function not_defined(what)
    return function(self)
        raise(("tide: %s: %s is not defined for this distribution"):format(self.__name, what))
    end
end
TD.mean = not_defined("mean")
TD.variance = not_defined("variance")

function TD:stddev()
    return self:variance():sqrt()
end

function TD:__tostring()
    if self._params then
        return Distribution.__tostring(self)
    end
    return ("%s(%s, %d transforms)"):format(self.__name, tostring(self.base_dist),
        #self.transforms)
end

TD.is_distribution = is_distribution
return TD
