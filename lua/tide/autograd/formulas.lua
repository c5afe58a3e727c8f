-- tide.autograd.formulas: the gradient formula of each op autograd records, and what each
-- formula reads (READS), so the engine can check those tensors were not modified in place.
-- A formula is fn(node, g, g_free): node is the recorded args table ({n = N, ...} plus out,
-- indices and the fields a fused op keeps), g the gradient of the result; it returns the
-- gradients of args[1], args[2], ... (nil where none flows), written with tensor ops only.
-- g_free: nothing but this formula holds g, which it may overwrite and return.
-- Adding an op's gradient: a BW.<name> function here and, when it reads tensor values, a
-- READS entry. The engine (engine.lua) never names an op except the in-place and view lists.
local compat = require "tide._compat"
local core = require "tide.core"
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

-- ---- gradient functions: fn(node, g) returns the gradients of args[1], args[2], args[3] ----

local BW = {}

function BW.add(nd, g)
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
end

function BW.sub(nd, g)
    local a, b, alpha = nd[1], nd[2], nd[3]
    local ga, gb
    if needs(a) then
        ga = reduce(g, a)
    end
    if needs(b) then
        gb = reduce(type(alpha) == "number" and g * -alpha or g:neg(), b)
    end
    return ga, gb
end

function BW.mul(nd, g)
    local a, b = nd[1], nd[2]
    local ga, gb
    if needs(a) then
        ga = reduce(g:mul(b), a)
    end
    if needs(b) then
        gb = reduce(g:mul(a), b)
    end
    return ga, gb
end

function BW.div(nd, g)
    local a, b = nd[1], nd[2]
    local ga, gb
    if needs(a) then
        ga = reduce(g:div(b), a)
    end
    if needs(b) then
        -- d(a/b)/db = -(a/b)/b
        gb = reduce(g:mul(nd.out):div(b):neg(), b)
    end
    return ga, gb
end

function BW.pow(nd, g)
    local a, b = nd[1], nd[2]
    local ga, gb
    if needs(a) then
        if type(b) == "number" then
            if b == 2 then
                ga = g:mul(a):mul(2)
            else
                ga = g:mul(a:pow(b - 1):mul(b))
            end
        else
            ga = reduce(g:mul(b):mul(a:pow(b - 1)), a)
        end
    end
    if needs(b) then
        local la = type(a) == "number" and math.log(a) or a:log()
        gb = reduce(g:mul(nd.out):mul(la), b)
    end
    return ga, gb
end

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

function BW.remainder(nd, g)
    return modulo_backward(nd, g, false)
end

function BW.fmod(nd, g)
    return modulo_backward(nd, g, true)
end

-- floor(a / b) and sign(a) are piecewise constant: zero gradients, as PyTorch's floor and sign
function BW.floor_divide(nd, g)
    local a, b = nd[1], nd[2]
    return needs(a) and zeros_like(a, g) or nil, needs(b) and zeros_like(b, g) or nil
end

function BW.sign(nd, g)
    return zeros_like(nd[1], g)
end

-- elementwise maximum/minimum: ties share the gradient equally (as PyTorch)
local function extremum(nd, g, cmp)
    local a, b = nd[1], nd[2]
    local ga, gb
    local win, tie
    if is_tensor(a) then
        win, tie = a[cmp](a, b), a:eq(b)
    else
        local rev = cmp == "gt" and "lt" or "gt"
        win, tie = b[rev](b, a), b:eq(a)
    end
    local wa = win:type_as(g):add(tie:type_as(g):mul(0.5))
    if needs(a) then
        ga = reduce(g:mul(wa), a)
    end
    if needs(b) then
        gb = reduce(g:mul(wa:neg():add(1)), b)
    end
    return ga, gb
end

function BW.maximum(nd, g)
    return extremum(nd, g, "gt")
end

function BW.minimum(nd, g)
    return extremum(nd, g, "lt")
end

function BW.neg(_, g)
    return g:neg()
end

function BW.abs(nd, g)
    return g:mul(nd[1]:sign())
end

function BW.exp(nd, g)
    return g:mul(nd.out)
end

function BW.log(nd, g)
    return g:div(nd[1])
end

function BW.sqrt(nd, g)
    return g:div(nd.out):mul(0.5)
end

function BW.rsqrt(nd, g)
    local y = nd.out
    return g:mul(y:mul(y):mul(y)):mul(-0.5)
end

function BW.tanh(nd, g)
    local y = nd.out
    return g:mul(y:mul(y):neg():add(1))
end

function BW.sigmoid(nd, g)
    local y = nd.out
    return g:mul(y:mul(y:neg():add(1)))
end

-- reads the result, as PyTorch does: relu(x) <= 0 exactly where x <= 0 (relu(NaN) is NaN), and
-- the input, which the next op does not keep either, is not held until backward (a conv's
-- output before its ReLU); an in-place relu_ needs no copy of its input
local RELU_FUSED = { float32 = true, float64 = true }
function BW.relu(nd, g, g_free)
    local y = nd.out
    if RELU_FUSED[y.dtype] and g.dtype == y.dtype then
        -- one pass: y <= 0 ? 0 : g (NaN passes g, as PyTorch); into g when the engine says that
        -- nothing else holds it (g_free) and no view shares its memory
        return K.relu_backward(g, y, g_free)
    end
    return g:mul(y:le(0):logical_not())
end

-- exact GELU: d/dx x*Phi(x) = Phi(x) + x*phi(x): one kernel pass, or, when the gradient's
-- own graph is recorded (create_graph), ops (Phi from erfc: no cancellation in the left tail)
function BW.gelu(nd, g)
    local x = nd[1]
    if RELU_FUSED[x.dtype] and g.dtype == x.dtype and not core.is_grad_enabled() then
        return K.gelu_backward(g, x)
    end
    local cdf = x:mul(-0.7071067811865476):erfc():mul(0.5)
    local pdf = x:mul(x):mul(-0.5):exp():mul(0.3989422804014327)
    return g:mul(cdf:add(x:mul(pdf)))
end

function BW.sin(nd, g)
    return g:mul(nd[1]:cos())
end

function BW.cos(nd, g)
    return g:mul(nd[1]:sin()):neg()
end

function BW.tan(nd, g)
    local y = nd.out
    return g:mul(y:mul(y):add(1))
end

-- d/dx erf(x) = 2/sqrt(pi) exp(-x^2); erfc is 1 - erf
local function erf_slope(x)
    return x:mul(x):neg():exp():mul(1.1283791670955126)
end

function BW.erf(nd, g)
    return g:mul(erf_slope(nd[1]))
end

function BW.erfc(nd, g)
    return g:mul(erf_slope(nd[1])):neg()
end

function BW.log1p(nd, g)
    return g:div(nd[1]:add(1))
end

function BW.expm1(nd, g)
    return g:mul(nd.out:add(1))
end

function BW.log2(nd, g)
    return g:div(nd[1]:mul(0.6931471805599453))
end

function BW.reciprocal(nd, g)
    local y = nd.out
    return g:mul(y:mul(y)):neg()
end

function BW.square(nd, g)
    return g:mul(nd[1]:mul(2))
end

-- x - trunc(x): the slope of x
function BW.frac(_, g)
    return g
end

-- floor, ceil, round and trunc are piecewise constant: zero gradients, as PyTorch
local function zero_gradient(nd, g)
    return zeros_like(nd[1], g)
end
BW.floor, BW.ceil, BW.round, BW.trunc = zero_gradient, zero_gradient, zero_gradient, zero_gradient

-- softplus' slope is sigmoid(x), 1 above PyTorch's threshold 20 where softplus is x itself
function BW.softplus(nd, g)
    local x = nd[1]
    local s = x:sigmoid()
    return g:mul(s:maximum(x:gt(20):type_as(s)))
end

-- d/dx x sigmoid(x) = s (1 + x (1 - s))
function BW.silu(nd, g)
    local x = nd[1]
    local s = x:sigmoid()
    return g:mul(s:mul(x:mul(s:neg():add(1)):add(1)))
end

-- atan2(a, b): d/da = b / (a^2 + b^2), d/db = -a / (a^2 + b^2); a or b may be a number
local function squared(v)
    return type(v) == "number" and v * v or v:mul(v)
end

function BW.atan2(nd, g)
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
end

function BW.clamp(nd, g)
    local x, lo, hi = nd[1], nd[2], nd[3]
    if type(lo) == "number" then
        g = g:mul(x:ge(lo))
    end
    if type(hi) == "number" then
        g = g:mul(x:le(hi))
    end
    return g
end

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

function BW.sum(nd, g)
    return unreduce(g, nd[1], nd[2], nd[3])
end

function BW.mean(nd, g)
    local x = nd[1]
    return unreduce(g:div(x:numel() / g:numel()), x, nd[2], nd[3]) -- g has the result's shape
end

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
function BW.prod(nd, g)
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
end

local function max_min_backward(nd, g, which)
    local x, dim, keep = nd[1], nd[2], nd[3]
    if type(dim) ~= "number" then
        -- full reduction: split among ties
        local m = x:eq(nd.out):type_as(g)
        return m:mul(g:div(m:sum()))
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
    return g:mul(ar:eq(idx))
end

function BW.max(nd, g)
    return max_min_backward(nd, g, "max")
end

function BW.min(nd, g)
    return max_min_backward(nd, g, "min")
end

-- matmul as torch.matmul: 1-D operands are promoted to 2-D, batch dims broadcast
function BW.matmul(nd, g)
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
end

function BW.t(_, g)
    return g:t()
end

function BW.transpose(nd, g)
    return g:transpose(nd[2], nd[3])
end

function BW.view(nd, g)
    return g:reshape(nd[1].shape)
end
BW.reshape = BW.view
BW.squeeze = BW.view

function BW.unsqueeze(nd, g)
    return g:squeeze(nd[2])
end

function BW.permute(nd, g)
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
end

function BW.contiguous(_, g)
    return g
end
BW.clone = BW.contiguous
BW.pin_memory = BW.contiguous

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

function BW.narrow(nd, g)
    return part(nd[1], g, nd[2], nd[3], nd[4])
end

function BW.select(nd, g)
    return part(nd[1], g, nd[2], nd[3])
end

function BW.index_select(nd, g)
    local x = nd[1]
    local z = zeros_like(x, g)
    z:index_add_(nd[2], nd[3], g)
    return z
end

function BW.expand(nd, g)
    return g:sum_to(nd[1].shape)
end

function BW.sum_to(nd, g)
    return g:expand(nd[1].shape)
end

-- cat/stack: the first argument is a list of tensors; return a list of gradients
function BW.cat(nd, g)
    local ts, dim = nd[1], nd[2] or 1
    dim = normdim(dim, g:dim())
    local gs, off = {}, 1
    for i = 1, #ts do
        local len = ts[i]:size(dim)
        gs[i] = g:narrow(dim, off, len)
        off = off + len
    end
    return gs
end

function BW.stack(nd, g)
    local ts, dim = nd[1], nd[2] or 1
    dim = normdim(dim, g:dim())
    local gs = {}
    for i = 1, #ts do
        gs[i] = g:select(dim, i)
    end
    return gs
end

local LIST_OPS = { cat = true, stack = true }

-- in-place ops without an out-of-place twin (the in-place node's args are the op's, args[1]
-- standing for the tensor before the op)
local function overwritten()
    return nil -- the old values are gone: no gradient flows to them
end
BW.fill = overwritten
BW.zero = overwritten
BW.uniform = overwritten
BW.normal = overwritten

-- gradient to src, back on its device and dtype and summed to its shape (copy_ broadcasts)
local function to_source(g, src)
    if g.dtype ~= src.dtype then
        g = g:to(src.dtype)
    end
    return reduce(g:to(src.device), src)
end

-- t:gather(dim, index): each gathered element's gradient goes back to where it came from
function BW.gather(nd, g)
    local z = zeros_like(nd[1], g)
    z:scatter_add_(nd[2], nd[3], g)
    return z
end

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
function BW.scatter(nd, g)
    local gt
    if needs(nd[1]) then
        gt = g:scatter(nd[2], nd[3], 0)
    end
    return gt, nil, nil, scattered_source(nd, g)
end

function BW.scatter_add(nd, g)
    return needs(nd[1]) and g or nil, nil, nil, scattered_source(nd, g)
end

-- sort / topk: the values' gradient goes back to the positions the indices name
local function sorted_backward(nd, g, dim)
    local z = zeros_like(nd[1], g)
    if nd[1]:dim() == 0 then
        return g:clone()
    end
    z:scatter_(dim or -1, nd.indices, g)
    return z
end

function BW.sort(nd, g)
    return sorted_backward(nd, g, nd[2])
end

function BW.topk(nd, g)
    return sorted_backward(nd, g, nd[3])
end

-- t:masked_fill(mask, v): the filled positions get no gradient in t; a tensor v gets their sum
function BW.masked_fill(nd, g)
    local gt, gv
    if needs(nd[1]) then
        gt = g:masked_fill(nd[2], 0)
    end
    if needs(nd[3]) then
        gv = to_source(g:mul(nd[2]):sum(), nd[3])
    end
    return gt, nil, gv
end

-- t:masked_select(mask): g goes back to the selected positions (nd.indices, 1-based, in the
-- broadcast shape of t and mask), then is summed to t's shape
function BW.masked_select(nd, g)
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
end

-- t:repeat_interleave(repeats[, dim | {dim =}]): each source sums the gradients of its copies
-- (nd.indices: the 1-based source of each result position along dim; no dim: the flattened t)
function BW.repeat_interleave(nd, g)
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
end

function BW.tril(nd, g)
    return g:tril(nd[2] or 0)
end

function BW.triu(nd, g)
    return g:triu(nd[2] or 0)
end

-- flip(dims) or flip(d1, d2, ...): flipping again undoes it
function BW.flip(nd, g)
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
end

function BW.roll(nd, g)
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
end

function BW.copy(nd, g)
    return nil, to_source(g, nd[2])
end

-- t:index_add_(dim, index, src)
function BW.index_add(nd, g)
    return g, nil, nil, to_source(g:index_select(nd[2], nd[3]), nd[4])
end

-- t[i] = v: the slice's gradient goes to v, the rest to t as it was
function BW.setindex(nd, g)
    local i, v = nd[2], nd[3]
    local gt = g:clone()
    gt:select(1, i):zero_()
    local gv
    if is_tensor(v) then
        gv = to_source(g:select(1, i), v)
    end
    return gt, nil, gv
end

-- one kernel pass per row (tide._internal.softmax_backward); the composite when a graph of the
-- gradient is being built (create_graph) or for other dtypes
function BW.softmax(nd, g)
    local y, dim = nd.out, nd[2] or -1
    if RELU_FUSED[y.dtype] and g.dtype == y.dtype and not core.is_grad_enabled() then
        return K.softmax_backward(y, g, dim, false)
    end
    return y:mul(g:sub(g:mul(y):sum(dim, true)))
end

function BW.log_softmax(nd, g)
    local y, dim = nd.out, nd[2] or -1
    if RELU_FUSED[y.dtype] and g.dtype == y.dtype and not core.is_grad_enabled() then
        return K.softmax_backward(y, g, dim, true)
    end
    return g:sub(y:exp():mul(g:sum(dim, true)))
end

-- where(cond, a, b): the binding records a:where(cond, b) in that order too
function BW.where(nd, g)
    local c, a, b = nd[1], nd[2], nd[3]
    local ga, gb
    if needs(a) then
        ga = reduce(g:mul(c), a)
    end
    if needs(b) then
        gb = reduce(g:mul(c:eq(0)), b)
    end
    return nil, ga, gb
end

function BW.im2col(nd, g)
    local x = nd[1]
    return K.col2im(g, x:size(2), x:size(3), x:size(4), nd[2], nd[3], nd[4] or 1, nd[5] or 1,
        nd[6] or 0, nd[7] or 0, nd[8], nd[9])
end

function BW.maxpool2d(nd, g)
    local x = nd[1]
    local idx = nd.indices
    if not idx then
        local _
        _, idx = K.maxpool2d(x, nd[2], nd[3], nd[4] or nd[2], nd[5] or nd[3], nd[6] or 0,
            nd[7] or 0, nd[8], nd[9], nd[10])
    end
    return K.maxpool2d_backward(g, idx, x:size(3), x:size(4))
end

-- transfers and casts: the gradient goes back to the source's device and dtype
function BW.to(nd, g)
    local x = nd[1]
    local dt = x.dtype
    if g.dtype ~= dt then
        g = g:to(dt)
    end
    return g:to(x.device)
end
for _, k in ipairs({ "cpu", "cuda", "float", "double", "half", "bfloat16", "type_as" }) do
    BW[k] = BW.to
end

-- ---- fused ops (nn's Linear, Conv2d and cross-entropy record one node each) ----

function BW.linear(nd, g)
    local x, w, b = nd[1], nd[2], nd[3]
    local gx, gw, gb
    if needs(x) then
        gx = g:matmul(w)
    end
    if needs(w) then
        local g2, x2 = g, x
        if g:dim() ~= 2 then
            g2, x2 = g:reshape(-1, g:size(-1)), x:reshape(-1, x:size(-1))
        end
        gw = g2:t():matmul(x2) -- [out, in], contiguous
    end
    if needs(b) then
        gb = g:sum_to(b.shape)
    end
    return gx, gw, gb
end

-- conv2d as one gemm over the batch-folded columns [C*kh*kw, N*L] (nn/_fused.lua): g folded
-- the same way makes the weight gradient and the columns' gradient one gemm each (one batched
-- gemm over the groups when nd.groups > 1)
function BW.conv2d(nd, g)
    local x, w, b = nd[1], nd[2], nd[3]
    local k, G = nd.geom, nd.groups or 1
    if nd.native then
        -- the forward's kernels (oneDNN); a graph of the gradient (create_graph) takes the gemm
        -- path below, whose columns are made here
        if not core.is_grad_enabled() then
            local ok, gx, gw, gb = K.conv2d_backward(g, x, w, k[1], k[2], k[3], k[4], k[5],
                k[6], k[7] or 1, k[8] or 1, G, needs(x), needs(w), needs(b))
            if ok then
                if gb and not needs(b) then
                    gb = nil
                end
                return gx, gw, gb
            end
        end
        if needs(w) then
            local cols = K.im2col_folded(x:detach(), k[1], k[2], k[3], k[4], k[5], k[6], k[7],
                k[8])
            nd.cols = cols:view(cols:size(1), -1)
        end
    end
    local n, cout = g:size(1), g:size(2)
    local l = math.floor(g:numel() / math.max(1, n * cout))
    local gf = g:reshape(n, cout, l):transpose(1, 2):contiguous():view(cout, n * l)
    local gx, gw, gb
    if needs(w) then
        if G == 1 then
            gw = gf:matmul(nd.cols:t()):view(w.shape)
        else
            gw = gf:view(G, -1, n * l):matmul(nd.cols:view(G, -1, n * l):transpose(2, 3))
                :view(w.shape)
        end
    end
    if needs(b) then
        gb = gf:sum(2)
    end
    if needs(x) then
        local gcols -- [C*kh*kw, N*L]
        if G == 1 then
            gcols = w:reshape(cout, -1):t():matmul(gf)
        else
            gcols = w:reshape(G, math.floor(cout / G), -1):transpose(2, 3)
                :matmul(gf:view(G, -1, n * l))
        end
        gx = K.col2im_folded(gcols:view(x:size(2) * k[1] * k[2], n, l), x:size(2), x:size(3),
            x:size(4), k[1], k[2], k[3], k[4], k[5], k[6], k[7], k[8])
    end
    return gx, gw, gb
end

-- layer norm over the trailing nd.d elements (nn/_fused.lua keeps nd.mean, nd.rstd, nd.eps):
-- the backward kernel, or, when a graph of the gradient is being built (create_graph) or g has
-- another dtype, the same formula as differentiable ops, with xhat = (x - mean) * rstd and
-- gy = g * w: dx = rstd * (gy - mean(gy) - xhat * mean(gy * xhat)), dw = sum(g * xhat) and
-- db = sum(g) over the rows
function BW.layer_norm(nd, g)
    local x, w, b, d = nd[1], nd[2], nd[3], nd.d
    local nx, nw, nb = needs(x), needs(w), needs(b)
    local gx, gw, gb
    if not core.is_grad_enabled() and g.dtype == x.dtype then
        gx, gw, gb = K.layer_norm_backward(x, g, nd.mean, nd.rstd, w, d, nx, nw, nb)
    else
        local xr, gr = x:reshape(-1, d), g:reshape(-1, d)
        local xc = xr:sub(xr:mean(2, true))
        local rstd = xc:mul(xc):mean(2, true):add(nd.eps):rsqrt()
        local xhat = xc:mul(rstd)
        if nx then
            local gy = w and gr:mul(w:reshape(1, d)) or gr
            gx = gy:sub(gy:mean(2, true)):sub(xhat:mul(gy:mul(xhat):mean(2, true))):mul(rstd)
        end
        if nw then
            gw = gr:mul(xhat):sum(1)
        end
        if nb then
            gb = gr:sum(1)
        end
    end
    return gx and gx:view(x.shape), gw and gw:view(w.shape), gb and gb:view(b.shape)
end

-- RMS norm over the trailing nd.d elements (the kernel row rms_norm; tide.nn._fused.kernel
-- keeps nd.rstd, nd.d, nd.eps): the backward kernel, or, when a graph of the gradient is being
-- built or g has another dtype, the same formula as differentiable ops, with xhat = x * rstd and
-- gy = g * w: dx = rstd * (gy - xhat * mean(gy * xhat)), dw = sum(g * xhat) over the rows
function BW.rms_norm(nd, g)
    local x, w, d = nd[1], nd[2], nd.d
    local nx, nw = needs(x), needs(w)
    local gx, gw
    if not core.is_grad_enabled() and g.dtype == x.dtype then
        gx, gw = K.rms_norm_backward(x, g, nd.rstd, w, d, nx, nw)
    else
        local xr, gr = x:reshape(-1, d), g:reshape(-1, d)
        local rstd = xr:mul(xr):mean(2, true):add(nd.eps):rsqrt()
        local xhat = xr:mul(rstd)
        if nx then
            local gy = w and gr:mul(w:reshape(1, d)) or gr
            gx = gy:sub(xhat:mul(gy:mul(xhat):mean(2, true))):mul(rstd)
        end
        if nw then
            gw = gr:mul(xhat):sum(1)
        end
    end
    return gx and gx:view(x.shape), gw and gw:view(w.shape)
end

-- d/dx of -sum(onehot * log_softmax(x)) / denom = (softmax(x) * valid - onehot) / denom
-- (tide.nn._fused.cross_entropy: valid marks the rows not ignored, denom nil for a sum)
function BW.cross_entropy(nd, g)
    local dx = nd.logp:exp():mul(nd.valid):sub(nd.onehot)
    return dx:mul(nd.denom and g:div(nd.denom) or g)
end

-- x:norm(2[, dim[, keepdim]]) (recorded by tide.reductions as one node: nd[2] the dim or
-- false, nd[3] keepdim): x / ||x||, and 0 where the norm is 0 (PyTorch's subgradient)
function BW.norm(nd, g)
    local x, out, d = nd[1], nd.out, nd[2]
    if d and not nd[3] then
        g, out = g:unsqueeze(d), out:unsqueeze(d)
    end
    return x / core.where(out:eq(0), 1, out) * g
end

-- one fused recurrent-cell step out = rnn_cell(gi, gh, prev) (tide.nn._rnn records it by hand,
-- with nd.kind, nd.saved and detached aliases nd.prev_d, nd.out_d); LSTM and RNN share one
-- gradient between gi and gh, GRU's differ (its reset gate scales gh's n part)
function BW.rnn_cell(nd, g)
    local dgi, dgh, dprev = K.rnn_cell_backward(nd.kind, nd.saved, nd.prev_d, nd.out_d, g)
    return dgi, dgh or dgi, dprev
end

-- ---- what each formula reads ----

-- What each gradient formula reads besides shapes: {what, when}. what is an argument's index,
-- "out" (the result) or "indices"; when, if given, is the argument whose gradient alone
-- needs it (mul reads b for a's gradient only). Ops not listed read values of no tensor.
local ARG1, ARG2, OUT = { 1 }, { 2 }, { "out" }
local READS_AB = { { 2, 1 }, { 1, 2 } } -- a for b's gradient, b for a's
local READS = {
    mul = READS_AB, matmul = READS_AB, linear = READS_AB,
    div = { ARG2, { "out", 2 } },
    pow = { ARG1, { 2, 1 }, { "out", 2 } },
    maximum = { ARG1, ARG2 }, minimum = { ARG1, ARG2 },
    remainder = { { 1, 2 }, { 2, 2 } }, fmod = { { 1, 2 }, { 2, 2 } }, -- b's gradient reads a, b
    abs = { ARG1 }, log = { ARG1 }, relu = { OUT }, sin = { ARG1 }, cos = { ARG1 },
    clamp = { ARG1 }, where = { ARG1 },
    exp = { OUT }, sqrt = { OUT }, rsqrt = { OUT }, tanh = { OUT }, sigmoid = { OUT },
    softmax = { OUT }, log_softmax = { OUT },
    gelu = { ARG1 }, prod = { ARG1 },
    erf = { ARG1 }, erfc = { ARG1 }, log1p = { ARG1 }, log2 = { ARG1 }, square = { ARG1 },
    softplus = { ARG1 }, silu = { ARG1 }, atan2 = { ARG1, ARG2 },
    expm1 = { OUT }, tan = { OUT }, reciprocal = { OUT },
    max = { ARG1, OUT }, min = { ARG1, OUT }, -- over all dims; over a dim: the indices
    index_select = { { 3 } },
    gather = { { 3 } }, scatter = { { 3 } }, scatter_add = { { 3 } },
    sort = { { "indices" } }, topk = { { "indices" } }, masked_fill = { { 2 } },
    masked_select = { { "indices" } },
    repeat_interleave = { { "indices" } },
    maxpool2d = { { "indices" } },
    conv2d = { { 2, 1 } }, -- the columns it keeps are its own
    norm = { ARG1, OUT },
    layer_norm = { ARG1, { 2, 1 } }, -- its mean and rstd are its own
    rms_norm = { ARG1, { 2, 1 } }, -- its rstd is its own
    rnn_cell = { { 3 }, OUT },
    rnn_layer = { { 2 }, { 4 }, OUT }, -- tide.nn._rnn's whole-sequence node
}
local READS_INDICES = { { "indices" } }
-- Ops whose formula reads nothing of its argument, not even its shape (only the result and the
-- gradient): the engine drops the argument from the node unless it needs it to route the
-- gradient (a leaf). Kept, the argument lived until backward ended, where reference counting
-- frees it once the op has run: a conv's output before its ReLU.
local DROPS_ARG1 = {
    relu = true, exp = true, sqrt = true, rsqrt = true, tanh = true, sigmoid = true, tan = true,
    expm1 = true, reciprocal = true, softmax = true, log_softmax = true,
}
-- conv2d by the device's own kernels keeps no columns: the weight's gradient reads the input
local READS_CONV_NATIVE = { { 2, 1 }, { 1, 2 } }

-- what nd's gradient reads (nil: nothing)
local function reads_of(nd)
    local name = nd.name
    if nd.native and name == "conv2d" then
        return READS_CONV_NATIVE
    end
    if nd.indices and (name == "max" or name == "min") then
        return READS_INDICES
    end
    return READS[name]
end

local function has_formula(name)
    return BW[name] ~= nil
end

return {
    BW = BW,
    PART = PART,
    add_part = add_part,
    materialize = materialize,
    READS = READS,
    READS_INDICES = READS_INDICES,
    DROPS_ARG1 = DROPS_ARG1,
    LIST_OPS = LIST_OPS,
    reads_of = reads_of,
    has_formula = has_formula,
}
