-- ddp_step.lua — the MLP's training step (784-256-128-10, Adam, batch 64 per rank) under
-- nn.DistributedDataParallel at 1 and 2 ranks (mpirun, one thread per rank), beside the plain
-- step in one process. Run plainly (make bench) it starts the mpirun jobs itself.
local worker = arg[1] == "--worker"
if not worker then
    local function job(np, mode)
        local cmd = ("mpirun --allow-run-as-root --oversubscribe --timeout 300 -np %d env " ..
            "OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 lua5.4 bench/ddp_step.lua --worker %s")
            :format(np, mode)
        local p = io.popen(cmd)
        local out = p:read("a")
        local ok = p:close()
        local ms = tonumber(out:match("step_ms=([%d.]+)"))
        if not ok or not ms then
            io.stderr:write(out)
            error("ddp_step: the job failed: " .. cmd)
        end
        return ms
    end
    local plain = job(1, "plain")
    local one = job(1, "ddp")
    local two = job(2, "ddp")
    print("DDP step, MLP 784-256-128-10, Adam, batch 64 per rank, 1 thread per rank")
    print(("  plain, 1 process : %7.3f ms/step  %6.0f images/s"):format(plain, 64 / plain * 1e3))
    print(("  DDP, 1 rank      : %7.3f ms/step  %6.0f images/s"):format(one, 64 / one * 1e3))
    print(("  DDP, 2 ranks     : %7.3f ms/step  %6.0f images/s (%.2fx the images/s of 1 rank)")
        :format(two, 128 / two * 1e3, (128 / two) / (64 / one)))
    return
end

local tide = require("tide")
local nn = tide.nn
local mode = arg[2]
local dist = tide.distributed
if mode == "ddp" then
    dist.init { backend = "mpi" }
end
tide.manual_seed(1)
local model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
    nn.Linear(128, 10))
local net = mode == "ddp" and nn.DistributedDataParallel(model) or model
local opt = tide.optim.Adam(model:parameters(), { lr = 1e-3 })
local loss_fn = nn.CrossEntropyLoss()
local x = tide.randn({ 64, 784 })
local y = tide.rand(64):mul(10):long():add(1)
local function step()
    opt:zero_grad()
    loss_fn(net(x), y):backward()
    opt:step()
end
for _ = 1, 20 do
    step()
end
local times = {}
for i = 1, 200 do
    if mode == "ddp" then
        dist.barrier()
    end
    local t0 = tide.core.wall_time()
    step()
    times[i] = tide.core.wall_time() - t0
end
table.sort(times)
local ms = times[#times // 2] * 1e3
if mode == "ddp" then
    local t = dist.all_reduce(tide.tensor({ ms }, { dtype = "float64" }), { op = "max" })
    ms = t[1]:item()
end
if mode ~= "ddp" or dist.rank() == 0 then
    print(("step_ms=%.4f"):format(ms))
end
