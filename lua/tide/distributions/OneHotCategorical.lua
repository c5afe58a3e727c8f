-- tide.distributions.OneHotCategorical({probs =} or {logits =}): a Categorical over the last dim
-- whose draws are one-hot vectors (event shape {K}) in the parameters' dtype, PyTorch's: probs
-- normalized, log_prob reads the class of the 1 (argmax), entropy the Categorical's, mean probs,
-- variance probs (1 - probs), mode the one-hot of the likeliest class. sample(shape) has no
-- gradient. Values must be one-hot (validate_args = false skips the checks, PyTorch's option).
-- OneHotCategoricalStraightThrough extends it (its errors named as that class).
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise
local core = require("tide.core")
local Distribution = require("tide.distributions.Distribution")
local Categorical = require("tide.distributions.Categorical")
local B = require("tide.distributions._binary")

local OneHotCategorical = Distribution:extend("OneHotCategorical")
OneHotCategorical.arg_constraints = require("tide.distributions._arg_constraints").OneHotCategorical
OneHotCategorical.has_enumerate_support = true -- (PyTorch's class field)
OneHotCategorical.has_rsample = false -- (PyTorch's class field)
OneHotCategorical.positional_params = { after = 0, names = { "probs", "logits" } }

function OneHotCategorical:init(opts, ...)
    local who = self.__name
    args.no_extra(who, 2, ...)
    B.options(who, opts, { "validate_args" }, "{logits = t}")
    -- the Categorical's checks, named as this class
    local ok, c = pcall(Categorical, opts)
    if not ok then
        local msg = tostring(c):match("tide: Categorical: (.*)$")
        if msg then
            raise(("tide: %s: %s"):format(who, msg))
        end
        error(c, 0)
    end
    self._categorical, self._validate = c, c._validate
    self.probs, self.logits = c.probs, c.logits
    self.batch_shape, self.event_shape = c.batch_shape, { c.num_events }
    self._params = { opts.probs ~= nil and "probs" or "logits" }
end

function OneHotCategorical:expand(batch_shape)
    local X = require("tide.distributions._extras")
    local s = X.expand_shape(self, batch_shape)
    local new = X.copy(self)
    new._categorical = self._categorical:expand(s)
    new.probs, new.logits, new.batch_shape = new._categorical.probs, new._categorical.logits, s
    return new
end

function OneHotCategorical:mode()
    local k = self.event_shape[1]
    return require("tide").nn.functional.one_hot(self.probs:argmax(-1), k):to(self.probs.dtype)
end

function OneHotCategorical:mean()
    return self.probs
end

function OneHotCategorical:variance()
    return self.probs * (-self.probs + 1)
end

function OneHotCategorical:stddev()
    return self:variance():sqrt()
end

function OneHotCategorical:sample(shape)
    self:extended_shape(shape, self.__name .. ".sample")
    return autograd.no_grad(function()
        local k = self.event_shape[1]
        local idx = self._categorical:sample(shape)
        return require("tide").nn.functional.one_hot(idx, k):to(self.probs.dtype)
    end)
end

function OneHotCategorical:log_prob(value)
    local who = self.__name .. ".log_prob"
    value = self:value_tensor(value, who, self.probs)
    local v = value:detach()
    if v:dim() < 1 or v:size(-1) ~= self.event_shape[1] then
        raise(("tide: %s: the values must be one-hot vectors of %d classes (last dim), got %s")
            :format(who, self.event_shape[1], args.shape_str(v:size())))
    end
    if self._validate then
        Distribution.require(v:eq(0):logical_or(v:eq(1)):all(-1):logical_and(v:sum(-1):eq(1)),
            who, "the values must be one-hot (0s and a single 1 along the last dim)")
    end
    return self._categorical:log_prob(v:argmax(-1))
end

function OneHotCategorical:entropy()
    return self._categorical:entropy()
end

-- PyTorch's enumerate_support([expand = true]): the K one-hot vectors
function OneHotCategorical:enumerate_support(expand)
    local p = self.probs
    local k = p:size(-1)
    return self:_enumerate(core.eye(k, { dtype = p.dtype, device = p.device }), 1, expand)
end

return OneHotCategorical
