-- tide.optim.swa_utils: PyTorch 1.13's torch.optim.swa_utils, Stochastic Weight Averaging:
-- AveragedModel (a running average of a model's weights), SWALR (anneals each group's lr to a
-- fixed swa_lr) and update_bn (recomputes BatchNorm statistics for averaged weights). Each is
-- loaded on its first use.
local lazy = {}
for _, name in ipairs({ "AveragedModel", "SWALR", "update_bn" }) do
    lazy[name] = "tide.optim.swa_utils." .. name
end

return require("tide._lazy")({}, lazy)
