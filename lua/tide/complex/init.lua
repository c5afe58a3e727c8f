-- tide.complex: the functions of PyTorch's complex tensors (lua/tide/complex/tensor.lua):
-- tide.view_as_real / view_as_complex (the pair [..., 2] and the complex tensor over it share
-- storage), tide.complex(real, imag), tide.polar(abs, angle), tide.real / imag / conj / angle,
-- the complex factories (M.factory: tide.zeros(2, {dtype = tide.cfloat}) and friends call it),
-- einsum with complex operands (M.einsum, from tide.einsum) and M.cat / M.stack. Loaded on first
-- use (lua/tide/_lazy_ops.lua).
local core = require("tide.core")
local compat = require("tide._compat")
local raise = require("tide.autograd.raise")
local pytorch_args = require("tide.pytorch_args")
local Complex = require("tide.complex.tensor")

local is_tensor, is_complex, wrap = core.is_tensor, Complex.is, Complex.wrap
local unpack = compat.unpack

local M = { functions = {}, tensor = Complex, is = is_complex, wrap = wrap, ri = Complex.ri }
local F = M.functions

local function what(v)
    if is_complex(v) then
        return "a complex tensor"
    end
    return is_tensor(v) and ("a " .. v.dtype .. " tensor") or type(v)
end

local function tide()
    return require("tide")
end

-- tide.view_as_real(z): z's pair [..., 2] itself (shares storage)
-- PyTorch's keyword names for the functions' tensors (torch.complex(real=a, imag=b),
-- torch.view_as_real(input=z)): a last options table holds those not given by position; a name
-- given both ways or unknown raises
local function by_name(op, names, ...)
    local n = select("#", ...)
    local last = n > 0 and select(n, ...) or nil
    if not (pytorch_args.is_options(last) and next(last) ~= nil) then
        return ...
    end
    local a = { ... }
    a[n] = nil
    for k, v in pairs(last) do
        local i = pytorch_args.position(names, k)
        if not i then
            raise(("tide: %s: unknown argument %s; it takes %s"):format(op, tostring(k),
                table.concat(names, ", ")))
        elseif a[i] ~= nil then
            pytorch_args.twice(op, k, i)
        end
        a[i] = v
    end
    return unpack(a, 1, #names)
end

function F.view_as_real(...)
    local z = by_name("view_as_real", { "input" }, ...)
    if not is_complex(z) then
        raise(("tide: view_as_real: expected a complex tensor, got %s (view_as_real is only " ..
            "for complex tensors)"):format(what(z)))
    end
    return z._ri
end

-- tide.view_as_complex(x): x float32 / float64 [..., 2], its last dim contiguous
function F.view_as_complex(...)
    local x = by_name("view_as_complex", { "input" }, ...)
    local op = "view_as_complex"
    if not is_tensor(x) then
        raise(("tide: %s: expected a float32 or float64 tensor of shape [..., 2], got %s")
            :format(op, what(x)))
    end
    if not Complex.COMPLEX_OF[x.dtype] then
        raise(("tide: %s: expected a float32 or float64 tensor, got %s; convert it with " ..
            ":float() first"):format(op, x.dtype))
    end
    local shape = Complex.shape_str(x:size())
    if x:dim() == 0 or x:size(-1) ~= 2 then
        raise(("tide: %s: the last dim must have size 2 (real, imaginary), got shape %s; " ..
            "reshape it to [..., 2] first"):format(op, shape))
    end
    if x:stride(-1) ~= 1 then
        raise(("tide: %s: the last dim must have stride 1, got shape %s with strides %s; " ..
            "call x:contiguous() first"):format(op, shape, Complex.shape_str(x:stride())))
    end
    return wrap(x)
end

-- the two real tensors of complex / polar (names: theirs, for the messages): one float dtype
local function float_parts(op, names, a, b)
    if not is_tensor(a) or not is_tensor(b) then
        raise(("tide: %s: expected %s and %s tensors, got %s and %s"):format(op, names[1],
            names[2], what(a), what(b)))
    end
    if not Complex.COMPLEX_OF[a.dtype] or a.dtype ~= b.dtype then
        raise(("tide: %s: %s and %s must both be float32 or both float64, got %s and %s")
            :format(op, names[1], names[2], a.dtype, b.dtype))
    end
    require("tide._same_device")(op, a, b)
end

-- tide.complex(real, imag): same float dtype, broadcast
local COMPLEX_NAMES, POLAR_NAMES = { "real", "imag" }, { "abs", "angle" }
function F.complex(...)
    local re, im = by_name("complex", COMPLEX_NAMES, ...)
    float_parts("complex", COMPLEX_NAMES, re, im)
    local rs, is = re:size(), im:size()
    local same = #rs == #is
    for i = 1, same and #rs or 0 do
        same = same and rs[i] == is[i]
    end
    if not same then
        re, im = tide().broadcast_tensors(re, im)
    end
    return wrap(Complex.stack2(re, im))
end

-- tide.polar(abs, angle): abs * (cos angle + i sin angle)
function F.polar(...)
    local r, theta = by_name("polar", POLAR_NAMES, ...)
    float_parts("polar", POLAR_NAMES, r, theta)
    return F.complex(r * theta:cos(), r * theta:sin())
end

-- tide.is_complex is tide.torch_functions' (true for a complex tensor)

function F.real(z)
    if is_complex(z) then
        return z.real
    elseif is_tensor(z) then
        return z -- PyTorch's torch.real of a real tensor: the tensor itself
    end
    raise(("tide: real: expected a tensor, got %s"):format(what(z)))
end

function F.imag(z)
    if is_complex(z) then
        return z.imag
    end
    raise(("tide: imag: expected a complex tensor, got %s (imag is not implemented for " ..
        "real dtypes, as PyTorch's)"):format(what(z)))
end

function F.conj(z)
    if is_complex(z) then
        return z:conj()
    elseif is_tensor(z) then
        return z
    end
    raise(("tide: conj: expected a tensor, got %s"):format(what(z)))
end

-- tide.angle(x): a complex tensor's arg; for a real one PyTorch's: pi below 0, 0 elsewhere,
-- NaN kept (float32 for an integer tensor)
function F.angle(z)
    if is_complex(z) then
        return z:angle()
    elseif not is_tensor(z) then
        raise(("tide: angle: expected a tensor, got %s"):format(what(z)))
    end
    local x = Complex.COMPLEX_OF[z.dtype] and z or z:float()
    local T = tide()
    return T.where(x:ne(x), x, T.where(x:lt(0), math.pi, 0):to(x.dtype))
end

-- ---- tide.cat / tide.stack of complex tensors: M.cat(zs[, dim]), M.stack(zs[, dim]) ----
local function pairs_of(op, zs)
    local ris = {}
    for i = 1, #zs do
        local z = zs[i]
        if not is_complex(z) then
            raise(("tide: %s: element %d is %s; convert real ones with tide.complex(x, " ..
                "tide.zeros_like(x))"):format(op, i, what(z)))
        end
        ris[i] = z._ri
    end
    return ris
end

function M.cat(zs, dim)
    local ris = pairs_of("cat", zs)
    return wrap(tide().cat(ris, Complex.norm_dim("cat", dim or 1, zs[1]:dim())))
end

function M.stack(zs, dim)
    local ris = pairs_of("stack", zs)
    return wrap(tide().stack(ris, Complex.norm_dim("stack", dim or 1, zs[1]:dim() + 1)))
end

-- ---- einsum with complex operands: the sum over the real / imaginary choices of each ----
function M.einsum(real_einsum, eq, ops)
    local idx, n = {}, ops.n
    for k = 1, n do
        if is_complex(ops[k]) then
            idx[#idx + 1] = k
        end
    end
    local re, im
    local args = {}
    for mask = 0, 2 ^ #idx - 1 do
        local imag_count, m = 0, mask
        for k = 1, n do
            args[k] = ops[k]
        end
        for j = 1, #idx do
            local bit = m % 2
            m = (m - bit) / 2
            imag_count = imag_count + bit
            args[idx[j]] = ops[idx[j]]._ri:select(-1, bit + 1)
        end
        local term = real_einsum(eq, unpack(args, 1, n))
        local q = imag_count % 4 -- i^q: 1, i, -1, -i
        if q == 0 or q == 2 then
            local s = q == 0 and term or -term
            re = re and re + s or s
        else
            local s = q == 1 and term or -term
            im = im and im + s or s
        end
    end
    im = im or re:mul(0)
    return wrap(Complex.stack2(re, im))
end

-- ---- factories: tide.zeros(2, 3, {dtype = tide.cfloat}) and friends ----
local LIKE = { zeros_like = "zeros", ones_like = "ones", empty_like = "empty",
    full_like = "full", rand_like = "rand", randn_like = "randn" }

-- the opts for the pair: dtype the real one, requires_grad taken out (set on the pair at the
-- end, a leaf)
local function real_opts(op, opts, dtype)
    local o, rg = {}, nil
    for k, v in pairs(opts or {}) do
        o[k] = v
    end
    dtype = o.dtype or dtype
    o.dtype = Complex.REAL_OF[dtype]
    if o.dtype == nil then
        raise(("tide: %s: expected a complex dtype (complex64, complex128), got %s"):format(op,
            tostring(dtype)))
    end
    rg, o.requires_grad = o.requires_grad, nil
    return o, rg
end

-- M.factory(op, ...): op's arguments as PyTorch's (sizes or a list, then options with a
-- complex dtype; full: (size, value, opts); tensor: (data, opts); X_like: (t, opts))
function M.factory(op, ...)
    local a = compat.pack(...)
    local opts
    if a.n > 0 and pytorch_args.is_options(a[a.n]) then
        opts, a.n = a[a.n], a.n - 1
    end
    local base, ri, o, rg = LIKE[op], nil, nil, nil
    if base then
        local t = a[1]
        local like = is_complex(t) and t._ri or t
        if not is_tensor(like) then
            raise(("tide: %s: expected a tensor first, got %s"):format(op, what(t)))
        end
        local dt = is_complex(t) and t.dtype or nil
        o, rg = real_opts(op, opts, dt)
        o.device = o.device or like.device
        local sizes = is_complex(t) and Complex.complex_sizes(t) or like:size()
        local rest = { sizes }
        for i = 2, a.n do
            rest[#rest + 1] = a[i]
        end
        a = compat.pack(unpack(rest))
        op = base
    else
        o, rg = real_opts(op, opts)
    end
    if op == "tensor" and is_complex(a[1]) then -- a copy of a complex tensor's pair
        local pair = a[1]._ri
        ri = pair:detach():to(o.device or pair.device, { dtype = o.dtype, copy = true })
    elseif op == "tensor" then
        local data = a[1]
        local x = is_tensor(data) and data:to(o.dtype) or core.tensor(data, o)
        if o.device then
            x = x:to(o.device)
        end
        ri = Complex.stack2(x, x:mul(0)):detach()
    elseif op == "eye" then -- (n[, m]): the real eye (its checks) as the real parts
        local real = core.eye(a[1], a[2], o)
        ri = Complex.stack2(real, real:mul(0)):detach()
    else
        local value
        if op == "full" then
            value, a.n = a[a.n], a.n - 1
            if type(value) ~= "number" then
                raise(("tide: full: a complex fill value is a number (the real part), got %s")
                    :format(what(value)))
            end
        end
        local sizes, list = {}, type(a[1]) == "table" and a[1] or a
        for i = 1, type(a[1]) == "table" and #list or a.n do
            if type(list[i]) ~= "number" then
                raise(("tide: %s: sizes must be integers, got %s at position %d"):format(op,
                    what(list[i]), i))
            end
            sizes[i] = list[i]
        end
        sizes[#sizes + 1] = 2
        if op == "zeros" or op == "ones" or op == "full" then
            ri = core.zeros(sizes, o)
            if op ~= "zeros" then
                ri:select(-1, 1):fill_(op == "ones" and 1 or value)
            end
        elseif op == "empty" then
            ri = core.empty(sizes, o)
        elseif op == "rand" then
            ri = core.rand(sizes, o)
        elseif op == "randn" then -- each part N(0, 1/2): the complex normal has variance 1
            ri = core.randn(sizes, o):mul_(math.sqrt(0.5))
        else
            raise(("tide: %s: no complex form; build the real and imaginary parts and join " ..
                "them with tide.complex(re, im)"):format(op))
        end
    end
    if rg then
        ri:requires_grad_(true)
    end
    return wrap(ri)
end

-- x:to(...) of a real tensor x with a complex dtype among the arguments (x:to(tide.cfloat),
-- x:to({dtype = "complex64", device =}), x:to(z)), from the binding: x's values as the real
-- parts (in the matching float dtype), imaginary parts 0
function M.real_to(x, ...)
    local a, cdt = compat.pack(...), nil
    for i = 1, a.n do
        local v = a[i]
        if is_complex(v) then
            cdt, a[i] = v.dtype, v._ri
        elseif type(v) == "string" and v:sub(1, 7) == "complex" then
            cdt, a[i] = v, Complex.REAL_OF[v]
        elseif type(v) == "table" and not is_tensor(v) and type(rawget(v, "dtype")) == "string" then
            local o = {}
            for k, w in pairs(v) do
                o[k] = w
            end
            cdt, o.dtype = v.dtype, Complex.REAL_OF[v.dtype]
            a[i] = o
        end
        if cdt and not Complex.REAL_OF[cdt] then
            raise(("tide: to: expected a complex dtype (complex64, complex128), got %s")
                :format(tostring(cdt)))
        end
    end
    local r = x:to(unpack(a, 1, a.n))
    return wrap(Complex.stack2(r, core.zeros(r:size(), { dtype = r.dtype, device = r.device })))
end

M.names = { "view_as_real", "view_as_complex", "complex", "polar", "real", "imag", "conj",
    "angle" }

return M
