-- nn.Identity(...): returns its input unchanged (its arguments are accepted and ignored, as in
-- PyTorch, so it can stand in for any layer)
local Module = require("tide.nn.Module")

local Identity = Module:extend("Identity")

function Identity:init() end

function Identity:forward(...)
    return ...
end

return Identity
