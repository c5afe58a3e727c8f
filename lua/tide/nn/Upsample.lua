-- nn.Upsample({size = | scale_factor =, mode = "nearest", align_corners =}): F.interpolate with
-- those options (checked when the module is made)
local core = require("tide.core")
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local S = require("tide.nn._signature")

local Upsample = Module:extend("Upsample")

local OPTIONS = { "size", "scale_factor", "mode", "align_corners", "recompute_scale_factor" }

function Upsample:init(opts)
    opts = opts or {}
    core._check_options(opts, "Upsample", OPTIONS)
    -- PyTorch's attributes (name, size, scale_factor, mode, ...); forward reads them
    self.name = "Upsample"
    for _, k in ipairs(OPTIONS) do
        self[k] = opts[k]
    end
    self.mode = self.mode or "nearest"
end

-- the options F.interpolate gets, from the attributes
function Upsample:_interpolate_options()
    local o = {}
    for _, k in ipairs(OPTIONS) do
        o[k] = self[k]
    end
    return o
end

function Upsample:forward(x)
    I.check_tensor(x, "Upsample")
    return F.interpolate(x, self:_interpolate_options())
end

function Upsample:extra_repr() -- PyTorch's: size or scale_factor, then mode
    local A3 = require("tide.nn._args3d")
    local what = self.size ~= nil and ("size=" .. A3.show(self.size))
        or ("scale_factor=" .. A3.show(self.scale_factor))
    return what .. ", mode=" .. (self.mode or "nearest")
end

S.define(Upsample, { names = { "size", "scale_factor", "mode", "align_corners",
    "recompute_scale_factor" } })

return Upsample
