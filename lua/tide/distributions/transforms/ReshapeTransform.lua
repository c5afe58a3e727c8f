-- tide.distributions.transforms.ReshapeTransform(in_shape, out_shape[, {cache_size =}]): the
-- rightmost dims of shape in_shape reshaped to out_shape (PyTorch's; the same number of
-- elements): bijective, log |det J| zero over the batch dims.
local core = require("tide.core")
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise
local Transform = require("tide.distributions.transforms.Transform")
local U = require("tide.distributions.transforms._util")

local Reshape = Transform:extend("ReshapeTransform")
Reshape.bijective = true

local function numel(s)
    local n = 1
    for _, v in ipairs(s) do
        n = n * v
    end
    return n
end

local function sizes(who, s, what)
    if type(s) ~= "table" or autograd.is_tensor(s) then
        raise(("tide: %s: %s must be a list of sizes such as {2, 3}, got %s"):format(who, what,
            autograd.is_tensor(s) and "a tensor" or type(s)))
    end
    args.check_list(who, s, what)
    local out = {}
    for i, v in ipairs(s) do
        out[i] = args.integer(who, v, what .. " size")
        if out[i] < 0 then
            raise(("tide: %s: %s has the negative size %d"):format(who, what, out[i]))
        end
    end
    return out
end

function Reshape:init(in_shape, out_shape, opts, ...)
    local who = "ReshapeTransform"
    args.no_extra(who, 4, ...)
    self.in_shape = sizes(who, in_shape, "in_shape")
    self.out_shape = sizes(who, out_shape, "out_shape")
    if numel(self.in_shape) ~= numel(self.out_shape) then
        raise(("tide: %s: in_shape %s and out_shape %s hold different numbers of elements " ..
            "(%d and %d)"):format(who, U.shape_str(self.in_shape), U.shape_str(self.out_shape),
            numel(self.in_shape), numel(self.out_shape)))
    end
    self:_options(opts)
end

local G = Reshape._getters
function G.domain(self)
    local C = require("tide.distributions.constraints")
    return C.independent(C.real, #self.in_shape)
end
function G.codomain(self)
    local C = require("tide.distributions.constraints")
    return C.independent(C.real, #self.out_shape)
end

function Reshape:with_cache(n)
    n = n == nil and 1 or n
    if self._cache_size == n then
        return self
    end
    return Reshape(self.in_shape, self.out_shape, { cache_size = n })
end

-- x's shape without its last k dims, checked to end in `want`
local function batch_of(x, want, who)
    local shape = x:size()
    if #shape < #want then
        raise(("tide: %s: expected at least %d dims, got %d"):format(who, #want, #shape))
    end
    local cut = #shape - #want
    for i = 1, #want do
        if shape[cut + i] ~= want[i] then
            raise(("tide: %s: expected the last dims %s, got the shape %s"):format(who,
                U.shape_str(want), U.shape_str(shape)))
        end
    end
    return U.drop_last(shape, #want)
end

function Reshape:_call(x)
    return x:reshape(U.concat(batch_of(x, self.in_shape, "ReshapeTransform"), self.out_shape))
end

function Reshape:_inverse(y)
    return y:reshape(U.concat(batch_of(y, self.out_shape, "ReshapeTransform.inv"),
        self.in_shape))
end

function Reshape:log_abs_det_jacobian(x)
    local batch = batch_of(x, self.in_shape, "ReshapeTransform.log_abs_det_jacobian")
    return core.zeros(batch, { dtype = x.dtype, device = x.device })
end

local function swap(self, shape, from, to, who)
    shape = self:_shape(shape, who)
    if #shape < #from then
        raise(("tide: %s: expected at least %d dims, got %d"):format(who, #from, #shape))
    end
    local cut = #shape - #from
    for i = 1, #from do
        if shape[cut + i] ~= from[i] then
            raise(("tide: %s: expected the last sizes %s, got %s"):format(who,
                U.shape_str(from), U.shape_str(shape)))
        end
    end
    return U.concat(U.drop_last(shape, #from), to)
end

function Reshape:forward_shape(shape)
    return swap(self, shape, self.in_shape, self.out_shape, "ReshapeTransform.forward_shape")
end

function Reshape:inverse_shape(shape)
    return swap(self, shape, self.out_shape, self.in_shape, "ReshapeTransform.inverse_shape")
end

return Reshape
