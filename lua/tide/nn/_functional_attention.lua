-- F.multi_head_attention_forward for tide.nn.functional: PyTorch 1.13's functional form of
-- nn.MultiheadAttention, run by the module's own body (tide.nn._attention) on the weights given.
-- Required from the end of functional.lua; its argument checks are tide.nn._args.
local idiv = require("tide._compat").idiv
local autograd = require("tide.autograd")
local raise = autograd.raise
local I = require("tide.nn._internal")
local C = require("tide.nn._args")
local fused = require("tide.nn._fused")
local Att = require("tide.nn._attention")

local WHO = "multi_head_attention_forward"
local OPTIONS = { "training", "key_padding_mask", "need_weights", "attn_mask",
    "use_separate_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight", "static_k",
    "static_v", "average_attn_weights" }

-- t (a tensor, or nil when optional) of shape want (a list of sizes)
local function shaped(t, what, want, optional)
    if t == nil and optional then
        return nil
    end
    C.tensor_arg(t, WHO, what)
    local ok = t:dim() == #want
    for i = 1, #want do
        ok = ok and t:size(i) == want[i]
    end
    if not ok then
        raise(string.format("tide: %s: expected %s of shape %s, got %s", WHO, what,
            I.shape_str(want), C.shape_str(t)))
    end
    return t
end

return function(F)
    -- multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
    -- in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight,
    -- out_proj_bias[, {training = true, key_padding_mask =, need_weights = true, attn_mask =,
    -- use_separate_proj_weight = false, q_proj_weight =, k_proj_weight =, v_proj_weight =,
    -- static_k =, static_v =, average_attn_weights = true}]): query {L, N, E} or {L, E}, key and
    -- value {S, N, kdim} / {S, N, vdim} or unbatched (sequence first, as PyTorch's); returns
    -- the output {L, N, E} (or {L, E}) and the weights {N, L, S'} averaged over the heads (or
    -- {N, heads, L, S'}; S' counts the appended keys), nil without need_weights. A nil stands
    -- for PyTorch's None; dropout_p applies while training (the default, as PyTorch's).
    function F.multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                            in_proj_weight, in_proj_bias, bias_k, bias_v,
                                            add_zero_attn, dropout_p, out_proj_weight,
                                            out_proj_bias, ...)
        -- training, key_padding_mask, ... by position in PyTorch 1.13's order and/or by name
        require("tide.op_args").no_extra(WHO, 24, select(12, ...))
        local opts = require("tide.pytorch_args").merge(WHO, OPTIONS, ...)
        C.tensor_arg(query, WHO, "query")
        C.tensor_arg(key, WHO, "key")
        C.tensor_arg(value, WHO, "value")
        local o = C.options(opts, WHO, OPTIONS)
        local nd = query:dim()
        if nd ~= 2 and nd ~= 3 then
            raise("tide: " .. WHO .. ": expected query {L, N, E} or {L, E}, got " ..
                C.shape_str(query))
        end
        if key:dim() ~= nd or value:dim() ~= nd then
            raise(string.format("tide: %s: expected key and value of %d dims like query %s, " ..
                "got %s and %s", WHO, nd, C.shape_str(query), C.shape_str(key),
                C.shape_str(value)))
        end
        local E = query:size(-1)
        C.int_arg(embed_dim_to_check, WHO, "embed_dim_to_check", 1)
        if E ~= embed_dim_to_check then
            raise(string.format("tide: %s: expected query's embedding size %d " ..
                "(embed_dim_to_check), got %d in %s", WHO, embed_dim_to_check, E,
                C.shape_str(query)))
        end
        local H = C.int_arg(num_heads, WHO, "num_heads", 1)
        if E % H ~= 0 then
            raise(string.format("tide: %s: embed_dim %d must be divisible by num_heads %d", WHO,
                E, H))
        end
        local separate = C.bool_opt(o.use_separate_proj_weight, false, WHO,
            "use_separate_proj_weight")
        local training = C.bool_opt(o.training, true, WHO, "training")
        local need_weights = C.bool_opt(o.need_weights, true, WHO, "need_weights")
        local average = C.bool_opt(o.average_attn_weights, true, WHO, "average_attn_weights")
        local zero_attn = C.bool_opt(add_zero_attn, false, WHO, "add_zero_attn")
        local p = C.probability(dropout_p == nil and 0 or dropout_p, WHO)
        -- batch-major [N, L, E] inside, as the module's
        local function batch_major(x)
            return nd == 2 and x:unsqueeze(1) or x:transpose(1, 2)
        end
        local q = batch_major(query)
        local k = rawequal(key, query) and q or batch_major(key)
        local v = rawequal(value, key) and k or batch_major(value)
        local N, S = q:size(1), k:size(2)
        if k:size(1) ~= N or v:size(1) ~= N or v:size(2) ~= S then
            raise(string.format("tide: %s: expected key and value with query's batch and one " ..
                "length, got query %s, key %s and value %s", WHO, C.shape_str(query),
                C.shape_str(key), C.shape_str(value)))
        end
        local params = { embed_dim = E, num_heads = H, head_dim = idiv(E, H),
            add_zero_attn = zero_attn, dropout = p, training = training }
        if separate then
            params.q_proj_weight = shaped(o.q_proj_weight, "q_proj_weight", { E, E })
            params.k_proj_weight = shaped(o.k_proj_weight, "k_proj_weight", { E, k:size(3) })
            params.v_proj_weight = shaped(o.v_proj_weight, "v_proj_weight", { E, v:size(3) })
        else
            if k:size(3) ~= E or v:size(3) ~= E then
                raise(string.format("tide: %s: expected key and value of query's embedding " ..
                    "size %d (or use_separate_proj_weight = true with kdim and vdim weights), " ..
                    "got key %s and value %s", WHO, E, C.shape_str(key), C.shape_str(value)))
            end
            params.in_proj_weight = shaped(in_proj_weight, "in_proj_weight", { 3 * E, E })
        end
        params.in_proj_bias = shaped(in_proj_bias, "in_proj_bias", { 3 * E }, true)
        if (bias_k == nil) ~= (bias_v == nil) then
            raise("tide: " .. WHO .. ": pass bias_k and bias_v together, or neither")
        end
        params.bias_k = shaped(bias_k, "bias_k", { 1, 1, E }, true)
        params.bias_v = shaped(bias_v, "bias_v", { 1, 1, E }, true)
        params.static_k = C.optional_tensor(o.static_k, WHO, "static_k")
        params.static_v = C.optional_tensor(o.static_v, WHO, "static_v")
        if bias_k ~= nil and (o.static_k ~= nil or o.static_v ~= nil) then
            raise("tide: " .. WHO .. ": bias_k and bias_v cannot be added to static_k or " ..
                "static_v; pass either")
        end
        shaped(out_proj_weight, "out_proj_weight", { E, E })
        shaped(out_proj_bias, "out_proj_bias", { E }, true)
        for _, t in ipairs({ { key, "key" }, { value, "value" },
            { params.in_proj_weight or params.q_proj_weight, "in_proj_weight" },
            { out_proj_weight, "out_proj_weight" } }) do
            C.same_device(query, t[1], WHO, t[2])
        end
        I.check_dtype(query, out_proj_weight, WHO)
        params.out_proj = function(x)
            return fused.linear(x, out_proj_weight, out_proj_bias)
        end
        local out, attn = Att.attend(params, q, k, v, { attn_mask = o.attn_mask,
            key_padding_mask = o.key_padding_mask }, WHO, nd)
        out = nd == 2 and out:squeeze(1) or out:transpose(1, 2)
        if not need_weights then
            return out, nil
        end
        local w = average and attn:mean(2) or attn
        return out, nd == 2 and w:squeeze(1) or w
    end
end
