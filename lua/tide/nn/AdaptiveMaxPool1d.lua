-- nn.AdaptiveMaxPool1d(output_size[, {return_indices = false}]): input {N, C, L} (or
-- {C, L}) to output_size (an integer) by the max of PyTorch's windows
-- (F.adaptive_max_pool1d)
local core = require("tide.core")
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local S = require("tide.nn._signature")

local AdaptiveMaxPool1d = Module:extend("AdaptiveMaxPool1d")

function AdaptiveMaxPool1d:init(output_size, opts)
    if type(output_size) ~= "table" then
        I.check_int(output_size, "output_size", "AdaptiveMaxPool1d", 0)
    end
    core._check_options(opts or {}, "AdaptiveMaxPool1d", { "return_indices" })
    self.output_size = output_size
    self.return_indices = (opts or {}).return_indices or false
end

function AdaptiveMaxPool1d:forward(x)
    I.check_tensor(x, "AdaptiveMaxPool1d")
    return F.adaptive_max_pool1d(x, self.output_size, { return_indices = self.return_indices })
end

S.define(AdaptiveMaxPool1d, { names = { "output_size", "return_indices" }, required = 1 })

function AdaptiveMaxPool1d:extra_repr() -- PyTorch's
    return "output_size=" .. require("tide.nn._args3d").show(self.output_size)
end

return AdaptiveMaxPool1d
