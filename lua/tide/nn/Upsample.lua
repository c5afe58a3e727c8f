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
    core._check_options(opts or {}, "Upsample", OPTIONS)
    self.opts = {}
    for _, k in ipairs(OPTIONS) do
        self.opts[k] = (opts or {})[k]
    end
end

function Upsample:forward(x)
    I.check_tensor(x, "Upsample")
    return F.interpolate(x, self.opts)
end

function Upsample:extra_repr()
    local o = self.opts
    local what = o.size ~= nil and ("size " .. (type(o.size) == "table" and
        "{" .. table.concat(o.size, ", ") .. "}" or tostring(o.size)))
        or ("scale_factor " .. (type(o.scale_factor) == "table" and
        "{" .. table.concat(o.scale_factor, ", ") .. "}" or tostring(o.scale_factor)))
    return what .. ", mode " .. (o.mode or "nearest")
end

S.define(Upsample, { names = { "size", "scale_factor", "mode", "align_corners",
    "recompute_scale_factor" } })

return Upsample
