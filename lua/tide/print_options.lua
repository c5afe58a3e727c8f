-- tide.print_options: PyTorch's torch.set_printoptions for tostring(t) and print(t), whose
-- layout is lua/format.c's (PyTorch's, without the "tensor(" around it and with tide's own last
-- line). The options live in the C module, one set a Lua state; this file checks them and
-- keeps what was set, since each call changes only the options it names (but sci_mode, which
-- goes back to automatic unless given, as in PyTorch).
local core = require("tide.core")
local compat = require("tide._compat")
local raise = require("tide.autograd.raise")
local args = require("tide.op_args")

local M = { functions = {}, names = { "set_printoptions" } }

local KEYS = { "precision", "threshold", "edgeitems", "linewidth", "profile", "sci_mode" }

-- PyTorch's profiles: each sets the four number options (sci_mode apart)
local PROFILES = {
    default = { precision = 4, threshold = 1000, edgeitems = 3, linewidth = 80 },
    short = { precision = 2, threshold = 1000, edgeitems = 2, linewidth = 80 },
    full = { precision = 4, threshold = math.huge, edgeitems = 3, linewidth = 80 },
}

local current = { precision = 4, threshold = 1000, edgeitems = 3, linewidth = 80 }
local sci_mode -- nil (automatic), true or false

-- the options set now, and sci_mode (for layouts written in Lua: complex tensors')
function M.current()
    return current, sci_mode
end

local function bad(what, v, want)
    raise(("tide: set_printoptions: %s must be %s, got %s"):format(what, want,
        type(v) == "string" and ('"' .. v .. '"') or tostring(v)))
end

local function integer_in(o, key, lo, hi, want)
    local v = o[key]
    if v ~= nil and (not compat.is_integer(v) or v < lo or (hi and v > hi)) then
        bad(key, v, want)
    end
end

-- set_printoptions([{precision = 4, threshold = 1000, edgeitems = 3, linewidth = 80, profile =,
-- sci_mode =}]): every value is checked before any is set, so a bad call changes nothing
function M.functions.set_printoptions(opts, ...)
    args.no_extra("set_printoptions", 1, ...)
    if opts ~= nil and (type(opts) ~= "table" or core.is_tensor(opts)) then
        raise("tide: set_printoptions: expected an options table such as {precision = 2}, got " ..
            (core.is_tensor(opts) and "a tensor" or type(opts)))
    end
    local o = opts or {}
    core._check_options(o, "set_printoptions", KEYS)
    integer_in(o, "precision", 0, 100, "an integer in 0..100")
    local th = o.threshold
    if th ~= nil and (type(th) ~= "number" or not (th >= 0)) then
        bad("threshold", th, "a number >= 0 (math.huge: never summarize)")
    end
    -- bounded so that lua/format.c's arithmetic on them (2 * edgeitems, ...) cannot overflow
    integer_in(o, "edgeitems", 0, 2 ^ 30, "an integer in 0..2^30")
    integer_in(o, "linewidth", 1, 2 ^ 30, "an integer in 1..2^30")
    if o.sci_mode ~= nil and type(o.sci_mode) ~= "boolean" then
        bad("sci_mode", o.sci_mode, "true, false or nil (chosen from the values)")
    end
    local profile = o.profile ~= nil and PROFILES[o.profile]
    if o.profile ~= nil and not profile then
        bad("profile", o.profile, '"default", "short" or "full"')
    end
    local set = core._set_print_options
    if not set then
        raise("tide: set_printoptions: this tide.core was built before print options; " ..
            "rebuild it (make)")
    end
    local new = {}
    for k, v in pairs(profile or current) do
        new[k] = v
    end
    for k in pairs(PROFILES.default) do
        if o[k] ~= nil then
            new[k] = o[k]
        end
    end
    set(new.precision, new.threshold, new.edgeitems, new.linewidth, o.sci_mode)
    current, sci_mode = new, o.sci_mode
end

-- PyTorch's torch._tensor_str.PRINT_OPTS: the options in force, read as fields (precision,
-- threshold, edgeitems, linewidth, sci_mode); a field set goes through set_printoptions (checked
-- as there, the other options kept: PRINT_OPTS.precision = 2 prints with 2 digits)
M.PRINT_OPTS = setmetatable({}, {
    __index = function(_, k)
        if k == "sci_mode" then
            return sci_mode
        end
        return current[k]
    end,
    __newindex = function(_, k, v)
        if k ~= "sci_mode" and PROFILES.default[k] == nil then
            raise(("tide: PRINT_OPTS: no option %s (precision, threshold, edgeitems, " ..
                "linewidth, sci_mode)"):format(tostring(k)))
        end
        local o = { sci_mode = sci_mode }
        o[k] = v
        M.functions.set_printoptions(o)
    end,
})

return M
