-- ported_scripts137_spec.lua — ronghuaiyang/arcface-pytorch's models/metrics.py
-- (ArcMarginProduct, AddMarginProduct, SphereProduct) and HobbitLong/SupContrast's losses.py
-- (SupConLoss: contrast_mode 'all' and 'one', labels, mask and SimCLR paths, its ValueErrors),
-- ported line for line at tiny sizes (in_features 6, out_features 4, batch 5), checked against
-- PyTorch 1.13 with the same formula weights, then 3 SGD steps of a tiny embedding net +
-- ArcMarginProduct + CrossEntropyLoss. The Python line stands above each Lua line that differs.
-- Class labels of the margin heads are 1-based: metrics.py indexes with them only through
-- scatter_, whose index is 1-based in tide, and CrossEntropyLoss takes them as targets (1..C).
-- SupConLoss's labels stay 0-based: losses.py only compares them (torch.eq); its one
-- 1-based shift is the arange that scatter uses to build logits_mask.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

---------------------------------------------------------------------------------------------
-- 1. ronghuaiyang/arcface-pytorch models/metrics.py
---------------------------------------------------------------------------------------------
-- class ArcMarginProduct(nn.Module):
local ArcMarginProduct = nn.Module:extend("ArcMarginProduct")
-- def __init__(self, in_features, out_features, s=30.0, m=0.50, easy_margin=False):
function ArcMarginProduct:init(in_features, out_features, s, m, easy_margin)
    nn.Module.init(self)
    self.in_features = in_features
    self.out_features = out_features
    self.s = s or 30.0
    m = m or 0.50
    self.m = m
    -- self.weight = Parameter(torch.FloatTensor(out_features, in_features))
    self.weight = nn.Parameter(tide.empty(out_features, in_features))
    nn.init.xavier_uniform_(self.weight)

    self.easy_margin = easy_margin or false
    self.cos_m = math.cos(m)
    self.sin_m = math.sin(m)
    self.th = math.cos(math.pi - m)
    self.mm = math.sin(math.pi - m) * m
end

function ArcMarginProduct:forward(input, label)
    -- cosine = F.linear(F.normalize(input), F.normalize(self.weight))
    local cosine = F.linear(F.normalize(input), F.normalize(self.weight))
    -- sine = torch.sqrt((1.0 - torch.pow(cosine, 2)).clamp(0, 1))
    local sine = tide.sqrt((1.0 - tide.pow(cosine, 2)):clamp(0, 1))
    local phi = cosine * self.cos_m - sine * self.sin_m
    if self.easy_margin then
        -- phi = torch.where(cosine > 0, phi, cosine)
        phi = tide.where(cosine:gt(0), phi, cosine)
    else
        -- phi = torch.where(cosine > self.th, phi, cosine - self.mm)
        phi = tide.where(cosine:gt(self.th), phi, cosine - self.mm)
    end
    -- one_hot = torch.zeros(cosine.size(), device='cuda')
    local one_hot = tide.zeros(cosine:size(), { device = cosine.device })
    -- one_hot.scatter_(1, label.view(-1, 1).long(), 1)   (label 1-based: tide's scatter index)
    one_hot:scatter_(2, label:view(-1, 1):long(), 1)
    -- output = (one_hot * phi) + ((1.0 - one_hot) * cosine)
    local output = (one_hot * phi) + ((1.0 - one_hot) * cosine)
    -- output *= self.s
    output = output * self.s
    return output
end

-- class AddMarginProduct(nn.Module):
local AddMarginProduct = nn.Module:extend("AddMarginProduct")
-- def __init__(self, in_features, out_features, s=30.0, m=0.40):
function AddMarginProduct:init(in_features, out_features, s, m)
    nn.Module.init(self)
    self.in_features = in_features
    self.out_features = out_features
    self.s = s or 30.0
    self.m = m or 0.40
    -- self.weight = Parameter(torch.FloatTensor(out_features, in_features))
    self.weight = nn.Parameter(tide.empty(out_features, in_features))
    nn.init.xavier_uniform_(self.weight)
end

function AddMarginProduct:forward(input, label)
    local cosine = F.linear(F.normalize(input), F.normalize(self.weight))
    local phi = cosine - self.m
    -- one_hot = torch.zeros(cosine.size(), device='cuda')
    local one_hot = tide.zeros(cosine:size(), { device = cosine.device })
    -- one_hot.scatter_(1, label.view(-1, 1).long(), 1)
    one_hot:scatter_(2, label:view(-1, 1):long(), 1)
    local output = (one_hot * phi) + ((1.0 - one_hot) * cosine)
    -- output *= self.s
    output = output * self.s
    return output
end

-- Python's str of a float: "30.0", never Lua 5.1's "30"
local function str_float(x)
    return x == math.floor(x) and string.format("%.1f", x) or tostring(x)
end

-- def __repr__(self):
function AddMarginProduct:__tostring()
    -- return self.__class__.__name__ + '(' + 'in_features=' + str(self.in_features) ...
    return "AddMarginProduct(in_features=" .. self.in_features .. ", out_features="
        .. self.out_features .. ", s=" .. str_float(self.s) .. ", m=" .. str_float(self.m) .. ")"
end

-- class SphereProduct(nn.Module):
local SphereProduct = nn.Module:extend("SphereProduct")
-- def __init__(self, in_features, out_features, m=4):
function SphereProduct:init(in_features, out_features, m)
    nn.Module.init(self)
    self.in_features = in_features
    self.out_features = out_features
    self.m = m or 4
    self.base = 1000.0
    self.gamma = 0.12
    self.power = 1
    self.LambdaMin = 5.0
    self.iter = 0
    self.weight = nn.Parameter(tide.empty(out_features, in_features))
    -- nn.init.xavier_uniform(self.weight)
    nn.init.xavier_uniform(self.weight)

    -- duplication formula
    self.mlambda = {
        function(x) return x ^ 0 end,
        function(x) return x ^ 1 end,
        function(x) return 2 * x ^ 2 - 1 end,
        function(x) return 4 * x ^ 3 - 3 * x end,
        function(x) return 8 * x ^ 4 - 8 * x ^ 2 + 1 end,
        function(x) return 16 * x ^ 5 - 20 * x ^ 3 + 5 * x end,
    }
end

function SphereProduct:forward(input, label)
    -- self.iter += 1
    self.iter = self.iter + 1
    -- self.lamb = max(self.LambdaMin,
    --                 self.base * (1 + self.gamma * self.iter) ** (-1 * self.power))
    self.lamb = math.max(self.LambdaMin,
        self.base * (1 + self.gamma * self.iter) ^ (-1 * self.power))

    local cos_theta = F.linear(F.normalize(input), F.normalize(self.weight))
    -- cos_theta = cos_theta.clamp(-1, 1)
    cos_theta = cos_theta:clamp(-1, 1)
    -- cos_m_theta = self.mlambda[self.m](cos_theta)   (m indexes a Python list: m + 1 in Lua)
    local cos_m_theta = self.mlambda[self.m + 1](cos_theta)
    -- theta = cos_theta.data.acos()
    local theta = cos_theta:detach():acos()
    -- k = (self.m * theta / 3.14159265).floor()
    local k = (self.m * theta / 3.14159265):floor()
    -- phi_theta = ((-1.0) ** k) * cos_m_theta - 2 * k
    local phi_theta = ((-1.0) ^ k) * cos_m_theta - 2 * k
    -- NormOfFeature = torch.norm(input, 2, 1)
    local NormOfFeature = tide.norm(input, 2, 2)

    -- one_hot = torch.zeros(cos_theta.size())
    local one_hot = tide.zeros(cos_theta:size())
    -- one_hot = one_hot.cuda() if cos_theta.is_cuda else one_hot
    one_hot = cos_theta.is_cuda and one_hot:cuda() or one_hot
    -- one_hot.scatter_(1, label.view(-1, 1), 1)
    one_hot:scatter_(2, label:view(-1, 1), 1)

    -- output = (one_hot * (phi_theta - cos_theta) / (1 + self.lamb)) + cos_theta
    local output = (one_hot * (phi_theta - cos_theta) / (1 + self.lamb)) + cos_theta
    -- output *= NormOfFeature.view(-1, 1)
    output = output * NormOfFeature:view(-1, 1)
    return output
end

---------------------------------------------------------------------------------------------
-- 2. HobbitLong/SupContrast losses.py
---------------------------------------------------------------------------------------------
-- class SupConLoss(nn.Module):
local SupConLoss = nn.Module:extend("SupConLoss")
-- def __init__(self, temperature=0.07, contrast_mode='all', base_temperature=0.07):
function SupConLoss:init(temperature, contrast_mode, base_temperature)
    nn.Module.init(self)
    self.temperature = temperature or 0.07
    self.contrast_mode = contrast_mode or "all"
    self.base_temperature = base_temperature or 0.07
end

-- def forward(self, features, labels=None, mask=None):
function SupConLoss:forward(features, labels, mask)
    -- device = (torch.device('cuda') if features.is_cuda else torch.device('cpu'))
    local device = features.device

    -- if len(features.shape) < 3:
    if #features.shape < 3 then
        -- raise ValueError('`features` needs to be [bsz, n_views, ...],'
        --                  'at least 3 dimensions are required')
        error("`features` needs to be [bsz, n_views, ...],at least 3 dimensions are required")
    end
    if #features.shape > 3 then
        -- features = features.view(features.shape[0], features.shape[1], -1)
        features = features:view(features.shape[1], features.shape[2], -1)
    end

    -- batch_size = features.shape[0]
    local batch_size = features.shape[1]
    if labels ~= nil and mask ~= nil then
        error("Cannot define both `labels` and `mask`")
    elseif labels == nil and mask == nil then
        -- mask = torch.eye(batch_size, dtype=torch.float32).to(device)
        mask = tide.eye(batch_size, { dtype = tide.float32 }):to(device)
    elseif labels ~= nil then
        -- labels = labels.contiguous().view(-1, 1)
        labels = labels:contiguous():view(-1, 1)
        -- if labels.shape[0] != batch_size:
        if labels.shape[1] ~= batch_size then
            error("Num of labels does not match num of features")
        end
        -- mask = torch.eq(labels, labels.T).float().to(device)
        mask = tide.eq(labels, labels.T):float():to(device)
    else
        mask = mask:float():to(device)
    end

    -- contrast_count = features.shape[1]
    local contrast_count = features.shape[2]
    -- contrast_feature = torch.cat(torch.unbind(features, dim=1), dim=0)
    local contrast_feature = tide.cat(tide.unbind(features, 2), 1)
    local anchor_feature, anchor_count
    if self.contrast_mode == "one" then
        -- anchor_feature = features[:, 0]
        anchor_feature = features:select(2, 1)
        anchor_count = 1
    elseif self.contrast_mode == "all" then
        anchor_feature = contrast_feature
        anchor_count = contrast_count
    else
        -- raise ValueError('Unknown mode: {}'.format(self.contrast_mode))
        error(string.format("Unknown mode: %s", self.contrast_mode))
    end

    -- anchor_dot_contrast = torch.div(
    --     torch.matmul(anchor_feature, contrast_feature.T),
    --     self.temperature)
    local anchor_dot_contrast = tide.div(
        tide.matmul(anchor_feature, contrast_feature.T),
        self.temperature)
    -- for numerical stability
    -- logits_max, _ = torch.max(anchor_dot_contrast, dim=1, keepdim=True)
    local logits_max = tide.max(anchor_dot_contrast, { dim = 2, keepdim = true })
    local logits = anchor_dot_contrast - logits_max:detach()

    -- tile mask
    -- mask = mask.repeat(anchor_count, contrast_count)
    mask = mask["repeat"](mask, anchor_count, contrast_count)
    -- mask-out self-contrast cases
    -- logits_mask = torch.scatter(
    --     torch.ones_like(mask),
    --     1,
    --     torch.arange(batch_size * anchor_count).view(-1, 1).to(device),
    --     0
    -- )   (tide's scatter index is 1-based: arange from 1)
    local logits_mask = tide.scatter(
        tide.ones_like(mask),
        2,
        tide.arange(1, batch_size * anchor_count + 1):view(-1, 1):to(device),
        0
    )
    mask = mask * logits_mask

    -- compute log_prob
    -- exp_logits = torch.exp(logits) * logits_mask
    local exp_logits = tide.exp(logits) * logits_mask
    -- log_prob = logits - torch.log(exp_logits.sum(1, keepdim=True))
    local log_prob = logits - tide.log(exp_logits:sum(2, true))

    -- compute mean of log-likelihood over positive
    -- mask_pos_pairs = mask.sum(1)
    local mask_pos_pairs = mask:sum(2)
    -- mask_pos_pairs = torch.where(mask_pos_pairs < 1e-6, 1, mask_pos_pairs)
    mask_pos_pairs = tide.where(mask_pos_pairs:lt(1e-6), 1, mask_pos_pairs)
    -- mean_log_prob_pos = (mask * log_prob).sum(1) / mask_pos_pairs
    local mean_log_prob_pos = (mask * log_prob):sum(2) / mask_pos_pairs

    -- loss
    local loss = -(self.temperature / self.base_temperature) * mean_log_prob_pos
    -- loss = loss.view(anchor_count, batch_size).mean()
    loss = loss:view(anchor_count, batch_size):mean()

    return loss
end

---------------------------------------------------------------------------------------------
-- the checks
---------------------------------------------------------------------------------------------
-- formula weights, as the PyTorch script: sin(a * k + b), k = 0 .. r * c - 1, row-major
local function fm(r, c, a, b)
    return tide.sin(a * tide.arange(0, r * c, { dtype = tide.float32 }) + b):view(r, c)
end

local function values(t)
    return t:detach():contiguous():view(-1):tolist()
end

describe("ported_scripts137: arcface-pytorch margin heads", function()
    local X = fm(5, 6, 1.3, -0.2)
    -- label = torch.tensor([1, 0, 1, 3, 2])  (1-based: scatter's index)
    local label = tide.tensor({ 1, 0, 1, 3, 2 }, { dtype = tide.long }) + 1

    local function with_weight(head)
        tide.no_grad(function() head.weight:copy_(fm(4, 6, 0.7, 0.3) * 0.5) end)
        return head
    end

    it("ArcMarginProduct (easy_margin false and true) matches PyTorch", function()
        local hard = with_weight(ArcMarginProduct(6, 4))
        local easy = with_weight(ArcMarginProduct(6, 4, 30.0, 0.5, true))
        hard:train()
        easy:train()
        local out_h, out_e = hard(X, label), easy(X, label)
        assert.are.same({ 5, 4 }, out_h:size())
        assert_close_list({ 11.2112541, -27.2739773, 9.5237732, 11.728919, -23.519371,
            -1.7936412, 13.5997372, -11.3191013, -12.6276922, 3.8008378, -7.7353139,
            -13.0921974, 10.6202011, 3.4284444, -14.398406, -4.593019, 13.8207655,
            -16.9879379, -8.9680691, 14.2256746 }, values(out_h), 1e-4, "arc hard")
        assert_close_list({ 11.2112541, -17.9446449, 9.5237732, 11.728919, -11.7115507,
            -1.7936412, 13.5997372, -11.3191013, -12.6276922, 3.8008378, -7.7353139,
            -13.0921974, 10.6202011, 3.4284444, -14.398406, -4.593019, 13.8207655,
            -16.9879379, -8.9680691, 14.2256746 }, values(out_e), 1e-4, "arc easy")
        -- m = 1.2: th = cos(pi - m) = -0.362 > the labelled cosine of row 1 (-0.598), so the
        -- hard margin takes cosine - mm there (rows 1, 2, 4 and 5)
        local wide = with_weight(ArcMarginProduct(6, 4, 30.0, 1.2))
        assert.is_true(math.abs(wide.th - -0.3623577544766735) < 1e-12)
        assert_close_list({ 11.2112541, -51.4980545, 9.5237732, 11.728919, -45.2649612,
            -1.7936412, 13.5997372, -11.3191013, -12.6276922, -16.2637501, -7.7353139,
            -13.0921974, 10.6202011, 3.4284444, -14.398406, -22.611618, 13.8207655,
            -16.9879379, -25.3019485, 14.2256746 }, values(wide(X, label)), 1e-4, "arc m=1.2")
    end)

    it("AddMarginProduct matches PyTorch, and its __repr__", function()
        local head = with_weight(AddMarginProduct(6, 4))
        assert_close_list({ 11.2112541, -29.9446468, 9.5237732, 11.728919, -23.7115498,
            -1.7936412, 13.5997372, -11.3191013, -12.6276922, 5.6024165, -7.7353139,
            -13.0921974, 10.6202011, 3.4284444, -14.398406, -1.8175516, 13.8207655,
            -16.9879379, -6.1451321, 14.2256746 }, values(head(X, label)), 1e-4, "add")
        assert.are.equal("AddMarginProduct(in_features=6, out_features=4, s=30.0, m=0.4)",
            tostring(head))
    end)

    it("SphereProduct's lambda schedule and outputs match PyTorch", function()
        -- nn.init.xavier_uniform warns as PyTorch's does; the warning is checked here
        local warn = require("tide._warn")
        warn.reset("nn.init.xavier_uniform")
        local _, lines, made = require("spec.support.warnings")(SphereProduct, 6, 4)
        assert.are.equal(1, #lines)
        assert.is_truthy(lines[1]:find("tide: warning: nn.init.xavier_uniform is now deprecated "
            .. "in favor of nn.init.xavier_uniform_", 1, true))
        local head = with_weight(made)
        local o1 = head(X, label)
        assert.is_true(math.abs(head.lamb - 892.8571428571428) < 1e-9)
        assert_close_list({ 0.589763, -0.9514561, 0.5009938, 0.6169946, -0.7375832,
            -0.1117948, 0.84765, -0.7055016, -0.6685354, 0.9287431, -0.4095231, -0.6931273,
            0.6578198, 0.2123593, -0.8918434, 0.6254582, 0.7395222, -0.9089914, 0.3080708,
            0.761188 }, values(o1), 1e-4, "sphere iter 1")
        local o2 = head(X, label)
        assert.are.equal(2, head.iter)
        assert.is_true(math.abs(head.lamb - 806.4516129032259) < 1e-9)
        assert_close_list({ 0.589763, -0.9522572, 0.5009938, 0.6169946, -0.7383987,
            -0.1117948, 0.84765, -0.7055016, -0.6685354, 0.9284045, -0.4095231, -0.6931273,
            0.6578198, 0.2123593, -0.8918434, 0.6248967, 0.7395222, -0.9089914, 0.3075131,
            0.761188 }, values(o2), 1e-4, "sphere iter 2")
    end)
end)

describe("ported_scripts137: SupContrast SupConLoss", function()
    -- feats = F.normalize(fm(5, 2 * 3, 0.9, 0.4).view(5, 2, 3), dim=2)
    local feats = F.normalize(fm(5, 6, 0.9, 0.4):view(5, 2, 3), { dim = 3 })
    -- labels stay 0-based: SupConLoss only compares them
    local sl = tide.tensor({ 0, 1, 0, 1, 1 }, { dtype = tide.long })
    local mask = tide.tensor({ { 1, 0, 1, 0, 0 }, { 0, 1, 0, 0, 1 }, { 1, 0, 1, 0, 0 },
        { 0, 0, 0, 1, 0 }, { 0, 1, 0, 0, 1 } }, { dtype = tide.long })

    it("contrast_mode 'all' and 'one' with labels, a mask and none match PyTorch", function()
        local want = {
            all = { 16.046916961669922, 18.96796226501465, 25.56502914428711 },
            one = { 16.15139389038086, 19.03600311279297, 25.64846420288086 },
        }
        for _, mode in ipairs({ "all", "one" }) do
            local crit = SupConLoss(nil, mode)
            local got = { crit(feats, sl):item(), crit(feats, nil, mask):item(),
                crit(feats):item() }
            assert_close_list(want[mode], got, 1e-5, "supcon " .. mode)
        end
    end)

    it("the gradient w.r.t. the features matches PyTorch", function()
        local f = feats:clone():requires_grad_(true)
        SupConLoss()(f, sl):backward()
        assert.are.same({ 5, 2, 3 }, f.grad:size())
        assert_close_list({ 1.347297, 2.7583821, 2.08198, -0.117861, -3.0142541, -3.6295159,
            -1.1752605, 1.1895397, 2.654119, 1.1477022, -0.1339108, -1.3141835, -2.0331278,
            -1.7689466, -0.1660617, 1.4329295, 1.2890925, 0.1696973, -1.4410236, -1.8219371,
            -0.8240459, 1.8228509, 2.9108186, 1.7959355, 0.0560471, -2.6778345, -3.3851843,
            -1.2030504, 1.1548047, 2.6387248 }, values(f.grad), 1e-4, "supcon grad")
    end)

    it("features with more dims are flattened; its ValueErrors raise", function()
        local crit = SupConLoss()
        local four = feats:view(5, 2, 3, 1)
        assert.is_true(math.abs(crit(four, sl):item() - 16.046916961669922) < 1e-4)
        assert.has_error(function() crit(feats:select(2, 1), sl) end,
            "`features` needs to be [bsz, n_views, ...],at least 3 dimensions are required")
        assert.has_error(function() crit(feats, sl, mask) end,
            "Cannot define both `labels` and `mask`")
        assert.has_error(function() crit(feats, tide.tensor({ 0, 1 })) end,
            "Num of labels does not match num of features")
        assert.has_error(function() SupConLoss(0.07, "two")(feats) end, "Unknown mode: two")
    end)
end)

describe("ported_scripts137: training an embedding net with ArcMarginProduct", function()
    it("3 SGD steps: losses match PyTorch and fall", function()
        local X = fm(5, 6, 1.3, -0.2)
        local label = tide.tensor({ 1, 0, 1, 3, 2 }, { dtype = tide.long }) + 1
        local net = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 6))
        local metric = ArcMarginProduct(6, 4, 8.0, 0.5)
        tide.no_grad(function()
            net[1].weight:copy_(fm(8, 6, 0.5, 0.1) * 0.4)
            net[1].bias:zero_()
            net[3].weight:copy_(fm(6, 8, 0.8, -0.3) * 0.4)
            net[3].bias:zero_()
            metric.weight:copy_(fm(4, 6, 0.7, 0.3) * 0.5)
        end)
        local params = net:parameters()
        for _, p in ipairs(metric:parameters()) do params[#params + 1] = p end
        local opt = optim.SGD(params, { lr = 0.0003, momentum = 0.9 })
        local criterion = nn.CrossEntropyLoss()
        local losses = {}
        for step = 1, 3 do
            opt:zero_grad()
            local output = metric(net(X), label)
            local loss = criterion(output, label)
            loss:backward()
            opt:step()
            losses[step] = loss:item()
            assert_finite(losses[step], "loss")
        end
        assert_close_list({ 6.7885541915893555, 4.498612880706787, 4.31392765045166 }, losses,
            1e-3, "train losses")
        assert.is_true(losses[3] < losses[2] and losses[2] < losses[1])
    end)
end)
