-- ported_scripts81_spec.lua — Hugging Face transformers'
-- src/transformers/models/vit/modeling_vit.py
-- at tag v4.30.0 (ViTEmbeddings with mask_token and interpolate_pos_encoding's bicubic
-- scale_factor and 0.1 offset, ViTPatchEmbeddings' ValueErrors, ViTSelfAttention with head_mask,
-- ViTSelfOutput, ViTAttention, ViTIntermediate, ViTOutput, ViTLayer, ViTEncoder, ViTPooler,
-- ViTModel with get_head_mask, ViTForImageClassification's problem_type inference,
-- ViTForMaskedImageModeling's Conv2d + PixelShuffle decoder and masked L1 loss, and
-- ViTPreTrainedModel._init_weights), ported line for line at tiny sizes, checked against
-- PyTorch 1.13 running the same source lines (the venv has no transformers) on the same weights.
-- The Python line stands above each Lua line that differs from it. Dims are 1-based; class
-- targets 1..C. ViTAttention.prune_heads is not ported (it needs pytorch_utils'
-- find_pruneable_heads_and_indices / prune_linear_layer); gradient checkpointing, return_dict
-- and output_hidden_states are left out (return_dict=False tuples are returned).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- ViTConfig(image_size=8, patch_size=2, num_channels=3, hidden_size=16, num_hidden_layers=2,
--           num_attention_heads=2, intermediate_size=24, num_labels=3, encoder_stride=2)
local function ViTConfig()
    return { image_size = 8, patch_size = 2, num_channels = 3, hidden_size = 16,
        num_hidden_layers = 2, num_attention_heads = 2, intermediate_size = 24, hidden_act = "gelu",
        hidden_dropout_prob = 0.0, attention_probs_dropout_prob = 0.0, initializer_range = 0.02,
        layer_norm_eps = 1e-12, qkv_bias = true, encoder_stride = 2, num_labels = 3,
        problem_type = nil }
end

-- ACT2FN["gelu"]: transformers' GELUActivation, nn.functional.gelu
local ACT2FN = { gelu = F.gelu }

-- class ViTEmbeddings(nn.Module):
local ViTEmbeddings = nn.Module:extend("ViTEmbeddings")
-- def __init__(self, config: ViTConfig, use_mask_token: bool = False) -> None:
function ViTEmbeddings:init(config, use_mask_token)
    -- self.cls_token = nn.Parameter(torch.randn(1, 1, config.hidden_size))
    self.cls_token = nn.Parameter(tide.randn(1, 1, config.hidden_size))
    -- self.mask_token = nn.Parameter(torch.zeros(1, 1, config.hidden_size))
    --     if use_mask_token else None
    self.mask_token = use_mask_token and nn.Parameter(tide.zeros(1, 1, config.hidden_size)) or nil
    self.patch_embeddings = self.ViTPatchEmbeddings(config)
    local num_patches = self.patch_embeddings.num_patches
    -- self.position_embeddings = nn.Parameter(torch.randn(1, num_patches + 1, config.hidden_size))
    self.position_embeddings = nn.Parameter(tide.randn(1, num_patches + 1, config.hidden_size))
    self.dropout = nn.Dropout(config.hidden_dropout_prob)
    self.config = config
end

-- def interpolate_pos_encoding(self, embeddings: torch.Tensor, height: int, width: int)
--         -> torch.Tensor:
function ViTEmbeddings:interpolate_pos_encoding(embeddings, height, width)
    -- num_patches = embeddings.shape[1] - 1
    local num_patches = embeddings.shape[2] - 1
    -- num_positions = self.position_embeddings.shape[1] - 1
    local num_positions = self.position_embeddings.shape[2] - 1
    if num_patches == num_positions and height == width then
        return self.position_embeddings
    end
    -- class_pos_embed = self.position_embeddings[:, 0]
    local class_pos_embed = self.position_embeddings[{ {}, 1 }]
    -- patch_pos_embed = self.position_embeddings[:, 1:]
    local patch_pos_embed = self.position_embeddings[{ {}, { 2, -1 } }]
    -- dim = embeddings.shape[-1]
    local dim = embeddings.shape[embeddings.ndim]
    -- h0 = height // self.config.patch_size   (// is Lua 5.3's: math.floor for 5.1 and LuaJIT)
    local h0 = math.floor(height / self.config.patch_size)
    -- w0 = width // self.config.patch_size
    local w0 = math.floor(width / self.config.patch_size)
    -- we add a small number to avoid floating point error in the interpolation
    -- see discussion at https://github.com/facebookresearch/dino/issues/8
    -- h0, w0 = h0 + 0.1, w0 + 0.1
    h0, w0 = h0 + 0.1, w0 + 0.1
    -- patch_pos_embed = patch_pos_embed.reshape(1, int(math.sqrt(num_positions)),
    --                                           int(math.sqrt(num_positions)), dim)
    local side = math.floor(math.sqrt(num_positions))
    patch_pos_embed = patch_pos_embed:reshape(1, side, side, dim)
    -- patch_pos_embed = patch_pos_embed.permute(0, 3, 1, 2)
    patch_pos_embed = patch_pos_embed:permute(1, 4, 2, 3)
    -- patch_pos_embed = nn.functional.interpolate(patch_pos_embed,
    --     scale_factor=(h0 / math.sqrt(num_positions), w0 / math.sqrt(num_positions)),
    --     mode="bicubic", align_corners=False)
    patch_pos_embed = F.interpolate(patch_pos_embed, {
        scale_factor = { h0 / math.sqrt(num_positions), w0 / math.sqrt(num_positions) },
        mode = "bicubic", align_corners = false })
    -- assert int(h0) == patch_pos_embed.shape[-2] and int(w0) == patch_pos_embed.shape[-1]
    assert(math.floor(h0) == patch_pos_embed:size(-2)
        and math.floor(w0) == patch_pos_embed:size(-1))
    -- patch_pos_embed = patch_pos_embed.permute(0, 2, 3, 1).view(1, -1, dim)
    patch_pos_embed = patch_pos_embed:permute(1, 3, 4, 2):view(1, -1, dim)
    -- return torch.cat((class_pos_embed.unsqueeze(0), patch_pos_embed), dim=1)
    return tide.cat({ class_pos_embed:unsqueeze(1), patch_pos_embed }, { dim = 2 })
end

-- def forward(self, pixel_values, bool_masked_pos=None, interpolate_pos_encoding=False):
function ViTEmbeddings:forward(pixel_values, bool_masked_pos, interpolate_pos_encoding)
    -- batch_size, num_channels, height, width = pixel_values.shape
    local batch_size, _, height, width = unpack(pixel_values:size())
    -- embeddings = self.patch_embeddings(pixel_values,
    --                                   interpolate_pos_encoding=interpolate_pos_encoding)
    local embeddings = self.patch_embeddings(pixel_values, interpolate_pos_encoding)

    if bool_masked_pos ~= nil then
        -- seq_length = embeddings.shape[1]
        local seq_length = embeddings.shape[2]
        local mask_tokens = self.mask_token:expand(batch_size, seq_length, -1)
        -- replace the masked visual tokens by mask_tokens
        local mask = bool_masked_pos:unsqueeze(-1):type_as(mask_tokens)
        embeddings = embeddings * (1.0 - mask) + mask_tokens * mask
    end

    -- add the [CLS] token to the embedded patch tokens
    local cls_tokens = self.cls_token:expand(batch_size, -1, -1)
    -- embeddings = torch.cat((cls_tokens, embeddings), dim=1)
    embeddings = tide.cat({ cls_tokens, embeddings }, { dim = 2 })

    -- add positional encoding to each token
    if interpolate_pos_encoding then
        embeddings = embeddings + self:interpolate_pos_encoding(embeddings, height, width)
    else
        embeddings = embeddings + self.position_embeddings
    end

    embeddings = self.dropout(embeddings)

    return embeddings
end

-- class ViTPatchEmbeddings(nn.Module):
local ViTPatchEmbeddings = nn.Module:extend("ViTPatchEmbeddings")
ViTEmbeddings.ViTPatchEmbeddings = ViTPatchEmbeddings
function ViTPatchEmbeddings:init(config)
    local image_size, patch_size = config.image_size, config.patch_size
    local num_channels, hidden_size = config.num_channels, config.hidden_size

    -- image_size = image_size if isinstance(image_size, collections.abc.Iterable)
    --     else (image_size, image_size)
    image_size = type(image_size) == "table" and image_size or { image_size, image_size }
    patch_size = type(patch_size) == "table" and patch_size or { patch_size, patch_size }
    -- num_patches = (image_size[1] // patch_size[1]) * (image_size[0] // patch_size[0])
    local num_patches = math.floor(image_size[2] / patch_size[2])
        * math.floor(image_size[1] / patch_size[1])
    self.image_size = image_size
    self.patch_size = patch_size
    self.num_channels = num_channels
    self.num_patches = num_patches

    -- self.projection = nn.Conv2d(num_channels, hidden_size, kernel_size=patch_size,
    --                             stride=patch_size)
    self.projection = nn.Conv2d(num_channels, hidden_size,
        { kernel_size = patch_size, stride = patch_size })
end

-- def forward(self, pixel_values: torch.Tensor, interpolate_pos_encoding: bool = False)
--         -> torch.Tensor:
function ViTPatchEmbeddings:forward(pixel_values, interpolate_pos_encoding)
    local _, num_channels, height, width = unpack(pixel_values:size())
    if num_channels ~= self.num_channels then
        -- raise ValueError("Make sure that the channel dimension of the pixel values match with"
        --     " the one set in the configuration."
        --     f" Expected {self.num_channels} but got {num_channels}.")
        error("Make sure that the channel dimension of the pixel values match with the one " ..
            "set in the configuration." .. (" Expected %d but got %d."):format(self.num_channels,
            num_channels), 0)
    end
    if not interpolate_pos_encoding then
        if height ~= self.image_size[1] or width ~= self.image_size[2] then
            -- raise ValueError(f"Input image size ({height}*{width}) doesn't match model"
            --                  f" ({self.image_size[0]}*{self.image_size[1]}).")
            error(("Input image size (%d*%d) doesn't match model (%d*%d)."):format(height, width,
                self.image_size[1], self.image_size[2]), 0)
        end
    end
    -- embeddings = self.projection(pixel_values).flatten(2).transpose(1, 2)
    local embeddings = self.projection(pixel_values):flatten(3):transpose(2, 3)
    return embeddings
end

-- class ViTSelfAttention(nn.Module):
local ViTSelfAttention = nn.Module:extend("ViTSelfAttention")
function ViTSelfAttention:init(config)
    -- if config.hidden_size % config.num_attention_heads != 0
    --         and not hasattr(config, "embedding_size"):
    if config.hidden_size % config.num_attention_heads ~= 0 and config.embedding_size == nil then
        -- raise ValueError(...)
        error(("The hidden size (%d,) is not a multiple of the number of attention heads %d.")
            :format(config.hidden_size, config.num_attention_heads), 0)
    end

    self.num_attention_heads = config.num_attention_heads
    -- self.attention_head_size = int(config.hidden_size / config.num_attention_heads)
    self.attention_head_size = math.floor(config.hidden_size / config.num_attention_heads)
    self.all_head_size = self.num_attention_heads * self.attention_head_size

    -- self.query = nn.Linear(config.hidden_size, self.all_head_size, bias=config.qkv_bias)
    self.query = nn.Linear(config.hidden_size, self.all_head_size, { bias = config.qkv_bias })
    self.key = nn.Linear(config.hidden_size, self.all_head_size, { bias = config.qkv_bias })
    self.value = nn.Linear(config.hidden_size, self.all_head_size, { bias = config.qkv_bias })

    self.dropout = nn.Dropout(config.attention_probs_dropout_prob)
end

-- def transpose_for_scores(self, x: torch.Tensor) -> torch.Tensor:
function ViTSelfAttention:transpose_for_scores(x)
    -- new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
    local new_x_shape = x:size()
    new_x_shape[#new_x_shape] = self.num_attention_heads
    new_x_shape[#new_x_shape + 1] = self.attention_head_size
    -- x = x.view(new_x_shape)
    x = x:view(new_x_shape)
    -- return x.permute(0, 2, 1, 3)
    return x:permute(1, 3, 2, 4)
end

-- def forward(self, hidden_states, head_mask=None, output_attentions=False):
function ViTSelfAttention:forward(hidden_states, head_mask, output_attentions)
    local mixed_query_layer = self.query(hidden_states)

    local key_layer = self:transpose_for_scores(self.key(hidden_states))
    local value_layer = self:transpose_for_scores(self.value(hidden_states))
    local query_layer = self:transpose_for_scores(mixed_query_layer)

    -- Take the dot product between "query" and "key" to get the raw attention scores.
    -- attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))
    local attention_scores = tide.matmul(query_layer, key_layer:transpose(-1, -2))

    attention_scores = attention_scores / math.sqrt(self.attention_head_size)

    -- Normalize the attention scores to probabilities.
    -- attention_probs = nn.functional.softmax(attention_scores, dim=-1)
    local attention_probs = F.softmax(attention_scores, { dim = -1 })

    -- This is actually dropping out entire tokens to attend to, which might
    -- seem a bit unusual, but is taken from the original Transformer paper.
    attention_probs = self.dropout(attention_probs)

    -- Mask heads if we want to
    if head_mask ~= nil then
        attention_probs = attention_probs * head_mask
    end

    local context_layer = tide.matmul(attention_probs, value_layer)

    -- context_layer = context_layer.permute(0, 2, 1, 3).contiguous()
    context_layer = context_layer:permute(1, 3, 2, 4):contiguous()
    -- new_context_layer_shape = context_layer.size()[:-2] + (self.all_head_size,)
    local new_context_layer_shape = context_layer:size()
    new_context_layer_shape[#new_context_layer_shape] = nil
    new_context_layer_shape[#new_context_layer_shape] = self.all_head_size
    context_layer = context_layer:view(new_context_layer_shape)

    -- outputs = (context_layer, attention_probs) if output_attentions else (context_layer,)
    local outputs = output_attentions and { context_layer, attention_probs } or { context_layer }

    return outputs
end

-- class ViTSelfOutput(nn.Module):
local ViTSelfOutput = nn.Module:extend("ViTSelfOutput")
function ViTSelfOutput:init(config)
    self.dense = nn.Linear(config.hidden_size, config.hidden_size)
    self.dropout = nn.Dropout(config.hidden_dropout_prob)
end

function ViTSelfOutput:forward(hidden_states, input_tensor) -- luacheck: ignore input_tensor
    hidden_states = self.dense(hidden_states)
    hidden_states = self.dropout(hidden_states)

    return hidden_states
end

-- class ViTAttention(nn.Module):
local ViTAttention = nn.Module:extend("ViTAttention")
function ViTAttention:init(config)
    self.attention = ViTSelfAttention(config)
    self.output = ViTSelfOutput(config)
    -- self.pruned_heads = set()   (prune_heads not ported)
    self.pruned_heads = {}
end

function ViTAttention:forward(hidden_states, head_mask, output_attentions)
    local self_outputs = self.attention(hidden_states, head_mask, output_attentions)

    local attention_output = self.output(self_outputs[1], hidden_states)

    -- outputs = (attention_output,) + self_outputs[1:]  # add attentions if we output them
    local outputs = { attention_output, unpack(self_outputs, 2) }
    return outputs
end

-- class ViTIntermediate(nn.Module):
local ViTIntermediate = nn.Module:extend("ViTIntermediate")
function ViTIntermediate:init(config)
    self.dense = nn.Linear(config.hidden_size, config.intermediate_size)
    -- if isinstance(config.hidden_act, str):
    if type(config.hidden_act) == "string" then
        self.intermediate_act_fn = ACT2FN[config.hidden_act]
    else
        self.intermediate_act_fn = config.hidden_act
    end
end

function ViTIntermediate:forward(hidden_states)
    hidden_states = self.dense(hidden_states)
    hidden_states = self.intermediate_act_fn(hidden_states)

    return hidden_states
end

-- class ViTOutput(nn.Module):
local ViTOutput = nn.Module:extend("ViTOutput")
function ViTOutput:init(config)
    self.dense = nn.Linear(config.intermediate_size, config.hidden_size)
    self.dropout = nn.Dropout(config.hidden_dropout_prob)
end

function ViTOutput:forward(hidden_states, input_tensor)
    hidden_states = self.dense(hidden_states)
    hidden_states = self.dropout(hidden_states)

    hidden_states = hidden_states + input_tensor

    return hidden_states
end

-- class ViTLayer(nn.Module):
local ViTLayer = nn.Module:extend("ViTLayer")
function ViTLayer:init(config)
    self.chunk_size_feed_forward = 0
    self.seq_len_dim = 1
    self.attention = ViTAttention(config)
    self.intermediate = ViTIntermediate(config)
    self.output = ViTOutput(config)
    -- self.layernorm_before = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
    self.layernorm_before = nn.LayerNorm(config.hidden_size, { eps = config.layer_norm_eps })
    self.layernorm_after = nn.LayerNorm(config.hidden_size, { eps = config.layer_norm_eps })
end

function ViTLayer:forward(hidden_states, head_mask, output_attentions)
    local self_attention_outputs = self.attention(
        self.layernorm_before(hidden_states), -- in ViT, layernorm is applied before self-attention
        head_mask,
        output_attentions
    )
    local attention_output = self_attention_outputs[1]
    -- outputs = self_attention_outputs[1:]  # add self attentions if we output attention weights
    local outputs = { unpack(self_attention_outputs, 2) }

    -- first residual connection
    hidden_states = attention_output + hidden_states

    -- in ViT, layernorm is also applied after self-attention
    local layer_output = self.layernorm_after(hidden_states)
    layer_output = self.intermediate(layer_output)

    -- second residual connection is done here
    layer_output = self.output(layer_output, hidden_states)

    -- outputs = (layer_output,) + outputs
    return { layer_output, unpack(outputs) }
end

-- class ViTEncoder(nn.Module):
local ViTEncoder = nn.Module:extend("ViTEncoder")
function ViTEncoder:init(config)
    self.config = config
    -- self.layer = nn.ModuleList([ViTLayer(config) for _ in range(config.num_hidden_layers)])
    local layers = {}
    for _ = 1, config.num_hidden_layers do
        layers[#layers + 1] = ViTLayer(config)
    end
    self.layer = nn.ModuleList(layers)
    self.gradient_checkpointing = false
end

-- def forward(self, hidden_states, head_mask=None, output_attentions=False, ...):
function ViTEncoder:forward(hidden_states, head_mask, output_attentions)
    local all_self_attentions = output_attentions and {} or nil

    -- for i, layer_module in enumerate(self.layer):
    for i = 1, #self.layer do
        local layer_module = self.layer[i]
        -- layer_head_mask = head_mask[i] if head_mask is not None else None
        local layer_head_mask = head_mask and head_mask[i] or nil
        local layer_outputs = layer_module(hidden_states, layer_head_mask, output_attentions)

        hidden_states = layer_outputs[1]

        if output_attentions then
            all_self_attentions[#all_self_attentions + 1] = layer_outputs[2]
        end
    end
    -- return tuple(v for v in [hidden_states, all_hidden_states, all_self_attentions]
    --              if v is not None)
    return { hidden_states, all_self_attentions }
end

-- class ViTPooler(nn.Module):
local ViTPooler = nn.Module:extend("ViTPooler")
function ViTPooler:init(config)
    self.dense = nn.Linear(config.hidden_size, config.hidden_size)
    self.activation = nn.Tanh()
end

function ViTPooler:forward(hidden_states)
    -- We "pool" the model by simply taking the hidden state corresponding
    -- to the first token.
    -- first_token_tensor = hidden_states[:, 0]
    local first_token_tensor = hidden_states[{ {}, 1 }]
    local pooled_output = self.dense(first_token_tensor)
    pooled_output = self.activation(pooled_output)
    return pooled_output
end

-- ViTPreTrainedModel._init_weights(self, module)
local function _init_weights(config, module)
    -- if isinstance(module, (nn.Linear, nn.Conv2d)):
    if module.__name == "Linear" or module.__name == "Conv2d" then
        -- Upcast the input in `fp32` and cast it back to desired `dtype` to avoid
        -- `trunc_normal_cpu` not implemented in `half` issues
        -- module.weight.data = nn.init.trunc_normal_(
        --     module.weight.data.to(torch.float32), mean=0.0, std=self.config.initializer_range
        -- ).to(module.weight.dtype)
        module.weight.data = nn.init.trunc_normal_(module.weight.data:to(tide.float32),
            { mean = 0.0, std = config.initializer_range }):to(module.weight.dtype)
        if module.bias ~= nil then
            module.bias.data:zero_()
        end
    elseif module.__name == "LayerNorm" then
        module.bias.data:zero_()
        module.weight.data:fill_(1.0)
    elseif module.__name == "ViTEmbeddings" then
        module.position_embeddings.data = nn.init.trunc_normal_(
            module.position_embeddings.data:to(tide.float32),
            { mean = 0.0, std = config.initializer_range }):to(module.position_embeddings.dtype)
        module.cls_token.data = nn.init.trunc_normal_(module.cls_token.data:to(tide.float32),
            { mean = 0.0, std = config.initializer_range }):to(module.cls_token.dtype)
    end
end

-- class ViTModel(ViTPreTrainedModel):
local ViTModel = nn.Module:extend("ViTModel")
-- def __init__(self, config: ViTConfig, add_pooling_layer: bool = True,
--              use_mask_token: bool = False):
function ViTModel:init(config, add_pooling_layer, use_mask_token)
    if add_pooling_layer == nil then add_pooling_layer = true end
    self.config = config

    self.embeddings = ViTEmbeddings(config, use_mask_token)
    self.encoder = ViTEncoder(config)

    self.layernorm = nn.LayerNorm(config.hidden_size, { eps = config.layer_norm_eps })
    self.pooler = add_pooling_layer and ViTPooler(config) or nil
end

-- PreTrainedModel.post_init(): self.apply(self._init_weights)
function ViTModel:post_init()
    local config = self.config
    self:apply(function(m) _init_weights(config, m) end)
end

-- ModuleUtilsMixin.get_head_mask / _convert_head_mask_to_5d
function ViTModel:get_head_mask(head_mask, num_hidden_layers)
    if head_mask == nil then
        -- head_mask = [None] * num_hidden_layers
        return nil
    end
    if head_mask.ndim == 1 then
        -- head_mask = head_mask.unsqueeze(0).unsqueeze(0).unsqueeze(-1).unsqueeze(-1)
        head_mask = head_mask:unsqueeze(1):unsqueeze(1):unsqueeze(-1):unsqueeze(-1)
        head_mask = head_mask:expand(num_hidden_layers, -1, -1, -1, -1)
    elseif head_mask.ndim == 2 then
        -- head_mask = head_mask.unsqueeze(1).unsqueeze(-1).unsqueeze(-1)
        head_mask = head_mask:unsqueeze(2):unsqueeze(-1):unsqueeze(-1)
    end
    -- head_mask = head_mask.to(dtype=self.dtype)  # switch to float if need + fp16 compatibility
    return head_mask:to(self.embeddings.cls_token.dtype)
end

-- def forward(self, pixel_values=None, bool_masked_pos=None, head_mask=None,
--             output_attentions=None, output_hidden_states=None,
--             interpolate_pos_encoding=None, return_dict=None):
function ViTModel:forward(pixel_values, bool_masked_pos, head_mask, output_attentions,
                          interpolate_pos_encoding)
    if pixel_values == nil then
        error("You have to specify pixel_values", 0)
    end

    head_mask = self:get_head_mask(head_mask, self.config.num_hidden_layers)

    -- TODO: maybe have a cleaner way to cast the input (from `ImageProcessor` side?)
    local expected_dtype = self.embeddings.patch_embeddings.projection.weight.dtype
    if pixel_values.dtype ~= expected_dtype then
        pixel_values = pixel_values:to(expected_dtype)
    end

    local embedding_output = self.embeddings(pixel_values, bool_masked_pos,
        interpolate_pos_encoding)

    local encoder_outputs = self.encoder(embedding_output, head_mask, output_attentions)
    local sequence_output = encoder_outputs[1]
    sequence_output = self.layernorm(sequence_output)
    -- pooled_output = self.pooler(sequence_output) if self.pooler is not None else None
    local pooled_output = self.pooler and self.pooler(sequence_output) or nil

    -- head_outputs = (sequence_output, pooled_output) if pooled_output is not None
    --     else (sequence_output,)
    -- return head_outputs + encoder_outputs[1:]
    return { sequence_output, pooled_output, encoder_outputs[2] }
end

-- class ViTForImageClassification(ViTPreTrainedModel):
local ViTForImageClassification = nn.Module:extend("ViTForImageClassification")
function ViTForImageClassification:init(config)
    self.config = config
    self.num_labels = config.num_labels
    -- self.vit = ViTModel(config, add_pooling_layer=False)
    self.vit = ViTModel(config, false)

    -- Classifier head
    -- self.classifier = nn.Linear(config.hidden_size, config.num_labels)
    --     if config.num_labels > 0 else nn.Identity()
    self.classifier = config.num_labels > 0 and nn.Linear(config.hidden_size, config.num_labels)
        or nn.Identity()

    -- Initialize weights and apply final processing
    ViTModel.post_init(self)
end

-- def forward(self, pixel_values=None, head_mask=None, labels=None, ...,
--             interpolate_pos_encoding=None):
function ViTForImageClassification:forward(pixel_values, head_mask, labels,
                                           interpolate_pos_encoding)
    -- outputs = self.vit(pixel_values, head_mask=head_mask, ..., interpolate_pos_encoding=...)
    local outputs = self.vit(pixel_values, nil, head_mask, false, interpolate_pos_encoding)

    local sequence_output = outputs[1]

    -- logits = self.classifier(sequence_output[:, 0, :])
    local logits = self.classifier(sequence_output[{ {}, 1, {} }])

    local loss
    if labels ~= nil then
        -- move labels to correct device to enable model parallelism
        labels = labels:to(logits.device)
        if self.config.problem_type == nil then
            if self.num_labels == 1 then
                self.config.problem_type = "regression"
            -- elif self.num_labels > 1 and (labels.dtype == torch.long
            --                               or labels.dtype == torch.int):
            elseif self.num_labels > 1
                and (labels.dtype == tide.long or labels.dtype == tide.int) then
                self.config.problem_type = "single_label_classification"
            else
                self.config.problem_type = "multi_label_classification"
            end
        end

        if self.config.problem_type == "regression" then
            local loss_fct = nn.MSELoss()
            if self.num_labels == 1 then
                loss = loss_fct(logits:squeeze(), labels:squeeze())
            else
                loss = loss_fct(logits, labels)
            end
        elseif self.config.problem_type == "single_label_classification" then
            local loss_fct = nn.CrossEntropyLoss()
            loss = loss_fct(logits:view(-1, self.num_labels), labels:view(-1))
        elseif self.config.problem_type == "multi_label_classification" then
            local loss_fct = nn.BCEWithLogitsLoss()
            loss = loss_fct(logits, labels)
        end
    end

    -- output = (logits,) + outputs[1:]; return ((loss,) + output) if loss is not None else output
    return loss, logits
end

-- class ViTForMaskedImageModeling(ViTPreTrainedModel):
local ViTForMaskedImageModeling = nn.Module:extend("ViTForMaskedImageModeling")
function ViTForMaskedImageModeling:init(config)
    self.config = config
    -- self.vit = ViTModel(config, add_pooling_layer=False, use_mask_token=True)
    self.vit = ViTModel(config, false, true)

    -- self.decoder = nn.Sequential(
    --     nn.Conv2d(in_channels=config.hidden_size,
    --               out_channels=config.encoder_stride**2 * config.num_channels, kernel_size=1),
    --     nn.PixelShuffle(config.encoder_stride))
    self.decoder = nn.Sequential(
        nn.Conv2d(config.hidden_size, config.encoder_stride ^ 2 * config.num_channels,
            { kernel_size = 1 }),
        nn.PixelShuffle(config.encoder_stride)
    )

    ViTModel.post_init(self)
end

-- def forward(self, pixel_values=None, bool_masked_pos=None, head_mask=None, ...):
function ViTForMaskedImageModeling:forward(pixel_values, bool_masked_pos, head_mask)
    if bool_masked_pos ~= nil and (self.config.patch_size ~= self.config.encoder_stride) then
        error("When `bool_masked_pos` is provided, `patch_size` must be equal to " ..
            "`encoder_stride` to ensure that the reconstructed image has the same dimensions " ..
            ("as the input.Got `patch_size` = %d and `encoder_stride` = %d."):format(
                self.config.patch_size, self.config.encoder_stride), 0)
    end

    local outputs = self.vit(pixel_values, bool_masked_pos, head_mask)

    local sequence_output = outputs[1]

    -- Reshape to (batch_size, num_channels, height, width)
    -- sequence_output = sequence_output[:, 1:]
    sequence_output = sequence_output[{ {}, { 2, -1 } }]
    local batch_size, sequence_length, num_channels = unpack(sequence_output:size())
    -- height = width = math.floor(sequence_length**0.5)
    local height = math.floor(sequence_length ^ 0.5)
    local width = height
    -- sequence_output = sequence_output.permute(0, 2, 1).reshape(batch_size, num_channels,
    --                                                            height, width)
    sequence_output = sequence_output:permute(1, 3, 2):reshape(batch_size, num_channels, height,
        width)

    -- Reconstruct pixel values
    local reconstructed_pixel_values = self.decoder(sequence_output)

    local masked_im_loss
    if bool_masked_pos ~= nil then
        -- size = self.config.image_size // self.config.patch_size
        local size = math.floor(self.config.image_size / self.config.patch_size)
        bool_masked_pos = bool_masked_pos:reshape(-1, size, size)
        -- mask = (bool_masked_pos.repeat_interleave(self.config.patch_size, 1)
        --     .repeat_interleave(self.config.patch_size, 2).unsqueeze(1).contiguous())
        local mask = bool_masked_pos:repeat_interleave(self.config.patch_size, 2)
            :repeat_interleave(self.config.patch_size, 3):unsqueeze(2):contiguous()
        -- reconstruction_loss = nn.functional.l1_loss(pixel_values,
        --     reconstructed_pixel_values, reduction="none")
        local reconstruction_loss = F.l1_loss(pixel_values, reconstructed_pixel_values,
            { reduction = "none" })
        masked_im_loss = (reconstruction_loss * mask):sum() / (mask:sum() + 1e-5)
            / self.config.num_channels
    end

    return masked_im_loss, reconstructed_pixel_values
end

---------------------------------------------------------------------------------------------
-- the check: PyTorch's values for the same weights (0.2 sin(0.37 j + 1.1 k) for parameter k in
-- named_parameters order, element j; LayerNorm weights 1 + that) and pixels
-- (sin(0.3 j) cos(0.11 j)), from the same source lines in PyTorch 1.13, eval mode
---------------------------------------------------------------------------------------------
local function set_weights(m)
    tide.no_grad(function()
        for k, np in ipairs(m:named_parameters()) do
            local name, p = np[1], np[2]
            local j = tide.arange(0, p:numel(), { dtype = tide.float64 })
            local v = (j * 0.37 + 1.1 * k):sin() * 0.2
            if name:find("layernorm") and name:sub(-6) == "weight" then v = v + 1.0 end
            p:copy_(v:view(p.shape):float())
        end
    end)
end

local function pixels(b, hw)
    local j = tide.arange(0, b * 3 * hw * hw, { dtype = tide.float64 })
    return ((j * 0.3):sin() * (j * 0.11):cos()):view(b, 3, hw, hw):float()
end

local function list(t)
    return t:detach():reshape(-1):double():totable()
end

describe("transformers v4.30 modeling_vit.py", function()
    local x = pixels(2, 8)
    local LOGITS = { -0.990434706, -0.456227362, 0.137130007, -1.22403407, -0.881548285,
        -0.424425125 }

    it("ViTForImageClassification: logits and each problem_type's loss match PyTorch", function()
        local m = ViTForImageClassification(ViTConfig())
        -- _init_weights: trunc_normal_(std=0.02) inside +-2 (so every weight within 2)
        local w = m.vit.encoder.layer[1].attention.attention.query.weight
        assert.is_true(w:abs():max():item() <= 2 and w:std():item() < 0.05)
        assert.are.equal(1, m.vit.layernorm.weight:min():item())
        assert.are.equal(0, m.classifier.bias:abs():max():item())
        assert.is_true(m.vit.embeddings.cls_token:abs():max():item() > 0)
        assert.are.equal(40, #m:parameters())
        set_weights(m)
        m:eval()
        -- labels=torch.tensor([0, 2]): long labels infer single_label_classification
        local loss, logits = m(x, nil, tide.tensor({ 1, 3 }, { dtype = tide.long }))
        assert.are.equal("single_label_classification", m.config.problem_type)
        assert.are.same({ 2, 3 }, logits:size())
        assert_close_list(LOGITS, list(logits), 1e-5, "logits")
        assert.is_true(ported.close(loss:item(), 1.24524081, 1e-5))
        -- float labels infer multi_label_classification (BCEWithLogitsLoss)
        m.config.problem_type = nil
        -- labels = torch.tensor([[1., 0, 1], [0, 1, 0]])
        loss = m(x, nil, tide.tensor({ { 1, 0, 1 }, { 0, 1, 0 } }, { dtype = tide.float32 }))
        assert.are.equal("multi_label_classification", m.config.problem_type)
        assert.is_true(ported.close(loss:item(), 0.735527217, 1e-5))
        -- problem_type="regression" with num_labels 3: MSELoss(logits, labels)
        m.config.problem_type = "regression"
        loss = m(x, nil, tide.tensor({ { 0.5, -0.2, 0.1 }, { 0.3, 0.0, -0.4 } },
            { dtype = tide.float32 }))
        assert.is_true(ported.close(loss:item(), 0.898138344, 1e-5))
    end)

    it("interpolate_pos_encoding on a 12x12 image (bicubic), head_mask, the ValueErrors", function()
        local m = ViTForImageClassification(ViTConfig())
        set_weights(m)
        m:eval()
        local _, logits = m(pixels(1, 12), nil, nil, true)
        assert_close_list({ -0.901406527, -0.49869734, -0.0312973261 }, list(logits), 1e-5,
            "interpolated logits")
        -- head_mask = torch.tensor([1., 0.]): the second head of every layer zeroed
        _, logits = m(x, tide.tensor({ 1, 0 }, { dtype = tide.float32 }))
        assert_close_list({ -0.266213626, 0.145000815, 0.536929071, -0.512613595, -0.113669343,
            0.29973489 }, list(logits), 1e-5, "head_mask logits")
        assert.has_error(function() m(pixels(1, 12)) end,
            "Input image size (12*12) doesn't match model (8*8).")
        assert.has_error(function() m(tide.zeros(1, 1, 8, 8)) end,
            "Make sure that the channel dimension of the pixel values match with the one set " ..
            "in the configuration. Expected 3 but got 1.")
    end)

    it("ViTForMaskedImageModeling: the masked L1 reconstruction loss matches PyTorch", function()
        local m = ViTForMaskedImageModeling(ViTConfig())
        assert.are.equal(41, #m:parameters())
        -- mask_token starts at zeros (_init_weights leaves it)
        assert.are.equal(0, m.vit.embeddings.mask_token:abs():max():item())
        set_weights(m)
        m:eval()
        local rows = { {}, {} }
        for i = 0, 15 do
            rows[1][i + 1] = i % 3 == 0
            rows[2][i + 1] = i % 4 == 1
        end
        local loss, rec = m(x, tide.tensor(rows, { dtype = tide.bool }))
        assert.are.same({ 2, 3, 8, 8 }, rec:size())
        assert.is_true(ported.close(loss:item(), 1.07631016, 1e-5))
        assert.is_true(ported.close(rec:sum():item(), -155.179169, 1e-4))
    end)

    it("AdamW steps on the classification loss: PyTorch's losses, falling", function()
        local m = ViTForImageClassification(ViTConfig())
        set_weights(m)
        m:train()
        local opt = tide.optim.AdamW(m:parameters(), { lr = 1e-2 })
        local labels = tide.tensor({ 1, 3 }, { dtype = tide.long })
        local want = { 1.24524081, 0.997312486, 0.874588132 }
        for s = 1, 3 do
            opt:zero_grad()
            local loss = m(x, nil, labels)
            assert_finite(loss:item(), "loss")
            assert.is_true(ported.close(loss:item(), want[s], 1e-4), "step " .. s)
            loss:backward()
            opt:step()
        end
    end)
end)
