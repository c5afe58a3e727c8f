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
-- forward(ctx, ...) runs with grad mode off and returns one tensor (and, after
-- ctx:mark_non_differentiable, other tensors); backward(ctx, g) returns one gradient per
-- argument of apply (nil for those that take none), each of its argument's shape.
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
    local versions = {}
    for i = 1, saved.n do
        versions[i] = saved[i] ~= nil and version(saved[i]) or false
    end
    self._versions = versions
end

-- ctx:mark_non_differentiable(t, ...): outputs that take no gradient (indices, masks)
function Ctx:mark_non_differentiable(...)
    for i = 1, select("#", ...) do
        self._non_diff[(select(i, ...))] = true
    end
end

-- with one differentiable output its gradient is always there: nothing to materialize
function Ctx:set_materialize_grads(v)
    self.materialize_grads = v and true or false
end

function Ctx:mark_dirty()
    raise("tide: " .. self._name .. ".forward: mark_dirty (an input modified in place) is not " ..
        "in tide's autograd.Function; return a new tensor instead")
end

-- ---- the op behind each class ----

local function check_saved(ctx)
    local saved, versions = ctx.saved_tensors, ctx._versions
    for i = 1, saved and saved.n or 0 do
        if versions[i] and version(saved[i]) ~= versions[i] then
            raise(string.format("tide: %s.backward: saved tensor %d was modified in place " ..
                "after save_for_backward (version %d, now %d); save a clone, or modify it " ..
                "after backward", ctx._name, i, versions[i], version(saved[i])))
        end
    end
end

local function backward(cls)
    return function(nd, g)
        local ctx = nd.ctx
        check_saved(ctx)
        local grads
        local parts = nd.parts
        if parts then -- several differentiable outputs: g is the packed one's, split it
            local gs = {}
            for i, p in ipairs(parts) do
                gs[i] = g:narrow(1, p.offset, p.numel):view(p.shape)
            end
            grads = compat.pack(cls.backward(ctx, compat.unpack(gs, 1, #parts)))
        else
            grads = compat.pack(cls.backward(ctx, g))
        end
        local positions, nargs = nd.positions, nd.nargs
        -- PyTorch drops extra gradients when all of them are None
        while grads.n > nargs and grads[grads.n] == nil do
            grads.n = grads.n - 1
        end
        if grads.n > nargs then
            raise(string.format("tide: %s.backward returned %d gradients for %d arguments " ..
                "of apply; return one per argument (nil where none; extra ones must be nil)",
                ctx._name, grads.n, nargs))
        end
        local out = {}
        for k, pos in ipairs(positions) do
            local x, gx = nd[1][k], grads[pos]
            if gx ~= nil then
                if not is_tensor(gx) then
                    raise(string.format("tide: %s.backward: the gradient of argument %d must " ..
                        "be a tensor or nil, got a %s", ctx._name, pos, type(gx)))
                end
                local same = #gx.shape == #x.shape
                for d = 1, #x.shape do
                    same = same and gx.shape[d] == x.shape[d]
                end
                if not same then
                    raise(string.format("tide: %s.backward: the gradient of argument %d has " ..
                        "shape {%s}, the argument {%s}", ctx._name, pos,
                        table.concat(gx.shape, ", "), table.concat(x.shape, ", ")))
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
        if not FLOAT[r.dtype] then
            raise(string.format("tide: %s.forward: output %d is a %s tensor, which cannot take " ..
                "a gradient; mark it with ctx:mark_non_differentiable", cls.__name, i - 1,
                r.dtype))
        end
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
    local ctx = setmetatable({ _name = cls.__name, _non_diff = {}, needs_input_grad = {},
        materialize_grads = true }, Ctx)
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
    -- the differentiable outputs
    local diff_at = {}
    for i = 2, res.n do
        local r = res[i]
        if is_tensor(r) and not ctx._non_diff[r] then
            diff_at[#diff_at + 1] = i
        end
    end
    if any and #diff_at > 1 then
        Function._record_several(cls, op, ctx, res, diff_at, inputs, positions, args.n)
    elseif any and diff_at[1] then
        local out_at = diff_at[1]
        local out = res[out_at]
        for _, x in ipairs(inputs) do
            if rawequal(out, x) then -- an input returned as it is: a new tensor of its data
                out = x:detach()
                res[out_at] = out
                break
            end
        end
        if not FLOAT[out.dtype] then
            raise(string.format("tide: %s.forward returned a %s tensor, which cannot take a " ..
                "gradient; mark it with ctx:mark_non_differentiable", cls.__name, out.dtype))
        end
        local nd = engine.record(op, out, inputs)
        nd.ctx, nd.positions, nd.nargs = ctx, positions, args.n
        nd.torch_name = cls.__name .. "Backward" -- PyTorch's name for a Function's node
    end
    return compat.unpack(res, 2, res.n)
end

return Function
