-- tide.distributions.transforms.LowerCholeskyTransform([{cache_size =}]): from square
-- matrices to lower-triangular ones with a positive diagonal (PyTorch's): the strict lower
-- triangle kept, the diagonal exponentiated; the inverse takes the diagonal's log. Not
-- bijective (the upper triangle is dropped), no log_abs_det_jacobian.
local autograd = require("tide.autograd")
local Transform = require("tide.distributions.transforms.Transform")

local LowerCholesky = Transform:extend("LowerCholeskyTransform")

function LowerCholesky._getters.domain()
    local C = require("tide.distributions.constraints")
    return C.independent(C.real, 2)
end
function LowerCholesky._getters.codomain()
    return require("tide.distributions.constraints").lower_cholesky
end

LowerCholesky._eq = Transform._same_class

local function matrices(x, who)
    if x:dim() < 2 then
        autograd.raise(("tide: %s: expected square matrices (at least 2 dims), got %d dims")
            :format(who, x:dim()))
    end
end

function LowerCholesky:_call(x)
    matrices(x, "LowerCholeskyTransform")
    return x:tril(-1) + x:diagonal(0, -2, -1):exp():diag_embed()
end

function LowerCholesky:_inverse(y)
    matrices(y, "LowerCholeskyTransform.inv")
    return y:tril(-1) + y:diagonal(0, -2, -1):log():diag_embed()
end

return LowerCholesky
