-- nn.Embedding(num_embeddings, embedding_dim): a lookup table of rows, ids 1-based (as every
-- index in tide); weight ~ N(0, 1) as PyTorch
local core = require "tide.core"
local autograd = require "tide.autograd"
local raise = autograd.raise
local Module = require "tide.nn.Module"
local I = require "tide.nn._internal"

local Embedding = Module:extend("Embedding")

function Embedding:init(num_embeddings, embedding_dim)
    I.check_int(num_embeddings, "num_embeddings", "Embedding")
    I.check_int(embedding_dim, "embedding_dim", "Embedding")
    self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
    local w = core.empty({ num_embeddings, embedding_dim })
    autograd.no_grad(function()
        w:normal_(0, 1)
    end)
    self:register_parameter("weight", w:requires_grad_(true))
end

function Embedding:forward(ids)
    I.check_tensor(ids, "Embedding")
    return I.embedding(ids, self.weight, "Embedding")
end

function Embedding:extra_repr()
    return string.format("%d, %d", self.num_embeddings, self.embedding_dim)
end

return Embedding
