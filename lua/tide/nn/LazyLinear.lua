-- nn.LazyLinear(out_features[, bias = true]) (or {bias =}): PyTorch's; a Linear whose in_features is
-- the last dim of its first input (tide.nn._lazy_module)
local raise = require("tide.autograd").raise

return require("tide.nn._lazy_module")("LazyLinear", require("tide.nn.Linear"), function(x, who)
    if x:dim() < 1 then
        raise("tide: " .. who .. ": expected an input with at least 1 dim (the features), got " ..
            "a 0-d tensor")
    end
    return x:size(-1)
end)
