-- nn.LazyConvTranspose3d(out_channels, kernel_size[, opts]): PyTorch's; a ConvTranspose3d
-- whose in_channels is the channels of its first input {N, C, D, H, W} (tide.nn._lazy_module)
local raise = require("tide.autograd").raise

return require("tide.nn._lazy_module")("LazyConvTranspose3d",
    require("tide.nn.ConvTranspose3d"), function(x, who)
    if x:dim() ~= 5 then
        raise(string.format("tide: %s: expected a 5-D input {N, C, D, H, W}, got %d dims", who,
            x:dim()))
    end
    return x:size(2)
end)
