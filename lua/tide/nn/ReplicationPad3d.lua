-- nn.ReplicationPad3d(padding): pads the last three dims with copies of the edge cells (F.pad,
-- mode "replicate"); padding an integer (every side) or {left, right, top, bottom, front, back}
local ReplicationPad3d = require("tide.nn._padding")("ReplicationPad3d", 6, "replicate", false)

function ReplicationPad3d:extra_repr() -- PyTorch's
    return "{" .. table.concat(self.padding, ", ") .. "}"
end

return ReplicationPad3d
