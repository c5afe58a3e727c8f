-- tide.autograd.Function: PyTorch's torch.autograd.Function, a differentiable op written as a
-- forward and a backward, for ported scripts (tide's own ops use autograd.def, which this
-- builds on: one list op per class, whose node holds the call's ctx).
--
--     local Exp = tide.autograd.Function:extend("Exp")
--     function Exp.forward(ctx, x)
--         local y = x:exp()
--         ctx:save_for_backward(y)
--         return y
--     end
--     function Exp.backward(ctx, g)
--         local y = ctx.saved_tensors[1]
--         return g * y
--     end
--     local y = Exp.apply(x)
--
-- forward(ctx, ...) runs with grad mode off and returns tensors (integer ones and those marked
-- with ctx:mark_non_differentiable take no gradient; ctx:mark_dirty(x) for an input modified in
-- place and returned); backward(ctx, g1, ...) gets one gradient per output of forward and
-- returns one per argument of apply (nil for those that take none, and for non-tensors; fewer,
-- or extra ones not nil, raise as PyTorch), each of a shape its argument's expands to (summed
-- down to it, cast to its dtype).
local compat = require("tide._compat")
local core = require("tide.core")
local registry = require("tide.autograd.registry")
local engine = require("tide.autograd.engine")
local raise = require("tide.autograd.raise")

local is_tensor = core.is_tensor
local FLOAT = { float32 = true, float64 = true, float16 = true, bfloat16 = true }
local version = core.Tensor._version

local Function = { __name = "Function" }
Function.__index = Function

-- ---- ctx, the call's context ----

local Ctx = {}
Ctx.__index = Ctx

-- ctx:save_for_backward(t1, t2, ...): ctx.saved_tensors in backward (a list; nil kept)
function Ctx:save_for_backward(...)
    local saved = compat.pack(...)
    for i = 1, saved.n do
        local t = saved[i]
        if t ~= nil and not is_tensor(t) then
            raise(string.format("tide: %s.forward: save_for_backward takes tensors (or nil), " ..
                "argument %d is a %s; keep other values as fields of ctx", self._name, i,
                type(t)))
        end
    end
    self.saved_tensors = saved
    self.to_save = saved
    local versions = {}
    for i = 1, saved.n do
        versions[i] = saved[i] ~= nil and version(saved[i]) or false
    end
    self._versions = versions
end

-- ctx:mark_non_differentiable(t, ...): outputs that take no gradient (indices, masks);
-- ctx.non_differentiable lists them (PyTorch's attribute)
function Ctx:mark_non_differentiable(...)
    local list = compat.pack(...)
    for i = 1, list.n do
        self._non_diff[list[i]] = true
    end
    self.non_differentiable = list
end

-- set_materialize_grads(false): backward gets nil, not zeros, for the gradient of an output
-- marked non-differentiable (several differentiable outputs always get zeros: they are parts
-- of one packed tensor)
function Ctx:set_materialize_grads(v)
    self.materialize_grads = v and true or false
end

-- ctx:mark_dirty(t, ...): inputs forward modified in place and returns; each becomes the
-- Function's output (its history rebased on the Function's node), ctx.dirty_tensors lists them
function Ctx:mark_dirty(...)
    local list = compat.pack(...)
    for i = 1, list.n do
        if not is_tensor(list[i]) then
            raise(string.format("tide: %s.forward: mark_dirty takes the tensors modified in " ..
                "place, argument %d is a %s", self._name, i, type(list[i])))
        end
        self._dirty[list[i]] = true
    end
    self.dirty_tensors = list
end

-- ---- the op behind each class ----

local function check_saved(ctx)
    local saved, versions = ctx.saved_tensors, ctx._versions
    for i = 1, saved and saved.n or 0 do
        if versions[i] and version(saved[i]) ~= versions[i] then
            local t = saved[i]
            raise(string.format("tide: %s.backward: saved tensor %d was modified in place " ..
                "after save_for_backward: one of the variables needed for gradient " ..
                "computation has been modified by an inplace operation: the %s tensor of " ..
                "shape {%s}, saved tensor %d of %sBackward, is at version %d; expected version " ..
                "%d instead; save a clone, or modify it after backward", ctx._name, i, t.dtype,
                table.concat(t.shape, ", "), i, ctx._name, version(t), versions[i]))
        end
    end
end

local function backward(cls)
    return function(nd, g)
        local ctx = nd.ctx
        check_saved(ctx)
        local gp, parts = { g }, nd.parts
        if parts then -- several differentiable outputs: g is the packed one's, split it
            for i, p in ipairs(parts) do
                gp[i] = g:narrow(1, p.offset, p.numel):view(p.shape)
            end
        end
        -- one gradient per output of forward, as PyTorch: a non-differentiable output's is
        -- zeros of its shape and dtype (nil after set_materialize_grads(false)), nil for others
        local gs, slots = {}, nd.slots
        for j = 1, slots.n do
            local sl = slots[j]
            if sl and sl.part then
                gs[j] = gp[sl.part]
            elseif sl and ctx.materialize_grads then
                gs[j] = core.zeros(sl.shape, { dtype = sl.dtype, device = sl.device })
            end
        end
        local grads = compat.pack(cls.backward(ctx, compat.unpack(gs, 1, slots.n)))
        local positions, nargs = nd.positions, nd.nargs
        -- PyTorch's count: one per argument of apply (nil counts: `return gx, nil` is 2); more
        -- only when all the extra ones are nil, which it drops
        local extra = false
        for i = nargs + 1, grads.n do
            extra = extra or grads[i] ~= nil
        end
        if grads.n < nargs or extra then
            raise(string.format("tide: %s.backward returned an incorrect number of gradients " ..
                "(expected %d, got %d); return one gradient (or nil) per forward argument%s",
                ctx._name, nargs, grads.n, extra and " (any beyond them must be nil)" or ""))
        end
        grads.n = nargs
        local at = {}
        for _, pos in ipairs(positions) do
            at[pos] = true
        end
        for pos = 1, nargs do
            if grads[pos] ~= nil and not at[pos] then
                raise(string.format("tide: %s.backward returned a gradient different than nil " ..
                    "for argument %d, but the argument was not a tensor", ctx._name, pos))
            end
        end
        local out = {}
        for k, pos in ipairs(positions) do
            local x, gx = nd[1][k], grads[pos]
            if gx ~= nil then
                if not is_tensor(gx) then
                    raise(string.format("tide: %s.backward: the gradient of argument %d must " ..
                        "be a tensor or nil, got a %s", ctx._name, pos, type(gx)))
                end
                -- PyTorch sums a gradient that x's shape expands to down to x's shape
                local gs_, xs = gx.shape, x.shape
                local fits, off = #gs_ >= #xs, #gs_ - #xs
                for d = 1, fits and #xs or 0 do
                    fits = fits and (xs[d] == gs_[d + off] or xs[d] == 1)
                end
                if not fits then
                    raise(string.format("tide: %s.backward: the gradient of argument %d has " ..
                        "shape {%s}, the argument {%s} (an invalid gradient: expected a shape " ..
                        "compatible with the argument's)", ctx._name, pos,
                        table.concat(gs_, ", "), table.concat(xs, ", ")))
                end
                local same = off == 0
                for d = 1, same and #xs or 0 do
                    same = same and xs[d] == gs_[d]
                end
                if not same then
                    gx = gx:sum_to(xs)
                end
                if gx.dtype ~= x.dtype and FLOAT[gx.dtype] then
                    gx = gx:to(x.dtype) -- PyTorch casts a gradient to its input's dtype
                end
            elseif ctx.needs_input_grad[pos] then
                gx = core.zeros(x.shape, { dtype = x.dtype, device = x.device })
            end
            out[k] = gx
        end
        return out
    end
end

-- Function:extend(name): a class; define Class.forward and Class.backward, call Class.apply
function Function:extend(name)
    if type(name) ~= "string" or name == "" then
        raise("tide: autograd.Function:extend: expected the class's name, such as \"MyExp\", " ..
            "got " .. tostring(name))
    end
    local cls = setmetatable({ __name = name }, { __index = self })
    cls.__index = cls
    local op = "Function." .. name
    -- (a class of the same name defined again replaces the op: its file reloaded)
    registry.def { name = op, list = true, backward = backward(cls) }
    cls.apply = function(...)
        return Function._apply(cls, op, ...)
    end
    return cls
end

function Function.forward(ctx)
    raise("tide: " .. ctx._name .. ": forward is not defined; define " .. ctx._name ..
        ".forward(ctx, ...)")
end

function Function.backward(ctx)
    raise("tide: " .. ctx._name .. ": backward is not defined; define " .. ctx._name ..
        ".backward(ctx, grad)")
end

-- several differentiable outputs (PyTorch's Sinh returning exp(x) and exp(-x) as well): the
-- node records one packed tensor, their values flattened end to end, and each output is a view
-- of it, so that backward gets one gradient per output (zeros for an unused one); the saved
-- tensors that are outputs become those views, which double backward differentiates through.
function Function._record_several(cls, op, ctx, res, diff_at, inputs, positions, nargs)
    local first = res[diff_at[1]]
    local flat, parts, offset = {}, {}, 1
    for k, i in ipairs(diff_at) do
        local r = res[i]
        if r.dtype ~= first.dtype or tostring(r.device) ~= tostring(first.device) then
            raise(string.format("tide: %s.forward: the outputs that take gradients must share " ..
                "a dtype and device (output 1 is %s on %s, output %d %s on %s); convert them " ..
                "in forward, or mark one with ctx:mark_non_differentiable", cls.__name,
                first.dtype, tostring(first.device), i - 1, r.dtype, tostring(r.device)))
        end
        local n = r:numel()
        flat[k] = r:reshape({ n })
        parts[k] = { offset = offset, numel = n, shape = r.shape }
        offset = offset + n
    end
    local packed = core.cat(flat, 1)
    local nd = engine.record(op, packed, inputs)
    nd.ctx, nd.positions, nd.nargs, nd.parts = ctx, positions, nargs, parts
    nd.torch_name = cls.__name .. "Backward"
    local outs = {}
    for k, i in ipairs(diff_at) do
        local p = parts[k]
        outs[k] = packed:narrow(1, p.offset, p.numel):view(p.shape)
    end
    local saved = ctx.saved_tensors
    for j = 1, saved and saved.n or 0 do
        for k, i in ipairs(diff_at) do
            if rawequal(saved[j], res[i]) then
                saved[j] = outs[k]
                ctx._versions[j] = version(outs[k])
            end
        end
    end
    for k, i in ipairs(diff_at) do
        res[i] = outs[k]
    end
    return nd
end

-- once_differentiable(backward): PyTorch's @once_differentiable, a backward that runs with grad
-- mode off; when a graph is being built (create_graph) its gradients raise if differentiated.
local OnceDifferentiable

function Function.once_differentiable(fn)
    if type(fn) ~= "function" then
        raise("tide: autograd.Function.once_differentiable: expected the backward function, " ..
            "got a " .. type(fn) .. "; write Cls.backward = once_differentiable(function(ctx, " ..
            "grad) ... end)")
    end
    return function(ctx, ...)
        local grad_on = core.is_grad_enabled()
        local prev = core.set_grad_enabled(false)
        local res = compat.pack(pcall(fn, ctx, ...))
        core.set_grad_enabled(prev)
        if not res[1] then
            error(res[2], 0)
        end
        local needs = false
        for i = 1, select("#", ...) do
            local g = select(i, ...)
            needs = needs or (is_tensor(g) and g.requires_grad)
        end
        if grad_on and needs then
            if not OnceDifferentiable then -- the gradients' node, whose backward raises
                OnceDifferentiable = Function:extend("OnceDifferentiable")
                function OnceDifferentiable.forward(c, out, name)
                    c.fn_name = name
                    return out
                end
                function OnceDifferentiable.backward(c)
                    raise("tide: " .. c.fn_name .. ".backward: trying to differentiate twice " ..
                        "a function that was marked with once_differentiable; drop " ..
                        "once_differentiable and write its backward in tide's ops")
                end
            end
            for i = 2, res.n do
                if is_tensor(res[i]) and FLOAT[res[i].dtype] then
                    res[i] = OnceDifferentiable.apply(res[i], ctx._name, ...)
                end
            end
        end
        return compat.unpack(res, 2, res.n)
    end
end

function Function._apply(cls, op, ...)
    local args = compat.pack(...)
    local grad_on = core.is_grad_enabled()
    local ctx = setmetatable({ _name = cls.__name, _non_diff = {}, _dirty = {},
        needs_input_grad = {}, materialize_grads = true }, Ctx)
    local inputs, positions, any = {}, {}, false
    for i = 1, args.n do
        local a = args[i]
        local needs = is_tensor(a) and grad_on and a.requires_grad or false
        ctx.needs_input_grad[i] = needs
        any = any or needs
        if is_tensor(a) then
            inputs[#inputs + 1], positions[#positions + 1] = a, i
        end
    end
    local prev = core.set_grad_enabled(false)
    local res = compat.pack(pcall(cls.forward, ctx, ...))
    core.set_grad_enabled(prev)
    if not res[1] then
        error(res[2], 0)
    end
    -- the differentiable outputs: tensors of a floating dtype not marked non-differentiable
    -- (PyTorch's: an integer output takes no gradient)
    local diff_at, slots, returned = {}, { n = res.n - 1 }, {}
    for i = 2, res.n do
        local r = res[i]
        slots[i - 1] = false
        if is_tensor(r) then
            returned[r] = true
            if not ctx._non_diff[r] and FLOAT[r.dtype] then
                diff_at[#diff_at + 1] = i
                slots[i - 1] = { part = #diff_at }
            else
                slots[i - 1] = { shape = r.shape, dtype = r.dtype, device = r.device }
            end
        end
    end
    local dirty = ctx.dirty_tensors
    for i = 1, dirty and dirty.n or 0 do
        if not returned[dirty[i]] then
            raise("tide: " .. cls.__name .. ".forward: a tensor marked with mark_dirty was not " ..
                "returned; the inputs modified in place must all be outputs of the Function")
        end
    end
    local nd
    if any and #diff_at > 1 then
        if dirty then
            raise("tide: " .. cls.__name .. ".forward: mark_dirty with several outputs that " ..
                "take gradients is not in tide's autograd.Function; return one, or new tensors")
        end
        nd = Function._record_several(cls, op, ctx, res, diff_at, inputs, positions, args.n)
    elseif any and diff_at[1] then
        local out_at = diff_at[1]
        local out = res[out_at]
        if ctx._dirty[out] then -- modified in place: out takes the Function's node
            if out.requires_grad and not out.grad_fn then
                raise("tide: " .. cls.__name .. ".forward: a leaf tensor that requires grad " ..
                    "has been used in an in-place operation (mark_dirty); modify a clone")
            end
            local why = engine.inplace_refusal(out)
            if why or engine.is_view(out) then
                raise("tide: " .. cls.__name .. ".forward: mark_dirty on a view is not in " ..
                    "tide's autograd.Function; modify the base, or a clone")
            end
            local saved = ctx.saved_tensors -- saved as it is returned
            for j = 1, saved and saved.n or 0 do
                if rawequal(saved[j], out) then
                    ctx._versions[j] = version(out)
                end
            end
        else
            for _, x in ipairs(inputs) do
                if rawequal(out, x) then -- an input returned as it is: a new tensor of its data
                    out = x:detach()
                    res[out_at] = out
                    break
                end
            end
        end
        nd = engine.record(op, out, inputs)
        nd.ctx, nd.positions, nd.nargs = ctx, positions, args.n
        nd.torch_name = cls.__name .. "Backward" -- PyTorch's name for a Function's node
    end
    if nd then
        nd.slots = slots
    end
    return compat.unpack(res, 2, res.n)
end

return Function
