-- tide.nn._per_dims: the modules that differ only in their number of spatial dims, out of the
-- users' sight: LPPool1d/2d, MaxUnpool1d/2d/3d and FractionalMaxPool2d/3d are each one class
-- made per dims here.
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local S = require("tide.nn._signature")

local M = {}

local function show(v)
    return type(v) == "table" and "{" .. table.concat(v, ", ") .. "}" or tostring(v)
end

-- PyTorch's d-tuple attribute of an int-or-tuple argument: 2 -> {2, 2}; a table is copied
-- (checked where it is used); nil stays nil
local function tuple(v, d)
    if type(v) ~= "table" then
        if v == nil then
            return nil
        end
        local t = {}
        for i = 1, d do
            t[i] = v
        end
        return t
    end
    return { require("tide._compat").unpack(v) }
end

-- a tuple attribute in a repr: {2, 2} as 2 (as it was given), {3, 2} as is
local function show_compact(v)
    if type(v) == "table" then
        for i = 2, #v do
            if v[i] ~= v[1] then
                return show(v)
            end
        end
        return tostring(v[1])
    end
    return tostring(v)
end

-- nn.LPPool<d>d(norm_type, kernel_size[, {stride = kernel_size, ceil_mode = false}])
function M.lp_pool(d)
    local name, fn = "LPPool" .. d .. "d", "lp_pool" .. d .. "d"
    local cls = Module:extend(name)
    function cls:init(norm_type, kernel_size, opts)
        core._check_options(opts or {}, name, { "stride", "ceil_mode" })
        opts = opts or {}
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = opts.stride, opts.ceil_mode == true
    end
    function cls:forward(x)
        I.check_tensor(x, name)
        return F[fn](x, self.norm_type, self.kernel_size, { stride = self.stride,
            ceil_mode = self.ceil_mode })
    end
    function cls:extra_repr()
        return string.format("norm_type=%s, kernel_size=%s, stride=%s, ceil_mode=%s",
            tostring(self.norm_type), show(self.kernel_size), show(self.stride),
            tostring(self.ceil_mode))
    end
    return cls
end

-- nn.MaxUnpool<d>d(kernel_size[, stride = kernel_size[, padding = 0]]) or (k, {stride =,
-- padding =}); forward(input, indices[, output_size])
function M.max_unpool(d)
    local name, fn = "MaxUnpool" .. d .. "d", "max_unpool" .. d .. "d"
    local cls = Module:extend(name)
    function cls:init(kernel_size, stride, padding)
        if type(stride) == "table" and #stride == 0 then
            core._check_options(stride, name, { "stride", "padding" })
            stride, padding = stride.stride, stride.padding
        end
        -- PyTorch's d-tuples (MaxUnpool2d(2).stride is (2, 2)); forward passes them on
        self.kernel_size = tuple(kernel_size, d)
        self.stride, self.padding = tuple(stride or kernel_size, d), tuple(padding or 0, d)
    end
    function cls:forward(x, indices, output_size)
        I.check_tensor(x, name)
        return F[fn](x, indices, self.kernel_size, { stride = self.stride,
            padding = self.padding, output_size = output_size })
    end
    function cls:extra_repr()
        return string.format("kernel_size=%s, stride=%s, padding=%s",
            show_compact(self.kernel_size), show_compact(self.stride), show_compact(self.padding))
    end
    -- MaxUnpool2d({kernel_size = 2, stride = 2}) by name as PyTorch's
    S.define(cls, { names = { "kernel_size", "stride", "padding" }, required = 1, flat = true })
    return cls
end

-- nn.FractionalMaxPool<d>d(kernel_size, {output_size = | output_ratio =, return_indices =
-- false, _random_samples =}): F.fractional_max_pool<d>d; given _random_samples {N, C, d} (a
-- buffer, as PyTorch's) every call pools the same windows, else each call draws its own
local FRACTIONAL = { "output_size", "output_ratio", "return_indices", "_random_samples" }
function M.fractional_max_pool(d)
    local name, fn = "FractionalMaxPool" .. d .. "d", "fractional_max_pool" .. d .. "d"
    local T = require("tide.nn._args3d")
    local cls = Module:extend(name)
    function cls:init(kernel_size, opts)
        if opts ~= nil and (type(opts) ~= "table" or autograd.is_tensor(opts)) then
            raise(("tide: %s: expected an options table {output_size = | output_ratio =, " ..
                "...} after kernel_size, got %s"):format(name, T.show(opts)))
        end
        local o = opts or {}
        core._check_options(o, name, FRACTIONAL)
        if d == 3 then
            T.triple(kernel_size, nil, name, "kernel_size", 1)
        else
            I.pair(kernel_size, name, "kernel_size", 1)
        end
        if (o.output_size == nil) == (o.output_ratio == nil) then
            raise(("tide: %s: pass output_size or output_ratio (one of them: the pooled size, " ..
                "or its ratio to the input's)"):format(name))
        end
        if o.output_size ~= nil then
            if d == 3 then
                T.triple(o.output_size, nil, name, "output_size", 1)
            else
                I.pair(o.output_size, name, "output_size", 1)
            end
        end
        local r = o.output_ratio
        if r ~= nil then
            local list = type(r) == "table" and not autograd.is_tensor(r) and r or { r }
            local ok = #list == 1 or #list == d
            for i = 1, #list do
                ok = ok and type(list[i]) == "number" and list[i] > 0 and list[i] < 1
            end
            if not ok then
                raise(("tide: %s: expected output_ratio between 0 and 1 (a number or %d " ..
                    "numbers), got %s"):format(name, d, T.show(r)))
            end
        end
        local bool = o.return_indices
        if bool ~= nil and type(bool) ~= "boolean" then
            raise(("tide: %s: expected return_indices to be a boolean, got %s"):format(name,
                T.show(bool)))
        end
        local samples = o._random_samples
        if samples ~= nil and not autograd.is_tensor(samples) then
            raise(("tide: %s: expected _random_samples to be a tensor {N, C, %d}, got %s")
                :format(name, d, type(samples)))
        end
        -- PyTorch's d-tuples (pool.kernel_size[1], pool.output_ratio[1])
        self.kernel_size, self.output_size = tuple(kernel_size, d), tuple(o.output_size, d)
        self.output_ratio = tuple((type(r) == "table" and #r == 1) and r[1] or r, d)
        self.return_indices = bool == true
        if samples ~= nil then
            self:register_buffer("_random_samples", samples)
        end
    end
    function cls:forward(x)
        I.check_tensor(x, name)
        return F[fn](x, self.kernel_size, { output_size = self.output_size,
            output_ratio = self.output_ratio, return_indices = self.return_indices,
            _random_samples = rawget(self, "_random_samples") })
    end
    function cls:extra_repr()
        local s = "kernel_size=" .. show_compact(self.kernel_size)
        if self.output_size ~= nil then
            return s .. ", output_size=" .. show_compact(self.output_size)
        end
        return s .. ", output_ratio=" .. show_compact(self.output_ratio)
    end
    S.define(cls, { names = { "kernel_size", "output_size", "output_ratio", "return_indices",
        "_random_samples" }, required = 1 })
    return cls
end

return M
