-- tide._warn: PyTorch's warnings (a deprecated name, a gradcheck on float32), printed to stderr
-- once per Lua state as Python's default filter shows a warning once, with the user's line
-- (the nearest frame outside tide's Lua files) in front: "a.lua:12: tide: warning: ...".
-- io.stderr is looked up at each warning, so a test may stand a table with write() in for it.
local W = {}

-- the keys warned about already; W.reset(key) (tests) forgets one
local seen = {}

local LIB = debug and debug.getinfo and
    debug.getinfo(1, "S").source:match("^@(.*[/\\])_warn%.lua$")

-- "chunk:line: " of the first frame outside tide's files, "" when none (or no debug library)
local function where()
    if not LIB then
        return ""
    end
    local level = 3
    while true do
        local info = debug.getinfo(level, "Sl")
        if not info then
            return ""
        end
        if info.what ~= "C" and info.source:sub(2, #LIB + 1) ~= LIB and info.currentline > 0 then
            return info.short_src .. ":" .. info.currentline .. ": "
        end
        level = level + 1
    end
end

-- prints "tide: warning: msg" unless key was warned about already; true when it printed
function W.once(key, msg)
    if seen[key] then
        return false
    end
    seen[key] = true
    io.stderr:write(where() .. "tide: warning: " .. msg .. "\n")
    return true
end

function W.reset(key)
    seen[key] = nil
end

return W
