-- tide.distributions.MultivariateNormal(loc, {covariance_matrix =} or {precision_matrix =} or
-- {scale_tril =}): the normal distribution over vectors of loc's last dim n, PyTorch's
-- formulas through the lower Cholesky factor L of the covariance (scale_tril as given, or
-- tide.linalg.cholesky of the covariance, or of the precision's inverse): rsample is loc + L
-- eps, log_prob -(n log 2 pi + |L^-1 (x - loc)|^2) / 2 - sum log diag L, entropy n (1 + log
-- 2 pi) / 2 + sum log diag L. Batches of loc and of the matrix broadcast. Gradients reach loc
-- and the matrix through cholesky and the triangular solves.
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise
local is_tensor = autograd.is_tensor
local compat = require("tide._compat")
local Distribution = require("tide.distributions.Distribution")

local MultivariateNormal = Distribution:extend("MultivariateNormal")
MultivariateNormal.arg_constraints =
    require("tide.distributions._arg_constraints").MultivariateNormal
MultivariateNormal.has_rsample = true -- (PyTorch's class field)
MultivariateNormal.arg_names = { "loc", options = true } -- (PyTorch's, by name too)
MultivariateNormal.positional_params = { after = 1,
    names = { "covariance_matrix", "precision_matrix", "scale_tril" } } -- (PyTorch's order)

local LOG_2PI = math.log(2 * math.pi)
local WHO = "MultivariateNormal"

local function linalg()
    return require("tide.linalg")
end

function MultivariateNormal:init(loc, opts, ...)
    args.no_extra(WHO, 3, ...)
    if not is_tensor(loc) or loc:dim() < 1 or not args.FLOAT[loc.dtype] then
        raise("tide: MultivariateNormal: loc must be a floating-point tensor with at least one " ..
            "dim (the vector's), got " .. (is_tensor(loc) and loc.dtype .. " " ..
            args.shape_str(loc:size()) or type(loc)))
    end
    if type(opts) ~= "table" or is_tensor(opts) then
        raise("tide: MultivariateNormal: expected {covariance_matrix =}, {precision_matrix =} " ..
            "or {scale_tril =} after loc, got " .. (is_tensor(opts) and "a tensor" or type(opts)))
    end
    local o = args.options(WHO, opts, { "covariance_matrix", "precision_matrix", "scale_tril",
        "validate_args" }, "{covariance_matrix = C}")
    local given, m = 0, nil
    for _, k in ipairs({ "covariance_matrix", "precision_matrix", "scale_tril" }) do
        if o[k] ~= nil then
            given, m = given + 1, o[k]
        end
    end
    if given ~= 1 then
        raise("tide: MultivariateNormal: give exactly one of covariance_matrix, " ..
            "precision_matrix and scale_tril")
    end
    local n = loc:size(-1)
    if not is_tensor(m) or m:dim() < 2 or m:size(-1) ~= n or m:size(-2) ~= n then
        raise(("tide: MultivariateNormal: the matrix must be [..., %d, %d] for loc %s, got %s")
            :format(n, n, args.shape_str(loc:size()), is_tensor(m) and args.shape_str(m:size())
            or type(m)))
    end
    if m.device ~= loc.device then
        raise(("tide: MultivariateNormal: loc is on %s and the matrix on %s; move one with " ..
            ":to(\"%s\")"):format(tostring(loc.device), tostring(m.device), tostring(loc.device)))
    end
    m = m.dtype == loc.dtype and m or m:to(loc.dtype)
    local L
    if o.scale_tril then
        L = m
        Distribution.require(L:detach():diagonal(0, -2, -1):gt(0), WHO,
            "scale_tril must have a positive diagonal")
    elseif o.covariance_matrix then
        local ok, r = pcall(linalg().cholesky, m)
        if not ok then
            raise("tide: MultivariateNormal: covariance_matrix must be symmetric positive-" ..
                "definite (its Cholesky factorization failed)")
        end
        L = r
    else
        local ok, r = pcall(function() return linalg().cholesky(linalg().inv(m)) end)
        if not ok then
            raise("tide: MultivariateNormal: precision_matrix must be symmetric positive-" ..
                "definite (its inverse's Cholesky factorization failed)")
        end
        L = r
    end
    -- the batch: loc's leading dims and the matrix's, broadcast
    local lb = { compat.unpack(loc:size(), 1, loc:dim() - 1) }
    local mb = { compat.unpack(L:size(), 1, L:dim() - 2) }
    local probe = core.zeros(lb, { dtype = "float32" }) + core.zeros(mb, { dtype = "float32" })
    local batch = probe:size()
    local loc_shape = { compat.unpack(batch) }
    loc_shape[#loc_shape + 1] = n
    self.loc = loc:expand(loc_shape)
    self._unbroadcasted_scale_tril = L
    self.batch_shape, self.event_shape = batch, { n }
    self._params = { "loc" }
end

function MultivariateNormal:scale_tril()
    local s = { compat.unpack(self.batch_shape) }
    local n = self.event_shape[1]
    s[#s + 1], s[#s + 2] = n, n
    return self._unbroadcasted_scale_tril:expand(s)
end

function MultivariateNormal:covariance_matrix()
    local L = self:scale_tril()
    return L:matmul(L:transpose(-2, -1))
end

function MultivariateNormal:precision_matrix()
    return linalg().inv(self:covariance_matrix())
end

function MultivariateNormal:mean()
    return self.loc
end

function MultivariateNormal:variance()
    return self._unbroadcasted_scale_tril:pow(2):sum(-1):expand(self.loc:size())
end

function MultivariateNormal:stddev()
    return self:variance():sqrt()
end

function MultivariateNormal:rsample(shape)
    local s = self:extended_shape(shape, "MultivariateNormal.rsample")
    local eps = core.randn(s, { dtype = self.loc.dtype, device = self.loc.device })
    return self.loc + self._unbroadcasted_scale_tril:matmul(eps:unsqueeze(-1)):squeeze(-1)
end

-- |L^-1 x|^2 over the last dim, L broadcast against x's batch
local function mahalanobis(L, x)
    local n = L:size(-1)
    local xb = x:unsqueeze(-1)
    local bs = (xb:detach():sum(-1, true):sum(-2, true) + L:detach():sum(-1, true):sum(-2, true))
        :size()
    local Ls, xs = { compat.unpack(bs) }, { compat.unpack(bs) }
    Ls[#Ls - 1], Ls[#Ls] = n, n
    xs[#xs - 1], xs[#xs] = n, 1
    local z = linalg().solve_triangular(L:expand(Ls), xb:expand(xs), { upper = false })
    return z:squeeze(-1):pow(2):sum(-1)
end

local function half_log_det(L)
    return L:diagonal(0, -2, -1):log():sum(-1)
end

function MultivariateNormal:log_prob(value)
    value = self:value_tensor(value, "MultivariateNormal.log_prob", self.loc)
    local n = self.event_shape[1]
    if value:dim() < 1 or value:size(-1) ~= n then
        raise(("tide: MultivariateNormal.log_prob: the values must be vectors of %d, got %s")
            :format(n, args.shape_str(value:size())))
    end
    local M = mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
    return -(M + n * LOG_2PI) * 0.5 - half_log_det(self._unbroadcasted_scale_tril)
end

function MultivariateNormal:entropy()
    local n = self.event_shape[1]
    local h = half_log_det(self._unbroadcasted_scale_tril) + 0.5 * n * (1 + LOG_2PI)
    if #self.batch_shape == 0 then
        return h
    end
    return h:expand(self.batch_shape)
end

MultivariateNormal.mahalanobis, MultivariateNormal.half_log_det = mahalanobis, half_log_det
-- PyTorch 1.13's mode: loc
function MultivariateNormal:mode()
    return self.loc
end

return MultivariateNormal
