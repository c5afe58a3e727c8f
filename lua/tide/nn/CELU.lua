-- nn.CELU([alpha = 1]) or CELU({alpha =, inplace = false}): x where x > 0, else
-- alpha (exp(x / alpha) - 1) (F.celu)
local A = require("tide.nn._activation")

return A.parametric("CELU", { { "alpha", 1 } }, "celu", true)
