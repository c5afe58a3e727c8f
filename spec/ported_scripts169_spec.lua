-- ported_scripts169_spec.lua — HobbitLong/RepDistiller's distiller_zoo/: KD.py (DistillKL),
-- FitNet.py (HintLoss), AT.py (Attention), SP.py (Similarity), CC.py (Correlation), VID.py
-- (VIDLoss), RKD.py (RKDLoss), PKT.py (PKT), AB.py (ABLoss), FSP.py (FSP), FT.py
-- (FactorTransfer) and NST.py (NSTLoss), each an nn.Module, ported line for line and checked
-- against PyTorch 1.13 on fixed features (batch 4, 4 x 6 x 3 x 3 and 4 x 6 x 2 x 2) and logits
-- (4 x 5) made from formulas; then 2 SGD steps of a tiny student distilled from a fixed teacher
-- with CE + KD + RKD (train_student.py's loss). The Python line stands above each Lua line that
-- differs from it. Dims are 1-based. KDSVD.py is not ported: its loss goes through torch.svd's
-- singular vectors, whose signs differ between LAPACK builds, so no value could be checked.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

---------------------------------------------------------------------------------------------
-- distiller_zoo/KD.py
---------------------------------------------------------------------------------------------
-- class DistillKL(nn.Module):
local DistillKL = nn.Module:extend("DistillKL")
function DistillKL:init(T)
    self.T = T
end

function DistillKL:forward(y_s, y_t)
    -- p_s = F.log_softmax(y_s/self.T, dim=1)
    local p_s = F.log_softmax(y_s / self.T, { dim = 2 })
    -- p_t = F.softmax(y_t/self.T, dim=1)
    local p_t = F.softmax(y_t / self.T, { dim = 2 })
    -- loss = F.kl_div(p_s, p_t, size_average=False) * (self.T**2) / y_s.shape[0]
    local loss = F.kl_div(p_s, p_t, { size_average = false }) * (self.T ^ 2) / y_s.shape[1]
    return loss
end

---------------------------------------------------------------------------------------------
-- distiller_zoo/FitNet.py
---------------------------------------------------------------------------------------------
local HintLoss = nn.Module:extend("HintLoss")
function HintLoss:init()
    self.crit = nn.MSELoss()
end

function HintLoss:forward(f_s, f_t)
    local loss = self.crit(f_s, f_t)
    return loss
end

---------------------------------------------------------------------------------------------
-- distiller_zoo/AT.py
---------------------------------------------------------------------------------------------
local Attention = nn.Module:extend("Attention")
-- def __init__(self, p=2):
function Attention:init(p)
    self.p = p or 2
end

function Attention:forward(g_s, g_t)
    -- return [self.at_loss(f_s, f_t) for f_s, f_t in zip(g_s, g_t)]
    local out = {}
    for i = 1, #g_s do
        out[i] = self:at_loss(g_s[i], g_t[i])
    end
    return out
end

function Attention:at_loss(f_s, f_t)
    -- s_H, t_H = f_s.shape[2], f_t.shape[2]
    local s_H, t_H = f_s.shape[3], f_t.shape[3]
    if s_H > t_H then
        -- f_s = F.adaptive_avg_pool2d(f_s, (t_H, t_H))
        f_s = F.adaptive_avg_pool2d(f_s, { t_H, t_H })
    elseif s_H < t_H then
        f_t = F.adaptive_avg_pool2d(f_t, { s_H, s_H })
    end
    -- return (self.at(f_s) - self.at(f_t)).pow(2).mean()
    return (self:at(f_s) - self:at(f_t)):pow(2):mean()
end

function Attention:at(f)
    -- return F.normalize(f.pow(self.p).mean(1).view(f.size(0), -1))
    return F.normalize(f:pow(self.p):mean(2):view(f:size(1), -1))
end

---------------------------------------------------------------------------------------------
-- distiller_zoo/SP.py
---------------------------------------------------------------------------------------------
local Similarity = nn.Module:extend("Similarity")
function Similarity:forward(g_s, g_t)
    local out = {}
    for i = 1, #g_s do
        out[i] = self:similarity_loss(g_s[i], g_t[i])
    end
    return out
end

function Similarity:similarity_loss(f_s, f_t)
    -- bsz = f_s.shape[0]
    local bsz = f_s.shape[1]
    f_s = f_s:view(bsz, -1)
    f_t = f_t:view(bsz, -1)

    -- G_s = torch.mm(f_s, torch.t(f_s))
    local G_s = tide.mm(f_s, tide.t(f_s))
    -- G_s = torch.nn.functional.normalize(G_s)
    G_s = tide.nn.functional.normalize(G_s)
    local G_t = tide.mm(f_t, tide.t(f_t))
    G_t = tide.nn.functional.normalize(G_t)

    local G_diff = G_t - G_s
    -- loss = (G_diff * G_diff).view(-1, 1).sum(0) / (bsz * bsz)
    local loss = (G_diff * G_diff):view(-1, 1):sum(1) / (bsz * bsz)
    return loss
end

---------------------------------------------------------------------------------------------
-- distiller_zoo/CC.py
---------------------------------------------------------------------------------------------
local Correlation = nn.Module:extend("Correlation")
function Correlation:forward(f_s, f_t)
    -- delta = torch.abs(f_s - f_t)
    local delta = tide.abs(f_s - f_t)
    -- loss = torch.mean((delta[:-1] * delta[1:]).sum(1))
    local loss = tide.mean((delta[{ { 1, -2 } }] * delta[{ { 2, -1 } }]):sum(2))
    return loss
end

---------------------------------------------------------------------------------------------
-- distiller_zoo/VID.py
---------------------------------------------------------------------------------------------
local VIDLoss = nn.Module:extend("VIDLoss")
-- def __init__(self, num_input_channels, num_mid_channel, num_target_channels,
--              init_pred_var=5.0, eps=1e-5):
function VIDLoss:init(num_input_channels, num_mid_channel, num_target_channels, init_pred_var,
                      eps)
    init_pred_var, eps = init_pred_var or 5.0, eps or 1e-5

    local function conv1x1(in_channels, out_channels, stride)
        -- return nn.Conv2d(in_channels, out_channels, kernel_size=1, padding=0, bias=False,
        --                  stride=stride)
        return nn.Conv2d(in_channels, out_channels,
            { kernel_size = 1, padding = 0, bias = false, stride = stride or 1 })
    end

    self.regressor = nn.Sequential(
        conv1x1(num_input_channels, num_mid_channel),
        nn.ReLU(),
        conv1x1(num_mid_channel, num_mid_channel),
        nn.ReLU(),
        conv1x1(num_mid_channel, num_target_channels)
    )
    -- self.log_scale = torch.nn.Parameter(
    --     np.log(np.exp(init_pred_var-eps)-1.0) * torch.ones(num_target_channels))
    self.log_scale = tide.nn.Parameter(
        math.log(math.exp(init_pred_var - eps) - 1.0) * tide.ones(num_target_channels))
    self.eps = eps
end

function VIDLoss:forward(input, target)
    -- pool for dimentsion match
    local s_H, t_H = input.shape[3], target.shape[3]
    if s_H > t_H then
        input = F.adaptive_avg_pool2d(input, { t_H, t_H })
    elseif s_H < t_H then
        target = F.adaptive_avg_pool2d(target, { s_H, s_H })
    end
    local pred_mean = self.regressor(input)
    -- pred_var = torch.log(1.0+torch.exp(self.log_scale))+self.eps
    local pred_var = tide.log(1.0 + tide.exp(self.log_scale)) + self.eps
    pred_var = pred_var:view(1, -1, 1, 1)
    -- neg_log_prob = 0.5*((pred_mean-target)**2/pred_var+torch.log(pred_var))
    local neg_log_prob = 0.5 * ((pred_mean - target) ^ 2 / pred_var + tide.log(pred_var))
    local loss = tide.mean(neg_log_prob)
    return loss
end

---------------------------------------------------------------------------------------------
-- distiller_zoo/RKD.py
---------------------------------------------------------------------------------------------
local RKDLoss = nn.Module:extend("RKDLoss")
-- def __init__(self, w_d=25, w_a=50):
function RKDLoss:init(w_d, w_a)
    self.w_d = w_d or 25
    self.w_a = w_a or 50
end

-- @staticmethod
-- def pdist(e, squared=False, eps=1e-12):
function RKDLoss.pdist(e, squared, eps)
    eps = eps or 1e-12
    -- e_square = e.pow(2).sum(dim=1)
    local e_square = e:pow(2):sum({ dim = 2 })
    -- prod = e @ e.t()
    local prod = e:matmul(e:t())
    -- res = (e_square.unsqueeze(1) + e_square.unsqueeze(0) - 2 * prod).clamp(min=eps)
    local res = (e_square:unsqueeze(2) + e_square:unsqueeze(1) - 2 * prod):clamp({ min = eps })

    if not squared then
        res = res:sqrt()
    end

    res = res:clone()
    -- res[range(len(e)), range(len(e))] = 0
    res[{ tide.arange(1, #e + 1), tide.arange(1, #e + 1) }] = 0
    return res
end

function RKDLoss:forward(f_s, f_t)
    -- student = f_s.view(f_s.shape[0], -1)
    local student = f_s:view(f_s.shape[1], -1)
    local teacher = f_t:view(f_t.shape[1], -1)

    -- RKD distance loss
    -- with torch.no_grad():
    local t_d = tide.no_grad(function()
        -- t_d = self.pdist(teacher, squared=False)
        local t_d = self.pdist(teacher, false)
        -- mean_td = t_d[t_d > 0].mean()
        local mean_td = t_d[t_d:gt(0)]:mean()
        return t_d / mean_td
    end)

    local d = self.pdist(student, false)
    local mean_d = d[d:gt(0)]:mean()
    d = d / mean_d

    local loss_d = F.smooth_l1_loss(d, t_d)

    -- RKD Angle loss
    local t_angle = tide.no_grad(function()
        -- td = (teacher.unsqueeze(0) - teacher.unsqueeze(1))
        local td = (teacher:unsqueeze(1) - teacher:unsqueeze(2))
        -- norm_td = F.normalize(td, p=2, dim=2)
        local norm_td = F.normalize(td, { p = 2, dim = 3 })
        -- t_angle = torch.bmm(norm_td, norm_td.transpose(1, 2)).view(-1)
        return tide.bmm(norm_td, norm_td:transpose(2, 3)):view(-1)
    end)

    local sd = (student:unsqueeze(1) - student:unsqueeze(2))
    local norm_sd = F.normalize(sd, { p = 2, dim = 3 })
    local s_angle = tide.bmm(norm_sd, norm_sd:transpose(2, 3)):view(-1)

    local loss_a = F.smooth_l1_loss(s_angle, t_angle)

    local loss = self.w_d * loss_d + self.w_a * loss_a

    return loss
end

---------------------------------------------------------------------------------------------
-- distiller_zoo/PKT.py
---------------------------------------------------------------------------------------------
local PKT = nn.Module:extend("PKT")
function PKT:forward(f_s, f_t)
    return self.cosine_similarity_loss(f_s, f_t)
end

-- @staticmethod
-- def cosine_similarity_loss(output_net, target_net, eps=0.0000001):
function PKT.cosine_similarity_loss(output_net, target_net, eps)
    eps = eps or 0.0000001
    -- Normalize each vector by its norm
    -- output_net_norm = torch.sqrt(torch.sum(output_net ** 2, dim=1, keepdim=True))
    local output_net_norm = tide.sqrt(tide.sum(output_net ^ 2, { dim = 2, keepdim = true }))
    output_net = output_net / (output_net_norm + eps)
    -- output_net[output_net != output_net] = 0
    output_net[output_net:ne(output_net)] = 0

    local target_net_norm = tide.sqrt(tide.sum(target_net ^ 2, { dim = 2, keepdim = true }))
    target_net = target_net / (target_net_norm + eps)
    target_net[target_net:ne(target_net)] = 0

    -- Calculate the cosine similarity
    -- model_similarity = torch.mm(output_net, output_net.transpose(0, 1))
    local model_similarity = tide.mm(output_net, output_net:transpose(1, 2))
    local target_similarity = tide.mm(target_net, target_net:transpose(1, 2))

    -- Scale cosine similarity to 0..1
    model_similarity = (model_similarity + 1.0) / 2.0
    target_similarity = (target_similarity + 1.0) / 2.0

    -- Transform them into probabilities
    -- model_similarity = model_similarity / torch.sum(model_similarity, dim=1, keepdim=True)
    model_similarity = model_similarity
        / tide.sum(model_similarity, { dim = 2, keepdim = true })
    target_similarity = target_similarity
        / tide.sum(target_similarity, { dim = 2, keepdim = true })

    -- Calculate the KL-divergence
    -- loss = torch.mean(target_similarity * torch.log((target_similarity + eps)
    --                                                 / (model_similarity + eps)))
    local loss = tide.mean(target_similarity
        * tide.log((target_similarity + eps) / (model_similarity + eps)))

    return loss
end

---------------------------------------------------------------------------------------------
-- distiller_zoo/AB.py
---------------------------------------------------------------------------------------------
local ABLoss = nn.Module:extend("ABLoss")
-- def __init__(self, feat_num, margin=1.0):
function ABLoss:init(feat_num, margin)
    -- self.w = [2**(i-feat_num+1) for i in range(feat_num)]
    self.w = {}
    for i = 0, feat_num - 1 do
        self.w[i + 1] = 2 ^ (i - feat_num + 1)
    end
    self.margin = margin or 1.0
end

function ABLoss:forward(g_s, g_t)
    local bsz = g_s[1].shape[1]
    -- losses = [self.criterion_alternative_l2(s, t) for s, t in zip(g_s, g_t)]
    -- losses = [w * l for w, l in zip(self.w, losses)]
    -- losses = [l / bsz for l in losses]
    -- losses = [l / 1000 * 3 for l in losses]
    local losses = {}
    for i = 1, #g_s do
        local l = self.w[i] * self:criterion_alternative_l2(g_s[i], g_t[i])
        losses[i] = l / bsz / 1000 * 3
    end
    return losses
end

function ABLoss:criterion_alternative_l2(source, target)
    -- loss = ((source + self.margin) ** 2 * ((source > -self.margin) & (target <= 0)).float() +
    --         (source - self.margin) ** 2 * ((source <= self.margin) & (target > 0)).float())
    local loss = ((source + self.margin) ^ 2
            * source:gt(-self.margin):logical_and(target:le(0)):float()
        + (source - self.margin) ^ 2 * source:le(self.margin):logical_and(target:gt(0)):float())
    return tide.abs(loss):sum()
end

---------------------------------------------------------------------------------------------
-- distiller_zoo/FSP.py
---------------------------------------------------------------------------------------------
local FSP = nn.Module:extend("FSP")
function FSP:init(s_shapes, t_shapes)
    assert(#s_shapes == #t_shapes, 'unequal length of feat list')
    -- s_c = [s[1] for s in s_shapes]; t_c = [t[1] for t in t_shapes]
    -- if np.any(np.asarray(s_c) != np.asarray(t_c)):
    for i = 1, #s_shapes do
        if s_shapes[i][2] ~= t_shapes[i][2] then
            error('num of channels not equal (error in FSP)')
        end
    end
end

function FSP:forward(g_s, g_t)
    local s_fsp = self.compute_fsp(g_s)
    local t_fsp = self.compute_fsp(g_t)
    -- loss_group = [self.compute_loss(s, t) for s, t in zip(s_fsp, t_fsp)]
    local loss_group = {}
    for i = 1, #s_fsp do
        loss_group[i] = self.compute_loss(s_fsp[i], t_fsp[i])
    end
    return loss_group
end

function FSP.compute_loss(s, t)
    return (s - t):pow(2):mean()
end

function FSP.compute_fsp(g)
    local fsp_list = {}
    -- for i in range(len(g) - 1):
    for i = 1, #g - 1 do
        local bot, top = g[i], g[i + 1]
        local b_H, t_H = bot.shape[3], top.shape[3]
        if b_H > t_H then
            bot = F.adaptive_avg_pool2d(bot, { t_H, t_H })
        elseif b_H < t_H then
            top = F.adaptive_avg_pool2d(top, { b_H, b_H })
        end
        -- bot = bot.unsqueeze(1)
        bot = bot:unsqueeze(2)
        -- top = top.unsqueeze(2)
        top = top:unsqueeze(3)
        -- bot = bot.view(bot.shape[0], bot.shape[1], bot.shape[2], -1)
        bot = bot:view(bot.shape[1], bot.shape[2], bot.shape[3], -1)
        top = top:view(top.shape[1], top.shape[2], top.shape[3], -1)

        local fsp = (bot * top):mean(-1)
        -- fsp_list.append(fsp)
        fsp_list[#fsp_list + 1] = fsp
    end
    return fsp_list
end

---------------------------------------------------------------------------------------------
-- distiller_zoo/FT.py
---------------------------------------------------------------------------------------------
local FactorTransfer = nn.Module:extend("FactorTransfer")
-- def __init__(self, p1=2, p2=1):
function FactorTransfer:init(p1, p2)
    self.p1 = p1 or 2
    self.p2 = p2 or 1
end

function FactorTransfer:forward(f_s, f_t)
    return self:factor_loss(f_s, f_t)
end

function FactorTransfer:factor_loss(f_s, f_t)
    local s_H, t_H = f_s.shape[3], f_t.shape[3]
    if s_H > t_H then
        f_s = F.adaptive_avg_pool2d(f_s, { t_H, t_H })
    elseif s_H < t_H then
        f_t = F.adaptive_avg_pool2d(f_t, { s_H, s_H })
    end
    if self.p2 == 1 then
        return (self:factor(f_s) - self:factor(f_t)):abs():mean()
    else
        return (self:factor(f_s) - self:factor(f_t)):pow(self.p2):mean()
    end
end

function FactorTransfer:factor(f)
    return F.normalize(f:pow(self.p1):mean(2):view(f:size(1), -1))
end

---------------------------------------------------------------------------------------------
-- distiller_zoo/NST.py
---------------------------------------------------------------------------------------------
local NSTLoss = nn.Module:extend("NSTLoss")
function NSTLoss:forward(g_s, g_t)
    local out = {}
    for i = 1, #g_s do
        out[i] = self:nst_loss(g_s[i], g_t[i])
    end
    return out
end

function NSTLoss:nst_loss(f_s, f_t)
    local s_H, t_H = f_s.shape[3], f_t.shape[3]
    if s_H > t_H then
        f_s = F.adaptive_avg_pool2d(f_s, { t_H, t_H })
    elseif s_H < t_H then
        f_t = F.adaptive_avg_pool2d(f_t, { s_H, s_H })
    end

    -- f_s = f_s.view(f_s.shape[0], f_s.shape[1], -1)
    f_s = f_s:view(f_s.shape[1], f_s.shape[2], -1)
    -- f_s = F.normalize(f_s, dim=2)
    f_s = F.normalize(f_s, { dim = 3 })
    f_t = f_t:view(f_t.shape[1], f_t.shape[2], -1)
    f_t = F.normalize(f_t, { dim = 3 })

    -- set full_loss as False to avoid unnecessary computation
    local full_loss = true
    if full_loss then
        -- return (self.poly_kernel(f_t, f_t).mean().detach() + self.poly_kernel(f_s, f_s).mean()
        --         - 2 * self.poly_kernel(f_s, f_t).mean())
        return (self:poly_kernel(f_t, f_t):mean():detach() + self:poly_kernel(f_s, f_s):mean()
            - 2 * self:poly_kernel(f_s, f_t):mean())
    else
        return self:poly_kernel(f_s, f_s):mean() - 2 * self:poly_kernel(f_s, f_t):mean()
    end
end

function NSTLoss:poly_kernel(a, b)
    -- a = a.unsqueeze(1)
    a = a:unsqueeze(2)
    -- b = b.unsqueeze(2)
    b = b:unsqueeze(3)
    local res = (a * b):sum(-1):pow(2)
    return res
end

---------------------------------------------------------------------------------------------
-- the checks: fixed inputs from formulas (the same in the PyTorch script), PyTorch's values
---------------------------------------------------------------------------------------------
-- fn(torch.arange(float(n)) * a + b)
local function ar(n, a, b, fn)
    return fn(tide.arange(0, n):float() * a + b)
end

local function feats()
    local f_s = ar(216, 0.37, 0.1, tide.sin):view(4, 6, 3, 3)
    local f_t = ar(216, 0.23, -0.2, tide.cos):view(4, 6, 3, 3)
    local f_s2 = ar(96, 0.41, 0.3, tide.sin):view(4, 6, 2, 2)
    local f_t2 = ar(216, 0.19, 0.5, tide.cos):view(4, 6, 3, 3)
    local f_t3 = ar(96, 0.31, -0.4, tide.cos):view(4, 6, 2, 2)
    local y_s = ar(20, 0.7, 0.0, tide.sin):view(4, 5) * 2
    local y_t = ar(20, 0.45, 0.0, tide.cos):view(4, 5) * 2
    return f_s, f_t, f_s2, f_t2, f_t3, y_s, y_t
end

-- a gradient's sum of squares and its sum weighted by cos(0.11 i)
local function probe(g)
    local w = ar(g:numel(), 0.11, 0.0, tide.cos):view(g.shape)
    return { g:pow(2):sum():item(), (g * w):sum():item() }
end

-- out: a loss or a list of them; the values, and the summed loss
local function values(out)
    if tide.is_tensor(out) then
        return { out:item() }, out
    end
    local vals, total = {}, nil
    for i, o in ipairs(out) do
        vals[i] = o:item()
        total = total and total + o or o
    end
    return vals, total
end

-- computes fn() with grad on the leaves req and checks the loss values and their gradients
local function check(name, want, grads, fn, req)
    req = req or {}
    for _, r in ipairs(req) do
        r:requires_grad_(true)
    end
    local vals, total = values(fn())
    assert_close_list(want, vals, 1e-4, name)
    if #req > 0 then
        total:sum():backward()
        for i, r in ipairs(req) do
            assert_close_list(grads[i], probe(r.grad), 1e-3, name .. " grad " .. i)
        end
    end
end

describe("HobbitLong/RepDistiller distiller_zoo", function()
    local f_s, f_t, f_s2, f_t2, f_t3, y_s, y_t

    before_each(function()
        f_s, f_t, f_s2, f_t2, f_t3, y_s, y_t = feats()
    end)

    it("DistillKL (KD.py): the T^2-scaled KL and its gradient", function()
        check("KD", { 1.219914 }, { { 0.1211351, -0.04423492 } },
            function() return DistillKL(4)(y_s, y_t) end, { y_s })
    end)

    it("HintLoss (FitNet.py) and Correlation (CC.py)", function()
        check("Hint", { 0.9685214 }, nil, function() return HintLoss()(f_s, f_t) end)
        check("CC", { 39.62497 }, nil,
            function() return Correlation()(f_s:view(4, -1), f_t:view(4, -1)) end)
    end)

    it("Attention (AT.py), with the adaptive pooling, and its gradients", function()
        check("AT", { 0.02880188, 0.000799091 },
            { { 0.0001789173, -0.006535854 }, { 6.852885e-05, 0.0006345385 } },
            function() return Attention()({ f_s, f_s2 }, { f_t, f_t2 }) end, { f_s, f_s2 })
    end)

    it("Similarity (SP.py): the normalized Gram matrices, and its gradients", function()
        check("SP", { 0.3862348, 0.1440716 },
            { { 0.001741351, -0.01705958 }, { 0.003586643, 0.03370026 } },
            function() return Similarity()({ f_s, f_s2 }, { f_t, f_t2 }) end, { f_s, f_s2 })
    end)

    it("VIDLoss (VID.py): the regressor and the softplus variance", function()
        local vid = VIDLoss(6, 4, 6)
        -- for i, p in enumerate(vid.regressor.parameters()):
        --     p.copy_(ar(p.numel(), 0.3 + 0.1 * i, 0.2, torch.sin).view(p.shape) * 0.5)
        tide.no_grad(function()
            for i, p in ipairs(vid.regressor:parameters()) do
                p:copy_(ar(p:numel(), 0.3 + 0.1 * (i - 1), 0.2, tide.sin):view(p.shape) * 0.5)
            end
        end)
        assert.are.equal(4, #vid:parameters()) -- 3 conv weights and log_scale
        check("VID", { 0.8500107 }, nil, function() return vid(f_s2, f_t) end)
    end)

    it("RKDLoss (RKD.py): distance and angle losses, and the gradient", function()
        local d = RKDLoss.pdist(f_s:view(4, -1))
        assert.are.same({ 4, 4 }, d.shape)
        assert.are.equal(0, d:diagonal():abs():sum():item())
        check("RKD", { 3.449508 }, { { 2.533746, 0.02398407 } },
            function() return RKDLoss()(f_s, f_t) end, { f_s })
    end)

    it("PKT (PKT.py): the cosine-similarity KL, and its gradient", function()
        check("PKT", { 0.1167582 }, { { 0.002932074, 0.01420986 } },
            function() return PKT()(f_s:view(4, -1), f_t:view(4, -1)) end, { f_s })
    end)

    it("ABLoss (AB.py), FSP (FSP.py), FactorTransfer (FT.py), NSTLoss (NST.py)", function()
        check("AB", { 0.117843, 0.09230585 }, nil,
            function() return ABLoss(2)({ f_s, f_s2 }, { f_t, f_t3 }) end)
        local fsp = FSP({ { 4, 6, 3, 3 }, { 4, 6, 2, 2 } }, { { 4, 6, 3, 3 }, { 4, 6, 3, 3 } })
        check("FSP", { 0.2853907 }, nil, function() return fsp({ f_s, f_s2 }, { f_t, f_t2 }) end)
        assert.has_error(function() FSP({ { 4, 6, 3, 3 } }, { { 4, 5, 3, 3 } }) end)
        check("FT", { 0.02139734 }, nil, function() return FactorTransfer()(f_s2, f_t) end)
        check("NST", { 0.3982874, 0.06967771 }, nil,
            function() return NSTLoss()({ f_s, f_s2 }, { f_t, f_t2 }) end)
    end)

    it("2 SGD steps of a student distilled from a fixed teacher (CE + KD + RKD)", function()
        local function mlp(k)
            local m = nn.Sequential(nn.Linear(8, 6), nn.ReLU(), nn.Linear(6, 5))
            tide.no_grad(function()
                for i, p in ipairs(m:parameters()) do
                    -- p.copy_(ar(p.numel(), 0.5 + 0.13 * i + k, 0.1 * k, torch.sin)
                    --         .view(p.shape) * 0.4)
                    p:copy_(ar(p:numel(), 0.5 + 0.13 * (i - 1) + k, 0.1 * k, tide.sin)
                        :view(p.shape) * 0.4)
                end
            end)
            return m
        end
        local s, t = mlp(0.0), mlp(0.3)
        local x = ar(32, 0.29, 0.0, tide.cos):view(4, 8)
        -- y = torch.tensor([0, 2, 4, 1])
        local y = tide.tensor({ 1, 3, 5, 2 })
        local kd, rkd = DistillKL(4), RKDLoss()
        local opt = optim.SGD(s:parameters(), { lr = 0.1, momentum = 0.9 })
        local losses = {}
        for step = 1, 2 do
            -- feat_s = s[1](s[0](x)); logit_s = s[2](feat_s)
            local feat_s = s[2](s[1](x))
            local logit_s = s[3](feat_s)
            local feat_t, logit_t = tide.no_grad(function()
                local ft = t[2](t[1](x))
                return ft, t[3](ft)
            end)
            local loss = F.cross_entropy(logit_s, y) + 0.9 * kd(logit_s, logit_t)
                + rkd(feat_s, feat_t)
            opt:zero_grad()
            loss:backward()
            opt:step()
            losses[step] = loss:item()
            assert_finite(losses[step], "step " .. step)
        end
        assert_close_list({ 8.403946, 3.389598 }, losses, 1e-4, "steps")
        assert.is_true(losses[2] < losses[1])
    end)
end)
