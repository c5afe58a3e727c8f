-- nn.TripletMarginWithDistanceLoss([{distance_function =, margin = 1, swap = false, reduction =
-- "mean"}]): loss(anchor, positive, negative), as F.triplet_margin_with_distance_loss; without
-- distance_function an nn.PairwiseDistance(), a child as in PyTorch (a module given is one too)
local core = require("tide.core")
local raise = require("tide.autograd").raise
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")

local NAME = "TripletMarginWithDistanceLoss"
local Loss = Module:extend(NAME)

function Loss:init(opts)
    opts = opts or {}
    core._check_options(opts, NAME, { "distance_function", "margin", "swap", "reduction" })
    local margin = opts.margin == nil and 1 or opts.margin
    if type(margin) ~= "number" or not (margin > 0) then
        raise("tide: " .. NAME .. ": margin must be a number greater than 0, got " ..
            tostring(margin))
    end
    local dist = opts.distance_function
    local mt = type(dist) == "table" and getmetatable(dist)
    if dist ~= nil and type(dist) ~= "function" and not (mt and mt.__call) then
        raise("tide: " .. NAME .. ": distance_function must be a function or a module, got " ..
            type(dist))
    end
    if opts.swap ~= nil and type(opts.swap) ~= "boolean" then
        raise("tide: " .. NAME .. ": swap must be true or false, got " .. tostring(opts.swap))
    end
    self.distance_function = dist or require("tide.nn.PairwiseDistance")()
    self.margin, self.swap = margin, opts.swap == true
    self.reduction = I.check_reduction(opts.reduction or "mean", NAME)
end

function Loss:forward(anchor, positive, negative)
    return F.triplet_margin_with_distance_loss(anchor, positive, negative, {
        distance_function = self.distance_function, margin = self.margin, swap = self.swap,
        reduction = self.reduction })
end

return Loss
