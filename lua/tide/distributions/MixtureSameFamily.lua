-- tide.distributions.MixtureSameFamily(mixture_distribution, component_distribution[,
-- {validate_args =}]): a mixture of k components of one family, PyTorch's: the mixture a
-- Categorical over k, the components one distribution whose last batch dim is k (the mixture's
-- batch broadcasts against the rest). batch_shape is the components' less that dim, event_shape
-- theirs. log_prob is logsumexp over k of the components' log_prob plus the mixture's log
-- weights, cdf the weighted sum of theirs (scalar events), mean and variance by the law of
-- total variance; sample(shape) picks a component per draw (no gradient: no rsample, as
-- PyTorch's). The fields mixture_distribution and component_distribution hold the two.
local autograd = require("tide.autograd")
local args = require("tide.op_args")
local raise = autograd.raise
local is_tensor = autograd.is_tensor
local compat = require("tide._compat")
local Distribution = require("tide.distributions.Distribution")
local Categorical = require("tide.distributions.Categorical")
local X = require("tide.distributions._extras")

local MixtureSameFamily = Distribution:extend("MixtureSameFamily")
MixtureSameFamily.arg_constraints = require("tide.distributions._arg_constraints").MixtureSameFamily
MixtureSameFamily.arg_names = { "mixture_distribution", "component_distribution", options = true }
MixtureSameFamily.has_rsample = false

local WHO = "MixtureSameFamily"

local function kind(d)
    if is_tensor(d) then
        return "a tensor"
    elseif type(d) == "table" and type(getmetatable(d)) == "table" and
        rawget(getmetatable(d), "__name") then
        return "a " .. rawget(getmetatable(d), "__name")
    end
    return type(d)
end

function MixtureSameFamily:init(mixture_distribution, component_distribution, opts, ...)
    local validate = X.trailing(WHO, 2, opts, ...)
    local mix, comp = mixture_distribution, component_distribution
    if not X.is_instance(mix, Categorical) then
        raise(("tide: %s: mixture_distribution must be a Categorical, got %s"):format(WHO,
            kind(mix)))
    end
    if not X.is_instance(comp, Distribution) then
        raise(("tide: %s: component_distribution must be a distribution, got %s"):format(WHO,
            kind(comp)))
    end
    local cb = comp.batch_shape
    if #cb < 1 then
        raise(("tide: %s: component_distribution needs a batch dim of the k components (its " ..
            "last), got batch shape {}"):format(WHO))
    end
    local km, kc = mix.num_events, cb[#cb]
    if km ~= kc then
        raise(("tide: %s: the mixture has %d components and component_distribution's last " ..
            "batch dim is %d; make them equal"):format(WHO, km, kc))
    end
    local cdbs = { compat.unpack(cb, 1, #cb - 1) }
    local mdbs = mix.batch_shape
    for i = 1, math.min(#mdbs, #cdbs) do
        local a, b = mdbs[#mdbs - i + 1], cdbs[#cdbs - i + 1]
        if a ~= 1 and b ~= 1 and a ~= b then
            raise(("tide: %s: mixture_distribution's batch shape %s does not broadcast with " ..
                "component_distribution's %s (less its last dim)"):format(WHO,
                args.shape_str(mdbs), args.shape_str(cdbs)))
        end
    end
    self.mixture_distribution, self.component_distribution = mix, comp
    self._num_component, self._event_ndims = km, #comp.event_shape
    self._validate = validate
    self.batch_shape, self.event_shape = cdbs, { compat.unpack(comp.event_shape) }
end

function MixtureSameFamily:__tostring()
    return ("%s(%s, %s)"):format(WHO, tostring(self.mixture_distribution),
        tostring(self.component_distribution))
end

function MixtureSameFamily:expand(batch_shape)
    local s = X.expand_shape(self, batch_shape)
    local comp = self.component_distribution
    if type(comp.expand) ~= "function" then
        raise(("tide: %s.expand: its component_distribution (%s) has no expand"):format(WHO,
            comp.__name))
    end
    local new = X.copy(self)
    new.component_distribution = comp:expand(X.concat(s, { self._num_component }))
    new.mixture_distribution = self.mixture_distribution:expand(s)
    new.batch_shape = s
    return new
end

function MixtureSameFamily:support()
    return self.component_distribution:support()
end

-- x with a dim of size 1 inserted before the event dims (against the k components)
function MixtureSameFamily:_pad(x)
    return x:unsqueeze(-1 - self._event_ndims)
end

-- the mixture's probabilities [..., k, 1 (per event dim)]
function MixtureSameFamily:_weights()
    local w = self.mixture_distribution.probs
    for _ = 1, self._event_ndims do
        w = w:unsqueeze(-1)
    end
    return w
end

function MixtureSameFamily:mean()
    local m = self.component_distribution:mean()
    return (self:_weights() * m):sum(-1 - self._event_ndims)
end

function MixtureSameFamily:variance()
    local comp, w, dim = self.component_distribution, self:_weights(), -1 - self._event_ndims
    local mean_cond_var = (w * comp:variance()):sum(dim)
    local var_cond_mean = (w * (comp:mean() - self:_pad(self:mean())):pow(2)):sum(dim)
    return mean_cond_var + var_cond_mean
end

function MixtureSameFamily:stddev()
    return self:variance():sqrt()
end

-- the component's call on x padded, its errors named as this call
function MixtureSameFamily:_component(method, x)
    local comp = self.component_distribution
    local ok, r = pcall(comp[method], comp, self:_pad(x))
    if not ok then
        local name = comp.__name
        local msg = tostring(r):match("tide: " .. name .. "%." .. method .. ": (.*)$")
        if msg then
            raise(("tide: %s.%s: %s (from the %s components)"):format(WHO, method, msg, name))
        end
        error(r, 0)
    end
    return r
end

function MixtureSameFamily:log_prob(value)
    local who = WHO .. ".log_prob"
    value = self:value_tensor(value, who, self.mixture_distribution.logits)
    local n = self._event_ndims
    local es = self.event_shape
    local ok = value:dim() >= n
    for i = 1, n do
        ok = ok and value:size(value:dim() - n + i) == es[i]
    end
    if not ok then
        raise(("tide: %s: the values must end with the event shape %s, got %s"):format(who,
            args.shape_str(es), args.shape_str(value:size())))
    end
    local lp = self:_component("log_prob", value)
    return (lp + self.mixture_distribution.logits:log_softmax(-1)):logsumexp(-1)
end

function MixtureSameFamily:cdf(value)
    local who = WHO .. ".cdf"
    if self._event_ndims ~= 0 then
        raise(("tide: %s: cdf needs components with scalar events, got event shape %s")
            :format(who, args.shape_str(self.event_shape)))
    end
    value = self:value_tensor(value, who, self.mixture_distribution.probs)
    return (self:_component("cdf", value) * self.mixture_distribution.probs):sum(-1)
end

function MixtureSameFamily:sample(shape)
    self:extended_shape(shape, WHO .. ".sample") -- (its errors named as this call)
    return autograd.no_grad(function()
        local shape_ = shape or {}
        local nb, es = #self.batch_shape, self.event_shape
        local gather_dim = #shape_ + nb + 1 -- (1-based: the components' dim)
        local mix = self.mixture_distribution:sample(shape) -- [n, mixture's batch], 1-based
        local comp = self.component_distribution:sample(shape) -- [n, B, k, E]
        -- the classes as [n, 1.., mixture's batch, 1, 1 per event dim], expanded to [n, B, 1, E]
        local idx_shape = { compat.unpack(shape_) }
        for _ = 1, nb - #self.mixture_distribution.batch_shape do
            idx_shape[#idx_shape + 1] = 1
        end
        idx_shape = X.concat(idx_shape, self.mixture_distribution.batch_shape)
        idx_shape[#idx_shape + 1] = 1
        for _ = 1, #es do
            idx_shape[#idx_shape + 1] = 1
        end
        local target = X.concat(X.concat(shape_, self.batch_shape), { 1 })
        target = X.concat(target, es)
        local idx = mix:reshape(idx_shape):expand(target)
        return comp:gather(gather_dim, idx):squeeze(gather_dim)
    end)
end

return MixtureSameFamily
