-- tide.nn.utils.parametrizations: weight_norm, spectral_norm and orthogonal as parametrizations
-- (tide.nn.parametrize), as torch.nn.utils.parametrizations in PyTorch 1.13: the weight is
-- computed from parametrizations.weight.original on each read, the parametrization's state
-- (spectral_norm's _u and _v, orthogonal's base) is a buffer of its module, "...weight.1._u".
local compat = require("tide._compat")
local core = require("tide.core")
local autograd = require("tide.autograd")
local Module = require("tide.nn.Module")
local parametrize = require("tide.nn.parametrize")
local linalg = require("tide.linalg")

-- PyTorch's parameters after the module, by position in its order (names) and/or by name in a
-- trailing table (tide.pytorch_args.merge), plus keyword-only ones (by name only); any other
-- name raises
local function by_name(who, names, kw_only, ...)
    local opts = require("tide.pytorch_args").merge(who, names, ...) or {}
    local known = {}
    for _, list in ipairs({ names, kw_only or {} }) do
        for _, k in ipairs(list) do
            known[#known + 1] = k
        end
    end
    core._check_options(opts, who, known)
    return opts
end
local raise = autograd.raise
local is_tensor = autograd.is_tensor

local M = {}

local function weight_of(module, name, who)
    if not Module.is_module(module) then
        raise("tide: " .. who .. ": expected a Module, got " ..
            (is_tensor(module) and "a tensor" or type(module)))
    end
    local ok, w = pcall(function()
        return module[name]
    end)
    if not ok or not is_tensor(w) then
        raise(string.format("tide: %s: %s has no parameter or buffer named '%s'", who,
            module.__name, tostring(name)))
    end
    return w
end

-- ---- spectral_norm ----

local SpectralNorm = Module:extend("_SpectralNorm")

-- v / max(||v||, eps)
local function normalized(v, eps)
    return v:div(v:norm():clamp(eps, nil))
end

function SpectralNorm:init(weight, iters, dim, eps)
    rawset(self, "dim", dim)
    rawset(self, "eps", eps)
    rawset(self, "n_power_iterations", iters)
    if weight:dim() > 1 then
        local W = self:as_matrix(weight)
        autograd.no_grad(function()
            local opt = { dtype = W.dtype, device = W.device }
            self:register_buffer("_u", normalized(core.randn({ W:size(1) }, opt), eps))
            self:register_buffer("_v", normalized(core.randn({ W:size(2) }, opt), eps))
        end)
        self:power_method(W, 15)
    end
end

-- the weight as a matrix {size(dim), -1}
function SpectralNorm:as_matrix(w)
    local m = self.dim == 1 and w or w:transpose(1, self.dim)
    return m:reshape(m:size(1), -1)
end

-- n iterations of u = W v / ||.||, v = W^T u / ||.|| (PyTorch's order), no gradient
function SpectralNorm:power_method(W, n)
    autograd.no_grad(function()
        local W_ = W:detach()
        for _ = 1, n do
            self._u:copy_(normalized(W_:mv(self._v), self.eps))
            self._v:copy_(normalized(W_:t():mv(self._u), self.eps))
        end
    end)
end

function SpectralNorm:forward(weight)
    if weight:dim() == 1 then
        return normalized(weight, self.eps)
    end
    local W = self:as_matrix(weight)
    if self.training then
        self:power_method(W, self.n_power_iterations)
    end
    local sigma = self._u:clone():dot(W:mv(self._v:clone()))
    return weight:div(sigma)
end

function SpectralNorm:right_inverse(value)
    return value
end

-- spectral_norm(module[, {name = "weight", n_power_iterations = 1, eps = 1e-12, dim =}]):
-- module[name] = W / sigma, sigma = u . (W v) with W the weight as a matrix {size(dim), -1}
-- (dim 1, or 2 for the ConvTranspose layers); u and v start after 15 power iterations from
-- normalized N(0, 1) draws, and each read in training mode runs n_power_iterations more
function M.spectral_norm(module, ...)
    local who = "parametrizations.spectral_norm"
    local opts = by_name(who, { "name", "n_power_iterations", "eps", "dim" }, nil, ...)
    local name = opts.name or "weight"
    local w = weight_of(module, name, who)
    local iters = opts.n_power_iterations or 1
    local eps = opts.eps or 1e-12
    if type(eps) ~= "number" or not (eps > 0) then
        raise("tide: " .. who .. ": eps must be a number > 0, got " .. tostring(eps))
    end
    if not compat.is_integer(iters) or iters < 1 then
        raise("tide: " .. who .. ": n_power_iterations must be an integer >= 1, got " ..
            tostring(iters))
    end
    local dim = opts.dim or (module.__name:match("ConvTranspose") and 2 or 1)
    if not compat.is_integer(dim) or dim < 1 or dim > math.max(w:dim(), 1) then
        raise(string.format("tide: %s: dim must be a dim of the %d-D weight (1-based), got %s",
            who, w:dim(), tostring(dim)))
    end
    return parametrize.register_parametrization(module, name,
        SpectralNorm(w, iters, dim, eps))
end

-- ---- weight_norm ----

-- ||w|| over every dim but `dim`, kept as size 1 (PyTorch's norm_except_dim): nn.utils'
-- weight_norm's
local norm_except = require("tide.nn.utils_reparam").norm_except_dim

local WeightNorm = Module:extend("_WeightNorm")

function WeightNorm:init(dim)
    self.dim = dim
end

-- forward(weight_g, weight_v) = v g / ||v|| (PyTorch's torch._weight_norm)
function WeightNorm:forward(weight_g, weight_v)
    return weight_v:mul(weight_g:div(norm_except(weight_v, self.dim)))
end

-- right_inverse(weight) = {g, v}: original0 = ||weight||, original1 = weight
function WeightNorm:right_inverse(weight)
    return { norm_except(weight, self.dim), weight }
end

-- weight_norm(module[, {name = "weight", dim = 1}]): PyTorch 2.1's
-- torch.nn.utils.parametrizations.weight_norm: module[name] = g v / ||v|| computed on each
-- read from parametrizations[name].original0 (g, PyTorch 1.13's weight_g) and original1 (v,
-- weight_v); the norm is over every dim but dim (1-based; false, Python's None: the whole tensor)
function M.weight_norm(module, ...)
    local who = "parametrizations.weight_norm"
    local opts = by_name(who, { "name", "dim" }, nil, ...)
    local name = opts.name or "weight"
    local w = weight_of(module, name, who)
    local dim = opts.dim
    if dim == nil then
        dim = 1
    elseif dim ~= false and (not compat.is_integer(dim) or dim == 0 or math.abs(dim) > w:dim()) then
        raise(string.format("tide: %s: dim must be a dim of the %d-D weight (1-based) or " ..
            "false for the whole tensor (Python's dim=None), got %s", who, w:dim(), tostring(dim)))
    end
    return parametrize.register_parametrization(module, name, WeightNorm(dim), { unsafe = true })
end

-- ---- orthogonal ----

local Orthogonal = Module:extend("_Orthogonal")
local MAPS = { matrix_exp = true, cayley = true, householder = true }

function Orthogonal:init(weight, map, trivialization)
    rawset(self, "shape", weight.shape)
    rawset(self, "orthogonal_map", map)
    rawset(self, "use_trivialization", trivialization)
    if not trivialization then
        -- no inverse (PyTorch's NotImplementedError): registration keeps the weight as the
        -- original, and an assignment raises
        rawset(self, "right_inverse", false)
    end
end

local function mT(x)
    return x:transpose(-2, -1)
end

-- Q of A = QR with diag(R) >= 0 (PyTorch's _make_orthogonal), A tall
local function make_orthogonal(A)
    local Q, R = linalg.qr(A)
    local s = R:diagonal(0, -2, -1):sign()
    s = s:add(s:eq(0):to(s.dtype)) -- a zero pivot keeps its column
    return Q:mul(s:unsqueeze(-2))
end

function Orthogonal:forward(X)
    local n, k = X:size(-2), X:size(-1)
    local transposed = n < k
    if transposed then
        X = mT(X)
        n, k = k, n
    end
    local Q
    if self.orthogonal_map ~= "householder" then
        X = X:tril()
        if n ~= k then
            local pad = X.shape
            pad = compat.move(pad, 1, #pad, 1, {})
            pad[#pad] = n - k
            X = core.cat({ X, core.zeros(pad, { dtype = X.dtype, device = X.device }) }, -1)
        end
        local A = X:sub(mT(X))
        if self.orthogonal_map == "matrix_exp" then
            Q = linalg.matrix_exp(A)
        else
            local I = core.eye(n, { dtype = A.dtype, device = A.device })
            Q = linalg.solve(I:sub(A:mul(0.5)), I:add(A:mul(0.5)))
        end
        if n ~= k then
            Q = Q:narrow(-1, 1, k)
        end
    else
        local A = X:tril(-1)
        local tau = A:mul(A):sum(-2):add(1):reciprocal():mul(2)
        Q = linalg.householder_product(A, tau)
        Q = Q:mul(X:diagonal(0, -2, -1):to("int32"):to(Q.dtype):unsqueeze(-2))
    end
    local base = rawget(self, "base")
    if base then
        Q = base:matmul(Q)
    end
    if transposed then
        Q = mT(Q)
    end
    return Q
end

local function is_orthogonal(Q)
    local n, k = Q:size(-2), Q:size(-1)
    local eps = (Q.dtype == "float64") and 2.220446049250313e-16 or 1.1920928955078125e-07
    local I = core.eye(k, { dtype = Q.dtype, device = Q.device })
    return mT(Q):matmul(Q):sub(I):abs():max():item() <= 10 * n * eps
end

function Orthogonal:right_inverse(Q)
    local who = "parametrizations.orthogonal"
    local same = #Q.shape == #self.shape
    for i = 1, #self.shape do
        same = same and Q.shape[i] == self.shape[i]
    end
    if not same then
        raise(string.format("tide: %s: expected a matrix or batch of matrices of shape {%s}, " ..
            "got {%s}", who, table.concat(self.shape, ", "), table.concat(Q.shape, ", ")))
    end
    local Q_init = Q
    return autograd.no_grad(function()
        local n, k = Q:size(-2), Q:size(-1)
        if n < k then
            Q = mT(Q)
            n, k = k, n
        end
        if n == k then
            Q = is_orthogonal(Q) and Q:clone() or make_orthogonal(Q)
        else
            local shape = compat.move(Q.shape, 1, #Q.shape, 1, {})
            shape[#shape] = n - k
            local N = core.randn(shape, { dtype = Q.dtype, device = Q.device })
            Q = make_orthogonal(core.cat({ Q, N }, -1))
        end
        if rawget(self, "base") then
            self.base:set_(Q)
        else
            self:register_buffer("base", Q)
        end
        local neg_I = core.zeros(Q_init.shape, { dtype = Q_init.dtype, device = Q_init.device })
        neg_I:diagonal(0, -2, -1):fill_(-1)
        return neg_I
    end)
end

-- orthogonal(module[, {name = "weight", orthogonal_map =, use_trivialization = true}]):
-- module[name] ([..., m, n]) orthogonal: orthonormal columns when m >= n, rows otherwise;
-- orthogonal_map "matrix_exp" (the default for square matrices) or "cayley" of a
-- skew-symmetric matrix, or "householder" (the default otherwise), times the stored base
-- (the weight made orthogonal by QR at registration) with the trivialization
function M.orthogonal(module, ...)
    local who = "parametrizations.orthogonal"
    -- use_trivialization is keyword-only in PyTorch: by name only
    local opts = by_name(who, { "name", "orthogonal_map" }, { "use_trivialization" }, ...)
    local name = opts.name or "weight"
    local w = weight_of(module, name, who)
    if w:dim() < 2 then
        raise(string.format("tide: %s: expected a matrix or batch of matrices, got a %d-D " ..
            "tensor", who, w:dim()))
    end
    local map = opts.orthogonal_map
    if map == nil then
        map = w:size(-2) == w:size(-1) and "matrix_exp" or "householder"
    end
    if not MAPS[map] then
        raise(string.format("tide: %s: orthogonal_map must be \"matrix_exp\", \"cayley\" or " ..
            "\"householder\", got %s", who, tostring(map)))
    end
    if map == "householder" and not linalg.householder_product then
        raise("tide: " .. who .. ": the householder map needs linalg.householder_product")
    end
    local triv = opts.use_trivialization
    if triv == nil then
        triv = true
    end
    if not triv and map == "householder" then
        raise("tide: " .. who .. ": the householder map without the trivialization starts " ..
            "from the weight's QR reflectors (PyTorch's geqrf), not in tide yet; keep " ..
            "use_trivialization = true")
    end
    return parametrize.register_parametrization(module, name, Orthogonal(w, map, triv),
        { unsafe = true })
end

return M
