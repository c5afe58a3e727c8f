-- nn.Embedding and nn.EmbeddingBag's `_weight` option and their from_pretrained constructors:
--   nn.Embedding(n, d, {_weight = w}): w (an n x d tensor) is the weight, as a Parameter that
--     shares its storage (no random init, so the generator is not advanced), as PyTorch's
--   nn.Embedding.from_pretrained(embeddings[, freeze = true[, padding_idx[, max_norm[,
--     norm_type[, scale_grad_by_freq[, sparse]]]]]][, {name = ...}]) and
--   nn.EmbeddingBag.from_pretrained(embeddings[, freeze = true[, max_norm[, norm_type[,
--     scale_grad_by_freq[, mode[, sparse[, include_last_offset[, padding_idx]]]]]]]][, {...}]):
--     PyTorch's classmethods, positional parameters in its order then a table by name; the layer
--     holds embeddings itself (shared, not copied), requires_grad = not freeze
local autograd = require("tide.autograd")
local raise = autograd.raise

local P = {}

local function shape_text(t)
    local dims = {}
    for i = 1, t:dim() do
        dims[i] = tostring(t:size(i))
    end
    return "[" .. table.concat(dims, ", ") .. "]"
end

-- the Parameter for opts._weight (nil when absent): an n x dim tensor
function P.weight(w, n, dim, who)
    if w == nil then
        return nil
    end
    if not autograd.is_tensor(w) then
        raise(("tide: %s: expected _weight to be a tensor of shape [%d, %d], got %s"):format(who,
            n, dim, type(w)))
    end
    if w:dim() ~= 2 or w:size(1) ~= n or w:size(2) ~= dim then
        raise(("tide: %s: Shape of weight does not match num_embeddings and embedding_dim: " ..
            "_weight has shape %s, expected [%d, %d]"):format(who, shape_text(w), n, dim))
    end
    return require("tide.nn.Parameter")(w)
end

local POSITIONAL = {
    Embedding = { "freeze", "padding_idx", "max_norm", "norm_type", "scale_grad_by_freq",
        "sparse" },
    EmbeddingBag = { "freeze", "max_norm", "norm_type", "scale_grad_by_freq", "mode", "sparse",
        "include_last_offset", "padding_idx" },
}

-- cls.from_pretrained(embeddings, ...) for cls nn.Embedding or nn.EmbeddingBag (named who)
function P.from_pretrained(cls, who, embeddings, ...)
    local op = who .. ".from_pretrained"
    local names = POSITIONAL[who]
    local n = select("#", ...)
    local rest = { ... }
    local opts = {}
    if n > 0 and type(rest[n]) == "table" and not autograd.is_tensor(rest[n]) then
        for k, v in pairs(rest[n]) do
            opts[k] = v
        end
        n = n - 1
    end
    if n > #names then
        raise(("tide: %s: takes at most %d arguments after embeddings (%s), got %d"):format(op,
            #names, table.concat(names, ", "), n))
    end
    for i = 1, n do
        if rest[i] ~= nil then
            if opts[names[i]] ~= nil then
                raise(("tide: %s: %s given both by position and by name; give it once"):format(op,
                    names[i]))
            end
            opts[names[i]] = rest[i]
        end
    end
    if not autograd.is_tensor(embeddings) or embeddings:dim() ~= 2 then
        raise(("tide: %s: Embeddings parameter is expected to be 2-dimensional (num_embeddings " ..
            "x embedding_dim), got %s"):format(op, autograd.is_tensor(embeddings) and
            ("a tensor of shape " .. shape_text(embeddings)) or type(embeddings)))
    end
    local freeze = opts.freeze
    if freeze == nil then
        freeze = true
    elseif type(freeze) ~= "boolean" then
        raise(("tide: %s: expected freeze to be a boolean, got %s"):format(op, tostring(freeze)))
    end
    opts.freeze = nil
    opts._weight = embeddings
    local m = cls(embeddings:size(1), embeddings:size(2), opts)
    m.weight.requires_grad = not freeze
    return m
end

return P
