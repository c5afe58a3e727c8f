-- tide.autograd.engine: the graph, its recording and backward.
--
-- The graph lives in Lua. The binding decides in C whether to record (grad mode on and an
-- input requires grad) and only then calls hook(name, out, args); tensors without grad never
-- reach this file, so the plain path of `a + b` costs nothing extra.
-- A node is the args table itself ({n = N, ...} plus fn/out/name fields): one table per
-- recorded op, no closures. backward() sorts the nodes topologically and runs each node's
-- gradient formula (formulas.lua).
-- In-place changes: each storage counts its in-place writes (t:_version(), kept by the core).
-- A node notes the counts of the tensors its gradient formula reads (formulas.READS); backward
-- compares them before it runs anything and raises if one moved, as PyTorch does, instead of
-- computing a wrong gradient from the new values.
-- Edges: a node keeps the grad_fn each input had when the node was recorded (e1..e4), so an
-- in-place op recorded later on that input (h:relu_() on a non-leaf h gives h a new grad_fn)
-- does not reroute the gradients of the ops that used h before it.
local core = require "tide.core"
local formulas = require "tide.autograd.formulas"
local raise = require "tide.autograd.raise"

local E = {}

local BW, READS, READS_INDICES = formulas.BW, formulas.READS, formulas.READS_INDICES
local LIST_OPS, reads_of = formulas.LIST_OPS, formulas.reads_of
local TMT = getmetatable(core.zeros(1))
local set_grad_enabled = core.set_grad_enabled
local version = core.Tensor._version
local getmetatable, type = getmetatable, type

local function is_tensor(x)
    return getmetatable(x) == TMT
end

local function needs(x)
    return getmetatable(x) == TMT and x.requires_grad
end

local function grad_fn(t)
    return t.grad_fn -- a property: reads the autograd table without creating one
end

local FLOAT = { float32 = true, float64 = true, float16 = true, bfloat16 = true }

local function no_backward(nd)
    error("tide: backward: no gradient formula for op '" .. tostring(nd.name) ..
        "'; compute it under tide.no_grad or detach() its inputs", 0)
end

-- ---- saved tensors and their versions ----

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
        raise("tide: " .. name .. ": in-place operation on a leaf tensor that requires " ..
            "grad; wrap it in tide.no_grad or use detach()")
    end
    if f and VIEW_OPS[f.name] then
        raise("tide: " .. name .. ": in-place operation on a view of a tensor that requires " ..
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
E.hook = hook

-- ---- nodes recorded by hand (fused ops: one node instead of three or four) ----

-- true when an op on a, b, c must be recorded (grad mode on and one of them requires grad)
function E.needs_record(a, b, c)
    return core.is_grad_enabled() and (needs(a) or needs(b) or needs(c))
end

-- records out = name(a, b, c[, d]) with gradient formula fn; returns the node (for extra fields)
function E.record(name, out, fn, a, b, c, d)
    local nd = { a, b, c, d, n = d ~= nil and 4 or 3, name = name, fn = fn, out = out,
        v1 = false, v2 = false }
    capture_edges(nd)
    local reads = READS[name]
    if reads then
        note_versions(nd, reads)
    end
    out:_set_requires_grad_internal(true)
    out:_ag().grad_fn = nd
    return nd
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

-- Grad-ready hooks: hook(t) runs once a pass has given leaf t the last of its gradient (what
-- DistributedDataParallel starts a bucket's reduction on); callbacks queued during a pass run
-- when it ends. `waiting` counts, per hooked leaf, the edges of this pass still to arrive.
local ready_hooks = setmetatable({}, { __mode = "k" })
local waiting, queued

function E.register_grad_ready_hook(t, fn)
    ready_hooks[t] = fn
end

function E.queue_callback(fn)
    if not queued then
        error("tide: queue_callback: only during a backward pass (from a grad-ready hook)", 2)
    end
    queued[#queued + 1] = fn
end

local function count_edge(x, e)
    if e == false and ready_hooks[x] then
        waiting[x] = (waiting[x] or 0) + 1
    end
end

local function count_waiting(order)
    waiting = {}
    for i = 1, #order do
        local nd = order[i]
        if LIST_OPS[nd.name] then
            for j = 1, #nd[1] do
                count_edge(nd[1][j], nd.es[j])
            end
        else
            count_edge(nd[1], nd.e1)
            if nd.n > 1 then
                count_edge(nd[2], nd.e2)
                count_edge(nd[3], nd.e3)
                count_edge(nd[4], nd.e4)
            end
        end
    end
end

-- g to the input x of a node along its edge e: the node that made x then (e), x's .grad when
-- x was a leaf (e == false), nowhere when x did not require grad then (e == nil)
local function push(x, e, g)
    if e == false and waiting[x] then
        waiting[x] = waiting[x] - 1 -- counted whether g came or not: the edge is done
    end
    if g ~= nil and e ~= nil then
        if e then
            local old = e.g
            e.g = old and old:add(g) or g
        elseif needs(x) then
            accumulate_leaf(x, g)
        end
    end
    if e == false and waiting[x] == 0 then
        waiting[x] = nil
        ready_hooks[x](x)
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
    waiting, queued = {}, {}
    local prev = set_grad_enabled(false)
    local ok, err = pcall(function()
        if not f then
            accumulate_leaf(root, grad)
            return
        end
        local order = toposort(f)
        check_versions(order)
        if next(ready_hooks) then
            count_waiting(order)
        end
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
        for i = 1, #queued do
            queued[i]()
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
    given, waiting, queued = nil, nil, nil
    if not ok then
        -- our own messages carry no position: point them at the caller of backward()
        error(err, (type(err) == "string" and err:find("^tide:")) and 3 or 0)
    end
end
E.backward = run_backward

E.FLOAT = FLOAT

return E
