-- ported_scripts49_spec.lua — reinforcement learning scripts ported line for line: vwxyzjn/cleanrl's
-- ppo.py, dqn.py, sac_continuous_action.py and td3_continuous_action.py, sfujim/TD3's TD3.py and
-- openai/spinningup's spinup/algos/pytorch/ppo/core.py. The gym environments are replaced by tiny
-- deterministic fake environments written in Lua below (a 4-d observation, a discrete or box
-- action, a reward and terminated/truncated flags), the replay buffers by Lua tables, and the
-- networks shrunk; each runs a few hundred environment steps at most. The Python line stands
-- above each Lua line that differs from it; dims and class indices are 1-based (a discrete
-- action is 1 or 2 where gym's is 0 or 1).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite

-- Python's zip(a, b) over two lists
local function zip(a, b)
    local out = {}
    for i = 1, math.min(#a, #b) do
        out[i] = { a[i], b[i] }
    end
    return out
end

---------------------------------------------------------------------------------------------
-- the fake environments (deterministic, in place of gym)
---------------------------------------------------------------------------------------------
-- gym.spaces.Box / gym.spaces.Discrete, as far as the scripts read them (a Box's low and high
-- are tensors, as gym's are NumPy arrays)
local Box = ported.class("Box")
function Box:__init__(low, high, shape)
    self.shape = shape
    self.low, self.high = tide.full(shape, low), tide.full(shape, high)
end
function Box:sample()
    return (self.low + (self.high - self.low) * tide.rand(self.shape)):tolist()
end
local Discrete = ported.class("Discrete")
function Discrete:__init__(n)
    self.n, self.shape = n, {}
end
function Discrete:sample()
    return tide.randint(1, self.n + 1, { 1 }):item()
end

-- a vector of num_envs "point" environments: the observation is (x, v, t/8, 1); a discrete action
-- 2 moves right and 1 left, a box action a in [-1, 1] moves by a; the reward is 1 - |x| (stay near
-- the origin); an episode terminates when |x| > 2 and is truncated after 8 steps
local FakeVecEnv = ported.class("FakeVecEnv")
function FakeVecEnv:__init__(num_envs, continuous)
    self.num_envs = num_envs
    self.continuous = continuous
    self.single_observation_space = Box(-10, 10, { 4 })
    self.single_action_space = continuous and Box(-1, 1, { 1 }) or Discrete(2)
end
function FakeVecEnv:_obs(i)
    return { self.x[i], self.v[i], self.t[i] / 8, 1 }
end
-- envs.reset(seed=...) -> obs (a num_envs x 4 list), infos
function FakeVecEnv:reset(opts)
    self.x, self.v, self.t = {}, {}, {}
    local obs = {}
    for i = 1, self.num_envs do
        self.x[i], self.v[i], self.t[i] = 0.5 * i - 0.75 + 0.01 * ((opts and opts.seed) or 0), 0, 0
        obs[i] = self:_obs(i)
    end
    return obs, {}
end
-- envs.step(actions) -> next_obs, rewards, terminations, truncations, infos (lists; actions a
-- tensor or a list)
function FakeVecEnv:step(actions)
    if tide.is_tensor(actions) then
        actions = actions:tolist()
    end
    local obs, rewards, terminations, truncations = {}, {}, {}, {}
    local final_observation = {}
    for i = 1, self.num_envs do
        local a = actions[i]
        if type(a) == "table" then
            a = a[1]
        end
        local push = self.continuous and a or (a == 2 and 0.3 or -0.3)
        self.v[i] = 0.5 * self.v[i] + push
        self.x[i] = self.x[i] + self.v[i]
        self.t[i] = self.t[i] + 1
        rewards[i] = 1 - math.abs(self.x[i])
        terminations[i] = math.abs(self.x[i]) > 2
        truncations[i] = not terminations[i] and self.t[i] >= 8
        obs[i] = self:_obs(i)
        if terminations[i] or truncations[i] then -- autoreset, as gym's vector envs
            final_observation[i] = obs[i]
            self.x[i], self.v[i], self.t[i] = 0.1 * i, 0, 0
            obs[i] = self:_obs(i)
        end
    end
    return obs, rewards, terminations, truncations, { final_observation = final_observation }
end

-- np.logical_or over two lists of booleans, as 0/1 numbers (torch.Tensor(next_done) reads them)
local function logical_or(a, b)
    local out = {}
    for i = 1, #a do
        out[i] = (a[i] or b[i]) and 1 or 0
    end
    return out
end

-- np.array(shape).prod() and np.prod(shape)
local function prod(shape)
    local n = 1
    for _, d in ipairs(shape) do
        n = n * d
    end
    return n
end

-- stable_baselines3's ReplayBuffer as Lua lists: add(obs, next_obs, actions, rewards, dones)
-- and sample(n) -> {observations, next_observations, actions, rewards, dones} as tensors
local ReplayBuffer = ported.class("ReplayBuffer")
function ReplayBuffer:__init__(buffer_size, observation_space, action_space, device, opts)
    self.buffer_size, self.device = buffer_size, device
    self.discrete = action_space.n ~= nil
    self.items, self.pos = {}, 0
end
function ReplayBuffer:add(obs, next_obs, actions, rewards, dones, infos)
    for i = 1, #obs do
        local a = actions[i]
        if type(a) ~= "table" then
            a = { a }
        end
        self.pos = self.pos % self.buffer_size + 1
        self.items[self.pos] = { obs[i], next_obs[i], a, rewards[i], dones[i] and 1 or 0 }
    end
end
function ReplayBuffer:sample(batch_size)
    local inds = tide.randint(1, #self.items + 1, { batch_size }):tolist()
    local cols = { {}, {}, {}, {}, {} }
    for j, ind in ipairs(inds) do
        for c = 1, 5 do
            cols[c][j] = self.items[ind][c]
        end
    end
    local f32 = { dtype = tide.float32 }
    return {
        observations = tide.tensor(cols[1], f32),
        next_observations = tide.tensor(cols[2], f32),
        actions = self.discrete and tide.tensor(cols[3], { dtype = tide.int64 }) or tide.tensor(cols[3], f32),
        rewards = tide.tensor(cols[4], f32):view(-1, 1),
        dones = tide.tensor(cols[5], f32):view(-1, 1),
    }
end

---------------------------------------------------------------------------------------------
-- 1. cleanrl/ppo.py
---------------------------------------------------------------------------------------------
describe("cleanrl ppo.py", function()
    -- def layer_init(layer, std=np.sqrt(2), bias_const=0.0):
    local function layer_init(layer, std, bias_const)
        std, bias_const = std or math.sqrt(2), bias_const or 0.0
        -- torch.nn.init.orthogonal_(layer.weight, std)
        tide.nn.init.orthogonal_(layer.weight, std)
        -- torch.nn.init.constant_(layer.bias, bias_const)
        tide.nn.init.constant_(layer.bias, bias_const)
        return layer
    end

    -- class Agent(nn.Module):
    local Agent = nn.Module:extend("Agent")
    function Agent:init(envs)
        self.critic = nn.Sequential(
            -- layer_init(nn.Linear(np.array(envs.single_observation_space.shape).prod(), 64)),
            layer_init(nn.Linear(prod(envs.single_observation_space.shape), 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, 64)),
            nn.Tanh(),
            -- layer_init(nn.Linear(64, 1), std=1.0),
            layer_init(nn.Linear(64, 1), 1.0)
        )
        self.actor = nn.Sequential(
            layer_init(nn.Linear(prod(envs.single_observation_space.shape), 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, envs.single_action_space.n), 0.01)
        )
    end

    function Agent:get_value(x)
        return self.critic(x)
    end

    function Agent:get_action_and_value(x, action)
        local logits = self.actor(x)
        -- probs = Categorical(logits=logits)
        local probs = tide.distributions.Categorical({ logits = logits })
        if action == nil then
            action = probs:sample()
        end
        return action, probs:log_prob(action), probs:entropy(), self.critic(x)
    end

    it("layer_init: orthogonal_(weight, std) and constant_(bias, 0)", function()
        tide.manual_seed(1)
        local layer = layer_init(nn.Linear(4, 64))
        -- the columns of a 64x4 orthogonal matrix with gain sqrt(2): W^T W = 2 I
        local wtw = layer.weight:t():mm(layer.weight)
        assert.is_true(tide.allclose(wtw, 2 * tide.eye(4), { atol = 1e-4 }))
        assert.are.equal(0, layer.bias:abs():sum():item())
    end)

    it("rollout, GAE, clipped objective, value clipping, approx_kl, clipfracs, minibatches", function()
        local args = {
            seed = 1, num_envs = 2, num_steps = 16, learning_rate = 2.5e-3, anneal_lr = true,
            gamma = 0.99, gae_lambda = 0.95, num_minibatches = 4, update_epochs = 4, norm_adv = true,
            clip_coef = 0.2, clip_vloss = true, ent_coef = 0.01, vf_coef = 0.5, max_grad_norm = 0.5,
            target_kl = nil, total_timesteps = 32 * 4,
        }
        -- args.batch_size = int(args.num_envs * args.num_steps)
        args.batch_size = args.num_envs * args.num_steps
        -- args.minibatch_size = int(args.batch_size // args.num_minibatches)
        args.minibatch_size = math.floor(args.batch_size / args.num_minibatches)
        -- args.num_iterations = args.total_timesteps // args.batch_size
        args.num_iterations = math.floor(args.total_timesteps / args.batch_size)

        tide.manual_seed(args.seed)
        local device = tide.device("cpu")
        -- envs = gym.vector.SyncVectorEnv([...]) (the fake env above)
        local envs = FakeVecEnv(args.num_envs, false)
        -- agent = Agent(envs).to(device)
        local agent = Agent(envs):to(device)
        -- optimizer = optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
        local optimizer = optim.Adam(agent:parameters(), { lr = args.learning_rate, eps = 1e-5 })

        -- obs = torch.zeros((args.num_steps, args.num_envs) + envs.single_observation_space.shape).to(device)
        local obs = tide.zeros(tide.Size({ args.num_steps, args.num_envs }) + envs.single_observation_space.shape):to(device)
        local actions = tide.zeros(tide.Size({ args.num_steps, args.num_envs }) + envs.single_action_space.shape):to(device)
        -- logprobs = torch.zeros((args.num_steps, args.num_envs)).to(device)
        local logprobs = tide.zeros({ args.num_steps, args.num_envs }):to(device)
        local rewards = tide.zeros({ args.num_steps, args.num_envs }):to(device)
        local dones = tide.zeros({ args.num_steps, args.num_envs }):to(device)
        local values = tide.zeros({ args.num_steps, args.num_envs }):to(device)

        local global_step = 0
        -- next_obs, _ = envs.reset(seed=args.seed)
        local next_obs = envs:reset({ seed = args.seed })
        -- next_obs = torch.Tensor(next_obs).to(device)
        next_obs = tide.Tensor(next_obs):to(device)
        local next_done = tide.zeros(args.num_envs):to(device)
        local mean_rewards, v_losses, approx_kl, clipfracs = {}, {}, nil, nil

        for iteration = 1, args.num_iterations do
            if args.anneal_lr then
                local frac = 1.0 - (iteration - 1.0) / args.num_iterations
                local lrnow = frac * args.learning_rate
                -- optimizer.param_groups[0]["lr"] = lrnow
                optimizer.param_groups[1]["lr"] = lrnow
            end

            -- for step in range(0, args.num_steps):
            for step = 1, args.num_steps do
                global_step = global_step + args.num_envs
                obs[step] = next_obs
                dones[step] = next_done

                local action, logprob
                -- with torch.no_grad():
                tide.no_grad(function()
                    local value
                    action, logprob, _, value = agent:get_action_and_value(next_obs)
                    values[step] = value:flatten()
                end)
                actions[step] = action
                logprobs[step] = logprob

                -- next_obs, reward, terminations, truncations, infos = envs.step(action.cpu().numpy())
                local reward, terminations, truncations
                next_obs, reward, terminations, truncations = envs:step(action:cpu())
                -- next_done = np.logical_or(terminations, truncations)
                next_done = logical_or(terminations, truncations)
                -- rewards[step] = torch.tensor(reward).to(device).view(-1)   (float32 named: Lua 5.1's
                -- whole numbers would read as int64)
                rewards[step] = tide.tensor(reward, { dtype = tide.float32 }):to(device):view(-1)
                -- next_obs, next_done = torch.Tensor(next_obs).to(device), torch.Tensor(next_done).to(device)
                next_obs, next_done = tide.Tensor(next_obs):to(device), tide.Tensor(next_done):to(device)
            end
            mean_rewards[#mean_rewards + 1] = rewards:mean():item()

            -- bootstrap value if not done
            local advantages, returns
            tide.no_grad(function()
                -- next_value = agent.get_value(next_obs).reshape(1, -1)
                local next_value = agent:get_value(next_obs):reshape(1, -1)
                advantages = tide.zeros_like(rewards):to(device)
                local lastgaelam = 0
                -- for t in reversed(range(args.num_steps)):
                for t = args.num_steps, 1, -1 do
                    local nextnonterminal, nextvalues
                    if t == args.num_steps then
                        nextnonterminal = 1.0 - next_done
                        nextvalues = next_value
                    else
                        nextnonterminal = 1.0 - dones[t + 1]
                        nextvalues = values[t + 1]
                    end
                    local delta = rewards[t] + args.gamma * nextvalues * nextnonterminal - values[t]
                    -- advantages[t] = lastgaelam = delta + args.gamma * args.gae_lambda * nextnonterminal * lastgaelam
                    lastgaelam = delta + args.gamma * args.gae_lambda * nextnonterminal * lastgaelam
                    -- (lastgaelam is [1, num_envs] from next_value: setindex drops its leading
                    -- size-1 dims, as PyTorch's setitem)
                    advantages[t] = lastgaelam
                end
                returns = advantages + values
            end)

            -- flatten the batch
            -- b_obs = obs.reshape((-1,) + envs.single_observation_space.shape)
            local b_obs = obs:reshape(tide.Size({ -1 }) + envs.single_observation_space.shape)
            local b_logprobs = logprobs:reshape(-1)
            local b_actions = actions:reshape(tide.Size({ -1 }) + envs.single_action_space.shape)
            local b_advantages = advantages:reshape(-1)
            local b_returns = returns:reshape(-1)
            local b_values = values:reshape(-1)

            -- b_inds = np.arange(args.batch_size)
            local b_inds
            clipfracs = {}
            for epoch = 1, args.update_epochs do
                -- np.random.shuffle(b_inds)
                b_inds = tide.randperm(args.batch_size)
                -- for start in range(0, args.batch_size, args.minibatch_size):
                for start = 1, args.batch_size, args.minibatch_size do
                    local end_ = start + args.minibatch_size - 1
                    -- mb_inds = b_inds[start:end]
                    local mb_inds = b_inds[{ { start, end_ } }]

                    -- _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[mb_inds], b_actions.long()[mb_inds])
                    local _, newlogprob, entropy, newvalue = agent:get_action_and_value(b_obs[mb_inds], b_actions:long()[mb_inds])
                    local logratio = newlogprob - b_logprobs[mb_inds]
                    local ratio = logratio:exp()

                    tide.no_grad(function()
                        -- old_approx_kl = (-logratio).mean()
                        local old_approx_kl = (-logratio):mean()
                        approx_kl = ((ratio - 1) - logratio):mean()
                        -- clipfracs += [((ratio - 1.0).abs() > args.clip_coef).float().mean().item()]
                        clipfracs[#clipfracs + 1] = ((ratio - 1.0):abs():gt(args.clip_coef)):float():mean():item()
                        assert_finite(old_approx_kl, "old_approx_kl")
                    end)

                    local mb_advantages = b_advantages[mb_inds]
                    if args.norm_adv then
                        mb_advantages = (mb_advantages - mb_advantages:mean()) / (mb_advantages:std() + 1e-8)
                    end

                    -- Policy loss
                    local pg_loss1 = -mb_advantages * ratio
                    local pg_loss2 = -mb_advantages * tide.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
                    local pg_loss = tide.max(pg_loss1, pg_loss2):mean()

                    -- Value loss
                    newvalue = newvalue:view(-1)
                    local v_loss
                    if args.clip_vloss then
                        local v_loss_unclipped = (newvalue - b_returns[mb_inds]) ^ 2
                        local v_clipped = b_values[mb_inds] + tide.clamp(
                            newvalue - b_values[mb_inds],
                            -args.clip_coef,
                            args.clip_coef
                        )
                        local v_loss_clipped = (v_clipped - b_returns[mb_inds]) ^ 2
                        local v_loss_max = tide.max(v_loss_unclipped, v_loss_clipped)
                        v_loss = 0.5 * v_loss_max:mean()
                    else
                        v_loss = 0.5 * ((newvalue - b_returns[mb_inds]) ^ 2):mean()
                    end

                    local entropy_loss = entropy:mean()
                    local loss = pg_loss - args.ent_coef * entropy_loss + v_loss * args.vf_coef

                    optimizer:zero_grad()
                    loss:backward()
                    nn.utils.clip_grad_norm_(agent:parameters(), args.max_grad_norm)
                    optimizer:step()
                    assert_finite(loss, "loss")
                    v_losses[#v_losses + 1] = v_loss:item()
                end
                -- if args.target_kl is not None and approx_kl > args.target_kl:
                if args.target_kl ~= nil and approx_kl:item() > args.target_kl then
                    break
                end
            end

            -- y_pred, y_true = b_values.cpu().numpy(), b_returns.cpu().numpy()
            local y_pred, y_true = b_values:cpu(), b_returns:cpu()
            -- var_y = np.var(y_true)
            local var_y = tide.var(y_true, { unbiased = false }):item()
            -- explained_var = np.nan if var_y == 0 else 1 - np.var(y_true - y_pred) / var_y
            local explained_var = var_y == 0 and 0 / 0 or 1 - tide.var(y_true - y_pred, { unbiased = false }):item() / var_y
            assert.is_true(explained_var == explained_var)
        end
        -- on the first iteration's batch the value loss falls from the first epoch to the last
        local first, last = 0, 0
        for i = 1, 4 do
            first, last = first + v_losses[i], last + v_losses[12 + i]
        end
        assert.is_true(last < first, ("v_loss %g -> %g"):format(first, last))
        assert.are.equal(args.num_iterations * 16, #v_losses)
        for _, c in ipairs(clipfracs) do
            assert.is_true(c >= 0 and c <= 1)
        end
        assert.is_true(approx_kl:item() > -1e-6)
        assert.are.equal(args.total_timesteps, global_step)
        -- annealed to the last iteration's rate
        assert.is_true(math.abs(optimizer.param_groups[1].lr - args.learning_rate / args.num_iterations) < 1e-12)
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. cleanrl/dqn.py
---------------------------------------------------------------------------------------------
describe("cleanrl dqn.py", function()
    -- class QNetwork(nn.Module):
    local QNetwork = nn.Module:extend("QNetwork")
    function QNetwork:init(env)
        self.network = nn.Sequential(
            -- nn.Linear(np.array(env.single_observation_space.shape).prod(), 120),
            nn.Linear(prod(env.single_observation_space.shape), 120),
            nn.ReLU(),
            nn.Linear(120, 84),
            nn.ReLU(),
            nn.Linear(84, env.single_action_space.n)
        )
    end

    function QNetwork:forward(x)
        return self.network(x)
    end

    -- def linear_schedule(start_e: float, end_e: float, duration: int, t: int):
    local function linear_schedule(start_e, end_e, duration, t)
        local slope = (end_e - start_e) / duration
        return math.max(slope * t + start_e, end_e)
    end

    it("linear_schedule", function()
        assert.are.equal(1, linear_schedule(1, 0.05, 100, 0))
        assert.is_true(math.abs(linear_schedule(1, 0.05, 100, 50) - 0.525) < 1e-12)
        assert.are.equal(0.05, linear_schedule(1, 0.05, 100, 200))
    end)

    it("epsilon-greedy, replay buffer, td_target with max(dim=1), gather, soft target update", function()
        local args = {
            seed = 1, num_envs = 1, learning_rate = 2.5e-3, buffer_size = 100, gamma = 0.99,
            tau = 1.0, target_network_frequency = 20, batch_size = 16, start_e = 1, end_e = 0.05,
            exploration_fraction = 0.5, learning_starts = 20, train_frequency = 2, total_timesteps = 200,
        }
        -- random.seed(args.seed); np.random.seed(args.seed); torch.manual_seed(args.seed)
        tide.manual_seed(args.seed)
        local device = tide.device("cpu")
        local envs = FakeVecEnv(args.num_envs, false)

        -- q_network = QNetwork(envs).to(device)
        local q_network = QNetwork(envs):to(device)
        -- optimizer = optim.Adam(q_network.parameters(), lr=args.learning_rate)
        local optimizer = optim.Adam(q_network:parameters(), { lr = args.learning_rate })
        local target_network = QNetwork(envs):to(device)
        -- target_network.load_state_dict(q_network.state_dict())
        target_network:load_state_dict(q_network:state_dict())
        assert.is_true(tide.equal(target_network.network[1].weight, q_network.network[1].weight))

        -- rb = ReplayBuffer(args.buffer_size, ..., device, handle_timeout_termination=False)
        local rb = ReplayBuffer(args.buffer_size, envs.single_observation_space, envs.single_action_space,
            device, { handle_timeout_termination = false })

        -- obs, _ = envs.reset(seed=args.seed)
        local obs = envs:reset({ seed = args.seed })
        local losses, updates = {}, 0
        -- for global_step in range(args.total_timesteps):
        for global_step = 0, args.total_timesteps - 1 do
            local epsilon = linear_schedule(args.start_e, args.end_e, args.exploration_fraction * args.total_timesteps, global_step)
            local actions
            -- if random.random() < epsilon:
            if tide.rand(1):item() < epsilon then
                -- actions = np.array([envs.single_action_space.sample() for _ in range(envs.num_envs)])
                actions = {}
                for i = 1, envs.num_envs do
                    actions[i] = envs.single_action_space:sample()
                end
            else
                -- q_values = q_network(torch.Tensor(obs).to(device))
                local q_values = q_network(tide.Tensor(obs):to(device))
                -- actions = torch.argmax(q_values, dim=1).cpu().numpy()
                actions = tide.argmax(q_values, { dim = 2 }):cpu():tolist()
            end

            local next_obs, rewards, terminations, truncations, infos = envs:step(actions)

            -- real_next_obs = next_obs.copy()
            local real_next_obs = { unpack(next_obs) }
            -- for idx, trunc in enumerate(truncations):
            for idx, trunc in ipairs(truncations) do
                if trunc then
                    real_next_obs[idx] = infos["final_observation"][idx]
                end
            end
            rb:add(obs, real_next_obs, actions, rewards, terminations, infos)

            obs = next_obs

            if global_step > args.learning_starts then
                if global_step % args.train_frequency == 0 then
                    local data = rb:sample(args.batch_size)
                    local td_target
                    tide.no_grad(function()
                        -- target_max, _ = target_network(data.next_observations).max(dim=1)
                        local target_max, _ = target_network(data.next_observations):max({ dim = 2 })
                        td_target = data.rewards:flatten() + args.gamma * target_max * (1 - data.dones:flatten())
                    end)
                    -- old_val = q_network(data.observations).gather(1, data.actions).squeeze()
                    local old_val = q_network(data.observations):gather(2, data.actions):squeeze()
                    local loss = F.mse_loss(td_target, old_val)
                    losses[#losses + 1] = loss:item()

                    optimizer:zero_grad()
                    loss:backward()
                    optimizer:step()
                end

                -- update target network
                if global_step % args.target_network_frequency == 0 then
                    -- for target_network_param, q_network_param in zip(target_network.parameters(), q_network.parameters()):
                    for _, pair in ipairs(zip(target_network:parameters(), q_network:parameters())) do
                        local target_network_param, q_network_param = pair[1], pair[2]
                        target_network_param.data:copy_(
                            args.tau * q_network_param.data + (1.0 - args.tau) * target_network_param.data
                        )
                    end
                    updates = updates + 1
                end
            end
        end
        -- trained at the even steps 22..198, the target copied at 40, 60, ..., 180
        assert.are.equal(89, #losses)
        assert.are.equal(8, updates)
        for _, l in ipairs(losses) do
            assert.is_true(l == l and l < 1e6)
        end
        -- the target holds the network of step 180, which trained on after it
        assert.is_false(tide.equal(target_network.network[1].weight, q_network.network[1].weight))
    end)

    it("the soft-update form target.data.copy_(tau * p.data + (1 - tau) * target.data)", function()
        tide.manual_seed(2)
        local envs = FakeVecEnv(1, false)
        local q_network, target_network = QNetwork(envs), QNetwork(envs)
        local before = target_network.network[5].bias:clone()
        local tau = 0.25
        for _, pair in ipairs(zip(target_network:parameters(), q_network:parameters())) do
            pair[1].data:copy_(tau * pair[2].data + (1.0 - tau) * pair[1].data)
        end
        local want = tau * q_network.network[5].bias + (1 - tau) * before
        assert.is_true(tide.allclose(target_network.network[5].bias, want))
        assert.is_false(target_network.network[5].bias.requires_grad == false)
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. cleanrl/sac_continuous_action.py (hidden 256 -> 32)
---------------------------------------------------------------------------------------------
describe("cleanrl sac_continuous_action.py", function()
    local H = 32
    -- class SoftQNetwork(nn.Module):
    local SoftQNetwork = nn.Module:extend("SoftQNetwork")
    function SoftQNetwork:init(env)
        self.fc1 = nn.Linear(
            -- np.array(env.single_observation_space.shape).prod() + np.prod(env.single_action_space.shape),
            prod(env.single_observation_space.shape) + prod(env.single_action_space.shape),
            H
        )
        self.fc2 = nn.Linear(H, H)
        self.fc3 = nn.Linear(H, 1)
    end

    function SoftQNetwork:forward(x, a)
        -- x = torch.cat([x, a], 1)
        x = tide.cat({ x, a }, 2)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x
    end

    local LOG_STD_MAX = 2
    local LOG_STD_MIN = -5

    local Actor = nn.Module:extend("Actor")
    function Actor:init(env)
        self.fc1 = nn.Linear(prod(env.single_observation_space.shape), H)
        self.fc2 = nn.Linear(H, H)
        self.fc_mean = nn.Linear(H, prod(env.single_action_space.shape))
        self.fc_logstd = nn.Linear(H, prod(env.single_action_space.shape))
        -- action rescaling
        self:register_buffer(
            "action_scale",
            -- torch.tensor((env.single_action_space.high - env.single_action_space.low) / 2.0, dtype=torch.float32)
            -- (the NumPy arrays as lists: tide.tensor of a tensor warns, as torch.tensor does)
            tide.tensor(
                ((env.single_action_space.high - env.single_action_space.low) / 2.0):tolist(),
                { dtype = tide.float32 }
            )
        )
        self:register_buffer(
            "action_bias",
            tide.tensor(
                ((env.single_action_space.high + env.single_action_space.low) / 2.0):tolist(),
                { dtype = tide.float32 }
            )
        )
    end

    function Actor:forward(x)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        local mean = self.fc_mean(x)
        local log_std = self.fc_logstd(x)
        log_std = tide.tanh(log_std)
        log_std = LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (log_std + 1) -- From SpinUp / Denis Yarats
        return mean, log_std
    end

    function Actor:get_action(x)
        local mean, log_std = self(x)
        local std = log_std:exp()
        -- normal = torch.distributions.Normal(mean, std)
        local normal = tide.distributions.Normal(mean, std)
        local x_t = normal:rsample() -- for reparameterization trick (mean + std * N(0,1))
        local y_t = tide.tanh(x_t)
        local action = y_t * self.action_scale + self.action_bias
        local log_prob = normal:log_prob(x_t)
        -- Enforcing Action Bound
        -- log_prob -= torch.log(self.action_scale * (1 - y_t.pow(2)) + 1e-6)
        log_prob:sub_(tide.log(self.action_scale * (1 - y_t:pow(2)) + 1e-6))
        -- log_prob = log_prob.sum(1, keepdim=True)
        log_prob = log_prob:sum(2, { keepdim = true })
        mean = tide.tanh(mean) * self.action_scale + self.action_bias
        return action, log_prob, mean, x_t -- (x_t only for the check below)
    end

    it("Actor.get_action: tanh-squashed Normal and its log_prob correction", function()
        tide.manual_seed(3)
        local envs = FakeVecEnv(2, true)
        local actor = Actor(envs)
        local obs = tide.randn(5, 4)
        local action, log_prob, mean, x_t = actor:get_action(obs)
        assert.are.same({ 5, 1 }, { action:size()[1], action:size()[2] })
        assert.are.same({ 5, 1 }, { log_prob:size()[1], log_prob:size()[2] })
        assert.is_true(action:abs():max():item() <= 1)
        -- the Normal's density at x_t, less log(scale * (1 - tanh(x_t)^2) + 1e-6), by hand
        local m, ls = actor(obs)
        local std = ls:exp()
        local want = -((x_t - m) ^ 2) / (2 * std ^ 2) - ls - 0.5 * math.log(2 * math.pi)
            - tide.log(1 - tide.tanh(x_t) ^ 2 + 1e-6)
        assert.is_true(tide.allclose(log_prob, want:sum(2, { keepdim = true }), { atol = 1e-4 }))
        assert.is_true(tide.allclose(mean, tide.tanh(m)))
        -- the buffers are in the state dict, not parameters
        assert.is_not_nil(actor:state_dict()["action_scale"])
        assert.are.equal(8, #actor:parameters())
    end)

    it("twin soft Q, the actor update, automatic entropy tuning with log_alpha", function()
        local args = {
            seed = 1, num_envs = 1, buffer_size = 200, gamma = 0.99, tau = 0.005, batch_size = 16,
            learning_starts = 20, policy_lr = 3e-4, q_lr = 1e-3, policy_frequency = 2,
            target_network_frequency = 1, alpha = 0.2, autotune = true, total_timesteps = 60,
        }
        tide.manual_seed(args.seed)
        local device = tide.device("cpu")
        local envs = FakeVecEnv(args.num_envs, true)
        -- max_action = float(envs.single_action_space.high[0])
        local max_action = envs.single_action_space.high[1]:item()
        assert.are.equal(1, max_action)

        local actor = Actor(envs):to(device)
        local qf1 = SoftQNetwork(envs):to(device)
        local qf2 = SoftQNetwork(envs):to(device)
        local qf1_target = SoftQNetwork(envs):to(device)
        local qf2_target = SoftQNetwork(envs):to(device)
        qf1_target:load_state_dict(qf1:state_dict())
        qf2_target:load_state_dict(qf2:state_dict())
        -- q_optimizer = optim.Adam(list(qf1.parameters()) + list(qf2.parameters()), lr=args.q_lr)
        local q_optimizer = optim.Adam(tide.utils.chain(qf1:parameters(), qf2:parameters()), { lr = args.q_lr })
        -- actor_optimizer = optim.Adam(list(actor.parameters()), lr=args.policy_lr)
        local actor_optimizer = optim.Adam(actor:parameters(), { lr = args.policy_lr })

        -- Automatic entropy tuning
        local target_entropy, log_alpha, alpha, a_optimizer
        if args.autotune then
            -- target_entropy = -torch.prod(torch.Tensor(envs.single_action_space.shape).to(device)).item()
            target_entropy = -tide.prod(tide.Tensor(envs.single_action_space.shape):to(device)):item()
            -- log_alpha = torch.zeros(1, requires_grad=True, device=device)
            log_alpha = tide.zeros(1, { requires_grad = true, device = device })
            alpha = log_alpha:exp():item()
            -- a_optimizer = optim.Adam([log_alpha], lr=args.q_lr)
            a_optimizer = optim.Adam({ log_alpha }, { lr = args.q_lr })
        else
            alpha = args.alpha
        end
        assert.are.equal(-1, target_entropy)

        local rb = ReplayBuffer(args.buffer_size, envs.single_observation_space, envs.single_action_space,
            device, { n_envs = args.num_envs, handle_timeout_termination = false })

        local obs = envs:reset({ seed = args.seed })
        local qf_losses, alphas = {}, {}
        for global_step = 0, args.total_timesteps - 1 do
            local actions
            if global_step < args.learning_starts then
                actions = {}
                for i = 1, envs.num_envs do
                    actions[i] = envs.single_action_space:sample()
                end
            else
                -- actions, _, _ = actor.get_action(torch.Tensor(obs).to(device))
                actions = actor:get_action(tide.Tensor(obs):to(device))
                -- actions = actions.detach().cpu().numpy()
                actions = actions:detach():cpu():tolist()
            end

            local next_obs, rewards, terminations, truncations, infos = envs:step(actions)
            local real_next_obs = { unpack(next_obs) }
            for idx, trunc in ipairs(truncations) do
                if trunc then
                    real_next_obs[idx] = infos["final_observation"][idx]
                end
            end
            rb:add(obs, real_next_obs, actions, rewards, terminations, infos)
            obs = next_obs

            if global_step > args.learning_starts then
                local data = rb:sample(args.batch_size)
                local next_q_value
                tide.no_grad(function()
                    local next_state_actions, next_state_log_pi = actor:get_action(data.next_observations)
                    local qf1_next_target = qf1_target(data.next_observations, next_state_actions)
                    local qf2_next_target = qf2_target(data.next_observations, next_state_actions)
                    local min_qf_next_target = tide.min(qf1_next_target, qf2_next_target) - alpha * next_state_log_pi
                    next_q_value = data.rewards:flatten() + (1 - data.dones:flatten()) * args.gamma * (min_qf_next_target):view(-1)
                end)

                local qf1_a_values = qf1(data.observations, data.actions):view(-1)
                local qf2_a_values = qf2(data.observations, data.actions):view(-1)
                local qf1_loss = F.mse_loss(qf1_a_values, next_q_value)
                local qf2_loss = F.mse_loss(qf2_a_values, next_q_value)
                local qf_loss = qf1_loss + qf2_loss

                -- optimize the model
                q_optimizer:zero_grad()
                qf_loss:backward()
                q_optimizer:step()
                qf_losses[#qf_losses + 1] = qf_loss:item()

                if global_step % args.policy_frequency == 0 then -- TD 3 Delayed update support
                    -- for _ in range(args.policy_frequency):
                    for _ = 1, args.policy_frequency do
                        local pi, log_pi = actor:get_action(data.observations)
                        local qf1_pi = qf1(data.observations, pi)
                        local qf2_pi = qf2(data.observations, pi)
                        local min_qf_pi = tide.min(qf1_pi, qf2_pi)
                        local actor_loss = ((alpha * log_pi) - min_qf_pi):mean()

                        actor_optimizer:zero_grad()
                        actor_loss:backward()
                        actor_optimizer:step()
                        assert_finite(actor_loss, "actor_loss")

                        if args.autotune then
                            tide.no_grad(function()
                                _, log_pi = actor:get_action(data.observations)
                            end)
                            local alpha_loss = (-log_alpha:exp() * (log_pi + target_entropy)):mean()

                            a_optimizer:zero_grad()
                            alpha_loss:backward()
                            a_optimizer:step()
                            alpha = log_alpha:exp():item()
                            alphas[#alphas + 1] = alpha
                        end
                    end
                end

                -- update the target networks
                if global_step % args.target_network_frequency == 0 then
                    for _, pair in ipairs(zip(qf1:parameters(), qf1_target:parameters())) do
                        local param, target_param = pair[1], pair[2]
                        target_param.data:copy_(args.tau * param.data + (1 - args.tau) * target_param.data)
                    end
                    for _, pair in ipairs(zip(qf2:parameters(), qf2_target:parameters())) do
                        local param, target_param = pair[1], pair[2]
                        target_param.data:copy_(args.tau * param.data + (1 - args.tau) * target_param.data)
                    end
                end
            end
        end
        assert.are.equal(39, #qf_losses)
        for _, l in ipairs(qf_losses) do
            assert.is_true(l == l and l < 1e6)
        end
        -- alpha moved off 1 (log_alpha off 0), and is what log_alpha says
        assert.are.equal(38, #alphas)
        assert.is_true(alphas[#alphas] ~= 1)
        assert.is_true(math.abs(alphas[#alphas] - math.exp(log_alpha:item())) < 1e-6)
        -- the targets moved a little towards qf1 (tau = 0.005): not equal, but close
        assert.is_false(tide.equal(qf1_target.fc3.bias, qf1.fc3.bias))
    end)
end)

---------------------------------------------------------------------------------------------
-- 4. cleanrl/td3_continuous_action.py (hidden 256 -> 32)
---------------------------------------------------------------------------------------------
describe("cleanrl td3_continuous_action.py", function()
    local H = 32
    local QNetwork = nn.Module:extend("QNetwork")
    function QNetwork:init(env)
        self.fc1 = nn.Linear(prod(env.single_observation_space.shape) + prod(env.single_action_space.shape), H)
        self.fc2 = nn.Linear(H, H)
        self.fc3 = nn.Linear(H, 1)
    end

    function QNetwork:forward(x, a)
        x = tide.cat({ x, a }, 2)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x
    end

    local Actor = nn.Module:extend("Actor")
    function Actor:init(env)
        self.fc1 = nn.Linear(prod(env.single_observation_space.shape), H)
        self.fc2 = nn.Linear(H, H)
        self.fc_mu = nn.Linear(H, prod(env.single_action_space.shape))
        self:register_buffer("action_scale",
            tide.tensor(((env.single_action_space.high - env.single_action_space.low) / 2.0):tolist(), { dtype = tide.float32 }))
        self:register_buffer("action_bias",
            tide.tensor(((env.single_action_space.high + env.single_action_space.low) / 2.0):tolist(), { dtype = tide.float32 }))
    end

    function Actor:forward(x)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = tide.tanh(self.fc_mu(x))
        return x * self.action_scale + self.action_bias
    end

    it("exploration noise, target policy smoothing, delayed actor updates, soft updates", function()
        local args = {
            seed = 1, num_envs = 1, learning_rate = 1e-3, buffer_size = 200, gamma = 0.99, tau = 0.005,
            batch_size = 16, policy_noise = 0.2, exploration_noise = 0.1, learning_starts = 20,
            policy_frequency = 2, noise_clip = 0.5, total_timesteps = 60,
        }
        tide.manual_seed(args.seed)
        local device = tide.device("cpu")
        local envs = FakeVecEnv(args.num_envs, true)

        local actor = Actor(envs):to(device)
        local qf1 = QNetwork(envs):to(device)
        local qf2 = QNetwork(envs):to(device)
        local qf1_target = QNetwork(envs):to(device)
        local qf2_target = QNetwork(envs):to(device)
        local target_actor = Actor(envs):to(device)
        target_actor:load_state_dict(actor:state_dict())
        qf1_target:load_state_dict(qf1:state_dict())
        qf2_target:load_state_dict(qf2:state_dict())
        local q_optimizer = optim.Adam(tide.utils.chain(qf1:parameters(), qf2:parameters()), { lr = args.learning_rate })
        local actor_optimizer = optim.Adam(actor:parameters(), { lr = args.learning_rate })
        local actor_before = actor.fc_mu.weight:clone()

        local rb = ReplayBuffer(args.buffer_size, envs.single_observation_space, envs.single_action_space,
            device, { n_envs = args.num_envs, handle_timeout_termination = false })

        local obs = envs:reset({ seed = args.seed })
        local actor_updates, qf_losses = 0, {}
        for global_step = 0, args.total_timesteps - 1 do
            local actions
            if global_step < args.learning_starts then
                actions = {}
                for i = 1, envs.num_envs do
                    actions[i] = envs.single_action_space:sample()
                end
            else
                tide.no_grad(function()
                    actions = actor(tide.Tensor(obs):to(device))
                    -- actions += torch.normal(0, actor.action_scale * args.exploration_noise)
                    actions:add_(tide.normal(0, actor.action_scale * args.exploration_noise))
                    -- actions = actions.cpu().numpy().clip(envs.single_action_space.low, envs.single_action_space.high)
                    actions = actions:cpu():clip(envs.single_action_space.low, envs.single_action_space.high)
                end)
                assert.is_true(actions:abs():max():item() <= 1)
            end

            local next_obs, rewards, terminations, truncations, infos = envs:step(actions)
            local real_next_obs = { unpack(next_obs) }
            for idx, trunc in ipairs(truncations) do
                if trunc then
                    real_next_obs[idx] = infos["final_observation"][idx]
                end
            end
            if tide.is_tensor(actions) then -- rb.add reads the NumPy array as a list
                actions = actions:tolist()
            end
            rb:add(obs, real_next_obs, actions, rewards, terminations, infos)
            obs = next_obs

            if global_step > args.learning_starts then
                local data = rb:sample(args.batch_size)
                local next_q_value
                tide.no_grad(function()
                    -- clipped_noise = (torch.randn_like(data.actions, device=device) * args.policy_noise).clamp(
                    --     -args.noise_clip, args.noise_clip) * target_actor.action_scale
                    local clipped_noise = (tide.randn_like(data.actions, { device = device }) * args.policy_noise):clamp(
                        -args.noise_clip, args.noise_clip
                    ) * target_actor.action_scale

                    -- next_state_actions = (target_actor(data.next_observations) + clipped_noise).clamp(
                    --     envs.single_action_space.low[0], envs.single_action_space.high[0])
                    local next_state_actions = (target_actor(data.next_observations) + clipped_noise):clamp(
                        envs.single_action_space.low[1], envs.single_action_space.high[1]
                    )
                    assert.is_true(next_state_actions:abs():max():item() <= 1)
                    local qf1_next_target = qf1_target(data.next_observations, next_state_actions)
                    local qf2_next_target = qf2_target(data.next_observations, next_state_actions)
                    local min_qf_next_target = tide.min(qf1_next_target, qf2_next_target)
                    next_q_value = data.rewards:flatten() + (1 - data.dones:flatten()) * args.gamma * (min_qf_next_target):view(-1)
                end)

                local qf1_a_values = qf1(data.observations, data.actions):view(-1)
                local qf2_a_values = qf2(data.observations, data.actions):view(-1)
                local qf1_loss = F.mse_loss(qf1_a_values, next_q_value)
                local qf2_loss = F.mse_loss(qf2_a_values, next_q_value)
                local qf_loss = qf1_loss + qf2_loss

                q_optimizer:zero_grad()
                qf_loss:backward()
                q_optimizer:step()
                qf_losses[#qf_losses + 1] = qf_loss:item()

                if global_step % args.policy_frequency == 0 then
                    local actor_loss = -qf1(data.observations, actor(data.observations)):mean()
                    actor_optimizer:zero_grad()
                    actor_loss:backward()
                    actor_optimizer:step()
                    actor_updates = actor_updates + 1

                    -- update the target network
                    for _, pair in ipairs(zip(actor:parameters(), target_actor:parameters())) do
                        local param, target_param = pair[1], pair[2]
                        target_param.data:copy_(args.tau * param.data + (1 - args.tau) * target_param.data)
                    end
                    for _, pair in ipairs(zip(qf1:parameters(), qf1_target:parameters())) do
                        local param, target_param = pair[1], pair[2]
                        target_param.data:copy_(args.tau * param.data + (1 - args.tau) * target_param.data)
                    end
                    for _, pair in ipairs(zip(qf2:parameters(), qf2_target:parameters())) do
                        local param, target_param = pair[1], pair[2]
                        target_param.data:copy_(args.tau * param.data + (1 - args.tau) * target_param.data)
                    end
                end
            end
        end
        -- the critic trains at 21..59, the actor (delayed) at the even ones
        assert.are.equal(39, #qf_losses)
        assert.are.equal(19, actor_updates)
        for _, l in ipairs(qf_losses) do
            assert.is_true(l == l and l < 1e6)
        end
        assert.is_false(tide.equal(actor_before, actor.fc_mu.weight))
        -- the target actor is within a few percent of the way from its start to the actor
        local moved = (target_actor.fc_mu.weight - actor_before):abs():max():item()
        local gap = (actor.fc_mu.weight - actor_before):abs():max():item()
        assert.is_true(moved > 0 and moved < 0.2 * gap)
    end)
end)

---------------------------------------------------------------------------------------------
-- 5. sfujim/TD3 TD3.py (hidden 256 -> 32)
---------------------------------------------------------------------------------------------
describe("sfujim/TD3 TD3.py", function()
    local H = 32
    -- class Actor(nn.Module):
    local Actor = nn.Module:extend("Actor")
    function Actor:init(state_dim, action_dim, max_action)
        self.l1 = nn.Linear(state_dim, H)
        self.l2 = nn.Linear(H, H)
        self.l3 = nn.Linear(H, action_dim)
        self.max_action = max_action
    end

    function Actor:forward(state)
        local a = F.relu(self.l1(state))
        a = F.relu(self.l2(a))
        return self.max_action * tide.tanh(self.l3(a))
    end

    local Critic = nn.Module:extend("Critic")
    function Critic:init(state_dim, action_dim)
        -- Q1 architecture
        self.l1 = nn.Linear(state_dim + action_dim, H)
        self.l2 = nn.Linear(H, H)
        self.l3 = nn.Linear(H, 1)
        -- Q2 architecture
        self.l4 = nn.Linear(state_dim + action_dim, H)
        self.l5 = nn.Linear(H, H)
        self.l6 = nn.Linear(H, 1)
    end

    function Critic:forward(state, action)
        local sa = tide.cat({ state, action }, 2)
        local q1 = F.relu(self.l1(sa))
        q1 = F.relu(self.l2(q1))
        q1 = self.l3(q1)
        local q2 = F.relu(self.l4(sa))
        q2 = F.relu(self.l5(q2))
        q2 = self.l6(q2)
        return q1, q2
    end

    function Critic:Q1(state, action)
        local sa = tide.cat({ state, action }, 2)
        local q1 = F.relu(self.l1(sa))
        q1 = F.relu(self.l2(q1))
        q1 = self.l3(q1)
        return q1
    end

    local device = tide.device("cpu")

    -- class TD3(object):
    local TD3 = ported.class("TD3")
    function TD3:__init__(state_dim, action_dim, max_action, discount, tau, policy_noise, noise_clip, policy_freq)
        self.actor = Actor(state_dim, action_dim, max_action):to(device)
        -- self.actor_target = copy.deepcopy(self.actor)
        self.actor_target = tide.deepcopy(self.actor)
        -- self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), lr=3e-4)
        self.actor_optimizer = tide.optim.Adam(self.actor:parameters(), { lr = 3e-4 })

        self.critic = Critic(state_dim, action_dim):to(device)
        self.critic_target = tide.deepcopy(self.critic)
        self.critic_optimizer = tide.optim.Adam(self.critic:parameters(), { lr = 3e-4 })

        self.max_action = max_action
        self.discount = discount or 0.99
        self.tau = tau or 0.005
        self.policy_noise = policy_noise or 0.2
        self.noise_clip = noise_clip or 0.5
        self.policy_freq = policy_freq or 2

        self.total_it = 0
    end

    function TD3:select_action(state)
        -- state = torch.FloatTensor(state.reshape(1, -1)).to(device)
        state = tide.FloatTensor(state:reshape(1, -1)):to(device)
        -- return self.actor(state).cpu().data.numpy().flatten()
        return self.actor(state):cpu().data:flatten()
    end

    function TD3:train(replay_buffer, batch_size)
        batch_size = batch_size or 256
        self.total_it = self.total_it + 1

        -- Sample replay buffer
        local state, action, next_state, reward, not_done = replay_buffer:sample(batch_size)

        local target_Q
        tide.no_grad(function()
            -- Select action according to policy and add clipped noise
            local noise = (
                tide.randn_like(action) * self.policy_noise
            ):clamp(-self.noise_clip, self.noise_clip)

            local next_action = (
                self.actor_target(next_state) + noise
            ):clamp(-self.max_action, self.max_action)

            -- Compute the target Q value
            local target_Q1, target_Q2 = self.critic_target(next_state, next_action)
            target_Q = tide.min(target_Q1, target_Q2)
            target_Q = reward + not_done * self.discount * target_Q
        end)

        -- Get current Q estimates
        local current_Q1, current_Q2 = self.critic(state, action)

        -- Compute critic loss
        local critic_loss = F.mse_loss(current_Q1, target_Q) + F.mse_loss(current_Q2, target_Q)

        -- Optimize the critic
        self.critic_optimizer:zero_grad()
        critic_loss:backward()
        self.critic_optimizer:step()

        -- Delayed policy updates
        local actor_loss
        if self.total_it % self.policy_freq == 0 then
            -- Compute actor losse
            actor_loss = -self.critic:Q1(state, self.actor(state)):mean()

            -- Optimize the actor
            self.actor_optimizer:zero_grad()
            actor_loss:backward()
            self.actor_optimizer:step()

            -- Update the frozen target models
            for _, pair in ipairs(zip(self.critic:parameters(), self.critic_target:parameters())) do
                local param, target_param = pair[1], pair[2]
                target_param.data:copy_(self.tau * param.data + (1 - self.tau) * target_param.data)
            end
            for _, pair in ipairs(zip(self.actor:parameters(), self.actor_target:parameters())) do
                local param, target_param = pair[1], pair[2]
                target_param.data:copy_(self.tau * param.data + (1 - self.tau) * target_param.data)
            end
        end
        return critic_loss:item(), actor_loss
    end

    -- utils.ReplayBuffer: sample -> state, action, next_state, reward, not_done (fixed data here)
    local FixedBuffer = ported.class("FixedBuffer")
    function FixedBuffer:__init__(n, state_dim, action_dim)
        self.state, self.action = tide.randn(n, state_dim), tide.rand(n, action_dim) * 2 - 1
        self.next_state = tide.randn(n, state_dim)
        self.reward = -self.action:pow(2):sum(2, { keepdim = true })
        self.not_done = tide.ones(n, 1)
    end
    function FixedBuffer:sample(batch_size)
        local ind = tide.randint(1, self.state:size(1) + 1, { batch_size })
        return self.state[ind], self.action[ind], self.next_state[ind], self.reward[ind], self.not_done[ind]
    end

    it("Actor, Critic with Q1, deepcopy targets, the TD3 train step", function()
        tide.manual_seed(4)
        local state_dim, action_dim, max_action = 4, 2, 1.0
        local policy = TD3(state_dim, action_dim, max_action)
        assert.is_true(tide.equal(policy.actor_target.l3.weight, policy.actor.l3.weight))
        local replay_buffer = FixedBuffer(64, state_dim, action_dim)
        -- Q1 is forward's first output
        local s, a = replay_buffer.state[{ { 1, 5 } }], replay_buffer.action[{ { 1, 5 } }]
        local q1 = policy.critic(s, a)
        assert.is_true(tide.allclose(q1, policy.critic:Q1(s, a)))

        local losses, actor_losses = {}, 0
        for _ = 1, 40 do
            local critic_loss, actor_loss = policy:train(replay_buffer, 32)
            losses[#losses + 1] = critic_loss
            if actor_loss then
                actor_losses = actor_losses + 1
                assert_finite(actor_loss, "actor_loss")
            end
        end
        assert.are.equal(20, actor_losses)
        -- the critic learns the rewards: the last ten steps' loss is below the first ten's
        local first, last = 0, 0
        for i = 1, 10 do
            first, last = first + losses[i], last + losses[30 + i]
        end
        assert.is_true(last < first, ("critic loss %g -> %g"):format(first, last))
        -- the frozen targets moved (tau), and stay separate tensors
        assert.is_false(tide.equal(policy.actor_target.l3.weight, policy.actor.l3.weight))
        local act = policy:select_action(tide.randn(state_dim))
        assert.are.equal(action_dim, act:numel())
        assert.is_true(act:abs():max():item() <= max_action)
    end)
end)

---------------------------------------------------------------------------------------------
-- 6. openai/spinningup spinup/algos/pytorch/ppo/core.py (and ppo.py's two losses)
---------------------------------------------------------------------------------------------
describe("spinningup ppo/core.py", function()
    -- from torch.distributions.normal import Normal
    local Normal = tide.distributions.normal.Normal
    -- from torch.distributions.categorical import Categorical
    local Categorical = tide.distributions.categorical.Categorical

    -- def combined_shape(length, shape=None):
    local function combined_shape(length, shape)
        if shape == nil then
            return { length }
        end
        -- return (length, shape) if np.isscalar(shape) else (length, *shape)
        if type(shape) == "number" then
            return { length, shape }
        end
        return { length, unpack(shape) }
    end

    -- def mlp(sizes, activation, output_activation=nn.Identity):
    local function mlp(sizes, activation, output_activation)
        output_activation = output_activation or nn.Identity
        local layers = {}
        -- for j in range(len(sizes)-1):
        for j = 1, #sizes - 1 do
            -- act = activation if j < len(sizes)-2 else output_activation
            local act = j < #sizes - 1 and activation or output_activation
            -- layers += [nn.Linear(sizes[j], sizes[j+1]), act()]
            layers[#layers + 1] = nn.Linear(sizes[j], sizes[j + 1])
            layers[#layers + 1] = act()
        end
        -- return nn.Sequential(*layers)
        return nn.Sequential(unpack(layers))
    end

    -- def count_vars(module): return sum([np.prod(p.shape) for p in module.parameters()])
    local function count_vars(module)
        local n = 0
        for _, p in ipairs(module:parameters()) do
            n = n + p.shape:numel()
        end
        return n
    end

    -- scipy.signal.lfilter([1], [1, -a], x, axis=0) for a 1-d x: y[n] = x[n] + a * y[n-1]
    local function lfilter(b, a, x)
        local xs, y = x:tolist(), {}
        for n = 1, #xs do
            y[n] = b[1] * xs[n] - a[2] * (y[n - 1] or 0)
        end
        return tide.tensor(y, { dtype = x.dtype })
    end

    -- def discount_cumsum(x, discount):
    local function discount_cumsum(x, discount)
        -- return scipy.signal.lfilter([1], [1, float(-discount)], x[::-1], axis=0)[::-1]
        return tide.flip(lfilter({ 1 }, { 1, -discount }, tide.flip(x, { 1 })), { 1 })
    end

    -- class Actor(nn.Module):
    local Actor = nn.Module:extend("Actor")
    function Actor:_distribution(obs)
        error("NotImplementedError")
    end

    function Actor:_log_prob_from_distribution(pi, act)
        error("NotImplementedError")
    end

    function Actor:forward(obs, act)
        local pi = self:_distribution(obs)
        local logp_a = nil
        if act ~= nil then
            logp_a = self:_log_prob_from_distribution(pi, act)
        end
        return pi, logp_a
    end

    -- class MLPCategoricalActor(Actor):
    local MLPCategoricalActor = Actor:extend("MLPCategoricalActor")
    function MLPCategoricalActor:init(obs_dim, act_dim, hidden_sizes, activation)
        -- self.logits_net = mlp([obs_dim] + list(hidden_sizes) + [act_dim], activation)
        self.logits_net = mlp(tide.utils.chain({ obs_dim }, hidden_sizes, { act_dim }), activation)
    end

    function MLPCategoricalActor:_distribution(obs)
        local logits = self.logits_net(obs)
        -- return Categorical(logits=logits)
        return Categorical({ logits = logits })
    end

    function MLPCategoricalActor:_log_prob_from_distribution(pi, act)
        return pi:log_prob(act)
    end

    -- class MLPGaussianActor(Actor):
    local MLPGaussianActor = Actor:extend("MLPGaussianActor")
    function MLPGaussianActor:init(obs_dim, act_dim, hidden_sizes, activation)
        -- log_std = -0.5 * np.ones(act_dim, dtype=np.float32)
        local log_std = -0.5 * tide.ones(act_dim, { dtype = tide.float32 })
        -- self.log_std = torch.nn.Parameter(torch.as_tensor(log_std))
        self.log_std = tide.nn.Parameter(tide.as_tensor(log_std))
        self.mu_net = mlp(tide.utils.chain({ obs_dim }, hidden_sizes, { act_dim }), activation)
    end

    function MLPGaussianActor:_distribution(obs)
        local mu = self.mu_net(obs)
        local std = tide.exp(self.log_std)
        return Normal(mu, std)
    end

    function MLPGaussianActor:_log_prob_from_distribution(pi, act)
        -- return pi.log_prob(act).sum(axis=-1)    # Last axis sum needed for Torch Normal distribution
        return pi:log_prob(act):sum({ axis = -1 })
    end

    -- class MLPCritic(nn.Module):
    local MLPCritic = nn.Module:extend("MLPCritic")
    function MLPCritic:init(obs_dim, hidden_sizes, activation)
        self.v_net = mlp(tide.utils.chain({ obs_dim }, hidden_sizes, { 1 }), activation)
    end

    function MLPCritic:forward(obs)
        return tide.squeeze(self.v_net(obs), -1) -- Critical to ensure v has right shape.
    end

    -- class MLPActorCritic(nn.Module):
    local MLPActorCritic = nn.Module:extend("MLPActorCritic")
    -- def __init__(self, observation_space, action_space, hidden_sizes=(64,64), activation=nn.Tanh):
    function MLPActorCritic:init(observation_space, action_space, hidden_sizes, activation)
        hidden_sizes, activation = hidden_sizes or { 64, 64 }, activation or nn.Tanh
        local obs_dim = observation_space.shape[1]

        -- policy builder depends on action space
        -- if isinstance(action_space, Box):
        if getmetatable(action_space) == Box then
            self.pi = MLPGaussianActor(obs_dim, action_space.shape[1], hidden_sizes, activation)
        elseif getmetatable(action_space) == Discrete then
            self.pi = MLPCategoricalActor(obs_dim, action_space.n, hidden_sizes, activation)
        end

        -- build value function
        self.v = MLPCritic(obs_dim, hidden_sizes, activation)
    end

    function MLPActorCritic:step(obs)
        local a, v, logp_a
        -- with torch.no_grad():
        tide.no_grad(function()
            local pi = self.pi:_distribution(obs)
            a = pi:sample()
            logp_a = self.pi:_log_prob_from_distribution(pi, a)
            v = self.v(obs)
        end)
        -- return a.numpy(), v.numpy(), logp_a.numpy()  (tensors here: tide has no NumPy)
        return a, v, logp_a
    end

    function MLPActorCritic:act(obs)
        return (self:step(obs))
    end

    it("combined_shape, mlp, count_vars, discount_cumsum (against NumPy)", function()
        assert.are.same({ 5 }, combined_shape(5))
        assert.are.same({ 5, 3 }, combined_shape(5, 3))
        assert.are.same({ 5, 3, 2 }, combined_shape(5, { 3, 2 }))

        local m = mlp({ 4, 64, 64, 2 }, nn.Tanh)
        assert.are.equal(6, #m)
        assert.is_true(tide.isinstance(m[6], nn.Identity))
        -- PyTorch 1.13: sum(np.prod(p.shape) for p in mlp([4, 64, 64, 2], nn.Tanh).parameters()) = 4610
        assert.are.equal(4610, count_vars(m))

        -- the venv's NumPy loop (acc = x[i] + 0.9 * acc from the end), and scipy's lfilter agree
        local x = tide.tensor({ 1.0, -2.0, 0.5, 3.0, 0.0, 1.5 }, { dtype = tide.float64 })
        local got = discount_cumsum(x, 0.9)
        ported.assert_close_list({ 2.677735, 1.86415, 4.2935, 4.215, 1.35, 1.5 }, got:tolist(), 1e-12,
            "discount_cumsum")
    end)

    it("MLPActorCritic: Categorical and Gaussian actors, step under no_grad, sum(axis=-1)", function()
        tide.manual_seed(5)
        local obs_space = Box(-10, 10, { 4 })
        -- a discrete action space
        local ac = MLPActorCritic(obs_space, Discrete(2))
        -- count_vars: pi 4610, v 4545 (as PyTorch counts them)
        assert.are.equal(4610, count_vars(ac.pi))
        assert.are.equal(4545, count_vars(ac.v))
        local obs = tide.randn(6, 4)
        local a, v, logp_a = ac:step(obs)
        assert.are.equal(6, a:numel())
        assert.are.equal(6, v:numel())
        assert.is_false(logp_a.requires_grad)
        assert.is_true(a:min():item() >= 1 and a:max():item() <= 2)
        local pi, logp = ac.pi(obs, a)
        assert.is_true(tide.allclose(logp, logp_a))
        assert.is_true(logp.requires_grad)

        -- a box action space: log_std a Parameter at -0.5, log_prob summed over the last dim
        local acb = MLPActorCritic(obs_space, Box(-1, 1, { 2 }), { 16, 16 })
        assert.is_true(tide.allclose(acb.pi.log_std, tide.full({ 2 }, -0.5)))
        assert.are.equal(4 * 16 + 16 + 16 * 16 + 16 + 16 * 2 + 2 + 2, count_vars(acb.pi))
        local ab, vb, lb = acb:step(obs)
        assert.are.same({ 6, 2 }, { ab:size()[1], ab:size()[2] })
        assert.are.equal(1, vb:dim())
        local mu = acb.pi.mu_net(obs)
        local want = (-((ab - mu) ^ 2) / (2 * math.exp(-1)) + 0.5 - 0.5 * math.log(2 * math.pi)):sum(2)
        assert.is_true(tide.allclose(lb, want, { atol = 1e-4 }))
        assert.are.equal(tostring(ab:size()), tostring(acb:act(obs):size()))
        -- the base Actor's methods raise
        assert.has_error(function() Actor():_distribution(obs) end)
    end)

    it("ppo.py's compute_loss_pi and compute_loss_v on a buffer: a few Adam steps", function()
        tide.manual_seed(6)
        local clip_ratio = 0.2
        local ac = MLPActorCritic(Box(-10, 10, { 4 }), Box(-1, 1, { 2 }), { 16, 16 })
        local obs = tide.randn(32, 4)
        local act, v_old, logp_old = ac:step(obs)
        -- ret: discount_cumsum of rewards; adv normalized as PPOBuffer.get does
        local rew = -act:pow(2):sum(2)
        local ret = discount_cumsum(rew, 0.99)
        local adv = ret - v_old
        adv = (adv - adv:mean()) / adv:std()
        local data = { obs = obs, act = act, ret = ret, adv = adv, logp = logp_old }

        local function compute_loss_pi(data)
            local obs, act, adv, logp_old = data["obs"], data["act"], data["adv"], data["logp"]
            -- Policy loss
            local pi, logp = ac.pi(obs, act)
            local ratio = tide.exp(logp - logp_old)
            local clip_adv = tide.clamp(ratio, 1 - clip_ratio, 1 + clip_ratio) * adv
            local loss_pi = -(tide.min(ratio * adv, clip_adv)):mean()

            -- Useful extra info
            local approx_kl = (logp_old - logp):mean():item()
            local ent = pi:entropy():mean():item()
            -- clipped = ratio.gt(1+clip_ratio) | ratio.lt(1-clip_ratio)   (no | on Lua 5.1)
            local clipped = tide.logical_or(ratio:gt(1 + clip_ratio), ratio:lt(1 - clip_ratio))
            -- clipfrac = torch.as_tensor(clipped, dtype=torch.float32).mean().item()
            local clipfrac = tide.as_tensor(clipped, { dtype = tide.float32 }):mean():item()
            local pi_info = { kl = approx_kl, ent = ent, cf = clipfrac }
            return loss_pi, pi_info
        end

        local function compute_loss_v(data)
            local obs, ret = data["obs"], data["ret"]
            return ((ac.v(obs) - ret) ^ 2):mean()
        end

        -- pi_optimizer = Adam(ac.pi.parameters(), lr=pi_lr); vf_optimizer = Adam(ac.v.parameters(), lr=vf_lr)
        local pi_optimizer = optim.Adam(ac.pi:parameters(), { lr = 3e-3 })
        local vf_optimizer = optim.Adam(ac.v:parameters(), { lr = 1e-2 })
        local pi_l_old, pi_info_old = compute_loss_pi(data)
        pi_l_old = pi_l_old:item()
        local v_l_old = compute_loss_v(data):item()
        assert.is_true(math.abs(pi_info_old.kl) < 1e-6 and pi_info_old.cf == 0)

        local pi_info
        for i = 1, 5 do
            pi_optimizer:zero_grad()
            local loss_pi
            loss_pi, pi_info = compute_loss_pi(data)
            local kl = pi_info["kl"]
            if kl > 1.5 * 0.01 then
                break
            end
            loss_pi:backward()
            pi_optimizer:step()
        end
        for i = 1, 20 do
            vf_optimizer:zero_grad()
            local loss_v = compute_loss_v(data)
            loss_v:backward()
            vf_optimizer:step()
        end
        local pi_l_new = compute_loss_pi(data):item()
        local v_l_new = compute_loss_v(data):item()
        assert.is_true(pi_l_new < pi_l_old, ("loss_pi %g -> %g"):format(pi_l_old, pi_l_new))
        assert.is_true(v_l_new < v_l_old, ("loss_v %g -> %g"):format(v_l_old, v_l_new))
        assert.is_true(pi_info.ent == pi_info.ent and pi_info.cf >= 0 and pi_info.cf <= 1)
    end)

    it("tide.distributions.<submodule>.<Class> as PyTorch's torch.distributions.normal.Normal", function()
        local D = tide.distributions
        assert.are.equal(D.Normal, D.normal.Normal)
        assert.are.equal(D.Categorical, D.categorical.Categorical)
        assert.are.equal(D.MultivariateNormal, D.multivariate_normal.MultivariateNormal)
        assert.are.equal(D.OneHotCategoricalStraightThrough, D.one_hot_categorical.OneHotCategoricalStraightThrough)
        assert.are.equal(D.RelaxedOneHotCategorical, D.relaxed_categorical.RelaxedOneHotCategorical)
        -- a class of another file raises, naming what the submodule holds
        local ok, err = pcall(function() return D.normal.Categorical end)
        assert.is_false(ok)
        assert.matches("tide.distributions.normal has no Categorical; it holds Normal", err, 1, true)
    end)
end)

---------------------------------------------------------------------------------------------
-- gaps met on the way
---------------------------------------------------------------------------------------------
describe("ported_scripts49 gaps", function()
    -- the text written to io.stderr while fn runs
    local function stderr_of(fn)
        local saved, out = io.stderr, {}
        io.stderr = { write = function(_, ...) -- luacheck: ignore
            for _, s in ipairs({ ... }) do
                out[#out + 1] = s
            end
        end }
        local ok, err = pcall(fn)
        io.stderr = saved -- luacheck: ignore
        assert(ok, err)
        return table.concat(out)
    end

    it("tide.tensor(a tensor) copies and detaches with PyTorch's UserWarning", function()
        -- cleanrl's torch.tensor((high - low) / 2.0, dtype=torch.float32) on NumPy arrays is
        -- torch.tensor of a tensor here: PyTorch copies, detaches and warns once
        require("tide._warn").reset("tensor_of_tensor")
        local w = tide.ones(2, { requires_grad = true })
        local t
        local err = stderr_of(function()
            t = tide.tensor(w * 2, { dtype = tide.float64 })
        end)
        assert.matches("tide: warning: To copy construct from a tensor", err, 1, true)
        assert.matches("t:clone():detach()", err, 1, true)
        assert.is_false(t.requires_grad)
        assert.are.equal(tide.float64, t.dtype)
        t[1] = 5
        assert.are.equal(1, w[1]:item())
        -- once per Lua state, as Python's default filter
        assert.are.equal("", stderr_of(function() tide.tensor(w) end))
    end)

    it("Categorical.log_prob of whole float classes (spinningup's float32 act_buf), as PyTorch", function()
        -- PPOBuffer: self.act_buf = np.zeros(combined_shape(size, act_dim), dtype=np.float32);
        -- get() -> torch.as_tensor(v, dtype=torch.float32); then pi.log_prob(act) on Discrete
        local d = tide.distributions.Categorical({ logits = tide.tensor({ { 0, 1 }, { 2, 0 }, { 0, 0 } }, { dtype = tide.float32 }) })
        local act = tide.as_tensor({ 1, 2, 2 }, { dtype = tide.float32 })
        -- PyTorch 1.13: Categorical(logits=...).log_prob(torch.tensor([0., 1., 1.]))
        ported.assert_close_list({ -1.3133, -2.1269, -0.6931 }, d:log_prob(act):tolist(), 1e-4, "log_prob")
        assert.is_true(tide.equal(d:log_prob(act), d:log_prob(act:long())))
        -- a fraction is outside the support: raises, naming it and the fix, act unchanged
        local bad = tide.tensor({ 1, 1.5, 2 })
        local ok, err = pcall(function() return d:log_prob(bad) end)
        assert.is_false(ok)
        assert.matches("tide: Categorical.log_prob: the value must hold whole 1-based classes, got 1.5 " ..
            "in a float32 tensor; round it (value:round()) or give int64 classes", err, 1, true)
        assert.are.same({ 1, 1.5, 2 }, bad:tolist())
        -- out of 1..k still raises; bool values still raise
        assert.has_error(function() d:log_prob(tide.tensor({ 3, 1, 1 }, { dtype = tide.float32 })) end)
        assert.has_error(function() d:log_prob(tide.tensor({ true, false, true })) end)
    end)
end)
