-- tide.nn.utils.init: PyTorch 1.13's torch.nn.utils.init, skip_init(module_class, ...): the
-- module module_class(...) makes, with its parameters and buffers left uninitialized, for a
-- script that sets them itself (loads a state_dict, runs its own init).
--
-- tide's layers draw their initial values in their constructors (there is no separate reset to
-- leave out, nor a "meta" device to construct on), so skip_init constructs the module as usual,
-- then sets tide's generator back to where it was (skip_init draws nothing, as PyTorch's, so
-- the script's later draws are those it would get without the call) and fills every parameter
-- and buffer with zeros. The zeros stand for PyTorch's uninitialized memory: set the values
-- before use. The constructor's arguments are the class's own (no device argument is needed).
local core = require("tide.core")
local autograd = require("tide.autograd")

local raise = autograd.raise

local M = {}

function M.skip_init(module_class, ...)
    if type(module_class) ~= "table" or not module_class.__ismodule or
        rawget(module_class, "_kind") ~= nil then
        raise("tide: skip_init: expected a Module class (such as nn.Linear), got " ..
            (type(module_class) == "table" and module_class.__ismodule and "a module instance"
                or type(module_class)) .. "; pass the class and its constructor's arguments")
    end
    local state = core._rng_state()
    local ok, m = pcall(module_class, ...)
    core._set_rng_state(state)
    if not ok then
        error(m, 0) -- the constructor's own error, at the user's line
    end
    autograd.no_grad(function()
        for _, p in ipairs(m:parameters()) do
            p:zero_()
        end
        for _, b in ipairs(m:buffers()) do
            b:zero_()
        end
    end)
    return m
end

return M
