-- ported_scripts199_spec.lua — pytorch/vision's pure-PyTorch ops, ported line for line at tiny
-- sizes: torchvision/ops/boxes.py (box_area, _box_inter_union, box_iou, generalized_box_iou,
-- _box_diou_iou, distance_box_iou, complete_box_iou, box_convert between xyxy / xywh / cxcywh
-- with _box_convert.py's helpers, clip_boxes_to_image, remove_small_boxes, masks_to_boxes),
-- ops/_utils.py (_upcast, _loss_inter_union), ops/focal_loss.py (sigmoid_focal_loss),
-- ops/giou_loss.py, ops/diou_loss.py, ops/ciou_loss.py, ops/drop_block.py (drop_block2d),
-- ops/stochastic_depth.py, ops/misc.py (FrozenBatchNorm2d, Conv2dNormActivation,
-- SqueezeExcitation, MLP) and models/mobilenetv2.py (_make_divisible, InvertedResidual,
-- MobileNetV2 at width 0.25: 8 channels, two blocks). Checked against PyTorch 1.13 on fixed
-- boxes (identical, disjoint, zero-area) and fixed inputs. The Python line stands above each
-- Lua line that differs from it. nms, batched_nms, roi_align, roi_pool, ps_roi_*,
-- deform_conv2d call torchvision's C++ kernels (torch.ops.torchvision.*) and are not ported.
-- Dims and indices are 1-based; box coordinates stay what they are (pixel 0 is 0).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list

local function list(t)
    local out = {}
    local flat = t:detach():contiguous():view(-1)
    for i = 1, flat:numel() do out[i] = flat[i]:item() end
    return out
end

-- sum, sum of |x| and the first six values (what the PyTorch script printed)
local function summary(t)
    t = t:detach()
    local out = { t:sum():item(), t:abs():sum():item() }
    local flat = t:contiguous():view(-1)
    for i = 1, 6 do out[#out + 1] = flat[i]:item() end
    return out
end

-- relative agreement for values far below 1 (ported.close is absolute there)
local function assert_close_rel(want, got, tol, what)
    assert(#want == #got, what .. ": length")
    for i = 1, #want do
        assert(math.abs(got[i] - want[i]) <= tol * math.abs(want[i]) + 1e-12,
            string.format("%s[%d]: %.8g, PyTorch %.8g", what, i, got[i], want[i]))
    end
end

---------------------------------------------------------------------------------------------
-- 1. ops/_utils.py, ops/_box_convert.py, ops/boxes.py
---------------------------------------------------------------------------------------------
-- def _upcast(t: Tensor) -> Tensor:
local function _upcast(t)
    -- Protects from numerical overflows in multiplications by upcasting to the equivalent
    -- higher type
    if t:is_floating_point() then
        -- return t if t.dtype in (torch.float32, torch.float64) else t.float()
        return (t.dtype == "float32" or t.dtype == "float64") and t or t:float()
    else
        -- return t if t.dtype in (torch.int32, torch.int64) else t.int()
        return (t.dtype == "int32" or t.dtype == "int64") and t or t:int()
    end
end

-- def _box_cxcywh_to_xyxy(boxes: Tensor) -> Tensor:
local function _box_cxcywh_to_xyxy(boxes)
    -- cx, cy, w, h = boxes.unbind(-1)
    local cx, cy, w, h = unpack(boxes:unbind(-1))
    local x1 = cx - 0.5 * w
    local y1 = cy - 0.5 * h
    local x2 = cx + 0.5 * w
    local y2 = cy + 0.5 * h
    -- boxes = torch.stack((x1, y1, x2, y2), dim=-1)
    return tide.stack({ x1, y1, x2, y2 }, -1)
end

-- def _box_xyxy_to_cxcywh(boxes: Tensor) -> Tensor:
local function _box_xyxy_to_cxcywh(boxes)
    local x1, y1, x2, y2 = unpack(boxes:unbind(-1))
    local cx = (x1 + x2) / 2
    local cy = (y1 + y2) / 2
    local w = x2 - x1
    local h = y2 - y1
    return tide.stack({ cx, cy, w, h }, -1)
end

-- def _box_xywh_to_xyxy(boxes: Tensor) -> Tensor:
local function _box_xywh_to_xyxy(boxes)
    local x, y, w, h = unpack(boxes:unbind(-1))
    return tide.stack({ x, y, x + w, y + h }, -1)
end

-- def _box_xyxy_to_xywh(boxes: Tensor) -> Tensor:
local function _box_xyxy_to_xywh(boxes)
    local x1, y1, x2, y2 = unpack(boxes:unbind(-1))
    local w = x2 - x1 -- x2 - x1
    local h = y2 - y1 -- y2 - y1
    return tide.stack({ x1, y1, w, h }, -1)
end

-- def remove_small_boxes(boxes: Tensor, min_size: float) -> Tensor:
local function remove_small_boxes(boxes, min_size)
    -- ws, hs = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    local ws, hs = boxes[{ {}, 3 }] - boxes[{ {}, 1 }], boxes[{ {}, 4 }] - boxes[{ {}, 2 }]
    -- keep = (ws >= min_size) & (hs >= min_size)
    local keep = ws:ge(min_size):logical_and(hs:ge(min_size))
    -- keep = torch.where(keep)[0]
    keep = tide.where(keep)[1]
    return keep
end

-- def clip_boxes_to_image(boxes: Tensor, size: tuple[int, int]) -> Tensor:
local function clip_boxes_to_image(boxes, size)
    local dim = boxes:dim()
    -- boxes_x = boxes[..., 0::2]
    local boxes_x = boxes[{ "...", { 1, -1, 2 } }]
    -- boxes_y = boxes[..., 1::2]
    local boxes_y = boxes[{ "...", { 2, -1, 2 } }]
    local height, width = size[1], size[2]
    -- boxes_x = boxes_x.clamp(min=0, max=width)
    boxes_x = boxes_x:clamp({ min = 0, max = width })
    boxes_y = boxes_y:clamp({ min = 0, max = height })
    -- clipped_boxes = torch.stack((boxes_x, boxes_y), dim=dim)
    local clipped_boxes = tide.stack({ boxes_x, boxes_y }, dim + 1)
    return clipped_boxes:reshape(boxes.shape)
end

-- def box_convert(boxes: Tensor, in_fmt: str, out_fmt: str) -> Tensor:
local function box_convert(boxes, in_fmt, out_fmt)
    -- allowed_fmts = ("xyxy", "xywh", "cxcywh", ...) — the rotated formats are not ported
    local allowed_fmts = { xyxy = true, xywh = true, cxcywh = true }
    -- if in_fmt not in allowed_fmts or out_fmt not in allowed_fmts:
    if not allowed_fmts[in_fmt] or not allowed_fmts[out_fmt] then
        error(string.format("Unsupported Bounding Box Conversions for given in_fmt %s and " ..
            "out_fmt %s", in_fmt, out_fmt))
    end
    if in_fmt == out_fmt then
        return boxes:clone()
    end
    -- e = (in_fmt, out_fmt)
    local e = in_fmt .. ">" .. out_fmt
    if e == "xywh>xyxy" then
        boxes = _box_xywh_to_xyxy(boxes)
    elseif e == "cxcywh>xyxy" then
        boxes = _box_cxcywh_to_xyxy(boxes)
    elseif e == "xyxy>xywh" then
        boxes = _box_xyxy_to_xywh(boxes)
    elseif e == "xyxy>cxcywh" then
        boxes = _box_xyxy_to_cxcywh(boxes)
    elseif e == "xywh>cxcywh" then
        boxes = _box_xywh_to_xyxy(boxes)
        boxes = _box_xyxy_to_cxcywh(boxes)
    elseif e == "cxcywh>xywh" then
        boxes = _box_cxcywh_to_xyxy(boxes)
        boxes = _box_xyxy_to_xywh(boxes)
    end
    return boxes
end

-- def box_area(boxes: Tensor) -> Tensor:
local function box_area(boxes)
    boxes = _upcast(boxes)
    -- return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    return (boxes[{ {}, 3 }] - boxes[{ {}, 1 }]) * (boxes[{ {}, 4 }] - boxes[{ {}, 2 }])
end

local NEW = tide.newaxis

-- def _box_inter_union(boxes1: Tensor, boxes2: Tensor) -> tuple[Tensor, Tensor]:
local function _box_inter_union(boxes1, boxes2)
    local area1 = box_area(boxes1)
    local area2 = box_area(boxes2)
    -- lt = torch.max(boxes1[:, None, :2], boxes2[:, :2])  # [N,M,2]
    local lt = tide.max(boxes1[{ {}, NEW, { 1, 2 } }], boxes2[{ {}, { 1, 2 } }])
    -- rb = torch.min(boxes1[:, None, 2:], boxes2[:, 2:])  # [N,M,2]
    local rb = tide.min(boxes1[{ {}, NEW, { 3, -1 } }], boxes2[{ {}, { 3, -1 } }])
    -- wh = _upcast(rb - lt).clamp(min=0)  # [N,M,2]
    local wh = _upcast(rb - lt):clamp({ min = 0 })
    -- inter = wh[:, :, 0] * wh[:, :, 1]  # [N,M]
    local inter = wh[{ {}, {}, 1 }] * wh[{ {}, {}, 2 }]
    -- union = area1[:, None] + area2 - inter
    local union = area1[{ {}, NEW }] + area2 - inter
    return inter, union
end

-- def box_iou(boxes1: Tensor, boxes2: Tensor) -> Tensor:
local function box_iou(boxes1, boxes2)
    local inter, union = _box_inter_union(boxes1, boxes2)
    local iou = inter / union
    return iou
end

-- def generalized_box_iou(boxes1: Tensor, boxes2: Tensor) -> Tensor:
local function generalized_box_iou(boxes1, boxes2)
    local inter, union = _box_inter_union(boxes1, boxes2)
    local iou = inter / union
    -- lti = torch.min(boxes1[:, None, :2], boxes2[:, :2])
    local lti = tide.min(boxes1[{ {}, NEW, { 1, 2 } }], boxes2[{ {}, { 1, 2 } }])
    -- rbi = torch.max(boxes1[:, None, 2:], boxes2[:, 2:])
    local rbi = tide.max(boxes1[{ {}, NEW, { 3, -1 } }], boxes2[{ {}, { 3, -1 } }])
    -- whi = _upcast(rbi - lti).clamp(min=0)  # [N,M,2]
    local whi = _upcast(rbi - lti):clamp({ min = 0 })
    -- areai = whi[:, :, 0] * whi[:, :, 1]
    local areai = whi[{ {}, {}, 1 }] * whi[{ {}, {}, 2 }]
    return iou - (areai - union) / areai
end

-- def _box_diou_iou(boxes1: Tensor, boxes2: Tensor, eps: float = 1e-7):
local function _box_diou_iou(boxes1, boxes2, eps)
    eps = eps or 1e-7
    local iou = box_iou(boxes1, boxes2)
    local lti = tide.min(boxes1[{ {}, NEW, { 1, 2 } }], boxes2[{ {}, { 1, 2 } }])
    local rbi = tide.max(boxes1[{ {}, NEW, { 3, -1 } }], boxes2[{ {}, { 3, -1 } }])
    local whi = _upcast(rbi - lti):clamp({ min = 0 })
    -- diagonal_distance_squared = (whi[:, :, 0] ** 2) + (whi[:, :, 1] ** 2) + eps
    local diagonal_distance_squared = (whi[{ {}, {}, 1 }] ^ 2) + (whi[{ {}, {}, 2 }] ^ 2) + eps
    -- centers of boxes
    -- x_p = (boxes1[:, 0] + boxes1[:, 2]) / 2
    local x_p = (boxes1[{ {}, 1 }] + boxes1[{ {}, 3 }]) / 2
    local y_p = (boxes1[{ {}, 2 }] + boxes1[{ {}, 4 }]) / 2
    local x_g = (boxes2[{ {}, 1 }] + boxes2[{ {}, 3 }]) / 2
    local y_g = (boxes2[{ {}, 2 }] + boxes2[{ {}, 4 }]) / 2
    -- The distance between boxes' centers squared.
    -- centers_distance_squared = (_upcast(x_p[:, None] - x_g[None, :]) ** 2) + (_upcast(...
    local centers_distance_squared = (_upcast(x_p[{ {}, NEW }] - x_g[{ NEW, {} }]) ^ 2)
        + (_upcast(y_p[{ {}, NEW }] - y_g[{ NEW, {} }]) ^ 2)
    -- The distance IoU is the IoU penalized by a normalized
    -- distance between boxes' centers squared.
    return iou - (centers_distance_squared / diagonal_distance_squared), iou
end

-- def complete_box_iou(boxes1: Tensor, boxes2: Tensor, eps: float = 1e-7) -> Tensor:
local function complete_box_iou(boxes1, boxes2, eps)
    eps = eps or 1e-7
    boxes1 = _upcast(boxes1)
    boxes2 = _upcast(boxes2)
    local diou, iou = _box_diou_iou(boxes1, boxes2, eps)
    -- w_pred = boxes1[:, None, 2] - boxes1[:, None, 0]
    local w_pred = boxes1[{ {}, NEW, 3 }] - boxes1[{ {}, NEW, 1 }]
    local h_pred = boxes1[{ {}, NEW, 4 }] - boxes1[{ {}, NEW, 2 }]
    -- w_gt = boxes2[:, 2] - boxes2[:, 0]
    local w_gt = boxes2[{ {}, 3 }] - boxes2[{ {}, 1 }]
    local h_gt = boxes2[{ {}, 4 }] - boxes2[{ {}, 2 }]
    -- v = (4 / (torch.pi**2)) * torch.pow(torch.atan(w_pred / h_pred) - torch.atan(w_gt / h_gt), 2)
    local v = (4 / (math.pi ^ 2)) * tide.pow(tide.atan(w_pred / h_pred) - tide.atan(w_gt / h_gt), 2)
    -- with torch.no_grad():
    local alpha = tide.no_grad(function()
        -- alpha = v / (1 - iou + v + eps)
        return v / (1 - iou + v + eps)
    end)
    return diou - alpha * v
end

-- def distance_box_iou(boxes1: Tensor, boxes2: Tensor, eps: float = 1e-7) -> Tensor:
local function distance_box_iou(boxes1, boxes2, eps)
    boxes1 = _upcast(boxes1)
    boxes2 = _upcast(boxes2)
    -- diou, _ = _box_diou_iou(boxes1, boxes2, eps=eps)
    local diou = _box_diou_iou(boxes1, boxes2, eps or 1e-7)
    return diou
end

-- def masks_to_boxes(masks: torch.Tensor) -> torch.Tensor:
local function masks_to_boxes(masks)
    if masks:numel() == 0 then
        -- return torch.zeros((0, 4), device=masks.device, dtype=torch.float)
        return tide.zeros({ 0, 4 }, { dtype = "float32" })
    end
    local n = masks.shape[1]
    local bounding_boxes = tide.zeros({ n, 4 }, { dtype = "float32" })
    -- for index, mask in enumerate(masks):
    for index, mask in ipairs(masks:unbind()) do
        -- y, x = torch.where(mask != 0)
        local y, x = unpack(tide.where(mask:ne(0)))
        -- tide's indices are 1-based; a box's coordinates are pixel positions from 0
        -- bounding_boxes[index, 0] = torch.min(x)
        bounding_boxes[{ index, 1 }] = tide.min(x) - 1
        bounding_boxes[{ index, 2 }] = tide.min(y) - 1
        bounding_boxes[{ index, 3 }] = tide.max(x) - 1
        bounding_boxes[{ index, 4 }] = tide.max(y) - 1
    end
    return bounding_boxes
end

---------------------------------------------------------------------------------------------
-- 2. ops/focal_loss.py, ops/_utils.py's _loss_inter_union, giou / diou / ciou losses
---------------------------------------------------------------------------------------------
-- def sigmoid_focal_loss(inputs, targets, alpha: float = 0.25, gamma: float = 2,
--                        reduction: str = "none"):
local function sigmoid_focal_loss(inputs, targets, alpha, gamma, reduction)
    alpha, gamma, reduction = alpha or 0.25, gamma or 2, reduction or "none"
    local p = tide.sigmoid(inputs)
    -- ce_loss = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    local ce_loss = F.binary_cross_entropy_with_logits(inputs, targets, { reduction = "none" })
    local p_t = p * targets + (1 - p) * (1 - targets)
    -- loss = ce_loss * ((1 - p_t) ** gamma)
    local loss = ce_loss * ((1 - p_t) ^ gamma)
    if alpha >= 0 then
        local alpha_t = alpha * targets + (1 - alpha) * (1 - targets)
        loss = alpha_t * loss
    end
    if reduction == "mean" then
        loss = loss:mean()
    elseif reduction == "sum" then
        loss = loss:sum()
    end
    return loss
end

-- def _loss_inter_union(boxes1: torch.Tensor, boxes2: torch.Tensor):
local function _loss_inter_union(boxes1, boxes2)
    -- x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    local x1, y1, x2, y2 = unpack(boxes1:unbind(-1))
    local x1g, y1g, x2g, y2g = unpack(boxes2:unbind(-1))
    -- Intersection keypoints
    local xkis1 = tide.max(x1, x1g)
    local ykis1 = tide.max(y1, y1g)
    local xkis2 = tide.min(x2, x2g)
    local ykis2 = tide.min(y2, y2g)
    local intsctk = tide.zeros_like(x1)
    -- mask = (ykis2 > ykis1) & (xkis2 > xkis1)
    local mask = ykis2:gt(ykis1):logical_and(xkis2:gt(xkis1))
    -- intsctk[mask] = (xkis2[mask] - xkis1[mask]) * (ykis2[mask] - ykis1[mask])
    intsctk[mask] = (xkis2[mask] - xkis1[mask]) * (ykis2[mask] - ykis1[mask])
    local unionk = (x2 - x1) * (y2 - y1) + (x2g - x1g) * (y2g - y1g) - intsctk
    return intsctk, unionk
end

-- the reduction the three losses share
local function reduce(loss, reduction)
    if reduction == "mean" then
        -- loss = loss.mean() if loss.numel() > 0 else 0.0 * loss.sum()
        loss = loss:numel() > 0 and loss:mean() or 0.0 * loss:sum()
    elseif reduction == "sum" then
        loss = loss:sum()
    end
    return loss
end

-- def generalized_box_iou_loss(boxes1, boxes2, reduction: str = "none", eps: float = 1e-7):
local function generalized_box_iou_loss(boxes1, boxes2, reduction, eps)
    eps = eps or 1e-7
    boxes1 = _upcast(boxes1)
    boxes2 = _upcast(boxes2)
    local intsctk, unionk = _loss_inter_union(boxes1, boxes2)
    local iouk = intsctk / (unionk + eps)
    local x1, y1, x2, y2 = unpack(boxes1:unbind(-1))
    local x1g, y1g, x2g, y2g = unpack(boxes2:unbind(-1))
    -- smallest enclosing box
    local xc1 = tide.min(x1, x1g)
    local yc1 = tide.min(y1, y1g)
    local xc2 = tide.max(x2, x2g)
    local yc2 = tide.max(y2, y2g)
    local area_c = (xc2 - xc1) * (yc2 - yc1)
    local miouk = iouk - ((area_c - unionk) / (area_c + eps))
    local loss = 1 - miouk
    -- Check reduction option and return loss accordingly
    return reduce(loss, reduction or "none")
end

-- def _diou_iou_loss(boxes1, boxes2, eps: float = 1e-7):
local function _diou_iou_loss(boxes1, boxes2, eps)
    local intsct, union = _loss_inter_union(boxes1, boxes2)
    local iou = intsct / (union + eps)
    -- smallest enclosing box
    local x1, y1, x2, y2 = unpack(boxes1:unbind(-1))
    local x1g, y1g, x2g, y2g = unpack(boxes2:unbind(-1))
    local xc1 = tide.min(x1, x1g)
    local yc1 = tide.min(y1, y1g)
    local xc2 = tide.max(x2, x2g)
    local yc2 = tide.max(y2, y2g)
    -- The diagonal distance of the smallest enclosing box squared
    -- diagonal_distance_squared = ((xc2 - xc1) ** 2) + ((yc2 - yc1) ** 2) + eps
    local diagonal_distance_squared = ((xc2 - xc1) ^ 2) + ((yc2 - yc1) ^ 2) + eps
    -- centers of boxes
    local x_p = (x2 + x1) / 2
    local y_p = (y2 + y1) / 2
    local x_g = (x1g + x2g) / 2
    local y_g = (y1g + y2g) / 2
    -- The distance between boxes' centers squared.
    -- distance = ((x_p - x_g) ** 2) + ((y_p - y_g) ** 2)
    local distance = ((x_p - x_g) ^ 2) + ((y_p - y_g) ^ 2)
    -- The distance IoU is the IoU penalized by a normalized
    -- distance between boxes' centers squared.
    local loss = 1 - iou + (distance / diagonal_distance_squared)
    return loss, iou
end

-- def distance_box_iou_loss(boxes1, boxes2, reduction: str = "none", eps: float = 1e-7):
local function distance_box_iou_loss(boxes1, boxes2, reduction, eps)
    boxes1 = _upcast(boxes1)
    boxes2 = _upcast(boxes2)
    -- loss, _ = _diou_iou_loss(boxes1, boxes2, eps)
    local loss = _diou_iou_loss(boxes1, boxes2, eps or 1e-7)
    return reduce(loss, reduction or "none")
end

-- def complete_box_iou_loss(boxes1, boxes2, reduction: str = "none", eps: float = 1e-7):
local function complete_box_iou_loss(boxes1, boxes2, reduction, eps)
    eps = eps or 1e-7
    boxes1 = _upcast(boxes1)
    boxes2 = _upcast(boxes2)
    local diou_loss, iou = _diou_iou_loss(boxes1, boxes2, eps)
    local x1, y1, x2, y2 = unpack(boxes1:unbind(-1))
    local x1g, y1g, x2g, y2g = unpack(boxes2:unbind(-1))
    -- width and height of boxes
    local w_pred = x2 - x1
    local h_pred = y2 - y1
    local w_gt = x2g - x1g
    local h_gt = y2g - y1g
    -- v = (4 / (torch.pi**2)) * torch.pow((torch.atan(w_gt / h_gt) - torch.atan(w_pred / ...
    local v = (4 / (math.pi ^ 2))
        * tide.pow((tide.atan(w_gt / h_gt) - tide.atan(w_pred / h_pred)), 2)
    -- with torch.no_grad():
    local alpha = tide.no_grad(function()
        return v / (1 - iou + v + eps)
    end)
    local loss = diou_loss + alpha * v
    return reduce(loss, reduction or "none")
end

---------------------------------------------------------------------------------------------
-- 3. ops/drop_block.py, ops/stochastic_depth.py
---------------------------------------------------------------------------------------------
-- def drop_block2d(input: Tensor, p: float, block_size: int, inplace: bool = False,
--                  eps: float = 1e-06, training: bool = True) -> Tensor:
-- draw(noise, gamma) stands for noise.bernoulli_(gamma) so that a test can give the mask
local function drop_block2d(input, p, block_size, inplace, eps, training, draw)
    eps = eps or 1e-06
    if training == nil then training = true end
    if p < 0.0 or p > 1.0 then
        error(string.format("drop probability has to be between 0 and 1, but got %s", p))
    end
    if not training or p == 0.0 then
        return input
    end
    -- N, C, H, W = input.size()
    local N, C, H, W = unpack(input:size())
    -- compute the gamma of Bernoulli distribution
    -- gamma = (p * H * W) / ((block_size ** 2) * ((H - block_size + 1) * (W - block_size + 1)))
    local gamma = (p * H * W) / ((block_size ^ 2) * ((H - block_size + 1) * (W - block_size + 1)))
    -- noise = torch.empty((N, C, H - block_size + 1, W - block_size + 1), dtype=input.dtype, ...)
    local noise = tide.empty({ N, C, H - block_size + 1, W - block_size + 1 },
        { dtype = input.dtype, device = input.device })
    -- noise.bernoulli_(gamma)
    if draw then noise = draw(noise, gamma) else noise:bernoulli_(gamma) end
    -- noise = F.pad(noise, [block_size // 2] * 4, value=0)
    -- (block_size // 2: Lua 5.1 and LuaJIT have no //)
    local half = math.floor(block_size / 2)
    noise = F.pad(noise, { half, half, half, half }, { value = 0 })
    -- noise = F.max_pool2d(noise, stride=(1, 1), kernel_size=(block_size, block_size),
    --                      padding=block_size // 2)
    noise = F.max_pool2d(noise, { stride = { 1, 1 }, kernel_size = { block_size, block_size },
        padding = half })
    noise = 1 - noise
    -- normalize_scale = noise.numel() / (eps + noise.sum())
    local normalize_scale = noise:numel() / (eps + noise:sum())
    if inplace then
        -- input.mul_(noise).mul_(normalize_scale)
        input:mul_(noise):mul_(normalize_scale)
    else
        input = input * noise * normalize_scale
    end
    return input
end

-- def stochastic_depth(input: Tensor, p: float, mode: str, training: bool = True) -> Tensor:
local function stochastic_depth(input, p, mode, training)
    if training == nil then training = true end
    if p < 0.0 or p > 1.0 then
        error(string.format("drop probability has to be between 0 and 1, but got %s", p))
    end
    -- if mode not in ["batch", "row"]:
    if mode ~= "batch" and mode ~= "row" then
        error(string.format("mode has to be either 'batch' or 'row', but got %s", mode))
    end
    if not training or p == 0.0 then
        return input
    end
    local survival_rate = 1.0 - p
    local size
    if mode == "row" then
        -- size = [input.shape[0]] + [1] * (input.ndim - 1)
        size = { input.shape[1] }
        for _ = 2, input.ndim do size[#size + 1] = 1 end
    else
        -- size = [1] * input.ndim
        size = {}
        for _ = 1, input.ndim do size[#size + 1] = 1 end
    end
    local noise = tide.empty(size, { dtype = input.dtype, device = input.device })
    noise = noise:bernoulli_(survival_rate)
    if survival_rate > 0.0 then
        noise:div_(survival_rate)
    end
    return input * noise
end

---------------------------------------------------------------------------------------------
-- 4. ops/misc.py, models/mobilenetv2.py
---------------------------------------------------------------------------------------------
-- class FrozenBatchNorm2d(torch.nn.Module):
local FrozenBatchNorm2d = nn.Module:extend("FrozenBatchNorm2d")
-- def __init__(self, num_features: int, eps: float = 1e-5):
function FrozenBatchNorm2d:init(num_features, eps)
    self.eps = eps or 1e-5
    -- self.register_buffer("weight", torch.ones(num_features))
    self:register_buffer("weight", tide.ones(num_features))
    self:register_buffer("bias", tide.zeros(num_features))
    self:register_buffer("running_mean", tide.zeros(num_features))
    self:register_buffer("running_var", tide.ones(num_features))
end
function FrozenBatchNorm2d:forward(x)
    -- move reshapes to the beginning
    -- to make it user-friendly
    local w = self.weight:reshape(1, -1, 1, 1)
    local b = self.bias:reshape(1, -1, 1, 1)
    local rv = self.running_var:reshape(1, -1, 1, 1)
    local rm = self.running_mean:reshape(1, -1, 1, 1)
    -- scale = w * (rv + self.eps).rsqrt()
    local scale = w * (rv + self.eps):rsqrt()
    local bias = b - rm * scale
    return x * scale + bias
end

-- class Conv2dNormActivation(ConvNormActivation) (ConvNormActivation's __init__ with
-- conv_layer=torch.nn.Conv2d):
local Conv2dNormActivation = nn.Sequential:extend("Conv2dNormActivation")
-- def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None, groups=1,
--              norm_layer=torch.nn.BatchNorm2d, activation_layer=torch.nn.ReLU, dilation=1,
--              inplace=True, bias=None):
function Conv2dNormActivation:init(in_channels, out_channels, o)
    o = o or {}
    local kernel_size, stride, padding = o.kernel_size or 3, o.stride or 1, o.padding
    local groups, dilation, bias = o.groups or 1, o.dilation or 1, o.bias
    local norm_layer, activation_layer = o.norm_layer, o.activation_layer
    -- (None is a value here: false stands for it, nil for the default)
    if norm_layer == nil then norm_layer = nn.BatchNorm2d end
    if activation_layer == nil then activation_layer = nn.ReLU end
    local inplace = o.inplace
    if inplace == nil then inplace = true end
    if padding == nil then
        -- padding = (kernel_size - 1) // 2 * dilation
        padding = math.floor((kernel_size - 1) / 2) * dilation
    end
    if bias == nil then
        -- bias = norm_layer is None
        bias = not norm_layer
    end
    -- layers = [conv_layer(in_channels, out_channels, kernel_size, stride, padding,
    --                      dilation=dilation, groups=groups, bias=bias)]
    local layers = { nn.Conv2d(in_channels, out_channels, kernel_size, { stride = stride,
        padding = padding, dilation = dilation, groups = groups, bias = bias }) }
    if norm_layer then
        layers[#layers + 1] = norm_layer(out_channels)
    end
    if activation_layer then
        -- params = {} if inplace is None else {"inplace": inplace}
        -- layers.append(activation_layer(**params))
        layers[#layers + 1] = activation_layer({ inplace = inplace })
    end
    -- super().__init__(*layers)
    nn.Sequential.init(self, unpack(layers))
    self.out_channels = out_channels
end

-- class SqueezeExcitation(torch.nn.Module):
local SqueezeExcitation = nn.Module:extend("SqueezeExcitation")
-- def __init__(self, input_channels, squeeze_channels, activation=torch.nn.ReLU,
--              scale_activation=torch.nn.Sigmoid):
function SqueezeExcitation:init(input_channels, squeeze_channels, activation, scale_activation)
    activation, scale_activation = activation or nn.ReLU, scale_activation or nn.Sigmoid
    self.avgpool = nn.AdaptiveAvgPool2d(1)
    self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
    self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
    self.activation = activation()
    self.scale_activation = scale_activation()
end
function SqueezeExcitation:_scale(input)
    local scale = self.avgpool(input)
    scale = self.fc1(scale)
    scale = self.activation(scale)
    scale = self.fc2(scale)
    return self.scale_activation(scale)
end
function SqueezeExcitation:forward(input)
    local scale = self:_scale(input)
    return scale * input
end

-- class MLP(torch.nn.Sequential):
local MLP = nn.Sequential:extend("MLP")
-- def __init__(self, in_channels, hidden_channels, norm_layer=None,
--              activation_layer=torch.nn.ReLU, inplace=None, bias=True, dropout=0.0):
function MLP:init(in_channels, hidden_channels, o)
    o = o or {}
    local norm_layer, activation_layer = o.norm_layer, o.activation_layer or nn.ReLU
    local bias, dropout = o.bias, o.dropout or 0.0
    if bias == nil then bias = true end
    -- params = {} if inplace is None else {"inplace": inplace}
    local params = o.inplace == nil and {} or { inplace = o.inplace }
    local layers = {}
    local in_dim = in_channels
    -- for hidden_dim in hidden_channels[:-1]:
    for i = 1, #hidden_channels - 1 do
        local hidden_dim = hidden_channels[i]
        -- layers.append(torch.nn.Linear(in_dim, hidden_dim, bias=bias))
        layers[#layers + 1] = nn.Linear(in_dim, hidden_dim, { bias = bias })
        if norm_layer then
            layers[#layers + 1] = norm_layer(hidden_dim)
        end
        -- layers.append(activation_layer(**params))
        layers[#layers + 1] = activation_layer(params)
        -- layers.append(torch.nn.Dropout(dropout, **params))
        layers[#layers + 1] = nn.Dropout(dropout, params)
        in_dim = hidden_dim
    end
    -- layers.append(torch.nn.Linear(in_dim, hidden_channels[-1], bias=bias))
    layers[#layers + 1] = nn.Linear(in_dim, hidden_channels[#hidden_channels], { bias = bias })
    layers[#layers + 1] = nn.Dropout(dropout, params)
    nn.Sequential.init(self, unpack(layers))
end

-- def _make_divisible(v: float, divisor: int, min_value: Optional[int] = None) -> int:
local function _make_divisible(v, divisor, min_value)
    if min_value == nil then
        min_value = divisor
    end
    -- new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    local new_v = math.max(min_value, math.floor(math.floor(v + divisor / 2) / divisor) * divisor)
    -- Make sure that round down does not go down by more than 10%.
    if new_v < 0.9 * v then
        new_v = new_v + divisor
    end
    return new_v
end

-- class InvertedResidual(nn.Module):
local InvertedResidual = nn.Module:extend("InvertedResidual")
-- def __init__(self, inp: int, oup: int, stride: int, expand_ratio: int,
--              norm_layer: Optional[Callable[..., nn.Module]] = None) -> None:
function InvertedResidual:init(inp, oup, stride, expand_ratio, norm_layer)
    self.stride = stride
    -- if stride not in [1, 2]:
    if stride ~= 1 and stride ~= 2 then
        error(string.format("stride should be 1 or 2 instead of %s", stride))
    end
    if norm_layer == nil then
        norm_layer = nn.BatchNorm2d
    end
    -- hidden_dim = int(round(inp * expand_ratio))
    local hidden_dim = math.floor(inp * expand_ratio + 0.5)
    self.use_res_connect = self.stride == 1 and inp == oup
    local layers = {}
    if expand_ratio ~= 1 then
        -- pw
        -- layers.append(Conv2dNormActivation(inp, hidden_dim, kernel_size=1,
        --                                    norm_layer=norm_layer, activation_layer=nn.ReLU6))
        layers[#layers + 1] = Conv2dNormActivation(inp, hidden_dim, { kernel_size = 1,
            norm_layer = norm_layer, activation_layer = nn.ReLU6 })
    end
    -- layers.extend([
    -- dw
    -- Conv2dNormActivation(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim,
    --                      norm_layer=norm_layer, activation_layer=nn.ReLU6),
    layers[#layers + 1] = Conv2dNormActivation(hidden_dim, hidden_dim, { stride = stride,
        groups = hidden_dim, norm_layer = norm_layer, activation_layer = nn.ReLU6 })
    -- pw-linear
    -- nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False),
    layers[#layers + 1] = nn.Conv2d(hidden_dim, oup, 1, { stride = 1, padding = 0, bias = false })
    layers[#layers + 1] = norm_layer(oup)
    -- self.conv = nn.Sequential(*layers)
    self.conv = nn.Sequential(unpack(layers))
    self.out_channels = oup
    self._is_cn = stride > 1
end
function InvertedResidual:forward(x)
    if self.use_res_connect then
        return x + self.conv(x)
    else
        return self.conv(x)
    end
end

-- class MobileNetV2(nn.Module):
local MobileNetV2 = nn.Module:extend("MobileNetV2")
-- def __init__(self, num_classes=1000, width_mult=1.0, inverted_residual_setting=None,
--              round_nearest=8, block=None, norm_layer=None, dropout=0.2) -> None:
function MobileNetV2:init(o)
    o = o or {}
    local num_classes, width_mult = o.num_classes or 1000, o.width_mult or 1.0
    local round_nearest, dropout = o.round_nearest or 8, o.dropout or 0.2
    local block = o.block or InvertedResidual
    local norm_layer = o.norm_layer or nn.BatchNorm2d
    local input_channel = 32
    local last_channel = 1280
    local inverted_residual_setting = o.inverted_residual_setting or {
        -- t, c, n, s
        { 1, 16, 1, 1 }, { 6, 24, 2, 2 }, { 6, 32, 3, 2 }, { 6, 64, 4, 2 },
        { 6, 96, 3, 1 }, { 6, 160, 3, 2 }, { 6, 320, 1, 1 },
    }
    -- only check the first element, assuming user knows t,c,n,s are required
    if #inverted_residual_setting == 0 or #inverted_residual_setting[1] ~= 4 then
        error("inverted_residual_setting should be non-empty or a 4-element list")
    end
    -- building first layer
    input_channel = _make_divisible(input_channel * width_mult, round_nearest)
    -- self.last_channel = _make_divisible(last_channel * max(1.0, width_mult), round_nearest)
    self.last_channel = _make_divisible(last_channel * math.max(1.0, width_mult), round_nearest)
    -- features: List[nn.Module] = [Conv2dNormActivation(3, input_channel, stride=2,
    --     norm_layer=norm_layer, activation_layer=nn.ReLU6)]
    local features = { Conv2dNormActivation(3, input_channel, { stride = 2,
        norm_layer = norm_layer, activation_layer = nn.ReLU6 }) }
    -- building inverted residual blocks
    -- for t, c, n, s in inverted_residual_setting:
    for _, setting in ipairs(inverted_residual_setting) do
        local t, c, n, s = unpack(setting)
        local output_channel = _make_divisible(c * width_mult, round_nearest)
        -- for i in range(n):
        for i = 0, n - 1 do
            local stride = i == 0 and s or 1
            -- features.append(block(input_channel, output_channel, stride, expand_ratio=t, ...
            features[#features + 1] = block(input_channel, output_channel, stride, t, norm_layer)
            input_channel = output_channel
        end
    end
    -- building last several layers
    features[#features + 1] = Conv2dNormActivation(input_channel, self.last_channel,
        { kernel_size = 1, norm_layer = norm_layer, activation_layer = nn.ReLU6 })
    -- make it nn.Sequential
    self.features = nn.Sequential(unpack(features))
    -- building classifier
    -- self.classifier = nn.Sequential(nn.Dropout(p=dropout), nn.Linear(self.last_channel, ...))
    self.classifier = nn.Sequential(nn.Dropout(dropout), nn.Linear(self.last_channel, num_classes))
    -- weight initialization
    for _, m in ipairs(self:modules()) do
        if tide.isinstance(m, nn.Conv2d) then
            -- nn.init.kaiming_normal_(m.weight, mode="fan_out")
            nn.init.kaiming_normal_(m.weight, { mode = "fan_out" })
            if m.bias ~= nil then
                nn.init.zeros_(m.bias)
            end
        elseif tide.isinstance(m, { nn.BatchNorm2d, nn.GroupNorm }) then
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)
        elseif tide.isinstance(m, nn.Linear) then
            nn.init.normal_(m.weight, 0, 0.01)
            nn.init.zeros_(m.bias)
        end
    end
end
function MobileNetV2:_forward_impl(x)
    x = self.features(x)
    -- Cannot use "squeeze" as batch-size can be 1
    -- x = nn.functional.adaptive_avg_pool2d(x, (1, 1))
    x = F.adaptive_avg_pool2d(x, { 1, 1 })
    -- x = torch.flatten(x, 1)
    x = tide.flatten(x, 2)
    x = self.classifier(x)
    return x
end
function MobileNetV2:forward(x)
    return self:_forward_impl(x)
end

---------------------------------------------------------------------------------------------
-- the checks (PyTorch 1.13's values from the same functions pasted into a script)
---------------------------------------------------------------------------------------------
-- the weights both sides set: 0.3 sin(0.37 i + 0.11 n) over each tensor's n elements, for the
-- parameters and the weight / bias / running_mean buffers (any order gives the same)
local function fill(m)
    local ts = {}
    for _, p in ipairs(m:parameters()) do ts[#ts + 1] = p end
    for name, b in m:named_buffers() do
        if name:match("weight$") or name:match("bias$") or name:match("running_mean$") then
            ts[#ts + 1] = b
        end
    end
    tide.no_grad(function()
        for _, t in ipairs(ts) do
            local n = t:numel()
            t:copy_((0.3 * tide.sin(tide.arange(0, n, { dtype = "float32" }) * 0.37 + 0.11 * n))
                :view(t.shape))
        end
    end)
end

local B1 = tide.tensor({ { 0, 0, 2, 2 }, { 1, 1, 3, 4 }, { 2, 2, 2, 5 }, { 5, 5, 6, 7 } },
    { dtype = "float32" })
local B2 = tide.tensor({ { 0, 0, 2, 2 }, { 10, 10, 12, 11 }, { 1, 0, 3, 3 } },
    { dtype = "float32" })

describe("ported torchvision ops/boxes.py", function()
    it("box_area, box_iou, generalized / distance / complete IoU match PyTorch", function()
        assert_close_list({ 4, 6, 0, 2 }, list(box_area(B1)), 1e-6, "box_area")
        -- a zero-area box with itself: 0 / 0, NaN as PyTorch's
        local nan_iou = box_iou(B1[{ { 3 } }], B1[{ { 3 } }]):item()
        assert.is_true(nan_iou ~= nan_iou)
        local iou = box_iou(B1, B2)
        assert.are.same({ 4, 3 }, iou:size())
        assert_close_list({ 1, 0, 0.25, 0.111111112, 0, 0.5, 0, 0, 0, 0, 0, 0 }, list(iou),
            1e-6, "box_iou")
        assert_close_list({ 1, -0.954545438, 0.138888896, -0.138888896, -0.927272737, 0.5,
            -0.600000024, -0.977777779, -0.400000006, -0.857142866, -0.90476191, -0.771428585 },
            list(generalized_box_iou(B1, B2)), 1e-5, "generalized_box_iou")
        assert_close_list({ 1, -0.717924535, 0.180555552, -0.0188888833, -0.656108618,
            0.449999988, -0.25, -0.718232036, -0.137931034, -0.532352924, -0.594117641,
            -0.439189196 }, list(distance_box_iou(B1, B2)), 1e-5, "distance_box_iou")
        assert_close_list({ 1, -0.719613969, 0.180229902, -0.0191645436, -0.666864812,
            0.449999988, -0.299999982, -0.883118033, -0.155153081, -0.534042358, -0.618235528,
            -0.439228237 }, list(complete_box_iou(B1, B2)), 1e-5, "complete_box_iou")
    end)

    it("box_convert between xyxy, xywh and cxcywh matches PyTorch", function()
        assert_close_list({ 0, 0, 2, 2, 1, 1, 2, 3, 2, 2, 0, 3, 5, 5, 1, 2 },
            list(box_convert(B1, "xyxy", "xywh")), 1e-6, "xyxy>xywh")
        assert_close_list({ 1, 1, 2, 2, 2, 2.5, 2, 3, 2, 3.5, 0, 3, 5.5, 6, 1, 2 },
            list(box_convert(B1, "xyxy", "cxcywh")), 1e-6, "xyxy>cxcywh")
        assert_close_list({ -1, -1, 2, 2, 4, 4.5, 12, 11, -0.5, -1.5, 3, 3 },
            list(box_convert(B2, "cxcywh", "xywh")), 1e-6, "cxcywh>xywh")
        assert_close_list({ 1, 1, 2, 2, 16, 15.5, 12, 11, 2.5, 1.5, 3, 3 },
            list(box_convert(B2, "xywh", "cxcywh")), 1e-6, "xywh>cxcywh")
        assert_close_list({ 0, 0, 2, 2, 10, 10, 22, 21, 1, 0, 4, 3 },
            list(box_convert(B2, "xywh", "xyxy")), 1e-6, "xywh>xyxy")
        assert_close_list({ -1, -1, 1, 1, 4, 4.5, 16, 15.5, -0.5, -1.5, 2.5, 1.5 },
            list(box_convert(B2, "cxcywh", "xyxy")), 1e-6, "cxcywh>xyxy")
        -- round trips, and the same format is a copy
        assert_close_list(list(B1), list(box_convert(box_convert(B1, "xyxy", "cxcywh"),
            "cxcywh", "xyxy")), 1e-6, "round trip")
        local same = box_convert(B1, "xyxy", "xyxy")
        assert.is_false(rawequal(same, B1))
        assert_close_list(list(B1), list(same), 0, "clone")
    end)

    it("clip_boxes_to_image, remove_small_boxes and masks_to_boxes match PyTorch", function()
        local clipped = clip_boxes_to_image(tide.tensor({ { -1, 2, 7, 9 }, { 3, -2, 4, 3 } }),
            { 6, 5 })
        assert.are.same({ 2, 4 }, clipped:size())
        assert_close_list({ 0, 2, 5, 6, 3, 0, 4, 3 }, list(clipped), 0, "clip")
        -- PyTorch's keep is {0, 1}: rows 1 and 2 here (1-based indices); the zero-width box goes
        local keep = remove_small_boxes(B1, 1.5)
        assert.are.equal("int64", keep.dtype)
        assert.are.same({ 1, 2 }, list(keep))
        local masks = tide.zeros({ 3, 5, 6 })
        masks[{ 1, { 2, 3 }, { 3, 5 } }] = 1
        masks[{ 2, 5, 1 }] = 1
        masks[{ 3, { 1, 5 }, 6 }] = 1
        masks[{ 3, 3, 2 }] = 1
        local boxes = masks_to_boxes(masks)
        assert.are.equal("float32", boxes.dtype)
        assert.are.same({ 2, 1, 4, 2, 0, 4, 0, 4, 1, 0, 5, 4 }, list(boxes))
        assert.are.same({ 0, 4 }, masks_to_boxes(tide.zeros({ 0, 5, 6 })):size())
    end)
end)

describe("ported torchvision focal and IoU losses", function()
    local inp = tide.tensor({ { 0.5, -1.2, 2.0 }, { -0.3, 0.8, -2.5 } })
    local tgt = tide.tensor({ { 1, 0, 1 }, { 0, 1, 0 } })

    it("sigmoid_focal_loss matches PyTorch for each reduction and alpha = -1", function()
        assert_close_rel({ 0.0168933701, 0.0105801597, 0.00045089121, 0.0752949566,
            0.00891716033, 0.000340476108 }, list(sigmoid_focal_loss(inp, tgt)), 1e-4, "none")
        local mean = sigmoid_focal_loss(inp, tgt, nil, nil, "mean")
        assert.are.equal(0, mean:dim())
        assert_close_rel({ 0.0187461693 }, { mean:item() }, 1e-4, "mean")
        assert_close_rel({ 0.112477019 }, { sigmoid_focal_loss(inp, tgt, 0.25, 2, "sum"):item() },
            1e-4, "sum")
        assert_close_rel({ 0.364123702 }, { sigmoid_focal_loss(inp, tgt, -1, 1.5, "sum"):item() },
            1e-4, "alpha -1")
    end)

    -- pairs: identical boxes, disjoint boxes, a zero-width predicted box
    local P = B1[{ { 1, 3 } }]
    local want = {
        giou = { { 0, 1.9272728, 1.39999998 }, 1.10909092, 3.32727289,
            { 0, 0, 0, 0, 0.0206611566, 0.0109090898, -0.0272727273, -0.0181818176,
                0.300000012, 0, -0.300000012, 0.120000005 },
            { 0, 0, 0, 0, 0.0090909088, 0.0181818176, -0.00247933809, -0.0109090898,
                0, 0.0799999982, 0, -0.200000003 } },
        diou = { { 0, 1.65610862, 1.13793099 }, 0.931346595, 2.79403973,
            { 0, 0, 0, 0, 0.0245899968, 0.0231772475, -0.0407239832, -0.0361990966,
                0, 0.068965517, 0, 0.0214030929 },
            { 0, 0, 0, 0, 0.0407239832, 0.0361990966, -0.0245899968, -0.0231772475,
                0.01902497, -0.0214030929, -0.01902497, -0.068965517 } },
        ciou = { { 0, 1.66686475, 1.15515304 }, 0.940672576, 2.82201767,
            { 0, 0, 0, 0, 0.0341525935, 0.0168021824, -0.0502865799, -0.0298240315,
                0.0195260402, 0.068965517, -0.0195260402, 0.0214030929 },
            { 0, 0, 0, 0, 0.0324364007, 0.0527742654, -0.0163024124, -0.0397524163,
                0.00550694205, -0.0123910746, -0.00550694205, -0.0779775381 } },
    }
    for _, case in ipairs({ { "giou", generalized_box_iou_loss },
        { "diou", distance_box_iou_loss }, { "ciou", complete_box_iou_loss } }) do
        local name, fn = case[1], case[2]
        it(name .. " loss: values, reductions and the boxes' gradients match PyTorch", function()
            local w = want[name]
            assert_close_list(w[1], list(fn(P, B2)), 1e-5, name .. " none")
            assert_close_list({ w[2] }, { fn(P, B2, "mean"):item() }, 1e-5, name .. " mean")
            assert_close_list({ w[3] }, { fn(P, B2, "sum"):item() }, 1e-5, name .. " sum")
            local pp = P:clone():requires_grad_()
            local gg = B2:clone():requires_grad_()
            fn(pp, gg, "sum"):backward()
            assert_close_rel(w[4], list(pp.grad), 1e-4, name .. " grad boxes1")
            assert_close_rel(w[5], list(gg.grad), 1e-4, name .. " grad boxes2")
        end)
    end
end)

describe("ported torchvision drop_block2d and stochastic_depth", function()
    local x = tide.sin(tide.arange(0, 2 * 2 * 6 * 6, { dtype = "float32" }) * 0.3):view(2, 2, 6, 6)

    it("drop_block2d: eval and p = 0 pass the input; a given mask matches PyTorch", function()
        assert.is_true(rawequal(x, drop_block2d(x, 0.5, 3, false, nil, false)))
        assert.is_true(rawequal(x, drop_block2d(x, 0.0, 3)))
        -- the mask source both sides use: element k of the noise is 1 where 7k % 11 == 0
        local function draw(noise)
            local k = tide.arange(0, noise:numel()):view(noise.shape)
            return (k * 7):remainder(11):eq(0):to(noise.dtype)
        end
        local y = drop_block2d(x, 0.3, 3, false, nil, true, draw)
        assert.are.same({ 2, 2, 6, 6 }, y:size())
        assert_close_list({ 3.4944253, 90.2410126, 0, 0, 0, 1.25332308, 1.49126256, 1.59599197 },
            summary(y), 1e-5, "drop_block2d")
        -- in place writes into the input
        local x2 = x:clone()
        local y2 = drop_block2d(x2, 0.3, 3, true, nil, true, draw)
        assert.is_true(rawequal(x2, y2))
        assert_close_list(list(y), list(x2), 1e-6, "in place")
        -- a real draw keeps the shape and zeroes whole blocks
        tide.manual_seed(3)
        local y3 = drop_block2d(tide.ones({ 1, 1, 6, 6 }), 0.5, 3)
        assert.are.same({ 1, 1, 6, 6 }, y3:size())
        -- an even block_size pads the noise past the input, in torchvision as here (PyTorch:
        -- "The size of tensor a (6) must match the size of tensor b (8) at non-singleton dim 3")
        local ok, err = pcall(drop_block2d, x, 0.3, 2, false, nil, true, draw)
        assert.is_false(ok)
        assert.truthy(tostring(err):find("tide: mul: shapes [2, 2, 6, 6] and [2, 2, 8, 8] " ..
            "cannot be broadcast", 1, true))
        assert.has_error(function() drop_block2d(x, 1.5, 3) end,
            "drop probability has to be between 0 and 1, but got 1.5")
    end)

    it("stochastic_depth: eval and p = 0 pass the input; rows and batches drop whole", function()
        assert.is_true(rawequal(x, stochastic_depth(x, 0.5, "row", false)))
        assert.is_true(rawequal(x, stochastic_depth(x, 0.0, "batch")))
        -- p = 1: every row dropped, survival_rate 0 divides nothing
        assert.are.equal(0, stochastic_depth(x, 1.0, "row"):abs():sum():item())
        tide.manual_seed(0)
        local big = tide.ones({ 64, 3 })
        local y = stochastic_depth(big, 0.5, "row")
        local kept = 0
        for i = 1, 64 do
            local r = list(y[i])
            assert.is_true((r[1] == 0 and r[2] == 0 and r[3] == 0)
                or (r[1] == 2 and r[2] == 2 and r[3] == 2))
            if r[1] == 2 then kept = kept + 1 end
        end
        assert.is_true(kept > 10 and kept < 54)
        local b = list(stochastic_depth(big, 0.5, "batch"))
        for i = 2, #b do assert.are.equal(b[1], b[i]) end
        assert.has_error(function() stochastic_depth(x, 0.5, "col") end,
            "mode has to be either 'batch' or 'row', but got col")
    end)
end)

describe("ported torchvision misc.py layers and MobileNetV2", function()
    local x = tide.sin(tide.arange(0, 2 * 2 * 6 * 6, { dtype = "float32" }) * 0.3):view(2, 2, 6, 6)

    it("FrozenBatchNorm2d, Conv2dNormActivation, SqueezeExcitation, MLP match PyTorch", function()
        local fb = FrozenBatchNorm2d(2)
        fill(fb)
        assert.are.equal(0, #fb:parameters())
        assert_close_list({ 14.7044897, 15.3235474, 0.0611827374, 0.0805300176, 0.0981490761,
            0.112466022, 0.122201994, 0.1264873 }, summary(fb(x)), 1e-5, "FrozenBatchNorm2d")
        local cna = Conv2dNormActivation(2, 3, { kernel_size = 3, stride = 2,
            norm_layer = FrozenBatchNorm2d, activation_layer = nn.SiLU })
        fill(cna)
        assert.is_nil(cna[1].bias)
        local y = cna(x)
        assert.are.same({ 2, 3, 3, 3 }, y:size())
        assert_close_list({ 4.77300739, 6.35462189, 0.100364812, 0.122955702, 0.0880808234,
            -0.000290585012, -0.011294201, 0.026847776 }, summary(y), 1e-5, "Conv2dNormActivation")
        local se = SqueezeExcitation(2, 4)
        fill(se)
        assert_close_list({ 0.77605474, 51.8865929, 0, 0.17370972, 0.331902444, 0.460447341,
            0.547861814, 0.586337447 }, summary(se(x)), 1e-5, "SqueezeExcitation")
        local mlp = MLP(5, { 4, 3 }, { norm_layer = nn.LayerNorm, dropout = 0.0 })
        fill(mlp)
        assert.are.equal(6, #mlp)
        local xm = tide.cos(tide.arange(0, 10, { dtype = "float32" })):view(2, 5)
        assert_close_list({ 0.337369502, 0.119695134, 0.00966215134, 0.31241709, 0.0635635704,
            0.0244355053 }, list(mlp(xm)), 1e-5, "MLP")
    end)

    it("InvertedResidual and a 2-block MobileNetV2 trunk: output and a gradient", function()
        local ir = InvertedResidual(8, 8, 1, 1)
        fill(ir)
        assert.is_true(ir.use_res_connect)
        local xi = tide.sin(tide.arange(0, 2 * 8 * 4 * 4, { dtype = "float32" }) * 0.21)
            :view(2, 8, 4, 4)
        assert_close_list({ 52.1415176, 154.185608, -0.0721937418, 0.133859798, 0.33420217,
            0.519835413, 0.674176455, 0.797518134 }, summary(ir(xi)), 1e-5, "InvertedResidual")
        assert.are.equal(8, _make_divisible(32 * 0.25, 8))
        assert.are.equal(8, _make_divisible(24 * 0.25, 8))
        local net = MobileNetV2({ num_classes = 4, width_mult = 0.25,
            inverted_residual_setting = { { 1, 16, 1, 1 }, { 6, 24, 1, 2 } } })
        fill(net)
        local n = 0
        for _, p in ipairs(net:parameters()) do n = n + p:numel() end
        assert.are.equal(19732, n)
        local xin = tide.sin(tide.arange(0, 2 * 3 * 16 * 16, { dtype = "float32" }) * 0.13)
            :view(2, 3, 16, 16)
        local f = net.features(xin)
        assert.are.same({ 2, 1280, 4, 4 }, f:size())
        local per = list(f:sum(2):reshape(-1))
        assert_close_rel({ 121.728424, 122.364563, 122.693481, 122.618042, 122.437469,
            174.063324, 159.612244, 154.201187 }, { unpack(per, 1, 8) }, 1e-4, "trunk")
        assert_close_rel({ 4540.40137 }, { f:sum():item() }, 1e-4, "trunk sum")
        local loss = (f ^ 2):mean()
        loss:backward()
        assert_close_rel({ 0.0447029844 }, { loss:item() }, 1e-4, "loss")
        -- net.features[1].conv[0][0].weight.grad: the first block's depthwise conv
        local g = net.features[2].conv[1][1].weight.grad
        assert_close_rel({ -1.43358238e-05, -8.36425534e-06, -2.58989949e-05, 3.32617383e-05,
            3.73576331e-05, 7.53909171e-06, 1.23638611e-05, -1.43982497e-05 },
            { unpack(list(g), 1, 8) }, 2e-3, "grad")
        net:eval()
        assert_close_rel({ 3.14988089, -17.0923443, 21.8547859, -13.0550432, 3.14987803,
            -17.0923405, 21.8547878, -13.0550461 }, list(net(xin)), 1e-4, "logits")
    end)
end)
