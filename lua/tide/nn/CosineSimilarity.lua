-- nn.CosineSimilarity([{dim = 2, eps = 1e-8}]): F.cosine_similarity(x1, x2) along dim
local core = require("tide.core")
local raise = require("tide.autograd").raise
local compat = require("tide._compat")
local Module = require("tide.nn.Module")
local F = require("tide.nn.functional")

local CosineSimilarity = Module:extend("CosineSimilarity")

function CosineSimilarity:init(opts)
    if opts ~= nil then
        core._check_options(opts, "CosineSimilarity", { "dim", "eps" })
    end
    opts = opts or {}
    self.dim, self.eps = opts.dim or 2, opts.eps or 1e-8
    if not compat.is_integer(self.dim) or type(self.eps) ~= "number" then
        raise(string.format("tide: CosineSimilarity: expected an integer dim and a number eps, " ..
            "got %s and %s", tostring(self.dim), tostring(self.eps)))
    end
end

function CosineSimilarity:forward(x1, x2)
    return F.cosine_similarity(x1, x2, { dim = self.dim, eps = self.eps })
end

function CosineSimilarity:extra_repr()
    return string.format("dim %d, eps %g", self.dim, self.eps)
end

require("tide.nn._signature").define(CosineSimilarity, { names = { "dim", "eps" } })

return CosineSimilarity
