-- nn.InstanceNorm2d(num_features[, {eps = 1e-5, momentum = 0.1, affine = false,
-- track_running_stats = false}]): input {N, C, H, W} or {C, H, W}
local InstanceNorm = require("tide.nn._InstanceNorm")

local InstanceNorm2d = InstanceNorm:extend("InstanceNorm2d")
InstanceNorm2d.dims = 4
InstanceNorm2d.expects = "{N, C, H, W} or {C, H, W}"

return InstanceNorm2d
