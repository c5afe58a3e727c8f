-- nn.Dropout2d([p = 0.5[, inplace = false]]) or Dropout2d({p =, inplace =}): in training,
-- zeroes whole channels of input {N, C, H, W} with probability p and scales the rest by
-- 1/(1-p); identity in eval mode. Other ranks as PyTorch 1.13's F.dropout2d (warned about; a
-- 3-D input read as {N, C, L}, a 2-D one {N, C} each element its own channel)
local Dropout = require("tide.nn.Dropout")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")

-- init (p, inplace) and extra_repr are Dropout's
local Dropout2d = Dropout:extend("Dropout2d")

function Dropout2d:forward(x)
    I.check_tensor(x, "Dropout2d")
    return F.dropout2d(x, { p = self.p, training = self.training, inplace = self.inplace })
end

return Dropout2d
