-- nn.LazyInstanceNorm2d([eps = 1e-5, momentum = 0.1, affine = true, track_running_stats =
-- true]) (or {eps =, momentum =, affine =, track_running_stats =}): PyTorch's; an
-- InstanceNorm2d whose num_features is the channels of its first input (tide.nn._lazy_module).
-- affine and track_running_stats default to true, PyTorch's lazy defaults (InstanceNorm2d's
-- are false). The channels are read where the layer reads them, dim 1 of an unbatched input
-- (PyTorch 1.13 reads its dim 2 there, and fails).
local R = require("tide.nn._lazy_norm")

return R.instance_norm("LazyInstanceNorm2d", require("tide.nn.InstanceNorm2d"))
