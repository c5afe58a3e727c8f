--- tide.data.SubsetRandomSampler(indices[, generator][, {generator =}]): PyTorch's: the given 1-based
-- dataset indices (a list or a 1-d integer tensor) in a new random order each epoch, e.g. a
-- validation split of one dataset. `s:len()`, `s:indices()`, `s:iter()`; generator as
-- RandomSampler's.
local compat = require("tide._compat")
local Sampler = require("tide.data.Sampler")
local core = require("tide.core")
local args = require("tide.op_args")
local autograd = require("tide.autograd")
local raise = autograd.raise
local stream = require("tide.data.generator")
local merge = require("tide.pytorch_args").merge

local SubsetRandomSampler = { __name = "SubsetRandomSampler", super = Sampler }
SubsetRandomSampler.__index = SubsetRandomSampler

local WHO = "SubsetRandomSampler"

function SubsetRandomSampler.new(indices, ...)
    local opts = merge(WHO, { "generator" }, ...)
    if require("tide.pytorch_args").is_options(indices) and next(indices) ~= nil then
        -- PyTorch's SubsetRandomSampler(indices=ix, generator=g): one table by name (it was
        -- read as an empty list of indices)
        if select("#", ...) > 0 then
            raise("tide: " .. WHO .. ": the indices came by name in a table and more " ..
                "arguments followed it; put them all in that table")
        end
        opts = args.options(WHO, indices, { "indices", "generator" }, "{indices =, generator =}")
        indices = opts.indices
        opts = { generator = opts.generator }
    end
    local list
    if autograd.is_tensor(indices) then
        if indices:dim() ~= 1 or (indices.dtype ~= "int64" and indices.dtype ~= "int32") then
            raise(string.format("tide: %s: expected a list of indices or a 1-d integer tensor, " ..
                "got a %d-d %s tensor", WHO, indices:dim(), indices.dtype))
        end
        list = stream.list(indices:to("cpu"))
    elseif type(indices) == "table" then
        list = {}
        for i, v in ipairs(indices) do
            if not compat.is_integer(v) then
                raise(string.format("tide: %s: index %d is %s, expected an integer", WHO, i,
                    tostring(v)))
            end
            list[i] = v
        end
    else
        raise(string.format("tide: %s: expected a list of indices or a 1-d integer tensor, " ..
            "got %s", WHO, type(indices)))
    end
    opts = args.options(WHO, opts, { "generator" }, "{generator = 1}")
    local self = setmetatable({ list = list }, SubsetRandomSampler)
    self.generator = stream.own(opts.generator, WHO)
    return self
end

Sampler._callable(SubsetRandomSampler, Sampler) -- (a tide.data.Sampler)

function SubsetRandomSampler:len()
    return #self.list
end
SubsetRandomSampler.__len = SubsetRandomSampler.len

function SubsetRandomSampler:indices()
    local n = #self.list
    if n == 0 then
        return {}
    end
    local order = stream.list(stream.draw(self, function()
        return core.randperm(n)
    end))
    local out = {}
    for k = 1, n do
        out[k] = self.list[order[k]] -- (randperm is 1-based)
    end
    return out
end

SubsetRandomSampler.iter = stream.iter

function SubsetRandomSampler:__tostring()
    return string.format("SubsetRandomSampler(%d indices)", #self.list)
end

return SubsetRandomSampler
