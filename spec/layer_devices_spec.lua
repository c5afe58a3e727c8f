-- A layer given an input on another device names itself (not an inner layer or functional) and
-- the tensor to move. Before, EmbeddingBag labelled its weight "input" and told the user to move
-- the input onto the device it was already on, a class weight on another device than a loss's
-- input was called its target, and RMSNorm, TransformerEncoderLayer and TransformerDecoderLayer
-- were named by what they call inside.
local tide = require("tide")
local nn, F = tide.nn, tide.nn.functional

local function err_of(f, ...)
    local ok, err = pcall(f, ...)
    assert.is_false(ok)
    return tostring(err):match("tide: .*")
end

local function on1(...)
    return tide.randn(...):to("cpu:1")
end

describe("a layer's input on another device", function()
    local layers = {
        { "Linear", nn.Linear(4, 3), { 2, 4 } },
        { "LayerNorm", nn.LayerNorm(4), { 2, 4 } },
        { "RMSNorm", nn.RMSNorm(4), { 2, 4 } },
        { "BatchNorm1d", nn.BatchNorm1d(4), { 2, 4 } },
        { "LSTM", nn.LSTM(4, 3), { 5, 2, 4 } },
        { "TransformerEncoderLayer", nn.TransformerEncoderLayer(4, 2), { 2, 3, 4 } },
    }
    for _, c in ipairs(layers) do
        it(c[1] .. " names itself and its parameters' device", function()
            assert.are.equal("tide: " .. c[1] .. ": expected all tensors on the same device, " ..
                "found cpu:1 (input) and cpu (parameters); move the input with x:to(\"cpu\")",
                err_of(c[2], on1(c[3])))
        end)
    end

    it("TransformerDecoderLayer names itself for its target and its memory", function()
        local m = nn.TransformerDecoderLayer(4, 2)
        assert.matches("^tide: TransformerDecoderLayer: expected all tensors on the same device",
            err_of(m, on1(2, 3, 4), tide.randn(2, 3, 4)))
        assert.matches("^tide: TransformerDecoderLayer: expected all tensors on the same device",
            err_of(m, tide.randn(2, 3, 4), on1(2, 3, 4)))
    end)

    it("EmbeddingBag: the input, then offsets and per-sample weights, each named", function()
        local bag = nn.EmbeddingBag(5, 3, { mode = "sum" })
        assert.are.equal("tide: EmbeddingBag: expected all tensors on the same device, found " ..
            "cpu:1 (input) and cpu (parameters); move the input with x:to(\"cpu\")",
            err_of(bag, tide.tensor({ { 1, 2 } }):to("cpu:1")))
        local w = tide.randn(5, 3)
        assert.are.equal("tide: embedding_bag: expected all tensors on the same device, found " ..
            "cpu:1 (input) and cpu (weight); move the input with x:to(\"cpu\")",
            err_of(F.embedding_bag, tide.tensor({ { 1, 2 } }):to("cpu:1"), w))
        assert.are.equal("tide: embedding_bag: expected all tensors on the same device, found " ..
            "cpu (input) and cpu:1 (offsets); move the offsets with offsets:to(\"cpu\")",
            err_of(F.embedding_bag, tide.tensor({ 1, 2 }), w, tide.tensor({ 1 }):to("cpu:1")))
        assert.are.equal("tide: embedding_bag: expected all tensors on the same device, found " ..
            "cpu (input) and cpu:1 (per_sample_weights); move the per_sample_weights with " ..
            "per_sample_weights:to(\"cpu\")", err_of(F.embedding_bag, tide.tensor({ { 1, 2 } }), w,
            nil, { mode = "sum", per_sample_weights = on1(1, 2) }))
    end)

    it("a class weight on another device than the input is called the weight", function()
        local x, t = on1(2, 4), tide.tensor({ 1, 2 }):to("cpu:1")
        for _, f in ipairs({ { "cross_entropy", F.cross_entropy }, { "nll_loss", F.nll_loss } }) do
            assert.are.equal("tide: " .. f[1] .. ": expected all tensors on the same device, " ..
                "found cpu:1 (input) and cpu (weight); move the input with x:to(\"cpu\")",
                err_of(f[2], x, t, { weight = tide.ones(4) }))
        end
    end)
end)
