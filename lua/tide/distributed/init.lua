--- tide.distributed: collectives across the processes of a job started by `mpirun -np N`.
--
--     local dist = tide.distributed
--     dist.init()                          -- MPI, plus NCCL where a GPU and NCCL are there
--     local t = tide.ones({4}) * dist.rank()
--     dist.all_reduce(t)                   -- in place: the sum over the ranks
--
-- CPU tensors go over MPI, CUDA tensors over NCCL; nothing is copied between them. Both engines
-- are plug-ins loaded on first use: without them everything else in tide works, and
-- dist.unavailable_reason(backend) says what is missing. Every rank must make the same calls in
-- the same order; a call that waits for the others longer than `timeout` seconds (dist.init's
-- option, default 300) prints which rank waited where and ends that rank, so mpirun ends the job.
local compat = require("tide._compat")

local core = require("tide.core")
local args = require("tide.op_args")
local raise = require("tide.autograd").raise
local C = core._dist

local dist = {}

local BACKENDS = { mpi = true, nccl = true, auto = true }
local OPS = { sum = true, mean = true, max = true, min = true }

local function backend_arg(b, fname)
    if b == nil then
        return "mpi"
    end
    if b ~= "mpi" and b ~= "nccl" then
        raise(("tide: dist.%s: unknown backend %s; use \"mpi\" (CPU tensors) or \"nccl\" (CUDA " ..
            "tensors)"):format(fname, type(b) == "string" and ('"' .. b .. '"') or tostring(b)))
    end
    return b
end

--- true when the backend ("mpi", the default, or "nccl") can be used on this host
function dist.is_available(backend)
    return C.is_available(backend_arg(backend, "is_available"))
end

--- why the backend cannot be used here, or nil
function dist.unavailable_reason(backend)
    return C.unavailable_reason(backend_arg(backend, "unavailable_reason"))
end

--- dist.init([{backend = "mpi" | "nccl" | "auto", timeout = seconds}])
function dist.init(opts)
    opts = args.options("dist.init", opts, { "backend", "timeout" }, "{backend = \"mpi\"}")
    local b = opts.backend or "auto"
    if not BACKENDS[b] then
        raise(("tide: dist.init: unknown backend %s; use \"mpi\", \"nccl\" or \"auto\""):format(
            type(b) == "string" and ('"' .. b .. '"') or tostring(b)))
    end
    if opts.timeout ~= nil then
        if type(opts.timeout) ~= "number" or opts.timeout < 0 then
            raise("tide: dist.init: timeout = " .. tostring(opts.timeout) ..
                "; expected seconds >= 0 (0: wait forever)")
        end
        C.set_timeout(opts.timeout)
    end
    C.init(b)
end

function dist.is_initialized()
    return C.info().initialized
end

--- this process's rank, 0-based (0 before init)
function dist.rank()
    return C.rank()
end

--- the number of processes in the job (1 before init)
function dist.world_size()
    return C.world_size()
end

--- the rank among the processes of this host (which GPU to use: cuda:local_rank)
function dist.local_rank()
    return C.info().local_rank
end

local function check_tensor(t, fname)
    if not core.is_tensor(t) then
        raise("tide: " .. fname .. ": expected a tensor, got " .. args.typename(t))
    end
end

local function op_of(opts, fname, allowed)
    if opts == nil then
        return "sum", false
    end
    if type(opts) ~= "table" then
        raise("tide: " .. fname .. ": options must be a table such as {op = \"mean\"}, got " ..
            type(opts))
    end
    core._check_options(opts, fname, allowed)
    local op = opts.op or "sum"
    if not OPS[op] then
        raise(("tide: %s: unknown op %s; use \"sum\", \"mean\", \"max\" or \"min\""):format(fname,
            type(op) == "string" and ('"' .. op .. '"') or tostring(op)))
    end
    return op, opts.async and true or false
end

--- dist.all_reduce(t[, {op = "sum" | "mean" | "max" | "min", async = false}]): in place; returns
--- t, or with async = true a work object whose :wait() finishes it (t untouched until then)
function dist.all_reduce(t, opts)
    check_tensor(t, "all_reduce")
    local op, async = op_of(opts, "all_reduce", { "op", "async" })
    if async then
        return C.all_reduce_start(t, op)
    end
    return C.all_reduce(t, op)
end

--- dist.broadcast(t, src): t <- rank src's t, in place; returns t
function dist.broadcast(t, src)
    check_tensor(t, "broadcast")
    if src ~= nil and not compat.is_integer(src) then
        raise("tide: broadcast: source rank must be an integer, got " .. tostring(src))
    end
    return C.broadcast(t, src or 0)
end

--- dist.all_gather(t): a list of world_size tensors, [r + 1] holding rank r's t
function dist.all_gather(t)
    check_tensor(t, "all_gather")
    local g = C.all_gather(t)
    local out = {}
    for r = 1, g.shape[1] do
        out[r] = g:select(1, r)
    end
    return out
end

--- dist.reduce_scatter(t[, {op = ...}]): t's first dimension in world_size chunks; this rank's
--- chunk of the reduction over the ranks
function dist.reduce_scatter(t, opts)
    check_tensor(t, "reduce_scatter")
    local op = op_of(opts, "reduce_scatter", { "op" })
    return C.reduce_scatter(t, op)
end

function dist.barrier()
    C.barrier()
end

--- ends the job's communicators; call once, at the end, on every rank
function dist.finalize()
    C.finalize()
end

-- dist.nn: the collectives with gradients (PyTorch's torch.distributed.nn.functional)
dist.nn = require("tide.distributed.nn")

return dist
