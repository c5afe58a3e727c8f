-- ported_scripts127_spec.lua — ultralytics/ultralytics' YOLOv8 detection loss (8.1.x; tal.py and
-- metrics.py as of commit 002217d4c57509738e4dc15b9e3e6722b9e42aa6, loss.py's BboxLoss with the
-- _df_loss staticmethod and v8DetectionLoss as released in v8.1.0): ultralytics/utils/tal.py
-- (TaskAlignedAssigner: forward, get_pos_mask, get_box_metrics, iou_calculation,
-- select_topk_candidates, get_targets, select_candidates_in_gts, select_highest_overlaps;
-- make_anchors, dist2bbox, bbox2dist), ultralytics/utils/metrics.py (bbox_iou: xywh / xyxy, GIoU,
-- DIoU, CIoU with the torch.no_grad alpha), ultralytics/utils/ops.py (xywh2xyxy) and
-- ultralytics/utils/loss.py (BboxLoss, v8DetectionLoss: preprocess, bbox_decode, __call__),
-- ported line for line at tiny sizes: nc 3, reg_max 4, strides {8, 16}, a 32 x 32 image (feature
-- maps 4x4 and 2x2), batch 2 with 2 and 1 ground-truth boxes, fixed predictions (a formula). The
-- Python line stands above each Lua line that differs from it. Dims are 1-based, and so are the
-- indices the assigner computes (topk, argmax, target_gt_idx). The batch's class ids and image
-- ids stay YOLO's 0-based data (a padded gt row holds class 0, as in Python); where a class id
-- indexes (the score gather, the one-hot scatter, cross_entropy's targets) it gets its + 1.
-- The reference values come from PyTorch 1.13 running the same code.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local close, assert_close_list = ported.close, ported.assert_close_list

local function flat(t)
    return t:contiguous():view(-1):float():tolist()
end

---------------------------------------------------------------------------------------------
-- ultralytics/utils/metrics.py
---------------------------------------------------------------------------------------------
-- def bbox_iou(box1, box2, xywh=True, GIoU=False, DIoU=False, CIoU=False, eps=1e-7):
local function bbox_iou(box1, box2, opts)
    opts = opts or {}
    local xywh = opts.xywh == nil or opts.xywh
    local GIoU, DIoU, CIoU, eps = opts.GIoU, opts.DIoU, opts.CIoU, opts.eps or 1e-7
    local b1_x1, b1_y1, b1_x2, b1_y2, b2_x1, b2_y1, b2_x2, b2_y2, w1, h1, w2, h2
    if xywh then -- transform from xywh to xyxy
        -- (x1, y1, w1, h1), (x2, y2, w2, h2) = box1.chunk(4, -1), box2.chunk(4, -1)
        local c1, c2 = box1:chunk(4, -1), box2:chunk(4, -1)
        local x1, y1, x2, y2
        x1, y1, w1, h1 = c1[1], c1[2], c1[3], c1[4]
        x2, y2, w2, h2 = c2[1], c2[2], c2[3], c2[4]
        local w1_, h1_, w2_, h2_ = w1 / 2, h1 / 2, w2 / 2, h2 / 2
        b1_x1, b1_x2, b1_y1, b1_y2 = x1 - w1_, x1 + w1_, y1 - h1_, y1 + h1_
        b2_x1, b2_x2, b2_y1, b2_y2 = x2 - w2_, x2 + w2_, y2 - h2_, y2 + h2_
    else -- x1, y1, x2, y2 = box1
        -- b1_x1, b1_y1, b1_x2, b1_y2 = box1.chunk(4, -1)
        b1_x1, b1_y1, b1_x2, b1_y2 = unpack(box1:chunk(4, -1))
        b2_x1, b2_y1, b2_x2, b2_y2 = unpack(box2:chunk(4, -1))
        w1, h1 = b1_x2 - b1_x1, b1_y2 - b1_y1 + eps
        w2, h2 = b2_x2 - b2_x1, b2_y2 - b2_y1 + eps
    end
    -- Intersection area
    local inter = (b1_x2:minimum(b2_x2) - b1_x1:maximum(b2_x1)):clamp_(0)
        * (b1_y2:minimum(b2_y2) - b1_y1:maximum(b2_y1)):clamp_(0)
    -- Union Area
    local union = w1 * h1 + w2 * h2 - inter + eps
    -- IoU
    local iou = inter / union
    if CIoU or DIoU or GIoU then
        local cw = b1_x2:maximum(b2_x2) - b1_x1:minimum(b2_x1) -- convex width
        local ch = b1_y2:maximum(b2_y2) - b1_y1:minimum(b2_y1) -- convex height
        if CIoU or DIoU then -- Distance or Complete IoU
            local c2 = cw:pow(2) + ch:pow(2) + eps -- convex diagonal squared
            local rho2 = ((b2_x1 + b2_x2 - b1_x1 - b1_x2):pow(2)
                + (b2_y1 + b2_y2 - b1_y1 - b1_y2):pow(2)) / 4 -- center dist**2
            if CIoU then
                -- v = (4 / math.pi**2) * ((w2 / h2).atan() - (w1 / h1).atan()).pow(2)
                local v = (4 / math.pi ^ 2) * ((w2 / h2):atan() - (w1 / h1):atan()):pow(2)
                -- with torch.no_grad():
                --     alpha = v / (v - iou + (1 + eps))
                local alpha = tide.no_grad(function()
                    return v / (v - iou + (1 + eps))
                end)
                return iou - (rho2 / c2 + v * alpha) -- CIoU
            end
            return iou - rho2 / c2 -- DIoU
        end
        local c_area = cw * ch + eps -- convex area
        return iou - (c_area - union) / c_area -- GIoU
    end
    return iou -- IoU
end

---------------------------------------------------------------------------------------------
-- ultralytics/utils/ops.py
---------------------------------------------------------------------------------------------
-- def xywh2xyxy(x):
local function xywh2xyxy(x)
    -- y = torch.empty_like(x) if isinstance(x, torch.Tensor) else np.empty_like(x)
    local y = x:clone()
    -- y[..., 0] = x[..., 0] - x[..., 2] / 2  # top left x
    y[{ "...", 1 }] = x[{ "...", 1 }] - x[{ "...", 3 }] / 2
    y[{ "...", 2 }] = x[{ "...", 2 }] - x[{ "...", 4 }] / 2
    y[{ "...", 3 }] = x[{ "...", 1 }] + x[{ "...", 3 }] / 2
    y[{ "...", 4 }] = x[{ "...", 2 }] + x[{ "...", 4 }] / 2
    return y
end

---------------------------------------------------------------------------------------------
-- ultralytics/utils/tal.py
---------------------------------------------------------------------------------------------
-- class TaskAlignedAssigner(nn.Module):
local TaskAlignedAssigner = nn.Module:extend("TaskAlignedAssigner")
-- def __init__(self, topk=13, num_classes=80, alpha=1.0, beta=6.0, eps=1e-9):
function TaskAlignedAssigner:init(topk, num_classes, alpha, beta, eps)
    self.topk = topk or 13
    self.num_classes = num_classes or 80
    self.bg_idx = self.num_classes
    self.alpha = alpha or 1.0
    self.beta = beta or 6.0
    self.eps = eps or 1e-9
end

-- @torch.no_grad()
-- def forward(self, pd_scores, pd_bboxes, anc_points, gt_labels, gt_bboxes, mask_gt):
function TaskAlignedAssigner:forward(pd_scores, pd_bboxes, anc_points, gt_labels, gt_bboxes,
                                     mask_gt)
    return tide.no_grad(function()
        self.bs = pd_scores.shape[1]
        self.n_max_boxes = gt_bboxes.shape[2]
        -- (the n_max_boxes == 0 early return is not reached: the batch has boxes)
        local mask_pos, align_metric, overlaps = self:get_pos_mask(
            pd_scores, pd_bboxes, gt_labels, gt_bboxes, anc_points, mask_gt)
        local target_gt_idx, fg_mask
        target_gt_idx, fg_mask, mask_pos = self.select_highest_overlaps(
            mask_pos, overlaps, self.n_max_boxes)
        -- Assigned target
        local target_labels, target_bboxes, target_scores = self:get_targets(
            gt_labels, gt_bboxes, target_gt_idx, fg_mask)
        -- Normalize
        -- align_metric *= mask_pos
        align_metric:mul_(mask_pos)
        local pos_align_metrics = align_metric:amax({ dim = -1, keepdim = true }) -- b, max_num_obj
        local pos_overlaps = (overlaps * mask_pos):amax({ dim = -1, keepdim = true })
        -- norm_align_metric = (align_metric * pos_overlaps / (pos_align_metrics + self.eps))
        --     .amax(-2).unsqueeze(-1)
        local norm_align_metric = (align_metric * pos_overlaps / (pos_align_metrics + self.eps))
            :amax(-2):unsqueeze(-1)
        target_scores = target_scores * norm_align_metric
        self.debug = { mask_pos = mask_pos, overlaps = overlaps, align_metric = align_metric }
        -- return target_labels, target_bboxes, target_scores, fg_mask.bool(), target_gt_idx
        return target_labels, target_bboxes, target_scores, fg_mask:bool(), target_gt_idx
    end)
end

-- def get_pos_mask(self, pd_scores, pd_bboxes, gt_labels, gt_bboxes, anc_points, mask_gt):
function TaskAlignedAssigner:get_pos_mask(pd_scores, pd_bboxes, gt_labels, gt_bboxes, anc_points,
                                          mask_gt)
    local mask_in_gts = self.select_candidates_in_gts(anc_points, gt_bboxes)
    -- Get anchor_align metric, (b, max_num_obj, h*w)
    local align_metric, overlaps = self:get_box_metrics(pd_scores, pd_bboxes, gt_labels, gt_bboxes,
        mask_in_gts * mask_gt)
    -- mask_topk = self.select_topk_candidates(align_metric,
    --     topk_mask=mask_gt.expand(-1, -1, self.topk).bool())
    local mask_topk = self:select_topk_candidates(align_metric,
        { topk_mask = mask_gt:expand(-1, -1, self.topk):bool() })
    -- Merge all mask to a final mask, (b, max_num_obj, h*w)
    local mask_pos = mask_topk * mask_in_gts * mask_gt
    return mask_pos, align_metric, overlaps
end

-- def get_box_metrics(self, pd_scores, pd_bboxes, gt_labels, gt_bboxes, mask_gt):
function TaskAlignedAssigner:get_box_metrics(pd_scores, pd_bboxes, gt_labels, gt_bboxes, mask_gt)
    -- na = pd_bboxes.shape[-2]
    local na = pd_bboxes:size(-2)
    mask_gt = mask_gt:bool() -- b, max_num_obj, h*w
    -- overlaps = torch.zeros([self.bs, self.n_max_boxes, na], dtype=pd_bboxes.dtype, ...)
    local overlaps = tide.zeros({ self.bs, self.n_max_boxes, na }, { dtype = pd_bboxes.dtype })
    local bbox_scores = tide.zeros({ self.bs, self.n_max_boxes, na }, { dtype = pd_scores.dtype })
    -- ind = torch.zeros([2, self.bs, self.n_max_boxes], dtype=torch.long)  # 2, b, max_num_obj
    local ind = tide.zeros({ 2, self.bs, self.n_max_boxes }, { dtype = "int64" })
    -- ind[0] = torch.arange(end=self.bs).view(-1, 1).expand(-1, self.n_max_boxes)
    ind[1] = tide.arange(1, self.bs + 1):view(-1, 1):expand(-1, self.n_max_boxes)
    -- ind[1] = gt_labels.squeeze(-1)  # b, max_num_obj
    ind[2] = gt_labels:squeeze(-1) + 1 -- the 0-based class id, 1-based as an index
    -- Get the scores of each grid for each gt cls
    -- bbox_scores[mask_gt] = pd_scores[ind[0], :, ind[1]][mask_gt]  # b, max_num_obj, h*w
    bbox_scores[mask_gt] = pd_scores[{ ind[1], {}, ind[2] }][mask_gt]
    -- (b, max_num_obj, 1, 4), (b, 1, h*w, 4)
    -- pd_boxes = pd_bboxes.unsqueeze(1).expand(-1, self.n_max_boxes, -1, -1)[mask_gt]
    local pd_boxes = pd_bboxes:unsqueeze(2):expand(-1, self.n_max_boxes, -1, -1)[mask_gt]
    -- gt_boxes = gt_bboxes.unsqueeze(2).expand(-1, -1, na, -1)[mask_gt]
    local gt_boxes = gt_bboxes:unsqueeze(3):expand(-1, -1, na, -1)[mask_gt]
    overlaps[mask_gt] = self:iou_calculation(gt_boxes, pd_boxes)
    local align_metric = bbox_scores:pow(self.alpha) * overlaps:pow(self.beta)
    return align_metric, overlaps
end

-- def iou_calculation(self, gt_bboxes, pd_bboxes):
function TaskAlignedAssigner:iou_calculation(gt_bboxes, pd_bboxes)
    -- return bbox_iou(gt_bboxes, pd_bboxes, xywh=False, CIoU=True).squeeze(-1).clamp_(0)
    return bbox_iou(gt_bboxes, pd_bboxes, { xywh = false, CIoU = true }):squeeze(-1):clamp_(0)
end

-- def select_topk_candidates(self, metrics, largest=True, topk_mask=None):
function TaskAlignedAssigner:select_topk_candidates(metrics, opts)
    local largest = opts.largest == nil or opts.largest
    local topk_mask = opts.topk_mask
    -- (b, max_num_obj, topk)
    -- topk_metrics, topk_idxs = torch.topk(metrics, self.topk, dim=-1, largest=largest)
    local topk_metrics, topk_idxs = tide.topk(metrics, self.topk, { dim = -1, largest = largest })
    if topk_mask == nil then
        -- topk_mask = (topk_metrics.max(-1, keepdim=True)[0] > self.eps).expand_as(topk_idxs)
        topk_mask = topk_metrics:max(-1, true):gt(self.eps):expand_as(topk_idxs)
    end
    -- (b, max_num_obj, topk)
    -- topk_idxs.masked_fill_(~topk_mask, 0)
    topk_idxs:masked_fill_(topk_mask:logical_not(), 1) -- anchor 0 of Python is anchor 1 here
    self.debug_topk = topk_idxs
    -- (b, max_num_obj, topk, h*w) -> (b, max_num_obj, h*w)
    -- count_tensor = torch.zeros(metrics.shape, dtype=torch.int8, device=topk_idxs.device)
    -- GAP: tide has no int8 dtype (docs/API.md); int32 holds the same small counts
    local count_tensor = tide.zeros(metrics.shape, { dtype = "int32" })
    -- ones = torch.ones_like(topk_idxs[:, :, :1], dtype=torch.int8, device=topk_idxs.device)
    local ones = tide.ones_like(topk_idxs[{ {}, {}, { 1, 1 } }], { dtype = "int32" })
    -- for k in range(self.topk):
    for k = 1, self.topk do
        -- Expand topk_idxs for each value of k and add 1 at the specified positions
        -- count_tensor.scatter_add_(-1, topk_idxs[:, :, k : k + 1], ones)
        count_tensor:scatter_add_(-1, topk_idxs[{ {}, {}, { k, k } }], ones)
    end
    -- Filter invalid bboxes
    -- count_tensor.masked_fill_(count_tensor > 1, 0)
    count_tensor:masked_fill_(count_tensor:gt(1), 0)
    -- return count_tensor.to(metrics.dtype)
    return count_tensor:to(metrics.dtype)
end

-- def get_targets(self, gt_labels, gt_bboxes, target_gt_idx, fg_mask):
function TaskAlignedAssigner:get_targets(gt_labels, gt_bboxes, target_gt_idx, fg_mask)
    -- Assigned target labels, (b, 1)
    -- batch_ind = torch.arange(end=self.bs, dtype=torch.int64, device=gt_labels.device)[..., None]
    local batch_ind = tide.arange(0, self.bs, { dtype = "int64" })[{ "...", tide.newaxis }]
    -- target_gt_idx = target_gt_idx + batch_ind * self.n_max_boxes  # (b, h*w)
    target_gt_idx = target_gt_idx + batch_ind * self.n_max_boxes -- 1-based, a 0-based offset
    -- target_labels = gt_labels.long().flatten()[target_gt_idx]  # (b, h*w)
    local target_labels = gt_labels:long():flatten()[target_gt_idx]
    -- Assigned target boxes, (b, max_num_obj, 4) -> (b, h*w, 4)
    -- target_bboxes = gt_bboxes.view(-1, gt_bboxes.shape[-1])[target_gt_idx]
    local target_bboxes = gt_bboxes:view(-1, gt_bboxes:size(-1))[target_gt_idx]
    -- Assigned target scores
    target_labels:clamp_(0)
    -- 10x faster than F.one_hot()
    -- target_scores = torch.zeros((target_labels.shape[0], target_labels.shape[1],
    --     self.num_classes), dtype=torch.int64, device=target_labels.device)  # (b, h*w, 80)
    local target_scores = tide.zeros({ target_labels.shape[1], target_labels.shape[2],
        self.num_classes }, { dtype = "int64" })
    -- target_scores.scatter_(2, target_labels.unsqueeze(-1), 1)
    target_scores:scatter_(3, target_labels:unsqueeze(-1) + 1, 1) -- class id + 1 as an index
    -- fg_scores_mask = fg_mask[:, :, None].repeat(1, 1, self.num_classes)  # (b, h*w, 80)
    local fg_scores_mask = fg_mask[{ {}, {}, tide.newaxis }]["repeat"](
        fg_mask[{ {}, {}, tide.newaxis }], 1, 1, self.num_classes)
    -- target_scores = torch.where(fg_scores_mask > 0, target_scores, 0)
    target_scores = tide.where(fg_scores_mask:gt(0), target_scores, 0)
    return target_labels, target_bboxes, target_scores
end

-- @staticmethod
-- def select_candidates_in_gts(xy_centers, gt_bboxes, eps=1e-9):
function TaskAlignedAssigner.select_candidates_in_gts(xy_centers, gt_bboxes, eps)
    eps = eps or 1e-9
    local n_anchors = xy_centers.shape[1]
    -- bs, n_boxes, _ = gt_bboxes.shape
    local bs, n_boxes = gt_bboxes.shape[1], gt_bboxes.shape[2]
    -- lt, rb = gt_bboxes.view(-1, 1, 4).chunk(2, 2)  # left-top, right-bottom
    local lr = gt_bboxes:view(-1, 1, 4):chunk(2, 3)
    local lt, rb = lr[1], lr[2]
    -- bbox_deltas = torch.cat((xy_centers[None] - lt, rb - xy_centers[None]), dim=2)
    --     .view(bs, n_boxes, n_anchors, -1)
    local bbox_deltas = tide.cat({ xy_centers[{ tide.newaxis }] - lt,
        rb - xy_centers[{ tide.newaxis }] }, 3):view(bs, n_boxes, n_anchors, -1)
    -- return bbox_deltas.amin(3).gt_(eps)
    return bbox_deltas:amin(4):gt_(eps)
end

-- @staticmethod
-- def select_highest_overlaps(mask_pos, overlaps, n_max_boxes):
function TaskAlignedAssigner.select_highest_overlaps(mask_pos, overlaps, n_max_boxes)
    -- (b, n_max_boxes, h*w) -> (b, h*w)
    local fg_mask = mask_pos:sum(-2)
    -- if fg_mask.max() > 1:  # one anchor is assigned to multiple gt_bboxes
    if fg_mask:max():item() > 1 then
        -- mask_multi_gts = (fg_mask.unsqueeze(1) > 1).expand(-1, n_max_boxes, -1)
        local mask_multi_gts = fg_mask:unsqueeze(2):gt(1):expand(-1, n_max_boxes, -1)
        -- max_overlaps_idx = overlaps.argmax(1)  # (b, h*w)
        local max_overlaps_idx = overlaps:argmax(2)
        -- is_max_overlaps = torch.zeros(mask_pos.shape, dtype=mask_pos.dtype, ...)
        local is_max_overlaps = tide.zeros(mask_pos.shape, { dtype = mask_pos.dtype })
        -- is_max_overlaps.scatter_(1, max_overlaps_idx.unsqueeze(1), 1)
        is_max_overlaps:scatter_(2, max_overlaps_idx:unsqueeze(2), 1)
        -- mask_pos = torch.where(mask_multi_gts, is_max_overlaps, mask_pos).float()
        mask_pos = tide.where(mask_multi_gts, is_max_overlaps, mask_pos):float()
        fg_mask = mask_pos:sum(-2)
    end
    -- Find each grid serve which gt(index)
    local target_gt_idx = mask_pos:argmax(-2) -- (b, h*w)
    return target_gt_idx, fg_mask, mask_pos
end

-- def make_anchors(feats, strides, grid_cell_offset=0.5):
local function make_anchors(feats, strides, grid_cell_offset)
    grid_cell_offset = grid_cell_offset or 0.5
    local anchor_points, stride_tensor = {}, {}
    assert(feats ~= nil)
    local dtype = feats[1].dtype
    -- for i, stride in enumerate(strides):
    for i, stride in ipairs(strides) do
        -- _, _, h, w = feats[i].shape
        local h, w = feats[i].shape[3], feats[i].shape[4]
        -- sx = torch.arange(end=w, device=device, dtype=dtype) + grid_cell_offset  # shift x
        local sx = tide.arange(0, w, { dtype = dtype }) + grid_cell_offset
        local sy = tide.arange(0, h, { dtype = dtype }) + grid_cell_offset
        -- sy, sx = torch.meshgrid(sy, sx, indexing="ij")
        local g = tide.meshgrid(sy, sx, { indexing = "ij" })
        sy, sx = g[1], g[2]
        -- anchor_points.append(torch.stack((sx, sy), -1).view(-1, 2))
        anchor_points[#anchor_points + 1] = tide.stack({ sx, sy }, -1):view(-1, 2)
        -- stride_tensor.append(torch.full((h * w, 1), stride, dtype=dtype, device=device))
        stride_tensor[#stride_tensor + 1] = tide.full({ h * w, 1 }, stride, { dtype = dtype })
    end
    return tide.cat(anchor_points), tide.cat(stride_tensor)
end

-- def dist2bbox(distance, anchor_points, xywh=True, dim=-1):
local function dist2bbox(distance, anchor_points, xywh, dim)
    if xywh == nil then xywh = true end
    dim = dim or -1
    -- lt, rb = distance.chunk(2, dim)
    local c = distance:chunk(2, dim)
    local lt, rb = c[1], c[2]
    local x1y1 = anchor_points - lt
    local x2y2 = anchor_points + rb
    if xywh then
        local c_xy = (x1y1 + x2y2) / 2
        local wh = x2y2 - x1y1
        return tide.cat({ c_xy, wh }, dim) -- xywh bbox
    end
    return tide.cat({ x1y1, x2y2 }, dim) -- xyxy bbox
end

-- def bbox2dist(anchor_points, bbox, reg_max):
local function bbox2dist(anchor_points, bbox, reg_max)
    -- x1y1, x2y2 = bbox.chunk(2, -1)
    local c = bbox:chunk(2, -1)
    local x1y1, x2y2 = c[1], c[2]
    -- return torch.cat((anchor_points - x1y1, x2y2 - anchor_points), -1).clamp_(0, reg_max - 0.01)
    return tide.cat({ anchor_points - x1y1, x2y2 - anchor_points }, -1):clamp_(0, reg_max - 0.01)
end

---------------------------------------------------------------------------------------------
-- ultralytics/utils/loss.py
---------------------------------------------------------------------------------------------
-- class BboxLoss(nn.Module):
local BboxLoss = nn.Module:extend("BboxLoss")
-- def __init__(self, reg_max, use_dfl=False):
function BboxLoss:init(reg_max, use_dfl)
    self.reg_max = reg_max
    self.use_dfl = use_dfl or false
end

-- def forward(self, pred_dist, pred_bboxes, anchor_points, target_bboxes, target_scores,
--             target_scores_sum, fg_mask):
function BboxLoss:forward(pred_dist, pred_bboxes, anchor_points, target_bboxes, target_scores,
                          target_scores_sum, fg_mask)
    -- weight = target_scores.sum(-1)[fg_mask].unsqueeze(-1)
    local weight = target_scores:sum(-1)[fg_mask]:unsqueeze(-1)
    -- iou = bbox_iou(pred_bboxes[fg_mask], target_bboxes[fg_mask], xywh=False, CIoU=True)
    local iou = bbox_iou(pred_bboxes[fg_mask], target_bboxes[fg_mask],
        { xywh = false, CIoU = true })
    local loss_iou = ((1.0 - iou) * weight):sum() / target_scores_sum
    -- DFL loss
    local loss_dfl
    if self.use_dfl then
        local target_ltrb = bbox2dist(anchor_points, target_bboxes, self.reg_max)
        -- loss_dfl = self._df_loss(pred_dist[fg_mask].view(-1, self.reg_max + 1),
        --     target_ltrb[fg_mask]) * weight
        loss_dfl = self._df_loss(pred_dist[fg_mask]:view(-1, self.reg_max + 1),
            target_ltrb[fg_mask]) * weight
        loss_dfl = loss_dfl:sum() / target_scores_sum
    else
        loss_dfl = tide.tensor(0.0)
    end
    return loss_iou, loss_dfl
end

-- @staticmethod
-- def _df_loss(pred_dist, target):
function BboxLoss._df_loss(pred_dist, target)
    local tl = target:long() -- target left
    local tr = tl + 1 -- target right
    local wl = tr - target -- weight left
    local wr = 1 - wl -- weight right
    -- return (F.cross_entropy(pred_dist, tl.view(-1), reduction="none").view(tl.shape) * wl
    --     + F.cross_entropy(pred_dist, tr.view(-1), reduction="none").view(tl.shape) * wr
    -- ).mean(-1, keepdim=True)
    -- (bins 0..reg_max are classes 1..reg_max + 1 for cross_entropy)
    return (F.cross_entropy(pred_dist, tl:view(-1) + 1, { reduction = "none" }):view(tl.shape) * wl
        + F.cross_entropy(pred_dist, tr:view(-1) + 1, { reduction = "none" }):view(tl.shape) * wr
    ):mean(-1, true)
end

-- class v8DetectionLoss:
local v8DetectionLoss = ported.class("v8DetectionLoss")
-- def __init__(self, model):  # model must be de-paralleled
-- (the Detect head's attributes and model.args given directly: no model here)
function v8DetectionLoss:__init__(m, h)
    self.bce = nn.BCEWithLogitsLoss({ reduction = "none" })
    self.hyp = h
    self.stride = m.stride -- model strides
    self.nc = m.nc -- number of classes
    self.no = m.nc + m.reg_max * 4
    self.reg_max = m.reg_max
    self.use_dfl = m.reg_max > 1
    self.assigner = TaskAlignedAssigner(10, self.nc, 0.5, 6.0)
    self.bbox_loss = BboxLoss(m.reg_max - 1, self.use_dfl)
    -- self.proj = torch.arange(m.reg_max, dtype=torch.float, device=device)
    self.proj = tide.arange(0, m.reg_max, { dtype = "float32" })
end

-- def preprocess(self, targets, batch_size, scale_tensor):
function v8DetectionLoss:preprocess(targets, batch_size, scale_tensor)
    local out
    if targets.shape[1] == 0 then
        out = tide.zeros({ batch_size, 0, 5 })
    else
        -- i = targets[:, 0]  # image index
        local i = targets[{ {}, 1 }]
        -- _, counts = i.unique(return_counts=True)
        local _, counts = i:unique({ return_counts = true })
        counts = counts:to("int32")
        -- out = torch.zeros(batch_size, counts.max(), 5, device=self.device)
        out = tide.zeros(batch_size, counts:max():item(), 5)
        -- for j in range(batch_size):
        for j = 0, batch_size - 1 do -- j is the 0-based image id the data holds
            local matches = i:eq(j)
            local n = matches:sum():item()
            if n > 0 then
                -- out[j, :n] = targets[matches, 1:]
                out[{ j + 1, { 1, n } }] = targets[matches][{ {}, { 2, -1 } }]
            end
        end
        -- out[..., 1:5] = xywh2xyxy(out[..., 1:5].mul_(scale_tensor))
        out[{ "...", { 2, 5 } }] = xywh2xyxy(out[{ "...", { 2, 5 } }]:mul_(scale_tensor))
    end
    return out
end

-- def bbox_decode(self, anchor_points, pred_dist):
function v8DetectionLoss:bbox_decode(anchor_points, pred_dist)
    if self.use_dfl then
        -- b, a, c = pred_dist.shape  # batch, anchors, channels
        local b, a, c = pred_dist.shape[1], pred_dist.shape[2], pred_dist.shape[3]
        -- pred_dist = pred_dist.view(b, a, 4, c // 4).softmax(3)
        --     .matmul(self.proj.type(pred_dist.dtype))
        -- (c // 4: math.floor, Lua 5.1 has no //)
        pred_dist = pred_dist:view(b, a, 4, math.floor(c / 4)):softmax(4)
            :matmul(self.proj:to(pred_dist.dtype))
    end
    return dist2bbox(pred_dist, anchor_points, false)
end

-- def __call__(self, preds, batch):
function v8DetectionLoss:__call__(preds, batch)
    -- loss = torch.zeros(3, device=self.device)  # box, cls, dfl
    local loss = tide.zeros(3)
    -- feats = preds[1] if isinstance(preds, tuple) else preds
    local feats = preds
    -- pred_distri, pred_scores = torch.cat([xi.view(feats[0].shape[0], self.no, -1)
    --     for xi in feats], 2).split((self.reg_max * 4, self.nc), 1)
    local views = {}
    for k, xi in ipairs(feats) do
        views[k] = xi:view(feats[1].shape[1], self.no, -1)
    end
    local parts = tide.cat(views, 3):split({ self.reg_max * 4, self.nc }, 2)
    local pred_distri, pred_scores = parts[1], parts[2]
    -- pred_scores = pred_scores.permute(0, 2, 1).contiguous()
    pred_scores = pred_scores:permute(1, 3, 2):contiguous()
    pred_distri = pred_distri:permute(1, 3, 2):contiguous()
    local dtype = pred_scores.dtype
    local batch_size = pred_scores.shape[1]
    -- imgsz = torch.tensor(feats[0].shape[2:], device=self.device, dtype=dtype) * self.stride[0]
    local imgsz = tide.tensor({ feats[1].shape[3], feats[1].shape[4] }, { dtype = dtype })
        * self.stride[1] -- image size (h,w)
    local anchor_points, stride_tensor = make_anchors(feats, self.stride, 0.5)
    -- Targets
    -- targets = torch.cat((batch["batch_idx"].view(-1, 1), batch["cls"].view(-1, 1),
    --     batch["bboxes"]), 1)
    local targets = tide.cat({ batch.batch_idx:view(-1, 1), batch.cls:view(-1, 1), batch.bboxes },
        2)
    -- targets = self.preprocess(targets.to(self.device), batch_size,
    --     scale_tensor=imgsz[[1, 0, 1, 0]])
    targets = self:preprocess(targets, batch_size, imgsz[tide.tensor({ 2, 1, 2, 1 })])
    -- gt_labels, gt_bboxes = targets.split((1, 4), 2)  # cls, xyxy
    local gl = targets:split({ 1, 4 }, 3)
    local gt_labels, gt_bboxes = gl[1], gl[2]
    -- mask_gt = gt_bboxes.sum(2, keepdim=True).gt_(0)
    local mask_gt = gt_bboxes:sum(3, true):gt_(0)
    -- Pboxes
    local pred_bboxes = self:bbox_decode(anchor_points, pred_distri) -- xyxy, (b, h*w, 4)
    -- _, target_bboxes, target_scores, fg_mask, _ = self.assigner(
    --     pred_scores.detach().sigmoid(),
    --     (pred_bboxes.detach() * stride_tensor).type(gt_bboxes.dtype),
    --     anchor_points * stride_tensor, gt_labels, gt_bboxes, mask_gt)
    local target_labels, target_bboxes, target_scores, fg_mask, target_gt_idx = self.assigner(
        pred_scores:detach():sigmoid(),
        (pred_bboxes:detach() * stride_tensor):to(gt_bboxes.dtype),
        anchor_points * stride_tensor, gt_labels, gt_bboxes, mask_gt)
    self.debug = { anchor_points = anchor_points, stride_tensor = stride_tensor, targets = targets,
        mask_gt = mask_gt, pred_bboxes = pred_bboxes, target_bboxes = target_bboxes:clone(),
        target_scores = target_scores, fg_mask = fg_mask, target_gt_idx = target_gt_idx,
        target_labels = target_labels }
    -- target_scores_sum = max(target_scores.sum(), 1)
    local target_scores_sum = target_scores:sum()
    if target_scores_sum:item() < 1 then target_scores_sum = 1 end
    -- Cls loss
    -- loss[1] = self.bce(pred_scores, target_scores.to(dtype)).sum() / target_scores_sum  # BCE
    loss[2] = self.bce(pred_scores, target_scores:to(dtype)):sum() / target_scores_sum
    -- Bbox loss
    -- if fg_mask.sum():
    if fg_mask:sum():item() > 0 then
        -- target_bboxes /= stride_tensor
        target_bboxes:div_(stride_tensor)
        -- loss[0], loss[2] = self.bbox_loss(pred_distri, pred_bboxes, anchor_points,
        --     target_bboxes, target_scores, target_scores_sum, fg_mask)
        loss[1], loss[3] = self.bbox_loss(pred_distri, pred_bboxes, anchor_points, target_bboxes,
            target_scores, target_scores_sum, fg_mask)
    end
    -- loss[0] *= self.hyp.box  # box gain
    loss[1]:mul_(self.hyp.box)
    loss[2]:mul_(self.hyp.cls) -- cls gain
    loss[3]:mul_(self.hyp.dfl) -- dfl gain
    -- return loss.sum() * batch_size, loss.detach()  # loss(box, cls, dfl)
    return loss:sum() * batch_size, loss:detach()
end

---------------------------------------------------------------------------------------------
-- the fixed predictions and targets, PyTorch's values
---------------------------------------------------------------------------------------------
-- def pred(i, shape): x = torch.arange(n).view(shape); (torch.sin(0.7 * x + 0.3 * (i + 1)))
local function pred(i, shape)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    local x = tide.arange(0, n, { dtype = "float32" }):view(shape)
    return (tide.sin(0.7 * x + 0.3 * i)):requires_grad_()
end

local function run_loss()
    local feats = { pred(1, { 2, 19, 4, 4 }), pred(2, { 2, 19, 2, 2 }) }
    local batch = { batch_idx = tide.tensor({ 0, 0, 1 }), cls = tide.tensor({ 0, 2, 1 }),
        bboxes = tide.tensor({ { 0.35, 0.35, 0.5, 0.5 }, { 0.55, 0.6, 0.4, 0.5 },
            { 0.5, 0.5, 0.6, 0.55 } }) }
    local crit = v8DetectionLoss({ stride = { 8, 16 }, nc = 3, reg_max = 4 },
        { box = 7.5, cls = 0.5, dfl = 1.5 })
    local total, items = crit(feats, batch)
    return crit, feats, total, items
end

describe("ported ultralytics YOLOv8 detection loss (tal.py, metrics.py, loss.py)", function()
    it("bbox_iou: IoU, GIoU, DIoU, CIoU in xywh and xyxy, and CIoU's gradient", function()
        local b1 = tide.tensor({ { 0.3, 0.4, 0.5, 0.6 }, { 0.2, 0.2, 0.3, 0.25 } })
        local b2 = tide.tensor({ { 0.35, 0.45, 0.4, 0.7 }, { 0.6, 0.6, 0.2, 0.3 } })
        local want = {
            { 0.70588219165802, 0.0 }, { 0.6773109436035156, -0.6923075318336487 },
            { 0.6991254687309265, -0.364412784576416 },
            { 0.6986161470413208, -0.3655068874359131 } }
        local kws = { {}, { GIoU = true }, { DIoU = true }, { CIoU = true } }
        for _, xywh in ipairs({ true, false }) do
            local x1, x2 = b1, b2
            if not xywh then x1, x2 = xywh2xyxy(b1), xywh2xyxy(b2) end
            for k, kw in ipairs(kws) do
                kw.xywh = xywh
                local iou = bbox_iou(x1, x2, kw)
                assert.are.same({ 2, 1 }, iou.shape)
                assert_close_list(want[k], flat(iou), 1e-5, "iou " .. k .. tostring(xywh))
            end
        end
        local p = xywh2xyxy(b2):clone():requires_grad_()
        bbox_iou(xywh2xyxy(b1), p, { xywh = false, CIoU = true }):sum():backward()
        assert_close_list({ -1.630907416343689, -0.243399977684021, -0.004851698875427246,
            -0.8888031840324402, -0.47304630279541016, -0.4438289999961853, 0.10150088369846344,
            0.0930330827832222 }, flat(p.grad), 1e-4, "ciou grad")
    end)

    it("make_anchors, preprocess and the assigner's outputs match PyTorch's", function()
        local crit = run_loss()
        local d = crit.debug
        assert.are.same({ 20, 2 }, d.anchor_points.shape)
        assert_close_list({ 0.5, 0.5, 1.5, 0.5, 2.5, 0.5, 3.5, 0.5, 0.5, 1.5 },
            { unpack(flat(d.anchor_points), 1, 10) }, 1e-6, "anchors")
        assert_close_list({ 0.5, 0.5, 1.5, 0.5, 0.5, 1.5, 1.5, 1.5 },
            flat(d.anchor_points[{ { 17, 20 } }]), 1e-6, "anchors stride 16")
        assert_close_list({ 8, 16 },
            { d.stride_tensor[16][1]:item(), d.stride_tensor[17][1]:item() }, 1e-6, "strides")
        assert.are.same({ 2, 2, 5 }, d.targets.shape)
        assert_close_list({ 0, 3.2, 3.2, 19.2, 19.2, 2, 11.2, 11.2, 24, 27.2,
            1, 6.4, 7.2, 25.6, 24.8, 0, 0, 0, 0, 0 }, flat(d.targets), 1e-5, "targets")
        assert_close_list({ 1, 1, 1, 0 }, flat(d.mask_gt), 0, "mask_gt")
        -- the anchors in front: PyTorch's indices + 1
        local fg = {}
        for b = 1, 2 do
            fg[b] = {}
            for a = 1, 20 do
                if d.fg_mask[b][a]:item() then fg[b][#fg[b] + 1] = a end
            end
        end
        assert.are.same({ { 1, 2, 5, 6, 7, 10, 11, 17 }, { 6, 7, 10, 11, 17, 18, 19, 20 } }, fg)
        assert.are.same("bool", d.fg_mask.dtype)
        -- target_gt_idx: PyTorch's + 1 (anchor 6 of image 1 sat in both boxes: the better IoU won)
        local tgi = flat(d.target_gt_idx)
        local want_tgi = {}
        for k = 1, 40 do want_tgi[k] = 1 end
        want_tgi[7], want_tgi[10], want_tgi[11] = 2, 2, 2
        assert_close_list(want_tgi, tgi, 0, "target_gt_idx")
        local tl = flat(d.target_labels)
        assert.are.same(0, tl[1]); assert.are.same(2, tl[7]); assert.are.same(1, tl[21])
        local ts = d.target_scores
        assert.are.same({ 2, 20, 3 }, ts.shape)
        assert(close(ts:sum():item(), 1.65664803981781, 1e-5))
        assert_close_list({ 0.49301040172576904, 0.03185512498021126, 0.014105645939707756,
            1.305240857618628e-05, 0.0006090507959015667, 0.45667409896850586,
            3.209364876965992e-05 },
            { ts[1][2][1]:item(), ts[1][5][1]:item(), ts[1][6][1]:item(), ts[1][7][3]:item(),
                ts[1][10][3]:item(), ts[1][11][3]:item(), ts[1][17][1]:item() }, 1e-4, "scores 1")
        assert_close_list({ 0.07602384686470032, 0.007148521952331066, 0.01709071919322014,
            0.5596288442611694, 9.023243183037266e-05, 0.00018885705503635108,
            4.375561184133403e-05, 0.00013372875400818884 },
            { ts[2][6][2]:item(), ts[2][7][2]:item(), ts[2][10][2]:item(), ts[2][11][2]:item(),
                ts[2][17][2]:item(), ts[2][18][2]:item(), ts[2][19][2]:item(),
                ts[2][20][2]:item() },
            1e-4, "scores 2")
        assert(close(d.target_bboxes:sum():item(), 2262.39990234375, 1e-5))
        assert_close_list({ 11.2, 11.2, 24, 27.2 }, flat(d.target_bboxes[1][7]), 1e-5, "tbox")
        assert(close(d.pred_bboxes:sum():item(), 295.0701904296875, 1e-5))
        assert_close_list({ -0.09744417667388916, -0.5011382102966309, 3.745417833328247,
            3.497668743133545 }, flat(d.pred_bboxes[1][6]), 1e-5, "pred box")
        local dbg = crit.assigner.debug
        assert(close(dbg.overlaps:sum():item(), 4.145164489746094, 1e-5))
        assert(close(dbg.align_metric:sum():item(), 0.046608708798885345, 1e-4))
        assert_close_list({ 0.2541419267654419, 0.1771933138370514 },
            { dbg.overlaps[1][1][6]:item(), dbg.overlaps[1][2][6]:item() }, 1e-5, "overlaps")
        assert.are.same(1, dbg.mask_pos:sum(2):max():item())
        -- the padded gt of image 2: every topk index masked to anchor 1
        assert_close_list({ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 },
            flat(crit.assigner.debug_topk[2][2]), 0, "masked topk")
    end)

    it("the three loss components, the total and the gradients match PyTorch's", function()
        local _, feats, total, items = run_loss()
        assert_close_list({ 3.7948412895202637, 26.667449951171875, 2.026519298553467 },
            flat(items), 1e-5, "loss items")
        assert(close(total:item(), 64.97762298583984, 1e-5), tostring(total:item()))
        assert.is_false(items.requires_grad)
        total:backward()
        assert_close_list({ 27.511859893798828, 7.2106099128723145 },
            { feats[1].grad:sum():item(), feats[2].grad:sum():item() }, 1e-4, "grad sums")
        assert_close_list({ 42.05231857299805, 7.212291717529297 },
            { feats[1].grad:abs():sum():item(), feats[2].grad:abs():sum():item() }, 1e-4,
            "grad abs sums")
        assert_close_list({ 0.0, 0.6452612280845642, 0.0, 0.0 }, flat(feats[1].grad[1][1][1]),
            1e-4, "grad f0")
        assert_close_list({ 0.22742319107055664, 0.1693609207868576, 0.16991651058197021,
            0.22905881702899933 }, flat(feats[2].grad[2][19]), 1e-4, "grad f1")
    end)

    it("relu's gradient through an expanded upstream gradient (BCE's sum() / n)", function()
        -- the bug this port met: relu's fused backward wrote into a stride-0 gradient
        local x = tide.tensor({ { 0.5, -1.0 }, { 2.0, -0.3 } }):requires_grad_()
        ;(x:relu():sum() / 0.5):backward()
        assert_close_list({ 2, 0, 2, 0 }, flat(x.grad), 1e-6, "relu grad")
    end)
end)
