-- tide.optim: SGD, Adam, AdamW, RMSprop, Adagrad, Adamax, NAdam, RAdam, Adadelta, lr_scheduler
-- (pure Lua; state lives on each parameter's device)
local M = {}
for _, name in ipairs({ "Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax",
    "NAdam", "RAdam", "Adadelta", "lr_scheduler" }) do
    M[name] = require("tide.optim." .. name)
end
return M
