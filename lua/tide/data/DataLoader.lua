--- tide.data.DataLoader(ds, opts): batches of a dataset.
--
--     local loader = tide.data.DataLoader(train, {batch_size = 128, shuffle = true, seed = 1})
--     for x, y in loader:iter() do ... end      -- one epoch; #loader batches
--
-- opts: batch_size (1), shuffle (false), drop_last (false: the last batch may be smaller),
-- seed (shuffle order; each iter() call draws the next epoch's order from it, so a given seed
-- gives the same sequence of epochs; default: drawn from tide's generator, so tide.manual_seed
-- fixes it), pin_memory (false: when true and CUDA is available, batches come in page-locked
-- memory so `x:to("cuda", {non_blocking = true})` overlaps; without
-- CUDA it does nothing).
--
-- A dataset with a `batch(index)` method (TensorDataset) gives each batch in one call per
-- field, gathered in C; any other dataset is read with `get(i)` per sample and stacked.
local compat = require "tide._compat"

local core = require "tide.core"
local raise = require("tide.autograd").raise

local tide_ -- tide's init.lua may load this module while it loads: look it up lazily
local function tide()
    tide_ = tide_ or require "tide"
    return tide_
end

local DataLoader = { __name = "DataLoader" }
DataLoader.__index = DataLoader

local function opt_int(opts, key, default, min)
    local v = opts[key]
    if v == nil then
        return default
    end
    if not compat.is_integer(v) or v < min then
        raise(string.format("tide: DataLoader: %s = %s; expected an integer >= %d", key,
            tostring(v), min)) -- at the user's line, tail calls or not (a fixed level: not in 5.1)
    end
    return v
end

function DataLoader.new(ds, opts)
    opts = opts or {}
    if type(ds) ~= "table" or type(ds.len) ~= "function" then
        error("tide: DataLoader: expected a dataset (tide.data.Dataset or TensorDataset), got "
            .. type(ds), 2)
    end
    if type(opts) ~= "table" then
        error("tide: DataLoader: options must be a table, e.g. {batch_size = 64}", 2)
    end
    core._check_options(opts, "DataLoader",
        { "batch_size", "shuffle", "drop_last", "seed", "pin_memory" },
        { "collate_fn", "sampler" }) -- in API.md, not built yet
    local self = setmetatable({}, DataLoader)
    self.dataset = ds
    self.batch_size = opt_int(opts, "batch_size", 1, 1)
    self.shuffle = opts.shuffle and true or false
    self.drop_last = opts.drop_last and true or false
    self.seed = opt_int(opts, "seed", nil, compat.mininteger)
    if self.seed == nil then
        -- drawn from tide's generator, so tide.manual_seed(n) makes the shuffling reproducible
        -- (as torch.manual_seed does for PyTorch's DataLoader)
        local u = core.rand({ 1 }, { device = "cpu", dtype = "float64" }):item()
        self.seed = math.floor(u * compat.lshift(1, 31))
    end
    self.pin_memory = opts.pin_memory and tide().cuda.is_available() or false
    self.epoch = 0
    return self
end

setmetatable(DataLoader, {
    __call = function(_, ds, opts)
        return DataLoader.new(ds, opts)
    end,
})

--- number of batches per epoch
function DataLoader:len()
    local n = self.dataset:len()
    if self.drop_last then
        return compat.idiv(n, self.batch_size)
    end
    return compat.idiv(n + self.batch_size - 1, self.batch_size)
end
DataLoader.__len = DataLoader.len

-- collate samples read one by one: tensors are stacked, numbers become one tensor
local function collate(samples)
    local T = tide()
    local out = {}
    local nfields = samples[1].n
    for f = 1, nfields do
        local col = {}
        for s = 1, #samples do
            col[s] = samples[s][f]
        end
        local kind = type(col[1])
        local ok, r
        if kind == "number" or kind == "boolean" then
            ok, r = pcall(T.tensor, col)
        else
            ok, r = pcall(T.stack, col, 1)
        end
        if not ok then
            -- the core's message, at the line of the user's `for` (not inside this file)
            local msg = tostring(r):match("tide:.*") or tostring(r)
            raise(string.format("tide: DataLoader: cannot batch field %d of the samples (%s)" ..
                "; get(i) must return tensors of one shape, numbers or booleans per field",
                f, msg))
        end
        out[f] = r
    end
    return compat.unpack(out, 1, nfields)
end

local function pin(...)
    local out = compat.pack(...)
    for k = 1, out.n do
        out[k] = out[k]:pin_memory()
    end
    return compat.unpack(out, 1, out.n)
end

--- An iterator over one epoch: `for x, y in loader:iter() do`.
function DataLoader:iter()
    local ds, bs = self.dataset, self.batch_size
    local n = ds:len()
    local nb = self:len()
    local order -- int64 1-based sample ids of this epoch (nil: 1..n in order)
    if self.shuffle then
        order = core._randperm(n, self.seed + self.epoch)
    end
    self.epoch = self.epoch + 1
    local b = 0
    local gather = ds.batch
    return function()
        if b >= nb then
            return nil
        end
        local start = b * bs + 1
        local len = math.min(bs, n - start + 1)
        b = b + 1
        local index
        if order then
            index = order:narrow(1, start, len)
        elseif gather then
            index = tide().arange(start, start + len, { dtype = "int64" })
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
        local samples = {}
        for k = 1, len do
            local i = order and index[k]:item() or (start + k - 1)
            samples[k] = compat.pack(ds:get(compat.tointeger(i)))
        end
        return finish(collate(samples))
    end
end

function DataLoader:__tostring()
    return string.format("DataLoader(%s, batch_size=%d, shuffle=%s, drop_last=%s, %d batches)",
        tostring(self.dataset), self.batch_size, tostring(self.shuffle),
        tostring(self.drop_last), self:len())
end

return DataLoader
