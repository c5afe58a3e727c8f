-- the shared body of BatchNorm1d and BatchNorm2d: batch statistics in training (biased
-- variance to normalize, unbiased in the running estimate, as PyTorch), running statistics in
-- eval; running_mean/running_var/num_batches_tracked are buffers
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local S = require("tide.nn._signature")

local BatchNorm = Module:extend("_BatchNorm")

function BatchNorm:init(num_features, eps, momentum, affine, track_running_stats)
    if type(eps) == "table" then
        local o = eps
        core._check_options(o, self.__name, { "eps", "momentum", "affine", "track_running_stats" })
        eps, momentum, affine, track_running_stats = o.eps, o.momentum, o.affine,
            o.track_running_stats
    end
    if track_running_stats ~= nil and type(track_running_stats) ~= "boolean" then
        raise("tide: " .. self.__name .. ": expected track_running_stats to be a boolean, got " ..
            type(track_running_stats))
    end
    I.check_int(num_features, "num_features", self.__name)
    eps = I.check_number(eps, 1e-5, "eps", self.__name)
    -- momentum = false is PyTorch's momentum=None (a cumulative average; nil is the default)
    if momentum == false then
        momentum = nil
    else
        momentum = I.check_number(momentum, 0.1, "momentum", self.__name)
    end
    self.num_features, self.eps, self.momentum = num_features, eps, momentum
    self.affine = affine ~= false -- PyTorch's attribute (read by ported code)
    if self.affine then
        I.affine_params(self, { num_features }, true)
    end
    -- track_running_stats = false: no buffers, batch statistics in eval too (PyTorch's)
    self.track_running_stats = track_running_stats ~= false
    if self.track_running_stats then
        self:register_buffer("running_mean", core.zeros(num_features))
        self:register_buffer("running_var", core.ones(num_features))
        self:register_buffer("num_batches_tracked", core.zeros({}, { dtype = "int64" }))
    end
end

-- PyTorch's reset_running_stats() and reset_parameters()
I.define_norm_resets(BatchNorm)

-- x with the channels on dim 2 (the subclass checked its shape). PyTorch 1.13's forward, reading
-- the attributes as it does: with track_running_stats set false later the buffers stay but
-- training leaves them, eval still uses them; running_mean and running_var set nil: batch
-- statistics in eval; momentum nil (or false, the constructor's spelling of None): the
-- cumulative average (update_bn sets it)
function BatchNorm:normalize(x)
    local momentum, training = self.momentum or nil, self.training
    local nbt = self.num_batches_tracked
    local factor = momentum or 0
    if training and self.track_running_stats and nbt ~= nil then
        factor = momentum or 1 / (nbt:item() + 1)
    end
    local use_stats = not training or self.track_running_stats
    local rm = use_stats and self.running_mean or nil
    local rv = use_stats and self.running_var or nil
    local bn_training = training or (self.running_mean == nil and self.running_var == nil)
    if not bn_training and (rm == nil or rv == nil) then
        raise("tide: " .. self.__name .. ": running_mean and running_var must both be set or " ..
            "both nil in eval")
    end
    local y = I.batch_norm(x, rm, rv, self.weight, self.bias, bn_training, factor, self.eps,
        self.__name)
    if training and self.track_running_stats and nbt ~= nil then
        autograd.no_grad(function()
            nbt:add_(1)
        end)
    end
    return y
end

function BatchNorm:check(x, dims_ok)
    I.check_tensor(x, self.__name)
    if not dims_ok[x:dim()] then
        raise("tide: " .. self.__name .. ": expected " .. self.expects .. " input, got " ..
            I.shape_str(x.shape))
    end
    I.check_device(x, self.running_mean or self.weight or x, self.__name)
    for _, name in ipairs({ "weight", "bias", "running_mean", "running_var" }) do
        I.check_norm_dtype(x, self[name], self.__name, name, true)
    end
    if x:size(2) ~= self.num_features then
        raise(string.format("tide: %s: expected input with %d channels (dim 2), got %d",
            self.__name, self.num_features, x:size(2)))
    end
end

function BatchNorm:extra_repr() -- PyTorch's
    return string.format("%d, eps=%s, momentum=%s, affine=%s, track_running_stats=%s",
        self.num_features, tostring(self.eps), tostring(self.momentum), tostring(self.affine),
        tostring(self.track_running_stats))
end

S.define(BatchNorm, { names = { "num_features", "eps", "momentum", "affine",
    "track_running_stats", "device", "dtype" }, required = 1, factory = true })

return BatchNorm
