-- tide.optim.AdamW(params, {lr = 1e-3, betas = {0.9, 0.999}, eps = 1e-8, weight_decay = 1e-2,
-- amsgrad = false, maximize = false})
-- Adam with decoupled weight decay (PyTorch's): p *= 1 - lr*wd before the Adam step
local Optimizer = require("tide.optim.Optimizer")
local Adam = require("tide.optim.Adam")

local AdamW = Optimizer:extend("AdamW", {
    lr = 1e-3, betas = { 0.9, 0.999 }, eps = 1e-8, weight_decay = 1e-2, amsgrad = false,
    maximize = false,
}, {
    "lr", "betas", "eps", "weight_decay", "amsgrad",
})
AdamW.check_options = Adam.check_options
AdamW.adam_update = Adam.adam_update
AdamW.formula_update = Adam.formula_update
AdamW.state_spec = Adam.state_spec

function AdamW:update(group, p, g)
    self:adam_update(group, p, g, true)
end

return AdamW
