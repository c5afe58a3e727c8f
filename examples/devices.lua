-- devices.lua — a walk through tide's device-placement rules (API.md, "Device placement").
--
-- Run it with two virtual CPU devices, which follow every rule a GPU does:
--   TIDE_CPU_DEVICES=2 lua5.4 examples/devices.lua        (tools/demo.sh does this)
-- Each step prints what it does and what tide answered. A step whose rule does not hold stops
-- the tour with an error, so `make test` runs this file too.
local tide = require("tide")

local n = 0
local function step(title)
    n = n + 1
    print(string.format("\n%d. %s", n, title))
end
local function say(fmt, ...)
    print("   " .. string.format(fmt, ...))
end
local function expect(cond, what)
    if not cond then
        error("devices.lua: the rule did not hold: " .. what, 2)
    end
end

step("Devices on this machine")
local names = {}
for _, d in ipairs(tide.devices()) do
    names[#names + 1] = tostring(d)
end
say("tide.devices()            -> %s", table.concat(names, ", "))
say("tide.cuda.is_available()  -> %s", tostring(tide.cuda.is_available()))
if not tide.cuda.is_available() then
    say("tide.cuda.unavailable_reason() -> %s", tostring(tide.cuda.unavailable_reason()))
end
say("tide.best_device()        -> %s", tostring(tide.best_device()))
local cpu1 = tide.device("cpu:1")
expect(cpu1 ~= tide.device("cpu") and cpu1.type == "cpu" and cpu1.index == 1,
    "cpu:1 is a device of its own (set TIDE_CPU_DEVICES=2)")
say('tide.device("cpu:1")      -> type %s, index %d', cpu1.type, cpu1.index)

step("A tensor created directly on cpu:1")
local x = tide.tensor({ { 1, 2 }, { 3, 4 } }, { device = "cpu:1", dtype = "float32" })
say("x = tide.tensor({{1, 2}, {3, 4}}, {device = 'cpu:1'})")
say("x.device -> %s, x.dtype -> %s", tostring(x.device), x.dtype)
expect(x.device == cpu1, "opts.device places the tensor")

step("Results stay on the device of their inputs")
local y = x * 2 + 1
say("y = x * 2 + 1  ->  y.device = %s (numbers are scalars: they go with any device)",
    tostring(y.device))
expect(y.device == cpu1, "results stay put")
local m = x:matmul(y)
say("x:matmul(y)    ->  on %s", tostring(m.device))
expect(m.device == cpu1, "results stay put (matmul)")

step("t:to(dev) returns the same object when t is already there")
local same = x:to("cpu:1")
say("rawequal(x:to('cpu:1'), x) -> %s  (no copy, no allocation)", tostring(rawequal(same, x)))
expect(rawequal(same, x), "to() on the same device returns self")
local moved = x:to("cpu")
say("x:to('cpu') is a new tensor on %s; x stays on %s", tostring(moved.device),
    tostring(x.device))
expect(not rawequal(moved, x) and x.device == cpu1, "to() elsewhere returns a new tensor")

step("copy = true always copies")
local c = x:to("cpu:1", { copy = true })
c:fill_(0)
say("c = x:to('cpu:1', {copy = true}); c:fill_(0)  ->  x:sum() still %g", x:sum():item())
expect(not rawequal(c, x) and x:sum():item() == 10, "copy = true gives a fresh tensor")

step("Two devices in one operation: an error that says what to do")
local h = tide.ones({ 2, 2 }) -- on the default device, cpu
local ok, err = pcall(function()
    return x + h
end)
say("pcall(function() return x + h end)  with x on cpu:1, h on cpu")
say("-> %s", tostring(err))
expect(not ok and tostring(err):find("same device", 1, true), "mismatched devices raise")
local fixed = x + h:to(x.device)
say("x + h:to(x.device) works: %s", tostring(fixed.device))

step("Host views need the host")
local ok2, err2 = pcall(function()
    return x:totable()
end)
say("x:totable() on cpu:1 -> %s", tostring(err2))
expect(not ok2, "totable() refuses a tensor off the host")
local t = x:cpu():totable()
say("x:cpu():totable()    -> {{%g, %g}, {%g, %g}}", t[1][1], t[1][2], t[2][1], t[2][2])
say("x:sum():item()       -> %g (item() works on any device)", x:sum():item())

step("Transfers are counted")
tide.reset_transfer_stats()
local _ = x:cpu()
_ = tide.zeros({ 1000 }):to("cpu:1")
local stats = tide.transfer_stats()
say("x:cpu() and tide.zeros(1000):to('cpu:1') since tide.reset_transfer_stats():")
for _, dir in ipairs({ "h2d", "d2h", "d2d" }) do
    say("transfer_stats().%s -> %d bytes in %d copies", dir, stats[dir .. "_bytes"],
        stats[dir .. "_count"])
end
expect(stats.d2h_count == 1 and stats.d2h_bytes == 16, "cpu:1 -> cpu counted (4 float32)")
expect(stats.h2d_count == 1 and stats.h2d_bytes == 4000, "cpu -> cpu:1 counted (1000 float32)")

step("The transfer guard governs implicit copies")
tide.transfer_guard("disallow")
local ok3, err3 = pcall(function()
    return tostring(x) -- printing copies cpu:1 -> host: implicit
end)
say('transfer_guard("disallow"); tostring(x) -> %s', tostring(err3))
expect(not ok3, "the guard refuses an implicit copy")
local explicit = x:cpu() -- explicit transfers are always allowed
say("x:cpu() is explicit and still allowed: on %s", tostring(explicit.device))
tide.transfer_guard("allow")

step("Printing shows values, shape, dtype and device")
print(x)

step("The default device is for new tensors only")
local z = tide.with_device("cpu:1", function()
    return tide.zeros({ 3 })
end)
say("tide.with_device('cpu:1', fn): tide.zeros(3) inside lands on %s", tostring(z.device))
say("outside, the default is %s again", tostring(tide.get_default_device()))
expect(z.device == cpu1 and tide.get_default_device() == tide.device("cpu"),
    "with_device scopes the default")

step("dst:copy_(src) copies values across devices in place")
local dst = tide.zeros({ 2, 2 })
dst:copy_(x)
say("dst (cpu) after dst:copy_(x): sum = %g", dst:sum():item())
expect(dst:sum():item() == 10, "copy_ across devices")

print("\nEvery rule held.")
