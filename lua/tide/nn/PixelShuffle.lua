-- nn.PixelShuffle(upscale_factor): F.pixel_shuffle, {*, C r^2, H, W} -> {*, C, H r, W r}
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local S = require("tide.nn._signature")

local PixelShuffle = Module:extend("PixelShuffle")

function PixelShuffle:init(upscale_factor)
    self.upscale_factor = I.check_int(upscale_factor, "upscale_factor", "PixelShuffle")
end

function PixelShuffle:forward(x)
    I.check_tensor(x, "PixelShuffle")
    return F.pixel_shuffle(x, self.upscale_factor)
end

function PixelShuffle:extra_repr() -- PyTorch's
    return "upscale_factor=" .. tostring(self.upscale_factor)
end

S.define(PixelShuffle, { names = { "upscale_factor" }, required = 1, flat = true })

return PixelShuffle
