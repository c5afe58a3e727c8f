-- PyTorch 1.13's calls of tide.data and tide.distributions that tide refused (by position, by
-- name, mixed); expected values from the venv's torch 1.13 (0-based indices there, +1 here)
local tide = require("tide")
local D = tide.data
local F32 = { dtype = "float32" }
local Dn = tide.distributions

local function ds10()
    return D.TensorDataset(tide.arange(1, 11):float())
end

local function join(l)
    return table.concat(l, ",")
end

describe("data refusals", function()
    it("DistributedSampler takes PyTorch's positions and num_replicas", function()
        local ds = ds10()
        -- torch: DistributedSampler(ds, 3, 1, False, 0, False) -> [1, 4, 7, 0]
        local s = D.DistributedSampler(ds, 3, 1, false, 0, false)
        assert.are.equal("2,5,8,1", join(s:indices()))
        s = D.DistributedSampler(ds, { num_replicas = 3, rank = 2, shuffle = false,
            drop_last = true })
        assert.are.equal("3,6,9", join(s:indices())) -- torch [2, 5, 8]
        s = D.DistributedSampler({ dataset = ds, num_replicas = 4, rank = 3, shuffle = false })
        assert.are.equal("4,8,2", join(s:indices())) -- torch [3, 7, 1]
        s = D.DistributedSampler(ds, 3, { rank = 0, shuffle = false, drop_last = true })
        assert.are.equal("1,4,7", join(s:indices()))
        assert.has_error(function() D.DistributedSampler(ds, { num_replica = 3 }) end,
            'tide: DistributedSampler: unknown option "num_replica" (did you mean "num_replicas"?)')
        assert.has_error(function() D.DistributedSampler(ds, 3, 3) end)
        assert.has_error(function() D.DistributedSampler(ds, 3, 1, { rank = 1 }) end)
        assert.has_error(function()
            D.DistributedSampler(ds, { num_replicas = 2, world_size = 2 })
        end)
        -- shuffled: the ranks' shards are disjoint, of one size, and cover the padded set
        local seen = {}
        for r = 0, 2 do
            local sh = D.DistributedSampler(ds, 3, r, true, 5)
            sh:set_epoch(2)
            assert.are.equal(4, sh:len())
            for _, i in ipairs(sh:indices()) do
                seen[i] = (seen[i] or 0) + 1
            end
        end
        local total = 0
        for i = 1, 10 do
            assert.is_true(seen[i] >= 1)
            total = total + seen[i]
        end
        assert.are.equal(12, total)
    end)

    it("DataLoader takes batch_size = 1 beside batch_sampler, as PyTorch", function()
        local ds = ds10()
        local bs = D.BatchSampler(D.SequentialSampler(ds), 3, false)
        assert.are.equal(4, D.DataLoader(ds, { batch_size = 1, batch_sampler = bs,
            shuffle = false, drop_last = false }):len())
        assert.has_error(function() D.DataLoader(ds, { batch_size = 2, batch_sampler = bs }) end,
            "tide: DataLoader: batch_sampler excludes batch_size, shuffle, sampler and " ..
            "drop_last (the batch sampler makes the batches; batch_size may be 1, the default)")
    end)

    it("the samplers, ConcatDataset and random_split take every parameter by name", function()
        local ds = ds10()
        tide.manual_seed(0)
        local a = D.RandomSampler({ data_source = ds, replacement = true, num_samples = 4,
            generator = 1 }):indices()
        local b = D.RandomSampler(ds, true, 4, 1):indices()
        assert.are.equal(join(b), join(a))
        local w = D.WeightedRandomSampler({ weights = { 0, 0, 1 }, num_samples = 4,
            replacement = true })
        assert.are.equal("3,3,3,3", join(w:indices()))
        local bsn = D.BatchSampler({ sampler = D.SequentialSampler(ds), batch_size = 4,
            drop_last = true })
        assert.are.equal(2, bsn:len())
        assert.are.equal(20, D.ConcatDataset({ datasets = { ds, ds } }):len())
        assert.has_error(function() D.ConcatDataset({ datasets = { ds } }, ds) end)
        assert.has_error(function() D.BatchSampler({ batch_size = 4, drop_last = true }) end)
        assert.has_error(function() D.RandomSampler({ data_sorce = ds }) end,
            'tide: RandomSampler: unknown option "data_sorce" (did you mean "data_source"?)')
        local s = D.random_split(ds, { lengths = { 0.3, 0.7 }, generator = 1 })
        assert.are.equal("3,7", s[1]:len() .. "," .. s[2]:len())
        s = D.random_split({ dataset = ds, lengths = { 0.25, 0.25, 0.5 }, generator = 1 })
        assert.are.equal("3,2,5", s[1]:len() .. "," .. s[2]:len() .. "," .. s[3]:len())
        assert.has_error(function() D.random_split(ds, { lengths = { 5, 5 }, genrator = 1 }) end)
    end)

    it("distributions take validate_args by position", function()
        local z, o = tide.tensor(0.0, F32), tide.tensor(1.0, F32)
        -- torch: Normal(0, 1, True).log_prob(0.5) = -1.0439
        assert.is_true(math.abs(Dn.Normal(z, o, true):log_prob(tide.tensor(0.5, F32)):item()
            + 1.0439385) < 1e-5)
        assert.are.equal(1.0, Dn.Exponential(o, true).rate:item())
        assert.is_true(math.abs(Dn.Bernoulli(tide.tensor(0.3, F32), nil, true).probs:item() - 0.3)
            < 1e-6)
        local named = Dn.Bernoulli({ probs = tide.tensor(0.3, F32), validate_args = true })
        assert.is_true(math.abs(named.probs:item() - 0.3) < 1e-6)
        assert.has_error(function() Dn.Normal(z, tide.tensor(-1.0, F32), true) end,
            "tide: Normal: scale must be positive")
        assert.has_error(function() Dn.Normal(z, o, { validate_args = true }, false) end)
    end)

    it("validate_args = false skips the parameter checks, as PyTorch's", function()
        local z, neg = tide.tensor(0.0, F32), tide.tensor(-1.0, F32)
        -- torch: Normal(0., -1., validate_args=False).log_prob(0.5) is nan (log of -1)
        local n = Dn.Normal(z, neg, false)
        assert.is_true(n:log_prob(tide.tensor(0.5, F32)):isnan():item())
        assert.are.equal(-1.0, Dn.Normal(z, neg, { validate_args = false }).scale:item())
        assert.are.equal(2, Dn.Categorical({ probs = tide.tensor({ -0.1, 1.1 }),
            validate_args = false }).probs:numel())
        -- the checks are back for the next one, and after an error raised with them off
        assert.has_error(function() Dn.Normal(z, neg) end, "tide: Normal: scale must be positive")
        assert.has_error(function() Dn.Normal(z, neg, { validate_args = false, bad = 1 }) end)
        assert.has_error(function() Dn.Normal(z, neg) end, "tide: Normal: scale must be positive")
        Dn.Distribution.set_default_validate_args(false)
        local ok = pcall(Dn.Normal, z, neg)
        Dn.Distribution.set_default_validate_args(true)
        assert.is_true(ok)
        assert.has_error(function() Dn.Normal(z, neg) end, "tide: Normal: scale must be positive")
        assert.has_error(function() Dn.Distribution.set_default_validate_args(0) end,
            "tide: set_default_validate_args: expected a boolean, got number")
    end)

    it("polygamma and binomial take PyTorch's names", function()
        local x = tide.tensor({ 0.5, 2.0 }, F32)
        local v = tide.polygamma({ n = 1, input = x }):totable() -- torch [4.9348, 0.6449]
        assert.is_true(math.abs(v[1] - 4.9348022) < 1e-4 and math.abs(v[2] - 0.6449341) < 1e-4)
        local c, p = tide.tensor({ 5, 0 }, F32), tide.tensor({ 1, 0.5 }, F32)
        assert.are.same({ 5, 0 }, tide.binomial({ count = c, prob = p }):totable())
        assert.are.same({ 5, 0 }, tide.binomial(c, { prob = p,
            generator = tide.Generator("cpu") }):totable())
        assert.has_error(function() tide.binomial({ count = c, prob = p, generatr = 1 }) end)
        assert.has_error(function() tide.polygamma({ n = 1, inpt = x }) end)
    end)

    -- the sweep: each call runs (PyTorch accepts it) and gives the value listed
    local sweep = {
        { "DataLoader all keywords", function()
            local ds = ds10()
            local n = 0
            for _, k in ipairs({ "num_workers", "pin_memory", "timeout", "prefetch_factor",
                "persistent_workers", "pin_memory_device" }) do
                local v = ({ num_workers = 0, pin_memory = false, timeout = 0,
                    prefetch_factor = 2, persistent_workers = false, pin_memory_device = "" })[k]
                n = n + D.DataLoader(ds, { batch_size = 2, [k] = v }):len()
            end
            return n
        end, 30 },
        { "DataLoader sampler=", function()
            return D.DataLoader(ds10(), { batch_size = 2, sampler = { 1, 2, 3 } }):len()
        end, 2 },
        { "SequentialSampler by name", function()
            return D.SequentialSampler({ data_source = ds10() }):len()
        end, 10 },
        { "SubsetRandomSampler by name", function()
            return D.SubsetRandomSampler({ indices = { 1, 2, 3 }, generator = 1 }):len()
        end, 3 },
        { "Subset by name", function()
            return D.Subset({ dataset = ds10(), indices = { 1, 2 } }):len()
        end, 2 },
        { "random_split 0.33s", function()
            local s = D.random_split(ds10(), { 0.33, 0.33, 0.34 })
            return s[1]:len() * 100 + s[2]:len() * 10 + s[3]:len()
        end, 433 },
        { "get_worker_info in the main process", function()
            return D.get_worker_info() == nil
        end, true },
        { "default_collate nested", function()
            local b = D.default_collate({
                table.pack({ a = tide.zeros(2), b = { 1, { x = 2 } } }),
                table.pack({ a = tide.ones(2), b = { 3, { x = 4 } } }) })
            return join(b.b[2].x:totable()) .. ";" .. b.a:size()[1]
        end, "2,4;2" },
    }
    for _, c in ipairs(sweep) do
        it("sweep: " .. c[1], function()
            assert.are.same(c[3], c[2]())
        end)
    end
end)
