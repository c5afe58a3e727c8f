-- tide.func.jvp: PyTorch's torch.func.jvp. jvp(f, primals, tangents[, {has_aux = false}]):
-- primals the list of f's arguments (tensors or tables of tensors; a tensor for one),
-- tangents the same structure and shapes; returns (f(primals...), J tangents[, aux]), the
-- second of the output's structure. strict = true: an output that does not depend on the
-- primals raises (PyTorch's zeros otherwise). tide has no forward mode: J v comes from
-- tide.autograd.functional.jvp (the double-backward trick), on f's output leaves flattened
-- into one tensor.
local core = require("tide.core")
local compat = require("tide._compat")
local engine = require("tide.autograd.engine")
local functional = require("tide.autograd.functional")
local raise = require("tide.autograd.raise")
local args = require("tide.op_args")
local options = require("tide.func.options")
local reverse = require("tide.func.reverse")
local pytree = require("tide.func.pytree")
local vjp = require("tide.func.vjp")

local is_tensor = core.is_tensor
local pack, unpack = compat.pack, compat.unpack

local M = {}

-- f's output leaves as one flat tensor (the widest dtype when they differ)
local function joined(outs)
    if outs.n == 1 then
        return outs[1]
    end
    local dtype = outs[1].dtype
    for k = 2, outs.n do
        if outs[k].dtype ~= dtype then
            dtype = "float64"
        end
    end
    local flat = {}
    for k = 1, outs.n do
        flat[k] = outs[k]:to(dtype):reshape(-1)
    end
    return core.cat(flat, 1)
end

-- J v joined (as joined's result) split back into one tensor per output leaf
local function split(jv, outs)
    if outs.n == 1 then
        return { jv, n = 1 }
    end
    local parts, at = { n = outs.n }, 1
    for k = 1, outs.n do
        local o = outs[k]
        local n = o:numel()
        parts[k] = jv:narrow(1, at, n):reshape(o.shape):to(o.dtype)
        at = at + n
    end
    return parts
end

-- f(a...) and J v, v the tangents (tleaves: one per tensor of the arguments nums): returns
-- {out =, jv =, aux =, outs =, jvs = (the leaves of out and jv), out_spec =}. strict: an
-- output leaf that does not depend on the inputs (no graph) raises, as PyTorch's strict=True
function M.run(who, f, a, nums, tleaves, has_aux, strict)
    local grad_on = core.is_grad_enabled()
    local specs, inputs, own, outer = {}, {}, {}, false
    for j, i in ipairs(nums) do
        local leaves, spec = pytree.flatten(who, a[i])
        local paths = pytree.paths(spec)
        for k = 1, leaves.n do
            local x = leaves[k]
            reverse.check_input(who, x, i, paths[k])
            if grad_on and x.requires_grad then
                inputs[#inputs + 1], outer = x, true -- functional.jvp goes on through a view
            else
                local p = x:detach():requires_grad_(true)
                inputs[#inputs + 1], own[p] = p, true
            end
        end
        specs[j] = spec
    end
    for _, t in ipairs(tleaves) do
        outer = outer or (grad_on and t.requires_grad)
    end
    if #inputs == 0 then
        raise(("tide: %s: the primals hold no tensor"):format(who))
    end
    local got
    local function on_leaves(...)
        local leaves, call, pos = { ... }, { n = a.n }, 1
        for i = 1, a.n do
            call[i] = a[i]
        end
        for j, i in ipairs(nums) do
            call[i], pos = pytree.unflatten(specs[j], leaves, pos)
        end
        local out, aux = reverse.results(who, pack(f(unpack(call, 1, call.n))), has_aux)
        local outs, out_spec = pytree.flatten(who, out)
        got = { out = out, aux = aux, outs = outs, out_spec = out_spec }
        vjp.tensor_outputs(who, got)
        if outs.n == 0 then
            raise(("tide: %s: f must return a tensor or a table of tensors, got an empty table")
                :format(who))
        end
        return joined(outs)
    end
    local prev = core.set_grad_enabled(true)
    local ok, _, jv = pcall(functional.jvp, on_leaves, inputs, tleaves, { create_graph = true })
    core.set_grad_enabled(prev)
    if not ok then
        local msg = _
        local rest = type(msg) == "string" and msg:match("^.-tide: jvp: (.*)$")
        if rest then
            raise(("tide: %s: %s"):format(who, rest))
        end
        error(msg, 0)
    end
    got.jvs = split(jv, got.outs)
    if strict then
        local paths = pytree.paths(got.out_spec)
        for k = 1, got.outs.n do
            if not got.outs[k].requires_grad then
                raise(("tide: %s: {strict = true}: f's output%s does not depend on the " ..
                    "primals"):format(who, paths[k]))
            end
        end
    end
    local tensors = {}
    for k = 1, got.outs.n do
        tensors[k] = got.outs[k]
    end
    got.create = grad_on and (outer or engine.depends_beyond(tensors, own))
    if not got.create then
        for k = 1, got.outs.n do
            got.outs[k], got.jvs[k] = got.outs[k]:detach(), got.jvs[k]:detach()
        end
        got.aux = reverse.unwrap(got, got.aux)
    end
    got.out = pytree.unflatten(got.out_spec, got.outs)
    got.jv = pytree.unflatten(got.out_spec, got.jvs)
    return got
end

-- primals or tangents as a list of arguments (a tensor: one)
local function arguments(who, v, what)
    if is_tensor(v) then
        return pack(v)
    end
    if not pytree.is_container(v) or #v == 0 then
        raise(("tide: %s: %s must be a list of f's arguments ({x} for one), got %s"):format(who,
            what, pytree.what(v)))
    end
    args.check_list(who, v, what)
    return pack(unpack(v, 1, #v))
end

function M.jvp(f, primals, tangents, opts, ...)
    local who = "func.jvp"
    options.callable(who, f)
    args.no_extra(who, 4, ...)
    local o = options.options(who, opts, { "has_aux", "strict" }, "{has_aux = true}")
    local has_aux = options.boolean(who, o, "has_aux")
    local strict = options.boolean(who, o, "strict")
    local a = arguments(who, primals, "primals")
    local t = arguments(who, tangents, "tangents")
    if t.n ~= a.n then
        raise(("tide: %s: tangents must have one entry per primal: %d, got %d"):format(who, a.n,
            t.n))
    end
    local nums, tleaves = {}, {}
    for i = 1, a.n do
        nums[i] = i
        local leaves, spec = pytree.flatten(who, a[i])
        local paths = pytree.paths(spec)
        for k = 1, leaves.n do
            reverse.check_input(who, leaves[k], i, paths[k])
        end
        local ts = vjp.match(who, t[i], spec, leaves, "tangents[" .. i .. "]",
            "primals[" .. i .. "]")
        for k = 1, ts.n do
            tleaves[#tleaves + 1] = ts[k]
        end
    end
    local r = M.run(who, f, a, nums, tleaves, has_aux, strict)
    if has_aux then
        return r.out, r.jv, r.aux
    end
    return r.out, r.jv
end

return M
