-- nn.Unfold(kernel_size[, {dilation = 1, padding = 0, stride = 1}]): the sliding blocks of
-- input {N, C, H, W} as columns {N, C kh kw, L} (F.unfold)
local core = require("tide.core")
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")

local Unfold = Module:extend("Unfold")

function Unfold:init(kernel_size, opts)
    core._check_options(opts or {}, "Unfold", { "dilation", "padding", "stride" })
    I.pair(kernel_size, "Unfold", "kernel_size", 1)
    self.kernel_size, self.opts = kernel_size, opts
    -- PyTorch's attributes, as given (int or pair); forward reads them
    local o = opts or {}
    self.dilation, self.padding, self.stride = o.dilation or 1, o.padding or 0, o.stride or 1
end

function Unfold:forward(x)
    I.check_tensor(x, "Unfold")
    return F.unfold(x, self.kernel_size, { dilation = self.dilation, padding = self.padding,
        stride = self.stride })
end

require("tide.nn._signature").define(Unfold, { names = { "kernel_size", "dilation", "padding",
    "stride" }, required = 1 })

return Unfold
