-- tide.compiler: PyTorch 2.x's torch.compiler, which tide has no need of (every op runs eagerly,
-- nothing is ever compiled): disable(fn[, {recursive = true}]) gives fn back, disable() and
-- disable({recursive =}) give a decorator (Python's @torch.compiler.disable and
-- @torch.compiler.disable(recursive=False)); is_compiling() and is_dynamo_compiling() are
-- false; reset() does nothing; compile is tide.compile.
local autograd = require("tide.autograd")
local raise = autograd.raise

local M = {}

local function check(opts, who)
    for k, v in pairs(opts) do
        if k ~= "recursive" and k ~= "reason" then
            raise(("tide: compiler.%s: unknown option %s; options are recursive and reason " ..
                "(tide.compiler.disable(fn, {recursive = false}))"):format(who, tostring(k)))
        end
        if k == "recursive" and type(v) ~= "boolean" then
            raise("tide: compiler.disable: recursive must be true or false, got " .. tostring(v))
        end
    end
end

local callable = require("tide.op_args").is_callable

function M.disable(fn, opts, ...)
    if select("#", ...) > 0 then
        raise("tide: compiler.disable: expected (fn[, {recursive = true}]), got more arguments")
    end
    if fn == nil then
        return function(f) return M.disable(f, opts) end
    end
    if type(fn) == "table" and not callable(fn) and opts == nil then -- disable({recursive = false})
        check(fn, "disable")
        return function(f) return M.disable(f, fn) end
    end
    if not callable(fn) then
        raise("tide: compiler.disable: expected a function or a module, got " .. type(fn) ..
            "; write tide.compiler.disable(fn) or tide.compiler.disable({recursive = false})(fn)")
    end
    if opts ~= nil then
        if type(opts) ~= "table" then
            raise("tide: compiler.disable: options must be a table such as {recursive = false}, " ..
                "got " .. type(opts))
        end
        check(opts, "disable")
    end
    return fn
end

function M.is_compiling()
    return false
end

M.is_dynamo_compiling = M.is_compiling

function M.reset()
end

function M.compile(...)
    return require("tide.compile")(...)
end

return M
