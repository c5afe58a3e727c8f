-- tide.autograd.formulas: the gradient of each op the binding records (the rows of
-- include/tide_ops.def and the internal kernels it records, im2col and maxpool2d), one
-- registry def an op (tide.autograd.registry): the formula beside what it reads, so the engine
-- can check those tensors were not modified in place, and what the engine may free.
-- A formula is backward(node, g, g_free): node is the recorded args table ({n = N, ...} plus out,
-- indices and the fields a fused op keeps), g the gradient of the result; it returns the
-- gradients of args[1], args[2], ... (nil where none flows), written with tensor ops only.
-- g_free: nothing but this formula holds g, which it may overwrite and return.
-- The nodes Lua records by hand have their defs beside the code that records them: nn's fused
-- layers in tide.nn._fused, the recurrent cells in tide.nn._rnn, conv_transpose2d's col2im in
-- tide.nn.functional, norm in tide.reductions.
local compat = require("tide._compat")
local core = require("tide.core")
local def = require("tide.autograd.registry").def
local K = core._internal -- the internal kernels (tide._internal in docs/API.md)

local TMT = getmetatable(core.zeros(1))
local getmetatable, type = getmetatable, type

local function is_tensor(x)
    return getmetatable(x) == TMT
end

local function needs(x)
    return getmetatable(x) == TMT and x.requires_grad
end

local function normdim(d, nd)
    if d < 0 then
        return d + nd + 1
    end
    return d
end

-- g summed back to x's shape (the reverse of broadcasting). Equal ndim and numel means equal
-- shapes for a broadcast input, checked without building shape tables.
local function reduce(g, x)
    local n = x:numel()
    if n > 0 and g:numel() == n and g:dim() == x:dim() then
        return g
    end
    return g:sum_to(x.shape)
end

local function zeros_like(x, g)
    return core.zeros(x.shape, { device = x.device, dtype = g.dtype })
end

-- ---- gradient functions: backward(node, g) returns the gradients of args[1], args[2], ... ----

def {
    name = "add",
    backward = function(nd, g)
        local a, b, alpha = nd[1], nd[2], nd[3]
        local ga, gb
        if needs(a) then
            ga = reduce(g, a)
        end
        if needs(b) then
            gb = reduce(g, b)
            if type(alpha) == "number" then
                gb = gb * alpha
            end
        end
        return ga, gb
    end,
}

def {
    name = "sub",
    backward = function(nd, g)
        local a, b, alpha = nd[1], nd[2], nd[3]
        local ga, gb
        if needs(a) then
            ga = reduce(g, a)
        end
        if needs(b) then
            gb = reduce(type(alpha) == "number" and g * -alpha or g:neg(), b)
        end
        return ga, gb
    end,
}

def {
    name = "mul",
    reads = { { 2, 1 }, { 1, 2 } },
    backward = function(nd, g)
        local a, b = nd[1], nd[2]
        local ga, gb
        if needs(a) then
            ga = reduce(g:mul(b), a)
        end
        if needs(b) then
            gb = reduce(g:mul(a), b)
        end
        return ga, gb
    end,
}

def {
    name = "div",
    -- b's gradient reads a, not the result, as PyTorch's (x:div_(s) then x:mul_(w) backprops)
    reads = { 2, { 1, 2 } },
    backward = function(nd, g)
        local a, b = nd[1], nd[2]
        local ga, gb
        if needs(a) then
            ga = reduce(g:div(b), a)
        end
        if needs(b) then
            -- d(a/b)/db = -(a/b)/b
            local q = type(a) == "number" and b:reciprocal():mul(a) or a:div(b)
            gb = reduce(g:mul(q:div(b)):neg(), b)
        end
        return ga, gb
    end,
}

def {
    name = "pow",
    reads = { 1, { 2, 1 }, { "out", 2 } },
    backward = function(nd, g)
        local a, b = nd[1], nd[2]
        local ga, gb
        -- PyTorch's pow_backward: 0 where the exponent is 0 (pow(0, 0) too), and the exponent's
        -- gradient 0 where the base is 0 and the exponent >= 0 (not 0 * log(0) = NaN)
        if needs(a) then
            if type(b) == "number" then
                if b == 2 then
                    ga = g:mul(a):mul(2)
                elseif b == 0 then
                    ga = zeros_like(a, g)
                else
                    ga = g:mul(a:pow(b - 1):mul(b))
                end
            else
                ga = reduce(core.where(b:eq(0), 0, g:mul(b):mul(a:pow(b - 1))), a)
            end
        end
        if needs(b) then
            local gl
            if type(a) == "number" then
                gl = g:mul(nd.out):mul(math.log(a))
                if a == 0 then
                    gl = core.where(b:ge(0), 0, gl)
                end
            else
                gl = core.where(a:eq(0):logical_and(b:ge(0)), 0, g:mul(nd.out):mul(a:log()))
            end
            gb = reduce(gl, b)
        end
        return ga, gb
    end,
}

-- a - q * b for q = floor(a / b) (remainder, Lua's %) or trunc(a / b) (fmod): d/da = 1 and
-- d/db = -q, as PyTorch (q is constant between its jumps); a or b may be a number
local function abs_of(v)
    return type(v) == "number" and math.abs(v) or v:abs()
end

local function sign_of(v)
    if type(v) == "number" then
        return v > 0 and 1 or (v < 0 and -1 or 0)
    end
    return v:sign()
end

local function modulo_backward(nd, g, truncated)
    local a, b = nd[1], nd[2]
    local ga, gb
    if needs(a) then
        ga = reduce(g, a)
    end
    if needs(b) then
        local q
        if truncated then -- trunc(a / b) = sign(a) sign(b) floor(|a| / |b|)
            q = core.floor_divide(abs_of(a), abs_of(b)):mul(sign_of(a)):mul(sign_of(b))
        else
            q = core.floor_divide(a, b)
        end
        gb = reduce(g:mul(q):neg(), b)
    end
    return ga, gb
end

for name, truncated in pairs({ remainder = false, fmod = true }) do
    def {
        name = name,
        reads = { { 1, 2 }, { 2, 2 } }, -- b's gradient reads a and b
        backward = function(nd, g)
            return modulo_backward(nd, g, truncated)
        end,
    }
end

-- floor(a / b) is piecewise constant: zero gradients, as PyTorch's floor
def {
    name = "floor_divide",
    backward = function(nd, g)
        local a, b = nd[1], nd[2]
        return needs(a) and zeros_like(a, g) or nil, needs(b) and zeros_like(b, g) or nil
    end,
}

-- elementwise maximum/minimum: ties share the gradient equally, and where a or b is NaN both
-- take all of it (PyTorch 1.13's where(a == b, g / 2, g) with the strict loser's masked to 0)
local function extremum(nd, g, cmp)
    local a, b = nd[1], nd[2]
    local ga, gb
    local rev = cmp == "gt" and "lt" or "gt"
    local win, lose, tie
    if is_tensor(a) then
        win, lose, tie = a[cmp](a, b), a[rev](a, b), a:eq(b)
    else
        win, lose, tie = b[rev](b, a), b[cmp](b, a), b:eq(a)
    end
    -- a's share: 0 where it loses, 1/2 on ties, else 1; the loser gets 0 even where g is NaN
    -- (where, not a product, as PyTorch)
    local half = tie:type_as(g):mul(0.5)
    if needs(a) then
        local wa = lose:type_as(g):add(half):neg():add(1)
        ga = reduce(core.where(wa:eq(0), 0, g:mul(wa)), a)
    end
    if needs(b) then
        local wb = win:type_as(g):add(half):neg():add(1)
        gb = reduce(core.where(wb:eq(0), 0, g:mul(wb)), b)
    end
    return ga, gb
end

def {
    name = "maximum",
    reads = { 1, 2 },
    backward = function(nd, g)
        return extremum(nd, g, "gt")
    end,
}

def {
    name = "minimum",
    reads = { 1, 2 },
    backward = function(nd, g)
        return extremum(nd, g, "lt")
    end,
}

-- an elementwise op of one tensor whose gradient reads x, its input (what = 1), or y, its result
-- (what = "out": the input is freed early): grad(x or y, g) returns the input's gradient
local function unary(name, what, grad)
    def {
        name = name,
        reads = { what },
        frees = what == "out" and { 1 } or nil,
        backward = function(nd, g)
            return grad(nd[what], g)
        end,
    }
end

def {
    name = "neg",
    backward = function(_, g)
        return g:neg()
    end,
}

unary("abs", 1, function(x, g) return g:mul(x:sign()) end)
unary("exp", "out", function(y, g) return g:mul(y) end)
unary("log", 1, function(x, g) return g:div(x) end)
unary("sqrt", "out", function(y, g) return g:div(y):mul(0.5) end)
unary("rsqrt", "out", function(y, g) return g:mul(y:mul(y):mul(y)):mul(-0.5) end)
unary("tanh", "out", function(y, g) return g:mul(y:mul(y):neg():add(1)) end)
unary("sigmoid", "out", function(y, g) return g:mul(y:mul(y:neg():add(1))) end)

-- reads the result, as PyTorch does: relu(x) <= 0 exactly where x <= 0 (relu(NaN) is NaN), and
-- the input, which the next op does not keep either, is not held until backward (a conv's
-- output before its ReLU); an in-place relu_ needs no copy of its input
local RELU_FUSED = { float32 = true, float64 = true, float16 = true, bfloat16 = true }
def {
    name = "relu",
    reads = { "out" },
    frees = { 1 },
    backward = function(nd, g, g_free)
        local y = nd.out
        if RELU_FUSED[y.dtype] and g.dtype == y.dtype and not core.is_grad_enabled() then
            -- one pass: y <= 0 ? 0 : g (NaN passes g, as PyTorch); into g when the engine says that
            -- nothing else holds it (g_free) and no view shares its memory, and g is contiguous:
            -- an expanded one (loss:sum() / n's gradient) has one element under many, and writing
            -- each would zero them all (ported_scripts127). nil: the device has no kernel
            if g_free and g:is_contiguous() and g:_sole_owner() and not g:_shares_storage(y) then
                K.relu_backward_(g, y)
                return g
            end
            local r = K.relu_backward(g, y)
            if r then
                return r
            end
        end
        if needs(y) then -- create_graph: PyTorch's threshold_backward node, y's gradient 0
            return require("tide.autograd.engine").define("relu_backward")(g, y)
        end
        return core.where(y:le(0), 0, g)
    end,
}

-- relu's gradient where its own graph is recorded: g's gradient masked as g was, y's zero (so
-- the first gradient requires grad with y and a second backward reaches y, as PyTorch's)
def {
    name = "relu_backward",
    reads = { 2 },
    forward = function(_, g, y)
        return core.where(y:le(0), 0, g)
    end,
    backward = function(nd, gg)
        local g, y = nd[1], nd[2]
        return needs(g) and core.where(y:le(0), 0, gg) or nil, needs(y) and zeros_like(y, gg) or nil
    end,
}

-- a piecewise-linear activation, one op each under PyTorch's name (so grad_fn prints as
-- PyTorch's: HardtanhBackward0, ...), recorded by tide.nn.functional with node.slope, a
-- function of x giving its per-element slopes (a tensor of x's dtype, PyTorch's choice at each
-- kink): the gradient is g * slope(x), recorded as piecewise_linear_backward when its own graph
-- is (create_graph), as PyTorch's hardtanh_backward, leaky_relu_backward, threshold_backward...:
-- g's gradient gg * slope(x), x's zero, so a second backward reaches x (zeros), not raising
for _, name in ipairs({ "hardtanh", "leaky_relu", "threshold", "hardshrink", "softshrink",
    "prelu", "rrelu_with_noise" }) do
    def {
        name = name,
        reads = { 1 },
        backward = function(nd, g)
            return require("tide.autograd.engine").define("piecewise_linear_backward")(g, nd[1],
                nd.slope)
        end,
    }
end

def {
    name = "piecewise_linear_backward",
    reads = { 2 },
    forward = function(_, g, x, slope)
        return g:mul(slope(x))
    end,
    backward = function(nd, gg)
        local g, x = nd[1], nd[2]
        return needs(g) and gg:mul(nd[3](x)) or nil, needs(x) and zeros_like(x, gg) or nil
    end,
}

-- exact GELU: d/dx x*Phi(x) = Phi(x) + x*phi(x): one kernel pass, or, when the gradient's
-- own graph is recorded (create_graph), ops (Phi from erfc: no cancellation in the left tail)
def {
    name = "gelu",
    reads = { 1 },
    backward = function(nd, g)
        local x = nd[1]
        local r = RELU_FUSED[x.dtype] and g.dtype == x.dtype and not core.is_grad_enabled()
            and K.gelu_backward(g, x) -- nil: the device has no kernel
        if r then
            return r
        end
        local cdf = x:mul(-0.7071067811865476):erfc():mul(0.5)
        local pdf = x:mul(x):mul(-0.5):exp():mul(0.3989422804014327)
        return g:mul(cdf:add(x:mul(pdf)))
    end,
}

unary("sin", 1, function(x, g) return g:mul(x:cos()) end)
unary("cos", 1, function(x, g) return g:mul(x:sin()):neg() end)
unary("tan", "out", function(y, g) return g:mul(y:mul(y):add(1)) end)
-- the inverse and hyperbolic functions: PyTorch's formulas (1 - x^2 and x^2 - 1 from the
-- input, so their gradients are inf at the domain's ends and NaN outside, as PyTorch's)
unary("asin", 1, function(x, g) return g:mul(x:mul(x):neg():add(1):rsqrt()) end)
unary("acos", 1, function(x, g) return g:mul(x:mul(x):neg():add(1):rsqrt()):neg() end)
unary("atan", 1, function(x, g) return g:div(x:mul(x):add(1)) end)
unary("sinh", 1, function(x, g) return g:mul(x:cosh()) end)
unary("cosh", 1, function(x, g) return g:mul(x:sinh()) end)
unary("asinh", 1, function(x, g) return g:mul(x:mul(x):add(1):rsqrt()) end)
unary("acosh", 1, function(x, g) return g:mul(x:mul(x):sub(1):rsqrt()) end)
unary("atanh", 1, function(x, g) return g:div(x:mul(x):neg():add(1)) end)

-- d/dx erf(x) = 2/sqrt(pi) exp(-x^2); erfc is 1 - erf
local function erf_slope(x)
    return x:mul(x):neg():exp():mul(1.1283791670955126)
end

unary("erf", 1, function(x, g) return g:mul(erf_slope(x)) end)
unary("erfc", 1, function(x, g) return g:mul(erf_slope(x)):neg() end)
unary("log1p", 1, function(x, g) return g:div(x:add(1)) end)
unary("expm1", "out", function(y, g) return g:mul(y:add(1)) end)
unary("log2", 1, function(x, g) return g:div(x:mul(0.6931471805599453)) end)
unary("log10", 1, function(x, g) return g:div(x:mul(2.302585092994046)) end)
unary("reciprocal", "out", function(y, g) return g:mul(y:mul(y)):neg() end)
unary("square", 1, function(x, g) return g:mul(x:mul(2)) end)

-- lgamma' = digamma; digamma' = polygamma(1, x) (zeta(2, x), PyTorch's 0 at inf and NaN at -inf:
-- tide.special's); erfinv' = sqrt(pi)/2 e^(erfinv^2)
unary("lgamma", 1, function(x, g) return g:mul(x:digamma()) end)
unary("digamma", 1, function(x, g) return g:mul(x:polygamma(1)) end)
unary("erfinv", "out", function(y, g) return g:mul(y:mul(y):exp():mul(0.88622692545275801)) end)
-- the modified Bessel functions: i0' = i1, i1' = i0 - i1 / x (1/2 at 0); the scaled ones
-- (e^-|x| times) subtract sign(x) times themselves. x's zeros are replaced before the division,
-- so a second derivative meets no 0/0 in the branch where does not take
local function bessel_ratio(x, i1x)
    local zero = x:eq(0)
    return core.where(zero, 0.5, i1x:div(core.where(zero, 1, x)))
end
unary("i0", 1, function(x, g) return g:mul(x:i1()) end)
unary("i1", 1, function(x, g) return g:mul(x:i0():sub(bessel_ratio(x, x:i1()))) end)
unary("i0e", 1, function(x, g) return g:mul(x:i1e():sub(x:sign():mul(x:i0e()))) end)
unary("i1e", 1, function(x, g)
    local i1e = x:i1e()
    return g:mul(x:i0e():sub(bessel_ratio(x, i1e)):sub(x:sign():mul(i1e)))
end)
-- torch.special's J, Y, K (PyTorch 1.13 has no derivative for them): J0' = -J1, J1' = J0 - J1/x
-- (1/2 at 0), the same for Y; K0' = -K1, K1' = -K0 - K1/x; the scaled K (e^x times) add
-- themselves. Y and K live on x > 0 (NaN below), so their x needs no guard
unary("bessel_j0", 1, function(x, g) return g:mul(x:bessel_j1()):neg() end)
unary("bessel_j1", 1, function(x, g)
    return g:mul(x:bessel_j0():sub(bessel_ratio(x, x:bessel_j1())))
end)
unary("bessel_y0", 1, function(x, g) return g:mul(x:bessel_y1()):neg() end)
unary("bessel_y1", 1, function(x, g) return g:mul(x:bessel_y0():sub(x:bessel_y1():div(x))) end)
unary("modified_bessel_k0", 1, function(x, g) return g:mul(x:modified_bessel_k1()):neg() end)
unary("modified_bessel_k1", 1, function(x, g)
    return g:mul(x:modified_bessel_k0():add(x:modified_bessel_k1():div(x))):neg()
end)
unary("scaled_modified_bessel_k0", 1, function(x, g)
    return g:mul(x:scaled_modified_bessel_k0():sub(x:scaled_modified_bessel_k1()))
end)
unary("scaled_modified_bessel_k1", 1, function(x, g)
    local k1e = x:scaled_modified_bessel_k1()
    return g:mul(k1e:sub(x:scaled_modified_bessel_k0()):sub(k1e:div(x)))
end)

-- ndtri' = sqrt(2 pi) e^(y^2 / 2) of its result y; log_ndtr' = e^(-x^2 / 2 - log_ndtr(x)) /
-- sqrt(2 pi); erfcx' = 2x erfcx(x) - 2 / sqrt(pi), PyTorch's formulas
unary("ndtri", "out", function(y, g) return g:mul(y:mul(y):mul(0.5):exp():mul(2.5066282746310002)) end)
unary("log_ndtr", 1, function(x, g)
    return g:mul(x:mul(x):mul(0.5):add(x:log_ndtr()):neg():exp():mul(0.3989422804014327))
end)
unary("erfcx", 1, function(x, g) return g:mul(x:mul(x:erfcx()):mul(2):sub(1.1283791670955126)) end)

-- igamma(a, x) = P(a, x): d/dx = x^(a-1) e^-x / Gamma(a); igammac = 1 - P; none for a, which
-- tide.igamma refuses (lua/tide/special.lua), as PyTorch's backward does
local function igamma_density(a, x)
    local a1 = type(a) == "number" and a - 1 or a:sub(1)
    local lg = type(a) == "number" and x:mul(0):add(a):lgamma() or a:lgamma()
    return x:log():mul(a1):sub(x):sub(lg):exp()
end
for name, sign in pairs({ igamma = 1, igammac = -1 }) do
    def {
        name = name,
        reads = { 1, 2 },
        backward = function(nd, g)
            local a, x = nd[1], nd[2]
            return nil, reduce(g:mul(igamma_density(a, x)):mul(sign), x)
        end,
    }
end

-- zeta(x, q): d/dq = -x zeta(x + 1, q); none for the exponent x, which tide.zeta refuses
-- (lua/tide/special.lua)
def {
    name = "zeta",
    reads = { 1, 2 },
    backward = function(nd, g)
        local x, q = nd[1], nd[2]
        local xp1 = type(x) == "number" and x + 1 or x:add(1)
        return nil, reduce(g:mul(core.zeta(xp1, q)):mul(x):neg(), q)
    end,
}

-- x - trunc(x): the slope of x
def {
    name = "frac",
    backward = function(_, g)
        return g
    end,
}

-- sign, floor, ceil, round and trunc are piecewise constant: zero gradients, as PyTorch
local function zero_gradient(nd, g)
    return zeros_like(nd[1], g)
end
for _, name in ipairs({ "sign", "floor", "ceil", "round", "trunc" }) do
    def { name = name, backward = zero_gradient }
end

-- softplus' slope is sigmoid(x), 1 above PyTorch's threshold 20 where softplus is x itself
unary("softplus", 1, function(x, g)
    local s = x:sigmoid()
    return g:mul(s:maximum(x:gt(20):type_as(s)))
end)

-- d/dx x sigmoid(x) = s (1 + x (1 - s))
unary("silu", 1, function(x, g)
    local s = x:sigmoid()
    return g:mul(s:mul(x:mul(s:neg():add(1)):add(1)))
end)

-- atan2(a, b): d/da = b / (a^2 + b^2), d/db = -a / (a^2 + b^2); a or b may be a number
local function squared(v)
    return type(v) == "number" and v * v or v:mul(v)
end

def {
    name = "atan2",
    reads = { 1, 2 },
    backward = function(nd, g)
        local a, b = nd[1], nd[2]
        local r2 = is_tensor(a) and squared(a):add(squared(b)) or squared(b):add(squared(a))
        local ga, gb
        if needs(a) then
            ga = reduce(g:mul(b):div(r2), a)
        end
        if needs(b) then
            gb = reduce(g:mul(a):div(r2):neg(), b)
        end
        return ga, gb
    end,
}

-- hypot(a, b) = out: d/da = a / out, d/db = b / out (NaN at 0, 0, as PyTorch's); a or b may
-- be a number
def {
    name = "hypot",
    reads = { 1, 2, "out" },
    backward = function(nd, g)
        local a, b = nd[1], nd[2]
        local ga, gb
        if needs(a) then
            ga = reduce(g:mul(a):div(nd.out), a)
        end
        if needs(b) then
            gb = reduce(g:mul(b):div(nd.out), b)
        end
        return ga, gb
    end,
}

def {
    name = "clamp",
    reads = { 1 },
    backward = function(nd, g)
        local x, lo, hi = nd[1], nd[2], nd[3]
        -- where, not a product: a clamped element gets 0 even where g is NaN, as PyTorch
        if type(lo) == "number" then
            g = core.where(x:ge(lo), g, 0)
        end
        if type(hi) == "number" then
            g = core.where(x:le(hi), g, 0)
        end
        return g
    end,
}

-- gradient of a reduction over `dim` (nil: all dims) broadcast back to x's shape
local function unreduce(g, x, dim, keep)
    if type(dim) ~= "number" then
        return g:expand(x.shape)
    end
    if not keep then
        g = g:unsqueeze(normdim(dim, x:dim()))
    end
    return g:expand(x.shape)
end

def {
    name = "sum",
    backward = function(nd, g)
        return unreduce(g, nd[1], nd[2], nd[3])
    end,
}

def {
    name = "mean",
    backward = function(nd, g)
        local x = nd[1]
        return unreduce(g:div(x:numel() / g:numel()), x, nd[2], nd[3]) -- g has the result's shape
    end,
}

-- products along dim d of the elements before each one (after each one with `after`), 1 for the
-- first: a scan by doubling, log2(n) multiplies of shifted copies, with no division
local function exclusive_prod(x, d, after)
    local n = x:size(d)
    local shape = x.shape
    shape[d] = 1
    local one = core.ones(shape, { device = x.device, dtype = x.dtype })
    -- shifted by one: the exclusive products are the inclusive ones of the shifted input
    local p = after and core.cat({ x:narrow(d, 2, n - 1), one }, d)
        or core.cat({ one, x:narrow(d, 1, n - 1) }, d)
    local k = 1
    while k < n do
        shape[d] = k
        local ones = core.ones(shape, { device = x.device, dtype = x.dtype })
        p = p:mul(after and core.cat({ p:narrow(d, k + 1, n - k), ones }, d)
            or core.cat({ ones, p:narrow(d, 1, n - k) }, d))
        k = k * 2
    end
    return p
end

-- d prod / d x_i is the product of the other elements: exclusive products from both sides, so
-- zeros need no special case (x = {1, 0, 2} gives {0, 2, 0}, as PyTorch), never 0/0
def {
    name = "prod",
    reads = { 1 },
    backward = function(nd, g)
        local x, dim, keep = nd[1], nd[2], nd[3]
        if x:numel() == 0 then
            return zeros_like(x, g)
        end
        local xs, d = x, 1
        if type(dim) == "number" then
            d = normdim(dim, x:dim())
            if not keep then
                g = g:unsqueeze(d)
            end
        else
            xs = x:reshape(-1)
        end
        local others = exclusive_prod(xs, d, false):mul(exclusive_prod(xs, d, true))
        if xs ~= x then
            others = others:view(x.shape)
        end
        return others:mul(g)
    end,
}

local function max_min_backward(nd, g, which)
    local x, dim, keep = nd[1], nd[2], nd[3]
    if type(dim) ~= "number" then
        -- full reduction: split among ties (where: 0 off them even where g is NaN, as PyTorch)
        local hit = x:eq(nd.out)
        return core.where(hit, g:div(hit:sum()), 0)
    end
    local nd_x = x:dim()
    local d = normdim(dim, nd_x)
    local idx = nd.indices
    if not idx then
        local _
        _, idx = x[which](x, dim, true)
    elseif not keep then
        idx = idx:unsqueeze(d)
    end
    if not keep then
        g = g:unsqueeze(d)
    end
    local shp = {}
    for i = 1, nd_x do
        shp[i] = 1
    end
    shp[d] = x:size(d)
    local ar = core.arange(1, x:size(d) + 1, { device = x.device, dtype = "int64" }):view(shp)
    return core.where(ar:eq(idx), g, 0) -- 0 off the index even where g is NaN, as PyTorch
end

for _, which in ipairs({ "max", "min" }) do
    def {
        name = which,
        reads = { 1, "out" }, -- over all dims; over a dim, the indices
        reads_if = { indices = { "indices" } },
        backward = function(nd, g)
            return max_min_backward(nd, g, which)
        end,
    }
end

-- matmul as torch.matmul: 1-D operands are promoted to 2-D, batch dims broadcast
def {
    name = "matmul",
    reads = { { 2, 1 }, { 1, 2 } },
    backward = function(nd, g)
        local a, b = nd[1], nd[2]
        local na, nb = a:dim(), b:dim()
        if na == 1 and nb == 1 then
            return needs(a) and b:mul(g) or nil, needs(b) and a:mul(g) or nil
        end
        local a2, b2 = a, b
        if na == 1 then
            a2, g = a:unsqueeze(1), g:unsqueeze(g:dim()) -- [1, k]; g [..., 1, n]
        elseif nb == 1 then
            b2, g = b:unsqueeze(2), g:unsqueeze(g:dim() + 1) -- [k, 1]; g [..., m, 1]
        end
        local ga, gb
        if needs(a) then
            ga = g:matmul(b2:transpose(-1, -2))
            ga = reduce(ga, a2)
            if na == 1 then
                ga = ga:reshape(a.shape)
            end
        end
        if needs(b) then
            if na == 2 and nb == 2 and not b:is_contiguous() then
                -- b is usually W:t(): (g^T a)^T makes W's gradient contiguous after t's backward
                gb = g:t():matmul(a):t()
            else
                gb = a2:transpose(-1, -2):matmul(g)
                gb = reduce(gb, b2)
            end
            if nb == 1 then
                gb = gb:reshape(b.shape)
            end
        end
        return ga, gb
    end,
}

def {
    name = "t",
    view = true,
    backward = function(_, g)
        return g:t()
    end,
}

def {
    name = "transpose",
    view = true,
    backward = function(nd, g)
        return g:transpose(nd[2], nd[3])
    end,
}

local function view_backward(nd, g)
    return g:reshape(nd[1].shape)
end
for _, name in ipairs({ "view", "reshape", "squeeze" }) do
    def { name = name, view = true, backward = view_backward }
end

-- diagonal's gradient: g on the same diagonal of zeros of x's shape
def {
    name = "diagonal",
    view = true,
    backward = function(nd, g)
        local z = zeros_like(nd[1], g)
        z:diagonal(nd[2], nd[3], nd[4]):copy_(g)
        return z
    end,
}

-- the furthest storage element a geometry reaches (nil when it has no elements)
local function reach(shape, strides, offset)
    local last = offset
    for i = 1, #shape do
        if shape[i] == 0 then
            return nil
        end
        last = last + (shape[i] - 1) * strides[i]
    end
    return last
end

-- A gradient laid out as a storage: buf holds the storage's elements lo..hi, where lo..hi
-- covers every geometry given ({shape, strides, offset} each), and buf_view(buf, geometry) is
-- that geometry's view of it. as_strided's gradient and the CopySlices of a view made by
-- as_strided (a geometry over its base's storage, not over the base's elements) both need one.
local function storage_span(g, geometries)
    local lo, hi = math.huge, -1
    for i = 1, #geometries do
        local geo = geometries[i]
        local last = reach(geo[1], geo[2], geo[3])
        if last then
            lo, hi = math.min(lo, geo[3]), math.max(hi, last)
        end
    end
    if hi < 0 then
        lo, hi = 0, -1
    end
    return core.zeros({ hi - lo + 1 }, { device = g.device, dtype = g.dtype }), lo
end
local function buf_view(buf, lo, geo)
    return buf:as_strided(geo[1], geo[2], geo[3] - lo)
end

local function geometry(t)
    return { t.shape, t:stride(), t:storage_offset() }
end

-- each element of g goes to the storage element it views (summed where the view overlaps
-- itself), and x takes what lands on its own elements (PyTorch's as_strided_backward for an x
-- whose elements do not overlap)
def {
    name = "as_strided",
    view = true,
    backward = function(nd, g)
        local x = nd[1]
        local out, xg = { nd[2], nd[3], nd[4] }, geometry(x)
        local buf, lo = storage_span(g, { xg, out })
        if g:numel() > 0 then
            local pos = core.arange(1, buf:numel() + 1, { dtype = "int64", device = g.device })
            buf = buf:index_add(1, buf_view(pos, lo, out):reshape(-1), g:reshape(-1))
        end
        return buf_view(buf, lo, xg)
    end,
}

-- unfold(dim, size, step): each window's gradient added back where the window lies, one
-- index_add per position inside the windows (overlapping windows sum)
def {
    name = "unfold",
    view = true,
    backward = function(nd, g)
        local x = nd[1]
        local dim, size, step = normdim(nd[2], x:dim()), nd[3], nd[4]
        local z = zeros_like(x, g)
        local windows = g:size(dim)
        if windows == 0 or size == 0 then
            return z
        end
        local starts = core.arange(0, windows, { dtype = "int64", device = g.device }):mul(step)
        for k = 1, size do
            z = z:index_add(dim, starts:add(k), g:select(-1, k))
        end
        return z
    end,
}

def {
    name = "unsqueeze",
    view = true,
    backward = function(nd, g)
        return g:squeeze(nd[2])
    end,
}

def {
    name = "permute",
    view = true,
    backward = function(nd, g)
        local perm = nd[2]
        if type(perm) ~= "table" then
            perm = { compat.unpack(nd, 2, nd.n) }
        end
        local n = #perm
        local inv = {}
        for i = 1, n do
            inv[normdim(perm[i], n)] = i
        end
        return g:permute(inv)
    end,
}

local function identity(_, g)
    return g
end
for _, name in ipairs({ "contiguous", "clone", "pin_memory" }) do
    def { name = name, backward = identity }
end

-- A gradient that lands on one region of its input (narrow's, select's) is handed to the engine
-- as a part, which it writes into the input's gradient buffer where the region lies
-- (engine.lua's push): the three narrow views of one projection (attention's q, k and v) fill
-- one zeroed buffer instead of three zero-padded ones added together. A pass that builds a
-- graph of the gradient (create_graph) gets a plain tensor.
local PART = {}

local function region(z, p)
    if p.len then
        return z:narrow(p.dim, p.start, p.len)
    end
    return z:select(p.dim, p.start)
end

local function add_part(buf, p)
    region(buf, p):add_(p.g)
end

local function materialize(p)
    local z = zeros_like(p.x, p.g)
    region(z, p):copy_(p.g)
    return z
end

local function part(x, g, dim, start, len)
    local p = setmetatable({ x = x, g = g, dim = dim, start = start, len = len }, PART)
    if core.is_grad_enabled() then
        local z = zeros_like(x, g)
        add_part(z, p)
        return z
    end
    return p
end

def {
    name = "narrow",
    view = true,
    backward = function(nd, g)
        return part(nd[1], g, nd[2], nd[3], nd[4])
    end,
}

def {
    name = "select",
    view = true,
    backward = function(nd, g)
        return part(nd[1], g, nd[2], nd[3])
    end,
}

def {
    name = "index_select",
    reads = { 3 },
    backward = function(nd, g)
        local x = nd[1]
        local z = zeros_like(x, g)
        z:index_add_(nd[2], nd[3], g)
        return z
    end,
}

def {
    name = "expand",
    view = true,
    backward = function(nd, g)
        return g:sum_to(nd[1].shape)
    end,
}

def {
    name = "sum_to",
    backward = function(nd, g)
        return g:expand(nd[1].shape)
    end,
}

-- cat/stack: the first argument is a list of tensors; return a list of gradients
def {
    name = "cat",
    list = true,
    backward = function(nd, g)
        local ts, dim = nd[1], nd[2] or 1
        dim = normdim(dim, g:dim())
        local gs, off = {}, 1
        for i = 1, #ts do
            local t = ts[i]
            if t:dim() ~= g:dim() then -- a 1-D empty one cat left out (tide_cat)
                gs[i] = zeros_like(t, g)
            else
                local len = t:size(dim)
                gs[i] = g:narrow(dim, off, len)
                off = off + len
            end
        end
        return gs
    end,
}

def {
    name = "stack",
    list = true,
    backward = function(nd, g)
        local ts, dim = nd[1], nd[2] or 1
        dim = normdim(dim, g:dim())
        local gs = {}
        for i = 1, #ts do
            gs[i] = g:select(dim, i)
        end
        return gs
    end,
}

-- in-place ops without an out-of-place twin (the in-place node's args are the op's, args[1]
-- standing for the tensor before the op)
-- the old values are gone: a zero gradient flows to them (PyTorch's zeros_like(grad), so the
-- inputs before get a .grad of zeros, not none), as an empty part: the engine adds nothing for
-- it, and makes the zeros only where no other gradient reaches them (x:copy_(relu(x:clone()))
-- of an in-place activation costs no zeros and no add)
local function overwritten(nd, g)
    local x = nd[1]
    if x:dim() == 0 then
        return zeros_like(x, g)
    end
    return part(x, g:narrow(1, 1, 0), 1, 1, 0)
end
for _, name in ipairs({ "fill", "zero", "uniform", "normal" }) do
    def { name = name, backward = overwritten }
end

-- gradient to src, back on its device and dtype and summed to its shape (copy_ broadcasts)
local function to_source(g, src)
    if g.dtype ~= src.dtype then
        g = g:to(src.dtype)
    end
    return reduce(g:to(src.device), src)
end

-- t:gather(dim, index): each gathered element's gradient goes back to where it came from
def {
    name = "gather",
    reads = { 3 },
    backward = function(nd, g)
        local z = zeros_like(nd[1], g)
        z:scatter_add_(nd[2], nd[3], g)
        return z
    end,
}

-- src's gradient: g at the written positions, in src's shape (src may exceed index)
local function scattered_source(nd, g)
    local src = nd[4]
    if not needs(src) then
        return nil
    end
    local gs = g:gather(nd[2], nd[3])
    local same = gs:dim() == src:dim()
    for d = 1, gs:dim() do
        same = same and gs.shape[d] == src.shape[d]
    end
    if same then
        return to_source(gs, src)
    end
    local z, part = zeros_like(src, gs), nil
    part = z
    for d = 1, gs:dim() do
        part = part:narrow(d, 1, gs.shape[d])
    end
    part:copy_(gs)
    return to_source(z, src)
end

-- t:scatter(dim, index, src): the overwritten positions get no gradient in t
def {
    name = "scatter",
    reads = { 3 },
    backward = function(nd, g)
        local gt
        if needs(nd[1]) then
            gt = g:scatter(nd[2], nd[3], 0)
        end
        return gt, nil, nil, scattered_source(nd, g)
    end,
}

def {
    name = "scatter_add",
    reads = { 3 },
    backward = function(nd, g)
        return needs(nd[1]) and g or nil, nil, nil, scattered_source(nd, g)
    end,
}

-- sort / topk: the values' gradient goes back to the positions the indices name
local function sorted_backward(nd, g, dim)
    local z = zeros_like(nd[1], g)
    if nd[1]:dim() == 0 then
        return g:clone()
    end
    z:scatter_(dim or -1, nd.indices, g)
    return z
end

def {
    name = "sort",
    reads = { "indices" },
    backward = function(nd, g)
        return sorted_backward(nd, g, nd[2])
    end,
}

def {
    name = "topk",
    reads = { "indices" },
    backward = function(nd, g)
        return sorted_backward(nd, g, nd[3])
    end,
}

-- t:masked_fill(mask, v): the filled positions get no gradient in t; a tensor v gets their sum
def {
    name = "masked_fill",
    reads = { 2 },
    backward = function(nd, g)
        local gt, gv
        if needs(nd[1]) then -- (summed back where t was broadcast to the mask)
            gt = reduce(g:masked_fill(nd[2], 0), nd[1])
        end
        if needs(nd[3]) then
            gv = to_source(g:mul(nd[2]):sum(), nd[3])
        end
        return gt, nil, gv
    end,
}

-- t:masked_select(mask): g goes back to the selected positions (nd.indices, 1-based, in the
-- broadcast shape of t and mask), then is summed to t's shape
def {
    name = "masked_select",
    reads = { "indices" },
    backward = function(nd, g)
        local x, m = nd[1], nd[2]
        local shape, n = {}, math.max(x:dim(), m:dim())
        for d = 1, n do
            local a = x.shape[x:dim() - n + d] or 1
            local b = m.shape[m:dim() - n + d] or 1
            shape[d] = a == 1 and b or a
        end
        local numel = 1
        for d = 1, n do
            numel = numel * shape[d]
        end
        local z = core.zeros({ numel }, { device = x.device, dtype = g.dtype })
        z:index_add_(1, nd.indices, g)
        return reduce(z:view(shape), x)
    end,
}

-- t:repeat_interleave(repeats[, dim | {dim =}]): each source sums the gradients of its copies
-- (nd.indices: the 1-based source of each result position along dim; no dim: the flattened t)
def {
    name = "repeat_interleave",
    reads = { "indices" },
    backward = function(nd, g)
        local x, o = nd[1], nd[3]
        local dim = type(o) == "table" and o.dim or o
        if dim == nil then
            local z = core.zeros({ x:numel() }, { device = x.device, dtype = g.dtype })
            z:index_add_(1, nd.indices, g)
            return z:reshape(x.shape)
        end
        local z = zeros_like(x, g)
        z:index_add_(dim, nd.indices, g)
        return z
    end,
}

def {
    name = "tril",
    backward = function(nd, g)
        return g:tril(nd[2] or 0)
    end,
}

def {
    name = "triu",
    backward = function(nd, g)
        return g:triu(nd[2] or 0)
    end,
}

-- flip(dims) or flip(d1, d2, ...): flipping again undoes it
def {
    name = "flip",
    backward = function(nd, g)
        local dims = {}
        for i = 2, nd.n do
            local d = nd[i]
            if type(d) == "table" then
                for _, e in ipairs(d) do
                    dims[#dims + 1] = e
                end
            else
                dims[#dims + 1] = d
            end
        end
        return g:flip(dims)
    end,
}

def {
    name = "roll",
    backward = function(nd, g)
        local sh = nd[2]
        if type(sh) == "table" then
            local neg = {}
            for i, v in ipairs(sh) do
                neg[i] = -v
            end
            sh = neg
        else
            sh = -sh
        end
        return g:roll(sh, nd[3])
    end,
}

def {
    name = "copy",
    backward = function(nd, g)
        return overwritten(nd, g), to_source(g, nd[2])
    end,
}

-- t:index_add_(dim, index, src)
def {
    name = "index_add",
    backward = function(nd, g)
        return g, nil, nil, to_source(g:index_select(nd[2], nd[3]), nd[4])
    end,
}

-- t[i] = v: the slice's gradient goes to v, the rest to t as it was
def {
    name = "setindex",
    backward = function(nd, g)
        local i, v = nd[2], nd[3]
        local gt = g:clone()
        gt:select(1, i):zero_()
        local gv
        if is_tensor(v) then
            gv = to_source(g:select(1, i), v)
        end
        return gt, nil, gv
    end,
}

-- one kernel pass per line (the kernel row softmax_backward: y's lines along dim as [len,
-- inner], d = len * inner); the composite(y, g, dim) when a graph of the gradient is being built
-- (create_graph), for other dtypes and for a tensor with no elements
local function softmax_def(name, log, composite)
    def {
        name = name,
        reads = { "out" },
        frees = { 1 },
        backward = function(nd, g)
            local y, dim = nd.out, nd[2] or -1
            local n = y:dim()
            if RELU_FUSED[y.dtype] and g.dtype == y.dtype and not core.is_grad_enabled() and
                y:numel() > 0 then
                local at, inner = dim < 0 and n + 1 + dim or dim, 1
                for k = at + 1, n do
                    inner = inner * y:size(k)
                end
                return K.softmax_backward(y, g, y:size(at) * inner, inner, log and 1 or 0)
            end
            return composite(y, g, dim)
        end,
    }
end

softmax_def("softmax", false, function(y, g, dim)
    return y:mul(g:sub(g:mul(y):sum(dim, true)))
end)
softmax_def("log_softmax", true, function(y, g, dim)
    return g:sub(y:exp():mul(g:sum(dim, true)))
end)

-- where(cond, a, b): the binding records a:where(cond, b) in that order too
def {
    name = "where",
    reads = { 1 },
    backward = function(nd, g)
        local c, a, b = nd[1], nd[2], nd[3]
        local ga, gb
        -- where, not a product: the branch not taken gets 0 even where g is NaN, as PyTorch
        if needs(a) then
            ga = reduce(core.where(c, g, 0), a)
        end
        if needs(b) then
            gb = reduce(core.where(c, 0, g), b)
        end
        return nil, ga, gb
    end,
}

def {
    name = "im2col",
    backward = function(nd, g)
        local x = nd[1]
        local geom = { nd[2], nd[3], nd[4] or 1, nd[5] or 1, nd[6] or 0, nd[7] or 0, nd[8], nd[9] }
        local y = K.col2im(g:detach(), x:size(2), x:size(3), x:size(4), compat.unpack(geom, 1, 8))
        -- create_graph: the gradient is differentiable again (col2im's node, defined with
        -- F.fold, whose gradient is im2col's: second and higher derivatives through F.unfold)
        local engine = require("tide.autograd.engine")
        if engine.needs_record(g) then
            require("tide.nn.functional")
            engine.record("col2im", y, g).geom = geom
        end
        return y
    end,
}

def {
    name = "maxpool2d",
    reads = { "indices" },
    backward = function(nd, g)
        local x = nd[1]
        local idx = nd.indices
        if not idx then
            local _
            _, idx = K.maxpool2d(x, nd[2], nd[3], nd[4] or nd[2], nd[5] or nd[3], nd[6] or 0,
                nd[7] or 0, nd[8], nd[9], nd[10])
        end
        return K.maxpool2d_backward(g, idx, x:size(3), x:size(4))
    end,
}

-- transfers and casts: the gradient goes back to the source's device and dtype
local function transfer_backward(nd, g)
    local x = nd[1]
    local dt = x.dtype
    if g.dtype ~= dt then
        g = g:to(dt)
    end
    return g:to(x.device)
end
for _, name in ipairs({ "to", "cpu", "cuda", "float", "double", "half", "bfloat16", "type_as" }) do
    def { name = name, backward = transfer_backward }
end

-- what the engine shares: the tensor tests, its part of the gradients (narrow's and select's
-- partial gradients) and the gradient laid out as a storage (CopySlices of as_strided views)
return {
    is_tensor = is_tensor,
    needs = needs,
    PART = PART,
    add_part = add_part,
    materialize = materialize,
    geometry = geometry,
    storage_span = storage_span,
    buf_view = buf_view,
}
