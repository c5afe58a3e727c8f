-- gradcheck(fn, inputs[, opts]): compares the gradients that backward() computes with central
-- finite differences, in float64.
--
-- fn(table.unpack(inputs)) returns a tensor (its first result counts). Inputs that are
-- float64 tensors with requires_grad are checked, others are passed through. The output is
-- projected on a fixed random tensor w (L = sum(out * w)), so one backward pass checks the
-- vector-Jacobian product that every caller of backward relies on; the numeric side
-- perturbs each input element by +-eps under no_grad.
-- Returns true, or raises with the first mismatching element.
local tide = require("tide")
local autograd = require("tide.autograd")

local function scalar_loss(out, w)
    if w == nil then
        return out:sum()
    end
    return out:mul(w):sum()
end

local function gradcheck(fn, inputs, opts)
    opts = opts or {}
    local eps = opts.eps or 1e-6
    local atol, rtol = opts.atol or 1e-6, opts.rtol or 1e-4
    local checked = {}
    for i, x in ipairs(inputs) do
        if autograd.is_tensor(x) and x.requires_grad then
            assert(x.dtype == "float64", "gradcheck: input " .. i .. " must be float64")
            autograd.set_grad(x, nil)
            checked[#checked + 1] = i
        end
    end
    assert(#checked > 0, "gradcheck: no input requires grad")

    local out = fn(table.unpack(inputs))
    assert(autograd.is_tensor(out), "gradcheck: fn must return a tensor")
    local w
    if out:numel() > 1 then
        w = tide.randn(out.shape, { dtype = "float64", device = out.device })
    end
    scalar_loss(out, w):backward()

    local function loss_at()
        return autograd.no_grad(function()
            return scalar_loss(fn(table.unpack(inputs)), w):item()
        end)
    end

    for _, i in ipairs(checked) do
        local x = inputs[i]
        local g = autograd.get_grad(x)
        local analytic = g and g:cpu():reshape(-1):totable() or {}
        local flat = autograd.no_grad(function()
            return x:view(-1)
        end)
        for k = 1, x:numel() do
            local orig = flat[k]:item()
            autograd.no_grad(function()
                flat[k] = orig + eps
            end)
            local lp = loss_at()
            autograd.no_grad(function()
                flat[k] = orig - eps
            end)
            local lm = loss_at()
            autograd.no_grad(function()
                flat[k] = orig
            end)
            local numeric = (lp - lm) / (2 * eps)
            local a = analytic[k] or 0
            if math.abs(a - numeric) > atol + rtol * math.abs(numeric) then
                error(string.format("gradcheck: input %d element %d: analytic %.10g, " ..
                    "numeric %.10g", i, k, a, numeric), 2)
            end
        end
    end
    return true
end

return gradcheck
