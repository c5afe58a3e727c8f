-- nn.Bilinear(in1_features, in2_features, out_features[, {bias = true}]): x1^T W_o x2 + b_o
-- (F.bilinear); weight {out, in1, in2} and bias {out} drawn from U(-1/sqrt(in1), 1/sqrt(in1)),
-- as PyTorch's
local core = require("tide.core")
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local S = require("tide.nn._signature")

local Bilinear = Module:extend("Bilinear")

function Bilinear:init(in1_features, in2_features, out_features, opts)
    core._check_options(opts or {}, "Bilinear", { "bias" })
    self.in1_features = I.check_int(in1_features, "in1_features", "Bilinear")
    self.in2_features = I.check_int(in2_features, "in2_features", "Bilinear")
    self.out_features = I.check_int(out_features, "out_features", "Bilinear")
    I.weight_and_bias(self, { out_features, in1_features, in2_features }, out_features,
        in1_features, (opts or {}).bias)
end

function Bilinear:forward(x1, x2)
    I.check_tensor(x1, "Bilinear")
    I.check_tensor(x2, "Bilinear")
    local weight = self.weight -- read once: a parametrized weight is computed per read
    I.check_input(x1, weight, "Bilinear")
    return F.bilinear(x1, x2, weight, self.bias)
end

function Bilinear:extra_repr() -- PyTorch's
    return string.format("in1_features=%d, in2_features=%d, out_features=%d, bias=%s",
        self.in1_features, self.in2_features, self.out_features, tostring(self.bias ~= nil))
end

S.define(Bilinear, { names = { "in1_features", "in2_features", "out_features", "bias" },
    required = 3 })

-- m:reset_parameters(): PyTorch's, weight and bias drawn again in place from
-- U(-1/sqrt(in1_features), 1/sqrt(in1_features))
function Bilinear:reset_parameters()
    local bound = 1 / math.sqrt(self.weight:size(2))
    require("tide.autograd").no_grad(function()
        self.weight:uniform_(-bound, bound)
        if self.bias ~= nil then
            self.bias:uniform_(-bound, bound)
        end
    end)
end

return Bilinear
