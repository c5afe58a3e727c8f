--- tide.data.DistributedSampler(ds[, opts]): this rank's shard of a dataset, itself a dataset.
-- PyTorch's order by position (ds, num_replicas, rank, shuffle, seed, drop_last), or by name
-- (num_replicas or tide's world_size; {dataset = ds, ...} alone); ranks are 0-based, PyTorch's.
--
--     local shard = tide.data.DistributedSampler(train, {shuffle = true, seed = 1})
--     local loader = tide.data.DataLoader(shard, {batch_size = 64})
--     for epoch = 1, n do shard:set_epoch(epoch); for x, y in loader:iter() do ... end end
--
-- Every epoch the dataset's indices are put in one order shared by all ranks (shuffled from
-- seed + epoch when shuffle is true, the default), padded by repeating the first ones until the
-- count divides by the number of ranks (or cut, with drop_last = true), and dealt out: rank r
-- takes positions r + 1, r + 1 + world_size, ... So the shards are disjoint, of one size, and
-- together cover the dataset. rank and world_size default to tide.distributed's (0 and 1 before
-- dist.init). The shard has `len()`, `get(i)`, and `batch(index)` when ds has it.
local compat = require("tide._compat")
local raise = require("tide.autograd.raise")
local core = require("tide.core")
local args = require("tide.op_args")
local Dataset = require("tide.data.Dataset")

local DistributedSampler = Dataset:extend("DistributedSampler")

-- PyTorch's parameters after the dataset, in its order (num_replicas is tide's world_size)
local NAMES = { "num_replicas", "rank", "shuffle", "seed", "drop_last" }

-- the options of (ds, ...): PyTorch's positional order, then optionally a table by name
local function options(who, ...)
    local opts = require("tide.pytorch_args").merge(who, NAMES, ...)
    opts = args.options(who, opts, { "shuffle", "seed", "rank", "world_size", "num_replicas",
        "drop_last" }, "{shuffle = true}")
    if opts.num_replicas ~= nil and opts.world_size ~= nil then
        raise("tide: DistributedSampler: num_replicas and world_size name one option (the " ..
            "number of ranks); pass one of them")
    end
    return opts
end

function DistributedSampler:init(...)
    local who = "DistributedSampler"
    -- DistributedSampler({dataset = ds, num_replicas = 2, ...}): every parameter by name
    local ds, opts = require("tide.data._by_name").first(who,
        { "dataset", "num_replicas", "rank", "shuffle", "seed", "drop_last", "world_size" }, ...)
    if select("#", ...) > 1 then
        opts = options(who, select(2, ...))
    else
        opts = options(who, opts)
    end
    if type(ds) ~= "table" or type(ds.len) ~= "function" then
        raise("tide: DistributedSampler: expected a dataset (tide.data.Dataset or " ..
            "TensorDataset), got " .. type(ds))
    end
    local dist = require("tide.distributed")
    self.dataset = ds
    for _, k in ipairs({ "shuffle", "drop_last" }) do
        if opts[k] ~= nil and type(opts[k]) ~= "boolean" then
            raise(("tide: DistributedSampler: %s must be a boolean, got %s"):format(k,
                type(opts[k])))
        end
    end
    self.shuffle = opts.shuffle ~= false
    self.drop_last = opts.drop_last and true or false
    self.seed = args.int_option(who, opts, "seed", 0, compat.mininteger)
    local ws = opts.num_replicas ~= nil and "num_replicas" or "world_size"
    self.world_size = args.int_option(who, opts, ws, dist.world_size(), 1)
    self.num_replicas = self.world_size -- PyTorch's name
    self.rank = args.int_option(who, opts, "rank", dist.rank(), 0)
    if self.rank >= self.world_size then
        raise(("tide: DistributedSampler: rank = %d does not exist among %s = %d ranks " ..
            "(0 to %d)"):format(self.rank, ws, self.world_size, self.world_size - 1))
    end
    self.epoch = 0
    if not ds.batch then
        self.batch = false -- the DataLoader then reads samples one by one with get
    end
    self:_deal()
end

--- the epoch decides the shuffled order: call it at the start of every epoch, on every rank
function DistributedSampler:set_epoch(epoch)
    if not compat.is_integer(epoch) then
        raise("tide: DistributedSampler: set_epoch expects an integer, got " .. tostring(epoch))
    end
    self.epoch = epoch
    self:_deal()
end

-- this epoch's dataset indices for this rank, as a 1-based int64 tensor (self.index)
function DistributedSampler:_deal()
    local n, w = self.dataset:len(), self.world_size
    local per = self.drop_last and compat.idiv(n, w) or compat.idiv(n + w - 1, w)
    local pos, k = {}, 0
    for p = self.rank + 1, per * w, w do
        k = k + 1
        pos[k] = (p - 1) % n + 1 -- past n: the padding repeats the first positions
    end
    local index = core.tensor(pos, { dtype = "int64" })
    if self.shuffle and k > 0 then
        index = core._randperm(n, self.seed + self.epoch):index_select(1, index)
    end
    self.index = index
    self.n = k
    self.num_samples, self.total_size = k, per * w -- PyTorch's attributes
end

--- the dataset indices of this rank's shard this epoch, as a Lua list
function DistributedSampler:indices()
    local out = {}
    for i = 1, self.n do
        out[i] = compat.tointeger(self.index[i]:item())
    end
    return out
end

-- PyTorch's `for i in sampler`: this rank's 1-based sample indices of the epoch
function DistributedSampler:iter()
    local k, n = 0, self.n
    return function()
        if k < n then
            k = k + 1
            return compat.tointeger(self.index[k]:item())
        end
    end
end

function DistributedSampler:len()
    return self.n
end

function DistributedSampler:get(i)
    if not compat.is_integer(i) or i < 1 or i > self.n then
        raise(("tide: DistributedSampler: index %s out of range 1..%d"):format(tostring(i),
            self.n))
    end
    return self.dataset:get(compat.tointeger(self.index[i]:item()))
end

function DistributedSampler:batch(index)
    return self.dataset:batch(self.index:index_select(1, index))
end

return DistributedSampler
