-- the shared body of BatchNorm1d and BatchNorm2d: batch statistics in training (biased
-- variance to normalize, unbiased in the running estimate, as PyTorch), running statistics in
-- eval; running_mean/running_var/num_batches_tracked are buffers
local core = require "tide.core"
local autograd = require "tide.autograd"
local raise = autograd.raise
local Module = require "tide.nn.Module"
local F = require "tide.nn.functional"

local BatchNorm = Module:extend("_BatchNorm")

function BatchNorm:init(num_features, eps, momentum, affine)
    if type(eps) == "table" then
        local o = eps
        core._check_options(o, self.__name, { "eps", "momentum", "affine" })
        eps, momentum, affine = o.eps, o.momentum, o.affine
    end
    F.check_int(num_features, "num_features", self.__name)
    self.num_features, self.eps, self.momentum = num_features, eps or 1e-5, momentum or 0.1
    if affine ~= false then
        self:register_parameter("weight", F.const_param({ num_features }, 1))
        self:register_parameter("bias", F.const_param({ num_features }, 0))
    end
    self:register_buffer("running_mean", core.zeros(num_features))
    self:register_buffer("running_var", core.ones(num_features))
    self:register_buffer("num_batches_tracked", core.zeros({}, { dtype = "int64" }))
end

-- x viewed so that dim 2 holds the channels; `dims` are the dims to reduce (all but 2)
function BatchNorm:normalize(x, dims, bshape)
    local c = self.num_features
    local y
    if self.training then
        local m, n = x, 1
        for _, d in ipairs(dims) do
            m = m:mean(d, true)
            n = n * x:size(d)
        end
        local xc = x:sub(m)
        local v = xc:mul(xc)
        for _, d in ipairs(dims) do
            v = v:mean(d, true)
        end
        if n < 2 then
            raise("tide: " .. self.__name .. ": expected more than 1 value per " ..
                "channel in training, got input " .. F.shape_str(x.shape))
        end
        autograd.no_grad(function()
            local mom = self.momentum
            local rm, rv = self.running_mean, self.running_var
            rm:mul_(1 - mom):add_(m:reshape(c):mul(mom))
            rv:mul_(1 - mom):add_(v:reshape(c):mul(mom * n / (n - 1)))
            self.num_batches_tracked:add_(1)
        end)
        y = xc:mul(v:add(self.eps):rsqrt())
    else
        local rm = self.running_mean:view(bshape)
        local rv = self.running_var:view(bshape)
        y = x:sub(rm):mul(rv:add(self.eps):rsqrt())
    end
    if self.weight then
        y = y:mul(self.weight:view(bshape)):add(self.bias:view(bshape))
    end
    return y
end

function BatchNorm:check(x, dims_ok)
    F.check_tensor(x, self.__name, 3)
    if not dims_ok[x:dim()] then
        raise("tide: " .. self.__name .. ": expected " .. self.expects .. " input, got " ..
            F.shape_str(x.shape))
    end
    F.check_device(x, self.running_mean, self.__name)
    if x:size(2) ~= self.num_features then
        raise(string.format("tide: %s: expected input with %d channels (dim 2), got %d",
            self.__name, self.num_features, x:size(2)))
    end
end

function BatchNorm:extra_repr()
    return tostring(self.num_features)
end

return BatchNorm
