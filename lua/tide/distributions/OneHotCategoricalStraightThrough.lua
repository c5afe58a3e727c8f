-- tide.distributions.OneHotCategoricalStraightThrough({probs =} or {logits =}[,
-- validate_args =]): OneHotCategorical (whose methods it inherits) with PyTorch's
-- straight-through rsample (Bengio et al. 2013): the one-hot draw plus probs - probs:detach(),
-- whose value is the draw and whose gradient is that of probs.
local OneHotCategorical = require("tide.distributions.OneHotCategorical")

local OneHotCategoricalStraightThrough = OneHotCategorical:extend(
    "OneHotCategoricalStraightThrough")
OneHotCategoricalStraightThrough.has_rsample = true

function OneHotCategoricalStraightThrough:rsample(shape)
    local draws = self:sample(shape)
    local probs = self._categorical.probs
    return draws + (probs - probs:detach())
end

return OneHotCategoricalStraightThrough
