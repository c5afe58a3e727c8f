-- ported_scripts69_spec.lua — fxia22/pointnet.pytorch's pointnet/model.py (STN3d, STNkd,
-- PointNetfeat, PointNetCls, PointNetDenseCls, feature_transform_regularizer, the __main__ shape
-- checks) with 2 steps of utils/train_classification.py, and vsitzmann/siren's
-- explore_siren.ipynb core (get_mgrid, SineLayer, Siren, the laplace/divergence/gradient
-- operators, a few fitting steps), ported line for line at tiny sizes; values checked against
-- PyTorch 1.13 on deterministic weights. The Python line stands above each Lua line that differs.
-- Dims and class targets are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- every parameter, in named_parameters order (k = 0, 1, ...), set from a fixed formula:
-- p.copy_((scale * torch.sin(0.731 * torch.arange(p.numel()) + 1.37 * k)).view(p.shape))
local function fill(model, scale)
    tide.no_grad(function()
        for k, np in ipairs(model:named_parameters()) do
            local p = np[2]
            local v = (tide.arange(p:numel()):float() * 0.731 + 1.37 * (k - 1)):sin() * scale
            p:copy_(v:view(p.shape))
        end
    end)
end

---------------------------------------------------------------------------------------------
-- 1. fxia22/pointnet.pytorch pointnet/model.py
---------------------------------------------------------------------------------------------
-- the original's channel widths 64/128/1024 (convs) and 512/256 (fcs) are C1/C2/C3 and F1/F2
-- here, tiny to keep the spec fast; the structure is the original's
local C1, C2, C3, F1, F2 = 8, 16, 32, 16, 8

-- class STN3d(nn.Module):
local STN3d = nn.Module:extend("STN3d")
function STN3d:init()
    -- self.conv1 = torch.nn.Conv1d(3, 64, 1)
    self.conv1 = nn.Conv1d(3, C1, 1)
    self.conv2 = nn.Conv1d(C1, C2, 1)
    self.conv3 = nn.Conv1d(C2, C3, 1)
    self.fc1 = nn.Linear(C3, F1)
    self.fc2 = nn.Linear(F1, F2)
    self.fc3 = nn.Linear(F2, 9)
    self.relu = nn.ReLU()

    self.bn1 = nn.BatchNorm1d(C1)
    self.bn2 = nn.BatchNorm1d(C2)
    self.bn3 = nn.BatchNorm1d(C3)
    self.bn4 = nn.BatchNorm1d(F1)
    self.bn5 = nn.BatchNorm1d(F2)
end

function STN3d:forward(x)
    -- batchsize = x.size()[0]
    local batchsize = x:size()[1]
    x = F.relu(self.bn1(self.conv1(x)))
    x = F.relu(self.bn2(self.conv2(x)))
    x = F.relu(self.bn3(self.conv3(x)))
    -- x = torch.max(x, 2, keepdim=True)[0]
    x = (tide.max(x, 3, true))
    x = x:view(-1, C3)

    x = F.relu(self.bn4(self.fc1(x)))
    x = F.relu(self.bn5(self.fc2(x)))
    x = self.fc3(x)

    -- iden = Variable(torch.from_numpy(np.array([1,0,0,0,1,0,0,0,1]).astype(np.float32)))
    --     .view(1,9).repeat(batchsize,1)
    -- (Lua has no NumPy: torch.from_numpy(np.array(...).astype(np.float32)) is a float32
    -- tide.tensor; repeat is a Lua keyword: the method is t["repeat"](t, ...))
    local iden = tide.autograd.Variable(tide.tensor({ 1, 0, 0, 0, 1, 0, 0, 0, 1 },
        { dtype = tide.float32 })):view(1, 9)
    iden = iden["repeat"](iden, batchsize, 1)
    if x.is_cuda then
        iden = iden:cuda()
    end
    x = x + iden
    x = x:view(-1, 3, 3)
    return x
end

-- class STNkd(nn.Module):
local STNkd = nn.Module:extend("STNkd")
-- def __init__(self, k=64):
function STNkd:init(k)
    k = k or C1
    self.conv1 = nn.Conv1d(k, C1, 1)
    self.conv2 = nn.Conv1d(C1, C2, 1)
    self.conv3 = nn.Conv1d(C2, C3, 1)
    self.fc1 = nn.Linear(C3, F1)
    self.fc2 = nn.Linear(F1, F2)
    self.fc3 = nn.Linear(F2, k * k)
    self.relu = nn.ReLU()

    self.bn1 = nn.BatchNorm1d(C1)
    self.bn2 = nn.BatchNorm1d(C2)
    self.bn3 = nn.BatchNorm1d(C3)
    self.bn4 = nn.BatchNorm1d(F1)
    self.bn5 = nn.BatchNorm1d(F2)

    self.k = k
end

function STNkd:forward(x)
    local batchsize = x:size()[1]
    x = F.relu(self.bn1(self.conv1(x)))
    x = F.relu(self.bn2(self.conv2(x)))
    x = F.relu(self.bn3(self.conv3(x)))
    x = (tide.max(x, 3, true))
    x = x:view(-1, C3)

    x = F.relu(self.bn4(self.fc1(x)))
    x = F.relu(self.bn5(self.fc2(x)))
    x = self.fc3(x)

    -- iden = Variable(torch.from_numpy(np.eye(self.k).flatten().astype(np.float32)))
    --     .view(1,self.k*self.k).repeat(batchsize,1)
    local iden = tide.autograd.Variable(tide.eye(self.k, { dtype = tide.float32 }):flatten())
        :view(1, self.k * self.k)
    iden = iden["repeat"](iden, batchsize, 1)
    if x.is_cuda then
        iden = iden:cuda()
    end
    x = x + iden
    x = x:view(-1, self.k, self.k)
    return x
end

-- class PointNetfeat(nn.Module):
local PointNetfeat = nn.Module:extend("PointNetfeat")
-- def __init__(self, global_feat = True, feature_transform = False):
function PointNetfeat:init(global_feat, feature_transform)
    if global_feat == nil then global_feat = true end
    self.stn = STN3d()
    self.conv1 = nn.Conv1d(3, C1, 1)
    self.conv2 = nn.Conv1d(C1, C2, 1)
    self.conv3 = nn.Conv1d(C2, C3, 1)
    self.bn1 = nn.BatchNorm1d(C1)
    self.bn2 = nn.BatchNorm1d(C2)
    self.bn3 = nn.BatchNorm1d(C3)
    self.global_feat = global_feat
    self.feature_transform = feature_transform or false
    if self.feature_transform then
        -- self.fstn = STNkd(k=64)
        self.fstn = STNkd(C1)
    end
end

function PointNetfeat:forward(x)
    -- n_pts = x.size()[2]
    local n_pts = x:size()[3]
    local trans = self.stn(x)
    -- x = x.transpose(2, 1)
    x = x:transpose(3, 2)
    x = tide.bmm(x, trans)
    x = x:transpose(3, 2)
    x = F.relu(self.bn1(self.conv1(x)))

    local trans_feat
    if self.feature_transform then
        trans_feat = self.fstn(x)
        x = x:transpose(3, 2)
        x = tide.bmm(x, trans_feat)
        x = x:transpose(3, 2)
    else
        trans_feat = nil
    end

    local pointfeat = x
    x = F.relu(self.bn2(self.conv2(x)))
    x = self.bn3(self.conv3(x))
    x = (tide.max(x, 3, true))
    x = x:view(-1, C3)
    if self.global_feat then
        return x, trans, trans_feat
    else
        -- x = x.view(-1, 1024, 1).repeat(1, 1, n_pts)
        x = x:view(-1, C3, 1)
        x = x["repeat"](x, 1, 1, n_pts)
        -- return torch.cat([x, pointfeat], 1), trans, trans_feat
        return tide.cat({ x, pointfeat }, 2), trans, trans_feat
    end
end

-- class PointNetCls(nn.Module):
local PointNetCls = nn.Module:extend("PointNetCls")
-- def __init__(self, k=2, feature_transform=False):
function PointNetCls:init(k, feature_transform)
    k = k or 2
    self.feature_transform = feature_transform or false
    -- self.feat = PointNetfeat(global_feat=True, feature_transform=feature_transform)
    self.feat = PointNetfeat(true, self.feature_transform)
    self.fc1 = nn.Linear(C3, F1)
    self.fc2 = nn.Linear(F1, F2)
    self.fc3 = nn.Linear(F2, k)
    -- self.dropout = nn.Dropout(p=0.3)
    self.dropout = nn.Dropout({ p = 0.3 })
    self.bn1 = nn.BatchNorm1d(F1)
    self.bn2 = nn.BatchNorm1d(F2)
    self.relu = nn.ReLU()
end

function PointNetCls:forward(x)
    local trans, trans_feat
    x, trans, trans_feat = self.feat(x)
    x = F.relu(self.bn1(self.fc1(x)))
    x = F.relu(self.bn2(self.dropout(self.fc2(x))))
    x = self.fc3(x)
    -- return F.log_softmax(x, dim=1), trans, trans_feat
    return F.log_softmax(x, { dim = 2 }), trans, trans_feat
end

-- class PointNetDenseCls(nn.Module):
local PointNetDenseCls = nn.Module:extend("PointNetDenseCls")
function PointNetDenseCls:init(k, feature_transform)
    self.k = k or 2
    self.feature_transform = feature_transform or false
    -- self.feat = PointNetfeat(global_feat=False, feature_transform=feature_transform)
    self.feat = PointNetfeat(false, self.feature_transform)
    -- self.conv1 = torch.nn.Conv1d(1088, 512, 1)
    self.conv1 = nn.Conv1d(C3 + C1, F1, 1)
    self.conv2 = nn.Conv1d(F1, F2, 1)
    self.conv3 = nn.Conv1d(F2, C2, 1)
    self.conv4 = nn.Conv1d(C2, self.k, 1)
    self.bn1 = nn.BatchNorm1d(F1)
    self.bn2 = nn.BatchNorm1d(F2)
    self.bn3 = nn.BatchNorm1d(C2)
end

function PointNetDenseCls:forward(x)
    local batchsize = x:size()[1]
    local n_pts = x:size()[3]
    local trans, trans_feat
    x, trans, trans_feat = self.feat(x)
    x = F.relu(self.bn1(self.conv1(x)))
    x = F.relu(self.bn2(self.conv2(x)))
    x = F.relu(self.bn3(self.conv3(x)))
    x = self.conv4(x)
    x = x:transpose(3, 2):contiguous()
    -- x = F.log_softmax(x.view(-1,self.k), dim=-1)
    x = F.log_softmax(x:view(-1, self.k), { dim = -1 })
    x = x:view(batchsize, n_pts, self.k)
    return x, trans, trans_feat
end

local function feature_transform_regularizer(trans)
    local d = trans:size()[2]
    local batchsize = trans:size()[1] -- luacheck: ignore (unused, as in the original)
    -- I = torch.eye(d)[None, :, :]
    local I = tide.eye(d)[{ tide.newaxis, {}, {} }]
    if trans.is_cuda then
        I = I:cuda()
    end
    -- loss = torch.mean(torch.norm(torch.bmm(trans, trans.transpose(2,1)) - I, dim=(1,2)))
    local loss = tide.mean(tide.norm(tide.bmm(trans, trans:transpose(3, 2)) - I,
        { dim = { 2, 3 } }))
    return loss
end

-- the Python check's points: (torch.arange(2*3*6).float()*0.13).sin().view(2,3,6)
local function points_in()
    return (tide.arange(2 * 3 * 6):float() * 0.13):sin():view(2, 3, 6)
end

describe("fxia22/pointnet.pytorch (pointnet/model.py, utils/train_classification.py)", function()
    it("model.py's __main__ shape checks", function()
        tide.manual_seed(0)
        -- sim_data = Variable(torch.rand(32,3,2500))   (32 x 2500 -> 4 x 10 here)
        local sim_data = tide.rand(4, 3, 10)
        local trans = STN3d()
        local out = trans(sim_data)
        -- print('stn', out.size())
        assert.are.same({ 4, 3, 3 }, out:size())
        assert_finite(feature_transform_regularizer(out):item(), "stn loss")

        -- sim_data_64d = Variable(torch.rand(32, 64, 2500))
        local sim_data_64d = tide.rand(4, C1, 10)
        trans = STNkd(C1)
        out = trans(sim_data_64d)
        assert.are.same({ 4, C1, C1 }, out:size())
        assert_finite(feature_transform_regularizer(out):item(), "stn64d loss")

        local pointfeat = PointNetfeat(true)
        -- out, _, _ = pointfeat(sim_data)
        out = pointfeat(sim_data)
        assert.are.same({ 4, C3 }, out:size())

        pointfeat = PointNetfeat(false)
        out = pointfeat(sim_data)
        assert.are.same({ 4, C3 + C1, 10 }, out:size())

        -- cls = PointNetCls(k = 5)
        local cls = PointNetCls(5)
        out = cls(sim_data)
        assert.are.same({ 4, 5 }, out:size())

        local seg = PointNetDenseCls(3)
        out = seg(sim_data)
        assert.are.same({ 4, 10, 3 }, out:size())
    end)

    it("PointNetCls's output, transforms and regularizer match PyTorch 1.13", function()
        -- the Python check: cls = PointNetCls(k=3, feature_transform=True); fill(cls, 1.0);
        -- cls.eval(); out, trans, trans_feat = cls(points)   (BatchNorm's running stats 0 / 1)
        local cls = PointNetCls(3, true)
        local names = {}
        for i, np in ipairs(cls:named_parameters()) do names[i] = np[1] end
        assert.are.equal(66, #names)
        assert.are.equal("feat.stn.conv1.weight", names[1])
        assert.are.equal("bn2.bias", names[66])
        fill(cls, 1.0)
        cls:eval()
        local out, trans, tf = cls(points_in())
        assert.are.same({ 2, 3 }, out:size())
        -- PyTorch 1.13, model.py at these widths, the same fill and points, eval mode
        assert_close_list({ -2.5715248584747314, -1.2292845249176025, -0.4603237807750702,
            -0.007318236865103245, -4.92135763168335, -13.028919219970703 },
            out:flatten():tolist(), 1e-4, "out")
        -- trans[0] and trans_feat[1, 0], trans_feat.sum(), the regularizer of both
        assert_close_list({ 1.1664873361587524, -0.4958001673221588, -1.0355091094970703,
            -1.143983006477356, 0.28532761335372925, 0.09289636462926865, 0.9234687089920044,
            1.396904706954956, 2.2941620349884033 }, trans[1]:flatten():tolist(), 1e-4, "trans[0]")
        assert_close_list({ -4.396380424499512, -5.576300621032715, -4.575283527374268,
            -2.811100959777832, -0.7979347109794617, 1.04416024684906, 2.4904069900512695,
            3.49282169342041 }, tf[{ 2, 1 }]:tolist(), 1e-4, "trans_feat[1, 0]")
        assert_close_list({ -22.458410263061523, 618.8341064453125, 8.160011291503906 }, {
            tf:sum():item(),
            feature_transform_regularizer(tf):item(),
            feature_transform_regularizer(trans):item() }, 1e-4, "sum, regularizers")

        local seg = PointNetDenseCls(3, true)
        fill(seg, 1.0)
        seg:eval()
        local o = seg(points_in())
        assert.are.same({ 2, 6, 3 }, o:size())
        assert_close_list({ -4.894156455993652, -2.4901397228240967, -0.09473783522844315 },
            o[{ 2, 3 }]:tolist(), 1e-4, "seg[1, 2]")
        assert_close_list({ -148.3072052001953 }, { o:sum():item() }, 1e-4, "seg.sum()")
    end)

    it("train_classification.py: 2 steps of NLL + 0.001 * regularizer, Adam, StepLR", function()
        tide.manual_seed(0)
        -- classifier = PointNetCls(k=num_classes, feature_transform=opt.feature_transform)
        local classifier = PointNetCls(3, true)
        -- optimizer = optim.Adam(classifier.parameters(), lr=0.001, betas=(0.9, 0.999))
        local optimizer = optim.Adam(classifier:parameters(),
            { lr = 0.001, betas = { 0.9, 0.999 } })
        -- scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=20, gamma=0.5)
        -- (step_size 1 here, so that the 2 epochs see it act)
        local scheduler = optim.lr_scheduler.StepLR(optimizer, { step_size = 1, gamma = 0.5 })
        -- (a fixed batch of 4 clouds of 12 points; targets from the dataset's [:, 0])
        local points0 = tide.rand(4, 12, 3)
        local target0 = tide.tensor({ { 1 }, { 2 }, { 3 }, { 1 } }, { dtype = tide.int64 })
        local function eval_loss()
            classifier = classifier:eval()
            local pred = classifier(points0:transpose(3, 2))
            return F.nll_loss(pred, target0[{ {}, 1 }]):item()
        end
        local before = eval_loss()
        -- for epoch in range(opt.nepoch):
        for epoch = 1, 2 do
            -- scheduler.step() (the script's order: first in the epoch)
            scheduler:step()
            assert.are.equal(0.001 * 0.5 ^ epoch, optimizer.param_groups[1].lr)
            -- for i, data in enumerate(dataloader, 0):   (one batch)
            for _ = 1, 1 do
                -- points, target = data; target = target[:, 0]
                local target = target0[{ {}, 1 }]
                -- points = points.transpose(2, 1)
                local points = points0:transpose(3, 2)
                optimizer:zero_grad()
                classifier = classifier:train()
                local pred, _, trans_feat = classifier(points)
                local loss = F.nll_loss(pred, target)
                -- loss += feature_transform_regularizer(trans_feat) * 0.001
                loss = loss + feature_transform_regularizer(trans_feat) * 0.001
                loss:backward()
                optimizer:step()
                -- pred_choice = pred.data.max(1)[1]
                local _, pred_choice = pred:detach():max(2)
                -- correct = pred_choice.eq(target.data).cpu().sum()
                local correct = pred_choice:eq(target):cpu():sum()
                assert_finite(loss:item(), "loss")
                assert(correct:item() >= 0 and correct:item() <= 4)
            end
        end
        -- the eval-mode loss on the batch fell over the 2 steps
        local after = eval_loss()
        assert_finite(after, "eval loss")
        assert(after < before, ("loss did not fall: %g -> %g"):format(before, after))
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. vsitzmann/siren explore_siren.ipynb (its code cells)
---------------------------------------------------------------------------------------------
-- def get_mgrid(sidelen, dim=2):
local function get_mgrid(sidelen, dim)
    dim = dim or 2
    -- tensors = tuple(dim * [torch.linspace(-1, 1, steps=sidelen)])
    local tensors = {}
    for i = 1, dim do tensors[i] = tide.linspace(-1, 1, { steps = sidelen }) end
    -- mgrid = torch.stack(torch.meshgrid(*tensors), dim=-1)
    local mgrid = tide.stack(tide.meshgrid(unpack(tensors)), -1)
    mgrid = mgrid:reshape(-1, dim)
    return mgrid
end

-- class SineLayer(nn.Module):
local SineLayer = nn.Module:extend("SineLayer")
-- def __init__(self, in_features, out_features, bias=True, is_first=False, omega_0=30):
function SineLayer:init(in_features, out_features, opts)
    opts = opts or {}
    local bias = opts.bias
    if bias == nil then bias = true end
    self.omega_0 = opts.omega_0 or 30
    self.is_first = opts.is_first or false

    self.in_features = in_features
    -- self.linear = nn.Linear(in_features, out_features, bias=bias)
    self.linear = nn.Linear(in_features, out_features, { bias = bias })

    self:init_weights()
end

function SineLayer:init_weights()
    tide.no_grad(function()
        if self.is_first then
            -- self.linear.weight.uniform_(-1 / self.in_features, 1 / self.in_features)
            self.linear.weight:uniform_(-1 / self.in_features, 1 / self.in_features)
        else
            -- self.linear.weight.uniform_(-np.sqrt(6 / self.in_features) / self.omega_0,
            --                              np.sqrt(6 / self.in_features) / self.omega_0)
            self.linear.weight:uniform_(-math.sqrt(6 / self.in_features) / self.omega_0,
                math.sqrt(6 / self.in_features) / self.omega_0)
        end
    end)
end

function SineLayer:forward(input)
    return tide.sin(self.omega_0 * self.linear(input))
end

-- class Siren(nn.Module):
local Siren = nn.Module:extend("Siren")
-- def __init__(self, in_features, hidden_features, hidden_layers, out_features,
--              outermost_linear=False, first_omega_0=30, hidden_omega_0=30.):
function Siren:init(in_features, hidden_features, hidden_layers, out_features, opts)
    opts = opts or {}
    local first_omega_0, hidden_omega_0 = opts.first_omega_0 or 30, opts.hidden_omega_0 or 30.
    local net = {}
    -- self.net.append(SineLayer(in_features, hidden_features,
    --                           is_first=True, omega_0=first_omega_0))
    net[#net + 1] = SineLayer(in_features, hidden_features,
        { is_first = true, omega_0 = first_omega_0 })

    for _ = 1, hidden_layers do
        net[#net + 1] = SineLayer(hidden_features, hidden_features,
            { is_first = false, omega_0 = hidden_omega_0 })
    end

    if opts.outermost_linear then
        local final_linear = nn.Linear(hidden_features, out_features)

        tide.no_grad(function()
            final_linear.weight:uniform_(-math.sqrt(6 / hidden_features) / hidden_omega_0,
                math.sqrt(6 / hidden_features) / hidden_omega_0)
        end)

        net[#net + 1] = final_linear
    else
        net[#net + 1] = SineLayer(hidden_features, out_features,
            { is_first = false, omega_0 = hidden_omega_0 })
    end

    -- self.net = nn.Sequential(*self.net)
    self.net = nn.Sequential(unpack(net))
end

function Siren:forward(coords)
    -- coords = coords.clone().detach().requires_grad_(True)
    -- (allows to take derivative w.r.t. input)
    coords = coords:clone():detach():requires_grad_(true)
    local output = self.net(coords)
    return output, coords
end

local gradient

-- def divergence(y, x):
local function divergence(y, x)
    local div = 0.
    -- for i in range(y.shape[-1]):
    for i = 1, y.shape[#y.shape] do
        -- div += torch.autograd.grad(y[..., i], x, torch.ones_like(y[..., i]),
        --                            create_graph=True)[0][..., i:i+1]
        div = div + tide.autograd.grad(y[{ "...", i }], x, tide.ones_like(y[{ "...", i }]),
            { create_graph = true })[1][{ "...", { i, i } }]
    end
    return div
end

-- def laplace(y, x):
local function laplace(y, x)
    local grad = gradient(y, x)
    return divergence(grad, x)
end

-- def gradient(y, x, grad_outputs=None):
function gradient(y, x, grad_outputs)
    if grad_outputs == nil then
        grad_outputs = tide.ones_like(y)
    end
    -- grad = torch.autograd.grad(y, [x], grad_outputs=grad_outputs, create_graph=True)[0]
    local grad = tide.autograd.grad(y, { x }, { grad_outputs = grad_outputs,
        create_graph = true })[1]
    return grad
end

describe("vsitzmann/siren explore_siren.ipynb", function()
    it("get_mgrid, Siren's output, gradient and laplacian match PyTorch 1.13", function()
        assert_close_list({ -1, -1, -1, 0, -1, 1, 0, -1, 0, 0, 0, 1, 1, -1, 1, 0, 1, 1 },
            get_mgrid(3):flatten():tolist(), 1e-7, "get_mgrid(3)")
        assert.are.same({ 5, 1 }, get_mgrid(5, 1):size())
        tide.manual_seed(0)
        local s = Siren(2, 8, 2, 1, { outermost_linear = true })
        -- the init's bounds: first layer 1 / in_features, the others sqrt(6 / 8) / 30
        assert(s.net[1].linear.weight:abs():max():item() <= 0.5)
        assert(s.net[4].weight:abs():max():item() <= math.sqrt(6 / 8) / 30)
        assert(s.net[2].linear.weight:abs():max():item() > 0.5 * math.sqrt(6 / 8) / 30)
        -- then the Python check's fill, scale 0.05
        fill(s, 0.05)
        local coords0 = get_mgrid(3)
        local o, c = s(coords0)
        assert.is_true(c.requires_grad and c.is_leaf)
        assert.is_false(coords0.requires_grad)
        assert.are.same({ 9, 1 }, o:size())
        assert_close_list({ 0.08083278685808182, 0.09640056639909744, 0.06720149517059326,
            0.10177136212587357, 0.007082195952534676, 0.09428321570158005, 0.07543952763080597,
            0.047004491090774536, 0.05550261214375496 }, o:flatten():tolist(), 1e-4, "siren")
        local g = gradient(o, c)
        assert.are.same({ 9, 2 }, g:size())
        assert_close_list({ -0.000248795811785385, -0.3853576183319092, -0.35144299268722534,
            -0.24412193894386292, 0.10414190590381622, -0.042055606842041016,
            0.04559221863746643, 0.07021461427211761, -0.018307175487279892,
            -0.009973407723009586, 0.2598475217819214, 0.4100852608680725,
            -0.04443379119038582, 0.10806453973054886, 0.26689067482948303,
            0.21843700110912323, 0.5986231565475464, 0.7438495755195618 },
            g:flatten():tolist(), 1e-4, "gradient")
        -- second derivatives through sin (create_graph)
        local lap = laplace(o, c)
        assert.are.same({ 9, 1 }, lap:size())
        assert_close_list({ -0.3302142024040222, -6.974188804626465, -0.17827275395393372,
            -13.467172622680664, 1.3744423389434814, -6.121328353881836, -0.7371581792831421,
            9.472949981689453, -0.3227773904800415 }, lap:flatten():tolist(), 1e-4, "laplace")
    end)

    it("fits a tiny image: MSE, Adam, loss falling, gradient and laplacian each summary", function()
        tide.manual_seed(0)
        -- (a 4 x 4 image-like target instead of the cameraman, in [-1, 1] as Normalize(0.5, 0.5))
        local sidelength = 4
        local model_input = get_mgrid(sidelength, 2)
        local ground_truth = (model_input[{ {}, 1 }] * 2):sin():mul(model_input[{ {}, 2 }])
            :view(-1, 1)
        -- img_siren = Siren(in_features=2, out_features=1, hidden_features=256,
        --                   hidden_layers=3, outermost_linear=True)
        local img_siren = Siren(2, 16, 1, 1, { outermost_linear = true })
        -- optim = torch.optim.Adam(lr=1e-4, params=img_siren.parameters())  (1e-3 for 3 steps)
        local opt = optim.Adam(img_siren:parameters(), { lr = 1e-3 })
        local losses = {}
        local steps_til_summary = 2
        for step = 0, 3 do
            local model_output, coords = img_siren(model_input)
            local loss = ((model_output - ground_truth) ^ 2):mean()
            losses[#losses + 1] = loss:item()
            assert_finite(loss:item(), "loss")
            -- if not step % steps_til_summary:
            if step % steps_til_summary == 0 then
                local img_grad = gradient(model_output, coords)
                local img_laplacian = laplace(model_output, coords)
                -- img_grad.norm(dim=-1).cpu().view(256,256).detach().numpy()
                local gn = img_grad:norm({ dim = -1 }):cpu():view(sidelength, sidelength):detach()
                assert_finite(gn:sum():item(), "grad norm")
                assert_finite(img_laplacian:view(sidelength, sidelength):sum():item(), "laplacian")
            end
            opt:zero_grad()
            loss:backward()
            opt:step()
        end
        assert(losses[4] < losses[1], ("loss did not fall: %g -> %g"):format(losses[1], losses[4]))
    end)
end)
