-- tide.distributions.transforms.CorrCholeskyTransform([{cache_size =}]): from real vectors of
-- D (D - 1) / 2 to the Cholesky factors of D x D correlation matrices (PyTorch's): the vector
-- fills the strict lower triangle in row order through tanh (clamped to 1 - eps), each row
-- then stick-broken on the squares so that it has unit norm and a positive diagonal.
-- Bijective; log_abs_det_jacobian is that of x and the flattened strict lower triangle of y.
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local Transform = require("tide.distributions.transforms.Transform")
local U = require("tide.distributions.transforms._util")

local CorrCholesky = Transform:extend("CorrCholeskyTransform")
CorrCholesky.bijective = true

function CorrCholesky._getters.domain()
    return require("tide.distributions.constraints").real_vector
end
function CorrCholesky._getters.codomain()
    return require("tide.distributions.constraints").corr_cholesky
end

local WHO = "CorrCholeskyTransform"

function CorrCholesky:_call(x)
    if x:dim() < 1 then
        raise("tide: CorrCholeskyTransform: expected at least 1 dim (the vector), got a " ..
            "0-dim tensor")
    end
    local eps = U.EPS[x.dtype]
    x = x:tanh():clamp(-1 + eps, 1 - eps)
    local r = U.vec_to_tril_matrix(x, -1, WHO)
    -- y = sign(r) sqrt(z cumprod(1 - z)) = r sqrt(cumprod(1 - z)), z = r^2
    local z = r:pow(2)
    local z1m_cumprod_sqrt = (-z + 1):sqrt():cumprod(-1)
    local n = r:size(-1)
    r = r + core.eye(n, { dtype = r.dtype, device = r.device })
    return r * U.pad_last(z1m_cumprod_sqrt:narrow(-1, 1, n - 1), 1, 0, 1)
end

function CorrCholesky:_inverse(y)
    if y:dim() < 2 then
        raise(("tide: %s.inv: expected square matrices (at least 2 dims), got %d dims")
            :format(WHO, y:dim()))
    end
    local n = y:size(-1)
    local y_cumsum = -(y * y):cumsum(-1) + 1
    local shifted = U.pad_last(y_cumsum:narrow(-1, 1, n - 1), 1, 0, 1)
    local y_vec = U.tril_matrix_to_vec(y, -1, WHO)
    local cumsum_vec = U.tril_matrix_to_vec(shifted, -1, WHO)
    local t = y_vec / cumsum_vec:sqrt()
    return ((t + 1) / (-t + 1)):log() / 2 -- (atanh)
end

function CorrCholesky:log_abs_det_jacobian(x, y)
    local y1m_cumsum = -(y * y):cumsum(-1) + 1
    -- (diag -2: no shift of the cumulative product needed; 2 x 2 too)
    local tril = U.tril_matrix_to_vec(y1m_cumsum, -2, WHO .. ".log_abs_det_jacobian")
    local stick_breaking_logdet = tril:log():sum(-1) * 0.5
    local tanh_logdet = (x + (x * -2):softplus() - math.log(2)):sum(-1) * -2
    return stick_breaking_logdet + tanh_logdet
end

function CorrCholesky:forward_shape(shape)
    local who = WHO .. ".forward_shape"
    shape = self:_shape(shape, who)
    if #shape < 1 then
        raise(("tide: %s: expected at least 1 dim, got the shape {}"):format(who))
    end
    local k = shape[#shape]
    local d = math.floor(math.sqrt(0.25 + 2 * k) + 0.5 + 0.5)
    if d * (d - 1) / 2 ~= k then
        raise(("tide: %s: the last size %d is no D (D - 1) / 2 (a flattened strict lower " ..
            "triangle)"):format(who, k))
    end
    local out = U.drop_last(shape, 1)
    out[#out + 1] = d
    out[#out + 1] = d
    return out
end

function CorrCholesky:inverse_shape(shape)
    local who = WHO .. ".inverse_shape"
    shape = self:_shape(shape, who)
    if #shape < 2 then
        raise(("tide: %s: expected at least 2 dims, got %d"):format(who, #shape))
    end
    if shape[#shape - 1] ~= shape[#shape] then
        raise(("tide: %s: expected square matrices, got %d x %d"):format(who, shape[#shape - 1],
            shape[#shape]))
    end
    local d = shape[#shape]
    local out = U.drop_last(shape, 2)
    out[#out + 1] = math.floor(d * (d - 1) / 2)
    return out
end

return CorrCholesky
