-- tensor_gaps_spec.lua — PyTorch's Tensor methods, torch functions and torch.linalg names a
-- ported script reaches for that tide lacked: detach_, sum_to_size, resize_ / resize_as_, new,
-- char / short, split_with_sizes / unsafe_split / unsafe_chunk, nextafter, mvlgamma,
-- index_reduce, prelu / hardshrink, retains_grad and the other attributes, data_ptr,
-- share_memory_ / is_shared, as_strided_; binomial, frobenius_norm, nuclear_norm, trapz,
-- histogramdd, segment_reduce, the deprecated and removed linear-algebra functions,
-- svd_lowrank / pca_lowrank, geqrf / orgqr / ormqr; linalg.matmul, lu_factor_ex, ldl_factor /
-- ldl_factor_ex / ldl_solve. Values against PyTorch 1.13 (spec/fixtures/tensor_gaps_torch.lua,
-- written by spec/fixtures/make_tensor_gaps.py), errors by their exact text.
local tide = require("tide")
local D = require("spec.support.device")
local P = require("spec.support.porting")

local T = dofile("spec/fixtures/tensor_gaps_torch.lua")
local DEV = D.name
local LA = tide.linalg
local V = T.values
local close = P.close

local function t64(v)
    return P.t64(v, DEV)
end

local function on(v, dtype)
    return tide.tensor(v, { dtype = dtype, device = DEV })
end

local function host(t)
    return t:to("cpu"):totable()
end

-- the message of f's error, from "tide:" on (without the position)
local function err(f, ...)
    local ok, e = pcall(f, ...)
    assert.is_false(ok, "expected an error")
    return tostring(e):match("tide: .*") or tostring(e)
end

local function check_case(name, fn, ...)
    P.check_case(T.cases[name], name, DEV, { out = 1e-12, grad = 1e-10 }, fn, ...)
end

local function run_cases(CASES)
    P.run_cases(it, T, CASES, check_case)
end

describe("Tensor methods, PyTorch's values (" .. DEV .. ")", function()
    run_cases({
        sum_to_size = { function(x) return x:sum_to_size(1, 3) end, T.X23 },
        sum_to_size_trailing = { function(x) return x:sum_to_size({ 3 }) end, T.X23 },
        mvlgamma_p1 = { function(x) return tide.mvlgamma(x, 1) end, T.MVL },
        mvlgamma_p3 = { function(x) return x:mvlgamma(3) end, T.MVL },
        index_reduce_prod = { function(x, s)
            return x:index_reduce(1, on({ 1, 3, 1 }), s, "prod")
        end, T.X32, T.SRC32 },
        index_reduce_mean = { function(x, s)
            return x:index_reduce(1, on({ 1, 3, 1 }), s, "mean")
        end, T.X32, T.SRC32 },
        index_reduce_amax = { function(x, s)
            return tide.index_reduce(x, 1, on({ 1, 3, 1 }), s, "amax")
        end, T.X32, T.SRC32 },
        index_reduce_amin = { function(x, s)
            return x:index_reduce(1, on({ 1, 3, 1 }), s, "amin")
        end, T.X32, T.SRC32 },
        index_reduce_prod_excl = { function(x, s)
            return x:index_reduce(1, on({ 1, 3, 1 }), s, "prod", { include_self = false })
        end, T.X32, T.SRC32 },
        index_reduce_mean_excl = { function(x, s)
            return x:index_reduce(1, on({ 1, 3, 1 }), s, "mean", { include_self = false })
        end, T.X32, T.SRC32 },
        index_reduce_amax_dim1 = { function(x, s)
            return x:index_reduce(2, on({ 2, 2, 1 }), s, "amax")
        end, T.X32, T.SRC33 },
        prelu = { function(x, w) return x:prelu(w) end, T.PRELU_X, { 0.25 } },
        prelu_channels = { function(x, w) return tide.prelu(x, w) end, T.PRELU_X,
            { 0.25, -1, 2 } },
        hardshrink = { function(x) return x:hardshrink() end, T.SHRINK },
        hardshrink_lambd = { function(x) return tide.hardshrink(x, 0.3) end, T.SHRINK },
    })

    it("split_with_sizes, unsafe_split, unsafe_chunk", function()
        local x = t64(T.X23)
        local parts = x:split_with_sizes({ 1, 2 }, 2)
        assert.are.equal(2, #parts)
        close(V.split_with_sizes[1], parts[1], 0, "first")
        close(V.split_with_sizes[2], parts[2], 0, "second")
        assert.are.equal(2, #tide.split_with_sizes(x, { 1, 1 }))
        assert.are.equal(3, #x:unsafe_split(1, 2))
        assert.are.equal(2, #tide.unsafe_chunk(x, 2, 2))
        assert.are.equal(2, #tide.unsafe_split(x, 1))
        assert.are.equal(2, #x:unsafe_chunk(3))
    end)

    it("nextafter: one unit in the last place toward other (float64, float32)", function()
        for _, c in ipairs({ { "float64", V.nextafter_f64 }, { "float32", V.nextafter_f32 } }) do
            local r = tide.nextafter(on(T.NA_X, c[1]), on(T.NA_Y, c[1]))
            assert.are.equal(c[1], r.dtype)
            close(c[2], r:double(), 0, "nextafter " .. c[1])
        end
        -- the sign of a zero result: nextafter(-0, 0) is +0, nextafter(0, -0) is -0
        local z = tide.nextafter(t64({ -1 / math.huge, 0 }), t64({ 0, -1 / math.huge }))
        assert.are.equal(math.huge, 1 / z[1]:item())
        assert.are.equal(-math.huge, 1 / z[2]:item())
        local x = on({ 1, 2 }, "float32")
        assert.are.equal(x, x:nextafter_(on({ 2, 0 }, "float32")))
        close({ 1 + 2 ^ -23, 2 - 2 ^ -23 }, x, 0, "nextafter_")
        assert.are.equal("float64", on({ 1 }, "float32"):nextafter(on({ 2 }, "float64")).dtype)
    end)

    it("index_reduce_ writes in place; integers' mean floors", function()
        local x = on({ 1, 1, 1, 1, 1 })
        local r = x:index_reduce_(1, on({ 1, 2, 1 }), on({ 2, 3, 4 }), "prod")
        assert.are.equal(x, r)
        close({ 8, 3, 1, 1, 1 }, x, 0, "index_reduce_")
        close(V.index_reduce_int_mean, on({ 1, 2, 3 }):index_reduce(1, on({ 1, 1 }), on({ 2, 3 }),
            "mean"), 0, "int mean")
    end)

    it("mvlgamma_ in place, with its gradient", function()
        local x = t64(T.MVL):requires_grad_(true)
        local y = x * 1
        y:mvlgamma_(2)
        y:sum():backward()
        local want = tide.mvlgamma(t64(T.MVL), 2)
        close(host(want), y, 1e-14, "mvlgamma_")
        assert.is_true(x.grad ~= nil)
    end)
end)

describe("Tensor attributes and the legacy methods (" .. DEV .. ")", function()
    it("retains_grad: true after retain_grad() on a non-leaf", function()
        local x = t64({ 1, 2 }):requires_grad_(true)
        local y = x * 2
        assert.is_false(y.retains_grad)
        assert.is_false(x.retains_grad)
        y:retain_grad()
        assert.is_true(y.retains_grad)
        x:retain_grad() -- a no-op on a leaf, as in PyTorch
        assert.is_false(x.retains_grad)
        assert.is_false(on({ 1 }).retains_grad)
    end)

    it("is_meta, is_sparse, is_quantized, layout, is_cpu, is_cuda", function()
        local x = on({ 1, 2 })
        assert.is_false(x.is_meta)
        assert.is_false(x.is_sparse)
        assert.is_false(x.is_quantized)
        assert.are.equal("strided", x.layout)
        assert.are.equal(D.kind == "cpu", x.is_cpu)
        assert.are.equal(D.kind == "cuda", x.is_cuda)
    end)

    it("data_ptr: the first element's address; views move it by their offset", function()
        local x = on({ 1, 2, 3 }, "float32")
        assert.are.equal("number", type(x:data_ptr()))
        assert.is_true(x:data_ptr() ~= 0)
        assert.are.equal(x:data_ptr() + 4, x:narrow(1, 2, 2):data_ptr())
        assert.are.equal(x:data_ptr(), x:view(3, 1):data_ptr())
        assert.are.equal(0, on({}):data_ptr())
        assert.matches("expected at most 1 argument", err(x.data_ptr, x, 1), 1, true)
    end)

    it("storage_offset, and as_strided_ in place", function()
        local q = tide.arange(0, 6, { dtype = "float64", device = DEV })
        assert.are.equal(q, q:as_strided_({ 2, 2 }, { 1, 2 }, 1))
        close({ { 1, 3 }, { 2, 4 } }, q, 0, "as_strided_")
        assert.are.equal(1, q:storage_offset())
        -- with grad: the history goes on through as_strided, as PyTorch's
        local x = tide.arange(0, 4, { dtype = "float64", device = DEV }):requires_grad_(true)
        local y = x * 1
        y:as_strided_({ 2 }, { 2 })
        y:sum():backward()
        close({ 1, 0, 1, 0 }, x.grad, 0, "as_strided_ grad")
        assert.matches("tide: as_strided_: in-place operation on a leaf tensor that requires grad",
            err(function() x:as_strided_({ 2 }, { 1 }) end), 1, true)
    end)

    it("share_memory_ returns the tensor; is_shared after it", function()
        local x = on({ 1, 2, 3 })
        assert.is_false(x:is_shared())
        assert.are.equal(x, x:share_memory_())
        assert.is_true(x:is_shared())
        assert.is_true(x:narrow(1, 2, 1):is_shared())
        assert.is_false(on({ 1 }):is_shared())
    end)

    it("detach_: leaves the graph in place; a leaf keeps its grad", function()
        local a = t64({ 1, 1, 1 }):requires_grad_(true)
        local b = a * 2
        assert.are.equal(b, b:detach_())
        assert.is_false(b.requires_grad)
        assert.is_nil(b.grad_fn)
        assert.is_true(b.is_leaf)
        local c = (a * 3):sum()
        c:backward()
        a:detach_()
        assert.is_false(a.requires_grad)
        close({ 3, 3, 3 }, a.grad, 0, "grad kept")
        local v = (t64({ 1, 2 }):requires_grad_(true) * 2)[1]
        assert.are.equal("tide: detach_: the tensor is a view of another, which cannot leave " ..
            "the graph in place (nor in PyTorch); use t:detach(), a new tensor without history",
            err(v.detach_, v))
    end)

    it("resize_: the storage read afresh, as PyTorch's", function()
        local x = tide.arange(0, 6, { dtype = "float64", device = DEV })
        assert.are.equal(x, x:resize_(2, 2))
        close(V.resize_shrink, x, 0, "shrink")
        x:resize_({ 3, 3 }) -- the first 6 elements come back; the rest is 0 (PyTorch: unset)
        close({ { 0, 1, 2 }, { 3, 4, 5 }, { 0, 0, 0 } }, x, 0, "grow")
        local t = tide.arange(0, 6, { dtype = "float64", device = DEV }):view(2, 3):t()
        t:resize_(3, 2) -- the same sizes: nothing changes
        assert.are.same({ 1, 3 }, t:stride())
        close(V.resize_transposed, t:resize_(2, 3), 0, "transposed")
        local v = tide.arange(0, 6, { dtype = "float64", device = DEV }):narrow(1, 3, 4)
        close(V.resize_view, v:resize_(2), 0, "view")
        assert.are.equal(2, v:storage_offset())
        v:resize_(6)
        close({ 2, 3, 4, 5, 0, 0 }, v, 0, "grown view")
        assert.are.equal(2, v:storage_offset())
        local u = on({ 1, 2, 3 })
        u:resize_as_(on({ { 1 }, { 2 } }))
        assert.are.same({ 2, 1 }, u.shape)
        local g = t64({ 1, 2, 3 }):requires_grad_(true)
        assert.are.equal("tide: resize_: the tensor requires grad, and a resize would cut it " ..
            "from the graph (PyTorch refuses it too); resize t:detach() or a clone, or make a " ..
            "new tensor", err(g.resize_, g, 2))
        assert.are.same({ 3 }, g.shape)
        assert.are.equal("tide: resize_: size 2 is -1; sizes must be >= 0",
            err(u.resize_, u, 2, -1))
        assert.are.same({ 2, 1 }, u.shape)
    end)

    it("new: t's dtype and device", function()
        local x = on({ 1, 2 }, "float64")
        local e = x:new()
        assert.are.same({ 0 }, e.shape)
        assert.are.equal("float64", e.dtype)
        assert.are.equal(x.device, e.device)
        assert.are.same({ 2, 3 }, x:new(2, 3).shape)
        local d = x:new({ { 1, 2 }, { 3, 4 } })
        assert.are.equal("float64", d.dtype)
        close({ { 1, 2 }, { 3, 4 } }, d, 0, "data")
        assert.are.same({ 0 }, x:new({}).shape)
        local same = x:new(x)
        assert.are.equal(x:data_ptr(), same:data_ptr())
        assert.are.equal("tide: new: the tensor given is int64 on " .. tostring(x.device) ..
            ", expected float64 on " .. tostring(x.device) .. " (t's); convert it with " ..
            ":to(...), or use t:new_tensor(u) for a copy in t's dtype",
            err(x.new, x, on({ 1, 2 }, "int64")))
        assert.are.equal("tide: new: unknown option \"dtype\"; options are device",
            err(x.new, x, 2, { dtype = "float32" }))
    end)

    it("char and short: tide has no int8 or int16", function()
        local x = on({ 1, 2 })
        assert.are.equal("tide: char: tide has no int8 dtype (its dtypes are float32, float64, " ..
            "float16, bfloat16, int32, int64, uint8 and bool); use :int() (int32) instead, or " ..
            ":byte() (uint8) for values in 0..255", err(x.char, x))
        assert.matches("tide: short: tide has no int16 dtype", err(x.short, x), 1, true)
    end)
end)

describe("torch functions, PyTorch's values (" .. DEV .. ")", function()
    run_cases({
        frobenius_norm = { function(a) return tide.frobenius_norm(a):reshape(1) end, T.A },
        frobenius_norm_dim = { function(a) return tide.frobenius_norm(a, 2) end, T.A },
        frobenius_norm_dims_keep = { function(a)
            return tide.frobenius_norm(a, { 2, 3 }, true)
        end, T.BATCH3 },
        nuclear_norm = { function(a) return tide.nuclear_norm(a):reshape(1) end, T.A },
        nuclear_norm_dims = { function(a) return tide.nuclear_norm(a, { 2, 3 }) end, T.BATCH3 },
        nuclear_norm_keep = { function(a) return tide.nuclear_norm(a, true) end, T.A },
        segment_sum = { function(d)
            return tide.segment_reduce(d, "sum", { lengths = on({ 2, 0, 4 }) })
        end, T.SEG },
        segment_mean = { function(d)
            return tide.segment_reduce(d, "mean", { lengths = on({ 2, 4 }) })
        end, T.SEG },
        segment_max = { function(d)
            return tide.segment_reduce(d, "max", { lengths = on({ 3, 3 }) })
        end, T.SEG },
        segment_prod_2d = { function(d)
            return tide.segment_reduce(d, "prod", { lengths = on({ 1, 3 }) })
        end, T.SEG2 },
    })

    it("trapz is trapezoid", function()
        close(V.trapz, tide.trapz(t64({ 1, 2, 3 }), t64({ 0, 1, 3 })), 1e-15, "trapz")
        close(V.trapz_dx, tide.trapz(t64({ { 1, 2, 4 }, { 0.5, 0.5, -1 } }), nil, { dx = 2 }),
            1e-15, "dx")
        assert.matches("tide: trapz: ", err(tide.trapz, t64({ 1, 2 }), nil, { dxx = 1 }), 1,
            true)
    end)

    it("histogramdd: hist and the list of bin_edges", function()
        local h, e = tide.histogramdd(t64(T.HDD), { 3, 2 }, { weight = t64(T.HDD_W) })
        close(V.hdd_hist, h, 1e-15, "hist")
        assert.are.equal(2, #e)
        close(V.hdd_edges[1], e[1], 1e-15, "edges 1")
        close(V.hdd_edges[2], e[2], 1e-15, "edges 2")
        h, e = tide.histogramdd(t64(T.HDD), 2, { range = { 0, 1, 0, 2 } })
        close(V.hdd_range_hist, h, 1e-15, "range hist")
        close(V.hdd_range_edges[2], e[2], 1e-15, "range edges")
        h = tide.histogramdd(t64(T.HDD), { t64({ 0, 1, 3 }), t64({ -1, 0.5, 2 }) },
            { density = true })
        close(V.hdd_density_hist, h, 1e-14, "density")
        h = tide.histogramdd(t64(T.HDD):reshape(2, 3, 2), { 2, 2 })
        close(V.hdd_batch_hist, h, 1e-15, "batch")
        _, e = tide.histogramdd(t64({ { 1, 1 } }), 2)
        close(V.hdd_single_edges[1], e[1], 1e-15, "widened")
        assert.are.equal("tide: histogramdd: input must have at least 2 dims, points of D " ..
            "coordinates [..., D], got {2}; reshape 1-D values with :reshape(-1, 1)",
            err(tide.histogramdd, t64({ 1, 2 }), 2))
        assert.are.equal("tide: histogramdd: range must be a list of 4 numbers {min_1, max_1, " ..
            "...}, two per dim, got 2 entries",
            err(tide.histogramdd, t64(T.HDD), 2, { range = { 0, 1 } }))
        assert.are.equal("tide: histogramdd: bins must be a count, or a list of 2 counts or of " ..
            "2 1-D tensors of edges (one per dim of the points), got 3 entries",
            err(tide.histogramdd, t64(T.HDD), { 1, 2, 3 }))
        -- more coordinates than a tensor has dims raises before any loop over them (an empty
        -- {0, 2^32} input looped four billion times: a fuzz finding)
        assert.are.equal("tide: histogramdd: points of 4294967296 coordinates (input {0, " ..
            "4294967296}) would make a histogram of 4294967296 dims; tide supports at most 8",
            err(tide.histogramdd, tide.zeros({ 0, 4294967296 }), 2))
        assert.are.same({ 1, 1, 1, 1, 1, 1, 1, 1 }, tide.histogramdd(tide.zeros({ 1, 8 }), 1)
            .shape)
    end)

    it("segment_reduce: every reduce, offsets, initial, a batch", function()
        local d = t64(T.SEG)
        for _, r in ipairs({ "sum", "mean", "max", "min", "prod" }) do
            close(V["seg_" .. r], tide.segment_reduce(d, r, { lengths = on({ 2, 0, 4 }) }), 1e-15,
                r)
            close(V["seg_" .. r .. "_initial"], tide.segment_reduce(d, r,
                { lengths = on({ 2, 0, 4 }), initial = 10 }), 1e-15, r .. " initial")
        end
        close(V.seg_offsets, tide.segment_reduce(d, "min", { offsets = on({ 0, 2, 6 }) }), 0,
            "offsets")
        close(V.seg_axis1, tide.segment_reduce(t64(T.SEGB), "sum",
            { lengths = on({ { 1, 3 }, { 2, 2 } }), axis = 2 }), 0, "axis 2")
        assert.are.equal("tide: segment_reduce: the lengths must be >= 0 and sum to data's " ..
            "size at axis 1, 6, in every row; got lengths {2}",
            err(tide.segment_reduce, d, "sum", { lengths = on({ 2, 2 }) }))
        assert.are.equal("tide: segment_reduce: axis 2 must be the last dim of lengths, 1 " ..
            "(lengths {2}); batch dims of data come first",
            err(tide.segment_reduce, t64(T.SEG2), "sum", { lengths = on({ 1, 3 }), axis = 2 }))
        assert.are.equal("tide: segment_reduce: unknown option \"length\" (did you mean " ..
            "\"lengths\"?)", err(tide.segment_reduce, d, "sum", { length = on({ 6 }) }))
    end)

    it("binomial: from tide's generator, in count's dtype", function()
        tide.manual_seed(3)
        local n = tide.full({ 20000 }, 40, { dtype = "float64", device = DEV })
        local p = tide.full({ 20000 }, 0.25, { dtype = "float64", device = DEV })
        local r = tide.binomial(n, p)
        assert.are.equal("float64", r.dtype)
        assert.are.equal(tide.device(DEV), r.device)
        assert.is_true(math.abs(r:mean():item() - 10) < 0.1)
        assert.is_true(math.abs(r:var():item() - 7.5) < 0.3)
        assert.are.same({ 10, 0 }, host(tide.binomial(t64({ 10, 5 }), t64({ 1, 0 }))))
        tide.manual_seed(5)
        local a = host(tide.binomial(t64({ 10, 100 }), t64({ 0.5 })))
        local g = tide.Generator(DEV):manual_seed(5)
        assert.are.same(a, host(tide.binomial(t64({ 10, 100 }), t64({ 0.5 }), { generator = g })))
        assert.are.equal("tide: binomial: prob {2} has an element outside [0, 1] (or NaN); " ..
            "probabilities must lie in [0, 1]",
            err(tide.binomial, t64({ 10, 5 }), t64({ 1.5, 0 })))
        assert.are.equal("tide: binomial: count {2} has an element that is not a whole number " ..
            ">= 0 (or is infinite or NaN); counts must be whole numbers >= 0",
            err(tide.binomial, t64({ 10.5, 5 }), t64({ 0.5, 0 })))
    end)
end)

describe("the deprecated linear-algebra functions (" .. DEV .. ")", function()
    run_cases({
        lu_solve = { function(b, a)
            local LU, piv = tide.lu(a)
            return tide.lu_solve(b, LU, piv)
        end, T.B3, T.A },
        triangular_solve = { function(b, a) return (tide.triangular_solve(b, a)) end, T.B3,
            T.UPPER },
        triangular_solve_lower_t = { function(b, a)
            return (b:triangular_solve(a, { upper = false, transpose = true }))
        end, T.B3, T.LOWER },
        triangular_solve_unit = { function(b, a)
            return (tide.triangular_solve(b, a, true, false, true))
        end, T.B3, T.UPPER },
        symeig_values = { function(a) return (tide.symeig(a, true)) end, T.SYM },
        orgqr = { function(a, t) return tide.orgqr(a, t) end, T.cases.orgqr and
            T.values.geqrf_tall_a, T.values.geqrf_tall_tau },
    })

    it("lu: LU, pivots and with get_infos the info; lu_unpack", function()
        local LU, piv, info = tide.lu(t64(T.SING), { get_infos = true })
        close(V.lu_sing_LU, LU, 1e-15, "LU")
        assert.are.same(V.lu_sing_pivots, host(piv))
        assert.are.equal("int32", info.dtype)
        assert.are.equal(V.lu_sing_info, info:item())
        LU, piv = tide.lu(t64(T.BATCH3))
        close(V.lu_batch_LU, LU, 1e-15, "batch LU")
        assert.are.same(V.lu_batch_pivots, host(piv))
        local a = t64(T.A)
        LU, piv = a:lu()
        local P, L, U = tide.lu_unpack(LU, piv)
        close(V.lu_unpack_P, P, 0, "P")
        close(V.lu_unpack_L, L, 1e-15, "L")
        close(V.lu_unpack_U, U, 1e-15, "U")
        local P2, L2, U2 = tide.lu_unpack(LU, piv, { unpack_data = false })
        assert.are.same({ 3, 3 }, P2.shape)
        assert.are.same({ 0 }, L2.shape)
        assert.are.same({ 0 }, U2.shape)
        assert.are.equal("tide: lu: pivot = false is not supported (nor on PyTorch's CPU); an " ..
            "LU without row swaps fails on a zero pivot",
            err(tide.lu, a, { pivot = false }))
    end)

    it("symeig: the upper triangle by default; eigenvectors only when asked", function()
        local w, v = tide.symeig(t64(T.SYM))
        close(V.symeig_w, w, 1e-13, "w")
        assert.are.same({ 0 }, v.shape)
        w, v = t64(T.SYM):symeig({ eigenvectors = true })
        close(V.symeig_absV, v:abs(), 1e-12, "|V|")
        close(V.symeig_lower_w, (tide.symeig(t64(T.SYM), false, false)), 1e-13, "lower")
        close(V.symeig_upper_w, (tide.symeig(t64(T.SKEW))), 1e-13, "upper of SKEW")
        close(V.symeig_lower_skew_w, (tide.symeig(t64(T.SKEW), { upper = false })), 1e-13,
            "lower of SKEW")
        assert.are.equal("tide: symeig: eigenvectors must be a boolean, got number",
            err(tide.symeig, t64(T.SYM), 1))
    end)

    it("triangular_solve returns a copy of A too", function()
        local a = t64(T.UPPER)
        local _, c = tide.triangular_solve(t64(T.B3), a)
        close(T.UPPER, c, 0, "cloned_coefficient")
        assert.is_false(c:data_ptr() == a:data_ptr())
    end)

    it("the functions PyTorch 1.13 removed raise, naming the replacement", function()
        local a = t64(T.A)
        assert.are.equal("tide: solve: torch.solve was deprecated in PyTorch 1.9 and is " ..
            "removed (PyTorch 1.13 raises too); use tide.linalg.solve(A, B) (A first: X with " ..
            "A X = B)", err(tide.solve, a, a))
        assert.are.equal("tide: lstsq: torch.lstsq was deprecated in PyTorch 1.9 and is " ..
            "removed (PyTorch 1.13 raises too); use tide.linalg.lstsq(A, B) (A first; its " ..
            "first result is the solution)", err(tide.lstsq, a, a))
        assert.are.equal("tide: eig: torch.eig was deprecated in PyTorch 1.9 and is removed " ..
            "(PyTorch 1.13 raises too); use tide.linalg.eig(A) (complex eigenvalues and " ..
            "eigenvectors), or tide.linalg.eigh(A) for a symmetric A", err(a.eig, a))
        assert.are.equal("tide: matrix_rank: torch.matrix_rank was deprecated in PyTorch 1.9 " ..
            "and is removed (PyTorch 1.13 raises too); use tide.linalg.matrix_rank(A)",
            err(tide.matrix_rank, a))
        assert.matches("tide: solve: torch.solve was deprecated", err(a.solve, a, a), 1, true)
    end)

    it("geqrf: LAPACK's a and tau; ormqr in its four modes", function()
        for _, name in ipairs({ "sq", "tall", "wide", "zcol", "batch" }) do
            local m = ({ sq = T.A, tall = T.M43, wide = T.M34, zcol = T.ZCOL,
                batch = T.BATCH3 })[name]
            local a, tau = tide.geqrf(t64(m))
            close(V["geqrf_" .. name .. "_a"], a, 1e-13, name .. " a")
            close(V["geqrf_" .. name .. "_tau"], tau, 1e-13, name .. " tau")
        end
        local a, tau = t64(T.M43):geqrf()
        close(V.orgqr_tall, a:orgqr(tau), 1e-13, "orgqr")
        close(V.ormqr_left_n, tide.ormqr(a, tau, t64(T.C42)), 1e-13, "Q C")
        close(V.ormqr_left_t, tide.ormqr(a, tau, t64(T.C42), true, true), 1e-13, "Q^T C")
        close(V.ormqr_right_n, a:ormqr(tau, t64(T.C24), { left = false }), 1e-13, "C Q")
        close(V.ormqr_right_t, tide.ormqr(a, tau, t64(T.C24), false, true), 1e-13, "C Q^T")
        assert.are.equal("tide: ormqr: input {4, 3} has 4 rows and other {2, 4} 2 rows; with " ..
            "left = true they must match (other's columns with left = false)",
            err(tide.ormqr, a, tau, t64(T.C24)))
        assert.are.equal("tide: geqrf: needs float32 or float64 (as PyTorch's), got int64; " ..
            "convert with :to(\"float64\")", err(tide.geqrf, on({ { 1, 2 } }, "int64")))
    end)

    it("svd_lowrank and pca_lowrank reconstruct a low-rank matrix", function()
        tide.manual_seed(7)
        local B = tide.randn({ 20, 3 }, { dtype = "float64", device = DEV })
        local C = tide.randn({ 3, 12 }, { dtype = "float64", device = DEV })
        local A = B:matmul(C) -- rank 3
        local U, S, Vm = tide.svd_lowrank(A, 4)
        assert.are.same({ 20, 4 }, U.shape)
        assert.are.same({ 4 }, S.shape)
        assert.are.same({ 12, 4 }, Vm.shape)
        local R = U:matmul(tide.diag_embed(S)):matmul(Vm:t())
        assert.is_true((R - A):abs():max():item() < 1e-10)
        local exact = LA.svdvals(A)
        close(host(exact:narrow(1, 1, 3)), S:narrow(1, 1, 3), 1e-10, "singular values")
        -- a wide one (the transposed path) and a batch
        U, S, Vm = tide.svd_lowrank(A:t(), { q = 3, niter = 1 })
        R = U:matmul(tide.diag_embed(S)):matmul(Vm:t())
        assert.is_true((R - A:t()):abs():max():item() < 1e-10)
        local Ab = tide.stack({ A, A * 2 })
        U, S, Vm = tide.svd_lowrank(Ab, 3)
        R = U:matmul(tide.diag_embed(S)):matmul(Vm:transpose(-2, -1))
        assert.is_true((R - Ab):abs():max():item() < 1e-10)
        -- pca: the centred matrix
        local Ac = A - A:mean(1, true)
        U, S, Vm = tide.pca_lowrank(A, { q = 3 })
        R = U:matmul(tide.diag_embed(S)):matmul(Vm:t())
        assert.is_true((R - Ac):abs():max():item() < 1e-10)
        U, S = tide.pca_lowrank(A, 3, false)
        close(host(exact:narrow(1, 1, 3)), S, 1e-10, "uncentred")
        -- repeatable from tide's generator
        tide.manual_seed(1)
        local _, s1 = tide.svd_lowrank(A + tide.randn({ 20, 12 }, { dtype = "float64",
            device = DEV }) * 0.01, 3, 0)
        tide.manual_seed(1)
        local _, s2 = tide.svd_lowrank(A + tide.randn({ 20, 12 }, { dtype = "float64",
            device = DEV }) * 0.01, 3, 0)
        close(host(s1), s2, 0, "seeded")
        assert.are.equal("tide: svd_lowrank: q = 13; expected an integer in [1, 12]",
            err(tide.svd_lowrank, A, 13))
        assert.are.equal("tide: pca_lowrank: unknown option \"centre\" (did you mean " ..
            "\"center\"?)", err(tide.pca_lowrank, A, { centre = true }))
    end)
end)

describe("torch.linalg: matmul, lu_factor_ex, ldl (" .. DEV .. ")", function()
    it("linalg.matmul is tide.matmul", function()
        local a, b = t64(T.X23), t64(T.X32)
        close(host(tide.matmul(a, b)), LA.matmul(a, b), 0, "matmul")
    end)

    it("lu_factor_ex: LU, pivots and info", function()
        local LU, piv, info = LA.lu_factor_ex(t64(T.SING))
        close(V.lu_factor_ex_LU, LU, 1e-15, "LU")
        assert.are.same(V.lu_factor_ex_pivots, host(piv))
        assert.are.equal("int32", info.dtype)
        assert.are.equal(V.lu_factor_ex_info, info:item())
        _, _, info = LA.lu_factor_ex(t64({ T.A, T.SING }))
        assert.are.same(V.lu_factor_ex_batch_info, host(info))
        -- PyTorch's: "torch.linalg.lu_factor_ex: (Batch element 1): U[3,3] is zero and using
        -- it on lu_solve would result in a division by zero. ..." (its batch counts from 0)
        assert.are.equal("tide: linalg.lu_factor_ex: U[3,3] is zero (batch element 2) and " ..
            "using it on lu_solve would divide by zero; to factor such a matrix anyway, call " ..
            "linalg.lu_factor_ex(A) (its info names the zero) or linalg.lu(A)",
            err(LA.lu_factor_ex, t64({ T.A, T.SING }), { check_errors = true }))
    end)

    it("ldl_factor: PyTorch's LD and pivots (sytrf, lower)", function()
        for _, name in ipairs({ "spd", "swap1", "block2", "sym6", "sym7" }) do
            local m = ({ spd = T.SPD, swap1 = T.SWAP1, block2 = T.BLOCK2, sym6 = T.SYM6,
                sym7 = T.SYM7 })[name]
            local LD, piv = LA.ldl_factor(t64(m))
            assert.are.equal("int64", piv.dtype)
            close(V["ldl_" .. name .. "_LD"], LD, 1e-12, name .. " LD")
            assert.are.same(V["ldl_" .. name .. "_pivots"], host(piv))
        end
        local LD, piv = LA.ldl_factor(t64(T.LDL_BATCH))
        close(V.ldl_batch_LD, LD, 1e-12, "batch LD")
        assert.are.same(V.ldl_batch_pivots, host(piv))
        -- float32: the same factor, rounded
        LD = LA.ldl_factor(on(T.SYM6, "float32"))
        assert.are.equal("float32", LD.dtype)
        close(V.ldl_sym6_LD, LD:double(), 1e-5, "float32 LD")
        -- only the lower triangle is read
        LD = LA.ldl_factor(t64(T.SYM6):tril())
        close(V.ldl_sym6_LD, LD, 1e-12, "lower triangle")
        -- the device's own sytrf where it has one (LAPACK on the CPU); elsewhere the host's
        local K = require("tide.core")._internal
        if DEV:match("^cpu") then
            assert.is_not_nil(K.ldl_factor(t64(T.SPD)))
        end
    end)

    it("ldl_factor, ldl_solve in float32: PyTorch's single-precision sytrf and sytrs", function()
        for _, name in ipairs({ "sym6", "sym7", "batch" }) do
            local m = ({ sym6 = T.SYM6, sym7 = T.SYM7, batch = T.LDL_BATCH })[name]
            local LD, piv = LA.ldl_factor(on(m, "float32"))
            assert.are.equal("float32", LD.dtype)
            assert.are.equal("int64", piv.dtype)
            -- float32's own rounding (not float64's rounded): a few ulps of BLAS's order
            close(V["ldl_f32_" .. name .. "_LD"], LD, 1e-6, name .. " LD")
            assert.are.same(V["ldl_f32_" .. name .. "_pivots"], host(piv))
        end
        local LD, piv = LA.ldl_factor(on(T.SYM6, "float32"))
        local X = LA.ldl_solve(LD, piv, on(T.LDL_B, "float32"))
        assert.are.equal("float32", X.dtype)
        close(V.ldl_f32_solve_sym6, X, 1e-5, "float32 solve")
        local _, _, info = LA.ldl_factor_ex(on({ { 1, 2 }, { 2, 4 } }, "float32"))
        assert.are.equal(V.ldl_ex_sing_info, info:item())
    end)

    it("ldl_factor_ex: the info of a singular D; ldl_factor raises", function()
        local A = t64({ { 1, 2 }, { 2, 4 } })
        local LD, piv, info = LA.ldl_factor_ex(A)
        close(V.ldl_ex_sing_LD, LD, 1e-15, "LD")
        assert.are.same(V.ldl_ex_sing_pivots, host(piv))
        assert.are.equal("int32", info.dtype)
        assert.are.equal(V.ldl_ex_sing_info, info:item())
        assert.are.same({ 0, 0, 0 }, host(select(3, LA.ldl_factor_ex(t64(T.LDL_BATCH)))))
        assert.are.equal("tide: linalg.ldl_factor: the matrix is singular (D's diagonal " ..
            "element 2 is zero); use linalg.ldl_factor_ex for the factor and its info, or " ..
            "regularise the matrix", err(LA.ldl_factor, A))
        assert.are.equal("tide: linalg.ldl_factor_ex: unknown option \"check_error\" (did you " ..
            "mean \"check_errors\"?)", err(LA.ldl_factor_ex, A, { check_error = true }))
    end)

    it("ldl_solve: PyTorch's solutions; A X = B", function()
        local LD, piv = LA.ldl_factor(t64(T.SYM6))
        local X = LA.ldl_solve(LD, piv, t64(T.LDL_B))
        close(V.ldl_solve_sym6, X, 1e-11, "sym6")
        assert.is_true((t64(T.SYM6):matmul(X) - t64(T.LDL_B)):abs():max():item() < 1e-12)
        LD, piv = LA.ldl_factor(t64(T.LDL_BATCH))
        close(V.ldl_solve_batch, LA.ldl_solve(LD, piv, t64(T.B3)), 1e-12, "batch")
        LD, piv = LA.ldl_factor(t64(T.SYM6))
        assert.are.equal("tide: linalg.ldl_solve: LD is {6, 6}, B {3, 2}: B must be [..., 6, k]",
            err(LA.ldl_solve, LD, piv, t64(T.B3)))
        local bad = on({ 1, 2, 3, 4, 5, 0 })
        assert.are.equal("tide: linalg.ldl_solve: pivots {6} hold 0 at 6, which ldl_factor " ..
            "does not give; pass ldl_factor's own pivots",
            err(LA.ldl_solve, (LA.ldl_factor(t64(T.SYM6))), bad, t64(T.LDL_B)))
        local x = t64(T.SYM6):requires_grad_(true)
        assert.are.equal("tide: linalg.ldl_factor: not differentiable: argument #1 requires " ..
            "grad; call it under tide.no_grad or on detach()ed tensors", err(LA.ldl_factor, x))
    end)
end)

describe("errors name the op and change nothing (" .. DEV .. ")", function()
    it("sum_to_size, split_with_sizes", function()
        local x = t64(T.X23)
        assert.are.equal("tide: sum_to_size: size {3, 1} does not expand to the tensor's " ..
            "shape {2, 3}; give sizes that broadcast to it (each the tensor's, or 1, aligned " ..
            "from the right)", err(x.sum_to_size, x, 3, 1))
        assert.are.equal("tide: split_with_sizes: the sizes sum to 2 but dim 2 has size 3; " ..
            "give sizes that sum to 3", err(x.split_with_sizes, x, { 1, 1 }, 2))
        assert.are.equal("tide: split_with_sizes: split_sizes must be a list of sizes such as " ..
            "{2, 4}, got number; use split(size) for pieces of one size",
            err(x.split_with_sizes, x, 2))
        assert.are.equal("tide: unsafe_chunk: chunks must be > 0, got 0",
            err(x.unsafe_chunk, x, 0))
    end)

    it("nextafter, mvlgamma", function()
        local x = t64({ 1, 2 })
        assert.are.equal("tide: nextafter: other must be a tensor, got number; wrap a number " ..
            "with tide.tensor(v, {dtype = x.dtype})", err(x.nextafter, x, 2))
        assert.are.equal("tide: nextafter: needs floating-point tensors, got int64 and int64; " ..
            "convert with :to(\"float32\")", err(tide.nextafter, on({ 1 }), on({ 2 })))
        assert.are.equal("tide: nextafter_: other {2} broadcasts the tensor {1} to {2}; in " ..
            "place, the result must keep the tensor's shape",
            err(t64({ 1 }).nextafter_, t64({ 1 }), t64({ 1, 2 })))
        local g = t64({ 1 }):requires_grad_(true)
        assert.are.equal("tide: nextafter: not differentiable: argument #1 requires grad; call " ..
            "it under tide.no_grad or on detach()ed tensors", err(g.nextafter, g, t64({ 2 })))
        assert.are.equal("tide: mvlgamma: every element must be greater than (p - 1) / 2 = 0.5 " ..
            "(p = 2)", err(tide.mvlgamma, t64({ 0.2 }), 2))
        assert.are.equal("tide: mvlgamma: p must be an integer >= 1, got 0",
            err(x.mvlgamma, x, 0))
        local before = host(x)
        assert.matches("tide: mvlgamma_: every element", err(x.mvlgamma_, x, 5), 1, true)
        assert.are.same(before, host(x))
        assert.are.equal("tide: mvlgamma_: the result is a float, which the int64 tensor " ..
            "cannot hold; use x:mvlgamma(p)", err(on({ 3 }).mvlgamma_, on({ 3 }), 1))
    end)

    it("index_reduce", function()
        local x = t64(T.X32)
        local before = host(x)
        assert.are.equal("tide: index_reduce: reduce must be \"prod\", \"mean\", \"amax\" or " ..
            "\"amin\", got \"sum\"; use index_add for a sum",
            err(x.index_reduce_, x, 1, on({ 1, 3, 1 }), t64(T.SRC32), "sum"))
        assert.are.equal("tide: index_reduce: index has 2 elements, source's dim 1 has 3; give " ..
            "one index per slice of source",
            err(x.index_reduce_, x, 1, on({ 1, 3 }), t64(T.SRC32), "amax"))
        assert.are.equal("tide: index_reduce_: unknown option \"include_selff\" (did you mean " ..
            "\"include_self\"?)", err(x.index_reduce_, x, 1, on({ 1, 3, 1 }), t64(T.SRC32),
            "amax", { include_selff = true }))
        assert.are.equal("tide: index_reduce: source {3, 3} must have the tensor's shape " ..
            "{3, 2} except in dim 1", err(x.index_reduce_, x, 1, on({ 1, 3, 1 }), t64(T.SRC33), "amax"))
        assert.are.equal("tide: index_reduce: index 4 is out of range for dim 1 of size 3; " ..
            "indices are 1-based: use 1..3", err(x.index_reduce_, x, 1, on({ 1, 4, 1 }),
            t64(T.SRC32), "amax"))
        assert.are.same(before, host(x))
    end)

    it("prelu and hardshrink as methods", function()
        local x = t64(T.PRELU_X)
        assert.matches("tide: prelu: weight {2} has 2 elements; expected 1 or one per channel",
            err(x.prelu, x, t64({ 1, 2 })), 1, true)
        -- lambd by PyTorch's name (spec/torch_by_name_spec.lua); a non-number still raises
        assert.is_true(tide.equal(x:hardshrink(1), x:hardshrink({ lambd = 1 })))
        assert.are.equal("tide: hardshrink: lambd must be a number, got table",
            err(x.hardshrink, x, { { 1 } }))
    end)
end)

describe("review findings (" .. DEV .. ")", function()
    it("triangular_solve names itself for a 1-D A, before transposing it", function()
        assert.are.equal("tide: triangular_solve: b and A must be matrices or batches of " ..
            "them, got b {3, 1} and A {3}",
            err(tide.triangular_solve, t64({ { 1 }, { 2 }, { 3 } }), t64({ 1, 2, 3 }), true,
                true))
    end)

    it("segment_reduce refuses integer data (PyTorch's too), not filling -inf into it",
        function()
            assert.are.equal("tide: segment_reduce: needs a floating-point tensor, got int64; " ..
                "convert with :to(\"float32\")", err(tide.segment_reduce, on({ 1, 2, 3 }), "max",
                { lengths = on({ 2, 0, 1 }) }))
        end)
end)
