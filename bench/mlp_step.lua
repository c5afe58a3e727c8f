-- mlp_step.lua: one training step (zero_grad, forward, cross-entropy, backward, SGD momentum
-- step) of an MLP 784-256-128-10 at batch 64 and 256 on the CPU, beside the same model in
-- Debian's PyTorch (bench/mlp_step.py, same thread count) in the same run; prints
-- "name: tide X ms, pytorch Y ms, ratio Z" per batch size. Issue 4 target: ratio <= 1.0.
--   lua5.4 bench/mlp_step.lua [ITERS [REPS]]     (bench/run.sh sets the paths)
-- Required as a module (bench/cnn_step.lua does), it returns the timing loop instead.
local tide = require "tide"
local nn = require "tide.nn"
local optim = require "tide.optim"
local M = {}

local PYTHON = os.getenv("TIDE_BENCH_PYTHON") or "/usr/bin/python3"
local clock = tide.wall_time or os.clock

local function median(v)
    table.sort(v)
    local n = #v
    return n % 2 == 1 and v[(n + 1) / 2] or (v[n / 2] + v[n / 2 + 1]) / 2
end

-- PyTorch gets the threads tide's BLAS uses: OPENBLAS_NUM_THREADS (or OMP_NUM_THREADS) when
-- set, else every core (OpenBLAS's default)
local function nproc()
    local env = tonumber(os.getenv("OPENBLAS_NUM_THREADS") or os.getenv("OMP_NUM_THREADS") or "")
    if env then
        return env
    end
    local p = io.popen("nproc 2>/dev/null")
    local n = p and tonumber(p:read("*a")) or 1
    if p then
        p:close()
    end
    return n or 1
end

function M.run(b)
    tide.manual_seed(0)
    local threads = nproc()
    local ref = {}
    local cmd = string.format("%s bench/%s_step.py %d %d %d %s 2>&1", PYTHON, b.kind, threads,
        b.iters, b.reps, table.concat(b.batches, " "))
    local py = io.popen(cmd)
    local out = py:read("*a")
    py:close()
    for batch, ms in out:gmatch("(%d+) ([%d%.e+-]+)") do
        ref[tonumber(batch)] = tonumber(ms)
    end
    print(string.format("%s: %s, %d threads, median of %d runs of %d steps", b.name, b.describe,
        threads, b.reps, b.iters))
    local lossf = nn.CrossEntropyLoss()
    for _, batch in ipairs(b.batches) do
        local model, opt, x, y = b.make(batch)
        local loss
        local function step()
            opt:zero_grad()
            loss = lossf(model(x), y)
            loss:backward()
            opt:step()
        end
        for _ = 1, math.max(5, math.floor(b.iters / 5)) do
            step()
        end
        local times = {}
        for _ = 1, b.reps do
            collectgarbage()
            local t0 = clock()
            for _ = 1, b.iters do
                step()
            end
            times[#times + 1] = clock() - t0
        end
        local l = loss:item()
        assert(l == l, "loss is NaN")
        local ms = median(times) / b.iters * 1e3
        local pt = ref[batch]
        if pt then
            print(string.format("%s batch %d: tide %.3f ms, pytorch %.3f ms, ratio %.2f", b.name,
                batch, ms, pt, ms / pt))
        else
            print(string.format("%s batch %d: tide %.3f ms, pytorch n/a (%s)", b.name, batch, ms,
                (out:gsub("\n", " ")):sub(1, 200)))
        end
    end
end


if ... == "bench.mlp_step" then
    return M
end

local ITERS = tonumber(arg and arg[1]) or 50
local REPS = tonumber(arg and arg[2]) or 5

M.run {
    name = "mlp_step", kind = "mlp", batches = { 64, 256 }, iters = ITERS, reps = REPS,
    make = function(batch)
        local m = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
            nn.Linear(128, 10))
        local x = tide.randn(batch, 784)
        local y = tide.rand(batch):mul(10):long():add(1)
        return m, optim.SGD(m:parameters(), { lr = 0.01, momentum = 0.9 }), x, y
    end,
    describe = "MLP 784-256-128-10 training step (fwd, cross-entropy, bwd, SGD momentum)",
}
