-- tide.distributions.ExponentialFamily: the base of the distributions whose density is
-- exp(<t(x), theta> - F(theta) + k(x)), PyTorch's: a subclass (ExponentialFamily:extend(name))
-- defines _natural_params() (the list of the thetas, each of batch_shape .. its own event
-- dims), _log_normalizer(theta1, ...) (F, of batch_shape) and _mean_carrier_measure (E[k(x)],
-- a number; without it there is no entropy). entropy() is then the Bregman form F(theta) -
-- <theta, grad F(theta)> - E[k(x)], and kl_divergence between two of one such family F(q) -
-- F(p) - <theta_q - theta_p, grad F(theta_p)> (ExponentialFamily._kl; tide.distributions.kl
-- takes it where no closed form is written). grad F is taken by tide.autograd.grad with
-- create_graph, so both carry gradients to the parameters of p and q (PyTorch's detach p's).
-- Bernoulli, Beta, ContinuousBernoulli, Dirichlet, Exponential, Gamma (Chi2), Normal, Poisson
-- and Wishart derive from it, as PyTorch's do.
local autograd = require("tide.autograd")
local raise = autograd.raise
local unpack = require("tide._compat").unpack
local Distribution = require("tide.distributions.Distribution")

local ExponentialFamily = Distribution:extend("ExponentialFamily")

function ExponentialFamily:init()
    raise("tide: ExponentialFamily: the base class has no parameters; extend it " ..
        "(ExponentialFamily:extend(name)) and define _natural_params, _log_normalizer and " ..
        "_mean_carrier_measure, or use Normal, Gamma, Wishart, ...")
end

function ExponentialFamily:_natural_params()
    raise(("tide: %s: _natural_params is not defined for this distribution"):format(self.__name))
end

function ExponentialFamily:_log_normalizer()
    raise(("tide: %s: _log_normalizer is not defined for this distribution"):format(self.__name))
end

-- true when d is an instance of cls or of a class extended from it
ExponentialFamily.is_instance = require("tide._class").is_instance

-- thetas as leaves of a graph where needed (a theta that needs no gradient becomes one), F at
-- them and grad F, recorded: the Bregman terms differentiate through both
local function normalizer_and_grads(d)
    local thetas = {}
    for i, t in ipairs(d:_natural_params()) do
        thetas[i] = autograd.needs_record(t) and t or t:detach():requires_grad_(true)
    end
    return autograd.enable_grad(function()
        local f = d:_log_normalizer(unpack(thetas))
        local g = autograd.grad(f:sum(), thetas, { create_graph = true })
        return thetas, f, g
    end)
end

-- each theta's part summed over its own dims past the batch
local function sum_events(t, batch_shape)
    local s = { unpack(batch_shape) }
    s[#s + 1] = -1
    return t:reshape(s):sum(-1)
end

function ExponentialFamily:entropy()
    local carrier = self._mean_carrier_measure
    if carrier == nil then
        if self.entropy ~= ExponentialFamily.entropy then -- (called as the base's)
            raise(("tide: %s: the Bregman entropy needs _mean_carrier_measure, which this " ..
                "family lacks (as PyTorch's); use its entropy()"):format(self.__name))
        end
        return Distribution.entropy(self)
    end
    local thetas, f, g = normalizer_and_grads(self)
    local h = f - carrier
    for i, t in ipairs(thetas) do
        h = h - sum_events(t * g[i], self.batch_shape)
    end
    return h
end

-- KL(p || q) for p and q of one family, by the Bregman divergence of the log normalizer
function ExponentialFamily._kl(p, q)
    local ep, eq = p.event_shape, q.event_shape
    local same = #ep == #eq
    for i = 1, #ep do
        same = same and ep[i] == eq[i]
    end
    if not same then
        raise(("tide: kl_divergence: %s of event shape {%s} and of {%s}; give both one")
            :format(p.__name, table.concat(ep, ", "), table.concat(eq, ", ")))
    end
    local thetas, f, g = normalizer_and_grads(p)
    local q_thetas = q:_natural_params()
    local kl = q:_log_normalizer(unpack(q_thetas)) - f
    local bs = kl:size() -- (the two batches, broadcast)
    for i, t in ipairs(thetas) do
        kl = kl - sum_events((q_thetas[i] - t) * g[i], bs)
    end
    return kl
end

return ExponentialFamily
