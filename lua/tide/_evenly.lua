-- tide._evenly: a reduction's value picked among x's elements (the median or nanmedian of all of
-- them), recorded so that its gradient goes evenly to every element equal to it (to x's NaNs
-- when it is NaN), as PyTorch's evenly_distribute_backward: with ties, the 0.5 of one element
-- was PyTorch's 0.25 and 0.25 on two.
local core = require("tide.core")
local autograd = require("tide.autograd")

autograd.def {
    name = "evenly",
    reads = { 1, "out" },
    backward = function(nd, g)
        local x, v = nd[1], nd.out
        local mask = x:eq(v):logical_or(x:isnan():logical_and(v:isnan()))
        return core.where(mask, g / mask:sum(), 0)
    end,
}

-- v (0-d, x's dtype), computed from x without recording, as the result of such a pick
return function(x, v)
    if autograd.needs_record(x) then
        autograd.record("evenly", v, x)
    end
    return v
end
