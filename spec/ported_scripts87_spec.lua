-- ported_scripts87_spec.lua — dragen1860/MAML-Pytorch's learner.py (Learner: the config walk
-- that builds self.vars / self.vars_bn as nn.ParameterLists, extra_repr, forward(x, vars,
-- bn_training) through F.conv2d / F.conv_transpose2d / F.linear / F.batch_norm / F.relu /
-- max_pool2d / flatten / reshape, zero_grad, parameters) and meta.py (Meta: first-order inner
-- loop with torch.autograd.grad and fast weights, query losses and corrects per step, the outer
-- Adam step, clip_grad_by_norm_, finetunning on a deepcopy), ported line for line at tiny sizes
-- (1x8x8 images, 4 conv filters, n_way 3) on fixed tasks. The Python line stands above each Lua
-- line that differs from it. Dims and class targets are 1-based; vars[idx] indexes from 1.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- Python's str(tuple(param)) for extra_repr: (True,), (4,), ()
local function tuple_str(t)
    local parts = {}
    for i = 1, #t do
        local v = t[i]
        parts[i] = type(v) == "boolean" and (v and "True" or "False") or tostring(v)
    end
    if #parts == 1 then
        return "(" .. parts[1] .. ",)"
    end
    return "(" .. table.concat(parts, ", ") .. ")"
end

---------------------------------------------------------------------------------------------
-- learner.py
---------------------------------------------------------------------------------------------
-- class Learner(nn.Module):
local Learner = nn.Module:extend("Learner")

-- def __init__(self, config, imgc, imgsz):
function Learner:init(config, imgc, imgsz) -- luacheck: ignore imgc imgsz
    self.config = config
    -- this dict contains all tensors needed to be optimized
    self.vars = nn.ParameterList()
    -- running_mean and running_var
    self.vars_bn = nn.ParameterList()

    -- for i, (name, param) in enumerate(self.config):
    for _, entry in ipairs(self.config) do
        local name, param = entry[1], entry[2]
        -- if name is 'conv2d':
        if name == "conv2d" then
            -- [ch_out, ch_in, kernelsz, kernelsz]
            -- w = nn.Parameter(torch.ones(*param[:4]))
            local w = nn.Parameter(tide.ones(param[1], param[2], param[3], param[4]))
            -- gain=1 according to cbfin's implementation
            nn.init.kaiming_normal_(w)
            self.vars:append(w)
            -- [ch_out]
            -- self.vars.append(nn.Parameter(torch.zeros(param[0])))
            self.vars:append(nn.Parameter(tide.zeros(param[1])))
        elseif name == "convt2d" then
            -- [ch_in, ch_out, kernelsz, kernelsz, stride, padding]
            local w = nn.Parameter(tide.ones(param[1], param[2], param[3], param[4]))
            nn.init.kaiming_normal_(w)
            self.vars:append(w)
            -- [ch_in, ch_out]
            -- self.vars.append(nn.Parameter(torch.zeros(param[1])))
            self.vars:append(nn.Parameter(tide.zeros(param[2])))
        elseif name == "linear" then
            -- [ch_out, ch_in]
            -- w = nn.Parameter(torch.ones(*param))
            local w = nn.Parameter(tide.ones(param[1], param[2]))
            nn.init.kaiming_normal_(w)
            self.vars:append(w)
            self.vars:append(nn.Parameter(tide.zeros(param[1])))
        elseif name == "bn" then
            -- [ch_out]
            local w = nn.Parameter(tide.ones(param[1]))
            self.vars:append(w)
            self.vars:append(nn.Parameter(tide.zeros(param[1])))
            -- must set requires_grad=False
            -- running_mean = nn.Parameter(torch.zeros(param[0]), requires_grad=False)
            local running_mean = nn.Parameter(tide.zeros(param[1]), { requires_grad = false })
            local running_var = nn.Parameter(tide.ones(param[1]), { requires_grad = false })
            self.vars_bn:extend({ running_mean, running_var })
        -- elif name in ['tanh', 'relu', 'upsample', 'avg_pool2d', 'max_pool2d',
        --               'flatten', 'reshape', 'leakyrelu', 'sigmoid']:
        elseif ({ tanh = 1, relu = 1, upsample = 1, avg_pool2d = 1, max_pool2d = 1,
            flatten = 1, reshape = 1, leakyrelu = 1, sigmoid = 1 })[name] then -- luacheck: ignore
            -- continue
        else
            -- raise NotImplementedError
            error("NotImplementedError: " .. tostring(name))
        end
    end
end

-- def extra_repr(self):
function Learner:extra_repr()
    local info = ""
    for _, entry in ipairs(self.config) do
        local name, param = entry[1], entry[2]
        local tmp
        if name == "conv2d" then
            -- tmp = 'conv2d:(ch_in:%d, ch_out:%d, k:%dx%d, stride:%d, padding:%d)'\
            --       %(param[1], param[0], param[2], param[3], param[4], param[5],)
            tmp = string.format("conv2d:(ch_in:%d, ch_out:%d, k:%dx%d, stride:%d, padding:%d)",
                param[2], param[1], param[3], param[4], param[5], param[6])
        elseif name == "convt2d" then
            tmp = string.format(
                "convTranspose2d:(ch_in:%d, ch_out:%d, k:%dx%d, stride:%d, padding:%d)",
                param[1], param[2], param[3], param[4], param[5], param[6])
        elseif name == "linear" then
            -- tmp = 'linear:(in:%d, out:%d)'%(param[1], param[0])
            tmp = string.format("linear:(in:%d, out:%d)", param[2], param[1])
        elseif name == "leakyrelu" then
            tmp = string.format("leakyrelu:(slope:%f)", param[1])
        elseif name == "avg_pool2d" then
            tmp = string.format("avg_pool2d:(k:%d, stride:%d, padding:%d)", param[1], param[2],
                param[3])
        elseif name == "max_pool2d" then
            tmp = string.format("max_pool2d:(k:%d, stride:%d, padding:%d)", param[1], param[2],
                param[3])
        -- elif name in ['flatten', 'tanh', 'relu', 'upsample', 'reshape', 'sigmoid', ...]:
        elseif ({ flatten = 1, tanh = 1, relu = 1, upsample = 1, reshape = 1, sigmoid = 1,
            use_logits = 1, bn = 1 })[name] then
            -- tmp = name + ':' + str(tuple(param))
            tmp = name .. ":" .. tuple_str(param)
        else
            error("NotImplementedError: " .. tostring(name))
        end
        info = info .. tmp .. "\n"
    end
    return info
end

-- def forward(self, x, vars=None, bn_training=True):
function Learner:forward(x, vars, bn_training)
    if bn_training == nil then bn_training = true end
    if vars == nil then
        vars = self.vars
    end
    -- idx = 0 (vars[idx] is 1-based here)
    local idx = 1
    local bn_idx = 1
    for _, entry in ipairs(self.config) do
        local name, param = entry[1], entry[2]
        if name == "conv2d" then
            local w, b = vars[idx], vars[idx + 1]
            -- x = F.conv2d(x, w, b, stride=param[4], padding=param[5])
            x = F.conv2d(x, w, b, { stride = param[5], padding = param[6] })
            idx = idx + 2
        elseif name == "convt2d" then
            local w, b = vars[idx], vars[idx + 1]
            -- x = F.conv_transpose2d(x, w, b, stride=param[4], padding=param[5])
            x = F.conv_transpose2d(x, w, b, { stride = param[5], padding = param[6] })
            idx = idx + 2
        elseif name == "linear" then
            local w, b = vars[idx], vars[idx + 1]
            x = F.linear(x, w, b)
            idx = idx + 2
        elseif name == "bn" then
            local w, b = vars[idx], vars[idx + 1]
            local running_mean, running_var = self.vars_bn[bn_idx], self.vars_bn[bn_idx + 1]
            -- x = F.batch_norm(x, running_mean, running_var, weight=w, bias=b,
            --                  training=bn_training)
            x = F.batch_norm(x, running_mean, running_var,
                { weight = w, bias = b, training = bn_training })
            idx = idx + 2
            bn_idx = bn_idx + 2
        elseif name == "flatten" then
            -- x = x.view(x.size(0), -1)
            x = x:view(x:size(1), -1)
        elseif name == "reshape" then
            -- [b, 8] => [b, 2, 2, 2]
            -- x = x.view(x.size(0), *param)
            x = x:view(x:size(1), unpack(param))
        elseif name == "relu" then
            -- x = F.relu(x, inplace=param[0])
            x = F.relu(x, { inplace = param[1] })
        elseif name == "leakyrelu" then
            x = F.leaky_relu(x, { negative_slope = param[1], inplace = param[2] })
        elseif name == "tanh" then
            x = F.tanh(x)
        elseif name == "sigmoid" then
            x = tide.sigmoid(x)
        elseif name == "upsample" then
            x = F.upsample_nearest(x, { scale_factor = param[1] })
        elseif name == "max_pool2d" then
            x = F.max_pool2d(x, param[1], param[2], param[3])
        elseif name == "avg_pool2d" then
            x = F.avg_pool2d(x, param[1], param[2], param[3])
        else
            error("NotImplementedError: " .. tostring(name))
        end
    end
    -- make sure variable is used properly
    -- assert idx == len(vars)
    assert(idx - 1 == #vars)
    assert(bn_idx - 1 == #self.vars_bn)
    return x
end

-- def zero_grad(self, vars=None):
function Learner:zero_grad(vars)
    -- with torch.no_grad():
    tide.no_grad(function()
        -- for p in (self.vars if vars is None else vars):
        for _, p in ipairs(vars == nil and self.vars or vars) do
            if p.grad ~= nil then
                p.grad:zero_()
            end
        end
    end)
end

-- override this function since initial parameters will return with a generator.
function Learner:parameters()
    return self.vars
end

---------------------------------------------------------------------------------------------
-- meta.py
---------------------------------------------------------------------------------------------
-- fast_weights = list(map(lambda p: p[1] - self.update_lr * p[0], zip(grad, params)))
local function sgd_map(grad, params, lr)
    local out = {}
    for i = 1, #grad do
        out[i] = params[i] - lr * grad[i]
    end
    return out
end

-- class Meta(nn.Module):
local Meta = nn.Module:extend("Meta")

-- def __init__(self, args, config):
function Meta:init(args, config)
    self.update_lr = args.update_lr
    self.meta_lr = args.meta_lr
    self.n_way = args.n_way
    self.k_spt = args.k_spt
    self.k_qry = args.k_qry
    self.task_num = args.task_num
    self.update_step = args.update_step
    self.update_step_test = args.update_step_test

    self.net = Learner(config, args.imgc, args.imgsz)
    if args.init_weights then args.init_weights(self.net) end -- the check's fixed weights
    -- self.meta_optim = optim.Adam(self.net.parameters(), lr=self.meta_lr)
    self.meta_optim = optim.Adam(self.net:parameters(), { lr = self.meta_lr })
end

-- def clip_grad_by_norm_(self, grad, max_norm):
function Meta:clip_grad_by_norm_(grad, max_norm)
    local total_norm = 0
    local counter = 0
    for _, g in ipairs(grad) do
        -- param_norm = g.data.norm(2)
        local param_norm = g.data:norm(2)
        total_norm = total_norm + param_norm:item() ^ 2
        counter = counter + 1
    end
    total_norm = total_norm ^ (1. / 2)

    local clip_coef = max_norm / (total_norm + 1e-6)
    if clip_coef < 1 then
        for _, g in ipairs(grad) do
            g.data:mul_(clip_coef)
        end
    end
    return total_norm / counter
end

-- def forward(self, x_spt, y_spt, x_qry, y_qry):  (rec: what the check compares)
function Meta:forward(x_spt, y_spt, x_qry, y_qry, rec)
    -- task_num, setsz, c_, h, w = x_spt.size()
    local task_num = x_spt:size(1)
    local querysz = x_qry:size(2)

    -- losses_q = [0 for _ in range(self.update_step + 1)]  (losses_q[k + 1] is step k's)
    local losses_q, corrects = {}, {}
    for s = 1, self.update_step + 1 do
        losses_q[s], corrects[s] = 0, 0
    end

    -- for i in range(task_num):
    for i = 1, task_num do
        -- 1. run the i-th task and compute loss for k=0
        -- logits = self.net(x_spt[i], vars=None, bn_training=True)  (positional here)
        local logits = self.net(x_spt[i], nil, true)
        local loss = F.cross_entropy(logits, y_spt[i])
        -- grad = torch.autograd.grad(loss, self.net.parameters())
        local grad = tide.autograd.grad(loss, self.net:parameters())
        local fast_weights = sgd_map(grad, self.net:parameters(), self.update_lr)

        -- this is the loss and accuracy before first update
        tide.no_grad(function()
            -- [setsz, nway]
            local logits_q = self.net(x_qry[i], self.net:parameters(), true)
            local loss_q = F.cross_entropy(logits_q, y_qry[i])
            losses_q[1] = losses_q[1] + loss_q
            -- pred_q = F.softmax(logits_q, dim=1).argmax(dim=1)
            local pred_q = F.softmax(logits_q, { dim = 2 }):argmax({ dim = 2 })
            local correct = tide.eq(pred_q, y_qry[i]):sum():item()
            corrects[1] = corrects[1] + correct
        end)

        -- this is the loss and accuracy after the first update
        tide.no_grad(function()
            local logits_q = self.net(x_qry[i], fast_weights, true)
            local loss_q = F.cross_entropy(logits_q, y_qry[i])
            losses_q[2] = losses_q[2] + loss_q
            local pred_q = F.softmax(logits_q, { dim = 2 }):argmax({ dim = 2 })
            local correct = tide.eq(pred_q, y_qry[i]):sum():item()
            corrects[2] = corrects[2] + correct
        end)

        -- for k in range(1, self.update_step):
        for k = 1, self.update_step - 1 do
            -- 1. run the i-th task and compute loss for k=1~K-1
            logits = self.net(x_spt[i], fast_weights, true)
            loss = F.cross_entropy(logits, y_spt[i])
            -- 2. compute grad on theta_pi
            grad = tide.autograd.grad(loss, fast_weights)
            -- 3. theta_pi = theta_pi - train_lr * grad
            fast_weights = sgd_map(grad, fast_weights, self.update_lr)

            local logits_q = self.net(x_qry[i], fast_weights, true)
            -- loss_q will be overwritten and just keep the loss_q on last update step.
            local loss_q = F.cross_entropy(logits_q, y_qry[i])
            -- losses_q[k + 1] += loss_q
            losses_q[k + 2] = losses_q[k + 2] + loss_q

            tide.no_grad(function()
                local pred_q = F.softmax(logits_q, { dim = 2 }):argmax({ dim = 2 })
                local correct = tide.eq(pred_q, y_qry[i]):sum():item() -- convert to numpy
                corrects[k + 2] = corrects[k + 2] + correct
            end)
        end
        if rec then
            rec.fast[#rec.fast + 1] = fast_weights
        end
    end

    -- end of all tasks
    -- sum over all losses on query set across all tasks
    -- loss_q = losses_q[-1] / task_num
    local loss_q = losses_q[#losses_q] / task_num

    -- optimize theta parameters
    self.meta_optim:zero_grad()
    loss_q:backward()
    self.meta_optim:step()

    -- accs = np.array(corrects) / (querysz * task_num)
    local accs = {}
    for s = 1, #corrects do
        accs[s] = corrects[s] / (querysz * task_num)
    end
    if rec then
        rec.losses_q[#rec.losses_q + 1] = losses_q
        rec.corrects[#rec.corrects + 1] = corrects
    end
    return accs
end

-- def finetunning(self, x_spt, y_spt, x_qry, y_qry):
function Meta:finetunning(x_spt, y_spt, x_qry, y_qry, rec)
    -- assert len(x_spt.shape) == 4
    assert(#x_spt.shape == 4)
    local querysz = x_qry:size(1)

    local corrects = {}
    for s = 1, self.update_step_test + 1 do
        corrects[s] = 0
    end

    -- in order to not ruin the state of running_mean/variance and bn_weight/bias
    -- we finetunning on the copied model instead of self.net
    -- net = deepcopy(self.net)
    local net = tide.deepcopy(self.net)

    -- 1. run the i-th task and compute loss for k=0
    local logits = net(x_spt)
    local loss = F.cross_entropy(logits, y_spt)
    local grad = tide.autograd.grad(loss, net:parameters())
    local fast_weights = sgd_map(grad, net:parameters(), self.update_lr)

    -- this is the loss and accuracy before first update
    tide.no_grad(function()
        local logits_q = net(x_qry, net:parameters(), true)
        local pred_q = F.softmax(logits_q, { dim = 2 }):argmax({ dim = 2 })
        local correct = tide.eq(pred_q, y_qry):sum():item()
        corrects[1] = corrects[1] + correct
    end)

    -- this is the loss and accuracy after the first update
    tide.no_grad(function()
        local logits_q = net(x_qry, fast_weights, true)
        local pred_q = F.softmax(logits_q, { dim = 2 }):argmax({ dim = 2 })
        local correct = tide.eq(pred_q, y_qry):sum():item()
        corrects[2] = corrects[2] + correct
    end)

    for k = 1, self.update_step_test - 1 do
        logits = net(x_spt, fast_weights, true)
        loss = F.cross_entropy(logits, y_spt)
        grad = tide.autograd.grad(loss, fast_weights)
        fast_weights = sgd_map(grad, fast_weights, self.update_lr)

        local logits_q = net(x_qry, fast_weights, true)
        -- loss_q will be overwritten and just keep the loss_q on last update step.
        local loss_q = F.cross_entropy(logits_q, y_qry)
        if rec then rec.ft_losses[k] = loss_q:item() end

        tide.no_grad(function()
            local pred_q = F.softmax(logits_q, { dim = 2 }):argmax({ dim = 2 })
            local correct = tide.eq(pred_q, y_qry):sum():item()
            corrects[k + 2] = corrects[k + 2] + correct
        end)
    end

    -- del net
    net = nil -- luacheck: ignore

    local accs = {}
    for s = 1, #corrects do
        accs[s] = corrects[s] / querysz
    end
    return accs
end

---------------------------------------------------------------------------------------------
-- the check: the same weights and tasks as /tmp's PyTorch 1.13 script
---------------------------------------------------------------------------------------------
-- fill(shape, j) = (sin(arange(n) * 0.7 + j) * 0.4).view(shape), j the Lua index in vars
local function fill(shape, j)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    return (tide.arange(0, n, { dtype = "float32" }) * 0.7 + j):sin():mul(0.4):view(shape)
end

local function set_weights(net)
    tide.no_grad(function()
        for j, p in ipairs(net.vars) do
            p:copy_(fill(p.shape, j))
        end
    end)
end

local function sums(ts)
    local out = {}
    for i, t in ipairs(ts) do
        out[i] = t:detach():sum():item()
    end
    return out
end

local function flat(t)
    return t:detach():flatten():tolist()
end

-- config = [('conv2d', [4, 1, 3, 3, 1, 0]), ('relu', [True]), ('bn', [4]),
--           ('max_pool2d', [2, 2, 0]), ('flatten', []), ('linear', [3, 36])]
local config = { { "conv2d", { 4, 1, 3, 3, 1, 0 } }, { "relu", { true } }, { "bn", { 4 } },
    { "max_pool2d", { 2, 2, 0 } }, { "flatten", {} }, { "linear", { 3, 36 } } }

-- labels 1-based: PyTorch's [[0, 1, 2], [2, 0, 1]] and [[0, 0, 1, 1, 2, 2], [1, 2, 0, 2, 0, 1]]
local function task(it)
    local x_spt = (tide.arange(0, 2 * 3 * 64, { dtype = "float32" }) * 0.13 + it):sin()
        :view(2, 3, 1, 8, 8)
    local x_qry = (tide.arange(0, 2 * 6 * 64, { dtype = "float32" }) * 0.17 + it):cos()
        :view(2, 6, 1, 8, 8)
    local y_spt = tide.tensor({ { 1, 2, 3 }, { 3, 1, 2 } }, { dtype = "int64" })
    local y_qry = tide.tensor({ { 1, 1, 2, 2, 3, 3 }, { 2, 3, 1, 3, 1, 2 } }, { dtype = "int64" })
    return x_spt, y_spt, x_qry, y_qry
end

local TOL = 2e-4

-- a stderr stand-in that keeps what tide warns
local function capture_stderr(f)
    local saved, out = io.stderr, {}
    io.stderr = { write = function(_, ...) -- luacheck: ignore
        for i = 1, select("#", ...) do
            out[#out + 1] = tostring(select(i, ...))
        end
    end }
    local ok, err = pcall(f)
    io.stderr = saved -- luacheck: ignore
    if not ok then
        error(err, 0)
    end
    return table.concat(out)
end

describe("dragen1860/MAML-Pytorch learner.py", function()
    it("builds vars / vars_bn, prints the config, runs forward with and without vars", function()
        local net = Learner(config, 1, 8)
        assert.are.equal(6, #net:parameters())
        assert.are.equal(2, #net.vars_bn)
        assert.are.same({ 4, 1, 3, 3 }, net.vars[1].shape)
        assert.are.same({ 3, 36 }, net.vars[5].shape)
        -- kaiming_normal_ (fan_in 9, gain sqrt(2)): a spread, zero biases, bn weight ones
        assert.is_true(net.vars[1]:std():item() > 0.1)
        assert.are.equal(0, net.vars[2]:abs():sum():item())
        assert.are.equal(4, net.vars[3]:sum():item())
        assert.is_false(net.vars_bn[1].requires_grad)
        assert.is_true(net.vars[1].requires_grad)
        assert.are.equal("conv2d:(ch_in:1, ch_out:4, k:3x3, stride:1, padding:0)\n" ..
            "relu:(True,)\nbn:(4,)\nmax_pool2d:(k:2, stride:2, padding:0)\nflatten:()\n" ..
            "linear:(in:36, out:3)\n", net:extra_repr())
        assert.is_truthy(tostring(net):find("linear:(in:36, out:3)", 1, true))

        set_weights(net)
        local x = (tide.arange(0, 3 * 64, { dtype = "float32" }) * 0.31):cos():view(3, 1, 8, 8)
        assert_close_list({ -0.08955411612987518, 0.18052799999713898, 0.3743630051612854,
            -0.1011490523815155, 0.17444241046905518, 0.3738139867782593, -0.15350741147994995,
            0.12009028345346451, 0.3177141845226288 }, flat(net(x)), TOL, "net(x)")
        -- bn_training=True updated the running stats in place
        assert_close_list({ 0.19637461006641388, 3.7548370361328125 }, sums(net.vars_bn), TOL,
            "vars_bn")
        -- vs = [p * 0.5 for p in net.vars]; net(x, vs, bn_training=False)
        local vs = {}
        for i, p in ipairs(net.vars) do vs[i] = p * 0.5 end
        assert_close_list({ -0.05160267651081085, 0.08490552753210068, 0.18331436812877655,
            -0.05256396532058716, 0.0844237357378006, 0.18331418931484222, -0.05765564739704132,
            0.07918660342693329, 0.17795531451702118 }, flat(net(x, vs, false)), TOL,
            "net(x, vars)")
        -- zero_grad zeroes the grads of vars
        net(x):sum():backward()
        assert.is_true(net.vars[1].grad:abs():sum():item() > 0)
        net:zero_grad()
        assert.are.equal(0, net.vars[1].grad:abs():sum():item())
    end)
    it("walks the decoder branches: convt2d, reshape, leakyrelu, upsample, avg_pool2d", function()
        -- config2 = [('linear', [8, 6]), ('leakyrelu', [0.2, True]), ('reshape', [2, 2, 2]),
        --            ('convt2d', [2, 3, 3, 3, 2, 1]), ('upsample', [2]),
        --            ('avg_pool2d', [2, 2, 0]), ('tanh', []), ('sigmoid', [])]
        local config2 = { { "linear", { 8, 6 } }, { "leakyrelu", { 0.2, true } },
            { "reshape", { 2, 2, 2 } }, { "convt2d", { 2, 3, 3, 3, 2, 1 } },
            { "upsample", { 2 } }, { "avg_pool2d", { 2, 2, 0 } }, { "tanh", {} },
            { "sigmoid", {} } }
        local net2 = Learner(config2, 1, 8)
        assert.are.same({ 2, 3, 3, 3 }, net2.vars[3].shape)
        assert.are.same({ 3 }, net2.vars[4].shape)
        assert.are.equal("linear:(in:6, out:8)\nleakyrelu:(slope:0.200000)\n" ..
            "reshape:(2, 2, 2)\n" ..
            "convTranspose2d:(ch_in:2, ch_out:3, k:3x3, stride:2, padding:1)\n" ..
            "upsample:(2,)\navg_pool2d:(k:2, stride:2, padding:0)\ntanh:()\nsigmoid:()\n",
            net2:extra_repr())
        set_weights(net2)
        local z = (tide.arange(0, 2 * 6, { dtype = "float32" }) * 0.5):cos():view(2, 6)
        local vs = {}
        for i, p in ipairs(net2.vars) do vs[i] = p * 1.5 end
        -- F.tanh is deprecated in PyTorch 1.13, which warns once: so does tide
        require("tide._warn").reset("F.tanh")
        local y
        local warned = capture_stderr(function()
            y = net2(z, vs)
        end)
        assert.is_truthy(warned:find("nn.functional.tanh is deprecated", 1, true))
        assert.are.same({ 2, 3, 3, 3 }, y.shape)
        -- y[0, :, 0, :]
        assert_close_list({ 0.3146129846572876, 0.5090330243110657, 0.4182862937450409,
            0.30490967631340027, 0.47732114791870117, 0.3879172205924988, 0.3170190453529358,
            0.5159267783164978, 0.41455745697021484 }, flat(y[{ 1, {}, 1, {} }]), TOL, "y")
        assert.is_true(ported.close(y:sum():item(), 20.83285140991211, TOL))
        -- g = torch.autograd.grad((y * y).sum(), net2.parameters())
        local g = tide.autograd.grad((y * y):sum(), net2:parameters())
        assert_close_list({ -2.313154935836792, 0.9759252071380615, 18.75188446044922,
            10.221721649169922 }, sums(g), TOL, "grad")
    end)
end)

describe("dragen1860/MAML-Pytorch meta.py", function()
    it("meta-trains 2 iterations and finetunes as PyTorch does", function()
        local args = { update_lr = 0.4, meta_lr = 0.01, n_way = 3, k_spt = 1, k_qry = 2,
            task_num = 2, update_step = 2, update_step_test = 3, imgc = 1, imgsz = 8,
            init_weights = set_weights }
        local maml = Meta(args, config)
        local rec = { fast = {}, losses_q = {}, corrects = {}, ft_losses = {} }
        local want_params = {
            { 0.18478357791900635, 0.10514351725578308, -0.9064522981643677, -1.104660987854004,
                -0.057400286197662354, 0.3996570110321045 },
            { 0.09244966506958008, 0.08128157258033752, -0.8893680572509766, -1.1235166788101196,
                -0.021273910999298096, 0.3922308087348938 } }
        local want_bn = { { 1.2387179136276245, 2.2370553016662598 },
            { 1.661359190940857, 1.6314688920974731 } }
        local want_losses = { { 2.233179807662964, 2.205702066421509, 2.1991429328918457 },
            { 2.208861827850342, 2.1824893951416016, 2.1826624870300293 } }
        local want_corrects = { { 4, 4, 4 }, { 4, 4, 3 } }
        local accs = {}
        for it = 0, 1 do
            local x_spt, y_spt, x_qry, y_qry = task(it)
            accs[#accs + 1] = maml(x_spt, y_spt, x_qry, y_qry, rec)
            local n = #rec.losses_q
            local got_losses = {}
            for s, l in ipairs(rec.losses_q[n]) do
                got_losses[s] = l:item()
                assert_finite(got_losses[s], "loss_q")
            end
            assert_close_list(want_losses[n], got_losses, TOL, "losses_q")
            assert.are.same(want_corrects[n], rec.corrects[n])
            assert_close_list(want_params[n], sums(maml.net:parameters()), TOL, "params")
            assert_close_list(want_bn[n], sums(maml.net.vars_bn), TOL, "vars_bn")
        end
        local want_fast = {
            { -0.4586608409881592, 0.15108606219291687, -1.1176855564117432,
                -1.0889203548431396, -0.11739921569824219, 0.40965700149536133 },
            { -0.5406900644302368, 0.1644470989704132, -1.0819287300109863,
                -1.091982126235962, -0.11739933490753174, 0.40965700149536133 },
            { 0.7359226942062378, 0.1554076373577118, -1.1930091381072998,
                -1.1162303686141968, -0.05740022659301758, 0.3996570110321045 },
            { 0.325597882270813, 0.11720636487007141, -0.85797518491745, -1.115194320678711,
                -0.057399868965148926, 0.3996569812297821 } }
        for t = 1, 4 do
            assert_close_list(want_fast[t], sums(rec.fast[t]), TOL, "fast_weights")
        end
        assert_close_list({ 1 / 3, 1 / 3, 1 / 3 }, accs[1], 1e-12, "accs")
        assert_close_list({ 1 / 3, 1 / 3, 0.25 }, accs[2], 1e-12, "accs")

        -- finetunning on task 5's first task: a deepcopy, self.net's bn stats untouched
        local xs, ys, xq, yq = task(5)
        local ft = maml:finetunning(xs[1], ys[1], xq[1], yq[1], rec)
        assert_close_list({ 1 / 3, 1 / 6, 1 / 6, 1 / 6 }, ft, 1e-12, "finetunning accs")
        assert_close_list({ 1.1299786567687988, 1.156299114227295 }, rec.ft_losses, TOL,
            "finetunning losses")
        assert_close_list(want_bn[2], sums(maml.net.vars_bn), TOL, "vars_bn after finetunning")
    end)

    it("clip_grad_by_norm_ scales the grads in place to max_norm", function()
        local maml = Meta({ update_lr = 0.4, meta_lr = 0.01, task_num = 2, update_step = 2,
            update_step_test = 3 }, { { "linear", { 3, 2 } } })
        local g = { fill({ 2, 3 }, 1), fill({ 4 }, 2) }
        assert.is_true(ported.close(maml:clip_grad_by_norm_(g, 0.5), 0.4571100864299928, 1e-5))
        assert_close_list({ 0.21018800139427185, 0.057504475116729736 }, sums(g), TOL,
            "clipped grads")
    end)
end)
