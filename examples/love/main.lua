-- examples/love — a small LÖVE game: balls fall, a paddle driven by a tide policy network
-- (a 2-32-3 MLP: move left, stay, move right) tries to catch them, and learns every frame from
-- the frame's reward (one-step policy gradient: +1 for a move toward the ball, or for staying
-- under it; -1 otherwise).
--
--   love examples/love                        with a window (LUA_PATH / LUA_CPATH find tide)
--   TIDE_LOVE_HEADLESS=1 TIDE_LOVE_FRAMES=300 love examples/love     what `make test` runs:
--     no window; after N frames prints a summary and exits 0 when the agent has learned
--     (it caught at least twice as many balls as it missed; a random paddle catches ~1 in 4).
-- LÖVE runs LuaJIT: numbers have no integer subtype, so the network's inputs ask for float32.
local tide = require("tide")
local nn, optim = tide.nn, tide.optim

local FRAMES = tonumber(os.getenv("TIDE_LOVE_FRAMES") or "")
local STEP = 0.04 -- paddle move per frame; the field is [0, 1] wide
local game = { paddle = 0.5, x = 0.5, y = 0, caught = 0, missed = 0, frame = 0 }
local policy, opt, loss_fn

local function new_ball()
    game.x, game.y = math.random(), 0
end

function love.load()
    math.randomseed(7)
    tide.manual_seed(7)
    policy = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 3))
    opt = optim.Adam(policy:parameters(), { lr = 0.02 })
    loss_fn = nn.CrossEntropyLoss()
    new_ball()
    print(string.format("tide in LÖVE: %s, %s", _VERSION, jit and jit.version or "no JIT"))
end

-- samples an action from the policy's probabilities
local function sample(probs)
    local u, acc = math.random(), 0
    for a = 1, #probs do
        acc = acc + probs[a]
        if u <= acc then
            return a
        end
    end
    return #probs
end

function love.update()
    game.frame = game.frame + 1
    local dx = game.x - game.paddle
    local state = tide.tensor({ { dx, game.y } }, { dtype = "float32" })
    local logits = policy(state)
    local action = sample(tide.no_grad(function() return logits:softmax(2) end):totable()[1])
    local move = (action - 2) * STEP -- 1: left, 2: stay, 3: right
    game.paddle = math.max(0, math.min(1, game.paddle + move))
    -- the frame's reward: did the move bring the paddle closer to the ball?
    local closer = math.abs(game.x - game.paddle) < math.abs(dx) - 1e-9
    local reward = (closer or (action == 2 and math.abs(dx) < STEP / 2)) and 1 or -1
    -- learn now: -reward * log p(action | state)
    opt:zero_grad()
    local loss = loss_fn(logits, tide.tensor({ action })) * reward
    loss:backward()
    opt:step()
    -- the ball falls; caught when it reaches the paddle's row near it
    game.y = game.y + 0.05
    if game.y >= 1 then
        if math.abs(game.x - game.paddle) < 0.1 then
            game.caught = game.caught + 1
        else
            game.missed = game.missed + 1
        end
        new_ball()
    end
    if FRAMES and game.frame >= FRAMES then
        print(string.format("frames %d: caught %d, missed %d", game.frame, game.caught, game.missed))
        love.event.quit(game.caught >= 2 * game.missed and 0 or 1)
    end
end

function love.draw()
    local g = love.graphics
    local w, h = g.getDimensions()
    g.print(string.format("caught %d  missed %d  frame %d", game.caught, game.missed, game.frame), 8, 8)
    g.circle("fill", game.x * w, game.y * (h - 20), 8)
    g.rectangle("fill", game.paddle * w - 0.1 * w, h - 16, 0.2 * w, 8)
end
