-- tide.data._by_name: PyTorch's keyword call of a data class whose first parameter is named too
-- (RandomSampler(data_source=ds, num_samples=4), BatchSampler(sampler=s, batch_size=4),
-- ConcatDataset(datasets=[a, b]), DistributedSampler(dataset=ds, num_replicas=2)): in tide one
-- table by name as the only argument. first(who, names, a, ...) gives back the call's arguments
-- as the positional form reads them: the first parameter's value, then the table's other keys
-- as an options table (nil when none). A misspelt name raises, as does the table without the
-- first parameter. Any other call comes back as it was.
local args = require("tide.op_args")
local is_options = require("tide.pytorch_args").is_options

local M = {}

function M.first(who, names, a, ...)
    if select("#", ...) > 0 or not is_options(a) or next(a) == nil then
        return a, ...
    end
    args.options(who, a, names)
    local first = names[1]
    if a[first] == nil then
        require("tide.autograd").raise(string.format("tide: %s: got options by name without " ..
            "%s; pass it first (%s(%s, {...})) or by name ({%s = ..., ...})", who, first, who,
            first, first))
    end
    local rest
    for k, v in pairs(a) do
        if k ~= first then
            rest = rest or {}
            rest[k] = v
        end
    end
    return a[first], rest
end

return M
