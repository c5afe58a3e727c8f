-- tide.utils — seeing what training does: make_grid and save_image (torchvision 0.14's), the
-- lazy field tensorboard (tide.utils.tensorboard.SummaryWriter, PyTorch's), and checkpoint
-- (torch.utils.checkpoint's: recompute a block in backward instead of keeping its activations)
-- and checkpoint_sequential (the same over the runs of a Sequential);
-- data is tide.data under torch.utils.data's name, for ported scripts; benchmark is
-- torch.utils.benchmark's Timer, Measurement and Compare.
local image = require("tide.utils.image")

local M = {
    make_grid = image.make_grid,
    save_image = image.save_image,
}

local lazy = { tensorboard = "tide.utils.tensorboard", checkpoint = "tide.utils.checkpoint",
    checkpoint_sequential = "tide.utils.checkpoint_sequential", data = "tide.data",
    benchmark = "tide.utils.benchmark" }

return require("tide._lazy")(M, lazy)
