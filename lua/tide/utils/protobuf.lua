-- tide.utils.protobuf — the few protobuf wire-format pieces TensorBoard's event files need.
--
-- A small encoder of our own instead of protobuf-c or a Lua protobuf rock: tide writes a handful
-- of message types (Event, Summary, HistogramProto, Image, TensorProto, the hparams plugin's and
-- SummaryMetadata), always in field-number order and with proto3's rule that fields at their
-- default value are left out, which is all it takes to match the bytes Python's protobuf
-- writes. A dependency (and its .proto compiler step) would outweigh these 100 lines. The byte
-- packing (varints, little-endian doubles and floats) is in C (lua/record_io.c): Lua 5.1 and
-- LuaJIT's portable subset have no bit operations.
local core = require("tide.core")
local raise = require("tide.autograd.raise")

local M = {}

local varint, double, float = core._pb_varint, core._pb_double, core._pb_float
local concat = table.concat

-- the key of field `num` with wire type `wire` (0 varint, 1 fixed64, 2 length-delimited, 5 fixed32)
local function key(num, wire)
    return varint(num * 8 + wire)
end
M.key = key

--- a varint field (int32, int64, enum, bool); "" when v is 0 / false / nil (proto3 default)
function M.varint(num, v)
    if v == nil or v == 0 or v == false then
        return ""
    end
    if v == true then
        v = 1
    end
    return key(num, 0) .. varint(v)
end

-- the writer of a fixed-width field of wire type `wire` holding pack(v); "" when 0 or nil
local function fixed(wire, pack)
    return function(num, v)
        if v == nil or v == 0 then
            return ""
        end
        return key(num, wire) .. pack(v)
    end
end

--- a double field; "" when 0 or nil
M.double = fixed(1, double)

--- a float field; "" when 0 or nil
M.float = fixed(5, float)

--- a string, bytes or embedded-message field; "" when nil or, unless `always`, empty.
--- Embedded messages that are set but empty are written (always = true), as protobuf does for a
--- sub-message that has been assigned.
function M.bytes(num, s, always)
    if s == nil or (s == "" and not always) then
        return ""
    end
    return key(num, 2) .. varint(#s) .. s
end

--- a packed repeated double field; "" when the list is empty
function M.packed_doubles(num, list)
    if #list == 0 then
        return ""
    end
    local s = core._pb_doubles(list)
    return key(num, 2) .. varint(#s) .. s
end

--- a packed repeated float field; "" when the list is empty
function M.packed_floats(num, list)
    if #list == 0 then
        return ""
    end
    local parts = {}
    for i = 1, #list do
        parts[i] = float(list[i])
    end
    local s = concat(parts)
    return key(num, 2) .. varint(#s) .. s
end

--- a message from its encoded fields, in order (nil entries skipped)
function M.message(...)
    local parts, n = {}, select("#", ...)
    for i = 1, n do
        local p = select(i, ...)
        if p then
            parts[#parts + 1] = p
        end
    end
    return concat(parts)
end

--- Decodes one message level: a list of {num =, wire =, value =} in the order written. Varints
--- give numbers; fixed64 / fixed32 / length-delimited fields give their raw bytes (decode a
--- sub-message with another call, a double with M.read_double).
function M.decode(s)
    local out, pos, n = {}, 1, #s
    while pos <= n do
        local k
        k, pos = core._pb_read_varint(s, pos)
        local num, wire = math.floor(k / 8), k % 8
        local v
        if wire == 0 then
            v, pos = core._pb_read_varint(s, pos)
        elseif wire == 1 or wire == 5 then
            local w = wire == 1 and 8 or 4
            if pos + w - 1 > n then
                raise("tide: protobuf: field " .. num .. " cut short")
            end
            v, pos = s:sub(pos, pos + w - 1), pos + w
        elseif wire == 2 then
            local len
            len, pos = core._pb_read_varint(s, pos)
            if pos + len - 1 > n then
                raise("tide: protobuf: field " .. num .. " cut short")
            end
            v, pos = s:sub(pos, pos + len - 1), pos + len
        else
            raise("tide: protobuf: unsupported wire type " .. wire .. " for field " .. num)
        end
        out[#out + 1] = { num = num, wire = wire, value = v }
    end
    return out
end

--- the double / float held in 8 / 4 raw bytes (a decoded fixed64 / fixed32 field)
function M.read_double(b)
    return core._pb_read_double(b, 1)
end

function M.read_float(b)
    return core._pb_read_float(b, 1)
end

return M
