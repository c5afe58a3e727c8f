-- sparse_values_spec.lua — tide's sparse COO tensors against PyTorch 1.13's names and values
-- (torch.sparse_coo_tensor and friends; values pasted from PyTorch, indices here PyTorch's + 1
-- as docs/API.md documents). pending(...) marks a difference left, with its reason.
local tide = require("tide")

local function catch(f, ...)
    local ok, err = pcall(f, ...)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

local function same(want, got, tol)
    local g = type(got) == "table" and got or got:totable()
    local function walk(w, v, path)
        if type(w) == "table" then
            assert.are.equal(#w, #v, "length at " .. path)
            for k = 1, #w do
                walk(w[k], v[k], path .. "." .. k)
            end
        elseif type(w) == "boolean" then
            assert.are.equal(w, v, path)
        else
            assert.is_true(math.abs(w - v) <= (tol or 1e-12), ("%s: want %s, got %s"):format(path,
                tostring(w), tostring(v)))
        end
    end
    walk(want, g, "")
end

local function f64(t)
    return tide.tensor(t, { dtype = tide.float64 })
end

-- PyTorch: i = [[0, 2, 1, 0, 2], [1, 3, 0, 1, 0]], v = [1.5, -2, 3, 0.5, 4], size (3, 4)
local I = { { 1, 3, 2, 1, 3 }, { 2, 4, 1, 2, 1 } }
local V = { 1.5, -2.0, 3.0, 0.5, 4.0 }
local function example(v)
    return tide.sparse_coo_tensor(tide.tensor(I, { dtype = tide.int64 }), v or f64(V), { 3, 4 })
end
local DENSE = { { 1, 0, 2, 0 }, { 0, 0, 0, 3 }, { 4, 0, 0, 0 } }
local W = { { 1, 2, 3, 4 }, { 5, 6, 7, 8 }, { 9, 10, 11, 12 } }

describe("sparse COO tensors against PyTorch 1.13", function()
    it("construct, coalesce, indices / values, to_dense, attributes", function()
        local s = example()
        assert.are.same({ 3, 4 }, tide.sparse_coo_tensor(I, f64(V)).shape) -- size inferred
        assert.are.equal("float64", s.dtype)
        assert.are.equal("cpu", tostring(s.device))
        assert.are.equal("sparse_coo", s.layout) -- torch.sparse_coo, tide's spelling
        assert.is_true(s.is_sparse)
        assert.is_false(s.requires_grad)
        assert.is_false(s:is_coalesced())
        assert.are.equal(5, s:_nnz())
        assert.are.same({ 2, 0, 12, 12, 2 }, { s:sparse_dim(), s:dense_dim(), s:numel(),
            s:nelement(), s:dim() })
        assert.are.equal(2, s.ndim)
        assert.is_false(s.is_cuda)
        assert.is_true(s:is_floating_point())
        assert.is_false(s:is_complex())
        assert.are.equal(8, s:element_size())
        assert.is_nil(s.grad)
        local c = s:coalesce()
        assert.is_true(c:is_coalesced())
        assert.is_true(rawequal(c, c:coalesce()))
        assert.are.equal(4, c:_nnz())
        same({ { 1, 2, 3, 3 }, { 2, 1, 1, 4 } }, c:indices())
        same({ 2.0, 3.0, 4.0, -2.0 }, c:values())
        same({ { 0, 2, 0, 0 }, { 3, 0, 0, 0 }, { 4, 0, 0, -2 } }, s:to_dense())
        -- 0 or 1 entries are coalesced at construction (PyTorch's)
        local one = tide.sparse_coo_tensor({ { 1 }, { 2 } }, f64({ 1 }), { 2, 2 })
        assert.is_true(one:is_coalesced())
        assert.is_false(tide.sparse_coo_tensor({ { 1, 2 }, { 2, 2 } }, f64({ 1, 2 }), { 2, 2 })
            :is_coalesced())
        -- list values: int64 from integers, the default dtype from floats, dtype = given
        assert.are.equal("int64", tide.sparse_coo_tensor(I, { 1, 2, 3, 4, 5 }, { 3, 4 }).dtype)
        assert.are.equal(tide.get_default_dtype(),
            tide.sparse_coo_tensor(I, { 1.5, 2, 3, 4, 5 }, { 3, 4 }).dtype)
        assert.are.equal("float32", tide.sparse_coo_tensor(I, { 1, 2, 3, 4, 5 }, { 3, 4 },
            { dtype = tide.float32 }).dtype)
    end)

    it("to_sparse from dense, with sparse_dim", function()
        local d = f64(DENSE)
        local sp = d:to_sparse()
        assert.is_true(sp:is_coalesced())
        same({ { 1, 1, 2, 3 }, { 1, 3, 4, 1 } }, sp:indices())
        same({ 1, 2, 3, 4 }, sp:values())
        local sp1 = d:to_sparse(1)
        assert.are.same({ 1, 1 }, { sp1:sparse_dim(), sp1:dense_dim() })
        assert.is_true(sp1:is_coalesced())
        same({ { 1, 2, 3 } }, sp1:indices())
        same(DENSE, sp1:values())
        same(DENSE, sp1:to_dense())
        assert.matches("tide: to_sparse: sparse_dim must be 1..2", catch(d.to_sparse, d, 3))
    end)

    it("sparse + sparse, sparse * scalar, sparse * dense", function()
        local s = example()
        local c = s:coalesce()
        same({ { 0, 4, 0, 0 }, { 6, 0, 0, 0 }, { 8, 0, 0, -4 } }, (s + s):to_dense())
        assert.is_false((s + s):is_coalesced())
        local cc = c + c -- two coalesced: coalesced, nnz 4
        assert.is_true(cc:is_coalesced())
        assert.are.equal(4, cc:_nnz())
        same({ 4, 6, 8, -4 }, cc:values())
        assert.is_true((c - c):is_coalesced())
        same({ { 0, 0, 0, 0 }, { 0, 0, 0, 0 }, { 0, 0, 0, 0 } }, (s - c):to_dense())
        same({ { 1, 2, 2, 0 }, { 3, 0, 0, 3 }, { 8, 0, 0, -2 } }, f64(DENSE) + s)
        assert.is_false((s * 2):is_coalesced())
        assert.is_true((c * 2):is_coalesced())
        assert.is_true((-c):is_coalesced())
        assert.is_true((c / 2):is_coalesced())
        local sd = s * f64(DENSE)
        assert.are.equal(5, sd:_nnz())
        assert.is_false(sd:is_coalesced())
        same({ { 0, 0, 0, 0 }, { 0, 0, 0, 0 }, { 16, 0, 0, 0 } }, sd:to_dense())
        assert.is_true((c * f64(DENSE)):is_coalesced())
    end)

    it("sparse.mm / @ / mv: values and gradients to the dense operand and the values", function()
        local x = f64({ { 1, 2 }, { 3, 4 }, { 5, 6 }, { 7, 8 } }):requires_grad_(true)
        local v = f64(V):requires_grad_(true)
        local y = tide.sparse.mm(example(v), x)
        same({ { 6, 8 }, { 3, 6 }, { -10, -8 } }, y)
        y:sum():backward()
        same({ { 7, 7 }, { 2, 2 }, { 0, 0 }, { -2, -2 } }, x.grad)
        same({ 7, 15, 3, 7, 3 }, v.grad)
        local s = example()
        same({ { 6, 8 }, { 3, 6 }, { -10, -8 } }, s:matmul(x:detach()))
        same({ 2, 3, 2 }, s:mv(tide.ones({ 4 }, { dtype = tide.float64 })))
        same({ { 5, 6 }, { 3.5, 5 }, { -3, -2 } }, tide.sparse.addmm(tide.ones({ 3, 2 },
            { dtype = tide.float64 }), s, x:detach(), { beta = 2, alpha = 0.5 }))
    end)

    it("sparse.sum over all, a dim, a list of dims; dtypes", function()
        local s = example()
        same({ 7 }, { tide.sparse.sum(s):item() })
        same({ 7, 2, 0, -2 }, tide.sparse.sum(s, 1))
        same({ 2, 3, 2 }, tide.sparse.sum(s, 2))
        same({ 2, 3, 2 }, tide.sparse.sum(s, { 2 }))
        same({ 7 }, { tide.sparse.sum(s, { 1, 2 }):item() })
        local si = example(tide.tensor({ 1, 2, 3, 4, 5 }, { dtype = tide.int64 }))
        assert.are.equal("int64", si.dtype)
        same({ { 0, 5, 0, 0 }, { 3, 0, 0, 0 }, { 5, 0, 0, 2 } }, si:to_dense())
        same({ 5, 3, 5, 2 }, si:coalesce():values())
        assert.are.equal("int64", tide.sparse.sum(si).dtype)
        same({ 15 }, { tide.sparse.sum(si):item() })
        same({ { 0, 2.5, 0, 0 }, { 1.5, 0, 0, 0 }, { 2.5, 0, 0, 1 } }, (si * 0.5):to_dense())
        assert.are.equal(tide.get_default_dtype(), (si / 2).dtype)
        local sb = example(tide.tensor({ true, false, true, true, false }))
        assert.are.equal("bool", sb.dtype)
        same({ { false, true, false, false }, { true, false, false, false },
            { false, false, false, false } }, sb:to_dense())
        same({ true, true, false, false }, sb:coalesce():values())
        assert.are.equal("int64", tide.sparse.sum(sb).dtype)
    end)

    it("sparse.softmax / log_softmax over the stored entries, with gradients", function()
        local v = f64(V):requires_grad_(true)
        local r = tide.sparse.softmax(example(v), 2)
        assert.is_true(r.is_sparse and r:is_coalesced())
        same({ { 1, 2, 3, 3 }, { 2, 1, 1, 4 } }, r:indices())
        same({ 1, 1, 0.9975273768433653, 0.0024726231566347748 }, r:values(), 1e-12)
        r:to_dense():mul(f64(W)):sum():backward()
        same({ 0, 0.00739952787408014, 0, 0, -0.007399527874081897 }, v.grad, 1e-12)
        v.grad = nil
        local l = tide.sparse.log_softmax(example(v), 1)
        same({ { 0, 0, 0, 0 }, { -1.3132616875182226, 0, 0, 0 },
            { -0.3132616875182226, 0, 0, 0 } }, l:to_dense(), 1e-12)
        l:to_dense():mul(f64(W)):sum():backward()
        same({ 0, 0, 1.234820100820067, 0, -1.2348201008200697 }, v.grad, 1e-12)
        same({ { 0, 0, 0, 0 }, { 0, 0, 0, 0 },
            { -0.0024756851377301103, 0, 0, -6.00247568513773 } },
            tide.sparse.log_softmax(example(), 2):to_dense(), 1e-12)
        -- hybrid: over the sparse dim, and over the dense one
        local h = tide.sparse_coo_tensor({ { 1, 3 } }, f64({ { 1, 2 }, { 3, 4 } }), { 3, 2 })
        same({ { 0.11920292202211755, 0.11920292202211755 }, { 0, 0 },
            { 0.8807970779778823, 0.8807970779778823 } }, tide.sparse.softmax(h, 1):to_dense(),
            1e-12)
        same({ { 0.26894142136999516, 0.7310585786300049 }, { 0, 0 },
            { 0.26894142136999516, 0.7310585786300049 } }, tide.sparse.softmax(h, 2):to_dense(),
            1e-12)
        local h3 = tide.sparse_coo_tensor({ { 1, 2, 2 }, { 1, 1, 3 }, { 2, 2, 1 } },
            f64({ 1, 2, 3 }), { 2, 3, 2 })
        same({ { { 0, 1 }, { 0, 0 }, { 0, 0 } }, { { 0, 1 }, { 0, 0 }, { 1, 0 } } },
            tide.sparse.softmax(h3, 2):to_dense())
    end)

    it("t / transpose, narrow_copy, index_select", function()
        local s = example()
        local t = s:t()
        assert.are.same({ 4, 3 }, t.shape)
        assert.is_false(t:is_coalesced())
        assert.is_false(s:coalesce():t():is_coalesced())
        same({ { 2, 4, 1, 2, 1 }, { 1, 3, 2, 1, 3 } }, t:_indices())
        assert.are.same({ 4, 3 }, s:transpose(1, 2).shape)
        local n = s:narrow_copy(2, 2, 2)
        assert.are.same({ 3, 2 }, n.shape)
        assert.is_false(n:is_coalesced())
        same({ { 1, 1 }, { 1, 1 } }, n:_indices())
        same({ 1.5, 0.5 }, n:_values())
        same({ { 2, 0 }, { 0, 0 }, { 0, 0 } }, n:to_dense())
        local nc = s:coalesce():narrow_copy(2, 2, 2)
        assert.are.same({ 1, true }, { nc:_nnz(), nc:is_coalesced() })
        local x = s:index_select(2, tide.tensor({ 4, 1 }))
        assert.are.same({ 3, false }, { x:_nnz(), x:is_coalesced() })
        same({ { 3, 2, 3 }, { 1, 2, 2 } }, x:_indices())
        same({ -2, 3, 4 }, x:_values())
        same({ { 0, 0 }, { 0, 3 }, { -2, 4 } }, x:to_dense())
        local x0 = s:index_select(1, tide.tensor({ 3, 3 }))
        same({ { 1, 1, 2, 2 }, { 4, 1, 4, 1 } }, x0:_indices())
        same({ -2, 4, -2, 4 }, x0:_values())
        local h = tide.sparse_coo_tensor({ { 1, 3 } }, f64({ { 1, 2 }, { 3, 4 } }), { 3, 2 })
        same({ { 2 }, { 0 }, { 4 } }, h:narrow_copy(2, 2, 1):to_dense())
        same({ { 2, 2 }, { 0, 0 }, { 4, 4 } }, h:index_select(2, tide.tensor({ 2, 2 })):to_dense())
        assert.matches("tide: index_select: index 5 is out of range for dim 2 of size 4",
            catch(s.index_select, s, 2, tide.tensor({ 5 })))
        assert.matches("tide: narrow_copy: start 3 and length 3 are out of range",
            catch(s.narrow_copy, s, 2, 3, 3))
    end)

    it("hybrid and empty tensors", function()
        local h = tide.sparse_coo_tensor({ { 1, 3 } }, f64({ { 1, 2 }, { 3, 4 } }), { 3, 2 })
        assert.are.same({ 1, 1 }, { h:sparse_dim(), h:dense_dim() })
        same({ { 1, 2 }, { 0, 0 }, { 3, 4 } }, h:to_dense())
        assert.are.same({ 3, 2 }, tide.sparse_coo_tensor({ { 1, 3 } }, f64({ { 1, 2 }, { 3, 4 } }))
            .shape)
        local e = tide.sparse_coo_tensor(tide.zeros({ 2, 0 }, { dtype = tide.int64 }),
            tide.zeros({ 0 }, { dtype = tide.float64 }), { 2, 3 })
        assert.are.equal(0, e:_nnz())
        assert.is_true(e:is_coalesced())
        assert.is_true(e:coalesce():is_coalesced())
        same({ { 0, 0, 0 }, { 0, 0, 0 } }, e:to_dense())
        same({ 0 }, { tide.sparse.sum(e):item() })
    end)

    it("errors name the problem", function()
        local i = tide.tensor(I, { dtype = tide.int64 })
        assert.matches("tide: sparse_coo_tensor: index 4 is out of range for dim 2 of size 3; " ..
            "indices are 1%-based: use 1..3", catch(tide.sparse_coo_tensor, i, f64(V), { 3, 3 }))
        assert.matches("tide: sparse_coo_tensor: values must be %[nnz, dense dims...%] with nnz " ..
            "= 5", catch(tide.sparse_coo_tensor, i, f64({ 1, 2, 3, 4 }), { 3, 4 }))
        assert.matches("tide: sparse_coo_tensor: indices are 1%-based: found 0",
            catch(tide.sparse_coo_tensor, i - 1, f64(V), { 3, 4 }))
        assert.matches("tide: sparse.softmax: expected floating%-point values, got int64",
            catch(tide.sparse.softmax, example(tide.tensor({ 1, 2, 3, 4, 5 })), 1))
        assert.matches("indices:.*values:.*%[tide.SparseTensor %(COO%) of shape %[3, 4%], 4 " ..
            "stored, float64, cpu%]", tostring(example():coalesce()))
    end)

    describe("differences left", function()
        pending("s + u of uncoalesced ones: PyTorch's CPU merge gives nnz 5 (s + s) / 7 (c + s), "
            .. "tide concatenates (nnz 10 / 9); to_dense() and coalesce() agree")
        pending("s + d (sparse first): PyTorch 1.13 raises 'add(sparse, dense) is not supported'; "
            .. "tide gives the dense sum (documented)")
        pending("tide.mv(s, vec): lua/tide/products.lua's mv takes dense tensors only (s:mv works)")
        pending("s.is_leaf: PyTorch's is false for a sparse tensor built from values that need " ..
            "grad (grad_fn SparseCooTensorWithDims); tide's sparse tensor has none (nil)")
        pending("sparse.sum(t, dim): PyTorch's result is sparse; tide's is dense (its to_dense(), "
            .. "documented)")
        pending("printing: PyTorch's tensor(indices=..., values=..., size=(3, 4), nnz=4, " ..
            "layout=torch.sparse_coo); tide's format is its own (documented)")
        pending("elementwise ops on a sparse tensor (abs, pow, sqrt, zero_, add_) and dense " ..
            "d:sparse_mask(s): not in tide (a sparse one's raise naming to_dense())")
    end)
end)
