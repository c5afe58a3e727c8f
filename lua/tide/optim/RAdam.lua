-- tide.optim.RAdam(params, {lr = 1e-3, betas = {0.9, 0.999}, eps = 1e-8, weight_decay = 0,
-- maximize = false (PyTorch 2's: the gradient negated first)}),
-- PyTorch 1.13's update (Adam whose adaptive step is rectified once the variance estimate is
-- tractable): m and v as Adam's; rho_inf = 2/(1-b2) - 1, rho_t = rho_inf - 2 t b2^t/(1-b2^t);
-- when rho_t > 5, p -= lr m/(1-b1^t) * sqrt(1-b2^t)/(sqrt(v) + eps) * r_t (the rectification
-- term), else p -= lr m/(1-b1^t). A chain of tensor ops.
local Optimizer = require("tide.optim.Optimizer")
local Adam = require("tide.optim.Adam")

local RAdam = Optimizer:extend("RAdam", {
    lr = 1e-3, betas = { 0.9, 0.999 }, eps = 1e-8, weight_decay = 0, maximize = false,
}, {
    "lr", "betas", "eps", "weight_decay", "foreach",
})

RAdam.nonnegative = { "eps", "weight_decay" }
RAdam.check_options = Adam.check_options

local STATE_SPEC = { { "step", "number" }, { "exp_avg", "tensor" }, { "exp_avg_sq", "tensor" } }
function RAdam:state_spec()
    return "exp_avg", STATE_SPEC
end

function RAdam:update(group, p, g)
    g = Optimizer.regularized_grad(group, p, g)
    local st = self:count_step(p, { "exp_avg", "exp_avg_sq" })
    local t = st.step
    local b1, b2, lr = group.betas[1], group.betas[2], group.lr
    st.exp_avg:mul_(b1):add_(g, 1 - b1)
    st.exp_avg_sq:mul_(b2):addcmul_(g, g, { value = 1 - b2 })
    local bc1, bc2 = 1 - b1 ^ t, 1 - b2 ^ t
    local corrected = st.exp_avg:div(bc1)
    local rho_inf = 2 / (1 - b2) - 1
    local rho_t = rho_inf - 2 * t * b2 ^ t / bc2
    if rho_t > 5 then
        local rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf /
            ((rho_inf - 4) * (rho_inf - 2) * rho_t))
        local adaptive = st.exp_avg_sq:sqrt():add(group.eps):reciprocal():mul(math.sqrt(bc2))
        p:sub_(corrected:mul(lr):mul(adaptive):mul(rect))
    else
        p:sub_(corrected:mul(lr))
    end
end

return RAdam
