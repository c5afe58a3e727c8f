-- nn.GELU: elementwise gelu
local A = require("tide.nn._activation")

return A.method("GELU", "gelu")
