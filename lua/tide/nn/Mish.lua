-- nn.Mish(): x tanh(softplus(x)) (F.mish)
local A = require("tide.nn._activation")

return A.inplace("Mish", "mish")
