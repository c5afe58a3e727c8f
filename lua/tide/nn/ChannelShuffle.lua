-- nn.ChannelShuffle(groups): the channels of input {N, C, *} read as {groups, C / groups} and
-- transposed (F.channel_shuffle)
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")

local ChannelShuffle = Module:extend("ChannelShuffle")

function ChannelShuffle:init(groups)
    self.groups = I.check_int(groups, "groups", "ChannelShuffle")
end

function ChannelShuffle:forward(x)
    I.check_tensor(x, "ChannelShuffle")
    return F.channel_shuffle(x, self.groups)
end

function ChannelShuffle:extra_repr()
    return "groups " .. self.groups
end

require("tide.nn._signature").define(ChannelShuffle, { names = { "groups" }, required = 1,
    flat = true })

return ChannelShuffle
