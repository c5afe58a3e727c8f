-- ported_scripts191_spec.lua — pytorch/examples' reinforcement_learning/reinforce.py (Policy
-- with dropout, select_action, finish_episode with discounted normalised returns, main's
-- running reward) and reinforcement_learning/actor_critic.py (SavedAction, the shared affine1
-- with action_head and value_head, smooth_l1_loss critic, torch.stack(...).sum()), ported line
-- for line at tiny sizes (obs 4, actions 2, hidden 8; the scripts' 128). The Python line stands
-- above each Lua line that differs from it. No gym: CartPole is FixedEnv, an episode given as
-- lists of observations, rewards and actions; Categorical's m.sample() is replaced by the
-- episode's given action (its log_prob kept), so both sides take the same path. Actions are
-- 1-based (CartPole's 0 = left is 1). argparse's defaults are the args table.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local Categorical = tide.distributions.Categorical

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- parser.add_argument('--gamma', ...), '--seed', '--render', '--log-interval' (their defaults)
local function default_args()
    return { gamma = 0.99, seed = 543, render = false, log_interval = 10 }
end

-- deterministic weights, the same in the Python reference: the i-th (0-based) parameter in
-- named_parameters order is sin(arange(numel) * 0.37 + i) * 0.3 (float64, copied into float32)
local function fill_deterministic(model)
    tide.no_grad(function()
        local i = 0
        for _, p in model:named_parameters() do
            local v = tide.sin(tide.arange(p:numel(), { dtype = "float64" }) * 0.37 + i) * 0.3
            p:copy_(v:view(p.shape))
            i = i + 1
        end
    end)
end

-- env = gym.make('CartPole-v1', render_mode=render_mode): a fixed episode instead. step(action)
-- checks the action is the one given (select_action's stand-in for m.sample()).
local FixedEnv = ported.class("FixedEnv")
function FixedEnv:__init__(episodes)
    self.episodes, self.i, self.spec = episodes, 0, { reward_threshold = 475.0 }
end
-- state, _ = env.reset()
function FixedEnv:reset(opts)
    if opts and opts.seed then return end
    self.i, self.t = self.i + 1, 1
    self.ep = assert(self.episodes[self.i], "FixedEnv: no episode left")
    return self.ep.obs[1], {}
end
-- the action m.sample() stands for: the episode's next given action
function FixedEnv:given_action()
    return self.ep.actions[self.t]
end
-- state, reward, terminated, truncated, _ = env.step(action)
function FixedEnv:step(action)
    local ep, t = self.ep, self.t
    assert(action == ep.actions[t], "FixedEnv: not the given action")
    self.t = t + 1
    return ep.obs[t + 1] or ep.obs[t], ep.rewards[t], t == #ep.rewards, false, {}
end

-- the episode of the Python reference: 5 steps, obs[t][j] = sin(0.9 t + 0.4 j + 0.1) * 1.5
-- (0-based t, j), CartPole's reward 1 a step, actions 0 1 1 0 1 (1-based here)
local function episode()
    local obs = {}
    for t = 0, 5 do
        obs[t + 1] = {}
        for j = 0, 3 do obs[t + 1][j + 1] = math.sin(0.9 * t + 0.4 * j + 0.1) * 1.5 end
    end
    return { obs = obs, rewards = { 1.0, 1.0, 1.0, 1.0, 1.0 }, actions = { 1, 2, 2, 1, 2 } }
end

-- del lst[:]
local function clear(lst)
    for i = #lst, 1, -1 do lst[i] = nil end
end

local function flat(t)
    return t:detach():contiguous():view(-1):totable()
end

---------------------------------------------------------------------------------------------
-- 1. reinforcement_learning/reinforce.py (its module-level code made a function, so each test
-- starts afresh; the globals are the returned table's fields)
---------------------------------------------------------------------------------------------
local function reinforce_script(args, episodes, hidden)
    local S = { args = args }
    -- env = gym.make('CartPole-v1', render_mode=render_mode)
    local env = FixedEnv(episodes)
    S.env = env
    -- env.reset(seed=args.seed)
    env:reset({ seed = args.seed })
    -- torch.manual_seed(args.seed)
    tide.manual_seed(args.seed)

    -- class Policy(nn.Module):
    local Policy = nn.Module:extend("Policy")
    -- def __init__(self):
    function Policy:init()
        -- self.affine1 = nn.Linear(4, 128)
        self.affine1 = nn.Linear(4, hidden)
        -- self.dropout = nn.Dropout(p=0.6)
        self.dropout = nn.Dropout({ p = 0.6 })
        -- self.affine2 = nn.Linear(128, 2)
        self.affine2 = nn.Linear(hidden, 2)

        self.saved_log_probs = {}
        self.rewards = {}
    end

    function Policy:forward(x)
        x = self.affine1(x)
        x = self.dropout(x)
        x = F.relu(x)
        local action_scores = self.affine2(x)
        -- return F.softmax(action_scores, dim=1)
        return F.softmax(action_scores, { dim = 2 })
    end

    -- policy = Policy()
    local policy = Policy()
    S.policy = policy
    fill_deterministic(policy) -- the reference's weights (not in the script)
    -- optimizer = optim.Adam(policy.parameters(), lr=1e-2)
    local optimizer = optim.Adam(policy:parameters(), { lr = 1e-2 })
    S.optimizer = optimizer
    -- eps = np.finfo(np.float32).eps.item()
    local eps = tide.finfo("float32").eps

    -- def select_action(state):
    function S.select_action(state)
        -- state = torch.from_numpy(state).float().unsqueeze(0)
        state = tide.tensor(state, { dtype = "float64" }):float():unsqueeze(1)
        local probs = policy(state)
        local m = Categorical(probs)
        -- action = m.sample() (the episode's given action instead)
        local action = tide.tensor({ env:given_action() })
        -- policy.saved_log_probs.append(m.log_prob(action))
        table.insert(policy.saved_log_probs, m:log_prob(action))
        return action:item()
    end

    -- def finish_episode(): (returns the returns and the loss, for the test)
    function S.finish_episode()
        local R = 0
        local policy_loss = {}
        -- returns = deque()
        local returns = {}
        -- for r in policy.rewards[::-1]:
        for i = #policy.rewards, 1, -1 do
            local r = policy.rewards[i]
            R = r + args.gamma * R
            -- returns.appendleft(R)
            table.insert(returns, 1, R)
        end
        returns = tide.tensor(returns)
        returns = (returns - returns:mean()) / (returns:std() + eps)
        -- for log_prob, R in zip(policy.saved_log_probs, returns):
        for i, log_prob in ipairs(policy.saved_log_probs) do
            -- policy_loss.append(-log_prob * R)
            table.insert(policy_loss, -log_prob * returns[i])
        end
        optimizer:zero_grad()
        -- policy_loss = torch.cat(policy_loss).sum()
        policy_loss = tide.cat(policy_loss):sum()
        policy_loss:backward()
        optimizer:step()
        -- del policy.rewards[:]
        clear(policy.rewards)
        -- del policy.saved_log_probs[:]
        clear(policy.saved_log_probs)
        return returns, policy_loss
    end

    -- def main(): (count(1) runs out with the given episodes; returns running_reward and each
    -- episode's loss, for the test)
    function S.main()
        local running_reward = 10
        local losses = {}
        -- for i_episode in count(1):
        for i_episode = 1, #episodes do
            -- state, _ = env.reset()
            local state = env:reset()
            local ep_reward = 0
            local t
            -- for t in range(1, 10000):  # Don't infinite loop while learning
            for t_ = 1, 9999 do
                t = t_
                local action = S.select_action(state)
                local reward, terminated, truncated
                -- state, reward, terminated, truncated, _ = env.step(action)
                state, reward, terminated, truncated = env:step(action)
                -- policy.rewards.append(reward)
                table.insert(policy.rewards, reward)
                ep_reward = ep_reward + reward
                if terminated or truncated then
                    break
                end
            end

            running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
            local _, loss = S.finish_episode()
            losses[i_episode] = loss:item()
            if i_episode % args.log_interval == 0 then
                print(string.format("Episode %d\tLast reward: %.2f\tAverage reward: %.2f",
                    i_episode, ep_reward, running_reward))
            end
            if running_reward > env.spec.reward_threshold then
                print(string.format("Solved! Running reward is now %s and the last episode "
                    .. "runs to %d time steps!", running_reward, t))
                break
            end
        end
        return running_reward, losses
    end
    return S
end

---------------------------------------------------------------------------------------------
-- 2. reinforcement_learning/actor_critic.py
---------------------------------------------------------------------------------------------
-- SavedAction = namedtuple('SavedAction', ['log_prob', 'value'])
local function SavedAction(log_prob, value)
    return { log_prob = log_prob, value = value }
end

local function actor_critic_script(args, episodes, hidden)
    local S = { args = args }
    local env = FixedEnv(episodes)
    S.env = env
    env:reset({ seed = args.seed })
    tide.manual_seed(args.seed)

    -- class Policy(nn.Module):
    local Policy = nn.Module:extend("Policy")
    -- implements both actor and critic in one model
    function Policy:init()
        -- self.affine1 = nn.Linear(4, 128)
        self.affine1 = nn.Linear(4, hidden)

        -- actor's layer
        -- self.action_head = nn.Linear(128, 2)
        self.action_head = nn.Linear(hidden, 2)

        -- critic's layer
        -- self.value_head = nn.Linear(128, 1)
        self.value_head = nn.Linear(hidden, 1)

        -- action & reward buffer
        self.saved_actions = {}
        self.rewards = {}
    end

    -- forward of both actor and critic
    function Policy:forward(x)
        x = F.relu(self.affine1(x))

        -- actor: choses action to take from state s_t
        -- by returning probability of each action
        -- action_prob = F.softmax(self.action_head(x), dim=-1)
        local action_prob = F.softmax(self.action_head(x), { dim = -1 })

        -- critic: evaluates being in the state s_t
        local state_values = self.value_head(x)

        return action_prob, state_values
    end

    -- model = Policy()
    local model = Policy()
    S.model = model
    fill_deterministic(model) -- the reference's weights (not in the script)
    -- optimizer = optim.Adam(model.parameters(), lr=3e-2)
    local optimizer = optim.Adam(model:parameters(), { lr = 3e-2 })
    -- eps = np.finfo(np.float32).eps.item()
    local eps = tide.finfo("float32").eps

    -- def select_action(state):
    function S.select_action(state)
        -- state = torch.from_numpy(state).float()
        state = tide.tensor(state, { dtype = "float64" }):float()
        local probs, state_value = model(state)

        -- create a categorical distribution over the list of probabilities of actions
        local m = Categorical(probs)

        -- and sample an action using the distribution
        -- action = m.sample() (the episode's given action instead)
        local action = tide.tensor(env:given_action())

        -- save to action buffer
        -- model.saved_actions.append(SavedAction(m.log_prob(action), state_value))
        table.insert(model.saved_actions, SavedAction(m:log_prob(action), state_value))

        -- the action to take (left or right)
        return action:item()
    end

    -- Training code. Calculates actor and critic loss and performs backprop.
    -- def finish_episode(): (returns its intermediates, for the test)
    function S.finish_episode()
        local R = 0
        local saved_actions = model.saved_actions
        local policy_losses = {} -- list to save actor (policy) loss
        local value_losses = {} -- list to save critic (value) loss
        local returns = {} -- list to save the true values

        -- calculate the true value using rewards returned from the environment
        -- for r in model.rewards[::-1]:
        for i = #model.rewards, 1, -1 do
            local r = model.rewards[i]
            -- calculate the discounted value
            R = r + args.gamma * R
            -- returns.insert(0, R)
            table.insert(returns, 1, R)
        end

        returns = tide.tensor(returns)
        returns = (returns - returns:mean()) / (returns:std() + eps)

        -- for (log_prob, value), R in zip(saved_actions, returns):
        for i, saved in ipairs(saved_actions) do
            local log_prob, value, R_ = saved.log_prob, saved.value, returns[i]
            -- advantage = R - value.item()
            local advantage = R_ - value:item()

            -- calculate actor (policy) loss
            table.insert(policy_losses, -log_prob * advantage)

            -- calculate critic (value) loss using L1 smooth loss
            -- value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))
            table.insert(value_losses, F.smooth_l1_loss(value, tide.tensor({ R_ })))
        end

        -- reset gradients
        optimizer:zero_grad()

        -- sum up all the values of policy_losses and value_losses
        -- loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
        local loss = tide.stack(policy_losses):sum() + tide.stack(value_losses):sum()

        -- perform backprop
        loss:backward()
        optimizer:step()

        -- reset rewards and action buffer
        clear(model.rewards)
        clear(model.saved_actions)
        return { returns = returns, policy_losses = policy_losses, value_losses = value_losses,
            loss = loss }
    end

    -- def main(): (count(1) runs out with the given episodes; returns running_reward and each
    -- episode's loss, for the test)
    function S.main()
        local running_reward = 10
        local losses = {}

        -- run infinitely many episodes
        -- for i_episode in count(1):
        for i_episode = 1, #episodes do

            -- reset environment and episode reward
            local state = env:reset()
            local ep_reward = 0
            local t

            -- for each episode, only run 9999 steps so that we don't
            -- infinite loop while learning
            -- for t in range(1, 10000):
            for t_ = 1, 9999 do
                t = t_

                -- select action from policy
                local action = S.select_action(state)

                -- take the action
                local reward, terminated, truncated
                state, reward, terminated, truncated = env:step(action)

                table.insert(model.rewards, reward)
                ep_reward = ep_reward + reward
                if terminated or truncated then
                    break
                end
            end

            -- update cumulative reward
            running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward

            -- perform backprop
            losses[i_episode] = S.finish_episode().loss:item()

            -- log results
            if i_episode % args.log_interval == 0 then
                print(string.format("Episode %d\tLast reward: %.2f\tAverage reward: %.2f",
                    i_episode, ep_reward, running_reward))
            end

            -- check if we have "solved" the cart pole problem
            if running_reward > env.spec.reward_threshold then
                print(string.format("Solved! Running reward is now %s and the last episode "
                    .. "runs to %d time steps!", running_reward, t))
                break
            end
        end
        return running_reward, losses
    end
    return S
end

---------------------------------------------------------------------------------------------
-- PyTorch 1.13's values for the episode above and the weights of fill_deterministic
-- (/tmp script: the two scripts pasted at hidden 8; reinforce's policy in eval(), so dropout
-- is the identity on both sides)
---------------------------------------------------------------------------------------------
local REF = {
    RF_LOGP = { -0.407651871, -1.1868428, -0.996602476, -0.648829997, -0.552348077 },
    RETURNS = { 1.25854528, 0.635596991, 0.00635621883, -0.629240453, -1.2712574 },
    RF_LOSS = 0.163289994,
    RF_PARAMS = {
        ["affine1.weight"] = { -0.0100000007, 0.0984846354, 0.192286372, 0.27870959,
            0.288764268, 0.27838257, 0.248969629, 0.167213291, 0.0441788808, -0.066188395,
            -0.168950841, -0.250200033, -0.298939258, -0.308571935, -0.277794302, -0.210771948,
            -0.0965760723, 0.0120443897, 0.12038815, 0.193791404, 0.279612422, 0.308942676,
            0.297812432, 0.227728158, 0.165468469, 0.0621668436, -0.0481953099, -0.150680989,
            -0.231419265, -0.279482603, -0.288365781, -0.256866574 },
        ["affine1.bias"] = { 0.242441297, 0.283972442, 0.30571574, 0.267435342, 0.19431226,
            0.0962433964, -0.0334981084, -0.140059277 },
        ["affine2.weight"] = { 0.262789249, 0.199183315, 0.127265438, 0.0194762181,
            -0.0895955563, -0.205187544, -0.274361789, -0.287755966, -0.280850232,
            -0.234579265, -0.175205663, -0.0734722465, 0.0368518382, 0.160834745, 0.244402871,
            0.276245683 },
        ["affine2.bias"] = { 0.0523359999, -0.0779279545 },
    },
    AC_VALUES = { -1.0598402, -1.28327131, -0.959617555, -0.653219044, -0.875744343 },
    AC_PLOSSES = { 0.945094228, 2.27739501, 0.962691903, 0.0155580295, -0.218460873 },
    AC_VLOSSES = { 1.8183856, 1.4188683, 0.466552675, 0.000287486415, 0.0782152861 },
    AC_LOSS = 7.7645874,
    AC_PARAMS = {
        ["affine1.weight"] = { -0.0299999993, 0.0784846321, 0.172286376, 0.238709599,
            0.268764257, 0.258382559, 0.208969638, 0.127213299, 0.0241788793, -0.0861883983,
            -0.188950837, -0.270200014, -0.318939269, -0.328571945, -0.297794312, -0.230771959,
            -0.136576071, -0.0279556047, 0.0803881586, 0.173791394, 0.299612433, 0.328942686,
            0.317812443, 0.207728148, 0.185468465, 0.0821668431, -0.0281953067, -0.130680993,
            -0.211419269, -0.259482592, -0.268365771, -0.236866564 },
        ["affine1.bias"] = { 0.222441286, 0.263972431, 0.265715748, 0.287435353, 0.154312283,
            0.1162434, 0.00650188886, -0.160059273 },
        ["action_head.weight"] = { 0.242789239, 0.179183319, 0.147265419, 0.0394762233,
            -0.129595548, -0.22518754, -0.2943618, -0.267755955, -0.260850221, -0.214579269,
            -0.195205644, -0.0934722498, 0.0768518373, 0.18083474, 0.264402866, 0.256245673 },
        ["action_head.bias"] = { 0.0123360045, -0.0379279591 },
        ["value_head.weight"] = { -0.197040752, -0.252586573, -0.329885662, -0.306596607,
            -0.185871497, -0.0959292054, 0.0110570192, 0.0606070869 },
        ["value_head.bias"] = { -0.257677287 },
    },
}
REF.AC_LOGP = REF.RF_LOGP -- the same weights on the shared layers give the same policy
-- actor_critic.py's main over three copies of the episode: each episode's loss
REF.AC_MAIN_LOSSES = { 7.7645874, 5.92479563, 4.79000854 }

local TOL = 1e-5

-- play one episode through the script's own select_action / env.step, as main's inner loop
local function play(S, rewards)
    local env = S.env
    local state = env:reset()
    for _ = 1, 9999 do
        local action = S.select_action(state)
        local reward, terminated
        state, reward, terminated = env:step(action)
        table.insert(rewards, reward)
        if terminated then break end
    end
end

local function assert_params(model, want, what)
    local n = 0
    for name, p in model:named_parameters() do
        assert_close_list(want[name], flat(p), TOL, what .. " " .. name)
        n = n + 1
    end
    assert.are.equal(n, (what == "reinforce") and 4 or 6)
end

describe("ported pytorch/examples reinforcement_learning", function()
    it("reinforce.py: log_probs, returns, loss and one Adam step match PyTorch", function()
        local S = reinforce_script(default_args(), { episode() }, 8)
        S.policy:eval() -- dropout off on both sides for the value check
        play(S, S.policy.rewards)
        local logp = {}
        for i, lp in ipairs(S.policy.saved_log_probs) do
            assert.are.same({ 1 }, lp.shape)
            logp[i] = lp:item()
        end
        assert_close_list(REF.RF_LOGP, logp, TOL, "log_prob")
        local returns, loss = S.finish_episode()
        assert_close_list(REF.RETURNS, flat(returns), TOL, "returns")
        assert.are.equal("float32", returns.dtype)
        assert_close_list({ REF.RF_LOSS }, { loss:item() }, TOL, "policy_loss")
        assert_params(S.policy, REF.RF_PARAMS, "reinforce")
        assert.are.equal(0, #S.policy.rewards)
        assert.are.equal(0, #S.policy.saved_log_probs)
    end)

    it("reinforce.py: main with dropout on runs the episodes and the running reward", function()
        local S = reinforce_script(default_args(), { episode(), episode(), episode() }, 8)
        local running_reward, losses = S.main()
        assert.are.equal(3, #losses)
        for _, l in ipairs(losses) do assert_finite(l, "policy_loss") end
        -- running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward, ep_reward = 5
        local want = 10
        for _ = 1, 3 do want = 0.05 * 5 + (1 - 0.05) * want end
        assert.is_true(math.abs(running_reward - want) < 1e-12)
        assert.is_true(S.policy.training)
        -- env.step got exactly the given actions: all three episodes used
        assert.are.equal(3, S.env.i)
    end)

    it("actor_critic.py: log_probs, values, each loss and one Adam step match PyTorch", function()
        local S = actor_critic_script(default_args(), { episode() }, 8)
        play(S, S.model.rewards)
        local logp, values = {}, {}
        for i, sa in ipairs(S.model.saved_actions) do
            assert.are.same({}, sa.log_prob.shape)
            assert.are.same({ 1 }, sa.value.shape)
            logp[i], values[i] = sa.log_prob:item(), sa.value:item()
        end
        assert_close_list(REF.AC_LOGP, logp, TOL, "log_prob")
        assert_close_list(REF.AC_VALUES, values, TOL, "value")
        local out = S.finish_episode()
        assert_close_list(REF.RETURNS, flat(out.returns), TOL, "returns")
        local pl, vl = {}, {}
        for i = 1, #out.policy_losses do
            pl[i], vl[i] = out.policy_losses[i]:item(), out.value_losses[i]:item()
        end
        assert_close_list(REF.AC_PLOSSES, pl, TOL, "policy_losses")
        assert_close_list(REF.AC_VLOSSES, vl, TOL, "value_losses")
        assert_close_list({ REF.AC_LOSS }, { out.loss:item() }, TOL, "loss")
        assert_params(S.model, REF.AC_PARAMS, "actor_critic")
        assert.are.equal(0, #S.model.rewards)
        assert.are.equal(0, #S.model.saved_actions)
    end)

    it("actor_critic.py: main over three episodes lowers the loss", function()
        local S = actor_critic_script(default_args(), { episode(), episode(), episode() }, 8)
        local running_reward, losses = S.main()
        assert.are.equal(3, #losses)
        for _, l in ipairs(losses) do assert_finite(l, "loss") end
        assert_close_list(REF.AC_MAIN_LOSSES, losses, 1e-4, "main losses")
        assert.is_true(losses[3] < losses[1])
        assert.is_true(math.abs(running_reward - (0.05 * 5 + 0.95 * (0.05 * 5 + 0.95 *
            (0.05 * 5 + 0.95 * 10)))) < 1e-12)
    end)
end)
