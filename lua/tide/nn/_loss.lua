-- tide.nn._loss: the loss modules that differ only in their name, options and functional, out
-- of the users' sight. Each returns a class (Module:extend(name)).
local core = require("tide.core")
local autograd = require("tide.autograd")
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")

local L = {}

local P = require("tide.pytorch_args")
local compat = require("tide._compat")

-- PyTorch's constructor parameters, in its order, of the losses that take them by position
-- (nn.CrossEntropyLoss(w), nn.MultiMarginLoss(2, 0.5)); GaussianNLLLoss and
-- TripletMarginWithDistanceLoss take theirs by name only, as PyTorch's
local LEGACY = "size_average reduce reduction"
local NAMES = {
    BCELoss = "weight " .. LEGACY, BCEWithLogitsLoss = "weight " .. LEGACY .. " pos_weight",
    CTCLoss = "blank reduction zero_infinity", CosineEmbeddingLoss = "margin " .. LEGACY,
    CrossEntropyLoss = "weight size_average ignore_index reduce reduction label_smoothing",
    HingeEmbeddingLoss = "margin " .. LEGACY, HuberLoss = "reduction delta",
    KLDivLoss = LEGACY .. " log_target", L1Loss = LEGACY, MSELoss = LEGACY,
    MarginRankingLoss = "margin " .. LEGACY, MultiLabelMarginLoss = LEGACY,
    MultiLabelSoftMarginLoss = "weight " .. LEGACY,
    MultiMarginLoss = "p margin weight " .. LEGACY,
    NLLLoss = "weight size_average ignore_index reduce reduction",
    NLLLoss2d = "weight size_average ignore_index reduce reduction",
    PoissonNLLLoss = "log_input full size_average eps reduce reduction",
    SmoothL1Loss = LEGACY .. " beta", SoftMarginLoss = LEGACY,
    TripletMarginLoss = "margin p eps swap " .. LEGACY,
}

-- PyTorch's attributes of each loss beyond reduction and weight, with their defaults: init
-- sets them (L.keep) and forward reads them (L.options), so a set one (loss.margin = 2) counts
local ATTRS = {
    CTCLoss = { blank = 1, zero_infinity = false }, -- blank 1-based (PyTorch's 0)
    CosineEmbeddingLoss = { margin = 0 }, GaussianNLLLoss = { full = false, eps = 1e-6 },
    HingeEmbeddingLoss = { margin = 1 }, HuberLoss = { delta = 1 },
    KLDivLoss = { log_target = false }, MarginRankingLoss = { margin = 0 },
    MultiMarginLoss = { p = 1, margin = 1 },
    PoissonNLLLoss = { log_input = true, full = false, eps = 1e-8 },
    SmoothL1Loss = { beta = 1 },
    TripletMarginLoss = { margin = 1, p = 2, eps = 1e-6, swap = false },
}

local NONE = {} -- the ATTRS of a loss with none (never written)

-- sets a loss's PyTorch attributes from its options (or the defaults): reduction, the ATTRS of
-- its class; opts: the options table (legacy size_average/reduce already resolved) or nil
function L.keep(self, name, opts)
    opts = type(opts) == "table" and opts or {}
    self.reduction = opts.reduction or "mean"
    for k, v in pairs(ATTRS[name] or NONE) do
        if opts[k] == nil then
            self[k] = v
        else
            self[k] = opts[k]
        end
    end
end

-- the options table F's loss takes, from the attributes L.keep set (and weight, a buffer, when
-- the loss has one)
function L.options(self, name)
    local o = { reduction = self.reduction, weight = self.weight }
    for k in pairs(ATTRS[name] or NONE) do
        o[k] = self[k]
    end
    return o
end

-- declares a loss class's PyTorch signature (nn._signature): its options by position too
function L.signature(cls)
    if NAMES[cls.__name] == nil then
        return cls
    end
    local names = {}
    for n in NAMES[cls.__name]:gmatch("%S+") do
        names[#names + 1] = n
    end
    return require("tide.nn._signature").define(cls, { names = names })
end

-- L.forward_args(who, names, ...): a loss call's tensors by position or, last, in a table by
-- name (Python's keywords: loss(x1, x2, target=y) is loss(x1, x2, {target = y})), names the
-- forward's parameters in PyTorch's order; returns them by position
function L.forward_args(who, names, ...)
    local n = select("#", ...)
    if n == 0 or not P.is_options((select(n, ...))) then
        return ...
    end
    local out = compat.pack(...)
    local by_name = out[n]
    out[n] = nil
    for k, v in pairs(by_name) do
        local i = P.position(names, k)
        if not i then
            autograd.raise(string.format("tide: %s: unknown argument \"%s\"; its call takes %s " ..
                "(by position, or the last of them by name)", who, tostring(k),
                table.concat(names, ", ")))
        end
        if i < n then
            P.twice(who, k, i)
        end
        out[i] = v
    end
    return compat.unpack(out, 1, #names)
end

-- a loss's weight option: a tensor or nil. A reduction's name in its place (nn.BCELoss("sum"):
-- PyTorch's first parameter is weight) raises at construction, naming the keyword form
local REDUCTIONS = { mean = true, sum = true, none = true, batchmean = true }
local function check_weight(name, w)
    if w == nil or autograd.is_tensor(w) then
        return
    end
    local hint = (type(w) == "string" and REDUCTIONS[w])
        and ("; the first parameter is weight, as PyTorch's: pass the reduction by name, " ..
            "nn.%s({reduction = \"%s\"})"):format(name, w) or ""
    autograd.raise(("tide: %s: weight must be a tensor, got %s%s"):format(name,
        type(w) == "string" and ("the string \"" .. w .. "\"") or type(w), hint))
end

-- a loss that keeps its options table (keys: the options it takes) and calls F[fn](input,
-- target, opts) after a same-shape check that names the module; extra_reduction: a reduction
-- beyond "mean" | "sum" | "none" that F[fn] takes (KLDivLoss's "batchmean")
function L.pointwise(name, keys, fn, extra_reduction)
    local cls = Module:extend(name)
    function cls:init(opts)
        opts = I.legacy_reduction(opts, name) -- PyTorch's size_average/reduce
        if opts ~= nil then
            core._check_options(opts, name, keys)
            check_weight(name, opts.weight)
            if opts.reduction ~= nil and opts.reduction ~= extra_reduction then
                I.check_reduction(opts.reduction, name)
            end
        end
        self.opts = opts -- as given (read by older code); forward reads the attributes
        L.keep(self, name, opts)
        if opts ~= nil and opts.weight ~= nil then
            self:register_buffer("weight", opts.weight) -- a buffer, as PyTorch's
        end
    end
    function cls:forward(...)
        local input, target = L.forward_args(name, { "input", "target" }, ...)
        I.same_shape_check(input, target, name) -- errors name the module
        return F[fn](input, target, L.options(self, name))
    end
    return L.signature(cls)
end

-- a class loss (I.class_loss_entry's arguments) that also takes PyTorch's unbatched form: input
-- {C} with a 0-d class target (or {C} probabilities) runs as a batch of one, "none" giving 0-d
function L.class_entry(input, target, reduction, o, logp, who)
    if autograd.is_tensor(input) and autograd.is_tensor(target) and input:dim() == 1 and
        (target:dim() == 0 or (target:dim() == 1 and target:is_floating_point())) then
        local loss = I.class_loss_entry(input:unsqueeze(1), target:unsqueeze(1), reduction, o,
            logp, who)
        return reduction == "none" and loss:view({}) or loss
    end
    return I.class_loss_entry(input, target, reduction, o, logp, who)
end

-- binary cross entropy's elementwise -(t log x + (1 - t) log(1 - x)), each log clamped at -100,
-- with PyTorch's gradients: (x - t) / max(x (1 - x), 1e-12) for x (finite at x = 0 or 1, where
-- the clamped logs' chain gives NaN) and log(1 - x) - log(x) for t; both differentiate again
local BCE
function L.bce_terms(input, target)
    if BCE == nil then
        BCE = autograd.Function:extend("BinaryCrossEntropy")
        function BCE.forward(ctx, x, t)
            ctx:save_for_backward(x, t)
            return t:mul(x:log():clamp(-100)):add(t:neg():add(1):mul(
                x:neg():add(1):log():clamp(-100))):neg()
        end
        function BCE.backward(ctx, g)
            local x, t = ctx.saved_tensors[1], ctx.saved_tensors[2]
            local gx, gt
            if ctx.needs_input_grad[1] then
                gx = g:mul(x:sub(t)):div(x:mul(x:neg():add(1)):clamp_min(1e-12))
            end
            if ctx.needs_input_grad[2] then
                gt = g:mul(x:neg():log1p():sub(x:log()))
            end
            return gx, gt
        end
    end
    return BCE.apply(input, target)
end

-- a loss over class targets (CrossEntropyLoss, NLLLoss: log_probs true); the weight is a
-- buffer, as PyTorch's: it follows the module's :to()
function L.class(name, keys, log_probs, base)
    local cls = (base or Module):extend(name) -- base: NLLLoss2d's NLLLoss
    function cls:init(opts)
        opts = I.legacy_reduction(opts, name) -- PyTorch's size_average/reduce
        if type(opts) == "table" then
            core._check_options(opts, name, keys)
            check_weight(name, opts.weight)
            if opts.weight ~= nil then
                self:register_buffer("weight", opts.weight)
            end
            self.ignore_index, self.label_smoothing = opts.ignore_index, opts.label_smoothing
            opts = opts.reduction
        end
        self.reduction = I.check_reduction(opts or "mean", name)
        -- PyTorch's defaults as attributes (label_smoothing: CrossEntropyLoss's only)
        self.ignore_index = self.ignore_index == nil and -100 or self.ignore_index
        if self.label_smoothing == nil and not log_probs then
            self.label_smoothing = 0
        end
    end
    function cls:forward(...)
        local input, target = L.forward_args(name, { "input", "target" }, ...)
        local ignore, eps = self.ignore_index, self.label_smoothing
        return L.class_entry(input, target, self.reduction, { weight = self.weight,
            ignore_index = ignore ~= -100 and ignore or nil, -- the defaults: the fused path
            label_smoothing = eps ~= 0 and eps or nil }, log_probs, name)
    end
    return L.signature(cls)
end

return L
