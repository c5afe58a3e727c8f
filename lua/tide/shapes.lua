-- tide.shapes: the shape ops of issue 13 written with views (docs/API.md, "The wider surface"):
-- chunk, split, unbind (Lua lists of views), tile (PyTorch's repeat), flatten, unflatten. Each
-- is a Tensor method and a tide.X function; narrow, select, expand and reshape record their
-- gradients, so these need no formula of their own. tide.concat and tide.concatenate are cat's
-- other names (functions only).
local core = require("tide.core")
local raise = require("tide.autograd.raise")
local args = require("tide.op_args")
local idiv = require("tide._compat").idiv

local Tensor = core.Tensor
local check, dim_of, integer = args.check, args.dim_of, args.integer

local M = { functions = {} }

local function no_dims(op, x)
    if x:dim() == 0 then
        raise(("tide: %s: needs a tensor with at least one dim, got a 0-dim tensor"):format(op))
    end
end

-- split(size_or_sizes[, dim]): pieces of size (the last one shorter), or of the listed sizes
function Tensor.split(x, sizes, dim, ...)
    args.no_extra("split", 3, ...)
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
function Tensor.chunk(x, chunks, dim, ...)
    args.no_extra("chunk", 3, ...)
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
function Tensor.unbind(x, dim, ...)
    args.no_extra("unbind", 2, ...)
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
    local list, n
    if type(first) == "table" then
        args.no_extra(op, 2, ...) -- x, the list
        list = args.check_list(op, first, what)
        n = #list
    else
        -- counted with select: # of a list with holes is any border (LuaJIT's differs from
        -- 5.4's), and a nil between integers must raise; trailing nils are omitted arguments
        list, n = { first, ... }, select("#", ...) + 1
        while n > 0 and list[n] == nil do
            n = n - 1
        end
    end
    if n < least then
        raise(("tide: %s: expected at least %d %s"):format(op, least, what))
    end
    local out = {}
    for i = 1, n do
        out[i] = integer(op, list[i], what .. " " .. i)
    end
    return out
end

-- tile(...): x repeated reps[i] times along dim i; fewer reps than dims count as leading 1s,
-- more reps add leading dims (PyTorch's repeat/tile); a new tensor
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
    for i = 1, n do -- (index > 0 only: a tide.Size reads shape[-1] as its last size)
        local ri, si = i - (n - #reps), i - (n - #shape)
        full_reps[i] = ri > 0 and reps[ri] or 1
        full_shape[i] = si > 0 and shape[si] or 1
    end
    -- [1, s1, 1, s2, ...] expanded to [r1, s1, r2, s2, ...], then merged pairwise
    local view, expanded, result = {}, {}, {}
    for i = 1, n do
        view[2 * i - 1], view[2 * i] = 1, full_shape[i]
        expanded[2 * i - 1], expanded[2 * i] = full_reps[i], full_shape[i]
        result[i] = full_reps[i] * full_shape[i]
    end
    -- a copy, as PyTorch's repeat and tile: never a view of x (x:tile(1) included) nor one
    -- with stride 0 (an in-place op on it must not write through to x or to other copies)
    return x:reshape(view):expand(expanded):clone():reshape(result)
end

-- flatten([start[, end]]): dims start..end merged into one (a view when reshape gives one); a
-- 0-dim tensor becomes [1]; start == end gives x itself
function Tensor.flatten(x, start_dim, end_dim, ...)
    args.no_extra("flatten", 3, ...)
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
    if s == e then -- x itself (1-D x:flatten() too), as PyTorch's
        return x
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
function Tensor.unflatten(x, dim, sizes, ...)
    args.no_extra("unflatten", 3, ...)
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
    Tensor[name] = function(x, other, ...)
        args.no_extra(name, 2, ...)
        check(name, x)
        check(name, other, 2)
        return x[op](x, other:size())
    end
end

-- movedim(source, destination): dims (one or equal-length lists, 1-based) moved to those
-- places, the others keeping their order: a permute
function Tensor.movedim(x, source, destination, ...)
    args.no_extra("movedim", 3, ...)
    check("movedim", x)
    if source == nil or destination == nil then
        raise("tide: movedim: expected source and destination dims, as in x:movedim(1, 2)")
    end
    local src = type(source) == "table" and args.check_list("movedim", source, "source") or
        { source }
    local dst = type(destination) == "table" and
        args.check_list("movedim", destination, "destination") or { destination }
    if #src ~= #dst then
        raise(("tide: movedim: source and destination must have as many dims, got %d and %d")
            :format(#src, #dst))
    end
    local n, order, used = x:dim(), {}, {}
    for i = 1, #src do
        local s, d = dim_of("movedim", x, src[i]), dim_of("movedim", x, dst[i])
        if used[s] or order[d] then
            raise(("tide: movedim: dim %s or %s appears twice"):format(tostring(src[i]),
                tostring(dst[i])))
        end
        order[d], used[s] = s, true
    end
    local rest = 1
    for d = 1, n do
        if not order[d] then
            while used[rest] do
                rest = rest + 1
            end
            order[d], rest = rest, rest + 1
        end
    end
    return x:permute(order)
end

-- diag([k = 0]): a 1-D x as the k-th diagonal of a square matrix (zeros elsewhere), a 2-D x's
-- k-th diagonal as a 1-D tensor (k > 0 above the main one)
function Tensor.diag(x, k, ...)
    args.no_extra("diag", 2, ...)
    check("diag", x)
    k = k == nil and 0 or integer("diag", k, "k")
    local dev = x.device
    if x:dim() == 1 then
        local n = x:size(1)
        local m = n + math.abs(k)
        local i = core.arange(0, n, { dtype = "int64", device = dev })
        local row, col = k >= 0 and i or i - k, k >= 0 and i + k or i
        local at = row * m + col + 1
        return core.zeros({ m * m }, { dtype = x.dtype, device = dev }):index_add_(1, at, x)
            :view(m, m)
    elseif x:dim() == 2 then
        -- a copy of the diagonal view (one strided copy; an empty one past the matrix's edge)
        return x:diagonal(k):clone()
    end
    raise(("tide: diag: needs a 1-D or 2-D tensor, got %d-D"):format(x:dim()))
end

local MESHGRID = { "indexing" }

-- tide.meshgrid(t1, t2, ...[, {indexing = "ij"}]) or meshgrid({t1, t2, ...}[, opts]): the 1-D
-- tensors (of one dtype, as PyTorch's) expanded to a grid of their sizes, one view each; "xy"
-- swaps the first two dims (NumPy's and Matlab's order)
function M.functions.meshgrid(...)
    local a = { n = select("#", ...), ... }
    local ts, opts = a, nil
    -- the last table is opts unless it is the list of tensors (meshgrid({t1, t2}))
    if a.n > 0 and type(a[a.n]) == "table" and not core.is_tensor(a[a.n])
        and not core.is_tensor(a[a.n][1]) then
        opts, a.n = a[a.n], a.n - 1
    end
    if a.n == 1 and type(a[1]) == "table" and not core.is_tensor(a[1]) then
        ts = { n = #a[1] }
        for i = 1, ts.n do
            ts[i] = a[1][i]
        end
    end
    local o = args.options("meshgrid", opts, MESHGRID, "{indexing = \"xy\"}")
    local indexing = o.indexing or "ij"
    if indexing ~= "ij" and indexing ~= "xy" then
        raise(("tide: meshgrid: indexing must be \"ij\" or \"xy\", got %s"):format(
            tostring(indexing)))
    end
    local sizes = {}
    for i = 1, ts.n do
        check("meshgrid", ts[i], i)
        if ts[i]:dim() > 1 then
            raise(("tide: meshgrid: tensor %d must be 0-D or 1-D, got %d-D"):format(i,
                ts[i]:dim()))
        end
        if ts[i].dtype ~= ts[1].dtype then
            raise(("tide: meshgrid: expects all tensors to have the same dtype; tensor 1 is " ..
                "%s, tensor %d is %s"):format(ts[1].dtype, i, ts[i].dtype))
        end
        sizes[i] = ts[i]:numel()
    end
    local swap = indexing == "xy" and ts.n >= 2
    if swap then
        sizes[1], sizes[2] = sizes[2], sizes[1]
    end
    local out = {}
    for i = 1, ts.n do
        local at = swap and (i == 1 and 2 or i == 2 and 1 or i) or i
        local shape = {}
        for d = 1, ts.n do
            shape[d] = d == at and sizes[d] or 1
        end
        out[i] = ts[i]:reshape(shape):expand(sizes)
    end
    return out
end

-- tide.concat(tensors[, dim]) and tide.concatenate(tensors[, dim]): PyTorch's other names of
-- cat (concatenate's axis = is the keyword alias of dim); errors under their own names
function M.functions.concat(tensors, dim, ...)
    args.no_extra("concat", 2, ...)
    return args.as_op("concat", "cat", core.cat, tensors, dim)
end
function M.functions.concatenate(tensors, dim, ...)
    args.no_extra("concatenate", 2, ...)
    return args.as_op("concatenate", "cat", core.cat, tensors, dim)
end

-- squeeze([dim]): the core's, and PyTorch 2's list of dims (x:squeeze({2, 4}), its tuple):
-- each of those dims of size 1 goes, the others stay (as for one dim), squeezed from the last
-- so the numbers hold; {} squeezes none. A call without a list is the kernel's own; squeeze_
-- (tide.inplace_views) takes the list through this
local front = require("tide.tensor_keywords").front
local squeeze = Tensor.squeeze
Tensor.squeeze = front(function(x, dim, ...)
    if type(dim) ~= "table" then
        return squeeze(x, dim, ...)
    end
    args.no_extra("squeeze", 2, ...)
    check("squeeze", x)
    local dims, seen = {}, {}
    for i, d in ipairs(dim) do
        local n = dim_of("squeeze", x, d)
        if seen[n] then
            raise(("tide: squeeze: dim %d appears twice in the list (as its entry %d); list each " ..
                "dim once"):format(n, i))
        end
        seen[n], dims[#dims + 1] = true, n
    end
    table.sort(dims, function(a, b) return a > b end)
    local r = x:view(x:size()) -- a view even when no dim goes, as PyTorch's
    for _, d in ipairs(dims) do
        if x:dim() > 0 and r:size(d) == 1 then
            r = squeeze(r, d)
        end
    end
    return r
end, squeeze, 2)

-- a shape (tide.Size, x.shape, x:size()) sliced as PyTorch's torch.Size: x:size()[{{2, -1}}] is
-- x.size()[1:], a tide.Size again, its ends clamped as a Python slice's ({a} alone runs to the
-- end, {} is all of it); s:numel() is torch.Size.numel(), the product of the sizes; s + {-1, 2}
-- concatenates, as a torch.Size and a tuple
do
    local SIZE_MT = getmetatable(core.zeros(0).shape)
    local size_index = SIZE_MT.__index
    local function where_of(v)
        return type(v) == "string" and ("%q"):format(v) or tostring(v)
    end
    local function whole(v)
        return type(v) == "number" and v == math.floor(v) and v > -math.huge and v < math.huge
    end
    local function slice(s, range)
        local n = #s
        local a, b = range[1], range[2]
        if #range > 2 or (a ~= nil and not whole(a)) or (b ~= nil and not whole(b)) then
            local parts = {}
            for i = 1, #range do
                parts[i] = where_of(range[i])
            end
            raise(("tide: Size: a slice is a range {start, stop} of integers, as " ..
                "x:size()[{{2, -1}}] for x.size()[1:], got {{%s}}")
                :format(table.concat(parts, ", ")))
        end
        a, b = a or 1, b or n
        if a < 0 then a = n + 1 + a end
        if b < 0 then b = n + 1 + b end
        if a < 1 then a = 1 end
        if b > n then b = n end
        local out = {}
        for i = a, b do
            out[#out + 1] = rawget(s, i)
        end
        return setmetatable(out, SIZE_MT)
    end
    local function numel(s)
        local p = 1
        for i = 1, #s do
            p = p * rawget(s, i)
        end
        return p
    end
    -- s + {-1, 2}: Python's tuple concatenation of a torch.Size (x.shape[:-1] + (-1, 2)), a
    -- Size of a's sizes then b's; the other side a Size or a list of integers
    local function sizes_of(v)
        if type(v) ~= "table" or (getmetatable(v) ~= nil and getmetatable(v) ~= SIZE_MT) then
            return nil
        end
        local n, keys = #v, 0
        for i = 1, n do
            if not whole(rawget(v, i)) then
                return nil
            end
        end
        for _ in next, v do
            keys = keys + 1
        end
        return keys == n and n or nil -- a list, no other keys
    end
    SIZE_MT.__add = function(a, b)
        local na, nb = sizes_of(a), sizes_of(b)
        if not na or not nb then
            local other = sizes_of(a) and b or a
            raise(("tide: Size + %s: a shape concatenates with a list of integers or another " ..
                "shape, as Python's tuples: x.shape[{{1, -2}}] + {-1, 2}"):format(
                core.is_tensor(other) and "a tensor" or type(other) == "table" and
                "a table that is not a list of integers" or type(other)))
        end
        local out = {}
        for i = 1, na do
            out[i] = rawget(a, i)
        end
        for i = 1, nb do
            out[na + i] = rawget(b, i)
        end
        return setmetatable(out, SIZE_MT)
    end
    -- s * 3 (or 3 * s): Python's tuple repetition (torch.Size([1]) * (ndim - 1), torchvision's
    -- stochastic_depth), a Size of s's sizes n times over (none for n <= 0, as Python's)
    SIZE_MT.__mul = function(a, b)
        local s, n = a, b
        if getmetatable(a) ~= SIZE_MT then
            s, n = b, a
        end
        if type(n) ~= "number" or not whole(n) then
            raise(("tide: Size * %s: a shape repeats a whole number of times, as Python's " ..
                "tuples: tide.Size({1}) * 3"):format(core.is_tensor(n) and "a tensor" or
                tostring(n)))
        end
        local out, k = {}, #s
        if k * n > 1e6 then -- a shape that long is a mistake (no tensor has so many dims)
            raise(("tide: Size * %s: %d sizes repeated %s times is no shape; did you mean " ..
                "tide.Size({%s})?"):format(tostring(n), k, tostring(n), tostring(n)))
        end
        for r = 0, n - 1 do
            for i = 1, k do
                out[r * k + i] = rawget(s, i)
            end
        end
        return setmetatable(out, SIZE_MT)
    end
    SIZE_MT.__index = function(s, k)
        if type(k) == "table" then
            if #k ~= 1 or type(k[1]) ~= "table" then
                raise("tide: Size: slice a shape with a range in a list, x:size()[{{2, -1}}] " ..
                    "(PyTorch's x.size()[1:]), got a table that is not {{start, stop}}")
            end
            return slice(s, k[1])
        elseif k == "numel" then
            return numel
        end
        if type(size_index) == "function" then
            return size_index(s, k)
        end
        return size_index and size_index[k]
    end
end

M.names = { "split", "chunk", "unbind", "tile", "flatten", "unflatten", "movedim", "diag",
    "meshgrid", "concat", "concatenate", "squeeze" }
return M
