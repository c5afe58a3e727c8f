-- tide.optim.Adam(params, {lr = 1e-3, betas = {0.9, 0.999}, eps = 1e-8, weight_decay = 0,
-- amsgrad = false, maximize = false})
-- PyTorch's formulas: g += wd*p; m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g^2;
-- p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps). With amsgrad, the state also keeps
-- max_exp_avg_sq = max(max_exp_avg_sq, v), which takes v's place in the denominator.
local raise = require("tide.autograd").raise
local Optimizer = require("tide.optim.Optimizer")
local core = require("tide.core") -- _adam_step_ read at each call (tide.profiler wraps it)

local Adam = Optimizer:extend("Adam", {
    lr = 1e-3, betas = { 0.9, 0.999 }, eps = 1e-8, weight_decay = 0, amsgrad = false,
    maximize = false,
}, {
    "lr", "betas", "eps", "weight_decay", "amsgrad",
})

function Adam:check_options()
    for _, g in ipairs(self.param_groups) do
        local b = g.betas
        if type(b) ~= "table" or type(b[1]) ~= "number" or type(b[2]) ~= "number"
            or not (b[1] >= 0 and b[1] < 1 and b[2] >= 0 and b[2] < 1) then
            raise("tide: " .. self.__name .. ": expected betas = {b1, b2} in [0, 1)")
        end
    end
end

-- the state an update reads (Optimizer:check_step checks it before any parameter moves)
local STATE_SPEC = { { "step", "number" }, { "exp_avg", "tensor" }, { "exp_avg_sq", "tensor" } }
local AMSGRAD_SPEC = { { "step", "number" }, { "exp_avg", "tensor" }, { "exp_avg_sq", "tensor" },
    { "max_exp_avg_sq", "tensor" } }

function Adam:state_spec(group)
    return "exp_avg", group.amsgrad and AMSGRAD_SPEC or STATE_SPEC
end

-- p's state (made at its first step: the moments, and max_exp_avg_sq with amsgrad), its
-- moments and this step's number
local function step_state(self, group, p)
    local st = self:state_of(p)
    if not st.exp_avg then
        st.exp_avg, st.exp_avg_sq, st.step = Optimizer.zeros_like(p), Optimizer.zeros_like(p), 0
        if group.amsgrad then
            st.max_exp_avg_sq = Optimizer.zeros_like(p)
        end
    end
    st.step = st.step + 1
    return st, st.exp_avg, st.exp_avg_sq, st.step
end

-- PyTorch's formula as a chain of tensor ops, shared with AdamW (decoupled: the decay is
-- applied to p, not added to g): the reference the fused kernel is tested against, and the
-- path for what the kernel does not take (a parameter that is not contiguous, amsgrad)
function Adam:formula_update(group, p, g, decoupled)
    if group.maximize then
        g = g:neg()
    end
    local lr, wd = group.lr, group.weight_decay
    if wd ~= 0 then
        if decoupled then
            p:mul_(1 - lr * wd)
        else
            g = g:add(p:mul(wd))
        end
    end
    local st, m, v, t = step_state(self, group, p)
    local b1, b2 = group.betas[1], group.betas[2]
    m:mul_(b1):add_(g:mul(1 - b1))
    v:mul_(b2):add_(g:mul(g):mul(1 - b2))
    local bc1, bc2 = 1 - b1 ^ t, 1 - b2 ^ t
    local denom
    if group.amsgrad then
        -- PyTorch 1.13: torch.maximum(max_exp_avg_sq, v, out=max_exp_avg_sq), then
        -- (max_exp_avg_sq.sqrt() / sqrt(bc2)).add_(eps)
        local vmax = st.max_exp_avg_sq
        vmax:copy_(vmax:maximum(v))
        denom = vmax:sqrt():div(math.sqrt(bc2)):add(group.eps)
    else
        denom = v:sqrt():mul(1 / math.sqrt(bc2)):add(group.eps)
    end
    p:sub_(m:div(denom):mul(lr / bc1))
end

-- one fused in-place kernel per parameter (core._adam_step_): no temporaries
function Adam:adam_update(group, p, g, decoupled)
    -- the fused kernel has no amsgrad: that takes the chain of tensor ops
    if group.amsgrad or not Optimizer.fusable(p, g) then
        return self:formula_update(group, p, g, decoupled)
    end
    local _, m, v, t = step_state(self, group, p)
    local b1, b2 = group.betas[1], group.betas[2]
    core._adam_step_(p, g, m, v, group.lr, b1, b2, group.eps, group.weight_decay, 1 - b1 ^ t,
        1 - b2 ^ t, decoupled, group.maximize)
end

function Adam:update(group, p, g)
    self:adam_update(group, p, g, false)
end

return Adam
