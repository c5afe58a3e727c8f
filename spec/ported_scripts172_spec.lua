-- ported_scripts172_spec.lua — lucidrains/mixture-of-experts
-- mixture_of_experts/mixture_of_experts.py (default, cast_tuple, top1, cumsum_exclusive with
-- F.pad, safe_one_hot, init_, GELU_, Experts, Top2Gating with its threshold policies, capacity,
-- cumsum positions, balancing loss and dispatch / combine tensors, MoE, HeirarchicalMoE), ported
-- line for line at tiny sizes (dim 8, 4 experts, hidden 16, batch 2, seq 6), then 2 Adam steps
-- on MSE + the aux loss. The Python line stands above each Lua line that differs from it.
-- Expert indices are 1-based (topk, one_hot); positions in an expert stay counts from 0, and
-- safe_one_hot shifts them by one into one_hot's 1-based classes.
-- The 'random' policy's `torch.zeros_like(gate_2).uniform_(0., 1.)` is a fixed probs tensor
-- (fixed_probs below) on both sides, so the values can be checked against PyTorch; the weights
-- are formulas (ar) in place of init_ / randn for the same reason.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- MIN_EXPERT_CAPACITY = 4
local MIN_EXPERT_CAPACITY = 4

-- stands in for uniform_(0., 1.): sin(1.3 i + 0.4)^2 over the flat index, as the Python check
local function fixed_probs(g)
    return (tide.arange(g:numel(), { dtype = "float32" }) * 1.3 + 0.4):sin():pow(2):view(g:size())
end

-- def default(val, default_val):
local function default(val, default_val)
    -- default_val = default_val() if isfunction(default_val) else default_val
    if type(default_val) == "function" then default_val = default_val() end
    -- return val if val is not None else default_val
    if val ~= nil then return val end
    return default_val
end

-- def cast_tuple(el):
local function cast_tuple(el)
    -- return el if isinstance(el, tuple) else (el,)
    return type(el) == "table" and el or { el }
end

-- def top1(t):
local function top1(t)
    -- values, index = t.topk(k=1, dim=-1)
    local values, index = t:topk(1, { dim = -1 })
    -- values, index = map(lambda x: x.squeeze(dim=-1), (values, index))
    return values:squeeze(-1), index:squeeze(-1)
end

-- def cumsum_exclusive(t, dim=-1):
local function cumsum_exclusive(t, dim)
    dim = dim or -1
    -- num_pad_dims = - dim - 1
    local num_pad_dims = -dim - 1
    -- pre_padding = (0, 0) * num_pad_dims
    local pad = {}
    for _ = 1, num_pad_dims do
        pad[#pad + 1] = 0; pad[#pad + 1] = 0
    end
    -- padded_t = F.pad(t, (*pre_padding, 1, 0)).cumsum(dim=dim)
    pad[#pad + 1] = 1; pad[#pad + 1] = 0
    local padded_t = F.pad(t, pad):cumsum(dim)
    -- return padded_t[(..., slice(None, -1), *pre_slice)]
    return padded_t:narrow(dim, 1, padded_t:size(dim) - 1)
end

-- def safe_one_hot(indexes, max_length):
local function safe_one_hot(indexes, max_length)
    -- max_index = indexes.max() + 1
    local max_index = indexes:max():item() + 1
    -- return F.one_hot(indexes, max(max_index + 1, max_length))[..., :max_length]
    -- (indexes + 1: one_hot's classes are 1-based)
    return F.one_hot(indexes + 1, math.max(max_index + 1, max_length)):narrow(-1, 1, max_length)
end

-- def init_(t):
local function init_(t)
    -- dim = t.shape[-1]
    local dim = t:size(-1)
    local std = 1 / math.sqrt(dim)
    return t:uniform_(-std, std)
end

-- class GELU_(nn.Module):
local GELU_ = nn.Module:extend("GELU_")
function GELU_:forward(x)
    -- return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * torch.pow(x, 3))))
    return 0.5 * x * (1 + tide.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * tide.pow(x, 3))))
end

-- GELU = nn.GELU if hasattr(nn, 'GELU') else GELU_
local GELU = nn.GELU or GELU_

-- class Experts(nn.Module):
local Experts = nn.Module:extend("Experts")
-- def __init__(self, dim, num_experts = 16, hidden_dim = None, activation = GELU):
function Experts:init(dim, num_experts, hidden_dim, activation)
    num_experts, activation = num_experts or 16, activation or GELU
    hidden_dim = default(hidden_dim, dim * 4)
    num_experts = cast_tuple(num_experts)
    local function shape(...)
        local s = { unpack(num_experts) }
        for _, v in ipairs({ ... }) do s[#s + 1] = v end
        return s
    end
    -- w1 = torch.zeros(*num_experts, dim, hidden_dim)
    -- (a shape table: Lua's unpack before other arguments gives only its first value)
    local w1 = tide.zeros(shape(dim, hidden_dim))
    -- w2 = torch.zeros(*num_experts, hidden_dim, dim)
    local w2 = tide.zeros(shape(hidden_dim, dim))
    w1 = init_(w1)
    w2 = init_(w2)
    self.w1 = nn.Parameter(w1)
    self.w2 = nn.Parameter(w2)
    self.act = activation()
end

function Experts:forward(x)
    local hidden = tide.einsum("...nd,...dh->...nh", x, self.w1)
    hidden = self.act(hidden)
    local out = tide.einsum("...nh,...hd->...nd", hidden, self.w2)
    return out
end

-- class Top2Gating(nn.Module):
local Top2Gating = nn.Module:extend("Top2Gating")
-- def __init__(self, dim, num_gates, eps = 1e-9, outer_expert_dims = tuple(),
--     second_policy_train = 'random', second_policy_eval = 'random', second_threshold_train = 0.2,
--     second_threshold_eval = 0.2, capacity_factor_train = 1.25, capacity_factor_eval = 2.):
function Top2Gating:init(dim, num_gates, o)
    o = o or {}
    self.eps = o.eps or 1e-9
    self.num_gates = num_gates
    -- self.w_gating = nn.Parameter(torch.randn(*outer_expert_dims, dim, num_gates))
    local shape = { unpack(o.outer_expert_dims or {}) }
    shape[#shape + 1] = dim; shape[#shape + 1] = num_gates
    self.w_gating = nn.Parameter(tide.randn(unpack(shape)))
    self.second_policy_train = o.second_policy_train or "random"
    self.second_policy_eval = o.second_policy_eval or "random"
    self.second_threshold_train = o.second_threshold_train or 0.2
    self.second_threshold_eval = o.second_threshold_eval or 0.2
    self.capacity_factor_train = o.capacity_factor_train or 1.25
    self.capacity_factor_eval = o.capacity_factor_eval or 2.
end

-- def forward(self, x, importance = None):
function Top2Gating:forward(x, importance)
    -- *_, b, group_size, dim = x.shape
    local group_size = x:size(-2)
    local num_gates = self.num_gates

    local policy, threshold, capacity_factor
    if self.training then
        policy = self.second_policy_train
        threshold = self.second_threshold_train
        capacity_factor = self.capacity_factor_train
    else
        policy = self.second_policy_eval
        threshold = self.second_threshold_eval
        capacity_factor = self.capacity_factor_eval
    end

    local raw_gates = tide.einsum("...bnd,...de->...bne", x, self.w_gating)
    raw_gates = raw_gates:softmax(-1)

    local gate_1, index_1 = top1(raw_gates)
    -- mask_1 = F.one_hot(index_1, num_gates).float()
    local mask_1 = F.one_hot(index_1, num_gates):float()
    local density_1_proxy = raw_gates

    if importance ~= nil then
        -- equals_one_mask = (importance == 1.).float()
        local equals_one_mask = importance:eq(1.):float()
        -- mask_1 *= equals_one_mask[..., None]
        mask_1:mul_(equals_one_mask:unsqueeze(-1))
        -- gate_1 *= equals_one_mask
        gate_1:mul_(equals_one_mask)
        density_1_proxy = density_1_proxy * equals_one_mask:unsqueeze(-1)
    end

    -- gates_without_top_1 = raw_gates * (1. - mask_1)
    local gates_without_top_1 = raw_gates * (1. - mask_1)

    local gate_2, index_2 = top1(gates_without_top_1)
    local mask_2 = F.one_hot(index_2, num_gates):float()

    if importance ~= nil then
        -- greater_zero_mask = (importance > 0.).float()
        local greater_zero_mask = importance:gt(0.):float()
        -- mask_2 *= greater_zero_mask[..., None]
        mask_2:mul_(greater_zero_mask:unsqueeze(-1))
    end

    -- normalize top2 gate scores
    local denom = gate_1 + gate_2 + self.eps
    -- gate_1 /= denom
    gate_1:div_(denom)
    -- gate_2 /= denom
    gate_2:div_(denom)

    -- density_1 = mask_1.mean(dim=-2)
    local density_1 = mask_1:mean(-2)
    -- density_1_proxy = density_1_proxy.mean(dim=-2)
    density_1_proxy = density_1_proxy:mean(-2)
    -- loss = (density_1_proxy * density_1).mean() * float(num_gates ** 2)
    local loss = (density_1_proxy * density_1):mean() * (num_gates ^ 2)

    if policy == "all" then -- luacheck: ignore 542
    elseif policy == "none" then
        mask_2 = tide.zeros_like(mask_2)
    elseif policy == "threshold" then
        -- mask_2 *= (gate_2 > threshold).float()
        mask_2:mul_(gate_2:gt(threshold):float())
    elseif policy == "random" then
        -- probs = torch.zeros_like(gate_2).uniform_(0., 1.)   (fixed here, see the header)
        local probs = fixed_probs(gate_2)
        -- mask_2 *= (probs < (gate_2 / max(threshold, self.eps))).float().unsqueeze(-1)
        mask_2:mul_(probs:lt(gate_2 / math.max(threshold, self.eps)):float():unsqueeze(-1))
    else
        error("Unknown policy " .. tostring(policy))
    end

    -- expert_capacity = min(group_size, int((group_size * capacity_factor) / num_gates))
    local expert_capacity = math.min(group_size,
        math.floor((group_size * capacity_factor) / num_gates))
    expert_capacity = math.max(expert_capacity, MIN_EXPERT_CAPACITY)
    local expert_capacity_f = expert_capacity + 0.0

    -- position_in_expert_1 = cumsum_exclusive(mask_1, dim=-2) * mask_1
    local position_in_expert_1 = cumsum_exclusive(mask_1, -2) * mask_1
    -- mask_1 *= (position_in_expert_1 < expert_capacity_f).float()
    mask_1:mul_(position_in_expert_1:lt(expert_capacity_f):float())
    -- mask_1_count = mask_1.sum(dim=-2, keepdim=True)
    local mask_1_count = mask_1:sum({ dim = -2, keepdim = true })
    -- mask_1_flat = mask_1.sum(dim=-1)
    local mask_1_flat = mask_1:sum(-1)
    -- position_in_expert_1 = position_in_expert_1.sum(dim=-1)
    position_in_expert_1 = position_in_expert_1:sum(-1)
    -- gate_1 *= mask_1_flat
    gate_1:mul_(mask_1_flat)

    -- position_in_expert_2 = cumsum_exclusive(mask_2, dim=-2) + mask_1_count
    local position_in_expert_2 = cumsum_exclusive(mask_2, -2) + mask_1_count
    -- position_in_expert_2 *= mask_2
    position_in_expert_2:mul_(mask_2)
    -- mask_2 *= (position_in_expert_2 < expert_capacity_f).float()
    mask_2:mul_(position_in_expert_2:lt(expert_capacity_f):float())
    local mask_2_flat = mask_2:sum(-1)

    position_in_expert_2 = position_in_expert_2:sum(-1)
    -- gate_2 *= mask_2_flat
    gate_2:mul_(mask_2_flat)

    -- x[..., None, None] is x:unsqueeze(-1):unsqueeze(-1); x[..., None, :] is x:unsqueeze(-2)
    local function nn2(t) return t:unsqueeze(-1):unsqueeze(-1) end
    -- combine_tensor = (gate_1[..., None, None] * mask_1_flat[..., None, None]
    --     * F.one_hot(index_1, num_gates)[..., None]
    --     * safe_one_hot(position_in_expert_1.long(), expert_capacity)[..., None, :] +
    --     (the same with _2))
    local combine_tensor =
        nn2(gate_1) * nn2(mask_1_flat) * F.one_hot(index_1, num_gates):unsqueeze(-1)
        * safe_one_hot(position_in_expert_1:long(), expert_capacity):unsqueeze(-2) +
        nn2(gate_2) * nn2(mask_2_flat) * F.one_hot(index_2, num_gates):unsqueeze(-1)
        * safe_one_hot(position_in_expert_2:long(), expert_capacity):unsqueeze(-2)

    -- dispatch_tensor = combine_tensor.bool().to(combine_tensor)
    local dispatch_tensor = combine_tensor:bool():to(combine_tensor)
    return dispatch_tensor, combine_tensor, loss
end

local function gating_kwargs(o)
    return { second_policy_train = o.second_policy_train,
        second_policy_eval = o.second_policy_eval,
        second_threshold_train = o.second_threshold_train,
        second_threshold_eval = o.second_threshold_eval,
        capacity_factor_train = o.capacity_factor_train,
        capacity_factor_eval = o.capacity_factor_eval }
end

-- class MoE(nn.Module):
local MoE = nn.Module:extend("MoE")
-- def __init__(self, dim, num_experts = 16, hidden_dim = None, activation = nn.ReLU, ...,
--     loss_coef = 1e-2, experts = None):
function MoE:init(dim, o)
    o = o or {}
    local num_experts = o.num_experts or 16
    self.num_experts = num_experts
    -- self.gate = Top2Gating(dim, num_gates = num_experts, **gating_kwargs)
    local kw = gating_kwargs(o)
    self.gate = Top2Gating(dim, num_experts, kw)
    -- self.experts = default(experts, lambda: Experts(dim, num_experts = num_experts,
    --     hidden_dim = hidden_dim, activation = activation))
    self.experts = default(o.experts, function()
        return Experts(dim, num_experts, o.hidden_dim, o.activation or nn.ReLU)
    end)
    self.loss_coef = o.loss_coef or 1e-2
end

function MoE:forward(inputs)
    -- b, n, d, e = *inputs.shape, self.num_experts
    local d, e = inputs:size(3), self.num_experts
    local dispatch_tensor, combine_tensor, loss = self.gate(inputs)
    local expert_inputs = tide.einsum("bnd,bnec->ebcd", inputs, dispatch_tensor)

    local orig_shape = expert_inputs:size()
    expert_inputs = expert_inputs:reshape(e, -1, d)
    local expert_outputs = self.experts(expert_inputs)
    -- expert_outputs = expert_outputs.reshape(*orig_shape)
    expert_outputs = expert_outputs:reshape(unpack(orig_shape))

    local output = tide.einsum("ebcd,bnec->bnd", expert_outputs, combine_tensor)
    return output, loss * self.loss_coef
end

-- class HeirarchicalMoE(nn.Module):
local HeirarchicalMoE = nn.Module:extend("HeirarchicalMoE")
function HeirarchicalMoE:init(dim, o)
    o = o or {}
    local num_experts = o.num_experts or { 4, 4 }
    assert(#num_experts == 2, "only 2 levels of heirarchy for experts allowed for now")
    local num_experts_outer, num_experts_inner = num_experts[1], num_experts[2]
    self.num_experts_outer = num_experts_outer
    self.num_experts_inner = num_experts_inner
    local kw = gating_kwargs(o)
    self.gate_outer = Top2Gating(dim, num_experts_outer, kw)
    -- self.gate_inner = Top2Gating(dim, num_gates = num_experts_inner,
    --     outer_expert_dims = (num_experts_outer,), **gating_kwargs)
    local kw_inner = gating_kwargs(o)
    kw_inner.outer_expert_dims = { num_experts_outer }
    self.gate_inner = Top2Gating(dim, num_experts_inner, kw_inner)
    self.experts = default(o.experts, function()
        return Experts(dim, num_experts, o.hidden_dim, o.activation or nn.ReLU)
    end)
    self.loss_coef = o.loss_coef or 1e-2
end

function HeirarchicalMoE:forward(inputs)
    -- b, n, d, eo, ei = *inputs.shape, self.num_experts_outer, self.num_experts_inner
    local d, eo, ei = inputs:size(3), self.num_experts_outer, self.num_experts_inner
    local dispatch_tensor_outer, combine_tensor_outer, loss_outer = self.gate_outer(inputs)
    local expert_inputs_outer = tide.einsum("bnd,bnec->ebcd", inputs, dispatch_tensor_outer)

    -- importance = combine_tensor_outer.permute(2, 0, 3, 1).sum(dim=-1)
    local importance = combine_tensor_outer:permute(3, 1, 4, 2):sum(-1)
    -- importance = 0.5 * ((importance > 0.5).float() + (importance > 0.).float())
    importance = 0.5 * (importance:gt(0.5):float() + importance:gt(0.):float())

    local dispatch_tensor_inner, combine_tensor_inner, loss_inner =
        self.gate_inner(expert_inputs_outer, importance)
    local expert_inputs = tide.einsum("ebnd,ebnfc->efbcd", expert_inputs_outer,
        dispatch_tensor_inner)

    local orig_shape = expert_inputs:size()
    expert_inputs = expert_inputs:reshape(eo, ei, -1, d)
    local expert_outputs = self.experts(expert_inputs)
    expert_outputs = expert_outputs:reshape(unpack(orig_shape))

    local expert_outputs_outer = tide.einsum("efbcd,ebnfc->ebnd", expert_outputs,
        combine_tensor_inner)
    local output = tide.einsum("ebcd,bnec->bnd", expert_outputs_outer, combine_tensor_outer)
    return output, (loss_outer + loss_inner) * self.loss_coef
end

---------------------------------------------------------------------------------------------
-- checks against PyTorch 1.13 (the same module, the same formula weights and inputs)
---------------------------------------------------------------------------------------------
-- a*sin(f*i + p) (or cos) over the flat index i, float32
local function ar(shape, a, f, p, use_cos)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    local t = tide.arange(n, { dtype = "float32" }) * (f or 0.5) + (p or 0)
    t = use_cos and t:cos() or t:sin()
    return (t * (a or 1)):view(unpack(shape))
end

local function flat(t)
    return t:detach():reshape(-1):tolist()
end

-- 0-based flat positions of the nonzeros, as PyTorch's nonzero over reshape(-1)
local function nz(t)
    local out = {}
    for i, v in ipairs(flat(t)) do
        if v ~= 0 then out[#out + 1] = i - 1 end
    end
    return out
end

local x = ar({ 2, 6, 8 }, 1, 0.91, 0.2)
local target = ar({ 2, 6, 8 }, 0.5, 0.61, 0, true)

local function mk()
    local m = MoE(8, { num_experts = 4, hidden_dim = 16, second_threshold_train = 0.9,
        capacity_factor_eval = 4. })
    tide.no_grad(function()
        m.gate.w_gating:copy_(ar({ 8, 4 }, 1.0, 0.7))
        m.experts.w1:copy_(ar({ 4, 8, 16 }, 0.3, 0.37, 0, true))
        m.experts.w2:copy_(ar({ 4, 16, 8 }, 0.25, 0.53, 0.1))
    end)
    return m
end

local PT = {
    train = {
        nz = { 2, 4, 24, 37, 41, 60, 64, 77, 81, 94, 96, 116, 120, 137, 154, 156, 173, 177 },
        combine = { 1.0, 0.5126104, 1.0, 0.5361631, 1.0, 1.0, 0.5293348, 1.0, 0.5345582, 1.0,
            0.5144668, 0.5776086 },
        combine_ec = { 1.0460384, 1.1713703, 0.4907529, 0.0, 1.0087988, 0.4605343, 0.0, 0.0,
            1.0130587, 1.074024, 0.491079, 0.0, 1.0450841, 0.9977632, 0.4062383, 0.0 },
        out = { 0.0138493, 0.0295019, 0.0370597, 0.0344487, 0.0223853, 0.0041802, -0.0151719,
            -0.0303616, -0.009502, -0.0054065, 0.0001728, 0.0057045, 0.0096708, 0.0109841,
            0.0092836, 0.0050359 },
        outsum = 0.10805603116750717, outabs = 2.0556061267852783,
    },
    eval = {
        nz = { 2, 6, 31, 36, 56, 61, 86, 90, 96, 115, 121, 140, 144, 150, 175, 180, 200, 205,
            230, 234, 242, 259, 265, 284 },
        combine = { 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.9999999, 1.0, 1.0, 1.0, 1.0, 1.0 },
        combine_ec = { 1.0460384, 1.1713703, 0.9762861, 0.0, 0.0, 0.0, 0.9799122, 0.9869415,
            0.9259762, 0.0, 0.0, 0.0, 1.0130587, 1.074024, 0.9549159, 0.0, 0.0, 0.0, 1.0450841,
            0.9977632, 0.8286297, 0.0, 0.0, 0.0 },
        out = { 0.0138493, 0.0295019, 0.0370597, 0.0344487, 0.0223853, 0.0041802, -0.0151719,
            -0.0303616, -0.0059265, -0.0013836, 0.0035391, 0.0074905, 0.0093866, 0.0087079,
            0.0056397, 0.0010238 },
        outsum = 0.13206422328948975, outabs = 2.230445384979248,
    },
}

describe("ported lucidrains/mixture-of-experts", function()
    it("helpers: cumsum_exclusive, safe_one_hot, top1, GELU_", function()
        local t = tide.tensor({ { 1, 0 }, { 1, 1 }, { 0, 1 } })
        assert.same({ { 0, 0 }, { 1, 0 }, { 2, 1 } }, cumsum_exclusive(t, -2):tolist())
        assert.same({ 0, 1, 1 }, cumsum_exclusive(tide.tensor({ 1, 0, 2 })):tolist())
        -- index 5 is past max_length 3: a zero row, as TensorFlow's one_hot
        local oh = safe_one_hot(tide.tensor({ 0, 2, 5 }, { dtype = "int64" }), 3)
        assert.same({ { 1, 0, 0 }, { 0, 0, 1 }, { 0, 0, 0 } }, oh:tolist())
        local v, i = top1(tide.tensor({ { 0.1, 0.7, 0.2 } }))
        assert.same({ 2 }, i:tolist())
        assert.is_true(math.abs(v:item() - 0.7) < 1e-6)
        local g = GELU_()(tide.tensor({ -1.0, 0.5, 2.0 }))
        assert_close_list({ -0.15880801, 0.34571401, 1.95459769 }, flat(g), 1e-5, "GELU_")
        local ex = Experts(8, { 2, 3 }, 4)
        assert.same({ 2, 3, 8, 4 }, ex.w1:size())
        assert.is_true(ex.w1:abs():max():item() <= 1 / math.sqrt(4))
        assert.same({ 2, 3, 5, 8 }, ex(tide.randn(2, 3, 5, 8)):size())
    end)

    for _, mode in ipairs({ "train", "eval" }) do
        it("Top2Gating dispatch / combine, aux loss and MoE output match PyTorch (" .. mode .. ")",
            function()
                local m = mk()
                m:train(mode == "train")
                local pt = PT[mode]
                local d, c, l = m.gate(x)
                local cap = mode == "train" and 4 or 6
                assert.same({ 2, 6, 4, cap }, d:size())
                assert.same(pt.nz, nz(d))
                assert.same(nz(d), nz(c))
                assert_close_list(pt.combine, flat(c:sum(-1):sum(-1)), 1e-5, "combine")
                assert_close_list(pt.combine_ec, flat(c:sum(1):sum(1)), 1e-5, "combine_ec")
                assert_close_list({ 1.0019128322601318 }, { l:item() }, 1e-5, "loss")
                local out, aux = m(x)
                assert.same({ 2, 6, 8 }, out:size())
                assert_close_list({ 0.01001912821084261 }, { aux:item() }, 1e-5, "aux")
                assert_close_list(pt.out, flat(out:narrow(1, 1, 1):narrow(2, 1, 2)), 1e-5, "out")
                assert_close_list({ pt.outsum, pt.outabs },
                    { out:sum():item(), out:abs():sum():item() }, 1e-4, "out sums")
            end)
    end

    it("Top2Gating policies 'all' and 'none'", function()
        local want = {
            all = { 24, { 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.9999999, 1.0, 1.0, 1.0, 1.0, 1.0 } },
            none = { 12, { 0.5092471, 0.5126104, 0.5394657, 0.5361631, 0.5167036, 0.5937617,
                0.5293348, 0.5004482, 0.5345582, 0.508921, 0.5144668, 0.5776086 } },
        }
        for _, pol in ipairs({ "all", "none" }) do
            local g = Top2Gating(8, 4, { second_policy_train = pol })
            tide.no_grad(function() g.w_gating:copy_(ar({ 8, 4 }, 1.0, 0.7)) end)
            local d, c = g(x)
            assert.equal(want[pol][1], d:sum():item())
            assert_close_list(want[pol][2], flat(c:sum(-1):sum(-1)), 1e-5, pol)
        end
        assert.has_error(function()
            Top2Gating(8, 4, { second_policy_train = "bogus" })(x)
        end, "Unknown policy bogus")
    end)

    it("MoE: 2 Adam steps on MSE + aux loss match PyTorch", function()
        local m = mk()
        m:train()
        local opt = optim.Adam(m:parameters(), { lr = 1e-2 })
        local want = { { 0.12899595499038696, 0.01001912821084261 },
            { 0.11503098160028458, 0.0100285978987813 } }
        for s = 1, 2 do
            local out, aux = m(x)
            local loss = F.mse_loss(out, target) + aux
            opt:zero_grad()
            loss:backward()
            opt:step()
            assert_finite(loss:item(), "loss")
            assert_close_list(want[s], { loss:item(), aux:item() }, 1e-5, "step " .. s)
        end
        local out, aux = m(x)
        assert_close_list({ 0.11979473382234573 }, { (F.mse_loss(out, target) + aux):item() },
            1e-5, "after")
    end)

    it("HeirarchicalMoE (2 x 2 experts) matches PyTorch in train and eval", function()
        local h = HeirarchicalMoE(8, { num_experts = { 2, 2 }, hidden_dim = 16 })
        tide.no_grad(function()
            h.gate_outer.w_gating:copy_(ar({ 8, 2 }, 1, 0.7))
            h.gate_inner.w_gating:copy_(ar({ 2, 8, 2 }, 1, 0.45, 0.3))
            h.experts.w1:copy_(ar({ 2, 2, 8, 16 }, 0.3, 0.37, 0, true))
            h.experts.w2:copy_(ar({ 2, 2, 16, 8 }, 0.25, 0.53, 0.1))
        end)
        local want = {
            train = { 0.016508782282471657, { -0.0036726, 0.0088178, 0.0188894, 0.0237777,
                0.0221416, 0.0144303, 0.00276, -0.0096678, 0.0033064, 0.0139388, 0.0207464,
                0.0218615, 0.016978, 0.0074365, -0.0041457, -0.0145909 },
                -0.09119072556495667, 1.8159983158111572 },
            eval = { 0.012909493409097195, { -0.0036726, 0.0088178, 0.0188894, 0.0237777,
                0.0221416, 0.0144303, 0.00276, -0.0096678, -0.01333, -0.000194, 0.0129954,
                0.0226188, 0.0260358, 0.0223097, 0.012462, -0.0008055 },
                0.020458918064832687, 1.672929048538208 },
        }
        for _, mode in ipairs({ "train", "eval" }) do
            h:train(mode == "train")
            local out, aux = h(x)
            local w = want[mode]
            assert_close_list({ w[1] }, { aux:item() }, 1e-5, "H aux " .. mode)
            assert_close_list(w[2], flat(out:narrow(1, 2, 1):narrow(2, 1, 2)), 1e-5, "H out")
            assert_close_list({ w[3], w[4] }, { out:sum():item(), out:abs():sum():item() }, 1e-4,
                "H sums " .. mode)
        end
    end)
end)
