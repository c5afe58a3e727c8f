-- nn.ReflectionPad1d(padding): pads the last dim with the input reflected at its edges
-- (F.pad, mode "reflect"); padding an integer (every side) or {left, right}
return require("tide.nn._padding")("ReflectionPad1d", 2, "reflect", false)
