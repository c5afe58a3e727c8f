-- ported_scripts139_spec.lua — sagelywizard/pytorch-mdn's mdn/mdn.py (MDN, gaussian_probability,
-- mdn_loss, sample) and example/example.py (the three translated clusters, Adam on
-- Sequential(Linear, Tanh, MDN)), and YongfeiYan/Gumbel_Softmax_VAE's gumbel_softmax_vae.py
-- (sample_gumbel, gumbel_softmax_sample, the straight-through gumbel_softmax, VAE_gumbel,
-- loss_function, the temperature annealing), with PyTorch's own F.gumbel_softmax beside it;
-- ported line for line at tiny sizes (16-pixel inputs, latent_dim 3 x categorical_dim 4, 10
-- points a cluster, 3 steps). The Python line stands above each Lua line that differs from it.
-- Weights and data come from sin/cos formulas, the Gumbel noise U is passed in, so the
-- values match PyTorch 1.13's run of the same Python (float64 on both sides).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

local DT = tide.float64

local function list(t)
    local out = {}
    local flat = t:detach():contiguous():view(-1)
    for i = 1, flat:numel() do out[i] = flat[i]:item() end
    return out
end

-- the i-th (0-based) parameter in named_parameters order is sin(arange(numel) * 0.37 + i) * 0.3
local function fill(model)
    tide.no_grad(function()
        local i = 0
        for _, p in model:named_parameters() do
            local v = tide.sin(tide.arange(p:numel(), { dtype = DT }) * 0.37 + i) * 0.3
            p:copy_(v:view(p.shape))
            i = i + 1
        end
    end)
end

local function to_dt(model)
    return model:to(DT)
end

---------------------------------------------------------------------------------------------
-- 1. sagelywizard/pytorch-mdn mdn/mdn.py
---------------------------------------------------------------------------------------------
-- ONEOVERSQRT2PI = 1.0 / math.sqrt(2 * math.pi)
local ONEOVERSQRT2PI = 1.0 / math.sqrt(2 * math.pi)

-- class MDN(nn.Module):
local MDN = nn.Module:extend("MDN")
-- def __init__(self, in_features, out_features, num_gaussians):
function MDN:init(in_features, out_features, num_gaussians)
    self.in_features = in_features
    self.out_features = out_features
    self.num_gaussians = num_gaussians
    -- self.pi = nn.Sequential(nn.Linear(in_features, num_gaussians), nn.Softmax(dim=1))
    self.pi = nn.Sequential(
        nn.Linear(in_features, num_gaussians),
        nn.Softmax({ dim = 2 })
    )
    self.sigma = nn.Linear(in_features, out_features * num_gaussians)
    self.mu = nn.Linear(in_features, out_features * num_gaussians)
end

function MDN:forward(minibatch)
    local pi = self.pi(minibatch)
    -- sigma = torch.exp(self.sigma(minibatch))
    local sigma = tide.exp(self.sigma(minibatch))
    sigma = sigma:view(-1, self.num_gaussians, self.out_features)
    local mu = self.mu(minibatch)
    mu = mu:view(-1, self.num_gaussians, self.out_features)
    return pi, sigma, mu
end

-- def gaussian_probability(sigma, mu, target):
local function gaussian_probability(sigma, mu, target)
    -- target = target.unsqueeze(1).expand_as(sigma)
    target = target:unsqueeze(2):expand_as(sigma)
    -- ret = ONEOVERSQRT2PI * torch.exp(-0.5 * ((target - mu) / sigma)**2) / sigma
    local ret = ONEOVERSQRT2PI * tide.exp(-0.5 * ((target - mu) / sigma) ^ 2) / sigma
    -- return torch.prod(ret, 2)
    return tide.prod(ret, 3)
end

-- def mdn_loss(pi, sigma, mu, target):
local function mdn_loss(pi, sigma, mu, target)
    local prob = pi * gaussian_probability(sigma, mu, target)
    -- nll = -torch.log(torch.sum(prob, dim=1))
    local nll = -tide.log(tide.sum(prob, { dim = 2 }))
    return tide.mean(nll)
end

-- def sample(pi, sigma, mu):
local function sample(pi, sigma, mu)
    -- Choose which gaussian we'll sample from (1-based classes, as gather's indices)
    -- pis = Categorical(pi).sample().view(pi.size(0), 1, 1)
    local pis = tide.distributions.Categorical(pi):sample():view(pi:size(1), 1, 1)
    -- gaussian_noise = torch.randn((sigma.size(2), sigma.size(0)), requires_grad=False)
    local gaussian_noise = tide.randn({ sigma:size(3), sigma:size(1) },
        { requires_grad = false, dtype = sigma.dtype })
    -- variance_samples = sigma.gather(1, pis).detach().squeeze()
    local variance_samples = sigma:gather(2, pis):detach():squeeze()
    local mean_samples = mu:detach():gather(2, pis):squeeze()
    -- return (gaussian_noise * variance_samples + mean_samples).transpose(0, 1)
    return (gaussian_noise * variance_samples + mean_samples):transpose(1, 2)
end

-- example/example.py
local input_dims = 2
local output_dims = 1
local num_gaussians = 5

-- def translate_cluster(cluster, dim, amount):
local function translate_cluster(cluster, dim, amount)
    -- translation = torch.ones(cluster.size(0)) * amount
    local translation = tide.ones(cluster:size(1), { dtype = DT }) * amount
    -- cluster.transpose(0, 1)[dim].add_(translation)
    cluster:transpose(1, 2)[dim]:add_(translation)
    return cluster
end

-- torch.randn((n, input_dims + output_dims)) stands as sin(arange(n * 3) * 1.7 + b) * 1.5
local function randn_(n, b)
    return tide.sin(tide.arange(n * 3, { dtype = DT }) * 1.7 + b):view(n, 3) * 1.5
end

describe("sagelywizard/pytorch-mdn mdn.py", function()
    -- sigma, mu (B=3, G=2, O=2), target (3, 2), pi (3, 2) from formulas both sides
    local function params()
        local sigma = (tide.cos(tide.arange(12, { dtype = DT }) * 0.5) * 0.3 + 0.8):view(3, 2, 2)
        local mu = (tide.sin(tide.arange(12, { dtype = DT }) * 0.7) * 0.5):view(3, 2, 2)
        local target = (tide.sin(tide.arange(6, { dtype = DT }) * 1.3) * 0.4):view(3, 2)
        local pi = tide.softmax(tide.sin(tide.arange(6, { dtype = DT }) * 0.9):view(3, 2), 2)
        return sigma:requires_grad_(), mu:requires_grad_(), target, pi
    end

    it("gaussian_probability, mdn_loss and its gradients to mu and sigma match PyTorch", function()
        local sigma, mu, target, pi = params()
        local gp = gaussian_probability(sigma, mu, target)
        assert.are.same({ 3, 2 }, gp:size())
        assert_close_list({ 0.135835090767, 0.176401537054, 0.413892077729, 0.247547151461,
            0.355028683075, 0.121689235785 }, list(gp), 1e-9, "gaussian_probability")
        local loss = mdn_loss(pi, sigma, mu, target)
        loss:backward()
        assert_close_list({ 1.3883485927375485 }, { loss:item() }, 1e-10, "mdn_loss")
        assert_close_list({ -0.0, -0.004858341593, 0.13126040922, 0.01688527812, -0.021023972426,
            0.078823453664, -0.217555269632, -0.068775976912, 0.028733560914, -0.039706998951,
            0.04850513727, 0.022176254373 }, list(mu.grad), 1e-8, "d loss / d mu")
        assert_close_list({ 0.07886488479, 0.081299559336, 0.189074371274, 0.299313005984,
            0.365515271792, 0.428358336392, -0.107212656939, 0.136545865959, 0.457887804271,
            0.372608309822, 0.025593332546, 0.046097488389 }, list(sigma.grad), 1e-8,
            "d loss / d sigma")
    end)

    it("sample draws from the component Categorical(pi) picks", function()
        local sigma, mu = params()
        -- one-hot pi: row b picks component (b % 2) + 1; sigma tiny: the draw is that mean
        local pi = tide.tensor({ { 0, 1 }, { 1, 0 }, { 0, 1 } }, { dtype = DT })
        local s = sample(pi, sigma:detach() * 1e-9, mu)
        assert.are.same({ 3, 2 }, s:size())
        -- PyTorch's values: gather(1, pis) with a (B, 1, 1) index reads output dim 0 only, so
        -- with O = 2 both columns are mu[b, g, 0] (example.py's O is 1)
        local want = { 0.49272486499, 0.49272486499, 0.16749407508, 0.16749407508,
            0.32849329935, 0.32849329935 }
        assert_close_list(want, list(s), 1e-7, "sample")
        assert.is_false(s.requires_grad)
    end)

    it("example.py: clusters, Sequential(Linear, Tanh, MDN), 3 Adam steps match PyTorch", function()
        -- cluster1 = torch.randn((50, input_dims + output_dims)) / 4  (10 points here)
        local cluster1 = randn_(10, 0) / 4
        -- cluster1 = translate_cluster(cluster1, 1, 1.2)
        cluster1 = translate_cluster(cluster1, 2, 1.2)
        local cluster2 = randn_(10, 1) / 4
        cluster2 = translate_cluster(cluster2, 1, -1.2)
        local cluster3 = randn_(10, 2) / 4
        cluster3 = translate_cluster(cluster3, 3, -1.2)
        -- training_set = torch.cat([cluster1, cluster2, cluster3])
        local training_set = tide.cat({ cluster1, cluster2, cluster3 })
        -- training_set[::7]
        local every7 = {}
        for i = 1, training_set:size(1), 7 do
            for _, v in ipairs(list(training_set[i])) do every7[#every7 + 1] = v end
        end
        assert_close_list({ 0.0, 1.57187430392, -0.09582791326, -0.341125001938, 1.089498149437,
            0.369600112046, -0.991006854931, -0.335695262932, -0.122488172289, 0.273363390047,
            0.219343947334, -1.529885909989, -0.347054480127, 0.185581994082, -0.900767956229 },
            every7, 1e-10, "training_set")

        local model = nn.Sequential(
            nn.Linear(input_dims, 5),
            nn.Tanh(),
            MDN(5, output_dims, num_gaussians)
        )
        to_dt(model)
        fill(model)
        -- training_set[:, 0:input_dims], training_set[:, input_dims:]
        local x = training_set[{ {}, { 1, input_dims } }]
        local y = training_set[{ {}, { input_dims + 1, -1 } }]
        local pi, sigma, mu = model(x)
        assert.are.same({ 30, 5 }, pi:size())
        assert.are.same({ 30, 5, 1 }, sigma:size())
        assert.are.same({ 30, 5, 1 }, mu:size())
        assert_close_list({ 0.300235646261, 0.109862477276, 0.181964492471, 0.29496743805,
            0.112969945942 }, list(pi[1]), 1e-9, "pi[0]")
        assert_close_list({ 0.409910528571, 0.878512572119, 1.47639132967, 0.631401182903,
            0.770242363046 }, list(sigma[1]), 1e-9, "sigma[0]")
        assert_close_list({ 0.393090766727, 0.763978812884, -0.172668567343, 0.051240471777,
            0.845553793652 }, list(mu[1]), 1e-9, "mu[0]")

        -- optimizer = optim.Adam(model.parameters())
        local optimizer = optim.Adam(model:parameters())
        local losses = {}
        -- for epoch in range(1000):  (3 here)
        for _ = 1, 3 do
            model:zero_grad()
            pi, sigma, mu = model(x)
            local loss = mdn_loss(pi, sigma, mu, y)
            loss:backward()
            optimizer:step()
            losses[#losses + 1] = loss:item()
            assert_finite(losses[#losses], "mdn loss")
        end
        assert_close_list({ 1.3724668332316015, 1.368748241233924, 1.3650746616885259 }, losses,
            1e-9, "mdn losses")
        assert.is_true(losses[3] < losses[2] and losses[2] < losses[1])

        -- samples = mdn.sample(pi, sigma, mu)
        pi, sigma, mu = model(x)
        local samples = sample(pi, sigma, mu)
        assert.are.same({ 30, 1 }, samples:size())
        for _, v in ipairs(list(samples)) do assert_finite(v, "sample") end
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. YongfeiYan/Gumbel_Softmax_VAE gumbel_softmax_vae.py
---------------------------------------------------------------------------------------------
-- latent_dim = 30; categorical_dim = 10  (3 and 4 here)
local latent_dim = 3
local categorical_dim = 4 -- one-of-K vector

local temp_min = 0.5
local ANNEAL_RATE = 0.00003

-- def sample_gumbel(shape, eps=1e-20):  (U may be passed, to fix the noise)
local function sample_gumbel(shape, eps, U)
    eps = eps or 1e-20
    -- U = torch.rand(shape)
    U = U or tide.rand(shape, { dtype = DT })
    -- return -torch.log(-torch.log(U + eps) + eps)
    return -tide.log(-tide.log(U + eps) + eps)
end

-- def gumbel_softmax_sample(logits, temperature):
local function gumbel_softmax_sample(logits, temperature, U)
    -- y = logits + sample_gumbel(logits.size())
    local y = logits + sample_gumbel(logits:size(), nil, U)
    -- return F.softmax(y / temperature, dim=-1)
    return F.softmax(y / temperature, { dim = -1 })
end

-- def gumbel_softmax(logits, temperature, hard=False):
local function gumbel_softmax(logits, temperature, hard, U)
    local y = gumbel_softmax_sample(logits, temperature, U)

    if not hard then
        return y:view(-1, latent_dim * categorical_dim)
    end

    local shape = y:size()
    -- _, ind = y.max(dim=-1)
    local _, ind = y:max({ dim = -1 })
    -- y_hard = torch.zeros_like(y).view(-1, shape[-1])
    local y_hard = tide.zeros_like(y):view(-1, shape[#shape])
    -- y_hard.scatter_(1, ind.view(-1, 1), 1)
    y_hard:scatter_(2, ind:view(-1, 1), 1)
    -- y_hard = y_hard.view(*shape)
    y_hard = y_hard:view(shape)
    -- Set gradients w.r.t. y_hard gradients w.r.t. y
    y_hard = (y_hard - y):detach() + y
    return y_hard:view(-1, latent_dim * categorical_dim)
end

-- class VAE_gumbel(nn.Module):  (784 -> 512 -> 256 pixels/widths are 16 -> 12 -> 8 here)
local VAE_gumbel = nn.Module:extend("VAE_gumbel")
-- def __init__(self, temp):
function VAE_gumbel:init(_temp)
    self.fc1 = nn.Linear(16, 12)
    self.fc2 = nn.Linear(12, 8)
    self.fc3 = nn.Linear(8, latent_dim * categorical_dim)

    self.fc4 = nn.Linear(latent_dim * categorical_dim, 8)
    self.fc5 = nn.Linear(8, 12)
    self.fc6 = nn.Linear(12, 16)

    self.relu = nn.ReLU()
    self.sigmoid = nn.Sigmoid()
end

function VAE_gumbel:encode(x)
    local h1 = self.relu(self.fc1(x))
    local h2 = self.relu(self.fc2(h1))
    return self.relu(self.fc3(h2))
end

function VAE_gumbel:decode(z)
    local h4 = self.relu(self.fc4(z))
    local h5 = self.relu(self.fc5(h4))
    return self.sigmoid(self.fc6(h5))
end

-- def forward(self, x, temp, hard):  (U fixes the noise)
function VAE_gumbel:forward(x, temp, hard, U)
    -- q = self.encode(x.view(-1, 784))
    local q = self:encode(x:view(-1, 16))
    -- q_y = q.view(q.size(0), latent_dim, categorical_dim)
    local q_y = q:view(q:size(1), latent_dim, categorical_dim)
    local z = gumbel_softmax(q_y, temp, hard, U)
    -- return self.decode(z), F.softmax(q_y, dim=-1).reshape(*q.size())
    return self:decode(z), F.softmax(q_y, { dim = -1 }):reshape(q:size())
end

-- Reconstruction + KL divergence losses summed over all elements and batch
-- def loss_function(recon_x, x, qy):
local function loss_function(recon_x, x, qy)
    -- BCE = F.binary_cross_entropy(recon_x, x.view(-1, 784), size_average=False) / x.shape[0]
    local BCE = F.binary_cross_entropy(recon_x, x:view(-1, 16), { size_average = false }) /
        x.shape[1]

    -- log_ratio = torch.log(qy * categorical_dim + 1e-20)
    local log_ratio = tide.log(qy * categorical_dim + 1e-20)
    -- KLD = torch.sum(qy * log_ratio, dim=-1).mean()
    local KLD = tide.sum(qy * log_ratio, { dim = -1 }):mean()

    return BCE + KLD
end

describe("YongfeiYan/Gumbel_Softmax_VAE gumbel_softmax_vae.py", function()
    -- logits (2, 3, 4), noise U and a weighting w of the output, from formulas both sides
    local function inputs()
        local logits = (tide.sin(tide.arange(24, { dtype = DT }) * 0.8) * 1.5):view(2, 3, 4)
        local U = (tide.cos(tide.arange(24, { dtype = DT }) * 1.1) * 0.45 + 0.5):view(2, 3, 4)
        local w = tide.sin(tide.arange(24, { dtype = DT }) * 0.3):view(2, 12)
        return logits:requires_grad_(), U, w
    end
    local GRAD = { -0.103982357186, 0.05999206463, 0.034536581637, 0.009453710919,
        -0.005286255915, 0.010407991823, 0.005510474426, -0.010632210334, 0.005000619066,
        0.011912229366, 0.046959932828, -0.06387278126, 0.018261173797, -0.006458555164,
        -0.001657975993, -0.01014464264, -0.001520051996, -0.023109238698, 0.022184104818,
        0.002445185876, -0.005599577766, -0.003682697345, -0.013002212259, 0.022284487369 }

    it("gumbel_softmax, soft and straight-through hard, with fixed noise match PyTorch", function()
        local logits, U, w = inputs()
        local ys = gumbel_softmax(logits, 0.7, false, U)
        assert.are.same({ 2, 12 }, ys:size())
        assert_close_list({ 0.722605432777, 0.21558746741, 0.052112370395, 0.009694729418,
            0.105161724083, 0.240699751318, 0.582587423543, 0.071551101057, 0.004485584049,
            0.015665424805, 0.133609060177, 0.846239930968, 0.96411024478, 0.019488108223,
            0.002791227817, 0.01361041918, 0.011956443556, 0.867706318555, 0.11553584755,
            0.004801390339, 0.004657947669, 0.004727645396, 0.036325980468, 0.954288426467 },
            list(ys), 1e-9, "soft")
        local soft_sum = (ys * w):sum()
        soft_sum:backward()
        assert_close_list(GRAD, list(logits.grad), 1e-8, "soft gradient")
        logits.grad = nil

        local yh = gumbel_softmax(logits, 0.7, true, U)
        assert.are.same({ 2, 12 }, yh:size())
        assert_close_list({ 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0,
            1 }, list(yh), 1e-12, "hard")
        -- the straight-through estimator: the hard sample has the soft one's gradient
        local hard_sum = (yh * w):sum()
        hard_sum:backward()
        assert_close_list(GRAD, list(logits.grad), 1e-8, "hard gradient")
    end)

    it("F.gumbel_softmax on the same logits: one-hot rows, sums of 1, gradients", function()
        local logits, _, w = inputs()
        local soft = F.gumbel_softmax(logits, { tau = 0.7 })
        local hard = F.gumbel_softmax(logits, { tau = 0.7, hard = true })
        assert.are.same({ 2, 3, 4 }, soft:size())
        assert.are.same({ 2, 3, 4 }, hard:size())
        assert_close_list({ 1, 1, 1, 1, 1, 1 }, list(soft:sum({ dim = -1 })), 1e-12, "soft sums")
        assert_close_list({ 1, 1, 1, 1, 1, 1 }, list(hard:sum({ dim = -1 })), 1e-12, "hard sums")
        assert_close_list({ 1, 1, 1, 1, 1, 1 }, list(hard:max({ dim = -1 })), 0, "hard maxima")
        for _, v in ipairs(list(hard)) do assert.is_true(v == 0 or v == 1) end
        for _, y in ipairs({ soft, hard }) do
            logits.grad = nil
            local total = (y:view(2, 12) * w):sum()
            total:backward()
            -- a softmax's gradient sums to 0 along the classes, and is not all 0
            assert_close_list({ 0, 0, 0, 0, 0, 0 }, list(logits.grad:sum({ dim = -1 })), 1e-10,
                "gradient row sums")
            assert.is_true(logits.grad:abs():sum():item() > 1e-6)
        end
    end)

    it("VAE_gumbel loss, 3 Adam steps, fixed noise, matches PyTorch (soft and hard)", function()
        local model = VAE_gumbel(1.0)
        to_dt(model)
        -- data: a fixed batch of 4 16-pixel images in [0, 1]
        local data = (tide.sin(tide.arange(4 * 16, { dtype = DT }) * 0.61) * 0.5 + 0.5)
            :view(4, 1, 4, 4)
        local temp = 1.0
        local want = {
            [false] = { 11.29071107326238, 11.245558898845351, 11.21502893600523 },
            [true] = { 11.291261768228576, 11.247498634542278, 11.218615714775419 },
        }
        for _, hard in ipairs({ false, true }) do
            fill(model)
            -- optimizer = optim.Adam(model.parameters(), lr=1e-3)  (1e-2 here)
            local optimizer = optim.Adam(model:parameters(), { lr = 1e-2 })
            local losses = {}
            for step = 0, 2 do
                local Us = (tide.cos(tide.arange(4 * 12, { dtype = DT }) * (0.9 + step * 0.1))
                    * 0.45 + 0.5):view(4, 3, 4)
                optimizer:zero_grad()
                local recon_batch, qy = model(data, temp, hard, Us)
                assert.are.same({ 4, 16 }, recon_batch:size())
                assert.are.same({ 4, 12 }, qy:size())
                local loss = loss_function(recon_batch, data, qy)
                loss:backward()
                optimizer:step()
                losses[#losses + 1] = loss:item()
            end
            assert_close_list(want[hard], losses, 1e-9, "VAE losses, hard " .. tostring(hard))
            assert.is_true(losses[3] < losses[2] and losses[2] < losses[1])
        end
    end)

    it("the temperature annealing schedule matches numpy's", function()
        local temp = 1.0
        local got = {}
        local at = { [1] = true, [101] = true, [201] = true, [1001] = true, [3001] = true,
            [39901] = true }
        -- for batch_idx in range(40000):
        for batch_idx = 0, 39999 do
            if batch_idx % 100 == 1 then
                -- temp = np.maximum(temp * np.exp(-ANNEAL_RATE * batch_idx), temp_min)
                temp = math.max(temp * math.exp(-ANNEAL_RATE * batch_idx), temp_min)
            end
            if at[batch_idx] then got[#got + 1] = temp end
        end
        assert_close_list({ 0.9999700004499955, 0.9969446770282151, 0.9909511891523874,
            0.8476139453283016, 0.5, 0.5 }, got, 1e-13, "temp")
    end)
end)
