-- hosts_spec.lua — what makes tide the same on Lua 5.4, 5.3, 5.1 and LuaJIT (run_all.sh runs the
-- suite under each: spec/support/host_suite.sh), and the documented differences where numbers
-- have no integer subtype (docs/API.md "Hosts", README "Lua hosts").
local tide = require("tide")
local host = require("spec.support.host")

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

local function here()
    return "spec/hosts_spec.lua:" .. debug.getinfo(2, "l").currentline
end

-- every Lua file of the library, for the parse checks
local function lib_files()
    local p = io.popen("find lua/tide -name '*.lua' | sort")
    local files = {}
    for f in p:lines() do
        files[#files + 1] = f
    end
    p:close()
    return files
end

describe("the library's Lua files", function()
    it("parse under Lua 5.1 and LuaJIT (luac5.1 -p, LuaJIT's loadfile)", function()
        if _VERSION ~= "Lua 5.4" then -- the external parsers' answer is the same under any host
            pending("checked by the Lua 5.4 suite")
            return
        end
        local files = lib_files()
        assert.is_true(#files > 30)
        -- one process a parser (a process a file took 3.6 s): luac5.1 -p takes every file and
        -- names the one that fails; LuaJIT loads each with loadfile and prints what fails
        local list = table.concat(files, " ")
        local jit_check = "luajit -e 'for _, f in ipairs({\"" .. table.concat(files, "\", \"") ..
            "\"}) do local ok, e = loadfile(f) if not ok then print(e) end end'"
        for _, tool in ipairs({ { "luac5.1", "luac5.1 -p " .. list }, { "luajit", jit_check } }) do
            if os.execute("command -v " .. tool[1] .. " >/dev/null 2>&1") == true
                or os.execute("command -v " .. tool[1] .. " >/dev/null 2>&1") == 0 then
                local p = io.popen(tool[2] .. " 2>&1")
                local out = p:read("*a")
                p:close()
                assert.are.equal("", out, tool[1])
            end
        end
    end)
    it("use no 5.3+ library function outside tide._compat", function()
        for _, f in ipairs(lib_files()) do
            if not f:match("_compat%.lua$") then
                -- code only: comments and string literals may name them (messages, docs)
                local src = io.open(f):read("*a"):gsub("%-%-[^\n]*", ""):gsub('"[^"\n]*"', '""')
                for _, name in ipairs({ "math%.type", "math%.tointeger", "math%.maxinteger",
                    "math%.mininteger", "table%.move", "table%.pack", "table%.unpack", "utf8%.",
                    "string%.pack", "string%.unpack" }) do
                    assert.is_nil(src:match("[^%w_.]" .. name), f .. " uses " .. name:gsub("%%", ""))
                end
            end
        end
    end)
end)

describe("tensors on every Lua", function()
    it("keep user values (grad) of their own", function()
        local a, b = tide.ones(2), tide.ones(2)
        assert.is_nil(a.grad)
        a.grad = tide.full({ 2 }, 3, { dtype = "float32" })
        assert.are.same({ 3, 3 }, a.grad:totable())
        assert.is_nil(b.grad) -- 5.1/LuaJIT: not one environment shared by every tensor
        local w = tide.tensor({ 1.5, 2.5 }, { requires_grad = true })
        ;(w * w):sum():backward()
        assert.are.same({ 3, 5 }, w.grad:totable())
        assert.is_nil(tide.ones(2).grad)
    end)
    it("format 64-bit integers in messages (no %I in 5.1's lua_pushfstring)", function()
        local err = catch(function() tide.eye(-3, 2) end); local l = here()
        assert.are.equal(l .. ": tide: eye: sizes -3 and 2 must be non-negative", err)
        assert.matches("tide: randperm: n = %-4 is negative", catch(function() tide.randperm(-4) end))
    end)
    it("refuse a fractional dim or size as 5.4 does", function()
        local t = tide.ones(2, 3)
        assert.matches("tide: size: dim must be an integer, got 1.5",
            catch(function() return t:size(1.5) end))
        assert.matches("tide: zeros: size 2.5 at position 1 is not an integer",
            catch(function() return tide.zeros(2.5) end))
        assert.are.equal(3, t:size(2.0))
    end)
    it("read class targets and indices given as integral numbers", function()
        local t = tide.tensor({ 10, 20, 30 })
        assert.are.equal("int64", t.dtype)
        assert.are.equal(20, t[2]:item())
        local idx = tide.tensor({ 3, 1 })
        assert.are.same({ 30, 10 }, t:index_select(1, idx):totable())
        local loss = tide.nn.CrossEntropyLoss()(tide.zeros(2, 3), tide.tensor({ 1, 3 }))
        assert.is_true(math.abs(loss:item() - math.log(3)) < 1e-5)
    end)
end)

describe("numbers without integers (" .. _VERSION .. (jit and ", LuaJIT" or "") .. ")", function()
    if host.integers then
        it("5.3+: 2.0 infers float32 and an int64 item stays exact beyond 2^53", function()
            assert.are.equal("float32", tide.tensor({ 2.0 }).dtype)
            local big = tide.full({ 1 }, 2 ^ 53, { dtype = "int64" }) + 1
            assert.are.equal(9007199254740993, big:item())
        end)
        return
    end
    it("an integral table infers int64, one fraction float32", function()
        assert.are.equal("int64", tide.tensor({ 2.0, 3 }).dtype)
        assert.are.equal("float32", tide.tensor({ 2.0, 3.5 }).dtype)
        assert.are.equal("float32", tide.tensor({ 2, 3 }, { dtype = "float32" }).dtype)
    end)
    it("requires_grad = true infers float32 (an int64 could not require grad)", function()
        local w = tide.tensor({ 2, 3 }, { requires_grad = true })
        assert.are.equal("float32", w.dtype)
        assert.is_true(w.requires_grad)
    end)
    it("item() of an int64 beyond 2^53 raises instead of rounding", function()
        local ok = tide.full({ 1 }, 2 ^ 53, { dtype = "int64" })
        assert.are.equal(2 ^ 53, ok:item())
        local big = ok + 1
        local err = catch(function() local v = big:item() return v end); local l = here()
        assert.are.equal(l .. ": tide: item: the int64 value 9007199254740993 is beyond 2^53 and "
            .. (jit and "LuaJIT" or _VERSION) .. " has no integers: it would round to "
            .. "9007199254740992; use t:double() to accept the rounding, or keep the value in "
            .. "a tensor", err)
        assert.matches("tide: totable: the int64 value -9007199254740993 is beyond 2^53",
            catch(function() return (-big):totable() end), 1, true)
        assert.are.equal(2 ^ 53, big:double():item())
    end)
end)
