-- tide.nn.utils' reparametrizations, as torch.nn.utils in PyTorch 1.13: weight_norm (a weight
-- written as g v / ||v||, PyTorch's weight_g and weight_v) and spectral_norm (a weight divided
-- by its largest singular value, estimated by power iteration: weight_orig, and the buffers
-- weight_u and weight_v). The module's parameter is replaced by the new ones (state_dict keys
-- as PyTorch's), and the weight is computed again from them before each forward: the module
-- gets a forward of its own that does so, then calls its class's.
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local is_tensor = autograd.is_tensor
local compat = require("tide._compat")

local M = {}

local function module_and_name(module, name, who)
    if type(module) ~= "table" or not module.__ismodule then
        raise("tide: " .. who .. ": expected a Module, got " ..
            (is_tensor(module) and "a tensor" or type(module)))
    end
    if type(name) ~= "string" then
        raise("tide: " .. who .. ": name must be a string, got " ..
            (is_tensor(name) and "a tensor" or type(name)))
    end
end

-- PyTorch's parameters after the module, by position in its order (names) and/or by name in a
-- trailing table (tide.pytorch_args.merge); a name outside names raises
local function by_name(who, names, ...)
    local opts = require("tide.pytorch_args").merge(who, names, ...) or {}
    core._check_options(opts, who, names)
    return opts
end

local function module_weight(module, name, who)
    module_and_name(module, name, who)
    local w = rawget(module, name)
    if not is_tensor(w) or module._kind[name] ~= "parameter" then
        raise(string.format("tide: %s: %s has no parameter '%s'", who, module.__name, name))
    end
    if rawget(module, "_reparam_" .. name) then
        raise(string.format("tide: %s: '%s' of %s is already reparametrized; remove it first",
            who, name, module.__name))
    end
    return w
end

-- runs compute(module, true) before each call of the module's own forward, and
-- compute(module, false) now (false: no power iteration), reparametrization `kind` of name;
-- with `initial`, module[name] is that tensor until the first forward instead (spectral_norm)
local function before_forward(module, name, kind, compute, initial)
    local forward = module.forward
    rawset(module, "_reparam_" .. name, { forward = rawget(module, "forward"), compute = compute,
        kind = kind })
    rawset(module, "forward", function(self, ...)
        compute(self, true)
        return forward(self, ...)
    end)
    if initial then
        rawset(module, name, initial)
    else
        compute(module, false)
    end
end

-- removes reparametrization `kind` of module[name], whose parameters and buffers are name ..
-- each of parts: the weight computed from them now (no power iteration) is the parameter again
local function remove(who, kind, module, name, parts)
    name = name or "weight"
    module_and_name(module, name, who)
    local saved = rawget(module, "_reparam_" .. name)
    if not saved or saved.kind ~= kind then
        raise(string.format("tide: %s: %s of '%s' not found in %s", who, kind, name,
            module.__name))
    end
    local w = autograd.no_grad(function()
        saved.compute(module, false)
        return rawget(module, name):detach():clone()
    end)
    rawset(module, "forward", saved.forward)
    rawset(module, "_reparam_" .. name, nil)
    for _, part in ipairs(parts) do
        module:_unregister(name .. part)
    end
    rawset(module, name, nil)
    module:register_parameter(name, w:requires_grad_(true))
    return module
end

-- ||w|| over every dim but `dim` (1-based), kept as size 1 (PyTorch's norm_except_dim), or of
-- the whole tensor when dim is false or -1 (PyTorch's norm_except_dim: weight_norm's dim=-1 and
-- dim=None are the whole tensor's norm, g a 0-D tensor)
local function norm_except(w, dim)
    if not dim or dim == -1 then
        return w:norm()
    end
    local d = dim < 0 and w:dim() + 1 + dim or dim
    local shape = {}
    for i = 1, w:dim() do
        shape[i] = i == d and w:size(i) or 1
    end
    return w:transpose(1, d):reshape(w:size(d), -1):norm(2, 2):reshape(shape)
end

-- weight_norm(module[, {name = "weight", dim = 1}]): module[name] = g v / ||v||, the norm over
-- every dim but dim (1, the output's, by default; dim = false or -1: the whole tensor, as
-- PyTorch's dim=None and dim=-1); g and v are
-- the parameters name_g and name_v, initialized so that the weight is unchanged
function M.weight_norm(module, ...)
    local who = "weight_norm"
    require("tide.op_args").no_extra(who, 3, select(3, ...))
    local opts = by_name(who, { "name", "dim" }, ...)
    local name = opts.name or "weight"
    local w = module_weight(module, name, who)
    local dim = opts.dim
    if dim == nil then
        dim = 1
    elseif dim ~= false and (not compat.is_integer(dim) or dim == 0 or math.abs(dim) > w:dim()) then
        raise(string.format("tide: weight_norm: dim must be a dim of the %d-D weight (1-based) " ..
            "or false for the whole tensor, got %s", w:dim(), tostring(dim)))
    end
    local g, v = autograd.no_grad(function()
        return norm_except(w, dim):clone(), w:clone()
    end)
    module:_unregister(name)
    module:register_parameter(name .. "_g", g:requires_grad_(true))
    module:register_parameter(name .. "_v", v:requires_grad_(true))
    before_forward(module, name, "weight_norm", function(self)
        local gv, vv = rawget(self, name .. "_g"), rawget(self, name .. "_v")
        rawset(self, name, vv:mul(gv:div(norm_except(vv, dim))))
    end)
    return module
end

-- remove_weight_norm(module[, name = "weight"]): the computed weight as a parameter again
function M.remove_weight_norm(module, ...)
    local name = by_name("remove_weight_norm", { "name" }, ...).name
    return remove("remove_weight_norm", "weight_norm", module, name, { "_g", "_v" })
end

-- v / max(||v||, eps), on v's device
local function normalized(v, eps)
    return v:div(v:norm():clamp(eps, nil))
end

-- spectral_norm(module[, {name = "weight", n_power_iterations = 1, eps = 1e-12, dim =}]):
-- module[name] = W / sigma, sigma = u . (W v) with W the weight as a matrix {size(dim), -1}
-- (dim 1, or 2 for the ConvTranspose layers); in training mode each forward first runs
-- n_power_iterations of v = W^T u / ||.||, u = W v / ||.|| (no gradient), PyTorch's order. u
-- and v start as normalized N(0, 1) draws (tide's generator).
function M.spectral_norm(module, ...)
    local who = "spectral_norm"
    local opts = by_name(who, { "name", "n_power_iterations", "eps", "dim" }, ...)
    local name = opts.name or "weight"
    local w = module_weight(module, name, who)
    local iters = opts.n_power_iterations or 1
    local eps = opts.eps or 1e-12
    if type(eps) ~= "number" or eps <= 0 then
        raise("tide: spectral_norm: eps must be a number > 0, got " .. tostring(eps))
    end
    if not compat.is_integer(iters) or iters < 0 then
        raise("tide: spectral_norm: n_power_iterations must be an integer >= 0, got " ..
            tostring(iters))
    end
    local dim = opts.dim or (module.__name:match("^ConvTranspose") and 2 or 1)
    if not compat.is_integer(dim) or dim < 1 or dim > w:dim() then
        raise(string.format("tide: spectral_norm: dim must be a dim of the %d-D weight " ..
            "(1-based), got %s", w:dim(), tostring(dim)))
    end
    local function as_matrix(t)
        local m = dim == 1 and t or t:transpose(1, dim)
        return m:reshape(m:size(1), -1)
    end
    local h, width = as_matrix(w):size(1), as_matrix(w):size(2)
    local u, v = autograd.no_grad(function()
        local opt = { dtype = w.dtype, device = w.device }
        return normalized(core.randn({ h }, opt), eps), normalized(core.randn({ width }, opt), eps)
    end)
    module:_unregister(name)
    module:register_parameter(name .. "_orig", w)
    module:register_buffer(name .. "_u", u)
    module:register_buffer(name .. "_v", v)
    before_forward(module, name, "spectral_norm", function(self, iterate)
        local W = as_matrix(rawget(self, name .. "_orig"))
        local bu, bv = rawget(self, name .. "_u"), rawget(self, name .. "_v")
        if iterate and self.training and iters > 0 then
            autograd.no_grad(function()
                for _ = 1, iters do
                    bv:copy_(normalized(W:t():mv(bu), eps))
                    bu:copy_(normalized(W:mv(bv), eps))
                end
            end)
        end
        local sigma = bu:clone():dot(W:mv(bv:clone()))
        rawset(self, name, rawget(self, name .. "_orig"):div(sigma))
    end, w:detach()) -- PyTorch's weight.data until the first forward
    return module
end

-- remove_spectral_norm(module[, name = "weight"]): the normalized weight as a parameter again
function M.remove_spectral_norm(module, ...)
    local name = by_name("remove_spectral_norm", { "name" }, ...).name
    return remove("remove_spectral_norm", "spectral_norm", module, name, { "_orig", "_u", "_v" })
end

M.norm_except_dim = norm_except -- nn.utils.parametrizations.weight_norm's too

return M
