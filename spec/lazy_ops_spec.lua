-- lazy_ops_spec.lua — the ops that load on first use (lua/tide/_lazy_ops.lua, and
-- tide.nn.functional's files) are listed exactly: require("tide") loads none of those modules,
-- puts every name they define in place (a stub), and loading them all adds no name the lists
-- miss. Run in a fresh process: the other specs have loaded the modules in this one.
local TEST_LUA = os.getenv("TIDE_TEST_LUA") or "lua5.4"

local SCRIPT = [==[
local core = require("tide.core")
local tide = require("tide")
local F = tide.nn.functional
local index = require("tide._lazy_ops")
local out = {}
local function say(s) out[#out + 1] = s end
for name in pairs(index) do
    if package.loaded[name] then say("loaded by require: " .. name) end
end
for name in pairs(F._extensions) do
    if package.loaded[name] then say("loaded by tide.nn.functional: " .. name) end
end
local methods, functions, fns = {}, {}, {}
for k in pairs(core.Tensor) do methods[k] = true end
for k in pairs(tide) do functions[k] = true end
for k in pairs(F) do fns[k] = true end
-- load every lazy module through its first function's stub, as a script's first call would:
-- the stub checks that the module defined every name listed (the call itself then fails for
-- want of arguments, which is fine here)
for _, defines in pairs(index) do
    local ok, err = pcall(tide[defines.functions[1]])
    if not ok and tostring(err):find("does not define", 1, true) then say(err) end
end
for name, names in pairs(F._extensions) do
    for _, k in ipairs(names) do
        if rawget(F, k) == nil and F[k] == nil then say("F." .. k .. " not defined by " .. name) end
    end
end
for k in pairs(core.Tensor) do
    if not methods[k] then say("method not in the list: " .. k) end
end
for k in pairs(F) do
    if not fns[k] and not getmetatable(F).__lazy[k] then say("F." .. k .. " not in the lists") end
end
print(#out == 0 and "OK" or table.concat(out, "\n"))
]==]

describe("the ops that load on first use", function()
    it("load with their first call, and the lists name exactly what the modules define", function()
        local path = os.tmpname()
        local f = assert(io.open(path, "w"))
        f:write(SCRIPT)
        f:close()
        local p = io.popen(("LUA_PATH=%q LUA_CPATH=%q TIDE_CPU_DEVICES=2 %s %s 2>&1"):format(
            package.path, package.cpath, TEST_LUA, path))
        local text = p:read("*a")
        p:close()
        os.remove(path)
        assert.are.equal("OK\n", text)
    end)

    it("a stub calls through: the first call of a lazy op gives its result", function()
        local tide = require("tide")
        local x = tide.tensor({ 0, 2 }, { dtype = "float64" })
        assert.are.same({ 1, 4 }, x:exp2():totable())
        local det = tide.linalg.det(tide.tensor({ { 1, 2 }, { 3, 4 } }, { dtype = "float64" }))
        assert.is_true(math.abs(det:item() + 2) < 1e-12)
        assert.are.same({ 0, 0 }, tide.nn.functional.softshrink(tide.tensor({ 0.25, -0.5 }))
            :totable())
    end)
end)
