-- The collectives of tide.distributed, run by every rank of `mpirun -np N` (2 and 4 in make test:
-- spec/support/mpi_suite.sh). With TIDE_NCCL_LIBRARY pointing at the emulated NCCL and
-- TIDE_CUDA_LIB at the emulated CUDA backend, the same checks run on cuda tensors through tide's
-- NCCL plug-in (the "nccl emu" suites); otherwise the CUDA checks assert the unavailable path.
local tide = require("tide")
local dist = tide.distributed

local EMU = os.getenv("TIDE_TEST_NCCL_EMU") == "1"
if not dist.is_initialized() then
    dist.init { backend = EMU and "nccl" or "mpi", timeout = 60 }
end
local R, W = dist.rank(), dist.world_size()

local function values(t)
    return t:to("cpu"):totable()
end

-- the devices whose tensors go over a collective engine in this run
local DEVICES = { "cpu" }
if EMU then
    DEVICES[2] = "cuda:" .. (dist.local_rank() % tide.cuda.device_count())
end

describe("dist job", function()
    it("numbers the ranks as mpirun does", function()
        assert.are.equal(tonumber(os.getenv("OMPI_COMM_WORLD_SIZE")), W)
        assert.are.equal(tonumber(os.getenv("OMPI_COMM_WORLD_RANK")), R)
        assert.are.equal(tonumber(os.getenv("OMPI_COMM_WORLD_LOCAL_RANK")), dist.local_rank())
        assert.is_true(W >= 2)
    end)

    it("refuses a second init, naming the rank", function()
        assert.has_error(function()
            dist.init()
        end, ("tide: dist.init: already initialized (rank %d of %d); call it once per process")
            :format(R, W))
    end)

    it("checks the options of init", function()
        assert.has_error(function()
            dist.init { backend = "gloo" }
        end, 'tide: dist.init: unknown backend "gloo"; use "mpi", "nccl" or "auto"')
    end)
end)

for _, dev in ipairs(DEVICES) do
    describe("collectives on " .. dev, function()
        it("all_reduce sums, averages, and takes max and min, in place", function()
            local t = tide.tensor({ 1, 2, 3 }, { device = dev }) * (R + 1)
            local same = dist.all_reduce(t)
            assert.are.equal(t, same)
            local s = W * (W + 1) / 2
            assert.are.same({ s, 2 * s, 3 * s }, values(t))
            local m = tide.tensor({ R, -R }, { device = dev, dtype = "float64" })
            dist.all_reduce(m, { op = "mean" })
            assert.are.same({ (W - 1) / 2, -(W - 1) / 2 }, values(m))
            local x = tide.tensor({ R, -R }, { device = dev, dtype = "int64" })
            dist.all_reduce(x, { op = "max" })
            assert.are.same({ W - 1, 0 }, values(x))
            local y = tide.tensor({ R, -R }, { device = dev, dtype = "int32" })
            dist.all_reduce(y, { op = "min" })
            assert.are.same({ 0, -(W - 1) }, values(y))
        end)

        it("all_reduce writes through a non-contiguous view", function()
            local base = tide.zeros({ 2, 3 }, { device = dev })
            local v = base:transpose(1, 2) -- 3 x 2, not contiguous
            v:fill_(R + 1)
            dist.all_reduce(v)
            local s = W * (W + 1) / 2
            assert.are.same({ { s, s, s }, { s, s, s } }, values(base))
        end)

        it("an async all_reduce lands at wait()", function()
            local t = tide.full({ 1000 }, R + 1, { device = dev, dtype = "float32" })
            local work = dist.all_reduce(t, { op = "mean", async = true })
            work:wait()
            assert.are.equal((W + 1) / 2, t:to("cpu")[1000]:item())
            assert.are.equal((W + 1) / 2, t:to("cpu")[1]:item())
        end)

        it("broadcast copies the source rank's tensor everywhere", function()
            local t = tide.full({ 2, 2 }, R, { device = dev, dtype = "float32" })
            dist.broadcast(t, W - 1)
            assert.are.same({ { W - 1, W - 1 }, { W - 1, W - 1 } }, values(t))
        end)

        it("all_gather gives every rank's tensor, in rank order", function()
            local g = dist.all_gather(tide.tensor({ R, 10 * R }, { device = dev }))
            assert.are.equal(W, #g)
            for r = 0, W - 1 do
                assert.are.same({ r, 10 * r }, values(g[r + 1]))
                assert.are.equal(tostring(tide.device(dev)), tostring(g[r + 1].device))
            end
        end)

        -- dist.nn: PyTorch's torch.distributed.nn.functional, the gradient of the sum of
        -- every rank's loss (open_clip's gather_with_grad)
        it("dist.nn.all_gather and all_reduce take gradients across the ranks", function()
            local t = tide.tensor({ R + 1, 2 * (R + 1) }, { device = dev, dtype = "float64" })
                :requires_grad_(true)
            local parts = dist.nn.all_gather(t)
            assert.are.equal(W, #parts)
            local loss
            for r = 0, W - 1 do
                assert.are.same({ r + 1, 2 * (r + 1) }, values(parts[r + 1]:detach()))
                local term = parts[r + 1]:sum() * (r + 1)
                loss = loss and loss + term or term
            end
            loss:backward()
            -- every rank's loss weighs rank R's part by R + 1: W of them
            assert.are.same({ W * (R + 1), W * (R + 1) }, values(t.grad))
            local u = tide.tensor({ 1, -1 }, { device = dev, dtype = "float64" })
                :requires_grad_(true)
            local s = dist.nn.all_reduce(u * (R + 1))
            assert.are.same({ W * (W + 1) / 2, -W * (W + 1) / 2 }, values(s:detach()))
            s:sum():backward()
            assert.are.same({ W * (R + 1), W * (R + 1) }, values(u.grad))
            assert.has_error(function()
                dist.nn.all_reduce(u, { op = "max" })
            end, 'tide: dist.nn.all_reduce: op max has no gradient here; use "sum" ' ..
                "(dist.all_reduce takes the others, without gradients)")
        end)

        it("reduce_scatter gives each rank its chunk of the sum", function()
            local t = tide.arange(0, 2 * W, { device = dev }):float():view({ W, 2 })
            local c = dist.reduce_scatter(t)
            assert.are.same({ { 2 * R * W, (2 * R + 1) * W } }, values(c))
        end)

        it("refuses mean on integers, with the fix", function()
            assert.has_error(function()
                dist.all_reduce(tide.tensor({ 1 }, { device = dev, dtype = "int64" }),
                    { op = "mean" })
            end, 'tide: all_reduce: op "mean" needs a floating dtype, got int64; use op = "sum" '
                .. "or convert with t:float()")
        end)

        it("refuses a first dimension that does not split over the ranks", function()
            assert.has_error(function()
                dist.reduce_scatter(tide.zeros({ W + 1 }, { device = dev }))
            end, ("tide: reduce_scatter: the first dimension (%d) must split into %d equal "
                .. "chunks, one per rank; pad it to a multiple of dist.world_size()")
                :format(W + 1, W))
        end)

        it("refuses a source rank that does not exist, leaving the tensor", function()
            local t = tide.ones({ 2 }, { device = dev })
            assert.has_error(function()
                dist.broadcast(t, W)
            end, ("tide: broadcast: source rank %d does not exist: ranks are 0 to %d")
                :format(W, W - 1))
            assert.are.same({ 1, 1 }, values(t))
        end)

        it("reports the error line of the user's file", function()
            local ok, err = pcall(dist.all_reduce, "x")
            assert.is_false(ok)
            assert.are.equal("tide: all_reduce: expected a tensor, got string",
                err:match("tide:.*"))
            ok, err = pcall(function()
                dist.all_reduce(tide.ones({ 1 }, { device = dev }), { op = "prod" })
            end)
            assert.matches("collectives_mpi.lua:%d+: tide: all_reduce: unknown op \"prod\"", err)
        end)
    end)
end

describe("engines", function()
    it("refuses float16 on MPI, naming the rank and the fix", function()
        assert.has_error(function()
            dist.all_reduce(tide.ones({ 2 }, { dtype = "float16" }))
        end, ("tide: all_reduce: MPI has no float16 type; convert the tensor with t:float() "
            .. "first (NCCL takes float16 and bfloat16 CUDA tensors) (rank %d of %d)"):format(R, W))
    end)

    if not EMU and not tide.cuda.is_available() then
        it("says NCCL is unavailable without a CUDA device", function()
            assert.is_false(dist.is_available("nccl"))
            assert.matches("^NCCL needs a CUDA device: ", dist.unavailable_reason("nccl"))
        end)
    elseif not EMU then
        -- CUDA (emulated) without NCCL in this job: a CUDA tensor is refused, never copied
        it("refuses a CUDA tensor when NCCL is not there, naming what to install", function()
            local t = tide.ones({ 2 }, { device = "cuda:0" })
            local reason = dist.unavailable_reason("nccl")
                or 'this job did not start (dist.init{backend = "mpi"})'
            tide.reset_transfer_stats()
            assert.has_error(function()
                dist.all_reduce(t)
            end, ("tide: all_reduce: the tensor is on cuda:0 and CUDA tensors go over NCCL, which "
                .. "%s (rank %d); install NCCL (pip install nvidia-nccl-cu12, or the system's "
                .. "libnccl2) and call dist.init{backend = \"nccl\"}, or move the tensor "
                .. "explicitly with t:to(\"cpu\")"):format(reason, R))
            local moved = tide.transfer_stats()
            assert.are.equal(0, moved.d2h_count + moved.h2d_count)
            assert.are.same({ 1, 1 }, values(t))
        end)
    else
        it("takes CUDA tensors over NCCL and CPU tensors over MPI in one job", function()
            local dev = DEVICES[2]
            local a = tide.ones({ 3 }, { device = dev })
            local b = tide.ones({ 3 })
            dist.all_reduce(a)
            dist.all_reduce(b)
            assert.are.same({ W, W, W }, values(a))
            assert.are.same({ W, W, W }, values(b))
        end)
    end
end)
