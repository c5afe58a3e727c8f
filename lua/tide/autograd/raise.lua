-- tide.autograd.raise: raises msg at the user's line: the first Lua frame outside tide's own
-- Lua files (so the position is right whatever chain of library calls and tail calls led here)
local core = require("tide.core")

local getinfo = core._frame_info -- debug.getinfo(level, "S"), also where debug is not opened
local LIB = getinfo(1).source:match("^@(.*[/\\])autograd[/\\]raise%.lua$")

return function(msg)
    if LIB then
        local level = 2
        while true do
            local info = getinfo(level)
            if not info then
                break
            end
            -- "tail": 5.1's mark of a frame a tail call replaced (no line): the next one up
            if info.what ~= "C" and info.what ~= "tail" and info.source:sub(2, #LIB + 1) ~= LIB then
                error(msg, level)
            end
            level = level + 1
        end
    end
    error(msg, 0)
end
