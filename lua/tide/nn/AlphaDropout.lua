-- nn.AlphaDropout([p = 0.5]) or AlphaDropout({p =, inplace = false}): in training, alpha
-- dropout for SELU networks (the mean and variance kept); identity in eval mode
-- (F.alpha_dropout)
local Dropout = require("tide.nn.Dropout")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")

-- init (p, inplace) and extra_repr are Dropout's
local AlphaDropout = Dropout:extend("AlphaDropout")

function AlphaDropout:forward(x)
    I.check_tensor(x, "AlphaDropout")
    return F.alpha_dropout(x, { p = self.p, training = self.training, inplace = self.inplace })
end

return AlphaDropout
