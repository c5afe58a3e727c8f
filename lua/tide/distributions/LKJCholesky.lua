-- tide.distributions.LKJCholesky(dim, concentration = 1[, {validate_args =}]): the LKJ
-- distribution over lower Cholesky factors L of dim x dim correlation matrices (event shape
-- {dim, dim}), the density of L L^T proportional to det(L L^T)^(concentration - 1), PyTorch's
-- (after NumPyro): log_prob with Stan's normalizer, sample(shape) by the onion method of
-- Lewandowski, Kurowicka and Joe (2009) as PyTorch vectorizes it: row i of L is sqrt(y_i) times
-- a uniform direction in its first i - 1 coordinates, y_i ~ Beta((i - 1) / 2, concentration +
-- (dim - i) / 2) (rows counted from 1), and the diagonal sqrt(1 - |row|^2). (PyTorch 1.13 draws
-- y_i ~ Beta(i - 3 / 2, ...): right for the second row only, so from dim 3 on its correlations
-- are not those of its log_prob, nor alike; the paper's, here, are.) No gradient to the draws,
-- no moments nor entropy, as PyTorch's. dim is an integer >= 2, the concentration positive;
-- values must be such factors (lower-triangular, positive diagonal, rows of unit norm).
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise
local compat = require("tide._compat")
local Distribution = require("tide.distributions.Distribution")
local X = require("tide.distributions._extras")

local LKJCholesky = Distribution:extend("LKJCholesky")
LKJCholesky.arg_constraints = require("tide.distributions._arg_constraints").LKJCholesky
LKJCholesky.arg_names = { "dim", "concentration", options = true } -- (PyTorch's, by name too)
LKJCholesky.has_rsample = false

function LKJCholesky:init(dim, concentration, opts, ...)
    local who = "LKJCholesky"
    local validate = X.trailing(who, 2, opts, ...)
    if type(dim) ~= "number" or not compat.tointeger(dim) or dim < 2 then
        raise(("tide: %s: dim must be an integer >= 2 (the matrices' size), got %s"):format(who,
            tostring(dim)))
    end
    dim = compat.tointeger(dim)
    if concentration == nil then
        concentration = 1
    end
    local p, shape = Distribution.broadcast_params(who, { "concentration" }, { concentration })
    if validate then
        Distribution.require(p[1]:detach():gt(0), who, "concentration must be positive")
    end
    self.dim, self.concentration = dim, p[1]
    self._validate = validate
    self.batch_shape, self.event_shape = shape, { dim, dim }
    self._params = { "concentration" }
end

function LKJCholesky:expand(batch_shape)
    local s = X.expand_shape(self, batch_shape)
    local new = X.copy(self)
    new.concentration, new.batch_shape = self.concentration:expand(s), s
    return new
end

function LKJCholesky:support()
    return X.support("corr_cholesky")
end

local function no_moment(what)
    return function(self)
        raise(("tide: %s: %s is not defined for this distribution (PyTorch's has none)")
            :format(self.__name, what))
    end
end
LKJCholesky.mean = no_moment("mean")
LKJCholesky.variance = no_moment("variance")
LKJCholesky.stddev = no_moment("stddev")

-- the rows' Beta distributions, of batch_shape .. {dim} (the first row's unused)
function LKJCholesky:_beta()
    local c = self.concentration
    local dim = self.dim
    local offset = core.cat({ core.zeros({ 1 }, { dtype = c.dtype, device = c.device }),
        core.arange(0, dim - 1, { dtype = c.dtype, device = c.device }) })
    local marginal = c + 0.5 * (dim - 2)
    local Beta = require("tide.distributions.Beta")
    return Beta(offset * 0.5 + 0.5, marginal:unsqueeze(-1) - offset * 0.5)
end

-- the factor from the rows' Beta draws y [..., dim] and normals u [..., dim, dim]
local function onion(y, u)
    local dim = u:size(-1)
    u = u:tril(-1)
    local dir = u / u:norm(2, -1, true)
    local first = core.arange(1, dim + 1, { dtype = "int64", device = u.device }):eq(1)
        :reshape(dim, 1)
    dir = core.where(first, 0, dir) -- (row 1 is 0 / 0)
    local w = y:unsqueeze(-1):sqrt() * dir
    local diag = (-w:pow(2):sum(-1) + 1):clamp(X.TINY[w.dtype], nil):sqrt()
    return w + diag:diag_embed()
end

function LKJCholesky:sample(shape)
    local s = self:extended_shape(shape, "LKJCholesky.sample")
    return autograd.no_grad(function()
        local y = self:_beta():sample(shape)
        local u = core.randn(s, { dtype = y.dtype, device = y.device })
        return onion(y, u)
    end)
end

function LKJCholesky:log_prob(value)
    local who = "LKJCholesky.log_prob"
    value = self:value_tensor(value, who, self.concentration)
    local dim = self.dim
    if value:dim() < 2 or value:size(-1) ~= dim or value:size(-2) ~= dim then
        raise(("tide: %s: the values must be %d x %d matrices (the last two dims), got %s")
            :format(who, dim, dim, args.shape_str(value:size())))
    end
    if self._validate then
        X.require_in("corr_cholesky", value, who, "the values must be Cholesky factors of " ..
            "correlation matrices (lower-triangular, positive diagonal, rows of unit norm)")
    end
    local c = self.concentration
    local diag = value:diagonal(0, -2, -1):narrow(-1, 2, dim - 1)
    local order = core.arange(2, dim + 1, { dtype = c.dtype, device = c.device })
    order = (c - 1):unsqueeze(-1) * 2 + dim - order
    local unnormalized = (order * diag:log()):sum(-1)
    local dm1 = dim - 1
    local alpha = c + 0.5 * dm1
    local denominator = alpha:lgamma() * dm1
    local numerator = (alpha - 0.5):mvlgamma(dm1)
    local normalize = numerator - denominator + 0.5 * dm1 * math.log(math.pi)
    return unnormalized - normalize
end

LKJCholesky._onion = onion
return LKJCholesky
