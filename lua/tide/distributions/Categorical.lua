-- tide.distributions.Categorical({probs =} or {logits =}): K classes along the last dim, 1-based
-- as every index in tide. probs are normalized to sum to 1 (a zero is allowed), logits to
-- log-probabilities (logits - logsumexp), PyTorch's rules: the other is derived (log of probs
-- clamped to [eps, 1 - eps], or softmax). sample(shape) draws classes (multinomial, no
-- gradient); log_prob(value) gathers the log-probability of 1-based classes, broadcast against
-- the batch; entropy() is -sum p log p. validate_args = false skips the checks of probs and of
-- the classes (PyTorch's option); expand(batch_shape) broadcasts the batch.
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise
local is_tensor = autograd.is_tensor
local Distribution = require("tide.distributions.Distribution")
local B = require("tide.distributions._binary")
local unpack = require("tide._compat").unpack

local Categorical = Distribution:extend("Categorical")
Categorical.arg_constraints = require("tide.distributions._arg_constraints").Categorical
Categorical.has_enumerate_support = true -- (PyTorch's class field)
Categorical.has_rsample = false -- (PyTorch's class field)
Categorical.positional_params = { after = 0, names = { "probs", "logits" } } -- (PyTorch's order)

local LIMITS = require("tide._dtype_limits") -- each float dtype's eps and max

local function param(who, opts)
    local o = B.options(who, opts, { "validate_args" }, "{logits = t}")
    local t = o.probs or o.logits
    local what = o.probs and "probs" or "logits"
    if not is_tensor(t) or t:dim() < 1 then
        raise(("tide: %s: %s must be a tensor with at least one dim (the classes), got %s")
            :format(who, what, is_tensor(t) and "a 0-dim tensor" or type(t)))
    end
    if not args.FLOAT[t.dtype] then
        raise(("tide: %s: %s must be floating-point, got %s"):format(who, what, t.dtype))
    end
    return o
end

function Categorical:init(opts, ...)
    args.no_extra("Categorical", 2, ...)
    local o = param("Categorical", opts)
    self._validate = require("tide.distributions._extras").validate_flag("Categorical", o)
    if o.probs then
        local p = o.probs
        if self._validate then
            Distribution.require(p:detach():ge(0), "Categorical", "probs must be >= 0")
        end
        self.probs = p / p:sum(-1, true)
        local eps = LIMITS[p.dtype].eps
        self.logits = self.probs:clamp(eps, 1 - eps):log()
    else
        local l = o.logits
        self.logits = l - l:logsumexp(-1, true)
        self.probs = self.logits:softmax(-1)
    end
    local shape = self.probs:size()
    self.num_events = table.remove(shape)
    self.batch_shape, self.event_shape = shape, {}
    self._params = { o.probs and "probs" or "logits" }
end

-- the same classes over a batch broadcast to batch_shape
function Categorical:expand(batch_shape)
    local X = require("tide.distributions._extras")
    local s = X.expand_shape(self, batch_shape)
    local new = X.copy(self)
    local ps = X.concat(s, { self.num_events })
    new.probs, new.logits, new.batch_shape = self.probs:expand(ps), self.logits:expand(ps), s
    return new
end

function Categorical:mean()
    raise("tide: Categorical: has no mean (its classes are labels); use probs")
end

function Categorical:sample(shape)
    local s = self:extended_shape(shape, "Categorical.sample")
    local n = 1
    for i = 1, #s - #self.batch_shape do
        n = n * s[i]
    end
    return autograd.no_grad(function()
        local k = self.num_events
        local probs2d = self.probs:reshape(-1, k)
        local draws = core.multinomial(probs2d, n, { replacement = true }) -- [batch, n], 1-based
        return draws:t():reshape(s)
    end)
end

function Categorical:log_prob(value)
    local who = "Categorical.log_prob"
    value = self:value_tensor(value, who, self.logits)
    if value.dtype == "bool" then
        raise(("tide: %s: the value must hold 1-based classes (int64), got %s"):format(who,
            value.dtype))
    end
    if args.FLOAT[value.dtype] then
        -- PyTorch takes whole float classes (a float action buffer, spinningup's PPOBuffer) as
        -- their integers; a fraction is outside the support
        local frac = value:detach() - value:detach():floor()
        if value:numel() > 0 and frac:ne(0):any():item() then
            local at = frac:reshape(-1):ne(0):nonzero():reshape(-1)[1]
            local bad = value:detach():reshape(-1)[at]
            raise(("tide: %s: the value must hold whole 1-based classes, got %s in a %s " ..
                "tensor; round it (value:round()) or give int64 classes"):format(who,
                tostring(bad:item()), value.dtype))
        end
    end
    value = value:long()
    local k = self.num_events
    if self._validate then
        Distribution.require(value:ge(1):logical_and(value:le(k)), who,
            ("the classes must be in 1..%d"):format(k))
    end
    -- value and the batch broadcast together; the classes' dim gathered
    local v = value:unsqueeze(-1)
    local shape = (v:detach():double() + self.logits:detach():sum(-1, true)):size()
    local logits_shape = { unpack(shape) }
    logits_shape[#logits_shape] = k
    local log_pmf = self.logits:expand(logits_shape)
    return log_pmf:gather(-1, v:expand(shape)):squeeze(-1)
end

function Categorical:entropy()
    local logits = self.logits:clamp(-LIMITS[self.logits.dtype].max, nil)
    return -(logits * self.probs):sum(-1)
end

-- PyTorch 1.13's mode: the likeliest class (1-based, int64)
function Categorical:mode()
    return self.probs:argmax(-1)
end

-- PyTorch's enumerate_support([expand = true]): the classes 1..K (1-based)
function Categorical:enumerate_support(expand)
    local p = self.probs
    return self:_enumerate(core.arange(1, self.num_events + 1, { device = p.device }), 0, expand)
end

-- PyTorch's variance and stddev: NaN, as its mean
function Categorical:variance()
    local p = self.probs
    return core.full(self.batch_shape, 0 / 0, { dtype = p.dtype, device = p.device })
end

return Categorical
