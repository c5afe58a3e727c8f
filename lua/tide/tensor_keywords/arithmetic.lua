-- PyTorch's keyword names of the arithmetic (tide.tensor_keywords)
return {}
