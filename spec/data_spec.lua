-- data_spec.lua — tide.data: Dataset, TensorDataset, DataLoader (batching, shuffling,
-- drop_last, devices) and the Fashion-MNIST IDX reader on tiny hand-made files.
local tide = require("tide")
local data = require("tide.data")

local function tmpdir()
    local d = os.tmpname()
    os.remove(d)
    assert(os.execute("mkdir -p '" .. d .. "'"))
    return d
end

local function write(path, bytes)
    local f = assert(io.open(path, "wb"))
    f:write(bytes)
    f:close()
end

local host = require("spec.support.host")

-- n as 4 big-endian bytes (string.pack(">I4", n) before 5.3)
local function be32(n)
    return string.char(math.floor(n / 2 ^ 24) % 256, math.floor(n / 2 ^ 16) % 256,
        math.floor(n / 2 ^ 8) % 256, n % 256)
end

-- an IDX file: magic, dims (big-endian uint32), then bytes
local function idx(magic, dims, bytes)
    local parts = { be32(magic) }
    for _, d in ipairs(dims) do
        parts[#parts + 1] = be32(d)
    end
    parts[#parts + 1] = string.char(host.unpack(bytes))
    return table.concat(parts)
end

local function range(a, b)
    local t = {}
    for i = a, b do
        t[#t + 1] = i
    end
    return t
end

local function flat(t)
    return t:contiguous():view(-1):totable()
end

describe("tide.data", function()
    it("is tide.data", function()
        assert.are.equal(data, tide.data)
        assert.is_table(data.DataLoader) -- a class, called to make a loader
        assert.is_function(data.fashion_mnist)
    end)

    it("is tide.utils.data too, torch.utils.data's place in ported scripts", function()
        assert.are.equal(tide.data, tide.utils.data)
    end)
end)

describe("Dataset", function()
    local Squares = data.Dataset:extend("Squares")
    function Squares:init(n)
        self.n = n
    end
    function Squares:len()
        return self.n
    end
    function Squares:get(i)
        return tide.tensor({ i, -i }), i * i
    end

    it("has a length, get(i) and ds[i] #lua53", function()
        local ds = Squares(5)
        assert.are.equal(5, #ds)
        local x, y = ds:get(3)
        assert.are.same({ 3, -3 }, x:totable())
        assert.are.equal(9, y)
        local s = ds[4]
        assert.are.same({ 4, -4 }, s[1]:totable())
        assert.are.equal(16, s[2])
        assert.are.equal("Squares(5 samples)", tostring(ds))
    end)

    it("says which method a subclass lacks #lua53", function()
        local Empty = data.Dataset:extend("Empty")
        local ok, err = pcall(function() return #Empty() end)
        assert.is_false(ok)
        assert.matches("tide: Empty: len%(%) is not defined", err)
    end)

    it("is batched by stacking samples when it has no batch method", function()
        local loader = data.DataLoader(Squares(5), { batch_size = 2 })
        local xs, ys = {}, {}
        for x, y in loader:iter() do
            xs[#xs + 1] = x:totable()
            ys[#ys + 1] = y:totable()
        end
        assert.are.same({ { { 1, -1 }, { 2, -2 } }, { { 3, -3 }, { 4, -4 } }, { { 5, -5 } } }, xs)
        assert.are.same({ { 1, 4 }, { 9, 16 }, { 25 } }, ys)
    end)
end)

describe("TensorDataset", function()
    it("pairs rows of its tensors #lua53", function()
        local x = tide.arange(0, 12, { dtype = "float32" }):view(6, 2)
        local y = tide.arange(1, 7, { dtype = "int64" })
        local ds = data.TensorDataset(x, y)
        assert.are.equal(6, #ds)
        local xi, yi = ds:get(2)
        assert.are.same({ 2, 3 }, xi:totable())
        assert.are.equal(2, yi:item())
        local bx, by = ds:batch(tide.tensor({ 6, 1, 3 }))
        assert.are.same({ { 10, 11 }, { 0, 1 }, { 4, 5 } }, bx:totable())
        assert.are.same({ 6, 1, 3 }, by:totable())
    end)

    it("refuses tensors of different lengths, naming both", function()
        local ok, err = pcall(data.TensorDataset, tide.zeros(4, 2), tide.zeros(3))
        assert.is_false(ok)
        assert.matches("tide: TensorDataset: tensor 2 has 3 samples %(size of dim 1%) but tensor 1 has 4", err)
    end)

    it("narrows without copying #lua53", function()
        local x = tide.arange(0, 10, { dtype = "float32" })
        local ds = data.TensorDataset(x):narrow(3, 4)
        assert.are.equal(4, #ds)
        assert.are.same({ 2, 3, 4, 5 }, ds.tensors[1]:totable())
        x:fill_(7)
        assert.are.equal(7, ds:get(1):item())
    end)
end)

describe("DataLoader", function()
    local x = tide.arange(0, 20, { dtype = "float32" }):view(10, 2) -- row i: 2(i-1), 2(i-1)+1
    local y = tide.arange(1, 11, { dtype = "int64" })               -- label i = i
    local ds = data.TensorDataset(x, y)

    local function epoch(loader)
        local ids, sizes = {}, {}
        for bx, by in loader:iter() do
            sizes[#sizes + 1] = by:size(1)
            local xs, ys = bx:totable(), by:totable()
            for k, id in ipairs(ys) do
                -- the rows stay paired with their labels through the shuffle
                assert.are.same({ 2 * (id - 1), 2 * (id - 1) + 1 }, xs[k])
                ids[#ids + 1] = id
            end
        end
        return ids, sizes
    end

    it("batches in order, the last batch smaller #lua53", function()
        local loader = data.DataLoader(ds, { batch_size = 4 })
        assert.are.equal(3, #loader)
        local ids, sizes = epoch(loader)
        assert.are.same({ 4, 4, 2 }, sizes)
        assert.are.same(range(1, 10), ids)
        local first = loader:iter()()
        assert.are.same({ 4, 2 }, first.shape)
        assert.are.equal("float32", first.dtype)
    end)

    it("drops the last partial batch with drop_last #lua53", function()
        local loader = data.DataLoader(ds, { batch_size = 4, drop_last = true })
        assert.are.equal(2, #loader)
        local ids, sizes = epoch(loader)
        assert.are.same({ 4, 4 }, sizes)
        assert.are.same(range(1, 8), ids)
        assert.are.equal(1, #data.DataLoader(ds, { batch_size = 10, drop_last = true }))
        assert.are.equal(0, #data.DataLoader(ds, { batch_size = 11, drop_last = true }))
        assert.are.equal(1, #data.DataLoader(ds, { batch_size = 11 }))
    end)

    it("shuffles every sample exactly once per epoch, reproducibly from the seed", function()
        local a = data.DataLoader(ds, { batch_size = 3, shuffle = true, seed = 42 })
        local a1 = epoch(a)
        local a2 = epoch(a)
        local sorted = { table.unpack(a1) }
        table.sort(sorted)
        assert.are.same(range(1, 10), sorted)
        sorted = { table.unpack(a2) }
        table.sort(sorted)
        assert.are.same(range(1, 10), sorted)
        assert.are_not.same(a1, a2)             -- a new order each epoch
        assert.are_not.same(range(1, 10), a1)   -- 1 in 10! to fail by chance
        local b = data.DataLoader(ds, { batch_size = 5, shuffle = true, seed = 42 })
        assert.are.same(a1, (epoch(b)))         -- same seed, same sequence of epochs
        assert.are.same(a2, (epoch(b)))
        local c = data.DataLoader(ds, { batch_size = 3, shuffle = true, seed = 43 })
        assert.are_not.same(a1, (epoch(c)))
    end)

    it("gives fresh batches: writing to one leaves the dataset alone", function()
        local loader = data.DataLoader(ds, { batch_size = 2 })
        local bx = loader:iter()()
        bx:fill_(-1)
        assert.are.same({ 0, 1 }, x[1]:totable())
    end)

    it("keeps batches on the dataset's device", function()
        if not os.getenv("TIDE_CPU_DEVICES") then
            pending("needs TIDE_CPU_DEVICES=2 (spec/support/run_all.sh sets it)")
            return
        end
        local ds1 = ds:to("cpu:1")
        local loader = data.DataLoader(ds1, { batch_size = 4, shuffle = true, seed = 1 })
        local n = 0
        for bx, by in loader:iter() do
            assert.are.equal("cpu:1", tostring(bx.device))
            assert.are.equal("cpu:1", tostring(by.device))
            n = n + by:size(1)
        end
        assert.are.equal(10, n)
    end)

    it("accepts pin_memory without CUDA (and then does nothing)", function()
        local loader = data.DataLoader(ds, { batch_size = 5, pin_memory = true })
        local ids = epoch(loader)
        assert.are.same(range(1, 10), ids)
    end)

    it("rejects bad options with the caller's line", function()
        local ok, err = pcall(function()
            local l = data.DataLoader(ds, { batch_size = 0 }) -- not a tail call: keeps this line
            return l
        end)
        assert.is_false(ok)
        assert.matches("data_spec.lua:%d+: tide: DataLoader: batch_size = 0; expected an integer >= 1", err)
        ok, err = pcall(data.DataLoader, ds, { batchsize = 4 })
        assert.is_false(ok)
        assert.matches('data_spec.lua:%d+: tide: DataLoader: unknown option "batchsize" %(did you mean "batch_size"%?%)', err)
        ok, err = pcall(data.DataLoader, ds, { collate_fn = 3 })
        assert.is_false(ok)
        assert.matches('data_spec.lua:%d+: tide: DataLoader: collate_fn must be a function', err)
        ok, err = pcall(data.DataLoader, 42)
        assert.is_false(ok)
        assert.matches("tide: DataLoader: expected a dataset", err)
    end)
end)

describe("fashion_mnist on hand-made IDX files", function()
    -- 3 training and 2 test images of 2x2 pixels
    local train_px = { 0, 255, 51, 102, 1, 2, 3, 4, 255, 255, 0, 0 }
    local test_px = { 10, 20, 30, 40, 50, 60, 70, 80 }
    local function make(dir, opts)
        opts = opts or {}
        write(dir .. "/train-images-idx3-ubyte", idx(opts.train_magic or 0x803, { 3, 2, 2 }, train_px))
        write(dir .. "/train-labels-idx1-ubyte", idx(0x801, { opts.ntrain_labels or 3 },
            opts.train_labels or { 9, 0, 3 }))
        write(dir .. "/t10k-images-idx3-ubyte", idx(0x803, { 2, 2, 2 }, test_px))
        write(dir .. "/t10k-labels-idx1-ubyte", idx(0x801, { 2 }, { 1, 2 }))
    end

    it("reads images as float32 in [0, 1] [N, 1, H, W] and labels as 1-based int64 #lua53", function()
        local dir = tmpdir()
        make(dir)
        local train, test, classes = data.fashion_mnist(dir)
        assert.are.equal(3, #train)
        assert.are.equal(2, #test)
        local x, y = train.tensors[1], train.tensors[2]
        assert.are.same({ 3, 1, 2, 2 }, x.shape)
        assert.are.equal("float32", x.dtype)
        assert.are.equal("int64", y.dtype)
        local want = { 0, 1, 0.2, 0.4, 1 / 255, 2 / 255, 3 / 255, 4 / 255, 1, 1, 0, 0 }
        for i, v in ipairs(flat(x)) do
            assert.is_true(math.abs(v - want[i]) < 1e-6, "pixel " .. i)
        end
        assert.are.same({ 10, 1, 4 }, y:totable())
        assert.are.same({ 2, 3 }, test.tensors[2]:totable())
        assert.are.equal("Ankle boot", classes[10])
        assert.are.equal("T-shirt/top", classes[1])
        assert.are.equal(10, #classes)
        local flatx = data.fashion_mnist(dir, { flatten = true }).tensors[1]
        assert.are.same({ 3, 4 }, flatx.shape)
        os.execute("rm -rf '" .. dir .. "'")
    end)

    it("reads gzipped files", function()
        local dir = tmpdir()
        make(dir)
        assert(os.execute("gzip '" .. dir .. "'/*"))
        local train, test = data.fashion_mnist(dir)
        assert.are.same({ 10, 1, 4 }, train.tensors[2]:totable())
        assert.is_true(math.abs(80 / 255 - test.tensors[1][2]:view(-1)[4]:item()) < 1e-6)
        os.execute("rm -rf '" .. dir .. "'")
    end)

    it("names the file and the magic numbers when images and labels are swapped", function()
        local dir = tmpdir()
        make(dir, { train_magic = 0x801 })
        local ok, err = pcall(function()
            local train = data.fashion_mnist(dir)
            return train
        end)
        assert.is_false(ok)
        assert.matches("data_spec.lua:%d+: tide: fashion_mnist: ", err)
        assert.matches("train%-images%-idx3%-ubyte: bad magic 0x00000801, expected 0x00000803", err)
        os.execute("rm -rf '" .. dir .. "'")
    end)

    it("refuses a truncated file", function()
        local dir = tmpdir()
        make(dir)
        write(dir .. "/t10k-images-idx3-ubyte", idx(0x803, { 2, 2, 2 }, { 1, 2, 3 }))
        local ok, err = pcall(data.fashion_mnist, dir)
        assert.is_false(ok)
        assert.matches("t10k%-images%-idx3%-ubyte: truncated: the header promises 8 bytes of data, found 3", err)
        os.execute("rm -rf '" .. dir .. "'")
    end)

    it("refuses labels that do not match the images", function()
        local dir = tmpdir()
        make(dir, { ntrain_labels = 2, train_labels = { 1, 2 } })
        local ok, err = pcall(data.fashion_mnist, dir)
        assert.is_false(ok)
        assert.matches("2 labels, but .*train%-images%-idx3%-ubyte holds 3 images", err)
        make(dir, { train_labels = { 1, 10, 2 } })
        ok, err = pcall(data.fashion_mnist, dir)
        assert.is_false(ok)
        assert.matches("label 10 out of range 0..9", err)
        os.execute("rm -rf '" .. dir .. "'")
    end)

    it("says how to get the data when the directory lacks it", function()
        local ok, err = pcall(data.fashion_mnist, "/nonexistent/fmnist")
        assert.is_false(ok)
        assert.matches("tide: fashion_mnist: /nonexistent/fmnist: train%-images%-idx3%-ubyte%[.gz%] not found; install the Debian package dataset%-fashion%-mnist", err)
    end)
end)

describe("fashion_mnist from the Debian package", function()
    local dir = "/usr/share/datasets/fashion-mnist"
    local f = io.open(dir .. "/train-labels-idx1-ubyte.gz", "rb")
    if f then f:close() end

    it("has 60000 + 10000 images, ankle boots first", function()
        if not f then
            pending("dataset-fashion-mnist is not installed")
            return
        end
        local train, test, classes = data.fashion_mnist()
        assert.are.same({ 60000, 1, 28, 28 }, train.tensors[1].shape)
        assert.are.same({ 10000, 1, 28, 28 }, test.tensors[1].shape)
        local y = train.tensors[2]
        assert.are.equal(1, y:min():item())
        assert.are.equal(10, y:max():item())
        assert.are.same({ 10, 1, 1 }, y:narrow(1, 1, 3):totable()) -- 0-based 9, 0, 0 in the file
        assert.are.same({ 10, 3, 2 }, test.tensors[2]:narrow(1, 1, 3):totable())
        assert.are.equal("Ankle boot", classes[y[1]:item()])
        local x = train.tensors[1]
        assert.are.equal(0, x:min():item())
        assert.are.equal(1, x:max():item())
    end)
end)

describe("dataset indexing errors", function()
    it("ds[i] out of range points at the user's line", function()
        local ds = data.TensorDataset(tide.zeros(5, 1))
        local ok, err = pcall(function() return ds[0] end)
        assert.is_false(ok)
        assert.matches("data_spec%.lua:%d+: tide: TensorDataset: index 0 out of range 1..5", err)
    end)
end)

describe("DataLoader over samples read with get(i)", function()
    it("batches boolean fields, and a sample it cannot batch raises at the user's loop", function()
        local S = data.Dataset:extend("S")
        function S:len() return 3 end
        function S:get(i) return tide.zeros(i), i % 2 == 0 end
        local B = data.Dataset:extend("B")
        function B:len() return 2 end
        function B:get(i) return tide.zeros(1), i == 2 end
        for _, y in data.DataLoader(B(), { batch_size = 2 }):iter() do
            assert.are.equal("bool", y.dtype)
            assert.are.same({ false, true }, y:totable())
        end
        local ok, err = pcall(function()
            for _ in data.DataLoader(S(), { batch_size = 3 }):iter() do end
        end)
        assert.is_false(ok)
        assert.matches("data_spec%.lua:%d+: tide: DataLoader: cannot batch field 1", err)
    end)
end)

describe("DataLoader shuffling without a seed", function()
    it("follows tide.manual_seed, as PyTorch's follows torch.manual_seed", function()
        local ds = data.TensorDataset(tide.arange(1, 101))
        local function first_batch()
            tide.manual_seed(7)
            local loader = data.DataLoader(ds, { batch_size = 100, shuffle = true })
            local x = loader:iter()()
            return x:totable()
        end
        assert.are.same(first_batch(), first_batch())
    end)
end)
