-- MultiStepLR(opt, {milestones = {30, 80}, gamma = 0.1}): lr * gamma at each milestone epoch
-- (a milestone listed twice decays twice, as PyTorch's Counter)
local compat = require("tide._compat")
local LRScheduler = require("tide.optim.lr_scheduler.LRScheduler")
local raise = require("tide.autograd").raise

local MultiStepLR = LRScheduler:extend("MultiStepLR", { "milestones", "gamma" },
    { "milestones", "gamma" })

function MultiStepLR:init(opts)
    local m = opts.milestones
    if type(m) ~= "table" then
        raise("tide: MultiStepLR: option milestones is required: a list of epochs such as {30, 80}")
    end
    local milestones = {}
    for i = 1, #m do
        -- an integral float (30.0) is that epoch
        milestones[i] = type(m[i]) == "number" and compat.tointeger(m[i]) or nil
        if milestones[i] == nil then
            raise("tide: MultiStepLR: milestone " .. i .. " is " .. tostring(m[i]) ..
                "; expected an integer epoch")
        end
    end
    self.milestones = milestones
    self.gamma = self:number(opts, "gamma", 0.1)
end

function MultiStepLR:get_lr()
    local count = 0
    for _, e in ipairs(self.milestones) do
        if e == self.last_epoch then
            count = count + 1
        end
    end
    local r = {}
    for i, g in ipairs(self.optimizer.param_groups) do
        r[i] = count == 0 and g.lr or g.lr * self.gamma ^ count
    end
    return r
end

-- the lr at last_epoch from a base lr (LRScheduler:_step_at, SequentialLR's milestones):
-- gamma to the number of milestones <= last_epoch
function MultiStepLR:closed_lr(base)
    local count = 0
    for _, e in ipairs(self.milestones) do
        if e <= self.last_epoch then
            count = count + 1
        end
    end
    return base * self.gamma ^ count
end

-- PyTorch keeps milestones as a Counter {epoch = count}: a state dict of PyTorch's (it has the
-- key _get_lr_called_within_step) gives them as such a map, which becomes tide's sorted list
local function from_counter(who, m)
    local epochs, list = {}, {}
    for e, n in pairs(m) do
        local ei, ni = compat.tointeger(tonumber(e)), compat.tointeger(n)
        if ei == nil or ni == nil or ni < 0 then
            raise(string.format("tide: %s: 'milestones' must map epochs to counts (PyTorch's " ..
                "Counter) or be a list of integers, got %s = %s", who, tostring(e), tostring(n)))
        end
        epochs[#epochs + 1] = ei
        list[ei] = ni
    end
    table.sort(epochs)
    local out = {}
    for _, e in ipairs(epochs) do
        for _ = 1, list[e] do
            out[#out + 1] = e
        end
    end
    return out
end

function MultiStepLR:read_state_dict(sd)
    local m = type(sd) == "table" and sd.milestones
    if type(m) == "table" and sd._get_lr_called_within_step ~= nil then
        local copy = {}
        for k, v in pairs(sd) do
            copy[k] = v
        end
        copy.milestones = from_counter(self.__name .. ":load_state_dict", m)
        sd = copy
    end
    return LRScheduler.read_state_dict(self, sd)
end

return MultiStepLR
