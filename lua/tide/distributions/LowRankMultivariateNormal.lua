-- tide.distributions.LowRankMultivariateNormal(loc, cov_factor, cov_diag[, {validate_args =}]):
-- the normal distribution over vectors of loc's last dim n whose covariance is W W^T + diag(D)
-- (W = cov_factor [..., n, m], D = cov_diag [..., n]), PyTorch's formulas through the m x m
-- capacitance C = I + W^T D^-1 W and its Cholesky factor: log det by the matrix determinant
-- lemma, the Mahalanobis distance by Woodbury's identity, so nothing n x n is factored.
-- rsample(shape) is loc + W eps_m + sqrt(D) eps_n (gradients reach all three). Batches of the
-- three broadcast. scale_tril(), covariance_matrix() and precision_matrix() build the n x n
-- matrices. cov_diag must be positive.
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise
local is_tensor = autograd.is_tensor
local compat = require("tide._compat")
local Distribution = require("tide.distributions.Distribution")
local MVN = require("tide.distributions.MultivariateNormal")
local X = require("tide.distributions._extras")

local LowRankMultivariateNormal = Distribution:extend("LowRankMultivariateNormal")
LowRankMultivariateNormal.arg_constraints =
    require("tide.distributions._arg_constraints").LowRankMultivariateNormal
LowRankMultivariateNormal.arg_names = { "loc", "cov_factor", "cov_diag", options = true }
LowRankMultivariateNormal.has_rsample = true

local WHO = "LowRankMultivariateNormal"
local LOG_2PI = math.log(2 * math.pi)

local function linalg()
    return require("tide.linalg")
end

local function mT(x)
    return x:transpose(-2, -1)
end

-- the Cholesky factor of I + W^T D^-1 W
local function capacitance_tril(W, D)
    local m = W:size(-1)
    local Wt_Dinv = mT(W) / D:unsqueeze(-2)
    local K = Wt_Dinv:matmul(W) + core.eye(m, { dtype = W.dtype, device = W.device })
    return linalg().cholesky(K)
end

-- log det(W W^T + D) = log det C + log det D
local function lowrank_logdet(W, D, C)
    return C:diagonal(0, -2, -1):log():sum(-1) * 2 + D:log():sum(-1)
end

-- x^T (W W^T + D)^-1 x = x^T D^-1 x - |C^-1 W^T D^-1 x|^2
local function lowrank_mahalanobis(W, D, x, C)
    local Wt_Dinv = mT(W) / D:unsqueeze(-2)
    local Wt_Dinv_x = Wt_Dinv:matmul(x:unsqueeze(-1)):squeeze(-1)
    return (x:pow(2) / D):sum(-1) - MVN.mahalanobis(C, Wt_Dinv_x)
end

local function shape_of(t)
    return is_tensor(t) and (t.dtype .. " " .. args.shape_str(t:size())) or type(t)
end

function LowRankMultivariateNormal:init(loc, cov_factor, cov_diag, opts, ...)
    local validate = X.trailing(WHO, 3, opts, ...)
    if not is_tensor(loc) or loc:dim() < 1 or not args.FLOAT[loc.dtype] then
        raise(("tide: %s: loc must be a floating-point tensor with at least one dim (the " ..
            "vector's), got %s"):format(WHO, shape_of(loc)))
    end
    local n = loc:size(-1)
    if not is_tensor(cov_factor) or cov_factor:dim() < 2 or cov_factor:size(-2) ~= n then
        raise(("tide: %s: cov_factor must be [..., %d, m] for loc %s, got %s"):format(WHO, n,
            args.shape_str(loc:size()), shape_of(cov_factor)))
    end
    if not is_tensor(cov_diag) or cov_diag:dim() < 1 or cov_diag:size(-1) ~= n then
        raise(("tide: %s: cov_diag must be [..., %d] for loc %s, got %s"):format(WHO, n,
            args.shape_str(loc:size()), shape_of(cov_diag)))
    end
    for _, t in ipairs({ { "cov_factor", cov_factor }, { "cov_diag", cov_diag } }) do
        if t[2].device ~= loc.device then
            raise(("tide: %s: loc is on %s and %s on %s; move it with :to(\"%s\")"):format(WHO,
                tostring(loc.device), t[1], tostring(t[2].device), tostring(loc.device)))
        end
    end
    cov_factor = cov_factor.dtype == loc.dtype and cov_factor or cov_factor:to(loc.dtype)
    cov_diag = cov_diag.dtype == loc.dtype and cov_diag or cov_diag:to(loc.dtype)
    -- the batch: the three's leading dims, broadcast
    local function lead(t, k)
        return { compat.unpack(t:size(), 1, t:dim() - k) }
    end
    local batch = X.broadcast_shapes(lead(loc, 1), lead(cov_factor, 2), lead(cov_diag, 1))
    if not batch then
        raise(("tide: %s: incompatible batch shapes: loc %s, cov_factor %s, cov_diag %s")
            :format(WHO, args.shape_str(loc:size()), args.shape_str(cov_factor:size()),
            args.shape_str(cov_diag:size())))
    end
    if validate then
        Distribution.require(cov_diag:detach():gt(0), WHO, "cov_diag must be positive")
    end
    local vs = X.concat(batch, { n })
    self.loc, self.cov_diag = loc:expand(vs), cov_diag:expand(vs)
    self.cov_factor = cov_factor:expand(X.concat(vs, { cov_factor:size(-1) }))
    self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag = cov_factor, cov_diag
    self._capacitance_tril = capacitance_tril(cov_factor, cov_diag)
    self._validate = validate
    self.batch_shape, self.event_shape = batch, { n }
    self._params = { "loc", "cov_factor", "cov_diag" }
end

function LowRankMultivariateNormal:expand(batch_shape)
    local s = X.expand_shape(self, batch_shape)
    local new = X.copy(self)
    local vs = X.concat(s, self.event_shape)
    new.loc, new.cov_diag = self.loc:expand(vs), self.cov_diag:expand(vs)
    new.cov_factor = self.cov_factor:expand(X.concat(vs, { self.cov_factor:size(-1) }))
    new.batch_shape = s
    return new
end

function LowRankMultivariateNormal:support()
    return X.support("real_vector")
end

function LowRankMultivariateNormal:mean()
    return self.loc
end

function LowRankMultivariateNormal:mode()
    return self.loc
end

function LowRankMultivariateNormal:variance()
    return (self._unbroadcasted_cov_factor:pow(2):sum(-1) + self._unbroadcasted_cov_diag)
        :expand(self.loc:size())
end

function LowRankMultivariateNormal:stddev()
    return self:variance():sqrt()
end

local function matrix_shape(self)
    local n = self.event_shape[1]
    return X.concat(self.batch_shape, { n, n })
end

-- sqrt(D) cholesky(I + D^-1/2 W W^T D^-1/2): PyTorch's, well conditioned
function LowRankMultivariateNormal:scale_tril()
    local n = self.event_shape[1]
    local d_sqrt = self._unbroadcasted_cov_diag:sqrt():unsqueeze(-1)
    local Dinvsqrt_W = self._unbroadcasted_cov_factor / d_sqrt
    local K = Dinvsqrt_W:matmul(mT(Dinvsqrt_W)) + core.eye(n, { dtype = d_sqrt.dtype,
        device = d_sqrt.device })
    return (d_sqrt * linalg().cholesky(K)):expand(matrix_shape(self))
end

function LowRankMultivariateNormal:covariance_matrix()
    local W = self._unbroadcasted_cov_factor
    return (W:matmul(mT(W)) + self._unbroadcasted_cov_diag:diag_embed())
        :expand(matrix_shape(self))
end

-- X and Y broadcast to their common batch (the last two dims kept)
local function broadcast_mats(a, b)
    local bs = X.broadcast_shapes({ compat.unpack(a:size(), 1, a:dim() - 2) },
        { compat.unpack(b:size(), 1, b:dim() - 2) })
    return a:expand(X.concat(bs, { a:size(-2), a:size(-1) })),
        b:expand(X.concat(bs, { b:size(-2), b:size(-1) }))
end

-- A = C_q^-1 W_q^T D_q^-1, so that Sigma_q^-1 = D_q^-1 - A^T A
local function woodbury_A(q)
    local qWt_qDinv = mT(q._unbroadcasted_cov_factor) / q._unbroadcasted_cov_diag:unsqueeze(-2)
    local C, R = broadcast_mats(q._capacitance_tril, qWt_qDinv)
    return linalg().solve_triangular(C, R, { upper = false })
end

-- Woodbury's: D^-1 - A^T A
function LowRankMultivariateNormal:precision_matrix()
    local A = woodbury_A(self)
    return (self._unbroadcasted_cov_diag:reciprocal():diag_embed() - mT(A):matmul(A))
        :expand(matrix_shape(self))
end

function LowRankMultivariateNormal:rsample(shape)
    local s = self:extended_shape(shape, WHO .. ".rsample")
    local opts = { dtype = self.loc.dtype, device = self.loc.device }
    local ws = { compat.unpack(s, 1, #s - 1) }
    ws[#ws + 1] = self.cov_factor:size(-1)
    local eps_W = core.randn(ws, opts)
    local eps_D = core.randn(s, opts)
    return self.loc + self._unbroadcasted_cov_factor:matmul(eps_W:unsqueeze(-1)):squeeze(-1) +
        self._unbroadcasted_cov_diag:sqrt() * eps_D
end

function LowRankMultivariateNormal:log_prob(value)
    local who = WHO .. ".log_prob"
    value = self:value_tensor(value, who, self.loc)
    local n = self.event_shape[1]
    if value:dim() < 1 or value:size(-1) ~= n then
        raise(("tide: %s: the values must be vectors of %d, got %s"):format(who, n,
            args.shape_str(value:size())))
    end
    local W, D, C = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
        self._capacitance_tril
    local M = lowrank_mahalanobis(W, D, value - self.loc, C)
    local log_det = lowrank_logdet(W, D, C)
    return -(M + log_det + n * LOG_2PI) * 0.5
end

function LowRankMultivariateNormal:entropy()
    local n = self.event_shape[1]
    local log_det = lowrank_logdet(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
        self._capacitance_tril)
    local h = (log_det + n * (1 + LOG_2PI)) * 0.5
    if #self.batch_shape == 0 then
        return h
    end
    return h:expand(self.batch_shape)
end

-- ---- kl_divergence with itself and MultivariateNormal (PyTorch's, tide.distributions.kl) ----

local function trace_XXT(x) -- sum of the squares over the last two dims
    return x:pow(2):sum(-1):sum(-1)
end

local function same_events(p, q)
    if p.event_shape[1] ~= q.event_shape[1] then
        raise(("tide: kl_divergence: %s of %d and %s of %d dims; give both one size")
            :format(p.__name, p.event_shape[1], q.__name, q.event_shape[1]))
    end
end

local KL = {}

function KL.lowrank_lowrank(p, q)
    same_events(p, q)
    local term1 = lowrank_logdet(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag,
        q._capacitance_tril) - lowrank_logdet(p._unbroadcasted_cov_factor,
        p._unbroadcasted_cov_diag, p._capacitance_tril)
    local term3 = lowrank_mahalanobis(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag,
        q.loc - p.loc, q._capacitance_tril)
    local A = woodbury_A(q)
    local pW, pD, qD = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag,
        q._unbroadcasted_cov_diag
    local term21 = (pD / qD):sum(-1)
    local term22 = trace_XXT(pW * qD:rsqrt():unsqueeze(-1))
    local term23 = trace_XXT(A * pD:sqrt():unsqueeze(-2))
    local term24 = trace_XXT(A:matmul(pW))
    local term2 = term21 + term22 - term23 - term24
    return (term1 + term2 + term3 - p.event_shape[1]) * 0.5
end

function KL.mvn_lowrank(p, q)
    same_events(p, q)
    local Lp = p._unbroadcasted_scale_tril
    local term1 = lowrank_logdet(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag,
        q._capacitance_tril) - Lp:diagonal(0, -2, -1):log():sum(-1) * 2
    local term3 = lowrank_mahalanobis(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag,
        q.loc - p.loc, q._capacitance_tril)
    local A = woodbury_A(q)
    local term21 = trace_XXT(Lp * q._unbroadcasted_cov_diag:rsqrt():unsqueeze(-1))
    local term22 = trace_XXT(A:matmul(Lp))
    return (term1 + term21 - term22 + term3 - p.event_shape[1]) * 0.5
end

function KL.lowrank_mvn(p, q)
    same_events(p, q)
    local n = p.event_shape[1]
    local Lq = q._unbroadcasted_scale_tril
    local term1 = Lq:diagonal(0, -2, -1):log():sum(-1) * 2 -
        lowrank_logdet(p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag,
        p._capacitance_tril)
    local term3 = MVN.mahalanobis(Lq, q.loc - p.loc)
    local solve = function(B)
        local L, R = broadcast_mats(Lq, B)
        return linalg().solve_triangular(L, R, { upper = false })
    end
    local term21 = trace_XXT(solve(p._unbroadcasted_cov_factor))
    local term22 = trace_XXT(solve(p._unbroadcasted_cov_diag:sqrt():diag_embed()))
    return (term1 + term21 + term22 + term3 - n) * 0.5
end

LowRankMultivariateNormal._kl = KL
return LowRankMultivariateNormal
