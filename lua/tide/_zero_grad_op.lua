-- tide._zero_grad_op: an autograd op that passes a result through and gives each tensor input a
-- zero gradient, PyTorch's formula for outputs with no derivative that still follow their
-- inputs into the graph: the in-place comparisons (tide.aliases) and the random draws of
-- normal and poisson (tide.random_draws). The result requires grad with its inputs instead of
-- being silently detached.
local core = require("tide.core")
local autograd = require("tide.autograd")

local function zeros_of(t)
    return core.is_tensor(t) and core.zeros(t.shape, { dtype = t.dtype, device = t.device }) or nil
end

-- zero_grad_op(name): op(r, a[, b]), a copy of r recorded as `name` with zero gradients to a, b
return function(name)
    return autograd.def {
        name = name,
        forward = function(_, r)
            return r:clone()
        end,
        backward = function(nd)
            return nil, zeros_of(nd[2]), zeros_of(nd[3])
        end,
    }
end
