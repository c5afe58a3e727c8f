-- ChainedScheduler(schedulers): PyTorch 1.13's. step() steps every scheduler in turn, so their
-- chainable factors multiply (schedulers of one optimizer):
--
--     local s = lr_scheduler.ChainedScheduler({
--         lr_scheduler.LinearLR(opt, {start_factor = 0.1, total_iters = 4}),
--         lr_scheduler.ExponentialLR(opt, {gamma = 0.9}) })
--
-- state_dict(): PyTorch's keys, _last_lr and _schedulers (the schedulers' own state dicts).
local compat = require("tide._compat")
local class = require("tide._class")
local raise = require("tide.autograd").raise
local SequentialLR = require("tide.optim.lr_scheduler.SequentialLR")

local ChainedScheduler = { __name = "ChainedScheduler", keys = { "_last_lr" } }
ChainedScheduler.__index = ChainedScheduler

local function group_lrs(opt)
    local r = {}
    for i, g in ipairs(opt.param_groups) do
        r[i] = g.lr
    end
    return r
end

function ChainedScheduler.new(schedulers, extra)
    local who = "ChainedScheduler"
    if extra ~= nil then
        raise("tide: ChainedScheduler: expected one argument, the list of schedulers " ..
            "(PyTorch's ChainedScheduler(schedulers) takes no optimizer), got a second")
    end
    -- ChainedScheduler({schedulers = {...}}): PyTorch's keyword
    if require("tide.pytorch_args").is_options(schedulers) and next(schedulers) ~= nil then
        schedulers = require("tide.op_args").options(who, schedulers, { "schedulers" }).schedulers
    end
    local opt = SequentialLR.check_schedulers(who, schedulers)
    local self = setmetatable({ optimizer = opt, _schedulers = compat.move(schedulers, 1,
        #schedulers, 1, {}) }, ChainedScheduler)
    self._last_lr = group_lrs(opt)
    return self
end

class.callable(ChainedScheduler)

function ChainedScheduler:step(epoch)
    SequentialLR.check_no_epoch("ChainedScheduler", epoch)
    for _, s in ipairs(self._schedulers) do
        s:step()
    end
    self._last_lr = group_lrs(self.optimizer)
end

ChainedScheduler.get_last_lr = SequentialLR.get_last_lr
ChainedScheduler.state_dict = SequentialLR.state_dict
ChainedScheduler.read_state_dict = SequentialLR.read_state_dict
ChainedScheduler.apply_state = SequentialLR.apply_state
ChainedScheduler.load_state_dict = SequentialLR.load_state_dict

return ChainedScheduler
