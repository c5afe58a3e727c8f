-- tide.nn._fused: nn's hot forwards (Linear, Conv2d, cross-entropy, layer norm), each recorded as one
-- autograd node instead of three or four, with the bias added in place: the inputs that
-- require grad are detached for the forward computation, and the node is recorded by hand
-- (tide.autograd.engine.record) with its formula (tide.autograd.formulas: linear, conv2d,
-- cross_entropy, layer_norm). No argument checks here: nn.functional and the modules check first.
local core = require "tide.core"
local K = core._internal -- the internal kernels (tide._internal in docs/API.md)
local compat = require "tide._compat"
local idiv, pack, unpack = compat.idiv, compat.pack, compat.unpack
local engine = require "tide.autograd.engine"
local BW = require("tide.autograd.formulas").BW

local needs_record, record = engine.needs_record, engine.record

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

-- y = x W^T (+ b); x [..., in], w [out, in], b [out] or nil
function M.linear(x, w, b)
    local rec, xd, wd, bd = detached(x, w, b)
    local y = xd:matmul(wd:t())
    if bd then
        y:add_(bd)
    end
    if rec then
        record("linear", y, BW.linear, x, w, b)
    end
    return y
end


-- y = conv2d(x, w) + b for x [N, C, H, W], w [Cout, C / groups, kh, kw], b [Cout] or nil; geom
-- is {kh, kw, sh, sw, ph, pw, dh, dw}, (oh, ow) the output size, groups nil or >= 1 (the caller
-- checked the shapes)
function M.conv2d(x, w, b, geom, oh, ow, groups)
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
            if rec then
                local nd = record("conv2d", y, BW.conv2d, x, w, b)
                nd.geom, nd.groups, nd.native = geom, groups, true
            end
            return y
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
    y = y:reshape(n, cout, oh, ow)
    if rec then
        local nd = record("conv2d", y, BW.conv2d, x, w, b)
        nd.cols, nd.geom, nd.groups = cols, geom, groups
    end
    return y
end

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
-- is BW[name]. Returns the first output, or nil where the device has no kernel (the caller runs
-- its composite). A new row needs nothing here.
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
        local nd = record(name, y, BW[name], unpack(inputs, 1, nin))
        for i = 2, #row.outputs do
            nd[row.outputs[i]] = outs[i]
        end
        for i, p in ipairs(row.params) do
            nd[p] = inputs[nin + i]
        end
    end
    return y
end

-- cross-entropy of logits x [M, C] against a bool one-hot [M, C] whose ignored rows are all
-- false, summed (denom nil) or divided by denom (a 0-d tensor: the count of rows not ignored):
-- log_softmax fused in, one node. valid [M, 1] (bool) marks the rows not ignored; the gradient
-- of the others is 0. Every device runs this same sequence of ops (no value is read back), so
-- every CPU device gives the same bits.
function M.cross_entropy(x, onehot, valid, denom)
    local rec = needs_record(x)
    local xd = rec and x:detach() or x
    local logp = xd:log_softmax(2)
    local loss = logp:mul(onehot):sum()
    loss = denom and loss:div(denom):neg() or loss:neg()
    if rec then
        local nd = record("cross_entropy", loss, BW.cross_entropy, x)
        nd.logp, nd.onehot, nd.valid, nd.denom = logp, onehot, valid, denom
    end
    return loss
end

return M
