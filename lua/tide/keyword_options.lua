-- tide.keyword_options: PyTorch's keyword options on two of the core's in-place writes, which
-- dropped them silently before: index_add_(dim, index, src, {alpha =}) and scatter / scatter_
-- (dim, index, src, {reduce = "add" | "multiply"}), tide.scatter's too. Each wraps the core's
-- method, so it loads with tide (tide.indexing, whose scatter_reduce the reduce option calls,
-- loads on first use).
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local args = require("tide.op_args")

local Tensor = core.Tensor
local check = args.check

local M = { names = {} }

local ALPHA = { "alpha" }

-- index_add_(dim, index, source[, {alpha = 1}]): the core's, with PyTorch's alpha (the extra
-- argument used to be dropped, and the sum taken with alpha 1)
local kernel_index_add_ = Tensor.index_add_

function Tensor.index_add_(x, dim, index, src, opts, ...)
    args.no_extra("index_add_", 5, ...)
    if opts == nil then
        return kernel_index_add_(x, dim, index, src)
    end
    check("index_add_", x)
    check("index_add_", src, 4)
    local alpha = args.options("index_add_", opts, ALPHA, "{alpha = 2}").alpha or 1
    if type(alpha) ~= "number" then
        raise(("tide: index_add_: alpha must be a number, got %s"):format(type(alpha)))
    end
    return kernel_index_add_(x, dim, index, alpha == 1 and src or src * alpha)
end

-- scatter(dim, index, src[, {reduce = "add" | "multiply"}]) and scatter_: the core's, or with
-- PyTorch 1.13's reduce, scatter_reduce's "sum" / "prod" into x (src a tensor or a number)
local SCATTER_REDUCE = { add = "sum", multiply = "prod" }
local REDUCE_OPTION = { "reduce" }

local function scatter_with_reduce(op, kernel, reducer)
    Tensor[op] = function(x, dim, index, src, opts, ...)
        args.no_extra(op, 5, ...)
        if opts == nil then
            return kernel(x, dim, index, src)
        end
        check(op, x)
        local reduce = args.options(op, opts, REDUCE_OPTION, '{reduce = "add"}').reduce
        local how = SCATTER_REDUCE[reduce]
        if how == nil then
            raise(("tide: %s: reduce = %s; expected \"add\" or \"multiply\" (or no options)")
                :format(op, tostring(reduce)))
        end
        if type(src) == "number" then
            check(op, index, 3)
            src = core.full(index.shape, src, { dtype = x.dtype, device = x.device })
        end
        return reducer(x, dim, index, src, how)
    end
end
scatter_with_reduce("scatter", Tensor.scatter, function(...) return Tensor.scatter_reduce(...) end)
scatter_with_reduce("scatter_", Tensor.scatter_,
    function(...) return Tensor.scatter_reduce_(...) end)
-- tide.scatter(x, dim, index, src, {reduce =}) is the method with its reduce (the core's
-- function took no options)
M.names[#M.names + 1] = "scatter"

return M
