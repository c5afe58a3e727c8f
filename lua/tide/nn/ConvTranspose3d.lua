-- nn.ConvTranspose3d(in_channels, out_channels, kernel_size[, stride = 1, padding = 0,
-- output_padding = 0, groups = 1, bias = true, dilation = 1, padding_mode = "zeros"]) in
-- PyTorch's order, the last of them (or all) in a table by name (tide.nn._signature): the
-- gradient of Conv3d with
-- respect to its input (F.conv_transpose3d); sizes an integer or {d, h, w}; weight
-- {in, out / groups, kd, kh, kw} as PyTorch's (its default init draws from fan_in =
-- out / groups * kd * kh * kw)
local idiv = require("tide._compat").idiv
local core = require("tide.core")
local raise = require("tide.autograd").raise
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local S = require("tide.nn._signature")
local T = require("tide.nn._args3d")
local ConvTranspose2d = require("tide.nn.ConvTranspose2d")

local ConvTranspose3d = Module:extend("ConvTranspose3d")

function ConvTranspose3d:init(in_channels, out_channels, kernel_size, opts)
    local who = "ConvTranspose3d"
    if opts ~= nil and type(opts) ~= "table" then
        raise("tide: ConvTranspose3d: expected an options table {stride =, padding =, ...} " ..
            "after kernel_size, got " .. type(opts))
    end
    local o = opts or {}
    core._check_options(o, who, { "stride", "padding", "output_padding", "dilation", "groups",
        "bias", "padding_mode" })
    if o.padding_mode ~= nil and o.padding_mode ~= "zeros" then
        raise(string.format("tide: %s: only padding_mode \"zeros\" is supported (as in " ..
            "PyTorch), got \"%s\"", who, tostring(o.padding_mode)))
    end
    I.conv_channels(self, in_channels, out_channels, o.groups, who)
    self.transposed, self.padding_mode = true, "zeros" -- PyTorch's _ConvNd attributes
    self.kernel_size = T.triple(kernel_size, nil, who, "kernel_size", 1)
    self.stride = T.triple(o.stride, 1, who, "stride", 1)
    self.padding = T.triple(o.padding, 0, who, "padding", 0)
    self.output_padding = T.triple(o.output_padding, 0, who, "output_padding", 0)
    self.dilation = T.triple(o.dilation, 1, who, "dilation", 1)
    local p = self.padding -- PyTorch's (its forward does not read it)
    self._reversed_padding_repeated_twice = { p[3], p[3], p[2], p[2], p[1], p[1] }
    local k = self.kernel_size
    local coutg = idiv(out_channels, self.groups)
    I.weight_and_bias(self, { in_channels, coutg, k[1], k[2], k[3] }, out_channels,
        coutg * k[1] * k[2] * k[3], o.bias)
end

-- m(x[, output_size]): output_size {d, h, w} (or {N, C, d, h, w}) picks the output_padding, as
-- PyTorch's
function ConvTranspose3d:forward(x, output_size)
    I.check_tensor(x, "ConvTranspose3d")
    local output_padding = self.output_padding
    if output_size ~= nil and (x:dim() == 4 or x:dim() == 5) then
        output_padding, output_size = ConvTranspose2d._output_padding("ConvTranspose3d", x,
            output_size, 3, self.kernel_size, self.stride, self.padding, self.dilation)
    end
    if x:dim() == 4 then -- unbatched {C, D, H, W}, as PyTorch
        return self:forward(x:unsqueeze(1), output_size):squeeze(1)
    end
    if x:dim() ~= 5 or x:size(2) ~= self.in_channels then
        raise(string.format("tide: ConvTranspose3d: expected input {N, %d, D, H, W} or " ..
            "unbatched {%d, D, H, W}, got %s", self.in_channels, self.in_channels,
            I.shape_str(x.shape)))
    end
    I.check_input(x, self.weight, "ConvTranspose3d")
    return F.conv_transpose3d(x, self.weight, self.bias, { stride = self.stride,
        padding = self.padding, output_padding = output_padding, dilation = self.dilation,
        groups = self.groups })
end

-- PyTorch's fields (the defaults left out)
function ConvTranspose3d:extra_repr()
    return T.conv_repr(self)
end

S.define(ConvTranspose3d, { names = S.CONV_TRANSPOSE, required = 3, factory = true })

-- m:reset_parameters(): PyTorch's, the weight and bias drawn again in place from
-- U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = out_channels / groups * kernel elements
function ConvTranspose3d:reset_parameters()
    I.reset_weight_and_bias(self)
end

return ConvTranspose3d
