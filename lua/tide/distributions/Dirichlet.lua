-- tide.distributions.Dirichlet(concentration): the Dirichlet distribution over the simplex of
-- the last dim K (event shape {K}), PyTorch's formulas; rsample(shape) normalizes gamma draws,
-- differentiable to the concentration (Gamma's implicit reparametrization). The concentration
-- must be positive; values must lie on the simplex (>= 0, summing to 1 within 1e-6).
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise
local is_tensor = autograd.is_tensor
local Distribution = require("tide.distributions.Distribution")
local ExponentialFamily = require("tide.distributions.ExponentialFamily")
local gamma_rsample = require("tide.distributions.gamma_rsample")
local U = require("tide.distributions.transforms._util")

local Dirichlet = ExponentialFamily:extend("Dirichlet") -- (PyTorch's base)
Dirichlet.arg_constraints = require("tide.distributions._arg_constraints").Dirichlet
Dirichlet.has_rsample = true -- (PyTorch's class field)
Dirichlet.arg_names = { "concentration" } -- (PyTorch's, by name too)

function Dirichlet:init(concentration, ...)
    args.no_extra("Dirichlet", 2, ...)
    if not is_tensor(concentration) or concentration:dim() < 1 or
        not args.FLOAT[concentration.dtype] then
        raise("tide: Dirichlet: concentration must be a floating-point tensor with at least " ..
            "one dim (the simplex's), got " .. (is_tensor(concentration) and
            concentration.dtype .. " " .. args.shape_str(concentration:size()) or
            type(concentration)))
    end
    Distribution.require(concentration:detach():gt(0), "Dirichlet",
        "concentration must be positive")
    self.concentration = concentration
    local shape = concentration:size()
    local k = table.remove(shape)
    self.batch_shape, self.event_shape = shape, { k }
    self._params = { "concentration" }
end

function Dirichlet:mean()
    return self.concentration / self.concentration:sum(-1, true)
end

function Dirichlet:variance()
    local c = self.concentration
    local c0 = c:sum(-1, true)
    return c * (c0 - c) / (c0:pow(2) * (c0 + 1))
end

function Dirichlet:rsample(shape)
    local s = self:extended_shape(shape, "Dirichlet.rsample")
    local g = gamma_rsample.sample(self.concentration:expand(s):contiguous())
    local r = g / g:sum(-1, true)
    -- PyTorch's _sample_dirichlet: values in [tiny, 1 - eps / 2] (the gradient is r's)
    local d = r:detach()
    return r + (d:clamp(U.TINY[d.dtype], 1 - U.EPS[d.dtype] / 2) - d)
end

function Dirichlet:log_prob(value)
    local who = "Dirichlet.log_prob"
    value = self:value_tensor(value, who, self.concentration)
    local v = value:detach()
    Distribution.require(v:ge(0):all(-1):logical_and((v:sum(-1) - 1):abs():le(1e-6)), who,
        "the values must lie on the simplex (>= 0, summing to 1)")
    local c = self.concentration
    return (c - 1):xlogy(value):sum(-1) + c:sum(-1):lgamma() - c:lgamma():sum(-1)
end

function Dirichlet:entropy()
    local c = self.concentration
    local k = c:size(-1)
    local a0 = c:sum(-1)
    return c:lgamma():sum(-1) - a0:lgamma() - (-a0 + k) * a0:digamma() -
        ((c - 1) * c:digamma()):sum(-1)
end

-- the exponential family's parts (ExponentialFamily's KL; PyTorch's: no carrier measure, so
-- no Bregman entropy)
function Dirichlet:_natural_params()
    return { self.concentration }
end

function Dirichlet:_log_normalizer(x)
    return x:lgamma():sum(-1) - x:sum(-1):lgamma()
end

-- PyTorch 1.13's mode: (alpha - 1)+ normalized; one-hot at the largest where all alpha < 1
local function dirichlet_mode(conc)
    local cm1 = (conc - 1):clamp(0, math.huge)
    local mode = cm1 / cm1:sum(-1, true)
    local k = conc:size(-1)
    local mask = conc:lt(1):all(-1, true)
    local at = mode:argmax(-1, true) -- (1-based; PyTorch's argmax of its NaN rows)
    local hot = core.arange(1, k + 1, { device = conc.device }):eq(at):to(mode.dtype)
    return core.where(mask, hot, mode)
end

function Dirichlet:mode()
    return dirichlet_mode(self.concentration)
end
Dirichlet._mode = dirichlet_mode

return Dirichlet
