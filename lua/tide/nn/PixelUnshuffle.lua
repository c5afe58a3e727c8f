-- nn.PixelUnshuffle(downscale_factor): F.pixel_unshuffle, PixelShuffle's inverse
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local S = require("tide.nn._signature")

local PixelUnshuffle = Module:extend("PixelUnshuffle")

function PixelUnshuffle:init(downscale_factor)
    self.downscale_factor = I.check_int(downscale_factor, "downscale_factor", "PixelUnshuffle")
end

function PixelUnshuffle:forward(x)
    I.check_tensor(x, "PixelUnshuffle")
    return F.pixel_unshuffle(x, self.downscale_factor)
end

function PixelUnshuffle:extra_repr() -- PyTorch's
    return "downscale_factor=" .. tostring(self.downscale_factor)
end

S.define(PixelUnshuffle, { names = { "downscale_factor" }, required = 1, flat = true })

return PixelUnshuffle
