-- nn.LazyConvTranspose2d(out_channels, kernel_size[, opts]): PyTorch's; a ConvTranspose2d
-- whose in_channels is the channels of its first input {N, C, H, W} (tide.nn._lazy_module)
local raise = require("tide.autograd").raise

return require("tide.nn._lazy_module")("LazyConvTranspose2d",
    require("tide.nn.ConvTranspose2d"), function(x, who)
    if x:dim() ~= 4 then
        raise(string.format("tide: %s: expected a 4-D input {N, C, H, W}, got %d dims", who,
            x:dim()))
    end
    return x:size(2)
end)
