-- tide._lazy_ops: the Lua-written op modules that load on first use, and the names each one
-- defines: its Tensor methods and its tide.X functions. require("tide") puts a stub under each
-- name; the first call of any of them loads the module, which puts the real functions in place
-- (so a script's Lua heap holds, and an incremental collector walks, only the ops it uses).
-- spec/lazy_ops_spec.lua checks this list against what the modules define. A module that wraps
-- a method the core already has (tide.keyword_options' scatter, tide.special's zeta) stays
-- eager: its stub would stand where the module reads the method it wraps.
return {
    ["tide.amp.autocast"] = {
        methods = {},
        functions = { "autocast", "get_autocast_dtype", "is_autocast_enabled" },
    },
    ["tide.random_fills"] = {
        methods = { "bernoulli_", "cauchy_", "exponential_", "geometric_", "log_normal_",
            "random_" },
        functions = {},
    },
    ["tide.elementwise"] = {
        methods = {
            "copysign", "copysign_", "deg2rad", "deg2rad_", "exp2", "exp2_", "fix", "fix_",
            "float_power", "float_power_", "fmax", "fmin", "heaviside", "heaviside_", "hypot",
            "hypot_", "isneginf", "isposinf", "log10", "log10_", "logit", "logit_", "rad2deg",
            "rad2deg_", "sgn", "sgn_", "signbit", "sinc", "sinc_", "true_divide", "true_divide_",
        },
        functions = {
            "copysign", "deg2rad", "exp2", "fix", "float_power", "fmax", "fmin", "heaviside",
            "hypot", "isneginf", "isposinf", "log10", "logit", "rad2deg", "sgn", "signbit", "sinc",
            "true_divide",
        },
    },
    ["tide.legacy"] = {
        methods = { "apply", "apply_", "map", "map2", "map2_", "map_", "type" },
        functions = {},
    },
    ["tide.subscripts"] = {
        methods = { "index_put", "index_put_" },
        functions = {},
    },
    ["tide.windows"] = {
        methods = {},
        functions = { "bartlett_window", "blackman_window", "hamming_window", "hann_window",
            "kaiser_window" },
    },
    ["tide.inplace_views"] = {
        methods = { "squeeze_", "swapaxes_", "swapdims_", "t_", "transpose_", "unsqueeze_" },
        functions = {},
    },
    ["tide.indexing"] = {
        methods = {
            "argwhere", "fill_diagonal_", "index_add", "index_copy", "index_copy_", "index_fill",
            "index_fill_", "masked_scatter", "masked_scatter_", "scatter_reduce",
            "scatter_reduce_", "take", "take_along_dim", "select_scatter", "slice_scatter",
            "diagonal_scatter",
        },
        functions = {
            "argwhere", "index_add", "index_copy", "index_fill", "masked_scatter",
            "scatter_reduce", "take", "take_along_dim", "select_scatter", "slice_scatter",
            "diagonal_scatter",
        },
    },
    ["tide.joins"] = {
        methods = {
            "diag_embed", "dsplit", "fliplr", "flipud", "hsplit", "ravel", "rot90", "tensor_split",
            "vsplit",
        },
        functions = {
            "atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "cartesian_prod", "combinations",
            "column_stack", "diag_embed", "dsplit", "dstack", "fliplr", "flipud", "hsplit",
            "hstack", "ravel", "rot90", "row_stack", "tensor_split", "tril_indices", "triu_indices",
            "vsplit", "vstack",
        },
    },
    ["tide.searching"] = {
        methods = {
            "histc", "unique_consecutive",
        },
        functions = {
            "bincount", "bucketize", "histc", "isin", "searchsorted", "unique_consecutive",
        },
    },
    ["tide.scans"] = {
        methods = {
            "cummax", "cummin", "logcumsumexp",
        },
        functions = {
            "cummax", "cummin", "logcumsumexp",
        },
    },
    ["tide.statistics"] = {
        methods = {
            "aminmax", "corrcoef", "cov", "dist", "kthvalue", "mode", "msort", "nanmedian",
            "nanquantile", "quantile", "renorm", "renorm_", "std_mean", "var_mean",
        },
        functions = {
            "aminmax", "corrcoef", "cov", "dist", "kthvalue", "mode", "msort", "nanmedian",
            "nanquantile", "quantile", "renorm", "std_mean", "trapezoid", "var_mean",
            "cumulative_trapezoid", "vander",
        },
    },
    ["tide.linalg"] = {
        methods = {
            "cholesky", "cross", "det", "inverse", "logdet", "matrix_power", "pinverse", "qr",
            "slogdet", "svd", "cholesky_solve", "cholesky_inverse", "matrix_exp",
        },
        functions = {
            "cholesky", "cross", "det", "inverse", "logdet", "matrix_power", "pinverse", "qr",
            "slogdet", "svd", "cholesky_solve", "cholesky_inverse", "matrix_exp",
        },
    },
    -- PyTorch's small utilities (spec/tensor_utilities_spec.lua)
    ["tide.dtype_queries"] = {
        methods = { "isreal", "positive" },
        functions = { "can_cast", "detach", "is_floating_point", "isreal", "numel", "positive",
            "promote_types", "result_type" },
    },
    ["tide.broadcasting"] = {
        methods = {},
        functions = { "broadcast_shapes", "broadcast_tensors" },
    },
    ["tide.random_draws"] = {
        methods = {},
        functions = { "initial_seed", "normal", "poisson", "randint_like", "seed" },
    },
    ["tide.flat_indexing"] = {
        methods = { "put", "put_" },
        functions = { "put", "unravel_index" },
    },
    ["tide.diagonals"] = { methods = { "diagflat" }, functions = { "diagflat" } },
    ["tide.log_ranges"] = { methods = {}, functions = { "logspace" } },
    ["tide.float_parts"] = { methods = { "frexp" }, functions = { "frexp" } },
    ["tide.histograms"] = {
        methods = { "bincount", "histogram" },
        functions = { "histogram" },
    },
    ["tide.finite_differences"] = { methods = {}, functions = { "gradient" } },
    ["tide.deepcopy"] = { methods = {}, functions = { "deepcopy" } },

}
