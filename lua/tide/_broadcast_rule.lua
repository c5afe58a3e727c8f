-- tide._broadcast_rule: NumPy's broadcasting rule over shapes, raising tide's error named after
-- the op the user called. shape(op, shapes) gives the broadcast of a list of shapes (lists of
-- sizes), broadcast_shapes' error; check(op, ...) raises the core's error unless the tensors
-- among its arguments (numbers and nil are skipped) broadcast together, so that an op written
-- over others (fmax over ge and where, xlogy over where) names itself rather than the op
-- inside that would meet the shapes.
local core = require("tide.core")
local raise = require("tide.autograd.raise")
local args = require("tide.op_args")
local shape_str = args.shape_str

local M = {}

-- from the last dim: sizes equal, or one of them 1
function M.shape(op, shapes)
    local n = 0
    for _, s in ipairs(shapes) do
        n = math.max(n, #s)
    end
    local out = {}
    for k = 1, n do -- k counts dims from the end
        local size = 1
        for _, s in ipairs(shapes) do
            local v = s[#s - k + 1]
            if v ~= nil and v ~= 1 then
                if size ~= 1 and v ~= size then
                    local shown = {}
                    for i, t in ipairs(shapes) do
                        shown[i] = shape_str(t)
                    end
                    raise(("tide: %s: shapes %s cannot be broadcast: dim -%d has sizes %d and " ..
                        "%d; sizes must match or be 1"):format(op, table.concat(shown, ", "), k,
                        size, v))
                end
                size = v
            end
        end
        out[n - k + 1] = size
    end
    return out
end

-- the broadcast of two shapes, with the core's message (src/ops.c, tide_broadcast_shape)
local function pair(op, a, b)
    local n = math.max(#a, #b)
    local out = {}
    for i = 1, n do
        local sa, sb = a[i - (n - #a)] or 1, b[i - (n - #b)] or 1
        if sa ~= sb and sa ~= 1 and sb ~= 1 then
            raise(("tide: %s: shapes [%s] and [%s] cannot be broadcast: size %d vs %d at dim %d")
                :format(op, table.concat(a, ", "), table.concat(b, ", "), sa, sb, i))
        end
        out[i] = sa == 1 and sb or sa
    end
    return out
end

function M.check(op, ...)
    local shape
    for i = 1, select("#", ...) do
        local v = select(i, ...)
        if core.is_tensor(v) then
            local s = v:size()
            if not shape then
                shape = s
            elseif not args.same_shape(s, shape) then -- the same shapes need no walk
                shape = pair(op, shape, s)
            end
        end
    end
end

return M
