-- safetensors_spec.lua — tide.save / tide.load: round trips of every dtype, views, tensors on
-- other devices, metadata, state_dict; the reference package's files; malformed files.
local tide = require("tide")

local function tmpfile()
    return os.tmpname() .. ".safetensors"
end

local function slurp(path)
    local f = assert(io.open(path, "rb"))
    local s = f:read("*a")
    f:close()
    return s
end

local function write(path, bytes)
    local f = assert(io.open(path, "wb"))
    f:write(bytes)
    f:close()
end

-- a file from a header string and n data bytes
local function st_file(path, json, ndata)
    write(path, string.pack("<I8", #json) .. json .. string.rep("\0", ndata))
end

describe("tide.save / tide.load", function()
    local path
    before_each(function() path = tmpfile() end)
    after_each(function() os.remove(path) end)

    it("round-trips every dtype with its values and shape #lua53", function()
        local src = {
            f32 = tide.tensor({ { 1.5, -2 }, { 3, 4.25 } }),
            f64 = tide.tensor({ 1e300, -1e-300, 0.1 }, { dtype = "float64" }),
            f16 = tide.tensor({ 1, -2, 0.5, 65504 }, { dtype = "float16" }),
            bf16 = tide.tensor({ 1, -2, 0.5, 3 }, { dtype = "bfloat16" }),
            i32 = tide.tensor({ -2147483648, 2147483647 }, { dtype = "int32" }),
            i64 = tide.tensor({ math.mininteger, math.maxinteger, 0 }),
            u8 = tide.tensor({ 0, 1, 255 }, { dtype = "uint8" }),
            b = tide.tensor({ true, false, true }),
            scalar = tide.tensor(7.5),
        }
        tide.save(path, src)
        local back, meta = tide.load(path)
        assert.are.same({}, meta)
        local n = 0
        for k, t in pairs(src) do
            n = n + 1
            assert.is_not_nil(back[k], k)
            assert.are.equal(t.dtype, back[k].dtype, k)
            assert.are.same(t.shape, back[k].shape, k)
            assert.are.same(t:totable(), back[k]:totable(), k)
            assert.are.equal("cpu", tostring(back[k].device))
        end
        local m = 0
        for _ in pairs(back) do m = m + 1 end
        assert.are.equal(n, m)
        assert.are.same({ 1, -2, 0.5, 65504 }, back.f16:totable())
        assert.are.equal(math.mininteger, back.i64[1]:item())
    end)

    it("writes a view in its logical order", function()
        local a = tide.arange(0, 6, { dtype = "float32" }):view(2, 3)
        tide.save(path, { at = a:t(), row = a[2], col = a:select(2, 3) })
        local back = tide.load(path)
        assert.are.same({ { 0, 3 }, { 1, 4 }, { 2, 5 } }, back.at:totable())
        assert.are.same({ 3, 4, 5 }, back.row:totable())
        assert.are.same({ 2, 5 }, back.col:totable())
    end)

    it("saves from another device and loads onto the one asked for", function()
        if not os.getenv("TIDE_CPU_DEVICES") then
            pending("needs TIDE_CPU_DEVICES=2 (spec/support/run_all.sh sets it)")
            return
        end
        local w = tide.tensor({ { 1, 2 }, { 3, 4 } }, { device = "cpu:1" })
        tide.save(path, { w = w })
        -- restored to the device it was saved from, as torch.load (ported_scripts14_spec)
        local back = tide.load(path)
        assert.are.equal("cpu:1", tostring(back.w.device))
        back = tide.load(path, "cpu")
        assert.are.equal("cpu", tostring(back.w.device))
        assert.are.same({ { 1, 2 }, { 3, 4 } }, back.w:totable())
        local there = tide.load(path, { device = "cpu:1" })
        assert.are.equal("cpu:1", tostring(there.w.device))
        assert.are.same({ { 1, 2 }, { 3, 4 } }, there.w:cpu():totable())
        there = tide.load(path, { device = tide.device("cpu:1") })
        assert.are.equal("cpu:1", tostring(there.w.device))
    end)

    it("keeps string metadata", function()
        tide.save(path, { x = tide.zeros(1) }, { epoch = 3, note = "hello" })
        local _, meta = tide.load(path)
        assert.are.same({ epoch = "3", note = "hello" }, meta)
    end)

    it("gives the same bytes for the same table", function()
        local t = { b = tide.ones(2), a = tide.zeros(3), c = tide.tensor({ 1, 2 }) }
        tide.save(path, t)
        local one = slurp(path)
        tide.save(path, t)
        assert.are.equal(one, slurp(path))
    end)

    it("round-trips a model's state_dict", function()
        local nn = tide.nn
        tide.manual_seed(1)
        local m1 = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
        tide.manual_seed(2)
        local m2 = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
        local x = tide.randn(5, 4)
        assert.are_not.same(m1(x):totable(), m2(x):totable())
        tide.save(path, m1:state_dict())
        m2:load_state_dict((tide.load(path)))
        assert.are.same(m1(x):totable(), m2(x):totable())
    end)

    it("refuses what a checkpoint cannot hold, at the caller's line", function()
        local ok, err = pcall(function() tide.save(path, { w = print }) end)
        assert.is_false(ok)
        assert.matches("safetensors_spec.lua:%d+: tide: save: .*: w is a function that is not "
            .. "one of tide's %(a closure, a hook, your own%); a checkpoint holds no code", err)
        ok, err = pcall(tide.save, path, { cfg = { dev = tide.device("cpu") } })
        assert.matches("tide: save: .*: cfg%.dev is a userdata %(a tide.Device%); save its name, "
            .. "tostring%(device%)", err)
        ok, err = pcall(tide.save, path, { opt = tide.optim.SGD({ tide.zeros(1) }, { lr = 1 }) })
        assert.matches("tide: save: .*: opt is a SGD object; save its state_dict%(%) instead", err)
        local loop = {}
        loop.again = { loop }
        ok, err = pcall(tide.save, path, { a = loop })
        assert.matches("tide: save: .*: a%.again%.1 holds the table it is in %(a cycle%); a "
            .. "checkpoint is a tree", err)
        ok, err = pcall(tide.save, path, { [{}] = 1 })
        assert.matches("tide: save: .*: the checkpoint has a key that is a table; keys must be "
            .. "strings, numbers or booleans", err)
        ok, err = pcall(tide.save, path, { n = 1 }, { ["tide-tree"] = "x" })
        assert.matches('tide: save: .*: metadata key "tide%-tree" is tide\'s', err)
        ok, err = pcall(tide.save, path, tide.zeros(1))
        assert.matches("tide: save: expected a table of name %-> tensor .* got a tensor %(save "
            .. "{name = tensor}%)", err)
        assert.is_nil(io.open(path, "rb"))
        ok, err = pcall(function() tide.save("/nonexistent-dir/m.safetensors", { w = tide.zeros(1) }) end)
        assert.is_false(ok)
        assert.matches("safetensors_spec.lua:%d+: tide: save: /nonexistent%-dir/m.safetensors: cannot open for writing", err)
        -- torch.save(obj, f)'s order, ported as it is, saves the same file
        tide.save({ w = tide.full({ 2 }, 3) }, path .. ".swapped")
        assert.are.same({ 3, 3 }, tide.load(path .. ".swapped").w:tolist())
        os.remove(path .. ".swapped")
        ok, err = pcall(function() tide.save(tide.zeros(1), path .. ".swapped") end)
        assert.matches("safetensors_spec.lua:%d+: tide: save: expected a table of name %-> " ..
            "tensor .* got a tensor %(save {name = tensor}%)", err)
        assert.is_nil(io.open(path .. ".swapped", "rb"))
        ok, err = pcall(tide.save, 42, { w = tide.zeros(1) })
        assert.matches("tide: save: path must be a string, got number$", err)
    end)
end)

describe("checkpoint trees (torch.save of a dict)", function()
    local path
    before_each(function() path = tmpfile() end)
    after_each(function() os.remove(path) end)

    it("save a model, an optimizer and plain values, and resume training exactly", function()
        tide.manual_seed(5)
        local m = tide.nn.Linear(3, 2)
        local opt = tide.optim.Adam(m:parameters(), { lr = 0.1 })
        local x = tide.randn(4, 3)
        local function step(model, o)
            o:zero_grad()
            model(x):pow(2):sum():backward()
            o:step()
        end
        step(m, opt)
        tide.save(path, { model = m:state_dict(), optimizer = opt:state_dict(), epoch = 7,
            best = 0.125, tag = "run 1", flags = { true, false }, [2] = -3,
            odd = { 1 / 0, -1 / 0, 2 ^ 60 + 0.0, 1e-310, "tab\tand\0zero", "é" }, empty = {},
            neg0 = -1 / math.huge }, -- -0.0 (Lua 5.1 folds the literal into 0)
            { note = "kept" })
        local ck, meta = tide.load(path)
        assert.are.equal(7, ck.epoch)
        assert.are.equal(0.125, ck.best)
        assert.are.equal("run 1", ck.tag)
        assert.are.same({ true, false }, ck.flags)
        assert.are.equal(-3, ck[2])
        assert.are.same({ 1 / 0, -1 / 0, 2 ^ 60, 1e-310, "tab\tand\0zero", "é" }, ck.odd)
        assert.are.same({}, ck.empty)
        assert.are.equal(-1 / 0, 1 / ck.neg0) -- the sign of zero kept
        assert.are.same({ note = "kept" }, meta)
        -- a second model resumed from the file takes the same next step as the first
        local m2 = tide.nn.Linear(3, 2)
        local opt2 = tide.optim.Adam(m2:parameters(), { lr = 0.1 })
        m2:load_state_dict(ck.model)
        opt2:load_state_dict(ck.optimizer)
        step(m, opt)
        step(m2, opt2)
        assert.are.same(m.weight:totable(), m2.weight:totable())
        assert.are.same(m.bias:totable(), m2.bias:totable())
    end)

    it("keep integers and floats apart #lua53", function()
        tide.save(path, { i = 3, f = 3.0, big = math.maxinteger })
        local ck = tide.load(path)
        assert.are.equal("integer", math.type(ck.i))
        assert.are.equal("float", math.type(ck.f))
        assert.are.equal(math.maxinteger, ck.big)
    end)

    it("write each tensor once under its path, and a tensor reached twice stays one", function()
        local w = tide.tensor({ 1.5, 2.5 })
        tide.save(path, { enc = { w = w }, dec = { w = w }, list = { tide.ones(2) } })
        local ck = tide.load(path)
        assert.is_true(rawequal(ck.enc.w, ck.dec.w))
        assert.are.same({ 1.5, 2.5 }, ck.dec.w:totable())
        assert.are.same({ 1, 1 }, ck.list[1]:totable())
        -- what any safetensors reader sees: the tensors under their paths
        local flat = tide.safetensors_load(path)
        local names = {}
        for k in pairs(flat) do names[#names + 1] = k end
        table.sort(names)
        assert.are.same({ "dec.w", "list.1" }, names)
    end)

    it("keep a tied weight of a state_dict one tensor (two names, one view)", function()
        local emb = tide.nn.Embedding(5, 3)
        local head = tide.nn.Linear(3, 5, { bias = false })
        head.weight = emb.weight
        local sd = tide.nn.Sequential(emb, head):state_dict()
        -- two tensor objects of one storage: written once
        assert.is_false(rawequal(sd["1.weight"], sd["2.weight"]))
        tide.save(path, { model = sd })
        local ck = tide.load(path)
        assert.is_true(rawequal(ck.model["1.weight"], ck.model["2.weight"]))
        assert.is_true(ck.model["1.weight"]:equal(emb.weight:detach()))
        local flat = tide.safetensors_load(path)
        local n = 0
        for _ in pairs(flat) do n = n + 1 end
        assert.are.equal(1, n)
        -- a view elsewhere in the storage is its own tensor
        local w = tide.ones(4, 2)
        tide.save(path, { a = w:narrow(1, 1, 2), b = w:narrow(1, 3, 2), step = 1 })
        ck = tide.load(path)
        assert.is_false(rawequal(ck.a, ck.b))
    end)

    it("load onto a device, by device or torch.load's map_location", function()
        tide.save(path, { m = { w = tide.ones(2) }, step = 1 })
        local ck = tide.load(path, { map_location = "cpu:1" })
        assert.are.equal("cpu:1", tostring(ck.m.w.device))
        assert.are.equal(1, ck.step)
        -- torch.load's dict {saved location = location}
        ck = tide.load(path, { map_location = { ["cpu"] = "cpu:1" } })
        assert.are.equal("cpu:1", tostring(ck.m.w.device))
        local ok, err = pcall(tide.load, path, { map_location = "cpu", device = "cpu" })
        assert.matches("tide: load: device and map_location name the same thing; give one", err)
    end)

    it("name a malformed tree", function()
        tide.safetensors_save(path, { "w" }, { tide.ones(1) }, { ["tide-tree"] = '["t","gone"]' })
        local ok, err = pcall(function() tide.load(path) end)
        assert.is_false(ok)
        assert.matches("safetensors_spec.lua:%d+: tide: load: .*: its tide%-tree metadata is "
            .. "malformed %(tensor gone is not in the file%)", err)
        for _, bad in ipairs({ "[", '["q",1]', '["{",[[["t","w"],["i","1"]]]]', '["x","zz"]',
            '["i",true]' }) do
            tide.safetensors_save(path, { "w" }, { tide.ones(1) }, { ["tide-tree"] = bad })
            ok, err = pcall(tide.load, path)
            assert.is_false(ok)
            assert.matches("tide: load: .*: its tide%-tree metadata is malformed", err)
        end
    end)
end)

describe("files of the reference safetensors package", function()
    -- spec/fixtures/make_safetensors.py writes it; byte-identical to safetensors.numpy.save
    local fixture = "spec/fixtures/reference.safetensors"

    it("load with their dtypes, shapes, values and metadata", function()
        local t, meta = tide.load(fixture)
        assert.are.same({ format = "pt" }, meta)
        assert.are.same({ { 0.5, -1, 1 }, { 2, 3, 3.25 } }, t["linear.weight"]:totable())
        assert.are.same({ 1, -2 }, t["linear.bias"]:totable())
        assert.are.equal("int64", t.step.dtype)
        assert.are.same({}, t.step.shape)
        assert.are.equal(1234567890123, t.step:item())
        assert.are.equal("float16", t.half.dtype)
        assert.are.same({ 1, -2 }, t.half:totable())
    end)

    it("are what tide writes for the same tensors, byte for byte", function()
        local t, meta = tide.load(fixture)
        local path = tmpfile()
        tide.save(path, t, meta)
        local same = slurp(path) == slurp(fixture)
        os.remove(path)
        assert.is_true(same)
    end)

    it("read tide's files (when the Python package is importable) #lua53", function()
        local py = "/usr/bin/python3"
        if not os.execute(py .. " -c 'import safetensors.numpy' 2>/dev/null") then
            pending("python3 cannot import safetensors")
            return
        end
        local path = tmpfile()
        tide.save(path, { w = tide.tensor({ { 1.5, 2 }, { 3, 4 } }), n = tide.tensor({ 5 }) }, { k = "v" })
        local p = io.popen(py .. " -c \"import sys; from safetensors.numpy import load_file; "
            .. "from safetensors import safe_open; d = load_file(sys.argv[1]); "
            .. "print(d['w'].tolist(), d['n'].tolist(), d['w'].dtype, "
            .. "safe_open(sys.argv[1], 'np').metadata())\" " .. path)
        local out = p:read("*a")
        p:close()
        os.remove(path)
        assert.are.equal("[[1.5, 2.0], [3.0, 4.0]] [5] float32 {'k': 'v'}\n", out)
    end)
end)

describe("tide.load on a malformed file", function()
    local path
    before_each(function() path = tmpfile() end)
    after_each(function() os.remove(path) end)

    local function fails(fault)
        local ok, err = pcall(function() return tide.load(path) end)
        assert.is_false(ok)
        assert.matches("safetensors_spec.lua:%d+: tide: load: ", err)
        assert.is_truthy(err:find(path, 1, true), err)
        assert.is_truthy(err:find(fault, 1, true), err)
    end

    it("names the fault #lua53", function()
        write(path, "\5\0\0")
        fails("file too small (3 bytes)")
        write(path, string.pack("<I8", 1000) .. "{}")
        fails("header size 1000 exceeds the file size 10")
        st_file(path, "not json", 0)
        fails("does not start with '{'")
        st_file(path, '{"a":', 0)
        fails("not valid JSON")
        st_file(path, '{"a":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]}}', 1)
        fails('unsupported dtype "F8_E4M3"')
        st_file(path, '{"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}', 8)
        fails("shape entry 1 is not a non-negative integer")
        st_file(path, '{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}', 8)
        fails("hold 8 bytes, but shape and dtype F32 need 12")
        st_file(path, '{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}', 8)
        fails("run past the end of the data (8 bytes)")
        st_file(path, '{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},'
            .. '"b":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}}', 4)
        fails("overlap the previous tensor")
        st_file(path, '{"a":{"dtype":"F64","shape":[4503599627370496,4096],"data_offsets":[0,8]}}', 8)
        fails("overflows a 64-bit size")
        st_file(path, '{"__metadata__":{"epoch":3}}', 0)
        fails("__metadata__ value of 'epoch' is not a string")
    end)

    it("says when the file is missing", function()
        local ok, err = pcall(tide.load, "/nonexistent/x.safetensors")
        assert.is_false(ok)
        assert.matches("tide: load: /nonexistent/x.safetensors: cannot open", err)
    end)
end)

describe("tide.load options", function()
    it("device must name a device (a dtype name is not silently a cast); unknown keys raise",
        function()
            local path = tmpfile()
            tide.save(path, { a = tide.zeros(2) })
            local ok, err = pcall(tide.load, path, { device = "float64" })
            assert.is_false(ok)
            assert.matches("unknown device \"float64\"", err, 1, true)
            ok, err = pcall(tide.load, path, { devcie = "cpu:1" })
            assert.is_false(ok)
            assert.matches('tide: load: unknown option "devcie" (did you mean "device"?)', err, 1, true)
            assert.are.equal("cpu:1", tostring(tide.load(path, { device = "cpu:1" }).a.device))
            os.remove(path)
        end)

    it("a bad device is reported as load's error, at the caller's line", function()
        local path = tmpfile()
        tide.save(path, { a = tide.zeros(2) })
        local ok, err = pcall(tide.load, path, { device = "float64" })
        assert.is_false(ok)
        assert.matches("tide: load: unknown device \"float64\"; use \"cpu\"", err, 1, true)
        ok, err = pcall(function() return tide.load(path, { device = 2.5 }) end)
        assert.is_false(ok)
        assert.matches("safetensors_spec.lua:%d+: tide: load: expected a device, a device "
            .. "name such as \"cpu\" or \"cuda:0\", or an integer i %(cuda:i%), got number", err)
        ok, err = pcall(function() return tide.load(path, { device = "cpu:9" }) end)
        assert.is_false(ok)
        assert.matches("safetensors_spec.lua:%d+: tide: load: ", err)
        assert.is_nil(err:find("tide: device:", 1, true))
        os.remove(path)
    end)
end)

-- lua/io.c raises through the binding's own path (tl_raise / TL_CALL): a core io call names the
-- line that made it, as every other core function does
describe("core io functions", function()
    local core = require("tide.core")
    it("raise at the caller's line", function()
        local ok, err = pcall(core.safetensors_load, "/nonexistent/x.safetensors")
        assert.is_false(ok)
        assert.matches("^[^\n]*safetensors_spec.lua:%d+: tide: load: /nonexistent/x.safetensors: "
            .. "cannot open: No such file or directory; check the path", err)
        ok, err = pcall(core.idx_load, "/nonexistent/x-idx1-ubyte")
        assert.matches("safetensors_spec.lua:%d+: tide: idx_load: /nonexistent/x%-idx1%-ubyte: "
            .. "cannot open", err)
        ok, err = pcall(core.safetensors_save, os.tmpname(), { "a" }, {})
        assert.matches("safetensors_spec.lua:%d+: tide: save: .*: 1 names but 0 tensors", err)
    end)
    it("load a file under a memory limit once dropped tensors are collected", function()
        local path = tmpfile()
        tide.save(path, { w = tide.ones(256, 256) }) -- 256 KiB
        collectgarbage()
        local limit = tide.memory_limit()
        tide.set_memory_limit(tide.memory_in_use() + 400 * 1024)
        local garbage = tide.ones(300, 256) -- 300 KiB, dropped below: only a collection frees it
        garbage = nil
        local ok, sd = pcall(tide.load, path)
        tide.set_memory_limit(limit)
        os.remove(path)
        assert.is_true(ok, tostring(sd))
        assert.are.equal(65536.0, sd.w:sum():item())
    end)
end)
