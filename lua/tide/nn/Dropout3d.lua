-- nn.Dropout3d([p = 0.5]) or Dropout3d({p =, inplace = false}): in training, zeroes whole
-- channels of input {N, C, D, H, W} (or {C, D, H, W}) with probability p and scales the rest by
-- 1/(1-p); identity in eval mode (F.dropout3d)
local Dropout = require("tide.nn.Dropout")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")

-- init (p, inplace) is Dropout's
local Dropout3d = Dropout:extend("Dropout3d")

function Dropout3d:forward(x)
    I.check_tensor(x, "Dropout3d")
    return F.dropout3d(x, { p = self.p, training = self.training, inplace = self.inplace })
end

function Dropout3d:extra_repr()
    return string.format("p=%s, inplace=%s", tostring(self.p), tostring(self.inplace == true))
end

return Dropout3d
