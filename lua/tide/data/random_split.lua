--- tide.data.random_split(ds, lengths[, generator][, {seed =, generator =}]): ds split into
-- disjoint random Subsets.
--
--     local train, val = table.unpack(tide.data.random_split(ds, {0.9, 0.1}, {seed = 42}))
--     random_split(ds, {0.9, 0.1}, tide.Generator():manual_seed(42))  -- PyTorch's order
--
-- lengths are counts that sum to #ds, or fractions that sum to 1 (PyTorch 1.13's rule: each
-- split gets floor(#ds * fraction) samples, and the remainder is dealt one by one to the
-- splits in order). The permutation comes from seed, or from generator (PyTorch's option: a
-- tide.Generator, drawn from and advanced, or an integer seed or a tide.get_rng_state() state,
-- as the samplers take), else from tide's generator (so tide.manual_seed fixes it). Returns a
-- list of Subsets.
local compat = require("tide._compat")
local core = require("tide.core")
local raise = require("tide.autograd").raise
local Subset = require("tide.data.Subset")
local stream = require("tide.data.generator")
local pytorch_args = require("tide.pytorch_args")

local function isclose(a, b)
    return math.abs(a - b) <= 1e-9 * math.max(math.abs(a), math.abs(b))
end

-- the options of random_split(ds, lengths, [generator,] [opts]): PyTorch's random_split(dataset,
-- lengths, generator) passes the generator by position (argument #3)
local function options(...)
    local n = select("#", ...)
    while n > 0 and select(n, ...) == nil do
        n = n - 1
    end
    local generator, opts = ...
    if n > 2 then
        raise(string.format("tide: random_split: got %d arguments after lengths; it takes at " ..
            "most 2 (generator, then an options table)", n))
    end
    if n == 1 and pytorch_args.is_options(generator) then
        return generator
    end
    if n == 2 and not pytorch_args.is_options(opts) then
        raise("tide: random_split: options must be a table such as {seed = 42}, got " ..
            (require("tide.autograd").is_tensor(opts) and "a tensor" or type(opts)))
    end
    if generator == nil then
        return opts
    end
    if pytorch_args.is_options(generator) then
        raise("tide: random_split: the options table must come last; got it in the place " ..
            "of generator")
    end
    local merged = {}
    for k, v in pairs(opts or {}) do
        merged[k] = v
    end
    if merged.generator ~= nil then
        pytorch_args.twice("random_split", "generator", 3)
    end
    merged.generator = generator
    return merged
end

return function(ds, lengths, ...)
    local opts
    local by_name = require("tide.data._by_name")
    if lengths == nil and select("#", ...) == 0 then
        -- random_split({dataset = ds, lengths = {0.9, 0.1}, generator = g}): all by name
        ds, opts = by_name.first("random_split", { "dataset", "lengths", "generator", "seed" }, ds)
        lengths = opts and opts.lengths
        if opts then
            opts.lengths = nil
        end
    elseif pytorch_args.is_options(lengths) and lengths.lengths ~= nil then
        -- random_split(ds, {lengths = {0.9, 0.1}, generator = g}): the rest by name
        if select("#", ...) > 0 then
            raise("tide: random_split: got arguments after the options table; it comes last")
        end
        core._check_options(lengths, "random_split", { "lengths", "generator", "seed" })
        opts, lengths = { generator = lengths.generator, seed = lengths.seed }, lengths.lengths
    else
        opts = options(...)
    end
    ds = require("tide.data._list").dataset(ds) -- a plain Lua list, as PyTorch takes a list
    if type(ds) ~= "table" or type(ds.len) ~= "function" then
        raise("tide: random_split: expected a dataset (tide.data.Dataset, TensorDataset or a " ..
            "plain Lua list of samples), got " .. type(ds))
    end
    if type(lengths) ~= "table" or #lengths == 0 then
        raise("tide: random_split: expected lengths as a list of counts or fractions, got " ..
            type(lengths))
    end
    core._check_options(opts, "random_split", { "seed", "generator" })
    opts = opts or {}
    if opts.seed ~= nil and not compat.is_integer(opts.seed) then
        raise("tide: random_split: seed = " .. tostring(opts.seed) .. "; expected an integer")
    end
    if opts.seed ~= nil and opts.generator ~= nil then
        raise("tide: random_split: seed and generator exclude each other; pass one of them")
    end
    -- the stream of generator, checked before anything is drawn
    local source = { generator = stream.own(opts.generator, "random_split") }
    local n = ds:len()
    local sum = 0
    for i, l in ipairs(lengths) do
        if type(l) ~= "number" or l < 0 then
            raise(string.format("tide: random_split: length %d is %s; expected a count or a " ..
                "fraction >= 0", i, tostring(l)))
        end
        sum = sum + l
    end
    local counts = {}
    if isclose(sum, 1) and sum <= 1 then
        for i, frac in ipairs(lengths) do
            if frac > 1 then
                raise(string.format("tide: random_split: fraction %d (%s) is not between 0 and 1",
                    i, tostring(frac)))
            end
            counts[i] = math.floor(n * frac)
        end
        local given = 0
        for _, c in ipairs(counts) do
            given = given + c
        end
        for i = 0, n - given - 1 do
            local k = i % #counts + 1
            counts[k] = counts[k] + 1
        end
    else
        for i, l in ipairs(lengths) do
            if not compat.is_integer(l) then
                raise(string.format("tide: random_split: length %d is %s; give integer counts " ..
                    "summing to %d or fractions summing to 1", i, tostring(l), n))
            end
            counts[i] = l
        end
    end
    local total = 0
    for _, c in ipairs(counts) do
        total = total + c
    end
    if total ~= n then
        raise(string.format("tide: random_split: the lengths sum to %s but the dataset has %d " ..
            "samples; give counts summing to %d or fractions summing to 1", tostring(sum), n, n))
    end
    local perm
    if opts.seed ~= nil then
        perm = core._randperm(n, opts.seed)
    else
        perm = stream.draw(source, function() return core.randperm(n) end, "random_split")
    end
    perm = perm:totable()
    local out, start = {}, 1
    for k, c in ipairs(counts) do
        out[k] = Subset(ds, compat.move(perm, start, start + c - 1, 1, {}))
        start = start + c
    end
    return out
end
