-- tide.distributions.transforms._InverseTransform: t.inv for a transform t (PyTorch's
-- _InverseTransform, private as there: reach it through t.inv): its map is t's inverse (and
-- its cache t's), its log |det J| minus t's at (y, x), its domain t's codomain and back.
local Transform = require("tide.distributions.transforms.Transform")

local Inverse = Transform:extend("_InverseTransform")

function Inverse:init(t)
    self._inner = t
    self._cache_size = t._cache_size
end

local G = Inverse._getters
function G.domain(self)
    return self._inner.codomain
end
function G.codomain(self)
    return self._inner.domain
end
function G.bijective(self)
    return self._inner.bijective
end
function G.sign(self)
    return self._inner.sign
end
function G.inv(self)
    return self._inner
end

function Inverse:with_cache(n)
    return self._inner:with_cache(n).inv
end

function Inverse:_eq(other)
    return getmetatable(other) == Inverse and self._inner == other._inner
end

function Inverse:forward(x)
    return self._inner:_inv_call(x)
end

function Inverse:_inv_call(y)
    return self._inner:forward(y)
end

function Inverse:log_abs_det_jacobian(x, y)
    return -self._inner:log_abs_det_jacobian(y, x)
end

function Inverse:forward_shape(shape)
    return self._inner:inverse_shape(shape)
end

function Inverse:inverse_shape(shape)
    return self._inner:forward_shape(shape)
end

function Inverse:_repr()
    return "_InverseTransform(" .. tostring(self._inner) .. ")"
end

return Inverse
