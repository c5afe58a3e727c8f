-- nn.Conv3d(in_channels, out_channels, kernel_size[, stride = 1, padding = 0, dilation = 1,
-- groups = 1, bias = true, padding_mode = "zeros"]) in PyTorch's order, the last of them (or all)
-- in a table by name (tide.nn._signature), padding also "same" or "valid"; tide's older (in, out,
-- k, stride, padding, bias) with a boolean bias still works;
-- sizes an integer or {d, h, w}; weight {out, in / groups, kd, kh, kw}, PyTorch's default init.
-- Input {N, C, D, H, W}; F.conv3d (one conv2d over the depth windows).
local idiv = require("tide._compat").idiv
local raise = require("tide.autograd").raise
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local T = require("tide.nn._args3d")
local S = require("tide.nn._signature")
local Conv2d = require("tide.nn.Conv2d")

local Conv3d = Module:extend("Conv3d")

function Conv3d:init(in_channels, out_channels, kernel_size, stride, padding, bias)
    local who, dilation, groups = "Conv3d", nil, nil
    if type(stride) == "table" and stride[1] == nil then -- an options table, not {d, h, w}
        stride, padding, dilation, groups, bias = I.conv_options(self, who, stride)
    else
        self.padding_mode = "zeros"
    end
    I.conv_channels(self, in_channels, out_channels, groups, who)
    self.kernel_size = T.triple(kernel_size, nil, who, "kernel_size", 1)
    self.stride = T.triple(stride, 1, who, "stride", 1)
    self.dilation = T.triple(dilation, 1, who, "dilation", 1)
    local before, after = S.conv_padding(who, padding, self.kernel_size, self.dilation,
        self.stride)
    if before then -- "same" or "valid"; an uneven "same" pads the input first, in forward
        self.same_pad = S.asymmetric_pad(before, after)
        self.padding = padding -- kept as given, as PyTorch (forward reads _string_pad)
        self._string_pad = self.same_pad and { 0, 0, 0 } or before
    else
        self.padding = T.triple(padding, 0, who, "padding", 0)
    end
    self.transposed, self.output_padding = false, { 0, 0, 0 } -- PyTorch's _ConvNd attributes
    self._reversed_padding_repeated_twice = Conv2d._reversed_twice(before or self.padding,
        after or self.padding)
    local k = self.kernel_size
    local cin = idiv(in_channels, self.groups)
    I.weight_and_bias(self, { out_channels, cin, k[1], k[2], k[3] }, out_channels,
        cin * k[1] * k[2] * k[3], bias)
end

function Conv3d:forward(x)
    I.check_tensor(x, "Conv3d")
    if x:dim() == 4 then -- unbatched {C, D, H, W}, as PyTorch
        return self:forward(x:unsqueeze(1)):squeeze(1)
    end
    if x:dim() ~= 5 then
        raise("tide: Conv3d: expected input {N, C, D, H, W} or unbatched {C, D, H, W}, got " ..
            I.shape_str(x.shape))
    end
    if x:size(2) ~= self.in_channels then
        raise(string.format("tide: Conv3d: expected input with %d channels (dim 2), got %d",
            self.in_channels, x:size(2)))
    end
    I.check_input(x, self.weight, "Conv3d")
    local p = self.padding
    if type(p) == "string" then
        p = self._string_pad
    end
    local padded = Conv2d._mode_pad(self, x)
    if padded then
        x, p = padded, 0
    elseif self.same_pad then
        x = F.pad(x, self.same_pad, { mode = self.pad_with or "constant" })
    elseif self.padding_mode ~= "zeros" and (p[1] > 0 or p[2] > 0 or p[3] > 0) then
        -- padded by F.pad's mode first, then a convolution without padding (as PyTorch)
        x, p = F.pad(x, { p[3], p[3], p[2], p[2], p[1], p[1] }, { mode = self.pad_with }), 0
    end
    return F.conv3d(x, self.weight, self.bias, { stride = self.stride, padding = p,
        dilation = self.dilation, groups = self.groups })
end

-- PyTorch's fields (the defaults left out)
function Conv3d:extra_repr()
    return T.conv_repr(self)
end

S.define(Conv3d, { names = S.CONV, required = 3, factory = true, legacy = S.conv_legacy(6) })

-- m:reset_parameters(): PyTorch's, the weight and bias drawn again in place
function Conv3d:reset_parameters()
    I.reset_weight_and_bias(self)
end

return Conv3d
