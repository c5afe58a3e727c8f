-- nn.ReLU6([{inplace = false}]): min(max(x, 0), 6) (F.relu6)
local A = require("tide.nn._activation")

local ReLU6 = A.inplace("ReLU6", "relu6")
local init = ReLU6.init

-- min_val 0 and max_val 6: PyTorch's attributes (its ReLU6 is a Hardtanh); forward is F.relu6
function ReLU6:init(...)
    init(self, ...)
    self.min_val, self.max_val = 0.0, 6.0
end

return ReLU6
