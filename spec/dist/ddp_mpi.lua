-- nn.DistributedDataParallel's proof, on every rank of `mpirun -np 2|4`: N steps on per-rank
-- batches give the parameters, to 1e-5, that one process gets training on the concatenated
-- batch (computed here, on each rank, as the reference). Also: rank 0's weights win at wrap
-- time, buckets are launched during backward, and the DistributedSampler deals disjoint shards.
local tide = require("tide")
local dist = tide.distributed
local nn, optim = tide.nn, tide.optim

if not dist.is_initialized() then
    dist.init { backend = "mpi", timeout = 60 }
end
local R, W = dist.rank(), dist.world_size()
local GLOBAL = 16 -- samples per step over all ranks (divides by 2 and 4)
local STEPS = 5

local function make_model()
    tide.manual_seed(7)
    return nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 16), nn.Tanh(),
        nn.Linear(16, 3))
end

-- the global batch of a step, the same on every rank
local function batch(step)
    tide.manual_seed(1000 + step)
    return tide.randn({ GLOBAL, 10 }), tide.randn({ GLOBAL, 3 })
end

local function max_diff(a, b)
    local pa, pb, m = a:parameters(), b:parameters(), 0
    assert.are.equal(#pa, #pb)
    for i = 1, #pa do
        m = math.max(m, (pa[i] - pb[i]):abs():max():item())
    end
    return m
end

local function train(model, make_opt, slice)
    local opt = make_opt(model:parameters())
    local loss_fn = nn.MSELoss()
    for step = 1, STEPS do
        local x, y = batch(step)
        if slice then
            local per = GLOBAL // W
            x, y = x:narrow(1, R * per + 1, per), y:narrow(1, R * per + 1, per)
        end
        opt:zero_grad()
        loss_fn(model(x), y):backward()
        opt:step()
    end
end

describe("DistributedDataParallel", function()
    -- a list, not pairs(): every rank must run the same collectives in the same order
    for _, case in ipairs({
        { "sgd", function(ps)
            return optim.SGD(ps, { lr = 0.05, momentum = 0.9 })
        end },
        { "adam", function(ps)
            return optim.Adam(ps, { lr = 0.01 })
        end },
    }) do
        local name, make_opt = case[1], case[2]
        it("on " .. W .. " ranks matches one process on the concatenated batch (" .. name .. ")",
            function()
                local ref = make_model()
                train(ref, make_opt, false)

                local m = make_model()
                if R ~= 0 then -- different weights off rank 0: the wrap must broadcast rank 0's
                    tide.no_grad(function()
                        for _, p in ipairs(m:parameters()) do
                            p:add_(R)
                        end
                    end)
                end
                local ddp = nn.DistributedDataParallel(m, { bucket_cap_mb = 0.001 })
                assert.are.equal(0, max_diff(m, make_model()))
                train(ddp, make_opt, true)
                assert.is_true(max_diff(m, ref) < 1e-5, "max difference " .. max_diff(m, ref))
                -- without DDP the rank's own batches lead elsewhere: the check can fail
                local alone = make_model()
                train(alone, make_opt, true)
                assert.is_true(max_diff(alone, ref) > 1e-3)
            end)
    end

    it("launches every bucket during backward, as its gradients become ready", function()
        local m = make_model()
        local ddp = nn.DistributedDataParallel(m, { bucket_cap_mb = 0.001 })
        local x, y = batch(1)
        nn.MSELoss()(ddp(x), y):backward()
        assert.is_true(ddp.stats.buckets >= 3)
        assert.are.same({ buckets = ddp.stats.buckets, overlapped = ddp.stats.buckets, at_end = 0 },
            ddp.stats)
    end)

    it("averages a parameter that got no gradient on some rank as a zero", function()
        local a = nn.Linear(2, 1)
        local ddp = nn.DistributedDataParallel(a)
        local w = a.weight
        local x = tide.ones({ 1, 2 })
        -- rank 0's loss ignores the bias' path: its gradient is 0 there
        local out = ddp(x)
        local loss = (R == 0) and (out - a.bias):sum() or out:sum()
        loss:backward()
        assert.are.same({ { 1, 1 } }, w.grad:totable())
        assert.are.equal((W - 1) / W, a.bias.grad[1]:item())
    end)

    it("needs dist.init first and a Module", function()
        assert.has_error(function()
            nn.DistributedDataParallel("m")
        end, "tide: DistributedDataParallel: expected a Module, got string")
        assert.has_error(function()
            nn.DistributedDataParallel(nn.Linear(1, 1), { bucket_mb = 1 })
        end)
    end)
end)

describe("DistributedSampler", function()
    it("deals disjoint shards of one size that cover the dataset", function()
        local ds = tide.data.TensorDataset(tide.arange(1, 11))
        local shard = tide.data.DistributedSampler(ds, { seed = 3 })
        shard:set_epoch(2)
        local n = (10 + W - 1) // W
        assert.are.equal(n, #shard)
        local mine = tide.tensor(shard:indices(), { dtype = "int64" })
        local all = dist.all_gather(mine)
        local seen = {}
        for r = 1, W do
            for i = 1, n do
                seen[all[r][i]:item()] = true
            end
        end
        for i = 1, 10 do
            assert.is_true(seen[i], "index " .. i .. " in no shard")
        end
        local x = tide.data.DataLoader(shard, { batch_size = n }):iter()()
        assert.are.same(shard:indices(), x:totable())
    end)
end)
