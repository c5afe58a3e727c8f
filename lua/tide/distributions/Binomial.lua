-- tide.distributions.Binomial(total_count, {probs =} or {logits =}): successes in total_count
-- Bernoulli trials (total_count 1 when nil; a number or a tensor, broadcast with the
-- parameter), PyTorch's formulas (log_prob in logits, stable for large |logits|; entropy sums
-- over the support, so needs one total_count for the whole batch). sample(shape) is exact:
-- with q = min(p, 1 - p), by summing geometric gaps (PyTorch's inversion) where
-- total_count q < 10, by Hormann's BTRS rejection elsewhere (no gradient).
-- total_count must hold integers >= 0, probs lie in [0, 1], values be integers in
-- [0, total_count].
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise
local is_tensor = autograd.is_tensor
local Distribution = require("tide.distributions.Distribution")
local B = require("tide.distributions._binary")

local Binomial = Distribution:extend("Binomial")
Binomial.arg_constraints = require("tide.distributions._arg_constraints").Binomial
Binomial.has_enumerate_support = true -- (PyTorch's class field)
Binomial.has_rsample = false -- (PyTorch's class field)
Binomial.arg_names = { "total_count", options = true } -- (PyTorch's, by name too)
Binomial.positional_params = { after = 1, names = { "probs", "logits" } } -- (PyTorch's order)

function Binomial:init(total_count, opts, ...)
    local who = "Binomial"
    args.no_extra(who, 3, ...)
    if opts == nil and type(total_count) == "table" and not is_tensor(total_count) then
        raise(("tide: %s: total_count comes first: Binomial(total_count, {probs = ...}) " ..
            "(nil for 1)"):format(who))
    end
    local o = B.options(who, opts, nil, "{probs = 0.3}")
    local which = o.probs ~= nil and "probs" or "logits"
    if total_count == nil then
        total_count = 1
    end
    if is_tensor(total_count) and not args.FLOAT[total_count.dtype] then
        -- integer counts take the parameter's dtype (PyTorch's type_as)
        local param = o[which]
        total_count = total_count:to(is_tensor(param) and param.dtype or core.get_default_dtype())
    end
    local p, shape = Distribution.broadcast_params(who, { which, "total_count" },
        { o[which], total_count })
    local n = p[2]:detach()
    Distribution.require(n:ge(0):logical_and(n:eq(n:floor())):logical_and(n:lt(math.huge)), who,
        "total_count must hold integers >= 0")
    if which == "probs" then
        local d = p[1]:detach()
        Distribution.require(d:ge(0):logical_and(d:le(1)), who, "probs must lie in [0, 1]")
    end
    self.total_count = p[2]
    B.derive(self, which, p[1])
    self.batch_shape, self.event_shape = shape, {}
    self._params = { "total_count", which }
end

function Binomial:mean()
    return self.total_count * self.probs
end

function Binomial:variance()
    return self.total_count * self.probs * (-self.probs + 1)
end

function Binomial:stddev()
    return self:variance():sqrt()
end

-- ---- sampling (float64, no gradient) ----

-- PyTorch's binomial_inversion: count the geometric gaps (in trials) that fit in n
local function inversion(n, q, pending)
    local opts = { dtype = "float64", device = n.device }
    local logq = (-q):log1p()
    local total = core.zeros(n:size(), opts)
    local count = core.zeros(n:size(), opts)
    while pending:any():item() do
        local gap = (core.rand(n:size(), opts):log() / logq):ceil()
        total = total + core.where(pending, gap, 0)
        local fits = pending:logical_and(total:le(n))
        count = count + fits:to("float64")
        pending = fits
    end
    return count
end

-- Hormann's BTRS (transformed rejection with squeeze), PyTorch's constants; the acceptance
-- test with exact log-factorials, so the draw is exact
local function btrs(n, q, pending)
    local opts = { dtype = "float64", device = n.device }
    local one = core.full({}, 1, opts)
    n = core.where(pending, n, one * 20) -- (harmless values off the rejection's elements)
    q = core.where(pending, q, one * 0.5)
    local spq = (n * q * (-q + 1)):sqrt()
    local b = spq * 2.53 + 1.15
    local a = b * 0.0248 + q * 0.01 - 0.0873
    local c = n * q + 0.5
    local vr = -b:reciprocal() * 4.2 + 0.92
    local alpha = (b:reciprocal() * 5.1 + 2.83) * spq
    local logr = q:log() - (-q):log1p()
    local m = ((n + 1) * q):floor()
    local lfm = (m + 1):lgamma() + (n - m + 1):lgamma()
    local out = core.zeros(n:size(), opts)
    while pending:any():item() do
        local u = core.rand(n:size(), opts) - 0.5
        local v = core.rand(n:size(), opts)
        local us = -u:abs() + 0.5
        local k = ((a * 2 / us + b) * u + c):floor()
        local inside = k:ge(0):logical_and(k:le(n))
        local quick = us:ge(0.07):logical_and(v:le(vr))
        local kk = k:clamp(0, nil):minimum(n)
        local lhs = (v * alpha / (a / (us * us) + b)):log()
        local rhs = lfm - (kk + 1):lgamma() - (n - kk + 1):lgamma() + (kk - m) * logr
        local ok = inside:logical_and(quick:logical_or(lhs:le(rhs))):logical_and(pending)
        out = core.where(ok, k, out)
        pending = pending:logical_and(ok:logical_not())
    end
    return out
end

function Binomial:sample(shape)
    local s = self:extended_shape(shape, "Binomial.sample")
    return autograd.no_grad(function()
        local n = self.total_count:expand(s):to("float64"):contiguous()
        local p = self.probs:expand(s):to("float64"):contiguous()
        local flip = p:gt(0.5)
        local q = core.where(flip, -p + 1, p)
        local live = n:gt(0):logical_and(q:gt(0))
        local small = (n * q):lt(10)
        local x = inversion(n, q, live:logical_and(small)) +
            btrs(n, q, live:logical_and(small:logical_not()))
        return core.where(flip, n - x, x):to(self.probs.dtype)
    end)
end

-- ---- scores ----

-- max(x, 0) as PyTorch's _clamp_by_zero writes it (its gradient at 0 is 1/2)
local function clamp_by_zero(x)
    return (x:clamp(0, nil) + x - x:clamp(nil, 0)) / 2
end

function Binomial:log_prob(value)
    local who = "Binomial.log_prob"
    value = B.value(self, value, who, self.logits)
    local v, n = value:detach(), self.total_count:detach()
    Distribution.require(v:ge(0):logical_and(v:le(n)):logical_and(v:eq(v:floor())), who,
        "the values must be integers in [0, total_count]")
    local l, tc = self.logits, self.total_count
    local log_factorial_n = (tc + 1):lgamma()
    local log_factorial_k = (value + 1):lgamma()
    local log_factorial_nmk = (tc - value + 1):lgamma()
    local normalize = tc * clamp_by_zero(l) + tc * (-l:abs()):exp():log1p() - log_factorial_n
    return value * l - log_factorial_k - log_factorial_nmk - normalize
end

function Binomial:entropy()
    local who = "Binomial.entropy"
    local n = self.total_count:detach()
    if n:numel() == 0 then
        return self.logits * 0
    end
    local hi, lo = n:max():item(), n:min():item()
    if hi ~= lo then
        raise(("tide: %s: total_count ranges over %g..%g; the entropy sums over one support, " ..
            "so give one total_count for the whole batch (PyTorch's rule)"):format(who, lo, hi))
    end
    if (hi + 1) * n:numel() > 2 ^ 26 then -- (the support times the batch, all at once)
        raise(("tide: %s: total_count %g over a batch of %d is too large to sum the support " ..
            "of; keep (total_count + 1) * batch size below 2^26"):format(who, hi, n:numel()))
    end
    local dims = { -1 }
    for i = 1, #self.batch_shape do
        dims[i + 1] = 1
    end
    local values = core.arange(0, hi + 1, { dtype = self.logits.dtype,
        device = self.logits.device }):reshape(dims)
    local lp = self:log_prob(values)
    return -(lp:exp() * lp):sum(1)
end

-- PyTorch 1.13's mode: floor((n + 1) p), at most n
function Binomial:mode()
    local n = self.total_count
    return ((n + 1) * self.probs):floor():minimum(n)
end

-- PyTorch's enumerate_support([expand = true]): 0..total_count, one total_count for the batch
function Binomial:enumerate_support(expand)
    local n = self.total_count:detach()
    local hi = n:max():item()
    if n:min():item() ~= hi then
        raise(("tide: %s.enumerate_support: total_count differs across the batch " ..
            "(inhomogeneous total count), as PyTorch's"):format(self.__name))
    end
    local p = self.probs
    return self:_enumerate(core.arange(0, hi + 1, { dtype = p.dtype, device = p.device }), 0,
        expand)
end

return Binomial
