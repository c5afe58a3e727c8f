-- tide.optim.lr_scheduler: PyTorch 1.13's learning-rate schedulers (one class per file)
local M = {}
for _, name in ipairs({ "LRScheduler", "StepLR", "MultiStepLR", "ExponentialLR",
    "CosineAnnealingLR", "LinearLR", "OneCycleLR", "LambdaLR" }) do
    M[name] = require("tide.optim.lr_scheduler." .. name)
end
return M
