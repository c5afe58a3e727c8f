-- porting_tensor_spec.lua — the tensor ops a ported script reaches for that tide lacked, against
-- PyTorch 1.13's values and gradients (spec/fixtures/porting_tensor_torch.lua, written by
-- spec/fixtures/make_porting_tensor.py): products (mm ... kron), element-wise functions
-- (logit ... fix), joins and splits, indexing, scans, reductions and searches; their dtypes,
-- in-place twins, errors and devices.
local tide = require("tide")
local D = require("spec.support.device")

local T = dofile("spec/fixtures/porting_tensor_torch.lua")
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
    P.run_cases(it, T, CASES, check_case)
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

    it("fill_diagonal_: PyTorch's diagonal, wrapped or not, 2-D or all dims equal", function()
        local tall = tide.zeros({ 7, 3 }, { dtype = "float64", device = DEV })
        assert.are.equal(tall, tall:fill_diagonal_(5, { wrap = true }))
        close(T.values.fill_diagonal_wrap, tall, 0, "wrap")
        local plain = tide.zeros({ 7, 3 }, { dtype = "float64", device = DEV }):fill_diagonal_(5)
        close(T.values.fill_diagonal, plain, 0, "no wrap")
        local cube = tide.zeros({ 3, 3, 3 }, { dtype = "float64", device = DEV }):fill_diagonal_(2)
        close(T.values.fill_diagonal_3d, cube, 0, "3-D")
        assert.has_error(function() tide.zeros({ 2, 3, 3 }):fill_diagonal_(1) end,
            "tide: fill_diagonal_: the dims of a 3-D tensor must all be equal, got {2, 3, 3}")
        assert.has_error(function() tide.zeros({ 3, 3 }):fill_diagonal_(1, { wrapp = true }) end,
            'tide: fill_diagonal_: unknown option "wrapp" (did you mean "wrap"?)')
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
        local other = tostring(tide.device(D.other))
        assert.has_error(function() a:mm(b:t()) end, ("tide: mm: expected all tensors on the " ..
            "same device, found %s and %s; move one with :to(\"%s\")"):format(
            tostring(a.device), other, other))
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
            "tide: hypot: shapes [3, 4] and [3] cannot be broadcast: size 4 vs 3 at dim 2")
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
        -- diagonal is a view, as PyTorch's: writing into it writes x
        local x = t64(X)
        x:diagonal():fill_(9)
        assert.are.equal(9, x:cpu()[1][1]:item())
        assert.are.equal(9, x:cpu()[3][3]:item())
        assert.are.equal(-1.25, x:cpu()[1][2]:item())
        x:diagonal(1):zero_()
        assert.are.equal(0, x:cpu()[1][2]:item())
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
            tostring(tide.device(D.other))))
        local ok, err = pcall(function()
            return tide.vstack({ x, tide.zeros({ 4 }, { dtype = "float64", device = D.other }) })
        end)
        assert.is_false(ok)
        assert.is_truthy(tostring(err):find("same device", 1, true))
    end)
end)

local function idx(v)
    return on(v, "int64")
end

-- PyTorch's 0-based indices, 1-based
local function plus1(rows)
    if type(rows) == "number" then
        return rows + 1
    end
    local out = {}
    for i, r in ipairs(rows) do
        out[i] = plus1(r)
    end
    return out
end

describe("indexing, PyTorch's values (" .. DEV .. ")", function()
    local SIDX, SIDX0 = plus1(T.SIDX), plus1(T.SIDX0)
    run_cases({
        take = { function(x) return x:take(idx({ { 1, 6 }, { 12, 6 } })) end, X },
        take_along_dim = { function(x)
            return x:take_along_dim(idx({ { 4, 1 }, { 2, 2 }, { 3, 4 } }), 2)
        end, X },
        take_along_dim_bcast = { function(x)
            return tide.take_along_dim(x, idx({ { 3 }, { 1 }, { 2 } }), 2)
        end, X },
        take_along_dim_flat = { function(x) return x:take_along_dim(idx({ 8, 1, 8 })) end, X },
        index_fill = { function(x) return x:index_fill(2, idx({ 1, 3, 3 }), -1.5) end, X },
        index_fill_tensor = { function(x, v)
            return tide.index_fill(x, 1, idx({ 2 }), v[1])
        end, X, { 2.5 } },
        index_copy = { function(x, s)
            return x:index_copy(2, idx({ 4, 1 }), s:narrow(2, 1, 2))
        end, X, Y },
        index_add = { function(x, s)
            return x:index_add(1, idx({ 3, 1, 3 }), s, { alpha = -2 })
        end, X, Y },
        index_add_inplace = { function(x, s)
            return (x * 1):index_add_(1, idx({ 3, 1, 3 }), s, { alpha = 0.5 })
        end, X, Y },
        scatter_reduce_add = { function(x, s)
            return x:scatter(2, idx(SIDX), s, { reduce = "add" })
        end, X, Y },
        scatter_reduce_multiply = { function(x)
            return (x * 1):scatter_(2, idx(SIDX), 2.5, { reduce = "multiply" })
        end, X },
        cumsum_dtype = { function(x)
            local r = x:float():cumsum(2, { dtype = "float64" })
            assert(r.dtype == "float64", "cumsum {dtype}: " .. r.dtype)
            return r
        end, X },
        masked_scatter = { function(x, s)
            return x:masked_scatter(on({ { true, false, true, false } }), s)
        end, X, Y },
        masked_scatter_full = { function(x, s)
            return tide.masked_scatter(x, t64(X):gt(0), s)
        end, X, Y },
        scatter_sum = { function(x, s) return x:scatter_reduce(2, idx(SIDX), s, "sum") end, X, Y },
        scatter_sum_excl = { function(x, s)
            return x:scatter_reduce(2, idx(SIDX), s, "sum", { include_self = false })
        end, X, Y },
        scatter_mean = { function(x, s)
            return tide.scatter_reduce(x, 2, idx(SIDX), s, "mean")
        end, X, Y },
        scatter_mean_excl = { function(x, s)
            return x:scatter_reduce(2, idx(SIDX), s, "mean", { include_self = false })
        end, X, Y },
        scatter_prod = { function(x, s) return x:scatter_reduce(2, idx(SIDX), s, "prod") end,
            X, T.Z },
        scatter_prod_zeros = { function(x, s)
            return x:scatter_reduce(1, idx(SIDX0), s, "prod", { include_self = false })
        end, X, T.ZEROS },
        scatter_prod_zeros_self = { function(x, s)
            return x:scatter_reduce(1, idx(SIDX0), s, "prod")
        end, X, T.ZEROS },
        scatter_amax = { function(x, s) return x:scatter_reduce(2, idx(SIDX), s, "amax") end,
            X, T.TIES },
        scatter_amax_many = { function(x, s)
            return x:scatter_reduce(2, idx(plus1(T.MANY_IDX)), s, "amax")
        end, T.MANY_X, T.MANY_SRC },
        scatter_prod_many = { function(x, s)
            return x:scatter_reduce(2, idx(plus1(T.MANY_IDX)), s, "prod", { include_self = false })
        end, T.MANY_X, T.MANY_SRC },
        scatter_amin_excl = { function(x, s)
            return x:scatter_reduce(2, idx(SIDX), s, "amin", { include_self = false })
        end, X, T.TIES },
    })

    it("argwhere, isin; in place: index_fill_, index_copy_, masked_scatter_, scatter_reduce_",
        function()
            local x = t64(X)
            local a = x:argwhere()
            close(T.values.argwhere, a, 0, "argwhere")
            assert.are.equal("int64", a.dtype)
            local i = tide.isin(x, t64({ 3, 0.25, -1, 0 / 0 }))
            assert.are.equal("bool", i.dtype)
            close(T.values.isin, i, 0, "isin")
            close(T.values.isin_invert, tide.isin(on({ 1, 2, 3, 4, 5 }), on({ 5, 1 }),
                { invert = true }), 0, "isin invert")
            close(T.values.isin_scalar, tide.isin(on({ 1, 2, 3 }), 2), 0, "isin scalar")
            local y = t64(X)
            assert.are.equal(y, y:index_fill_(2, idx({ 1 }), 0))
            close(t64(X):index_fill(2, idx({ 1 }), 0):cpu():totable(), y, 0, "index_fill_")
            y:index_copy_(1, idx({ 2 }), t64({ { 9, 9, 9, 9 } }))
            assert.are.same({ 9, 9, 9, 9 }, y:cpu()[2]:totable())
            y:masked_scatter_(y:gt(8), t64({ 1, 2, 3, 4 }))
            assert.are.same({ 1, 2, 3, 4 }, y:cpu()[2]:totable())
            y:scatter_reduce_(2, idx({ { 1, 1 } }), t64({ { 5, 7 } }), "amax")
            assert.are.equal(7, y:cpu()[1][1]:item())
            -- integer scatter_reduce: mean floors, as PyTorch's
            local n = on({ 10, 20 }):scatter_reduce(1, idx({ 1, 1 }), on({ 1, 2 }), "mean")
            assert.are.same({ 4, 20 }, n:cpu():totable())
            assert.are.equal("int64", n.dtype)
        end)

    it("refuses what PyTorch refuses, naming the op and the values", function()
        local x = t64(X)
        assert.has_error(function() x:take(t64({ 1 })) end,
            "tide: take: index must be an int64 or int32 tensor, got float64")
        assert.has_error(function() x:take_along_dim(idx({ 1, 2 }), 2) end,
            "tide: take_along_dim: input {3, 4} and indices {2} must have the same number of dims")
        assert.has_error(function() x:index_fill(2, idx({ { 1 } }), 0) end,
            "tide: index_fill: index must be 0-D or 1-D, got {1, 1}")
        assert.has_error(function() x:index_fill(2, idx({ 1 }), "a") end,
            "tide: index_fill: value must be a number or a 0-D tensor, got string")
        assert.has_error(function() x:index_add(1, idx({ 1 }), t64(Y), { alfa = 2 }) end,
            'tide: index_add: unknown option "alfa" (did you mean "alpha"?)')
        assert.has_error(function() x:index_add_(1, idx({ 1 }), t64(Y):narrow(1, 1, 1),
            { alfa = 2 }) end, 'tide: index_add_: unknown option "alfa" (did you mean "alpha"?)')
        assert.has_error(function() x:scatter(2, idx(SIDX), t64(Y), { reduce = "mean" }) end,
            'tide: scatter: reduce = mean; expected "add" or "multiply" (or no options)')
        assert.has_error(function() x:cumsum(1, { dtyp = "float64" }) end,
            'tide: cumsum: unknown option "dtyp" (did you mean "dtype"?)')
        assert.has_error(function() x:masked_scatter(x:gt(0), t64({ 1 })) end,
            "tide: masked_scatter: mask selects 7 elements but source has only 1")
        assert.has_error(function() x:masked_scatter(on({ 1 }), t64({ 1 })) end,
            "tide: masked_scatter: mask must be a bool tensor, got int64; compare with :ne(0)")
        assert.has_error(function() x:scatter_reduce(2, idx({ { 1 } }), t64(Y), "max") end,
            "tide: scatter_reduce: reduce must be \"sum\", \"prod\", \"mean\", \"amax\" or " ..
            "\"amin\", got \"max\"")
        assert.has_error(function()
            x:scatter_reduce(2, idx({ { 1 } }), t64(Y), "sum", { include = false })
        end, 'tide: scatter_reduce: unknown option "include"; options are dim, index, src, ' ..
            'reduce, include_self')
        assert.has_error(function() x:scatter_reduce(2, idx({ 1 }), t64(Y), "sum") end,
            "tide: scatter_reduce: input {3, 4}, index {1} and src {3, 4} must have the same " ..
            "number of dims")
        for _, how in ipairs({ "sum", "prod", "amax" }) do -- named as scatter_reduce, any reduce
            assert.has_error(function() x:scatter_reduce(2, idx({ { 5 } }), t64(Y), how) end,
                "tide: scatter_reduce: index 5 is out of range for dim 2 of size 4; indices " ..
                "are 1-based: use 1..4")
        end
        assert.has_error(function() tide.isin(1, 2) end,
            "tide: isin: elements and test_elements cannot both be numbers; make one a tensor")
        local before = x:cpu():totable()
        pcall(function() x:index_copy_(1, idx({ 2 }), t64({ 1 })) end)
        close(before, x, 0, "index_copy_ after an error")
        local other = tostring(tide.device(D.other))
        local moved = ("expected all tensors on the same device, found %s and %s; move one " ..
            "with :to(\"%s\")"):format(tostring(x.device), other, other)
        assert.has_error(function()
            return x:index_fill(2, tide.tensor({ 1 }, { device = D.other }), 0)
        end, "tide: index_fill: " .. moved)
        assert.has_error(function()
            return x:masked_scatter(x:lt(-10):to(D.other), x)
        end, "tide: masked_scatter: " .. moved)
        assert.has_error(function()
            return x:scatter_reduce(2, idx({ { 1 } }):to(D.other), x, "amax")
        end, "tide: scatter_reduce: " .. moved)
    end)
end)

describe("scans, reductions and searches, PyTorch's values (" .. DEV .. ")", function()
    run_cases({
        cummax = { function(x) return (x:cummax(2)) end, T.SCAN },
        cummin = { function(x) return (tide.cummin(x, 1)) end, T.SCAN },
        logcumsumexp = { function(x) return x:logcumsumexp(2) end, X },
        logcumsumexp_wide = { function(x) return tide.logcumsumexp(x, 1) end,
            { -1000, 0, 1, 800, -5, 3, 2 } },
        kthvalue = { function(x) return (x:kthvalue(2, 2)) end, X },
        kthvalue_keep = { function(x) return (tide.kthvalue(x, 3, 1, true)) end, X },
        mode = { function(x) return (x:mode(2)) end, T.MODE },
        nanmedian = { function(x) return (x:nanmedian(2)) end, T.NANS },
        nanmedian_all = { function(x) return tide.nanmedian(x):reshape(1) end, T.NANS },
        quantile = { function(x) return x:quantile(0.3) end, X },
        quantile_dim = { function(x, q) return x:quantile(q, 2, true) end, X,
            { 0, 0.25, 0.5, 0.9, 1 } },
        quantile_lower = { function(x)
            return tide.quantile(x, 0.3, 1, { interpolation = "lower" })
        end, X },
        quantile_higher = { function(x)
            return x:quantile(0.3, 1, false, { interpolation = "higher" })
        end, X },
        quantile_nearest = { function(x)
            return x:quantile(t64({ 0.25, 0.5, 0.75 }), 2, { interpolation = "nearest" })
        end, X },
        quantile_midpoint = { function(x)
            return x:quantile(0.4, 2, { interpolation = "midpoint" })
        end, X },
        quantile_nan = { function(x) return x:quantile(0.5, 2) end, T.NANS },
        nanquantile = { function(x) return tide.nanquantile(x, 0.4, 2) end, T.NANS },
        nanquantile_all = { function(x) return x:nanquantile(t64({ 0.1, 0.8 })) end, T.NANS },
        msort = { function(x) return x:msort() end, X },
        var_mean = { function(x) return tide.stack({ x:var_mean(2) }) end, X },
        std_mean = { function(x)
            return tide.stack({ x:std_mean({ 1, 2 }, false, true) })
        end, X },
        std_mean_all = { function(x) return tide.stack({ tide.std_mean(x) }):reshape(2) end, X },
        dist = { function(a, b) return a:dist(b):reshape(1) end, X, Y },
        dist_p3 = { function(a, b) return tide.dist(a, b[1], 3):reshape(1) end, X, Y },
        dist_inf = { function(a, b) return a:dist(b, math.huge):reshape(1) end, X, Y },
        dist_zero = { function(a, b) return a:dist(b):reshape(1) end, { 1, 2 }, { 1, 2 } },
        renorm = { function(x) return x:renorm(2, 1, 2.5) end, X },
        renorm_p1 = { function(x) return tide.renorm(x, 1, 2, 3) end, X },
        cov = { function(x) return x:cov() end, X },
        cov_corr0 = { function(x) return tide.cov(x, { correction = 0 }) end, X },
        cov_1d = { function(x) return x:cov():reshape(1) end, V4 },
        corrcoef = { function(x) return tide.corrcoef(x) end, X },
        trapezoid = { function(y) return tide.trapezoid(y) end, X },
        trapezoid_dx = { function(y) return tide.trapezoid(y, { dx = 0.5, dim = 1 }) end, X },
        trapezoid_x = { function(y, x) return tide.trapezoid(y, x) end, X, { 0, 0.5, 2, 2.25 } },
        trapezoid_xfull = { function(y, x) return tide.trapezoid(y, x, { dim = 1 }) end, X, Y },
    })

    it("indices, integer inputs and NaN", function()
        local V = T.values
        local _, i = t64(T.SCAN):cummax(2)
        close(V.cummax_idx, i, 0, "cummax indices")
        assert.are.equal("int64", i.dtype)
        _, i = t64(T.SCAN):cummin(1)
        close(V.cummin_idx, i, 0, "cummin indices")
        local v
        v, i = t64({ 1, 3, 3, 0 / 0, 2, 0 / 0 }):cummax(1)
        close(V.cummax_nan[1], v, 0, "cummax NaN")
        close(plus1(V.cummax_nan[2]), i, 0, "cummax NaN indices")
        v, i = on({ { 3, 1, 2, 1, 0 } }):cummin(2)
        close(V.cummin_int[1], v, 0, "cummin int")
        close(plus1(V.cummin_int[2]), i, 0, "cummin int indices")
        assert.are.equal("int64", v.dtype)
        _, i = t64(X):kthvalue(2, 2)
        close(V.kthvalue_idx, i, 0, "kthvalue indices")
        _, i = t64(T.MODE):mode(2)
        close(V.mode_idx, i, 0, "mode indices")
        v, i = on({ 3, 1, 3, 1, 2 }):mode()
        assert.are.equal(V.mode_int[1], v:item())
        assert.are.equal(V.mode_int[2] + 1, i:item())
        _, i = t64(T.NANS):nanmedian(2)
        close(V.nanmedian_idx, i, 0, "nanmedian indices")
        v, i = t64({ { 0 / 0, 0 / 0 }, { 1, 0 / 0 } }):nanmedian(2)
        close(V.nanmedian_allnan[1], v, 0, "nanmedian all NaN")
        close(plus1(V.nanmedian_allnan[2]), i, 0, "nanmedian all NaN indices")
        local lo, hi = t64(X):aminmax(2)
        close(V.aminmax[1], lo, 0, "aminmax min")
        close(V.aminmax[2], hi, 0, "aminmax max")
        lo, hi = tide.aminmax(t64(X))
        assert.are.same({ V.aminmax_all[1], V.aminmax_all[2] }, { lo:item(), hi:item() })
    end)

    it("searchsorted and bucketize: PyTorch's positions plus one", function()
        local V = T.values
        local s = t64({ 1, 2, 2, 3 })
        local r = tide.searchsorted(s, t64({ { 2, 0 }, { 5, 0 / 0 } }))
        close(V.searchsorted, r, 0, "searchsorted")
        assert.are.equal("int64", r.dtype)
        close(V.searchsorted_right, tide.searchsorted(s, t64({ 2, 0, 5, 3 }), { right = true }), 0,
            "searchsorted right")
        close(V.searchsorted_right, tide.searchsorted(s, t64({ 2, 0, 5, 3 }), { side = "right" }),
            0, "searchsorted side")
        close(V.searchsorted_2d, tide.searchsorted(t64({ { 1, 3, 5 }, { 2, 4, 6 } }),
            t64({ { 3, 6, 0, 4.5 }, { 3, 6, 0, 4.5 } })), 0, "searchsorted 2-D")
        close(V.searchsorted_sorter, tide.searchsorted(t64({ 3, 1, 2 }), t64({ 2.5, 1 }),
            { sorter = idx({ 2, 3, 1 }) }), 0, "searchsorted sorter")
        assert.are.equal(4, tide.searchsorted(s, 2, { right = true }):item())
        assert.are.equal("int32", tide.searchsorted(s, 2, { out_int32 = true }).dtype)
        close(V.bucketize, tide.bucketize(t64({ { 0.5, 1, 7 }, { 3, 4, 10 } }),
            t64({ 1, 3, 5, 7 })), 0, "bucketize")
        close(V.bucketize_right, tide.bucketize(t64({ 0.5, 1, 7, 3, 4, 10 }), t64({ 1, 3, 5, 7 }),
            { right = true }), 0, "bucketize right")
        -- the round trip: gathering at the position reads the first element >= v
        local at = tide.searchsorted(s, t64({ 1.5, 2.5 }))
        assert.are.same({ 2, 3 }, s:gather(1, at):cpu():totable())
    end)

    it("bincount (value v at index v) and histc", function()
        local V = T.values
        local b = tide.bincount(on({ 1, 1, 3, 5, 3, 1 }))
        close(V.bincount, b, 0, "bincount")
        assert.are.equal("int64", b.dtype)
        local w = tide.bincount(on({ 1, 1, 3, 5 }), { weights = t64({ 0.5, 0.25, 2, -1 }),
            minlength = 7 })
        close(V.bincount_weights, w, 0, "bincount weights")
        assert.are.equal("float64", w.dtype)
        assert.are.equal("float32", tide.bincount(on({ 1 }), { weights = on({ 1.5 }, "float32") })
            .dtype)
        assert.are.same({ 0, 0 }, tide.bincount(on({}, "int64"), { minlength = 2 }):cpu():totable())
        close(V.histc, tide.histc(t64(X), { bins = 4, min = -2, max = 2 }), 0, "histc")
        close(V.histc_auto, t64(X):histc({ bins = 5 }), 0, "histc auto range")
        close(V.histc_same, tide.histc(t64({ 2, 2 }), { bins = 4 }), 0, "histc one value")
    end)

    it("refuses what PyTorch refuses, naming the op and the values", function()
        local x = t64(X)
        assert.has_error(function() x:cummax() end,
            "tide: cummax: dim is required, as in x:cummax(1)")
        assert.has_error(function() x:kthvalue(5, 2) end,
            "tide: kthvalue: k = 5 is out of range for dim 2 of size 4; use 1..4")
        assert.has_error(function() x:quantile(1.5) end,
            "tide: quantile: q values must be in the range [0, 1]")
        assert.has_error(function() x:quantile(0.5, 1, { interpolation = "cubic" }) end,
            "tide: quantile: interpolation must be \"linear\", \"lower\", \"higher\", " ..
            "\"midpoint\" or \"nearest\", got cubic")
        assert.has_error(function() on({ 1, 2 }):quantile(0.5) end,
            "tide: quantile: needs a float32 or float64 tensor, got int64")
        assert.has_error(function() x:requires_grad_(true):aminmax() end,
            "tide: aminmax: not differentiable: argument #1 requires grad; call it under " ..
            "tide.no_grad or on detach()ed tensors")
        x = t64(X)
        assert.has_error(function() x:cov({ fweights = x }) end,
            'tide: cov: fweights must be 1-D, got {3, 4}')
        assert.has_error(function() tide.trapezoid(x, t64({ 1, 2 })) end,
            "tide: trapezoid: x has 2 points but dim 2 of y has 4")
        assert.has_error(function() tide.bincount(on({ 0, 1 })) end,
            "tide: bincount: values must be >= 1 (value v is counted at index v, 1-based), " ..
            "got 0; add 1 to 0-based values")
        assert.has_error(function() tide.bincount(x) end,
            "tide: bincount: input must be a 1-D integer tensor, got float64 {3, 4}")
        assert.has_error(function() tide.histc(x, { bins = 0 }) end,
            "tide: histc: bins = 0; expected an integer >= 1")
        assert.has_error(function() tide.histc(x, { min = 2, max = 1 }) end,
            "tide: histc: max must be larger than min, got min = 2 and max = 1")
        assert.has_error(function() tide.searchsorted(x, t64(V4)) end,
            "tide: searchsorted: sorted_sequence {3, 4} and values {4} must have the same dims " ..
            "but the last (or sorted_sequence 1-D)")
        assert.has_error(function() tide.searchsorted(t64(V4), 1, { side = "middle" }) end,
            "tide: searchsorted: side must be \"left\" or \"right\", got middle")
        assert.has_error(function() tide.bucketize(t64(V4), x) end,
            "tide: bucketize: boundaries must be 1-D, got {3, 4}")
        local other = tostring(tide.device(D.other))
        local moved = ("expected all tensors on the same device, found %s and %s; move one " ..
            "with :to(\"%s\")"):format(tostring(x.device), other, other)
        assert.has_error(function()
            return x:dist(tide.tensor(Y, { dtype = "float64", device = D.other }))
        end, "tide: dist: " .. moved)
        assert.has_error(function()
            return tide.bucketize(x, t64(V4):to(D.other))
        end, "tide: bucketize: " .. moved)
        assert.are.equal(tide.device(DEV), tide.searchsorted(t64(V4), t64(V3)).device)
    end)
end)

describe("empty dims and 0-D tensors (" .. DEV .. ")", function()
    it("keep their shapes as PyTorch's, or name the op", function()
        local e = tide.zeros({ 0, 3 }, { dtype = "float64", device = DEV })
        local s = t64(2.5)
        assert.are.same({ 0, 3 }, (e:cummax(1)).shape)
        assert.are.same({ 0, 3 }, e:logcumsumexp(2).shape)
        assert.are.same({ 0, 3, 3 }, e:diag_embed().shape)
        assert.are.same({ 0 }, e:quantile(0.5, 2).shape)
        assert.are.same({ 0, 3 }, e:renorm(2, 1, 1).shape)
        assert.are.same({ 0, 3 }, e:scatter_reduce(1, tide.zeros({ 0, 3 }, { dtype = "int64",
            device = DEV }), e, "amax").shape)
        assert.are.same({ 5 }, tide.searchsorted(t64({}), t64({ 1, 2, 3, 4, 5 })).shape)
        assert.are.same({ 1, 1, 1, 1, 1 }, tide.searchsorted(t64({}),
            t64({ 1, 2, 3, 4, 5 })):cpu():totable())
        assert.are.same({ 2, 0 }, tide.triu_indices(3, 3, 5, { device = DEV }).shape)
        assert.are.same({ 0, 0, 0 }, tide.histc(e, { bins = 3 }):cpu():totable())
        assert.are.same({}, (s:cummax(1)).shape)
        assert.are.same({}, (s:kthvalue(1)).shape)
        assert.are.same({}, s:quantile(0.5).shape)
        assert.are.same({ 1, 1, 1 }, tide.atleast_3d(s).shape)
        assert.are.same({ 2 }, tide.hstack({ s, s }).shape)
        assert.are.same({ 1, 1 }, tide.block_diag(s).shape)
        assert.are.equal(0, s:index_fill(1, idx({ 1 }), 0):item())
        assert.are.equal(7, s:index_copy(1, idx({ 1 }), t64(7)):item())
        assert.has_error(function() e:kthvalue(1, 1) end,
            "tide: kthvalue: k = 1 is out of range for dim 1 of size 0; use 1..0")
        assert.has_error(function() e:nanquantile(0.5) end,
            "tide: nanquantile: the input is empty along the reduced dim")
        assert.has_error(function() s:scatter_reduce(1, idx(1), s, "sum") end,
            "tide: scatter_reduce: needs an input with at least one dim, got a 0-D tensor; " ..
            "reshape it with :reshape(1)")
    end)
end)
