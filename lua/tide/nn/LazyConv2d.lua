-- nn.LazyConv2d(out_channels, kernel_size[, ...]) (or kernel_size, opts): PyTorch's; a Conv2d whose
-- in_channels is dim 2 of its first input (tide.nn._lazy_module)
local raise = require("tide.autograd").raise

return require("tide.nn._lazy_module")("LazyConv2d", require("tide.nn.Conv2d"), function(x, who)
    local nd = x:dim()
    if nd ~= 4 and nd ~= 3 then -- batched, or unbatched {C, H, W}, as PyTorch's
        raise(string.format("tide: %s: expected a 4-D input {N, C, H, W} or a 3-D {C, H, W}, " ..
            "got %d dims", who, nd))
    end
    return x:size(nd - 2)
end)
