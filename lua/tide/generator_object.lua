-- tide.generator_object: PyTorch's Generator objects, tide.Generator([device]), and the
-- `generator =` option of the core's draws (tide.rand, randn, randperm, multinomial and
-- t:uniform_, t:normal_, t:multinomial; the Lua-written draws take it through M.run).
--
--     local g = tide.Generator():manual_seed(42)
--     local a = tide.randn({3}, {generator = g})    -- = tide.manual_seed(42); tide.randn({3})
--     local b = x:uniform_(-1, 1, {generator = g})  -- the next draws of g's stream
--
-- A Generator is its own stream of tide's counter-based generator: a seed and an offset (the
-- 16 bytes of core._rng_state()). A draw with one swaps its state in, draws, keeps the new
-- state and puts tide's state back, also on error; so its draws are those tide.manual_seed(s)
-- would give, and tide's own stream (tide.manual_seed, tide.get_rng_state) never moves. A new
-- Generator starts from PyTorch's default seed, 67280421310721 (not tide's default).
-- Loaded with tide: it wraps core methods (lua/tide/_lazy_ops.lua keeps such modules eager).
local core = require("tide.core")
local compat = require("tide._compat")
local args = require("tide.op_args")
local raise = require("tide.autograd.raise")

local is_tensor = core.is_tensor
local pack, unpack = compat.pack, compat.unpack
local Tensor = core.Tensor

local M = { functions = {} }

local DEFAULT_SEED = 67280421310721 -- torch.Generator().initial_seed()

local Generator = { __name = "tide.Generator" }
Generator.__index = Generator

local function is_generator(v)
    return type(v) == "table" and getmetatable(v) == Generator
end
M.is_generator = is_generator

-- the 16 state bytes tide.manual_seed(seed) gives, taken through tide's generator and put back
local function seeded(seed)
    local saved = core._rng_state()
    core.manual_seed(seed)
    local s = core._rng_state()
    core._set_rng_state(saved)
    return s
end

-- the canonical name of a device argument ("cuda" -> "cuda:0"); core.device's errors as op's
local function device_name(op, device)
    local ok, dev = pcall(core.device, device)
    if not ok then
        raise((tostring(dev):match("tide:.*") or tostring(dev)):gsub("^tide: device:",
            "tide: " .. op .. ":", 1))
    end
    return tostring(dev)
end

-- g's 16 state bytes: tide's own generator's for tide.default_generator
local function state_of(g)
    return g._global and core._rng_state() or g._state
end

-- raises unless self is a Generator: a method called with a dot (g.seed()) gets no self
local function check_self(op, g)
    if not is_generator(g) then
        raise(("tide: Generator:%s: expected a Generator as self, got %s; call it with a " ..
            "colon: g:%s(...)"):format(op, is_tensor(g) and "a tensor" or type(g), op))
    end
end

--- tide.Generator([device]): a new generator for device ("cpu" by default); PyTorch's keyword
--- form torch.Generator(device=d) is tide.Generator({device = d})
function Generator.new(device, ...)
    args.no_extra("Generator", 1, ...)
    if type(device) == "table" and getmetatable(device) == nil then
        for k in pairs(device) do
            if k ~= "device" then
                raise(("tide: Generator: unknown option %s; PyTorch's Generator takes only " ..
                    "device (tide.Generator({device = \"cpu\"}) or tide.Generator(\"cpu\"))")
                    :format(type(k) == "string" and k or ("[" .. tostring(k) .. "]")))
            end
        end
        device = device.device
    end
    local name = device == nil and "cpu" or device_name("Generator", device)
    return setmetatable({ device = core.device(name), _device = name,
        _state = seeded(DEFAULT_SEED) }, Generator)
end

require("tide._class").callable(Generator)

--- g:manual_seed(seed): restarts g from seed (an integer, as tide.manual_seed's); returns g
function Generator:manual_seed(seed, ...)
    check_self("manual_seed", self)
    args.no_extra("Generator:manual_seed", 2, ...)
    seed = args.integer("Generator:manual_seed", seed, "the seed")
    if self._global then
        core.manual_seed(seed)
    else
        self._state = seeded(seed)
    end
    return self
end

--- g:seed(): seeds g from the clock and a fresh address, as tide.seed() does; returns the seed
function Generator:seed(...)
    check_self("seed", self)
    args.no_extra("Generator:seed", 1, ...)
    local saved = core._rng_state()
    local s = require("tide.random_draws").functions.seed()
    if self._global then
        return s
    end
    self._state = core._rng_state()
    core._set_rng_state(saved)
    return s
end

--- g:initial_seed(): the seed g started from (its manual_seed's, seed()'s or the default), as
-- tide.initial_seed() reads tide's: the first 8 bytes of the state as a little-endian int64
function Generator:initial_seed(...)
    check_self("initial_seed", self)
    args.no_extra("Generator:initial_seed", 1, ...)
    local b = { state_of(self):byte(1, 8) }
    local lo = b[1] + b[2] * 256 + b[3] * 65536 + b[4] * 16777216
    local hi = b[5] + b[6] * 256 + b[7] * 65536 + b[8] * 16777216
    if hi >= 2147483648 then
        hi = hi - 4294967296
    end
    return hi * 4294967296 + lo
end

--- g:get_state(): g's position as tide.get_rng_state(g.device) writes tide's (a 1-d uint8 CPU
-- tensor: seed and offset, then the device's name)
function Generator:get_state(...)
    check_self("get_state", self)
    args.no_extra("Generator:get_state", 1, ...)
    local bytes = { state_of(self):byte(1, 16) }
    for i = 1, #self._device do
        bytes[16 + i] = self._device:byte(i)
    end
    return core.tensor(bytes, { dtype = "uint8", device = "cpu" })
end

--- g:set_state(state): g continues from state (g:get_state()'s or tide.get_rng_state()'s, of
-- g's device); returns g
function Generator:set_state(state, ...)
    local op = "Generator:set_state"
    check_self("set_state", self)
    args.no_extra(op, 2, ...)
    if not is_tensor(state) or state.dtype ~= "uint8" or state:dim() ~= 1
        or state:size(1) <= 16 then
        local what = is_tensor(state) and ("a " .. state:dim() .. "-d " .. state.dtype ..
            " tensor of " .. state:numel() .. " elements") or ("a " .. type(state))
        raise(("tide: %s: expected a state from g:get_state() or tide.get_rng_state() (a 1-d " ..
            "uint8 tensor), got %s"):format(op, what))
    end
    local bytes = state:to("cpu"):totable()
    local chars = {}
    for i = 17, #bytes do
        chars[#chars + 1] = string.char(bytes[i])
    end
    local owner, name = table.concat(chars), self._device
    if owner ~= name then
        raise(("tide: %s: the state is %s's (tide.get_rng_state(\"%s\")) and cannot restore a " ..
            "Generator of %s; restore it into a tide.Generator(\"%s\"), or take %s's state " ..
            "with g:get_state() or tide.get_rng_state(\"%s\")"):format(op, owner, owner, name,
            owner, name, name))
    end
    for i = 1, 16 do
        chars[i] = string.char(bytes[i])
    end
    if self._global then
        core._set_rng_state(table.concat(chars, "", 1, 16))
    else
        self._state = table.concat(chars, "", 1, 16)
    end
    return self
end

function Generator:__tostring()
    return ("Generator(device=%s, initial_seed=%d)"):format(self._device, self:initial_seed())
end

M.functions.Generator = Generator

-- tide.default_generator, PyTorch's torch.default_generator: tide's own stream as a Generator
-- (its methods seed, read and restore tide.manual_seed's generator; a draw given it draws as
-- one given none); tide.manual_seed(seed) returns it, as torch.manual_seed does
local default = setmetatable({ device = core.device("cpu"), _device = "cpu", _global = true },
    Generator)
M.functions.default_generator = default

function M.functions.manual_seed(seed, ...)
    core.manual_seed(seed, ...)
    return default
end

-- ---- drawing from one ----

-- raises unless g (a `generator =` option of op) is a Generator
function M.check(op, g)
    if not is_generator(g) then
        raise(("tide: %s: generator must be a tide.Generator, got %s; make one with " ..
            "tide.Generator():manual_seed(seed)"):format(op, is_tensor(g) and "a tensor" or
            type(g)))
    end
    return g
end

-- raises unless g is for device (a device or its name; one that core.device refuses is left
-- for the draw to raise on); tide has one generator for every device, but a Generator, as
-- PyTorch's, serves one device (here the exact device: cpu:1 is not cpu, as for the states)
function M.check_device(op, g, device)
    if device == nil then -- (an argument that is no tensor: the draw raises)
        return
    end
    local ok, dev = pcall(core.device, device)
    if ok and tostring(dev) ~= g._device then
        raise(("tide: %s: generator is for %s, the draw is on %s; pass a tide.Generator(\"%s\")")
            :format(op, g._device, tostring(dev), tostring(dev)))
    end
end

-- fn(...) drawing from g's stream when g is a Generator (checked, and for device), else from
-- tide's (g nil): g keeps its new state; tide's generator is put back as it was, also on error,
-- where g keeps its old state (a refused call moves nothing)
function M.run(op, g, device, fn, ...)
    if g == nil then
        return fn(...)
    end
    M.check(op, g)
    M.check_device(op, g, device)
    if g._drawing or g._global then -- a draw within one of g's own, or tide's own stream
        return fn(...)
    end
    local saved = core._rng_state()
    core._set_rng_state(g._state)
    g._drawing = true
    local r = pack(pcall(fn, ...))
    g._drawing = nil
    if r[1] then
        g._state = core._rng_state()
    end
    core._set_rng_state(saved)
    if not r[1] then
        error(r[2], 0) -- raised at the user's line already
    end
    return unpack(r, 2, r.n)
end

-- (a1, ..., an, opts) of a method whose n positional arguments may be followed by an options
-- table: when opts is absent and the last argument given is a table (tensors are userdata),
-- it is the options, standing for the omitted positionals (x:exponential_({generator = g}))
function M.take_options(n, ...)
    local a = pack(...)
    if a[n + 1] == nil then
        for i = n, 1, -1 do
            if a[i] ~= nil then
                if type(a[i]) == "table" then
                    a[n + 1], a[i] = a[i], nil
                end
                break
            end
        end
    end
    return unpack(a, 1, n + 1)
end

-- the generator of an options table that may hold only it (nil when absent)
local GENERATOR = { "generator" }
function M.option(op, opts)
    return args.options(op, opts, GENERATOR, "{generator = g}").generator
end

-- ---- the core's draws, with the option ----

local function without_generator(opts)
    local c = {}
    for k, v in pairs(opts) do
        if k ~= "generator" then
            c[k] = v
        end
    end
    return c
end

-- a core draw taking an options table at the position where(...) returns (with the table):
-- the table is checked against known (generator added); with a generator the kernel gets it
-- without that key and draws on device_of(the arguments, the options)
local function with_generator(op, kernel, known, where, device_of)
    local names = { unpack(known) }
    names[#names + 1] = "generator"
    return function(...)
        local i, opts = where(...)
        if type(opts) ~= "table" or is_tensor(opts) then
            return kernel(...)
        end
        core._check_options(opts, op, names)
        if opts.generator == nil then
            return kernel(...)
        end
        local a = pack(...)
        a[i] = without_generator(opts)
        return M.run(op, M.check(op, opts.generator), device_of(a, opts), kernel,
            unpack(a, 1, a.n))
    end
end

-- rand / randn(shape..., opts): a shape table then the options, or sizes then the options, or
-- one table of options holding the shape as size (PyTorch's size=: the kernel takes it out)
local function after_shape(...)
    local first = ...
    if type(first) == "table" and not is_tensor(first) and rawget(first, "size") ~= nil then
        return 1, first
    elseif type(first) == "table" then
        return 2, (select(2, ...))
    end
    local n = select("#", ...)
    for i = 1, n do
        local v = select(i, ...)
        if type(v) ~= "number" then
            return i, v
        end
    end
    return n + 1, nil
end

local function at(i)
    return function(...)
        return i, (select(i, ...))
    end
end

local function created_on(_, opts)
    if opts.device ~= nil then
        return opts.device
    end
    return core.get_default_device()
end

local function of_first(a)
    return is_tensor(a[1]) and a[1].device or nil
end

local CREATE = { "device", "dtype", "requires_grad" }
local SIZED = { "device", "dtype", "requires_grad", "size" }
M.functions.rand = with_generator("rand", core.rand, SIZED, after_shape, created_on)
M.functions.randn = with_generator("randn", core.randn, SIZED, after_shape, created_on)
M.functions.randperm = with_generator("randperm", core.randperm, CREATE, at(2), created_on)
-- tide.multinomial(probs, n[, replacement][, opts]) and probs:multinomial(...): one C function;
-- the options follow PyTorch's positional replacement when it is given
local function after_replacement(...)
    local i = type((select(3, ...))) == "boolean" and 4 or 3
    return i, (select(i, ...))
end
M.functions.multinomial = with_generator("multinomial", core.multinomial, { "replacement" },
    after_replacement, of_first)
Tensor.multinomial = M.functions.multinomial

-- x:uniform_([from, to][, {generator =}]) and x:normal_([mean, std][, {generator =}])
local function fill(op)
    local kernel = Tensor[op]
    Tensor[op] = function(x, ...)
        local a, b, o = ...
        if type(a) ~= "table" and type(b) ~= "table" and type(o) ~= "table" then
            return kernel(x, ...)
        end
        args.no_extra(op, 4, select(4, ...))
        args.check(op, x)
        a, b, o = M.take_options(2, a, b, o)
        local g = M.option(op, o)
        return M.run(op, g, x.device, kernel, x, a, b)
    end
end
fill("uniform_")
fill("normal_")

M.names = { "Generator", "rand", "randn", "randperm", "multinomial", "default_generator",
    "manual_seed" }
return M
