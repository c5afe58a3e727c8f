-- nn.Hardsigmoid([{inplace = false}]): (x + 3) / 6 clamped to [0, 1] (F.hardsigmoid)
local A = require("tide.nn._activation")

return A.inplace("Hardsigmoid", "hardsigmoid")
