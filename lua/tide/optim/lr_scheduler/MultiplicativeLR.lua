-- MultiplicativeLR(opt, {lr_lambda = function(epoch) return 0.95 end}): each step multiplies
-- each group's lr by lr_lambda(epoch) (PyTorch 1.13's; epoch 0 keeps the lr); lr_lambda may be
-- a list of functions, one per group. Its state_dict keeps the epoch, not the functions (as
-- PyTorch's, which saves no plain functions)
local LRScheduler = require("tide.optim.lr_scheduler.LRScheduler")
local LambdaLR = require("tide.optim.lr_scheduler.LambdaLR")
local raise = require("tide.autograd").raise

local MultiplicativeLR = LRScheduler:extend("MultiplicativeLR", { "lr_lambda" })
MultiplicativeLR.torch_only = { lr_lambdas = true } -- PyTorch's: None for each plain function

function MultiplicativeLR:init(opts)
    -- LambdaLR's checks, naming this class
    local ok, err = pcall(LambdaLR.init, self, opts)
    if not ok then
        raise((tostring(err):gsub("^.-tide: LambdaLR: ", "tide: MultiplicativeLR: ")))
    end
end

function MultiplicativeLR:get_lr()
    local r, e = {}, self.last_epoch
    for i, g in ipairs(self.optimizer.param_groups) do
        if e > 0 then
            local m = self.lr_lambdas[i](e)
            if type(m) ~= "number" then
                raise("tide: MultiplicativeLR: lr_lambda " .. i .. " returned a " .. type(m) ..
                    " for epoch " .. e .. ", expected a number")
            end
            r[i] = g.lr * m
        else
            r[i] = g.lr
        end
    end
    return r
end

return MultiplicativeLR
