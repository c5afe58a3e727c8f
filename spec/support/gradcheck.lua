-- gradcheck(fn, inputs[, opts]): the specs' gradient check, tide.autograd.gradcheck (the
-- public one: whole Jacobians from autograd against central finite differences, entry by
-- entry) with the specs' rules: inputs that require grad must be float64, only fn's first
-- result counts, and the tolerances are tighter than PyTorch's defaults (atol 1e-6, rtol 1e-4;
-- opts may set eps, atol and rtol). Returns true, or raises naming the mismatching entries.
local autograd = require("tide.autograd")

local function gradcheck(fn, inputs, opts)
    opts = opts or {}
    for i, x in ipairs(inputs) do
        if autograd.is_tensor(x) and x.requires_grad then
            assert(x.dtype == "float64", "gradcheck: input " .. i .. " must be float64")
        end
    end
    return autograd.gradcheck(function(...)
        return (fn(...))
    end, inputs, { eps = opts.eps or 1e-6, atol = opts.atol or 1e-6, rtol = opts.rtol or 1e-4 })
end

return gradcheck
