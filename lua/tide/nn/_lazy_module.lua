-- tide.nn._lazy_module: PyTorch's lazy modules (LazyLinear, LazyConv1d/2d/3d): a layer whose
-- input size (in_features, in_channels) is read from its first input. Until then it holds one
-- empty placeholder parameter, `weight` (PyTorch's UninitializedParameter), which model:to
-- moves and casts like any parameter; the first call builds the layer it stands for with the
-- same draws that layer's constructor makes, on the placeholder's device and dtype, and the
-- module becomes that layer (its class too, as PyTorch's), hooks and training mode kept.
-- Its arguments are checked at construction, without drawing from the generator.
local compat = require("tide._compat")
local core = require("tide.core")
local autograd = require("tide.autograd")
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")

local raise = autograd.raise

-- lazy(name, Base, in_size): the class; in_size(x) reads the input size from the first input,
-- or raises naming what it expected
return function(name, Base, in_size)
    local Lazy = Module:extend(name)

    function Lazy:init(...)
        local args = compat.pack(...)
        -- the arguments checked by building the layer once with an input size of 1, the
        -- generator's position restored after (PyTorch's lazy layers draw nothing until used)
        local state = core._rng_state()
        local ok, err = pcall(Base, 1, compat.unpack(args, 1, args.n))
        core._set_rng_state(state)
        if not ok then
            local msg = tostring(err):gsub("tide: " .. Base.__name .. ":", "tide: " .. name .. ":")
            error(msg, 0)
        end
        rawset(self, "_lazy_args", args)
        self:register_parameter("weight", core.empty({ 0 }))
    end

    function Lazy:forward(x, ...)
        I.check_tensor(x, name)
        local n = in_size(x, name)
        local place = rawget(self, "weight")
        local args, training = self._lazy_args, self.training
        local m = Base(n, compat.unpack(args, 1, args.n))
        m:to(place.device, place.dtype)
        for _, list in ipairs({ "_params", "_buffers", "_modules" }) do
            for _, k in ipairs(self[list]) do -- the placeholder goes
                rawset(self, k, nil)
            end
        end
        for k, v in pairs(m) do
            rawset(self, k, v)
        end
        rawset(self, "_lazy_args", nil)
        setmetatable(self, Base)
        self:train(training)
        return self:forward(x, ...)
    end

    function Lazy:extra_repr()
        return "uninitialized: a " .. Base.__name .. " sized by its first input"
    end

    return Lazy
end
