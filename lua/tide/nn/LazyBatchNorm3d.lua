-- nn.LazyBatchNorm3d([eps = 1e-5, momentum = 0.1, affine = true]) (or {eps =, momentum =,
-- affine =}): PyTorch's; a BatchNorm3d whose num_features is dim 2 of its first input
-- (tide.nn._lazy_module); weight, bias, running_mean and running_var wait for it,
-- num_batches_tracked is made at once
local raise = require("tide.autograd").raise
local I = require("tide.nn._internal")
local BatchNorm3d = require("tide.nn.BatchNorm3d")

local DIMS = { [5] = true }

return require("tide.nn._lazy_module")("LazyBatchNorm3d", BatchNorm3d, function(x, who)
    if not DIMS[x:dim()] then
        raise("tide: " .. who .. ": expected " .. BatchNorm3d.expects .. " input, got " ..
            I.shape_str(x.shape))
    end
    return x:size(2)
end)
