--- tide.data.DataLoader(ds, opts): batches of a dataset.
--
--     local loader = tide.data.DataLoader(train, {batch_size = 128, shuffle = true, seed = 1})
--     for x, y in loader:iter() do ... end      -- one epoch; #loader batches
--
-- opts: batch_size (1; false is PyTorch's None: no batching, each sample's fields through
-- default_convert, or collate_fn of the sample), shuffle (false), drop_last (false: the last
-- batch may be smaller),
-- seed (shuffle order; each iter() call draws the next epoch's order from it, so a given seed
-- gives the same sequence of epochs; default: drawn from tide's generator, so tide.manual_seed
-- fixes it), generator (PyTorch's, instead of seed: each shuffled epoch's order is drawn from
-- it; a tide.Generator, advanced by each epoch and shared with whatever else draws from it,
-- or an integer seed or a tide.get_rng_state() state, the loader's own stream), pin_memory
-- (false: when true and CUDA is available, batches come in page-locked memory so
-- `x:to("cuda", {non_blocking = true})` overlaps; without CUDA it does nothing), sampler (the
-- sample indices of each epoch instead of 1..#ds or a shuffle: a list of 1-based indices, or
-- an object with `len()` and either `indices()` returning this epoch's list, as
-- DistributedSampler has, or `iter()` returning an iterator of indices; not with shuffle),
-- batch_sampler (the batches themselves: an object with len()
-- and batches() or iter() giving lists of indices, tide.data.BatchSampler; not with
-- batch_size, shuffle, sampler or drop_last), collate_fn (a function of the list of samples,
-- each packed as `ds[i]` packs it, returning the batch's values; see
-- tide.data.default_collate).
--
-- A dataset with a `batch(index)` method (TensorDataset) gives each batch in one call per
-- field, gathered in C; any other dataset (or any with a collate_fn) is read with `get(i)` per
-- sample and collated: tensors stacked, numbers and booleans made tensors, tables of them
-- collated key by key (default_collate).
--
-- Over a tide.data.IterableDataset each epoch calls the dataset's iter() again and reads its
-- stream: batch_size samples per batch, collated as above (the last batch smaller, or dropped
-- with drop_last); shuffle, sampler and batch_sampler do not apply and raise. `#loader` is
-- then the dataset's len() over batch_size (ceil, floor with drop_last) and raises when the
-- dataset has no len().
--
-- PyTorch's positional order works too: DataLoader(ds, 64, true) is {batch_size = 64, shuffle =
-- true} (then sampler, batch_sampler, num_workers, collate_fn, pin_memory, drop_last, timeout,
-- worker_init_fn, multiprocessing_context, generator; an options table last). A sampler or
-- batch sampler with iter() is read lazily, one batch at a time (an "infinite"
-- RandomSampler(ds, {replacement = true, num_samples = 1e10}) costs nothing up front).
--
-- There are no worker processes: every batch is loaded in the calling thread. PyTorch's
-- multi-process options are accepted and checked as PyTorch 1.13 checks them (num_workers >= 0,
-- timeout >= 0, persistent_workers, prefetch_factor other than 2 and multiprocessing_context
-- ("fork", "spawn" or "forkserver") only with num_workers > 0, worker_init_fn a function,
-- pin_memory_device a string), and change nothing: with num_workers > 0 the batches and their
-- order are those of num_workers = 0 (for a map-style dataset, PyTorch's for any num_workers).
-- worker_init_fn is never called and tide.data.get_worker_info() stays nil, as no worker
-- exists: an IterableDataset written for PyTorch's workers takes its single-process branch and
-- gives its stream once (PyTorch's workers would each give their share, batches interleaved).
local compat = require("tide._compat")
local class = require("tide._class")

local core = require("tide.core")
local raise = require("tide.autograd").raise
local args = require("tide.op_args")
local default_collate = require("tide.data.collate")
local stream = require("tide.data.generator")
local merge_positional = require("tide.pytorch_args").merge

local DataLoader = { __name = "DataLoader" }

-- PyTorch's `for batch in loader` has no Lua form on the loader itself: `ipairs(loader)` (which
-- reads loader[1], loader[2], ... on Lua 5.3/5.4) and `loader[i]` would silently give nothing,
-- and `for batch in loader do` calls the loader. Both raise, naming `loader:iter()`.
local ITER_FIX = "iterate a DataLoader with `for x, y in loader:iter() do` (PyTorch's "
    .. "`for x, y in loader`; `for i, batch in enumerate(loader)` is a counter around it)"
local DEFAULTS -- PyTorch's loader.sampler and loader.batch_sampler when none was given
DataLoader.__index = function(self, k)
    if type(k) == "number" then
        error(string.format("tide: DataLoader: loader[%s]: a DataLoader is not a list and has "
            .. "no index; %s", tostring(k), ITER_FIX), 2)
    elseif DEFAULTS[k] then
        return DEFAULTS[k](self)
    end
    return DataLoader[k]
end
DataLoader.__call = function()
    error("tide: DataLoader: a DataLoader is not a function or an iterator (`for b in loader do`); "
        .. ITER_FIX, 2)
end

-- PyTorch's parameters after the dataset, in its order (all may be positional)
local POSITIONAL = { "batch_size", "shuffle", "sampler", "batch_sampler", "num_workers",
    "collate_fn", "pin_memory", "drop_last", "timeout", "worker_init_fn",
    "multiprocessing_context", "generator" }

local CONTEXTS = { fork = true, spawn = true, forkserver = true }

-- PyTorch's multi-process options: checked as PyTorch 1.13 checks them, then unused (tide
-- loads every batch in the calling thread)
local function check_worker_options(opts)
    local workers = args.int_option("DataLoader", opts, "num_workers", 0, 0)
    local timeout = opts.timeout
    if timeout ~= nil and (type(timeout) ~= "number" or not (timeout >= 0)) then
        raise("tide: DataLoader: timeout = " .. tostring(timeout) .. "; expected a number " ..
            ">= 0 (seconds)")
    end
    if opts.worker_init_fn ~= nil and type(opts.worker_init_fn) ~= "function" then
        raise("tide: DataLoader: worker_init_fn must be a function of the worker id, got " ..
            type(opts.worker_init_fn))
    end
    local pw = opts.persistent_workers
    if pw ~= nil and type(pw) ~= "boolean" then
        raise("tide: DataLoader: persistent_workers must be a boolean, got " .. type(pw))
    end
    local prefetch = args.int_option("DataLoader", opts, "prefetch_factor", 2, 1)
    local context = opts.multiprocessing_context
    if context ~= nil and not CONTEXTS[context] then
        raise("tide: DataLoader: multiprocessing_context = " .. tostring(context) ..
            '; expected "fork", "spawn" or "forkserver"')
    end
    local device = opts.pin_memory_device
    if device ~= nil and type(device) ~= "string" then
        raise("tide: DataLoader: pin_memory_device must be a string, got " .. type(device))
    end
    if workers == 0 then
        if pw then
            raise("tide: DataLoader: persistent_workers = true needs num_workers > 0 (as " ..
                "PyTorch's)")
        elseif prefetch ~= 2 then
            raise("tide: DataLoader: prefetch_factor applies with num_workers > 0 only (as " ..
                "PyTorch's); leave it out")
        elseif context ~= nil then
            raise("tide: DataLoader: multiprocessing_context applies with num_workers > 0 " ..
                "only (as PyTorch's); leave it out")
        end
    end
    return workers, prefetch
end

-- PyTorch's DataLoader(dataset=ds, batch_size=..., ...): every argument by name, the dataset
-- too, is one table holding `dataset` (a plain table: not a dataset, not a list of samples)
local function dataset_by_name(ds, n)
    if n ~= 0 or type(ds) ~= "table" or getmetatable(ds) ~= nil or ds[1] ~= nil or
        ds.dataset == nil then
        return nil
    end
    local opts = {}
    for k, v in pairs(ds) do
        if k ~= "dataset" then
            opts[k] = v
        end
    end
    return ds.dataset, opts
end

function DataLoader.new(ds, ...)
    local named_ds, named_opts = dataset_by_name(ds, select("#", ...))
    if named_ds ~= nil then
        return DataLoader.new(named_ds, named_opts)
    end
    local opts = merge_positional("DataLoader", POSITIONAL, ...) or {}
    ds = require("tide.data._list").dataset(ds) -- a plain Lua list, as PyTorch takes a list
    local iterable = type(ds) == "table" and ds._iterable == true
    if not iterable and (type(ds) ~= "table" or type(ds.len) ~= "function") then
        raise("tide: DataLoader: expected a dataset (tide.data.Dataset, TensorDataset, " ..
            "IterableDataset or a plain Lua list of samples), got " .. type(ds))
    end
    if type(opts) ~= "table" then
        raise("tide: DataLoader: options must be a table, e.g. {batch_size = 64}")
    end
    core._check_options(opts, "DataLoader", { "batch_size", "shuffle", "drop_last", "seed",
        "pin_memory", "collate_fn", "sampler", "batch_sampler", "generator", "num_workers",
        "timeout", "worker_init_fn", "multiprocessing_context", "prefetch_factor",
        "persistent_workers", "pin_memory_device" })
    local num_workers, prefetch_factor = check_worker_options(opts)
    if iterable then
        -- a stream has no indices: what orders or picks them has nothing to act on
        local name = tostring(ds.__name)
        if opts.shuffle then
            raise(string.format("tide: DataLoader: shuffle = %s does not apply to an " ..
                "IterableDataset (%s gives its samples in its own order); leave shuffle out, " ..
                "or shuffle inside %s:iter()", tostring(opts.shuffle), name, name))
        end
        if opts.sampler ~= nil then
            raise(string.format("tide: DataLoader: sampler does not apply to an " ..
                "IterableDataset (%s has no indices to sample); leave sampler out, and choose " ..
                "the samples inside %s:iter()", name, name))
        end
        if opts.batch_sampler ~= nil then
            raise(string.format("tide: DataLoader: batch_sampler does not apply to an " ..
                "IterableDataset (%s has no indices to batch); leave batch_sampler out, and " ..
                "batch with batch_size and drop_last", name))
        end
    end
    local batch_sampler = opts.batch_sampler
    if batch_sampler ~= nil then
        -- PyTorch's: batch_size = 1 (its default), shuffle = false, drop_last = false pass
        if (opts.batch_size ~= nil and opts.batch_size ~= 1) or opts.shuffle or
            opts.sampler ~= nil or opts.drop_last then
            raise("tide: DataLoader: batch_sampler excludes batch_size, shuffle, sampler and " ..
                "drop_last (the batch sampler makes the batches; batch_size may be 1, the default)")
        end
        -- (or a plain list of batches, each a list of indices, as PyTorch takes a list)
        if type(batch_sampler) ~= "table" or (not require("tide.data._list").is_list(
            batch_sampler) and (type(batch_sampler.len) ~= "function" or
            (type(batch_sampler.batches) ~= "function" and
                type(batch_sampler.iter) ~= "function"))) then
            raise("tide: DataLoader: batch_sampler must have len() and batches() or iter() " ..
                "(tide.data.BatchSampler) or be a list of batches, got " .. type(batch_sampler))
        end
    end
    local self = setmetatable({}, DataLoader)
    self.dataset = ds
    self.iterable = iterable
    if opts.batch_size == false then
        -- PyTorch's batch_size=None: no batching, each sample given as converted by collate_fn
        -- (default_convert when none is given)
        if opts.drop_last then
            raise("tide: DataLoader: batch_size = false (PyTorch's batch_size=None) disables " ..
                "auto-batching and is mutually exclusive with drop_last")
        end
        self._unbatched = true
    else
        self.batch_size = args.int_option("DataLoader", opts, "batch_size", 1, 1)
    end
    self.shuffle = opts.shuffle and true or false
    self.drop_last = opts.drop_last and true or false
    self.seed = args.int_option("DataLoader", opts, "seed", nil, compat.mininteger)
    if self.seed ~= nil and opts.generator ~= nil then
        raise("tide: DataLoader: seed and generator exclude each other; pass one of them " ..
            "(seed fixes every epoch's order, generator draws each from its stream)")
    end
    -- the shuffling's stream when given (PyTorch's loader also seeds its workers from it;
    -- tide's has none)
    self.generator = stream.own(opts.generator, "DataLoader")
    if self.seed == nil and self.generator == nil then
        -- drawn from tide's generator, so tide.manual_seed(n) makes the shuffling reproducible
        -- (as torch.manual_seed does for PyTorch's DataLoader)
        local u = core.rand({ 1 }, { device = "cpu", dtype = "float64" }):item()
        self.seed = math.floor(u * compat.lshift(1, 31))
    end
    self.pin_memory = opts.pin_memory and core.cuda.is_available() or false
    if opts.collate_fn ~= nil and type(opts.collate_fn) ~= "function" then
        raise("tide: DataLoader: collate_fn must be a function of the list of samples, got " ..
            type(opts.collate_fn))
    end
    -- PyTorch's loader.collate_fn is default_collate when none is given (iter() reads it then)
    self.collate_fn = opts.collate_fn or
        (self._unbatched and require("tide.data.default_convert") or default_collate)
    local sampler = opts.sampler
    if sampler ~= nil then
        if self.shuffle then
            raise("tide: DataLoader: sampler and shuffle = true exclude each other; shuffle " ..
                "in the sampler")
        end
        if type(sampler) ~= "table" or (type(sampler.len) == "function" and not
                (type(sampler.indices) == "function" or type(sampler.iter) == "function")) then
            raise("tide: DataLoader: sampler must be a list of sample indices or an object " ..
                "with len() and indices() or iter(), got " .. type(sampler))
        end
    end
    if self.shuffle and not iterable and ds:len() == 0 then
        -- PyTorch 1.13's DataLoader(shuffle=True) builds a RandomSampler, which refuses an empty
        -- dataset ("num_samples should be a positive integer value, but got num_samples=0")
        raise("tide: DataLoader: shuffle = true needs samples to draw, but the dataset's len() " ..
            "is 0; give the dataset samples or leave shuffle out")
    end
    self.sampler = sampler
    self.batch_sampler = batch_sampler
    self.num_workers = num_workers -- (kept for PyTorch's loader.num_workers; no workers run)
    -- PyTorch's attributes of the other worker options, as given or its defaults (unused)
    self.timeout = opts.timeout or 0
    self.worker_init_fn = opts.worker_init_fn
    self.multiprocessing_context = opts.multiprocessing_context
    self.prefetch_factor = prefetch_factor
    self.persistent_workers = opts.persistent_workers or false
    self.pin_memory_device = opts.pin_memory_device or ""
    if batch_sampler ~= nil then
        self.batch_size = nil -- PyTorch's: the batch sampler makes the batches
    end
    self.epoch = 0
    return self
end

class.callable(DataLoader)

--- number of batches per epoch
function DataLoader:len()
    local bsampler = rawget(self, "batch_sampler")
    if bsampler then
        return type(bsampler.len) == "function" and bsampler:len() or #bsampler
    end
    if self.iterable then
        local lenless = self.dataset:_lenless()
        if lenless then
            raise(string.format("tide: DataLoader: len() needs the dataset's length, and %s " ..
                "has no len() (an IterableDataset's is optional); define len() in it, or " ..
                "count the batches as you iterate", lenless))
        end
    end
    local n, bs = self:_samples(), self.batch_size or 1
    local full = compat.idiv(n, bs)
    -- ceil(n / bs) without n + bs - 1, which overflows for a batch_size near math.maxinteger
    if self.drop_last or n - full * bs == 0 then
        return full
    end
    return full + 1
end
DataLoader.__len = DataLoader.len

-- the number of samples an epoch reads
function DataLoader:_samples()
    local s = rawget(self, "sampler")
    if s == nil then
        return self.dataset:len()
    elseif type(s.len) ~= "function" then -- a list
        return #s
    end
    return s:len()
end

-- this epoch's sample indices from the sampler, as a 1-based int64 tensor (checked)
function DataLoader:_sampled()
    local s, list = rawget(self, "sampler"), nil
    if type(s.len) ~= "function" then -- a list
        list = s
    elseif type(s.indices) == "function" then
        list = s:indices()
    else
        list = {}
        for i in s:iter() do
            list[#list + 1] = i
        end
    end
    if #list ~= self:_samples() then
        raise(string.format("tide: DataLoader: the sampler gave %d indices but its len() is %d",
            #list, self:_samples()))
    end
    return self:_checked(list)
end

-- this epoch's batches from the batch sampler: the indices of all, as a 1-based int64 tensor
-- (checked), and each batch's length
function DataLoader:_batched()
    local s, batches = rawget(self, "batch_sampler"), nil
    if type(s.len) ~= "function" then -- a list of batches
        batches = s
    elseif type(s.batches) == "function" then
        batches = s:batches()
    else
        batches = {}
        for b in s:iter() do
            batches[#batches + 1] = b
        end
    end
    if #batches ~= self:len() then
        raise(string.format("tide: DataLoader: the batch sampler gave %d batches but its " ..
            "len() is %d", #batches, self:len()))
    end
    local list, lens = {}, {}
    for k, b in ipairs(batches) do
        if type(b) ~= "table" or #b == 0 then
            raise(string.format("tide: DataLoader: batch %d of the batch sampler is %s; a " ..
                "batch is a non-empty list of sample indices", k,
                type(b) == "table" and "empty" or ("a " .. type(b))))
        end
        lens[k] = #b
        for _, i in ipairs(b) do
            list[#list + 1] = i
        end
    end
    return self:_checked(list), lens
end

-- a lazy reader of this epoch's sample indices from the sampler's iter(): read(len) gives the
-- next len indices as a 1-based int64 tensor (checked), and read() at the epoch's end checks the
-- sampler has no more (the ones drop_last leaves are read first)
function DataLoader:_sampler_reader()
    local it, n = rawget(self, "sampler"):iter(), self:_samples()
    local given = 0
    local function take(len)
        local list = {}
        for k = 1, len do
            local i = it()
            if i == nil then
                raise(string.format("tide: DataLoader: the sampler gave %d indices but its " ..
                    "len() is %d", given, n))
            end
            given = given + 1
            list[k] = i
        end
        return list
    end
    return function(len)
        if len then
            local offset = given
            return self:_checked(take(len), offset)
        end
        self:_checked(take(n - given), given)
        if it() ~= nil then
            raise(string.format("tide: DataLoader: the sampler gave more indices than its " ..
                "len() (%d)", n))
        end
    end
end

-- the same for a batch sampler's iter(): read() gives the next batch's indices (checked) and
-- its length; read(true) at the epoch's end checks the batch sampler has no more
function DataLoader:_batch_reader()
    local s = rawget(self, "batch_sampler")
    local it, nb = s:iter(), s:len()
    local k, given = 0, 0
    return function(finish)
        if finish then
            if it() ~= nil then
                raise(string.format("tide: DataLoader: the batch sampler gave more batches " ..
                    "than its len() (%d)", nb))
            end
            return
        end
        local b = it()
        k = k + 1
        if b == nil then
            raise(string.format("tide: DataLoader: the batch sampler gave %d batches but its " ..
                "len() is %d", k - 1, nb))
        end
        if type(b) ~= "table" or #b == 0 then
            raise(string.format("tide: DataLoader: batch %d of the batch sampler is %s; a " ..
                "batch is a non-empty list of sample indices", k,
                type(b) == "table" and "empty" or ("a " .. type(b))))
        end
        local offset = given
        given = given + #b
        return self:_checked(b, offset), #b
    end
end

-- list checked as 1-based sample indices of the dataset: a 1-based int64 tensor (nil if empty);
-- offset: the indices the sampler gave before list (0), for the positions errors name
function DataLoader:_checked(list, offset)
    local n = self.dataset:len()
    offset = offset or 0
    for k0 = 1, #list do
        local i, k = list[k0], k0 + offset
        if not compat.is_integer(i) then
            -- an integral float (2.0) stands for its integer; anything else is no index
            local int = type(i) == "number" and i == math.floor(i) and compat.tointeger(i)
            if not int then
                local shown
                if type(i) == "number" then
                    shown = i ~= i and "nan" or tostring(i)
                elseif type(i) == "string" then
                    shown = string.format("%q (a string)", i)
                else
                    shown = "a " .. type(i)
                end
                raise(string.format("tide: DataLoader: the sampler gave %s at position %d; " ..
                    "sample indices must be integers in 1..%d; make the sampler return " ..
                    "integers", shown, k, n))
            end
            i = int -- checked as an integer; the list itself (perhaps the user's) is left alone
        end
        if i < 1 or i > n then
            raise(string.format("tide: DataLoader: the sampler gave index %s (position %d), " ..
                "out of range 1..%d", tostring(i), k, n))
        end
    end
    return #list > 0 and core.tensor(list, { dtype = "int64", device = "cpu" }) or nil
end

-- pins the tensors among the values, tables of them included
local function pin_value(v)
    if core.is_tensor(v) then
        return v:pin_memory()
    elseif type(v) == "table" then
        local out = {}
        for k, x in pairs(v) do
            out[k] = pin_value(x)
        end
        return out
    end
    return v
end

local function pin(...)
    local out = compat.pack(...)
    for k = 1, out.n do
        out[k] = pin_value(out[k])
    end
    return compat.unpack(out, 1, out.n)
end

-- one epoch over an IterableDataset: a new stream of its samples, read batch_size at a time
function DataLoader:_iter_stream()
    local read = require("tide.data.IterableDataset")._stream(self.dataset)
    local bs, drop_last = self.batch_size, self.drop_last
    local collate_fn = self.collate_fn or default_collate
    self.epoch = self.epoch + 1
    local ended = false
    if self._unbatched then
        return function()
            local sample = not ended and read()
            if not sample then
                ended = true
                return nil
            end
            if self.pin_memory then
                return pin(self:_convert(sample))
            end
            return self:_convert(sample)
        end
    end
    return function()
        if ended then
            return nil
        end
        local samples = {}
        while #samples < bs do
            local sample = read()
            if not sample then
                ended = true
                break
            end
            samples[#samples + 1] = sample
        end
        if #samples == 0 or (drop_last and #samples < bs) then
            return nil
        end
        if self.pin_memory then
            return pin(collate_fn(samples))
        end
        return collate_fn(samples)
    end
end

--- An iterator over one epoch: `for x, y in loader:iter() do`.
function DataLoader:iter()
    if self.iterable then
        return self:_iter_stream()
    end
    local ds, bs = self.dataset, self.batch_size or 1
    local n = self:_samples()
    local nb = self:len()
    local order -- int64 1-based sample ids of this epoch (nil: 1..n in order)
    local lens -- each batch's length, from a batch sampler (nil: bs, the last one shorter)
    local read_samples, read_batch -- lazy readers of a sampler's or batch sampler's iter()
    local s = rawget(self, "sampler")
    if rawget(self, "batch_sampler") ~= nil then
        if type(rawget(self, "batch_sampler").iter) == "function" then
            read_batch = self:_batch_reader()
        else
            order, lens = self:_batched()
        end
    elseif s ~= nil and type(s.len) == "function" and type(s.iter) == "function" then
        read_samples = self:_sampler_reader()
    elseif s ~= nil then
        order = self:_sampled()
    elseif self.shuffle and self.generator ~= nil then
        order = stream.draw(self, function()
            return core.randperm(n, { device = "cpu" })
        end, "DataLoader")
    elseif self.shuffle then
        order = core._randperm(n, self.seed + self.epoch)
    end
    self.epoch = self.epoch + 1
    local b = 0
    local collate_fn = self.collate_fn
    if collate_fn == default_collate then
        collate_fn = nil -- (a TensorDataset's batch is then gathered in one call per field)
    end
    local gather = not collate_fn and not self._unbatched and ds.batch
    local sample_of = collate_fn and require("tide.data.Dataset")._sample_of
    return function()
        if b >= nb then
            if b == nb then -- the epoch's end: a lazy sampler must have no more
                b = b + 1
                if read_samples then
                    read_samples()
                elseif read_batch then
                    read_batch(true)
                end
            end
            return nil
        end
        local start, len
        local index
        if read_batch then
            index, len = read_batch()
        elseif lens then
            start, len = (b == 0 and 1 or lens.next), lens[b + 1]
            lens.next = start + len
        else
            start = b * bs + 1
            len = math.min(bs, n - start + 1)
        end
        b = b + 1
        -- (a batch sampler's batch has its index already)
        if read_samples then
            index = read_samples(len)
        elseif index == nil and order then
            index = order:narrow(1, start, len)
        elseif index == nil and gather then
            index = core.arange(start, start + len, { dtype = "int64" })
        end
        local function finish(...)
            if self.pin_memory then
                return pin(...)
            end
            return ...
        end
        if gather then
            return finish(gather(ds, index))
        end
        if self._unbatched then -- PyTorch's batch_size=None: the one sample, converted
            local i = index and index[1]:item() or start
            i = compat.tointeger(i)
            return finish(self:_convert(compat.pack(ds:get(i)), i))
        end
        local samples = {}
        for k = 1, len do
            local i = index and index[k]:item() or (start + k - 1)
            samples[k] = compat.pack(ds:get(compat.tointeger(i)))
            -- a collate_fn gets sample k as ds[i] reads it, PyTorch's dataset[i]: the one value
            -- a PyTorch-style __getitem__ returns (a list of token ids) is itself, not a list
            -- around it
            if collate_fn and sample_of then
                samples[k] = sample_of(samples[k], ds, compat.tointeger(i))
            end
        end
        return finish((collate_fn or default_collate)(samples))
    end
end

-- batch_size = false (PyTorch's None): a packed sample as the loader gives it, its fields
-- through default_convert, or collate_fn's value of the sample as ds[i] reads it
function DataLoader:_convert(sample, i)
    local f = self.collate_fn
    if f == require("tide.data.default_convert") then
        local out = f(sample)
        return compat.unpack(out, 1, sample.n or #sample)
    end
    return f(require("tide.data.Dataset")._sample_of(sample, self.dataset, i))
end

--- Python's `for i, (x, y) in enumerate(loader)`: `for i, x, y in loader:enumerate() do`, the
--- batches of one epoch numbered from start (1 by default, Lua's; 0 numbers them as Python's)
function DataLoader:enumerate(start)
    if start == nil then
        start = 1
    elseif type(start) ~= "number" or not compat.tointeger(start) then
        raise(("tide: DataLoader:enumerate: start must be an integer (1 by default; 0 numbers " ..
            "the batches as Python's enumerate), got %s"):format(type(start) == "number" and
            tostring(start) or type(start)))
    end
    local it, i = self:iter(), start - 1
    local function numbered(...)
        if select("#", ...) == 0 or (...) == nil then
            return nil
        end
        i = i + 1
        return i, ...
    end
    return function()
        return numbered(it())
    end
end

function DataLoader:__tostring()
    if self.iterable and self.dataset:_lenless() then
        return string.format("DataLoader(%s, batch_size=%s, drop_last=%s)",
            tostring(self.dataset), tostring(self.batch_size), tostring(self.drop_last))
    end
    return string.format("DataLoader(%s, batch_size=%s, shuffle=%s, drop_last=%s, %d batches)",
        tostring(self.dataset), tostring(self.batch_size), tostring(self.shuffle),
        tostring(self.drop_last), self:len())
end

-- PyTorch's loader.sampler (SequentialSampler, or RandomSampler with shuffle, over the dataset)
-- and loader.batch_sampler (BatchSampler(loader.sampler, batch_size, drop_last)) when none was
-- given, made when first read (`len(loader.sampler)`, `loader.batch_sampler.batch_size`); the
-- loader's own epochs do not draw from them. An IterableDataset has neither (nil).
DEFAULTS = {}
function DEFAULTS.sampler(self)
    local made = rawget(self, "_default_sampler")
    if made == nil and not rawget(self, "iterable") then
        local data = require("tide.data")
        made = rawget(self, "shuffle") and
            data.RandomSampler(rawget(self, "dataset"), { generator = rawget(self, "generator") })
            or data.SequentialSampler(rawget(self, "dataset"))
        rawset(self, "_default_sampler", made)
    end
    return made
end
function DEFAULTS.batch_sampler(self)
    local made = rawget(self, "_default_batch_sampler")
    if made == nil and not rawget(self, "iterable") and not rawget(self, "_unbatched") then
        made = require("tide.data.BatchSampler")(self.sampler, rawget(self, "batch_size"),
            rawget(self, "drop_last"))
        rawset(self, "_default_batch_sampler", made)
    end
    return made
end

return DataLoader
