-- tide.optim.RMSprop(params, {lr = 1e-2, alpha = 0.99, eps = 1e-8, weight_decay = 0,
-- momentum = 0, centered = false, maximize = false}), PyTorch 1.13's update:
-- g += wd*p; v = alpha*v + (1-alpha)*g^2; with centered: m = alpha*m + (1-alpha)*g and
-- avg = sqrt(v - m^2) + eps, else avg = sqrt(v) + eps; with momentum:
-- buf = momentum*buf + g/avg and p -= lr*buf, else p -= lr*g/avg. One fused kernel per
-- parameter (core._rmsprop_step_); formula_update is the same as a chain of tensor ops.
local core = require("tide.core") -- _rmsprop_step_ read at each call (tide.profiler wraps it)
local Optimizer = require("tide.optim.Optimizer")

local RMSprop = Optimizer:extend("RMSprop", {
    lr = 1e-2, alpha = 0.99, eps = 1e-8, weight_decay = 0, momentum = 0, centered = false,
    maximize = false,
}, {
    "lr", "alpha", "eps", "weight_decay", "momentum", "centered", "foreach",
    "maximize", "differentiable",
})

RMSprop.nonnegative = { "eps", "momentum", "weight_decay", "alpha" }

-- the state an update reads (Optimizer:check_step checks it before any parameter moves)
function RMSprop:state_spec(group)
    local keys = { { "step", "number" }, { "square_avg", "tensor" } }
    if group.momentum > 0 then
        keys[#keys + 1] = { "momentum_buffer", "tensor" }
    end
    if group.centered then
        keys[#keys + 1] = { "grad_avg", "tensor" }
    end
    return "square_avg", keys
end

local function state(p, group, st)
    if not st.square_avg then
        st.step, st.square_avg = 0, Optimizer.zeros_like(p)
        if group.momentum > 0 then
            st.momentum_buffer = Optimizer.zeros_like(p)
        end
        if group.centered then
            st.grad_avg = Optimizer.zeros_like(p)
        end
    end
    st.step = st.step + 1
    return st
end

-- the kernel takes contiguous states of the parameter's dtype (a loaded state_dict may differ)
local function fusable_state(t, g, wanted)
    if not wanted then
        return true
    end
    return t ~= nil and Optimizer.fusable(t, g)
end

function RMSprop:update(group, p, g)
    local st = self:state_of(p)
    local mom, centered = group.momentum > 0, group.centered
    if not (Optimizer.fusable(p, g) and (not st.square_avg or (fusable_state(st.square_avg, g,
            true) and fusable_state(st.momentum_buffer, g, mom)
            and fusable_state(st.grad_avg, g, centered)))) then
        return self:formula_update(group, p, g)
    end
    state(p, group, st)
    core._rmsprop_step_(p, g, st.square_avg, mom and st.momentum_buffer or nil,
        centered and st.grad_avg or nil, group.lr, group.alpha, group.eps, group.weight_decay,
        group.momentum, group.maximize)
end

function RMSprop:formula_update(group, p, g)
    g = Optimizer.regularized_grad(group, p, g)
    local st = state(p, group, self:state_of(p))
    local alpha = group.alpha
    local v = st.square_avg
    v:mul_(alpha):add_(g:mul(g), 1 - alpha)
    local avg
    if group.centered then
        local m = st.grad_avg
        m:mul_(alpha):add_(g, 1 - alpha)
        avg = m:mul(m):neg_():add_(v):sqrt_()
    else
        avg = v:sqrt()
    end
    avg:add_(group.eps)
    if group.momentum > 0 then
        local buf = st.momentum_buffer
        buf:mul_(group.momentum):add_(g:div(avg))
        p:add_(buf, -group.lr)
    else
        p:add_(g:div(avg), -group.lr)
    end
end

return RMSprop
