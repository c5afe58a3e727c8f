-- nn.UpsamplingBilinear2d({size = | scale_factor =}): F.interpolate of {N, C, H, W} with mode
-- "bilinear" and align_corners = true, as PyTorch's
return require("tide.nn._upsampling")("UpsamplingBilinear2d", "bilinear", true)
