-- config.hidden_act -> the function BERT applies after its intermediate (and MLM transform)
-- dense layer, as transformers' ACT2FN: "gelu" the exact (erf) GELU, one kernel; "gelu_new",
-- "gelu_pytorch_tanh" and "gelu_fast" the tanh approximation; "relu", "silu"/"swish", "tanh".
local F = require("tide.nn.functional")
local raise = require("tide.autograd").raise

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

return function(name)
    local f = ACT[name]
    if not f then
        raise(string.format('tide: BERT: hidden_act "%s" is not supported', tostring(name)))
    end
    return f
end
