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
        functions = { "autocast", "get_autocast_dtype", "is_autocast_enabled",
            "is_autocast_cpu_enabled", "get_autocast_cpu_dtype", "get_autocast_gpu_dtype",
            "is_autocast_cache_enabled", "clear_autocast_cache" },
    },
    ["tide.random_fills"] = {
        methods = { "bernoulli_", "cauchy_", "exponential_", "geometric_", "log_normal_",
            "random_" },
        functions = {},
    },
    ["tide.elementwise"] = {
        methods = {
            "copysign", "copysign_", "deg2rad", "deg2rad_", "exp2", "exp2_", "fix", "fix_",
            "float_power", "float_power_", "fmax", "fmin", "heaviside", "heaviside_",
            "isneginf", "isposinf", "logit", "logit_", "rad2deg", "rad2deg_", "sgn", "sgn_",
            "signbit", "sinc", "sinc_", "true_divide", "true_divide_",
        },
        functions = {
            "copysign", "deg2rad", "exp2", "fix", "float_power", "fmax", "fmin", "heaviside",
            "isneginf", "isposinf", "logit", "rad2deg", "sgn", "signbit", "sinc", "true_divide",
        },
    },
    ["tide.foreach"] = {
        methods = {},
        functions = {
            "_foreach_abs", "_foreach_abs_", "_foreach_acos", "_foreach_acos_", "_foreach_add",
            "_foreach_add_", "_foreach_addcdiv", "_foreach_addcdiv_", "_foreach_addcmul",
            "_foreach_addcmul_", "_foreach_asin", "_foreach_asin_", "_foreach_atan",
            "_foreach_atan_", "_foreach_ceil", "_foreach_ceil_", "_foreach_clamp_max",
            "_foreach_clamp_max_", "_foreach_clamp_min", "_foreach_clamp_min_", "_foreach_copy_",
            "_foreach_cos", "_foreach_cos_", "_foreach_cosh", "_foreach_cosh_", "_foreach_div",
            "_foreach_div_", "_foreach_erf", "_foreach_erf_", "_foreach_erfc", "_foreach_erfc_",
            "_foreach_exp", "_foreach_exp_", "_foreach_expm1", "_foreach_expm1_",
            "_foreach_floor", "_foreach_floor_", "_foreach_frac", "_foreach_frac_",
            "_foreach_lerp", "_foreach_lerp_", "_foreach_lgamma", "_foreach_lgamma_",
            "_foreach_log", "_foreach_log10", "_foreach_log10_", "_foreach_log1p",
            "_foreach_log1p_", "_foreach_log2", "_foreach_log2_", "_foreach_log_",
            "_foreach_maximum", "_foreach_maximum_", "_foreach_minimum", "_foreach_minimum_",
            "_foreach_mul", "_foreach_mul_", "_foreach_neg", "_foreach_neg_", "_foreach_norm",
            "_foreach_pow", "_foreach_pow_", "_foreach_reciprocal", "_foreach_reciprocal_",
            "_foreach_round", "_foreach_round_", "_foreach_sigmoid", "_foreach_sigmoid_",
            "_foreach_sign", "_foreach_sign_", "_foreach_sin", "_foreach_sin_", "_foreach_sinh",
            "_foreach_sinh_", "_foreach_sqrt", "_foreach_sqrt_", "_foreach_sub", "_foreach_sub_",
            "_foreach_tan", "_foreach_tan_", "_foreach_tanh", "_foreach_tanh_", "_foreach_trunc",
            "_foreach_trunc_", "_foreach_zero_",
        },
    },
    ["tide.legacy"] = {
        methods = { "apply", "apply_", "map", "map2", "map2_", "map_", "numpy", "type" },
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
        methods = { "as_strided_", "squeeze_", "swapaxes_", "swapdims_", "t_", "transpose_",
            "unsqueeze_" },
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
            "cumulative_trapezoid", "vander", "trapz",
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
        functions = { "can_cast", "detach", "finfo", "iinfo", "is_floating_point", "isreal",
            "numel", "positive", "promote_types", "result_type" },
    },
    ["tide.broadcasting"] = {
        methods = {},
        functions = { "broadcast_shapes", "broadcast_tensors" },
    },
    ["tide.random_draws"] = {
        methods = {},
        functions = { "binomial", "initial_seed", "normal", "poisson", "randint_like", "seed" },
    },
    ["tide.flat_indexing"] = {
        methods = { "put", "put_" },
        functions = { "put", "unravel_index" },
    },
    ["tide.diagonals"] = { methods = { "diagflat" }, functions = { "diagflat" } },
    ["tide.log_ranges"] = { methods = {}, functions = { "logspace" } },
    ["tide.float_parts"] = {
        methods = { "frexp", "nextafter", "nextafter_" },
        functions = { "frexp", "nextafter" },
    },
    ["tide.histograms"] = {
        methods = { "bincount", "histogram" },
        functions = { "histogram", "histogramdd" },
    },
    ["tide.finite_differences"] = { methods = {}, functions = { "gradient" } },
    ["tide.deepcopy"] = { methods = {}, functions = { "deepcopy" } },
    ["tide.complex"] = {
        methods = {},
        functions = { "view_as_real", "view_as_complex", "complex", "polar", "real", "imag",
            "conj", "angle" },
    },
    ["tide.fft"] = { methods = {}, functions = { "stft", "istft" } },
    ["tide.sparse.ops"] = {
        methods = { "to_dense", "to_sparse" },
        functions = { "sparse_coo_tensor", "spmm" },
    },
    -- PyTorch's torch.X names of nn.functional's ops (spec/torch_functions_spec.lua)
    ["tide.nn_functions"] = {
        methods = {},
        functions = {
            "adaptive_avg_pool1d", "adaptive_max_pool1d", "alpha_dropout", "avg_pool1d",
            "batch_norm", "bilinear", "binary_cross_entropy_with_logits", "celu",
            "channel_shuffle", "constant_pad_nd", "conv1d", "conv2d", "conv3d",
            "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "cosine_embedding_loss",
            "cosine_similarity", "ctc_loss", "dropout", "embedding", "embedding_bag",
            "feature_alpha_dropout", "group_norm", "hinge_embedding_loss", "instance_norm",
            "kl_div", "layer_norm", "margin_ranking_loss", "max_pool1d",
            "max_pool1d_with_indices", "max_pool2d", "max_pool3d", "native_channel_shuffle",
            "pairwise_distance", "pdist", "pixel_shuffle", "pixel_unshuffle", "poisson_nll_loss",
            "rrelu", "selu", "threshold", "triplet_margin_loss",
        },
    },
    ["tide.torch_functions"] = {
        methods = {},
        functions = { "as_tensor", "asarray", "fill", "is_complex", "rsub", "scalar_tensor",
            "t",
            -- PyTorch 1.13's other top-level functions (spec/namespace_torch_spec.lua)
            "adjoint", "conj_physical", "conj_physical_", "resolve_conj", "resolve_neg",
            "is_conj", "is_neg", "is_inference", "get_device", "index_put",
            "unsafe_split_with_sizes", "as_strided_copy", "diagonal_copy", "expand_copy",
            "permute_copy", "select_copy", "split_copy", "split_with_sizes_copy",
            "squeeze_copy", "t_copy", "transpose_copy", "unbind_copy", "unfold_copy",
            "unsqueeze_copy", "view_copy", "alias_copy", "detach_copy", "view_as_real_copy",
            "view_as_complex_copy", "celu_", "selu_", "rrelu_", "threshold_", "dropout_",
            "alpha_dropout_", "feature_alpha_dropout_", "range", "empty_strided",
            "convolution", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d",
            "affine_grid_generator", "rnn_tanh_cell", "rnn_relu_cell", "lstm_cell", "gru_cell",
            -- PyTorch's torch.X_ in-place functions (torch.sin_(b) is b:sin_())
            "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_",
            "arctan_", "arctanh_", "as_strided_", "asin_", "asinh_", "atan_", "atanh_",
            "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_",
            "deg2rad_", "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_",
            "floor_", "frac_", "gcd_", "i0_", "index_put_", "lcm_", "ldexp_", "log10_",
            "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_", "negative_",
            "rad2deg_", "reciprocal_", "relu_", "resize_as_", "round_", "rsqrt_", "sigmoid_",
            "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_",
            "zero_" },
    },
    ["tide.global_modes"] = {
        methods = {},
        functions = { "are_deterministic_algorithms_enabled", "get_float32_matmul_precision",
            "get_num_interop_threads", "inference_mode",
            "is_deterministic_algorithms_warn_only_enabled", "is_inference_mode_enabled",
            "set_float32_matmul_precision", "set_num_interop_threads",
            "use_deterministic_algorithms" },
    },
    ["tide.print_options"] = { methods = {}, functions = { "set_printoptions" } },
    -- torch's anomaly mode switches (tide.autograd.detect_anomaly's)
    ["tide.autograd.anomaly_mode"] = {
        methods = {},
        functions = { "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
            "set_anomaly_enabled" },
    },
    -- PyTorch's Tensor methods and torch functions for ported scripts (spec/tensor_gaps_spec.lua)
    ["tide.detach_inplace"] = { methods = { "detach_" }, functions = {} },
    ["tide.shared_memory"] = { methods = { "is_shared", "share_memory_" }, functions = {} },
    ["tide.missing_dtypes"] = { methods = { "char", "short" }, functions = {} },
    ["tide.legacy_new"] = { methods = { "new" }, functions = {} },
    ["tide.resizing"] = { methods = { "resize_", "resize_as_" }, functions = {} },
    ["tide.multivariate_lgamma"] = {
        methods = { "mvlgamma", "mvlgamma_" },
        functions = { "mvlgamma" },
    },
    ["tide.index_reduce"] = {
        methods = { "index_reduce", "index_reduce_" },
        functions = { "index_reduce" },
    },
    ["tide.segment_reduce"] = { methods = {}, functions = { "segment_reduce" } },
    ["tide.deprecated_linalg"] = {
        methods = { "eig", "lstsq", "lu", "lu_solve", "solve", "symeig", "triangular_solve" },
        functions = { "eig", "frobenius_norm", "lstsq", "lu", "lu_solve", "lu_unpack",
            "matrix_rank", "nuclear_norm", "solve", "symeig", "triangular_solve" },
    },
    ["tide.householder"] = {
        methods = { "geqrf", "orgqr", "ormqr" },
        functions = { "geqrf", "orgqr", "ormqr" },
    },
    ["tide.lowrank"] = { methods = {}, functions = { "pca_lowrank", "svd_lowrank" } },
    ["tide.activation_methods"] = {
        methods = { "hardshrink", "prelu" },
        functions = { "hardshrink", "prelu" },
    },

}
