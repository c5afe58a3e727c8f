-- nn.MaxUnpool3d(kernel_size[, stride = kernel_size[, padding = 0]]) or MaxUnpool3d(k,
-- {stride =, padding =}): max_pool3d's partial inverse, forward(input, indices[,
-- output_size]) with the 1-based indices its return_indices gives (F.max_unpool3d); sizes an
-- integer or {d, h, w}
return require("tide.nn._per_dims").max_unpool(3)
