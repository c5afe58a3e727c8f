-- kernel_calls.lua — the calls a spec's code makes to one of tide.core._internal's kernels:
--
--   local kernel_calls = require("spec.support.kernel_calls")
--   local calls, y = kernel_calls("attention", function() return model(ids) end)
--   -- #calls: how many times K.attention ran; calls[i]: that call's arguments (packed)
--
-- The kernel itself runs unchanged (the wrapper is in place only while fn runs), so a spec
-- can assert that a fused path was taken, or not, beside the values it gives.
local internal = require("tide.core")._internal
local compat = require("tide._compat")
local pack = compat.pack

return function(name, fn)
    local calls, real = {}, internal[name]
    internal[name] = function(...)
        calls[#calls + 1] = pack(...)
        return real(...)
    end
    local ok, res = pcall(fn)
    internal[name] = real
    assert(ok, res)
    return calls, res
end
