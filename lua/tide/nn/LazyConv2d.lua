-- nn.LazyConv2d(out_channels, kernel_size[, ...]) (or kernel_size, opts): PyTorch's; a Conv2d whose
-- in_channels is dim 2 of its first input (tide.nn._lazy_module)
local raise = require("tide.autograd").raise

return require("tide.nn._lazy_module")("LazyConv2d", require("tide.nn.Conv2d"), function(x, who)
    if x:dim() ~= 4 then
        raise(string.format("tide: %s: expected a 4-D input {N, C, ...}, got %d dims", who,
            x:dim()))
    end
    return x:size(2)
end)
