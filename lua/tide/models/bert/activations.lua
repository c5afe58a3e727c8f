-- config.hidden_act -> the function BERT applies after its intermediate (and MLM transform)
-- dense layer, as transformers' ACT2FN: "gelu" the exact (erf) GELU, one kernel; "gelu_new",
-- "gelu_pytorch_tanh" and "gelu_fast" the tanh approximation; "relu", "silu"/"swish", "tanh".
-- The module's apply(act, dense, x) is act(dense(x)), with exact GELU and ReLU fused into the
-- product (the linear kernel row) when dense is a plain nn.Linear.
local nn = require("tide.nn")
local F = require("tide.nn.functional")
local raise = require("tide.autograd").raise
local hooks = require("tide.nn.module_hooks") -- globals: every module's hooks

local function gelu_tanh(x)
    return F.gelu(x, { approximate = "tanh" })
end

local ACT = {
    gelu = function(x) return x:gelu() end,
    gelu_new = gelu_tanh,
    gelu_pytorch_tanh = gelu_tanh,
    gelu_fast = gelu_tanh,
    relu = function(x) return x:relu() end,
    silu = function(x) return F.silu(x) end,
    swish = function(x) return F.silu(x) end,
    tanh = function(x) return x:tanh() end,
}

-- the activations the linear kernel row applies itself
local FUSED = { [ACT.gelu] = "gelu", [ACT.relu] = "relu" }
local linear_forward = nn.Linear.forward

local M = setmetatable({}, {
    __call = function(_, name)
        local f = ACT[name]
        if not f then
            raise(string.format('tide: BERT: hidden_act "%s" is not supported', tostring(name)))
        end
        return f
    end,
})

-- act(dense(x)); fused when act is one the kernel has and dense a Linear whose forward is
-- nn.Linear's, without hooks (they see dense's own output, so they keep the two steps)
function M.apply(act, dense, x)
    local fused = FUSED[act]
    if fused and dense.forward == linear_forward and not rawget(dense, "_forward_pre_hooks") and
        not rawget(dense, "_forward_hooks") and not rawget(dense, "_backward_hooks") and
        not next(hooks.globals) then
        return dense:_forward_act(x, fused)
    end
    return act(dense(x))
end

return M
