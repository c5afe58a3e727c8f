-- sync_batchnorm_spec.lua — nn.SyncBatchNorm in one process (no mpirun): without a job it is
-- BatchNorm1d/2d/3d (values, gradients, running statistics, eval); its synchronized path run
-- against a stand-in job of two ranks holding the same batch (the result must be one
-- BatchNorm's over the batch twice); convert_sync_batchnorm keeps the very same tensors; the
-- errors. Several ranks for real: spec/dist/sync_batchnorm_mpi.lua.
local tide = require("tide")
local nn = tide.nn

local function max_diff(a, b)
    return (a - b):abs():max():item()
end

local function close(a, b, tol, what)
    local d = max_diff(a, b)
    assert(d <= (tol or 1e-5), (what or "value") .. ": max difference " .. d)
end

-- the same affine parameters in a and b (not the defaults 1 and 0, so that they count)
local function same_params(a, b)
    tide.manual_seed(3)
    tide.no_grad(function()
        a.weight:copy_(tide.rand({ a.num_features }) + 0.5)
        a.bias:copy_(tide.randn({ a.num_features }))
        b.weight:copy_(a.weight)
        b.bias:copy_(a.bias)
    end)
end

-- one training step of m on x (loss (y * c):sum()): output, x's gradient
local function step(m, x, c)
    local xi = x:clone():requires_grad_(true)
    local y = m(xi)
    y:mul(c):sum():backward()
    return y, xi.grad
end

local CASES = {
    { "BatchNorm1d", { 6, 3 } },
    { "BatchNorm1d", { 4, 3, 5 } },
    { "BatchNorm2d", { 4, 3, 2, 5 } },
    { "BatchNorm3d", { 2, 3, 2, 2, 3 } },
}

describe("nn.SyncBatchNorm without a job", function()
    for _, case in ipairs(CASES) do
        local cls, shape = case[1], case[2]
        it("is " .. cls .. " on {" .. table.concat(shape, ", ") .. "}", function()
            local bn, sbn = nn[cls](3, { momentum = 0.3 }), nn.SyncBatchNorm(3, { momentum = 0.3 })
            same_params(bn, sbn)
            tide.manual_seed(5)
            for _ = 1, 2 do
                local x, c = tide.randn(shape) * 2 + 1, tide.randn(shape)
                local y1, g1 = step(bn, x, c)
                local y2, g2 = step(sbn, x, c)
                close(y1, y2, 1e-6, "output")
                close(g1, g2, 1e-5, "input gradient")
            end
            close(bn.weight.grad, sbn.weight.grad, 1e-5, "weight gradient")
            close(bn.bias.grad, sbn.bias.grad, 1e-5, "bias gradient")
            close(bn.running_mean, sbn.running_mean, 1e-6, "running_mean")
            close(bn.running_var, sbn.running_var, 1e-6, "running_var")
            assert.are.equal(2, sbn.num_batches_tracked:item())
            bn:eval()
            sbn:eval()
            local x = tide.randn(shape)
            close(bn(x), sbn(x), 1e-6, "eval output")
            assert.are.equal(2, sbn.num_batches_tracked:item())
        end)
    end

    it("has BatchNorm's parameters, buffers and state_dict keys", function()
        local bn, sbn = nn.BatchNorm2d(4), nn.SyncBatchNorm(4)
        local a, b = {}, {}
        for k in bn:state_dict() do
            a[#a + 1] = k
        end
        for k in sbn:state_dict() do
            b[#b + 1] = k
        end
        assert.are.same(a, b)
        assert.are.same({ 1, 1, 1, 1 }, sbn.weight:totable())
        assert.are.same({ 0, 0, 0, 0 }, sbn.bias:totable())
        assert.is_true(sbn.weight.requires_grad)
        assert.are.equal("int64", sbn.num_batches_tracked.dtype)
        assert.are.equal("SyncBatchNorm(4, eps=1e-05, momentum=0.1, affine=true, " ..
            "track_running_stats=true)  [8 parameters]", tostring(sbn))
        -- a new BatchNorm loads its state
        sbn:load_state_dict(bn:state_dict())
    end)

    it("takes PyTorch's positional options, device and dtype", function()
        local m = nn.SyncBatchNorm(2, 1e-3, 0.5, false, false)
        assert.are.equal(1e-3, m.eps)
        assert.are.equal(0.5, m.momentum)
        assert.is_nil(m.weight)
        assert.is_nil(m.running_mean)
        assert.are.equal(0, #m:parameters())
        local d = nn.SyncBatchNorm(2, { dtype = "float64", device = "cpu:1" })
        assert.are.equal("float64", d.weight.dtype)
        assert.are.equal("float64", d.running_var.dtype)
        assert.are.equal("cpu:1", tostring(d.weight.device))
        assert.are.equal("cpu:1", tostring(d.num_batches_tracked.device))
        local x = tide.randn({ 3, 2 }, { dtype = "float64", device = "cpu:1" })
        assert.are.equal("cpu:1", tostring(d(x).device))
    end)

    it("without running statistics normalizes by the batch's in eval too", function()
        local m = nn.SyncBatchNorm(3, { track_running_stats = false, affine = false })
        local ref = nn.BatchNorm2d(3, { affine = false })
        local x = tide.randn({ 2, 3, 2, 2 })
        close(ref(x), m(x), 1e-6)
        m:eval()
        close(ref(x), m(x), 1e-6)
        assert.are.equal(0, #m:buffers())
    end)

    it("follows momentum = nil (the cumulative average) as BatchNorm", function()
        local bn, sbn = nn.BatchNorm1d(2), nn.SyncBatchNorm(2)
        bn.momentum, sbn.momentum = nil, nil
        for i = 1, 3 do
            local x = tide.randn({ 4, 2 }) * i
            bn(x)
            sbn(x)
        end
        close(bn.running_mean, sbn.running_mean, 1e-6)
        close(bn.running_var, sbn.running_var, 1e-6)
    end)
end)

-- a stand-in tide.distributed of two ranks whose other rank holds this rank's batch and
-- gradient: all_gather gives this rank's tensor twice, all_reduce doubles
local function with_fake_job(fn)
    local real = package.loaded["tide.distributed"]
    local calls = { all_gather = 0, all_reduce = 0 }
    package.loaded["tide.distributed"] = {
        is_initialized = function()
            return true
        end,
        world_size = function()
            return 2
        end,
        all_gather = function(t)
            calls.all_gather = calls.all_gather + 1
            return { t:clone(), t:clone() }
        end,
        all_reduce = function(t)
            calls.all_reduce = calls.all_reduce + 1
            return t:mul_(2)
        end,
    }
    local ok, err = pcall(fn, calls)
    package.loaded["tide.distributed"] = real
    if not ok then
        error(err, 0)
    end
end

describe("nn.SyncBatchNorm in a job", function()
    for _, case in ipairs(CASES) do
        local cls, shape = case[1], case[2]
        it("normalizes over every rank's batch (" .. cls .. ")", function()
            local bn, sbn = nn[cls](3, { momentum = 0.3 }), nn.SyncBatchNorm(3, { momentum = 0.3 })
            same_params(bn, sbn)
            bn:double() -- the reference in float64
            tide.manual_seed(9)
            -- an offset far from 0: the float32 statistics must not lose it to rounding
            local x, c = tide.randn(shape) + 1000, tide.randn(shape)
            local n = shape[1]
            local y1, g1 = step(bn, tide.cat({ x, x }, 1):double(), tide.cat({ c, c }, 1):double())
            with_fake_job(function(calls)
                local y2, g2 = step(sbn, x, c)
                assert.are.same({ all_gather = 1, all_reduce = 1 }, calls)
                assert.are.equal("SyncBatchNormBackward", tostring(y2.grad_fn))
                close(y1:narrow(1, 1, n), y2:double(), 2e-6, "output")
                close(g1:narrow(1, 1, n), g2:double(), 1e-5, "input gradient")
            end)
            -- the parameters' gradients: this rank's half
            close(bn.weight.grad, sbn.weight.grad:double() * 2, 1e-5, "weight gradient")
            close(bn.bias.grad, sbn.bias.grad:double() * 2, 1e-5, "bias gradient")
            close(bn.running_mean, sbn.running_mean:double(), 1e-4, "running_mean")
            close(bn.running_var, sbn.running_var:double(), 1e-6, "running_var")
            assert.are.equal(1, sbn.num_batches_tracked:item())
        end)
    end

    it("synchronizes only in training, and backward only for the input's gradient", function()
        local m = nn.SyncBatchNorm(2)
        local x = tide.randn({ 3, 2 })
        with_fake_job(function(calls)
            m(x):sum():backward() -- x takes no gradient: nothing to all-reduce
            assert.are.same({ all_gather = 1, all_reduce = 0 }, calls)
            assert.is_not_nil(m.weight.grad)
            m:eval()
            m(x)
            tide.no_grad(function()
                m:train()
                m(x)
            end)
            assert.are.same({ all_gather = 2, all_reduce = 0 }, calls)
        end)
    end)

    it("takes one value per rank (two over the job)", function()
        local m = nn.SyncBatchNorm(2)
        with_fake_job(function()
            local y = m(tide.tensor({ { 1.5, 2 } }))
            assert.are.same({ { 0, 0 } }, y:totable())
        end)
        assert.has_error(function()
            m(tide.tensor({ { 1.5, 2 } }))
        end, "tide: SyncBatchNorm: expected more than 1 value per channel in training, " ..
            "got input {1, 2}")
    end)
end)

describe("nn.SyncBatchNorm.convert_sync_batchnorm", function()
    it("replaces every BatchNorm, nested, by one holding the same tensors", function()
        local bn2, bn1, bn3 = nn.BatchNorm2d(4), nn.BatchNorm1d(5), nn.BatchNorm3d(2)
        bn1:eval()
        bn1.bias:requires_grad_(false)
        bn3.momentum = nil
        local inner = nn.Sequential(nn.Flatten(), nn.Linear(16, 5), bn1)
        local list = nn.ModuleList({ bn3, nn.ReLU() })
        local model = nn.Sequential(nn.Conv2d(1, 4, 3), bn2, nn.ReLU(),
            nn.Sequential(nn.AdaptiveAvgPool2d(2), inner), list)
        local before = {}
        for _, p in ipairs(model:parameters()) do
            before[#before + 1] = p
        end
        local buffers = model:buffers()
        local keys = {}
        for k in model:state_dict() do
            keys[#keys + 1] = k
        end

        assert.are.equal(model, nn.SyncBatchNorm.convert_sync_batchnorm(model))
        local s2, s1, s3 = model[2], inner[3], list[1]
        for _, m in ipairs({ s2, s1, s3 }) do
            assert.are.equal("SyncBatchNorm", m.__name)
        end
        assert.are.equal(s2, model:get_submodule("2"))
        assert.are.equal(s1, model:get_submodule("4.2.3"))
        assert.are.equal(s3, model:get_submodule("5.1"))
        assert.are.equal(bn2.weight, s2.weight)
        assert.are.equal(bn2.running_var, s2.running_var)
        assert.are.equal(bn1.num_batches_tracked, s1.num_batches_tracked)
        assert.is_false(s1.training)
        assert.is_true(s2.training)
        assert.is_false(s1.bias.requires_grad)
        assert.is_nil(s3.momentum)
        assert.are.equal(5, s1.num_features)
        local after = model:parameters()
        assert.are.equal(#before, #after)
        for i = 1, #before do
            assert.are.equal(before[i], after[i])
        end
        local bufs = model:buffers()
        for i = 1, #buffers do
            assert.are.equal(buffers[i], bufs[i])
        end
        local keys2 = {}
        for k in model:state_dict() do
            keys2[#keys2 + 1] = k
        end
        assert.are.same(keys, keys2)
        -- the converted model computes what it did
        model:eval()
        local x = tide.randn({ 2, 1, 6, 6 })
        assert.are.same({ 2, 5 }, model[4](model[3](model[2](model[1](x)))).shape)
    end)

    it("returns a BatchNorm converted, and anything else as it is", function()
        local bn = nn.BatchNorm2d(3, { eps = 1e-3, affine = false })
        local s = nn.SyncBatchNorm.convert_sync_batchnorm(bn)
        assert.are.equal("SyncBatchNorm", s.__name)
        assert.are.equal(1e-3, s.eps)
        assert.is_nil(s.weight)
        assert.are.equal(bn.running_mean, s.running_mean)
        local lin = nn.Linear(2, 2)
        assert.are.equal(lin, nn.SyncBatchNorm.convert_sync_batchnorm(lin))
        local sb = nn.SyncBatchNorm(2)
        assert.are.equal(sb, nn.SyncBatchNorm.convert_sync_batchnorm(sb))
        -- one module held twice becomes one SyncBatchNorm
        local shared = nn.BatchNorm1d(2)
        local seq = nn.Sequential(shared, nn.ReLU(), shared)
        nn.SyncBatchNorm.convert_sync_batchnorm(seq)
        assert.are.equal(seq[1], seq[3])
        assert.are.equal("SyncBatchNorm", seq[3].__name)
        -- InstanceNorm is not a BatchNorm
        local inorm = nn.InstanceNorm2d(2)
        assert.are.equal(inorm, nn.SyncBatchNorm.convert_sync_batchnorm(inorm))
    end)
end)

describe("nn.SyncBatchNorm errors", function()
    it("names the bad value and the fix", function()
        local m = nn.SyncBatchNorm(3)
        assert.has_error(function()
            m(tide.randn({ 3 }))
        end, "tide: SyncBatchNorm: expected input {N, C, ...} of at least 2 dims, got {3}; " ..
            "add the batch dim with x:unsqueeze(1)")
        assert.has_error(function()
            m(tide.randn({ 2, 4, 2 }))
        end, "tide: SyncBatchNorm: expected input with 3 channels (dim 2), got 4")
        assert.has_error(function()
            m(tide.ones({ 2, 3 }, { dtype = "int64" }))
        end, "tide: SyncBatchNorm: expected a floating-point input, got int64; convert it " ..
            "with x:to(\"float32\")")
        assert.has_error(function()
            m(tide.randn({ 2, 3 }, { device = "cpu:1" }))
        end)
        assert.has_error(function()
            m(tide.randn({ 1, 3 }))
        end, "tide: SyncBatchNorm: expected more than 1 value per channel in training, " ..
            "got input {1, 3}")
        assert.has_error(function()
            m("x")
        end, "tide: SyncBatchNorm: expected a tensor input, got string")
    end)

    it("checks the options", function()
        assert.has_error(function()
            nn.SyncBatchNorm(3, { epz = 1 })
        end, "tide: SyncBatchNorm: unknown option \"epz\" (did you mean \"eps\"?)")
        assert.has_error(function()
            nn.SyncBatchNorm(0)
        end, "tide: SyncBatchNorm: expected num_features to be an integer >= 1, got 0")
        assert.has_error(function()
            nn.SyncBatchNorm(3, { affine = 1 })
        end, "tide: SyncBatchNorm: expected affine to be true or false, got 1")
        assert.has_error(function()
            nn.SyncBatchNorm(3, { dtype = "int64" })
        end, "tide: SyncBatchNorm: dtype = int64; expected a floating dtype (\"float32\", " ..
            "\"float64\", \"float16\" or \"bfloat16\")")
        assert.has_error(function()
            nn.SyncBatchNorm(3, { process_group = "g" })
        end, "tide: SyncBatchNorm: process_group = g; tide.distributed has no process " ..
            "groups (the statistics are over every rank of the job): leave it nil")
        assert.has_error(function()
            nn.SyncBatchNorm.convert_sync_batchnorm("m")
        end, "tide: SyncBatchNorm.convert_sync_batchnorm: expected a Module, got string")
        assert.has_error(function()
            nn.SyncBatchNorm.convert_sync_batchnorm(nn.ReLU(), nil, 3)
        end, "tide: SyncBatchNorm.convert_sync_batchnorm: takes (module[, process_group]), " ..
            "got 3 arguments")
    end)
end)
