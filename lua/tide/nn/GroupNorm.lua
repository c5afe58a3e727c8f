-- nn.GroupNorm(num_groups, num_channels[, {eps = 1e-5, affine = true}]): normalizes input
-- {N, C, ...} over each group of C / num_groups channels; weight ones, bias zeros per channel
local core = require("tide.core")
local raise = require("tide.autograd").raise
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local S = require("tide.nn._signature")

local GroupNorm = Module:extend("GroupNorm")

function GroupNorm:init(num_groups, num_channels, eps, affine)
    if type(eps) == "table" then
        core._check_options(eps, "GroupNorm", { "eps", "affine" })
        eps, affine = eps.eps, eps.affine
    end
    I.check_int(num_groups, "num_groups", "GroupNorm")
    I.check_int(num_channels, "num_channels", "GroupNorm")
    if num_channels % num_groups ~= 0 then
        raise(string.format("tide: GroupNorm: num_channels %d is not divisible by num_groups %d",
            num_channels, num_groups))
    end
    self.num_groups, self.num_channels = num_groups, num_channels
    self.eps = I.check_number(eps, 1e-5, "eps", "GroupNorm")
    self.affine = affine ~= false -- PyTorch's attribute (read by ported code)
    if self.affine then
        I.affine_params(self, { num_channels }, true)
    end
end

function GroupNorm:forward(x)
    I.check_tensor(x, "GroupNorm")
    if x:dim() < 2 or x:size(2) ~= self.num_channels then
        raise(string.format("tide: GroupNorm: expected input {N, %d, ...}, got %s",
            self.num_channels, I.shape_str(x.shape)))
    end
    local weight = self.weight -- read once: a parametrized weight is computed per read
    if weight then
        I.check_device(x, weight, "GroupNorm")
    end
    I.check_norm_dtype(x, weight, "GroupNorm", "weight", true)
    I.check_norm_dtype(x, self.bias, "GroupNorm", "bias", true)
    return F.group_norm(x, self.num_groups, { weight = weight, bias = self.bias,
        eps = self.eps })
end

function GroupNorm:extra_repr() -- PyTorch's
    return string.format("%d, %d, eps=%s, affine=%s", self.num_groups, self.num_channels,
        tostring(self.eps), tostring(self.affine))
end

S.define(GroupNorm, { names = { "num_groups", "num_channels", "eps", "affine" }, required = 2 })

-- m:reset_parameters(): PyTorch's, weight ones and bias zeros again (with affine parameters)
function GroupNorm:reset_parameters()
    I.reset_affine(self)
end

return GroupNorm
