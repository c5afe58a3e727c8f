-- nn.ConvTranspose2d(in_channels, out_channels, kernel_size[, stride = 1, padding = 0,
-- output_padding = 0, groups = 1, bias = true, dilation = 1, padding_mode = "zeros"]) in
-- PyTorch's order, the last of them (or all) in a table by name (tide.nn._signature): the
-- gradient of Conv2d with
-- respect to its input; weight {in, out / groups, kh, kw} as PyTorch's (its default init draws
-- from fan_in = out / groups * kh * kw)
local idiv = require("tide._compat").idiv
local core = require("tide.core")
local raise = require("tide.autograd").raise
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local S = require("tide.nn._signature")

local ConvTranspose2d = Module:extend("ConvTranspose2d")

local function list(t)
    return "{" .. table.concat(t, ", ") .. "}"
end

-- PyTorch's _ConvTransposeNd._output_padding: the output_padding per dim that gives forward's
-- output_size (nsp spatial sizes, or {N, C, ...} / {C, ...} with them) from x and the geometry
-- k, s, p, d (tables); also the spatial sizes. Each size within [minimum, minimum + stride - 1]
function ConvTranspose2d._output_padding(who, x, output_size, nsp, k, s, p, d)
    local nonsp = x:dim() == nsp + 2 and 2 or 1
    local n = type(output_size) == "table" and #output_size or -1
    if n ~= nsp and n ~= nsp + nonsp then
        raise(string.format("tide: %s: for %dD input, output_size must have %d or %d elements " ..
            "(got %s)", who, x:dim(), nsp, nsp + nonsp, n >= 0 and n or type(output_size)))
    end
    local size, lo, hi, op = {}, {}, {}, {}
    for i = 1, nsp do
        size[i] = output_size[n - nsp + i]
        lo[i] = (x:size(nonsp + i) - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + 1
        hi[i] = lo[i] + s[i] - 1
    end
    for i = 1, nsp do
        if type(size[i]) ~= "number" or size[i] < lo[i] or size[i] > hi[i] then
            local input = {}
            for j = 1, nsp do
                input[j] = x:size(nonsp + j)
            end
            raise(string.format("tide: %s: requested an output size of %s, but valid sizes " ..
                "range from %s to %s (for an input of %s)", who, list(size), list(lo), list(hi),
                list(input)))
        end
        op[i] = size[i] - lo[i]
    end
    return op, size
end

function ConvTranspose2d:init(in_channels, out_channels, kernel_size, stride, padding,
                              output_padding, bias)
    local dilation, groups
    if type(stride) == "table" then
        local o = stride
        core._check_options(o, "ConvTranspose2d", { "stride", "padding", "output_padding",
            "dilation", "groups", "bias", "padding_mode" })
        if o.padding_mode ~= nil and o.padding_mode ~= "zeros" then
            raise(string.format("tide: ConvTranspose2d: only padding_mode \"zeros\" is " ..
                "supported (as in PyTorch), got \"%s\"", tostring(o.padding_mode)))
        end
        stride, padding, output_padding, bias = o.stride, o.padding, o.output_padding, o.bias
        dilation, groups = o.dilation, o.groups
    end
    I.conv_channels(self, in_channels, out_channels, groups, "ConvTranspose2d")
    self.transposed, self.padding_mode = true, "zeros" -- PyTorch's _ConvNd attributes
    self.kernel_size = { I.pair(kernel_size, "ConvTranspose2d", "kernel_size") }
    self.stride = { I.pair(stride or 1, "ConvTranspose2d", "stride") }
    self.padding = { I.pair(padding or 0, "ConvTranspose2d", "padding") }
    self.output_padding = { I.pair(output_padding or 0, "ConvTranspose2d", "output_padding") }
    self.dilation = { I.pair(dilation or 1, "ConvTranspose2d", "dilation") }
    self._reversed_padding_repeated_twice = { self.padding[2], self.padding[2],
        self.padding[1], self.padding[1] } -- PyTorch's (its forward does not read it)
    local kh, kw = self.kernel_size[1], self.kernel_size[2]
    local coutg = idiv(out_channels, self.groups)
    I.weight_and_bias(self, { in_channels, coutg, kh, kw }, out_channels, coutg * kh * kw, bias)
end

-- m(x[, output_size]): output_size {h, w} (or {N, C, h, w}) picks the output_padding, as
-- PyTorch's
function ConvTranspose2d:forward(x, output_size)
    I.check_tensor(x, "ConvTranspose2d")
    local output_padding = self.output_padding
    if output_size ~= nil and (x:dim() == 3 or x:dim() == 4) then
        output_padding, output_size = ConvTranspose2d._output_padding("ConvTranspose2d", x,
            output_size, 2, self.kernel_size, self.stride, self.padding, self.dilation)
    end
    if x:dim() == 3 then -- unbatched {C, H, W}, as PyTorch
        return self:forward(x:unsqueeze(1), output_size):squeeze(1)
    end
    if x:dim() ~= 4 or x:size(2) ~= self.in_channels then
        raise(string.format("tide: ConvTranspose2d: expected input {N, %d, H, W} or unbatched " ..
            "{%d, H, W}, got %s", self.in_channels, self.in_channels, I.shape_str(x.shape)))
    end
    I.check_input(x, self.weight, "ConvTranspose2d")
    return F.conv_transpose2d(x, self.weight, self.bias, { stride = self.stride,
        padding = self.padding, output_padding = output_padding, dilation = self.dilation,
        groups = self.groups })
end

function ConvTranspose2d:extra_repr() -- PyTorch's _ConvNd one
    return require("tide.nn._args3d").conv_repr(self)
end

S.define(ConvTranspose2d, { names = S.CONV_TRANSPOSE, required = 3, factory = true,
    legacy = S.conv_legacy(7) })

-- m:reset_parameters(): PyTorch's, the weight and bias drawn again in place from
-- U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = out_channels / groups * kernel elements
function ConvTranspose2d:reset_parameters()
    I.reset_weight_and_bias(self)
end

return ConvTranspose2d
