-- nn.Softshrink([lambd = 0.5]) or Softshrink({lambd =}): x moved lambd towards 0, 0 in
-- [-lambd, lambd] (F.softshrink)
local A = require("tide.nn._activation")

return A.parametric("Softshrink", { { "lambd", 0.5 } }, "softshrink")
