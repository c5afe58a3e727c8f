-- gpu_overhead.lua — per-op cost of a small `c = a + b` on cuda:0 from Lua (binding, core,
-- allocator, launch), median of REPS runs of ITERS ops, the GPU drained before each clock read.
-- Prints "key value" lines for bench/gpu_check.sh. Issue 3 target: <= 6 us.
local tide = require("tide")

local ITERS = tonumber(arg[1]) or 20000
local REPS = tonumber(arg[2]) or 7
local clock = tide.wall_time or os.clock -- os.clock: CPU time, a fair bound for a CPU-bound loop

if not tide.cuda.is_available() then
  print("no GPU: " .. tostring(tide.cuda.unavailable_reason()))
  return
end

local function median(v)
  table.sort(v)
  local n = #v
  return n % 2 == 1 and v[(n + 1) // 2] or (v[n // 2] + v[n // 2 + 1]) / 2
end

for _, size in ipairs({ 1, 100 }) do
  local a = tide.ones({ size }, { device = "cuda" })
  local b = tide.ones({ size }, { device = "cuda" })
  local c
  local times = {}
  for r = 0, REPS do
    tide.cuda.synchronize()
    local t0 = clock()
    for _ = 1, ITERS do
      c = a + b
    end
    tide.cuda.synchronize()
    if r > 0 then
      times[#times + 1] = clock() - t0
    end
  end
  -- (the emulator measuring the host side alone runs no kernel: nothing to check)
  assert(os.getenv("TIDE_CUDA_EMU_SKIP_KERNELS") == "1" or c:sum():item() == 2 * size,
    "a + b gave a wrong sum")
  print(string.format("tide_lua_small_add_%d_us %.3f", size, median(times) / ITERS * 1e6))
end
print("tide_lua_clock " .. (tide.wall_time and "wall" or "cpu"))
