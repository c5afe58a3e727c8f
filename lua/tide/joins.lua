-- tide.joins: stacking, splitting and rearranging by PyTorch's names (docs/API.md, "The op
-- list"): hstack, vstack, row_stack, dstack, column_stack, atleast_1d/2d/3d, tensor_split,
-- hsplit, vsplit, dsplit, ravel, fliplr, flipud, rot90, diag_embed, block_diag,
-- cartesian_prod, tril_indices, triu_indices. Written with cat, views, flip, index_select and
-- index_add_, which autograd differentiates. Tensor methods where PyTorch has them, and
-- tide.X functions.
local core = require("tide.core")
local raise = require("tide.autograd.raise")
local args = require("tide.op_args")
local same_device = require("tide._same_device")
local compat = require("tide._compat")

local Tensor = core.Tensor
local check, dim_of, integer, shape_str = args.check, args.dim_of, args.integer, args.shape_str
local idiv = compat.idiv

local M = { functions = {} }
local F = M.functions

-- the tensors of a call: f(t1, t2, ...) or f({t1, t2, ...}); at least one unless may_be_empty
local function tensor_list(op, ...)
    local n, ts = select("#", ...), { ... }
    if n == 1 and type(ts[1]) == "table" and not core.is_tensor(ts[1]) then
        ts = ts[1]
        n = #ts
    end
    if n == 0 then
        raise(("tide: %s: expected at least one tensor"):format(op))
    end
    for i = 1, n do
        if not core.is_tensor(ts[i]) then
            raise(("tide: %s: expected a tensor at position %d of the list, got %s")
                :format(op, i, type(ts[i])))
        end
    end
    same_device(op, compat.unpack(ts, 1, n))
    return ts, n
end

-- ---- at least k dims ----

local AT_LEAST = {
    -- 0-D -> [1], else x
    function(x)
        return x:dim() == 0 and x:reshape(1) or x
    end,
    -- 0-D -> [1, 1], [n] -> [1, n]
    function(x)
        local d = x:dim()
        return d == 0 and x:reshape(1, 1) or d == 1 and x:unsqueeze(1) or x
    end,
    -- 0-D -> [1, 1, 1], [n] -> [1, n, 1], [m, n] -> [m, n, 1]
    function(x)
        local d = x:dim()
        if d == 0 then
            return x:reshape(1, 1, 1)
        elseif d == 1 then
            return x:reshape(1, x:size(1), 1)
        end
        return d == 2 and x:unsqueeze(3) or x
    end,
}

-- tide.atleast_1d(t) (a view with at least 1 dim); several tensors give as many results, a
-- list of them a list
for k = 1, 3 do
    local op = "atleast_" .. k .. "d"
    F[op] = function(...)
        local as_list = select("#", ...) == 1 and type((...)) == "table" and
            not core.is_tensor((...))
        local ts, n = tensor_list(op, ...)
        local out = {}
        for i = 1, n do
            out[i] = AT_LEAST[k](ts[i])
        end
        if as_list then
            return out
        end
        return compat.unpack(out, 1, n)
    end
end

local function mapped(op, k, ...)
    local ts, n = tensor_list(op, ...)
    local out = {}
    for i = 1, n do
        out[i] = AT_LEAST[k](ts[i])
    end
    return out, n
end

-- ---- stacking ----

-- tide.hstack(list): cat along dim 2 (dim 1 when every tensor is 0-D or 1-D)
function F.hstack(...)
    local ts, n = mapped("hstack", 1, ...)
    local all_1d = true
    for i = 1, n do
        all_1d = all_1d and ts[i]:dim() == 1
    end
    return core.cat(ts, all_1d and 1 or 2)
end

-- tide.vstack(list), row_stack: cat along dim 1, 1-D tensors as rows
function F.vstack(...)
    return core.cat((mapped("vstack", 2, ...)), 1)
end
F.row_stack = F.vstack

-- tide.dstack(list): cat along dim 3, after atleast_3d
function F.dstack(...)
    return core.cat((mapped("dstack", 3, ...)), 3)
end

-- tide.column_stack(list): 0-D and 1-D tensors as columns, cat along dim 2
function F.column_stack(...)
    local ts, n = tensor_list("column_stack", ...)
    local cols = {}
    for i = 1, n do
        local d = ts[i]:dim()
        cols[i] = d == 0 and ts[i]:reshape(1, 1) or d == 1 and ts[i]:unsqueeze(2) or ts[i]
    end
    return core.cat(cols, 2)
end

-- ---- splitting ----

-- the split points of a list or 1-D integer tensor of indices, for a dim of size n: PyTorch's
-- numbers, each the count of elements before a cut (x[:i] is x[1..i]), a negative one counted
-- from the end
local function cut_points(op, v, n)
    if core.is_tensor(v) then
        if v:dim() > 1 or args.FLOAT[v.dtype] or v.dtype == "bool" then
            raise(("tide: %s: a tensor of indices must be a 0-D or 1-D integer tensor, got " ..
                "%s %s"):format(op, v.dtype, shape_str(v:size())))
        end
        v = v:dim() == 0 and { v:item() } or v:to("cpu"):totable()
    end
    local cuts = {}
    for i = 1, #v do
        local c = integer(op, v[i], "index " .. i)
        cuts[i] = c < 0 and math.max(c + n, 0) or c
    end
    return cuts
end

-- the views of x along dim d between consecutive cuts, each a slice x[from:to] of its own as
-- Python's (clamped to the dim, empty when to < from)
local function pieces(x, d, cuts)
    local n, out = x:size(d), {}
    for i = 1, #cuts + 1 do
        local from = i > 1 and math.min(cuts[i - 1], n) or 0
        local to = i <= #cuts and math.min(cuts[i], n) or n
        out[i] = x:narrow(d, from + 1, math.max(to - from, 0))
    end
    return out
end

-- tensor_split(sections or indices[, dim = 1]): sections n gives n pieces, the first
-- size % n of them one longer; a list (or 1-D integer tensor) of indices cuts after each
-- index: {2, 5} gives x[1..2], x[3..5], x[6..] (PyTorch's numbers, its x[:2], x[2:5], x[5:];
-- a negative index counts from the end, as Python's slices)
function Tensor.tensor_split(x, s, dim, ...)
    args.no_extra("tensor_split", 3, ...)
    check("tensor_split", x)
    if x:dim() == 0 then
        raise("tide: tensor_split: needs a tensor with at least one dim, got a 0-dim tensor")
    end
    local d = dim_of("tensor_split", x, dim or 1)
    local n = x:size(d)
    if type(s) == "table" or (core.is_tensor(s) and s:dim() == 1) then
        return pieces(x, d, cut_points("tensor_split", s, n))
    end
    if core.is_tensor(s) then
        s = s:item()
    end
    if type(s) ~= "number" then
        raise(("tide: tensor_split: expected a number of sections or a list of indices, got %s")
            :format(type(s)))
    end
    local k = integer("tensor_split", s, "sections")
    if k <= 0 then
        raise(("tide: tensor_split: sections must be > 0, got %d"):format(k))
    end
    args.check_budget("tensor_split", k, 256, ("%d views"):format(k), "ask for fewer sections")
    local base, extra, cuts, at = idiv(n, k), n % k, {}, 0
    for i = 1, k - 1 do
        at = at + base + (i <= extra and 1 or 0)
        cuts[i] = at
    end
    return pieces(x, d, cuts)
end

-- hsplit, vsplit, dsplit: tensor_split along dim 2 (dim 1 for a 1-D x), 1, 3; a number of
-- sections must divide the dim, as PyTorch's
local function split_along(op, least, dim_for)
    Tensor[op] = function(x, s, ...)
        args.no_extra(op, 2, ...)
        check(op, x)
        if x:dim() < least then
            raise(("tide: %s: needs a tensor with at least %d dim%s, got %d-D")
                :format(op, least, least > 1 and "s" or "", x:dim()))
        end
        local d = dim_for(x)
        if type(s) == "number" then
            local k = integer(op, s, "sections")
            if k <= 0 or x:size(d) % k ~= 0 then
                raise(("tide: %s: dim %d has size %d, which %d sections cannot split evenly; " ..
                    "give indices instead"):format(op, d, x:size(d), k))
            end
        end
        return Tensor.tensor_split(x, s, d)
    end
end
split_along("hsplit", 1, function(x) return x:dim() == 1 and 1 or 2 end)
split_along("vsplit", 2, function() return 1 end)
split_along("dsplit", 3, function() return 3 end)

-- ---- rearranging ----

-- ravel(): the elements as a 1-D tensor (a view when x is contiguous)
function Tensor.ravel(x, ...)
    args.no_extra("ravel", 1, ...)
    check("ravel", x)
    return x:reshape(-1)
end

-- fliplr(): the columns reversed (dim 2); flipud(): the rows (dim 1)
function Tensor.fliplr(x, ...)
    args.no_extra("fliplr", 1, ...)
    check("fliplr", x)
    if x:dim() < 2 then
        raise(("tide: fliplr: needs a tensor with at least 2 dims, got %d-D"):format(x:dim()))
    end
    return x:flip(2)
end
function Tensor.flipud(x, ...)
    args.no_extra("flipud", 1, ...)
    check("flipud", x)
    if x:dim() < 1 then
        raise("tide: flipud: needs a tensor with at least 1 dim, got 0-D")
    end
    return x:flip(1)
end

-- rot90([k = 1[, dims = {1, 2}]]): k quarter turns from dims[1] towards dims[2], as PyTorch's
-- flips and transpose
function Tensor.rot90(x, k, dims, ...)
    args.no_extra("rot90", 3, ...)
    check("rot90", x)
    k = k == nil and 1 or integer("rot90", k, "k")
    dims = dims or { 1, 2 }
    if type(dims) ~= "table" or #dims ~= 2 then
        raise("tide: rot90: dims must be a list of two dims, as {1, 2}")
    end
    if x:dim() < 2 then
        raise(("tide: rot90: needs a tensor with at least 2 dims, got %d-D"):format(x:dim()))
    end
    local a, b = dim_of("rot90", x, dims[1]), dim_of("rot90", x, dims[2])
    if a == b then
        raise(("tide: rot90: the two dims must differ, got %d and %d"):format(dims[1], dims[2]))
    end
    k = k % 4 -- Lua's % is a floored modulo: 0..3 for negative k too
    if k == 1 then
        return x:flip(b):transpose(a, b)
    elseif k == 2 then
        return x:flip({ a, b })
    elseif k == 3 then
        return x:flip(a):transpose(a, b)
    end
    return x:clone()
end

-- the flat positions (1-based, int64 on dev) of the offset-th diagonal of an [r, c] matrix
-- stored row by row, and its length
local function diagonal_at(r, c, offset, dev)
    local n = offset >= 0 and math.max(0, math.min(r, c - offset)) or
        math.max(0, math.min(r + offset, c))
    local i = core.arange(0, n, { dtype = "int64", device = dev })
    local row, col = offset >= 0 and i or i - offset, offset >= 0 and i + offset or i
    return row * c + col + 1, n
end

-- diag_embed([offset = 0[, dim1 = -2[, dim2 = -1]]]): the last dim of x on the offset-th
-- diagonal of new square matrices in dims dim1 and dim2 of the result, zeros elsewhere
function Tensor.diag_embed(x, offset, dim1, dim2, ...)
    args.no_extra("diag_embed", 4, ...)
    check("diag_embed", x)
    offset = offset == nil and 0 or integer("diag_embed", offset, "offset")
    local v = x:dim() == 0 and x:reshape(1) or x
    local rank = v:dim() + 1
    local a = dim_of("diag_embed", v, dim1 == nil and -2 or dim1, 1)
    local b = dim_of("diag_embed", v, dim2 == nil and -1 or dim2, 1)
    if a == b then
        raise(("tide: diag_embed: dim1 and dim2 must differ, got %d and %d"):format(a, b))
    end
    local n = v:size(-1)
    local m = n + math.abs(offset)
    local shape = v:size()
    shape[#shape] = m * m
    local at = diagonal_at(m, m, offset, x.device)
    local z = core.zeros(shape, { dtype = x.dtype, device = x.device })
    local out = z:index_add_(#shape, at, v)
    shape[#shape] = m
    shape[#shape + 1] = m
    return out:view(shape):movedim({ rank - 1, rank }, { a, b })
end

-- tide.block_diag(t1, t2, ...): the tensors (0-D as [1, 1], 1-D as one row) on the diagonal of
-- one matrix, zeros elsewhere; the dtypes promoted as cat promotes them
function F.block_diag(...)
    local first = ...
    if select("#", ...) == 0 or select("#", ...) == 1 and type(first) == "table"
        and not core.is_tensor(first) and #first == 0 then
        return core.zeros({ 1, 0 }) -- no tensors: PyTorch's empty [1, 0] of the default dtype
    end
    local ts, n = tensor_list("block_diag", ...)
    local blocks, cols, dev = {}, 0, ts[1].device
    for i = 1, n do
        local t = ts[i]
        if t:dim() > 2 then
            raise(("tide: block_diag: tensor %d must have 2 dims or fewer, got %d-D")
                :format(i, t:dim()))
        end
        blocks[i] = t:dim() == 0 and t:reshape(1, 1) or t:dim() == 1 and t:unsqueeze(1) or t
        cols = cols + blocks[i]:size(2)
    end
    local dtype = core.cat((function()
        local probes = {}
        for i = 1, n do
            probes[i] = blocks[i]:detach():reshape(-1):narrow(1, 1, 0)
        end
        return probes
    end)(), 1).dtype
    local rows, left = {}, 0
    for i = 1, n do
        local b = blocks[i]:to(dtype)
        local r, c = b:size(1), b:size(2)
        local parts = {}
        if left > 0 then
            parts[#parts + 1] = core.zeros({ r, left }, { dtype = dtype, device = dev })
        end
        parts[#parts + 1] = b
        if cols - left - c > 0 then
            parts[#parts + 1] = core.zeros({ r, cols - left - c }, { dtype = dtype, device = dev })
        end
        rows[i] = #parts == 1 and b or core.cat(parts, 2)
        left = left + c
    end
    return core.cat(rows, 1)
end

-- tide.cartesian_prod(t1, t2, ...): every combination of the 1-D tensors' elements, one per
-- row, the last tensor varying fastest; one tensor comes back as itself
function F.cartesian_prod(...)
    local ts, n = tensor_list("cartesian_prod", ...)
    for i = 1, n do
        if ts[i]:dim() ~= 1 then
            raise(("tide: cartesian_prod: tensor %d must be 1-D, got %s")
                :format(i, shape_str(ts[i]:size())))
        end
    end
    if n == 1 then
        return ts[1]
    end
    local grid = require("tide.shapes").functions.meshgrid(ts, { indexing = "ij" })
    for i = 1, n do
        grid[i] = grid[i]:reshape(-1)
    end
    return core.stack(grid, 2)
end

-- tide.combinations(t[, r = 2[, {with_replacement = false}]]): the r-element combinations of
-- the 1-D t's elements (with repeats when with_replacement), one per row, in PyTorch's order
-- (lexicographic in the positions); an index_select of t, so gradients reach it
function F.combinations(t, r, opts)
    local op = "combinations"
    check(op, t)
    if type(r) == "table" and opts == nil then
        r, opts = nil, r
    end
    r = r == nil and 2 or integer(op, r, "r")
    local o = args.options(op, opts, { "with_replacement" }, "{with_replacement = true}")
    local rep = o.with_replacement == true
    if t:dim() ~= 1 then
        raise(("tide: combinations: expected a 1-D tensor, got %s"):format(shape_str(t:size())))
    end
    if r < 0 then
        raise(("tide: combinations: r must be >= 0, got %d"):format(r))
    end
    local n = t:size(1)
    -- the rows of positions, built on the host (their count is C(n, r) or C(n + r - 1, r))
    local count, top = 1, rep and n + r - 1 or n
    if r > top then
        count = 0 -- fewer elements than r: no combination
    else
        -- C(top, r) as C(top, top - r) when that is shorter: a huge r over few elements
        -- counts in a few steps
        local k = math.min(r, top - r)
        for i = 1, k do
            count = count * (top - k + i) / i
        end
    end
    args.check_budget(op, count * math.max(r, 1), 8, ("%.0f combinations of %d"):format(count, r),
        "ask for fewer elements or a smaller r")
    local flat, cur = {}, {}
    local function walk(k, from)
        if k > r then
            for i = 1, r do
                flat[#flat + 1] = cur[i]
            end
            return
        end
        for p = from, n do
            cur[k] = p
            walk(k + 1, rep and p or p + 1)
        end
    end
    if r > 0 then
        walk(1, 1)
    end
    local rows = #flat / math.max(r, 1)
    if r == 0 then -- PyTorch's empty 1-D result
        return core.empty({ 0 }, { dtype = t.dtype, device = t.device })
    elseif rows == 0 then
        return core.empty({ 0, r }, { dtype = t.dtype, device = t.device })
    end
    local pos = core.tensor(flat, { dtype = "int64", device = t.device })
    return t:index_select(1, pos):view(rows, r)
end

local INDICES_OPTIONS = { "dtype", "device" }

-- tide.tril_indices(row, col[, offset = 0[, {dtype = "int64", device =}]]): the 1-based
-- {rows, cols} of the lower triangle (col - row <= offset) of a row x col matrix, row by row, as
-- a [2, N] tensor; triu_indices the upper one (col - row >= offset)
local function triangle_indices(op, keep)
    F[op] = function(row, col, offset, opts)
        if type(offset) == "table" and opts == nil then
            offset, opts = nil, offset
        end
        row, col = integer(op, row, "row"), integer(op, col, "col")
        offset = offset == nil and 0 or integer(op, offset, "offset")
        if row < 0 or col < 0 then
            raise(("tide: %s: row and col must be >= 0, got %d and %d"):format(op, row, col))
        end
        local o = args.options(op, opts, INDICES_OPTIONS, "{dtype = \"int32\"}")
        local dtype = o.dtype or "int64"
        if dtype ~= "int64" and dtype ~= "int32" then
            raise(("tide: %s: dtype must be \"int64\" or \"int32\", got %s"):format(op,
                tostring(dtype)))
        end
        local dev = o.device or core.get_default_device()
        local r = core.arange(1, row + 1, { dtype = "int64", device = dev }):view(-1, 1)
            :expand(row, col)
        local c = core.arange(1, col + 1, { dtype = "int64", device = dev }):view(1, -1)
            :expand(row, col)
        local mask = keep(c - r, offset)
        return core.stack({ r:masked_select(mask), c:masked_select(mask) }, 1):to(dtype)
    end
end
triangle_indices("tril_indices", function(d, k) return d:le(k) end)
triangle_indices("triu_indices", function(d, k) return d:ge(k) end)

M.names = { "atleast_1d", "atleast_2d", "atleast_3d", "hstack", "vstack", "row_stack",
    "dstack", "column_stack", "tensor_split", "hsplit", "vsplit", "dsplit", "ravel", "fliplr",
    "flipud", "rot90", "diag_embed", "block_diag", "cartesian_prod", "combinations",
    "tril_indices", "triu_indices" }
return M
