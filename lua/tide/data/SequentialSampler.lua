--- tide.data.SequentialSampler(data_source): PyTorch's: the indices 1..n of a dataset (its
-- len()) in order, each epoch. `s:len()` (`#s` on 5.3+), `s:indices()`, `s:iter()`.
local Sampler = require("tide.data.Sampler")
local raise = require("tide.autograd").raise
local args = require("tide.op_args")

local SequentialSampler = { __name = "SequentialSampler", super = Sampler }
SequentialSampler.__index = SequentialSampler

-- the size of a data source: a dataset's len(), a list's length, or a count
local function size_of(src, who)
    if type(src) == "table" and type(src.len) == "function" then
        return src:len()
    elseif type(src) == "table" then
        return #src
    elseif type(src) == "number" and src >= 0 and src == math.floor(src) then
        return src
    end
    raise(string.format("tide: %s: expected a dataset (with len()), a list or a count, got %s",
        who, type(src)))
end
SequentialSampler.size_of = size_of

function SequentialSampler.new(data_source, ...)
    if require("tide.pytorch_args").is_options(data_source) and next(data_source) ~= nil then
        -- PyTorch's SequentialSampler(data_source=ds): one table by name (read as a list of 0)
        data_source = args.options("SequentialSampler", data_source,
            { "data_source" }, "{data_source = ds}").data_source
    end
    -- PyTorch's SequentialSampler(data_source) takes nothing else: refuse it, never drop it
    local n = select("#", ...)
    while n > 0 and select(n, ...) == nil do
        n = n - 1
    end
    if n > 0 then
        raise(string.format("tide: SequentialSampler: expected only the data source, got %d " ..
            "more argument%s; remove %s", n, n == 1 and "" or "s", n == 1 and "it" or "them"))
    end
    -- data_source: PyTorch's attribute, the dataset (or list, or count) given
    return setmetatable({ n = size_of(data_source, "SequentialSampler"),
        data_source = data_source }, SequentialSampler)
end

Sampler._callable(SequentialSampler, Sampler) -- (a tide.data.Sampler)

function SequentialSampler:len()
    return self.n
end
SequentialSampler.__len = SequentialSampler.len

-- the list 1..n (a Lua table: checked against the memory it may take)
function SequentialSampler:indices()
    args.check_budget("SequentialSampler", self.n, 16, ("a list of %d indices"):format(self.n),
        "iterate with iter(), which makes no list")
    local r = {}
    for i = 1, self.n do
        r[i] = i
    end
    return r
end

-- 1..n one at a time, without a list
function SequentialSampler:iter()
    local i, n = 0, self.n
    return function()
        if i < n then
            i = i + 1
            return i
        end
    end
end

function SequentialSampler:__tostring()
    return string.format("SequentialSampler(%d)", self.n)
end

return SequentialSampler
