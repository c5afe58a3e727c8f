-- tide.optim.Rprop(params, {lr = 0.01, etas = {0.5, 1.2}, step_sizes = {1e-6, 50},
-- maximize = false}), PyTorch 1.13's update: s = sign(g * prev) made etaplus where > 0,
-- etaminus where < 0, 1 where 0; step_size = clamp(step_size * s, min, max); g = 0 where s is
-- etaminus (a sign change skips the step); p -= sign(g) * step_size; prev = g. Each step size
-- starts at the group's lr (at the parameter's first step). A chain of tensor ops.
local raise = require("tide.autograd").raise
local Optimizer = require("tide.optim.Optimizer")

local Rprop = Optimizer:extend("Rprop", {
    lr = 1e-2, etas = { 0.5, 1.2 }, step_sizes = { 1e-6, 50 }, maximize = false,
}, {
    "lr", "etas", "step_sizes", "foreach", "maximize",
})

local function pair(v)
    return type(v) == "table" and type(v[1]) == "number" and type(v[2]) == "number"
end

function Rprop:check_options()
    for _, g in ipairs(self.param_groups) do
        local e, s = g.etas, g.step_sizes
        if not pair(e) or not (0 < e[1] and e[1] < 1 and 1 < e[2]) then
            raise("tide: Rprop: expected etas = {etaminus, etaplus} with 0 < etaminus < 1 < " ..
                "etaplus, got " .. (pair(e) and string.format("{%s, %s}", tostring(e[1]),
                tostring(e[2])) or type(e)))
        end
        if not pair(s) or not (0 <= s[1] and s[1] <= s[2]) then
            raise("tide: Rprop: expected step_sizes = {min, max} with 0 <= min <= max, got " ..
                (pair(s) and string.format("{%s, %s}", tostring(s[1]), tostring(s[2])) or
                type(s)))
        end
    end
end

local STATE_SPEC = { { "step", "number" }, { "prev", "tensor" }, { "step_size", "tensor" } }
function Rprop:state_spec()
    return "prev", STATE_SPEC
end

function Rprop:update(group, p, g)
    if group.maximize then
        g = g:neg()
    end
    local st = self:state_of(p)
    if st.prev == nil then
        st.step = 0
        st.prev = Optimizer.zeros_like(p)
        st.step_size = Optimizer.zeros_like(p):fill_(group.lr)
    end
    st.step = st.step + 1
    local etaminus, etaplus = group.etas[1], group.etas[2]
    -- PyTorch's three masked writes, in its order (a NaN product stays NaN)
    local s = g:mul(st.prev):sign()
    s = s:masked_fill(s:gt(0), etaplus)
    s = s:masked_fill(s:lt(0), etaminus)
    s = s:masked_fill(s:eq(0), 1)
    st.step_size:mul_(s):clamp_(group.step_sizes[1], group.step_sizes[2])
    g = g:masked_fill(s:eq(etaminus), 0)
    p:addcmul_(g:sign(), st.step_size, { value = -1 })
    st.prev:copy_(g)
end

return Rprop
