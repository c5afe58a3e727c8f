-- tide.utils.tensorboard, make_grid and save_image against PyTorch 1.13's SummaryWriter and
-- torchvision 0.14's make_grid / save_image (spec/fixtures/make_tensorboard.py wrote the
-- fixture): every event record equal byte for byte but its wall time (images: equal but their
-- PNG bytes, whose pixels are compared), the projector files equal, grids equal element for
-- element; plus the file format's guarantees (a cut record fails its CRC, the earlier ones
-- read) and the options' checks.
local tide = require("tide")
local core = require("tide.core")
local utils = require("tide.utils")
local tb = require("tide.utils.tensorboard")
local event_file = require("tide.utils.event_file")
local pb = require("tide.utils.protobuf")
local fx = require("spec.fixtures.tensorboard_torch")
local D = require("spec.support.device") -- the device under test (TIDE_TEST_DEVICE) and another

local SummaryWriter = tb.SummaryWriter

local function tmpdir()
    local p = os.tmpname()
    os.remove(p)
    assert(core._mkdir(p))
    return p
end

local function rmtree(p)
    os.execute("rm -rf '" .. p .. "'")
end

-- the files under dir, relative to it
local function files_under(dir)
    local out = {}
    local h = io.popen("cd '" .. dir .. "' && find . -type f")
    for line in h:lines() do
        out[#out + 1] = line:sub(3)
    end
    h:close()
    table.sort(out)
    return out
end

local function input(name)
    local r = fx.inputs[name]
    return tide.tensor(r.data, { dtype = r.dtype }):reshape(r.shape)
end

-- the first differing byte of a and b, for a short failure message
local function same(a, b, what)
    if a == b then
        return
    end
    local i = 1
    while a:sub(i, i) == b:sub(i, i) do
        i = i + 1
    end
    error(("%s differs at byte %d (lengths %d and %d)"):format(what, i, #a, #b), 2)
end

-- a record as a string to compare: the wall time left out, an image's PNG as its pixels, and
-- the entries of the hparams map in one order (Python's protobuf writes a map in hash order)
local NESTED = { [".5"] = true, [".5.1"] = true, [".5.1.4"] = true, [".5.1.9"] = true,
    [".5.1.9.1"] = true, [".5.1.9.1.2"] = true, [".5.1.9.1.2.3"] = true }
local SORTED = { [".5.1.9.1.2.3"] = true } -- SessionStartInfo: map<string, Value> hparams = 1
local function canon_fields(s, path)
    local out = {}
    for _, f in ipairs(pb.decode(s)) do
        local p = path .. "." .. f.num
        local v = f.value
        if p == ".1" then
            v = nil -- Event.wall_time
        elseif NESTED[p] then
            v = "{" .. canon_fields(v, p) .. "}"
        elseif p == ".5.1.4.4" then -- Image.encoded_image_string
            local w, h, c, px = core._png_decode(v)
            v = ("png %dx%dx%d "):format(w, h, c) .. px
        end
        if v ~= nil then
            out[#out + 1] = f.num .. ":" .. f.wire .. ":" .. tostring(v)
        end
    end
    if SORTED[path] then
        table.sort(out)
    end
    return table.concat(out, "|")
end

-- the same calls as the generator's
local function write_log(dir)
    local w = SummaryWriter(dir)
    w:add_scalar("loss", 0.25, 1)
    w:add_scalar("loss", 1.5, 2)
    w:add_scalar("lr", 0.1, 0)
    w:add_scalar("neg", -3.0, -2)
    w:add_scalars("run", { train = 1.0, val = 2.5 }, 5)
    w:add_histogram("w", tide.tensor(fx.hist, { dtype = "float32" }), 3)
    w:add_histogram("w5", tide.tensor(fx.hist, { dtype = "float32" }), 4, { bins = 5 })
    w:add_image("img", input("img_chw"), 1)
    w:add_image("gray", input("img_gray"), 1)
    w:add_image("hw", input("img_hw"), 1, { dataformats = "HW" })
    w:add_image("u8", input("img_hwc_u8"), 1, { dataformats = "HWC" })
    w:add_images("batch", input("batch"), 2)
    w:add_text("note", "hello *tide* \226\156\147", 4)
    w:add_hparams({ bs = 32, lr = 0.1, nesterov = true, opt = "sgd" }, { ["hp/acc"] = 0.75 },
        { run_name = "hp" })
    w:add_embedding(input("emb"), { metadata = { 1, "b", 3.5, 4 }, label_img = input("label_img"),
        global_step = 2, tag = "emb/x" })
    w:add_embedding(input("emb"):mul(1e-5), { global_step = 3 })
    w:close()
end

describe("SummaryWriter against PyTorch's", function()
    local dir, files
    setup(function()
        dir = tmpdir()
        write_log(dir)
        files = files_under(dir)
    end)
    teardown(function()
        rmtree(dir)
    end)

    it("writes one event file per run directory, as PyTorch lays them out", function()
        local runs = {}
        for _, f in ipairs(files) do
            local run, name = f:match("^(.-)/?(events%.out%.tfevents%.[^/]+)$")
            if run then
                runs[#runs + 1] = run == "" and "." or run
                assert.truthy(name:match(
                    "^events%.out%.tfevents%.%d%d%d%d%d%d%d%d%d%d%..+%.%d+%.%d+$"))
            end
        end
        table.sort(runs)
        local want = {}
        for k in pairs(fx.events) do
            want[#want + 1] = k
        end
        table.sort(want)
        assert.same(want, runs)
    end)

    it("writes every record as PyTorch does (all but the wall time)", function()
        local n = 0
        for _, f in ipairs(files) do
            local run = f:match("^(.-)/?events%.out%.tfevents%.[^/]+$")
            if run then
                run = run == "" and "." or run
                local got, err = event_file.read(dir .. "/" .. f)
                assert.is_nil(err)
                local want = fx.events[run]
                assert.equal(#want, #got, "records in " .. run)
                for i = 1, #want do
                    same(canon_fields(got[i], ""), canon_fields(want[i], ""),
                        ("record %d of run %s"):format(i, run))
                    n = n + 1
                end
            end
        end
        assert.is_true(n >= 20)
    end)

    it("writes the projector's files as PyTorch does", function()
        local n = 0
        for name, want in pairs(fx.files) do
            local path = dir .. "/" .. name:gsub("^%./", "")
            local f = assert(io.open(path, "rb"))
            local got = f:read("*a")
            f:close()
            if type(want) == "table" then -- sprite.png: the pixels
                local w, h, c, px = core._png_decode(got)
                assert.same({ want.w, want.h, 3 }, { w, h, c })
                same(px, want.pixels, name)
            else
                same(got, want, name)
            end
            n = n + 1
        end
        assert.equal(5, n)
    end)
end)

describe("event files", function()
    it("frame records with masked CRC32C: a cut record fails, the earlier ones read", function()
        local dir = tmpdir()
        local w = SummaryWriter(dir, { max_queue = 1 })
        for i = 1, 3 do
            w:add_scalar("x", i, i)
        end
        local path = w._file.path
        w:close()
        local all = assert(io.open(path, "rb")):read("*a")
        local recs, err = event_file.read(path)
        assert.is_nil(err)
        assert.equal(4, #recs) -- file_version + 3 scalars
        -- cut the last record short, as a crash mid-write would
        local f = assert(io.open(path, "wb"))
        f:write(all:sub(1, #all - 5))
        f:close()
        recs, err = event_file.read(path)
        assert.equal(3, #recs)
        assert.truthy(err:find("truncated record data", 1, true))
        -- a flipped byte in the data fails the data CRC
        local i = #all - 6
        f = assert(io.open(path, "wb"))
        f:write(all:sub(1, i - 1) .. string.char((all:byte(i) + 1) % 256) .. all:sub(i + 1))
        f:close()
        recs, err = event_file.read(path)
        assert.equal(3, #recs)
        assert.truthy(err:find("data CRC mismatch", 1, true))
        rmtree(dir)
    end)

    it("uses CRC32C (Castagnoli)", function()
        assert.equal(0xE3069283, core._crc32c("123456789"))
    end)

    it("writes queued records at max_queue, at flush() and at close()", function()
        local dir = tmpdir()
        local w = SummaryWriter(dir, { max_queue = 3, flush_secs = 1000 })
        local path = w._file.path
        local function on_disk()
            return #(event_file.read(path))
        end
        assert.equal(1, on_disk()) -- the file_version record, flushed at once
        w:add_scalar("a", 1, 1)
        w:add_scalar("a", 2, 2)
        assert.equal(1, on_disk())
        w:add_scalar("a", 3, 3)
        assert.equal(4, on_disk())
        w:add_scalar("a", 4, 4)
        w:flush()
        assert.equal(5, on_disk())
        w:add_scalar("a", 5, 5)
        getmetatable(w).__close(w) -- what `local w <close> = ...` runs at the end of its scope
        assert.equal(6, on_disk())
        local ok, err = pcall(w.add_scalar, w, "a", 6, 6)
        assert.is_false(ok)
        assert.truthy(err:find("tide: add_scalar: the SummaryWriter is closed; make a new one", 1,
            true))
        rmtree(dir)
    end)

    it("closes at garbage collection", function()
        local dir = tmpdir()
        local w = SummaryWriter(dir, { flush_secs = 1000 })
        local path = w._file.path
        w:add_scalar("a", 1, 1)
        w = nil
        collectgarbage()
        collectgarbage()
        assert.equal(2, #(event_file.read(path)))
        rmtree(dir)
    end)
end)

describe("tensors on the device under test and another", function()
    it("are copied to the host once and logged as host tensors are", function()
        local function log(d)
            local dir = tmpdir()
            local w = SummaryWriter(dir)
            w:add_scalar("s", tide.tensor({ 0.5 }, { dtype = "float32" }):to(d), 1)
            w:add_histogram("h", tide.tensor(fx.hist, { dtype = "float32" }):to(d), 1)
            w:add_image("i", input("img_chw"):to(d), 1)
            w:add_images("b", input("batch"):to(d), 1)
            w:add_embedding(input("emb"):to(d), { label_img = input("label_img"):to(d) })
            local path = w._file.path
            w:close()
            local recs = event_file.read(path)
            local out = {}
            for i = 2, #recs do
                out[#out + 1] = canon_fields(recs[i], "")
            end
            local f = assert(io.open(dir .. "/00000/default/tensors.tsv", "rb"))
            out[#out + 1] = f:read("*a")
            f:close()
            local png = dir .. "/grid.png"
            utils.save_image(input("batch"):to(d), png)
            f = assert(io.open(png, "rb"))
            out[#out + 1] = select(4, core._png_decode(f:read("*a")))
            f:close()
            rmtree(dir)
            return out
        end
        local here = log("cpu")
        -- one copy to the host per entry, whatever the entry does with the tensor
        local dev = D.name == "cpu" and D.other or D.name
        local dir = tmpdir()
        local w = SummaryWriter(dir)
        for _, entry in ipairs({
            function() w:add_image("i", input("img_chw"):to(dev), 1) end,
            function() w:add_images("b", input("batch"):to(dev), 1) end,
            function()
                w:add_histogram("h", tide.tensor(fx.hist, { dtype = "float32" }):to(dev), 1)
            end,
            function() utils.save_image(input("batch"):to(dev), dir .. "/g.png") end,
        }) do
            tide.reset_transfer_stats()
            entry()
            assert.equal(1, tide.transfer_stats().d2h_count)
        end
        w:close()
        rmtree(dir)
        for _, dev in ipairs({ D.name, D.other }) do
            local there = log(dev)
            assert.equal(#here, #there)
            for i = 1, #here do
                same(there[i], here[i], ("entry %d on %s"):format(i, dev))
            end
        end
    end)
end)

describe("SummaryWriter's checks", function()
    it("rejects unknown options, naming the key", function()
        assert.has_error(function()
            SummaryWriter("/tmp/x", { flush_sec = 1 })
        end)
        local ok, err = pcall(SummaryWriter, "/tmp/x", { flush_sec = 1 })
        assert.is_false(ok)
        assert.truthy(err:find("tide: SummaryWriter: unknown option \"flush_sec\"", 1, true))
        assert.truthy(err:find("^spec/tensorboard_spec%.lua:%d+: ") or err:find("^tide:"), err)
        local dir = tmpdir()
        local w = SummaryWriter(dir)
        ok, err = pcall(w.add_histogram, w, "h", tide.ones(3), 1, { bin = 3 })
        assert.truthy(err:find("tide: add_histogram: unknown option \"bin\"", 1, true))
        ok, err = pcall(w.add_image, w, "i", tide.ones(3, 2, 2), 1, { dataformat = "CHW" })
        assert.truthy(err:find("tide: add_image: unknown option \"dataformat\"", 1, true))
        ok, err = pcall(w.add_embedding, w, tide.ones(3, 2), { labels = {} })
        assert.truthy(err:find("tide: add_embedding: unknown option \"labels\"", 1, true))
        ok, err = pcall(utils.make_grid, tide.ones(3, 2, 2), { nrows = 2 })
        assert.truthy(err:find("tide: make_grid: unknown option \"nrows\"", 1, true))
        ok, err = pcall(w.add_image, w, "i", tide.ones(3, 2, 2), 1, { dataformats = "CWX" })
        assert.truthy(err:find("tide: add_image: dataformats \"CWX\"", 1, true))
        ok, err = pcall(w.add_scalar, w, "s", "high", 1)
        assert.truthy(err:find("tide: add_scalar: value must be a number", 1, true))
        ok, err = pcall(w.add_histogram, w, "h", { 1, tide.ones(2) }, 1)
        assert.truthy(err:find("tide: add_histogram: values[2] is a tensor; pass a list of "
            .. "numbers or one tensor", 1, true), err)
        ok, err = pcall(w.add_histogram, w, "h", {}, 1)
        assert.truthy(err:find("tide: add_histogram: the list has no element", 1, true), err)
        w:close()
        rmtree(dir)
    end)

    it("writes a bool embedding as Python's str() does (True, False)", function()
        local dir = tmpdir()
        local w = SummaryWriter(dir)
        w:add_embedding(tide.tensor({ { true, false }, { false, false } }), { metadata = { true, 2 } })
        w:close()
        local f = assert(io.open(dir .. "/00000/default/tensors.tsv", "rb"))
        assert.equal("True\tFalse\nFalse\tFalse\n", f:read("*a"))
        f:close()
        f = assert(io.open(dir .. "/00000/default/metadata.tsv", "rb"))
        assert.equal("True\n2\n", f:read("*a"))
        f:close()
        rmtree(dir)
    end)

    it("defaults log_dir to runs/<Mon><DD>_<HH>-<MM>-<SS>_<host><comment>", function()
        local d = tb._default_log_dir("_x")
        assert.truthy(d:match("^runs/%u%l%l%d%d_%d%d%-%d%d%-%d%d_.+_x$"), d)
    end)
end)

describe("make_grid and save_image against torchvision 0.14's", function()
    for _, c in ipairs(fx.grids) do
        it(c.name, function()
            local x = tide.tensor(c.x, { dtype = "float32" }):reshape(c.shape)
            local opts = {}
            for k, v in pairs(c.opts) do
                opts[k] = v
            end
            local g = utils.make_grid(x, opts)
            assert.same(c.out_shape, g:size())
            local got = g:reshape(-1):totable()
            for i = 1, #c.out do
                if got[i] ~= c.out[i] then
                    error(("element %d: %.9g, torchvision %.9g"):format(i, got[i], c.out[i]))
                end
            end
            local path = os.tmpname()
            utils.save_image(x, path, opts)
            local f = assert(io.open(path, "rb"))
            local png = f:read("*a")
            f:close()
            os.remove(path)
            local w, h, ch, px = core._png_decode(png)
            assert.same({ c.png_hwc[2], c.png_hwc[1], c.png_hwc[3] }, { w, h, ch })
            same(px, c.pixels, "pixels")
        end)
    end
end)

describe("PNG", function()
    it("round-trips: signature, IHDR, chunk CRCs, pixels", function()
        for _, ch in ipairs({ 1, 2, 3, 4 }) do
            local t = tide.randint(0, 256, { 5, 7, ch }, { dtype = "uint8" })
            local png = core._png_encode(t)
            assert.equal("\137PNG\r\n\26\n", png:sub(1, 8))
            assert.equal("IHDR", png:sub(13, 16))
            local w, h, c, px = core._png_decode(png)
            assert.same({ 7, 5, ch }, { w, h, c })
            local bytes = {}
            for i, v in ipairs(t:reshape(-1):totable()) do
                bytes[i] = string.char(v)
            end
            same(px, table.concat(bytes), "pixels")
            -- a changed byte in IDAT's data fails its CRC
            local i = #png - 20
            local bad = png:sub(1, i - 1) .. string.char((png:byte(i) + 1) % 256) .. png:sub(i + 1)
            assert.has_error(function()
                core._png_decode(bad)
            end)
        end
    end)

    it("tide.utils is a lazy field of tide", function()
        assert.equal(utils, tide.utils)
        assert.equal(tb, tide.utils.tensorboard)
    end)
end)
