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

-- chain(a, b, ...): Python's itertools.chain over lists, as one new list (a's items, then b's,
-- ...): optim.Adam(tide.utils.chain(G:parameters(), D:parameters()), {lr = ...}) is
-- Adam(itertools.chain(G.parameters(), D.parameters()), lr=...)
function M.chain(...)
    local out, n = {}, select("#", ...)
    for i = 1, n do
        local l = select(i, ...)
        if type(l) ~= "table" or l.__ismodule then
            error(("tide: utils.chain: argument %d is a %s, expected a list (model:parameters())")
                :format(i, type(l) == "table" and "module" or type(l)), 2)
        end
        for _, v in ipairs(l) do
            out[#out + 1] = v
        end
    end
    return out
end

local lazy = { tensorboard = "tide.utils.tensorboard", checkpoint = "tide.utils.checkpoint",
    checkpoint_sequential = "tide.utils.checkpoint_sequential", data = "tide.data",
    benchmark = "tide.utils.benchmark" }

return require("tide._lazy")(M, lazy)
