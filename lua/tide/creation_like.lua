-- tide.creation_like: the creation functions of issue 13 written with existing ones (docs/API.md,
-- "The wider surface"): zeros_like, ones_like, full_like, empty_like, rand_like, randn_like,
-- linspace, randint, bernoulli (also a method); tide.tensor's and tide.full's tensor arguments
-- (PyTorch's 0-d tensors as values; the binding calls these); and PyTorch's legacy
-- constructors tide.Tensor(...) (the method table called), tide.FloatTensor, tide.LongTensor
-- ... (tide.legacy_new builds them).
local core = require("tide.core")
local Complex = require("tide.complex.tensor")
local autograd = require("tide.autograd")
local raise = autograd.raise
local args = require("tide.op_args")
local compat = require("tide._compat")
local is_complex = require("tide.complex.tensor").is
local idiv = compat.idiv
local generators = require("tide.generator_object")

local check, integer = args.check, args.integer

local M = { functions = {} }
local F = M.functions
local Tensor = core.Tensor

local fround32 = args.fround32

local OPTIONS = { "dtype", "device", "requires_grad" }
local LIKE_OPTIONS = { "dtype", "device", "requires_grad", "memory_format" }

-- a complex t (lua/tide/complex/tensor.lua, a Lua class), or a complex dtype asked for: the
-- complex factory makes it (tide.zeros_like(z) is complex, as PyTorch's)
local function complex_like(op, t, ...)
    if is_complex(t) then
        return require("tide.complex").factory(op, t, ...)
    end
end

-- the options of a *_like call: t's dtype and device unless opts says otherwise (memory_format
-- checked, as PyTorch's; the result is row-major whatever it says)
local function like_opts(op, t, opts)
    check(op, t)
    opts = args.options(op, opts, LIKE_OPTIONS, "{dtype = \"float64\"}")
    args.memory_format(op, t, opts.memory_format)
    return { dtype = opts.dtype or t.dtype, device = opts.device or t.device,
        requires_grad = opts.requires_grad }
end

local function like(op, make)
    F[op] = function(t, opts)
        local z = complex_like(op, t, opts)
        if z then
            return z
        end
        local o = like_opts(op, t, opts) -- first: it checks t is a tensor
        return make(t:size(), o)
    end
end

like("zeros_like", core.zeros)
like("ones_like", core.ones)
like("empty_like", core.empty)
local function random_like(op, make)
    F[op] = function(t, opts)
        local z = complex_like(op, t, opts)
        if z then
            return z
        end
        local o = like_opts(op, t, opts)
        if type(o.dtype) == "string" and o.dtype:sub(1, 7) == "complex" then -- the complex factory
            return make(t:size(), o)
        end
        if not args.FLOAT[o.dtype] then
            raise(("tide: %s: random values need a floating-point dtype, got %s; pass " ..
                "{dtype = \"float32\"}"):format(op, o.dtype))
        end
        return make(t:size(), o)
    end
end

random_like("rand_like", core.rand)
random_like("randn_like", core.randn)

function F.full_like(t, value, opts)
    local z = complex_like("full_like", t, value, opts)
    if z then
        return z
    end
    local o = like_opts("full_like", t, opts)
    value = args.scalar(value)
    if type(value) ~= "number" and type(value) ~= "boolean" then
        raise(("tide: full_like: the fill value must be a number, got %s"):format(type(value)))
    end
    return core.full(t:size(), value, o)
end

local function create_opts(op, opts, default_dtype, known)
    opts = args.options(op, opts, known or OPTIONS, "{dtype = \"float64\"}")
    return { dtype = opts.dtype or default_dtype, device = opts.device,
        requires_grad = opts.requires_grad, generator = opts.generator }
end

-- linspace(a, b, n[, opts]): n points from a to b; the first half counts up from a and the
-- second down from b, as PyTorch's kernel, so both ends are exact
function F.linspace(a, b, n, opts)
    if type(a) ~= "number" or type(b) ~= "number" then
        raise("tide: linspace: start and end must be numbers, as in tide.linspace(0, 1, 5)")
    end
    n = integer("linspace", n, "steps")
    if n < 0 then
        raise(("tide: linspace: steps must be >= 0, got %d"):format(n))
    end
    local o = create_opts("linspace", opts, core.get_default_dtype())
    local rg = o.requires_grad
    o.requires_grad = nil
    if n <= 1 then
        local r = n == 0 and core.empty({ 0 }, o) or core.full({ 1 }, a, o)
        return rg and r:requires_grad_(true) or r
    end
    -- in the result's float dtype, as PyTorch's kernel (float32 ends and step are rounded first)
    local dt = args.FLOAT[o.dtype] and o.dtype or "float64"
    if dt == "float32" then
        a, b = fround32(a), fround32(b)
    end
    -- (end - start) / (steps - 1) with each operation rounded to the dtype, as PyTorch's
    -- float32 kernel does (rounding the double quotient once differs in the last bit)
    local step
    if dt == "float32" then
        step = fround32(fround32(b - a) / (n - 1))
    else
        step = (b - a) / (n - 1)
    end
    -- each point in float64, rounded once: PyTorch's kernel contracts start + step * i into one
    -- fused multiply-add, which rounds once
    -- (in place on the two halves of one arange: the same roundings as i * step + a and
    -- (i - (n - 1)) * step + b, in a third of the passes and allocations)
    local r, h = core.arange(0, n, { dtype = "float64", device = o.device }), idiv(n, 2)
    r:narrow(1, 1, h):mul_(step):add_(a)
    r:narrow(1, h + 1, n - h):sub_(n - 1):mul_(step):add_(b)
    r = r:to(o.dtype)
    return rg and r:requires_grad_(true) or r
end

local RANDINT_OPTIONS = { "dtype", "device", "requires_grad", "generator" }

-- randint([low,] high, shape[, opts]): uniform integers in [low, high), int64 by default; from
-- opts.generator's stream when given (a tide.Generator); PyTorch's names: tide.tensor_keywords
function F.randint(low, high, shape, opts)
    if type(high) == "table" then
        low, high, shape, opts = 0, low, high, shape
    end
    low, high = integer("randint", low, "low"), integer("randint", high, "high")
    if high <= low then
        raise(("tide: randint: high (%d) must be greater than low (%d); high is excluded")
            :format(high, low))
    end
    if type(shape) ~= "table" then
        raise(("tide: randint: shape must be a list such as {2, 3}, got %s"):format(type(shape)))
    end
    local o = create_opts("randint", opts, "int64", RANDINT_OPTIONS)
    if o.requires_grad then
        raise("tide: randint: integer tensors cannot require grad; drop requires_grad")
    end
    -- the whole draw in the generator's run: a dtype refused at the end moves no generator
    return generators.run("randint", o.generator, o.device or core.get_default_device(),
        function()
            local u = core.rand(shape, { dtype = "float64", device = o.device })
            -- in place: the same roundings without three temporaries of 8 bytes an element
            return u:mul_(high - low):floor_():add_(low):to(o.dtype)
        end)
end

-- bernoulli(p[, {generator =}]): 1 with probability p at each element (p a tensor of
-- probabilities, or a number with a tensor giving the shape as in x:bernoulli(0.3)), in p's (or
-- x's) dtype
function F.bernoulli(x, p, opts, ...)
    args.no_extra("bernoulli", 3, ...)
    check("bernoulli", x)
    p, opts = generators.take_options(1, p, opts)
    local g = generators.option("bernoulli", opts)
    if not args.FLOAT[x.dtype] then
        raise(("tide: bernoulli: needs a floating-point tensor, got %s; convert with " ..
            ":to(\"float32\")"):format(x.dtype))
    end
    -- p checked before the draw: a refused call moves no generator
    if p ~= nil and type(p) ~= "number" then
        raise(("tide: bernoulli: p must be a number, got %s"):format(type(p)))
    elseif p ~= nil and not (p >= 0 and p <= 1) then
        raise(("tide: bernoulli: p must be in [0, 1], got %s"):format(p))
    elseif p == nil then
        args.probabilities("bernoulli", "the input", x)
    end
    local r = autograd.no_grad(function()
        local u = generators.run("bernoulli", g, x.device, core.rand, x:size(),
            { dtype = x.dtype, device = x.device })
        return u:lt(p == nil and x or p):to(x.dtype)
    end)
    -- a draw's gradient is zero (PyTorch's formula): recorded, not a silently detached result
    return x.requires_grad and r + x * 0 or r
end
core.Tensor.bernoulli = F.bernoulli

-- t:new_zeros(shape[, opts]), new_ones, new_empty, new_full(shape, value[, opts]),
-- new_tensor(data[, opts]): a new tensor with t's dtype and device unless opts says otherwise
-- (PyTorch's Tensor.new_*: code that makes its buffers where its input lives). The shape is one
-- table or integers, as for tide.zeros.
local function shape_and_opts(op, ...)
    local a = { n = select("#", ...), ... }
    while a.n > 0 and a[a.n] == nil do -- trailing nils are omitted arguments
        a.n = a.n - 1
    end
    if type(a[1]) == "table" then
        if a.n > 2 then
            args.no_extra(op, 3, select(3, ...)) -- t, shape, opts
        end
        return args.check_list(op, a[1], "the shape"), a[2]
    end
    local opts
    if a.n > 0 and type(a[a.n]) == "table" then
        opts, a.n = a[a.n], a.n - 1
    end
    local shape = {}
    for i = 1, a.n do
        if a[i] == nil then
            integer(op, nil, "size " .. i) -- raises: a nil between sizes
        end
        shape[i] = a[i]
    end
    return shape, opts
end

local function new_like(op, make)
    Tensor["new_" .. op] = function(t, ...)
        check("new_" .. op, t)
        local shape, opts = shape_and_opts("new_" .. op, ...)
        return make(shape, like_opts("new_" .. op, t, opts))
    end
end
new_like("zeros", core.zeros)
new_like("ones", core.ones)
new_like("empty", core.empty)

function Tensor.new_full(t, shape, value, opts, ...)
    args.no_extra("new_full", 4, ...)
    local o = like_opts("new_full", t, opts)
    if type(shape) ~= "table" then
        raise("tide: new_full: the shape must be a table such as {2, 3}, got " .. type(shape))
    end
    value = args.scalar(value)
    if type(value) ~= "number" and type(value) ~= "boolean" then
        raise(("tide: new_full: the fill value must be a number, got %s"):format(type(value)))
    end
    return core.full(shape, value, o)
end

-- new_tensor(data[, opts]): a copy of data (a Lua table, a number or a tensor), detached
function Tensor.new_tensor(t, data, opts, ...)
    args.no_extra("new_tensor", 3, ...)
    local o = like_opts("new_tensor", t, opts)
    if core.is_tensor(data) then
        local r = data:detach():to(o.device, { dtype = o.dtype, copy = true })
        return o.requires_grad and r:requires_grad_(true) or r
    end
    return core.tensor(data, o)
end

-- ---- tide.tensor's and tide.full's tensors (lua/creation.c calls these) ---------------------

-- tide.tensor(data[, opts]) where data holds tensors: PyTorch 1.13's one-element tensors among
-- data's elements (torch.tensor([R]), torch.tensor([t1, t2]) of 0-d tensors), each taken as its
-- value; without a dtype, the result's is PyTorch's inference: the tensors' dtypes and the
-- numbers' own (int64, the default float dtype, bool) promoted together. A tensor as data is
-- copied, detached (PyTorch's torch.tensor(t))
local function promote(a, b)
    return a and require("tide.dtype_queries").functions.promote_types(a, b) or b
end

-- the dtype a leaf of data (a number, a boolean or a tensor) infers to
local function leaf_dtype(v)
    if core.is_tensor(v) then
        if v:numel() ~= 1 then
            raise(("tide: tensor: an element is a tensor of shape %s; only one-element tensors " ..
                "convert to numbers: combine tensors with tide.stack or tide.cat")
                :format(args.shape_str(v:size())))
        end
        return v.dtype
    elseif type(v) == "boolean" then
        return "bool"
    elseif type(v) == "number" then
        return compat.is_integer(v) and "int64" or core.get_default_dtype()
    end
end

-- the dtype data's leaves promote to (nil when none)
local function inferred(v, dt)
    if type(v) == "table" then
        for i = 1, #v do
            dt = inferred(v[i], dt)
        end
        return dt
    end
    local d = leaf_dtype(v)
    return d and promote(dt, d) or dt
end

-- data with each tensor replaced by its value, a boolean for a bool dtype, a number otherwise
local function values(v, bool)
    if core.is_tensor(v) then
        local x = v:item()
        if bool and type(x) == "number" then
            return x ~= 0
        elseif not bool and type(x) == "boolean" then
            return x and 1 or 0
        end
        return x
    elseif type(v) == "table" then
        local out = {}
        for i = 1, #v do
            out[i] = values(v[i], bool)
        end
        return out
    end
    return v
end

local TENSOR_OPTIONS = { "dtype", "device", "requires_grad" }

function M.tensor_of_tensors(data, opts)
    if core.is_tensor(data) or Complex.is(data) then
        -- PyTorch's UserWarning for torch.tensor(sourceTensor) (it copies and detaches, as here)
        require("tide._warn").once("tensor_of_tensor", "To copy construct from a tensor, it is " ..
            "recommended to use t:clone():detach() or t:clone():detach():requires_grad_(true), " ..
            "rather than tide.tensor(t)")
    end
    if Complex.is(data) then -- a copy too, complex (a table: not a nested list of numbers)
        local o = args.options("tensor", opts, TENSOR_OPTIONS, "{dtype = \"complex128\"}")
        local r = data:detach():clone()
        r = o.dtype and r:to(o.dtype) or r
        r = o.device and r:to(o.device) or r
        return o.requires_grad and r:requires_grad_(true) or r
    end
    if core.is_tensor(data) then
        local o = args.options("tensor", opts, TENSOR_OPTIONS, "{dtype = \"float64\"}")
        local r = data:detach():to(o.device or data.device, { dtype = o.dtype or data.dtype,
            copy = true })
        return o.requires_grad and r:requires_grad_(true) or r
    end
    local o = {}
    for k, v in pairs(args.options("tensor", opts, TENSOR_OPTIONS, "{dtype = \"float64\"}")) do
        o[k] = v
    end
    o.dtype = o.dtype or inferred(data)
    return core.tensor(values(data, o.dtype == "bool"), o)
end

-- tide.full(shape, value[, opts]) and full(size1, ..., value[, opts]) given a tensor: a 0-d
-- one (the value, or a size) is its value, as PyTorch's
function M.full_of_tensors(...)
    local a = compat.pack(...)
    for i = 1, a.n do
        if core.is_tensor(a[i]) then
            if a[i]:dim() ~= 0 then
                raise(("tide: full: the fill value must be a number, a boolean or a 0-d " ..
                    "tensor, got a tensor of shape %s"):format(args.shape_str(a[i]:size())))
            end
            a[i] = a[i]:item()
        end
    end
    return core.full(compat.unpack(a, 1, a.n))
end

-- ---- legacy constructors --------------------------------------------------------------------

-- tide.Tensor(...) (the default float dtype), tide.FloatTensor(...), tide.LongTensor(...) ...:
-- PyTorch's legacy constructors, t:new's forms (tide.legacy_new): sizes (uninitialized, as
-- tide.empty), a nested table of data, a tensor of that dtype (itself, detached), nothing (0
-- elements), and a last {device =}
local LEGACY = {
    FloatTensor = "float32", DoubleTensor = "float64", HalfTensor = "float16",
    BFloat16Tensor = "bfloat16", IntTensor = "int32", LongTensor = "int64", ByteTensor = "uint8",
    BoolTensor = "bool",
}
local legacy_names = {}
for name, dtype in pairs(LEGACY) do
    F[name] = function(...)
        return require("tide.legacy_new").construct(name, dtype, ...)
    end
    legacy_names[#legacy_names + 1] = name
end
table.sort(legacy_names)

-- tide.cuda.FloatTensor(...), tide.cuda.LongTensor(...) ...: torch.cuda's legacy constructors,
-- the same forms on "cuda" (the scripts' `Tensor = torch.cuda.FloatTensor if cuda else
-- torch.FloatTensor`); without CUDA they raise, as PyTorch's do
local cuda_names = core.cuda
if type(cuda_names) == "table" then
    for name, dtype in pairs(LEGACY) do
        if cuda_names[name] == nil then
            cuda_names[name] = function(...)
                local n = select("#", ...)
                local last = n > 0 and select(n, ...) or nil
                local given = type(last) == "table" and not core.is_tensor(last) and last.device
                if not cuda_names.is_available() then
                    raise(("tide: cuda.%s: CUDA is not available here " ..
                        "(tide.cuda.is_available() is false); use tide.%s(...) for the cpu, as " ..
                        "in `local Tensor = cuda and tide.cuda.%s or tide.%s`"):format(name, name,
                        name, name))
                end
                if given ~= nil and not tostring(core.device(given)):match("^cuda") then
                    raise(("tide: cuda.%s: device %s is not a cuda device; use tide.%s(..., " ..
                        "{device = %q}) for it"):format(name, tostring(given), name,
                        tostring(given)))
                end
                local a = compat.pack(...)
                local opts = false
                if type(last) == "table" and not core.is_tensor(last) then
                    for k in pairs(last) do
                        opts = opts or type(k) == "string"
                    end
                end
                if not opts then
                    a.n = a.n + 1
                    a[a.n] = { device = "cuda" }
                elseif given == nil then
                    local o = {}
                    for k, v in pairs(last) do
                        o[k] = v
                    end
                    o.device = "cuda"
                    a[a.n] = o
                end
                return require("tide.legacy_new").construct("cuda." .. name, dtype,
                    compat.unpack(a, 1, a.n))
            end
        end
    end
end

-- tide.Tensor stays the method table (Tensor.foo = ..., tide.Tensor.add): calling it constructs
setmetatable(Tensor, { __call = function(_, ...)
    return require("tide.legacy_new").construct("Tensor", core.get_default_dtype(), ...)
end })

M.names = { "zeros_like", "ones_like", "full_like", "empty_like", "rand_like", "randn_like",
    "linspace", "randint", "bernoulli" }
for _, name in ipairs(legacy_names) do
    M.names[#M.names + 1] = name
end
return M
