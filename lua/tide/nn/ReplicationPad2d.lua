-- nn.ReplicationPad2d(padding): pads the last two dims with copies of the edge cells
-- (F.pad, mode "replicate"); padding an integer (every side) or {left, right, top, bottom}
return require("tide.nn._padding")("ReplicationPad2d", 4, "replicate", false)
