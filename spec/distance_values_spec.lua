-- Distances and similarities against PyTorch 1.13 (float64): tide.cdist, F.pdist, tide.dist,
-- F.cosine_similarity / nn.CosineSimilarity, F.pairwise_distance / nn.PairwiseDistance,
-- F.normalize, F.one_hot, F.bilinear / nn.Bilinear: values, shapes, gradients and errors.
-- R holds what PyTorch printed for the same cases (0-based dims and classes there; 1-based
-- here, as docs/API.md says). embedding_values_spec covers embedding_bag's per_sample_weights.
local tide = require("tide")
local F = tide.nn.functional
local nn = tide.nn

local R = { -- PyTorch 1.13's values (float64), from /tmp/distance_values/ref.py
    ['cdist_p0'] = {{0.0, 3.0}, {3.0, 3.0}, {0.0, 3.0}},
    ['cdist_p0_ga'] = {{0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}},
    ['cdist_p0_gb'] = {{0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}},
    ['cdist_p1'] = {{0.0, 5.75}, {4.75, 5.5}, {0.0, 5.75}},
    ['cdist_p1_ga'] = {{-0.7, 0.7, -0.7}, {1.3, 0.9, -1.3}, {0.9, -0.9, 0.9}},
    ['cdist_p1_gb'] = {{-1.1, -1.1, 1.1}, {-0.4, 0.4, -1.11022302463e-16}},
    ['cdist_p2'] = {{0.0, 3.43693177122}, {2.96858552176, 3.79143772203}, {0.0, 3.43693177122}},
    ['cdist_p2_ga'] = {{-0.509175077217, 0.407340061774, -0.254587538609}, {0.55517337782,
        0.423620728183, -0.992305160513}, {0.654653670708, -0.523722936566, 0.327326835354}},
    ['cdist_p2_gb'] = {{-0.370546845269, -0.463183556587, 0.926367113173}, {-0.330105126041,
        0.155945703196, -0.00680124940575}},
    ['cdist_pinf'] = {{0.0, 2.5}, {2.5, 3.5}, {0.0, 2.5}},
    ['cdist_pinf_ga'] = {{-0.7, 0.0, 0.0}, {0.2, 0.0, -1.1}, {0.9, 0.0, 0.0}},
    ['cdist_pinf_gb'] = {{0.0, 0.0, 1.1}, {-0.4, 0.0, 0.0}},
    ['cdist_p0.5'] = {{0.0, 16.9199475211}, {13.6838795436, 14.860162155}, {0.0, 16.9199475211}},
    ['cdist_p0.5_ga'] = {{-1.82107378053, 2.03602238265, -2.57538723851}, {4.48119497163,
        2.74925655907, -3.263101889}, {2.34138057497, -2.61774306341, 3.3112121638}},
    ['cdist_p0.5_gb'] = {{-4.06909010072, -3.63950482871, 2.57351854454}, {-0.932411665348,
        1.4719689504, -0.0462415808262}},
    ['cdist_p3'] = {{0.0, 2.94638549939}, {2.64850396156, 3.5634679836}, {0.0, 2.94638549939}},
    ['cdist_p3_ga'] = {{-0.503963310831, 0.322536518932, -0.125990827708}, {0.349755533079,
        0.236166147002, -1.00471197668}, {0.647952828211, -0.414689810055, 0.161988207053}},
    ['cdist_p3_gb'] = {{-0.156816382585, -0.24502559779, 0.980102391158}, {-0.336928667873,
        0.101012741911, -0.0113877938229}},
    ['cdist_use_mm_for_euclid_dist_if_necessary'] = {{0.0, 3.43693177122}, {2.96858552176,
        3.79143772203}, {0.0, 3.43693177122}},
    ['cdist_use_mm_for_euclid_dist'] = {{0.0, 3.43693177122}, {2.96858552176, 3.79143772203},
        {0.0, 3.43693177122}},
    ['cdist_donot_use_mm_for_euclid_dist'] = {{0.0, 3.43693177122}, {2.96858552176,
        3.79143772203}, {0.0, 3.43693177122}},
    ['cdist_batched'] = {{{1.14564392374, 0.642261628933, 1.29325171564}, {2.33987179136,
        1.36930639376, 0.659545297914}}, {{0.769740215917, 0.878919791562, 1.76422787644},
        {1.84526420872, 0.940744386111, 0.724568837309}}},
    ['cdist_batched_p1'] = {{{1.65, 0.95, 1.95}, {3.9, 2.1, 1}}, {{1.15, 1.25, 2.85}, {3.0, 1.3,
        1.1}}},
    ['cdist_bcast'] = {{{1.14564392374, 0.642261628933, 1.29325171564}, {2.33987179136,
        1.36930639376, 0.659545297914}}, {{3.60728429709, 2.59084928161, 1.60390149323},
        {4.89131884056, 3.86328875442, 2.84341344162}}},
    ['cdist_empty_shape'] = {0, 2},
    ['pdist_p0'] = {3.0, 0.0, 3.0},
    ['pdist_p0_g'] = {{0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}},
    ['pdist_p1'] = {4.75, 0.0, 4.75},
    ['pdist_p1_g'] = {{-0.3, -0.3, 0.3}, {1.4, 1.4, -1.4}, {-1.1, -1.1, 1.1}},
    ['pdist_p2'] = {2.96858552176, 0.0, 2.96858552176},
    ['pdist_p2_g'] = {{-0.101058230528, -0.12632278816, 0.25264557632}, {0.471605075797,
        0.589506344747, -1.17901268949}, {-0.370546845269, -0.463183556587, 0.926367113173}},
    ['pdist_pinf'] = {2.5, 0.0, 2.5},
    ['pdist_pinf_g'] = {{0.0, 0.0, 0.3}, {0.0, 0.0, -1.4}, {0.0, 0.0, 1.1}},
    ['pdist_p0.5'] = {13.6838795436, 0.0, 13.6838795436},
    ['pdist_p0.5_g'] = {{-1.10975184565, -0.992592226012, 0.701868693966}, {5.17884194637,
        4.63209705472, -3.27538723851}, {-4.06909010072, -3.63950482871, 2.57351854454}},
    ['pdist_one_row_shape'] = {0},
    ['cos_default'] = {0.623609564462, 0.0, 0.0},
    ['cos_default_ga'] = {{-0.00445435403187, 0.0445435403187, 0.0846327266056}, {-40414518.8433,
        -40414518.8433, -40414518.8433}, {0.0, 0.0, 0.0}},
    ['cos_default_gb'] = {{0.035634832255, 0.035634832255, -0.0890870806375}, {0.0, 0.0, 0.0},
        {108138613.509, -18023102.2514, 9011551.12571}},
    ['cos_dim0'] = {0.141421356237, 0.867721831275, -0.68599434057},
    ['cos_dim0_ga'] = {{0.0381837661841, -0.0178648612321, 0.0443878690957}, {0.0848528137424,
        -0.151851320473, 0.754593774627}, {-0.0127279220614, -0.0714594449285, 0.177551476383}},
    ['cos_dim0_gb'] = {{0.0678822509939, -0.0607405281892, -0.377296887314}, {-0.033941125497,
        0.121481056378, 0.377296887314}, {0.254558441227, 0.0759256602365, 0.188648443657}},
    ['cos_eps'] = {0.623609564462, 0.0, 0.0},
    ['cos_eps_ga'] = {{-0.00445435403187, 0.0445435403187, 0.0846327266056}, {-0.808290376865,
        -0.808290376865, -0.808290376865}, {0.0, 0.0, 0.0}},
    ['cos_eps_gb'] = {{0.035634832255, 0.035634832255, -0.0890870806375}, {0.0, 0.0, 0.0},
        {2.16277227017, -0.360462045028, 0.180231022514}},
    ['cos_dimm1'] = {0.623609564462, 0.0, 0.0},
    ['cos_dimm1_ga'] = {{-0.00445435403187, 0.0445435403187, 0.0846327266056}, {-40414518.8433,
        -40414518.8433, -40414518.8433}, {0.0, 0.0, 0.0}},
    ['cos_dimm1_gb'] = {{0.035634832255, 0.035634832255, -0.0890870806375}, {0.0, 0.0, 0.0},
        {108138613.509, -18023102.2514, 9011551.12571}},
    ['cos_bcast'] = {0.623609564462, 0.0, 0.107262636786},
    ['cos_1d'] = 0.8,
    ['mcos2'] = {0.141421356237, 0.867721831275, -0.68599434057},
    ['pd_default'] = {1.73205080757e-06, 1.74999842857},
    ['pd_default_ga'] = {{0.173205080757, 0.173205080757, 0.173205080757}, {0.199999779592,
        0.600000138776, 0.299999869388}},
    ['pd_default_gb'] = {{-0.173205080757, -0.173205080757, -0.173205080757}, {-0.199999779592,
        -0.600000138776, -0.299999869388}},
    ['pd_p1'] = {3e-06, 2.749997},
    ['pd_p1_ga'] = {{0.3, 0.3, 0.3}, {0.7, 0.7, 0.7}},
    ['pd_p1_gb'] = {{-0.3, -0.3, -0.3}, {-0.7, -0.7, -0.7}},
    ['pd_pinf'] = {1e-06, 1.499999},
    ['pd_pinf_ga'] = {{0.1, 0.1, 0.1}, {0.0, 0.7, 0.0}},
    ['pd_pinf_gb'] = {{-0.1, -0.1, -0.1}, {-0.0, -0.7, -0.0}},
    ['pd_p0'] = {3.0, 3.0},
    ['pd_keep'] = {{1.73205080757e-06}, {1.74999842857}},
    ['pd_keep_ga'] = {{0.173205080757, 0.173205080757, 0.173205080757}, {0.199999779592,
        0.600000138776, 0.299999869388}},
    ['pd_keep_gb'] = {{-0.173205080757, -0.173205080757, -0.173205080757}, {-0.199999779592,
        -0.600000138776, -0.299999869388}},
    ['pd_eps'] = {0.173205080757, 1.59452187191},
    ['pd_eps_ga'] = {{0.173205080757, 0.173205080757, 0.173205080757}, {0.175601228765,
        0.614604300677, 0.285351996743}},
    ['pd_eps_gb'] = {{-0.173205080757, -0.173205080757, -0.173205080757}, {-0.175601228765,
        -0.614604300677, -0.285351996743}},
    ['pd_p3'] = {1.44224957031e-06, 1.57699715572},
    ['pd_p3_ga'] = {{0.144224957031, 0.144224957031, 0.144224957031}, {0.0703678839482,
        0.633312644367, 0.158327949988}},
    ['pd_p3_gb'] = {{-0.144224957031, -0.144224957031, -0.144224957031}, {-0.0703678839482,
        -0.633312644367, -0.158327949988}},
    ['pd_1d'] = 2.23606931914,
    ['pd_1d_keep'] = {2.23606931914},
    ['pd_bcast'] = {2.23606753029, 1.74999842857},
    ['pd_0d'] = 1.999999,
    ['mpd'] = {2.0, 1e-06, false},
    ['mpd2'] = {1, 0, true},
    ['mpd2_out'] = {{0.0}, {2.75}},
    ['nz_default'] = {{0.6, 0.8}, {0.0, 0.0}, {-0.4472135955, 0.894427191}},
    ['nz_default_g'] = {{0.1056, -0.0792}, {1100000000000.0, 200000000000.0}, {0.01788854382,
        0.00894427191}},
    ['nz_p1'] = {{0.428571428571, 0.571428571429}, {0.0, 0.0}, {-0.333333333333, 0.666666666667}},
    ['nz_p1_g'] = {{0.0816326530612, -0.0612244897959}, {1100000000000.0, 200000000000.0},
        {0.111111111111, 0.0555555555556}},
    ['nz_dim0'] = {{0.948683298051, 0.894427191}, {0.0, 0.0}, {-0.316227766017, 0.4472135955}},
    ['nz_dim0_g'] = {{-0.0284604989415, -0.111803398875}, {0.347850542619, 0.04472135955},
        {-0.0853814968245, 0.22360679775}},
    ['nz_pinf'] = {{0.75, 1.0}, {0.0, 0.0}, {-0.5, 1.0}},
    ['nz_pinf_g'] = {{0.075, -0.05625}, {1100000000000.0, 200000000000.0}, {-0.2, -0.1}},
    ['nz_eps'] = {{0.6, 0.8}, {0.0, 0.0}, {-0.333333333333, 0.666666666667}},
    ['nz_eps_g'] = {{0.1056, -0.0792}, {0.366666666667, 0.0666666666667}, {-0.133333333333, 0.3}},
    ['nz_p3'] = {{0.666971777312, 0.889295703082}, {0.0, 0.0}, {-0.480749856769, 0.961499713538}},
    ['nz_p3_g'] = {{0.108474530816, -0.0813558981117}, {1100000000000.0, 200000000000.0},
        {-0.074783311053, -0.0373916555265}},
    ['nz_1d'] = {0.6, 0.8},
    ['nz_p0'] = {{1.5, 2.0}, {0.0, 0.0}, {-0.5, 1.0}},
    ['oh_default'] = {{1, 0, 0}, {0, 0, 1}, {0, 1, 0}},
    ['oh_n'] = {{1, 0, 0, 0}, {0, 0, 1, 0}, {0, 1, 0, 0}},
    ['oh_neg1'] = {{{1, 0, 0}, {0, 0, 1}}, {{0, 1, 0}, {0, 1, 0}}},
    ['oh_0d'] = {0, 0, 1},
    ['oh_0d_shape'] = {3},
    ['oh_empty_shape'] = {0, 3},
    ['dist_p2'] = 2.29128784748,
    ['dist_p2_ga'] = {{0.0, 0.436435780472}, {-0.872871560944, -0.218217890236}},
    ['dist_p2_gb'] = {0.872871560944, -0.218217890236},
    ['dist_p1'] = 3.5,
    ['dist_p1_ga'] = {{0.0, 1.0}, {-1.0, -1.0}},
    ['dist_p1_gb'] = {1.0, 0.0},
    ['dist_pinf'] = 2.0,
    ['dist_pinf_ga'] = {{0.0, 0.0}, {-1.0, -0.0}},
    ['dist_pinf_gb'] = {1.0, 0.0},
    ['dist_p0'] = 3.0,
    ['dist_p0.5'] = 9.74264068712,
    ['dist_p0.5_ga'] = {{0.0, 3.12132034356}, {-2.20710678119, -4.41421356237}},
    ['dist_p0.5_gb'] = {2.20710678119, 1.29289321881},
    ['dist_p3'] = 2.08966959819,
    ['dist_p3_ga'] = {{0.0, 0.229004887473}, {-0.916019549892, -0.0572512218682}},
    ['dist_p3_gb'] = {0.916019549892, -0.171753665605},
    ['dist_p-inf'] = 0.0,
    ['dist_p-inf_ga'] = {{0.0, 0.0}, {-0.0, -0.0}},
    ['dist_p-inf_gb'] = {0.0, 0.0},
    ['dist_zero'] = 0.0,
    ['dist_zero_g'] = {0.0, 0.0},
    ['dist_shape'] = {},
    ['bil'] = {{-0.05, -0.35}, {-1.35, 2.85}},
    ['bil_ga'] = {{-0.07, -0.13}, {-1.33, -0.16}},
    ['bil_gb'] = {{0.12, 0.12, 0.12}, {-0.545, -0.22, 0.105}},
    ['bil_gw'] = {{{1.25, 0.3, 0.25}, {4.25, -0.3, 2.5}}, {{-0.15, -0.7, 0.8}, {1.15, 0.7,
        -0.3}}},
    ['bil_gbias'] = {1.4, -0.5},
    ['bil_nobias'] = {{-0.15, -0.15}, {-1.45, 3.05}},
    ['bil_1d'] = {-0.05, -0.35},
    ['bil_3d_shape'] = {4, 2, 2},
    ['mbil'] = {2, 3, 4, {4, 2, 3}, {4}},
    ['mbil_nobias'] = true,
}

local function same(got, want, path)
    if type(want) == "table" then
        assert(type(got) == "table", ("%s: %s, expected a table"):format(path, tostring(got)))
        assert(#got == #want, ("%s: %d elements, expected %d"):format(path, #got, #want))
        for i = 1, #want do
            same(got[i], want[i], path .. "[" .. i .. "]")
        end
    elseif type(want) == "number" then
        assert(type(got) == "number", ("%s: %s, expected a number"):format(path, tostring(got)))
        local tol = 1e-9 * math.max(1, math.abs(want))
        assert(got == want or math.abs(got - want) <= tol,
            ("%s: %.17g, expected %.17g"):format(path, got, want))
    else
        assert(got == want, ("%s: %s, expected %s"):format(path, tostring(got), tostring(want)))
    end
end
local function close(t, key, path)
    local v = t
    if tide.is_tensor(t) then
        v = t:dim() == 0 and t:item() or t:totable()
    end
    same(v, R[key], path or key)
end
local function T(v)
    return tide.tensor(v, { dtype = "float64" })
end
local function TG(v)
    return tide.tensor(v, { dtype = "float64", requires_grad = true })
end
local function L(v)
    return tide.tensor(v, { dtype = "int64" })
end
local function raises(f, msg, what)
    local ok, e = pcall(f)
    assert(not ok, what .. ": no error")
    assert(tostring(e):find(msg, 1, true), what .. ": " .. tostring(e))
end
local INF = math.huge
local X1 = { { 0.5, -1.0, 2.0 }, { 1.5, 0.25, -0.5 }, { 0.5, -1.0, 2.0 } } -- rows 1, 3 equal
local X2 = { { 0.5, -1.0, 2.0 }, { -2.0, 1.0, 0.75 } } -- row 1 equals X1's: zero distances
local W3 = { { 0.3, -0.7 }, { 1.1, 0.2 }, { -0.4, 0.9 } }

describe("distances and similarities against PyTorch 1.13", function()
    it("tide.cdist: p, gradients at zero distance, compute_mode, batches, errors", function()
        for _, c in ipairs({ { 0, "0" }, { 1, "1" }, { 2, "2" }, { INF, "inf" }, { 0.5, "0.5" },
            { 3, "3" } }) do
            local a, b = TG(X1), TG(X2)
            local r = tide.cdist(a, b, c[1])
            close(r, "cdist_p" .. c[2])
            if c[1] == 1 or c[1] == 2 or c[1] == INF then
                (r * T(W3)):sum():backward()
                close(a.grad, "cdist_p" .. c[2] .. "_ga")
                close(b.grad, "cdist_p" .. c[2] .. "_gb")
            end
        end
        for _, m in ipairs({ "use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
            "donot_use_mm_for_euclid_dist" }) do
            close(tide.cdist(T(X1), T(X2), { compute_mode = m }), "cdist_" .. m)
        end
        local b1 = tide.arange(12, { dtype = "float64" }):reshape(2, 2, 3) / 4 - 1
        local b2 = tide.arange(18, { dtype = "float64" }):reshape(2, 3, 3):flip(3) / 5 - 1.5
        close(tide.cdist(b1, b2), "cdist_batched")
        close(b1:cdist(b2, { p = 1 }), "cdist_batched_p1")
        close(tide.cdist(b1, b2[1]), "cdist_bcast")
        close(tide.cdist(tide.zeros(0, 3), tide.zeros(2, 3)).shape, "cdist_empty_shape")
        assert.are.equal("float32", tide.cdist(tide.zeros(2, 3), tide.zeros(2, 3)).dtype)
        raises(function() tide.cdist(tide.zeros(2, 3), tide.zeros(2, 4)) end,
            "tide: cdist: expected x1 {*, P, M} and x2 {*, R, M} with the same M", "cdist M")
        raises(function() tide.cdist(tide.zeros(3), tide.zeros(3)) end,
            "tide: cdist: expected x1 {*, P, M}", "cdist 1-D")
        raises(function() tide.cdist(tide.zeros(2, 3), tide.zeros(2, 3), -1) end,
            "tide: cdist: p must be a number >= 0, got -1", "cdist p < 0")
        raises(function() tide.cdist(tide.zeros(2, 3), tide.zeros(2, 3), { compute_mode = "x" })
        end, "tide: cdist: compute_mode must be", "cdist compute_mode")
    end)
    it("tide.cdist's gradients at a zero distance and for p = 0 (PyTorch 1.13's values)",
        function()
        -- x1 {{1, 2}, {3, 4}}, x2 {{1, 2}, {0, 1}}: the pair (1, 1) at zero distance
        local want = {
            [0.5] = { { { 0, 4 }, { 8, 12 } }, { { 2, 2 }, { 4, 4 } } },
            [3] = { { { 0, 1.2599210498948732 }, { 2.5198420997897464, 3.7797631496846193 } },
                { { 0.6299605249474365, 0.6299605249474365 },
                    { 1.2599210498948732, 1.2599210498948732 } } },
            [0] = { { { 0, 2 }, { 2, 2 } }, { { 0, 0 }, { 0, 0 } } },
        }
        for _, p in ipairs({ 0.5, 3, 0 }) do
            local a = tide.tensor({ { 1, 2 }, { 3, 4 } }, { dtype = "float64", requires_grad = true })
            local b = tide.tensor({ { 1, 2 }, { 0, 1 } }, { dtype = "float64", requires_grad = true })
            local r = tide.cdist(a, b, p)
            r:sum():backward()
            local w = want[p]
            for i = 1, 2 do
                for j = 1, 2 do
                    local what = ("cdist p = %s [%d][%d]"):format(tostring(p), i, j)
                    assert.is_true(math.abs(r[i][j]:item() - w[1][i][j]) < 1e-12, what)
                    assert.is_true(math.abs(a.grad[i][j]:item() - w[2][i][j]) < 1e-12, what)
                    assert.is_true(math.abs(b.grad[i][j]:item() + w[2][i][j]) < 1e-12, what)
                end
            end
        end
    end)

    it("F.pdist and tide.pdist: p, gradients at repeated rows, errors", function()
        for _, c in ipairs({ { 0, "0" }, { 1, "1" }, { 2, "2" }, { INF, "inf" },
            { 0.5, "0.5" } }) do
            local a = TG(X1)
            local r = F.pdist(a, c[1])
            close(r, "pdist_p" .. c[2]);
            (r * T({ 0.3, -0.7, 1.1 })):sum():backward()
            close(a.grad, "pdist_p" .. c[2] .. "_g")
        end
        close(tide.pdist(T(X1)), "pdist_p2", "tide.pdist")
        close(F.pdist(tide.zeros(1, 3)).shape, "pdist_one_row_shape")
        raises(function() F.pdist(tide.zeros(3, 2), -1) end,
            "tide: pdist: p must be a non-negative number, got -1", "pdist p < 0")
        raises(function() F.pdist(tide.zeros(3)) end,
            "tide: pdist: expected a 2-D input {N, M}, got {3}", "pdist 1-D")
    end)

    local C1 = { { 1.0, 2.0, -1.0 }, { 0.0, 0.0, 0.0 }, { 3.0, -0.5, 0.25 } }
    local C2 = { { 0.5, 2.0, 1.0 }, { 1.0, 1.0, 1.0 }, { 0.0, 0.0, 0.0 } }
    it("F.cosine_similarity and nn.CosineSimilarity: dim, eps, zero vectors, broadcast", function()
        for _, c in ipairs({ { "default" }, { "dim0", { dim = 1 } }, { "eps", { eps = 0.5 } },
            { "dimm1", { dim = -1 } } }) do
            local a, b = TG(C1), TG(C2)
            local r = F.cosine_similarity(a, b, c[2])
            close(r, "cos_" .. c[1]);
            (r * T({ 0.3, -0.7, 1.1 })):sum():backward()
            close(a.grad, "cos_" .. c[1] .. "_ga")
            close(b.grad, "cos_" .. c[1] .. "_gb")
        end
        close(tide.cosine_similarity(T(C1), T({ 0.5, 2.0, 1.0 })), "cos_bcast")
        close(F.cosine_similarity(T({ 1, 2 }), T({ 2, 1 }), { dim = 1 }), "cos_1d")
        raises(function() F.cosine_similarity(tide.zeros(2, 3), tide.zeros(2, 4)) end,
            "tide: cosine_similarity: x1 {2, 3} and x2 {2, 4} do not broadcast", "cos shape")
        raises(function() F.cosine_similarity(tide.zeros(2, 3), tide.zeros(2, 3), { dim = 3 })
        end, "tide: cosine_similarity: dim 3 is out of range", "cos dim")
        local m = nn.CosineSimilarity() -- PyTorch's dim 1 and eps 1e-8 (dim 1-based here)
        assert.are.same({ 2, 1e-8 }, { m.dim, m.eps })
        m = nn.CosineSimilarity({ dim = 1, eps = 1e-3 })
        close(m(T(C1), T(C2)), "mcos2")
        m = nn.CosineSimilarity()
        m.dim, m.eps = 1, 1e-3 -- forward reads the attributes
        close(m(T(C1), T(C2)), "mcos2", "mcos2 (set)")
    end)

    local P1 = { { 1.0, 2.0, -1.0 }, { 0.5, -0.5, 0.25 } }
    local P2 = { { 1.0, 2.0, -1.0 }, { 1.0, 1.0, 1.0 } }
    it("F.pairwise_distance and nn.PairwiseDistance: p, eps, keepdim, broadcast", function()
        for _, c in ipairs({ { "default" }, { "p1", { p = 1 } }, { "pinf", { p = INF } },
            { "p0", { p = 0 } }, { "keep", { keepdim = true } }, { "eps", { eps = 0.1 } },
            { "p3", { p = 3 } } }) do
            local a, b = TG(P1), TG(P2)
            local r = F.pairwise_distance(a, b, c[2])
            close(r, "pd_" .. c[1])
            if c[1] ~= "p0" then -- (PyTorch's p = 0 leaves no gradient at all)
                local w = r:dim() == 1 and T({ 0.3, -0.7 }) or T({ { 0.3 }, { -0.7 } });
                (r * w):sum():backward()
                close(a.grad, "pd_" .. c[1] .. "_ga")
                close(b.grad, "pd_" .. c[1] .. "_gb")
            end
        end
        close(F.pairwise_distance(T({ 1, 2 }), T({ 0, 0 })), "pd_1d")
        close(F.pairwise_distance(T({ 1, 2 }), T({ 0, 0 }), { keepdim = true }), "pd_1d_keep")
        close(tide.pairwise_distance(T(P1), T({ 1, 1, 1 })), "pd_bcast")
        close(F.pairwise_distance(T(1), T(3)), "pd_0d")
        local m = nn.PairwiseDistance()
        close({ m.norm, m.eps, m.keepdim }, "mpd")
        m = nn.PairwiseDistance({ p = 1, eps = 0, keepdim = true })
        close({ m.norm, m.eps, m.keepdim }, "mpd2")
        close(m(T(P1), T(P2)), "mpd2_out")
        m = nn.PairwiseDistance()
        m.norm, m.eps, m.keepdim = 1, 0, true -- forward reads the attributes
        close(m(T(P1), T(P2)), "mpd2_out", "mpd2_out (set)")
    end)

    it("F.normalize: p, dim, eps, zero rows and their gradients", function()
        local N1 = { { 3.0, 4.0 }, { 0.0, 0.0 }, { -1.0, 2.0 } }
        for _, c in ipairs({ { "default" }, { "p1", { p = 1 } }, { "dim0", { dim = 1 } },
            { "pinf", { p = INF } }, { "eps", { eps = 3 } }, { "p3", { p = 3 } } }) do
            local a = TG(N1)
            local r = F.normalize(a, c[2])
            close(r, "nz_" .. c[1]);
            (r * T(W3)):sum():backward()
            close(a.grad, "nz_" .. c[1] .. "_g")
        end
        close(F.normalize(T({ 3, 4 }), { dim = 1 }), "nz_1d")
    end)
    it("F.normalize(x, {p = 0}) divides by the count of nonzeros, a constant (PyTorch's)", function()
        local x = tide.tensor({ { 1, 0, 3 }, { 0, 0, 0 } }, { dtype = "float64",
            requires_grad = true })
        local y = F.normalize(x, { p = 0 })
        assert.are.same({ { 0.5, 0, 1.5 }, { 0, 0, 0 } }, y:detach():totable())
        y:mul(tide.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }, { dtype = "float64" })):sum():backward()
        local g = x.grad:totable()
        assert.are.same({ 0.5, 1, 1.5 }, g[1])
        for j = 1, 3 do -- 1 / eps: 4e12, 5e12, 6e12
            assert.is_true(math.abs(g[2][j] / ((j + 3) * 1e12) - 1) < 1e-12, "zero row " .. j)
        end
        assert.has_error(function() F.normalize(x, { p = -1 }) end,
            "tide: normalize: expected p >= 0, got -1")
    end)

    it("F.one_hot: num_classes = -1, 0-d input, int64, errors", function()
        local oh = F.one_hot(L({ 1, 3, 2 })) -- PyTorch's classes {0, 2, 1}
        close(oh, "oh_default")
        assert.are.equal("int64", oh.dtype)
        close(F.one_hot(L({ 1, 3, 2 }), 4), "oh_n")
        close(F.one_hot(L({ { 1, 3 }, { 2, 2 } }), { num_classes = -1 }), "oh_neg1")
        close(tide.one_hot(L(3)), "oh_0d")
        close(F.one_hot(L(3)).shape, "oh_0d_shape")
        close(F.one_hot(tide.zeros(0, { dtype = "int64" }), 3).shape, "oh_empty_shape")
        raises(function() F.one_hot(tide.zeros(0, { dtype = "int64" })) end,
            "tide: one_hot: cannot infer num_classes from an empty tensor", "one_hot empty")
        raises(function() F.one_hot(L({ 0, 1 })) end,
            "tide: one_hot: class 0 out of range for 1 classes; classes are 1-based", "class 0")
        raises(function() F.one_hot(L({ 4 }), 3) end,
            "tide: one_hot: class 4 out of range for 3 classes", "class too large")
        raises(function() F.one_hot(T({ 1 })) end,
            "tide: one_hot: expected integer classes (int64, 1-based), got float64", "float")
        raises(function() F.one_hot(L({ 1 }), 0) end,
            "tide: one_hot: expected num_classes to be an integer >= 1, got 0", "0 classes")
    end)

    it("tide.dist: p (2, 1, inf, 0, 0.5, 3, -inf), broadcast, 0-d, gradients", function()
        local D1, D2 = { { 1.0, 2.0 }, { -1.0, 0.5 } }, { 1.0, 1.0 }
        for _, c in ipairs({ { 2, "2" }, { 1, "1" }, { INF, "inf" }, { 0, "0" }, { 0.5, "0.5" },
            { 3, "3" }, { -INF, "-inf" } }) do
            local a, b = TG(D1), TG(D2)
            local r = tide.dist(a, b, c[1])
            close(r, "dist_p" .. c[2])
            if c[1] ~= 0 then -- (PyTorch's p = 0 has no gradient: its backward raises)
                r:backward()
                close(a.grad, "dist_p" .. c[2] .. "_ga")
                close(b.grad, "dist_p" .. c[2] .. "_gb")
            end
        end
        local a = TG(D2)
        local r = a:dist(T(D2))
        r:backward()
        close(r, "dist_zero")
        close(a.grad, "dist_zero_g")
        close(r.shape, "dist_shape")
    end)

    it("F.bilinear and nn.Bilinear: values, gradients, attributes", function()
        local bw = tide.arange(12, { dtype = "float64" }):reshape(2, 2, 3) / 10 - 0.5
        local I1 = { { 1.0, -1.0 }, { 0.5, 2.0 } }
        local I2 = { { 0.5, 1.0, -1.0 }, { 2.0, 0.0, 1.0 } }
        local a, b = TG(I1), TG(I2)
        local w, bb = bw:clone():requires_grad_(), TG({ 0.1, -0.2 })
        local r = F.bilinear(a, b, w, bb)
        close(r, "bil");
        (r * T({ { 0.3, -0.7 }, { 1.1, 0.2 } })):sum():backward()
        close(a.grad, "bil_ga")
        close(b.grad, "bil_gb")
        close(w.grad, "bil_gw")
        close(bb.grad, "bil_gbias")
        close(F.bilinear(T(I1), T(I2), bw), "bil_nobias")
        close(F.bilinear(T(I1[1]), T(I2[1]), bw, T({ 0.1, -0.2 })), "bil_1d")
        local z = function(...) return tide.zeros({ ... }, { dtype = "float64" }) end
        close(F.bilinear(z(4, 2, 2), z(4, 2, 3), bw).shape, "bil_3d_shape")
        raises(function() F.bilinear(z(2, 3), z(2, 3), bw) end,
            "tide: bilinear: expected input1 {..., 2} and input2 {..., 3}", "bilinear sizes")
        local m = nn.Bilinear(2, 3, 4)
        close({ m.in1_features, m.in2_features, m.out_features, m.weight.shape, m.bias.shape },
            "mbil")
        assert.is_nil(nn.Bilinear(2, 3, 4, { bias = false }).bias)
    end)
end)
