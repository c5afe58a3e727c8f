-- nn.LeakyReLU([negative_slope = 0.01]) or LeakyReLU({negative_slope =, inplace = false}): x
-- where x > 0, else
-- negative_slope * x
local A = require("tide.nn._activation")

return A.parametric("LeakyReLU", { { "negative_slope", 0.01 } }, "leaky_relu", true)
