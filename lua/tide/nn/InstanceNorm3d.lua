-- nn.InstanceNorm3d(num_features[, {eps = 1e-5, momentum = 0.1, affine = false,
-- track_running_stats = false}]): input {N, C, D, H, W} or {C, D, H, W}, each sample's channel
-- by its own statistics (InstanceNorm2d's body)
local InstanceNorm = require("tide.nn._InstanceNorm")

local InstanceNorm3d = InstanceNorm:extend("InstanceNorm3d")
InstanceNorm3d.dims = 5
InstanceNorm3d.expects = "{N, C, D, H, W} or {C, D, H, W}"

function InstanceNorm3d:extra_repr()
    return string.format("%d, eps=%s, momentum=%s, affine=%s, track_running_stats=%s",
        self.num_features, tostring(self.eps), tostring(self.momentum), tostring(self.affine),
        tostring(self.track_running_stats))
end

return InstanceNorm3d
