-- nn.ConstantPad1d(padding, value): pads the last dim with value (F.pad, mode "constant");
-- padding an integer (every side) or {left, right}
return require("tide.nn._padding")("ConstantPad1d", 2, "constant", true)
