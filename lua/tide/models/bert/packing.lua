-- Packing: a padded batch's real tokens in one [N, H] list, so that the work done token by
-- token (every Linear, the GELU, the residual adds, the LayerNorms: 97% of a MiniLM forward's
-- multiply-adds) skips the padding. Only attention needs each sequence's tokens side by side:
-- it unpacks its queries, keys and values to [B, T, H] (zeros at padding, which the mask
-- leaves out) and packs its result again. The real tokens' hidden states are the padded
-- forward's to rounding; padding positions come back as zeros, not as the values a padded
-- forward leaves there, which nothing reads (pooling and the [CLS] token skip them). Fortunes
-- batched as sentence-transformers batches them are 30% padding (38,735 real tokens of 55,104).
local core = require("tide.core")

local M = {}

-- the layout of attention_mask [B, T] (1 where a token takes part); nil when nothing is padding
function M.of_mask(attention_mask)
    local B, T = attention_mask:size(1), attention_mask:size(2)
    local index = attention_mask:reshape(B * T):nonzero():view(-1) -- 1-based flat positions
    if index:size(1) == B * T then
        return nil
    end
    return { B = B, T = T, index = index }
end

-- x [B, T, H] -> [N, H], the real tokens in order
function M.pack(p, x)
    return x:reshape(p.B * p.T, x:size(3)):index_select(1, p.index)
end

-- x [N, H] -> [B, T, H], zeros at padding
function M.unpack(p, x)
    local H = x:size(2)
    return core.zeros({ p.B * p.T, H }, { dtype = x.dtype, device = x.device })
        :index_add_(1, p.index, x):view(p.B, p.T, H)
end

return M
