-- nn.SyncBatchNorm's proof, on every rank of `mpirun -np 2|4`: each rank normalizes its shard
-- of a global batch, and gets, to 1e-5, the rows of one BatchNorm over the whole batch
-- (computed here, on each rank, in float64 as the reference): the output, the input's
-- gradient, the running statistics, and the parameters' gradients summed over the ranks (each
-- rank holds its part). Shards of different sizes, an empty one among them, and one sample per
-- rank; a converted model under DistributedDataParallel steps as one process on the
-- concatenated batch.
local tide = require("tide")
local dist = tide.distributed
local nn, optim = tide.nn, tide.optim

if not dist.is_initialized() then
    dist.init { backend = "mpi", timeout = 60 }
end
local R, W = dist.rank(), dist.world_size()

local function close(a, b, tol, what)
    assert.are.same(a.shape, b.shape)
    if a:numel() == 0 then -- an empty shard: max() has nothing to take
        return
    end
    local d = (a:double() - b:double()):abs():max():item()
    assert(d <= tol, string.format("rank %d: %s: max difference %g", R, what, d))
end

-- a BatchNorm of cls and a SyncBatchNorm with the same (seeded, not default) parameters
local function pair(cls, c)
    local bn, sbn = nn[cls](c, { momentum = 0.2 }), nn.SyncBatchNorm(c, { momentum = 0.2 })
    tide.manual_seed(11)
    tide.no_grad(function()
        sbn.weight:copy_(tide.rand({ c }) + 0.5)
        sbn.bias:copy_(tide.randn({ c }))
        bn.weight:copy_(sbn.weight)
        bn.bias:copy_(sbn.bias)
    end)
    return bn:double(), sbn
end

-- m(x) with loss (y * c):sum(): output and x's gradient
local function step(m, x, c)
    local xi = x:clone():requires_grad_(true)
    local y = m(xi)
    y:mul(c):sum():backward()
    return y, xi.grad
end

-- the rows rank r holds when rank q holds sizes[q + 1]: first row, count
local function shard(sizes, r)
    local first = 1
    for q = 0, r - 1 do
        first = first + sizes[q + 1]
    end
    return first, sizes[r + 1]
end

-- steps of training on shards of a global batch (shape's first dim the total), then eval
local function check(cls, shape, sizes, steps)
    local bn, sbn = pair(cls, shape[2])
    local first, n = shard(sizes, R)
    for s = 1, steps do
        tide.manual_seed(100 + s) -- the same global batch on every rank
        local x, c = tide.randn(shape) * 2 + 5, tide.randn(shape)
        local y1, g1 = step(bn, x:double(), c:double())
        local y2, g2 = step(sbn, x:narrow(1, first, n), c:narrow(1, first, n))
        close(y1:narrow(1, first, n), y2, 1e-5, "output at step " .. s)
        close(g1:narrow(1, first, n), g2, 1e-5, "input gradient at step " .. s)
    end
    -- each rank's parameter gradients are its part: their sum is the whole batch's
    for _, name in ipairs({ "weight", "bias" }) do
        local g = dist.all_reduce(sbn[name].grad:clone())
        close(bn[name].grad, g, 1e-5, name .. " gradient")
    end
    close(bn.running_mean, sbn.running_mean, 1e-5, "running_mean")
    close(bn.running_var, sbn.running_var, 1e-5, "running_var")
    assert.are.equal(steps, sbn.num_batches_tracked:item())
    bn:eval()
    sbn:eval()
    tide.manual_seed(200)
    local x = tide.randn(shape)
    close(bn(x:double()):narrow(1, first, n), sbn(x:narrow(1, first, n)), 1e-5, "eval output")
end

local function even(total)
    local sizes = {}
    for r = 1, W do
        sizes[r] = total // W
    end
    return sizes
end

describe("SyncBatchNorm on " .. W .. " ranks", function()
    it("is one BatchNorm2d over the global batch (equal shards)", function()
        check("BatchNorm2d", { 8, 3, 2, 3 }, even(8), 2)
    end)

    it("is one BatchNorm1d over the global batch (shards of 0, 2, 4, ... rows)", function()
        local sizes, total = {}, 0
        for r = 1, W do
            sizes[r] = 2 * (r - 1)
            total = total + sizes[r]
        end
        check("BatchNorm1d", { total, 4, 3 }, sizes, 2)
    end)

    it("takes one sample per rank", function()
        check("BatchNorm1d", { W, 3 }, even(W), 1)
        check("BatchNorm3d", { W, 2, 1, 2, 1 }, even(W), 1)
    end)

    it("raises on every rank when the job's batch has one value per channel", function()
        local m = nn.SyncBatchNorm(2)
        local x = R == 0 and tide.randn({ 1, 2 }) or tide.randn({ 0, 2 })
        assert.has_error(function()
            m(x)
        end, string.format("tide: SyncBatchNorm: expected more than 1 value per channel in " ..
            "training over all ranks, got 1 (this rank's input {%d, 2})", R == 0 and 1 or 0))
    end)

    it("trains a converted model under DistributedDataParallel as one process", function()
        local GLOBAL, STEPS = 16, 3
        local function make()
            tide.manual_seed(7)
            return nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.Tanh(), nn.Linear(8, 2))
        end
        local function train(model, sliced)
            local opt = optim.SGD(model:parameters(), { lr = 0.1, momentum = 0.9 })
            local loss_fn = nn.MSELoss()
            for s = 1, STEPS do
                tide.manual_seed(300 + s)
                local x, y = tide.randn({ GLOBAL, 6 }) * 3 + 2, tide.randn({ GLOBAL, 2 })
                if sliced then
                    local per = GLOBAL // W
                    x, y = x:narrow(1, R * per + 1, per), y:narrow(1, R * per + 1, per)
                end
                opt:zero_grad()
                loss_fn(model(x), y):backward()
                opt:step()
            end
        end
        local ref = make()
        train(ref, false)
        local m = nn.SyncBatchNorm.convert_sync_batchnorm(make())
        assert.are.equal("SyncBatchNorm", m[2].__name)
        -- small buckets: DDP's reductions start during backward, among SyncBatchNorm's
        local ddp = nn.DistributedDataParallel(m, { bucket_cap_mb = 0.0001 })
        train(ddp, true)
        assert.is_true(ddp.stats.overlapped >= 2)
        local pr, pm = ref:parameters(), m:parameters()
        for i = 1, #pr do
            close(pr[i], pm[i], 1e-5, "parameter " .. i)
        end
        close(ref[2].running_mean, m[2].running_mean, 1e-5, "running_mean")
        close(ref[2].running_var, m[2].running_var, 1e-5, "running_var")
        -- a plain BatchNorm on each shard leads elsewhere: the check can fail
        local alone = make()
        train(alone, true)
        local d = (alone[1].weight - ref[1].weight):abs():max():item()
        assert.is_true(d > 1e-4, "rank " .. R .. ": unsynchronized BatchNorm within " .. d)
    end)
end)
