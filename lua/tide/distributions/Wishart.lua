-- tide.distributions.Wishart(df, {covariance_matrix =} or {precision_matrix =} or
-- {scale_tril =}[, validate_args =]): the Wishart distribution over p x p positive-definite
-- matrices (event shape {p, p}), PyTorch's formulas through the lower Cholesky factor L of the
-- scale (as given, or of the covariance, or of the precision's inverse): log_prob, entropy,
-- mean df V, mode (df - p - 1) V (NaN where that factor is <= 0), variance df (V_ij^2 +
-- V_ii V_jj). rsample(shape) is Bartlett's decomposition: L A A^T L^T with A lower-triangular,
-- A_ii = sqrt of a chi-squared draw of df - i + 1 degrees (i from 1), A_ij standard normal
-- below; differentiable to df (Chi2's implicit reparametrization) and to the matrix; a draw
-- that is not positive-definite (df near p - 1) is drawn again, up to {max_try_correction =
-- 10} times (PyTorch 1.13 redraws every draw that is: its test is inverted). An ExponentialFamily:
-- kl_divergence between two Wisharts is its Bregman divergence. df is a number or a tensor
-- > p - 1, broadcast with the matrix's batch; values must be positive-definite.
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise
local is_tensor = autograd.is_tensor
local compat = require("tide._compat")
local ExponentialFamily = require("tide.distributions.ExponentialFamily")
local gamma_rsample = require("tide.distributions.gamma_rsample")
local X = require("tide.distributions._extras")

local Wishart = ExponentialFamily:extend("Wishart")
Wishart.arg_constraints = require("tide.distributions._arg_constraints").Wishart
Wishart.arg_names = { "df", options = true } -- (PyTorch's, by name too)
Wishart.positional_params = { after = 1,
    names = { "covariance_matrix", "precision_matrix", "scale_tril" } } -- (PyTorch's order)
Wishart.has_rsample = true

local WHO = "Wishart"
local LOG_2 = math.log(2)
local NAN = 0 / 0
local MATRICES = { "covariance_matrix", "precision_matrix", "scale_tril" }

local function linalg()
    return require("tide.linalg")
end

local function mT(x)
    return x:transpose(-2, -1)
end

function Wishart:init(df, opts, ...)
    args.no_extra(WHO, 2, ...)
    if type(opts) ~= "table" or is_tensor(opts) then
        raise(("tide: %s: expected {covariance_matrix =}, {precision_matrix =} or " ..
            "{scale_tril =} after df, got %s"):format(WHO, is_tensor(opts) and "a tensor" or
            type(opts)))
    end
    local o = args.options(WHO, opts, { "covariance_matrix", "precision_matrix", "scale_tril",
        "validate_args" }, "{covariance_matrix = C}")
    local validate = X.validate_flag(WHO, o)
    local given, which = 0, nil
    for _, k in ipairs(MATRICES) do
        if o[k] ~= nil then
            given, which = given + 1, k
        end
    end
    if given ~= 1 then
        raise(("tide: %s: give exactly one of covariance_matrix, precision_matrix and " ..
            "scale_tril"):format(WHO))
    end
    local m = o[which]
    if not is_tensor(m) or m:dim() < 2 or m:size(-1) ~= m:size(-2) or
        not args.FLOAT[m.dtype] then
        raise(("tide: %s: %s must be a floating-point tensor of square matrices [..., p, p], " ..
            "got %s"):format(WHO, which, is_tensor(m) and m.dtype .. " " ..
            args.shape_str(m:size()) or type(m)))
    end
    local p = m:size(-1)
    local mb = { compat.unpack(m:size(), 1, m:dim() - 2) }
    local opts_m = { dtype = m.dtype, device = m.device }
    if type(df) == "number" then
        df = core.full({}, df, opts_m)
    elseif not is_tensor(df) then
        raise(("tide: %s: df must be a tensor or a number, got %s"):format(WHO, type(df)))
    elseif df.device ~= m.device then
        raise(("tide: %s: %s is on %s and df on %s; move df with :to(\"%s\")"):format(WHO, which,
            tostring(m.device), tostring(df.device), tostring(m.device)))
    else
        df = df.dtype == m.dtype and df or df:to(m.dtype)
    end
    local batch = X.broadcast_shapes(mb, df:size())
    if not batch then
        raise(("tide: %s: df %s does not broadcast with the batch of %s %s"):format(WHO,
            args.shape_str(df:size()), which, args.shape_str(m:size())))
    end
    df = df:expand(batch)
    -- (PyTorch's check, made whatever validate_args: below it the density is not defined)
    if df:numel() > 0 and df:detach():le(p - 1):any():item() then
        raise(("tide: %s: df must be > p - 1 = %d for %d x %d matrices, got %g"):format(WHO,
            p - 1, p, p, df:detach():min():item()))
    end
    local L
    if which == "scale_tril" then
        if validate then
            X.require_in("lower_cholesky", m, WHO, "scale_tril must be lower-triangular with " ..
                "a positive diagonal")
        end
        L = m
    elseif which == "covariance_matrix" then
        if validate then
            X.require_in("positive_definite", m, WHO, "covariance_matrix must be symmetric " ..
                "positive-definite")
        end
        local okc, r = pcall(linalg().cholesky, m)
        if not okc then
            raise(("tide: %s: covariance_matrix must be symmetric positive-definite (its " ..
                "Cholesky factorization failed)"):format(WHO))
        end
        L = r
    else
        if validate then
            X.require_in("positive_definite", m, WHO, "precision_matrix must be symmetric " ..
                "positive-definite")
        end
        local okc, r = pcall(function() return linalg().cholesky(linalg().inv(m)) end)
        if not okc then
            raise(("tide: %s: precision_matrix must be symmetric positive-definite (its " ..
                "inverse's Cholesky factorization failed)"):format(WHO))
        end
        L = r
    end
    self.df = df
    self._unbroadcasted_scale_tril = L
    self._validate = validate
    self.batch_shape, self.event_shape = batch, { p, p }
    -- PyTorch's instance arg_constraints: df > p - 1 (1.13 writes it into its class table)
    local ac = {}
    for k, c in pairs(Wishart.arg_constraints) do
        ac[k] = c
    end
    ac.df = require("tide.distributions.constraints").greater_than(p - 1)
    self.arg_constraints = ac
    self._params = { "df" }
end

function Wishart:expand(batch_shape)
    local s = X.expand_shape(self, batch_shape)
    local new = X.copy(self)
    new.df, new.batch_shape = self.df:expand(s), s
    return new
end

function Wishart:support()
    return X.support("positive_definite")
end

local function matrix_shape(self)
    return X.concat(self.batch_shape, self.event_shape)
end

function Wishart:scale_tril()
    return self._unbroadcasted_scale_tril:expand(matrix_shape(self))
end

function Wishart:covariance_matrix()
    local L = self._unbroadcasted_scale_tril
    return L:matmul(mT(L)):expand(matrix_shape(self))
end

function Wishart:precision_matrix()
    local L = self._unbroadcasted_scale_tril
    local I = core.eye(self.event_shape[1], { dtype = L.dtype, device = L.device })
    return I:cholesky_solve(L):expand(matrix_shape(self))
end

-- df as [..., 1, 1], against the matrices
local function df_mat(self)
    return self.df:reshape(X.concat(self.batch_shape, { 1, 1 }))
end

function Wishart:mean()
    return df_mat(self) * self:covariance_matrix()
end

function Wishart:mode()
    local factor = self.df - self.event_shape[1] - 1
    factor = core.where(factor:detach():le(0), NAN, factor)
    return factor:reshape(X.concat(self.batch_shape, { 1, 1 })) * self:covariance_matrix()
end

function Wishart:variance()
    local V = self:covariance_matrix()
    local d = V:diagonal(0, -2, -1)
    return df_mat(self) * (V:pow(2) + d:unsqueeze(-1) * d:unsqueeze(-2))
end

function Wishart:stddev()
    return self:variance():sqrt()
end

-- L A A^T L^T from the chi-squared draws c [..., p] (df - i + 1 degrees each) and normals z
-- [..., p, p] (their strictly lower triangle read)
local function bartlett(L, c, z)
    local eps = X.EPS[c.dtype]
    local noise = c:sqrt():clamp(eps, nil):diag_embed() + z:tril(-1)
    local chol = L:matmul(noise)
    return chol:matmul(mT(chol))
end

function Wishart:_bartlett_sampling(shape)
    local p = self.event_shape[1]
    local s = self:extended_shape(shape, WHO .. ".rsample")
    local c_shape = { compat.unpack(s, 1, #s - 1) } -- sample .. batch .. {p}
    local opts = { dtype = self.df.dtype, device = self.df.device }
    local dfs = self.df:unsqueeze(-1) - core.arange(0, p, opts)
    local c = gamma_rsample.sample((dfs * 0.5):expand(c_shape):contiguous()) * 2
    local z = core.randn(s, opts)
    return bartlett(self._unbroadcasted_scale_tril, c, z)
end

function Wishart:rsample(shape, opts, ...)
    local who = WHO .. ".rsample"
    args.no_extra(who, 2, ...)
    local o = args.options(who, opts, { "max_try_correction" }, "{max_try_correction = 10}")
    local max_try_correction = args.int_option(who, o, "max_try_correction", 10, 0)
    local draw = self:_bartlett_sampling(shape)
    local pd = X.support("positive_definite")
    for _ = 1, max_try_correction do
        local bad = autograd.no_grad(function()
            return pd:check(draw:detach()):logical_not()
        end)
        if bad:numel() == 0 or not bad:any():item() then
            break
        end
        local again = self:_bartlett_sampling(shape)
        draw = core.where(bad:unsqueeze(-1):unsqueeze(-1), again, draw)
    end
    return draw
end

-- the multivariate digamma: sum over j < p of digamma(x - j / 2)
local function mvdigamma(x, p)
    local j = core.arange(0, p, { dtype = x.dtype, device = x.device }) * 0.5
    return (x:unsqueeze(-1) - j):digamma():sum(-1)
end

local function half_log_det(L)
    return L:diagonal(0, -2, -1):log():sum(-1)
end

function Wishart:log_prob(value)
    local who = WHO .. ".log_prob"
    value = self:value_tensor(value, who, self.df)
    local p = self.event_shape[1]
    if value:dim() < 2 or value:size(-1) ~= p or value:size(-2) ~= p then
        raise(("tide: %s: the values must be %d x %d matrices (the last two dims), got %s")
            :format(who, p, p, args.shape_str(value:size())))
    end
    if self._validate then
        X.require_in("positive_definite", value, who, "the values must be symmetric " ..
            "positive-definite")
    end
    local nu, L = self.df, self._unbroadcasted_scale_tril
    local _, logabsdet = linalg().slogdet(value)
    local trace = value:cholesky_solve(L):diagonal(0, -2, -1):sum(-1)
    return -nu * (p * LOG_2 / 2 + half_log_det(L)) - (nu / 2):mvlgamma(p) +
        (nu - p - 1) / 2 * logabsdet - trace / 2
end

function Wishart:entropy()
    local nu, p = self.df, self.event_shape[1]
    local L = self._unbroadcasted_scale_tril
    return (half_log_det(L) + p * LOG_2 / 2) * (p + 1) + (nu / 2):mvlgamma(p) -
        (nu - p - 1) / 2 * mvdigamma(nu / 2, p) + nu * p / 2
end

-- the exponential family's parts (ExponentialFamily's KL; PyTorch's)
Wishart._mean_carrier_measure = 0

function Wishart:_natural_params()
    local p = self.event_shape[1]
    return { self:precision_matrix() * -0.5, (self.df - p - 1) * 0.5 }
end

function Wishart:_log_normalizer(x, y)
    local p = self.event_shape[1]
    local _, logabsdet = linalg().slogdet(x * -2)
    return (y + (p + 1) / 2) * (-logabsdet + LOG_2 * p) + (y + (p + 1) / 2):mvlgamma(p)
end

Wishart._bartlett, Wishart._mvdigamma = bartlett, mvdigamma
return Wishart
