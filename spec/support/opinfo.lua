-- opinfo.lua — one entry per op of the op table (tide.core._ops), read by spec/opinfo_spec.lua.
-- An op of the table without an entry here fails the suite: adding an op means adding a line.
--
-- Fields (all optional; {} is a full entry for an op whose defaults fit):
--   dtypes     {cpu = {...}, cuda = {...}}: the input dtypes the op accepts on each kind of
--              device (default: device_dtypes below); the spec runs the op on each and checks
--              that the others are refused with a `tide:` error
--   args       extra arguments after the tensor(s), e.g. clamp's bounds
--   nonzero    integer inputs of the second operand avoid 0 (integer division raises on cpu;
--              implied by the table's int_division flag)
--   empty_error  reductions without an identity: an empty input raises this text
--   grad       finite-difference check of the backward formula, on float64 inputs:
--                domain = {lo, hi} (or one {lo, hi} per input) of the uniform inputs,
--                avoid = values the inputs keep 0.05 away from (kinks, jumps),
--                constant = {i, ...}: inputs without a gradient (zeta's exponent)
--   torch_skip {dtype = "why"}: a documented difference from PyTorch 1.13 on that dtype
--   torch_differs {why =, values = function(tide_value, torch_value)}: the elements where
--              tide differs from PyTorch 1.13 by design (or by a known bug, said in `why`)
--   tol        {dtype = {rtol, atol}} for float results, where the spec's default is too tight
local M = {}

M.all_dtypes = { "float32", "float64", "int32", "int64", "uint8", "bool", "float16", "bfloat16" }
-- the dtypes the ops accept on each kind of device, unless an entry says otherwise; the spec
-- checks that the others are refused, not silently computed (float16 and bfloat16 compute on
-- the CPU too, through its float32 kernels: src/cpu/half.c)
M.device_dtypes = {
    cpu = M.all_dtypes,
    cuda = M.all_dtypes,
}

-- the bitwise rows' dtypes (include/tide_ops.def: DTYPES INTEGRAL and INTEGER)
local INTEGRAL = {
    cpu = { "int32", "int64", "uint8", "bool" },
    cuda = { "int32", "int64", "uint8", "bool" },
}
local INTEGER = { cpu = { "int32", "int64", "uint8" }, cuda = { "int32", "int64", "uint8" } }
-- every dtype but bool: sub, neg, abs, relu, the roundings and pow (and the divisions of two
-- bools) refuse it, as PyTorch's ("Subtraction, the `-` operator, with a bool tensor is not
-- supported", "abs_cpu" not implemented for 'Bool')
local NOT_BOOL = {}
for kind, dts in pairs(M.device_dtypes) do
    NOT_BOOL[kind] = {}
    for _, dt in ipairs(dts) do
        if dt ~= "bool" then
            NOT_BOOL[kind][#NOT_BOOL[kind] + 1] = dt
        end
    end
end
-- the floating dtypes alone: frac refuses integers, as PyTorch's ("frac_cpu" not implemented
-- for 'Long')
local FLOATING = { cpu = { "float32", "float64", "float16", "bfloat16" },
    cuda = { "float32", "float64", "float16", "bfloat16" } }

-- I0 and I1 grow without bound: tide gives their limits at +-inf, PyTorch 1.13 NaN
local BESSEL_INF = {
    why = "i0(+-inf) and i1(+-inf) are +-inf (their limits); PyTorch 1.13 gives nan",
    values = function(t, p) return p ~= p and math.abs(t) == math.huge end,
}

-- torch.special's J, Y, K, Ai: tide gives the limits at +-inf (0), PyTorch 1.13 NaN; and
-- PyTorch's J and Y lose up to 6 digits between 2 and 20 (2e-6 relative at 5.1; tide's are
-- within 4 ulp of mpmath there: spec/special_bessel_spec.lua)
local BESSEL_LIMITS = {
    why = "J, Y, Ai at +-inf are 0 (their limits), PyTorch 1.13 gives nan; PyTorch's J and Y " ..
        "are off by up to 2e-6 relative between 2 and 20",
    values = function(t, p)
        return (p ~= p and t == 0) or math.abs(t - p) <= 1e-5 * math.abs(t)
    end,
}
-- the orthogonal polynomials: past the double range tide gives +-inf (the polynomial's sign
-- there), PyTorch's recurrence inf - inf = nan; at an infinite x tide gives the limit, PyTorch
-- nan from the third degree on; past 2^20 steps of the recurrence (the int32 pool's n = 2^31)
-- tide gives nan where PyTorch loops n times (spec/special_bessel_spec.lua)
-- the integer pools against PyTorch's float32 kernels, which lose everything there: J, Y, Ai
-- at +-2^31 and +-2^63 (their phase), the polynomials of degree 2^31 (a float32 recurrence of
-- 2^31 steps, or cos(n acos x) with acos x's float32 rounding times 2^31) and of degrees and x
-- up to 255 (overflowing to nan, or cancelling: L_127(100) is off by 6e-5); tide computes in
-- double and rounds once, checked against mpmath in float32 by spec/special_bessel_spec.lua
local HUGE_X = "PyTorch's float32 J, Y, Ai lose the phase at the pool's +-2^31 and +-2^63"
local HUGE_N = "PyTorch's float32 recurrence of 2^31 steps (and cos(2^31 acos x)) is noise"
local BIG_N = "PyTorch's float32 recurrence to degree 255 at x up to 255 overflows to nan or " ..
    "cancels"
local POLY_SKIP = { int32 = HUGE_N, uint8 = BIG_N }
local POLYNOMIAL_LIMITS = {
    why = "+-inf past the double range and at +-inf (PyTorch: nan); nan past 2^20 steps",
    values = function(t, p)
        return (p ~= p and math.abs(t) == math.huge) or t ~= t
    end,
}

local WRAPPED_SIGN = {
    why = "gcd/lcm of the magnitudes wraps the same on the CPU and CUDA (docs/API.md); PyTorch " ..
        "1.13 negates some of the values at the dtype's ends: gcd(-2^31, 6) is -2 there, 2 here",
    values = function(t, p) return t == -p end,
}

local POS = { 0.5, 2 }
local DIVISOR = { { -2, 2 }, { 0.5, 2 } }
local MODULO = { { 2.3, 2.7 }, { 1.0, 1.1 } } -- a / b in [2.09, 2.7]: away from the jumps

M.ops = {
    -- binary
    add = { grad = {} },
    sub = { grad = {}, dtypes = NOT_BOOL },
    mul = { grad = {} },
    div = { grad = { domain = DIVISOR } },
    pow = { grad = { domain = { POS, { -2, 2 } } }, dtypes = NOT_BOOL }, -- 2 bools raise
    remainder = { grad = { domain = MODULO }, dtypes = NOT_BOOL },
    fmod = { grad = { domain = MODULO }, dtypes = NOT_BOOL },
    floor_divide = {
        grad = { domain = MODULO },
        dtypes = NOT_BOOL,
        torch_differs = {
            why = "tide's float // is floor(a / b) (IEEE, docs/API.md): inf // 1 is inf and " ..
                "1 // -inf is -0; PyTorch 1.13 (and Python's float //) give nan and -1",
            values = function(t, p)
                return (p ~= p and math.abs(t) == math.huge) or (t == 0 and p == -1)
            end,
        },
    },
    maximum = { grad = {} },
    minimum = { grad = {} },
    atan2 = { grad = { domain = { { -2, 2 }, POS } } },
    -- away from (0, 0), where the gradient is NaN (PyTorch's too)
    hypot = { grad = { domain = { POS, { -2, 2 } } }, dtypes = FLOATING }, -- (integers raise)
    -- x > 1, q > 0 (away from the poles); no gradient for the exponent x, as PyTorch's
    zeta = { grad = { domain = { { 1.5, 4 }, { 0.5, 3 } }, constant = { 1 } },
        tol = { float16 = { 2e-2, 1e-2 }, bfloat16 = { 5e-2, 5e-2 } } },
    -- the incomplete gamma functions P(a, x), Q(a, x); no gradient for a, as PyTorch's
    igamma = { grad = { domain = { { 0.5, 3 }, { 0.5, 3 } }, constant = { 1 } } },
    igammac = { grad = { domain = { { 0.5, 3 }, { 0.5, 3 } }, constant = { 1 } } },
    -- torch.special's orthogonal polynomials p(x, n): no gradient (PyTorch has none either)
    chebyshev_polynomial_t = { torch_differs = POLYNOMIAL_LIMITS, torch_skip = POLY_SKIP },
    chebyshev_polynomial_u = { torch_differs = POLYNOMIAL_LIMITS, torch_skip = POLY_SKIP },
    chebyshev_polynomial_v = { torch_differs = POLYNOMIAL_LIMITS, torch_skip = POLY_SKIP },
    chebyshev_polynomial_w = { torch_differs = POLYNOMIAL_LIMITS, torch_skip = POLY_SKIP },
    shifted_chebyshev_polynomial_t = { torch_differs = POLYNOMIAL_LIMITS, torch_skip = POLY_SKIP },
    shifted_chebyshev_polynomial_u = { torch_differs = POLYNOMIAL_LIMITS, torch_skip = POLY_SKIP },
    shifted_chebyshev_polynomial_v = { torch_differs = POLYNOMIAL_LIMITS, torch_skip = POLY_SKIP },
    shifted_chebyshev_polynomial_w = { torch_differs = POLYNOMIAL_LIMITS, torch_skip = POLY_SKIP },
    hermite_polynomial_h = { torch_differs = POLYNOMIAL_LIMITS, torch_skip = POLY_SKIP },
    hermite_polynomial_he = { torch_differs = POLYNOMIAL_LIMITS, torch_skip = POLY_SKIP },
    laguerre_polynomial_l = { torch_differs = POLYNOMIAL_LIMITS, torch_skip = POLY_SKIP },
    legendre_polynomial_p = { torch_differs = POLYNOMIAL_LIMITS, torch_skip = POLY_SKIP },
    -- comparisons (bool results: no gradient)
    eq = {}, ne = {}, lt = {}, le = {}, gt = {}, ge = {},
    logical_and = {}, logical_or = {}, logical_xor = {},
    -- bitwise (integer and bool tensors; the shifts not two bools, as PyTorch)
    bitwise_and = { dtypes = INTEGRAL }, bitwise_or = { dtypes = INTEGRAL },
    bitwise_xor = { dtypes = INTEGRAL }, bitwise_not = { dtypes = INTEGRAL },
    bitwise_left_shift = { dtypes = INTEGER }, bitwise_right_shift = { dtypes = INTEGER },
    -- gcd and lcm of the magnitudes; where the result is the dtype's MIN or wraps, tide keeps
    -- the wrapped bits on every device, PyTorch 1.13 negates them (gcd(-2^31, 6) = -2)
    gcd = { dtypes = INTEGER, torch_differs = WRAPPED_SIGN },
    lcm = { dtypes = INTEGER, torch_differs = WRAPPED_SIGN },
    -- unary
    neg = { grad = {}, dtypes = NOT_BOOL },
    abs = { grad = { avoid = { 0 } }, dtypes = NOT_BOOL },
    exp = { grad = {} },
    log = { grad = { domain = POS } },
    sqrt = { grad = { domain = POS } },
    rsqrt = { grad = { domain = POS } },
    tanh = { grad = {} },
    sigmoid = { grad = {} },
    relu = { grad = { avoid = { 0 } }, dtypes = NOT_BOOL },
    gelu = { grad = {} },
    sin = { grad = {} },
    cos = { grad = {} },
    tan = { grad = { domain = { -1.2, 1.2 } } },
    sign = { grad = { avoid = { 0 } } },
    clamp = {
        args = { -0.5, 1.5 }, grad = { avoid = { -0.5, 1.5 } },
        torch_skip = { bool = "a bool clamped to integer bounds stays bool; PyTorch gives int64" },
    },
    erf = { grad = {} },
    erfc = { grad = {} },
    -- lgamma and digamma away from their poles at 0, -1, -2; erfinv inside (-1, 1)
    lgamma = { grad = { domain = { -2.5, 4 }, avoid = { -2, -1, 0 } } },
    digamma = { grad = { domain = { -2.5, 4 }, avoid = { -2, -1, 0 } } },
    erfinv = { grad = { domain = { -0.9, 0.9 } } },
    -- the modified Bessel functions, on both sides of 0 (and the series' switch at 30 in
    -- the fixtures)
    i0 = { grad = { domain = { -3, 3 } }, torch_differs = BESSEL_INF },
    i1 = { grad = { domain = { -3, 3 } }, torch_differs = BESSEL_INF },
    i0e = { grad = { domain = { -3, 3 }, avoid = { 0 } } },
    i1e = { grad = { domain = { -3, 3 }, avoid = { 0 } } },
    -- torch.special's J and Y (Y on x > 0), K and e^x K (x > 0); the spherical j0 and Ai have
    -- no gradient (PyTorch has none for any of them)
    bessel_j0 = { grad = { domain = { -3, 3 } }, torch_differs = BESSEL_LIMITS,
        torch_skip = { int32 = HUGE_X } },
    bessel_j1 = { grad = { domain = { -3, 3 } }, torch_differs = BESSEL_LIMITS,
        torch_skip = { int32 = HUGE_X } },
    bessel_y0 = { grad = { domain = { 0.5, 3 } }, torch_differs = BESSEL_LIMITS,
        torch_skip = { int32 = HUGE_X } },
    bessel_y1 = { grad = { domain = { 0.5, 3 } }, torch_differs = BESSEL_LIMITS,
        torch_skip = { int32 = HUGE_X } },
    modified_bessel_k0 = { grad = { domain = { 0.5, 3 } } },
    modified_bessel_k1 = { grad = { domain = { 0.5, 3 } } },
    scaled_modified_bessel_k0 = { grad = { domain = { 0.5, 3 } } },
    scaled_modified_bessel_k1 = { grad = { domain = { 0.5, 3 } } },
    spherical_bessel_j0 = {},
    airy_ai = { torch_differs = BESSEL_LIMITS, torch_skip = { int32 = HUGE_X, int64 = HUGE_X } },
    -- the normal distribution's quantile inside (0, 1), its log-CDF and the scaled erfc on
    -- both sides of their switches (-1 and 0)
    ndtri = { grad = { domain = { 0.05, 0.95 } } },
    log_ndtr = { grad = { domain = { -3, 3 } } },
    erfcx = { grad = { domain = { -2, 2 } } },
    -- the inverse functions inside their domains, away from the ends where the slope is inf
    asin = { grad = { domain = { -0.9, 0.9 } } },
    acos = { grad = { domain = { -0.9, 0.9 } } },
    atan = { grad = { domain = { -3, 3 } } },
    sinh = { grad = { domain = { -2, 2 } } },
    cosh = { grad = { domain = { -2, 2 } } },
    asinh = { grad = { domain = { -3, 3 } } },
    acosh = { grad = { domain = { 1.1, 4 } } },
    atanh = { grad = { domain = { -0.9, 0.9 } } },
    log1p = { grad = { domain = POS } },
    expm1 = { grad = {} },
    log2 = { grad = { domain = POS } },
    log10 = { grad = { domain = POS } },
    floor = { grad = { avoid = { -1, 0, 1 } }, dtypes = NOT_BOOL },
    ceil = { grad = { avoid = { -1, 0, 1 } }, dtypes = NOT_BOOL },
    round = { grad = { avoid = { -1.5, -0.5, 0.5, 1.5 } }, dtypes = NOT_BOOL },
    trunc = { grad = { avoid = { -1, 0, 1 } }, dtypes = NOT_BOOL },
    frac = { grad = { avoid = { -1, 0, 1 } }, dtypes = FLOATING },
    reciprocal = { grad = { domain = POS } },
    square = {
        grad = {},
        torch_skip = { bool = "a bool squared stays bool (x * x); PyTorch gives int64" },
    },
    softplus = { grad = {} },
    silu = { grad = {} },
    isnan = {}, isinf = {}, isfinite = {}, logical_not = {},
    -- reductions
    sum = { grad = {} },
    mean = { grad = {} },
    prod = { grad = {} },
    max = { empty_error = "cannot reduce over an empty dim", grad = {} },
    min = { empty_error = "cannot reduce over an empty dim", grad = {} },
    argmax = { empty_error = "cannot reduce over an empty dim" },
    argmin = { empty_error = "cannot reduce over an empty dim" },
}

return M
