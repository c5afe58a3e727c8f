-- nn.SiLU([{inplace = false}]): x * sigmoid(x)
local A = require("tide.nn._activation")

return A.inplace("SiLU", "silu")
