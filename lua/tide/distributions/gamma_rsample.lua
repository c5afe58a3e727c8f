-- tide.distributions.gamma_rsample: standard gamma draws (rate 1) of concentrations alpha that
-- carry a gradient to alpha, by implicit reparametrization (Figurnov et al. 2018, what
-- PyTorch's _standard_gamma_grad approximates): with P(alpha, z) the gamma cdf held fixed,
-- dz / dalpha = -(dP / dalpha) / p(z; alpha). dP / dalpha is a central difference of tide's
-- igamma (good to 1e-15) at alpha (1 +- 1e-5), in float64 (from Q = 1 - P in the upper tail, so
-- no cancellation): about 1e-9 relative. The draw is gamma_sampler's; the gradient enters as
-- z + (alpha - alpha.detach()) dz/dalpha, whose value is z.
local core = require("tide.core")
local autograd = require("tide.autograd")
local standard_gamma = require("tide.distributions.gamma_sampler")
local TINY = require("tide.distributions.transforms._util").TINY

local M = {}

local H = 1e-5

-- dz / dalpha at the draws z of alpha (tensors of one shape; float64 result, 0 where z is 0
-- or the ratio is not finite)
function M.grad(alpha, z)
    return autograd.no_grad(function()
        local a, x = alpha:to("float64"), z:to("float64")
        local h = a * H
        local upper = a:igamma(x):gt(0.5)
        local dp = core.where(upper, (a - h):igammac(x) - (a + h):igammac(x),
            (a + h):igamma(x) - (a - h):igamma(x)) / (h * 2)
        local log_pdf = (a - 1):xlogy(x) - x - a:lgamma()
        local g = -dp / log_pdf:exp()
        return core.where(x:gt(0):logical_and(g:isfinite()), g, 0)
    end)
end

-- draws of alpha's shape (alpha contiguous, float), differentiable to alpha; at least the
-- dtype's smallest normal (PyTorch's _standard_gamma: a tiny concentration underflows, 0 never)
function M.sample(alpha)
    local z = standard_gamma(alpha:detach())
    z = z:clamp(TINY[z.dtype], nil)
    if not autograd.needs_record(alpha) then
        return z
    end
    local g = M.grad(alpha:detach(), z):to(alpha.dtype)
    return z + (alpha - alpha:detach()) * g
end

return M
