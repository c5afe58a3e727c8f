-- nn.Tanh: elementwise tanh
local A = require("tide.nn._activation")

return A.method("Tanh", "tanh")
