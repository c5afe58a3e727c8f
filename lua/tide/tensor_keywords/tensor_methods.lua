-- PyTorch's keyword names of the Tensor methods that make, convert, fill, index and copy
-- tensors (tide.tensor_keywords): x:new_full({2, 3}, {fill_value = 7}), x:to({dtype =
-- "float64"}), x:to("cpu", {non_blocking = true}), w:normal_({mean = 0, std = 0.02}),
-- p:uniform_({from = -0.1, to = 0.1}), x:index_put_({i}, v, {accumulate = true}),
-- x:unique({return_counts = true}), x:nonzero({as_tuple = true}), x:fill_diagonal_(0,
-- {wrap = true}), x:as_strided({size = {2, 2}, stride = {1, 2}}), x:clone({memory_format =
-- "contiguous_format"}).
--
-- The names are those PyTorch 1.13's argument parser takes, which are not always its
-- docstrings' (x.type_as(other=y), x.masked_scatter(mask, source=s), x.take(index=i),
-- x.copy_(other=s): src, its docs' name, is taken too). memory_format, PyTorch's name as a
-- string ("contiguous_format", "preserve_format", "channels_last", "channels_last_3d"), is
-- checked and changes nothing: tide's tensors keep their row-major layout, and the values are
-- PyTorch's. non_blocking is accepted (a boolean) where tide's op has no use for it.
local core = require("tide.core")
local raise = require("tide.autograd.raise")
local twice = require("tide.pytorch_args").twice

local is_tensor = core.is_tensor

local CREATE = { "dtype", "device", "requires_grad" }
local GENERATOR = { "generator" }
local MEMORY_FORMAT = { "memory_format" }

local memory_format = require("tide.op_args").memory_format

local function boolean(op, name, v)
    if v ~= nil and type(v) ~= "boolean" then
        raise(("tide: %s: %s must be true or false, got %s"):format(op, name, tostring(v)))
    end
    return v
end

local DTYPES = { float32 = true, float64 = true, float16 = true, bfloat16 = true, int32 = true,
    int64 = true, uint8 = true, bool = true }

local S = {}

-- ---- new tensors like self: its dtype and device unless given ----

for _, name in ipairs({ "new_zeros", "new_ones", "new_empty" }) do
    S[name] = { params = { "size" }, options = CREATE, functions = false }
end
S.new_full = { params = { "size", "fill_value" }, options = CREATE, functions = false }
S.new_tensor = { params = { "data" }, options = CREATE, functions = false }

-- ---- conversions ----

-- to(device=None, dtype=None, non_blocking=False, copy=False, *, memory_format=): PyTorch's
-- three forms, to(dtype, non_blocking, copy), to(device, dtype, non_blocking, copy) and
-- to(other, non_blocking, copy), in one: tide's to reads a device, a dtype or a tensor from its
-- first place; the dtype (second, after a device), non_blocking and copy go to tide's options
-- table, which checks the dtype. x:to(dev) alone is tide's own call (nmax)
S.to = { params = { "device", "dtype", "non_blocking", "copy" }, options = MEMORY_FORMAT,
    functions = false, nmax = 2,
    call = function(f, x, device, dtype, non_blocking, copy, rest)
        memory_format("to", x, rest and rest.memory_format)
        if type(dtype) == "boolean" then -- to(dtype, non_blocking, copy) or to(other, ...)
            if copy ~= nil and non_blocking ~= nil then
                raise("tide: to: after a dtype or a tensor, to takes non_blocking and copy, " ..
                    "got three more arguments; x:to(\"float64\", {non_blocking = true, " ..
                    "copy = true})")
            end
            dtype, non_blocking, copy = nil, dtype, non_blocking == nil and copy or non_blocking
        end
        if dtype ~= nil then
            if is_tensor(device) then
                raise("tide: to: a tensor gives both the device and the dtype; pass one of " ..
                    "them: x:to(y) or x:to(y.device, {dtype = ...})")
            elseif type(device) == "string" and DTYPES[device] then
                twice("to", "dtype", 2)
            end
        end
        local opts = { dtype = dtype, non_blocking = boolean("to", "non_blocking", non_blocking),
            copy = boolean("to", "copy", copy) }
        return f(x, device, opts)
    end }

-- cuda(device=None, non_blocking=False, *, memory_format=) and cpu(*, memory_format=)
S.cuda = { params = { "device", "non_blocking" }, options = MEMORY_FORMAT, functions = false,
    nmax = 2,
    call = function(f, x, device, non_blocking, rest)
        memory_format("cuda", x, rest and rest.memory_format)
        boolean("cuda", "non_blocking", non_blocking)
        return f(x, device)
    end }
S.cpu = { params = {}, options = MEMORY_FORMAT, functions = false,
    call = function(f, x, rest)
        memory_format("cpu", x, rest and rest.memory_format)
        return f(x)
    end }

-- type(dtype=None, non_blocking=False): non_blocking has no use in tide (tide.legacy)
S.type = { params = { "dtype", "non_blocking" }, functions = false }
S.type_as = { params = { "other" }, functions = false }

-- float(memory_format=torch.preserve_format), and the other casts
for _, name in ipairs({ "float", "double", "half", "bfloat16", "long", "int", "short", "char",
    "byte", "bool" }) do
    S[name] = { params = {}, options = MEMORY_FORMAT, functions = false,
        call = function(f, x, rest)
            memory_format(name, x, rest and rest.memory_format)
            return f(x)
        end }
end

-- clone(*, memory_format=torch.preserve_format), contiguous(memory_format=contiguous_format)
S.clone = { first = "input", params = {}, options = MEMORY_FORMAT,
    call = function(f, x, rest)
        memory_format("clone", x, rest and rest.memory_format)
        return f(x)
    end }
S.contiguous = { params = { "memory_format" }, functions = false, nmax = 1,
    call = function(f, x, fmt)
        memory_format("contiguous", x, fmt)
        return f(x)
    end }

-- is_contiguous(memory_format=torch.contiguous_format): channels_last(_3d) asks whether the
-- strides are that layout's, (C H W, 1, W C, C) for {N, C, H, W} (a size-1 dim's stride aside;
-- false for another rank), as PyTorch's; tide makes row-major tensors, so only a permuted view
-- can be. preserve_format asks as contiguous_format does (PyTorch 1.13's answer)
local CHANNELS_LAST_ORDER = { channels_last = { 2, 4, 3, 1 }, channels_last_3d = { 2, 5, 4, 3, 1 } }
S.is_contiguous = { params = { "memory_format" }, functions = false, nmax = 1,
    call = function(f, x, fmt)
        memory_format("is_contiguous", nil, fmt) -- the name only: another rank is false
        local order = CHANNELS_LAST_ORDER[fmt]
        if not order then
            return f(x)
        elseif x:dim() ~= #order then
            return false
        end
        local expected = 1 -- innermost first: C, then W, H (, D), then N
        for _, d in ipairs(order) do
            local n = x:size(d)
            if n ~= 1 and x:stride(d) ~= expected then
                return false
            end
            expected = expected * n
        end
        return true
    end }

-- ---- views and shapes ----

for _, name in ipairs({ "view_as", "reshape_as", "expand_as" }) do
    S[name] = { params = { "other" }, functions = false }
end
S.resize_ = { params = { "size" }, functions = false }
S.resize_as_ = { params = { "the_template" } }
S.equal = { first = "input", params = { "other" } }
S.is_same_size = { first = "input", params = { "other" } }
S.expand = { params = { "size" }, functions = false }
S.tile = { first = "input", params = { "dims" } }
S.reshape = { first = "input", params = { "shape" } }
-- view(size) and view(dtype) (the bits read as another dtype): x:view({dtype = "int32"})
S.view = { params = { "size" }, options = { "dtype" }, functions = false,
    call = function(f, x, size, rest)
        if rest and rest.dtype ~= nil then
            if size ~= nil then
                raise("tide: view: give sizes or a dtype, not both")
            end
            return f(x, rest.dtype)
        end
        return f(x, size)
    end }
S.as_strided = { first = "input", params = { "size", "stride", "storage_offset" } }
S.as_strided_ = { params = { "size", "stride", "storage_offset" }, functions = false }

-- ---- indexing ----

S.index_put = { params = { "indices", "values", "accumulate" }, functions = false }
S.index_put_ = { params = { "indices", "values", "accumulate" }, functions = false }
S.masked_select = { first = "input", params = { "mask" } }
S.masked_scatter = { first = "input", params = { "mask", "source" } }
S.masked_scatter_ = { params = { "mask", "source" }, functions = false }
S.put = { first = "input", params = { "index", "source", "accumulate" } }
S.put_ = { params = { "index", "source", "accumulate" }, functions = false }
S.take = { first = "input", params = { "index" } }
S.fill_diagonal_ = { params = { "fill_value", "wrap" }, functions = false }
S.renorm = { first = "input", params = { "p", "dim", "maxnorm" } }
S.renorm_ = { params = { "p", "dim", "maxnorm" }, functions = false }

-- nonzero(*, as_tuple=False): tide's options table
S.nonzero = { first = "input", params = {}, options = { "as_tuple" } }
-- unique(sorted=True, return_inverse=False, return_counts=False, dim=None) and
-- unique_consecutive(return_inverse=False, return_counts=False, dim=None): PyTorch's positional
-- parameters, which tide's functions read from one options table (x:unique(true, true) too)
S.unique = { first = "input", params = { "sorted", "return_inverse", "return_counts", "dim" },
    nmax = 1,
    call = function(f, x, sorted, inverse, counts, dim)
        return f(x, { sorted = sorted, return_inverse = inverse, return_counts = counts,
            dim = dim })
    end }
S.unique_consecutive = { first = "input", params = { "return_inverse", "return_counts", "dim" },
    nmax = 1,
    call = function(f, x, inverse, counts, dim)
        return f(x, { return_inverse = inverse, return_counts = counts, dim = dim })
    end }

-- ---- fills ----

S.fill_ = { params = { "value" }, functions = false }
-- copy_(src, non_blocking=False): PyTorch 1.13's parser names src other
S.copy_ = { params = { "src", "non_blocking" }, aliases = { other = "src" }, functions = false,
    nmax = 2,
    call = function(f, x, src, non_blocking)
        boolean("copy_", "non_blocking", non_blocking)
        return f(x, src)
    end }
S.uniform_ = { params = { "from", "to" }, options = GENERATOR, functions = false }
S.normal_ = { params = { "mean", "std" }, options = GENERATOR, functions = false }
S.random_ = { params = { "from", "to" }, options = GENERATOR, functions = false,
    needs = { from = "to" },
    needs_fix = "write x:random_({from = {v}, to = n}) for [{v}, n), or x:random_({v}) for [0, {v})" }
S.bernoulli_ = { params = { "p" }, options = GENERATOR, functions = false }
S.exponential_ = { params = { "lambd" }, options = GENERATOR, functions = false }
S.geometric_ = { params = { "p" }, options = GENERATOR, functions = false }
S.log_normal_ = { params = { "mean", "std" }, options = GENERATOR, functions = false }
S.cauchy_ = { params = { "median", "sigma" }, options = GENERATOR, functions = false }

-- ---- autograd ----

S.requires_grad_ = { params = { "requires_grad" }, functions = false }
S.register_hook = { params = { "hook" }, functions = false }

return S
