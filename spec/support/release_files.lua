-- release_files.lua — busted helper (.busted's `helper`): once a spec file has run, let go of
-- what its blocks ran.
--
-- busted keeps every block of every file (describe, it, before_each, ...) until the run ends,
-- closures and environments included, so each file's tide modules, models and tensors stayed
-- reachable: the Lua heap grew by about a megabyte a file (130 MB by the last one) and every
-- garbage collection walked all of it, a quarter of the suite's time. After its file ends a
-- block is only read for its name, attributes, times and trace, which stay.
local busted = require("busted")

local function release(element)
    for _, child in ipairs(busted.children(element)) do
        release(child)
        child.run = nil
        child.env = nil
    end
end

-- the file's own block stays: busted reads it again when the next file starts
busted.subscribe({ "file", "end" }, function(file)
    release(file)
    file.env = nil
    return nil, true
end)
