-- nn.DataParallel(model[, {devices = {...}}]): one process, several devices. Each forward splits
-- the batch (dim 1) over the devices, runs a replica of the model on each, and gathers the
-- outputs on the first device; backward brings the replicas' gradients back to the model's
-- parameters, summed (the replicas are made of `p:to(device)`, which autograd follows).
--
-- devices: names or devices (default: every CUDA device when CUDA is available, else "cpu");
-- the model lives on the first. On the CPU, `cpu:0..N-1` exist with TIDE_CPU_DEVICES=N.
local idiv = require("tide._compat").idiv
local autograd = require("tide.autograd")
local core = require("tide.core")
local args = require("tide.op_args")
local Module = require("tide.nn.Module")
local raise = autograd.raise

local DataParallel = Module:extend("DataParallel")

local function default_devices()
    local tide = require("tide")
    if tide.cuda.is_available() then
        local out = {}
        for i = 0, tide.cuda.device_count() - 1 do
            out[#out + 1] = "cuda:" .. i
        end
        return out
    end
    return { "cpu" }
end

function DataParallel:init(module, opts)
    if not Module.is_module(module) then
        raise("tide: DataParallel: expected a Module, got " .. type(module))
    end
    opts = args.options("DataParallel", opts, { "devices" }, "{devices = {\"cpu:0\", \"cpu:1\"}}")
    local names = opts.devices or default_devices()
    if type(names) ~= "table" or #names == 0 then
        raise("tide: DataParallel: devices must be a non-empty list such as {\"cpu:0\", " ..
            "\"cpu:1\"}, got " .. tostring(names))
    end
    local devices = {}
    for i, d in ipairs(names) do
        local ok, dev = pcall(core.device, d)
        if not ok then
            raise((tostring(dev):match("tide:.*") or tostring(dev)) ..
                " (DataParallel devices[" .. i .. "])")
        end
        devices[i] = dev
    end
    for _, p in ipairs(module:parameters()) do
        if p.device ~= devices[1] then
            raise(("tide: DataParallel: the model's parameters are on %s, not on the first " ..
                "device %s; move the model first with model:to(\"%s\")"):format(tostring(p.device),
                tostring(devices[1]), tostring(devices[1])))
        end
    end
    self.module = module
    rawset(self, "devices", devices)
end

-- a copy of module m whose parameters and buffers are `t:to(dev)` of m's (autograd leads their
-- gradients back to m's); fields that alias a child (Sequential's seq[i]) follow the copy
local function replicate(m, dev, memo)
    if memo[m] then
        return memo[m]
    end
    local r = setmetatable({}, getmetatable(m))
    memo[m] = r
    for _, names in ipairs({ m._params, m._buffers }) do
        for _, name in ipairs(names) do
            local t = rawget(m, name)
            if t then
                memo[t] = t:to(dev)
            end
        end
    end
    for _, c in ipairs(m:children()) do
        replicate(c, dev, memo)
    end
    for k, v in next, m do
        rawset(r, k, memo[v] or v)
    end
    return r
end

function DataParallel:forward(x, ...)
    if not autograd.is_tensor(x) then -- the batch is split along its first dim
        raise("tide: DataParallel: expected a tensor input (a batch to split over the devices), " ..
            "got " .. type(x))
    end
    local devices = self.devices
    local n = x.shape[1]
    local k = math.min(#devices, n)
    if k <= 1 then
        return self.module(x, ...)
    end
    local outs, start = {}, 1
    for i = 1, k do
        local len = idiv(n, k) + (i <= n % k and 1 or 0)
        local part = x:narrow(1, start, len)
        start = start + len
        local dev = devices[i]
        local replica = i == 1 and self.module or replicate(self.module, dev, {})
        local y = replica(part:to(dev), ...)
        outs[i] = y:to(devices[1])
    end
    return core.cat(outs, 1)
end

function DataParallel:extra_repr()
    local names = {}
    for i, d in ipairs(self.devices) do
        names[i] = tostring(d)
    end
    return "devices={" .. table.concat(names, ", ") .. "}"
end

return DataParallel
