-- tide.optim.Adadelta(params, {lr = 1.0, rho = 0.9, eps = 1e-6, weight_decay = 0,
-- maximize = false}), PyTorch 1.13's update: g += wd*p; v = rho v + (1-rho) g^2;
-- delta = sqrt(u + eps) / sqrt(v + eps) * g; u = rho u + (1-rho) delta^2; p -= lr delta.
-- A chain of tensor ops.
local raise = require("tide.autograd").raise
local Optimizer = require("tide.optim.Optimizer")

local Adadelta = Optimizer:extend("Adadelta", {
    lr = 1.0, rho = 0.9, eps = 1e-6, weight_decay = 0, maximize = false,
}, {
    "lr", "rho", "eps", "weight_decay", "foreach",
})

Adadelta.nonnegative = { "eps", "weight_decay" }

function Adadelta:check_options()
    for _, g in ipairs(self.param_groups) do
        if not (g.rho >= 0 and g.rho <= 1) then
            raise("tide: Adadelta: expected rho in [0, 1], got " .. tostring(g.rho))
        end
    end
end

local STATE_SPEC = { { "step", "number" }, { "square_avg", "tensor" }, { "acc_delta", "tensor" } }
function Adadelta:state_spec()
    return "square_avg", STATE_SPEC
end

function Adadelta:update(group, p, g)
    g = Optimizer.regularized_grad(group, p, g)
    local st = self:count_step(p, { "square_avg", "acc_delta" })
    local rho, eps = group.rho, group.eps
    st.square_avg:mul_(rho):addcmul_(g, g, { value = 1 - rho })
    local std = st.square_avg:add(eps):sqrt()
    local delta = st.acc_delta:add(eps):sqrt():div(std):mul(g)
    st.acc_delta:mul_(rho):addcmul_(delta, delta, { value = 1 - rho })
    p:add_(delta, -group.lr)
end

return Adadelta
