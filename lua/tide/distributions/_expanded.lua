-- tide.distributions._expanded: a distribution with its batch shape broadcast to a larger one
-- (PyTorch's Distribution.expand, made once for every family): draws are independent across
-- the new batch (the base drawn with the new leading sizes, and the sizes that broadcast a 1
-- moved into place), log_prob, cdf, icdf, entropy and the moments the base's broadcast to the
-- new shape. TransformedDistribution uses it where its transforms broadcast the base's shape.
local autograd = require("tide.autograd")
local raise = autograd.raise
local Distribution = require("tide.distributions.Distribution")
local U = require("tide.distributions.transforms._util")

local Expanded = Distribution:extend("_Expanded")

function Expanded:init(base, batch_shape, who)
    local old = base.batch_shape
    local k = #batch_shape - #old
    local ok = k >= 0
    for i = 1, #old do
        local n = batch_shape[k + i]
        ok = ok and (old[i] == n or old[i] == 1)
    end
    if not ok then
        raise(("tide: %s: the base's batch shape %s does not broadcast to %s"):format(who,
            U.shape_str(old), U.shape_str(batch_shape)))
    end
    self.base_dist, self._lead = base, k
    self.batch_shape, self.event_shape = batch_shape, base.event_shape
    self.has_rsample = base.has_rsample
    self.has_enumerate_support = base.has_enumerate_support or false
end

-- PyTorch's: the base's values along the first dim, over the new batch shape
function Expanded:enumerate_support(expand)
    local v = self.base_dist:enumerate_support(false) -- {n, 1 per base batch dim, event}
    local vs, flat = v:size(), { v:size(1) }
    for i = 2 + #self.base_dist.batch_shape, #vs do
        flat[#flat + 1] = vs[i]
    end
    return Distribution._enumerate(self, v:reshape(flat), #self.event_shape, expand)
end

-- draws of shape sample_shape .. batch_shape .. event_shape from draw(base, shape)
local function draw(self, shape, method)
    local s = self:extended_shape(shape, self.base_dist.__name .. "." .. method)
    local ns = #s - #self.batch_shape - #self.event_shape
    local old, new, k = self.base_dist.batch_shape, self.batch_shape, self._lead
    local base_shape, reps = {}, {}
    for i = 1, ns + k do
        base_shape[i] = s[i]
    end
    for i = 1, #old do
        if old[i] == 1 and new[k + i] ~= 1 then
            reps[#reps + 1] = i
            base_shape[#base_shape + 1] = new[k + i]
        end
    end
    local x = self.base_dist[method](self.base_dist, base_shape)
    if #reps > 0 then
        -- x: S, lead, reps, old, event; each rep's axis swapped with its size-1 axis
        local perm = {}
        for i = 1, x:dim() do
            perm[i] = i
        end
        local at = ns + k
        for j, i in ipairs(reps) do
            local a, b = at + j, at + #reps + i
            perm[a], perm[b] = perm[b], perm[a]
        end
        x = x:permute(perm):reshape(s)
    end
    return x
end

function Expanded:rsample(shape)
    return draw(self, shape, "rsample")
end

function Expanded:sample(shape)
    return autograd.no_grad(function()
        return draw(self, shape, "sample")
    end)
end

-- r broadcast to tail (the batch shape, and the event shape when with_event)
local function widen(self, r, with_event)
    local tail = with_event and U.concat(self.batch_shape, self.event_shape) or self.batch_shape
    return r:expand(U.broadcast_shapes(self.base_dist.__name, r:size(), tail))
end

function Expanded:log_prob(value)
    return widen(self, self.base_dist:log_prob(value), false)
end

function Expanded:cdf(value)
    return widen(self, self.base_dist:cdf(value), true)
end

function Expanded:icdf(value)
    return widen(self, self.base_dist:icdf(value), true)
end

function Expanded:entropy()
    return widen(self, self.base_dist:entropy(), false)
end

function Expanded:mean()
    return widen(self, self.base_dist:mean(), true)
end

function Expanded:variance()
    return widen(self, self.base_dist:variance(), true)
end

function Expanded:stddev()
    return widen(self, self.base_dist:stddev(), true)
end

function Expanded:support()
    return self.base_dist:support()
end

function Expanded:__tostring()
    return tostring(self.base_dist)
end

return Expanded
