-- nn.Fold(output_size, kernel_size[, {dilation = 1, padding = 0, stride = 1}]): columns
-- {N, C kh kw, L} added back into their blocks of an {N, C, H, W} output (F.fold)
local core = require("tide.core")
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")

local Fold = Module:extend("Fold")

function Fold:init(output_size, kernel_size, opts)
    core._check_options(opts or {}, "Fold", { "dilation", "padding", "stride" })
    I.pair(output_size, "Fold", "output_size", 1)
    I.pair(kernel_size, "Fold", "kernel_size", 1)
    self.output_size, self.kernel_size, self.opts = output_size, kernel_size, opts
    -- PyTorch's attributes, as given (int or pair); forward reads them
    local o = opts or {}
    self.dilation, self.padding, self.stride = o.dilation or 1, o.padding or 0, o.stride or 1
end

function Fold:forward(x)
    I.check_tensor(x, "Fold")
    return F.fold(x, self.output_size, self.kernel_size, { dilation = self.dilation,
        padding = self.padding, stride = self.stride })
end

require("tide.nn._signature").define(Fold, { names = { "output_size", "kernel_size", "dilation",
    "padding", "stride" }, required = 2 })

return Fold
