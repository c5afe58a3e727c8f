-- ported_scripts117_spec.lua — huggingface/transformers v4.46.3 (the release pinned in the venv,
-- which gives the reference values; not diffed against v4.30): src/transformers/optimization.py
-- (get_constant_schedule,
-- get_constant_schedule_with_warmup, get_linear_schedule_with_warmup,
-- get_cosine_schedule_with_warmup, get_cosine_with_hard_restarts_schedule_with_warmup,
-- get_polynomial_decay_schedule_with_warmup, get_inverse_sqrt_schedule, each a LambdaLR over a
-- functools.partial of its lr lambda; transformers' own AdamW with correct_bias; Adafactor with
-- its factored second moment), trainer_pt_utils.py's get_parameter_names, trainer.py's
-- get_decay_parameter_names and the grouping of Trainer.create_optimizer, and trainer_utils.py's
-- set_seed, ported line for line on a tiny model (Embedding 10x8, LayerNorm, Linear 8x8,
-- Linear 8x3) with deterministic weights. The Python line stands above each Lua line that
-- differs from it. Values: PyTorch 1.13 running the same transformers code.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local LambdaLR = optim.lr_scheduler.LambdaLR
local partial = tide.utils.partial

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list
local assert_finite = ported.assert_finite

---------------------------------------------------------------------------------------------
-- 1. trainer_utils.py
---------------------------------------------------------------------------------------------
-- def set_seed(seed: int, deterministic: bool = False):
local function set_seed(seed, deterministic)
    -- random.seed(seed)
    math.randomseed(seed)
    -- GAP: np.random.seed(seed): no numpy in Lua
    tide.manual_seed(seed)
    -- torch.cuda.manual_seed_all(seed)
    tide.cuda.manual_seed_all(seed)
    if deterministic then
        -- torch.use_deterministic_algorithms(True)
        tide.use_deterministic_algorithms(true)
    end
    -- (mlu, musa, npu, xpu and tensorflow seeds: not available, left out as set_seed does)
end

---------------------------------------------------------------------------------------------
-- 2. optimization.py: the schedules
---------------------------------------------------------------------------------------------
-- def _get_constant_lambda(_=None):
local function _get_constant_lambda(_)
    return 1
end

-- def get_constant_schedule(optimizer: Optimizer, last_epoch: int = -1):
local function get_constant_schedule(optimizer, last_epoch)
    -- return LambdaLR(optimizer, _get_constant_lambda, last_epoch=last_epoch)
    return LambdaLR(optimizer, _get_constant_lambda, { last_epoch = last_epoch or -1 })
end

-- def _get_constant_schedule_with_warmup_lr_lambda(current_step: int, *, num_warmup_steps: int):
local function _get_constant_schedule_with_warmup_lr_lambda(current_step, kw)
    local num_warmup_steps = kw.num_warmup_steps
    if current_step < num_warmup_steps then
        -- return float(current_step) / float(max(1.0, num_warmup_steps))
        return current_step / math.max(1.0, num_warmup_steps)
    end
    return 1.0
end

-- def get_constant_schedule_with_warmup(optimizer, num_warmup_steps, last_epoch=-1):
local function get_constant_schedule_with_warmup(optimizer, num_warmup_steps, last_epoch)
    -- lr_lambda = partial(_get_constant_schedule_with_warmup_lr_lambda,
    --                     num_warmup_steps=num_warmup_steps)
    local lr_lambda = partial(_get_constant_schedule_with_warmup_lr_lambda,
        { num_warmup_steps = num_warmup_steps })
    return LambdaLR(optimizer, lr_lambda, { last_epoch = last_epoch or -1 })
end

-- def _get_linear_schedule_with_warmup_lr_lambda(current_step, *, num_warmup_steps,
--                                                num_training_steps):
local function _get_linear_schedule_with_warmup_lr_lambda(current_step, kw)
    local num_warmup_steps, num_training_steps = kw.num_warmup_steps, kw.num_training_steps
    if current_step < num_warmup_steps then
        return current_step / math.max(1, num_warmup_steps)
    end
    -- return max(0.0, float(num_training_steps - current_step) /
    --            float(max(1, num_training_steps - num_warmup_steps)))
    return math.max(0.0, (num_training_steps - current_step) /
        math.max(1, num_training_steps - num_warmup_steps))
end

-- def get_linear_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps,
--                                     last_epoch=-1):
local function get_linear_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps,
                                               last_epoch)
    local lr_lambda = partial(_get_linear_schedule_with_warmup_lr_lambda, {
        num_warmup_steps = num_warmup_steps,
        num_training_steps = num_training_steps,
    })
    -- return LambdaLR(optimizer, lr_lambda, last_epoch)
    return LambdaLR(optimizer, lr_lambda, { last_epoch = last_epoch or -1 })
end

-- def _get_cosine_schedule_with_warmup_lr_lambda(current_step, *, num_warmup_steps,
--                                                num_training_steps, num_cycles):
local function _get_cosine_schedule_with_warmup_lr_lambda(current_step, kw)
    local num_warmup_steps, num_training_steps = kw.num_warmup_steps, kw.num_training_steps
    if current_step < num_warmup_steps then
        return current_step / math.max(1, num_warmup_steps)
    end
    -- progress = float(current_step - num_warmup_steps) /
    --            float(max(1, num_training_steps - num_warmup_steps))
    local progress = (current_step - num_warmup_steps) /
        math.max(1, num_training_steps - num_warmup_steps)
    -- return max(0.0, 0.5 * (1.0 + math.cos(math.pi * float(num_cycles) * 2.0 * progress)))
    return math.max(0.0, 0.5 * (1.0 + math.cos(math.pi * kw.num_cycles * 2.0 * progress)))
end

-- def get_cosine_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps,
--                                     num_cycles: float = 0.5, last_epoch: int = -1):
local function get_cosine_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps,
                                               num_cycles, last_epoch)
    local lr_lambda = partial(_get_cosine_schedule_with_warmup_lr_lambda, {
        num_warmup_steps = num_warmup_steps,
        num_training_steps = num_training_steps,
        -- num_cycles=num_cycles,
        num_cycles = num_cycles or 0.5,
    })
    return LambdaLR(optimizer, lr_lambda, { last_epoch = last_epoch or -1 })
end

-- def _get_cosine_with_hard_restarts_schedule_with_warmup_lr_lambda(
--     current_step, *, num_warmup_steps, num_training_steps, num_cycles):
local function _get_cosine_with_hard_restarts_schedule_with_warmup_lr_lambda(current_step, kw)
    local num_warmup_steps, num_training_steps = kw.num_warmup_steps, kw.num_training_steps
    if current_step < num_warmup_steps then
        return current_step / math.max(1, num_warmup_steps)
    end
    local progress = (current_step - num_warmup_steps) /
        math.max(1, num_training_steps - num_warmup_steps)
    if progress >= 1.0 then
        return 0.0
    end
    -- return max(0.0, 0.5 * (1.0 + math.cos(math.pi * ((float(num_cycles) * progress) % 1.0))))
    return math.max(0.0, 0.5 * (1.0 + math.cos(math.pi * ((kw.num_cycles * progress) % 1.0))))
end

-- def get_cosine_with_hard_restarts_schedule_with_warmup(
--     optimizer, num_warmup_steps, num_training_steps, num_cycles: int = 1, last_epoch=-1):
local function get_cosine_with_hard_restarts_schedule_with_warmup(optimizer, num_warmup_steps,
    num_training_steps, num_cycles, last_epoch)
    local lr_lambda = partial(_get_cosine_with_hard_restarts_schedule_with_warmup_lr_lambda, {
        num_warmup_steps = num_warmup_steps,
        num_training_steps = num_training_steps,
        num_cycles = num_cycles or 1,
    })
    return LambdaLR(optimizer, lr_lambda, { last_epoch = last_epoch or -1 })
end

-- def _get_polynomial_decay_schedule_with_warmup_lr_lambda(current_step, *, num_warmup_steps,
--     num_training_steps, lr_end, power, lr_init):
local function _get_polynomial_decay_schedule_with_warmup_lr_lambda(current_step, kw)
    local num_warmup_steps, num_training_steps = kw.num_warmup_steps, kw.num_training_steps
    local lr_end, power, lr_init = kw.lr_end, kw.power, kw.lr_init
    if current_step < num_warmup_steps then
        return current_step / math.max(1, num_warmup_steps)
    -- elif current_step > num_training_steps:
    elseif current_step > num_training_steps then
        return lr_end / lr_init -- as LambdaLR multiplies by lr_init
    else
        local lr_range = lr_init - lr_end
        local decay_steps = num_training_steps - num_warmup_steps
        local pct_remaining = 1 - (current_step - num_warmup_steps) / decay_steps
        -- decay = lr_range * pct_remaining**power + lr_end
        local decay = lr_range * pct_remaining ^ power + lr_end
        return decay / lr_init -- as LambdaLR multiplies by lr_init
    end
end

-- def get_polynomial_decay_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps,
--                                               lr_end=1e-7, power=1.0, last_epoch=-1):
local function get_polynomial_decay_schedule_with_warmup(optimizer, num_warmup_steps,
    num_training_steps, lr_end, power, last_epoch)
    lr_end, power = lr_end or 1e-7, power or 1.0
    local lr_init = optimizer.defaults["lr"]
    if not (lr_init > lr_end) then
        -- raise ValueError(f"lr_end ({lr_end}) must be smaller than initial lr ({lr_init})")
        error(("lr_end (%s) must be smaller than initial lr (%s)"):format(lr_end, lr_init), 2)
    end
    local lr_lambda = partial(_get_polynomial_decay_schedule_with_warmup_lr_lambda, {
        num_warmup_steps = num_warmup_steps,
        num_training_steps = num_training_steps,
        lr_end = lr_end,
        power = power,
        lr_init = lr_init,
    })
    return LambdaLR(optimizer, lr_lambda, { last_epoch = last_epoch or -1 })
end

-- def _get_inverse_sqrt_schedule_lr_lambda(current_step, *, num_warmup_steps, timescale=None):
local function _get_inverse_sqrt_schedule_lr_lambda(current_step, kw)
    local num_warmup_steps, timescale = kw.num_warmup_steps, kw.timescale
    if current_step < num_warmup_steps then
        return current_step / math.max(1, num_warmup_steps)
    end
    local shift = timescale - num_warmup_steps
    local decay = 1.0 / math.sqrt((current_step + shift) / timescale)
    return decay
end

-- def get_inverse_sqrt_schedule(optimizer, num_warmup_steps, timescale=None, last_epoch=-1):
local function get_inverse_sqrt_schedule(optimizer, num_warmup_steps, timescale, last_epoch)
    if timescale == nil then
        -- timescale = num_warmup_steps or 10_000
        timescale = (num_warmup_steps ~= 0 and num_warmup_steps) or 10000
    end
    local lr_lambda = partial(_get_inverse_sqrt_schedule_lr_lambda,
        { num_warmup_steps = num_warmup_steps, timescale = timescale })
    return LambdaLR(optimizer, lr_lambda, { last_epoch = last_epoch or -1 })
end

---------------------------------------------------------------------------------------------
-- 3. optimization.py: AdamW (transformers' own) and Adafactor
---------------------------------------------------------------------------------------------
-- class AdamW(Optimizer):
local AdamW = optim.Optimizer:extend("HFAdamW")
-- def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.0,
--              correct_bias=True, no_deprecation_warning=False):
function AdamW:init(params, opts)
    opts = opts or {}
    local lr, betas, eps = opts.lr or 1e-3, opts.betas or { 0.9, 0.999 }, opts.eps or 1e-6
    local weight_decay, correct_bias = opts.weight_decay or 0.0, opts.correct_bias
    if correct_bias == nil then correct_bias = true end
    -- GAP: the FutureWarning for no_deprecation_warning=False: tide has no public warnings
    -- module (tide._warn is internal), and the warning says nothing about the values
    if lr < 0.0 then
        error(("Invalid learning rate: %s - should be >= 0.0"):format(lr), 2)
    end
    -- if not 0.0 <= betas[0] < 1.0:
    if not (0.0 <= betas[1] and betas[1] < 1.0) then
        error(("Invalid beta parameter: %s - should be in [0.0, 1.0)"):format(betas[1]), 2)
    end
    if not (0.0 <= betas[2] and betas[2] < 1.0) then
        error(("Invalid beta parameter: %s - should be in [0.0, 1.0)"):format(betas[2]), 2)
    end
    if not (0.0 <= eps) then
        error(("Invalid epsilon value: %s - should be >= 0.0"):format(eps), 2)
    end
    local defaults = { lr = lr, betas = betas, eps = eps, weight_decay = weight_decay,
        correct_bias = correct_bias }
    -- super().__init__(params, defaults)
    optim.Optimizer.init(self, params, defaults)
end

-- @torch.no_grad()
-- def step(self, closure: Callable = None):
AdamW.step = tide.no_grad()(function(self, closure)
    local loss = nil
    if closure ~= nil then
        loss = closure()
    end
    for _, group in ipairs(self.param_groups) do
        for _, p in ipairs(group["params"]) do
            -- if p.grad is None: continue
            if p.grad ~= nil then
                local grad = p.grad
                if grad.is_sparse then
                    error("Adam does not support sparse gradients, please consider " ..
                        "SparseAdam instead")
                end
                local state = self.state[p]
                -- State initialization
                -- if len(state) == 0:
                if next(state) == nil then
                    state["step"] = 0
                    -- Exponential moving average of gradient values
                    state["exp_avg"] = tide.zeros_like(p)
                    -- Exponential moving average of squared gradient values
                    state["exp_avg_sq"] = tide.zeros_like(p)
                end
                local exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                -- beta1, beta2 = group["betas"]
                local beta1, beta2 = group["betas"][1], group["betas"][2]
                -- state["step"] += 1
                state["step"] = state["step"] + 1
                -- Decay the first and second moment running average coefficient
                -- exp_avg.mul_(beta1).add_(grad, alpha=(1.0 - beta1))
                exp_avg:mul_(beta1):add_(grad, { alpha = 1.0 - beta1 })
                -- exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1.0 - beta2)
                exp_avg_sq:mul_(beta2):addcmul_(grad, grad, { value = 1.0 - beta2 })
                local denom = exp_avg_sq:sqrt():add_(group["eps"])
                local step_size = group["lr"]
                if group["correct_bias"] then -- No bias correction for Bert
                    -- bias_correction1 = 1.0 - beta1 ** state["step"]
                    local bias_correction1 = 1.0 - beta1 ^ state["step"]
                    local bias_correction2 = 1.0 - beta2 ^ state["step"]
                    step_size = step_size * math.sqrt(bias_correction2) / bias_correction1
                end
                -- p.addcdiv_(exp_avg, denom, value=-step_size)
                p:addcdiv_(exp_avg, denom, { value = -step_size })
                -- Add weight decay at the end (fixed version)
                if group["weight_decay"] > 0.0 then
                    -- p.add_(p, alpha=(-group["lr"] * group["weight_decay"]))
                    p:add_(p, { alpha = -group["lr"] * group["weight_decay"] })
                end
            end
        end
    end
    return loss
end)

-- class Adafactor(Optimizer):
local Adafactor = optim.Optimizer:extend("Adafactor")
-- def __init__(self, params, lr=None, eps=(1e-30, 1e-3), clip_threshold=1.0, decay_rate=-0.8,
--              beta1=None, weight_decay=0.0, scale_parameter=True, relative_step=True,
--              warmup_init=False):
function Adafactor:init(params, opts)
    opts = opts or {}
    local function default(v, d)
        if v == nil then return d end
        return v
    end
    local lr, eps = opts.lr, opts.eps or { 1e-30, 1e-3 }
    local scale_parameter = default(opts.scale_parameter, true)
    local relative_step = default(opts.relative_step, true)
    local warmup_init = default(opts.warmup_init, false)
    -- if lr is not None and relative_step:
    if lr ~= nil and relative_step then
        error("Cannot combine manual `lr` and `relative_step=True` options", 2)
    end
    if warmup_init and not relative_step then
        error("`warmup_init=True` requires `relative_step=True`", 2)
    end
    -- GAP: a Lua table drops a nil value: "lr": None is a missing key, and Optimizer.init
    -- fills group["lr"] from defaults only when present (which it is not, as None)
    local defaults = {
        lr = lr,
        eps = eps,
        clip_threshold = opts.clip_threshold or 1.0,
        decay_rate = opts.decay_rate or -0.8,
        beta1 = opts.beta1,
        weight_decay = opts.weight_decay or 0.0,
        scale_parameter = scale_parameter,
        relative_step = relative_step,
        warmup_init = warmup_init,
    }
    optim.Optimizer.init(self, params, defaults)
end

-- @staticmethod
-- def _get_lr(param_group, param_state):
function Adafactor._get_lr(param_group, param_state)
    local rel_step_sz = param_group["lr"]
    if param_group["relative_step"] then
        -- min_step = 1e-6 * param_state["step"] if param_group["warmup_init"] else 1e-2
        local min_step = param_group["warmup_init"] and 1e-6 * param_state["step"] or 1e-2
        rel_step_sz = math.min(min_step, 1.0 / math.sqrt(param_state["step"]))
    end
    local param_scale = 1.0
    if param_group["scale_parameter"] then
        -- param_scale = max(param_group["eps"][1], param_state["RMS"])
        -- GAP: math.max takes numbers, not Python's tensor comparison: RMS read with :item()
        param_scale = math.max(param_group["eps"][2], param_state["RMS"]:item())
    end
    return param_scale * rel_step_sz
end

-- def _get_options(param_group, param_shape):
function Adafactor._get_options(param_group, param_shape)
    -- factored = len(param_shape) >= 2
    local factored = #param_shape >= 2
    local use_first_moment = param_group["beta1"] ~= nil
    return factored, use_first_moment
end

-- def _rms(tensor):
function Adafactor._rms(tensor)
    -- return tensor.norm(2) / (tensor.numel() ** 0.5)
    return tensor:norm(2) / (tensor:numel() ^ 0.5)
end

-- def _approx_sq_grad(exp_avg_sq_row, exp_avg_sq_col):
function Adafactor._approx_sq_grad(exp_avg_sq_row, exp_avg_sq_col)
    -- r_factor = (exp_avg_sq_row / exp_avg_sq_row.mean(dim=-1, keepdim=True)).rsqrt_()
    --     .unsqueeze(-1)
    local r_factor = (exp_avg_sq_row / exp_avg_sq_row:mean({ dim = -1, keepdim = true }))
        :rsqrt_():unsqueeze(-1)
    local c_factor = exp_avg_sq_col:unsqueeze(-2):rsqrt()
    return tide.mul(r_factor, c_factor)
end

local function half(dtype)
    -- p.dtype in {torch.float16, torch.bfloat16}
    return dtype == tide.float16 or dtype == tide.bfloat16
end

-- @torch.no_grad()
-- def step(self, closure=None):
Adafactor.step = tide.no_grad()(function(self, closure)
    local loss = nil
    if closure ~= nil then
        loss = closure()
    end
    for _, group in ipairs(self.param_groups) do
        for _, p in ipairs(group["params"]) do
            if p.grad ~= nil then
                local grad = p.grad
                if half(grad.dtype) then
                    grad = grad:float()
                end
                if grad.is_sparse then
                    error("Adafactor does not support sparse gradients.")
                end
                local state = self.state[p]
                local grad_shape = grad.shape
                -- factored, use_first_moment = self._get_options(group, grad_shape)
                local factored, use_first_moment = Adafactor._get_options(group, grad_shape)
                -- State Initialization
                if next(state) == nil then
                    state["step"] = 0
                    if use_first_moment then
                        -- Exponential moving average of gradient values
                        state["exp_avg"] = tide.zeros_like(grad)
                    end
                    if factored then
                        -- state["exp_avg_sq_row"] = torch.zeros(grad_shape[:-1]).to(grad)
                        state["exp_avg_sq_row"] = tide.zeros(grad_shape[{ { 1, -2 } }]):to(grad)
                        -- state["exp_avg_sq_col"] = torch.zeros(grad_shape[:-2] +
                        --                                       grad_shape[-1:]).to(grad)
                        state["exp_avg_sq_col"] = tide.zeros(grad_shape[{ { 1, -3 } }] +
                            grad_shape[{ { -1 } }]):to(grad)
                    else
                        state["exp_avg_sq"] = tide.zeros_like(grad)
                    end
                    state["RMS"] = 0
                else
                    if use_first_moment then
                        state["exp_avg"] = state["exp_avg"]:to(grad)
                    end
                    if factored then
                        state["exp_avg_sq_row"] = state["exp_avg_sq_row"]:to(grad)
                        state["exp_avg_sq_col"] = state["exp_avg_sq_col"]:to(grad)
                    else
                        state["exp_avg_sq"] = state["exp_avg_sq"]:to(grad)
                    end
                end

                local p_data_fp32 = p
                if half(p.dtype) then
                    p_data_fp32 = p_data_fp32:float()
                end

                state["step"] = state["step"] + 1
                -- state["RMS"] = self._rms(p_data_fp32)
                state["RMS"] = Adafactor._rms(p_data_fp32)
                local lr = Adafactor._get_lr(group, state)

                -- beta2t = 1.0 - math.pow(state["step"], group["decay_rate"])
                local beta2t = 1.0 - state["step"] ^ group["decay_rate"]
                -- update = (grad**2) + group["eps"][0]
                local update = (grad ^ 2) + group["eps"][1]
                if factored then
                    local exp_avg_sq_row = state["exp_avg_sq_row"]
                    local exp_avg_sq_col = state["exp_avg_sq_col"]

                    -- exp_avg_sq_row.mul_(beta2t).add_(update.mean(dim=-1), alpha=(1.0 - beta2t))
                    exp_avg_sq_row:mul_(beta2t):add_(update:mean({ dim = -1 }),
                        { alpha = 1.0 - beta2t })
                    exp_avg_sq_col:mul_(beta2t):add_(update:mean({ dim = -2 }),
                        { alpha = 1.0 - beta2t })

                    -- Approximation of exponential moving average of square of gradient
                    update = Adafactor._approx_sq_grad(exp_avg_sq_row, exp_avg_sq_col)
                    update:mul_(grad)
                else
                    local exp_avg_sq = state["exp_avg_sq"]

                    exp_avg_sq:mul_(beta2t):add_(update, { alpha = 1.0 - beta2t })
                    update = exp_avg_sq:rsqrt():mul_(grad)
                end

                -- update.div_((self._rms(update) / group["clip_threshold"]).clamp_(min=1.0))
                update:div_((Adafactor._rms(update) / group["clip_threshold"])
                    :clamp_({ min = 1.0 }))
                update:mul_(lr)

                if use_first_moment then
                    local exp_avg = state["exp_avg"]
                    -- exp_avg.mul_(group["beta1"]).add_(update, alpha=(1 - group["beta1"]))
                    exp_avg:mul_(group["beta1"]):add_(update, { alpha = 1 - group["beta1"] })
                    update = exp_avg
                end

                if group["weight_decay"] ~= 0 then
                    -- p_data_fp32.add_(p_data_fp32, alpha=(-group["weight_decay"] * lr))
                    p_data_fp32:add_(p_data_fp32, { alpha = -group["weight_decay"] * lr })
                end

                -- p_data_fp32.add_(-update)
                p_data_fp32:add_(-update)

                if half(p.dtype) then
                    p:copy_(p_data_fp32)
                end
            end
        end
    end
    return loss
end)

---------------------------------------------------------------------------------------------
-- 4. trainer_pt_utils.py get_parameter_names, Trainer's decay grouping
---------------------------------------------------------------------------------------------
-- def get_parameter_names(model, forbidden_layer_types):
local function get_parameter_names(model, forbidden_layer_types)
    local result = {}
    -- for name, child in model.named_children():
    -- (the generic for over the listing keeps registration order on Lua 5.1 too)
    for name, child in model:named_children() do
        -- result += [f"{name}.{n}" for n in get_parameter_names(child, forbidden_layer_types)
        --            if not isinstance(child, tuple(forbidden_layer_types))]
        for _, n in ipairs(get_parameter_names(child, forbidden_layer_types)) do
            if not tide.isinstance(child, forbidden_layer_types) then
                result[#result + 1] = name .. "." .. n
            end
        end
    end
    -- Add model specific parameters (defined with nn.Parameter) since they are not in any child.
    -- result += list(model._parameters.keys())
    -- GAP: no model._parameters: the module's own parameters are named_parameters(recurse=False)
    for n in model:named_parameters({ recurse = false }) do
        result[#result + 1] = n
    end
    return result
end

-- ALL_LAYERNORM_LAYERS = [nn.LayerNorm]  (pytorch_utils.py)
local ALL_LAYERNORM_LAYERS = { nn.LayerNorm }

-- def get_decay_parameter_names(self, model) -> List[str]:
local function get_decay_parameter_names(model)
    local decay_parameters = get_parameter_names(model, ALL_LAYERNORM_LAYERS)
    -- decay_parameters = [name for name in decay_parameters if "bias" not in name]
    local out = {}
    for _, name in ipairs(decay_parameters) do
        if not name:find("bias", 1, true) then
            out[#out + 1] = name
        end
    end
    return out
end

-- `n in decay_parameters` on a list
local function contains(list, x)
    for _, v in ipairs(list) do
        if v == x then return true end
    end
    return false
end

-- create_optimizer's optimizer_grouped_parameters (self.args.weight_decay is weight_decay)
local function grouped_parameters(opt_model, weight_decay)
    local decay_parameters = get_decay_parameter_names(opt_model)
    local decay, no_decay = {}, {}
    -- [p for n, p in opt_model.named_parameters() if (n in decay_parameters and p.requires_grad)]
    for n, p in opt_model:named_parameters() do
        if contains(decay_parameters, n) and p.requires_grad then
            decay[#decay + 1] = p
        elseif not contains(decay_parameters, n) and p.requires_grad then
            no_decay[#no_decay + 1] = p
        end
    end
    return {
        { params = decay, weight_decay = weight_decay },
        { params = no_decay, weight_decay = 0.0 },
    }
end

---------------------------------------------------------------------------------------------
-- 5. the tiny model and the runs (the reference script's, not transformers')
---------------------------------------------------------------------------------------------
local Tiny = nn.Module:extend("Tiny")
function Tiny:init()
    self.emb = nn.Embedding(10, 8)
    self.ln = nn.LayerNorm(8)
    self.fc1 = nn.Linear(8, 8)
    self.fc2 = nn.Linear(8, 3)
end

function Tiny:forward(ids)
    local x = self.ln(self.emb(ids))
    return self.fc2(tide.tanh(self.fc1(x)))
end

-- weights sin(0.37 i + k) / 2 for the k-th parameter (1-based), i = 0..numel-1, as the script's
local function make_model()
    set_seed(0)
    local m = Tiny()
    tide.no_grad(function()
        local k = 0
        for _, p in m:named_parameters() do
            k = k + 1
            local v = tide.sin(tide.arange(0, p:numel()) * 0.37 + k) * 0.5
            p:copy_(v:view(p.shape))
        end
    end)
    return m
end

local ids = tide.tensor({ 1, 3, 5, 7, 3, 0 }, { dtype = tide.int64 }) + 1 -- 1-based rows
local tgt = tide.tensor({ 0, 2, 1, 1, 0, 2 }, { dtype = tide.int64 }) + 1 -- 1-based classes

-- 3 steps: the losses, and for each parameter's change: sum, abs sum, sum weighted by index
local function run(make_opt, make_sched, wd)
    local m = make_model()
    local p0 = {}
    for i, p in ipairs(m:parameters()) do p0[i] = p:detach():clone() end
    local opt = make_opt(grouped_parameters(m, wd))
    local s = make_sched and make_sched(opt)
    local losses = {}
    for _ = 1, 3 do
        local loss = F.cross_entropy(m(ids), tgt)
        losses[#losses + 1] = loss:item()
        loss:backward()
        opt:step()
        opt:zero_grad()
        if s then s:step() end
    end
    local stats = {}
    for i, p in ipairs(m:parameters()) do
        local d = (p:detach() - p0[i]):flatten()
        stats[#stats + 1] = d:sum():item()
        stats[#stats + 1] = d:abs():sum():item()
        stats[#stats + 1] = (d * tide.arange(0, d:numel())):sum():item()
    end
    return losses, stats
end

-- relative agreement, for values of any size (Adafactor's warmup_init changes are ~1e-5)
local function assert_rel_list(want, got, rtol, what)
    assert(#want == #got, what .. ": count")
    local scale = 0
    for i = 1, #want do scale = math.max(scale, math.abs(want[i])) end
    for i = 1, #want do
        assert(math.abs(got[i] - want[i]) <= rtol * scale, string.format(
            "%s[%d]: %.8g, PyTorch %.8g", what, i, got[i], want[i]))
    end
end

-- PyTorch 1.13 + transformers 4.46.3 (/tmp script: the same model, weights and steps)
local LOSSES0 = 1.2074281
local WANT = {
    adamw = {
        losses = { 1.2074281, 1.2074281, 1.15296793 },
        stats = { 0.00372011214, 0.604122043, 0.00452816486, 0.0593272597, 0.117222324,
            0.320193648, -0.0823536515, 0.112345636, -0.409724385, 0.211358368, 0.950131178,
            8.51572895, -0.0602833927, 0.118954092, -0.388137549, 0.0564156547, 0.36052078,
            0.918028355, 0.0147515833, 0.0444381535, -0.0147977471 },
    },
    adamw_nobias = {
        losses = { 1.2074281, 1.2074281, 1.05480564 },
        stats = { 0.0472790003, 2.35640287, 0.916333675, 0.257413983, 0.446313947, 1.21881759,
            -0.299662381, 0.433204532, -1.58447695, 0.959269047, 4.00949669, 36.5651321,
            -0.280947775, 0.487584621, -1.65022361, 0.231336161, 1.51431048, 3.69153976,
            0.0516048968, 0.162557811, -0.0511864126 },
    },
    adafactor_lr = {
        losses = { 1.2074281, 1.2074281, 1.20133126 },
        stats = { -0.00780609995, 0.114055917, 0.00350049138, 0.00959752873, 0.0191081055,
            0.0524878465, -0.0141550526, 0.0189598128, -0.0667759553, 0.0219950452,
            0.131673694, 0.687042832, -0.00959058851, 0.0191471204, -0.0622438118,
            -0.00155578554, 0.0562253594, 0.0284739286, 0.00238600373, 0.00716647506,
            -0.00238630176 },
    },
    adafactor_rel = {
        losses = { 1.2074281, 1.20742571, 1.20742142 },
        stats = { -6.79120421e-06, 8.34725797e-05, -8.78423452e-05, 8.31484795e-06,
            1.65998936e-05, 4.57465649e-05, -1.28746033e-05, 1.719594e-05, -6.00963831e-05,
            1.94553286e-05, 0.000112762675, 0.000699376687, -8.16583633e-06, 1.6272068e-05,
            -5.28991222e-05, 1.28149986e-06, 4.75049019e-05, 5.37857413e-05, 2.56299973e-06,
            7.68899918e-06, -2.56299973e-06 },
    },
    adafactor_rel_nowarm = {
        losses = { 1.2074281, 1.18645835, 1.16735816 },
        stats = { -0.0330553427, 0.403559029, -0.351246119, 0.0398561507, 0.0748158544,
            0.199509919, -0.0462541282, 0.0778950155, -0.275646359, 0.110973842, 0.568231463,
            4.0243268, -0.0409404337, 0.078223139, -0.256942868, 0.00570807233, 0.230245262,
            0.259564459, 0.0116733909, 0.0358820558, -0.0118068159 },
    },
}

local function check_run(name, make_opt, make_sched, wd)
    local losses, stats = run(make_opt, make_sched, wd)
    for _, l in ipairs(losses) do assert_finite(l, name .. " loss") end
    assert_close_list(WANT[name].losses, losses, 1e-5, name .. " losses")
    assert_rel_list(WANT[name].stats, stats, 1e-4, name .. " stats")
end

---------------------------------------------------------------------------------------------
describe("transformers optimization.py / Trainer optimizer glue", function()
    it("get_parameter_names skips LayerNorm; the decay group holds the weights without bias",
        function()
            local m = make_model()
            assert.are.same({ "emb.weight", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias" },
                get_parameter_names(m, ALL_LAYERNORM_LAYERS))
            assert.are.same({ "emb.weight", "fc1.weight", "fc2.weight" },
                get_decay_parameter_names(m))
            local groups = grouped_parameters(m, 0.1)
            assert.are.equal(3, #groups[1].params)
            assert.are.equal(4, #groups[2].params)
            assert.are.equal(m.emb.weight, groups[1].params[1])
            assert.are.equal(m.ln.weight, groups[2].params[1])
            local opt = AdamW(groups, { lr = 1e-2 })
            assert.are.equal(0.1, opt.param_groups[1].weight_decay)
            assert.are.equal(0.0, opt.param_groups[2].weight_decay)
            assert.are.equal(true, opt.param_groups[2].correct_bias)
            assert.are.equal(1e-6, opt.param_groups[1].eps)
        end)

    it("set_seed repeats the draws", function()
        set_seed(42)
        local a = tide.randn(4)
        set_seed(42)
        assert.is_true(tide.equal(a, tide.randn(4)))
        local m1, m2 = make_model(), make_model()
        assert_close_list({ LOSSES0 }, { F.cross_entropy(m1(ids), tgt):item() }, 1e-6, "loss")
        assert.is_true(tide.equal(m1.fc1.weight, m2.fc1.weight))
    end)

    it("each schedule's lr over 12 steps is PyTorch's", function()
        -- PyTorch's get_last_lr()[0] before each of 12 steps, base lr 0.1, warmup 3, 10 steps
        local want = {
            constant = { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 },
            constant_warmup = { 0, 0.0333333333, 0.0666666667, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1,
                0.1, 0.1, 0.1 },
            linear = { 0, 0.0333333333, 0.0666666667, 0.1, 0.0857142857, 0.0714285714,
                0.0571428571, 0.0428571429, 0.0285714286, 0.0142857143, 0, 0 },
            cosine = { 0, 0.0333333333, 0.0666666667, 0.1, 0.0950484434, 0.0811744901,
                0.0611260467, 0.0388739533, 0.0188255099, 0.0049515566, 0, 0.0049515566 },
            cosine_1_5 = { 0, 0.0333333333, 0.0666666667, 0.1, 0.0611260467, 0.0049515566,
                0.0188255099, 0.0811744901, 0.0950484434, 0.0388739533, 0, 0.0388739533 },
            hard_restarts = { 0, 0.0333333333, 0.0666666667, 0.1, 0.0811744901, 0.0388739533,
                0.0049515566, 0.0950484434, 0.0611260467, 0.0188255099, 0, 0 },
            polynomial = { 0, 0.0333333333, 0.0666666667, 0.1, 0.0737346939, 0.0515102041,
                0.0333265306, 0.0191836735, 0.00908163265, 0.00302040816, 0.001, 0.001 },
            inverse_sqrt = { 0, 0.0333333333, 0.0666666667, 0.1, 0.0866025404, 0.0774596669,
                0.0707106781, 0.0654653671, 0.0612372436, 0.0577350269, 0.0547722558,
                0.0522232968 },
            inverse_sqrt_ts = { 0, 0.0333333333, 0.0666666667, 0.1, 0.0912870929, 0.0845154255,
                0.0790569415, 0.0745355992, 0.0707106781, 0.0674199862, 0.0645497224,
                0.0620173673 },
        }
        local makers = {
            constant = function(o) return get_constant_schedule(o) end,
            constant_warmup = function(o) return get_constant_schedule_with_warmup(o, 3) end,
            linear = function(o) return get_linear_schedule_with_warmup(o, 3, 10) end,
            cosine = function(o) return get_cosine_schedule_with_warmup(o, 3, 10) end,
            cosine_1_5 = function(o) return get_cosine_schedule_with_warmup(o, 3, 10, 1.5) end,
            hard_restarts = function(o)
                return get_cosine_with_hard_restarts_schedule_with_warmup(o, 3, 10, 2)
            end,
            polynomial = function(o)
                return get_polynomial_decay_schedule_with_warmup(o, 3, 10, 1e-3, 2.0)
            end,
            inverse_sqrt = function(o) return get_inverse_sqrt_schedule(o, 3) end,
            inverse_sqrt_ts = function(o) return get_inverse_sqrt_schedule(o, 3, 5) end,
        }
        for name, make in pairs(makers) do
            local p = nn.Parameter(tide.zeros(1))
            local opt = optim.SGD({ p }, { lr = 0.1 })
            local s = make(opt)
            local got = {}
            for _ = 1, 12 do
                got[#got + 1] = s:get_last_lr()[1]
                opt:step()
                s:step()
            end
            assert_close_list(want[name], got, 1e-8, name)
            assert.are.equal(s:get_last_lr()[1], opt.param_groups[1].lr)
        end
        -- lr_end must be below the optimizer's lr, as transformers raises
        local opt = optim.SGD({ nn.Parameter(tide.zeros(1)) }, { lr = 1e-8 })
        assert.has_error(function() get_polynomial_decay_schedule_with_warmup(opt, 1, 3) end,
            "lr_end (1e-07) must be smaller than initial lr (1e-08)")
    end)

    it("3 steps of transformers' AdamW (correct_bias on and off) under a linear warmup",
        function()
            check_run("adamw", function(g) return AdamW(g, { lr = 1e-2 }) end,
                function(o) return get_linear_schedule_with_warmup(o, 1, 3) end, 0.1)
            check_run("adamw_nobias",
                function(g) return AdamW(g, { lr = 1e-2, correct_bias = false }) end,
                function(o) return get_linear_schedule_with_warmup(o, 1, 3) end, 0.1)
        end)

    it("3 steps of Adafactor: a fixed lr under a cosine warmup, and both relative_step modes",
        function()
            check_run("adafactor_lr", function(g)
                return Adafactor(g, { lr = 1e-2, relative_step = false,
                    scale_parameter = false, beta1 = 0.9 })
            end, function(o) return get_cosine_schedule_with_warmup(o, 1, 3) end, 0.1)
            check_run("adafactor_rel", function(g)
                return Adafactor(g, { relative_step = true, warmup_init = true,
                    scale_parameter = true })
            end, nil, 0.0)
            check_run("adafactor_rel_nowarm", function(g)
                return Adafactor(g, { relative_step = true, warmup_init = false,
                    scale_parameter = true })
            end, nil, 0.0)
            -- the factored second moment: a row and a column vector for a matrix
            local m = make_model()
            local opt = Adafactor(m:parameters())
            F.cross_entropy(m(ids), tgt):backward()
            opt:step()
            local st = opt.state[m.emb.weight]
            assert.are.same({ 10 }, st.exp_avg_sq_row.shape)
            assert.are.same({ 8 }, st.exp_avg_sq_col.shape)
            assert.is_nil(st.exp_avg_sq)
            assert.are.same({ 8 }, opt.state[m.ln.weight].exp_avg_sq.shape)
            assert.has_error(function() Adafactor(m:parameters(), { lr = 1e-3 }) end,
                "Cannot combine manual `lr` and `relative_step=True` options")
        end)
end)
