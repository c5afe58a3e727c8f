-- tensorboard_write.lua DIR — writes a TensorBoard log of every entry type with tide, for
-- spec/support/tensorboard_check.py (run by tensorboard_check.sh) to read back with
-- TensorBoard's own EventAccumulator. The values here are the ones the checker expects.
local tide = require("tide")
local SummaryWriter = require("tide.utils.tensorboard").SummaryWriter

local dir = assert(arg[1], "usage: tensorboard_write.lua DIR")
local w = SummaryWriter(dir, { flush_secs = 1000 })
for step = 0, 4 do
    w:add_scalar("loss", 1 / (step + 1), step)
end
w:add_scalar("lr", 0.5, 7, 1234567890.5)
w:add_scalars("acc", { train = 0.5, val = 0.25 }, 3)
w:add_histogram("weights", tide.arange(-5, 6, { dtype = "float32" }), 1)
-- a gradient image: value (c + 2 * h + 3 * w) / 30 at channel c, row h, column w (0-based)
local img = tide.zeros({ 3, 4, 5 }, { dtype = "float32" })
for c = 0, 2 do
    for h = 0, 3 do
        for x = 0, 4 do
            img[c + 1][h + 1][x + 1] = (c + 2 * h + 3 * x) / 30
        end
    end
end
w:add_image("gradient", img, 2)
w:add_images("batch", tide.ones({ 3, 1, 2, 2 }, { dtype = "float32" }), 2)
w:add_text("sample", "hello **world**", 3)
w:add_hparams({ lr = 0.01, opt = "adam" }, { ["hparam/loss"] = 0.5 }, { run_name = "hp" })
w:add_embedding(tide.arange(12, { dtype = "float32" }):reshape(4, 3) / 4,
    { metadata = { "a", "b", "c", "d" },
        label_img = tide.ones({ 4, 1, 2, 3 }, { dtype = "float32" }) })
w:close()
