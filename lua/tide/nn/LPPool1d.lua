-- nn.LPPool1d(norm_type, kernel_size[, {stride = kernel_size, ceil_mode = false}]): the
-- norm_type-norm of each window of the input (F.lp_pool1d), PyTorch's power-average pooling
local core = require("tide.core")
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")

local LPPool1d = Module:extend("LPPool1d")

function LPPool1d:init(norm_type, kernel_size, opts)
    core._check_options(opts or {}, "LPPool1d", { "stride", "ceil_mode" })
    opts = opts or {}
    self.norm_type, self.kernel_size = norm_type, kernel_size
    self.stride, self.ceil_mode = opts.stride, opts.ceil_mode == true
end

function LPPool1d:forward(x)
    I.check_tensor(x, "LPPool1d")
    return F.lp_pool1d(x, self.norm_type, self.kernel_size, { stride = self.stride,
        ceil_mode = self.ceil_mode })
end

local function show(v)
    return type(v) == "table" and "{" .. table.concat(v, ", ") .. "}" or tostring(v)
end

function LPPool1d:extra_repr()
    return string.format("norm_type=%s, kernel_size=%s, stride=%s, ceil_mode=%s",
        tostring(self.norm_type), show(self.kernel_size), show(self.stride),
        tostring(self.ceil_mode))
end

return LPPool1d
