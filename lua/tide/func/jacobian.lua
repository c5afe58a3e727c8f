-- tide.func.jacrev / jacfwd / hessian: PyTorch's Jacobian transforms. jacrev(f[, {argnums = 1,
-- has_aux = false, chunk_size =}]) and jacfwd(f[, {argnums = 1, has_aux = false, randomness =
-- "error"}]) return functions giving, for each tensor of f's output (its structure kept), the
-- Jacobian with respect to argument argnums: a tensor of shape output .. input, or a table of
-- them shaped as the argument; for a list of argnums a list of those. hessian(f[, {argnums =
-- 1}]) is jacfwd(jacrev(f)), as PyTorch's.
-- jacrev pulls back one row at a time (one backward pass per output element, f run once);
-- jacfwd pushes forward one column at a time (a jvp per input element, f run each time, so
-- randomness applies as in vmap). Both give the same values, as PyTorch's.
local core = require("tide.core")
local compat = require("tide._compat")
local args = require("tide.op_args")
local options = require("tide.func.options")
local reverse = require("tide.func.reverse")
local pytree = require("tide.func.pytree")
local vjp = require("tide.func.vjp")
local jvp = require("tide.func.jvp")

local M = {}

local function concat(a, b)
    local out = {}
    for i = 1, #a do
        out[#out + 1] = a[i]
    end
    for i = 1, #b do
        out[#out + 1] = b[i]
    end
    return out
end

-- the one-hot tensor of like's shape, dtype and device with a 1 at flat position e
local function one_hot(like, e)
    local t = core.zeros({ like:numel() }, { dtype = like.dtype, device = like.device })
    t[e] = 1
    return t:reshape(like.shape)
end

-- rows (one tensor of x's shape per element of o) as the block of shape o .. x
local function block(rows, o, x)
    local shape = concat(o.shape, x.shape)
    if #rows == 0 then
        return core.zeros(shape, { dtype = x.dtype, device = x.device })
    end
    return core.stack(rows, 1):reshape(shape)
end

-- the result's structure: for each output leaf k, per_out[k] (one block per input leaf) as
-- the differentiated arguments' trees (one tree, or a list for a list of argnums)
local function shaped(specs, out_spec, per_out, single)
    local leaves = { n = #per_out }
    for k, blocks in ipairs(per_out) do
        local trees, pos = {}, 1
        for j, spec in ipairs(specs) do
            trees[j], pos = pytree.unflatten(spec, blocks, pos)
        end
        leaves[k] = single and trees[1] or trees
    end
    return (pytree.unflatten(out_spec, leaves))
end

function M.jacrev_as(who, f, opts, ...)
    options.callable(who, f)
    args.no_extra(who, 2, ...)
    local o = options.options(who, opts, { "argnums", "has_aux", "chunk_size" },
        "{argnums = 1}")
    local argnums, single = options.argnums(who, o.argnums)
    local has_aux = options.boolean(who, o, "has_aux")
    options.chunk_size(who, o)
    return function(...)
        local a = compat.pack(...)
        local st = reverse.forward(who, f, a, options.resolve(who, argnums, a.n), has_aux)
        vjp.tensor_outputs(who, st)
        local per_out = {}
        for k = 1, st.outs.n do
            local out = st.outs[k]
            local rows = {}
            for i = 1, #st.xs do
                rows[i] = {}
            end
            if out.requires_grad then
                for e = 1, out:numel() do
                    local gs = reverse.pullback(st, { [k] = one_hot(out, e) }, true)
                    for i = 1, #st.xs do
                        rows[i][e] = gs[i]
                    end
                end
            end
            per_out[k] = {}
            for i, x in ipairs(st.xs) do
                per_out[k][i] = block(rows[i], out, x)
            end
        end
        local jac = shaped(st.specs, st.out_spec, per_out, single)
        if has_aux then
            return jac, reverse.unwrap(st, st.aux)
        end
        return jac
    end
end

function M.jacfwd_as(who, f, opts, ...)
    options.callable(who, f)
    args.no_extra(who, 2, ...)
    local o = options.options(who, opts, { "argnums", "has_aux", "randomness" },
        "{argnums = 1}")
    local argnums, single = options.argnums(who, o.argnums)
    local has_aux = options.boolean(who, o, "has_aux")
    local randomness = options.randomness(who, o)
    return function(...)
        local a = compat.pack(...)
        local nums = options.resolve(who, argnums, a.n)
        local xs, specs = {}, {}
        for j, i in ipairs(nums) do
            local leaves, spec = pytree.flatten(who, a[i])
            local paths = pytree.paths(spec)
            for k = 1, leaves.n do
                reverse.check_input(who, leaves[k], i, paths[k])
                xs[#xs + 1] = leaves[k]
            end
            specs[j] = spec
        end
        local zeros = {}
        for i, x in ipairs(xs) do
            zeros[i] = core.zeros(x.shape, { dtype = x.dtype, device = x.device })
        end
        local watch = options.watch(who, randomness)
        local first
        local cols = {} -- cols[i][e]: the run for element e of input leaf i
        for i, x in ipairs(xs) do
            cols[i] = {}
            for e = 1, x:numel() do
                local ts = {}
                for m = 1, #xs do
                    ts[m] = m == i and one_hot(x, e) or zeros[m]
                end
                cols[i][e] = watch(jvp.run, who, f, a, nums, ts, has_aux)
                first = first or cols[i][e]
            end
        end
        -- inputs of no elements: one run, for the output's structure and aux
        first = first or watch(jvp.run, who, f, a, nums, zeros, has_aux)
        local per_out = {}
        for k = 1, first.outs.n do
            local out = first.outs[k]
            per_out[k] = {}
            for i, x in ipairs(xs) do
                local c = {}
                for e, run in ipairs(cols[i]) do
                    c[e] = run.jvs[k]
                end
                -- the columns, stacked last, as o .. x
                local shape = concat(out.shape, x.shape)
                if #c == 0 then
                    per_out[k][i] = core.zeros(shape, { dtype = out.dtype, device = out.device })
                else
                    per_out[k][i] = core.stack(c, out:dim() + 1):reshape(shape)
                end
            end
        end
        local jac = shaped(specs, first.out_spec, per_out, single)
        if has_aux then
            return jac, first.aux
        end
        return jac
    end
end

-- PyTorch's positional parameters: jacrev(func, argnums=0, *, has_aux, chunk_size),
-- jacfwd(func, argnums=0, has_aux=False, *, randomness), hessian(func, argnums=0)
function M.jacrev(f, ...)
    options.callable("func.jacrev", f)
    return M.jacrev_as("func.jacrev", f, options.positional("func.jacrev", { "argnums" }, ...))
end

function M.jacfwd(f, ...)
    options.callable("func.jacfwd", f)
    return M.jacfwd_as("func.jacfwd", f,
        options.positional("func.jacfwd", { "argnums", "has_aux" }, ...))
end

function M.hessian(f, ...)
    local who = "func.hessian"
    options.callable(who, f)
    local opts = options.positional(who, { "argnums" }, ...)
    local o = options.options(who, opts, { "argnums" }, "{argnums = 1}")
    options.argnums(who, o.argnums)
    local inner = M.jacrev_as(who, f, { argnums = o.argnums })
    return M.jacfwd_as(who, inner, { argnums = o.argnums })
end

return M
