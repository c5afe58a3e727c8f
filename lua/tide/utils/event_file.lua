-- tide.utils.event_file — one TensorBoard event file,
-- `events.out.tfevents.<time>.<host>.<pid>.<n>`,
-- holding TFRecord-framed `Event` messages (lua/record_io.c frames them), and a reader for it.
--
-- No background thread (PyTorch's writer has one): records wait in a buffer and are written
-- and fflushed together by flush(), when max_queue records wait, or at the first add after
-- flush_secs. A record flushed is on disk when the process dies; one cut short by a crash
-- fails its CRC in the reader, and the records before it still read.
local core = require("tide.core")
local fail = require("tide.autograd.raise") -- at the user's line
local pb = require("tide.utils.protobuf")

local M = {}

local uid = 0 -- PyTorch's _global_uid: the file name's last part, one per file this process opened

--- mkdir -p: makes path and its missing parents; raises naming the directory that failed
function M.makedirs(path, op)
    local sofar = path:sub(1, 1) == "/" and "/" or ""
    for part in path:gmatch("[^/]+") do
        sofar = sofar .. part
        local ok, why = core._mkdir(sofar)
        if not ok then
            fail(("tide: %s: cannot make the directory %q: %s; choose another log_dir"):format(
                op, sofar, why))
        end
        sofar = sofar .. "/"
    end
end

--- an Event message: wall_time (1), step (2), then one of file_version (3) / summary (5), and
--- source_metadata (10) on the first event of a file
function M.event(wall_time, step, fields)
    return pb.message(pb.double(1, wall_time), pb.varint(2, step), fields)
end

local Writer = {}
Writer.__index = Writer

--- M.open(logdir, {max_queue =, flush_secs =, filename_suffix =}, op) -> a writer whose file
--- starts with the file_version event, flushed
function M.open(logdir, opts, op)
    M.makedirs(logdir, op)
    local host, pid = core._host_info()
    local now = core._unix_time()
    local name = ("events.out.tfevents.%010d.%s.%d.%d"):format(math.floor(now), host, pid, uid)
        .. (opts.filename_suffix or "")
    uid = uid + 1
    local path = logdir .. "/" .. name
    local f, err = io.open(path, "wb")
    if not f then
        fail(("tide: %s: cannot create the event file %s: %s"):format(op, path, err))
    end
    -- marked for finalization after its file, so collected before it: __gc writes the queue
    -- while the file is still open (Lua finalizes in the reverse order of marking)
    local w = setmetatable({ path = path, logdir = logdir, file = f, queue = {},
        max_queue = opts.max_queue or 10, flush_secs = opts.flush_secs or 120,
        next_flush = 0 }, Writer)
    if newproxy then -- Lua 5.1 / LuaJIT finalize userdata only: a proxy's __gc closes it
        w.guard = newproxy(true)
        getmetatable(w.guard).__gc = function()
            pcall(w.close, w)
        end
    end
    w:add_event(M.event(now, nil, pb.message(pb.bytes(3, "brain.Event:2"),
        pb.bytes(10, pb.bytes(1, "tensorboard.summary.writer.event_file_writer")))))
    w:flush()
    return w
end

--- queues an encoded Event; writes the queue out when it is full or flush_secs have passed
function Writer:add_event(ev)
    if not self.file then
        fail("tide: SummaryWriter: the writer is closed; make a new SummaryWriter")
    end
    local q = self.queue
    q[#q + 1] = core._tfrecord(ev)
    if #q >= self.max_queue or core._unix_time() >= self.next_flush then
        self:flush()
    end
end

--- writes the queued records and flushes the C stream (no fsync: a process crash loses nothing
--- flushed; a machine crash is the file system's business)
function Writer:flush()
    if not self.file then
        return
    end
    if #self.queue > 0 then
        local ok, err = self.file:write(table.concat(self.queue))
        if not ok then
            fail(("tide: SummaryWriter: cannot write %s: %s"):format(self.path, err))
        end
        self.queue = {}
    end
    self.file:flush()
    self.next_flush = core._unix_time() + self.flush_secs
end

-- at collection or lua_close: nothing to raise from a finalizer
Writer.__gc = function(w)
    pcall(w.close, w)
end

function Writer:close()
    if self.file then
        self:flush()
        self.file:close()
        self.file = nil
    end
end

--- M.read(path) -> list of the Event messages (bytes) in the file, and nil or the reason the
--- last record did not read ("truncated record data at byte N", "data CRC mismatch ...")
function M.read(path)
    local f, err = io.open(path, "rb")
    if not f then
        fail("tide: event_file.read: " .. tostring(err))
    end
    local buf = f:read("*a")
    f:close()
    local out, pos = {}, 1
    while true do
        local data, nxt = core._tfrecord_next(buf, pos)
        if data == nil then
            return out, nil
        elseif data == false then
            return out, nxt
        end
        out[#out + 1] = data
        pos = nxt
    end
end

return M
