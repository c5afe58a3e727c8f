-- tide.distributions.transforms.CatTransform(tseq[, {dim = 1, lengths =, cache_size =}]): the
-- transforms of tseq applied to consecutive pieces along dim (1-based, negative from the end),
-- of lengths[i] entries each (1 each by default), in the manner of tide.cat (PyTorch's
-- CatTransform, dim 0 there); log |det J| is concatenated along dim, or summed when dim lies
-- inside the event.
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise
local Transform = require("tide.distributions.transforms.Transform")
local U = require("tide.distributions.transforms._util")

local Cat = Transform:extend("CatTransform")

function Cat:init(tseq, opts, ...)
    local who = "CatTransform"
    args.no_extra(who, 3, ...)
    tseq = Transform.transform_list(who, tseq, "tseq")
    local o = self:_options(opts, { "dim", "lengths" }, "{dim = 1, lengths = {2, 3}}")
    local list = {}
    for i, t in ipairs(tseq) do
        list[i] = (o.cache_size or 0) ~= 0 and t:with_cache(o.cache_size) or t
    end
    self.transforms = list
    local lengths = o.lengths
    if lengths == nil then
        lengths = {}
        for i = 1, #list do
            lengths[i] = 1
        end
    end
    if type(lengths) ~= "table" or #lengths ~= #list then
        raise(("tide: %s: lengths must be a list of %d sizes (one a transform), got %s"):format(
            who, #list, type(lengths) == "table" and #lengths .. " of them" or type(lengths)))
    end
    self.lengths = {}
    local total = 0
    for i, n in ipairs(lengths) do
        self.lengths[i] = args.integer(who, n, "a length")
        total = total + self.lengths[i]
    end
    self.length = total
    self.dim = o.dim == nil and 1 or args.integer(who, o.dim, "dim")
    if self.dim == 0 then
        raise("tide: CatTransform: dim = 0; dims are 1-based (1 the first, -1 the last)")
    end
end

local G = Cat._getters
function G.event_dim(self)
    local ed = 0
    for _, t in ipairs(self.transforms) do
        ed = math.max(ed, t.event_dim)
    end
    return ed
end
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
    return require("tide.distributions.constraints").cat(cs, { dim = self.dim,
        lengths = self.lengths })
end
function G.domain(self)
    return side(self, "domain")
end
function G.codomain(self)
    return side(self, "codomain")
end

function Cat:with_cache(n)
    n = n == nil and 1 or n
    if self._cache_size == n then
        return self
    end
    return Cat(self.transforms, { dim = self.dim, lengths = self.lengths, cache_size = n })
end

local function check(self, x, who)
    local nd = x:dim()
    if self.dim < -nd or self.dim > nd then
        raise(("tide: %s: dim %d is out of range for %d dims"):format(who, self.dim, nd))
    end
    if x:size(self.dim) ~= self.length then
        raise(("tide: %s: expected %d entries along dim %d (the lengths' sum), got %d"):format(
            who, self.length, self.dim, x:size(self.dim)))
    end
end

local function apply(self, x, who, f)
    check(self, x, who)
    local out, start = {}, 1
    for i, t in ipairs(self.transforms) do
        out[i] = f(t, x:narrow(self.dim, start, self.lengths[i]))
        start = start + self.lengths[i]
    end
    return core.cat(out, self.dim)
end

function Cat:_call(x)
    return apply(self, x, "CatTransform", function(t, xs) return t(xs) end)
end

function Cat:_inverse(y)
    return apply(self, y, "CatTransform.inv", function(t, ys) return t.inv(ys) end)
end

function Cat:log_abs_det_jacobian(x, y)
    local who = "CatTransform.log_abs_det_jacobian"
    check(self, x, who)
    check(self, y, who)
    local ed = self.event_dim
    local terms, start = {}, 1
    for i, t in ipairs(self.transforms) do
        local n = self.lengths[i]
        local term = t:log_abs_det_jacobian(x:narrow(self.dim, start, n),
            y:narrow(self.dim, start, n))
        if t.event_dim < ed then
            term = U.sum_rightmost(term, ed - t.event_dim)
        end
        terms[i] = term
        start = start + n
    end
    -- PyTorch's rule in its 0-based dims: concatenated when dim lies left of the event
    local d = self.dim > 0 and self.dim - 1 - x:dim() or self.dim
    d = d + ed
    if d < 0 then
        return core.cat(terms, d)
    end
    local total = terms[1]
    for i = 2, #terms do
        total = total + terms[i]
    end
    return total
end

return Cat
