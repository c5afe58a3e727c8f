-- nn.Softplus([beta = 1[, threshold = 20]]) or Softplus({beta =, threshold =}):
-- log(1 + exp(beta x)) / beta, x itself where beta x > threshold
local A = require("tide.nn._activation")

return A.parametric("Softplus", { { "beta", 1 }, { "threshold", 20 } }, "softplus")
