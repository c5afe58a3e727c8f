-- BERT's parameters: allocated without drawing (from_pretrained fills them from the checkpoint,
-- and drawing 22M normal values costs more than reading them), then initialised as Hugging
-- Face's BertPreTrainedModel._init_weights when a model is made fresh or a key is missing:
-- Linear and Embedding weights ~ N(0, initializer_range), biases 0, the padding row of the
-- word embeddings 0, LayerNorm weight 1 and bias 0.
--
-- P.Linear(in, out) and P.Embedding(n, dim[, padding_idx 1-based]) are nn.Linear and
-- nn.Embedding (same names, forward and printing) whose constructors only allocate.
local core = require("tide.core")
local autograd = require("tide.autograd")
local nn = require("tide.nn")

local P = {}

local function empty(shape)
    return core.empty(shape):requires_grad_(true)
end

P.Linear = nn.Linear:extend("Linear")

function P.Linear:init(in_features, out_features, opts)
    self.in_features, self.out_features = in_features, out_features
    self:register_parameter("weight", empty({ out_features, in_features }))
    if not (opts and opts.bias == false) then
        self:register_parameter("bias", empty({ out_features }))
    end
end

P.Embedding = nn.Embedding:extend("Embedding")

function P.Embedding:init(num_embeddings, embedding_dim, padding_idx)
    self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
    self.padding_idx, self.scale_grad_by_freq = padding_idx, false
    self:register_parameter("weight", empty({ num_embeddings, embedding_dim }))
end

-- initialises model's parameters as Hugging Face does; only (a set of tensors), when given,
-- limits it to those. A bias owned by a module itself (cls.predictions.bias) starts at 0.
function P.init_weights(model, std, only)
    local seen = {} -- a tied tensor is initialised once, by its first owner (as tie_weights)
    local function want(t)
        if t == nil or seen[t] or (only ~= nil and not only[t]) then
            return false
        end
        seen[t] = true
        return true
    end
    autograd.no_grad(function()
        for _, m in ipairs(model:modules()) do
            local kind = m.__name
            local w, b = rawget(m, "weight"), rawget(m, "bias")
            if kind == "LayerNorm" then
                if want(w) then w:fill_(1) end
                if want(b) then b:fill_(0) end
            elseif kind == "Linear" or kind == "Embedding" then
                if want(w) then
                    w:normal_(0, std)
                    if kind == "Embedding" and m.padding_idx then
                        w:select(1, m.padding_idx):fill_(0)
                    end
                end
                if want(b) then b:fill_(0) end
            elseif want(b) then
                b:fill_(0)
            end
        end
    end)
end

return P
