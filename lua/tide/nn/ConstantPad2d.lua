-- nn.ConstantPad2d(padding, value): pads the last two dims with value (F.pad, mode "constant");
-- padding an integer (every side) or {left, right, top, bottom}
return require("tide.nn._padding")("ConstantPad2d", 4, "constant", true)
