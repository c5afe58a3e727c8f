-- tide.optim.Adamax(params, {lr = 2e-3, betas = {0.9, 0.999}, eps = 1e-8, weight_decay = 0,
-- maximize = false}), PyTorch 1.13's update: g += wd*p; m = b1*m + (1-b1)*g;
-- u = max(b2*u, |g| + eps); p -= lr/(1-b1^t) * m / u. A chain of tensor ops (no fused kernel).
local Optimizer = require("tide.optim.Optimizer")
local Adam = require("tide.optim.Adam")

local Adamax = Optimizer:extend("Adamax", {
    lr = 2e-3, betas = { 0.9, 0.999 }, eps = 1e-8, weight_decay = 0, maximize = false,
}, {
    "lr", "betas", "eps", "weight_decay", "foreach",
})

Adamax.nonnegative = { "eps", "weight_decay" }
Adamax.check_options = Adam.check_options

local STATE_SPEC = { { "step", "number" }, { "exp_avg", "tensor" }, { "exp_inf", "tensor" } }
function Adamax:state_spec()
    return "exp_avg", STATE_SPEC
end

function Adamax:update(group, p, g)
    g = Optimizer.regularized_grad(group, p, g)
    local st = self:count_step(p, { "exp_avg", "exp_inf" })
    local b1, b2 = group.betas[1], group.betas[2]
    st.exp_avg:mul_(b1):add_(g, 1 - b1)
    st.exp_inf:copy_(st.exp_inf:mul_(b2):maximum(g:abs():add(group.eps)))
    p:addcdiv_(st.exp_avg, st.exp_inf, { value = -group.lr / (1 - b1 ^ st.step) })
end

return Adamax
