-- tide.tensor_keywords: PyTorch's keyword arguments on Tensor methods and tide.X functions. A
-- ported x.sum(dim=0, keepdim=True) is x:sum({dim = 1, keepdim = true}), torch.cat(xs, dim=1)
-- is tide.cat(xs, {dim = 2}), x.topk(3, dim=0) is x:topk(3, {dim = 1}) (dims stay 1-based).
--
-- A signature lists the parameters after the call's first argument (self, or tide.cat's list)
-- in PyTorch's order, each taken by tide's function at that position. A call whose last
-- argument is an options table (tide.pytorch_args.is_options) has each of its names put in its
-- place; the names in `options` are what tide's function itself reads from an options table
-- after the parameters (cumsum's dtype), and stay in one. Any other name raises, listing the
-- names there are; a parameter given by position and by name raises too. A call whose last
-- argument is not such a table goes straight through the trampoline (lua/keywords.c).
--
-- A signature's `aliases` are PyTorch's other names of a parameter (alias -> the parameter:
-- NumPy's axis for dim, scatter's value for src); two names of one place given raise.
-- A signature's `call(f, first, p1, ..., pn[, options])`, when tide's positional form is not
-- PyTorch's, calls f in tide's form with the parameters in PyTorch's places. Its `first`, the
-- first argument's name, lets a call give every parameter in one table (tide.arange({start =
-- 0, ["end"] = 10})). A signature's `nmax`, with `call`, is the most arguments tide's function
-- takes by position (self counted): a call with more is PyTorch's positional form of what tide
-- reads by name (x:copy_(s, true), x:unique(true, true)) and goes to `call` too.
--
-- A signature's `needs` maps a parameter to the one PyTorch's parser requires beside it when it
-- comes by name (random_'s from needs to: no overload takes from alone); alone it raises with
-- `needs_fix` ({v} its value) rather than being read as another overload's argument.
--
-- A tide.X function whose torch.X takes out= takes it too (out.lua: tide.add(x, y, {out = z})),
-- with a signature or without one; a Tensor method does not, as PyTorch's.
--
-- The signatures live in this directory's group files, one per family of ops. init.lua
-- installs them over the methods and functions the eager modules define, and over the lazy
-- modules' (tide._lazy_ops) when each loads.
local core = require("tide.core")
local compat = require("tide._compat")
local pytorch_args = require("tide.pytorch_args")

local out = require("tide.tensor_keywords.out")

local is_options, twice = pytorch_args.is_options, pytorch_args.twice
local raise = require("tide.autograd.raise")
local unpack = compat.unpack

local GROUPS = {
    "tide.tensor_keywords.reductions",
    "tide.tensor_keywords.shapes",
    "tide.tensor_keywords.creation",
    "tide.tensor_keywords.arithmetic",
    "tide.tensor_keywords.tensor_methods",
}

-- name -> { params, options, aliases, first, call, methods = false?, functions = false? }, and
-- known: every name the op takes (for the unknown-name error)
local SIGNATURES = {}
for _, group in ipairs(GROUPS) do
    for name, sig in pairs(require(group)) do
        assert(SIGNATURES[name] == nil, name .. " has two keyword signatures")
        assert(sig.nmax == nil or sig.call, name .. ": a signature's nmax needs its call")
        sig.known = {}
        for _, k in ipairs(sig.params) do
            sig.known[#sig.known + 1] = k
        end
        for _, k in ipairs(sig.options or {}) do
            sig.known[#sig.known + 1] = k
        end
        local aliases = {}
        for alias in pairs(sig.aliases or {}) do
            aliases[#aliases + 1] = alias
        end
        table.sort(aliases)
        for _, k in ipairs(aliases) do
            sig.known[#sig.known + 1] = k
        end
        if sig.first then -- the first argument's name, for a call of one table by name
            sig.known_first = { sig.first }
            for _, k in ipairs(sig.known) do
                sig.known_first[#sig.known_first + 1] = k
            end
        end
        -- for the call: a parameter's or an alias's place, and the options' names
        sig.place, sig.option = {}, {}
        for i, k in ipairs(sig.params) do
            sig.place[k] = i
        end
        for alias, k in pairs(sig.aliases or {}) do
            sig.place[alias] = sig.place[k]
        end
        for _, k in ipairs(sig.options or {}) do
            sig.option[k] = true
        end
        SIGNATURES[name] = sig
    end
end

local M = { signatures = SIGNATURES }
local NO_ALIASES = {}

-- a call with no keyword table: tide's own (one ending in a table too: tide.unique(x, {})), or
-- (more arguments than tide's function takes by position, sig.nmax) PyTorch's positional form,
-- which the adapter puts in tide's
local function positional(sig, f, n, v, ...)
    if sig.nmax and n > sig.nmax and n <= #sig.params + 1 and type(v[n]) ~= "table" then
        return sig.call(f, unpack(v, 1, #sig.params + 1))
    end
    return f(...)
end

-- raises when a parameter came by name without the one PyTorch requires beside it (sig.needs)
local function check_needs(who, sig, named, v)
    for i, k in pairs(named) do
        local partner = sig.needs[k]
        if partner and v[sig.place[partner] + 1] == nil then
            local fix = sig.needs_fix:gsub("{v}", tostring(v[i + 1]))
            raise(("tide: %s: %s given by name needs %s too, as PyTorch's %s(%s); %s"):format(who,
                k, partner, who, table.concat(sig.params, ", "), fix))
        end
    end
end

-- the call f(first, ...) whose last argument may be an options table of parameter names
local function keyword_call(who, sig, f, ...)
    local n = select("#", ...)
    local v = { ... }
    while n > 1 and v[n] == nil do
        n = n - 1
    end
    local params = sig.params
    local kw = v[n]
    -- every parameter by name, the first too (tide.randint({low = 0, high = 10, size = {3}})):
    -- the first comes out of the table, the rest as below
    if n == 1 and sig.first and is_options(kw) and next(kw) ~= nil then
        core._check_options(kw, who, sig.known_first)
        local rest = {}
        for k, val in pairs(kw) do
            rest[k] = val
        end
        local first = rest[sig.first]
        rest[sig.first] = nil
        if next(rest) == nil then
            return keyword_call(who, sig, f, first)
        end
        return keyword_call(who, sig, f, first, rest)
    end
    -- an empty table where the options of an op with no value of its own for one go
    -- (sig.empty_options: div(x, y, {}), what {rounding_mode = nil} is): no options
    if sig.empty_options and n == #params + 2 and type(kw) == "table" and next(kw) == nil and
        is_options(kw) then
        return keyword_call(who, sig, f, unpack(v, 1, n - 1))
    end
    -- not a keyword call, or more positionals than PyTorch's parameters: tide's function
    -- answers (a list of dims, a value of its own, its extra-argument error); an empty table
    -- is a value too (x:flip({}) flips no dim), and so is an object of a class (a Generator);
    -- a table with other keys than names raises as options
    if n < 2 or n > #params + 2 or type(kw) ~= "table" or next(kw) == nil or kw[1] ~= nil then
        return positional(sig, f, n, v, ...)
    end
    local mt = getmetatable(kw)
    if mt ~= nil and (type(mt) ~= "table" or rawget(mt, "__name") ~= nil) then
        return positional(sig, f, n, v, ...)
    end
    v[n] = nil
    local place, option, aliases = sig.place, sig.option, sig.aliases or NO_ALIASES
    local rest, named
    for k, val in pairs(kw) do
        local i = place[k]
        if i then
            if v[i + 1] ~= nil then
                if (named == nil or named[i] == nil) and aliases[k] == nil then
                    twice(who, k, i + 1)
                end
                -- two names of one parameter: the other name's, or the alias's, is reported
                local other = named and named[i] or params[i]
                if aliases[k] == nil or (aliases[other] ~= nil and other > k) then
                    k, other = other, k
                end
                raise(("tide: %s: %s given twice, as %s (argument #%d) and by name; pass it " ..
                    "once"):format(who, k, other, i + 1))
            end
            v[i + 1] = val
            named = named or {}
            named[i] = k
        elseif option[k] then
            rest = rest or {}
            rest[k] = val
        else -- a name the op does not take: the error, with the closest name
            core._check_options(kw, who, sig.known)
        end
    end
    if sig.needs and named then
        check_needs(who, sig, named, v)
    end
    local last = #params + 1
    if rest then
        last = last + 1
        v[last] = rest
    end
    if sig.call then -- tide's own form differs from PyTorch's order: the group's adapter
        return sig.call(f, unpack(v, 1, last))
    end
    return f(unpack(v, 1, last))
end

--- call(name, f, ...): the trampoline's slow path (core._keywords, lua/keywords.c): f called
--- with the keyword table of its last argument put in place
function M.call(name, f, ...)
    return keyword_call(name, SIGNATURES[name], f, ...)
end

--- call_function(name, f, ...): the slow path of a tide.X function's trampoline: out= taken
--- out of the keyword table (out.lua), the rest as for a method (a function with no signature
--- has a trampoline only for out=, and any other call is its own)
function M.call_function(name, f, ...)
    local sig = SIGNATURES[name]
    local n = select("#", ...)
    local v = { ... }
    while n > 1 and v[n] == nil do
        n = n - 1
    end
    local kw = v[n]
    if out.names[name] and is_options(kw) and kw.out ~= nil then
        local rest
        for k, val in pairs(kw) do
            if k ~= "out" then
                rest = rest or {}
                rest[k] = val
            end
        end
        rest = out.before(name, kw.out, v, n - 1, rest)
        v[n] = rest
        if rest == nil then
            n = n - 1
        end
        if sig == nil then
            return out.write(name, kw.out, f(unpack(v, 1, n)))
        end
        return out.write(name, kw.out, keyword_call(name, sig, f, unpack(v, 1, n)))
    end
    if sig == nil then
        return f(...)
    end
    return keyword_call(name, sig, f, ...)
end

-- the trampolines made: trampoline -> { name, the function behind it, its slow path }, so an
-- alias set to another op's trampoline (true_divide = div) gets one of its own name
local made = setmetatable({}, { __mode = "k" })
local fronted = setmetatable({}, { __mode = "k" }) -- Lua function -> { kernel, nmax }

--- front(fn, kernel, nmax) -> fn: fn does what the core's kernel does and more (a list of
--- dims, a dtype), and a call with no table among its arguments and at most nmax of them (self
--- counted) is the kernel's own; its trampoline then runs the kernel directly for those calls
--- and fn for the rest (lua/keywords.c), so the common call costs what the kernel costs
function M.front(fn, kernel, nmax)
    fronted[fn] = { kernel, nmax }
    return fn
end

local function install_one(t, name, sig, call)
    local f = rawget(t, name)
    if type(f) ~= "function" then
        return
    end
    local m = made[f]
    if m then
        -- already this name's, as a method or a function: a lazy module's tide.X is often its
        -- method's trampoline, and a function's slow path (out=) is not a method's
        if m[1] == name and m[3] == call then
            return
        end
        f = m[2]
    end
    local front = fronted[f]
    -- a tide.X function of an elementwise row writes out= straight into out where it can
    -- (core._out_into, lua/op_families.c)
    local into = call == M.call_function and core._out_into[f] or nil
    local w = front and core._keywords(call, front[1], name, f, front[2], nil, into)
        or core._keywords(call, f, name, nil, sig and sig.nmax, sig == nil, into)
    made[w] = { name, f, call }
    rawset(t, name, w)
end

--- install(tide[, names]): wraps the Tensor methods and tide.X functions that have a signature
--- (only those in the list names, when given: a lazy module's, once loaded)
function M.install(tide, names)
    local Tensor = core.Tensor
    local function one(name)
        local sig = SIGNATURES[name]
        if sig and sig.methods ~= false then
            install_one(Tensor, name, sig, M.call)
        end
        if (sig and sig.functions ~= false) or out.names[name] then
            install_one(tide, name, sig, M.call_function)
        end
    end
    if names then
        for _, name in ipairs(names) do
            one(name)
        end
    else
        for name in pairs(SIGNATURES) do
            one(name)
        end
        for name in pairs(out.names) do
            if SIGNATURES[name] == nil then
                one(name)
            end
        end
    end
end

return M
