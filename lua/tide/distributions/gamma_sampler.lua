-- tide.distributions.gamma_sampler: standard gamma draws (rate 1) of concentrations alpha, by
-- Marsaglia and Tsang's squeeze-free rejection over the whole tensor at once (each round draws
-- for the elements still rejected; about 1 in 20 is, per round), alpha < 1 boosted as
-- Gamma(alpha + 1) U^(1 / alpha). Without gradient: the Gamma family has sample, not rsample.
local core = require("tide.core")
local autograd = require("tide.autograd")

return function(alpha)
    return autograd.no_grad(function()
        local opts = { dtype = alpha.dtype, device = alpha.device }
        local small = alpha:lt(1)
        local a = core.where(small, alpha + 1, alpha)
        local d = a - 1 / 3
        local c = (d * 9):sqrt():reciprocal()
        local out = core.zeros(alpha.shape, opts)
        local pending = core.ones(alpha.shape, { dtype = "bool", device = alpha.device })
        for _ = 1, 64 do -- (64 rounds: a miss in all of them has odds below 1e-80)
            local x = core.randn(alpha.shape, opts)
            local v = (x * c + 1):pow(3)
            local u = core.rand(alpha.shape, opts)
            local ok = v:gt(0):logical_and(u:log():lt(x * x * 0.5 + d - d * v +
                d * core.where(v:gt(0), v, 1):log()))
            local take = ok:logical_and(pending)
            out = core.where(take, d * v, out)
            pending = pending:logical_and(ok:logical_not())
            if not pending:any():item() then
                break
            end
        end
        local boost = core.rand(alpha.shape, opts):pow(alpha:reciprocal())
        return core.where(small, out * boost, out)
    end)
end
