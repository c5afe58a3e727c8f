-- nn.LazyConvTranspose1d(out_channels, kernel_size[, opts]): PyTorch's; a ConvTranspose1d
-- whose in_channels is the channels of its first input {N, C, L} or {C, L} (tide.nn._lazy_module)
local raise = require("tide.autograd").raise

return require("tide.nn._lazy_module")("LazyConvTranspose1d",
    require("tide.nn.ConvTranspose1d"), function(x, who)
    local nd = x:dim()
    if nd ~= 2 and nd ~= 3 then
        raise(string.format("tide: %s: expected a 3-D input {N, C, L} or a 2-D {C, L}, got %d " ..
            "dims", who, nd))
    end
    return x:size(nd - 1)
end)
