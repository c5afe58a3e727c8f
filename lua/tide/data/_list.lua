-- tide.data._list: a plain Lua list as a map-style dataset. PyTorch's DataLoader, random_split
-- and Subset take any object with __getitem__ and __len__, a Python list among them
-- (DataLoader(list_of_pairs, batch_size=8, collate_fn=collate_batch), the text classification
-- tutorial's to_map_style_dataset result); tide's take a Lua list the same way: sample i is
-- list[i], a plain table with [1] (a Python tuple such as {label, text}) read as its fields, so
-- a collate_fn's batch holds {label, text} per sample as PyTorch's holds (label, text); a
-- sample that is not a table (a number) is ds[i] itself, PyTorch's list[i].
local compat = require("tide._compat")
local core = require("tide.core")
local Dataset = require("tide.data.Dataset")

local ListDataset = Dataset:extend("ListDataset")

function ListDataset:init(list)
    self.list = list -- the caller's list itself (read at each get: edits show, as in Python)
end

function ListDataset:len()
    return #self.list
end

function ListDataset:get(i)
    local s = self.list[i]
    if type(s) == "table" and getmetatable(s) == nil and rawget(s, 1) ~= nil then
        return compat.unpack(s, 1, #s)
    end
    return s
end

-- a sample that is not a table (a number, a string) is ds[i] itself, as PyTorch's list[i]
-- (Dataset's sample_of); a table's fields are packed as before
function ListDataset._value_sample(ds, i)
    return type(ds.list[i]) ~= "table"
end

local M = { ListDataset = ListDataset }

-- a plain Lua list: a table without a metatable (not a dataset, module or tensor) whose keys are
-- exactly 1..#t ({} included, an empty list); an options table or a dict is none
function M.is_list(t)
    if type(t) ~= "table" or getmetatable(t) ~= nil or core.is_tensor(t) then
        return false
    end
    local n = #t
    for k in pairs(t) do
        if type(k) ~= "number" or k < 1 or k > n or k % 1 ~= 0 then
            return false
        end
    end
    return true
end

-- ds, or a ListDataset over ds when ds is a plain list
function M.dataset(ds)
    if M.is_list(ds) then
        return ListDataset(ds)
    end
    return ds
end

return M
