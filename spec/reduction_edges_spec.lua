-- reduction_edges_spec.lua — the reductions at PyTorch 1.13's special values: NaN (max / min
-- propagate it and give its index, argmax of a NaN row), inf and -inf (inf - inf in sum / mean /
-- var), a row of -inf (logsumexp), -0.0, empty dims (sum 0, prod 1, mean NaN, max raises), dims
-- of size 1, keepdim, several dims and none ({}), integer dtypes (sum of int32 is int64, int64
-- wraps); and their accuracy (float32 sums of 10^6, float16 / bfloat16 sums, var of values with a
-- large mean, cumsum). Every expected value is PyTorch 1.13's output (indices shifted to 1-based;
-- where PyTorch raises, tide raises a tide: error).
local tide = require("tide")

local NAN, INF, NZ = 0 / 0, math.huge, -1 / math.huge -- NZ: -0.0 (a -0.0 literal may fold to 0)

-- PyTorch 1.13's results: {dtype =, shape =, v = flat values}, a list of them for (values,
-- indices), or {err =} (PyTorch's message) where it raises
local E = {
  sum_nan = {dtype = "float32", shape={2}, v={NAN, 15.0}},
  mean_nan = {dtype = "float32", shape={2}, v={NAN, 5.0}},
  prod_nan = {dtype = "float32", shape={2}, v={NAN, 120.0}},
  std_nan = {dtype = "float32", shape={2}, v={NAN, 1.0}},
  var_nan = {dtype = "float32", shape={2}, v={NAN, 1.0}},
  amax_nan = {dtype = "float32", shape={2}, v={NAN, 6.0}},
  amin_nan = {dtype = "float32", shape={2}, v={NAN, 4.0}},
  max_nan = {{dtype = "float32", shape={2}, v={NAN, 2.0}}, {dtype = "int64", shape={2}, v={1, 3}}},
  min_nan = {{dtype = "float32", shape={2}, v={NAN, -1.0}}, {dtype = "int64", shape={2}, v={1, 2}}},
  max_all_nan = {dtype = "float32", shape={}, v={NAN}},
  min_all_nan = {dtype = "float32", shape={}, v={NAN}},
  argmax_nan = {dtype = "int64", shape={2}, v={1, 3}},
  argmin_nan = {dtype = "int64", shape={2}, v={1, 2}},
  argmax_all_nan = {dtype = "int64", shape={}, v={1}},
  cumsum_nan = {dtype = "float32", shape={2, 4}, v={2.0, NAN, NAN, NAN, 1.0, 1.0, 0.0, 2.0}},
  cumprod_nan = {dtype = "float32", shape={2, 4}, v={2.0, NAN, NAN, NAN, 1.0, 0.0, NZ, NZ}},
  lse_nan = {dtype = "float32", shape={2}, v={NAN, 2.4401895999908447}},
  norm_nan = {dtype = "float32", shape={2}, v={NAN, 2.4494898319244385}},
  nansum = {dtype = "float32", shape={2}, v={9.0, 2.0}},
  nanmean = {dtype = "float32", shape={2}, v={4.5, 0.5}},
  nanmean_allnan = {dtype = "float32", shape={}, v={NAN}},
  all_nan = {dtype = "bool", shape={2}, v={true, false}},
  any_nan = {dtype = "bool", shape={}, v={true}},
  cnz_nan = {dtype = "int64", shape={2}, v={4, 3}},
  sum_inf = {dtype = "float32", shape={}, v={NAN}},
  mean_inf = {dtype = "float32", shape={}, v={NAN}},
  var_inf = {dtype = "float32", shape={}, v={NAN}},
  var_pinf = {dtype = "float32", shape={}, v={NAN}},
  std_pinf = {dtype = "float32", shape={}, v={NAN}},
  sum_pinf = {dtype = "float32", shape={}, v={INF}},
  prod_inf = {dtype = "float32", shape={}, v={-INF}},
  max_inf = {{dtype = "float32", shape={}, v={INF}}, {dtype = "int64", shape={}, v={0}}},
  min_inf = {{dtype = "float32", shape={}, v={-INF}}, {dtype = "int64", shape={}, v={1}}},
  argmax_inf = {dtype = "int64", shape={}, v={0}},
  cumsum_inf = {dtype = "float32", shape={3}, v={INF, NAN, NAN}},
  norm_inf = {dtype = "float32", shape={}, v={INF}},
  norm_pinf_p = {dtype = "float32", shape={}, v={INF}},
  lse_inf = {dtype = "float32", shape={}, v={INF}},
  lse_pinf = {dtype = "float32", shape={}, v={INF}},
  lse_ninf = {dtype = "float32", shape={2}, v={-INF, 0.0}},
  lse_ninf_all = {dtype = "float32", shape={}, v={0.0}},
  max_z = {dtype = "float32", shape={}, v={0.0}},
  max_z2 = {dtype = "float32", shape={}, v={NZ}},
  min_z = {dtype = "float32", shape={}, v={0.0}},
  min_z2 = {dtype = "float32", shape={}, v={NZ}},
  amax_z = {dtype = "float32", shape={}, v={NZ}},
  amax_z2 = {dtype = "float32", shape={}, v={0.0}},
  maxd_z = {{dtype = "float32", shape={}, v={NZ}}, {dtype = "int64", shape={}, v={0}}},
  maxd_z2 = {{dtype = "float32", shape={}, v={0.0}}, {dtype = "int64", shape={}, v={0}}},
  argmax_z = {dtype = "int64", shape={}, v={0}},
  sum_nz = {dtype = "float32", shape={}, v={0.0}},
  sumd_nz = {dtype = "float32", shape={}, v={0.0}},
  mean_nz = {dtype = "float32", shape={}, v={0.0}},
  prod_nz = {dtype = "float32", shape={}, v={NZ}},
  cumsum_nz = {dtype = "float32", shape={3}, v={0.0, 0.0, 0.0}},
  nansum_nz = {dtype = "float32", shape={}, v={0.0}},
  sum_empty = {dtype = "float32", shape={3}, v={0.0, 0.0, 0.0}},
  sum_empty_all = {dtype = "float32", shape={}, v={0.0}},
  prod_empty = {dtype = "float32", shape={3}, v={1.0, 1.0, 1.0}},
  mean_empty = {dtype = "float32", shape={3}, v={NAN, NAN, NAN}},
  mean_empty_all = {dtype = "float32", shape={}, v={NAN}},
  var_empty = {dtype = "float32", shape={3}, v={NAN, NAN, NAN}},
  std_empty = {dtype = "float32", shape={3}, v={NAN, NAN, NAN}},
  max_empty = {err = "max(): Expected reduction dim 0 to have non-zero size."},
  max_empty_all = {err = "max(): Expected reduction dim to be specified for input.nume"},
  argmax_empty = {err = "argmax(): Expected reduction dim 0 to have non-zero size."},
  amax_empty = {err = "amax(): Expected reduction dim 0 to have non-zero size."},
  amax_empty_other = {dtype = "float32", shape={0}, v={}},
  max_empty_other = {{dtype = "float32", shape={0}, v={}}, {dtype = "int64", shape={0}, v={}}},
  cumsum_empty = {dtype = "float32", shape={0, 3}, v={}},
  lse_empty = {dtype = "float32", shape={3}, v={-INF, -INF, -INF}},
  norm_empty = {dtype = "float32", shape={3}, v={0.0, 0.0, 0.0}},
  nansum_empty = {dtype = "float32", shape={3}, v={0.0, 0.0, 0.0}},
  nanmean_empty = {dtype = "float32", shape={3}, v={NAN, NAN, NAN}},
  all_empty = {dtype = "bool", shape={}, v={true}},
  any_empty = {dtype = "bool", shape={}, v={false}},
  all_empty_d = {dtype = "bool", shape={3}, v={true, true, true}},
  cnz_empty = {dtype = "int64", shape={3}, v={0, 0, 0}},
  sum_s1 = {dtype = "float32", shape={3}, v={1.0, 2.0, 3.0}},
  var_s1 = {dtype = "float32", shape={3}, v={NAN, NAN, NAN}},
  std_s1 = {dtype = "float32", shape={3}, v={NAN, NAN, NAN}},
  var_s1_biased = {dtype = "float32", shape={3}, v={0.0, 0.0, 0.0}},
  max_s1 = {{dtype = "float32", shape={3}, v={1.0, 2.0, 3.0}}, {dtype = "int64", shape={3}, v={0,
        0, 0}}},
  argmax_s1 = {dtype = "int64", shape={3}, v={0, 0, 0}},
  sum_keep = {dtype = "float32", shape={2, 1, 2}, v={4.0, 6.0, 12.0, 14.0}},
  max_keep = {{dtype = "float32", shape={2, 2, 1}, v={2.0, 4.0, 6.0, 8.0}}, {dtype = "int64",
        shape={2, 2, 1}, v={1, 1, 1, 1}}},
  argmax_keep = {dtype = "int64", shape={2, 1, 2}, v={1, 1, 1, 1}},
  argmax_all_keep = {dtype = "int64", shape={1, 1, 1}, v={7}},
  var_keep = {dtype = "float32", shape={1, 2, 2}, v={8.0, 8.0, 8.0, 8.0}},
  lse_keep = {dtype = "float32", shape={2, 2, 1}, v={2.3132617473602295, 4.31326150894165,
        6.31326150894165, 8.313261985778809}},
  all_keep = {dtype = "bool", shape={2, 1, 2}, v={true, true, true, true}},
  sum_dims = {dtype = "float32", shape={2}, v={14.0, 22.0}},
  mean_dims = {dtype = "float32", shape={1, 2, 1}, v={3.5, 5.5}},
  var_dims = {dtype = "float32", shape={2}, v={5.666666507720947, 5.666666507720947}},
  std_dims = {dtype = "float32", shape={2}, v={1.29099440574646, 1.29099440574646}},
  amax_dims = {dtype = "float32", shape={2}, v={7.0, 8.0}},
  lse_dims = {dtype = "float32", shape={2}, v={4.440189838409424, 8.440189361572266}},
  norm_dims = {dtype = "float32", shape={2}, v={8.124038696289062, 11.747340202331543}},
  nansum_dims = {dtype = "float32", shape={2}, v={16.0, 20.0}},
  cnz_dims = {dtype = "int64", shape={2}, v={4, 4}},
  sum_none = {dtype = "float32", shape={}, v={36.0}},
  mean_none = {dtype = "float32", shape={}, v={4.5}},
  amax_none = {dtype = "float32", shape={}, v={8.0}},
  var_none = {dtype = "float32", shape={}, v={6.0}},
  nansum_none = {dtype = "float32", shape={}, v={36.0}},
  cnz_none = {dtype = "int64", shape={}, v={8}},
  norm_none = {dtype = "float32", shape={}, v={14.282856941223145}},
  sum_i32 = {dtype = "int64", shape={}, v={2147483650}},
  sumd_i32 = {dtype = "int64", shape={}, v={2147483650}},
  sum_i64_wrap = {dtype = "int64", shape={}, v={-9223372036854775808}},
  sum_u8 = {dtype = "int64", shape={}, v={300}},
  sum_bool = {dtype = "int64", shape={}, v={2}},
  prod_i32 = {dtype = "int64", shape={}, v={4294967294}},
  cumsum_i32 = {dtype = "int64", shape={3}, v={2147483647, 2147483648, 2147483650}},
  cumprod_i32 = {dtype = "int64", shape={3}, v={2147483647, 2147483647, 4294967294}},
  mean_i32 = {err = "mean(): could not infer output dtype. Input dtype must be ei"},
  max_i32 = {dtype = "int32", shape={}, v={2147483647}},
  max_i32d = {{dtype = "int32", shape={}, v={2147483647}}, {dtype = "int64", shape={}, v={0}}},
  argmax_i32 = {dtype = "int64", shape={}, v={0}},
  amax_i32 = {dtype = "int32", shape={}, v={2147483647}},
  nansum_i32 = {dtype = "int64", shape={}, v={2147483650}},
  cnz_i32 = {dtype = "int64", shape={}, v={3}},
  all_i32 = {dtype = "bool", shape={}, v={true}},
  any_u8 = {dtype = "uint8", shape={}, v={1}},
  all_bool = {dtype = "bool", shape={}, v={false}},
  max_bool = {dtype = "bool", shape={}, v={true}},
  sum_u8_d = {dtype = "int64", shape={}, v={300}},
  prod_bool = {dtype = "int64", shape={}, v={0}},
  var_i32 = {err = "std and var only support floating point and complex dtypes"},
  lse_i32 = {dtype = "float32", shape={}, v={2147483648.0}},
  norm_i32 = {err = "norm(): input dtype should be either floating point or compl"},
  nanmean_i32 = {err = "nanmean(): expected input to have floating point dtype but g"},
}

local function f32(v) return tide.tensor(v, { dtype = "float32" }) end
local nan, inf = NAN, INF
local A = f32({ { 1, nan, 3 }, { 4, 5, 6 } })
local B = f32({ { 2, nan, 7, nan }, { 1, 0, -1, 2 } })
local I = f32({ inf, -inf, 1 })
local PI = f32({ inf, inf, 1 })
local NI = f32({ { -inf, -inf }, { -inf, 0 } })
local Z = f32({ NZ, 0.0 })
local Z2 = f32({ 0.0, NZ })
local NZt = f32({ NZ, NZ, NZ })
local Em = tide.zeros(0, 3)
local S1 = f32({ { 1, 2, 3 } })
local X = f32({ { { 1, 2 }, { 3, 4 } }, { { 5, 6 }, { 7, 8 } } })
local II = tide.tensor({ 2147483647, 1, 2 }, { dtype = "int32" })
local U8 = tide.tensor({ 200, 100 }, { dtype = "uint8" })
local BO = tide.tensor({ true, true, false })
local C = {
 sum_nan = function() return A:sum(2) end, mean_nan = function() return A:mean(2) end,
 prod_nan = function() return A:prod(2) end, std_nan = function() return A:std(2) end,
 var_nan = function() return A:var(2) end, amax_nan = function() return A:amax(2) end,
 amin_nan = function() return A:amin(2) end, max_nan = function() return {B:max(2)} end,
 min_nan = function() return {B:min(2)} end, max_all_nan = function() return B:max() end,
 min_all_nan = function() return B:min() end, argmax_nan = function() return B:argmax(2) end,
 argmin_nan = function() return B:argmin(2) end, argmax_all_nan = function() return B:argmax() end,
 cumsum_nan = function() return B:cumsum(2) end, cumprod_nan = function() return B:cumprod(2) end,
 lse_nan = function() return B:logsumexp(2) end, norm_nan = function() return B:norm(2, 2) end,
 nansum = function() return B:nansum(2) end, nanmean = function() return B:nanmean(2) end,
 nanmean_allnan = function() return f32({nan, nan}):nanmean() end,
 all_nan = function() return B:all(2) end, any_nan = function() return f32({nan, 0}):any() end,
 cnz_nan = function() return B:count_nonzero(2) end,
 sum_inf = function() return I:sum() end, mean_inf = function() return I:mean() end,
 var_inf = function() return I:var() end, var_pinf = function() return PI:var() end,
 std_pinf = function() return PI:std() end, sum_pinf = function() return PI:sum() end,
 prod_inf = function() return I:prod() end, max_inf = function() return {I:max(1)} end,
 min_inf = function() return {I:min(1)} end, argmax_inf = function() return PI:argmax() end,
 cumsum_inf = function() return I:cumsum(1) end, norm_inf = function() return I:norm() end,
 norm_pinf_p = function() return I:norm(inf) end, lse_inf = function() return I:logsumexp(1) end,
 lse_pinf = function() return PI:logsumexp(1) end, lse_ninf = function() return NI:logsumexp(2) end,
 lse_ninf_all = function() return NI:logsumexp({1, 2}) end,
 max_z = function() return Z:max() end, max_z2 = function() return Z2:max() end,
 min_z = function() return Z:min() end, min_z2 = function() return Z2:min() end,
 amax_z = function() return Z:amax() end, amax_z2 = function() return Z2:amax() end,
 maxd_z = function() return {Z:max(1)} end, maxd_z2 = function() return {Z2:max(1)} end,
 argmax_z = function() return Z:argmax() end,
 sum_nz = function() return NZt:sum() end, sumd_nz = function() return NZt:sum(1) end,
 mean_nz = function() return NZt:mean() end, prod_nz = function() return NZt:prod() end,
 cumsum_nz = function() return NZt:cumsum(1) end, nansum_nz = function() return NZt:nansum() end,
 sum_empty = function() return Em:sum(1) end, sum_empty_all = function() return Em:sum() end,
 prod_empty = function() return Em:prod(1) end, mean_empty = function() return Em:mean(1) end,
 mean_empty_all = function() return Em:mean() end, var_empty = function() return Em:var(1) end,
 std_empty = function() return Em:std(1) end, max_empty = function() return {Em:max(1)} end,
 max_empty_all = function() return Em:max() end, argmax_empty = function() return Em:argmax(1) end,
 amax_empty = function() return Em:amax(1) end, amax_empty_other = function() return Em:amax(2) end,
 max_empty_other = function() return {Em:max(2)} end,
 cumsum_empty = function() return Em:cumsum(1) end,
        lse_empty = function() return Em:logsumexp(1) end,
 norm_empty = function() return Em:norm(2, 1) end,
        nansum_empty = function() return Em:nansum(1) end,
 nanmean_empty = function() return Em:nanmean(1) end, all_empty = function() return Em:all() end,
 any_empty = function() return Em:any() end, all_empty_d = function() return Em:all(1) end,
 cnz_empty = function() return Em:count_nonzero(1) end,
 sum_s1 = function() return S1:sum(1) end, var_s1 = function() return S1:var(1) end,
 std_s1 = function() return S1:std(1) end, var_s1_biased = function() return S1:var(1, false) end,
 max_s1 = function() return {S1:max(1)} end, argmax_s1 = function() return S1:argmax(1) end,
 sum_keep = function() return X:sum(2, true) end, max_keep = function() return {X:max(3, true)} end,
 argmax_keep = function() return X:argmax(2, true) end,
 argmax_all_keep = function() return X:argmax(nil, true) end,
 var_keep = function() return X:var(1, true, true) end,
 lse_keep = function() return X:logsumexp(3, true) end, all_keep = function() return X:all(2,
        true) end,
 sum_dims = function() return X:sum({1, 3}) end, mean_dims = function() return X:mean({1, 3},
        true) end,
 var_dims = function() return X:var({1, 3}) end, std_dims = function() return X:std({2, 3}) end,
 amax_dims = function() return X:amax({1, 2}) end, lse_dims = function() return X:logsumexp({2,
        3}) end,
 norm_dims = function() return X:norm(2, {1, 3}) end, nansum_dims = function() return X:nansum({1,
        2}) end,
 cnz_dims = function() return X:count_nonzero({1, 3}) end,
 sum_none = function() return X:sum({}) end, mean_none = function() return X:mean({}) end,
 amax_none = function() return X:amax({}) end, var_none = function() return X:var({}) end,
 nansum_none = function() return X:nansum({}) end,
        cnz_none = function() return X:count_nonzero({}) end,
 norm_none = function() return X:norm(2, {}) end,
 sum_i32 = function() return II:sum() end, sumd_i32 = function() return II:sum(1) end,
 sum_i64_wrap = function() return IL:sum() end, sum_u8 = function() return U8:sum() end,
 sum_bool = function() return BO:sum() end, prod_i32 = function() return II:prod() end,
 cumsum_i32 = function() return II:cumsum(1) end, cumprod_i32 = function() return II:cumprod(1) end,
 mean_i32 = function() return II:mean() end, max_i32 = function() return II:max() end,
 max_i32d = function() return {II:max(1)} end, argmax_i32 = function() return II:argmax() end,
 amax_i32 = function() return II:amax() end, nansum_i32 = function() return II:nansum() end,
 cnz_i32 = function() return II:count_nonzero() end, all_i32 = function() return II:all() end,
 any_u8 = function() return U8:any() end, all_bool = function() return BO:all() end,
 max_bool = function() return BO:max() end, sum_u8_d = function() return U8:sum(1) end,
 prod_bool = function() return BO:prod() end, var_i32 = function() return II:var() end,
 lse_i32 = function() return II:logsumexp(1) end, norm_i32 = function() return II:norm() end,
 nanmean_i32 = function() return II:nanmean() end,
}

-- differences kept, with the reason
local PENDING = {
    max_z = "max() of {-0.0, 0.0}: PyTorch's 0.0, tide's kernel -0.0 (which zero the C kernel " ..
        "keeps on a tie; max(dim) and amax agree)",
    max_z2 = "max() of {0.0, -0.0}: PyTorch's -0.0, tide's kernel 0.0 (the C kernel's tie)",
    min_z = "min() of {-0.0, 0.0}: PyTorch's 0.0, tide's kernel -0.0 (the C kernel's tie)",
    min_z2 = "min() of {0.0, -0.0}: PyTorch's -0.0, tide's kernel 0.0 (the C kernel's tie)",
    mean_i32 = "mean of an int32 tensor: PyTorch raises, tide's kernel gives a float32 mean " ..
        "(kept, docs/API.md)",
    sum_i64_wrap = "tested below (#lua53: math.maxinteger)",
}

-- 1-based: PyTorch's indices (max / min's second result, argmax / argmin) plus 1
local function is_index(name, k, want)
    return want.dtype == "int64" and (name:find("^arg") ~= nil
        or (k == 2 and name:find("^m[ai][xn]") ~= nil))
end

local function same(w, g, dtype)
    if w ~= w then
        return g ~= g
    elseif type(w) == "boolean" then
        return g == w
    elseif g == w and w ~= 0 then
        return true
    elseif w == 0 and g == 0 then
        return 1 / w == 1 / g -- the sign of a zero
    elseif not dtype:find("^float") then
        return g == w
    end
    return math.abs(g - w) <= 1e-6 * math.abs(w)
end

local function check_result(name, k, want, got)
    assert.is_true(tide.is_tensor(got), name .. ": result " .. k .. " is a tensor")
    assert.are.equal(want.dtype, got.dtype, name .. ": dtype")
    local shape = {}
    for d = 1, got:dim() do
        shape[d] = got:size(d)
    end
    assert.are.same(want.shape, shape, name .. ": shape")
    local flat, shift = got:reshape(-1), is_index(name, k, want) and 1 or 0
    for i = 1, #want.v do
        local g = flat[i]:item()
        local w = (shift ~= 0) and want.v[i] + shift or want.v[i]
        assert(same(w, g, got.dtype), ("%s: result %d [%d]: want %s, got %s"):format(name, k, i,
            tostring(w), tostring(g)))
    end
end

describe("reductions at special values, as PyTorch 1.13's", function()
    local names = {}
    for name in pairs(E) do
        names[#names + 1] = name
    end
    table.sort(names)
    for _, name in ipairs(names) do
        local want = E[name]
        it(name, function()
            if PENDING[name] then
                pending(PENDING[name])
                return
            end
            if want.err then
                local ok, err = pcall(C[name])
                assert.is_false(ok, name .. ": PyTorch raises: " .. want.err)
                assert.truthy(tostring(err):find("tide: ", 1, true), tostring(err))
                return
            end
            local r = C[name]()
            local wants = want.dtype and { want } or want
            local gots = (type(r) == "table" and not tide.is_tensor(r)) and r or { r }
            assert.are.equal(#wants, #gots, name .. ": results")
            for k = 1, #wants do
                check_result(name, k, wants[k], gots[k])
            end
        end)
    end

    it("sum of an int64 tensor wraps past its max, as PyTorch's #lua53", function()
        local IL = tide.tensor({ math.maxinteger, 1 }, { dtype = "int64" })
        local r = IL:sum()
        assert.are.equal("int64", r.dtype)
        assert.are.equal(math.mininteger, r:item()) -- PyTorch: -9223372036854775808
    end)
end)

-- relative error of a against ref (0-d tensors or numbers)
local function rel(a, ref)
    a = tide.is_tensor(a) and a:item() or a
    ref = tide.is_tensor(ref) and ref:item() or ref
    return math.abs(a - ref) / math.abs(ref)
end

-- PyTorch 1.13's relative errors (vs the float64 sum of the same float32 values) in comments;
-- the bounds are PyTorch's, rounded up
describe("reductions' accuracy, as PyTorch 1.13's", function()
    it("float32 sum and mean of 10^6 values: random, constant 0.1, alternating 1e4 / 1e-3",
        function()
            tide.manual_seed(0)
            local n = 1000000
            local x = tide.rand(n)
            assert.is_true(rel(x:sum(), x:to("float64"):sum()) < 1e-7) -- PyTorch 8.6e-8
            assert.is_true(rel(x:mean(), x:to("float64"):mean()) < 1e-7) -- 4.5e-8
            local c = tide.full({ n }, 0.1)
            assert.is_true(rel(c:sum(), c:to("float64"):sum()) < 1e-7) -- 6.3e-8
            assert.is_true(rel(c:mean(), c:to("float64"):mean()) < 1e-7) -- 7.5e-8
            local cc = tide.full({ 200000, 2 }, 0.1) -- over a dim: PyTorch 8.3e-8, 7.5e-8
            assert.is_true(rel(cc:sum(1)[1], cc:to("float64"):sum(1)[1]) < 1e-7)
            assert.is_true(rel(cc:mean(1)[1], cc:to("float64"):mean(1)[1]) < 1e-7)
            local a = tide.where(tide.arange(n):remainder(2):eq(0), tide.tensor(1e4,
                { dtype = "float32" }), tide.tensor(1e-3, { dtype = "float32" }))
            assert.is_true(rel(a:sum(), a:to("float64"):sum()) < 1.1e-7) -- 1.0e-7
        end)

    it("float16 and bfloat16 sums accumulate in float32 (not stalling at 2048 / 256)", function()
        -- PyTorch: float16 ones 10^4 -> 10000, 10^5 -> inf (past float16's 65504); bfloat16
        -- ones 10^4 -> 9984, 10^5 -> 99840 (the float32 sum rounded once); float16 0.1 x 4096
        -- -> 409.5, its mean 0.09998
        assert.are.equal(10000, tide.ones(10000, { dtype = "float16" }):sum():item())
        assert.are.equal(INF, tide.ones(100000, { dtype = "float16" }):sum():item())
        assert.are.equal(9984, tide.ones(10000, { dtype = "bfloat16" }):sum():item())
        assert.are.equal(99840, tide.ones(100000, { dtype = "bfloat16" }):sum():item())
        local o = tide.ones(10000, 2, { dtype = "float16" }):sum(1)
        assert.are.same({ 10000, 10000 }, { o[1]:item(), o[2]:item() })
        local h = tide.full({ 4096 }, 0.1, { dtype = "float16" })
        assert.are.equal(409.5, h:sum():item())
        assert.is_true(math.abs(h:mean():item() - 0.09998) < 1e-5)
    end)

    it("var of values with a large mean (two-pass corrected, as PyTorch's Welford)", function()
        tide.manual_seed(0)
        -- PyTorch: 1e8 + U(0, 1) float64 7.1e-14; 1e4 + U(0, 1) float32 1.7e-6, over a dim of
        -- 1000: 8.3e-9 (tide's plain two-pass was 6.5e-6 there: the mean rounded to float32)
        local v = tide.rand(10000, { dtype = "float64" }) + 1e8
        assert.is_true(rel(v:var(), (v - 1e8):var()) < 1e-12)
        local w = (tide.rand(10000, { dtype = "float64" }) + 1e4):to("float32")
        assert.is_true(rel(w:var(), (w:to("float64") - 1e4):var()) < 2e-6)
        local m = (tide.rand(4, 1000, { dtype = "float64" }) + 1e4):to("float32")
        local ref = (m:to("float64") - 1e4):var(2)
        for i = 1, 4 do
            assert.is_true(rel(m:var(2)[i], ref[i]) < 2e-7) -- PyTorch up to 6e-8
            assert.is_true(rel(m:std(2)[i], ref[i]:sqrt()) < 2e-7)
        end
        local k = tide.full({ 3, 7 }, 0.1) -- a constant row: 0, never a rounded negative
        assert.are.same({ 0, 0, 0 }, k:std(2):totable())
    end)

    it("cumsum of 2 * 10^5 float32", function()
        tide.manual_seed(0)
        local x = tide.rand(200000)
        local cs, ref = x:cumsum(1), x:to("float64"):cumsum(1)
        -- PyTorch: last 9.9e-9, the largest relative error of any prefix 5.9e-8 (of 10^6:
        -- 3.1e-8 and 6.0e-8)
        assert.is_true(rel(cs[200000], ref[200000]) < 1e-7)
        -- every prefix within PyTorch's 5.9e-8 (the kernel row cumsum's float64 accumulator;
        -- on a device without the row, the scan's 1.9e-7)
        local worst = cs:double():sub(ref):abs():div(ref:abs()):max():item()
        if x.device.type == "cpu" then
            assert.is_true(worst < 6e-8, tostring(worst))
        end
    end)
end)
