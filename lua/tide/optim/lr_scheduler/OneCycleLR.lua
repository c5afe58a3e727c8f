-- OneCycleLR(opt, {max_lr =, total_steps = | epochs =, steps_per_epoch =, pct_start = 0.3,
-- anneal_strategy = "cos", cycle_momentum = true, base_momentum = 0.85, max_momentum = 0.95,
-- div_factor = 25, final_div_factor = 1e4, three_phase = false}): PyTorch 1.13's 1cycle
-- policy, stepped once per batch. The lr rises from max_lr/div_factor to max_lr over
-- pct_start of the steps, then anneals to initial_lr/final_div_factor; with cycle_momentum the
-- momentum (or Adam's beta1) moves the opposite way. max_lr and the momenta may be lists, one
-- per group. Stepping past total_steps raises.
local LRScheduler = require("tide.optim.lr_scheduler.LRScheduler")
local raise = require("tide.autograd").raise

local OneCycleLR = LRScheduler:extend("OneCycleLR", {
    "max_lr", "total_steps", "epochs", "steps_per_epoch", "pct_start", "anneal_strategy",
    "cycle_momentum", "base_momentum", "max_momentum", "div_factor", "final_div_factor",
    "three_phase",
}, { "total_steps" })
-- PyTorch's state dict also keeps what tide rebuilds from the options
OneCycleLR.torch_only = { _schedule_phases = true, anneal_func = true, cycle_momentum = true,
    use_beta1 = true }

local function anneal_cos(start, stop, pct)
    return stop + (start - stop) / 2.0 * (math.cos(math.pi * pct) + 1)
end

local function anneal_linear(start, stop, pct)
    return (stop - start) * pct + start
end

function OneCycleLR:init(opts)
    if opts.total_steps ~= nil then
        self.total_steps = self:integer(opts, "total_steps", nil, 1)
    elseif opts.epochs ~= nil or opts.steps_per_epoch ~= nil then
        self.total_steps = self:integer(opts, "epochs", nil, 1) *
            self:integer(opts, "steps_per_epoch", nil, 1)
    else
        raise("tide: OneCycleLR: give total_steps, or epochs and steps_per_epoch")
    end
    local pct = self:number(opts, "pct_start", 0.3, function(v)
        return v >= 0 and v <= 1
    end, "a number in [0, 1]")
    local strategy = opts.anneal_strategy or "cos"
    if strategy ~= "cos" and strategy ~= "linear" then
        raise('tide: OneCycleLR: anneal_strategy must be "cos" or "linear", got ' ..
            tostring(strategy))
    end
    self.anneal_strategy = strategy
    -- PyTorch's attribute: anneal_func(start, end, pct); one set later is what steps call
    self.anneal_func = strategy == "cos" and anneal_cos or anneal_linear
    local div = self:number(opts, "div_factor", 25.0)
    local final_div = self:number(opts, "final_div_factor", 1e4)
    local n = self.total_steps
    if opts.three_phase then
        self.phases = {
            { end_step = pct * n - 1, lr = { "initial_lr", "max_lr" },
                momentum = { "max_momentum", "base_momentum" } },
            { end_step = 2 * pct * n - 2, lr = { "max_lr", "initial_lr" },
                momentum = { "base_momentum", "max_momentum" } },
            { end_step = n - 1, lr = { "initial_lr", "min_lr" },
                momentum = { "max_momentum", "max_momentum" } },
        }
    else
        self.phases = {
            { end_step = pct * n - 1, lr = { "initial_lr", "max_lr" },
                momentum = { "max_momentum", "base_momentum" } },
            { end_step = n - 1, lr = { "max_lr", "min_lr" },
                momentum = { "base_momentum", "max_momentum" } },
        }
    end
    local groups = self.optimizer.param_groups
    local max_lrs = self:per_group(opts.max_lr == nil and self:number(opts, "max_lr") or
        opts.max_lr, "max_lr")
    -- check everything before writing into the optimizer's groups
    self.cycle_momentum = opts.cycle_momentum ~= false
    local max_m, base_m
    if self.cycle_momentum then
        local first = groups[1] or {}
        if first.momentum == nil and first.betas == nil then
            raise("tide: OneCycleLR: the optimizer has no momentum nor betas to cycle; pass " ..
                "cycle_momentum = false")
        end
        self.use_beta1 = first.betas ~= nil
        max_m = self:per_group(opts.max_momentum == nil and 0.95 or opts.max_momentum,
            "max_momentum")
        base_m = self:per_group(opts.base_momentum == nil and 0.85 or opts.base_momentum,
            "base_momentum")
    end
    for i, g in ipairs(groups) do
        g.initial_lr = max_lrs[i] / div
        g.max_lr = max_lrs[i]
        g.min_lr = g.initial_lr / final_div
        if self.cycle_momentum then
            if self.use_beta1 then
                g.betas = { max_m[i], g.betas[2] }
            else
                g.momentum = max_m[i]
            end
            g.max_momentum, g.base_momentum = max_m[i], base_m[i]
        end
    end
end

function OneCycleLR:get_lr()
    local step = self.last_epoch
    if step > self.total_steps then
        raise(string.format("tide: OneCycleLR: tried to step %d times; the specified number " ..
            "of total steps is %d", step + 1, self.total_steps))
    end
    local anneal = self.anneal_func
    if anneal == nil or anneal == anneal_cos or anneal == anneal_linear then
        anneal = self.anneal_strategy == "cos" and anneal_cos or anneal_linear
    end
    local r = {}
    for i, g in ipairs(self.optimizer.param_groups) do
        local start, lr, momentum = 0, nil, nil
        for k, ph in ipairs(self.phases) do
            if step <= ph.end_step or k == #self.phases then
                local pct = (step - start) / (ph.end_step - start)
                lr = anneal(g[ph.lr[1]], g[ph.lr[2]], pct)
                if self.cycle_momentum then
                    momentum = anneal(g[ph.momentum[1]], g[ph.momentum[2]], pct)
                end
                break
            end
            start = ph.end_step
        end
        r[i] = lr
        if self.cycle_momentum then
            if self.use_beta1 then
                g.betas = { momentum, g.betas[2] }
            else
                g.momentum = momentum
            end
        end
    end
    return r
end

return OneCycleLR
