-- tide.distributions.transforms.StackTransform(tseq[, {dim = 1, cache_size =}]): the
-- transforms of tseq applied to the slices along dim (1-based, negative from the end), one a
-- slice, in the manner of tide.stack (PyTorch's StackTransform, dim 0 there); log |det J| is
-- the slices' stacked along dim.
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise
local Transform = require("tide.distributions.transforms.Transform")

local Stack = Transform:extend("StackTransform")

function Stack:init(tseq, opts, ...)
    local who = "StackTransform"
    args.no_extra(who, 3, ...)
    tseq = Transform.transform_list(who, tseq, "tseq")
    local o = self:_options(opts, { "dim" }, "{dim = 1}")
    local list = {}
    for i, t in ipairs(tseq) do
        list[i] = (o.cache_size or 0) ~= 0 and t:with_cache(o.cache_size) or t
    end
    self.transforms = list
    self.dim = o.dim == nil and 1 or args.integer(who, o.dim, "dim")
    if self.dim == 0 then
        raise("tide: StackTransform: dim = 0; dims are 1-based (1 the first, -1 the last)")
    end
end

local G = Stack._getters
function G.bijective(self)
    for _, t in ipairs(self.transforms) do
        if not t.bijective then
            return false
        end
    end
    return true
end
local function side(self, field)
    local cs = {}
    for i, t in ipairs(self.transforms) do
        cs[i] = t[field]
    end
    return require("tide.distributions.constraints").stack(cs, { dim = self.dim })
end
function G.domain(self)
    return side(self, "domain")
end
function G.codomain(self)
    return side(self, "codomain")
end

function Stack:with_cache(n)
    n = n == nil and 1 or n
    if self._cache_size == n then
        return self
    end
    return Stack(self.transforms, { dim = self.dim, cache_size = n })
end

local function check(self, x, who)
    local nd = x:dim()
    if self.dim < -nd or self.dim > nd then
        raise(("tide: %s: dim %d is out of range for %d dims"):format(who, self.dim, nd))
    end
    if x:size(self.dim) ~= #self.transforms then
        raise(("tide: %s: expected %d entries along dim %d (one a transform), got %d"):format(
            who, #self.transforms, self.dim, x:size(self.dim)))
    end
end

function Stack:_call(x)
    check(self, x, "StackTransform")
    local out = {}
    for i, t in ipairs(self.transforms) do
        out[i] = t(x:select(self.dim, i))
    end
    return core.stack(out, self.dim)
end

function Stack:_inverse(y)
    check(self, y, "StackTransform.inv")
    local out = {}
    for i, t in ipairs(self.transforms) do
        out[i] = t.inv(y:select(self.dim, i))
    end
    return core.stack(out, self.dim)
end

function Stack:log_abs_det_jacobian(x, y)
    local who = "StackTransform.log_abs_det_jacobian"
    check(self, x, who)
    check(self, y, who)
    local out = {}
    for i, t in ipairs(self.transforms) do
        out[i] = t:log_abs_det_jacobian(x:select(self.dim, i), y:select(self.dim, i))
    end
    return core.stack(out, self.dim)
end

return Stack
