-- nn.SiLU([{inplace = false}]): x * sigmoid(x)
local core = require "tide.core"
local Module = require "tide.nn.Module"
local I = require "tide.nn._internal"
local F = require "tide.nn.functional"

local SiLU = Module:extend("SiLU")

function SiLU:init(opts)
    if opts ~= nil then
        core._check_options(opts, "SiLU", { "inplace" })
        self.inplace = opts.inplace
    end
end

function SiLU:forward(x)
    I.check_tensor(x, "SiLU")
    return F.silu(x, { inplace = self.inplace })
end

return SiLU
