-- nn.Dropout2d([p = 0.5]) or Dropout2d({p =, inplace = false}): in training, zeroes whole channels of input {N, C, H, W} (or
-- unbatched {C, H, W}) with probability p and scales the rest by 1/(1-p); identity in eval mode
local Dropout = require("tide.nn.Dropout")
local I = require("tide.nn._internal")

-- init (p, inplace) and extra_repr are Dropout's
local Dropout2d = Dropout:extend("Dropout2d")

function Dropout2d:forward(x)
    I.check_tensor(x, "Dropout2d")
    if self.inplace and self.training then
        return I.inplace(x, function(t)
            return I.dropout2d(t, self.p, "Dropout2d")
        end, "Dropout2d")
    end
    return I.dropout2d(x, self.training and self.p or 0, "Dropout2d")
end

return Dropout2d
