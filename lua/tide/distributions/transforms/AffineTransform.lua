-- tide.distributions.transforms.AffineTransform(loc, scale[, event_dim][, {event_dim =,
-- cache_size =}]): y = loc + scale x (PyTorch's), loc and scale numbers or tensors
-- (broadcast against x); event_dim (0 by default) the rightmost dims that make one event: the
-- log |det J| = log |scale| summed over them. sign is scale's sign (a tensor for a tensor).
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise
local is_tensor = autograd.is_tensor
local Transform = require("tide.distributions.transforms.Transform")
local U = require("tide.distributions.transforms._util")

local Affine = Transform:extend("AffineTransform")
Affine.bijective = true

local function param(name, v)
    if type(v) ~= "number" and not is_tensor(v) then
        raise(("tide: AffineTransform: %s must be a number or a tensor, got %s"):format(name,
            type(v)))
    end
    return v
end

function Affine:init(loc, scale, event_dim, opts, ...)
    local who = "AffineTransform"
    if type(event_dim) == "table" and opts == nil then -- (the options in third place)
        event_dim, opts = nil, event_dim
    end
    args.no_extra(who, 5, ...)
    self.loc, self.scale = param("loc", loc), param("scale", scale)
    local o = self:_options(opts, { "event_dim" }, "{event_dim = 1, cache_size = 1}")
    if event_dim ~= nil and o.event_dim ~= nil then
        raise("tide: AffineTransform: event_dim given twice; give it in one place")
    end
    event_dim = event_dim == nil and o.event_dim or event_dim
    event_dim = event_dim == nil and 0 or event_dim
    if not require("tide._compat").is_integer(event_dim) or event_dim < 0 then
        raise(("tide: AffineTransform: event_dim must be an integer >= 0, got %s")
            :format(tostring(event_dim)))
    end
    self._event_dim = event_dim
end

local G = Affine._getters
function G.event_dim(self)
    return self._event_dim
end

local function reals(self)
    local C = require("tide.distributions.constraints")
    if self._event_dim == 0 then
        return C.real
    end
    return C.independent(C.real, self._event_dim)
end
G.domain = reals
G.codomain = reals

function G.sign(self)
    local s = self.scale
    if type(s) == "number" then
        return s > 0 and 1 or (s < 0 and -1 or 0)
    end
    return s:sign()
end

function Affine:with_cache(n)
    n = n == nil and 1 or n
    if self._cache_size == n then
        return self
    end
    return Affine(self.loc, self.scale, self._event_dim, { cache_size = n })
end

local function same(a, b)
    if type(a) == "number" and type(b) == "number" then
        return a == b
    end
    if type(a) == "number" then
        a, b = b, a
    end
    if is_tensor(b) then
        b = b:to(a.device)
    end
    return a:eq(b):all():item()
end

function Affine:_eq(other)
    return getmetatable(other) == Affine and same(self.loc, other.loc) and
        same(self.scale, other.scale)
end

function Affine:_call(x)
    return self.loc + self.scale * x
end

function Affine:_inverse(y)
    return (y - self.loc) / self.scale
end

function Affine:log_abs_det_jacobian(x)
    local shape = x:size()
    local result
    if type(self.scale) == "number" then
        result = core.full(shape, math.log(math.abs(self.scale)), { dtype = x.dtype,
            device = x.device })
    else
        result = self.scale:abs():log()
    end
    local ed = self._event_dim
    if ed > 0 then
        local rs = U.drop_last(result:size(), ed)
        rs[#rs + 1] = -1
        result = result:reshape(rs):sum(-1)
        shape = U.drop_last(shape, ed)
    end
    return result:expand(shape)
end

local function shape_of(v)
    return is_tensor(v) and v:size() or {}
end

function Affine:forward_shape(shape)
    local who = "AffineTransform.forward_shape"
    return U.broadcast_shapes(who, self:_shape(shape, who), shape_of(self.loc),
        shape_of(self.scale))
end

function Affine:inverse_shape(shape)
    local who = "AffineTransform.inverse_shape"
    return U.broadcast_shapes(who, self:_shape(shape, who), shape_of(self.loc),
        shape_of(self.scale))
end

return Affine
