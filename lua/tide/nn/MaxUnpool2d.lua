-- nn.MaxUnpool2d(kernel_size[, stride = kernel_size[, padding = 0]]) or MaxUnpool2d(k,
-- {stride =, padding =}): max_pool2d's partial inverse, forward(input, indices[,
-- output_size]) with the 1-based indices its return_indices gives (F.max_unpool2d)
return require("tide.nn._per_dims").max_unpool(2)
