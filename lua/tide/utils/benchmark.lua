-- tide.utils.benchmark — torch.utils.benchmark's Timer, Measurement and Compare for ported
-- scripts: Timer(stmt[, setup[, {globals =, label =, sub_label =, description =,
-- num_threads =}]]) (PyTorch's positional stmt and setup, the rest by name) times stmt, a
-- function or a string of Lua code run with globals as its variables (then tide, then Lua's
-- globals), as
-- PyTorch's runs a string of Python (an expression such as "x * y" runs as `return x * y`);
-- setup (the same kinds, its assignments seen by stmt) runs once before. t:timeit(number)
-- (PyTorch's default 1000000), t:blocked_autorange([{min_run_time = 0.2}]) and
-- t:adaptive_autorange([{threshold = 0.1, min_run_time = 0.01, max_run_time = 10}]) give a
-- Measurement: m.times (seconds per run of each block), m.mean, m.median, m.iqr,
-- m.number_per_run, m.raw_times, m.title, tostring(m) in PyTorch's layout. Compare(results)
-- prints them as one table (c:print(), tostring(c)). Wall time (the C library's clock), the GPU
-- synchronized around each block as PyTorch's. Callgrind
-- (collect_callgrind) and the C++ language have no tide form: they raise.
local core = require("tide.core")

local M = {}

local function fail(msg)
    error("tide: benchmark: " .. msg, 3)
end

local unpack = require("tide._compat").unpack

-- a chunk of Lua code with env as its globals (Lua 5.1: setfenv; 5.2+: load's env)
local function compile(src, what, env)
    local f, err
    local function try(code)
        if setfenv and loadstring then -- luacheck: ignore
            local g, e = loadstring(code, "=" .. what) -- luacheck: ignore
            if g then
                setfenv(g, env) -- luacheck: ignore
            end
            return g, e
        end
        return load(code, "=" .. what, "t", env)
    end
    f, err = try(src)
    if not f then -- an expression, as Python's stmt "x * y" is: run it as `return <expr>`
        local g = try("return " .. src)
        if g then
            f, err = g, nil
        end
    end
    if not f then
        fail(what .. " does not compile: " .. tostring(err) .. " (give Lua code or a function)")
    end
    return f
end

local function callable(v, what, env)
    if v == nil then
        return function() end
    elseif type(v) == "function" then
        return v
    elseif type(v) == "string" then
        return compile(v, what, env)
    end
    fail(what .. " must be a function or a string of Lua code, got " .. type(v))
end

local TIMER_OPTS = { globals = true, label = true, sub_label = true, description = true,
    num_threads = true, env = true, language = true, stmt = true, setup = true }

local Timer = {}
Timer.__index = Timer

function M.Timer(stmt, setup, opts)
    if type(stmt) == "table" and setup == nil and opts == nil then
        opts, stmt = stmt, stmt.stmt
    elseif type(setup) == "table" and opts == nil then
        opts, setup = setup, setup.setup
    end
    opts = opts or {}
    if type(opts) ~= "table" then
        fail("Timer: options must be a table ({globals =, label =}), got " .. type(opts))
    end
    for k in pairs(opts) do
        if not TIMER_OPTS[k] then
            fail("Timer: unknown option " .. tostring(k) .. "; options are globals, label, " ..
                "sub_label, description, num_threads, env")
        end
    end
    if opts.language ~= nil and opts.language ~= "python" and opts.language ~= "lua" then
        fail("Timer: language " .. tostring(opts.language) .. " has no tide form; time Lua " ..
            "code or a function")
    end
    if opts.globals ~= nil and type(opts.globals) ~= "table" then
        fail("Timer: globals must be a table of names, got " .. type(opts.globals))
    end
    if opts.num_threads ~= nil and (type(opts.num_threads) ~= "number" or opts.num_threads < 1) then
        fail("Timer: num_threads must be a positive number, got " .. tostring(opts.num_threads))
    end
    if stmt == nil then
        stmt = "" -- PyTorch's stmt='pass'
    end
    local env = setmetatable({}, { __index = function(_, k)
        local g = opts.globals
        if g ~= nil and g[k] ~= nil then
            return g[k]
        end
        if k == "tide" then -- PyTorch's Timer puts torch in its globals
            return require("tide")
        end
        return _G[k]
    end })
    local self = setmetatable({
        stmt = stmt, _stmt = callable(stmt, "stmt", env),
        _setup = callable(setup, "setup", env),
        label = opts.label, sub_label = opts.sub_label, description = opts.description,
        num_threads = opts.num_threads or 1, env = opts.env,
    }, Timer)
    return self
end

local function now()
    return core._unix_time()
end

-- waits for the GPU's queued work, as PyTorch's Timer synchronizes CUDA around its runs (the
-- CPU devices run each op to its end)
local function synchronize()
    local tide = require("tide")
    if tide.cuda.is_available() then
        tide.cuda.synchronize()
    end
end

-- seconds for `number` runs of stmt
function Timer:_run(number)
    local f = self._stmt
    synchronize()
    local t0 = now()
    for _ = 1, number do
        f()
    end
    synchronize()
    return now() - t0
end

-- one block of `number` runs: its seconds, added to raw and given to callback
function Timer:_block(number, raw, callback)
    local t = self:_run(number)
    raw[#raw + 1] = t
    if callback then
        callback(number, t)
    end
    return t
end

local function check_number(v, what, default)
    if v == nil then
        return default
    end
    if type(v) ~= "number" or v <= 0 then
        fail(what .. " must be a positive number, got " .. tostring(v))
    end
    return v
end

-- a method's arguments: PyTorch's positional first parameter, or the options table
local function method_opts(name, first, firstname, allowed)
    local opts = {}
    if type(first) == "table" then
        opts = first
    elseif first ~= nil then
        opts[firstname] = first
    end
    for k in pairs(opts) do
        if not allowed[k] then
            local names = {}
            for n in pairs(allowed) do
                names[#names + 1] = n
            end
            table.sort(names)
            fail(name .. ": unknown option " .. tostring(k) .. "; options are " ..
                table.concat(names, ", "))
        end
    end
    return opts
end

local Measurement = {}
Measurement.__index = Measurement

local function quantile(sorted, q)
    local n = #sorted
    local pos = (n - 1) * q + 1
    local lo = math.floor(pos)
    local hi = math.min(lo + 1, n)
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo)
end

local function measurement(timer, number, raw)
    local times = {}
    for i, r in ipairs(raw) do
        times[i] = r / number
    end
    local sorted = { unpack(times) }
    table.sort(sorted)
    local sum = 0
    for _, t in ipairs(times) do
        sum = sum + t
    end
    return setmetatable({
        number_per_run = number, raw_times = raw, times = times, mean = sum / #times,
        median = quantile(sorted, 0.5), iqr = quantile(sorted, 0.75) - quantile(sorted, 0.25),
        task_spec = timer, label = timer.label, sub_label = timer.sub_label,
        description = timer.description, num_threads = timer.num_threads,
        stmt = type(timer.stmt) == "string" and timer.stmt or "<function>",
        title = timer.label and (timer.sub_label and timer.label .. ": " .. timer.sub_label or
            timer.label) or (type(timer.stmt) == "string" and timer.stmt or "<function>"),
    }, Measurement)
end

-- PyTorch's unit choice: the largest of s, ms, us, ns that keeps the value >= 1
local function unit(t)
    if t >= 1 then
        return 1, "s"
    elseif t >= 1e-3 then
        return 1e3, "ms"
    elseif t >= 1e-6 then
        return 1e6, "us"
    end
    return 1e9, "ns"
end

function Measurement:__tostring()
    local s, u = unit(self.median)
    local lines = { "<tide.utils.benchmark.Measurement>", self.title }
    if self.description then
        lines[#lines + 1] = self.description
    end
    if #self.times > 1 then
        local sorted = { unpack(self.times) }
        table.sort(sorted)
        lines[#lines + 1] = ("  Median: %.2f %s"):format(self.median * s, u)
        lines[#lines + 1] = ("  IQR:    %.2f %s (%.2f to %.2f)"):format(self.iqr * s, u,
            quantile(sorted, 0.25) * s, quantile(sorted, 0.75) * s)
        lines[#lines + 1] = ("  %d measurements, %d runs per measurement, %d thread"):format(
            #self.times, self.number_per_run, self.num_threads)
    else
        lines[#lines + 1] = ("  %.2f %s"):format(self.mean * s, u)
        lines[#lines + 1] = ("  1 measurement, %d runs , %d thread"):format(self.number_per_run,
            self.num_threads)
    end
    return table.concat(lines, "\n")
end

function Timer:timeit(number)
    local o = method_opts("timeit", number, "number", { number = true })
    number = check_number(o.number, "timeit: number", 1000000)
    self._setup()
    return measurement(self, number, { self:_run(number) })
end

-- PyTorch's: a block size that takes at least 0.1 ms, then blocks until min_run_time passes
function Timer:_block_size()
    local number = 1
    while true do
        if self:_run(number) >= 1e-4 or number >= 1e9 then
            return number
        end
        number = number * 10
    end
end

function Timer:blocked_autorange(opts)
    local o = method_opts("blocked_autorange", opts, "callback",
        { min_run_time = true, callback = true })
    local min_run_time = check_number(o.min_run_time, "blocked_autorange: min_run_time", 0.2)
    self._setup()
    local number = self:_block_size()
    local raw, total = {}, 0
    repeat
        total = total + self:_block(number, raw, o.callback)
    until total >= min_run_time
    return measurement(self, number, raw)
end

function Timer:adaptive_autorange(opts)
    local o = method_opts("adaptive_autorange", opts, "threshold",
        { threshold = true, min_run_time = true, max_run_time = true, callback = true })
    local threshold = check_number(o.threshold, "adaptive_autorange: threshold", 0.1)
    local min_run_time = check_number(o.min_run_time, "adaptive_autorange: min_run_time", 0.01)
    local max_run_time = check_number(o.max_run_time, "adaptive_autorange: max_run_time", 10)
    self._setup()
    local number = self:_block_size()
    local raw, total = {}, 0
    while true do
        total = total + self:_block(number, raw, o.callback)
        if total >= max_run_time then
            break
        end
        if total >= min_run_time and #raw >= 3 then
            local m = measurement(self, number, raw)
            if m.iqr / m.median < threshold then
                break
            end
        end
    end
    return measurement(self, number, raw)
end

function Timer.collect_callgrind()
    fail("collect_callgrind: tide has no Callgrind wrapper; time with blocked_autorange, or " ..
        "run the script under valgrind --tool=callgrind")
end

-- Compare(results): the measurements grouped by label, a row per sub_label, a column per
-- description (PyTorch's layout), times as medians in one unit
local Compare = {}
Compare.__index = Compare

function M.Compare(results)
    if type(results) ~= "table" then
        fail("Compare: expected a list of Measurements, got " .. type(results))
    end
    for i, m in ipairs(results) do
        if getmetatable(m) ~= Measurement then
            fail("Compare: results[" .. i .. "] is not a Measurement (a " .. type(m) .. ")")
        end
    end
    return setmetatable({ results = results }, Compare)
end

function Compare:__tostring()
    local labels, by_label = {}, {}
    local smallest = math.huge
    for _, m in ipairs(self.results) do
        local l = m.label or m.title
        if not by_label[l] then
            labels[#labels + 1] = l
            by_label[l] = { rows = {}, cols = {}, cell = {}, row_seen = {}, col_seen = {} }
        end
        local g = by_label[l]
        local r = m.sub_label or ""
        local c = m.description or ""
        if not g.row_seen[r] then
            g.row_seen[r] = true
            g.rows[#g.rows + 1] = r
        end
        if not g.col_seen[c] then
            g.col_seen[c] = true
            g.cols[#g.cols + 1] = c
        end
        g.cell[r .. "\0" .. c] = m.median
        smallest = math.min(smallest, m.median)
    end
    local s, u = unit(smallest)
    local out = {}
    for _, l in ipairs(labels) do
        local g = by_label[l]
        out[#out + 1] = "[" .. ("-"):rep(10) .. " " .. l .. " " .. ("-"):rep(10) .. "]"
        local head = { ("%-20s"):format("") }
        for _, c in ipairs(g.cols) do
            head[#head + 1] = ("%14s"):format(c)
        end
        out[#out + 1] = table.concat(head, " | ")
        for _, r in ipairs(g.rows) do
            local line = { ("%-20s"):format(r) }
            for _, c in ipairs(g.cols) do
                local v = g.cell[r .. "\0" .. c]
                line[#line + 1] = v and ("%14.1f"):format(v * s) or ("%14s"):format("")
            end
            out[#out + 1] = table.concat(line, " | ")
        end
        out[#out + 1] = ""
        out[#out + 1] = "Times are in " .. (u == "us" and "microseconds" or u == "ms" and
            "milliseconds" or u == "ns" and "nanoseconds" or "seconds") .. " (" .. u .. ")."
    end
    return table.concat(out, "\n")
end

function Compare:print()
    print(tostring(self))
end

-- no-ops that keep ported calls: trim_significant_figures, colorize, highlight_warnings
function Compare:trim_significant_figures()
end

function Compare:colorize()
end

function Compare:highlight_warnings()
end

M.Measurement = Measurement
M.Language = { PYTHON = "python", CPP = "cpp", LUA = "lua" }

return M
