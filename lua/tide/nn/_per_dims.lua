-- tide.nn._per_dims: the modules that differ only in their number of spatial dims (1 or 2), out
-- of the users' sight: LPPool1d/2d and MaxUnpool1d/2d are each one class made twice here.
local core = require("tide.core")
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")

local M = {}

local function show(v)
    return type(v) == "table" and "{" .. table.concat(v, ", ") .. "}" or tostring(v)
end

-- nn.LPPool<d>d(norm_type, kernel_size[, {stride = kernel_size, ceil_mode = false}])
function M.lp_pool(d)
    local name, fn = "LPPool" .. d .. "d", "lp_pool" .. d .. "d"
    local cls = Module:extend(name)
    function cls:init(norm_type, kernel_size, opts)
        core._check_options(opts or {}, name, { "stride", "ceil_mode" })
        opts = opts or {}
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = opts.stride, opts.ceil_mode == true
    end
    function cls:forward(x)
        I.check_tensor(x, name)
        return F[fn](x, self.norm_type, self.kernel_size, { stride = self.stride,
            ceil_mode = self.ceil_mode })
    end
    function cls:extra_repr()
        return string.format("norm_type=%s, kernel_size=%s, stride=%s, ceil_mode=%s",
            tostring(self.norm_type), show(self.kernel_size), show(self.stride),
            tostring(self.ceil_mode))
    end
    return cls
end

-- nn.MaxUnpool<d>d(kernel_size[, stride = kernel_size[, padding = 0]]) or (k, {stride =,
-- padding =}); forward(input, indices[, output_size])
function M.max_unpool(d)
    local name, fn = "MaxUnpool" .. d .. "d", "max_unpool" .. d .. "d"
    local cls = Module:extend(name)
    function cls:init(kernel_size, stride, padding)
        if type(stride) == "table" and #stride == 0 then
            core._check_options(stride, name, { "stride", "padding" })
            stride, padding = stride.stride, stride.padding
        end
        self.kernel_size, self.stride = kernel_size, stride or kernel_size
        self.padding = padding or 0
    end
    function cls:forward(x, indices, output_size)
        I.check_tensor(x, name)
        return F[fn](x, indices, self.kernel_size, { stride = self.stride,
            padding = self.padding, output_size = output_size })
    end
    function cls:extra_repr()
        return string.format("kernel_size=%s, stride=%s, padding=%s", show(self.kernel_size),
            show(self.stride), show(self.padding))
    end
    return cls
end

return M
