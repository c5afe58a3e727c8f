-- tide.utils.checkpoint_sequential(functions, segments, input[, {preserve_rng_state = true,
-- use_reentrant =}]): PyTorch 1.13's torch.utils.checkpoint.checkpoint_sequential. functions
-- (an nn.Sequential's layers, or a list of modules or functions, each taking one value) is cut
-- into `segments` runs of floor(#functions / segments); every run but the last goes through
-- tide.utils.checkpoint (its activations made again in the backward pass), the last, with the
-- layers left over, runs plainly. Memory for a second forward of all but the last run.
local raise = require("tide.autograd").raise
local args = require("tide.op_args")
local checkpoint = require("tide.utils.checkpoint")
local Module = require("tide.nn.Module")
local idiv = require("tide._compat").idiv

local WHO = "checkpoint_sequential"

-- the layers, in order: a Sequential's children or a list
local function layers_of(functions)
    if Module.is_module(functions) then
        if type(rawget(functions, "n")) ~= "number" then
            raise(("tide: %s: expected an nn.Sequential or a list of functions, got a %s")
                :format(WHO, functions.__name or "module"))
        end
        local list = {}
        for i = 1, functions.n do
            list[i] = functions[i]
        end
        return list
    end
    if type(functions) ~= "table" or #functions == 0 then
        raise(("tide: %s: expected an nn.Sequential or a non-empty list of functions, got %s")
            :format(WHO, type(functions) == "table" and "an empty table" or type(functions)))
    end
    for i, f in ipairs(functions) do
        if type(f) ~= "function" and not (getmetatable(f) or {}).__call then
            raise(("tide: %s: function %d is a %s, expected a function or a module")
                :format(WHO, i, type(f)))
        end
    end
    return functions
end

-- layers first..last applied in turn
local function run(list, first, last)
    return function(x)
        for j = first, last do
            x = list[j](x)
        end
        return x
    end
end

return function(functions, segments, input, opts)
    local list = layers_of(functions)
    if type(segments) ~= "number" or segments ~= math.floor(segments) or segments < 1 or
        segments > #list then
        raise(("tide: %s: segments = %s; expected an integer in 1..%d (the number of layers)")
            :format(WHO, tostring(segments), #list))
    end
    local o = args.options(WHO, opts, { "preserve_rng_state", "use_reentrant" })
    local ck = { preserve_rng_state = o.preserve_rng_state ~= false }
    local size = idiv(#list, segments)
    local last = 0
    for start = 1, size * (segments - 1), size do
        last = start + size - 1
        input = checkpoint(run(list, start, last), input, ck)
    end
    return run(list, last + 1, #list)(input)
end
