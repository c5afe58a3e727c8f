-- tide._files: the file reads and writes tide's Lua library shares (through the io library,
-- which the host may leave unopened: callers that can say what to do then check for it first)
local raise = require("tide.autograd.raise")

local M = {}

-- true when path can be opened for reading
function M.exists(path)
    local f = io.open(path, "rb")
    if f then
        f:close()
        return true
    end
    return false
end

-- path's bytes; nil and io.open's message when it cannot be opened
function M.read(path)
    local f, err = io.open(path, "rb")
    if not f then
        return nil, err
    end
    local s = f:read("*a")
    f:close()
    return s
end

-- path's bytes, or a raise naming who: "tide: <who>: cannot read <path>: <reason>"
function M.read_or_raise(path, who)
    local s, err = M.read(path)
    if not s then
        raise("tide: " .. who .. ": cannot read " .. path .. ": " .. tostring(err))
    end
    return s
end

-- writes s to path (replacing the file), or raises naming who: "tide: <who>: cannot write
-- <path>: <reason>"
function M.write(path, s, who)
    local f, err = io.open(path, "wb")
    if not f then
        raise("tide: " .. who .. ": cannot write " .. path .. ": " .. tostring(err))
    end
    f:write(s)
    f:close()
end

return M
