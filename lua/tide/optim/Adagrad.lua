-- tide.optim.Adagrad(params, {lr = 1e-2, lr_decay = 0, weight_decay = 0,
-- initial_accumulator_value = 0, eps = 1e-10, maximize = false}), PyTorch 1.13's update:
-- g += wd*p; clr = lr / (1 + (step-1)*lr_decay); sum += g^2; p -= clr * g / (sqrt(sum) + eps).
-- The sums exist from construction (filled with initial_accumulator_value), as in PyTorch.
-- One fused kernel per parameter (core._adagrad_step_); formula_update is the same as a chain
-- of tensor ops.
local core = require("tide.core") -- _adagrad_step_ read at each call (tide.profiler wraps it)
local autograd = require("tide.autograd")
local Optimizer = require("tide.optim.Optimizer")

local Adagrad = Optimizer:extend("Adagrad", {
    lr = 1e-2, lr_decay = 0, weight_decay = 0, initial_accumulator_value = 0, eps = 1e-10,
    maximize = false,
}, {
    "lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps", "foreach",
})

Adagrad.nonnegative = { "lr_decay", "weight_decay", "initial_accumulator_value", "eps" }

-- the state an update reads, made at construction (Optimizer:check_step checks it before any
-- parameter moves)
function Adagrad:state_spec()
    return "sum", { { "step", "number" }, { "sum", "tensor" } }, true
end

function Adagrad:init_state() -- (after add_param_group: the new parameters only)
    autograd.no_grad(function()
        for _, g in ipairs(self.param_groups) do
            for _, p in ipairs(g.params) do
                p = Optimizer.real_param(p)
                local st = self:state_of(p)
                if st.sum == nil then
                    st.step = 0
                    st.sum = Optimizer.zeros_like(p):fill_(g.initial_accumulator_value)
                end
            end
        end
    end)
end

function Adagrad:update(group, p, g)
    local st = self:state_of(p)
    if not (Optimizer.fusable(p, g) and Optimizer.fusable(st.sum, g)) then
        return self:formula_update(group, p, g)
    end
    local step = st.step + 1
    st.step = step
    core._adagrad_step_(p, g, st.sum, group.lr / (1 + (step - 1) * group.lr_decay), group.eps,
        group.weight_decay, group.maximize)
end

function Adagrad:formula_update(group, p, g)
    local st = self:state_of(p)
    local step = st.step + 1
    st.step = step
    g = Optimizer.regularized_grad(group, p, g)
    local clr = group.lr / (1 + (step - 1) * group.lr_decay)
    local sum = st.sum
    sum:add_(g:mul(g))
    local std = sum:sqrt():add_(group.eps)
    p:add_(g:div(std), -clr)
end

return Adagrad
