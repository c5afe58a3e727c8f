-- nn.LogSoftmax([dim]): without one, PyTorch's implicit choice (F.log_softmax)
local A = require("tide.nn._activation")

return A.along_dim("LogSoftmax", "log_softmax")
