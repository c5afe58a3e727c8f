-- ported_scripts63_spec.lua — davidmrau/mixture-of-experts moe.py (SparseDispatcher with
-- dispatch / combine / expert_to_gates, the MLP experts, MoE with noisy top-k gating:
-- cv_squared, _gates_to_load, _prob_in_top_k through Normal(mean, std).cdf, noisy_top_k_gating,
-- forward returning y and the load-balancing loss) and its example.py training loop (Adam on
-- random data), ported line for line at tiny sizes. The Python line stands above each Lua line
-- that differs from it. Dims and indices are 1-based: nonzero's indices are, so the dispatcher's
-- batch and expert indices are, and _prob_in_top_k's flat positions gain one.
local tide = require("tide")
local nn = tide.nn
local Normal = tide.distributions.Normal

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- class SparseDispatcher(object):
local SparseDispatcher = ported.class("SparseDispatcher")
-- def __init__(self, num_experts, gates):
function SparseDispatcher:__init__(num_experts, gates)
    self._gates = gates
    self._num_experts = num_experts
    -- sort experts
    -- sorted_experts, index_sorted_experts = torch.nonzero(gates).sort(0)
    local sorted_experts, index_sorted_experts = tide.nonzero(gates):sort(1)
    -- drop indices
    -- _, self._expert_index = sorted_experts.split(1, dim=1)
    local parts = sorted_experts:split(1, 2)
    self._expert_index = parts[2]
    -- get according batch index for each expert
    -- self._batch_index = torch.nonzero(gates)[index_sorted_experts[:, 1], 0]
    self._batch_index = tide.nonzero(gates)[{ index_sorted_experts[{ {}, 2 }], 1 }]
    -- calculate num samples that each expert gets
    -- self._part_sizes = (gates > 0).sum(0).tolist()
    self._part_sizes = gates:gt(0):sum(1):tolist()
    -- expand gates to match with self._batch_index
    -- gates_exp = gates[self._batch_index.flatten()]
    local gates_exp = gates[self._batch_index:flatten()]
    -- self._nonzero_gates = torch.gather(gates_exp, 1, self._expert_index)
    self._nonzero_gates = tide.gather(gates_exp, 2, self._expert_index)
end

-- def dispatch(self, inp):
function SparseDispatcher:dispatch(inp)
    -- expand according to batch index so we can just split by _part_sizes
    -- inp_exp = inp[self._batch_index].squeeze(1)
    local inp_exp = inp[self._batch_index]:squeeze(2)
    -- return torch.split(inp_exp, self._part_sizes, dim=0)
    return tide.split(inp_exp, self._part_sizes, 1)
end

-- def combine(self, expert_out, multiply_by_gates=True):
function SparseDispatcher:combine(expert_out, multiply_by_gates)
    if multiply_by_gates == nil then multiply_by_gates = true end
    -- apply exp to expert outputs, so we are not longer in log space
    -- stitched = torch.cat(expert_out, 0)
    local stitched = tide.cat(expert_out, 1)
    if multiply_by_gates then
        stitched = stitched:mul(self._nonzero_gates)
    end
    -- zeros = torch.zeros(self._gates.size(0), expert_out[-1].size(1), requires_grad=True,
    --                     device=stitched.device)
    local zeros = tide.zeros(self._gates:size(1), expert_out[#expert_out]:size(2),
        { requires_grad = true, device = stitched.device })
    -- combine samples that have been processed by the same k experts
    -- combined = zeros.index_add(0, self._batch_index, stitched.float())
    local combined = zeros:index_add(1, self._batch_index, stitched:float())
    return combined
end

-- def expert_to_gates(self):
function SparseDispatcher:expert_to_gates()
    -- split nonzero gates for each expert
    -- return torch.split(self._nonzero_gates, self._part_sizes, dim=0)
    return tide.split(self._nonzero_gates, self._part_sizes, 1)
end

-- class MLP(nn.Module):
local MLP = nn.Module:extend("MLP")
-- def __init__(self, input_size, output_size, hidden_size):
function MLP:init(input_size, output_size, hidden_size)
    self.fc1 = nn.Linear(input_size, hidden_size)
    self.fc2 = nn.Linear(hidden_size, output_size)
    self.relu = nn.ReLU()
    -- self.soft = nn.Softmax(1)
    self.soft = nn.Softmax(2)
end

function MLP:forward(x)
    local out = self.fc1(x)
    out = self.relu(out)
    out = self.fc2(out)
    out = self.soft(out)
    return out
end

-- class MoE(nn.Module):
local MoE = nn.Module:extend("MoE")
-- def __init__(self, input_size, output_size, num_experts, hidden_size, noisy_gating=True, k=4):
function MoE:init(input_size, output_size, num_experts, hidden_size, noisy_gating, k)
    if noisy_gating == nil then noisy_gating = true end
    self.noisy_gating = noisy_gating
    self.num_experts = num_experts
    self.output_size = output_size
    self.input_size = input_size
    self.hidden_size = hidden_size
    self.k = k or 4
    -- instantiate experts
    -- self.experts = nn.ModuleList([MLP(self.input_size, self.output_size, self.hidden_size)
    --                               for i in range(self.num_experts)])
    local experts = {}
    for i = 1, self.num_experts do
        experts[i] = MLP(self.input_size, self.output_size, self.hidden_size)
    end
    self.experts = nn.ModuleList(experts)
    -- self.w_gate = nn.Parameter(torch.zeros(input_size, num_experts), requires_grad=True)
    self.w_gate = nn.Parameter(tide.zeros(input_size, num_experts), true)
    self.w_noise = nn.Parameter(tide.zeros(input_size, num_experts), true)

    self.softplus = nn.Softplus()
    -- self.softmax = nn.Softmax(1)
    self.softmax = nn.Softmax(2)
    -- self.register_buffer("mean", torch.tensor([0.0]))
    -- (the dtype spelled out: Lua 5.1 and LuaJIT read {0.0} as integral, an int64 tensor, and
    -- Normal then raises "tide: Normal: loc must be floating-point, got int64")
    self:register_buffer("mean", tide.tensor({ 0.0 }, { dtype = "float32" }))
    -- self.register_buffer("std", torch.tensor([1.0]))
    self:register_buffer("std", tide.tensor({ 1.0 }, { dtype = "float32" }))
    assert(self.k <= self.num_experts)
end

-- def cv_squared(self, x):
function MoE:cv_squared(x)
    local eps = 1e-10
    -- if only num_experts = 1
    -- if x.shape[0] == 1:
    if x.shape[1] == 1 then
        -- return torch.tensor([0], device=x.device, dtype=x.dtype)
        return tide.tensor({ 0 }, { device = x.device, dtype = x.dtype })
    end
    -- return x.float().var() / (x.float().mean()**2 + eps)
    return x:float():var() / (x:float():mean() ^ 2 + eps)
end

-- def _gates_to_load(self, gates):
function MoE:_gates_to_load(gates)
    -- return (gates > 0).sum(0)
    return gates:gt(0):sum(1)
end

-- def _prob_in_top_k(self, clean_values, noisy_values, noise_stddev, noisy_top_values):
function MoE:_prob_in_top_k(clean_values, noisy_values, noise_stddev, noisy_top_values)
    -- batch = clean_values.size(0)
    local batch = clean_values:size(1)
    -- m = noisy_top_values.size(1)
    local m = noisy_top_values:size(2)
    local top_values_flat = noisy_top_values:flatten()

    -- threshold_positions_if_in = torch.arange(batch, device=clean_values.device) * m + self.k
    -- (1-based: the (k+1)-th value of each row sits at row * m + k + 1)
    local threshold_positions_if_in = tide.arange(batch, { device = clean_values.device }) * m
        + self.k + 1
    -- threshold_if_in = torch.unsqueeze(torch.gather(top_values_flat, 0,
    --                                                threshold_positions_if_in), 1)
    local threshold_if_in = tide.unsqueeze(tide.gather(top_values_flat, 1,
        threshold_positions_if_in), 2)
    -- is_in = torch.gt(noisy_values, threshold_if_in)
    local is_in = tide.gt(noisy_values, threshold_if_in)
    local threshold_positions_if_out = threshold_positions_if_in - 1
    -- threshold_if_out = torch.unsqueeze(torch.gather(top_values_flat, 0,
    --                                                 threshold_positions_if_out), 1)
    local threshold_if_out = tide.unsqueeze(tide.gather(top_values_flat, 1,
        threshold_positions_if_out), 2)
    -- is each value currently in the top k.
    local normal = Normal(self.mean, self.std)
    local prob_if_in = normal:cdf((clean_values - threshold_if_in) / noise_stddev)
    local prob_if_out = normal:cdf((clean_values - threshold_if_out) / noise_stddev)
    local prob = tide.where(is_in, prob_if_in, prob_if_out)
    return prob
end

-- def noisy_top_k_gating(self, x, train, noise_epsilon=1e-2):
function MoE:noisy_top_k_gating(x, train, noise_epsilon)
    noise_epsilon = noise_epsilon or 1e-2
    -- clean_logits = x @ self.w_gate
    local clean_logits = x:matmul(self.w_gate)
    local logits, noisy_logits, noise_stddev
    if self.noisy_gating and train then
        -- raw_noise_stddev = x @ self.w_noise
        local raw_noise_stddev = x:matmul(self.w_noise)
        noise_stddev = ((self.softplus(raw_noise_stddev) + noise_epsilon))
        noisy_logits = clean_logits + (tide.randn_like(clean_logits) * noise_stddev)
        logits = noisy_logits
    else
        logits = clean_logits
    end

    -- calculate topk + 1 that will be needed for the noisy gates
    logits = self.softmax(logits)
    -- top_logits, top_indices = logits.topk(min(self.k + 1, self.num_experts), dim=1)
    local top_logits, top_indices = logits:topk(math.min(self.k + 1, self.num_experts), 2)
    -- top_k_logits = top_logits[:, :self.k]
    local top_k_logits = top_logits[{ {}, { 1, self.k } }]
    local top_k_indices = top_indices[{ {}, { 1, self.k } }]
    -- top_k_gates = top_k_logits / (top_k_logits.sum(1, keepdim=True) + 1e-6)  # normalization
    local top_k_gates = top_k_logits / (top_k_logits:sum(2, true) + 1e-6) -- normalization

    -- zeros = torch.zeros_like(logits, requires_grad=True)
    local zeros = tide.zeros_like(logits, { requires_grad = true })
    -- gates = zeros.scatter(1, top_k_indices, top_k_gates)
    local gates = zeros:scatter(2, top_k_indices, top_k_gates)

    local load
    if self.noisy_gating and self.k < self.num_experts and train then
        -- load = (self._prob_in_top_k(clean_logits, noisy_logits, noise_stddev,
        --                             top_logits)).sum(0)
        load = (self:_prob_in_top_k(clean_logits, noisy_logits, noise_stddev,
            top_logits)):sum(1)
    else
        load = self:_gates_to_load(gates)
    end
    return gates, load
end

-- def forward(self, x, loss_coef=1e-2):
function MoE:forward(x, loss_coef)
    loss_coef = loss_coef or 1e-2
    local gates, load = self:noisy_top_k_gating(x, self.training)
    -- calculate importance loss
    -- importance = gates.sum(0)
    local importance = gates:sum(1)
    --
    local loss = self:cv_squared(importance) + self:cv_squared(load)
    -- loss *= loss_coef
    loss = loss * loss_coef

    local dispatcher = SparseDispatcher(self.num_experts, gates)
    local expert_inputs = dispatcher:dispatch(x)
    -- (unused afterwards, as in moe.py)
    gates = dispatcher:expert_to_gates() -- luacheck: ignore
    -- expert_outputs = [self.experts[i](expert_inputs[i]) for i in range(self.num_experts)]
    local expert_outputs = {}
    for i = 1, self.num_experts do
        expert_outputs[i] = self.experts[i](expert_inputs[i])
    end
    local y = dispatcher:combine(expert_outputs)
    return y, loss
end

-- the fixed weights of the value check, set the same way in PyTorch:
-- t.copy_((torch.arange(1., n + 1) * c).sin().mul(0.5).view(t.shape))
local function fill(t, c)
    tide.no_grad(function()
        t:copy_((tide.arange(1., t:numel() + 1) * c):sin():mul(0.5):view(t.shape))
    end)
end

local function setw(m)
    local c = 0.3
    for i = 1, #m.experts do
        local e = m.experts[i]
        for _, p in ipairs({ e.fc1.weight, e.fc1.bias, e.fc2.weight, e.fc2.bias }) do
            fill(p, c)
            c = c + 0.11
        end
    end
    fill(m.w_gate, 0.7)
    fill(m.w_noise, 0.9)
end

-- input_size, num_classes, num_experts, hidden_size, batch_size, k (example.py: 1000, 20, 10,
-- 64, 5, 4)
local D, C, E, H, B, K = 6, 5, 4, 8, 5, 2
-- x = (torch.arange(1., B*D+1) * 0.53).cos().view(B, D) + 0.5
local function fixed_x()
    return (tide.arange(1., B * D + 1) * 0.53):cos():view(B, D) + 0.5
end

local function flat(t)
    return t:detach():flatten():tolist()
end

describe("davidmrau/mixture-of-experts moe.py", function()
    it("SparseDispatcher: dispatch then combine is the gate-weighted sum", function()
        tide.manual_seed(0)
        -- 5 rows, 4 experts, 2 nonzero gates a row, expert 4 gets no row (an empty split)
        local gates = tide.tensor({
            { 0.0, 0.6, 0.4, 0.0 },
            { 0.3, 0.0, 0.7, 0.0 },
            { 0.5, 0.5, 0.0, 0.0 },
            { 0.0, 0.2, 0.8, 0.0 },
            { 0.9, 0.0, 0.1, 0.0 },
        })
        local x = tide.randn(5, 3)
        local d = SparseDispatcher(4, gates)
        assert.are.same({ 3, 3, 4, 0 }, d._part_sizes)
        local ins = d:dispatch(x)
        assert.are.equal(4, #ins)
        assert.are.same({ 3, 3 }, ins[1]:size())
        assert.are.same({ 0, 3 }, ins[4]:size())
        -- expert e multiplies by e (a linear map per expert, so the sum is checkable directly)
        local ws = {}
        local outs = {}
        for e = 1, 4 do
            ws[e] = tide.arange(1., 7.):view(3, 2) * (0.5 * e)
            outs[e] = ins[e]:matmul(ws[e])
        end
        local y = d:combine(outs)
        assert.are.same({ 5, 2 }, y:size())
        -- output[b] = Sum_i(gates[b, i] * experts[i](inputs[b]))
        local want = tide.zeros(5, 2)
        for e = 1, 4 do
            want = want + gates[{ {}, { e } }] * x:matmul(ws[e])
        end
        assert.is_true(tide.allclose(y, want, 1e-5, 1e-6))
        -- the gates per expert, in the dispatched order
        local g = d:expert_to_gates()
        assert.are.same({ 3, 1 }, g[2]:size())
        local s = 0
        for e = 1, 4 do s = s + g[e]:sum():item() end
        assert.is_true(math.abs(s - 5) < 1e-6)
    end)

    it("MoE (noisy_gating=False): gates, load, y, aux loss and 3 Adam steps match PyTorch",
        function()
            -- model = MoE(input_size, num_classes, num_experts, hidden_size, k=k,
            --             noisy_gating=False)
            local model = MoE(D, C, E, H, false, K)
            setw(model)
            local x = fixed_x()
            -- y = torch.tensor([0, 3, 1, 4, 2])  (1-based below)
            local tgt = tide.tensor({ 1, 4, 2, 5, 3 }, { dtype = "int64" })
            local gates, load = model:noisy_top_k_gating(x, true)
            -- PyTorch 1.13, the same code and weights (ref script: moe.py + fixed fills)
            assert_close_list({ 0.0, 0.50078446, 0.49921367, 0.0, 0.55067325, 0.44932503, 0.0,
                0.0, 0.0, 0.50145626, 0.49854189, 0.0, 0.54944962, 0.45054865, 0.0, 0.0, 0.0,
                0.50229061, 0.49770752, 0.0 }, flat(gates), 1e-5, "gates")
            assert.are.same({ 2, 5, 3, 0 }, load:tolist())
            assert.are.equal("int64", tostring(load.dtype))
            local y, aux = model(x)
            assert.are.same({ B, C }, y:size())
            assert_close_list({ 0.43738097, 0.28557524, 0.058215074, 0.046974614, 0.17185219,
                0.37785285, 0.19721478, 0.063542590, 0.22642919, 0.13495877, 0.43278050,
                0.28764319, 0.059453227, 0.047816955, 0.17230427, 0.37982237, 0.19733867,
                0.062038243, 0.22788274, 0.13291630, 0.42800939, 0.28944674, 0.060882799,
                0.048772715, 0.17288652 }, flat(y), 1e-5, "y")
            assert.is_true(ported.close(aux:item(), 0.013286137, 1e-5))

            -- loss_fn = nn.CrossEntropyLoss(); optim = Adam(model.parameters())  (lr 0.01 here)
            local loss_fn = nn.CrossEntropyLoss()
            local optim = tide.optim.Adam(model:parameters(), { lr = 0.01 })
            local want = { { 1.5891148, 0.013286137 }, { 1.5747153, 0.013209773 },
                { 1.5607706, 0.013152061 } }
            local want_gwg = { 0.0042355033, -0.0080125537, 0.0037770369, 1.5992919e-08,
                -0.00035944604, -0.0026181885, 0.0029776248, 1.1074499e-08, -0.0065054134,
                0.0047912835, 0.0017141256, 3.9567061e-09, -0.012516038, 0.012182819,
                0.00033322195, -3.4074574e-09, -0.016742084, 0.017528281, -0.00078618387,
                -8.9973549e-09, -0.018023985, 0.019360941, -0.0013369414, -1.1279200e-08 }
            for step = 1, 3 do
                -- def train(x, y, model, loss_fn, optim):
                local y_hat, aux_loss = model(x:float())
                local loss = loss_fn(y_hat, tgt)
                local total_loss = loss + aux_loss
                optim:zero_grad()
                total_loss:backward()
                if step == 1 then
                    assert_close_list(want_gwg, model.w_gate.grad:flatten():tolist(), 2e-6,
                        "w_gate.grad")
                end
                optim:step()
                assert.is_true(ported.close(loss:item(), want[step][1], 1e-5), "loss " .. step)
                assert.is_true(ported.close(aux_loss:item(), want[step][2], 1e-5),
                    "aux " .. step)
            end
        end)

    it("example.py: noisy gating trains (finite y, loss, gradients; loss falls)", function()
        tide.manual_seed(1)
        -- input_size = 1000; num_classes = 20; num_experts = 10; hidden_size = 64
        -- batch_size = 5; k = 4  (tiny here: 6, 5, 4, 8, 5, 2)
        -- model = MoE(input_size, num_classes, num_experts, hidden_size, k=k, noisy_gating=True)
        local model = MoE(D, C, E, H, true, K)
        -- w_gate and w_noise start at zero as moe.py's; small random ones make the gates and
        -- the noise depend on x
        setw(model)
        local loss_fn = nn.CrossEntropyLoss()
        -- optim = Adam(model.parameters())  (lr 0.05 here so that 3 steps show)
        local optim = tide.optim.Adam(model:parameters(), { lr = 0.05 })
        -- def dummy_data(batch_size, input_size, num_classes):
        local function dummy_data(batch_size, input_size, num_classes)
            -- x = torch.rand(batch_size, input_size)
            local x = tide.rand(batch_size, input_size)
            -- y = torch.randint(num_classes, (batch_size, 1)).squeeze(1)  (1-based classes)
            local y = tide.randint(1, num_classes + 1, { batch_size, 1 }):squeeze(2)
            return x, y
        end
        local x, y = dummy_data(B, D, C)
        -- the noisy path of _prob_in_top_k: load is a float, differentiable through Normal.cdf
        local _, load = model:noisy_top_k_gating(x, true)
        assert.are.same({ E }, load:size())
        assert.is_true(load.requires_grad)
        for _, v in ipairs(load:tolist()) do assert_finite(v, "load") end
        local losses = {}
        for step = 1, 3 do
            local y_hat, aux_loss = model(x:float())
            local loss = loss_fn(y_hat, y)
            local total_loss = loss + aux_loss
            optim:zero_grad()
            total_loss:backward()
            for _, p in ipairs({ model.w_gate, model.w_noise }) do
                assert.is_not_nil(p.grad)
                for _, v in ipairs(p.grad:flatten():tolist()) do assert_finite(v, "grad") end
            end
            optim:step()
            assert_finite(loss:item(), "loss")
            assert_finite(aux_loss:item(), "aux_loss")
            losses[step] = total_loss:item()
        end
        assert.is_true(losses[3] < losses[1], "losses " .. table.concat(losses, ", "))
        -- def eval(x, y, model, loss_fn): model.eval(); no noise, load counts the gates
        model:eval()
        x, y = dummy_data(B, D, C)
        local y_hat, aux_loss = model(x:float())
        assert.are.same({ B, C }, y_hat:size())
        assert_finite(loss_fn(y_hat, y):item(), "eval loss")
        assert_finite(aux_loss:item(), "eval aux_loss")
    end)
end)
