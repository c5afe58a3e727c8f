-- nn.PairwiseDistance([{p = 2, eps = 1e-6, keepdim = false}]): F.pairwise_distance(x1, x2)
local core = require("tide.core")
local Module = require("tide.nn.Module")
local F = require("tide.nn.functional")

local PairwiseDistance = Module:extend("PairwiseDistance")

function PairwiseDistance:init(opts)
    opts = opts or {}
    core._check_options(opts, "PairwiseDistance", { "p", "eps", "keepdim" })
    -- PyTorch's attributes (p is stored as norm); forward reads them
    self.norm, self.eps, self.keepdim = opts.p or 2.0, opts.eps or 1e-6, opts.keepdim == true
end

function PairwiseDistance:forward(x1, x2)
    return F.pairwise_distance(x1, x2, { p = self.norm, eps = self.eps, keepdim = self.keepdim })
end

require("tide.nn._signature").define(PairwiseDistance, { names = { "p", "eps", "keepdim" } })

return PairwiseDistance
