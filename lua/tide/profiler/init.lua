-- tide.profiler: PyTorch's torch.profiler. profile(opts[, fn]) times every op tide's C core runs
-- (by tide's op names: add, matmul, linear, conv2d, ...), record_function ranges, backward
-- nodes and profiler steps; key_averages():table() prints PyTorch's summary, and the events
-- export as a Chrome trace. Recording is in tide.profiler.recorder, the tables in
-- tide.profiler.event_list.
local recorder = require("tide.profiler.recorder")
local event_list = require("tide.profiler.event_list")
local op_args = require("tide.op_args")
local fail = require("tide.autograd.raise")
local warn = require("tide._warn")
local compat = require("tide._compat")
local core = require("tide.core")

local P = {}

P.ProfilerActivity = { CPU = "CPU", CUDA = "CUDA" }
P.ProfilerAction = { NONE = "NONE", WARMUP = "WARMUP", RECORD = "RECORD",
    RECORD_AND_SAVE = "RECORD_AND_SAVE" }
local NONE, WARMUP, RECORD, SAVE = "NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE"

-- ---- record_function ----

-- fn(...) inside a range named name; its results (the range ends also when fn raises)
local function in_range(name, fn, ...)
    local i = recorder.open(name)
    if not i then
        return fn(...)
    end
    local r = compat.pack(pcall(fn, ...))
    recorder.close(i)
    if not r[1] then
        error(r[2], 0)
    end
    return compat.unpack(r, 2, r.n)
end

local Range = {}
Range.__index = Range

function Range:__enter()
    self.index = recorder.open(self.name)
    return self
end

function Range:__exit()
    recorder.close(self.index)
    self.index = nil
end

-- as a decorator: the function run inside the range
function Range:__call(fn)
    local name = self.name
    return function(...)
        return in_range(name, fn, ...)
    end
end

-- record_function(name, fn, ...): fn(...) inside a range named name, its results;
-- record_function(name): a range r with r:__enter()/r:__exit(), and r(fn) a decorated fn
function P.record_function(name, fn, ...)
    if type(name) ~= "string" then
        fail("tide: record_function: expected a name (string), got " .. type(name))
    end
    if fn == nil then
        return setmetatable({ name = name }, Range)
    end
    if type(fn) ~= "function" then
        fail("tide: record_function: expected a function to run in the range, got " .. type(fn))
    end
    return in_range(name, fn, ...)
end

-- ---- schedule ----

-- schedule({wait =, warmup =, active =, repeat = 0, skip_first = 0}): PyTorch's step -> action
function P.schedule(opts)
    local who = "schedule"
    local o = op_args.options(who, opts, { "wait", "warmup", "active", "repeat", "skip_first" },
        "{wait = 1, warmup = 1, active = 3}")
    for _, k in ipairs({ "wait", "warmup", "active" }) do
        if o[k] == nil then
            fail(("tide: schedule: %s is required, as in {wait = 1, warmup = 1, active = 3}")
                :format(k))
        end
    end
    local wait = op_args.int_option(who, o, "wait", 0, 0)
    local warmup = op_args.int_option(who, o, "warmup", 0, 0)
    local active = op_args.int_option(who, o, "active", 1, 1)
    local rep = op_args.int_option(who, o, "repeat", 0, 0)
    local skip = op_args.int_option(who, o, "skip_first", 0, 0)
    local cycle = wait + warmup + active
    return function(step)
        if step < skip then
            return NONE
        end
        step = step - skip
        if rep > 0 and step >= rep * cycle then
            return NONE
        end
        local m = step % cycle
        if m < wait then
            return NONE
        elseif m < wait + warmup then
            return WARMUP
        end
        return m < cycle - 1 and RECORD or SAVE
    end
end

local function always_record()
    return RECORD
end

-- ---- profile ----

local Profile = {}
Profile.__index = Profile
P.Profile = Profile

local running = nil -- the profile recording in this Lua state

local OPTIONS = { "activities", "schedule", "on_trace_ready", "record_shapes", "profile_memory",
    "with_stack", "with_flops", "with_modules", "experimental_config", "use_cuda", "enabled",
    "use_cpu" }

local function flag(o, k)
    local v = o[k]
    if v ~= nil and type(v) ~= "boolean" then
        fail(("tide: profile: %s must be true or false, got %s"):format(k, tostring(v)))
    end
    return v == true
end

local function cuda_activity(o)
    local cuda = flag(o, "use_cuda")
    if o.activities ~= nil then
        if type(o.activities) ~= "table" then
            fail("tide: profile: activities must be a list such as " ..
                "{tide.profiler.ProfilerActivity.CPU}, got " .. type(o.activities))
        end
        for _, a in ipairs(o.activities) do
            if a == "CUDA" then
                cuda = true
            elseif a ~= "CPU" then
                fail(("tide: profile: unknown activity %s; expected ProfilerActivity.CPU or " ..
                    "ProfilerActivity.CUDA"):format(tostring(a)))
            end
        end
    end
    if cuda and not require("tide").cuda.is_available() then
        warn.once("profiler-cuda", "profile: CUDA activity asked for but CUDA is not available " ..
            "(" .. tostring(require("tide").cuda.unavailable_reason()) .. "); profiling the CPU")
        cuda = false
    end
    return cuda
end

-- profile(opts): a profiler to start()/stop() (or __enter/__exit); profile(opts, fn): fn(prof)
-- run while it records, and prof returned. opts as PyTorch's: activities, schedule,
-- on_trace_ready, record_shapes, profile_memory, with_stack, with_flops (which records shapes
-- too, as PyTorch's; with_modules only false; torch.autograd.profiler's use_cuda and enabled)
function P.profile(opts, fn)
    local o = op_args.options("profile", opts, OPTIONS, "{record_shapes = true}")
    if flag(o, "with_modules") then
        fail("tide: profile: with_modules is not supported by tide's profiler; leave it false")
    end
    if o.experimental_config ~= nil then
        fail("tide: profile: experimental_config is not supported by tide's profiler")
    end
    if o.schedule ~= nil and type(o.schedule) ~= "function" then
        fail("tide: profile: schedule must be a function of the step (tide.profiler.schedule" ..
            "{...}), got " .. type(o.schedule))
    end
    if o.on_trace_ready ~= nil and type(o.on_trace_ready) ~= "function" then
        fail("tide: profile: on_trace_ready must be a function of the profiler, got " ..
            type(o.on_trace_ready))
    end
    local prof = setmetatable({
        enabled = o.enabled ~= false,
        record = { shapes = flag(o, "record_shapes") or flag(o, "with_flops"),
            memory = flag(o, "profile_memory"), stack = flag(o, "with_stack"),
            cuda = cuda_activity(o), flops = flag(o, "with_flops") },
        schedule = o.schedule, record_steps = o.schedule ~= nil,
        on_trace_ready = o.on_trace_ready, step_num = 0, action = NONE,
        events_list = setmetatable({}, event_list.EventList),
    }, Profile)
    if fn == nil then
        return prof
    end
    if type(fn) ~= "function" then
        fail("tide: profile: expected a function to run while profiling, got " .. type(fn))
    end
    prof:start()
    local ok, err = pcall(fn, prof)
    prof:stop()
    if not ok then
        error(err, 0)
    end
    return prof
end

local function recording(action)
    return action == RECORD or action == SAVE
end

-- the events recorded since recording began, kept as the profiler's result
local function collect(self)
    self.events_list = event_list.from_recording(recorder.take())
    self.self_cpu_time_total = self.events_list:self_cpu_time_total()
end

local function begin_recording(self)
    recorder.start(self.record)
    if self.record_steps then
        self.step_range = recorder.open("ProfilerStep#" .. self.step_num)
    end
end

local function end_recording(self)
    recorder.close(self.step_range)
    self.step_range = nil
    recorder.stop()
    collect(self)
    if self.on_trace_ready then
        self.on_trace_ready(self)
    end
end

function Profile:start()
    if not self.enabled then
        return self
    end
    if running then
        fail("tide: profile: a profiler is already running in this Lua state; stop it first " ..
            "(prof:stop())")
    end
    running = self
    self.action = (self.schedule or always_record)(self.step_num)
    if recording(self.action) then
        begin_recording(self)
    end
    return self
end

function Profile:stop()
    if running ~= self then
        return self
    end
    running = nil
    if recording(self.action) then
        end_recording(self)
    end
    self.action = NONE
    return self
end

Profile.__enter = Profile.start
Profile.__exit = Profile.stop

-- the next step of a scheduled profile: ends a cycle (on_trace_ready) and begins the next as
-- its schedule says; each recorded step is a range "ProfilerStep#<n>"
function Profile:step()
    if running ~= self then
        return
    end
    local prev = self.action
    self.step_num = self.step_num + 1
    self.action = (self.schedule or always_record)(self.step_num)
    if prev == SAVE or (recording(prev) and not recording(self.action)) then
        end_recording(self)
        if recording(self.action) then
            begin_recording(self)
        end
    elseif recording(prev) then
        recorder.close(self.step_range)
        self.step_range = self.record_steps and recorder.open("ProfilerStep#" .. self.step_num)
    elseif recording(self.action) then
        begin_recording(self)
    end
end

local function finished(self, who)
    if running == self and recording(self.action) then
        fail(("tide: %s: the profiler is still recording; call prof:stop() first"):format(who))
    end
    return self.events_list
end

function Profile:events()
    return finished(self, "events")
end

function Profile:key_averages(opts)
    return finished(self, "key_averages"):key_averages(opts)
end

function Profile:table(opts)
    return finished(self, "table"):table(opts)
end

function Profile:export_chrome_trace(path)
    local _, pid = core._host_info()
    finished(self, "export_chrome_trace"):export_chrome_trace(path, pid)
end

-- export_memory_timeline(path[, device]): PyTorch 2.1's plot of memory by category over time
-- needs the allocator's frees, which tide does not record: it raises, naming what to use
function Profile:export_memory_timeline(path)
    fail(("tide: export_memory_timeline(%s): not supported by tide's profiler (tide does not " ..
        "record when storage is freed); profile with profile_memory = true and read " ..
        "prof:key_averages():table({sort_by = \"self_cpu_memory_usage\"}), or " ..
        "prof:export_chrome_trace(path)"):format(tostring(path)))
end

function Profile:export_stacks(path, metric)
    finished(self, "export_stacks"):export_stacks(path, metric or "self_cpu_time_total")
end

-- tensorboard_trace_handler(dir[, worker_name]): an on_trace_ready that writes each cycle's
-- trace as dir/<worker>.<ms>.pt.trace.json, the file TensorBoard's profile plugin reads
function P.tensorboard_trace_handler(dir, worker_name, use_gzip)
    if type(dir) ~= "string" then
        fail("tide: tensorboard_trace_handler: expected a directory name, got " .. type(dir))
    end
    if use_gzip then
        fail("tide: tensorboard_trace_handler: use_gzip is not supported; leave it false")
    end
    return function(prof)
        require("tide.utils.event_file").makedirs(dir, "tensorboard_trace_handler")
        local host, pid = core._host_info()
        local name = worker_name or (host .. "_" .. pid)
        local path = ("%s/%s.%d.pt.trace.json"):format(dir, name,
            math.floor(core._unix_time() * 1000))
        prof:export_chrome_trace(path)
    end
end

return P
