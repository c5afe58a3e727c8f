-- nn.ConvTranspose1d(in_channels, out_channels, kernel_size[, stride = 1, padding = 0,
-- output_padding = 0, groups = 1, bias = true, dilation = 1, padding_mode = "zeros"]) in
-- PyTorch's order, the last of them (or all) in a table by name (tide.nn._signature): the
-- gradient of Conv1d with
-- respect to its input (F.conv_transpose1d); weight {in, out / groups, k} as PyTorch's (its
-- default init draws from fan_in = out / groups * k)
local idiv = require("tide._compat").idiv
local core = require("tide.core")
local raise = require("tide.autograd").raise
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local S = require("tide.nn._signature")

local ConvTranspose1d = Module:extend("ConvTranspose1d")

function ConvTranspose1d:init(in_channels, out_channels, kernel_size, stride, padding,
                              output_padding, bias)
    local who = "ConvTranspose1d"
    local dilation, groups
    if type(stride) == "table" then
        local o = stride
        core._check_options(o, who, { "stride", "padding", "output_padding", "dilation",
            "groups", "bias", "padding_mode" })
        if o.padding_mode ~= nil and o.padding_mode ~= "zeros" then
            raise(string.format("tide: ConvTranspose1d: only padding_mode \"zeros\" is " ..
                "supported (as in PyTorch), got \"%s\"", tostring(o.padding_mode)))
        end
        stride, padding, output_padding, bias = o.stride, o.padding, o.output_padding, o.bias
        dilation, groups = o.dilation, o.groups
    end
    I.conv_channels(self, in_channels, out_channels, groups, who)
    -- PyTorch's 1-tuples: kernel_size=(4,), stride=(2,), ...
    kernel_size, stride = I.single(kernel_size, "kernel_size", who), I.single(stride, "stride", who)
    padding, dilation = I.single(padding, "padding", who), I.single(dilation, "dilation", who)
    output_padding = I.single(output_padding, "output_padding", who)
    self.kernel_size = I.check_int(kernel_size, "kernel_size", who)
    self.stride = I.check_int(stride or 1, "stride", who)
    self.padding = I.check_int(padding or 0, "padding", who, 0)
    self.output_padding = I.check_int(output_padding or 0, "output_padding", who, 0)
    self.dilation = I.check_int(dilation or 1, "dilation", who)
    local coutg = idiv(out_channels, self.groups)
    I.weight_and_bias(self, { in_channels, coutg, self.kernel_size }, out_channels,
        coutg * self.kernel_size, bias)
end

function ConvTranspose1d:forward(x)
    I.check_tensor(x, "ConvTranspose1d")
    local nd = x:dim()
    if (nd ~= 2 and nd ~= 3) or x:size(nd - 1) ~= self.in_channels then
        raise(string.format("tide: ConvTranspose1d: expected input {N, %d, L} or {%d, L}, got %s",
            self.in_channels, self.in_channels, I.shape_str(x.shape)))
    end
    I.check_input(x, self.weight, "ConvTranspose1d")
    return F.conv_transpose1d(x, self.weight, self.bias, { stride = self.stride,
        padding = self.padding, output_padding = self.output_padding, dilation = self.dilation,
        groups = self.groups })
end

function ConvTranspose1d:extra_repr()
    return string.format("%d -> %d, kernel %d, stride %d, padding %d", self.in_channels,
        self.out_channels, self.kernel_size, self.stride, self.padding)
end

S.define(ConvTranspose1d, { names = S.CONV_TRANSPOSE, required = 3, factory = true,
    legacy = S.conv_legacy(7) })

return ConvTranspose1d
