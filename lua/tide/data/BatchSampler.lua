--- tide.data.BatchSampler(sampler, batch_size, drop_last) (or by name: BatchSampler(sampler,
-- {batch_size =, drop_last =})): PyTorch's: the sampler's indices of
-- an epoch in batches of batch_size (the last smaller, or dropped with drop_last), each a Lua
-- list; a DataLoader takes it as `batch_sampler` (then without batch_size, shuffle, sampler
-- or drop_last). sampler: a sampler (len() and indices() or iter()) or a list of indices.
-- `s:len()` is the number of batches, `s:batches()` an epoch's list of batches, `s:iter()`.
local compat = require("tide._compat")
local Sampler = require("tide.data.Sampler")
local raise = require("tide.autograd").raise
local args = require("tide.op_args")
local merge = require("tide.pytorch_args").merge

local BatchSampler = { __name = "BatchSampler", super = Sampler }
BatchSampler.__index = BatchSampler

local WHO = "BatchSampler"

function BatchSampler.new(...)
    -- BatchSampler({sampler = s, batch_size = 4, drop_last = false}): every parameter by name
    return BatchSampler._new(require("tide.data._by_name").first(WHO,
        { "sampler", "batch_size", "drop_last" }, ...))
end

function BatchSampler._new(sampler, ...)
    local opts = args.options(WHO, merge(WHO, { "batch_size", "drop_last" }, ...),
        { "batch_size", "drop_last" })
    -- an integral float (64.0) is that integer
    local batch_size = type(opts.batch_size) == "number" and
        compat.tointeger(opts.batch_size) or opts.batch_size
    local drop_last = opts.drop_last
    if type(sampler) ~= "table" or (type(sampler.len) == "function" and not
            (type(sampler.indices) == "function" or type(sampler.iter) == "function")) then
        raise("tide: BatchSampler: sampler must be a sampler (len() and indices() or iter()) " ..
            "or a list of indices, got " .. type(sampler))
    end
    if not compat.is_integer(batch_size) or batch_size < 1 then
        raise(string.format("tide: BatchSampler: batch_size should be a positive integer, " ..
            "got %s", tostring(batch_size)))
    end
    if type(drop_last) ~= "boolean" then
        raise("tide: BatchSampler: drop_last should be a boolean, got " .. type(drop_last))
    end
    return setmetatable({ sampler = sampler, batch_size = batch_size, drop_last = drop_last },
        BatchSampler)
end

Sampler._callable(BatchSampler, Sampler) -- (a tide.data.Sampler)

local function count(s)
    if type(s.len) == "function" then
        return s:len()
    end
    return #s
end

function BatchSampler:len()
    local n = count(self.sampler)
    if self.drop_last then
        return math.floor(n / self.batch_size)
    end
    return math.ceil(n / self.batch_size)
end
BatchSampler.__len = BatchSampler.len

-- the sampler's indices of one epoch
local function epoch(s)
    if type(s.len) ~= "function" then
        return s
    elseif type(s.indices) == "function" then
        return s:indices()
    end
    local list = {}
    for i in s:iter() do
        list[#list + 1] = i
    end
    return list
end

function BatchSampler:batches()
    local list, out, bs = epoch(self.sampler), {}, self.batch_size
    for start = 1, #list, bs do
        local last = math.min(start + bs - 1, #list)
        if last - start + 1 == bs or not self.drop_last then
            local b = {}
            for k = start, last do
                b[#b + 1] = list[k]
            end
            out[#out + 1] = b
        end
    end
    return out
end

-- lazy over a sampler with iter() (PyTorch's): one batch read at a time
function BatchSampler:iter()
    local s, bs = self.sampler, self.batch_size
    if type(s.len) ~= "function" or type(s.iter) ~= "function" then
        local batches, k = self:batches(), 0
        return function()
            k = k + 1
            return batches[k]
        end
    end
    local it, ended = s:iter(), false
    return function()
        if ended then
            return nil
        end
        local b = {}
        while #b < bs do
            local i = it()
            if i == nil then
                ended = true
                break
            end
            b[#b + 1] = i
        end
        if #b == 0 or (#b < bs and self.drop_last) then
            ended = true
            return nil
        end
        return b
    end
end

function BatchSampler:__tostring()
    return string.format("BatchSampler(batch_size=%d, drop_last=%s, %d batches)",
        self.batch_size, tostring(self.drop_last), self:len())
end

return BatchSampler
