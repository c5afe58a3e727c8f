-- tide.autograd.functional: PyTorch 1.13's torch.autograd.functional, the derivatives of a
-- function of tensors as tensors, by reverse mode (tide.autograd.grad):
--   jacobian(f, inputs[, {create_graph = false, strict = false, vectorize =, strategy =}])
--   hessian(f, inputs[, opts])                 f returning one element
--   vjp(f, inputs[, v][, opts]), jvp(f, inputs[, v][, opts]): f's output and v^T J, or J v
--   vhp(f, inputs[, v][, opts]), hvp(f, inputs[, v][, opts]): f's output and v^T H, or H v
-- inputs: a tensor or a list of tensors (f receives them as arguments); f returns a tensor or
-- a list. The results mirror them, as PyTorch's tuples: for one input and one output a tensor
-- of shape output .. input; for a list of inputs a list (per input); for a list of outputs a
-- list (per output) of those. The inputs are used detached (f's graph starts at them), except
-- under create_graph, where the results stay differentiable. With strict = true an output
-- independent of an input raises (PyTorch's strict); otherwise its part is zeros.
local core = require("tide.core")
local args = require("tide.op_args")
local engine = require("tide.autograd.engine")
local raise = require("tide.autograd.raise")
local compat = require("tide._compat")

local is_tensor, unpack = core.is_tensor, compat.unpack

local M = {}

local OPTIONS = { "create_graph", "strict" }
-- jacobian's and hessian's: vectorize (PyTorch's speed hint: the results are the same) and
-- strategy (jacobian's "forward-mode" gives reverse mode's values)
local MATRIX_OPTIONS = { "create_graph", "strict", "vectorize", "strategy" }
-- hessian's: PyTorch's outer_jacobian_strategy too (the outer jacobian's strategy)
local HESSIAN_OPTIONS = { "create_graph", "strict", "vectorize", "strategy",
    "outer_jacobian_strategy" }

local function options(who, opts, known)
    local o = args.options(who, opts, known or OPTIONS, "{create_graph = true}")
    for _, k in ipairs({ "create_graph", "strict", "vectorize" }) do
        if o[k] ~= nil and type(o[k]) ~= "boolean" then
            raise(("tide: %s: %s must be a boolean, got %s"):format(who, k, type(o[k])))
        end
    end
    if who == "jacobian" and o.strategy == "forward-mode" then
        -- PyTorch's forward-mode jacobian: its checks, the same values (computed by reverse mode)
        local bad = o.create_graph and "create_graph" or o.strict and "strict"
        if bad then
            raise(("tide: jacobian: %s = true and strategy = \"forward-mode\" are not supported " ..
                "together; set %s = false or strategy = \"reverse-mode\""):format(bad, bad))
        elseif not o.vectorize then
            raise("tide: jacobian: strategy = \"forward-mode\" is only implemented for " ..
                "vectorize = true")
        end
    elseif o.strategy ~= nil and o.strategy ~= "reverse-mode" then
        raise(("tide: %s: strategy %s is not supported; tide computes %ss by reverse mode " ..
            "(\"reverse-mode\")"):format(who, tostring(o.strategy), who))
    end
    return o.create_graph == true, o.strict == true
end

-- the inputs as a list of fresh leaves that require grad (views of the originals under
-- create_graph, so the results stay in their graph), and whether they came as a list
local function prepare(who, inputs, create)
    local list, was_list = inputs, true
    if is_tensor(inputs) then
        list, was_list = { inputs }, false
    elseif type(inputs) ~= "table" or #inputs == 0 then
        raise(("tide: %s: inputs must be a tensor or a list of tensors, got %s"):format(who,
            type(inputs)))
    end
    local out = {}
    for i, x in ipairs(list) do
        if not is_tensor(x) then
            raise(("tide: %s: input %d is a %s, expected a tensor"):format(who, i, type(x)))
        end
        if not args.FLOAT[x.dtype] then
            raise(("tide: %s: input %d is %s; differentiation needs floating-point inputs")
                :format(who, i, x.dtype))
        end
        if create and x.requires_grad then
            out[i] = x:view_as(x)
        else
            out[i] = x:detach():requires_grad_(true)
        end
    end
    return out, was_list
end

-- f's outputs as a list, and whether it returned a list
local function outputs_of(who, f, xs)
    if type(f) ~= "function" and not (getmetatable(f) or {}).__call then
        raise(("tide: %s: expected a function, got %s"):format(who, type(f)))
    end
    local r = f(unpack(xs))
    if is_tensor(r) then
        return { r }, false
    elseif type(r) == "table" and #r > 0 then
        for i, t in ipairs(r) do
            if not is_tensor(t) then
                raise(("tide: %s: output %d of the function is a %s, expected a tensor")
                    :format(who, i, type(t)))
            end
        end
        return r, true
    end
    raise(("tide: %s: the function must return a tensor or a list of tensors, got %s")
        :format(who, type(r)))
end

-- d(out)/d(xs) for grad_outputs v (nil for a one-element out): one gradient per input, zeros
-- where out does not depend on it (an error with strict)
local function gradients(who, out, xs, v, create, strict)
    local gs
    if out.requires_grad then
        gs = engine.grad({ out }, xs, { grad_outputs = v and { v } or nil, retain_graph = true,
            create_graph = create, allow_unused = true })
    else
        gs = {}
    end
    for i, x in ipairs(xs) do
        if gs[i] == nil then
            if strict then
                raise(("tide: %s: the output is independent of input %d (strict = true); " ..
                    "pass strict = false for zeros there"):format(who, i))
            end
            gs[i] = core.zeros(x.shape, { dtype = x.dtype, device = x.device })
        end
    end
    return gs
end

local function concat(a, b)
    local out = { unpack(a) }
    for _, s in ipairs(b) do
        out[#out + 1] = s
    end
    return out
end

-- the results shaped as PyTorch's: per output (when a list) of per input (when a list)
local function shaped(parts, outs_list, ins_list)
    local per_out = {}
    for o, row in ipairs(parts) do
        per_out[o] = ins_list and row or row[1]
    end
    return outs_list and per_out or per_out[1]
end

function M.jacobian(f, inputs, opts)
    local who = "jacobian"
    local create, strict = options(who, opts, MATRIX_OPTIONS)
    local xs, ins_list = prepare(who, inputs, create)
    local outs, outs_list = outputs_of(who, f, xs)
    local parts = {}
    for o, out in ipairs(outs) do
        local flat = out:reshape(-1)
        local rows = {}
        for i = 1, #xs do
            rows[i] = {}
        end
        for k = 1, flat:numel() do
            local gs = gradients(who, flat[k], xs, nil, create, strict)
            for i = 1, #xs do
                rows[i][k] = gs[i]
            end
        end
        parts[o] = {}
        for i, x in ipairs(xs) do
            local shape = concat(out.shape, x.shape)
            if #rows[i] == 0 then
                parts[o][i] = core.zeros(shape, { dtype = x.dtype, device = x.device })
            else
                parts[o][i] = core.stack(rows[i], 1):reshape(shape)
            end
        end
    end
    return shaped(parts, outs_list, ins_list)
end

-- the function's one-element output as a number-like tensor: hessian, vhp and hvp need it
local function scalar_output(who, outs, outs_list)
    if outs_list or outs[1]:numel() ~= 1 then
        raise(("tide: %s: the function must return a tensor of one element, got %s"):format(who,
            outs_list and "a list" or args.shape_str(outs[1]:size())))
    end
    return outs[1]
end

function M.hessian(f, inputs, opts)
    local who = "hessian"
    local create, strict = options(who, opts, HESSIAN_OPTIONS)
    local outer = opts and opts.outer_jacobian_strategy
    if outer ~= nil and outer ~= "reverse-mode" and outer ~= "forward-mode" then
        raise(("tide: hessian: outer_jacobian_strategy must be \"forward-mode\" or " ..
            "\"reverse-mode\", got %s"):format(tostring(outer)))
    end
    local function gradient_of(...)
        local xs = { ... }
        local outs, outs_list = outputs_of(who, f, xs)
        local out = scalar_output(who, outs, outs_list)
        return gradients(who, out:reshape({}), xs, nil, true, strict)
    end
    -- the outer jacobian takes the strategy (and its checks: forward-mode's values are reverse
    -- mode's, as jacobian's)
    local r = M.jacobian(gradient_of, inputs, { create_graph = create, strict = strict,
        vectorize = opts and opts.vectorize, strategy = outer })
    if is_tensor(inputs) then
        return r[1]
    end
    return r
end

-- v checked against the shapes of like (a list of tensors), as one tensor or a list
local function vectors(who, v, like, was_list, what)
    local list = v
    if is_tensor(v) then
        list = { v }
    elseif type(v) ~= "table" then
        raise(("tide: %s: v must be a tensor or a list of tensors (%s), got %s"):format(who,
            what, type(v)))
    end
    if #list ~= #like or (is_tensor(v) and was_list) then
        raise(("tide: %s: v must match the %s: %d tensor%s, got %d"):format(who, what, #like,
            #like == 1 and "" or "s", #list))
    end
    for i, t in ipairs(list) do
        if not is_tensor(t) or not args.same_shape(t.shape, like[i].shape) then
            raise(("tide: %s: v[%d] must have the shape %s of the %s, got %s"):format(who, i,
                args.shape_str(like[i]:size()), what, is_tensor(t) and
                args.shape_str(t:size()) or type(t)))
        end
    end
    return list
end

local function results(list, was_list)
    return was_list and list or list[1]
end

local function detached(list, create)
    if create then
        return list
    end
    local out = {}
    for i, t in ipairs(list) do
        out[i] = t:detach()
    end
    return out
end

-- what vjp, jvp, vhp and hvp share: v and the options (v may be left out: a table that is no
-- list is the options), the prepared inputs and f's outputs, one tensor unless several_ok
local function start(who, f, inputs, v, opts, several_ok)
    if opts == nil and type(v) == "table" and not is_tensor(v) and v[1] == nil then
        v, opts = nil, v
    end
    if type(opts) == "table" and opts.v ~= nil then -- PyTorch's v= keyword: vjp(f, x, {v = u})
        if v ~= nil then
            raise(("tide: %s: v given twice, positionally and as {v = ...}; keep one")
                :format(who))
        end
        local rest = {}
        for k, val in pairs(opts) do
            if k ~= "v" then
                rest[k] = val
            end
        end
        v, opts = opts.v, rest
    end
    local create, strict = options(who, opts)
    local xs, ins_list = prepare(who, inputs, create)
    local outs, outs_list = outputs_of(who, f, xs)
    if outs_list and not several_ok then
        raise(("tide: %s: the function must return one tensor"):format(who))
    end
    return v, create, strict, xs, ins_list, outs, outs_list
end

-- v as one tensor per input (of their shapes); left out, ones for a single one-element input
local function input_vectors(who, v, xs, ins_list)
    if v ~= nil then
        return vectors(who, v, xs, ins_list, "inputs")
    end
    if not (#xs == 1 and xs[1]:numel() == 1) then
        raise(("tide: %s: the inputs have more than one element: give v of their shapes")
            :format(who))
    end
    return { core.ones(xs[1].shape, { dtype = xs[1].dtype, device = xs[1].device }) }
end

-- vjp(f, inputs[, v][, opts]): f's output and v^T J (v of the output's shape; may be left out
-- for an output of one element)
function M.vjp(f, inputs, v, opts)
    local who = "vjp"
    local create, strict, xs, ins_list, outs
    v, create, strict, xs, ins_list, outs = start(who, f, inputs, v, opts)
    local out = outs[1]
    if v == nil and out:numel() ~= 1 then
        raise(("tide: vjp: the output %s has more than one element: give v of its shape")
            :format(args.shape_str(out:size())))
    end
    local vs = v ~= nil and vectors(who, v, outs, false, "output") or nil
    local gs = gradients(who, v == nil and out:reshape({}) or out, xs, vs and vs[1], create, strict)
    return create and out or out:detach(), results(detached(gs, create), ins_list)
end

-- jvp(f, inputs[, v][, opts]): f's output and J v (v of the inputs' shapes), by the
-- double-backward trick PyTorch uses: the vjp with a grad_output u that requires grad is
-- linear in u, and its vjp with v is J v
function M.jvp(f, inputs, v, opts)
    local who = "jvp"
    local create, strict, xs, ins_list, outs
    v, create, strict, xs, ins_list, outs = start(who, f, inputs, v, opts)
    local out = outs[1]
    local vs = input_vectors(who, v, xs, ins_list)
    if not out.requires_grad then -- an output made of no input (a constant): J v is zeros
        if strict then
            raise("tide: jvp: the output is independent of input 1 (strict = true)")
        end
        return out, core.zeros(out.shape, { dtype = out.dtype, device = out.device })
    end
    local u = core.zeros(out.shape, { dtype = out.dtype, device = out.device })
        :requires_grad_(true)
    local gs = engine.grad({ out }, xs, { grad_outputs = { u }, create_graph = true,
        allow_unused = true })
    local used, vused = {}, {}
    for i = 1, #xs do
        if gs[i] ~= nil and gs[i].requires_grad then
            used[#used + 1], vused[#vused + 1] = gs[i], vs[i]
        elseif strict then
            raise(("tide: jvp: the output is independent of input %d (strict = true)"):format(i))
        end
    end
    local jv
    if #used == 0 then
        jv = core.zeros(out.shape, { dtype = out.dtype, device = out.device })
    else
        jv = engine.grad(used, { u }, { grad_outputs = vused, create_graph = create,
            allow_unused = true })[1] or core.zeros(out.shape, { dtype = out.dtype,
            device = out.device })
    end
    return create and out or out:detach(), create and jv or jv:detach()
end

-- vhp(f, inputs[, v][, opts]) and hvp: f's one-element output and v^T H (H v): the gradient
-- of <grad f, v>, recorded once; H is symmetric for a twice differentiable f, so both are the
-- same up to rounding, as PyTorch's
local function hessian_vector(who, f, inputs, v, opts)
    local create, strict, xs, ins_list, outs, outs_list
    v, create, strict, xs, ins_list, outs, outs_list = start(who, f, inputs, v, opts, true)
    local out = scalar_output(who, outs, outs_list)
    local vs = input_vectors(who, v, xs, ins_list)
    local gs = gradients(who, out:reshape({}), xs, nil, true, strict)
    local dot
    for i, g in ipairs(gs) do
        local term = (g * vs[i]):sum()
        dot = dot and dot + term or term
    end
    local hv = gradients(who, dot, xs, nil, create, strict)
    return create and out or out:detach(), results(detached(hv, create), ins_list)
end

function M.vhp(f, inputs, v, opts)
    return hessian_vector("vhp", f, inputs, v, opts)
end

function M.hvp(f, inputs, v, opts)
    return hessian_vector("hvp", f, inputs, v, opts)
end

return M
