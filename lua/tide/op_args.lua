-- tide.op_args: argument checks shared by the ops written in Lua (reductions.lua, shapes.lua,
-- creation_like.lua); their errors name the op and carry the user's line (autograd.raise).
local core = require("tide.core")
local raise = require("tide.autograd.raise")
local compat = require("tide._compat")
local is_complex = require("tide.complex.tensor").is

local M = {}

local is_tensor = core.is_tensor

-- raises unless t is a tensor (argument pos of op, 1 = self)
function M.check(op, t, pos)
    if not is_tensor(t) then
        raise(("tide: %s: expected a tensor at argument #%d, got %s"):format(op, pos or 1,
            M.typename(t)))
    end
    return t
end

-- what v is, in an error: a tensor, a sparse one (a table: lua/tide/sparse/coo.lua), or its type
function M.typename(v)
    if is_tensor(v) then
        return "a tensor"
    end
    local mt = type(v) == "table" and getmetatable(v)
    if type(mt) == "table" and rawget(mt, "__name") == "SparseTensor" then
        return "a sparse tensor (t:to_dense() makes it dense)"
    end
    if is_complex(v) then
        return "a complex tensor (for the real ops: z.real, z.imag, tide.view_as_real(z))"
    end
    return type(v)
end

-- raises "tide: <op>: not differentiable ..." when autograd would record op on these arguments
-- (grad mode on, a tensor requiring grad): for ops PyTorch defines no gradient for, refused up
-- front rather than returned silently detached (the binding's rule for kernels, lua/record.c)
function M.not_differentiable(op, ...)
    if not core.is_grad_enabled() then
        return
    end
    for i = 1, select("#", ...) do
        local v = select(i, ...)
        if is_tensor(v) and v.requires_grad then
            raise(("tide: %s: not differentiable: argument #%d requires grad; call it under " ..
                "tide.no_grad or on detach()ed tensors"):format(op, i))
        end
    end
end

-- pcall(f, ...) whose error comes back as its message without the position
function M.attempt(f, ...)
    local r = compat.pack(pcall(f, ...))
    if r[1] then
        return true, compat.unpack(r, 2, r.n)
    end
    local msg = tostring(r[2])
    return false, msg:match("^.-:%d+: (tide: .*)$") or msg
end

-- raises msg, an error of the op `inner` (without its position), as op's own (`tide: inner:`
-- becomes `tide: op:`) at the user's line
function M.raise_as(op, inner, msg)
    local head = "tide: " .. inner .. ":"
    if msg:sub(1, #head) == head then
        msg = "tide: " .. op .. ":" .. msg:sub(#head + 1)
    end
    raise(msg)
end

-- f(...)'s results, an error of the op `inner` that f runs raised as op's own (M.raise_as): for
-- an op written as another (t:t_() as t:t())
function M.as_op(op, inner, f, ...)
    local r = compat.pack(M.attempt(f, ...))
    if not r[1] then
        M.raise_as(op, inner, r[2])
    end
    return compat.unpack(r, 2, r.n)
end

-- raises "tide: <op>: expected at most n arguments, got m (...)" when one of ..., the arguments
-- after the n a Lua method declares (self counted), is not nil: a fixed parameter list drops
-- extras silently, so methods end with `...` and call this (the binding's tl_max_args wording)
function M.no_extra(op, n, ...)
    local last = select("#", ...)
    while last > 0 and select(last, ...) == nil do
        last = last - 1
    end
    for k = 1, last do
        local v = select(k, ...)
        if v ~= nil then
            raise(("tide: %s: expected at most %d argument%s, got %d (argument #%d is a %s); " ..
                "remove it: %s takes no such argument or option"):format(op, n,
                n == 1 and "" or "s", n + last, n + k, is_tensor(v) and "tensor" or type(v), op))
        end
    end
end

-- whether table t has only the keys 1..#t (an empty table included): a list, not a table of
-- options or a mapping
function M.is_list(t)
    local n = #t
    for k in pairs(t) do
        if type(k) ~= "number" or k < 1 or k > n or k ~= math.floor(k) then
            return false
        end
    end
    return true
end

-- t, a table given where a list of sizes or dims goes, when it is a plain list: another key
-- means an options table or a typo ({bogus = 1} would read as {} and run silently)
function M.check_list(op, t, what)
    local n = #t
    for k in pairs(t) do
        if type(k) ~= "number" or k < 1 or k > n or k ~= math.floor(k) then
            raise(("tide: %s: %s must be a list such as {1, 2}, got a table with the key %s")
                :format(op, what, type(k) == "string" and ('"' .. k .. '"') or tostring(k)))
        end
    end
    return t
end

-- opts (nil: {}) with no key outside known (core._check_options); anything but a table raises,
-- showing example ("{dtype = \"float64\"}"), when given, as what to pass instead
function M.options(op, opts, known, example)
    if opts ~= nil and type(opts) ~= "table" then
        raise(("tide: %s: options must be a table%s, got %s"):format(op,
            example and " such as " .. example or "", type(opts)))
    end
    opts = opts or {}
    core._check_options(opts, op, known)
    return opts
end

-- opts[key] (default when nil): an integer >= min, else "tide: <op>: <key> = <v>; expected an
-- integer >= <min>". An integral float (64.0, a ported Python computation's value) is that
-- integer.
function M.int_option(op, opts, key, default, min)
    local v = opts[key]
    if v == nil then
        return default
    end
    local i = type(v) == "number" and compat.tointeger(v) or nil -- not a string ("3")
    if i == nil or i < min then
        raise(("tide: %s: %s = %s; expected an integer >= %d"):format(op, key, tostring(v), min))
    end
    return i
end

-- v as an integer: an integer, or a float with an exact integer value (2.0); anything else
-- (2.5, inf, nan, 1e308 beyond the integers, a string) raises naming the value
local function integer(op, v, what)
    if compat.is_integer(v) then
        return v
    end
    local i = type(v) == "number" and v == math.floor(v) and compat.tointeger(v)
    if not i then
        local shown = type(v)
        if type(v) == "number" then
            shown = v ~= v and "nan" or tostring(v)
        end
        raise(("tide: %s: %s must be an integer, got %s"):format(op, what, shown))
    end
    return i
end
M.integer = integer

-- "1.5 GB": n bytes for a message
local function bytes_str(n)
    local units, i = { "bytes", "KB", "MB", "GB", "TB", "PB", "EB" }, 1
    while n >= 1024 and i < #units do
        n, i = n / 1024, i + 1
    end
    return i == 1 and ("%d bytes"):format(n) or ("%.1f %s"):format(n, units[i])
end

-- f's number of parameters and whether it ends in `...`: debug.getinfo's (Lua 5.2+, LuaJIT), or
-- read off string.dump's header on Lua 5.1; nil when neither is at hand. Kept per function
-- (module constructors ask on every call)
local ARITY = setmetatable({}, { __mode = "k" })
local function read_arity(f)
    local info = debug and debug.getinfo and debug.getinfo(f, "u")
    if info and info.nparams then
        return info.nparams, info.isvararg
    end
    local ok, code = pcall(string.dump, f)
    if not ok or code:sub(1, 5) ~= "\27Lua\81" then
        return nil
    end
    local little, int_size, size_t = code:byte(7) == 1, code:byte(8), code:byte(9)
    local n = 0 -- the length of the source name, after the 12-byte header
    for i = size_t, 1, -1 do
        n = n * 256 + code:byte(little and 12 + i or 12 + size_t - i + 1)
    end
    local nups = 12 + size_t + n + 2 * int_size + 1 -- after linedefined and lastlinedefined
    return code:byte(nups + 1), code:byte(nups + 2) % 4 >= 2
end

function M.arity(f)
    local a = ARITY[f]
    if a == nil then
        local n, vararg = read_arity(f)
        a = { n, vararg }
        ARITY[f] = a
    end
    return a[1], a[2]
end

-- raises unless n items of bytes_each bytes fit the memory budget (what tide.memory_limit()
-- leaves, or the machine's memory when no limit is set: tide_ctx_memory_budget): a list, a loop or an output sized by a number the
-- user gave is checked against it before anything is built, so the call fails at once instead
-- of eating the machine. what names the items, fix says what to do instead.
function M.check_budget(op, n, bytes_each, what, fix)
    local budget = core._memory_budget()
    if n > budget / bytes_each then
        raise(("tide: %s: %s would take %s, more than the %s this process may use (%s); %s")
            :format(op, what, bytes_str(n * bytes_each), bytes_str(budget),
                core.memory_limit() > 0 and "what tide.memory_limit() leaves"
                or "the machine's memory", fix))
    end
end

-- two shapes (lists of sizes) are equal; shape_str writes one for a message: {2, 3}
function M.same_shape(a, b)
    if #a ~= #b then
        return false
    end
    for i = 1, #a do
        if a[i] ~= b[i] then
            return false
        end
    end
    return true
end

function M.shape_str(s)
    return "{" .. table.concat(s, ", ") .. "}"
end

-- what a strict state-dict load found wrong: "missing keys: a, b; unexpected keys: c" (each
-- part only when it has keys), nil when both lists are empty
function M.keys_mismatch(missing, unexpected)
    local parts = {}
    if #missing > 0 then
        parts[#parts + 1] = "missing keys: " .. table.concat(missing, ", ")
    end
    if #unexpected > 0 then
        parts[#parts + 1] = "unexpected keys: " .. table.concat(unexpected, ", ")
    end
    return parts[1] and table.concat(parts, "; ")
end

-- the 1-based dim d of x as a positive index (negative counts from the end); a 0-dim tensor
-- takes 1 and -1, as PyTorch's 0 and -1
function M.dim_of(op, x, d, extra)
    d = integer(op, d, "dim")
    local n = x:dim() + (extra or 0)
    local m = math.max(n, 1)
    if d >= 1 and d <= m then
        return d
    elseif d <= -1 and d >= -m then
        return m + d + 1
    end
    if n == 0 then
        raise(("tide: %s: dim %d is out of range for a tensor with no dims; use 1 or -1"):format(op, d))
    end
    raise(("tide: %s: dim %d is out of range for a tensor with %d dims; use 1..%d or -%d..-1 " ..
        "(dims are 1-based)"):format(op, d, n, n, n))
end

-- v rounded to the nearest float32 (through a float32 tensor where string.pack is missing:
-- 5.1, LuaJIT)
M.fround32 = require("tide._compat").fround32 or function(v)
    return core.full({ 1 }, v, { dtype = "float32" }):item()
end

local FLOAT = { float32 = true, float64 = true, float16 = true, bfloat16 = true }
M.FLOAT = FLOAT

-- float16 and bfloat16 composites run in float32 and round once at the end, as PyTorch computes
-- them (its "opmath" type): a chain of half ops would round at every step (a layer norm's
-- variance, a cumsum's running total). fn(x, ...) for other dtypes; autograd sees the two
-- conversions as recorded ops.
local HALF = { float16 = true, bfloat16 = true }
M.HALF = HALF
function M.in_float(fn)
    return function(x, ...)
        if type(x) == "userdata" and HALF[x.dtype] then -- a tensor (the op checks the rest)
            return fn(x:float(), ...):to(x.dtype)
        end
        return fn(x, ...)
    end
end

-- raises for an integer or bool x: the op is defined on floating-point values only (as PyTorch)
function M.float_input(op, x)
    if not FLOAT[x.dtype] then
        raise(("tide: %s: needs a floating-point tensor, got %s; convert with :to(\"float32\")")
            :format(op, x.dtype))
    end
end

-- raises unless every element of the tensor p (argument `what` of op) is a probability in
-- [0, 1] (NaN is not), as PyTorch's CPU kernels check: one reduction and one value read back
function M.probabilities(op, what, p)
    local pd = p:detach()
    local bad = pd:lt(0):logical_or(pd:gt(1)):logical_or(pd:ne(pd))
    if bad:any():item() then
        raise(("tide: %s: %s must hold probabilities in [0, 1], got %s; clamp it first " ..
            "(p:clamp(0, 1)) or check how it was computed"):format(op, what,
            tostring(pd:masked_select(bad)[1]:item())))
    end
end

-- v, or a 0-d tensor's value (a number or a boolean): where PyTorch takes a Python number it
-- takes a 0-d tensor too (x:add(u, {alpha = t0}), full(shape, t0)); other values come back as
-- they are, for the caller's own check
function M.scalar(v)
    if is_tensor(v) and v:dim() == 0 then
        return v:item()
    end
    return v
end

--- view_place(x): the elements x views, as a string (device, dtype, storage address, sizes,
--- strides): two tensors of one place are one tensor to whoever keeps them (tied weights, which
--- a state_dict gives as a view under each name); nil for a tensor without storage to name
function M.view_place(x)
    local ok, key = pcall(function()
        return table.concat({ tostring(x.device), x.dtype, tostring(x:data_ptr()),
            table.concat(x:size(), "x"), table.concat(x:stride(), "x") }, "|")
    end)
    return ok and key or nil
end

-- PyTorch's memory formats, by name: the rank each needs (nil: any)
local FORMATS = { preserve_format = false, contiguous_format = false, channels_last = 4,
    channels_last_3d = 5 }

-- memory_format checked as PyTorch checks it (a known name; channels_last on a 4-D tensor,
-- channels_last_3d on a 5-D one; x nil: the name only); nothing else to do, tide's layout is
-- row-major (the tensor methods' memory_format, the *_like functions')
function M.memory_format(op, x, fmt)
    if fmt == nil then
        return
    end
    local rank = FORMATS[fmt]
    if rank == nil then
        raise(("tide: %s: memory_format must be \"contiguous_format\", \"preserve_format\", " ..
            "\"channels_last\" or \"channels_last_3d\", got %s"):format(op,
            type(fmt) == "string" and ('"' .. fmt .. '"') or tostring(fmt)))
    end
    if rank and is_tensor(x) and x:dim() ~= rank then
        raise(("tide: %s: memory_format \"%s\" needs a %d-D tensor, got %d-D (as PyTorch's); " ..
            "leave it out or pass \"contiguous_format\""):format(op, fmt, rank, x:dim()))
    end
end

-- v can be called: a function, or a table or userdata whose metatable has __call (a module, a
-- class, a functools.partial); tide.compile's, tide.jit's and tide.compiler's argument check
function M.is_callable(v)
    if type(v) == "function" then
        return true
    end
    local mt = getmetatable(v)
    return type(mt) == "table" and mt.__call ~= nil
end

return M
