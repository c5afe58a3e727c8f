-- tide.backends: PyTorch's torch.backends switches, so that ported lines such as
-- `torch.backends.cudnn.benchmark = True` run unchanged. tide has no cuDNN and no TF32 path:
-- the cudnn switches (benchmark, deterministic, enabled, allow_tf32) and cuda.matmul's
-- reduced-precision ones are plain settings, kept and read back, that change nothing.
-- cuda.matmul.allow_tf32 is PyTorch's other face of the float32 matmul precision: setting it
-- true is tide.set_float32_matmul_precision("high"), false "highest", and it reads back
-- get_float32_matmul_precision() ~= "highest" (which changes nothing in tide either).
-- mps.is_available() and mps.is_built() are false. Each setting takes a boolean; an unknown
-- name raises (a typo would otherwise set nothing).
local raise = require("tide.autograd").raise

-- a table of boolean settings (defaults: PyTorch 1.13's), each read and set as a field;
-- linked: the settings that live elsewhere, {get, set} each; fns: read-only functions
local function settings(who, defaults, linked, fns)
    local values = {}
    for k, v in pairs(defaults) do
        values[k] = v
    end
    linked, fns = linked or {}, fns or {}
    return setmetatable({}, {
        __index = function(_, k)
            if linked[k] then
                return linked[k].get()
            end
            if fns[k] then
                return fns[k]
            end
            return values[k]
        end,
        __newindex = function(_, k, v)
            if values[k] == nil and not linked[k] then
                raise(("tide: %s: unknown setting %s"):format(who, tostring(k)))
            end
            if type(v) ~= "boolean" then
                raise(("tide: %s: %s must be true or false, got %s"):format(who, tostring(k),
                    type(v)))
            end
            if linked[k] then
                linked[k].set(v)
            else
                values[k] = v
            end
        end,
        __tostring = function()
            return who
        end,
    })
end

local function tide()
    return require("tide")
end

local function no()
    return false
end

local cudnn = settings("backends.cudnn", {
    benchmark = false, deterministic = false, enabled = true, allow_tf32 = true,
}, nil, { is_available = no }) -- (tide has no cuDNN)

local matmul = settings("backends.cuda.matmul", {
    allow_fp16_reduced_precision_reduction = true,
    allow_bf16_reduced_precision_reduction = true,
}, {
    allow_tf32 = {
        get = function()
            return tide().get_float32_matmul_precision() ~= "highest"
        end,
        set = function(v)
            tide().set_float32_matmul_precision(v and "high" or "highest")
        end,
    },
})

-- PyTorch 2.0's SDPA switches: tide has one implementation (math) and runs it whatever they say;
-- each is kept and read back. sdp_kernel({enable_flash =, enable_math =, enable_mem_efficient =},
-- fn) sets them for the call fn() (Python's `with` block) and restores them.
local sdp = { flash = true, math = true, mem_efficient = true }
local cuda = { matmul = matmul }
for _, k in ipairs({ "flash", "math", "mem_efficient" }) do
    cuda["enable_" .. k .. "_sdp"] = function(v)
        if type(v) ~= "boolean" then
            raise(("tide: backends.cuda.enable_%s_sdp: expected true or false, got %s")
                :format(k, type(v)))
        end
        sdp[k] = v
    end
    cuda[k .. "_sdp_enabled"] = function()
        return sdp[k]
    end
end
function cuda.sdp_kernel(opts, fn)
    if type(opts) == "function" and fn == nil then
        opts, fn = {}, opts
    end
    if type(opts) ~= "table" then
        raise("tide: backends.cuda.sdp_kernel: expected {enable_flash =, enable_math =, "
            .. "enable_mem_efficient =} then the body as a function, got " .. type(opts))
    end
    local new = {}
    for k, v in pairs(opts) do
        local name = type(k) == "string" and k:match("^enable_(.*)$")
        if not name or sdp[name] == nil then
            raise(("tide: backends.cuda.sdp_kernel: unknown option %s; expected enable_flash, "
                .. "enable_math or enable_mem_efficient"):format(tostring(k)))
        end
        if type(v) ~= "boolean" then
            raise(("tide: backends.cuda.sdp_kernel: %s must be true or false, got %s")
                :format(k, type(v)))
        end
        new[name] = v
    end
    if type(fn) ~= "function" then
        raise("tide: backends.cuda.sdp_kernel: expected the body as a function (Python's "
            .. "`with` block), got " .. type(fn))
    end
    local old = { flash = sdp.flash, math = sdp.math, mem_efficient = sdp.mem_efficient }
    for k, v in pairs(new) do
        sdp[k] = v
    end
    local compat = require("tide._compat")
    local res = compat.pack(pcall(fn))
    sdp.flash, sdp.math, sdp.mem_efficient = old.flash, old.math, old.mem_efficient
    if not res[1] then
        error(res[2], 0)
    end
    return compat.unpack(res, 2, res.n)
end

return {
    cudnn = cudnn,
    cuda = cuda,
    mps = { is_available = no, is_built = no },
}
