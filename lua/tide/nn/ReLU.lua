-- nn.ReLU([{inplace = false}]): elementwise relu (F.relu; inplace writes into the input)
local A = require("tide.nn._activation")

return A.inplace("ReLU", "relu", "relu")
