-- tide.autograd: reverse-mode automatic differentiation.
--
--   engine.lua    the graph: recording (the binding's hook), version checks, backward
--   formulas.lua  the gradient formula of each op and what it reads
--   raise.lua     errors at the user's line
--
-- Why Lua: the gradient formulas are a few lines of tensor calls each, readable next to the
-- ops they differentiate and identical on every device; the cost per recorded op is one hook
-- call, paid only by tensors that need grad. nn's hot layers (Linear, Conv2d, cross-entropy)
-- record one fused node each (below) instead of three or four.
local core = require "tide.core"
local engine = require "tide.autograd.engine"
local formulas = require "tide.autograd.formulas"

local M = {}

local Tensor = core.Tensor
local TMT = getmetatable(core.zeros(1))
local set_grad_enabled = core.set_grad_enabled
local getmetatable, type = getmetatable, type
local BW = formulas.BW
local needs_record, record = engine.needs_record, engine.record
local run_backward = engine.backward

local function is_tensor(x)
    return getmetatable(x) == TMT
end
M.is_tensor = is_tensor
M.hook = engine.hook
M.backward = run_backward

-- true when autograd has a backward formula for the op called name (tide.core._ops names)
M.has_formula = formulas.has_formula

-- ---- fused ops computed in Lua (nn's Linear, Conv2d and cross-entropy) ----
-- One node instead of three or four, and the bias added in place: the inputs that require
-- grad are detached for the forward computation, and the node is recorded by hand.

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
    local cols = core.im2col(xd, geom[1], geom[2], geom[3], geom[4], geom[5], geom[6])
    local cout = w:size(1)
    local y = wd:view(cout, -1):matmul(cols) -- [N, Cout, OH*OW]
    if bd then
        y:add_(bd:view(cout, 1))
    end
    y = y:view(x:size(1), cout, oh, ow)
    if rec then
        local nd = record("conv2d", y, BW.conv2d, x, w, b)
        nd.cols, nd.geom = cols, geom
    end
    return y
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

M.raise = require "tide.autograd.raise"
M.is_grad_enabled = core.is_grad_enabled
M.set_grad_enabled = set_grad_enabled
M.FLOAT = engine.FLOAT

core.set_autograd_hook(engine.hook)

return M
