-- tide.autograd: reverse-mode automatic differentiation.
--
-- The graph lives in Lua. The binding decides in C whether to record (grad mode on and an
-- input requires grad) and only then calls our hook(name, out, args); tensors without grad
-- never reach this file, so the plain path of `a + b` costs nothing extra.
-- A node is the args table itself ({n = N, ...} plus fn/out/name fields): one table per
-- recorded op, no closures. backward() sorts the nodes topologically and runs each node's
-- gradient function, written with tensor ops only.
-- Why Lua: the gradient formulas are a few lines of tensor calls each, readable next to the
-- ops they differentiate and identical on every device; the cost per recorded op is one hook
-- call, paid only by tensors that need grad. nn's hot layers (Linear, Conv2d, cross-entropy)
-- record one fused node each (below) instead of three or four.
-- In-place changes: each storage counts its in-place writes (t:_version(), kept by the core).
-- A node notes the counts of the tensors its gradient formula reads (READS below); backward
-- compares them before it runs anything and raises if one moved, as PyTorch does, instead of
-- computing a wrong gradient from the new values.
-- Edges: a node keeps the grad_fn each input had when the node was recorded (e1..e4), so an
-- in-place op recorded later on that input (h:relu_() on a non-leaf h gives h a new grad_fn)
-- does not reroute the gradients of the ops that used h before it.
local core = require "tide.core"

local M = {}

local Tensor = core.Tensor
local TMT = getmetatable(core.zeros(1))
local set_grad_enabled = core.set_grad_enabled
local version = Tensor._version
local getmetatable, type = getmetatable, type

local function is_tensor(x)
    return getmetatable(x) == TMT
end
M.is_tensor = is_tensor

local function needs(x)
    return getmetatable(x) == TMT and x.requires_grad
end

local function grad_fn(t)
    return t.grad_fn -- a property: reads the autograd table without creating one
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

local RELU_FUSED = { float32 = true, float64 = true }
function BW.relu(nd, g)
    local x = nd[1]
    if RELU_FUSED[x.dtype] and g.dtype == x.dtype then
        return core.relu_backward(g, x) -- one pass: x > 0 ? g : 0
    end
    return g:mul(x:gt(0))
end

-- exact GELU: d/dx x*Phi(x) = Phi(x) + x*phi(x); Phi = gelu(x)/x (0.5 at x = 0)
function BW.gelu(nd, g)
    local x, y = nd[1], nd.out
    local z = x:eq(0):type_as(x)
    local cdf = y:div(x:add(z)):add(z:mul(0.5))
    local pdf = x:mul(x):mul(-0.5):exp():mul(0.3989422804014327)
    return g:mul(cdf:add(x:mul(pdf)))
end

function BW.sin(nd, g)
    return g:mul(nd[1]:cos())
end

function BW.cos(nd, g)
    return g:mul(nd[1]:sin()):neg()
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
    return unreduce(g:div(x:numel() / nd.out:numel()), x, nd[2], nd[3])
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
        perm = { table.unpack(nd, 2, nd.n) }
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

function BW.narrow(nd, g)
    local x = nd[1]
    local z = zeros_like(x, g)
    z:narrow(nd[2], nd[3], nd[4]):add_(g)
    return z
end

function BW.select(nd, g)
    local x = nd[1]
    local z = zeros_like(x, g)
    z:select(nd[2], nd[3]):add_(g)
    return z
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

function BW.softmax(nd, g)
    local y, dim = nd.out, nd[2]
    return y:mul(g:sub(g:mul(y):sum(dim, true)))
end

function BW.log_softmax(nd, g)
    local y, dim = nd.out, nd[2]
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
    return core.col2im(g, x:size(2), x:size(3), x:size(4), nd[2], nd[3], nd[4] or 1, nd[5] or 1,
        nd[6] or 0, nd[7] or 0)
end

function BW.maxpool2d(nd, g)
    local x = nd[1]
    local idx = nd.indices
    if not idx then
        local _
        _, idx = core.maxpool2d(x, nd[2], nd[3], nd[4] or nd[2], nd[5] or nd[3], nd[6] or 0,
            nd[7] or 0)
    end
    return core.maxpool2d_backward(g, idx, x:size(3), x:size(4))
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

local FLOAT = { float32 = true, float64 = true, float16 = true, bfloat16 = true }

local function no_backward(nd)
    error("tide: backward: no gradient formula for op '" .. tostring(nd.name) ..
        "'; compute it under tide.no_grad or detach() its inputs", 0)
end

-- ---- saved tensors and their versions ----

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
    abs = { ARG1 }, log = { ARG1 }, relu = { ARG1 }, sin = { ARG1 }, cos = { ARG1 },
    clamp = { ARG1 }, where = { ARG1 },
    exp = { OUT }, sqrt = { OUT }, rsqrt = { OUT }, tanh = { OUT }, sigmoid = { OUT },
    softmax = { OUT }, log_softmax = { OUT },
    gelu = { ARG1, OUT }, prod = { ARG1 },
    max = { ARG1, OUT }, min = { ARG1, OUT }, -- over all dims; over a dim: the indices
    index_select = { { 3 } },
    maxpool2d = { { "indices" } },
    conv2d = { { 2, 1 } }, -- the columns it keeps are its own
}
local READS_INDICES = { { "indices" } }

-- what nd's gradient reads (nil: nothing)
local function reads_of(nd)
    local name = nd.name
    if nd.indices and (name == "max" or name == "min") then
        return READS_INDICES
    end
    return READS[name]
end

-- the node fields holding the versions of reads[1..3]: no table more per node (the binding
-- sizes a node's hash part with room for them, record() below too)
local VKEY = { "v1", "v2", "v3" }

-- notes the versions of the tensors among reads (after nd.out and nd.indices are set)
local function note_versions(nd, reads)
    for i = 1, #reads do
        local x = nd[reads[i][1]]
        if getmetatable(x) == TMT then
            nd[VKEY[i]] = version(x)
        end
    end
end

local function describe_saved(what)
    if type(what) == "number" then
        return "its argument " .. what
    end
    return what == "out" and "its result" or "its " .. what
end

-- before backward runs anything: every tensor a node will read still has the version it had
-- when the node was recorded
local function check_versions(order)
    for i = 1, #order do
        local nd = order[i]
        local vb = nd.vbase
        if vb and version(nd[1]) ~= vb then
            error(string.format("tide: backward: the tensor that %s viewed was modified in place " ..
                "after the view was made (version %d, expected %d); autograd cannot follow a " ..
                "change through another view of the same storage: clone() the view, or modify " ..
                "the tensor before taking it", nd.name, version(nd[1]), vb), 0)
        end
        local reads = reads_of(nd)
        if reads then
            for j = 1, #reads do
                local what, when, was = reads[j][1], reads[j][2], nd[VKEY[j]]
                if was and (when == nil or needs(nd[when])) then
                    local now = version(nd[what])
                    if now ~= was then
                        error(string.format("tide: backward: a tensor needed for the gradient " ..
                            "of %s (%s) was modified in place after it was used (version %d, " ..
                            "expected %d); clone it before modifying, or modify it under " ..
                            "tide.no_grad before the forward pass", nd.name,
                            describe_saved(what), now, was), 0)
                    end
                end
            end
        end
    end
end

-- ---- recording ----

-- The binding records only ops that made a new tensor (to() and contiguous() that hand back
-- their input are not recorded), so out is never one of args.
local CASTS = {
    to = true, type_as = true, long = true, int = true, byte = true, bool = true,
    half = true, bfloat16 = true,
}

-- the grad_fn of each input that requires grad, as it is now (false: a leaf)
local EKEY = { "e1", "e2", "e3", "e4" }
local function capture_edges(nd)
    if LIST_OPS[nd.name] then
        local ts, es = nd[1], {}
        for j = 1, #ts do
            local x = ts[j]
            es[j] = needs(x) and (grad_fn(x) or false)
        end
        nd.es = es
        return
    end
    for i = 1, nd.n < 4 and nd.n or 4 do
        local x = nd[i]
        if needs(x) then
            nd[EKEY[i]] = grad_fn(x) or false
        end
    end
end

-- ops whose result shares its input's storage: an in-place op on such a result would change a
-- tensor the graph holds under another name
local VIEW_OPS = {
    view = true, reshape = true, t = true, transpose = true, permute = true, narrow = true,
    select = true, expand = true, unsqueeze = true, squeeze = true,
}

-- the op an in-place name records (add_ -> add, t[i] = v -> setindex)
local INPLACE_BASE = setmetatable({ ["t[i] = v"] = "setindex" }, {
    __index = function(t, name)
        local base = name:match("^(.-)_$") or name
        t[name] = base
        return base
    end,
})

local function reads_arg1(base)
    local reads = READS[base]
    if reads then
        for i = 1, #reads do
            if reads[i][1] == 1 then
                return true
            end
        end
    end
    return false
end

-- Before an in-place op that autograd records (the binding calls hook(name, nil, args)):
-- refuse a leaf that requires grad and a view of a tensor that requires grad; keep what the
-- gradient will need of the tensor as it was. The op then runs, and hook(name, self, args)
-- records it (inplace_done below). A failed op leaves only `pending`, replaced by the next.
local pending

local function inplace_before(name, args)
    local self = args[1]
    local f = grad_fn(self)
    if self.requires_grad and not f then
        M.raise("tide: " .. name .. ": in-place operation on a leaf tensor that requires " ..
            "grad; wrap it in tide.no_grad or use detach()")
    end
    if f and VIEW_OPS[f.name] then
        M.raise("tide: " .. name .. ": in-place operation on a view of a tensor that requires " ..
            "grad is not supported yet; clone() the view first")
    end
    local base = INPLACE_BASE[name]
    local old = self
    if reads_arg1(base) then
        old = self:detach():clone() -- the values the gradient formula reads
        if self.requires_grad then
            old:_set_requires_grad_internal(true)
        end
    end
    pending = { self = self, old = old, edge = self.requires_grad and f or nil }
end

local function inplace_done(name, self, args)
    local p = pending
    pending = nil
    if not p or not rawequal(p.self, self) then
        return
    end
    local base = INPLACE_BASE[name]
    args[1] = p.old
    args.fn = BW[base] or no_backward
    args.name = base
    args.out = self
    capture_edges(args)
    args.e1 = p.edge
    local reads = READS[base]
    if reads then
        note_versions(args, reads)
    end
    self:_set_requires_grad_internal(true)
    self:_ag().grad_fn = args
end

local function hook(name, out, args)
    if out == nil then
        return inplace_before(name, args)
    end
    if pending and rawequal(out, args[1]) then
        return inplace_done(name, out, args)
    end
    if CASTS[name] and not FLOAT[out.dtype] then
        return -- a cast to an integer type ends the graph
    end
    args.fn = BW[name] or no_backward
    args.name = name
    args.out = out
    capture_edges(args)
    local reads = READS[name]
    if reads then
        if args.indices and (name == "max" or name == "min") then
            reads = READS_INDICES
        end
        note_versions(args, reads)
    end
    if VIEW_OPS[name] and grad_fn(args[1]) then
        -- an in-place op on the base, recorded later, would leave this view's graph stale
        args.vbase = version(args[1])
    end
    out:_set_requires_grad_internal(true)
    out:_ag().grad_fn = args
end
M.hook = hook

-- ---- fused ops computed in Lua (nn's Linear, Conv2d and cross-entropy) ----
-- One node instead of three or four, and the bias added in place: the inputs that require
-- grad are detached for the forward computation, and the node is recorded by hand.

local function needs_record(a, b, c)
    return core.is_grad_enabled() and (needs(a) or needs(b) or needs(c))
end

local function record(name, out, fn, a, b, c)
    local nd = { a, b, c, n = 3, name = name, fn = fn, out = out, v1 = false, v2 = false }
    capture_edges(nd)
    local reads = READS[name]
    if reads then
        note_versions(nd, reads)
    end
    out:_set_requires_grad_internal(true)
    out:_ag().grad_fn = nd
    return nd
end

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

-- y = x W^T (+ b); x [..., in], w [out, in], b [out] or nil
function M.linear(x, w, b)
    local rec = needs_record(x, w, b)
    local xd, wd, bd = x, w, b
    if rec then
        xd = x.requires_grad and x:detach() or x
        wd = w.requires_grad and w:detach() or w
        bd = b and b.requires_grad and b:detach() or b
    end
    local y = xd:matmul(wd:t())
    if bd then
        y:add_(bd)
    end
    if rec then
        record("linear", y, BW.linear, x, w, b)
    end
    return y
end

-- conv2d as one gemm over the whole batch: im2col_folded lays the columns out as
-- [C*kh*kw, N*L] (L = OH*OW), so y = W [Cout, C*kh*kw] @ cols is [Cout, N*L], brought to
-- [N, Cout, L] by one copy that also adds the bias. The backward pass folds g the same way
-- (one copy) and makes gw and the columns' gradient one gemm each. The node keeps the columns.
function BW.conv2d(nd, g)
    local x, w, b = nd[1], nd[2], nd[3]
    local n, cout = g:size(1), g:size(2)
    local l = g:numel() // math.max(1, n * cout)
    local gf = g:reshape(n, cout, l):transpose(1, 2):contiguous():view(cout, n * l)
    local gx, gw, gb
    if needs(w) then
        gw = gf:matmul(nd.cols:t()):view(w.shape)
    end
    if needs(b) then
        gb = gf:sum(2)
    end
    if needs(x) then
        local k = nd.geom
        local gcols = w:reshape(cout, -1):t():matmul(gf) -- [C*kh*kw, N*L]
        gx = core.col2im_folded(gcols:view(gcols:size(1), n, l), x:size(2), x:size(3),
            x:size(4), k[1], k[2], k[3], k[4], k[5], k[6])
    end
    return gx, gw, gb
end

-- y = conv2d(x, w) + b for x [N, C, H, W], w [Cout, C, kh, kw], b [Cout] or nil; geom is
-- {kh, kw, sh, sw, ph, pw}, (oh, ow) the output size (the caller checked the shapes)
function M.conv2d(x, w, b, geom, oh, ow)
    local rec = needs_record(x, w, b)
    local xd, wd, bd = x, w, b
    if rec then
        xd = x.requires_grad and x:detach() or x
        wd = w.requires_grad and w:detach() or w
        bd = b and b.requires_grad and b:detach() or b
    end
    local n, cout, l = x:size(1), w:size(1), oh * ow
    local cols = core.im2col_folded(xd, geom[1], geom[2], geom[3], geom[4], geom[5], geom[6])
    cols = cols:view(cols:size(1), n * l)
    local yt = wd:reshape(cout, -1):matmul(cols):view(cout, n, l):transpose(1, 2)
    local y
    if bd then
        y = yt:add(bd:view(1, cout, 1))
    else
        y = yt:contiguous()
    end
    y = y:reshape(n, cout, oh, ow)
    if rec then
        local nd = record("conv2d", y, BW.conv2d, x, w, b)
        nd.cols, nd.geom = cols, geom
    end
    return y
end

-- d/dx of -sum(onehot * log_softmax(x)) * scale = (softmax(x) - onehot) * scale
function BW.cross_entropy(nd, g)
    local dx = nd.logp:exp():sub(nd.onehot)
    return dx:mul(g:mul(nd.scale))
end

-- cross-entropy of logits x [N, C] against a bool one-hot [N, C], summed (scale = -1) or
-- averaged (scale = -1/N): log_softmax fused in, one node
function M.cross_entropy(x, onehot, mean)
    local rec = needs_record(x)
    local xd = rec and x:detach() or x
    local logp = xd:log_softmax(2)
    local scale = mean and -1 / x:size(1) or -1
    local loss = logp:mul(onehot):sum():mul(scale)
    if rec then
        local nd = record("cross_entropy", loss, BW.cross_entropy, x)
        nd.logp, nd.onehot, nd.scale = logp, onehot, -scale
    end
    return loss
end

-- ---- backward ----

local visit

local function visit_input(f, seen, order)
    if f and not seen[f] then
        visit(f, seen, order)
    end
end

-- depth-first post-order: each node comes after every node that feeds it
function visit(nd, seen, order)
    seen[nd] = true
    if nd.freed then
        error("tide: backward: trying to backward through the graph a second time; " ..
            "pass {retain_graph = true} to the first backward", 0)
    end
    if LIST_OPS[nd.name] then
        local es = nd.es
        for i = 1, #es do
            visit_input(es[i], seen, order)
        end
    else
        visit_input(nd.e1, seen, order)
        visit_input(nd.e2, seen, order)
        visit_input(nd.e3, seen, order)
        visit_input(nd.e4, seen, order)
    end
    order[#order + 1] = nd
end

local function toposort(root)
    local order = {}
    visit(root, {}, order)
    return order
end

-- Leaf gradients are never updated in place (old + g makes a new tensor), so a gradient may be
-- shared by views; the same object handed to two leaves in one pass is copied once.
local given

local function accumulate_leaf(t, g)
    if g.dtype ~= t.dtype then
        g = g:to(t.dtype)
    end
    local a = t:_ag()
    local old = a.grad
    if old then
        a.grad = old:add(g)
        return
    end
    g = g:contiguous()
    if given[g] then
        g = g:clone()
    end
    given[g] = true
    a.grad = g
end

-- g to the input x of a node along its edge e: the node that made x then (e), x's .grad when
-- x was a leaf (e == false), nowhere when x did not require grad then (e == nil)
local function push(x, e, g)
    if g == nil or e == nil then
        return
    end
    if e then
        local old = e.g
        e.g = old and old:add(g) or g
    elseif needs(x) then
        accumulate_leaf(x, g)
    end
end

local function run_backward(root, grad, retain)
    if not is_tensor(root) then
        error("tide: backward: expected a tensor, got " .. type(root), 3)
    end
    if not root.requires_grad then
        error("tide: backward: tensor does not require grad and has no grad_fn; " ..
            "create its inputs with {requires_grad = true} or call requires_grad_()", 3)
    end
    if grad == nil then
        if root:numel() ~= 1 then
            local s = table.concat(root.shape, ", ")
            error("tide: backward: grad can be implicitly created only for a one-element " ..
                "tensor, got shape {" .. s .. "}; pass a gradient: t:backward(grad)", 3)
        end
        grad = core.ones(root.shape, { device = root.device, dtype = root.dtype })
    elseif not is_tensor(grad) then
        error("tide: backward: expected grad to be a tensor, got " .. type(grad), 3)
    else
        -- checked here, at the user's call: a gradient elsewhere would land on the leaves
        local gd, rd = grad.device, root.device
        if gd ~= rd then
            error(string.format("tide: backward: expected all tensors on the same device, found " ..
                "%s (grad) and %s (tensor); move the gradient with grad:to(\"%s\")", tostring(gd),
                tostring(rd), tostring(rd)), 3)
        end
        if grad.dtype ~= root.dtype then
            error(string.format("tide: backward: expected grad of dtype %s (the tensor's), got " ..
                "%s; convert it with grad:to(\"%s\")", root.dtype, grad.dtype, root.dtype), 3)
        end
        local gs, rs = grad.shape, root.shape
        local same = #gs == #rs
        for i = 1, #rs do
            same = same and gs[i] == rs[i]
        end
        if not same then
            error("tide: backward: grad of shape {" .. table.concat(gs, ", ") .. "} does not " ..
                "match the tensor's shape {" .. table.concat(rs, ", ") .. "}", 3)
        end
        grad = grad:clone() -- the caller keeps its tensor; leaf grads never alias it
    end
    local f = grad_fn(root)
    given = setmetatable({}, { __mode = "k" })
    local prev = set_grad_enabled(false)
    local ok, err = pcall(function()
        if not f then
            accumulate_leaf(root, grad)
            return
        end
        local order = toposort(f)
        check_versions(order)
        f.g = grad
        for i = #order, 1, -1 do
            local nd = order[i]
            local g = nd.g
            nd.g = nil
            if g then
                if LIST_OPS[nd.name] then
                    local gs = nd.fn(nd, g)
                    local ts, es = nd[1], nd.es
                    for j = 1, #ts do
                        push(ts[j], es[j], gs[j])
                    end
                else
                    local g1, g2, g3, g4 = nd.fn(nd, g)
                    push(nd[1], nd.e1, g1)
                    if nd.n > 1 then
                        push(nd[2], nd.e2, g2)
                        push(nd[3], nd.e3, g3)
                        push(nd[4], nd.e4, g4)
                    end
                end
            end
            if not retain then
                nd.freed = true
            end
        end
        if not retain then
            -- free the saved tensors of the graph
            for i = 1, #order do
                local nd = order[i]
                for j = 1, nd.n do
                    nd[j] = nil
                end
                nd.out, nd.indices, nd.logp, nd.onehot, nd.cols = nil, nil, nil, nil, nil
                nd.e1, nd.e2, nd.e3, nd.e4, nd.es = nil, nil, nil, nil, nil
            end
        end
    end)
    set_grad_enabled(prev)
    given = nil
    if not ok then
        -- our own messages carry no position: point them at the caller of backward()
        error(err, (type(err) == "string" and err:find("^tide:")) and 3 or 0)
    end
end
M.backward = run_backward

-- ---- user API ----

local BACKWARD_OPTIONS = { "retain_graph" }

function Tensor.backward(self, grad, opts)
    if type(grad) == "table" and not is_tensor(grad) then
        grad, opts = nil, grad
    end
    if opts ~= nil then
        if type(opts) ~= "table" then
            error("tide: backward: options must be a table such as {retain_graph = true}, got " ..
                type(opts), 2)
        end
        core._check_options(opts, "backward", BACKWARD_OPTIONS)
    end
    run_backward(self, grad, opts and opts.retain_graph)
end

function M.no_grad(fn, ...)
    local prev = set_grad_enabled(false)
    local r = table.pack(pcall(fn, ...))
    set_grad_enabled(prev)
    if not r[1] then
        error(r[2], 0)
    end
    return table.unpack(r, 2, r.n)
end

function M.enable_grad(fn, ...)
    local prev = set_grad_enabled(true)
    local r = table.pack(pcall(fn, ...))
    set_grad_enabled(prev)
    if not r[1] then
        error(r[2], 0)
    end
    return table.unpack(r, 2, r.n)
end

-- the gradient of a tensor, and its reset (optimizers, zero_grad, Module:to)
function M.grad(t)
    return t.grad
end

function M.set_grad(t, g)
    t.grad = g
end

-- raises msg at the user's line: the first Lua frame outside tide's own Lua files (so the
-- position is right whatever chain of library calls and tail calls led here)
local getinfo = core._frame_info -- debug.getinfo(level, "S"), also where debug is not opened
local LIB = getinfo(1).source:match("^@(.*[/\\])autograd%.lua$")
function M.raise(msg)
    if LIB then
        local level = 2
        while true do
            local info = getinfo(level)
            if not info then
                break
            end
            if info.what ~= "C" and info.source:sub(2, #LIB + 1) ~= LIB then
                error(msg, level)
            end
            level = level + 1
        end
    end
    error(msg, 0)
end

M.is_grad_enabled = core.is_grad_enabled
M.set_grad_enabled = set_grad_enabled
M.FLOAT = FLOAT

core.set_autograd_hook(hook)

return M
