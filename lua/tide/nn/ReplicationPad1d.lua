-- nn.ReplicationPad1d(padding): pads the last dim with copies of the edge cells
-- (F.pad, mode "replicate"); padding an integer (every side) or {left, right}
return require("tide.nn._padding")("ReplicationPad1d", 2, "replicate", false)
