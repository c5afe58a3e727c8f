-- tide.get_rng_state([device]) / tide.set_rng_state(state[, device]): save and restore the
-- random generator, as torch.get_rng_state / torch.cuda.get_rng_state do.
--
--     local s = tide.get_rng_state()        -- "cpu" by default; or "cuda:0", "cpu:1", ...
--     local a = tide.randn({3})
--     tide.set_rng_state(s)
--     assert(tide.randn({3}):equal(a))      -- the same draws again (rand, randn, randint,
--                                           -- randperm, multinomial, dropout, ...)
--
-- The state is a 1-d uint8 CPU tensor (so tide.save writes it): the generator's seed and
-- offset (8 bytes each, little-endian) followed by the name of the device it was taken for.
-- It restores on that device only; another device raises, naming both. tide has one
-- counter-based generator for every device (a seed gives the same numbers everywhere), so
-- restoring a state rewinds the draws on every device, not on that one only.
local core = require("tide.core")
local raise = require("tide.autograd.raise")
local is_tensor = require("tide.autograd").is_tensor
local compat = require("tide._compat")

local M = { functions = {} }
local F = M.functions

-- the canonical name of a device argument ("cuda" -> "cuda:0"), "cpu" when absent
local function device_name(op, device)
    if device == nil then
        return "cpu"
    end
    local ok, dev = pcall(core.device, device)
    if not ok then
        local msg = (tostring(dev):match("tide:.*") or tostring(dev)):gsub("^tide: device:",
            "tide: " .. op .. ":", 1)
        raise(msg)
    end
    return tostring(dev)
end

function F.get_rng_state(device)
    local name = device_name("get_rng_state", device)
    local bytes = { core._rng_state():byte(1, 16) }
    for i = 1, #name do
        bytes[16 + i] = name:byte(i)
    end
    return core.tensor(bytes, { dtype = "uint8", device = "cpu" })
end

function F.set_rng_state(state, device)
    local name = device_name("set_rng_state", device)
    if not is_tensor(state) or state.dtype ~= "uint8" or state:dim() ~= 1
        or state:size(1) <= 16 then
        local what = is_tensor(state) and ("a " .. state:dim() .. "-d " .. state.dtype ..
            " tensor of " .. state:numel() .. " elements") or ("a " .. type(state))
        raise("tide: set_rng_state: expected a state from tide.get_rng_state (a 1-d uint8 " ..
            "tensor), got " .. what)
    end
    local bytes = state:to("cpu"):totable()
    local chars = {}
    for i = 17, #bytes do
        chars[#chars + 1] = string.char(bytes[i])
    end
    local owner = table.concat(chars)
    if owner ~= name then
        raise(string.format("tide: set_rng_state: the state is %s's (tide.get_rng_state(\"%s\")) " ..
            "and cannot restore %s; pass it with device \"%s\", or take %s's state with " ..
            "tide.get_rng_state(\"%s\")", owner, owner, name, owner, name, name))
    end
    for i = 1, 16 do
        chars[i] = string.char(bytes[i])
    end
    core._set_rng_state(table.concat(chars, "", 1, 16))
end

-- tide.fork_rng(fn, ...): fn(...)'s results, tide's generator put back afterwards as it was
-- before (also on error), as PyTorch's `with torch.random.fork_rng():` block (tide has one
-- generator for every device, so every device's is restored)
function F.fork_rng(fn, ...)
    if type(fn) ~= "function" then
        raise("tide: fork_rng: expected a function to run (tide.fork_rng(function() ... " ..
            "end)), got " .. (is_tensor(fn) and "a tensor" or type(fn)))
    end
    local saved = core._rng_state()
    local r = compat.pack(pcall(fn, ...))
    core._set_rng_state(saved)
    if not r[1] then
        error(r[2], 0)
    end
    return compat.unpack(r, 2, r.n)
end

M.names = { "get_rng_state", "set_rng_state", "fork_rng" }
return M
