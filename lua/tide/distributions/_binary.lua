-- tide.distributions._binary: what Geometric and Binomial share: their {probs =} or
-- {logits =} options (exactly one; also Categorical's, OneHotCategorical's and
-- ContinuousBernoulli's; the other derived as PyTorch's probs_to_logits and
-- logits_to_probs with is_binary: the log-odds of probs clamped to [eps, 1 - eps], or the
-- sigmoid), and a value as a tensor of the parameters' dtype.
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise
local is_tensor = autograd.is_tensor
local Distribution = require("tide.distributions.Distribution")

local B = {}

B.EPS = { float64 = 2.220446049250313e-16, float32 = 1.1920928955078125e-07,
    float16 = 0.0009765625, bfloat16 = 0.0078125 }

-- opts checked: returns the table with exactly one of probs and logits; extra: other keys
function B.options(who, opts, extra, example)
    if type(opts) ~= "table" or is_tensor(opts) then
        raise(("tide: %s: expected {probs = ...} or {logits = ...}, got %s"):format(who,
            is_tensor(opts) and "a tensor" or type(opts)))
    end
    local known = { "probs", "logits", "validate_args" }
    for _, k in ipairs(extra or {}) do
        known[#known + 1] = k
    end
    local o = args.options(who, opts, known, example)
    if (o.probs == nil) == (o.logits == nil) then
        raise(("tide: %s: give exactly one of probs and logits"):format(who))
    end
    return o
end

-- sets self.probs and self.logits from the broadcast parameter (p, named by which)
function B.derive(self, which, p)
    if which == "probs" then
        self.probs = p
        local eps = B.EPS[p.dtype]
        local c = p:clamp(eps, 1 - eps)
        self.logits = c:log() - c:neg():log1p()
    else
        self.logits = p
        self.probs = p:sigmoid()
    end
end

-- value as a tensor in like's dtype, on its device
function B.value(self, value, who, like)
    value = Distribution.value_tensor(self, value, who, like)
    return value.dtype == like.dtype and value or value:to(like.dtype)
end

return B
