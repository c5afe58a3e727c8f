-- tide.sparse.coo: PyTorch's sparse COO tensor (torch.sparse_coo_tensor, t.to_sparse()), as
-- graph scripts use it: an adjacency of nnz entries times a dense matrix (torch.spmm,
-- torch.sparse.mm). A sparse tensor is its indices (an int64 tensor [sparse_dim, nnz],
-- 1-based as every index in tide) and values (a tensor [nnz, dense dims...]) on one device,
-- and its shape. Products and to_dense() are tide's dense ops over those two (index_select,
-- index_add), so gradients reach the values and the dense operand, on any device, and the
-- device rules are the dense ones'. Duplicate indices sum, as PyTorch's uncoalesced tensors.
local compat = require("tide._compat")
local core = require("tide.core")
local args = require("tide.op_args")
local raise = require("tide.autograd.raise")
local same_device = require("tide._same_device")

local is_tensor = core.is_tensor
local shape_str = args.shape_str

local Sparse = { __name = "SparseTensor", is_sparse = true, layout = "sparse_coo" }

local function is_sparse(v)
    return type(v) == "table" and getmetatable(v) == Sparse
end
Sparse.is = is_sparse

-- the product of sizes[from..to]
local function prod(sizes, from, to)
    local n = 1
    for i = from, to do
        n = n * sizes[i]
    end
    return n
end

-- a sparse tensor over indices and values (checked by the caller) of the given shape
local function make(indices, values, shape, coalesced)
    return setmetatable({ _i = indices, _v = values, shape = shape, dtype = values.dtype,
        device = values.device, _coalesced = coalesced == true }, Sparse)
end

-- indices [sparse_dim, nnz] of an integer dtype, values [nnz, ...] on their device, and a shape
-- (nil: each sparse dim's largest index, then values' dense dims); indices in range
function Sparse.new(op, indices, values, shape)
    if not is_tensor(indices) or not is_tensor(values) then
        raise(("tide: %s: expected indices and values tensors, got %s and %s"):format(op,
            args.typename(indices), args.typename(values)))
    end
    if indices.dtype ~= "int64" and indices.dtype ~= "int32" then
        raise(("tide: %s: indices must be int64 (or int32), got %s"):format(op, indices.dtype))
    end
    if indices:dim() ~= 2 then
        raise(("tide: %s: indices must be 2-D [sparse_dim, nnz], got %s"):format(op,
            shape_str(indices:size())))
    end
    same_device(op, indices, values)
    local sdim, nnz = indices:size(1), indices:size(2)
    if values:dim() < 1 or values:size(1) ~= nnz then
        raise(("tide: %s: values must be [nnz, dense dims...] with nnz = %d (indices %s), " ..
            "got %s"):format(op, nnz, shape_str(indices:size()), shape_str(values:size())))
    end
    if sdim < 1 then
        raise(("tide: %s: indices must have at least one sparse dim, got %s"):format(op,
            shape_str(indices:size())))
    end
    indices = indices:to("int64")
    -- each sparse dim's largest and smallest index, in one copy to the host
    local maxes, least
    if nnz > 0 then
        local ext = require("tide").stack({ indices:amax(2), indices:amin(2) }):to("cpu")
            :totable()
        maxes, least = ext[1], math.huge
        for d = 1, sdim do
            least = math.min(least, ext[2][d])
        end
        if least < 1 then
            raise(("tide: %s: indices are 1-based: found %d; use 1..size"):format(op, least))
        end
    end
    local dense_dims = values:dim() - 1
    if shape == nil then
        shape = {}
        for d = 1, sdim do
            shape[d] = maxes and maxes[d] or 0
        end
        for d = 2, values:dim() do
            shape[#shape + 1] = values:size(d)
        end
    else
        if type(shape) ~= "table" or is_tensor(shape) then
            raise(("tide: %s: size must be a list of sizes, got %s"):format(op, type(shape)))
        end
        local copy = {}
        for d = 1, #shape do
            copy[d] = args.integer(op, shape[d], "size[" .. d .. "]")
            if copy[d] < 0 then
                raise(("tide: %s: size[%d] = %d; sizes are >= 0"):format(op, d, copy[d]))
            end
        end
        shape = copy
        if #shape ~= sdim + dense_dims then
            raise(("tide: %s: size %s has %d dims; indices give %d sparse dims and values %d " ..
                "dense dims (%d in all)"):format(op, shape_str(shape), #shape, sdim, dense_dims,
                sdim + dense_dims))
        end
        for d = 1, dense_dims do
            if shape[sdim + d] ~= values:size(d + 1) then
                raise(("tide: %s: size %s and values %s differ at dense dim %d"):format(op,
                    shape_str(shape), shape_str(values:size()), sdim + d))
            end
        end
        for d = 1, sdim do
            if maxes and maxes[d] > shape[d] then
                raise(("tide: %s: index %d is out of range for dim %d of size %d; indices " ..
                    "are 1-based: use 1..%d"):format(op, maxes[d], d, shape[d], shape[d]))
            end
        end
    end
    if #shape > 8 then
        raise(("tide: %s: size %s has %d dims; tide supports at most 8"):format(op,
            shape_str(shape), #shape))
    end
    return make(indices, values, shape, nnz <= 1) -- PyTorch's: 0 or 1 entries are coalesced
end

-- ---- queries ----
function Sparse:size(d)
    if d == nil then
        local s = {}
        for i = 1, #self.shape do
            s[i] = self.shape[i]
        end
        return s
    end
    local n = #self.shape
    local i = args.integer("size", d, "dim")
    if i < 0 then
        i = i + n + 1
    end
    if i < 1 or i > n then
        raise(("tide: size: dim %d is out of range for a sparse tensor of %d dims"):format(d, n))
    end
    return self.shape[i]
end

function Sparse:dim()
    return #self.shape
end
Sparse.ndimension = Sparse.dim

function Sparse:sparse_dim()
    return self._i:size(1)
end

function Sparse:dense_dim()
    return self._v:dim() - 1
end

function Sparse:numel()
    return prod(self.shape, 1, #self.shape)
end
Sparse.nelement = Sparse.numel

-- dtype queries are the values'
for _, k in ipairs({ "is_floating_point", "is_complex", "element_size" }) do
    Sparse[k] = function(self)
        return self._v[k](self._v)
    end
end

function Sparse:_nnz()
    return self._i:size(2)
end

function Sparse:_indices()
    return self._i
end

function Sparse:_values()
    return self._v
end

-- PyTorch's indices() / values() ask for a coalesced tensor
function Sparse:indices()
    if not self._coalesced then
        raise("tide: indices: the sparse tensor is not coalesced (its indices may repeat); " ..
            "call t:coalesce() first, or t:_indices() for them as they are")
    end
    return self._i
end

function Sparse:values()
    if not self._coalesced then
        raise("tide: values: the sparse tensor is not coalesced (its indices may repeat); " ..
            "call t:coalesce() first, or t:_values() for them as they are")
    end
    return self._v
end

function Sparse:is_coalesced()
    return self._coalesced
end

-- requires_grad is the values'; a dense tensor's method that a sparse tensor has not raises
-- when called, naming it and to_dense() (rather than Lua's "attempt to call a nil value")
local missing = {}
function Sparse.__index(self, k)
    if k == "requires_grad" then
        return rawget(self, "_v").requires_grad
    elseif k == "ndim" then
        return #rawget(self, "shape")
    elseif k == "is_cuda" then
        return rawget(self, "_v").is_cuda
    end
    local v = Sparse[k]
    if v == nil and type(k) == "string" and core.Tensor[k] ~= nil then
        v = missing[k]
        if v == nil then
            v = function()
                raise(("tide: %s: a sparse tensor has no %s; convert it with t:to_dense() (a " ..
                    "sparse tensor's methods: docs/API.md, \"Sparse tensors\")"):format(k, k))
            end
            missing[k] = v
        end
    end
    return v
end

function Sparse:requires_grad_(flag)
    self._v:requires_grad_(flag)
    return self
end

-- ---- the row-major linear index of each entry over the sparse dims ----
local function linear(self)
    local sdim = self._i:size(1)
    local lin
    for d = 1, sdim do
        local row = self._i:select(1, d) - 1
        lin = lin and lin * self.shape[d] + row or row
    end
    return lin
end

-- the entries sorted by index, duplicates summed (PyTorch's coalesce); a coalesced tensor is
-- returned as it is
function Sparse:coalesce()
    if self._coalesced then
        return self
    end
    local nnz = self._i:size(2)
    if nnz == 0 then
        return make(self._i, self._v, self.shape, true)
    end
    local lin = linear(self)
    local tide = require("tide")
    local uniq, inverse = tide.unique(lin, { sorted = true, return_inverse = true })
    local n = uniq:numel()
    local dense = {}
    for d = 2, self._v:dim() do
        dense[#dense + 1] = self._v:size(d)
    end
    local values = core.zeros({ n, compat.unpack(dense) }, { dtype = self.dtype,
        device = self.device }):index_add(1, inverse, self._v)
    -- the indices back from the linear ones, last sparse dim first
    local sdim = self._i:size(1)
    local rows, rest = {}, uniq
    for d = sdim, 1, -1 do
        rows[d] = rest:remainder(self.shape[d]) + 1
        rest = rest:div(self.shape[d], { rounding_mode = "floor" })
    end
    return make(tide.stack(rows), values, self:size(), true)
end

-- ---- to dense ----
function Sparse:to_dense()
    local sdim = self._i:size(1)
    local cells = prod(self.shape, 1, sdim)
    local rest = {}
    for d = sdim + 1, #self.shape do
        rest[#rest + 1] = self.shape[d]
    end
    local out = core.zeros({ cells, compat.unpack(rest) }, { dtype = self.dtype,
        device = self.device })
    if self._i:size(2) > 0 then
        out = out:index_add(1, linear(self) + 1, self._v)
    end
    return out:reshape(self:size())
end

-- ---- moves and casts: a new sparse tensor, or self where nothing changes ----
function Sparse:to(...)
    local v = self._v:to(...)
    if rawequal(v, self._v) then
        return self
    end
    return make(self._i:to(v.device), v, self:size(), self._coalesced)
end

function Sparse:cpu()
    return self:to("cpu")
end

function Sparse:cuda(...)
    local dev = ...
    return self:to(dev == nil and "cuda" or type(dev) == "number" and ("cuda:" .. dev) or dev)
end

function Sparse:float()
    return self:to("float32")
end

function Sparse:double()
    return self:to("float64")
end

function Sparse:detach()
    return make(self._i, self._v:detach(), self:size(), self._coalesced)
end

function Sparse:clone()
    return make(self._i:clone(), self._v:clone(), self:size(), self._coalesced)
end

-- ---- 2-D transpose ----
function Sparse:t()
    if self._i:size(1) ~= 2 or #self.shape ~= 2 then
        raise(("tide: t: expected a 2-D sparse tensor with 2 sparse dims, got size %s with " ..
            "%d sparse dims"):format(shape_str(self.shape), self._i:size(1)))
    end
    return make(self._i:flip(1), self._v, { self.shape[2], self.shape[1] }, false)
end

function Sparse:transpose(a, b)
    local n = #self.shape
    a, b = args.integer("transpose", a, "dim0"), args.integer("transpose", b, "dim1")
    a, b = a < 0 and a + n + 1 or a, b < 0 and b + n + 1 or b
    if not ((a == 1 and b == 2) or (a == 2 and b == 1)) then
        raise(("tide: transpose: a sparse tensor transposes dims 1 and 2 of a 2-D one, got " ..
            "dims %d and %d of size %s"):format(a, b, shape_str(self.shape)))
    end
    return self:t()
end

-- ---- products ----
-- sparse [n, m] (2 sparse dims, scalar values) times dense [m, k] or [m]: each entry's row of
-- the dense operand, scaled, added into its output row
function Sparse.mm(a, b, op)
    op = op or "mm"
    if not is_sparse(a) then
        raise(("tide: %s: expected a sparse tensor first, got %s"):format(op,
            is_tensor(a) and "a dense tensor (tide.mm multiplies two dense ones)" or type(a)))
    end
    if not is_tensor(b) then
        raise(("tide: %s: expected a dense tensor second, got %s"):format(op,
            is_sparse(b) and "a sparse tensor (convert one with :to_dense())" or type(b)))
    end
    if a._i:size(1) ~= 2 or a._v:dim() ~= 1 then
        raise(("tide: %s: expected a 2-D sparse matrix (2 sparse dims, no dense dims), got size " ..
            "%s with %d sparse dims"):format(op, shape_str(a.shape), a._i:size(1)))
    end
    if b:dim() ~= 2 and b:dim() ~= 1 then
        raise(("tide: %s: expected a 1-D or 2-D dense operand, got %s"):format(op,
            shape_str(b:size())))
    end
    if b:size(1) ~= a.shape[2] then
        raise(("tide: %s: shapes %s and %s cannot be multiplied (%d vs %d)"):format(op,
            shape_str(a.shape), shape_str(b:size()), a.shape[2], b:size(1)))
    end
    same_device(op, a._v, b)
    local vector = b:dim() == 1
    local rhs = vector and b:unsqueeze(2) or b
    local rows, cols = a._i:select(1, 1), a._i:select(1, 2)
    local v = a._v
    if v.dtype ~= rhs.dtype then -- PyTorch promotes: values and the operand to one dtype
        local dt = require("tide").promote_types(v.dtype, rhs.dtype)
        v, rhs = v:to(dt), rhs:to(dt)
    end
    local out = core.zeros({ a.shape[1], rhs:size(2) }, { dtype = rhs.dtype, device = rhs.device })
    if a._i:size(2) > 0 then
        out = out:index_add(1, rows, rhs:index_select(1, cols) * v:unsqueeze(2))
    end
    return vector and out:squeeze(2) or out
end

function Sparse.matmul(a, b)
    return Sparse.mm(a, b, "matmul")
end

-- s:mv(vec): torch.Tensor.mv of a sparse matrix
function Sparse.mv(a, b)
    if is_tensor(b) and b:dim() ~= 1 then
        raise(("tide: mv: expected a 1-D dense vector, got %s"):format(shape_str(b:size())))
    end
    return Sparse.mm(a, b, "mv")
end

-- ---- selections: a sparse tensor of the entries kept (PyTorch's index_select, narrow_copy) ----
-- indices with sparse dim d's row replaced by row
local function with_row(ii, d, row)
    local rows = {}
    for k = 1, ii:size(1) do
        rows[k] = k == d and row or ii:select(1, k)
    end
    return require("tide").stack(rows)
end

-- s:index_select(dim, index): index 1-based; entries in index order (then stored order), as
-- PyTorch's, uncoalesced
function Sparse:index_select(dim, index, ...)
    local op = "index_select"
    args.no_extra(op, 3, ...)
    local d = args.dim_of(op, self, dim)
    if type(index) == "table" and getmetatable(index) == nil then
        index = core.tensor(index, { dtype = "int64", device = self.device })
    end
    if not is_tensor(index) or index:dim() ~= 1 or index.dtype:find("int") == nil then
        raise(("tide: %s: expected index a 1-D integer tensor, got %s"):format(op,
            is_tensor(index) and (index.dtype .. " " .. shape_str(index:size())) or type(index)))
    end
    same_device(op, self._v, index)
    index = index:to("int64")
    local m, size = index:numel(), self.shape[d]
    if m > 0 then
        local lo, hi = index:amin():item(), index:amax():item()
        if lo < 1 or hi > size then
            raise(("tide: %s: index %d is out of range for dim %d of size %d; indices are " ..
                "1-based: use 1..%d"):format(op, lo < 1 and lo or hi, d, size, size))
        end
    end
    local shape = self:size()
    shape[d] = m
    local sdim = self._i:size(1)
    if d > sdim then -- a dense dim: the values' slices
        return make(self._i, self._v:index_select(d - sdim + 1, index), shape, self._coalesced)
    end
    local nnz = self._i:size(2)
    args.check_budget(op, m * nnz, 1, "matching " .. m .. " indices to " .. nnz .. " entries",
        "select fewer indices at a time")
    local pairs_ = index:unsqueeze(2):eq(self._i:select(1, d):unsqueeze(1)):nonzero()
    local pos, e = pairs_:select(2, 1), pairs_:select(2, 2)
    return make(with_row(self._i:index_select(2, e), d, pos), self._v:index_select(1, e), shape,
        false)
end

-- s:narrow_copy(dim, start, length): start 1-based
function Sparse:narrow_copy(dim, start, length, ...)
    local op = "narrow_copy"
    args.no_extra(op, 4, ...)
    local d = args.dim_of(op, self, dim)
    local size = self.shape[d]
    start, length = args.integer(op, start, "start"), args.integer(op, length, "length")
    start = start < 0 and start + size + 1 or start
    if start < 1 or length < 0 or start + length - 1 > size then
        raise(("tide: %s: start %d and length %d are out of range for dim %d of size %d; " ..
            "start is 1-based"):format(op, start, length, d, size))
    end
    local shape = self:size()
    shape[d] = length
    local sdim = self._i:size(1)
    if d > sdim then
        return make(self._i, self._v:narrow(d - sdim + 1, start, length), shape, self._coalesced)
    end
    local row = self._i:select(1, d)
    local e = row:ge(start):logical_and(row:lt(start + length)):nonzero():select(2, 1)
    return make(with_row(self._i:index_select(2, e), d, row:index_select(1, e) - (start - 1)),
        self._v:index_select(1, e), shape, self._coalesced)
end

-- torch.sparse.softmax / log_softmax(t, dim): over each line along dim of the stored entries
-- only (the others are -inf), a coalesced sparse tensor of t's indices; gradients reach the
-- values
function Sparse._softmax(op, self, dim, log)
    if not is_sparse(self) then
        raise(("tide: %s: expected a sparse tensor, got %s"):format(op, args.typename(self)))
    end
    local d = args.dim_of(op, self, dim)
    local c = self:coalesce()
    local v = c._v
    if not args.FLOAT[v.dtype] then
        raise(("tide: %s: expected floating-point values, got %s"):format(op, v.dtype))
    end
    local sdim, nnz = c._i:size(1), c._i:size(2)
    if d > sdim then -- a dense dim: the values' own softmax
        local vd = d - sdim + 1
        return make(c._i, log and v:log_softmax(vd) or v:softmax(vd), c:size(), true)
    elseif nnz == 0 then
        return c
    end
    -- each entry's line: its linear index over the other sparse dims
    local key = core.zeros({ nnz }, { dtype = "int64", device = c.device })
    for k = 1, sdim do
        if k ~= d then
            key = key * c.shape[k] + (c._i:select(1, k) - 1)
        end
    end
    local tide = require("tide")
    local uniq, line = tide.unique(key, { return_inverse = true })
    local gshape = v:size()
    gshape[1] = uniq:numel()
    local zeros = core.zeros(gshape, { dtype = v.dtype, device = v.device })
    local top = zeros:index_reduce(1, line, v:detach(), "amax", { include_self = false })
    local z = v - top:index_select(1, line)
    local total = zeros:index_add(1, line, z:exp()):index_select(1, line)
    return make(c._i, log and z - total:log() or z:exp() / total, c:size(), true)
end

-- a scalar times a sparse tensor (either side), a sparse tensor over a scalar
local function scaled(op, s, x, f)
    if type(x) == "number" then
        s, x = x, s
    end
    if not is_sparse(x) or type(s) ~= "number" then
        raise(("tide: %s: a sparse tensor combines with a number here; for a tensor, convert " ..
            "it with :to_dense()"):format(op))
    end
    return make(x._i, f(x._v, s), x:size(), x._coalesced)
end

-- a sparse tensor times a dense one of its shape (either side, PyTorch's): a sparse tensor of
-- the same entries, each value times the dense element at its index (a 0-d tensor scales all)
local function times_dense(s, d)
    same_device("mul", s._v, d)
    if d:dim() == 0 then
        return make(s._i, s._v * d, s:size(), s._coalesced)
    elseif not args.same_shape(s.shape, d.shape) then
        raise(("tide: mul: a sparse tensor of size %s times a dense one of size %s; they must " ..
            "match (or the dense one be 0-d)"):format(shape_str(s.shape), shape_str(d.shape)))
    end
    local at = {}
    for k = 1, s._i:size(1) do
        at[k] = s._i[k]
    end
    return make(s._i, s._v * d[at], s:size(), s._coalesced)
end

function Sparse.mul(a, b)
    if is_sparse(a) and is_tensor(b) then
        return times_dense(a, b)
    elseif is_tensor(a) and is_sparse(b) then
        return times_dense(b, a)
    end
    return scaled("mul", a, b, function(v, s) return v * s end)
end
Sparse.__mul = Sparse.mul

function Sparse.div(a, b)
    if not is_sparse(a) then
        raise("tide: div: a number cannot be divided by a sparse tensor")
    end
    return scaled("div", a, b, function(v, s) return v / s end)
end
Sparse.__div = Sparse.div

-- sparse + sparse of one shape: a sparse tensor of both entries (PyTorch's, uncoalesced);
-- sparse + dense and dense + sparse (handed here by the dense op): the dense sum
local function sum_with(op, a, b, sign)
    if is_tensor(a) and is_sparse(b) then
        local d = b:to_dense()
        return sign > 0 and a + d or a - d
    elseif not is_sparse(a) then
        raise(("tide: %s: a number first and a sparse tensor second: write the sparse one " ..
            "first, or convert it with t:to_dense()"):format(op))
    end
    if is_tensor(b) then
        local d = a:to_dense()
        return sign > 0 and d + b or d - b
    elseif not is_sparse(b) then
        raise(("tide: %s: a sparse tensor adds a sparse or a dense tensor, got %s"):format(op,
            type(b)))
    end
    if not args.same_shape(a.shape, b.shape) or a._i:size(1) ~= b._i:size(1) then
        raise(("tide: %s: sparse tensors of sizes %s and %s (%d and %d sparse dims); they must " ..
            "match"):format(op, shape_str(a.shape), shape_str(b.shape), a._i:size(1),
            b._i:size(1)))
    end
    same_device(op, a._v, b._v)
    local bv = sign > 0 and b._v or -b._v
    local tide = require("tide")
    local out = make(tide.cat({ a._i, b._i:to(a._i.device) }, 2),
        tide.cat({ a._v, bv:to(a.dtype) }), a:size(), false)
    -- two coalesced ones give a coalesced sum, as PyTorch's
    return (a._coalesced and b._coalesced) and out:coalesce() or out
end

function Sparse.__add(a, b)
    return sum_with("add", a, b, 1)
end
Sparse.add = Sparse.__add

function Sparse.__sub(a, b)
    return sum_with("sub", a, b, -1)
end
Sparse.sub = Sparse.__sub

function Sparse.__unm(a)
    return make(a._i, -a._v, a:size(), a._coalesced)
end

-- the sum of every entry (a 0-d dense tensor), or over one sparse dim of a 2-D matrix: a
-- dense vector (torch.sparse.sum gives a sparse one; to_dense() of it is this)
function Sparse:sum(dim)
    local n = #self.shape
    if type(dim) == "table" and not is_tensor(dim) then -- a list of dims: all of them, or one
        local seen, count = {}, 0
        for k = 1, #dim do
            local dk = args.dim_of("sum", self, dim[k])
            count = count + (seen[dk] and 0 or 1)
            seen[dk] = true
        end
        if count == n then
            dim = nil
        elseif count == 1 then
            dim = dim[1]
        else
            raise(("tide: sum: over a list of dims, a sparse tensor sums over all of them or " ..
                "one, got %d of %d"):format(count, n))
        end
    end
    if dim == nil then
        return self._v:sum()
    end
    local d = args.integer("sum", dim, "dim")
    d = d < 0 and d + n + 1 or d
    if self._i:size(1) ~= 2 or n ~= 2 or (d ~= 1 and d ~= 2) then
        raise(("tide: sum: over a dim, a 2-D sparse matrix sums over dim 1 or 2; got dim %s " ..
            "of size %s"):format(tostring(dim), shape_str(self.shape)))
    end
    local keep = self._i:select(1, 3 - d)
    local out = core.zeros({ self.shape[3 - d] }, { dtype = self.dtype, device = self.device })
    return out:index_add(1, keep, self._v)
end

-- ---- printing: the indices and values as tensors print (a GPU tensor's copied to the host)
function Sparse:__tostring()
    local body = function(t)
        return (tostring(t):gsub("\n%[tide%.Tensor[^\n]*%]$", ""))
    end
    return ("indices:\n%s\nvalues:\n%s\n[tide.SparseTensor (COO) of shape [%s], %d stored, " ..
        "%s, %s]"):format(body(self._i), body(self._v), table.concat(self.shape, ", "),
        self._i:size(2), self.dtype, tostring(self.device))
end

return Sparse
