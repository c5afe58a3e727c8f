-- nn.LogSigmoid(): log(sigmoid(x)) without overflow (F.logsigmoid)
local A = require("tide.nn._activation")

return A.inplace("LogSigmoid", "logsigmoid")
