-- tide.testing: PyTorch 1.13's torch.testing for ported test code.
--
--   assert_close(actual, expected[, opts]) raises unless the two are close: tensors (shape,
--     device, dtype and, asked, strides equal; values |actual - expected| <= atol + rtol *
--     |expected|, infinities equal, NaN equal only with equal_nan), Lua numbers, booleans, nil,
--     and lists and tables of them compared entry by entry. The message is PyTorch's
--     ("Tensor-likes are not close!", the mismatched count, the greatest differences), with
--     tide's 1-based indices and the failing entry of a nested input.
--   make_tensor(shape..., {dtype =, device = [, low, high, requires_grad, noncontiguous,
--     exclude_zero]}) draws a tensor of uniform values in [low, high) from tide's generator.
local tide = require("tide")
local core = require("tide.core")
local raise = require("tide.autograd.raise")
local args = require("tide.op_args")
local C = require("tide.complex.tensor")

local M = {}

local is_tensor = core.is_tensor
local floor = math.floor

-- PyTorch's default tolerances (rtol, atol) by dtype; other dtypes compare exactly
local PRECISION = {
    float16 = { 0.001, 1e-5 },
    bfloat16 = { 0.016, 1e-5 },
    float32 = { 1.3e-6, 1e-5 },
    float64 = { 1e-7, 1e-7 },
    complex64 = { 1.3e-6, 1e-5 },
    complex128 = { 1e-7, 1e-7 },
}

local FLOATS = { float16 = true, bfloat16 = true, float32 = true, float64 = true }

local function is_complex(v)
    return C.is(v)
end

local function tensor_like(v)
    return is_tensor(v) or is_complex(v)
end

-- Python's repr of a number: the shortest digits that read back the same, a float keeping ".0"
local function repr(v)
    if v ~= v then
        return "nan"
    elseif v == math.huge or v == -math.huge then
        return v > 0 and "inf" or "-inf"
    end
    local s
    for p = 1, 17 do
        s = ("%." .. p .. "g"):format(v)
        if tonumber(s) == v then
            break
        end
    end
    if not s:find("[%.eEn]") then
        s = s .. ".0"
    end
    return s
end

-- whether the Lua number v is an integer: its subtype on 5.3+, its value on 5.1 and LuaJIT
-- (tide's rule there: an integral number reads as an integer)
local is_integer = require("tide._compat").is_integer
-- whether this Lua tells 1 from 1.0 (5.3+); where it does not, numbers have one type
local NUMBER_SUBTYPES = not is_integer(1.0)

local function index_str(idx)
    return "{" .. table.concat(idx, ", ") .. "}"
end

-- a comparison that failed: raised with the entry's place and the caller's msg (a string in
-- its place, or a function of the generated message)
local Mismatch = {}

local function mismatch(msg)
    error(setmetatable({ msg = msg }, Mismatch), 0)
end

local function tolerances(rtol, atol, ...)
    if (rtol == nil) ~= (atol == nil) then
        raise(("tide: testing.assert_close: both rtol and atol must be given or both left out " ..
            "(as PyTorch's), got no %s; pass {rtol = r, atol = a}"):format(rtol == nil and "rtol" or "atol"))
    end
    if rtol ~= nil then
        return rtol, atol
    end
    local r, a = 0, 0
    for _, dtype in ipairs({ ... }) do
        local p = PRECISION[dtype]
        if p then
            r, a = math.max(r, p[1]), math.max(a, p[2])
        end
    end
    return r, a
end

-- diff: a number, or an integer dtype's difference as a string
local function diff_line(kind, diff, idx, tol, equality)
    diff = type(diff) == "string" and diff or repr(diff)
    local s = idx and ("Greatest %s difference: %s at index %s"):format(kind, diff, index_str(idx))
        or ("%s difference: %s"):format(kind:sub(1, 1):upper() .. kind:sub(2), diff)
    if not equality then -- the tolerance as given: an integer stays one, as in Python
        s = s .. (" (up to %s allowed)"):format(is_integer(tol) and ("%d"):format(tol) or repr(tol))
    end
    return s
end

local function mismatch_msg(what, extra, abs_diff, abs_idx, rel_diff, rel_idx, rtol, atol)
    local equality = rtol == 0 and atol == 0
    local lines = { ("%s are not %s!"):format(what, equality and "equal" or "close"), "" }
    if extra then
        lines[#lines + 1] = extra
    end
    lines[#lines + 1] = diff_line("absolute", abs_diff, abs_idx, atol, equality)
    lines[#lines + 1] = diff_line("relative", rel_diff, rel_idx, rtol, equality)
    return table.concat(lines, "\n")
end

local function compare_numbers(a, e, o)
    if o.check_dtype and NUMBER_SUBTYPES and is_integer(a) ~= is_integer(e) then
        local function kind(v)
            return is_integer(v) and "integer" or "float"
        end
        mismatch(("The (d)types do not match: %s != %s."):format(kind(a), kind(e)))
    end
    local function dtype(v)
        return is_integer(v) and "int64" or "float64"
    end
    local rtol, atol = tolerances(o.rtol, o.atol, dtype(a), dtype(e))
    if a == e or (o.equal_nan and a ~= a and e ~= e) then
        return
    end
    local d = math.abs(a - e)
    if d == d and d ~= math.huge and d <= atol + rtol * math.abs(e) then
        return
    end
    local rel = e == 0 and math.huge or d / math.abs(e)
    if is_integer(a) and is_integer(e) then
        d = ("%d"):format(d)
    end
    mismatch(mismatch_msg("Scalars", nil, d, nil, rel, nil, rtol, atol))
end

local function attribute(name, a, e)
    mismatch(("The values for attribute '%s' do not match: %s != %s."):format(name, a, e))
end

-- the 1-based index of flat position i (0-based) in shape
local function unravel(i, shape)
    local idx = {}
    for d = #shape, 1, -1 do
        idx[d] = i % shape[d] + 1
        i = floor(i / shape[d])
    end
    return idx
end

local function compare_tensors(a, e, o)
    local sa, se = a:size(), e:size()
    if not args.same_shape(sa, se) then
        attribute("shape", args.shape_str(sa), args.shape_str(se))
    end
    if o.check_stride and not is_complex(a) and not is_complex(e) then
        local ta, te = a:stride(), e:stride()
        if not args.same_shape(ta, te) then
            attribute("stride()", args.shape_str(ta), args.shape_str(te))
        end
    end
    if o.check_device and a.device ~= e.device then
        attribute("device", tostring(a.device), tostring(e.device))
    end
    if o.check_dtype and a.dtype ~= e.dtype then
        attribute("dtype", a.dtype, e.dtype)
    end
    local rtol, atol = tolerances(o.rtol, o.atol, a.dtype, e.dtype)
    if a.device ~= e.device then
        a, e = a:to("cpu"), e:to("cpu")
    end
    -- compared at the widest dtype of their kind, as PyTorch's _promote_for_comparison
    local complex = is_complex(a) or is_complex(e)
    local wide = complex and "complex128" or
        (FLOATS[a.dtype] or FLOATS[e.dtype]) and "float64" or "int64"
    a, e = a:to(wide), e:to(wide)
    -- abs of the difference (a complex one's modulus), and where the two are equal
    local abs_diff, mag, same, nan_a, nan_e
    if complex then
        local ra, re = tide.view_as_real(a), tide.view_as_real(e)
        abs_diff, mag = (a - e):abs(), e:abs()
        same = ra:eq(re):all(-1)
        nan_a, nan_e = ra:isnan():any(-1), re:isnan():any(-1)
    else
        abs_diff, mag = (a - e):abs(), e:abs()
        same = a:eq(e)
        nan_a, nan_e = a:isnan(), e:isnan()
    end
    local finite = abs_diff:isfinite()
    local close = same:logical_or(finite:logical_and(abs_diff:le(mag * rtol + atol)))
    if o.equal_nan then
        close = close:logical_or(nan_a:logical_and(nan_e))
    end
    if close:all():item() then
        return
    end
    local mism = close:logical_not()
    if a:dim() == 0 then
        local d, m = abs_diff:item(), mag:item()
        local rel = m == 0 and math.huge or d / m
        mismatch(mismatch_msg("Scalars", nil, wide == "int64" and ("%d"):format(d) or d, nil, rel,
            nil, rtol, atol))
    end
    local n, bad = mism:numel(), mism:sum():item()
    local extra = ("Mismatched elements: %d / %d (%.1f%%)"):format(bad, n, 100 * bad / n)
    -- the greatest differences over the mismatched elements only (a NaN the greatest)
    local flat_abs = abs_diff:flatten():masked_fill(close:flatten(), 0)
    local flat_rel = (flat_abs / mag:flatten()):masked_fill(close:flatten(), 0)
    local av, ai = flat_abs:max(1)
    local rv, ri = flat_rel:max(1)
    av = av:item()
    if wide == "int64" then -- an integer (5.1 and LuaJIT read it as a float)
        av = ("%d"):format(av)
    end
    mismatch(mismatch_msg("Tensor-likes", extra, av, unravel(ai:item() - 1, sa), rv:item(),
        unravel(ri:item() - 1, sa), rtol, atol))
end

local function typename(v)
    if is_tensor(v) then
        return "a tensor"
    elseif is_complex(v) then
        return "a complex tensor"
    end
    return v == nil and "nil" or "a " .. type(v)
end

-- a table with only the keys 1..#t (an empty one included)
local is_list = args.is_list

local function key_str(k)
    return type(k) == "string" and ("%q"):format(k) or tostring(k)
end

local function sorted_keys(keys)
    table.sort(keys, function(x, y)
        if type(x) == type(y) and (type(x) == "number" or type(x) == "string") then
            return x < y
        end
        return type(x) < type(y)
    end)
    return keys
end

local compare, repr_any

-- lists entry by entry, tables key by key; path names the entry for the message
local function compare_tables(a, e, o, path)
    local la, le = is_list(a), is_list(e)
    if la and le then
        if #a ~= #e then
            mismatch(("The length of the sequences mismatch: %d != %d"):format(#a, #e))
        end
        for i = 1, #a do
            path[#path + 1] = "[" .. i .. "]"
            compare(a[i], e[i], o, path)
            path[#path] = nil
        end
        return
    end
    local missing, additional = {}, {}
    for k in pairs(e) do
        if a[k] == nil then
            missing[#missing + 1] = k
        end
    end
    for k in pairs(a) do
        if e[k] == nil then
            additional[#additional + 1] = k
        end
    end
    if #missing > 0 or #additional > 0 then
        local function list(keys)
            local s = {}
            for i, k in ipairs(sorted_keys(keys)) do
                s[i] = key_str(k)
            end
            return "{" .. table.concat(s, ", ") .. "}"
        end
        mismatch(("The keys of the tables do not match:\nMissing keys in the actual table: " ..
            "%s\nAdditional keys in the actual table: %s"):format(list(missing), list(additional)))
    end
    local keys = {}
    for k in pairs(a) do
        keys[#keys + 1] = k
    end
    for _, k in ipairs(sorted_keys(keys)) do
        path[#path + 1] = "[" .. key_str(k) .. "]"
        compare(a[k], e[k], o, path)
        path[#path] = nil
    end
end

compare = function(a, e, o, path)
    local ok, err = pcall(function()
        if tensor_like(a) and tensor_like(e) then
            compare_tensors(a, e, o)
        elseif type(a) == "number" and type(e) == "number" then
            compare_numbers(a, e, o)
        elseif type(a) == "boolean" and type(e) == "boolean" then
            if a ~= e then
                mismatch(("Booleans mismatch: %s is not %s"):format(tostring(a), tostring(e)))
            end
        elseif a == nil or e == nil then
            if a ~= e then
                mismatch(("None mismatch: %s is not %s"):format(repr_any(a), repr_any(e)))
            end
        elseif type(a) == "table" and type(e) == "table" and getmetatable(a) == nil and
            getmetatable(e) == nil then
            compare_tables(a, e, o, path)
        else
            raise(("tide: testing.assert_close: no comparison for %s and %s (tensors, numbers, " ..
                "booleans, nil, and lists and tables of them); convert one, e.g. " ..
                "tide.tensor(x)"):format(typename(a), typename(e)))
        end
    end)
    if not ok then
        if getmetatable(err) == Mismatch and not err.placed and #path > 0 then
            err.msg = err.msg .. "\n\nThe failure occurred for item " .. table.concat(path)
            err.placed = true
        end
        error(err, 0)
    end
end

repr_any = function(v)
    if v == nil then
        return "nil"
    end
    if type(v) == "number" and is_integer(v) then
        return ("%d"):format(v)
    end
    return type(v) == "number" and repr(v) or type(v) == "string" and ("%q"):format(v)
        or typename(v)
end

local CLOSE_OPTIONS = { "rtol", "atol", "equal_nan", "check_device", "check_dtype",
    "check_layout", "check_stride", "allow_subclasses", "msg" }

--- assert_close(actual, expected[, opts]): raises unless actual and expected are close
function M.assert_close(actual, expected, opts)
    opts = args.options("testing.assert_close", opts, CLOSE_OPTIONS, "{rtol = 1e-4, atol = 1e-6}")
    for _, k in ipairs({ "rtol", "atol" }) do
        local v = opts[k]
        if v ~= nil and (type(v) ~= "number" or v < 0 or v ~= v) then
            raise(("tide: testing.assert_close: %s = %s; expected a number >= 0"):format(k, tostring(v)))
        end
    end
    local msg = opts.msg
    if msg ~= nil and type(msg) ~= "string" and not args.is_callable(msg) then
        raise(("tide: testing.assert_close: msg must be a string or a function of the message, " ..
            "got %s"):format(typename(msg)))
    end
    local o = {
        rtol = opts.rtol,
        atol = opts.atol,
        equal_nan = opts.equal_nan == true,
        check_device = opts.check_device ~= false,
        check_dtype = opts.check_dtype ~= false,
        check_stride = opts.check_stride == true,
    }
    local ok, err = pcall(compare, actual, expected, o, {})
    if ok then
        return
    end
    if getmetatable(err) ~= Mismatch then
        error(err, 0)
    end
    if type(msg) == "string" then
        raise(msg)
    elseif msg ~= nil then
        raise(tostring(msg(err.msg)))
    end
    raise("tide: testing.assert_close: " .. err.msg)
end

-- make_tensor's defaults of low and high by kind of dtype
local DEFAULT_RANGE = { bool = { 0, 2 }, uint8 = { 0, 10 }, int = { -9, 10 }, float = { -9, 9 } }

local MAKE_OPTIONS = { "dtype", "device", "low", "high", "requires_grad", "noncontiguous",
    "exclude_zero" }

--- make_tensor(shape..., {dtype =, device =, ...}): a tensor of uniform draws in [low, high)
function M.make_tensor(...)
    local n = select("#", ...)
    local opts = n > 0 and select(n, ...) or nil
    if type(opts) ~= "table" or is_list(opts) then
        raise("tide: testing.make_tensor: dtype and device are required by name, as PyTorch's " ..
            "(make_tensor(2, 3, {dtype = \"float32\", device = \"cpu\"}))")
    end
    opts = args.options("testing.make_tensor", opts, MAKE_OPTIONS)
    local shape = { ... }
    shape[n] = nil
    if #shape == 1 and type(shape[1]) == "table" then
        shape = shape[1]
    end
    local dtype, device = opts.dtype, opts.device
    for _, k in ipairs({ "dtype", "device" }) do
        if opts[k] == nil then
            raise(("tide: testing.make_tensor: %s is required, as in PyTorch's make_tensor; " ..
                "pass {dtype = \"float32\", device = \"cpu\"}"):format(k))
        end
    end
    local complex = dtype == "complex64" or dtype == "complex128"
    local real = complex and (dtype == "complex64" and "float32" or "float64") or dtype
    local kind = real == "bool" and "bool" or real == "uint8" and "uint8" or
        (real == "int32" or real == "int64") and "int" or "float"
    local floating = kind == "float"
    if opts.requires_grad and not floating then
        raise(("tide: testing.make_tensor: requires_grad must be false for the integral dtype " ..
            "%s (as PyTorch's); draw a float dtype for gradients"):format(dtype))
    end
    local low, high = opts.low, opts.high
    -- the real parts drawn (a complex dtype's real and imaginary parts), then shaped
    local parts
    if kind == "bool" then
        parts = { tide.randint(0, 2, shape, { dtype = "bool", device = device }) }
    else
        local range = DEFAULT_RANGE[kind]
        low, high = low == nil and range[1] or low, high == nil and range[2] or high
        if low ~= low or high ~= high then
            raise("tide: testing.make_tensor: low or high is NaN; pass finite bounds")
        end
        if low > high then
            raise(("tide: testing.make_tensor: low (%s) must be at most high (%s)")
                :format(repr(low), repr(high)))
        end
        local info = floating and tide.finfo(real) or tide.iinfo(real)
        low = math.min(math.max(low, info.min), info.max)
        high = math.min(math.max(high, info.min), info.max)
        if floating then
            local function draw()
                local r = tide.rand(shape, { dtype = real, device = device })
                return r * high + (1 - r) * low
            end
            parts = complex and { draw(), draw() } or { draw() }
        else
            parts = { tide.randint(floor(low), math.ceil(high), shape, { dtype = real,
                device = device }) }
        end
    end
    if opts.exclude_zero then
        -- a zero becomes 1, or the dtype's smallest normal (both parts of a complex zero)
        local zero = parts[1]:eq(0)
        if parts[2] then
            zero = zero:logical_and(parts[2]:eq(0))
        end
        local fill = floating and tide.finfo(real).tiny or 1
        for i, p in ipairs(parts) do
            parts[i] = p:masked_fill(zero, fill)
        end
    end
    if opts.noncontiguous and parts[1]:numel() > 1 then
        -- every other element of a tensor twice as long in its last dim, as PyTorch's
        for i, p in ipairs(parts) do
            local idx = {}
            for d = 1, p:dim() - 1 do
                idx[d] = {}
            end
            idx[p:dim()] = { 1, -1, 2 }
            parts[i] = p:repeat_interleave(2, -1)[idx]
        end
    end
    local result = complex and tide.complex(parts[1], parts[2]) or parts[1]
    if floating and opts.requires_grad then
        result:requires_grad_(true)
    end
    return result
end

return M
