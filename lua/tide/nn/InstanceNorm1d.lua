-- nn.InstanceNorm1d(num_features[, {eps = 1e-5, momentum = 0.1, affine = false,
-- track_running_stats = false}]): input {N, C, L} or {C, L}
local InstanceNorm = require("tide.nn._InstanceNorm")

local InstanceNorm1d = InstanceNorm:extend("InstanceNorm1d")
InstanceNorm1d.dims = 3
InstanceNorm1d.expects = "{N, C, L} or {C, L}"

return InstanceNorm1d
