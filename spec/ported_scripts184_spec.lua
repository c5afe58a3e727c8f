-- ported_scripts184_spec.lua — huggingface/transformers v4.46.3
-- src/transformers/models/wav2vec2/modeling_wav2vec2.py, the pretraining pieces:
-- _compute_mask_indices (numpy; its np.random.rand / np.random.choice draws replaced by fixed
-- values: epsilon 0.3 and the spans {1, 5, 9, 12} and {0, 4, 7}), _sample_negative_indices (its
-- np.random.randint replaced by (3 i + 5 j + 1) % high), Wav2Vec2GroupNormConvLayer /
-- LayerNormConvLayer / NoLayerNormConvLayer, Wav2Vec2FeatureEncoder,
-- _get_feat_extract_output_lengths, Wav2Vec2FeatureProjection, Wav2Vec2PositionalConvEmbedding
-- (weight_norm over dim=2) with Wav2Vec2SamePadLayer, Wav2Vec2GumbelVectorQuantizer (its
-- gumbel_softmax given fixed noise) with _compute_perplexity, compute_contrastive_logits and
-- Wav2Vec2ForPreTraining's loss (contrastive + diversity) over an encoder of no layers, ported
-- line for line at tiny sizes. The Python line stands above each Lua line that differs from it.
-- Reference values: PyTorch 1.13 with transformers 4.46.3, the real modules from a tiny
-- Wav2Vec2Config, every parameter set from the same formula on both sides.
-- The numpy parts keep numpy's 0-based indices in Lua tables; tensors' dims are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list
local close = ported.close

-- the tiny Wav2Vec2Config
local config = {
    conv_dim = { 8, 8 }, conv_kernel = { 4, 3 }, conv_stride = { 2, 2 }, conv_bias = false,
    num_feat_extract_layers = 2, feat_extract_norm = "group", feat_extract_activation = "gelu",
    hidden_size = 16, layer_norm_eps = 1e-5, feat_proj_dropout = 0.0,
    num_conv_pos_embeddings = 4, num_conv_pos_embedding_groups = 2,
    num_codevector_groups = 2, num_codevectors_per_group = 4, codevector_dim = 8,
    proj_codevector_dim = 8, num_negatives = 3, contrastive_logits_temperature = 0.1,
    diversity_loss_weight = 0.1,
}
local function copy_config(over)
    local c = {}
    for k, v in pairs(config) do c[k] = v end
    for k, v in pairs(over) do c[k] = v end
    return c
end

-- ACT2FN["gelu"]
local ACT2FN = { gelu = F.gelu }

---------------------------------------------------------------------------------------------
-- 1. the numpy helpers
---------------------------------------------------------------------------------------------
-- np.random.rand(1).item() and np.random.choice(...): the fixed draws
local EPSILON = 0.3
local CHOICES = { { 1, 5, 9, 12 }, { 0, 4, 7 } }

-- def _compute_mask_indices(shape, mask_prob, mask_length, attention_mask=None, min_masks=0):
local function _compute_mask_indices(shape, mask_prob, mask_length, attention_mask, min_masks,
                                     choices)
    min_masks = min_masks or 0
    local batch_size, sequence_length = shape[1], shape[2]
    if mask_length < 1 then
        error("`mask_length` has to be bigger than 0.")
    end
    if mask_length > sequence_length then
        error("`mask_length` has to be smaller than `sequence_length`")
    end
    -- epsilon = np.random.rand(1).item()
    local epsilon = EPSILON
    local function compute_num_masked_span(input_length)
        -- num_masked_span = int(mask_prob * input_length / mask_length + epsilon)
        local num_masked_span = math.floor(mask_prob * input_length / mask_length + epsilon)
        num_masked_span = math.max(num_masked_span, min_masks)
        if num_masked_span * mask_length > sequence_length then
            num_masked_span = math.floor(sequence_length / mask_length)
        end
        if input_length - (mask_length - 1) < num_masked_span then
            num_masked_span = math.max(input_length - (mask_length - 1), 0)
        end
        return num_masked_span
    end
    -- input_lengths = (attention_mask.sum(-1).detach().tolist() if attention_mask is not None
    --                  else [sequence_length for _ in range(batch_size)])
    local input_lengths = {}
    if attention_mask ~= nil then
        input_lengths = attention_mask:sum(-1):tolist()
    else
        for b = 1, batch_size do input_lengths[b] = sequence_length end
    end
    -- spec_aug_mask = np.zeros((batch_size, sequence_length), dtype=bool)
    local spec_aug_mask = {}
    for b = 1, batch_size do
        spec_aug_mask[b] = {}
        for t = 1, sequence_length do spec_aug_mask[b][t] = false end
    end
    local spec_aug_mask_idxs = {}
    local max_num_masked_span = compute_num_masked_span(sequence_length)
    if max_num_masked_span == 0 then
        return spec_aug_mask
    end
    for b, input_length in ipairs(input_lengths) do
        local num_masked_span = compute_num_masked_span(input_length)
        -- spec_aug_mask_idx = np.random.choice(np.arange(input_length - (mask_length - 1)),
        --                                      num_masked_span, replace=False)
        local spec_aug_mask_idx = {}
        for i = 1, num_masked_span do spec_aug_mask_idx[i] = choices[b][i] end
        local dummy_mask_idx
        if #spec_aug_mask_idx == 0 then
            dummy_mask_idx = sequence_length - 1
        else
            dummy_mask_idx = spec_aug_mask_idx[1]
        end
        -- spec_aug_mask_idx = np.concatenate([spec_aug_mask_idx,
        --     np.ones(max_num_masked_span - num_masked_span, dtype=np.int32) * dummy_mask_idx])
        for _ = 1, max_num_masked_span - num_masked_span do
            spec_aug_mask_idx[#spec_aug_mask_idx + 1] = dummy_mask_idx
        end
        spec_aug_mask_idxs[#spec_aug_mask_idxs + 1] = spec_aug_mask_idx
    end
    -- the broadcast of the starts over the spans, the offsets np.arange(mask_length), the clip
    -- at sequence_length - 1 and np.put_along_axis(spec_aug_mask, spec_aug_mask_idxs, 1, -1)
    for b = 1, batch_size do
        for s = 1, max_num_masked_span do
            for offset = 0, mask_length - 1 do
                local idx = math.min(spec_aug_mask_idxs[b][s] + offset, sequence_length - 1)
                spec_aug_mask[b][idx + 1] = true
            end
        end
    end
    return spec_aug_mask
end

-- np.random.randint(0, high, size=(high + 1, num_negatives)): the fixed draw
local function randint(high, rows, cols)
    local r = {}
    for i = 0, rows - 1 do
        r[i] = {}
        for j = 0, cols - 1 do r[i][j] = (3 * i + 5 * j + 1) % high end
    end
    return r
end

-- def _sample_negative_indices(features_shape, num_negatives, mask_time_indices=None):
local function _sample_negative_indices(features_shape, num_negatives, mask_time_indices)
    local batch_size, sequence_length = features_shape[1], features_shape[2]
    -- sampled_negative_indices = np.zeros(shape=(batch_size, sequence_length, num_negatives))
    local sampled_negative_indices = {}
    for b = 1, batch_size do
        sampled_negative_indices[b] = {}
        for t = 1, sequence_length do
            sampled_negative_indices[b][t] = {}
            for k = 1, num_negatives do sampled_negative_indices[b][t][k] = 0 end
        end
    end
    -- for batch_idx in range(batch_size):
    for batch_idx = 0, batch_size - 1 do
        local row = mask_time_indices[batch_idx + 1]
        -- mapped_masked_indices = sequence_length_range[mask_time_indices[batch_idx]]
        local mapped_masked_indices, count = {}, 0
        for t = 0, sequence_length - 1 do
            if row[t + 1] then
                mapped_masked_indices[count] = t
                count = count + 1
            end
        end
        -- high = mask_time_indices[batch_idx].sum() - 1
        local high = count - 1
        -- sampled_indices = np.random.randint(0, high, size=(high + 1, num_negatives))
        local sampled_indices = randint(high, high + 1, num_negatives)
        -- sampled_indices[sampled_indices >= feature_indices] += 1
        for i = 0, high do
            for j = 0, num_negatives - 1 do
                if sampled_indices[i][j] >= i then
                    sampled_indices[i][j] = sampled_indices[i][j] + 1
                end
            end
        end
        -- sampled_negative_indices[batch_idx][mask_time_indices[batch_idx]] =
        --     mapped_masked_indices[sampled_indices]
        local i = 0
        for t = 1, sequence_length do
            if row[t] then
                for j = 0, num_negatives - 1 do
                    sampled_negative_indices[batch_idx + 1][t][j + 1] =
                        mapped_masked_indices[sampled_indices[i][j]]
                end
                i = i + 1
            end
        end
        -- sampled_negative_indices[batch_idx] += batch_idx * sequence_length
        for t = 1, sequence_length do
            for k = 1, num_negatives do
                local v = sampled_negative_indices[batch_idx + 1][t][k]
                sampled_negative_indices[batch_idx + 1][t][k] = v + batch_idx * sequence_length
            end
        end
    end
    return sampled_negative_indices
end

---------------------------------------------------------------------------------------------
-- 2. the modules
---------------------------------------------------------------------------------------------
-- class Wav2Vec2NoLayerNormConvLayer(nn.Module):
local NoLayerNormConvLayer = nn.Module:extend("Wav2Vec2NoLayerNormConvLayer")
function NoLayerNormConvLayer:init(cfg, layer_id)
    -- self.in_conv_dim = config.conv_dim[layer_id - 1] if layer_id > 0 else 1
    self.in_conv_dim = layer_id > 0 and cfg.conv_dim[layer_id] or 1
    -- self.out_conv_dim = config.conv_dim[layer_id]
    self.out_conv_dim = cfg.conv_dim[layer_id + 1]
    self.conv = nn.Conv1d(self.in_conv_dim, self.out_conv_dim, cfg.conv_kernel[layer_id + 1],
        { stride = cfg.conv_stride[layer_id + 1], bias = cfg.conv_bias })
    self.activation = ACT2FN[cfg.feat_extract_activation]
end
function NoLayerNormConvLayer:forward(hidden_states)
    hidden_states = self.conv(hidden_states)
    return self.activation(hidden_states)
end

-- class Wav2Vec2LayerNormConvLayer(nn.Module):
local LayerNormConvLayer = nn.Module:extend("Wav2Vec2LayerNormConvLayer")
function LayerNormConvLayer:init(cfg, layer_id)
    NoLayerNormConvLayer.init(self, cfg, layer_id)
    -- self.layer_norm = nn.LayerNorm(self.out_conv_dim, elementwise_affine=True)
    self.layer_norm = nn.LayerNorm(self.out_conv_dim, { elementwise_affine = true })
end
function LayerNormConvLayer:forward(hidden_states)
    hidden_states = self.conv(hidden_states)
    -- hidden_states = hidden_states.transpose(-2, -1)
    hidden_states = hidden_states:transpose(-2, -1)
    hidden_states = self.layer_norm(hidden_states)
    hidden_states = hidden_states:transpose(-2, -1)
    return self.activation(hidden_states)
end

-- class Wav2Vec2GroupNormConvLayer(nn.Module):
local GroupNormConvLayer = nn.Module:extend("Wav2Vec2GroupNormConvLayer")
function GroupNormConvLayer:init(cfg, layer_id)
    NoLayerNormConvLayer.init(self, cfg, layer_id)
    -- self.layer_norm = nn.GroupNorm(num_groups=self.out_conv_dim,
    --     num_channels=self.out_conv_dim, affine=True)
    self.layer_norm = nn.GroupNorm(self.out_conv_dim, self.out_conv_dim, { affine = true })
end
function GroupNormConvLayer:forward(hidden_states)
    hidden_states = self.conv(hidden_states)
    hidden_states = self.layer_norm(hidden_states)
    return self.activation(hidden_states)
end

-- class Wav2Vec2FeatureEncoder(nn.Module):
local FeatureEncoder = nn.Module:extend("Wav2Vec2FeatureEncoder")
function FeatureEncoder:init(cfg)
    local conv_layers = {}
    if cfg.feat_extract_norm == "group" then
        -- [Wav2Vec2GroupNormConvLayer(config, layer_id=0)] + [Wav2Vec2NoLayerNormConvLayer(
        --     config, layer_id=i + 1) for i in range(config.num_feat_extract_layers - 1)]
        conv_layers[1] = GroupNormConvLayer(cfg, 0)
        for i = 0, cfg.num_feat_extract_layers - 2 do
            conv_layers[#conv_layers + 1] = NoLayerNormConvLayer(cfg, i + 1)
        end
    elseif cfg.feat_extract_norm == "layer" then
        for i = 0, cfg.num_feat_extract_layers - 1 do
            conv_layers[#conv_layers + 1] = LayerNormConvLayer(cfg, i)
        end
    else
        error("`config.feat_extract_norm` is " .. tostring(cfg.feat_extract_norm)
            .. ", but has to be one of ['group', 'layer']")
    end
    self.conv_layers = nn.ModuleList(conv_layers)
    self._requires_grad = true
end
function FeatureEncoder:forward(input_values)
    -- hidden_states = input_values[:, None]
    local hidden_states = input_values:unsqueeze(2)
    if self._requires_grad and self.training then
        -- hidden_states.requires_grad = True
        hidden_states:requires_grad_(true)
    end
    for _, conv_layer in ipairs(self.conv_layers) do
        hidden_states = conv_layer(hidden_states)
    end
    return hidden_states
end

-- _get_feat_extract_output_lengths(self, input_lengths, add_adapter=None) (no adapter)
local function _get_feat_extract_output_lengths(cfg, input_lengths)
    local function _conv_out_length(input_length, kernel_size, stride)
        -- return torch.div(input_length - kernel_size, stride, rounding_mode="floor") + 1
        return tide.div(input_length - kernel_size, stride, { rounding_mode = "floor" }) + 1
    end
    -- for kernel_size, stride in zip(self.config.conv_kernel, self.config.conv_stride):
    for i = 1, #cfg.conv_kernel do
        input_lengths = _conv_out_length(input_lengths, cfg.conv_kernel[i], cfg.conv_stride[i])
    end
    return input_lengths
end

-- class Wav2Vec2FeatureProjection(nn.Module):
local FeatureProjection = nn.Module:extend("Wav2Vec2FeatureProjection")
function FeatureProjection:init(cfg)
    -- self.layer_norm = nn.LayerNorm(config.conv_dim[-1], eps=config.layer_norm_eps)
    self.layer_norm = nn.LayerNorm(cfg.conv_dim[#cfg.conv_dim], { eps = cfg.layer_norm_eps })
    self.projection = nn.Linear(cfg.conv_dim[#cfg.conv_dim], cfg.hidden_size)
    self.dropout = nn.Dropout(cfg.feat_proj_dropout)
end
function FeatureProjection:forward(hidden_states)
    local norm_hidden_states = self.layer_norm(hidden_states)
    hidden_states = self.projection(norm_hidden_states)
    hidden_states = self.dropout(hidden_states)
    return hidden_states, norm_hidden_states
end

-- class Wav2Vec2SamePadLayer(nn.Module):
local SamePadLayer = nn.Module:extend("Wav2Vec2SamePadLayer")
function SamePadLayer:init(num_conv_pos_embeddings)
    self.num_pad_remove = num_conv_pos_embeddings % 2 == 0 and 1 or 0
end
function SamePadLayer:forward(hidden_states)
    if self.num_pad_remove > 0 then
        -- hidden_states = hidden_states[:, :, : -self.num_pad_remove]
        hidden_states = hidden_states:narrow(3, 1, hidden_states:size(3) - self.num_pad_remove)
    end
    return hidden_states
end

-- class Wav2Vec2PositionalConvEmbedding(nn.Module):
local PositionalConvEmbedding = nn.Module:extend("Wav2Vec2PositionalConvEmbedding")
function PositionalConvEmbedding:init(cfg)
    self.conv = nn.Conv1d(cfg.hidden_size, cfg.hidden_size, cfg.num_conv_pos_embeddings,
        { padding = math.floor(cfg.num_conv_pos_embeddings / 2),
          groups = cfg.num_conv_pos_embedding_groups })
    -- self.conv = weight_norm(self.conv, name="weight", dim=2) (PyTorch 1.13: nn.utils's)
    self.conv = nn.utils.weight_norm(self.conv, { name = "weight", dim = 3 })
    self.padding = SamePadLayer(cfg.num_conv_pos_embeddings)
    self.activation = ACT2FN[cfg.feat_extract_activation]
end
function PositionalConvEmbedding:forward(hidden_states)
    -- hidden_states = hidden_states.transpose(1, 2)
    hidden_states = hidden_states:transpose(2, 3)
    hidden_states = self.conv(hidden_states)
    hidden_states = self.padding(hidden_states)
    hidden_states = self.activation(hidden_states)
    return hidden_states:transpose(2, 3)
end

-- nn.functional.gumbel_softmax(logits, tau, hard=True) with the Gumbel noise given: PyTorch's
-- body (torch/nn/functional.py) after its draw
local GUMBELS
local function gumbel_softmax(logits, tau)
    -- gumbels = (logits + gumbels) / tau
    local gumbels = (logits + GUMBELS:view(logits.shape)) / tau
    local y_soft = gumbels:softmax(-1)
    -- index = y_soft.max(dim, keepdim=True)[1]
    local index = y_soft:argmax(-1, true)
    -- y_hard = torch.zeros_like(logits).scatter_(dim, index, 1.0)
    local y_hard = tide.zeros_like(logits):scatter_(-1, index, 1.0)
    -- ret = y_hard - y_soft.detach() + y_soft
    return y_hard - y_soft:detach() + y_soft
end

-- class Wav2Vec2GumbelVectorQuantizer(nn.Module):
local GumbelVectorQuantizer = nn.Module:extend("Wav2Vec2GumbelVectorQuantizer")
function GumbelVectorQuantizer:init(cfg)
    self.num_groups = cfg.num_codevector_groups
    self.num_vars = cfg.num_codevectors_per_group
    if cfg.codevector_dim % self.num_groups ~= 0 then
        error("`config.codevector_dim` must be divisible by `config.num_codevector_groups`")
    end
    -- self.codevectors = nn.Parameter(torch.FloatTensor(1, self.num_groups * self.num_vars,
    --     config.codevector_dim // self.num_groups))
    self.codevectors = nn.Parameter(tide.empty(1, self.num_groups * self.num_vars,
        math.floor(cfg.codevector_dim / self.num_groups)))
    self.weight_proj = nn.Linear(cfg.conv_dim[#cfg.conv_dim], self.num_groups * self.num_vars)
    self.temperature = 2
end
-- @staticmethod def _compute_perplexity(probs, mask=None):
function GumbelVectorQuantizer._compute_perplexity(probs, mask)
    local marginal_probs
    if mask ~= nil then
        -- mask_extended = mask.flatten()[:, None, None].expand(probs.shape)
        local mask_extended = mask:flatten():view(-1, 1, 1):expand(probs.shape)
        -- probs = torch.where(mask_extended, probs, torch.zeros_like(probs))
        probs = tide.where(mask_extended, probs, tide.zeros_like(probs))
        -- marginal_probs = probs.sum(dim=0) / mask.sum()
        marginal_probs = probs:sum(1) / mask:sum()
    else
        marginal_probs = probs:mean(1)
    end
    -- torch.exp(-torch.sum(marginal_probs * torch.log(marginal_probs + 1e-7), dim=-1)).sum()
    return tide.exp(-tide.sum(marginal_probs * tide.log(marginal_probs + 1e-7), -1)):sum()
end
function GumbelVectorQuantizer:forward(hidden_states, mask_time_indices)
    local batch_size, sequence_length = hidden_states:size(1), hidden_states:size(2)
    hidden_states = self.weight_proj(hidden_states)
    hidden_states = hidden_states:view(batch_size * sequence_length * self.num_groups, -1)
    local codevector_probs, perplexity
    if self.training then
        -- codevector_probs = nn.functional.gumbel_softmax(hidden_states.float(),
        --     tau=self.temperature, hard=True).type_as(hidden_states)
        codevector_probs = gumbel_softmax(hidden_states:float(), self.temperature)
            :type_as(hidden_states)
        -- codevector_soft_dist = torch.softmax(hidden_states.view(batch_size * sequence_length,
        --     self.num_groups, -1).float(), dim=-1)
        local codevector_soft_dist = tide.softmax(hidden_states:view(
            batch_size * sequence_length, self.num_groups, -1):float(), -1)
        perplexity = self._compute_perplexity(codevector_soft_dist, mask_time_indices)
    else
        local codevector_idx = hidden_states:argmax(-1)
        -- codevector_probs = hidden_states.new_zeros(hidden_states.shape).scatter_(
        --     -1, codevector_idx.view(-1, 1), 1.0)
        codevector_probs = hidden_states:new_zeros(hidden_states.shape):scatter_(
            -1, codevector_idx:view(-1, 1), 1.0)
        codevector_probs = codevector_probs:view(batch_size * sequence_length, self.num_groups,
            -1)
        perplexity = self._compute_perplexity(codevector_probs, mask_time_indices)
    end
    codevector_probs = codevector_probs:view(batch_size * sequence_length, -1)
    -- codevectors_per_group = codevector_probs.unsqueeze(-1) * self.codevectors
    local codevectors_per_group = codevector_probs:unsqueeze(-1) * self.codevectors
    local codevectors = codevectors_per_group:view(batch_size * sequence_length, self.num_groups,
        self.num_vars, -1)
    -- codevectors = codevectors.sum(-2).view(batch_size, sequence_length, -1)
    codevectors = codevectors:sum(-2):view(batch_size, sequence_length, -1)
    return codevectors, perplexity
end

-- Wav2Vec2ForPreTraining.compute_contrastive_logits (a staticmethod)
local function compute_contrastive_logits(target_features, negative_features, predicted_features,
                                          temperature)
    temperature = temperature or 0.1
    -- target_features = torch.cat([target_features, negative_features], dim=0)
    target_features = tide.cat({ target_features, negative_features }, 1)
    -- logits = torch.cosine_similarity(predicted_features.float(), target_features.float(),
    --     dim=-1).type_as(target_features)
    local logits = F.cosine_similarity(predicted_features:float(), target_features:float(),
        { dim = -1 }):type_as(target_features)
    return logits / temperature
end

-- Wav2Vec2Model with num_hidden_layers=0: the encoder is pos_conv_embed and layer_norm
local Encoder = nn.Module:extend("Wav2Vec2Encoder")
function Encoder:init(cfg)
    self.pos_conv_embed = PositionalConvEmbedding(cfg)
    self.layer_norm = nn.LayerNorm(cfg.hidden_size, { eps = cfg.layer_norm_eps })
end
function Encoder:forward(hidden_states)
    local position_embeddings = self.pos_conv_embed(hidden_states)
    hidden_states = hidden_states + position_embeddings
    return self.layer_norm(hidden_states)
end

local Model = nn.Module:extend("Wav2Vec2Model")
function Model:init(cfg)
    self.feature_extractor = FeatureEncoder(cfg)
    self.feature_projection = FeatureProjection(cfg)
    -- self.masked_spec_embed = nn.Parameter(torch.Tensor(config.hidden_size).uniform_())
    self.masked_spec_embed = nn.Parameter(tide.empty(cfg.hidden_size):uniform_())
    self.encoder = Encoder(cfg)
end
function Model:forward(input_values, mask_time_indices)
    local extract_features = self.feature_extractor(input_values)
    extract_features = extract_features:transpose(2, 3)
    local hidden_states
    hidden_states, extract_features = self.feature_projection(extract_features)
    -- hidden_states[mask_time_indices] = self.masked_spec_embed.to(hidden_states.dtype)
    hidden_states = tide.where(mask_time_indices:unsqueeze(-1), self.masked_spec_embed,
        hidden_states)
    return self.encoder(hidden_states), extract_features
end

-- class Wav2Vec2ForPreTraining(Wav2Vec2PreTrainedModel):
local ForPreTraining = nn.Module:extend("Wav2Vec2ForPreTraining")
function ForPreTraining:init(cfg)
    self.config = cfg
    self.wav2vec2 = Model(cfg)
    self.quantizer = GumbelVectorQuantizer(cfg)
    self.project_hid = nn.Linear(cfg.hidden_size, cfg.proj_codevector_dim)
    self.project_q = nn.Linear(cfg.codevector_dim, cfg.proj_codevector_dim)
end
function ForPreTraining:forward(input_values, mask_time_indices, sampled_negative_indices)
    local hidden, extract_features = self.wav2vec2(input_values, mask_time_indices)
    local transformer_features = self.project_hid(hidden)
    local quantized_features, codevector_perplexity = self.quantizer(extract_features,
        mask_time_indices)
    quantized_features = self.project_q(quantized_features)
    local batch_size, sequence_length = quantized_features:size(1), quantized_features:size(2)
    local hidden_size = quantized_features:size(3)
    -- negative_quantized_features = quantized_features.view(-1, hidden_size)[
    --     sampled_negative_indices.long().view(-1)]
    local negative_quantized_features = quantized_features:view(-1, hidden_size)
        :index_select(1, sampled_negative_indices:long():view(-1))
    -- negative_quantized_features.view(batch_size, sequence_length, -1, hidden_size)
    --     .permute(2, 0, 1, 3)
    negative_quantized_features = negative_quantized_features:view(batch_size, sequence_length,
        -1, hidden_size):permute(3, 1, 2, 4)
    -- logits = self.compute_contrastive_logits(quantized_features[None, :], ...)
    local logits = compute_contrastive_logits(quantized_features:unsqueeze(1),
        negative_quantized_features, transformer_features,
        self.config.contrastive_logits_temperature)
    -- neg_is_pos = (quantized_features == negative_quantized_features).all(-1)
    local neg_is_pos = quantized_features:eq(negative_quantized_features):all(-1)
    if neg_is_pos:any():item() then
        -- logits[1:][neg_is_pos] = float("-inf")
        logits[{ { 2, -1 } }][neg_is_pos] = -math.huge
    end
    -- logits = logits.transpose(0, 2).reshape(-1, logits.size(0))
    logits = logits:transpose(1, 3):reshape(-1, logits:size(1))
    -- target = ((1 - mask_time_indices.long()) * -100).transpose(0, 1).flatten()
    -- (class 0, the positive, is tide's class 1: + mask)
    local m = mask_time_indices:long()
    local target = ((1 - m) * -100 + m):transpose(1, 2):flatten()
    -- nn.functional.cross_entropy(logits.float(), target, reduction="sum")
    local contrastive_loss = F.cross_entropy(logits:float(), target, { reduction = "sum" })
    local num_codevectors = self.config.num_codevectors_per_group
        * self.config.num_codevector_groups
    -- diversity_loss = ((num_codevectors - codevector_perplexity) / num_codevectors)
    --     * mask_time_indices.sum()
    local diversity_loss = ((num_codevectors - codevector_perplexity) / num_codevectors)
        * mask_time_indices:sum()
    local loss = contrastive_loss + self.config.diversity_loss_weight * diversity_loss
    return loss, contrastive_loss, diversity_loss, codevector_perplexity
end

---------------------------------------------------------------------------------------------
-- 3. the checks
---------------------------------------------------------------------------------------------
-- every parameter p, k-th in PyTorch's sorted names: sin(0.7 i + 1.3 k + 0.5) over its flat
-- index i, times 0.5 (a norm's weight 1 + 0.1 sin, its bias 0.1 sin), as the reference script
local function fill(p, k, kind)
    local v = tide.arange(p:numel(), { dtype = "float64" }):mul(0.7):add(1.3 * k + 0.5):sin()
    if kind == "w" then v = v:mul(0.1):add(1) elseif kind == "b" then v = v:mul(0.1)
    else v = v:mul(0.5) end
    tide.no_grad(function() p:copy_(v:float():view(p.shape)) end)
end
local function get(root, path)
    local obj = root
    for seg in path:gmatch("[^.]+") do
        local n = tonumber(seg)
        obj = n and obj[n + 1] or obj[seg]
    end
    return obj
end
local function set_params(root, names)
    for k, name in ipairs(names) do
        local kind = name:match("norm%.weight$") and "w" or name:match("norm%.bias$") and "b"
        fill(get(root, name), k - 1, kind)
    end
end
local function list(t, step)
    local flat, out = t:detach():flatten():tolist(), {}
    for i = 1, #flat, step do out[#out + 1] = flat[i] end
    return out
end
local function audio()
    return tide.arange(128, { dtype = "float64" }):mul(0.31):sin():float():view(2, 64) * 0.8
end
local NAMES = {
    "project_hid.bias", "project_hid.weight", "project_q.bias", "project_q.weight",
    "quantizer.codevectors", "quantizer.weight_proj.bias", "quantizer.weight_proj.weight",
    "wav2vec2.encoder.layer_norm.bias", "wav2vec2.encoder.layer_norm.weight",
    "wav2vec2.encoder.pos_conv_embed.conv.bias", "wav2vec2.encoder.pos_conv_embed.conv.weight_g",
    "wav2vec2.encoder.pos_conv_embed.conv.weight_v",
    "wav2vec2.feature_extractor.conv_layers.0.conv.weight",
    "wav2vec2.feature_extractor.conv_layers.0.layer_norm.bias",
    "wav2vec2.feature_extractor.conv_layers.0.layer_norm.weight",
    "wav2vec2.feature_extractor.conv_layers.1.conv.weight",
    "wav2vec2.feature_projection.layer_norm.bias",
    "wav2vec2.feature_projection.layer_norm.weight",
    "wav2vec2.feature_projection.projection.bias",
    "wav2vec2.feature_projection.projection.weight", "wav2vec2.masked_spec_embed",
}

describe("ported huggingface/transformers wav2vec2 pretraining pieces", function()
    it("_compute_mask_indices and _sample_negative_indices with the fixed draws", function()
        local att = tide.tensor({ { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 },
            { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0 } })
        local mask = _compute_mask_indices({ 2, 15 }, 0.5, 2, att, 0, CHOICES)
        local got = {}
        for b = 1, 2 do for t = 1, 15 do got[#got + 1] = mask[b][t] and 1 or 0 end end
        assert_close_list({ 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 0, 1, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0 }, got, 0, "mask")
        local neg = _sample_negative_indices({ 2, 15 }, 3, mask)
        got = {}
        for b = 1, 2 do for t = 1, 15 do for k = 1, 3 do got[#got + 1] = neg[b][t][k] end end end
        assert_close_list({ 0, 0, 0, 5, 13, 10, 10, 6, 1, 0, 0, 0, 0, 0, 0, 1, 12, 9, 9, 2, 13, 0, 0, 0, 0, 0, 0, 13, 10, 5, 5, 1, 12, 0, 0, 0, 10, 6, 2, 2, 12, 9, 0, 0, 0, 19, 19, 19, 23, 23, 23, 15, 15, 15, 15, 15, 15, 20, 20, 20, 15, 15, 15, 15, 15, 15, 20, 20, 20, 16, 16, 16, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15 }, got, 0, "negatives")
        local lens = _get_feat_extract_output_lengths(config, tide.tensor({ 64, 50 }))
        assert.are.same({ 15, 11 }, lens:tolist())
    end)

    it("the feature encoder, projection and positional conv embedding match PyTorch", function()
        local model = ForPreTraining(config)
        set_params(model, NAMES)
        local w = model.wav2vec2
        local feats = w.feature_extractor(audio())
        assert.are.same({ 2, 8, 15 }, feats.shape)
        assert_close_list({ 0.850090265, -0.163194448, -0.145357713, 0.564716637, -0.16277653, -0.0660438687, -0.0155574149, -0.114331648, 0.527600467, -0.168042675, 0.948301792, 0.12274459, 0.626950324, 0.220342547, -0.0685911551, 1.24351478, 0.316653222, -0.169803292, -0.147520721, -0.154476285, 0.57914561, -0.114838243, -0.123550989, -0.104851946, -0.124064222, 0.724965215, -0.16479297, 0.684524596, 0.000512969797, 0.992364824, 0.395253092, -0.1037056, 0.0562910885, 0.453488261, -0.154034078 }, list(feats, 7), 1e-4, "feats")
        assert(close(feats:sum():item(), 56.7209587, 1e-4))
        local encL = FeatureEncoder(copy_config({ feat_extract_norm = "layer" }))
        set_params(encL, { "conv_layers.0.conv.weight", "conv_layers.0.layer_norm.bias",
            "conv_layers.0.layer_norm.weight", "conv_layers.1.conv.weight",
            "conv_layers.1.layer_norm.bias", "conv_layers.1.layer_norm.weight" })
        local fL = encL(audio())
        assert_close_list({ -0.116893567, -0.169961631, -0.141431674, -0.110369176, 1.80103886, -0.148729533, -0.138152093, -0.154694021, -0.143725544, 1.36279392, -0.157200903, -0.118771598, -0.132035077, -0.132825866, 0.720792592, -0.166120484, 0.44864583, 1.87788701, 1.39448798, 1.00874746, -0.168224543, 0.282730252, 1.46185803, 0.954282582, 0.820652544, -0.149036616, 0.0329312719 }, list(fL, 9), 1e-4, "layer-norm feats")
        assert(close(fL:sum():item(), 78.2240753, 1e-4))
        local hs, ext = w.feature_projection(feats:transpose(2, 3))
        assert_close_list({ -1.14126539, -1.07630873, 1.2550143, -0.287024021, 0.315411389, -0.872317553, 0.786603928, 0.541608632, -0.207372665, -0.19237113, 1.19642758, -0.510030389, 0.467560947, -0.607363224, 0.371914029, 1.25204825, -1.17387962, -1.11387134, 0.366172194, 0.400003225, 0.883489549, -0.868547559, -1.09056532, 0.569717944, -0.37246713, 0.800050497, -0.0344536602, -0.240784898, 0.710490584, 1.14128208, -1.41782498, 0.696873009, -0.134931654, 0.806456029, -0.616069198, -1.24914253, -0.211207837, 0.763618708, -0.366859883, 0.522111893, -0.696040869, 0.804908156, -0.0187289119, -0.928359032 }, list(hs, 11), 1e-4, "projection")
        assert_close_list({ 0.586568177, -1.62606061, 1.5529263, -0.630178928, 0.859286726, -0.582255661, -0.440845072, 0.0816999599, -0.48802048, 1.80156815, -0.549553633, -0.606937468, 1.06258917, 1.2441591, -0.483594149, -0.357915133, -0.69419843, 1.84172881, -1.23854947 }, list(ext, 13), 1e-4, "normed features")
        local pos = w.encoder.pos_conv_embed(hs)
        assert.are.same({ 2, 15, 16 }, pos.shape)
        assert_close_list({ -0.0729590058, 0.268632829, -0.117666721, 0.0759289339, 0.400417447, -0.152276978, 0.346892864, 0.241087019, -0.138118654, 0.295957834, -0.018763518, -0.0818520337, 0.245325953, -0.133491412, 0.0455721878, -0.0310790148, -0.0780819207, 0.261882067, -0.114627376, 0.0665265024, 0.353102744, -0.153348699, 0.298361272, 0.197591782, -0.142118379, 0.290620089, 0.0239759758, -0.0464059711, 0.266099334, -0.107868575, 0.130245149, -0.0144867469, -0.0687607452, 0.287753224, -0.111577734, 0.0704150349, 0.270721585, -0.155792028, 0.316943437, 0.152159512, -0.151988402, 0.274534672, -0.0049702432, -0.0696067885 }, list(pos, 11), 1e-4, "positional conv")
        assert(close(pos:sum():item(), 35.1160927, 1e-4))
    end)

    it("the quantizer (argmax and fixed Gumbel noise), the logits, the loss and a gradient",
        function()
        local model = ForPreTraining(config)
        set_params(model, NAMES)
        local mask = _compute_mask_indices({ 2, 15 }, 0.5, 2, tide.tensor({
            { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 },
            { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0 } }), 0, CHOICES)
        local neg = _sample_negative_indices({ 2, 15 }, 3, mask)
        local mt = tide.tensor(mask, { dtype = "bool" })
        local _, ext = model.wav2vec2.feature_projection(
            model.wav2vec2.feature_extractor(audio()):transpose(2, 3))
        local q = model.quantizer
        q:eval()
        local cv, ppl = q(ext, mt)
        assert_close_list({ -0.275342762, 0.38127923, 0.364484519, 0.383558184, -0.464561999, 0.394126028, -0.261154294, -0.236210987, -0.275342762, 0.38127923, 0.364484519, 0.383558184, 0.0832400024, 0.394126028, -0.261154294, -0.236210987, -0.275342762, 0.38127923, 0.364484519, 0.383558184, 0.0832400024, 0.394126028, -0.261154294, -0.236210987, -0.275342762, 0.38127923, -0.228767946, 0.383558184, -0.464561999, 0.394126028, -0.261154294, 0.499271661, -0.275342762, 0.38127923, -0.228767946, 0.383558184, -0.464561999, 0.394126028, -0.261154294, 0.499271661, -0.275342762, 0.38127923, 0.364484519, 0.383558184, -0.464561999, 0.394126028, -0.261154294, 0.499271661 }, list(cv, 5), 1e-4, "eval codevectors")
        assert(close(cv:sum():item(), 24.9289169, 1e-4))
        assert(close(ppl:item(), 4.73289108, 1e-4))
        GUMBELS = (tide.arange(2 * 15 * 2 * 4, { dtype = "float64" }):mul(1.7):cos() * 1.5):float()
        q:train()
        cv, ppl = q(ext, mt)
        assert_close_list({ -0.275342762, 0.38127923, 0.364484519, 0.383558184, -0.243587255, -0.268286467, 0.388897091, -0.461387724, 0.399243563, -0.474422246, 0.364484519, 0.383558184, 0.0832400024, 0.394126028, -0.471700728, 0.370187938, 0.399243563, 0.499896437, -0.228767946, 0.0749386027, -0.464561999, 0.394126028, 0.499996871, -0.236210987, -0.477009624, -0.467604965, -0.228767946, 0.094993338, -0.464561999, 0.0582746007, -0.261154294, 0.499271661, -0.275342762, 0.38127923, 0.0666160211, -0.253948301, 0.375786722, 0.111444958, -0.261154294, 0.499271661, -0.275342762, 0.38127923, 0.10323374, 0.383558184, -0.243587255, -0.268286467, 0.388897091, -0.461387724 }, list(cv, 5), 1e-4, "train codevectors")
        assert(close(ppl:item(), 7.7049551, 1e-4))
        local tgt = tide.arange(2 * 15 * 8):mul(0.9):sin():view(1, 2, 15, 8)
        local negf = tide.arange(3 * 2 * 15 * 8):mul(0.4):cos():view(3, 2, 15, 8)
        local pred = tide.arange(2 * 15 * 8):mul(0.23):add(0.1):sin():view(2, 15, 8)
        local lg = compute_contrastive_logits(tgt, negf, pred, 0.1)
        assert.are.same({ 4, 2, 15 }, lg.shape)
        assert_close_list({ -2.47886109, -3.97177386, 0.39820081, -2.2466948, 9.26166916, -5.73561525, -9.30934811, 6.33016634, 8.09512615, -3.03476071 }, list(lg, 13), 1e-4, "contrastive logits")
        model:train()
        local negt = tide.tensor(neg, { dtype = "int64" }) + 1
        local loss, contrastive, diversity, perplexity = model(audio(), mt, negt)
        assert(close(loss:item(), 26.0885124, 1e-4), loss:item())
        assert(close(contrastive:item(), 26.0368805, 1e-4))
        assert(close(diversity:item(), 0.516328573, 1e-4))
        assert(close(perplexity:item(), 7.7049551, 1e-4))
        loss:backward()
        assert_close_list({ 0.0752900839, -0.161875412, -0.03438586, 0.213348746, -0.0405902937, 0.0239946879, -0.340648353, -0.489845693, 0.210688591, 0.17408593, 0.169256791, 0.362278372, 0.210963175 }, list(model.quantizer.weight_proj.weight.grad, 5),
            1e-3, "weight_proj grad")
        assert_close_list({ 2.03048515, 1.62884426, 11.661232, -3.6691494, -10.9434834, -0.940102696, -3.12210464, 1.15296865, -5.20146275, -3.62133217 }, list(model.project_q.weight.grad, 7), 1e-3,
            "project_q grad")
    end)
end)
