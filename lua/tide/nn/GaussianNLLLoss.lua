-- nn.GaussianNLLLoss([{full = false, eps = 1e-6, reduction = "mean" | "sum" | "none"}]):
-- loss(input, target, var), as nn.functional.gaussian_nll_loss
return require("tide.nn._loss3")("GaussianNLLLoss", { "reduction", "full", "eps" },
    "gaussian_nll_loss")
