-- nn.LPPool1d(norm_type, kernel_size[, {stride = kernel_size, ceil_mode = false}]): the
-- norm_type-norm of each window of the input (F.lp_pool1d), PyTorch's power-average pooling
-- PyTorch's arguments, positionally or by name (tide.nn._signature)
return require("tide.nn._signature").define(require("tide.nn._per_dims").lp_pool(1),
    { names = { "norm_type", "kernel_size", "stride", "ceil_mode" }, required = 2 })
