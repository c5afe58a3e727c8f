-- tide.nn._functional_losses: the losses of PyTorch 1.13 that ported scripts reach for beyond
-- functional.lua's (soft_margin_loss, hinge_embedding_loss, multilabel_soft_margin_loss,
-- multi_margin_loss, poisson_nll_loss, gaussian_nll_loss, multilabel_margin_loss, ctc_loss),
-- added to F from the end of functional.lua. Each is a chain of tensor ops in PyTorch's order, so autograd
-- and every device come with it. Class targets are 1-based; a target out of range raises on
-- cpu:0 (where reading it back is free) and turns the loss into NaN elsewhere, as cross_entropy.
local compat = require("tide._compat")
local core = require("tide.core")
local autocast = require("tide._autocast")
local autograd = require("tide.autograd")
local I = require("tide.nn._internal")
local raise = autograd.raise
local is_tensor = autograd.is_tensor

local shape_str = I.shape_str
local unpack = compat.unpack

local A = require("tide.nn._args")
local options, number_opt, bool_opt, tensor_arg = A.options, A.number_opt, A.bool_opt,
    A.tensor_arg

local function loss_options(opts, who, known)
    local o = options(opts, who, known)
    return o, I.check_reduction(o.reduction or "mean", who)
end

local same_shape = require("tide.op_args").same_shape

-- a per-class weight: a tensor of shape {C} on the input's device
local function class_weight(w, input, c, who)
    if w == nil then
        return nil
    end
    if not is_tensor(w) or w:dim() ~= 1 or w:size(1) ~= c then
        raise(string.format("tide: %s: expected weight of shape {%d} (one per class), got %s",
            who, c, is_tensor(w) and shape_str(w.shape) or type(w)))
    end
    I.check_device(input, w, who, "weight")
    return w
end

local function integer_targets(target, who, fix)
    if target.dtype ~= "int64" and target.dtype ~= "int32" then
        raise(string.format("tide: %s: expected integer class targets (int64, 1-based), got " ..
            "%s; %s", who, target.dtype, fix))
    end
end

-- bad: a count of out-of-range targets (a 0-d tensor). On cpu:0 a nonzero count raises what
-- message(first bad value) says; elsewhere it returns a 0-d term that is NaN when the count is
-- nonzero and -0 otherwise, for the loss to add (no transfer, no guard)
local function range_guard(bad, target, input, is_bad, message)
    if I.on_host(target) then
        if bad:item() ~= 0 then
            local first
            for _, v in ipairs(target:reshape(-1):totable()) do
                if first == nil and is_bad(v) then
                    first = v
                end
            end
            raise(message(compat.tointeger(first) or first))
        end
        return nil
    end
    return bad:to(input.dtype):neg():sqrt()
end

local function guarded(loss, poison)
    return poison and loss:add(poison) or loss
end

return function(F)
    -- soft_margin_loss(input, target[, {reduction}]): log(1 + exp(-target * input)), targets
    -- 1 or -1, of the input's shape
    function F.soft_margin_loss(input, target, opts)
        if autocast.on then
            input, target = autocast.fp32(input, target)
        end
        local who = "soft_margin_loss"
        local _, reduction = loss_options(opts, who, { "reduction" })
        I.same_shape_check(input, target, who)
        return I.pointwise_loss("soft_margin", input, target, reduction, 0, who, function(x, t)
            return x:neg():mul(t):exp():log1p()
        end)
    end

    -- hinge_embedding_loss(input, target[, {margin = 1, reduction}]): input where target is 1,
    -- max(0, margin - input) where it is -1 (any other target takes both terms, as PyTorch's)
    function F.hinge_embedding_loss(input, target, opts)
        if autocast.on then
            input, target = autocast.fp32(input, target)
        end
        local who = "hinge_embedding_loss"
        local o, reduction = loss_options(opts, who, { "reduction", "margin" })
        local margin = number_opt(o.margin, 1, who, "margin")
        I.same_shape_check(input, target, who)
        local margin_clamp = input:neg():add(margin):clamp_min(0)
        local out = core.where(target:ne(1), margin_clamp, 0) + core.where(target:ne(-1), input, 0)
        return I.reduce(out, reduction, who)
    end

    -- multilabel_soft_margin_loss(input, target[, {weight, reduction}]): input [N, C] or [C],
    -- target of its shape in [0, 1]; the mean over classes of each binary cross entropy with
    -- logits (weight [C] scales each class), then the reduction over N
    function F.multilabel_soft_margin_loss(input, target, opts)
        local who = "multilabel_soft_margin_loss"
        local o, reduction = loss_options(opts, who, { "reduction", "weight" })
        I.same_shape_check(input, target, who)
        if input:dim() < 1 then
            raise(string.format("tide: %s: expected input of shape {N, C} or {C}, got %s", who,
                shape_str(input.shape)))
        end
        local cd = input:dim()
        local c = input:size(cd)
        local weight = class_weight(o.weight, input, c, who)
        local loss = target:mul(F.logsigmoid(input)):add(
            target:neg():add(1):mul(F.logsigmoid(input:neg()))):neg()
        if weight then
            loss = loss:mul(weight)
        end
        return I.reduce(loss:sum(cd):div(c), reduction, who)
    end

    -- input [N, C] or [C] with C > 0 and a target on its device; input's dims
    local function class_input(input, target, who)
        tensor_arg(input, who, "input")
        tensor_arg(target, who, "target")
        I.check_same_device(input, target, who)
        local nd = input:dim()
        if nd < 1 or nd > 2 or input:size(nd) == 0 then
            raise(string.format("tide: %s: expected input of shape {N, C} or {C} with C > 0, " ..
                "got %s", who, shape_str(input.shape)))
        end
        return nd
    end

    -- input [N, C] or [C]; target [N] or a 0-d, 1-based classes; rows [N, C] and targets [N, 1]
    local function class_rows(input, target, who)
        local nd = class_input(input, target, who)
        integer_targets(target, who, "convert with target:long()")
        local n = nd == 2 and input:size(1) or 1
        if target:dim() > 1 or target:numel() ~= n then
            raise(string.format("tide: %s: expected target of shape %s (one class per row) for " ..
                "input %s, got %s", who, nd == 2 and "{" .. n .. "}" or "{} or {1}",
                shape_str(input.shape), shape_str(target.shape)))
        end
        return input:reshape(n, input:size(nd)), target:reshape(n, 1), n
    end

    -- multi_margin_loss(input, target[, {p = 1, margin = 1, weight, reduction}]): for each row,
    -- the sum over classes d other than the target y of max(0, margin - x[y] + x[d])^p (times
    -- weight[y]), over C; no gradient where that is exactly 0 (PyTorch's kernel takes z > 0)
    function F.multi_margin_loss(input, target, opts)
        if autocast.on then
            input, target = autocast.fp32(input, target)
        end
        local who = "multi_margin_loss"
        local o, reduction = loss_options(opts, who, { "reduction", "p", "margin", "weight" })
        local p = number_opt(o.p, 1, who, "p")
        if p ~= 1 and p ~= 2 then
            raise(string.format("tide: %s: expected p to be 1 or 2, got %s", who, tostring(p)))
        end
        local margin = number_opt(o.margin, 1, who, "margin")
        local x, t, n = class_rows(input, target, who)
        local c = x:size(2)
        local weight = class_weight(o.weight, input, c, who)
        local classes = core.arange(1, c + 1, { device = t.device, dtype = t.dtype })
        local is_y = t:eq(classes:view(1, c)) -- [N, C]
        local bad = is_y:sum():neg():add(n)
        local poison = range_guard(bad, target, input, function(v) return v < 1 or v > c end,
            function(v)
                return string.format("tide: %s: target %s out of range for %d classes; class " ..
                    "targets are 1-based, in 1..%d", who, tostring(v), c, c)
            end)
        local tc = t:clamp(1, c) -- in range for gather when the guard only poisons
        local z = x:gather(2, tc):neg():add(margin):add(x)
        local h = core.where(z:gt(0):logical_and(is_y:logical_not()), z, 0)
        if p == 2 then
            h = h:mul(h)
        end
        if weight then
            h = h:mul(weight:index_select(1, tc:view(n)):view(n, 1))
        end
        local loss = h:sum(2):div(c)
        if input:dim() == 1 then
            loss = loss:view({})
        end
        return guarded(I.reduce(loss, reduction, who), poison)
    end

    -- poisson_nll_loss(input, target[, {log_input = true, full = false, eps = 1e-8,
    -- reduction}]): exp(input) - target input (input a log-rate), or input - target log(input
    -- + eps); full adds Stirling's approximation of log(target!) where target > 1
    function F.poisson_nll_loss(input, target, opts)
        if autocast.on then
            input, target = autocast.fp32(input, target)
        end
        local who = "poisson_nll_loss"
        local o, reduction = loss_options(opts, who, { "reduction", "log_input", "full", "eps" })
        local log_input = bool_opt(o.log_input, true, who, "log_input")
        local full = bool_opt(o.full, false, who, "full")
        local eps = number_opt(o.eps, 1e-8, who, "eps")
        I.same_shape_check(input, target, who)
        local loss
        if log_input then
            loss = input:exp():sub(target:mul(input))
        else
            loss = input:sub(target:mul(input:add(eps):log()))
        end
        if full then
            local stirling = target:mul(target:log()):sub(target)
                :add(target:mul(2 * math.pi):log():mul(0.5))
            loss = loss:add(stirling:masked_fill(target:le(1), 0))
        end
        return I.reduce(loss, reduction, who)
    end

    -- gaussian_nll_loss(input, target, var[, {full = false, eps = 1e-6, reduction}]):
    -- 0.5 (log(var) + (input - target)^2 / var) (+ 0.5 log(2 pi) when full). var has the
    -- input's shape, or drops its last dim, or has 1 there (one variance per row). var is
    -- clamped at eps in the values only: its gradient passes the clamp untouched, as PyTorch's
    -- (which clamps a clone under no_grad)
    function F.gaussian_nll_loss(input, target, var, opts)
        local who = "gaussian_nll_loss"
        local o, reduction = loss_options(opts, who, { "reduction", "full", "eps" })
        local full = bool_opt(o.full, false, who, "full")
        local eps = number_opt(o.eps, 1e-6, who, "eps")
        tensor_arg(input, who, "input")
        tensor_arg(target, who, "target")
        tensor_arg(var, who, "var")
        I.same_shape_check(input, target, who)
        I.check_device(input, var, who, "var")
        local is, vs = input.shape, var.shape
        if not same_shape(is, vs) then
            local lead = { unpack(is, 1, #is - 1) }
            if #is >= 1 and same_shape(lead, vs) then
                var = var:unsqueeze(-1)
            elseif not (#is >= 1 and #vs == #is and vs[#vs] == 1 and
                    same_shape(lead, { unpack(vs, 1, #vs - 1) })) then
                local lead1 = { unpack(lead) }
                lead1[#lead1 + 1] = 1
                local row = #is >= 1 and string.format(", or %s or %s (one variance per row)",
                    shape_str(lead), shape_str(lead1)) or ""
                raise(string.format("tide: %s: expected var of the input's shape %s%s, got %s",
                    who, shape_str(is), row, shape_str(vs)))
            end
        end
        local poison = range_guard(var:lt(0):sum(), var, input, function(v) return v < 0 end,
            function(v)
                return string.format("tide: %s: var has a negative entry (%s); variances must " ..
                    "be >= 0", who, tostring(v))
            end)
        local plain = var:detach()
        -- the clamped values, with var's gradient: (var - var) is 0 exactly, so the values are
        -- the clamp's bit for bit
        local v = plain:clamp_min(eps):add(var:sub(plain))
        local d = input:sub(target)
        local loss = v:log():add(d:mul(d):div(v)):mul(0.5)
        if full then
            loss = loss:add(0.5 * math.log(2 * math.pi))
        end
        return guarded(I.reduce(loss, reduction, who), poison)
    end

    -- multilabel_margin_loss(input, target[, {reduction}]): input [N, C] or [C], target of
    -- its shape holding each row's 1-based classes, the list ended by the first 0 (PyTorch's
    -- targets + 1: its list ends at -1). For each listed class j and each unlisted class i,
    -- max(0, 1 - (x[j] - x[i])), summed over C; no gradient where that is exactly 0
    function F.multilabel_margin_loss(input, target, opts)
        if autocast.on then
            input, target = autocast.fp32(input, target)
        end
        local who = "multilabel_margin_loss"
        local _, reduction = loss_options(opts, who, { "reduction" })
        local nd = class_input(input, target, who)
        integer_targets(target, who, "convert with target:long() (PyTorch's targets + 1)")
        if not same_shape(input.shape, target.shape) then
            raise(string.format("tide: %s: expected target of the input's shape %s (each " ..
                "row's classes, ended by 0), got %s", who, shape_str(input.shape),
                shape_str(target.shape)))
        end
        local n = nd == 2 and input:size(1) or 1
        local c = input:size(nd)
        local x, t = input:reshape(n, c), target:reshape(n, c)
        local bad = t:lt(0):logical_or(t:gt(c)):sum()
        local poison = range_guard(bad, target, input, function(v) return v < 0 or v > c end,
            function(v)
                return string.format("tide: %s: target %s out of range for %d classes; " ..
                    "targets are 1-based classes in 1..%d, each row's list ended by 0 " ..
                    "(PyTorch's targets + 1)", who, tostring(v), c, c)
            end)
        -- listed: the entries before a row's first 0
        local listed = t:eq(0):long():cumsum(2):eq(0) -- [N, K]
        local tc = t:clamp(1, c)
        -- a class is a target where a listed entry names it: [N, C], no [N, K, C] compare
        local is_target = core.zeros({ n, c }, { device = t.device, dtype = "int64" })
            :scatter_add(2, tc, listed:long()):gt(0) -- [N, C]
        -- on the host, only the first k entries (the longest list) can be listed
        local k = c
        if n > 0 and I.on_host(target) then
            k = math.max(1, compat.tointeger(listed:long():sum(2):max():item()))
            listed, tc = listed:narrow(2, 1, k), tc:narrow(2, 1, k)
        end
        local z = x:gather(2, tc):neg():add(1):view(n, k, 1):add(x:view(n, 1, c)) -- [N, K, C]
        local keep = z:gt(0):logical_and(listed:view(n, k, 1))
            :logical_and(is_target:logical_not():view(n, 1, c))
        local loss = core.where(keep, z, 0):reshape(n, k * c):sum(2):div(c)
        if nd == 1 then
            loss = loss:view({})
        end
        return guarded(I.reduce(loss, reduction, who), poison)
    end

    -- ctc_loss(log_probs [T, N, C], targets, input_lengths, target_lengths[, {blank = 1,
    -- reduction = "mean", zero_infinity = false}]): the connectionist temporal classification
    -- loss, -log of the probability of each target over every alignment, by the forward
    -- recursion over the extended labels (blanks between and around the target's), all samples
    -- at once, one step of a few ops per time step: autograd differentiates it. targets are
    -- 1-based classes, padded {N, S} or concatenated 1-D; lengths are tensors or lists. "mean"
    -- divides each loss by its target length, then averages (PyTorch's). An infeasible target
    -- gives inf (0 with zero_infinity, whose gradient is 0).
    local CTC_NONE = -1e30 -- log(0) kept finite: an unreachable state's gradient stays 0, not NaN
    local function lengths_of(v, n, who, what)
        if is_tensor(v) then
            v = v:to("cpu"):totable() -- (read back: the lengths drive the recursion)
        end
        if type(v) ~= "table" or #v ~= n then
            raise(string.format("tide: %s: %s must list %d lengths (one per sample), got %s",
                who, what, n, type(v) == "table" and tostring(#v) .. " of them" or type(v)))
        end
        for i, l in ipairs(v) do
            if not compat.is_integer(l) or l < 0 then
                raise(string.format("tide: %s: %s[%d] must be an integer >= 0, got %s", who,
                    what, i, tostring(l)))
            end
        end
        return v
    end

    function F.ctc_loss(log_probs, targets, input_lengths, target_lengths, opts)
        local who = "ctc_loss"
        tensor_arg(log_probs, who, "log_probs")
        tensor_arg(targets, who, "targets")
        local o, reduction = loss_options(opts, who, { "blank", "reduction", "zero_infinity" })
        local zero_inf = bool_opt(o.zero_infinity, false, who, "zero_infinity")
        if log_probs:dim() ~= 3 then
            raise("tide: ctc_loss: expected log_probs {T, N, C}, got " .. shape_str(log_probs.shape))
        end
        local T, N, C = log_probs:size(1), log_probs:size(2), log_probs:size(3)
        local blank = o.blank == nil and 1 or o.blank
        if not compat.is_integer(blank) or blank < 1 or blank > C then
            raise(string.format("tide: ctc_loss: blank must be a class 1..%d, got %s", C,
                tostring(blank)))
        end
        I.check_device(log_probs, targets, who, "targets")
        local in_len = lengths_of(input_lengths, N, who, "input_lengths")
        local tg_len = lengths_of(target_lengths, N, who, "target_lengths")
        local L = 0
        for i = 1, N do
            if in_len[i] > T then
                raise(string.format("tide: ctc_loss: input_lengths[%d] = %d exceeds the %d " ..
                    "time steps of log_probs", i, in_len[i], T))
            end
            L = math.max(L, tg_len[i])
        end
        -- the targets as {N, L}, 1-based classes (padding 1: never read past a length)
        local tg
        local dev = log_probs.device
        if targets:dim() == 2 then
            if targets:size(1) ~= N or targets:size(2) < L then
                raise(string.format("tide: ctc_loss: padded targets must be {%d, >= %d}, got %s",
                    N, L, shape_str(targets.shape)))
            end
            tg = targets:narrow(2, 1, math.max(L, 1)):long()
            -- PyTorch reads no label past a row's length, so its padding may hold any value
            local lens = core.tensor(tg_len, { dtype = "int64", device = dev }):view(N, 1)
            local pos = core.arange(1, tg:size(2) + 1, { dtype = "int64", device = dev })
            tg = tg:masked_fill(pos:view(1, -1):gt(lens), 1)
        elseif targets:dim() == 1 then
            local total = 0
            for i = 1, N do
                total = total + tg_len[i]
            end
            if targets:size(1) ~= total then
                raise(string.format("tide: ctc_loss: concatenated targets hold %d labels, the " ..
                    "target lengths sum to %d", targets:size(1), total))
            end
            local rows, at = {}, 1
            for i = 1, N do
                local row = core.ones({ math.max(L, 1) }, { dtype = "int64", device = dev })
                if tg_len[i] > 0 then
                    row = core.cat({ targets:narrow(1, at, tg_len[i]):long(),
                        row:narrow(1, 1, math.max(L, 1) - tg_len[i]) }, 1)
                end
                rows[i], at = row, at + tg_len[i]
            end
            tg = core.stack(rows, 1)
        else
            raise("tide: ctc_loss: targets must be {N, S} (padded) or 1-D (concatenated), got " ..
                shape_str(targets.shape))
        end
        -- the extended labels {N, S}: blank, l1, blank, l2, ..., blank
        local S = 2 * L + 1
        local ext = core.full({ N, S }, blank, { dtype = "int64", device = dev })
        if L > 0 then
            local evens = core.arange(2, 2 * L + 1, 2, { dtype = "int64", device = dev })
            ext:scatter_(2, evens:view(1, L):expand(N, L), tg:narrow(2, 1, L))
        end
        -- s may come from s - 2: a label that differs from the one two back (no blank there)
        local skip_ok = core.zeros({ N, S }, { dtype = "bool", device = dev })
        if S > 2 then
            local cur, back = ext:narrow(2, 3, S - 2), ext:narrow(2, 1, S - 2)
            skip_ok = core.cat({ core.zeros({ N, 2 }, { dtype = "bool", device = dev }),
                cur:ne(blank):logical_and(cur:ne(back)) }, 2)
        end
        local none = core.full({ N, 1 }, CTC_NONE, { dtype = log_probs.dtype, device = dev })
        local function emit(t) -- log p of each extended label at time t: {N, S}
            return log_probs:select(1, t):gather(2, ext)
        end
        local pos = core.arange(1, S + 1, { dtype = "int64", device = dev }):view(1, S)
        local alpha = core.where(pos:le(2), emit(1), CTC_NONE)
        local tlen = core.tensor(in_len, { dtype = "int64", device = dev }):view(N, 1)
        for t = 2, T do
            local a1 = core.cat({ none, alpha:narrow(2, 1, S - 1) }, 2)
            local a2 = S > 2 and core.where(skip_ok, core.cat({ none, none,
                alpha:narrow(2, 1, S - 2) }, 2), CTC_NONE) or core.full({ N, S }, CTC_NONE,
                { dtype = log_probs.dtype, device = dev })
            local m = alpha:maximum(a1):maximum(a2)
            local sum = (alpha - m):exp() + (a1 - m):exp() + (a2 - m):exp()
            local nxt = m + sum:log() + emit(t)
            alpha = core.where(tlen:ge(t), nxt, alpha) -- a sample past its length keeps its alpha
        end
        -- the last label or the blank after it: positions 2 L_n + 1 and 2 L_n
        local last = core.tensor(tg_len, { dtype = "int64", device = dev }):view(N, 1) * 2 + 1
        local at_end = alpha:gather(2, last)
        local before = core.where(last:gt(1), alpha:gather(2, (last - 1):clamp(1, nil)), CTC_NONE)
        local m = at_end:maximum(before)
        local loss = -(m + ((at_end - m):exp() + (before - m):exp()):log()):view(N)
        -- an infeasible alignment never left CTC_NONE's scale
        local infeasible = loss:detach():gt(-CTC_NONE / 2)
        loss = core.where(infeasible, zero_inf and 0 or math.huge, loss)
        if reduction == "mean" then
            local lens = core.tensor(tg_len, { dtype = log_probs.dtype, device = dev })
            return (loss / lens:clamp(1, nil)):mean()
        end
        return I.reduce(loss, reduction, who)
    end
end
