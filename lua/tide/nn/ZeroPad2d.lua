-- nn.ZeroPad2d(padding): pads the last two dims with zeros (F.pad, mode "constant");
-- padding an integer (every side) or {left, right, top, bottom}
return require("tide.nn._padding")("ZeroPad2d", 4, "constant", false)
