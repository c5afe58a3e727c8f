-- loss_rows_spec.lua — the pointwise losses on the kernel rows pointwise_loss and
-- pointwise_loss_backward (mse, l1, smooth_l1, huber, binary_cross_entropy_with_logits,
-- soft_margin): values and gradients to input and target against PyTorch 1.13's in float64
-- (each reduction; NaN and inf; smooth_l1 with beta = 0, where PyTorch gives -g to both sides at
-- a difference of 0), float32 against the same, a large tensor against the composite, the
-- composite kept where the rows do not apply (mixed dtypes, no elements, a graph of the
-- gradient), and failed calls that raise and change nothing.
local tide = require("tide")
local F = tide.nn.functional

local inf, nan = math.huge, 0 / 0

local FN = {
    mse = F.mse_loss, l1 = F.l1_loss, smooth_l1 = F.smooth_l1_loss,
    smooth_l1_b05 = F.smooth_l1_loss, smooth_l1_b0 = F.smooth_l1_loss, huber = F.huber_loss,
    huber_d2 = F.huber_loss, bce_with_logits = F.binary_cross_entropy_with_logits,
    soft_margin = F.soft_margin_loss,
}

local X = { 0.5, -1.2, 2.0, 0.0, 3.0, -0.3 }
local T = { reg = { 0.1, -1.2, 1.0, 1.0, 0.0, 0.2 }, bce = { 0.1, 0.0, 1.0, 1.0, 0.0, 0.2 },
    sm = { 1.0, -1.0, 1.0, -1.0, 1.0, -1.0 } }
local XS = { nan, inf, -inf, 1.0, inf, -inf, 1.0 }
local TS = { reg = { 0.5, 0.5, 0.5, nan, inf, -inf, -inf },
    bce = { 0.5, 1.0, 1.0, nan, 0.0, 0.0, 0.5 },
    sm = { 1.0, 1.0, -1.0, nan, -1.0, 1.0, 1.0 } }
local TARGETS = { bce_with_logits = "bce", soft_margin = "sm" }

-- PyTorch 1.13's (/usr/bin/python3, float64): the loss y (flattened), and the gradients of
-- sum(y * w), w = 0.5, 0.87, 1.24, ... over y's elements, to input (gx) and target (gt). The input
-- is X (then [2, 3]) or, special, XS. soft_margin's target gradient, which PyTorch does not
-- give, is tide's: -x sigmoid(-x t) g
local CASES = {
  { name = "mse", opts = {}, reduction = "none", special = false, y = {0.16000000000000003, 0.0, 1.0, 1.0, 9.0, 0.25}, gx = {0.4, 0.0, 2.48, -3.2199999999999998, 11.879999999999999, -2.35}, gt = {-0.4, 0.0, -2.48, 3.2199999999999998, -11.879999999999999, 2.35} },
  { name = "mse", opts = {}, reduction = "mean", special = false, y = {1.9016666666666666}, gx = {0.06666666666666667, 0.0, 0.16666666666666666, -0.16666666666666666, 0.5, -0.08333333333333333}, gt = {-0.06666666666666667, 0.0, -0.16666666666666666, 0.16666666666666666, -0.5, 0.08333333333333333} },
  { name = "mse", opts = {}, reduction = "sum", special = false, y = {11.41}, gx = {0.4, 0.0, 1.0, -1.0, 3.0, -0.5}, gt = {-0.4, 0.0, -1.0, 1.0, -3.0, 0.5} },
  { name = "mse", opts = {}, reduction = "none", special = true, y = {nan, inf, inf, nan, nan, nan, inf}, gx = {nan, inf, -inf, nan, nan, nan, inf}, gt = {nan, -inf, inf, nan, nan, nan, -inf} },
  { name = "l1", opts = {}, reduction = "none", special = false, y = {0.4, 0.0, 1.0, 1.0, 3.0, 0.5}, gx = {0.5, 0.0, 1.24, -1.6099999999999999, 1.98, -2.35}, gt = {-0.5, -0.0, -1.24, 1.6099999999999999, -1.98, 2.35} },
  { name = "l1", opts = {}, reduction = "mean", special = false, y = {0.9833333333333334}, gx = {0.08333333333333333, 0.0, 0.08333333333333333, -0.08333333333333333, 0.08333333333333333, -0.08333333333333333}, gt = {-0.08333333333333333, -0.0, -0.08333333333333333, 0.08333333333333333, -0.08333333333333333, 0.08333333333333333} },
  { name = "l1", opts = {}, reduction = "sum", special = false, y = {5.9}, gx = {0.5, 0.0, 0.5, -0.5, 0.5, -0.5}, gt = {-0.5, -0.0, -0.5, 0.5, -0.5, 0.5} },
  { name = "l1", opts = {}, reduction = "none", special = true, y = {nan, inf, inf, nan, nan, nan, inf}, gx = {0.0, 0.87, -1.24, 0.0, 0.0, 0.0, 2.7199999999999998}, gt = {-0.0, -0.87, 1.24, -0.0, -0.0, -0.0, -2.7199999999999998} },
  { name = "smooth_l1", opts = {}, reduction = "none", special = false, y = {0.08000000000000002, 0.0, 0.5, 0.5, 2.5, 0.125}, gx = {0.2, 0.0, 1.24, -1.6099999999999999, 1.98, -1.175}, gt = {-0.2, 0.0, -1.24, 1.6099999999999999, -1.98, 1.175} },
  { name = "smooth_l1", opts = {}, reduction = "mean", special = false, y = {0.6175}, gx = {0.03333333333333333, 0.0, 0.08333333333333333, -0.08333333333333333, 0.08333333333333333, -0.041666666666666664}, gt = {-0.03333333333333333, 0.0, -0.08333333333333333, 0.08333333333333333, -0.08333333333333333, 0.041666666666666664} },
  { name = "smooth_l1", opts = {}, reduction = "sum", special = false, y = {3.705}, gx = {0.2, 0.0, 0.5, -0.5, 0.5, -0.25}, gt = {-0.2, 0.0, -0.5, 0.5, -0.5, 0.25} },
  { name = "smooth_l1", opts = {}, reduction = "none", special = true, y = {nan, inf, inf, nan, nan, nan, inf}, gx = {nan, 0.87, -1.24, nan, nan, nan, 2.7199999999999998}, gt = {nan, -0.87, 1.24, nan, nan, nan, -2.7199999999999998} },
  { name = "smooth_l1_b05", opts = {beta = 0.5}, reduction = "none", special = false, y = {0.16000000000000003, 0.0, 0.75, 0.75, 2.75, 0.25}, gx = {0.4, 0.0, 1.24, -1.6099999999999999, 1.98, -2.35}, gt = {-0.4, 0.0, -1.24, 1.6099999999999999, -1.98, 2.35} },
  { name = "smooth_l1_b05", opts = {beta = 0.5}, reduction = "mean", special = false, y = {0.7766666666666667}, gx = {0.06666666666666667, 0.0, 0.08333333333333333, -0.08333333333333333, 0.08333333333333333, -0.08333333333333333}, gt = {-0.06666666666666667, 0.0, -0.08333333333333333, 0.08333333333333333, -0.08333333333333333, 0.08333333333333333} },
  { name = "smooth_l1_b05", opts = {beta = 0.5}, reduction = "sum", special = false, y = {4.66}, gx = {0.4, 0.0, 0.5, -0.5, 0.5, -0.5}, gt = {-0.4, 0.0, -0.5, 0.5, -0.5, 0.5} },
  { name = "smooth_l1_b05", opts = {beta = 0.5}, reduction = "none", special = true, y = {nan, inf, inf, nan, nan, nan, inf}, gx = {nan, 0.87, -1.24, nan, nan, nan, 2.7199999999999998}, gt = {nan, -0.87, 1.24, nan, nan, nan, -2.7199999999999998} },
  { name = "smooth_l1_b0", opts = {beta = 0.0}, reduction = "none", special = false, y = {0.4, 0.0, 1.0, 1.0, 3.0, 0.5}, gx = {0.5, -0.87, 1.24, -1.6099999999999999, 1.98, -2.35}, gt = {-0.5, -0.87, -1.24, 1.6099999999999999, -1.98, 2.35} },
  { name = "smooth_l1_b0", opts = {beta = 0.0}, reduction = "mean", special = false, y = {0.9833333333333334}, gx = {0.08333333333333333, -0.08333333333333333, 0.08333333333333333, -0.08333333333333333, 0.08333333333333333, -0.08333333333333333}, gt = {-0.08333333333333333, -0.08333333333333333, -0.08333333333333333, 0.08333333333333333, -0.08333333333333333, 0.08333333333333333} },
  { name = "smooth_l1_b0", opts = {beta = 0.0}, reduction = "sum", special = false, y = {5.9}, gx = {0.5, -0.5, 0.5, -0.5, 0.5, -0.5}, gt = {-0.5, -0.5, -0.5, 0.5, -0.5, 0.5} },
  { name = "smooth_l1_b0", opts = {beta = 0.0}, reduction = "none", special = true, y = {nan, inf, inf, nan, nan, nan, inf}, gx = {nan, 0.87, -1.24, nan, nan, nan, 2.7199999999999998}, gt = {nan, -0.87, 1.24, nan, nan, nan, -2.7199999999999998} },
  { name = "huber", opts = {}, reduction = "none", special = false, y = {0.08000000000000002, 0.0, 0.5, 0.5, 2.5, 0.125}, gx = {0.2, 0.0, 1.24, -1.6099999999999999, 1.98, -1.175}, gt = {-0.2, 0.0, -1.24, 1.6099999999999999, -1.98, 1.175} },
  { name = "huber", opts = {}, reduction = "mean", special = false, y = {0.6175}, gx = {0.03333333333333333, 0.0, 0.08333333333333333, -0.08333333333333333, 0.08333333333333333, -0.041666666666666664}, gt = {-0.03333333333333333, 0.0, -0.08333333333333333, 0.08333333333333333, -0.08333333333333333, 0.041666666666666664} },
  { name = "huber", opts = {}, reduction = "sum", special = false, y = {3.705}, gx = {0.2, 0.0, 0.5, -0.5, 0.5, -0.25}, gt = {-0.2, 0.0, -0.5, 0.5, -0.5, 0.25} },
  { name = "huber", opts = {}, reduction = "none", special = true, y = {nan, inf, inf, nan, nan, nan, inf}, gx = {nan, 0.87, -1.24, nan, nan, nan, 2.7199999999999998}, gt = {nan, -0.87, 1.24, nan, nan, nan, -2.7199999999999998} },
  { name = "huber_d2", opts = {delta = 2.0}, reduction = "none", special = false, y = {0.08000000000000002, 0.0, 0.5, 0.5, 4.0, 0.125}, gx = {0.2, 0.0, 1.24, -1.6099999999999999, 3.96, -1.175}, gt = {-0.2, 0.0, -1.24, 1.6099999999999999, -3.96, 1.175} },
  { name = "huber_d2", opts = {delta = 2.0}, reduction = "mean", special = false, y = {0.8675}, gx = {0.03333333333333333, 0.0, 0.08333333333333333, -0.08333333333333333, 0.16666666666666666, -0.041666666666666664}, gt = {-0.03333333333333333, 0.0, -0.08333333333333333, 0.08333333333333333, -0.16666666666666666, 0.041666666666666664} },
  { name = "huber_d2", opts = {delta = 2.0}, reduction = "sum", special = false, y = {5.205}, gx = {0.2, 0.0, 0.5, -0.5, 1.0, -0.25}, gt = {-0.2, 0.0, -0.5, 0.5, -1.0, 0.25} },
  { name = "huber_d2", opts = {delta = 2.0}, reduction = "none", special = true, y = {nan, inf, inf, nan, nan, nan, inf}, gx = {nan, 1.74, -2.48, nan, nan, nan, 5.4399999999999995}, gt = {nan, -1.74, 2.48, nan, nan, nan, -5.4399999999999995} },
  { name = "bce_with_logits", opts = {}, reduction = "none", special = false, y = {0.9240769841801066, 0.2632824673380313, 0.1269280110429726, 0.6931471805599453, 3.048587351573742, 0.614355244468527}, gx = {0.2612296656009273, 0.20138343835585468, -0.14781162330742592, -0.8049999999999999, 1.886096771108418, 0.5300600854926014}, gt = {-0.25, 1.044, -2.48, -0.0, -5.9399999999999995, 0.705} },
  { name = "bce_with_logits", opts = {}, reduction = "mean", special = false, y = {0.9450628731938875}, gx = {0.04353827760015455, 0.019289601375081865, -0.009933576835176474, -0.041666666666666664, 0.07938117723520279, 0.01879645693236175}, gt = {-0.041666666666666664, 0.09999999999999999, -0.16666666666666666, -0.0, -0.25, 0.024999999999999998} },
  { name = "bce_with_logits", opts = {}, reduction = "sum", special = false, y = {5.670377239163325}, gx = {0.2612296656009273, 0.11573760825049119, -0.05960146101105884, -0.25, 0.4762870634112167, 0.1127787415941705}, gt = {-0.25, 0.6, -1.0, -0.0, -1.5, 0.15} },
  { name = "bce_with_logits", opts = {}, reduction = "none", special = true, y = {nan, nan, nan, nan, inf, nan, 0.8132616875182228}, gx = {nan, 0.0, -1.24, nan, 1.98, 0.0, 0.6284793338736132}, gt = {nan, -inf, inf, -1.6099999999999999, -inf, inf, -2.7199999999999998} },
  { name = "soft_margin", opts = {}, reduction = "none", special = false, y = {0.4740769841801067, 0.2632824673380313, 0.1269280110429726, 0.6931471805599453, 0.048587351573741965, 0.554355244468527}, gx = {-0.18877033439907273, 0.20138343835585468, -0.14781162330742575, 0.8049999999999999, -0.09390322889158224, 1.0000600854926014}, gt = {-0.09438516719953637, 0.2416601260270256, -0.2956232466148515, -0.0, -0.2817096866747467, 0.3000180256477804} },
  { name = "soft_margin", opts = {}, reduction = "mean", special = false, y = {0.3600628731938875}, gx = {-0.03146172239984545, 0.019289601375081865, -0.009933576835176462, 0.041666666666666664, -0.003952156098130565, 0.035463123599028416}, gt = {-0.015730861199922726, 0.023147521650098236, -0.019867153670352924, -0.0, -0.011856468294391695, 0.010638937079708526} },
  { name = "soft_margin", opts = {}, reduction = "sum", special = false, y = {2.160377239163325}, gx = {-0.18877033439907273, 0.11573760825049119, -0.05960146101105877, 0.25, -0.023712936588783394, 0.2127787415941705}, gt = {-0.09438516719953637, 0.13888512990058943, -0.11920292202211755, -0.0, -0.07113880976635018, 0.06383362247825115} },
  { name = "soft_margin", opts = {}, reduction = "none", special = true, y = {nan, 0.0, 0.0, nan, inf, inf, 0.31326168751822286}, gx = {nan, -0.0, 0.0, nan, nan, nan, -0.7315206661263867}, gt = {nan, nan, nan, nan, nan, nan, -0.7315206661263867} },
}

local function same(a, b, tol)
    if a ~= a then
        return b ~= b
    end
    if a == inf or a == -inf then
        return a == b
    end
    return b == b and math.abs(a - b) <= tol * math.max(1, math.abs(a))
end

local function flat(t)
    local v = t:contiguous():reshape(-1):tolist()
    return type(v) == "table" and v or { v }
end

local function check_list(want, got, tol, what)
    assert.are.equal(#want, #got, what)
    for i = 1, #want do
        assert(same(want[i], got[i], tol), string.format("%s[%d]: got %.17g, PyTorch's %.17g",
            what, i, got[i], want[i]))
    end
end

local function opts_of(c)
    local o = { reduction = c.reduction }
    for k, v in pairs(c.opts) do
        o[k] = v
    end
    return o
end

-- the case's input and target as leaves of dtype dt, [2, 3] or (special) flat
local function leaves(c, dt)
    local tk = TARGETS[c.name] or "reg"
    local x = tide.tensor(c.special and XS or X, { dtype = dt })
    local t = tide.tensor(c.special and TS[tk] or T[tk], { dtype = dt })
    if not c.special then
        x, t = x:view(2, 3), t:view(2, 3)
    end
    return x:requires_grad_(true), t:requires_grad_(true)
end

local function run_case(c, dt, tol)
    local x, t = leaves(c, dt)
    local y = FN[c.name](x, t, opts_of(c))
    assert.are.equal(dt, y.dtype)
    assert.are.same(c.reduction == "none" and x.shape or {}, y.shape)
    assert.are.equal("pointwise_loss", y.grad_fn.name, c.name .. ": one node, the row's")
    check_list(c.y, flat(y), tol, c.name .. " " .. c.reduction .. " value")
    local w = tide.arange(y:numel(), { dtype = dt }):mul(0.37):add(0.5):view(y.shape)
    y:mul(w):sum():backward()
    check_list(c.gx, flat(x.grad), tol, c.name .. " " .. c.reduction .. " input gradient")
    check_list(c.gt, flat(t.grad), tol, c.name .. " " .. c.reduction .. " target gradient")
end

describe("pointwise losses on the kernel rows", function()
    for _, c in ipairs(CASES) do
        local label = c.name .. ", reduction " .. c.reduction ..
            (c.special and ", NaN and inf" or "")
        it(label .. ": PyTorch's values and gradients in float64", function()
            run_case(c, "float64", 1e-12)
        end)
        it(label .. ": PyTorch's values and gradients in float32", function()
            run_case(c, "float32", 2e-6)
        end)
    end

    -- the composite: the ops the losses ran before the rows, differentiated by autograd
    local COMPOSITE = {
        mse = function(x, t) local d = x - t; return d * d end,
        l1 = function(x, t) return (x - t):abs() end,
        smooth_l1 = function(x, t)
            local a = (x - t):abs()
            return tide.where(a:lt(0.5), a * a * (0.5 / 0.5), a - 0.25)
        end,
        huber = function(x, t)
            local d = x - t
            local a = d:abs()
            return tide.where(a:lt(1.5), d * d * 0.5, (a - 0.75) * 1.5)
        end,
        bce_with_logits = function(x, t)
            return x:relu() - x * t + x:abs():neg():exp():add(1):log()
        end,
        soft_margin = function(x, t) return x:neg():mul(t):exp():log1p() end,
    }
    local OPTS = { smooth_l1 = { beta = 0.5 }, huber = { delta = 1.5 } }
    local NAMES = { mse = "mse_loss", l1 = "l1_loss", smooth_l1 = "smooth_l1_loss",
        huber = "huber_loss", bce_with_logits = "binary_cross_entropy_with_logits",
        soft_margin = "soft_margin_loss" }

    local ALL = { "mse", "l1", "smooth_l1", "huber", "bce_with_logits", "soft_margin" }
    for _, name in ipairs(ALL) do
        it(name .. ": a large float32 tensor (300001 elements) as the float64 composite, each " ..
            "reduction", function()
            tide.manual_seed(7)
            local n = 300001
            local x64 = tide.randn({ n }, { dtype = "float64" }):mul(2)
            local t64 = tide.randn({ n }, { dtype = "float64" })
            if name == "bce_with_logits" then
                t64 = tide.rand({ n }, { dtype = "float64" })
            elseif name == "soft_margin" then
                t64 = t64:sign()
            end
            x64, t64 = x64:to("float32"):to("float64"), t64:to("float32"):to("float64")
            for _, red in ipairs({ "mean", "sum", "none" }) do
                local o = { reduction = red }
                for k, v in pairs(OPTS[name] or {}) do
                    o[k] = v
                end
                local xr, tr = x64:clone():requires_grad_(true), t64:clone():requires_grad_(true)
                local want = COMPOSITE[name](xr, tr)
                want = red == "mean" and want:mean() or red == "sum" and want:sum() or want
                want:sum():backward()
                local x, t = x64:float():requires_grad_(true), t64:float():requires_grad_(true)
                local y = F[NAMES[name]](x, t, o)
                assert.are.equal("pointwise_loss", y.grad_fn.name)
                y:sum():backward()
                local tol = red == "sum" and 2e-6 * n or 2e-6
                assert.is_true(y:double():sub(want):abs():max():item() <= tol *
                    math.max(1, want:abs():max():item()), name .. " " .. red .. " value")
                for _, p in ipairs({ { x, xr }, { t, tr } }) do
                    local err = p[1].grad:double():sub(p[2].grad):abs():max():item()
                    assert.is_true(err <= 2e-6 * math.max(1, p[2].grad:abs():max():item()),
                        name .. " " .. red .. " gradient off by " .. err)
                end
            end
        end)
    end

    it("sums a long row in float64, the same bits each call", function()
        local n = 1000003
        local x = tide.full({ n }, 0.1, { dtype = "float32" })
        local t = tide.zeros({ n }, { dtype = "float32" })
        -- 0.1f squared in float32 (PyTorch's mean: 0.010000000707805157), a million times:
        -- float32 partial sums would drift by far more than 1e-7
        local want = 0.010000000707805157
        local y = F.mse_loss(x, t)
        assert.is_true(math.abs(y:item() - want) <= 1e-7 * want)
        assert.are.equal(y:item(), F.mse_loss(x, t):item())
    end)

    it("keeps the composite for mixed dtypes, no elements and a graph of the gradient", function()
        local x = tide.tensor({ 0.5, -1.0, 2.0 }, { dtype = "float32" })
        local t = tide.tensor({ 0.0, 1.0, 1.0 }, { dtype = "float64" })
        local y = F.mse_loss(x, t)
        assert.are.equal("float64", y.dtype)
        assert.is_true(math.abs(y:item() - (0.25 + 4 + 1) / 3) < 1e-12)
        local e = tide.zeros({ 0, 3 }, { dtype = "float32" })
        assert.is_true(F.mse_loss(e, e):item() ~= F.mse_loss(e, e):item()) -- mean of nothing: NaN
        assert.are.equal(0, F.l1_loss(e, e, { reduction = "sum" }):item())
        assert.are.same({ 0, 3 }, F.huber_loss(e, e, { reduction = "none" }).shape)
        -- second derivatives: d/dx of sum(d mse/dx) = 2/N per element
        local xg = tide.tensor({ 0.5, -1.0, 2.0 }, { dtype = "float64" }):requires_grad_(true)
        local tt = tide.tensor({ 0.0, 1.0, 1.0 }, { dtype = "float64" })
        local g = tide.autograd.grad(F.mse_loss(xg, tt), xg, { create_graph = true })
        g = type(g) == "table" and not tide.is_tensor(g) and g[1] or g
        check_list({ 1 / 3, -4 / 3, 2 / 3 }, flat(g), 1e-12, "first derivative")
        g:mul(tide.tensor({ 1.0, 2.0, 3.0 }, { dtype = "float64" })):sum():backward()
        check_list({ 2 / 3, 4 / 3, 2 }, flat(xg.grad), 1e-12, "second derivative")
    end)

    it("runs the rows under no_grad and for an input alone requiring grad", function()
        local x = tide.tensor({ 0.5, -1.0, 2.0 }, { dtype = "float32" }):requires_grad_(true)
        local t = tide.tensor({ 0.0, 1.0, 1.0 }, { dtype = "float32" })
        local y = tide.no_grad(function() return F.smooth_l1_loss(x, t) end)
        assert.is_nil(y.grad_fn)
        assert.is_true(math.abs(y:item() - (0.125 + 1.5 + 0.5) / 3) < 1e-6)
        F.smooth_l1_loss(x, t, { reduction = "sum" }):backward()
        check_list({ 0.5, -1, 1 }, flat(x.grad), 1e-6, "input gradient")
        assert.is_nil(t.grad)
    end)

    it("raises tide: errors and changes nothing on bad calls", function()
        local x = tide.tensor({ 0.5, -1.0, 2.0 }, { dtype = "float32" }):requires_grad_(true)
        local t = tide.tensor({ 0.0, 1.0 }, { dtype = "float32" })
        for _, f in ipairs({ F.mse_loss, F.l1_loss, F.smooth_l1_loss, F.huber_loss,
            F.binary_cross_entropy_with_logits, F.soft_margin_loss }) do
            local ok, err = pcall(f, x, t)
            assert.is_false(ok)
            assert.truthy(tostring(err):find(
                "tide: [%w_]+: expected target of the input's shape {3}, got {2}"))
        end
        local ok, err = pcall(F.smooth_l1_loss, x, x:detach(), { beta = -1 })
        assert.is_false(ok)
        assert.truthy(tostring(err):find("tide: smooth_l1_loss: expected beta >= 0, got %-1"))
        ok, err = pcall(F.huber_loss, x, x:detach(), { delta = 0 })
        assert.is_false(ok)
        assert.truthy(tostring(err):find("tide: huber_loss: expected delta > 0, got 0"))
        ok, err = pcall(F.mse_loss, x, x:detach(), { reduction = "avg" })
        assert.is_false(ok)
        assert.truthy(tostring(err):find("unknown reduction 'avg'"))
        assert.is_nil(x.grad)
        check_list({ 0.5, -1, 2 }, flat(x), 0, "input")
    end)

    it("runs bce_with_logits with weight (broadcast) on the row: PyTorch's values and " ..
        "gradients", function()
        -- PyTorch 1.13: F.binary_cross_entropy_with_logits(x, t, weight=w, reduction=r), and
        -- the gradients of sum(y * g), g = 0.5, 0.87, ... over y (/tmp/kw/parity_bce.py)
        local CASES_W = {
  { dtype = "float64", reduction = "mean", y = {11.628894033699229},
    gx = {0.03458107395565859, -0.08122873095888944, -0.003311192278392158, 0.0, 0.0908416084659604, -0.017290536977829295, 0.044444444444439256, -0.1, 0.015616013913494391},
    gt = {-0.027777777777777776, 0.1111111111111111, -0.05555555555555555, -0.0, -0.16666666666666666, 0.013888888888888888, -1.6666666666666667, 4.444444444444445, -0.006944444444444444} },
  { dtype = "float64", reduction = "sum", y = {104.66004630329306},
    gx = {0.3112296656009273, -0.7310585786300049, -0.02980073050552942, 0.0, 0.8175744761936437, -0.15561483280046365, 0.3999999999999533, -0.9, 0.14054412522144952},
    gt = {-0.25, 1.0, -0.5, -0.0, -1.5, 0.125, -15.0, 40.0, -0.0625} },
  { dtype = "float64", reduction = "none", y = {0.9740769841801067, 2.6265233750364456, 0.0634640055214863, 0.6931471805599453, 3.402826555965505, 0.48703849209005334, 24.000000000000092, 72.0, 0.41296970993942184},
    gx = {0.3112296656009273, -1.2720419268162084, -0.07390581165371296, 0.0, 3.2375949257268286, -0.7313897141621791, 2.1759999999997457, -5.562, 0.9725653465324307},
    gt = {-0.25, 1.74, -1.24, -0.0, -5.9399999999999995, 0.5875, -81.6, 247.2, -0.4325} },
  { dtype = "float32", reduction = "mean", y = {11.628894805908203},
    gx = {0.034581076353788376, -0.08122873306274414, -0.00331119354814291, 0.0, 0.09084160625934601, -0.01729053631424904, 0.04444444552063942, -0.09999999403953552, 0.01561601459980011},
    gt = {-0.02777777798473835, 0.1111111119389534, -0.0555555559694767, -0.0, -0.1666666716337204, 0.013888888992369175, -1.6666666269302368, 4.44444465637207, -0.0069444444961845875} },
  { dtype = "float32", reduction = "sum", y = {104.66004943847656},
    gx = {0.3112296760082245, -0.7310585975646973, -0.029800742864608765, 0.0, 0.8175744414329529, -0.15561482310295105, 0.4000000059604645, -0.8999999761581421, 0.140544131398201},
    gt = {-0.25, 1.0, -0.5, -0.0, -1.5, 0.125, -15.0, 40.0, -0.0625} },
  { dtype = "float32", reduction = "none", y = {0.9740769863128662, 2.62652325630188, 0.06346402317285538, 0.6931471824645996, 3.4028267860412598, 0.4870384931564331, 24.0, 72.0, 0.412969708442688},
    gx = {0.3112296760082245, -1.272041916847229, -0.0739058405160904, 0.0, 3.2375948429107666, -0.7313896417617798, 2.1760001182556152, -5.562000274658203, 0.9725654125213623},
    gt = {-0.25, 1.7400000095367432, -1.2400000095367432, -0.0, -5.940000057220459, 0.5874999761581421, -81.5999984741211, 247.20001220703125, -0.4325000047683716} },
        }
        for _, c in ipairs(CASES_W) do
            local o = { dtype = c.dtype }
            local tol = c.dtype == "float32" and 1e-6 or 1e-12
            local x = tide.tensor({ { 0.5, -1.0, 2.0 }, { 0.0, 1.5, -0.5 }, { 30.0, -40.0, 0.25 } },
                o):requires_grad_()
            local t = tide.tensor({ { 0.0, 1.0, 1.0 }, { 0.5, 0.0, 1.0 }, { 0.2, 0.9, 0.0 } }, o)
                :requires_grad_()
            local w = tide.tensor({ 1.0, 2.0, 0.5 }, o)
            local y = F.binary_cross_entropy_with_logits(x, t, { weight = w,
                reduction = c.reduction })
            local what = c.dtype .. " " .. c.reduction
            check_list(c.y, flat(y), tol, what .. " y")
            local g = tide.arange(0, y:numel(), o):reshape(y.shape):mul(0.37):add(0.5)
            y:mul(g):sum():backward()
            check_list(c.gx, flat(x.grad), tol, what .. " gx")
            check_list(c.gt, flat(t.grad), tol, what .. " gt")
        end
    end)

    it("keeps bce_with_logits with pos_weight (broadcast) on the composite", function()
        local x = tide.tensor({ { 0.5, -1.0, 2.0 }, { 0.0, 1.5, -0.5 } }, { dtype = "float64" })
        local t = tide.tensor({ { 0.0, 1.0, 1.0 }, { 0.5, 0.0, 1.0 } }, { dtype = "float64" })
        local w = tide.tensor({ 1.0, 2.0, 0.5 }, { dtype = "float64" })
        -- PyTorch 1.13: F.binary_cross_entropy_with_logits(x, t, weight=w) and pos_weight=w
        local y1 = F.binary_cross_entropy_with_logits(x, t, { weight = w })
        local y2 = F.binary_cross_entropy_with_logits(x, t, { pos_weight = w })
        local y3 = F.binary_cross_entropy_with_logits(x, t, { pos_weight = w, weight = w })
        assert.is_true(math.abs(y1:item() - 1.3745127655589233) < 1e-12)
        assert.is_true(math.abs(y2:item() - 1.0909438858951315) < 1e-12)
        -- with both: PyTorch's 1.7663914532640363
        assert.is_true(math.abs(y3:item() - 1.7663914532640363) < 1e-12)
    end)
end)

describe("pointwise losses CPU against CUDA #cuda", function()
    it("gives the CPU's values and gradients on cuda, each loss and reduction", function()
        if not tide.cuda.is_available() then
            pending("no CUDA device")
            return
        end
        local LOSSES = { { F.mse_loss }, { F.l1_loss }, { F.smooth_l1_loss, { beta = 0.5 } },
            { F.huber_loss, { delta = 1.5 } }, { F.binary_cross_entropy_with_logits },
            { F.soft_margin_loss } }
        for _, dtype in ipairs({ "float32", "float64" }) do
            local tol = dtype == "float32" and 1e-5 or 1e-12
            -- 5000 elements: the sum's blocks (4096 a block on cuda) and a partial one
            for _, n in ipairs({ 7, 5000 }) do
                local x = tide.randn({ n }, { dtype = dtype }):mul(2)
                local t = tide.rand({ n }, { dtype = dtype })
                for _, l in ipairs(LOSSES) do
                    for _, red in ipairs({ "mean", "sum", "none" }) do
                        local o = { reduction = red }
                        for k, v in pairs(l[2] or {}) do
                            o[k] = v
                        end
                        local res = {}
                        for _, where in ipairs({ "cpu", "cuda" }) do
                            local xl = x:to(where):detach():requires_grad_(true)
                            local tl = t:to(where):detach():requires_grad_(true)
                            local y = l[1](xl, tl, o)
                            assert.are.equal("pointwise_loss", y.grad_fn.name)
                            y:mul(y:detach():mul(0):add(0.75)):sum():backward()
                            res[where] = { y, xl.grad, tl.grad }
                        end
                        for i = 1, 3 do
                            local a, b = res.cuda[i]:cpu():double(), res.cpu[i]:double()
                            local err = a:sub(b):abs():max():item()
                            assert.is_true(err <= tol * math.max(1, b:abs():max():item()),
                                dtype .. " " .. n .. " " .. red .. " output " .. i .. " off by " ..
                                err)
                        end
                    end
                end
            end
        end
    end)
end)
