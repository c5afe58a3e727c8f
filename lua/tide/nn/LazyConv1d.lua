-- nn.LazyConv1d(out_channels, kernel_size[, ...]) (or kernel_size, opts): PyTorch's; a Conv1d whose
-- in_channels is dim 2 of its first input (tide.nn._lazy_module)
local raise = require("tide.autograd").raise

return require("tide.nn._lazy_module")("LazyConv1d", require("tide.nn.Conv1d"), function(x, who)
    local nd = x:dim()
    if nd ~= 3 and nd ~= 2 then -- batched, or unbatched {C, L}, as PyTorch's
        raise(string.format("tide: %s: expected a 3-D input {N, C, L} or a 2-D {C, L}, " ..
            "got %d dims", who, nd))
    end
    return x:size(nd - 1)
end)
