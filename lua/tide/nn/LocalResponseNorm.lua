-- nn.LocalResponseNorm(size[, {alpha = 1e-4, beta = 0.75, k = 1}]): each channel of input
-- {N, C, *} divided by (k + alpha * the mean of x^2 over `size` neighbouring channels)^beta
-- (F.local_response_norm), as in AlexNet
local core = require("tide.core")
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")

local LocalResponseNorm = Module:extend("LocalResponseNorm")

function LocalResponseNorm:init(size, opts)
    self.size = I.check_int(size, "size", "LocalResponseNorm")
    core._check_options(opts or {}, "LocalResponseNorm", { "alpha", "beta", "k" })
    opts = opts or {}
    self.alpha, self.beta, self.k = opts.alpha or 1e-4, opts.beta or 0.75, opts.k or 1
end

function LocalResponseNorm:forward(x)
    I.check_tensor(x, "LocalResponseNorm")
    return F.local_response_norm(x, self.size, { alpha = self.alpha, beta = self.beta,
        k = self.k })
end

function LocalResponseNorm:extra_repr()
    return string.format("%d, alpha=%s, beta=%s, k=%s", self.size, tostring(self.alpha),
        tostring(self.beta), tostring(self.k))
end

require("tide.nn._signature").define(LocalResponseNorm, { names = { "size", "alpha", "beta", "k" },
    required = 1 })

return LocalResponseNorm
