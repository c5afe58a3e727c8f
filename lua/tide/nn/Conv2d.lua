-- nn.Conv2d(in_channels, out_channels, kernel_size[, stride = 1, padding = 0, dilation = 1,
-- groups = 1, bias = true, padding_mode = "zeros"]) in PyTorch's order, the last of them (or all)
-- in a table by name (tide.nn._signature): Conv2d(in, out, k, {stride =, padding =, ...});
-- padding also "same" or "valid"; tide's older (in, out, k, stride, padding, bias) with a
-- boolean bias still works. Weight
-- {out, in / groups, kh, kw}. oneDNN's convolution for float32 on the CPU when tide is built
-- with it, else im2col + one batched gemm (BLAS on the CPU, cuBLAS on cuda); one autograd node
-- (tide.nn._fused).
local idiv = require("tide._compat").idiv
local F = require("tide.nn.functional")
local raise = require("tide.autograd").raise
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local fused = require("tide.nn._fused")
local S = require("tide.nn._signature")

local Conv2d = Module:extend("Conv2d")

-- PyTorch's _reversed_padding_repeated_twice from the padding before and after each dim: the
-- last dim first, F.pad's order ({left, right, top, bottom} in 2-d)
function Conv2d._reversed_twice(before, after)
    local r = {}
    for i = #before, 1, -1 do
        r[#r + 1], r[#r + 2] = before[i], after[i]
    end
    return r
end

-- PyTorch's _conv_forward for a padding_mode other than "zeros": x padded by F.pad in that mode
-- over m._reversed_padding_repeated_twice (read when forward runs, as PyTorch's), then a
-- convolution without padding; nil for "zeros" (or a module saved before the attribute)
function Conv2d._mode_pad(m, x)
    local r = m._reversed_padding_repeated_twice
    if m.padding_mode == "zeros" or m.padding_mode == nil or type(r) ~= "table" then
        return nil
    end
    for i = 1, #r do
        if r[i] ~= 0 then
            return F.pad(x, r, { mode = m.pad_with })
        end
    end
    return x
end

function Conv2d:init(in_channels, out_channels, kernel_size, stride, padding, bias)
    local dilation, groups
    stride, padding, dilation, groups, bias = I.conv_options(self, "Conv2d", stride, padding, bias)
    I.conv_channels(self, in_channels, out_channels, groups, "Conv2d")
    self.kh, self.kw = I.pair(kernel_size, "Conv2d", "kernel_size", 1)
    self.sh, self.sw = I.pair(stride or 1, "Conv2d", "stride", 1)
    self.dh, self.dw = I.pair(dilation or 1, "Conv2d", "dilation", 1)
    I.check_int(self.dh, "dilation", "Conv2d")
    I.check_int(self.dw, "dilation", "Conv2d")
    local before, after = S.conv_padding("Conv2d", padding, { self.kh, self.kw },
        { self.dh, self.dw }, { self.sh, self.sw })
    if before then -- "same" or "valid"; an uneven "same" pads the input first, in forward
        self.same_pad = S.asymmetric_pad(before, after)
        self.ph, self.pw = self.same_pad and 0 or before[1], self.same_pad and 0 or before[2]
    else
        self.ph, self.pw = I.pair(padding or 0, "Conv2d", "padding", 0)
    end
    self.geom = { self.kh, self.kw, self.sh, self.sw, self.ph, self.pw, self.dh, self.dw }
    -- PyTorch's attributes, read by ported code (conv.stride, m.kernel_size[1]) and, for
    -- stride, padding and dilation, set by it too (m.dilation = {2, 2}; m.padding = {2, 2}):
    -- forward follows them
    self.kernel_size, self.stride = { self.kh, self.kw }, { self.sh, self.sw }
    self.dilation = { self.dh, self.dw }
    self.transposed, self.output_padding = false, { 0, 0 } -- PyTorch's _ConvNd attributes
    self.padding = type(padding) == "string" and padding or { self.ph, self.pw }
    self._padding_given = self.padding
    self._reversed_padding_repeated_twice = Conv2d._reversed_twice(before or self.padding,
        after or self.padding)
    local cin = idiv(in_channels, self.groups)
    I.weight_and_bias(self, { out_channels, cin, self.kh, self.kw }, out_channels,
        cin * self.kh * self.kw, bias)
end

-- the geometry from PyTorch's attributes when ported code has set them since (checked as the
-- constructor checks them; a bad value raises and leaves the module as it was)
local function same2(v, a, b)
    if type(v) == "table" then
        return v[1] == a and (v[2] or v[1]) == b and v[3] == nil
    end
    return v == a and v == b
end

local function follow_attributes(self)
    local s, p, d, g = self.stride, self.padding, self.dilation, self.geom
    if self.kernel_size == nil then -- a module saved before these attributes
        return
    end
    local p_same = type(p) == "string" and p == self._padding_given or same2(p, g[5], g[6])
    if p_same and same2(s, g[3], g[4]) and same2(d, g[7], g[8]) and
        same2(self.kernel_size, g[1], g[2]) then
        return
    end
    if not same2(self.kernel_size, self.kh, self.kw) then
        raise("tide: Conv2d: kernel_size is the weight's shape {" .. self.kh .. ", " .. self.kw ..
            "} and cannot be set; make a new nn.Conv2d for another kernel")
    end
    local sh, sw = I.pair(s, "Conv2d", "stride", 1)
    local dh, dw = I.pair(d, "Conv2d", "dilation", 1)
    local ph, pw = g[5], g[6]
    if type(p) == "string" then
        if p ~= self._padding_given then
            raise("tide: Conv2d: padding " .. string.format("%q", p) .. " can only be given to " ..
                "the constructor; set padding to {h, w} integers instead")
        end
    elseif not p_same then
        ph, pw = I.pair(p, "Conv2d", "padding", 0)
        self._padding_given, self.same_pad = nil, nil
    end
    self.sh, self.sw, self.ph, self.pw, self.dh, self.dw = sh, sw, ph, pw, dh, dw
    self.geom = { self.kh, self.kw, sh, sw, ph, pw, dh, dw }
end

function Conv2d:forward(x)
    I.check_tensor(x, "Conv2d")
    follow_attributes(self)
    if x:dim() == 3 then -- unbatched {C, H, W}, as PyTorch
        return self:forward(x:unsqueeze(1)):squeeze(1)
    end
    if x:dim() ~= 4 then
        raise("tide: Conv2d: expected input {N, C, H, W} or unbatched {C, H, W}, got " ..
            I.shape_str(x.shape))
    end
    local cin = self.in_channels
    if x:size(2) ~= cin then
        raise(string.format("tide: Conv2d: expected input with %d channels (dim 2), got %d",
            cin, x:size(2)))
    end
    return self:_conv_forward(x, self.weight, self.bias)
end

-- PyTorch's Conv2d._conv_forward(input, weight, bias): the convolution (after padding_mode's
-- padding) with the weight and bias given, which a subclass overrides or calls with its own
-- (loralib's ConvLoRA: self.conv._conv_forward(x, weight + delta, bias))
function Conv2d:_conv_forward(x, weight, bias)
    local geom, ph, pw = self.geom, self.ph, self.pw
    local padded = Conv2d._mode_pad(self, x)
    if padded then
        x, ph, pw = padded, 0, 0
        geom = { self.kh, self.kw, self.sh, self.sw, 0, 0, self.dh, self.dw }
    elseif self.same_pad then
        x = F.pad(x, self.same_pad, { mode = self.pad_with or "constant" })
    elseif self.padding_mode ~= "zeros" and (ph > 0 or pw > 0) then
        -- padded by F.pad's mode first, then a convolution without padding (as PyTorch)
        x = F.pad(x, { pw, pw, ph, ph }, { mode = self.pad_with })
        geom, ph, pw = { self.kh, self.kw, self.sh, self.sw, 0, 0, self.dh, self.dw }, 0, 0
    end
    local oh, ow = F._conv_out("Conv2d", x:size(3), x:size(4), self.kh, self.kw, self.sh, self.sw,
        ph, pw, self.dh, self.dw)
    I.check_input(x, weight, "Conv2d")
    return fused.conv2d(x, weight, bias, geom, oh, ow, self.groups)
end

function Conv2d:extra_repr() -- PyTorch's _ConvNd one
    return require("tide.nn._args3d").conv_repr(self)
end

S.define(Conv2d, { names = S.CONV, required = 3, factory = true, legacy = S.conv_legacy(6) })

-- m:reset_parameters(): PyTorch's, the weight and bias drawn again in place
function Conv2d:reset_parameters()
    I.reset_weight_and_bias(self)
end

return Conv2d
