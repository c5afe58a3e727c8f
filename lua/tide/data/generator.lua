-- tide.data.generator: a sampler's own random stream, PyTorch's `generator` option. own(gen,
-- who) takes an integer seed or a state from tide.get_rng_state() and returns the stream's
-- state, or a tide.Generator and returns it (shared: every sampler given it draws from it, so
-- their draws interleave, as PyTorch's), or nil for none: draws then come from tide's
-- generator, so tide.manual_seed fixes them. draw(sampler, fn, who) runs fn() on the sampler's
-- stream when it has one, leaving tide's generator as it was, and keeps the stream's new state
-- in sampler.generator (or in the Generator).
local compat = require("tide._compat")
local autograd = require("tide.autograd")
local raise = autograd.raise
local generators = require("tide.generator_object")

local M = {}

local function tide()
    return require("tide")
end

function M.own(gen, who)
    if gen == nil then
        return nil
    elseif generators.is_generator(gen) then
        generators.check_device(who, gen, "cpu") -- the samplers draw on the CPU
        return gen
    end
    local t = tide()
    local saved = t.get_rng_state()
    if compat.is_integer(gen) then
        t.manual_seed(gen)
        local state = t.get_rng_state()
        t.set_rng_state(saved)
        return state
    elseif autograd.is_tensor(gen) and gen.dtype == "uint8" and gen:dim() == 1 then
        local state = gen:clone()
        local ok, err = pcall(t.set_rng_state, state)
        t.set_rng_state(saved)
        if not ok then
            local msg = (tostring(err):match("tide:.*") or tostring(err)):gsub(
                "^tide: set_rng_state:", "tide: " .. who .. ": generator:", 1)
            raise(msg)
        end
        return state
    end
    raise(string.format("tide: %s: generator must be an integer seed or a state from " ..
        "tide.get_rng_state() or a tide.Generator, got %s", who,
        autograd.is_tensor(gen) and ("a " .. gen.dtype .. " tensor") or type(gen)))
end

function M.draw(sampler, fn, who)
    if not sampler.generator then
        return fn()
    elseif generators.is_generator(sampler.generator) then
        local mt = getmetatable(sampler)
        return generators.run(who or mt and mt.__name or "sampler", sampler.generator, "cpu", fn)
    end
    local t = tide()
    local saved = t.get_rng_state()
    t.set_rng_state(sampler.generator)
    local ok, r = pcall(fn)
    sampler.generator = t.get_rng_state()
    t.set_rng_state(saved)
    if not ok then
        error(r, 0)
    end
    return r
end

-- a 1-based int64 tensor as a Lua list of integers
function M.list(t)
    local r = t:totable()
    for i = 1, #r do
        r[i] = compat.tointeger(r[i])
    end
    return r
end

-- an iterator over a sampler's indices() of one epoch
function M.iter(sampler)
    local list, k = sampler:indices(), 0
    return function()
        k = k + 1
        return list[k]
    end
end

return M
