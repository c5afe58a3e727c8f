-- tide.optim: SGD, Adam, AdamW, RMSprop, Adagrad, Adamax, NAdam, RAdam, Adadelta, Rprop, ASGD,
-- LBFGS, SparseAdam, lr_scheduler, swa_utils
-- (pure Lua; state lives on each parameter's device). Each is loaded on its first use, as
-- tide.nn's classes are.
local lazy = {}
for _, name in ipairs({ "Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax",
    "NAdam", "RAdam", "Adadelta", "Rprop", "ASGD", "LBFGS", "SparseAdam", "lr_scheduler",
    "swa_utils" }) do
    lazy[name] = "tide.optim." .. name
end

return require("tide._lazy")({}, lazy)
