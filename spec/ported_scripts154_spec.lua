-- ported_scripts154_spec.lua — Lightning-AI/torchmetrics (HEAD) src/torchmetrics/functional/
-- classification/: stat_scores.py (_binary_stat_scores_format / _update,
-- _multiclass_stat_scores_format / _update), confusion_matrix.py (_multiclass_confusion_matrix_
-- format / _update, _confusion_matrix_reduce), accuracy.py / precision_recall.py / f_beta.py's
-- reductions, precision_recall_curve.py (_binary_clf_curve, _binary_precision_recall_curve_format
-- / _compute), roc.py (_binary_roc_compute), auroc.py (_binary_auroc_compute, max_fpr None),
-- average_precision.py (_binary_average_precision_compute), with utilities/compute.py's
-- _safe_divide, _adjust_weights_safe_divide, _auc_compute_without_check and
-- normalize_logits_if_needed, ported line for line at tiny sizes (10 samples, 3 classes) and
-- checked against the same functions run in PyTorch 1.13. The Python line stands above each Lua
-- line that differs from it. Class targets and argmax predictions are 1-based (tide's); the one
-- shift is in the bincount's mapping, (target - 1) * C + preds, which is 1..C^2 and so lands at
-- the same bin bincount (values from 1) counts as PyTorch's target * C + preds. Binary targets stay
-- 0/1 (values, not indices); _binary_clf_curve's threshold indices are 1-based (fps shifted).
local tide = require("tide")
local F = tide.nn.functional

local ported = require("spec.support.ported")
local assert_close_list, close = ported.assert_close_list, ported.close

local TOL = 1e-5

---------------------------------------------------------------------------------------------
-- utilities/compute.py
---------------------------------------------------------------------------------------------
-- def _safe_divide(num, denom, zero_division=0.0):
local function _safe_divide(num, denom, zero_division)
    zero_division = zero_division or 0.0
    -- num = num if num.is_floating_point() else num.float()
    num = num:is_floating_point() and num or num:float()
    denom = denom:is_floating_point() and denom or denom:float()
    -- if isinstance(zero_division, (float, int)) or zero_division == "warn":
    if type(zero_division) == "number" or zero_division == "warn" then
        zero_division = zero_division == "warn" and 0.0 or zero_division
        -- zero_division_tensor = torch.full((), zero_division, dtype=num.dtype, device=...)
        local zero_division_tensor = tide.full({}, zero_division,
            { dtype = num.dtype, device = num.device })
        -- return torch.where(denom != 0, num / denom, zero_division_tensor)
        return tide.where(denom:ne(0), num / denom, zero_division_tensor)
    end
    -- return torch.true_divide(num, denom)
    return tide.true_divide(num, denom)
end

-- def _adjust_weights_safe_divide(score, average, multilabel, tp, fp, fn, top_k=1):
local function _adjust_weights_safe_divide(score, average, multilabel, tp, fp, fn, top_k)
    top_k = top_k or 1
    if average == nil or average == "none" then
        return score
    end
    local weights
    if average == "weighted" then
        weights = tp + fn
    else
        -- weights = torch.ones_like(score)
        weights = tide.ones_like(score)
        if not multilabel then
            -- weights[tp + fp + fn == 0 if top_k == 1 else tp + fn == 0] = 0.0
            weights[top_k == 1 and (tp + fp + fn):eq(0) or (tp + fn):eq(0)] = 0.0
        end
    end
    -- return _safe_divide(weights * score, weights.sum(-1, keepdim=True)).sum(-1)
    return _safe_divide(weights * score, weights:sum(-1, true)):sum(-1)
end

-- def _auc_compute_without_check(x, y, direction, axis=-1):
local function _auc_compute_without_check(x, y, direction, axis)
    -- with torch.no_grad():
    return tide.no_grad(function()
        -- auc_score = torch.trapz(y, x, dim=axis) * direction
        return tide.trapz(y, x, { dim = axis or -1 }) * direction
    end)
end

-- def normalize_logits_if_needed(tensor, normalization):  (its cpu branch)
local function normalize_logits_if_needed(tensor, normalization)
    if not normalization then
        return tensor
    end
    -- if not torch.all((tensor >= 0) * (tensor <= 1)):
    if not (tensor:ge(0) * tensor:le(1)):all():item() then
        -- tensor = tensor.sigmoid() if normalization == "sigmoid" else torch.softmax(tensor, dim=1)
        tensor = normalization == "sigmoid" and tensor:sigmoid() or tide.softmax(tensor, 2)
    end
    return tensor
end

---------------------------------------------------------------------------------------------
-- stat_scores.py
---------------------------------------------------------------------------------------------
-- def _binary_stat_scores_format(preds, target, threshold=0.5, ignore_index=None):
local function _binary_stat_scores_format(preds, target, threshold, ignore_index)
    threshold = threshold or 0.5
    if preds:is_floating_point() then
        preds = normalize_logits_if_needed(preds, "sigmoid")
        -- preds = preds > threshold
        preds = preds:gt(threshold)
    end
    -- preds = preds.reshape(preds.shape[0], -1)
    preds = preds:reshape(preds:size(1), -1)
    target = target:reshape(target:size(1), -1)
    if ignore_index ~= nil then
        -- idx = target == ignore_index
        local idx = target:eq(ignore_index)
        target = target:clone()
        target[idx] = -1
    end
    return preds, target
end

-- def _binary_stat_scores_update(preds, target, multidim_average="global"):
local function _binary_stat_scores_update(preds, target, multidim_average)
    -- sum_dim = [0, 1] if multidim_average == "global" else [1]
    local sum_dim = (multidim_average or "global") == "global" and { 1, 2 } or { 2 }
    -- tp = ((target == preds) & (target == 1)).sum(sum_dim).squeeze()
    local tp = target:eq(preds):logical_and(target:eq(1)):sum(sum_dim):squeeze()
    local fn = target:ne(preds):logical_and(target:eq(1)):sum(sum_dim):squeeze()
    local fp = target:ne(preds):logical_and(target:eq(0)):sum(sum_dim):squeeze()
    local tn = target:eq(preds):logical_and(target:eq(0)):sum(sum_dim):squeeze()
    return tp, fp, tn, fn
end

-- def _multiclass_stat_scores_format(preds, target, top_k=1):  (top_k 1)
local function _multiclass_stat_scores_format(preds, target)
    -- if preds.ndim == target.ndim + 1 and top_k == 1:
    if preds.ndim == target.ndim + 1 then
        -- preds = preds.argmax(dim=1)
        preds = preds:argmax(2)
    end
    -- preds = preds.reshape(preds.shape[0], -1)
    preds = preds:reshape(preds:size(1), -1)
    target = target:reshape(target:size(1), -1)
    return preds, target
end

-- def _multiclass_stat_scores_update(preds, target, num_classes, top_k=1, average="macro",
--         multidim_average="global", ignore_index=None):  (global, top_k 1: the two last branches)
local function _multiclass_stat_scores_update(preds, target, num_classes, average, ignore_index)
    local tp, fp, tn, fn
    if average == "micro" then
        preds = preds:flatten()
        target = target:flatten()
        if ignore_index ~= nil then
            -- idx = target != ignore_index
            local idx = target:ne(ignore_index)
            preds = preds[idx]
            target = target[idx]
        end
        -- tp = (preds == target).sum()
        tp = preds:eq(target):sum()
        fp = preds:ne(target):sum()
        fn = preds:ne(target):sum()
        -- tn = num_classes * preds.numel() - (fp + fn + tp)
        tn = num_classes * preds:numel() - (fp + fn + tp)
    else
        preds = preds:flatten()
        target = target:flatten()
        if ignore_index ~= nil then
            local idx = target:ne(ignore_index)
            preds = preds[idx]
            target = target[idx]
        end
        -- unique_mapping = target.to(torch.long) * num_classes + preds.to(torch.long)
        local unique_mapping = (target:to("int64") - 1) * num_classes + preds:to("int64")
        -- bins = _bincount(unique_mapping, minlength=num_classes**2)
        local bins = tide.bincount(unique_mapping, { minlength = num_classes ^ 2 })
        local confmat = bins:reshape(num_classes, num_classes)
        tp = confmat:diag()
        -- fp = confmat.sum(0) - tp
        fp = confmat:sum(1) - tp
        -- fn = confmat.sum(1) - tp
        fn = confmat:sum(2) - tp
        tn = confmat:sum() - (fp + fn + tp)
    end
    return tp, fp, tn, fn
end

---------------------------------------------------------------------------------------------
-- confusion_matrix.py
---------------------------------------------------------------------------------------------
-- def _confusion_matrix_reduce(confmat, normalize=None):
local function _confusion_matrix_reduce(confmat, normalize)
    if normalize ~= nil and normalize ~= "none" then
        confmat = confmat:is_floating_point() and confmat or confmat:float()
        if normalize == "true" then
            -- confmat = confmat / confmat.sum(dim=-1, keepdim=True)
            confmat = confmat / confmat:sum(-1, true)
        elseif normalize == "pred" then
            confmat = confmat / confmat:sum(-2, true)
        elseif normalize == "all" then
            -- confmat = confmat / confmat.sum(dim=[-2, -1], keepdim=True)
            confmat = confmat / confmat:sum({ -2, -1 }, true)
        end
        -- nan_elements = confmat[torch.isnan(confmat)].nelement()
        local nan_elements = confmat[tide.isnan(confmat)]:nelement()
        if nan_elements > 0 then
            confmat[tide.isnan(confmat)] = 0
        end
    end
    return confmat
end

-- def _multiclass_confusion_matrix_format(preds, target, ignore_index=None, convert_to_labels=True)
local function _multiclass_confusion_matrix_format(preds, target, ignore_index)
    if preds.ndim == target.ndim + 1 then
        preds = preds:argmax(2)
    end
    preds = preds:flatten()
    target = target:flatten()
    if ignore_index ~= nil then
        local idx = target:ne(ignore_index)
        preds = preds[idx]
        target = target[idx]
    end
    return preds, target
end

-- def _multiclass_confusion_matrix_update(preds, target, num_classes):
local function _multiclass_confusion_matrix_update(preds, target, num_classes)
    -- unique_mapping = target.to(torch.long) * num_classes + preds.to(torch.long)
    local unique_mapping = (target:to("int64") - 1) * num_classes + preds:to("int64")
    local bins = tide.bincount(unique_mapping, { minlength = num_classes ^ 2 })
    return bins:reshape(num_classes, num_classes)
end

---------------------------------------------------------------------------------------------
-- accuracy.py, precision_recall.py, f_beta.py (multidim_average "global")
---------------------------------------------------------------------------------------------

-- def _accuracy_reduce(tp, fp, tn, fn, average, multidim_average="global", multilabel=False,
--         top_k=1):
local function _accuracy_reduce(tp, fp, tn, fn, average, multilabel, top_k)
    if average == "binary" then
        return _safe_divide(tp + tn, tp + tn + fp + fn)
    end
    if average == "micro" then
        -- tp = tp.sum(dim=0 if multidim_average == "global" else 1)
        tp = tp:sum(1)
        fn = fn:sum(1)
        return _safe_divide(tp, tp + fn)
    end
    local score = _safe_divide(tp, tp + fn)
    return _adjust_weights_safe_divide(score, average, multilabel, tp, fp, fn, top_k)
end

-- def _precision_recall_reduce(stat, tp, fp, tn, fn, average, multidim_average="global",
--         multilabel=False, top_k=1, zero_division=0):
local function _precision_recall_reduce(stat, tp, fp, tn, fn, average, multilabel, top_k,
                                        zero_division)
    -- different_stat = fp if stat == "precision" else fn
    local different_stat = stat == "precision" and fp or fn
    if average == "binary" then
        return _safe_divide(tp, tp + different_stat, zero_division)
    end
    if average == "micro" then
        tp = tp:sum(1)
        fn = fn:sum(1)
        different_stat = different_stat:sum(1)
        return _safe_divide(tp, tp + different_stat, zero_division)
    end
    local score = _safe_divide(tp, tp + different_stat, zero_division)
    return _adjust_weights_safe_divide(score, average, multilabel, tp, fp, fn, top_k)
end

-- def _fbeta_reduce(tp, fp, tn, fn, beta, average, multidim_average="global", multilabel=False,
--         zero_division=0):
local function _fbeta_reduce(tp, fp, tn, fn, beta, average, multilabel, zero_division)
    local beta2 = beta ^ 2
    if average == "binary" then
        return _safe_divide((1 + beta2) * tp, (1 + beta2) * tp + beta2 * fn + fp, zero_division)
    end
    if average == "micro" then
        tp = tp:sum(1)
        fn = fn:sum(1)
        fp = fp:sum(1)
        return _safe_divide((1 + beta2) * tp, (1 + beta2) * tp + beta2 * fn + fp, zero_division)
    end
    local fbeta_score = _safe_divide((1 + beta2) * tp, (1 + beta2) * tp + beta2 * fn + fp,
        zero_division)
    return _adjust_weights_safe_divide(fbeta_score, average, multilabel, tp, fp, fn)
end

---------------------------------------------------------------------------------------------
-- precision_recall_curve.py, roc.py, auroc.py, average_precision.py (thresholds None)
---------------------------------------------------------------------------------------------
-- def _binary_clf_curve(preds, target, sample_weights=None, pos_label=1):
local function _binary_clf_curve(preds, target, pos_label)
    pos_label = pos_label or 1
    return tide.no_grad(function()
        if preds.ndim > target.ndim then
            -- preds = preds[:, 0]
            preds = preds:select(2, 1)
        end
        -- desc_score_indices = torch.argsort(preds, descending=True)
        local desc_score_indices = tide.argsort(preds, { descending = true })
        preds = preds[desc_score_indices]
        target = target[desc_score_indices]
        local weight = 1.0
        -- distinct_value_indices = torch.where(preds[1:] - preds[:-1])[0]
        local distinct_value_indices = tide.where(preds[{ { 2, -1 } }] - preds[{ { 1, -2 } }])[1]
        -- threshold_idxs = F.pad(distinct_value_indices, [0, 1], value=target.size(0) - 1)
        local threshold_idxs = F.pad(distinct_value_indices, { 0, 1 }, { value = target:size(1) })
        -- target = (target == pos_label).to(torch.long)
        target = target:eq(pos_label):to("int64")
        -- tps = _cumsum(target * weight, dim=0)[threshold_idxs]
        local tps = tide.cumsum(target * weight, { dim = 1 })[threshold_idxs]
        -- fps = 1 + threshold_idxs - tps  (the 1-based index is the 0-based one plus one)
        local fps = threshold_idxs - tps
        return fps, tps, preds[threshold_idxs]
    end)
end

-- def _binary_precision_recall_curve_format(preds, target, thresholds=None, ignore_index=None,
--         normalization="sigmoid"):  (thresholds None)
local function _binary_precision_recall_curve_format(preds, target, ignore_index)
    preds = preds:flatten()
    target = target:flatten()
    if ignore_index ~= nil then
        local idx = target:ne(ignore_index)
        preds = preds[idx]
        target = target[idx]
    end
    preds = normalize_logits_if_needed(preds, "sigmoid")
    return preds, target, nil
end

-- def _binary_precision_recall_curve_compute(state, thresholds, pos_label=1):  (the
-- thresholds-None branch: state is (preds, target))
local function _binary_precision_recall_curve_compute(state, thresholds, pos_label)
    local fps, tps
    fps, tps, thresholds = _binary_clf_curve(state[1], state[2], pos_label)
    local precision = tps / (tps + fps)
    -- recall = tps / tps[-1]
    local recall = tps / tps[-1]
    -- precision = torch.cat([precision.flip(0), torch.ones(1, dtype=precision.dtype, ...)])
    precision = tide.cat({ precision:flip(1), tide.ones(1, { dtype = precision.dtype }) })
    recall = tide.cat({ recall:flip(1), tide.zeros(1, { dtype = recall.dtype }) })
    -- thresholds = thresholds.flip(0).detach().clone()
    thresholds = thresholds:flip(1):detach():clone()
    return precision, recall, thresholds
end

-- def _binary_roc_compute(state, thresholds, pos_label=1):  (thresholds None)
local function _binary_roc_compute(state, thresholds, pos_label)
    local fps, tps, thres = _binary_clf_curve(state[1], state[2], pos_label)
    -- tps = torch.cat([torch.zeros(1, dtype=tps.dtype, device=tps.device), tps])
    tps = tide.cat({ tide.zeros(1, { dtype = tps.dtype }), tps })
    fps = tide.cat({ tide.zeros(1, { dtype = fps.dtype }), fps })
    thres = tide.cat({ tide.ones(1, { dtype = thres.dtype }), thres })
    local fpr, tpr
    -- if fps[-1] <= 0:
    if fps[-1]:item() <= 0 then
        fpr = tide.zeros_like(thres)
    else
        fpr = fps / fps[-1]
    end
    if tps[-1]:item() <= 0 then
        tpr = tide.zeros_like(thres)
    else
        tpr = tps / tps[-1]
    end
    return fpr, tpr, thres
end

-- def _binary_auroc_compute(state, thresholds, max_fpr=None, pos_label=1):  (max_fpr None)
local function _binary_auroc_compute(state, thresholds, max_fpr, pos_label)
    local fpr, tpr = _binary_roc_compute(state, thresholds, pos_label)
    -- if max_fpr is None or max_fpr == 1 or fpr.sum() == 0 or tpr.sum() == 0:
    assert(max_fpr == nil, "only max_fpr None is ported")
    return _auc_compute_without_check(fpr, tpr, 1.0)
end

-- def _binary_average_precision_compute(state, thresholds):
local function _binary_average_precision_compute(state, thresholds)
    local precision, recall = _binary_precision_recall_curve_compute(state, thresholds)
    -- precision = torch.where(torch.isnan(precision), torch.zeros_like(precision), precision)
    precision = tide.where(tide.isnan(precision), tide.zeros_like(precision), precision)
    recall = tide.where(tide.isnan(recall), tide.zeros_like(recall), recall)
    -- return -torch.sum((recall[1:] - recall[:-1]) * precision[:-1])
    return -tide.sum((recall[{ { 2, -1 } }] - recall[{ { 1, -2 } }]) * precision[{ { 1, -2 } }])
end

---------------------------------------------------------------------------------------------
-- data (PyTorch's values from the same functions run in PyTorch 1.13)
---------------------------------------------------------------------------------------------
-- binary targets, probabilities (0.5 exactly is not > 0.5) and logits (sigmoid applied)
local BT = { 0, 1, 1, 0, 1, 0, 0, 1, 1, 0 }
local BP = { 0.1, 0.8, 0.4, 0.3, 0.9, 0.6, 0.2, 0.7, 0.4, 0.5 }
local BL = { -2.0, 1.5, -0.3, 0.2, 3.0, -1.0, 0.0, 0.5, 2.0, -0.5 }
-- multiclass: Python's targets [0, 1, 2, 2, 1, 0, 2, 1, 0, 2] plus one
local MT = { 1, 2, 3, 3, 2, 1, 3, 2, 1, 3 }
local MP = { { 2.0, 0.5, -1.0 }, { 0.1, 1.2, 0.3 }, { 0.0, 0.2, 1.9 }, { 1.1, 0.3, 0.7 },
    { 0.4, 0.6, 0.5 }, { -0.2, 0.9, 0.1 }, { 0.3, -0.4, 2.2 }, { 1.5, 0.2, 0.1 },
    { 0.8, 0.1, 0.6 }, { 0.2, 1.7, 0.4 } }

local function list(t)
    return t:dim() == 0 and { t:item() } or t:flatten():tolist()
end

local function check(want, t, what)
    if type(want) == "number" then
        want = { want }
    end
    assert_close_list(want, list(t:double()), TOL, what)
end

describe("ported torchmetrics functional classification", function()
    it("binary stat scores and accuracy / precision / recall / F2 (probs, logits, ignore_index)",
        function()
            local cases = {
                { "prob", BP, nil, { 3, 1, 4, 2 }, { 0.7, 0.75, 0.6, 0.625 } },
                { "logit", BL, nil, { 4, 1, 4, 1 }, { 0.8, 0.8, 0.8, 0.8 } },
                { "ignore", BP, -1, { 3, 1, 4, 1 }, { 0.7777778, 0.75, 0.75, 0.75 } },
            }
            for _, c in ipairs(cases) do
                local name, p, ig, stats, scores = c[1], c[2], c[3], c[4], c[5]
                local tgt = tide.tensor(BT, { dtype = "int64" })
                if ig then
                    tgt[3] = -1 -- Python's tgt[2] = -1
                end
                local preds, target = _binary_stat_scores_format(tide.tensor(p), tgt, 0.5, ig)
                assert.are.equal("bool", preds.dtype)
                assert.are.same({ 10, 1 }, preds:size())
                local tp, fp, tn, fn = _binary_stat_scores_update(preds, target)
                assert.are.same(stats, { tp:item(), fp:item(), tn:item(), fn:item() }, name)
                check(scores[1], _accuracy_reduce(tp, fp, tn, fn, "binary"), name .. " acc")
                check(scores[2], _precision_recall_reduce("precision", tp, fp, tn, fn, "binary"),
                    name .. " precision")
                check(scores[3], _precision_recall_reduce("recall", tp, fp, tn, fn, "binary"),
                    name .. " recall")
                check(scores[4], _fbeta_reduce(tp, fp, tn, fn, 2.0, "binary"), name .. " f2")
            end
        end)

    it("multiclass stat scores and every average's scores match PyTorch", function()
        -- [ignore_index (Python's)][average] = {acc, precision, recall, f1, f0.5}
        local want = {
            none = {
                stats = { { 2, 2, 2 }, { 2, 2, 0 }, { 5, 5, 6 }, { 1, 1, 2 } },
                micro = { 0.6, 0.6, 0.6, 0.6, 0.6 },
                macro = { 0.6111111, 0.6666667, 0.6111111, 0.6031746, 0.628655 },
                weighted = { 0.6, 0.7, 0.6, 0.6095239, 0.6491228 },
                [false] = { { 0.6666667, 0.6666667, 0.5 }, { 0.5, 0.5, 1.0 },
                    { 0.6666667, 0.6666667, 0.5 }, { 0.5714286, 0.5714286, 0.6666667 },
                    { 0.5263158, 0.5263158, 0.8333333 } },
                micro_stats = { 6, 4, 16, 4 },
            },
            -- Python's ignore_index=0: class 1 here, in range
            [1] = {
                stats = { { 0, 2, 2 }, { 2, 1, 0 }, { 5, 3, 3 }, { 0, 1, 2 } },
                micro = { 0.5714286, 0.5714286, 0.5714286, 0.5714286, 0.5714286 },
                macro = { 0.3888889, 0.5555556, 0.3888889, 0.4444444, 0.5 },
                weighted = { 0.5714286, 0.8571429, 0.5714286, 0.6666667, 0.7619048 },
                [false] = { { 0, 0.6666667, 0.5 }, { 0, 0.6666667, 1.0 }, { 0, 0.6666667, 0.5 },
                    { 0, 0.6666667, 0.6666667 }, { 0, 0.6666667, 0.8333333 } },
                micro_stats = { 4, 3, 11, 3 },
            },
            -- ignore_index=-1 (outside the classes) on sample 4
            [-1] = {
                stats = { { 2, 2, 2 }, { 1, 2, 0 }, { 5, 4, 6 }, { 1, 1, 1 } },
                micro = { 0.6666667, 0.6666667, 0.6666667, 0.6666667, 0.6666667 },
                macro = { 0.6666667, 0.7222222, 0.6666667, 0.6793651, 0.7006911 },
                weighted = { 0.6666667, 0.7222222, 0.6666667, 0.6793652, 0.7006911 },
                [false] = { { 0.6666667, 0.6666667, 0.6666667 }, { 0.6666667, 0.5, 1.0 },
                    { 0.6666667, 0.6666667, 0.6666667 }, { 0.6666667, 0.5714286, 0.8 },
                    { 0.6666667, 0.5263158, 0.9090909 } },
                micro_stats = { 6, 3, 15, 3 },
            },
        }
        for _, ig in ipairs({ "none", 1, -1 }) do
            local w = want[ig]
            local ignore_index = ig ~= "none" and ig or nil
            local tgt = tide.tensor(MT, { dtype = "int64" })
            if ig == -1 then
                tgt[4] = -1
            end
            local preds, target = _multiclass_stat_scores_format(tide.tensor(MP), tgt)
            assert.are.same({ 10, 1 }, preds:size())
            for _, avg in ipairs({ "micro", "macro", "weighted", false }) do
                local average = avg or nil -- Python's None
                local what = ("ignore %s, average %s"):format(tostring(ig), tostring(average))
                local tp, fp, tn, fn = _multiclass_stat_scores_update(preds, target, 3, average,
                    ignore_index)
                if avg == "micro" then
                    assert.are.same(w.micro_stats, { tp:item(), fp:item(), tn:item(),
                        fn:item() }, what)
                else
                    assert.are.same(w.stats, { tp:tolist(), fp:tolist(), tn:tolist(),
                        fn:tolist() }, what)
                end
                local s = w[avg]
                local got = {
                    _accuracy_reduce(tp, fp, tn, fn, average),
                    _precision_recall_reduce("precision", tp, fp, tn, fn, average),
                    _precision_recall_reduce("recall", tp, fp, tn, fn, average),
                    _fbeta_reduce(tp, fp, tn, fn, 1.0, average),
                    _fbeta_reduce(tp, fp, tn, fn, 0.5, average),
                }
                for k = 1, 5 do
                    check(s[k], got[k], what .. " score " .. k)
                    assert.are.equal(avg and 0 or 1, got[k]:dim())
                end
            end
        end
    end)

    it("macro drops a class absent from target and preds (_adjust_weights_safe_divide)", function()
        -- Python: target [0, 1, 1, 0], preds [0, 1, 0, 0], 3 classes: class 2 never seen
        local tp, fp, tn, fn = _multiclass_stat_scores_update(tide.tensor({ { 1 }, { 2 }, { 1 },
            { 1 } }), tide.tensor({ { 1 }, { 2 }, { 2 }, { 1 } }), 3, "macro")
        check(0.8333334, _precision_recall_reduce("precision", tp, fp, tn, fn, "macro"), "macro")
        check({ 0.6666667, 1.0, 0.0 }, _precision_recall_reduce("precision", tp, fp, tn, fn, nil),
            "none")
    end)

    it("confusion matrix: bincount of the mapping, each normalize, ignore_index, NaN to 0",
        function()
            local want = {
                none = { 2, 1, 0, 1, 2, 0, 1, 1, 2 },
                ["true"] = { 0.6666667, 0.3333333, 0.0, 0.3333333, 0.6666667, 0.0, 0.25, 0.25,
                    0.5 },
                pred = { 0.5, 0.25, 0.0, 0.25, 0.5, 0.0, 0.25, 0.25, 1.0 },
                all = { 0.2, 0.1, 0.0, 0.1, 0.2, 0.0, 0.1, 0.1, 0.2 },
            }
            for _, norm in ipairs({ "none", "true", "pred", "all" }) do
                local preds, target = _multiclass_confusion_matrix_format(tide.tensor(MP),
                    tide.tensor(MT, { dtype = "int64" }))
                local cm = _multiclass_confusion_matrix_update(preds, target, 3)
                assert.are.equal("int64", cm.dtype)
                local r = _confusion_matrix_reduce(cm, norm)
                assert.are.same({ 3, 3 }, r:size())
                assert.are.equal(norm == "none" and "int64" or "float32", r.dtype)
                check(want[norm], r, "normalize " .. norm)
            end
            local tgt = tide.tensor(MT, { dtype = "int64" })
            tgt[4] = -1
            local preds, target = _multiclass_confusion_matrix_format(tide.tensor(MP), tgt, -1)
            assert.are.same({ 2, 1, 0, 1, 2, 0, 0, 1, 2 },
                _multiclass_confusion_matrix_update(preds, target, 3):flatten():tolist())
            -- a column never predicted: 0 / 0 is NaN, replaced by 0
            local cm0 = tide.tensor({ { 2, 0, 1 }, { 1, 0, 0 }, { 0, 0, 3 } }, { dtype = "int64" })
            check({ 0.6666667, 0.0, 0.25, 0.3333333, 0.0, 0.0, 0.0, 0.0, 0.75 },
                _confusion_matrix_reduce(cm0, "pred"), "NaN column")
        end)

    it("_binary_clf_curve, the PR curve, ROC, AUROC (trapz) and AP match PyTorch", function()
        local logit_thr = { 0.9525741, 0.880797, 0.8175744, 0.6224594, 0.549834, 0.5, 0.4255575,
            0.3775407, 0.2689414, 0.1192029 }
        local cases = {
            { "prob", BP, {
                fps = { 0, 0, 0, 1, 2, 2, 3, 4, 5 }, tps = { 1, 2, 3, 3, 3, 5, 5, 5, 5 },
                thr = { 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1 },
                precision = { 0.5, 0.5555556, 0.625, 0.7142857, 0.6, 0.75, 1, 1, 1, 1 },
                recall = { 1, 1, 1, 1, 0.6, 0.6, 0.6, 0.4, 0.2, 0 },
                fpr = { 0, 0, 0, 0, 0.2, 0.4, 0.4, 0.6, 0.8, 1 },
                tpr = { 0, 0.2, 0.4, 0.6, 0.6, 0.6, 1, 1, 1, 1 },
                auroc = 0.84, ap = 0.8857142 } },
            { "logit", BL, {
                fps = { 0, 0, 0, 0, 1, 2, 2, 3, 4, 5 }, tps = { 1, 2, 3, 4, 4, 4, 5, 5, 5, 5 },
                thr = logit_thr,
                precision = { 0.5, 0.5555556, 0.625, 0.7142857, 0.6666667, 0.8, 1, 1, 1, 1, 1 },
                recall = { 1, 1, 1, 1, 0.8, 0.8, 0.8, 0.6, 0.4, 0.2, 0 },
                fpr = { 0, 0, 0, 0, 0, 0.2, 0.4, 0.4, 0.6, 0.8, 1 },
                tpr = { 0, 0.2, 0.4, 0.6, 0.8, 0.8, 0.8, 1, 1, 1, 1 },
                auroc = 0.9200001, ap = 0.9428571 } },
        }
        for _, c in ipairs(cases) do
            local name, p, w = c[1], c[2], c[3]
            local preds, target, thresholds = _binary_precision_recall_curve_format(tide.tensor(p),
                tide.tensor(BT, { dtype = "int64" }))
            local fps, tps, thr = _binary_clf_curve(preds, target)
            check(w.fps, fps, name .. " fps")
            check(w.tps, tps, name .. " tps")
            check(w.thr, thr, name .. " thresholds")
            local precision, recall, th = _binary_precision_recall_curve_compute({ preds, target },
                thresholds)
            check(w.precision, precision, name .. " precision")
            check(w.recall, recall, name .. " recall")
            local rev = {}
            for i = #w.thr, 1, -1 do
                rev[#rev + 1] = w.thr[i]
            end
            check(rev, th, name .. " curve thresholds (ascending)")
            local fpr, tpr, thres = _binary_roc_compute({ preds, target }, thresholds)
            check(w.fpr, fpr, name .. " fpr")
            check(w.tpr, tpr, name .. " tpr")
            assert.are.equal(1, thres[1]:item())
            local auroc = _binary_auroc_compute({ preds, target }, thresholds)
            assert.are.equal(0, auroc:dim())
            assert(close(auroc:item(), w.auroc, TOL), name .. " auroc " .. auroc:item())
            local ap = _binary_average_precision_compute({ preds, target }, thresholds)
            assert(close(ap:item(), w.ap, TOL), name .. " ap " .. ap:item())
        end
    end)
end)
