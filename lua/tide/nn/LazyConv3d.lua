-- nn.LazyConv3d(out_channels, kernel_size[, ...]) (or kernel_size, opts): PyTorch's; a Conv3d whose
-- in_channels is dim 2 of its first input (tide.nn._lazy_module)
local raise = require("tide.autograd").raise

return require("tide.nn._lazy_module")("LazyConv3d", require("tide.nn.Conv3d"), function(x, who)
    if x:dim() ~= 5 then
        raise(string.format("tide: %s: expected a 5-D input {N, C, ...}, got %d dims", who,
            x:dim()))
    end
    return x:size(2)
end)
