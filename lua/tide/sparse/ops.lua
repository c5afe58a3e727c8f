-- tide.sparse_coo_tensor, tide.spmm and t:to_sparse(): the entry points of tide's COO sparse
-- tensors (lua/tide/sparse/coo.lua), loaded on first use (lua/tide/_lazy_ops.lua).
local core = require("tide.core")
local args = require("tide.op_args")
local raise = require("tide.autograd.raise")
local Sparse = require("tide.sparse.coo")

local M = { functions = {} }
local F = M.functions
local Tensor = core.Tensor

-- a Lua list given for indices or values becomes a tensor as tide.tensor makes it
local function as_tensor(v, opts)
    if type(v) == "table" and getmetatable(v) == nil then -- not a complex / sparse tensor
        return core.tensor(v, opts)
    end
    return v
end

-- tide.sparse_coo_tensor(indices, values[, size][, {dtype =, device =, requires_grad =,
-- check_invariants =}]): PyTorch's; indices [sparse_dim, nnz] are 1-based
local OPTIONS = { "dtype", "device", "requires_grad", "check_invariants", "is_coalesced" }
function F.sparse_coo_tensor(indices, values, size, opts, ...)
    local op = "sparse_coo_tensor"
    if opts == nil and type(size) == "table" and not core.is_tensor(size) and
        (size[1] == nil and next(size) ~= nil) then
        size, opts = nil, size -- (indices, values, {options})
    end
    args.no_extra(op, 4, ...)
    local o = args.options(op, opts, OPTIONS, "{dtype = tide.float64}")
    if o.requires_grad ~= nil and type(o.requires_grad) ~= "boolean" then
        raise(("tide: %s: requires_grad must be a boolean, got %s"):format(op,
            type(o.requires_grad)))
    end
    indices = as_tensor(indices, { dtype = "int64", device = o.device })
    values = as_tensor(values, { dtype = o.dtype, device = o.device })
    if core.is_tensor(values) and (o.dtype or o.device) then
        values = values:to(o.device or values.device, o.dtype or values.dtype)
    end
    if core.is_tensor(indices) and core.is_tensor(values) and indices.device ~= values.device
        and o.device then
        indices = indices:to(values.device)
    end
    local t = Sparse.new(op, indices, values, size)
    if o.is_coalesced then
        t = t:coalesce()
    end
    if o.requires_grad then
        values = t._v:detach():requires_grad_(true)
        t._v = values
    end
    return t
end

-- tide.spmm(sparse, dense): torch.spmm
function F.spmm(a, b, ...)
    args.no_extra("spmm", 2, ...)
    return Sparse.mm(a, b, "spmm")
end

-- t:to_sparse([sparse_dim]): the nonzero entries of a dense tensor as a coalesced COO tensor
-- (gradients reach t through the values); with sparse_dim, an entry is a slice over the first
-- sparse_dim dims with a nonzero in it (values [nnz, the other dims...]), as PyTorch's
function Tensor.to_sparse(t, sparse_dim, ...)
    local op = "to_sparse"
    args.no_extra(op, 2, ...)
    args.check(op, t)
    local n = t:dim()
    if n == 0 then
        raise("tide: to_sparse: a 0-d tensor has no dims to index; reshape it to {1} first")
    end
    local k = sparse_dim == nil and n or args.integer(op, sparse_dim, "sparse_dim")
    if k < 1 or k > n then
        raise(("tide: to_sparse: sparse_dim must be 1..%d (the tensor's dims), got %d"):format(n,
            k))
    end
    local mask = t:ne(0)
    if k == n then
        local indices = mask:nonzero():t():contiguous()
        return Sparse.new(op, indices, t:masked_select(mask), t:size()):coalesce()
    end
    for d = n, k + 1, -1 do
        mask = mask:any(d)
    end
    local indices = mask:nonzero():t():contiguous()
    local at = {}
    for d = 1, k do
        at[d] = indices[d]
    end
    return Sparse.new(op, indices, t[at], t:size()):coalesce()
end

-- t:to_dense() of a dense tensor: t itself (PyTorch's, for code that takes either layout)
function Tensor.to_dense(t, ...)
    args.no_extra("to_dense", 1, ...)
    return args.check("to_dense", t)
end

M.names = { "sparse_coo_tensor", "spmm" }
return M
