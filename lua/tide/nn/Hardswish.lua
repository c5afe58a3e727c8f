-- nn.Hardswish(): x relu6(x + 3) / 6 (F.hardswish)
local A = require("tide.nn._activation")

return A.inplace("Hardswish", "hardswish")
