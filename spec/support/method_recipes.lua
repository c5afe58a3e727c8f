-- spec/support/method_recipes.lua — working arguments for every Tensor method, shared by
-- spec/grad_rule_spec.lua (the gradient rule) and spec/extra_args_spec.lua (the arity rule).
-- require("spec.support.method_recipes")(D) with D from spec/support/device.lua gives
-- { SKIP, RECIPES, inputs, IDX, tries, walk }.
local tide = require("tide")

return function(D)
    local SKIP = {}

    -- fresh inputs for each call: x and y [2, 3] float64 requiring grad, z the same without grad
    local function inputs()
        local function r()
            return tide.rand({ 2, 3 }, { dtype = "float64", device = D.name }):add(0.5)
        end
        return r():requires_grad_(true), r():requires_grad_(true), r()
    end

    -- an index of the inputs' shape, distinct in each row (scatter's targets), 1-based
    local function IDX()
        return tide.tensor({ { 3, 1, 2 }, { 2, 3, 1 } }, { dtype = "int64", device = D.name })
    end

    -- argument lists for the methods whose arguments the generic tries below do not cover
    local RECIPES = {
        view = function(x) return { x, 3, 2 } end,
        reshape = function(x) return { x, 3, 2 } end,
        expand = function(x) return { x, 2, 2, 3 } end,
        ["repeat"] = function(x) return { x, 2, 1 } end, -- x["repeat"](x, ...): Tensor.repeat
        sum_to = function(x) return { x, 1, 3 } end,
        permute = function(x) return { x, 2, 1 } end,
        transpose = function(x) return { x, 1, 2 } end,
        narrow = function(x) return { x, 2, 1, 2 } end,
        select = function(x) return { x, 1, 2 } end,
        unsqueeze = function(x) return { x, 1 } end,
        index_select = function(x) return { x, 2, { 3, 1 } } end,
        where = function(x, y) return { x, x:gt(1), y } end,
        clamp = function(x) return { x, 0.7, 1.2 } end,
        to = function(x) return { x, "float32" } end,
        cuda = function(x) return D.kind == "cuda" and { x } or SKIP end,
        pin_memory = function(x) -- pinned host memory comes from the CUDA backend
            return D.kind == "cpu" and tide.cuda.is_available() and { x } or SKIP
        end,
        matmul = function(x, y) return { x, y:t() } end,
        item = function(x) return { x:sum() } end,
        -- Lua's < and <= of one-element tensors give Lua booleans (as item does a number)
        __lt = function(x) return { x:sum(), 1 } end,
        __le = function(x) return { x:sum(), 1 } end,
        totable = function(x) return D.is_host and { x } or SKIP end,
        backward = function(x) return { x:sum() } end,
        register_hook = function(x) return { x, function() end } end,
        __index = function(x) return { x, 1 } end,
        -- in place: a destination without grad, a source with it
        copy_ = function(_, y, z) return { z, y } end,
        index_add_ = function(_, y, z) return { z, 2, { 1, 2, 3 }, y } end,
        __newindex = function(_, y, z) return { z, 1, y[1] } end,
        clamp_ = function(_, _, z) return { z, 0.7, 1.2 } end,
        add_ = function(_, y, z) return { z, y, 2 } end,
        sub_ = function(_, y, z) return { z, y, 2 } end,
        -- gather, scatter, masks, sorting, flips and rolls (spec/ordering_spec.lua)
        gather = function(x) return { x, 2, IDX() } end,
        scatter = function(x, y) return { x, 2, IDX(), y } end,
        scatter_add = function(x, y) return { x, 2, IDX(), y } end,
        scatter_ = function(_, y, z) return { z, 2, IDX(), y } end,
        scatter_add_ = function(_, y, z) return { z, 2, IDX(), y } end,
        -- scatter_reduce's CPU kernels (tide.indexing), in place as scatter_
        _scatter_amax_ = function(_, y, z) return { z, 2, IDX(), y } end,
        _scatter_amin_ = function(_, y, z) return { z, 2, IDX(), y } end,
        masked_fill = function(x) return { x, x:gt(1), 0.5 } end,
        masked_fill_ = function(_, y, z) return { z, z:gt(1), y:sum() } end,
        masked_select = function(x) return { x, x:gt(1) } end,
        topk = function(x) return { x, 2 } end,
        flip = function(x) return { x, 2 } end,
        roll = function(x) return { x, 1, 2 } end,
        multinomial = function(x) return { x, 2 } end,
        repeat_interleave = function(x) return { x, { 2, 1 }, 1 } end, -- spec/index_ops_spec.lua
        _keep_mask_ = function(_, _, z) return { z, 0.5, 2 } end, -- nn's dropout mask, in place
    }

    -- the reductions and shape ops written in Lua (lua/tide/reductions.lua, shapes.lua)
    for _, m in ipairs({ "cumsum", "cumprod", "logsumexp" }) do
        RECIPES[m] = function(x) return { x, 2 } end
    end
    RECIPES.chunk = function(x) return { x, 2, 2 } end
    RECIPES.split = function(x) return { x, { 1, 2 }, 2 } end
    RECIPES.unflatten = function(x) return { x, 2, { 3, 1 } } end
    -- PyTorch's spellings (lua/tide/pointwise.lua, products.lua)
    RECIPES.tolist = RECIPES.totable
    RECIPES.polygamma = function(x) return { x, 1 } end
    RECIPES.fill_diagonal_ = function(_, _, z) return { z, 0.5 } end
    -- a probability: the inputs lie in [0.5, 1.5), valid for bernoulli_ only now and then
    RECIPES.bernoulli_ = function(_, _, z) return { z, 0.5 } end
    -- tide.linalg's methods take square matrices: x's first two columns, well-conditioned
    local function square(x)
        return x:narrow(2, 1, 2) + tide.eye(2, { dtype = x.dtype, device = x.device }) * 3
    end
    for _, m in ipairs({ "det", "logdet", "slogdet", "inverse", "qr", "pinverse", "matrix_exp" }) do
        RECIPES[m] = function(x) return { square(x) } end
    end
    RECIPES.cholesky = function(x)
        local s = square(x)
        return { s:matmul(s:t()) }
    end
    RECIPES.matrix_power = function(x) return { square(x), 3 } end
    RECIPES.polygamma_ = function(_, _, z) return { z, 2 } end
    RECIPES.zeta = function(x, y) return { x:detach():add(1.5), y } end -- no gradient for x
    RECIPES.zeta_ = function(_, y, z) return { z:add(1.5), y } end
    RECIPES.lerp = function(x, y) return { x, y, 0.3 } end
    RECIPES.lerp_ = function(_, y, z) return { z, y, 0.7 } end
    RECIPES.addcmul = function(x, y) return { x, y, y } end
    RECIPES.addcdiv = RECIPES.addcmul
    RECIPES.addcmul_ = function(_, y, z) return { z, y, y } end
    RECIPES.addcdiv_ = RECIPES.addcmul_
    RECIPES.outer = function(x, y) return { x:view(-1), y:view(-1) } end
    RECIPES.ger = RECIPES.outer
    RECIPES.bmm = function(x, y) return { x:unsqueeze(1), y:t():unsqueeze(1) } end
    RECIPES.addmm = function(x, y) return { x, y, y:t():matmul(y) } end
    RECIPES.movedim = function(x) return { x, 1, 2 } end
    RECIPES.broadcast_to = RECIPES.expand
    RECIPES.swapaxes = RECIPES.transpose
    RECIPES.swapdims = RECIPES.transpose
    RECIPES.clip = RECIPES.clamp
    RECIPES.clip_ = RECIPES.clamp_
    RECIPES.tensordot = function(x, y) return { x, y, { { 1 }, { 1 } } } end
    -- lua/tide/products.lua: the BLAS names, with their ranks
    RECIPES.mm = RECIPES.matmul
    RECIPES.mv = function(x, y) return { x, y[1] } end
    RECIPES.dot = function(x, y) return { x[1], y[1] } end
    RECIPES.vdot = RECIPES.dot
    RECIPES.addmm_ = function(_, y, z) return { z, y, y:t():matmul(y) } end
    RECIPES.addmv = function(x, y) return { x:select(2, 1), y, y[1] } end
    RECIPES.addmv_ = function(_, y, z) return { z:select(2, 1), y, y[1] } end
    RECIPES.addr = function(x, y) return { x, y:select(2, 1), y[1] } end
    RECIPES.addr_ = function(_, y, z) return { z, y:select(2, 1), y[1] } end
    RECIPES.baddbmm = function(x, y)
        return { x:unsqueeze(1), y:unsqueeze(1), y:t():matmul(y):unsqueeze(1) }
    end
    RECIPES.baddbmm_ = function(_, y, z)
        return { z:unsqueeze(1), y:unsqueeze(1), y:t():matmul(y):unsqueeze(1) }
    end
    RECIPES.addbmm = function(x, y) return { x, y:unsqueeze(1), y:t():matmul(y):unsqueeze(1) } end
    RECIPES.addbmm_ = function(_, y, z)
        return { z, y:unsqueeze(1), y:t():matmul(y):unsqueeze(1) }
    end
    -- lua/tide/joins.lua: the splits
    RECIPES.tensor_split = function(x) return { x, 2, 2 } end
    RECIPES.hsplit = function(x) return { x, { 1 } } end
    RECIPES.vsplit = RECIPES.hsplit
    RECIPES.dsplit = function(x) return { x:unsqueeze(3), { 1 } } end
    -- lua/tide/indexing.lua, scans.lua, statistics.lua
    local function I(v) return tide.tensor(v, { dtype = "int64", device = D.name }) end
    RECIPES.take = function(x) return { x, I({ 1, 6 }) } end
    RECIPES.take_along_dim = function(x) return { x, IDX(), 2 } end
    RECIPES.index_fill = function(x) return { x, 2, I({ 1 }), 0.5 } end
    RECIPES.index_fill_ = function(_, y, z) return { z, 2, I({ 1 }), y:sum() } end
    RECIPES.index_copy = function(x, y) return { x, 2, I({ 3, 1 }), y:narrow(2, 1, 2) } end
    RECIPES.index_copy_ = function(_, y, z) return { z, 2, I({ 3, 1 }), y:narrow(2, 1, 2) } end
    RECIPES.index_add = function(x, y) return { x, 2, I({ 1, 2, 3 }), y } end
    RECIPES.masked_scatter = function(x, y) return { x, x:gt(1), y } end
    RECIPES.masked_scatter_ = function(_, y, z) return { z, z:gt(1), y } end
    RECIPES.scatter_reduce = function(x, y) return { x, 2, IDX(), y, "amax" } end
    RECIPES.scatter_reduce_ = function(_, y, z) return { z, 2, IDX(), y, "prod" } end
    RECIPES.cummax = function(x) return { x, 2 } end
    RECIPES.cumsum_ = function(_, _, z) return { z, 2 } end
    RECIPES.cumprod_ = RECIPES.cumsum_
    RECIPES.moveaxis = function(x) return { x, 1, 2 } end
    RECIPES.unfold = function(x) return { x, 2, 2, 1 } end
    RECIPES.as_strided = function(x) return { x, { 2 }, { 1 }, 0 } end
    RECIPES.cholesky_inverse = function(x) return { x:narrow(2, 1, 2) } end
    RECIPES.cholesky_solve = function(x, y) return { y, x:narrow(2, 1, 2) } end
    RECIPES.narrow_copy = function(x) return { x, 2, 1, 2 } end
    RECIPES.is_nonzero = function(x) return { x:sum() } end
    RECIPES.select_scatter = function(x, y) return { x, y:select(1, 1), 1, 2 } end
    RECIPES.diagonal_scatter = function(x, y) return { x, y:diagonal() } end
    RECIPES.slice_scatter = function(x, y) return { x, y:narrow(2, 1, 2), { dim = 2, step = 2 } } end
    RECIPES.cummin = RECIPES.cummax
    RECIPES.logcumsumexp = RECIPES.cummax
    RECIPES.kthvalue = function(x) return { x, 2 } end
    RECIPES.renorm = function(x) return { x, 2, 1, 1.0 } end
    RECIPES.renorm_ = function(_, _, z) return { z, 2, 1, 1.0 } end
    -- the bitwise ops take integer tensors (nothing there requires grad: the rule holds)
    for _, m in ipairs({ "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
        "bitwise_right_shift", "__band", "__bor", "__bxor", "__shl", "__shr", "gcd", "lcm" }) do
        RECIPES[m] = function() return { I({ 5, 6 }), I({ 3, 1 }) } end
        RECIPES[m .. "_"] = RECIPES[m]
    end
    RECIPES.bitwise_not = function() return { I({ 5, 6 }) } end
    RECIPES.bitwise_not_ = RECIPES.bitwise_not
    RECIPES.__bnot = RECIPES.bitwise_not
    -- lua/tide/legacy.lua: a Lua function on each element, on the host only
    local function keep(v) return v end
    RECIPES.apply_ = function(_, _, z) return D.is_host and { z, keep } or SKIP end
    RECIPES.map_ = function(_, _, z) return D.is_host and { z, z:clone(), keep } or SKIP end
    RECIPES.map2_ = function(_, _, z) return D.is_host and { z, z:clone(), z:clone(), keep } or SKIP end
    RECIPES.apply, RECIPES.map, RECIPES.map2 = RECIPES.apply_, RECIPES.map_, RECIPES.map2_
    -- lua/tide/subscripts.lua
    RECIPES.index_put = function(x, y) return { x, { I({ 1, 2 }), I({ 3, 1 }) }, y[1]:narrow(1, 1, 2) } end
    RECIPES.index_put_ = function(_, y, z) return { z, { I({ 1, 2 }), I({ 3, 1 }) }, y[1]:narrow(1, 1, 2) } end
    -- lua/tide/inplace_views.lua: into z, which does not require grad
    RECIPES.t_ = function(_, _, z) return { z } end
    RECIPES.squeeze_ = RECIPES.t_
    RECIPES.unsqueeze_ = function(_, _, z) return { z, 1 } end
    RECIPES.transpose_ = function(_, _, z) return { z, 1, 2 } end
    RECIPES.swapdims_ = RECIPES.transpose_
    RECIPES.swapaxes_ = RECIPES.transpose_
    -- lua/tide/flat_indexing.lua, histograms.lua, dtype_queries.lua
    RECIPES.put_ = function(_, y, z)
        return { z, tide.tensor({ 1, 6 }, { dtype = "int64", device = D.name }),
            y:reshape(-1):narrow(1, 1, 2) }
    end
    RECIPES.put = function(x, y)
        return { x, tide.tensor({ 1, 6 }, { dtype = "int64", device = D.name }),
            y:reshape(-1):narrow(1, 1, 2) }
    end
    RECIPES.histogram = function(_, _, z) return { z, 3 } end -- no gradient: z has none
    RECIPES.bincount = function() return { tide.tensor({ 1, 3 }, { device = D.name }) } end

    -- spec/tensor_gaps_spec.lua: the methods that always raise (tide has no int8, int16 or NumPy;
    -- PyTorch 1.13 removed solve, lstsq and eig), and working arguments for the others
    for _, m in ipairs({ "char", "short", "eig", "lstsq", "solve", "numpy" }) do
        RECIPES[m] = function() return SKIP end
    end
    RECIPES.as_strided_ = function(_, _, z) return { z, { 2 }, { 1 }, 0 } end
    RECIPES.index_reduce = function(x, y) return { x, 2, I({ 3, 1, 2 }), y, "amax" } end
    RECIPES.index_reduce_ = function(_, y, z) return { z, 2, I({ 3, 1, 3 }), y, "prod" } end
    RECIPES.mvlgamma = function(x) return { x, 1 } end
    RECIPES.mvlgamma_ = function(_, _, z) return { z, 1 } end
    RECIPES.nextafter = function(x, y) return { x:detach(), y:detach() } end -- no gradient
    RECIPES.nextafter_ = function(_, y, z) return { z, y:detach() } end
    RECIPES.lu = function(x) return { square(x) } end
    RECIPES.lu_solve = function(x, y)
        local LU, piv = square(x):lu()
        return { y, LU, piv }
    end
    RECIPES.symeig = function(x)
        local s = square(x)
        return { s + s:t(), true }
    end
    RECIPES.triangular_solve = function(x, y) return { y, square(x):triu() } end
    RECIPES.orgqr = function(x) return { x:t():geqrf() } end
    RECIPES.ormqr = function(x, y)
        local a, tau = x:t():geqrf()
        return { a, tau, y:t() }
    end
    RECIPES.prelu = function(x, y) return { x, y[1]:narrow(1, 1, 1) } end
    RECIPES.split_with_sizes = RECIPES.split
    RECIPES.unsafe_split = RECIPES.split
    RECIPES.unsafe_split_with_sizes = RECIPES.split
    RECIPES.new_empty_strided = function(x) return { x, { 2, 2 }, { 1, 2 } } end
    RECIPES.stft = function(x)
        local window = tide.ones(4, { device = x.device })
        return { x:flatten(), 4, { return_complex = true, window = window } }
    end
    RECIPES.unsafe_chunk = RECIPES.chunk
    RECIPES.resize_ = function(_, _, z) return { z, 3, 2 } end
    RECIPES.resize_as_ = function(_, _, z) return { z, z:t() } end

    -- the generic ways to call method m: no argument, a tensor requiring grad, a number; in place,
    -- first into z, which does not require grad, from y, which does
    local function tries(m, x, y, z)
        if m:sub(-1) == "_" then
            return { { z, y }, { x }, { x, 0.5 } }
        end
        return { { x }, { x, y }, { x, 0.5 } }
    end

    -- every method of core.Tensor and every metamethod, enumerated (not a hand list)
    local function walk()
        local names, fns = {}, {}
        for k, v in pairs(tide.core.Tensor) do
            if type(v) == "function" then
                names[#names + 1], fns[k] = k, v
            end
        end
        for k, v in pairs(getmetatable(tide.zeros(1))) do
            if type(v) == "function" then
                names[#names + 1], fns[k] = k, v
            end
        end
        -- the indexing metamethods, as a user reaches them
        fns.__index = function(t, i) return t[i] end
        fns.__newindex = function(t, i, v) t[i] = v end
        table.sort(names)
        return names, fns
    end

    return { SKIP = SKIP, RECIPES = RECIPES, inputs = inputs, IDX = IDX, tries = tries,
        walk = walk }
end
