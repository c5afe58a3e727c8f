-- nn.DistributedDataParallel(model[, {bucket_cap_mb = 25, broadcast_buffers = true}]): the same
-- model in every rank of a job (tide.distributed), trained on each rank's own batches.
--
-- At wrap time rank 0's parameters and buffers are broadcast, so every rank starts equal. During
-- backward, the gradients are averaged over the ranks in buckets of about bucket_cap_mb: a bucket
-- is reduced (asynchronously) as soon as the last of its parameters has its gradient, while the
-- backward pass goes on with the layers before it; backward() returns once every bucket is done.
-- Parameters are bucketed in reverse order of registration, the order in which backward reaches
-- them. Every rank then holds the gradient of the mean loss over all ranks' batches, so N ranks
-- on N batches step exactly as one process on their concatenation (for a loss that is a mean).
local autograd = require("tide.autograd")
local core = require("tide.core")
local args = require("tide.op_args")
local Module = require("tide.nn.Module")
local raise = autograd.raise

local DDP = Module:extend("DistributedDataParallel")

local function dist()
    return require("tide.distributed")
end

function DDP:init(module, opts)
    if not Module.is_module(module) then
        raise("tide: DistributedDataParallel: expected a Module, got " .. type(module))
    end
    opts = args.options("DistributedDataParallel", opts, { "bucket_cap_mb", "broadcast_buffers" },
        "{bucket_cap_mb = 25}")
    local cap = opts.bucket_cap_mb or 25
    if type(cap) ~= "number" or cap <= 0 then
        raise("tide: DistributedDataParallel: bucket_cap_mb = " .. tostring(cap) ..
            "; expected a number > 0")
    end
    if not dist().is_initialized() then
        raise("tide: DistributedDataParallel: the job is not started; call " ..
            "tide.distributed.init() first, in a program started by mpirun -np N")
    end
    self.module = module
    rawset(self, "broadcast_buffers", opts.broadcast_buffers ~= false)
    local params = {}
    for _, p in ipairs(module:parameters()) do
        if p.requires_grad then
            params[#params + 1] = p
        end
    end
    -- every rank starts from rank 0's weights
    autograd.no_grad(function()
        for _, p in ipairs(params) do
            dist().broadcast(p, 0)
        end
        for _, b in ipairs(module:buffers()) do
            dist().broadcast(b, 0)
        end
    end)
    rawset(self, "_buckets", self:_make_buckets(params, cap * 1024 * 1024))
    for _, bucket in ipairs(self._buckets) do
        for _, p in ipairs(bucket.params) do
            autograd.register_grad_ready_hook(p, function()
                self:_ready(bucket, p)
            end)
        end
    end
    rawset(self, "_launched", {})
    -- the last backward's buckets: launched during the pass (overlapped) or at its end
    rawset(self, "stats", { buckets = #self._buckets, overlapped = 0, at_end = 0 })
end

local DTYPE_BYTES = { float64 = 8, int64 = 8, float32 = 4, int32 = 4, float16 = 2, bfloat16 = 2,
    uint8 = 1, bool = 1 }

-- params in reverse order, cut into buckets of at most cap bytes of one device and dtype
function DDP:_make_buckets(params, cap)
    local buckets, cur, bytes = {}, nil, 0
    for i = #params, 1, -1 do
        local p = params[i]
        local size = p:numel() * (DTYPE_BYTES[p.dtype] or 8)
        if not cur or bytes + size > cap and #cur.params > 0 or cur.device ~= p.device or
            cur.dtype ~= p.dtype then
            cur = { params = {}, device = p.device, dtype = p.dtype, ready = {}, n_ready = 0 }
            buckets[#buckets + 1] = cur
            bytes = 0
        end
        cur.params[#cur.params + 1] = p
        bytes = bytes + size
    end
    return buckets
end

-- the bucket's gradients in one flat tensor (zeros for a parameter that got none this pass)
local function flatten(bucket)
    local parts = {}
    for i, p in ipairs(bucket.params) do
        local g = autograd.get_grad(p)
        parts[i] = g and g:reshape({ -1 }) or core.zeros({ p:numel() },
            { device = p.device, dtype = p.dtype })
    end
    return #parts == 1 and parts[1]:contiguous():clone() or core.cat(parts, 1)
end

function DDP:_launch(bucket)
    bucket.flat = flatten(bucket)
    bucket.work = dist().all_reduce(bucket.flat, { op = "mean", async = true })
    local l = self._launched
    l[#l + 1] = bucket
end

function DDP:_ready(bucket, p)
    if #self._launched == 0 and not self._queued then
        rawset(self, "_queued", true)
        rawset(self, "_pass", { buckets = #self._buckets, overlapped = 0, at_end = 0 })
        autograd.queue_callback(function()
            self:_finish()
        end)
    end
    if bucket.ready[p] or bucket.work then
        return
    end
    bucket.ready[p] = true
    bucket.n_ready = bucket.n_ready + 1
    if bucket.n_ready == #bucket.params then
        self:_launch(bucket)
        self._pass.overlapped = self._pass.overlapped + 1
    end
end

-- end of backward: launch what is left (in bucket order: the same on every rank), wait for all,
-- and give each parameter its averaged gradient
function DDP:_finish()
    local pass = self._pass
    for _, bucket in ipairs(self._buckets) do
        if not bucket.work then
            self:_launch(bucket)
            pass.at_end = pass.at_end + 1
        end
    end
    for _, bucket in ipairs(self._launched) do
        bucket.work:wait()
        local off = 1
        for _, p in ipairs(bucket.params) do
            local n = p:numel()
            autograd.set_grad(p, bucket.flat:narrow(1, off, n):view(p.shape))
            off = off + n
        end
        bucket.work, bucket.flat, bucket.ready, bucket.n_ready = nil, nil, {}, 0
    end
    rawset(self, "_launched", {})
    rawset(self, "_queued", false)
    rawset(self, "stats", pass)
end

function DDP:forward(...)
    if self.broadcast_buffers and self.training then
        local bufs = self.module:buffers()
        if #bufs > 0 then
            autograd.no_grad(function()
                for _, b in ipairs(bufs) do
                    dist().broadcast(b, 0)
                end
            end)
        end
    end
    return self.module(...)
end

function DDP:extra_repr()
    return string.format("world_size=%d, buckets=%d", dist().world_size(), #self._buckets)
end

return DDP
