-- nn.Transformer([{d_model = 512, nhead = 8, num_encoder_layers = 6, num_decoder_layers = 6,
-- dim_feedforward = 2048, dropout = 0.1, activation = "relu", custom_encoder =, custom_decoder =,
-- layer_norm_eps = 1e-5, batch_first = false, norm_first = false, device =, dtype =}]), PyTorch
-- 1.13's (device and dtype: the built layers' and norms', not the custom modules'): an encoder
-- (TransformerEncoder of num_encoder_layers TransformerEncoderLayers, then a LayerNorm) and a
-- decoder (TransformerDecoder, the same way), or the custom modules given; every parameter of
-- more than one dim then drawn by xavier_uniform_ (PyTorch's _reset_parameters). state_dict keys
-- encoder.layers.1..., encoder.norm, decoder.layers.1..., decoder.norm (PyTorch's with tide's
-- 1-based lists: nn.utils.state_dict_from_torch converts).
-- y = model(src, tgt[, {src_mask =, tgt_mask =, memory_mask =, src_key_padding_mask =,
-- tgt_key_padding_mask =, memory_key_padding_mask =, src_is_causal =, tgt_is_causal =,
-- memory_is_causal =}]); Transformer.generate_square_subsequent_mask(sz[, {device =, dtype =}]).
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local S = require("tide.nn._signature")

local TF = Module:extend("Transformer")
local WHO = "Transformer"
local KNOWN = { "d_model", "nhead", "num_encoder_layers", "num_decoder_layers",
    "dim_feedforward", "dropout", "activation", "custom_encoder", "custom_decoder",
    "layer_norm_eps", "batch_first", "norm_first", "device", "dtype" }
local CALL = { "src_mask", "tgt_mask", "memory_mask", "src_key_padding_mask",
    "tgt_key_padding_mask", "memory_key_padding_mask", "src_is_causal", "tgt_is_causal",
    "memory_is_causal" }

function TF:init(opts)
    opts = opts or {}
    if type(opts) ~= "table" or Module.is_module(opts) then
        raise("tide: " .. WHO .. ": expected an options table ({d_model = 512, nhead = 8, ...})," ..
            " got " .. type(opts))
    end
    core._check_options(opts, WHO, KNOWN)
    local d_model = I.check_int(opts.d_model or 512, "d_model", WHO)
    local nhead = I.check_int(opts.nhead or 8, "nhead", WHO)
    S.check_factory(WHO, opts.device, opts.dtype)
    local ne = I.check_int(opts.num_encoder_layers or 6, "num_encoder_layers", WHO)
    local nd = I.check_int(opts.num_decoder_layers or 6, "num_decoder_layers", WHO)
    for _, k in ipairs({ "custom_encoder", "custom_decoder" }) do
        if opts[k] ~= nil and not Module.is_module(opts[k]) then
            raise(string.format("tide: %s: expected %s to be a Module, got %s", WHO, k,
                type(opts[k])))
        end
    end
    local nn = require("tide.nn")
    local layer_opts = { dim_feedforward = opts.dim_feedforward, dropout = opts.dropout,
        activation = opts.activation, layer_norm_eps = opts.layer_norm_eps,
        batch_first = opts.batch_first, norm_first = opts.norm_first, device = opts.device,
        dtype = opts.dtype }
    local eps = opts.layer_norm_eps or 1e-5
    -- the custom module, else n copies of a Layer in a Stack ending in a LayerNorm
    local function part(custom, Layer, Stack, n)
        if custom then
            return custom
        end
        return Stack(Layer(d_model, nhead, layer_opts), n,
            { norm = nn.LayerNorm(d_model, { eps = eps, device = opts.device,
                dtype = opts.dtype }) })
    end
    self.encoder = part(opts.custom_encoder, nn.TransformerEncoderLayer, nn.TransformerEncoder, ne)
    self.decoder = part(opts.custom_decoder, nn.TransformerDecoderLayer, nn.TransformerDecoder, nd)
    self:_reset_parameters() -- (a subclass's override runs, as PyTorch's)
    self.d_model, self.nhead, self.batch_first = d_model, nhead, opts.batch_first == true
end

local function shape(t)
    return I.shape_str(t.shape)
end

-- forward(src, tgt[, src_mask, tgt_mask, memory_mask, src_key_padding_mask, tgt_key_padding_mask,
-- memory_key_padding_mask, src_is_causal, tgt_is_causal, memory_is_causal]): PyTorch's
-- positional order, the last of them (or all) in a table by name
function TF:forward(src, tgt, ...)
    I.check_tensor(src, WHO)
    if not autograd.is_tensor(tgt) then
        raise("tide: " .. WHO .. ": expected tgt to be a tensor, got " .. type(tgt))
    end
    local opts = S.arguments(WHO, CALL, 2, ...)
    core._check_options(opts, WHO, CALL)
    local bdim = self.batch_first and 1 or 2
    if src:dim() == 3 and (tgt:dim() ~= 3 or src:size(bdim) ~= tgt:size(bdim)) then
        raise(string.format("tide: %s: the batch number of src and tgt must be equal, got " ..
            "src %s and tgt %s%s", WHO, shape(src), shape(tgt),
            self.batch_first and " (batch_first: [N, S, E] and [N, T, E])" or
            " ([S, N, E] and [T, N, E]; batch_first = true takes [N, S, E])"))
    end
    if src:size(-1) ~= self.d_model or tgt:size(-1) ~= self.d_model then
        raise(string.format("tide: %s: the feature number of src and tgt must be equal to " ..
            "d_model %d, got src %s and tgt %s", WHO, self.d_model, shape(src), shape(tgt)))
    end
    -- only the options given, so a custom encoder or decoder sees what PyTorch would pass it
    local eo, any_e = {}, false
    for k, v in pairs({ mask = opts.src_mask, src_key_padding_mask = opts.src_key_padding_mask,
        is_causal = opts.src_is_causal }) do
        eo[k], any_e = v, true
    end
    local memory = any_e and self.encoder(src, eo) or self.encoder(src)
    local dec, any_d = {}, false
    for _, k in ipairs({ "tgt_mask", "memory_mask", "tgt_key_padding_mask",
        "memory_key_padding_mask", "tgt_is_causal", "memory_is_causal" }) do
        if opts[k] ~= nil then
            dec[k], any_d = opts[k], true
        end
    end
    if any_d then
        return self.decoder(tgt, memory, dec)
    end
    return self.decoder(tgt, memory)
end

-- generate_square_subsequent_mask(sz[, {device =, dtype = "float32"}]): the float causal mask
-- [sz, sz], -inf above the diagonal and 0 elsewhere (a query sees itself and earlier keys);
-- also callable on a model, model:generate_square_subsequent_mask(sz)
function TF.generate_square_subsequent_mask(sz, opts, ...)
    if Module.is_module(sz) then -- called with ':'
        return TF.generate_square_subsequent_mask(opts, ...)
    end
    local who = "generate_square_subsequent_mask"
    I.check_int(sz, "sz", who, 0)
    opts = opts or {}
    if type(opts) ~= "table" then
        -- PyTorch's second positional argument is the device
        opts = { device = opts }
    end
    core._check_options(opts, who, { "device", "dtype" })
    return core.full({ sz, sz }, -math.huge, { device = opts.device, dtype = opts.dtype or
        core.get_default_dtype() }):triu(1)
end

S.define(TF, { names = KNOWN })

-- m:_reset_parameters(): PyTorch's, every parameter of 2 or more dims drawn again by
-- xavier_uniform_ (the constructor calls it)
function TF:_reset_parameters()
    local init = require("tide.nn.initializers")
    for _, p in ipairs(self:parameters()) do
        if p:dim() > 1 then
            init.xavier_uniform_(p)
        end
    end
end

return TF
