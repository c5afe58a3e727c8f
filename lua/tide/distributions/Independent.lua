-- tide.distributions.Independent(base, n): the base distribution with its last n batch dims
-- read as event dims (PyTorch's Independent): log_prob and entropy sum over them, samples are
-- the base's. The usual diagonal Gaussian policy: Independent(Normal(mu, sigma), 1).
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise
local Distribution = require("tide.distributions.Distribution")

local Independent = Distribution:extend("Independent")
Independent.arg_constraints = require("tide.distributions._arg_constraints").Independent
Independent.arg_names = { "base_distribution", "reinterpreted_batch_ndims" }

-- x summed over its last n dims
local function sum_rightmost(x, n)
    for _ = 1, n do
        x = x:sum(-1)
    end
    return x
end

function Independent:init(base, n, ...)
    args.no_extra("Independent", 3, ...)
    if type(base) ~= "table" or not getmetatable(base) or not base.batch_shape then
        raise("tide: Independent: expected a distribution as the base, got " .. type(base))
    end
    if not require("tide._compat").is_integer(n) or n < 0 or n > #base.batch_shape then
        raise(("tide: Independent: reinterpreted_batch_ndims must be 0..%d (the base's batch " ..
            "dims), got %s"):format(#base.batch_shape, tostring(n)))
    end
    self.base_dist, self.reinterpreted_batch_ndims = base, n
    if type(base.has_rsample) == "boolean" then -- (PyTorch's properties: the base's)
        self.has_rsample = base.has_rsample
    end
    self.has_enumerate_support = n == 0 and base.has_enumerate_support or false
    local batch, event = {}, {}
    local cut = #base.batch_shape - n
    for i, s in ipairs(base.batch_shape) do
        if i <= cut then
            batch[#batch + 1] = s
        else
            event[#event + 1] = s
        end
    end
    for _, s in ipairs(base.event_shape) do
        event[#event + 1] = s
    end
    self.batch_shape, self.event_shape = batch, event
end

-- PyTorch's: the base's values where no batch dim is reinterpreted
function Independent:enumerate_support(expand)
    if self.reinterpreted_batch_ndims > 0 then
        raise("tide: Independent.enumerate_support: Enumeration over cartesian product is not " ..
            "implemented")
    end
    if not self.base_dist.enumerate_support then
        raise(("tide: %s.enumerate_support: not defined for this distribution"):format(
            self.base_dist.__name))
    end
    return self.base_dist:enumerate_support(expand)
end

function Independent:sample(shape)
    return self.base_dist:sample(shape)
end

function Independent:rsample(shape)
    return self.base_dist:rsample(shape)
end

function Independent:log_prob(value)
    return sum_rightmost(self.base_dist:log_prob(value), self.reinterpreted_batch_ndims)
end

function Independent:entropy()
    return sum_rightmost(self.base_dist:entropy(), self.reinterpreted_batch_ndims)
end

function Independent:mean()
    return self.base_dist:mean()
end

function Independent:stddev()
    return self.base_dist:stddev()
end

function Independent:variance()
    return self.base_dist:variance()
end

function Independent:__tostring()
    return ("Independent(%s, %d)"):format(tostring(self.base_dist), self.reinterpreted_batch_ndims)
end

Independent.sum_rightmost = sum_rightmost
-- PyTorch 1.13's mode: the base's
function Independent:mode()
    return self.base_dist:mode()
end

return Independent
