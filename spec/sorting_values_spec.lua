-- sorting_values_spec.lua: sorting, searching, order statistics and uniqueness against
-- PyTorch 1.13 (CPU). Every expected value below was printed by PyTorch 1.13 for the same call
-- (0-based dims and indices); tide takes the 1-based ones docs/API.md documents, index
-- results (listed per case) are PyTorch's plus one, and tide.bincount counts v + 1 at v + 1.
local tide = require("tide")

local NAN, INF = 0 / 0, math.huge
local NZ = -(1 / math.huge) -- -0.0 (a -0.0 literal shares 0.0's constant on Lua 5.1)

-- PyTorch 1.13's results: one {shape =, dtype =, v = row-major values} per result, {num =}
local P = {
  sort = {{shape = {9}, dtype = "float64", v = {NZ, 0.0, 1.0, 1.0, 1.0, 2.0, 3.0, NAN, NAN}},
    {shape = {9}, dtype = "int64", v = {4, 5, 1, 3, 8, 6, 0, 2, 7}}},
  sort_stable = {{shape = {9}, dtype = "float64", v = {NZ, 0.0, 1.0, 1.0, 1.0, 2.0, 3.0, NAN,
    NAN}}, {shape = {9}, dtype = "int64", v = {4, 5, 1, 3, 8, 6, 0, 2, 7}}},
  sort_desc = {{shape = {9}, dtype = "float64", v = {NAN, NAN, 3.0, 2.0, 1.0, 1.0, 1.0, NZ,
    0.0}}, {shape = {9}, dtype = "int64", v = {2, 7, 0, 6, 1, 3, 8, 4, 5}}},
  sort_desc_pos = {{shape = {9}, dtype = "float64", v = {NAN, NAN, 3.0, 2.0, 1.0, 1.0, 1.0, NZ,
    0.0}}, {shape = {9}, dtype = "int64", v = {2, 7, 0, 6, 1, 3, 8, 4, 5}}},
  sort_zero = {{shape = {4}, dtype = "float64", v = {0.0, NZ, 0.0, NZ}}, {shape = {4},
    dtype = "int64", v = {0, 1, 2, 3}}},
  sort_int = {{shape = {8}, dtype = "int64", v = {2, 2, 2, 4, 4, 7, 7, 9}}, {shape = {8},
    dtype = "int64", v = {1, 2, 5, 0, 4, 3, 7, 6}}},
  sort_int_desc = {{shape = {8}, dtype = "int64", v = {9, 7, 7, 4, 4, 2, 2, 2}}, {shape = {8},
    dtype = "int64", v = {6, 3, 7, 0, 4, 1, 2, 5}}},
  sort_dim0 = {{shape = {3, 4}, dtype = "float64", v = {2.0, 3.0, 1.0, 0.0, 4.0, 4.0, 2.0, 1.0,
    NAN, 5.0, 3.0, 4.0}}, {shape = {3, 4}, dtype = "int64", v = {0, 1, 2, 1, 2, 2, 0, 0, 1, 0, 1,
    2}}},
  sort_dim1 = {{shape = {3, 4}, dtype = "float64", v = {1.0, 2.0, 2.0, 5.0, 0.0, 3.0, 3.0, NAN,
    1.0, 4.0, 4.0, 4.0}}, {shape = {3, 4}, dtype = "int64", v = {3, 0, 2, 1, 3, 1, 2, 0, 2, 0, 1,
    3}}},
  sort_mi_desc = {{shape = {3, 4}, dtype = "int64", v = {3, 3, 2, 1, 2, 2, 1, 1, 5, 5, 4, 4}},
    {shape = {3, 4}, dtype = "int64", v = {0, 2, 3, 1, 2, 3, 0, 1, 0, 2, 1, 3}}},
  tsort = {{shape = {9}, dtype = "float64", v = {NAN, NAN, 3.0, 2.0, 1.0, 1.0, 1.0, NZ, 0.0}},
    {shape = {9}, dtype = "int64", v = {2, 7, 0, 6, 1, 3, 8, 4, 5}}},
  argsort = {{shape = {9}, dtype = "int64", v = {4, 5, 1, 3, 8, 6, 0, 2, 7}}},
  argsort_desc = {{shape = {8}, dtype = "int64", v = {6, 3, 7, 0, 4, 1, 2, 5}}},
  argsort_dim0 = {{shape = {3, 4}, dtype = "int64", v = {0, 1, 2, 1, 2, 2, 0, 0, 1, 0, 1, 2}}},
  targsort = {{shape = {3, 4}, dtype = "int64", v = {0, 2, 3, 1, 2, 3, 0, 1, 0, 2, 1, 3}}},
  msort = {{shape = {3, 4}, dtype = "float64", v = {2.0, 3.0, 1.0, 0.0, 4.0, 4.0, 2.0, 1.0, NAN,
    5.0, 3.0, 4.0}}},
  tmsort = {{shape = {3, 4}, dtype = "int64", v = {1, 1, 2, 2, 3, 1, 3, 2, 5, 4, 5, 4}}},
  topk = {{shape = {3}, dtype = "int64", v = {9, 7, 7}}, {shape = {3}, dtype = "int64", v = {6,
    3, 7}}},
  topk_small = {{shape = {3}, dtype = "int64", v = {2, 2, 2}}, {shape = {3}, dtype = "int64",
    v = {2, 5, 1}}},
  topk_nan = {{shape = {3}, dtype = "float64", v = {NAN, NAN, 3.0}}, {shape = {3},
    dtype = "int64", v = {2, 7, 0}}},
  topk_nan_small = {{shape = {4}, dtype = "float64", v = {0.0, NZ, 1.0, 1.0}}, {shape = {4},
    dtype = "int64", v = {5, 4, 8, 3}}},
  topk_dim0 = {{shape = {2, 4}, dtype = "float64", v = {NAN, 5.0, 3.0, 4.0, 4.0, 4.0, 2.0, 1.0}},
    {shape = {2, 4}, dtype = "int64", v = {1, 0, 1, 2, 2, 2, 0, 0}}},
  topk_mi = {{shape = {3, 2}, dtype = "int64", v = {3, 3, 2, 2, 5, 5}}, {shape = {3, 2},
    dtype = "int64", v = {0, 2, 2, 3, 0, 2}}},
  topk_pos = {{shape = {3, 2}, dtype = "int64", v = {1, 2, 1, 1, 4, 4}}, {shape = {3, 2},
    dtype = "int64", v = {1, 3, 1, 0, 1, 3}}},
  ttopk = {{shape = {2}, dtype = "int64", v = {2, 2}}, {shape = {2}, dtype = "int64", v = {2, 5}}},
  kth = {{shape = {}, dtype = "int64", v = {2}}, {shape = {}, dtype = "int64", v = {5}}},
  kth_nan = {{shape = {}, dtype = "float64", v = {NAN}}, {shape = {}, dtype = "int64", v = {2}}},
  kth_f = {{shape = {}, dtype = "float64", v = {0.0}}, {shape = {}, dtype = "int64", v = {5}}},
  kth_dim = {{shape = {3, 1}, dtype = "int64", v = {2, 1, 4}}, {shape = {3, 1}, dtype = "int64",
    v = {3, 0, 3}}},
  kth_dim0 = {{shape = {4}, dtype = "float64", v = {4.0, 4.0, 2.0, 1.0}}, {shape = {4},
    dtype = "int64", v = {2, 2, 0, 0}}},
  median_all = {{shape = {}, dtype = "int64", v = {4}}},
  median_even = {{shape = {}, dtype = "float64", v = {3.0}}},
  median_nan = {{shape = {}, dtype = "float64", v = {NAN}}},
  median_dim = {{shape = {3}, dtype = "int64", v = {2, 1, 4}}, {shape = {3}, dtype = "int64",
    v = {3, 1, 3}}},
  median_dim_keep = {{shape = {3, 1}, dtype = "float64", v = {2.0, NAN, 4.0}}, {shape = {3, 1},
    dtype = "int64", v = {0, 0, 0}}},
  median_dim0 = {{shape = {4}, dtype = "float64", v = {NAN, 4.0, 2.0, 1.0}}, {shape = {4},
    dtype = "int64", v = {1, 2, 0, 0}}},
  median_int_dup = {{shape = {}, dtype = "int64", v = {4}}, {shape = {}, dtype = "int64", v = {0}}},
  nanmedian_all = {{shape = {}, dtype = "float64", v = {1.0}}},
  nanmedian_dim = {{shape = {3}, dtype = "float64", v = {2.0, 3.0, 4.0}}, {shape = {3},
    dtype = "int64", v = {0, 1, 0}}},
  nanmedian_dim0 = {{shape = {4}, dtype = "float64", v = {2.0, 4.0, 2.0, 1.0}}, {shape = {4},
    dtype = "int64", v = {0, 2, 0, 0}}},
  tnanmedian = {{shape = {}, dtype = "float64", v = {2.0}}},
  mode = {{shape = {}, dtype = "int64", v = {2}}, {shape = {}, dtype = "int64", v = {5}}},
  mode_dim = {{shape = {3}, dtype = "int64", v = {3, 1, 4}}, {shape = {3}, dtype = "int64",
    v = {2, 1, 3}}},
  mode_dim0 = {{shape = {1, 4}, dtype = "int64", v = {1, 1, 2, 2}}, {shape = {1, 4},
    dtype = "int64", v = {1, 1, 1, 1}}},
  mode_f = {{shape = {}, dtype = "float64", v = {1.0}}, {shape = {}, dtype = "int64", v = {4}}},
  tmode = {{shape = {}, dtype = "int64", v = {2}}, {shape = {}, dtype = "int64", v = {7}}},
  q_lin = {{shape = {}, dtype = "float64", v = {12.0}}},
  q_lower = {{shape = {}, dtype = "float64", v = {10.0}}},
  q_higher = {{shape = {}, dtype = "float64", v = {20.0}}},
  q_mid = {{shape = {}, dtype = "float64", v = {15.0}}},
  q_near = {{shape = {}, dtype = "float64", v = {10.0}}},
  q_near_half = {{shape = {4}, dtype = "float64", v = {0.0, 20.0, 20.0, 40.0}}},
  q_near_e = {{shape = {5}, dtype = "float64", v = {1.0, 3.0, 3.0, 5.0, 5.0}}},
  q_tensor = {{shape = {3}, dtype = "float64", v = {0.0, 20.0, 40.0}}},
  q_dim = {{shape = {3}, dtype = "float64", v = {2.0, NAN, 4.0}}},
  q_dim_keep = {{shape = {2, 3, 1}, dtype = "float64", v = {1.75, 1.0, 4.0, 3.0, 2.0, 5.0}}},
  q_dim0_pos = {{shape = {1, 4}, dtype = "float64", v = {NAN, 3.5, 1.5, 0.5}}},
  q_nan = {{shape = {}, dtype = "float64", v = {NAN}}},
  nq = {{shape = {}, dtype = "float64", v = {2.0}}},
  nq_lower = {{shape = {}, dtype = "float64", v = {1.0}}},
  nq_dim = {{shape = {3}, dtype = "float64", v = {2.0, 3.0, 4.0}}},
  tquantile = {{shape = {}, dtype = "float64", v = {3.0}}},
  unique = {{shape = {3}, dtype = "float64", v = {1.0, 3.0, 5.0}}},
  unique_all = {{shape = {3}, dtype = "int64", v = {1, 2, 3}}, {shape = {8}, dtype = "int64",
    v = {1, 1, 0, 2, 2, 2, 0, 1}}, {shape = {3}, dtype = "int64", v = {2, 3, 3}}},
  unique_nan = {{shape = {6}, dtype = "float64", v = {NZ, 2.0, NAN, NAN, 1.0, 3.0}}},
  unique_dim = {{shape = {2, 2}, dtype = "int64", v = {0, 5, 1, 2}}, {shape = {4},
    dtype = "int64", v = {1, 1, 0, 1}}, {shape = {2}, dtype = "int64", v = {1, 3}}},
  unique_dim1 = {{shape = {3, 4}, dtype = "int64", v = {1, 2, 3, 3, 1, 2, 1, 2, 4, 4, 5, 5}}},
  tunique = {{shape = {3}, dtype = "int64", v = {1, 2, 3}}, {shape = {3}, dtype = "int64",
    v = {2, 3, 3}}},
  uc = {{shape = {5}, dtype = "int64", v = {2, 1, 3, 1, 2}}},
  uc_all = {{shape = {5}, dtype = "int64", v = {2, 1, 3, 1, 2}}, {shape = {8}, dtype = "int64",
    v = {0, 0, 1, 2, 2, 2, 3, 4}}, {shape = {5}, dtype = "int64", v = {2, 1, 3, 1, 1}}},
  uc_dim = {{shape = {3, 2}, dtype = "int64", v = {1, 2, 0, 5, 1, 2}}, {shape = {4},
    dtype = "int64", v = {0, 0, 1, 2}}, {shape = {3}, dtype = "int64", v = {2, 1, 1}}},
  tuc = {{shape = {4}, dtype = "float64", v = {5.0, 1.0, 3.0, 1.0}}, {shape = {4},
    dtype = "int64", v = {1, 1, 2, 1}}},
  ss = {{shape = {5}, dtype = "int64", v = {0, 1, 4, 5, 3}}},
  ss_right = {{shape = {5}, dtype = "int64", v = {0, 3, 4, 5, 4}}},
  ss_side = {{shape = {5}, dtype = "int64", v = {0, 3, 4, 5, 4}}},
  ss_side_left = {{shape = {5}, dtype = "int64", v = {0, 1, 4, 5, 3}}},
  ss_i32 = {{shape = {5}, dtype = "int32", v = {0, 1, 4, 5, 3}}},
  ss_scalar = {{shape = {}, dtype = "int64", v = {1}}},
  ss_scalar_r = {{shape = {}, dtype = "int64", v = {3}}},
  ss_sorter = {{shape = {4}, dtype = "int64", v = {0, 2, 4, 5}}},
  ss_2d = {{shape = {2, 2}, dtype = "int64", v = {1, 3, 0, 2}}},
  ss_int = {{shape = {3}, dtype = "int64", v = {1, 2, 3}}},
  bucketize = {{shape = {5}, dtype = "int64", v = {0, 1, 4, 5, 3}}},
  bucketize_r = {{shape = {5}, dtype = "int64", v = {0, 3, 4, 5, 4}}},
  bucketize_i32 = {{shape = {5}, dtype = "int32", v = {0, 1, 4, 5, 3}}},
  histc = {{shape = {4}, dtype = "float64", v = {1.0, 2.0, 1.0, 2.0}}},
  histc_pos = {{shape = {5}, dtype = "float64", v = {2.0, 1.0, 2.0, 1.0, 2.0}}},
  histc_range = {{shape = {3}, dtype = "float64", v = {2.0, 3.0, 3.0}}},
  histc_default = {{shape = {100}, dtype = "float64", v = {1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0,
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 1.0}}},
  histc_eq = {{shape = {4}, dtype = "float64", v = {0.0, 0.0, 3.0, 0.0}}},
  histogram = {{shape = {3}, dtype = "float64", v = {2.0, 3.0, 3.0}}, {shape = {4},
    dtype = "float64", v = {-1.0, 1.0, 3.0, 5.0}}},
  histogram_range = {{shape = {4}, dtype = "float64", v = {1.0, 2.0, 1.0, 2.0}}, {shape = {5},
    dtype = "float64", v = {0.0, 1.0, 2.0, 3.0, 4.0}}},
  histogram_edges = {{shape = {3}, dtype = "float64", v = {3.0, 1.0, 3.0}}, {shape = {4},
    dtype = "float64", v = {0.0, 2.0, 3.0, 5.0}}},
  histogram_w = {{shape = {3}, dtype = "float64", v = {4.0, 1.0, 5.0}}, {shape = {4},
    dtype = "float64", v = {0.0, 2.0, 3.0, 5.0}}},
  histogram_density = {{shape = {3}, dtype = "float64", v = {0.21428571428571427,
    0.14285714285714285, 0.21428571428571427}}, {shape = {4}, dtype = "float64", v = {0.0, 2.0,
    3.0, 5.0}}},
  histogram_wd = {{shape = {3}, dtype = "float64", v = {0.09090909090909091, 0.18181818181818182,
    0.22727272727272727}}, {shape = {4}, dtype = "float64", v = {-1.0, 1.0, 3.0, 5.0}}},
  histogram_m = {{shape = {4}, dtype = "float64", v = {0.16666666666666666, 0.16666666666666666,
    0.16666666666666666, 0.16666666666666666}}, {shape = {5}, dtype = "float64", v = {-1.0, 0.5,
    2.0, 3.5, 5.0}}},
  bincount = {{shape = {4}, dtype = "int64", v = {1, 2, 0, 3}}},
  bincount_w = {{shape = {4}, dtype = "float64", v = {4.0, 0.75, 0.0, 4.0}}},
  bincount_ml = {{shape = {6}, dtype = "int64", v = {1, 2, 0, 3, 0, 0}}},
  bincount_pos = {{shape = {6}, dtype = "float64", v = {4.0, 0.75, 0.0, 4.0, 0.0, 0.0}}},
  bincount_wf = {{shape = {4}, dtype = "float32", v = {4.0, 0.75, 0.0, 4.0}}},
  bincount_empty = {{shape = {0}, dtype = "int64", v = {}}},
  cummax = {{shape = {7}, dtype = "float64", v = {1.0, 3.0, 3.0, 3.0, NAN, NAN, NAN}},
    {shape = {7}, dtype = "int64", v = {0, 1, 1, 3, 4, 4, 4}}},
  cummin = {{shape = {7}, dtype = "float64", v = {1.0, 1.0, 1.0, 1.0, NAN, NAN, NAN}},
    {shape = {7}, dtype = "int64", v = {0, 0, 0, 0, 4, 4, 4}}},
  cummax_i = {{shape = {7}, dtype = "int64", v = {1, 3, 3, 3, 3, 5, 5}}, {shape = {7},
    dtype = "int64", v = {0, 1, 1, 3, 3, 5, 6}}},
  cummin_i = {{shape = {7}, dtype = "int64", v = {1, 1, 1, 1, 0, 0, 0}}, {shape = {7},
    dtype = "int64", v = {0, 0, 0, 0, 4, 4, 4}}},
  cummax_m = {{shape = {3, 4}, dtype = "int64", v = {3, 3, 3, 3, 1, 1, 2, 2, 5, 5, 5, 5}},
    {shape = {3, 4}, dtype = "int64", v = {0, 0, 2, 2, 0, 1, 2, 3, 0, 0, 2, 2}}},
  tcummin = {{shape = {3, 4}, dtype = "float64", v = {2.0, 5.0, 2.0, 1.0, NAN, 3.0, 2.0, 0.0,
    NAN, 3.0, 1.0, 0.0}}, {shape = {3, 4}, dtype = "int64", v = {0, 0, 0, 0, 1, 1, 0, 1, 1, 1, 2,
    1}}},
  argmax = {{shape = {}, dtype = "int64", v = {1}}},
  argmin = {{shape = {}, dtype = "int64", v = {3}}},
  argmax_nan = {{shape = {}, dtype = "int64", v = {3}}},
  argmin_nan = {{shape = {}, dtype = "int64", v = {3}}},
  argmax_dim = {{shape = {3}, dtype = "int64", v = {0, 2, 0}}},
  argmin_dim_keep = {{shape = {3, 1}, dtype = "int64", v = {1, 0, 1}}},
  argmax_m = {{shape = {4}, dtype = "int64", v = {1, 0, 1, 2}}},
  argmin_m = {{shape = {3}, dtype = "int64", v = {3, 0, 2}}},
  max_dim = {{shape = {3}, dtype = "float64", v = {5.0, NAN, 4.0}}, {shape = {3},
    dtype = "int64", v = {1, 0, 0}}},
  min_dim = {{shape = {3, 1}, dtype = "float64", v = {1.0, NAN, 1.0}}, {shape = {3, 1},
    dtype = "int64", v = {3, 0, 2}}},
  max_dim0 = {{shape = {4}, dtype = "float64", v = {NAN, 5.0, 3.0, 4.0}}, {shape = {4},
    dtype = "int64", v = {1, 0, 1, 2}}},
  max_i = {{shape = {3}, dtype = "int64", v = {3, 2, 5}}, {shape = {3}, dtype = "int64", v = {0,
    2, 0}}},
  min_i = {{shape = {4}, dtype = "int64", v = {1, 1, 2, 2}}, {shape = {4}, dtype = "int64",
    v = {1, 0, 1, 0}}},
  max_all = {{shape = {}, dtype = "float64", v = {NAN}}},
  min_all_i = {{shape = {}, dtype = "int64", v = {1}}},
  max_nan_dup = {{shape = {}, dtype = "float64", v = {NAN}}, {shape = {}, dtype = "int64",
    v = {3}}},
  min_nan_dup = {{shape = {}, dtype = "float64", v = {NAN}}, {shape = {}, dtype = "int64",
    v = {3}}},
  argsort_stable = {{shape = {9}, dtype = "int64", v = {2, 7, 0, 6, 1, 3, 8, 4, 5}}},
  argsort_stable_m = {{shape = {8}, dtype = "int64", v = {1, 2, 5, 0, 4, 3, 7, 6}}},
  topk_unsorted_vals = {{shape = {3}, dtype = "int64", v = {9, 7, 7}}},
  kth_nan_last = {{shape = {}, dtype = "float64", v = {NAN}}, {shape = {}, dtype = "int64",
    v = {1}}},
  cummax_nan_then = {{shape = {5}, dtype = "float64", v = {1.0, NAN, NAN, NAN, NAN}},
    {shape = {5}, dtype = "int64", v = {0, 1, 1, 3, 3}}},
  cummin_nan_then = {{shape = {5}, dtype = "float64", v = {1.0, NAN, NAN, NAN, NAN}},
    {shape = {5}, dtype = "int64", v = {0, 1, 1, 3, 3}}},
  q_0d = {{shape = {}, dtype = "float64", v = {12.0}}},
  nq_allnan = {{shape = {2}, dtype = "float64", v = {NAN, 1.5}}},
  q_float32 = {{shape = {}, dtype = "float32", v = {1.0}}},
  nanmedian_allnan = {{shape = {}, dtype = "float64", v = {NAN}}, {shape = {}, dtype = "int64",
    v = {0}}},
  median_nan_dim = {{shape = {}, dtype = "float64", v = {NAN}}, {shape = {}, dtype = "int64",
    v = {1}}},
  mode_nan = {{shape = {}, dtype = "float64", v = {1.0}}, {shape = {}, dtype = "int64", v = {3}}},
  ss_sorter_right = {{shape = {4}, dtype = "int64", v = {0, 4, 4, 5}}},
  ss_scalar_i32 = {{shape = {}, dtype = "int32", v = {3}}},
  bucketize_scalar = {{shape = {}, dtype = "int64", v = {1}}},
  bucketize_int = {{shape = {6}, dtype = "int64", v = {1, 2, 2, 0, 1, 2}}},
  histc_f32 = {{shape = {4}, dtype = "float32", v = {1.0, 2.0, 1.0, 2.0}}},
  histc_min_only = {{shape = {2}, dtype = "float64", v = {4.0, 4.0}}},
  histogram_f32 = {{shape = {2}, dtype = "float32", v = {4.0, 4.0}}, {shape = {3},
    dtype = "float32", v = {-1.0, 2.0, 5.0}}},
  unique_consec_f = {{shape = {8}, dtype = "float64", v = {3.0, 1.0, NAN, 1.0, NZ, 2.0, NAN,
    1.0}}, {shape = {8}, dtype = "int64", v = {1, 1, 1, 1, 2, 1, 1, 1}}},
  unique_inv_2d = {{shape = {5}, dtype = "int64", v = {1, 2, 3, 4, 5}}, {shape = {3, 4},
    dtype = "int64", v = {2, 0, 2, 1, 0, 0, 1, 1, 4, 3, 4, 3}}},
  max_int_dim_keep = {{shape = {1}, dtype = "int64", v = {9}}, {shape = {1}, dtype = "int64",
    v = {6}}},
  argmax_int_ties = {{shape = {}, dtype = "int64", v = {6}}},
  argmin_int_ties = {{shape = {}, dtype = "int64", v = {1}}},
  aminmax = {{shape = {3}, dtype = "float64", v = {1.0, NAN, 1.0}}, {shape = {3},
    dtype = "float64", v = {5.0, NAN, 4.0}}},
  median_0d = {{shape = {}, dtype = "float64", v = {3.5}}, {shape = {}, dtype = "int64", v = {0}}},
  msort_desc_check = {{shape = {9, 1}, dtype = "float64", v = {NZ, 0.0, 1.0, 1.0, 1.0, 2.0, 3.0,
    NAN, NAN}}},
  q_keep_nodim = {{shape = {1, 1}, dtype = "float64", v = {NAN}}},
  q_keep_nodim_t = {{shape = {2, 1, 1}, dtype = "float64", v = {1.0, 4.0}}},
  q_dimneg = {{shape = {3}, dtype = "float64", v = {2.0, 3.0, 4.0}}},
  topk_k0 = {{shape = {0}, dtype = "int64", v = {}}, {shape = {0}, dtype = "int64", v = {}}},
  sort_0d = {{shape = {}, dtype = "float64", v = {2.5}}, {shape = {}, dtype = "int64", v = {0}}},
  unique_empty = {{shape = {0}, dtype = "float64", v = {}}, {shape = {0}, dtype = "int64", v = {}}},
  kth_0d = {{shape = {}, dtype = "float64", v = {2.5}}, {shape = {}, dtype = "int64", v = {0}}},
  mode_0d = {{shape = {}, dtype = "int64", v = {7}}, {shape = {}, dtype = "int64", v = {0}}},
  cummax_0d = {{shape = {}, dtype = "int64", v = {7}}, {shape = {}, dtype = "int64", v = {0}}},
  histc_empty = {{shape = {3}, dtype = "float64", v = {0.0, 0.0, 0.0}}},
  ss_empty_seq = {{shape = {5}, dtype = "int64", v = {0, 0, 0, 0, 0}}},
  bincount_ml_small = {{shape = {4}, dtype = "int64", v = {1, 2, 0, 3}}},
  nanmedian_int = {{shape = {3}, dtype = "int64", v = {2, 1, 4}}, {shape = {3}, dtype = "int64",
    v = {3, 1, 3}}},
  median_all_2d = {{shape = {}, dtype = "float64", v = {NAN}}},
  nanmedian_all_2d = {{shape = {}, dtype = "float64", v = {3.0}}},
  cummax_bool = {{shape = {2, 3}, dtype = "bool", v = {false, true, true, true, true, true}},
    {shape = {2, 3}, dtype = "int64", v = {0, 1, 1, 0, 0, 0}}},
  cummin_bool = {{shape = {2, 3}, dtype = "bool", v = {false, false, false, true, false, false}},
    {shape = {2, 3}, dtype = "int64", v = {0, 0, 2, 0, 1, 2}}},
  cummax_bool_0d = {{shape = {}, dtype = "bool", v = {true}}, {shape = {}, dtype = "int64",
    v = {0}}},
}

local function inputs()
    local t = {}
    t.xf = tide.tensor({3, 1, 0/0, 1, NZ, 0.0, 2, 0/0, 1}, {dtype = 'float64'})
    t.xz = tide.tensor({0.0, NZ, 0.0, NZ}, {dtype = 'float64'})
    t.xi = tide.tensor({4, 2, 2, 7, 4, 2, 9, 7}, {dtype = 'int64'})
    t.m = tide.tensor({{2, 5, 2, 1}, {0/0, 3, 3, 0}, {4, 4, 1, 4}}, {dtype = 'float64'})
    t.mi = tide.tensor({{3, 1, 3, 2}, {1, 1, 2, 2}, {5, 4, 5, 4}}, {dtype = 'int64'})
    t.e = tide.tensor({1, 2, 3, 4, 5, 6}, {dtype = 'float64'})
    t.q5 = tide.tensor({0, 10, 20, 30, 40}, {dtype = 'float64'})
    t.qn = tide.tensor({1, 0/0, 3, 2}, {dtype = 'float64'})
    t.ss = tide.tensor({1, 3, 3, 5, 7}, {dtype = 'float64'})
    t.sv = tide.tensor({0, 3, 6, 8, 5}, {dtype = 'float64'})
    t.us = tide.tensor({5, 1, 3, 3, 1}, {dtype = 'float64'})
    t.ui = tide.tensor({2, 2, 1, 3, 3, 3, 1, 2}, {dtype = 'int64'})
    t.u2 = tide.tensor({{1, 2}, {1, 2}, {0, 5}, {1, 2}}, {dtype = 'int64'})
    t.h = tide.tensor({0, 1, 1.5, 2, 3, 4, -1, 5}, {dtype = 'float64'})
    t.hw = tide.tensor({1, 2, 1, 1, 3, 1, 1, 1}, {dtype = 'float64'})
    t.be = tide.tensor({0, 2, 3, 5}, {dtype = 'float64'})
    t.bc = tide.tensor({1, 3, 3, 0, 1, 3}, {dtype = 'int64'})
    t.bw = tide.tensor({0.5, 1, 2, 4, 0.25, 1}, {dtype = 'float64'})
    t.c = tide.tensor({1, 3, 2, 3, 0/0, 5, 3}, {dtype = 'float64'})
    t.ci = tide.tensor({1, 3, 2, 3, 0, 5, 5}, {dtype = 'int64'})
    t.am = tide.tensor({1, 4, 4, 0/0, 4, 0/0}, {dtype = 'float64'})
    t.amt = tide.tensor({1, 4, 4, 0, 4, 2}, {dtype = 'float64'})
    return t
end

-- {name, call, indices: the results that are 1-based indices}
local CASES = {
    {"sort", function(X) return X.xf:sort() end, {2}},
    {"sort_stable", function(X) return X.xf:sort({stable = true}) end, {2}},
    {"sort_desc", function(X) return X.xf:sort({descending = true, stable = true}) end, {2}},
    {"sort_desc_pos", function(X) return X.xf:sort(1, true) end, {2}},
    {"sort_zero", function(X) return X.xz:sort({stable = true}) end, {2}},
    {"sort_int", function(X) return X.xi:sort({stable = true}) end, {2}},
    {"sort_int_desc", function(X) return X.xi:sort({descending = true, stable = true}) end, {2}},
    {"sort_dim0", function(X) return X.m:sort({dim = 1, stable = true}) end, {2}},
    {"sort_dim1", function(X) return X.m:sort({dim = 2, stable = true}) end, {2}},
    {"sort_mi_desc", function(X) return X.mi:sort({dim = 2, descending = true,
        stable = true}) end, {2}},
    {"tsort", function(X) return tide.sort(X.xf, {stable = true, descending = true}) end, {2}},
    {"argsort", function(X) return X.xf:argsort() end, {1}},
    {"argsort_desc", function(X) return X.xi:argsort({descending = true}) end, {1}},
    {"argsort_dim0", function(X) return X.m:argsort({dim = 1}) end, {1}},
    {"targsort", function(X) return tide.argsort(X.mi, {dim = 2, descending = true}) end, {1}},
    {"msort", function(X) return X.m:msort() end, {}},
    {"tmsort", function(X) return tide.msort(X.mi) end, {}},
    {"topk", function(X) return X.xi:topk(3) end, {2}},
    {"topk_small", function(X) return X.xi:topk(3, {largest = false}) end, {2}},
    {"topk_nan", function(X) return X.xf:topk(3) end, {2}},
    {"topk_nan_small", function(X) return X.xf:topk(4, {largest = false}) end, {2}},
    {"topk_dim0", function(X) return X.m:topk(2, {dim = 1}) end, {2}},
    {"topk_mi", function(X) return X.mi:topk(2, {dim = 2}) end, {2}},
    {"topk_pos", function(X) return X.mi:topk(2, 2, false, true) end, {2}},
    {"ttopk", function(X) return tide.topk(X.xi, 2, {largest = false}) end, {2}},
    {"kth", function(X) return X.xi:kthvalue(3) end, {2}},
    {"kth_nan", function(X) return X.xf:kthvalue(8) end, {2}},
    {"kth_f", function(X) return X.xf:kthvalue(2) end, {2}},
    {"kth_dim", function(X) return X.mi:kthvalue(2, {dim = 2, keepdim = true}) end, {2}},
    {"kth_dim0", function(X) return X.m:kthvalue(2, 1) end, {2}},
    {"median_all", function(X) return X.xi:median() end, {}},
    {"median_even", function(X) return X.e:median() end, {}},
    {"median_nan", function(X) return X.xf:median() end, {}},
    {"median_dim", function(X) return X.mi:median({dim = 2}) end, {2}},
    {"median_dim_keep", function(X) return X.m:median(2, true) end, {2}},
    {"median_dim0", function(X) return X.m:median({dim = 1}) end, {2}},
    {"median_int_dup", function(X) return X.xi:median(1) end, {2}},
    {"nanmedian_all", function(X) return X.xf:nanmedian() end, {}},
    {"nanmedian_dim", function(X) return X.m:nanmedian({dim = 2}) end, {2}},
    {"nanmedian_dim0", function(X) return X.m:nanmedian(1) end, {2}},
    {"tnanmedian", function(X) return tide.nanmedian(X.qn) end, {}},
    {"mode", function(X) return X.xi:mode() end, {2}},
    {"mode_dim", function(X) return X.mi:mode({dim = 2}) end, {2}},
    {"mode_dim0", function(X) return X.mi:mode(1, true) end, {2}},
    {"mode_f", function(X) return X.us:mode() end, {2}},
    {"tmode", function(X) return tide.mode(X.ui) end, {2}},
    {"q_lin", function(X) return X.q5:quantile(0.3) end, {}},
    {"q_lower", function(X) return X.q5:quantile(0.3, {interpolation = 'lower'}) end, {}},
    {"q_higher", function(X) return X.q5:quantile(0.3, {interpolation = 'higher'}) end, {}},
    {"q_mid", function(X) return X.q5:quantile(0.3, {interpolation = 'midpoint'}) end, {}},
    {"q_near", function(X) return X.q5:quantile(0.3, {interpolation = 'nearest'}) end, {}},
    {"q_near_half", function(X) return X.q5:quantile(tide.tensor({0.125, 0.375, 0.625, 0.875},
        {dtype = 'float64'}), {interpolation = 'nearest'}) end, {}},
    {"q_near_e", function(X) return X.e:quantile(tide.tensor({0.1, 0.3, 0.5, 0.7, 0.9},
        {dtype = 'float64'}), {interpolation = 'nearest'}) end, {}},
    {"q_tensor", function(X) return X.q5:quantile(tide.tensor({0.0, 0.5, 1.0},
        {dtype = 'float64'})) end, {}},
    {"q_dim", function(X) return X.m:quantile(0.5, {dim = 2}) end, {}},
    {"q_dim_keep", function(X) return X.mi:double():quantile(tide.tensor({0.25, 0.75},
        {dtype = 'float64'}), {dim = 2, keepdim = true}) end, {}},
    {"q_dim0_pos", function(X) return X.m:quantile(0.25, 1, true) end, {}},
    {"q_nan", function(X) return X.qn:quantile(0.5) end, {}},
    {"nq", function(X) return X.qn:nanquantile(0.5) end, {}},
    {"nq_lower", function(X) return X.qn:nanquantile(0.25, {interpolation = 'lower'}) end, {}},
    {"nq_dim", function(X) return X.m:nanquantile(0.5, {dim = 2}) end, {}},
    {"tquantile", function(X) return tide.quantile(X.e, 0.4, {interpolation = 'midpoint'}) end, {}},
    {"unique", function(X) return X.us:unique() end, {}},
    {"unique_all", function(X) return X.ui:unique({return_inverse = true,
        return_counts = true}) end, {2}},
    {"unique_nan", function(X) return X.xf:unique() end, {}},
    {"unique_dim", function(X) return X.u2:unique({dim = 1, return_inverse = true,
        return_counts = true}) end, {2}},
    {"unique_dim1", function(X) return X.mi:unique({dim = 2}) end, {}},
    {"tunique", function(X) return tide.unique(X.ui, {sorted = true, return_counts = true}) end,
        {}},
    {"uc", function(X) return X.ui:unique_consecutive() end, {}},
    {"uc_all", function(X) return X.ui:unique_consecutive({return_inverse = true,
        return_counts = true}) end, {2}},
    {"uc_dim", function(X) return X.u2:unique_consecutive({dim = 1, return_inverse = true,
        return_counts = true}) end, {2}},
    {"tuc", function(X) return tide.unique_consecutive(X.us, {return_counts = true}) end, {}},
    {"ss", function(X) return tide.searchsorted(X.ss, X.sv) end, {1}},
    {"ss_right", function(X) return tide.searchsorted(X.ss, X.sv, {right = true}) end, {1}},
    {"ss_side", function(X) return tide.searchsorted(X.ss, X.sv, {side = 'right'}) end, {1}},
    {"ss_side_left", function(X) return tide.searchsorted(X.ss, X.sv, {side = 'left'}) end, {1}},
    {"ss_i32", function(X) return tide.searchsorted(X.ss, X.sv, {out_int32 = true}) end, {1}},
    {"ss_scalar", function(X) return tide.searchsorted(X.ss, 3.0) end, {1}},
    {"ss_scalar_r", function(X) return tide.searchsorted(X.ss, 3, {right = true}) end, {1}},
    {"ss_sorter", function(X) return tide.searchsorted(X.us, tide.tensor({0, 3, 4, 6},
        {dtype = 'float64'}), {sorter = X.us:argsort()}) end, {1}},
    {"ss_2d", function(X) return tide.searchsorted(tide.tensor({{1, 2, 3}, {2, 4, 6}},
        {dtype = 'float64'}), tide.tensor({{2, 5}, {2, 5}}, {dtype = 'float64'})) end, {1}},
    {"ss_int", function(X) return tide.searchsorted(tide.tensor({1, 3, 5}, {dtype = 'int64'}),
        tide.tensor({3, 4, 6}, {dtype = 'int64'})) end, {1}},
    {"bucketize", function(X) return tide.bucketize(X.sv, X.ss) end, {1}},
    {"bucketize_r", function(X) return tide.bucketize(X.sv, X.ss, {right = true}) end, {1}},
    {"bucketize_i32", function(X) return tide.bucketize(X.sv, X.ss, {out_int32 = true}) end, {1}},
    {"histc", function(X) return tide.histc(X.h, {bins = 4, min = 0, max = 4}) end, {}},
    {"histc_pos", function(X) return X.h:histc(5, -1, 5) end, {}},
    {"histc_range", function(X) return tide.histc(X.h, {bins = 3}) end, {}},
    {"histc_default", function(X) return tide.histc(X.h) end, {}},
    {"histc_eq", function(X) return tide.histc(tide.tensor({2, 2, 2}, {dtype = 'float64'}),
        {bins = 4}) end, {}},
    {"histogram", function(X) return tide.histogram(X.h, 3) end, {}},
    {"histogram_range", function(X) return tide.histogram(X.h, 4, {range = {0, 4}}) end, {}},
    {"histogram_edges", function(X) return tide.histogram(X.h, X.be) end, {}},
    {"histogram_w", function(X) return tide.histogram(X.h, X.be, {weight = X.hw}) end, {}},
    {"histogram_density", function(X) return tide.histogram(X.h, X.be, {density = true}) end, {}},
    {"histogram_wd", function(X) return tide.histogram(X.h, 3, {weight = X.hw,
        density = true}) end, {}},
    {"histogram_m", function(X) return X.h:histogram({bins = 4, density = true}) end, {}},
    {"bincount", function(X) return tide.bincount(X.bc + 1) end, {}},
    {"bincount_w", function(X) return tide.bincount(X.bc + 1, {weights = X.bw}) end, {}},
    {"bincount_ml", function(X) return tide.bincount(X.bc + 1, {minlength = 6}) end, {}},
    {"bincount_pos", function(X) return (X.bc + 1):bincount(X.bw, 6) end, {}},
    {"bincount_wf", function(X) return tide.bincount(X.bc + 1, {weights = X.bw:float()}) end, {}},
    {"bincount_empty", function(X) return tide.bincount(tide.tensor({}, {dtype = 'int64'})) end,
        {}},
    {"cummax", function(X) return X.c:cummax(1) end, {2}},
    {"cummin", function(X) return X.c:cummin(1) end, {2}},
    {"cummax_i", function(X) return X.ci:cummax({dim = 1}) end, {2}},
    {"cummin_i", function(X) return X.ci:cummin(1) end, {2}},
    {"cummax_m", function(X) return X.mi:cummax(2) end, {2}},
    {"tcummin", function(X) return tide.cummin(X.m, 1) end, {2}},
    {"argmax", function(X) return X.amt:argmax() end, {1}},
    {"argmin", function(X) return X.amt:argmin() end, {1}},
    {"argmax_nan", function(X) return X.am:argmax() end, {1}},
    {"argmin_nan", function(X) return X.am:argmin() end, {1}},
    {"argmax_dim", function(X) return X.mi:argmax({dim = 2}) end, {1}},
    {"argmin_dim_keep", function(X) return X.mi:argmin(2, true) end, {1}},
    {"argmax_m", function(X) return X.m:argmax(1) end, {1}},
    {"argmin_m", function(X) return X.m:argmin({dim = 2}) end, {1}},
    {"max_dim", function(X) return X.m:max({dim = 2}) end, {2}},
    {"min_dim", function(X) return X.m:min(2, true) end, {2}},
    {"max_dim0", function(X) return X.m:max(1) end, {2}},
    {"max_i", function(X) return X.mi:max({dim = 2}) end, {2}},
    {"min_i", function(X) return X.mi:min(1) end, {2}},
    {"max_all", function(X) return X.m:max() end, {}},
    {"min_all_i", function(X) return X.mi:min() end, {}},
    {"max_nan_dup", function(X) return X.am:max(1) end, {2}},
    {"min_nan_dup", function(X) return X.am:min(1) end, {2}},
    {"argsort_stable", function(X) return tide.argsort(X.xf, {stable = true,
        descending = true}) end, {1}},
    {"argsort_stable_m", function(X) return X.xi:argsort({stable = true}) end, {1}},
    {"topk_unsorted_vals", function(X) return (X.xi:topk(3, {sorted = true})) end, {}},
    {"kth_nan_last", function(X) return X.qn:kthvalue(4) end, {2}},
    {"cummax_nan_then", function(X) return tide.tensor({1, 0/0, 5, 0/0, 2},
        {dtype = 'float64'}):cummax(1) end, {2}},
    {"cummin_nan_then", function(X) return tide.tensor({1, 0/0, 0, 0/0, 2},
        {dtype = 'float64'}):cummin(1) end, {2}},
    {"q_0d", function(X) return X.q5:quantile(tide.tensor(0.3, {dtype = 'float64'})) end, {}},
    {"nq_allnan", function(X) return tide.tensor({{0/0, 0/0}, {1, 2}},
        {dtype = 'float64'}):nanquantile(0.5, {dim = 2}) end, {}},
    {"q_float32", function(X) return tide.tensor({0, 1, 3},
        {dtype = 'float32'}):quantile(0.5) end, {}},
    {"nanmedian_allnan", function(X) return tide.tensor({0/0, 0/0},
        {dtype = 'float64'}):nanmedian(1) end, {2}},
    {"median_nan_dim", function(X) return tide.tensor({1, 0/0, 2, 0/0},
        {dtype = 'float64'}):median(1) end, {2}},
    {"mode_nan", function(X) return tide.tensor({1, 2, 2, 1}, {dtype = 'float64'}):mode() end, {2}},
    {"ss_sorter_right", function(X) return tide.searchsorted(X.us, tide.tensor({0, 3, 4, 6},
        {dtype = 'float64'}), {side = 'right', sorter = X.us:argsort()}) end, {1}},
    {"ss_scalar_i32", function(X) return tide.searchsorted(X.ss, 4.0, {out_int32 = true}) end, {1}},
    {"bucketize_scalar", function(X) return tide.bucketize(3.0, X.ss) end, {1}},
    {"bucketize_int", function(X) return tide.bucketize(X.bc, tide.tensor({1, 3},
        {dtype = 'int64'}), {right = true}) end, {1}},
    {"histc_f32", function(X) return tide.histc(X.h:float(), {bins = 4, min = 0, max = 4}) end, {}},
    {"histc_min_only", function(X) return tide.histc(X.h, {bins = 2, min = 1, max = 1}) end, {}},
    {"histogram_f32", function(X) return tide.histogram(X.h:float(), 2) end, {}},
    {"unique_consec_f", function(X) return X.xf:unique_consecutive({return_counts = true}) end, {}},
    {"unique_inv_2d", function(X) return X.mi:unique({return_inverse = true}) end, {2}},
    {"max_int_dim_keep", function(X) return X.xi:max(1, true) end, {2}},
    {"argmax_int_ties", function(X) return X.xi:argmax() end, {1}},
    {"argmin_int_ties", function(X) return X.xi:argmin() end, {1}},
    {"aminmax", function(X) return tide.aminmax(X.m, {dim = 2}) end, {}},
    {"median_0d", function(X) return tide.tensor(3.5, {dtype = 'float64'}):median(1) end, {2}},
    {"msort_desc_check", function(X) return tide.msort(X.xf:view(9, 1)) end, {}},
    {"q_keep_nodim", function(X) return X.m:quantile(0.3, {keepdim = true}) end, {}},
    {"q_keep_nodim_t", function(X) return X.m:nanquantile(tide.tensor({0.2, 0.9},
        {dtype = 'float64'}), {keepdim = true}) end, {}},
    {"q_dimneg", function(X) return X.m:nanquantile(0.5, {dim = -1,
        interpolation = 'higher'}) end, {}},
    {"topk_k0", function(X) return X.xi:topk(0) end, {2}},
    {"sort_0d", function(X) return tide.tensor(2.5, {dtype = 'float64'}):sort() end, {2}},
    {"unique_empty", function(X) return tide.tensor({},
        {dtype = 'float64'}):unique({return_counts = true}) end, {}},
    {"kth_0d", function(X) return tide.tensor(2.5, {dtype = 'float64'}):kthvalue(1) end, {2}},
    {"mode_0d", function(X) return tide.tensor(7, {dtype = 'int64'}):mode() end, {2}},
    {"cummax_0d", function(X) return tide.tensor(7, {dtype = 'int64'}):cummax(1) end, {2}},
    {"histc_empty", function(X) return tide.histc(tide.tensor({}, {dtype = 'float64'}),
        {bins = 3}) end, {}},
    {"ss_empty_seq", function(X) return tide.searchsorted(tide.tensor({}, {dtype = 'float64'}),
        X.sv) end, {1}},
    {"bincount_ml_small", function(X) return tide.bincount(X.bc + 1, {minlength = 2}) end, {}},
    {"nanmedian_int", function(X) return X.mi:nanmedian(2) end, {2}},
    {"median_all_2d", function(X) return X.m:median() end, {}},
    {"nanmedian_all_2d", function(X) return X.m:nanmedian() end, {}},
    {"cummax_bool", function(X) return tide.tensor({{false, true, false}, {true, false,
        false}}):cummax(2) end, {2}},
    {"cummin_bool", function(X) return tide.cummin(tide.tensor({{false, true, false}, {true,
        false, false}}), 2) end, {2}},
    {"cummax_bool_0d", function(X) return tide.tensor(true):cummax(1) end, {2}},
}

-- results tide leaves different, with the reason (shape and dtype still asserted)
local PENDING = {
    topk_small = {{2},
        "topk(largest = false): among equal values PyTorch 1.13's CPU topk returns them in" ..
        " std::nth_element's order ({2, 5, 1}); tide's topk (C, src/) takes them in input" ..
        " order ({1, 2, 5})"},
    topk_nan_small = {{1, 2},
        "topk(largest = false): PyTorch 1.13's CPU topk picks the last of three equal 1.0s and" ..
        " puts 0.0 before -0.0 (std::nth_element's order); tide's topk (C, src/) keeps input" ..
        " order"},
    topk_pos = {{2},
        "topk(largest = false) over a dim: the order of equal values' indices is" ..
        " std::nth_element's in PyTorch 1.13 CPU, input order in tide's topk (C, src/)"},
    ttopk = {{2},
        "tide.topk(largest = false): PyTorch 1.13 CPU returns equal values' indices in" ..
        " std::nth_element's order ({2, 5}), tide's topk (C, src/) the first ones ({1, 2})"},
    kth_dim = {{2},
        "kthvalue's index among equal values: PyTorch 1.13 CPU's is where its quickselect" ..
        " lands (0 of {1, 1, 2, 2}), tide's the stable sort's k-th (2nd); PyTorch documents no" ..
        " tie order"},
    unique_nan = {{1},
        "unique with NaN: PyTorch 1.13 CPU's sort comparator breaks on NaN ({-0, 2, nan, nan," ..
        " 1, 3}); tide sorts NaN last (docs/API.md)"},
}

local function same(a, b)
    if type(a) == "boolean" or type(b) == "boolean" then
        return a == b
    end
    if type(a) ~= "number" then
        return false
    end
    if a ~= a then
        return b ~= b
    end
    if a == 0 and b == 0 then -- -0.0 and 0.0 told apart
        return 1 / a == 1 / b
    end
    return math.abs(a - b) <= 1e-9 * math.max(1, math.abs(a))
end

local function pack(...)
    return { n = select("#", ...), ... }
end

local function values_str(v)
    local s = {}
    for j = 1, #v do
        s[j] = tostring(v[j])
    end
    return "{" .. table.concat(s, ", ") .. "}"
end

-- asserts the results r against PyTorch's want (index results shifted by one); skip: the
-- results whose values are pending (their shape and dtype still asserted)
local function check(name, r, want, shift, skip)
    assert.are.equal(#want, r.n, name .. ": number of results")
    for k, w in ipairs(want) do
        local g = r[k]
        if w.num ~= nil then
            assert.is_true(same(g, w.num), ("%s: result %d is %s, PyTorch's %s")
                :format(name, k, tostring(g), tostring(w.num)))
        else
            local size, shape = g:size(), {}
            for j = 1, #size do
                shape[j] = size[j]
            end
            assert.are.same(w.shape, shape, name .. ": shape of result " .. k)
            assert.are.equal(w.dtype, g.dtype, name .. ": dtype of result " .. k)
            if not skip[k] then
                local v = g:reshape(-1):totable()
                local ok = #v == #w.v
                local exp = {}
                for j = 1, #w.v do
                    exp[j] = shift[k] and w.v[j] + 1 or w.v[j]
                    ok = ok and same(v[j], exp[j])
                end
                assert.is_true(ok, ("%s: result %d is %s, PyTorch's %s"):format(name, k,
                    values_str(v), values_str(exp)))
            end
        end
    end
end

describe("sorting and order statistics against PyTorch 1.13", function()
    it("has every PyTorch name as tide.X and each Tensor method PyTorch has", function()
        local both = { "sort", "argsort", "msort", "topk", "kthvalue", "median", "nanmedian",
            "mode", "quantile", "nanquantile", "unique", "unique_consecutive", "histc",
            "histogram", "bincount", "cummax", "cummin", "argmax", "argmin", "max", "min",
            "aminmax", "amax", "amin" }
        local x = tide.tensor({ 1.0 })
        for _, n in ipairs(both) do
            assert.are.equal("function", type(tide[n]), "tide." .. n)
            assert.are.equal("function", type(x[n]), "Tensor." .. n)
        end
        for _, n in ipairs({ "searchsorted", "bucketize", "histogramdd", "isin" }) do
            assert.are.equal("function", type(tide[n]), "tide." .. n)
        end
    end)

    local X = inputs()
    for _, c in ipairs(CASES) do
        local name, call, idx = c[1], c[2], c[3]
        local pend = PENDING[name]
        it(name, function()
            local shift, skip = {}, {}
            for _, k in ipairs(idx) do
                shift[k] = true
            end
            for _, k in ipairs(pend and pend[1] or {}) do
                skip[k] = true
            end
            check(name, pack(call(X)), P[name], shift, skip)
        end)
        if pend then
            pending(name .. ": " .. pend[2])
        end
    end

    it("raises a tide: error wherever PyTorch 1.13 raises", function()
        local calls = {
            function() return tide.searchsorted(X.ss, X.sv, { right = true, side = "left" }) end,
            function() return tide.searchsorted(X.ss, X.sv, { side = "up" }) end,
            function() return X.q5:quantile(1.5) end,
            function() return X.q5:quantile(0.5, { interpolation = "cubic" }) end,
            function() return X.xi:quantile(0.5) end,
            function() return tide.histc(X.h, { bins = 0 }) end,
            function() return tide.histc(X.h, { bins = 3, min = 3, max = 1 }) end,
            function() return tide.histc(X.xi, { bins = 3 }) end,
            function() return tide.histogram(X.xi, 3) end,
            function() return tide.bincount(X.mi) end,
            function() return tide.bincount(X.h) end,
            function() return tide.bincount(X.bc + 1, { weights = X.h }) end,
            function() return X.xi:kthvalue(9) end,
            function() return X.xi:topk(9) end,
            function() return tide.tensor({}, { dtype = "float64" }):mode() end,
            function() return tide.bucketize(X.sv, X.m) end,
            function() return X.mi:unique({ dim = 3 }) end,
            function() return X.mi:cummax(3) end,
        }
        for k, f in ipairs(calls) do
            local ok, err = pcall(f)
            assert.is_false(ok, "call " .. k .. " raised nothing")
            assert.is_truthy(tostring(err):find("tide: ", 1, true), tostring(err))
        end
    end)
end)
