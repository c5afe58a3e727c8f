-- tide.func.vmap: PyTorch's torch.func.vmap. vmap(f[, {in_dims = 1, out_dims = 1, randomness =
-- "error", chunk_size =}]) returns a function that maps f over a dim of its arguments and
-- stacks f's results along out_dims. tide has no batching rules: it calls f once per slice
-- (x:select(dim, i) for each batched tensor) and stacks, so a vmap costs as many calls of f
-- as the batch has slices, where PyTorch's runs batched ops once; the values are the same.
--
-- in_dims: a dim (1-based, negative from the end) for every argument, or a list with one
-- entry per argument: a dim, nil or false (not batched: passed whole to every call), or, for
-- an argument that is a table of tensors, a table of those entries matching it. out_dims: the
-- same for f's results (one entry per returned value when f returns several); nil or false
-- returns the first slice's value, which must then be the same for every slice.
-- randomness: "error" raises when f drew from tide's generator (compared before and after each
-- call: draws from a tide.Generator of one's own go unseen), "different" lets each slice draw
-- its own numbers, "same" gives every slice the same draws (the generator is set back before
-- each). chunk_size is accepted for PyTorch's scripts (the loop is the same).
local core = require("tide.core")
local compat = require("tide._compat")
local args = require("tide.op_args")
local raise = require("tide.autograd.raise")
local options = require("tide.func.options")
local pytree = require("tide.func.pytree")

local is_tensor = core.is_tensor
local pack, unpack = compat.pack, compat.unpack

local M = {}

local who = "func.vmap"

local function step(k)
    if type(k) == "number" then
        return "[" .. k .. "]"
    end
    return k:match("^[%a_][%w_]*$") and ("." .. k) or ("[\"" .. k .. "\"]")
end

-- dims (in_dims or out_dims, named what) checked once, when vmap is called
local function check_dims(what, v)
    if v == nil or v == false then
        return
    end
    if type(v) == "table" and getmetatable(v) == nil then
        for k, d in pairs(v) do
            if type(k) ~= "number" and type(k) ~= "string" then
                raise(("tide: %s: %s has a %s key; use list positions or names"):format(who,
                    what, type(k)))
            end
            check_dims(what .. step(k), d)
        end
        return
    end
    if not compat.is_integer(v) then
        raise(("tide: %s: %s must be a dim (an integer), nil or false (not batched), or a " ..
            "table of those, got %s"):format(who, what, type(v) == "number" and tostring(v) or
            pytree.what(v)))
    end
    if v == 0 then
        raise(("tide: %s: %s = 0: dims are 1-based in tide (1 is the first dim, PyTorch's 0; " ..
            "-1 the last)"):format(who, what))
    end
end

-- the dim of each leaf of value (value flattened, as pytree.flatten; nil: not batched), from
-- dims: one entry for the whole value, or a table matching its containers
local function leaf_dims(what, dims, value, where, out)
    out = out or { n = 0 }
    if type(dims) == "table" then
        if not pytree.is_container(value) then
            raise(("tide: %s: %s is a table, but %s is %s; give it one dim, or nil"):format(who,
                what, where, pytree.what(value)))
        end
        for k in pairs(dims) do
            if value[k] == nil then
                raise(("tide: %s: %s has the entry %s, but %s has no such entry"):format(who,
                    what, step(k), where))
            end
        end
        for _, k in ipairs(pytree.keys(who, value)) do
            leaf_dims(what .. step(k), dims[k], value[k], where .. step(k), out)
        end
        return out
    end
    local leaves = pytree.flatten(who, value)
    for _ = 1, leaves.n do
        out.n = out.n + 1
        out[out.n] = dims or nil
    end
    return out
end

-- d (1-based, negative from the end) as a dim of a tensor of n dims (n + 1: a stacking dim)
local function dim_in(d, n)
    if d >= 1 and d <= n then
        return d
    elseif d <= -1 and d >= -n then
        return n + d + 1
    end
end

-- the arguments' leaves, specs and dims; the batch size
local function batched_inputs(in_dims, a)
    if type(in_dims) == "table" then
        for k in pairs(in_dims) do
            if type(k) ~= "number" then
                raise(("tide: %s: in_dims must be a list with one entry per argument, got the " ..
                    "key \"%s\""):format(who, tostring(k)))
            end
            if k > a.n then
                raise(("tide: %s: in_dims has an entry for argument %d, but f was given %d " ..
                    "argument%s"):format(who, k, a.n, a.n == 1 and "" or "s"))
            end
        end
    end
    local ins, size, size_at = {}, nil, nil
    for i = 1, a.n do
        local d = in_dims
        if type(in_dims) == "table" then
            d = in_dims[i]
        end
        local where = "argument " .. i
        local what = type(in_dims) == "table" and ("in_dims[" .. i .. "]") or "in_dims"
        local leaves, spec = pytree.flatten(who, a[i])
        local dims = leaf_dims(what, d, a[i], where, nil)
        local paths = pytree.paths(spec)
        for k = 1, leaves.n do
            local x, dk = leaves[k], dims[k]
            if dk then
                local at = where .. paths[k]
                if not is_tensor(x) then
                    raise(("tide: %s: %s is %s, but in_dims gives it dim %d; give nil for an " ..
                        "argument that is not batched (only tensors can be)"):format(who, at,
                        pytree.what(x), dk))
                end
                local n = x:dim()
                if n == 0 then
                    raise(("tide: %s: %s is a tensor with no dims, so it cannot be batched; " ..
                        "give nil for it in in_dims"):format(who, at))
                end
                local nd = dim_in(dk, n)
                if not nd then
                    raise(("tide: %s: in_dims gives %s dim %d, out of range for a tensor of " ..
                        "%d dims; use 1..%d or -%d..-1 (dims are 1-based)"):format(who, at, dk,
                        n, n, n))
                end
                dims[k] = nd
                local s = x:size(nd)
                if size == nil then
                    size, size_at = s, { at, nd }
                elseif s ~= size then
                    raise(("tide: %s: the batched arguments disagree on the batch size: %s has " ..
                        "%d along dim %d, %s has %d along dim %d"):format(who, size_at[1], size,
                        size_at[2], at, s, nd))
                end
            end
        end
        ins[i] = { leaves = leaves, spec = spec, dims = dims }
    end
    if size == nil then
        raise(("tide: %s: no argument is batched: give at least one tensor argument a dim in " ..
            "in_dims"):format(who))
    end
    if size == 0 then
        raise(("tide: %s: the batch has no slices (%s has size 0 along dim %d); tide's vmap " ..
            "calls f once per slice, so it needs one at least"):format(who, size_at[1],
            size_at[2]))
    end
    return ins, size
end

-- the arguments of slice b
local function slice(ins, n, b)
    local call = { n = n }
    for i = 1, n do
        local x = ins[i]
        local leaves = {}
        for k = 1, x.leaves.n do
            local d = x.dims[k]
            leaves[k] = d and x.leaves[k]:select(d, b) or x.leaves[k]
        end
        call[i] = pytree.unflatten(x.spec, leaves)
    end
    return call
end

local function same_value(a, b)
    if is_tensor(a) and is_tensor(b) then
        return rawequal(a, b) or (a.dtype == b.dtype and tostring(a.device) ==
            tostring(b.device) and args.same_shape(a.shape, b.shape) and a:equal(b))
    end
    return rawequal(a, b)
end

-- output i of every slice (rs: the slices' packed results) stacked as out_dims say
local function stacked(out_dims, rs, i, n)
    local d = out_dims
    local what = "out_dims"
    if type(out_dims) == "table" then
        if n > 1 then
            d, what = out_dims[i], "out_dims[" .. i .. "]"
        elseif is_tensor(rs[1][1]) and out_dims[1] ~= nil and #pytree.keys(who, out_dims) == 1
        then
            d, what = out_dims[1], "out_dims[1]" -- one tensor, out_dims = {d}: as PyTorch
        end
    end
    local where = "output " .. i
    local first, spec = pytree.flatten(who, rs[1][i])
    local dims = leaf_dims(what, d, rs[1][i], where, nil)
    local per = { first }
    for b = 2, #rs do
        local leaves, sb = pytree.flatten(who, rs[b][i])
        if not pytree.same_spec(spec, sb) then
            raise(("tide: %s: f returned %s of different structures for slices 1 and %d")
                :format(who, where, b))
        end
        per[b] = leaves
    end
    local paths = pytree.paths(spec)
    local out = {}
    for k = 1, first.n do
        local at = where .. paths[k]
        local dk = dims[k]
        if dk then
            local list = {}
            for b = 1, #rs do
                local t = per[b][k]
                if not is_tensor(t) then
                    raise(("tide: %s: f's %s is %s; f must return tensors where out_dims " ..
                        "gives a dim (nil or false in out_dims for a value not batched)")
                        :format(who, at, pytree.what(t)))
                end
                list[b] = t
            end
            local m = list[1]:dim() + 1
            local nd = dim_in(dk, m)
            if not nd then
                raise(("tide: %s: out_dims gives %s dim %d, out of range for a result of %d " ..
                    "dims; use 1..%d or -%d..-1 (dims are 1-based)"):format(who, at, dk, m, m,
                    m))
            end
            for b = 2, #rs do
                if not args.same_shape(list[b].shape, list[1].shape) then
                    raise(("tide: %s: f's %s has the shape %s for slice 1 and %s for slice %d; " ..
                        "a batched result needs one shape"):format(who, at,
                        args.shape_str(list[1]:size()), args.shape_str(list[b]:size()), b))
                end
            end
            out[k] = core.stack(list, nd)
        else
            for b = 2, #rs do
                if not same_value(per[1][k], per[b][k]) then
                    raise(("tide: %s: out_dims gives %s no dim, but f returned different " ..
                        "values for it in slices 1 and %d; give it a dim to stack along")
                        :format(who, at, b))
                end
            end
            out[k] = per[1][k]
        end
    end
    return (pytree.unflatten(spec, out))
end

-- PyTorch's vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size): the first
-- three by position too (vmap(f, {nil, 1}) is in_dims=(None, 0))
function M.vmap(f, ...)
    options.callable(who, f)
    local opts = options.positional(who, { "in_dims", "out_dims", "randomness" }, ...)
    local o = options.options(who, opts, { "in_dims", "out_dims", "randomness", "chunk_size" },
        "{in_dims = 1, out_dims = 1}")
    local in_dims, out_dims = o.in_dims, o.out_dims
    if in_dims == nil then
        in_dims = 1
    end
    if out_dims == nil then
        out_dims = 1
    end
    check_dims("in_dims", in_dims)
    check_dims("out_dims", out_dims)
    local randomness = options.randomness(who, o)
    options.chunk_size(who, o)
    return function(...)
        local a = pack(...)
        local ins, size = batched_inputs(in_dims, a)
        local watch = options.watch(who, randomness)
        local rs = {}
        for b = 1, size do
            local call = slice(ins, a.n, b)
            rs[b] = pack(watch(f, unpack(call, 1, call.n)))
        end
        local n = rs[1].n
        if n == 0 then
            raise(("tide: %s: f returned nothing; it must return tensors to stack"):format(who))
        end
        for b = 2, size do
            if rs[b].n ~= n then
                raise(("tide: %s: f returned %d values for slice 1 and %d for slice %d")
                    :format(who, n, rs[b].n, b))
            end
        end
        if type(out_dims) == "table" and n > 1 then
            for k in pairs(out_dims) do
                if type(k) ~= "number" or k > n then
                    raise(("tide: %s: out_dims has the entry %s, but f returned %d values")
                        :format(who, step(k), n))
                end
            end
        end
        local outs = {}
        for i = 1, n do
            outs[i] = stacked(out_dims, rs, i, n)
        end
        return unpack(outs, 1, n)
    end
end

return M
