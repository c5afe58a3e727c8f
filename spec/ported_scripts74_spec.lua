-- ported_scripts74_spec.lua — pytorch/vision 0.14's detection utilities, ported line for line at
-- tiny sizes and checked against PyTorch 1.13 numbers (the Python pasted into the venv, which has
-- no torchvision): torchvision/models/detection/_utils.py (BalancedPositiveNegativeSampler,
-- encode_boxes, BoxCoder, Matcher, SSDMatcher), anchor_utils.py (AnchorGenerator),
-- image_list.py (ImageList) and rpn.py (RPNHead, permute_and_flatten,
-- concat_box_prediction_layers, RegionProposalNetwork), over torchvision/ops/boxes.py's box_iou,
-- clip_boxes_to_image, remove_small_boxes and batched_nms (copied from ported_scripts51_spec.lua;
-- nms is torchvision's C++ kernel, written as the greedy loop). The Python line stands above
-- each Lua line that differs from it. Dims and indices are 1-based: a Matcher's match is a gt
-- index 1..M, its negative codes (-1, -2) stay as they are; box coordinates are unchanged.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite, assert_close_list = ported.assert_finite, ported.assert_close_list
local class = ported.class

local function flat(t) return t:reshape(-1):tolist() end

---------------------------------------------------------------------------------------------
-- torchvision/ops/boxes.py (the lines ported_scripts51_spec.lua ports)
---------------------------------------------------------------------------------------------
local box_ops = {}

function box_ops.box_area(boxes)
    -- return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    return (boxes[{ {}, 3 }] - boxes[{ {}, 1 }]) * (boxes[{ {}, 4 }] - boxes[{ {}, 2 }])
end

function box_ops.box_iou(boxes1, boxes2)
    local area1, area2 = box_ops.box_area(boxes1), box_ops.box_area(boxes2)
    -- lt = torch.max(boxes1[:, None, :2], boxes2[:, :2])
    local lt = tide.max(boxes1[{ {}, tide.newaxis, { 1, 2 } }], boxes2[{ {}, { 1, 2 } }])
    -- rb = torch.min(boxes1[:, None, 2:], boxes2[:, 2:])
    local rb = tide.min(boxes1[{ {}, tide.newaxis, { 3, -1 } }], boxes2[{ {}, { 3, -1 } }])
    local wh = (rb - lt):clamp({ min = 0 })
    -- inter = wh[:, :, 0] * wh[:, :, 1]
    local inter = wh[{ {}, {}, 1 }] * wh[{ {}, {}, 2 }]
    -- union = area1[:, None] + area2 - inter
    local union = area1[{ {}, tide.newaxis }] + area2 - inter
    return inter / union
end

-- def nms(boxes, scores, iou_threshold): torch.ops.torchvision.nms (C++), here the greedy loop
function box_ops.nms(boxes, scores, iou_threshold)
    local _, order = scores:sort({ descending = true })
    order = order:tolist()
    local iou = box_ops.box_iou(boxes, boxes):tolist()
    local suppressed, keep = {}, {}
    for _, i in ipairs(order) do
        if not suppressed[i] then
            keep[#keep + 1] = i
            for _, j in ipairs(order) do
                if not suppressed[j] and j ~= i and iou[i][j] > iou_threshold then
                    suppressed[j] = true
                end
            end
        end
    end
    return tide.tensor(keep, { dtype = tide.int64 })
end

-- def _batched_nms_coordinate_trick(boxes, scores, idxs, iou_threshold):
function box_ops.batched_nms(boxes, scores, idxs, iou_threshold)
    if boxes:numel() == 0 then
        return tide.empty({ 0 }, { dtype = tide.int64 })
    end
    local max_coordinate = boxes:max()
    -- offsets = idxs.to(boxes) * (max_coordinate + torch.tensor(1).to(boxes))
    local offsets = idxs:to(boxes) * (max_coordinate + tide.tensor(1):to(boxes))
    -- boxes_for_nms = boxes + offsets[:, None]
    local boxes_for_nms = boxes + offsets[{ {}, tide.newaxis }]
    return box_ops.nms(boxes_for_nms, scores, iou_threshold)
end

function box_ops.remove_small_boxes(boxes, min_size)
    -- ws, hs = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    local ws, hs = boxes[{ {}, 3 }] - boxes[{ {}, 1 }], boxes[{ {}, 4 }] - boxes[{ {}, 2 }]
    -- keep = (ws >= min_size) & (hs >= min_size)
    local keep = ws:ge(min_size):logical_and(hs:ge(min_size))
    -- keep = torch.where(keep)[0]
    return tide.where(keep)[1]
end

function box_ops.clip_boxes_to_image(boxes, size)
    local dim = boxes:dim()
    -- boxes_x = boxes[..., 0::2]
    local boxes_x = boxes[{ "...", { 1, -1, 2 } }]
    -- boxes_y = boxes[..., 1::2]
    local boxes_y = boxes[{ "...", { 2, -1, 2 } }]
    local height, width = unpack(size)
    boxes_x = boxes_x:clamp({ min = 0, max = width })
    boxes_y = boxes_y:clamp({ min = 0, max = height })
    -- clipped_boxes = torch.stack((boxes_x, boxes_y), dim=dim)
    local clipped_boxes = tide.stack({ boxes_x, boxes_y }, { dim = dim + 1 })
    return clipped_boxes:reshape(boxes.shape)
end

---------------------------------------------------------------------------------------------
-- torchvision/models/detection/_utils.py
---------------------------------------------------------------------------------------------
local det_utils = {}

-- class BalancedPositiveNegativeSampler:
local BalancedPositiveNegativeSampler = class("BalancedPositiveNegativeSampler")
det_utils.BalancedPositiveNegativeSampler = BalancedPositiveNegativeSampler

function BalancedPositiveNegativeSampler:__init__(batch_size_per_image, positive_fraction)
    self.batch_size_per_image = batch_size_per_image
    self.positive_fraction = positive_fraction
end

function BalancedPositiveNegativeSampler:__call__(matched_idxs)
    local pos_idx, neg_idx = {}, {}
    for _, matched_idxs_per_image in ipairs(matched_idxs) do
        -- positive = torch.where(matched_idxs_per_image >= 1)[0]
        local positive = tide.where(matched_idxs_per_image:ge(1))[1]
        -- negative = torch.where(matched_idxs_per_image == 0)[0]
        local negative = tide.where(matched_idxs_per_image:eq(0))[1]
        -- num_pos = int(self.batch_size_per_image * self.positive_fraction)
        local num_pos = math.floor(self.batch_size_per_image * self.positive_fraction)
        num_pos = math.min(positive:numel(), num_pos)
        local num_neg = self.batch_size_per_image - num_pos
        num_neg = math.min(negative:numel(), num_neg)
        -- perm1 = torch.randperm(positive.numel(), device=positive.device)[:num_pos]
        local perm1 = tide.randperm(positive:numel())[{ { 1, num_pos } }]
        local perm2 = tide.randperm(negative:numel())[{ { 1, num_neg } }]
        -- pos_idx_per_image = positive[perm1]
        local pos_idx_per_image = positive[perm1]
        local neg_idx_per_image = negative[perm2]
        -- pos_idx_per_image_mask = torch.zeros_like(matched_idxs_per_image, dtype=torch.uint8)
        local u8 = { dtype = tide.uint8 }
        local pos_idx_per_image_mask = tide.zeros_like(matched_idxs_per_image, u8)
        local neg_idx_per_image_mask = tide.zeros_like(matched_idxs_per_image, u8)
        -- pos_idx_per_image_mask[pos_idx_per_image] = 1
        pos_idx_per_image_mask[pos_idx_per_image] = 1
        neg_idx_per_image_mask[neg_idx_per_image] = 1
        pos_idx[#pos_idx + 1] = pos_idx_per_image_mask
        neg_idx[#neg_idx + 1] = neg_idx_per_image_mask
    end
    return pos_idx, neg_idx
end

-- @torch.jit._script_if_tracing
-- def encode_boxes(reference_boxes: Tensor, proposals: Tensor, weights: Tensor) -> Tensor:
function det_utils.encode_boxes(reference_boxes, proposals, weights)
    -- wx = weights[0] ...
    local wx, wy, ww, wh = weights[1], weights[2], weights[3], weights[4]
    -- proposals_x1 = proposals[:, 0].unsqueeze(1)
    local proposals_x1 = proposals[{ {}, 1 }]:unsqueeze(2)
    local proposals_y1 = proposals[{ {}, 2 }]:unsqueeze(2)
    local proposals_x2 = proposals[{ {}, 3 }]:unsqueeze(2)
    local proposals_y2 = proposals[{ {}, 4 }]:unsqueeze(2)
    local reference_boxes_x1 = reference_boxes[{ {}, 1 }]:unsqueeze(2)
    local reference_boxes_y1 = reference_boxes[{ {}, 2 }]:unsqueeze(2)
    local reference_boxes_x2 = reference_boxes[{ {}, 3 }]:unsqueeze(2)
    local reference_boxes_y2 = reference_boxes[{ {}, 4 }]:unsqueeze(2)
    -- implementation starts here
    local ex_widths = proposals_x2 - proposals_x1
    local ex_heights = proposals_y2 - proposals_y1
    local ex_ctr_x = proposals_x1 + 0.5 * ex_widths
    local ex_ctr_y = proposals_y1 + 0.5 * ex_heights
    local gt_widths = reference_boxes_x2 - reference_boxes_x1
    local gt_heights = reference_boxes_y2 - reference_boxes_y1
    local gt_ctr_x = reference_boxes_x1 + 0.5 * gt_widths
    local gt_ctr_y = reference_boxes_y1 + 0.5 * gt_heights
    local targets_dx = wx * (gt_ctr_x - ex_ctr_x) / ex_widths
    local targets_dy = wy * (gt_ctr_y - ex_ctr_y) / ex_heights
    -- targets_dw = ww * torch.log(gt_widths / ex_widths)
    local targets_dw = ww * tide.log(gt_widths / ex_widths)
    local targets_dh = wh * tide.log(gt_heights / ex_heights)
    -- targets = torch.cat((targets_dx, targets_dy, targets_dw, targets_dh), dim=1)
    return tide.cat({ targets_dx, targets_dy, targets_dw, targets_dh }, { dim = 2 })
end

-- class BoxCoder:
local BoxCoder = class("BoxCoder")
det_utils.BoxCoder = BoxCoder

-- def __init__(self, weights, bbox_xform_clip: float = math.log(1000.0 / 16)) -> None:
function BoxCoder:__init__(weights, bbox_xform_clip)
    self.weights = weights
    self.bbox_xform_clip = bbox_xform_clip or math.log(1000.0 / 16)
end

function BoxCoder:encode(reference_boxes, proposals)
    -- boxes_per_image = [len(b) for b in reference_boxes]
    local boxes_per_image = {}
    for i, b in ipairs(reference_boxes) do boxes_per_image[i] = #b end
    -- reference_boxes = torch.cat(reference_boxes, dim=0)
    reference_boxes = tide.cat(reference_boxes, { dim = 1 })
    proposals = tide.cat(proposals, { dim = 1 })
    local targets = self:encode_single(reference_boxes, proposals)
    -- return targets.split(boxes_per_image, 0)
    return targets:split(boxes_per_image, 1)
end

function BoxCoder:encode_single(reference_boxes, proposals)
    local dtype = reference_boxes.dtype
    local device = reference_boxes.device
    -- weights = torch.as_tensor(self.weights, dtype=dtype, device=device)
    local weights = tide.as_tensor(self.weights, { dtype = dtype, device = device })
    return det_utils.encode_boxes(reference_boxes, proposals, weights)
end

function BoxCoder:decode(rel_codes, boxes)
    -- boxes_per_image = [b.size(0) for b in boxes]
    local boxes_per_image = {}
    for i, b in ipairs(boxes) do boxes_per_image[i] = b:size(1) end
    local concat_boxes = tide.cat(boxes, { dim = 1 })
    local box_sum = 0
    for _, val in ipairs(boxes_per_image) do box_sum = box_sum + val end
    if box_sum > 0 then
        rel_codes = rel_codes:reshape(box_sum, -1)
    end
    local pred_boxes = self:decode_single(rel_codes, concat_boxes)
    if box_sum > 0 then
        pred_boxes = pred_boxes:reshape(box_sum, -1, 4)
    end
    return pred_boxes
end

function BoxCoder:decode_single(rel_codes, boxes)
    -- boxes = boxes.to(rel_codes.dtype)
    boxes = boxes:to(rel_codes.dtype)
    -- widths = boxes[:, 2] - boxes[:, 0]
    local widths = boxes[{ {}, 3 }] - boxes[{ {}, 1 }]
    local heights = boxes[{ {}, 4 }] - boxes[{ {}, 2 }]
    local ctr_x = boxes[{ {}, 1 }] + 0.5 * widths
    local ctr_y = boxes[{ {}, 2 }] + 0.5 * heights
    local wx, wy, ww, wh = unpack(self.weights)
    -- dx = rel_codes[:, 0::4] / wx
    local dx = rel_codes[{ {}, { 1, -1, 4 } }] / wx
    local dy = rel_codes[{ {}, { 2, -1, 4 } }] / wy
    local dw = rel_codes[{ {}, { 3, -1, 4 } }] / ww
    local dh = rel_codes[{ {}, { 4, -1, 4 } }] / wh
    -- Prevent sending too large values into torch.exp()
    -- dw = torch.clamp(dw, max=self.bbox_xform_clip)
    dw = tide.clamp(dw, { max = self.bbox_xform_clip })
    dh = tide.clamp(dh, { max = self.bbox_xform_clip })
    -- pred_ctr_x = dx * widths[:, None] + ctr_x[:, None]
    local pred_ctr_x = dx * widths[{ {}, tide.newaxis }] + ctr_x[{ {}, tide.newaxis }]
    local pred_ctr_y = dy * heights[{ {}, tide.newaxis }] + ctr_y[{ {}, tide.newaxis }]
    -- pred_w = torch.exp(dw) * widths[:, None]
    local pred_w = tide.exp(dw) * widths[{ {}, tide.newaxis }]
    local pred_h = tide.exp(dh) * heights[{ {}, tide.newaxis }]
    -- c_to_c_h = torch.tensor(0.5, dtype=pred_ctr_y.dtype, device=pred_h.device) * pred_h
    local c_to_c_h = tide.tensor(0.5, { dtype = pred_ctr_y.dtype, device = pred_h.device }) * pred_h
    local c_to_c_w = tide.tensor(0.5, { dtype = pred_ctr_x.dtype, device = pred_w.device }) * pred_w
    local pred_boxes1 = pred_ctr_x - c_to_c_w
    local pred_boxes2 = pred_ctr_y - c_to_c_h
    local pred_boxes3 = pred_ctr_x + c_to_c_w
    local pred_boxes4 = pred_ctr_y + c_to_c_h
    -- pred_boxes = torch.stack((pred_boxes1, ..., pred_boxes4), dim=2).flatten(1)
    return tide.stack({ pred_boxes1, pred_boxes2, pred_boxes3, pred_boxes4 }, { dim = 3 })
        :flatten(2)
end

-- class Matcher:
local Matcher = class("Matcher")
det_utils.Matcher = Matcher
Matcher.BELOW_LOW_THRESHOLD = -1
Matcher.BETWEEN_THRESHOLDS = -2

function Matcher:__init__(high_threshold, low_threshold, allow_low_quality_matches)
    self.BELOW_LOW_THRESHOLD = -1
    self.BETWEEN_THRESHOLDS = -2
    -- torch._assert(low_threshold <= high_threshold, "low_threshold should be <= high_threshold")
    assert(low_threshold <= high_threshold, "low_threshold should be <= high_threshold")
    self.high_threshold = high_threshold
    self.low_threshold = low_threshold
    self.allow_low_quality_matches = allow_low_quality_matches or false
end

function Matcher:__call__(match_quality_matrix)
    if match_quality_matrix:numel() == 0 then
        if match_quality_matrix.shape[1] == 0 then
            error("No ground-truth boxes available for one of the images during training")
        else
            error("No proposal boxes available for one of the images during training")
        end
    end
    -- match_quality_matrix is M (gt) x N (predicted)
    -- matched_vals, matches = match_quality_matrix.max(dim=0)
    local matched_vals, matches = match_quality_matrix:max({ dim = 1 })
    local all_matches
    if self.allow_low_quality_matches then
        all_matches = matches:clone()
    end
    -- below_low_threshold = matched_vals < self.low_threshold
    local below_low_threshold = matched_vals:lt(self.low_threshold)
    -- between_thresholds = (matched_vals >= self.low_threshold) & (
    --     matched_vals < self.high_threshold)
    local between_thresholds = matched_vals:ge(self.low_threshold)
        :logical_and(matched_vals:lt(self.high_threshold))
    matches[below_low_threshold] = self.BELOW_LOW_THRESHOLD
    matches[between_thresholds] = self.BETWEEN_THRESHOLDS
    if self.allow_low_quality_matches then
        self:set_low_quality_matches_(matches, all_matches, match_quality_matrix)
    end
    return matches
end

function Matcher:set_low_quality_matches_(matches, all_matches, match_quality_matrix)
    -- highest_quality_foreach_gt, _ = match_quality_matrix.max(dim=1)
    local highest_quality_foreach_gt = match_quality_matrix:max({ dim = 2 })
    -- _, pred_inds_to_update = torch.where(
    --     match_quality_matrix == highest_quality_foreach_gt[:, None])
    local pred_inds_to_update = tide.where(
        match_quality_matrix:eq(highest_quality_foreach_gt[{ {}, tide.newaxis }]))[2]
    -- matches[pred_inds_to_update] = all_matches[pred_inds_to_update]
    matches[pred_inds_to_update] = all_matches[pred_inds_to_update]
end

-- class SSDMatcher(Matcher):
local SSDMatcher = class("SSDMatcher")
setmetatable(SSDMatcher, { __index = Matcher, __call = getmetatable(Matcher).__call })
det_utils.SSDMatcher = SSDMatcher

function SSDMatcher:__init__(threshold)
    -- super().__init__(threshold, threshold, allow_low_quality_matches=False)
    Matcher.__init__(self, threshold, threshold, false)
end

function SSDMatcher:__call__(match_quality_matrix)
    local matches = Matcher.__call__(self, match_quality_matrix)
    -- _, highest_quality_pred_foreach_gt = match_quality_matrix.max(dim=1)
    local _, highest_quality_pred_foreach_gt = match_quality_matrix:max({ dim = 2 })
    -- matches[highest_quality_pred_foreach_gt] = torch.arange(
    --     highest_quality_pred_foreach_gt.size(0), dtype=torch.int64, device=...)
    -- (gt indices 1..M)
    matches[highest_quality_pred_foreach_gt] = tide.arange(1,
        highest_quality_pred_foreach_gt:size(1) + 1, { dtype = tide.int64 })
    return matches
end

---------------------------------------------------------------------------------------------
-- torchvision/models/detection/image_list.py and anchor_utils.py
---------------------------------------------------------------------------------------------
-- class ImageList:
local ImageList = class("ImageList")
function ImageList:__init__(tensors, image_sizes)
    self.tensors = tensors
    self.image_sizes = image_sizes
end

-- class AnchorGenerator(nn.Module):
local AnchorGenerator = nn.Module:extend("AnchorGenerator")

-- def __init__(self, sizes=((128, 256, 512),), aspect_ratios=((0.5, 1.0, 2.0),)):
function AnchorGenerator:init(sizes, aspect_ratios)
    sizes = sizes or { { 128, 256, 512 } }
    aspect_ratios = aspect_ratios or { { 0.5, 1.0, 2.0 } }
    -- if not isinstance(sizes[0], (list, tuple)): sizes = tuple((s,) for s in sizes)
    if type(sizes[1]) ~= "table" then
        local s = {}
        for i, v in ipairs(sizes) do s[i] = { v } end
        sizes = s
    end
    if type(aspect_ratios[1]) ~= "table" then
        local a = {}
        for i = 1, #sizes do a[i] = aspect_ratios end
        aspect_ratios = a
    end
    self.sizes = sizes
    self.aspect_ratios = aspect_ratios
    -- self.cell_anchors = [self.generate_anchors(size, aspect_ratio)
    --     for size, aspect_ratio in zip(sizes, aspect_ratios)]
    local cell_anchors = {}
    for i = 1, #sizes do cell_anchors[i] = self:generate_anchors(sizes[i], aspect_ratios[i]) end
    -- a plain Lua list (Python's list attribute), not registered with the module
    rawset(self, "cell_anchors", cell_anchors)
end

-- def generate_anchors(self, scales, aspect_ratios, dtype=torch.float32,
--                      device=torch.device("cpu")):
function AnchorGenerator:generate_anchors(scales, aspect_ratios, dtype, device)
    dtype = dtype or tide.float32
    -- scales = torch.as_tensor(scales, dtype=dtype, device=device)
    scales = tide.as_tensor(scales, { dtype = dtype, device = device })
    aspect_ratios = tide.as_tensor(aspect_ratios, { dtype = dtype, device = device })
    local h_ratios = tide.sqrt(aspect_ratios)
    local w_ratios = 1 / h_ratios
    -- ws = (w_ratios[:, None] * scales[None, :]).view(-1)
    local ws = (w_ratios[{ {}, tide.newaxis }] * scales[{ tide.newaxis, {} }]):view(-1)
    local hs = (h_ratios[{ {}, tide.newaxis }] * scales[{ tide.newaxis, {} }]):view(-1)
    -- base_anchors = torch.stack([-ws, -hs, ws, hs], dim=1) / 2
    local base_anchors = tide.stack({ -ws, -hs, ws, hs }, { dim = 2 }) / 2
    return base_anchors:round()
end

function AnchorGenerator:num_anchors_per_location()
    -- return [len(s) * len(a) for s, a in zip(self.sizes, self.aspect_ratios)]
    local r = {}
    for i = 1, #self.sizes do r[i] = #self.sizes[i] * #self.aspect_ratios[i] end
    return r
end

-- def grid_anchors(self, grid_sizes: List[List[int]], strides: List[List[Tensor]]) -> List[Tensor]:
function AnchorGenerator:grid_anchors(grid_sizes, strides)
    local anchors = {}
    local cell_anchors = self.cell_anchors
    if not (#grid_sizes == #strides and #strides == #cell_anchors) then
        error("Anchors should be Tuple[Tuple[int]] because each feature map could potentially "
            .. "have different sizes and aspect ratios. There needs to be a match between the "
            .. "number of feature maps passed and the number of sizes / aspect ratios specified.")
    end
    for i = 1, #grid_sizes do
        local base_anchors = cell_anchors[i]
        local grid_height, grid_width = unpack(grid_sizes[i])
        local stride_height, stride_width = unpack(strides[i])
        local device = base_anchors.device
        -- shifts_x = torch.arange(0, grid_width, dtype=torch.int32, device=device) * stride_width
        local i32 = { dtype = tide.int32, device = device }
        local shifts_x = tide.arange(0, grid_width, i32) * stride_width
        local shifts_y = tide.arange(0, grid_height, i32) * stride_height
        -- shift_y, shift_x = torch.meshgrid(shifts_y, shifts_x, indexing="ij")
        local shift_y, shift_x = unpack(tide.meshgrid(shifts_y, shifts_x, { indexing = "ij" }))
        shift_x = shift_x:reshape(-1)
        shift_y = shift_y:reshape(-1)
        -- shifts = torch.stack((shift_x, shift_y, shift_x, shift_y), dim=1)
        local shifts = tide.stack({ shift_x, shift_y, shift_x, shift_y }, { dim = 2 })
        -- anchors.append((shifts.view(-1, 1, 4) + base_anchors.view(1, -1, 4)).reshape(-1, 4))
        anchors[i] = (shifts:view(-1, 1, 4) + base_anchors:view(1, -1, 4)):reshape(-1, 4)
    end
    return anchors
end

-- def forward(self, image_list: ImageList, feature_maps: List[Tensor]) -> List[Tensor]:
function AnchorGenerator:forward(image_list, feature_maps)
    -- grid_sizes = [feature_map.shape[-2:] for feature_map in feature_maps]
    local grid_sizes = {}
    for i, fm in ipairs(feature_maps) do grid_sizes[i] = { fm:size(-2), fm:size(-1) } end
    -- image_size = image_list.tensors.shape[-2:]
    local image_size = { image_list.tensors:size(-2), image_list.tensors:size(-1) }
    local dtype, device = feature_maps[1].dtype, feature_maps[1].device
    -- strides = [[torch.empty((), dtype=torch.int64, device=device).fill_(image_size[0] // g[0]),
    --             torch.empty((), ...).fill_(image_size[1] // g[1])] for g in grid_sizes]
    -- (math.floor: Lua 5.1 has no //)
    local strides, i64 = {}, { dtype = tide.int64, device = device }
    for i, g in ipairs(grid_sizes) do
        strides[i] = {
            tide.empty({}, i64):fill_(math.floor(image_size[1] / g[1])),
            tide.empty({}, i64):fill_(math.floor(image_size[2] / g[2])),
        }
    end
    -- self.set_cell_anchors(dtype, device)
    for i, a in ipairs(self.cell_anchors) do
        self.cell_anchors[i] = a:to({ dtype = dtype, device = device })
    end
    local anchors_over_all_feature_maps = self:grid_anchors(grid_sizes, strides)
    local anchors = {}
    for i = 1, #image_list.image_sizes do
        -- anchors_in_image = [anchors_per_feature_map for ... in anchors_over_all_feature_maps]
        local anchors_in_image = {}
        for j, a in ipairs(anchors_over_all_feature_maps) do anchors_in_image[j] = a end
        -- anchors = [torch.cat(anchors_per_image) for anchors_per_image in anchors]
        anchors[i] = tide.cat(anchors_in_image)
    end
    return anchors
end

---------------------------------------------------------------------------------------------
-- torchvision/models/detection/rpn.py
---------------------------------------------------------------------------------------------
-- class RPNHead(nn.Module):
local RPNHead = nn.Module:extend("RPNHead")

-- def __init__(self, in_channels: int, num_anchors: int, conv_depth=1) -> None:
function RPNHead:init(in_channels, num_anchors)
    -- self.conv = nn.Sequential(Conv2dNormActivation(in_channels, in_channels, kernel_size=3,
    --     norm_layer=None)): a 3x3 conv (padding 1) and ReLU
    self.conv = nn.Sequential(nn.Conv2d(in_channels, in_channels, 3, 1, 1), nn.ReLU(true))
    self.cls_logits = nn.Conv2d(in_channels, num_anchors, 1, 1)
    self.bbox_pred = nn.Conv2d(in_channels, num_anchors * 4, 1, 1)
    -- for layer in self.modules(): if isinstance(layer, nn.Conv2d): normal_(std=0.01); bias 0
    for _, layer in ipairs(self:modules()) do
        if layer.__class__ == nn.Conv2d then
            nn.init.normal_(layer.weight, 0, 0.01)
            nn.init.constant_(layer.bias, 0)
        end
    end
end

function RPNHead:forward(x)
    local logits, bbox_reg = {}, {}
    for _, feature in ipairs(x) do
        local t = self.conv(feature)
        logits[#logits + 1] = self.cls_logits(t)
        bbox_reg[#bbox_reg + 1] = self.bbox_pred(t)
    end
    return logits, bbox_reg
end

local function permute_and_flatten(layer, N, A, C, H, W) -- luacheck: ignore A
    layer = layer:view(N, -1, C, H, W)
    -- layer = layer.permute(0, 3, 4, 1, 2)
    layer = layer:permute(1, 4, 5, 2, 3)
    layer = layer:reshape(N, -1, C)
    return layer
end

local function concat_box_prediction_layers(box_cls, box_regression)
    local box_cls_flattened, box_regression_flattened = {}, {}
    -- for box_cls_per_level, box_regression_per_level in zip(box_cls, box_regression):
    for i = 1, #box_cls do
        local box_cls_per_level, box_regression_per_level = box_cls[i], box_regression[i]
        -- N, AxC, H, W = box_cls_per_level.shape
        local N, AxC, H, W = unpack(box_cls_per_level.shape)
        local Ax4 = box_regression_per_level:size(2)
        -- A = Ax4 // 4
        local A = math.floor(Ax4 / 4)
        -- C = AxC // A
        local C = math.floor(AxC / A)
        box_cls_per_level = permute_and_flatten(box_cls_per_level, N, A, C, H, W)
        box_cls_flattened[i] = box_cls_per_level
        box_regression_per_level = permute_and_flatten(box_regression_per_level, N, A, 4, H, W)
        box_regression_flattened[i] = box_regression_per_level
    end
    -- box_cls = torch.cat(box_cls_flattened, dim=1).flatten(0, -2)
    local box_cls_concated = tide.cat(box_cls_flattened, { dim = 2 }):flatten(1, -2)
    local box_regression_concated = tide.cat(box_regression_flattened, { dim = 2 }):reshape(-1, 4)
    return box_cls_concated, box_regression_concated
end

-- class RegionProposalNetwork(torch.nn.Module):
local RegionProposalNetwork = nn.Module:extend("RegionProposalNetwork")

function RegionProposalNetwork:init(anchor_generator, head, fg_iou_thresh, bg_iou_thresh,
                                    batch_size_per_image, positive_fraction, pre_nms_top_n,
                                    post_nms_top_n, nms_thresh, score_thresh)
    self.anchor_generator = anchor_generator
    self.head = head
    self.box_coder = det_utils.BoxCoder({ 1.0, 1.0, 1.0, 1.0 })
    -- used during training
    self.box_similarity = box_ops.box_iou
    self.proposal_matcher = det_utils.Matcher(fg_iou_thresh, bg_iou_thresh, true)
    self.fg_bg_sampler = det_utils.BalancedPositiveNegativeSampler(batch_size_per_image,
        positive_fraction)
    -- used during testing
    self._pre_nms_top_n = pre_nms_top_n
    self._post_nms_top_n = post_nms_top_n
    self.nms_thresh = nms_thresh
    self.score_thresh = score_thresh or 0.0
    self.min_size = 1e-3
end

function RegionProposalNetwork:pre_nms_top_n()
    if self.training then return self._pre_nms_top_n["training"] end
    return self._pre_nms_top_n["testing"]
end

function RegionProposalNetwork:post_nms_top_n()
    if self.training then return self._post_nms_top_n["training"] end
    return self._post_nms_top_n["testing"]
end

function RegionProposalNetwork:assign_targets_to_anchors(anchors, targets)
    local labels, matched_gt_boxes = {}, {}
    for i = 1, #anchors do
        local anchors_per_image, targets_per_image = anchors[i], targets[i]
        local gt_boxes = targets_per_image["boxes"]
        local matched_gt_boxes_per_image, labels_per_image
        if gt_boxes:numel() == 0 then
            -- Background image (negative example)
            local device = anchors_per_image.device
            matched_gt_boxes_per_image = tide.zeros(anchors_per_image.shape,
                { dtype = tide.float32, device = device })
            labels_per_image = tide.zeros({ anchors_per_image:size(1) },
                { dtype = tide.float32, device = device })
        else
            local match_quality_matrix = self.box_similarity(gt_boxes, anchors_per_image)
            local matched_idxs = self.proposal_matcher(match_quality_matrix)
            -- matched_gt_boxes_per_image = gt_boxes[matched_idxs.clamp(min=0)]
            -- (gt indices are 1-based: the codes -1 and -2 clamp to the first gt, as 0 does there)
            matched_gt_boxes_per_image = gt_boxes[matched_idxs:clamp({ min = 1 })]
            -- labels_per_image = matched_idxs >= 0
            labels_per_image = matched_idxs:ge(1)
            labels_per_image = labels_per_image:to({ dtype = tide.float32 })
            -- Background (negative examples)
            local bg_indices = matched_idxs:eq(self.proposal_matcher.BELOW_LOW_THRESHOLD)
            labels_per_image[bg_indices] = 0.0
            -- discard indices that are between thresholds
            local inds_to_discard = matched_idxs:eq(self.proposal_matcher.BETWEEN_THRESHOLDS)
            labels_per_image[inds_to_discard] = -1.0
        end
        labels[i] = labels_per_image
        matched_gt_boxes[i] = matched_gt_boxes_per_image
    end
    return labels, matched_gt_boxes
end

function RegionProposalNetwork:_get_top_n_idx(objectness, num_anchors_per_level)
    local r = {}
    local offset = 0
    -- for ob in objectness.split(num_anchors_per_level, 1):
    for _, ob in ipairs(objectness:split(num_anchors_per_level, 2)) do
        local num_anchors = ob:size(2)
        local pre_nms_top_n = math.min(self:pre_nms_top_n(), num_anchors)
        -- _, top_n_idx = ob.topk(pre_nms_top_n, dim=1)
        local _, top_n_idx = ob:topk(pre_nms_top_n, { dim = 2 })
        r[#r + 1] = top_n_idx + offset
        offset = offset + num_anchors
    end
    return tide.cat(r, { dim = 2 })
end

function RegionProposalNetwork:filter_proposals(proposals, objectness, image_shapes,
                                                num_anchors_per_level)
    local num_images = proposals:size(1)
    local device = proposals.device
    -- do not backprop through objectness
    objectness = objectness:detach()
    objectness = objectness:reshape(num_images, -1)
    -- levels = [torch.full((n,), idx, dtype=torch.int64, device=device)
    --     for idx, n in enumerate(num_anchors_per_level)]
    local levels = {}
    for idx, n in ipairs(num_anchors_per_level) do
        levels[idx] = tide.full({ n }, idx - 1, { dtype = tide.int64, device = device })
    end
    levels = tide.cat(levels, { dim = 1 })
    levels = levels:reshape(1, -1):expand_as(objectness)
    -- select top_n boxes independently per level before applying nms
    local top_n_idx = self:_get_top_n_idx(objectness, num_anchors_per_level)
    -- image_range = torch.arange(num_images, device=device)
    local image_range = tide.arange(1, num_images + 1, { device = device })
    -- batch_idx = image_range[:, None]
    local batch_idx = image_range[{ {}, tide.newaxis }]
    -- objectness = objectness[batch_idx, top_n_idx]
    objectness = objectness[{ batch_idx, top_n_idx }]
    levels = levels[{ batch_idx, top_n_idx }]
    proposals = proposals[{ batch_idx, top_n_idx }]
    local objectness_prob = tide.sigmoid(objectness)
    local final_boxes, final_scores = {}, {}
    -- for boxes, scores, lvl, img_shape in zip(proposals, objectness_prob, levels, image_shapes):
    for i = 1, num_images do
        local boxes, scores, lvl = proposals[i], objectness_prob[i], levels[i]
        boxes = box_ops.clip_boxes_to_image(boxes, image_shapes[i])
        -- remove small boxes
        local keep = box_ops.remove_small_boxes(boxes, self.min_size)
        boxes, scores, lvl = boxes[keep], scores[keep], lvl[keep]
        -- remove low scoring boxes
        -- keep = torch.where(scores >= self.score_thresh)[0]
        keep = tide.where(scores:ge(self.score_thresh))[1]
        boxes, scores, lvl = boxes[keep], scores[keep], lvl[keep]
        -- non-maximum suppression, independently done per level
        keep = box_ops.batched_nms(boxes, scores, lvl, self.nms_thresh)
        -- keep only topk scoring predictions
        -- keep = keep[: self.post_nms_top_n()]
        keep = keep[{ { 1, self:post_nms_top_n() } }]
        boxes, scores = boxes[keep], scores[keep]
        final_boxes[i] = boxes
        final_scores[i] = scores
    end
    return final_boxes, final_scores
end

function RegionProposalNetwork:compute_loss(objectness, pred_bbox_deltas, labels,
                                            regression_targets)
    local sampled_pos_inds, sampled_neg_inds = self.fg_bg_sampler(labels)
    -- sampled_pos_inds = torch.where(torch.cat(sampled_pos_inds, dim=0))[0]
    sampled_pos_inds = tide.where(tide.cat(sampled_pos_inds, { dim = 1 }))[1]
    sampled_neg_inds = tide.where(tide.cat(sampled_neg_inds, { dim = 1 }))[1]
    local sampled_inds = tide.cat({ sampled_pos_inds, sampled_neg_inds }, { dim = 1 })
    objectness = objectness:flatten()
    labels = tide.cat(labels, { dim = 1 })
    regression_targets = tide.cat(regression_targets, { dim = 1 })
    -- box_loss = F.smooth_l1_loss(pred_bbox_deltas[sampled_pos_inds], regression_targets[
    --     sampled_pos_inds], beta=1 / 9, reduction="sum") / (sampled_inds.numel())
    local box_loss = F.smooth_l1_loss(pred_bbox_deltas[sampled_pos_inds],
        regression_targets[sampled_pos_inds], { beta = 1 / 9, reduction = "sum" })
        / sampled_inds:numel()
    local objectness_loss = F.binary_cross_entropy_with_logits(objectness[sampled_inds],
        labels[sampled_inds])
    return objectness_loss, box_loss
end

-- def forward(self, images: ImageList, features: Dict[str, Tensor], targets=None):
function RegionProposalNetwork:forward(images, features, targets)
    -- features = list(features.values())  (features: a Lua list, the dict's order)
    local objectness, pred_bbox_deltas = self.head(features)
    local anchors = self.anchor_generator(images, features)
    local num_images = #anchors
    -- num_anchors_per_level_shape_tensors = [o[0].shape for o in objectness]
    -- num_anchors_per_level = [s[0] * s[1] * s[2] for s in num_anchors_per_level_shape_tensors]
    local num_anchors_per_level = {}
    for i, o in ipairs(objectness) do
        local s = o[1].shape
        num_anchors_per_level[i] = s[1] * s[2] * s[3]
    end
    objectness, pred_bbox_deltas = concat_box_prediction_layers(objectness, pred_bbox_deltas)
    -- proposals = self.box_coder.decode(pred_bbox_deltas.detach(), anchors)
    local proposals = self.box_coder:decode(pred_bbox_deltas:detach(), anchors)
    proposals = proposals:view(num_images, -1, 4)
    local boxes, scores = self:filter_proposals(proposals, objectness, images.image_sizes,
        num_anchors_per_level)
    local losses = {}
    if self.training then
        if targets == nil then error("targets should not be None") end
        local labels, matched_gt_boxes = self:assign_targets_to_anchors(anchors, targets)
        local regression_targets = self.box_coder:encode(matched_gt_boxes, anchors)
        local loss_objectness, loss_rpn_box_reg = self:compute_loss(objectness,
            pred_bbox_deltas, labels, regression_targets)
        losses = { loss_objectness = loss_objectness, loss_rpn_box_reg = loss_rpn_box_reg }
    end
    return boxes, losses, scores
end

---------------------------------------------------------------------------------------------
-- checks against PyTorch 1.13
---------------------------------------------------------------------------------------------
local function feat(shape, k)
    -- torch.sin(torch.arange(n, dtype=torch.float32) * 0.37 + k).reshape(shape)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    return tide.sin(tide.arange(0, n, { dtype = tide.float32 }) * 0.37 + k):reshape(shape)
end

local function tiny_rpn()
    local ag = AnchorGenerator({ { 4 }, { 8 } }, { { 0.5, 1.0, 2.0 }, { 0.5, 1.0, 2.0 } })
    local head = RPNHead(4, 3)
    -- for i, (n, p) in enumerate(head.named_parameters()):
    --     p.copy_(0.1 * torch.sin(torch.arange(p.numel()) * 0.5 + i + 1).reshape(p.shape))
    tide.no_grad(function()
        for i, np in ipairs(head:named_parameters()) do
            local p = np[2]
            p:copy_((0.1 * tide.sin(tide.arange(0, p:numel(), { dtype = tide.float32 }) * 0.5 + i))
                :reshape(p.shape))
        end
    end)
    local rpn = RegionProposalNetwork(ag, head, 0.7, 0.3, 256, 0.5, { training = 10, testing = 6 },
        { training = 8, testing = 5 }, 0.7)
    local imgs = ImageList(tide.zeros(2, 3, 16, 16), { { 16, 16 }, { 14, 12 } })
    local feats = { feat({ 2, 4, 4, 4 }, 0.0), feat({ 2, 4, 2, 2 }, 1.0) }
    return rpn, imgs, feats
end

describe("ported torchvision detection utils (_utils, anchor_utils, rpn)", function()
    it("BoxCoder encodes, decodes back, and clamps dw/dh at log(1000/16)", function()
        local bc = BoxCoder({ 10.0, 10.0, 5.0, 5.0 })
        local ref = tide.tensor({ { 1, 2, 9, 7 }, { 0, 0, 4, 4 }, { 3, 1, 6, 12 } })
        local prop = tide.tensor({ { 0, 1, 8, 8 }, { 1, 1, 3, 5 }, { 2, 2, 7, 10 } })
        local codes = bc:encode_single(ref, prop)
        assert_close_list({ 1.25, 0.0, 0.0, -1.682361125946045, 0.0, -2.5, 3.465735912322998, 0.0,
            0.0, 0.625, -2.5541279315948486, 1.592268705368042 }, flat(codes), 1e-5, "codes")
        local split = bc:encode({ ref[{ { 1, 2 } }], ref[{ { 3, 3 } }] },
            { prop[{ { 1, 2 } }], prop[{ { 3, 3 } }] })
        assert.are.same({ 2, 4 }, split[1].shape)
        assert.are.same({ 1, 4 }, split[2].shape)
        local dec = bc:decode(codes, { prop })
        assert.are.same({ 3, 1, 4 }, dec.shape)
        assert_close_list(flat(ref), flat(dec), 1e-5, "round trip")
        local big = tide.tensor({ { 0.5, -0.5, 10.0, 0.2, 0.0, 0.0, -1.0, 9.0 } })
        assert_close_list({ -25.156225204467773, 0.5071620941162109, 33.95622634887695,
            7.792838096618652, 0.7250769138336182, -16.673765182495117, 7.274923324584961,
            25.673765182495117 }, flat(bc:decode_single(big, prop[{ { 1, 1 } }])), 1e-5, "clamped")
    end)

    it("Matcher, with and without low-quality matches, and SSDMatcher", function()
        local mq = box_ops.box_iou(tide.tensor({ { 0, 0, 4, 4 }, { 5, 5, 9, 9 } }),
            tide.tensor({ { 0, 0, 4, 4 }, { 1, 1, 5, 5 }, { 4, 4, 9, 9 }, { 6, 6, 8, 8 },
                { 0, 5, 3, 9 }, { 2, 0, 4, 3 } }))
        assert_close_list({ 1.0, 0.3913043439388275, 0.0, 0.0, 0.0, 0.375,
            0.0, 0.0, 0.6399999856948853, 0.25, 0.0, 0.0 }, flat(mq), 1e-6, "iou")
        -- PyTorch's [0, -2, -2, -1, -1, -2], [0, -1, 1, -1, -1, -1]: gt indices 1-based here
        assert.are.same({ 1, -2, -2, -1, -1, -2 }, Matcher(0.7, 0.3)(mq):tolist())
        assert.are.same({ 1, -1, 2, -1, -1, -1 }, Matcher(0.9, 0.5, true)(mq):tolist())
        assert.are.same({ 1, -1, 2, -1, -1, -1 }, SSDMatcher(0.5)(mq):tolist())
        local ok, err = pcall(Matcher(0.7, 0.3), tide.zeros(0, 3))
        assert.is_false(ok)
        assert.matches("No ground%-truth boxes", tostring(err))
    end)

    it("BalancedPositiveNegativeSampler picks its share of positives and negatives", function()
        tide.manual_seed(0)
        local labels = tide.tensor({ 1, 0, -1, 1, 1, 0, 0, 0, 0, 1 })
        local pos, neg = BalancedPositiveNegativeSampler(4, 0.25)({ labels })
        local p, n = pos[1]:to(tide.int64), neg[1]:to(tide.int64)
        assert.are.equal(tide.uint8, pos[1].dtype)
        assert.are.equal(1, p:sum():item())
        assert.are.equal(3, n:sum():item())
        -- picked only where the label is 1 (positive) or 0 (negative)
        assert.are.equal(1, (p * labels:eq(1):to(tide.int64)):sum():item())
        assert.are.equal(3, (n * labels:eq(0):to(tide.int64)):sum():item())
    end)

    it("AnchorGenerator's anchors over an ImageList of two feature maps", function()
        local rpn, imgs, feats = tiny_rpn()
        local ag = rpn.anchor_generator
        assert.are.same({ 3, 3 }, ag:num_anchors_per_location())
        local anchors = ag(imgs, feats)
        assert.are.equal(2, #anchors)
        assert.are.same({ 60, 4 }, anchors[1].shape)
        assert_close_list({ -3, -1, 3, 1, -2, -2, 2, 2, -1, -3, 1, 3, 1, -1, 7, 1 },
            flat(anchors[1][{ { 1, 4 } }]), 0, "first anchors")
        assert_close_list({ 2, 5, 14, 11, 4, 4, 12, 12, 5, 2, 11, 14 },
            flat(anchors[1][{ { -3, -1 } }]), 0, "last anchors")
        assert.are.equal(1344, anchors[2]:sum():item())
    end)

    it("RegionProposalNetwork's proposals (eval) and losses (train) match PyTorch", function()
        local rpn, imgs, feats = tiny_rpn()
        rpn:eval()
        local boxes = rpn(imgs, feats)
        -- PyTorch's boxes, one row of 4 per line
        assert_close_list({ 4.910552501678467, 0.0, 10.587825775146484, 3.791865825653076,
            0.0, 0.21442270278930664, 2.6999623775482178, 11.877054214477539,
            0.0, 0.0, 2.4980762004852295, 3.872337818145752,
            5.2107439041137695, 0.41684389114379883, 10.669120788574219, 12.036375045776367,
            3.0301637649536133, 0.0, 4.859635829925537, 2.0502562522888184 },
            flat(boxes[1]), 1e-4, "boxes[1]")
        assert_close_list({ 5.055278301239014, 0.0, 10.642181396484375, 3.8640613555908203,
            0.0, 0.0, 2.5605292320251465, 3.8525068759918213,
            0.0, 0.4495711326599121, 2.6566784381866455, 12.036676406860352,
            6.998149871826172, 0.0, 8.845295906066895, 2.0350756645202637,
            5.171530723571777, 0.6623764038085938, 10.607919692993164, 12.148538589477539 },
            flat(boxes[2]), 1e-4, "boxes[2]")
        local targets = { { boxes = tide.tensor({ { 1, 1, 9, 7 }, { 6, 5, 15, 14 } }) },
            { boxes = tide.tensor({ { 2, 3, 10, 11 } }) } }
        rpn:train()
        -- batch_size_per_image 256 > 60 anchors: the sampler takes them all (no randomness)
        local opt = tide.optim.SGD(rpn:parameters(), { lr = 0.5 })
        local want = { { 0.6513057947158813, 0.02508174628019333 },
            { 0.6171001195907593, 0.02453627623617649 } }
        for step = 1, 2 do
            local b, losses = rpn(imgs, feats, targets)
            assert.are.same({ 8, 4 }, b[1].shape)
            local lo, lb = losses.loss_objectness:item(), losses.loss_rpn_box_reg:item()
            assert_finite(lo, "loss_objectness")
            assert_finite(lb, "loss_rpn_box_reg")
            assert_close_list(want[step], { lo, lb }, 1e-4, "losses at step " .. step)
            opt:zero_grad()
            ;(losses.loss_objectness + losses.loss_rpn_box_reg):backward()
            opt:step()
        end
    end)
end)
