-- tide.scans: running reductions by PyTorch's names (docs/API.md, "The op list"): cummax and
-- cummin (values and 1-based indices; among equal values the later index, a NaN takes over
-- from where it appears, as PyTorch's), logcumsumexp. Each is a Hillis-Steele scan (log2 n
-- rounds of narrow, combine and cat) with an associative combine. cummax's values are gathered
-- from x at the indices, so the gradient reaches the element taken, as PyTorch's. Tensor
-- methods, and tide.X functions.
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local args = require("tide.op_args")

local Tensor = core.Tensor
local check, dim_of = args.check, args.dim_of
local no_grad = autograd.no_grad

local M = {}

-- scans the pair (v, i) along d: combine(earlier, later) -> the pair kept
local function scan_pairs(v, i, d, later_wins)
    local n, s = v:size(d), 1
    while s < n do
        local av, ai = v:narrow(d, 1, n - s), i:narrow(d, 1, n - s)
        local bv, bi = v:narrow(d, s + 1, n - s), i:narrow(d, s + 1, n - s)
        local take_b = later_wins(av, bv)
        v = core.cat({ v:narrow(d, 1, s), core.where(take_b, bv, av) }, d)
        i = core.cat({ i:narrow(d, 1, s), core.where(take_b, bi, ai) }, d)
        s = s * 2
    end
    return v, i
end

-- cummax(dim), cummin(dim): the running max (min) along dim and its 1-based index
local function running(op, better_or_equal)
    Tensor[op] = function(x, dim, ...)
        args.no_extra(op, 2, ...)
        check(op, x)
        if dim == nil then
            raise(("tide: %s: dim is required, as in x:%s(1)"):format(op, op))
        end
        local t = x:dim() == 0 and x:reshape(1) or x
        local d = dim_of(op, t, dim)
        -- bool compares as uint8 (false < true), as PyTorch's bool cummax/cummin
        local c = x.dtype == "bool" and t:to("uint8") or t
        local idx = no_grad(function()
            local shape = {}
            for k = 1, t:dim() do
                shape[k] = k == d and t:size(d) or 1
            end
            local i = core.arange(1, t:size(d) + 1, { dtype = "int64", device = t.device })
                :reshape(shape):expand(t:size()):contiguous()
            local _, r = scan_pairs(c, i, d, function(a, b)
                return b:isnan():logical_or(a:isnan():logical_not():logical_and(
                    better_or_equal(b, a)))
            end)
            return r
        end)
        local v = t:gather(d, idx)
        if x:dim() == 0 then
            return v:reshape({}), idx:reshape({})
        end
        return v, idx
    end
end
running("cummax", function(b, a) return b:ge(a) end)
running("cummin", function(b, a) return b:le(a) end)

-- logcumsumexp(dim): log(cumsum(exp(x))) without overflow, each step logaddexp (PyTorch's
-- combine: the larger plus log1p(exp(smaller - larger)))
Tensor.logcumsumexp = args.in_float(function(x, dim, ...)
    args.no_extra("logcumsumexp", 2, ...)
    check("logcumsumexp", x)
    if dim == nil then
        raise("tide: logcumsumexp: dim is required, as in x:logcumsumexp(1)")
    end
    args.float_input("logcumsumexp", x)
    local t = x:dim() == 0 and x:reshape(1) or x
    local d = dim_of("logcumsumexp", t, dim)
    local n, s = t:size(d), 1
    while s < n do
        local tail = t:narrow(d, 1, n - s):logaddexp(t:narrow(d, s + 1, n - s))
        t = core.cat({ t:narrow(d, 1, s), tail }, d)
        s = s * 2
    end
    return x:dim() == 0 and t:reshape({}) or (n > 0 and t or t:clone())
end)

M.names = { "cummax", "cummin", "logcumsumexp" }
return M
