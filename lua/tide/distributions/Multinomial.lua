-- tide.distributions.Multinomial(total_count, {probs =} or {logits =}[, validate_args =]): the
-- counts of total_count draws of a Categorical over the last dim (event shape {K}), PyTorch's:
-- total_count one whole number for the whole batch (1 when nil), probs and logits normalized
-- as Categorical's; log_prob takes counts of any total (lgamma(sum + 1) - sum lgamma(x + 1) +
-- sum x logits), entropy sums the Binomial(total_count, p_k) marginals over 1..total_count.
-- sample(shape) counts total_count categorical draws (no gradient), in the parameters' dtype.
-- Values must be counts >= 0 summing to at most total_count (PyTorch's check).
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise
local is_tensor = autograd.is_tensor
local compat = require("tide._compat")
local Distribution = require("tide.distributions.Distribution")
local Categorical = require("tide.distributions.Categorical")
local B = require("tide.distributions._binary")
local X = require("tide.distributions._extras")

local Multinomial = Distribution:extend("Multinomial")
Multinomial.arg_constraints = require("tide.distributions._arg_constraints").Multinomial
Multinomial.arg_names = { "total_count", options = true } -- (PyTorch's, by name too)
Multinomial.positional_params = { after = 1, names = { "probs", "logits" } } -- (PyTorch's order)
Multinomial.has_rsample = false

function Multinomial:init(total_count, opts, ...)
    local who = "Multinomial"
    args.no_extra(who, 2, ...)
    if opts == nil and type(total_count) == "table" and not is_tensor(total_count) then
        raise(("tide: %s: total_count comes first: Multinomial(total_count, {probs = ...}) " ..
            "(nil for 1)"):format(who))
    end
    B.options(who, opts, { "validate_args" }, "{probs = p}")
    if total_count == nil then
        total_count = 1
    end
    if type(total_count) ~= "number" or not compat.tointeger(total_count) or total_count < 0 then
        raise(("tide: %s: total_count must be a whole number >= 0 (one for the whole batch, " ..
            "as PyTorch's), got %s"):format(who, is_tensor(total_count) and "a tensor" or
            tostring(total_count)))
    end
    -- the Categorical's checks, named as this class
    local ok, c = pcall(Categorical, opts)
    if not ok then
        local msg = tostring(c):match("tide: Categorical: (.*)$")
        if msg then
            raise(("tide: %s: %s"):format(who, msg))
        end
        error(c, 0)
    end
    self.total_count = compat.tointeger(total_count)
    self._categorical, self._validate = c, c._validate
    self.probs, self.logits = c.probs, c.logits
    self.batch_shape, self.event_shape = c.batch_shape, { c.num_events }
    self._params = { opts.probs ~= nil and "probs" or "logits" }
end

function Multinomial:expand(batch_shape)
    local s = X.expand_shape(self, batch_shape)
    local new = X.copy(self)
    new._categorical = self._categorical:expand(s)
    new.probs, new.logits, new.batch_shape = new._categorical.probs, new._categorical.logits, s
    return new
end

function Multinomial:support()
    return X.support("multinomial", self.total_count)
end

function Multinomial:mean()
    return self.probs * self.total_count
end

function Multinomial:variance()
    return self.probs * (-self.probs + 1) * self.total_count
end

function Multinomial:stddev()
    return self:variance():sqrt()
end

function Multinomial:sample(shape)
    local s = self:extended_shape(shape, "Multinomial.sample")
    return autograd.no_grad(function()
        local n = self.total_count
        local counts = core.zeros(s, { dtype = self.probs.dtype, device = self.probs.device })
        if n == 0 then
            return counts
        end
        -- n classes per draw, 1-based, along a last dim: their counts by scatter_add
        local draws = self._categorical:sample(X.concat({ n }, shape or {}))
        draws = draws:movedim(1, -1)
        return counts:scatter_add(-1, draws, core.ones(draws:size(), { dtype = counts.dtype,
            device = counts.device }))
    end)
end

function Multinomial:log_prob(value)
    local who = "Multinomial.log_prob"
    value = B.value(self, value, who, self.logits)
    local k = self.event_shape[1]
    if value:dim() < 1 or value:size(-1) ~= k then
        raise(("tide: %s: the values must be count vectors of %d classes (last dim), got %s")
            :format(who, k, args.shape_str(value:size())))
    end
    if self._validate then
        X.require_in("multinomial", value, who, ("the values must be counts >= 0 summing to " ..
            "at most total_count (%d)"):format(self.total_count), self.total_count)
    end
    local logits = self.logits
    -- a class of probability 0 counted 0 times adds 0 (not 0 * -inf)
    local zero = value:detach():eq(0):logical_and(logits:detach():eq(-math.huge))
    logits = core.where(zero, 0, logits)
    local log_factorial_n = (value:sum(-1) + 1):lgamma()
    local log_factorial_xs = (value + 1):lgamma():sum(-1)
    return log_factorial_n - log_factorial_xs + (logits * value):sum(-1)
end

function Multinomial:entropy()
    local n = self.total_count
    local opts = { dtype = self.probs.dtype, device = self.probs.device }
    local h = self._categorical:entropy() * n - core.full({}, n + 1, opts):lgamma()
    if n == 0 then
        return h
    end
    -- the Binomial(n, p_k) marginals at 1..n: [n, batch.., K]
    local dims = { n }
    for i = 1, #self.batch_shape + 1 do
        dims[i + 1] = 1
    end
    local support = core.arange(1, n + 1, opts):reshape(dims)
    local Binomial = require("tide.distributions.Binomial")
    local lp = Binomial(n, { probs = self.probs }):log_prob(support)
    local t2 = (lp:exp() * (support + 1):lgamma()):sum(1):sum(-1)
    return h + t2
end

return Multinomial
