-- nn.Dropout2d([p = 0.5[, inplace = false]]) or Dropout2d({p =, inplace =}): in training,
-- zeroes whole channels of input {N, C, H, W} (or unbatched {C, H, W}) with probability p and
-- scales the rest by 1/(1-p); identity in eval mode. A 2-D input {N, C}: PyTorch's deprecated
-- case, warned about, each element its own channel (F.dropout2d)
local Dropout = require("tide.nn.Dropout")
local I = require("tide.nn._internal")
local C = require("tide.nn._args")

-- init (p, inplace) and extra_repr are Dropout's
local Dropout2d = Dropout:extend("Dropout2d")

function Dropout2d:forward(x)
    I.check_tensor(x, "Dropout2d")
    local spatial = C.dropout2d_spatial(x)
    local function drop(t)
        if spatial == 0 then
            return self.p == 0 and t or I.channel_dropout(t, self.p, 0)
        end
        return I.dropout2d(t, self.p, "Dropout2d")
    end
    if not self.training then
        return spatial == 2 and I.dropout2d(x, 0, "Dropout2d") or x -- the shape check
    end
    if self.inplace then
        return I.inplace(x, drop, "Dropout2d")
    end
    return drop(x)
end

return Dropout2d
