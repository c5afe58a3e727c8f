-- tide.nn._loss3: the losses of three tensors (MarginRankingLoss, TripletMarginLoss,
-- CosineEmbeddingLoss), out of the users' sight: a class that keeps its options and calls
-- F[fn](a, b, c, opts)
local core = require("tide.core")
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")

-- forward's parameters, PyTorch's names (one of them may come by name, last: {target = y})
local NAMES = {
    MarginRankingLoss = { "input1", "input2", "target" },
    CosineEmbeddingLoss = { "input1", "input2", "target" },
    TripletMarginLoss = { "anchor", "positive", "negative" },
    GaussianNLLLoss = { "input", "target", "var" },
}
local forward_args = require("tide.nn._loss").forward_args

return function(name, keys, fn)
    local cls = Module:extend(name)
    function cls:init(opts)
        opts = I.legacy_reduction(opts, name) -- PyTorch's size_average/reduce
        if opts ~= nil then
            core._check_options(opts, name, keys)
            if opts.reduction ~= nil then
                I.check_reduction(opts.reduction, name)
            end
        end
        self.opts = opts
        require("tide.nn._loss").keep(self, name, opts) -- PyTorch's attributes
    end
    function cls:forward(...)
        local a, b, c = forward_args(name, NAMES[name] or { "input1", "input2", "target" }, ...)
        return F[fn](a, b, c, require("tide.nn._loss").options(self, name))
    end
    return require("tide.nn._loss").signature(cls)
end
