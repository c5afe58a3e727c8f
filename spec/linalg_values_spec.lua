-- linalg_values_spec.lua: tide.linalg (and the legacy tide.* forms) in float64 against PyTorch
-- 1.13's values, errors and gradients, 1e-8: solve, lstsq (drivers, rank-deficient A, residuals),
-- pinv, matrix_rank, the norms, cond, det / slogdet / logdet, inv, cholesky, qr, svd, eigh,
-- matrix_exp, matrix_power, multi_dot, householder_product, cross, vander, solve_triangular, lu,
-- tensorinv, tensorsolve, diagonal, vecdot. E below is PyTorch's output (a throwaway script:
-- a named tuple as its fields in order, an empty tensor as {shape = ...}, err(...) PyTorch's
-- error, whose facts tide's message names: ERRS).
local tide = require("tide")
local LA = tide.linalg
local unpack = table.unpack or unpack

local function err(s)
    return { err = s }
end

-- PyTorch 1.13's values
local E = {
    solve = {{4.4545454545454719, -1.2727272727272798}, {-12.500000000000044, 5.0000000000000178},
        {7.1818181818182056, -2.9090909090909185}},
    solve_vec = {-0.090909090909090814, 0, 0.36363636363636359},
    solve_batch_bcast = {{{4.4545454545454719, -1.2727272727272798}, {-12.500000000000044,
        5.0000000000000178}, {7.1818181818182056, -2.9090909090909185}}, {{0.090909090909090912,
        -0.46590909090909094}, {0.63636363636363635, 0.36363636363636365}, {0, 0.75}}},
    solve_left_false = {{1, 3.0278809762504267e-17, 0}, {0, 1, 0}},
    solve_singular = err('torch.linalg.solve: The solver failed because the input matrix is ' ..
        'singular.'),
    solve_grad = {{{-6.3636363636363882, 15.000000000000064, -8.5454545454545823},
        {-2.4297520661157037, 6.8181818181818201, -3.9173553719008263}, {2.0247933884297553,
        -5.6818181818181897, 3.2644628099173589}}, {{2.0000000000000009, 2}, {0.54545454545454364,
        6.0557619525008534e-17}, {-0.45454545454545353, 0}}},
    lstsq_gelsy = {{{0.32911392405063361}, {0.027848101265822205}}, {shape={0}}, 2, {shape={0}}},
    lstsq_gelsd = {{{0.32911392405062911}, {0.027848101265825927}}, {3.1746835443037997}, 2,
        {14.483758735673391, 0.68609976446931609}},
    lstsq_gelss = {{{0.32911392405062911}, {0.02784810126582592}}, {3.1746835443037997}, 2,
        {14.483758735673391, 0.6860997644693162}},
    lstsq_gels = {{{0.32911392405062906}, {0.027848101265826004}}, {3.1746835443037997},
        {shape={0}}, {shape={0}}},
    lstsq_default = {{{0.32911392405062906}, {0.027848101265826004}}, {shape={0}}, 2, {shape={0}}},
    lstsq_rdef_gelsd = {{{0.22142857142857134}, {0.44285714285714278}}, {shape={0}}, 1,
        {8.3666002653407556, 7.3201832541172516e-16}},
    lstsq_rdef_gelsy = {{{0.22142857142857134}, {0.44285714285714267}}, {shape={0}}, 1,
        {shape={0}}},
    lstsq_square = {{{4.4545454545454257, -1.2727272727272625}, {-12.499999999999911,
        4.999999999999968}, {7.1818181818181364, -2.9090909090908927}}, {shape={0}}, 3,
        {17.681693991211567, 0.91820866661657474, 0.067752828007272919}},
    lstsq_wide = {{{-0.13294797687861332}, {0.11560693641618497}, {0.30057803468208122}},
        {shape={0}}, 2, {9.8388626034210009, 0.66841803611489559}},
    lstsq_rcond = {{{0.14497772565557418}, {0.17790431298239995}}, {shape={0}}, 1,
        {14.483758735673391, 0.68609976446931609}},
    pinv = {{-0.79746835443038033, -0.31645569620253067, -0.35443037974683334,
        0.64556962025316267}, {0.66329113924050664, 0.28860759493670796, 0.33924050632911212,
        -0.46075949367088437}},
    pinv_herm = {{0.33522727272727265, -0.090909090909090953, -0.12500000000000003},
        {-0.090909090909090939, 0.36363636363636376, 3.9005036443029689e-17},
        {-0.12500000000000003, 2.5843807097403231e-17, 0.25}},
    pinv_rtol = {{0.0053440674230640223, 0.013347588206437742, 0.021513490533386637},
        {0.0064803318037578266, 0.016185574303261396, 0.026087724176469127},
        {0.0081165126078870074, 0.02027217461645001, 0.0326744599816024}},
    pinv_atol = {{0.0053440674230640223, 0.013347588206437742, 0.021513490533386637},
        {0.0064803318037578266, 0.016185574303261396, 0.026087724176469127},
        {0.0081165126078870074, 0.02027217461645001, 0.0326744599816024}},
    pinv_rcond = {{0.0053440674230640223, 0.013347588206437742, 0.021513490533386637},
        {0.0064803318037578266, 0.016185574303261396, 0.026087724176469127},
        {0.0081165126078870074, 0.02027217461645001, 0.0326744599816024}},
    pinv_grad = {{{1.5416439673129267, -1.6113058804678708}, {0.3603268706937951,
        -0.46119532126261342}, {2.2609838166960277, -2.0586957218394355}, {-2.0023073225444525,
        1.8390257971478809}}},
    rank = 1,
    rank_tol = 1,
    rank_herm = 3,
    rank_atol_rtol = 1,
    rank_rtol = 1,
    matrix_norm_fro = 17.705648816126452,
    matrix_norm_nuc = 18.667655485835418,
    matrix_norm_2 = 17.681693991211571,
    ["matrix_norm_-2"] = 0.067752828007272906,
    matrix_norm_inf = 25.199999999999999,
    ["matrix_norm_-inf"] = 6,
    matrix_norm_1 = 19.5,
    ["matrix_norm_-1"] = 12,
    vector_norm_2 = 17.705648816126452,
    vector_norm_1 = 46.700000000000003,
    vector_norm_0 = 9,
    vector_norm_inf = 10,
    ["vector_norm_-inf"] = 1,
    ["vector_norm_-1"] = 0.35688948478524618,
    ["vector_norm_0.5"] = 384.29467509575903,
    ["vector_norm_3.5"] = 12.453262621264278,
    ["vector_norm_-2"] = 0.80777657543488812,
    vector_norm_dim_tuple = {{{4.7768561810350167}, {7.8931094111310793}, {12.656679647051369}}},
    vector_norm_dtype = true,
    norm_default = 17.705648816126452,
    norm_vec = 5,
    norm_ord_2d = 17.681693991211571,
    norm_ord_dim = {6, 15.5, 25.199999999999999},
    norm_nuc_keep = {{{18.667655485835418}}, {{12}}},
    norm_3d_noord = 19.338821060240463,
    norm_3d_ord = err('linalg.norm: If dim is not specified but ord is, the input must be 1D ' ..
        'or 2D. Got 3D.'),
    matrix_norm_dtype = 'torch.float64',
    legacy_norm_fro_dim = {3.7416573867739413, 9.1241437954473295, 14.705101155721438},
    legacy_norm_nuc = 18.667655485835418,
    legacy_norm_3 = 13.377479436689418,
    cond_None = 260.97351964870802,
    cond_fro = 262.03944990360822,
    cond_nuc = 296.91212656145075,
    cond_2 = 260.97351964870802,
    ["cond_-2"] = 0.0038318063891926001,
    cond_inf = 504.00000000000176,
    ["cond_-inf"] = 54.000000000000171,
    cond_1 = 379.36363636363774,
    ["cond_-1"] = 114.54545454545496,
    cond_sing = true, -- 2.5e16 or 4.8e16 (by CPU): sigma_min is rounding noise, so only its size
    cond_sing_1 = math.huge,
    det_sing = -0,
    slogdet_sing = {-0, -math.huge},
    logdet_sing = -math.huge,
    legacy_slogdet_sing = {-0, -math.huge},
    det_neg = -1,
    slogdet_neg = {-1, 0},
    logdet_neg = 0/0,
    legacy_slogdet_neg = {-1, 0},
    det_g = 1.0999999999999961,
    slogdet_g = {1, 0.095310179804321438},
    logdet_g = 0.095310179804321438,
    legacy_slogdet_g = {1, 0.095310179804321438},
    det_grad_sing = {{{0, -0}, {-0, 0}}},
    det_grad_sing3 = {{{0, 0, -0}, {0, -0, 0}, {-0, 0, 0}}},
    det_grad = {{{-3.2999999999999958, 5.5, -2.2000000000000033}, {4.5999999999999988, -11,
        5.8000000000000007}, {-2.0000000000000004, 5.5, -3}}},
    inv_sing = err('linalg.inv: The diagonal element 2 is zero, the inversion could not be ' ..
        'completed because the input matrix is singular.'),
    inv_sing3 = err('linalg.inv: The diagonal element 2 is zero, the inversion could not be ' ..
        'completed because the input matrix is singular.'),
    inv_ex_sing = 2,
    inv_ex_sing3 = 2,
    inverse_sing = err('linalg.inv: The diagonal element 2 is zero, the inversion could not ' ..
        'be completed because the input matrix is singular.'),
    inv_grad = {{{-45.045454545454852, 107.00000000000075, -55.618181818182208},
        {88.013223140496464, -207.09090909091054, 107.03801652892638}, {-42.950413223140792,
        100.90909090909163, -52.107438016529301}}},
    cholesky = {{2, 0, 0}, {0.5, 1.6583123951776999, 0}, {1, 0, 2}},
    cholesky_upper = {{2, 0.5, 1}, {0, 1.6583123951776999, 0}, {0, 0, 2}},
    cholesky_npd = err('linalg.cholesky: The factorization could not be completed because ' ..
        'the input is not positive-definite (the leading minor of order 2 is not ' ..
        'positive-definite).'),
    cholesky_npd3 = err('linalg.cholesky: The factorization could not be completed because ' ..
        'the input is not positive-definite (the leading minor of order 3 is not ' ..
        'positive-definite).'),
    cholesky_legacy_npd = err('cholesky: The factorization could not be completed because ' ..
        'the input is not positive-definite (the leading minor of order 2 is not ' ..
        'positive-definite).'),
    cholesky_ex_npd = 3,
    cholesky_ex = {{{2, 0.5, 1}, {0, 1.6583123951776999, 0}, {0, 0, 2}}, 0},
    cholesky_grad = {{{-0.054554472168609452, 0.10276448530110864, 0.20772670168666457},
        {0.10276448530110864, 0.15075567228888181, -0.18090680674665818}, {0.20772670168666457,
        -0.18090680674665818, 0.22500000000000001}}},
    qr_reduced = {{{-0.10910894511799629, -0.71917255380463008}, {-0.3273268353539886,
        -0.31292240890735701}, {-0.54554472558998113, -0.36782107713671708}, {-0.76376261582597349,
        0.49957788088718363}}, {{-9.1651513899116797, -11.183666874594612}, {0,
        -1.0842486975298806}}},
    qr_complete = {{{-0.10910894511799629, -0.71917255380463008, -0.55055617916407007,
        -0.40960220889739501}, {-0.3273268353539886, -0.31292240890735701, -0.17656035145186005,
        0.87393543878020863}, {-0.54554472558998113, -0.36782107713671708, 0.72901426923488644,
        -0.18875063667935549}, {-0.76376261582597349, 0.49957788088718363, -0.36640487323639764,
        -0.18120727486377913}}, {{-9.1651513899116797, -11.183666874594612}, {0,
        -1.0842486975298806}, {0, 0}, {0, 0}}},
    qr_r = {{shape={0}}, {{-9.1651513899116797, -11.183666874594612}, {0, -1.0842486975298806}}},
    qr_wide = {{{-0.24253562503633308, -0.97014250014533199}, {-0.97014250014533199,
        0.24253562503633289}}, {{-4.1231056256176606, -5.335783750799326, -7.0335331260536584}, {0,
        -0.72760687510899946, -1.3339459376998333}}},
    qr_grad = {{{2.7695983192098952, -1.4786717272512819}, {1.0111505772697391,
        -0.43394396302449423}, {0.51440258106861803, 0.071414809646588917}, {-2.5057449066105622,
        1.6555115654290784}}},
    legacy_qr = {{{-0.10910894511799629, -0.71917255380463008, -0.55055617916407007,
        -0.40960220889739501}, {-0.3273268353539886, -0.31292240890735701, -0.17656035145186005,
        0.87393543878020863}, {-0.54554472558998113, -0.36782107713671708, 0.72901426923488644,
        -0.18875063667935549}, {-0.76376261582597349, 0.49957788088718363, -0.36640487323639764,
        -0.18120727486377913}}, {{-9.1651513899116797, -11.183666874594612}, {0,
        -1.0842486975298806}, {0, 0}, {0, 0}}},
    svdvals = {14.483758735673387, 0.6860997644693162},
    svd_S = {14.483758735673391, 0.6860997644693162},
    svd_shapes_full = {{4, 4}, {2}, {2, 2}},
    svd_shapes_red = {{4, 2}, {2}, {2, 2}},
    legacy_svd_shapes = {{4, 2}, {2}, {2, 2}},
    legacy_svd_shapes_all = {{4, 4}, {2}, {2, 2}},
    svd_grad = {{{-0.57111086987758009, 3.4019332456810796}, {2.5480360748603803,
        4.7251497001329765}, {4.6479258627197142, 7.4750802669011556}, {8.8880117154043692,
        7.4963577907746259}}},
    svd_grad_full_err = 'ok',
    eigvalsh = {2.0965216172967178, 3.0722239520050754, 6.8312544306982037},
    eigvalsh_U = {2.0965216172967192, 3.0722239520050767, 6.8312544306982064},
    eigvalsh_L = {2.0965216172967178, 3.0722239520050754, 6.8312544306982037},
    eigh_vals = {2.0965216172967187, 3.0722239520050754, 6.8312544306982046},
    eigh_grad = {{{1.0482532789885353, -0.10197285468316521, 1.6821450492142245},
        {-0.10197285468316511, 3.3421406704015424, -0.057367054297461147}, {1.6821450492142247,
        -0.057367054297461174, 1.6096060506099221}}},
    matrix_exp = {{0.56200811989709432, 0.95275419112819837, 0.32846996558767716},
        {-0.95275419112819837, 0.68917018813283826, -0.21129589996631751}, {0.19708197935260618,
        0.12677753997979049, 0.656129954242052}},
    matrix_exp_grad = {{{-0.15833268267554035, -1.3097779313749043, 0.71928334214419321},
        {0.38698969449794418, -0.23081676123887895, 0.088314323657156246}, {0.61972662824729419,
        -1.2272349748778553, 0.80471989261186905}}},
    matrix_power_0 = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}},
    matrix_power_m2 = {{33.54545454545476, -63.950413223140927, 31.322314049586989},
        {-75.000000000000526, 147.2727272727283, -72.727272727273245}, {37.81818181818209,
        -75.471074380165831, 37.438016528925885}},
    matrix_power_3 = {{498.39999999999998, 620.19999999999993, 787.89999999999998}, {1181.2,
        1468.3999999999999, 1864.4499999999998}, {1877.9000000000001, 2333.8600000000001,
        2962.9000000000001}},
    matrix_power_sing = err('linalg.inv: The diagonal element 2 is zero, the inversion could ' ..
        'not be completed because the input matrix is singular.'),
    multi_dot = 699,
    multi_dot_mat = {{169, 209.19999999999999, 265}, {368, 455, 576}, {601.75, 743.94999999999993,
        941.75}, {766, 946.59999999999991, 1198}},
    householder_product = {{-0.19999999999999996, 51.299999999999997}, {-3.5999999999999996,
        154.39999999999998}, {-6, 253.25}, {-8.4000000000000004, 355.09999999999997}},
    linalg_cross = {{-5, 2.5, 0}, {5, 8, -10}, {-2, 3, -1}},
    linalg_cross_dim0 = {{-10, 5, -4}, {2.5, 6, -13}, {0, -5, 9}},
    torch_cross = {{-10, 5, -4}, {2.5, 6, -13}, {0, -5, 9}},
    torch_cross_dim = {{-5, 2.5, 0}, {5, 8, -10}, {-2, 3, -1}},
    linalg_cross_bcast = err('linalg.cross: inputs must have the same number of dimensions.'),
    vander = {{1, 1, 1}, {1, 2, 4}, {1, 3, 9}},
    vander_N = {{1, 1, 1, 1}, {1, 2, 4, 8}, {1, 3, 9, 27}},
    solve_tri_upper = {{0.17708333333333331, -0.5625}, {0.39583333333333337, -0.375},
        {0.083333333333333329, 0.5}},
    solve_tri_lower = {{0.5, 0}, {0.375, 0.25}, {-0.47916666666666663, 0.29166666666666663}},
    solve_tri_right = {{0.5, 0.375, -0.47916666666666663}, {0, 0.25, 0.29166666666666663}},
    solve_tri_unit = {{0, 5}, {-0.5, -14}, {0.5, 3}},
    solve_tri_noupper = err('linalg_solve_triangular() missing 1 required positional ' ..
        'arguments: "upper"'),
    triangular_solve = {{0.17708333333333331, -0.5625}, {0.39583333333333337, -0.375},
        {0.083333333333333329, 0.5}},
    lu_factor = {{{7, 8.1999999999999993, 10}, {0.14285714285714285, 0.82857142857142874,
        1.5714285714285716}, {0.5714285714285714, 0.37931034482758691, 0.18965517241379271}}, {3,
        3, 3}},
    lu = {{{0, 1, 0}, {0, 0, 1}, {1, 0, 0}}, {{1, 0, 0}, {0.14285714285714285, 1, 0},
        {0.5714285714285714, 0.37931034482758691, 1}}, {{7, 8.1999999999999993, 10}, {0,
        0.82857142857142874, 1.5714285714285716}, {0, 0, 0.18965517241379271}}},
    lu_rect = {{{0, 1, 0, 0}, {0, 0, 0, 1}, {0, 0, 1, 0}, {1, 0, 0, 0}}, {{1, 0},
        {0.14285714285714285, 1}, {0.71428571428571419, 0.91666666666666741}, {0.42857142857142855,
        0.66666666666666685}}, {{7, 8}, {0, 0.85714285714285721}}},
    lu_factor_rect = {{{4, 5, 6.5}, {0.25, 0.75, 1.375}}, {2, 2}},
    lu_wide = {{{0, 1}, {1, 0}}, {{1, 0}, {0.25, 1}}, {{4, 5, 6.5}, {0, 0.75, 1.375}}},
    lu_factor_tall = {{{7, 8}, {0.14285714285714285, 0.8571428571428572}, {0.7142857142857142,
        0.9166666666666674}, {0.42857142857142855, 0.6666666666666669}}, {4, 4}},
    lu_unpack_wide = {{{0, 1}, {1, 0}}, {{1, 0}, {0.25, 1}}, {{4, 5, 6.5}, {0, 0.75, 1.375}}},
    lu_rect_batch = {{{{0, 1, 0}, {0, 0, 1}, {1, 0, 0}}, {{1, 0, 0}, {0, 0, 1}, {0, 1, 0}}}, {{{1,
        0}, {0.2, 1}, {0.6000000000000001, 0.14285714285714235}}, {{1, 0}, {0, 1}, {0,
        0.6666666666666666}}}, {{{5, 6.5}, {0, 0.7}}, {{0, 1}, {0, 3}}}},
    lu_wide_singular = {{{0, 1}, {1, 0}}, {{1, 0}, {0.5, 1}}, {{2, 4, 6}, {0, 0, 0}}},
    lu_tall_empty = {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, {shape={3, 0}}, {shape={0, 0}}},
    lu_wide_empty = {{shape={0, 0}}, {shape={0, 0}}, {shape={0, 2}}},
    lu_factor_batch_empty = {{shape={0, 2, 3}}, {shape={0, 2}}},
    lu_rect_grad = {{{-1.9444444444444433, 1.951388888888888}, {2.809523809523809,
        -2.333333333333333}, {-2.1071428571428568, 1.7499999999999998}, {2.0787981859410425,
        -1.028769841269841}}},
    lu_wide_grad = {{{-1.4375, -0.75, 1.5}, {0.859375, -0.8125, 1.625}}},
    lu_factor_rect_grad = {{{-1.4375, -0.75, 1.5}, {0.859375, -0.8125, 1.625}}},
    lu_factor_tall_grad = {{{0.05555555555555656, 0.201388888888888}, {2.809523809523809,
        -2.333333333333333}, {-2.1071428571428568, 1.7499999999999998}, {0.7930839002267567,
        -1.2787698412698407}}},
    lu_rect_batch_grad = {{{{-0.4081632653061279, 0.7755102040816368}, {-10.142857142857144,
        8.571428571428571}, {7.667346938775513, -5.797959183673471}}, {{1.8316115702479339,
        0.5867768595041323}, {1.4917355371900827, 0.016528925619834534}, {1.4090909090909092,
        2.1818181818181817}}}},
    lu_solve_rect = err('torch.linalg.lu_solve: A must be batches of square matrices, but they ' ..
        'are 4 by 2 matrices'),
    solve_nonsquare = err('linalg.solve: A must be batches of square matrices, but they are 4 ' ..
        'by 2 matrices'),
    slogdet_nonsquare = err('linalg.slogdet: A must be batches of square matrices, but they ' ..
        'are 2 by 3 matrices'),
    lu_factor_rect_batch = {{{{5, 6.5}, {0.2, 0.7}, {0.6000000000000001, 0.14285714285714235}}, {{2,
        1}, {0.25, 2.75}, {-0.5, 0.9090909090909092}}}, {{3, 3}, {1, 2}}},
    lu_rect_recorded = {{{0, 1, 0, 0}, {0, 0, 0, 1}, {0, 0, 1, 0}, {1, 0, 0, 0}}, {{1, 0},
        {0.14285714285714285, 1}, {0.7142857142857142, 0.9166666666666674}, {0.42857142857142855,
        0.6666666666666669}}, {{7, 8}, {0, 0.8571428571428572}}},
    lu_factor_wide_recorded = {{{4, 5, 6.5}, {0.25, 0.75, 1.375}}, {2, 2}},
    lu_solve = {{4.4545454545454604, -1.272727272727274}, {-12.50000000000002, 5.0000000000000062},
        {7.1818181818181932, -2.9090909090909127}},
    lu_solve_adj = {{6.0000000000000195, -1.0000000000000095}, {-13.18181818181821,
        5.8181818181818317}, {6.8181818181818308, -3.1818181818181879}},
    lu_solve_right = {{6.0000000000000195, -13.18181818181821, 6.8181818181818308},
        {-1.0000000000000095, 5.8181818181818317, -3.1818181818181879}},
    lu_nopivot = err('linalg.lu_factor: LU without pivoting is not implemented on the CPU'),
    lu_unpack = {{{0, 1, 0}, {0, 0, 1}, {1, 0, 0}}, {{1, 0, 0}, {0.14285714285714285, 1, 0},
        {0.5714285714285714, 0.37931034482758691, 1}}, {{7, 8.1999999999999993, 10}, {0,
        0.82857142857142874, 1.5714285714285716}, {0, 0, 0.18965517241379271}}},
    legacy_lu_solve = {{4.4545454545454604, -1.272727272727274}, {-12.50000000000002,
        5.0000000000000062}, {7.1818181818181932, -2.9090909090909127}},
    tensorinv = {{{0.31789473684210534, 0.056842105263157909}, {-0.0042105263157894788,
        -0.065263157894736856}}, {{0.025263157894736873, 0.19789473684210532},
        {-0.029473684210526339, -0.056842105263157888}}, {{-0.067368421052631536,
        -0.061052631578947379}, {0.14526315789473684, -0.048421052631578955}},
        {{-0.16000000000000011, -0.12000000000000002}, {-0.079999999999999974, 0.16}}},
    tensorsolve = {{0.15789473684210528, 0.10526315789473685}, {0.05263157894736839, 0}},
    diagonal = {{2, 6.5}, {1, 0.5}},
    vecdot = {12, 22.25, 68.099999999999994},
    vecdot_dim = {22, 21.100000000000001, 59.25},
    det_nonsquare = err('linalg.det: A must be batches of square matrices, but they are 4 by ' ..
        '2 matrices'),
    solve_shape = err('linalg.solve: Incompatible shapes of A and B for the equation AX = B ' ..
        '(3x3 and 4x1)'),
    inv_nonsquare = err('linalg.inv: A must be batches of square matrices, but they are 4 by ' ..
        '2 matrices'),
}

local function t(x) return tide.tensor(x, { dtype = "float64" }) end
local SPD = {{4,1,2},{1,3,0.5},{2,0.5,5}}
local G = {{1,2,3},{4,5,6.5},{7,8.2,10}}
local SING = {{1,2},{2,4}}
local NEG = {{0,1},{1,0}}
local TALL = {{1,2},{3,4},{5,6.5},{7,8}}
local RDEF = {{1,2},{2,4},{3,6}}
local WIDE = {{1,2,3},{4,5,6.5}}
local B3 = {{1,0},{2,1},{0.5,3}}
local B4 = {{1},{2},{0.5},{3}}
local NPD = {{1,2},{2,1}}
local SING3 = {{1,2,3},{2,4,6},{1,0,1}}
local W3 = t({{0.3,-1,0.7},{0.2,0.5,-0.4},{1.1,-0.6,0.9}})

local function grad(f, ...)
    local xs = {}
    for i, x in ipairs({ ... }) do xs[i] = t(x):requires_grad_() end
    f(unpack(xs)):backward()
    local g = {}
    for i, x in ipairs(xs) do g[i] = x.grad end
    return g
end

-- several results as a list
local function R(...)
    if select("#", ...) == 1 then return (...) end
    return { ... }
end

local C = {}
local function case(name, f) C[#C + 1] = { name, f } end
case("solve", function() return LA.solve(t(G), t(B3)) end)
case("solve_vec", function() return LA.solve(t(G), t{1,2,3}) end)
case("solve_batch_bcast", function() return LA.solve(tide.stack({t(G), t(SPD)}), t(B3)) end)
case("solve_left_false", function() return LA.solve(t(G), t(WIDE), {left=false}) end)
case("solve_singular", function() return LA.solve(t(SING), t{{1},{2}}) end)
case("solve_grad", function() return grad(function(a, b) return (LA.solve(a,
    b)*t{{1,2},{3,4},{5,6}}):sum() end, G, B3) end)
for _, d in ipairs{"gelsy","gelsd","gelss","gels"} do
  case("lstsq_"..d, function() return R(LA.lstsq(t(TALL), t(B4), {driver=d})) end)
end
case("lstsq_default", function() return R(LA.lstsq(t(TALL), t(B4))) end)
case("lstsq_rdef_gelsd", function() return R(LA.lstsq(t(RDEF), t{{1},{2},{3.5}},
    {driver="gelsd"})) end)
case("lstsq_rdef_gelsy", function() return R(LA.lstsq(t(RDEF), t{{1},{2},{3.5}},
    {driver="gelsy"})) end)
case("lstsq_square", function() return R(LA.lstsq(t(G), t(B3), {driver="gelsd"})) end)
case("lstsq_wide", function() return R(LA.lstsq(t(WIDE), t{{1},{2}}, {driver="gelsd"})) end)
case("lstsq_rcond", function() return R(LA.lstsq(t(TALL), t(B4), {rcond=0.5, driver="gelsd"})) end)
case("pinv", function() return LA.pinv(t(TALL)) end)
case("pinv_herm", function() return LA.pinv(t(SPD), {hermitian=true}) end)
case("pinv_rtol", function() return LA.pinv(t(G), {rtol=0.1}) end)
case("pinv_atol", function() return LA.pinv(t(G), {atol=1.0}) end)
case("pinv_rcond", function() return tide.pinverse(t(G), 0.1) end)
case("pinv_grad",
    function() return grad(function(a) return (LA.pinv(a)*t{{1,2,3,4},{5,6,7,8}}):sum() end,
    TALL) end)
case("rank", function() return LA.matrix_rank(t(RDEF)) end)
case("rank_tol", function() return LA.matrix_rank(t(G), {tol=1.0}) end)
case("rank_herm", function() return LA.matrix_rank(t(SPD), {hermitian=true}) end)
case("rank_atol_rtol", function() return LA.matrix_rank(t(G), {atol=0.5, rtol=0.1}) end)
case("rank_rtol", function() return LA.matrix_rank(t(G), {rtol=0.1}) end)
local ords = { {"fro","fro"},{"nuc","nuc"},{"2",2},{"-2",-2},{"inf",math.huge},
    {"-inf",-math.huge},{"1",1},{"-1",-1} }
for _, o in ipairs(ords) do case("matrix_norm_"..o[1], function() return LA.matrix_norm(t(G),
    {ord=o[2]}) end) end
local vords = { {"2",2},{"1",1},{"0",0},{"inf",math.huge},{"-inf",-math.huge},{"-1",-1},
    {"0.5",0.5},{"3.5",3.5},{"-2",-2} }
for _, o in ipairs(vords) do case("vector_norm_"..o[1], function() return LA.vector_norm(t(G),
    {ord=o[2]}) end) end
case("vector_norm_dim_tuple", function() return LA.vector_norm(t{G,SPD}, {ord=3, dim={1,3},
    keepdim=true}) end)
case("vector_norm_dtype", function() return LA.vector_norm(t(G):float(),
    {dtype="float64"}).dtype == "float64" end)
case("norm_default", function() return LA.norm(t(G)) end)
case("norm_vec", function() return LA.norm(t{3,4}) end)
case("norm_ord_2d", function() return LA.norm(t(G), {ord=2}) end)
case("norm_ord_dim", function() return LA.norm(t(G), {ord=1, dim=2}) end)
case("norm_nuc_keep", function() return LA.norm(t{G,SPD}, {ord="nuc", dim={2,3}, keepdim=true}) end)
case("norm_3d_noord", function() return LA.norm(t{G,SPD}) end)
case("norm_3d_ord", function() return LA.norm(t{G,SPD}, {ord=2}) end)
case("matrix_norm_dtype", function() return "torch." .. LA.matrix_norm(t(G):float(),
    {dtype="float64"}).dtype end)
case("legacy_norm_fro_dim", function() return tide.norm(t(G), "fro", 2) end)
case("legacy_norm_nuc", function() return tide.norm(t(G), "nuc") end)
case("legacy_norm_3", function() return tide.norm(t(G), 3) end)
local cps = { {"None",nil},{"fro","fro"},{"nuc","nuc"},{"2",2},{"-2",-2},{"inf",math.huge},
    {"-inf",-math.huge},{"1",1},{"-1",-1} }
for _, o in ipairs(cps) do case("cond_"..o[1], function() return LA.cond(t(G), o[2]) end) end
-- cond of a singular A is sigma_max / (rounding noise in sigma_min): at least 1 / (n * eps)
case("cond_sing", function() return LA.cond(t(SING)):item() >= 1 / (2 * 2^-52) end)
case("cond_sing_1", function() return LA.cond(t(SING), 1) end)
for _, nm in ipairs{{"sing",SING},{"neg",NEG},{"g",G}} do
  local M = nm[2]
  case("det_"..nm[1], function() return LA.det(t(M)) end)
  case("slogdet_"..nm[1], function() return R(LA.slogdet(t(M))) end)
  case("logdet_"..nm[1], function() return tide.logdet(t(M)) end)
  case("legacy_slogdet_"..nm[1], function() return R(tide.slogdet(t(M))) end)
end
case("det_grad_sing", function() return grad(function(a) return LA.det(a) end, SING) end)
case("det_grad_sing3", function() return grad(function(a) return LA.det(a) end, SING3) end)
case("det_grad", function() return grad(function(a) return LA.det(a) end, G) end)
case("inv_sing", function() return LA.inv(t(SING)) end)
case("inv_sing3", function() return LA.inv(t(SING3)) end)
case("inv_ex_sing", function() return select(2, LA.inv_ex(t(SING))) end)
case("inv_ex_sing3", function() return select(2, LA.inv_ex(t(SING3))) end)
case("inverse_sing", function() return tide.inverse(t(SING)) end)
case("inv_grad", function() return grad(function(a) return (LA.inv(a)*W3):sum() end, G) end)
case("cholesky", function() return LA.cholesky(t(SPD)) end)
case("cholesky_upper", function() return LA.cholesky(t(SPD), {upper=true}) end)
case("cholesky_npd", function() return LA.cholesky(t(NPD)) end)
case("cholesky_npd3", function() return LA.cholesky(t{{4,1,2},{1,3,0.5},{2,0.5,-5}}) end)
case("cholesky_legacy_npd", function() return tide.cholesky(t(NPD)) end)
case("cholesky_ex_npd", function() return select(2,
    LA.cholesky_ex(t{{4,1,2},{1,3,0.5},{2,0.5,-5}})) end)
case("cholesky_ex", function() return R(LA.cholesky_ex(t(SPD), {upper=true})) end)
case("cholesky_grad", function() return grad(function(a) return (LA.cholesky(a)*W3):sum() end,
    SPD) end)
case("qr_reduced", function() return R(LA.qr(t(TALL))) end)
case("qr_complete", function() return R(LA.qr(t(TALL), {mode="complete"})) end)
case("qr_r", function() return R(LA.qr(t(TALL), {mode="r"})) end)
case("qr_wide", function() return R(LA.qr(t(WIDE))) end)
case("qr_grad", function() return grad(function(a)
  local Q, Rr = LA.qr(a)
  return (Q*t{{1,2},{3,4},{5,6},{7,8}}):sum() + (Rr*t{{1,-1},{0,2}}):sum() end, TALL) end)
case("legacy_qr", function() return R(tide.qr(t(TALL), false)) end)
case("svdvals", function() return LA.svdvals(t(TALL)) end)
case("svd_S", function() return select(2, LA.svd(t(TALL))) end)
local function shapes(...)
  local r = {}
  for i, x in ipairs({...}) do r[i] = x:size() end
  return r
end
case("svd_shapes_full", function() return shapes(LA.svd(t(TALL))) end)
case("svd_shapes_red", function() return shapes(LA.svd(t(TALL), {full_matrices=false})) end)
case("legacy_svd_shapes", function() return shapes(tide.svd(t(TALL))) end)
case("legacy_svd_shapes_all", function() return shapes(tide.svd(t(TALL), false)) end)
case("svd_grad", function() return grad(function(a)
  local U, S, Vh = LA.svd(a, {full_matrices=false})
  return (U:select(2,1):square()*t{1,2,3,4}):sum() + (S*t{1,3}):sum()
    + (Vh:select(1,1):square()*t{2,-1}):sum()
    + ((U*S):matmul(Vh)*t(TALL)):sum() end, TALL) end)
-- full_matrices = true: the extra columns get no gradient (PyTorch 1.13 narrows gU)
case("svd_grad_full_err", function() local U = LA.svd(t(TALL):requires_grad_(),
    {full_matrices=true}); U:sum():backward(); return "ok" end)
case("eigvalsh", function() return LA.eigvalsh(t(SPD)) end)
case("eigvalsh_U", function() return LA.eigvalsh(t{{4,1,2},{9,3,0.5},{9,9,5}}, {UPLO="U"}) end)
case("eigvalsh_L", function() return LA.eigvalsh(t{{4,9,9},{1,3,9},{2,0.5,5}}) end)
case("eigh_vals", function() return (LA.eigh(t(SPD))) end)
case("eigh_grad", function() return grad(function(a)
  local w, V = LA.eigh(a)
  return (w*t{1,2,3}):sum() + (V:select(2,1):square()*t{1,-2,3}):sum() end, SPD) end)
local EXPM = {{0,1,0.5},{-1,0.2,0},{0.3,0,-0.5}}
case("matrix_exp", function() return LA.matrix_exp(t(EXPM)) end)
case("matrix_exp_grad", function() return grad(function(a) return (LA.matrix_exp(a)*W3):sum() end,
    EXPM) end)
case("matrix_power_0", function() return LA.matrix_power(t(G), 0) end)
case("matrix_power_m2", function() return LA.matrix_power(t(G), -2) end)
case("matrix_power_3", function() return LA.matrix_power(t(G), 3) end)
case("matrix_power_sing", function() return LA.matrix_power(t(SING), -1) end)
case("multi_dot", function() return LA.multi_dot({t{1,2}, t(WIDE), t(G), t{1,0,2}}) end)
case("multi_dot_mat", function() return LA.multi_dot({t(TALL), t(WIDE), t(G)}) end)
case("householder_product", function() return LA.householder_product(t(TALL), t{1.2, 0.5}) end)
local C1 = {{1,2,3},{4,5,6},{7,8,10}}
local C2 = {{0.5,1,-1},{2,0,1},{1,1,1}}
case("linalg_cross", function() return LA.cross(t(C1), t(C2)) end)
case("linalg_cross_dim0", function() return LA.cross(t(C1), t(C2), {dim=1}) end)
case("torch_cross", function() return tide.cross(t(C1), t(C2)) end)
case("torch_cross_dim", function() return tide.cross(t(C1), t(C2), 2) end)
case("linalg_cross_bcast", function() return LA.cross(t(C1), t{1,2,3}) end)
case("vander", function() return LA.vander(t{1,2,3}) end)
case("vander_N", function() return LA.vander(t{1,2,3}, {N=4}) end)
local UT = {{2,1,3},{0,4,5},{0,0,6}}
case("solve_tri_upper", function() return LA.solve_triangular(t(UT), t(B3), {upper=true}) end)
case("solve_tri_lower", function() return LA.solve_triangular(t(UT):t(), t(B3), {upper=false}) end)
case("solve_tri_right", function() return LA.solve_triangular(t(UT), t(B3):t(), {upper=true,
    left=false}) end)
case("solve_tri_unit", function() return LA.solve_triangular(t(UT), t(B3), {upper=true,
    unitriangular=true}) end)
case("solve_tri_noupper", function() return LA.solve_triangular(t(UT), t(B3)) end)
case("triangular_solve", function() return (tide.triangular_solve(t(B3), t(UT), true)) end)
case("lu_factor", function() return R(LA.lu_factor(t(G))) end)
case("lu", function() return R(LA.lu(t(G))) end)
case("lu_rect", function() return R(LA.lu(t(TALL))) end)
case("lu_factor_rect", function() return R(LA.lu_factor(t(WIDE))) end)
case("lu_wide", function() return R(LA.lu(t(WIDE))) end)
case("lu_factor_tall", function() return R(LA.lu_factor(t(TALL))) end)
case("lu_unpack_wide", function() return R(tide.lu_unpack(LA.lu_factor(t(WIDE)))) end)
local RB = {{{1,2},{3,4},{5,6.5}},{{0,1},{0,2},{0,3}}} -- the second: a zero first column
case("lu_rect_batch", function() return R(LA.lu(t(RB))) end)
case("lu_wide_singular", function() return R(LA.lu(t{{1,2,3},{2,4,6}})) end)
local F64 = {dtype="float64"}
case("lu_tall_empty", function() return R(LA.lu(tide.zeros(3, 0, F64))) end)
case("lu_wide_empty", function() return R(LA.lu(tide.zeros(0, 2, F64))) end)
case("lu_factor_batch_empty", function() return R(LA.lu_factor(tide.zeros(0, 2, 3, F64))) end)
local W42 = t{{0.5,-1},{2,0.25},{-0.75,1.5},{1,-2}}
local W22 = t{{1.5,-0.5},{0.25,2}}
local W23 = t{{0.5,-1,2},{0.25,-0.75,1.5}}
case("lu_rect_grad", function() return grad(function(A) local _, Lm, U = LA.lu(A)
  return (Lm*W42):sum() + (U*W22):sum() end, TALL) end)
case("lu_wide_grad", function() return grad(function(A) local _, Lm, U = LA.lu(A)
  return (Lm*W22):sum() + (U*W23):sum() end, WIDE) end)
case("lu_factor_rect_grad", function() return grad(function(A)
  return (LA.lu_factor(A)*W23):sum() end, WIDE) end)
case("lu_factor_tall_grad", function() return grad(function(A)
  return (LA.lu_factor(A)*W42):sum() end, TALL) end)
local RB2 = {{{1,2},{3,4},{5,6.5}},{{2,1},{0.5,3},{-1,2}}}
case("lu_rect_batch_grad", function() return grad(function(A) local _, Lm, U = LA.lu(A)
  return (Lm*t{{1,2},{3,4},{5,6}}):sum() + (U*W22):sum() end, RB2) end)
case("lu_factor_rect_batch", function() return R(LA.lu_factor(t(RB2))) end)
-- the recorded call runs the ops (the composite), not the kernel: the same values
case("lu_rect_recorded", function() return R(LA.lu(t(TALL):requires_grad_())) end)
case("lu_factor_wide_recorded", function() return R(LA.lu_factor(t(WIDE):requires_grad_())) end)
case("lu_solve_rect", function() local a, p = LA.lu_factor(t(TALL))
  return LA.lu_solve(a, p, t(B4)) end)
case("solve_nonsquare", function() return LA.solve(t(TALL), t(B4)) end)
case("slogdet_nonsquare", function() return R(LA.slogdet(t(WIDE))) end)
case("lu_solve", function() local a, p = LA.lu_factor(t(G)); return LA.lu_solve(a, p, t(B3)) end)
case("lu_solve_adj", function() local a, p = LA.lu_factor(t(G)); return LA.lu_solve(a, p, t(B3),
    {adjoint=true}) end)
case("lu_solve_right", function() local a, p = LA.lu_factor(t(G)); return LA.lu_solve(a, p,
    t(B3):t(), {left=false}) end)
case("lu_nopivot", function() return R(LA.lu(t(G), {pivot=false})) end)
case("lu_unpack", function() return R(tide.lu_unpack(LA.lu_factor(t(G)))) end)
case("legacy_lu_solve", function() return tide.lu_solve(t(B3), tide.lu(t(G))) end)
local function T224()
  return tide.arange(16, {dtype="float64"}):reshape(2,2,4)
    + tide.eye(4, {dtype="float64"}):reshape(2,2,4)*5
end
case("tensorinv", function() return LA.tensorinv(T224()) end)
case("tensorsolve", function() return LA.tensorsolve(T224():reshape(2,2,2,2), t{{1,2},{3,4}}) end)
case("diagonal", function() return LA.diagonal(t{G,SPD}, {offset=1}) end)
case("vecdot", function() return LA.vecdot(t(G), t(SPD)) end)
case("vecdot_dim", function() return LA.vecdot(t(G), t(SPD), {dim=1}) end)
case("det_nonsquare", function() return LA.det(t(TALL)) end)
case("solve_shape", function() return LA.solve(t(G), t(B4)) end)
case("inv_nonsquare", function() return LA.inv(t(TALL)) end)


-- tide's message for each of PyTorch's errors (the same facts)
local ERRS = {
    solve_singular = "tide: linalg.solve: the matrix is singular",
    norm_3d_ord = "tide: linalg.norm: If dim is not specified but ord is, the input must be " ..
        "1D or 2D. Got 3D.",
    inv_sing = "tide: linalg.inv: the matrix is singular (U's diagonal element 2 is zero",
    inv_sing3 = "tide: linalg.inv: the matrix is singular (U's diagonal element 2 is zero",
    inverse_sing = "tide: linalg.inv: the matrix is singular (U's diagonal element 2 is zero",
    cholesky_npd = "tide: linalg.cholesky: the matrix is not positive-definite (its leading " ..
        "minor of order 2 is not positive)",
    cholesky_npd3 = "tide: linalg.cholesky: the matrix is not positive-definite (its leading " ..
        "minor of order 3 is not positive)",
    cholesky_legacy_npd = "leading minor of order 2 is not positive",
    matrix_power_sing = "tide: linalg.inv: the matrix is singular (U's diagonal element 2",
    linalg_cross_bcast = "tide: linalg.cross: inputs must have the same number of dimensions",
    solve_tri_noupper = "tide: linalg.solve_triangular: upper must be given",
    lu_nopivot = "tide: linalg.lu: pivot = false is not supported",
    det_nonsquare = "tide: linalg.det: expected square matrices [..., n, n], got {4, 2}",
    solve_shape = "tide: linalg.solve: A is {3, 3}, B {4, 1}: B's rows must match",
    inv_nonsquare = "tide: linalg.inv: expected square matrices [..., n, n], got {4, 2}",
    lu_solve_rect = "tide: linalg.lu_solve: expected square matrices [..., n, n], got {4, 2}",
    solve_nonsquare = "tide: linalg.solve: expected square matrices [..., n, n], got {4, 2}",
    slogdet_nonsquare = "tide: linalg.slogdet: expected square matrices [..., n, n], got {2, 3}",
}

-- left as they are (the reason)
local PENDING = {}

local function conv(v)
    if type(v) == "table" and not getmetatable(v) then
        local r = {}
        for i, x in ipairs(v) do r[i] = conv(x) end
        return r
    end
    if tide.is_tensor(v) then
        if v:numel() == 0 then return { shape = v:size() } end
        if v:dim() == 0 then return v:item() end
        return v:detach():totable()
    end
    return v
end

local function same(a, b, path)
    if type(a) == "number" and type(b) == "number" then
        if (a ~= a and b ~= b) or a == b then return true end
        return math.abs(a - b) <= 1e-8 * math.max(1, math.abs(b)),
            path .. (": %.17g, PyTorch's %.17g"):format(a, b)
    end
    if type(a) ~= type(b) then
        return false, path .. ": a " .. type(a) .. ", PyTorch's a " .. type(b)
    end
    if type(a) ~= "table" then
        return a == b, path .. ": " .. tostring(a) .. ", PyTorch's " .. tostring(b)
    end
    if a.shape or b.shape then
        return a.shape ~= nil and b.shape ~= nil and
            table.concat(a.shape, ",") == table.concat(b.shape, ","), path .. ": empty shapes"
    end
    if #a ~= #b then return false, path .. (": %d items, PyTorch's %d"):format(#a, #b) end
    for i = 1, #a do
        local ok, why = same(a[i], b[i], path .. "[" .. i .. "]")
        if not ok then return false, why end
    end
    return true
end

-- one it per family (the name's first word): each case's name is in its failure
local function family(name)
    return (name:gsub("_.*", ""))
end

describe("linalg values against PyTorch 1.13 (float64)", function()
    local groups, order = {}, {}
    for _, c in ipairs(C) do
        local name = c[1]
        if PENDING[name] then
            pending(name .. ": " .. PENDING[name])
        else
            local fam = family(name)
            if not groups[fam] then
                groups[fam] = {}
                order[#order + 1] = fam
            end
            local g = groups[fam]
            g[#g + 1] = c
        end
    end
    for _, fam in ipairs(order) do
        local names = {}
        for i, c in ipairs(groups[fam]) do names[i] = c[1] end
        it(table.concat(names, ", "), function()
            for _, c in ipairs(groups[fam]) do
                local name, f = c[1], c[2]
                local want = E[name]
                assert.is_not_nil(want, name)
                if type(want) == "table" and want.err then -- PyTorch raises: tide too
                    local ok, e = pcall(f)
                    assert.is_false(ok, name .. " returned; PyTorch raises " .. want.err)
                    assert.truthy(ERRS[name], "no tide message for " .. name)
                    assert.truthy(tostring(e):find(ERRS[name], 1, true), name .. ": " ..
                        tostring(e))
                else
                    local ok, why = same(conv(f()), want, name)
                    assert.is_true(ok, why)
                end
            end
        end)
    end
end)
