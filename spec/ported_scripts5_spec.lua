-- ported_scripts5_spec.lua — three PyTorch tutorials (pytorch/tutorials) ported line for line:
-- the DQN tutorial (intermediate/reinforcement_q_learning.py: Transition, ReplayMemory, DQN,
-- select_action, optimize_model, the soft update of the target net through state dicts) on a
-- tiny fake CartPole instead of gym; "Adversarial Example Generation" (beginner/fgsm_tutorial.py:
-- the LeNet model, fgsm_attack, denorm, the test loop that attacks each correctly classified
-- image); and "Advanced: Making Dynamic Decisions and the Bi-LSTM CRF"
-- (beginner/nlp/advanced_tutorial.py: log_sum_exp, the forward algorithm, the gold score,
-- Viterbi decoding, training with SGD(weight_decay)). Each keeps the script's layers, calls and
-- keyword arguments (a Python keyword is a name in a trailing table), shrunk to tiny sizes and
-- a few steps, and checks values against PyTorch 1.13 on fixed weights. The Python line stands
-- above each Lua line that differs from it; a line tide cannot write as Python does is marked
-- `-- GAP:`. Dims, indices, actions and class targets are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local is_finite = ported.is_finite

local function assert_close(expected, got, tol, what)
    assert(math.abs(expected - got) <= (tol or 1e-5) * math.max(1, math.abs(expected)),
        (what or "value") .. ": expected " .. expected .. ", got " .. got)
end

-- the reference script's fixed weights: ((arange(n) * 0.37 + k).sin() * 0.2).view(shape)
local function fixed(shape, k)
    local n = 1
    for i = 1, #shape do
        n = n * shape[i]
    end
    return ((tide.arange(n, { dtype = tide.float32 }) * 0.37 + k):sin() * 0.2):view(unpack(shape))
end

-- every parameter of net, in registration order, takes fixed(shape, k + i) (i from 0)
local function fill(net, k)
    tide.no_grad(function()
        for i, p in ipairs(net:parameters()) do
            local shape = {}
            for d = 1, p:dim() do
                shape[d] = p:size(d)
            end
            p:copy_(fixed(shape, k + i - 1))
        end
    end)
end

---------------------------------------------------------------------------------------------
-- 1. intermediate/reinforcement_q_learning.py
---------------------------------------------------------------------------------------------
describe("intermediate/reinforcement_q_learning.py", function()
    -- Python's namedtuple: positional fields 1..n, also read by name
    local function namedtuple(_, fields)
        local pos = {}
        for i, f in ipairs(fields) do
            pos[f] = i
        end
        local mt = {
            __index = function(t, k)
                local i = pos[k]
                return i and rawget(t, i) or nil
            end,
        }
        return function(...)
            return setmetatable({ n = #fields, ... }, mt)
        end
    end

    -- zip(*seqs): the i-th items of each sequence as one list (holding n: a None is a hole)
    local function zip(...)
        local seqs = { n = select("#", ...), ... }
        local cols = {}
        local len = seqs[1].n or #seqs[1]
        for j = 1, len do
            local col = { n = seqs.n }
            for i = 1, seqs.n do
                col[i] = seqs[i][j]
            end
            cols[j] = col
        end
        return unpack(cols, 1, len)
    end

    -- map(f, seq) and [s for s in seq if f(s)] over a list that may hold holes
    local function map(f, seq)
        local out = {}
        for i = 1, seq.n or #seq do
            out[i] = f(seq[i])
        end
        return out
    end
    local function filter(f, seq)
        local out = {}
        for i = 1, seq.n or #seq do
            if f(seq[i]) then
                out[#out + 1] = seq[i]
            end
        end
        return out
    end

    -- Transition = namedtuple('Transition',
    --                         ('state', 'action', 'next_state', 'reward'))
    local Transition = namedtuple("Transition", { "state", "action", "next_state", "reward" })

    -- class ReplayMemory(object):
    local ReplayMemory = {}
    ReplayMemory.__index = ReplayMemory
    setmetatable(ReplayMemory, {
        __call = function(cls, capacity)
            local self = setmetatable({}, cls)
            -- self.memory = deque([], maxlen=capacity)
            self.memory, self.maxlen = {}, capacity
            return self
        end,
    })

    function ReplayMemory:push(...)
        -- self.memory.append(Transition(*args))  (a full deque drops its oldest)
        self.memory[#self.memory + 1] = Transition(...)
        if #self.memory > self.maxlen then
            table.remove(self.memory, 1)
        end
    end

    function ReplayMemory:sample(batch_size)
        -- return random.sample(self.memory, batch_size)  (distinct picks: a partial shuffle)
        local pool, out = { unpack(self.memory) }, {}
        for i = 1, batch_size do
            local j = math.random(i, #pool)
            pool[i], pool[j] = pool[j], pool[i]
            out[i] = pool[i]
        end
        return out
    end

    -- def __len__(self): (Lua 5.1 and LuaJIT read no __len of a table)
    function ReplayMemory:len()
        return #self.memory
    end

    -- class DQN(nn.Module):
    local DQN = nn.Module:extend("DQN")
    -- def __init__(self, n_observations, n_actions):
    function DQN:init(n_observations, n_actions)
        self.layer1 = nn.Linear(n_observations, 128)
        self.layer2 = nn.Linear(128, 128)
        self.layer3 = nn.Linear(128, n_actions)
    end

    function DQN:forward(x)
        x = F.relu(self.layer1(x))
        x = F.relu(self.layer2(x))
        return self.layer3(x)
    end

    -- a tiny stand-in for gym.make("CartPole-v1"): 4 observations, 2 actions (1 left, 2 right),
    -- reward 1 a step, terminated when the cart leaves [-0.3, 0.3], truncated after 12 steps
    local function make_env()
        local env = { action_space = { n = 2 } }
        function env.action_space.sample()
            return math.random(1, 2)
        end

        function env.reset()
            env.t = 0
            env.state = {}
            for i = 1, 4 do
                env.state[i] = (math.random() - 0.5) * 0.1
            end
            return { unpack(env.state) }, {}
        end

        function env.step(action)
            local s = env.state
            s[2] = s[2] + (action == 2 and 0.05 or -0.05)
            s[1] = s[1] + s[2]
            s[3], s[4] = s[3] + s[4], s[4] + (math.random() - 0.5) * 0.02
            env.t = env.t + 1
            local terminated = math.abs(s[1]) > 0.3
            return { unpack(s) }, 1.0, terminated, env.t >= 12, {}
        end

        return env
    end

    it("Transition, ReplayMemory: deque(maxlen), random.sample, zip(*transitions)", function()
        math.randomseed(3)
        local memory = ReplayMemory(3)
        for i = 1, 5 do
            memory:push(tide.tensor({ { i } }), tide.tensor({ { 1 } }), i % 2 == 0 and tide.ones(1, 1) or nil,
                tide.tensor({ 1.0 }))
        end
        -- deque(maxlen=3) keeps the last three
        assert.are.equal(3, memory:len())
        assert.are.equal(3, memory.memory[1].state:item())
        assert.are.equal(5, memory.memory[3][1]:item())
        local transitions = memory:sample(3)
        -- batch = Transition(*zip(*transitions))
        local batch = Transition(zip(unpack(transitions)))
        assert.are.equal(3, batch.state.n)
        local seen = {}
        for i = 1, 3 do
            seen[batch.state[i]:item()] = true
        end
        assert.are.same({ [3] = true, [4] = true, [5] = true }, seen)
        -- non_final_mask = torch.tensor(tuple(map(lambda s: s is not None,
        --                                       batch.next_state)), device=device, dtype=torch.bool)
        local non_final_mask = tide.tensor(map(function(s) return s ~= nil end, batch.next_state),
            { dtype = tide.bool })
        assert.are.equal(1, non_final_mask:sum():item())
        -- non_final_next_states = torch.cat([s for s in batch.next_state
        --                                             if s is not None])
        local non_final_next_states = tide.cat(filter(function(s) return s ~= nil end, batch.next_state))
        assert.are.same({ 1, 1 }, non_final_next_states.shape)
    end)

    it("optimize_model against PyTorch 1.13: gather, masked next_state_values, SmoothL1Loss, " ..
        "clip_grad_value_, AdamW(amsgrad)", function()
            local device = tide.device("cpu")
            local GAMMA = 0.99
            local policy_net = DQN(4, 2):to(device)
            local target_net = DQN(4, 2):to(device)
            fill(policy_net, 1.0)
            fill(target_net, 2.0)
            -- optimizer = optim.AdamW(policy_net.parameters(), lr=LR, amsgrad=True)
            local optimizer = optim.AdamW(policy_net:parameters(), { lr = 1e-4, amsgrad = true })
            local transitions = {}
            for i = 0, 3 do
                local next_state = fixed({ 1, 4 }, 20 + i) * 5
                if i == 2 then
                    next_state = nil
                end
                transitions[i + 1] = Transition(fixed({ 1, 4 }, 10 + i) * 5,
                    tide.tensor({ { ({ 1, 2, 2, 1 })[i + 1] } }), next_state,
                    tide.tensor({ ({ 1.0, 1.0, 0.0, 1.0 })[i + 1] }))
            end
            local BATCH_SIZE = 4
            local batch = Transition(zip(unpack(transitions)))
            local non_final_mask = tide.tensor(map(function(s) return s ~= nil end, batch.next_state),
                { device = device, dtype = tide.bool })
            local non_final_next_states = tide.cat(filter(function(s) return s ~= nil end, batch.next_state))
            -- state_batch = torch.cat(batch.state)
            local state_batch = tide.cat(batch.state)
            local action_batch = tide.cat(batch.action)
            local reward_batch = tide.cat(batch.reward)
            -- state_action_values = policy_net(state_batch).gather(1, action_batch)
            local state_action_values = policy_net(state_batch):gather(2, action_batch)
            -- next_state_values = torch.zeros(BATCH_SIZE, device=device)
            local next_state_values = tide.zeros(BATCH_SIZE, { device = device })
            -- with torch.no_grad():
            tide.no_grad(function()
                -- next_state_values[non_final_mask] = target_net(non_final_next_states).max(1)[0]
                -- GAP: newer `.max(1).values`: max over a dim returns two results, no named
                -- tuple; x:max(2).values reads nil (the binding's __index, lua/tensor.c)
                next_state_values[non_final_mask] = target_net(non_final_next_states):max(2)
            end)
            -- expected_state_action_values = (next_state_values * GAMMA) + reward_batch
            local expected_state_action_values = (next_state_values * GAMMA) + reward_batch
            -- criterion = nn.SmoothL1Loss()
            local criterion = nn.SmoothL1Loss()
            -- loss = criterion(state_action_values, expected_state_action_values.unsqueeze(1))
            local loss = criterion(state_action_values, expected_state_action_values:unsqueeze(2))

            -- torch: the same fixed weights and batch
            local sav = { 0.7033413052558899, -0.5825772285461426, -0.5681040287017822, 0.6792955994606018 }
            local nsv = { 1.0698286294937134, 1.1270118951797485, 0.0, 1.1052863597869873 }
            for i = 1, 4 do
                assert_close(sav[i], state_action_values[i][1]:item(), 1e-5, "state_action_values")
                assert_close(nsv[i], next_state_values[i]:item(), 1e-5, "next_state_values")
            end
            assert_close(1.0326042175292969, loss:item(), 1e-5, "SmoothL1Loss")
            assert.is_nil(next_state_values.grad_fn)

            -- optimizer.zero_grad()
            optimizer:zero_grad()
            loss:backward()
            -- In-place gradient clipping
            -- torch.nn.utils.clip_grad_value_(policy_net.parameters(), 100)
            nn.utils.clip_grad_value_(policy_net:parameters(), 100)
            optimizer:step()
            -- torch: policy_net.layer3.bias and layer3.weight[0, :4] after the step
            local bias = { -0.05578304082155228, 0.017441097646951675 }
            local w = { -0.19168466329574585, -0.1582908034324646, -0.10327302664518356, -0.03446411341428757 }
            for i = 1, 2 do
                assert_close(bias[i], policy_net.layer3.bias[i]:item(), 1e-5, "layer3.bias")
            end
            for j = 1, 4 do
                assert_close(w[j], policy_net.layer3.weight[1][j]:item(), 1e-5, "layer3.weight")
            end
        end)

    -- the warnings tide writes to io.stderr, caught
    local catching_warnings = require("spec.support.warnings")

    it("the older tutorial's forms: a uint8 mask, param.grad.data.clamp_, RMSprop, F.smooth_l1_loss", function()
        tide.manual_seed(2)
        local policy_net, target_net = DQN(4, 2), DQN(4, 2)
        -- target_net.load_state_dict(policy_net.state_dict()); target_net.eval()
        target_net:load_state_dict(policy_net:state_dict())
        target_net:eval()
        -- optimizer = optim.RMSprop(policy_net.parameters())  (lr 0.01 by default)
        local optimizer = optim.RMSprop(policy_net:parameters())
        assert.are.equal(0.01, optimizer.param_groups[1].lr)
        local next_state = { tide.randn(1, 4), false, tide.randn(1, 4), tide.randn(1, 4) }
        -- non_final_mask = torch.tensor(tuple(map(lambda s: s is not None,
        --                                       batch.next_state)), device=device, dtype=torch.uint8)
        local non_final_mask = tide.tensor(map(function(s) return s ~= false end, next_state),
            { dtype = tide.uint8 })
        local non_final_next_states = tide.cat(filter(function(s) return s ~= false end, next_state))
        local next_state_values = tide.zeros(4)
        local warned = catching_warnings(function()
            require("tide._warn").reset("uint8_index")
            -- next_state_values[non_final_mask] = target_net(non_final_next_states).max(1)[0].detach()
            next_state_values[non_final_mask] = target_net(non_final_next_states):max(2):detach()
        end)
        -- PyTorch 1.13 reads a uint8 index as a bool mask (nonzero: true), with its warning
        assert.is_truthy(warned:find("tide: warning: indexing with dtype uint8 is now deprecated, " ..
            "please use a dtype bool instead", 1, true))
        local want = target_net(non_final_next_states):max(2)
        assert.are.equal(0, next_state_values[2]:item())
        assert.are.equal(want[1]:item(), next_state_values[1]:item())
        assert.are.equal(want[3]:item(), next_state_values[4]:item())
        -- reading through one too, and any nonzero byte is true
        local byte = tide.tensor({ 2, 0, 1, 255 }, { dtype = tide.uint8 })
        assert.are.same({ 3 }, next_state_values[byte].shape)
        -- a byte mask of the wrong shape raises as a bool one does, leaving the tensor as it was
        local before = next_state_values:clone()
        assert.has_error(function()
            next_state_values[tide.tensor({ 1, 0 }, { dtype = tide.uint8 })] = 5
        end, "tide: setindex: the mask's shape {2} does not match the shape {4} of the tensor's " ..
            "first dims; a mask covers the first 1 of them")
        assert.are.equal(0, (next_state_values - before):abs():max():item())

        local state_batch = tide.randn(4, 4)
        local action_batch = tide.tensor({ { 1 }, { 2 }, { 2 }, { 1 } })
        local state_action_values = policy_net(state_batch):gather(2, action_batch)
        local expected_state_action_values = (next_state_values * 0.999) + tide.ones(4)
        -- loss = F.smooth_l1_loss(state_action_values, expected_state_action_values.unsqueeze(1))
        local loss = F.smooth_l1_loss(state_action_values, expected_state_action_values:unsqueeze(2))
        optimizer:zero_grad()
        loss:backward()
        -- for param in policy_net.parameters():
        for _, param in ipairs(policy_net:parameters()) do
            -- param.grad.data.clamp_(-1, 1)
            param.grad.data:clamp_(-1, 1)
            assert.is_true(param.grad:abs():max():item() <= 1)
        end
        optimizer:step()
        assert(is_finite(loss:item()))
    end)

    it("clip_grad_value_ and clip_grad_norm_ take PyTorch's keywords; a NaN total norm as PyTorch's", function()
        local function params_with(...)
            local ps = {}
            for i, g in ipairs({ ... }) do
                ps[i] = nn.Parameter(tide.zeros(#g))
                ps[i].grad = tide.tensor(g, { dtype = tide.float32 })
            end
            return ps
        end
        -- torch.nn.utils.clip_grad_value_(policy_net.parameters(), clip_value=100)
        local ps = params_with({ 1.5, -300.5 }, { 250.25 })
        nn.utils.clip_grad_value_(ps, { clip_value = 100 })
        assert.are.same({ 1.5, -100 }, ps[1].grad:tolist())
        assert.are.same({ 100 }, ps[2].grad:tolist())
        assert.has_error(function() nn.utils.clip_grad_value_(ps, 1, { foreach = true }) end,
            'tide: clip_grad_value_: unknown option "foreach"; options are clip_value')
        assert.has_error(function() nn.utils.clip_grad_value_(ps, 1, true) end,
            "tide: clip_grad_value_: expected at most 2 arguments, got 3 (argument #3 is a boolean); " ..
            "remove it: clip_grad_value_ takes no such argument or option")
        assert.has_error(function() nn.utils.clip_grad_value_(ps, 100, { clip_value = 1 }) end,
            "tide: clip_grad_value_: clip_value given twice, as argument #2 and by name; pass it once")
        assert.are.same({ 100 }, ps[2].grad:tolist())

        -- torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0, norm_type=2.0)
        ps = params_with({ 3, 0 }, { 4 })
        assert.are.equal(5, nn.utils.clip_grad_norm_(ps, { max_norm = 1.0, norm_type = 2.0 }))
        assert.is_true(math.abs(ps[2].grad[1]:item() - 0.8) < 1e-6)
        ps = params_with({ 3, 0 }, { -4 })
        assert.are.equal(4, nn.utils.clip_grad_norm_(ps, 1.0, { norm_type = "inf" }))
        -- torch: a NaN total scales every gradient by NaN; error_if_nonfinite=True raises instead
        ps = params_with({ 1, 0 / 0 }, { 4 })
        local total = nn.utils.clip_grad_norm_(ps, 1.0)
        assert.is_true(total ~= total)
        assert.is_true(ps[2].grad[1]:item() ~= ps[2].grad[1]:item(), "the finite gradient is NaN too")
        ps = params_with({ 1, 1 / 0 }, { 4 })
        assert.has_error(function() nn.utils.clip_grad_norm_(ps, 1.0, 2.0, true) end,
            "tide: clip_grad_norm_: the total norm of order 2 of the gradients is non-finite (inf), " ..
            "so it cannot be clipped; to scale the gradients by it anyway, pass error_if_nonfinite = false")
        assert.are.equal(4, ps[2].grad[1]:item())
        assert.has_error(function() nn.utils.clip_grad_norm_(ps, 1.0, { error_if_nonfinite = "yes" }) end,
            "tide: clip_grad_norm_: error_if_nonfinite must be a boolean, got string")
        assert.has_error(function() nn.utils.clip_grad_norm_(ps, 1.0, { foreach = true }) end,
            'tide: clip_grad_norm_: unknown option "foreach"; options are max_norm, norm_type, ' ..
            "error_if_nonfinite")
    end)

    it("the training loop: select_action, optimize_model, soft update through state_dict", function()
        math.randomseed(7)
        tide.manual_seed(7)
        local env = make_env()
        -- device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        local device = tide.device("cpu")

        -- BATCH_SIZE is the number of transitions sampled from the replay buffer ...
        local BATCH_SIZE = 16 -- 128 in the tutorial
        local GAMMA = 0.99
        local EPS_START = 0.9
        local EPS_END = 0.05
        local EPS_DECAY = 1000
        local TAU = 0.005
        local LR = 1e-4

        -- Get number of actions from gym action space
        local n_actions = env.action_space.n
        -- Get the number of state observations
        -- state, info = env.reset()
        local state, _ = env.reset()
        -- n_observations = len(state)
        local n_observations = #state

        local policy_net = DQN(n_observations, n_actions):to(device)
        local target_net = DQN(n_observations, n_actions):to(device)
        -- target_net.load_state_dict(policy_net.state_dict())
        target_net:load_state_dict(policy_net:state_dict())
        assert.are.equal(0, (target_net.layer2.weight - policy_net.layer2.weight):abs():max():item())

        local optimizer = optim.AdamW(policy_net:parameters(), { lr = LR, amsgrad = true })
        local memory = ReplayMemory(10000)

        local steps_done = 0

        local function select_action(state) -- luacheck: ignore (shadows the outer state as in Python)
            -- global steps_done
            local sample = math.random()
            -- eps_threshold = EPS_END + (EPS_START - EPS_END) * \
            --     math.exp(-1. * steps_done / EPS_DECAY)
            local eps_threshold = EPS_END + (EPS_START - EPS_END) *
                math.exp(-1. * steps_done / EPS_DECAY)
            steps_done = steps_done + 1
            if sample > eps_threshold then
                -- with torch.no_grad():
                return tide.no_grad(function()
                    -- t.max(1) will return the largest column value of each row.
                    -- second column on max result is index of where max element was
                    -- found, so we pick action with the larger expected reward.
                    -- return policy_net(state).max(1)[1].view(1, 1)
                    -- GAP: newer `.max(1).indices.view(1, 1)`: no named tuple; the indices
                    -- are max's second result
                    return select(2, policy_net(state):max(2)):view(1, 1)
                end)
            else
                -- return torch.tensor([[env.action_space.sample()]], device=device, dtype=torch.long)
                return tide.tensor({ { env.action_space.sample() } }, { device = device, dtype = tide.long })
            end
        end

        -- the greedy branch: the 1-based index of the larger Q value
        do
            local saved = steps_done
            steps_done = 1e9 -- eps_threshold ~ EPS_END
            local s = tide.tensor({ { 0.1, -0.2, 0.3, 0.0 } })
            local greedy
            for _ = 1, 20 do
                local a = select_action(s)
                assert.are.same({ 1, 1 }, a.shape)
                assert.are.equal(tide.int64, a.dtype)
                assert.is_true(a:item() == 1 or a:item() == 2)
                greedy = greedy or a:item()
            end
            local _, idx = policy_net(s):max(2)
            assert.is_true(idx:item() == 1 or idx:item() == 2)
            steps_done = saved
        end

        local episode_durations = {}
        local losses = {}

        local function optimize_model()
            -- if len(memory) < BATCH_SIZE:
            if memory:len() < BATCH_SIZE then
                return
            end
            local transitions = memory:sample(BATCH_SIZE)
            -- Transpose the batch (see https://stackoverflow.com/a/19343/3343043 for
            -- detailed explanation). This converts batch-array of Transitions
            -- to Transition of batch-arrays.
            -- batch = Transition(*zip(*transitions))
            local batch = Transition(zip(unpack(transitions)))

            -- non_final_mask = torch.tensor(tuple(map(lambda s: s is not None,
            --                                       batch.next_state)), device=device, dtype=torch.bool)
            local non_final_mask = tide.tensor(map(function(s) return s ~= nil end, batch.next_state),
                { device = device, dtype = tide.bool })
            -- non_final_next_states = torch.cat([s for s in batch.next_state
            --                                             if s is not None])
            local non_final_next_states = tide.cat(filter(function(s) return s ~= nil end, batch.next_state))
            local state_batch = tide.cat(batch.state)
            local action_batch = tide.cat(batch.action)
            local reward_batch = tide.cat(batch.reward)

            -- state_action_values = policy_net(state_batch).gather(1, action_batch)
            local state_action_values = policy_net(state_batch):gather(2, action_batch)

            -- next_state_values = torch.zeros(BATCH_SIZE, device=device)
            local next_state_values = tide.zeros(BATCH_SIZE, { device = device })
            tide.no_grad(function()
                -- next_state_values[non_final_mask] = target_net(non_final_next_states).max(1)[0]
                next_state_values[non_final_mask] = target_net(non_final_next_states):max(2)
            end)
            -- Compute the expected Q values
            local expected_state_action_values = (next_state_values * GAMMA) + reward_batch

            -- Compute Huber loss
            local criterion = nn.SmoothL1Loss()
            local loss = criterion(state_action_values, expected_state_action_values:unsqueeze(2))

            -- Optimize the model
            optimizer:zero_grad()
            loss:backward()
            -- In-place gradient clipping
            nn.utils.clip_grad_value_(policy_net:parameters(), 100)
            optimizer:step()
            losses[#losses + 1] = loss:item()
        end

        -- num_episodes = 600 if torch.cuda.is_available() else 50
        local num_episodes = 4
        local checked_soft_update = false
        -- for i_episode in range(num_episodes):
        for _ = 1, num_episodes do
            -- Initialize the environment and get its state
            -- state, info = env.reset()
            local info -- luacheck: ignore
            state, info = env.reset()
            -- state = torch.tensor(state, dtype=torch.float32, device=device).unsqueeze(0)
            state = tide.tensor(state, { dtype = tide.float32, device = device }):unsqueeze(1)
            -- for t in count():
            local t = 0
            while true do
                local action = select_action(state)
                -- observation, reward, terminated, truncated, _ = env.step(action.item())
                local observation, reward, terminated, truncated, _ = env.step(action:item())
                -- reward = torch.tensor([reward], device=device)
                reward = tide.tensor({ reward }, { device = device })
                -- done = terminated or truncated
                local done = terminated or truncated

                local next_state
                if terminated then
                    next_state = nil
                else
                    -- next_state = torch.tensor(observation, dtype=torch.float32, device=device).unsqueeze(0)
                    next_state = tide.tensor(observation, { dtype = tide.float32, device = device }):unsqueeze(1)
                end

                -- Store the transition in memory
                memory:push(state, action, next_state, reward)

                -- Move to the next state
                state = next_state

                -- Perform one step of the optimization (on the policy network)
                optimize_model()

                -- Soft update of the target network's weights
                -- θ′ ← τ θ + (1 −τ )θ′
                -- target_net_state_dict = target_net.state_dict()
                local target_net_state_dict = target_net:state_dict()
                -- policy_net_state_dict = policy_net.state_dict()
                local policy_net_state_dict = policy_net:state_dict()
                local old = target_net.layer1.weight:clone()
                -- for key in policy_net_state_dict:
                for key in pairs(policy_net_state_dict) do
                    -- target_net_state_dict[key] = policy_net_state_dict[key]*TAU + target_net_state_dict[key]*(1-TAU)
                    target_net_state_dict[key] = policy_net_state_dict[key] * TAU + target_net_state_dict[key] * (1 - TAU)
                end
                -- target_net.load_state_dict(target_net_state_dict)
                target_net:load_state_dict(target_net_state_dict)
                if #losses > 0 and not checked_soft_update then
                    checked_soft_update = true
                    local want = policy_net.layer1.weight * TAU + old * (1 - TAU)
                    assert.is_true((target_net.layer1.weight - want):abs():max():item() < 1e-7)
                    assert.is_true((target_net.layer1.weight - old):abs():max():item() > 0)
                    assert.is_nil(target_net.layer1.weight.grad)
                end

                if done then
                    -- episode_durations.append(t + 1)
                    episode_durations[#episode_durations + 1] = t + 1
                    break
                end
                t = t + 1
            end
        end
        assert.are.equal(num_episodes, #episode_durations)
        assert.is_true(#losses > 0, "optimize_model ran")
        assert.is_true(checked_soft_update)
        for _, l in ipairs(losses) do
            assert(is_finite(l), "DQN loss " .. l)
        end
        -- plot_durations: durations_t = torch.tensor(episode_durations, dtype=torch.float)
        local durations_t = tide.tensor(episode_durations, { dtype = tide.float })
        assert.are.equal(num_episodes, #durations_t)
        -- means = durations_t.unfold(0, 100, 1).mean(1).view(-1)  (windows of 2 here)
        local means = durations_t:unfold(1, 2, 1):mean(2):view(-1)
        -- means = torch.cat((torch.zeros(99), means))
        means = tide.cat({ tide.zeros(1), means })
        assert.are.same({ num_episodes }, means.shape)
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. beginner/fgsm_tutorial.py
---------------------------------------------------------------------------------------------
describe("beginner/fgsm_tutorial.py", function()
    -- LeNet Model definition
    local Net = nn.Module:extend("Net")
    function Net:init()
        -- self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv1 = nn.Conv2d(1, 10, { kernel_size = 5 })
        self.conv2 = nn.Conv2d(10, 20, { kernel_size = 5 })
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)
    end

    function Net:forward(x)
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x:view(-1, 320)
        x = F.relu(self.fc1(x))
        -- x = F.dropout(x, training=self.training)
        x = F.dropout(x, { training = self.training })
        x = self.fc2(x)
        -- return F.log_softmax(x, dim=1)
        return F.log_softmax(x, { dim = 2 })
    end

    local device = tide.device("cpu")

    -- FGSM attack code
    local function fgsm_attack(image, epsilon, data_grad)
        -- Collect the element-wise sign of the data gradient
        -- sign_data_grad = data_grad.sign()
        local sign_data_grad = data_grad:sign()
        -- Create the perturbed image by adjusting each pixel of the input image
        -- perturbed_image = image + epsilon*sign_data_grad
        local perturbed_image = image + epsilon * sign_data_grad
        -- Adding clipping to maintain [0,1] range
        -- perturbed_image = torch.clamp(perturbed_image, 0, 1)
        perturbed_image = tide.clamp(perturbed_image, 0, 1)
        -- Return the perturbed image
        return perturbed_image
    end

    -- restores the tensors to their original scale
    -- def denorm(batch, mean=[0.1307], std=[0.3081]):
    local function denorm(batch, mean, std)
        mean, std = mean or { 0.1307 }, std or { 0.3081 }
        -- if isinstance(mean, list):
        if type(mean) == "table" and not tide.is_tensor(mean) then
            -- mean = torch.tensor(mean).to(device)
            mean = tide.tensor(mean):to(device)
        end
        if type(std) == "table" and not tide.is_tensor(std) then
            std = tide.tensor(std):to(device)
        end
        -- return batch * std.view(1, -1, 1, 1) + mean.view(1, -1, 1, 1)
        return batch * std:view(1, -1, 1, 1) + mean:view(1, -1, 1, 1)
    end

    -- torchvision: transforms.Normalize((0.1307,), (0.3081,)), written out
    local function normalize(x)
        return (x - 0.1307) / 0.3081
    end

    local function test(model, device, test_loader, epsilon) -- luacheck: ignore (shadows device)
        -- Accuracy counter
        local correct = 0
        local adv_examples = {}

        -- Loop over all examples in test set
        for data, target in test_loader:iter() do
            repeat -- `break` below is Python's `continue`
                -- Send the data and label to the device
                -- data, target = data.to(device), target.to(device)
                data, target = data:to(device), target:to(device)

                -- Set requires_grad attribute of tensor. Important for Attack
                -- data.requires_grad = True
                data.requires_grad = true

                -- Forward pass the data through the model
                local output = model(data)
                -- init_pred = output.max(1, keepdim=True)[1] # get the index of the max log-probability
                local _, init_pred = output:max(2, { keepdim = true })

                -- If the initial prediction is wrong, don't bother attacking, just move on
                if init_pred:item() ~= target:item() then
                    break -- continue
                end

                -- Calculate the loss
                local loss = F.nll_loss(output, target)

                -- Zero all existing gradients
                model:zero_grad()

                -- Calculate gradients of model in backward pass
                loss:backward()

                -- Collect ``datagrad``
                -- data_grad = data.grad.data
                local data_grad = data.grad.data

                -- Restore the data to its original scale
                local data_denorm = denorm(data)

                -- Call FGSM Attack
                local perturbed_data = fgsm_attack(data_denorm, epsilon, data_grad)

                -- Reapply normalization
                -- perturbed_data_normalized = transforms.Normalize((0.1307,), (0.3081,))(perturbed_data)
                local perturbed_data_normalized = normalize(perturbed_data)

                -- Re-classify the perturbed image
                output = model(perturbed_data_normalized)

                -- Check for success
                local _, final_pred = output:max(2, { keepdim = true })
                -- if final_pred.item() == target.item():
                if final_pred:item() == target:item() then
                    correct = correct + 1
                    -- Special case for saving 0 epsilon examples
                    -- if epsilon == 0 and len(adv_examples) < 5:
                    if epsilon == 0 and #adv_examples < 5 then
                        -- adv_ex = perturbed_data.squeeze().detach().cpu().numpy()
                        local adv_ex = perturbed_data:squeeze():detach():cpu():tolist()
                        -- adv_examples.append( (init_pred.item(), final_pred.item(), adv_ex) )
                        adv_examples[#adv_examples + 1] = { init_pred:item(), final_pred:item(), adv_ex }
                    end
                else
                    -- Save some adv examples for visualization later
                    if #adv_examples < 5 then
                        local adv_ex = perturbed_data:squeeze():detach():cpu():tolist()
                        adv_examples[#adv_examples + 1] = { init_pred:item(), final_pred:item(), adv_ex }
                    end
                end
            until true
        end

        -- Calculate final accuracy for this epsilon
        -- final_acc = correct/float(len(test_loader))
        local final_acc = correct / test_loader:len()
        -- print(f"Epsilon: {epsilon}\tTest Accuracy = {correct} / {len(test_loader)} = {final_acc}")
        local line = string.format("Epsilon: %s\tTest Accuracy = %d / %d = %s", epsilon, correct,
            test_loader:len(), final_acc)
        assert.is_truthy(line:find("Test Accuracy", 1, true))

        -- Return the accuracy and an adversarial example
        return final_acc, adv_examples
    end

    it("fgsm_attack on fixed LeNet weights against PyTorch 1.13 (denorm, sign, clamp, renormalize)", function()
        -- model = Net().to(device)
        local model = Net():to(device)
        fill(model, 3.0)
        -- Set the model in evaluation mode. In this case this is for the Dropout layers
        model:eval()
        local data = normalize((fixed({ 1, 1, 28, 28 }, 0.5) * 5 + 0.5):clamp(0, 1))
        data.requires_grad = true
        local output = model(data)
        local _, init_pred = output:max(2, { keepdim = true })
        -- torch: init_pred 2 (0-based)
        assert.are.equal(3, init_pred:item())
        local target = init_pred:view(1)
        local loss = F.nll_loss(output, target)
        model:zero_grad()
        loss:backward()
        local data_grad = data.grad.data
        assert_close(1.9638350009918213, loss:item(), 1e-5, "nll_loss")
        assert_close(5.532840251922607, data_grad:abs():sum():item(), 1e-4, "|data_grad| sum")
        local g = { 0.009454173035919666, 0.01054964680224657, 0.0005705473595298827, -0.01855974830687046 }
        for j = 1, 4 do
            -- torch: data_grad[0, 0, 10, 10:14]
            assert.is_true(math.abs(g[j] - data_grad[1][1][11][10 + j]:item()) < 1e-6)
        end
        -- torch, per epsilon: the perturbed image's sum, the loss after the attack, its prediction
        local want = {
            [0.1] = { 392.38470458984375, 2.383603572845459, 8 },
            [0.3] = { 390.84259033203125, 5.512677192687988, 10 },
        }
        for _, eps in ipairs({ 0.1, 0.3 }) do
            local perturbed = fgsm_attack(denorm(data), eps, data_grad)
            assert.is_true(perturbed:min():item() >= 0 and perturbed:max():item() <= 1)
            local out2 = model(normalize(perturbed))
            assert_close(want[eps][1], perturbed:sum():item(), 1e-5, "perturbed sum")
            assert_close(want[eps][2], F.nll_loss(out2, target):item(), 1e-5, "loss after the attack")
            local _, final_pred = out2:max(2, { keepdim = true })
            assert.are.equal(want[eps][3], final_pred:item())
        end
        -- data.grad was written, the weights' grads too; data itself is unchanged by the attack
        assert.is_not_nil(model.conv1.weight.grad)
    end)

    it("model.zero_grad(set_to_none=False), PyTorch 1.13's default, zeroes the gradients in place", function()
        tide.manual_seed(5)
        local model = Net()
        model:eval()
        local data = tide.rand(1, 1, 28, 28)
        local function grads()
            local loss = F.nll_loss(model(data), tide.tensor({ 4 }))
            loss:backward()
        end
        grads()
        local g = model.fc2.weight.grad
        local first = g:clone()
        -- model.zero_grad(set_to_none=False)
        model:zero_grad({ set_to_none = false })
        assert.is_true(rawequal(g, model.fc2.weight.grad), "the same gradient tensor, zeroed")
        assert.are.equal(0, g:abs():max():item())
        grads()
        assert.is_true((model.fc2.weight.grad - first):abs():max():item() < 1e-6)
        -- by position, and an optimizer's too
        local opt = optim.SGD(model:parameters(), { lr = 0.1 })
        opt:zero_grad(false)
        assert.are.equal(0, model.conv1.weight.grad:abs():max():item())
        -- nil or true: the gradients go (tide's default, PyTorch 2's)
        opt:zero_grad({ set_to_none = true })
        assert.is_nil(model.conv1.weight.grad)
        grads()
        model:zero_grad()
        assert.is_nil(model.fc2.weight.grad)
        assert.has_error(function() model:zero_grad("no") end,
            "tide: zero_grad: set_to_none must be a boolean, got string")
        assert.has_error(function() opt:zero_grad({ set_to_nil = true }) end,
            'tide: zero_grad: unknown option "set_to_nil"; options are set_to_none')
    end)

    it("the test loop over epsilons: skips misclassified images, keeps adv_examples as Lua tables", function()
        tide.manual_seed(42)
        -- epsilons = [0, .05, .1, .15, .2, .25, .3]
        local epsilons = { 0, .05, .1, .15, .2, .25, .3 }
        local model = Net():to(device)
        -- the pretrained LeNet: a few steps of the MNIST example on random images instead
        local images = normalize(tide.rand(16, 1, 28, 28))
        local labels = tide.randint(1, 11, { 16 })
        local opt = optim.SGD(model:parameters(), { lr = 0.05, momentum = 0.5 })
        model:train()
        local first, last
        for _ = 1, 8 do
            opt:zero_grad()
            local l = F.nll_loss(model(images), labels)
            l:backward()
            opt:step()
            first = first or l:item()
            last = l:item()
        end
        assert.is_true(last < first, "LeNet loss fell: " .. first .. " -> " .. last)
        model:eval()
        -- the test set: six images labelled with the model's own prediction but for the last
        local test_images = images[{ { 1, 6 } }]
        local targets = tide.no_grad(function()
            return select(2, model(test_images):max(2))
        end)
        targets[6] = targets[6]:item() % 10 + 1 -- a wrong label: skipped, as a misclassification
        local ds = tide.data.TensorDataset(test_images, targets)
        -- test_loader = torch.utils.data.DataLoader(..., batch_size=1, shuffle=True)
        local test_loader = tide.data.DataLoader(ds, { batch_size = 1, shuffle = true })

        local accuracies = {}
        local examples = {}

        -- Run test for each epsilon
        for _, eps in ipairs(epsilons) do
            -- acc, ex = test(model, device, test_loader, eps)
            local acc, ex = test(model, device, test_loader, eps)
            accuracies[#accuracies + 1] = acc
            examples[#examples + 1] = ex
        end
        -- epsilon 0 leaves the five correctly classified images as they were
        assert_close(5 / 6, accuracies[1], 1e-12, "accuracy at epsilon 0")
        assert.are.equal(5, #examples[1])
        for i = 2, #epsilons do
            assert.is_true(accuracies[i] <= 5 / 6)
        end
        assert.is_true(accuracies[#accuracies] < accuracies[1], "the attack fools the model at 0.3")
        -- orig,adv,ex = examples[i][j]
        local orig, adv, ex = unpack(examples[1][1])
        assert.are.equal(orig, adv)
        assert.are.equal("table", type(ex))
        assert.are.equal(28, #ex)
        assert.are.equal(28, #ex[1])
        assert.are.equal("number", type(ex[1][1]))
        -- an attacked example: its image moved by epsilon per pixel (before clamping)
        local last_ex = examples[#examples]
        if #last_ex > 0 then
            assert.are.equal(28, #last_ex[1][3])
        end
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. beginner/nlp/advanced_tutorial.py
---------------------------------------------------------------------------------------------
describe("beginner/nlp/advanced_tutorial.py", function()
    -- START_TAG = "<START>"
    local START_TAG = "<START>"
    local STOP_TAG = "<STOP>"

    -- len(d) of a dict
    local function len(d)
        local n = 0
        for _ in pairs(d) do
            n = n + 1
        end
        return n
    end

    -- def argmax(vec):
    local function argmax(vec)
        -- return the argmax as a python int
        -- _, idx = torch.max(vec, 1)
        local _, idx = tide.max(vec, 2)
        return idx:item()
    end

    -- def prepare_sequence(seq, to_ix):
    local function prepare_sequence(seq, to_ix)
        -- idxs = [to_ix[w] for w in seq]
        local idxs = {}
        for i, w in ipairs(seq) do
            idxs[i] = to_ix[w]
        end
        -- return torch.tensor(idxs, dtype=torch.long)
        return tide.tensor(idxs, { dtype = tide.long })
    end

    -- Compute log sum exp in a numerically stable way for the forward algorithm
    local function log_sum_exp(vec)
        -- max_score = vec[0, argmax(vec)]
        local max_score = vec[{ 1, argmax(vec) }]
        -- max_score_broadcast = max_score.view(1, -1).expand(1, vec.size()[1])
        local max_score_broadcast = max_score:view(1, -1):expand(1, vec:size()[2])
        -- return max_score + \
        --     torch.log(torch.sum(torch.exp(vec - max_score_broadcast)))
        return max_score +
            tide.log(tide.sum(tide.exp(vec - max_score_broadcast)))
    end

    -- best_path.reverse()
    local function reverse(t)
        for i = 1, math.floor(#t / 2) do
            t[i], t[#t - i + 1] = t[#t - i + 1], t[i]
        end
    end

    -- class BiLSTM_CRF(nn.Module):
    local BiLSTM_CRF = nn.Module:extend("BiLSTM_CRF")

    function BiLSTM_CRF:init(vocab_size, tag_to_ix, embedding_dim, hidden_dim)
        self.embedding_dim = embedding_dim
        self.hidden_dim = hidden_dim
        self.vocab_size = vocab_size
        self.tag_to_ix = tag_to_ix
        -- self.tagset_size = len(tag_to_ix)
        self.tagset_size = len(tag_to_ix)

        self.word_embeds = nn.Embedding(vocab_size, embedding_dim)
        -- self.lstm = nn.LSTM(embedding_dim, hidden_dim // 2,
        --                     num_layers=1, bidirectional=True)
        self.lstm = nn.LSTM(embedding_dim, math.floor(hidden_dim / 2),
            { num_layers = 1, bidirectional = true })

        -- Maps the output of the LSTM into tag space.
        self.hidden2tag = nn.Linear(hidden_dim, self.tagset_size)

        -- Matrix of transition parameters.  Entry i,j is the score of
        -- transitioning *to* i *from* j.
        -- self.transitions = nn.Parameter(
        --     torch.randn(self.tagset_size, self.tagset_size))
        self.transitions = nn.Parameter(
            tide.randn(self.tagset_size, self.tagset_size))

        -- These two statements enforce the constraint that we never transfer
        -- to the start tag and we never transfer from the stop tag
        -- self.transitions.data[tag_to_ix[START_TAG], :] = -10000
        self.transitions.data[{ tag_to_ix[START_TAG], {} }] = -10000
        -- self.transitions.data[:, tag_to_ix[STOP_TAG]] = -10000
        self.transitions.data[{ {}, tag_to_ix[STOP_TAG] }] = -10000

        self.hidden = self:init_hidden()
    end

    function BiLSTM_CRF:init_hidden()
        -- return (torch.randn(2, 1, self.hidden_dim // 2),
        --         torch.randn(2, 1, self.hidden_dim // 2))
        return { tide.randn(2, 1, math.floor(self.hidden_dim / 2)),
            tide.randn(2, 1, math.floor(self.hidden_dim / 2)) }
    end

    function BiLSTM_CRF:_forward_alg(feats)
        -- Do the forward algorithm to compute the partition function
        -- init_alphas = torch.full((1, self.tagset_size), -10000.)
        local init_alphas = tide.full({ 1, self.tagset_size }, -10000.)
        -- START_TAG has all of the score.
        -- init_alphas[0][self.tag_to_ix[START_TAG]] = 0.
        init_alphas[1][self.tag_to_ix[START_TAG]] = 0.

        -- Wrap in a variable so that we will get automatic backprop
        local forward_var = init_alphas

        -- Iterate through the sentence
        -- for feat in feats:  (a tensor iterates its rows: Tensor.__iter__ is unbind(0))
        for _, feat in ipairs(feats:unbind()) do
            local alphas_t = {} -- The forward tensors at this timestep
            -- for next_tag in range(self.tagset_size):
            for next_tag = 1, self.tagset_size do
                -- broadcast the emission score: it is the same regardless of
                -- the previous tag
                -- emit_score = feat[next_tag].view(
                --     1, -1).expand(1, self.tagset_size)
                local emit_score = feat[next_tag]:view(
                    1, -1):expand(1, self.tagset_size)
                -- the ith entry of trans_score is the score of transitioning to
                -- next_tag from i
                -- trans_score = self.transitions[next_tag].view(1, -1)
                local trans_score = self.transitions[next_tag]:view(1, -1)
                -- The ith entry of next_tag_var is the value for the
                -- edge (i -> next_tag) before we do log-sum-exp
                local next_tag_var = forward_var + trans_score + emit_score
                -- The forward variable for this tag is log-sum-exp of all the
                -- scores.
                -- alphas_t.append(log_sum_exp(next_tag_var).view(1))
                alphas_t[#alphas_t + 1] = log_sum_exp(next_tag_var):view(1)
            end
            -- forward_var = torch.cat(alphas_t).view(1, -1)
            forward_var = tide.cat(alphas_t):view(1, -1)
        end
        -- terminal_var = forward_var + self.transitions[self.tag_to_ix[STOP_TAG]]
        local terminal_var = forward_var + self.transitions[self.tag_to_ix[STOP_TAG]]
        local alpha = log_sum_exp(terminal_var)
        return alpha
    end

    function BiLSTM_CRF:_get_lstm_features(sentence)
        self.hidden = self:init_hidden()
        -- embeds = self.word_embeds(sentence).view(len(sentence), 1, -1)
        local embeds = self.word_embeds(sentence):view(#sentence, 1, -1)
        -- lstm_out, self.hidden = self.lstm(embeds, self.hidden)
        local lstm_out
        lstm_out, self.hidden = self.lstm(embeds, self.hidden)
        -- lstm_out = lstm_out.view(len(sentence), self.hidden_dim)
        lstm_out = lstm_out:view(#sentence, self.hidden_dim)
        local lstm_feats = self.hidden2tag(lstm_out)
        return lstm_feats
    end

    function BiLSTM_CRF:_score_sentence(feats, tags)
        -- Gives the score of a provided tag sequence
        -- score = torch.zeros(1)
        local score = tide.zeros(1)
        -- tags = torch.cat([torch.tensor([self.tag_to_ix[START_TAG]], dtype=torch.long), tags])
        tags = tide.cat({ tide.tensor({ self.tag_to_ix[START_TAG] }, { dtype = tide.long }), tags })
        -- for i, feat in enumerate(feats):  (Lua's i is Python's i + 1, so the indices read the same)
        for i, feat in ipairs(feats:unbind()) do
            -- score = score + \
            --     self.transitions[tags[i + 1], tags[i]] + feat[tags[i + 1]]
            score = score +
                self.transitions[{ tags[i + 1], tags[i] }] + feat[tags[i + 1]]
        end
        -- score = score + self.transitions[self.tag_to_ix[STOP_TAG], tags[-1]]
        score = score + self.transitions[{ self.tag_to_ix[STOP_TAG], tags[-1] }]
        return score
    end

    function BiLSTM_CRF:_viterbi_decode(feats)
        local backpointers = {}

        -- Initialize the viterbi variables in log space
        -- init_vvars = torch.full((1, self.tagset_size), -10000.)
        local init_vvars = tide.full({ 1, self.tagset_size }, -10000.)
        -- init_vvars[0][self.tag_to_ix[START_TAG]] = 0
        init_vvars[1][self.tag_to_ix[START_TAG]] = 0

        -- forward_var at step i holds the viterbi variables for step i-1
        local forward_var = init_vvars
        for _, feat in ipairs(feats:unbind()) do
            local bptrs_t = {} -- holds the backpointers for this step
            local viterbivars_t = {} -- holds the viterbi variables for this step

            for next_tag = 1, self.tagset_size do
                -- next_tag_var[i] holds the viterbi variable for tag i at the
                -- previous step, plus the score of transitioning
                -- from tag i to next_tag.
                -- We don't include the emission scores here because the max
                -- does not depend on them (we add them in below)
                -- next_tag_var = forward_var + self.transitions[next_tag]
                local next_tag_var = forward_var + self.transitions[next_tag]
                local best_tag_id = argmax(next_tag_var)
                -- bptrs_t.append(best_tag_id)
                bptrs_t[#bptrs_t + 1] = best_tag_id
                -- viterbivars_t.append(next_tag_var[0][best_tag_id].view(1))
                viterbivars_t[#viterbivars_t + 1] = next_tag_var[1][best_tag_id]:view(1)
            end
            -- Now add in the emission scores, and assign forward_var to the set
            -- of viterbi variables we just computed
            -- forward_var = (torch.cat(viterbivars_t) + feat).view(1, -1)
            forward_var = (tide.cat(viterbivars_t) + feat):view(1, -1)
            backpointers[#backpointers + 1] = bptrs_t
        end

        -- Transition to STOP_TAG
        local terminal_var = forward_var + self.transitions[self.tag_to_ix[STOP_TAG]]
        local best_tag_id = argmax(terminal_var)
        -- path_score = terminal_var[0][best_tag_id]
        local path_score = terminal_var[1][best_tag_id]

        -- Follow the back pointers to decode the best path.
        local best_path = { best_tag_id }
        -- for bptrs_t in reversed(backpointers):
        for k = #backpointers, 1, -1 do
            local bptrs_t = backpointers[k]
            best_tag_id = bptrs_t[best_tag_id]
            best_path[#best_path + 1] = best_tag_id
        end
        -- Pop off the start tag (we dont want to return that to the caller)
        -- start = best_path.pop()
        local start = table.remove(best_path)
        assert(start == self.tag_to_ix[START_TAG]) -- Sanity check
        -- best_path.reverse()
        reverse(best_path)
        return path_score, best_path
    end

    function BiLSTM_CRF:neg_log_likelihood(sentence, tags)
        local feats = self:_get_lstm_features(sentence)
        local forward_score = self:_forward_alg(feats)
        local gold_score = self:_score_sentence(feats, tags)
        return forward_score - gold_score
    end

    function BiLSTM_CRF:forward(sentence) -- dont confuse this with _forward_alg above.
        -- Get the emission scores from the BiLSTM
        local lstm_feats = self:_get_lstm_features(sentence)

        -- Find the best path, given the features.
        local score, tag_seq = self:_viterbi_decode(lstm_feats)
        return score, tag_seq
    end

    -- tag_to_ix = {"B": 0, "I": 1, "O": 2, START_TAG: 3, STOP_TAG: 4}
    local tag_to_ix = { B = 1, I = 2, O = 3, [START_TAG] = 4, [STOP_TAG] = 5 }

    it("log_sum_exp, the forward algorithm, the gold score and Viterbi against PyTorch 1.13", function()
        tide.manual_seed(1)
        local model = BiLSTM_CRF(3, tag_to_ix, 5, 4)
        -- the START row and STOP column hold -10000 after __init__
        assert.are.equal(-10000, model.transitions[tag_to_ix[START_TAG]]:max():item())
        assert.are.equal(-10000, model.transitions[{ {}, tag_to_ix[STOP_TAG] }]:max():item())
        assert.is_true(model.transitions.requires_grad)
        -- fixed transitions and emission scores (the reference script's)
        tide.no_grad(function()
            model.transitions:copy_(fixed({ 5, 5 }, 4.0) * 10)
        end)
        model.transitions.data[{ tag_to_ix[START_TAG], {} }] = -10000
        model.transitions.data[{ {}, tag_to_ix[STOP_TAG] }] = -10000
        local feats = (fixed({ 4, 5 }, 7.0) * 25):requires_grad_()

        -- log_sum_exp of a [1, n] row is logsumexp
        local v = tide.tensor({ { 1.0, -2.0, 3.5, 0.25 } })
        assert_close(tide.logsumexp(v, 2):item(), log_sum_exp(v):item(), 1e-6, "log_sum_exp")
        assert.are.equal(3, argmax(v))

        local alpha = model:_forward_alg(feats)
        -- torch: _forward_alg(feats) = 10.4986...
        assert.are.same({}, alpha.shape)
        assert_close(10.49867057800293, alpha:item(), 1e-5, "forward algorithm")
        -- torch tags [0, 1, 2, 0]
        local tags = tide.tensor({ 1, 2, 3, 1 }, { dtype = tide.long })
        local gold = model:_score_sentence(feats, tags)
        assert.are.same({ 1 }, gold.shape)
        assert_close(-4.862338066101074, gold:item(), 1e-5, "gold score")
        local nll = alpha - gold
        assert_close(15.361008644104004, nll:item(), 1e-5, "neg log likelihood")
        nll:backward()
        local trans_row0 = { 0.00936875306069851, 0.11368215829133987, -0.849474310874939,
            -0.9951770305633545, 0.0 }
        local feats_row1 = { 0.2514908015727997, -0.5237756967544556, 0.2722848653793335, 0.0, 0.0 }
        for j = 1, 5 do
            assert.is_true(math.abs(trans_row0[j] - model.transitions.grad[1][j]:item()) < 1e-5,
                "transitions.grad[0]")
            assert.is_true(math.abs(feats_row1[j] - feats.grad[2][j]:item()) < 1e-5, "feats.grad[1]")
        end
        -- torch: _viterbi_decode(feats) = (9.3308..., [2, 1, 2, 2])
        local path_score, best_path = model:_viterbi_decode(feats)
        assert_close(9.330840110778809, path_score:item(), 1e-5, "Viterbi path score")
        assert.are.same({ 3, 2, 3, 3 }, best_path)
    end)

    it("training: neg_log_likelihood, SGD(weight_decay), predictions before and after under no_grad", function()
        tide.manual_seed(1)
        local EMBEDDING_DIM = 5
        local HIDDEN_DIM = 4

        -- Make up some training data
        local function split(s)
            local out = {}
            for w in s:gmatch("%S+") do
                out[#out + 1] = w
            end
            return out
        end
        local training_data = { {
            split("the wall street journal reported today that apple corporation made money"),
            split("B I I I O O O B I O O"),
        }, {
            split("georgia tech is a university in georgia"),
            split("B I O O O O B"),
        } }

        local word_to_ix = {}
        local n_words = 0
        -- for sentence, tags in training_data:
        for _, pair in ipairs(training_data) do
            local sentence = pair[1]
            for _, word in ipairs(sentence) do
                if word_to_ix[word] == nil then
                    -- word_to_ix[word] = len(word_to_ix)  (1-based: the count after adding)
                    n_words = n_words + 1
                    word_to_ix[word] = n_words
                end
            end
        end

        -- model = BiLSTM_CRF(len(word_to_ix), tag_to_ix, EMBEDDING_DIM, HIDDEN_DIM)
        local model = BiLSTM_CRF(len(word_to_ix), tag_to_ix, EMBEDDING_DIM, HIDDEN_DIM)
        -- optimizer = optim.SGD(model.parameters(), lr=0.01, weight_decay=1e-4)
        local optimizer = optim.SGD(model:parameters(), { lr = 0.01, weight_decay = 1e-4 })
        assert.are.equal(1e-4, optimizer.param_groups[1].weight_decay)

        -- Check predictions before training
        -- with torch.no_grad():
        local before = tide.no_grad(function()
            local precheck_sent = prepare_sequence(training_data[1][1], word_to_ix)
            -- precheck_tags = torch.tensor([tag_to_ix[t] for t in training_data[0][1]], dtype=torch.long)
            local tag_ixs = {}
            for i, t in ipairs(training_data[1][2]) do
                tag_ixs[i] = tag_to_ix[t]
            end
            local precheck_tags = tide.tensor(tag_ixs, { dtype = tide.long })
            assert.are.same({ 11 }, precheck_tags.shape)
            -- print(model(precheck_sent))
            local score, tag_seq = model(precheck_sent)
            assert.is_nil(score.grad_fn)
            return { score:item(), tag_seq }
        end)
        assert.are.equal(11, #before[2])
        for _, t in ipairs(before[2]) do
            assert.is_true(t >= 1 and t <= 3, "a real tag, never START or STOP")
        end

        -- Make sure prepare_sequence from earlier in the LSTM section is loaded
        -- for epoch in range(300):  (again, normally you would NOT do 300 epochs, it is toy data)
        local epoch_losses = {}
        for epoch = 1, 6 do
            epoch_losses[epoch] = 0
            for _, pair in ipairs(training_data) do
                local sentence, tags = pair[1], pair[2]
                -- Step 1. Remember that Pytorch accumulates gradients.
                -- We need to clear them out before each instance
                model:zero_grad()

                -- Step 2. Get our inputs ready for the network, that is,
                -- turn them into Tensors of word indices.
                local sentence_in = prepare_sequence(sentence, word_to_ix)
                -- targets = torch.tensor([tag_to_ix[t] for t in tags], dtype=torch.long)
                local tix = {}
                for i, t in ipairs(tags) do
                    tix[i] = tag_to_ix[t]
                end
                local targets = tide.tensor(tix, { dtype = tide.long })

                -- Step 3. Run our forward pass.
                local loss = model:neg_log_likelihood(sentence_in, targets)
                assert.are.same({ 1 }, loss.shape)

                -- Step 4. Compute the loss, gradients, and update the parameters by
                -- calling optimizer.step()
                loss:backward()
                optimizer:step()
                epoch_losses[epoch] = epoch_losses[epoch] + loss:item()
            end
            assert(is_finite(epoch_losses[epoch]), "BiLSTM-CRF loss " .. epoch_losses[epoch])
            -- the forced -10000 entries keep their values' scale (their gradient is ~0)
            assert.is_true(model.transitions[tag_to_ix[START_TAG]]:max():item() < -9999)
        end
        assert.is_true(epoch_losses[6] < epoch_losses[1],
            "BiLSTM-CRF loss fell: " .. epoch_losses[1] .. " -> " .. epoch_losses[6])

        -- Check predictions after training
        tide.no_grad(function()
            local precheck_sent = prepare_sequence(training_data[1][1], word_to_ix)
            local score, tag_seq = model(precheck_sent)
            assert.is_true(is_finite(score:item()))
            assert.are.equal(11, #tag_seq)
        end)
    end)
end)
