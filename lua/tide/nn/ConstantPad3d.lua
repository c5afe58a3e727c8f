-- nn.ConstantPad3d(padding, value): pads the last three dims with value (F.pad, mode
-- "constant"); padding an integer (every side) or {left, right, top, bottom, front, back}
local ConstantPad3d = require("tide.nn._padding")("ConstantPad3d", 6, "constant", true)

function ConstantPad3d:extra_repr() -- PyTorch's
    return "padding={" .. table.concat(self.padding, ", ") .. "}, value=" .. tostring(self.value)
end

return ConstantPad3d
