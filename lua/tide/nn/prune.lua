-- tide.nn.utils.prune: PyTorch 1.13's torch.nn.utils.prune. Pruning a parameter `name` of a
-- module moves it to the parameter name .. "_orig" (the same tensor), adds the buffer
-- name .. "_mask" (0 for the pruned entries, 1 for the others, the parameter's dtype), and makes
-- module[name] = orig * mask, computed now and again before each forward by a forward pre-hook
-- (state_dict keys as PyTorch's: weight_orig, weight_mask). Pruning the same parameter again
-- combines the masks as PyTorch's PruningContainer does: the new amount applies to the entries
-- (for structured pruning, the channels) still unpruned. remove() makes the pruned value a
-- plain parameter again. Every check happens before the module changes: a refused call leaves
-- it as it was.
--
-- amount: an integer is a count, a non-integral number in [0, 1] a fraction of the entries
-- (channels) left, rounded half to even as Python's round(). On Lua 5.1 and LuaJIT an integral
-- number is an integer, so amount = 1 is one entry there (5.4: 1.0 is the fraction, all).
-- dims are 1-based (PyTorch's dim = 0 is dim = 1); negative dims count from the end.
local core = require("tide.core")
local autograd = require("tide.autograd")
local compat = require("tide._compat")
local raise = autograd.raise
local is_tensor = autograd.is_tensor

local M = {}

local function type_of(v)
    return is_tensor(v) and "a tensor" or type(v)
end

-- {3, 4}, as tide's messages write a shape
local function shape_str(t)
    return "{" .. table.concat(t.shape, ", ") .. "}"
end

local function same_shape(a, b)
    if a:dim() ~= b:dim() then
        return false
    end
    for i = 1, a:dim() do
        if a:size(i) ~= b:size(i) then
            return false
        end
    end
    return true
end

-- the pruning state of module[name]: { handle = the pre-hook's, methods = names applied }
local function state_of(module, name)
    local all = rawget(module, "_pruning")
    return all and all[name]
end

-- orig * mask, mask in orig's dtype (a model moved to another dtype keeps the mask's own)
local function masked(module, name)
    local orig, mask = rawget(module, name .. "_orig"), rawget(module, name .. "_mask")
    if mask.dtype ~= orig.dtype then
        mask = mask:to(orig.dtype)
    end
    return mask * orig
end

-- checks module and name, and that module[name] is a parameter or already pruned; returns the
-- tensor pruning starts from (the parameter, or orig) and the state (nil: not pruned yet)
local function target(who, module, name)
    if type(module) ~= "table" or not module.__ismodule or type(rawget(module, "_kind")) ~=
        "table" then
        raise("tide: " .. who .. ": expected a Module, got " .. type_of(module))
    end
    if type(name) ~= "string" then
        raise("tide: " .. who .. ": name must be a string such as \"weight\", got " ..
            type_of(name))
    end
    local state = state_of(module, name)
    if state then
        return rawget(module, name .. "_orig"), state
    end
    local p = rawget(module, name)
    if module._kind[name] ~= "parameter" or not is_tensor(p) then
        raise(string.format("tide: %s: %s has no parameter '%s'%s", who, module.__name, name,
            module._kind[name] and " (it is a " .. module._kind[name] .. ")" or ""))
    end
    for _, suffix in ipairs({ "_orig", "_mask" }) do
        if module._kind[name .. suffix] or rawget(module, name .. suffix) ~= nil then
            raise(string.format("tide: %s: %s already has a field '%s', where pruning '%s' " ..
                "would put its %s; rename it first", who, module.__name, name .. suffix, name,
                suffix == "_orig" and "parameter" or "mask"))
        end
    end
    return p, nil
end

-- amount as PyTorch's _validate_pruning_amount_init checks it
local function check_amount(who, amount)
    if type(amount) ~= "number" then
        raise(string.format("tide: %s: amount must be an integer count or a fraction in " ..
            "[0, 1], got %s", who, type_of(amount)))
    end
    local bad
    if compat.is_integer(amount) then
        bad = amount < 0
    else
        bad = not (amount >= 0 and amount <= 1) -- NaN too
    end
    if bad then
        raise(string.format("tide: %s: amount = %s must be an integer count or a fraction " ..
            "in [0, 1]", who, tostring(amount)))
    end
end

-- Python's round(): halves to even
local function round_half_even(x)
    local f = math.floor(x)
    local d = x - f
    if d > 0.5 or (d == 0.5 and f % 2 == 1) then
        f = f + 1
    end
    return compat.tointeger(f) or f
end

-- how many of n entries (channels) amount prunes; a count above n raises
local function count_to_prune(who, amount, n, what, name)
    if compat.is_integer(amount) then
        if amount > n then
            raise(string.format("tide: %s: amount = %s is more than the %d %s of '%s' left " ..
                "to prune; give at most %d, or a fraction", who, tostring(amount), n, what,
                name, n))
        end
        return amount
    end
    return round_half_even(amount * n)
end

-- a 1-based dim of an nd-D tensor (negative: from the end) -> positive, or raises
local function resolve_dim(who, dim, t, name)
    local nd = t:dim()
    if not compat.is_integer(dim) or dim == 0 or dim > nd or dim < -nd then
        raise(string.format("tide: %s: dim = %s is not a dim of '%s' (shape %s); give 1..%d " ..
            "(1-based) or -%d..-1", who, tostring(dim), name, shape_str(t), nd, nd))
    end
    return dim < 0 and nd + 1 + dim or dim
end

-- the product of t's sizes but dim d's
local function per_channel(t, d)
    local per = 1
    for i = 1, t:dim() do
        if i ~= d then
            per = per * t:size(i)
        end
    end
    return per
end

-- ---- the methods: { kind =, dim =, compute = function(t, default_mask) -> mask } ----
-- t the importance scores (of the entries or channels still unpruned, when combined), the
-- mask's result on default_mask's device and dtype

local function l1_method(who, name, amount)
    return { kind = "unstructured", compute = function(t, dm)
        local k = count_to_prune(who, amount, t:numel(), "entries", name)
        local mask = dm:clone()
        if k > 0 then
            local _, idx = t:abs():reshape(-1):topk(k, -1, false)
            mask:view(-1):index_fill_(1, idx, 0)
        end
        return mask
    end }
end

local function random_method(who, name, amount)
    return { kind = "unstructured", compute = function(t, dm)
        local n = t:numel()
        local k = count_to_prune(who, amount, n, "entries", name)
        local mask = dm:clone()
        if k > 0 then
            local _, idx = core.rand({ n }, { device = dm.device }):topk(k)
            mask:view(-1):index_fill_(1, idx, 0)
        end
        return mask
    end }
end

local function identity_method()
    return { kind = "unstructured", compute = function(_, dm)
        return dm
    end }
end

-- a copy of dm with the channels idx along dim d zeroed
local function drop_channels(dm, d, idx)
    local mask = dm:clone()
    mask:index_fill_(d, idx, 0)
    return mask
end

local function random_structured_method(who, name, amount, d)
    return { kind = "structured", dim = d, compute = function(t, dm)
        local nch = t:size(d)
        local k = count_to_prune(who, amount, nch, "channels", name)
        if k == 0 then
            return dm
        end
        local _, idx = core.rand({ nch }, { device = dm.device }):topk(k, -1, false)
        return drop_channels(dm, d, idx)
    end }
end

local function ln_structured_method(who, name, amount, p, d)
    return { kind = "structured", dim = d, compute = function(t, dm)
        local nch = t:size(d)
        local k = count_to_prune(who, amount, nch, "channels", name)
        if k == 0 then
            return dm
        end
        local norms = t:movedim(d, 1):reshape(nch, per_channel(t, d)):norm(p, 2)
        local _, idx = norms:topk(k, -1, false) -- PyTorch keeps the nch - k largest
        return drop_channels(dm, d, idx)
    end }
end

local function custom_method(mask)
    return { kind = "global", compute = function(_, dm)
        return dm * mask:to(dm.dtype)
    end }
end

-- the mask of a parameter whose current mask is `mask` (nil: none yet, all ones like orig) after
-- method, from the importance scores t: on a pruned parameter the method sees only the entries
-- (channels) still unpruned, as PyTorch's PruningContainer._combine_masks
local function combined_mask(method, t, mask, orig)
    if not mask then
        local ones = core.ones(orig.shape, { dtype = orig.dtype, device = orig.device })
        return method.compute(t, ones)
    end
    mask = mask:detach():clone():contiguous() -- flattened by view below
    if method.kind == "global" then
        return method.compute(t, mask)
    end
    local d, flat_t, flat_m, idx
    if method.kind == "unstructured" then
        d, flat_t, flat_m = 1, t:reshape(-1), mask:view(-1)
        idx = flat_m:eq(1):nonzero():reshape(-1)
    else
        d, flat_t, flat_m = method.dim, t, mask
        local nch = mask:size(d)
        idx = mask:movedim(d, 1):reshape(nch, per_channel(mask, d)):sum(2):ne(0):nonzero()
            :reshape(-1)
    end
    local partial = method.compute(flat_t:index_select(d, idx), flat_m:index_select(d, idx))
    flat_m:index_copy_(d, idx, partial:to(mask.dtype))
    return mask
end

-- importance scores of a parameter: a tensor of its shape on its device, or nil (the weight)
local function check_scores(who, scores, ref, name, what)
    if scores == nil then
        return
    end
    if not is_tensor(scores) then
        raise(string.format("tide: %s: %s must be a tensor, got %s", who, what,
            type_of(scores)))
    end
    if not same_shape(scores, ref) then
        raise(string.format("tide: %s: %s has shape %s, '%s' has %s; give scores of its shape",
            who, what, shape_str(scores), name, shape_str(ref)))
    end
    if scores.device ~= ref.device then
        raise(string.format("tide: %s: %s is on %s, '%s' on %s; move it there", who, what,
            tostring(scores.device), name, tostring(ref.device)))
    end
end

-- the tensor pruning measures: the scores given, or the current pruned value
local function current(module, name, state, p)
    if state then
        return masked(module, name)
    end
    return p
end

-- applies method to module[name] (checked by target()); nothing fails after the mask is known
local function apply(module, name, method, method_name, scores, p, state)
    local mask = autograd.no_grad(function()
        local t = scores or current(module, name, state, p)
        return combined_mask(method, t:detach(), state and rawget(module, name .. "_mask"), p)
    end)
    if state then
        state.handle.remove() -- PyTorch's hook moves to the end of the pre-hooks too
    else
        module:_unregister(name)
        module:register_parameter(name .. "_orig", p)
        state = { methods = {} }
        local all = rawget(module, "_pruning")
        if not all then
            all = {}
            rawset(module, "_pruning", all)
        end
        all[name] = state
    end
    module:register_buffer(name .. "_mask", mask)
    state.methods[#state.methods + 1] = method_name
    state.handle = module:register_forward_pre_hook(function(m)
        rawset(m, name, masked(m, name))
    end)
    rawset(module, name, masked(module, name))
    return module
end

-- opts (nil or a table) with importance_scores only
local function scores_option(who, opts)
    if opts == nil then
        return nil
    end
    if type(opts) ~= "table" then
        raise("tide: " .. who .. ": options must be a table such as {importance_scores = t}, " ..
            "got " .. type_of(opts))
    end
    core._check_options(opts, who, { "importance_scores" })
    return opts.importance_scores
end

-- identity(module, name): a mask of ones (the parameter pruned, nothing removed)
function M.identity(module, name)
    local p, state = target("identity", module, name)
    return apply(module, name, identity_method(), "identity", nil, p, state)
end

-- random_unstructured(module, name, amount): amount entries, drawn at random, pruned
function M.random_unstructured(module, name, amount)
    local who = "random_unstructured"
    check_amount(who, amount)
    local p, state = target(who, module, name)
    return apply(module, name, random_method(who, name, amount), who, nil, p, state)
end

-- l1_unstructured(module, name, amount[, {importance_scores =}]): the amount entries of least
-- |importance| (the parameter's own values by default) pruned
function M.l1_unstructured(module, name, amount, opts)
    local who = "l1_unstructured"
    check_amount(who, amount)
    local scores = scores_option(who, opts)
    local p, state = target(who, module, name)
    check_scores(who, scores, p, name, "importance_scores")
    local method = l1_method(who, name, amount)
    return apply(module, name, method, who, scores, p, state)
end

-- structured pruning needs 2 or more dims, and dim one of them
local function structured_dim(who, p, name, dim)
    if p:dim() <= 1 then
        raise(string.format("tide: %s: structured pruning needs a tensor of 2 or more dims; " ..
            "'%s' has shape %s", who, name, shape_str(p)))
    end
    return resolve_dim(who, dim, p, name)
end

-- random_structured(module, name, amount, dim): amount channels along dim, drawn at random,
-- pruned
function M.random_structured(module, name, amount, dim)
    local who = "random_structured"
    check_amount(who, amount)
    local p, state = target(who, module, name)
    local d = structured_dim(who, p, name, dim)
    local method = random_structured_method(who, name, amount, d)
    return apply(module, name, method, who, nil, p, state)
end

-- ln_structured(module, name, amount, n, dim[, {importance_scores =}]): the amount channels
-- along dim of least L_n norm (over every other dim) pruned; n a number (math.huge: the max
-- norm) or "fro" (2)
function M.ln_structured(module, name, amount, n, dim, opts)
    local who = "ln_structured"
    check_amount(who, amount)
    local scores = scores_option(who, opts)
    if n == "fro" then
        n = 2
    elseif type(n) ~= "number" or n ~= n then
        raise(string.format("tide: %s: n must be a number (math.huge for the max norm) or " ..
            "\"fro\", got %s", who, type(n) == "string" and ("\"" .. n .. "\"") or
            type(n) == "number" and tostring(n) or type_of(n)))
    end
    local p, state = target(who, module, name)
    local d = structured_dim(who, p, name, dim)
    check_scores(who, scores, p, name, "importance_scores")
    local method = ln_structured_method(who, name, amount, n, d)
    return apply(module, name, method, who, scores, p, state)
end

-- custom_from_mask(module, name, mask): the entries where mask is 0 pruned (mask a tensor of
-- the parameter's shape and device, any dtype; combined with a mask already there)
function M.custom_from_mask(module, name, mask)
    local who = "custom_from_mask"
    local p, state = target(who, module, name)
    if not is_tensor(mask) then
        raise("tide: custom_from_mask: mask must be a tensor of 0s and 1s, got " ..
            type_of(mask))
    end
    check_scores(who, mask, p, name, "mask")
    return apply(module, name, custom_method(mask), who, nil, p, state)
end

-- the pruning methods global_unstructured takes, by function or name
local GLOBAL = { l1_unstructured = l1_method, random_unstructured = random_method,
    identity = identity_method }
local NOT_GLOBAL = { random_structured = true, ln_structured = true, custom_from_mask = true }

local function global_method(pruning_method)
    for key, make in pairs(GLOBAL) do
        if pruning_method == key or pruning_method == M[key] then
            return key, make
        end
    end
    for key in pairs(NOT_GLOBAL) do
        if pruning_method == key or pruning_method == M[key] then
            raise("tide: global_unstructured: pruning_method " .. key .. " is not " ..
                "unstructured; give l1_unstructured, random_unstructured or identity")
        end
    end
    raise("tide: global_unstructured: pruning_method must be prune.l1_unstructured, " ..
        "prune.random_unstructured or prune.identity (or its name), got " ..
        (type(pruning_method) == "string" and ("\"" .. pruning_method .. "\"") or
        type_of(pruning_method)))
end

-- global_unstructured(parameters, pruning_method, {amount =, importance_scores =}): prunes
-- the parameters as one tensor; parameters a list of {module, name} pairs, pruning_method
-- prune.l1_unstructured, prune.random_unstructured or prune.identity (or its name, such as
-- "l1_unstructured"), importance_scores a table whose [i] (a tensor, or nil: the parameter's
-- current value) scores parameters[i]. The parameters share one device.
function M.global_unstructured(parameters, pruning_method, opts)
    local who = "global_unstructured"
    if type(parameters) ~= "table" or is_tensor(parameters) or #parameters == 0 then
        raise("tide: global_unstructured: parameters must be a non-empty list of " ..
            "{module, name} pairs, got " .. (type(parameters) == "table" and
            not is_tensor(parameters) and "an empty table" or type_of(parameters)))
    end
    local key, make = global_method(pruning_method)
    opts = opts or {}
    if type(opts) ~= "table" or is_tensor(opts) then
        raise("tide: global_unstructured: options must be a table such as {amount = 0.2}, " ..
            "got " .. type_of(opts))
    end
    core._check_options(opts, who, { "amount", "importance_scores" })
    local amount, all_scores = opts.amount, opts.importance_scores
    if key == "identity" then
        if amount ~= nil then
            raise("tide: global_unstructured: identity takes no amount; leave it out")
        end
    else
        check_amount(who, amount)
    end
    if all_scores ~= nil and (type(all_scores) ~= "table" or is_tensor(all_scores)) then
        raise("tide: global_unstructured: importance_scores must be a table whose [i] scores " ..
            "parameters[i], got " .. type_of(all_scores))
    end
    for k in pairs(all_scores or {}) do
        if not (compat.is_integer(k) and k >= 1 and k <= #parameters) then
            raise(string.format("tide: global_unstructured: importance_scores[%s] names no " ..
                "parameter; its keys are 1..%d, as the parameters'", tostring(k),
                #parameters))
        end
    end
    local items, device = {}, nil
    for i = 1, #parameters do
        local pair = parameters[i]
        if type(pair) ~= "table" or is_tensor(pair) or pair.__ismodule then
            raise(string.format("tide: global_unstructured: parameters[%d] must be a " ..
                "{module, name} pair, got %s", i, type_of(pair)))
        end
        local module, name = pair[1], pair[2]
        local p, state = target(who, module, name)
        local scores = all_scores and all_scores[i]
        check_scores(who, scores, p, name, "importance_scores[" .. i .. "]")
        device = device or p.device
        if p.device ~= device then
            raise(string.format("tide: global_unstructured: parameters[%d] is on %s, the " ..
                "first on %s; put them on one device", i, tostring(p.device),
                tostring(device)))
        end
        items[i] = { module = module, name = name, p = p, state = state, scores = scores }
    end
    -- one flat float64 vector of scores and of masks (float64 holds every dtype's values)
    local masks = autograd.no_grad(function()
        local flat_s, flat_m = {}, {}
        for i, it in ipairs(items) do
            local s = it.scores or current(it.module, it.name, it.state, it.p)
            flat_s[i] = s:detach():reshape(-1):to("float64")
            local m = it.state and rawget(it.module, it.name .. "_mask")
            flat_m[i] = m and m:reshape(-1):to("float64") or
                core.ones({ it.p:numel() }, { dtype = "float64", device = device })
        end
        local method = make(who, "the parameters", amount)
        local final = combined_mask(method, core.cat(flat_s), core.cat(flat_m))
        local out, at = {}, 0
        for i, it in ipairs(items) do
            local n = it.p:numel()
            out[i] = final:narrow(1, at + 1, n):reshape(it.p.shape)
            at = at + n
        end
        return out
    end)
    for i, it in ipairs(items) do
        local p, state = target(who, it.module, it.name)
        apply(it.module, it.name, custom_method(masks[i]), who, nil, p, state)
    end
end

-- remove(module, name): module[name] = orig * mask as a plain parameter again (the tensor that
-- was name_orig, holding the pruned values); the mask and the hook go
function M.remove(module, name)
    local who = "remove"
    if type(module) ~= "table" or not module.__ismodule or type(rawget(module, "_kind")) ~=
        "table" then
        raise("tide: remove: expected a Module, got " .. type_of(module))
    end
    if type(name) ~= "string" then
        raise("tide: remove: name must be a string such as \"weight\", got " .. type_of(name))
    end
    local state = state_of(module, name)
    if not state then
        raise(string.format("tide: %s: '%s' of %s is not pruned; prune it before removing " ..
            "the pruning", who, name, module.__name))
    end
    local orig = rawget(module, name .. "_orig")
    autograd.no_grad(function()
        orig:copy_(masked(module, name))
    end)
    state.handle.remove()
    rawget(module, "_pruning")[name] = nil
    if next(rawget(module, "_pruning")) == nil then
        rawset(module, "_pruning", nil)
    end
    module:_unregister(name .. "_orig")
    module:_unregister(name .. "_mask")
    rawset(module, name, nil)
    module:register_parameter(name, orig)
    return module
end

-- is_pruned(module): true when module or a module inside it has a pruned parameter
function M.is_pruned(module)
    if type(module) ~= "table" or not module.__ismodule or rawget(module, "_params") == nil then
        raise("tide: is_pruned: expected a Module, got " .. type_of(module))
    end
    for _, m in ipairs(module:modules()) do
        if rawget(m, "_pruning") then
            return true
        end
    end
    return false
end

return M
