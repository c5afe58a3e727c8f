-- nn.SELU(): the self-normalising ELU (F.selu)
local A = require("tide.nn._activation")

return A.inplace("SELU", "selu")
