-- tide.products: the matrix products PyTorch scripts call by their BLAS names, written with
-- matmul and its broadcasting (docs/API.md, "The wider surface"): outer, bmm, addmm. Each
-- checks the ranks PyTorch checks (matmul alone would broadcast where they refuse), then
-- records matmul and the element-wise ops, which autograd differentiates. Tensor methods, and
-- tide.X functions.
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local args = require("tide.op_args")
local same_device = require("tide._same_device")
local autocast = require("tide._autocast")

local Tensor = core.Tensor
local check, shape_str = args.check, args.shape_str

local M = { functions = {} }

local function rank(op, t, n, what)
    if t:dim() ~= n then
        raise(("tide: %s: %s must be %d-D, got %s"):format(op, what, n, shape_str(t:size())))
    end
end

-- outer(b): the [n, m] products a_i b_j of two 1-D tensors; ger is PyTorch's older name
local function outer(op)
    return function(a, b, ...)
        if type(a) == "table" and require("tide.complex.tensor").is(a) then -- complex: its own
            return a[op](a, b, ...)
        end
        args.no_extra(op, 2, ...)
        check(op, a)
        check(op, b, 2)
        rank(op, a, 1, "the first vector")
        rank(op, b, 1, "the second vector")
        return a:view(-1, 1) * b
    end
end
Tensor.outer, Tensor.ger = outer("outer"), outer("ger")

-- bmm(b): [B, n, m] @ [B, m, p] -> [B, n, p], without broadcasting (op: the name errors
-- give, baddbmm's and addbmm's too; pos: batch1's argument position)
local function bmm(op, a, b, pos)
    check(op, a, pos)
    check(op, b, pos + 1)
    same_device(op, a, b)
    rank(op, a, 3, "batch1")
    rank(op, b, 3, "batch2")
    if a:size(1) ~= b:size(1) or a:size(3) ~= b:size(2) then
        raise(("tide: %s: batch1 %s and batch2 %s do not match: expected [B, n, m] and " ..
            "[B, m, p]"):format(op, shape_str(a:size()), shape_str(b:size())))
    end
    return a:matmul(b)
end
function Tensor.bmm(a, b, ...)
    args.no_extra("bmm", 2, ...)
    return bmm("bmm", a, b, 1)
end

-- beta x + alpha p, PyTorch's way: beta = 0 leaves x out (its NaNs too; its gradient zeros);
-- x must broadcast to p
local function scaled_sum(op, x, p, beta, alpha)
    if not pcall(x.expand, x, p:size()) then
        raise(("tide: %s: input %s does not broadcast to the product's shape %s")
            :format(op, shape_str(x:size()), shape_str(p:size())))
    end
    if autocast.on then -- PyTorch's lower-precision list: the whole op in the region's dtype
        x, p = autocast.lower(x, p)
    end
    if alpha ~= 1 then
        p = p * alpha
    end
    if beta == 0 then -- x's gradient is zeros, as PyTorch's (a false where: no NaN reaches p)
        if autograd.needs_record(x) then
            return p + x:where(x:new_zeros({}, { dtype = "bool" }), 0)
        end
        return p
    end
    return p + (beta == 1 and x or x * beta)
end

local ADDMM_OPTIONS = { "beta", "alpha" }

-- addmm(m1, m2[, {beta = 1, alpha = 1}]): beta x + alpha (m1 @ m2), m1 and m2 2-D, x
-- broadcastable to the product's shape; beta = 0 leaves x out (its NaNs too), as PyTorch
function Tensor.addmm(x, m1, m2, opts, ...)
    args.no_extra("addmm", 4, ...)
    if type(m1) == "table" and require("tide.sparse.coo").is(m1) then -- PyTorch's addmm(x,
        return require("tide.sparse").addmm(x, m1, m2, opts) -- sparse, dense): sparse.addmm's
    end
    check("addmm", x)
    check("addmm", m1, 2)
    check("addmm", m2, 3)
    local o = args.options("addmm", opts, ADDMM_OPTIONS, "{beta = 0.5}")
    local beta, alpha = o.beta or 1, o.alpha or 1
    if type(beta) ~= "number" or type(alpha) ~= "number" then
        raise("tide: addmm: beta and alpha must be numbers")
    end
    rank("addmm", m1, 2, "mat1")
    rank("addmm", m2, 2, "mat2")
    if m1:size(2) ~= m2:size(1) then
        raise(("tide: addmm: mat1 %s and mat2 %s cannot be multiplied (%d columns, %d rows)")
            :format(shape_str(m1:size()), shape_str(m2:size()), m1:size(2), m2:size(1)))
    end
    return scaled_sum("addmm", x, m1:matmul(m2), beta, alpha)
end

-- tensordot(b[, dims = 2]): contracts dims of a with dims of b: an integer k (a's last k with
-- b's first k, in order; 2 when left out, as PyTorch's) or {{a's dims}, {b's dims}} (1-based);
-- a permute, a reshape and a matmul
function Tensor.tensordot(a, b, dims, ...)
    args.no_extra("tensordot", 3, ...)
    check("tensordot", a)
    check("tensordot", b, 2)
    same_device("tensordot", a, b)
    if dims == nil then
        dims = 2
    end
    local da, db = {}, {}
    if type(dims) == "number" then
        local k = args.integer("tensordot", dims, "dims")
        if k < 0 or k > a:dim() or k > b:dim() then
            raise(("tide: tensordot: dims = %d must be between 0 and the smaller rank (%d)")
                :format(k, math.min(a:dim(), b:dim())))
        end
        for i = 1, k do
            da[i], db[i] = a:dim() - k + i, i
        end
    elseif type(dims) == "table" and type(dims[1]) == "table" and type(dims[2]) == "table" and
        #dims[1] == #dims[2] then
        for i = 1, #dims[1] do
            da[i], db[i] = args.dim_of("tensordot", a, dims[1][i]),
                args.dim_of("tensordot", b, dims[2][i])
        end
    else
        raise(("tide: tensordot: dims must be an integer or {{dims of a}, {dims of b}} of equal " ..
            "length, as tide.tensordot(a, b, {{2}, {1}}), got %s")
            :format(core.is_tensor(dims) and "a tensor" or type(dims)))
    end
    local ina, inb = {}, {}
    local perm_a, perm_b, keep_a, keep_b, k_size = {}, {}, {}, {}, 1
    for i = 1, #da do
        if a:size(da[i]) ~= b:size(db[i]) then
            raise(("tide: tensordot: dim %d of a (size %d) and dim %d of b (size %d) differ")
                :format(da[i], a:size(da[i]), db[i], b:size(db[i])))
        end
        ina[da[i]], inb[db[i]], k_size = true, true, k_size * a:size(da[i])
    end
    local m, n = 1, 1
    for d = 1, a:dim() do
        if not ina[d] then
            perm_a[#perm_a + 1], keep_a[#keep_a + 1], m = d, a:size(d), m * a:size(d)
        end
    end
    for _, d in ipairs(da) do
        perm_a[#perm_a + 1] = d
    end
    for _, d in ipairs(db) do
        perm_b[#perm_b + 1] = d
    end
    for d = 1, b:dim() do
        if not inb[d] then
            perm_b[#perm_b + 1], keep_b[#keep_b + 1], n = d, b:size(d), n * b:size(d)
        end
    end
    local out = {}
    for _, v in ipairs(keep_a) do
        out[#out + 1] = v
    end
    for _, v in ipairs(keep_b) do
        out[#out + 1] = v
    end
    local r = a:permute(perm_a):reshape(m, k_size):matmul(b:permute(perm_b):reshape(k_size, n))
    return r:reshape(out)
end

-- the largest of a's last dim, each element that reaches it getting the whole gradient, as
-- PyTorch's cdist(p = inf) gradient does (amax splits it between ties)
autograd.def {
    name = "cdist_largest",
    reads = { 1, "out" },
    backward = function(nd, g)
        return g:unsqueeze(-1) * nd[1]:eq(nd.out:unsqueeze(-1)):to(g.dtype)
    end,
}
local function largest(a)
    local r = autograd.no_grad(function()
        return a:amax(-1)
    end)
    if autograd.needs_record(a) then
        autograd.record("cdist_largest", r, a)
    end
    return r
end

-- PyTorch's _euclidean_dist: |a|^2 + |b|^2 - 2 a.b as one product of [-2 a, |a|^2, 1] and
-- [b, 1, |b|^2], clamped at 1e-30 before the root (so a zero distance is 1e-15, as PyTorch's)
local function euclidean_by_product(x1, x2)
    local n1, n2 = x1:pow(2):sum(-1, true), x2:pow(2):sum(-1, true)
    local a = core.cat({ x1:mul(-2), n1, n1:mul(0):add(1) }, -1)
    local b = core.cat({ x2, n2:mul(0):add(1), n2 }, -1)
    return a:matmul(b:transpose(-1, -2)):clamp_min(1e-30):sqrt()
end

local COMPUTE_MODES = { use_mm_for_euclid_dist_if_necessary = true, use_mm_for_euclid_dist = true,
    donot_use_mm_for_euclid_dist = true }

-- cdist(x2[, {p = 2, compute_mode =}]): the p-norm distances between the rows of x1 [*, P, M]
-- and of x2 [*, R, M], as [*, P, R]; p = 2 by PyTorch's matrix-product shortcut when either side
-- has more than 25 rows (compute_mode "use_mm_for_euclid_dist_if_necessary", the default; a
-- product of [*, P, M + 2] and [*, M + 2, R], not [*, P, R, M] differences), always
-- ("use_mm_for_euclid_dist") or never ("donot_use_mm_for_euclid_dist"); p = math.huge the
-- largest difference, p = 0 the count of differing coordinates; cdist(x2, p) is PyTorch's
-- positional p
function Tensor.cdist(x1, x2, opts, ...)
    args.no_extra("cdist", 3, ...)
    check("cdist", x1)
    check("cdist", x2, 2)
    same_device("cdist", x1, x2)
    args.float_input("cdist", x1) -- (PyTorch's "cdist only supports floating-point dtypes")
    args.float_input("cdist", x2)
    if type(opts) == "number" then
        opts = { p = opts }
    end
    local o = args.options("cdist", opts, { "p", "compute_mode" }, "{p = 1}")
    local p, mode = o.p or 2, o.compute_mode or "use_mm_for_euclid_dist_if_necessary"
    if type(p) ~= "number" or p < 0 then
        raise(("tide: cdist: p must be a number >= 0, got %s"):format(tostring(p)))
    end
    if not COMPUTE_MODES[mode] then
        raise(("tide: cdist: compute_mode must be \"use_mm_for_euclid_dist_if_necessary\", " ..
            "\"use_mm_for_euclid_dist\" or \"donot_use_mm_for_euclid_dist\", got %s")
            :format(tostring(mode)))
    end
    if x1:dim() < 2 or x2:dim() < 2 or x1:size(-1) ~= x2:size(-1) then
        raise(("tide: cdist: expected x1 {*, P, M} and x2 {*, R, M} with the same M, got %s " ..
            "and %s"):format(shape_str(x1:size()), shape_str(x2:size())))
    end
    if p == 2 and (mode == "use_mm_for_euclid_dist" or (mode ~= "donot_use_mm_for_euclid_dist"
        and (x1:size(-2) > 25 or x2:size(-2) > 25))) then
        return euclidean_by_product(x1, x2)
    end
    local d = x1:unsqueeze(-2) - x2:unsqueeze(-3)
    if p == 2 then
        return d:norm(2, -1)
    elseif p == math.huge then
        return largest(d:abs())
    elseif p == 0 then -- (the 0 keeps the graph: gradient 0, as PyTorch's)
        return d:ne(0):to(d.dtype):add(d:mul(0)):sum(-1)
    elseif p == 1 then
        return d:abs():sum(-1)
    end
    -- zero differences kept out of the powers (F.pdist's way), so a pair at zero distance has
    -- gradient 0, as PyTorch's, not 0 * inf
    local a = d:abs()
    local nz = a:gt(0)
    local sum = core.where(nz, core.where(nz, a, 1):pow(p), 0):sum(-1)
    local pos = sum:gt(0)
    return core.where(pos, core.where(pos, sum, 1):pow(1 / p), 0)
end

-- mm(b): [n, m] @ [m, p], both 2-D (matmul alone would broadcast)
function Tensor.mm(a, b, ...)
    args.no_extra("mm", 2, ...)
    local C = require("tide.complex.tensor")
    if C.is(a) or C.is(b) then -- a complex operand (lua/tide/complex/tensor.lua)
        return C.matmul(a, b)
    elseif type(a) == "table" then -- torch.mm(sparse, dense) (lua/tide/sparse/coo.lua)
        return require("tide.sparse.coo").mm(a, b, "mm")
    elseif type(b) == "table" and require("tide.sparse.coo").is(b) then -- dense @ sparse
        check("mm", a)
        return require("tide.sparse.coo").mm(b:t(), a:t(), "mm"):t()
    end
    check("mm", a)
    check("mm", b, 2)
    same_device("mm", a, b)
    rank("mm", a, 2, "self")
    rank("mm", b, 2, "mat2")
    if a:size(2) ~= b:size(1) then
        raise(("tide: mm: self %s and mat2 %s cannot be multiplied (%d columns, %d rows)")
            :format(shape_str(a:size()), shape_str(b:size()), a:size(2), b:size(1)))
    end
    return a:matmul(b)
end

-- mv(v): [n, m] @ [m] -> [n] (op and pos as bmm's)
local function mv(op, a, v, pos)
    check(op, a, pos)
    check(op, v, pos + 1)
    same_device(op, a, v)
    local what = op == "mv" and "self" or "mat"
    rank(op, a, 2, what)
    rank(op, v, 1, "vec")
    if a:size(2) ~= v:size(1) then
        raise(("tide: %s: %s %s and vec %s cannot be multiplied (%d columns, %d elements)")
            :format(op, what, shape_str(a:size()), shape_str(v:size()), a:size(2), v:size(1)))
    end
    return a:matmul(v)
end
function Tensor.mv(a, v, ...)
    args.no_extra("mv", 2, ...)
    return mv("mv", a, v, 1)
end

-- dot(b): the 0-D sum of a_i b_i of two 1-D tensors of one size and dtype; vdot is dot (tide
-- has no complex dtypes, where vdot conjugates a)
local function dot(op)
    return function(a, b, ...)
        if type(a) == "table" and require("tide.complex.tensor").is(a) then -- complex: its own
            return a[op](a, b, ...)
        end
        args.no_extra(op, 2, ...)
        check(op, a)
        check(op, b, 2)
        same_device(op, a, b)
        rank(op, a, 1, "self")
        rank(op, b, 1, "other")
        if a:size(1) ~= b:size(1) then
            raise(("tide: %s: self and other must have the same number of elements, got %d " ..
                "and %d"):format(op, a:size(1), b:size(1)))
        end
        if a.dtype ~= b.dtype then
            raise(("tide: %s: self and other must have the same dtype, got %s and %s; convert " ..
                "one with :to(\"%s\")"):format(op, a.dtype, b.dtype, a.dtype))
        end
        return a:matmul(b)
    end
end
Tensor.dot, Tensor.vdot = dot("dot"), dot("vdot")

-- inner(b): the sums of products over the last dims of a and b (their sizes must agree), the
-- result a's other dims then b's; a 0-D operand multiplies
function Tensor.inner(a, b, ...)
    args.no_extra("inner", 2, ...)
    check("inner", a)
    check("inner", b, 2)
    same_device("inner", a, b)
    if a:dim() == 0 or b:dim() == 0 then
        return a * b
    end
    if a:size(-1) ~= b:size(-1) then
        raise(("tide: inner: the last dims of self %s and other %s must have the same size")
            :format(shape_str(a:size()), shape_str(b:size())))
    end
    return a:tensordot(b, { { a:dim() }, { b:dim() } })
end

-- beta and alpha of the add* products ({beta = 1, alpha = 1})
local function scales(op, opts)
    local o = args.options(op, opts, ADDMM_OPTIONS, "{beta = 0.5}")
    local beta, alpha = o.beta or 1, o.alpha or 1
    if type(beta) ~= "number" or type(alpha) ~= "number" then
        raise(("tide: %s: beta and alpha must be numbers"):format(op))
    end
    return beta, alpha
end


-- addmv(mat, vec[, {beta = 1, alpha = 1}]): beta x + alpha (mat @ vec)
function Tensor.addmv(x, m, v, opts, ...)
    args.no_extra("addmv", 4, ...)
    check("addmv", x)
    local beta, alpha = scales("addmv", opts)
    return scaled_sum("addmv", x, mv("addmv", m, v, 2), beta, alpha)
end

-- addr(vec1, vec2[, {beta = 1, alpha = 1}]): beta x + alpha outer(vec1, vec2)
function Tensor.addr(x, v1, v2, opts, ...)
    args.no_extra("addr", 4, ...)
    check("addr", x)
    check("addr", v1, 2)
    check("addr", v2, 3)
    same_device("addr", x, v1, v2)
    local beta, alpha = scales("addr", opts)
    rank("addr", v1, 1, "vec1")
    rank("addr", v2, 1, "vec2")
    return scaled_sum("addr", x, v1:view(-1, 1) * v2, beta, alpha)
end

-- baddbmm(b1, b2[, {beta = 1, alpha = 1}]): beta x + alpha bmm(b1, b2)
function Tensor.baddbmm(x, b1, b2, opts, ...)
    args.no_extra("baddbmm", 4, ...)
    check("baddbmm", x)
    local beta, alpha = scales("baddbmm", opts)
    return scaled_sum("baddbmm", x, bmm("baddbmm", b1, b2, 2), beta, alpha)
end

-- addbmm(b1, b2[, {beta = 1, alpha = 1}]): beta x + alpha (the sum over the batch of
-- bmm(b1, b2)), a 2-D result
function Tensor.addbmm(x, b1, b2, opts, ...)
    args.no_extra("addbmm", 4, ...)
    check("addbmm", x)
    local beta, alpha = scales("addbmm", opts)
    return scaled_sum("addbmm", x, bmm("addbmm", b1, b2, 2):sum(1), beta, alpha)
end

-- kron(b): the Kronecker product; the smaller rank takes leading 1s, then dim d has size
-- a_d b_d, with element (i, j) of each dim at (i - 1) b_d + j: a's and b's dims interleaved
-- by a broadcasting product, then merged
function Tensor.kron(a, b, ...)
    args.no_extra("kron", 2, ...)
    check("kron", a)
    check("kron", b, 2)
    same_device("kron", a, b)
    local n = math.max(a:dim(), b:dim())
    local sa, sb, out = {}, {}, {}
    for d = 1, n do
        local ia, ib = d - (n - a:dim()), d - (n - b:dim())
        local x, y = ia >= 1 and a:size(ia) or 1, ib >= 1 and b:size(ib) or 1
        sa[2 * d - 1], sa[2 * d] = x, 1
        sb[2 * d - 1], sb[2 * d] = 1, y
        out[d] = x * y
    end
    if n == 0 then
        return a * b
    end
    return (a:reshape(sa) * b:reshape(sb)):reshape(out)
end

-- chain_matmul(m1, m2, ...) (tide.X only): the 2-D matrices multiplied left to right
function M.functions.chain_matmul(...)
    local n = select("#", ...)
    local ms = { ... }
    if n == 1 and not core.is_tensor(ms[1]) and type(ms[1]) == "table" then
        ms, n = ms[1], #ms[1]
    end
    if n == 0 then
        raise("tide: chain_matmul: expected at least one matrix")
    end
    for i = 1, n do
        check("chain_matmul", ms[i], i)
        rank("chain_matmul", ms[i], 2, "matrix " .. i)
    end
    local r = ms[1]
    for i = 2, n do
        r = Tensor.mm(r, ms[i])
    end
    return n == 1 and r:clone() or r
end

-- the in-place twins: x takes the result (its shape must be the product's)
local with_inplace = require("tide.pointwise").with_inplace
for _, name in ipairs({ "addmm", "addmv", "addr", "baddbmm", "addbmm" }) do
    with_inplace(name, Tensor[name])
end

M.names = { "outer", "ger", "bmm", "addmm", "tensordot", "cdist", "mm", "mv", "dot", "vdot",
    "inner", "addmv", "addr", "baddbmm", "addbmm", "kron", "chain_matmul" }
return M
