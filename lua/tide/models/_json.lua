-- tide.models._json: the JSON that model directories hold (config.json), read and written
-- without a dependency. decode(s, where) -> a Lua value: objects are tables, arrays are
-- tables marked by json.is_array, null is json.null (a key holding null is kept, so a config
-- written back keeps it); numbers without a fraction or exponent are integers where Lua has
-- them. encode(v) writes what Python's json.dumps(v, indent=2, sort_keys=True) writes, so a
-- saved config.json reads like one transformers saved.
local compat = require("tide._compat")

local json = {}

json.null = setmetatable({}, { __tostring = function() return "null" end })
local ARRAY = setmetatable({}, { __mode = "k" })

function json.array(t)
    ARRAY[t] = true
    return t
end

function json.is_array(t)
    return ARRAY[t] == true
end

-- ---- decoding ----

local ESC = { ['"'] = '"', ["\\"] = "\\", ["/"] = "/", b = "\b", f = "\f", n = "\n", r = "\r",
    t = "\t" }

local function utf8_char(c)
    if c < 0x80 then
        return string.char(c)
    elseif c < 0x800 then
        return string.char(0xC0 + math.floor(c / 64), 0x80 + c % 64)
    elseif c < 0x10000 then
        return string.char(0xE0 + math.floor(c / 4096), 0x80 + math.floor(c / 64) % 64,
            0x80 + c % 64)
    end
    return string.char(0xF0 + math.floor(c / 262144), 0x80 + math.floor(c / 4096) % 64,
        0x80 + math.floor(c / 64) % 64, 0x80 + c % 64)
end

function json.decode(s, where)
    local pos = 1
    local function fail(what)
        local line = select(2, s:sub(1, pos):gsub("\n", "")) + 1
        error(string.format("tide: %s: invalid JSON at line %d: %s", where or "json", line, what),
            0)
    end
    local function skip()
        pos = s:find("[^ \t\r\n]", pos) or #s + 1
    end
    local value
    local function str()
        local out, i = {}, pos + 1
        while true do
            local j = s:find('["\\]', i)
            if not j then
                fail("unterminated string")
            end
            out[#out + 1] = s:sub(i, j - 1)
            if s:sub(j, j) == '"' then
                pos = j + 1
                return table.concat(out)
            end
            local e = s:sub(j + 1, j + 1)
            if e == "u" then
                local c = tonumber(s:sub(j + 2, j + 5), 16)
                if not c then
                    fail("bad \\u escape")
                end
                i = j + 6
                if c >= 0xD800 and c < 0xDC00 and s:sub(i, i + 1) == "\\u" then
                    local lo = tonumber(s:sub(i + 2, i + 5), 16)
                    if lo and lo >= 0xDC00 and lo < 0xE000 then
                        c = 0x10000 + (c - 0xD800) * 1024 + (lo - 0xDC00)
                        i = i + 6
                    end
                end
                out[#out + 1] = utf8_char(c)
            elseif ESC[e] then
                out[#out + 1] = ESC[e]
                i = j + 2
            else
                fail("bad escape \\" .. e)
            end
        end
    end
    -- at an opening bracket: steps past it, and past close when that follows (an empty
    -- object or array: true)
    local function empty(close)
        pos = pos + 1
        skip()
        if s:sub(pos, pos) == close then
            pos = pos + 1
            return true
        end
        return false
    end
    -- after an element: steps past the ',' before the next one (true) or past close (false)
    local function more(close)
        skip()
        local c = s:sub(pos, pos)
        pos = pos + 1
        if c == close then
            return false
        elseif c ~= "," then
            fail("expected ',' or '" .. close .. "'")
        end
        return true
    end
    function value()
        skip()
        local c = s:sub(pos, pos)
        if c == "{" then
            local t = {}
            if not empty("}") then
                repeat
                    skip()
                    if s:sub(pos, pos) ~= '"' then
                        fail("expected a key")
                    end
                    local k = str()
                    skip()
                    if s:sub(pos, pos) ~= ":" then
                        fail("expected ':'")
                    end
                    pos = pos + 1
                    t[k] = value()
                until not more("}")
            end
            return t
        elseif c == "[" then
            local t = json.array({})
            if not empty("]") then
                repeat
                    t[#t + 1] = value()
                until not more("]")
            end
            return t
        elseif c == '"' then
            return str()
        elseif s:sub(pos, pos + 3) == "true" then
            pos = pos + 4
            return true
        elseif s:sub(pos, pos + 4) == "false" then
            pos = pos + 5
            return false
        elseif s:sub(pos, pos + 3) == "null" then
            pos = pos + 4
            return json.null
        end
        local num = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
        if not num or num == "" then
            fail(pos > #s and "unexpected end" or ("unexpected '" .. c .. "'"))
        end
        pos = pos + #num
        local v = tonumber(num)
        if not v then
            fail("bad number " .. num)
        end
        if not num:find("[.eE]") then
            v = compat.tointeger(v) or v
        end
        return v
    end
    local v = value()
    skip()
    if pos <= #s then
        fail("trailing characters")
    end
    return v
end

-- ---- encoding ----

local function quote(v)
    return '"' .. v:gsub('[%c"\\]', function(c)
        for k, e in pairs(ESC) do
            if e == c and k ~= "/" then
                return "\\" .. k
            end
        end
        return string.format("\\u%04x", c:byte())
    end) .. '"'
end
json.quote = quote -- a string as a JSON string (tide.profiler's traces)

-- the shortest form that reads back to v (Python's repr of a float); integers without a point
local function number(v)
    if v ~= v or v == math.huge or v == -math.huge then
        error("tide: json: cannot write " .. tostring(v), 0)
    end
    if compat.is_integer(v) then
        return string.format("%d", v)
    end
    for p = 1, 17 do
        local s = string.format("%." .. p .. "g", v)
        if tonumber(s) == v then
            if not s:find("[.e]") then
                s = s .. ".0"
            end
            return (s:gsub("e([-+])0*(%d%d)", "e%1%2"))
        end
    end
end

local function encode(v, indent)
    local tv = type(v)
    if v == json.null or v == nil then
        return "null"
    elseif tv == "boolean" then
        return tostring(v)
    elseif tv == "number" then
        return number(v)
    elseif tv == "string" then
        return quote(v)
    elseif tv ~= "table" then
        error("tide: json: cannot write a " .. tv, 0)
    end
    local inner = indent .. "  "
    local parts = {}
    if json.is_array(v) or (#v > 0 and next(v, #v) == nil) then
        if #v == 0 then
            return "[]"
        end
        for i = 1, #v do
            parts[i] = inner .. encode(v[i], inner)
        end
        return "[\n" .. table.concat(parts, ",\n") .. "\n" .. indent .. "]"
    end
    local keys = {}
    for k in pairs(v) do
        keys[#keys + 1] = tostring(k)
    end
    if #keys == 0 then
        return "{}"
    end
    table.sort(keys)
    for i, k in ipairs(keys) do
        local x = v[k]
        if x == nil then
            x = v[tonumber(k)]
        end
        parts[i] = inner .. quote(k) .. ": " .. encode(x, inner)
    end
    return "{\n" .. table.concat(parts, ",\n") .. "\n" .. indent .. "}"
end

function json.encode(v)
    return encode(v, "")
end

return json
