-- ported_scripts66_spec.lua — locuslab/TCN's TCN/tcn.py (Chomp1d, TemporalBlock with
-- weight_norm'ed convs, TemporalConvNet) and TCN/adding_problem/{model.py, utils.py's
-- data_generator, add_test.py's train step with clip_grad_norm_}; sthalles/SimCLR's simclr.py
-- info_nce_loss and utils.py's accuracy; facebookresearch/moco's moco/builder.py MoCo (a tiny
-- encoder in place of the torchvision ResNet, the queue, the momentum update,
-- _dequeue_and_enqueue, the einsum logits),
-- ported line for line at tiny sizes. The Python line stands above each Lua line that differs
-- from it. Dims, indices and class targets are 1-based. The PyTorch 1.13 values were computed on
-- the same deterministic weights and inputs (fill below).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- the test's deterministic weights, as the PyTorch reference fills them:
-- p.data.copy_((torch.sin(torch.arange(p.numel()) * 0.5 + i + off) * 0.3).view_as(p)), i 0-based
local function fill(model, off)
    local i = 0
    for _, p in ipairs(model:parameters()) do
        local v = (tide.arange(p:numel(), { dtype = tide.float32 }) * 0.5 + i + (off or 0)):sin()
        p.data:copy_((v * 0.3):view_as(p))
        i = i + 1
    end
end

local function flat(t)
    return t:reshape(-1):tolist()
end

---------------------------------------------------------------------------------------------
-- 1. locuslab/TCN TCN/tcn.py
---------------------------------------------------------------------------------------------
-- from torch.nn.utils import weight_norm
local weight_norm = nn.utils.weight_norm

-- class Chomp1d(nn.Module):
local Chomp1d = nn.Module:extend("Chomp1d")
function Chomp1d:init(chomp_size)
    self.chomp_size = chomp_size
end
function Chomp1d:forward(x)
    -- return x[:, :, :-self.chomp_size].contiguous()
    return x[{ {}, {}, { 1, x:size(3) - self.chomp_size } }]:contiguous()
end

-- class TemporalBlock(nn.Module):
local TemporalBlock = nn.Module:extend("TemporalBlock")
-- def __init__(self, n_inputs, n_outputs, kernel_size, stride, dilation, padding, dropout=0.2):
function TemporalBlock:init(n_inputs, n_outputs, kernel_size, stride, dilation, padding, dropout)
    dropout = dropout or 0.2
    -- self.conv1 = weight_norm(nn.Conv1d(n_inputs, n_outputs, kernel_size,
    --                                    stride=stride, padding=padding, dilation=dilation))
    self.conv1 = weight_norm(nn.Conv1d(n_inputs, n_outputs, kernel_size,
        { stride = stride, padding = padding, dilation = dilation }))
    self.chomp1 = Chomp1d(padding)
    self.relu1 = nn.ReLU()
    self.dropout1 = nn.Dropout(dropout)

    self.conv2 = weight_norm(nn.Conv1d(n_outputs, n_outputs, kernel_size,
        { stride = stride, padding = padding, dilation = dilation }))
    self.chomp2 = Chomp1d(padding)
    self.relu2 = nn.ReLU()
    self.dropout2 = nn.Dropout(dropout)

    self.net = nn.Sequential(self.conv1, self.chomp1, self.relu1, self.dropout1,
        self.conv2, self.chomp2, self.relu2, self.dropout2)
    -- self.downsample = nn.Conv1d(n_inputs, n_outputs, 1) if n_inputs != n_outputs else None
    self.downsample = n_inputs ~= n_outputs and nn.Conv1d(n_inputs, n_outputs, 1) or nil
    self.relu = nn.ReLU()
    self:init_weights()
end
function TemporalBlock:init_weights()
    -- self.conv1.weight.data.normal_(0, 0.01)
    -- (weight_norm's weight is recomputed from weight_g and weight_v before each forward, so
    -- this draw is overwritten there, in PyTorch as here)
    self.conv1.weight.data:normal_(0, 0.01)
    self.conv2.weight.data:normal_(0, 0.01)
    if self.downsample ~= nil then
        self.downsample.weight.data:normal_(0, 0.01)
    end
end
function TemporalBlock:forward(x)
    local out = self.net(x)
    -- res = x if self.downsample is None else self.downsample(x)
    local res = self.downsample == nil and x or self.downsample(x)
    return self.relu(out + res)
end

-- class TemporalConvNet(nn.Module):
local TemporalConvNet = nn.Module:extend("TemporalConvNet")
-- def __init__(self, num_inputs, num_channels, kernel_size=2, dropout=0.2):
function TemporalConvNet:init(num_inputs, num_channels, kernel_size, dropout)
    kernel_size, dropout = kernel_size or 2, dropout or 0.2
    local layers = {}
    local num_levels = #num_channels
    -- for i in range(num_levels):
    for i = 0, num_levels - 1 do
        local dilation_size = 2 ^ i
        -- in_channels = num_inputs if i == 0 else num_channels[i-1]
        local in_channels = i == 0 and num_inputs or num_channels[i]
        -- out_channels = num_channels[i]
        local out_channels = num_channels[i + 1]
        -- layers += [TemporalBlock(in_channels, out_channels, kernel_size, stride=1,
        --     dilation=dilation_size, padding=(kernel_size-1) * dilation_size, dropout=dropout)]
        layers[#layers + 1] = TemporalBlock(in_channels, out_channels, kernel_size, 1,
            math.floor(dilation_size), math.floor((kernel_size - 1) * dilation_size), dropout)
    end
    -- self.network = nn.Sequential(*layers)
    self.network = nn.Sequential(unpack(layers))
end
function TemporalConvNet:forward(x)
    return self.network(x)
end

-- TCN/adding_problem/model.py
-- class TCN(nn.Module):
local TCN = nn.Module:extend("TCN")
function TCN:init(input_size, output_size, num_channels, kernel_size, dropout)
    -- self.tcn = TemporalConvNet(input_size, num_channels, kernel_size=kernel_size,
    --                            dropout=dropout)
    self.tcn = TemporalConvNet(input_size, num_channels, kernel_size, dropout)
    self.linear = nn.Linear(num_channels[#num_channels], output_size)
    self:init_weights()
end
function TCN:init_weights()
    self.linear.weight.data:normal_(0, 0.01)
end
function TCN:forward(x)
    local y1 = self.tcn(x)
    -- return self.linear(y1[:, :, -1])
    return self.linear(y1[{ {}, {}, -1 }])
end

-- TCN/adding_problem/utils.py
local function data_generator(N, seq_length)
    -- X_num = torch.rand([N, 1, seq_length])
    local X_num = tide.rand({ N, 1, seq_length })
    local X_mask = tide.zeros({ N, 1, seq_length })
    local Y = tide.zeros({ N, 1 })
    for i = 1, N do
        -- positions = np.random.choice(seq_length, size=2, replace=False)
        local positions = tide.randperm(seq_length)[{ { 1, 2 } }]:tolist()
        -- X_mask[i, 0, positions[0]] = 1
        X_mask[{ i, 1, positions[1] }] = 1
        X_mask[{ i, 1, positions[2] }] = 1
        -- Y[i,0] = X_num[i, 0, positions[0]] + X_num[i, 0, positions[1]]
        Y[{ i, 1 }] = X_num[{ i, 1, positions[1] }] + X_num[{ i, 1, positions[2] }]
    end
    -- X = torch.cat((X_num, X_mask), dim=1)
    local X = tide.cat({ X_num, X_mask }, 2)
    -- return Variable(X), Variable(Y)
    return tide.autograd.Variable(X), tide.autograd.Variable(Y)
end

describe("locuslab/TCN tcn.py and the adding problem", function()
    it("names weight_norm's g and v as PyTorch, and the forward matches PyTorch's", function()
        tide.manual_seed(1111)
        local model = TCN(2, 1, { 3, 3 }, 2, 0.0)
        local names = {}
        for _, np in ipairs(model:named_parameters()) do
            names[#names + 1] = np[1]
        end
        assert.are.same({ "tcn.network.1.conv1.bias", "tcn.network.1.conv1.weight_g",
            "tcn.network.1.conv1.weight_v", "tcn.network.1.conv2.bias",
            "tcn.network.1.conv2.weight_g", "tcn.network.1.conv2.weight_v",
            "tcn.network.1.downsample.weight", "tcn.network.1.downsample.bias",
            "tcn.network.2.conv1.bias", "tcn.network.2.conv1.weight_g",
            "tcn.network.2.conv1.weight_v", "tcn.network.2.conv2.bias",
            "tcn.network.2.conv2.weight_g", "tcn.network.2.conv2.weight_v",
            "linear.weight", "linear.bias" }, names)
        fill(model)
        -- x = torch.cos(torch.arange(4 * 2 * 6) * 0.3).view(4, 2, 6)
        local x = (tide.arange(4 * 2 * 6, { dtype = tide.float32 }) * 0.3):cos():view(4, 2, 6)
        local out = model(x)
        assert.are.same({ 4, 1 }, out:size())
        assert_close_list({ 0.2781275510787964, 0.5525224208831787, 0.27540555596351624,
            0.4888409376144409 }, flat(out), 1e-5, "tcn")
        -- the weight g v / ||v|| computed by the forward
        assert_close_list({ 0.1991933137178421, 0.1311030387878418, 0.030914153903722763,
            -0.07684358954429626 }, { unpack(flat(model.tcn.network[1].conv1.weight), 1, 4) },
            1e-5, "weight")
    end)

    it("state_dict lists the shared convs under both names, as PyTorch's", function()
        local model = TCN(2, 1, { 3, 3 }, 2, 0.0)
        local keys = {}
        for k in pairs(model:state_dict()) do
            keys[#keys + 1] = k
        end
        table.sort(keys)
        local want = { "tcn.network.1.conv1.bias", "tcn.network.1.conv1.weight_g",
            "tcn.network.1.conv1.weight_v", "tcn.network.1.conv2.bias",
            "tcn.network.1.conv2.weight_g", "tcn.network.1.conv2.weight_v",
            "tcn.network.1.net.1.bias", "tcn.network.1.net.1.weight_g",
            "tcn.network.1.net.1.weight_v", "tcn.network.1.net.5.bias",
            "tcn.network.1.net.5.weight_g", "tcn.network.1.net.5.weight_v",
            "tcn.network.1.downsample.weight", "tcn.network.1.downsample.bias",
            "tcn.network.2.conv1.bias", "tcn.network.2.conv1.weight_g",
            "tcn.network.2.conv1.weight_v", "tcn.network.2.conv2.bias",
            "tcn.network.2.conv2.weight_g", "tcn.network.2.conv2.weight_v",
            "tcn.network.2.net.1.bias", "tcn.network.2.net.1.weight_g",
            "tcn.network.2.net.1.weight_v", "tcn.network.2.net.5.bias",
            "tcn.network.2.net.5.weight_g", "tcn.network.2.net.5.weight_v",
            "linear.weight", "linear.bias" }
        table.sort(want)
        assert.are.same(want, keys)
    end)

    it("trains add_test.py's step with Adam and clip_grad_norm_, the loss falling", function()
        tide.manual_seed(1111)
        local batch_size, seq_length, clip = 8, 6, 0.5
        local X_train, Y_train = data_generator(16, seq_length)
        assert.are.same({ 16, 2, 6 }, X_train:size())
        -- each row marks two positions, and Y is the sum of the numbers there
        assert.are.same({ 2, 2, 2, 2 }, flat(X_train[{ { 1, 4 }, 2 }]:sum(2)))
        local want = (X_train[{ {}, 1 }] * X_train[{ {}, 2 }]):sum(2, true)
        assert_close_list(flat(want), flat(Y_train), 1e-6, "Y")

        local model = TCN(2, 1, { 4, 4 }, 2, 0.0)
        -- optimizer = getattr(optim, args.optim)(model.parameters(), lr=lr)
        local optimizer = optim.Adam(model:parameters(), { lr = 4e-3 })
        model:train()
        local losses = {}
        for _ = 1, 3 do
            -- for i in range(0, X_train.size(0), batch_size):
            for i = 1, X_train:size(1), batch_size do
                -- x, y = X_train[i:(i+batch_size)], Y_train[i:(i+batch_size)]
                local x = X_train[{ { i, i + batch_size - 1 } }]
                local y = Y_train[{ { i, i + batch_size - 1 } }]
                optimizer:zero_grad()
                local output = model(x)
                local loss = F.mse_loss(output, y)
                loss:backward()
                -- if args.clip > 0:
                if clip > 0 then
                    -- torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
                    local total = nn.utils.clip_grad_norm_(model:parameters(), clip)
                    assert_finite(total, "grad norm")
                end
                optimizer:step()
                losses[#losses + 1] = loss:item()
            end
        end
        for _, l in ipairs(losses) do
            assert_finite(l, "loss")
        end
        assert.is_true(losses[#losses] < losses[1], "loss did not fall")
        assert.is_not_nil(model.tcn.network[1].conv1.weight_g.grad)
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. sthalles/SimCLR simclr.py info_nce_loss and utils.py accuracy
---------------------------------------------------------------------------------------------
local SimCLR = ported.class("SimCLR")
function SimCLR:__init__(args)
    self.args = args
    -- self.criterion = torch.nn.CrossEntropyLoss().to(self.args.device)
    self.criterion = nn.CrossEntropyLoss()
end
function SimCLR:info_nce_loss(features)
    -- labels = torch.cat([torch.arange(self.args.batch_size) for i in range(self.args.n_views)],
    --                    dim=0)
    local ar = {}
    for i = 1, self.args.n_views do
        ar[i] = tide.arange(self.args.batch_size)
    end
    local labels = tide.cat(ar, 1)
    -- labels = (labels.unsqueeze(0) == labels.unsqueeze(1)).float()
    labels = labels:unsqueeze(1):eq(labels:unsqueeze(2)):float()

    -- features = F.normalize(features, dim=1)
    features = F.normalize(features, { dim = 2 })

    local similarity_matrix = tide.matmul(features, features.T)

    -- discard the main diagonal from both: labels and similarities matrix
    -- mask = torch.eye(labels.shape[0], dtype=torch.bool).to(self.args.device)
    local mask = tide.eye(labels.shape[1], { dtype = tide.bool })
    -- labels = labels[~mask].view(labels.shape[0], -1)
    -- (~mask is mask:logical_not(): Lua 5.1 and LuaJIT have no unary ~)
    labels = labels[mask:logical_not()]:view(labels.shape[1], -1)
    similarity_matrix = similarity_matrix[mask:logical_not()]:view(similarity_matrix.shape[1], -1)

    -- select and combine multiple positives
    -- positives = similarity_matrix[labels.bool()].view(labels.shape[0], -1)
    local positives = similarity_matrix[labels:bool()]:view(labels.shape[1], -1)

    -- select only the negatives the negatives
    -- negatives = similarity_matrix[~labels.bool()].view(similarity_matrix.shape[0], -1)
    local negatives = similarity_matrix[labels:bool():logical_not()]
        :view(similarity_matrix.shape[1], -1)

    -- logits = torch.cat([positives, negatives], dim=1)
    local logits = tide.cat({ positives, negatives }, 2)
    -- labels = torch.zeros(logits.shape[0], dtype=torch.long)
    -- (PyTorch's class 0 is tide's class 1: the positive is the first column)
    labels = tide.ones(logits.shape[1], { dtype = tide.long })

    logits = logits / self.args.temperature
    return logits, labels
end

-- utils.py
-- def accuracy(output, target, topk=(1,)):
local function accuracy(output, target, topk)
    topk = topk or { 1 }
    return tide.no_grad(function()
        -- maxk = max(topk)
        local maxk = math.max(unpack(topk))
        local batch_size = target:size(1)

        -- _, pred = output.topk(maxk, 1, True, True)
        local _, pred = output:topk(maxk, 2, true, true)
        pred = pred:t()
        -- correct = pred.eq(target.view(1, -1).expand_as(pred))
        local correct = pred:eq(target:view(1, -1):expand_as(pred))

        local res = {}
        for _, k in ipairs(topk) do
            -- correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
            local correct_k = correct[{ { 1, k } }]:reshape(-1):float():sum(1, true)
            -- res.append(correct_k.mul_(100.0 / batch_size))
            res[#res + 1] = correct_k:mul_(100.0 / batch_size)
        end
        return res
    end)
end

describe("sthalles/SimCLR info_nce_loss and accuracy", function()
    it("gives PyTorch's logits, labels, loss and top-1/top-5 accuracy", function()
        local simclr = SimCLR({ batch_size = 3, n_views = 2, temperature = 0.07 })
        -- features = torch.sin(torch.arange(24) * 0.7).view(6, 4)
        local features = (tide.arange(24, { dtype = tide.float32 }) * 0.7):sin():view(6, 4)
        local logits, labels = simclr:info_nce_loss(features)
        assert.are.same({ 6, 5 }, logits:size())
        assert_close_list({ -6.786717891693115, -13.510144233703613, 11.001605987548828,
            1.5569926500320435, 3.6145405769348145, -6.087825298309326, -13.510144233703613,
            -13.366150856018066, 10.503883361816406, 1.0736374855041504, -6.0328521728515625,
            11.001605987548828, -13.366150856018066, -13.245477676391602, 10.257747650146484,
            -6.786717891693115, 10.503883361816406, -13.245477676391602, -13.235479354858398,
            10.444493293762207, -6.087825298309326, 1.5569926500320435, 10.257747650146484,
            -13.235479354858398, -13.34460163116455, -6.0328521728515625, 3.6145405769348145,
            1.0736374855041504, 10.444493293762207, -13.34460163116455 }, flat(logits), 1e-4,
            "logits")
        assert.are.equal(tide.int64, labels.dtype)
        assert.are.same({ 1, 1, 1, 1, 1, 1 }, labels:tolist())
        local loss = simclr.criterion(logits, labels)
        assert.is_true(ported.close(loss:item(), 17.097143173217773, 1e-5))
        -- top1, top5 = accuracy(logits, labels, topk=(1, 5))
        local acc = accuracy(logits, labels, { 1, 5 })
        assert.are.same({ 0, 100 }, { acc[1]:item(), acc[2]:item() })
        assert.are.same({ 1 }, acc[1]:size())
    end)

    it("accuracy counts a hit at each k as PyTorch's", function()
        local out = (tide.arange(20, { dtype = tide.float32 }) * 1.3):cos():view(4, 5)
        -- tgt = torch.tensor([0, 2, 4, 1])
        local tgt = tide.tensor({ 1, 3, 5, 2 }, { dtype = tide.long })
        local acc = accuracy(out, tgt, { 1, 2, 5 })
        assert.are.same({ 25, 50, 100 }, { acc[1]:item(), acc[2]:item(), acc[3]:item() })
    end)

    it("trains a tiny projection head on the loss, the loss falling", function()
        tide.manual_seed(0)
        local simclr = SimCLR({ batch_size = 4, n_views = 2, temperature = 0.5 })
        local model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 4))
        local optimizer = optim.Adam(model:parameters(), { lr = 1e-2 })
        local base = tide.randn({ 4, 6 })
        local losses = {}
        for _ = 1, 3 do
            -- images = torch.cat(images, dim=0)
            local images = tide.cat({ base + 0.05 * tide.randn({ 4, 6 }),
                base + 0.05 * tide.randn({ 4, 6 }) }, 1)
            local features = model(images)
            local logits, labels = simclr:info_nce_loss(features)
            local loss = simclr.criterion(logits, labels)
            optimizer:zero_grad()
            loss:backward()
            optimizer:step()
            losses[#losses + 1] = loss:item()
            assert_finite(losses[#losses], "loss")
        end
        assert.is_true(losses[3] < losses[1], "loss did not fall")
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. facebookresearch/moco moco/builder.py
---------------------------------------------------------------------------------------------
-- the tiny encoder standing in for torchvision's resnet50(num_classes=dim)
local Enc = nn.Module:extend("Enc")
function Enc:init(num_classes)
    self.body = nn.Linear(5, 6)
    self.relu = nn.ReLU()
    self.fc = nn.Linear(6, num_classes or 4)
end
function Enc:forward(x)
    return self.fc(self.relu(self.body(x)))
end

-- utils
-- @torch.no_grad()
-- def concat_all_gather(tensor):
local function concat_all_gather(tensor)
    -- world size 1: torch.distributed.all_gather fills the one-element list with tensor itself,
    -- and torch.cat of that list is a copy of it (no gradient, as PyTorch's)
    return tide.no_grad(function()
        -- tensors_gather = [torch.ones_like(tensor) for _ in range(world_size)]
        local tensors_gather = { tide.ones_like(tensor) }
        -- torch.distributed.all_gather(tensors_gather, tensor, async_op=False)
        tensors_gather[1]:copy_(tensor)
        return tide.cat(tensors_gather, 1)
    end)
end

-- class MoCo(nn.Module):
local MoCo = nn.Module:extend("MoCo")
-- def __init__(self, base_encoder, dim=128, K=65536, m=0.999, T=0.07, mlp=False):
function MoCo:init(base_encoder, dim, K, m, T, mlp)
    dim, K, m, T = dim or 128, K or 65536, m or 0.999, T or 0.07
    self.K = K
    self.m = m
    self.T = T

    -- create the encoders
    -- self.encoder_q = base_encoder(num_classes=dim)
    self.encoder_q = base_encoder(dim)
    self.encoder_k = base_encoder(dim)

    if mlp then -- hack: brute-force replacement
        -- dim_mlp = self.encoder_q.fc.weight.shape[1]
        local dim_mlp = self.encoder_q.fc.weight.shape[2]
        self.encoder_q.fc = nn.Sequential(nn.Linear(dim_mlp, dim_mlp), nn.ReLU(), self.encoder_q.fc)
        self.encoder_k.fc = nn.Sequential(nn.Linear(dim_mlp, dim_mlp), nn.ReLU(), self.encoder_k.fc)
    end

    -- for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
    local ps_q, ps_k = self.encoder_q:parameters(), self.encoder_k:parameters()
    for i = 1, #ps_q do
        local param_q, param_k = ps_q[i], ps_k[i]
        param_k.data:copy_(param_q.data) -- initialize
        param_k.requires_grad = false -- not update by gradient
    end

    -- create the queue
    self:register_buffer("queue", tide.randn({ dim, K }))
    -- self.queue = nn.functional.normalize(self.queue, dim=0)
    self.queue = F.normalize(self.queue, { dim = 1 })

    -- self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))
    self:register_buffer("queue_ptr", tide.zeros(1, { dtype = tide.long }))
end

-- @torch.no_grad()
function MoCo:_momentum_update_key_encoder()
    tide.no_grad(function()
        local ps_q, ps_k = self.encoder_q:parameters(), self.encoder_k:parameters()
        for i = 1, #ps_q do
            local param_q, param_k = ps_q[i], ps_k[i]
            -- param_k.mul_(self.m).add_(param_q.mul(1. - self.m))
            param_k:mul_(self.m):add_(param_q:mul(1. - self.m))
        end
    end)
end

-- @torch.no_grad()
function MoCo:_dequeue_and_enqueue(keys)
    tide.no_grad(function()
        -- gather keys before updating queue
        keys = concat_all_gather(keys)

        local batch_size = keys.shape[1]

        -- ptr = int(self.queue_ptr)
        local ptr = self.queue_ptr:item()
        assert(self.K % batch_size == 0) -- for simplicity

        -- replace the keys at ptr (dequeue and enqueue)
        -- self.queue[:, ptr : ptr + batch_size] = keys.T
        self.queue[{ {}, { ptr + 1, ptr + batch_size } }] = keys.T
        ptr = (ptr + batch_size) % self.K -- move pointer

        -- self.queue_ptr[0] = ptr
        self.queue_ptr[1] = ptr
    end)
end

function MoCo:forward(im_q, im_k)
    -- compute query features
    local q = self.encoder_q(im_q) -- queries: NxC
    -- q = nn.functional.normalize(q, dim=1)
    q = F.normalize(q, { dim = 2 })

    -- compute key features
    -- with torch.no_grad():  # no gradient to keys
    local k = tide.no_grad(function()
        self:_momentum_update_key_encoder() -- update the key encoder

        -- im_k, idx_unshuffle = self._batch_shuffle_ddp(im_k)
        -- (skipped, not a gap: _batch_shuffle_ddp / _batch_unshuffle_ddp shuffle the batch
        -- across DDP processes for BatchNorm, and need several processes)

        local kk = self.encoder_k(im_k) -- keys: NxC
        -- k = nn.functional.normalize(k, dim=1)
        return F.normalize(kk, { dim = 2 })
    end)

    -- compute logits
    -- positive logits: Nx1
    -- l_pos = torch.einsum("nc,nc->n", [q, k]).unsqueeze(-1)
    local l_pos = tide.einsum("nc,nc->n", q, k):unsqueeze(-1)
    -- negative logits: NxK
    -- l_neg = torch.einsum("nc,ck->nk", [q, self.queue.clone().detach()])
    local l_neg = tide.einsum("nc,ck->nk", q, self.queue:clone():detach())

    -- logits: Nx(1+K)
    -- logits = torch.cat([l_pos, l_neg], dim=1)
    local logits = tide.cat({ l_pos, l_neg }, 2)

    -- apply temperature
    -- logits /= self.T
    logits = logits / self.T

    -- labels: positive key indicators
    -- labels = torch.zeros(logits.shape[0], dtype=torch.long).cuda()
    -- (PyTorch's class 0 is tide's class 1; the device stays the inputs')
    local labels = tide.ones(logits.shape[1], { dtype = tide.long })

    -- dequeue and enqueue
    self:_dequeue_and_enqueue(k)

    return logits, labels
end

describe("facebookresearch/moco builder.py MoCo", function()
    it("builds the key encoder frozen and the queue normalized per column", function()
        tide.manual_seed(0)
        local model = MoCo(Enc, 4, 6, 0.999, 0.07)
        local q, k = model.encoder_q:parameters(), model.encoder_k:parameters()
        for i = 1, #q do
            assert.is_false(k[i].requires_grad)
            assert.is_true(q[i].requires_grad)
            assert.are.same(flat(q[i]), flat(k[i]))
        end
        assert.are.same({ 4, 6 }, model.queue:size())
        assert_close_list({ 1, 1, 1, 1, 1, 1 }, flat(model.queue:norm(2, 1)), 1e-6, "norms")
        local sd = model:state_dict()
        assert.is_not_nil(sd.queue)
        assert.are.equal(tide.int64, sd.queue_ptr.dtype)
        assert.are.same({ 0 }, sd.queue_ptr:tolist())
        -- the buffer assigned a new tensor stays a buffer (PyTorch's __setattr__ rule)
        local bufs = {}
        for _, nb in ipairs(model:named_buffers()) do
            bufs[#bufs + 1] = nb[1]
        end
        assert.are.same({ "queue", "queue_ptr" }, bufs)
    end)

    it("gives PyTorch's logits, momentum-updated key encoder and enqueued queue", function()
        local dim, K = 4, 6
        local model = MoCo(Enc, dim, K, 0.999, 0.07)
        -- the fixed weights: q filled, copied into k, then q filled again with an offset
        fill(model.encoder_q)
        local ps_q, ps_k = model.encoder_q:parameters(), model.encoder_k:parameters()
        for i = 1, #ps_q do
            ps_k[i].data:copy_(ps_q[i].data)
        end
        fill(model.encoder_q, 1.0)
        -- queue = F.normalize(torch.cos(torch.arange(dim * K) * 0.9).view(dim, K), dim=0)
        local queue0 = F.normalize((tide.arange(dim * K, { dtype = tide.float32 }) * 0.9):cos()
            :view(dim, K), { dim = 1 })
        model.queue:copy_(queue0)
        local im_q = (tide.arange(10, { dtype = tide.float32 }) * 0.4):sin():view(2, 5)
        local im_k = (tide.arange(10, { dtype = tide.float32 }) * 0.6):cos():view(2, 5)
        local logits, labels = model(im_q, im_k)
        assert.are.same({ 2, 7 }, logits:size())
        assert_close_list({ 2.7205538749694824, -4.581258296966553, -10.77081298828125,
            -8.313349723815918, 0.3457999527454376, 8.380599975585938, 10.846321105957031,
            8.425426483154297, -3.8591151237487793, -11.459156036376953, -9.95380687713623,
            -0.8908599615097046, 8.338841438293457, 12.184171676635742 }, flat(logits), 1e-4,
            "logits")
        assert.are.same({ 1, 1 }, labels:tolist())
        assert.is_true(logits.requires_grad)
        -- the key encoder after 0.999 k + 0.001 q
        assert_close_list({ 0.00025244129938073456, 0.14398309588432312, 0.25246164202690125,
            0.29912880063056946, 0.2725588083267212 },
            { unpack(flat(model.encoder_k.body.weight), 1, 5) }, 1e-5, "k body")
        assert_close_list({ 0.042066626250743866, -0.10542300343513489, -0.2271014004945755,
            -0.29317745566368103 }, flat(model.encoder_k.fc.bias), 1e-5, "k fc bias")
        -- queue[:, 0:2] = k.T, the pointer moved to 2
        assert.are.same({ 2 }, model.queue_ptr:tolist())
        assert_close_list({ 0.22811457514762878, 0.06139695271849632, -0.16674509644508362,
            -0.6056765913963318, -0.6278911828994751, -0.15917041897773743, -0.4188319146633148,
            -0.3052656948566437, 0.4464731812477112, -0.1631602793931961, -0.6379539966583252,
            -0.6714220643043518, -0.01503916084766388, -0.26909011602401733, 0.7334916591644287,
            0.39856284856796265, -0.18191830813884735, -0.6931228041648865, -0.8788158893585205,
            -0.9113911390304565, 0.48461082577705383, 0.6690906286239624, 0.4070295989513397,
            -0.20841772854328156 }, flat(model.queue), 1e-5, "queue")
        -- two more batches wrap the pointer round: (2 + 2 + 2) % 6 = 0
        model(im_q, im_k)
        assert.are.same({ 4 }, model.queue_ptr:tolist())
        model(im_q, im_k)
        assert.are.same({ 0 }, model.queue_ptr:tolist())
    end)

    it("trains with CrossEntropyLoss and SGD, the key encoder following by momentum", function()
        tide.manual_seed(0)
        -- model = moco.builder.MoCo(models.__dict__[args.arch], args.moco_dim, args.moco_k,
        --                           args.moco_m, args.moco_t, args.mlp)
        local model = MoCo(Enc, 4, 8, 0.9, 0.2, true)
        -- criterion = nn.CrossEntropyLoss().cuda(args.gpu)
        local criterion = nn.CrossEntropyLoss()
        -- optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=args.momentum,
        --                             weight_decay=args.weight_decay)
        local optimizer = optim.SGD(model:parameters(), 0.5, { momentum = 0.9,
            weight_decay = 1e-4 })
        -- only encoder_q's parameters require grad (encoder_k's are frozen)
        local n_q = #model.encoder_q:parameters()
        local n_grad = 0
        for _, p in ipairs(model:parameters()) do
            if p.requires_grad then n_grad = n_grad + 1 end
        end
        assert.are.equal(n_q, n_grad)
        -- the queue first filled with real keys (the loss of a queue of random vectors is lower
        -- than of one of keys, so the first steps would rise as the queue fills)
        tide.no_grad(function()
            for _ = 1, 2 do
                model(tide.randn({ 4, 5 }), tide.randn({ 4, 5 }))
            end
        end)
        local base = tide.randn({ 4, 5 })
        local k_before = model.encoder_k.fc[3].weight:clone()
        local losses = {}
        for _ = 1, 3 do
            -- two augmentations of the same batch of images
            local im_q = base + 0.1 * tide.randn({ 4, 5 })
            local im_k = base + 0.1 * tide.randn({ 4, 5 })
            -- output, target = model(im_q=images[0], im_k=images[1])
            local output, target = model(im_q, im_k)
            local loss = criterion(output, target)
            optimizer:zero_grad()
            loss:backward()
            optimizer:step()
            losses[#losses + 1] = loss:item()
            assert_finite(losses[#losses], "loss")
        end
        assert.is_true(losses[3] < losses[1], "loss did not fall")
        assert.is_nil(model.encoder_k.fc[3].weight.grad)
        assert.is_false(tide.equal(k_before, model.encoder_k.fc[3].weight))
    end)
end)
