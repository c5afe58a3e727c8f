-- tide.aliases: PyTorch's other names for tide's ops, the same functions (method, in-place
-- twin and tide.X): numpy's arcsin ... arctan2, and absolute, negative, multiply, divide,
-- subtract, greater, greater_equal, less, less_equal, not_equal; the in-place twins of the
-- comparisons and logical ops (eq_ ... ge_, logical_and_ ...: the 0/1 result written into the
-- tensor in its own dtype, as PyTorch's); and PyTorch's small queries (ndimension,
-- is_same_size, is_signed, is_nonzero, get_device) and near-aliases (moveaxis, narrow_copy,
-- split_with_sizes, unsafe_split, unsafe_chunk, sum_to_size).
local core = require("tide.core")
local args = require("tide.op_args")
local autograd = require("tide.autograd")

local Tensor = core.Tensor
local compat = require("tide._compat")
local compat_unpack = compat.unpack
local check = args.check
local M = { functions = {}, names = {} }

local ALIASES = {
    arcsin = "asin", arccos = "acos", arctan = "atan", arcsinh = "asinh", arccosh = "acosh",
    arctanh = "atanh", arctan2 = "atan2", absolute = "abs", negative = "neg", multiply = "mul",
    divide = "div", subtract = "sub", greater = "gt", greater_equal = "ge", less = "lt",
    less_equal = "le", not_equal = "ne",
}
M.of = ALIASES -- alias -> the op's own name (its errors carry that one)

-- the 0/1 of a comparison of x (and other) in x's float dtype, recorded with a zero gradient
-- to both, as PyTorch's in-place comparisons: x:gt_(y) with y requiring grad leaves x in the
-- graph, not silently detached
local compared = require("tide._zero_grad_op")("compared")

-- x:op_(other): x takes op's 0/1 (or bool) result r in its own dtype, recorded with zero
-- gradients to x and other (tide.random_fills' bernoulli_ too)
local function written_back(x, r, other)
    r = r:to(x.dtype)
    if autograd.needs_record(x, other) and args.FLOAT[r.dtype] then
        r = compared(r, x, other)
    end
    return x:copy_(r)
end
M.written_back = written_back
for _, op in ipairs({ "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
    "logical_xor" }) do
    local name = op .. "_"
    Tensor[name] = function(x, other, ...)
        args.no_extra(name, 2, ...)
        check(name, x)
        return written_back(x, x[op](x, other), other)
    end
end
function Tensor.logical_not_(x, ...)
    args.no_extra("logical_not_", 1, ...)
    check("logical_not_", x)
    return written_back(x, x:logical_not())
end

-- PyTorch's small queries and near-aliases: ndimension (dim), moveaxis (movedim),
-- narrow_copy (a narrow's copy), is_same_size(other), is_signed() (false for uint8 and bool),
-- is_nonzero() (a one-element tensor's truth; more elements raise), get_device() (-1 on a CPU
-- device, the ordinal on another, as PyTorch's)
local raise = autograd.raise
function Tensor.ndimension(x, ...)
    args.no_extra("ndimension", 1, ...)
    check("ndimension", x)
    return x:dim()
end
function Tensor.moveaxis(x, source, destination, ...)
    args.no_extra("moveaxis", 3, ...)
    check("moveaxis", x)
    return x:movedim(source, destination)
end
function Tensor.narrow_copy(x, dim, start, length, ...)
    args.no_extra("narrow_copy", 4, ...)
    check("narrow_copy", x)
    return x:narrow(dim, start, length):clone()
end
function Tensor.is_same_size(x, other, ...)
    args.no_extra("is_same_size", 2, ...)
    check("is_same_size", x)
    check("is_same_size", other, 2)
    return args.same_shape(x:size(), other:size())
end
-- x["repeat"](x, ...) (repeat is a Lua keyword, so x:repeat(...) does not parse): PyTorch's
-- Tensor.repeat, tile with at least as many repeats as x has dims (sizes as integers or one
-- table / tide.Size); fewer raise, as PyTorch's does
Tensor["repeat"] = function(x, ...)
    check("repeat", x)
    local n = select("#", ...)
    while n > 0 and select(n, ...) == nil do
        n = n - 1 -- trailing nils are omitted arguments
    end
    local first = ...
    local reps = { ... }
    if n == 1 and type(first) == "table" and not core.is_tensor(first) then
        reps, n = {}, #first
        for i = 1, n do
            reps[i] = first[i]
        end
    end
    for i = 1, n do
        local r = reps[i]
        if type(r) ~= "number" or not compat.tointeger(r) then -- (inf and nan too)
            raise(("tide: repeat: repeat %d must be an integer, got %s; x[\"repeat\"](x, 2, 1) " ..
                "or x[\"repeat\"](x, {2, 1})"):format(i, type(r) == "number" and tostring(r) or
                (core.is_tensor(r) and "a tensor" or type(r))))
        elseif r < 0 then
            raise(("tide: repeat: repeat %d is %s; repeats must be >= 0"):format(i, tostring(r)))
        end
    end
    if n < x:dim() then
        raise(("tide: repeat: %d repeats for a tensor of %d dims; PyTorch's repeat takes at " ..
            "least one per dim (x:tile(...) pads leading 1s)"):format(n, x:dim()))
    end
    return x:tile(compat_unpack(reps, 1, n))
end

local UNSIGNED = { uint8 = true, bool = true }
function Tensor.is_signed(x, ...)
    args.no_extra("is_signed", 1, ...)
    check("is_signed", x)
    return not UNSIGNED[x.dtype]
end
function Tensor.is_nonzero(x, ...)
    args.no_extra("is_nonzero", 1, ...)
    check("is_nonzero", x)
    if x:numel() ~= 1 then
        raise(("tide: is_nonzero: needs a tensor of one element, got %d; use any() or all()")
            :format(x:numel()))
    end
    return x:item() ~= 0 and x:item() ~= false
end
function Tensor.get_device(x, ...)
    args.no_extra("get_device", 1, ...)
    check("get_device", x)
    local dev = x.device
    return dev.type == "cpu" and -1 or dev.index
end
-- tide.typename(v): PyTorch's torch.typename: a tensor's type string (t:type(),
-- "torch.FloatTensor"), anything else its Lua type name (PyTorch's gives the Python type's)
function M.functions.typename(v, ...)
    args.no_extra("typename", 1, ...)
    return core.is_tensor(v) and v:type() or type(v)
end
M.names[#M.names + 1] = "typename"
M.names[#M.names + 1] = "moveaxis"
M.names[#M.names + 1] = "narrow_copy"
M.names[#M.names + 1] = "is_nonzero"
M.names[#M.names + 1] = "is_same_size"
M.names[#M.names + 1] = "is_signed"
M.functions.moveaxis = Tensor.moveaxis
M.functions.narrow_copy = Tensor.narrow_copy
M.functions.is_nonzero = Tensor.is_nonzero
M.functions.is_same_size = Tensor.is_same_size
M.functions.is_signed = Tensor.is_signed

-- PyTorch's other names for the splits: split_with_sizes(sizes[, dim]) (split with a list,
-- only), unsafe_split and unsafe_chunk (PyTorch's views without its alias checks: tide's
-- split and chunk); errors under their own names
local function split_with_sizes(x, sizes, dim, ...)
    args.no_extra("split_with_sizes", 3, ...)
    check("split_with_sizes", x)
    if type(sizes) ~= "table" then
        raise(("tide: split_with_sizes: split_sizes must be a list of sizes such as {2, 4}, " ..
            "got %s; use split(size) for pieces of one size"):format(type(sizes)))
    end
    return args.as_op("split_with_sizes", "split", Tensor.split, x, sizes, dim)
end
local function unsafe_split(x, size, dim, ...)
    args.no_extra("unsafe_split", 3, ...)
    return args.as_op("unsafe_split", "split", Tensor.split, x, size, dim)
end
local function unsafe_chunk(x, chunks, dim, ...)
    args.no_extra("unsafe_chunk", 3, ...)
    return args.as_op("unsafe_chunk", "chunk", Tensor.chunk, x, chunks, dim)
end
Tensor.split_with_sizes, Tensor.unsafe_split, Tensor.unsafe_chunk = split_with_sizes,
    unsafe_split, unsafe_chunk
for name, f in pairs({ split_with_sizes = split_with_sizes, unsafe_split = unsafe_split,
    unsafe_chunk = unsafe_chunk }) do
    M.functions[name] = f
    M.names[#M.names + 1] = name
end

-- sum_to_size(sizes...): PyTorch's name of sum_to, sizes as integers or one list, which must
-- expand to the tensor's shape (each size the tensor's, aligned from the right, or 1)
function Tensor.sum_to_size(x, ...)
    check("sum_to_size", x)
    local a = { n = select("#", ...), ... }
    while a.n > 0 and a[a.n] == nil do
        a.n = a.n - 1
    end
    local sizes, n = a, a.n
    if type(a[1]) == "table" then
        args.no_extra("sum_to_size", 2, select(2, ...))
        sizes = args.check_list("sum_to_size", a[1], "sizes")
        n = #sizes
    end
    local shape, s = x:size(), {}
    for i = 1, n do
        s[i] = args.integer("sum_to_size", sizes[i], "size " .. i)
    end
    local fits = #s <= #shape
    for i = 1, #s do
        local have = shape[#shape - #s + i]
        fits = fits and (s[i] == have or s[i] == 1)
    end
    if not fits then
        raise(("tide: sum_to_size: size %s does not expand to the tensor's shape %s; give " ..
            "sizes that broadcast to it (each the tensor's, or 1, aligned from the right)")
            :format(args.shape_str(s), args.shape_str(shape)))
    end
    return x:sum_to(s)
end

-- tide._assert(condition, message): PyTorch's torch._assert (torchvision's models use it), Lua's
-- assert for a boolean or a one-element tensor: raises message (as Python's AssertionError) when
-- the condition is false, nil, zero or a false bool tensor; returns nothing otherwise
function M.functions._assert(condition, message, ...)
    args.no_extra("_assert", 3, ...)
    if message ~= nil and type(message) ~= "string" then
        raise(("tide: _assert: message must be a string, got a %s; write tide._assert(h == 32, " ..
            "\"Wrong image height!\")"):format(type(message)))
    end
    local ok = condition
    if core.is_tensor(condition) then
        if condition:numel() ~= 1 then
            raise(("tide: _assert: a condition tensor must have one element (its truth is " ..
                "ambiguous otherwise), got shape %s; reduce it first: tide._assert(x:all(), msg)")
                :format(args.shape_str(condition:size())))
        end
        ok = condition:item()
        ok = ok ~= 0 and ok ~= false
    elseif type(condition) == "number" then
        ok = condition ~= 0
    end
    if not ok then
        error(message or "assertion failed", 2)
    end
end
M.names[#M.names + 1] = "_assert"

-- PyTorch 1.13's attributes of a dense strided CPU/CUDA tensor that tide's tensors share:
-- is_xpu ... is_sparse_csr are false, as PyTorch's on every tensor tide can make (plain values
-- of core.Tensor, read as t.is_xpu; setting one raises, as PyTorch's read-only properties)
for _, k in ipairs({ "is_ipu", "is_mkldnn", "is_mps", "is_nested", "is_ort", "is_sparse_csr",
    "is_vulkan", "is_xpu" }) do
    Tensor[k] = false
end

-- PyTorch's methods of a real tensor with nothing to do: conj, conj_physical(_), resolve_conj
-- and resolve_neg return the tensor itself (a complex tensor has its own conj); is_conj,
-- is_neg, is_inference, is_distributed and has_names are false (tide has no lazy conjugate or
-- negation bits, no inference tensors: tide.inference_mode is no_grad, no named dims)
for _, name in ipairs({ "conj", "conj_physical", "conj_physical_", "resolve_conj",
    "resolve_neg" }) do
    Tensor[name] = function(x, ...)
        args.no_extra(name, 1, ...)
        check(name, x)
        return x
    end
end
for _, name in ipairs({ "is_conj", "is_neg", "is_inference", "is_distributed", "has_names" }) do
    Tensor[name] = function(x, ...)
        args.no_extra(name, 1, ...)
        check(name, x)
        return false
    end
end

-- adjoint(): PyTorch's x.adjoint(), the conjugate transpose of the last two dims (x.mH: tide's
-- real tensors conjugate to themselves); fewer than 2 dims raise as PyTorch's
function Tensor.adjoint(x, ...)
    args.no_extra("adjoint", 1, ...)
    check("adjoint", x)
    if x:dim() < 2 then
        raise(("tide: adjoint: only supported on matrices or batches of matrices, got a " ..
            "tensor of %d dims"):format(x:dim()))
    end
    return x:transpose(-2, -1)
end

-- angle() (tide.angle: pi below 0, 0 elsewhere, NaN kept, float32 for an integer tensor),
-- stft(...) (tide.stft(x, ...)), cfloat() and cdouble() (x:to("complex64" / "complex128"):
-- a complex tensor with imaginary 0), as PyTorch's methods
local function tide_fn(name)
    return function(x, ...)
        check(name, x)
        return require("tide")[name](x, ...)
    end
end -- (tide.stft checks its own arguments)
Tensor.stft = tide_fn("stft")
function Tensor.angle(x, ...)
    args.no_extra("angle", 1, ...)
    check("angle", x)
    return require("tide").angle(x)
end
function Tensor.cfloat(x, ...)
    args.no_extra("cfloat", 1, ...)
    check("cfloat", x)
    return x:to("complex64")
end
function Tensor.cdouble(x, ...)
    args.no_extra("cdouble", 1, ...)
    check("cdouble", x)
    return x:to("complex128")
end

-- is_set_to(other): PyTorch's test that both tensors are the same memory with the same
-- geometry (first element's address, dtype, device, sizes and strides; x:view(...) of the
-- same shape is, a clone or another offset is not)
function Tensor.is_set_to(x, other, ...)
    args.no_extra("is_set_to", 2, ...)
    check("is_set_to", x)
    check("is_set_to", other, 2)
    return rawequal(x, other) or (x:numel() > 0 and x:data_ptr() == other:data_ptr() and
        x.dtype == other.dtype and tostring(x.device) == tostring(other.device) and
        args.same_shape(x:size(), other:size()) and args.same_shape(x:stride(), other:stride()))
end

-- new_empty_strided(size, stride[, opts]): PyTorch's, a new tensor of x's dtype and device
-- (unless opts says) with those sizes and strides, over a fresh storage just large enough
function Tensor.new_empty_strided(x, size, stride, opts, ...)
    args.no_extra("new_empty_strided", 4, ...)
    check("new_empty_strided", x)
    for _, l in ipairs({ { size, "size" }, { stride, "stride" } }) do
        if type(l[1]) ~= "table" then
            raise(("tide: new_empty_strided: %s must be a list such as {2, 3}, got %s")
                :format(l[2], type(l[1])))
        end
        args.check_list("new_empty_strided", l[1], l[2])
    end
    if #size ~= #stride then
        raise(("tide: new_empty_strided: %d sizes and %d strides; give one stride per size")
            :format(#size, #stride))
    end
    local n = 1
    for i = 1, #size do
        if size[i] == 0 then
            n = 0
            break
        end
        n = n + (size[i] - 1) * stride[i]
    end
    if opts ~= nil then
        core._check_options(opts, "new_empty_strided", { "dtype", "device", "requires_grad" })
    end
    local o, grad = {}, false
    for k, v in pairs(opts or {}) do
        if k == "requires_grad" then grad = v else o[k] = v end
    end
    local y = x:new_empty({ n }, o):as_strided(size, stride, 0)
    return grad and y:requires_grad_() or y
end

-- unsafe_split_with_sizes: PyTorch's split_with_sizes without its alias checks
function Tensor.unsafe_split_with_sizes(x, sizes, dim, ...)
    args.no_extra("unsafe_split_with_sizes", 3, ...)
    return args.as_op("unsafe_split_with_sizes", "split_with_sizes", split_with_sizes, x, sizes,
        dim)
end

local sorted = {}
for alias in pairs(ALIASES) do
    sorted[#sorted + 1] = alias
end
table.sort(sorted)
for _, alias in ipairs(sorted) do
    local name = ALIASES[alias]
    Tensor[alias] = Tensor[name]
    Tensor[alias .. "_"] = Tensor[name .. "_"]
    M.functions[alias] = core[name] or Tensor[name]
    M.names[#M.names + 1] = alias
end

return M
