-- nn.ReLU([{inplace = false}]): elementwise relu (F.relu; inplace writes into the input)
local core = require "tide.core"
local Module = require "tide.nn.Module"
local I = require "tide.nn._internal"
local F = require "tide.nn.functional"

local ReLU = Module:extend("ReLU")

function ReLU:init(opts)
    if opts ~= nil then
        core._check_options(opts, "ReLU", { "inplace" })
        self.inplace = opts.inplace
    end
end

function ReLU:forward(x)
    I.check_tensor(x, "ReLU")
    if self.inplace then
        return F.relu(x, { inplace = true })
    end
    return x:relu()
end

return ReLU
