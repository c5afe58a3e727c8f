-- tide.distributed in one process without mpirun: availability and its reasons, the errors of
-- calls made before dist.init, DataParallel over cpu:0 and cpu:1, and DistributedSampler with an
-- explicit rank. The collectives themselves run under mpirun: spec/dist/*_mpi.lua.
local tide = require("tide")
local dist = tide.distributed
local nn = tide.nn
local host = require("spec.support.host")

-- runs a Lua chunk in a fresh process (the plug-ins load once per process); returns its output
local function fresh(env, code)
    local cmd = ("env LUA_PATH='%s' LUA_CPATH='%s' %s %s -e %q 2>&1"):format(package.path,
        package.cpath, env, host.lua, code)
    local p = io.popen(cmd)
    local out = p:read("*a")
    p:close()
    return out
end

describe("tide.distributed without a job", function()
    it("loads MPI on first use and says NCCL needs a CUDA device here", function()
        assert.is_true(dist.is_available("mpi"))
        assert.is_nil(dist.unavailable_reason("mpi"))
        if not tide.cuda.is_available() then
            assert.is_false(dist.is_available("nccl"))
            assert.are.equal("NCCL needs a CUDA device: " .. tide.cuda.unavailable_reason(),
                dist.unavailable_reason("nccl"))
        end
    end)

    it("says which plug-in is missing and what to install", function()
        local out = fresh("TIDE_MPI_LIB=/nonexistent/libtide_mpi.so",
            'local d = require("tide").distributed; print(d.is_available("mpi")); ' ..
            'print(d.unavailable_reason("mpi")); print(pcall(d.init))')
        assert.are.equal("false\ntide was built without its MPI plug-in (/nonexistent/" ..
            "libtide_mpi.so not found); install Open MPI (apt-get install openmpi-bin " ..
            "libopenmpi-dev) and rebuild tide\n" ..
            "false\t(command line):1: tide: dist.init: MPI is not available: tide was built " ..
            "without its MPI plug-in (/nonexistent/libtide_mpi.so not found); install Open MPI " ..
            "(apt-get install openmpi-bin libopenmpi-dev) and rebuild tide\n", out)
    end)

    it("says why libnccl cannot be loaded", function()
        local out = fresh("TIDE_NCCL_LIBRARY=/nonexistent/libnccl.so.2",
            'print(require("tide").distributed.unavailable_reason("nccl"))')
        assert.matches("^%$TIDE_NCCL_LIBRARY %(/nonexistent/libnccl.so.2%) could not be loaded: ",
            out)
    end)

    it("has rank 0 of 1 before init", function()
        assert.is_false(dist.is_initialized())
        assert.are.equal(0, dist.rank())
        assert.are.equal(1, dist.world_size())
    end)

    it("refuses a collective before init, at the user's line, leaving the tensor", function()
        local t = tide.ones({ 2 })
        local ok, err = pcall(function()
            dist.all_reduce(t)
        end)
        assert.is_false(ok)
        assert.matches("^spec/distributed_spec.lua:%d+: tide: all_reduce: the job is not started; " ..
            "call dist.init%(%) first, in a program started by mpirun %-np N$", err)
        assert.are.same({ 1, 1 }, t:totable())
        assert.has_error(function()
            dist.barrier()
        end, "tide: barrier: the job is not started; call dist.init() first")
    end)

    it("checks backend names and options", function()
        assert.has_error(function()
            dist.is_available("gloo")
        end, 'tide: dist.is_available: unknown backend "gloo"; use "mpi" (CPU tensors) or ' ..
            '"nccl" (CUDA tensors)')
        assert.has_error(function()
            dist.init { backend = "mpi", timeout = -1 }
        end, "tide: dist.init: timeout = -1; expected seconds >= 0 (0: wait forever)")
        assert.has_error(function()
            dist.all_reduce(tide.ones({ 1 }), { op = "avg" })
        end, 'tide: all_reduce: unknown op "avg"; use "sum", "mean", "max" or "min"')
    end)

    it("DistributedDataParallel needs a started job", function()
        assert.has_error(function()
            nn.DistributedDataParallel(nn.Linear(2, 2))
        end, "tide: DistributedDataParallel: the job is not started; call " ..
            "tide.distributed.init() first, in a program started by mpirun -np N")
    end)
end)

describe("nn.DataParallel", function()
    local function model()
        tide.manual_seed(3)
        return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    end

    it("splits the batch over cpu:0 and cpu:1 and gives the model's own gradients", function()
        local x = tide.randn({ 7, 4 })
        local ref = model()
        local yr = ref(x)
        yr:pow(2):sum():backward()

        local m = model()
        local dp = nn.DataParallel(m, { devices = { "cpu:0", "cpu:1" } })
        local y = dp(x)
        assert.are.equal("cpu", tostring(y.device))
        assert.are.same({ 7, 2 }, y.shape)
        assert.is_true((y - yr):abs():max():item() < 1e-6)
        y:pow(2):sum():backward()
        for i, p in ipairs(m:parameters()) do
            local d = (p.grad - ref:parameters()[i].grad):abs():max():item()
            assert.is_true(d < 1e-5, "parameter " .. i .. " differs by " .. d)
        end
    end)

    it("runs each part on its device", function()
        local seen = {}
        local Probe = nn.Module:extend("Probe")
        function Probe:forward(x)
            seen[#seen + 1] = tostring(x.device) .. ":" .. x.shape[1]
            return x
        end
        local dp = nn.DataParallel(Probe(), { devices = { "cpu:0", "cpu:1" } })
        dp(tide.zeros({ 5, 1 }))
        assert.are.same({ "cpu:3", "cpu:1:2" }, seen)
    end)

    it("refuses a model off the first device and unknown devices", function()
        -- as PyTorch, checked at each forward (the model may be moved after wrapping)
        local dp = nn.DataParallel(model(), { devices = { "cpu:1", "cpu:0" } })
        assert.has_error(function()
            dp(tide.zeros({ 4, 4 }))
        end, 'tide: DataParallel: the model\'s parameters are on cpu, not on the first device ' ..
            'cpu:1; move the model first with model:to("cpu:1")')
        local ok, err = pcall(nn.DataParallel, model(), { devices = { "cpu:0", "cpu:9" } })
        assert.is_false(ok)
        assert.matches("tide: device: cpu:9 does not exist", err)
        assert.matches("%(DataParallel device_ids%[2%]%)$", err)
    end)
end)

describe("tide.data.DistributedSampler", function()
    local ds = tide.data.TensorDataset(tide.arange(1, 11))

    it("deals positions rank + 1, rank + 1 + world_size, ... padding with the first #lua53", function()
        local s = tide.data.DistributedSampler(ds, { shuffle = false, rank = 1, world_size = 3 })
        assert.are.same({ 2, 5, 8, 1 }, s:indices())
        assert.are.equal(4, #s)
        local d = tide.data.DistributedSampler(ds, { shuffle = false, rank = 2, world_size = 3,
            drop_last = true })
        assert.are.same({ 3, 6, 9 }, d:indices())
    end)

    it("shuffles by seed and epoch, the same order on every rank", function()
        local a = tide.data.DistributedSampler(ds, { seed = 4, rank = 0, world_size = 2 })
        local b = tide.data.DistributedSampler(ds, { seed = 4, rank = 1, world_size = 2 })
        local all = {}
        for _, i in ipairs(a:indices()) do all[#all + 1] = i end
        for _, i in ipairs(b:indices()) do all[#all + 1] = i end
        table.sort(all)
        assert.are.same({ 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 }, all)
        local e0 = a:indices()
        a:set_epoch(1)
        assert.are_not.same(e0, a:indices())
        a:set_epoch(0)
        assert.are.same(e0, a:indices())
    end)

    it("is a dataset the DataLoader batches", function()
        local s = tide.data.DistributedSampler(ds, { shuffle = false, rank = 0, world_size = 2 })
        local x = tide.data.DataLoader(s, { batch_size = 5 }):iter()()
        assert.are.same({ 1, 3, 5, 7, 9 }, x:totable())
        assert.are.equal(3, s:get(2):item())
    end)

    it("refuses a rank outside world_size", function()
        assert.has_error(function()
            tide.data.DistributedSampler(ds, { rank = 2, world_size = 2 })
        end, "tide: DistributedSampler: rank = 2 does not exist among world_size = 2 ranks " ..
            "(0 to 1)")
    end)
end)
