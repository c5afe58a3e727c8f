-- tide.optim.SparseAdam(params, {lr = 1e-3, betas = {0.9, 0.999}, eps = 1e-8, maximize =
-- false}): PyTorch 1.13's lazy Adam for embeddings made with sparse = true. Only the rows a step's
-- gradient touches move, and only their moments decay; the step count is the parameter's:
-- m_r = b1*m_r + (1-b1)*g_r; v_r = b2*v_r + (1-b2)*g_r^2;
-- p_r -= lr*sqrt(1-b2^t)/(1-b1^t) * m_r / (sqrt(v_r) + eps). tide's gradients are dense (the
-- values of PyTorch's sparse one, made dense), so a row is touched when its gradient is not
-- all zero (a row looked up whose gradient is exactly zero stays as it is, where PyTorch's
-- decays its moments). A 1-D parameter's rows are its elements.
local Optimizer = require("tide.optim.Optimizer")
local Adam = require("tide.optim.Adam")

local SparseAdam = Optimizer:extend("SparseAdam", {
    lr = 1e-3, betas = { 0.9, 0.999 }, eps = 1e-8, maximize = false,
}, {
    "lr", "betas", "eps",
})

SparseAdam.nonnegative = { "eps" }
SparseAdam.check_options = Adam.check_options

local STATE_SPEC = { { "step", "number" }, { "exp_avg", "tensor" }, { "exp_avg_sq", "tensor" } }
function SparseAdam:state_spec()
    return "exp_avg", STATE_SPEC
end

-- 1 for the rows of g that are not all zero, 0 for the others, shaped to broadcast over p
local function touched_rows(g)
    local nz = g:ne(0)
    if g:dim() > 1 then
        nz = nz:flatten(2):any(2)
        local shape = { g:size(1) }
        for _ = 2, g:dim() do
            shape[#shape + 1] = 1
        end
        nz = nz:reshape(shape)
    end
    return nz:to(g.dtype)
end

function SparseAdam:update(group, p, g)
    if group.maximize then
        g = g:neg()
    end
    local st = self:count_step(p, { "exp_avg", "exp_avg_sq" })
    local b1, b2 = group.betas[1], group.betas[2]
    local rows = touched_rows(g)
    -- m += (1 - b1) * (g - m) on the touched rows: b1*m + (1-b1)*g there, m elsewhere
    st.exp_avg:add_((g - st.exp_avg):mul(rows), 1 - b1)
    st.exp_avg_sq:add_((g * g - st.exp_avg_sq):mul(rows), 1 - b2)
    local step_size = group.lr * math.sqrt(1 - b2 ^ st.step) / (1 - b1 ^ st.step)
    p:add_(st.exp_avg:div(st.exp_avg_sq:sqrt():add(group.eps)):mul(rows), -step_size)
end

return SparseAdam
