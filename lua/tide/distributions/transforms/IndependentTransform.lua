-- tide.distributions.transforms.IndependentTransform(base, n[, {cache_size =}]): the
-- transform base with its n more rightmost dims read as one event (PyTorch's): the maps are
-- base's, log |det J| base's summed over those n dims, the domain and codomain base's made
-- independent over n dims.
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise
local Transform = require("tide.distributions.transforms.Transform")
local U = require("tide.distributions.transforms._util")

local IndependentT = Transform:extend("IndependentTransform")

function IndependentT:init(base, n, opts, ...)
    local who = "IndependentTransform"
    args.no_extra(who, 4, ...)
    if not Transform.is_transform(base) then
        raise(("tide: %s: expected a transform as the base, got %s"):format(who, type(base)))
    end
    if not require("tide._compat").is_integer(n) or n < 0 then
        raise(("tide: %s: reinterpreted_batch_ndims must be an integer >= 0, got %s")
            :format(who, tostring(n)))
    end
    local o = self:_options(opts)
    self.base_transform = base:with_cache(o.cache_size or 0)
    self.reinterpreted_batch_ndims = n
end

local G = IndependentT._getters
function G.domain(self)
    return require("tide.distributions.constraints").independent(self.base_transform.domain,
        self.reinterpreted_batch_ndims)
end
function G.codomain(self)
    return require("tide.distributions.constraints").independent(
        self.base_transform.codomain, self.reinterpreted_batch_ndims)
end
function G.bijective(self)
    return self.base_transform.bijective
end
function G.sign(self)
    return self.base_transform.sign
end

function IndependentT:with_cache(n)
    n = n == nil and 1 or n
    if self._cache_size == n then
        return self
    end
    return IndependentT(self.base_transform, self.reinterpreted_batch_ndims, { cache_size = n })
end

local function enough(x, need, who)
    if x:dim() < need then
        raise(("tide: %s: expected at least %d dims (the event's), got %d"):format(who, need,
            x:dim()))
    end
end

function IndependentT:_call(x)
    enough(x, self.domain.event_dim, "IndependentTransform")
    return self.base_transform(x)
end

function IndependentT:_inverse(y)
    enough(y, self.codomain.event_dim, "IndependentTransform.inv")
    return self.base_transform.inv(y)
end

function IndependentT:log_abs_det_jacobian(x, y)
    return U.sum_rightmost(self.base_transform:log_abs_det_jacobian(x, y),
        self.reinterpreted_batch_ndims)
end

function IndependentT:forward_shape(shape)
    return self.base_transform:forward_shape(shape)
end

function IndependentT:inverse_shape(shape)
    return self.base_transform:inverse_shape(shape)
end

function IndependentT:_repr()
    return ("IndependentTransform(%s, %d)"):format(tostring(self.base_transform),
        self.reinterpreted_batch_ndims)
end

return IndependentT
