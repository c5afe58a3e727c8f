-- tide.nn._loss_weighted: the losses of (input, target) that take a per-class weight
-- (MultiLabelSoftMarginLoss, MultiMarginLoss), out of the users' sight: the weight is a buffer,
-- as PyTorch's, so it follows the module's :to(); the other options are kept and passed on to
-- F[fn](input, target, opts)
local core = require("tide.core")
local autograd = require("tide.autograd")
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")

return function(name, keys, fn)
    local cls = Module:extend(name)
    function cls:init(opts)
        opts = I.legacy_reduction(opts, name) -- PyTorch's size_average/reduce
        local kept = {}
        if opts ~= nil then
            core._check_options(opts, name, keys)
            if opts.reduction ~= nil then
                I.check_reduction(opts.reduction, name)
            end
            for k, v in pairs(opts) do
                kept[k] = v
            end
            if opts.weight ~= nil then
                if not autograd.is_tensor(opts.weight) then
                    autograd.raise(string.format("tide: %s: expected weight to be a tensor " ..
                        "(one per class), got %s", name, type(opts.weight)))
                end
                self:register_buffer("weight", opts.weight)
            end
            kept.weight = nil
        end
        self.opts = kept
        require("tide.nn._loss").keep(self, name, kept) -- PyTorch's attributes
    end
    function cls:forward(...)
        local L = require("tide.nn._loss")
        local input, target = L.forward_args(name, { "input", "target" }, ...)
        return F[fn](input, target, L.options(self, name))
    end
    return require("tide.nn._loss").signature(cls)
end
