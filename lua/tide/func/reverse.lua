-- tide.func.reverse: reverse mode as grad, vjp and jacrev share it. forward runs f on fresh
-- leaves in place of the differentiated arguments' tensors (so f's graph starts there and no
-- .grad is touched); pullback differentiates f's output with tide.autograd.grad.
--
-- Nesting (grad(grad(f)), grad of a function that calls vjp, ...) has no levels as in
-- functorch: an argument that already requires grad (an outer transform's leaf, a tensor of the
-- caller's) is used through a view, so the graph reaches it, and the gradients are recorded
-- (create_graph) exactly when f's output depends on a tensor that requires grad outside this
-- call (engine.depends_beyond): otherwise the results are plain tensors, as PyTorch's.
local core = require("tide.core")
local compat = require("tide._compat")
local engine = require("tide.autograd.engine")
local raise = require("tide.autograd.raise")
local pytree = require("tide.func.pytree")

local is_tensor = core.is_tensor
local pack, unpack = compat.pack, compat.unpack

local FLOAT = engine.FLOAT

local M = {}

-- where an argument's leaf is, for messages: "argument 2", "argument 1.w"
function M.where(i, path)
    return "argument " .. i .. (path or "")
end

-- x (a leaf of argument i at path) checked as a tensor that can take a gradient
function M.check_input(who, x, i, path)
    if not is_tensor(x) then
        raise(("tide: %s: %s is %s; a differentiated argument must be a tensor or a table " ..
            "of tensors"):format(who, M.where(i, path), pytree.what(x)))
    end
    if not FLOAT[x.dtype] then
        raise(("tide: %s: %s has dtype %s; gradients need floating-point tensors: convert " ..
            "it with :to(\"float32\")"):format(who, M.where(i, path), x.dtype))
    end
end

-- f's results: out, and aux with has_aux (f returns output, aux); raises for another count
function M.results(who, r, has_aux)
    local n = r.n
    if has_aux then
        if n ~= 2 then
            raise(("tide: %s: with has_aux = true f must return two values (output, aux), " ..
                "got %d"):format(who, n))
        end
        return r[1], r[2]
    end
    if n ~= 1 then
        raise(("tide: %s: f returned %d values; return the output alone, or return " ..
            "(output, aux) with {has_aux = true}"):format(who, n))
    end
    return r[1]
end

-- the leaf that stands for x: a view of it when it requires grad (grad mode on), so the graph
-- goes on to it; else a fresh leaf, noted in own
local function leaf_for(x, grad_on, own)
    if grad_on and x.requires_grad then
        return x:view_as(x), true
    end
    local xi = x:detach():requires_grad_(true)
    own[xi] = true
    return xi, false
end

-- f(a...) (a packed) with the arguments nums (indices) replaced by fresh leaves; returns the
-- state pullback takes: out (f's output), aux, xs (the leaves, in order), specs (one per num),
-- create (whether the results are recorded), outs (out's leaves, checked as tensors)
function M.forward(who, f, a, nums, has_aux)
    local grad_on = core.is_grad_enabled()
    local call = { n = a.n }
    for i = 1, a.n do
        call[i] = a[i]
    end
    local xs, specs, own, outer = {}, {}, {}, false
    for j, i in ipairs(nums) do
        local leaves, spec = pytree.flatten(who, a[i])
        local paths = pytree.paths(spec)
        if leaves.n == 0 then
            raise(("tide: %s: argument %d holds no tensor to differentiate"):format(who, i))
        end
        for k = 1, leaves.n do
            local x = leaves[k]
            M.check_input(who, x, i, paths[k])
            local xi, viewed = leaf_for(x, grad_on, own)
            outer = outer or viewed
            leaves[k] = xi
            xs[#xs + 1] = xi
        end
        specs[j] = spec
        call[i] = pytree.unflatten(spec, leaves)
    end
    -- f runs with grad mode on (PyTorch's transforms ignore an outer no_grad; one inside f
    -- holds)
    local prev = core.set_grad_enabled(true)
    local r = pack(pcall(f, unpack(call, 1, call.n)))
    core.set_grad_enabled(prev)
    if not r[1] then
        error(r[2], 0)
    end
    local out, aux = M.results(who, pack(unpack(r, 2, r.n)), has_aux)
    local outs, out_spec = pytree.flatten(who, out)
    local tensors = {}
    for k = 1, outs.n do
        local o = outs[k]
        if is_tensor(o) then
            tensors[#tensors + 1] = o
        end
    end
    local create = grad_on and (outer or engine.depends_beyond(tensors, own))
    return { out = out, aux = aux, xs = xs, specs = specs, create = create, outs = outs,
        out_spec = out_spec }
end

-- the gradients of st's output leaves weighted by cts (one tensor per leaf of st.outs, nil for
-- none) with respect to st.xs: a list, zeros where nothing flows. retain keeps the graph for
-- another pullback.
function M.pullback(st, cts, retain)
    local used, gos, create = {}, {}, st.create
    for k = 1, st.outs.n do
        local o, ct = st.outs[k], cts[k]
        if ct ~= nil and is_tensor(o) and o.requires_grad then
            used[#used + 1], gos[#gos + 1] = o, ct
            if ct.requires_grad and core.is_grad_enabled() then
                create = true -- the result depends on the cotangent, which wants gradients
            end
        end
    end
    local gs = {}
    if #used > 0 then
        gs = engine.grad(used, st.xs, { grad_outputs = gos, retain_graph = retain or create,
            create_graph = create, allow_unused = true })
    end
    for i, x in ipairs(st.xs) do
        if gs[i] == nil then
            gs[i] = core.zeros(x.shape, { dtype = x.dtype, device = x.device })
        end
    end
    return gs
end

-- a list of one value per leaf of st.xs, as one tree per differentiated argument
function M.trees(st, per_leaf)
    local out, pos = {}, 1
    for j, spec in ipairs(st.specs) do
        out[j], pos = pytree.unflatten(spec, per_leaf, pos)
    end
    return out
end

-- v (a result: f's output or aux) as returned: its tensors detached unless st records
function M.unwrap(st, v)
    if st.create then
        return v
    end
    return pytree.map_tensors(v, function(t)
        return t:detach()
    end)
end

return M
