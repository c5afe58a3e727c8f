-- sparse_spec.lua — tide's sparse COO tensors (tide.sparse_coo_tensor, t:to_sparse(),
-- tide.spmm, tide.sparse.mm / addmm / sum, tide.mm with a sparse first operand), PyTorch's
-- values (1.13, computed with the same entries; indices here are PyTorch's + 1), gradients to
-- the values and the dense operand, the device rules, and the errors a user meets; on the
-- device under test.
local tide = require("tide")
local D = require("spec.support.device")

local DEV = D.name

local function catch(f, ...)
    local ok, err = pcall(f, ...)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

local function f64(t)
    return tide.tensor(t, { dtype = tide.float64, device = DEV })
end

local function same(want, got, tol)
    local g = got:to("cpu"):totable()
    local function walk(w, v, path)
        if type(w) == "table" then
            assert.are.equal(#w, #v, "length at " .. path)
            for k = 1, #w do
                walk(w[k], v[k], path .. "." .. k)
            end
        else
            assert.is_true(math.abs(w - v) <= (tol or 0), ("%s: want %s, got %s"):format(path,
                tostring(w), tostring(v)))
        end
    end
    walk(want, g, "")
end

-- PyTorch's i = [[0, 2, 1, 0, 2], [1, 3, 0, 1, 0]] (the entry (0, 1) twice), v, shape (3, 4)
local I = { { 1, 3, 2, 1, 3 }, { 2, 4, 1, 2, 1 } }
local V = { 1.5, -2.0, 3.0, 0.5, 4.0 }

local function example(requires_grad)
    local v = f64(V)
    if requires_grad then
        v:requires_grad_(true)
    end
    return tide.sparse_coo_tensor(tide.tensor(I, { dtype = tide.int64, device = DEV }), v,
        { 3, 4 }), v
end

describe("sparse COO tensors (" .. DEV .. ")", function()
    it("multiply a dense matrix, duplicates summed, gradients to both operands", function()
        local s, v = example(true)
        assert.is_true(s.is_sparse)
        assert.is_true(tide.isinstance(s, tide.SparseTensor))
        assert.is_false(tide.isinstance(v, tide.SparseTensor))
        assert.is_false(v.is_sparse)
        assert.are.equal(v, v:to_dense()) -- a dense tensor's is itself
        assert.are.equal("sparse_coo", s.layout)
        assert.are.same({ 3, 4 }, s.shape)
        assert.are.equal(4, s:size(2))
        assert.are.equal(5, s:_nnz())
        assert.are.equal(DEV, tostring(s.device))
        assert.is_true(s.requires_grad)
        local x = f64({ { 1, 2 }, { 3, 4 }, { 5, 6 }, { 7, 8 } }):requires_grad_(true)
        local y = tide.sparse.mm(s, x)
        same({ { 6, 8 }, { 3, 6 }, { -10, -8 } }, y)
        assert.are.equal(DEV, tostring(y.device))
        local w = f64({ { 1, -1 }, { 2, 0.5 }, { 0.25, 3 } })
        y:mul(w):sum():backward()
        same({ { 7, 13.5 }, { 2, -2 }, { 0, 0 }, { -0.5, -6 } }, x.grad)
        same({ -1, 25.75, 3, -1, 6.25 }, v.grad)
        -- the same product under its other names; a vector operand gives a vector
        local sd, xd = s:detach(), x:detach()
        same({ { 6, 8 }, { 3, 6 }, { -10, -8 } }, tide.spmm(sd, xd))
        same({ { 6, 8 }, { 3, 6 }, { -10, -8 } }, tide.mm(sd, xd))
        same({ { 6, 8 }, { 3, 6 }, { -10, -8 } }, sd:mm(xd))
        same({ { 6, 8 }, { 3, 6 }, { -10, -8 } }, sd:matmul(xd))
        same({ 4, 3, -4 }, sd:mm(f64({ 1, 2, 3, 4 })))
        -- dense @ sparse (PyTorch 2.x's torch.mm(dense, sparse)): through the transposes
        same({ { 7, 2, 0, -2 }, { 14, 4, 0, -4 } }, tide.mm(f64({ { 1, 1, 1 }, { 2, 2, 2 } }), sd))
        same({ { 12.5, 16.5 }, { 6.5, 12.5 }, { -19.5, -15.5 } },
            tide.sparse.addmm(f64({ { 1, 1 }, { 1, 1 }, { 1, 1 } }), sd, xd,
                { beta = 0.5, alpha = 2 }))
        -- torch.addmm(mat, sparse, dense) is sparse.addmm, as PyTorch 1.13's
        same({ { 12.5, 16.5 }, { 6.5, 12.5 }, { -19.5, -15.5 } },
            tide.addmm(f64({ { 1, 1 }, { 1, 1 }, { 1, 1 } }), sd, xd, { beta = 0.5, alpha = 2 }))
        same({ { 7, 9 }, { 4, 7 }, { -9, -7 } },
            f64({ { 1, 1 }, { 1, 1 }, { 1, 1 } }):addmm(sd, xd))
    end)

    it("coalesce, to_dense, sums and transposes as PyTorch's", function()
        local s = example()
        assert.is_false(s:is_coalesced())
        local c = s:coalesce()
        assert.is_true(c:is_coalesced())
        same({ { 1, 2, 3, 3 }, { 2, 1, 1, 4 } }, c:indices())
        same({ 2, 3, 4, -2 }, c:values())
        assert.are.equal(c, c:coalesce())
        same({ { 0, 2, 0, 0 }, { 3, 0, 0, 0 }, { 4, 0, 0, -2 } }, s:to_dense())
        assert.are.equal(7, tide.sparse.sum(s):item())
        same({ 7, 2, 0, -2 }, tide.sparse.sum(s, 1))
        same({ 2, 3, 2 }, s:sum(2))
        same({ { 0, 3, 4 }, { 2, 0, 0 }, { 0, 0, 0 }, { 0, 0, -2 } }, s:t():to_dense())
        same({ { 0, 3, 4 }, { 2, 0, 0 }, { 0, 0, 0 }, { 0, 0, -2 } },
            s:transpose(2, 1):to_dense())
        same({ { 0, 4, 0, 0 }, { 6, 0, 0, 0 }, { 8, 0, 0, -4 } }, (s * 2):to_dense())
        same({ { 0, 4, 0, 0 }, { 6, 0, 0, 0 }, { 8, 0, 0, -4 } }, (2 * s):to_dense())
        same({ { 0, 1, 0, 0 }, { 1.5, 0, 0, 0 }, { 2, 0, 0, -1 } }, (s / 2):to_dense())
        -- sparse + sparse: both entries (uncoalesced); sparse + dense: the dense sum
        local twice = s + s
        assert.are.equal(10, twice:_nnz())
        same({ { 0, 4, 0, 0 }, { 6, 0, 0, 0 }, { 8, 0, 0, -4 } }, twice:to_dense())
        same({ 0, 0, 0, 0 }, (s - s):coalesce():values())
        same({ { 1, 3, 1, 1 }, { 4, 1, 1, 1 }, { 5, 1, 1, -1 } },
            s + tide.ones({ 3, 4 }, { dtype = tide.float64, device = DEV }))
        -- dense + sparse and dense - sparse too (PyTorch's, pygcn's eye(n) + adj), a gradient
        -- reaching the dense one; a number first raises as PyTorch's
        local e = tide.ones({ 3, 4 }, { dtype = tide.float64, device = DEV }):requires_grad_(true)
        same({ { 1, 3, 1, 1 }, { 4, 1, 1, 1 }, { 5, 1, 1, -1 } }, e + s)
        same({ { 1, -1, 1, 1 }, { -2, 1, 1, 1 }, { -3, 1, 1, 3 } }, e - s)
        same({ { 1, 3, 1, 1 }, { 4, 1, 1, 1 }, { 5, 1, 1, -1 } }, e:add(s))
        ;(e - s):sum():backward()
        same({ { 1, 1, 1, 1 }, { 1, 1, 1, 1 }, { 1, 1, 1, 1 } }, e.grad)
        assert.has_error(function() return 1 + s end, "tide: add: a number first and a sparse " ..
            "tensor second: write the sparse one first, or convert it with t:to_dense()")
        -- a dense tensor of its shape times it (either side): the same entries, each value
        -- times the dense element there (PyTorch's sparse product), its gradient to the dense one
        local w = f64({ { 1, 2, 3, 4 }, { 5, 6, 7, 8 }, { 9, 10, 11, 12 } }):requires_grad_(true)
        local p = w * s
        assert.is_true(p.is_sparse)
        assert.are.equal(s:_nnz(), p:_nnz())
        same({ { 0, 4, 0, 0 }, { 15, 0, 0, 0 }, { 36, 0, 0, -24 } }, p:to_dense())
        same({ { 0, 4, 0, 0 }, { 15, 0, 0, 0 }, { 36, 0, 0, -24 } }, (s * w):to_dense())
        same({ { 0, 4, 0, 0 }, { 6, 0, 0, 0 }, { 8, 0, 0, -4 } }, (s * f64(2)):to_dense())
        p:to_dense():sum():backward()
        same({ { 0, 2, 0, 0 }, { 3, 0, 0, 0 }, { 4, 0, 0, -2 } }, w.grad)
        assert.has_error(function() return e:narrow(1, 1, 2) * s end, "tide: mul: a sparse " ..
            "tensor of size {3, 4} times a dense one of size {2, 4}; they must match (or the " ..
            "dense one be 0-d)")
        assert.has_error(function() return e / s end, "tide: div: expected a tensor or a " ..
            "number, got a sparse tensor (t:to_dense() makes it dense); convert it with " ..
            "tonumber() or tide.tensor()")
        -- the size inferred from the largest index of each dim; values with dense dims
        assert.are.same({ 3, 4 }, tide.sparse_coo_tensor(I, V).shape)
        local h = tide.sparse_coo_tensor({ { 1, 2, 1 } }, { { 1, 2 }, { 3, 4 }, { 5, 6 } },
            { 2, 2 }, { device = DEV })
        assert.are.equal(1, h:sparse_dim())
        assert.are.equal(1, h:dense_dim())
        same({ { 6, 8 }, { 3, 4 } }, h:to_dense())
    end)

    it("come from a dense tensor with to_sparse, its gradient through the values", function()
        local d = f64({ { 0, 1, 0 }, { 2, 0, -3 } })
        local s = d:to_sparse()
        assert.is_true(s:is_coalesced())
        same({ { 1, 2, 2 }, { 2, 1, 3 } }, s:indices())
        same({ 1, 2, -3 }, s:values())
        same({ { 0, 1, 0 }, { 2, 0, -3 } }, s:to_dense())
        local w = f64({ { 0, 5, 0 }, { 1, 0, 2 } }):requires_grad_(true)
        w:to_sparse():to_dense():mul(f64({ { 1, 2, 3 }, { 4, 5, 6 } })):sum():backward()
        same({ { 0, 2, 0 }, { 4, 0, 6 } }, w.grad) -- only the stored entries
    end)

    it("move between devices as tensors do; an operation needs one device", function()
        local s = example()
        assert.are.equal(s, s:to(DEV))
        local o = s:to(D.other)
        assert.are.equal(D.other, tostring(o.device))
        assert.are.equal(D.other, tostring(o:_indices().device))
        assert.are.equal("float32", s:float().dtype)
        local x = tide.ones({ 4, 2 }, { dtype = tide.float64, device = DEV })
        assert.matches("tide: spmm: expected all tensors on the same device, found " ..
            D.other .. " and " .. DEV, catch(tide.spmm, o, x), 1, true)
        assert.matches("indices:\n[[1, 3, 2, 1, 3],", tostring(s), 1, true)
        assert.matches("[tide.SparseTensor (COO) of shape [3, 4], 5 stored, float64, " .. DEV ..
            "]", tostring(s), 1, true)
    end)

    it("name what is wrong", function()
        local s = example()
        local x = tide.ones({ 4, 2 }, { dtype = tide.float64, device = DEV })
        assert.matches("tide: sparse_coo_tensor: index 4 is out of range for dim 2 of size 3; " ..
            "indices are 1-based: use 1..3", catch(tide.sparse_coo_tensor, I, V, { 3, 3 }), 1,
            true)
        assert.matches("tide: sparse_coo_tensor: indices are 1-based: found 0",
            catch(tide.sparse_coo_tensor, { { 0, 1 } }, { 1, 2 }), 1, true)
        assert.matches("tide: sparse_coo_tensor: values must be [nnz, dense dims...] with " ..
            "nnz = 2", catch(tide.sparse_coo_tensor, { { 1, 2 } }, { 1, 2, 3 }), 1, true)
        assert.matches("tide: sparse_coo_tensor: unknown option",
            catch(tide.sparse_coo_tensor, I, V, { 3, 4 }, { dtyp = tide.float64 }), 1, true)
        assert.matches("tide: sparse.mm: shapes {3, 4} and {3, 2} cannot be multiplied",
            catch(tide.sparse.mm, s, tide.ones({ 3, 2 }, { device = DEV })), 1, true)
        assert.matches("tide: indices: the sparse tensor is not coalesced",
            catch(s.indices, s), 1, true)
        -- a dense tensor's method a sparse one has not: a tide error, not Lua's nil call
        assert.matches("tide: gt: a sparse tensor has no gt; convert it with t:to_dense()",
            catch(function() return s:gt(s) end), 1, true)
        assert.matches("tide: add: sparse tensors of sizes {3, 4} and {1, 1} (2 and 2 sparse dims)",
            catch(function() return s + tide.sparse_coo_tensor({ { 1 }, { 1 } }, { 1 }) end), 1,
            true)
        -- dense ops name a sparse operand and how to make it dense
        assert.matches("tide: matmul: argument #1 must be a tensor, got a sparse tensor " ..
            "(t:to_dense() makes it dense)", catch(tide.matmul, s, x), 1, true)
        assert.matches("tide: div: expected a tensor or a number, got a sparse tensor",
            catch(function() return x:t() / s end), 1, true)
        -- a dense tensor plus a sparse one is the dense sum: shapes must broadcast
        assert.matches("tide: add: shapes [2, 4] and [3, 4] cannot be broadcast",
            catch(function() return x:t() + s end), 1, true)
    end)
end)
