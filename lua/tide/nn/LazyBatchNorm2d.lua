-- nn.LazyBatchNorm2d([eps = 1e-5, momentum = 0.1, affine = true]) (or {eps =, momentum =,
-- affine =}): PyTorch's; a BatchNorm2d whose num_features is dim 2 of its first input
-- (tide.nn._lazy_module); weight, bias, running_mean and running_var wait for it,
-- num_batches_tracked is made at once
local raise = require("tide.autograd").raise
local I = require("tide.nn._internal")
local BatchNorm2d = require("tide.nn.BatchNorm2d")

local DIMS = { [4] = true }

return require("tide.nn._lazy_module")("LazyBatchNorm2d", BatchNorm2d, function(x, who)
    if not DIMS[x:dim()] then
        raise("tide: " .. who .. ": expected " .. BatchNorm2d.expects .. " input, got " ..
            I.shape_str(x.shape))
    end
    return x:size(2)
end)
