-- nn.ZeroPad2d(padding): pads the last two dims with zeros (F.pad, mode "constant");
-- padding an integer (every side) or {left, right, top, bottom}
local ZeroPad2d = require("tide.nn._padding")("ZeroPad2d", 4, "constant", false)
-- PyTorch's value attribute (its ZeroPad2d is a ConstantPad2d of 0.0); printed as PyTorch's
-- ZeroPad2d((1, 1, 1, 1)), without it
ZeroPad2d.value = 0
function ZeroPad2d:extra_repr()
    return "{" .. table.concat(self.padding, ", ") .. "}"
end
return ZeroPad2d
