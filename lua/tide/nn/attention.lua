-- tide.nn.attention: PyTorch's torch.nn.attention.sdpa_kernel and SDPBackend (2.3+), the
-- context manager that picks F.scaled_dot_product_attention's implementation. tide has one
-- implementation, the math one (softmax(q k^T * scale + mask) v), so every backend runs it:
-- sdpa_kernel(backends, fn) checks the backends, runs fn() (Python's `with` body) and gives
-- back what fn returns. SDPBackend holds PyTorch's names and values.
local raise = require("tide.autograd.raise")

local M = {}

M.SDPBackend = { ERROR = -1, MATH = 0, FLASH_ATTENTION = 1, EFFICIENT_ATTENTION = 2,
    CUDNN_ATTENTION = 3, OVERRIDEABLE = 4 }

local VALID = {}
for _, v in pairs(M.SDPBackend) do
    VALID[v] = true
end

--- sdpa_kernel(backend or {backends...}, fn[, {set_priority = false}]) -> fn()'s results;
--- PyTorch's keywords in one table: sdpa_kernel({backends = {...}, set_priority = false}, fn)
--- (Python's sdpa_kernel(backends=[...]), e.g. sdpa_kernel(**config._asdict()))
function M.sdpa_kernel(backends, fn, opts)
    if type(backends) == "table" and next(backends) ~= nil and backends[1] == nil then
        for k in pairs(backends) do
            if k ~= "backends" and k ~= "set_priority" then
                raise(("tide: sdpa_kernel: unknown keyword %s; PyTorch's are backends and " ..
                    "set_priority: sdpa_kernel({backends = {SDPBackend.MATH}}, function() ... " ..
                    "end)"):format(tostring(k)))
            end
        end
        if backends.backends == nil then
            raise("tide: sdpa_kernel: missing backends; pass sdpa_kernel({backends = "
                .. "{SDPBackend.MATH}}, function() ... end)")
        end
        if opts ~= nil and backends.set_priority ~= nil then
            raise("tide: sdpa_kernel: set_priority given twice, in the first table and in the " ..
                "third argument; pass it once")
        end
        if backends.set_priority ~= nil then
            opts = { set_priority = backends.set_priority }
        end
        backends = backends.backends
    end
    local list = type(backends) == "table" and backends or { backends }
    if #list == 0 then
        raise("tide: sdpa_kernel: expected an SDPBackend or a list of them, e.g. "
            .. "nn.attention.sdpa_kernel(nn.attention.SDPBackend.MATH, function() ... end)")
    end
    for i, b in ipairs(list) do
        if not VALID[b] or b == M.SDPBackend.ERROR then
            raise(("tide: sdpa_kernel: backends[%d] = %s is not an SDPBackend; use "
                .. "nn.attention.SDPBackend.MATH (or FLASH_ATTENTION, EFFICIENT_ATTENTION, "
                .. "CUDNN_ATTENTION)"):format(i, tostring(b)))
        end
    end
    if type(fn) ~= "function" then
        raise("tide: sdpa_kernel: expected the body as a function (Python's `with` block): "
            .. "sdpa_kernel(SDPBackend.MATH, function() ... end), got " .. type(fn))
    end
    require("tide.op_args").options("sdpa_kernel", opts, { "set_priority" },
        "{set_priority = true}")
    return fn()
end

return M
