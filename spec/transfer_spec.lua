-- transfer_spec.lua — non-blocking copies (API.md: t:to(dev, {non_blocking = true})).
--
-- A non-blocking copy from a GPU to the host lands in pinned memory and returns while the copy
-- may still run; tide synchronizes the GPU before the host first touches the result (any op,
-- item, totable, printing, indexing, a copy back). On the emulated GPU (spec/cuda_emu/) the
-- copy really stays in flight until the stream is synchronized, so a read that skipped the
-- wait would see the old memory: these specs fail if tide forgets it.
local tide = require "tide"

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
