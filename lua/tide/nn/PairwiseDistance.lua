-- nn.PairwiseDistance([{p = 2, eps = 1e-6, keepdim = false}]): F.pairwise_distance(x1, x2)
local core = require("tide.core")
local Module = require("tide.nn.Module")
local F = require("tide.nn.functional")

local PairwiseDistance = Module:extend("PairwiseDistance")

function PairwiseDistance:init(opts)
    core._check_options(opts or {}, "PairwiseDistance", { "p", "eps", "keepdim" })
    self.opts = opts
end

function PairwiseDistance:forward(x1, x2)
    return F.pairwise_distance(x1, x2, self.opts)
end

require("tide.nn._signature").define(PairwiseDistance, { names = { "p", "eps", "keepdim" } })

return PairwiseDistance
