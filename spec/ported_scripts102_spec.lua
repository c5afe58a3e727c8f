-- ported_scripts102_spec.lua — huggingface/pytorch-image-models' timm/data/mixup.py (one_hot,
-- mixup_target with label smoothing, rand_bbox, rand_bbox_minmax, cutmix_bbox_and_lam, the Mixup
-- class in modes "batch", "pair" and "elem"), timm/loss/cross_entropy.py
-- (LabelSmoothingCrossEntropy, SoftTargetCrossEntropy), timm/loss/jsd.py (JsdCrossEntropy) and
-- facebookresearch/deit's losses.py (DistillationLoss: none / soft / hard, a tiny teacher and a
-- two-headed student, 2 SGD steps), ported line for line at tiny sizes (batch 4 of 3x8x8 images,
-- 5 classes). The Python line stands above each Lua line that differs from it. Dims and class
-- targets are 1-based; the bbox corners stay Python's 0-based half-open bounds, so a slice
-- yl:yh is the range {yl + 1, yh}. mixup.py's numpy draws come from a scripted np.random (below)
-- that returns fixed numbers, the same ones fed to the PyTorch 1.13 run of the same Python.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim

local ported = require("spec.support.ported")
local class = ported.class
local close = ported.close
local assert_close_list = ported.assert_close_list

-- mixup.py's np.random, scripted: each call takes its values from the loaded queue, in call
-- order (randint checks its bounds, as numpy's would refuse nothing but never draws outside)
local np_random = { q = {} }
function np_random.load(...)
    np_random.q = { ... }
end
local function pop(size)
    if size == nil then
        return assert(table.remove(np_random.q, 1), "scripted np.random ran out")
    end
    local v = {}
    for i = 1, size do
        v[i] = pop()
    end
    return v
end
-- np.random.rand(size=None)
function np_random.rand(size)
    return pop(size)
end
-- np.random.beta(a, b, size=None)
function np_random.beta(_, _, size)
    return pop(size)
end
-- np.random.randint(low, high, size=None)
function np_random.randint(lo, hi, size)
    local v = pop(size)
    assert(v >= lo and v < hi, "scripted randint out of [" .. lo .. ", " .. hi .. ")")
    return v
end

---------------------------------------------------------------------------------------------
-- 1. timm/data/mixup.py
---------------------------------------------------------------------------------------------
-- def one_hot(x, num_classes, on_value=1., off_value=0., device='cuda'):
local function one_hot(x, num_classes, on_value, off_value)
    on_value, off_value = on_value or 1., off_value or 0.
    -- x = x.long().view(-1, 1)
    x = x:long():view(-1, 1)
    -- return torch.full((x.size()[0], num_classes), off_value, device=device).scatter_(1, x,
    --     on_value)
    return tide.full({ x:size(1), num_classes }, off_value, { device = x.device })
        :scatter_(2, x, on_value)
end

-- def mixup_target(target, num_classes, lam=1., smoothing=0.0, device='cuda'):
local function mixup_target(target, num_classes, lam, smoothing)
    lam, smoothing = lam or 1., smoothing or 0.0
    local off_value = smoothing / num_classes
    local on_value = 1. - smoothing + off_value
    local y1 = one_hot(target, num_classes, on_value, off_value)
    -- y2 = one_hot(target.flip(0), ...)
    local y2 = one_hot(target:flip({ 1 }), num_classes, on_value, off_value)
    return y1 * lam + y2 * (1. - lam)
end

-- Python's a // b (Lua 5.1 and LuaJIT have no //)
local function idiv(a, b)
    return math.floor(a / b)
end

-- np.clip(v, lo, hi) of a number
local function clip(v, lo, hi)
    return math.min(math.max(v, lo), hi)
end

-- def rand_bbox(img_shape, lam, margin=0., count=None):
-- (count=None, the only use in mixup.py: numbers, not arrays)
local function rand_bbox(img_shape, lam, margin)
    margin = margin or 0.
    -- ratio = np.sqrt(1 - lam)
    local ratio = math.sqrt(1 - lam)
    -- img_h, img_w = img_shape[-2:]
    local img_h, img_w = img_shape[#img_shape - 1], img_shape[#img_shape]
    -- cut_h, cut_w = int(img_h * ratio), int(img_w * ratio)
    local cut_h, cut_w = math.floor(img_h * ratio), math.floor(img_w * ratio)
    local margin_y, margin_x = math.floor(margin * cut_h), math.floor(margin * cut_w)
    local cy = np_random.randint(0 + margin_y, img_h - margin_y)
    local cx = np_random.randint(0 + margin_x, img_w - margin_x)
    -- yl = np.clip(cy - cut_h // 2, 0, img_h)
    local yl = clip(cy - idiv(cut_h, 2), 0, img_h)
    -- yh = np.clip(cy + cut_h // 2, 0, img_h)
    local yh = clip(cy + idiv(cut_h, 2), 0, img_h)
    -- xl = np.clip(cx - cut_w // 2, 0, img_w)
    local xl = clip(cx - idiv(cut_w, 2), 0, img_w)
    -- xh = np.clip(cx + cut_w // 2, 0, img_w)
    local xh = clip(cx + idiv(cut_w, 2), 0, img_w)
    return yl, yh, xl, xh
end

-- def rand_bbox_minmax(img_shape, minmax, count=None):
local function rand_bbox_minmax(img_shape, minmax)
    -- assert len(minmax) == 2
    assert(#minmax == 2)
    local img_h, img_w = img_shape[#img_shape - 1], img_shape[#img_shape]
    -- cut_h = np.random.randint(int(img_h * minmax[0]), int(img_h * minmax[1]), size=count)
    local cut_h = np_random.randint(math.floor(img_h * minmax[1]), math.floor(img_h * minmax[2]))
    local cut_w = np_random.randint(math.floor(img_w * minmax[1]), math.floor(img_w * minmax[2]))
    local yl = np_random.randint(0, img_h - cut_h)
    local xl = np_random.randint(0, img_w - cut_w)
    local yu = yl + cut_h
    local xu = xl + cut_w
    return yl, yu, xl, xu
end

-- def cutmix_bbox_and_lam(img_shape, lam, ratio_minmax=None, correct_lam=True, count=None):
local function cutmix_bbox_and_lam(img_shape, lam, ratio_minmax, correct_lam)
    if correct_lam == nil then correct_lam = true end
    local yl, yu, xl, xu
    if ratio_minmax ~= nil then
        yl, yu, xl, xu = rand_bbox_minmax(img_shape, ratio_minmax)
    else
        yl, yu, xl, xu = rand_bbox(img_shape, lam)
    end
    if correct_lam or ratio_minmax ~= nil then
        local bbox_area = (yu - yl) * (xu - xl)
        -- lam = 1. - bbox_area / float(img_shape[-2] * img_shape[-1])
        lam = 1. - bbox_area / (img_shape[#img_shape - 1] * img_shape[#img_shape])
    end
    -- return (yl, yu, xl, xu), lam
    return { yl, yu, xl, xu }, lam
end

-- Python's slice yl:yh as a tide range (0-based half-open to 1-based inclusive)
local function sl(lo, hi)
    return { lo + 1, hi }
end

-- class Mixup:
local Mixup = class("Mixup")
-- def __init__(self, mixup_alpha=1., cutmix_alpha=0., cutmix_minmax=None, prob=1.0,
--              switch_prob=0.5, mode='batch', correct_lam=True, label_smoothing=0.,
--              num_classes=0):
function Mixup:__init__(o)
    assert((o.num_classes or 0) > 0, "num_classes must be set for target generation")
    self.mixup_alpha = o.mixup_alpha or 1.
    self.cutmix_alpha = o.cutmix_alpha or 0.
    self.cutmix_minmax = o.cutmix_minmax
    if self.cutmix_minmax ~= nil then
        assert(#self.cutmix_minmax == 2)
        -- force cutmix alpha == 1.0 when minmax active to keep logic simple & safe
        self.cutmix_alpha = 1.0
    end
    self.mix_prob = o.prob or 1.0
    self.switch_prob = o.switch_prob or 0.5
    self.label_smoothing = o.label_smoothing or 0.
    self.num_classes = o.num_classes
    self.mode = o.mode or "batch"
    if o.correct_lam == nil then self.correct_lam = true else self.correct_lam = o.correct_lam end
    self.mixup_enabled = true
end

function Mixup:_params_per_elem(batch_size)
    -- lam = np.ones(batch_size, dtype=np.float32)
    -- use_cutmix = np.zeros(batch_size, dtype=np.bool)
    local lam, use_cutmix = {}, {}
    for i = 1, batch_size do
        lam[i], use_cutmix[i] = 1, false
    end
    if self.mixup_enabled then
        local lam_mix
        if self.mixup_alpha > 0. and self.cutmix_alpha > 0. then
            -- use_cutmix = np.random.rand(batch_size) < self.switch_prob
            local r = np_random.rand(batch_size)
            -- lam_mix = np.where(
            --     use_cutmix,
            --     np.random.beta(self.cutmix_alpha, self.cutmix_alpha, size=batch_size),
            --     np.random.beta(self.mixup_alpha, self.mixup_alpha, size=batch_size))
            local b_cut = np_random.beta(self.cutmix_alpha, self.cutmix_alpha, batch_size)
            local b_mix = np_random.beta(self.mixup_alpha, self.mixup_alpha, batch_size)
            lam_mix = {}
            for i = 1, batch_size do
                use_cutmix[i] = r[i] < self.switch_prob
                lam_mix[i] = use_cutmix[i] and b_cut[i] or b_mix[i]
            end
        elseif self.mixup_alpha > 0. then
            lam_mix = np_random.beta(self.mixup_alpha, self.mixup_alpha, batch_size)
        elseif self.cutmix_alpha > 0. then
            -- use_cutmix = np.ones(batch_size, dtype=np.bool)
            for i = 1, batch_size do
                use_cutmix[i] = true
            end
            lam_mix = np_random.beta(self.cutmix_alpha, self.cutmix_alpha, batch_size)
        else
            error("One of mixup_alpha > 0., cutmix_alpha > 0., cutmix_minmax not None should be "
                .. "true.")
        end
        -- lam = np.where(np.random.rand(batch_size) < self.mix_prob,
        --                lam_mix.astype(np.float32), lam)
        -- (the float32 rounding of lam_mix is left out: the values agree to 1e-7)
        local r = np_random.rand(batch_size)
        for i = 1, batch_size do
            if r[i] < self.mix_prob then lam[i] = lam_mix[i] end
        end
    end
    return lam, use_cutmix
end

function Mixup:_params_per_batch()
    local lam = 1.
    local use_cutmix = false
    if self.mixup_enabled and np_random.rand() < self.mix_prob then
        local lam_mix
        if self.mixup_alpha > 0. and self.cutmix_alpha > 0. then
            use_cutmix = np_random.rand() < self.switch_prob
            -- lam_mix = np.random.beta(self.cutmix_alpha, self.cutmix_alpha) if use_cutmix else \
            --     np.random.beta(self.mixup_alpha, self.mixup_alpha)
            if use_cutmix then
                lam_mix = np_random.beta(self.cutmix_alpha, self.cutmix_alpha)
            else
                lam_mix = np_random.beta(self.mixup_alpha, self.mixup_alpha)
            end
        elseif self.mixup_alpha > 0. then
            lam_mix = np_random.beta(self.mixup_alpha, self.mixup_alpha)
        elseif self.cutmix_alpha > 0. then
            use_cutmix = true
            lam_mix = np_random.beta(self.cutmix_alpha, self.cutmix_alpha)
        else
            error("One of mixup_alpha > 0., cutmix_alpha > 0., cutmix_minmax not None should be "
                .. "true.")
        end
        -- lam = float(lam_mix)
        lam = lam_mix
    end
    return lam, use_cutmix
end

function Mixup:_mix_elem(x)
    -- batch_size = len(x)
    local batch_size = #x
    local lam_batch, use_cutmix = self:_params_per_elem(batch_size)
    local x_orig = x:clone() -- need to keep an unmodified original for mixing source
    -- for i in range(batch_size):
    for i = 1, batch_size do
        -- j = batch_size - i - 1
        local j = batch_size - i + 1
        local lam = lam_batch[i]
        if lam ~= 1. then
            if use_cutmix[i] then
                -- (yl, yh, xl, xh), lam = cutmix_bbox_and_lam(
                --     x[i].shape, lam, ratio_minmax=self.cutmix_minmax,
                --     correct_lam=self.correct_lam)
                local bb
                bb, lam = cutmix_bbox_and_lam(x[i].shape, lam, self.cutmix_minmax,
                    self.correct_lam)
                local yl, yh, xl, xh = bb[1], bb[2], bb[3], bb[4]
                -- x[i][:, yl:yh, xl:xh] = x_orig[j][:, yl:yh, xl:xh]
                x[i][{ {}, sl(yl, yh), sl(xl, xh) }] = x_orig[j][{ {}, sl(yl, yh), sl(xl, xh) }]
                lam_batch[i] = lam
            else
                x[i] = x[i] * lam + x_orig[j] * (1 - lam)
            end
        end
    end
    -- return torch.tensor(lam_batch, device=x.device, dtype=x.dtype).unsqueeze(1)
    return tide.tensor(lam_batch, { device = x.device, dtype = x.dtype }):unsqueeze(2)
end

function Mixup:_mix_pair(x)
    local batch_size = #x
    -- lam_batch, use_cutmix = self._params_per_elem(batch_size // 2)
    local lam_batch, use_cutmix = self:_params_per_elem(idiv(batch_size, 2))
    local x_orig = x:clone() -- need to keep an unmodified original for mixing source
    -- for i in range(batch_size // 2):
    for i = 1, idiv(batch_size, 2) do
        -- j = batch_size - i - 1
        local j = batch_size - i + 1
        local lam = lam_batch[i]
        if lam ~= 1. then
            if use_cutmix[i] then
                local bb
                bb, lam = cutmix_bbox_and_lam(x[i].shape, lam, self.cutmix_minmax,
                    self.correct_lam)
                local yl, yh, xl, xh = bb[1], bb[2], bb[3], bb[4]
                -- x[i][:, yl:yh, xl:xh] = x_orig[j][:, yl:yh, xl:xh]
                x[i][{ {}, sl(yl, yh), sl(xl, xh) }] = x_orig[j][{ {}, sl(yl, yh), sl(xl, xh) }]
                -- x[j][:, yl:yh, xl:xh] = x_orig[i][:, yl:yh, xl:xh]
                x[j][{ {}, sl(yl, yh), sl(xl, xh) }] = x_orig[i][{ {}, sl(yl, yh), sl(xl, xh) }]
                lam_batch[i] = lam
            else
                x[i] = x[i] * lam + x_orig[j] * (1 - lam)
                x[j] = x[j] * lam + x_orig[i] * (1 - lam)
            end
        end
    end
    -- lam_batch = np.concatenate((lam_batch, lam_batch[::-1]))
    local n = #lam_batch
    for k = n, 1, -1 do
        lam_batch[#lam_batch + 1] = lam_batch[k]
    end
    return tide.tensor(lam_batch, { device = x.device, dtype = x.dtype }):unsqueeze(2)
end

function Mixup:_mix_batch(x)
    local lam, use_cutmix = self:_params_per_batch()
    if lam == 1. then
        return 1.
    end
    if use_cutmix then
        -- (yl, yh, xl, xh), lam = cutmix_bbox_and_lam(
        --     x.shape, lam, ratio_minmax=self.cutmix_minmax, correct_lam=self.correct_lam)
        local bb
        bb, lam = cutmix_bbox_and_lam(x.shape, lam, self.cutmix_minmax, self.correct_lam)
        local yl, yh, xl, xh = bb[1], bb[2], bb[3], bb[4]
        -- x[:, :, yl:yh, xl:xh] = x.flip(0)[:, :, yl:yh, xl:xh]
        x[{ {}, {}, sl(yl, yh), sl(xl, xh) }] = x:flip({ 1 })[{ {}, {}, sl(yl, yh), sl(xl, xh) }]
    else
        -- x_flipped = x.flip(0).mul_(1. - lam)
        local x_flipped = x:flip({ 1 }):mul_(1. - lam)
        x:mul_(lam):add_(x_flipped)
    end
    return lam
end

function Mixup:__call__(x, target)
    -- assert len(x) % 2 == 0, 'Batch size should be even when using this'
    assert(#x % 2 == 0, "Batch size should be even when using this")
    local lam
    if self.mode == "elem" then
        lam = self:_mix_elem(x)
    elseif self.mode == "pair" then
        lam = self:_mix_pair(x)
    else
        lam = self:_mix_batch(x)
    end
    target = mixup_target(target, self.num_classes, lam, self.label_smoothing)
    return x, target
end

---------------------------------------------------------------------------------------------
-- 2. timm/loss/cross_entropy.py, timm/loss/jsd.py
---------------------------------------------------------------------------------------------
-- class LabelSmoothingCrossEntropy(nn.Module):
local LabelSmoothingCrossEntropy = nn.Module:extend("LabelSmoothingCrossEntropy")
function LabelSmoothingCrossEntropy:init(smoothing)
    smoothing = smoothing or 0.1
    assert(smoothing < 1.0)
    self.smoothing = smoothing
    self.confidence = 1. - smoothing
end

function LabelSmoothingCrossEntropy:forward(x, target)
    -- logprobs = F.log_softmax(x, dim=-1)
    local logprobs = F.log_softmax(x, { dim = -1 })
    -- nll_loss = -logprobs.gather(dim=-1, index=target.unsqueeze(1))
    local nll_loss = -logprobs:gather(-1, target:unsqueeze(2))
    -- nll_loss = nll_loss.squeeze(1)
    nll_loss = nll_loss:squeeze(2)
    -- smooth_loss = -logprobs.mean(dim=-1)
    local smooth_loss = -logprobs:mean(-1)
    local loss = self.confidence * nll_loss + self.smoothing * smooth_loss
    return loss:mean()
end

-- class SoftTargetCrossEntropy(nn.Module):
local SoftTargetCrossEntropy = nn.Module:extend("SoftTargetCrossEntropy")
function SoftTargetCrossEntropy:forward(x, target)
    -- loss = torch.sum(-target * F.log_softmax(x, dim=-1), dim=-1)
    local loss = tide.sum(-target * F.log_softmax(x, { dim = -1 }), -1)
    return loss:mean()
end

-- class JsdCrossEntropy(nn.Module):
local JsdCrossEntropy = nn.Module:extend("JsdCrossEntropy")
-- def __init__(self, num_splits=3, alpha=12, smoothing=0.1):
function JsdCrossEntropy:init(num_splits, alpha, smoothing)
    self.num_splits = num_splits or 3
    self.alpha = alpha or 12
    if smoothing == nil then smoothing = 0.1 end
    -- if smoothing is not None and smoothing > 0:
    if smoothing and smoothing > 0 then
        self.cross_entropy_loss = LabelSmoothingCrossEntropy(smoothing)
    else
        self.cross_entropy_loss = nn.CrossEntropyLoss()
    end
end

-- def __call__(self, output, target): (a Module's call is its forward in tide)
function JsdCrossEntropy:forward(output, target)
    -- split_size = output.shape[0] // self.num_splits
    local split_size = idiv(output.shape[1], self.num_splits)
    assert(split_size * self.num_splits == output.shape[1])
    -- logits_split = torch.split(output, split_size)
    local logits_split = tide.split(output, split_size)

    -- Cross-entropy is only computed on clean images
    -- loss = self.cross_entropy_loss(logits_split[0], target[:split_size])
    local loss = self.cross_entropy_loss(logits_split[1], target[{ { 1, split_size } }])
    -- probs = [F.softmax(logits, dim=1) for logits in logits_split]
    local probs = {}
    for k, logits in ipairs(logits_split) do
        probs[k] = F.softmax(logits, { dim = 2 })
    end

    -- Clamp mixture distribution to avoid exploding KL divergence
    -- logp_mixture = torch.clamp(torch.stack(probs).mean(axis=0), 1e-7, 1).log()
    local logp_mixture = tide.clamp(tide.stack(probs):mean(1), 1e-7, 1):log()
    -- loss += self.alpha * sum([F.kl_div(
    --     logp_mixture, p_split, reduction='batchmean') for p_split in probs]) / len(probs)
    local kl = 0
    for _, p_split in ipairs(probs) do
        kl = kl + F.kl_div(logp_mixture, p_split, { reduction = "batchmean" })
    end
    loss = loss + self.alpha * kl / #probs
    return loss
end

---------------------------------------------------------------------------------------------
-- 3. facebookresearch/deit losses.py
---------------------------------------------------------------------------------------------
-- class DistillationLoss(torch.nn.Module):
local DistillationLoss = nn.Module:extend("DistillationLoss")
-- def __init__(self, base_criterion, teacher_model, distillation_type, alpha, tau):
function DistillationLoss:init(base_criterion, teacher_model, distillation_type, alpha, tau)
    self.base_criterion = base_criterion
    self.teacher_model = teacher_model
    -- assert distillation_type in ['none', 'soft', 'hard']
    assert(({ none = true, soft = true, hard = true })[distillation_type])
    self.distillation_type = distillation_type
    self.alpha = alpha
    self.tau = tau
end

function DistillationLoss:forward(inputs, outputs, labels)
    local outputs_kd = nil
    -- if not isinstance(outputs, torch.Tensor):
    if not tide.is_tensor(outputs) then
        -- assume that the model outputs a tuple of [outputs, outputs_kd]
        -- outputs, outputs_kd = outputs
        outputs, outputs_kd = outputs[1], outputs[2]
    end
    local base_loss = self.base_criterion(outputs, labels)
    if self.distillation_type == "none" then
        return base_loss
    end

    if outputs_kd == nil then
        error("When knowledge distillation is enabled, the model is expected to return a "
            .. "Tuple[Tensor, Tensor] with the output of the class_token and the dist_token")
    end
    -- don't backprop throught the teacher
    -- with torch.no_grad():
    --     teacher_outputs = self.teacher_model(inputs)
    local teacher_outputs = tide.no_grad(function()
        return self.teacher_model(inputs)
    end)

    local distillation_loss
    if self.distillation_type == "soft" then
        local T = self.tau
        -- distillation_loss = F.kl_div(
        --     F.log_softmax(outputs_kd / T, dim=1),
        --     F.log_softmax(teacher_outputs / T, dim=1),
        --     reduction='sum',
        --     log_target=True
        -- ) * (T * T) / outputs_kd.numel()
        distillation_loss = F.kl_div(
            F.log_softmax(outputs_kd / T, { dim = 2 }),
            F.log_softmax(teacher_outputs / T, { dim = 2 }),
            { reduction = "sum", log_target = true }
        ) * (T * T) / outputs_kd:numel()
    elseif self.distillation_type == "hard" then
        -- distillation_loss = F.cross_entropy(outputs_kd, teacher_outputs.argmax(dim=1))
        distillation_loss = F.cross_entropy(outputs_kd, teacher_outputs:argmax(2))
    end

    local loss = base_loss * (1 - self.alpha) + distillation_loss * self.alpha
    return loss
end

---------------------------------------------------------------------------------------------
-- the checks: the same inputs and draws as PyTorch 1.13's run of the Python above
---------------------------------------------------------------------------------------------
-- x = (torch.arange(768, dtype=torch.float32) * 0.375).sin().reshape(4, 3, 8, 8)
-- y = torch.tensor([0, 3, 1, 4])
local function data()
    local x = (tide.arange(0, 768, { dtype = "float32" }) * 0.375):sin():reshape(4, 3, 8, 8)
    return x, tide.tensor({ 1, 4, 2, 5 })
end

local function values(t)
    return t:detach():reshape(-1):totable()
end

-- x.sum(), (x * arange).sum(), (x * (arange * 1.25).cos()).sum(): where each pixel went
local W1 = tide.arange(0, 768, { dtype = "float32" }):reshape(4, 3, 8, 8)
local W2 = (tide.arange(0, 768, { dtype = "float32" }) * 1.25):cos():reshape(4, 3, 8, 8)
local function assert_image_sums(x, want, what)
    assert_close_list(want, { x:sum():item(), (x * W1):sum():item(), (x * W2):sum():item() },
        1e-5, what)
end

describe("ported timm mixup.py", function()
    it("one_hot and mixup_target with label smoothing", function()
        local _, y = data()
        assert_close_list({ 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1 },
            values(one_hot(y, 5)), 0, "one_hot")
        local a, b, c = 0.649999976, 0.0199999996, 0.290000021
        assert_close_list({ a, b, b, b, c, b, c, b, a, b, b, a, b, c, b, c, b, b, b, a },
            values(mixup_target(y, 5, 0.7, 0.1)), 1e-6, "mixup_target")
    end)

    it("rand_bbox clips, rand_bbox_minmax, cutmix_bbox_and_lam's correct_lam", function()
        np_random.load(6, 1)
        assert.are.same({ 4, 8, 0, 3 }, { rand_bbox({ 4, 3, 8, 8 }, 0.65) })
        np_random.load(3, 5, 2, 1)
        assert.are.same({ 2, 5, 1, 6 }, { rand_bbox_minmax({ 4, 3, 8, 8 }, { 0.25, 0.75 }) })
        np_random.load(6, 1)
        local bb, lam = cutmix_bbox_and_lam({ 4, 3, 8, 8 }, 0.65)
        assert.are.same({ 4, 8, 0, 3 }, bb)
        assert.are.equal(0.8125, lam)
        np_random.load(6, 1)
        bb, lam = cutmix_bbox_and_lam({ 4, 3, 8, 8 }, 0.65, nil, false)
        assert.are.equal(0.65, lam)
        np_random.load(6, 100)
        assert.has_error(function() rand_bbox({ 4, 3, 8, 8 }, 0.65) end)
    end)

    local cases = {
        { "batch mixup", { mixup_alpha = 1. }, { 0.3, 0.6 },
            { 1.69852626, 391.688202, 0.445448816 },
            { 0.6, 0, 0, 0, 0.4, 0, 0.4, 0, 0.6, 0, 0, 0.6, 0, 0.4, 0, 0.4, 0, 0, 0, 0.6 } },
        { "batch cutmix", { mixup_alpha = 0., cutmix_alpha = 1. }, { 0.2, 0.65, 6, 1 },
            { 1.69852448, -1075.13086, -8.57257271 },
            { 0.8125, 0, 0, 0, 0.1875, 0, 0.1875, 0, 0.8125, 0, 0, 0.8125, 0, 0.1875, 0, 0.1875,
                0, 0, 0, 0.8125 } },
        { "batch switch to minmax cutmix, smoothing", { mixup_alpha = 0.8, cutmix_alpha = 1.,
            cutmix_minmax = { 0.25, 0.75 }, label_smoothing = 0.1 }, { 0.1, 0.4, 0.5, 3, 5, 2, 1 },
            { 1.69852924, -4649.98486, -7.3414793 },
            { 0.709062517, 0.02, 0.02, 0.02, 0.230937496, 0.02, 0.230937496, 0.02, 0.709062517,
                0.02, 0.02, 0.709062517, 0.02, 0.230937496, 0.02, 0.230937496, 0.02, 0.02, 0.02,
                0.709062517 } },
        { "pair", { mixup_alpha = 1., cutmix_alpha = 1., mode = "pair" },
            { 0.7, 0.2, 0.3, 0.6, 0.45, 0.9, 0.5, 0.5, 3, 5 },
            { 1.69852746, 2371.40039, 8.46419525 },
            { 0.45, 0, 0, 0, 0.55, 0, 0.25, 0, 0.75, 0, 0, 0.75, 0, 0.25, 0, 0.55, 0, 0, 0,
                0.45 } },
        { "elem", { mixup_alpha = 1., cutmix_alpha = 1., mode = "elem", prob = 0.75,
            label_smoothing = 0.1 },
            { 0.1, 0.9, 0.3, 0.6, 0.5, 0.2, 0.7, 0.3, 0.35, 0.55, 0.25, 0.8, 0.2, 0.5, 0.9, 0.1,
                0, 7 },
            { 5.7419858, 1202.02002, -6.20431042 },
            { 0.835624993, 0.02, 0.02, 0.02, 0.104374997, 0.02, 0.425000012, 0.02, 0.515000045,
                0.02, 0.02, 0.920000017, 0.02, 0.02, 0.02, 0.199999988, 0.02, 0.02, 0.02,
                0.74000001 } },
    }
    for _, case in ipairs(cases) do
        local name, kw, draws, want_x, want_t = case[1], case[2], case[3], case[4], case[5]
        it("Mixup " .. name .. ": the mixed images and targets are PyTorch's", function()
            local x, y = data()
            np_random.load((table.unpack or unpack)(draws))
            kw.num_classes = 5
            local m = Mixup(kw)
            local xm, t = m(x, y)
            assert.are.equal(0, #np_random.q) -- every fixed draw was taken
            assert.are.equal(x, xm) -- mixed in place, as mixup.py
            assert.are.same({ 2, 4, 5 }, { t:dim(), t:size(1), t:size(2) })
            assert_image_sums(xm, want_x, name .. " images")
            assert_close_list(want_t, values(t), 1e-6, name .. " targets")
        end)
    end
end)

-- logits = (torch.arange(20, dtype=torch.float32) * 0.875).cos().reshape(4, 5) * 2
local function logits_data()
    return (tide.arange(0, 20, { dtype = "float32" }) * 0.875):cos():reshape(4, 5) * 2
end

describe("ported timm soft-target losses", function()
    it("LabelSmoothingCrossEntropy, SoftTargetCrossEntropy and JsdCrossEntropy", function()
        local logits = logits_data()
        local x, y = data()
        np_random.load(0.1, 0.9, 0.3, 0.6, 0.5, 0.2, 0.7, 0.3, 0.35, 0.55, 0.25, 0.8, 0.2, 0.5,
            0.9, 0.1, 0, 7)
        local _, tsoft = Mixup({ num_classes = 5, mixup_alpha = 1., cutmix_alpha = 1.,
            mode = "elem", prob = 0.75, label_smoothing = 0.1 })(x, y)
        assert(close(LabelSmoothingCrossEntropy(0.1)(logits, y):item(), 2.31237078, 1e-6))
        assert(close(SoftTargetCrossEntropy()(logits, tsoft):item(), 2.31197882, 1e-6))
        assert(close(JsdCrossEntropy(2)(logits, y):item(), 6.40047693, 1e-6))
        -- smoothing=0: torch.nn.CrossEntropyLoss
        assert(close(JsdCrossEntropy(2, 12, 0)(logits, y):item(), 6.25625181, 1e-6))
    end)
end)

-- def init_linear(l, k): weight (arange * k).sin() * 0.1, bias (arange * k).cos() * 0.1
local function init_linear(l, k)
    tide.no_grad(function()
        local n = l.weight:numel()
        l.weight:copy_((tide.arange(0, n, { dtype = "float32" }) * k):sin()
            :reshape(l.weight.shape) * 0.1)
        l.bias:copy_((tide.arange(0, l.bias:numel(), { dtype = "float32" }) * k):cos() * 0.1)
    end)
end

-- a student with a class head and a distillation head, returning (outputs, outputs_kd)
local Student = nn.Module:extend("Student")
function Student:init()
    self.head = nn.Linear(192, 5)
    self.head_dist = nn.Linear(192, 5)
    init_linear(self.head, 0.3125)
    init_linear(self.head_dist, 0.46875)
end
function Student:forward(x)
    x = x:flatten(2)
    -- return self.head(x), self.head_dist(x)
    return { self.head(x), self.head_dist(x) }
end

local Teacher = nn.Module:extend("Teacher")
function Teacher:init()
    self.fc = nn.Linear(192, 5)
    init_linear(self.fc, 0.234375)
end
function Teacher:forward(x)
    return self.fc(x:flatten(2))
end

describe("ported deit losses.py DistillationLoss", function()
    local W = tide.arange(0, 960, { dtype = "float32" }):reshape(5, 192)
    local want = {
        none = { { 1.69681919, 1.1810019 }, 179.268097,
            { 0.107267499, 0.150762498, -0.0657931566, 0.120697662, 0.0540313497 },
            { 0.100000001, 0.0892133713, 0.0591805093, 0.0163804796, -0.0299533512 } },
        soft = { { 0.849513829, 0.685007215 }, 177.314148,
            { 0.111674383, 0.118321165, 0.000144641846, 0.0852752253, 0.051550433 },
            { 0.0982510149, 0.090232864, 0.0591954738, 0.0162977166, -0.0291560628 } },
        hard = { { 1.6658783, 1.23105502 }, 68.3977509,
            { 0.111674383, 0.118321165, 0.000144641846, 0.0852752253, 0.051550433 },
            { 0.126455382, 0.103560939, 0.0674729943, -0.0738756061, 0.011207303 } },
    }
    for _, dt in ipairs({ "none", "soft", "hard" }) do
        it(dt .. ": the losses and the weights after 2 SGD steps on mixup batches", function()
            local teacher = Teacher()
            local student = Student()
            -- DistillationLoss(SoftTargetCrossEntropy(), teacher, dt, alpha=0.5, tau=3.0)
            local crit = DistillationLoss(SoftTargetCrossEntropy(), teacher, dt, 0.5, 3.0)
            local opt = optim.SGD(student:parameters(), { lr = 0.5 })
            local losses = {}
            for _ = 1, 2 do
                local x, y = data()
                np_random.load(0.3, 0.6)
                local samples, targets = Mixup({ num_classes = 5, mixup_alpha = 1.,
                    label_smoothing = 0.1 })(x, y)
                local outputs = student(samples)
                local loss = crit(samples, outputs, targets)
                losses[#losses + 1] = loss:item()
                opt:zero_grad()
                loss:backward()
                opt:step()
            end
            local w = want[dt]
            assert_close_list(w[1], losses, 1e-5, dt .. " losses")
            assert(losses[2] < losses[1])
            assert(close((student.head_dist.weight * W):sum():item(), w[2], 1e-5))
            assert_close_list(w[3], values(student.head.bias), 1e-5, dt .. " head.bias")
            assert_close_list(w[4], values(student.head_dist.bias), 1e-5, dt .. " head_dist.bias")
            -- the teacher takes no step
            assert.is_nil(teacher.fc.weight.grad)
        end)
    end

    it("a tensor output with a distillation type raises, as deit's ValueError", function()
        local crit = DistillationLoss(SoftTargetCrossEntropy(), Teacher(), "soft", 0.5, 3.0)
        local x = data()
        local out = Student()(x)[1]
        assert.has_error(function()
            crit(x, out, tide.full({ 4, 5 }, 0.2))
        end, "When knowledge distillation is enabled, the model is expected to return a "
            .. "Tuple[Tensor, Tensor] with the output of the class_token and the dist_token")
    end)
end)
