-- tide.optim.SGD(params, {lr =, momentum = 0, dampening = 0, weight_decay = 0, nesterov = false})
-- PyTorch's formulas: g += wd*p; buf = momentum*buf + (1 - dampening)*g (buf = g at the first
-- step); g = nesterov and g + momentum*buf or buf; p -= lr*g
local raise = require("tide.autograd").raise
local Optimizer = require("tide.optim.Optimizer")
local core = require("tide.core") -- _sgd_step_ read at each call (tide.profiler wraps it)

local SGD = Optimizer:extend("SGD", {
    lr = 1e-3, momentum = 0, dampening = 0, weight_decay = 0, nesterov = false, maximize = false,
}, {
    "lr", "momentum", "dampening", "weight_decay", "nesterov",
})

function SGD:check_options()
    for _, g in ipairs(self.param_groups) do
        if g.nesterov and (g.momentum <= 0 or g.dampening ~= 0) then
            raise("tide: SGD: nesterov needs momentum > 0 and dampening = 0")
        end
        if g.momentum < 0 or g.weight_decay < 0 then
            raise("tide: SGD: expected momentum >= 0 and weight_decay >= 0")
        end
    end
end

-- the state an update reads (Optimizer:check_step checks it before any parameter moves)
function SGD:state_spec(group)
    if group.momentum ~= 0 then
        return "momentum_buffer", { { "momentum_buffer", "tensor" } }
    end
end

-- PyTorch's formula as a chain of tensor ops: the reference the fused kernel is tested against,
-- and the path for what the kernel does not take (a parameter that is not contiguous)
function SGD:formula_update(group, p, g)
    if group.maximize then
        g = g:neg()
    end
    local wd = group.weight_decay
    if wd ~= 0 then
        g = g:add(p:mul(wd))
    end
    local mom = group.momentum
    if mom ~= 0 then
        local st = self:state_of(p)
        local buf = st.momentum_buffer
        if not buf then
            buf = g:clone()
            st.momentum_buffer = buf
        else
            local damp = group.dampening
            buf:mul_(mom):add_(damp == 0 and g or g:mul(1 - damp))
        end
        if group.nesterov then
            g = g:add(buf:mul(mom))
        else
            g = buf
        end
    end
    p:sub_(g:mul(group.lr))
end

-- one fused in-place kernel per parameter (core._sgd_step_): no temporaries
function SGD:update(group, p, g)
    if not Optimizer.fusable(p, g) then
        return self:formula_update(group, p, g)
    end
    local mom, buf, first = group.momentum, nil, false
    if mom ~= 0 then
        local st = self:state_of(p)
        buf = st.momentum_buffer
        if not buf then
            buf, first = Optimizer.zeros_like(p), true
            st.momentum_buffer = buf
        end
    end
    core._sgd_step_(p, g, buf, group.lr, mom, group.dampening, group.weight_decay, group.nesterov,
        group.maximize, first)
end

return SGD
