-- tide.optim.lr_scheduler: PyTorch 1.13's learning-rate schedulers (one class per file)
local M = {}
for _, name in ipairs({ "LRScheduler", "StepLR", "MultiStepLR", "ExponentialLR",
    "CosineAnnealingLR", "LinearLR", "OneCycleLR", "LambdaLR", "CosineAnnealingWarmRestarts",
    "ReduceLROnPlateau", "SequentialLR", "ChainedScheduler", "ConstantLR", "PolynomialLR",
    "MultiplicativeLR", "CyclicLR" }) do
    M[name] = require("tide.optim.lr_scheduler." .. name)
end
-- to_tensors(sched:state_dict()): the state dict as a flat table name -> CPU tensor, for
-- tide.save; every scheduler's load_state_dict takes tide.load's table back
local flat = require("tide.optim.flat_state")
function M.to_tensors(sd)
    return flat.to_tensors(sd, "lr_scheduler.to_tensors")
end
return M
