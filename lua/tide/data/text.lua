--- tide.data.text(path): the bytes of a file as a 1-d uint8 tensor on the CPU (a character-level
-- corpus: `local data = tide.data.text("input.txt"); local x = data:narrow(1, i, 64)`).
--
-- Needs Lua's io library (a host that sandboxes it away gets an error saying so).
local compat = require("tide._compat")
local core = require("tide.core")
local raise = require("tide.autograd").raise

local CHUNK = 65536 -- bytes converted per tensor piece: bounds the Lua tables' memory

return function(path)
    if type(path) ~= "string" then
        raise("tide: data.text: expected a file path (a string), got " .. type(path))
    end
    if type(io) ~= "table" or type(io.open) ~= "function" then
        raise("tide: data.text: the io library is not available in this Lua host; load the " ..
            "bytes yourself and pass them to tide.tensor(list, {dtype = \"uint8\"})")
    end
    local f, err = io.open(path, "rb")
    if not f then
        raise("tide: data.text: cannot open " .. path .. " (" .. tostring(err) ..
            "); check the path")
    end
    local pieces = {}
    while true do
        local s, rerr = f:read(CHUNK)
        if not s then
            if rerr then
                f:close()
                raise("tide: data.text: cannot read " .. path .. " (" .. tostring(rerr) .. ")")
            end
            break
        end
        local bytes = {}
        for i = 1, #s, 4096 do -- string.byte returns its values on the stack: in slices
            local j = math.min(i + 4095, #s)
            compat.move({ s:byte(i, j) }, 1, j - i + 1, i, bytes)
        end
        pieces[#pieces + 1] = core.tensor(bytes, { dtype = "uint8", device = "cpu" })
    end
    f:close()
    if #pieces == 0 then
        return core.zeros({ 0 }, { dtype = "uint8", device = "cpu" })
    elseif #pieces == 1 then
        return pieces[1]
    end
    return core.cat(pieces, 1)
end
