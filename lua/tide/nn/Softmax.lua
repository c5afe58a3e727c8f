-- nn.Softmax([dim]): without one, PyTorch's implicit choice (F.softmax)
local A = require("tide.nn._activation")

return A.along_dim("Softmax", "softmax")
