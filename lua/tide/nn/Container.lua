-- nn.Container(modules): PyTorch's deprecated container (nn.Module does all it did): the
-- modules registered as its children, modules a table name -> module (in sorted name order:
-- Lua tables have no order, where PyTorch keeps its keyword arguments') or a list of {name,
-- module} pairs (kept in that order); no forward of its own
local Module = require("tide.nn.Module")
local dict_entries = require("tide.nn._dict_entries")

local Container = Module:extend("Container")

local KIND = { name = "Container", class = Container, item = "module", an_item = "a Module",
    is_item = Module.is_module }

function Container:init(modules)
    if modules ~= nil then
        for _, e in ipairs(dict_entries.entries(KIND, modules, "init")) do
            self:add_module(e[1], e[2])
        end
    end
end

return Container
