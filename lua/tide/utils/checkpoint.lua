-- tide.utils.checkpoint(fn, ...[, {preserve_rng_state = true, use_reentrant =}]): PyTorch's
-- torch.utils.checkpoint: fn(...) runs without recording, so none of its activations stay for
-- the backward pass; one node remembers fn and its arguments, and its backward runs fn again
-- with recording (the random generators of the arguments' devices and the CPU set back as
-- they were, so dropout draws the same masks) and differentiates that: gradients reach the
-- tensor arguments and every parameter fn uses, as without the checkpoint. Memory for time:
-- fn runs twice. fn returns a tensor or several (at least one floating-point tensor; the others,
-- integer tensors or any value, come back as they are). The options table, when given, is the
-- last argument; its other keys (PyTorch's **kwargs) stay in it as fn's last argument, as
-- use_reentrant = false passes them (use_reentrant = true refuses them, as PyTorch's). tide has
-- one way, PyTorch's use_reentrant = false, save that use_reentrant = true with no input
-- requiring grad warns and gives outputs without grad, as PyTorch 1.13's default does.
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local compat = require("tide._compat")
local autocast = require("tide._autocast")
local raise = autograd.raise
local is_tensor = autograd.is_tensor

local OPTIONS = { preserve_rng_state = true, use_reentrant = true }

local function tide()
    return require("tide")
end

-- the random states of the CPU and of the tensors' devices
local function rng_states(list)
    local t, states, seen = tide(), {}, { cpu = true }
    states[1] = { "cpu", t.get_rng_state("cpu") }
    for _, x in ipairs(list) do
        local d = tostring(x.device)
        if not seen[d] then
            seen[d] = true
            states[#states + 1] = { d, t.get_rng_state(d) }
        end
    end
    return states
end

local function set_states(states)
    local t = tide()
    for _, s in ipairs(states) do
        t.set_rng_state(s[2], s[1])
    end
end

-- the node's gradient: g is the outputs' gradients packed (nd.sizes: their element counts)
autograd.def {
    name = "checkpoint",
    list = true,
    backward = function(nd, g)
        if autograd._in_grad_pass() then
            raise("tide: checkpoint: not compatible with tide.autograd.grad (the recomputed " ..
                "block's backward accumulates into .grad); use backward(), as PyTorch's")
        end
        local argv, tensors = nd.argv, nd[1]
        local now
        if nd.states then
            now = rng_states(tensors)
            set_states(nd.states)
        end
        -- the tensor arguments again, detached: the recomputed graph starts at them
        local again, leaves = {}, {}
        for i = 1, argv.n do
            local v = argv[i]
            if is_tensor(v) then
                local x = v:detach()
                if v.requires_grad then
                    x:requires_grad_(true)
                    leaves[x] = true
                end
                v = x
            end
            again[i] = v
        end
        -- recorded (the engine runs formulas with recording off): fn again, under the
        -- autocast regions of the forward (the same dtypes), then the sum of <output, its
        -- gradient>, whose one backward gives every gradient at once
        local prev_autocast = autocast.swap(nd.autocast)
        local ok, total = pcall(autograd.enable_grad, function()
            local outs = compat.pack(nd.fn_(compat.unpack(again, 1, argv.n)))
            local sum, at = nil, 1
            for k = 1, #nd.sizes do
                local o, n = outs[nd.slots[k]], nd.sizes[k]
                if is_tensor(o) and o.requires_grad then
                    local term = (o * g:narrow(1, at, n):view(o.shape)):sum()
                    sum = sum and sum + term or term
                end
                at = at + n
            end
            return sum
        end)
        autocast.swap(prev_autocast)
        if now then
            set_states(now)
        end
        if not ok then
            error(total, 0)
        end
        if total then
            total:backward()
        end
        local gs = {}
        local j = 0
        for i = 1, argv.n do
            if is_tensor(argv[i]) then
                j = j + 1
                local x = again[i]
                gs[j] = leaves[x] and x.grad or nil
            end
        end
        return gs
    end,
}

-- the options at the end of argv (a plain table holding one of OPTIONS' keys), taken off it;
-- the table's other keys (PyTorch's **kwargs for fn) stay as fn's last argument, a table
local function take_options(who, argv)
    local last = argv[argv.n]
    if argv.n == 0 or type(last) ~= "table" or is_tensor(last) or getmetatable(last) ~= nil then
        return {}
    end
    local opts, rest, has_opt, others = {}, {}, false, {}
    for k, v in pairs(last) do
        if OPTIONS[k] then
            opts[k], has_opt = v, true
        else
            rest[k], others[#others + 1] = v, tostring(k)
        end
    end
    if not has_opt then
        return {}
    end
    if #others > 0 then
        if opts.use_reentrant == true then
            table.sort(others)
            raise(("tide: %s: Unexpected keyword arguments: %s (use_reentrant = true passes " ..
                "none to fn, as PyTorch's)"):format(who, table.concat(others, ",")))
        end
        argv[argv.n] = rest
    else
        argv.n, argv[argv.n] = argv.n - 1, nil
    end
    return args.options(who, opts, { "preserve_rng_state", "use_reentrant" })
end

local function checkpoint(fn, ...)
    local who = "checkpoint"
    if type(fn) ~= "function" and not (getmetatable(fn) or {}).__call then
        raise(("tide: %s: expected a function (or a module) first, got %s"):format(who, type(fn)))
    end
    local argv = compat.pack(...)
    local o = take_options(who, argv)
    local tensors, any_grad = {}, false
    for i = 1, argv.n do
        if is_tensor(argv[i]) then
            tensors[#tensors + 1] = argv[i]
            any_grad = any_grad or argv[i].requires_grad
        end
    end
    local preserve = o.preserve_rng_state == nil or o.preserve_rng_state == true
    local states = preserve and rng_states(tensors) or nil
    local outs = compat.pack(autograd.no_grad(fn, compat.unpack(argv, 1, argv.n)))
    if not core.is_grad_enabled() then
        return compat.unpack(outs, 1, outs.n)
    end
    if o.use_reentrant == true and not any_grad then
        -- PyTorch's reentrant checkpoint: no input requires grad, no output does (the
        -- parameters fn uses get none either)
        require("tide._warn").once("checkpoint.no_grad_inputs",
            "None of the inputs have requires_grad=True. Gradients will be None")
        return compat.unpack(outs, 1, outs.n)
    end
    -- the floating-point tensor results (slots: their places) go through the node; the
    -- others (integer tensors, numbers, tables) come back as they are, as PyTorch's
    local flat, sizes, slots = {}, {}, {}
    for k = 1, outs.n do
        local v = outs[k]
        if is_tensor(v) and args.FLOAT[v.dtype] then
            local n = #slots + 1
            flat[n], sizes[n], slots[n] = v:reshape(-1), v:numel(), k
        end
    end
    if outs.n == 0 then
        raise("tide: checkpoint: the function returned nothing; it must return a tensor")
    end
    if #slots == 0 then
        local v = outs[1]
        raise(("tide: %s: the function must return floating-point tensors; result 1 is %s")
            :format(who, is_tensor(v) and v.dtype or type(v)))
    end
    local packed = #slots == 1 and flat[1] or core.cat(flat, 1)
    local nd = autograd.record("checkpoint", packed, tensors)
    nd.argv, nd.fn_, nd.sizes, nd.slots, nd.states = argv, fn, sizes, slots, states
    nd.autocast = autocast.snapshot()
    -- the outputs as views of the packed result: their gradients reach the node
    local results, at = {}, 1
    for k = 1, outs.n do
        results[k] = outs[k]
    end
    for n, k in ipairs(slots) do
        results[k] = packed:narrow(1, at, sizes[n]):view(outs[k].shape)
        at = at + sizes[n]
    end
    return compat.unpack(results, 1, outs.n)
end

-- torch.utils.checkpoint is a module: tide.utils.checkpoint is callable (tide's short form) and
-- holds PyTorch's names, so torch.utils.checkpoint.checkpoint(fn, x) and
-- torch.utils.checkpoint.checkpoint_sequential(fns, segments, x) port as they are
return setmetatable({ checkpoint = checkpoint }, {
    __call = function(_, ...)
        return checkpoint(...)
    end,
    __index = function(_, k)
        if k == "checkpoint_sequential" then
            return require("tide.utils.checkpoint_sequential")
        end
        return nil
    end,
})
