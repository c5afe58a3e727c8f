-- ported_scripts72_spec.lua — facebookresearch/detr: models/transformer.py (Transformer,
-- TransformerEncoder/Decoder, the encoder and decoder layers' forward_post and forward_pre),
-- models/position_encoding.py (PositionEmbeddingSine, PositionEmbeddingLearned),
-- models/backbone.py's BackboneBase/Joiner (a tiny conv stands for the ResNet), models/detr.py
-- (DETR, SetCriterion, PostProcess, MLP), models/matcher.py (HungarianMatcher), util/box_ops.py
-- and util/misc.py's NestedTensor and accuracy, ported line for line at tiny sizes
-- (d_model 16, nhead 2, 1 encoder and 2 decoder layers, 4 queries, 3 classes, a 4x5 feature
-- map). The Python line stands above each Lua line that differs from it. Class labels and the
-- matcher's indices are 1-based. Weights come from a formula over each parameter's PyTorch name
-- (fill below), the same in the PyTorch script that gave the reference values.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite, close = ported.assert_finite, ported.close

---------------------------------------------------------------------------------------------
-- util/box_ops.py
---------------------------------------------------------------------------------------------
local function box_cxcywh_to_xyxy(x)
    -- x_c, y_c, w, h = x.unbind(-1)
    local x_c, y_c, w, h = unpack(x:unbind(-1))
    local b = { (x_c - 0.5 * w), (y_c - 0.5 * h), (x_c + 0.5 * w), (y_c + 0.5 * h) }
    -- return torch.stack(b, dim=-1)
    return tide.stack(b, { dim = -1 })
end

local function box_xyxy_to_cxcywh(x)
    local x0, y0, x1, y1 = unpack(x:unbind(-1))
    local b = { (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0), (y1 - y0) }
    return tide.stack(b, { dim = -1 })
end

-- torchvision.ops.boxes.box_area
local function box_area(boxes)
    -- return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    return (boxes[{ {}, 3 }] - boxes[{ {}, 1 }]) * (boxes[{ {}, 4 }] - boxes[{ {}, 2 }])
end

-- modified from torchvision to also return the union
local function box_iou(boxes1, boxes2)
    local area1 = box_area(boxes1)
    local area2 = box_area(boxes2)
    -- lt = torch.max(boxes1[:, None, :2], boxes2[:, :2])  # [N,M,2]
    local lt = tide.maximum(boxes1[{ {}, tide.newaxis, { 1, 2 } }], boxes2[{ {}, { 1, 2 } }])
    -- rb = torch.min(boxes1[:, None, 2:], boxes2[:, 2:])  # [N,M,2]
    local rb = tide.minimum(boxes1[{ {}, tide.newaxis, { 3, 4 } }], boxes2[{ {}, { 3, 4 } }])
    -- wh = (rb - lt).clamp(min=0)  # [N,M,2]
    local wh = (rb - lt):clamp({ min = 0 })
    -- inter = wh[:, :, 0] * wh[:, :, 1]  # [N,M]
    local inter = wh[{ {}, {}, 1 }] * wh[{ {}, {}, 2 }]
    -- union = area1[:, None] + area2 - inter
    local union = area1[{ {}, tide.newaxis }] + area2 - inter
    local iou = inter / union
    return iou, union
end

local function generalized_box_iou(boxes1, boxes2)
    -- assert (boxes1[:, 2:] >= boxes1[:, :2]).all()
    assert((boxes1[{ {}, { 3, 4 } }]:ge(boxes1[{ {}, { 1, 2 } }])):all():item())
    assert((boxes2[{ {}, { 3, 4 } }]:ge(boxes2[{ {}, { 1, 2 } }])):all():item())
    local iou, union = box_iou(boxes1, boxes2)
    local lt = tide.minimum(boxes1[{ {}, tide.newaxis, { 1, 2 } }], boxes2[{ {}, { 1, 2 } }])
    local rb = tide.maximum(boxes1[{ {}, tide.newaxis, { 3, 4 } }], boxes2[{ {}, { 3, 4 } }])
    local wh = (rb - lt):clamp({ min = 0 })
    local area = wh[{ {}, {}, 1 }] * wh[{ {}, {}, 2 }]
    return iou - (area - union) / area
end

---------------------------------------------------------------------------------------------
-- util/misc.py (the part used here)
---------------------------------------------------------------------------------------------
local NestedTensor = ported.class("NestedTensor")
function NestedTensor:__init__(tensors, mask)
    self.tensors = tensors
    self.mask = mask
end
function NestedTensor:decompose()
    return self.tensors, self.mask
end

-- @torch.no_grad()
-- def accuracy(output, target, topk=(1,)):
local accuracy = tide.no_grad()(function(output, target, topk)
    topk = topk or { 1 }
    if target:numel() == 0 then
        return { tide.zeros({}) }
    end
    -- maxk = max(topk)
    local maxk = math.max(unpack(topk))
    local batch_size = target:size(1)
    -- _, pred = output.topk(maxk, 1, True, True)
    local _, pred = output:topk(maxk, 2, true, true)
    pred = pred:t()
    -- correct = pred.eq(target.view(1, -1).expand_as(pred))
    local correct = pred:eq(target:view(1, -1):expand_as(pred))
    local res = {}
    for _, k in ipairs(topk) do
        -- correct_k = correct[:k].view(-1).float().sum(0)
        local correct_k = correct[{ { 1, k } }]:reshape(-1):float():sum(1)
        res[#res + 1] = correct_k:mul_(100.0 / batch_size)
    end
    return res
end)

---------------------------------------------------------------------------------------------
-- models/position_encoding.py
---------------------------------------------------------------------------------------------
local PositionEmbeddingSine = nn.Module:extend("PositionEmbeddingSine")
-- def __init__(self, num_pos_feats=64, temperature=10000, normalize=False, scale=None):
function PositionEmbeddingSine:init(num_pos_feats, temperature, normalize, scale)
    self.num_pos_feats = num_pos_feats or 64
    self.temperature = temperature or 10000
    self.normalize = normalize or false
    if scale ~= nil and not self.normalize then
        error("normalize should be True if scale is passed")
    end
    self.scale = scale or 2 * math.pi
end

function PositionEmbeddingSine:forward(tensor_list)
    local x = tensor_list.tensors
    local mask = tensor_list.mask
    assert(mask ~= nil)
    -- not_mask = ~mask
    local not_mask = mask:logical_not()
    -- y_embed = not_mask.cumsum(1, dtype=torch.float32)
    local y_embed = not_mask:cumsum(2, { dtype = "float32" })
    local x_embed = not_mask:cumsum(3, { dtype = "float32" })
    if self.normalize then
        local eps = 1e-6
        -- y_embed = y_embed / (y_embed[:, -1:, :] + eps) * self.scale
        y_embed = y_embed / (y_embed[{ {}, { -1, -1 }, {} }] + eps) * self.scale
        -- x_embed = x_embed / (x_embed[:, :, -1:] + eps) * self.scale
        x_embed = x_embed / (x_embed[{ {}, {}, { -1, -1 } }] + eps) * self.scale
    end
    -- dim_t = torch.arange(self.num_pos_feats, dtype=torch.float32, device=x.device)
    local dim_t = tide.arange(self.num_pos_feats, { dtype = "float32", device = x.device })
    -- dim_t = self.temperature ** (2 * torch.div(dim_t, 2, rounding_mode='floor') / ...)
    dim_t = self.temperature ^ (2 * tide.div(dim_t, 2, { rounding_mode = "floor" })
        / self.num_pos_feats)
    -- pos_x = x_embed[:, :, :, None] / dim_t
    local pos_x = x_embed[{ "...", tide.newaxis }] / dim_t
    local pos_y = y_embed[{ "...", tide.newaxis }] / dim_t
    -- pos_x = torch.stack((pos_x[:, :, :, 0::2].sin(), pos_x[:, :, :, 1::2].cos()), dim=4)
    --     .flatten(3)
    pos_x = tide.stack({ pos_x[{ {}, {}, {}, { 1, -1, 2 } }]:sin(),
        pos_x[{ {}, {}, {}, { 2, -1, 2 } }]:cos() }, { dim = 5 }):flatten(4)
    pos_y = tide.stack({ pos_y[{ {}, {}, {}, { 1, -1, 2 } }]:sin(),
        pos_y[{ {}, {}, {}, { 2, -1, 2 } }]:cos() }, { dim = 5 }):flatten(4)
    -- pos = torch.cat((pos_y, pos_x), dim=3).permute(0, 3, 1, 2)
    return tide.cat({ pos_y, pos_x }, { dim = 4 }):permute(1, 4, 2, 3)
end

local PositionEmbeddingLearned = nn.Module:extend("PositionEmbeddingLearned")
function PositionEmbeddingLearned:init(num_pos_feats)
    num_pos_feats = num_pos_feats or 256
    self.row_embed = nn.Embedding(50, num_pos_feats)
    self.col_embed = nn.Embedding(50, num_pos_feats)
    self:reset_parameters()
end
function PositionEmbeddingLearned:reset_parameters()
    nn.init.uniform_(self.row_embed.weight)
    nn.init.uniform_(self.col_embed.weight)
end
function PositionEmbeddingLearned:forward(tensor_list)
    local x = tensor_list.tensors
    -- h, w = x.shape[-2:]
    local h, w = x:size(-2), x:size(-1)
    -- i = torch.arange(w, device=x.device)  (0-based rows of the embedding: 1-based here)
    local i = tide.arange(1, w + 1, { device = x.device })
    local j = tide.arange(1, h + 1, { device = x.device })
    local x_emb = self.col_embed(i)
    local y_emb = self.row_embed(j)
    -- pos = torch.cat([x_emb.unsqueeze(0).repeat(h, 1, 1), y_emb.unsqueeze(1).repeat(1, w, 1)],
    --     dim=-1).permute(2, 0, 1).unsqueeze(0).repeat(x.shape[0], 1, 1, 1)
    -- (Tensor.repeat is t:tile here: `repeat` is a Lua keyword)
    return tide.cat({ x_emb:unsqueeze(1):tile(h, 1, 1), y_emb:unsqueeze(2):tile(1, w, 1) },
        { dim = -1 }):permute(3, 1, 2):unsqueeze(1):tile(x:size(1), 1, 1, 1)
end

---------------------------------------------------------------------------------------------
-- models/transformer.py
---------------------------------------------------------------------------------------------
-- def _get_clones(module, N):
local function _get_clones(module, N)
    -- return nn.ModuleList([copy.deepcopy(module) for i in range(N)])
    local list = {}
    for _ = 1, N do
        list[#list + 1] = tide.deepcopy(module)
    end
    return nn.ModuleList(list)
end

local function _get_activation_fn(activation)
    if activation == "relu" then return F.relu end
    if activation == "gelu" then return F.gelu end
    if activation == "glu" then return F.glu end
    error(string.format("activation should be relu/gelu, not %s.", activation))
end

local function with_pos_embed(_, tensor, pos)
    -- return tensor if pos is None else tensor + pos
    if pos == nil then return tensor end
    return tensor + pos
end

local TransformerEncoderLayer = nn.Module:extend("TransformerEncoderLayer")
function TransformerEncoderLayer:init(d_model, nhead, dim_feedforward, dropout, activation,
                                      normalize_before)
    dim_feedforward, dropout = dim_feedforward or 2048, dropout or 0.1
    -- self.self_attn = nn.MultiheadAttention(d_model, nhead, dropout=dropout)
    self.self_attn = nn.MultiheadAttention(d_model, nhead, { dropout = dropout })
    -- Implementation of Feedforward model
    self.linear1 = nn.Linear(d_model, dim_feedforward)
    self.dropout = nn.Dropout(dropout)
    self.linear2 = nn.Linear(dim_feedforward, d_model)
    self.norm1 = nn.LayerNorm(d_model)
    self.norm2 = nn.LayerNorm(d_model)
    self.dropout1 = nn.Dropout(dropout)
    self.dropout2 = nn.Dropout(dropout)
    self.activation = _get_activation_fn(activation or "relu")
    self.normalize_before = normalize_before or false
end
TransformerEncoderLayer.with_pos_embed = with_pos_embed

function TransformerEncoderLayer:forward_post(src, src_mask, src_key_padding_mask, pos)
    -- q = k = self.with_pos_embed(src, pos)
    local q = self:with_pos_embed(src, pos)
    local k = q
    -- src2 = self.self_attn(q, k, value=src, attn_mask=src_mask,
    --                       key_padding_mask=src_key_padding_mask)[0]
    local src2 = self.self_attn(q, k, { value = src, attn_mask = src_mask,
        key_padding_mask = src_key_padding_mask })
    src = src + self.dropout1(src2)
    src = self.norm1(src)
    src2 = self.linear2(self.dropout(self.activation(self.linear1(src))))
    src = src + self.dropout2(src2)
    src = self.norm2(src)
    return src
end

function TransformerEncoderLayer:forward_pre(src, src_mask, src_key_padding_mask, pos)
    local src2 = self.norm1(src)
    local q = self:with_pos_embed(src2, pos)
    local k = q
    src2 = self.self_attn(q, k, { value = src2, attn_mask = src_mask,
        key_padding_mask = src_key_padding_mask })
    src = src + self.dropout1(src2)
    src2 = self.norm2(src)
    src2 = self.linear2(self.dropout(self.activation(self.linear1(src2))))
    src = src + self.dropout2(src2)
    return src
end

function TransformerEncoderLayer:forward(src, src_mask, src_key_padding_mask, pos)
    if self.normalize_before then
        return self:forward_pre(src, src_mask, src_key_padding_mask, pos)
    end
    return self:forward_post(src, src_mask, src_key_padding_mask, pos)
end

local TransformerDecoderLayer = nn.Module:extend("TransformerDecoderLayer")
function TransformerDecoderLayer:init(d_model, nhead, dim_feedforward, dropout, activation,
                                      normalize_before)
    dim_feedforward, dropout = dim_feedforward or 2048, dropout or 0.1
    self.self_attn = nn.MultiheadAttention(d_model, nhead, { dropout = dropout })
    self.multihead_attn = nn.MultiheadAttention(d_model, nhead, { dropout = dropout })
    self.linear1 = nn.Linear(d_model, dim_feedforward)
    self.dropout = nn.Dropout(dropout)
    self.linear2 = nn.Linear(dim_feedforward, d_model)
    self.norm1 = nn.LayerNorm(d_model)
    self.norm2 = nn.LayerNorm(d_model)
    self.norm3 = nn.LayerNorm(d_model)
    self.dropout1 = nn.Dropout(dropout)
    self.dropout2 = nn.Dropout(dropout)
    self.dropout3 = nn.Dropout(dropout)
    self.activation = _get_activation_fn(activation or "relu")
    self.normalize_before = normalize_before or false
end
TransformerDecoderLayer.with_pos_embed = with_pos_embed

function TransformerDecoderLayer:forward_post(tgt, memory, tgt_mask, memory_mask,
                                              tgt_key_padding_mask, memory_key_padding_mask,
                                              pos, query_pos)
    local q = self:with_pos_embed(tgt, query_pos)
    local k = q
    local tgt2 = self.self_attn(q, k, { value = tgt, attn_mask = tgt_mask,
        key_padding_mask = tgt_key_padding_mask })
    tgt = tgt + self.dropout1(tgt2)
    tgt = self.norm1(tgt)
    -- tgt2 = self.multihead_attn(query=self.with_pos_embed(tgt, query_pos),
    --                            key=self.with_pos_embed(memory, pos), value=memory, ...)[0]
    tgt2 = self.multihead_attn({ query = self:with_pos_embed(tgt, query_pos),
        key = self:with_pos_embed(memory, pos), value = memory, attn_mask = memory_mask,
        key_padding_mask = memory_key_padding_mask })
    tgt = tgt + self.dropout2(tgt2)
    tgt = self.norm2(tgt)
    tgt2 = self.linear2(self.dropout(self.activation(self.linear1(tgt))))
    tgt = tgt + self.dropout3(tgt2)
    tgt = self.norm3(tgt)
    return tgt
end

function TransformerDecoderLayer:forward_pre(tgt, memory, tgt_mask, memory_mask,
                                             tgt_key_padding_mask, memory_key_padding_mask,
                                             pos, query_pos)
    local tgt2 = self.norm1(tgt)
    local q = self:with_pos_embed(tgt2, query_pos)
    local k = q
    tgt2 = self.self_attn(q, k, { value = tgt2, attn_mask = tgt_mask,
        key_padding_mask = tgt_key_padding_mask })
    tgt = tgt + self.dropout1(tgt2)
    tgt2 = self.norm2(tgt)
    tgt2 = self.multihead_attn({ query = self:with_pos_embed(tgt2, query_pos),
        key = self:with_pos_embed(memory, pos), value = memory, attn_mask = memory_mask,
        key_padding_mask = memory_key_padding_mask })
    tgt = tgt + self.dropout2(tgt2)
    tgt2 = self.norm3(tgt)
    tgt2 = self.linear2(self.dropout(self.activation(self.linear1(tgt2))))
    tgt = tgt + self.dropout3(tgt2)
    return tgt
end

function TransformerDecoderLayer:forward(...)
    if self.normalize_before then
        return self:forward_pre(...)
    end
    return self:forward_post(...)
end

local TransformerEncoder = nn.Module:extend("TransformerEncoder")
function TransformerEncoder:init(encoder_layer, num_layers, norm)
    self.layers = _get_clones(encoder_layer, num_layers)
    self.num_layers = num_layers
    self.norm = norm
end
-- def forward(self, src, mask=None, src_key_padding_mask=None, pos=None):
function TransformerEncoder:forward(src, opts)
    opts = opts or {}
    local output = src
    -- for layer in self.layers:
    for _, layer in ipairs(self.layers) do
        output = layer(output, opts.mask, opts.src_key_padding_mask, opts.pos)
    end
    if self.norm ~= nil then
        output = self.norm(output)
    end
    return output
end

local TransformerDecoder = nn.Module:extend("TransformerDecoder")
function TransformerDecoder:init(decoder_layer, num_layers, norm, return_intermediate)
    self.layers = _get_clones(decoder_layer, num_layers)
    self.num_layers = num_layers
    self.norm = norm
    self.return_intermediate = return_intermediate or false
end
function TransformerDecoder:forward(tgt, memory, o)
    o = o or {}
    local output = tgt
    local intermediate = {}
    for _, layer in ipairs(self.layers) do
        output = layer(output, memory, o.tgt_mask, o.memory_mask, o.tgt_key_padding_mask,
            o.memory_key_padding_mask, o.pos, o.query_pos)
        if self.return_intermediate then
            intermediate[#intermediate + 1] = self.norm(output)
        end
    end
    if self.norm ~= nil then
        output = self.norm(output)
        if self.return_intermediate then
            -- intermediate.pop(); intermediate.append(output)
            intermediate[#intermediate] = output
        end
    end
    if self.return_intermediate then
        return tide.stack(intermediate)
    end
    return output:unsqueeze(1)
end

local Transformer = nn.Module:extend("Transformer")
function Transformer:init(o)
    -- def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
    --     dim_feedforward=2048, dropout=0.1, activation="relu", normalize_before=False,
    --     return_intermediate_dec=False):
    local d_model, nhead = o.d_model or 512, o.nhead or 8
    local encoder_layer = TransformerEncoderLayer(d_model, nhead, o.dim_feedforward,
        o.dropout, o.activation, o.normalize_before)
    -- encoder_norm = nn.LayerNorm(d_model) if normalize_before else None
    local encoder_norm = o.normalize_before and nn.LayerNorm(d_model) or nil
    self.encoder = TransformerEncoder(encoder_layer, o.num_encoder_layers or 6, encoder_norm)
    local decoder_layer = TransformerDecoderLayer(d_model, nhead, o.dim_feedforward,
        o.dropout, o.activation, o.normalize_before)
    local decoder_norm = nn.LayerNorm(d_model)
    self.decoder = TransformerDecoder(decoder_layer, o.num_decoder_layers or 6, decoder_norm,
        o.return_intermediate_dec)
    self:_reset_parameters()
    self.d_model = d_model
    self.nhead = nhead
end

function Transformer:_reset_parameters()
    for _, p in ipairs(self:parameters()) do
        if p:dim() > 1 then
            nn.init.xavier_uniform_(p)
        end
    end
end

function Transformer:forward(src, mask, query_embed, pos_embed)
    -- flatten NxCxHxW to HWxNxC
    -- bs, c, h, w = src.shape
    local bs, c, h, w = unpack(src:size())
    -- src = src.flatten(2).permute(2, 0, 1)
    src = src:flatten(3):permute(3, 1, 2)
    pos_embed = pos_embed:flatten(3):permute(3, 1, 2)
    -- query_embed = query_embed.unsqueeze(1).repeat(1, bs, 1)
    query_embed = query_embed:unsqueeze(2):tile(1, bs, 1)
    mask = mask:flatten(2)
    local tgt = tide.zeros_like(query_embed)
    local memory = self.encoder(src, { src_key_padding_mask = mask, pos = pos_embed })
    local hs = self.decoder(tgt, memory, { memory_key_padding_mask = mask, pos = pos_embed,
        query_pos = query_embed })
    -- return hs.transpose(1, 2), memory.permute(1, 2, 0).view(bs, c, h, w)
    return hs:transpose(2, 3), memory:permute(2, 3, 1):view(bs, c, h, w)
end

---------------------------------------------------------------------------------------------
-- models/backbone.py (a tiny conv stands for the ResNet body) and models/detr.py
---------------------------------------------------------------------------------------------
local Backbone = nn.Module:extend("Backbone")
function Backbone:init()
    self.body = nn.Conv2d(3, 8, 3, { stride = 2, padding = 1 })
    self.num_channels = 8
end
function Backbone:forward(tensor_list)
    local x = self.body(tensor_list.tensors)
    local m = tensor_list.mask
    -- mask = F.interpolate(m[None].float(), size=x.shape[-2:]).to(torch.bool)[0]
    local mask = F.interpolate(m[{ tide.newaxis }]:float(),
        { size = { x:size(-2), x:size(-1) } }):to("bool")[1]
    return { NestedTensor(x, mask) }
end

-- class Joiner(nn.Sequential):
local Joiner = nn.Sequential:extend("Joiner")
function Joiner:forward(tensor_list)
    local xs = self[1](tensor_list)
    local out, pos = {}, {}
    for _, x in ipairs(xs) do
        out[#out + 1] = x
        -- pos.append(self[1](x).to(x.tensors.dtype))
        pos[#pos + 1] = self[2](x):to(x.tensors.dtype)
    end
    return out, pos
end

local MLP = nn.Module:extend("MLP")
function MLP:init(input_dim, hidden_dim, output_dim, num_layers)
    self.num_layers = num_layers
    -- h = [hidden_dim] * (num_layers - 1)
    -- self.layers = nn.ModuleList(nn.Linear(n, k)
    --                             for n, k in zip([input_dim] + h, h + [output_dim]))
    local layers = {}
    for i = 1, num_layers do
        layers[i] = nn.Linear(i == 1 and input_dim or hidden_dim,
            i == num_layers and output_dim or hidden_dim)
    end
    self.layers = nn.ModuleList(layers)
end
function MLP:forward(x)
    for i, layer in ipairs(self.layers) do
        -- x = F.relu(layer(x)) if i < self.num_layers - 1 else layer(x)
        if i < self.num_layers then x = F.relu(layer(x)) else x = layer(x) end
    end
    return x
end

local DETR = nn.Module:extend("DETR")
function DETR:init(backbone, transformer, num_classes, num_queries, aux_loss)
    self.num_queries = num_queries
    self.transformer = transformer
    local hidden_dim = transformer.d_model
    self.class_embed = nn.Linear(hidden_dim, num_classes + 1)
    self.bbox_embed = MLP(hidden_dim, hidden_dim, 4, 3)
    self.query_embed = nn.Embedding(num_queries, hidden_dim)
    self.input_proj = nn.Conv2d(backbone.num_channels, hidden_dim, { kernel_size = 1 })
    self.backbone = backbone
    self.aux_loss = aux_loss or false
end
function DETR:forward(samples)
    local features, pos = self.backbone(samples)
    -- src, mask = features[-1].decompose()
    local src, mask = features[#features]:decompose()
    assert(mask ~= nil)
    -- hs = self.transformer(self.input_proj(src), mask, self.query_embed.weight, pos[-1])[0]
    local hs = self.transformer(self.input_proj(src), mask, self.query_embed.weight, pos[#pos])
    local outputs_class = self.class_embed(hs)
    local outputs_coord = self.bbox_embed(hs):sigmoid()
    -- out = {'pred_logits': outputs_class[-1], 'pred_boxes': outputs_coord[-1]}
    local out = { pred_logits = outputs_class[-1], pred_boxes = outputs_coord[-1] }
    if self.aux_loss then
        out.aux_outputs = self:_set_aux_loss(outputs_class, outputs_coord)
    end
    return out
end
function DETR:_set_aux_loss(outputs_class, outputs_coord)
    -- return [{'pred_logits': a, 'pred_boxes': b}
    --         for a, b in zip(outputs_class[:-1], outputs_coord[:-1])]
    local res = {}
    for i = 1, outputs_class:size(1) - 1 do
        res[i] = { pred_logits = outputs_class[i], pred_boxes = outputs_coord[i] }
    end
    return res
end

---------------------------------------------------------------------------------------------
-- models/matcher.py
---------------------------------------------------------------------------------------------
-- GAP: scipy.optimize.linear_sum_assignment has no tide counterpart; at these sizes (4 queries,
-- at most 2 targets) every injective query choice is tried, the rows returned sorted as scipy's
local function linear_sum_assignment(c)
    local nq, nt = c:size(1), c:size(2)
    local best, best_perm = math.huge, nil
    local used, perm = {}, {}
    local function walk(j, s)
        if j > nt then
            if s < best then best, best_perm = s, { unpack(perm) } end
            return
        end
        for q = 1, nq do
            if not used[q] then
                used[q], perm[j] = true, q
                walk(j + 1, s + c[q][j]:item())
                used[q] = false
            end
        end
    end
    walk(1, 0)
    local rows, cols = {}, {}
    for q = 1, nq do
        for j = 1, nt do
            if best_perm[j] == q then rows[#rows + 1], cols[#cols + 1] = q, j end
        end
    end
    return rows, cols
end

local HungarianMatcher = nn.Module:extend("HungarianMatcher")
function HungarianMatcher:init(cost_class, cost_bbox, cost_giou)
    self.cost_class, self.cost_bbox, self.cost_giou = cost_class or 1, cost_bbox or 1,
        cost_giou or 1
    assert(self.cost_class ~= 0 or self.cost_bbox ~= 0 or self.cost_giou ~= 0,
        "all costs cant be 0")
end
-- @torch.no_grad()
HungarianMatcher.forward = tide.no_grad()(function(self, outputs, targets)
    -- bs, num_queries = outputs["pred_logits"].shape[:2]
    local bs, num_queries = outputs.pred_logits:size(1), outputs.pred_logits:size(2)
    -- out_prob = outputs["pred_logits"].flatten(0, 1).softmax(-1)
    local out_prob = outputs.pred_logits:flatten(1, 2):softmax(-1)
    local out_bbox = outputs.pred_boxes:flatten(1, 2)
    -- tgt_ids = torch.cat([v["labels"] for v in targets])
    local ids, bbs = {}, {}
    for i, v in ipairs(targets) do ids[i], bbs[i] = v.labels, v.boxes end
    local tgt_ids = tide.cat(ids)
    local tgt_bbox = tide.cat(bbs)
    -- cost_class = -out_prob[:, tgt_ids]
    local cost_class = -out_prob[{ {}, tgt_ids }]
    -- cost_bbox = torch.cdist(out_bbox, tgt_bbox, p=1)
    local cost_bbox = tide.cdist(out_bbox, tgt_bbox, 1)
    local cost_giou = -generalized_box_iou(box_cxcywh_to_xyxy(out_bbox),
        box_cxcywh_to_xyxy(tgt_bbox))
    local C = self.cost_bbox * cost_bbox + self.cost_class * cost_class
        + self.cost_giou * cost_giou
    C = C:view(bs, num_queries, -1):cpu()
    self.last_C = C
    -- sizes = [len(v["boxes"]) for v in targets]
    local sizes = {}
    for i, v in ipairs(targets) do sizes[i] = #v.boxes end
    -- indices = [linear_sum_assignment(c[i]) for i, c in enumerate(C.split(sizes, -1))]
    -- return [(torch.as_tensor(i, dtype=torch.int64), torch.as_tensor(j, dtype=torch.int64))
    local indices = {}
    for i, c in ipairs(C:split(sizes, -1)) do
        local rows, cols = linear_sum_assignment(c[i])
        indices[i] = { tide.as_tensor(rows, { dtype = "int64" }),
            tide.as_tensor(cols, { dtype = "int64" }) }
    end
    return indices
end)

---------------------------------------------------------------------------------------------
-- models/detr.py SetCriterion and PostProcess
---------------------------------------------------------------------------------------------
local SetCriterion = nn.Module:extend("SetCriterion")
function SetCriterion:init(num_classes, matcher, weight_dict, eos_coef, losses)
    self.num_classes = num_classes
    self.matcher = matcher
    self.weight_dict = weight_dict
    self.eos_coef = eos_coef
    self.losses = losses
    local empty_weight = tide.ones(self.num_classes + 1)
    -- empty_weight[-1] = self.eos_coef
    empty_weight[-1] = self.eos_coef
    self:register_buffer("empty_weight", empty_weight)
end

function SetCriterion:loss_labels(outputs, targets, indices, _, log)
    if log == nil then log = true end
    local src_logits = outputs.pred_logits
    local idx = self:_get_src_permutation_idx(indices)
    -- target_classes_o = torch.cat([t["labels"][J] for t, (_, J) in zip(targets, indices)])
    local parts = {}
    for i, t in ipairs(targets) do parts[i] = t.labels[indices[i][2]] end
    local target_classes_o = tide.cat(parts)
    -- target_classes = torch.full(src_logits.shape[:2], self.num_classes, dtype=torch.int64)
    -- (the no-object class, 0-based num_classes, is num_classes + 1 here)
    local target_classes = tide.full({ src_logits:size(1), src_logits:size(2) },
        self.num_classes + 1, { dtype = "int64", device = src_logits.device })
    -- target_classes[idx] = target_classes_o
    target_classes[idx] = target_classes_o
    -- loss_ce = F.cross_entropy(src_logits.transpose(1, 2), target_classes, self.empty_weight)
    local loss_ce = F.cross_entropy(src_logits:transpose(2, 3), target_classes,
        { weight = self.empty_weight })
    local losses = { loss_ce = loss_ce }
    if log then
        -- losses['class_error'] = 100 - accuracy(src_logits[idx], target_classes_o)[0]
        losses.class_error = 100 - accuracy(src_logits[idx], target_classes_o)[1]
    end
    return losses
end

-- @torch.no_grad()
SetCriterion.loss_cardinality = tide.no_grad()(function(_, outputs, targets)
    local pred_logits = outputs.pred_logits
    -- tgt_lengths = torch.as_tensor([len(v["labels"]) for v in targets], device=device)
    local lens = {}
    for i, v in ipairs(targets) do lens[i] = #v.labels end
    local tgt_lengths = tide.as_tensor(lens, { device = pred_logits.device })
    -- card_pred = (pred_logits.argmax(-1) != pred_logits.shape[-1] - 1).sum(1)
    -- (the no-object class is index shape[-1] here)
    local card_pred = pred_logits:argmax(-1):ne(pred_logits:size(-1)):sum(2)
    local card_err = F.l1_loss(card_pred:float(), tgt_lengths:float())
    return { cardinality_error = card_err }
end)

function SetCriterion:loss_boxes(outputs, targets, indices, num_boxes)
    local idx = self:_get_src_permutation_idx(indices)
    local src_boxes = outputs.pred_boxes[idx]
    local parts = {}
    for k, t in ipairs(targets) do parts[k] = t.boxes[indices[k][2]] end
    local target_boxes = tide.cat(parts, { dim = 1 })
    local loss_bbox = F.l1_loss(src_boxes, target_boxes, { reduction = "none" })
    local losses = {}
    losses.loss_bbox = loss_bbox:sum() / num_boxes
    -- loss_giou = 1 - torch.diag(box_ops.generalized_box_iou(...))
    local loss_giou = 1 - tide.diag(generalized_box_iou(box_cxcywh_to_xyxy(src_boxes),
        box_cxcywh_to_xyxy(target_boxes)))
    losses.loss_giou = loss_giou:sum() / num_boxes
    return losses
end

function SetCriterion:_get_src_permutation_idx(indices)
    -- batch_idx = torch.cat([torch.full_like(src, i) for i, (src, _) in enumerate(indices)])
    local b, s = {}, {}
    for i, pair in ipairs(indices) do
        b[i] = tide.full_like(pair[1], i)
        s[i] = pair[1]
    end
    -- return batch_idx, src_idx  (a tuple index: a Lua list of the two)
    return { tide.cat(b), tide.cat(s) }
end

function SetCriterion:get_loss(loss, outputs, targets, indices, num_boxes, ...)
    local loss_map = { labels = self.loss_labels, cardinality = self.loss_cardinality,
        boxes = self.loss_boxes }
    assert(loss_map[loss], "do you really want to compute " .. loss .. " loss?")
    return loss_map[loss](self, outputs, targets, indices, num_boxes, ...)
end

function SetCriterion:forward(outputs, targets)
    -- outputs_without_aux = {k: v for k, v in outputs.items() if k != 'aux_outputs'}
    local outputs_without_aux = { pred_logits = outputs.pred_logits,
        pred_boxes = outputs.pred_boxes }
    local indices = self.matcher(outputs_without_aux, targets)
    self.last_indices = indices
    local num_boxes = 0
    for _, t in ipairs(targets) do num_boxes = num_boxes + #t.labels end
    num_boxes = tide.as_tensor({ num_boxes }, { dtype = "float32" })
    -- num_boxes = torch.clamp(num_boxes / get_world_size(), min=1).item()
    num_boxes = tide.clamp(num_boxes / 1, { min = 1 }):item()
    local losses = {}
    for _, loss in ipairs(self.losses) do
        for k, v in pairs(self:get_loss(loss, outputs, targets, indices, num_boxes)) do
            losses[k] = v
        end
    end
    if outputs.aux_outputs then
        -- for i, aux_outputs in enumerate(outputs['aux_outputs']):  (i 0-based in the names)
        for i, aux_outputs in ipairs(outputs.aux_outputs) do
            indices = self.matcher(aux_outputs, targets)
            for _, loss in ipairs(self.losses) do
                local log = nil
                if loss == "labels" then log = false end
                local l_dict = self:get_loss(loss, aux_outputs, targets, indices, num_boxes, log)
                for k, v in pairs(l_dict) do losses[k .. "_" .. (i - 1)] = v end
            end
        end
    end
    return losses
end

local PostProcess = nn.Module:extend("PostProcess")
PostProcess.forward = tide.no_grad()(function(_, outputs, target_sizes)
    local out_logits, out_bbox = outputs.pred_logits, outputs.pred_boxes
    assert(#out_logits == #target_sizes)
    assert(target_sizes:size(2) == 2)
    local prob = F.softmax(out_logits, -1)
    -- scores, labels = prob[..., :-1].max(-1)
    local scores, labels = prob[{ "...", { 1, -2 } }]:max(-1)
    local boxes = box_cxcywh_to_xyxy(out_bbox)
    local img_h, img_w = unpack(target_sizes:unbind(2))
    local scale_fct = tide.stack({ img_w, img_h, img_w, img_h }, { dim = 2 })
    -- boxes = boxes * scale_fct[:, None, :]
    boxes = boxes * scale_fct[{ {}, tide.newaxis, {} }]
    local results = {}
    for i = 1, scores:size(1) do
        results[i] = { scores = scores[i], labels = labels[i], boxes = boxes[i] }
    end
    return results
end)

---------------------------------------------------------------------------------------------
-- checks against PyTorch 1.13 (the script: the same classes, the same fills and inputs)
---------------------------------------------------------------------------------------------
-- PyTorch's parameter name: every all-digit part one less (tide's lists count from 1)
local function torch_name(name)
    return (("." .. name .. "."):gsub("%.(%d+)%f[.]", function(d)
        return "." .. (tonumber(d) - 1)
    end)):sub(2, -2)
end
local function seed_of(name)
    local s = 0
    for i = 1, #name do s = s + i * name:byte(i) end
    return s % 97
end
-- p = 0.3 sin(0.37 k + seed(name)) (k = 1.. row-major), plus 1 for the norms' weights
local fill = tide.no_grad()(function(model)
    for _, np in ipairs(model:named_parameters()) do
        local p, tn, v = np[2], torch_name(np[1]), {}
        local add = (tn:find("norm") and tn:sub(-6) == "weight") and 1 or 0
        for k = 1, p:numel() do v[k] = 0.3 * math.sin(0.37 * k + seed_of(tn)) + add end
        p:copy_(tide.tensor(v):view(p:size()))
    end
end)
-- two numbers summing up a tensor: sum(x_k sin(0.1 k + 1)) and sum |x_k|
local function sig(x)
    x = x:detach():double():reshape(-1)
    local k = tide.arange(1, x:numel() + 1, { dtype = "float64" })
    return { (x * (0.1 * k + 1):sin()):sum():item(), x:abs():sum():item() }
end
local function assert_sig(want, x, what)
    local got = sig(x)
    for i = 1, 2 do
        assert(close(got[i], want[i], 2e-4), string.format("%s[%d]: %.7g, PyTorch %.7g",
            what, i, got[i], want[i]))
    end
end
local REF = {
    pos_sine = { -0.2905747, 352.4646 }, pos_learned = { 0.06029979, 120.115 },
    hs = { -0.1763023, 233.8342 }, memory = { -18.57134, 560.98 },
    hs_pre = { -0.07860389, 212.3854 },
    pred_logits = { -1.847551, 10.2718 }, pred_boxes = { 3.746181, 12.30166 },
    aux_logits = { -11.75025, 39.14972 }, aux_boxes = { 1.087123, 3.636398 },
    giou = { 3.638808, 6.173316 },
    post_scores1 = { 1.339144, 1.42 }, post_boxes1 = { 54.39232, 63.57312 },
    post_scores2 = { 1.337374, 1.418122 }, post_boxes2 = { 39.10089, 45.72767 },
    cost = { 1.005959, 1.389539, 0.161746, 1.005627, 1.390339, 0.162413, 1.005193, 1.391358,
        0.163265, 1.004717, 1.392452, 0.164184, 0.999544, 1.402882, 0.1731, 0.999232, 1.403604,
        0.173704, 0.998854, 1.404467, 0.174427, 0.998461, 1.40535, 0.175169 },
    losses = { loss_ce = 1.374388, class_error = 66.66667, loss_bbox = 0.3293928,
        loss_giou = 0.7430013, cardinality_error = 2.5, loss_ce_0 = 1.421466,
        loss_bbox_0 = 1.079138, loss_giou_0 = 1.647211, cardinality_error_0 = 1.5 },
    steps = { 14.61893081665039, 13.624133110046387, 12.485655784606934 },
}

local function image()
    local k = tide.arange(1, 2 * 3 * 8 * 10 + 1, { dtype = "float64" })
    local x = (0.05 * k):sin():view(2, 3, 8, 10):float()
    local mask = tide.zeros({ 2, 8, 10 }, { dtype = "bool" })
    -- mask[1, 6:, :] = True; mask[1, :, 7:] = True
    mask[{ 2, { 7, -1 }, {} }] = true
    mask[{ 2, {}, { 8, -1 } }] = true
    -- x[1][:, mask[1]] = 0
    x[2]:masked_fill_(mask[2]:unsqueeze(1), 0)
    return NestedTensor(x, mask)
end

local function build(normalize_before)
    return Transformer({ d_model = 16, nhead = 2, num_encoder_layers = 1,
        num_decoder_layers = 2, dim_feedforward = 32, dropout = 0.0,
        normalize_before = normalize_before, return_intermediate_dec = true })
end

describe("facebookresearch/detr model parts", function()
    local samples = image()
    local pe = PositionEmbeddingSine(8, nil, true)
    local bb = Joiner(Backbone(), pe)
    bb.num_channels = 8
    local model = DETR(bb, build(false), 3, 4, true)
    fill(model)
    model:eval()
    local targets = {
        { labels = tide.tensor({ 2, 1 }), boxes = tide.tensor({ { 0.3, 0.4, 0.2, 0.3 },
            { 0.6, 0.5, 0.4, 0.2 } }) },
        { labels = tide.tensor({ 3 }), boxes = tide.tensor({ { 0.5, 0.5, 0.3, 0.4 } }) },
    }
    local weight_dict = { loss_ce = 1, loss_bbox = 5, loss_giou = 2, loss_ce_0 = 1,
        loss_bbox_0 = 5, loss_giou_0 = 2 }
    local crit = SetCriterion(3, HungarianMatcher(1, 5, 2), weight_dict, 0.1,
        { "labels", "boxes", "cardinality" })

    it("backbone mask, sine and learned position embeddings match PyTorch", function()
        local feats, pos = bb(samples)
        assert.same({ 2, 4, 5 }, feats[1].mask:size())
        assert.same({ 0, 0, 0, 0, 1 }, feats[1].mask[2][1]:long():totable())
        assert.same({ 1, 1, 1, 1, 1 }, feats[1].mask[2][4]:long():totable())
        assert.same({ 2, 16, 4, 5 }, pos[1]:size())
        assert_sig(REF.pos_sine, pos[1], "pos_sine")
        local pl = PositionEmbeddingLearned(8)
        fill(pl)
        assert_sig(REF.pos_learned, pl(feats[1]), "pos_learned")
    end)

    it("the transformer's hs (post- and pre-norm) and memory match PyTorch", function()
        local feats, pos = bb(samples)
        local src, mask = feats[1]:decompose()
        local hs, mem = model.transformer(model.input_proj(src), mask,
            model.query_embed.weight, pos[1])
        assert.same({ 2, 2, 4, 16 }, hs:size())
        assert.same({ 2, 16, 4, 5 }, mem:size())
        assert_sig(REF.hs, hs, "hs")
        assert_sig(REF.memory, mem, "memory")
        local trp = build(true)
        fill(trp)
        trp:eval()
        assert_sig(REF.hs_pre, (trp(model.input_proj(src), mask, model.query_embed.weight,
            pos[1])), "hs_pre")
    end)

    it("DETR's outputs, giou, matcher, losses and PostProcess match PyTorch", function()
        local out = model(samples)
        assert_sig(REF.pred_logits, out.pred_logits, "pred_logits")
        assert_sig(REF.pred_boxes, out.pred_boxes, "pred_boxes")
        assert.equal(1, #out.aux_outputs)
        assert_sig(REF.aux_logits, out.aux_outputs[1].pred_logits, "aux_logits")
        assert_sig(REF.aux_boxes, out.aux_outputs[1].pred_boxes, "aux_boxes")
        local ob = out.pred_boxes:flatten(1, 2)
        local tb = tide.cat({ targets[1].boxes, targets[2].boxes })
        assert_sig(REF.giou, generalized_box_iou(box_cxcywh_to_xyxy(ob), box_cxcywh_to_xyxy(tb)),
            "giou")
        local back = box_xyxy_to_cxcywh(box_cxcywh_to_xyxy(tb))
        assert.is_true((back - tb):abs():max():item() < 1e-6)
        crit.matcher(out, targets)
        ported.assert_close_list(REF.cost, crit.matcher.last_C:reshape(-1):totable(), 1e-4,
            "cost")
        local losses = crit(out, targets)
        local ind = crit.last_indices
        assert.same({ { 1, 4 }, { 2, 1 } }, { ind[1][1]:totable(), ind[1][2]:totable() })
        assert.same({ { 1 }, { 1 } }, { ind[2][1]:totable(), ind[2][2]:totable() })
        for k, want in pairs(REF.losses) do
            assert(losses[k], "missing loss " .. k)
            assert(close(losses[k]:item(), want, 2e-4), string.format("%s: %.7g, PyTorch %.7g",
                k, losses[k]:item(), want))
        end
        local post = PostProcess()(out, tide.tensor({ { 8, 10 }, { 6, 7 } }))
        for i = 1, 2 do
            assert.same({ 1, 1, 1, 1 }, post[i].labels:totable())
            assert_sig(REF["post_scores" .. i], post[i].scores, "scores")
            assert_sig(REF["post_boxes" .. i], post[i].boxes, "boxes")
        end
    end)

    it("2 AdamW steps of the criterion's total loss match PyTorch and fall", function()
        local opt = tide.optim.AdamW(model:parameters(), { lr = 2e-3, weight_decay = 1e-4 })
        model:train()
        local seen = {}
        for step = 1, 3 do
            local ld = crit(model(samples), targets)
            -- loss = sum(ld[k] * weight_dict[k] for k in ld.keys() if k in weight_dict)
            local loss = 0
            for k, v in pairs(ld) do
                if weight_dict[k] then loss = v * weight_dict[k] + loss end
            end
            seen[step] = loss:item()
            assert_finite(seen[step], "loss")
            assert(close(seen[step], REF.steps[step], 1e-3), string.format(
                "step %d: %.7g, PyTorch %.7g", step, seen[step], REF.steps[step]))
            if step < 3 then
                opt:zero_grad()
                loss:backward()
                opt:step()
            end
        end
        assert.is_true(seen[3] < seen[2] and seen[2] < seen[1])
    end)
end)
