-- tide.nn._parameters: the tensors nn.Parameter made, as a weak-keyed set (a tensor there is a
-- parameter whatever its requires_grad: Module.__newindex registers it, register_parameter
-- leaves its requires_grad as it is)
return setmetatable({}, { __mode = "k" })
