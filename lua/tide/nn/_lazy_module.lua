-- tide.nn._lazy_module: PyTorch's lazy modules (LazyLinear, LazyConv1d/2d/3d,
-- LazyConvTranspose1d/2d/3d, LazyBatchNorm1d/2d/3d, LazyInstanceNorm1d/2d/3d): a layer whose
-- input size (in_features, in_channels, num_features) is read from its first input. Until then
-- it holds an empty placeholder for each floating-point parameter and buffer the layer will
-- have, under the layer's names (where PyTorch holds an UninitializedParameter or
-- UninitializedBuffer: weight, bias, running_mean, running_var), which model:to moves and casts
-- like any; a buffer PyTorch makes at once (num_batches_tracked) is made at once too. The first
-- call builds the layer it stands for with the same draws that layer's constructor makes, on the
-- placeholders' device and dtype, and the module becomes that layer (its class too, as
-- PyTorch's), hooks and training mode kept. Its arguments are checked at construction, without
-- drawing from the generator; an input the layer refuses leaves the module lazy.
local compat = require("tide._compat")
local core = require("tide.core")
local autograd = require("tide.autograd")
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")

-- the in size a probe layer is built with: a grouped convolution's groups (its in_channels must
-- divide by them), else 1
local function probe_size(args)
    for i = 1, args.n do
        local a = args[i]
        if type(a) == "table" and not autograd.is_tensor(a) and compat.is_integer(a.groups) and
            a.groups >= 1 then
            return a.groups
        end
    end
    return 1
end

-- t (a placeholder) resized in place to shape, its requires_grad kept
local function resize(t, shape)
    local rg = t.requires_grad
    t:requires_grad_(false)
    t:resize_(shape)
    t:requires_grad_(rg)
end

-- Base(n, args...), its errors naming the lazy class
local function build(name, Base, n, args)
    local ok, m = pcall(Base, n, compat.unpack(args, 1, args.n))
    if not ok then
        local msg = tostring(m):gsub("tide: " .. Base.__name .. ":", "tide: " .. name .. ":")
        error(msg, 0)
    end
    return m
end

-- lazy(name, Base, in_size[, prepare]): the class; in_size(x, name) reads the input size from
-- the first input, or raises naming what it expected; prepare(args) gives the arguments Base
-- takes after the size (PyTorch's lazy defaults where they differ from the layer's)
return function(name, Base, in_size, prepare)
    local Lazy = Module:extend(name)
    Lazy.cls_to_become = Base -- PyTorch's: the class the module becomes at its first call

    function Lazy:init(...)
        local args = compat.pack(...)
        if prepare then
            args = prepare(args)
        end
        -- the arguments checked by building the layer once, the generator's position restored
        -- after (PyTorch's lazy layers draw nothing until used); its tensors name the
        -- placeholders
        local state = core._rng_state()
        local ok, probe = pcall(build, name, Base, probe_size(args), args)
        core._set_rng_state(state)
        if not ok then
            error(probe, 0)
        end
        rawset(self, "_lazy_args", args)
        -- PyTorch's attributes before the first call: the layer's, its in size 0
        for k, v in pairs(probe) do
            if type(k) == "string" and k:sub(1, 1) ~= "_" and k ~= "training" and
                not autograd.is_tensor(v) and rawget(self, k) == nil then
                rawset(self, k, v)
            end
        end
        for _, k in ipairs({ "in_features", "in_channels", "num_features" }) do
            if rawget(probe, k) ~= nil then
                rawset(self, k, 0)
            end
        end
        local ph = {} -- the placeholders' names (PyTorch's Uninitialized* tensors)
        -- (on the probe's device and dtype: PyTorch's factory arguments, device = and dtype =)
        for _, k in ipairs(probe._params) do
            local p = rawget(probe, k)
            if p then
                self:register_parameter(k, core.empty({ 0 }, { dtype = p.dtype,
                    device = p.device }))
                ph[#ph + 1] = k
            end
        end
        for _, k in ipairs(probe._buffers) do
            local b = rawget(probe, k)
            if b then
                self:register_buffer(k, autograd.FLOAT[b.dtype] and core.empty({ 0 },
                    { dtype = b.dtype, device = b.device }) or b)
                if autograd.FLOAT[b.dtype] then
                    ph[#ph + 1] = k
                end
            end
        end
        rawset(self, "_lazy_ph", ph)
    end

    -- PyTorch's: true while a placeholder waits for its shape (a first call or a load gives it)
    function Lazy:has_uninitialized_params()
        for _, k in ipairs(rawget(self, "_lazy_ph") or {}) do
            local t = rawget(self, k)
            if t and t:numel() == 0 then
                return true
            end
        end
        return false
    end

    -- PyTorch's load into a lazy module: a placeholder takes the state dict's shape, in place
    -- (the load then copies the values); the module stays lazy until its first call
    function Lazy:_load_from_state_dict(sd, prefix)
        for _, k in ipairs(rawget(self, "_lazy_ph") or {}) do
            local t, v = rawget(self, k), sd[prefix .. k]
            if t and t:numel() == 0 and autograd.is_tensor(v) and v:numel() > 0 then
                resize(t, v.shape)
            end
        end
    end

    -- the layer built for x, its placeholders taking its tensors in place (an optimizer built
    -- before keeps them, as PyTorch's materialize); run: the layer's forward on x, an input it
    -- refuses (a kernel larger than the input, another dtype) leaving this module lazy and the
    -- generator where it was
    local function become(self, run, x, ...)
        I.check_tensor(x, name)
        local n = in_size(x, name)
        local args, training = self._lazy_args, self.training
        local state = core._rng_state()
        local m = build(name, Base, n, args)
        local place -- the first placeholder: where model:to put them all
        local empty = {}
        for _, list in ipairs({ "_params", "_buffers" }) do
            for _, k in ipairs(self[list]) do
                local t = rawget(self, k)
                if t and t:numel() == 0 then
                    place = place or t
                    empty[#empty + 1] = k
                elseif t then -- made at once or loaded: kept, as PyTorch's
                    rawset(m, k, t)
                end
            end
        end
        if place then
            m:to(place.device, place.dtype)
        else -- all loaded: PyTorch draws nothing
            core._set_rng_state(state)
        end
        m:train(training)
        for _, k in ipairs(empty) do
            local t, v = rawget(self, k), rawget(m, k)
            resize(t, v.shape)
            autograd.no_grad(function() t:copy_(v) end)
            rawset(m, k, t)
        end
        local r = compat.pack(true)
        if run then
            r = compat.pack(pcall(m.forward, m, x, ...))
        end
        if not r[1] then
            for _, k in ipairs(empty) do
                resize(rawget(self, k), { 0 })
            end
            core._set_rng_state(state)
            error(r[2], 0)
        end
        for _, list in ipairs({ "_params", "_buffers", "_modules" }) do
            for _, k in ipairs(self[list]) do -- the placeholders go
                rawset(self, k, nil)
            end
        end
        for k, v in pairs(m) do
            rawset(self, k, v)
        end
        rawset(self, "_lazy_args", nil)
        rawset(self, "_lazy_ph", nil)
        setmetatable(self, Base)
        return compat.unpack(r, 2, r.n)
    end

    function Lazy:forward(...)
        return become(self, true, ...)
    end

    -- PyTorch's initialize_parameters(input): the shapes inferred from input, without running
    -- the layer (here the module becomes the layer at once; PyTorch's does at its next call)
    function Lazy:initialize_parameters(x, ...)
        become(self, false, x, ...)
    end

    function Lazy:extra_repr()
        return "uninitialized: a " .. Base.__name .. " sized by its first input"
    end

    -- PyTorch's arguments: the layer's without the size (tide.nn._signature)
    return require("tide.nn._signature").derive(Lazy, Base)
end
