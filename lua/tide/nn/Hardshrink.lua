-- nn.Hardshrink([lambd = 0.5]) or Hardshrink({lambd =}): 0 in [-lambd, lambd], else x
-- (F.hardshrink)
local A = require("tide.nn._activation")

return A.parametric("Hardshrink", { { "lambd", 0.5 } }, "hardshrink")
