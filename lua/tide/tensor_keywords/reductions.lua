-- PyTorch's keyword names of the reductions (tide.tensor_keywords): x:sum({dim = 2,
-- keepdim = true}), x:max({dim = 1}), tide.argmax(x, {dim = 2, keepdim = true})
return {
    sum = { params = { "dim", "keepdim" } },
    mean = { params = { "dim", "keepdim" } },
    max = { params = { "dim", "keepdim" } },
    min = { params = { "dim", "keepdim" } },
    argmax = { params = { "dim", "keepdim" } },
    argmin = { params = { "dim", "keepdim" } },
}
