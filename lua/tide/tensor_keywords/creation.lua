-- PyTorch's keyword names of the creation functions (tide.tensor_keywords)
return {}
