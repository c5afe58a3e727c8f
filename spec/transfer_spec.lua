-- transfer_spec.lua — non-blocking copies (API.md: t:to(dev, {non_blocking = true})).
--
-- A non-blocking copy from a GPU to the host lands in pinned memory and returns while the copy
-- may still run; tide synchronizes the GPU before the host first touches the result (any op,
-- item, totable, printing, indexing, a copy back). On the emulated GPU (spec/cuda_emu/) the
-- copy really stays in flight until the stream is synchronized, so a read that skipped the
-- wait would see the old memory: these specs fail if tide forgets it.
local tide = require("tide")

describe("non_blocking to a host device without a GPU", function()
  it("is an ordinary copy between CPU devices: pageable, right values", function()
    local a = tide.tensor({ 1, 2, 3 }, { device = "cpu:1" })
    local h = a:to("cpu", { non_blocking = true })
    assert.are.equal("cpu", tostring(h.device))
    assert.is_false(h:is_pinned())
    assert.are.same({ 1, 2, 3 }, h:totable())
  end)
end)

describe("non_blocking device-to-host copies #cuda", function()
  if not tide.cuda.is_available() then
    it("needs a CUDA device", function()
      pending("no CUDA device: " .. tostring(tide.cuda.unavailable_reason()))
    end)
    return
  end

  local function on_gpu(values)
    return tide.tensor(values):to("cuda")
  end

  it("returns a pinned host tensor, counted as one device-to-host copy", function()
    local g = on_gpu({ 1, 2, 3, 4 })
    local before = tide.transfer_stats().d2h_count
    local h = g:to("cpu", { non_blocking = true })
    assert.are.equal("cpu", tostring(h.device))
    assert.is_true(h:is_pinned())
    assert.are.equal(before + 1, tide.transfer_stats().d2h_count)
    tide.cuda.synchronize()
    assert.are.same({ 1, 2, 3, 4 }, h:totable())
  end)

  it("waits for the copy before item, totable, indexing, printing and ops read it", function()
    local g = tide.arange(6):float():view({ 2, 3 }):to("cuda")
    assert.are.equal(15, g:to("cpu", { non_blocking = true }):sum():item())
    assert.are.same({ { 0, 1, 2 }, { 3, 4, 5 } }, g:to("cpu", { non_blocking = true }):totable())
    assert.are.equal(5, g:to("cpu", { non_blocking = true })[2][3]:item())
    assert.truthy(tostring(g:to("cpu", { non_blocking = true })):find("5.0000", 1, true))
    local h = (g * 2):to("cpu", { non_blocking = true })
    assert.are.same({ { 0, 2, 4 }, { 6, 8, 10 } }, (h + 0):totable())
  end)

  it("waits before the host tensor goes back to a device or is copied into", function()
    local g = on_gpu({ 5, 6, 7 })
    local back = g:to("cpu", { non_blocking = true }):to("cuda")
    assert.are.same({ 5, 6, 7 }, back:cpu():totable())
    local dst = tide.zeros({ 3 })
    dst:copy_(g:to("cpu", { non_blocking = true }))
    assert.are.same({ 5, 6, 7 }, dst:totable())
  end)

  it("converts the dtype on the device before the copy", function()
    local g = on_gpu({ 1.5, 2.5 })
    local h = g:to("cpu", { dtype = "float64", non_blocking = true })
    assert.are.equal("float64", h.dtype)
    assert.are.same({ 1.5, 2.5 }, h:totable())
  end)

  it("can be dropped while in flight", function()
    local g = tide.ones({ 1000 }):to("cuda")
    for _ = 1, 20 do
      local _ = g:to("cpu", { non_blocking = true })
    end
    collectgarbage()
    collectgarbage()
    tide.cuda.synchronize()
    assert.are.equal(1000, g:sum():item())
  end)

  it("from pinned memory to the GPU, then back, keeps the values", function()
    local p = tide.tensor({ 9, 8, 7 }):pin_memory()
    local g = p:to("cuda", { non_blocking = true })
    tide.cuda.synchronize()
    assert.are.same({ 9, 8, 7 }, g:cpu():totable())
  end)
end)

-- Transfers a user can trace (API.md rule 6): the "log" guard names what the user called and
-- their line; trace_transfers(true) counts each direction's copies per line of user code. On
-- the device under test, cpu:1 when that is the host (run_all.sh runs this file on cpu:1 and
-- on the emulated cuda:0 too).
local D = require("spec.support.device")
local DEV = D.is_host and "cpu:1" or D.name

-- the error a function raises
local function catch(f)
  local ok, err = pcall(f)
  assert.is_false(ok, "expected an error")
  return err
end

-- "spec/transfer_spec.lua:N" of the caller's line, the key lines[] uses
local function here()
  local info = debug.getinfo(2, "Sl")
  return info.short_src .. ":" .. info.currentline
end

-- the traced lines with their copies, without the zero directions, for comparing whole tables
local function traced()
  local out = {}
  for line, dirs in pairs(tide.transfer_stats().lines) do
    out[line] = {}
    for dir, c in pairs(dirs) do
      if c.count > 0 then
        out[line][dir] = { count = c.count, bytes = c.bytes }
      end
    end
  end
  return out
end

describe("transfer_guard(\"log\") on " .. DEV, function()
  after_each(function()
    tide.transfer_guard("allow")
  end)

  it("names what the user called and their line, with the bytes copied", function()
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p '" .. dir .. "'"))
    local path = dir .. "/script.lua"
    local f = assert(io.open(path, "w"))
    f:write(table.concat({
      'local tide = require("tide")',
      'local x = tide.tensor({ 1.5 }, { device = "' .. DEV .. '" })',
      "debug = nil -- neither the log nor the trace needs the debug library",
      'tide.transfer_guard("log")',
      "print(x)",
      "local s = tostring(x)",
      "local v = x:item() + tide.ones(1):item()",
      "",
    }, "\n"))
    f:close()
    local p = io.popen(string.format("LUA_PATH='%s' LUA_CPATH='%s' %s '%s' 2>&1 >/dev/null",
      package.path, package.cpath, require("spec.support.host").lua, path))
    local out = p:read("*a")
    p:close()
    os.execute("rm -rf '" .. dir .. "'")
    assert.are.equal(
      path .. ":5: tide: print: implicit transfer from " .. DEV .. " to cpu (4 bytes)\n" ..
      path .. ":6: tide: tostring: implicit transfer from " .. DEV .. " to cpu (4 bytes)\n" ..
      path .. ":7: tide: item: implicit transfer from " .. DEV .. " to cpu (4 bytes)\n", out)
  end)

  it("disallow names what the user called too, and copies nothing #lua53", function()
    local x = tide.tensor({ 1.5 }, { device = DEV })
    tide.reset_transfer_stats()
    tide.transfer_guard("disallow")
    local err = catch(function() print(x) end); local l = here()
    assert.are.equal(l .. ": tide: print: implicit transfer from " .. DEV .. " to cpu refused by " ..
      "transfer_guard(\"disallow\"); call :cpu() explicitly", err)
    assert.matches("^spec/transfer_spec.lua:%d+: tide: tostring: implicit transfer from " ..
      DEV:gsub("%p", "%%%0") .. " to cpu refused", catch(function() return tostring(x) end))
    assert.matches("^spec/transfer_spec.lua:%d+: tide: item: implicit transfer",
      catch(function() return x:item() end))
    assert.are.equal(0, tide.transfer_stats().d2h_count)
  end)
end)

describe("trace_transfers on " .. DEV, function()
  before_each(function()
    tide.reset_transfer_stats()
  end)
  after_each(function()
    tide.trace_transfers(false)
    tide.reset_transfer_stats()
  end)

  it("maps each line of user code to the count and bytes of each direction", function()
    local h = tide.ones(10)            -- 40 bytes of float32 on the host
    local d = h:to(DEV)                -- not traced yet
    assert.is_false(tide.trace_transfers(true))
    local l1, l2, l3 = nil, nil, nil
    for _ = 1, 3 do
      local _ = h:to(DEV); l1 = here()
    end
    local _ = d:cpu(); l2 = here()
    local _ = d:sum():item() + d[1]:item(); l3 = here()
    assert.are.same({
      [l1] = { h2d = { count = 3, bytes = 120 } },
      [l2] = { d2h = { count = 1, bytes = 40 } },
      [l3] = { d2h = { count = 2, bytes = 8 } },
    }, traced())
    local line = tide.transfer_stats().lines[l1]
    assert.are.same({ count = 0, bytes = 0 }, line.d2h) -- every direction is there
    assert.are.same({ count = 0, bytes = 0 }, line.d2d)
    assert.are.equal(4, tide.transfer_stats().h2d_count) -- the totals count every copy
  end)

  it("counts copies made inside tide's own functions at the line that called them", function()
    local model = tide.nn.Linear(3, 2)
    tide.trace_transfers(true)
    model:to(DEV); local l1 = here()
    local w = model.weight:to("cpu"):to(DEV, { copy = true }); local l2 = here()
    local sd = tide.nn.Linear(3, 2):to(DEV):state_dict(); local l3 = here()
    assert.are.same({
      [l1] = { h2d = { count = 2, bytes = 32 } },
      [l2] = { d2h = { count = 1, bytes = 24 }, h2d = { count = 1, bytes = 24 } },
      [l3] = { h2d = { count = 2, bytes = 32 } },
    }, traced())
    assert.is_not_nil(w)
    assert.is_not_nil(sd)
  end)

  it("stops with trace_transfers(false), and reset_transfer_stats clears the lines", function()
    local d = tide.ones(2, { device = DEV })
    tide.trace_transfers(true)
    local _ = d:cpu(); local l1 = here()
    assert.is_true(tide.trace_transfers(false))
    local _ = d:cpu()
    assert.are.same({ [l1] = { d2h = { count = 1, bytes = 8 } } }, traced())
    assert.are.equal(2, tide.transfer_stats().d2h_count)
    tide.reset_transfer_stats()
    assert.are.same({}, tide.transfer_stats().lines)
    assert.is_false(tide.trace_transfers())
  end)

  it("rejects anything but a boolean", function()
    assert.matches("^spec/transfer_spec.lua:%d+: tide: trace_transfers: expected true or false, got string$",
      catch(function() tide.trace_transfers("yes") end))
  end)
end)
