-- the shared body of InstanceNorm1d and InstanceNorm2d (F.instance_norm): {eps = 1e-5,
-- momentum = 0.1, affine = false, track_running_stats = false}; with affine a weight (ones) and
-- a bias (zeros) per channel, with track_running_stats the buffers running_mean, running_var
-- and num_batches_tracked (which PyTorch 1.13 never advances), used in eval. An unbatched input
-- (one dim fewer) runs as a batch of one.
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local S = require("tide.nn._signature")

local InstanceNorm = Module:extend("_InstanceNorm")

function InstanceNorm:init(num_features, eps, momentum, affine, track_running_stats)
    local who = self.__name
    if type(eps) == "table" then
        local o = eps
        core._check_options(o, who, { "eps", "momentum", "affine", "track_running_stats" })
        eps, momentum, affine, track_running_stats = o.eps, o.momentum, o.affine,
            o.track_running_stats
    end
    I.check_int(num_features, "num_features", who)
    for _, b in ipairs({ { affine, "affine" }, { track_running_stats, "track_running_stats" } }) do
        if b[1] ~= nil and type(b[1]) ~= "boolean" then
            raise("tide: " .. who .. ": expected " .. b[2] .. " to be a boolean, got " ..
                type(b[1]))
        end
    end
    self.num_features = num_features
    self.eps = I.check_number(eps, 1e-5, "eps", who)
    self.momentum = I.check_number(momentum, 0.1, "momentum", who)
    self.affine, self.track_running_stats = affine or false, track_running_stats or false
    if self.affine then
        I.affine_params(self, { num_features }, true)
    end
    if self.track_running_stats then
        self:register_buffer("running_mean", core.zeros(num_features))
        self:register_buffer("running_var", core.ones(num_features))
        self:register_buffer("num_batches_tracked", core.zeros({}, { dtype = "int64" }))
    end
end

-- PyTorch's reset_running_stats() and reset_parameters()
I.define_norm_resets(InstanceNorm)

function InstanceNorm:forward(x)
    local who = self.__name
    I.check_tensor(x, who)
    local nd = x:dim()
    if nd ~= self.dims and nd ~= self.dims - 1 then
        raise("tide: " .. who .. ": expected " .. self.expects .. " input, got " ..
            I.shape_str(x.shape))
    end
    local c = x:size(nd - self.dims + 2)
    if c ~= self.num_features and (self.affine or self.track_running_stats) then
        raise(string.format("tide: %s: expected input with %d channels (dim %d), got %d", who,
            self.num_features, nd - self.dims + 2, c))
    end
    local like = self.weight or self.running_mean
    if like then
        I.check_device(x, like, who)
    end
    for _, name in ipairs({ "weight", "bias", "running_mean", "running_var" }) do
        I.check_norm_dtype(x, self[name], who, name, true)
    end
    local batched = nd == self.dims and x or x:unsqueeze(1)
    local y = F.instance_norm(batched, self.running_mean, self.running_var, {
        weight = self.weight, bias = self.bias, momentum = self.momentum, eps = self.eps,
        use_input_stats = self.training or not self.track_running_stats })
    return nd == self.dims and y or y:squeeze(1)
end

function InstanceNorm:extra_repr() -- PyTorch's (_NormBase's)
    return string.format("%d, eps=%s, momentum=%s, affine=%s, track_running_stats=%s",
        self.num_features, tostring(self.eps), tostring(self.momentum), tostring(self.affine),
        tostring(self.track_running_stats))
end

S.define(InstanceNorm, { names = { "num_features", "eps", "momentum", "affine",
    "track_running_stats" }, required = 1 })

return InstanceNorm
