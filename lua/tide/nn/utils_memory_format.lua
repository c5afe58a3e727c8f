-- tide.nn.utils.memory_format: PyTorch 1.13's torch.nn.utils.memory_format,
-- convert_conv2d_weight_memory_format(module, memory_format). PyTorch stores the Conv2d and
-- ConvTranspose2d weights of module in memory_format (channels_last: NHWC, for cuDNN's faster
-- kernels). tide has one memory format, contiguous row-major, which its kernels are written
-- for, so the function checks its arguments and returns module unchanged: memory_format is
-- PyTorch's name as a string, "channels_last" or "contiguous_format".
local autograd = require("tide.autograd")
local args = require("tide.op_args")

local raise = autograd.raise

local M = {}

local FORMATS = { channels_last = true, contiguous_format = true }

function M.convert_conv2d_weight_memory_format(module, memory_format, ...)
    local who = "convert_conv2d_weight_memory_format"
    args.no_extra(who, 2, ...)
    if type(module) ~= "table" or not module.__ismodule or rawget(module, "_kind") == nil then
        raise("tide: " .. who .. ": expected a module, got " .. type(module))
    end
    if not FORMATS[memory_format] then
        raise(string.format("tide: %s: memory_format %s is not one of \"channels_last\" and " ..
            "\"contiguous_format\" (PyTorch's names, as strings); tide keeps every weight " ..
            "contiguous, so either leaves the module as it is", who,
            type(memory_format) == "string" and ('"' .. memory_format .. '"') or
            tostring(memory_format)))
    end
    return module
end

return M
