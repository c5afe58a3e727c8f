-- tide.distributions.Geometric({probs =} or {logits =}): the number of failures before the
-- first success of Bernoulli trials of success probability probs (sigmoid of logits), PyTorch's
-- formulas; sample(shape) is floor(log u / log(1 - probs)) with u uniform in [tiny, 1), in the
-- parameters' dtype (no gradient). probs must lie in (0, 1], values be integers >= 0.
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local Distribution = require("tide.distributions.Distribution")
local B = require("tide.distributions._binary")

local Geometric = Distribution:extend("Geometric")
Geometric.arg_constraints = require("tide.distributions._arg_constraints").Geometric
Geometric.has_rsample = false -- (PyTorch's class field)
Geometric.positional_params = { after = 0, names = { "probs", "logits" } } -- (PyTorch's order)

local TINY = { float64 = 2.2250738585072014e-308, float32 = 1.1754943508222875e-38,
    float16 = 6.103515625e-05, bfloat16 = 1.1754943508222875e-38 }

function Geometric:init(opts, ...)
    local who = "Geometric"
    args.no_extra(who, 2, ...)
    local o = B.options(who, opts, nil, "{probs = 0.3}")
    local which = o.probs ~= nil and "probs" or "logits"
    local p, shape = Distribution.broadcast_params(who, { which }, { o[which] })
    if which == "probs" then
        local d = p[1]:detach()
        Distribution.require(d:gt(0):logical_and(d:le(1)), who, "probs must lie in (0, 1]")
    end
    B.derive(self, which, p[1])
    self.batch_shape, self.event_shape = shape, {}
    self._params = { which }
end

function Geometric:mean()
    return self.probs:reciprocal() - 1
end

function Geometric:variance()
    return (self.probs:reciprocal() - 1) / self.probs
end

function Geometric:stddev()
    return self:variance():sqrt()
end

function Geometric:sample(shape)
    local s = self:extended_shape(shape, "Geometric.sample")
    return autograd.no_grad(function()
        local tiny = TINY[self.probs.dtype]
        local u = core.rand(s, { dtype = self.probs.dtype, device = self.probs.device })
            :mul(1 - tiny):add(tiny)
        return (u:log() / (-self.probs):log1p()):floor()
    end)
end

function Geometric:log_prob(value)
    local who = "Geometric.log_prob"
    value = B.value(self, value, who, self.probs)
    local v = value:detach()
    Distribution.require(v:ge(0):logical_and(v:eq(v:floor())):logical_and(v:lt(math.huge)), who,
        "the values must be integers >= 0")
    -- probs 1 at value 0: 0 log(0) read as 0, as PyTorch's
    local shape = (v + self.probs:detach()):size()
    local p = self.probs:expand(shape)
    p = core.where(p:detach():eq(1):logical_and(v:eq(0)), 0, p)
    return value * (-p):log1p() + self.probs:log()
end

function Geometric:entropy()
    return (self.logits:softplus() - self.logits * self.probs) / self.probs
end

-- PyTorch 1.13's mode: 0
function Geometric:mode()
    local x = self.probs
    return core.zeros(x:size(), { dtype = x.dtype, device = x.device })
end

return Geometric
