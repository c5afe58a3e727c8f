-- nn.ReLU6([{inplace = false}]): min(max(x, 0), 6) (F.relu6)
local A = require("tide.nn._activation")

return A.inplace("ReLU6", "relu6")
