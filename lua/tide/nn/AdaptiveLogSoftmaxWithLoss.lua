-- nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs[, {div_value = 4, head_bias =
-- false}]): PyTorch's adaptive softmax (Grave et al., 2016). The classes 1..cutoffs[1] (the
-- shortlist) and one entry per cluster share the head, Linear(in_features, cutoffs[1] +
-- #cutoffs); cluster i (classes cutoffs[i] + 1 .. cutoffs[i + 1], the last ending at
-- n_classes) has its tail, tail[i] = Sequential(Linear(in_features, floor(in_features /
-- div_value^i), no bias), Linear(that, its class count, no bias)). forward(input {N, in} or
-- {in}, target {N} or {} of 1-based classes) gives output (each target's log-probability) and
-- loss (the mean of -output): PyTorch's named tuple as two results. log_prob(input {N, in})
-- gives every class's log-probability {N, n_classes}; predict(input) the most likely 1-based
-- class of each row. The parameters are PyTorch's (head.weight, tail.1.1.weight, ...: the
-- state_dict names PyTorch writes tail.0.0.weight).
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local compat = require("tide._compat")
local Module = require("tide.nn.Module")
local Linear = require("tide.nn.Linear")
local Sequential = require("tide.nn.Sequential")
local ModuleList = require("tide.nn.ModuleList")
local I = require("tide.nn._internal")

local WHO = "AdaptiveLogSoftmaxWithLoss"

local ASM = Module:extend(WHO)

local function show(v)
    if type(v) ~= "table" or autograd.is_tensor(v) then
        return autograd.is_tensor(v) and "a tensor" or tostring(v)
    end
    local parts = {}
    for i = 1, #v do
        parts[i] = tostring(v[i])
    end
    return "{" .. table.concat(parts, ", ") .. "}"
end

function ASM:init(in_features, n_classes, cutoffs, opts)
    I.check_int(in_features, "in_features", WHO)
    I.check_int(n_classes, "n_classes", WHO, 2)
    opts = opts or {}
    if type(opts) ~= "table" or autograd.is_tensor(opts) then
        raise("tide: " .. WHO .. ": expected an options table {div_value =, head_bias =} " ..
            "after cutoffs, got " .. show(opts))
    end
    core._check_options(opts, WHO, { "div_value", "head_bias" })
    local ok = type(cutoffs) == "table" and not autograd.is_tensor(cutoffs) and #cutoffs > 0
    local n = 0
    for _ in pairs(ok and cutoffs or {}) do
        n = n + 1
    end
    ok = ok and n == #cutoffs
    for i = 1, ok and #cutoffs or 0 do
        local c = cutoffs[i]
        ok = ok and compat.is_integer(c) and c >= 1 and c <= n_classes - 1 and
            (i == 1 or c > cutoffs[i - 1])
    end
    if not ok then
        raise(string.format("tide: %s: expected cutoffs to be a list of unique integers in " ..
            "increasing order, each between 1 and n_classes - 1 = %d, got %s", WHO,
            n_classes - 1, show(cutoffs)))
    end
    local div = opts.div_value == nil and 4 or opts.div_value
    if type(div) ~= "number" or not (div > 0) then
        raise("tide: " .. WHO .. ": expected div_value to be a number > 0, got " .. show(div))
    end
    local head_bias = opts.head_bias
    if head_bias == nil then
        head_bias = false
    elseif type(head_bias) ~= "boolean" then
        raise("tide: " .. WHO .. ": expected head_bias to be a boolean, got " .. show(head_bias))
    end
    local bounds = {}
    for i, c in ipairs(cutoffs) do
        bounds[i] = c
    end
    bounds[#bounds + 1] = n_classes
    local sizes = {}
    for i = 1, #cutoffs do
        sizes[i] = math.floor(in_features / div ^ i) -- Python's in_features // div_value ** i
        if sizes[i] < 1 then
            raise(string.format("tide: %s: div_value %s leaves cluster %d a hidden size of " ..
                "%s (in_features %d / div_value^%d); use a smaller div_value", WHO,
                tostring(div), i, tostring(sizes[i]), in_features, i))
        end
    end
    self.in_features, self.n_classes, self.cutoffs = in_features, n_classes, bounds
    self.div_value, self.head_bias = div, head_bias
    self.shortlist_size, self.n_clusters = bounds[1], #bounds - 1
    self.head_size = self.shortlist_size + self.n_clusters
    -- constructed in PyTorch's order: the head's draws, then each tail's
    self.head = Linear(in_features, self.head_size, { bias = head_bias })
    local tail = {}
    for i = 1, self.n_clusters do
        tail[i] = Sequential(Linear(in_features, sizes[i], { bias = false }),
            Linear(sizes[i], bounds[i + 1] - bounds[i], { bias = false }))
    end
    self.tail = ModuleList(tail)
end

-- an input {N, in_features}
local function check_rows(self, input, who)
    I.check_tensor(input, who)
    if input:dim() ~= 2 or input:size(2) ~= self.in_features then
        raise(string.format("tide: %s: expected input {N, %d}, got %s", who, self.in_features,
            I.shape_str(input.shape)))
    end
    I.check_input(input, self.head.weight, who)
end

function ASM:forward(input, target)
    I.check_tensor(input, WHO)
    if not autograd.is_tensor(target) then
        raise("tide: " .. WHO .. ": expected target to be a tensor of 1-based classes, got " ..
            type(target))
    end
    local td = target:dim()
    if td == 1 then
        if input:dim() ~= 2 or input:size(1) ~= target:size(1) then
            raise(string.format("tide: %s: a target {N} needs input {N, %d} with the same N, " ..
                "got input %s and target %s", WHO, self.in_features, I.shape_str(input.shape),
                I.shape_str(target.shape)))
        end
    elseif td == 0 then
        if input:dim() ~= 1 then
            raise(string.format("tide: %s: a 0-d target needs input {%d}, got %s", WHO,
                self.in_features, I.shape_str(input.shape)))
        end
    else
        raise(string.format("tide: %s: expected a target {N} or a 0-d one, got %s " ..
            "(multi-target is not supported, as in PyTorch)", WHO, I.shape_str(target.shape)))
    end
    if input:size(-1) ~= self.in_features then
        raise(string.format("tide: %s: expected input with last dim %d (in_features), got %s",
            WHO, self.in_features, I.shape_str(input.shape)))
    end
    if target.dtype ~= "int64" then
        raise("tide: " .. WHO .. ": expected an int64 target of 1-based classes, got " ..
            target.dtype)
    end
    I.check_input(input, self.head.weight, WHO)
    I.check_same_device(input, target, WHO)
    local batched = td > 0
    local x = batched and input or input:unsqueeze(1)
    local t = batched and target or target:unsqueeze(1)
    if t:numel() > 0 then
        local lo, hi = t:min():item(), t:max():item()
        if lo < 1 or hi > self.n_classes then
            raise(string.format("tide: %s: expected target classes in 1..%d, got values " ..
                "from %d to %d", WHO, self.n_classes, lo, hi))
        end
    end
    local output = core.zeros({ t:size(1) }, { dtype = x.dtype, device = x.device })
    local head_index = t -- the head's column of each row: its class, or its cluster's entry
    local bounds = self.cutoffs
    for i = 1, self.n_clusters do
        local low, high = bounds[i], bounds[i + 1]
        local rows = t:gt(low):logical_and(t:le(high)):nonzero():view(-1)
        if rows:numel() > 0 then
            local relative = t:index_select(1, rows):sub(low)
            local logp = self.tail[i](x:index_select(1, rows)):log_softmax(2)
            head_index = head_index:index_fill(1, rows, self.shortlist_size + i)
            output = output:index_copy(1, rows, logp:gather(2, relative:unsqueeze(2)):squeeze(2))
        end
    end
    local head_logprob = self.head(x):log_softmax(2)
    output = output:add(head_logprob:gather(2, head_index:unsqueeze(2)):squeeze(2))
    local loss = output:neg():mean()
    if not batched then
        output = output:squeeze(1)
    end
    return output, loss
end

-- every class's log-probability from the input and the head's output
local function full_log_prob(self, input, head_output)
    local head_logprob = head_output:log_softmax(2)
    local s = self.shortlist_size
    local parts = { head_logprob:narrow(2, 1, s) }
    for i = 1, self.n_clusters do
        local logp = self.tail[i](input):log_softmax(2)
        parts[i + 1] = logp:add(head_logprob:select(2, s + i):unsqueeze(2))
    end
    return core.cat(parts, 2)
end

function ASM:log_prob(input)
    check_rows(self, input, WHO .. ":log_prob")
    return full_log_prob(self, input, self.head(input))
end

-- the head's argmax, and for the rows it gives a cluster, the argmax over every class (as
-- PyTorch's predict: log_prob(input):argmax(2), cheaper)
function ASM:predict(input)
    check_rows(self, input, WHO .. ":predict")
    return autograd.no_grad(function()
        local head_output = self.head(input)
        local out = head_output:argmax(2)
        local rows = out:gt(self.shortlist_size):nonzero():view(-1)
        if rows:numel() == 0 then
            return out
        end
        local logp = full_log_prob(self, input:index_select(1, rows),
            head_output:index_select(1, rows))
        return out:index_copy(1, rows, logp:argmax(2))
    end)
end

function ASM:extra_repr()
    local c = {}
    for i = 1, #self.cutoffs - 1 do
        c[i] = tostring(self.cutoffs[i])
    end
    return string.format("in_features=%d, n_classes=%d, cutoffs={%s}, div_value=%s, " ..
        "head_bias=%s", self.in_features, self.n_classes, table.concat(c, ", "),
        tostring(self.div_value), tostring(self.head_bias))
end

require("tide.nn._signature").define(ASM, { names = { "in_features", "n_classes", "cutoffs",
    "div_value", "head_bias", "device", "dtype" }, required = 3, factory = true })

return ASM
