-- tide.optim.NAdam(params, {lr = 2e-3, betas = {0.9, 0.999}, eps = 1e-8, weight_decay = 0,
-- momentum_decay = 4e-3, maximize = false (PyTorch 2's: the gradient negated first)}),
-- PyTorch 1.13's update (Adam with Nesterov momentum and Dozat's momentum schedule): mu_t = b1 (1 - 0.96^(t psi) / 2), mu_product *= mu_t; m and v as Adam's;
-- denom = sqrt(v / (1-b2^t)) + eps; p -= lr (1-mu_t)/(1-mu_product) g / denom
--   + lr mu_{t+1}/(1-mu_product mu_{t+1}) m / denom. A chain of tensor ops.
local Optimizer = require("tide.optim.Optimizer")
local Adam = require("tide.optim.Adam")

local NAdam = Optimizer:extend("NAdam", {
    lr = 2e-3, betas = { 0.9, 0.999 }, eps = 1e-8, weight_decay = 0, momentum_decay = 4e-3,
    maximize = false,
}, {
    "lr", "betas", "eps", "weight_decay", "momentum_decay", "foreach",
})

NAdam.nonnegative = { "eps", "weight_decay", "momentum_decay" }
NAdam.scalar_state = { step = true, mu_product = true } -- Lua numbers in a loaded state dict
NAdam.check_options = Adam.check_options

local STATE_SPEC = { { "step", "number" }, { "mu_product", "number" }, { "exp_avg", "tensor" },
    { "exp_avg_sq", "tensor" } }
function NAdam:state_spec()
    return "exp_avg", STATE_SPEC
end

function NAdam:update(group, p, g)
    g = Optimizer.regularized_grad(group, p, g)
    local st = self:count_step(p, { "exp_avg", "exp_avg_sq" })
    local t = st.step
    if t == 1 then
        st.mu_product = 1
    end
    local b1, b2, psi = group.betas[1], group.betas[2], group.momentum_decay
    local mu = b1 * (1 - 0.5 * 0.96 ^ (t * psi))
    local mu_next = b1 * (1 - 0.5 * 0.96 ^ ((t + 1) * psi))
    st.mu_product = st.mu_product * mu
    local mu_product_next = st.mu_product * mu_next
    st.exp_avg:mul_(b1):add_(g, 1 - b1)
    st.exp_avg_sq:mul_(b2):addcmul_(g, g, { value = 1 - b2 })
    local denom = st.exp_avg_sq:div(1 - b2 ^ t):sqrt():add(group.eps)
    p:addcdiv_(g, denom, { value = -group.lr * (1 - mu) / (1 - st.mu_product) })
    p:addcdiv_(st.exp_avg, denom, { value = -group.lr * mu_next / (1 - mu_product_next) })
end

return NAdam
