-- nn.LazyConv3d(out_channels, kernel_size[, ...]) (or kernel_size, opts): PyTorch's; a Conv3d whose
-- in_channels is dim 2 of its first input (tide.nn._lazy_module)
local raise = require("tide.autograd").raise

return require("tide.nn._lazy_module")("LazyConv3d", require("tide.nn.Conv3d"), function(x, who)
    local nd = x:dim()
    if nd ~= 5 and nd ~= 4 then -- batched, or unbatched {C, D, H, W}, as PyTorch's
        raise(string.format("tide: %s: expected a 5-D input {N, C, D, H, W} or a 4-D {C, D, " ..
            "H, W}, got %d dims", who, nd))
    end
    return x:size(nd - 3)
end)
