-- tide.nn.utils: gradient clipping and the parameters as one vector, as torch.nn.utils in
-- PyTorch 1.13, and state_dict names converted to and from PyTorch's.
--
--     local norm = nn.utils.clip_grad_norm_(model:parameters(), 1.0)   -- returns a number
--     nn.utils.clip_grad_value_(model:parameters(), 0.5)
--     model:load_state_dict(nn.utils.state_dict_from_torch(tide.load("torch.safetensors")))
--
-- params is a tensor, a list of tensors or a Module; parameters without a gradient are skipped.
local autograd = require("tide.autograd")
local raise = autograd.raise
local is_tensor = autograd.is_tensor
local Complex = require("tide.complex.tensor")
local is_complex = Complex.is

local utils = {}

-- the real tensor under a gradient: a complex one's pair (view_as_real), which clipping scales
local function real_of(g)
    return is_complex(g) and Complex.ri(g) or g
end

-- params as a list: a Module's parameters, one tensor, or the list itself
local function param_list(params, who)
    if type(params) == "table" and params.__ismodule then
        return params:parameters()
    elseif is_tensor(params) then
        return { params }
    elseif type(params) ~= "table" then
        raise("tide: " .. who .. ": expected a tensor, a list of tensors or a Module, got " ..
            type(params))
    end
    return params
end

-- the gradients of params, in order
local function grads_of(params, who)
    params = param_list(params, who)
    local out = {}
    for i, p in ipairs(params) do
        if not is_tensor(p) and not is_complex(p) then
            raise("tide: " .. who .. ": parameter " .. i .. " is a " .. type(p) ..
                ", expected a tensor")
        end
        local g = p.grad
        if g then
            -- checked before any gradient is changed: a refused call leaves them all as they were
            if not autograd.FLOAT[real_of(g).dtype] then
                raise(("tide: %s: the gradient of parameter %d has dtype %s; gradients to " ..
                    "clip are floating point: give p.grad the parameter's dtype"):format(who, i,
                    g.dtype))
            end
            out[#out + 1] = g
        end
    end
    return out
end

local function norm_type_of(v, who)
    if v == nil then
        return 2
    elseif v == "inf" or v == math.huge then
        return math.huge
    elseif type(v) ~= "number" or v ~= v or v <= 0 then
        raise("tide: " .. who .. ": norm_type " .. tostring(v) .. " is not supported; use a " ..
            'positive number or math.huge ("inf")')
    end
    return v
end

-- the norm_type-norm of one gradient as a 1-element tensor on its device
local function grad_norm(g, p)
    local a = g:abs()
    if p == math.huge then
        return a:max():reshape({ 1 })
    elseif p == 1 then
        return a:sum():reshape({ 1 })
    elseif p == 2 then
        return a:mul(a):sum():sqrt():reshape({ 1 })
    end
    return a:pow(p):sum():pow(1 / p):reshape({ 1 })
end

-- PyTorch's optional parameters after params, by position or in one table by name (a name
-- outside names raises, naming the known ones)
local function clip_options(who, names, ...)
    local nn_args = require("tide.nn._args")
    local o = nn_args.positional(who, 1, names, ...)
    require("tide.op_args").options(who, o, names)
    return o
end

-- clip_grad_norm_(params, max_norm[, norm_type = 2[, error_if_nonfinite = false]]), each of
-- them by name too ({max_norm =, norm_type =, error_if_nonfinite =}, PyTorch 1.13's keywords):
-- scales every gradient in place by max_norm / (total + 1e-6) when that is below 1 (or NaN: a
-- NaN total makes every gradient NaN, as PyTorch's), total being the norm of all the gradients
-- together (norm_type math.huge or "inf": the largest magnitude); returns total as a number.
-- error_if_nonfinite = true raises for a NaN or infinite total, leaving the gradients as they are.
function utils.clip_grad_norm_(params, ...)
    local who = "clip_grad_norm_"
    local grads = grads_of(params, who)
    local o = clip_options(who, { "max_norm", "norm_type", "error_if_nonfinite" }, ...)
    local max_norm = o.max_norm
    if type(max_norm) ~= "number" then
        raise("tide: clip_grad_norm_: expected max_norm to be a number, got " .. type(max_norm))
    end
    local p = norm_type_of(o.norm_type, who)
    local error_if_nonfinite = o.error_if_nonfinite
    if error_if_nonfinite ~= nil and type(error_if_nonfinite) ~= "boolean" then
        raise("tide: clip_grad_norm_: error_if_nonfinite must be a boolean, got " ..
            type(error_if_nonfinite))
    end
    if #grads == 0 then
        return 0.0
    end
    local total
    autograd.no_grad(function()
        local dev = grads[1].device
        local norms = {}
        for i, g in ipairs(grads) do
            norms[i] = grad_norm(g, p):to(dev):to("float64") -- mixed dtypes combine
        end
        local all = #norms == 1 and norms[1] or require("tide").cat(norms, 1)
        if p == math.huge then
            total = all:max():item()
        else
            total = grad_norm(all, p):item()
        end
        if error_if_nonfinite and (total ~= total or total == math.huge) then
            local order = p == math.huge and "inf" or ("%g"):format(p)
            raise(("tide: clip_grad_norm_: the total norm of order %s of the gradients is " ..
                "non-finite (%s), so it cannot be clipped; to scale the gradients by it anyway, " ..
                "pass error_if_nonfinite = false"):format(order, tostring(total)))
        end
        local coef = max_norm / (total + 1e-6)
        if coef < 1 or coef ~= coef then
            for _, g in ipairs(grads) do
                real_of(g):mul_(coef)
            end
        end
    end)
    return total
end

-- clip_grad_norm(...): PyTorch's deprecated name of clip_grad_norm_, warning once as it does
function utils.clip_grad_norm(...)
    require("tide._warn").once("clip_grad_norm", "nn.utils.clip_grad_norm is now deprecated " ..
        "in favor of nn.utils.clip_grad_norm_")
    return utils.clip_grad_norm_(...)
end

-- clip_grad_value_(params, clip_value): clamps every gradient in place to
-- [-clip_value, clip_value]; clip_value by name too ({clip_value = 100}, PyTorch's keyword)
function utils.clip_grad_value_(params, ...)
    local grads = grads_of(params, "clip_grad_value_")
    local clip_value = clip_options("clip_grad_value_", { "clip_value" }, ...).clip_value
    if type(clip_value) ~= "number" then
        raise("tide: clip_grad_value_: expected clip_value to be a number, got " ..
            type(clip_value))
    end
    autograd.no_grad(function()
        for _, g in ipairs(grads) do -- a complex gradient's real and imaginary parts each
            real_of(g):clamp_(-clip_value, clip_value)
        end
    end)
end

-- PyTorch names the children of Sequential and ModuleList 0, 1, ...; tide 1, 2, ... (Lua's
-- lists): every other part of a state_dict key is the same, so the conversion shifts each
-- all-digit part of each key by one. Values are passed through as they are.
local function shift_keys(sd, by, who)
    if type(sd) ~= "table" then
        raise(string.format("tide: %s: expected a state_dict (a table of name = tensor), got %s",
            who, type(sd)))
    end
    local out = {}
    -- a named_parameters() / named_buffers() listing also holds {name, value} at 1..n, which
    -- PUC 5.1 and LuaJIT's pairs (without __pairs) show: not keys
    local mt = getmetatable(sd)
    local listing = type(mt) == "table" and rawget(mt, "keys") ~= nil
    local function add(k, v)
        if type(k) ~= "string" then
            raise(string.format("tide: %s: state_dict keys are strings, got a %s key", who,
                type(k)))
        end
        if by < 0 and ("." .. k .. "."):find(".0.", 1, true) then
            raise(string.format("tide: %s: key \"%s\" has a list index 0, but tide's lists "
                .. "count from 1: is this state_dict PyTorch's already?", who, k))
        end
        local name = k:gsub("[^.]+", function(part)
            if part:match("^%d+$") then
                return tostring(tonumber(part) + by)
            end
        end)
        if out[name] ~= nil then
            raise(string.format("tide: %s: two keys convert to \"%s\"", who, name))
        end
        out[name] = v
    end
    for k, v in pairs(sd) do
        if not (listing and type(k) == "number") then
            add(k, v)
        end
    end
    return out
end

function utils.state_dict_from_torch(sd)
    return shift_keys(sd, 1, "state_dict_from_torch")
end

function utils.state_dict_to_torch(sd)
    return shift_keys(sd, -1, "state_dict_to_torch")
end

-- nn.utils.rnn: pad_sequence, pack_padded_sequence, pad_packed_sequence, pack_sequence,
-- unpad_sequence, unpack_sequence and PackedSequence (tide.nn.utils_rnn)
utils.rnn = require("tide.nn.utils_rnn")

-- weight_norm, remove_weight_norm, spectral_norm, remove_spectral_norm (tide.nn.utils_reparam)
do
    local reparam = require("tide.nn.utils_reparam")
    utils.weight_norm, utils.remove_weight_norm = reparam.weight_norm, reparam.remove_weight_norm
    utils.spectral_norm = reparam.spectral_norm
    utils.remove_spectral_norm = reparam.remove_spectral_norm
end

-- a lazy field that installs name from module mod on first use
local function from(mod, name)
    return function()
        rawset(utils, name, require(mod)[name])
    end
end

-- nn.utils.parametrize (tensors of a module computed from others on each read),
-- nn.utils.parametrizations (spectral_norm, orthogonal), nn.utils.stateless (functional_call)
-- and nn.utils.prune (masks on parameters), PyTorch's fusion (a conv and an eval batch norm as
-- one conv), init (skip_init) and memory_format submodules and their functions, loaded on
-- first use
require("tide._lazy")(utils, { parametrize = "tide.nn.parametrize",
    parametrizations = "tide.nn.parametrizations", stateless = "tide.nn.stateless",
    prune = "tide.nn.prune", fusion = "tide.nn.utils_fusion", init = "tide.nn.utils_init",
    memory_format = "tide.nn.utils_memory_format",
    fuse_conv_bn_eval = from("tide.nn.utils_fusion", "fuse_conv_bn_eval"),
    fuse_conv_bn_weights = from("tide.nn.utils_fusion", "fuse_conv_bn_weights"),
    skip_init = from("tide.nn.utils_init", "skip_init"),
    convert_conv2d_weight_memory_format = from("tide.nn.utils_memory_format",
        "convert_conv2d_weight_memory_format") })

-- the tensors of params (a tensor, a list of tensors or a Module), all on one device (PyTorch's
-- rule for the two below); raises naming the first parameter elsewhere
local function params_on_one_device(params, who)
    params = param_list(params, who)
    for i, p in ipairs(params) do
        if not is_tensor(p) and not is_complex(p) then
            raise("tide: " .. who .. ": parameter " .. i .. " is a " .. type(p) ..
                ", expected a tensor")
        end
        if p.device ~= params[1].device then
            raise(string.format("tide: %s: parameter %d is on %s and parameter 1 on %s; all " ..
                "parameters must be on one device (move the model with model:to(\"%s\"))", who,
                i, tostring(p.device), tostring(params[1].device), tostring(params[1].device)))
        end
    end
    if #params == 0 then
        raise("tide: " .. who .. ": no parameters given")
    end
    return params
end

-- parameters_to_vector(params): one 1-D tensor of every parameter's values, flattened in
-- order (differentiable, as PyTorch's torch.cat of their views)
function utils.parameters_to_vector(params)
    local ps = params_on_one_device(params, "parameters_to_vector")
    local any_complex = false
    for _, p in ipairs(ps) do
        any_complex = any_complex or is_complex(p)
    end
    local tide = require("tide")
    local flat = {}
    for i, p in ipairs(ps) do
        flat[i] = p:reshape(-1)
        if any_complex and not is_complex(p) then -- PyTorch's cat promotes them: a complex vector
            flat[i] = tide.complex(flat[i], tide.zeros_like(flat[i]))
        end
    end
    return tide.cat(flat, 1)
end

-- vector_to_parameters(vec, params): copies consecutive slices of the 1-D vec into the
-- parameters, in order, without recording (PyTorch rebinds .data to views of vec; tide copies
-- the values, so the parameters stay the tensors the optimizer holds). vec must be on the
-- parameters' device and hold exactly their number of elements; nothing is written otherwise.
function utils.vector_to_parameters(vec, params)
    local who = "vector_to_parameters"
    if not is_tensor(vec) and not is_complex(vec) then
        raise("tide: vector_to_parameters: expected vec to be a tensor, got " .. type(vec))
    end
    local ps = params_on_one_device(params, who)
    if vec:dim() ~= 1 then
        raise("tide: vector_to_parameters: expected a 1-D vec, got shape {" ..
            table.concat(vec.shape, ", ") .. "}")
    end
    if vec.device ~= ps[1].device then
        raise(string.format("tide: vector_to_parameters: expected vec on the parameters' " ..
            "device, found %s (vec) and %s (parameters); move it with vec:to(\"%s\")",
            tostring(vec.device), tostring(ps[1].device), tostring(ps[1].device)))
    end
    local total = 0
    for _, p in ipairs(ps) do
        total = total + p:numel()
    end
    if vec:numel() ~= total then
        raise(string.format("tide: vector_to_parameters: vec has %d elements, the parameters " ..
            "%d; pass a vector of parameters_to_vector's length", vec:numel(), total))
    end
    autograd.no_grad(function()
        local at = 1
        for _, p in ipairs(ps) do
            local n = p:numel()
            local part = vec:narrow(1, at, n):view(p.shape)
            if is_complex(part) and not is_complex(p) then -- parameters_to_vector's promotion
                part = part.real
            end
            p:copy_(part)
            at = at + n
        end
    end)
end

-- PyTorch's submodules of the functions above: nn.utils.clip_grad, nn.utils.convert_parameters
utils.clip_grad = { clip_grad_norm_ = utils.clip_grad_norm_, clip_grad_norm = utils.clip_grad_norm,
    clip_grad_value_ = utils.clip_grad_value_ }
utils.convert_parameters = { parameters_to_vector = utils.parameters_to_vector,
    vector_to_parameters = utils.vector_to_parameters }

return utils
