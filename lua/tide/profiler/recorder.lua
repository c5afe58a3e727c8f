-- tide.profiler.recorder: what a running profiler records. While one records, each C function
-- of tide.core that runs an op (tide.core's functions, its _internal kernels, the Tensor methods
-- and operators, indexing, the collectives) is replaced, wherever tide's loaded modules hold it,
-- by a closure that times the call; stop puts each back. Nothing is paid while none records.
-- Ranges (record_function, a backward node, a profiler step) are events too; nesting comes from
-- the times afterwards (tide.profiler.event_list), so a call that raises leaves no open frame.
local core = require("tide.core")
local hooks = require("tide.profiler.hooks")
local FLOP_RULES = require("tide.profiler.flops")

local R = {}

-- taken before any wrapping: the recorder's own calls are never events
local clock = core.wall_time
local memory_allocated = core._memory_allocated
local is_tensor = core.is_tensor
local synchronize = core.synchronize
local getinfo = debug and debug.getinfo

-- the events, one index each in the order they began: name, start and end (seconds), and what
-- the options asked for: input shapes, bytes allocated (storage made, on any device; tide frees
-- at collection, not at an op), the user's stack, CUDA time, floating-point
-- operations (FARGS: the arguments of an op with a FLOPs rule, until it returns)
local NAME, T0, T1, SHAPES, MEM, STACK, CUDA, FLOPS, FARGS = {}, {}, {}, {}, {}, {}, {}, {}, {}
local n = 0
local on = false
local detail = false -- any of the options below
local shapes_on, memory_on, stack_on, cuda_on, flops_on = false, false, false, false, false

-- ---- what is an op ----

-- tide.core's C functions that run no op: queries, modes, plumbing (and every name with a
-- leading underscore); a call to them is not an event
local NOT_OPS = {}
for name in ([[best_device cpu_info device devices get_default_device get_default_dtype
    get_num_threads is_grad_enabled is_tensor isatty memory_in_use memory_limit memory_stats
    reset_transfer_stats set_autograd_hook set_default_device set_default_dtype
    set_grad_enabled set_memory_limit set_num_threads trace_transfers transfer_guard
    transfer_stats wall_time empty_cache manual_seed data_ptr dim element_size is_complex
    is_contiguous is_floating_point is_pinned nelement numel size stride storage_offset
    register_hook requires_grad_ set_autocast set_subscripts set_view_follower view_root
    views_follow info is_available rank world_size unavailable_reason set_timeout finalize
    init]]):gmatch("%S+") do
    NOT_OPS[name] = true
end

-- the Tensor operators, by PyTorch's op names
local OPERATORS = { __add = "add", __sub = "sub", __mul = "mul", __div = "div",
    __mod = "remainder", __pow = "pow", __unm = "neg", __idiv = "floor_divide",
    __band = "bitwise_and", __bor = "bitwise_or", __bxor = "bitwise_xor",
    __shl = "bitwise_left_shift", __shr = "bitwise_right_shift", __bnot = "bitwise_not",
    __lt = "lt", __le = "le" }

-- ---- recording ----

local function now_cuda(i, ...)
    for k = 1, select("#", ...) do
        local x = select(k, ...)
        if is_tensor(x) then
            local dev = x.device
            if dev.type == "cuda" then
                CUDA[i] = dev
            end
            return
        end
    end
end

-- the user's frames, innermost first: "file(line): function", as PyTorch's with_stack writes
local LIB = getinfo and getinfo(1, "S").source:match("^@(.*[/\\])profiler[/\\]recorder%.lua$")
local function user_stack()
    local frames, level = {}, 3
    while getinfo and #frames < 16 do
        local info = getinfo(level, "Sln")
        if not info then
            break
        end
        if info.what ~= "C" and info.currentline > 0 and
            not (LIB and info.source:sub(2, #LIB + 1) == LIB) then
            frames[#frames + 1] = ("%s(%d): %s"):format(info.short_src, info.currentline,
                info.name or "<chunk>")
        end
        level = level + 1
    end
    return frames
end

local function note(i, ...)
    if shapes_on then
        local s = {}
        for k = 1, select("#", ...) do
            local x = select(k, ...)
            s[k] = is_tensor(x) and x.shape or {}
        end
        SHAPES[i] = s
    end
    if stack_on then
        STACK[i] = user_stack()
    end
    if cuda_on then
        now_cuda(i, ...)
    end
    if flops_on and FLOP_RULES[NAME[i]] then
        FARGS[i] = { n = select("#", ...), ... }
    end
    if memory_on then
        MEM[i] = memory_allocated()
    end
end

local function finish(i, ...)
    local dev = CUDA[i]
    if dev then
        synchronize(dev) -- the op's kernels in its time (activity CUDA)
    end
    T1[i] = clock()
    if memory_on then
        MEM[i] = memory_allocated() - MEM[i]
    end
    local args = FARGS[i]
    if args then
        FARGS[i] = nil
        FLOPS[i] = FLOP_RULES[NAME[i]](args, (...))
    end
    return ...
end

local function begin(name)
    local i = n + 1
    n = i
    NAME[i] = name
    return i
end

-- a range's index (nil while nothing records); R.close(i) ends it
function R.open(name)
    if not on then
        return nil
    end
    local i = begin(name)
    if memory_on then
        MEM[i] = memory_allocated()
    end
    T0[i] = clock()
    return i
end

function R.close(i)
    if i and not T1[i] then
        T1[i] = clock()
        if memory_on then
            MEM[i] = memory_allocated() - MEM[i]
        end
    end
end

-- f timed as an event named name (the closure stays valid after stop: it then just calls f)
local function timed(name, f)
    return function(...)
        if not on then
            return f(...)
        end
        local i = begin(name)
        if detail then
            note(i, ...)
        end
        T0[i] = clock()
        return finish(i, f(...))
    end
end

-- indexing: an event for x[k] / x[k] = v with k not a name (a method or field lookup is none)
local function timed_index(name, f)
    local t = timed(name, f)
    return function(x, k, ...)
        if type(k) == "string" or not on then
            return f(x, k, ...)
        end
        return t(x, k, ...)
    end
end

-- ---- installing ----

local WRAPPED = {}   -- C function -> its timed closure (made once, kept)
local swapped = {}   -- {table, key, original} of each replacement, for uninstall

-- the optimizers' fused steps, private names of tide.core
local OPTIMIZER_STEPS = { _adam_step_ = "adam_step_", _sgd_step_ = "sgd_step_",
    _adagrad_step_ = "adagrad_step_", _rmsprop_step_ = "rmsprop_step_" }

-- Lua's own functions (tide._compat hands on table.unpack, ...) are never ops
local STANDARD = {}
for _, lib in ipairs({ _G, table, string, math, os, io, coroutine, debug or {}, utf8 or {},
    bit or {}, jit or {} }) do
    for _, f in pairs(lib) do
        if type(f) == "function" then
            STANDARD[f] = true
        end
    end
end

local function is_op(k, f)
    return type(k) == "string" and type(f) == "function" and not WRAPPED[f] and not STANDARD[f] and
        (k:sub(1, 1) ~= "_" or OPTIMIZER_STEPS[k]) and not NOT_OPS[k] and
        (not getinfo or getinfo(f, "S").what == "C")
end

local function wrap_all(t)
    for k, f in pairs(t) do
        if is_op(k, f) then
            WRAPPED[f] = timed(OPTIMIZER_STEPS[k] or k, f)
        end
    end
end

local made = false
local function make_wrappers()
    if made then
        return
    end
    made = true
    local mt = getmetatable(core.tensor({ 0 }))
    for op, name in pairs(OPERATORS) do
        if mt[op] and not WRAPPED[mt[op]] then
            WRAPPED[mt[op]] = timed(name, mt[op])
        end
    end
    WRAPPED[mt.__index] = timed_index("index", mt.__index)
    WRAPPED[mt.__newindex] = timed_index("index_put_", mt.__newindex)
    wrap_all(core.Tensor)
    wrap_all(core)
    wrap_all(core._internal)
    wrap_all(core._dist)
end

-- the tide modules loaded so far (tide, tide.nn.functional, tide.linalg, ...): they hold core's
-- functions, and C closures of their own (tide.zeros: the keyword form around core.zeros)
local function loaded_modules()
    local mods = {}
    for name, mod in pairs(package.loaded) do
        if type(mod) == "table" and (name == "tide" or name:sub(1, 5) == "tide.") then
            mods[#mods + 1] = mod
        end
    end
    return mods
end

local function swap_in(t)
    for k, f in pairs(t) do
        local w = WRAPPED[f]
        if w then
            swapped[#swapped + 1] = { t, k, f }
            rawset(t, k, w)
        end
    end
end

local function install()
    make_wrappers()
    local mods = loaded_modules()
    for _, mod in ipairs(mods) do
        wrap_all(mod)
    end
    swap_in(getmetatable(core.tensor({ 0 })))
    swap_in(core.Tensor)
    swap_in(core._internal)
    swap_in(core._dist)
    for _, mod in ipairs(mods) do -- tide.core among them
        swap_in(mod)
    end
end

local function uninstall()
    for i = #swapped, 1, -1 do
        local s = swapped[i]
        if rawget(s[1], s[2]) == WRAPPED[s[3]] then
            rawset(s[1], s[2], s[3])
        end
        swapped[i] = nil
    end
    -- a tide module loaded while recording may have copied a timed closure into its table
    local original = {}
    for f, w in pairs(WRAPPED) do
        original[w] = f
    end
    for _, mod in ipairs(loaded_modules()) do
        for k, v in pairs(mod) do
            if original[v] then
                rawset(mod, k, original[v])
            end
        end
    end
end

-- ---- the recorder's life ----

function R.running()
    return on
end

-- starts recording, the events kept so far forgotten. o: shapes, memory, stack, cuda, flops
-- (booleans)
function R.start(o)
    R.clear()
    shapes_on, memory_on, stack_on, cuda_on = o.shapes, o.memory, o.stack, o.cuda
    flops_on = o.flops
    detail = shapes_on or memory_on or stack_on or cuda_on or flops_on
    install()
    on = true
    hooks.open, hooks.close = R.open, R.close
end

function R.stop()
    on = false
    hooks.open, hooks.close = nil, nil
    uninstall()
    local t = clock()
    for i = 1, n do -- a range still open (a profiler step) ends here
        if T1[i] == nil and NAME[i]:sub(1, 13) == "ProfilerStep#" then
            T1[i] = t
        end
    end
end

function R.clear()
    NAME, T0, T1, SHAPES, MEM, STACK, CUDA, FLOPS, FARGS = {}, {}, {}, {}, {}, {}, {}, {}, {}
    n = 0
end

-- the events recorded (arrays by event index), for tide.profiler.event_list
function R.take()
    return { n = n, name = NAME, t0 = T0, t1 = T1, shapes = SHAPES, memory = MEM,
        stack = STACK, cuda = CUDA, flops = FLOPS, memory_on = memory_on, flops_on = flops_on }
end

return R
