-- LambdaLR(opt, {lr_lambda = function(epoch) return 0.95 ^ epoch end}) or LambdaLR(opt, fn): base_lr *
-- lr_lambda(epoch); lr_lambda may be a list of functions, one per group. Its state_dict keeps
-- the epoch, not the functions (as PyTorch's, which saves no plain functions)
local LRScheduler = require("tide.optim.lr_scheduler.LRScheduler")
local raise = require("tide.autograd").raise
local is_callable = require("tide.op_args").is_callable
local typename = require("tide.op_args").typename

local LambdaLR = LRScheduler:extend("LambdaLR", { "lr_lambda" })
LambdaLR.torch_only = { lr_lambdas = true } -- PyTorch's: None for each plain function

-- (LambdaLR(opt, fn) and LambdaLR(opt, {f1, f2}) too: PyTorch's positional lr_lambda, as every
-- scheduler's options are positional in LRScheduler:extend)

function LambdaLR:init(opts)
    local f, n = opts.lr_lambda, #self.optimizer.param_groups
    if is_callable(f) then -- a function, or a callable (tide.utils.partial, transformers')
        local fs = {}
        for i = 1, n do
            fs[i] = f
        end
        f = fs
    elseif type(f) ~= "table" or getmetatable(f) ~= nil or #f ~= n then
        -- (a table with a metatable, a complex tensor say, is no list: its # may raise)
        local list = type(f) == "table" and getmetatable(f) == nil
        raise(string.format("tide: LambdaLR: expected lr_lambda to be a function or a list of " ..
            "%d functions (one per parameter group), got %s", n,
            list and ("a list of " .. #f) or typename(f)))
    end
    for i = 1, n do
        if not is_callable(f[i]) then
            raise("tide: LambdaLR: lr_lambda " .. i .. " is a " .. type(f[i]) ..
                ", expected a function")
        end
    end
    self.lr_lambdas = f
end

function LambdaLR:get_lr()
    local r = {}
    for i, base in ipairs(self.base_lrs) do
        local m = self.lr_lambdas[i](self.last_epoch)
        if type(m) ~= "number" then
            raise("tide: LambdaLR: lr_lambda " .. i .. " returned a " .. type(m) ..
                " for epoch " .. self.last_epoch .. ", expected a number")
        end
        r[i] = base * m
    end
    return r
end

return LambdaLR
