-- fashion_epoch.lua — one training epoch on Fashion-MNIST on the CPU, tide beside Debian's
-- PyTorch at its best setting, in rounds (bench/compare.lua; bench/fashion_epoch.py, same
-- models, same loop: shuffle, gather the batch, forward, cross-entropy, backward, SGD momentum).
--
--   lua5.4 bench/fashion_epoch.lua [--images N] [--cnn-images N] [--rounds N] [--models mlp,cnn]
--
-- Prints "fashion <model> epoch: tide X s, pytorch-best Y s (setting), ratio Z" (Z = median of
-- the rounds' tide / pytorch; issue 15 targets: <= 0.6 MLP, <= 0.8 CNN). The MLP runs all
-- --images (60,000), the CNN --cnn-images (12,800). Needs dataset-fashion-mnist; exits 0 with a
-- note when the data is missing, as a benchmark never gates CI.
local tide = require("tide")
local core = require("tide.core")
local nn, data = tide.nn, tide.data

local o = { images = 60000, cnn_images = 12800, rounds = 3, models = "mlp,cnn", batch_size = 128,
    data = "/usr/share/datasets/fashion-mnist" }
local i = 1
while i <= #arg do
    local k = arg[i]:match("^%-%-([%w-]+)$")
    if not k or arg[i + 1] == nil then
        io.stderr:write("usage: lua5.4 bench/fashion_epoch.lua [--images N] [--cnn-images N] "
            .. "[--rounds N] [--models mlp,cnn] [--data DIR]\n")
        os.exit(2)
    end
    k = k:gsub("-", "_")
    o[k] = (k == "data" or k == "models") and arg[i + 1] or math.tointeger(tonumber(arg[i + 1]))
    i = i + 2
end

local ok, train = pcall(data.fashion_mnist, o.data)
if not ok then
    print("fashion epoch: skipped (" .. tostring(train) .. ")")
    os.exit(0)
end
train = train:narrow(1, math.min(o.images, #train))

local function build(kind)
    if kind == "cnn" then
        return nn.Sequential(
            nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(1600, 128), nn.ReLU(), nn.Linear(128, 10))
    end
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128),
        nn.ReLU(), nn.Linear(128, 10))
end

local function epoch(kind, set)
    tide.manual_seed(0)
    local model = build(kind)
    local opt = tide.optim.SGD(model:parameters(), { lr = 0.01, momentum = 0.9 })
    local loss_fn = nn.CrossEntropyLoss()
    local loader = data.DataLoader(set, { batch_size = o.batch_size, shuffle = true, seed = 0 })
    collectgarbage()
    local t0 = core.wall_time()
    local loss
    for x, y in loader:iter() do
        opt:zero_grad()
        loss = loss_fn(model(x), y)
        loss:backward()
        opt:step()
    end
    local last = loss:item()
    return core.wall_time() - t0, last
end

-- the reference at its best, interleaved with tide in rounds (bench/compare.lua); the CNN runs
-- on its own subset (--cnn-images) so that 5 settings x rounds stay within minutes
local compare = require("bench.compare")
for kind in o.models:gmatch("[^,]+") do
    local n = kind == "cnn" and math.min(o.cnn_images, #train) or #train
    local subset = train:narrow(1, n)
    local last
    local res, why = compare.run { rounds = o.rounds,
        tide = function()
            local secs
            secs, last = epoch(kind, subset)
            return { [kind] = secs }
        end,
        reference = string.format("bench/fashion_epoch.py --images %d --models %s "
            .. "--batch-size %d --data '%s'", n, kind, o.batch_size, o.data) }
    local name = string.format("fashion %s epoch (%d images, batch %d)", kind, n, o.batch_size)
    if res and res[kind] then
        compare.print_line(name, res[kind], "s", 1, o.rounds)
    else
        print(string.format("%s: pytorch unavailable (%s)", name, why or "no figure"))
    end
    io.write(string.format("  (tide last loss %.4f)\n", last))
end
