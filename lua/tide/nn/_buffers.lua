-- tide.nn._buffers: the tensors nn.Buffer made, as a weak-keyed map tensor -> persistent (a
-- tensor there assigned as a module's field registers as a buffer: Module.__newindex)
return setmetatable({}, { __mode = "k" })
