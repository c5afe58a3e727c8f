-- tide.legacy: the tensor API of Torch7 and PyTorch's legacy one, for ported scripts:
--   t:apply_(fn), t:map_(u, fn), t:map2_(u, v, fn): a Lua function over each element, in place
--     (Torch7's apply, map and map2, also under those names): t[i] = fn(t[i][, u[i][, v[i]]]),
--     u and v broadcast to t; a nil result keeps the element (Torch7's rule). They run on the
--     host, where Lua can read the elements (PyTorch's apply_ and map_ are CPU-only too).
--   t:type([name]): PyTorch's type string ("torch.FloatTensor", "torch.cuda.FloatTensor"), or
--     with a name (one of those, or a dtype name) t cast to it (moved to CUDA for a
--     "torch.cuda." name), t itself when it already is one.
--   t:numpy() raises naming t:detach():cpu():tolist(), the Lua form of PyTorch's ndarray.
local core = require("tide.core")
local args = require("tide.op_args")
local raise = require("tide.autograd.raise")
local same_device = require("tide._same_device")

local Tensor = core.Tensor

local M = { functions = {} }

-- the elements of x (broadcast to shape) as a flat Lua list, in row-major order
local function elements(x, shape)
    return x:expand(shape):contiguous():view(-1):totable()
end

-- t[i] = fn(t[i], others[1][i], ...), one Lua call per element
local function each(op, t, others, fn)
    args.check(op, t)
    if type(fn) ~= "function" and not (getmetatable(fn) or {}).__call then
        raise(("tide: %s: expected a function as the last argument, got %s"):format(op,
            type(fn)))
    end
    if tostring(t.device) ~= "cpu" then
        raise(("tide: %s: calls a Lua function on each element, which needs the tensor on the " ..
            "host; it is on %s: move it with :to(\"cpu\") and back"):format(op, tostring(t.device)))
    end
    -- PyTorch refuses a tensor that requires grad also under no_grad ("Can't call apply_() on
    -- Variable that requires grad. Use var.detach().apply_() instead.")
    for k, u in ipairs({ t, others[1], others[2] }) do
        if core.is_tensor(u) and u.requires_grad then
            raise(("tide: %s: not differentiable: argument #%d requires grad (also under " ..
                "tide.no_grad, as PyTorch's); use t:detach():%s(...) instead"):format(op, k, op))
        end
    end
    local shape = t:size()
    local lists = {}
    for k, u in ipairs(others) do
        args.check(op, u, k + 1)
        same_device(op, t, u)
        lists[k] = args.as_op(op, "expand", elements, u, shape)
    end
    local vals = t:numel() > 0 and elements(t, shape) or {}
    local bool = t.dtype == "bool"
    local a, b = lists[1], lists[2]
    for i = 1, #vals do
        local r
        if b then
            r = fn(vals[i], a[i], b[i])
        elseif a then
            r = fn(vals[i], a[i])
        else
            r = fn(vals[i])
        end
        if r ~= nil then
            if bool then
                if type(r) ~= "boolean" and type(r) ~= "number" then
                    raise(("tide: %s: the function returned a %s for element %d; return a " ..
                        "boolean (or nil to keep the element)"):format(op, type(r), i))
                end
            elseif type(r) ~= "number" then
                raise(("tide: %s: the function returned a %s for element %d; return a number " ..
                    "(or nil to keep the element)"):format(op, type(r), i))
            end
            vals[i] = r
        end
    end
    if #vals > 0 then
        t:copy_(core.tensor(vals, { dtype = t.dtype }):view(shape))
    end
    return t
end

-- apply_(fn), map_(u, fn), map2_(u, v, fn), and Torch7's apply, map, map2 (each naming itself)
for _, names in ipairs({ { "apply_", "apply", 0 }, { "map_", "map", 1 }, { "map2_", "map2", 2 } }) do
    local others = names[3]
    for _, name in ipairs({ names[1], names[2] }) do
        Tensor[name] = function(t, ...)
            args.no_extra(name, others + 2, select(others + 2, ...))
            local fn = select(others + 1, ...)
            if others == 0 then
                return each(name, t, {}, fn)
            elseif others == 1 then
                return each(name, t, { (...) }, fn)
            end
            local u, v = ...
            return each(name, t, { u, v }, fn)
        end
    end
end

-- PyTorch's legacy type names, by dtype
local TYPE_NAMES = {
    float32 = "FloatTensor", float64 = "DoubleTensor", float16 = "HalfTensor",
    bfloat16 = "BFloat16Tensor", int32 = "IntTensor", int64 = "LongTensor", uint8 = "ByteTensor",
    bool = "BoolTensor",
}
local DTYPE_OF = {}
for dt, name in pairs(TYPE_NAMES) do
    DTYPE_OF[name] = dt
end

-- type([dtype[, non_blocking]]): PyTorch's non_blocking (a boolean) has no use in tide
function Tensor.type(t, name, non_blocking, ...)
    args.no_extra("type", 3, ...)
    args.check("type", t)
    if non_blocking ~= nil and type(non_blocking) ~= "boolean" then
        raise(("tide: type: non_blocking must be true or false, got %s"):format(
            tostring(non_blocking)))
    end
    local cuda = tostring(t.device):match("^cuda") ~= nil
    if name == nil then
        return (cuda and "torch.cuda." or "torch.") .. TYPE_NAMES[t.dtype]
    end
    if type(name) == "function" then
        -- t:type(tide.FloatTensor), t:type(tide.cuda.LongTensor): PyTorch's type objects
        local tide = require("tide")
        for _, tn in pairs(TYPE_NAMES) do
            if tide[tn] == name then
                name = "torch." .. tn
                break
            elseif type(tide.cuda) == "table" and rawget(tide.cuda, tn) == name then
                name = "torch.cuda." .. tn
                break
            end
        end
    end
    if type(name) ~= "string" then
        raise(("tide: type: expected a type name such as \"torch.FloatTensor\", a dtype " ..
            "name or a constructor such as tide.FloatTensor, got %s"):format(
            type(name) == "function" and "a function that is no tensor type" or type(name)))
    end
    local dt = TYPE_NAMES[name] and name
    local to_cuda
    if not dt then
        local prefix = name:sub(1, 11) == "torch.cuda." and 11 or (name:sub(1, 6) == "torch." and 6)
        if prefix then
            dt, to_cuda = DTYPE_OF[name:sub(prefix + 1)], prefix == 11
        end
    end
    if not dt then
        raise(("tide: type: unknown type %q; use a dtype name (\"float32\") or PyTorch's " ..
            "(\"torch.FloatTensor\", \"torch.cuda.LongTensor\", ...)"):format(name))
    end
    local r = t
    if to_cuda and not cuda then
        r = r:to("cuda")
    elseif to_cuda == false and cuda then
        r = r:to("cpu")
    end
    return r.dtype == dt and r or r:to(dt)
end

-- numpy(): tide has no NumPy; PyTorch's t.numpy() (an ndarray of the values) names the Lua form
function Tensor.numpy(t)
    args.check("numpy", t)
    raise(("tide: numpy: tide has no NumPy arrays; for the values of this %s tensor of shape " ..
        "{%s} as nested Lua lists use t:detach():cpu():tolist()"):format(t.dtype,
        table.concat(t.shape, ", ")))
end

M.names = {}
return M
