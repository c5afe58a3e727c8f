-- tide.complex.tensor: PyTorch's complex tensors (complex64, complex128) as a table over one real
-- tensor of shape [..., 2] (the real and imaginary parts side by side, torch.view_as_real's
-- layout) on one device: view_as_real(z) is that tensor and view_as_complex(x) wraps x, so both
-- share storage as PyTorch's do, and every complex op is tide's real ops over the pair, so
-- gradients and device rules are the real ones'. Dims are those of the complex shape (the
-- pair's without its last): 1-based, negative from the end. docs/API.md, "Complex tensors".
local core = require("tide.core")
local compat = require("tide._compat")
local raise = require("tide.autograd.raise")

local is_tensor = core.is_tensor
local unpack = compat.unpack

local Complex = { __name = "ComplexTensor" }

local COMPLEX_OF = { float32 = "complex64", float64 = "complex128" }
local REAL_OF = { complex64 = "float32", complex128 = "float64" }

local function is_complex(v)
    return type(v) == "table" and getmetatable(v) == Complex
end
Complex.is = is_complex

-- the complex tensor over ri, a float32 or float64 tensor whose last dim has size 2 (checked by
-- the caller)
local function wrap(ri)
    assert(is_tensor(ri) and ri:size(-1) == 2, "complex.wrap: expected a [..., 2] real tensor")
    return setmetatable({ _ri = ri }, Complex)
end
Complex.wrap = wrap

-- z's real tensor [..., 2]
function Complex.ri(z)
    return z._ri
end

Complex.COMPLEX_OF = COMPLEX_OF
Complex.REAL_OF = REAL_OF

local M = {} -- the methods (the metatable's __index looks here)
Complex.methods = M

local function tide()
    return require("tide")
end

local function shape_str(s)
    return "[" .. table.concat(s, ", ") .. "]"
end

-- ---- dims of the complex shape ----
local function complex_sizes(z)
    local s = z._ri:size()
    local out = {}
    for i = 1, #s - 1 do
        out[i] = s[i]
    end
    return out
end

-- d (1-based, negative from the end) as a positive dim of a complex tensor of n dims
local function norm_dim(op, d, n)
    local i = type(d) == "number" and compat.tointeger(d) or nil
    if i == nil then
        raise(("tide: %s: dim must be an integer, got %s"):format(op, tostring(d)))
    end
    local p = i < 0 and i + n + 1 or i
    if p < 1 or p > n then
        raise(("tide: %s: dim %d is out of range for a complex tensor of %d dims (dims are " ..
            "1-based, -1 the last)"):format(op, i, n))
    end
    return p
end
Complex.norm_dim = norm_dim

-- the varargs sizes of view / reshape / expand (numbers, or one list or tide.Size), with the
-- pair's 2 appended; a size that is no number (a nil in the middle) raises naming it
local function sizes_of(op, ...)
    local n, first = select("#", ...), ...
    local s = { ... }
    if n == 1 and type(first) == "table" then
        s, n = first, #first
    end
    local out = {}
    for i = 1, n do
        if type(s[i]) ~= "number" then
            raise(("tide: %s: sizes must be integers, got %s at position %d"):format(op,
                type(s[i]), i))
        end
        out[i] = s[i]
    end
    out[n + 1] = 2
    return out
end

-- ---- properties ----
local PROPS = {}
Complex.props = PROPS

function PROPS.shape(z)
    return tide().Size(complex_sizes(z))
end

function PROPS.dtype(z)
    return COMPLEX_OF[z._ri.dtype]
end

function PROPS.real(z)
    return z._ri:select(-1, 1)
end

function PROPS.imag(z)
    return z._ri:select(-1, 2)
end

function PROPS.grad(z)
    local g = z._ri.grad
    return g ~= nil and wrap(g) or nil
end

-- z.data: PyTorch's alias of z's values outside autograd (a complex parameter's p.data)
function PROPS.data(z)
    return wrap(z._ri.data)
end

-- PyTorch's z.ndim (the complex dims, as z:dim())
function PROPS.ndim(z)
    return z._ri:dim() - 1
end

-- the real tensor's other properties, over the complex dims (each would read nil otherwise)
function PROPS.T(z)
    local n, perm = z._ri:dim() - 1, {}
    for i = 1, n do
        perm[i] = n + 1 - i
    end
    return n < 2 and z or M.permute(z, perm)
end

-- a wrong dim count raises the real property's error (z.real has the complex dims)
local function check_dims(z, k, ok)
    if not ok then
        return z.real[k]
    end
end

function PROPS.mT(z)
    check_dims(z, "mT", z:dim() >= 2)
    return M.transpose(z, -2, -1)
end

function PROPS.H(z)
    check_dims(z, "H", z:dim() == 2)
    return M.conj(M.t(z))
end

function PROPS.mH(z)
    check_dims(z, "mH", z:dim() >= 2)
    return M.conj(M.transpose(z, -2, -1))
end

function PROPS.itemsize(z)
    return 2 * z._ri.itemsize
end

-- the pair's own: the same for the complex tensor it holds
for _, k in ipairs({ "device", "requires_grad", "is_leaf", "is_cuda", "is_cpu", "nbytes", "layout",
    "is_meta", "is_sparse", "is_quantized", "retains_grad" }) do
    PROPS[k] = function(z) return z._ri[k] end
end

-- the method names, for the error of a real-only one
local supported
local function supported_list()
    if not supported then
        local names = {}
        for k in pairs(M) do
            names[#names + 1] = k
        end
        for k in pairs(PROPS) do
            names[#names + 1] = k
        end
        table.sort(names)
        supported = table.concat(names, ", ")
    end
    return supported
end

local missing = {}
local function unsupported(k)
    local f = missing[k]
    if f == nil then
        f = function()
            raise(("tide: %s: complex tensors support %s; use z.real / z.imag or " ..
                "tide.view_as_real(z) for the real ops"):format(k, supported_list()))
        end
        missing[k] = f
    end
    return f
end
Complex.unsupported = unsupported

local index_read -- below
local ORDERED -- below: the order-based names, refused

function Complex.__index(z, k)
    local m = M[k]
    if m ~= nil then
        return m
    end
    local p = PROPS[k]
    if p ~= nil then
        return p(z)
    end
    if type(k) == "string" then
        local o = ORDERED[k]
        if o ~= nil then
            return o
        end
        if core.Tensor[k] ~= nil then
            return unsupported(k)
        end
        return nil
    end
    return index_read(z, k)
end

-- ---- queries ----
function M.size(z, d)
    if d == nil then
        return PROPS.shape(z)
    end
    return z._ri:size(norm_dim("size", d, z._ri:dim() - 1))
end

function M.dim(z)
    return z._ri:dim() - 1
end
M.ndimension = M.dim

function M.numel(z)
    return math.floor(z._ri:numel() / 2)
end

function M.is_complex()
    return true
end

function M.is_floating_point()
    return false
end

function M.element_size(z)
    return 2 * z._ri:element_size()
end

function M.is_contiguous(z)
    return z._ri:is_contiguous()
end

function M.stride(z, d)
    local s = z._ri:stride()
    local out = {}
    for i = 1, #s - 1 do
        out[i] = math.floor(s[i] / 2) -- in complex elements, as PyTorch's
    end
    if d == nil then
        return out
    end
    return out[norm_dim("stride", d, #out)]
end

-- ---- autograd and copies ----
function M.requires_grad_(z, flag)
    z._ri:requires_grad_(flag == nil and true or flag)
    return z
end

function M.detach(z)
    return wrap(z._ri:detach())
end

function M.clone(z)
    return wrap(z._ri:clone())
end

function M.contiguous(z)
    local ri = z._ri:contiguous()
    return rawequal(ri, z._ri) and z or wrap(ri)
end

-- ---- moves and casts ----
local REAL_DTYPES = { float32 = true, float64 = true, float16 = true, bfloat16 = true,
    int32 = true, int64 = true, uint8 = true, bool = true, int8 = true, int16 = true }

local function to_real_dtype(op, dt)
    if REAL_OF[dt] then
        return REAL_OF[dt]
    end
    raise(("tide: %s: converting a complex tensor to %s would drop its imaginary part " ..
        "(PyTorch warns and discards it); take z.real (or z:abs()) for a real tensor"):format(op,
        dt))
end

-- z:to(device), z:to(dtype), z:to(device, dtype), z:to(other), z:to({device =, dtype =})
function M.to(z, ...)
    local a = compat.pack(...)
    local device, dtype, opts
    for i = 1, a.n do
        local v = a[i]
        if is_complex(v) then
            device, dtype = v.device, v._ri.dtype
        elseif is_tensor(v) then
            device = v.device
            dtype = to_real_dtype("to", v.dtype)
        elseif type(v) == "string" and (REAL_OF[v] or REAL_DTYPES[v]) then
            dtype = to_real_dtype("to", v)
        elseif type(v) == "table" then
            opts = {}
            for k, x in pairs(v) do
                opts[k] = x
            end
            if opts.dtype ~= nil then
                opts.dtype = to_real_dtype("to", opts.dtype)
            end
        elseif v ~= nil then
            device = v
        end
    end
    local ri = z._ri
    if device ~= nil and dtype ~= nil then
        ri = ri:to(device, dtype)
    elseif device ~= nil then
        ri = ri:to(device)
    elseif dtype ~= nil then
        ri = ri:to(dtype)
    end
    if opts ~= nil then
        ri = ri:to(opts)
    end
    return rawequal(ri, z._ri) and z or wrap(ri)
end

function M.cpu(z)
    return M.to(z, "cpu")
end

function M.cuda(z, dev)
    return wrap(z._ri:cuda(dev))
end

function M.float()
    to_real_dtype("float", "float32")
end

function M.double()
    to_real_dtype("double", "float64")
end

function M.half()
    to_real_dtype("half", "float16")
end

function M.cfloat(z)
    return M.to(z, "complex64")
end

function M.cdouble(z)
    return M.to(z, "complex128")
end

-- ---- arithmetic ----
local function stack2(re, im)
    return tide().stack({ re, im }, -1)
end
Complex.stack2 = stack2

local function what(v)
    if is_complex(v) then
        return "a complex tensor"
    end
    return is_tensor(v) and "a tensor" or type(v)
end

local function check_operand(op, v)
    if not (is_complex(v) or is_tensor(v) or type(v) == "number") then
        raise(("tide: %s: a complex tensor combines with a complex tensor, a real tensor or a " ..
            "number, got %s"):format(op, what(v)))
    end
end

-- a real tensor x as a complex one's pair [..., 2] (imaginary part 0, an infinite x's too)
local function real_pair(x)
    return stack2(x, tide().zeros_like(x))
end

local function add(a, b)
    check_operand("add", a)
    check_operand("add", b)
    if not is_complex(a) then
        a, b = b, a
    end
    if is_complex(b) then
        return wrap(a._ri + b._ri)
    elseif is_tensor(b) and b:dim() > 0 then
        return wrap(a._ri + real_pair(b))
    end
    -- a number or a 0-d tensor: PyTorch's promotion takes neither's precision over a complex64
    local ri = a._ri
    return wrap(stack2(ri:select(-1, 1) + b, ri:select(-1, 2)))
end

local function neg(a)
    return wrap(-a._ri)
end

local function sub(a, b)
    check_operand("sub", a)
    check_operand("sub", b)
    if is_complex(b) then
        return add(a, neg(b))
    end
    return add(a, -b)
end

local function mul(a, b)
    check_operand("mul", a)
    check_operand("mul", b)
    if not is_complex(a) then
        a, b = b, a
    end
    if is_complex(b) then
        local ar, ai = a._ri:select(-1, 1), a._ri:select(-1, 2)
        local br, bi = b._ri:select(-1, 1), b._ri:select(-1, 2)
        return wrap(stack2(ar * br - ai * bi, ar * bi + ai * br))
    elseif is_tensor(b) then -- (a 0-d b as it is: it promotes as a scalar, PyTorch's rule)
        return wrap(a._ri * (b:dim() > 0 and b:unsqueeze(-1) or b))
    end
    return wrap(a._ri * b)
end

local function abs2(z)
    local re, im = z._ri:select(-1, 1), z._ri:select(-1, 2)
    return re * re + im * im
end

local function reciprocal(z)
    local d = abs2(z)
    return wrap(stack2(z._ri:select(-1, 1) / d, -z._ri:select(-1, 2) / d))
end

local function div(a, b)
    check_operand("div", a)
    check_operand("div", b)
    if is_complex(b) then
        if is_complex(a) then
            if a._ri.dtype == "float64" then
                b = M.to(b, "complex128") -- |b|^2 in the promoted dtype, as PyTorch's
            end
            local ar, ai = a._ri:select(-1, 1), a._ri:select(-1, 2)
            local br, bi = b._ri:select(-1, 1), b._ri:select(-1, 2)
            local d = br * br + bi * bi
            return wrap(stack2((ar * br + ai * bi) / d, (ai * br - ar * bi) / d))
        end
        if is_tensor(a) and a.dtype == "float64" then
            b = M.to(b, "complex128") -- computed in the promoted dtype, as PyTorch's
        end
        return mul(reciprocal(b), a)
    elseif is_tensor(b) then -- PyTorch divides by b + 0j: a zero b gives nan + nanj, not inf
        local d = b:dim() > 0 and b:unsqueeze(-1) or b
        return wrap(tide().where(d:eq(0), 0 / 0, a._ri / d))
    end
    return wrap(b == 0 and a._ri * (0 / 0) or a._ri / b)
end

Complex.__add, Complex.__sub, Complex.__mul, Complex.__div, Complex.__unm = add, sub, mul, div,
    neg
M.add, M.sub, M.mul, M.div, M.neg = add, sub, mul, div, neg
M.multiply, M.divide, M.subtract, M.negative = mul, div, sub, neg
M.reciprocal = reciprocal

function M.conj(z)
    local ri = z._ri
    return wrap(stack2(ri:select(-1, 1), -ri:select(-1, 2)))
end
M.conj_physical, M.resolve_conj = M.conj, M.clone

-- hypot(re, im) (no overflow at 3e20 nor underflow at 1e-30 in float32); its gradient at 0 is
-- 0, as PyTorch's (sgn(0) = 0), not NaN
local function modulus(re, im, zero)
    local T = tide()
    return T.where(zero, 0, T.where(zero, 1, re):hypot(im))
end

local function is_zero(re, im)
    return re:eq(0):logical_and(im:eq(0))
end

-- |z|: std::abs's (hypot: |inf + nanj| = inf)
function M.abs(z)
    local re, im = z._ri:select(-1, 1), z._ri:select(-1, 2)
    if not z._ri.requires_grad then -- (the zeros' care is for the gradient)
        return re:hypot(im)
    end
    return modulus(re, im, is_zero(re, im))
end
M.absolute = M.abs

-- arg z = atan2(im, re), signed zeros as PyTorch's (arg(-0 + 0j) = pi); gradient 0 at 0
function M.angle(z)
    local re, im = z._ri:select(-1, 1), z._ri:select(-1, 2)
    local T = tide()
    if not z._ri.requires_grad then -- (the zeros' care is for the gradient)
        return T.atan2(im, re)
    end
    local zero = is_zero(re, im)
    return T.where(zero, T.atan2(im:detach(), re:detach()),
        T.atan2(T.where(zero, 0, im), T.where(zero, 1, re)))
end

function M.exp(z)
    local re, im = z._ri:select(-1, 1), z._ri:select(-1, 2)
    local r = re:exp()
    return wrap(stack2(r * im:cos(), r * im:sin()))
end

function M.square(z)
    return mul(z, z)
end

-- z ^ p for a number p: repeated products for an integer p (exact as PyTorch's), the polar
-- form otherwise
function M.pow(z, p, ...)
    if select("#", ...) > 0 and select(1, ...) ~= nil then
        raise("tide: pow: takes one exponent, got more arguments")
    end
    if type(z) == "number" and is_complex(p) then -- x ^ z = exp(z log x), log x of x + 0j
        if z == 0 then
            raise("tide: pow: 0 ^ z of a complex z is not supported; compute it as " ..
                "tide.where(z:eq(0), 1, 0) for the exact powers, or give a positive base")
        end
        local l, th = math.log(math.abs(z)), z < 0 and math.pi or 0
        local pr, pim = p._ri:select(-1, 1), p._ri:select(-1, 2)
        return M.exp(wrap(stack2(pr * l - pim * th, pr * th + pim * l)))
    end
    if is_complex(p) or (is_tensor(p) and is_complex(z)) then
        -- z ^ w = exp(w log z) (a real tensor base or exponent taken as x + 0j), PyTorch's
        local base = is_complex(z) and z or (is_tensor(z) and wrap(real_pair(z)))
        if not base then
            raise(("tide: pow: expected a number, a tensor or a complex tensor as the base, " ..
                "got %s"):format(what(z)))
        end
        local w = is_complex(p) and p or wrap(real_pair(p))
        return M.exp(mul(w, M.log(base)))
    end
    if type(p) ~= "number" then
        raise(("tide: pow: a complex tensor's exponent must be a number, a tensor or a complex " ..
            "tensor, got %s"):format(what(p)))
    end
    if p == 0.5 then
        return M.sqrt(z) -- PyTorch's pow(z, 0.5) is sqrt (exact on the axes)
    end
    local n = compat.tointeger(p)
    if n ~= nil and n >= -16 and n <= 16 then -- (math.abs(math.mininteger) is negative)
        if n == 0 then
            local re = z._ri:select(-1, 1)
            return wrap(stack2(tide().ones_like(re), tide().zeros_like(re)))
        end
        local base, out = z, nil
        local k = math.abs(n)
        while k > 0 do
            if k % 2 == 1 then
                out = out and mul(out, base) or base
            end
            k = (k - k % 2) / 2
            if k > 0 then
                base = mul(base, base)
            end
        end
        return n < 0 and reciprocal(out) or out
    end
    local r, t = M.abs(z):pow(p), M.angle(z) * p
    return wrap(stack2(r * t:cos(), r * t:sin()))
end
Complex.__pow = M.pow

-- what complex numbers lack (PyTorch refuses them too): a tide: error, not Lua's
local function refused(op, what_)
    return function()
        raise(("tide: %s: complex tensors do not support it (%s); use z.real and z.imag")
            :format(op, what_))
    end
end
Complex.__mod = refused("remainder", "no order on complex numbers")
Complex.__idiv = refused("floor_divide", "no order on complex numbers")
Complex.__lt = refused("lt", "no order on complex numbers")
Complex.__le = refused("le", "no order on complex numbers")

-- the order-based methods PyTorch refuses on complex tensors: the same error as z < w's
ORDERED = {}
for _, k in ipairs({ "lt", "le", "gt", "ge", "less", "less_equal", "greater", "greater_equal",
    "max", "min", "amax", "amin", "aminmax", "argmax", "argmin", "maximum", "minimum", "fmax",
    "fmin", "sort", "argsort", "msort", "topk", "kthvalue", "median", "nanmedian", "mode",
    "cummax", "cummin", "clamp", "clip", "clamp_min", "clamp_max", "remainder", "fmod",
    "floor_divide" }) do
    ORDERED[k] = refused(k, "no order on complex numbers")
end

-- #z: the length of the first dim, as a real tensor's (a 0-d one raises)
function Complex.__len(z)
    return #z._ri:select(-1, 1)
end

function M.retain_grad(z)
    z._ri:retain_grad()
    return z
end

-- the principal square root, without cancellation: t = sqrt((|re| + |z|) / 2); re >= 0:
-- t + i im / 2t, else |im| / 2t + i copysign(t, im) (sqrt(-4 - 0j) = -2j, PyTorch's); 0 and an
-- infinite im as PyTorch's (sqrt(x + inf j) = inf + inf j, sqrt(inf + 0j) = inf + 0j)
function M.sqrt(z)
    local re, im = z._ri:select(-1, 1), z._ri:select(-1, 2)
    local T, zero = tide(), is_zero(re, im)
    local t = ((re:abs() + modulus(re, im, zero)) * 0.5):sqrt()
    local t2 = T.where(zero, 1, t) * 2
    local pos = re:ge(0)
    local a = T.where(pos, t, im:abs() / t2)
    local b = T.where(pos, im / t2, T.where(im:signbit(), -t, t))
    local im_inf = im:abs():eq(1 / 0)
    a = T.where(im_inf, 1 / 0, T.where(zero, 0, a))
    b = T.where(im_inf:logical_or(zero), im, b)
    return wrap(stack2(a, b))
end

-- log |z| + i arg z
function M.log(z)
    return wrap(stack2(M.abs(z):log(), M.angle(z)))
end

-- sin(a + bi) = sin a cosh b + i cos a sinh b; cos(a + bi) = cos a cosh b - i sin a sinh b
function M.sin(z)
    local a, b = z._ri:select(-1, 1), z._ri:select(-1, 2)
    return wrap(stack2(a:sin() * b:cosh(), a:cos() * b:sinh()))
end

function M.cos(z)
    local a, b = z._ri:select(-1, 1), z._ri:select(-1, 2)
    return wrap(stack2(a:cos() * b:cosh(), -(a:sin() * b:sinh())))
end

-- sigmoid(z) = 1 / (1 + exp(-z)); tanh(z) = (exp(2z) - 1) / (exp(2z) + 1): RetNet's complex
-- swish gate
function M.sigmoid(z)
    return reciprocal(add(M.exp(neg(z)), 1))
end

function M.tanh(z)
    local e = M.exp(mul(z, 2))
    return div(sub(e, 1), add(e, 1))
end

-- PyTorch's p-norms of a complex tensor are those of |z|
function M.norm(z, ...)
    return M.abs(z):norm(...)
end

-- z (+) value * t1 * t2 and z + value * t1 / t2 (value a number: PyTorch's keyword, by position
-- or {value =})
local function value_of(op, v, ...)
    if select("#", ...) > 0 and select(1, ...) ~= nil then
        raise(("tide: %s: takes tensor1, tensor2 and value, got more"):format(op))
    end
    if type(v) == "table" and not is_tensor(v) and not is_complex(v) then
        for k in pairs(v) do
            if k ~= "value" then
                raise(("tide: %s: unknown option %s; it takes value"):format(op, tostring(k)))
            end
        end
        v = v.value
    end
    if v ~= nil and type(v) ~= "number" then
        raise(("tide: %s: value must be a number, got %s"):format(op, what(v)))
    end
    return v or 1
end

-- tensor1 and tensor2 of addcmul / addcdiv: tensors, complex or real
local function tensor_operands(op, t1, t2)
    local operands = { t1, t2 }
    for i = 1, 2 do -- (not ipairs: it stops at a nil tensor1)
        local t = operands[i]
        if not (is_complex(t) or is_tensor(t)) then
            raise(("tide: %s: tensor%d must be a tensor (complex or real), got %s"):format(op, i,
                what(t)))
        end
    end
end

function M.addcmul(z, t1, t2, value, ...)
    tensor_operands("addcmul", t1, t2)
    local v = value_of("addcmul", value, ...)
    local prod = (is_complex(t1) or is_complex(t2)) and mul(t1, t2) or t1 * t2
    return add(z, is_complex(prod) and mul(prod, v) or prod * v)
end

function M.addcdiv(z, t1, t2, value, ...)
    tensor_operands("addcdiv", t1, t2)
    local v = value_of("addcdiv", value, ...)
    local q = (is_complex(t1) or is_complex(t2)) and div(t1, t2) or t1 / t2
    return add(z, is_complex(q) and mul(q, v) or q * v)
end

-- elementwise comparisons: both parts equal (a real operand has imaginary part 0)
local function parts(v)
    if is_complex(v) then
        return v._ri:select(-1, 1), v._ri:select(-1, 2)
    elseif is_tensor(v) or type(v) == "number" then
        return v, 0
    end
    raise(("tide: eq: expected a complex tensor, a real tensor or a number, got %s"):format(
        what(v)))
end

function M.eq(z, other)
    local ar, ai = parts(z)
    local br, bi = parts(other)
    return ar:eq(br):logical_and(ai:eq(bi))
end

function M.ne(z, other)
    return M.eq(z, other):logical_not()
end

-- PyTorch's complex isnan / isinf / isfinite / isreal: bool tensors of z's shape, from the parts
function M.isnan(z)
    return z._ri:select(-1, 1):isnan():logical_or(z._ri:select(-1, 2):isnan())
end

function M.isinf(z)
    return z._ri:select(-1, 1):isinf():logical_or(z._ri:select(-1, 2):isinf())
end

function M.isfinite(z)
    return z._ri:select(-1, 1):isfinite():logical_and(z._ri:select(-1, 2):isfinite())
end

function M.isreal(z)
    return z._ri:select(-1, 2):eq(0)
end

-- tide's conj is physical (PyTorch's is a lazy view): nothing to resolve, no conj / neg bit
function M.is_conj()
    return false
end
M.is_neg = M.is_conj

-- z:istft(n_fft, ...) (PyTorch's method of a complex spectrogram): tide.fft.istft
function M.istft(z, ...)
    return require("tide.fft").istft(z, ...)
end

-- PyTorch's complex isclose: |z - other| <= atol + rtol |other|, NaN as given by equal_nan
local ISCLOSE = { "rtol", "atol", "equal_nan" }
function M.isclose(z, other, ...)
    -- PyTorch's isclose(other, rtol=1e-05, atol=1e-08, equal_nan=False): by position, by name
    -- in a last table, or mixed
    local o = require("tide.pytorch_args").merge("isclose", ISCLOSE, ...) or {}
    for k, v in pairs(o) do
        if k ~= "rtol" and k ~= "atol" and k ~= "equal_nan" then
            raise(("tide: isclose: unknown option %s; it takes rtol, atol, equal_nan"):format(
                tostring(k)))
        elseif k ~= "equal_nan" and type(v) ~= "number" then
            raise(("tide: isclose: %s must be a number, got %s"):format(k, what(v)))
        end
    end
    local rtol, atol = o.rtol or 1e-5, o.atol or 1e-8
    local b = is_complex(other) and other or add(z:mul(0), other)
    local close = M.abs(sub(z, b)):le(M.abs(b) * rtol + atol):logical_or(M.eq(z, b))
    if o.equal_nan then
        local zn, bn = z._ri:isnan():any(-1), b._ri:isnan():any(-1)
        close = close:logical_or(zn:logical_and(bn))
    end
    return close
end

function M.allclose(z, other, opts, ...)
    return M.isclose(z, other, opts, ...):all():item()
end

-- masked_fill(mask, value): value a number (the real part) or a 0-dim complex tensor
function M.masked_fill(z, mask, value)
    local vr, vi = value, 0
    if is_complex(value) then
        vr, vi = value._ri:select(-1, 1), value._ri:select(-1, 2)
    elseif type(value) ~= "number" then
        raise(("tide: masked_fill: a complex tensor's fill value is a number or a complex " ..
            "tensor, got %s"):format(what(value)))
    end
    local re, im = z._ri:select(-1, 1), z._ri:select(-1, 2)
    return wrap(stack2(re:masked_fill(mask, vr), im:masked_fill(mask, vi)))
end

function M.index_select(z, d, index)
    return wrap(z._ri:index_select(norm_dim("index_select", d, z:dim()), index))
end

-- gather(dim, index): the pair's, index over the complex dims (grad scattered back, both parts)
function M.gather(z, d, index, ...)
    d = norm_dim("gather", d, z:dim())
    if not is_tensor(index) then
        raise(("tide: gather: index must be an int64 tensor, got %s"):format(what(index)))
    end
    local s = index:size()
    s[#s + 1] = 2
    return wrap(z._ri:gather(d, index:unsqueeze(-1):expand(unpack(s)), ...))
end

-- sgn(z) = z / |z| (0 at 0), PyTorch's; its gradient the quotient's (0 at 0)
function M.sgn(z)
    local re, im = z._ri:select(-1, 1), z._ri:select(-1, 2)
    local zero = is_zero(re, im)
    local r = tide().where(zero, 1, modulus(re, im, zero)):unsqueeze(-1)
    return wrap(z._ri:div(r):masked_fill(zero:unsqueeze(-1), 0))
end

-- dot(z, w) and vdot(z, w) (conj(z) . w, PyTorch's) of two 1-D tensors
local function dot_args(op, z, w)
    if z:dim() ~= 1 or not (is_complex(w) or is_tensor(w)) or w:dim() ~= 1 then
        raise(("tide: %s: 1D tensors expected, but got %s and %s"):format(op,
            shape_str(complex_sizes(z)), what(w)))
    end
end

function M.dot(z, w)
    dot_args("dot", z, w)
    return M.sum(mul(z, w))
end

function M.vdot(z, w)
    dot_args("vdot", z, w)
    return M.sum(mul(M.conj(z), w))
end

-- outer(z, w) of two 1-D tensors (either complex)
function M.outer(z, w)
    if z:dim() ~= 1 or not (is_complex(w) or is_tensor(w)) or w:dim() ~= 1 then
        raise(("tide: outer: expected two 1-D tensors, got %s and %s"):format(
            shape_str(complex_sizes(z)), what(w)))
    end
    local col = M.unsqueeze(z, 2)
    return mul(col, is_complex(w) and M.unsqueeze(w, 1) or w:unsqueeze(1))
end
M.ger = M.outer

-- type_as(other): other's complex dtype (a real other would drop the imaginary part: raises)
function M.type_as(z, other)
    if is_complex(other) then
        return M.to(z, other.dtype)
    end
    raise(("tide: type_as: converting a complex tensor to %s would drop its imaginary part; " ..
        "take z.real (or z:abs()) for a real tensor"):format(what(other)))
end

-- new_zeros / new_ones / new_empty / new_full(size...[, opts]): complex in z's dtype and device
for _, k in ipairs({ "zeros", "ones", "empty", "full" }) do
    M["new_" .. k] = function(z, ...)
        local a = compat.pack(...)
        local last = a[a.n]
        local o = { dtype = z.dtype, device = z.device }
        if type(last) == "table" and not is_tensor(last) and (last.dtype or last.device or
            last.requires_grad ~= nil) then
            for key, v in pairs(last) do
                o[key] = v
            end
            a.n = a.n - 1
        end
        a[a.n + 1] = o
        return require("tide.complex").factory(k, unpack(a, 1, a.n + 1))
    end
end

-- ---- in-place arithmetic: the result written into z's pair (z:mul_(w), PyTorch's); the
-- result must keep z's shape (a broadcast that grows it raises, as PyTorch's) ----
local function inplace(name, f)
    M[name .. "_"] = function(z, ...)
        local ri = z._ri
        if ri.requires_grad and ri.is_leaf and require("tide.autograd").is_grad_enabled() then
            raise(("tide: %s_: in-place operation on a leaf tensor that requires grad; wrap it in " ..
                "tide.no_grad or use detach()"):format(name))
        end
        local r = f(z, ...)
        local want, got = complex_sizes(z), complex_sizes(r)
        if #want ~= #got or table.concat(want, ",") ~= table.concat(got, ",") then
            raise(("tide: %s_: output with shape %s doesn't match the broadcast shape %s"):format(
                name, shape_str(want), shape_str(got)))
        end
        z._ri:copy_(r._ri)
        return z
    end
end
for _, k in ipairs({ "add", "sub", "mul", "div", "neg", "reciprocal", "pow", "exp", "square",
    "sqrt", "log", "sin", "cos", "sigmoid", "tanh", "addcmul", "addcdiv", "masked_fill" }) do
    inplace(k, M[k])
end
M.multiply_, M.divide_, M.subtract_, M.negative_ = M.mul_, M.div_, M.sub_, M.neg_

-- ---- reductions ----
-- (z[, dim | dims | {dim =, keepdim =}][, keepdim]) -> the pair's dims and keepdim
local function reduce_args(op, z, dim, keepdim)
    if type(dim) == "table" and dim[1] == nil and getmetatable(dim) == nil then
        dim, keepdim = dim.dim, dim.keepdim
    end
    local n = z:dim()
    if dim == nil then
        return nil, keepdim
    end
    if type(dim) == "table" then
        local dims = {}
        for i = 1, #dim do
            dims[i] = norm_dim(op, dim[i], n)
        end
        return dims, keepdim
    end
    return norm_dim(op, dim, n), keepdim
end

local function reduce(op, z, dim, keepdim)
    local d, k = reduce_args(op, z, dim, keepdim)
    if d == nil then
        return wrap(z._ri:reshape(-1, 2)[op](z._ri:reshape(-1, 2), 1))
    end
    return wrap(z._ri[op](z._ri, d, k == true))
end

function M.sum(z, dim, keepdim)
    return reduce("sum", z, dim, keepdim)
end

function M.mean(z, dim, keepdim)
    return reduce("mean", z, dim, keepdim)
end

-- z:backward([gradient][, ...]): PyTorch 1.13's, the pair's backward with view_as_real of the
-- complex gradient (the leaf's grad is then dL/dre + i dL/dim of L = Re(sum(conj(g) z))); a
-- one-element z without one takes 1 + 0j, as PyTorch 1.13's; any other raises PyTorch's error
function M.backward(z, gradient, ...)
    local ri = z._ri
    if gradient == nil then
        if ri:numel() ~= 2 then
            raise("tide: backward: grad can be implicitly created only for scalar outputs")
        end
        gradient = tide().zeros_like(ri)
        gradient:select(-1, 1):fill_(1)
    elseif is_complex(gradient) then
        gradient = gradient._ri
    elseif is_tensor(gradient) then
        raise(("tide: backward: For complex Tensors, both grad_output and output are required " ..
            "to have the same dtype. Mismatch in dtype: grad_output[0] has a dtype of %s and " ..
            "output[0] has a dtype of %s."):format(gradient.dtype, PROPS.dtype(z)))
    end
    return ri:backward(gradient, ...)
end

-- prod([dim][, keepdim]): the complex products along dim, halves times halves (log2 of the
-- size in complex multiplications over the whole tensor: one slice at a time, a dim of 2^32 of
-- an empty tensor never ended); its gradient the products', PyTorch's away from zeros. The
-- product over an empty dim is 1, as PyTorch's.
function M.prod(z, dim, keepdim)
    local d, k = reduce_args("prod", z, dim, keepdim)
    if type(d) == "table" then
        raise("tide: prod: dim must be an integer")
    end
    if d == nil then
        z, d = M.reshape(z, -1), 1
    end
    local n = z:size(d)
    if n == 0 or z:numel() == 0 then
        local ri = z._ri:sum(d, true) * 0 -- the result's shape (size 1 at d), on z's device
        ri:select(-1, 1):fill_(n == 0 and 1 or 0)
        local p = wrap(ri)
        return k == true and p or M.squeeze(p, d)
    end
    local p = z
    while n > 1 do
        local h = math.floor(n / 2)
        local q = mul(M.narrow(p, d, 1, h), M.narrow(p, d, h + 1, h))
        if n % 2 == 1 then -- the odd one out, kept for the next round
            q = wrap(tide().cat({ q._ri, M.narrow(p, d, n, 1)._ri }, d))
        end
        p, n = q, h + n % 2
    end
    return k == true and p or M.select(p, d, 1)
end

-- cumsum(dim): the pair's, over the complex dims
function M.cumsum(z, dim, ...)
    if type(dim) == "table" and getmetatable(dim) == nil then
        dim = dim.dim
    end
    return wrap(z._ri:cumsum(norm_dim("cumsum", dim, z:dim()), ...))
end

-- var / std as PyTorch's for complex tensors: real, the variances of the two parts added
-- (|z - mean|^2 = (re - mean_re)^2 + (im - mean_im)^2); the arguments are the real var's (dim,
-- unbiased or {correction =}, keepdim): the parts have the complex shape, so its dims
function M.var(z, ...)
    local re, im = z._ri:select(-1, 1), z._ri:select(-1, 2)
    return re:var(...) + im:var(...)
end

function M.std(z, ...)
    return M.var(z, ...):sqrt()
end

-- det(), slogdet(), logdet(), inverse(): tide.linalg's (lua/tide/complex/linalg.lua)
for name, fn in pairs({ det = "det", slogdet = "slogdet", logdet = "logdet", inverse = "inv" }) do
    M[name] = function(z, ...)
        require("tide.op_args").no_extra(name, 1, ...)
        return require("tide.complex.linalg")[fn](z)
    end
end

-- ---- products ----
function M.matmul(a, b)
    if is_tensor(a) and is_complex(b) then -- a real a (tide.matmul(x, z)): x re + i x im
        local br, bi = b._ri:select(-1, 1), b._ri:select(-1, 2)
        return wrap(stack2(a:matmul(br), a:matmul(bi)))
    elseif not is_complex(a) then
        raise(("tide: matmul: expected a complex or real tensor, got %s"):format(what(a)))
    end
    if is_complex(b) then
        local ar, ai = a._ri:select(-1, 1), a._ri:select(-1, 2)
        local br, bi = b._ri:select(-1, 1), b._ri:select(-1, 2)
        return wrap(stack2(ar:matmul(br) - ai:matmul(bi), ar:matmul(bi) + ai:matmul(br)))
    elseif is_tensor(b) then
        return wrap(stack2(a._ri:select(-1, 1):matmul(b), a._ri:select(-1, 2):matmul(b)))
    end
    raise(("tide: matmul: expected a complex or real tensor, got %s"):format(what(b)))
end
M.mm, M.bmm = M.matmul, M.matmul
Complex.matmul = M.matmul -- tide.matmul(a, b) with a complex operand (lua/linalg.c)

-- ---- shape ops (on the pair, its last dim kept) ----
function M.view(z, ...)
    return wrap(z._ri:view(sizes_of("view", ...)))
end

function M.reshape(z, ...)
    return wrap(z._ri:reshape(sizes_of("reshape", ...)))
end

function M.expand(z, ...)
    return wrap(z._ri:expand(sizes_of("expand", ...)))
end

-- other's shape, for view_as / reshape_as / expand_as: a tensor's, real or complex
local function shape_of(op, other)
    if not (is_tensor(other) or is_complex(other)) then
        raise(("tide: %s: expected a tensor (real or complex), got %s"):format(op, what(other)))
    end
    return other:size()
end

function M.view_as(z, other)
    return M.view(z, shape_of("view_as", other))
end

function M.reshape_as(z, other)
    return M.reshape(z, shape_of("reshape_as", other))
end

function M.expand_as(z, other)
    return M.expand(z, shape_of("expand_as", other))
end

function M.permute(z, ...)
    local first = ...
    local dims = type(first) == "table" and first or { ... }
    local n = z:dim()
    local perm = {}
    for i = 1, #dims do
        perm[i] = norm_dim("permute", dims[i], n)
    end
    perm[#perm + 1] = n + 1
    return wrap(z._ri:permute(perm))
end

function M.transpose(z, a, b)
    local n = z:dim()
    return wrap(z._ri:transpose(norm_dim("transpose", a, n), norm_dim("transpose", b, n)))
end
M.swapaxes, M.swapdims = M.transpose, M.transpose

function M.t(z)
    if z:dim() < 2 then
        return z
    elseif z:dim() > 2 then
        return z.real:t() -- raises the real t's error
    end
    return M.transpose(z, 1, 2)
end

function M.unsqueeze(z, d)
    return wrap(z._ri:unsqueeze(norm_dim("unsqueeze", d, z:dim() + 1)))
end

function M.squeeze(z, d)
    if d == nil then
        local s = complex_sizes(z)
        local keep = {}
        for i = 1, #s do
            if s[i] ~= 1 then
                keep[#keep + 1] = s[i]
            end
        end
        keep[#keep + 1] = 2
        return wrap(z._ri:reshape(keep))
    end
    return wrap(z._ri:squeeze(norm_dim("squeeze", d, z:dim())))
end

function M.flatten(z, s, e)
    local n = z:dim()
    if n == 0 then
        return wrap(z._ri:reshape(1, 2))
    end
    s = norm_dim("flatten", s or 1, n)
    e = norm_dim("flatten", e or -1, n)
    return wrap(z._ri:flatten(s, e))
end

function M.narrow(z, d, start, length)
    return wrap(z._ri:narrow(norm_dim("narrow", d, z:dim()), start, length))
end

function M.select(z, d, i)
    return wrap(z._ri:select(norm_dim("select", d, z:dim()), i))
end

function M.unbind(z, d)
    -- the real unbind: its check of the count (a dim of 2^32 slices raises, not loops)
    local out = z._ri:unbind(norm_dim("unbind", d or 1, z:dim()))
    for i = 1, #out do
        out[i] = wrap(out[i])
    end
    return out
end

function M.chunk(z, chunks, d)
    local parts = z._ri:chunk(chunks, norm_dim("chunk", d or 1, z:dim()))
    for i = 1, #parts do
        parts[i] = wrap(parts[i])
    end
    return parts
end

function M.roll(z, shifts, dims)
    if type(dims) == "number" then
        dims = norm_dim("roll", dims, z:dim())
    elseif type(dims) == "table" then
        local d = {}
        for i = 1, #dims do
            d[i] = norm_dim("roll", dims[i], z:dim())
        end
        dims = d
    else
        raise("tide: roll: give the dims to roll a complex tensor over (z:roll(shifts, dims))")
    end
    return wrap(z._ri:roll(shifts, dims))
end

function M.flip(z, dims)
    dims = type(dims) == "table" and dims or { dims }
    local d = {}
    for i = 1, #dims do
        d[i] = norm_dim("flip", dims[i], z:dim())
    end
    return wrap(z._ri:flip(d))
end

-- ---- in-place writes ----
function M.copy_(z, other)
    if is_complex(other) then
        z._ri:copy_(other._ri)
    elseif is_tensor(other) then
        z._ri:select(-1, 1):copy_(other)
        z._ri:select(-1, 2):zero_()
    else
        raise(("tide: copy_: expected a complex or real tensor, got %s"):format(what(other)))
    end
    return z
end

function M.zero_(z)
    z._ri:zero_()
    return z
end

-- z:fill_(v): every element v + 0j (a real number, as PyTorch's fill_ of a complex tensor)
function M.fill_(z, v)
    if type(v) ~= "number" then
        raise(("tide: fill_: a complex tensor is filled with a number, got %s"):format(what(v)))
    end
    z._ri:select(-1, 1):fill_(v)
    z._ri:select(-1, 2):zero_()
    return z
end

-- z:uniform_([a, b]) and z:normal_([mean, std]), as PyTorch's on a complex tensor: the real
-- and imaginary parts each drawn from U(a, b), or from N(mean, std / sqrt(2)) so that the
-- complex value has variance std^2 (its real pair's draws; the same checks and errors)
function M.uniform_(z, ...)
    z._ri:uniform_(...)
    return z
end

function M.normal_(z, mean, std, ...)
    local half = 1 / math.sqrt(2)
    if type(mean) == "table" then -- z:normal_({generator = g})
        z._ri:normal_(0, half, mean, std, ...)
    elseif type(std) == "table" then -- z:normal_(mean, {generator = g})
        z._ri:normal_(mean, half, std, ...)
    else
        z._ri:normal_(mean or 0, type(std) == "number" and std * half or std or half, ...)
    end
    return z
end

-- ---- indexing: z[i], z[{...}], z[mask], z[idx], reads and writes ----
local function ri_key(z, k)
    if type(k) == "number" then
        if z:dim() == 0 then
            raise("tide: index: a 0-dim complex tensor cannot be indexed by a number")
        end
        return k
    elseif is_tensor(k) then
        return k
    elseif type(k) == "table" and getmetatable(k) == nil then
        local dots, count = false, 0
        for i = 1, #k do
            if k[i] == "..." then
                dots = true
            elseif k[i] ~= "newaxis" then
                count = count + 1
            end
        end
        if dots then -- "..." stands for complex dims only: the pair's stays whole
            local out = { unpack(k, 1, #k) }
            out[#out + 1] = {}
            return out
        end
        if count > z:dim() then
            raise(("tide: index: %d indices for a complex tensor of %d dims"):format(count,
                z:dim()))
        end
        return k
    end
    raise(("tide: index: a complex tensor is indexed by an integer, a table of per-dim " ..
        "indices, a bool mask or an index tensor, got %s"):format(what(k)))
end

function index_read(z, k)
    return wrap(z._ri[ri_key(z, k)])
end

function Complex.__newindex(z, k, v)
    if type(k) == "string" then
        if k == "real" or k == "imag" then
            PROPS[k](z):copy_(v)
            return
        elseif k == "grad" or k == "data" then -- p.grad = g (or nil), p.data = t: the pair's
            if (v ~= nil or k == "data") and not is_complex(v) then
                raise(("tide: a complex tensor's %s is set to a complex tensor%s, got %s")
                    :format(k, k == "grad" and " or nil" or "", what(v)))
            end
            z._ri[k] = v and v._ri
            return
        end
        raise(("tide: a complex tensor's fields cannot be set (%s)"):format(k))
    end
    local rk = ri_key(z, k)
    if is_complex(v) then
        z._ri[rk] = v._ri
    elseif is_tensor(v) then
        z._ri[rk] = real_pair(v)
    elseif type(v) == "number" then
        local ri = z._ri
        z._ri[rk] = core.tensor({ v, 0 }, { dtype = ri.dtype, device = ri.device })
    else
        raise(("tide: index: a complex tensor's elements are set from a complex tensor, a " ..
            "real tensor or a number, got %s"):format(what(v)))
    end
end

-- ---- printing (PyTorch's layout of complex values, tide's last line) ----
function Complex.__tostring(z)
    return require("tide.complex.format")(z)
end

function M.tolist(z)
    local function conv(t)
        if type(t[1]) == "number" then
            return { t[1], t[2] }
        end
        local out = {}
        for i = 1, #t do
            out[i] = conv(t[i])
        end
        return out
    end
    return conv(z._ri:detach():to("cpu"):totable())
end

function M.item(z)
    if z:numel() ~= 1 then
        raise(("tide: item: expected a complex tensor of one element, got shape %s"):format(
            shape_str(complex_sizes(z))))
    end
    local v = z._ri:detach():reshape(2):to("cpu"):totable()
    return v[1], v[2]
end

Complex.shape_str = shape_str
Complex.complex_sizes = complex_sizes

return Complex
