-- tide.amp.autocast(device_type[, {dtype =, enabled = true, cache_enabled = true}], fn, ...):
-- PyTorch's torch.autocast as a function (tide.no_grad's form): fn(...) runs with autocast on
-- for every device of that type ("cuda" or "cpu") and its results are returned; the previous
-- state comes back afterwards, also on error. Inside, the ops of PyTorch's lists cast their
-- float32 inputs: matrix products, linear and the convolutions compute in dtype (float16 on
-- "cuda", bfloat16 on "cpu" by default), and the ops that need range or precision (exp, log,
-- pow, sum, softmax, the norms, the losses) in float32; the others follow their inputs.
-- PyTorch's keyword form tide.autocast({device_type = "cpu", dtype =}, fn, ...) also works.
-- Without a function it is PyTorch's decorator: tide.autocast("cuda", {enabled = false})(fn)
-- returns fn wrapped (each call runs under autocast). Also tide.autocast;
-- tide.is_autocast_enabled([device_type = "cuda"]) and tide.get_autocast_dtype(device_type).
local ac = require("tide._autocast")
local args = require("tide.op_args")
local raise = require("tide.autograd.raise")

local M = { functions = {} }
local F = M.functions

local DEFAULT_DTYPE = { cuda = "float16", cpu = "bfloat16" }

local function device_type_arg(who, device_type)
    if DEFAULT_DTYPE[device_type] then
        return device_type
    end
    local fix = ""
    if type(device_type) == "string" then
        local kind = device_type:match("^(%a+):%d+$")
        if DEFAULT_DTYPE[kind] then
            fix = ("; autocast covers every device of a type: pass \"%s\""):format(kind)
        end
    end
    raise(("tide: %s: device_type must be \"cuda\" or \"cpu\", got %s%s"):format(who,
        type(device_type) == "string" and ("\"" .. device_type .. "\"") or type(device_type),
        fix))
end

local function is_callable(fn)
    return type(fn) == "function" or (getmetatable(fn) or {}).__call ~= nil
end

local function region(decorate, device_type, opts, fn, ...)
    local who = "autocast"
    device_type = device_type_arg(who, device_type)
    opts = args.options(who, opts, { "dtype", "enabled", "cache_enabled" },
        "{dtype = \"bfloat16\"}")
    local dtype = opts.dtype == nil and DEFAULT_DTYPE[device_type] or opts.dtype
    if dtype ~= "float16" and dtype ~= "bfloat16" then
        raise(("tide: %s: dtype must be \"float16\" or \"bfloat16\" (the precision the " ..
            "matrix products run in), got %s"):format(who, type(dtype) == "string" and
            ("\"" .. dtype .. "\"") or tostring(dtype)))
    end
    for _, key in ipairs({ "enabled", "cache_enabled" }) do
        if opts[key] ~= nil and type(opts[key]) ~= "boolean" then
            raise(("tide: %s: %s must be a boolean, got %s"):format(who, key, type(opts[key])))
        end
    end
    if decorate then
        -- PyTorch's decorator: @torch.autocast("cuda", enabled=False) def f(...) is
        -- f = tide.autocast("cuda", {enabled = false})(function(...) ... end)
        return function(f, ...)
            if not is_callable(f) or select("#", ...) > 0 then
                raise(("tide: %s: the decorator form takes one function, got %s%s; write " ..
                    "f = tide.autocast(\"%s\", {enabled = false})(function(...) ... end)")
                    :format(who, type(f), select("#", ...) > 0 and " and more arguments" or "",
                    device_type))
            end
            return function(...)
                return region(false, device_type, opts, f, ...)
            end
        end
    end
    if not is_callable(fn) then
        raise(("tide: %s: expected a function to run under autocast, got %s; write " ..
            "tide.autocast(\"%s\", function() ... end)"):format(who, type(fn), device_type))
    end
    local enabled = opts.enabled ~= false
    -- cache_enabled absent: the enclosing region's setting (PyTorch's cache_enabled=None)
    return ac.run(device_type, enabled and dtype or nil, opts.cache_enabled, fn, ...)
end

local function autocast(n, device_type, opts, ...)
    -- torch.autocast(device_type="cpu", dtype=...): every argument by name in one table
    if type(device_type) == "table" and not is_callable(device_type) and
        getmetatable(device_type) == nil then
        local named, rest = device_type, {}
        if named.device_type == nil then
            raise("tide: autocast: the options table has no device_type; write " ..
                "tide.autocast({device_type = \"cpu\", dtype = tide.bfloat16}, fn) or " ..
                "tide.autocast(\"cpu\", {dtype = tide.bfloat16}, fn)")
        end
        for k, v in pairs(named) do
            if k ~= "device_type" then
                rest[k] = v
            end
        end
        if type(opts) == "table" and not is_callable(opts) then
            raise("tide: autocast: the options came twice (a table with device_type, then " ..
                "another table); put them all in the first: tide.autocast({device_type = " ..
                "\"cpu\", dtype = tide.bfloat16}, fn)")
        end
        -- tide.autocast({device_type = ...}) alone: the decorator
        return region(n == 1, named.device_type, rest, opts, ...)
    end
    -- a nil in the options' place is an absent options table: the function follows it
    if opts == nil or (type(opts) == "table" and not is_callable(opts)) then
        -- tide.autocast("cuda") or tide.autocast("cuda", {enabled = false}) alone: the decorator
        return region(n == 1 or (n == 2 and opts ~= nil), device_type, opts, ...)
    end
    return region(false, device_type, nil, opts, ...)
end

function F.autocast(...)
    return autocast(select("#", ...), ...)
end

function F.is_autocast_enabled(device_type)
    device_type = device_type_arg("is_autocast_enabled",
        device_type == nil and "cuda" or device_type)
    return ac.dtype_of(device_type) ~= nil
end

-- the dtype of the region now on, or the one a region of that type would take by default
function F.get_autocast_dtype(device_type)
    device_type = device_type_arg("get_autocast_dtype", device_type)
    return ac.dtype_of(device_type) or DEFAULT_DTYPE[device_type]
end

-- PyTorch 1.13's per-device spellings: torch.is_autocast_cpu_enabled(),
-- torch.get_autocast_cpu_dtype() and torch.get_autocast_gpu_dtype()
function F.is_autocast_cpu_enabled()
    return ac.dtype_of("cpu") ~= nil
end

function F.get_autocast_cpu_dtype()
    return F.get_autocast_dtype("cpu")
end

function F.get_autocast_gpu_dtype()
    return F.get_autocast_dtype("cuda")
end

-- torch.is_autocast_cache_enabled(): whether the region now on caches its parameters' casts
-- (true outside every region)
function F.is_autocast_cache_enabled()
    return ac.cache_enabled()
end

-- torch.clear_autocast_cache(): the casts of the parameters kept in the region now on are
-- dropped (the next use casts again); nothing outside a region
function F.clear_autocast_cache(...)
    args.no_extra("clear_autocast_cache", 0, ...)
    ac.clear_cache()
end

M.names = { "autocast", "is_autocast_enabled", "get_autocast_dtype", "is_autocast_cpu_enabled",
    "get_autocast_cpu_dtype", "get_autocast_gpu_dtype", "is_autocast_cache_enabled",
    "clear_autocast_cache" }
return M
