-- nn.UpsamplingBilinear2d({size = | scale_factor =}): F.interpolate of {N, C, H, W} with mode
-- "bilinear" and align_corners = true, as PyTorch's
-- PyTorch's arguments, positionally or by name (tide.nn._signature)
local cls = require("tide.nn._upsampling")("UpsamplingBilinear2d", "bilinear", true)
return require("tide.nn._signature").define(cls, { names = { "size", "scale_factor" } })
