-- tide.profiler.event_list: the recorder's events as PyTorch's profiler gives them. An
-- EventList is an array of events (FunctionEvent) or of their averages by name
-- (FunctionEventAvg, from key_averages), with PyTorch's fields in microseconds and bytes, its
-- table() layout, and the Chrome trace and flame-graph stack exports.
local fail = require("tide.autograd.raise")
local op_args = require("tide.op_args")
local json = require("tide.models._json")

local M = {}

local EventList = {}
EventList.__index = EventList
M.EventList = EventList

local function list(events)
    return setmetatable(events, EventList)
end

local function shapes_text(s)
    if s == nil then
        return "[]"
    end
    local parts = {}
    for i = 1, #s do
        parts[i] = "[" .. table.concat(s[i], ", ") .. "]"
    end
    return "[" .. table.concat(parts, ", ") .. "]"
end

-- the events of a recording (recorder.take()): each with its parent (the innermost event whose
-- time holds it), children, and self times and memory (its own, less its children's); an
-- event that raised (no end) is left out, its children go to its parent. An op's FLOPs count
-- once: not again for the ops it runs inside (addmm's add, bmm's matmul)
function M.from_recording(rec)
    local events, stack = {}, {}
    local t_first = rec.t0[1]
    for i = 1, rec.n do
        local t0, t1 = rec.t0[i], rec.t1[i]
        if t0 and t1 then
            while #stack > 0 and stack[#stack].t1 <= t0 do
                stack[#stack] = nil
            end
            local us = (t1 - t0) * 1e6
            local e = { id = #events + 1, name = rec.name[i], key = rec.name[i], t0 = t0, t1 = t1,
                start_us = (t0 - t_first) * 1e6, cpu_time_total = us, self_cpu_time_total = us,
                cuda_time_total = rec.cuda[i] and us or 0, input_shapes = rec.shapes[i] or {},
                stack = rec.stack[i] or {}, cpu_memory_usage = rec.memory[i] or 0,
                cuda_memory_usage = 0, self_cuda_memory_usage = 0, count = 1,
                cpu_children = {}, device_type = "CPU" }
            e.self_cpu_memory_usage = e.cpu_memory_usage
            e.self_cuda_time_total = e.cuda_time_total
            local parent = stack[#stack]
            local counted = parent and parent.counted
            e.counted = counted or rec.flops[i] ~= nil
            e.flops = not counted and rec.flops[i] or 0
            if parent then
                e.cpu_parent = parent
                parent.cpu_children[#parent.cpu_children + 1] = e
                parent.self_cpu_time_total = parent.self_cpu_time_total - us
                parent.self_cuda_time_total = parent.self_cuda_time_total - e.cuda_time_total
                parent.self_cpu_memory_usage = parent.self_cpu_memory_usage - e.cpu_memory_usage
            end
            e.cpu_time = e.cpu_time_total
            e.cuda_time = e.cuda_time_total
            events[#events + 1] = e
            stack[#stack + 1] = e
        end
    end
    for _, e in ipairs(events) do -- a range's children may take a hair more than the range
        e.self_cpu_time_total = math.max(e.self_cpu_time_total, 0)
        e.self_cuda_time_total = math.max(e.self_cuda_time_total, 0)
    end
    local l = list(events)
    l.profile_memory, l.with_flops = rec.memory_on, rec.flops_on
    return l
end

-- ---- averages ----

local SUMMED = { "cpu_time_total", "self_cpu_time_total", "cuda_time_total",
    "self_cuda_time_total", "cpu_memory_usage", "self_cpu_memory_usage", "cuda_memory_usage",
    "self_cuda_memory_usage", "count", "flops" }

-- key_averages([{group_by_input_shape =, group_by_stack_n =}]): one FunctionEventAvg a name
-- (and input shapes, and top stack frames, when asked), in the order the keys first ran
function EventList:key_averages(opts)
    local o = op_args.options("key_averages", opts,
        { "group_by_input_shape", "group_by_input_shapes", "group_by_stack_n" })
    local by_shape = o.group_by_input_shape or o.group_by_input_shapes
    local stack_n = op_args.int_option("key_averages", o, "group_by_stack_n", 0, 0)
    local avgs, by_key = {}, {}
    for _, e in ipairs(self) do
        local key = e.key
        if by_shape then
            key = key .. "\0" .. shapes_text(e.input_shapes)
        end
        for k = 1, stack_n do
            key = key .. "\0" .. (e.stack[k] or "")
        end
        local a = by_key[key]
        if not a then
            local stack = {}
            for k = 1, stack_n do
                stack[k] = e.stack[k]
            end
            a = { key = e.key, input_shapes = by_shape and e.input_shapes or "", stack = stack,
                cpu_parent = e.cpu_parent, device_type = "CPU" }
            for _, f in ipairs(SUMMED) do
                a[f] = 0
            end
            by_key[key] = a
            avgs[#avgs + 1] = a
        end
        for _, f in ipairs(SUMMED) do
            a[f] = a[f] + e[f]
        end
    end
    for _, a in ipairs(avgs) do
        a.cpu_time = a.cpu_time_total / a.count
        a.cuda_time = a.cuda_time_total / a.count
    end
    local l = list(avgs)
    l.profile_memory, l.with_flops = self.profile_memory, self.with_flops
    return l
end

-- the sum of every event's self time (µs): the table's "Self CPU time total"
function EventList:self_cpu_time_total()
    local s = 0
    for _, e in ipairs(self) do
        s = s + e.self_cpu_time_total
    end
    return s
end

-- one FunctionEventAvg of every event
function EventList:total_average()
    local t = { key = "Total", count = 0, input_shapes = "", stack = {} }
    for _, f in ipairs(SUMMED) do
        t[f] = 0
    end
    for _, e in ipairs(self) do
        for _, f in ipairs(SUMMED) do
            t[f] = t[f] + e[f]
        end
    end
    t.cpu_time = t.count > 0 and t.cpu_time_total / t.count or 0
    t.cuda_time = t.count > 0 and t.cuda_time_total / t.count or 0
    return t
end

-- ---- the table ----

-- PyTorch's profiler_util formats: 1.234ms, 17.25 Kb, 45.65%
local function format_time(us)
    if us >= 1e6 then
        return ("%.3fs"):format(us / 1e6)
    elseif us >= 1e3 then
        return ("%.3fms"):format(us / 1e3)
    end
    return ("%.3fus"):format(us)
end
M.format_time = format_time

local function format_memory(b)
    local KB, MB, GB = 1024, 1024 * 1024, 1024 * 1024 * 1024
    local a = math.abs(b)
    if a >= GB then
        return ("%.2f Gb"):format(b / GB)
    elseif a >= MB then
        return ("%.2f Mb"):format(b / MB)
    elseif a >= KB then
        return ("%.2f Kb"):format(b / KB)
    end
    return ("%d b"):format(b)
end

local function share(t, total)
    if total == 0 then
        return "NaN"
    end
    return ("%.2f%%"):format(t * 100 / total)
end

local SORT_KEYS = { "cpu_time_total", "self_cpu_time_total", "cpu_time", "cuda_time_total",
    "self_cuda_time_total", "cuda_time", "cpu_memory_usage", "self_cpu_memory_usage",
    "cuda_memory_usage", "self_cuda_memory_usage", "count" }
local IS_SORT_KEY = {}
for _, k in ipairs(SORT_KEYS) do
    IS_SORT_KEY[k] = true
end

local function sorted(events, by)
    if not IS_SORT_KEY[by] then
        fail(("tide: table: sort_by = %s; expected one of %s"):format(tostring(by),
            table.concat(SORT_KEYS, ", ")))
    end
    local order = {}
    for i, e in ipairs(events) do
        order[i] = { e, i }
    end
    table.sort(order, function(a, b) -- descending, ties in their order (Python's sort)
        local x, y = a[1][by], b[1][by]
        if x ~= y then
            return x > y
        end
        return a[2] < b[2]
    end)
    for i, p in ipairs(order) do
        order[i] = p[1]
    end
    return order
end

local function cut_path(path, width)
    if #path > width then
        path = path:sub(#path - width + 1)
        if #path > 3 then
            path = "..." .. path:sub(4)
        end
    end
    return path
end

-- the FLOPs column's unit, {scale, name}, as PyTorch's auto_scale_flops: by the smallest count
-- above 0 (FLOPs, KFLOPs, ... PFLOPs); nil when no event has one
local FLOP_UNITS = { "FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs" }
local function flops_unit(events)
    local least
    for _, e in ipairs(events) do
        if e.flops > 0 and (not least or e.flops < least) then
            least = e.flops
        end
    end
    if not least then
        return nil
    end
    local k = 0 -- floor(log10(least) / 3), in integers
    while k < #FLOP_UNITS - 1 and least >= 10 ^ (3 * (k + 1)) do
        k = k + 1
    end
    return { 10 ^ (-3 * k), FLOP_UNITS[k + 1] }
end

-- table([{sort_by =, row_limit = 100, header =, top_level_events_only = false,
-- max_name_column_width = 55, max_shapes_column_width = 80, max_src_column_width = 75}]): the
-- text PyTorch's table() prints, column for column
function EventList:table(opts)
    local o = op_args.options("table", opts, { "sort_by", "row_limit", "header",
        "top_level_events_only", "max_name_column_width", "max_shapes_column_width",
        "max_src_column_width" })
    local row_limit = op_args.int_option("table", o, "row_limit", 100, -1)
    local name_max = op_args.int_option("table", o, "max_name_column_width", 55, 4)
    local shapes_max = op_args.int_option("table", o, "max_shapes_column_width", 80, 1)
    local src_max = op_args.int_option("table", o, "max_src_column_width", 75, 4)
    if #self == 0 then
        return ""
    end
    local events = o.sort_by ~= nil and sorted(self, o.sort_by) or self
    local has_cuda, has_shapes, has_stack = false, false, false
    local name_w, shapes_w, src_w = 0, 0, 0
    for _, e in ipairs(events) do
        has_cuda = has_cuda or e.self_cuda_time_total > 0
        local s = type(e.input_shapes) == "table" and #e.input_shapes > 0 and
            shapes_text(e.input_shapes) or ""
        has_shapes = has_shapes or s ~= ""
        name_w = math.max(name_w, #e.key + 4)
        shapes_w = math.max(shapes_w, #(s == "" and "[]" or s) + 4)
        for _, f in ipairs(e.stack) do
            has_stack = true
            src_w = math.max(src_w, #f + 4)
        end
    end
    name_w, shapes_w, src_w = math.min(name_w, name_max), math.min(shapes_w, shapes_max),
        math.min(src_w, src_max)
    local headers = { "Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total",
        "CPU time avg" }
    if has_cuda then
        for _, h in ipairs({ "Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg" }) do
            headers[#headers + 1] = h
        end
    end
    if self.profile_memory then
        headers[#headers + 1] = "CPU Mem"
        headers[#headers + 1] = "Self CPU Mem"
    end
    headers[#headers + 1] = "# of Calls"
    local widths, left = { name_w }, {}
    for i = 2, #headers do
        widths[i] = 12
    end
    if has_shapes then
        headers[#headers + 1] = "Input Shapes"
        widths[#headers] = shapes_w
    end
    local flops_scale = self.with_flops and flops_unit(events)
    if flops_scale then -- (PyTorch 1.13 puts its header after Source Location, not its values)
        headers[#headers + 1] = "Total " .. flops_scale[2]
        widths[#headers] = 12
    end
    if has_stack then
        headers[#headers + 1] = "Source Location"
        widths[#headers] = src_w
        left[#headers] = true
    end
    local function row(values)
        local cells = {}
        for i, w in ipairs(widths) do
            local v = tostring(values[i] or "")
            local pad = (" "):rep(math.max(w - #v, 0))
            cells[i] = (left[i] and v .. pad or pad .. v) .. "  "
        end
        return table.concat(cells)
    end
    local sep_cells, line_len = {}, -2
    for i, w in ipairs(widths) do
        sep_cells[i] = ("-"):rep(w) .. "  "
        line_len = line_len + w + 2
    end
    local sep = table.concat(sep_cells)
    local out = {}
    local function put(s)
        out[#out + 1] = s .. "\n"
    end
    local self_total, self_cuda = 0, 0
    for _, e in ipairs(events) do
        self_total = self_total + e.self_cpu_time_total
        self_cuda = self_cuda + e.self_cuda_time_total
    end
    if o.header ~= nil then
        put(("="):rep(line_len))
        put(tostring(o.header))
    end
    if o.top_level_events_only then
        put(("="):rep(line_len))
        put("This report only display top-level ops statistics")
    end
    put(sep)
    put(row(headers))
    put(sep)
    local shown = 0
    for _, e in ipairs(events) do
        if shown == row_limit then
            break
        end
        if not (o.top_level_events_only and e.cpu_parent) then
            shown = shown + 1
            local name = e.key
            if #name >= name_max - 3 then
                name = name:sub(1, name_max - 3) .. "..."
            end
            local v = { name, share(e.self_cpu_time_total, self_total),
                format_time(e.self_cpu_time_total), share(e.cpu_time_total, self_total),
                format_time(e.cpu_time_total), format_time(e.cpu_time) }
            if has_cuda then
                for _, x in ipairs({ format_time(e.self_cuda_time_total),
                    share(e.self_cuda_time_total, self_cuda), format_time(e.cuda_time_total),
                    format_time(e.cuda_time) }) do
                    v[#v + 1] = x
                end
            end
            if self.profile_memory then
                v[#v + 1] = format_memory(e.cpu_memory_usage)
                v[#v + 1] = format_memory(e.self_cpu_memory_usage)
            end
            v[#v + 1] = e.count
            if has_shapes then
                local s = type(e.input_shapes) == "table" and shapes_text(e.input_shapes) or
                    tostring(e.input_shapes)
                v[#v + 1] = s:sub(1, shapes_w)
            end
            if flops_scale then
                v[#v + 1] = e.flops > 0 and ("%8.3f"):format(e.flops * flops_scale[1]) or "--"
            end
            if has_stack then
                v[#v + 1] = cut_path(e.stack[1] or "", src_w)
            end
            put(row(v))
            if has_stack then
                local blank = {}
                for i = 1, #headers - 1 do
                    blank[i] = ""
                end
                for k = 2, math.min(#e.stack, 5) do
                    blank[#headers] = cut_path(e.stack[k], src_w)
                    put(row(blank))
                end
                blank[#headers] = ""
                put(row(blank))
            end
        end
    end
    put(sep)
    put("Self CPU time total: " .. format_time(self_total))
    if has_cuda then
        put("Self CUDA time total: " .. format_time(self_cuda))
    end
    return table.concat(out)
end

EventList.__tostring = EventList.table

-- ---- exports ----

local function write_file(path, text, who)
    local f, err = io.open(path, "w")
    if not f then
        fail(("tide: %s: cannot write %s: %s"):format(who, tostring(path), tostring(err)))
    end
    f:write(text)
    f:close()
end

-- the Chrome trace event format (chrome://tracing, Perfetto, TensorBoard's profile plugin):
-- one complete ("X") event per op or range, microseconds from the first event
function EventList:chrome_trace(pid)
    local parts = {}
    for i, e in ipairs(self) do
        local args = ""
        if #e.input_shapes > 0 then
            args = ', "args": {"Input Dims": ' .. shapes_text(e.input_shapes) .. "}"
        end
        parts[i] = ('{"ph": "X", "cat": "%s", "name": %s, "pid": %d, "tid": 1, ' ..
            '"ts": %.3f, "dur": %.3f%s}'):format(e.cpu_parent and "cpu_op" or "user_annotation",
            json.quote(e.name), pid or 0, e.start_us, e.cpu_time_total, args)
    end
    return '{"schemaVersion": 1, "displayTimeUnit": "ms", "traceEvents": [\n' ..
        table.concat(parts, ",\n") .. "\n]}\n"
end

-- (pid: the process id the trace names, 0 when not given)
function EventList:export_chrome_trace(path, pid)
    write_file(path, self:chrome_trace(pid), "export_chrome_trace")
end

-- flame-graph input (Brendan Gregg's folded stacks): "outer;...;inner <metric>" per event
-- recorded with_stack whose metric (µs) is at least 1
function EventList:export_stacks(path, metric)
    if metric ~= "self_cpu_time_total" and metric ~= "self_cuda_time_total" then
        fail(("tide: export_stacks: metric = %s; expected \"self_cpu_time_total\" or " ..
            "\"self_cuda_time_total\""):format(tostring(metric)))
    end
    local lines = {}
    for _, e in ipairs(self) do
        local v = math.floor(e[metric])
        if #e.stack > 0 and v > 0 then
            local frames = {}
            for k = #e.stack, 1, -1 do
                frames[#frames + 1] = (e.stack[k]:gsub("[ ;\t\n]", "_"))
            end
            lines[#lines + 1] = table.concat(frames, ";") .. " " .. v .. "\n"
        end
    end
    write_file(path, table.concat(lines), "export_stacks")
end

return M
