-- ported_scripts185_spec.lua — WangYueFt/dgcnn's pytorch/model.py (knn, get_graph_feature,
-- DGCNN: four EdgeConv blocks of Conv2d + BatchNorm2d + LeakyReLU(0.2) with a max over the k
-- neighbours, Conv1d to emb_dims, adaptive max and avg pooling, the linear head with dropout) and
-- pytorch/util.py (cal_loss with label smoothing), ported line for line at tiny sizes: batch 2,
-- 3 x 16 points, k 4, emb_dims 16, 5 classes, the conv widths 64/64/128/256 scaled to 8/8/16/16
-- and the head's 512/256 to 16/8. The Python line stands above each Lua line that differs.
-- Checked against PyTorch 1.13 with the same weights on the same points; topk's indices, and so
-- knn's, are 1-based, and so are the class targets.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list
local close = ported.close

local function list(t)
    return t:detach():contiguous():view(-1):tolist()
end

---------------------------------------------------------------------------------------------
-- pytorch/model.py
---------------------------------------------------------------------------------------------
-- def knn(x, k):
local function knn(x, k)
    -- inner = -2*torch.matmul(x.transpose(2, 1), x)
    local inner = -2 * tide.matmul(x:transpose(3, 2), x)
    -- xx = torch.sum(x**2, dim=1, keepdim=True)
    local xx = tide.sum(x ^ 2, { dim = 2, keepdim = true })
    -- pairwise_distance = -xx - inner - xx.transpose(2, 1)
    local pairwise_distance = -xx - inner - xx:transpose(3, 2)

    -- idx = pairwise_distance.topk(k=k, dim=-1)[1]   # (batch_size, num_points, k)
    local _, idx = pairwise_distance:topk({ k = k, dim = -1 }) -- (batch_size, num_points, k)
    return idx
end

-- def get_graph_feature(x, k=20, idx=None):
local function get_graph_feature(x, k, idx)
    k = k or 20
    -- batch_size = x.size(0)
    local batch_size = x:size(1)
    -- num_points = x.size(2)
    local num_points = x:size(3)
    x = x:view(batch_size, -1, num_points)
    -- if idx is None:
    if idx == nil then
        idx = knn(x, k) -- (batch_size, num_points, k)
    end
    -- device = torch.device('cuda')  (the input's device here)
    local device = x.device

    -- idx_base = torch.arange(0, batch_size, device=device).view(-1, 1, 1)*num_points
    local idx_base = tide.arange(0, batch_size, { device = device }):view(-1, 1, 1) * num_points

    idx = idx + idx_base

    idx = idx:view(-1)

    -- _, num_dims, _ = x.size()
    local num_dims = x:size(2)

    -- x = x.transpose(2, 1).contiguous()   # (batch_size, num_points, num_dims)
    x = x:transpose(3, 2):contiguous() -- (batch_size, num_points, num_dims)
    -- feature = x.view(batch_size*num_points, -1)[idx, :]
    local feature = x:view(batch_size * num_points, -1)[{ idx, {} }]
    feature = feature:view(batch_size, num_points, k, num_dims)
    -- x = x.view(batch_size, num_points, 1, num_dims).repeat(1, 1, k, 1)
    -- (repeat is a Lua keyword: the method is t["repeat"](t, ...))
    x = x:view(batch_size, num_points, 1, num_dims)
    x = x["repeat"](x, 1, 1, k, 1)

    -- feature = torch.cat((feature-x, x), dim=3).permute(0, 3, 1, 2).contiguous()
    feature = tide.cat({ feature - x, x }, 4):permute(1, 4, 2, 3):contiguous()

    return feature
end

-- the conv widths of 64, 64, 128, 256 and the head's 512, 256, scaled down
local W1, W2, W3, W4, H1, H2 = 8, 8, 16, 16, 16, 8

-- class DGCNN(nn.Module):
local DGCNN = nn.Module:extend("DGCNN")
-- def __init__(self, args, output_channels=40):
function DGCNN:init(args, output_channels)
    output_channels = output_channels or 40
    self.args = args
    self.k = args.k

    -- self.bn1 = nn.BatchNorm2d(64)
    self.bn1 = nn.BatchNorm2d(W1)
    self.bn2 = nn.BatchNorm2d(W2)
    self.bn3 = nn.BatchNorm2d(W3)
    self.bn4 = nn.BatchNorm2d(W4)
    self.bn5 = nn.BatchNorm1d(args.emb_dims)

    -- self.conv1 = nn.Sequential(nn.Conv2d(6, 64, kernel_size=1, bias=False),
    --                            self.bn1,
    --                            nn.LeakyReLU(negative_slope=0.2))
    self.conv1 = nn.Sequential(nn.Conv2d(6, W1, { kernel_size = 1, bias = false }),
        self.bn1,
        nn.LeakyReLU({ negative_slope = 0.2 }))
    self.conv2 = nn.Sequential(nn.Conv2d(W1 * 2, W2, { kernel_size = 1, bias = false }),
        self.bn2,
        nn.LeakyReLU({ negative_slope = 0.2 }))
    self.conv3 = nn.Sequential(nn.Conv2d(W2 * 2, W3, { kernel_size = 1, bias = false }),
        self.bn3,
        nn.LeakyReLU({ negative_slope = 0.2 }))
    self.conv4 = nn.Sequential(nn.Conv2d(W3 * 2, W4, { kernel_size = 1, bias = false }),
        self.bn4,
        nn.LeakyReLU({ negative_slope = 0.2 }))
    -- self.conv5 = nn.Sequential(nn.Conv1d(512, args.emb_dims, kernel_size=1, bias=False),
    self.conv5 = nn.Sequential(
        nn.Conv1d(W1 + W2 + W3 + W4, args.emb_dims, { kernel_size = 1, bias = false }),
        self.bn5,
        nn.LeakyReLU({ negative_slope = 0.2 }))
    -- self.linear1 = nn.Linear(args.emb_dims*2, 512, bias=False)
    self.linear1 = nn.Linear(args.emb_dims * 2, H1, { bias = false })
    self.bn6 = nn.BatchNorm1d(H1)
    -- self.dp1 = nn.Dropout(p=args.dropout)
    self.dp1 = nn.Dropout({ p = args.dropout })
    self.linear2 = nn.Linear(H1, H2)
    self.bn7 = nn.BatchNorm1d(H2)
    self.dp2 = nn.Dropout({ p = args.dropout })
    self.linear3 = nn.Linear(H2, output_channels)
end

-- def forward(self, x):
function DGCNN:forward(x)
    -- batch_size = x.size(0)
    local batch_size = x:size(1)
    -- x = get_graph_feature(x, k=self.k)
    x = get_graph_feature(x, self.k)
    x = self.conv1(x)
    -- x1 = x.max(dim=-1, keepdim=False)[0]
    local x1 = x:max({ dim = -1, keepdim = false })

    x = get_graph_feature(x1, self.k)
    x = self.conv2(x)
    local x2 = x:max({ dim = -1, keepdim = false })

    x = get_graph_feature(x2, self.k)
    x = self.conv3(x)
    local x3 = x:max({ dim = -1, keepdim = false })

    x = get_graph_feature(x3, self.k)
    x = self.conv4(x)
    local x4 = x:max({ dim = -1, keepdim = false })

    -- x = torch.cat((x1, x2, x3, x4), dim=1)
    x = tide.cat({ x1, x2, x3, x4 }, 2)

    x = self.conv5(x)
    x1 = F.adaptive_max_pool1d(x, 1):view(batch_size, -1)
    x2 = F.adaptive_avg_pool1d(x, 1):view(batch_size, -1)
    -- x = torch.cat((x1, x2), 1)
    x = tide.cat({ x1, x2 }, 2)

    -- x = F.leaky_relu(self.bn6(self.linear1(x)), negative_slope=0.2)
    x = F.leaky_relu(self.bn6(self.linear1(x)), { negative_slope = 0.2 })
    x = self.dp1(x)
    x = F.leaky_relu(self.bn7(self.linear2(x)), { negative_slope = 0.2 })
    x = self.dp2(x)
    x = self.linear3(x)
    return x
end

---------------------------------------------------------------------------------------------
-- pytorch/util.py
---------------------------------------------------------------------------------------------
-- def cal_loss(pred, gold, smoothing=True):
local function cal_loss(pred, gold, smoothing)
    if smoothing == nil then smoothing = true end
    -- ''' Calculate cross entropy loss, apply label smoothing if needed. '''

    gold = gold:contiguous():view(-1)

    local loss
    if smoothing then
        local eps = 0.2
        -- n_class = pred.size(1)
        local n_class = pred:size(2)

        -- one_hot = torch.zeros_like(pred).scatter(1, gold.view(-1, 1), 1)
        local one_hot = tide.zeros_like(pred):scatter(2, gold:view(-1, 1), 1)
        one_hot = one_hot * (1 - eps) + (1 - one_hot) * eps / (n_class - 1)
        -- log_prb = F.log_softmax(pred, dim=1)
        local log_prb = F.log_softmax(pred, 2)

        -- loss = -(one_hot * log_prb).sum(dim=1).mean()
        loss = -(one_hot * log_prb):sum({ dim = 2 }):mean()
    else
        -- loss = F.cross_entropy(pred, gold, reduction='mean')
        loss = F.cross_entropy(pred, gold, { reduction = "mean" })
    end

    return loss
end

---------------------------------------------------------------------------------------------
-- the checks, against PyTorch 1.13's values
---------------------------------------------------------------------------------------------
-- x = (torch.sin(torch.arange(96) * 1.37) + 0.3 * torch.cos(torch.arange(96) * 0.29))
--     .reshape(2, 3, 16)
local function points()
    local i = tide.arange(0, 2 * 3 * 16)
    return (tide.sin(i * 1.37) + 0.3 * tide.cos(i * 0.29)):reshape(2, 3, 16)
end

-- for i, (n, p) in enumerate(model.named_parameters()):
--     p.copy_((torch.sin(torch.arange(p.numel()) * 0.37 + i + 1) * 0.5).reshape(p.shape))
local function det_init(model)
    tide.no_grad(function()
        for i, np_ in ipairs(model:named_parameters()) do
            local p = np_[2]
            p:copy_((tide.sin(tide.arange(0, p:numel()) * 0.37 + i) * 0.5):reshape(p.shape))
        end
    end)
end

local function new_model()
    -- model = DGCNN(args(k=4, emb_dims=16, dropout=0.5), output_channels=5)
    local model = DGCNN({ k = 4, emb_dims = 16, dropout = 0.5 }, 5)
    det_init(model)
    return model
end

describe("ported dgcnn (WangYueFt/dgcnn pytorch/model.py, util.py)", function()
    it("knn picks PyTorch's neighbours, each point first", function()
        local idx = knn(points(), 4)
        assert.are.same({ 2, 16, 4 }, idx.shape)
        local want = { 0, 2, 7, 5, 1, 6, 15, 10, 2, 5, 14, 0, 3, 4, 13, 8, 4, 3, 8, 13, 5, 2,
            14, 0, 6, 10, 1, 11, 7, 9, 12, 0, 8, 13, 3, 4, 9, 7, 12, 13, 10, 6, 11, 15, 11, 10, 6,
            14, 12, 13, 9, 7, 13, 12, 8, 3, 14, 5, 2, 11, 15, 10, 6, 1, 0, 14, 7, 3, 1, 6, 2, 15,
            2, 1, 11, 10, 3, 9, 12, 4, 4, 8, 9, 3, 5, 7, 10, 11, 6, 1, 2, 10, 7, 5, 14, 0, 8, 4,
            13, 9, 9, 3, 4, 12, 10, 11, 2, 5, 11, 10, 2, 15, 12, 3, 9, 4, 13, 8, 4, 12, 14, 0, 7,
            12, 15, 1, 11, 2 }
        for i = 1, #want do want[i] = want[i] + 1 end -- PyTorch's 0-based, tide's 1-based
        assert.are.same(want, list(idx))
    end)

    it("get_graph_feature: the neighbours minus the centre, then the centre", function()
        local gf = get_graph_feature(points(), 4)
        assert.are.same({ 2, 6, 16, 4 }, gf.shape)
        -- gf[1, :, 5, :]
        assert_close_list({ 0.0, 0.2896286, -0.2994725, -0.1735059, 0.0, -0.3297257, 0.0938064,
            0.1076618, 0.0, 0.0530017, -0.5877222, -0.8017395, -0.6290907, -0.6290907,
            -0.6290907, -0.6290907, 0.3981674, 0.3981674, 0.3981674, 0.3981674, 0.0562126,
            0.0562126, 0.0562126, 0.0562126 }, list(gf[{ 2, {}, 6, {} }]), 1e-5, "gf[2, :, 6, :]")
        -- (gf * torch.arange(gf.numel()).reshape(gf.shape).sin()).sum()
        local w = tide.arange(0, gf:numel()):reshape(gf.shape):sin()
        assert.is_true(close((gf * w):sum():item(), -0.2911982536315918, 1e-5))
        assert.is_true(close(gf:sum():item(), 4.278246879577637, 1e-5))
    end)

    it("DGCNN's eval logits and cal_loss, then one SGD step in train mode", function()
        local model = new_model()
        local x = points()
        -- gold = torch.tensor([1, 3])
        local gold = tide.tensor({ 2, 4 }, { dtype = "int64" })

        model:eval()
        local logits = model(x)
        assert.are.same({ 2, 5 }, logits.shape)
        assert_close_list({ -0.9639245, 0.0372366, -0.4330202, 0.0813118, 0.2295051, -0.9630541,
            0.0363868, -0.4322189, 0.0805855, 0.2301326 }, list(logits), 1e-4, "eval logits")
        assert.is_true(close(cal_loss(logits, gold):item(), 1.4922430515289307, 1e-4))

        -- model.train(); model.dp1.p = 0.0; model.dp2.p = 0.0  (dropout off to compare values)
        model:train()
        model.dp1.p = 0.0
        model.dp2.p = 0.0
        -- opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
        local opt = optim.SGD(model:parameters(), { lr = 0.05, momentum = 0.9,
            weight_decay = 1e-4 })
        local losses = {}
        for step = 1, 2 do
            opt:zero_grad()
            local loss = cal_loss(model(x), gold)
            loss:backward()
            if step == 1 then
                -- conv1.0.weight.grad * 1000 (its entries are near 1e-3)
                local g = model.conv1[1].weight.grad
                assert.are.same({ 8, 6, 1, 1 }, g.shape)
                g = g * 1000
                assert_close_list({ -0.4327, -0.8706, 1.1779, -1.6101, 3.3161, -2.8585, 0.1815,
                    -0.8805, 0.4176, -0.2276, 1.1208 }, { unpack(list(g), 1, 11) }, 2e-3,
                    "conv1.0.weight.grad * 1000")
                assert_close_list({ 0.099046, -0.2787042, 0.1545003, -0.2305089, 0.2556668 },
                    list(model.linear3.bias.grad), 1e-4, "linear3.bias.grad")
            end
            opt:step()
            losses[step] = loss:item()
            assert_finite(losses[step], "loss")
        end
        assert_close_list({ 1.750342845916748, 1.7275025844573975 }, losses, 1e-4, "losses")
        assert.is_true(losses[2] < losses[1])
        assert_close_list({ 0.0045218, 0.0004806, -0.0051024, 0.0056891, -0.0017763, -0.0035415,
            0.0060581, -0.0037834 }, list(model.bn1.running_mean), 1e-4, "bn1.running_mean")
        assert_close_list({ 0.8167183, 0.8252866, 0.8270355, 0.8175266, 0.820892, 0.8285908,
            0.8210863, 0.8174246 }, list(model.bn1.running_var), 1e-4, "bn1.running_var")
        assert_close_list({ 0.9866955, 1.031654, 1.0214504, 0.9612343, 0.8814049, 0.8222616,
            0.813661, 0.8599445 }, list(model.bn7.running_var), 1e-4, "bn7.running_var")
        model:eval()
        assert_close_list({ -0.9099281, 0.0324495, -0.4038634, 0.0633682, 0.2188316, -0.9089996,
            0.031593, -0.4031518, 0.0628205, 0.2192348 }, list(model(x)), 1e-4,
            "eval logits after the steps")
    end)
end)
