-- PyTorch-porting gaps of training scripts (4): Dataset subclasses with __len__/__getitem__,
-- random_split's positional generator, integral floats for integer scheduler/optimizer
-- parameters, nn.utils.rnn's positional parameters, nn.Sequential's append/extend/insert/pop,
-- TensorDataset slicing, the samplers' positional parameters, t:backward's parameters and
-- tide.load's map_location/weights_only. Runs under Lua 5.1/LuaJIT too (no 5.3+ syntax).
local tide = require("tide")
local nn = tide.nn
local optim = tide.optim
local D = tide.data
local R = nn.utils.rnn

local function err(f, ...)
    local ok, e = pcall(f, ...)
    assert.is_false(ok)
    return (tostring(e):gsub("^.-:%d+: ", ""))
end

local function same(a, b)
    assert.is_true(a:equal(b))
end

describe("Dataset subclass with PyTorch's __len__ and __getitem__", function()
    local Names = D.Dataset:extend("PyNames")
    function Names:init() self.data = { "a", "bb", "ccc" } end
    function Names:__len__() return #self.data end
    function Names:__getitem__(i) return tide.tensor({ i }), tide.tensor({ #self.data[i] }) end

    it("works as len and get", function()
        local d = Names()
        assert.are.equal(3, d:len())
        local x, y = d:get(3)
        assert.are.same({ 3 }, x:totable())
        assert.are.same({ 3 }, y:totable())
        assert.are.same({ 2 }, d[2][2]:totable())
    end)

    it("in DataLoader, Subset, ConcatDataset and random_split", function()
        local d = Names()
        local sizes = {}
        for x, y in D.DataLoader(d, { batch_size = 2 }):iter() do
            sizes[#sizes + 1] = y:sum():item()
        end
        assert.are.same({ 3, 3 }, sizes) -- {1 + 2}, {3}
        local s = D.Subset(d, { 3, 1 })
        assert.are.same({ 3 }, (select(2, s:get(1))):totable())
        assert.are.equal(6, D.ConcatDataset({ d, d }):len())
        local parts = D.random_split(d, { 2, 1 }, { seed = 1 })
        assert.are.equal(2, parts[1]:len())
        assert.are.equal(1, parts[2]:len())
    end)

    it("without either raises naming both spellings", function()
        local Empty = D.Dataset:extend("EmptyDs")
        assert.are.equal("tide: EmptyDs: len() is not defined; define it (or PyTorch's __len__) " ..
            "in the subclass", err(function() return Empty():len() end))
    end)
end)

describe("random_split's generator by position", function()
    local ds = D.TensorDataset(tide.arange(1, 21))
    it("equals the generator option", function()
        local a = D.random_split(ds, { 15, 5 }, tide.Generator():manual_seed(1))
        local b = D.random_split(ds, { 15, 5 }, { generator = tide.Generator():manual_seed(1) })
        assert.are.same(b[1].indices, a[1].indices)
        assert.are.same(b[2].indices, a[2].indices)
        local c = D.random_split(ds, { 0.75, 0.25 }, 7)
        local e = D.random_split(ds, { 0.75, 0.25 }, { generator = 7 })
        assert.are.same(e[1].indices, c[1].indices)
    end)
    it("raises when given twice or with extra arguments", function()
        assert.are.equal("tide: random_split: generator given twice, as argument #3 and by " ..
            "name; pass it once", err(D.random_split, ds, { 15, 5 }, 1, { generator = 2 }))
        assert.are.equal("tide: random_split: got 3 arguments after lengths; it takes at most " ..
            "2 (generator, then an options table)", err(D.random_split, ds, { 15, 5 }, 1, 2, 3))
        assert.are.equal("tide: random_split: options must be a table such as {seed = 42}, " ..
            "got number", err(D.random_split, ds, { 15, 5 }, 1, 2))
    end)
end)

describe("integral floats for integer scheduler and optimizer parameters", function()
    local function sgd()
        return optim.SGD(nn.Linear(2, 2):parameters(), { lr = 5.0 })
    end
    local function lrs(s, n)
        local out = {}
        for i = 1, n do
            s.optimizer:step()
            s:step()
            out[i] = s:get_last_lr()[1]
        end
        return out
    end
    it("StepLR(opt, 1.0, {gamma = 0.95}) is StepLR(opt, 1, ...)", function()
        local s = optim.lr_scheduler.StepLR(sgd(), 1.0, { gamma = 0.95 })
        assert.are.equal(1, s.step_size)
        assert.are.equal("integer", math.type and math.type(s.step_size) or "integer")
        assert.are.same(lrs(optim.lr_scheduler.StepLR(sgd(), 1, { gamma = 0.95 }), 3), lrs(s, 3))
    end)
    it("the other integer parameters", function()
        assert.are.equal(10, optim.lr_scheduler.CosineAnnealingLR(sgd(), 10.0).T_max)
        local w = optim.lr_scheduler.CosineAnnealingWarmRestarts(sgd(), 4.0, 2.0)
        assert.are.equal(4, w.T_0)
        assert.are.equal(2, w.T_mult)
        assert.are.same({ 2, 4 }, optim.lr_scheduler.MultiStepLR(sgd(), { 2.0, 4.0 }).milestones)
        assert.are.equal(3, optim.lr_scheduler.LinearLR(sgd(), { total_iters = 3.0 }).total_iters)
        assert.are.equal(3, optim.lr_scheduler.ConstantLR(sgd(), { total_iters = 3.0 })
            .total_iters)
        local p = optim.lr_scheduler.ReduceLROnPlateau(sgd(), { patience = 2.0, cooldown = 1.0 })
        assert.are.equal(2, p.patience)
        assert.are.equal(1, p.cooldown)
        local o = optim.lr_scheduler.OneCycleLR(sgd(), { max_lr = 1.0, epochs = 2.0,
            steps_per_epoch = 5.0 })
        assert.are.equal(10, o.total_steps)
        local lb = optim.LBFGS(nn.Linear(2, 2):parameters(), { max_iter = 4.0, history_size = 3.0 })
        assert.are.equal(4, lb.param_groups[1].max_iter)
        assert.are.equal(3, lb.param_groups[1].history_size)
        assert.are.equal(4, D.DataLoader(D.TensorDataset(tide.randn(8, 2)), 4.0).batch_size)
    end)
    it("a fractional value or a string still raises; float parameters stay floats", function()
        assert.are.equal("tide: StepLR: step_size = 1.5; expected an integer >= 1",
            err(optim.lr_scheduler.StepLR, sgd(), 1.5))
        assert.are.equal("tide: StepLR: step_size = 2; expected an integer >= 1",
            err(optim.lr_scheduler.StepLR, sgd(), "2"))
        assert.are.equal("tide: MultiStepLR: milestone 2 is 2.5; expected an integer epoch",
            err(optim.lr_scheduler.MultiStepLR, sgd(), { 1, 2.5 }))
        assert.are.equal(0.5, optim.lr_scheduler.StepLR(sgd(), 1, 0.5).gamma)
    end)
end)

describe("nn.utils.rnn with PyTorch's positional parameters", function()
    local a, b = tide.tensor({ 1, 2, 3 }), tide.tensor({ 4, 5 })
    it("pad_sequence(sequences, batch_first, padding_value)", function()
        -- torch pad_sequence([a, b], False, 9): [[1, 4], [2, 5], [3, 9]]
        assert.are.same({ { 1, 4 }, { 2, 5 }, { 3, 9 } }, R.pad_sequence({ a, b }, false, 9):totable())
        assert.are.same({ { 1, 2, 3 }, { 4, 5, 9 } }, R.pad_sequence({ a, b }, true, 9):totable())
        same(R.pad_sequence({ a, b }, { batch_first = true }), R.pad_sequence({ a, b }, true))
    end)
    it("pack_padded_sequence, pad_packed_sequence, pack_sequence, unpad_sequence", function()
        local x = tide.randn(2, 3, 4)
        local p1 = R.pack_padded_sequence(x, { 2, 3 }, true, false)
        local p2 = R.pack_padded_sequence(x, { 2, 3 }, { batch_first = true,
            enforce_sorted = false })
        same(p2.data, p1.data)
        same(p2.batch_sizes, p1.batch_sizes)
        local o1, l1 = R.pad_packed_sequence(p1, true, -1, 5)
        local o2 = R.pad_packed_sequence(p1, { batch_first = true, padding_value = -1,
            total_length = 5 })
        same(o2, o1)
        assert.are.same({ 2, 5, 4 }, o1.shape)
        assert.are.same({ 2, 3 }, l1:totable())
        assert.are.equal(-1, o1[1][5][1]:item())
        same(R.pack_sequence({ b, a }, false).data,
            R.pack_sequence({ b, a }, { enforce_sorted = false }).data)
        same(R.unpad_sequence(o1, l1, true)[1], x[1]:narrow(1, 1, 2))
    end)
    it("no argument is dropped", function()
        assert.are.equal("tide: pad_sequence: padding_value given twice, as argument #3 and " ..
            "by name; pass it once", err(R.pad_sequence, { a, b }, true, 9, { padding_value = 1 }))
        assert.are.equal("tide: pad_sequence: expected batch_first to be a boolean, got 1",
            err(R.pad_sequence, { a, b }, 1))
        local x = tide.randn(3, 2, 4)
        assert.are.equal("tide: pack_padded_sequence: got 4 positional arguments; it takes at " ..
            "most 3 (lengths, batch_first, enforce_sorted), then an options table",
            err(R.pack_padded_sequence, x, { 3, 2 }, false, true, true))
        assert.are.equal("tide: pack_padded_sequence: batch_first given twice, as argument #3 " ..
            "and by name; pass it once",
            err(R.pack_padded_sequence, x, { 3, 2 }, false, { batch_first = true }))
    end)
end)

describe("nn.Sequential's append, extend, insert and pop", function()
    it("edit as PyTorch's", function()
        local l1, r, l2, t = nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1), nn.Tanh()
        local s = nn.Sequential(l1)
        assert.are.equal(s, s:extend({ r, l2 }))
        assert.are.equal(3, #s)
        assert.are.equal(l2, s[3])
        assert.are.same({ 1, 1 }, s(tide.randn(1, 2)).shape)
        -- torch: Sequential(l1, r, l2).insert(-1, t) -> l1, r, t, l2
        assert.are.equal(s, s:insert(-1, t))
        assert.are.equal(t, s[3])
        assert.are.equal(l2, s[4])
        assert.are.equal(t, s["3"])
        assert.are.equal(l1, s:pop(1))
        assert.are.equal(3, #s)
        local names = {}
        for n, m in s:named_children() do
            names[#names + 1] = n .. "=" .. m.__name
        end
        assert.are.same({ "1=ReLU", "2=Tanh", "3=Linear" }, names)
        local keys = {}
        for k in pairs(s:state_dict()) do
            keys[#keys + 1] = k
        end
        table.sort(keys)
        assert.are.same({ "3.bias", "3.weight" }, keys)
        assert.are.equal(s, s:append(nn.Sigmoid()))
        assert.are.equal("Sigmoid", s[-1].__name)
        s:extend(nn.Sequential(nn.ReLU(), nn.ReLU()))
        assert.are.equal(6, #s)
    end)
    it("the class's extend still makes a subclass", function()
        local My = nn.Sequential:extend("MySeq4")
        local m = My(nn.ReLU(), nn.Tanh())
        assert.are.equal("MySeq4", m.__name)
        assert.are.equal(2, #m)
        assert.are.equal(3, #m:extend({ nn.ReLU() }))
    end)
    it("raises on bad indices and entries, changing nothing", function()
        local s = nn.Sequential(nn.ReLU(), nn.Tanh())
        assert.are.equal("tide: Sequential:pop: index 3 out of range 1..2 (or -2..-1)",
            err(s.pop, s, 3))
        assert.are.equal("tide: Sequential:insert: index 0 out of range 1..3 (or -2..-1)",
            err(s.insert, s, 0, nn.ReLU()))
        assert.are.equal("tide: Sequential:extend: entry 2 is a number, expected a Module",
            err(s.extend, s, { nn.ReLU(), 3 }))
        assert.are.equal(2, #s)
    end)
end)

describe("TensorDataset slicing", function()
    local ds = D.TensorDataset(tide.arange(10):view(5, 2), tide.arange(5))
    it("ds[{a, b}] is PyTorch's ds[a-1:b]", function()
        local s = ds[{ 2, 4 }]
        assert.are.equal(2, #s)
        -- torch: TensorDataset(arange(10).view(5, 2), arange(5))[1:4]
        assert.are.same({ { 2, 3 }, { 4, 5 }, { 6, 7 } }, s[1]:totable())
        assert.are.same({ 1, 2, 3 }, s[2]:totable())
        assert.are.same({ 3, 4 }, ds[{ -2, -1 }][2]:totable())
        assert.are.same({ 0, 2, 4 }, ds[{ 1, 5, 2 }][2]:totable())
    end)
    it("other keys raise rather than read as nil", function()
        assert.are.equal("tide: TensorDataset: a slice is a range of samples {first, last[, " ..
            "step]} (1-based, inclusive), such as ds[{1, 4}]", err(function() return ds[{ 1.5, 3 }] end))
        assert.are.equal("tide: TensorDataset: cannot index a dataset with a boolean; ds[i] " ..
            "takes a sample's 1-based index, ds[{a, b}] the samples a..b",
            err(function() return ds[true] end))
        local Plain = D.Dataset:extend("Plain4")
        function Plain:len() return 2 end
        function Plain:get(i) return i end
        assert.are.equal("tide: Plain4: cannot index a dataset with a table; ds[i] takes a " ..
            "sample's 1-based index", err(function() return Plain()[{ 1, 2 }] end))
        assert.is_nil(ds.transform) -- a field the dataset lacks is still nil
        assert.are.equal(1, ds[2.0][2]:item())
    end)
end)

describe("samplers' positional parameters", function()
    local ds = D.TensorDataset(tide.randn(5))
    it("RandomSampler(ds, replacement, num_samples, generator)", function()
        local s = D.RandomSampler(ds, true, math.floor(1e10))
        assert.is_true(s.replacement)
        assert.are.equal(1e10, s.num_samples)
        assert.are.same(D.RandomSampler(ds, { generator = 3 }):indices(),
            D.RandomSampler(ds, false, nil, 3):indices())
        assert.are.equal("tide: RandomSampler: generator given twice, as argument #4 and by " ..
            "name; pass it once", err(D.RandomSampler, ds, true, 7, 3, { generator = 4 }))
    end)
    it("SubsetRandomSampler, WeightedRandomSampler, BatchSampler, SequentialSampler", function()
        assert.are.same(D.SubsetRandomSampler({ 1, 3, 5 }, { generator = 9 }):indices(),
            D.SubsetRandomSampler({ 1, 3, 5 }, 9):indices())
        local w1 = D.WeightedRandomSampler({ 1, 2, 3 }, 3, false, 5)
        local w2 = D.WeightedRandomSampler({ 1, 2, 3 }, 3, { replacement = false, generator = 5 })
        assert.is_false(w1.replacement)
        assert.are.same(w2:indices(), w1:indices())
        local bs = D.BatchSampler(D.SequentialSampler(5), { batch_size = 2, drop_last = true })
        assert.are.same({ { 1, 2 }, { 3, 4 } }, bs:batches())
        assert.are.same({ { 1, 2 }, { 3, 4 }, { 5 } },
            D.BatchSampler(D.SequentialSampler(5), 2, false):batches())
        assert.are.equal("tide: SequentialSampler: expected only the data source, got 1 more " ..
            "argument; remove it", err(D.SequentialSampler, ds, {}))
    end)
end)

describe("t:backward's parameters", function()
    it("gradient by name, retain_graph by position", function()
        local x = tide.ones(3, { requires_grad = true })
        local y = x * 2
        y:backward({ gradient = tide.tensor({ 1, 0.5, 0 }) })
        assert.are.same({ 2, 1, 0 }, x.grad:totable())
        x = tide.ones(3, { requires_grad = true })
        y = (x * 2):sum()
        y:backward(nil, true)
        y:backward()
        assert.are.same({ 4, 4, 4 }, x.grad:totable())
    end)
    it("create_graph makes .grad differentiable", function()
        -- torch: x = [1, 2]; (x**3).sum().backward(create_graph=True): x.grad = 3x^2 = [3, 12];
        -- x.grad.sum().backward() adds 6x = [6, 12]
        local x = tide.tensor({ 1.0, 2.0 }, { requires_grad = true })
        local y = (x ^ 3):sum()
        y:backward({ create_graph = true })
        assert.are.same({ 3, 12 }, x.grad:totable())
        assert.is_true(x.grad.requires_grad)
        local g = x.grad:sum()
        x.grad = nil
        g:backward()
        assert.are.same({ 6, 12 }, x.grad:totable())
    end)
    it("inputs fills only those tensors' .grad, by name or by position", function()
        local x = tide.tensor({ 1.0, 2.0 }, { requires_grad = true })
        local w = tide.tensor({ 3.0 }, { requires_grad = true })
        local y = (x * w):sum()
        y:backward({ inputs = { x }, retain_graph = true })
        assert.are.same({ 3, 3 }, x.grad:totable()) -- PyTorch: x.grad [3, 3], w.grad None
        assert.is_nil(w.grad)
        y:backward(nil, nil, nil, { w })
        assert.are.same({ 3 }, w.grad:totable()) -- PyTorch: w.grad [3]
        assert.are.same({ 3, 3 }, x.grad:totable())
    end)
    it("tide.autograd.backward(tensors, grad_tensors, ...)", function()
        local x = tide.ones(3, { requires_grad = true })
        tide.autograd.backward({ (x * 2):sum(), (x * 3):sum() })
        assert.are.same({ 5, 5, 5 }, x.grad:totable())
        x = tide.ones(3, { requires_grad = true })
        tide.autograd.backward(x * 2, tide.tensor({ 0.5, 1, 2 }), false)
        assert.are.same({ 1, 2, 4 }, x.grad:totable())
        -- torch.autograd.backward(t, [g]): the gradient in a list of one
        x.grad = nil
        tide.autograd.backward(x * 2, { tide.ones(3) })
        assert.are.same({ 2, 2, 2 }, x.grad:totable())
    end)
    it("raises on a bad or doubled parameter", function()
        local y = (tide.ones(1, { requires_grad = true }) * 2):sum()
        assert.are.equal("tide: backward: retain_graph must be a boolean, got number",
            err(function() y:backward({ retain_graph = 1 }) end))
        assert.are.equal("tide: backward: gradient given twice, as argument #2 and by name; " ..
            "pass it once", err(function() y:backward(tide.ones(1), { gradient = tide.ones(1) }) end))
        assert.are.equal("tide: backward: got 5 positional arguments; it takes at most 4 " ..
            "(gradient, retain_graph, create_graph, inputs), then an options table",
            err(function() y:backward(nil, nil, nil, nil, 5) end))
    end)
end)

describe("tide.load's map_location and weights_only", function()
    local path = os.tmpname() .. ".safetensors"
    local m = nn.Linear(2, 2)
    tide.save(path, m:state_dict())
    it("map_location by position, weights_only accepted", function()
        same(tide.load(path, "cpu").weight, m.weight)
        same(tide.load(path, tide.device("cpu"), { weights_only = true }).bias, m.bias)
        same(tide.load(path, { weights_only = false }).weight, m.weight)
    end)
    it("raises on a bad or doubled parameter", function()
        assert.are.equal("tide: load: weights_only must be a boolean, got number",
            err(tide.load, path, { weights_only = 1 }))
        assert.are.equal("tide: load: map_location given twice, as argument #2 and by name; " ..
            "pass it once", err(tide.load, path, "cpu", { map_location = "cpu" }))
    end)
end)
