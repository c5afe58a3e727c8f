-- nn.Embedding(num_embeddings, embedding_dim[, {padding_idx =, max_norm =, norm_type = 2,
-- scale_grad_by_freq = false}]): a
-- lookup table of rows, ids 1-based (as every index in tide); weight ~ N(0, 1) as PyTorch, the
-- padding_idx row zero (and left without gradient); F.embedding's options; _weight = an n x d
-- tensor used as the weight (tide.nn._from_pretrained); nn.Embedding.from_pretrained(t, ...)
local core = require("tide.core")
local autograd = require("tide.autograd")
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local S = require("tide.nn._signature")
local FP = require("tide.nn._from_pretrained")

local Embedding = Module:extend("Embedding")

function Embedding:init(num_embeddings, embedding_dim, opts)
    I.check_int(num_embeddings, "num_embeddings", "Embedding")
    I.check_int(embedding_dim, "embedding_dim", "Embedding")
    opts = opts or {}
    core._check_options(opts, "Embedding", { "padding_idx", "max_norm", "norm_type",
        "scale_grad_by_freq", "sparse", "_weight" })
    self.sparse = I.check_sparse(opts.sparse, "Embedding")
    if opts.scale_grad_by_freq ~= nil and type(opts.scale_grad_by_freq) ~= "boolean" then
        autograd.raise("tide: Embedding: expected scale_grad_by_freq to be a boolean, got " ..
            type(opts.scale_grad_by_freq))
    end
    self.scale_grad_by_freq = opts.scale_grad_by_freq == true
    self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
    self.padding_idx = I.padding_idx(opts.padding_idx, num_embeddings, "Embedding")
    self.max_norm, self.norm_type = opts.max_norm, opts.norm_type or 2 -- PyTorch's default 2.0
    -- _weight: the given n x dim tensor as the weight (PyTorch's; from_pretrained passes it)
    self:register_parameter("weight", FP.weight(opts._weight, num_embeddings, embedding_dim,
        "Embedding") or I.embedding_weight(num_embeddings, embedding_dim, self.padding_idx))
end

-- nn.Embedding.from_pretrained(embeddings[, freeze = true, ...][, {...}]): PyTorch's classmethod
function Embedding.from_pretrained(embeddings, ...)
    return FP.from_pretrained(Embedding, "Embedding", embeddings, ...)
end

function Embedding:forward(ids)
    I.check_tensor(ids, "Embedding")
    if self.max_norm == nil then
        return I.embedding(ids, self.weight, "Embedding", self.padding_idx, false,
            self.scale_grad_by_freq)
    end
    return F.embedding(ids, self.weight, { padding_idx = self.padding_idx,
        max_norm = self.max_norm, norm_type = self.norm_type,
        scale_grad_by_freq = self.scale_grad_by_freq })
end

function Embedding:extra_repr() -- PyTorch's (tide's 1-based padding_idx)
    local s = string.format("%d, %d", self.num_embeddings, self.embedding_dim)
    if self.padding_idx then
        s = s .. ", padding_idx=" .. self.padding_idx
    end
    if self.max_norm ~= nil then
        s = s .. ", max_norm=" .. tostring(self.max_norm)
    end
    if self.norm_type ~= 2 then
        s = s .. ", norm_type=" .. tostring(self.norm_type)
    end
    if self.scale_grad_by_freq then
        s = s .. ", scale_grad_by_freq=true"
    end
    if self.sparse then
        s = s .. ", sparse=True" -- GAP: PyTorch's spelling, Lua's would be true (specs read it)
    end
    return s
end

S.define(Embedding, { names = { "num_embeddings", "embedding_dim", "padding_idx", "max_norm",
    "norm_type", "scale_grad_by_freq", "sparse", "_weight", "device", "dtype" }, required = 2,
    factory = true })

-- m:reset_parameters(): PyTorch's, the weight drawn again from N(0, 1) in place (padding row 0)
function Embedding:reset_parameters()
    I.embedding_weight(self.num_embeddings, self.embedding_dim, self.padding_idx, self.weight)
end

-- m:_fill_padding_idx_with_zero(): PyTorch's, the padding_idx row set to zero in place
function Embedding:_fill_padding_idx_with_zero()
    if self.padding_idx then
        require("tide.autograd").no_grad(function()
            self.weight:select(1, self.padding_idx):fill_(0)
        end)
    end
end

return Embedding
