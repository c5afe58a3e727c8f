-- nn.BatchNorm1d(num_features[, eps = 1e-5, momentum = 0.1, affine = true]): input {N, C} or
-- {N, C, L}
local BatchNorm = require("tide.nn._BatchNorm")

local BatchNorm1d = BatchNorm:extend("BatchNorm1d")
BatchNorm1d.expects = "{N, C} or {N, C, L}"

local OK = { [2] = true, [3] = true }

function BatchNorm1d:forward(x)
    self:check(x, OK)
    return self:normalize(x)
end

return BatchNorm1d
