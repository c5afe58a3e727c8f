-- tide.distributions.transforms: PyTorch 1.13's torch.distributions.transforms, the
-- invertible maps with a log |det J| that TransformedDistribution pushes a distribution
-- through, and that biject_to and transform_to return for a constraint. Transform (the base:
-- t(x), t.inv, t:log_abs_det_jacobian(x, y), domain, codomain, bijective, sign, event_dim,
-- forward_shape, inverse_shape, {cache_size = 1}), ComposeTransform, ExpTransform,
-- PowerTransform, SigmoidTransform, TanhTransform, SoftplusTransform, AbsTransform,
-- AffineTransform, SoftmaxTransform, StickBreakingTransform, LowerCholeskyTransform,
-- CorrCholeskyTransform, IndependentTransform, ReshapeTransform, CatTransform,
-- StackTransform, CumulativeDistributionTransform, and identity_transform (ComposeTransform({})).
-- One class per file, loaded on first use; dims are 1-based as everywhere in tide.
--
--     local T = tide.distributions.transforms
--     local t = T.ComposeTransform({T.ExpTransform(), T.AffineTransform(1, 2)})
--     local y = t(x)                        -- 1 + 2 exp(x)
--     local x2 = t.inv(y)                   -- x again
--     local ladj = t:log_abs_det_jacobian(x, y)
local M = {}

local NAMES = { "Transform", "ComposeTransform", "ExpTransform", "PowerTransform",
    "SigmoidTransform", "TanhTransform", "SoftplusTransform", "AbsTransform",
    "AffineTransform", "SoftmaxTransform", "StickBreakingTransform", "LowerCholeskyTransform",
    "CorrCholeskyTransform", "IndependentTransform", "ReshapeTransform", "CatTransform",
    "StackTransform", "CumulativeDistributionTransform" }

local lazy = {}
for _, name in ipairs(NAMES) do
    lazy[name] = "tide.distributions.transforms." .. name
end

-- the identity: ComposeTransform({}), one object (PyTorch's)
lazy.identity_transform = function()
    rawset(M, "identity_transform", require("tide.distributions.transforms.ComposeTransform")({}))
end

M._NAMES = NAMES
return require("tide._lazy")(M, lazy)
