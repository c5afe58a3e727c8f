-- nn.LPPool1d(norm_type, kernel_size[, {stride = kernel_size, ceil_mode = false}]): the
-- norm_type-norm of each window of the input (F.lp_pool1d), PyTorch's power-average pooling
return require("tide.nn._per_dims").lp_pool(1)
