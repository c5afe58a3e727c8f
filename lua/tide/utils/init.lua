-- tide.utils — seeing what training does: make_grid and save_image (torchvision 0.14's), and
-- the lazy field tensorboard (tide.utils.tensorboard.SummaryWriter, PyTorch's).
local image = require("tide.utils.image")

local M = {
    make_grid = image.make_grid,
    save_image = image.save_image,
}

local lazy = { tensorboard = "tide.utils.tensorboard" }

return setmetatable(M, {
    __lazy = lazy, -- the names above, for spec/public_api_spec.lua
    __index = function(t, k)
        local name = lazy[k]
        if name then
            local mod = require(name)
            rawset(t, k, mod)
            return mod
        end
    end,
})
