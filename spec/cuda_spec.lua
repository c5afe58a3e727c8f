-- cuda_spec.lua — every op on cuda:0 against the CPU result, and the placement rules between cpu
-- and cuda:0. Tagged #cuda: `lua5.4 /usr/bin/busted --run=gpu`. Without a GPU each test is
-- reported pending ("no CUDA device"), not passed.
--
-- TIDE_CUDA_SPEC_DEVICE=cpu:1 (with TIDE_CPU_DEVICES=2) runs the same comparisons against a
-- virtual CPU device: that checks this spec itself on a machine without a GPU.
local tide = require "tide"

local DEV = os.getenv("TIDE_CUDA_SPEC_DEVICE") or "cuda:0"
local ON_GPU = DEV:match("^cuda") ~= nil
local available = (not ON_GPU) or tide.cuda.is_available()

-- it(), or pending when there is no device to run on
local function git(name, fn)
  it(name, function()
    if not available then
      pending("no CUDA device")
      return
    end
    fn()
  end)
end

-- flat Lua list of a tensor's values (any device, any layout)
local function flat(t)
  local c = t:cpu()
  if c.dtype == "float16" or c.dtype == "bfloat16" then
    c = c:float()
  end
  return c:contiguous():view(-1):totable()
end

-- asserts that device result g (moved to cpu) equals cpu result c within tol (relative)
local function same(g, c, tol, what)
  tol = tol or 1e-5
  what = what or ""
  assert.are.same(c.shape, g.shape, what .. " shape")
  assert.are.equal(c.dtype, g.dtype, what .. " dtype")
  local a, b = flat(g), flat(c)
  for i = 1, #b do
    local x, y = a[i], b[i]
    if type(y) == "boolean" or math.type(y) == "integer" then
      if x ~= y then
        error(string.format("%s element %d: %s on %s, %s on cpu", what, i, tostring(x), DEV,
          tostring(y)), 2)
      end
    elseif not (x ~= x and y ~= y) then -- both NaN is a match
      if math.abs(x - y) > tol * (1 + math.abs(y)) then
        error(string.format("%s element %d: %.9g on %s, %.9g on cpu", what, i, x, DEV, y), 2)
      end
    end
  end
end

local function randn(shape, dtype)
  return tide.randn(shape, { dtype = dtype or "float32" })
end

local function on(t)
  return t:to(DEV)
end

describe("cuda #cuda", function()
  before_each(function()
    tide.manual_seed(1234)
  end)
  after_each(function()
    collectgarbage()
  end)

  describe("availability", function()
    it("reports a reason when CUDA is unavailable, and never raises", function()
      local ok = tide.cuda.is_available()
      assert.is_boolean(ok)
      if ok then
        assert.is_nil(tide.cuda.unavailable_reason())
        assert.is_true(tide.cuda.device_count() >= 1)
      else
        assert.is_string(tide.cuda.unavailable_reason())
        assert.are.equal(0, tide.cuda.device_count())
        local ok2, err = pcall(tide.zeros, { 2 }, { device = "cuda" })
        assert.is_false(ok2)
        assert.matches("tide: ", err, 1, true)
      end
    end)
  end)

  describe("placement", function()
    git("creates directly on the device and moves explicitly", function()
      local z = tide.zeros({ 2, 3 }, { device = DEV })
      assert.are.equal(tide.device(DEV), z.device)
      local x = randn({ 2, 3 })
      local g = on(x)
      assert.are.equal(tide.device(DEV), g.device)
      assert.is_true(rawequal(g:to(DEV), g))
      assert.are.equal(tide.device("cpu"), g:cpu().device)
      same(g, x, 0)
      if ON_GPU then
        assert.is_true(rawequal(g:cuda(), g))
      end
    end)

    git("refuses mixed devices, naming both", function()
      local g, c = on(randn({ 3 })), randn({ 3 })
      local ok, err = pcall(function()
        return g + c
      end)
      assert.is_false(ok)
      assert.matches("same device", err, 1, true)
      assert.matches(tostring(tide.device(DEV)), err, 1, true)
      assert.matches("cpu", err, 1, true)
    end)

    git("keeps results on the device; numbers are scalars", function()
      local g = on(randn({ 4 }))
      assert.are.equal(tide.device(DEV), (g + 2).device)
      assert.are.equal(tide.device(DEV), (2 * g):sum().device)
      assert.are.equal(tide.device(DEV), g:matmul(g).device)
    end)

    git("needs :cpu() for totable; item and tostring copy", function()
      local g = on(tide.tensor({ 1.5, 2.5 }))
      local ok, err = pcall(g.totable, g)
      assert.is_false(ok)
      assert.matches(":cpu()", err, 1, true)
      assert.are.equal(4, g:sum():item())
      assert.matches(tostring(tide.device(DEV)), tostring(g), 1, true)
      assert.matches("2.5", tostring(g), 1, true)
    end)

    git("counts transfers and copies in place across devices", function()
      tide.reset_transfer_stats()
      local x = randn({ 8 })
      local g = on(x)
      local back = g:cpu()
      local s = tide.transfer_stats()
      assert.are.equal(1, s.h2d_count)
      assert.are.equal(32, s.h2d_bytes)
      assert.are.equal(1, s.d2h_count)
      same(back, x, 0)
      local dst = tide.zeros({ 8 }, { device = DEV })
      dst:copy_(x)
      same(dst, x, 0)
      local host = tide.zeros({ 8 })
      host:copy_(g * 2)
      same(host, x * 2)
    end)

    git("converts dtypes on the way and in place", function()
      local x = randn({ 3, 4 }) * 10
      same(x:to(DEV, { dtype = "float64" }), x:double())
      same(on(x):long(), x:long(), 0)
      same(on(x):half(), x:half(), 0)
      same(on(x):bfloat16(), x:bfloat16(), 0)
      same(on(x):half():float(), x:half():float(), 0)
      same(on(x):gt(0):float(), x:gt(0):float(), 0)
      local i = tide.tensor({ 1, -2, 3 })
      same(on(i):float(), i:float(), 0)
      same(on(i):bool(), i:bool(), 0)
    end)
  end)

  describe("two devices", function()
    git("copies between two GPUs and refuses to mix them", function()
      local dev2 = ON_GPU and "cuda:1" or "cpu"
      if ON_GPU and tide.cuda.device_count() < 2 then
        pending("needs two CUDA devices")
        return
      end
      local x = randn({ 5, 6 })
      local g = on(x)
      tide.reset_transfer_stats()
      local g2 = g:to(dev2)
      assert.are.equal(tide.device(dev2), g2.device)
      same(g2, x, 0)
      same(g2:t():to(DEV), x:t(), 0)
      if ON_GPU then
        local s = tide.transfer_stats()
        assert.are.equal(2, s.d2d_count)
        assert.are.equal(0, s.h2d_count)
      end
      local ok, err = pcall(function()
        return g + g2
      end)
      assert.is_false(ok)
      assert.matches("same device", err, 1, true)
    end)
  end)

  describe("memory", function()
    git("counts allocated bytes, caches, and gives the cache back", function()
      if not ON_GPU then
        return
      end
      collectgarbage()
      local before = tide.cuda.memory_allocated()
      local g = tide.empty({ 1024, 1024 }, { device = DEV })
      assert.are.equal(before + 4 * 1024 * 1024, tide.cuda.memory_allocated())
      assert.is_true(tide.cuda.max_memory_allocated() >= before + 4 * 1024 * 1024)
      g:free()
      assert.are.equal(before, tide.cuda.memory_allocated())
      assert.is_true(tide.cuda.memory_reserved() >= 4 * 1024 * 1024)
      tide.cuda.empty_cache()
      assert.is_true(tide.cuda.memory_reserved() < 4 * 1024 * 1024 + before + (20 << 20))
    end)

    git("reuses cached blocks for repeated allocations", function()
      if not ON_GPU then
        return
      end
      local g = tide.empty({ 256, 256 }, { device = DEV })
      g:free()
      local reserved = tide.cuda.memory_reserved()
      for _ = 1, 100 do
        local t = tide.empty({ 256, 256 }, { device = DEV })
        t:free()
      end
      assert.are.equal(reserved, tide.cuda.memory_reserved())
    end)

    git("raises a tide error on out of memory, and recovers", function()
      if not ON_GPU then
        return
      end
      local ok, err = pcall(tide.empty, { 1 << 46 }, { device = DEV })
      assert.is_false(ok)
      assert.matches("CUDA out of memory", err, 1, true)
      assert.matches("tried to allocate", err, 1, true)
      local g = tide.ones({ 4 }, { device = DEV })
      assert.are.equal(4, g:sum():item())
    end)

    git("pins host memory and copies without blocking", function()
      if not ON_GPU then
        return
      end
      local x = randn({ 1000 })
      local p = x:pin_memory()
      assert.is_true(p:is_pinned())
      assert.is_false(x:is_pinned())
      local g = p:to(DEV, { non_blocking = true })
      tide.cuda.synchronize()
      same(g, x, 0)
    end)
  end)

  describe("elementwise", function()
    local binary = { "add", "sub", "mul", "div", "maximum", "minimum", "fmod", "floor_divide" }
    local compare = { "eq", "ne", "lt", "le", "gt", "ge" }

    git("binary ops with broadcasting and non-contiguous views", function()
      for _, dt in ipairs({ "float32", "float64" }) do
        local a, b = randn({ 3, 1, 5 }, dt), randn({ 4, 5 }, dt) + 3
        local at = randn({ 5, 4 }, dt):t() -- non-contiguous [4, 5]
        for _, op in ipairs(binary) do
          same(on(a)[op](on(a), on(b)), a[op](a, b), 1e-5, op .. " " .. dt)
          same(on(at)[op](on(at), on(b)), at[op](at, b), 1e-5, op .. " t " .. dt)
        end
        local pa = a:abs() + 0.5
        same(on(pa):pow(on(b)), pa:pow(b), 1e-4, "pow " .. dt)
      end
    end)

    git("large contiguous add takes the vector path and the tail", function()
      local a, b = randn({ 100003 }), randn({ 100003 })
      same(on(a) + on(b), a + b, 0)
      -- an offset view: misaligned for vector loads
      local an, bn = a:narrow(1, 2, 100000), b:narrow(1, 3, 100000)
      same(on(a):narrow(1, 2, 100000) + on(b):narrow(1, 3, 100000), an + bn, 0)
    end)

    git("compare ops give bool", function()
      local a = tide.tensor({ { 1, 2, 3 }, { 3, 2, 1 } }):float()
      local b = tide.tensor({ 2, 2, 2 }):float()
      for _, op in ipairs(compare) do
        local g = on(a)[op](on(a), on(b))
        assert.are.equal("bool", g.dtype)
        same(g, a[op](a, b), 0, op)
      end
      local r = randn({ 6, 7 })
      same(on(r):gt(0.25), r:gt(0.25), 0, "gt scalar")
    end)

    git("scalar ops in both orders and the metamethods", function()
      local a = randn({ 4, 6 })
      local g = on(a)
      same(g + 2, a + 2)
      same(2 - g, 2 - a)
      same(g * 3, a * 3)
      same(g / 4, a / 4)
      same(1 / (g:abs() + 1), 1 / (a:abs() + 1))
      same((g:abs() + 1) ^ 2, (a:abs() + 1) ^ 2)
      same(2 ^ g, 2 ^ a, 1e-5)
      same(g % 0.7, a % 0.7, 1e-4)
      same(g // 0.3, a // 0.3)
      same(-g, -a)
      same(g:t() * 2, a:t() * 2)
    end)

    git("unary ops", function()
      for _, dt in ipairs({ "float32", "float64" }) do
        local a = randn({ 5, 7 }, dt) * 2
        local pos = a:abs() + 0.1
        for _, op in ipairs({ "neg", "abs", "exp", "tanh", "sigmoid", "relu", "gelu", "sin",
          "cos", "sign" }) do
          same(on(a)[op](on(a)), a[op](a), 1e-5, op .. " " .. dt)
          same(on(a):t()[op](on(a):t()), a:t()[op](a:t()), 1e-5, op .. " t " .. dt)
        end
        for _, op in ipairs({ "log", "sqrt", "rsqrt" }) do
          same(on(pos)[op](on(pos)), pos[op](pos), 1e-5, op .. " " .. dt)
        end
        same(on(a):clamp(-0.5, 0.5), a:clamp(-0.5, 0.5), 0, "clamp")
      end
    end)

    -- the CPU may not compute in half types: the reference computes in float32 from the same
    -- rounded inputs and rounds once at the end, as the GPU does
    git("float16 and bfloat16 arithmetic", function()
      if not ON_GPU then
        return -- half types compute on cuda only
      end
      local a, b = randn({ 8, 9 }), randn({ 9 })
      for _, dt in ipairs({ "float16", "bfloat16" }) do
        local fa, fb = a:to(dt):float(), b:to(dt):float()
        local ga, gb = on(a):to(dt), on(b):to(dt)
        assert.are.equal(dt, (ga + gb).dtype)
        same((ga + gb):float(), (fa + fb):to(dt):float(), 1e-2, "add " .. dt)
        same((ga * gb):float(), (fa * fb):to(dt):float(), 1e-2, "mul " .. dt)
        same(ga:exp():float(), fa:exp():to(dt):float(), 1e-2, "exp " .. dt)
        same(ga:sum(2):float(), fa:sum(2):to(dt):float(), 2e-2, "sum " .. dt)
        same(ga:softmax(2):float(), fa:softmax(2):to(dt):float(), 1e-2, "softmax " .. dt)
      end
    end)

    git("integer ops are exact", function()
      local a = tide.tensor({ { 7, -7, 123456789012 }, { 0, 5, -3 } })
      local b = tide.tensor({ 2, 3, -5 })
      for _, op in ipairs({ "add", "sub", "mul", "maximum", "minimum", "fmod", "floor_divide" }) do
        same(on(a)[op](on(a), on(b)), a[op](a, b), 0, op)
      end
      same(on(a) * 3, a * 3, 0)
      same(on(a):neg(), a:neg(), 0)
      same(on(a):abs(), a:abs(), 0)
      same(on(a):lt(on(b)), a:lt(b), 0)
    end)

    git("where, fill_, zero_, clone, contiguous", function()
      local c = randn({ 4, 5 }):gt(0)
      local a, b = randn({ 4, 5 }), randn({ 5 })
      same(tide.where(on(c), on(a), on(b)), tide.where(c, a, b), 0)
      same(on(a):t():contiguous(), a:t():contiguous(), 0)
      same(on(a):t():clone(), a:t():clone(), 0)
      local g = on(a)
      g:t():fill_(3.5)
      assert.are.equal(70, g:sum():item())
      g:narrow(2, 2, 2):zero_()
      local h = a:clone()
      h:fill_(3.5)
      h:narrow(2, 2, 2):zero_()
      same(g, h, 0)
    end)
  end)

  describe("reductions", function()
    git("over each dim, with keepdim, and over transposed views", function()
      for _, dt in ipairs({ "float32", "float64" }) do
        local a = randn({ 3, 4, 5 }, dt)
        for _, op in ipairs({ "sum", "mean", "prod" }) do
          for _, d in ipairs({ 1, 2, 3, -1 }) do
            same(on(a)[op](on(a), d), a[op](a, d), 1e-5, op .. " " .. d)
            same(on(a)[op](on(a), d, true), a[op](a, d, true), 1e-5, op .. " keepdim")
          end
          same(on(a)[op](on(a)), a[op](a), 1e-5, op .. " all")
        end
        local at = a:transpose(1, 3)
        same(on(a):transpose(1, 3):sum(2), at:sum(2), 1e-5, "sum t")
      end
    end)

    git("max/min with 1-based indices, argmax", function()
      local a = randn({ 6, 7 })
      for _, d in ipairs({ 1, 2 }) do
        local gv, gi = on(a):max(d)
        local cv, ci = a:max(d)
        same(gv, cv, 0, "max values")
        same(gi, ci, 0, "max indices")
        gv, gi = on(a):min(d)
        cv, ci = a:min(d)
        same(gv, cv, 0, "min values")
        same(gi, ci, 0, "min indices")
        same(on(a):argmax(d), a:argmax(d), 0, "argmax")
      end
      same(on(a):max(), a:max(), 0)
      same(on(a):argmax(), a:argmax(), 0)
      -- ties go to the first index
      local t = tide.tensor({ { 1, 3, 3 }, { 2, 2, 0 } }):float()
      local _, gi = on(t):max(2)
      assert.are.same({ 2, 1 }, gi:cpu():totable())
    end)

    git("long rows and many outputs (split and per-thread paths)", function()
      local a = randn({ 3, 100000 })
      same(on(a):sum(2), a:sum(2), 1e-4, "long rows")
      same(on(a):max(2), a:max(2), 0, "long max")
      local v = randn({ 300000 })
      same(on(v):sum(), v:sum(), 1e-4, "full sum")
      local _, gi = on(v):max(1)
      local _, ci = v:max(1)
      same(gi, ci, 0, "full argmax")
      local m = randn({ 3000, 100 })
      same(on(m):sum(1), m:sum(1), 1e-4, "columns")
      same(on(m):mean(1), m:mean(1), 1e-4, "column means")
    end)

    git("integer sums", function()
      local a = tide.tensor({ { 1, 2, 3 }, { 4, 5, 6 } })
      same(on(a):sum(1), a:sum(1), 0)
      same(on(a):sum(), a:sum(), 0)
      same(on(a:gt(2)):sum(), a:gt(2):sum(), 0)
    end)
  end)

  describe("matmul", function()
    git("2-D, batched, broadcast batch and transposed views", function()
      for _, dt in ipairs({ "float32", "float64" }) do
        local a, b = randn({ 5, 7 }, dt), randn({ 7, 3 }, dt)
        same(on(a):matmul(on(b)), a:matmul(b), 1e-4, "2d " .. dt)
        same(on(b):t():matmul(on(a):t()), b:t():matmul(a:t()), 1e-4, "t " .. dt)
        local ba, bb = randn({ 4, 5, 7 }, dt), randn({ 4, 7, 3 }, dt)
        same(tide.matmul(on(ba), on(bb)), tide.matmul(ba, bb), 1e-4, "batched " .. dt)
        same(tide.matmul(on(ba), on(b)), tide.matmul(ba, b), 1e-4, "broadcast " .. dt)
        local v = randn({ 7 }, dt)
        same(on(a):matmul(on(v)), a:matmul(v), 1e-4, "matrix-vector " .. dt)
        same(on(v):matmul(on(v)), v:matmul(v), 1e-4, "dot " .. dt)
        -- a view whose rows are not unit-stride in either dim: copied first
        local p = randn({ 7, 2, 5 }, dt):select(2, 1):t() -- [5, 7], strides (1, 10)
        same(p:to(DEV):matmul(on(b)), p:matmul(b), 1e-4, "strided " .. dt)
      end
    end)

    git("a larger gemm", function()
      local a, b = randn({ 300, 257 }), randn({ 257, 129 })
      same(on(a):matmul(on(b)), a:matmul(b), 1e-3)
    end)

    git("float16 and bfloat16 accumulate in float", function()
      if not ON_GPU then
        return -- half types compute on cuda only
      end
      local a, b = randn({ 33, 64 }), randn({ 64, 17 })
      for _, dt in ipairs({ "float16", "bfloat16" }) do
        local g = on(a):to(dt):matmul(on(b):to(dt))
        assert.are.equal(dt, g.dtype)
        same(g:float(), a:to(dt):float():matmul(b:to(dt):float()), 3e-2, dt)
      end
    end)
  end)

  describe("softmax, indexing, joins", function()
    git("softmax and log_softmax over each dim", function()
      for _, dt in ipairs({ "float32", "float64" }) do
        local a = randn({ 4, 6, 5 }, dt) * 3
        for _, d in ipairs({ 1, 2, 3, -1 }) do
          same(on(a):softmax(d), a:softmax(d), 1e-5, "softmax " .. d)
          same(on(a):log_softmax(d), a:log_softmax(d), 1e-5, "log_softmax " .. d)
        end
        local long = randn({ 3, 3000 }, dt)
        same(on(long):softmax(2), long:softmax(2), 1e-5, "long rows")
        same(on(long):log_softmax(2), long:log_softmax(2), 1e-5, "long rows log")
      end
    end)

    git("index_select, index_add_", function()
      local a = randn({ 5, 4, 3 })
      local idx = tide.tensor({ 5, 1, 1, 3 })
      local per_dim = { tide.tensor({ 3, 1 }), tide.tensor({ 4, 2 }), tide.tensor({ 3, 1, 3 }) }
      for d = 1, 3 do
        local i = per_dim[d]
        same(on(a):index_select(d, on(i)), a:index_select(d, i), 0, "index_select " .. d)
        local at = a:transpose(1, 3)
        same(on(a):transpose(1, 3):index_select(d, on(i)), at:index_select(d, i), 0, "t " .. d)
      end
      local dst, src = randn({ 5, 3 }), randn({ 4, 3 })
      local g = on(dst)
      g:index_add_(1, on(idx), on(src))
      dst:index_add_(1, idx, src)
      same(g, dst, 1e-5, "index_add_")
    end)

    git("cat and stack", function()
      local a, b = randn({ 2, 3 }), randn({ 4, 3 })
      same(tide.cat({ on(a), on(b) }, 1), tide.cat({ a, b }, 1), 0)
      same(tide.cat({ on(a):t(), on(b):t() }, 2), tide.cat({ a:t(), b:t() }, 2), 0)
      same(tide.stack({ on(a), on(a) }, 2), tide.stack({ a, a }, 2), 0)
    end)

    git("random numbers match the CPU for the same seed", function()
      tide.manual_seed(7)
      local c = tide.empty({ 3, 50 }):uniform_(-2, 3)
      tide.manual_seed(7)
      local g = tide.empty({ 3, 50 }, { device = DEV }):uniform_(-2, 3)
      same(g, c, 1e-6, "uniform_")
      tide.manual_seed(9)
      c = tide.empty({ 1001 }):normal_(1, 2)
      tide.manual_seed(9)
      g = tide.empty({ 1001 }, { device = DEV }):normal_(1, 2)
      same(g, c, 1e-5, "normal_")
      tide.manual_seed(11)
      c = tide.randn({ 4, 4 }):t()
      tide.manual_seed(11)
      g = tide.randn({ 4, 4 }, { device = DEV }):t()
      same(g, c, 1e-5, "randn")
    end)

    git("arange, full, eye, ones on the device", function()
      same(tide.arange(1, 11, 2, { device = DEV }), tide.arange(1, 11, 2), 0)
      same(tide.arange(0, 1, 0.1, { device = DEV }), tide.arange(0, 1, 0.1), 1e-6)
      same(tide.full({ 2, 3 }, 7.25, { device = DEV }), tide.full({ 2, 3 }, 7.25), 0)
      same(tide.eye(4, { device = DEV }), tide.eye(4), 0)
      same(tide.ones({ 3 }, { device = DEV, dtype = "int64" }), tide.ones({ 3 }, { dtype = "int64" }), 0)
    end)
  end)

  describe("nn kernels", function()
    git("im2col and col2im", function()
      local x = randn({ 2, 3, 7, 6 })
      local cols = tide.im2col(x, 3, 2, 2, 1, 1, 0)
      same(tide.im2col(on(x), 3, 2, 2, 1, 1, 0), cols, 0, "im2col")
      same(tide.col2im(on(cols), 3, 7, 6, 3, 2, 2, 1, 1, 0), tide.col2im(cols, 3, 7, 6, 3, 2, 2, 1,
        1, 0), 1e-5, "col2im")
    end)

    git("maxpool2d and its backward", function()
      local x = randn({ 2, 3, 8, 7 })
      local co, ci = tide.maxpool2d(x, 3, 3, 2, 2, 1, 1)
      local go, gi = tide.maxpool2d(on(x), 3, 3, 2, 2, 1, 1)
      same(go, co, 0, "values")
      same(gi, ci, 0, "indices")
      local grad = randn(co.shape)
      same(tide.maxpool2d_backward(on(grad), gi, 8, 7), tide.maxpool2d_backward(grad, ci, 8, 7),
        1e-5, "backward")
    end)

    git("a small model trains to the same gradients as on the CPU", function()
      local nn = tide.nn
      tide.manual_seed(3)
      local model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
      local x, y = randn({ 5, 6 }), tide.tensor({ 1, 3, 2, 2, 1 })
      local loss_fn = nn.CrossEntropyLoss()
      local loss = loss_fn(model(x), y)
      loss:backward()
      local cpu_grads = {}
      for i, p in ipairs(model:parameters()) do
        cpu_grads[i] = p.grad:clone()
      end
      model:zero_grad()
      model:to(DEV)
      local gl = loss_fn(model(on(x)), on(y))
      assert.are.equal(tide.device(DEV), gl.device)
      same(gl, loss, 1e-5, "loss")
      gl:backward()
      for i, p in ipairs(model:parameters()) do
        assert.are.equal(tide.device(DEV), p.grad.device)
        same(p.grad, cpu_grads[i], 1e-4, "grad " .. i)
      end
    end)
  end)
end)
