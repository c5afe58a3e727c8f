-- nn.EmbeddingBag(num_embeddings, embedding_dim[, {mode = "mean", padding_idx =,
-- include_last_offset = false, sparse = false, scale_grad_by_freq = false, max_norm =,
-- norm_type = 2}]): lookups reduced per bag (F.embedding_bag), forward(input[, offsets[,
-- per_sample_weights]]) with 1-based ids and offsets; weight ~ N(0, 1) as PyTorch, the
-- padding_idx row zero; with max_norm the looked-up rows are renormed in weight first
local core = require("tide.core")
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local S = require("tide.nn._signature")
local FP = require("tide.nn._from_pretrained")

local EmbeddingBag = Module:extend("EmbeddingBag")

function EmbeddingBag:init(num_embeddings, embedding_dim, opts)
    I.check_int(num_embeddings, "num_embeddings", "EmbeddingBag")
    I.check_int(embedding_dim, "embedding_dim", "EmbeddingBag")
    opts = opts or {}
    core._check_options(opts, "EmbeddingBag", { "mode", "padding_idx", "include_last_offset",
        "sparse", "norm_type", "scale_grad_by_freq", "_weight", "max_norm" })
    self.sparse = I.check_sparse(opts.sparse, "EmbeddingBag")
    I.check_false_only(opts.scale_grad_by_freq, "scale_grad_by_freq", "EmbeddingBag")
    -- PyTorch's attributes (max_norm nil: PyTorch's None); forward reads both
    self.norm_type = I.check_number(opts.norm_type, 2, "norm_type", "EmbeddingBag")
    self.max_norm = I.check_number(opts.max_norm, nil, "max_norm", "EmbeddingBag")
    self.scale_grad_by_freq = false
    self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
    self.mode, self.include_last_offset = opts.mode or "mean", opts.include_last_offset == true
    self.padding_idx = I.padding_idx(opts.padding_idx, num_embeddings, "EmbeddingBag")
    -- _weight: the given n x dim tensor as the weight (PyTorch's; from_pretrained passes it)
    self:register_parameter("weight", FP.weight(opts._weight, num_embeddings, embedding_dim,
        "EmbeddingBag") or I.embedding_weight(num_embeddings, embedding_dim, self.padding_idx))
end

-- nn.EmbeddingBag.from_pretrained(embeddings[, freeze = true, ...][, {...}]): PyTorch's classmethod
function EmbeddingBag.from_pretrained(embeddings, ...)
    return FP.from_pretrained(EmbeddingBag, "EmbeddingBag", embeddings, ...)
end

function EmbeddingBag:forward(input, offsets, per_sample_weights)
    I.check_tensor(input, "EmbeddingBag")
    I.check_device(input, self.weight, "EmbeddingBag")
    return F.embedding_bag(input, self.weight, offsets, { mode = self.mode,
        padding_idx = self.padding_idx, include_last_offset = self.include_last_offset,
        per_sample_weights = per_sample_weights, max_norm = self.max_norm,
        norm_type = self.norm_type })
end

function EmbeddingBag:extra_repr()
    local s = string.format("%d, %d", self.num_embeddings, self.embedding_dim)
    if self.max_norm ~= nil then -- PyTorch's order: max_norm before mode
        s = s .. ", max_norm=" .. tostring(self.max_norm)
    end
    s = s .. ", mode=" .. self.mode
    if self.padding_idx then
        s = s .. ", padding_idx=" .. self.padding_idx
    end
    if self.sparse then
        s = s .. ", sparse=True"
    end
    return s
end

S.define(EmbeddingBag, { names = { "num_embeddings", "embedding_dim", "max_norm", "norm_type",
    "scale_grad_by_freq", "mode", "sparse", "_weight", "include_last_offset", "padding_idx",
    "device", "dtype" }, required = 2, factory = true })

-- m:reset_parameters(): PyTorch's, the weight drawn again from N(0, 1) in place (padding row 0)
function EmbeddingBag:reset_parameters()
    I.embedding_weight(self.num_embeddings, self.embedding_dim, self.padding_idx, self.weight)
end

return EmbeddingBag
