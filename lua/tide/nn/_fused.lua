-- tide.nn._fused: nn's hot forwards (Linear, Conv2d, cross-entropy, layer norm, RMS norm), each
-- recorded as one autograd node instead of three or four, with the bias added in place: the
-- inputs that require grad are detached for the forward computation, and the node is recorded
-- by hand (tide.autograd.record). Each op's gradient (tide.autograd.def: the formula, what it
-- reads, what it frees) stands next to its forward. No argument checks here: nn.functional and
-- the modules check first.
local core = require("tide.core")
local K = core._internal -- the internal kernels (tide._internal in docs/API.md)
local compat = require("tide._compat")
local idiv, pack, unpack = compat.idiv, compat.pack, compat.unpack
local autograd = require("tide.autograd")
local autocast = require("tide._autocast")

local def, needs_record, record = autograd.def, autograd.needs_record, autograd.record
local is_tensor = autograd.is_tensor

local function needs(x)
    return is_tensor(x) and x.requires_grad
end

local M = {}

-- whether the call is recorded (an input requires grad, grad mode on), and then the inputs
-- detached: the kernels run on them and the node routes the gradients to x, w, b (w, b nil or
-- tensors)
local function det(t)
    return t and t.requires_grad and t:detach() or t
end
local function detached(x, w, b)
    if not needs_record(x, w, b) then
        return false, x, w, b
    end
    return true, det(x), det(w), det(b)
end

-- false: conv2d always runs im2col + gemm (the spec compares the two paths)
M.native_conv = true

-- the linear kernel row's act (include/tide.h's tide_act): relu 0, gelu 1, none 2
local ACT, NO_ACT = { relu = 0, gelu = 1 }, 2
local FLOAT = { float32 = true, float64 = true, float16 = true, bfloat16 = true }

-- act(x W^T + b) by the linear kernel row (true second), where the device has it for the dtype:
-- the bias and the activation in the product's epilogue; else x W^T + b by matmul and an
-- in-place bias add (false second: act not applied)
local function product(x, w, b, act)
    local dt = x.dtype
    if FLOAT[dt] and w.dtype == dt and (b == nil or b.dtype == dt) then
        local n, d = w:size(1), w:size(2)
        if n > 0 and d > 0 then
            local y = K.linear(x, w, b, d, n, act and ACT[act] or NO_ACT)
            if y then
                return y, true
            end
        end
    end
    local y = x:matmul(w:t())
    if b then
        y:add_(b)
    end
    return y, false
end

-- y = act(x W^T (+ b)); x [..., in], w [out, in], b [out] or nil, act nil, "relu" or "gelu"
-- (the exact form). Recorded, the node is linear's and the activation its own op after it.
function M.linear(x, w, b, act)
    if autocast.on then -- PyTorch's autocast: linear in the region's dtype
        x, w, b = autocast.lower(x, w, b)
    end
    local rec, xd, wd, bd = detached(x, w, b)
    local fuse = not rec and act or nil -- recorded: the activation is a node of its own
    local y, ran = product(xd, wd, bd, fuse)
    if rec then
        record("linear", y, x, w, b)
    end
    if act and not (ran and fuse) then
        y = act == "gelu" and y:gelu() or y:relu()
    end
    return y
end

def {
    name = "linear",
    reads = { { 2, 1 }, { 1, 2 } }, -- w for x's gradient, x for w's
    backward = function(nd, g)
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
    end,
}


-- y, with conv2d's node when rec: it keeps the im2col columns cols, or none (nil: the device's
-- own convolution made y, nd.native)
local function recorded_conv2d(rec, y, x, w, b, geom, groups, cols)
    if rec then
        local nd = record("conv2d", y, x, w, b)
        nd.cols, nd.geom, nd.groups, nd.native = cols, geom, groups, cols == nil
    end
    return y
end

-- y = conv2d(x, w) + b for x [N, C, H, W], w [Cout, C / groups, kh, kw], b [Cout] or nil; geom
-- is {kh, kw, sh, sw, ph, pw, dh, dw}, (oh, ow) the output size, groups nil or >= 1 (the caller
-- checked the shapes)
function M.conv2d(x, w, b, geom, oh, ow, groups)
    if autocast.on then
        x, w, b = autocast.lower(x, w, b)
    end
    local rec, xd, wd, bd = detached(x, w, b)
    -- one gemm over the whole batch: im2col_folded lays the columns out as [C*kh*kw, N*L]
    -- (L = OH*OW), so W [Cout, C*kh*kw] @ cols is [Cout, N*L], brought to [N, Cout, L] by one
    -- copy that also adds the bias; the node keeps the columns for the weight's gradient. With
    -- groups, group g's rows of the columns follow group g-1's: one batched gemm over the groups
    local n, cout, l = x:size(1), w:size(1), oh * ow
    groups = groups or 1
    -- the device's own convolution first (oneDNN for float32 on the CPU, when tide has it): the
    -- node keeps no columns, its gradient asks the same kernels
    local dt = M.native_conv and xd.dtype
    if dt and wd.dtype == dt and (not bd or bd.dtype == dt) then -- mixed dtypes: promotion below
        local y = K.conv2d(xd, wd, bd, geom[1], geom[2], geom[3], geom[4], geom[5], geom[6],
            geom[7] or 1, geom[8] or 1, groups)
        if y then
            return recorded_conv2d(rec, y, x, w, b, geom, groups, nil)
        end
    end
    local cols = K.im2col_folded(xd, geom[1], geom[2], geom[3], geom[4], geom[5], geom[6],
        geom[7], geom[8])
    local rows = cols:size(1)
    cols = cols:view(rows, n * l)
    local yt
    if groups == 1 then
        yt = wd:reshape(cout, -1):matmul(cols)
    else
        yt = wd:reshape(groups, idiv(cout, groups), -1):matmul(cols:view(groups, -1, n * l))
    end
    yt = yt:view(cout, n, l):transpose(1, 2)
    local y
    if bd then
        y = yt:add(bd:view(1, cout, 1))
    else
        y = yt:contiguous()
    end
    return recorded_conv2d(rec, y:reshape(n, cout, oh, ow), x, w, b, geom, groups, cols)
end

-- conv2d's gradient as a graph (create_graph: jvp, hessian, a gradient penalty): recorded
-- im2col of x (its gradient a recorded col2im, so any order), one batched gemm per gradient,
-- and col2im's node for the input's
local function conv2d_graph(x, w, b, g, k, G)
    local n, cout, c = g:size(1), g:size(2), x:size(2)
    local l = g:size(3) * g:size(4)
    local geom = { k[1], k[2], k[3], k[4], k[5], k[6], k[7] or 1, k[8] or 1 }
    local g4 = g:reshape(n, G, idiv(cout, G), l)
    local gx, gw, gb
    if needs(w) then
        local cols = K.im2col(x, unpack(geom, 1, 8)) -- [N, C kh kw, L]
        gw = g4:matmul(cols:view(n, G, -1, l):transpose(3, 4)):sum(1):view(w.shape)
    end
    if needs(b) then
        gb = g4:sum(4):sum(1):reshape(cout)
    end
    if needs(x) then
        local gcols = w:reshape(G, idiv(cout, G), -1):transpose(2, 3):matmul(g4)
            :reshape(n, c * k[1] * k[2], l)
        gx = K.col2im(gcols:detach(), c, x:size(3), x:size(4), unpack(geom, 1, 8))
        if needs_record(gcols) then
            require("tide.nn.functional") -- col2im's node is defined with F.fold
            record("col2im", gx, gcols).geom = geom
        end
    end
    return gx, gw, gb
end

-- conv2d as one gemm over the batch-folded columns [C*kh*kw, N*L] (M.conv2d): g folded the
-- same way makes the weight gradient and the columns' gradient one gemm each (one batched gemm
-- over the groups when nd.groups > 1). The columns are the node's own (released once the
-- formula has run); conv2d by the device's own kernels (nd.native) keeps none, and the
-- weight's gradient reads the input instead.
def {
    name = "conv2d",
    reads = { { 2, 1 } },
    reads_if = { native = { { 2, 1 }, { 1, 2 } } },
    frees = { "cols" },
    backward = function(nd, g)
        local x, w, b = nd[1], nd[2], nd[3]
        local k, G = nd.geom, nd.groups or 1
        if core.is_grad_enabled() then
            return conv2d_graph(x, w, b, g, k, G)
        end
        if nd.native then
            -- the forward's kernels (oneDNN); a graph of the gradient (create_graph) takes the
            -- gemm path below, whose columns are made here
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
                local cols = K.im2col_folded(x:detach(), k[1], k[2], k[3], k[4], k[5], k[6],
                    k[7], k[8])
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
            gx = K.col2im_folded(gcols:view(x:size(2) * k[1] * k[2], n, l), x:size(2),
                x:size(3), x:size(4), k[1], k[2], k[3], k[4], k[5], k[6], k[7], k[8])
        end
        return gx, gw, gb
    end,
}

-- layer norm of x over its trailing d elements (weight and bias nil or of d elements, x's
-- dtype): one kernel forward, one node whose gradient is one kernel; nil where the device has
-- no such kernel (the caller then runs the composite)
function M.layer_norm(x, d, w, b, eps)
    return M.kernel("layer_norm", x, w, b, d, eps) -- the node: nd.mean, nd.rstd, nd.d, nd.eps
end

-- the forward kernel of a row of include/tide_kernels.def (core._kernels[name]) as one
-- node: K[name] runs on the detached inputs (the row's inputs, nil for an absent optional one,
-- then its parameters); the node keeps the inputs as nd[1..], the other outputs and the
-- parameters under their names in the row (rms_norm: nd.rstd, nd.d, nd.eps), and its gradient
-- is the def of the same name (below). Returns the first output, or nil where the device has no
-- kernel (the caller runs its composite). A new row needs nothing here but its def.
function M.kernel(name, ...)
    local row = core._kernels[name]
    local nin, args = #row.inputs, pack(...)
    local rec = false
    if core.is_grad_enabled() then
        for i = 1, nin do
            if args[i] and args[i].requires_grad then
                rec = true
                args[i] = args[i]:detach()
            end
        end
    end
    local outs = pack(K[name](unpack(args, 1, nin + #row.params)))
    local y = outs[1]
    if y and rec then
        local inputs = pack(...)
        local nd = record(name, y, unpack(inputs, 1, nin))
        for i = 2, #row.outputs do
            nd[row.outputs[i]] = outs[i]
        end
        for i, p in ipairs(row.params) do
            nd[p] = inputs[nin + i]
        end
    end
    return y
end

-- layer norm over the trailing nd.d elements (M.kernel keeps nd.mean, nd.rstd, nd.d, nd.eps, the
-- node's own): the backward kernel, or, when a graph of the gradient is being built
-- (create_graph) or g has another dtype, the same formula as differentiable ops, with
-- xhat = (x - mean) * rstd and gy = g * w: dx = rstd * (gy - mean(gy) - xhat * mean(gy * xhat)),
-- dw = sum(g * xhat) and db = sum(g) over the rows
def {
    name = "layer_norm",
    reads = { 1, { 2, 1 } },
    backward = function(nd, g)
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
    end,
}

-- attention over packed sequences (the kernel row `attention`, docs/design.md "Kernel rows"):
-- q, k, v [N, heads * d], sequence b the tokens offsets[b]..offsets[b+1]-1 (offsets [B + 1],
-- int64, 0-based), each attending to itself; dropout (0 outside training) on the weights. One
-- node, whose gradient is the row attention_backward; nil where the device has no kernel for
-- the call (the caller runs its composite). The dropout mask is a function of a seed drawn here
-- from tide's generator, so the backward draws the same one again.
local SEEDS = 4503599627370496 -- 2^52: the rows take seeds below it (exact in every Lua)
function M.attention(q, k, v, offsets, d, heads, scale, dropout)
    if autocast.on then
        q, k, v = autocast.lower(q, k, v)
    end
    local seed = 0
    if dropout > 0 then
        seed = math.floor(core.rand({}, { dtype = "float64" }):item() * SEEDS)
    end
    if needs_record(q, k, v) then
        -- the node keeps its own B + 1 offsets: autograd checks the versions of three saved
        -- tensors (q, k, v), so an offsets tensor rewritten before backward would go unseen
        offsets = offsets:clone()
    end
    return M.kernel("attention", q, k, v, offsets, d, heads, scale, dropout, seed)
end

-- attention's gradients as differentiable ops, for a graph of the gradient (create_graph) or a
-- device without the backward kernel: every head's [N, N] weights at once, a token's keys
-- limited to its own sequence; no dropout (the kernel's mask exists only inside the kernels)
local function attention_backward_ops(nd, g)
    local q, k, v, offsets = nd[1], nd[2], nd[3], nd[4]
    if nd.dropout > 0 then
        error("tide: backward: attention with dropout " .. nd.dropout .. " has no gradient " ..
            "formula outside its kernel (a graph of the gradient, create_graph, or a device " ..
            "without attention_backward); set the model's attention dropout to 0, or call " ..
            "model:eval(), for this backward", 0)
    end
    local N, heads, d = q:size(1), nd.heads, nd.d
    local B = offsets:size(1) - 1
    local counts = offsets:narrow(1, 2, B):sub(offsets:narrow(1, 1, B))
    local seq = core.arange(0, B, 1, { dtype = "int64", device = q.device }):repeat_interleave(counts)
    local other = seq:view(N, 1):ne(seq:view(1, N)) -- [N, N]: keys of another sequence
    local function split(x) -- [heads, N, d]
        return x:view(N, heads, d):transpose(1, 2)
    end
    local qh, kh, vh, gh = split(q), split(k), split(v), split(g)
    local p = qh:matmul(kh:transpose(2, 3)):mul(nd.scale):masked_fill(other, -math.huge):softmax(-1)
    local gq, gk, gv
    if needs(v) then
        gv = p:transpose(2, 3):matmul(gh)
    end
    if needs(q) or needs(k) then
        local dp = gh:matmul(vh:transpose(2, 3))
        local ds = p:mul(dp:sub(p:mul(dp):sum(-1, true))):mul(nd.scale)
        gq = needs(q) and ds:matmul(kh) or nil
        gk = needs(k) and ds:transpose(2, 3):matmul(qh) or nil
    end
    local function merge(x) -- [N, heads * d]
        return x and x:transpose(1, 2):reshape(N, heads * d)
    end
    return merge(gq), merge(gk), merge(gv)
end

-- attention (M.kernel keeps q, k, v, offsets as nd[1..4] and nd.d, nd.heads, nd.scale,
-- nd.dropout, nd.seed): the backward kernel, which computes the weights and the mask again;
-- the ops above where it cannot run
def {
    name = "attention",
    reads = { 1, 2, 3 },
    backward = function(nd, g)
        local q, k, v = nd[1], nd[2], nd[3]
        if not core.is_grad_enabled() and g.dtype == q.dtype then
            local gq, gk, gv = K.attention_backward(q, k, v, nd[4], g, nd.d, nd.heads, nd.scale,
                nd.dropout, nd.seed, needs(q), needs(k), needs(v))
            if gq or gk or gv then
                return gq, gk, gv
            end
        end
        return attention_backward_ops(nd, g:to(q.dtype))
    end,
}

-- RMS norm over the trailing nd.d elements (M.kernel keeps nd.rstd, nd.d, nd.eps): the backward
-- kernel, or, when a graph of the gradient is being built or g has another dtype, the same
-- formula as differentiable ops, with xhat = x * rstd and gy = g * w:
-- dx = rstd * (gy - xhat * mean(gy * xhat)), dw = sum(g * xhat) over the rows
def {
    name = "rms_norm",
    reads = { 1, { 2, 1 } },
    backward = function(nd, g)
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
    end,
}

-- cross-entropy of logits x [M, C] against a bool one-hot [M, C] whose ignored rows are all
-- false, summed (denom nil) or divided by denom (a 0-d tensor: the count of rows not ignored):
-- log_softmax fused in, one node. valid [M, 1] (bool) marks the rows not ignored; the gradient
-- of the others is 0. Every device runs this same sequence of ops (no value is read back), so
-- every CPU device gives the same bits.
-- x [M, C] logits, pick [M, 1] each row's 1-based class (any class in range for an ignored
-- row), valid [M, 1] the rows not ignored, denom their count (nil for a sum)
function M.cross_entropy(x, pick, valid, denom)
    local rec = needs_record(x)
    local xd = rec and x:detach() or x
    local logp = xd:log_softmax(2)
    -- where, not mul: a -inf logit (a masked class) is -inf in logp, and -inf * 0 is NaN
    local loss = core.where(valid, logp:gather(2, pick), 0):sum()
    loss = denom and loss:div(denom):neg() or loss:neg()
    if rec then
        local nd = record("cross_entropy", loss, x)
        nd.logp, nd.pick, nd.valid, nd.denom = logp, pick, valid, denom
    end
    return loss
end

-- d/dx of -sum(log_softmax(x) at the picks of valid rows) / denom = (softmax(x) - onehot) *
-- valid / denom (denom nil for a sum): softmax(x) * valid, then -1 scattered at each valid
-- row's pick; logp is the node's own.
-- An ignored row's gradient is 0 also when every row is ignored (denom 0, the loss 0/0, NaN):
-- PyTorch's nll_loss backward skips those rows, so one all-ignored batch (minGPT's masked
-- targets, padding) leaves the weights as they were instead of making them NaN. denom 0 is
-- read as 1 there (dx is all 0 then), with no value read back.
def {
    name = "cross_entropy",
    frees = { "logp", "pick" },
    backward = function(nd, g)
        local dx = nd.logp:exp():mul(nd.valid)
        dx:scatter_add_(2, nd.pick, nd.valid:to(dx.dtype):neg())
        local denom = nd.denom
        if denom then
            denom = denom:add(denom:eq(0):to(denom.dtype))
        end
        return dx:mul(denom and g:div(denom) or g)
    end,
}

-- ---- batch norm: the kernel rows channel_stats, channel_affine, channel_grad_sums ----------

local BN_DTYPES = { float32 = true, float64 = true }

-- x [N, C, ...]'s batch statistics per channel by composite ops, over dims (1 and 3..): the mean
-- m, x less it, and the biased variance v, m and v with the dims kept (tide.nn._internal's
-- composite batch norm too)
function M.batch_stats(x, dims)
    local m = x
    for _, d in ipairs(dims) do
        m = m:mean(d, true)
    end
    local xc = x:sub(m)
    local v = xc:mul(xc)
    for _, d in ipairs(dims) do
        v = v:mean(d, true)
    end
    return m, xc, v
end

-- x normalized per channel by composite ops, by the given mean and invstd [C] or (mean nil) by
-- the batch's statistics and eps: a gradient's own graph (create_graph) differentiates these
local function bn_normalized(x, mean, invstd, eps)
    local bshape, dims = { 1, x:size(2) }, { 1 }
    for d = 3, x:dim() do
        bshape[d], dims[#dims + 1] = 1, d
    end
    if mean then
        return x:sub(mean:view(bshape)):mul(invstd:view(bshape)), bshape
    end
    local _, xc, v = M.batch_stats(x, dims)
    return xc:mul(v:add(eps):rsqrt()), bshape
end

-- batch norm (tide.nn._internal's checks done) by the rows, one node: y, or nil where they do
-- not apply (a dtype other than float32 / float64, tensors of mixed dtypes, no elements, a
-- device without the rows). training: the batch's statistics, the running ones updated in
-- place (the unbiased variance, as PyTorch's); else the running ones
function M.batch_norm(x, running_mean, running_var, w, b, training, momentum, eps)
    local dt = x.dtype
    if not BN_DTYPES[dt] or x:numel() == 0 or (w and w.dtype ~= dt) or (b and b.dtype ~= dt) then
        return nil
    end
    local c = x:size(2)
    local inner = idiv(x:numel(), x:size(1) * c)
    local d, xd = c * inner, x:detach()
    local mean, invstd
    if training then
        local m, v = K.channel_stats(xd, d, inner)
        if not m then
            return nil
        end
        local n = x:numel() / c
        autograd.no_grad(function()
            if running_mean then
                running_mean:mul_(1 - momentum):add_(m:mul(momentum):to(running_mean.dtype))
            end
            if running_var then
                running_var:mul_(1 - momentum):add_(v:mul(momentum * n / (n - 1))
                    :to(running_var.dtype))
            end
        end)
        mean, invstd = m, v:add(eps):rsqrt()
    else
        mean = running_mean:detach():reshape(c):to(dt):clone() -- kept: the buffer may change
        invstd = running_var:detach():reshape(c):to(dt):add(eps):rsqrt()
    end
    local wd = w and w:detach():reshape(c)
    local scale = wd and invstd:mul(wd) or invstd
    local shift = b and b:detach():reshape(c) or core.zeros({ c }, { dtype = dt, device = x.device })
    local y = K.channel_affine(xd, scale, shift, mean, nil, nil, d, inner)
    if y and needs_record(x, w, b) then
        local nd = record("batch_norm", y, x, w, b)
        nd.mean, nd.invstd, nd.training, nd.spatial, nd.eps = mean, invstd, training, inner, eps
    end
    return y
end

-- PyTorch's batch_norm_backward: with the batch's statistics dx = k1 g + k2 (x - mean) + k3 per
-- channel (k1 = w invstd, k2 = -k1 invstd^2 sum(g (x - mean)) / M, k3 = -k1 sum(g) / M, M the
-- values per channel), one channel_affine pass after one channel_grad_sums pass; with the
-- running ones dx = k1 g. dweight = invstd sum(g (x - mean)), dbias = sum(g)
def {
    name = "batch_norm",
    reads = { 1, 2 },
    backward = function(nd, g)
        local x, w, b = nd[1], nd[2], nd[3]
        local mean, invstd, inner = nd.mean, nd.invstd, nd.spatial
        local c = mean:numel()
        local d = c * inner
        local sum_g, sum_gx
        if not core.is_grad_enabled() and g.dtype == x.dtype then
            sum_g, sum_gx = K.channel_grad_sums(g, x:detach(), mean, d, inner)
        end
        if not sum_g then -- a graph of the gradient: the composite's, recorded
            local ins, which = {}, {}
            for i, t in ipairs({ x, w }) do
                if needs(t) then
                    ins[#ins + 1], which[#ins + 1] = t, i
                end
            end
            local out = {}
            if #ins > 0 then
                local y = autograd.enable_grad(function()
                    local xhat, bshape = bn_normalized(x, (not nd.training) and mean or nil,
                        invstd, nd.eps)
                    return w and xhat:mul(w:view(bshape)) or xhat
                end)
                local grads = pack(autograd.grad({ y }, ins, { g },
                    { create_graph = core.is_grad_enabled(), allow_unused = true }))
                grads = type(grads[1]) == "table" and grads[1] or grads
                for k, i in ipairs(which) do
                    out[i] = grads[k]
                end
            end
            if needs(b) then
                local dims = { 1 }
                for k = 3, g:dim() do
                    dims[#dims + 1] = k
                end
                out[3] = g:sum(dims):view(b.shape)
            end
            return out[1], out[2], out[3]
        end
        local gx, gw, gb
        if needs(x) then
            local k1 = w and invstd:mul(w:detach():reshape(c)) or invstd
            if nd.training then
                local m = x:numel() / c
                local k2 = k1:mul(invstd):mul(invstd):mul(sum_gx):div(-m)
                local k3 = k1:mul(sum_g):div(-m)
                gx = K.channel_affine(x:detach(), k2, k3, mean, g, k1, d, inner)
            else
                local zero = core.zeros({ c }, { dtype = k1.dtype, device = k1.device })
                gx = K.channel_affine(g, k1, zero, nil, nil, nil, d, inner)
            end
        end
        if needs(w) then
            gw = sum_gx:mul(invstd):view(w.shape)
        end
        if needs(b) then
            gb = sum_g:view(b.shape)
        end
        return gx, gw, gb
    end,
}

-- the gradients of f(inputs...) to those inputs that require grad (nil for the others), by
-- autograd through f run again: the fused nodes' gradient where their backward row does not
-- apply, and their gradient's own graph under create_graph (so second derivatives are f's)
local function composite_grad(f, inputs, g)
    local ins, which = {}, {}
    for i, v in ipairs(inputs) do
        if needs(v) then
            ins[#ins + 1], which[#ins + 1] = v, i
        end
    end
    local y = autograd.enable_grad(function() return f(unpack(inputs)) end)
    local grads = pack(autograd.grad({ y }, ins, { g },
        { create_graph = core.is_grad_enabled(), allow_unused = true }))
    grads = type(grads[1]) == "table" and grads[1] or grads
    local out = {}
    for k, i in ipairs(which) do
        out[i] = grads[k]
    end
    return unpack(out, 1, #inputs)
end

-- ---- pointwise losses: the kernel rows pointwise_loss and pointwise_loss_backward ------------

-- include/tide.h's tide_loss
local LOSS_KIND = { mse = 0, l1 = 1, smooth_l1 = 2, huber = 3, bce_with_logits = 4,
    soft_margin = 5 }
local LOSS_DTYPES = { float32 = true, float64 = true }

-- the loss kind (LOSS_KIND's key) of input and target (one shape, checked) with reduction
-- ("mean", "sum" or "none") and beta (smooth_l1's beta, huber's delta, else 0) by the row: one
-- node, whose gradient is the backward row; composite(input, target) gives the same loss as
-- differentiable ops, for a graph of the gradient (create_graph). nil where the row does not
-- apply (a dtype other than float32 or float64, mixed dtypes, no elements, a device without the
-- row): the caller runs its composite.
function M.pointwise_loss(kind, input, target, reduction, beta, composite)
    local dt, n = input.dtype, input:numel()
    if not LOSS_DTYPES[dt] or target.dtype ~= dt or n == 0 then
        return nil
    end
    local d, scale = n, reduction == "mean" and 1 / n or 1
    if reduction == "none" then
        d = 1
    end
    local rec = needs_record(input, target)
    local y = K.pointwise_loss(rec and det(input) or input, rec and det(target) or target, d,
        LOSS_KIND[kind], beta, scale)
    if not y then
        return nil
    end
    y = reduction == "none" and y:view(input.shape) or y:view({})
    if rec then
        local nd = record("pointwise_loss", y, input, target)
        nd.d, nd.kind, nd.beta, nd.scale, nd.composite = d, LOSS_KIND[kind], beta, scale, composite
    end
    return y
end

-- the backward row (g one value per row: the loss's shape), or, for a graph of the gradient or
-- a device without the row, the gradient of the node's composite
def {
    name = "pointwise_loss",
    reads = { 1, 2 },
    backward = function(nd, g)
        local x, t = nd[1], nd[2]
        local nx, nt = needs(x), needs(t)
        if not core.is_grad_enabled() then
            local gx, gt = K.pointwise_loss_backward(x, t, g:to(x.dtype), nd.d, nd.kind, nd.beta,
                nd.scale, nx, nt)
            if gx or gt then -- of the input's shape already (the row's ROWS outputs)
                return gx, gt
            end
        end
        return composite_grad(nd.composite, { x, t }, g)
    end,
}

-- ---- activations: the kernel rows activation and activation_backward -----------------------

-- the rows' kind of each activation (include/tide.h's tide_activation)
M.ACTIVATION = { hardswish = 0, hardsigmoid = 1, elu = 2, leaky_relu = 3, hardtanh = 4,
    softplus = 5, silu = 6, mish = 7, logsigmoid = 8, softsign = 9, tanhshrink = 10,
    softshrink = 11, hardshrink = 12, threshold = 13 }
local ACT_DTYPES = { float32 = true, float64 = true, float16 = true, bfloat16 = true }
-- PyTorch's own compositions of ops: in a half dtype each of its steps rounds, so they run ops
local COMPOSED = { softsign = true, tanhshrink = true }
local HALF = { float16 = true, bfloat16 = true }

-- activation act of x by the row (kind M.ACTIVATION[act], parameters p1..p3 as tide.h says, nil
-- for unused) as one node named torch_name (PyTorch's grad_fn: "EluBackward0"), whose gradient
-- is the row activation_backward. ops(x) is the same function by ops: run where the row does
-- not apply (another dtype, a device without it), and differentiated for the gradient's own
-- graph (create_graph), so second derivatives are the composite's
function M.activation(act, x, ops, torch_name, p1, p2, p3)
    -- (a NaN parameter: PyTorch computes with it, the row refuses it)
    if not ACT_DTYPES[x.dtype] or (COMPOSED[act] and HALF[x.dtype]) or p1 ~= p1 or p2 ~= p2 or
        p3 ~= p3 then
        return ops(x)
    end
    local rec = needs_record(x)
    local y = K.activation(rec and x:detach() or x, M.ACTIVATION[act], p1 or 0, p2 or 0, p3 or 0)
    if not y then
        return ops(x)
    end
    if rec then
        local nd = record("activation", y, x)
        nd.kind, nd.p1, nd.p2, nd.p3 = M.ACTIVATION[act], p1 or 0, p2 or 0, p3 or 0
        nd.ops, nd.torch_name = ops, torch_name
    end
    return y
end

-- the row's gradient, or (a graph of the gradient, g of another dtype, a device without the row)
-- the composite's, by autograd through ops run again on x
def {
    name = "activation",
    reads = { 1 },
    backward = function(nd, g)
        local x = nd[1]
        if not core.is_grad_enabled() and g.dtype == x.dtype then
            local r = K.activation_backward(g, x, nd.kind, nd.p1, nd.p2, nd.p3)
            if r then
                return r
            end
        end
        return (composite_grad(nd.ops, { x }, g))
    end,
}

return M
