-- tide._dynamo: PyTorch's torch._dynamo.reset(), which drops torch.compile's caches. tide.compile
-- compiles nothing (it gives the module or function back), so there is nothing to drop: reset()
-- is accepted and does nothing, so a ported `torch._dynamo.reset()` runs unchanged.
local raise = require("tide.autograd.raise")

local M = {}

function M.reset(...)
    if select("#", ...) > 0 then
        raise("tide: _dynamo.reset: takes no argument (torch._dynamo.reset())")
    end
end

return M
