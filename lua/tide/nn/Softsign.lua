-- nn.Softsign(): x / (1 + |x|) (F.softsign)
local A = require("tide.nn._activation")

return A.inplace("Softsign", "softsign")
