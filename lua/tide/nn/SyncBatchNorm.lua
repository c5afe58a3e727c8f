-- nn.SyncBatchNorm(num_features[, {eps = 1e-5, momentum = 0.1, affine = true,
-- track_running_stats = true, process_group = nil, device =, dtype =}]): BatchNorm over the
-- batch of every rank of a tide.distributed job. In training, with dist initialized and more
-- than one rank, each channel's mean and (biased) variance are those of the union of the ranks'
-- batches, and the running estimates move as one BatchNorm's over the concatenated batch would;
-- backward all-reduces the two sums the input's gradient needs (of g and of g * xhat). Input
-- {N, C, ...} (any rank >= 2). In eval, or without a job (or a job of one rank), it is
-- BatchNorm. Unlike PyTorch 1.13's it runs on CPU tensors too (over MPI): that is what tide's
-- MPI backend is for. tide.distributed has no process groups: the statistics are always over
-- the whole job. Its training forward and backward are collectives: every rank runs them, in
-- the same order (an empty shard too).
--
-- SyncBatchNorm.convert_sync_batchnorm(module): every BatchNorm1d/2d/3d of module replaced, in
-- its parent, by a SyncBatchNorm holding the very same parameters and buffers.
local compat = require("tide._compat")
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local BatchNorm = require("tide.nn._BatchNorm")
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")

local WHO = "SyncBatchNorm"

-- a subclass of _BatchNorm: optim.swa_utils.update_bn resets and recomputes it as the others
local SyncBatchNorm = BatchNorm:extend("SyncBatchNorm")

local FLOAT = { float32 = true, float64 = true, float16 = true, bfloat16 = true }

local function check_bool(v, what)
    if v ~= nil and type(v) ~= "boolean" then
        raise(string.format("tide: %s: expected %s to be true or false, got %s", WHO, what,
            tostring(v)))
    end
    return v ~= false
end

local function check_group(pg)
    if pg ~= nil then
        raise("tide: " .. WHO .. ": process_group = " .. tostring(pg) .. "; tide.distributed " ..
            "has no process groups (the statistics are over every rank of the job): leave it nil")
    end
end

-- (num_features[, opts]) or PyTorch's positional (num_features, eps, momentum, affine,
-- track_running_stats)
function SyncBatchNorm:init(num_features, eps, momentum, affine, track_running_stats)
    local device, dtype
    if type(eps) == "table" then
        local o = eps
        core._check_options(o, WHO, { "eps", "momentum", "affine", "track_running_stats",
            "process_group", "device", "dtype" })
        eps, momentum, affine, track_running_stats = o.eps, o.momentum, o.affine,
            o.track_running_stats
        device, dtype = o.device, o.dtype
        check_group(o.process_group)
    end
    I.check_int(num_features, "num_features", WHO)
    self.num_features = num_features
    self.eps = I.check_number(eps, 1e-5, "eps", WHO)
    self.momentum = I.check_number(momentum, 0.1, "momentum", WHO)
    affine = check_bool(affine, "affine")
    track_running_stats = check_bool(track_running_stats, "track_running_stats")
    self.affine, self.track_running_stats = affine, track_running_stats -- PyTorch's attributes
    if dtype ~= nil and not FLOAT[dtype] then
        raise(string.format("tide: %s: dtype = %s; expected a floating dtype (\"float32\", " ..
            "\"float64\", \"float16\" or \"bfloat16\")", WHO, tostring(dtype)))
    end
    local o = { device = device, dtype = dtype or core.get_default_dtype() }
    if affine then
        self:register_parameter("weight", core.full({ num_features }, 1, o):requires_grad_(true))
        self:register_parameter("bias", core.full({ num_features }, 0, o):requires_grad_(true))
    end
    if track_running_stats then
        self:register_buffer("running_mean", core.zeros({ num_features }, o))
        self:register_buffer("running_var", core.ones({ num_features }, o))
        self:register_buffer("num_batches_tracked", core.zeros({}, { dtype = "int64",
            device = device }))
    end
end

-- the job to synchronize over, or nil (none started, or one rank). tide.distributed not
-- loaded: no job, and nothing of it is loaded for a plain BatchNorm
local function job()
    local dist = package.loaded["tide.distributed"]
    if dist and dist.is_initialized() and dist.world_size() > 1 then
        return dist
    end
    return nil
end

-- t summed (or averaged, with f = "mean") over every dim but the channels' (dim 2): {C}
local function per_channel(t, f)
    f = f or "sum"
    for d = t:dim(), 3, -1 do
        t = t[f](t, d)
    end
    return t[f](t, 1)
end

-- the dtype the statistics and gradient sums are taken in: half inputs in float32 (MPI has no
-- float16, and their sums overflow)
local function acc_dtype(x)
    return x.dtype == "float64" and "float64" or "float32"
end

-- this rank's count n and, per channel, mean and M2 (the sum of squared deviations), both
-- float64 {C}. The mean is refined by the mean deviation from a first estimate, so a float32
-- input far from 0 (at 1000, with a spread of 1) loses nothing to the sum's rounding
local function local_stats(x, c, bshape)
    local n = compat.idiv(x:numel(), c)
    local f64 = { dtype = "float64", device = x.device }
    if n == 0 then -- an empty shard counts for nothing (its mean would be NaN)
        local z = core.zeros({ c }, f64)
        return n, z, z
    end
    local acc = acc_dtype(x)
    local xs = x.dtype == acc and x or x:to(acc)
    local m0 = per_channel(xs, "mean")
    local xc = xs:sub(m0:view(bshape))
    local s1 = per_channel(xc):to("float64")
    local d = s1:div(n)
    return n, m0:to("float64"):add(d), per_channel(xc:mul(xc)):to("float64"):sub(s1:mul(d))
end

-- (x - mean) * invstd, the mean split in x's dtype as hi + lo: x - hi is exact near the mean,
-- so a float32 x far from 0 keeps its precision
local function normalize(x, hi, lo, invstd)
    local xc = x:sub(hi)
    if lo then
        xc = xc:sub(lo)
    end
    return xc:mul(invstd)
end

-- ---- the synchronized op: forward gathers each rank's (count, mean, M2), backward
-- all-reduces sum(g) and sum(g * xhat) ----

local Fn = autograd.Function:extend("SyncBatchNorm")

-- s: {dist =, eps =, momentum =, running_mean =, running_var =} (the running estimates nil
-- when not tracked)
function Fn.forward(ctx, x, weight, bias, s)
    local c = x:size(2)
    local bshape = { 1, c }
    for d = 3, x:dim() do
        bshape[d] = 1
    end
    local n, mean_l, m2_l = local_stats(x, c, bshape)
    -- Chan's combination of the ranks' (count, mean, M2), in float64: no sum of squares to
    -- cancel, whatever the data's offset
    local mine = core.cat({ core.full({ 1 }, n, { dtype = "float64", device = x.device }),
        mean_l, m2_l }, 1)
    local all = core.stack(s.dist.all_gather(mine), 1) -- {W, 2C + 1}
    local counts = all:narrow(2, 1, 1)
    local total = counts:sum():item()
    if total < 2 then
        raise(string.format("tide: %s: expected more than 1 value per channel in training " ..
            "over all ranks, got %d (this rank's input %s)", WHO, total, I.shape_str(x.shape)))
    end
    local means, m2s = all:narrow(2, 2, c), all:narrow(2, c + 2, c)
    local mean = counts:mul(means):sum(1):div(total)
    local dm = means:sub(mean:view(1, c))
    local var = m2s:sum(1):add(counts:mul(dm):mul(dm):sum(1)):div(total)
    local rm, rv, momentum = s.running_mean, s.running_var, s.momentum
    if rm then
        rm:mul_(1 - momentum):add_(mean:mul(momentum):to(rm.dtype))
    end
    if rv then -- the unbiased variance, as BatchNorm's
        rv:mul_(1 - momentum):add_(var:mul(momentum * total / (total - 1)):to(rv.dtype))
    end
    local hi = mean:to(x.dtype)
    local lo = x.dtype ~= "float64" and mean:sub(hi:to("float64")):to(x.dtype):view(bshape)
    hi = hi:view(bshape)
    local invstd = var:add(s.eps):rsqrt():to(x.dtype):view(bshape)
    local y = I.channel_affine(normalize(x, hi, lo, invstd), weight, bias, bshape)
    ctx:save_for_backward(x, weight)
    ctx.hi, ctx.lo, ctx.invstd, ctx.total, ctx.bshape = hi, lo, invstd, total, bshape
    ctx.dist, ctx.bias_dtype = s.dist, bias and bias.dtype
    return y
end

function Fn.backward(ctx, g)
    local x, weight = ctx.saved_tensors[1], ctx.saved_tensors[2]
    local need = ctx.needs_input_grad
    local bshape, c = ctx.bshape, x:size(2)
    local xhat = normalize(x, ctx.hi, ctx.lo, ctx.invstd)
    local acc = acc_dtype(x)
    local ga = g.dtype == acc and g or g:to(acc)
    local sum_g, sum_gx, gx, gw, gb
    if need[1] or need[3] then
        sum_g = per_channel(ga)
    end
    if need[1] or need[2] then
        sum_gx = per_channel(ga:mul(xhat:to(acc)))
    end
    -- the parameters' gradients are this rank's part (DistributedDataParallel averages them)
    if need[2] then
        gw = sum_gx:to(weight.dtype)
    end
    if need[3] then
        gb = sum_g:to(ctx.bias_dtype)
    end
    if need[1] then
        -- x's gradient reads the means of g and g * xhat over the whole job's batch (every rank
        -- gets here: the same graph runs on each)
        local both = ctx.dist.all_reduce(core.cat({ sum_g, sum_gx }, 1))
        both = both:div(ctx.total):to(x.dtype)
        local mean_g = both:narrow(1, 1, c):view(bshape)
        local mean_gx = both:narrow(1, c + 1, c):view(bshape)
        local scale = ctx.invstd
        if weight then
            scale = scale:mul(weight:to(x.dtype):view(bshape))
        end
        gx = g:sub(mean_g):sub(xhat:mul(mean_gx)):mul(scale)
    end
    return gx, gw, gb, nil -- one per argument of forward (s, the settings, takes none)
end

function SyncBatchNorm:check(x)
    I.check_tensor(x, WHO)
    if x:dim() < 2 then
        raise("tide: " .. WHO .. ": expected input {N, C, ...} of at least 2 dims, got " ..
            I.shape_str(x.shape) .. "; add the batch dim with x:unsqueeze(1)")
    end
    if not FLOAT[x.dtype] then
        raise(string.format("tide: %s: expected a floating-point input, got %s; convert it " ..
            "with x:to(\"float32\")", WHO, x.dtype))
    end
    local ref = self.running_mean or self.weight
    if ref then
        I.check_device(x, ref, WHO)
    end
    for _, name in ipairs({ "weight", "bias", "running_mean", "running_var" }) do
        I.check_norm_dtype(x, self[name], WHO, name, true)
    end
    if x:size(2) ~= self.num_features then
        raise(string.format("tide: %s: expected input with %d channels (dim 2), got %d", WHO,
            self.num_features, x:size(2)))
    end
end

function SyncBatchNorm:forward(x)
    self:check(x)
    local training, rm, rv = self.training, self.running_mean, self.running_var
    -- without running estimates, batch statistics in eval too (not synchronized, as PyTorch)
    local bn_training = training or rm == nil
    local momentum = 0
    if training and rm ~= nil then
        momentum = self.momentum
        if momentum == nil then -- nil: the cumulative average (update_bn sets it)
            momentum = 1 / (self.num_batches_tracked:item() + 1)
        end
    end
    local dist = training and job()
    local y
    if dist then
        y = Fn.apply(x, self.weight, self.bias, { dist = dist, eps = self.eps,
            momentum = momentum, running_mean = rm, running_var = rv })
    else
        y = I.batch_norm(x, rm, rv, self.weight, self.bias, bn_training, momentum, self.eps,
            WHO)
    end
    if training and rm ~= nil then
        autograd.no_grad(function()
            self.num_batches_tracked:add_(1)
        end)
    end
    return y
end

function SyncBatchNorm:extra_repr()
    return string.format("%d, eps=%s, momentum=%s, affine=%s, track_running_stats=%s",
        self.num_features, tostring(self.eps), tostring(self.momentum),
        tostring(self.weight ~= nil), tostring(self.running_mean ~= nil))
end

-- ---- convert_sync_batchnorm ----

local function is_batchnorm(m)
    local cls = getmetatable(m)
    while type(cls) == "table" do
        if cls == SyncBatchNorm then
            return false -- already synchronized: kept as it is
        elseif cls == BatchNorm then
            return true
        end
        local mt = getmetatable(cls)
        cls = mt and mt.__index
    end
    return false
end

local function convert(m, done)
    if done[m] then
        return done[m]
    end
    local out = m
    if is_batchnorm(m) then
        out = SyncBatchNorm(m.num_features, { eps = m.eps, affine = rawget(m, "weight") ~= nil,
            track_running_stats = rawget(m, "running_mean") ~= nil })
        -- the very same tensors, as they are (an optimizer over m's parameters goes on
        -- training them; a frozen one stays frozen)
        rawset(out, "momentum", m.momentum)
        for _, name in ipairs({ "weight", "bias", "running_mean", "running_var",
            "num_batches_tracked" }) do
            if out._kind[name] then
                rawset(out, name, rawget(m, name))
            end
        end
        rawset(out, "training", m.training)
    end
    done[m] = out
    for _, name in ipairs(m._modules) do
        local child = rawget(m, name)
        if child ~= nil then
            local new = convert(child, done)
            if new ~= child then
                -- every field of m holding the child (Sequential's m[i] beside m["i"])
                local keys = {}
                for k, v in next, m do
                    if rawequal(v, child) then
                        keys[#keys + 1] = k
                    end
                end
                for _, k in ipairs(keys) do
                    rawset(m, k, new)
                end
            end
        end
    end
    return out
end

-- convert_sync_batchnorm(module[, process_group]): module, or the SyncBatchNorm that replaces
-- it when it is itself a BatchNorm
function SyncBatchNorm.convert_sync_batchnorm(module, process_group, ...)
    if not Module.is_module(module) then
        raise("tide: " .. WHO .. ".convert_sync_batchnorm: expected a Module, got " ..
            type(module))
    end
    if select("#", ...) > 0 then
        raise("tide: " .. WHO .. ".convert_sync_batchnorm: takes (module[, process_group]), " ..
            "got " .. (2 + select("#", ...)) .. " arguments")
    end
    check_group(process_group)
    return convert(module, {})
end

require("tide.nn._signature").define(SyncBatchNorm, { names = { "num_features", "eps", "momentum",
    "affine", "track_running_stats", "process_group", "device", "dtype" }, required = 1 })

return SyncBatchNorm
