-- tide.multiprocessing: the names of torch.multiprocessing that scripts such as pytorch/examples'
-- mnist_hogwild/main.py use to start training workers: Process(target=, args=), start(), join(),
-- set_start_method, get_start_method, get_context, cpu_count. tide has no worker processes (a
-- Lua state is one process), so a Process runs its target in this process, to completion, when
-- start() is called: the workers run one after another, which is one of the schedules the
-- parallel run could have taken (Hogwild's updates to a shared model are unordered), and the
-- model they update is the caller's own (model:share_memory() is a no-op, as t:share_memory_()).
-- An error in a target is raised from start() naming the process (PyTorch's child would print
-- it and exit with code 1; tide does not swallow it).
-- tide.multiprocessing (loaded on first use), or require("tide.multiprocessing").
local compat = require("tide._compat")

local M = {}

local START_METHODS = { fork = true, spawn = true, forkserver = true }
local start_method = nil
local next_pid = 1

local raise = require("tide.autograd.raise") -- at the user's line

local Process = {}
Process.__index = Process
Process.__name = "Process"

local PROCESS_KEYS = { group = true, target = true, name = true, args = true, kwargs = true,
    daemon = true }

-- Process{target = fn, args = {...}, kwargs = {...}, name = "...", daemon = bool}
-- (PyTorch's mp.Process(target=train, args=(rank, ...)): its keywords in one table)
function M.Process(opts, ...)
    if select("#", ...) > 0 or (opts ~= nil and type(opts) ~= "table") then
        raise("tide: multiprocessing.Process takes its arguments by name in one table: "
            .. "mp.Process({target = train, args = {rank, ...}}), got " .. tostring(opts)
            .. (select("#", ...) > 0 and " and more arguments" or ""))
    end
    opts = opts or {}
    for k in pairs(opts) do
        if not PROCESS_KEYS[k] then
            raise("tide: multiprocessing.Process: unknown argument " .. tostring(k)
                .. " (it takes group, target, name, args, kwargs, daemon)")
        end
    end
    if opts.group ~= nil then
        raise("tide: multiprocessing.Process: group must be nil (as Python's), got " ..
            tostring(opts.group))
    end
    local target = opts.target
    local callable = type(target) == "table" and getmetatable(target) and
        getmetatable(target).__call
    if target ~= nil and type(target) ~= "function" and not callable then
        raise("tide: multiprocessing.Process: target must be a function, got " .. type(target))
    end
    if opts.args ~= nil and type(opts.args) ~= "table" then
        raise("tide: multiprocessing.Process: args must be a list (Python's tuple) such as " ..
            "{rank, model}, got " .. tostring(opts.args))
    end
    if opts.kwargs ~= nil and type(opts.kwargs) ~= "table" then
        raise("tide: multiprocessing.Process: kwargs must be a table by name, got " ..
            tostring(opts.kwargs))
    end
    local p = setmetatable({
        _target = target,
        _args = opts.args or {},
        _nargs = opts.args and (opts.args.n or #opts.args) or 0,
        _kwargs = opts.kwargs,
        daemon = opts.daemon or false,
        exitcode = nil,
        pid = nil,
        _started = false,
    }, Process)
    p.name = opts.name or ("Process-" .. next_pid)
    return p
end

-- PyTorch's Process.run: calls target(*args, **kwargs) (kwargs as a trailing table)
function Process:run()
    if self._target == nil then
        return
    end
    local unpack = compat.unpack
    if self._kwargs ~= nil and next(self._kwargs) ~= nil then
        local a = {}
        for i = 1, self._nargs do
            a[i] = self._args[i]
        end
        a[self._nargs + 1] = self._kwargs
        return self._target(unpack(a, 1, self._nargs + 1))
    end
    return self._target(unpack(self._args, 1, self._nargs))
end

-- runs the target here, to completion (tide has no worker processes)
function Process:start()
    if self._started then
        raise("tide: multiprocessing.Process: cannot start a process twice (" .. self.name ..
            ")")
    end
    self._started = true
    self.pid = next_pid
    next_pid = next_pid + 1
    local ok, err = pcall(self.run, self)
    self.exitcode = ok and 0 or 1
    if not ok then
        error("tide: multiprocessing.Process " .. self.name .. ": its target raised: " ..
            tostring(err), 2)
    end
end

-- the target has already run in start(); join waits for nothing
function Process:join(timeout)
    if not self._started then
        raise("tide: multiprocessing.Process: can only join a started process (call " ..
            "p:start() first)")
    end
    if timeout ~= nil and type(timeout) ~= "number" then
        raise("tide: multiprocessing.Process: join's timeout must be a number of seconds, " ..
            "got " .. tostring(timeout))
    end
end

function Process:is_alive()
    return false
end

function Process:terminate() end

Process.kill = Process.terminate

-- set_start_method(method, force=False): mp.set_start_method('spawn', {force = true})
function M.set_start_method(method, opts)
    if opts ~= nil and type(opts) ~= "table" and type(opts) ~= "boolean" then
        raise("tide: multiprocessing.set_start_method: the second argument is " ..
            "{force = bool}, got " .. tostring(opts))
    end
    local force = opts == true or (type(opts) == "table" and opts.force)
    if method ~= nil and not START_METHODS[method] then
        raise("tide: multiprocessing.set_start_method: method must be \"fork\", \"spawn\" " ..
            "or \"forkserver\", got " .. tostring(method))
    end
    if start_method ~= nil and not force then
        raise("tide: multiprocessing.set_start_method: context has already been set (to " ..
            start_method .. "); pass {force = true} to change it")
    end
    start_method = method
end

function M.get_start_method(allow_none)
    if start_method == nil and not allow_none then
        start_method = "fork"
    end
    return start_method
end

function M.get_all_start_methods()
    return { "fork", "spawn", "forkserver" }
end

-- get_context(method): a context with the same names (the module itself)
function M.get_context(method)
    if method ~= nil and not START_METHODS[method] then
        raise("tide: multiprocessing.get_context: method must be \"fork\", \"spawn\" or " ..
            "\"forkserver\", got " .. tostring(method))
    end
    return M
end

function M.cpu_count()
    local tide = require("tide")
    return tide.get_num_threads()
end

return M
