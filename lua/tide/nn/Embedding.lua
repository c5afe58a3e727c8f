-- nn.Embedding(num_embeddings, embedding_dim): a lookup table of rows, ids 1-based (as every
-- index in tide); weight ~ N(0, 1) as PyTorch
local core = require "tide.core"
local autograd = require "tide.autograd"
local raise = autograd.raise
local Module = require "tide.nn.Module"
local F = require "tide.nn.functional"

local Embedding = Module:extend("Embedding")

function Embedding:init(num_embeddings, embedding_dim)
    F.check_int(num_embeddings, "num_embeddings", "Embedding")
    F.check_int(embedding_dim, "embedding_dim", "Embedding")
    self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
    local w = core.empty({ num_embeddings, embedding_dim })
    autograd.no_grad(function()
        w:normal_(0, 1)
    end)
    self:register_parameter("weight", w:requires_grad_(true))
end

function Embedding:forward(ids)
    F.check_tensor(ids, "Embedding")
    if ids.dtype ~= "int64" and ids.dtype ~= "int32" then
        raise("tide: Embedding: expected integer ids (int64, 1-based), got " .. ids.dtype)
    end
    F.check_device(ids, self.weight, "Embedding")
    local n = self.num_embeddings
    -- off the host, index_select checks the range itself (reading ids back would be a transfer)
    if ids:numel() > 0 and F.on_host(ids) then
        local lo, hi = ids:min():item(), ids:max():item()
        if lo < 1 or hi > n then
            local bad = lo < 1 and lo or hi
            raise(string.format("tide: Embedding: id %d out of range for %d embeddings; ids " ..
                "are 1-based, in 1..%d", math.tointeger(bad) or bad, n, n))
        end
    end
    local shape = ids.shape
    shape[#shape + 1] = self.embedding_dim
    return self.weight:index_select(1, ids:reshape(-1)):view(shape)
end

function Embedding:extra_repr()
    return string.format("%d, %d", self.num_embeddings, self.embedding_dim)
end

return Embedding
