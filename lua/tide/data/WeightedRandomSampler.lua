--- tide.data.WeightedRandomSampler(weights, num_samples[, replacement[, generator]][,
-- {replacement = true, generator =}]) (PyTorch's order by position, or by name):
-- PyTorch 1.13's sampler: each epoch draws num_samples 1-based dataset indices, index i with
-- probability weights[i] / sum(weights) (tide.multinomial), with or without replacement.
--
--     local w = {}                      -- e.g. the inverse frequency of each sample's class
--     local s = tide.data.WeightedRandomSampler(w, #w)
--     for x, y in tide.data.DataLoader(ds, {batch_size = 64, sampler = s}):iter() do ... end
--
-- weights: a list of numbers or a 1-d tensor, >= 0 and finite, not all 0. The draws come from
-- tide's generator (tide.manual_seed fixes them), or from the sampler's own stream when
-- `generator` is given: an integer seed, a state from tide.get_rng_state(), or a
-- tide.Generator (drawn from and advanced); the sampler then leaves tide's generator as it
-- was. `s:len()` (`#s` on 5.3+) is num_samples; `s:indices()` draws an epoch's list, `s:iter()`
-- iterates one.
local compat = require("tide._compat")
local Sampler = require("tide.data.Sampler")
local core = require("tide.core")
local args = require("tide.op_args")
local autograd = require("tide.autograd")
local raise = autograd.raise
local stream = require("tide.data.generator")
local merge = require("tide.pytorch_args").merge

local WeightedRandomSampler = { __name = "WeightedRandomSampler", super = Sampler }
WeightedRandomSampler.__index = WeightedRandomSampler

local WHO = "WeightedRandomSampler"

function WeightedRandomSampler.new(...)
    -- WeightedRandomSampler({weights = w, num_samples = n, ...}): every parameter by name
    return WeightedRandomSampler._new(require("tide.data._by_name").first(WHO,
        { "weights", "num_samples", "replacement", "generator" }, ...))
end

function WeightedRandomSampler._new(weights, ...)
    local opts = merge(WHO, { "num_samples", "replacement", "generator" }, ...) or {}
    local num_samples = opts.num_samples
    local w
    if autograd.is_tensor(weights) then
        if weights:dim() ~= 1 or weights.dtype == "bool" then
            raise(string.format("tide: %s: expected weights as a list of numbers or a 1-d " ..
                "tensor, got a %d-d %s tensor", WHO, weights:dim(), weights.dtype))
        end
        w = weights:detach():to("cpu"):to("float64")
    elseif type(weights) == "table" then
        for i = 1, #weights do
            if type(weights[i]) ~= "number" then
                raise(string.format("tide: %s: weight %d is a %s, expected a number", WHO, i,
                    type(weights[i])))
            end
        end
        if #weights == 0 then
            raise("tide: " .. WHO .. ": weights is empty; give one weight per sample")
        end
        w = core.tensor(weights, { dtype = "float64", device = "cpu" })
    else
        raise(string.format("tide: %s: expected weights as a list of numbers or a 1-d tensor, " ..
            "got %s", WHO, type(weights)))
    end
    local list = w:totable()
    local nonzero = 0
    for i, v in ipairs(list) do
        if v ~= v or v < 0 or v == math.huge then
            raise(string.format("tide: %s: weight %d is %g; weights must be finite and >= 0",
                WHO, i, v))
        end
        if v > 0 then
            nonzero = nonzero + 1
        end
    end
    if #list == 0 or nonzero == 0 then
        raise("tide: " .. WHO .. ": every weight is 0; give at least one positive weight")
    end
    -- an integral float (a ported len(ds) * 1.0) is that integer
    num_samples = type(num_samples) == "number" and compat.tointeger(num_samples) or num_samples
    if not compat.is_integer(num_samples) or num_samples < 1 then
        raise(string.format("tide: %s: num_samples = %s; expected a positive integer", WHO,
            type(num_samples) == "number" and tostring(num_samples) or type(num_samples)))
    end
    opts = args.options(WHO, opts, { "num_samples", "replacement", "generator" },
        "{replacement = false}")
    local replacement = opts.replacement
    if replacement == nil then
        replacement = true
    elseif type(replacement) ~= "boolean" then
        raise("tide: " .. WHO .. ": replacement must be a boolean, got " .. type(replacement))
    end
    if not replacement and num_samples > nonzero then
        raise(string.format("tide: %s: cannot draw %d samples without replacement from %d " ..
            "weights that are not 0; lower num_samples or pass {replacement = true}", WHO,
            num_samples, nonzero))
    end
    local self = setmetatable({ weights = w, num_samples = num_samples,
        replacement = replacement }, WeightedRandomSampler)
    self.generator = stream.own(opts.generator, WHO)
    return self
end

Sampler._callable(WeightedRandomSampler, Sampler) -- (a tide.data.Sampler)

function WeightedRandomSampler:len()
    return self.num_samples
end
WeightedRandomSampler.__len = WeightedRandomSampler.len

-- this epoch's draw: a 1-based int64 tensor (from the sampler's stream when it has one)
function WeightedRandomSampler:draw()
    return stream.draw(self, function()
        return core.multinomial(self.weights, self.num_samples, { replacement = self.replacement })
    end)
end

--- the dataset indices of one epoch, a Lua list (a new draw at each call)
function WeightedRandomSampler:indices()
    return stream.list(self:draw())
end

--- an iterator over one epoch's indices
WeightedRandomSampler.iter = stream.iter

function WeightedRandomSampler:__tostring()
    return string.format("WeightedRandomSampler(%d weights, num_samples=%d, replacement=%s)",
        self.weights:size(1), self.num_samples, tostring(self.replacement))
end

return WeightedRandomSampler
