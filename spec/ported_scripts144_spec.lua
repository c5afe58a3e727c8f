-- ported_scripts144_spec.lua — three newer optimizers, line for line: lucidrains/lion-pytorch's
-- lion_pytorch/lion_pytorch.py (update_fn: stepweight decay, the sign of the interpolated
-- momentum, the EMA; Lion as a torch.optim.Optimizer subclass with use_triton off, decoupled
-- weight decay, the filter of params with a grad, state's exp_avg), sail-sg/Adan's adan.py (Adan
-- with its betas triple, max_grad_norm clipping by the global norm over all groups, no_prox,
-- restart_opt, the single-tensor path _single_tensor_adan; the foreach (_multi_tensor_adan) and
-- fused CUDA paths are left out: foreach = true and fused = true raise here) and
-- Liuhong99/Sophia's sophia.py (SophiaG with update_hessian from grad * grad, step(closure, bs),
-- maximize, the functional sophiag / _single_tensor_sophiag with the clamp of the ratio).
-- A tiny MLP (4 -> 8 -> 3) trains 3 steps with each (SophiaG as its README loop, the hessian
-- EMA updated every other step); the weights after each step are PyTorch 1.13's (same formula
-- weights and data), and each state_dict round-trips through tide.save / tide.load.
-- lion_pytorch.py at its current HEAD spells update_fn with mul_ / add / sign_ (no lerp_).
-- The Python line stands above each Lua line that differs from it.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim

-- def exists(val): return val is not None
local function exists(val)
    return val ~= nil
end

---------------------------------------------------------------------------------------------
-- 1. lucidrains/lion-pytorch lion_pytorch/lion_pytorch.py
---------------------------------------------------------------------------------------------
-- def update_fn(p, grad, exp_avg, lr, wd, beta1, beta2):
local function update_fn(p, grad, exp_avg, lr, wd, beta1, beta2)
    -- stepweight decay
    -- p.data.mul_(1. - lr * wd)
    p.data:mul_(1. - lr * wd)

    -- weight update
    -- update = exp_avg.clone().mul_(beta1).add(grad, alpha = 1. - beta1).sign_()
    local update = exp_avg:clone():mul_(beta1):add(grad, { alpha = 1. - beta1 }):sign_()
    -- p.add_(update, alpha = -lr)
    p:add_(update, { alpha = -lr })

    -- decay the momentum running average coefficient
    -- exp_avg.mul_(beta2).add_(grad, alpha = 1. - beta2)
    exp_avg:mul_(beta2):add_(grad, { alpha = 1. - beta2 })
end

-- class Lion(Optimizer):
local Lion = optim.Optimizer:extend("Lion")
-- def __init__(self, params, lr: float = 1e-4, betas: Tuple[float, float] = (0.9, 0.99),
--              weight_decay: float = 0.0, use_triton: bool = False,
--              decoupled_weight_decay: bool = False):
-- GAP: keyword arguments come as one options table after params
function Lion:init(params, o)
    o = o or {}
    local lr, betas, weight_decay = o.lr or 1e-4, o.betas or { 0.9, 0.99 }, o.weight_decay or 0.0
    local use_triton, decoupled_weight_decay = o.use_triton or false,
        o.decoupled_weight_decay or false
    -- assert lr > 0.
    assert(lr > 0.)
    -- assert all([0. <= beta <= 1. for beta in betas])
    for _, beta in ipairs(betas) do assert(0. <= beta and beta <= 1.) end

    self._init_lr = lr
    self.decoupled_wd = decoupled_weight_decay

    -- defaults = dict(lr = lr, betas = betas, weight_decay = weight_decay)
    local defaults = { lr = lr, betas = betas, weight_decay = weight_decay }

    -- super().__init__(params, defaults)
    optim.Optimizer.init(self, params, defaults)

    self.update_fn = update_fn

    if use_triton then
        -- from lion_pytorch.triton import update_fn as triton_update_fn
        -- GAP: no triton kernel in tide; use_triton raises
        error("Lion: use_triton needs lion_pytorch.triton (a CUDA Triton kernel); tide has none")
    end
end

-- @torch.no_grad()
-- def step(self, closure: Callable | None = None):
Lion.step = tide.no_grad()(function(self, closure)
    local loss = nil
    if exists(closure) then
        -- with torch.enable_grad(): loss = closure()
        loss = tide.enable_grad(closure)
    end

    for _, group in ipairs(self.param_groups) do
        -- for p in filter(lambda p: exists(p.grad), group['params']):
        for _, p in ipairs(group["params"]) do
            if exists(p.grad) then
                -- grad, lr, wd, beta1, beta2, state, decoupled_wd, init_lr = p.grad,
                --     group['lr'], group['weight_decay'], *group['betas'], self.state[p],
                --     self.decoupled_wd, self._init_lr
                local grad, lr, wd, beta1, beta2, state, decoupled_wd, init_lr = p.grad,
                    group["lr"], group["weight_decay"], group["betas"][1], group["betas"][2],
                    self.state[p], self.decoupled_wd, self._init_lr

                -- maybe decoupled weight decay

                if decoupled_wd then
                    -- wd /= init_lr
                    wd = wd / init_lr
                end

                -- init state - exponential moving average of gradient values

                -- if len(state) == 0:
                if next(state) == nil then
                    state["exp_avg"] = tide.zeros_like(p)
                end

                local exp_avg = state["exp_avg"]

                -- self.update_fn(p, grad, exp_avg, lr, wd, beta1, beta2)
                self.update_fn(p, grad, exp_avg, lr, wd, beta1, beta2)
            end
        end
    end

    return loss
end)

---------------------------------------------------------------------------------------------
-- 2. sail-sg/Adan adan.py
---------------------------------------------------------------------------------------------
local _single_tensor_adan

-- class Adan(Optimizer):
local Adan = optim.Optimizer:extend("Adan")
-- def __init__(self, params, lr=1e-3, betas=(0.98, 0.92, 0.99), eps=1e-8, weight_decay=0.0,
--              max_grad_norm=0.0, no_prox=False, foreach: bool = True, fused: bool = False):
-- GAP: keyword arguments come as one options table after params; foreach defaults to false
-- (the _multi_tensor_adan path is not ported: its math is _single_tensor_adan's)
function Adan:init(params, o)
    o = o or {}
    local lr, betas, eps = o.lr or 1e-3, o.betas or { 0.98, 0.92, 0.99 }, o.eps or 1e-8
    local weight_decay, max_grad_norm = o.weight_decay or 0.0, o.max_grad_norm or 0.0
    local no_prox, foreach, fused = o.no_prox or false, o.foreach or false, o.fused or false
    -- if not 0.0 <= max_grad_norm: raise ValueError('Invalid Max grad norm: {}'.format(...))
    if not (0.0 <= max_grad_norm) then error("Invalid Max grad norm: " .. max_grad_norm) end
    if not (0.0 <= lr) then error("Invalid learning rate: " .. lr) end
    if not (0.0 <= eps) then error("Invalid epsilon value: " .. eps) end
    -- if not 0.0 <= betas[0] < 1.0:
    if not (0.0 <= betas[1] and betas[1] < 1.0) then
        error("Invalid beta parameter at index 0: " .. betas[1])
    end
    if not (0.0 <= betas[2] and betas[2] < 1.0) then
        error("Invalid beta parameter at index 1: " .. betas[2])
    end
    if not (0.0 <= betas[3] and betas[3] < 1.0) then
        error("Invalid beta parameter at index 2: " .. betas[3])
    end
    if fused then
        -- _check_fused_available()
        -- GAP: no fused_adan CUDA extension
        error("Fused Adan needs the fused_adan CUDA extension; tide has none")
    end

    -- defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
    --                 max_grad_norm=max_grad_norm, no_prox=no_prox, foreach=foreach, fused=fused)
    local defaults = { lr = lr, betas = betas, eps = eps, weight_decay = weight_decay,
        max_grad_norm = max_grad_norm, no_prox = no_prox, foreach = foreach, fused = fused }
    -- super().__init__(params, defaults)
    optim.Optimizer.init(self, params, defaults)
end

-- def __setstate__(self, state): super(Adan, self).__setstate__(state)
--     for group in self.param_groups: group.setdefault('no_prox', False)
-- GAP: no counterpart: tide never unpickles an optimizer object (its state_dict is what saves)

-- @torch.no_grad()
-- def restart_opt(self):
Adan.restart_opt = tide.no_grad()(function(self)
    for _, group in ipairs(self.param_groups) do
        group["step"] = 0
        for _, p in ipairs(group["params"]) do
            if p.requires_grad then
                local state = self.state[p]
                -- State initialization

                -- Exponential moving average of gradient values
                state["exp_avg"] = tide.zeros_like(p)
                -- Exponential moving average of squared gradient values
                state["exp_avg_sq"] = tide.zeros_like(p)
                -- Exponential moving average of gradient difference
                state["exp_avg_diff"] = tide.zeros_like(p)
            end
        end
    end
end)

-- @torch.no_grad()
-- def step(self, closure=None):
Adan.step = tide.no_grad()(function(self, closure)
    local loss = nil
    if closure ~= nil then
        loss = tide.enable_grad(closure)
    end

    local clip_global_grad_norm
    if self.defaults["max_grad_norm"] > 0 then
        -- device = self.param_groups[0]['params'][0].device
        local device = self.param_groups[1]["params"][1].device
        -- global_grad_norm = torch.zeros(1, device=device)
        local global_grad_norm = tide.zeros(1, { device = device })

        -- max_grad_norm = torch.tensor(self.defaults['max_grad_norm'], device=device)
        local max_grad_norm = tide.tensor(self.defaults["max_grad_norm"], { device = device })
        local group
        for _, g in ipairs(self.param_groups) do
            group = g -- (Python's loop variable outlives the loop: its eps is read below)

            for _, p in ipairs(group["params"]) do
                if p.grad ~= nil then
                    local grad = p.grad
                    -- global_grad_norm.add_(grad.pow(2).sum())
                    global_grad_norm:add_(grad:pow(2):sum())
                end
            end
        end

        global_grad_norm = tide.sqrt(global_grad_norm)

        -- clip_global_grad_norm = torch.clamp(max_grad_norm / (global_grad_norm + group['eps']),
        --                                     max=1.0).item()
        clip_global_grad_norm = tide.clamp(max_grad_norm / (global_grad_norm + group["eps"]),
            { max = 1.0 }):item()
    else
        clip_global_grad_norm = 1.0
    end

    for _, group in ipairs(self.param_groups) do
        local params_with_grad = {}
        local grads = {}
        local exp_avgs = {}
        local exp_avg_sqs = {}
        local exp_avg_diffs = {}
        local neg_pre_grads = {}

        -- beta1, beta2, beta3 = group['betas']
        local beta1, beta2, beta3 = group["betas"][1], group["betas"][2], group["betas"][3]
        -- assume same step across group now to simplify things
        -- per parameter step can be easily support
        -- by making it tensor, or pass list into kernel
        -- if 'step' in group:
        if group["step"] ~= nil then
            group["step"] = group["step"] + 1
        else
            group["step"] = 1
        end

        -- bias_correction1 = 1.0 - beta1**group['step']
        local bias_correction1 = 1.0 - beta1 ^ group["step"]
        local bias_correction2 = 1.0 - beta2 ^ group["step"]
        local bias_correction3 = 1.0 - beta3 ^ group["step"]

        for _, p in ipairs(group["params"]) do
            -- if p.grad is None: continue
            if p.grad ~= nil then
                -- params_with_grad.append(p)
                params_with_grad[#params_with_grad + 1] = p
                grads[#grads + 1] = p.grad

                local state = self.state[p]
                -- if len(state) == 0:
                if next(state) == nil then
                    state["exp_avg"] = tide.zeros_like(p)
                    state["exp_avg_sq"] = tide.zeros_like(p)
                    state["exp_avg_diff"] = tide.zeros_like(p)
                end

                -- if 'neg_pre_grad' not in state or group['step'] == 1:
                if state["neg_pre_grad"] == nil or group["step"] == 1 then
                    -- state['neg_pre_grad'] = p.grad.clone().mul_(-clip_global_grad_norm)
                    state["neg_pre_grad"] = p.grad:clone():mul_(-clip_global_grad_norm)
                end

                exp_avgs[#exp_avgs + 1] = state["exp_avg"]
                exp_avg_sqs[#exp_avg_sqs + 1] = state["exp_avg_sq"]
                exp_avg_diffs[#exp_avg_diffs + 1] = state["exp_avg_diff"]
                neg_pre_grads[#neg_pre_grads + 1] = state["neg_pre_grad"]
            end
        end

        -- if not params_with_grad: continue
        if #params_with_grad > 0 then
            -- kwargs = dict(params=params_with_grad, ..., clip_global_grad_norm=...)
            local kwargs = {
                params = params_with_grad,
                grads = grads,
                exp_avgs = exp_avgs,
                exp_avg_sqs = exp_avg_sqs,
                exp_avg_diffs = exp_avg_diffs,
                neg_pre_grads = neg_pre_grads,
                beta1 = beta1,
                beta2 = beta2,
                beta3 = beta3,
                bias_correction1 = bias_correction1,
                bias_correction2 = bias_correction2,
                bias_correction3_sqrt = math.sqrt(bias_correction3),
                lr = group["lr"],
                weight_decay = group["weight_decay"],
                eps = group["eps"],
                no_prox = group["no_prox"],
                clip_global_grad_norm = clip_global_grad_norm,
            }

            if group["foreach"] then
                -- _multi_tensor_adan(**kwargs) / _fused_adan_multi_tensor(**kwargs)
                -- GAP: the foreach and fused paths are not ported (same math as the loop below)
                error("Adan: foreach = true (_multi_tensor_adan) is not ported; pass " ..
                    "foreach = false")
            else
                -- _single_tensor_adan(**kwargs)
                _single_tensor_adan(kwargs)
            end
        end
    end

    return loss
end)

-- def _single_tensor_adan(params, grads, exp_avgs, exp_avg_sqs, exp_avg_diffs, neg_pre_grads,
--                         *, beta1, beta2, beta3, bias_correction1, bias_correction2,
--                         bias_correction3_sqrt, lr, weight_decay, eps, no_prox,
--                         clip_global_grad_norm):
-- GAP: keyword-only arguments come as one table
function _single_tensor_adan(k)
    -- for i, param in enumerate(params):
    for i, param in ipairs(k.params) do
        local grad = k.grads[i]
        local exp_avg = k.exp_avgs[i]
        local exp_avg_sq = k.exp_avg_sqs[i]
        local exp_avg_diff = k.exp_avg_diffs[i]
        local neg_grad_or_diff = k.neg_pre_grads[i]

        grad:mul_(k.clip_global_grad_norm)

        -- for memory saving, we use `neg_grad_or_diff`
        -- to get some temp variable in a inplace way
        neg_grad_or_diff:add_(grad)

        -- exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)  # m_t
        exp_avg:mul_(k.beta1):add_(grad, { alpha = 1 - k.beta1 }) -- m_t
        -- exp_avg_diff.mul_(beta2).add_(neg_grad_or_diff, alpha=1 - beta2)  # diff_t
        exp_avg_diff:mul_(k.beta2):add_(neg_grad_or_diff, { alpha = 1 - k.beta2 }) -- diff_t

        neg_grad_or_diff:mul_(k.beta2):add_(grad)
        -- exp_avg_sq.mul_(beta3).addcmul_(neg_grad_or_diff, neg_grad_or_diff,
        --                                 value=1 - beta3)  # n_t
        exp_avg_sq:mul_(k.beta3):addcmul_(neg_grad_or_diff, neg_grad_or_diff,
            { value = 1 - k.beta3 }) -- n_t

        -- denom = ((exp_avg_sq).sqrt() / bias_correction3_sqrt).add_(eps)
        local denom = ((exp_avg_sq):sqrt() / k.bias_correction3_sqrt):add_(k.eps)
        local step_size_diff = k.lr * k.beta2 / k.bias_correction2
        local step_size = k.lr / k.bias_correction1

        if k.no_prox then
            param:mul_(1 - k.lr * k.weight_decay)
            -- param.addcdiv_(exp_avg, denom, value=-step_size)
            param:addcdiv_(exp_avg, denom, { value = -step_size })
            param:addcdiv_(exp_avg_diff, denom, { value = -step_size_diff })
        else
            param:addcdiv_(exp_avg, denom, { value = -step_size })
            param:addcdiv_(exp_avg_diff, denom, { value = -step_size_diff })
            param:div_(1 + k.lr * k.weight_decay)
        end

        -- neg_grad_or_diff.zero_().add_(grad, alpha=-1.0)
        neg_grad_or_diff:zero_():add_(grad, { alpha = -1.0 })
    end
end

---------------------------------------------------------------------------------------------
-- 3. Liuhong99/Sophia sophia.py
---------------------------------------------------------------------------------------------
local sophiag, _single_tensor_sophiag

-- class SophiaG(Optimizer):
local SophiaG = optim.Optimizer:extend("SophiaG")
-- GAP: state['step'] is a 0-d tensor (step_t += 1 in place); tide's load_state_dict gives a
-- Lua number for a state key named step unless the class lists its scalar keys itself
SophiaG.scalar_state = {}
-- def __init__(self, params, lr=1e-4, betas=(0.965, 0.99), rho = 0.04, weight_decay=1e-1, *,
--              maximize: bool = False, capturable: bool = False):
-- GAP: keyword arguments come as one options table after params
function SophiaG:init(params, o)
    o = o or {}
    local lr, betas, rho = o.lr or 1e-4, o.betas or { 0.965, 0.99 }, o.rho or 0.04
    local weight_decay = o.weight_decay or 1e-1
    local maximize, capturable = o.maximize or false, o.capturable or false
    -- if not 0.0 <= lr: raise ValueError("Invalid learning rate: {}".format(lr))
    if not (0.0 <= lr) then error("Invalid learning rate: " .. lr) end
    if not (0.0 <= betas[1] and betas[1] < 1.0) then
        error("Invalid beta parameter at index 0: " .. betas[1])
    end
    if not (0.0 <= betas[2] and betas[2] < 1.0) then
        error("Invalid beta parameter at index 1: " .. betas[2])
    end
    if not (0.0 <= rho) then error("Invalid rho parameter at index 1: " .. rho) end
    if not (0.0 <= weight_decay) then error("Invalid weight_decay value: " .. weight_decay) end
    -- defaults = dict(lr=lr, betas=betas, rho=rho, weight_decay=weight_decay,
    --                 maximize=maximize, capturable=capturable)
    local defaults = { lr = lr, betas = betas, rho = rho, weight_decay = weight_decay,
        maximize = maximize, capturable = capturable }
    -- super(SophiaG, self).__init__(params, defaults)
    optim.Optimizer.init(self, params, defaults)
end

-- def __setstate__(self, state): (setdefault maximize / capturable; a float step -> a tensor)
-- GAP: no counterpart: tide never unpickles an optimizer object (its state_dict is what saves)

-- @torch.no_grad()
-- def update_hessian(self):
SophiaG.update_hessian = tide.no_grad()(function(self)
    for _, group in ipairs(self.param_groups) do
        -- beta1, beta2 = group['betas']
        local _, beta2 = group["betas"][1], group["betas"][2]
        for _, p in ipairs(group["params"]) do
            -- if p.grad is None: continue
            if p.grad ~= nil then
                local state = self.state[p]

                -- if len(state) == 0:
                if next(state) == nil then
                    -- state['step'] = torch.zeros((1,), dtype=torch.float, device=p.device) \
                    --     if self.defaults['capturable'] else torch.tensor(0.)
                    state["step"] = self.defaults["capturable"]
                        and tide.zeros({ 1 }, { dtype = tide.float, device = p.device })
                        or tide.tensor(0.)
                    -- torch.zeros_like(p, memory_format=torch.preserve_format)
                    state["exp_avg"] = tide.zeros_like(p)
                    state["hessian"] = tide.zeros_like(p)
                end

                -- if 'hessian' not in state.keys():
                if state["hessian"] == nil then
                    state["hessian"] = tide.zeros_like(p)
                end

                -- state['hessian'].mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)
                state["hessian"]:mul_(beta2):addcmul_(p.grad, p.grad, { value = 1 - beta2 })
            end
        end
    end
end)

-- @torch.no_grad()
-- def step(self, closure=None, bs=5120):
SophiaG.step = tide.no_grad()(function(self, closure, bs)
    bs = bs or 5120
    local loss = nil
    if closure ~= nil then
        loss = tide.enable_grad(closure)
    end

    for _, group in ipairs(self.param_groups) do
        local params_with_grad = {}
        local grads = {}
        local exp_avgs = {}
        local state_steps = {}
        local hessian = {}
        local beta1, beta2 = group["betas"][1], group["betas"][2]

        for _, p in ipairs(group["params"]) do
            if p.grad ~= nil then
                params_with_grad[#params_with_grad + 1] = p

                -- if p.grad.is_sparse:
                if p.grad.is_sparse then
                    error("Hero does not support sparse gradients")
                end
                grads[#grads + 1] = p.grad
                local state = self.state[p]
                -- State initialization
                if next(state) == nil then
                    state["step"] = self.defaults["capturable"]
                        and tide.zeros({ 1 }, { dtype = tide.float, device = p.device })
                        or tide.tensor(0.)
                    state["exp_avg"] = tide.zeros_like(p)
                    state["hessian"] = tide.zeros_like(p)
                end

                if state["hessian"] == nil then
                    state["hessian"] = tide.zeros_like(p)
                end

                exp_avgs[#exp_avgs + 1] = state["exp_avg"]
                state_steps[#state_steps + 1] = state["step"]
                hessian[#hessian + 1] = state["hessian"]

                if self.defaults["capturable"] then
                    -- bs = torch.ones((1,), dtype=torch.float, device=p.device) * bs
                    bs = tide.ones({ 1 }, { dtype = tide.float, device = p.device }) * bs
                end
            end
        end

        -- sophiag(params_with_grad, grads, exp_avgs, hessian, state_steps, bs=bs, beta1=beta1,
        --         beta2=beta2, rho=group['rho'], lr=group['lr'],
        --         weight_decay=group['weight_decay'], maximize=group['maximize'],
        --         capturable=group['capturable'])
        sophiag(params_with_grad, grads, exp_avgs, hessian, state_steps, group["capturable"],
            { bs = bs, beta1 = beta1, beta2 = beta2, rho = group["rho"], lr = group["lr"],
                weight_decay = group["weight_decay"], maximize = group["maximize"] })
    end

    return loss
end)

-- def sophiag(params, grads, exp_avgs, hessian, state_steps, capturable: bool = False, *,
--             bs: int, beta1: float, beta2: float, rho: float, lr: float,
--             weight_decay: float, maximize: bool):
-- GAP: the keyword-only arguments come as one table after capturable
function sophiag(params, grads, exp_avgs, hessian, state_steps, capturable, k)
    -- if not all(isinstance(t, torch.Tensor) for t in state_steps):
    for _, t in ipairs(state_steps) do
        if not tide.is_tensor(t) then
            error("API has changed, `state_steps` argument must contain a list of singleton " ..
                "tensors")
        end
    end

    local func = _single_tensor_sophiag

    -- func(params, grads, exp_avgs, hessian, state_steps, bs=bs, ..., capturable=capturable)
    func(params, grads, exp_avgs, hessian, state_steps, { bs = k.bs, beta1 = k.beta1,
        beta2 = k.beta2, rho = k.rho, lr = k.lr, weight_decay = k.weight_decay,
        maximize = k.maximize, capturable = capturable })
end

-- def _single_tensor_sophiag(params, grads, exp_avgs, hessian, state_steps, *, bs, beta1,
--                            beta2, rho, lr, weight_decay, maximize, capturable):
function _single_tensor_sophiag(params, grads, exp_avgs, hessian, state_steps, k)
    local bs, rho, lr = k.bs, k.rho, k.lr
    for i, param in ipairs(params) do
        -- grad = grads[i] if not maximize else -grads[i]
        local grad = (not k.maximize) and grads[i] or -grads[i]
        local exp_avg = exp_avgs[i]
        local hess = hessian[i]
        local step_t = state_steps[i]

        if k.capturable then
            -- assert param.is_cuda and step_t.is_cuda and bs.is_cuda
            assert(param.is_cuda and step_t.is_cuda and bs.is_cuda)
        end

        -- if torch.is_complex(param):
        if tide.is_complex(param) then
            -- grad = torch.view_as_real(grad)
            grad = tide.view_as_real(grad)
            exp_avg = tide.view_as_real(exp_avg)
            hess = tide.view_as_real(hess)
            param = tide.view_as_real(param)
        end

        -- update step
        -- step_t += 1
        step_t:add_(1)

        -- Perform stepweight decay
        param:mul_(1 - lr * k.weight_decay)

        -- Decay the first and second moment running average coefficient
        -- exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
        exp_avg:mul_(k.beta1):add_(grad, { alpha = 1 - k.beta1 })

        if k.capturable then
            local step_size = lr
            -- step_size_neg = step_size.neg()
            local step_size_neg = step_size:neg()

            -- ratio = (exp_avg.abs() / (rho * bs * hess + 1e-15)).clamp(None,1)
            local ratio = (exp_avg:abs() / (rho * bs * hess + 1e-15)):clamp(nil, 1)
            -- param.addcmul_(exp_avg.sign(), ratio, value=step_size_neg)
            param:addcmul_(exp_avg:sign(), ratio, { value = step_size_neg })
        else
            -- step_size_neg = - lr
            local step_size_neg = -lr

            local ratio = (exp_avg:abs() / (rho * bs * hess + 1e-15)):clamp(nil, 1)
            param:addcmul_(exp_avg:sign(), ratio, { value = step_size_neg })
        end
    end
end

---------------------------------------------------------------------------------------------
-- the tiny MLP, its formula weights and data (those of the PyTorch 1.13 reference script)
---------------------------------------------------------------------------------------------
local function make()
    local m = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    tide.no_grad(function()
        for j, p in ipairs(m:parameters()) do
            -- p.copy_((0.5 * torch.sin(0.7 * i + 1.3 * j + 0.1)).view_as(p))  (0-based i, j)
            local i = tide.arange(p:numel(), { dtype = tide.float64 })
            p:copy_((0.5 * tide.sin(0.7 * i + 1.3 * (j - 1) + 0.1)):view_as(p))
        end
    end)
    return m
end
local x = tide.cos(0.5 * tide.arange(24, { dtype = tide.float64 })):view(6, 4):float()
-- y = torch.tensor([0, 1, 2, 0, 1, 2])  (1-based classes)
local y = tide.tensor({ 1, 2, 3, 1, 2, 3 })
-- the README's y_sample = Categorical(logits=logits).sample(): a fixed draw on both sides
-- GAP: tide's sampler and PyTorch's draw different numbers from the same seed
local y_sample = tide.tensor({ 3, 1, 2, 3, 1, 2 })

local function flat(m)
    local parts = {}
    for _, p in ipairs(m:parameters()) do parts[#parts + 1] = p:detach():reshape(-1) end
    return tide.cat(parts)
end
-- the change of the weights since w0 as two sums: plain, and weighted by cos(0-based index)
local function sums(m, w0)
    local d = (flat(m) - w0):double()
    local i = tide.arange(d:numel(), { dtype = tide.float64 })
    return { d:sum():item(), (d * tide.cos(i)):sum():item() }
end
local function assert_sums(want, got, what, tol)
    for k = 1, 2 do
        assert(math.abs(want[k] - got[k]) < (tol or 2e-6),
            string.format("%s: sum %d: want %.9g, got %.9g", what, k, want[k], got[k]))
    end
end

local function tmpfile()
    return os.tmpname() .. ".safetensors"
end

-- 3 steps of the README loop: loss.backward(); optimizer.step(...); zero_grad(set_to_none)
local function train(model, optimizer, want, losses, what, step_args, hess_every, tol)
    local w0 = flat(model)
    for it = 0, 2 do
        local loss = F.cross_entropy(model(x), y)
        loss:backward()
        assert(math.abs(loss:item() - losses[it + 1]) < 1e-5, what .. " loss " .. it)
        optimizer:step(nil, step_args)
        optimizer:zero_grad(true)
        assert_sums(want[it + 1], sums(model, w0), what .. " step " .. (it + 1), tol)
        -- if iter_num % k != k - 1: continue
        if hess_every and it % hess_every == hess_every - 1 then
            -- update hessian EMA
            local logits = model(x)
            -- loss_sampled = F.cross_entropy(logits.view(-1, logits.size(-1)),
            --                                y_sample.view(-1), ignore_index=-1)
            local loss_sampled = F.cross_entropy(logits:view(-1, logits:size(-1)),
                y_sample:view(-1), { ignore_index = -1 })
            loss_sampled:backward()
            optimizer:update_hessian()
            optimizer:zero_grad(true)
            model:zero_grad()
        end
    end
end

describe("ported optimizers: lion_pytorch.py, adan.py, sophia.py", function()
    it("Lion (coupled and decoupled weight decay) matches PyTorch; state_dict round-trips",
        function()
            local want = { { -0.0486349901, -0.002517699 }, { -0.077221442, -0.0248327086 },
                { -0.105779242, -0.0471254045 } }
            local losses = { 1.10935211, 1.05262876, 0.997914493 }
            local model = make()
            local optimizer = Lion(model:parameters(), { lr = 0.01, weight_decay = 0.1 })
            train(model, optimizer, want, losses, "Lion")
            -- decoupled: wd / init_lr = 1e-3 / 0.01, the same 0.1
            local model2 = make()
            local opt2 = Lion(model2:parameters(), { lr = 0.01, weight_decay = 1e-3,
                decoupled_weight_decay = true })
            train(model2, opt2, want, losses, "Lion decoupled")
            assert.is_true(math.abs(F.cross_entropy(model(x), y):item() - 0.945240498) < 1e-5)
            assert.has_error(function() Lion(model:parameters(), { lr = 0 }) end)
            assert.has_error(function() Lion(model:parameters(), { use_triton = true }) end)

            local w1 = model[1].weight
            local path = tmpfile()
            tide.save(path, optimizer:state_dict())
            local model3 = make()
            local opt3 = Lion(model3:parameters(), { lr = 0.5 })
            opt3:load_state_dict(tide.load(path))
            os.remove(path)
            assert.are.equal(0.01, opt3.param_groups[1].lr)
            assert.are.equal(0.1, opt3.param_groups[1].weight_decay)
            assert.are.same({ 0.9, 0.99 }, opt3.param_groups[1].betas)
            assert.is_true(tide.equal(optimizer.state[w1].exp_avg,
                opt3.state[model3[1].weight].exp_avg))
        end)

    it("Adan (two groups, global-norm clipping, no_prox) matches PyTorch; state_dict round-trips",
        function()
            local model = make()
            -- Adan([{'params': m[0].parameters()},
            --       {'params': m[2].parameters(), 'lr': 0.02, 'no_prox': True}],
            --      lr=0.05, weight_decay=0.02, max_grad_norm=0.5, foreach=False)
            local optimizer = Adan({ { params = model[1]:parameters() },
                { params = model[3]:parameters(), lr = 0.02, no_prox = true } },
                { lr = 0.05, weight_decay = 0.02, max_grad_norm = 0.5 })
            assert.is_false(optimizer.param_groups[1].no_prox)
            assert.is_true(optimizer.param_groups[2].no_prox)
            train(model, optimizer, { { -0.279817514, -0.0485375073 },
                { -0.433139883, -0.19027491 }, { -0.635886069, -0.373459954 } },
                { 1.10935211, 0.94895035, 0.811811268 }, "Adan clipped")
            local w1 = model[1].weight
            assert.are.equal(3, optimizer.param_groups[1].step)
            assert.is_true(math.abs(optimizer.state[w1].neg_pre_grad:sum():item()
                + 0.116867155) < 1e-6)
            -- no clipping (the first global grad norm is 0.9279 < max_grad_norm 0 = off)
            local model2 = make()
            local opt2 = Adan(model2:parameters(), { lr = 0.05, weight_decay = 0.02 })
            train(model2, opt2, { { -0.248386227, -0.0171943899 },
                { -0.441491976, -0.147939708 }, { -0.628012389, -0.333852563 } },
                { 1.10935211, 0.846699417, 0.637967646 }, "Adan")
            assert.has_error(function() Adan(model:parameters(), { betas = { 0.9, 0.9, 1.5 } })
            end, "Invalid beta parameter at index 2: 1.5")
            assert.has_error(function() Adan(model:parameters(), { fused = true }) end)

            local path = tmpfile()
            tide.save(path, optimizer:state_dict())
            local model3 = make()
            local opt3 = Adan({ { params = model3[1]:parameters() },
                { params = model3[3]:parameters() } }, { lr = 0.5 })
            opt3:load_state_dict(tide.load(path))
            os.remove(path)
            local v1 = model3[1].weight
            assert.are.equal(3, opt3.param_groups[2].step)
            assert.are.equal(0.02, opt3.param_groups[2].lr)
            assert.is_true(opt3.param_groups[2].no_prox)
            assert.are.same({ 0.98, 0.92, 0.99 }, opt3.param_groups[1].betas)
            assert.is_true(tide.equal(optimizer.state[w1].exp_avg_diff,
                opt3.state[v1].exp_avg_diff))
            assert.is_true(tide.equal(optimizer.state[w1].neg_pre_grad,
                opt3.state[v1].neg_pre_grad))
            -- restart_opt zeroes the moments and the step count
            opt3:restart_opt()
            assert.are.equal(0, opt3.param_groups[1].step)
            assert.are.equal(0, opt3.state[v1].exp_avg_sq:abs():sum():item())
        end)

    it("SophiaG with the README's hessian loop (and maximize) matches PyTorch; state_dict "
        .. "round-trips", function()
            local model = make()
            -- SophiaG(m.parameters(), lr=0.05, betas=(0.965, 0.99), rho=0.04, weight_decay=0.1)
            local optimizer = SophiaG(model:parameters(), { lr = 0.05, betas = { 0.965, 0.99 },
                rho = 0.04, weight_decay = 0.1 })
            -- optimizer.step(bs=6); the hessian EMA after every second step (k = 2)
            train(model, optimizer, { { -0.243174978, -0.0125887194 },
                { -0.385134168, -0.124113724 }, { -0.526383504, -0.277148634 } },
                { 1.10935211, 0.8470276, 0.6394732 }, "SophiaG", 6, 2)
            local w1 = model[1].weight
            local st = optimizer.state[w1]
            assert.are.equal(3, st.step:item())
            assert.is_true(math.abs(st.hessian:sum():item() - 0.00250841607) < 1e-9)
            local model2 = make()
            -- (its third step divides an exp_avg of 3.4e-6, 0.965 * m - 0.035 * g cancelling in
            -- float32, by the hessian: the 1e-9 rounding of m moves one weight by 7.6e-6)
            local opt2 = SophiaG(model2:parameters(), { lr = 0.05, rho = 0.04, maximize = true })
            train(model2, opt2, { { 0.256824888, 0.0241459296 }, { 0.512365557, 0.0481710117 },
                { 0.589689523, 0.0165107535 } }, { 1.10935211, 1.41700935, 1.74944305 },
                "SophiaG maximize", 6, 2, 2e-5)
            assert.has_error(function() SophiaG(model:parameters(), { rho = -1 }) end,
                "Invalid rho parameter at index 1: -1")

            local path = tmpfile()
            tide.save(path, optimizer:state_dict())
            local model3 = make()
            local opt3 = SophiaG(model3:parameters(), { lr = 0.5 })
            opt3:load_state_dict(tide.load(path))
            os.remove(path)
            local v1 = model3[1].weight
            assert.are.equal(0.05, opt3.param_groups[1].lr)
            assert.is_false(opt3.param_groups[1].maximize)
            assert.is_true(tide.is_tensor(opt3.state[v1].step))
            assert.are.equal(3, opt3.state[v1].step:item())
            assert.is_true(tide.equal(st.hessian, opt3.state[v1].hessian))
            -- the loaded optimizer (on the model's weights) steps on as the first: same weights
            model3:load_state_dict(model:state_dict())
            for _, pair in ipairs({ { model, optimizer }, { model3, opt3 } }) do
                F.cross_entropy(pair[1](x), y):backward()
                pair[2]:step(nil, 6)
            end
            assert.is_true(tide.equal(flat(model), flat(model3)))
            assert.are.equal(4, opt3.state[v1].step:item())
        end)
end)
