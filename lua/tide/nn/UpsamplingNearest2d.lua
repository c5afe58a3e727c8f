-- nn.UpsamplingNearest2d({size = | scale_factor =}): F.interpolate with mode "nearest"
-- PyTorch's arguments, positionally or by name (tide.nn._signature)
local cls = require("tide.nn._upsampling")("UpsamplingNearest2d", "nearest", nil)
return require("tide.nn._signature").define(cls, { names = { "size", "scale_factor" } })
