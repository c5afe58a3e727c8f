-- PyTorch's keyword names of the reductions, scans, order statistics and sorts
-- (tide.tensor_keywords): x:sum({dim = 2, keepdim = true}), x:mean({dim = {3, 4}}),
-- x:std({dim = 2, correction = 0}), x:topk(2, {dim = 1, largest = false}),
-- x:sort({dim = 2, descending = true}), tide.argmax(x, {dim = 2, keepdim = true}).
--
-- std, var, std_mean, var_mean take PyTorch's (dim, unbiased, keepdim), correction by name.
-- PyTorch's NumPy names are aliases of every op here but norm: axis for dim, keepdims for
-- keepdim (x:sum({axis = 2, keepdims = true}), as x.sum(axis=1, keepdims=True)).
local DIM_KEEPDIM = { "dim", "keepdim" }
local DIM = { "dim" }
local DTYPE = { "dtype" }
local MOMENTS = { "dim", "unbiased", "keepdim" }
local CORRECTION = { "correction" }

local S = {
    -- the core's sum, mean, prod with tide.reductions' list of dims (not prod's) and dtype
    sum = { params = DIM_KEEPDIM, options = DTYPE },
    mean = { params = DIM_KEEPDIM, options = DTYPE },
    prod = { params = DIM_KEEPDIM, options = DTYPE },
    nansum = { params = DIM_KEEPDIM, options = DTYPE },
    nanmean = { params = DIM_KEEPDIM, options = DTYPE },
    max = { params = DIM_KEEPDIM },
    min = { params = DIM_KEEPDIM },
    amax = { params = DIM_KEEPDIM },
    amin = { params = DIM_KEEPDIM },
    aminmax = { params = DIM_KEEPDIM },
    argmax = { params = DIM_KEEPDIM },
    argmin = { params = DIM_KEEPDIM },
    std = { params = MOMENTS, options = CORRECTION },
    var = { params = MOMENTS, options = CORRECTION },
    std_mean = { params = MOMENTS, options = CORRECTION },
    var_mean = { params = MOMENTS, options = CORRECTION },
    logsumexp = { params = DIM_KEEPDIM },
    norm = { params = { "p", "dim", "keepdim", "dtype" } },
    all = { params = DIM_KEEPDIM },
    any = { params = DIM_KEEPDIM },
    median = { params = DIM_KEEPDIM },
    nanmedian = { params = DIM_KEEPDIM },
    mode = { params = DIM_KEEPDIM },
    kthvalue = { params = { "k", "dim", "keepdim" } },
    quantile = { params = { "q", "dim", "keepdim" }, options = { "interpolation" } },
    nanquantile = { params = { "q", "dim", "keepdim" }, options = { "interpolation" } },
    cumsum = { params = DIM, options = DTYPE },
    cumprod = { params = DIM, options = DTYPE },
    cumsum_ = { params = DIM, options = DTYPE, functions = false },
    cumprod_ = { params = DIM, options = DTYPE, functions = false },
    cummax = { params = DIM },
    cummin = { params = DIM },
    logcumsumexp = { params = DIM },
    count_nonzero = { params = DIM },
    softmax = { params = { "dim", "dtype" } },
    log_softmax = { params = { "dim", "dtype" } },
    topk = { params = { "k", "dim", "largest", "sorted" } },
    sort = { params = { "dim", "descending", "stable" } },
    argsort = { params = { "dim", "descending", "stable" } },
    msort = { params = {} },
}

-- PyTorch's argument parser takes NumPy's names for dim and keepdim (axis, keepdims) wherever
-- an op has those parameters; norm is a Python function in PyTorch and takes neither
local NUMPY_NAMES = { axis = "dim", keepdims = "keepdim" }
for op, s in pairs(S) do
    if op ~= "norm" then
        for alias, name in pairs(NUMPY_NAMES) do
            for _, p in ipairs(s.params) do
                if p == name then
                    s.aliases = s.aliases or {}
                    s.aliases[alias] = name
                end
            end
        end
    end
end

return S
