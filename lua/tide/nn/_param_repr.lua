-- tide.nn._param_repr: how ParameterList and ParameterDict print an entry, after PyTorch's
-- "Parameter containing: [torch.float32 of size 2x3]"
return function(name, p)
    local s = p.shape
    local size = #s == 0 and "" or table.concat(s, "x")
    return ("%s: Parameter containing: [%s of size %s%s]"):format(name, p.dtype, size,
        tostring(p.device) ~= "cpu" and (" (" .. tostring(p.device) .. ")") or "")
end
