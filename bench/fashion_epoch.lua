-- fashion_epoch.lua — one training epoch on Fashion-MNIST on the CPU, tide beside Debian's
-- PyTorch in the same run (bench/fashion_epoch.py, same models, same loop: shuffle, gather the
-- batch, forward, cross-entropy, backward, SGD momentum step).
--
--   lua5.4 bench/fashion_epoch.lua [--images N] [--models mlp,cnn] [--python /usr/bin/python3]
--
-- Prints "fashion <model> epoch: tide X s, pytorch Y s, ratio Z" (Z = tide / pytorch; lower
-- is better, <= 1.0 is the MLP target). Needs dataset-fashion-mnist; exits 0 with a note when
-- the data or PyTorch is missing, as a benchmark never gates CI.
local tide = require "tide"
local core = require "tide.core"
local nn, data = tide.nn, tide.data

local o = { images = 60000, models = "mlp,cnn", python = "/usr/bin/python3", batch_size = 128,
    data = "/usr/share/datasets/fashion-mnist" }
local i = 1
while i <= #arg do
    local k = arg[i]:match("^%-%-([%w-]+)$")
    if not k or arg[i + 1] == nil then
        io.stderr:write("usage: lua5.4 bench/fashion_epoch.lua [--images N] [--models mlp,cnn] "
            .. "[--python PATH] [--data DIR]\n")
        os.exit(2)
    end
    k = k:gsub("-", "_")
    o[k] = (k == "images" or k == "batch_size") and math.tointeger(tonumber(arg[i + 1]))
        or arg[i + 1]
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

local function epoch(kind)
    tide.manual_seed(0)
    local model = build(kind)
    local opt = tide.optim.SGD(model:parameters(), { lr = 0.01, momentum = 0.9 })
    local loss_fn = nn.CrossEntropyLoss()
    local loader = data.DataLoader(train, { batch_size = o.batch_size, shuffle = true, seed = 0 })
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

-- PyTorch first, then tide, each model in turn, all in this run
local py = {}
local cmd = string.format("%s bench/fashion_epoch.py --images %d --models %s --batch-size %d "
    .. "--data '%s' 2>&1", o.python, #train, o.models, o.batch_size, o.data)
local p = io.popen(cmd)
local pyout = p:read("a")
p:close()
for kind, secs in pyout:gmatch("(%a+) ([%d.e-]+) [^\n]*") do
    py[kind] = tonumber(secs)
end

for kind in o.models:gmatch("[^,]+") do
    local secs, last = epoch(kind)
    local name = string.format("fashion %s epoch (%d images, batch %d)", kind, #train,
        o.batch_size)
    if py[kind] then
        print(string.format("%s: tide %.2f s, pytorch %.2f s, ratio %.2f", name, secs, py[kind],
            secs / py[kind]))
    else
        print(string.format("%s: tide %.2f s, pytorch unavailable (%s)", name, secs,
            (pyout:match("[^\n]*Error[^\n]*") or pyout:sub(1, 200))))
    end
    io.write(string.format("  (tide last loss %.4f)\n", last))
end
