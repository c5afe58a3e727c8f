-- agent.lua — the policy of examples/embed/host.c: a tiny network that picks one of the
-- game's actions from its state, and learns from the rewards the host hands back.
--
-- The host calls, with tensors over its own memory (no copies):
--   local Agent = dofile("agent.lua"); local policy = Agent.new(n_state, n_actions, seed)
--   action = policy:act(state, probs_out, explore)  -- writes the action probabilities into
--                                                   -- probs_out; returns a 1-based action
--   loss = policy:learn(rewards, steps)             -- REINFORCE on the frames recorded
--                                                   -- since the last learn (act with explore)
local tide = require("tide")

local has_nn, nn = pcall(require, "tide.nn")
local has_optim, optim = pcall(require, "tide.optim")
local use_nn = has_nn and has_optim and type(nn.Linear) ~= "nil"

local Agent = {}
Agent.__index = Agent

-- The network: Linear -> ReLU -> Linear with tide.nn and autograd; without them, one linear
-- layer trained with its hand-written gradient.
local function build(n_state, n_actions, hidden)
  if use_nn then
    local Net = nn.Module:extend("Policy")
    function Net:init()
      self.fc1 = nn.Linear(n_state, hidden)
      self.act = nn.ReLU()
      self.fc2 = nn.Linear(hidden, n_actions)
    end
    function Net:forward(x)
      return self.fc2(self.act(self.fc1(x)))
    end
    return Net()
  end
  return {
    W = tide.randn(n_state, n_actions) * 0.1,
    b = tide.zeros(n_actions),
  }
end

function Agent.new(n_state, n_actions, seed, opts)
  opts = opts or {}
  tide.manual_seed(seed or 1)
  math.randomseed(seed or 1)
  local self = setmetatable({
    n_state = n_state,
    n_actions = n_actions,
    lr = opts.lr or 0.5,
    net = build(n_state, n_actions, opts.hidden or 16),
    states = {},  -- recorded frames (copies: the host reuses its buffer)
    actions = {},
  }, Agent)
  if use_nn then
    self.opt = optim.SGD(self.net:parameters(), {lr = self.lr})
  end
  return self
end

function Agent:uses_nn()
  return use_nn
end

function Agent:logits(x)
  if use_nn then
    return self.net(x)
  end
  return x:matmul(self.net.W) + self.net.b
end

-- One frame. state: [n_state] over the host's memory; probs_out: [n_actions], also the host's.
function Agent:act(state, probs_out, explore)
  local probs = tide.no_grad(function()
    return self:logits(state:view(1, self.n_state)):softmax(2):view(self.n_actions)
  end)
  probs_out:copy_(probs) -- the host reads these from its own buffer
  local action
  if explore then
    local p, u = probs:totable(), math.random()
    action = #p
    for a = 1, #p do
      u = u - p[a]
      if u <= 0 then
        action = a
        break
      end
    end
    self.states[#self.states + 1] = state:clone()
    self.actions[#self.actions + 1] = action
  else
    action = probs:argmax():item()
  end
  return action
end

-- REINFORCE: minimise -mean(reward * log pi(action | state)) over the recorded frames, several
-- steps on the one batch. Without a baseline, and with rewards >= 0, those repeated steps only
-- raise the probability of rewarded actions, so they cannot run off to -inf.
-- rewards: [T] over the host's memory, one per recorded frame.
function Agent:learn(rewards, steps)
  local T = #self.actions
  assert(T > 0 and rewards:numel() == T, "learn: one reward per recorded frame")
  local X = tide.stack(self.states, 1)
  local onehot = tide.zeros(T, self.n_actions)
  for i, a in ipairs(self.actions) do
    onehot[i][a] = 1
  end
  local adv = rewards:view(T, 1)
  local loss
  for _ = 1, steps do
    if use_nn then
      self.opt:zero_grad()
      local logp = self.net(X):log_softmax(2)
      loss = -(logp * onehot * adv):sum() / T
      loss:backward()
      self.opt:step()
    else
      -- d loss / d logits = (softmax - onehot) * adv / T
      local logits = self:logits(X)
      local p = logits:softmax(2)
      loss = -(logits:log_softmax(2) * onehot * adv):sum() / T
      local g = (p - onehot) * adv / T
      self.net.W = self.net.W - X:t():matmul(g) * self.lr
      self.net.b = self.net.b - g:sum(1) * self.lr
    end
  end
  self.states, self.actions = {}, {}
  return loss:item()
end

return Agent
