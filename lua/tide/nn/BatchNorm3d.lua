-- nn.BatchNorm3d(num_features[, eps = 1e-5, momentum = 0.1, affine = true]) or
-- BatchNorm3d(n, {eps =, momentum =, affine =}): input {N, C, D, H, W}, statistics over N, D,
-- H and W of each channel (BatchNorm2d's body)
local BatchNorm = require("tide.nn._BatchNorm")

local BatchNorm3d = BatchNorm:extend("BatchNorm3d")
BatchNorm3d.expects = "{N, C, D, H, W}"

local OK = { [5] = true }

function BatchNorm3d:forward(x)
    self:check(x, OK)
    return self:normalize(x)
end

function BatchNorm3d:extra_repr()
    return string.format("%d, eps=%s, momentum=%s, affine=%s, track_running_stats=%s",
        self.num_features, tostring(self.eps), tostring(self.momentum),
        tostring(self.weight ~= nil), tostring(self.track_running_stats))
end

return BatchNorm3d
