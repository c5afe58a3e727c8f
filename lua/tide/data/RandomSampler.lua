--- tide.data.RandomSampler(data_source[, replacement[, num_samples[, generator]]][, {replacement
-- = false, num_samples =, generator =}]) (PyTorch's order by position, or by name):
-- PyTorch 1.13's: each epoch a random order of the indices 1..n (a permutation; num_samples
-- beyond n repeats whole permutations, then part of one), or num_samples indices drawn
-- uniformly with replacement. Draws come from tide's generator (tide.manual_seed fixes them),
-- or the sampler's own stream with `generator` (an integer seed or a tide.get_rng_state()
-- state), which leaves tide's generator as it was; a tide.Generator ("cpu") is drawn from and
-- advanced, shared with whatever else draws from it. `s:len()`, `s:indices()`, `s:iter()`.
-- With replacement iter() draws lazily, 32 indices at a time as PyTorch's (the same values as
-- indices() draws at once), so num_samples may be huge (minGPT's 1e10): a DataLoader reads
-- it batch by batch. Without a generator an epoch with replacement draws one seed from tide's
-- generator and then its indices from a stream of its own, as PyTorch's: what else draws from
-- tide's generator during the epoch (dropout) leaves the order as it was.
local compat = require("tide._compat")
local Sampler = require("tide.data.Sampler")
local core = require("tide.core")
local args = require("tide.op_args")
local raise = require("tide.autograd").raise
local stream = require("tide.data.generator")
local size_of = require("tide.data.SequentialSampler").size_of
local merge = require("tide.pytorch_args").merge

local RandomSampler = { __name = "RandomSampler", super = Sampler }
RandomSampler.__index = RandomSampler

local WHO = "RandomSampler"

function RandomSampler.new(...)
    -- RandomSampler({data_source = ds, ...}): every parameter by name
    return RandomSampler._new(require("tide.data._by_name").first(WHO,
        { "data_source", "replacement", "num_samples", "generator" }, ...))
end

function RandomSampler._new(data_source, ...)
    local n = size_of(data_source, WHO)
    local opts = merge(WHO, { "replacement", "num_samples", "generator" }, ...)
    opts = args.options(WHO, opts, { "replacement", "num_samples", "generator" },
        "{replacement = true}")
    local replacement = opts.replacement == true
    if opts.replacement ~= nil and type(opts.replacement) ~= "boolean" then
        raise("tide: RandomSampler: replacement must be a boolean, got " ..
            type(opts.replacement))
    end
    local num = opts.num_samples == nil and n or opts.num_samples
    -- an integral float (minGPT's 1e10) is that integer, on every Lua
    num = type(num) == "number" and compat.tointeger(num) or num
    if not compat.is_integer(num) or num < 1 then
        raise(string.format("tide: RandomSampler: num_samples should be a positive integer, " ..
            "got %s", tostring(num)))
    end
    if n == 0 then
        raise("tide: RandomSampler: the data source is empty; there is nothing to sample")
    end
    local self = setmetatable({ n = n, num_samples = num, replacement = replacement,
        data_source = data_source }, RandomSampler) -- (data_source: PyTorch's attribute)
    self._num_samples = opts.num_samples -- PyTorch's: as given, nil (None) for len(data_source)
    self.generator = stream.own(opts.generator, WHO)
    return self
end

Sampler._callable(RandomSampler, Sampler) -- (a tide.data.Sampler)

function RandomSampler:len()
    return self.num_samples
end
RandomSampler.__len = RandomSampler.len

-- the stream an epoch with replacement draws from: the sampler's generator, or one of the
-- epoch's own, seeded by one draw from tide's generator (PyTorch's)
local function epoch_stream(self)
    if self.generator then
        return self
    end
    local seed = compat.tointeger(require("tide").randint(0, 2 ^ 52, { 1 })[1]:item())
    return { generator = stream.own(seed, WHO) }
end

function RandomSampler:indices()
    local n, num = self.n, self.num_samples
    args.check_budget(WHO, num, 24, ("a list of %d indices"):format(num),
        "ask for fewer num_samples")
    if self.replacement then
        return stream.list(stream.draw(epoch_stream(self), function()
            return require("tide").randint(1, n + 1, { num })
        end, WHO))
    end
    local t = stream.draw(self, function()
        local parts = {}
        for _ = 1, math.floor(num / n) do
            parts[#parts + 1] = core.randperm(n) -- 1-based
        end
        if num % n > 0 then
            parts[#parts + 1] = core.randperm(n):narrow(1, 1, num % n)
        end
        return #parts == 1 and parts[1] or core.cat(parts, 1)
    end)
    return stream.list(t)
end

local CHUNK = 32 -- PyTorch's draws with replacement: 32 at a time, then the rest

function RandomSampler:iter()
    if not self.replacement then
        return stream.iter(self)
    end
    local n, num = self.n, self.num_samples
    local drawn, chunk, k = 0, {}, 0
    local from = epoch_stream(self)
    return function()
        if drawn >= num then
            return nil
        end
        if k >= #chunk then
            local size = math.min(CHUNK, num - drawn)
            chunk = stream.list(stream.draw(from, function()
                return require("tide").randint(1, n + 1, { size })
            end, WHO))
            k = 0
        end
        k, drawn = k + 1, drawn + 1
        return chunk[k]
    end
end

function RandomSampler:__tostring()
    return string.format("RandomSampler(%d, num_samples=%d, replacement=%s)", self.n,
        self.num_samples, tostring(self.replacement))
end

return RandomSampler
