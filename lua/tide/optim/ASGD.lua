-- tide.optim.ASGD(params, {lr = 0.01, lambd = 1e-4, alpha = 0.75, t0 = 1e6, weight_decay = 0,
-- maximize = false}), PyTorch 1.13's averaged SGD: g += wd*p; p *= 1 - lambd*eta; p -= eta*g;
-- ax += (p - ax)*mu (ax = p while mu is 1); then eta = lr / (1 + lambd*lr*t)^alpha and
-- mu = 1 / max(1, t - t0). State: step, eta and mu (Lua numbers: PyTorch's 0-d tensors, kept
-- in float64) and ax, the running average of the parameter. A chain of tensor ops.
local Optimizer = require("tide.optim.Optimizer")

local ASGD = Optimizer:extend("ASGD", {
    lr = 1e-2, lambd = 1e-4, alpha = 0.75, t0 = 1e6, weight_decay = 0, maximize = false,
}, {
    "lr", "lambd", "alpha", "t0", "weight_decay", "foreach", "maximize",
})

ASGD.nonnegative = { "weight_decay" }
ASGD.scalar_state = { step = true, eta = true, mu = true } -- Lua numbers in a loaded state dict

local STATE_SPEC = { { "step", "number" }, { "eta", "number" }, { "mu", "number" },
    { "ax", "tensor" } }
function ASGD:state_spec()
    return "ax", STATE_SPEC
end

function ASGD:update(group, p, g)
    g = Optimizer.regularized_grad(group, p, g)
    local st = self:state_of(p)
    if st.ax == nil then
        st.step, st.eta, st.mu = 0, group.lr, 1
        st.ax = Optimizer.zeros_like(p)
    end
    st.step = st.step + 1
    local step, lr, lambd = st.step, group.lr, group.lambd
    p:mul_(1 - lambd * st.eta)
    p:add_(g, -st.eta)
    if st.mu ~= 1 then
        st.ax:add_(p:sub(st.ax):mul(st.mu))
    else
        st.ax:copy_(p)
    end
    st.eta = lr / (1 + lambd * lr * step) ^ group.alpha
    st.mu = 1 / math.max(1, step - group.t0)
end

return ASGD
