-- nn.FractionalMaxPool3d(kernel_size, {output_size = | output_ratio =, return_indices = false,
-- _random_samples =}): PyTorch's fractional max pooling (F.fractional_max_pool3d), windows
-- of kernel_size at pseudo-random starts; with return_indices forward gives the values and the
-- 1-based flat positions of the maxima
return require("tide.nn._per_dims").fractional_max_pool(3)
