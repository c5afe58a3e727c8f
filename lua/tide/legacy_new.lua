-- tide.legacy_new: PyTorch's legacy constructor t:new(...), a tensor of t's dtype on t's device
-- (or the device of a last {device =}): t:new() an empty 1-D tensor of 0 elements,
-- t:new(size1, size2, ...) uninitialized (as tide.empty), t:new(data) a tensor of the nested
-- Lua table data in t's dtype, t:new(u) u itself when it has t's dtype and device (PyTorch's
-- alias: the same storage, no history). Loaded on first use (lua/tide/_lazy_ops.lua). The same
-- forms make PyTorch's legacy constructors tide.Tensor(...), tide.FloatTensor(...) ...
-- (M.construct; tide.creation_like names them).
local core = require("tide.core")
local args = require("tide.op_args")
local raise = require("tide.autograd.raise")
local compat = require("tide._compat")

local Tensor = core.Tensor

local M = { functions = {} }

local DEVICE = { "device" }
-- the metatable of t.shape / t:size() / tide.Size: PyTorch's torch.Size, which new takes as sizes
local SIZE_MT = getmetatable(core.zeros(0).shape)

-- true when v is an options table (a string key) rather than a list of data
local function is_options(v)
    if type(v) ~= "table" then
        return false
    end
    for k in pairs(v) do
        if type(k) == "string" then
            return true
        end
    end
    return false
end

-- the tensor of t:new's forms, a the arguments after t (packed), in dtype on device; op names
-- the call, and alias(u) checks a tensor given (it raises unless u may be returned)
local function build(op, dtype, device, a, alias)
    local o = { dtype = dtype, device = device }
    if a.n == 0 then
        return core.empty({ 0 }, o)
    end
    local first = a[1]
    if core.is_tensor(first) then
        args.no_extra(op, 2, compat.unpack(a, 2, a.n))
        alias(first)
        return first:detach()
    end
    if type(first) == "table" and getmetatable(first) == SIZE_MT then
        args.no_extra(op, 2, compat.unpack(a, 2, a.n)) -- torch.BoolTensor(x.size()): sizes
        a = compat.pack(compat.unpack(first))
        first = a[1]
        if a.n == 0 then
            return core.empty({}, o)
        end
    end
    if type(first) == "table" then
        args.no_extra(op, 2, compat.unpack(a, 2, a.n))
        return core.tensor(first, o) -- (0-d tensors among the data give their values)
    end
    local shape = {}
    for i = 1, a.n do
        local s = a[i]
        if type(s) ~= "number" then
            raise(("tide: %s: size %d must be an integer, got %s; %s takes sizes as " ..
                "integers, or one table of data"):format(op, i, core.is_tensor(s) and "a tensor"
                or type(s), op == "new" and "t:new" or op))
        end
        shape[i] = args.integer(op, s, "size " .. i)
        if shape[i] < 0 then
            raise(("tide: %s: size %d is %d; sizes must be >= 0"):format(op, i, shape[i]))
        end
    end
    return core.empty(shape, o)
end

-- the arguments (packed, trailing nils dropped) and the options table that ends them, if any
local function arguments(...)
    local a = compat.pack(...)
    while a.n > 0 and a[a.n] == nil do -- trailing nils are omitted arguments
        a.n = a.n - 1
    end
    local opts
    if a.n > 0 and is_options(a[a.n]) then
        opts, a.n = a[a.n], a.n - 1
    end
    return a, opts
end

function Tensor.new(t, ...)
    local op = "new"
    args.check(op, t)
    local a, opts = arguments(...)
    local device = args.options(op, opts, DEVICE, "{device = \"cpu\"}").device or t.device
    return build(op, t.dtype, device, a, function(u)
        if u.dtype ~= t.dtype or u.device ~= core.device(device) then
            raise(("tide: new: the tensor given is %s on %s, expected %s on %s (t's); convert " ..
                "it with :to(...), or use t:new_tensor(u) for a copy in t's dtype")
                :format(u.dtype, tostring(u.device), t.dtype, tostring(device)))
        end
    end)
end

-- tide.Tensor(...), tide.FloatTensor(...) ... (tide.creation_like names them): PyTorch's legacy
-- constructors, op the name, dtype its dtype: t:new's forms on the default device (or a last
-- {device =}); a tensor given must have that dtype (and that device, when one is given)
function M.construct(op, dtype, ...)
    local a, opts = arguments(...)
    local device = args.options(op, opts, DEVICE, "{device = \"cpu\"}").device
    return build(op, dtype, device, a, function(u)
        if u.dtype ~= dtype or (device ~= nil and u.device ~= core.device(device)) then
            raise(("tide: %s: the tensor given is %s on %s, expected %s%s; convert it with " ..
                ":to(...), or use tide.tensor(u, {dtype = \"%s\"}) for a copy")
                :format(op, u.dtype, tostring(u.device), dtype,
                device ~= nil and " on " .. tostring(core.device(device)) or "", dtype))
        end
    end)
end

M.names = {}
return M
