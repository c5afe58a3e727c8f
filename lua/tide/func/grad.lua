-- tide.func.grad / grad_and_value: PyTorch's torch.func.grad. grad(f[, {argnums = 1,
-- has_aux = false}]) is a function: called as f would be, it returns the gradient of f's
-- scalar output with respect to argument argnums (1-based: 1 is the first, PyTorch's 0), a
-- tensor or a table of tensors shaped as that argument; for a list of argnums a list of those.
-- has_aux: f returns (output, aux), the transform (gradient, aux). grad_and_value also returns
-- the output: (gradient, value[, aux]).
local core = require("tide.core")
local compat = require("tide._compat")
local raise = require("tide.autograd.raise")
local options = require("tide.func.options")
local reverse = require("tide.func.reverse")
local args = require("tide.op_args")
local pytree = require("tide.func.pytree")

local is_tensor = core.is_tensor

local M = {}

local OPTIONS = { "argnums", "has_aux" }

local function transform(who, f, with_value, ...)
    options.callable(who, f)
    local opts = options.positional(who, { "argnums", "has_aux" }, ...)
    local o = options.options(who, opts, OPTIONS, "{argnums = 1, has_aux = false}")
    local argnums, single = options.argnums(who, o.argnums)
    local has_aux = options.boolean(who, o, "has_aux")
    return function(...)
        local a = compat.pack(...)
        local nums = options.resolve(who, argnums, a.n)
        local st = reverse.forward(who, f, a, nums, has_aux)
        local out = st.out
        if not is_tensor(out) then
            raise(("tide: %s: f must return a scalar tensor, got %s%s"):format(who,
                pytree.what(out), has_aux and "" or
                "; to return more, return (output, aux) with {has_aux = true}"))
        end
        if out:dim() ~= 0 then
            raise(("tide: %s: f must return a scalar tensor (no dims), got one of shape %s; " ..
                "reduce it (:sum(), :mean()), or use tide.func.vjp or tide.func.jacrev for " ..
                "the derivatives of a tensor"):format(who, args.shape_str(out:size())))
        end
        local one = core.ones({}, { dtype = out.dtype, device = out.device })
        local gs = reverse.trees(st, reverse.pullback(st, { one }, false))
        local g = single and gs[1] or gs
        if with_value then
            if has_aux then
                return g, reverse.unwrap(st, out), reverse.unwrap(st, st.aux)
            end
            return g, reverse.unwrap(st, out)
        end
        if has_aux then
            return g, reverse.unwrap(st, st.aux)
        end
        return g
    end
end

function M.grad(f, ...)
    return transform("func.grad", f, false, ...)
end

function M.grad_and_value(f, ...)
    return transform("func.grad_and_value", f, true, ...)
end

return M
