-- tide.special: PyTorch 1.13's torch.special namespace for ported scripts, over tide's own
-- functions (special.expit is sigmoid, special.gammaln lgamma, special.psi digamma, ...), and
-- those it adds: ndtr (the standard normal's CDF), entr (-x log x), xlog1py (x log(1 + y), 0
-- where x is 0) and multigammaln (the multivariate log-gamma), each written in tide's ops
-- (every device; autograd differentiates them). The Bessel functions J, Y, K, the spherical j0,
-- Airy's Ai and the orthogonal polynomials (chebyshev_polynomial_t ...) are rows of the op table
-- under PyTorch's names (include/tide_ops.def).
local core = require("tide.core")
local args = require("tide.op_args")
local raise = require("tide.autograd.raise")

local check = args.check

-- x in a float dtype: integers promote to float32, as the op table's float-only ops do
local function floated(x)
    return args.FLOAT[x.dtype] and x or x:to(core.get_default_dtype())
end

local S = {}

local function tide()
    return require("tide")
end

-- the same functions under PyTorch's special names
local SAME = {
    digamma = "digamma", psi = "digamma", erf = "erf", erfc = "erfc", erfinv = "erfinv",
    exp2 = "exp2", expit = "sigmoid", expm1 = "expm1", gammaln = "lgamma", i0 = "i0", i0e = "i0e",
    i1 = "i1", i1e = "i1e", modified_bessel_i0 = "i0", modified_bessel_i1 = "i1", log1p = "log1p",
    logit = "logit", round = "round", sinc = "sinc", xlogy = "xlogy", zeta = "zeta",
    polygamma = "polygamma", logsumexp = "logsumexp", softmax = "softmax",
    log_softmax = "log_softmax", ndtri = "ndtri", log_ndtr = "log_ndtr", erfcx = "erfcx",
    gammainc = "igamma", gammaincc = "igammac",
}
for _, name in ipairs({ "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_k0",
    "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "spherical_bessel_j0", "airy_ai", "chebyshev_polynomial_t", "chebyshev_polynomial_u",
    "chebyshev_polynomial_v", "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
    "laguerre_polynomial_l", "legendre_polynomial_p" }) do
    SAME[name] = name
end
for name, own in pairs(SAME) do
    S[name] = function(...)
        return tide()[own](...)
    end
end

-- ndtr(x): the standard normal's CDF, erfc(-x / sqrt 2) / 2 (accurate in the left tail)
function S.ndtr(x, ...)
    args.no_extra("special.ndtr", 1, ...)
    check("special.ndtr", x)
    return floated(x):neg():div(math.sqrt(2)):erfc():mul(0.5)
end

-- entr(x): -x log x for x > 0, 0 at 0, -inf below (NaN stays); PyTorch's gradient
-- -(1 + log x): inf at 0, NaN below 0 (and where x is NaN), -inf at inf
local entr = require("tide.autograd").def {
    name = "special_entr",
    reads = { 1 },
    forward = function(_, x)
        local pos = x:gt(0)
        return core.where(pos, -x * core.where(pos, x, 1):log(), core.where(x:eq(0), 0,
            core.where(x:lt(0), -math.huge, x)))
    end,
    backward = function(nd, g)
        return g * (nd[1]:log() + 1):neg()
    end,
}

function S.entr(x, ...)
    args.no_extra("special.entr", 1, ...)
    check("special.entr", x)
    return entr(floated(x))
end

-- xlog1py(x, y): x log(1 + y), 0 where x is 0 and y is not NaN (PyTorch's), with PyTorch's
-- gradients: xlog1py(g, y) to x (at x = 0 too, but 0 where x = 0 and y <= -1), x / (1 + y) to y
local xlog1py = require("tide.autograd").def {
    name = "special_xlog1py",
    reads = { 1, 2 },
    forward = function(_, x, y)
        local zero = x:eq(0):logical_and(y:isnan():logical_not())
        return core.where(zero, 0, x * core.where(zero, 0, y):log1p())
    end,
    backward = function(nd, g)
        local x, y = nd[1], nd[2]
        local gx = core.where(g:eq(0):logical_and(y:isnan():logical_not()), 0, g * y:log1p())
        gx = core.where(x:eq(0):logical_and(y:le(-1)), 0, gx)
        return gx:sum_to(x.shape), (g * x / (y + 1)):sum_to(y.shape)
    end,
}

function S.xlog1py(x, y, ...)
    args.no_extra("special.xlog1py", 2, ...)
    local like = core.is_tensor(x) and x or y
    check("special.xlog1py", like)
    local dtype = args.FLOAT[like.dtype] and like.dtype or core.get_default_dtype()
    local function as_tensor(v, pos)
        if type(v) == "number" then
            return core.full({}, v, { dtype = dtype, device = like.device })
        end
        check("special.xlog1py", v, pos)
        return v.dtype == dtype and v or v:to(dtype)
    end
    return xlog1py(as_tensor(x, 1), as_tensor(y, 2))
end

-- multigammaln(a, p): PyTorch's alias of mvlgamma, p (p - 1) / 4 log pi + sum over j < p of
-- lgamma(a - j / 2), every element of a above (p - 1) / 2 or NaN (tide.multivariate_lgamma: the p terms
-- in one pass, a p too large for memory refused)
function S.multigammaln(a, p, ...)
    local who = "special.multigammaln"
    args.no_extra(who, 2, ...)
    return require("tide.multivariate_lgamma").compute(who, a, p)
end

return S
