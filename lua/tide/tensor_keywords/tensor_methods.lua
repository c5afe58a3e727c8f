-- PyTorch's keyword names of the tensor_methods (tide.tensor_keywords)
return {}
