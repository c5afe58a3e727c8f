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
local ConvTranspose2d = require("tide.nn.ConvTranspose2d")

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
    kernel_size = I.check_int(kernel_size, "kernel_size", who)
    -- PyTorch's attributes are 1-tuples, read by ported code (conv.kernel_size[1]) and, but
    -- kernel_size, set by it too: forward follows them (conv_geometry)
    self.transposed, self.padding_mode = true, "zeros" -- PyTorch's _ConvNd attributes
    self.kernel_size = { kernel_size }
    self.stride = { I.check_int(stride or 1, "stride", who) }
    self.padding = { I.check_int(padding or 0, "padding", who, 0) }
    self.output_padding = { I.check_int(output_padding or 0, "output_padding", who, 0) }
    self.dilation = { I.check_int(dilation or 1, "dilation", who) }
    self._reversed_padding_repeated_twice = { self.padding[1], self.padding[1] } -- PyTorch's
    local coutg = idiv(out_channels, self.groups)
    I.weight_and_bias(self, { in_channels, coutg, kernel_size }, out_channels,
        coutg * kernel_size, bias)
end

-- the geometry (numbers) from the attributes as they are now ({n} or a number; a module saved
-- before the 1-tuples has numbers), checked as the constructor checks them: a bad value raises
-- naming it and the module stays as it was
local function attribute(self, name, min)
    local who = "ConvTranspose1d"
    return I.check_int(I.single(self[name], name, who), name, who, min)
end

local function conv_geometry(self, weight)
    local k = attribute(self, "kernel_size")
    if weight and k ~= weight:size(3) then
        raise(string.format("tide: ConvTranspose1d: kernel_size is the weight's shape {%d} " ..
            "and cannot be set; make a new nn.ConvTranspose1d for another kernel",
            weight:size(3)))
    end
    return k, attribute(self, "stride"), attribute(self, "padding", 0),
        attribute(self, "output_padding", 0), attribute(self, "dilation")
end

-- m(x[, output_size]): output_size {l} (or {N, C, l}) picks the output_padding, as PyTorch's
function ConvTranspose1d:forward(x, output_size)
    I.check_tensor(x, "ConvTranspose1d")
    local nd = x:dim()
    if (nd ~= 2 and nd ~= 3) or x:size(nd - 1) ~= self.in_channels then
        raise(string.format("tide: ConvTranspose1d: expected input {N, %d, L} or {%d, L}, got %s",
            self.in_channels, self.in_channels, I.shape_str(x.shape)))
    end
    I.check_input(x, self.weight, "ConvTranspose1d")
    local k, stride, padding, output_padding, dilation = conv_geometry(self, self.weight)
    if output_size ~= nil then
        output_padding = ConvTranspose2d._output_padding("ConvTranspose1d", x, output_size, 1,
            { k }, { stride }, { padding }, { dilation })[1]
    end
    return F.conv_transpose1d(x, self.weight, self.bias, { stride = stride, padding = padding,
        output_padding = output_padding, dilation = dilation, groups = self.groups })
end

function ConvTranspose1d:extra_repr() -- PyTorch's _ConvNd one
    return require("tide.nn._args3d").conv_repr(self)
end

S.define(ConvTranspose1d, { names = S.CONV_TRANSPOSE, required = 3, factory = true,
    legacy = S.conv_legacy(7) })

-- m:reset_parameters(): PyTorch's, the weight and bias drawn again in place from
-- U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = out_channels / groups * kernel elements
function ConvTranspose1d:reset_parameters()
    I.reset_weight_and_bias(self)
end

return ConvTranspose1d
