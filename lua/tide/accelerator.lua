-- tide.accelerator: PyTorch 2.6's torch.accelerator, the device-neutral face of the GPU that
-- current PyTorch tutorials start with (`device = torch.accelerator.current_accelerator().type
-- if torch.accelerator.is_available() else "cpu"`). tide's accelerator is CUDA: these read
-- tide.cuda. A device exists in tide only where it can run, so current_accelerator() is nil
-- where CUDA is not available, as PyTorch's is on a build without one.
local core = require("tide.core")
local raise = require("tide.autograd.raise")

local M = {}

--- is_available() -> whether a CUDA device can run tensors here
function M.is_available()
    return core.cuda.is_available()
end

--- device_count() -> the number of CUDA devices (0 without a driver)
function M.device_count()
    return core.cuda.device_count()
end

--- current_accelerator([check_available]) -> tide.device("cuda:0"), or nil where CUDA is not
--- available (check_available, PyTorch 2.7's flag, must be a boolean and changes nothing:
--- tide makes no device that cannot run)
function M.current_accelerator(check_available, ...)
    if select("#", ...) > 0 then
        raise("tide: accelerator.current_accelerator: expected at most 1 argument " ..
            "(check_available)")
    end
    if check_available ~= nil and type(check_available) ~= "boolean" then
        raise(("tide: accelerator.current_accelerator: check_available must be true or false, " ..
            "got %s"):format(type(check_available)))
    end
    if not core.cuda.is_available() then
        return nil
    end
    return core.device("cuda:0")
end

--- synchronize([device]): waits for the work queued on the CUDA devices (tide.cuda.synchronize)
function M.synchronize(...)
    if not core.cuda.is_available() then
        raise("tide: accelerator.synchronize: no accelerator is available here (" ..
            tostring(core.cuda.unavailable_reason()) .. "); tide.accelerator.is_available() " ..
            "tells before the call")
    end
    return core.cuda.synchronize(...)
end

return M
