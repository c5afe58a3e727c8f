-- nn.FeatureAlphaDropout([p = 0.5]) or FeatureAlphaDropout({p =, inplace = false}): in
-- training, alpha dropout of whole channels of {N, C, *} (F.feature_alpha_dropout); identity in
-- eval mode
local Dropout = require("tide.nn.Dropout")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")

-- init (p, inplace) is Dropout's
local FeatureAlphaDropout = Dropout:extend("FeatureAlphaDropout")

function FeatureAlphaDropout:forward(x)
    I.check_tensor(x, "FeatureAlphaDropout")
    return F.feature_alpha_dropout(x, { p = self.p, training = self.training,
        inplace = self.inplace })
end

-- as PyTorch prints it
function FeatureAlphaDropout:extra_repr()
    return "p=" .. self.p .. ", inplace=" .. tostring(self.inplace == true)
end

return FeatureAlphaDropout
