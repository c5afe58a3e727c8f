-- tide.nn._upsampling: UpsamplingNearest2d and UpsamplingBilinear2d, PyTorch's Upsample with a
-- fixed mode (bilinear with align_corners = true): ({size = | scale_factor =}); printed as
-- PyTorch's ("UpsamplingNearest2d(scale_factor=2, mode=nearest)"); size and scale_factor
-- checked before F.interpolate runs (tide.nn._resize_check)
local core = require("tide.core")
local raise = require("tide.autograd").raise
local Upsample = require("tide.nn.Upsample")
local check_resize = require("tide.nn._resize_check")

local function list(v)
    return type(v) == "table" and "{" .. table.concat(v, ", ") .. "}" or tostring(v)
end

return function(name, mode, align_corners)
    local cls = Upsample:extend(name)
    function cls:init(opts)
        if opts ~= nil and type(opts) ~= "table" then
            raise("tide: " .. name .. ": expected an options table such as {scale_factor = 2}, " ..
                "got " .. type(opts))
        end
        opts = opts or {}
        core._check_options(opts, name, { "size", "scale_factor" })
        if (opts.size == nil) == (opts.scale_factor == nil) then
            raise("tide: " .. name .. ": give size or scale_factor (one of them)")
        end
        -- PyTorch's attributes, as nn.Upsample's
        self.name, self.size, self.scale_factor = name, opts.size, opts.scale_factor
        self.mode, self.align_corners = mode, align_corners
    end
    function cls:forward(x)
        check_resize(name, x, self.size, self.scale_factor)
        return Upsample.forward(self, x)
    end
    function cls:extra_repr()
        local o = self
        local what = o.scale_factor ~= nil and "scale_factor=" .. list(o.scale_factor) or
            "size=" .. list(o.size)
        return what .. ", mode=" .. mode
    end
    return cls
end
