-- ported_scripts43_spec.lua — labmlai/annotated_deep_learning_paper_implementations ported line
-- for line: optimizers (GenericAdaptiveOptimizer, WeightDecay, Adam, AMSGrad, RAdam, AdaBelief:
-- a torch.optim.Optimizer subclass with its own __init__, defaults, param_groups and state),
-- checked against torch.optim.Adam of PyTorch 1.13 on the same parameters. labml_helpers' Module
-- is nn.Module; the labml experiment/config scaffolding is dropped and each module runs on tiny
-- random data. The Python line stands above each Lua line that differs from it. Dims, indices
-- and class targets are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional -- luacheck: ignore
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite

local function close(expected, t, tol)
    local got = t:flatten():totable()
    assert.are.equal(#expected, #got)
    for i = 1, #expected do
        assert.is_true(math.abs(expected[i] - got[i]) <= (tol or 1e-5),
            ("element %d: expected %.7g, got %.7g"):format(i, expected[i], got[i]))
    end
end

---------------------------------------------------------------------------------------------
-- labml_nn/optimizers/__init__.py
---------------------------------------------------------------------------------------------
-- class GenericAdaptiveOptimizer(Optimizer):
local GenericAdaptiveOptimizer = optim.Optimizer:extend("GenericAdaptiveOptimizer")
-- def __init__(self, params, defaults: Dict[str, Any], lr: float, betas: Tuple[float, float], eps: float):
function GenericAdaptiveOptimizer:init(params, defaults, lr, betas, eps)
    -- if not 0.0 <= lr:
    if not (0.0 <= lr) then
        -- raise ValueError(f"Invalid learning rate: {lr}")
        error(("Invalid learning rate: %s"):format(lr))
    end
    if not (0.0 <= eps) then
        error(("Invalid epsilon value: %s"):format(eps))
    end
    -- if not 0.0 <= betas[0] < 1.0:
    if not (0.0 <= betas[1] and betas[1] < 1.0) then
        error(("Invalid beta parameter at index 0: %s"):format(betas[1]))
    end
    if not (0.0 <= betas[2] and betas[2] < 1.0) then
        error(("Invalid beta parameter at index 1: %s"):format(betas[2]))
    end
    -- defaults.update(dict(lr=lr, betas=betas, eps=eps))
    defaults.lr, defaults.betas, defaults.eps = lr, betas, eps
    -- super().__init__(params, defaults)
    optim.Optimizer.init(self, params, defaults)
end

function GenericAdaptiveOptimizer:init_state(state, group, param) end -- luacheck: ignore

function GenericAdaptiveOptimizer:step_param(state, group, grad, param) end -- luacheck: ignore

-- @torch.no_grad()
-- def step(self, closure=None):
GenericAdaptiveOptimizer.step = tide.no_grad()(function(self, closure)
    local loss = nil
    if closure ~= nil then
        -- with torch.enable_grad(): loss = closure()
        loss = tide.enable_grad(closure)
    end
    for _, group in ipairs(self.param_groups) do
        for _, param in ipairs(group.params) do
            -- if param.grad is None: continue
            if param.grad ~= nil then
                local grad = param.grad.data
                if grad.is_sparse then
                    error("GenericAdaptiveOptimizer does not support sparse gradients," ..
                        " please consider SparseAdam instead")
                end
                local state = self.state[param]
                -- if len(state) == 0:
                if next(state) == nil then
                    self:init_state(state, group, param)
                end
                self:step_param(state, group, grad, param)
            end
        end
    end
    return loss
end)

-- class WeightDecay:
local WeightDecay = ported.class("WeightDecay")
-- def __init__(self, weight_decay: float = 0., weight_decouple: bool = True, absolute: bool = False):
function WeightDecay:__init__(weight_decay, weight_decouple, absolute)
    if weight_decay == nil then weight_decay = 0. end
    if weight_decouple == nil then weight_decouple = true end
    if absolute == nil then absolute = false end
    if not (0.0 <= weight_decay) then
        error(("Invalid weight_decay value: %s"):format(weight_decay))
    end
    self.absolute = absolute
    self.weight_decouple = weight_decouple
    self.weight_decay = weight_decay
end

function WeightDecay:defaults()
    -- return dict(weight_decay=self.weight_decay)
    return { weight_decay = self.weight_decay }
end

-- def __call__(self, param, grad, group):
function WeightDecay:__call__(param, grad, group)
    if self.weight_decouple then
        if self.absolute then
            -- param.data.mul_(1.0 - group['weight_decay'])
            param.data:mul_(1.0 - group.weight_decay)
        else
            param.data:mul_(1.0 - group.lr * group.weight_decay)
        end
        return grad
    else
        if group.weight_decay ~= 0 then
            -- return grad.add(param.data, alpha=group['weight_decay'])
            return grad:add(param.data, { alpha = group.weight_decay })
        else
            return grad
        end
    end
end

---------------------------------------------------------------------------------------------
-- labml_nn/optimizers/adam.py
---------------------------------------------------------------------------------------------
-- class Adam(GenericAdaptiveOptimizer):
local Adam = GenericAdaptiveOptimizer:extend("Adam")
-- def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-16,
--              weight_decay: WeightDecay = WeightDecay(), optimized_update: bool = True,
--              defaults: Optional[Dict[str, Any]] = None):
local default_weight_decay = WeightDecay()
function Adam:init(params, lr, betas, eps, weight_decay, optimized_update, defaults)
    lr, betas, eps = lr or 1e-3, betas or { 0.9, 0.999 }, eps or 1e-16
    weight_decay = weight_decay or default_weight_decay
    if optimized_update == nil then optimized_update = true end
    -- defaults = {} if defaults is None else defaults
    if defaults == nil then defaults = {} end
    -- defaults.update(weight_decay.defaults())
    for k, v in pairs(weight_decay:defaults()) do defaults[k] = v end
    -- super().__init__(params, defaults, lr, betas, eps)
    GenericAdaptiveOptimizer.init(self, params, defaults, lr, betas, eps)
    self.weight_decay = weight_decay
    self.optimized_update = optimized_update
end

function Adam:init_state(state, group, param) -- luacheck: ignore
    state.step = 0
    -- state['exp_avg'] = torch.zeros_like(param, memory_format=torch.preserve_format)
    state.exp_avg = tide.zeros_like(param, { memory_format = tide.preserve_format })
    state.exp_avg_sq = tide.zeros_like(param, { memory_format = tide.preserve_format })
end

function Adam:get_mv(state, group, grad)
    -- beta1, beta2 = group['betas']
    local beta1, beta2 = unpack(group.betas)
    local m, v = state.exp_avg, state.exp_avg_sq
    -- m.mul_(beta1).add_(grad, alpha=1 - beta1)
    m:mul_(beta1):add_(grad, { alpha = 1 - beta1 })
    -- v.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    v:mul_(beta2):addcmul_(grad, grad, { value = 1 - beta2 })
    return m, v
end

function Adam:get_lr(state, group) -- luacheck: ignore
    return group.lr
end

function Adam:adam_update(state, group, param, m, v)
    local beta1, beta2 = unpack(group.betas)
    local bias_correction1 = 1 - beta1 ^ state.step
    local bias_correction2 = 1 - beta2 ^ state.step
    local lr = self:get_lr(state, group)
    if self.optimized_update then
        -- denominator = v.sqrt().add_(group['eps'])
        local denominator = v:sqrt():add_(group.eps)
        local step_size = lr * math.sqrt(bias_correction2) / bias_correction1
        -- param.data.addcdiv_(m, denominator, value=-step_size)
        param.data:addcdiv_(m, denominator, { value = -step_size })
    else
        local denominator = (v:sqrt() / math.sqrt(bias_correction2)):add_(group.eps)
        local step_size = lr / bias_correction1
        param.data:addcdiv_(m, denominator, { value = -step_size })
    end
end

function Adam:step_param(state, group, grad, param)
    grad = self.weight_decay(param, grad, group)
    local m, v = self:get_mv(state, group, grad)
    -- state['step'] += 1
    state.step = state.step + 1
    self:adam_update(state, group, param, m, v)
end

---------------------------------------------------------------------------------------------
-- labml_nn/optimizers/amsgrad.py
---------------------------------------------------------------------------------------------
-- class AMSGrad(Adam):
local AMSGrad = Adam:extend("AMSGrad")
-- def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-16,
--              weight_decay: WeightDecay = WeightDecay(), optimized_update: bool = True,
--              amsgrad=True, defaults=None):
function AMSGrad:init(params, lr, betas, eps, weight_decay, optimized_update, amsgrad, defaults)
    if amsgrad == nil then amsgrad = true end
    if defaults == nil then defaults = {} end
    -- defaults.update(dict(amsgrad=amsgrad))
    defaults.amsgrad = amsgrad
    -- super().__init__(params, lr, betas, eps, weight_decay, optimized_update, defaults)
    Adam.init(self, params, lr, betas, eps, weight_decay, optimized_update, defaults)
end

function AMSGrad:init_state(state, group, param)
    -- super().init_state(state, group, param)
    Adam.init_state(self, state, group, param)
    if group.amsgrad then
        state.max_exp_avg_sq = tide.zeros_like(param, { memory_format = tide.preserve_format })
    end
end

function AMSGrad:get_mv(state, group, grad)
    local m, v = Adam.get_mv(self, state, group, grad)
    if group.amsgrad then
        local v_max = state.max_exp_avg_sq
        -- torch.maximum(v_max, v, out=v_max)
        tide.maximum(v_max, v, { out = v_max })
        return m, v_max
    else
        return m, v
    end
end

---------------------------------------------------------------------------------------------
-- labml_nn/optimizers/radam.py
---------------------------------------------------------------------------------------------
-- class RAdam(AMSGrad):
local RAdam = AMSGrad:extend("RAdam")
-- def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
--              weight_decay: WeightDecay = WeightDecay(), optimized_update: bool = True,
--              amsgrad=False, degenerated_to_sgd=True, defaults=None):
function RAdam:init(params, lr, betas, eps, weight_decay, optimized_update, amsgrad,
                    degenerated_to_sgd, defaults)
    eps = eps or 1e-8
    if amsgrad == nil then amsgrad = false end
    if degenerated_to_sgd == nil then degenerated_to_sgd = true end
    self.degenerated_to_sgd = degenerated_to_sgd
    AMSGrad.init(self, params, lr, betas, eps, weight_decay, optimized_update, amsgrad, defaults)
end

function RAdam:step_param(state, group, grad, param)
    grad = self.weight_decay(param, grad, group)
    local m, v = self:get_mv(state, group, grad)
    state.step = state.step + 1
    self:r_adam_update(state, group, param, m, v)
end

-- @staticmethod
function RAdam.calc_rectification_term(beta2, step)
    local beta2_t = beta2 ^ step
    local rho_inf = 2 / (1 - beta2) - 1
    local rho = rho_inf - 2 * step * beta2_t / (1 - beta2_t)
    if rho >= 5 then
        local r2 = (rho - 4) / (rho_inf - 4) * (rho - 2) / rho * rho_inf / (rho_inf - 2)
        return math.sqrt(r2)
    else
        return nil
    end
end

function RAdam:r_adam_update(state, group, param, m, v)
    local beta1, beta2 = unpack(group.betas)
    local bias_correction1 = 1 - beta1 ^ state.step
    local bias_correction2 = 1 - beta2 ^ state.step
    -- r = self.calc_rectification_term(beta2, state['step'])
    local r = self.calc_rectification_term(beta2, state.step)
    local lr = self:get_lr(state, group)
    if r ~= nil then
        if self.optimized_update then
            local denominator = v:sqrt():add_(group.eps)
            local step_size = lr * math.sqrt(bias_correction2) * r / bias_correction1
            param.data:addcdiv_(m, denominator, { value = -step_size })
        else
            local denominator = (v:sqrt() / math.sqrt(bias_correction2)):add_(group.eps)
            local step_size = lr * r / bias_correction1
            param.data:addcdiv_(m, denominator, { value = -step_size })
        end
    elseif self.degenerated_to_sgd then
        local step_size = lr / bias_correction1
        -- param.data.add_(m, alpha=-step_size)
        param.data:add_(m, { alpha = -step_size })
    end
end

---------------------------------------------------------------------------------------------
-- labml_nn/optimizers/ada_belief.py
---------------------------------------------------------------------------------------------
-- class AdaBelief(RAdam):
local AdaBelief = RAdam:extend("AdaBelief")
-- def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-16,
--              weight_decay: WeightDecay = WeightDecay(), amsgrad=False,
--              degenerate_to_sgd=True, rectify=True, defaults=None):
function AdaBelief:init(params, lr, betas, eps, weight_decay, amsgrad, degenerate_to_sgd,
                        rectify, defaults)
    eps = eps or 1e-16
    if amsgrad == nil then amsgrad = false end
    if degenerate_to_sgd == nil then degenerate_to_sgd = true end
    if rectify == nil then rectify = true end
    if defaults == nil then defaults = {} end
    -- super().__init__(params, lr, betas, eps, weight_decay, amsgrad, degenerate_to_sgd, defaults)
    -- (as in labml_nn, these fill RAdam's optimized_update, amsgrad, degenerated_to_sgd slots)
    RAdam.init(self, params, lr, betas, eps, weight_decay, amsgrad, degenerate_to_sgd, defaults)
    self.rectify = rectify
end

function AdaBelief:init_state(state, group, param)
    state.step = 0
    state.exp_avg = tide.zeros_like(param, { memory_format = tide.preserve_format })
    state.exp_avg_var = tide.zeros_like(param, { memory_format = tide.preserve_format })
    if group.amsgrad then
        state.max_exp_avg_var = tide.zeros_like(param, { memory_format = tide.preserve_format })
    end
end

function AdaBelief:get_ms(state, group, grad)
    local beta1, beta2 = unpack(group.betas)
    local m, s = state.exp_avg, state.exp_avg_var
    m:mul_(beta1):add_(grad, { alpha = 1 - beta1 })
    local grad_residual = grad - m
    s:mul_(beta2):addcmul_(grad_residual, grad_residual, { value = 1 - beta2 })
    if group.amsgrad then
        local s_max = state.max_exp_avg_var
        tide.maximum(s_max, s, { out = s_max })
        return m, s_max
    else
        return m, s
    end
end

function AdaBelief:step_param(state, group, grad, param)
    grad = self.weight_decay(param, grad, group)
    local m, s = self:get_ms(state, group, grad)
    state.step = state.step + 1
    if not self.rectify then
        -- self.adam_update(state, group, param, m, s + group['eps'])
        self:adam_update(state, group, param, m, s + group.eps)
    else
        self:r_adam_update(state, group, param, m, s + group.eps)
    end
end

-- the same tiny regression as spec reference (torch.optim.Adam in PyTorch 1.13)
local W = { { 0.5, -0.3, 0.2 }, { 0.1, 0.4, -0.6 } }
local B = { 0.05, -0.1 }
local X = { { 1., 2., -1. }, { 0.5, -1.5, 2. }, { -2., 0.3, 0.7 }, { 1.2, 0.1, -0.4 } }
local Y = { { 1., 0. }, { 0., 1. }, { -1., 0.5 }, { 0.3, -0.2 } }
local function run(make, steps)
    local m = nn.Linear(3, 2)
    tide.no_grad(function()
        m.weight:copy_(tide.tensor(W))
        m.bias:copy_(tide.tensor(B))
    end)
    local opt = make(m:parameters())
    local x, y = tide.tensor(X), tide.tensor(Y)
    local losses = {}
    for _ = 1, steps or 3 do
        -- loss = ((m(x) - y) ** 2).mean()
        local loss = ((m(x) - y) ^ 2):mean()
        opt:zero_grad()
        loss:backward()
        opt:step()
        losses[#losses + 1] = loss:item()
    end
    return tide.cat({ m.weight:detach():flatten(), m.bias:detach() }), losses, opt
end

-- torch.optim.Adam(lr=0.1, betas=(0.9, 0.999), eps=1e-16), 3 steps, PyTorch 1.13
local ADAM_3 = { 0.5967040657997131, -0.008307069540023804, -0.08375336229801178,
    -0.18845714628696442, 0.10339464247226715, -0.30363112688064575, -0.04483765363693237,
    0.19593074917793274 }

describe("labml_nn optimizers (a torch.optim.Optimizer subclass with its own __init__)", function()
    it("Adam steps as torch.optim.Adam on the same parameters", function()
        local got, _, opt = run(function(p) return Adam(p, 0.1, { 0.9, 0.999 }) end)
        close(ADAM_3, got, 1e-5)
        -- the optimized and plain updates agree
        local got2 = run(function(p) return Adam(p, 0.1, { 0.9, 0.999 }, 1e-16, WeightDecay(), false) end)
        close(ADAM_3, got2, 1e-5)
        -- defaults, param_groups and state as PyTorch's Optimizer keeps them
        assert.are.equal(opt.defaults.lr, 0.1)
        assert.are.equal(opt.defaults.weight_decay, 0)
        assert.are.equal(opt.param_groups[1].eps, 1e-16)
        assert.are.equal(#opt.param_groups[1].params, 2)
        local st = opt.state[opt.param_groups[1].params[1]]
        assert.are.equal(st.step, 3)
        assert.are.same(st.exp_avg:size(), tide.Size({ 2, 3 }))
        assert.is_true(tide.isinstance(opt, optim.Optimizer))
        -- optimizer.state_dict()["param_groups"][0]["lr"]
        assert.are.equal(opt:state_dict()["param_groups"][1]["lr"], 0.1)
    end)

    it("AMSGrad matches torch.optim.Adam(amsgrad=True); RAdam and AdaBelief train", function()
        close(ADAM_3, run(function(p) return AMSGrad(p, 0.1, { 0.9, 0.999 }) end), 1e-5)
        for _, make in ipairs({
            function(p) return RAdam(p, 0.05) end,
            function(p) return AdaBelief(p, 0.05) end,
            function(p) return AdaBelief(p, 0.05, nil, nil, nil, nil, nil, false) end,
            function(p) return Adam(p, 0.05, nil, nil, WeightDecay(0.1, false)) end,
        }) do
            local _, losses = run(make, 12)
            for _, l in ipairs(losses) do assert_finite(l, "loss") end
            assert.is_true(losses[#losses] < losses[1], table.concat(losses, ", "))
        end
        -- RAdam's first steps are SGD with momentum (no rectification term yet)
        assert.is_nil(RAdam.calc_rectification_term(0.999, 4))
        assert.is_true(RAdam.calc_rectification_term(0.999, 6) > 0)
    end)

    it("step(closure) runs the closure with grad; ValueError-style checks raise", function()
        local p = nn.Parameter(tide.tensor({ 1.5, -2.5 }))
        local opt = Adam({ p }, 0.1)
        local loss = opt:step(function()
            opt:zero_grad()
            local l = (p * p):sum()
            l:backward()
            return l
        end)
        assert.are.equal(loss:item(), 8.5)
        close({ 1.4, -2.4 }, p, 1e-6)
        assert.has_error(function() Adam({ p }, -1) end, "Invalid learning rate: -1")
        -- the base class's init checks its arguments
        assert.has_error(function() optim.Optimizer.init({}, { p }, 0.1) end,
            "tide: Optimizer: Optimizer.init(self, params, defaults): expected defaults to " ..
            "be a table such as {lr = 0.01}, got number")
        local Bare = optim.Optimizer:extend("Bare")
        function Bare:init(params) self.params = params end -- luacheck: ignore
        assert.has_error(function() Bare({ p }) end,
            "tide: Bare: its init did not call Optimizer.init(self, params, defaults) " ..
            "(PyTorch's super().__init__(params, defaults)); the optimizer has no param_groups")
        local NoDefaults = optim.Optimizer:extend("NoDefaults")
        assert.has_error(function() NoDefaults({ p }) end,
            "tide: NoDefaults: the class has no defaults and no init; give " ..
            "Optimizer:extend(name, {lr = 0.01, ...}) its defaults, or define function " ..
            "NoDefaults:init(params, ...) that calls Optimizer.init(self, params, defaults)")
        -- add_param_group takes the optimizer's defaults
        local q = nn.Parameter(tide.ones(2))
        opt:add_param_group({ params = { q }, lr = 0.5 })
        assert.are.equal(opt.param_groups[2].eps, 1e-16)
        assert.are.equal(opt.param_groups[2].lr, 0.5)
    end)
end)

---------------------------------------------------------------------------------------------
-- labml_nn/diffusion/ddpm/utils.py and __init__.py
---------------------------------------------------------------------------------------------
-- def gather(consts: torch.Tensor, t: torch.Tensor):
local function gather(consts, t)
    -- c = consts.gather(-1, t)   (t is the 0-based time step; gather's indices are 1-based)
    local c = consts:gather(-1, t + 1)
    return c:reshape(-1, 1, 1, 1)
end

-- class DenoiseDiffusion:
local DenoiseDiffusion = ported.class("DenoiseDiffusion")
-- def __init__(self, eps_model: nn.Module, n_steps: int, device: torch.device):
function DenoiseDiffusion:__init__(eps_model, n_steps, device)
    self.eps_model = eps_model
    -- self.beta = torch.linspace(0.0001, 0.02, n_steps).to(device)
    self.beta = tide.linspace(0.0001, 0.02, n_steps):to(device)
    self.alpha = 1. - self.beta
    -- self.alpha_bar = torch.cumprod(self.alpha, dim=0)
    self.alpha_bar = tide.cumprod(self.alpha, { dim = 1 })
    self.n_steps = n_steps
    self.sigma2 = self.beta
end

function DenoiseDiffusion:q_xt_x0(x0, t)
    -- mean = gather(self.alpha_bar, t) ** 0.5 * x0
    local mean = gather(self.alpha_bar, t) ^ 0.5 * x0
    local var = 1 - gather(self.alpha_bar, t)
    return mean, var
end

function DenoiseDiffusion:q_sample(x0, t, eps)
    if eps == nil then
        eps = tide.randn_like(x0)
    end
    local mean, var = self:q_xt_x0(x0, t)
    return mean + (var ^ 0.5) * eps
end

function DenoiseDiffusion:p_sample(xt, t)
    local eps_theta = self.eps_model(xt, t)
    local alpha_bar = gather(self.alpha_bar, t)
    local alpha = gather(self.alpha, t)
    local eps_coef = (1 - alpha) / (1 - alpha_bar) ^ .5
    local mean = 1 / (alpha ^ 0.5) * (xt - eps_coef * eps_theta)
    local var = gather(self.sigma2, t)
    -- eps = torch.randn(xt.shape, device=xt.device)
    local eps = tide.randn(xt.shape, { device = xt.device })
    return mean + (var ^ .5) * eps
end

-- def loss(self, x0: torch.Tensor, noise: Optional[torch.Tensor] = None):
function DenoiseDiffusion:loss(x0, noise)
    -- batch_size = x0.shape[0]
    local batch_size = x0.shape[1]
    -- t = torch.randint(0, self.n_steps, (batch_size,), device=x0.device, dtype=torch.long)
    local t = tide.randint(0, self.n_steps, { batch_size }, { device = x0.device, dtype = tide.long })
    if noise == nil then
        noise = tide.randn_like(x0)
    end
    -- xt = self.q_sample(x0, t, eps=noise)
    local xt = self:q_sample(x0, t, noise)
    local eps_theta = self.eps_model(xt, t)
    return F.mse_loss(noise, eps_theta)
end

---------------------------------------------------------------------------------------------
-- labml_nn/diffusion/ddpm/unet.py
---------------------------------------------------------------------------------------------
local Swish = nn.Module:extend("Swish")
function Swish:forward(x)
    return x * tide.sigmoid(x)
end

local TimeEmbedding = nn.Module:extend("TimeEmbedding")
function TimeEmbedding:init(n_channels)
    self.n_channels = n_channels
    -- self.lin1 = nn.Linear(self.n_channels // 4, self.n_channels)
    self.lin1 = nn.Linear(math.floor(self.n_channels / 4), self.n_channels)
    self.act = Swish()
    self.lin2 = nn.Linear(self.n_channels, self.n_channels)
end

function TimeEmbedding:forward(t)
    -- half_dim = self.n_channels // 8
    local half_dim = math.floor(self.n_channels / 8)
    -- emb = math.log(10_000) / (half_dim - 1)
    local emb = math.log(10000) / (half_dim - 1)
    -- emb = torch.exp(torch.arange(half_dim, device=t.device) * -emb)
    emb = tide.exp(tide.arange(half_dim, { device = t.device }) * -emb)
    -- emb = t[:, None] * emb[None, :]
    emb = t[{ {}, tide.newaxis }] * emb[{ tide.newaxis, {} }]
    -- emb = torch.cat((emb.sin(), emb.cos()), dim=1)
    emb = tide.cat({ emb:sin(), emb:cos() }, { dim = 2 })
    emb = self.act(self.lin1(emb))
    emb = self.lin2(emb)
    return emb
end

local ResidualBlock = nn.Module:extend("ResidualBlock")
-- def __init__(self, in_channels, out_channels, time_channels, n_groups: int = 32, dropout: float = 0.1):
function ResidualBlock:init(in_channels, out_channels, time_channels, n_groups, dropout)
    n_groups, dropout = n_groups or 32, dropout or 0.1
    self.norm1 = nn.GroupNorm(n_groups, in_channels)
    self.act1 = Swish()
    -- self.conv1 = nn.Conv2d(in_channels, out_channels, kernel_size=(3, 3), padding=(1, 1))
    self.conv1 = nn.Conv2d(in_channels, out_channels, { kernel_size = { 3, 3 }, padding = { 1, 1 } })
    self.norm2 = nn.GroupNorm(n_groups, out_channels)
    self.act2 = Swish()
    self.conv2 = nn.Conv2d(out_channels, out_channels, { kernel_size = { 3, 3 }, padding = { 1, 1 } })
    if in_channels ~= out_channels then
        self.shortcut = nn.Conv2d(in_channels, out_channels, { kernel_size = { 1, 1 } })
    else
        self.shortcut = nn.Identity()
    end
    self.time_emb = nn.Linear(time_channels, out_channels)
    self.time_act = Swish()
    self.dropout = nn.Dropout(dropout)
end

function ResidualBlock:forward(x, t)
    local h = self.conv1(self.act1(self.norm1(x)))
    -- h += self.time_emb(self.time_act(t))[:, :, None, None]
    h = h + self.time_emb(self.time_act(t))[{ {}, {}, tide.newaxis, tide.newaxis }]
    h = self.conv2(self.dropout(self.act2(self.norm2(h))))
    return h + self.shortcut(x)
end

local AttentionBlock = nn.Module:extend("AttentionBlock")
-- def __init__(self, n_channels: int, n_heads: int = 1, d_k: int = None, n_groups: int = 32):
function AttentionBlock:init(n_channels, n_heads, d_k, n_groups)
    n_heads, n_groups = n_heads or 1, n_groups or 32
    if d_k == nil then
        d_k = n_channels
    end
    self.norm = nn.GroupNorm(n_groups, n_channels)
    self.projection = nn.Linear(n_channels, n_heads * d_k * 3)
    self.output = nn.Linear(n_heads * d_k, n_channels)
    self.scale = d_k ^ -0.5
    self.n_heads = n_heads
    self.d_k = d_k
end

function AttentionBlock:forward(x, t)
    local _ = t -- luacheck: ignore
    -- batch_size, n_channels, height, width = x.shape
    local batch_size, n_channels, height, width = unpack(x.shape)
    -- x = x.view(batch_size, n_channels, -1).permute(0, 2, 1)
    x = x:view(batch_size, n_channels, -1):permute(1, 3, 2)
    local qkv = self.projection(x):view(batch_size, -1, self.n_heads, 3 * self.d_k)
    -- q, k, v = torch.chunk(qkv, 3, dim=-1)
    local q, k, v = unpack(tide.chunk(qkv, 3, { dim = -1 }))
    local attn = tide.einsum('bihd,bjhd->bijh', q, k) * self.scale
    -- attn = attn.softmax(dim=2)
    attn = attn:softmax({ dim = 3 })
    local res = tide.einsum('bijh,bjhd->bihd', attn, v)
    res = res:view(batch_size, -1, self.n_heads * self.d_k)
    res = self.output(res)
    -- res += x
    res = res + x
    -- res = res.permute(0, 2, 1).view(batch_size, n_channels, height, width)
    res = res:permute(1, 3, 2):view(batch_size, n_channels, height, width)
    return res
end

local DownBlock = nn.Module:extend("DownBlock")
function DownBlock:init(in_channels, out_channels, time_channels, has_attn)
    self.res = ResidualBlock(in_channels, out_channels, time_channels)
    if has_attn then
        self.attn = AttentionBlock(out_channels)
    else
        self.attn = nn.Identity()
    end
end

function DownBlock:forward(x, t)
    x = self.res(x, t)
    x = self.attn(x)
    return x
end

local UpBlock = nn.Module:extend("UpBlock")
function UpBlock:init(in_channels, out_channels, time_channels, has_attn)
    self.res = ResidualBlock(in_channels + out_channels, out_channels, time_channels)
    if has_attn then
        self.attn = AttentionBlock(out_channels)
    else
        self.attn = nn.Identity()
    end
end

UpBlock.forward = DownBlock.forward

local MiddleBlock = nn.Module:extend("MiddleBlock")
function MiddleBlock:init(n_channels, time_channels)
    self.res1 = ResidualBlock(n_channels, n_channels, time_channels)
    self.attn = AttentionBlock(n_channels)
    self.res2 = ResidualBlock(n_channels, n_channels, time_channels)
end

function MiddleBlock:forward(x, t)
    x = self.res1(x, t)
    x = self.attn(x)
    x = self.res2(x, t)
    return x
end

local Upsample = nn.Module:extend("Upsample")
function Upsample:init(n_channels)
    -- self.conv = nn.ConvTranspose2d(n_channels, n_channels, (4, 4), (2, 2), (1, 1))
    self.conv = nn.ConvTranspose2d(n_channels, n_channels, { 4, 4 }, { 2, 2 }, { 1, 1 })
end

function Upsample:forward(x, t)
    local _ = t -- luacheck: ignore
    return self.conv(x)
end

local Downsample = nn.Module:extend("Downsample")
function Downsample:init(n_channels)
    self.conv = nn.Conv2d(n_channels, n_channels, { 3, 3 }, { 2, 2 }, { 1, 1 })
end

Downsample.forward = Upsample.forward

local UNet = nn.Module:extend("UNet")
-- def __init__(self, image_channels: int = 3, n_channels: int = 64, ch_mults = (1, 2, 2, 4),
--              is_attn = (False, False, True, True), n_blocks: int = 2):
function UNet:init(image_channels, n_channels, ch_mults, is_attn, n_blocks)
    image_channels, n_channels = image_channels or 3, n_channels or 64
    ch_mults = ch_mults or { 1, 2, 2, 4 }
    is_attn = is_attn or { false, false, true, true }
    n_blocks = n_blocks or 2
    local n_resolutions = #ch_mults
    self.image_proj = nn.Conv2d(image_channels, n_channels, { kernel_size = { 3, 3 }, padding = { 1, 1 } })
    self.time_emb = TimeEmbedding(n_channels * 4)
    local down = {}
    local in_channels = n_channels
    local out_channels = in_channels
    -- for i in range(n_resolutions):
    for i = 1, n_resolutions do
        out_channels = in_channels * ch_mults[i]
        for _ = 1, n_blocks do
            -- down.append(DownBlock(in_channels, out_channels, n_channels * 4, is_attn[i]))
            down[#down + 1] = DownBlock(in_channels, out_channels, n_channels * 4, is_attn[i])
            in_channels = out_channels
        end
        -- if i < n_resolutions - 1:
        if i < n_resolutions then
            down[#down + 1] = Downsample(in_channels)
        end
    end
    self.down = nn.ModuleList(down)
    self.middle = MiddleBlock(out_channels, n_channels * 4)
    local up = {}
    in_channels = out_channels
    -- for i in reversed(range(n_resolutions)):
    for i = n_resolutions, 1, -1 do
        out_channels = in_channels
        for _ = 1, n_blocks do
            up[#up + 1] = UpBlock(in_channels, out_channels, n_channels * 4, is_attn[i])
        end
        -- out_channels = in_channels // ch_mults[i]
        out_channels = math.floor(in_channels / ch_mults[i])
        up[#up + 1] = UpBlock(in_channels, out_channels, n_channels * 4, is_attn[i])
        in_channels = out_channels
        -- if i > 0:
        if i > 1 then
            up[#up + 1] = Upsample(in_channels)
        end
    end
    self.up = nn.ModuleList(up)
    self.norm = nn.GroupNorm(8, n_channels)
    self.act = Swish()
    self.final = nn.Conv2d(in_channels, image_channels, { kernel_size = { 3, 3 }, padding = { 1, 1 } })
end

function UNet:forward(x, t)
    t = self.time_emb(t)
    x = self.image_proj(x)
    local h = { x }
    -- for m in self.down:
    for _, m in ipairs(self.down) do
        x = m(x, t)
        h[#h + 1] = x
    end
    x = self.middle(x, t)
    for _, m in ipairs(self.up) do
        -- if isinstance(m, Upsample):
        if tide.isinstance(m, Upsample) then
            x = m(x, t)
        else
            -- s = h.pop()
            local s = table.remove(h)
            -- x = torch.cat((x, s), dim=1)
            x = tide.cat({ x, s }, { dim = 2 })
            x = m(x, t)
        end
    end
    return self.final(self.act(self.norm(x)))
end

-- a tiny eps model: eps_theta(xt, t) from a 1x1 conv and the time step
local TinyEps = nn.Module:extend("TinyEps")
function TinyEps:init()
    self.conv = nn.Conv2d(1, 1, 3, { padding = 1 })
    self.t_scale = nn.Parameter(tide.zeros(1))
end

function TinyEps:forward(xt, t)
    return self.conv(xt) + self.t_scale * t:float():reshape(-1, 1, 1, 1)
end

describe("labml_nn diffusion/ddpm (DenoiseDiffusion, UNet)", function()
    it("q_xt_x0 and the time embedding match PyTorch; a tiny eps model trains", function()
        tide.manual_seed(0)
        local diffusion = DenoiseDiffusion(TinyEps(), 10, "cpu")
        local x0 = tide.tensor({ { { { 1., -1. }, { 0.5, 2. } } }, { { { 0.3, 0.0 }, { -0.7, 1.5 } } } })
        local t = tide.tensor({ 0, 9 })
        local mean, var = diffusion:q_xt_x0(x0, t)
        close({ 0.9999499917030334, -0.9999499917030334, 0.4999749958515167, 1.999899983406067,
            0.28519564867019653, 0.0, -0.6654564738273621, 1.425978183746338 }, mean, 1e-6)
        close({ 0.00010001659393310547, 0.09626054763793945 }, var, 1e-6)
        -- the time embedding before its linears, n_channels = 32
        local te = TimeEmbedding(32)
        local half_dim = 4
        local emb = math.log(10000) / (half_dim - 1)
        emb = tide.exp(tide.arange(half_dim) * -emb)
        emb = t[{ {}, tide.newaxis }] * emb[{ tide.newaxis, {} }]
        emb = tide.cat({ emb:sin(), emb:cos() }, { dim = 2 })
        assert.are.equal(emb.dtype, "float32")
        close({ 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.41211849451065063, 0.4056985676288605,
            0.019388698041439056, 0.0008999998099170625, -0.9111302495002747, 0.9140069484710693,
            0.9998120069503784, 0.9999995827674866 }, emb, 1e-6)
        assert.are.same(te(t):size(), tide.Size({ 2, 32 }))
        -- training: x0 is a fixed pattern; the loss falls
        local data = tide.randn(16, 1, 4, 4)
        local opt = optim.Adam(diffusion.eps_model:parameters(), { lr = 0.05 })
        local noise = tide.randn_like(data)
        local losses = {}
        for _ = 1, 30 do
            local loss = diffusion:loss(data, noise)
            opt:zero_grad()
            loss:backward()
            opt:step()
            losses[#losses + 1] = loss:item()
        end
        for _, l in ipairs(losses) do assert_finite(l, "loss") end
        local first = (losses[1] + losses[2] + losses[3]) / 3
        local last = (losses[28] + losses[29] + losses[30]) / 3
        assert.is_true(last < first, table.concat(losses, ", "))
        -- sampling: x_{t-1} from x_t, the shape kept
        local xt = tide.randn(2, 1, 4, 4)
        for step = 9, 0, -1 do
            -- xt = diffusion.p_sample(xt, xt.new_full((n_samples,), t, dtype=torch.long))
            xt = diffusion:p_sample(xt, xt:new_full({ 2 }, step, { dtype = tide.long }))
        end
        assert.are.same(xt:size(), tide.Size({ 2, 1, 4, 4 }))
        assert_finite(xt:abs():max():item(), "sample")
    end)

    it("the UNet maps 8x8 images to 8x8 noise and trains as the eps model", function()
        tide.manual_seed(0)
        -- UNet(image_channels=1, n_channels=32, ch_mults=[1, 2], is_attn=[False, True], n_blocks=1)
        local eps_model = UNet(1, 32, { 1, 2 }, { false, true }, 1)
        assert.is_true(tide.isinstance(eps_model.up[3], Upsample))
        local x = tide.randn(2, 1, 8, 8)
        local t = tide.tensor({ 3, 7 })
        assert.are.same(eps_model(x, t):size(), tide.Size({ 2, 1, 8, 8 }))
        local diffusion = DenoiseDiffusion(eps_model, 20, "cpu")
        local opt = optim.Adam(eps_model:parameters(), { lr = 2e-3 })
        local losses = {}
        for _ = 1, 3 do
            local loss = diffusion:loss(x, tide.ones_like(x) * 0.5)
            opt:zero_grad()
            loss:backward()
            opt:step()
            losses[#losses + 1] = loss:item()
        end
        -- every parameter has a gradient but the attention blocks' norm (unused in its forward,
        -- as in labml_nn)
        -- for name, p in eps_model.named_parameters():
        for _, np in ipairs(eps_model:named_parameters()) do
            local name, p = np[1], np[2]
            if not name:find("attn.norm", 1, true) then
                assert.is_not_nil(p.grad, name)
            else
                assert.is_nil(p.grad, name)
            end
        end
        assert.is_true(losses[3] < losses[1], table.concat(losses, ", "))
    end)
end)

---------------------------------------------------------------------------------------------
-- labml_nn/transformers/feed_forward.py, utils.py and switch/__init__.py
---------------------------------------------------------------------------------------------
local FeedForward = nn.Module:extend("FeedForward")
-- def __init__(self, d_model, d_ff, dropout=0.1, activation=nn.ReLU(), is_gated=False,
--              bias1=True, bias2=True, bias_gate=True):
function FeedForward:init(d_model, d_ff, dropout, activation, is_gated, bias1, bias2, bias_gate)
    if dropout == nil then dropout = 0.1 end
    activation = activation or nn.ReLU()
    if bias1 == nil then bias1 = true end
    if bias2 == nil then bias2 = true end
    if bias_gate == nil then bias_gate = true end
    -- self.layer1 = nn.Linear(d_model, d_ff, bias=bias1)
    self.layer1 = nn.Linear(d_model, d_ff, { bias = bias1 })
    self.layer2 = nn.Linear(d_ff, d_model, { bias = bias2 })
    self.dropout = nn.Dropout(dropout)
    self.activation = activation
    self.is_gated = is_gated
    if is_gated then
        self.linear_v = nn.Linear(d_model, d_ff, { bias = bias_gate })
    end
end

function FeedForward:forward(x)
    local g = self.activation(self.layer1(x))
    if self.is_gated then
        x = g * self.linear_v(x)
    else
        x = g
    end
    x = self.dropout(x)
    return self.layer2(x)
end

-- def clone_module_list(module: M, n: int) -> TypedModuleList[M]:
local function clone_module_list(module, n)
    -- return nn.ModuleList([copy.deepcopy(module) for _ in range(n)])
    local list = {}
    for _ = 1, n do list[#list + 1] = tide.deepcopy(module) end
    return nn.ModuleList(list)
end

local SwitchFeedForward = nn.Module:extend("SwitchFeedForward")
-- def __init__(self, *, capacity_factor, drop_tokens, is_scale_prob, n_experts, expert, d_model):
function SwitchFeedForward:init(opts)
    local capacity_factor, drop_tokens, is_scale_prob = opts.capacity_factor, opts.drop_tokens,
        opts.is_scale_prob
    local n_experts, expert, d_model = opts.n_experts, opts.expert, opts.d_model
    self.capacity_factor = capacity_factor
    self.is_scale_prob = is_scale_prob
    self.n_experts = n_experts
    self.drop_tokens = drop_tokens
    self.experts = clone_module_list(expert, n_experts)
    self.switch = nn.Linear(d_model, n_experts)
    -- self.softmax = nn.Softmax(dim=-1)
    self.softmax = nn.Softmax({ dim = -1 })
end

function SwitchFeedForward:forward(x)
    -- seq_len, batch_size, d_model = x.shape
    local seq_len, batch_size, d_model = unpack(x.shape)
    x = x:view(-1, d_model)
    local route_prob = self.softmax(self.switch(x))
    -- route_prob_max, routes = torch.max(route_prob, dim=-1)
    local route_prob_max, routes = tide.max(route_prob, { dim = -1 })
    -- indexes_list = [torch.eq(routes, i).nonzero(as_tuple=True)[0] for i in range(self.n_experts)]
    local indexes_list = {}
    for i = 1, self.n_experts do
        indexes_list[i] = tide.eq(routes, i):nonzero({ as_tuple = true })[1]
    end
    local final_output = x:new_zeros(x.shape)
    -- capacity = int(self.capacity_factor * len(x) / self.n_experts)
    local capacity = math.floor(self.capacity_factor * #x / self.n_experts)
    -- counts = x.new_tensor([len(indexes_list[i]) for i in range(self.n_experts)])
    local lens = {}
    for i = 1, self.n_experts do lens[i] = #indexes_list[i] end
    local counts = x:new_tensor(lens)
    local dropped = {}
    if self.drop_tokens then
        for i = 1, self.n_experts do
            -- if len(indexes_list[i]) <= capacity: continue
            if #indexes_list[i] > capacity then
                -- indexes_list[i] = indexes_list[i][torch.randperm(len(indexes_list[i]))]
                indexes_list[i] = indexes_list[i][tide.randperm(#indexes_list[i])]
                -- dropped.append(indexes_list[i][capacity:])
                dropped[#dropped + 1] = indexes_list[i][{ { capacity + 1, -1 } }]
                -- indexes_list[i] = indexes_list[i][:capacity]
                indexes_list[i] = indexes_list[i][{ { 1, capacity } }]
            end
        end
    end
    -- expert_output = [self.experts[i](x[indexes_list[i], :]) for i in range(self.n_experts)]
    local expert_output = {}
    for i = 1, self.n_experts do
        expert_output[i] = self.experts[i](x[{ indexes_list[i], {} }])
    end
    for i = 1, self.n_experts do
        -- final_output[indexes_list[i], :] = expert_output[i]
        final_output[{ indexes_list[i], {} }] = expert_output[i]
    end
    -- if dropped:
    if #dropped > 0 then
        dropped = tide.cat(dropped)
        final_output[{ dropped, {} }] = x[{ dropped, {} }]
    end
    if self.is_scale_prob then
        final_output = final_output * route_prob_max:view(-1, 1)
    else
        final_output = final_output * (route_prob_max / route_prob_max:detach()):view(-1, 1)
    end
    final_output = final_output:view(seq_len, batch_size, d_model)
    -- return final_output, counts, route_prob.sum(0), len(dropped), route_prob_max
    return final_output, counts, route_prob:sum(1), #dropped, route_prob_max
end

describe("labml_nn transformers/switch (SwitchFeedForward)", function()
    local function make(capacity_factor, drop_tokens)
        local m = SwitchFeedForward({ capacity_factor = capacity_factor, drop_tokens = drop_tokens,
            is_scale_prob = true, n_experts = 3, expert = FeedForward(4, 8, 0.), d_model = 4 })
        -- for k, (name, p) in enumerate(m.named_parameters()):
        --     p.data = torch.sin(torch.arange(p.numel()).float() + k).view_as(p) * 0.5
        for k, p in ipairs(m:parameters()) do
            p.data = tide.sin(tide.arange(p:numel()):float() + (k - 1)):view_as(p) * 0.5
        end
        return m
    end
    -- x = torch.sin(torch.arange(24).float() * 0.7).view(3, 2, 4)
    local x = tide.sin(tide.arange(24):float() * 0.7):view(3, 2, 4)

    it("routes each token to its expert as PyTorch does (values, counts, gradients)", function()
        local m = make(1.0, false)
        local out, counts, rp, nd = m(x)
        close({ 0.5384089946746826, -0.5258322954177856, -0.6903080344200134, 0.34036076068878174,
            0.22986100614070892, 0.09275413304567337, 0.06694170832633972, 0.022642700001597404,
            0.531739354133606, -0.647964596748352, -0.6346608400344849, 0.4633254408836365,
            -0.33985137939453125, -0.7569800019264221, 0.3283049762248993, 0.8429774641990662,
            0.2908145487308502, 0.09008071571588516, 0.04589172825217247, 0.04773948714137077,
            -0.45327258110046387, -0.6451427936553955, 0.4027661681175232, 0.7144955992698669 },
            out, 1e-5)
        close({ 2, 2, 2 }, counts)
        assert.are.equal(counts.dtype, "float32")
        close({ 1.937055230140686, 1.878300666809082, 2.1846442222595215 }, rp, 1e-5)
        assert.are.equal(nd, 0)
        -- out.sum().backward()
        out:sum():backward()
        close({ 0.2219710499048233, 0.022175226360559464, -0.18804997205734253,
            -0.3098324239253998, -0.21705202758312225, -0.18161414563655853, -0.0607602633535862,
            0.08867021650075912, -0.004919069819152355, 0.15943890810012817, 0.24881026148796082,
            0.22116224467754364 }, m.switch.weight.grad, 1e-5)
        for i = 1, 3 do assert.is_not_nil(m.experts[i].layer1.weight.grad) end
    end)

    it("drops tokens over capacity (they pass through scaled) and trains with the balancing loss", function()
        tide.manual_seed(0)
        local m = make(0.5, true)
        local out, counts, _, nd, route_prob_max = m(x)
        -- capacity = int(0.5 * 6 / 3) = 1: each expert keeps one of its two tokens
        assert.are.equal(nd, 3)
        close({ 2, 2, 2 }, counts)
        assert.are.same(out:size(), tide.Size({ 3, 2, 4 }))
        -- three rows are x scaled by their route probability
        local flat, xs = out:view(-1, 4), x:view(-1, 4)
        local passed = 0
        for r = 1, 6 do
            local want = xs[r] * route_prob_max[r]
            if (flat[r] - want):abs():max():item() < 1e-6 then passed = passed + 1 end
        end
        assert.are.equal(passed, 3)
        -- training with the switch load-balancing loss of labml_nn's experiment
        local opt = optim.Adam(m:parameters(), { lr = 0.01 })
        local target = tide.cos(x)
        local losses = {}
        for _ = 1, 15 do
            local o, c, route_prob = m(x)
            -- total = counts.sum(dim=-1, keepdims=True)
            local total = c:sum({ dim = -1, keepdims = true })
            local route_frac = c / total
            route_prob = route_prob / total
            -- load_balancing_loss = n_experts * (route_frac * route_prob).sum()
            local load_balancing_loss = 3 * (route_frac * route_prob):sum()
            local loss = F.mse_loss(o, target) + 0.01 * load_balancing_loss
            opt:zero_grad()
            loss:backward()
            opt:step()
            losses[#losses + 1] = loss:item()
        end
        for _, l in ipairs(losses) do assert_finite(l, "loss") end
        assert.is_true(losses[#losses] < losses[1], table.concat(losses, ", "))
    end)
end)

---------------------------------------------------------------------------------------------
-- labml_nn/normalization/weight_standardization/__init__.py and conv2d.py
---------------------------------------------------------------------------------------------
-- def weight_standardization(weight: torch.Tensor, eps: float):
local function weight_standardization(weight, eps)
    -- c_out, c_in, *kernel_shape = weight.shape
    local c_out, c_in, kernel_shape = weight.shape[1], weight.shape[2], weight.shape[{ { 3, -1 } }]
    weight = weight:view(c_out, -1)
    -- var, mean = torch.var_mean(weight, dim=1, keepdim=True)
    local var, mean = tide.var_mean(weight, { dim = 2, keepdim = true })
    weight = (weight - mean) / (tide.sqrt(var + eps))
    -- return weight.view(c_out, c_in, *kernel_shape)
    return weight:view(tide.Size({ c_out, c_in }) + kernel_shape)
end

-- class Conv2d(nn.Conv2d):
local WSConv2d = nn.Conv2d:extend("Conv2d")
-- def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
--              groups: int = 1, bias: bool = True, padding_mode: str = 'zeros', eps: float = 1e-5):
function WSConv2d:init(in_channels, out_channels, kernel_size, opts)
    opts = opts or {}
    local stride, padding, dilation = opts.stride or 1, opts.padding or 0, opts.dilation or 1
    local groups, bias, padding_mode = opts.groups or 1, opts.bias, opts.padding_mode or 'zeros'
    if bias == nil then bias = true end
    local eps = opts.eps or 1e-5
    -- super(Conv2d, self).__init__(in_channels, out_channels, kernel_size, stride=stride, ...)
    nn.Conv2d.init(self, in_channels, out_channels, kernel_size, { stride = stride,
        padding = padding, dilation = dilation, groups = groups, bias = bias,
        padding_mode = padding_mode })
    self.eps = eps
end

function WSConv2d:forward(x)
    return F.conv2d(x, weight_standardization(self.weight, self.eps), self.bias, self.stride,
        self.padding, self.dilation, self.groups)
end

---------------------------------------------------------------------------------------------
-- labml_nn/transformers/mha.py (as in ported_scripts41) and primer_ez/__init__.py
---------------------------------------------------------------------------------------------
-- class PrepareForMultiHeadAttention(nn.Module):
local PrepareForMultiHeadAttention = nn.Module:extend("PrepareForMultiHeadAttention")
function PrepareForMultiHeadAttention:init(d_model, heads, d_k, bias)
    -- self.linear = nn.Linear(d_model, heads * d_k, bias=bias)
    self.linear = nn.Linear(d_model, heads * d_k, { bias = bias })
    self.heads = heads
    self.d_k = d_k
end

function PrepareForMultiHeadAttention:forward(x)
    -- head_shape = x.shape[:-1]
    local head_shape = x.shape[{ { 1, -2 } }]
    x = self.linear(x)
    -- x = x.view(*head_shape, self.heads, self.d_k)
    x = x:view(head_shape + { self.heads, self.d_k })
    return x
end

-- class MultiHeadAttention(nn.Module):
local MultiHeadAttention = nn.Module:extend("MultiHeadAttention")
-- def __init__(self, heads: int, d_model: int, dropout_prob: float = 0.1, bias: bool = True):
function MultiHeadAttention:init(heads, d_model, dropout_prob, bias)
    if dropout_prob == nil then dropout_prob = 0.1 end
    if bias == nil then bias = true end
    -- self.d_k = d_model // heads
    self.d_k = math.floor(d_model / heads)
    self.heads = heads
    self.query = PrepareForMultiHeadAttention(d_model, heads, self.d_k, bias)
    self.key = PrepareForMultiHeadAttention(d_model, heads, self.d_k, bias)
    self.value = PrepareForMultiHeadAttention(d_model, heads, self.d_k, true)
    -- self.softmax = nn.Softmax(dim=1)
    self.softmax = nn.Softmax({ dim = 2 })
    self.output = nn.Linear(d_model, d_model)
    self.dropout = nn.Dropout(dropout_prob)
    self.scale = 1 / math.sqrt(self.d_k)
    self.attn = nil
end

function MultiHeadAttention:get_scores(query, key)
    return tide.einsum('ibhd,jbhd->ijbh', query, key)
end

function MultiHeadAttention:prepare_mask(mask, query_shape, key_shape)
    -- assert mask.shape[0] == 1 or mask.shape[0] == query_shape[0]
    assert(mask.shape[1] == 1 or mask.shape[1] == query_shape[1])
    assert(mask.shape[2] == key_shape[1])
    assert(mask.shape[3] == 1 or mask.shape[3] == query_shape[2])
    -- mask = mask.unsqueeze(-1)
    mask = mask:unsqueeze(-1)
    return mask
end

-- def forward(self, *, query, key, value, mask=None):
function MultiHeadAttention:forward(args)
    local query, key, value, mask = args.query, args.key, args.value, args.mask
    -- seq_len, batch_size, _ = query.shape
    local seq_len, batch_size = query.shape[1], query.shape[2]
    if mask ~= nil then
        mask = self:prepare_mask(mask, query.shape, key.shape)
    end
    query = self.query(query)
    key = self.key(key)
    value = self.value(value)
    local scores = self:get_scores(query, key)
    -- scores *= self.scale
    scores = scores * self.scale
    if mask ~= nil then
        -- scores = scores.masked_fill(mask == 0, float('-inf'))
        scores = scores:masked_fill(mask:eq(0), -math.huge)
    end
    local attn = self.softmax(scores)
    attn = self.dropout(attn)
    local x = tide.einsum("ijbh,jbhd->ibhd", attn, value)
    self.attn = attn:detach()
    x = x:reshape(seq_len, batch_size, -1)
    return self.output(x)
end

-- labml_nn/transformers/utils.py
local function subsequent_mask(seq_len)
    -- mask = torch.tril(torch.ones(seq_len, seq_len)).to(torch.bool).unsqueeze(-1)
    local mask = tide.tril(tide.ones(seq_len, seq_len)):to(tide.bool):unsqueeze(-1)
    return mask
end

local SquaredReLU = nn.Module:extend("SquaredReLU")
function SquaredReLU:init()
    self.relu = nn.ReLU()
end

function SquaredReLU:forward(x)
    x = self.relu(x)
    return x * x
end

local SpatialDepthWiseConvolution = nn.Module:extend("SpatialDepthWiseConvolution")
-- def __init__(self, d_k: int, kernel_size: int = 3):
function SpatialDepthWiseConvolution:init(d_k, kernel_size)
    kernel_size = kernel_size or 3
    self.kernel_size = kernel_size
    -- self.conv = nn.Conv1d(in_channels=d_k, out_channels=d_k,
    --                       kernel_size=(kernel_size,), padding=(kernel_size - 1,), groups=d_k)
    self.conv = nn.Conv1d({ in_channels = d_k, out_channels = d_k,
        kernel_size = { kernel_size }, padding = { kernel_size - 1 }, groups = d_k })
end

function SpatialDepthWiseConvolution:forward(x)
    -- seq_len, batch_size, heads, d_k = x.shape
    local seq_len, batch_size, heads, d_k = unpack(x.shape)
    -- x = x.permute(1, 2, 3, 0)
    x = x:permute(2, 3, 4, 1)
    x = x:view(batch_size * heads, d_k, seq_len)
    x = self.conv(x)
    -- x = x[:, :, :-(self.kernel_size - 1)]
    x = x[{ {}, {}, { 1, -self.kernel_size } }]
    x = x:view(batch_size, heads, d_k, seq_len)
    -- x = x.permute(3, 0, 1, 2)
    x = x:permute(4, 1, 2, 3)
    return x
end

-- class MultiDConvHeadAttention(MultiHeadAttention):
local MultiDConvHeadAttention = MultiHeadAttention:extend("MultiDConvHeadAttention")
function MultiDConvHeadAttention:init(heads, d_model, dropout_prob)
    if dropout_prob == nil then dropout_prob = 0.1 end
    -- super().__init__(heads, d_model, dropout_prob)
    MultiHeadAttention.init(self, heads, d_model, dropout_prob)
    self.query = nn.Sequential(self.query, SpatialDepthWiseConvolution(self.d_k))
    self.key = nn.Sequential(self.key, SpatialDepthWiseConvolution(self.d_k))
    self.value = nn.Sequential(self.value, SpatialDepthWiseConvolution(self.d_k))
end

describe("labml_nn weight_standardization and primer_ez", function()
    it("the weight-standardized Conv2d matches PyTorch and trains", function()
        -- conv = Conv2d(2, 3, 3, padding=1)
        local conv = WSConv2d(2, 3, 3, { padding = 1 })
        tide.no_grad(function()
            conv.weight:copy_(tide.sin(tide.arange(54):float()):view(3, 2, 3, 3))
            conv.bias:copy_(tide.tensor({ 0.1, -0.2, 0.3 }))
        end)
        local x = tide.cos(tide.arange(32):float() * 0.3):view(1, 2, 4, 4)
        local y = conv(x)
        -- y[0, :, 1].flatten()
        close({ 0.5042790770530701, 0.7699352502822876, 0.7973823547363281, 0.34734469652175903,
            0.2002103179693222, -0.02176240086555481, -0.1632997989654541, -0.5929316282272339,
            0.41289812326431274, -0.12976551055908203, -0.3366925120353699, -0.44217586517333984 },
            y[{ 1, {}, 2 }], 1e-5)
        local w = weight_standardization(conv.weight, 1e-5)
        close({ -0.05284688621759415, 1.1133241653442383, 1.2073229551315308, 0.14272737503051758,
            -1.1016783714294434, -1.3817932605743408 }, w:flatten()[{ { 1, 6 } }], 1e-5)
        assert.is_true(tide.isinstance(conv, nn.Conv2d))
        local opt = optim.SGD(conv:parameters(), { lr = 0.05 })
        local target = tide.sin(x:sum({ dim = 2, keepdim = true })):expand(1, 3, 4, 4)
        local losses = {}
        for _ = 1, 5 do
            local loss = F.mse_loss(conv(x), target)
            opt:zero_grad()
            loss:backward()
            opt:step()
            losses[#losses + 1] = loss:item()
        end
        assert.is_true(losses[5] < losses[1], table.concat(losses, ", "))
    end)

    it("SpatialDepthWiseConvolution matches PyTorch; MultiDConvHeadAttention trains", function()
        local s = SpatialDepthWiseConvolution(4)
        tide.no_grad(function()
            s.conv.weight:copy_(tide.sin(tide.arange(12):float()):view(4, 1, 3))
            s.conv.bias:copy_(tide.tensor({ 0.1, -0.2, 0.3, 0.0 }))
        end)
        local x = tide.sin(tide.arange(48):float() * 0.5):view(3, 2, 2, 4)
        close({ 0.10000000149011612, -0.6597328186035156, 1.1325162649154663, -0.9974852204322815,
            0.926821768283844, -0.7738894820213318, 0.4396182596683502, 0.35077980160713196,
            -0.5881585478782654, 0.737377405166626, -0.6487196683883667, 0.7055333852767944,
            -0.15407177805900574, -0.40628379583358765, 0.9499951004981995, -0.9379907846450806,
            0.9996209144592285, -1.3285191059112549, 1.2605680227279663, -0.467507928609848,
            0.3704703450202942, 0.19063645601272583, -0.5966346263885498, 1.0662771463394165,
            -1.0247317552566528, 0.6033949255943298, 0.0856953114271164, -0.4199477434158325,
            0.765636682510376, -1.2592968940734863, 1.3749990463256836, -0.7167572975158691,
            0.670726478099823, -0.05409228056669235, -0.615530252456665, 1.4275864362716675,
            -1.0406486988067627, 0.8786253333091736, -0.24812905490398407, -0.2738337218761444,
            0.4786282479763031, -1.2436407804489136, 1.6717345714569092, -1.1996763944625854,
            0.9255188703536987, -0.4100097119808197, -0.29355689883232117, 1.272316813468933 },
            s(x), 1e-5)
        close({ 0, 0, 4, 9 }, SquaredReLU()(tide.tensor({ -1, 0, 2, 3 })))
        tide.manual_seed(0)
        local mha = MultiDConvHeadAttention(2, 8, 0.0)
        local ffn = FeedForward(8, 16, 0.0, SquaredReLU())
        local xs = tide.randn(5, 2, 8)
        local target = tide.randn(5, 2, 8)
        local params = tide.utils.chain(mha:parameters(), ffn:parameters())
        local opt = optim.Adam(params, { lr = 0.01 })
        local losses = {}
        for _ = 1, 8 do
            local h = mha({ query = xs, key = xs, value = xs, mask = subsequent_mask(5) })
            local loss = F.mse_loss(ffn(h), target)
            opt:zero_grad()
            loss:backward()
            opt:step()
            losses[#losses + 1] = loss:item()
        end
        assert.is_true(losses[8] < losses[1], table.concat(losses, ", "))
        assert.is_not_nil(mha.query[2].conv.weight.grad)
    end)

    it("Conv1d, ConvTranspose1d, the 1-d pools and F.conv1d take PyTorch's 1-tuples", function()
        -- nn.Conv1d(4, 4, kernel_size=(3,), padding=(2,), stride=(1,), dilation=(1,))
        local c = nn.Conv1d(4, 4, { kernel_size = { 3 }, padding = { 2 }, stride = { 1 }, dilation = { 1 } })
        assert.are.same({ { 3 }, { 2 }, { 1 }, { 1 } }, { c.kernel_size, c.padding, c.stride,
            c.dilation })
        assert.are.same(c(tide.randn(1, 4, 5)):size(), tide.Size({ 1, 4, 7 }))
        -- nn.ConvTranspose1d(2, 3, (4,), stride=(2,), padding=(1,))
        local t = nn.ConvTranspose1d(2, 3, { 4 }, { stride = { 2 }, padding = { 1 } })
        assert.are.same(t(tide.randn(1, 2, 5)):size(), tide.Size({ 1, 3, 10 }))
        -- nn.MaxPool1d((3,), stride=(2,)), nn.AvgPool1d((3,), stride=(2,)), F.conv1d(x, w, None, (1,), (1,))
        local x = tide.randn(1, 2, 8)
        assert.are.same(nn.MaxPool1d({ 3 }, { stride = { 2 } })(x):size(), tide.Size({ 1, 2, 3 }))
        assert.are.same(nn.AvgPool1d({ 3 }, { stride = { 2 } })(x):size(), tide.Size({ 1, 2, 3 }))
        -- nn.AvgPool1d(3, (2,)): the positional 1-tuple is the stride
        assert.are.same(nn.AvgPool1d(3, { 2 })(x):size(), tide.Size({ 1, 2, 3 }))
        assert.are.same(nn.MaxPool1d(3, { 2 })(x):size(), tide.Size({ 1, 2, 3 }))
        assert.are.same(F.max_pool1d(x, { 3 }):size(), tide.Size({ 1, 2, 2 }))
        assert.are.same(F.avg_pool1d(x, { 3 }, { stride = { 1 }, padding = { 1 } }):size(), tide.Size({ 1, 2, 8 }))
        local w = tide.randn(2, 2, 3)
        close(F.conv1d(x, w, nil, 1, 1):flatten():totable(), F.conv1d(x, w, nil, { 1 }, { 1 }))
        assert.has_error(function() nn.MaxPool1d({ 3, 3 }) end,
            "tide: MaxPool1d: expected kernel_size to be an integer or a 1-element list such as " ..
            "{3} (PyTorch's (3,)), got {3, 3}")
        assert.has_error(function() nn.Conv1d(4, 4, { 3, 3 }) end,
            "tide: Conv1d: expected kernel_size to be an integer or a 1-element list such as " ..
            "{3} (PyTorch's (3,)), got {3, 3}")
        assert.has_error(function() nn.ConvTranspose1d(2, 3, 4, { padding = { 1, 1 } }) end,
            "tide: ConvTranspose1d: expected padding to be an integer or a 1-element list " ..
            "such as {3} (PyTorch's (3,)), got {1, 1}")
    end)
end)
