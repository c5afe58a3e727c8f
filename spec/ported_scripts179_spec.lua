-- ported_scripts179_spec.lua — DLR-RM/stable-baselines3's PPO maths: common/distributions.py
-- (sum_independent_dims, DiagGaussianDistribution, SquashedDiagGaussianDistribution with
-- TanhBijector, CategoricalDistribution), common/torch_layers.py (MlpExtractor),
-- common/policies.py (ActorCriticPolicy: init_weights, _get_action_dist_from_latent,
-- evaluate_actions), common/buffers.py (RolloutBuffer.compute_returns_and_advantage) and
-- ppo/ppo.py's train step, ported line for line at tiny sizes (obs dim 4, net_arch {8, 8},
-- n_steps 5, 2 envs, 2 discrete actions or a 2-d Box). The Python line stands above each Lua
-- line that differs from it. Discrete actions are 1-based classes. PyTorch 1.13's values come
-- from the same formula weights (0.5 sin(0.7 (i + 1) + 0.3 k) over each parameter's flat index).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local Normal, Categorical = tide.distributions.Normal, tide.distributions.Categorical

local unpack = table.unpack or unpack -- luacheck: ignore
local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list

local function list(t)
    return t:detach():contiguous():view(-1):tolist()
end

---------------------------------------------------------------------------------------------
-- common/distributions.py
---------------------------------------------------------------------------------------------
-- def sum_independent_dims(tensor: th.Tensor) -> th.Tensor:
local function sum_independent_dims(tensor)
    -- if len(tensor.shape) > 1:
    if tensor.ndim > 1 then
        -- tensor = tensor.sum(dim=1)  (dim 1 of Python is the second: 2 here)
        tensor = tensor:sum({ dim = 2 })
    else
        tensor = tensor:sum()
    end
    return tensor
end

-- class DiagGaussianDistribution(Distribution):
local DiagGaussianDistribution = ported.class("DiagGaussianDistribution")
function DiagGaussianDistribution:__init__(action_dim)
    self.action_dim = action_dim
end
-- def proba_distribution_net(self, latent_dim: int, log_std_init: float = 0.0):
function DiagGaussianDistribution:proba_distribution_net(latent_dim, log_std_init)
    local mean_actions = nn.Linear(latent_dim, self.action_dim)
    -- log_std = nn.Parameter(th.ones(self.action_dim) * log_std_init, requires_grad=True)
    local log_std = nn.Parameter(tide.ones(self.action_dim) * (log_std_init or 0.0))
    return mean_actions, log_std
end
function DiagGaussianDistribution:proba_distribution(mean_actions, log_std)
    -- action_std = th.ones_like(mean_actions) * log_std.exp()
    local action_std = tide.ones_like(mean_actions) * log_std:exp()
    self.distribution = Normal(mean_actions, action_std)
    return self
end
function DiagGaussianDistribution:log_prob(actions)
    local log_prob = self.distribution:log_prob(actions)
    return sum_independent_dims(log_prob)
end
function DiagGaussianDistribution:entropy()
    return sum_independent_dims(self.distribution:entropy())
end
function DiagGaussianDistribution:sample()
    return self.distribution:rsample()
end
function DiagGaussianDistribution:mode()
    -- return self.distribution.mean
    return self.distribution:mean()
end

-- class TanhBijector:
local TanhBijector = ported.class("TanhBijector")
function TanhBijector:__init__(epsilon)
    self.epsilon = epsilon or 1e-6
end
-- @staticmethod def atanh(x):
function TanhBijector.atanh(x)
    -- return 0.5 * (x.log1p() - (-x).log1p())
    return 0.5 * (x:log1p() - (-x):log1p())
end
function TanhBijector.inverse(y)
    -- eps = th.finfo(y.dtype).eps
    local eps = tide.finfo(y.dtype).eps
    -- return TanhBijector.atanh(y.clamp(min=-1.0 + eps, max=1.0 - eps))
    return TanhBijector.atanh(y:clamp(-1.0 + eps, 1.0 - eps))
end
function TanhBijector:log_prob_correction(x)
    -- return th.log(1.0 - th.tanh(x) ** 2 + self.epsilon)
    return tide.log(1.0 - tide.tanh(x) ^ 2 + self.epsilon)
end

-- class SquashedDiagGaussianDistribution(DiagGaussianDistribution):
local SquashedDiagGaussianDistribution = ported.class("SquashedDiagGaussianDistribution")
setmetatable(SquashedDiagGaussianDistribution, {
    __index = DiagGaussianDistribution, __call = getmetatable(SquashedDiagGaussianDistribution)
        .__call })
function SquashedDiagGaussianDistribution:__init__(action_dim, epsilon)
    DiagGaussianDistribution.__init__(self, action_dim)
    self.epsilon = epsilon or 1e-6
    self.gaussian_actions = nil
end
function SquashedDiagGaussianDistribution:log_prob(actions, gaussian_actions)
    if gaussian_actions == nil then
        gaussian_actions = TanhBijector.inverse(actions)
    end
    -- log_prob = super().log_prob(gaussian_actions)
    local log_prob = DiagGaussianDistribution.log_prob(self, gaussian_actions)
    -- log_prob -= th.sum(th.log(1 - actions**2 + self.epsilon), dim=1)
    log_prob = log_prob - tide.sum(tide.log(1 - actions ^ 2 + self.epsilon), { dim = 2 })
    return log_prob
end
function SquashedDiagGaussianDistribution:entropy()
    return nil
end
function SquashedDiagGaussianDistribution:mode()
    -- self.gaussian_actions = super().mode()
    self.gaussian_actions = DiagGaussianDistribution.mode(self)
    return tide.tanh(self.gaussian_actions)
end

-- class CategoricalDistribution(Distribution):
local CategoricalDistribution = ported.class("CategoricalDistribution")
function CategoricalDistribution:__init__(action_dim)
    self.action_dim = action_dim
end
function CategoricalDistribution:proba_distribution_net(latent_dim)
    return nn.Linear(latent_dim, self.action_dim)
end
function CategoricalDistribution:proba_distribution(action_logits)
    -- self.distribution = Categorical(logits=action_logits)
    self.distribution = Categorical({ logits = action_logits })
    return self
end
function CategoricalDistribution:log_prob(actions)
    return self.distribution:log_prob(actions)
end
function CategoricalDistribution:entropy()
    return self.distribution:entropy()
end
function CategoricalDistribution:mode()
    -- return th.argmax(self.distribution.probs, dim=1)
    return tide.argmax(self.distribution.probs, { dim = 2 })
end

---------------------------------------------------------------------------------------------
-- common/torch_layers.py MlpExtractor, common/policies.py ActorCriticPolicy
---------------------------------------------------------------------------------------------
local MlpExtractor = nn.Module:extend("MlpExtractor")
-- def __init__(self, feature_dim, net_arch, activation_fn, device="auto"):
function MlpExtractor:init(feature_dim, net_arch, activation_fn)
    local policy_net, value_net = {}, {}
    local last_layer_dim_pi, last_layer_dim_vf = feature_dim, feature_dim
    -- pi_layers_dims = vf_layers_dims = net_arch
    local pi_layers_dims, vf_layers_dims = net_arch, net_arch
    for _, curr_layer_dim in ipairs(pi_layers_dims) do
        policy_net[#policy_net + 1] = nn.Linear(last_layer_dim_pi, curr_layer_dim)
        policy_net[#policy_net + 1] = activation_fn()
        last_layer_dim_pi = curr_layer_dim
    end
    for _, curr_layer_dim in ipairs(vf_layers_dims) do
        value_net[#value_net + 1] = nn.Linear(last_layer_dim_vf, curr_layer_dim)
        value_net[#value_net + 1] = activation_fn()
        last_layer_dim_vf = curr_layer_dim
    end
    self.latent_dim_pi = last_layer_dim_pi
    self.latent_dim_vf = last_layer_dim_vf
    -- self.policy_net = nn.Sequential(*policy_net).to(device)
    self.policy_net = nn.Sequential(unpack(policy_net))
    self.value_net = nn.Sequential(unpack(value_net))
end
function MlpExtractor:forward(features)
    return self:forward_actor(features), self:forward_critic(features)
end
function MlpExtractor:forward_actor(features)
    return self.policy_net(features)
end
function MlpExtractor:forward_critic(features)
    return self.value_net(features)
end

-- @staticmethod def init_weights(module: nn.Module, gain: float = 1) -> None:
local function init_weights(module, gain)
    -- if isinstance(module, (nn.Linear, nn.Conv2d)):
    if module.weight ~= nil and module.in_features ~= nil then
        -- nn.init.orthogonal_(module.weight, gain=gain)
        nn.init.orthogonal_(module.weight, gain)
        if module.bias ~= nil then
            -- module.bias.data.fill_(0.0)
            module.bias.data:fill_(0.0)
        end
    end
end

-- class ActorCriticPolicy(BasePolicy): the parts PPO's train step meets (FlattenExtractor is
-- the identity on a flat Box observation; the features extractor is shared)
local ActorCriticPolicy = nn.Module:extend("ActorCriticPolicy")
function ActorCriticPolicy:init(action_dist, ortho_init)
    self.action_dist = action_dist
    -- self.mlp_extractor = MlpExtractor(self.features_dim, net_arch=self.net_arch,
    --     activation_fn=self.activation_fn, device=self.device)
    self.mlp_extractor = MlpExtractor(4, { 8, 8 }, nn.Tanh)
    local latent_dim_pi = self.mlp_extractor.latent_dim_pi
    if getmetatable(action_dist) == DiagGaussianDistribution then
        self.action_net, self.log_std = self.action_dist:proba_distribution_net(latent_dim_pi,
            0.0)
    else
        self.action_net = self.action_dist:proba_distribution_net(latent_dim_pi)
    end
    self.value_net = nn.Linear(self.mlp_extractor.latent_dim_vf, 1)
    if ortho_init then
        -- module_gains = {self.mlp_extractor: np.sqrt(2), self.action_net: 0.01,
        --     self.value_net: 1}
        local module_gains = { { self.mlp_extractor, math.sqrt(2) }, { self.action_net, 0.01 },
            { self.value_net, 1 } }
        -- for module, gain in module_gains.items():
        for _, mg in ipairs(module_gains) do
            -- module.apply(partial(self.init_weights, gain=gain))
            mg[1]:apply(function(m) init_weights(m, mg[2]) end)
        end
    end
    -- self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), eps=1e-5)
    self.optimizer = tide.optim.Adam(self:parameters(), { lr = 3e-4, eps = 1e-5 })
end
function ActorCriticPolicy:_get_action_dist_from_latent(latent_pi)
    local mean_actions = self.action_net(latent_pi)
    if getmetatable(self.action_dist) == DiagGaussianDistribution then
        return self.action_dist:proba_distribution(mean_actions, self.log_std)
    else
        -- return self.action_dist.proba_distribution(action_logits=mean_actions)
        return self.action_dist:proba_distribution(mean_actions)
    end
end
function ActorCriticPolicy:evaluate_actions(obs, actions)
    -- features = self.extract_features(obs)  (FlattenExtractor: obs itself)
    local features = obs
    local latent_pi, latent_vf = self.mlp_extractor(features)
    local distribution = self:_get_action_dist_from_latent(latent_pi)
    local log_prob = distribution:log_prob(actions)
    local values = self.value_net(latent_vf)
    local entropy = distribution:entropy()
    return values, log_prob, entropy
end

---------------------------------------------------------------------------------------------
-- common/buffers.py RolloutBuffer.compute_returns_and_advantage (numpy there, tensors here)
---------------------------------------------------------------------------------------------
local function compute_returns_and_advantage(buf, last_values, dones)
    -- last_values = last_values.clone().cpu().numpy().flatten()
    last_values = last_values:clone():flatten()
    local last_gae_lam = 0
    -- for step in reversed(range(self.buffer_size)):
    for step = buf.buffer_size, 1, -1 do
        local next_non_terminal, next_values
        if step == buf.buffer_size then
            -- next_non_terminal = 1.0 - dones.astype(np.float32)
            next_non_terminal = 1.0 - dones:to("float32")
            next_values = last_values
        else
            next_non_terminal = 1.0 - buf.episode_starts[step + 1]
            next_values = buf.values[step + 1]
        end
        local delta = buf.rewards[step] + buf.gamma * next_values * next_non_terminal
            - buf.values[step]
        last_gae_lam = delta + buf.gamma * buf.gae_lambda * next_non_terminal * last_gae_lam
        -- self.advantages[step] = last_gae_lam
        buf.advantages[step]:copy_(last_gae_lam)
    end
    buf.returns = buf.advantages + buf.values
end

---------------------------------------------------------------------------------------------
-- fixed data, the same formulas as the PyTorch script
---------------------------------------------------------------------------------------------
local function formula(n, f)
    local v = {}
    for i = 0, n - 1 do v[i + 1] = f(i) end
    return tide.tensor(v)
end
local function fill(p, k)
    tide.no_grad(function()
        p:copy_(formula(p:numel(), function(i) return 0.5 * math.sin(0.7 * (i + 1) + 0.3 * k) end)
            :view(p.shape))
    end)
end
local function fill_policy(pol)
    local m = pol.mlp_extractor
    local ps = { m.policy_net[1].weight, m.policy_net[1].bias, m.policy_net[3].weight,
        m.policy_net[3].bias, m.value_net[1].weight, m.value_net[1].bias, m.value_net[3].weight,
        m.value_net[3].bias, pol.action_net.weight, pol.action_net.bias, pol.value_net.weight,
        pol.value_net.bias, pol.log_std }
    for k = 1, 13 do
        if ps[k] then fill(ps[k], k) end
    end
end
local obs = formula(40, function(i) return math.sin(0.37 * (i + 1)) end):view(10, 4)

local function make_buffer()
    return {
        buffer_size = 5, gamma = 0.99, gae_lambda = 0.95,
        rewards = formula(10, function(i) return math.cos(0.9 * (i + 1)) end):view(5, 2),
        values = formula(10, function(i) return 0.3 * math.sin(1.3 * (i + 1)) end):view(5, 2),
        episode_starts = tide.tensor({ { 1, 1 }, { 0, 0 }, { 0, 1 }, { 1, 0 }, { 0, 0 } }),
        advantages = tide.zeros(5, 2),
    }
end
-- swap_and_flatten: arr.swapaxes(0, 1).reshape(shape[0] * shape[1], *shape[2:])
local function swap_and_flatten(arr)
    return arr:transpose(1, 2):reshape(-1)
end

local ADV = { -0.7114035487174988, -1.238373041152954, -0.8928011655807495, -0.6317220330238342,
    -0.2753317952156067, 0.09492778778076172, 0.8965341448783875, 0.006020605564117432,
    0.23255093395709991, -1.0371804237365723 }
local RET = { -0.4223361015319824, -1.0837225914001465, -1.0991309881210327, -0.8967584371566772,
    -0.2107957899570465, 0.3944907784461975, 0.992263674736023, -0.24232733249664307,
    0.003955855965614319, -0.9111303091049194 }

-- PyTorch 1.13 per policy: log_prob, entropy, {policy_loss, value_loss, entropy_loss, loss,
-- approx_kl, clip_fraction, total grad norm}, action_net.weight, value_net.bias,
-- policy_net.0.weight[:6], log_std after the Adam step
local WANT = {
    discrete = {
        lp = { -1.2790284156799316, -0.29437872767448425, -1.2090727090835571,
            -0.38933423161506653, -1.2957435846328735, -0.3059798777103424, -1.3127198219299316,
            -0.4105667769908905, -1.306056022644043, -0.3170923590660095 },
        ent = { 0.5913476943969727, 0.5677679777145386, 0.6095657348632812, 0.62873375415802,
            0.5868988037109375, 0.5767873525619507, 0.5823489427566528, 0.638839840888977,
            0.5841384530067444, 0.5849783420562744 },
        loss = { -0.0044671655632555485, 0.4231569170951843, -0.5951406359672546,
            0.20115989446640015, 0.023415785282850266, 0.699999988079071, 0.2330009788274765 },
        aw = { -0.12747061252593994, -0.4088386297225952, -0.4977826774120331,
            -0.35307008028030396, -0.04184465482831001, 0.28891992568969727,
            0.48365989327430725, 0.4513857960700989, 0.20575930178165436,
            -0.13618025183677673, -0.4142128527164459, -0.496976375579834,
            -0.34646257758140564, -0.032860998064279556, 0.29633668065071106,
            0.48570388555526733 },
        vb = { -0.45808297395706177 },
        pw = { 0.42043572664260864, 0.49553266167640686, 0.3374318778514862, 0.02049068734049797,
            -0.3062285780906677, -0.4890647530555725 },
    },
    box = {
        lp = { -3.9907236099243164, -5.361280918121338, -5.246954917907715, -2.5566494464874268,
            -1.500983476638794, -1.2201281785964966, -4.35065221786499, -9.350543975830078,
            -7.144887447357178, -2.119657039642334 },
        ent = { 1.9248976707458496, 1.9248976707458496, 1.9248976707458496, 1.9248976707458496,
            1.9248976707458496, 1.9248976707458496, 1.9248976707458496, 1.9248976707458496,
            1.9248976707458496, 1.9248976707458496 },
        loss = { -0.004467189311981201, 0.4231569170951843, -1.9248979091644287,
            0.18786229193210602, 0.023415779694914818, 0.699999988079071, 2.251307249069214 },
        aw = { -0.12747082114219666, -0.40883868932724, -0.4977823495864868, -0.3524702191352844,
            -0.04124541953206062, 0.2889200747013092, 0.48365992307662964,
            0.45078596472740173, 0.20635905861854553, -0.13558050990104675,
            -0.41361355781555176, -0.49757564067840576, -0.3470623195171356,
            -0.03346076235175133, 0.29573696851730347, 0.48570457100868225 },
        vb = { -0.45808297395706177 },
        pw = { 0.4210353493690491, 0.4961322546005249, 0.3380313515663147, 0.02108965627849102,
            -0.3056289851665497, -0.4884651005268097 },
        log_std = { -0.49654555320739746, -0.4164331555366516 },
    },
}

---------------------------------------------------------------------------------------------
-- ppo/ppo.py PPO.train: one epoch, one minibatch of the whole buffer (batch_size 10)
-- GAP: (port scope) RolloutBuffer.get's random permutation is left out: the minibatch is the
-- buffer in swap_and_flatten order, so the step is reproducible against PyTorch's
---------------------------------------------------------------------------------------------
local clip_range, clip_range_vf, ent_coef, vf_coef, max_grad_norm = 0.2, 0.2, 0.01, 0.5, 0.5

local function train_step(policy, rollout_data)
    local actions = rollout_data.actions
    local values, log_prob, entropy = policy:evaluate_actions(rollout_data.observations, actions)
    values = values:flatten()
    local advantages = rollout_data.advantages
    -- if self.normalize_advantage and len(advantages) > 1:
    if #advantages > 1 then
        -- advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        advantages = (advantages - advantages:mean()) / (advantages:std() + 1e-8)
    end
    -- ratio = th.exp(log_prob - rollout_data.old_log_prob)
    local ratio = tide.exp(log_prob - rollout_data.old_log_prob)
    local policy_loss_1 = advantages * ratio
    -- policy_loss_2 = advantages * th.clamp(ratio, 1 - clip_range, 1 + clip_range)
    local policy_loss_2 = advantages * tide.clamp(ratio, 1 - clip_range, 1 + clip_range)
    -- policy_loss = -th.min(policy_loss_1, policy_loss_2).mean()
    local policy_loss = -tide.min(policy_loss_1, policy_loss_2):mean()
    -- clip_fraction = th.mean((th.abs(ratio - 1) > clip_range).float()).item()
    local clip_fraction = tide.mean((tide.abs(ratio - 1):gt(clip_range)):float()):item()
    -- values_pred = rollout_data.old_values + th.clamp(
    --     values - rollout_data.old_values, -clip_range_vf, clip_range_vf)
    local values_pred = rollout_data.old_values + tide.clamp(
        values - rollout_data.old_values, -clip_range_vf, clip_range_vf)
    local value_loss = F.mse_loss(rollout_data.returns, values_pred)
    local entropy_loss
    if entropy == nil then
        entropy_loss = -tide.mean(-log_prob)
    else
        entropy_loss = -tide.mean(entropy)
    end
    local loss = policy_loss + ent_coef * entropy_loss + vf_coef * value_loss
    -- with th.no_grad():
    local approx_kl_div = tide.no_grad(function()
        local log_ratio = log_prob - rollout_data.old_log_prob
        -- approx_kl_div = th.mean((th.exp(log_ratio) - 1) - log_ratio).cpu().numpy()
        return tide.mean((tide.exp(log_ratio) - 1) - log_ratio):item()
    end)
    policy.optimizer:zero_grad()
    loss:backward()
    -- th.nn.utils.clip_grad_norm_(self.policy.parameters(), self.max_grad_norm)
    -- (tide's clip_grad_norm_ returns the total norm as a number, PyTorch's a 0-d tensor)
    local total_norm = nn.utils.clip_grad_norm_(policy:parameters(), max_grad_norm)
    policy.optimizer:step()
    return { policy_loss:item(), value_loss:item(), entropy_loss:item(), loss:item(),
        approx_kl_div, clip_fraction, total_norm }, log_prob, entropy
end

describe("stable-baselines3 PPO (ported)", function()
    it("compute_returns_and_advantage: GAE with episode starts, PyTorch's values", function()
        local buf = make_buffer()
        compute_returns_and_advantage(buf, tide.tensor({ 0.25, -0.4 }),
            tide.tensor({ false, true }))
        assert_close_list(ADV, list(buf.advantages), 1e-5, "advantages")
        assert_close_list(RET, list(buf.returns), 1e-5, "returns")
    end)

    for _, kind in ipairs({ "discrete", "box" }) do
        it("evaluate_actions and one PPO train step (" .. kind .. "), PyTorch's values", function()
            local buf = make_buffer()
            compute_returns_and_advantage(buf, tide.tensor({ 0.25, -0.4 }),
                tide.tensor({ false, true }))
            local dist = kind == "box" and DiagGaussianDistribution(2) or CategoricalDistribution(2)
            local policy = ActorCriticPolicy(dist, false)
            fill_policy(policy)
            local actions
            if kind == "box" then
                actions = formula(20, function(i) return 0.8 * math.sin(0.5 * (i + 1)) end)
                    :view(10, 2)
            else
                -- actions = rollout_data.actions.long().flatten()  (classes 1-based here)
                actions = formula(10, function(i) return i % 2 + 1 end):long()
            end
            local _, lp0 = tide.no_grad(function() return policy:evaluate_actions(obs, actions) end)
            local rollout_data = {
                observations = obs, actions = actions,
                old_values = swap_and_flatten(buf.values),
                old_log_prob = lp0
                    + formula(10, function(i) return 0.3 * math.sin(2.1 * (i + 1)) end),
                advantages = swap_and_flatten(buf.advantages),
                returns = swap_and_flatten(buf.returns),
            }
            local got, log_prob, entropy = train_step(policy, rollout_data)
            local want = WANT[kind]
            assert_close_list(want.lp, list(log_prob), 1e-5, "log_prob")
            assert_close_list(want.ent, list(entropy), 1e-5, "entropy")
            assert_close_list(want.loss, got, 1e-4, "loss parts")
            assert_close_list(want.aw, list(policy.action_net.weight), 1e-5, "action_net.weight")
            assert_close_list(want.vb, list(policy.value_net.bias), 1e-5, "value_net.bias")
            local pw = list(policy.mlp_extractor.policy_net[1].weight)
            assert_close_list(want.pw, { pw[1], pw[2], pw[3], pw[4], pw[5], pw[6] }, 1e-5,
                "policy_net.0.weight")
            if kind == "box" then
                assert_close_list(want.log_std, list(policy.log_std), 1e-5, "log_std")
                -- mode(): the mean, of the distribution rebuilt after the step
                local latent_pi = policy.mlp_extractor:forward_actor(obs)
                local mean = policy.action_net(latent_pi)
                policy:_get_action_dist_from_latent(latent_pi)
                assert_close_list(list(mean), list(dist:mode()), 1e-6, "mode")
            else
                -- mode(): th.argmax(probs, dim=1), 1-based
                local m = list(dist:mode())
                local logits = dist.distribution.logits:tolist()
                for i = 1, 10 do
                    assert.are.equal(logits[i][2] > logits[i][1] and 2 or 1, m[i])
                end
            end
        end)
    end

    it("SquashedDiagGaussianDistribution: TanhBijector.inverse, log_prob, mode", function()
        local mean = tide.tensor({ { 0.2, -0.5 }, { 1.1, 0.3 } })
        local log_std = tide.tensor({ -0.3, 0.4 })
        local acts = tide.tensor({ { 0.5, -0.9 }, { 0.99, 1.0 } })
        local d = SquashedDiagGaussianDistribution(2)
        d:proba_distribution(mean, log_std)
        assert.is_nil(d:entropy())
        assert_close_list({ 0.5493061542510986, -1.4722193479537964, 2.646652936935425,
            8.317766189575195 }, list(TanhBijector.inverse(acts)), 1e-4, "inverse")
        assert_close_list({ -0.31298863887786865, -0.8272171020507812 }, list(d:log_prob(acts)),
            1e-4, "log_prob")
        assert_close_list({ 0.1973753273487091, -0.46211716532707214, 0.8004990220069885,
            0.29131263494491577 }, list(d:mode()), 1e-6, "mode")
        assert_close_list({ -0.2876807153224945, -1.6607255935668945, -3.916987180709839,
            -13.601675033569336 }, list(TanhBijector():log_prob_correction(
            TanhBijector.inverse(acts))), 1e-3, "log_prob_correction")
    end)

    it("init_weights: orthogonal rows scaled by the gains, zero biases", function()
        tide.manual_seed(0)
        local policy = ActorCriticPolicy(DiagGaussianDistribution(2), true)
        local function check(lin, gain)
            local w = lin.weight:detach()
            -- rows orthonormal (out <= in) or columns (out > in), times the gain
            local g = lin.out_features <= lin.in_features and w:matmul(w:t()) or w:t():matmul(w)
            local n = g:size(1)
            local want = list(tide.eye(n) * (gain * gain))
            assert_close_list(want, list(g), 1e-5, "gram")
            assert.are.equal(0, lin.bias:abs():sum():item())
        end
        check(policy.mlp_extractor.policy_net[1], math.sqrt(2))
        check(policy.mlp_extractor.value_net[3], math.sqrt(2))
        check(policy.action_net, 0.01)
        check(policy.value_net, 1)
        assert_close_list({ 0, 0 }, list(policy.log_std), 0, "log_std_init")
    end)
end)
