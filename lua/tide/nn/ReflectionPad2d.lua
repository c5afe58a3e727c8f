-- nn.ReflectionPad2d(padding): pads the last two dims with the input reflected at its edges
-- (F.pad, mode "reflect"); padding an integer (every side) or {left, right, top, bottom}
return require("tide.nn._padding")("ReflectionPad2d", 4, "reflect", false)
