-- nn.Conv1d(in_channels, out_channels, kernel_size[, stride = 1, padding = 0, dilation = 1,
-- groups = 1, bias = true, padding_mode = "zeros"]) in PyTorch's order, the last of them (or all)
-- in a table by name (tide.nn._signature), padding also "same" or "valid"; tide's older (in, out,
-- k, stride, padding, bias) with a boolean bias still works. Input {N, C, L},
-- weight {out, in / groups, k}; runs as Conv2d over a height of 1 (one im2col and one gemm, one
-- autograd node)
local idiv = require("tide._compat").idiv
local raise = require("tide.autograd").raise
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local S = require("tide.nn._signature")
local Conv2d = require("tide.nn.Conv2d")

local Conv1d = Module:extend("Conv1d")

function Conv1d:init(in_channels, out_channels, kernel_size, stride, padding, bias)
    local dilation, groups
    stride, padding, dilation, groups, bias = I.conv_options(self, "Conv1d", stride, padding, bias)
    I.conv_channels(self, in_channels, out_channels, groups, "Conv1d")
    -- PyTorch's 1-tuples: kernel_size=(3,), padding=(2,), ...
    kernel_size = I.single(kernel_size, "kernel_size", "Conv1d")
    stride = I.single(stride, "stride", "Conv1d")
    padding = I.single(padding, "padding", "Conv1d")
    dilation = I.single(dilation, "dilation", "Conv1d")
    kernel_size = I.check_int(kernel_size, "kernel_size", "Conv1d")
    -- PyTorch's attributes are 1-tuples, read by ported code (conv.kernel_size[1]) and, for
    -- stride, padding and dilation, set by it too: forward follows them (conv_geometry)
    self.kernel_size = { kernel_size }
    self.stride = { I.check_int(stride or 1, "stride", "Conv1d") }
    self.dilation = { I.check_int(dilation or 1, "dilation", "Conv1d") }
    local before, after = S.conv_padding("Conv1d", padding, self.kernel_size, self.dilation,
        self.stride)
    if before then -- "same" or "valid"; an uneven "same" pads the input first, in forward
        self.same_pad = S.asymmetric_pad(before, after)
        self.padding, self._padding_string = padding, padding -- kept as given, as PyTorch
        self._string_pad = self.same_pad and 0 or before[1]
    else
        self.padding = { I.check_int(padding or 0, "padding", "Conv1d", 0) }
    end
    self.transposed, self.output_padding = false, { 0 } -- PyTorch's _ConvNd attributes
    self._reversed_padding_repeated_twice = Conv2d._reversed_twice(before or self.padding,
        after or self.padding)
    local cin = idiv(in_channels, self.groups)
    I.weight_and_bias(self, { out_channels, cin, kernel_size }, out_channels, cin * kernel_size,
        bias)
end

-- stride, padding, dilation (numbers) and the asymmetric "same" padding from the attributes as
-- they are now ({n} or a number; a module saved before the 1-tuples has numbers), checked as the
-- constructor checks them: a bad value raises naming it and the module stays as it was
local function conv_geometry(self, weight)
    local who = "Conv1d"
    local k = I.single(self.kernel_size, "kernel_size", who)
    if weight and k ~= weight:size(3) then
        raise(string.format("tide: Conv1d: kernel_size is the weight's shape {%d} and cannot " ..
            "be set; make a new nn.Conv1d for another kernel", weight:size(3)))
    end
    local p, same_pad = self.padding, self.same_pad
    if type(p) == "string" then
        if p ~= self._padding_string then
            raise(string.format("tide: Conv1d: padding %q can only be given to the " ..
                "constructor; set padding to {n} instead", p))
        end
        p = self._string_pad
    elseif type(p) == "table" or self._padding_string then -- set since: no "same" any more
        p, same_pad = I.check_int(I.single(p, "padding", who), "padding", who, 0), nil
    end
    return I.check_int(I.single(self.stride, "stride", who), "stride", who), p,
        I.check_int(I.single(self.dilation, "dilation", who), "dilation", who), same_pad
end

function Conv1d:forward(x)
    I.check_tensor(x, "Conv1d")
    if x:dim() == 2 then -- unbatched {C, L}, as PyTorch
        return self:forward(x:unsqueeze(1)):squeeze(1)
    end
    if x:dim() ~= 3 then
        raise("tide: Conv1d: expected input {N, C, L} or unbatched {C, L}, got " ..
            I.shape_str(x.shape))
    end
    if x:size(2) ~= self.in_channels then
        raise(string.format("tide: Conv1d: expected input with %d channels (dim 2), got %d",
            self.in_channels, x:size(2)))
    end
    return self:_conv_forward(x, self.weight, self.bias)
end

-- PyTorch's Conv1d._conv_forward(input, weight, bias): the convolution (after padding_mode's
-- padding) with the weight and bias given, which a subclass overrides to change them (whisper's
-- Conv1d casts them to the input's dtype: super()._conv_forward(x, weight.to(x.dtype), ...)
-- is nn.Conv1d._conv_forward(self, x, weight:to(x.dtype), ...))
function Conv1d:_conv_forward(x, weight, bias)
    I.check_input(x, weight, "Conv1d")
    local stride, padding, dilation, same_pad = conv_geometry(self, weight)
    local padded = Conv2d._mode_pad(self, x)
    if padded then
        x, padding = padded, 0
    elseif same_pad then
        x = F.pad(x, same_pad, { mode = self.pad_with or "constant" })
    elseif self.padding_mode ~= "zeros" and padding > 0 then
        x, padding = F.pad(x, { padding, padding }, { mode = self.pad_with }), 0
    end
    return F.conv1d(x, weight, bias, { stride = stride, padding = padding, dilation = dilation,
        groups = self.groups })
end

function Conv1d:extra_repr() -- PyTorch's _ConvNd one
    return require("tide.nn._args3d").conv_repr(self)
end

S.define(Conv1d, { names = S.CONV, required = 3, factory = true, legacy = S.conv_legacy(6) })

-- m:reset_parameters(): PyTorch's, the weight and bias drawn again in place
function Conv1d:reset_parameters()
    I.reset_weight_and_bias(self)
end

return Conv1d
