-- nn.BatchNorm2d(num_features[, eps = 1e-5, momentum = 0.1, affine = true]): input {N, C, H, W}
local BatchNorm = require("tide.nn._BatchNorm")

local BatchNorm2d = BatchNorm:extend("BatchNorm2d")
BatchNorm2d.expects = "{N, C, H, W}"

local OK = { [4] = true }

function BatchNorm2d:forward(x)
    self:check(x, OK)
    return self:normalize(x)
end

return BatchNorm2d
