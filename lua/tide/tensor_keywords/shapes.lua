-- PyTorch's keyword names of the shape ops and joins (tide.tensor_keywords): tide.cat(xs,
-- {dim = 2}), tide.stack(xs, {dim = 1}), x:unsqueeze({dim = 1})
return {
    cat = { params = { "dim" }, methods = false },
    stack = { params = { "dim" }, methods = false },
}
