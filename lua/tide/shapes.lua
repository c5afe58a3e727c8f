-- tide.shapes: the shape ops of issue 13 written with views (docs/API.md, "The wider surface"):
-- chunk, split, unbind (Lua lists of views), tile (PyTorch's repeat), flatten, unflatten. Each
-- is a Tensor method and a tide.X function; narrow, select, expand and reshape record their
-- gradients, so these need no formula of their own.
local core = require("tide.core")
local raise = require("tide.autograd.raise")
local args = require("tide.op_args")
local idiv = require("tide._compat").idiv

local Tensor = core.Tensor
local check, dim_of, integer = args.check, args.dim_of, args.integer

local M = {}

local function no_dims(op, x)
    if x:dim() == 0 then
        raise(("tide: %s: needs a tensor with at least one dim, got a 0-dim tensor"):format(op))
    end
end

-- split(size_or_sizes[, dim]): pieces of size (the last one shorter), or of the listed sizes
function Tensor.split(x, sizes, dim)
    check("split", x)
    no_dims("split", x)
    local d = dim_of("split", x, dim or 1)
    local n = x:size(d)
    local out = {}
    if type(sizes) == "table" then
        local total = 0
        for i = 1, #sizes do
            local s = integer("split", sizes[i], "size " .. i)
            if s < 0 then
                raise(("tide: split: size %d is %d; sizes must be >= 0"):format(i, s))
            end
            total = total + s
        end
        if total ~= n then
            raise(("tide: split: the sizes sum to %d but dim %d has size %d; give sizes that sum to %d")
                :format(total, d, n, n))
        end
        local at = 1
        for i = 1, #sizes do
            out[i] = x:narrow(d, at, sizes[i])
            at = at + sizes[i]
        end
        return out
    end
    local s = integer("split", sizes, "split_size")
    if s <= 0 and not (s == 0 and n == 0) then
        raise(("tide: split: split_size must be > 0, got %d"):format(s))
    end
    if n == 0 then
        return { x:narrow(d, 1, 0) }
    end
    -- an empty or expanded tensor's dim can be huge at no cost: so would be the list of views
    args.check_budget("split", idiv(n + s - 1, s), 256, ("%d views of dim %d (size %d)")
        :format(idiv(n + s - 1, s), d, n), "split into larger pieces, or narrow the dim first")
    for at = 1, n, s do
        out[#out + 1] = x:narrow(d, at, math.min(s, n - at + 1))
    end
    return out
end

-- chunk(n[, dim]): at most n pieces of ceil(size / n) (fewer when they run out, as PyTorch)
function Tensor.chunk(x, chunks, dim)
    check("chunk", x)
    no_dims("chunk", x)
    local c = integer("chunk", chunks, "chunks")
    if c <= 0 then
        raise(("tide: chunk: chunks must be > 0, got %d"):format(c))
    end
    local d = dim_of("chunk", x, dim or 1)
    local n = x:size(d)
    if n == 0 then -- c empty pieces, as PyTorch's
        -- a view is a few hundred bytes: a huge c would build gigabytes of nothing
        args.check_budget("chunk", c, 256, ("%d empty views of dim %d (size 0)"):format(c, d),
            "ask for fewer chunks")
        local out = {}
        for i = 1, c do
            out[i] = x:narrow(d, 1, 0)
        end
        return out
    end
    return Tensor.split(x, idiv(n + c - 1, c), d)
end

-- unbind([dim]): the slices along dim, as a list
function Tensor.unbind(x, dim)
    check("unbind", x)
    no_dims("unbind", x)
    local d = dim_of("unbind", x, dim or 1)
    -- an empty or expanded tensor's dim can be huge at no cost: so would be the list of views
    args.check_budget("unbind", x:size(d), 256, ("%d views of dim %d"):format(x:size(d), d),
        "narrow the dim first, or index the slices one by one with select")
    local out = {}
    for i = 1, x:size(d) do
        out[i] = x:select(d, i)
    end
    return out
end

-- the integers of f(...) or f({...}) with at least `least` of them
local function int_list(op, what, least, first, ...)
    local list = type(first) == "table" and first or { first, ... }
    if #list < least then
        raise(("tide: %s: expected at least %d %s"):format(op, least, what))
    end
    local out = {}
    for i = 1, #list do
        out[i] = integer(op, list[i], what .. " " .. i)
    end
    return out
end

-- tile(...): x repeated reps[i] times along dim i; fewer reps than dims count as leading 1s,
-- more reps add leading dims (PyTorch's repeat/tile)
function Tensor.tile(x, ...)
    check("tile", x)
    local reps = int_list("tile", "reps", 0, ...)
    for i = 1, #reps do
        if reps[i] < 0 then
            raise(("tide: tile: reps %d is %d; reps must be >= 0"):format(i, reps[i]))
        end
    end
    local shape = x:size()
    local n = math.max(#reps, #shape)
    local full_reps, full_shape = {}, {}
    for i = 1, n do
        full_reps[i] = reps[i - (n - #reps)] or 1
        full_shape[i] = shape[i - (n - #shape)] or 1
    end
    -- [1, s1, 1, s2, ...] expanded to [r1, s1, r2, s2, ...], then merged pairwise
    local view, expanded, result = {}, {}, {}
    for i = 1, n do
        view[2 * i - 1], view[2 * i] = 1, full_shape[i]
        expanded[2 * i - 1], expanded[2 * i] = full_reps[i], full_shape[i]
        result[i] = full_reps[i] * full_shape[i]
    end
    return x:reshape(view):expand(expanded):reshape(result)
end

-- flatten([start[, end]]): dims start..end merged into one; a 0-dim tensor becomes [1]
function Tensor.flatten(x, start_dim, end_dim)
    check("flatten", x)
    if x:dim() == 0 then
        dim_of("flatten", x, start_dim or 1)
        dim_of("flatten", x, end_dim or -1)
        return x:reshape(1)
    end
    local s = dim_of("flatten", x, start_dim or 1)
    local e = dim_of("flatten", x, end_dim or -1)
    if s > e then
        raise(("tide: flatten: start dim %d comes after end dim %d; give start <= end")
            :format(s, e))
    end
    local shape, out = x:size(), {}
    for i = 1, s - 1 do
        out[#out + 1] = shape[i]
    end
    local m = 1
    for i = s, e do
        m = m * shape[i]
    end
    out[#out + 1] = m
    for i = e + 1, #shape do
        out[#out + 1] = shape[i]
    end
    return x:reshape(out)
end

-- unflatten(dim, sizes): dim split into sizes (one of them may be -1)
function Tensor.unflatten(x, dim, sizes)
    check("unflatten", x)
    no_dims("unflatten", x)
    local d = dim_of("unflatten", x, dim)
    if type(sizes) ~= "table" or #sizes == 0 then
        raise("tide: unflatten: sizes must be a non-empty list, as in x:unflatten(2, {2, 3})")
    end
    local shape, prod, free = x:size(), 1, nil
    for i = 1, #sizes do
        local s = integer("unflatten", sizes[i], "size " .. i)
        if s == -1 and not free then
            free = i
        elseif s < 0 then
            raise(("tide: unflatten: size %d is %d; sizes are >= 0 with at most one -1"):format(i, s))
        else
            prod = prod * s
        end
    end
    local ok = free and (prod > 0 and shape[d] % prod == 0) or (not free and prod == shape[d])
    if not ok then
        raise(("tide: unflatten: sizes {%s} do not multiply to dim %d's size %d")
            :format(table.concat(sizes, ", "), d, shape[d]))
    end
    local out = {}
    for i = 1, d - 1 do
        out[#out + 1] = shape[i]
    end
    for i = 1, #sizes do
        out[#out + 1] = i == free and idiv(shape[d], prod) or sizes[i]
    end
    for i = d + 1, #shape do
        out[#out + 1] = shape[i]
    end
    return x:reshape(out)
end

-- expand_as(other), view_as(other), reshape_as(other): expand / view / reshape to other's shape
for _, op in ipairs({ "expand", "view", "reshape" }) do
    local name = op .. "_as"
    Tensor[name] = function(x, other)
        check(name, x)
        check(name, other, 2)
        return x[op](x, other:size())
    end
end

M.names = { "split", "chunk", "unbind", "tile", "flatten", "unflatten" }
return M
