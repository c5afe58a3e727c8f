-- ported_scripts157_spec.lua — huggingface/transformers v4.46.3's
-- src/transformers/modeling_attn_mask_utils.py (AttentionMaskConverter: to_causal_4d, to_4d,
-- _make_causal_mask, _expand_mask, _unmask_unattended, _ignore_causal_mask_sdpa; the module
-- functions _prepare_4d_causal_attention_mask, _prepare_4d_attention_mask,
-- _create_4d_causal_attention_mask) and modeling_utils.py's ModuleUtilsMixin
-- (invert_attention_mask, create_extended_attention_mask_for_decoder,
-- get_extended_attention_mask), ported line for line and checked against the real functions on
-- fixed masks (batch 2, seq 5, padding right and left, past 0 and 2, sliding window 3, float32
-- and float64). The Python line stands above each Lua line that differs from it. Python's
-- keyword arguments are passed in their order; `x[:, None, None, :]` is
-- `x[{{}, newaxis, newaxis, {}}]`; torch.finfo(dtype).min is tide.finfo(dtype).min.
local tide = require("tide")
local nn = tide.nn
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local newaxis = tide.newaxis

---------------------------------------------------------------------------------------------
-- 1. modeling_attn_mask_utils.py
---------------------------------------------------------------------------------------------
-- class AttentionMaskConverter:
local AttentionMaskConverter = ported.class("AttentionMaskConverter")

-- def __init__(self, is_causal: bool, sliding_window: Optional[int] = None):
function AttentionMaskConverter:__init__(is_causal, sliding_window)
    self.is_causal = is_causal
    self.sliding_window = sliding_window

    -- if self.sliding_window is not None and self.sliding_window <= 0:
    if self.sliding_window ~= nil and self.sliding_window <= 0 then
        -- raise ValueError(f"Make sure that when passing `sliding_window` that its value ...")
        error(string.format("Make sure that when passing `sliding_window` that its value is a "
            .. "strictly positive integer, not `%s`", tostring(self.sliding_window)))
    end
end

-- def to_causal_4d(self, batch_size, query_length, key_value_length, dtype, device="cpu"):
function AttentionMaskConverter:to_causal_4d(batch_size, query_length, key_value_length, dtype,
                                             device)
    device = device or "cpu"
    if not self.is_causal then
        -- raise ValueError(f"Please use `to_causal_4d` only if {self.__class__} has ...")
        error(string.format("Please use `to_causal_4d` only if %s has `is_causal` set to True.",
            self.__name))
    end

    -- If shape is not cached, create a new causal mask and cache it
    -- input_shape = (batch_size, query_length)
    local input_shape = { batch_size, query_length }
    local past_key_values_length = key_value_length - query_length

    -- create causal mask
    -- [bsz, seq_len] -> [bsz, 1, tgt_seq_len, src_seq_len]
    local causal_4d_mask = nil
    -- if input_shape[-1] > 1 or self.sliding_window is not None:
    if input_shape[#input_shape] > 1 or self.sliding_window ~= nil then
        -- causal_4d_mask = self._make_causal_mask(input_shape, dtype, device=device,
        --     past_key_values_length=past_key_values_length, sliding_window=self.sliding_window)
        causal_4d_mask = AttentionMaskConverter._make_causal_mask(input_shape, dtype, device,
            past_key_values_length, self.sliding_window)
    end

    return causal_4d_mask
end

-- def to_4d(self, attention_mask_2d, query_length, dtype, key_value_length=None):
function AttentionMaskConverter:to_4d(attention_mask_2d, query_length, dtype, key_value_length)
    -- input_shape = (attention_mask_2d.shape[0], query_length)
    local input_shape = { attention_mask_2d.shape[1], query_length }

    -- create causal mask
    -- [bsz, seq_len] -> [bsz, 1, tgt_seq_len, src_seq_len]
    local causal_4d_mask = nil
    -- if (input_shape[-1] > 1 or self.sliding_window is not None) and self.is_causal:
    if (input_shape[#input_shape] > 1 or self.sliding_window ~= nil) and self.is_causal then
        if key_value_length == nil then
            error("This attention mask converter is causal. Make sure to pass `key_value_length` "
                .. "to correctly create a causal mask.")
        end

        local past_key_values_length = key_value_length - query_length
        -- causal_4d_mask = self._make_causal_mask(input_shape, dtype,
        --     device=attention_mask_2d.device, past_key_values_length=past_key_values_length,
        --     sliding_window=self.sliding_window)
        causal_4d_mask = AttentionMaskConverter._make_causal_mask(input_shape, dtype,
            attention_mask_2d.device, past_key_values_length, self.sliding_window)
    -- elif self.sliding_window is not None:
    elseif self.sliding_window ~= nil then
        -- raise NotImplementedError("Sliding window is currently only implemented for causal ...")
        error("Sliding window is currently only implemented for causal masking")
    end

    -- [bsz, seq_len] -> [bsz, 1, tgt_seq_len, src_seq_len]
    -- expanded_attn_mask = self._expand_mask(attention_mask_2d, dtype,
    --     tgt_len=input_shape[-1]).to(attention_mask_2d.device)
    local expanded_attn_mask = AttentionMaskConverter._expand_mask(attention_mask_2d, dtype,
        input_shape[#input_shape]):to(attention_mask_2d.device)

    -- if causal_4d_mask is not None:
    if causal_4d_mask ~= nil then
        -- expanded_attn_mask = causal_4d_mask.masked_fill(expanded_attn_mask.bool(),
        --     torch.finfo(dtype).min)
        expanded_attn_mask = causal_4d_mask:masked_fill(expanded_attn_mask:bool(),
            tide.finfo(dtype).min)
    end

    -- expanded_attn_mask + causal_4d_mask can cause some overflow
    local expanded_4d_mask = expanded_attn_mask

    return expanded_4d_mask
end

-- @staticmethod
-- def _make_causal_mask(input_ids_shape, dtype, device, past_key_values_length=0,
--                       sliding_window=None):
function AttentionMaskConverter._make_causal_mask(input_ids_shape, dtype, device,
                                                  past_key_values_length, sliding_window)
    past_key_values_length = past_key_values_length or 0
    -- bsz, tgt_len = input_ids_shape
    local bsz, tgt_len = input_ids_shape[1], input_ids_shape[2]
    -- mask = torch.full((tgt_len, tgt_len), torch.finfo(dtype).min, device=device)
    -- (for a float64 dtype this raises, as PyTorch's: finfo(float64).min does not fit the
    -- default float32)
    local mask = tide.full({ tgt_len, tgt_len }, tide.finfo(dtype).min, { device = device })
    -- mask_cond = torch.arange(mask.size(-1), device=device)
    local mask_cond = tide.arange(mask:size(-1), { device = device })
    -- mask.masked_fill_(mask_cond < (mask_cond + 1).view(mask.size(-1), 1), 0)
    mask:masked_fill_(mask_cond:lt((mask_cond + 1):view(mask:size(-1), 1)), 0)

    -- mask = mask.to(dtype)
    mask = mask:to(dtype)

    if past_key_values_length > 0 then
        -- mask = torch.cat([torch.zeros(tgt_len, past_key_values_length, dtype=dtype,
        --     device=device), mask], dim=-1)
        mask = tide.cat({ tide.zeros({ tgt_len, past_key_values_length },
            { dtype = dtype, device = device }), mask }, -1)
    end

    -- add lower triangular sliding window mask if necessary
    -- if sliding_window is not None:
    if sliding_window ~= nil then
        local diagonal = past_key_values_length - sliding_window - 1

        -- context_mask = torch.tril(torch.ones_like(mask, dtype=torch.bool), diagonal=diagonal)
        local context_mask = tide.tril(tide.ones_like(mask, { dtype = "bool" }), diagonal)
        -- mask.masked_fill_(context_mask, torch.finfo(dtype).min)
        mask:masked_fill_(context_mask, tide.finfo(dtype).min)
    end

    -- return mask[None, None, :, :].expand(bsz, 1, tgt_len, tgt_len + past_key_values_length)
    return mask[{ newaxis, newaxis, {}, {} }]:expand(bsz, 1, tgt_len,
        tgt_len + past_key_values_length)
end

-- @staticmethod
-- def _expand_mask(mask: torch.Tensor, dtype: torch.dtype, tgt_len: Optional[int] = None):
function AttentionMaskConverter._expand_mask(mask, dtype, tgt_len)
    -- bsz, src_len = mask.size()
    local bsz, src_len = unpack(mask:size())
    -- tgt_len = tgt_len if tgt_len is not None else src_len
    tgt_len = tgt_len or src_len

    -- expanded_mask = mask[:, None, None, :].expand(bsz, 1, tgt_len, src_len).to(dtype)
    local expanded_mask = mask[{ {}, newaxis, newaxis, {} }]:expand(bsz, 1, tgt_len, src_len)
        :to(dtype)

    local inverted_mask = 1.0 - expanded_mask

    -- return inverted_mask.masked_fill(inverted_mask.to(torch.bool), torch.finfo(dtype).min)
    return inverted_mask:masked_fill(inverted_mask:to("bool"), tide.finfo(dtype).min)
end

-- @staticmethod
-- def _unmask_unattended(expanded_mask: torch.FloatTensor, min_dtype: float):
function AttentionMaskConverter._unmask_unattended(expanded_mask, min_dtype)
    -- if expanded_mask.dtype == torch.bool:
    if expanded_mask.dtype == "bool" then
        error("AttentionMaskConverter._unmask_unattended expects a float `expanded_mask`, "
            .. "got a BoolTensor.")
    end

    -- return expanded_mask.mul(~torch.all(expanded_mask == min_dtype, dim=-1, keepdim=True))
    return expanded_mask:mul(tide.all(expanded_mask:eq(min_dtype), { dim = -1, keepdim = true })
        :bitwise_not())
end

-- @staticmethod
-- def _ignore_causal_mask_sdpa(attention_mask, inputs_embeds, past_key_values_length,
--                              sliding_window=None, is_training=False):
function AttentionMaskConverter._ignore_causal_mask_sdpa(attention_mask, inputs_embeds,
                                                         past_key_values_length, sliding_window,
                                                         is_training)
    is_training = is_training or false
    -- _, query_length = inputs_embeds.shape[0], inputs_embeds.shape[1]
    local query_length = inputs_embeds.shape[2]
    local key_value_length = query_length + past_key_values_length

    -- is_tracing = torch.jit.is_tracing() or isinstance(inputs_embeds, torch.fx.Proxy)
    --     or is_torchdynamo_compiling()
    -- (tide has no torch.fx: no tensor is a Proxy)
    local is_tracing = tide.jit.is_tracing() or tide.compiler.is_dynamo_compiling()

    local ignore_causal_mask = false

    -- if attention_mask is None:
    if attention_mask == nil then
        -- if ((is_training or not is_tracing)
        --     and (query_length == 1 or key_value_length == query_length)
        --     and (sliding_window is None or key_value_length < sliding_window)):
        if (is_training or not is_tracing)
            and (query_length == 1 or key_value_length == query_length)
            and (sliding_window == nil or key_value_length < sliding_window) then
            ignore_causal_mask = true
        end
    -- elif sliding_window is None or key_value_length < sliding_window:
    elseif sliding_window == nil or key_value_length < sliding_window then
        -- if len(attention_mask.shape) == 4:
        if #attention_mask.shape == 4 then
            return false
        -- elif not is_tracing and torch.all(attention_mask == 1):
        elseif not is_tracing and tide.all(attention_mask:eq(1)):item() then
            if query_length == 1 or key_value_length == query_length then
                -- For query_length == 1, causal attention and bi-directional attention are the
                -- same.
                ignore_causal_mask = true
            end
        end
    end

    return ignore_causal_mask
end

-- def _prepare_4d_causal_attention_mask(attention_mask, input_shape, inputs_embeds,
--                                       past_key_values_length, sliding_window=None):
local function _prepare_4d_causal_attention_mask(attention_mask, input_shape, inputs_embeds,
                                                 past_key_values_length, sliding_window)
    -- attn_mask_converter = AttentionMaskConverter(is_causal=True, sliding_window=sliding_window)
    local attn_mask_converter = AttentionMaskConverter(true, sliding_window)

    -- key_value_length = input_shape[-1] + past_key_values_length
    local key_value_length = input_shape[#input_shape] + past_key_values_length

    -- 4d mask is passed through the layers
    -- if attention_mask is not None and len(attention_mask.shape) == 2:
    if attention_mask ~= nil and #attention_mask.shape == 2 then
        -- attention_mask = attn_mask_converter.to_4d(attention_mask, input_shape[-1],
        --     key_value_length=key_value_length, dtype=inputs_embeds.dtype)
        attention_mask = attn_mask_converter:to_4d(attention_mask, input_shape[#input_shape],
            inputs_embeds.dtype, key_value_length)
    -- elif attention_mask is not None and len(attention_mask.shape) == 4:
    elseif attention_mask ~= nil and #attention_mask.shape == 4 then
        -- expected_shape = (input_shape[0], 1, input_shape[1], key_value_length)
        local expected_shape = tide.Size({ input_shape[1], 1, input_shape[2], key_value_length })
        -- if tuple(attention_mask.shape) != expected_shape:
        if attention_mask.shape ~= expected_shape then
            -- raise ValueError(f"Incorrect 4D attention_mask shape: ...; expected: ....")
            error(string.format("Incorrect 4D attention_mask shape: %s; expected: %s.",
                tostring(attention_mask.shape), tostring(expected_shape)))
        else
            -- if the 4D mask has correct shape - invert it and fill with negative infinity
            local inverted_mask = 1.0 - attention_mask
            -- attention_mask = inverted_mask.masked_fill(inverted_mask.to(torch.bool),
            --     torch.finfo(inputs_embeds.dtype).min)
            attention_mask = inverted_mask:masked_fill(inverted_mask:to("bool"),
                tide.finfo(inputs_embeds.dtype).min)
        end
    else
        -- attention_mask = attn_mask_converter.to_causal_4d(input_shape[0], input_shape[-1],
        --     key_value_length, dtype=inputs_embeds.dtype, device=inputs_embeds.device)
        attention_mask = attn_mask_converter:to_causal_4d(input_shape[1],
            input_shape[#input_shape], key_value_length, inputs_embeds.dtype,
            inputs_embeds.device)
    end

    return attention_mask
end

-- def _prepare_4d_attention_mask(mask, dtype, tgt_len=None):
local function _prepare_4d_attention_mask(mask, dtype, tgt_len)
    -- return AttentionMaskConverter._expand_mask(mask=mask, dtype=dtype, tgt_len=tgt_len)
    return AttentionMaskConverter._expand_mask(mask, dtype, tgt_len)
end

-- def _create_4d_causal_attention_mask(input_shape, dtype, device, past_key_values_length=0,
--                                      sliding_window=None):
local function _create_4d_causal_attention_mask(input_shape, dtype, device,
                                                past_key_values_length, sliding_window)
    past_key_values_length = past_key_values_length or 0
    -- attn_mask_converter = AttentionMaskConverter(is_causal=True, sliding_window=sliding_window)
    local attn_mask_converter = AttentionMaskConverter(true, sliding_window)

    -- key_value_length = past_key_values_length + input_shape[-1]
    local key_value_length = past_key_values_length + input_shape[#input_shape]
    -- attention_mask = attn_mask_converter.to_causal_4d(input_shape[0], input_shape[-1],
    --     key_value_length, dtype=dtype, device=device)
    local attention_mask = attn_mask_converter:to_causal_4d(input_shape[1],
        input_shape[#input_shape], key_value_length, dtype, device)

    return attention_mask
end

---------------------------------------------------------------------------------------------
-- 2. modeling_utils.py ModuleUtilsMixin
---------------------------------------------------------------------------------------------
-- class ModuleUtilsMixin: (its methods, mixed into a module class below)
local ModuleUtilsMixin = {}

-- @property
-- def dtype(self) -> torch.dtype: return get_parameter_dtype(self)
-- (get_parameter_dtype: the first floating-point parameter's dtype)
function ModuleUtilsMixin.get_dtype(self)
    for _, p in ipairs(self:parameters()) do
        if p:is_floating_point() then
            return p.dtype
        end
    end
end

-- def invert_attention_mask(self, encoder_attention_mask: Tensor) -> Tensor:
function ModuleUtilsMixin.invert_attention_mask(self, encoder_attention_mask)
    local encoder_extended_attention_mask
    if encoder_attention_mask:dim() == 3 then
        -- encoder_extended_attention_mask = encoder_attention_mask[:, None, :, :]
        encoder_extended_attention_mask = encoder_attention_mask[{ {}, newaxis, {}, {} }]
    end
    if encoder_attention_mask:dim() == 2 then
        -- encoder_extended_attention_mask = encoder_attention_mask[:, None, None, :]
        encoder_extended_attention_mask = encoder_attention_mask[{ {}, newaxis, newaxis, {} }]
    end
    -- encoder_extended_attention_mask = encoder_extended_attention_mask.to(dtype=self.dtype)
    encoder_extended_attention_mask = encoder_extended_attention_mask:to(self:get_dtype())
    -- encoder_extended_attention_mask = (1.0 - encoder_extended_attention_mask)
    --     * torch.finfo(self.dtype).min
    encoder_extended_attention_mask = (1.0 - encoder_extended_attention_mask)
        * tide.finfo(self:get_dtype()).min

    return encoder_extended_attention_mask
end

-- @staticmethod
-- def create_extended_attention_mask_for_decoder(input_shape, attention_mask, device=None):
function ModuleUtilsMixin.create_extended_attention_mask_for_decoder(input_shape, attention_mask,
                                                                     device)
    -- if device is not None: warnings.warn("The `device` argument is deprecated ...")
    -- (Python's warnings module: this port takes the device without the FutureWarning)
    if device == nil then
        device = attention_mask.device
    end
    local batch_size, seq_length = input_shape[1], input_shape[2]
    -- seq_ids = torch.arange(seq_length, device=device)
    local seq_ids = tide.arange(seq_length, { device = device })
    -- causal_mask = seq_ids[None, None, :].repeat(batch_size, seq_length, 1)
    --     <= seq_ids[None, :, None]
    local causal_mask = seq_ids[{ newaxis, newaxis, {} }]["repeat"](
        seq_ids[{ newaxis, newaxis, {} }], batch_size, seq_length, 1)
        :le(seq_ids[{ newaxis, {}, newaxis }])
    -- in case past_key_values are used we need to add a prefix ones mask to the causal mask
    -- causal_mask = causal_mask.to(attention_mask.dtype)
    causal_mask = causal_mask:to(attention_mask.dtype)

    -- if causal_mask.shape[1] < attention_mask.shape[1]:
    if causal_mask.shape[2] < attention_mask.shape[2] then
        -- prefix_seq_len = attention_mask.shape[1] - causal_mask.shape[1]
        local prefix_seq_len = attention_mask.shape[2] - causal_mask.shape[2]
        -- causal_mask = torch.cat([torch.ones((batch_size, seq_length, prefix_seq_len),
        --     device=device, dtype=causal_mask.dtype), causal_mask], axis=-1)
        causal_mask = tide.cat({
            tide.ones({ batch_size, seq_length, prefix_seq_len },
                { device = device, dtype = causal_mask.dtype }),
            causal_mask,
        }, -1)
    end

    -- extended_attention_mask = causal_mask[:, None, :, :] * attention_mask[:, None, None, :]
    local extended_attention_mask = causal_mask[{ {}, newaxis, {}, {} }]
        * attention_mask[{ {}, newaxis, newaxis, {} }]
    return extended_attention_mask
end

-- def get_extended_attention_mask(self, attention_mask, input_shape, device=None, dtype=None):
function ModuleUtilsMixin.get_extended_attention_mask(self, attention_mask, input_shape, device,
                                                      dtype)
    if dtype == nil then
        dtype = self:get_dtype()
    end

    -- (the FutureWarning for a device given to an encoder: see above)
    local extended_attention_mask
    -- We can provide a self-attention mask of dimensions [batch_size, from_seq_length,
    -- to_seq_length] ourselves in which case we just need to make it broadcastable to all heads.
    if attention_mask:dim() == 3 then
        -- extended_attention_mask = attention_mask[:, None, :, :]
        extended_attention_mask = attention_mask[{ {}, newaxis, {}, {} }]
    elseif attention_mask:dim() == 2 then
        -- - if the model is a decoder, apply a causal mask in addition to the padding mask
        if self.config.is_decoder then
            extended_attention_mask = ModuleUtilsMixin.create_extended_attention_mask_for_decoder(
                input_shape, attention_mask, device)
        else
            -- extended_attention_mask = attention_mask[:, None, None, :]
            extended_attention_mask = attention_mask[{ {}, newaxis, newaxis, {} }]
        end
    else
        -- raise ValueError(f"Wrong shape for input_ids (shape {input_shape}) or ...")
        error(string.format("Wrong shape for input_ids (shape %s) or attention_mask (shape %s)",
            tostring(tide.Size(input_shape)), tostring(attention_mask.shape)))
    end

    -- extended_attention_mask = extended_attention_mask.to(dtype=dtype)  # fp16 compatibility
    extended_attention_mask = extended_attention_mask:to(dtype)
    -- extended_attention_mask = (1.0 - extended_attention_mask) * torch.finfo(dtype).min
    extended_attention_mask = (1.0 - extended_attention_mask) * tide.finfo(dtype).min
    return extended_attention_mask
end

-- a model with the mixin: class M(nn.Module, ModuleUtilsMixin) holding a config
local MaskModel = nn.Module:extend("MaskModel")
for k, f in pairs(ModuleUtilsMixin) do
    MaskModel[k] = f
end
function MaskModel:init(is_decoder, dtype)
    self.lin = nn.Linear(2, 2):to(dtype)
    self.config = { is_decoder = is_decoder }
end

---------------------------------------------------------------------------------------------
-- 3. checks against the real functions (values from transformers 4.46.3 on PyTorch 1.13)
---------------------------------------------------------------------------------------------
-- each output as {shape, dtype, one letter an entry}: M torch.finfo(dtype).min, 0 zero, 1 one;
-- false for None; a string where PyTorch raised (its message)
local OVERFLOW = "value cannot be converted to type float without overflow"
local WANT = {
    ["make float32 p0 wNone"] = { {2, 1, 5, 5}, "float32",
        "0MMMM00MMM000MM0000M000000MMMM00MMM000MM0000M00000" },
    ["causal4d float32 p0 wNone"] = { {2, 1, 5, 5}, "float32",
        "0MMMM00MMM000MM0000M000000MMMM00MMM000MM0000M00000" },
    ["to4d float32 p0 wNone"] = { {2, 1, 5, 5}, "float32",
        "0MMMM00MMM000MM000MM000MMMMMMMMMMMMMM0MMMM00MMM000" },
    ["unmask float32 p0 wNone"] = { {2, 1, 5, 5}, "float32",
        "0MMMM00MMM000MM000MM000MM0000000000MM0MMMM00MMM000" },
    ["prep2d float32 p0 wNone"] = { {2, 1, 5, 5}, "float32",
        "0MMMM00MMM000MM000MM000MMMMMMMMMMMMMM0MMMM00MMM000" },
    ["prepnone float32 p0 wNone"] = { {2, 1, 5, 5}, "float32",
        "0MMMM00MMM000MM0000M000000MMMM00MMM000MM0000M00000" },
    ["create float32 p0 wNone"] = { {2, 1, 5, 5}, "float32",
        "0MMMM00MMM000MM0000M000000MMMM00MMM000MM0000M00000" },
    ["make float32 p0 w3"] = { {2, 1, 5, 5}, "float32",
        "0MMMM00MMM000MM0000MM00000MMMM00MMM000MM0000MM0000" },
    ["causal4d float32 p0 w3"] = { {2, 1, 5, 5}, "float32",
        "0MMMM00MMM000MM0000MM00000MMMM00MMM000MM0000MM0000" },
    ["to4d float32 p0 w3"] = { {2, 1, 5, 5}, "float32",
        "0MMMM00MMM000MM000MMM00MMMMMMMMMMMMMM0MMMM00MMM000" },
    ["unmask float32 p0 w3"] = { {2, 1, 5, 5}, "float32",
        "0MMMM00MMM000MM000MMM00MM0000000000MM0MMMM00MMM000" },
    ["prep2d float32 p0 w3"] = { {2, 1, 5, 5}, "float32",
        "0MMMM00MMM000MM000MMM00MMMMMMMMMMMMMM0MMMM00MMM000" },
    ["prepnone float32 p0 w3"] = { {2, 1, 5, 5}, "float32",
        "0MMMM00MMM000MM0000MM00000MMMM00MMM000MM0000MM0000" },
    ["create float32 p0 w3"] = { {2, 1, 5, 5}, "float32",
        "0MMMM00MMM000MM0000MM00000MMMM00MMM000MM0000MM0000" },
    ["prep4d float32 p0"] = { {2, 1, 5, 5}, "float32",
        "0MMMM00MMM000MM000MM000MMMMMMMMMMMMMM0MMMM00MMM000" },
    ["make float32 p2 wNone"] = { {2, 1, 5, 7}, "float32",
        "000MMMM0000MMM00000MM000000M0000000000MMMM0000MMM00000MM000000M0000000" },
    ["causal4d float32 p2 wNone"] = { {2, 1, 5, 7}, "float32",
        "000MMMM0000MMM00000MM000000M0000000000MMMM0000MMM00000MM000000M0000000" },
    ["to4d float32 p2 wNone"] = { {2, 1, 5, 7}, "float32",
        "000MMMM0000MMM00000MM00000MM00000MMMM0MMMMMM00MMMMM000MMMM0000MMM00000" },
    ["unmask float32 p2 wNone"] = { {2, 1, 5, 7}, "float32",
        "000MMMM0000MMM00000MM00000MM00000MMMM0MMMMMM00MMMMM000MMMM0000MMM00000" },
    ["prep2d float32 p2 wNone"] = { {2, 1, 5, 7}, "float32",
        "000MMMM0000MMM00000MM00000MM00000MMMM0MMMMMM00MMMMM000MMMM0000MMM00000" },
    ["prepnone float32 p2 wNone"] = { {2, 1, 5, 7}, "float32",
        "000MMMM0000MMM00000MM000000M0000000000MMMM0000MMM00000MM000000M0000000" },
    ["create float32 p2 wNone"] = { {2, 1, 5, 7}, "float32",
        "000MMMM0000MMM00000MM000000M0000000000MMMM0000MMM00000MM000000M0000000" },
    ["make float32 p2 w3"] = { {2, 1, 5, 7}, "float32",
        "000MMMM0000MMMM0000MMMM0000MMMM0000000MMMM0000MMMM0000MMMM0000MMMM0000" },
    ["causal4d float32 p2 w3"] = { {2, 1, 5, 7}, "float32",
        "000MMMM0000MMMM0000MMMM0000MMMM0000000MMMM0000MMMM0000MMMM0000MMMM0000" },
    ["to4d float32 p2 w3"] = { {2, 1, 5, 7}, "float32",
        "000MMMM0000MMMM0000MMMM000MMMMM00MMMM0MMMMMM00MMMMM000MMMM0000MMMM0000" },
    ["unmask float32 p2 w3"] = { {2, 1, 5, 7}, "float32",
        "000MMMM0000MMMM0000MMMM000MMMMM00MMMM0MMMMMM00MMMMM000MMMM0000MMMM0000" },
    ["prep2d float32 p2 w3"] = { {2, 1, 5, 7}, "float32",
        "000MMMM0000MMMM0000MMMM000MMMMM00MMMM0MMMMMM00MMMMM000MMMM0000MMMM0000" },
    ["prepnone float32 p2 w3"] = { {2, 1, 5, 7}, "float32",
        "000MMMM0000MMMM0000MMMM0000MMMM0000000MMMM0000MMMM0000MMMM0000MMMM0000" },
    ["create float32 p2 w3"] = { {2, 1, 5, 7}, "float32",
        "000MMMM0000MMMM0000MMMM0000MMMM0000000MMMM0000MMMM0000MMMM0000MMMM0000" },
    ["prep4d float32 p2"] = { {2, 1, 5, 7}, "float32",
        "000MMMM0000MMM00000MM00000MM00000MMMM0MMMMMM00MMMMM000MMMM0000MMM00000" },
    ["one float32"] = false,
    ["one w3 float32"] = { {2, 1, 1, 3}, "float32", "000000" },
    ["to4d nc float32"] = { {2, 1, 5, 5}, "float32",
        "000MM000MM000MM000MM000MMMM000MM000MM000MM000MM000" },
    ["expand float32"] = { {2, 1, 5, 5}, "float32",
        "000MM000MM000MM000MM000MMMM000MM000MM000MM000MM000" },
    ["expand t3 float32"] = { {2, 1, 3, 5}, "float32", "000MM000MM000MMMM000MM000MM000" },
    ["ext enc float32"] = { {2, 1, 1, 5}, "float32", "000MMMM000" },
    ["ext dec float32"] = { {2, 1, 5, 5}, "float32",
        "0MMMM00MMM000MM000MM000MMMMMMMMMMMMMM0MMMM00MMM000" },
    ["ext dec past float32"] = { {2, 1, 5, 7}, "float32",
        "000MMMM0000MMM00000MM00000MM00000MMMM0MMMMMM00MMMMM000MMMM0000MMM00000" },
    ["ext 3d float32"] = { {2, 1, 5, 5}, "float32",
        "0MMMM00MMM000MM0000M000000MMMM00MMM000MM0000M00000" },
    ["invert float32"] = { {2, 1, 1, 5}, "float32", "000MMMM000" },
    ["invert 3d float32"] = { {2, 1, 5, 5}, "float32",
        "0MMMM00MMM000MM0000M000000MMMM00MMM000MM0000M00000" },
    ["make float64 p0 wNone"] = OVERFLOW,
    ["causal4d float64 p0 wNone"] = OVERFLOW,
    ["to4d float64 p0 wNone"] = OVERFLOW,
    ["unmask float64 p0 wNone"] = OVERFLOW,
    ["prep2d float64 p0 wNone"] = OVERFLOW,
    ["prepnone float64 p0 wNone"] = OVERFLOW,
    ["create float64 p0 wNone"] = OVERFLOW,
    ["make float64 p0 w3"] = OVERFLOW,
    ["causal4d float64 p0 w3"] = OVERFLOW,
    ["to4d float64 p0 w3"] = OVERFLOW,
    ["unmask float64 p0 w3"] = OVERFLOW,
    ["prep2d float64 p0 w3"] = OVERFLOW,
    ["prepnone float64 p0 w3"] = OVERFLOW,
    ["create float64 p0 w3"] = OVERFLOW,
    ["prep4d float64 p0"] = OVERFLOW,
    ["make float64 p2 wNone"] = OVERFLOW,
    ["causal4d float64 p2 wNone"] = OVERFLOW,
    ["to4d float64 p2 wNone"] = OVERFLOW,
    ["unmask float64 p2 wNone"] = OVERFLOW,
    ["prep2d float64 p2 wNone"] = OVERFLOW,
    ["prepnone float64 p2 wNone"] = OVERFLOW,
    ["create float64 p2 wNone"] = OVERFLOW,
    ["make float64 p2 w3"] = OVERFLOW,
    ["causal4d float64 p2 w3"] = OVERFLOW,
    ["to4d float64 p2 w3"] = OVERFLOW,
    ["unmask float64 p2 w3"] = OVERFLOW,
    ["prep2d float64 p2 w3"] = OVERFLOW,
    ["prepnone float64 p2 w3"] = OVERFLOW,
    ["create float64 p2 w3"] = OVERFLOW,
    ["prep4d float64 p2"] = OVERFLOW,
    ["one float64"] = false,
    ["one w3 float64"] = OVERFLOW,
    ["to4d nc float64"] = { {2, 1, 5, 5}, "float64",
        "000MM000MM000MM000MM000MMMM000MM000MM000MM000MM000" },
    ["expand float64"] = { {2, 1, 5, 5}, "float64",
        "000MM000MM000MM000MM000MMMM000MM000MM000MM000MM000" },
    ["expand t3 float64"] = { {2, 1, 3, 5}, "float64", "000MM000MM000MMMM000MM000MM000" },
    ["ext enc float64"] = { {2, 1, 1, 5}, "float64", "000MMMM000" },
    ["ext dec float64"] = { {2, 1, 5, 5}, "float64",
        "0MMMM00MMM000MM000MM000MMMMMMMMMMMMMM0MMMM00MMM000" },
    ["ext dec past float64"] = { {2, 1, 5, 7}, "float64",
        "000MMMM0000MMM00000MM00000MM00000MMMM0MMMMMM00MMMMM000MMMM0000MMM00000" },
    ["ext 3d float64"] = { {2, 1, 5, 5}, "float64",
        "0MMMM00MMM000MM0000M000000MMMM00MMM000MM0000M00000" },
    ["invert float64"] = { {2, 1, 1, 5}, "float64", "000MMMM000" },
    ["invert 3d float64"] = { {2, 1, 5, 5}, "float64",
        "0MMMM00MMM000MM0000M000000MMMM00MMM000MM0000M00000" },
    ["decoder"] = { {2, 1, 5, 5}, "int64", "10000110001110011100111000000000000001000011000111" },
    ["decoder past"] = { {2, 1, 5, 7}, "int64",
        "1110000111100011111001111100111110000100000011000001110000111100011111" },
}
local WANT_IGNORE = {
    ["none p0"] = true,
    ["none p2"] = false,
    ["none q1"] = true,
    ["none w3"] = false,
    ["none w9"] = true,
    ["ones p0"] = true,
    ["pad p0"] = false,
    ["ones q1"] = true,
    ["ones p2"] = false,
    ["4d"] = false,
    ["none train"] = false,
    ["ones w3"] = false,
}

-- the fixed masks: row 1 padded on the right, row 2 on the left; m7 for a past of 2
local m5 = tide.tensor({ { 1, 1, 1, 0, 0 }, { 0, 0, 1, 1, 1 } })
local m7 = tide.tensor({ { 1, 1, 1, 1, 1, 0, 0 }, { 0, 0, 1, 1, 1, 1, 1 } })

-- t's entries as WANT's letters (t's own dtype's finfo.min is M)
local function letters(t, dtype)
    local mn = t:is_floating_point() and tide.finfo(dtype).min or nil
    local s = {}
    for i, v in ipairs(t:double():flatten():tolist()) do
        s[i] = v == mn and "M" or v == 0 and "0" or v == 1 and "1" or v == -math.huge and "I"
            or "?"
    end
    return table.concat(s)
end

local function check(name, got)
    local want = WANT[name]
    assert(type(want) ~= "string", name .. ": PyTorch raised")
    if want == false then
        assert.is_nil(got, name)
        return
    end
    assert.are.same(want[1], { unpack(got:size()) }, name .. " shape")
    assert.are.equal(want[2], got.dtype, name .. " dtype")
    assert.are.equal(want[3], letters(got, got.dtype), name .. " values")
end

describe("ported_scripts157: transformers modeling_attn_mask_utils", function()
    it("_make_causal_mask, to_causal_4d, _create_4d_causal_attention_mask (float32)", function()
        local dt = "float32"
        for _, past in ipairs({ 0, 2 }) do
            for _, sw in ipairs({ false, 3 }) do
                local w = sw or nil
                local k = string.format("%s p%d w%s", dt, past, w or "None")
                check("make " .. k, AttentionMaskConverter._make_causal_mask({ 2, 5 }, dt, "cpu",
                    past, w))
                check("causal4d " .. k, AttentionMaskConverter(true, w):to_causal_4d(2, 5,
                    5 + past, dt))
                check("create " .. k, _create_4d_causal_attention_mask({ 2, 5 }, dt, "cpu",
                    past, w))
            end
        end
        -- one query: no mask without a sliding window
        check("one float32", AttentionMaskConverter(true):to_causal_4d(2, 1, 3, "float32"))
        check("one w3 float32", AttentionMaskConverter(true, 3):to_causal_4d(2, 1, 3, "float32"))
        check("one float64", AttentionMaskConverter(true):to_causal_4d(2, 1, 3, "float64"))
    end)

    it("to_4d and _unmask_unattended with padding left and right (float32)", function()
        local dt = "float32"
        for _, past in ipairs({ 0, 2 }) do
            local m = past == 0 and m5 or m7
            for _, sw in ipairs({ false, 3 }) do
                local w = sw or nil
                local k = string.format("%s p%d w%s", dt, past, w or "None")
                local t4 = AttentionMaskConverter(true, w):to_4d(m, 5, dt, 5 + past)
                check("to4d " .. k, t4)
                check("unmask " .. k, AttentionMaskConverter._unmask_unattended(t4,
                    tide.finfo(dt).min))
            end
        end
    end)

    it("_prepare_4d_causal_attention_mask: a 2D mask, a 4D mask, None (float32)", function()
        local dt = "float32"
        local emb = tide.zeros({ 2, 5, 4 })
        for _, past in ipairs({ 0, 2 }) do
            local m = past == 0 and m5 or m7
            for _, sw in ipairs({ false, 3 }) do
                local w = sw or nil
                local k = string.format("%s p%d w%s", dt, past, w or "None")
                check("prep2d " .. k, _prepare_4d_causal_attention_mask(m, { 2, 5 }, emb, past, w))
                check("prepnone " .. k, _prepare_4d_causal_attention_mask(nil, { 2, 5 }, emb,
                    past, w))
            end
            -- m4 = torch.tril(torch.ones(5, 5 + past), diagonal=past)[None, None]
            --     .expand(2, 1, 5, 5 + past) * m[:, None, None, :]
            local m4 = tide.tril(tide.ones({ 5, 5 + past }), past)[{ newaxis, newaxis }]
                :expand(2, 1, 5, 5 + past) * m[{ {}, newaxis, newaxis, {} }]
            check("prep4d float32 p" .. past, _prepare_4d_causal_attention_mask(m4, { 2, 5 }, emb,
                past))
        end
    end)

    it("_expand_mask, _prepare_4d_attention_mask, non-causal to_4d (float32, float64)", function()
        for _, dt in ipairs({ "float32", "float64" }) do
            check("to4d nc " .. dt, AttentionMaskConverter(false):to_4d(m5, 5, dt))
            check("expand " .. dt, AttentionMaskConverter._expand_mask(m5, dt))
            check("expand t3 " .. dt, _prepare_4d_attention_mask(m5, dt, 3))
        end
    end)

    it("_ignore_causal_mask_sdpa", function()
        local e, e1 = tide.zeros({ 2, 5, 4 }), tide.zeros({ 2, 1, 4 })
        local ones = tide.ones({ 2, 5 }, { dtype = "int64" })
        local ign = AttentionMaskConverter._ignore_causal_mask_sdpa
        local got = {
            ["none p0"] = ign(nil, e, 0), ["none p2"] = ign(nil, e, 2),
            ["none q1"] = ign(nil, e1, 2), ["none w3"] = ign(nil, e, 0, 3),
            ["none w9"] = ign(nil, e, 0, 9), ["ones p0"] = ign(ones, e, 0),
            ["pad p0"] = ign(m5, e, 0), ["ones q1"] = ign(tide.ones({ 2, 3 }), e1, 2),
            ["ones p2"] = ign(tide.ones({ 2, 7 }), e, 2),
            ["4d"] = ign(tide.ones({ 2, 1, 5, 5 }), e, 0),
            ["none train"] = ign(nil, e, 0, 3, true), ["ones w3"] = ign(ones, e, 0, 3),
        }
        assert.are.same(WANT_IGNORE, got)
    end)

    it("raises as transformers does", function()
        assert.has_error(function() AttentionMaskConverter(true, 0) end,
            "Make sure that when passing `sliding_window` that its value is a strictly positive "
            .. "integer, not `0`")
        assert.has_error(function()
            AttentionMaskConverter(false):to_causal_4d(2, 5, 5, "float32")
        end,
            "Please use `to_causal_4d` only if AttentionMaskConverter has `is_causal` set to True.")
        assert.has_error(function() AttentionMaskConverter(true):to_4d(m5, 5, "float32") end,
            "This attention mask converter is causal. Make sure to pass `key_value_length` to "
            .. "correctly create a causal mask.")
        assert.has_error(function() AttentionMaskConverter(false, 3):to_4d(m5, 5, "float32") end,
            "Sliding window is currently only implemented for causal masking")
        assert.has_error(function()
            AttentionMaskConverter._unmask_unattended(m5:bool(), 0)
        end, "AttentionMaskConverter._unmask_unattended expects a float `expanded_mask`, got a "
            .. "BoolTensor.")
        local ok, err = pcall(_prepare_4d_causal_attention_mask, tide.ones({ 2, 1, 5, 6 }),
            { 2, 5 }, tide.zeros({ 2, 5, 4 }), 0)
        assert.is_false(ok)
        assert.matches("Incorrect 4D attention_mask shape: .*; expected: ", err)
    end)

    it("float64 causal masks raise as PyTorch's: finfo(float64).min overflows the float32 mask",
        function()
        assert.has_error(function()
            AttentionMaskConverter._make_causal_mask({ 2, 5 }, "float64", "cpu", 0)
        end, "tide: full: the value -1.7976931348623157e+308 cannot be converted to float32 " ..
            "without overflow (its range is -3.40282347e+38 to 3.40282347e+38); give a value " ..
            "in range or another dtype")
    end)
end)

describe("ported_scripts157: transformers ModuleUtilsMixin", function()
    it("get_extended_attention_mask for an encoder and a decoder, 2D and 3D masks", function()
        local m3 = tide.tril(tide.ones({ 2, 5, 5 }, { dtype = "int64" }))
        for _, dt in ipairs({ "float32", "float64" }) do
            local enc, dec = MaskModel(false, dt), MaskModel(true, dt)
            check("ext enc " .. dt, enc:get_extended_attention_mask(m5, { 2, 5 }))
            check("ext dec " .. dt, dec:get_extended_attention_mask(m5, { 2, 5 }))
            check("ext dec past " .. dt, dec:get_extended_attention_mask(m7, { 2, 5 }))
            check("ext 3d " .. dt, enc:get_extended_attention_mask(m3, { 2, 5 }))
            check("invert " .. dt, enc:invert_attention_mask(m5))
            check("invert 3d " .. dt, enc:invert_attention_mask(m3))
        end
        assert.has_error(function()
            MaskModel(false, "float32"):get_extended_attention_mask(tide.ones({ 5 }), { 5 })
        end, "Wrong shape for input_ids (shape tide.Size({5})) or attention_mask "
            .. "(shape tide.Size({5}))")
    end)

    it("create_extended_attention_mask_for_decoder, with a past prefix", function()
        check("decoder", ModuleUtilsMixin.create_extended_attention_mask_for_decoder({ 2, 5 }, m5))
        check("decoder past", ModuleUtilsMixin.create_extended_attention_mask_for_decoder({ 2, 5 },
            m7))
    end)
end)
