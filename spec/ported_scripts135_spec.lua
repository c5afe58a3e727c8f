-- ported_scripts135_spec.lua — three custom optimizers ported line for line: davda54/sam's sam.py
-- (SAM, a torch.optim.Optimizer wrapping a base optimizer class: first_step / second_step under
-- no_grad, the "old_p" state, _grad_norm with adaptive, step(closure) with enable_grad,
-- load_state_dict re-linking base_optimizer.param_groups), alphadl/lookahead.pytorch's
-- lookahead.py (Lookahead over an inner optimizer: slow weights in state, k and alpha, shared
-- param_groups, state_dict / load_state_dict packing the fast and slow state) and
-- LiyuanLucasLiu/RAdam's radam/radam.py (RAdam with its buffer of [step, N_sma, step_size] per
-- 10 steps, degenerated_to_sgd). A tiny MLP (4 -> 8 -> 3) trains with SAM(SGD) through the
-- README's closure, Lookahead(RAdam) and RAdam; the weights after each step are PyTorch 1.13's
-- (same formula weights and data), and each state_dict round-trips through tide.save / tide.load.
-- The Python line stands above each Lua line that differs from it.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim

---------------------------------------------------------------------------------------------
-- 1. davda54/sam sam.py
---------------------------------------------------------------------------------------------
-- class SAM(torch.optim.Optimizer):
local SAM = optim.Optimizer:extend("SAM")
-- def __init__(self, params, base_optimizer, rho=0.05, adaptive=False, **kwargs):
-- GAP: Lua has no **kwargs: rho, adaptive and the base optimizer's options come in one table
function SAM:init(params, base_optimizer, kwargs)
    kwargs = kwargs or {}
    local rho, adaptive = kwargs.rho or 0.05, kwargs.adaptive or false
    kwargs.rho, kwargs.adaptive = nil, nil
    -- assert rho >= 0.0, f"Invalid rho, should be non-negative: {rho}"
    assert(rho >= 0.0, "Invalid rho, should be non-negative: " .. rho)

    -- defaults = dict(rho=rho, adaptive=adaptive, **kwargs)
    local defaults = { rho = rho, adaptive = adaptive }
    for k, v in pairs(kwargs) do defaults[k] = v end
    -- super(SAM, self).__init__(params, defaults)
    optim.Optimizer.init(self, params, defaults)

    -- self.base_optimizer = base_optimizer(self.param_groups, **kwargs)
    self.base_optimizer = base_optimizer(self.param_groups, kwargs)
    self.param_groups = self.base_optimizer.param_groups
    -- self.defaults.update(self.base_optimizer.defaults)
    for k, v in pairs(self.base_optimizer.defaults) do self.defaults[k] = v end
end

-- @torch.no_grad()
-- def first_step(self, zero_grad=False):
SAM.first_step = tide.no_grad()(function(self, zero_grad)
    local grad_norm = self:_grad_norm()
    for _, group in ipairs(self.param_groups) do
        -- scale = group["rho"] / (grad_norm + 1e-12)
        local scale = group["rho"] / (grad_norm + 1e-12)

        for _, p in ipairs(group["params"]) do
            -- if p.grad is None: continue
            if p.grad ~= nil then
                -- self.state[p]["old_p"] = p.data.clone()
                self.state[p]["old_p"] = p.data:clone()
                -- e_w = (torch.pow(p, 2) if group["adaptive"] else 1.0) * p.grad * scale.to(p)
                local e_w = (group["adaptive"] and tide.pow(p, 2) or 1.0) * p.grad * scale:to(p)
                p:add_(e_w) -- climb to the local maximum "w + e(w)"
            end
        end
    end

    if zero_grad then self:zero_grad() end
end)

-- @torch.no_grad()
-- def second_step(self, zero_grad=False):
SAM.second_step = tide.no_grad()(function(self, zero_grad)
    for _, group in ipairs(self.param_groups) do
        for _, p in ipairs(group["params"]) do
            if p.grad ~= nil then
                p.data = self.state[p]["old_p"] -- get back to "w" from "w + e(w)"
            end
        end
    end

    -- self.base_optimizer.step()  # do the actual "sharpness-aware" update
    self.base_optimizer:step() -- do the actual "sharpness-aware" update

    if zero_grad then self:zero_grad() end
end)

-- @torch.no_grad()
-- def step(self, closure=None):
SAM.step = tide.no_grad()(function(self, closure)
    -- assert closure is not None, "Sharpness Aware Minimization requires closure, but ..."
    assert(closure ~= nil,
        "Sharpness Aware Minimization requires closure, but it was not provided")
    -- closure = torch.enable_grad()(closure)  # the closure should do a full forward-backward
    closure = tide.enable_grad()(closure)

    -- self.first_step(zero_grad=True)
    self:first_step(true)
    closure()
    self:second_step()
end)

-- def _grad_norm(self):
function SAM:_grad_norm()
    -- shared_device = self.param_groups[0]["params"][0].device
    local shared_device = self.param_groups[1]["params"][1].device
    -- [((torch.abs(p) if group["adaptive"] else 1.0) * p.grad).norm(p=2).to(shared_device)
    --  for group in self.param_groups for p in group["params"] if p.grad is not None]
    local norms = {}
    for _, group in ipairs(self.param_groups) do
        for _, p in ipairs(group["params"]) do
            if p.grad ~= nil then
                norms[#norms + 1] = ((group["adaptive"] and tide.abs(p) or 1.0) * p.grad)
                    :norm({ p = 2 }):to(shared_device)
            end
        end
    end
    -- norm = torch.norm(torch.stack([...]), p=2)
    local norm = tide.norm(tide.stack(norms), { p = 2 })
    return norm
end

-- def load_state_dict(self, state_dict):
function SAM:load_state_dict(state_dict)
    -- super().load_state_dict(state_dict)
    optim.Optimizer.load_state_dict(self, state_dict)
    self.base_optimizer.param_groups = self.param_groups
end

---------------------------------------------------------------------------------------------
-- 2. alphadl/lookahead.pytorch lookahead.py
---------------------------------------------------------------------------------------------
-- collections.defaultdict(dict)
local function defaultdict_dict()
    return setmetatable({}, { __index = function(t, k)
        local v = {}
        rawset(t, k, v)
        return v
    end })
end

-- the entries of a flat tide state dict under prefix ("state." or "param_groups.")
local function entries(sd, prefix, out)
    out = out or {}
    for k, v in pairs(sd) do
        if k:sub(1, #prefix) == prefix then out[k] = v end
    end
    return out
end

-- class Lookahead(Optimizer):
local Lookahead = optim.Optimizer:extend("Lookahead")
-- def __init__(self, optimizer, k=5, alpha=0.5):
function Lookahead:init(optimizer, k, alpha)
    self.optimizer = optimizer
    self.k = k or 5
    self.alpha = alpha or 0.5
    self.param_groups = self.optimizer.param_groups
    -- self.state = defaultdict(dict)
    self.state = defaultdict_dict()
    self.fast_state = self.optimizer.state
    for _, group in ipairs(self.param_groups) do
        group["counter"] = 0
    end
end

-- def update(self, group):
function Lookahead:update(group)
    for _, fast in ipairs(group["params"]) do
        local param_state = self.state[fast]
        -- if "slow_param" not in param_state:
        if param_state["slow_param"] == nil then
            param_state["slow_param"] = tide.zeros_like(fast.data)
            param_state["slow_param"]:copy_(fast.data)
        end
        local slow = param_state["slow_param"]
        -- slow += (fast.data - slow) * self.alpha
        slow:add_((fast.data - slow) * self.alpha)
        fast.data:copy_(slow)
    end
end

function Lookahead:update_lookahead()
    for _, group in ipairs(self.param_groups) do
        self:update(group)
    end
end

-- def step(self, closure=None):
function Lookahead:step(closure)
    local loss = self.optimizer:step(closure)
    for _, group in ipairs(self.param_groups) do
        if group["counter"] == 0 then
            self:update(group)
        end
        -- group["counter"] += 1
        group["counter"] = group["counter"] + 1
        if group["counter"] >= self.k then
            group["counter"] = 0
        end
    end
    return loss
end

-- GAP: tide's state dicts are flat tables of names ("state.1.exp_avg", "param_groups.1.lr");
-- Python's sd["state"] / sd["param_groups"] are the names under those prefixes here
-- def state_dict(self):
function Lookahead:state_dict()
    local fast_state_dict = self.optimizer:state_dict()
    -- slow_state = {(id(k) if isinstance(k, torch.Tensor) else k): v
    --               for k, v in self.state.items()}
    -- GAP: Lua has no id(); the slow state is numbered as every tide state_dict numbers the
    -- parameters, so it loads back onto them (PyTorch 1.13 keys it by id(p), which its
    -- load_state_dict cannot map to a parameter: there the slow weights restart from the fast)
    local slow_state = entries(optim.Optimizer.state_dict(self), "state.")
    -- fast_state = fast_state_dict["state"]
    local fast_state = entries(fast_state_dict, "state.")
    -- param_groups = fast_state_dict["param_groups"]
    local param_groups = entries(fast_state_dict, "param_groups.")
    return {
        fast_state = fast_state,
        slow_state = slow_state,
        param_groups = param_groups,
    }
end

-- def load_state_dict(self, state_dict):
function Lookahead:load_state_dict(state_dict)
    -- slow_state_dict = {"state": state_dict["slow_state"],
    --                    "param_groups": state_dict["param_groups"]}
    local slow_state_dict = entries(state_dict["slow_state"], "state.",
        entries(state_dict["param_groups"], "param_groups."))
    local fast_state_dict = entries(state_dict["fast_state"], "state.",
        entries(state_dict["param_groups"], "param_groups."))
    -- super(Lookahead, self).load_state_dict(slow_state_dict)
    optim.Optimizer.load_state_dict(self, slow_state_dict)
    self.optimizer:load_state_dict(fast_state_dict)
    self.fast_state = self.optimizer.state
end

-- def add_param_group(self, param_group):
function Lookahead:add_param_group(param_group)
    param_group["counter"] = 0
    self.optimizer:add_param_group(param_group)
end

---------------------------------------------------------------------------------------------
-- 3. LiyuanLucasLiu/RAdam radam/radam.py
---------------------------------------------------------------------------------------------
-- [[None, None, None] for _ in range(10)]
local function new_buffer()
    local buffer = {}
    for i = 1, 10 do buffer[i] = {} end -- { nil, nil, nil }
    return buffer
end

-- class RAdam(Optimizer):
local RAdam = optim.Optimizer:extend("RAdam")
-- def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
--              degenerated_to_sgd=False):
-- GAP: keyword arguments come as one options table after params
function RAdam:init(params, o)
    o = o or {}
    local lr, betas, eps = o.lr or 1e-3, o.betas or { 0.9, 0.999 }, o.eps or 1e-8
    local weight_decay, degenerated_to_sgd = o.weight_decay or 0, o.degenerated_to_sgd or false
    -- if not 0.0 <= lr: raise ValueError("Invalid learning rate: {}".format(lr))
    if not (0.0 <= lr) then error("Invalid learning rate: " .. lr) end
    if not (0.0 <= eps) then error("Invalid epsilon value: " .. eps) end
    if not (0.0 <= betas[1] and betas[1] < 1.0) then
        error("Invalid beta parameter at index 0: " .. betas[1])
    end
    if not (0.0 <= betas[2] and betas[2] < 1.0) then
        error("Invalid beta parameter at index 1: " .. betas[2])
    end

    self.degenerated_to_sgd = degenerated_to_sgd
    -- if isinstance(params, (list, tuple)) and len(params) > 0 and isinstance(params[0], dict):
    if type(params) == "table" and not params.__ismodule and params[1] ~= nil
        and type(params[1]) == "table" and not tide.is_tensor(params[1]) then
        for _, param in ipairs(params) do
            -- if 'betas' in param and (param['betas'][0] != betas[0] or ...):
            if param["betas"] ~= nil and (param["betas"][1] ~= betas[1]
                or param["betas"][2] ~= betas[2]) then
                param["buffer"] = new_buffer()
            end
        end
    end
    local defaults = { lr = lr, betas = betas, eps = eps, weight_decay = weight_decay,
        buffer = new_buffer() }
    -- super(RAdam, self).__init__(params, defaults)
    optim.Optimizer.init(self, params, defaults)
end

-- def __setstate__(self, state): super(RAdam, self).__setstate__(state)
-- GAP: no counterpart: tide never unpickles an optimizer object (its state_dict is what saves)

-- def step(self, closure=None):
function RAdam:step(closure)
    local loss = nil
    if closure ~= nil then
        loss = closure()
    end

    for _, group in ipairs(self.param_groups) do
        for _, p in ipairs(group["params"]) do
            -- if p.grad is None: continue
            if p.grad ~= nil then
                -- grad = p.grad.data.float()
                local grad = p.grad.data:float()
                if grad.is_sparse then
                    -- raise RuntimeError('RAdam does not support sparse gradients')
                    error("RAdam does not support sparse gradients")
                end

                local p_data_fp32 = p.data:float()

                local state = self.state[p]

                -- if len(state) == 0:
                if next(state) == nil then
                    state["step"] = 0
                    state["exp_avg"] = tide.zeros_like(p_data_fp32)
                    state["exp_avg_sq"] = tide.zeros_like(p_data_fp32)
                else
                    state["exp_avg"] = state["exp_avg"]:type_as(p_data_fp32)
                    state["exp_avg_sq"] = state["exp_avg_sq"]:type_as(p_data_fp32)
                end

                local exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                -- beta1, beta2 = group['betas']
                local beta1, beta2 = group["betas"][1], group["betas"][2]

                exp_avg_sq:mul_(beta2):addcmul_(1 - beta2, grad, grad)
                exp_avg:mul_(beta1):add_(1 - beta1, grad)

                -- state['step'] += 1
                state["step"] = state["step"] + 1
                -- buffered = group['buffer'][int(state['step'] % 10)]
                local buffered = group["buffer"][state["step"] % 10 + 1]
                local N_sma, step_size
                -- if state['step'] == buffered[0]:
                if state["step"] == buffered[1] then
                    N_sma, step_size = buffered[2], buffered[3]
                else
                    buffered[1] = state["step"]
                    local beta2_t = beta2 ^ state["step"]
                    local N_sma_max = 2 / (1 - beta2) - 1
                    N_sma = N_sma_max - 2 * state["step"] * beta2_t / (1 - beta2_t)
                    buffered[2] = N_sma

                    -- more conservative since it's an approximated value
                    if N_sma >= 5 then
                        step_size = math.sqrt((1 - beta2_t) * (N_sma - 4) / (N_sma_max - 4)
                            * (N_sma - 2) / N_sma * N_sma_max / (N_sma_max - 2))
                            / (1 - beta1 ^ state["step"])
                    elseif self.degenerated_to_sgd then
                        step_size = 1.0 / (1 - beta1 ^ state["step"])
                    else
                        step_size = -1
                    end
                    buffered[3] = step_size
                end

                -- more conservative since it's an approximated value
                if N_sma >= 5 then
                    if group["weight_decay"] ~= 0 then
                        -- p_data_fp32.add_(-group['weight_decay'] * group['lr'], p_data_fp32)
                        p_data_fp32:add_(-group["weight_decay"] * group["lr"], p_data_fp32)
                    end
                    local denom = exp_avg_sq:sqrt():add_(group["eps"])
                    p_data_fp32:addcdiv_(-step_size * group["lr"], exp_avg, denom)
                    p.data:copy_(p_data_fp32)
                elseif step_size > 0 then
                    if group["weight_decay"] ~= 0 then
                        p_data_fp32:add_(-group["weight_decay"] * group["lr"], p_data_fp32)
                    end
                    p_data_fp32:add_(-step_size * group["lr"], exp_avg)
                    p.data:copy_(p_data_fp32)
                end
            end
        end
    end

    return loss
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
local function assert_sums(want, got, what)
    for k = 1, 2 do
        assert(math.abs(want[k] - got[k]) < 2e-6, string.format("%s: sum %d: want %.9g, got %.9g",
            what, k, want[k], got[k]))
    end
end

local function tmpfile()
    return os.tmpname() .. ".safetensors"
end

describe("ported optimizers: sam.py, lookahead.py, radam.py", function()
    it("SAM(SGD) with the README's closure matches PyTorch and its state_dict round-trips",
        function()
            local model = make()
            local w0 = flat(model)
            -- base_optimizer = torch.optim.SGD
            local base_optimizer = optim.SGD
            -- optimizer = SAM(model.parameters(), base_optimizer, rho=0.05, lr=0.1, momentum=0.9)
            local optimizer = SAM(model:parameters(), base_optimizer,
                { rho = 0.05, lr = 0.1, momentum = 0.9 })
            assert.is_true(rawequal(optimizer.param_groups, optimizer.base_optimizer.param_groups))
            assert.are.equal(0.05, optimizer.defaults.rho)
            assert.are.equal(0.9, optimizer.defaults.momentum)
            assert.is_false(optimizer.defaults.adaptive)
            local want = { { -0.0485945144, -0.00775071105 }, { -0.134338602, -0.0218646312 },
                { -0.241822183, -0.0406651519 } }
            local first
            for step = 1, 3 do
                -- def closure(): loss = loss_function(output, model(input)); loss.backward()
                local function closure()
                    local loss = F.cross_entropy(model(x), y)
                    loss:backward()
                    return loss
                end
                local loss = F.cross_entropy(model(x), y)
                loss:backward()
                first = first or loss:item()
                optimizer:step(closure)
                optimizer:zero_grad()
                assert_sums(want[step], sums(model, w0), "SAM step " .. step)
            end
            assert.is_true(F.cross_entropy(model(x), y):item() < first)
            -- the base optimizer's momentum, and SAM's own old_p (w + e(w) taken back)
            local w1 = model[1].weight
            assert.is_not_nil(optimizer.base_optimizer.state[w1].momentum_buffer)
            assert.are.same(w1.shape, optimizer.state[w1].old_p.shape)

            local path = tmpfile()
            tide.save(path, optimizer:state_dict())
            local model2 = make()
            local opt2 = SAM(model2:parameters(), optim.SGD, { lr = 0.5, momentum = 0.9 })
            opt2:load_state_dict(tide.load(path))
            os.remove(path)
            assert.is_true(rawequal(opt2.param_groups, opt2.base_optimizer.param_groups))
            assert.are.equal(0.1, opt2.base_optimizer.param_groups[1].lr)
            assert.are.equal(0.05, opt2.param_groups[1].rho)
            local old_p = opt2.state[model2[1].weight].old_p
            assert.is_true(tide.equal(optimizer.state[w1].old_p, old_p))
            -- a step after the load runs (the state table still makes a parameter's entry)
            F.cross_entropy(model2(x), y):backward()
            opt2:step(function()
                local l = F.cross_entropy(model2(x), y)
                l:backward()
                return l
            end)
            assert.is_true(tide.isfinite(flat(model2)):all():item())
        end)

    it("Lookahead(RAdam) matches PyTorch and its packed state_dict round-trips", function()
        local model = make()
        local w0 = flat(model)
        local base = RAdam(model:parameters(), { lr = 0.1, degenerated_to_sgd = true })
        local optimizer = Lookahead(base, 2, 0.5)
        assert.is_true(rawequal(optimizer.param_groups, base.param_groups))
        assert.are.equal(0, base.param_groups[1].counter)
        local want = { { -0.0452625323, -0.00741301811 }, { -0.0872979504, -0.0145090487 },
            { -0.0856997198, -0.0143541391 } }
        local losses = { 1.1093521118164062, 1.0250729322433472, 0.9462804794311523 }
        for step = 1, 3 do
            -- (PyTorch 1.13's Lookahead.zero_grad raises: it has no self.defaults; the
            -- reference zeroes through the inner optimizer, as here)
            optimizer.optimizer:zero_grad()
            local loss = F.cross_entropy(model(x), y)
            loss:backward()
            optimizer:step()
            assert.is_true(math.abs(loss:item() - losses[step]) < 1e-5)
            assert_sums(want[step], sums(model, w0), "Lookahead step " .. step)
        end
        assert.are.equal(1, optimizer.param_groups[1].counter)
        local w1 = model[1].weight
        assert.are.equal(3, base.state[w1].step)

        local path = tmpfile()
        tide.save(path, optimizer:state_dict())
        local model2 = make()
        local opt2 = Lookahead(RAdam(model2:parameters(), { lr = 0.1 }), 2, 0.5)
        opt2:load_state_dict(tide.load(path))
        os.remove(path)
        local v1 = model2[1].weight
        assert.are.equal(1, opt2.param_groups[1].counter)
        assert.are.equal(3, opt2.optimizer.state[v1].step)
        assert.is_true(tide.equal(base.state[w1].exp_avg, opt2.optimizer.state[v1].exp_avg))
        assert.is_true(tide.equal(optimizer.state[w1].slow_param, opt2.state[v1].slow_param))
        assert.is_true(rawequal(opt2.fast_state, opt2.optimizer.state))
        -- a state dict saved before any step loads, and the state tables still make entries
        local model3 = make()
        local opt3 = Lookahead(RAdam(model3:parameters(), { lr = 0.1, degenerated_to_sgd = true }),
            2, 0.5)
        opt3:load_state_dict(Lookahead(RAdam(make():parameters(), { lr = 0.1 }), 2, 0.5)
            :state_dict())
        F.cross_entropy(model3(x), y):backward()
        opt3:step()
        assert_sums(want[1], sums(model3, w0), "Lookahead after a load")
    end)

    it("RAdam: no update while N_sma < 5, then the rectified step, as PyTorch", function()
        local model = make()
        local w0 = flat(model)
        local optimizer = RAdam(model:parameters(), { lr = 0.1 })
        local want6 = { -0.0129102231, -0.000948561156 }
        for step = 1, 6 do
            optimizer:zero_grad()
            F.cross_entropy(model(x), y):backward()
            optimizer:step()
            assert_sums(step < 6 and { 0, 0 } or want6, sums(model, w0), "RAdam step " .. step)
        end
        -- group['buffer'][6]: [6, 5.994163751655833, 0.004263276234960649]
        local buffered = optimizer.param_groups[1].buffer[7]
        assert.are.equal(6, buffered[1])
        assert.is_true(math.abs(buffered[2] - 5.994163751655833) < 1e-12)
        assert.is_true(math.abs(buffered[3] - 0.004263276234960649) < 1e-15)
        assert.has_error(function() RAdam(model:parameters(), { lr = -1 }) end)

        local path = tmpfile()
        tide.save(path, optimizer:state_dict())
        local model2 = make()
        local opt2 = RAdam(model2:parameters(), { lr = 0.5, betas = { 0.8, 0.99 } })
        opt2:load_state_dict(tide.load(path))
        os.remove(path)
        assert.are.equal(0.1, opt2.param_groups[1].lr)
        assert.are.same({ 0.9, 0.999 }, opt2.param_groups[1].betas)
        local w1, v1 = model[1].weight, model2[1].weight
        assert.are.equal(6, opt2.state[v1].step)
        assert.is_true(tide.equal(optimizer.state[w1].exp_avg_sq, opt2.state[v1].exp_avg_sq))
    end)
end)
