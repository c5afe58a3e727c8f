-- nn.Dropout1d([p = 0.5]) or Dropout1d({p =, inplace = false}): in training, zeroes whole
-- channels of input {N, C, L} (or {C, L}) with probability p and scales the rest by 1/(1-p);
-- identity in eval mode (F.dropout1d)
local Dropout = require("tide.nn.Dropout")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")

-- init (p, inplace) and extra_repr are Dropout's
local Dropout1d = Dropout:extend("Dropout1d")

function Dropout1d:forward(x)
    I.check_tensor(x, "Dropout1d")
    return F.dropout1d(x, { p = self.p, training = self.training, inplace = self.inplace })
end

return Dropout1d
