-- tide.distributions.VonMises(loc, concentration[, {validate_args =}]): the circular von Mises
-- distribution, PyTorch's: loc and the values are angles in radians (any real number, read
-- modulo 2 pi), log_prob concentration cos(x - loc) - log(2 pi I0(concentration)) with
-- PyTorch's polynomial fits of log I0 and log I1 (Abramowitz and Stegun 9.8), mean and mode
-- loc, variance the circular one, 1 - I1 / I0. sample(shape) is Best and Fisher's rejection
-- sampler, PyTorch's (draws in [-pi, pi); no gradient: PyTorch has no rsample), its proposal
-- computed without cancellation. concentration must be positive. No entropy, as PyTorch's.
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local Distribution = require("tide.distributions.Distribution")
local X = require("tide.distributions._extras")

local VonMises = Distribution:extend("VonMises")
VonMises.arg_constraints = require("tide.distributions._arg_constraints").VonMises
VonMises.arg_names = { "loc", "concentration", options = true } -- (PyTorch's, by name too)
VonMises.has_rsample = false

local I0_SMALL = { 1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2 }
local I0_LARGE = { 0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2,
    -0.2057706e-1, 0.2635537e-1, -0.1647633e-1, 0.392377e-2 }
local I1_SMALL = { 0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2,
    0.32411e-3 }
local I1_LARGE = { 0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1,
    0.2282967e-1, -0.2895312e-1, 0.1787654e-1, -0.420059e-2 }

local function eval_poly(y, coef) -- (Horner, from the highest power)
    local r = y * 0 + coef[#coef]
    for i = #coef - 1, 1, -1 do
        r = r * y + coef[i]
    end
    return r
end

-- log I_order(x) for x > 0, order 0 or 1: the fit below 3.75 and the one above
local function log_bessel(x, order)
    local y = (x / 3.75):pow(2)
    local small = eval_poly(y, order == 0 and I0_SMALL or I1_SMALL)
    if order == 1 then
        small = x:abs() * small
    end
    small = small:log()
    local large = x - x:log() * 0.5 + eval_poly(x:reciprocal() * 3.75,
        order == 0 and I0_LARGE or I1_LARGE):log()
    return core.where(x:detach():lt(3.75), small, large)
end

function VonMises:init(loc, concentration, opts, ...)
    local who = "VonMises"
    local validate = X.trailing(who, 2, opts, ...)
    local p, shape = Distribution.broadcast_params(who, { "loc", "concentration" },
        { loc, concentration })
    if validate then
        Distribution.require(p[2]:detach():gt(0), who, "concentration must be positive")
    end
    self.loc, self.concentration = p[1], p[2]
    self._validate = validate
    -- the sampler's proposal, PyTorch's r = (1 + rho^2) / (2 rho) with its rho = (tau -
    -- sqrt(2 tau)) / (2 k) written as 2 k / (tau + sqrt(2 tau)): no cancellation (PyTorch 1.13's
    -- rho is 0 for a concentration below about 1e-8, 1e-4 in float32, and its sampler spins)
    local k = self.concentration
    local tau = (k:pow(2) * 4 + 1):sqrt() + 1
    local rho = k * 2 / (tau + (tau * 2):sqrt())
    self._proposal_r = (rho:pow(2) + 1) / (rho * 2)
    self.batch_shape, self.event_shape = shape, {}
    self._params = { "loc", "concentration" }
end

function VonMises:expand(batch_shape)
    local s = X.expand_shape(self, batch_shape)
    local new = X.copy(self)
    new.loc, new.concentration = self.loc:expand(s), self.concentration:expand(s)
    new._proposal_r = self._proposal_r:expand(s)
    new.batch_shape = s
    return new
end

function VonMises:support()
    return X.support("real")
end

function VonMises:mean() -- (the circular mean)
    return self.loc
end

function VonMises:mode()
    return self.loc
end

function VonMises:variance() -- (the circular variance)
    local k = self.concentration
    return -(log_bessel(k, 1) - log_bessel(k, 0)):exp() + 1
end

function VonMises:stddev()
    return self:variance():sqrt()
end

function VonMises:log_prob(value)
    value = self:value_tensor(value, "VonMises.log_prob", self.loc)
    local k = self.concentration
    return k * (value - self.loc):cos() - math.log(2 * math.pi) - log_bessel(k, 0)
end

-- Best and Fisher's rounds on draws of shape {3, ...} (draw(): the next round's, uniform in
-- [0, 1)) until every element has accepted one; an element takes the angle of the last round
-- it accepted, as PyTorch's (the acceptances do not depend on the angles: still exact)
local function rejection(loc, concentration, r, shape, draw)
    local x = core.zeros(shape, { dtype = loc.dtype, device = loc.device })
    local done = core.zeros(shape, { dtype = "bool", device = loc.device })
    local rounds = 0
    while not done:all():item() do
        rounds = rounds + 1
        if rounds > 200 then -- (a valid element misses 200 rounds with odds below 1e-90)
            raise("tide: VonMises.sample: the rejection sampler accepted nothing for some " ..
                "elements in 200 rounds; are loc finite and concentration positive?")
        end
        local u = draw()
        local u1, u2, u3 = u:select(1, 1), u:select(1, 2), u:select(1, 3)
        local z = (u1 * math.pi):cos()
        local f = (r * z + 1) / (r + z)
        local c = concentration * (r - f)
        local accept = (c * (-c + 2) - u2):gt(0):logical_or(((c / u2):log() + 1 - c):ge(0))
        x = core.where(accept, (u3 - 0.5):sign() * f:acos(), x)
        done = done:logical_or(accept)
    end
    return (x + math.pi + loc):remainder(2 * math.pi) - math.pi
end

function VonMises:sample(shape)
    local s = self:extended_shape(shape, "VonMises.sample")
    return autograd.no_grad(function()
        local loc, k, r = self.loc:detach(), self.concentration:detach(),
            self._proposal_r:detach()
        local us = X.concat({ 3 }, s)
        return rejection(loc, k, r, s, function()
            return core.rand(us, { dtype = loc.dtype, device = loc.device })
        end)
    end)
end

VonMises._rejection, VonMises._log_bessel = rejection, log_bessel
return VonMises
