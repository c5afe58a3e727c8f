-- ported_scripts162_spec.lua — ultralytics/yolov5's box utilities and detection metrics, ported
-- line for line at tiny sizes (batch 2, 12 boxes, 3 classes) on predictions built from formulas.
-- yolov5 HEAD (5081342f0) re-exports most of these from the ultralytics package, so each comes
-- from the last yolov5 commit that still defined it: utils/general.py at 2e3ec5512^ (xywh2xyxy,
-- xywhn2xyxy, clip_boxes), HEAD (xyxy2xywh, scale_boxes, non_max_suppression);
-- utils/metrics.py at c22295bde^ (bbox_iou, box_iou), 0fd7ea49e^ (smooth), HEAD (compute_ap,
-- ap_per_class, ConfusionMatrix.process_batch). The merge branch of NMS is off (merge = False).
-- The Python line stands above each Lua line that differs from it. Class ids stay 0-based data
-- (the 6th column of a detection, the 1st of a label); "+ 1" marks where one indexes a tensor.
-- Expected values: PyTorch 1.13 + NumPy on the same data (torchvision's nms as a greedy loop).
local tide = require("tide")
local F = tide.nn.functional

local F64 = { dtype = "float64" }
local I64 = { dtype = "int64" }

local function close(got, want, tol, name)
    if type(tol) == "string" then tol, name = nil, tol end
    tol = tol or 1e-4
    local shape = {}
    for k, s in ipairs(want.shape) do shape[k] = s end
    local gs = {}
    for d = 1, got:dim() do gs[d] = got:size(d) end
    assert.are.same(shape, gs)
    local flat = {}
    for k = 1, #want do flat[k] = want[k] end
    if #flat == 0 then return end
    local w = tide.tensor(flat, F64)
    local g = got:double():reshape(-1)
    local err = (g - w):abs():max():item()
    assert.is_true(err <= tol * (1 + w:abs():max():item()),
        tostring(name) .. ": max abs error " .. err)
end

---------------------------------------------------------------------------------------------
-- utils/general.py: box conversions
---------------------------------------------------------------------------------------------
-- def xywh2xyxy(x):
local function xywh2xyxy(x)
    -- y = x.clone() if isinstance(x, torch.Tensor) else np.copy(x)
    local y = x:clone()
    -- y[..., 0] = x[..., 0] - x[..., 2] / 2  # top left x
    y[{ "...", 1 }] = x[{ "...", 1 }] - x[{ "...", 3 }] / 2
    -- y[..., 1] = x[..., 1] - x[..., 3] / 2  # top left y
    y[{ "...", 2 }] = x[{ "...", 2 }] - x[{ "...", 4 }] / 2
    -- y[..., 2] = x[..., 0] + x[..., 2] / 2  # bottom right x
    y[{ "...", 3 }] = x[{ "...", 1 }] + x[{ "...", 3 }] / 2
    -- y[..., 3] = x[..., 1] + x[..., 3] / 2  # bottom right y
    y[{ "...", 4 }] = x[{ "...", 2 }] + x[{ "...", 4 }] / 2
    return y
end

-- def xyxy2xywh(x):
local function xyxy2xywh(x)
    local y = x:clone()
    -- y[..., 0] = (x[..., 0] + x[..., 2]) / 2  # x center
    y[{ "...", 1 }] = (x[{ "...", 1 }] + x[{ "...", 3 }]) / 2
    -- y[..., 1] = (x[..., 1] + x[..., 3]) / 2  # y center
    y[{ "...", 2 }] = (x[{ "...", 2 }] + x[{ "...", 4 }]) / 2
    -- y[..., 2] = x[..., 2] - x[..., 0]  # width
    y[{ "...", 3 }] = x[{ "...", 3 }] - x[{ "...", 1 }]
    -- y[..., 3] = x[..., 3] - x[..., 1]  # height
    y[{ "...", 4 }] = x[{ "...", 4 }] - x[{ "...", 2 }]
    return y
end

-- def xywhn2xyxy(x, w=640, h=640, padw=0, padh=0):
local function xywhn2xyxy(x, w, h, padw, padh)
    w, h, padw, padh = w or 640, h or 640, padw or 0, padh or 0
    local y = x:clone()
    -- y[..., 0] = w * (x[..., 0] - x[..., 2] / 2) + padw  # top left x
    y[{ "...", 1 }] = w * (x[{ "...", 1 }] - x[{ "...", 3 }] / 2) + padw
    -- y[..., 1] = h * (x[..., 1] - x[..., 3] / 2) + padh  # top left y
    y[{ "...", 2 }] = h * (x[{ "...", 2 }] - x[{ "...", 4 }] / 2) + padh
    -- y[..., 2] = w * (x[..., 0] + x[..., 2] / 2) + padw  # bottom right x
    y[{ "...", 3 }] = w * (x[{ "...", 1 }] + x[{ "...", 3 }] / 2) + padw
    -- y[..., 3] = h * (x[..., 1] + x[..., 3] / 2) + padh  # bottom right y
    y[{ "...", 4 }] = h * (x[{ "...", 2 }] + x[{ "...", 4 }] / 2) + padh
    return y
end

-- def clip_boxes(boxes, shape):  (shape = (height, width): shape[0] is Lua's shape[1])
local function clip_boxes(boxes, shape)
    -- boxes[..., 0].clamp_(0, shape[1])  # x1
    boxes[{ "...", 1 }]:clamp_(0, shape[2])
    -- boxes[..., 1].clamp_(0, shape[0])  # y1
    boxes[{ "...", 2 }]:clamp_(0, shape[1])
    -- boxes[..., 2].clamp_(0, shape[1])  # x2
    boxes[{ "...", 3 }]:clamp_(0, shape[2])
    -- boxes[..., 3].clamp_(0, shape[0])  # y2
    boxes[{ "...", 4 }]:clamp_(0, shape[1])
end

-- def scale_boxes(img1_shape, boxes, img0_shape, ratio_pad=None):
local function scale_boxes(img1_shape, boxes, img0_shape, ratio_pad)
    local gain, pad
    if ratio_pad == nil then -- calculate from img0_shape
        -- gain = min(img1_shape[0] / img0_shape[0], img1_shape[1] / img0_shape[1])
        gain = math.min(img1_shape[1] / img0_shape[1], img1_shape[2] / img0_shape[2])
        -- pad = (img1_shape[1] - img0_shape[1] * gain) / 2, (img1_shape[0] - ... * gain) / 2
        pad = { (img1_shape[2] - img0_shape[2] * gain) / 2,
            (img1_shape[1] - img0_shape[1] * gain) / 2 }
    else
        -- gain = ratio_pad[0][0]
        gain = ratio_pad[1][1]
        -- pad = ratio_pad[1]
        pad = ratio_pad[2]
    end
    local xs, ys = tide.tensor({ 1, 3 }, I64), tide.tensor({ 2, 4 }, I64)
    -- boxes[..., [0, 2]] -= pad[0]  # x padding
    boxes[{ "...", xs }] = boxes[{ "...", xs }] - pad[1]
    -- boxes[..., [1, 3]] -= pad[1]  # y padding
    boxes[{ "...", ys }] = boxes[{ "...", ys }] - pad[2]
    -- boxes[..., :4] /= gain
    boxes[{ "...", { 1, 4 } }]:div_(gain)
    clip_boxes(boxes, img0_shape)
    return boxes
end

---------------------------------------------------------------------------------------------
-- utils/metrics.py: IoU
---------------------------------------------------------------------------------------------
-- def box_iou(box1, box2, eps=1e-7):
local function box_iou(box1, box2, eps)
    eps = eps or 1e-7
    -- (a1, a2), (b1, b2) = box1.unsqueeze(1).chunk(2, 2), box2.unsqueeze(0).chunk(2, 2)
    local a = box1:unsqueeze(2):chunk(2, 3)
    local b = box2:unsqueeze(1):chunk(2, 3)
    local a1, a2, b1, b2 = a[1], a[2], b[1], b[2]
    -- inter = (torch.min(a2, b2) - torch.max(a1, b1)).clamp(0).prod(2)
    local inter = (tide.min(a2, b2) - tide.max(a1, b1)):clamp(0):prod(3)
    -- return inter / ((a2 - a1).prod(2) + (b2 - b1).prod(2) - inter + eps)
    return inter / ((a2 - a1):prod(3) + (b2 - b1):prod(3) - inter + eps)
end

-- def bbox_iou(box1, box2, xywh=True, GIoU=False, DIoU=False, CIoU=False, eps=1e-7):
local function bbox_iou(box1, box2, o)
    o = o or {}
    local xywh, eps = o.xywh ~= false, o.eps or 1e-7
    local b1_x1, b1_x2, b1_y1, b1_y2, b2_x1, b2_x2, b2_y1, b2_y2, w1, h1, w2, h2
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
        local c1, c2 = box1:chunk(4, -1), box2:chunk(4, -1)
        b1_x1, b1_y1, b1_x2, b1_y2 = c1[1], c1[2], c1[3], c1[4]
        -- b2_x1, b2_y1, b2_x2, b2_y2 = box2.chunk(4, -1)
        b2_x1, b2_y1, b2_x2, b2_y2 = c2[1], c2[2], c2[3], c2[4]
        w1, h1 = b1_x2 - b1_x1, (b1_y2 - b1_y1):clamp(eps)
        w2, h2 = b2_x2 - b2_x1, (b2_y2 - b2_y1):clamp(eps)
    end
    -- inter = (b1_x2.minimum(b2_x2) - b1_x1.maximum(b2_x1)).clamp(0) * (
    --     b1_y2.minimum(b2_y2) - b1_y1.maximum(b2_y1)).clamp(0)
    local inter = (b1_x2:minimum(b2_x2) - b1_x1:maximum(b2_x1)):clamp(0)
        * (b1_y2:minimum(b2_y2) - b1_y1:maximum(b2_y1)):clamp(0)
    local union = w1 * h1 + w2 * h2 - inter + eps
    local iou = inter / union
    if o.CIoU or o.DIoU or o.GIoU then
        -- cw = b1_x2.maximum(b2_x2) - b1_x1.minimum(b2_x1)  # convex width
        local cw = b1_x2:maximum(b2_x2) - b1_x1:minimum(b2_x1)
        -- ch = b1_y2.maximum(b2_y2) - b1_y1.minimum(b2_y1)  # convex height
        local ch = b1_y2:maximum(b2_y2) - b1_y1:minimum(b2_y1)
        if o.CIoU or o.DIoU then
            local c2 = cw ^ 2 + ch ^ 2 + eps
            -- rho2 = ((b2_x1 + b2_x2 - b1_x1 - b1_x2) ** 2 + (... - b1_y2) ** 2) / 4
            local rho2 = ((b2_x1 + b2_x2 - b1_x1 - b1_x2) ^ 2
                + (b2_y1 + b2_y2 - b1_y1 - b1_y2) ^ 2) / 4
            if o.CIoU then
                -- v = (4 / math.pi**2) * (torch.atan(w2 / h2) - torch.atan(w1 / h1)).pow(2)
                local v = (4 / math.pi ^ 2) * (tide.atan(w2 / h2) - tide.atan(w1 / h1)):pow(2)
                -- with torch.no_grad():
                --     alpha = v / (v - iou + (1 + eps))
                local alpha = tide.no_grad(function() return v / (v - iou + (1 + eps)) end)
                return iou - (rho2 / c2 + v * alpha) -- CIoU
            end
            return iou - rho2 / c2 -- DIoU
        end
        local c_area = cw * ch + eps -- convex area
        return iou - (c_area - union) / c_area -- GIoU
    end
    return iou
end

-- torchvision.ops.nms(boxes, scores, iou_threshold)
-- GAP: tide has no nms (docs/API.md names none); torchvision's greedy NMS as a Lua loop:
-- highest score first, drop every later box whose IoU with a kept one exceeds the threshold
local function nms(boxes, scores, iou_thres)
    local order = scores:argsort({ descending = true }):totable()
    local iou = box_iou(boxes, boxes, 0):totable()
    local keep, suppressed = {}, {}
    for _, a in ipairs(order) do
        if not suppressed[a] then
            keep[#keep + 1] = a
            for b = 1, #order do
                if iou[a][b] > iou_thres then suppressed[b] = true end
            end
        end
    end
    return tide.tensor(keep, I64)
end

-- def non_max_suppression(prediction, conf_thres=0.25, iou_thres=0.45, classes=None,
--                         agnostic=False, multi_label=False, labels=(), max_det=300, nm=0):
local function non_max_suppression(prediction, o)
    o = o or {}
    local conf_thres, iou_thres = o.conf_thres or 0.25, o.iou_thres or 0.45
    local classes, agnostic, max_det, nm = o.classes, o.agnostic, o.max_det or 300, o.nm or 0
    assert(0 <= conf_thres and conf_thres <= 1, "Invalid Confidence threshold")
    assert(0 <= iou_thres and iou_thres <= 1, "Invalid IoU")
    -- bs = prediction.shape[0]  # batch size
    local bs = prediction:size(1)
    -- nc = prediction.shape[2] - nm - 5  # number of classes
    local nc = prediction:size(3) - nm - 5
    -- xc = prediction[..., 4] > conf_thres  # candidates
    local xc = prediction[{ "...", 5 }]:gt(conf_thres)
    local max_wh = 7680 -- (pixels) maximum box width and height
    local max_nms = 30000 -- maximum number of boxes into torchvision.ops.nms()
    -- multi_label &= nc > 1  # multiple labels per box
    local multi_label = o.multi_label and nc > 1
    local mi = 5 + nc -- mask start index (0-based: Lua's column mi + 1)
    -- output = [torch.zeros((0, 6 + nm), device=prediction.device)] * bs
    local output = {}
    for b = 1, bs do output[b] = tide.zeros({ 0, 6 + nm }) end
    -- for xi, x in enumerate(prediction):  # image index, image inference
    for xi, x in ipairs(prediction:unbind()) do
        repeat
            -- x = x[xc[xi]]  # confidence
            x = x[xc[xi]]
            -- if not x.shape[0]:
            if x:size(1) == 0 then break end -- continue
            -- x[:, 5:] *= x[:, 4:5]  # conf = obj_conf * cls_conf
            x[{ {}, { 6, -1 } }]:mul_(x[{ {}, { 5, 5 } }])
            -- box = xywh2xyxy(x[:, :4])
            local box = xywh2xyxy(x[{ {}, { 1, 4 } }])
            -- mask = x[:, mi:]  # zero columns if no masks
            local mask = x[{ {}, { mi + 1, -1 } }]
            if multi_label then
                -- i, j = (x[:, 5:mi] > conf_thres).nonzero(as_tuple=False).T
                local ij = x[{ {}, { 6, mi } }]:gt(conf_thres):nonzero()
                local i, j = ij[{ {}, 1 }], ij[{ {}, 2 }] -- 1-based row and class column
                -- x = torch.cat((box[i], x[i, 5 + j, None], j[:, None].float(), mask[i]), 1)
                x = tide.cat({ box[i], x[{ i, j + 5 }]:unsqueeze(2),
                    (j - 1):unsqueeze(2):float(), mask[i] }, 2) -- class id j - 1: 0-based
            else -- best class only
                -- conf, j = x[:, 5:mi].max(1, keepdim=True)
                local conf, j = x[{ {}, { 6, mi } }]:max(2, true)
                -- x = torch.cat((box, conf, j.float(), mask), 1)[conf.view(-1) > conf_thres]
                x = tide.cat({ box, conf, (j - 1):float(), mask }, 2)[conf:view(-1):gt(conf_thres)]
            end
            if classes ~= nil then -- Filter by class
                -- x = x[(x[:, 5:6] == torch.tensor(classes, device=x.device)).any(1)]
                x = x[x[{ {}, { 6, 6 } }]:eq(tide.tensor(classes)):any(2)]
            end
            local n = x:size(1) -- number of boxes
            if n == 0 then break end -- continue
            -- x = x[x[:, 4].argsort(descending=True)[:max_nms]]  # sort by confidence
            x = x[x[{ {}, 5 }]:argsort({ descending = true })[{ { 1, max_nms } }]]
            -- c = x[:, 5:6] * (0 if agnostic else max_wh)  # classes
            local c = x[{ {}, { 6, 6 } }] * (agnostic and 0 or max_wh)
            -- boxes, scores = x[:, :4] + c, x[:, 4]  # boxes (offset by class), scores
            local boxes, scores = x[{ {}, { 1, 4 } }] + c, x[{ {}, 5 }]
            local i = nms(boxes, scores, iou_thres) -- NMS
            -- i = i[:max_det]  # limit detections
            i = i[{ { 1, max_det } }]
            output[xi] = x[i]
        until true
    end
    return output
end

---------------------------------------------------------------------------------------------
-- utils/metrics.py: AP
---------------------------------------------------------------------------------------------
-- np.interp(x, xp, fp, left=None, right=None), xp increasing
-- GAP: tide has no interp; built from tide ops: searchsorted (right) finds the last xp <= x,
-- gather the segment's ends, where() the left / right fills (NumPy's, fp's ends by default)
local function interp(x, xp, fp, left, right)
    local n = xp:size(1)
    local k = (tide.searchsorted(xp, x, { right = true }) - 1):clamp(1, n - 1)
    local x0, x1 = xp:gather(1, k), xp:gather(1, k + 1)
    local y0, y1 = fp:gather(1, k), fp:gather(1, k + 1)
    local y = y0 + (x - x0) / (x1 - x0) * (y1 - y0)
    y = tide.where(x:eq(xp[n]), fp[n]:item(), y)
    y = tide.where(x:gt(xp[n]), right or fp[n]:item(), y)
    return tide.where(x:lt(xp[1]), left or fp[1]:item(), y)
end

-- def smooth(y, f=0.05):
local function smooth(y, f)
    f = f or 0.05
    -- nf = round(len(y) * f * 2) // 2 + 1  # number of filter elements (must be odd)
    local nf = math.floor(math.floor(y:size(1) * f * 2 + 0.5) / 2) + 1
    -- p = np.ones(nf // 2)  # ones padding
    local p = tide.ones({ math.floor(nf / 2) }, F64)
    -- yp = np.concatenate((p * y[0], y, p * y[-1]), 0)  # y padded
    local yp = tide.cat({ p * y[1], y, p * y[-1] }, 1)
    -- return np.convolve(yp, np.ones(nf) / nf, mode="valid")  # y-smoothed
    -- (a symmetric kernel: convolution is conv1d's correlation)
    return F.conv1d(yp:view(1, 1, -1), tide.ones({ 1, 1, nf }, F64) / nf):view(-1)
end

-- def compute_ap(recall, precision):
local function compute_ap(recall, precision)
    -- mrec = np.concatenate(([0.0], recall, [1.0]))
    local mrec = tide.cat({ tide.tensor({ 0.0 }, F64), recall, tide.tensor({ 1.0 }, F64) })
    -- mpre = np.concatenate(([1.0], precision, [0.0]))
    local mpre = tide.cat({ tide.tensor({ 1.0 }, F64), precision, tide.tensor({ 0.0 }, F64) })
    -- mpre = np.flip(np.maximum.accumulate(np.flip(mpre)))  (maximum.accumulate is cummax)
    mpre = (mpre:flip({ 1 }):cummax(1)):flip({ 1 })
    -- x = np.linspace(0, 1, 101)  # 101-point interp (COCO)
    local x = tide.linspace(0, 1, 101, F64)
    -- ap = trapezoid(np.interp(x, mrec, mpre), x)  # integrate
    local ap = tide.trapezoid(interp(x, mrec, mpre), x)
    return ap:item(), mpre, mrec
end

-- def ap_per_class(tp, conf, pred_cls, target_cls, plot=False, ..., eps=1e-16, prefix=""):
local function ap_per_class(tp, conf, pred_cls, target_cls, eps)
    eps = eps or 1e-16
    -- i = np.argsort(-conf)
    local i = (-conf):argsort()
    -- tp, conf, pred_cls = tp[i], conf[i], pred_cls[i]
    tp, conf, pred_cls = tp[i], conf[i], pred_cls[i]
    -- unique_classes, nt = np.unique(target_cls, return_counts=True)
    local unique_classes, nt = target_cls:unique({ return_counts = true })
    local nc = unique_classes:size(1) -- number of classes
    -- px, py = np.linspace(0, 1, 1000), []  # for plotting
    local px = tide.linspace(0, 1, 1000, F64)
    -- ap, p, r = np.zeros((nc, tp.shape[1])), np.zeros((nc, 1000)), np.zeros((nc, 1000))
    local ap = tide.zeros({ nc, tp:size(2) }, F64)
    local p, r = tide.zeros({ nc, 1000 }, F64), tide.zeros({ nc, 1000 }, F64)
    -- for ci, c in enumerate(unique_classes):  (ci 1-based here)
    for ci, c in ipairs(unique_classes:totable()) do
        i = pred_cls:eq(c)
        local n_l = nt[ci]:item() -- number of labels
        local n_p = i:sum():item() -- number of predictions
        if n_p > 0 and n_l > 0 then
            -- fpc = (1 - tp[i]).cumsum(0)
            local fpc = (1 - tp[i]):cumsum(1)
            -- tpc = tp[i].cumsum(0)
            local tpc = tp[i]:cumsum(1)
            -- recall = tpc / (n_l + eps)  # recall curve
            local recall = tpc / (n_l + eps)
            -- r[ci] = np.interp(-px, -conf[i], recall[:, 0], left=0)
            r[ci] = interp(-px, -conf[i], recall[{ {}, 1 }], 0)
            -- precision = tpc / (tpc + fpc)  # precision curve
            local precision = tpc / (tpc + fpc)
            -- p[ci] = np.interp(-px, -conf[i], precision[:, 0], left=1)  # p at pr_score
            p[ci] = interp(-px, -conf[i], precision[{ {}, 1 }], 1)
            -- for j in range(tp.shape[1]):
            for j = 1, tp:size(2) do
                -- ap[ci, j], mpre, mrec = compute_ap(recall[:, j], precision[:, j])
                ap[{ ci, j }] = compute_ap(recall[{ {}, j }], precision[{ {}, j }])
            end
        end
    end
    -- f1 = 2 * p * r / (p + r + eps)
    local f1 = 2 * p * r / (p + r + eps)
    -- i = smooth(f1.mean(0), 0.1).argmax()  # max F1 index
    local im = smooth(f1:mean(1), 0.1):argmax():item()
    -- p, r, f1 = p[:, i], r[:, i], f1[:, i]
    p, r, f1 = p[{ {}, im }], r[{ {}, im }], f1[{ {}, im }]
    -- tp = (r * nt).round()  # true positives
    tp = (r * nt:double()):round()
    -- fp = (tp / (p + eps) - tp).round()  # false positives
    local fp = (tp / (p + eps) - tp):round()
    -- return tp, fp, p, r, f1, ap, unique_classes.astype(int)
    return tp, fp, p, r, f1, ap, unique_classes:long(), im
end

-- np.unique(a, return_index=True)[1]: the first index of each value, by ascending value
-- GAP: tide's unique has no return_index; a Lua loop over the (few) matches
local function unique_first_index(a)
    local first, vals = {}, {}
    for k, v in ipairs(a:totable()) do
        if first[v] == nil then first[v] = k; vals[#vals + 1] = v end
    end
    table.sort(vals)
    local idx = {}
    for k, v in ipairs(vals) do idx[k] = first[v] end
    return tide.tensor(idx, I64)
end

-- class ConfusionMatrix:
local ConfusionMatrix = {}
ConfusionMatrix.__index = ConfusionMatrix
-- def __init__(self, nc, conf=0.25, iou_thres=0.45):
function ConfusionMatrix.new(nc, conf, iou_thres)
    -- self.matrix = np.zeros((nc + 1, nc + 1))
    return setmetatable({ matrix = tide.zeros({ nc + 1, nc + 1 }, F64), nc = nc,
        conf = conf or 0.25, iou_thres = iou_thres or 0.45 }, ConfusionMatrix)
end

-- def process_batch(self, detections, labels):
function ConfusionMatrix:process_batch(detections, labels)
    -- detections = detections[detections[:, 4] > self.conf]
    detections = detections[detections[{ {}, 5 }]:gt(self.conf)]
    -- gt_classes = labels[:, 0].int()
    local gt_classes = labels[{ {}, 1 }]:int()
    -- detection_classes = detections[:, 5].int()
    local detection_classes = detections[{ {}, 6 }]:int():totable()
    -- iou = box_iou(labels[:, 1:], detections[:, :4])
    local iou = box_iou(labels[{ {}, { 2, 5 } }], detections[{ {}, { 1, 4 } }])
    -- x = torch.where(iou > self.iou_thres)
    local x = tide.where(iou:gt(self.iou_thres))
    local matches
    if x[1]:size(1) > 0 then
        -- matches = torch.cat((torch.stack(x, 1), iou[x[0], x[1]][:, None]), 1).cpu().numpy()
        -- (label and detection indices 1-based)
        matches = tide.cat({ tide.stack(x, 2):double(), iou[{ x[1], x[2] }]:unsqueeze(2) }, 2)
        if x[1]:size(1) > 1 then
            -- matches = matches[matches[:, 2].argsort()[::-1]]
            matches = matches[matches[{ {}, 3 }]:argsort():flip({ 1 })]
            -- matches = matches[np.unique(matches[:, 1], return_index=True)[1]]
            matches = matches[unique_first_index(matches[{ {}, 2 }])]
            matches = matches[matches[{ {}, 3 }]:argsort():flip({ 1 })]
            -- matches = matches[np.unique(matches[:, 0], return_index=True)[1]]
            matches = matches[unique_first_index(matches[{ {}, 1 }])]
        end
    else
        matches = tide.zeros({ 0, 3 }, F64)
    end
    local n = matches:size(1) > 0
    -- m0, m1, _ = matches.transpose().astype(int)
    local m0, m1 = {}, {}
    for k, row in ipairs(matches:totable()) do m0[k], m1[k] = row[1], row[2] end
    local M = self.matrix
    -- for i, gc in enumerate(gt_classes):
    for i, gc in ipairs(gt_classes:totable()) do
        -- j = m0 == i
        local hits, jm = 0, nil
        for k = 1, #m0 do if m0[k] == i then hits, jm = hits + 1, k end end
        if n and hits == 1 then
            -- self.matrix[detection_classes[m1[j]], gc] += 1  # correct (class + 1: an index)
            local dc = detection_classes[m1[jm]]
            M[dc + 1][gc + 1] = M[dc + 1][gc + 1]:item() + 1
        else
            -- self.matrix[self.nc, gc] += 1  # true background
            M[self.nc + 1][gc + 1] = M[self.nc + 1][gc + 1]:item() + 1
        end
    end
    if n then
        -- for i, dc in enumerate(detection_classes):
        for i, dc in ipairs(detection_classes) do
            -- if not any(m1 == i):
            local any = false
            for k = 1, #m1 do any = any or m1[k] == i end
            if not any then
                -- self.matrix[dc, self.nc] += 1  # predicted background
                M[dc + 1][self.nc + 1] = M[dc + 1][self.nc + 1]:item() + 1
            end
        end
    end
end

-- PyTorch 1.13 / NumPy values (/tmp script: the Python above on the same data), flattened
local E = {
    xyxy = { shape = {12, 4}, 45, 66, 75, 104, 65.874984741210938, 56.002410888671875,
        103.708251953125, 86.677398681640625, 33.742233276367188, 35.571914672851562,
        73.480712890625, 55.003028869628906, 19.717733383178711, 24.942668914794922,
        53.991531372070312, 45.683345794677734, 59.565437316894531, 35.974094390869141,
        85.140235900878906, 68.659255981445312, 69.849830627441406, 58.833805084228516,
        90.074531555175781, 96.599685668945312, 31.366954803466797, 69.486038208007812,
        53.639308929443359, 98.025588989257812, 29.462505340576172, 54.572956085205078,
        59.630641937255859, 73.095741271972656, 62.510704040527344, 28.527595520019531,
        100.44738006591797, 50.917755126953125, 50.069068908691406, 20.53223991394043,
        89.767967224121094, 55.008201599121094, 18.904468536376953, 41.573410034179688,
        53.025653839111328, 78.647872924804688, 43.562705993652344, 69.140724182128906,
        68.987342834472656, 95.519584655761719, },
    xywh = { shape = {12, 4}, 60.25, 85.25, 30, 38, 85.041618347167969, 71.58990478515625,
        37.833267211914062, 30.67498779296875, 53.861473083496094, 45.537471771240234,
        39.738479614257812, 19.431114196777344, 37.104633331298828, 35.563007354736328,
        34.273796081542969, 20.740676879882812, 72.602836608886719, 52.566673278808594,
        25.574798583984375, 32.685161590576172, 80.212181091308594, 77.966743469238281,
        20.224700927734375, 37.765880584716797, 42.753131866455078, 84.005813598632812,
        22.272354125976562, 28.53955078125, 44.796573638916016, 64.0843505859375,
        30.168136596679688, 18.522785186767578, 81.729042053222656, 39.972675323486328,
        37.936676025390625, 22.390159606933594, 70.16851806640625, 38.020221710205078,
        39.698898315429688, 34.475959777832031, 36.215061187744141, 60.360641479492188,
        34.121185302734375, 37.074462890625, 56.5250244140625, 82.580154418945312,
        25.424636840820312, 26.378860473632812, },
    xywhn = { shape = {12, 4}, 133.11836242675781, 57.34222412109375, 199.02876281738281,
        107.44676208496094, 106.04859924316406, 44.529506683349609, 184.68939208984375,
        76.535362243652344, 37.787807464599609, 65.340911865234375, 115.052001953125,
        93.889533996582031, 83.480674743652344, 96.39019775390625, 146.30307006835938,
        141.18788146972656, 150.80484008789062, 106.77035522460938, 197.04949951171875,
        163.71849060058594, 100.20408630371094, 87.399063110351562, 140.28080749511719,
        134.59860229492188, 50.547969818115234, 57.631195068359375, 99.534271240234375,
        87.464797973632812, 107.25830078125, 46.765579223632812, 173.4891357421875,
        77.057060241699219, 129.35957336425781, 66.761444091796875, 208.11956787109375,
        114.66381072998047, 57.551399230957031, 99.04449462890625, 134.64337158203125,
        155.9107666015625, 55.206092834472656, 110.00373840332031, 117.69518280029297,
        154.05479431152344, 138.57742309570312, 85.277915954589844, 184.57992553710938,
        113.50896453857422, },
    clip = { shape = {12, 4}, 64.559173583984375, 32.894817352294922, 90, 66.297836303710938,
        51.024299621582031, 24.353000640869141, 90, 45.690242767333984, 16.893901824951172,
        38.227272033691406, 55.525997161865234, 57.259689331054688, 39.740337371826172,
        58.926795959472656, 71.151535034179688, 70, 73.402412414550781, 65.846908569335938, 90,
        70, 48.102046966552734, 52.932708740234375, 68.140396118164062, 70, 23.273984909057617,
        33.08746337890625, 47.767127990722656, 52.976531982421875, 51.629150390625,
        25.843719482421875, 84.74456787109375, 46.038040161132812, 62.679779052734375,
        39.174301147460938, 90, 70, 26.775699615478516, 60.696331024169922, 65.321685791015625,
        70, 25.603046417236328, 68.002487182617188, 56.847591400146484, 70, 67.288711547851562,
        51.518611907958984, 90, 70, },
    scale = { shape = {12, 4}, 39.375, 37.749996185302734, 65.625, 70.999992370605469,
        57.640609741210938, 29.002107620239258, 90.744712829589844, 55.842720031738281,
        29.524452209472656, 11.125424385070801, 64.295623779296875, 28.127649307250977,
        17.253015518188477, 1.8248347043991089, 47.242588043212891, 19.972927093505859,
        52.119754791259766, 11.477331161499023, 74.497703552246094, 40.076847076416016,
        61.118598937988281, 31.479578018188477, 78.815208435058594, 64.52471923828125,
        27.446084976196289, 40.800281524658203, 46.934394836425781, 65.772384643554688,
        25.779691696166992, 27.751335144042969, 52.176811218261719, 43.958770751953125,
        54.696865081787109, 4.9616456031799316, 87.891456604003906, 24.553033828735352,
        43.810432434082031, 0, 78.546966552734375, 28.132175445556641, 16.541408538818359,
        16.376731872558594, 46.397445678710938, 48.816886901855469, 38.117366790771484,
        40.498130798339844, 60.363922119140625, 63.579635620117188, },
    scale_rp = { shape = {12, 4}, 84, 100, 140, 100, 125.74996948242188, 98.00482177734375, 140,
        100, 61.484466552734375, 57.143829345703125, 140, 96.006057739257812, 33.435466766357422,
        35.885337829589844, 101.98306274414062, 77.366691589355469, 113.13087463378906,
        57.948188781738281, 140, 100, 133.69966125488281, 100, 140, 100, 56.733909606933594, 100,
        101.27861785888672, 100, 52.925010681152344, 95.145912170410156, 113.26128387451172, 100,
        119.02140808105469, 43.055191040039062, 140, 87.83551025390625, 94.138137817382812,
        27.064479827880859, 140, 96.016403198242188, 31.808937072753906, 69.146820068359375,
        100.05130767822266, 100, 81.125411987304688, 100, 131.97468566894531, 100, },
    box_iou = { shape = {5, 7}, 0.0013896706514060497, 0, 0, 0.40217366814613342,
        0.030860960483551025, 0.26300078630447388, 0, 0.16828963160514832, 0, 0,
        0.075006105005741119, 0.30939742922782898, 0.037255261093378067, 0, 0.10199715197086334,
        0.16418555378913879, 0.32000315189361572, 0, 0, 0.030477127060294151, 0.24044060707092285,
        0, 0.041350577026605606, 0.21464230120182037, 0, 0, 0, 0.34684041142463684,
        0.47545561194419861, 0.1742047518491745, 0, 0.067877151072025299, 0.019640479236841202,
        0.10127285122871399, 0, },
    nms_default_1 = { shape = {8, 6}, 31.366954803466797, 69.486038208007812, 53.639308929443359,
        98.025588989257812, 0.8229525089263916, 1, 19.717733383178711, 24.942668914794922,
        53.991531372070312, 45.683345794677734, 0.81879335641860962, 2, 43.562705993652344,
        69.140724182128906, 68.987342834472656, 95.519584655761719, 0.67381030321121216, 2,
        50.069068908691406, 20.53223991394043, 89.767967224121094, 55.008201599121094,
        0.6577000617980957, 0, 45, 66, 75, 104, 0.6414763331413269, 0, 65.874984741210938,
        56.002410888671875, 103.708251953125, 86.677398681640625, 0.56321555376052856, 0,
        62.510704040527344, 28.527595520019531, 100.44738006591797, 50.917755126953125,
        0.45235848426818848, 0, 59.565437316894531, 35.974094390869141, 85.140235900878906,
        68.659255981445312, 0.31594064831733704, 1, },
    nms_default_2 = { shape = {7, 6}, 67.288711547851562, 51.518611907958984, 90.289962768554688,
        70.339302062988281, 0.85519963502883911, 1, 39.740337371826172, 58.926795959472656,
        71.151535034179688, 88.791923522949219, 0.84925693273544312, 1, 23.273984909057617,
        33.08746337890625, 47.767127990722656, 52.976531982421875, 0.77781790494918823, 0,
        64.559173583984375, 32.894817352294922, 97.514373779296875, 66.297836303710938,
        0.7378656268119812, 2, 26.775699615478516, 60.696331024169922, 65.321685791015625,
        98.607177734375, 0.55387037992477417, 2, 48.102046966552734, 52.932708740234375,
        68.140396118164062, 84.399063110351562, 0.38607397675514221, 0, 51.024299621582031,
        24.353000640869141, 90.344688415527344, 45.690242767333984, 0.36573168635368347, 2, },
    nms_iou03_1 = { shape = {7, 6}, 31.366954803466797, 69.486038208007812, 53.639308929443359,
        98.025588989257812, 0.8229525089263916, 1, 19.717733383178711, 24.942668914794922,
        53.991531372070312, 45.683345794677734, 0.81879335641860962, 2, 43.562705993652344,
        69.140724182128906, 68.987342834472656, 95.519584655761719, 0.67381030321121216, 2,
        50.069068908691406, 20.53223991394043, 89.767967224121094, 55.008201599121094,
        0.6577000617980957, 0, 45, 66, 75, 104, 0.6414763331413269, 0, 65.874984741210938,
        56.002410888671875, 103.708251953125, 86.677398681640625, 0.56321555376052856, 0,
        59.565437316894531, 35.974094390869141, 85.140235900878906, 68.659255981445312,
        0.31594064831733704, 1, },
    nms_iou03_2 = { shape = {7, 6}, 67.288711547851562, 51.518611907958984, 90.289962768554688,
        70.339302062988281, 0.85519963502883911, 1, 39.740337371826172, 58.926795959472656,
        71.151535034179688, 88.791923522949219, 0.84925693273544312, 1, 23.273984909057617,
        33.08746337890625, 47.767127990722656, 52.976531982421875, 0.77781790494918823, 0,
        64.559173583984375, 32.894817352294922, 97.514373779296875, 66.297836303710938,
        0.7378656268119812, 2, 26.775699615478516, 60.696331024169922, 65.321685791015625,
        98.607177734375, 0.55387037992477417, 2, 48.102046966552734, 52.932708740234375,
        68.140396118164062, 84.399063110351562, 0.38607397675514221, 0, 51.024299621582031,
        24.353000640869141, 90.344688415527344, 45.690242767333984, 0.36573168635368347, 2, },
    nms_classes_1 = { shape = {6, 6}, 19.717733383178711, 24.942668914794922, 53.991531372070312,
        45.683345794677734, 0.81879335641860962, 2, 43.562705993652344, 69.140724182128906,
        68.987342834472656, 95.519584655761719, 0.67381030321121216, 2, 50.069068908691406,
        20.53223991394043, 89.767967224121094, 55.008201599121094, 0.6577000617980957, 0, 45, 66,
        75, 104, 0.6414763331413269, 0, 65.874984741210938, 56.002410888671875, 103.708251953125,
        86.677398681640625, 0.56321555376052856, 0, 62.510704040527344, 28.527595520019531,
        100.44738006591797, 50.917755126953125, 0.45235848426818848, 0, },
    nms_classes_2 = { shape = {5, 6}, 23.273984909057617, 33.08746337890625, 47.767127990722656,
        52.976531982421875, 0.77781790494918823, 0, 64.559173583984375, 32.894817352294922,
        97.514373779296875, 66.297836303710938, 0.7378656268119812, 2, 26.775699615478516,
        60.696331024169922, 65.321685791015625, 98.607177734375, 0.55387037992477417, 2,
        48.102046966552734, 52.932708740234375, 68.140396118164062, 84.399063110351562,
        0.38607397675514221, 0, 51.024299621582031, 24.353000640869141, 90.344688415527344,
        45.690242767333984, 0.36573168635368347, 2, },
    nms_agnostic_1 = { shape = {7, 6}, 31.366954803466797, 69.486038208007812, 53.639308929443359,
        98.025588989257812, 0.8229525089263916, 1, 19.717733383178711, 24.942668914794922,
        53.991531372070312, 45.683345794677734, 0.81879335641860962, 2, 43.562705993652344,
        69.140724182128906, 68.987342834472656, 95.519584655761719, 0.67381030321121216, 2,
        50.069068908691406, 20.53223991394043, 89.767967224121094, 55.008201599121094,
        0.6577000617980957, 0, 65.874984741210938, 56.002410888671875, 103.708251953125,
        86.677398681640625, 0.56321555376052856, 0, 62.510704040527344, 28.527595520019531,
        100.44738006591797, 50.917755126953125, 0.45235848426818848, 0, 59.565437316894531,
        35.974094390869141, 85.140235900878906, 68.659255981445312, 0.31594064831733704, 1, },
    nms_agnostic_2 = { shape = {6, 6}, 67.288711547851562, 51.518611907958984, 90.289962768554688,
        70.339302062988281, 0.85519963502883911, 1, 39.740337371826172, 58.926795959472656,
        71.151535034179688, 88.791923522949219, 0.84925693273544312, 1, 23.273984909057617,
        33.08746337890625, 47.767127990722656, 52.976531982421875, 0.77781790494918823, 0,
        64.559173583984375, 32.894817352294922, 97.514373779296875, 66.297836303710938,
        0.7378656268119812, 2, 26.775699615478516, 60.696331024169922, 65.321685791015625,
        98.607177734375, 0.55387037992477417, 2, 51.024299621582031, 24.353000640869141,
        90.344688415527344, 45.690242767333984, 0.36573168635368347, 2, },
    nms_multi_1 = { shape = {14, 6}, 31.366954803466797, 69.486038208007812, 53.639308929443359,
        98.025588989257812, 0.8229525089263916, 1, 19.717733383178711, 24.942668914794922,
        53.991531372070312, 45.683345794677734, 0.81879335641860962, 2, 43.562705993652344,
        69.140724182128906, 68.987342834472656, 95.519584655761719, 0.67381030321121216, 2,
        50.069068908691406, 20.53223991394043, 89.767967224121094, 55.008201599121094,
        0.6577000617980957, 0, 45, 66, 75, 104, 0.6414763331413269, 0, 50.069068908691406,
        20.53223991394043, 89.767967224121094, 55.008201599121094, 0.5755152702331543, 2,
        65.874984741210938, 56.002410888671875, 103.708251953125, 86.677398681640625,
        0.56321555376052856, 0, 31.366954803466797, 69.486038208007812, 53.639308929443359,
        98.025588989257812, 0.51192682981491089, 0, 62.510704040527344, 28.527595520019531,
        100.44738006591797, 50.917755126953125, 0.45235848426818848, 0, 65.874984741210938,
        56.002410888671875, 103.708251953125, 86.677398681640625, 0.43453386425971985, 2,
        19.717733383178711, 24.942668914794922, 53.991531372070312, 45.683345794677734,
        0.35761731863021851, 1, 43.562705993652344, 69.140724182128906, 68.987342834472656,
        95.519584655761719, 0.33904263377189636, 1, 59.565437316894531, 35.974094390869141,
        85.140235900878906, 68.659255981445312, 0.31594064831733704, 1, 59.565437316894531,
        35.974094390869141, 85.140235900878906, 68.659255981445312, 0.29396837949752808, 2, },
    nms_multi_2 = { shape = {11, 6}, 67.288711547851562, 51.518611907958984, 90.289962768554688,
        70.339302062988281, 0.85519963502883911, 1, 39.740337371826172, 58.926795959472656,
        71.151535034179688, 88.791923522949219, 0.84925693273544312, 1, 23.273984909057617,
        33.08746337890625, 47.767127990722656, 52.976531982421875, 0.77781790494918823, 0,
        64.559173583984375, 32.894817352294922, 97.514373779296875, 66.297836303710938,
        0.7378656268119812, 2, 64.559173583984375, 32.894817352294922, 97.514373779296875,
        66.297836303710938, 0.55898427963256836, 0, 26.775699615478516, 60.696331024169922,
        65.321685791015625, 98.607177734375, 0.55387037992477417, 2, 39.740337371826172,
        58.926795959472656, 71.151535034179688, 88.791923522949219, 0.45303884148597717, 2,
        67.288711547851562, 51.518611907958984, 90.289962768554688, 70.339302062988281,
        0.39691096544265747, 2, 48.102046966552734, 52.932708740234375, 68.140396118164062,
        84.399063110351562, 0.38607397675514221, 0, 51.024299621582031, 24.353000640869141,
        90.344688415527344, 45.690242767333984, 0.36573168635368347, 2, 23.273984909057617,
        33.08746337890625, 47.767127990722656, 52.976531982421875, 0.28669178485870361, 1, },
    nms_maxdet_1 = { shape = {3, 6}, 31.366954803466797, 69.486038208007812, 53.639308929443359,
        98.025588989257812, 0.8229525089263916, 1, 19.717733383178711, 24.942668914794922,
        53.991531372070312, 45.683345794677734, 0.81879335641860962, 2, 43.562705993652344,
        69.140724182128906, 68.987342834472656, 95.519584655761719, 0.67381030321121216, 2, },
    nms_maxdet_2 = { shape = {3, 6}, 67.288711547851562, 51.518611907958984, 90.289962768554688,
        70.339302062988281, 0.85519963502883911, 1, 39.740337371826172, 58.926795959472656,
        71.151535034179688, 88.791923522949219, 0.84925693273544312, 1, 23.273984909057617,
        33.08746337890625, 47.767127990722656, 52.976531982421875, 0.77781790494918823, 0, },
    nms_conf4_1 = { shape = {6, 6}, 31.366954803466797, 69.486038208007812, 53.639308929443359,
        98.025588989257812, 0.8229525089263916, 1, 19.717733383178711, 24.942668914794922,
        53.991531372070312, 45.683345794677734, 0.81879335641860962, 2, 43.562705993652344,
        69.140724182128906, 68.987342834472656, 95.519584655761719, 0.67381030321121216, 2,
        50.069068908691406, 20.53223991394043, 89.767967224121094, 55.008201599121094,
        0.6577000617980957, 0, 65.874984741210938, 56.002410888671875, 103.708251953125,
        86.677398681640625, 0.56321555376052856, 0, 62.510704040527344, 28.527595520019531,
        100.44738006591797, 50.917755126953125, 0.45235848426818848, 0, },
    nms_conf4_2 = { shape = {5, 6}, 67.288711547851562, 51.518611907958984, 90.289962768554688,
        70.339302062988281, 0.85519963502883911, 1, 39.740337371826172, 58.926795959472656,
        71.151535034179688, 88.791923522949219, 0.84925693273544312, 1, 23.273984909057617,
        33.08746337890625, 47.767127990722656, 52.976531982421875, 0.77781790494918823, 0,
        64.559173583984375, 32.894817352294922, 97.514373779296875, 66.297836303710938,
        0.7378656268119812, 2, 26.775699615478516, 60.696331024169922, 65.321685791015625,
        98.607177734375, 0.55387037992477417, 2, },
    bb_iou = { shape = {12}, 0.0013896706514060497, 0, 0.32000324130058289, 0,
        0.019640484824776649, 0, 0, 0, 0.26662260293960571, 0, 0.1544024646282196,
        0.0018482744926586747, },
    bbg_iou = { shape = {12, 4}, -0.00013328464410733432, 0.0046723713167011738,
        -4.3043255573138595e-05, -0.0023175547830760479, 0, 0, 0, 0, 0.019390832632780075,
        -0.025179509073495865, -0.0042504980228841305, -0.0014543775469064713, 0, 0, 0, 0,
        -0.001706128241494298, -0.0071208248846232891, -0.00047112110769376159,
        -0.0032615577802062035, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -0.0089417966082692146,
        -0.028757315129041672, -0.00088220951147377491, -0.0082981763407588005, 0, 0, 0, 0,
        -0.0064998413436114788, -0.016743648797273636, -0.0002222179900854826,
        -0.0055853025987744331, -0.0010901074856519699, 0.0015449064085260034,
        -0.00050079252105206251, -0.00072979304241016507, },
    bb_giou = { shape = {12}, -0.39934217929840088, -0.39103811979293823, 0.25053337216377258,
        -0.49788177013397217, -0.31000310182571411, -0.23923578858375549, -0.4305959939956665,
        -0.5300719141960144, 0.25440168380737305, -0.424582839012146, 0.047453485429286957,
        -0.46239659190177917, },
    bbg_giou = { shape = {12, 4}, -0.011465029790997505, 0.010304166004061699,
        -0.0044740429148077965, -0.0047397250309586525, 0.011558773927390575,
        0.0097708432003855705, -0.0035627870820462704, -0.0066368314437568188,
        0.022165648639202118, -0.050335075706243515, -0.0050267660990357399,
        -0.0035067256540060043, -0.0097624175250530243, -0.0078641204163432121,
        -0.0014344472438097, -0.0065045100636780262, -0.018722126260399818, -0.012320971116423607,
        -0.0038776714354753494, -0.0061802566051483154, 0.018125308677554131,
        0.017421958968043327, -0.011542781256139278, -0.0023238155990839005, 0.018751785159111023,
        0.0087684085592627525, -0.0050974730402231216, -0.006910854484885931,
        -0.008500552736222744, 0.0099451430141925812, -0.0028406279161572456,
        -0.0065764151513576508, -0.026944542303681374, -0.029528159648180008,
        0.0017971321940422058, -0.0080131534487009048, 0.0091347265988588333,
        -0.0073700621724128723, -0.0024426286108791828, -0.0043869391083717346,
        -0.025008102878928185, -0.019796201959252357, -0.003451760858297348,
        -0.007223072461783886, -0.011972734704613686, 0.012894725427031517,
        -0.0073064295575022697, -0.0065945209935307503, },
    bb_diou = { shape = {12}, -0.2156604528427124, -0.22793464362621307, 0.23590490221977234,
        -0.27245065569877625, -0.18413279950618744, -0.15236371755599976, -0.33220106363296509,
        -0.25277823209762573, 0.19599229097366333, -0.2309117466211319, 0.036384932696819305,
        -0.23237928748130798, },
    bbg_diou = { shape = {12, 4}, -0.0026003653183579445, 0.0097839748486876488,
        -0.0015017942059785128, -0.004292723722755909, 0.0006302250549197197,
        0.0066404282115399837, -0.0018030968494713306, -0.0021330390591174364,
        0.026276016607880592, -0.025523751974105835, -0.0055463318713009357,
        -0.0019510257989168167, -0.001362101174890995, -0.006292788777500391,
        -0.0020846223924309015, -0.0025878234300762415, -0.0034083437640219927,
        -0.013383984565734863, -0.0017330681439489126, -0.0055778408423066139,
        0.0084208240732550621, 0.0013071272987872362, -0.0017432448221370578,
        -0.0018136223079636693, -0.0012083324836567044, 0.0074533009901642799,
        -0.0019629048183560371, -0.0041977935470640659, -0.0036552976816892624,
        0.0060312366113066673, -0.0026421765796840191, -0.0022583850659430027,
        -0.0078150909394025803, -0.03610723465681076, -0.0017093035858124495,
        -0.009188690222799778, 0.0018530264496803284, -0.0047404156066477299,
        -0.0014453553594648838, -0.0017914266791194677, -0.0068434905260801315,
        -0.023767959326505661, -0.0012057516723871231, -0.0070316167548298836,
        -0.0067070219665765762, 0.0069314334541559219, -0.0031576084438711405,
        -0.0032315980643033981, },
    bb_ciou = { shape = {12}, -0.21568472683429718, -0.22812078893184662, 0.23590490221977234,
        -0.27280142903327942, -0.18416392803192139, -0.15236900746822357, -0.33262151479721069,
        -0.25277823209762573, 0.1958855539560318, -0.23091417551040649, 0.036379605531692505,
        -0.23241105675697327, },
    bbg_ciou = { shape = {12, 4}, -0.0026003653183579445, 0.0097839748486876488,
        -0.0015089272055774927, -0.0042870920151472092, 0.0006302250549197197,
        0.0066404282115399837, -0.001829244545660913, -0.0021007896866649389,
        0.026276016607880592, -0.025523751974105835, -0.0055463318713009357,
        -0.0019510257989168167, -0.001362101174890995, -0.006292788777500391,
        -0.0020426441915333271, -0.0026571918278932571, -0.0034083437640219927,
        -0.013383984565734863, -0.0017229628283530474, -0.0055857482366263866,
        0.0084208240732550621, 0.0013071272987872362, -0.001746134483255446,
        -0.0018120747990906239, -0.0012083324836567044, 0.0074533009901642799,
        -0.0020439019426703453, -0.0041345832869410515, -0.0036552976816892624,
        0.0060312366113066673, -0.0026421768125146627, -0.002258384833112359,
        -0.0078150909394025803, -0.03610723465681076, -0.0016926832031458616,
        -0.0092168506234884262, 0.0018530264496803284, -0.0047404156066477299,
        -0.0014443809632211924, -0.0017925486899912357, -0.0068434905260801315,
        -0.023767959326505661, -0.001207900932058692, -0.0070296386256814003,
        -0.0067070219665765762, 0.0069314334541559219, -0.0031681887339800596,
        -0.003221400547772646, },
    bb_xyxy_ciou = { shape = {12}, -0.21568472683429718, -0.22812078893184662,
        0.23590481281280518, -0.27280142903327942, -0.18416394293308258, -0.15236900746822357,
        -0.33262151479721069, -0.25277823209762573, 0.1958855539560318, -0.23091417551040649,
        0.036379620432853699, -0.23241105675697327, },
    bbg_xyxy_ciou = { shape = {12, 4}, 0.00020874459005426615, 0.0091790799051523209,
        -0.002809109864756465, 0.00060489529278129339, 0.002144356956705451,
        0.0054210037924349308, -0.0015141319017857313, 0.0012194244191050529,
        0.018684336915612221, -0.010810844600200653, 0.0075916736386716366, -0.01471289899200201,
        0.0013615936040878296, -0.00048920238623395562, -0.0027236947789788246,
        -0.0058035864494740963, 1.879112096503377e-05, -0.001106244046241045,
        -0.0034271343611180782, -0.012277739122509956, 0.0059565468691289425,
        0.0024656383320689201, 0.0024642776697874069, -0.0011585111496970057,
        0.0014397356426343322, 0.0078612333163619041, -0.0026480681262910366,
        -0.00040793267544358969, 0.00081452785525470972, 0.0052740033715963364,
        -0.0044698254205286503, 0.00075723347254097462, -0.0022148624993860722,
        -0.008836766704916954, -0.0056002289056777954, -0.027270467951893806,
        0.0023708941880613565, -0.0005776591133326292, -0.00051786773838102818,
        -0.0041627567261457443, -0.0022138445638120174, -0.0048543405719101429,
        -0.0046296459622681141, -0.018913617357611656, -0.00018532210378907621,
        0.0066871172748506069, -0.0065216999500989914, 0.00024431623751297593, },
    ap_tp = { shape = {3}, 5, 4, 3, },
    ap_fp = { shape = {3}, 0, 2, 3, },
    ap_p = { shape = {3}, 1, 0.64634234598281337, 0.52134674586688901, },
    ap_r = { shape = {3}, 0.53840997434831084, 0.5714285714285714, 0.375, },
    ap_f1 = { shape = {3}, 0.69995642686389603, 0.60658121841807999, 0.43622633897332541, },
    ap_ap = { shape = {3, 2}, 0.71410714285714305, 0.60339999999999994, 0.50373333333333326,
        0.21623999999999999, 0.38123999999999997, 0.22466666666666665, },
    ap_uc = { shape = {3}, 0, 1, 2, },
    ap_i = { shape = {}, 175, },
    cap = { shape = {}, 0.63500000000000001, },
    cap_mpre = { shape = {7}, 1, 1, 0.75, 0.75, 0.55000000000000004, 0.55000000000000004, 0, },
    cap_mrec = { shape = {7}, 0, 0.10000000000000001, 0.29999999999999999, 0.29999999999999999,
        0.59999999999999998, 0.80000000000000004, 1, },
    smooth = { shape = {40}, 0.081230663061364811, 0.20395087253067351, 0.37769024408479807,
        0.57668949374484257, 0.74889889686922517, 0.83416075445096249, 0.80269064663770928,
        0.66548198748932119, 0.47046570916424002, 0.28576660833497236, 0.17590539474767686,
        0.17925975103535657, 0.29465790404128855, 0.48178795889479287, 0.67528000367005858,
        0.80754170032600414, 0.83237023302780278, 0.74109228098134505, 0.5655938589196281,
        0.36718161479011491, 0.21516665382334979, 0.1626521753829113, 0.22798299763907581,
        0.38833718479820722, 0.5876984058666892, 0.75642405066695773, 0.83557339720299895,
        0.79749730158877608, 0.65549683947848592, 0.45917685766619942, 0.27711757396028885,
        0.17291753403770904, 0.18297680969738814, 0.30378140654422303, 0.49313080332953996,
        0.68487980813987781, 0.81204497694147859, 0.83020385770706584, 0.79155472811705785,
        0.71523134705806468, },
    cm = { shape = {4, 4}, 1, 2, 0, 3, 1, 0, 1, 2, 0, 1, 0, 4, 1, 1, 2, 0, },
}

-- the fixed predictions: batch 2, 12 boxes, (cx, cy, w, h, obj, 3 class scores); b, i 0-based
local function predictions()
    local P = {}
    for b = 0, 1 do
        local rows = {}
        for i = 0, 11 do
            local row = { 60 + 25 * math.sin(1.7 * i + b), 60 + 25 * math.cos(1.1 * i + 2 * b),
                30 + 10 * math.sin(0.9 * i + 0.3 * b), 28 + 10 * math.cos(1.3 * i + b),
                0.5 + 0.45 * math.sin(2.3 * i + 0.7 * b + 0.4) }
            for c = 0, 2 do row[#row + 1] = 0.5 + 0.45 * math.cos(0.8 * i + 2.1 * c + 1.3 * b) end
            rows[#rows + 1] = row
        end
        P[#P + 1] = rows
    end
    return tide.tensor(P)
end

describe("yolov5 box utilities and metrics (ported_scripts162)", function()
    local pred = predictions()

    it("converts, clips and rescales boxes as utils/general.py", function()
        local xyxy = xywh2xyxy(pred[{ 1, {}, { 1, 4 } }])
        close(xyxy, E.xyxy, "E.xyxy")
        close(xyxy2xywh(xyxy + 0.25), E.xywh, "E.xywh")
        close(xywhn2xyxy(pred[{ 2, {}, { 1, 4 } }] / 160, 320, 240, 4, 8), E.xywhn, "E.xywhn")
        local cb = xywh2xyxy(pred[{ 2, {}, { 1, 4 } }])
        clip_boxes(cb, { 70, 90 })
        close(cb, E.clip, "E.clip")
        close(scale_boxes({ 160, 160 }, xywh2xyxy(pred[{ 1, {}, { 1, 4 } }]), { 100, 140 }),
            E.scale)
        close(scale_boxes({ 160, 160 }, xywh2xyxy(pred[{ 1, {}, { 1, 4 } }]), { 100, 140 },
            { { 0.5, 0.5 }, { 3, 7 } }), E.scale_rp)
        close(box_iou(xyxy[{ { 1, 5 } }], xywh2xyxy(pred[{ 2, { 1, 7 }, { 1, 4 } }])), E.box_iou,
            "E.box_iou")
    end)

    it("keeps PyTorch's boxes in non_max_suppression for each option", function()
        local opts = { default = {}, iou03 = { iou_thres = 0.3 }, classes = { classes = { 0, 2 } },
            agnostic = { agnostic = true }, multi = { multi_label = true },
            maxdet = { max_det = 3 },
            conf4 = { conf_thres = 0.4, multi_label = true, agnostic = true } }
        for k, o in pairs(opts) do
            local out = non_max_suppression(pred:clone(), o)
            assert.are.equal(2, #out)
            close(out[1], E["nms_" .. k .. "_1"], k .. " 1")
            close(out[2], E["nms_" .. k .. "_2"], k .. " 2")
        end
    end)

    it("gives bbox_iou's four variants and their gradients", function()
        local b2 = pred[{ 2, {}, { 1, 4 } }]
        local variants = { iou = {}, giou = { GIoU = true }, diou = { DIoU = true },
            ciou = { CIoU = true } }
        for k, o in pairs(variants) do
            local b1 = pred[{ 1, {}, { 1, 4 } }]:clone():requires_grad_()
            local v = bbox_iou(b1, b2, o)
            -- (1 - v).sum().backward()
            ;(1 - v):sum():backward()
            close(v[{ {}, 1 }], E["bb_" .. k], k)
            close(b1.grad, E["bbg_" .. k], k .. " grad")
        end
        local x1 = xywh2xyxy(pred[{ 1, {}, { 1, 4 } }]):requires_grad_()
        local v = bbox_iou(x1, xywh2xyxy(b2), { xywh = false, CIoU = true })
        ;(1 - v):sum():backward()
        close(v[{ {}, 1 }], E.bb_xyxy_ciou, "E.bb_xyxy_ciou")
        close(x1.grad, E.bbg_xyxy_ciou, "E.bbg_xyxy_ciou")
    end)

    it("computes compute_ap, smooth and ap_per_class's p / r / ap / f1 as NumPy", function()
        local ap, mpre, mrec = compute_ap(tide.tensor({ 0.1, 0.3, 0.3, 0.6, 0.8 }, F64),
            tide.tensor({ 1.0, 0.6, 0.75, 0.5, 0.55 }, F64))
        assert.is_true(math.abs(ap - E.cap[1]) < 1e-12)
        close(mpre, E.cap_mpre, 1e-12, "E.cap_mpre")
        close(mrec, E.cap_mrec, 1e-12, "E.cap_mrec")
        local ys = {}
        for k = 0, 39 do ys[k + 1] = math.sin(0.3 * k) ^ 2 end
        close(smooth(tide.tensor(ys, F64), 0.1), E.smooth, 1e-12, "E.smooth")
        -- the fixed data (i 0-based in the formulas)
        local tp, conf, pred_cls = {}, {}, {}
        for i = 0, 19 do
            tp[i + 1] = { (i * 7) % 5 < 3 and 1 or 0, (i * 7) % 5 < 2 and 1 or 0 }
            conf[i + 1] = 0.5 + 0.45 * math.sin(1.9 * i + 0.3)
            pred_cls[i + 1] = i % 3
        end
        -- target_cls = [float((k * 5) % 3) for k in range(22)] + [0.0, 2.0]
        local tcls = {}
        for k = 0, 21 do tcls[k + 1] = (k * 5) % 3 end
        tcls[23], tcls[24] = 0, 2
        local target_cls = tide.tensor(tcls, F64)
        local tpo, fpo, p, r, f1, apc, uc, im = ap_per_class(tide.tensor(tp, F64),
            tide.tensor(conf, F64), tide.tensor(pred_cls, F64), target_cls)
        -- NumPy's 0-based argmax + 1
        assert.are.equal(E.ap_i[1] + 1, im)
        close(p, E.ap_p, 1e-9, "E.ap_p")
        close(r, E.ap_r, 1e-9, "E.ap_r")
        close(f1, E.ap_f1, 1e-9, "E.ap_f1")
        close(apc, E.ap_ap, 1e-9, "E.ap_ap")
        close(tpo, E.ap_tp, 0, "E.ap_tp")
        close(fpo, E.ap_fp, 0, "E.ap_fp")
        close(uc, E.ap_uc, 0, "E.ap_uc")
    end)

    it("fills ConfusionMatrix.process_batch's matrix as PyTorch / NumPy", function()
        local cm = ConfusionMatrix.new(3)
        for b = 1, 2 do
            local det = non_max_suppression(pred:clone(), { conf_thres = 0.1 })[b]
            local cls = {}
            -- labels = cat(((b + k) % 3 for k in range(5)), xywh2xyxy(pred[b, ::2, :4][:5] + 3))
            for k = 0, 4 do cls[k + 1] = { (b - 1 + k) % 3 } end
            local labels = tide.cat({ tide.tensor(cls),
                xywh2xyxy(pred[{ b, { 1, -1, 2 }, { 1, 4 } }][{ { 1, 5 } }] + 3.0) }, 2)
            cm:process_batch(det, labels)
        end
        close(cm.matrix, E.cm, 0, "E.cm")
    end)
end)
