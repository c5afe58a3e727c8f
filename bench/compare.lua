-- compare.lua — the rule every PyTorch comparison in bench/ follows (issue 15), in one place:
--   * the reference runs at its best: every thread count 1..nproc (torch.set_num_threads, read
--     by bench/torch_ref.py from TIDE_BENCH_THREADS), each with and without
--     OMP_WAIT_POLICY=PASSIVE, each setting a process of its own; the fastest setting by median
--     wins and is reported;
--   * the reference runs OpenBLAS's kernels for this CPU: tide picks them itself (its preload
--     sets OPENBLAS_CORETYPE from the CPU's features, see lua/preload/blas_core.c), and a
--     PyTorch whose OpenBLAS fell back to its SSE3 kernels would be a handicapped reference,
--     so each reference process gets OPENBLAS_CORETYPE=tide.cpu_info().blas_core (unless the
--     user set one: then both sides run under it);
--   * tide runs as a user gets it: in this process, no environment variable set for it;
--   * tide and every reference setting take turns in rounds (the order flips each round), and
--     the figure is the median of the per-round ratios tide / winning setting, so a slow moment
--     of the machine hits both sides of a ratio.
-- The reference prints lines "result KEY VALUE" (bench/torch_ref.py's report); tide's side is a
-- function returning { [KEY] = VALUE }. Values are times: lower is better.
local M = {}

local PYTHON = os.getenv("TIDE_BENCH_PYTHON") or "/usr/bin/python3"

function M.median(v)
    local s = {}
    for i, x in ipairs(v) do
        s[i] = x
    end
    table.sort(s)
    local n = #s
    return n % 2 == 1 and s[(n + 1) / 2] or (s[n / 2] + s[n / 2 + 1]) / 2
end

-- whether a file can be opened for reading (a benchmark's model, data or venv)
function M.exists(path)
    local f = io.open(path, "rb")
    if f then
        f:close()
    end
    return f ~= nil
end

function M.nproc()
    local p = io.popen("nproc 2>/dev/null")
    local n = p and tonumber(p:read("*a")) or 1
    if p then
        p:close()
    end
    return math.max(1, math.floor(n or 1))
end

-- every thread count up to 8 cores; above, powers of two and nproc (a 64-core machine would
-- otherwise run 128 reference processes a round)
-- (no bit operators: the overhead and MLP benchmarks also run under LuaJIT)
local function power_of_two(t)
    while t > 1 and t % 2 == 0 do
        t = t / 2
    end
    return t == 1
end

function M.settings()
    local n, counts = M.nproc(), {}
    for t = 1, n do
        if n <= 8 or power_of_two(t) or t == n then
            counts[#counts + 1] = t
        end
    end
    local out = {}
    for _, t in ipairs(counts) do
        out[#out + 1] = { threads = t, passive = false }
        out[#out + 1] = { threads = t, passive = true }
    end
    return out
end

-- the OpenBLAS kernel family tide runs in this process (nil when the BLAS does not say)
function M.blas_core()
    return os.getenv("OPENBLAS_CORETYPE") or require("tide").cpu_info().blas_core
end

function M.describe(s)
    return string.format("%d thread%s%s", s.threads, s.threads == 1 and "" or "s",
        s.passive and ", OMP_WAIT_POLICY=PASSIVE" or "")
end

-- one reference process under setting s; { [key] = value } or nil and its output
function M.run_reference(args, s)
    local core = M.blas_core()
    local cmd = string.format("env %s %s TIDE_BENCH_THREADS=%d %s %s 2>&1",
        s.passive and "OMP_WAIT_POLICY=PASSIVE" or "-u OMP_WAIT_POLICY",
        core and ("OPENBLAS_CORETYPE=" .. core) or "", s.threads, PYTHON, args)
    local p = io.popen(cmd)
    local out = p:read("*a")
    p:close()
    local r, any = {}, false
    for key, v in out:gmatch("result (%S+) ([%d%.e+-]+)") do
        r[key], any = tonumber(v), true
    end
    return any and r or nil, out
end

-- o = { rounds =, tide = function() -> {key = value}, reference = "bench/x.py ARGS" }
-- -> { [key] = { tide =, ref =, ratio =, lo =, hi =, setting = } } or nil and the reason
function M.run(o)
    local settings = M.settings()
    local tide_v, ref_v = {}, {}
    for si = 1, #settings do
        ref_v[si] = {}
    end
    local function reference_round(r)
        for si, s in ipairs(settings) do
            local v, out = M.run_reference(o.reference, s)
            if not v then
                return nil, (out:match("[^\n]*Error[^\n]*") or out:gsub("\n", " "):sub(1, 200))
            end
            ref_v[si][r] = v
        end
        return true
    end
    for r = 1, o.rounds do
        if r % 2 == 1 then
            tide_v[r] = o.tide()
        end
        local ok, why = reference_round(r)
        if not ok then
            return nil, why
        end
        if r % 2 == 0 then
            tide_v[r] = o.tide()
        end
    end
    local res = {}
    for key in pairs(tide_v[1]) do
        local best, best_med
        for si = 1, #settings do
            local v = {}
            for r = 1, o.rounds do
                v[r] = ref_v[si][r][key]
            end
            local med = #v == o.rounds and M.median(v)
            if med and (not best_med or med < best_med) then
                best, best_med = si, med
            end
        end
        if best then
            local ratios, tides = {}, {}
            for r = 1, o.rounds do
                ratios[r] = tide_v[r][key] / ref_v[best][r][key]
                tides[r] = tide_v[r][key]
            end
            local lo, hi = math.huge, 0
            for _, x in ipairs(ratios) do
                lo, hi = math.min(lo, x), math.max(hi, x)
            end
            res[key] = { tide = M.median(tides), ref = best_med, ratio = M.median(ratios),
                lo = lo, hi = hi, setting = M.describe(settings[best]) }
        end
    end
    return res
end

-- one line per key: "LABEL: tide X, pytorch Y (setting), ratio Z (range, N rounds)"
-- flags(o, usage): the command line's `--name value` pairs into o (o's keys, "-" read as "_";
-- a number default takes an integer); an unknown flag prints usage and exits 2
function M.flags(o, usage)
    local i = 1
    while i <= #arg do
        local k = arg[i]:match("^%-%-([%w-]+)$")
        k = k and k:gsub("-", "_")
        if not k or o[k] == nil or arg[i + 1] == nil then
            io.stderr:write(usage, "\n")
            os.exit(2)
        end
        local v = arg[i + 1]
        if type(o[k]) == "number" then
            v = math.tointeger(tonumber(v))
        end
        o[k] = v
        if v == nil then
            io.stderr:write(arg[0], ": --", arg[i]:sub(3), " expects an integer\n")
            os.exit(2)
        end
        i = i + 2
    end
    return o
end

function M.print_line(label, r, unit, scale, rounds)
    print(string.format("%s: tide %.3f %s, pytorch-best %.3f %s (%s), ratio %.2f "
        .. "(median of %d rounds' ratios, %.2f-%.2f)", label, r.tide * scale, unit,
        r.ref * scale, unit, r.setting, r.ratio, rounds, r.lo, r.hi))
end

-- the fastest of reps calls of f after three to warm up (the collector's pace settles over the
-- first few large results), in ms (clock: tide.wall_time)
function M.best_ms(f, reps, clock)
    for _ = 1, 3 do
        f()
    end
    local best = math.huge
    for _ = 1, reps do
        local t0 = clock()
        f()
        best = math.min(best, clock() - t0)
    end
    return best * 1e3
end

-- a line per key of res (compare.run's figures, in ms), or why the reference has none
function M.print_lines(keys, res, why, rounds)
    for _, key in ipairs(keys) do
        local r = res and res[key]
        if r then
            M.print_line(key, r, "ms", 1, rounds)
        else
            print(string.format("%s: pytorch n/a (%s)", key, why or "no figure"))
        end
    end
end

-- The op-by-case benchmarks (bench/masking.lua, polar.lua, reductions.lua): cases are
-- {name, ...} tables and ops a list of names; the figures' keys are "<op>_<case name>".
function M.case_keys(cases, ops)
    local keys = {}
    for _, c in ipairs(cases) do
        for _, op in ipairs(ops) do
            keys[#keys + 1] = op .. "_" .. c[1]
        end
    end
    return keys
end

-- tide's side of such a benchmark: make(case) returns {op = function} for the case's inputs;
-- each op timed by best_ms, the figures under case_keys' names
function M.time_cases(cases, ops, make, reps, clock)
    local out = {}
    for _, c in ipairs(cases) do
        local f = make(c)
        for _, op in ipairs(ops) do
            out[op .. "_" .. c[1]] = M.best_ms(f[op], reps, clock)
        end
    end
    return out
end

return M
