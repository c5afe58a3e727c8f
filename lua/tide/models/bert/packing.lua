-- Packing: a padded batch's real tokens in one [N, H] list, so that the work done token by
-- token (every Linear, the GELU, the residual adds, the LayerNorms: 97% of a MiniLM forward's
-- multiply-adds) skips the padding. Only attention needs each sequence's tokens side by side:
-- the attention kernel takes each sequence's packed tokens as they are (offsets); the composite
-- unpacks its queries, keys and values to [B, T, H] (zeros at padding, which the mask leaves
-- out) and packs its result again. The real tokens' hidden states are the padded
-- forward's to rounding; padding positions come back as zeros, not as the values a padded
-- forward leaves there, which nothing reads (pooling and the [CLS] token skip them). Fortunes
-- batched as sentence-transformers batches them are 30% padding (38,735 real tokens of 55,104).
local core = require("tide.core")

local M = {}

-- the layout of attention_mask [B, T] (1 where a token takes part); nil when nothing is padding
function M.of_mask(attention_mask)
    local B, T = attention_mask:size(1), attention_mask:size(2)
    local real = attention_mask:reshape(B * T):ne(0)
    local index = real:nonzero():view(-1) -- 1-based flat positions
    local N = index:size(1)
    if N == B * T then
        return nil
    end
    -- each flat position's row in [x; a row of zeros]: its token's, or N + 1 at padding
    local gather = core.where(real, real:long():cumsum(1), N + 1)
    -- row b's real tokens are packed rows offsets[b]..offsets[b+1]-1 (0-based, the attention
    -- kernel's layout)
    local counts = real:view(B, T):long():sum(2)
    local offsets = core.cat({ core.zeros({ 1 }, { dtype = "int64", device = real.device }),
        counts:cumsum(1) })
    return { B = B, T = T, index = index, gather = gather, offsets = offsets }
end

-- x [B, T, H] -> [N, H], the real tokens in order
function M.pack(p, x)
    return x:reshape(p.B * p.T, x:size(3)):index_select(1, p.index)
end

-- x [N, H] -> [B, T, H], zeros at padding: a gather, which moves values in any dtype (a
-- scatter-add into zeros would compute, and widen half tensors on the CPU)
function M.unpack(p, x)
    local H = x:size(2)
    local zero = core.zeros({ 1, H }, { dtype = x.dtype, device = x.device })
    return core.cat({ x, zero }):index_select(1, p.gather):view(p.B, p.T, H)
end

return M
