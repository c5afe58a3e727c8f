-- cuda_memory_spec.lua — the CUDA caching allocator seen from Lua (src/cuda/alloc.cu): the
-- memory statistics and the allocator's rounding, empty_cache, the out-of-memory error and what a
-- failed allocation leaves behind, and the retry that lets a loop drop far more tensors than the
-- device holds. Tagged #cuda (`busted --run=gpu`); pending without a device.
--
-- The device's size is not part of the API, so the tests that must fill the device measure it:
-- they take blocks until an allocation fails, which works on a GPU and on the emulator alike.
-- With the emulator (TIDE_CUDA_LIB naming the cuda-emu build) the device holds exactly
-- TIDE_CUDA_EMU_MEMORY bytes (1 GiB by default) and tide is its only user, so its free memory is
-- known to the byte and a few tests check the out-of-memory message and the allocator's
-- fallbacks exactly; they are skipped on a real GPU. A small cap makes the suite faster:
--   TIDE_CUDA_EMU_MEMORY=268435456 TIDE_CUDA_LIB=build/cuda-emu/libtide_cuda.so busted --run=gpu
local tide = require("tide")

local DEV = "cuda:0"
local available = tide.cuda.is_available()
local EMU = (os.getenv("TIDE_CUDA_LIB") or ""):match("cuda%-emu") ~= nil
local EMU_CAP = tonumber(os.getenv("TIDE_CUDA_EMU_MEMORY") or "") or (1 << 30)

local KiB, MiB = 1 << 10, 1 << 20

local function git(name, fn)
  it(name, function()
    if not available then
      pending("no CUDA device: " .. tostring(tide.cuda.unavailable_reason()))
      return
    end
    fn()
  end)
end

-- an emulator-only test (the device's exact size is known there)
local function emu_it(name, fn)
  git(name, function()
    if not EMU then
      pending("needs the CUDA emulator, whose memory size is known")
      return
    end
    fn()
  end)
end

local function allocated()
  return tide.cuda.memory_allocated(DEV)
end
local function reserved()
  return tide.cuda.memory_reserved(DEV)
end

-- the allocator's own rendering of a byte count (alloc.cu's human())
local function human(n)
  if n >= 1 << 30 then
    return string.format("%.2f GiB", n / (1 << 30))
  elseif n >= MiB then
    return string.format("%.2f MiB", n / MiB)
  elseif n >= KiB then
    return string.format("%.2f KiB", n / KiB)
  end
  return string.format("%d bytes", n)
end

-- the error message without the caller's position
local function msg(err)
  return (tostring(err):gsub("^[^\n]-:%d+: ", ""))
end

local function bytes(n)
  return tide.empty({ n }, { dtype = "uint8", device = DEV })
end

-- Every cached block back to the device and every dropped tensor freed: the state each test
-- starts from.
local function settle()
  collectgarbage()
  collectgarbage()
  tide.cuda.empty_cache()
end

-- Takes blocks of 64 MiB, then smaller ones down to 1 MiB, until the device is full; returns
-- them and their total. Dropping the table (and collecting) frees them.
local function fill_device()
  local held, total, size = {}, 0, 64 * MiB
  while size >= MiB do
    local ok, t = pcall(bytes, size)
    if ok then
      held[#held + 1] = t
      total = total + size
    else
      assert.matches("CUDA out of memory", t, 1, true)
      size = size // 2
    end
  end
  return held, total
end

-- Checks the out-of-memory message of op for a request of want bytes against the allocator's
-- statistics read after the failure (the retry has flushed the cache by then). The device's free
-- memory is known on the emulator only; elsewhere it must be some size.
local function assert_oom(op, want, err)
  local a, r, m = allocated(), reserved(), msg(err)
  local head = string.format("tide: %s: CUDA out of memory: tried to allocate %s; %s in use by "
    .. "tide, %s cached, ", op, human(want), human(a), human(r - a))
  local tail = " free on cuda:0; free tensors you no longer need (t:free(), collectgarbage()) or "
    .. "use smaller batches"
  if EMU then
    assert.are.equal(head .. human(EMU_CAP - r) .. tail, m)
  else
    assert.are.equal(head, m:sub(1, #head))
    assert.are.equal(tail, m:sub(-#tail))
    assert.matches("^[%d.]+ %a+$", m:sub(#head + 1, -#tail - 1))
  end
end

describe("cuda memory #cuda", function()
  before_each(function()
    if available then
      settle()
    end
  end)
  after_each(function()
    collectgarbage()
  end)

  describe("statistics #cuda", function()
    git("count requested bytes, reserve whole segments, and keep the peak", function()
      local a0, r0 = allocated(), reserved()
      -- at or above 10 MiB a block is a segment of its own, rounded to 2 MiB
      local big = bytes(23 * MiB + 1)
      assert.are.equal(a0 + 23 * MiB + 1, allocated())
      assert.are.equal(r0 + 24 * MiB, reserved())
      assert.is_true(tide.cuda.max_memory_allocated(DEV) >= a0 + 23 * MiB + 1)
      big:free()
      assert.are.equal(a0, allocated())
      assert.are.equal(r0 + 24 * MiB, reserved()) -- cached, not given back
      assert.is_true(tide.cuda.max_memory_allocated(DEV) >= a0 + 23 * MiB + 1)
      -- the cached block serves the next request that fits, without a new segment
      local again = bytes(22 * MiB)
      assert.are.equal(r0 + 24 * MiB, reserved())
      again:free()
      tide.cuda.empty_cache()
      assert.are.equal(r0, reserved())
    end)

    git("round small requests to 512 bytes inside 2 MiB segments, medium ones inside 20 MiB", function()
      if reserved() ~= 0 then
        pending("other tensors hold device memory: the segment sizes are not observable")
        return
      end
      local small = bytes(1000) -- a 1024-byte block of a new 2 MiB segment
      assert.are.equal(1000, allocated())
      assert.are.equal(2 * MiB, reserved())
      local more = {}
      for i = 1, 2047 do -- the rest of the segment: 2047 more 1024-byte blocks
        more[i] = bytes(1024)
      end
      assert.are.equal(2 * MiB, reserved())
      local one_more = bytes(1) -- a 512-byte block: a second segment
      assert.are.equal(4 * MiB, reserved())
      local medium = bytes(MiB + 1) -- above 1 MiB: a block of a new 20 MiB segment
      assert.are.equal(24 * MiB, reserved())
      assert.are.equal(1000 + 2047 * 1024 + 1 + MiB + 1, allocated())
      small, more, one_more, medium = nil, nil, nil, nil
      collectgarbage()
      assert.are.equal(0, allocated())
      assert.are.equal(24 * MiB, reserved())
      tide.cuda.empty_cache()
      assert.are.equal(0, reserved())
    end)

    git("empty_cache gives back whole free segments only", function()
      if reserved() ~= 0 then
        pending("other tensors hold device memory: the segment sizes are not observable")
        return
      end
      local a, b = bytes(4096), bytes(4096) -- two blocks of one 2 MiB segment
      assert.are.equal(2 * MiB, reserved())
      a:free()
      tide.cuda.empty_cache()
      assert.are.equal(2 * MiB, reserved()) -- b still lives in the segment
      assert.are.equal(4096, allocated())
      b:free()
      tide.cuda.empty_cache()
      assert.are.equal(0, reserved())
      assert.are.equal(0, allocated())
    end)

    git("leak nothing: every op's outputs and temporaries are freed", function()
      local a0 = allocated()
      do
        local nn = tide.nn
        tide.manual_seed(1)
        local x = tide.randn({ 64, 100 }, { device = DEV })
        local y = (x + 1):relu():sum(2):mean() -- a full reduction through split partials
        local m = x:select(2, 1):unsqueeze(2):expand(64, 100) -- cuBLAS cannot take this layout
        local p = m:matmul(x:t()):softmax(2)
        local idx = tide.tensor({ 3, 1, 3 }, { device = DEV })
        local sel = p:index_select(1, idx):to("float64"):to("cuda:0", { copy = true })
        local model = nn.Sequential(nn.Linear(100, 16), nn.ReLU(), nn.Linear(16, 4)):to(DEV)
        local loss = nn.CrossEntropyLoss()(model(x), tide.tensor({ 1, 2, 3, 4 }, { device = DEV })
          :index_select(1, tide.arange(1, 65, 1, { dtype = "int64", device = DEV }) % 4 + 1))
        loss:backward()
        local opt = tide.optim.Adam(model:parameters(), { lr = 0.01 })
        opt:step()
        assert.is_true(y:item() == y:item() and sel:numel() > 0)
      end
      collectgarbage()
      collectgarbage()
      assert.are.equal(a0, allocated())
    end)
  end)

  describe("out of memory #cuda", function()
    git("raises the allocator's message for a request no device can hold, and recovers", function()
      local keep = tide.ones({ 4 }, { device = DEV })
      local a0 = allocated()
      local ok, err = pcall(bytes, 1 << 44)
      assert.is_false(ok)
      assert_oom("empty", 1 << 44, err)
      assert.are.equal(a0, allocated())
      assert.are.equal(4, keep:sum():item())
      ok, err = pcall(tide.zeros, { 1 << 42 }, { device = DEV })
      assert.is_false(ok)
      assert_oom("zeros", 1 << 44, err)
      ok, err = pcall(function()
        return keep:view(4, 1):expand(4, 1 << 40) + 1
      end)
      assert.is_false(ok)
      assert_oom("add", 1 << 44, err)
      assert.are.same({ 1, 1, 1, 1 }, keep:cpu():totable())
    end)

    git("an op that fails for memory leaves every tensor as it was", function()
      tide.manual_seed(2)
      local host = tide.randn({ 2048, 4096 }) -- 32 MiB
      local host_t = tide.randn({ 4096, 2048 }):t() -- the same shape, another layout
      local x = host:to(DEV)
      local y = tide.zeros({ 2048, 4096 }, { device = DEV })
      local held = fill_device()
      local a0 = allocated()
      local cases = {
        -- an operand overlapping the destination in another layout is copied first
        { "add_", 32 * MiB, function() return y:add_(y:view(4096, 2048):t()) end },
        -- a host source in another layout is staged on the device (a dense one of the same
        -- dtype is copied straight into the destination: nothing to allocate)
        { "copy_", 32 * MiB, function() return y:copy_(host_t) end },
        { "to", 64 * MiB, function() return x:to("float64") end },
        { "clone", 32 * MiB, function() return x:clone() end },
        { "add", 32 * MiB, function() return x + y end },
      }
      for _, c in ipairs(cases) do
        local ok, err = pcall(c[3])
        assert.is_false(ok, c[1])
        assert_oom(c[1], c[2], msg(err))
        assert.are.equal(a0, allocated())
      end
      held = nil
      collectgarbage()
      assert.are.equal(0, (x:cpu() - host):abs():max():item())
      assert.are.equal(0, y:cpu():abs():max():item())
    end)

    git("a loop that drops far more than the device holds never fails", function()
      local held, total = fill_device()
      held = nil
      settle()
      local a0 = allocated()
      -- blocks of a quarter of the device, sixteen times over: four times its size
      local size = total // 4 // (2 * MiB) * (2 * MiB)
      for _ = 1, 16 do
        local t = tide.zeros({ size // 4 }, { device = DEV })
        assert.are.equal(size, t:numel() * 4)
      end
      collectgarbage()
      assert.are.equal(a0, allocated())
      -- the same with small tensors that only the collector's pressure frees
      for _ = 1, 300 do
        local t = tide.zeros({ 256 }, { device = DEV })
        t = t + 1
      end
      collectgarbage()
      assert.are.equal(a0, allocated())
    end)

    emu_it("falls back to a segment of the exact size, then fails naming MiB, KiB and bytes", function()
      local free = EMU_CAP - reserved()
      local filler = bytes((free - 12 * MiB) // (2 * MiB) * (2 * MiB))
      free = EMU_CAP - reserved()
      assert.is_true(free >= 12 * MiB and free < 14 * MiB)
      -- 5 MiB would take a 20 MiB segment, which no longer fits: a segment of exactly 5 MiB
      local r = reserved()
      local five = bytes(5 * MiB)
      assert.are.equal(r + 5 * MiB, reserved())
      free = EMU_CAP - reserved()
      local more = bytes((free - 512 * KiB) // 512 * 512) -- leaves about 512 KiB
      assert.is_true(EMU_CAP - reserved() < MiB)
      local ok, err = pcall(bytes, 3 * MiB // 2)
      assert.is_false(ok)
      assert_oom("empty", 3 * MiB // 2, err)
      assert.matches("tried to allocate 1.50 MiB; ", msg(err), 1, true)
      assert.matches("; [%d.]+ %a+ in use by tide, [%d.]+ %a+ cached, 51[23]%.%d%d KiB free on cuda:0;", msg(err))
      -- a small request takes a segment of its own size when a 2 MiB one does not fit
      r = reserved()
      local tiny = bytes(1000)
      assert.are.equal(r + 1024, reserved())
      filler, five, more, tiny = nil, nil, nil, nil
      collectgarbage()
      tide.cuda.empty_cache()
    end)

    emu_it("gives cached segments back and retries before failing", function()
      local cached = bytes(30 * MiB)
      cached:free()
      local r = reserved()
      assert.is_true(r >= 30 * MiB)
      -- fits only once the cached segment is given back
      local want = (EMU_CAP - r + 20 * MiB) // (2 * MiB) * (2 * MiB)
      local big = bytes(want)
      assert.are.equal(r - 30 * MiB + want, reserved())
      local ok, err = pcall(bytes, EMU_CAP + 2 * MiB)
      assert.is_false(ok)
      assert_oom("empty", EMU_CAP + 2 * MiB, err)
      big:free()
    end)
  end)
end)
