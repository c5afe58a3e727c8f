-- nn.Linear(in_features, out_features[, bias = true[, device[, dtype]]]), or Linear(in, out,
-- {bias = false, device =, dtype =}):
-- y = x W^T + b (no bias parameter at all when bias is false)
local core = require("tide.core")
local raise = require("tide.autograd").raise
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local fused = require("tide.nn._fused")
local S = require("tide.nn._signature")

local Linear = Module:extend("Linear")

-- (a subclass's init calls it as PyTorch's super().__init__(in_features, out_features, bias,
-- device, dtype): nn.Linear.init(self, in_features, out_features, bias, device, dtype))
function Linear:init(in_features, out_features, bias, device, dtype)
    if type(bias) == "table" then
        core._check_options(bias, "Linear", { "bias", "device", "dtype" })
        bias, device, dtype = bias.bias, bias.device or device, bias.dtype or dtype
    end
    I.check_int(in_features, "in_features", "Linear")
    I.check_int(out_features, "out_features", "Linear")
    S.check_factory("Linear", device, dtype)
    self.in_features, self.out_features = in_features, out_features
    I.weight_and_bias(self, { out_features, in_features }, out_features, in_features, bias)
    S.factory(self, device, dtype)
end

-- forward's checks; the weight
local function checked_weight(self, x)
    I.check_tensor(x, "Linear")
    local n = x:dim() > 0 and x:size(-1) or nil
    if n ~= self.in_features then
        raise(string.format("tide: Linear: expected input with last dim %d, got %s",
            self.in_features, n and tostring(n) or "a 0-d tensor"))
    end
    local weight = self.weight -- read once: a parametrized weight is computed per read
    I.check_input(x, weight, "Linear")
    return weight
end

function Linear:forward(x)
    return fused.linear(x, checked_weight(self, x), self.bias)
end

-- act(forward(x)) for act "relu" or "gelu" (the exact form), the activation fused into the
-- product where the device has the kernel (tide.models.bert's intermediate layers)
function Linear:_forward_act(x, act)
    return fused.linear(x, checked_weight(self, x), self.bias, act)
end

function Linear:extra_repr() -- PyTorch's
    return string.format("in_features=%d, out_features=%d, bias=%s", self.in_features,
        self.out_features, tostring(self.bias ~= nil))
end

S.define(Linear, { names = { "in_features", "out_features", "bias", "device", "dtype" },
    required = 2 })

-- m:reset_parameters(): PyTorch's, the weight and bias drawn again in place
function Linear:reset_parameters()
    I.reset_weight_and_bias(self)
end

return Linear
