-- nn.Sigmoid: elementwise sigmoid
local A = require("tide.nn._activation")

return A.method("Sigmoid", "sigmoid")
