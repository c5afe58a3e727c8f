-- tide.autograd.engine: the graph, its recording and backward.
--
-- The graph lives in Lua. The binding decides in C whether to record (grad mode on and an
-- input requires grad) and only then calls hook(name, out, args); tensors without grad never
-- reach this file, so the plain path of `a + b` costs nothing extra.
-- A node is the args table itself ({n = N, ...} plus fn/out/name fields): one table per
-- recorded op, no closures. backward() sorts the nodes topologically and runs each node's
-- gradient formula. Everything the engine knows of an op comes from its entry in the registry
-- (registry.lua: the formula, what it reads, what may be freed early, list and view ops), found
-- with one table index when the op is recorded; formulas.lua declares the binding's ops there.
-- In-place changes: each storage counts its in-place writes (t:_version(), kept by the core).
-- A node notes the counts of the tensors its gradient formula reads (the entry's reads);
-- backward compares them before it runs anything and raises if one moved, as PyTorch does,
-- instead of computing a wrong gradient from the new values.
-- Edges: a node keeps the grad_fn each input had when the node was recorded (e1..e4), so an
-- in-place op recorded later on that input (h:relu_() on a non-leaf h gives h a new grad_fn)
-- does not reroute the gradients of the ops that used h before it.
local core = require("tide.core")
local autocast = require("tide._autocast")
local registry = require("tide.autograd.registry")
local formulas = require("tide.autograd.formulas")
local PART, add_part, materialize = formulas.PART, formulas.add_part, formulas.materialize
local geometry, storage_span, buf_view = formulas.geometry, formulas.storage_span,
    formulas.buf_view
local is_tensor, needs = formulas.is_tensor, formulas.needs
local raise = require("tide.autograd.raise")
local same_shape = require("tide.op_args").same_shape
local compat_unpack = require("tide._compat").unpack

local E = {}

local OPS, LIST_OPS, reads_of = registry.OPS, registry.LIST_OPS, registry.reads_of
local TMT = getmetatable(core.zeros(1))
local set_grad_enabled = core.set_grad_enabled
local view_root = core._internal.view_root
local version = core.Tensor._version
local getmetatable, type = getmetatable, type

local function grad_fn(t)
    return t.grad_fn -- a property: reads the autograd table without creating one
end

-- tide's Lua directory ("lua/tide/"), as the chunk names of its files begin
local LIB = core._frame_info(1).source:match("^@(.*[/\\])autograd[/\\]engine%.lua$")

-- true when chunk (a message's "chunk:line:" position) is one of tide's Lua files; Lua shortens
-- a long path to "..." and its end, which must then begin inside LIB (with at least its last
-- five characters, "tide/": a lone "/" proves nothing)
local function own_chunk(chunk)
    if not LIB then
        return false
    end
    if chunk:sub(1, #LIB) == LIB then
        return true
    end
    local tail = chunk:match("^%.%.%.(.*)$")
    if tail then
        for k = math.min(#LIB, #tail), math.min(#LIB, 5), -1 do
            if LIB:sub(-k) == tail:sub(1, k) then
                return true
            end
        end
    end
    return false
end

-- raises again an error a backward pass caught (a hook's, a formula's, the engine's) with one
-- position: a message that has the user's position (a hook's line) keeps it as it is; a tide
-- message with no position, or with one inside tide, gets the nearest user line (raise); any
-- other (a bug's "attempt to index ..." inside tide) keeps its own. rename maps an unpositioned
-- "tide: backward:" to the caller's name.
local function rethrow(err, rename)
    if type(err) ~= "string" then
        error(err, 0)
    end
    if not err:find("^tide:") then
        local chunk, rest = err:match("^(.-):%d+: (tide:.*)$")
        if not chunk or not own_chunk(chunk) then
            error(err, 0)
        end
        err = rest
    end
    if rename then
        err = err:gsub("^tide: backward:", rename)
    end
    raise(err)
end

local FLOAT = { float32 = true, float64 = true, float16 = true, bfloat16 = true }

-- ---- anomaly mode (tide.autograd.anomaly_mode sets it) ----
-- On, each node recorded keeps the Lua traceback of the forward call that made it (nd.trace),
-- and, with check_nan, backward raises at the first formula that returns a gradient with NaN
-- values, naming the op and giving that traceback (PyTorch's detect_anomaly). Off, recording
-- and backward pay one boolean test per node.
local anomaly, anomaly_nan = false, false

function E.set_anomaly(on, check_nan)
    anomaly, anomaly_nan = on, on and check_nan
end

function E.anomaly_mode()
    return anomaly, anomaly_nan
end

-- ---- the profiler (tide.profiler.hooks, set while one records) ----
-- On, each formula that runs is a range "autograd::engine::evaluate_function: <node>", as in
-- PyTorch's tables; off, backward pays one test per node.
local prof = require("tide.profiler.hooks")

local traceback = debug and debug.traceback -- (nil where the debug library is not opened)

-- the traceback of the forward call recording a node, without the engine's own frames
local function forward_trace()
    if not traceback then
        return nil
    end
    local lines = {}
    for line in traceback("", 2):gmatch("[^\n]+") do
        if line ~= "stack traceback:" and not line:find("autograd[/\\]engine%.lua:") then
            lines[#lines + 1] = line
        end
    end
    return table.concat(lines, "\n")
end

-- the traceback kept for node nd (a copy_slices node's is its in-place op's)
local function trace_of(nd)
    return nd.trace or (nd.inner and nd.inner.trace)
end

-- raises when g (a gradient a formula returned for nd's k-th input) has NaN values
local function check_nan(nd, g, k, in_list)
    if g == nil then
        return
    end
    if getmetatable(g) == PART then
        g = g.g
    end
    if getmetatable(g) ~= TMT or not FLOAT[g.dtype] or not g:isnan():any():item() then
        return
    end
    local msg = string.format("tide: backward: the gradient of %s (%s #%d) has NaN values",
        nd.name, in_list and "the tensor" or "its argument", k)
    local trace = trace_of(nd)
    if trace then
        msg = msg .. "; " .. nd.name .. " was called here (traced in anomaly mode): keep " ..
            "its inputs where its derivative is finite (clamp them, add an epsilon)\n" .. trace
    else
        msg = msg .. "; run the forward pass in anomaly mode too " ..
            "(tide.autograd.detect_anomaly) to see where " .. nd.name .. " was called"
    end
    error(msg, 0)
end

-- t.grad_fn is the node itself; tostring names it as PyTorch does (add -> "AddBackward0")
local NODE = {}
NODE.__tostring = function(nd)
    if nd.torch_name then
        return nd.torch_name
    end
    local camel = tostring(nd.name):gsub("^%l", string.upper):gsub("_(%w)", string.upper)
    return camel .. "Backward0"
end

-- matmul's node as PyTorch 1.13 names it, by the operands' dims: the op it dispatches to (mm,
-- mv, dot) or the reshape it ends with; printed graphs read the same as PyTorch's
local function matmul_name(a, b)
    local da, db = a:dim(), b:dim()
    if da == 2 and db == 2 then
        return "MmBackward0"
    elseif da == 2 and db == 1 then
        return "MvBackward0"
    elseif da == 1 and db == 1 then
        return "DotBackward0"
    elseif da == 1 and db == 2 then
        return "SqueezeBackward3"
    elseif da == 2 then
        return "CloneBackward0"
    end
    return "UnsafeViewBackward0"
end
E.NODE = NODE

-- PyTorch's grad_fn.next_functions, as tide.autograd.next_functions(grad_fn): a list with a
-- pair {node, 0} for each tensor input of the op, in its argument order (1-based:
-- next_functions(loss.grad_fn)[1][1] is PyTorch's loss.grad_fn.next_functions[0][0]). The node
-- is the input's grad_fn as it was when the op was recorded, an AccumulateGrad (its .variable
-- the leaf) for a leaf that requires grad, nil for an input that does not. A function, not a
-- field: a field computed on reading needs an __index on every node, which each absent-field
-- read of the engine's would pay (7% of a backward pass over 400 small ops). After a backward
-- that freed the graph it raises: the edges are gone (PyTorch keeps them).
local ACCUMULATE = { __tostring = function()
    return "AccumulateGrad"
end }
local function edge_pair(edge, x)
    if edge then
        return { edge, 0 }
    elseif edge == false and not (is_tensor(x) and not x.requires_grad) then
        return { setmetatable({ variable = x }, ACCUMULATE), 0 }
    end
    return { nil, 0 }
end
local EKEY_OF = { "e1", "e2", "e3", "e4" }
local DKEY_OF = { "d1", "d2", "d3", "d4" }
function E.next_functions(nd)
    if getmetatable(nd) == ACCUMULATE then
        return {}
    end
    if getmetatable(nd) ~= NODE then
        raise("tide: autograd.next_functions: expected a grad_fn (t.grad_fn), got " ..
            (is_tensor(nd) and "a tensor; pass its grad_fn" or type(nd)))
    end
    if nd.freed then
        raise(("tide: autograd.next_functions: backward() freed the graph of %s (tide keeps " ..
            "no edges after it); read next_functions before backward, or call " ..
            "backward({retain_graph = true})"):format(tostring(nd)))
    end
    local list = {}
    if nd.es then -- a list op (cat, stack): one edge per tensor of the list
        local ts = nd[1]
        for j = 1, #nd.es do
            list[#list + 1] = edge_pair(nd.es[j], ts[j])
        end
        return list
    end
    local n = nd.n or 0
    for i = 1, n < 4 and n or 4 do
        local edge, x = nd[EKEY_OF[i]], nd[i]
        if edge ~= nil or is_tensor(x) or nd[DKEY_OF[i]] then
            list[#list + 1] = edge_pair(edge, x)
        end
    end
    return list
end

local function no_backward(nd)
    error("tide: backward: no gradient formula for op '" .. tostring(nd.name) ..
        "'; compute it under tide.no_grad or detach() its inputs", 0)
end

-- the entry of an op the registry does not have: a node whose backward raises
local UNDEFINED = { backward = no_backward }

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

-- the reads of one node: each tensor still has the version it had when the node was recorded
-- (a copy_slices node checks the in-place op it wraps too)
local function check_node(nd)
    local reads = reads_of(nd)
    if reads then
        for j = 1, #reads do
            local what, when, was = reads[j][1], reads[j][2], nd[VKEY[j]]
            if was and (when == nil or needs(nd[when])) then
                local now = version(nd[what])
                if now ~= was then
                    -- the tensor as PyTorch names it: its dtype and shape
                    local t, dims = nd[what], {}
                    for i = 1, t:dim() do
                        dims[i] = tostring(t:size(i))
                    end
                    error(string.format("tide: backward: a tensor needed for the gradient " ..
                        "of %s (%s) was modified in place after it was used (version %d, " ..
                        "expected %d): the %s tensor of shape {%s}; clone it before modifying, " ..
                        "or modify it under tide.no_grad before the forward pass", nd.name,
                        describe_saved(what), now, was, t.dtype, table.concat(dims, ", ")), 0)
                end
            end
        end
    end
    if nd.inner then
        check_node(nd.inner)
    end
end

-- before backward runs anything: every tensor a node will read is as it was. (A view node
-- whose base changed since is not stale for the ops that used the view before: an op that
-- uses it after gets a new node first, fresh_grad_fn below.)
local function check_versions(order)
    for i = 1, #order do
        check_node(order[i])
    end
end

-- ---- recording ----

-- The binding records only ops that made a new tensor (to() and contiguous() that hand back
-- their input are not recorded), so out is never one of args.
local CASTS = {
    to = true, type_as = true, long = true, int = true, byte = true, bool = true,
    half = true, bfloat16 = true,
}

-- true when node f is a view op's (view = true in its entry: its result shares its input's
-- storage, so an in-place op on that result changes a tensor the graph holds under another
-- name)
local function is_view_node(f)
    local op = OPS[f.name]
    return op ~= nil and op.view == true
end

-- true when t is the result of a view op recorded by autograd
function E.is_view(t)
    local f = grad_fn(t)
    return f ~= nil and is_view_node(f)
end

-- the view op of node vf (or of a recipe, view_recipe's) run again on t (its base, or a
-- gradient of the base's shape)
local function replay(vf, t)
    return t[vf.name](t, compat_unpack(vf, 2, vf.n))
end

-- what replay needs of view node vf, kept apart: backward empties a node once it has run
local function view_recipe(vf)
    return { false, n = vf.n, name = vf.name, compat_unpack(vf, 2, vf.n) }
end

-- true once a view of a non-leaf has been recorded (a node with vbase): until then no input
-- can be a stale view, and capture_edges skips the check
local views_of_nodes = false

-- t's grad_fn, made again when t is a view whose base was changed in place since the view was
-- made (the base has a new grad_fn: PyTorch's view replay). The ops that used t before keep
-- the node they captured, which is right for them; an op that uses t now sees the base as it is.
local function remake_view(t, f)
    local nf = grad_fn(replay(f, f[1])) -- a view node of the base's grad_fn now
    if nf then
        t:_ag().grad_fn = nf
        return nf
    end
    return f
end

local function fresh_grad_fn(t)
    local f = grad_fn(t)
    if f and f.vbase and not f.freed and version(f[1]) ~= f.vbase then
        return remake_view(t, f)
    end
    return f
end

-- the grad_fn of each input that requires grad, as it is now (false: a leaf)
local EKEY = { "e1", "e2", "e3", "e4" }
local function capture_edges(nd, list)
    if list then
        -- the node keeps its own copy of the list: a caller that appends to its table after
        -- tide.cat(t) (building a list step by step) must not change what backward splits
        local ts, es, kept = nd[1], {}, {}
        for j = 1, #ts do
            local x = ts[j]
            kept[j] = x
            es[j] = needs(x) and (fresh_grad_fn(x) or false)
        end
        nd[1], nd.es = kept, es
        return
    end
    for i = 1, nd.n < 4 and nd.n or 4 do
        local x = nd[i]
        if needs(x) then
            local f = grad_fn(x) -- fresh_grad_fn(x), inline: every recorded op comes here
            if views_of_nodes and f and f.vbase and not f.freed and version(f[1]) ~= f.vbase then
                f = remake_view(x, f)
            end
            nd[EKEY[i]] = f or false
        end
    end
end

-- the arguments an op's entry frees (drops) leave the node as it is recorded, unless one routes
-- the gradient to a leaf (edge false); the node keeps their dtypes (d1..d4), which their
-- gradients take (push)
local DKEY = { "d1", "d2", "d3", "d4" }
local function drop_args(nd, drops)
    for i = 1, #drops do
        local k = drops[i]
        local x = nd[k]
        if getmetatable(x) == TMT and nd[EKEY[k]] ~= false then
            nd[DKEY[k]] = x.dtype
            nd[k] = nil
        end
    end
end

-- the op an in-place name records (add_ -> add, t[i] = v -> setindex)
local INPLACE_BASE = setmetatable({ ["t[i] = v"] = "setindex" }, {
    __index = function(t, name)
        local base = name:match("^(.-)_$") or name
        t[name] = base
        return base
    end,
})

local function reads_arg1(base)
    local op = OPS[base]
    local reads = op and op.reads
    if reads then
        for i = 1, #reads do
            if reads[i][1] == 1 then
                return true
            end
        end
    end
    return false
end

-- The views an in-place write on t reaches: {tensor, its view node} from t up to the tensor
-- that is no view of another (the root), each sharing t's storage (a reshape that copied is
-- no view); empty when t is no view.
local function view_chain(t)
    local chain = {}
    local f = fresh_grad_fn(t)
    while f and is_view_node(f) do
        local base = f[1]
        if not (base and t:_shares_storage(base)) then
            break
        end
        chain[#chain + 1] = { t, f }
        t = base
        f = fresh_grad_fn(base)
    end
    return chain, t
end

-- why an in-place op is refused: the words after "in-place operation " and the fix
local REFUSED = {
    leaf = { "on a leaf tensor that requires grad", "wrap it in tide.no_grad or use detach()" },
    leaf_view = { "on a view of a leaf tensor that requires grad",
        "clone() the view first, or make the change under tide.no_grad" },
    expanded = { "on an expanded view (its elements share memory)", "clone() it first" },
}
local NO_CHAIN = {} -- (a view chain: empty when t is no view or needs no grad)

-- true when t's elements overlap in memory (a stride 0 over a dim of more than one element)
local function expanded(t)
    local shape, strides = t.shape, t:stride()
    for d = 1, #shape do
        if strides[d] == 0 and shape[d] > 1 then
            return true
        end
    end
    return false
end

-- A write that requires grad into t, which needs none: when t is a view of a tensor made
-- without grad (core._internal.view_root: the tensor whose storage it views, PyTorch's _base),
-- that root takes the change too. The chain is one step, the geometry of t over the root's
-- storage (as_strided), so the root gets a copy_slices node and t a view node of the root.
local function chain_to_root(t)
    local root = view_root(t)
    if not root then
        return nil, NO_CHAIN
    end
    if expanded(t) then
        return REFUSED.expanded, NO_CHAIN
    end
    if root.requires_grad and not grad_fn(root) then
        return REFUSED.leaf_view, NO_CHAIN
    end
    local geo = geometry(t)
    return nil, { { t, { root, geo[1], geo[2], geo[3], n = 4, name = "as_strided" } } }
end

-- nil when an in-place op on t (grad mode on) may be recorded, else why not (REFUSED's); and
-- t's view chain, NO_CHAIN when t is no view or nothing is recorded through it
local function inplace_refusal(t)
    if not t.requires_grad then
        return chain_to_root(t)
    end
    local chain, root = view_chain(t)
    if #chain == 0 then
        return not grad_fn(t) and REFUSED.leaf or nil, chain
    end
    for i = 1, #chain do
        if chain[i][2].name == "expand" then
            return REFUSED.expanded, chain
        end
    end
    return not grad_fn(root) and REFUSED.leaf_view or nil, chain
end
function E.inplace_refusal(t)
    return (inplace_refusal(t))
end

-- An in-place view op (t:t_(), t:transpose_(...)): alias(t) is t as it is, a tensor of its own
-- with t's grad_fn, on which the caller records the view op; take_view(t, v) then gives t the
-- view's geometry and node. t's version moves (a node that saved t is stale, as in PyTorch),
-- and v's node, made before the move, is noted current: the view needs no replay.
function E.alias(t)
    local old = t:detach()
    old:_set_requires_grad_internal(true)
    old:_ag().grad_fn = grad_fn(t)
    return old
end
function E.take_view(t, v, torch_name)
    local nd = grad_fn(v)
    t:set_(v)
    if nd then
        nd.vbase = version(t)
        nd.torch_name = torch_name
        t:_ag().grad_fn = nd
    end
    return t
end

-- Before an in-place op that autograd records (the binding calls hook(name, nil, args)):
-- refuse a leaf that requires grad, a view of one and an expanded view; keep what the gradient
-- will need of the tensor as it was. The op then runs, and hook(name, self, args) records it
-- (inplace_done below). A failed op leaves only `pending`, replaced by the next.
local pending

local function inplace_before(name, args)
    local self = args[1]
    local why, chain = inplace_refusal(self)
    if why then
        raise("tide: " .. name .. ": in-place operation " .. why[1] .. "; " .. why[2])
    end
    local f = grad_fn(self)
    local base = INPLACE_BASE[name]
    local old = self
    if reads_arg1(base) then
        old = self:detach():clone() -- the values the gradient formula reads
        if self.requires_grad then
            old:_set_requires_grad_internal(true)
        end
    end
    pending = { self = self, old = old, edge = self.requires_grad and f or nil,
        chain = chain[1] and chain or nil }
end

-- copy_slices: the base of a view written in place. Its gradient is the base's, where the
-- view's region takes what the in-place op (nd.inner) gives the view's old values; the op's
-- other inputs get theirs (PyTorch's CopySlices).
local function copy_slices_backward(nd, g)
    local gb, region
    if nd.view.name == "as_strided" then
        -- the view is a geometry over the base's storage: the gradient is laid out as it
        local base, view = geometry(nd[1]), { nd.view[2], nd.view[3], nd.view[4] }
        local buf, lo = storage_span(g, { base, view })
        gb, region = buf_view(buf, lo, base):copy_(g), buf_view(buf, lo, view)
    else
        gb = g:clone()
        region = replay(nd.view, gb)
    end
    local inner = nd.inner
    local g1, g2, g3, g4 = inner.fn(inner, region:clone())
    if g1 == nil then
        region:zero_() -- the op wrote values that did not come from the old ones (copy_, fill_)
    else
        region:copy_(getmetatable(g1) == PART and materialize(g1) or g1)
    end
    return gb, g2, g3, g4
end

-- A root that needed no grad has just taken a value that requires grad: the views made of it
-- until then (lua/view_links.c) follow, as PyTorch's views see their base's grad_fn. They
-- require grad from now, and each gets a view node of the root when its grad_fn is first read
-- (the function below). Views that require grad follow already.
local views_follow = core._internal.views_follow
core._internal.set_view_follower(function(t, root)
    local geo, was = geometry(t), core.is_grad_enabled()
    set_grad_enabled(true) -- (its grad_fn may first be read under no_grad)
    local ok, v = pcall(root.as_strided, root, geo[1], geo[2], geo[3])
    set_grad_enabled(was)
    if not ok then
        error(v, 0)
    end
    t:_ag().grad_fn = grad_fn(v)
end)

-- the in-place op's node (inner) recorded through the chain (view_chain's): each base gets a
-- copy_slices node wrapping the one below, the root keeps the outermost, and each view gets a
-- new view node of its base, from the root down
local function record_through_views(chain, inner)
    local root
    for i = 1, #chain do
        local vf = chain[i][2]
        root = vf[1]
        inner = setmetatable({ root, inner[2], inner[3], inner[4], n = inner.n,
            name = "copy_slices", torch_name = "CopySlices", fn = copy_slices_backward,
            inner = inner, view = view_recipe(vf), e1 = grad_fn(root), e2 = inner.e2,
            e3 = inner.e3, e4 = inner.e4 }, NODE)
    end
    local had_grad = root.requires_grad
    root:_set_requires_grad_internal(true) -- (a root made without grad takes the change too)
    root:_ag().grad_fn = inner
    for i = #chain, 1, -1 do
        local t, vf = chain[i][1], chain[i][2]
        t:_set_requires_grad_internal(true)
        t:_ag().grad_fn = grad_fn(replay(vf, vf[1]))
    end
    if not had_grad then
        views_follow(root)
    end
end

local function inplace_done(name, self, args)
    local p = pending
    pending = nil
    if not p or not rawequal(p.self, self) then
        return
    end
    local base = INPLACE_BASE[name]
    local op = OPS[base] or UNDEFINED
    args[1] = p.old
    args.fn = op.backward
    args.name = base
    args.out = op.keeps_out and self or nil
    capture_edges(args, op.list)
    args.e1 = p.edge
    local reads = op.reads
    if reads then
        note_versions(args, reads)
    end
    if anomaly then
        args.trace = forward_trace()
    end
    if p.chain then
        record_through_views(p.chain, setmetatable(args, NODE))
        return
    end
    local had_grad = self.requires_grad
    self:_set_requires_grad_internal(true)
    self:_ag().grad_fn = setmetatable(args, NODE)
    if not had_grad then
        views_follow(self)
    end
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
    local op = OPS[name] or UNDEFINED
    args.fn = op.backward
    args.name = name
    if name == "matmul" then
        args.torch_name = matmul_name(args[1], args[2])
    end
    if op.keeps_out then
        args.out = out
    end
    capture_edges(args, op.list)
    local reads = op.reads
    if reads then
        if op.reads_if then
            reads = reads_of(args)
        end
        note_versions(args, reads)
    end
    if op.view and grad_fn(args[1]) then
        -- an in-place op on the base, recorded later, would leave this view's graph stale
        args.vbase = version(args[1])
        views_of_nodes = true
    else
        local drops = op.drops -- the edge routes the gradient; nothing reads the tensor
        if drops then
            drop_args(args, drops)
        end
    end
    if anomaly then
        args.trace = forward_trace()
    end
    out:_set_requires_grad_internal(true)
    out:_ag().grad_fn = setmetatable(args, NODE)
end
E.hook = hook

-- ---- nodes recorded by hand (fused ops: one node instead of three or four) ----

-- true when an op on a, b, c must be recorded (grad mode on and one of them requires grad)
function E.needs_record(a, b, c)
    return core.is_grad_enabled() and (needs(a) or needs(b) or needs(c))
end

-- out becomes the result of node nd, an args table ({...} with n) of op (an entry)
local function attach(nd, op, out)
    capture_edges(nd, op.list)
    local reads = op.reads
    if reads then
        note_versions(nd, reads)
    end
    if op.drops then
        drop_args(nd, op.drops)
    end
    if anomaly then
        nd.trace = forward_trace()
    end
    out:_set_requires_grad_internal(true)
    out:_ag().grad_fn = nd
    return nd
end

local function defined(name, who)
    local op = OPS[name]
    if not op then
        raise("tide: " .. who .. ": no op '" .. tostring(name) .. "' is defined; declare it " ..
            "with tide.autograd.def")
    end
    return op
end

-- records out = name(a, b, c[, d]) with the formula of the registry's op `name`; returns the
-- node, where the caller keeps the fields the formula reads (the versions noted are those of
-- the op's reads, the tensors among a..d and out)
function E.record(name, out, a, b, c, d)
    local op = OPS[name] or defined(name, "autograd.record")
    if getmetatable(out) ~= TMT then
        raise("tide: autograd.record: expected the result (argument 2) to be a tensor, got " ..
            type(out))
    end
    local nd = setmetatable({ a, b, c, d, n = d ~= nil and 4 or 3, name = name,
        fn = op.backward, out = op.keeps_out and out or nil, v1 = false, v2 = false }, NODE)
    return attach(nd, op, out)
end

-- the op an entry with a forward defines: op(...) runs forward(nd, ...) with recording off,
-- nd the node to be ({...} with n: the arguments), and records nd when an argument among the
-- first four requires grad (grad mode on); returns forward's first result. The entry is looked
-- up at each call: a def of the name run again (its module reloaded) replaces both functions.
function E.define(name)
    local who = "tide: " .. name .. ": "
    return function(...)
        local op = OPS[name]
        local forward = op.forward
        if not forward then
            raise(who .. "its def was replaced by one without a forward")
        end
        local n = select("#", ...)
        local nd = { n = n, ... }
        local rec = false
        if core.is_grad_enabled() then
            for i = 1, n < 4 and n or 4 do
                if needs(nd[i]) then
                    rec = true
                end
            end
            for i = 5, n do
                if needs(nd[i]) then
                    raise(who .. "argument " .. i .. " requires grad; an op defined with " ..
                        "autograd.def takes gradients for its first four arguments only")
                end
            end
        end
        local out
        if rec then
            local prev = set_grad_enabled(false)
            local ok, r = pcall(forward, nd, ...)
            set_grad_enabled(prev)
            if not ok then
                error(r, 0)
            end
            out = r
        else
            out = forward(nd, ...)
        end
        if getmetatable(out) ~= TMT then
            raise(who .. "forward must return a tensor, got " .. type(out))
        end
        if not rec then
            return out
        end
        for i = 1, n do
            if rawequal(out, nd[i]) then
                raise(who .. "forward returned its argument " .. i .. "; return a new tensor " ..
                    "(x:clone(), or a view such as x:view(x.shape))")
            end
        end
        if not FLOAT[out.dtype] then
            raise(who .. "forward returned a " .. out.dtype .. " tensor; only a floating-point " ..
                "result can carry a gradient")
        end
        nd.name, nd.fn = name, op.backward
        nd.out = op.keeps_out and out or nil
        attach(setmetatable(nd, NODE), op, out)
        return out
    end
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

-- ---- tensor hooks (t:register_hook) and retained gradients (t:retain_grad) ----

-- A non-leaf's hooks live on the node that made it (nd.hooks), a leaf's in leaf_hooks. A
-- leaf's hooks see its whole gradient of the pass once, as PyTorch's (the edges' parts are
-- summed in `pending_leaf` first).
local leaf_hooks = setmetatable({}, { __mode = "k" })
local pending_leaf

local function run_hooks(hooks, g)
    for i = 1, #hooks do
        local fn = hooks[i]
        if fn then
            local r = fn(g)
            if r ~= nil then
                if not is_tensor(r) then
                    error("tide: register_hook: a hook must return nil or a tensor, got " ..
                        type(r), 0)
                end
                local rs, gs = r.shape, g.shape
                if not same_shape(rs, gs) then
                    error("tide: register_hook: a hook returned a gradient of shape {" ..
                        table.concat(rs, ", ") .. "} for a tensor of shape {" ..
                        table.concat(gs, ", ") .. "}", 0)
                end
                g = r
            end
        end
    end
    return g
end

-- adds fn to the list; returns a handle whose remove() takes it out again
local function add_hook(list, fn)
    local k = #list + 1
    list[k] = fn
    return { remove = function() list[k] = false end }
end

function E.register_hook(t, fn)
    local f = grad_fn(t)
    if f then
        f.hooks = f.hooks or {}
        return add_hook(f.hooks, fn)
    end
    leaf_hooks[t] = leaf_hooks[t] or {}
    return add_hook(leaf_hooks[t], fn)
end

function E.retain_grad(t)
    local f = grad_fn(t)
    if f then
        f.retain = true
        f.out = t -- where its gradient goes
    end
end

local function flush_leaf(x)
    local g = pending_leaf[x]
    pending_leaf[x] = nil
    accumulate_leaf(x, run_hooks(leaf_hooks[x], g))
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
        raise("tide: queue_callback: only during a backward pass (from a grad-ready hook)")
    end
    queued[#queued + 1] = fn
end

local capture

local function count_edge(x, e)
    if e == false and ready_hooks[x] and (not capture or capture[x]) then
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

-- autograd.grad's pass: the gradients of the inputs go to `capture` (leaf -> slot, node ->
-- slot) and into `captured`, never into .grad. backward's inputs (cap_acc): the same pass, the
-- captured leaves' gradients going to their .grad (hooks first), the nodes' as retain_grad's.
local captured, cap_acc

local function to_leaf(x, g)
    if capture then
        local k = capture[x]
        if not k then
            return
        elseif not cap_acc then
            local old = captured[k]
            captured[k] = old and old:add(g) or g
            return
        end
    end
    if leaf_hooks[x] then
        local old = pending_leaf[x]
        pending_leaf[x] = old and old:add(g) or g
    else
        accumulate_leaf(x, g)
    end
end

-- The gradient buffers this pass made (a sum, a part's buffer), each referenced only by the
-- edge it waits on until that node runs: more gradient for the edge is added in place. A pass
-- that builds a graph of the gradient (create_graph) owns none.
local owned, own

-- The gradients this pass made (the formulas' results, the sums), with the number of places
-- that hold each: a node's incoming gradient that nothing else holds once its formula has run
-- is released there and then (its memory back to the allocator, as PyTorch's reference count
-- would), not left for the collector. A tensor that came from outside the pass (the seed, a
-- hook's result) is never counted, so never released; nor is one a hook, a capture
-- (autograd.grad) or create_graph may keep.
local held

local release = TMT.__gc

-- the formula of a node that received g returned r (one of its results): count who holds r
local function hold(g, r)
    if r == nil or getmetatable(r) ~= TMT then
        return
    end
    if rawequal(r, g) then
        if held[g] then
            held[g] = held[g] + 1 -- passed on as it is
        end
    else
        held[r] = (held[r] or 0) + 1
    end
end

-- old (the edge's gradient so far, or nil) plus g (a tensor, or a part when is_part)
local function accumulate(old, g, is_part)
    if old ~= nil and getmetatable(old) == PART then
        old = nil -- an empty part waiting (formulas' overwritten): it adds nothing
    end
    if is_part then
        if g.len == 0 then
            return old or g -- nothing to add: kept as it is until the node runs, if alone
        elseif old == nil then
            old = materialize(g)
        elseif owned[old] then
            add_part(old, g)
            return old
        else
            old = old:clone()
            add_part(old, g)
        end
    elseif old == nil then
        return g
    elseif owned[old] and old.dtype == g.dtype then
        old:add_(g)
        return old
    else
        old = old:add(g)
    end
    if own then
        owned[old] = true
        held[old] = 1
    end
    return old
end

-- g to the input x of a node along its edge e: the node that made x then (e), x's .grad when
-- x was a leaf (e == false), nowhere when x did not require grad then (e == nil); dropped: the
-- dtype of an x the node let go (drop_args)
local function push(x, e, g, dropped)
    if e == false and waiting[x] then
        waiting[x] = waiting[x] - 1 -- counted whether g came or not: the edge is done
    end
    if g ~= nil and e ~= nil then
        local part = getmetatable(g) == PART
        local dt = x ~= nil and x.dtype or dropped
        if not part and g.dtype ~= dt and FLOAT[dt] then
            -- a gradient takes its input's dtype (PyTorch's validate_outputs): a bfloat16
            -- activation under autocast gets a bfloat16 gradient from a float32 consumer, so
            -- its own formula runs in bfloat16 (its one-pass kernel), not in mixed dtypes
            local src = g
            g = g:to(dt)
            if held then
                -- the cast holds this edge's place: the source goes back to the allocator now
                -- if nothing else holds it (as the node loop releases), the cast is counted
                local n = held[src]
                if n then
                    held[src] = n - 1
                    if n == 1 then
                        release(src)
                    end
                end
                held[g] = 1
            end
        end
        if e then
            e.g = accumulate(e.g, g, part)
        elseif needs(x) then
            to_leaf(x, part and materialize(g) or g)
        end
    end
    if e == false and waiting[x] == 0 then
        waiting[x] = nil
        if pending_leaf[x] then
            flush_leaf(x)
        end
        ready_hooks[x](x)
    end
end

-- for autograd.grad: the nodes of order that lead to a captured input (leads), and those of
-- them whose formula must run to get there (runs: an input edge leads on); the rest of the
-- graph is neither run nor freed, as in PyTorch
local function needed_nodes(order)
    local leads, runs = {}, {}
    local function edge(x, e)
        if e then
            return leads[e]
        end
        return e == false and capture[x] ~= nil
    end
    for i = 1, #order do
        local nd = order[i]
        local r = false
        if LIST_OPS[nd.name] then
            for j = 1, #nd[1] do
                r = r or edge(nd[1][j], nd.es[j])
            end
        else
            r = edge(nd[1], nd.e1)
            if nd.n > 1 then
                r = r or edge(nd[2], nd.e2) or edge(nd[3], nd.e3) or edge(nd[4], nd.e4)
            end
        end
        runs[nd] = r or nil
        leads[nd] = (r or capture[nd] ~= nil) or nil
    end
    return leads, runs
end

-- A node whose formula has run (without retain_graph) lets go of what it saved there and then,
-- not when the pass ends: an activation is garbage once the last node that read it has run,
-- as under reference counting (a small CNN's first ReLU output and pooling indices, 8 MB,
-- before its first convolution's gradient). The collector hears of the bytes among them that
-- came from the step (an argument another node made, the result, the indices or columns):
-- true when they add up to a collection (core._gc_dropped; parameters and inputs are leaves
-- and never counted).
local function drop_saved(nd)
    local op = OPS[nd.name]
    -- a retained tensor (t:retain_grad()) stays its node's out: t.retains_grad is still true
    -- after the pass, as PyTorch's (t itself holds the node, so nothing more is kept alive)
    local kept = nd.retain and nd.out or nil
    local due = not LIST_OPS[nd.name] and core._gc_dropped(nd.e1 and nd[1], nd.e2 and nd[2],
        nd.e3 and nd[3], nd.e4 and nd[4], not kept and nd.out or nil, nd.indices)
    for j = 1, nd.n do
        nd[j] = nil
    end
    nd.out, nd.indices, nd.inner, nd.view = kept, nil, nil, nil
    nd.e1, nd.e2, nd.e3, nd.e4, nd.es = nil, nil, nil, nil, nil
    local rel = op and op.releases -- the fields the op keeps for itself (conv2d's columns)
    if rel then
        for i = 1, #rel do
            local k = rel[i]
            local v = nd[k]
            nd[k] = nil
            if v ~= nil and core._gc_dropped(v) then
                due = true
            end
        end
    end
    return due
end

-- the node whose formula runs (named when create_graph meets a formula it cannot record)
local current

-- one pass from roots (tensors) seeded with grads: returns pcall's ok, err. A pass may run
-- inside another's formula (tide.utils.checkpoint recomputes its block and differentiates it
-- there): the outer pass's state is kept aside and given back at the end.
local function pass(roots, grads, retain, create)
    local outer = { given, waiting, queued, pending_leaf, owned, own, held, current }
    current = nil
    given = setmetatable({}, { __mode = "k" })
    waiting, queued, pending_leaf = {}, {}, {}
    owned, own = {}, not create
    held = own and setmetatable({}, { __mode = "k" }) or nil
    local prev = set_grad_enabled(create and true or false)
    -- the formulas run in the dtypes the forward gave them (PyTorch's rule): no autocast
    local prev_autocast = autocast.swap({})
    core._gc_pass_begin() -- the forward pass's unkept results are garbage (lua/gc.c)
    local ok, err = pcall(function()
        local order, seen, heads = {}, {}, {}
        for i = 1, #roots do
            local f = fresh_grad_fn(roots[i])
            if f then
                if not seen[f] then
                    visit(f, seen, order)
                end
                heads[#heads + 1] = f
                f.g = f.g and f.g:add(grads[i]) or grads[i]
            else
                to_leaf(roots[i], grads[i])
            end
        end
        local leads, runs
        if capture then
            leads, runs = needed_nodes(order)
        end
        check_versions(order)
        if next(ready_hooks) and (not capture or cap_acc) then
            count_waiting(order)
        end
        for i = #order, 1, -1 do
            local nd = order[i]
            local g = nd.g
            nd.g = nil
            if g ~= nil and getmetatable(g) == PART then
                g = materialize(g) -- only an empty part reached this node: its zeros
            end
            if g ~= nil then
                owned[g] = nil -- handed to the formula, which may pass it on as it is
            end
            local n_held = held and g ~= nil and held[g]
            if n_held then
                held[g] = n_held - 1
            end
            if g and leads and not leads[nd] then
                g = nil
            end
            local run = g ~= nil and (not runs or runs[nd])
            if g then
                current = nd
                if nd.hooks then
                    g = run_hooks(nd.hooks, g)
                end
                if nd.retain and (not capture or cap_acc) then
                    local a = nd.out:_ag()
                    a.grad = a.grad and a.grad:add(g) or g:clone()
                end
                local slot = capture and capture[nd]
                if slot then
                    captured[slot] = g
                    n_held = nil
                end
                if nd.hooks then
                    n_held = nil -- a hook may have kept it, or given another
                end
                local range = run and prof.open and
                    prof.open("autograd::engine::evaluate_function: " .. tostring(nd))
                if not run then -- captured, and nothing below it is wanted
                    g = nil
                elseif LIST_OPS[nd.name] then
                    local gs = nd.fn(nd, g)
                    local ts, es = nd[1], nd.es
                    if anomaly_nan then
                        for j = 1, #ts do
                            check_nan(nd, gs[j], j, true)
                        end
                    end
                    for j = 1, #ts do
                        if held then
                            hold(g, gs[j])
                        end
                        push(ts[j], es[j], gs[j])
                    end
                else
                    -- nothing else holds g: released after the formula unless passed on
                    local g_free = n_held and held[g] == 0 or nil
                    local g1, g2, g3, g4 = nd.fn(nd, g, g_free)
                    if anomaly_nan then
                        check_nan(nd, g1, 1)
                        check_nan(nd, g2, 2)
                        check_nan(nd, g3, 3)
                        check_nan(nd, g4, 4)
                    end
                    if held then
                        hold(g, g1)
                        hold(g, g2)
                        hold(g, g3)
                        hold(g, g4)
                    end
                    push(nd[1], nd.e1, g1, nd.d1)
                    if nd.n > 1 then
                        push(nd[2], nd.e2, g2, nd.d2)
                        push(nd[3], nd.e3, g3, nd.d3)
                        push(nd[4], nd.e4, g4, nd.d4)
                    end
                end
                if range then
                    prof.close(range)
                end
                if n_held and g ~= nil and held[g] == 0 then
                    release(g) -- its formula has run and nothing holds it
                end
            end
            -- (backward's inputs: PyTorch runs, so frees, every node that leads to one)
            if not retain and (run or not runs or (cap_acc and leads[nd])) then
                nd.freed = true
                if drop_saved(nd) then
                    core._gc_young() -- what the pass dropped so far adds up (lua/gc.c)
                end
            end
        end
        for x in pairs(pending_leaf) do
            flush_leaf(x)
        end
        for i = 1, #queued do
            queued[i]()
        end
        for i = 1, #heads do
            heads[i].g = nil -- a root no input led to (autograd.grad skips such nodes)
        end
    end)
    set_grad_enabled(prev)
    autocast.swap(prev_autocast)
    core._gc_pass_end() -- the graph just died: the collector's moment (lua/gc.c)
    if not ok and create and current and type(err) == "string" and
        err:find("not differentiable", 1, true) then
        err = "tide: autograd.grad: create_graph: the gradient of " .. tostring(current) ..
            " cannot be differentiated again yet (" .. err:gsub("^.-tide: ", "") .. ")"
    end
    -- anomaly mode: an error in a node's backward names the forward call that made the node
    local trace = not ok and anomaly and current and type(err) == "string" and trace_of(current)
    if trace and not err:find(trace, 1, true) then
        err = err .. "\n(anomaly mode) the forward call of " .. current.name ..
            ", whose backward failed:\n" .. trace
    end
    given, waiting, queued, pending_leaf, owned, own, held, current = outer[1], outer[2],
        outer[3], outer[4], outer[5], outer[6], outer[7], outer[8]
    return ok, err
end

-- checks grad against root (device, dtype, shape); returns nil or the message
local function grad_mismatch(grad, root, what)
    local gd, rd = grad.device, root.device
    if gd ~= rd then
        return string.format("expected all tensors on the same device, found %s (%s) and %s " ..
            "(tensor); move the gradient with grad:to(\"%s\")", tostring(gd), what, tostring(rd),
            tostring(rd))
    end
    if grad.dtype ~= root.dtype then
        return string.format("expected %s of dtype %s (the tensor's), got %s; convert it with " ..
            "grad:to(\"%s\")", what, root.dtype, grad.dtype, root.dtype)
    end
    local gs, rs = grad.shape, root.shape
    if not same_shape(gs, rs) then
        return what .. " of shape {" .. table.concat(gs, ", ") .. "} does not match the " ..
            "tensor's shape {" .. table.concat(rs, ", ") .. "}"
    end
end

-- raises unless t is a tensor that requires grad (why: the rest of who's message otherwise)
function E.check_requires_grad(t, who, why)
    if not is_tensor(t) then
        raise("tide: " .. who .. ": expected a tensor, got " .. type(t))
    end
    if not t.requires_grad then
        raise("tide: " .. who .. ": " .. why)
    end
end

-- the seed gradient of root (grad, or ones for a one-element root), checked
local function seed(root, grad)
    E.check_requires_grad(root, "backward", "tensor does not require grad and has no grad_fn; " ..
        "create its inputs with {requires_grad = true} or call requires_grad_()")
    if grad == nil then
        if root:numel() ~= 1 then
            local s = table.concat(root.shape, ", ")
            raise("tide: backward: grad can be implicitly created only for a one-element " ..
                "tensor, got shape {" .. s .. "}; pass a gradient: t:backward(grad)")
        end
        return core.ones(root.shape, { device = root.device, dtype = root.dtype })
    elseif not is_tensor(grad) then
        raise("tide: backward: expected grad to be a tensor, got " .. type(grad))
    end
    -- checked here, at the user's call: a gradient elsewhere would land on the leaves
    local bad = grad_mismatch(grad, root, "grad")
    if bad then
        raise("tide: backward: " .. bad)
    end
    return grad:clone() -- the caller keeps its tensor; leaf grads never alias it
end

E.seed = seed

-- run_backward(root, grad, retain[, create[, inputs]]) or (roots, grads, ...) with lists: one
-- pass from every root, accumulating into the leaves' .grad; create (PyTorch's create_graph)
-- records the pass, so the gradients are differentiable, and retains the graph unless retain is
-- false. inputs (a checked list of tensors that require grad): only their .grad is filled, by
-- autograd.grad's pass (the nodes that lead to none of them neither run nor are freed); a
-- non-leaf among them is made to retain its grad, as PyTorch's
local function run_backward(root, grad, retain, create, inputs)
    local roots, grads = root, grad
    if is_tensor(root) or type(root) ~= "table" then
        roots, grads = { root }, { grad }
    end
    local seeds = {}
    for i = 1, #roots do
        seeds[i] = seed(roots[i], grads[i])
    end
    if retain == nil then
        retain = create
    end
    local outer_capture, outer_captured, outer_acc = capture, captured, cap_acc
    capture, captured, cap_acc = nil, nil, nil -- (inside autograd.grad's pass)
    if inputs then
        capture, captured, cap_acc = {}, {}, true
        for i = 1, #inputs do
            local x = inputs[i]
            local f = grad_fn(x)
            if f then
                E.retain_grad(x)
            end
            capture[f or x] = i
        end
    end
    local ok, err = pass(roots, seeds, retain, create and true or false)
    capture, captured, cap_acc = outer_capture, outer_captured, outer_acc
    if not ok then
        rethrow(err)
    end
end
E.backward = run_backward

-- true while autograd.grad's pass runs, or backward's with inputs (a formula that runs a
-- backward of its own, as tide.utils.checkpoint's, cannot serve them: that backward accumulates
-- into every leaf's .grad; PyTorch's reentrant checkpoint refuses both)
function E.in_grad_pass()
    return capture ~= nil
end

-- a tensor or a list of tensors, as a list
local function tensor_list(v, what)
    if is_tensor(v) then
        return { v }
    end
    if type(v) ~= "table" or #v == 0 then
        raise("tide: autograd.grad: expected " .. what .. " to be a tensor or a list of " ..
            "tensors, got " .. (type(v) == "table" and "an empty table" or type(v)))
    end
    for i = 1, #v do
        if not is_tensor(v[i]) then
            raise(string.format("tide: autograd.grad: expected %s[%d] to be a tensor, got %s",
                what, i, type(v[i])))
        end
    end
    return v
end

-- autograd.grad with is_grads_batched = true (PyTorch's): each grad_output has a first (batch)
-- dim of one size B; the gradients are those of the B slices, stacked along a first dim (one
-- pass per slice, the graph kept between them; PyTorch's vmap computes the same values)
local function grads_batched(outs, ins, opts)
    local b = opts.is_grads_batched
    if type(b) ~= "boolean" then
        raise("tide: autograd.grad: is_grads_batched must be a boolean, got " .. type(b))
    end
    local o = {}
    for k, v in pairs(opts) do
        if k ~= "is_grads_batched" then
            o[k] = v
        end
    end
    if not b then
        return E.grad(outs, ins, o)
    end
    local gouts = o.grad_outputs
    if is_tensor(gouts) then
        gouts = { gouts }
    end
    if type(gouts) ~= "table" or not is_tensor(gouts[1]) or gouts[1]:dim() == 0 then
        raise("tide: autograd.grad: is_grads_batched needs grad_outputs, each with a first " ..
            "(batch) dim")
    end
    local n = gouts[1]:size(1)
    local retain = o.retain_graph
    if retain == nil then
        retain = o.create_graph == true
    end
    local per = {}
    for i = 1, n do
        local gi = {}
        for j = 1, #outs do
            local g = gouts[j]
            if g ~= nil then
                if not is_tensor(g) or g:dim() == 0 or g:size(1) ~= n then
                    raise(string.format("tide: autograd.grad: is_grads_batched: grad_outputs[%d]" ..
                        " must have the batch size %d first, as grad_outputs[1]", j, n))
                end
                gi[j] = g:select(1, i)
            end
        end
        o.grad_outputs, o.retain_graph = gi, i < n or retain
        per[i] = E.grad(outs, ins, o)
    end
    local res = {}
    for k = 1, #ins do
        if n > 0 and per[1][k] ~= nil then
            local parts = {}
            for i = 1, n do
                parts[i] = per[i][k]
            end
            res[k] = core.stack(parts, 1)
        end
    end
    return res
end

-- tide.autograd.grad(outputs, inputs[, opts]): the gradients of the outputs with respect to
-- each input, as a list; .grad is left alone. opts: grad_outputs (a tensor or list, nil for
-- one-element outputs), retain_graph (default create_graph), create_graph = false (true:
-- the gradients are themselves recorded, for higher derivatives), allow_unused = false.
-- grad_outputs may also come third, as PyTorch's positional parameter: grad(outputs, inputs,
-- grad_outputs[, opts]) (a tensor, a list of tensors, or nil).
function E.grad(outputs, inputs, opts, opts2)
    if inputs == nil then
        raise("tide: autograd.grad: expected (outputs, inputs[, options]); the gradient a " ..
            "backward pass left on a tensor is t.grad")
    end
    local outs = tensor_list(outputs, "outputs")
    local ins = tensor_list(inputs, "inputs")
    -- grad_outputs third: a tensor, a list of tensors, or nil (or {}) before the options
    local list_third = type(opts) == "table" and
        (is_tensor(opts[1]) or (next(opts) == nil and opts2 ~= nil))
    if is_tensor(opts) or (opts == nil and opts2 ~= nil) or list_third then
        local gouts = opts
        opts = opts2 or {}
        if type(opts) ~= "table" or is_tensor(opts) then
            raise("tide: autograd.grad: expected an options table after grad_outputs, got " ..
                type(opts))
        end
        if opts.grad_outputs ~= nil then
            raise("tide: autograd.grad: grad_outputs given twice, third and by name; pass it " ..
                "one way")
        end
        local o = {}
        for k, v in pairs(opts) do
            o[k] = v
        end
        o.grad_outputs = gouts
        opts = o
    elseif opts2 ~= nil then
        raise("tide: autograd.grad: expected (outputs, inputs[, grad_outputs][, options]), " ..
            "got a " .. type(opts) .. " third; grad_outputs is a tensor or a list of tensors")
    end
    opts = opts or {}
    if type(opts) ~= "table" or is_tensor(opts) then
        raise("tide: autograd.grad: expected an options table, got " .. type(opts))
    end
    if opts.is_grads_batched ~= nil then
        return grads_batched(outs, ins, opts)
    end
    core._check_options(opts, "autograd.grad",
        { "grad_outputs", "retain_graph", "create_graph", "allow_unused" })
    local create = opts.create_graph == true
    local retain = opts.retain_graph
    if retain == nil then
        retain = create
    end
    local gouts = opts.grad_outputs
    if is_tensor(gouts) then
        gouts = { gouts }
    elseif gouts ~= nil and type(gouts) ~= "table" then
        raise(string.format("tide: autograd.grad: grad_outputs must be a tensor or a list of " ..
            "tensors (one per output), got a %s; pass tide.tensor(%s) for one output",
            type(gouts), tostring(gouts)))
    end
    gouts = gouts or {}
    local grads = {}
    for i = 1, #outs do
        local o = outs[i]
        if not o.requires_grad then
            raise(string.format("tide: autograd.grad: output %d does not require grad and has " ..
                "no grad_fn", i))
        end
        local g = gouts[i]
        if g == nil then
            if o:numel() ~= 1 then
                raise(string.format("tide: autograd.grad: grad can be implicitly created only " ..
                    "for one-element outputs, output %d has shape {%s}; pass grad_outputs", i,
                    table.concat(o.shape, ", ")))
            end
            g = core.ones(o.shape, { device = o.device, dtype = o.dtype })
        else
            if not is_tensor(g) then
                raise(string.format("tide: autograd.grad: expected grad_outputs[%d] to be a " ..
                    "tensor, got %s", i, type(g)))
            end
            local bad = grad_mismatch(g, o, "grad_outputs[" .. i .. "]")
            if bad then
                raise("tide: autograd.grad: " .. bad)
            end
        end
        grads[i] = g
    end
    local cap = {}
    for i = 1, #ins do
        local x = ins[i]
        if not x.requires_grad then
            raise(string.format("tide: autograd.grad: input %d does not require grad; create " ..
                "it with {requires_grad = true}", i))
        end
        cap[grad_fn(x) or x] = i
    end
    local outer_capture, outer_captured, outer_acc = capture, captured, cap_acc
    capture, captured, cap_acc = cap, {}, nil -- (a pass inside a pass)
    local ok, err = pass(outs, grads, retain, create)
    local res = captured
    capture, captured, cap_acc = outer_capture, outer_captured, outer_acc
    if not ok then
        rethrow(err, "tide: autograd.grad:")
    end
    for i = 1, #ins do
        if res[i] == nil and not opts.allow_unused then
            raise(string.format("tide: autograd.grad: input %d was not used to compute the " ..
                "outputs; pass {allow_unused = true} to get nil for it", i))
        end
    end
    return res
end

-- true when the graph that made roots (a list of tensors) reaches a tensor that requires grad
-- other than the leaves in own (a set), or a node already freed (whose inputs are unknown).
-- tide.func keeps a transform's results differentiable (create_graph) only when so: an outer
-- transform, or a tensor of the caller's, may want their gradient.
function E.depends_beyond(roots, own)
    local seen, stack = {}, {}
    -- x reached along the edge e (a node, false for a leaf, nil when x needed no grad)
    local function foreign(x, e)
        if e then
            if not seen[e] then
                seen[e] = true
                stack[#stack + 1] = e
            end
            return false
        end
        return e == false and (x == nil or needs(x)) and not own[x] -- nil: dropped, unknown
    end
    for i = 1, #roots do
        local r = roots[i]
        if needs(r) and foreign(r, grad_fn(r) or false) then
            return true
        end
    end
    while #stack > 0 do
        local nd = stack[#stack]
        stack[#stack] = nil
        if nd.freed then
            return true
        end
        if LIST_OPS[nd.name] then
            local es, ts = nd.es or {}, nd[1] or {}
            for j = 1, #es do
                if foreign(ts[j], es[j]) then
                    return true
                end
            end
        else
            for i = 1, 4 do
                if foreign(nd[i], nd[EKEY[i]]) then
                    return true
                end
            end
        end
    end
    return false
end

E.FLOAT = FLOAT

return E
