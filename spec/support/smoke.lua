-- smoke.lua TREE [module ...] — checks a LuaRocks-installed tide (tools/install_check.sh runs
-- it with only TREE on the Lua paths and TIDE_CPU_DEVICES=2). Ends with "N passed, N failed".
local tree = assert(arg[1], "usage: smoke.lua TREE [module ...]")
local passed, failed = 0, 0

local function check(name, fn)
    local ok, err = pcall(fn)
    if ok then
        passed = passed + 1
        print("ok      " .. name)
    else
        failed = failed + 1
        print("FAILED  " .. name .. ": " .. tostring(err))
    end
end

local function inside_tree(path)
    return path ~= nil and path:sub(1, #tree) == tree
end

local tide
check("require 'tide' from the installed tree", function()
    local lua_file = package.searchpath("tide", package.path)
    local core_file = package.searchpath("tide.core", package.cpath)
    assert(inside_tree(lua_file), "tide found at " .. tostring(lua_file))
    assert(inside_tree(core_file), "tide.core found at " .. tostring(core_file))
    tide = require("tide")
end)

if tide then
    check("a + b on cpu", function()
        local c = tide.tensor({ 1, 2, 3 }) + tide.tensor({ 10, 20, 30 })
        local v = c:totable()
        assert(v[1] == 11 and v[2] == 22 and v[3] == 33, "got " .. tostring(c))
        assert(tostring(c.device) == "cpu")
    end)

    check("virtual device cpu:1: results stay put, mismatch raises", function()
        local x = tide.ones({ 2, 2 }, { device = "cpu:1" })
        assert(tostring((x * 3).device) == "cpu:1")
        assert(rawequal(x:to("cpu:1"), x))
        local ok, err = pcall(function()
            return x + tide.ones({ 2, 2 })
        end)
        assert(not ok and tostring(err):find("same device", 1, true), tostring(err))
        assert((x * 3):cpu():sum():item() == 12)
    end)

    check("tide.cuda answers without raising", function()
        assert(type(tide.cuda.is_available()) == "boolean")
        local n = tide.cuda.device_count()
        assert(type(n) == "number" and n >= 0 and n == math.floor(n))
    end)
end

for i = 2, #arg do
    local name = arg[i]
    check("require '" .. name .. "'", function()
        local file = package.searchpath(name, package.path)
        assert(inside_tree(file), name .. " found at " .. tostring(file))
        require(name)
    end)
end

print(string.format("%d passed, %d failed", passed, failed))
os.exit(failed == 0 and 0 or 1)
