-- nn.PixelShuffle(upscale_factor): F.pixel_shuffle, {*, C r^2, H, W} -> {*, C, H r, W r}
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")

local PixelShuffle = Module:extend("PixelShuffle")

function PixelShuffle:init(upscale_factor)
    self.upscale_factor = upscale_factor
end

function PixelShuffle:forward(x)
    I.check_tensor(x, "PixelShuffle")
    return F.pixel_shuffle(x, self.upscale_factor)
end

function PixelShuffle:extra_repr()
    return "upscale_factor " .. tostring(self.upscale_factor)
end

return PixelShuffle
