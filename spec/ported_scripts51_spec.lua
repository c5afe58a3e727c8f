-- ported_scripts51_spec.lua — pytorch/vision's torchvision/ops, the pure-PyTorch parts, ported line
-- for line and checked against PyTorch 1.13 numbers (the Python pasted into the venv, which has no
-- torchvision): boxes.py (box_area, _box_inter_union, box_iou, generalized/distance/complete
-- box_iou, box_convert with _box_convert.py's helpers, clip_boxes_to_image, remove_small_boxes,
-- masks_to_boxes, batched_nms's _batched_nms_coordinate_trick; nms itself is torchvision's C++
-- kernel, written here as the standard greedy loop over sorted scores), focal_loss.py,
-- giou_loss.py / diou_loss.py / ciou_loss.py, misc.py's FrozenBatchNorm2d, drop_block.py and
-- feature_pyramid_network.py. The Python line stands above each Lua line that differs from it.
-- Dims and indices are 1-based (a box's coordinates stay as they are: pixel positions from
-- tide.where are 1-based, shifted by -1 where the port says so).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local unpack = table.unpack or unpack -- luacheck: ignore

local function close(t, expected, tol)
    local got = t:tolist()
    local function walk(g, e, path)
        if type(e) == "table" then
            assert.are.equal(#e, #g, "length at " .. path)
            for i = 1, #e do walk(g[i], e[i], path .. "[" .. i .. "]") end
        else
            assert(math.abs(g - e) <= (tol or 1e-5), ("%s: got %.8g, expected %.8g"):format(path, g, e))
        end
    end
    walk(got, expected, "")
end

---------------------------------------------------------------------------------------------
-- torchvision/ops/_utils.py and _box_convert.py
---------------------------------------------------------------------------------------------
-- def _upcast(t: Tensor) -> Tensor:
local function _upcast(t)
    -- Protects from numerical overflows in multiplications by upcasting to the equivalent higher type
    -- if t.is_floating_point():
    if t:is_floating_point() then
        -- return t if t.dtype in (torch.float32, torch.float64) else t.float()
        return (t.dtype == tide.float32 or t.dtype == tide.float64) and t or t:float()
    else
        -- return t if t.dtype in (torch.int32, torch.int64) else t.int()
        return (t.dtype == tide.int32 or t.dtype == tide.int64) and t or t:int()
    end
end

local function _box_cxcywh_to_xyxy(boxes)
    -- cx, cy, w, h = boxes.unbind(-1)
    local cx, cy, w, h = unpack(boxes:unbind(-1))
    local x1 = cx - 0.5 * w
    local y1 = cy - 0.5 * h
    local x2 = cx + 0.5 * w
    local y2 = cy + 0.5 * h
    -- boxes = torch.stack((x1, y1, x2, y2), dim=-1)
    boxes = tide.stack({ x1, y1, x2, y2 }, { dim = -1 })
    return boxes
end

local function _box_xyxy_to_cxcywh(boxes)
    local x1, y1, x2, y2 = unpack(boxes:unbind(-1))
    local cx = (x1 + x2) / 2
    local cy = (y1 + y2) / 2
    local w = x2 - x1
    local h = y2 - y1
    boxes = tide.stack({ cx, cy, w, h }, { dim = -1 })
    return boxes
end

local function _box_xywh_to_xyxy(boxes)
    -- x, y, w, h = boxes.unbind(-1)
    local x, y, w, h = unpack(boxes:unbind(-1))
    -- boxes = torch.stack([x, y, x + w, y + h], dim=-1)
    boxes = tide.stack({ x, y, x + w, y + h }, { dim = -1 })
    return boxes
end

local function _box_xyxy_to_xywh(boxes)
    local x1, y1, x2, y2 = unpack(boxes:unbind(-1))
    local w = x2 - x1
    local h = y2 - y1
    boxes = tide.stack({ x1, y1, w, h }, { dim = -1 })
    return boxes
end

---------------------------------------------------------------------------------------------
-- torchvision/ops/boxes.py
---------------------------------------------------------------------------------------------
local ops = {}

-- def nms(boxes, scores, iou_threshold): torch.ops.torchvision.nms (C++), here the greedy loop
function ops.nms(boxes, scores, iou_threshold)
    local _, order = scores:sort({ descending = true })
    local iou = ops.box_iou(boxes, boxes)
    local suppressed, keep = {}, {}
    for _, i in ipairs(order:tolist()) do
        if not suppressed[i] then
            keep[#keep + 1] = i
            for _, j in ipairs(order:tolist()) do
                if not suppressed[j] and j ~= i and iou[{ i, j }]:item() > iou_threshold then suppressed[j] = true end
            end
        end
    end
    return tide.tensor(keep, { dtype = tide.int64 })
end

-- def _batched_nms_coordinate_trick(boxes, scores, idxs, iou_threshold):
function ops._batched_nms_coordinate_trick(boxes, scores, idxs, iou_threshold)
    -- if boxes.numel() == 0:
    if boxes:numel() == 0 then
        -- return torch.empty((0,), dtype=torch.int64, device=boxes.device)
        return tide.empty({ 0 }, { dtype = tide.int64, device = boxes.device })
    end
    -- max_coordinate = boxes.max()
    local max_coordinate = boxes:max()
    -- offsets = idxs.to(boxes) * (max_coordinate + torch.tensor(1).to(boxes))
    local offsets = idxs:to(boxes) * (max_coordinate + tide.tensor(1):to(boxes))
    -- boxes_for_nms = boxes + offsets[:, None]
    local boxes_for_nms = boxes + offsets[{ {}, tide.newaxis }]
    local keep = ops.nms(boxes_for_nms, scores, iou_threshold)
    return keep
end
ops.batched_nms = ops._batched_nms_coordinate_trick

-- def remove_small_boxes(boxes: Tensor, min_size: float) -> Tensor:
function ops.remove_small_boxes(boxes, min_size)
    -- ws, hs = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    local ws, hs = boxes[{ {}, 3 }] - boxes[{ {}, 1 }], boxes[{ {}, 4 }] - boxes[{ {}, 2 }]
    -- keep = (ws >= min_size) & (hs >= min_size)
    local keep = ws:ge(min_size):logical_and(hs:ge(min_size))
    -- keep = torch.where(keep)[0]
    keep = tide.where(keep)[1]
    return keep
end

-- def clip_boxes_to_image(boxes: Tensor, size: tuple[int, int]) -> Tensor:
function ops.clip_boxes_to_image(boxes, size)
    local dim = boxes:dim()
    -- boxes_x = boxes[..., 0::2]
    local boxes_x = boxes[{ "...", { 1, -1, 2 } }]
    -- boxes_y = boxes[..., 1::2]
    local boxes_y = boxes[{ "...", { 2, -1, 2 } }]
    -- height, width = size
    local height, width = unpack(size)
    -- boxes_x = boxes_x.clamp(min=0, max=width)
    boxes_x = boxes_x:clamp({ min = 0, max = width })
    boxes_y = boxes_y:clamp({ min = 0, max = height })
    -- clipped_boxes = torch.stack((boxes_x, boxes_y), dim=dim)   (dim = boxes.dim() is the new last dim)
    local clipped_boxes = tide.stack({ boxes_x, boxes_y }, { dim = dim + 1 })
    return clipped_boxes:reshape(boxes.shape)
end

-- def box_convert(boxes: Tensor, in_fmt: str, out_fmt: str) -> Tensor:
function ops.box_convert(boxes, in_fmt, out_fmt)
    local allowed_fmts = { xyxy = true, xywh = true, cxcywh = true }
    if not allowed_fmts[in_fmt] or not allowed_fmts[out_fmt] then
        error(("Unsupported Bounding Box Conversions for given in_fmt %s and out_fmt %s"):format(in_fmt, out_fmt))
    end
    if in_fmt == out_fmt then return boxes:clone() end
    local e = in_fmt .. "->" .. out_fmt
    if e == "xywh->xyxy" then
        boxes = _box_xywh_to_xyxy(boxes)
    elseif e == "cxcywh->xyxy" then
        boxes = _box_cxcywh_to_xyxy(boxes)
    elseif e == "xyxy->xywh" then
        boxes = _box_xyxy_to_xywh(boxes)
    elseif e == "xyxy->cxcywh" then
        boxes = _box_xyxy_to_cxcywh(boxes)
    elseif e == "xywh->cxcywh" then
        boxes = _box_xywh_to_xyxy(boxes)
        boxes = _box_xyxy_to_cxcywh(boxes)
    elseif e == "cxcywh->xywh" then
        boxes = _box_cxcywh_to_xyxy(boxes)
        boxes = _box_xyxy_to_xywh(boxes)
    end
    return boxes
end

function ops.box_area(boxes)
    boxes = _upcast(boxes)
    -- return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    return (boxes[{ {}, 3 }] - boxes[{ {}, 1 }]) * (boxes[{ {}, 4 }] - boxes[{ {}, 2 }])
end

function ops._box_inter_union(boxes1, boxes2)
    local area1 = ops.box_area(boxes1)
    local area2 = ops.box_area(boxes2)
    -- lt = torch.max(boxes1[:, None, :2], boxes2[:, :2])  # [N,M,2]
    local lt = tide.max(boxes1[{ {}, tide.newaxis, { 1, 2 } }], boxes2[{ {}, { 1, 2 } }])
    -- rb = torch.min(boxes1[:, None, 2:], boxes2[:, 2:])  # [N,M,2]
    local rb = tide.min(boxes1[{ {}, tide.newaxis, { 3, -1 } }], boxes2[{ {}, { 3, -1 } }])
    -- wh = _upcast(rb - lt).clamp(min=0)  # [N,M,2]
    local wh = _upcast(rb - lt):clamp({ min = 0 })
    -- inter = wh[:, :, 0] * wh[:, :, 1]  # [N,M]
    local inter = wh[{ {}, {}, 1 }] * wh[{ {}, {}, 2 }]
    -- union = area1[:, None] + area2 - inter
    local union = area1[{ {}, tide.newaxis }] + area2 - inter
    return inter, union
end

function ops.box_iou(boxes1, boxes2)
    local inter, union = ops._box_inter_union(boxes1, boxes2)
    local iou = inter / union
    return iou
end

function ops.generalized_box_iou(boxes1, boxes2)
    local inter, union = ops._box_inter_union(boxes1, boxes2)
    local iou = inter / union
    local lti = tide.min(boxes1[{ {}, tide.newaxis, { 1, 2 } }], boxes2[{ {}, { 1, 2 } }])
    local rbi = tide.max(boxes1[{ {}, tide.newaxis, { 3, -1 } }], boxes2[{ {}, { 3, -1 } }])
    local whi = _upcast(rbi - lti):clamp({ min = 0 }) -- [N,M,2]
    local areai = whi[{ {}, {}, 1 }] * whi[{ {}, {}, 2 }]
    return iou - (areai - union) / areai
end

-- def _box_diou_iou(boxes1, boxes2, eps: float = 1e-7)
function ops._box_diou_iou(boxes1, boxes2, eps)
    eps = eps or 1e-7
    local iou = ops.box_iou(boxes1, boxes2)
    local lti = tide.min(boxes1[{ {}, tide.newaxis, { 1, 2 } }], boxes2[{ {}, { 1, 2 } }])
    local rbi = tide.max(boxes1[{ {}, tide.newaxis, { 3, -1 } }], boxes2[{ {}, { 3, -1 } }])
    local whi = _upcast(rbi - lti):clamp({ min = 0 }) -- [N,M,2]
    -- diagonal_distance_squared = (whi[:, :, 0] ** 2) + (whi[:, :, 1] ** 2) + eps
    local diagonal_distance_squared = (whi[{ {}, {}, 1 }] ^ 2) + (whi[{ {}, {}, 2 }] ^ 2) + eps
    -- centers of boxes
    -- x_p = (boxes1[:, 0] + boxes1[:, 2]) / 2
    local x_p = (boxes1[{ {}, 1 }] + boxes1[{ {}, 3 }]) / 2
    local y_p = (boxes1[{ {}, 2 }] + boxes1[{ {}, 4 }]) / 2
    local x_g = (boxes2[{ {}, 1 }] + boxes2[{ {}, 3 }]) / 2
    local y_g = (boxes2[{ {}, 2 }] + boxes2[{ {}, 4 }]) / 2
    -- centers_distance_squared = (_upcast(x_p[:, None] - x_g[None, :]) ** 2) + (_upcast(y_p[:, None] - y_g[None, :]) ** 2)
    local centers_distance_squared = (_upcast(x_p[{ {}, tide.newaxis }] - x_g[{ tide.newaxis, {} }]) ^ 2)
        + (_upcast(y_p[{ {}, tide.newaxis }] - y_g[{ tide.newaxis, {} }]) ^ 2)
    return iou - (centers_distance_squared / diagonal_distance_squared), iou
end

function ops.distance_box_iou(boxes1, boxes2, eps)
    boxes1 = _upcast(boxes1)
    boxes2 = _upcast(boxes2)
    -- diou, _ = _box_diou_iou(boxes1, boxes2, eps=eps)
    local diou = ops._box_diou_iou(boxes1, boxes2, eps)
    return diou
end

function ops.complete_box_iou(boxes1, boxes2, eps)
    eps = eps or 1e-7
    boxes1 = _upcast(boxes1)
    boxes2 = _upcast(boxes2)
    local diou, iou = ops._box_diou_iou(boxes1, boxes2, eps)
    -- w_pred = boxes1[:, None, 2] - boxes1[:, None, 0]
    local w_pred = boxes1[{ {}, tide.newaxis, 3 }] - boxes1[{ {}, tide.newaxis, 1 }]
    local h_pred = boxes1[{ {}, tide.newaxis, 4 }] - boxes1[{ {}, tide.newaxis, 2 }]
    local w_gt = boxes2[{ {}, 3 }] - boxes2[{ {}, 1 }]
    local h_gt = boxes2[{ {}, 4 }] - boxes2[{ {}, 2 }]
    -- v = (4 / (torch.pi**2)) * torch.pow(torch.atan(w_pred / h_pred) - torch.atan(w_gt / h_gt), 2)
    local v = (4 / (tide.pi ^ 2)) * tide.pow(tide.atan(w_pred / h_pred) - tide.atan(w_gt / h_gt), 2)
    -- with torch.no_grad(): alpha = v / (1 - iou + v + eps)
    local alpha = tide.no_grad(function() return v / (1 - iou + v + eps) end)
    return diou - alpha * v
end

-- def masks_to_boxes(masks: torch.Tensor) -> torch.Tensor:
function ops.masks_to_boxes(masks)
    if masks:numel() == 0 then
        -- return torch.zeros((0, 4), device=masks.device, dtype=torch.float)
        return tide.zeros({ 0, 4 }, { device = masks.device, dtype = tide.float })
    end
    -- n = masks.shape[0]
    local n = masks.shape[1]
    local bounding_boxes = tide.zeros({ n, 4 }, { device = masks.device, dtype = tide.float })
    -- for index, mask in enumerate(masks):
    for index, mask in ipairs(masks:unbind()) do
        -- y, x = torch.where(mask != 0)   (1-based positions: -1 for torchvision's pixel coordinates)
        local y, x = unpack(tide.where(mask:ne(0)))
        bounding_boxes[{ index, 1 }] = tide.min(x) - 1
        bounding_boxes[{ index, 2 }] = tide.min(y) - 1
        bounding_boxes[{ index, 3 }] = tide.max(x) - 1
        bounding_boxes[{ index, 4 }] = tide.max(y) - 1
    end
    return bounding_boxes
end

describe("torchvision/ops/boxes.py", function()
    -- b1 = torch.tensor([[0., 0, 10, 10], [5, 5, 15, 20], [2, 3, 4, 8]])
    -- (dtype = float32 stands for the Python literal 0.: Lua 5.1 and LuaJIT read 0. as an integer-valued number)
    local b1 = tide.tensor({ { 0., 0, 10, 10 }, { 5, 5, 15, 20 }, { 2, 3, 4, 8 } }, { dtype = tide.float32 })
    local b2 = tide.tensor({ { 1., 1, 9, 9 }, { 10, 10, 20, 20 } }, { dtype = tide.float32 })

    it("box_area, box_iou, generalized/distance/complete box_iou match PyTorch", function()
        close(ops.box_area(b1), { 100, 150, 10 })
        close(ops.box_iou(b1, b2), { { 0.64, 0 }, { 0.08080808073282242, 0.25 }, { 0.15625, 0 } })
        close(ops.generalized_box_iou(b1, b2), { { 0.64, -0.5 }, { -0.17483103275299072, 0.1388888955116272 },
            { 0.15625, -0.6405228972434998 } })
        close(ops.distance_box_iou(b1, b2), { { 0.64, -0.25 }, { -0.06506264954805374, 0.1805555522441864 },
            { 0.123046875, -0.3821370303630829 } })
        close(ops.complete_box_iou(b1, b2), { { 0.64, -0.25 }, { -0.06532937288284302, 0.18022990226745605 },
            { 0.11819685995578766, -0.3862764537334442 } })
        -- an int64 box set upcasts nothing (int64 is kept) and gives the same areas
        close(ops.box_area(b1:long()), { 100, 150, 10 })
    end)

    it("box_convert round trips; clip_boxes_to_image; remove_small_boxes", function()
        local cxcywh = ops.box_convert(b1, "xyxy", "cxcywh")
        close(cxcywh, { { 5, 5, 10, 10 }, { 10, 12.5, 10, 15 }, { 3, 5.5, 2, 5 } })
        close(ops.box_convert(cxcywh, "cxcywh", "xyxy"), b1:tolist())
        close(ops.box_convert(ops.box_convert(b1, "xyxy", "xywh"), "xywh", "cxcywh"), cxcywh:tolist())
        close(ops.box_convert(cxcywh, "cxcywh", "xywh"), { { 0, 0, 10, 10 }, { 5, 5, 10, 15 }, { 2, 3, 2, 5 } })
        -- clip_boxes_to_image(b1, (12, 8)): x to [0, 8], y to [0, 12]
        close(ops.clip_boxes_to_image(b1, { 12, 8 }), { { 0, 0, 8, 10 }, { 5, 5, 8, 12 }, { 2, 3, 4, 8 } })
        local b3 = tide.tensor({ { { -1., 2, 30, 5 } } }, { dtype = tide.float32 })
        close(ops.clip_boxes_to_image(b3, { 4, 20 }), { { { 0, 2, 20, 4 } } })
        -- remove_small_boxes(b1, 5.0): box 3 is 2 wide
        assert.are.same({ 1, 2 }, ops.remove_small_boxes(b1, 5.0):tolist())
    end)

    it("masks_to_boxes; batched_nms (coordinate trick over a greedy nms)", function()
        local masks = tide.zeros({ 2, 5, 6 })
        -- masks[0, 1:3, 2:5] = 1 ; masks[1, 4, 0] = 1 ; masks[1, 0, 3] = 1
        masks[{ 1, { 2, 3 }, { 3, 5 } }] = 1
        masks[{ 2, 5, 1 }] = 1
        masks[{ 2, 1, 4 }] = 1
        close(ops.masks_to_boxes(masks), { { 2, 1, 4, 2 }, { 0, 0, 3, 4 } })
        assert.are.same({ 0, 4 }, ops.masks_to_boxes(tide.zeros({ 0, 5, 6 })).shape)

        local boxes = tide.tensor({ { 0., 0, 10, 10 }, { 1, 1, 10, 10 }, { 0, 0, 10, 10 }, { 20, 20, 30, 30 } }, { dtype = tide.float32 })
        local scores = tide.tensor({ 0.9, 0.8, 0.7, 0.6 })
        -- class 0, 0, 1, 0: box 2 overlaps box 1 (same class): dropped; box 3 is another class
        local idxs = tide.tensor({ 0, 0, 1, 0 })
        assert.are.same({ 1, 3, 4 }, ops.batched_nms(boxes, scores, idxs, 0.5):tolist())
        assert.are.same({ 1, 4 }, ops.nms(boxes, scores, 0.5):tolist())
        assert.are.same({ 0 }, ops.batched_nms(tide.zeros({ 0, 4 }), tide.zeros({ 0 }), tide.zeros({ 0 }), 0.5).shape)
    end)
end)

---------------------------------------------------------------------------------------------
-- focal_loss.py, _utils.py's _loss_inter_union / _upcast_non_float, giou/diou/ciou_loss.py
---------------------------------------------------------------------------------------------
-- def sigmoid_focal_loss(inputs, targets, alpha: float = 0.25, gamma: float = 2, reduction: str = "none"):
local function sigmoid_focal_loss(inputs, targets, alpha, gamma, reduction)
    alpha = alpha or 0.25
    gamma = gamma or 2
    reduction = reduction or "none"
    -- p = torch.sigmoid(inputs)
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
    -- Check reduction option and return loss accordingly
    if reduction == "none" then -- luacheck: ignore
        -- pass
    elseif reduction == "mean" then
        loss = loss:mean()
    elseif reduction == "sum" then
        loss = loss:sum()
    else
        -- raise ValueError(f"Invalid Value for arg 'reduction': '{reduction} \n Supported reduction modes: 'none', 'mean', 'sum'")
        error(("Invalid Value for arg 'reduction': '%s' \n Supported reduction modes: 'none', 'mean', 'sum'"):format(reduction))
    end
    return loss
end

local function _upcast_non_float(t)
    -- Protects from numerical overflows in multiplications by upcasting to the equivalent higher type
    -- if t.dtype not in (torch.float32, torch.float64):
    if t.dtype ~= tide.float32 and t.dtype ~= tide.float64 then
        return t:float()
    end
    return t
end

local function _loss_inter_union(boxes1, boxes2)
    -- x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    local x1, y1, x2, y2 = unpack(boxes1:unbind({ dim = -1 }))
    local x1g, y1g, x2g, y2g = unpack(boxes2:unbind({ dim = -1 }))
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

local function reduce(loss, reduction)
    if reduction == "mean" then
        -- loss = loss.mean() if loss.numel() > 0 else 0.0 * loss.sum()
        loss = loss:numel() > 0 and loss:mean() or 0.0 * loss:sum()
    elseif reduction == "sum" then
        loss = loss:sum()
    end
    return loss
end

-- def generalized_box_iou_loss(boxes1, boxes2, reduction: str = "none", eps: float = 1e-7)
local function generalized_box_iou_loss(boxes1, boxes2, reduction, eps)
    eps = eps or 1e-7
    boxes1 = _upcast_non_float(boxes1)
    boxes2 = _upcast_non_float(boxes2)
    local intsctk, unionk = _loss_inter_union(boxes1, boxes2)
    local iouk = intsctk / (unionk + eps)
    local x1, y1, x2, y2 = unpack(boxes1:unbind({ dim = -1 }))
    local x1g, y1g, x2g, y2g = unpack(boxes2:unbind({ dim = -1 }))
    -- smallest enclosing box
    local xc1 = tide.min(x1, x1g)
    local yc1 = tide.min(y1, y1g)
    local xc2 = tide.max(x2, x2g)
    local yc2 = tide.max(y2, y2g)
    local area_c = (xc2 - xc1) * (yc2 - yc1)
    local miouk = iouk - ((area_c - unionk) / (area_c + eps))
    local loss = 1 - miouk
    return reduce(loss, reduction)
end

local function _diou_iou_loss(boxes1, boxes2, eps)
    eps = eps or 1e-7
    local intsct, union = _loss_inter_union(boxes1, boxes2)
    local iou = intsct / (union + eps)
    -- smallest enclosing box
    local x1, y1, x2, y2 = unpack(boxes1:unbind({ dim = -1 }))
    local x1g, y1g, x2g, y2g = unpack(boxes2:unbind({ dim = -1 }))
    local xc1 = tide.min(x1, x1g)
    local yc1 = tide.min(y1, y1g)
    local xc2 = tide.max(x2, x2g)
    local yc2 = tide.max(y2, y2g)
    -- The diagonal distance of the smallest enclosing box squared
    local diagonal_distance_squared = ((xc2 - xc1) ^ 2) + ((yc2 - yc1) ^ 2) + eps
    -- centers of boxes
    local x_p = (x2 + x1) / 2
    local y_p = (y2 + y1) / 2
    local x_g = (x1g + x2g) / 2
    local y_g = (y1g + y2g) / 2
    -- The distance between boxes' centers squared.
    local centers_distance_squared = ((x_p - x_g) ^ 2) + ((y_p - y_g) ^ 2)
    local loss = 1 - iou + (centers_distance_squared / diagonal_distance_squared)
    return loss, iou
end

local function distance_box_iou_loss(boxes1, boxes2, reduction, eps)
    boxes1 = _upcast_non_float(boxes1)
    boxes2 = _upcast_non_float(boxes2)
    -- loss, _ = _diou_iou_loss(boxes1, boxes2, eps)
    local loss = _diou_iou_loss(boxes1, boxes2, eps)
    return reduce(loss, reduction)
end

local function complete_box_iou_loss(boxes1, boxes2, reduction, eps)
    eps = eps or 1e-7
    boxes1 = _upcast_non_float(boxes1)
    boxes2 = _upcast_non_float(boxes2)
    local diou_loss, iou = _diou_iou_loss(boxes1, boxes2, eps)
    local x1, y1, x2, y2 = unpack(boxes1:unbind({ dim = -1 }))
    local x1g, y1g, x2g, y2g = unpack(boxes2:unbind({ dim = -1 }))
    -- width and height of boxes
    local w_pred = x2 - x1
    local h_pred = y2 - y1
    local w_gt = x2g - x1g
    local h_gt = y2g - y1g
    local v = (4 / (tide.pi ^ 2)) * tide.pow((tide.atan(w_gt / h_gt) - tide.atan(w_pred / h_pred)), 2)
    -- with torch.no_grad(): alpha = v / (1 - iou + v + eps)
    local alpha = tide.no_grad(function() return v / (1 - iou + v + eps) end)
    local loss = diou_loss + alpha * v
    return reduce(loss, reduction)
end

describe("torchvision/ops focal_loss.py and giou/diou/ciou_loss.py", function()
    it("sigmoid_focal_loss, its three reductions and a bad one", function()
        local x = tide.tensor({ { 0.5, -1.0, 2.0 }, { -0.3, 1.5, 0.0 } })
        local t = tide.tensor({ { 1., 0, 1 }, { 0, 0, 1 } }, { dtype = tide.float32 })
        close(sigmoid_focal_loss(x, t), { { 0.01689337007701397, 0.016993539407849312, 0.00045089120976626873 },
            { 0.07529495656490326, 0.8529541492462158, 0.043321698904037476 } })
        close(sigmoid_focal_loss(x, t, nil, nil, "mean"), 0.16765142977237701)
        close(sigmoid_focal_loss(x, t, -1, 1, "sum"), 2.251878261566162)
        assert.has_error(function() sigmoid_focal_loss(x, t, nil, nil, "max") end)
    end)

    it("generalized/distance/complete box_iou_loss (int64 targets upcast) and ciou's gradient", function()
        local p = tide.tensor({ { 0., 0, 10, 10 }, { 5, 5, 15, 20 }, { 2, 3, 4, 8 } }, { dtype = tide.float32 })
        -- g = torch.tensor([[1, 1, 9, 9], [10, 10, 20, 20], [30, 30, 31, 31]])   (int64)
        local g = tide.tensor({ { 1, 1, 9, 9 }, { 10, 10, 20, 20 }, { 30, 30, 31, 31 } }, { dtype = tide.int64 })
        close(generalized_box_iou_loss(p, g), { 0.36000001430511475, 0.8611111044883728, 1.9864531755447388 })
        close(generalized_box_iou_loss(p, g, "mean"), 1.069188117980957)
        close(distance_box_iou_loss(p, g), { 0.36000001430511475, 0.8194444179534912, 1.850000023841858 })
        close(distance_box_iou_loss(p, g, "sum"), 3.029444456100464)
        close(complete_box_iou_loss(p, g), { 0.36000001430511475, 0.819770097732544, 1.8541394472122192 })
        -- pp = p.clone().requires_grad_(); complete_box_iou_loss(pp, g.float(), "sum").backward()
        local pp = p:clone():requires_grad_()
        complete_box_iou_loss(pp, g:float(), "sum"):backward()
        close(pp.grad, { { -0.064, -0.064, 0.064, 0.064 },
            { -0.025079194456338882, -0.01352744922041893, -0.05501339212059975, -0.010893845930695534 },
            { 0.016940733417868614, 0.012497552670538425, -0.02044842764735222, -0.013974475674331188 } })
        -- an empty batch: mean is 0.0 * loss.sum()
        close(generalized_box_iou_loss(tide.zeros({ 0, 4 }), tide.zeros({ 0, 4 }), "mean"), 0)
    end)
end)

---------------------------------------------------------------------------------------------
-- misc.py FrozenBatchNorm2d and drop_block.py
---------------------------------------------------------------------------------------------
-- class FrozenBatchNorm2d(torch.nn.Module):
local FrozenBatchNorm2d = nn.Module:extend("FrozenBatchNorm2d")
-- def __init__(self, num_features: int, eps: float = 1e-5):
function FrozenBatchNorm2d:init(num_features, eps)
    self.eps = eps or 1e-5
    self:register_buffer("weight", tide.ones(num_features))
    self:register_buffer("bias", tide.zeros(num_features))
    self:register_buffer("running_mean", tide.zeros(num_features))
    self:register_buffer("running_var", tide.ones(num_features))
end

function FrozenBatchNorm2d:_load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                                 unexpected_keys, error_msgs)
    local num_batches_tracked_key = prefix .. "num_batches_tracked"
    -- if num_batches_tracked_key in state_dict: del state_dict[num_batches_tracked_key]
    if state_dict[num_batches_tracked_key] ~= nil then
        state_dict[num_batches_tracked_key] = nil
    end
    -- super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
    nn.Module._load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)
end

function FrozenBatchNorm2d:forward(x)
    -- move reshapes to the beginning to make it fuser-friendly
    local w = self.weight:reshape(1, -1, 1, 1)
    local b = self.bias:reshape(1, -1, 1, 1)
    local rv = self.running_var:reshape(1, -1, 1, 1)
    local rm = self.running_mean:reshape(1, -1, 1, 1)
    local scale = w * (rv + self.eps):rsqrt()
    local bias = b - rm * scale
    return x * scale + bias
end

-- def drop_block2d(input, p, block_size, inplace=False, eps=1e-06, training=True)
local function drop_block2d(input, p, block_size, inplace, eps, training)
    eps = eps or 1e-06
    if training == nil then training = true end
    if p < 0.0 or p > 1.0 then
        error(("drop probability has to be between 0 and 1, but got %s."):format(p))
    end
    if input.ndim ~= 4 then
        error(("input should be 4 dimensional. Got %d dimensions."):format(input.ndim))
    end
    if not training or p == 0.0 then
        return input
    end
    -- N, C, H, W = input.size()
    local N, C, H, W = unpack(input:size())
    block_size = math.min(block_size, W, H)
    if block_size % 2 == 0 then
        error(("block size should be odd. Got %d which is even."):format(block_size))
    end
    -- compute the gamma of Bernoulli distribution
    local gamma = (p * H * W) / ((block_size ^ 2) * ((H - block_size + 1) * (W - block_size + 1)))
    -- noise = torch.empty((N, C, H - block_size + 1, W - block_size + 1), dtype=input.dtype, device=input.device)
    local noise = tide.empty({ N, C, H - block_size + 1, W - block_size + 1 }, { dtype = input.dtype, device = input.device })
    noise:bernoulli_(gamma)
    -- noise = F.pad(noise, [block_size // 2] * 4, value=0)
    local half = math.floor(block_size / 2)
    noise = F.pad(noise, { half, half, half, half }, { value = 0 })
    -- noise = F.max_pool2d(noise, stride=(1, 1), kernel_size=(block_size, block_size), padding=block_size // 2)
    noise = F.max_pool2d(noise, { stride = { 1, 1 }, kernel_size = { block_size, block_size }, padding = half })
    noise = 1 - noise
    local normalize_scale = noise:numel() / (eps + noise:sum())
    if inplace then
        input:mul_(noise):mul_(normalize_scale)
    else
        input = input * noise * normalize_scale
    end
    return input
end

local DropBlock2d = nn.Module:extend("DropBlock2d")
function DropBlock2d:init(p, block_size, inplace, eps)
    self.p = p
    self.block_size = block_size
    self.inplace = inplace or false
    self.eps = eps or 1e-06
end
function DropBlock2d:forward(input)
    return drop_block2d(input, self.p, self.block_size, self.inplace, self.eps, self.training)
end

describe("torchvision/ops misc.py FrozenBatchNorm2d and drop_block.py", function()
    it("FrozenBatchNorm2d loads a BatchNorm2d's state_dict (num_batches_tracked dropped) and matches its eval", function()
        tide.manual_seed(0)
        local bn = nn.BatchNorm2d(3)
        local x = tide.randn(4, 3, 5, 5)
        for _ = 1, 3 do bn(x * 2 + 1) end -- running stats move off 0 and 1
        bn.weight.data:uniform_(0.5, 1.5)
        bn:eval()
        local sd = bn:state_dict()
        sd["num_batches_tracked"] = tide.tensor(3, { dtype = tide.int64 }) -- PyTorch's BatchNorm has it
        local net = nn.Sequential(FrozenBatchNorm2d(3))
        local frozen = net[1]
        -- a strict load: the hook runs under its prefix ("1.") and drops the key; sd is not changed
        local prefixed = {}
        for k, v in pairs(sd) do prefixed["1." .. k] = v end
        local r = net:load_state_dict(prefixed)
        assert.are.same({}, r.unexpected_keys)
        assert.is_not_nil(prefixed["1.num_batches_tracked"])
        assert.is_true(tide.allclose(frozen(x), bn(x), 1e-5, 1e-5))
        assert.are.same({}, frozen:parameters())
        -- without the hook the same load raises on the unexpected key
        local plain = nn.Module:extend("Plain")
        function plain:init() self:register_buffer("weight", tide.ones(3)) end
        assert.has_error(function() plain():load_state_dict({ weight = tide.ones(3), num_batches_tracked = tide.tensor(1) }) end)
        -- a hook's error_msgs make the load raise and change nothing
        local Strict = nn.Module:extend("Strict")
        function Strict:init() self:register_buffer("weight", tide.ones(2)) end
        function Strict:_load_from_state_dict(_, _, _, _, _, _, error_msgs) error_msgs[#error_msgs + 1] = "no" end
        local s = Strict()
        local ok, err = pcall(function() s:load_state_dict({ weight = tide.zeros(2) }) end)
        assert.is_false(ok)
        assert.truthy(tostring(err):find("_load_from_state_dict reported: no", 1, true))
        assert.are.same({ 1, 1 }, s.weight:tolist())
    end)

    it("drop_block2d: its pooled block mask, the normalize scale, eval and p = 0", function()
        tide.manual_seed(3)
        -- the F.pad + F.max_pool2d of one dropped seed grows into a block_size x block_size block
        local noise = tide.zeros(1, 1, 3, 3)
        noise[{ 1, 1, 2, 3 }] = 1
        noise = F.pad(noise, { 1, 1, 1, 1 }, { value = 0 })
        noise = F.max_pool2d(noise, { stride = { 1, 1 }, kernel_size = { 3, 3 }, padding = 1 })
        assert.are.same({ 1, 1, 5, 5 }, noise.shape)
        assert.are.same({ 0, 0, 1, 1, 1 }, noise[{ 1, 1, 2 }]:tolist())
        assert.are.same({ 0, 0, 0, 0, 0 }, noise[{ 1, 1, 5 }]:tolist())
        assert.are.equal(9, noise:sum():item())

        local m = DropBlock2d(0.3, 3)
        local x = tide.ones(2, 4, 7, 7)
        local y = m(x)
        local kept = y:ne(0):float()
        -- every kept element is scaled by numel / kept count
        local scale = kept:numel() / kept:sum():item()
        assert.is_true(tide.allclose(y, kept * scale, 1e-4, 1e-4))
        assert.is_true(kept:sum():item() < kept:numel())
        m:eval()
        assert.are.equal(x, m(x))
        assert.are.equal(x, drop_block2d(x, 0.0, 3))
        assert.has_error(function() drop_block2d(x, 0.5, 4) end)
        assert.has_error(function() drop_block2d(tide.ones(3, 7, 7), 0.5, 3) end)
        -- inplace
        local z = tide.ones(1, 1, 7, 7)
        assert.are.equal(z, drop_block2d(z, 0.5, 3, true))
    end)
end)

---------------------------------------------------------------------------------------------
-- feature_pyramid_network.py (with misc.py's Conv2dNormActivation). Python's OrderedDict of
-- feature maps is a Lua list of {name, tensor} pairs (keys in order, as list(x.keys()) reads).
-- Python's `activation_layer=None` over a non-None default is `activation_layer = false`: a nil
-- in a Lua table is no entry, so nn.signature would fill in the default (ReLU).
---------------------------------------------------------------------------------------------
-- class Conv2dNormActivation(ConvNormActivation)  (ConvNormActivation is a torch.nn.Sequential)
local Conv2dNormActivation = nn.Sequential:extend("Conv2dNormActivation")
function Conv2dNormActivation:init(in_channels, out_channels, kernel_size, stride, padding, groups, norm_layer,
                                   activation_layer, dilation, inplace, bias)
    if padding == nil then
        -- padding = (kernel_size - 1) // 2 * dilation
        padding = math.floor((kernel_size - 1) / 2) * dilation
    end
    if bias == nil then
        -- bias = norm_layer is None
        bias = not norm_layer
    end
    -- layers = [conv_layer(in_channels, out_channels, kernel_size, stride, padding, dilation=dilation, groups=groups, bias=bias)]
    local layers = { nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding,
        { dilation = dilation, groups = groups, bias = bias }) }
    if norm_layer then
        layers[#layers + 1] = norm_layer(out_channels)
    end
    if activation_layer then
        layers[#layers + 1] = activation_layer({ inplace = inplace })
    end
    -- super().__init__(*layers)
    nn.Sequential.init(self, unpack(layers))
    self.out_channels = out_channels
end
nn.signature(Conv2dNormActivation, "self, in_channels, out_channels, kernel_size=3, stride=1, padding=None, " ..
    "groups=1, norm_layer=torch.nn.BatchNorm2d, activation_layer=torch.nn.ReLU, dilation=1, inplace=True, bias=None")

-- class ExtraFPNBlock(nn.Module):
local ExtraFPNBlock = nn.Module:extend("ExtraFPNBlock")
function ExtraFPNBlock:forward(results, x, names) end -- luacheck: ignore

-- class LastLevelMaxPool(ExtraFPNBlock):
local LastLevelMaxPool = ExtraFPNBlock:extend("LastLevelMaxPool")
function LastLevelMaxPool:forward(x, y, names) -- luacheck: ignore
    -- names.append("pool")
    names[#names + 1] = "pool"
    -- Use max pooling to simulate stride 2 subsampling
    -- x.append(F.max_pool2d(x[-1], kernel_size=1, stride=2, padding=0))
    x[#x + 1] = F.max_pool2d(x[#x], { kernel_size = 1, stride = 2, padding = 0 })
    return x, names
end

-- class FeaturePyramidNetwork(nn.Module):
local FeaturePyramidNetwork = nn.Module:extend("FeaturePyramidNetwork")
function FeaturePyramidNetwork:init(in_channels_list, out_channels, extra_blocks, norm_layer)
    self.inner_blocks = nn.ModuleList()
    self.layer_blocks = nn.ModuleList()
    for _, in_channels in ipairs(in_channels_list) do
        if in_channels == 0 then
            error("in_channels=0 is currently not supported")
        end
        -- inner_block_module = Conv2dNormActivation(in_channels, out_channels, kernel_size=1, padding=0, norm_layer=norm_layer, activation_layer=None)
        local inner_block_module = Conv2dNormActivation(in_channels, out_channels,
            { kernel_size = 1, padding = 0, norm_layer = norm_layer or false, activation_layer = false })
        local layer_block_module = Conv2dNormActivation(out_channels, out_channels,
            { kernel_size = 3, norm_layer = norm_layer or false, activation_layer = false })
        self.inner_blocks:append(inner_block_module)
        self.layer_blocks:append(layer_block_module)
    end
    -- initialize parameters now to avoid modifying the initialization of top_blocks
    for _, m in ipairs(self:modules()) do
        if tide.isinstance(m, nn.Conv2d) then
            -- nn.init.kaiming_uniform_(m.weight, a=1)
            nn.init.kaiming_uniform_(m.weight, { a = 1 })
            if m.bias ~= nil then
                nn.init.constant_(m.bias, 0)
            end
        end
    end
    if extra_blocks ~= nil then
        if not tide.isinstance(extra_blocks, ExtraFPNBlock) then
            error(("extra_blocks should be of type ExtraFPNBlock not %s"):format(type(extra_blocks)))
        end
    end
    self.extra_blocks = extra_blocks
end

-- def get_result_from_inner_blocks(self, x: Tensor, idx: int) -> Tensor:
function FeaturePyramidNetwork:get_result_from_inner_blocks(x, idx)
    -- num_blocks = len(self.inner_blocks)
    local num_blocks = #self.inner_blocks
    if idx < 0 then
        -- idx += num_blocks   (idx 1-based: -1 is the last)
        idx = idx + num_blocks + 1
    end
    local out = x
    -- for i, module in enumerate(self.inner_blocks):
    for i, module in ipairs(self.inner_blocks) do
        if i == idx then
            out = module(x)
        end
    end
    return out
end

function FeaturePyramidNetwork:get_result_from_layer_blocks(x, idx)
    local num_blocks = #self.layer_blocks
    if idx < 0 then
        idx = idx + num_blocks + 1
    end
    local out = x
    for i, module in ipairs(self.layer_blocks) do
        if i == idx then
            out = module(x)
        end
    end
    return out
end

-- def forward(self, x: Dict[str, Tensor]) -> Dict[str, Tensor]:   (x: a list of {name, tensor})
function FeaturePyramidNetwork:forward(x)
    -- unpack OrderedDict into two lists for easier handling
    -- names = list(x.keys()); x = list(x.values())
    local names, values = {}, {}
    for i, kv in ipairs(x) do
        names[i], values[i] = kv[1], kv[2]
    end
    x = values
    -- last_inner = self.get_result_from_inner_blocks(x[-1], -1)
    local last_inner = self:get_result_from_inner_blocks(x[#x], -1)
    local results = {}
    results[#results + 1] = self:get_result_from_layer_blocks(last_inner, -1)
    -- for idx in range(len(x) - 2, -1, -1):
    for idx = #x - 1, 1, -1 do
        local inner_lateral = self:get_result_from_inner_blocks(x[idx], idx)
        -- feat_shape = inner_lateral.shape[-2:]
        local feat_shape = inner_lateral:size()[{ { -2, -1 } }]
        -- inner_top_down = F.interpolate(last_inner, size=feat_shape, mode="nearest")
        local inner_top_down = F.interpolate(last_inner, { size = feat_shape, mode = "nearest" })
        last_inner = inner_lateral + inner_top_down
        -- results.insert(0, self.get_result_from_layer_blocks(last_inner, idx))
        table.insert(results, 1, self:get_result_from_layer_blocks(last_inner, idx))
    end
    if self.extra_blocks ~= nil then
        results, names = self.extra_blocks(results, x, names)
    end
    -- make it back an OrderedDict
    -- out = OrderedDict([(k, v) for k, v in zip(names, results)])
    local out = {}
    for i = 1, #names do
        out[i] = { names[i], results[i] }
    end
    return out
end

describe("torchvision/ops/feature_pyramid_network.py", function()
    -- def det(shape, k): (torch.sin(torch.arange(n) * 0.37 + k) * 0.2).reshape(shape)
    local function det(shape, k)
        local n = 1
        for _, s in ipairs(shape) do n = n * s end
        return (tide.sin(tide.arange(n, { dtype = tide.float32 }) * 0.37 + k) * 0.2):reshape(shape)
    end

    it("FeaturePyramidNetwork + LastLevelMaxPool on three maps match PyTorch's numbers", function()
        local m = FeaturePyramidNetwork({ 4, 6, 8 }, 5, LastLevelMaxPool())
        -- activation_layer = false (Python's None) and no norm_layer: one Conv2d with a bias
        assert.are.equal(1, #m.inner_blocks[1]:children())
        assert.are.equal(1, #m.layer_blocks[3]:children())
        assert.is_not_nil(m.inner_blocks[1][1].bias)
        assert.are.same({ 5, 5, 3, 3 }, m.layer_blocks[1][1].weight.shape)
        -- Python's default activation_layer=torch.nn.ReLU and norm_layer=torch.nn.BatchNorm2d
        assert.are.equal(3, #Conv2dNormActivation(4, 5):children())
        local k = 0
        for _, mod in ipairs(m:modules()) do
            if tide.isinstance(mod, nn.Conv2d) then
                k = k + 1
                mod.weight.data = det(mod.weight.shape, k)
                mod.bias.data = det(mod.bias.shape, k + 10)
            end
        end
        assert.are.equal(6, k)
        local x = { { "feat0", det({ 1, 4, 16, 12 }, 1) }, { "feat2", det({ 1, 6, 8, 6 }, 2) },
            { "feat3", det({ 1, 8, 3, 3 }, 3) } }
        local out = m(x)
        local expected = {
            { "feat0", { 1, 5, 16, 12 }, 137.96957397460938, 176.4095458984375, { 0.2284191995859146, 0.2220374345779419, 0.22234845161437988 } },
            { "feat2", { 1, 5, 8, 6 }, 0.3439359664916992, 29.023517608642578, { 0.09332597255706787, 0.09707430750131607, 0.10811440646648407 } },
            { "feat3", { 1, 5, 3, 3 }, -6.439970970153809, 6.491578578948975, { -0.11127807945013046, -0.10353589057922363, -0.108187235891819 } },
            { "pool", { 1, 5, 2, 2 }, -2.9136648178100586, 2.92295503616333, { -0.11127807945013046, -0.108187235891819 } },
        }
        assert.are.equal(4, #out)
        for i, e in ipairs(expected) do
            local name, v = out[i][1], out[i][2]
            assert.are.equal(e[1], name)
            assert.are.same(e[2], v.shape)
            close(v:sum(), e[3], 1e-3)
            close(v:abs():sum(), e[4], 1e-3)
            -- v[0, 1, 0, :3]
            close(v[{ 1, 2, 1, { 1, 3 } }], e[5], 1e-5)
        end
        -- a few SGD steps on the pyramid's outputs
        local opt = tide.optim.SGD(m:parameters(), { lr = 0.01 })
        local target = tide.zeros(1, 5, 16, 12)
        local losses = {}
        for step = 1, 3 do
            local o = m(x)
            local loss = F.mse_loss(o[1][2], target)
            opt:zero_grad()
            loss:backward()
            opt:step()
            losses[step] = loss:item()
        end
        assert.is_true(losses[3] < losses[1])
        assert.has_error(function() FeaturePyramidNetwork({ 4, 0 }, 5) end)
        assert.has_error(function() FeaturePyramidNetwork({ 4 }, 5, nn.ReLU()) end)
    end)
end)
