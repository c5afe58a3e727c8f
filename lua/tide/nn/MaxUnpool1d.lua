-- nn.MaxUnpool1d(kernel_size[, stride = kernel_size[, padding = 0]]) or MaxUnpool1d(k,
-- {stride =, padding =}): max_pool1d's partial inverse, forward(input, indices[,
-- output_size]) with the 1-based indices its return_indices gives (F.max_unpool1d)
return require("tide.nn._per_dims").max_unpool(1)
