-- porting_tensor_spec.lua — the tensor ops a ported script reaches for that tide lacked, against
-- PyTorch 1.13's values and gradients (spec/fixtures/porting_tensor_torch.lua, written by
-- spec/fixtures/make_porting_tensor.py): products (mm ... kron), element-wise functions
-- (logit ... fix), joins and splits, indexing, scans, reductions and searches; their dtypes,
-- in-place twins, errors and devices.
local tide = require("tide")
local D = require("spec.support.device")

local T = dofile("spec/fixtures/porting_tensor_torch.lua")
local unpack = table.unpack or unpack -- 5.1, LuaJIT
local DEV = D.name

local P = require("spec.support.porting")
local close = P.close

local function t64(v)
    return P.t64(v, DEV)
end

local function on(v, dtype)
    return tide.tensor(v, { dtype = dtype, device = DEV })
end

local function check_case(name, fn, ...)
    P.check_case(T.cases[name], name, DEV, {}, fn, ...)
end

local function run_cases(CASES)
    local names = {}
    for name in pairs(CASES) do
        names[#names + 1] = name
    end
    table.sort(names)
    for _, name in ipairs(names) do
        it(name, function()
            assert(T.cases[name], "no PyTorch fixture for " .. name)
            local c = CASES[name]
            check_case(name, c[1], unpack(c, 2))
        end)
    end
end

local X, Y, V3, V4 = T.X, T.Y, T.V3, T.V4
local B4 = { 2, 0.5, -1, 3 }
local NEG0 = -1 / math.huge -- -0 (Lua 5.1 folds the literal -0.0 to 0)
local Z = { { 2, -4, 0.5, 1 }, { 8, 0.25, -2, 3 }, { 1, 1, -0.5, 16 } }

describe("products, PyTorch's values (" .. DEV .. ")", function()
    run_cases({
        mm = { function(a, b) return a:mm(b:t()) end, X, Y },
        mv = { function(a, v) return tide.mv(a, v) end, X, V4 },
        dot = { function(a, b) return tide.dot(a, b):reshape(1) end, V4, B4 },
        vdot = { function(a, b) return a:vdot(b):reshape(1) end, V4, B4 },
        inner_1d = { function(a, b) return tide.inner(a, b):reshape(1) end, V4, B4 },
        inner_2d = { function(a, b) return a:inner(b) end, X, Y },
        inner_3d = { function(a, b)
            return tide.inner(a:reshape(3, 2, 2), b:narrow(1, 1, 2):narrow(2, 1, 2))
        end, X, Y },
        addmv = { function(i, a, v)
            return tide.addmv(i, a, v, { beta = 0.5, alpha = 2 })
        end, V3, X, V4 },
        addmv_bcast = { function(i, a, v) return i:addmv(a, v) end, { 1.5 }, X, V4 },
        addr = { function(m, a, b)
            return m:addr(a, b, { beta = -1, alpha = 0.5 })
        end, X, V3, V4 },
        baddbmm = { function(i, a, b)
            return tide.baddbmm(i, a:reshape(3, 2, 2), b:reshape(3, 2, 2),
                { beta = 2, alpha = -0.5 })
        end, { { 1, -1 } }, X, Y },
        addbmm = { function(i, a, b)
            return i:addbmm(a:reshape(3, 2, 2), b:reshape(3, 2, 2), { beta = 0.25, alpha = 3 })
        end, { { 1, -1 }, { 2, 0.5 } }, X, Y },
        kron = { function(a, b)
            return tide.kron(a:narrow(1, 1, 2):narrow(2, 1, 3), b:narrow(1, 1, 2):narrow(2, 1, 2))
        end, X, Y },
        kron_ranks = { function(a, b) return a:kron(b:reshape(3, 2, 2)) end, V3, Y },
        chain_matmul = { function(a, b, c)
            return tide.chain_matmul(a, b:t(), c)
        end, X, Y, X },
    })

    it("beta = 0 leaves the input out, NaN and all; integer products stay integer", function()
        local i = t64({ 0 / 0, 1, math.huge })
        close(T.values.addmv_beta0, i:addmv(t64(X), t64(V4), { beta = 0 }), 0, "addmv beta 0")
        local k = tide.kron(on({ { 1, 2 }, { 3, 4 } }), on({ { 0, 1 }, { 1, 0 } }))
        close(T.values.kron_int, k, 0, "kron int")
        assert.are.equal("int64", k.dtype)
        assert.are.same({}, tide.dot(t64(V4), t64(B4)).shape)
        assert.are.same({ 2 }, tide.kron(t64(2), t64({ 1, 2 })).shape)
    end)

    it("in place: addmv_, addr_, baddbmm_, addbmm_ write into x", function()
        local x = t64(V3)
        assert.are.equal(x, x:addmv_(t64(X), t64(V4), { alpha = 2 }))
        close((t64(V3) + t64(X):mv(t64(V4)) * 2):cpu():totable(), x, 0, "addmv_")
        local m = t64(X)
        m:addr_(t64(V3), t64(V4))
        close((t64(X) + t64(V3):outer(t64(V4))):cpu():totable(), m, 0, "addr_")
        local b = t64({ { { 1, 2 } }, { { 3, 4 } }, { { 5, 6 } } })
        local zero = tide.zeros({ 3, 4, 2 }, { dtype = "float64", device = DEV })
        b:baddbmm_(t64(X):reshape(3, 1, 4), zero, { beta = 2 })
        close({ { { 2, 4 } }, { { 6, 8 } }, { { 10, 12 } } }, b, 0, "baddbmm_")
        local s = t64({ { 1, 1 }, { 1, 1 } })
        s:addbmm_(t64(X):reshape(3, 2, 2), t64(Y):reshape(3, 2, 2), { beta = 0 })
        close(t64(X):reshape(3, 2, 2):bmm(t64(Y):reshape(3, 2, 2)):sum(1):cpu():totable(), s,
            1e-15, "addbmm_")
    end)

    it("refuses what PyTorch refuses, naming the op and the values", function()
        local x = t64(X)
        assert.has_error(function() x:mm(t64(Y)) end,
            "tide: mm: self {3, 4} and mat2 {3, 4} cannot be multiplied (4 columns, 3 rows)")
        assert.has_error(function() tide.mm(x, t64(V4)) end,
            "tide: mm: mat2 must be 2-D, got {4}")
        assert.has_error(function() x:mv(t64(V3)) end,
            "tide: mv: self {3, 4} and vec {3} cannot be multiplied (4 columns, 3 elements)")
        assert.has_error(function() tide.dot(t64(V4), t64(V3)) end,
            "tide: dot: self and other must have the same number of elements, got 4 and 3")
        assert.has_error(function() tide.dot(t64(V4), on({ 1, 2, 3, 4 })) end,
            "tide: dot: self and other must have the same dtype, got float64 and int64; " ..
            "convert one with :to(\"float64\")")
        assert.has_error(function() x:inner(t64(V3)) end,
            "tide: inner: the last dims of self {3, 4} and other {3} must have the same size")
        assert.has_error(function() t64(V4):addmv(x, t64(V4)) end,
            "tide: addmv: input {4} does not broadcast to the product's shape {3}")
        assert.has_error(function() t64(V3):addmv(x, t64(V3)) end,
            "tide: addmv: mat {3, 4} and vec {3} cannot be multiplied (4 columns, 3 elements)")
        assert.has_error(function() x:baddbmm(x, x) end,
            "tide: baddbmm: batch1 must be 3-D, got {3, 4}")
        assert.has_error(function() x:sinc(2) end,
            "tide: sinc: takes no argument, got argument #2 (number)")
        assert.has_error(function() t64(V3):addmv(x, t64(V4), { betta = 1 }) end,
            'tide: addmv: unknown option "betta" (did you mean "beta"?)')
        assert.has_error(function() x:addr(x, t64(V4)) end,
            "tide: addr: vec1 must be 1-D, got {3, 4}")
        assert.has_error(function() tide.chain_matmul() end,
            "tide: chain_matmul: expected at least one matrix")
        -- a failed call changes nothing
        local before = x:cpu():totable()
        pcall(function() x:addr_(t64(V3), t64(V3)) end)
        close(before, x, 0, "addr_ after an error")
    end)

    it("keeps the result on the device; mixing devices raises", function()
        local a, b = t64(X), tide.tensor(Y, { dtype = "float64", device = D.other })
        assert.are.equal(tide.device(DEV), a:mm(t64(Y):t()).device)
        assert.has_error(function() a:mm(b:t()) end)
        local ok, err = pcall(function() return tide.dot(t64(V4), b[1]) end)
        assert.is_false(ok)
        assert.is_truthy(tostring(err):find("same device", 1, true))
    end)
end)

describe("element-wise functions, PyTorch's values (" .. DEV .. ")", function()
    run_cases({
        logit = { function(x) return x:logit() end, T.PROB },
        logit_eps = { function(x) return tide.logit(x, 0.2) end, T.PROB },
        sinc = { function(x) return x:sinc() end, T.SINC },
        hypot = { function(a, b) return tide.hypot(a, b) end, X, Y },
        hypot_edges = { function(a, b) return a:hypot(b) end, T.HYP_A, T.HYP_B },
        hypot_bcast = { function(a, b) return a:hypot(b[1]) end, X, Y },
        copysign = { function(a, b) return tide.copysign(a, b) end, X, Y },
        copysign_scalar = { function(x) return x:copysign(-2) end, X },
        deg2rad = { function(x) return x:deg2rad() end, X },
        rad2deg = { function(x) return tide.rad2deg(x) end, X },
        log10 = { function(x) return x:log10() end,
            { 1000, 0.001, 2.5, 1e22, 1e-5, 7, 100, 1e23 } },
        exp2 = { function(x) return tide.exp2(x) end,
            { { -1.5, 0, 3, 10 }, { 0.1, -20, 2.5, 1 } } },
        sgn = { function(x) return x:sgn() end, X },
        fix = { function(x) return tide.fix(x) end,
            { { 1.5, -1.5, 2, -0.25 }, { 3.75, -3.75, 0, 10.5 } } },
        fmax = { function(a, b) return a:fmax(b) end, T.NANS, T.NANS2 },
        fmin = { function(a, b) return tide.fmin(a, b) end, T.NANS, T.NANS2 },
        fmax_ties = { function(a, b) return tide.fmax(a, b) end, X,
            { { 0.5, 3, -0.75, -1 }, { 0.5, 3, -0.75, -1 }, { 0.5, 3, -0.75, -1 } } },
        fmin_bcast = { function(a, b) return a:fmin(b:narrow(2, 1, 1)) end, X, Y },
        float_power = { function(x, y) return (x:abs() + 0.5):float_power(y) end, X, Y },
        float_power_scalar = { function(x) return tide.float_power(x, 2.5) end,
            { { 0.5, 2, 3, 0 } } },
        true_divide = { function(a, b) return a:true_divide(b) end, X, Z },
    })

    it("bool results, integer inputs and -0", function()
        local s = t64(T.SPECIALS)
        for _, name in ipairs({ "signbit", "isposinf", "isneginf" }) do
            local r = s[name](s)
            assert.are.equal("bool", r.dtype)
            close(T.values[name], r, 0, name)
        end
        assert.are.same({ true, false }, t64({ NEG0, 0.0 }):signbit():cpu():totable())
        assert.are.same({ true, false, false }, on({ -1, 0, 2 }):signbit():cpu():totable())
        assert.are.same({ false }, on({ 1 }):isposinf():cpu():totable())
        local h = tide.heaviside(t64({ -1.5, 0, 2, 0 / 0, 0 }), t64({ 0.5, 0.25, 0.5, 0.5, 7 }))
        close(T.values.heaviside, h, 0, "heaviside")
        -- integers become float32, as PyTorch's float functions do; sgn, fix, fmax keep them
        local i = on({ 0, 1 })
        for _, name in ipairs({ "logit", "sinc", "deg2rad", "rad2deg", "log10", "exp2" }) do
            assert.are.equal("float32", i[name](i).dtype, name)
        end
        close(T.values.logit_int, i:logit():double(), 0, "logit int")
        assert.are.equal("int64", i:sgn().dtype)
        assert.are.equal("int64", i:fix().dtype)
        assert.are.equal("float32", i:true_divide(i).dtype)
        assert.are.equal("float32", i:copysign(i).dtype)
        assert.are.equal("float64", i:float_power(2).dtype)
        local f = tide.fmax(on({ 1, 5, -2 }), on({ 3, 2, -2 }))
        assert.are.equal("int64", f.dtype)
        close(T.values.fmax_int, f, 0, "fmax int")
        -- -0 as the sign: negative, as PyTorch reads the sign bit
        close({ -1, -2 }, t64({ 1, 2 }):copysign(NEG0), 0, "copysign -0")
        close({ -1, 2 }, t64({ 1, 2 }):copysign(t64({ NEG0, 0.0 })), 0, "copysign -0 tensor")
    end)

    it("in place: logit_, sinc_, hypot_, copysign_, log10_, fix_, float_power_ ...", function()
        local x = t64(T.PROB)
        assert.are.equal(x, x:logit_(0.2))
        close(t64(T.PROB):logit(0.2):cpu():totable(), x, 0, "logit_")
        local h = t64(X)
        h:hypot_(t64(Y))
        close(tide.hypot(t64(X), t64(Y)):cpu():totable(), h, 0, "hypot_")
        local c = t64(X)
        c:copysign_(-1):fix_():deg2rad_()
        close(t64(X):abs():neg():trunc():deg2rad():cpu():totable(), c, 0, "copysign_ fix_")
        local l = t64({ 10, 100 })
        l:log10_():exp2_()
        close({ 2, 4 }, l, 0, "log10_ exp2_")
        local p = t64({ 2, 3 })
        p:float_power_(2)
        close({ 4, 9 }, p, 0, "float_power_")
        -- recorded: the gradient reads the old x
        local a = t64({ 0.25, 0.5 }):requires_grad_(true)
        local y = a * 1
        y:logit_()
        y:sum():backward()
        close({ 1 / (0.25 * 0.75), 4 }, a.grad, 1e-15, "logit_ gradient")
    end)

    it("refuses what PyTorch refuses, naming the op and the values", function()
        local x = t64(X)
        assert.has_error(function() on({ 1, 2 }):hypot(on({ 1, 2 })) end,
            "tide: hypot: needs a floating-point tensor, got int64; convert with :to(\"float32\")")
        assert.has_error(function() x:hypot(t64(V3)) end,
            "tide: hypot: shapes {3, 4} and {3} do not broadcast (dim 2: 4 and 3)")
        assert.has_error(function() x:heaviside(on({ 1 })) end,
            "tide: heaviside: input and values must have the same dtype, got float64 and " ..
            "int64; convert values with :to(\"float64\")")
        assert.has_error(function() x:requires_grad_(true):heaviside(t64({ 0.5 })) end,
            "tide: heaviside: not differentiable: argument #1 requires grad; call it under " ..
            "tide.no_grad or on detach()ed tensors")
        assert.has_error(function() x:logit("0.1") end,
            "tide: logit: eps must be a number or nil, got string")
        assert.has_error(function() x:copysign("a") end,
            "tide: copysign: other must be a number or a tensor, got string")
        assert.has_error(function() x:float() :float_power_(2) end,
            "tide: float_power_: the base has dtype float32, but the result is float64; use " ..
            "x:float_power(e) or convert x with :double()")
        assert.has_error(function() on({ true }):fmax(on({ false })) end,
            "tide: fmax: not defined for bool tensors; convert with :to(\"int64\")")
        local ok, err = pcall(function()
            return t64(X):hypot(tide.tensor(Y, { dtype = "float64", device = D.other }))
        end)
        assert.is_false(ok)
        assert.is_truthy(tostring(err):find("same device", 1, true))
        assert.are.equal(tide.device(DEV), t64(X):sinc().device)
    end)
end)

describe("joins and splits, PyTorch's values (" .. DEV .. ")", function()
    run_cases({
        hstack = { function(a, b) return tide.hstack({ a, b }) end, X, Y },
        hstack_1d = { function(a, b) return tide.hstack(a, b) end, V3, V4 },
        vstack = { function(a, b) return tide.vstack({ a, b }) end, X, V4 },
        row_stack = { function(a, b) return tide.row_stack({ a, b[1] }) end, V4, Y },
        dstack = { function(a, b) return tide.dstack({ a, b }) end, X, Y },
        dstack_1d = { function(a, b) return tide.dstack({ a, b }) end, V3, { 4, 5, 6 } },
        column_stack = { function(a, b) return tide.column_stack({ a, b }) end, V3, X },
        rot90 = { function(x) return x:rot90() end, X },
        rot90_k2 = { function(x) return tide.rot90(x, 2) end, X },
        rot90_k3 = { function(x) return x:rot90(3, { 2, 1 }) end, X },
        rot90_neg = { function(x) return x:reshape(3, 2, 2):rot90(-1, { 1, 3 }) end, X },
        fliplr = { function(x) return x:fliplr() end, X },
        flipud = { function(x) return tide.flipud(x) end, X },
        diagonal = { function(x) return x:diagonal() end, X },
        diagonal_up = { function(x) return tide.diagonal(x, 1) end, X },
        diagonal_down = { function(x) return x:diagonal(-1) end, X },
        diagonal_3d = { function(x) return x:reshape(3, 2, 2):diagonal(0, 1, 3) end, X },
        diagonal_3d_swap = { function(x) return x:reshape(2, 3, 2):diagonal(-1, 3, 2) end, X },
        diag_embed = { function(x) return x:diag_embed() end, X },
        diag_embed_up = { function(x)
            return tide.diag_embed(x:narrow(1, 1, 2):narrow(2, 1, 3), 1)
        end, X },
        diag_embed_dims = { function(x)
            return x:narrow(1, 1, 2):narrow(2, 1, 3):diag_embed(-1, 1, 3)
        end, X },
        block_diag = { function(a, b, c)
            return tide.block_diag(a:narrow(1, 1, 2):narrow(2, 1, 3), b, c[1][1])
        end, X, V3, Y },
        cartesian_prod = { function(a, b) return tide.cartesian_prod(a, b) end, V3, V4 },
        cartesian_prod3 = { function(a, b, c)
            return tide.cartesian_prod({ a, b, c })
        end, V3, { 1.5, -2.5 }, { 7, 8 } },
        ravel = { function(x) return x:t():ravel() end, X },
    })

    local function same_pieces(want, got, what)
        assert.are.equal(#want, #got, what .. ": the number of pieces")
        for i = 1, #want do
            if #want[i] == 0 then
                assert.are.equal(0, got[i]:numel(), what .. " piece " .. i)
            else
                close(want[i], got[i], 0, what .. " piece " .. i)
            end
        end
    end

    it("tensor_split, hsplit, vsplit: PyTorch's pieces (its index numbers)", function()
        local r = tide.arange(1, 8, { device = DEV })
        same_pieces(T.values.tensor_split_3, r:tensor_split(3), "tensor_split 3")
        same_pieces(T.values.tensor_split_idx, tide.tensor_split(t64(X), { 1, 3 }, 2),
            "tensor_split indices")
        same_pieces(T.values.tensor_split_over, r:tensor_split({ 2, 10, 5, -1 }),
            "tensor_split beyond the end, backwards, negative")
        same_pieces(T.values.tensor_split_over, r:tensor_split(on({ 2, 10, 5, -1 })),
            "tensor_split, indices as a tensor")
        same_pieces(T.values.tensor_split_5, tide.arange(1, 4, { device = DEV }):tensor_split(5),
            "tensor_split 5 of 3")
        same_pieces(T.values.hsplit, t64(X):hsplit(2), "hsplit")
        same_pieces(T.values.vsplit, tide.vsplit(t64(X), { 2 }), "vsplit")
        -- views: a write into a piece reaches x
        local x = t64(X)
        x:tensor_split(2, 2)[2]:fill_(7)
        assert.are.equal(7, x:cpu()[1][4]:item())
    end)

    it("atleast_*d, tril_indices, triu_indices, block_diag's dtypes", function()
        local s, v, m = t64(3), t64(V3), t64(X)
        assert.are.same({ 1 }, tide.atleast_1d(s).shape)
        assert.are.same({ 1, 3 }, tide.atleast_2d(v).shape)
        assert.are.same({ 3, 4 }, tide.atleast_2d(m).shape)
        assert.are.same({ 1, 1, 1 }, tide.atleast_3d(s).shape)
        assert.are.same({ 1, 3, 1 }, tide.atleast_3d(v).shape)
        assert.are.same({ 3, 4, 1 }, tide.atleast_3d(m).shape)
        local a, b = tide.atleast_2d(s, v)
        assert.are.same({ 1, 1 }, a.shape)
        assert.are.same({ 1, 3 }, b.shape)
        local list = tide.atleast_1d({ s, v })
        assert.are.equal(2, #list)
        assert.are.same({ 3 }, list[2].shape)
        for _, name in ipairs({ "tril_indices", "tril_indices_k", "triu_indices",
            "triu_indices_k" }) do
            local f = tide[name:gsub("_k$", "")]
            local i = name:find("_k$") and (name:find("tril") and f(3, 5, 1, { device = DEV }) or
                f(3, 5, -1, { device = DEV })) or f(4, 3, { device = DEV })
            close(T.values[name], i, 0, name)
            assert.are.equal("int64", i.dtype)
            assert.are.equal(tide.device(DEV), i.device)
        end
        assert.are.equal("int32", tide.tril_indices(2, 2, 0, { dtype = "int32" }).dtype)
        local bd = tide.block_diag(on({ { 1, 2 } }), on({ 3 }))
        close(T.values.block_diag_int, bd, 0, "block_diag int")
        assert.are.equal("int64", bd.dtype)
        -- diagonal is a copy (tide has no strided views of it)
        local x = t64(X)
        x:diagonal():fill_(9)
        assert.are.equal(0.5, x:cpu()[1][1]:item())
    end)

    it("refuses what PyTorch refuses, naming the op and the values", function()
        local x = t64(X)
        assert.has_error(function() x:hsplit(3) end,
            "tide: hsplit: dim 2 has size 4, which 3 sections cannot split evenly; give " ..
            "indices instead")
        assert.has_error(function() t64(V3):vsplit(1) end,
            "tide: vsplit: needs a tensor with at least 2 dims, got 1-D")
        assert.has_error(function() x:tensor_split(0) end,
            "tide: tensor_split: sections must be > 0, got 0")
        assert.has_error(function() x:tensor_split({ 1.5 }) end,
            "tide: tensor_split: index 1 must be an integer, got 1.5")
        assert.has_error(function() x:rot90(1, { 1, 1 }) end,
            "tide: rot90: the two dims must differ, got 1 and 1")
        assert.has_error(function() t64(V3):diagonal() end,
            "tide: diagonal: needs a tensor with at least 2 dims, got 1-D")
        assert.has_error(function() x:diag_embed(0, 2, 2) end,
            "tide: diag_embed: dim1 and dim2 must differ, got 2 and 2")
        assert.has_error(function() tide.block_diag(x:reshape(3, 2, 2)) end,
            "tide: block_diag: tensor 1 must have 2 dims or fewer, got 3-D")
        assert.has_error(function() tide.cartesian_prod(x) end,
            "tide: cartesian_prod: tensor 1 must be 1-D, got {3, 4}")
        assert.has_error(function() tide.hstack({}) end,
            "tide: hstack: expected at least one tensor")
        assert.has_error(function() tide.tril_indices(2, 2, { dtyp = "int32" }) end,
            'tide: tril_indices: unknown option "dtyp" (did you mean "dtype"?)')
        assert.has_error(function() tide.block_diag(x, tide.zeros({ 2 }, { device = D.other }))
        end, ("tide: block_diag: expected all tensors on the same device, found %s and %s; " ..
            "move one with :to(\"%s\")"):format(tostring(x.device), tostring(tide.device(D.other)),
            tostring(x.device)))
        local ok, err = pcall(function()
            return tide.vstack({ x, tide.zeros({ 4 }, { dtype = "float64", device = D.other }) })
        end)
        assert.is_false(ok)
        assert.is_truthy(tostring(err):find("same device", 1, true))
    end)
end)
