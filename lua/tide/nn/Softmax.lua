-- nn.Softmax([dim = -1])
local A = require("tide.nn._activation")

return A.along_dim("Softmax", "softmax")
