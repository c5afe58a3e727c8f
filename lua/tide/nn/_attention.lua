-- tide.nn._attention: multi-head attention's body, the one code path of nn.MultiheadAttention
-- and F.multi_head_attention_forward (the callers check their own arguments and layouts, then
-- hand batch-major tensors here). p holds the parameters under the module's field names:
-- embed_dim, num_heads, head_dim, in_proj_weight (or q_proj_weight, k_proj_weight,
-- v_proj_weight), in_proj_bias, bias_k, bias_v, add_zero_attn, dropout and training, out_proj
-- (called on the heads' output: the module's Linear, or the functional's weights), and for the
-- functional static_k, static_v ({N * heads, S, head_dim}: the keys and values as they are).
-- Masks follow PyTorch's MultiheadAttention: a bool attn_mask ([L, S] or [N*heads, L, S]) or
-- key_padding_mask ([N, S]) is true where attention is NOT allowed (uint8 as bool, PyTorch's
-- deprecated form); a float one is added; the appended keys (bias_k, add_zero_attn) are always
-- allowed. is_causal applies the causal mask (a query does not see later keys).
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local I = require("tide.nn._internal")
local fused = require("tide.nn._fused")

local A = {}

-- the q, k, v projections: one gemm for self-attention, three otherwise
local function project(p, q, k, v)
    local E, W, b = p.embed_dim, p.in_proj_weight, p.in_proj_bias
    if W and rawequal(q, k) and rawequal(k, v) then
        local qkv = fused.linear(q, W, b)
        return qkv:narrow(-1, 1, E), qkv:narrow(-1, E + 1, E), qkv:narrow(-1, 2 * E + 1, E)
    end
    local function part(x, i, sep)
        local w = W and W:narrow(1, i * E + 1, E) or sep
        return fused.linear(x, w, b and b:narrow(1, i * E + 1, E))
    end
    return part(q, 0, p.q_proj_weight), part(k, 1, p.k_proj_weight),
        part(v, 2, p.v_proj_weight)
end

-- keys (or values) [N, S, E] with bias_k (bias_v) and a zero row appended, as p asks
local function append_kv(p, x, bias)
    local N, E = x:size(1), p.embed_dim
    local parts = { x }
    if bias then
        parts[#parts + 1] = bias:tile(N, 1, 1)
    end
    if p.add_zero_attn then
        parts[#parts + 1] = core.zeros({ N, 1, E }, { dtype = x.dtype, device = x.device })
    end
    return #parts > 1 and core.cat(parts, 2) or x
end

-- a mask over S keys widened to the n appended ones, which every query may attend to
local function pad_keys(mask, n)
    if n == 0 then
        return mask
    end
    local shape = mask.shape
    shape[#shape] = n
    local allowed = core.zeros(shape, { dtype = mask.dtype, device = mask.device })
    return core.cat({ mask, allowed }, mask:dim())
end

-- scores [N, H, L, S] with a mask applied: bool true = not allowed, float added. A bool mask
-- becomes a float one of 0 and -inf, as PyTorch does: an add (vectorized, its gradient g as it
-- is) where a select over the scores took a pass forward and another backward.
local function masked(scores, mask, shape)
    mask = mask:reshape(shape)
    if mask.dtype == "bool" then
        mask = core.zeros(mask.shape, { dtype = scores.dtype, device = scores.device })
            :masked_fill(mask, -math.huge)
    end
    return scores:add(mask)
end

local function as_mask(m, who)
    I.check_tensor(m, who)
    return m.dtype == "uint8" and m:ne(0) or m
end

-- static_k or static_v: {N * heads, S, head_dim} as [N, heads, S, head_dim]
local function static(p, t, what, N, who)
    local H, hd = p.num_heads, p.head_dim
    if t:dim() ~= 3 or t:size(1) ~= N * H or t:size(3) ~= hd then
        raise(string.format("tide: %s: expected %s of shape {%d, S, %d} (batch * num_heads, " ..
            "S, head_dim), got %s", who, what, N * H, hd, I.shape_str(t.shape)))
    end
    return t:view(N, H, t:size(2), hd)
end

-- attention over batch-major q [N, L, E], k [N, S, kdim], v [N, S, vdim] (their shapes checked
-- by the caller); o: {attn_mask =, key_padding_mask =, is_causal =}; nd: the caller's input
-- dims (2: unbatched, a key_padding_mask {S}). Returns out [N, L, E] (through out_proj) and
-- the attention weights [N, heads, L, S + the appended keys].
function A.attend(p, q, k, v, o, who, nd)
    local N, L, S, E = q:size(1), q:size(2), k:size(2), p.embed_dim
    local H, hd = p.num_heads, p.head_dim
    local sk, sv = p.static_k, p.static_v
    if sk then
        sk = static(p, sk, "static_k", N, who)
    end
    if sv then
        sv = static(p, sv, "static_v", N, who)
    end
    -- the keys' count as attention sees them (a static one's)
    local Sk, Sv = sk and sk:size(3) or S, sv and sv:size(3) or S
    if Sk ~= Sv then
        raise(string.format("tide: %s: expected as many keys as values, got %d keys%s and %d " ..
            "values%s", who, Sk, sk and " (static_k)" or "", Sv, sv and " (static_v)" or ""))
    end
    -- the masks checked before any work
    local attn_mask, kpm = o.attn_mask, o.key_padding_mask
    if attn_mask ~= nil then
        attn_mask = as_mask(attn_mask, who)
        local m = attn_mask
        if not ((m:dim() == 2 and m:size(1) == L and m:size(2) == Sk) or
                (m:dim() == 3 and m:size(1) == N * H and m:size(2) == L and m:size(3) == Sk)) then
            -- PyTorch's sentence after tide's
            local torch_msg = (m:dim() == 2 or m:dim() == 3) and string.format(
                "The shape of the %dD attn_mask is %s, but should be %s", m:dim(),
                I.shape_str(m.shape), I.shape_str(m:dim() == 2 and { L, Sk } or { N * H, L, Sk }))
                or string.format("attn_mask's dimension %d is not supported", m:dim())
            raise(string.format("tide: %s: expected attn_mask of shape {%d, %d} or " ..
                "{%d, %d, %d}, got %s (%s)", who, L, Sk, N * H, L, Sk, I.shape_str(m.shape),
                torch_msg))
        end
    end
    if kpm ~= nil then
        kpm = as_mask(kpm, who)
        local want = nd == 2 and { Sk } or { N, Sk }
        if kpm:dim() ~= #want or kpm:size(1) ~= want[1] or kpm:size(-1) ~= Sk then
            raise(string.format("tide: %s: expected key_padding_mask of shape %s, got %s", who,
                I.shape_str(want), I.shape_str(kpm.shape)))
        end
    end
    local qp, kp, vp = project(p, q, k, v)
    local function heads(x, len)
        return x:reshape(N, len, H, hd):transpose(2, 3) -- [N, H, len, hd]
    end
    local kh, vh, extra
    if sk or sv then
        -- PyTorch's order: the statics replace the heads' keys and values, then the zero row
        local zero = p.add_zero_attn and core.zeros({ N, H, 1, hd }, { dtype = qp.dtype,
            device = qp.device }) or nil
        kh = sk or heads(kp, S)
        vh = sv or heads(vp, S)
        if zero then
            kh, vh = core.cat({ kh, zero }, 3), core.cat({ vh, zero }, 3)
        end
        extra = zero and 1 or 0
    else
        kp, vp = append_kv(p, kp, p.bias_k), append_kv(p, vp, p.bias_v)
        extra = kp:size(2) - S -- the appended keys
        kh, vh = heads(kp, S + extra), heads(vp, S + extra)
    end
    local S1 = Sk + extra
    -- q scaled before the product, as PyTorch 1.13's MHA does: a pass over [N, H, L, hd], not
    -- over the scores' [N, H, L, S]
    local scores = heads(qp, L):mul(1 / math.sqrt(hd)):matmul(kh:transpose(3, 4))
    if o.is_causal then
        -- true above the diagonal: a query does not see later keys
        local rows = core.arange(1, L + 1, { device = q.device, dtype = "int64" }):view(L, 1)
        local cols = core.arange(1, Sk + 1, { device = q.device, dtype = "int64" }):view(1, Sk)
        scores = masked(scores, pad_keys(rows:lt(cols), extra), { 1, 1, L, S1 })
    end
    if attn_mask ~= nil then
        local shape = attn_mask:dim() == 2 and { 1, 1, L, S1 } or { N, H, L, S1 }
        scores = masked(scores, pad_keys(attn_mask, extra), shape)
    end
    if kpm ~= nil then
        scores = masked(scores, pad_keys(kpm, extra), { N, 1, 1, S1 })
    end
    local attn = scores:softmax(-1)
    if p.dropout > 0 and p.training then
        attn = I.dropout(attn, p.dropout)
    end
    local out = attn:matmul(vh):transpose(2, 3):reshape(N, L, E)
    return p.out_proj(out), attn
end

return A
