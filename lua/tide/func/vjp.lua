-- tide.func.vjp: PyTorch's torch.func.vjp. vjp(f, x[, y, ...][, {has_aux = false}]) runs f on
-- the primals (tensors or tables of tensors) and returns (output, vjp_fn[, aux]); vjp_fn(v),
-- v of the output's structure and shapes, returns v^T J for each primal (one value per
-- primal, shaped as it), and may be called again. The options table is the last argument
-- when it holds no tensor (a primal must hold one).
local core = require("tide.core")
local compat = require("tide._compat")
local raise = require("tide.autograd.raise")
local args = require("tide.op_args")
local options = require("tide.func.options")
local reverse = require("tide.func.reverse")
local pytree = require("tide.func.pytree")

local is_tensor = core.is_tensor
local pack, unpack = compat.pack, compat.unpack

local M = {}

local function holds_tensor(v)
    if is_tensor(v) then
        return true
    end
    if pytree.is_container(v) then
        for _, x in pairs(v) do
            if holds_tensor(x) then
                return true
            end
        end
    end
    return false
end

-- (primals packed, opts): a last argument that is a plain table without tensors is the options
function M.split_options(a)
    local last = a[a.n]
    if a.n > 0 and pytree.is_container(last) and not holds_tensor(last) then
        return pack(unpack(a, 1, a.n - 1)), last
    end
    return a, nil
end

-- the structure of a spec, for messages: "a tensor", "a table of 3 leaves"
function M.describe(spec)
    if spec == true then
        return "one tensor"
    end
    local n = pytree.count(spec)
    return ("a table of %d tensor%s"):format(n, n == 1 and "" or "s")
end

-- the cotangent (or tangent) leaves of v checked against like (a list of tensors, of spec)
function M.match(who, v, spec, like, what, of)
    local leaves, vspec = pytree.flatten(who, v)
    if not pytree.same_spec(spec, vspec) then
        local got = vspec == true and (is_tensor(v) and "one tensor" or pytree.what(v)) or
            M.describe(vspec)
        raise(("tide: %s: %s must have the structure of %s (%s), got %s"):format(who, what,
            of, M.describe(spec), got))
    end
    local paths = pytree.paths(spec)
    for k = 1, leaves.n do
        local t, want = leaves[k], like[k]
        if not is_tensor(t) then
            raise(("tide: %s: %s%s must be a tensor, got %s"):format(who, what, paths[k],
                pytree.what(t)))
        end
        if not args.same_shape(t.shape, want.shape) then
            raise(("tide: %s: %s%s must have the shape %s of %s%s, got %s"):format(who, what,
                paths[k], args.shape_str(want:size()), of, paths[k],
                args.shape_str(t:size())))
        end
        if t.dtype ~= want.dtype then
            raise(("tide: %s: %s%s must be %s as %s%s, got %s"):format(who, what, paths[k],
                want.dtype, of, paths[k], t.dtype))
        end
        if tostring(t.device) ~= tostring(want.device) then
            raise(("tide: %s: %s%s must be on %s as %s%s, got %s"):format(who, what, paths[k],
                tostring(want.device), of, paths[k], tostring(t.device)))
        end
    end
    return leaves
end

-- the output's leaves checked as tensors
function M.tensor_outputs(who, st)
    local paths = pytree.paths(st.out_spec)
    for k = 1, st.outs.n do
        local o = st.outs[k]
        if not is_tensor(o) then
            raise(("tide: %s: f's output%s is %s; f must return tensors or tables of tensors")
                :format(who, paths[k], pytree.what(o)))
        end
    end
end

function M.vjp(f, ...)
    local who = "func.vjp"
    options.callable(who, f)
    local a, opts = M.split_options(pack(...))
    local o = options.options(who, opts, { "has_aux" }, "{has_aux = true}")
    local has_aux = options.boolean(who, o, "has_aux")
    if a.n == 0 then
        raise("tide: func.vjp: give the primals after f: tide.func.vjp(f, x[, y, ...][, " ..
            "{has_aux = true}])")
    end
    local nums = {}
    for i = 1, a.n do
        nums[i] = i
    end
    local st = reverse.forward(who, f, a, nums, has_aux)
    M.tensor_outputs(who, st)
    local function vjp_fn(v, ...)
        args.no_extra("func.vjp: vjp_fn", 1, ...)
        local cts = M.match(who, v, st.out_spec, st.outs, "cotangent", "f's output")
        return unpack(reverse.trees(st, reverse.pullback(st, cts, true)), 1, a.n)
    end
    if has_aux then
        return reverse.unwrap(st, st.out), vjp_fn, reverse.unwrap(st, st.aux)
    end
    return reverse.unwrap(st, st.out), vjp_fn
end

return M
