-- ported_scripts188_spec.lua — vwxyzjn/cleanrl's cleanrl/sac_continuous_action.py (SoftQNetwork,
-- Actor with the action_scale / action_bias buffers, LOG_STD_MIN / MAX squashing with tanh,
-- get_action with torch.distributions.Normal and the tanh log-prob correction, entropy
-- autotuning with log_alpha and target_entropy, the q-function loss with the min over two target
-- critics, the actor and alpha losses, the polyak update) and cleanrl/td3_continuous_action.py
-- (QNetwork, the tanh Actor, target policy smoothing with clipped noise clamped to the action
-- bounds, the delayed actor update and the target updates), ported line for line at tiny sizes
-- (obs dim 3, action dim 2, hidden 8, batch 4, action bounds [-2, 2]). The Python line stands
-- above each Lua line that differs from it. No gym: the spaces become plain numbers, and the
-- replay buffer's sample one fixed batch. Fixed noise: normal.rsample() becomes mean + std * eps
-- and torch.randn_like(data.actions) becomes eps, with eps given (formulas over the index), so
-- the values equal PyTorch 1.13's for the same weights (also formulas over each parameter's
-- index; /tmp/p188/ref.py printed the numbers below).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

local OBS, ACT, H, B = 3, 2, 8, 4
local LOW, HIGH = -2.0, 2.0

-- the weights and data: 0.3 sin(0.7 i + seed) over the 0-based flat index i
local function formula(shape, seed)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    local v = {}
    for i = 0, n - 1 do v[i + 1] = 0.3 * math.sin(0.7 * i + seed) end
    return tide.tensor(v):view(unpack(shape))
end
local function fill(m, seed)
    tide.no_grad(function()
        for k, p in ipairs(m:parameters()) do
            p:copy_(formula(p:size(), seed + 1.3 * k))
        end
    end)
end
-- one number a parameter: sum_i p_i cos(0.5 i), read in float64 as the reference does
local function proj(m)
    local out = {}
    for _, p in ipairs(m:parameters()) do
        local f = p:detach():flatten():double()
        local w = (tide.arange(f:numel()):double() * 0.5):cos()
        out[#out + 1] = (f * w):sum():item()
    end
    return out
end
local function flat(t)
    local out = {}
    local f = t:detach():flatten()
    for i = 1, f:numel() do out[i] = f[i]:item() end
    return out
end

---------------------------------------------------------------------------------------------
-- 1. cleanrl/sac_continuous_action.py
---------------------------------------------------------------------------------------------
-- class SoftQNetwork(nn.Module):
local SoftQNetwork = nn.Module:extend("SoftQNetwork")
-- def __init__(self, env):
function SoftQNetwork:init()
    -- self.fc1 = nn.Linear(
    --     np.array(env.single_observation_space.shape).prod()
    --     + np.prod(env.single_action_space.shape), 256)
    self.fc1 = nn.Linear(OBS + ACT, H)
    -- self.fc2 = nn.Linear(256, 256)
    self.fc2 = nn.Linear(H, H)
    -- self.fc3 = nn.Linear(256, 1)
    self.fc3 = nn.Linear(H, 1)
end
function SoftQNetwork:forward(x, a)
    -- x = torch.cat([x, a], 1)
    x = tide.cat({ x, a }, 2)
    -- x = F.relu(self.fc1(x))
    x = F.relu(self.fc1:forward(x))
    x = F.relu(self.fc2:forward(x))
    x = self.fc3:forward(x)
    return x
end

local LOG_STD_MAX = 2
local LOG_STD_MIN = -5

-- class Actor(nn.Module):
local Actor = nn.Module:extend("Actor")
function Actor:init()
    -- self.fc1 = nn.Linear(np.array(env.single_observation_space.shape).prod(), 256)
    self.fc1 = nn.Linear(OBS, H)
    self.fc2 = nn.Linear(H, H)
    -- self.fc_mean = nn.Linear(256, np.prod(env.single_action_space.shape))
    self.fc_mean = nn.Linear(H, ACT)
    self.fc_logstd = nn.Linear(H, ACT)
    -- action rescaling
    -- self.register_buffer("action_scale", torch.tensor(
    --     (env.single_action_space.high - env.single_action_space.low) / 2.0,
    --     dtype=torch.float32))
    self:register_buffer("action_scale",
        tide.tensor({ (HIGH - LOW) / 2.0, (HIGH - LOW) / 2.0 }, { dtype = "float32" }))
    self:register_buffer("action_bias",
        tide.tensor({ (HIGH + LOW) / 2.0, (HIGH + LOW) / 2.0 }, { dtype = "float32" }))
end
function Actor:forward(x)
    x = F.relu(self.fc1:forward(x))
    x = F.relu(self.fc2:forward(x))
    local mean = self.fc_mean:forward(x)
    local log_std = self.fc_logstd:forward(x)
    log_std = tide.tanh(log_std)
    log_std = LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (log_std + 1)
    return mean, log_std
end
-- def get_action(self, x):   (eps: the fixed N(0, 1) draw rsample would take)
function Actor:get_action(x, eps)
    -- mean, log_std = self(x)
    local mean, log_std = self(x)
    local std = log_std:exp()
    -- normal = torch.distributions.Normal(mean, std)
    local normal = tide.distributions.Normal(mean, std)
    -- x_t = normal.rsample()  # for reparameterization trick (mean + std * N(0,1))
    local x_t = mean + std * eps
    local y_t = tide.tanh(x_t)
    local action = y_t * self.action_scale + self.action_bias
    local log_prob = normal:log_prob(x_t)
    -- Enforcing Action Bound
    -- log_prob -= torch.log(self.action_scale * (1 - y_t.pow(2)) + 1e-6)
    log_prob = log_prob - tide.log(self.action_scale * (1 - y_t:pow(2)) + 1e-6)
    -- log_prob = log_prob.sum(1, keepdim=True)
    log_prob = log_prob:sum(2, true)
    mean = tide.tanh(mean) * self.action_scale + self.action_bias
    return action, log_prob, mean
end

-- the replay buffer's sample: one fixed batch
local function data()
    return {
        observations = formula({ B, OBS }, 0.1) * 3,
        next_observations = formula({ B, OBS }, 0.9) * 3,
        actions = formula({ B, ACT }, 2.0) * 5,
        rewards = formula({ B }, 3.0) * 3,
        dones = tide.tensor({ 0, 0, 1, 0 }),
    }
end
local function eps(seed) return formula({ B, ACT }, seed) * 4 end

local gamma, tau, policy_frequency = 0.99, 0.005, 2

describe("ported cleanrl sac_continuous_action.py", function()
    it("get_action squashes, rescales and corrects the log-prob as PyTorch", function()
        local actor = Actor()
        fill(actor, 0.0)
        local action, log_prob, mean = actor:get_action(data().observations, eps(5.0))
        assert.are.same({ B, ACT }, action:size())
        assert.are.same({ B, 1 }, log_prob:size())
        assert_close_list({ 0.724018574, 0.821038306, 0.904023588, 0.965744257, 0.918161154,
            0.934985459, 0.842314065, 0.829685152 }, flat(action), 1e-5, "action")
        assert_close_list({ 2.40686965, 3.16098595, 2.28711319, 3.16291332 }, flat(log_prob),
            1e-5, "log_prob")
        assert_close_list({ 0.820419669, 0.866418242, 0.893971384, 0.909167111, 0.823413134,
            0.871886611, 0.820550382, 0.867229462 }, flat(mean), 1e-5, "mean")
        -- the buffers are state, not parameters
        assert.are.equal(8, #actor:parameters())
        assert.is_not_nil(actor:state_dict()["action_scale"])
    end)

    it("two training steps: q, delayed actor, alpha losses, Adam steps, polyak", function()
        local q_lr, policy_lr = 1e-3, 3e-4
        local actor = Actor()
        local qf1, qf2 = SoftQNetwork(), SoftQNetwork()
        fill(actor, 0.0); fill(qf1, 1.0); fill(qf2, 2.0)
        local qf1_target, qf2_target = SoftQNetwork(), SoftQNetwork()
        qf1_target:load_state_dict(qf1:state_dict())
        qf2_target:load_state_dict(qf2:state_dict())
        -- q_optimizer = optim.Adam(list(qf1.parameters()) + list(qf2.parameters()), lr=args.q_lr)
        local qparams = qf1:parameters()
        for _, p in ipairs(qf2:parameters()) do qparams[#qparams + 1] = p end
        local q_optimizer = optim.Adam(qparams, { lr = q_lr })
        local actor_optimizer = optim.Adam(actor:parameters(), { lr = policy_lr })

        -- Automatic entropy tuning
        -- target_entropy = -torch.prod(torch.Tensor(envs.single_action_space.shape)
        --     .to(device)).item()
        local target_entropy = -tide.prod(tide.Tensor({ ACT })):item()
        -- log_alpha = torch.zeros(1, requires_grad=True, device=device)
        local log_alpha = tide.zeros(1, { requires_grad = true })
        local alpha = log_alpha:exp():item()
        -- a_optimizer = optim.Adam([log_alpha], lr=args.q_lr)
        local a_optimizer = optim.Adam({ log_alpha }, { lr = q_lr })

        local d = data()
        local qls, als, alls, alphas = {}, {}, {}, {}
        for global_step = 1, 2 do
            -- with torch.no_grad():
            local next_q_value = tide.no_grad(function()
                -- next_state_actions, next_state_log_pi, _ =
                --     actor.get_action(data.next_observations)
                local next_state_actions, next_state_log_pi =
                    actor:get_action(d.next_observations, eps(6.0 + global_step))
                local qf1_next_target = qf1_target(d.next_observations, next_state_actions)
                local qf2_next_target = qf2_target(d.next_observations, next_state_actions)
                -- min_qf_next_target = torch.min(qf1_next_target, qf2_next_target)
                --     - alpha * next_state_log_pi
                local min_qf_next_target = tide.min(qf1_next_target, qf2_next_target)
                    - alpha * next_state_log_pi
                -- next_q_value = data.rewards.flatten() + (1 - data.dones.flatten())
                --     * args.gamma * (min_qf_next_target).view(-1)
                return d.rewards:flatten() + (1 - d.dones:flatten())
                    * gamma * min_qf_next_target:view(-1)
            end)
            assert.is_false(next_q_value.requires_grad)

            -- qf1_a_values = qf1(data.observations, data.actions).view(-1)
            local qf1_a_values = qf1(d.observations, d.actions):view(-1)
            local qf2_a_values = qf2(d.observations, d.actions):view(-1)
            local qf1_loss = F.mse_loss(qf1_a_values, next_q_value)
            local qf2_loss = F.mse_loss(qf2_a_values, next_q_value)
            local qf_loss = qf1_loss + qf2_loss
            qls[#qls + 1] = qf_loss:item()

            -- optimize the model
            q_optimizer:zero_grad()
            qf_loss:backward()
            q_optimizer:step()

            -- if global_step % args.policy_frequency == 0:  # TD 3 Delayed update support
            if global_step % policy_frequency == 0 then
                -- for _ in range(args.policy_frequency):
                for j = 0, policy_frequency - 1 do
                    -- pi, log_pi, _ = actor.get_action(data.observations)
                    local pi, log_pi = actor:get_action(d.observations, eps(8.0 + j))
                    local qf1_pi = qf1(d.observations, pi)
                    local qf2_pi = qf2(d.observations, pi)
                    local min_qf_pi = tide.min(qf1_pi, qf2_pi)
                    -- actor_loss = ((alpha * log_pi) - min_qf_pi).mean()
                    local actor_loss = ((alpha * log_pi) - min_qf_pi):mean()
                    als[#als + 1] = actor_loss:item()

                    actor_optimizer:zero_grad()
                    actor_loss:backward()
                    actor_optimizer:step()

                    -- with torch.no_grad():
                    --     _, log_pi, _ = actor.get_action(data.observations)
                    log_pi = tide.no_grad(function()
                        local _, lp = actor:get_action(d.observations, eps(10.0 + j))
                        return lp
                    end)
                    -- alpha_loss = (-log_alpha.exp() * (log_pi + target_entropy)).mean()
                    local alpha_loss = (-log_alpha:exp() * (log_pi + target_entropy)):mean()
                    alls[#alls + 1] = alpha_loss:item()

                    a_optimizer:zero_grad()
                    alpha_loss:backward()
                    a_optimizer:step()
                    alpha = log_alpha:exp():item()
                    alphas[#alphas + 1] = alpha
                end
            end

            -- update the target networks
            -- for param, target_param in zip(qf1.parameters(), qf1_target.parameters()):
            --     target_param.data.copy_(args.tau * param.data
            --         + (1 - args.tau) * target_param.data)
            for _, pair in ipairs({ { qf1, qf1_target }, { qf2, qf2_target } }) do
                local tps = pair[2]:parameters()
                for i, param in ipairs(pair[1]:parameters()) do
                    tps[i].data:copy_(tau * param.data + (1 - tau) * tps[i].data)
                end
            end
        end

        assert_close_list({ 15.4771414, 19.4968281 }, qls, 1e-5, "qf_loss")
        assert_close_list({ 2.85045218, 2.85486412 }, als, 1e-5, "actor_loss")
        assert_close_list({ -0.585597217, -0.689303339 }, alls, 1e-5, "alpha_loss")
        assert_close_list({ 1.00100052, 1.00200295 }, alphas, 1e-6, "alpha")
        assert_close_list({ 0.00200093444 }, { log_alpha:item() }, 1e-6, "log_alpha")
        assert.is_true(qls[2] ~= qls[1])
        assert_close_list({ -0.0415400981, -1.24447969, -0.327645048, 0.837001874, 1.21144809,
            0.173473835 }, proj(qf1), 1e-5, "qf1")
        assert_close_list({ -1.12825739, -1.06152223, -0.119669959, 1.31744114, 0.199998749,
            -0.1119451 }, proj(qf2), 1e-5, "qf2")
        assert_close_list({ -0.308159287, -0.302629765, -0.252142057, -0.409694605, 1.47452515,
            0.508657977, -1.35253563, -0.509061934 }, proj(actor), 1e-5, "actor")
        assert_close_list({ -0.0348342478, -1.25166704, -0.335648468, 0.842490708, 1.21556446,
            0.175460175 }, proj(qf1_target), 1e-5, "qf1_target")
        assert_close_list({ -1.14293827, -1.05190497, -0.110523824, 1.31995701, 0.204942099,
            -0.109958723 }, proj(qf2_target), 1e-5, "qf2_target")
        for _, v in ipairs(qls) do assert_finite(v, "qf_loss") end
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. cleanrl/td3_continuous_action.py
---------------------------------------------------------------------------------------------
-- class QNetwork(nn.Module): the same as SoftQNetwork above
local QNetwork = SoftQNetwork

-- class Actor(nn.Module):
local TD3Actor = nn.Module:extend("TD3Actor")
function TD3Actor:init()
    self.fc1 = nn.Linear(OBS, H)
    self.fc2 = nn.Linear(H, H)
    -- self.fc_mu = nn.Linear(256, np.prod(env.single_action_space.shape))
    self.fc_mu = nn.Linear(H, ACT)
    self:register_buffer("action_scale",
        tide.tensor({ (HIGH - LOW) / 2.0, (HIGH - LOW) / 2.0 }, { dtype = "float32" }))
    self:register_buffer("action_bias",
        tide.tensor({ (HIGH + LOW) / 2.0, (HIGH + LOW) / 2.0 }, { dtype = "float32" }))
end
function TD3Actor:forward(x)
    x = F.relu(self.fc1:forward(x))
    x = F.relu(self.fc2:forward(x))
    -- x = torch.tanh(self.fc_mu(x))
    x = tide.tanh(self.fc_mu:forward(x))
    return x * self.action_scale + self.action_bias
end

describe("ported cleanrl td3_continuous_action.py", function()
    it("target policy smoothing, delayed actor update and polyak targets as PyTorch", function()
        local lr, policy_noise, noise_clip = 3e-4, 0.2, 0.5
        local actor = TD3Actor()
        local qf1, qf2 = QNetwork(), QNetwork()
        fill(actor, 3.0); fill(qf1, 1.0); fill(qf2, 2.0)
        local qf1_target, qf2_target = QNetwork(), QNetwork()
        local target_actor = TD3Actor()
        target_actor:load_state_dict(actor:state_dict())
        qf1_target:load_state_dict(qf1:state_dict())
        qf2_target:load_state_dict(qf2:state_dict())
        local qparams = qf1:parameters()
        for _, p in ipairs(qf2:parameters()) do qparams[#qparams + 1] = p end
        local q_optimizer = optim.Adam(qparams, { lr = lr })
        local actor_optimizer = optim.Adam(actor:parameters(), { lr = lr })

        local d = data()
        local qls, als, first_actions = {}, {}, nil
        for global_step = 1, 2 do
            local next_q_value = tide.no_grad(function()
                -- clipped_noise = (torch.randn_like(data.actions, device=device)
                --     * args.policy_noise).clamp(-args.noise_clip, args.noise_clip)
                --     * target_actor.action_scale
                local clipped_noise = (eps(12.0 + global_step) * policy_noise)
                    :clamp(-noise_clip, noise_clip) * target_actor.action_scale
                -- next_state_actions = (target_actor(data.next_observations) + clipped_noise)
                --     .clamp(envs.single_action_space.low[0], envs.single_action_space.high[0])
                local next_state_actions = (target_actor(d.next_observations) + clipped_noise)
                    :clamp(LOW, HIGH)
                first_actions = first_actions or flat(next_state_actions)
                local min_qf_next_target = tide.min(qf1_target(d.next_observations,
                    next_state_actions), qf2_target(d.next_observations, next_state_actions))
                return d.rewards:flatten() + (1 - d.dones:flatten())
                    * gamma * min_qf_next_target:view(-1)
            end)

            local qf1_a_values = qf1(d.observations, d.actions):view(-1)
            local qf2_a_values = qf2(d.observations, d.actions):view(-1)
            local qf_loss = F.mse_loss(qf1_a_values, next_q_value)
                + F.mse_loss(qf2_a_values, next_q_value)
            qls[#qls + 1] = qf_loss:item()
            q_optimizer:zero_grad()
            qf_loss:backward()
            q_optimizer:step()

            if global_step % policy_frequency == 0 then
                -- actor_loss = -qf1(data.observations, actor(data.observations)).mean()
                local actor_loss = -qf1(d.observations, actor(d.observations)):mean()
                als[#als + 1] = actor_loss:item()
                actor_optimizer:zero_grad()
                actor_loss:backward()
                actor_optimizer:step()

                -- update the target network
                for _, pair in ipairs({ { actor, target_actor }, { qf1, qf1_target },
                    { qf2, qf2_target } }) do
                    local tps = pair[2]:parameters()
                    for i, param in ipairs(pair[1]:parameters()) do
                        tps[i].data:copy_(tau * param.data + (1 - tau) * tps[i].data)
                    end
                end
            end
        end

        assert_close_list({ -0.595770061, -0.0502118766, -0.332540363, -0.209286362,
            -0.804019213, -0.825764775, -1.27675068, -0.875832796 }, first_actions, 1e-5,
            "next_state_actions")
        assert_close_list({ 1.29758692, 1.29090929 }, qls, 1e-5, "qf_loss")
        assert_close_list({ -0.318705738 }, als, 1e-5, "actor_loss")
        assert_close_list({ -0.0419133217, -1.24955078, -0.333292314, 0.840874341, 1.21435262,
            0.174875185 }, proj(qf1), 1e-5, "qf1")
        assert_close_list({ 0.140886374, 0.115273274, 0.216144825, 0.583433615, -1.48561281,
            -0.524202062 }, proj(actor), 1e-5, "actor")
        assert_close_list({ 0.141397694, 0.11510689, 0.216349765, 0.583837929, -1.48598511,
            -0.524762521 }, proj(target_actor), 1e-5, "target_actor")
        assert_close_list({ -0.0348192151, -1.2517104, -0.335696723, 0.842523813, 1.21558929,
            0.175472155 }, proj(qf1_target), 1e-5, "qf1_target")
        assert_close_list({ -1.14303823, -1.05184705, -0.110468666, 1.31997214, 0.204971917,
            -0.109946743 }, proj(qf2_target), 1e-5, "qf2_target")
    end)
end)
