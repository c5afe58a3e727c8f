-- tide: the module table is tide.core (the C binding) plus the helpers written in Lua here,
-- and lazy fields nn / optim / data / utils loaded on first use.
local compat = require("tide._compat")
-- tide's defaults for libgomp (GOMP_SPINCOUNT=3000) and OpenBLAS (OPENBLAS_CORETYPE from the
-- CPU's features), unless the user set them, must be in the environment before core.so loads
-- those libraries; preload.so sets them from its constructors and its restore function takes
-- them back out once they have been read (lua/preload/preload.h)
local preload = package.searchpath and package.loadlib
  and package.searchpath("tide.preload", package.cpath)
local preload_restore = preload and package.loadlib(preload, "tide_preload_restore")
local core = require("tide.core")
if preload_restore then
  preload_restore()
end

local tide = {}
for k, v in pairs(core) do
  tide[k] = v
end
tide.core = core
tide._VERSION = "tide scm"

-- Set before anything below requires "tide" back (autograd, nn): require would loop otherwise.
package.loaded["tide"] = tide

-- the Lua files beside this one are tide's: the binding looks past their frames for the
-- user's line (errors raised while they run, transfer_guard("log"), trace_transfers)
core._mark_lib(function() end)

local pack, unpack = compat.pack, compat.unpack

-- true when err is require's own "module 'name' not found", not an error inside that module
local function not_found(err, name)
  return type(err) == "string" and err:find("module '" .. name .. "' not found", 1, true) ~= nil
end

-- raises msg at the nearest line outside tide (also through the user's tail calls)
local raise_here = require("tide.autograd.raise")

-- A core error caught inside a helper carries the helper's position: raise the bare "tide: ..."
-- message again at the user's line so the user's file:line comes first.
local function raise(err)
  if type(err) == "string" then
    local msg = err:match("^tide:.*") or err:match("^[^\n]-:%d+: (tide:.*)")
    if msg then
      raise_here(msg)
    end
  end
  error(err, 0)
end

--- Runs fn(...) with dev as the default device; restores the previous one, also on error.
function tide.with_device(dev, fn, ...)
  if type(fn) ~= "function" then
    raise_here("tide: with_device: expected a function after the device, got " .. type(fn))
  end
  local prev = core.get_default_device()
  local ok, err = pcall(core.set_default_device, dev)
  if not ok then
    raise(err)
  end
  local res = pack(pcall(fn, ...))
  core.set_default_device(prev)
  if not res[1] then
    error(res[2], 0) -- fn's own error, position and all
  end
  return unpack(res, 2, res.n)
end

-- PyTorch's dtype names (torch.long, torch.float, ...) as tide's dtype strings, so a ported
-- {dtype = tide.long} or x:to(tide.float64) means what it says instead of nil (the default).
-- The dtypes tide lacks are named too: {dtype = tide.int16} raises "unknown dtype int16"
-- rather than reading nil and taking the default
for name, dtype in pairs({ float32 = "float32", float = "float32", float64 = "float64",
  double = "float64", float16 = "float16", half = "float16", bfloat16 = "bfloat16",
  int32 = "int32", int = "int32", int64 = "int64", long = "int64", uint8 = "uint8",
  bool = "bool", int8 = "int8", int16 = "int16", short = "int16", uint16 = "uint16",
  uint32 = "uint32", uint64 = "uint64", complex64 = "complex64", cfloat = "complex64",
  complex128 = "complex128", cdouble = "complex128", complex32 = "complex32",
  chalf = "complex32", float8_e4m3fn = "float8_e4m3fn", float8_e5m2 = "float8_e5m2",
  float8_e4m3fnuz = "float8_e4m3fnuz", float8_e5m2fnuz = "float8_e5m2fnuz" }) do
  tide[name] = dtype
end
-- PyTorch's memory formats (torch.channels_last, ...) as the names tide's memory_format takes
for _, name in ipairs({ "contiguous_format", "preserve_format", "channels_last",
  "channels_last_3d" }) do
  tide[name] = name
end

-- tide.Size(sizes): PyTorch's torch.Size, a copy of the list with t.shape's metatable (a
-- negative index counts from the end; it prints as tide.Size({2, 3}))
local SIZE_MT = getmetatable(core.zeros(0).shape)
-- x.shape == y.shape compares the sizes, as PyTorch's (a shape is a new table at each read, so
-- Lua's identity was never true); on 5.3 and 5.4 a plain list compares too (x.shape == {2, 3})
SIZE_MT.__eq = function(a, b)
  if #a ~= #b then
    return false
  end
  for i = 1, #a do
    if rawget(a, i) ~= rawget(b, i) then
      return false
    end
  end
  return true
end
function tide.Size(sizes)
  if type(sizes) ~= "table" then
    error("tide: Size: expected a list of sizes, got " .. type(sizes), 2)
  end
  local copy = {}
  for i, s in ipairs(sizes) do
    copy[i] = s
  end
  return setmetatable(copy, SIZE_MT)
end

-- Python's isinstance(obj, cls) for tide's classes and tensors: tide.isinstance(m, nn.Linear)
tide.isinstance = require("tide._class").is_instance
-- NumPy's newaxis, PyTorch's None in an index (x[{tide.newaxis, "..."}]: tide.subscripts)
tide.newaxis = "newaxis"
-- torch.inf, torch.nan, torch.pi, torch.e
tide.inf, tide.nan, tide.pi, tide.e = math.huge, 0 / 0, math.pi, math.exp(1)

-- checkpoints live in tide.serialize (the io part), loaded on first use; C forwarders keep
-- the user's line in error messages even when called in tail position
tide.save = core._forward("tide.serialize", "save")
tide.load = core._forward("tide.serialize", "load")

-- autograd (pure Lua) installs the binding's recording hook; tide.no_grad and tide.enable_grad
-- are its functions (fn(...) with recording off or on, the mode restored, also on error)
do
  local autograd = require("tide.autograd")
  tide.no_grad, tide.enable_grad = autograd.no_grad, autograd.enable_grad
  -- (tide.inference_mode, no_grad whose mode reads back, is tide.global_modes', loaded on use)
end

-- the ops written in Lua on top of the core (issue 13): Tensor methods, and tide.X functions
local LUA_OPS = { "tide.reductions", "tide.shapes", "tide.creation_like", "tide.einsum",
  "tide.rng_state", "tide.pointwise", "tide.products", "tide.special", "tide.keyword_options",
  "tide.aliases", "tide.generator_object" }
for _, name in ipairs(LUA_OPS) do
  local mod = require(name)
  for _, op in ipairs(mod.names) do
    tide[op] = mod.functions and mod.functions[op] or core.Tensor[op]
  end
end

-- PyTorch's keyword arguments (x:sum({dim = 2, keepdim = true}), tide.cat(xs, {dim = 1})) over
-- the methods and functions defined so far; a lazy module's get theirs when it loads, below
local keywords = require("tide.tensor_keywords")
keywords.install(tide)

-- and those that load on first use (lua/tide/_lazy_ops.lua): a stub under each of their
-- names loads the module, which defines its methods over the stubs; its tide.X functions are
-- then put in place, and the call goes on to the real function
for name, defines in pairs(require("tide._lazy_ops")) do
  local method_stubs, function_stubs = {}, {}
  local function load(what)
    local mod = require(name)
    local function missing(op)
      error("tide: " .. name .. " does not define " .. op .. " (lua/tide/_lazy_ops.lua)")
    end
    for _, op in ipairs(defines.functions) do
      tide[op] = type(mod.functions) == "table" and mod.functions[op] or core.Tensor[op]
      if tide[op] == nil or tide[op] == function_stubs[op] or tide[op] == method_stubs[op] then
        missing(op)
      end
    end
    for _, op in ipairs(defines.methods) do
      if core.Tensor[op] == method_stubs[op] then
        missing(op)
      end
    end
    keywords.install(tide, defines.methods)
    keywords.install(tide, defines.functions)
    return what
  end
  for _, op in ipairs(defines.methods) do
    method_stubs[op] = function(...) return load(core.Tensor)[op](...) end
    core.Tensor[op] = method_stubs[op]
  end
  for _, op in ipairs(defines.functions) do
    function_stubs[op] = function(...) return load(tide)[op](...) end
    tide[op] = function_stubs[op]
  end
end

-- torch.cuda.amp's names, PyTorch's older spelling of tide.amp's: GradScaler, and autocast
-- on "cuda" (tide.cuda.amp.autocast([opts], fn, ...) is tide.amp.autocast("cuda", ...))
tide.cuda.amp = setmetatable({}, {
  __index = function(_, k)
    local amp = require("tide.amp")
    if k == "GradScaler" then
      return amp.GradScaler
    elseif k == "autocast" then
      return function(...) return amp.autocast("cuda", ...) end
    end
    return nil
  end,
})

-- torch.cpu.amp's autocast (PyTorch 1.13's spelling of torch.autocast("cpu")):
-- tide.cpu.amp.autocast([opts], fn, ...) is tide.amp.autocast("cpu", ...)
tide.cpu = {
  amp = setmetatable({}, {
    __index = function(_, k)
      if k == "autocast" then
        return function(...) return require("tide.amp").autocast("cpu", ...) end
      end
      return nil
    end,
  }),
}

-- torch.cuda.manual_seed(seed) / manual_seed_all(seed): tide has one generator for every
-- device, which tide.manual_seed seeds (returns nothing, as torch.cuda's)
tide.cuda.manual_seed = function(seed) tide.manual_seed(seed) end
tide.cuda.manual_seed_all = tide.cuda.manual_seed

local lazy = { nn = "tide.nn", optim = "tide.optim", data = "tide.data",
  distributed = "tide.distributed", autograd = "tide.autograd", utils = "tide.utils",
  models = "tide.models", text = "tide.text", linalg = "tide.linalg",
  distributions = "tide.distributions", special = "tide.special_functions", amp = "tide.amp",
  func = "tide.func", backends = "tide.backends", compile = "tide.compile",
  accelerator = "tide.accelerator", _dynamo = "tide._dynamo", einops = "tide.einops",
  profiler = "tide.profiler", multiprocessing = "tide.multiprocessing", jit = "tide.jit",
  onnx = "tide.onnx", compiler = "tide.compiler", sparse = "tide.sparse", fft = "tide.fft",
  SparseTensor = "tide.sparse.coo", testing = "tide.testing" }

-- __lazy: the names of those fields, for spec/public_api_spec.lua (tide's keys, loaded or not)
setmetatable(tide, {
  __lazy = lazy,
  __index = function(t, k)
    local name = lazy[k]
    if not name then
      return nil
    end
    local ok, mod = pcall(require, name)
    if not ok then
      if not_found(mod, name) then
        error(("tide: tide.%s is not available: module '%s' was not found on package.path; "
          .. "install tide's Lua files or add lua/?.lua;lua/?/init.lua to LUA_PATH"):format(k, name), 2)
      end
      error(mod, 0)
    end
    rawset(t, k, mod)
    return mod
  end,
})

return tide
