-- nn.ELU([alpha = 1]) or ELU({alpha =, inplace = false}): x where x > 0, else alpha (exp(x) - 1)
local A = require("tide.nn._activation")

return A.parametric("ELU", { { "alpha", 1 } }, "elu", true)
