-- tide.autograd.profiler: torch.autograd.profiler's names for tide.profiler's (profile takes
-- its use_cuda, record_shapes, profile_memory, with_stack and enabled options)
local P = require("tide.profiler")

return { profile = P.profile, record_function = P.record_function }
