-- tide.dtype_queries: PyTorch's questions about dtypes, by tide's own promotion rules (those of
-- `add`): tide.result_type(a, b) (tensors or numbers), tide.promote_types(dt1, dt2),
-- tide.can_cast(from, to), tide.finfo(dtype), tide.iinfo(dtype); and the small functions PyTorch has beside them: tide.is_floating_point,
-- tide.numel, tide.detach (the methods), tide.positive / t:positive() (t itself) and
-- tide.isreal / t:isreal() (all true: tide has no complex dtype). Loaded on first use
-- (lua/tide/_lazy_ops.lua).
local core = require("tide.core")
local compat = require("tide._compat")
local args = require("tide.op_args")
local raise = require("tide.autograd.raise")

local Tensor = core.Tensor
local check = args.check

local M = { functions = {} }
local F = M.functions

-- the dtypes by kind and rank: a promotion keeps the higher kind (bool < integer < float), and
-- within a kind the higher rank; float16 with bfloat16 meet at float32 (as add does)
local KIND = { bool = 0, uint8 = 1, int32 = 1, int64 = 1, float16 = 2, bfloat16 = 2,
    float32 = 2, float64 = 2 }
local RANK = { bool = 0, uint8 = 1, int32 = 2, int64 = 3, float16 = 1, bfloat16 = 1,
    float32 = 2, float64 = 3 }
local NAMES = '"float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8" or "bool"'

-- dt, checked to be a dtype name (argument pos of op)
local function dtype_arg(op, dt, pos)
    if type(dt) ~= "string" or not KIND[dt] then
        raise(("tide: %s: argument #%d must be a dtype name, got %s; use %s"):format(op, pos,
            type(dt) == "string" and ('"' .. dt .. '"') or type(dt), NAMES))
    end
    return dt
end

local function promote(a, b)
    if a == b then
        return a
    end
    if KIND[a] ~= KIND[b] then
        return KIND[a] > KIND[b] and a or b
    end
    if RANK[a] == RANK[b] then -- float16 and bfloat16
        return "float32"
    end
    return RANK[a] > RANK[b] and a or b
end

-- tide.promote_types(dt1, dt2): the dtype add gives for tensors of these dtypes
function F.promote_types(a, b, ...)
    args.no_extra("promote_types", 2, ...)
    return promote(dtype_arg("promote_types", a, 1), dtype_arg("promote_types", b, 2))
end

-- a number's kind as add reads it: a Lua boolean is bool, a number with an integer value
-- (2.0 too, as add) is an integer, anything else (2.5, inf, NaN) a float
local function number_kind(v)
    if type(v) == "boolean" then
        return 0
    end
    if v == math.floor(v) and v - v == 0 then
        return 1
    end
    return 2
end
-- a number's own dtype: bool, int64, or the default float dtype (tide.get_default_dtype)
local function of_kind(k)
    return k == 0 and "bool" or k == 1 and "int64" or core.get_default_dtype()
end

-- tide.result_type(a, b): the dtype of tide.add(a, b): tensors promote by dtype, but a 0-d
-- tensor beside one with dims counts as a number of its dtype (PyTorch's dimension
-- categories: it changes the other's dtype only when of a higher kind, and then to its own);
-- a number changes a tensor's dtype only when of a higher kind (an integer makes bool int64,
-- a float makes bool or integers the default float dtype); two numbers: int64 or the default
-- float dtype
function F.result_type(a, b, ...)
    args.no_extra("result_type", 2, ...)
    local function arg(v, pos)
        if core.is_tensor(v) then
            return v.dtype, nil
        elseif type(v) == "number" or type(v) == "boolean" then
            return nil, number_kind(v)
        end
        raise(("tide: result_type: argument #%d must be a tensor or a number, got %s")
            :format(pos, type(v)))
    end
    local da, ka = arg(a, 1)
    local db, kb = arg(b, 2)
    if da and db then
        local za, zb = a:dim() == 0, b:dim() == 0
        if za ~= zb then
            local dims, zero = za and db or da, za and da or db
            return KIND[zero] > KIND[dims] and zero or dims
        end
        return promote(da, db)
    end
    if not da and not db then
        return of_kind(math.max(ka, kb))
    end
    local dt, k = da or db, ka or kb
    return k > KIND[dt] and of_kind(k) or dt
end

-- tide.can_cast(from, to): false where PyTorch's casting rule refuses: a float to an integer
-- or bool, an integer to bool
function F.can_cast(from, to, ...)
    args.no_extra("can_cast", 2, ...)
    dtype_arg("can_cast", from, 1)
    dtype_arg("can_cast", to, 2)
    return KIND[from] <= KIND[to]
end

-- the limits of the floating dtypes (torch.finfo's fields; smallest_normal is tiny)
local FINFO = require("tide._dtype_limits")

-- dt, or the default float dtype when nil (torch.finfo() with no argument)
local function info_dtype(op, dt, kinds)
    if dt == nil and op == "finfo" then
        return core.get_default_dtype()
    end
    if core.is_tensor(dt) then -- PyTorch wants a dtype; a tensor's is what was meant
        raise(("tide: %s: expected a dtype name, got a tensor; use tide.%s(t.dtype)")
            :format(op, op))
    end
    dt = dtype_arg(op, dt, 1)
    if dt == "bool" then
        raise(("tide: %s: bool has no limits (PyTorch's %s neither)"):format(op, op))
    end
    if not kinds[KIND[dt]] then
        raise(("tide: %s: %s is not %s dtype; use tide.%s"):format(op, dt,
            op == "finfo" and "a floating-point" or "an integer",
            op == "finfo" and "iinfo" or "finfo"))
    end
    return dt
end

-- tide.finfo([dtype]): torch.finfo: {dtype, bits, eps, max, min, tiny, smallest_normal,
-- resolution} of a floating-point dtype (the default float dtype without one)
function F.finfo(dt, ...)
    args.no_extra("finfo", 1, ...)
    dt = info_dtype("finfo", dt, { [2] = true })
    local f = FINFO[dt]
    return { dtype = dt, bits = f.bits, eps = f.eps, max = f.max, min = -f.max, tiny = f.tiny,
        smallest_normal = f.tiny, resolution = f.resolution }
end

-- tide.iinfo(dtype): torch.iinfo: {dtype, bits, max, min} of an integer dtype. int64's limits
-- are exact where Lua has integers (5.3, 5.4); 5.1 and LuaJIT hold them as the nearest doubles
-- (+-2^63)
function F.iinfo(dt, ...)
    args.no_extra("iinfo", 1, ...)
    dt = info_dtype("iinfo", dt, { [1] = true })
    if dt == "uint8" then
        return { dtype = dt, bits = 8, min = 0, max = 255 }
    elseif dt == "int32" then
        return { dtype = dt, bits = 32, min = -2147483648, max = 2147483647 }
    end
    return { dtype = dt, bits = 64, min = compat.int64_min, max = compat.int64_max }
end

-- positive(): t itself (PyTorch's unary plus); a bool tensor raises, as PyTorch's
function Tensor.positive(x, ...)
    args.no_extra("positive", 1, ...)
    check("positive", x)
    if x.dtype == "bool" then
        raise("tide: positive: not defined on a bool tensor (as PyTorch's); convert it with " ..
            ":to(\"int64\") first")
    end
    return x
end

-- isreal(): a bool tensor of t's shape, all true for a real tensor (a complex one's own
-- isreal: true where the imaginary part is 0)
function Tensor.isreal(x, ...)
    if require("tide.complex.tensor").is(x) then
        return x:isreal(...)
    end
    args.no_extra("isreal", 1, ...)
    check("isreal", x)
    return core.ones(x:size(), { dtype = "bool", device = x.device })
end

M.names = { "result_type", "promote_types", "can_cast", "is_floating_point", "numel", "detach",
    "positive", "isreal", "finfo", "iinfo" }
return M
