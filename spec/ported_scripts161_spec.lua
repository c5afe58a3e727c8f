-- ported_scripts161_spec.lua — open-mmlab/mmdetection's pure-PyTorch losses and anchors:
-- mmdet/models/losses/utils.py (reduce_loss, weight_reduce_loss with avg_factor and its eps,
-- weighted_loss), focal_loss.py (py_sigmoid_focal_loss, py_focal_loss_with_prob with the
-- one_hot of the target), smooth_l1_loss.py (smooth_l1_loss, l1_loss), iou_loss.py (iou_loss
-- with linear / square / log modes, giou_loss, diou_loss, ciou_loss with the arctan term),
-- mmdet/structures/bbox/bbox_overlaps.py (bbox_overlaps, 'iou' / 'iof' / 'giou', aligned and
-- not; fp16_clamp with its CPU-fp16 branch off) and
-- mmdet/models/task_modules/prior_generators/anchor_generator.py (AnchorGenerator:
-- gen_base_anchors, gen_single_level_base_anchors, _meshgrid, single_level_grid_priors,
-- grid_priors, valid_flags, single_level_valid_flags), ported line for line on fixed boxes and
-- logits and checked against PyTorch 1.13's values of the same code.
-- The decorators become plain wrappers: @weighted_loss is the Lua function weighted_loss(f),
-- @mmcv.jit is dropped, @LOSSES/@TASK_UTILS.register_module() registries are not ported (the
-- loss modules only call these functions). Keyword arguments come in an options table.
-- The Python line stands above each Lua line that differs from it. Dims and class labels are
-- 1-based: mmdet's background label num_classes is num_classes + 1 here.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list
local unpack = table.unpack or unpack -- luacheck: ignore

---------------------------------------------------------------------------------------------
-- 1. mmdet/models/losses/utils.py
---------------------------------------------------------------------------------------------
-- def reduce_loss(loss, reduction):
local function reduce_loss(loss, reduction)
    -- reduction_enum = F._Reduction.get_enum(reduction)
    -- GAP: tide has no F._Reduction; the names themselves pick the branch
    if reduction == "none" then
        return loss
    elseif reduction == "mean" then
        return loss:mean()
    elseif reduction == "sum" then
        return loss:sum()
    end
    -- (get_enum's ValueError)
    error(("%s is not a valid value for reduction"):format(tostring(reduction)))
end

-- def weight_reduce_loss(loss, weight=None, reduction='mean', avg_factor=None):
local function weight_reduce_loss(loss, weight, reduction, avg_factor)
    reduction = reduction or "mean"
    -- if weight is not None:
    if weight ~= nil then
        loss = loss * weight
    end
    -- if avg_factor is None:
    if avg_factor == nil then
        loss = reduce_loss(loss, reduction)
    else
        if reduction == "mean" then
            -- eps = torch.finfo(torch.float32).eps
            local eps = tide.finfo("float32").eps
            -- loss = loss.sum() / (avg_factor + eps)
            loss = loss:sum() / (avg_factor + eps)
        elseif reduction ~= "none" then
            -- raise ValueError('avg_factor can not be used with reduction="sum"')
            error('avg_factor can not be used with reduction="sum"')
        end
    end
    return loss
end

-- def weighted_loss(loss_func): ... def wrapper(pred, target, weight=None, reduction='mean',
--                                               avg_factor=None, **kwargs):
-- (the decorator as a plain wrapper; kwargs, weight, reduction and avg_factor in one table)
local function weighted_loss(loss_func)
    return function(pred, target, weight, opts)
        opts = opts or {}
        -- loss = loss_func(pred, target, **kwargs)
        local loss = loss_func(pred, target, opts)
        -- loss = weight_reduce_loss(loss, weight, reduction, avg_factor)
        loss = weight_reduce_loss(loss, weight, opts.reduction, opts.avg_factor)
        return loss
    end
end

---------------------------------------------------------------------------------------------
-- 2. mmdet/models/losses/focal_loss.py
---------------------------------------------------------------------------------------------
-- the weight reshape both py_* functions share, inline in focal_loss.py
local function focal_weight_shape(weight, loss)
    -- if weight is not None:
    if weight ~= nil then
        -- if weight.shape != loss.shape:
        if not weight:is_same_size(loss) then
            if weight:size(1) == loss:size(1) then
                weight = weight:view(-1, 1)
            else
                assert(weight:numel() == loss:numel())
                weight = weight:view(loss:size(1), -1)
            end
        end
        assert(weight.ndim == loss.ndim)
    end
    return weight
end

-- def py_sigmoid_focal_loss(pred, target, weight=None, gamma=2.0, alpha=0.25,
--                           reduction='mean', avg_factor=None):
local function py_sigmoid_focal_loss(pred, target, weight, opts)
    opts = opts or {}
    local gamma, alpha = opts.gamma or 2.0, opts.alpha or 0.25
    local pred_sigmoid = pred:sigmoid()
    target = target:type_as(pred)
    local pt = (1 - pred_sigmoid) * target + pred_sigmoid * (1 - target)
    local focal_weight = (alpha * target + (1 - alpha) * (1 - target)) * pt:pow(gamma)
    -- loss = F.binary_cross_entropy_with_logits(pred, target, reduction='none') * focal_weight
    local loss = F.binary_cross_entropy_with_logits(pred, target, { reduction = "none" })
        * focal_weight
    weight = focal_weight_shape(weight, loss)
    loss = weight_reduce_loss(loss, weight, opts.reduction, opts.avg_factor)
    return loss
end

-- def py_focal_loss_with_prob(pred, target, weight=None, gamma=2.0, alpha=0.25,
--                             reduction='mean', avg_factor=None):
local function py_focal_loss_with_prob(pred, target, weight, opts)
    opts = opts or {}
    local gamma, alpha = opts.gamma or 2.0, opts.alpha or 0.25
    -- if pred.dim() != target.dim():
    if pred:dim() ~= target:dim() then
        local num_classes = pred:size(2)
        -- target = F.one_hot(target, num_classes=num_classes + 1)
        target = F.one_hot(target, { num_classes = num_classes + 1 })
        -- target = target[:, :num_classes]
        target = target[{ {}, { 1, num_classes } }]
    end
    target = target:type_as(pred)
    local pt = (1 - pred) * target + pred * (1 - target)
    local focal_weight = (alpha * target + (1 - alpha) * (1 - target)) * pt:pow(gamma)
    -- loss = F.binary_cross_entropy(pred, target, reduction='none') * focal_weight
    local loss = F.binary_cross_entropy(pred, target, { reduction = "none" }) * focal_weight
    weight = focal_weight_shape(weight, loss)
    loss = weight_reduce_loss(loss, weight, opts.reduction, opts.avg_factor)
    return loss
end

---------------------------------------------------------------------------------------------
-- 3. mmdet/models/losses/smooth_l1_loss.py
---------------------------------------------------------------------------------------------
-- @weighted_loss
-- def smooth_l1_loss(pred, target, beta=1.0):
local smooth_l1_loss = weighted_loss(function(pred, target, opts)
    local beta = opts.beta or 1.0
    assert(beta > 0)
    if target:numel() == 0 then
        return pred:sum() * 0
    end
    -- assert pred.size() == target.size()
    assert(pred:is_same_size(target))
    local diff = tide.abs(pred - target)
    -- loss = torch.where(diff < beta, 0.5 * diff * diff / beta, diff - 0.5 * beta)
    local loss = tide.where(diff:lt(beta), 0.5 * diff * diff / beta, diff - 0.5 * beta)
    return loss
end)

-- @weighted_loss
-- def l1_loss(pred, target):
local l1_loss = weighted_loss(function(pred, target)
    if target:numel() == 0 then
        return pred:sum() * 0
    end
    assert(pred:is_same_size(target))
    local loss = tide.abs(pred - target)
    return loss
end)

---------------------------------------------------------------------------------------------
-- 4. mmdet/structures/bbox/bbox_overlaps.py
---------------------------------------------------------------------------------------------
-- def fp16_clamp(x, min=None, max=None):
local function fp16_clamp(x, min, max)
    -- if not x.is_cuda and x.dtype == torch.float16:
    if not x.is_cuda and x.dtype == "float16" then
        -- return x.float().clamp(min, max).half()
        return x:float():clamp(min, max):half()
    end
    return x:clamp(min, max)
end

-- def bbox_overlaps(bboxes1, bboxes2, mode='iou', is_aligned=False, eps=1e-6):
local function bbox_overlaps(bboxes1, bboxes2, opts)
    opts = opts or {}
    local mode, is_aligned, eps = opts.mode or "iou", opts.is_aligned or false, opts.eps or 1e-6
    -- assert mode in ['iou', 'iof', 'giou'], f'Unsupported mode {mode}'
    assert(mode == "iou" or mode == "iof" or mode == "giou", "Unsupported mode " .. mode)
    assert(bboxes1:size(-1) == 4 or bboxes1:size(1) == 0)
    assert(bboxes2:size(-1) == 4 or bboxes2:size(1) == 0)
    -- assert bboxes1.shape[:-2] == bboxes2.shape[:-2]; batch_shape = bboxes1.shape[:-2]
    local batch_shape = {}
    for d = 1, bboxes1:dim() - 2 do
        assert(bboxes1:size(d) == bboxes2:size(d))
        batch_shape[d] = bboxes1:size(d)
    end
    local rows = bboxes1:size(-2)
    local cols = bboxes2:size(-2)
    if is_aligned then
        assert(rows == cols)
    end
    if rows * cols == 0 then
        -- return bboxes1.new(batch_shape + (rows, )) / (rows, cols)
        batch_shape[#batch_shape + 1] = rows
        if not is_aligned then batch_shape[#batch_shape + 1] = cols end
        return bboxes1:new(unpack(batch_shape))
    end

    -- area1 = (bboxes1[..., 2] - bboxes1[..., 0]) * (bboxes1[..., 3] - bboxes1[..., 1])
    local area1 = (bboxes1[{ "...", 3 }] - bboxes1[{ "...", 1 }])
        * (bboxes1[{ "...", 4 }] - bboxes1[{ "...", 2 }])
    local area2 = (bboxes2[{ "...", 3 }] - bboxes2[{ "...", 1 }])
        * (bboxes2[{ "...", 4 }] - bboxes2[{ "...", 2 }])

    local lt, rb, wh, overlap, union, enclosed_lt, enclosed_rb
    if is_aligned then
        -- lt = torch.max(bboxes1[..., :2], bboxes2[..., :2])  # [B, rows, 2]
        lt = tide.max(bboxes1[{ "...", { 1, 2 } }], bboxes2[{ "...", { 1, 2 } }])
        -- rb = torch.min(bboxes1[..., 2:], bboxes2[..., 2:])  # [B, rows, 2]
        rb = tide.min(bboxes1[{ "...", { 3, 4 } }], bboxes2[{ "...", { 3, 4 } }])

        wh = fp16_clamp(rb - lt, 0)
        -- overlap = wh[..., 0] * wh[..., 1]
        overlap = wh[{ "...", 1 }] * wh[{ "...", 2 }]

        -- if mode in ['iou', 'giou']:
        if mode == "iou" or mode == "giou" then
            union = area1 + area2 - overlap
        else
            union = area1
        end
        if mode == "giou" then
            -- enclosed_lt = torch.min(bboxes1[..., :2], bboxes2[..., :2])
            enclosed_lt = tide.min(bboxes1[{ "...", { 1, 2 } }], bboxes2[{ "...", { 1, 2 } }])
            -- enclosed_rb = torch.max(bboxes1[..., 2:], bboxes2[..., 2:])
            enclosed_rb = tide.max(bboxes1[{ "...", { 3, 4 } }], bboxes2[{ "...", { 3, 4 } }])
        end
    else
        -- lt = torch.max(bboxes1[..., :, None, :2],
        --                bboxes2[..., None, :, :2])  # [B, rows, cols, 2]
        lt = tide.max(bboxes1[{ "...", {}, "newaxis", { 1, 2 } }],
            bboxes2[{ "...", "newaxis", {}, { 1, 2 } }])
        -- rb = torch.min(bboxes1[..., :, None, 2:],
        --                bboxes2[..., None, :, 2:])  # [B, rows, cols, 2]
        rb = tide.min(bboxes1[{ "...", {}, "newaxis", { 3, 4 } }],
            bboxes2[{ "...", "newaxis", {}, { 3, 4 } }])

        wh = fp16_clamp(rb - lt, 0)
        overlap = wh[{ "...", 1 }] * wh[{ "...", 2 }]

        if mode == "iou" or mode == "giou" then
            -- union = area1[..., None] + area2[..., None, :] - overlap
            union = area1[{ "...", "newaxis" }] + area2[{ "...", "newaxis", {} }] - overlap
        else
            union = area1[{ "...", "newaxis" }]
        end
        if mode == "giou" then
            -- enclosed_lt = torch.min(bboxes1[..., :, None, :2], bboxes2[..., None, :, :2])
            enclosed_lt = tide.min(bboxes1[{ "...", {}, "newaxis", { 1, 2 } }],
                bboxes2[{ "...", "newaxis", {}, { 1, 2 } }])
            -- enclosed_rb = torch.max(bboxes1[..., :, None, 2:], bboxes2[..., None, :, 2:])
            enclosed_rb = tide.max(bboxes1[{ "...", {}, "newaxis", { 3, 4 } }],
                bboxes2[{ "...", "newaxis", {}, { 3, 4 } }])
        end
    end

    -- eps = union.new_tensor([eps])
    local eps_t = union:new_tensor({ eps })
    union = tide.max(union, eps_t)
    local ious = overlap / union
    if mode == "iou" or mode == "iof" then
        return ious
    end
    -- calculate gious
    local enclose_wh = fp16_clamp(enclosed_rb - enclosed_lt, 0)
    -- enclose_area = enclose_wh[..., 0] * enclose_wh[..., 1]
    local enclose_area = enclose_wh[{ "...", 1 }] * enclose_wh[{ "...", 2 }]
    enclose_area = tide.max(enclose_area, eps_t)
    local gious = ious - (enclose_area - union) / enclose_area
    return gious
end

---------------------------------------------------------------------------------------------
-- 5. mmdet/models/losses/iou_loss.py
---------------------------------------------------------------------------------------------
-- @weighted_loss
-- def iou_loss(pred, target, linear=False, mode='log', eps=1e-6):
local iou_loss = weighted_loss(function(pred, target, opts)
    local mode, eps = opts.mode or "log", opts.eps or 1e-6
    -- assert mode in ['linear', 'square', 'log']
    assert(mode == "linear" or mode == "square" or mode == "log")
    if opts.linear then
        mode = "linear"
        -- warnings.warn('DeprecationWarning: Setting "linear=True" in iou_loss is deprecated...')
        io.stderr:write('DeprecationWarning: Setting "linear=True" in iou_loss is deprecated, '
            .. 'please use "mode=`linear`" instead.\n')
    end
    -- ious = bbox_overlaps(pred, target, is_aligned=True).clamp(min=eps)
    local ious = bbox_overlaps(pred, target, { is_aligned = true }):clamp({ min = eps })
    local loss
    if mode == "linear" then
        loss = 1 - ious
    elseif mode == "square" then
        -- loss = 1 - ious**2
        loss = 1 - ious ^ 2
    elseif mode == "log" then
        loss = -ious:log()
    else
        error("NotImplementedError")
    end
    return loss
end)

-- @weighted_loss
-- def giou_loss(pred, target, eps=1e-7):
local giou_loss = weighted_loss(function(pred, target, opts)
    local eps = opts.eps or 1e-7
    -- gious = bbox_overlaps(pred, target, mode='giou', is_aligned=True, eps=eps)
    local gious = bbox_overlaps(pred, target, { mode = "giou", is_aligned = true, eps = eps })
    local loss = 1 - gious
    return loss
end)

-- @weighted_loss
-- def diou_loss(pred, target, eps=1e-7):
local diou_loss = weighted_loss(function(pred, target, opts)
    local eps = opts.eps or 1e-7
    -- overlap
    -- lt = torch.max(pred[:, :2], target[:, :2])
    local lt = tide.max(pred[{ {}, { 1, 2 } }], target[{ {}, { 1, 2 } }])
    -- rb = torch.min(pred[:, 2:], target[:, 2:])
    local rb = tide.min(pred[{ {}, { 3, 4 } }], target[{ {}, { 3, 4 } }])
    -- wh = (rb - lt).clamp(min=0)
    local wh = (rb - lt):clamp({ min = 0 })
    -- overlap = wh[:, 0] * wh[:, 1]
    local overlap = wh[{ {}, 1 }] * wh[{ {}, 2 }]

    -- union
    -- ap = (pred[:, 2] - pred[:, 0]) * (pred[:, 3] - pred[:, 1])
    local ap = (pred[{ {}, 3 }] - pred[{ {}, 1 }]) * (pred[{ {}, 4 }] - pred[{ {}, 2 }])
    -- ag = (target[:, 2] - target[:, 0]) * (target[:, 3] - target[:, 1])
    local ag = (target[{ {}, 3 }] - target[{ {}, 1 }]) * (target[{ {}, 4 }] - target[{ {}, 2 }])
    local union = ap + ag - overlap + eps

    -- IoU
    local ious = overlap / union

    -- enclose area
    -- enclose_x1y1 = torch.min(pred[:, :2], target[:, :2])
    local enclose_x1y1 = tide.min(pred[{ {}, { 1, 2 } }], target[{ {}, { 1, 2 } }])
    -- enclose_x2y2 = torch.max(pred[:, 2:], target[:, 2:])
    local enclose_x2y2 = tide.max(pred[{ {}, { 3, 4 } }], target[{ {}, { 3, 4 } }])
    -- enclose_wh = (enclose_x2y2 - enclose_x1y1).clamp(min=0)
    local enclose_wh = (enclose_x2y2 - enclose_x1y1):clamp({ min = 0 })

    -- cw = enclose_wh[:, 0]; ch = enclose_wh[:, 1]
    local cw = enclose_wh[{ {}, 1 }]
    local ch = enclose_wh[{ {}, 2 }]

    -- c2 = cw**2 + ch**2 + eps
    local c2 = cw ^ 2 + ch ^ 2 + eps

    -- b1_x1, b1_y1 = pred[:, 0], pred[:, 1] (and the rest)
    local b1_x1, b1_y1 = pred[{ {}, 1 }], pred[{ {}, 2 }]
    local b1_x2, b1_y2 = pred[{ {}, 3 }], pred[{ {}, 4 }]
    local b2_x1, b2_y1 = target[{ {}, 1 }], target[{ {}, 2 }]
    local b2_x2, b2_y2 = target[{ {}, 3 }], target[{ {}, 4 }]

    -- left = ((b2_x1 + b2_x2) - (b1_x1 + b1_x2))**2 / 4
    local left = ((b2_x1 + b2_x2) - (b1_x1 + b1_x2)) ^ 2 / 4
    -- right = ((b2_y1 + b2_y2) - (b1_y1 + b1_y2))**2 / 4
    local right = ((b2_y1 + b2_y2) - (b1_y1 + b1_y2)) ^ 2 / 4
    local rho2 = left + right

    -- DIoU
    local dious = ious - rho2 / c2
    local loss = 1 - dious
    return loss
end)

-- @weighted_loss
-- def ciou_loss(pred, target, eps=1e-7):
local ciou_loss = weighted_loss(function(pred, target, opts)
    local eps = opts.eps or 1e-7
    -- overlap
    local lt = tide.max(pred[{ {}, { 1, 2 } }], target[{ {}, { 1, 2 } }])
    local rb = tide.min(pred[{ {}, { 3, 4 } }], target[{ {}, { 3, 4 } }])
    local wh = (rb - lt):clamp({ min = 0 })
    local overlap = wh[{ {}, 1 }] * wh[{ {}, 2 }]

    -- union
    local ap = (pred[{ {}, 3 }] - pred[{ {}, 1 }]) * (pred[{ {}, 4 }] - pred[{ {}, 2 }])
    local ag = (target[{ {}, 3 }] - target[{ {}, 1 }]) * (target[{ {}, 4 }] - target[{ {}, 2 }])
    local union = ap + ag - overlap + eps

    -- IoU
    local ious = overlap / union

    -- enclose area
    local enclose_x1y1 = tide.min(pred[{ {}, { 1, 2 } }], target[{ {}, { 1, 2 } }])
    local enclose_x2y2 = tide.max(pred[{ {}, { 3, 4 } }], target[{ {}, { 3, 4 } }])
    local enclose_wh = (enclose_x2y2 - enclose_x1y1):clamp({ min = 0 })

    local cw = enclose_wh[{ {}, 1 }]
    local ch = enclose_wh[{ {}, 2 }]

    local c2 = cw ^ 2 + ch ^ 2 + eps

    local b1_x1, b1_y1 = pred[{ {}, 1 }], pred[{ {}, 2 }]
    local b1_x2, b1_y2 = pred[{ {}, 3 }], pred[{ {}, 4 }]
    local b2_x1, b2_y1 = target[{ {}, 1 }], target[{ {}, 2 }]
    local b2_x2, b2_y2 = target[{ {}, 3 }], target[{ {}, 4 }]

    local w1, h1 = b1_x2 - b1_x1, b1_y2 - b1_y1 + eps
    local w2, h2 = b2_x2 - b2_x1, b2_y2 - b2_y1 + eps

    local left = ((b2_x1 + b2_x2) - (b1_x1 + b1_x2)) ^ 2 / 4
    local right = ((b2_y1 + b2_y2) - (b1_y1 + b1_y2)) ^ 2 / 4
    local rho2 = left + right

    -- factor = 4 / math.pi**2
    local factor = 4 / math.pi ^ 2
    -- v = factor * torch.pow(torch.atan(w2 / h2) - torch.atan(w1 / h1), 2)
    local v = factor * tide.pow(tide.atan(w2 / h2) - tide.atan(w1 / h1), 2)

    -- with torch.no_grad():
    local alpha = tide.no_grad(function()
        -- alpha = (ious > 0.5).float() * v / (1 - ious + v)
        return ious:gt(0.5):float() * v / (1 - ious + v)
    end)

    -- CIoU
    local cious = ious - (rho2 / c2 + alpha * v)
    -- loss = 1 - cious.clamp(min=-1.0, max=1.0)
    local loss = 1 - cious:clamp({ min = -1.0, max = 1.0 })
    return loss
end)

---------------------------------------------------------------------------------------------
-- 6. mmdet/models/task_modules/prior_generators/anchor_generator.py
---------------------------------------------------------------------------------------------
-- from torch.nn.modules.utils import _pair
local function _pair(x)
    return type(x) == "table" and x or { x, x }
end

-- class AnchorGenerator:
local AnchorGenerator = ported.class("AnchorGenerator")

-- def __init__(self, strides, ratios, scales=None, base_sizes=None, scale_major=True,
--              octave_base_scale=None, scales_per_octave=None, centers=None,
--              center_offset=0., use_box_type=False):
function AnchorGenerator:__init__(strides, ratios, opts)
    opts = opts or {}
    local scales, base_sizes = opts.scales, opts.base_sizes
    local octave_base_scale, scales_per_octave = opts.octave_base_scale, opts.scales_per_octave
    local centers, center_offset = opts.centers, opts.center_offset or 0.
    local scale_major = opts.scale_major
    if scale_major == nil then scale_major = true end
    -- check center and center_offset
    if center_offset ~= 0 then
        assert(centers == nil, "center cannot be set when center_offset!=0")
    end
    if not (0 <= center_offset and center_offset <= 1) then
        error(("center_offset should be in range [0, 1], %s is given."):format(center_offset))
    end
    if centers ~= nil then
        assert(#centers == #strides, "The number of strides should be the same as centers")
    end

    -- calculate base sizes of anchors
    -- self.strides = [_pair(stride) for stride in strides]
    self.strides = {}
    for i, stride in ipairs(strides) do self.strides[i] = _pair(stride) end
    -- self.base_sizes = [min(stride) for stride in self.strides] if base_sizes is None else ...
    if base_sizes == nil then
        base_sizes = {}
        for i, stride in ipairs(self.strides) do base_sizes[i] = math.min(stride[1], stride[2]) end
    end
    self.base_sizes = base_sizes
    assert(#self.base_sizes == #self.strides,
        "The number of strides should be the same as base sizes")

    -- calculate scales of anchors
    -- assert ((octave_base_scale is not None and scales_per_octave is not None) ^ (scales ...
    assert((octave_base_scale ~= nil and scales_per_octave ~= nil) ~= (scales ~= nil),
        "scales and octave_base_scale with scales_per_octave cannot be set at the same time")
    if scales ~= nil then
        -- self.scales = torch.Tensor(scales)
        self.scales = tide.tensor(scales, { dtype = "float32" })
    elseif octave_base_scale ~= nil and scales_per_octave ~= nil then
        -- octave_scales = np.array([2**(i / scales_per_octave) for i in range(scales_per_octave)])
        local octave_scales = {}
        for i = 0, scales_per_octave - 1 do
            octave_scales[i + 1] = 2 ^ (i / scales_per_octave)
        end
        -- scales = octave_scales * octave_base_scale
        -- (numpy's float64 product, then torch.Tensor's float32)
        local s = tide.tensor(octave_scales, { dtype = "float64" }) * octave_base_scale
        self.scales = s:float()
    else
        error("Either scales or octave_base_scale with scales_per_octave should be set")
    end

    self.octave_base_scale = octave_base_scale
    self.scales_per_octave = scales_per_octave
    self.ratios = tide.tensor(ratios, { dtype = "float32" })
    self.scale_major = scale_major
    self.centers = centers
    self.center_offset = center_offset
    self.base_anchors = self:gen_base_anchors()
    self.use_box_type = opts.use_box_type or false
end

-- @property def num_base_priors(self): [base_anchors.size(0) for ...] (num_base_anchors alias)
function AnchorGenerator:num_base_priors()
    local out = {}
    for i, base_anchors in ipairs(self.base_anchors) do out[i] = base_anchors:size(1) end
    return out
end
AnchorGenerator.num_base_anchors = AnchorGenerator.num_base_priors

-- @property def num_levels(self): return len(self.strides)
function AnchorGenerator:num_levels()
    return #self.strides
end

-- def gen_base_anchors(self):
function AnchorGenerator:gen_base_anchors()
    local multi_level_base_anchors = {}
    -- for i, base_size in enumerate(self.base_sizes):
    for i, base_size in ipairs(self.base_sizes) do
        local center = nil
        if self.centers ~= nil then
            center = self.centers[i]
        end
        -- multi_level_base_anchors.append(self.gen_single_level_base_anchors(base_size,
        --     scales=self.scales, ratios=self.ratios, center=center))
        multi_level_base_anchors[#multi_level_base_anchors + 1] =
            self:gen_single_level_base_anchors(base_size, self.scales, self.ratios, center)
    end
    return multi_level_base_anchors
end

-- def gen_single_level_base_anchors(self, base_size, scales, ratios, center=None):
function AnchorGenerator:gen_single_level_base_anchors(base_size, scales, ratios, center)
    local w = base_size
    local h = base_size
    local x_center, y_center
    if center == nil then
        x_center = self.center_offset * w
        y_center = self.center_offset * h
    else
        -- x_center, y_center = center
        x_center, y_center = center[1], center[2]
    end

    local h_ratios = tide.sqrt(ratios)
    local w_ratios = 1 / h_ratios
    local ws, hs
    if self.scale_major then
        -- ws = (w * w_ratios[:, None] * scales[None, :]).view(-1)
        ws = (w * w_ratios[{ {}, "newaxis" }] * scales[{ "newaxis", {} }]):view(-1)
        -- hs = (h * h_ratios[:, None] * scales[None, :]).view(-1)
        hs = (h * h_ratios[{ {}, "newaxis" }] * scales[{ "newaxis", {} }]):view(-1)
    else
        -- ws = (w * scales[:, None] * w_ratios[None, :]).view(-1)
        ws = (w * scales[{ {}, "newaxis" }] * w_ratios[{ "newaxis", {} }]):view(-1)
        -- hs = (h * scales[:, None] * h_ratios[None, :]).view(-1)
        hs = (h * scales[{ {}, "newaxis" }] * h_ratios[{ "newaxis", {} }]):view(-1)
    end

    -- use float anchor and the anchor's center is aligned with the pixel center
    local base_anchors = {
        x_center - 0.5 * ws, y_center - 0.5 * hs, x_center + 0.5 * ws,
        y_center + 0.5 * hs,
    }
    -- base_anchors = torch.stack(base_anchors, dim=-1)
    base_anchors = tide.stack(base_anchors, -1)

    return base_anchors
end

-- def _meshgrid(self, x, y, row_major=True):
function AnchorGenerator:_meshgrid(x, y, row_major)
    if row_major == nil then row_major = true end
    -- xx = x.repeat(y.shape[0])
    local xx = x["repeat"](x, y.shape[1])
    -- yy = y.view(-1, 1).repeat(1, x.shape[0]).view(-1)
    local yy = y:view(-1, 1)
    yy = yy["repeat"](yy, 1, x.shape[1]):view(-1)
    if row_major then
        return xx, yy
    else
        return yy, xx
    end
end

-- def grid_priors(self, featmap_sizes, dtype=torch.float32, device='cuda'):
function AnchorGenerator:grid_priors(featmap_sizes, dtype, device)
    dtype, device = dtype or "float32", device or "cpu"
    assert(self:num_levels() == #featmap_sizes)
    local multi_level_anchors = {}
    -- for i in range(self.num_levels):
    for i = 1, self:num_levels() do
        -- anchors = self.single_level_grid_priors(featmap_sizes[i], level_idx=i, dtype=dtype,
        --                                         device=device)
        local anchors = self:single_level_grid_priors(featmap_sizes[i], i, dtype, device)
        multi_level_anchors[#multi_level_anchors + 1] = anchors
    end
    return multi_level_anchors
end

-- def single_level_grid_priors(self, featmap_size, level_idx, dtype=torch.float32,
--                              device='cuda'):
function AnchorGenerator:single_level_grid_priors(featmap_size, level_idx, dtype, device)
    dtype, device = dtype or "float32", device or "cpu"
    local base_anchors = self.base_anchors[level_idx]:to(device):to(dtype)
    -- feat_h, feat_w = featmap_size
    local feat_h, feat_w = featmap_size[1], featmap_size[2]
    -- stride_w, stride_h = self.strides[level_idx]
    local stride_w, stride_h = self.strides[level_idx][1], self.strides[level_idx][2]
    -- shift_x = torch.arange(0, feat_w, device=device).to(dtype) * stride_w
    local shift_x = tide.arange(0, feat_w, { device = device }):to(dtype) * stride_w
    -- shift_y = torch.arange(0, feat_h, device=device).to(dtype) * stride_h
    local shift_y = tide.arange(0, feat_h, { device = device }):to(dtype) * stride_h

    local shift_xx, shift_yy = self:_meshgrid(shift_x, shift_y)
    -- shifts = torch.stack([shift_xx, shift_yy, shift_xx, shift_yy], dim=-1)
    local shifts = tide.stack({ shift_xx, shift_yy, shift_xx, shift_yy }, -1)
    -- all_anchors = base_anchors[None, :, :] + shifts[:, None, :]
    local all_anchors = base_anchors[{ "newaxis", {}, {} }] + shifts[{ {}, "newaxis", {} }]
    all_anchors = all_anchors:view(-1, 4)
    -- if self.use_box_type: all_anchors = HorizontalBoxes(all_anchors)
    -- GAP: mmdet's HorizontalBoxes box type is not ported (use_box_type stays False)
    assert(not self.use_box_type, "HorizontalBoxes is not ported")
    return all_anchors
end

-- def valid_flags(self, featmap_sizes, pad_shape, device='cuda'):
function AnchorGenerator:valid_flags(featmap_sizes, pad_shape, device)
    device = device or "cpu"
    assert(self:num_levels() == #featmap_sizes)
    local multi_level_flags = {}
    for i = 1, self:num_levels() do
        local anchor_stride = self.strides[i]
        local feat_h, feat_w = featmap_sizes[i][1], featmap_sizes[i][2]
        -- h, w = pad_shape[:2]
        local h, w = pad_shape[1], pad_shape[2]
        -- valid_feat_h = min(int(np.ceil(h / anchor_stride[1])), feat_h)
        local valid_feat_h = math.min(math.ceil(h / anchor_stride[2]), feat_h)
        -- valid_feat_w = min(int(np.ceil(w / anchor_stride[0])), feat_w)
        local valid_feat_w = math.min(math.ceil(w / anchor_stride[1]), feat_w)
        -- flags = self.single_level_valid_flags((feat_h, feat_w), (valid_feat_h, valid_feat_w),
        --                                       self.num_base_anchors[i], device=device)
        local flags = self:single_level_valid_flags({ feat_h, feat_w },
            { valid_feat_h, valid_feat_w }, self:num_base_anchors()[i], device)
        multi_level_flags[#multi_level_flags + 1] = flags
    end
    return multi_level_flags
end

-- def single_level_valid_flags(self, featmap_size, valid_size, num_base_anchors, device='cuda'):
function AnchorGenerator:single_level_valid_flags(featmap_size, valid_size, num_base_anchors,
                                                  device)
    device = device or "cpu"
    local feat_h, feat_w = featmap_size[1], featmap_size[2]
    local valid_h, valid_w = valid_size[1], valid_size[2]
    assert(valid_h <= feat_h and valid_w <= feat_w)
    -- valid_x = torch.zeros(feat_w, dtype=torch.bool, device=device)
    local valid_x = tide.zeros(feat_w, { dtype = "bool", device = device })
    local valid_y = tide.zeros(feat_h, { dtype = "bool", device = device })
    -- valid_x[:valid_w] = 1
    valid_x[{ { 1, valid_w } }] = 1
    -- valid_y[:valid_h] = 1
    valid_y[{ { 1, valid_h } }] = 1
    local valid_xx, valid_yy = self:_meshgrid(valid_x, valid_y)
    -- valid = valid_xx & valid_yy
    local valid = valid_xx:logical_and(valid_yy)
    -- valid = valid[:, None].expand(valid.size(0), num_base_anchors).contiguous().view(-1)
    valid = valid[{ {}, "newaxis" }]:expand(valid:size(1), num_base_anchors):contiguous()
        :view(-1)
    return valid
end

---------------------------------------------------------------------------------------------
-- PyTorch 1.13's values of the same code on the same data
---------------------------------------------------------------------------------------------
local W = {
    sfl_none = {
        0.0207645446, 1.23351431, 0.355497688, 0.0035411818, 0.00447621755, 0.00872735959,
        1.22039807, 0.195441663, 0.00204607169, 0.00968944561, 0.00366422255, 1.13347101
    },
    pfl_none = {
        0.0207645427, 1.23351407, 0.355497777, 0.00354118249, 0.00447621848, 0.00872735865,
        1.22039807, 0.195441633, 0.00204607216, 0.00968944747, 0.00366422255, 1.13347125
    },
    sfl_mean = {0.349269301},
    pfl_mean = {0.34926936},
    sfl_sum = {4.19123173},
    pfl_sum = {4.1912322},
    sfl_w = {4.45392084},
    sfl_w12_avg = {1.55437005},
    pfl_w_avg = {1.78156817},
    pfl_onehot_g1 = {3.58400345},
    sl1_none = {
        0.333333343, 1.25, 0.333333343, 0.333333343, 0, 0.333333343, 0.333333343, 0, 1.25, 1.25,
        2.25, 1.25, 0.333333343, 0.333333343, 0.333333343, 0.333333343
    },
    l1_none = {1, 2, 1, 1, 0, 1, 1, 0, 2, 2, 3, 2, 1, 1, 1, 1},
    iou_linear_none = {0.411214948, 0.217391312, 0.999998987, 0.699999988},
    iou_square_none = {0.653332174, 0.387523651, 1, 0.909999967},
    iou_log_none = {0.52969408, 0.245122463, 13.8155107, 1.20397282},
    giou_none = {0.438487649, 0.231677055, 1.54999995, 0.699999988},
    diou_none = {0.416871071, 0.220746994, 1.25, 0.699999988},
    ciou_none = {0.417232037, 0.220902741, 1.25, 0.699999988},
    sl1_mean = {0.640625},
    l1_mean = {1.25},
    iou_linear_mean = {0.582151294},
    iou_square_mean = {0.737713933},
    iou_log_mean = {3.94857502},
    giou_mean = {0.730041206},
    diou_mean = {0.646904528},
    ciou_mean = {0.647033691},
    sl1_sum = {10.25},
    l1_sum = {20},
    iou_linear_sum = {2.32860518},
    iou_square_sum = {2.95085573},
    iou_log_sum = {15.7943001},
    giou_sum = {2.92016482},
    diou_sum = {2.58761811},
    ciou_sum = {2.58813477},
    sl1_w_avg = {3.83333325},
    l1_w = {19.5},
    giou_w_avg = {0.908947229},
    diou_w = {0.633341253},
    ciou_w_avg = {0.844679177},
    iou_w_none = {0.52969408, 0.490244925, 6.90775537, 1.80595922},
    ov_iou = {
        0.588785052, 0.428571433, 0.0599999987, 0.461538464, 0.782608688, 0.095238097,
        0.042857144, 0.0500000007, 0, 0.0410958901, 0.03125, 0
    },
    ova_iou = {0.588785052, 0.782608688, 0, 0.300000012},
    ov_iof = {
        0.629999995, 0.479999989, 0.0599999987, 0.666666687, 0.857142866, 0.095238097, 1, 1, 0,
        0.5, 0.333333343, 0
    },
    ova_iof = {0.629999995, 0.857142866, 0, 1},
    ov_giou = {
        0.561512351, 0.36190477, 0.0599999987, 0.37153846, 0.768322945, 0.095238097, 0.042857144,
        0.0500000007, -0.550000012, -0.0464041084, -0.13758117, -0.833333313
    },
    ova_giou = {0.561512351, 0.768322945, -0.550000012, 0.300000012},
    ov_batch_giou = {
        0.561512351, 0.36190477, 0.37153846, 0.768322945, 0.042857144, 0.0500000007,
        -0.0464041084, -0.13758117, 0.561512351, 0.37153846, 0.36190477, 0.768322945,
        0.0599999987, 0.095238097, 0.200000003, -0.22175926
    },
    g_giou = {
        -0.0175157674, -0.0204634275, -0.0253950991, 0.0204634275, 0.00537016056, 0.0599333867,
        0.0762161985, -0.00397785194, 0.00625000149, -0.00666666683, -0.0250000022,
        -0.00833333377, 0.0500000007, 0.075000003, -0.0500000007, -0.075000003
    },
    g_ciou = {
        -0.0587818138, -0.056983877, -0.0536441132, 0.0524589904, 0.0175122842, 0.0791091099,
        0.105298556, 0.00488181412, -0.0121951215, 0.0121951215, -0.0609756075, -0.048780486,
        0.099999994, 0.149999991, -0.099999994, -0.149999991
    },
    g_sfl = {
        -0.016428709, 0.322780788, 0.18310675, 0.00183450955, 0.00228988891, -0.00387614965,
        0.644016325, 0.243444562, 0.00434969319, 0, 0, 0
    },
    g_pfl = {
        -0.0142380968, 0.63803947, 0.170362234, 0.0056044925, 0.00658691628, -0.00757823605,
        0.628700733, 0.103014469, 0.00384654477, 0.0112608541, -0.0041001658, 0.569315255
    },
    base0 = {
        -5.65685415, -2.82842708, 5.65685415, 2.82842708, -11.3137083, -5.65685415, 11.3137083,
        5.65685415, -4, -4, 4, 4, -8, -8, 8, 8, -2.82842708, -5.65685415, 2.82842708, 5.65685415,
        -5.65685415, -11.3137083, 5.65685415, 11.3137083
    },
    base1 = {
        -8.48528099, -4.2426405, 8.48528099, 4.2426405, -16.970562, -8.48528099, 16.970562,
        8.48528099, -6, -6, 6, 6, -12, -12, 12, 12, -4.2426405, -8.48528099, 4.2426405,
        8.48528099, -8.48528099, -16.970562, 8.48528099, 16.970562
    },
    prior0 = {
        -5.65685415, -2.82842708, 5.65685415, 2.82842708, -11.3137083, -5.65685415, 11.3137083,
        5.65685415, -4, -4, 4, 4, -8, -8, 8, 8, -2.82842708, -5.65685415, 2.82842708, 5.65685415,
        -5.65685415, -11.3137083, 5.65685415, 11.3137083, 2.34314585, -2.82842708, 13.6568546,
        2.82842708, -3.31370831, -5.65685415, 19.3137093, 5.65685415, 4, -4, 12, 4, 0, -8, 16, 8,
        5.17157269, -5.65685415, 10.8284273, 5.65685415, 2.34314585, -11.3137083, 13.6568546,
        11.3137083, 10.3431454, -2.82842708, 21.6568546, 2.82842708, 4.68629169, -5.65685415,
        27.3137093, 5.65685415, 12, -4, 20, 4, 8, -8, 24, 8, 13.1715727, -5.65685415, 18.8284264,
        5.65685415, 10.3431454, -11.3137083, 21.6568546, 11.3137083, -5.65685415, 5.17157269,
        5.65685415, 10.8284273, -11.3137083, 2.34314585, 11.3137083, 13.6568546, -4, 4, 4, 12, -8,
        0, 8, 16, -2.82842708, 2.34314585, 2.82842708, 13.6568546, -5.65685415, -3.31370831,
        5.65685415, 19.3137093, 2.34314585, 5.17157269, 13.6568546, 10.8284273, -3.31370831,
        2.34314585, 19.3137093, 13.6568546, 4, 4, 12, 12, 0, 0, 16, 16, 5.17157269, 2.34314585,
        10.8284273, 13.6568546, 2.34314585, -3.31370831, 13.6568546, 19.3137093, 10.3431454,
        5.17157269, 21.6568546, 10.8284273, 4.68629169, 2.34314585, 27.3137093, 13.6568546, 12, 4,
        20, 12, 8, 0, 24, 16, 13.1715727, 2.34314585, 18.8284264, 13.6568546, 10.3431454,
        -3.31370831, 21.6568546, 19.3137093
    },
    prior1 = {
        -8.48528099, -4.2426405, 8.48528099, 4.2426405, -16.970562, -8.48528099, 16.970562,
        8.48528099, -6, -6, 6, 6, -12, -12, 12, 12, -4.2426405, -8.48528099, 4.2426405,
        8.48528099, -8.48528099, -16.970562, 8.48528099, 16.970562, 7.51471901, -4.2426405,
        24.485281, 4.2426405, -0.970561981, -8.48528099, 32.970562, 8.48528099, 10, -6, 22, 6, 4,
        -12, 28, 12, 11.7573595, -8.48528099, 20.2426414, 8.48528099, 7.51471901, -16.970562,
        24.485281, 16.970562
    },
    vf0 = {
        1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
        0, 0, 0, 0, 0, 0
    },
    vf1 = {1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    base_oct = {
        -18.6274166, -7.31370831, 26.6274166, 15.3137083, -7.31370831, -18.6274166, 15.3137083,
        26.6274166, -24.5087585, -10.2543793, 32.5087585, 18.2543793, -10.2543793, -24.5087585,
        18.2543793, 32.5087585, -31.9187851, -13.9593925, 39.9187851, 21.9593925, -13.9593925,
        -31.9187851, 21.9593925, 39.9187851
    },
    base_ctr = {-1, 1, 7, 9},
    mesh = {0, 0, 0, 10, 10, 10, 0, 1, 2, 0, 1, 2},
}

local function list(t)
    local out = {}
    local flat = t:detach():double():contiguous():view(-1)
    for i = 1, flat:numel() do out[i] = flat[i]:item() end
    return out
end

local function check(want, got, what, tol)
    assert_close_list(W[want], list(got), tol or 1e-5, what or want)
end

-- the fixed data: logits[i][j] = 2 sin(1.3 (3i + j) + 0.2) (0-based i, j), 4 anchors, 3 classes
local function logits()
    local rows = {}
    for i = 0, 3 do
        rows[i + 1] = {}
        for j = 0, 2 do rows[i + 1][j + 1] = math.sin(1.3 * (3 * i + j) + 0.2) * 2 end
    end
    return tide.tensor(rows, { dtype = "float32" })
end
-- mmdet's labels {0, 2, 3, 1}, 3 the background: 1-based {1, 3, 4, 2}, 4 the background
local labels = tide.tensor({ 1, 3, 4, 2 }, { dtype = "int64" })
local function onehot()
    return F.one_hot(labels, 4)[{ {}, { 1, 3 } }]
end
local w4 = tide.tensor({ 1.0, 0.5, 2.0, 0.0 })
local pb = tide.tensor({ { 0, 0, 10, 10 }, { 2, 3, 9, 12 }, { 5, 5, 6, 8 }, { 1, 1, 4, 3 } },
    { dtype = "float32" })
local tb = tide.tensor({ { 1, 2, 11, 9 }, { 2, 2, 8, 12 }, { 7, 7, 9, 10 }, { 0, 0, 5, 4 } },
    { dtype = "float32" })
local wb = tide.tensor({ 1.0, 2.0, 0.5, 1.5 })

describe("ported mmdetection losses (utils.py, focal_loss.py)", function()
    it("weight_reduce_loss: reductions, weights, avg_factor + eps, sum refused", function()
        local l = tide.tensor({ 1.0, 2.0, 3.0, 6.0 })
        assert.are.equal(4, l:numel())
        assert.is_true(weight_reduce_loss(l, nil, "none"):equal(l))
        assert.is_true(math.abs(weight_reduce_loss(l):item() - 3) < 1e-6)
        assert.is_true(math.abs(weight_reduce_loss(l, w4, "sum"):item() - 8) < 1e-6)
        -- avg_factor 0: loss.sum() / eps, not a division by zero
        local z = weight_reduce_loss(l * 0, nil, "mean", 0)
        assert.are.equal(0, z:item())
        local eps = tide.finfo("float32").eps
        assert.is_true(math.abs(weight_reduce_loss(l, w4, "mean", 4):item() - 8 / (4 + eps)) < 1e-5)
        assert.has_error(function() weight_reduce_loss(l, nil, "sum", 2) end,
            'avg_factor can not be used with reduction="sum"')
    end)

    it("py_sigmoid_focal_loss and py_focal_loss_with_prob match PyTorch", function()
        local x = logits()
        for _, red in ipairs({ "none", "mean", "sum" }) do
            check("sfl_" .. red, py_sigmoid_focal_loss(x, onehot(), nil, { reduction = red }))
            -- the one_hot of the labels inside (pred.dim() != target.dim())
            check("pfl_" .. red, py_focal_loss_with_prob(x:sigmoid(), labels, nil,
                { reduction = red }))
        end
        local none = py_sigmoid_focal_loss(x, onehot(), nil, { reduction = "none" })
        assert.are.same({ 4, 3 }, none:size())
        -- weight (num_priors,) viewed (-1, 1); weight (num_priors * C,) viewed (N, -1)
        check("sfl_w", py_sigmoid_focal_loss(x, onehot(), w4, { reduction = "sum" }))
        check("sfl_w12_avg", py_sigmoid_focal_loss(x, onehot(), tide.arange(12) / 6,
            { avg_factor = 2.5 }))
        check("pfl_w_avg", py_focal_loss_with_prob(x:sigmoid(), labels, w4, { avg_factor = 2.5 }))
        check("pfl_onehot_g1", py_focal_loss_with_prob(x:sigmoid(), onehot(), nil,
            { gamma = 1.0, alpha = 0.5, reduction = "sum" }))
    end)

    it("the focal losses' gradients w.r.t. the logits and the probabilities", function()
        local x = logits():requires_grad_()
        py_sigmoid_focal_loss(x, onehot(), w4, { avg_factor = 2.5 }):backward()
        check("g_sfl", x.grad)
        local p = logits():sigmoid():requires_grad_()
        py_focal_loss_with_prob(p, labels):backward()
        check("g_pfl", p.grad)
    end)
end)

describe("ported mmdetection box losses and bbox_overlaps", function()
    it("smooth_l1_loss and l1_loss (the @weighted_loss wrapper) match PyTorch", function()
        for _, red in ipairs({ "none", "mean", "sum" }) do
            check("sl1_" .. red, smooth_l1_loss(pb, tb, nil, { beta = 1.5, reduction = red }))
            check("l1_" .. red, l1_loss(pb, tb, nil, { reduction = red }))
        end
        check("sl1_w_avg", smooth_l1_loss(pb, tb, wb:view(-1, 1):expand(4, 4),
            { avg_factor = 3 }))
        check("l1_w", l1_loss(pb, tb, wb:view(-1, 1), { reduction = "sum" }))
        -- target.numel() == 0: pred.sum() * 0
        local e = tide.zeros(0, 4)
        assert.are.equal(0, l1_loss(e, e):item())
    end)

    it("bbox_overlaps: iou / iof / giou, aligned, not, and batched", function()
        for _, m in ipairs({ "iou", "iof", "giou" }) do
            local ov = bbox_overlaps(pb, tb[{ { 1, 3 } }], { mode = m })
            assert.are.same({ 4, 3 }, ov:size())
            check("ov_" .. m, ov)
            check("ova_" .. m, bbox_overlaps(pb, tb, { mode = m, is_aligned = true }))
        end
        local b = bbox_overlaps(tide.stack({ pb, tb }), tide.stack({ tb[{ { 1, 2 } }],
            pb[{ { 1, 2 } }] }), { mode = "giou" })
        assert.are.same({ 2, 4, 2 }, b:size())
        check("ov_batch_giou", b)
        -- empty boxes: bboxes1.new(batch_shape + (rows, cols))
        assert.are.same({ 0, 4 }, bbox_overlaps(tide.zeros(0, 4), tb):size())
        assert.are.same({ 4, 0 }, bbox_overlaps(pb, tide.zeros(0, 4)):size())
    end)

    it("iou_loss in its three modes, giou / diou / ciou losses match PyTorch", function()
        for _, red in ipairs({ "none", "mean", "sum" }) do
            for _, m in ipairs({ "linear", "square", "log" }) do
                check(("iou_%s_%s"):format(m, red), iou_loss(pb, tb, nil,
                    { mode = m, reduction = red }))
            end
            check("giou_" .. red, giou_loss(pb, tb, nil, { reduction = red }))
            check("diou_" .. red, diou_loss(pb, tb, nil, { reduction = red }))
            check("ciou_" .. red, ciou_loss(pb, tb, nil, { reduction = red }))
        end
        check("giou_w_avg", giou_loss(pb, tb, wb, { avg_factor = 3 }))
        check("diou_w", diou_loss(pb, tb, wb, { reduction = "mean" }))
        check("ciou_w_avg", ciou_loss(pb, tb, wb, { avg_factor = 3 }))
        check("iou_w_none", iou_loss(pb, tb, wb, { reduction = "none", avg_factor = 3 }))
    end)

    it("giou_loss's and ciou_loss's gradients w.r.t. the predicted boxes", function()
        local p = pb:clone():requires_grad_()
        giou_loss(p, tb, wb, { avg_factor = 3 }):backward()
        check("g_giou", p.grad)
        p = pb:clone():requires_grad_()
        -- alpha under no_grad: no gradient through it
        ciou_loss(p, tb, nil, { reduction = "sum" }):backward()
        check("g_ciou", p.grad)
    end)
end)

describe("ported mmdetection AnchorGenerator", function()
    local ag = AnchorGenerator({ 8, { 16, 12 } }, { 0.5, 1.0, 2.0 }, { scales = { 1.0, 2.0 } })

    it("gen_base_anchors with ratios and scales, octaves, centers", function()
        assert.are.same({ 6, 6 }, ag:num_base_anchors())
        assert.are.same({ 6, 4 }, ag.base_anchors[1]:size())
        check("base0", ag.base_anchors[1])
        check("base1", ag.base_anchors[2])
        local ag2 = AnchorGenerator({ 8 }, { 0.5, 2.0 }, { octave_base_scale = 4,
            scales_per_octave = 3, scale_major = false, center_offset = 0.5 })
        check("base_oct", ag2.base_anchors[1])
        local ag3 = AnchorGenerator({ 8 }, { 1.0 },
            { scales = { 1.0 }, centers = { { 3.0, 5.0 } } })
        check("base_ctr", ag3.base_anchors[1])
        assert.has_error(function()
            AnchorGenerator({ 8 }, { 1.0 }, { scales = { 1.0 }, octave_base_scale = 4,
                scales_per_octave = 3 })
        end)
    end)

    it("_meshgrid, grid_priors for 2 levels and valid_flags", function()
        local xs, ys = ag:_meshgrid(tide.arange(3):float(), tide.arange(2):float() * 10, false)
        check("mesh", tide.cat({ xs, ys }))
        local pr = ag:grid_priors({ { 2, 3 }, { 1, 2 } })
        assert.are.equal(2, #pr)
        assert.are.same({ 36, 4 }, pr[1]:size())
        assert.are.same({ 12, 4 }, pr[2]:size())
        check("prior0", pr[1])
        check("prior1", pr[2])
        local vf = ag:valid_flags({ { 2, 3 }, { 2, 2 } }, { 10, 14, 3 })
        assert.are.equal("bool", vf[1].dtype)
        check("vf0", vf[1])
        check("vf1", vf[2])
    end)
end)
