-- nn.PixelUnshuffle(downscale_factor): F.pixel_unshuffle, PixelShuffle's inverse
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")

local PixelUnshuffle = Module:extend("PixelUnshuffle")

function PixelUnshuffle:init(downscale_factor)
    self.downscale_factor = downscale_factor
end

function PixelUnshuffle:forward(x)
    I.check_tensor(x, "PixelUnshuffle")
    return F.pixel_unshuffle(x, self.downscale_factor)
end

function PixelUnshuffle:extra_repr()
    return "downscale_factor " .. tostring(self.downscale_factor)
end

return PixelUnshuffle
