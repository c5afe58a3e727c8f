-- nn.ReflectionPad3d(padding): pads the last three dims with the input reflected at its edges
-- (F.pad, mode "reflect"); padding an integer (every side) or {left, right, top, bottom, front,
-- back}
local ReflectionPad3d = require("tide.nn._padding")("ReflectionPad3d", 6, "reflect", false)

function ReflectionPad3d:extra_repr() -- PyTorch's
    return "{" .. table.concat(self.padding, ", ") .. "}"
end

return ReflectionPad3d
