-- nn.DataParallel(model[, device_ids[, output_device[, dim]]]) or nn.DataParallel(model,
-- {device_ids = {...}, output_device =, dim = 1}) (`devices` is device_ids): one process,
-- several devices. Each forward splits every tensor argument along dim as x:chunk(#devices, dim)
-- does (PyTorch's scatter), runs a replica of the model on each part's device, and gathers the
-- outputs (each of several returns, and the tensors of a returned list) on output_device
-- (default: the first device); backward brings the replicas' gradients back to the model's
-- parameters, summed (the replicas are made of `p:to(device)`, which autograd follows).
--
-- devices: names or devices (default: every CUDA device when CUDA is available, else "cpu");
-- the model lives on the first. On the CPU, `cpu:0..N-1` exist with TIDE_CPU_DEVICES=N.
local compat = require("tide._compat")
local idiv = compat.idiv
local pack = compat.pack
local unpack = compat.unpack
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

-- a device id: a name, a device, or PyTorch's integer i (cuda:i, as every integer device)
local function to_device(d, i)
    local ok, dev = pcall(core.device, d)
    if not ok then
        raise((tostring(dev):match("tide:.*") or tostring(dev)) ..
            " (DataParallel device_ids[" .. i .. "])")
    end
    return dev
end

-- PyTorch's DataParallel(module, device_ids=None, output_device=None, dim=0): positional, or
-- by name in a table ({device_ids =, output_device =, dim =}; `devices` is device_ids)
function DataParallel:init(module, device_ids, output_device, dim)
    if not Module.is_module(module) then
        raise("tide: DataParallel: expected a Module, got " .. type(module))
    end
    local names = device_ids
    if type(device_ids) == "table" and getmetatable(device_ids) == nil and device_ids[1] == nil
        and next(device_ids) ~= nil then
        local opts = args.options("DataParallel", device_ids,
            { "devices", "device_ids", "output_device", "dim" },
            "{device_ids = {\"cpu:0\", \"cpu:1\"}, output_device =, dim = 1}")
        if opts.devices ~= nil and opts.device_ids ~= nil then
            raise("tide: DataParallel: give devices or device_ids (the same option), not both")
        end
        names = opts.device_ids or opts.devices
        output_device, dim = opts.output_device, opts.dim
    end
    names = names or default_devices()
    if type(names) ~= "table" or getmetatable(names) ~= nil or #names == 0 then
        raise("tide: DataParallel: device_ids must be a non-empty list such as {\"cpu:0\", " ..
            "\"cpu:1\"}, got " .. tostring(names))
    end
    local devices = {}
    for i, d in ipairs(names) do
        devices[i] = to_device(d, i)
    end
    local out = output_device == nil and devices[1] or to_device(output_device, "output_device")
    dim = dim == nil and 1 or args.integer("DataParallel", dim, "dim")
    if dim < 1 then
        raise("tide: DataParallel: dim = " .. dim .. "; dims are 1-based (PyTorch's dim=0 is " ..
            "dim = 1), and the scatter dim must be >= 1")
    end
    self.module = module
    rawset(self, "devices", devices)
    rawset(self, "device_ids", devices)
    rawset(self, "output_device", out)
    rawset(self, "dim", dim)
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

-- the parameters and buffers of m on dev (PyTorch checks this at each forward)
local function check_placement(m, dev)
    for _, list in ipairs({ m:parameters(), m:buffers() }) do
        for _, p in ipairs(list) do
            if p.device ~= dev then
                raise(("tide: DataParallel: the model's parameters are on %s, not on the " ..
                    "first device %s; move the model first with model:to(\"%s\")"):format(
                    tostring(p.device), tostring(dev), tostring(dev)))
            end
        end
    end
end

-- outputs gathered on dev along dim: a tensor is the parts' cat; a list (a Lua table of
-- tensors, PyTorch's tuple) is gathered entry by entry; anything else is the first part's
local function gather(parts, dev, dim)
    local first = parts[1]
    if autograd.is_tensor(first) then
        local moved = {}
        for i, p in ipairs(parts) do
            moved[i] = p:to(dev)
        end
        if first:dim() == 0 then -- PyTorch stacks scalars (with a warning): a vector
            return core.stack(moved, 1)
        end
        return core.cat(moved, dim)
    elseif type(first) == "table" and getmetatable(first) == nil and #first > 0 then
        local out = {}
        for j = 1, #first do
            local col = {}
            for i, p in ipairs(parts) do
                col[i] = p[j]
            end
            out[j] = gather(col, dev, dim)
        end
        return out
    end
    return first
end

function DataParallel:forward(...)
    local inputs = pack(...)
    local x = inputs[1]
    if not autograd.is_tensor(x) then -- the batch is split along dim
        raise("tide: DataParallel: expected a tensor input (a batch to split over the devices), " ..
            "got " .. type(x))
    end
    local devices, dim = self.devices, self.dim
    check_placement(self.module, devices[1])
    if x:dim() < dim then
        raise(("tide: DataParallel: dim = %d but the input has %d dims"):format(dim, x:dim()))
    end
    local n = x.shape[dim]
    -- PyTorch's scatter is x:chunk(#devices, dim): parts of ceil(n / k), the last smaller,
    -- so fewer parts than devices when n is small (10 over 3 devices: 4, 4, 2)
    local size = idiv(n + #devices - 1, #devices)
    local k = size > 0 and idiv(n + size - 1, size) or 1
    if #devices == 1 or k <= 1 then
        for i = 1, inputs.n do
            if autograd.is_tensor(inputs[i]) then
                inputs[i] = inputs[i]:to(devices[1])
            end
        end
        local ys = pack(self.module(unpack(inputs, 1, inputs.n)))
        for j = 1, ys.n do
            ys[j] = gather({ ys[j] }, self.output_device, dim)
        end
        return unpack(ys, 1, ys.n)
    end
    local outs, nout = {}, 1
    for i = 1, k do
        local start = (i - 1) * size + 1
        local len = math.min(size, n - start + 1)
        local dev = devices[i]
        -- every tensor argument is split along dim (PyTorch scatters them all); others are
        -- given to each replica as they are
        local part = {}
        for a = 1, inputs.n do
            local t = inputs[a]
            if autograd.is_tensor(t) and t:dim() >= dim and t.shape[dim] == n then
                part[a] = t:narrow(dim, start, len):to(dev)
            elseif autograd.is_tensor(t) then
                part[a] = t:to(dev)
            else
                part[a] = t
            end
        end
        local replica = i == 1 and self.module or replicate(self.module, dev, {})
        local ys = pack(replica(unpack(part, 1, inputs.n)))
        outs[i] = ys
        nout = math.max(nout, ys.n)
    end
    local result = {}
    for j = 1, nout do
        local col = {}
        for i = 1, k do
            col[i] = outs[i][j]
        end
        result[j] = gather(col, self.output_device, dim)
    end
    return unpack(result, 1, nout)
end

function DataParallel:extra_repr()
    local names = {}
    for i, d in ipairs(self.devices) do
        names[i] = tostring(d)
    end
    return "devices={" .. table.concat(names, ", ") .. "}"
end

return DataParallel
