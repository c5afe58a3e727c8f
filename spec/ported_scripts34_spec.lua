-- ported_scripts34_spec.lua — kuangliu/pytorch-cifar ported line for line: main.py (random
-- tensors for the CIFAR10 transforms, the model choice, net.to(device), the DataParallel/cudnn
-- branch, resume from a checkpoint, CrossEntropyLoss, SGD with momentum and weight decay,
-- CosineAnnealingLR(T_max=200), train() and test() with outputs.max(1) and the checkpoint save)
-- and models/dla.py (BasicBlock, Root, Tree with self.__setattr__('level_%d' % i, ...), DLA),
-- models/dpn.py (Bottleneck's dense split, DPN with cfg; its forward checked against PyTorch
-- 1.13 on deterministic weights) and models/googlenet.py (Inception, GoogLeNet). Widths are
-- divided by 8 (DPN's by about 8, keeping groups=32), images 3x32x32, 2-4 per batch.
-- The Python line stands above each Lua line that differs from it. Dims and indices are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite

-- a few SGD steps on one random batch of 3x32x32 images: losses finite, the last below the first
local function train_steps(net, steps, batch)
    tide.manual_seed(0)
    local inputs = tide.randn(batch or 2, 3, 32, 32)
    local targets = tide.randint(1, 11, { batch or 2 })
    local criterion = nn.CrossEntropyLoss()
    local optimizer = optim.SGD(net:parameters(), { lr = 0.02, momentum = 0.9, weight_decay = 5e-4 })
    net:train()
    local losses = {}
    for _ = 1, steps or 3 do
        optimizer:zero_grad()
        local outputs = net(inputs)
        local loss = criterion(outputs, targets)
        loss:backward()
        optimizer:step()
        losses[#losses + 1] = loss:item()
        assert_finite(losses[#losses], "loss")
    end
    assert.is_true(losses[#losses] < losses[1], "loss went from " .. losses[1] .. " to " .. losses[#losses])
    return losses
end

---------------------------------------------------------------------------------------------
-- models/dla.py
---------------------------------------------------------------------------------------------
-- class BasicBlock(nn.Module):
local BasicBlock = nn.Module:extend("BasicBlock")
--     expansion = 1
BasicBlock.expansion = 1
-- def __init__(self, in_planes, planes, stride=1):
nn.signature(BasicBlock, "self, in_planes, planes, stride=1")
function BasicBlock:init(in_planes, planes, stride)
    -- self.conv1 = nn.Conv2d(in_planes, planes, kernel_size=3, stride=stride, padding=1, bias=False)
    self.conv1 = nn.Conv2d(in_planes, planes, { kernel_size = 3, stride = stride, padding = 1, bias = false })
    self.bn1 = nn.BatchNorm2d(planes)
    self.conv2 = nn.Conv2d(planes, planes, { kernel_size = 3, stride = 1, padding = 1, bias = false })
    self.bn2 = nn.BatchNorm2d(planes)

    self.shortcut = nn.Sequential()
    if stride ~= 1 or in_planes ~= self.expansion * planes then
        self.shortcut = nn.Sequential(
            nn.Conv2d(in_planes, self.expansion * planes, { kernel_size = 1, stride = stride, bias = false }),
            nn.BatchNorm2d(self.expansion * planes)
        )
    end
end

function BasicBlock:forward(x)
    local out = F.relu(self.bn1(self.conv1(x)))
    out = self.bn2(self.conv2(out))
    -- out += self.shortcut(x)
    out = out + self.shortcut(x)
    out = F.relu(out)
    return out
end

-- class Root(nn.Module):
local Root = nn.Module:extend("Root")
-- def __init__(self, in_channels, out_channels, kernel_size=1):
nn.signature(Root, "self, in_channels, out_channels, kernel_size=1")
function Root:init(in_channels, out_channels, kernel_size)
    -- self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=1, padding=(kernel_size - 1) // 2, bias=False)
    self.conv = nn.Conv2d(in_channels, out_channels, kernel_size,
        { stride = 1, padding = math.floor((kernel_size - 1) / 2), bias = false })
    self.bn = nn.BatchNorm2d(out_channels)
end

function Root:forward(xs)
    -- x = torch.cat(xs, 1)
    local x = tide.cat(xs, 2)
    local out = F.relu(self.bn(self.conv(x)))
    return out
end

-- class Tree(nn.Module):
local Tree = nn.Module:extend("Tree")
-- def __init__(self, block, in_channels, out_channels, level=1, stride=1):
nn.signature(Tree, "self, block, in_channels, out_channels, level=1, stride=1")
function Tree:init(block, in_channels, out_channels, level, stride)
    self.level = level
    if level == 1 then
        self.root = Root(2 * out_channels, out_channels)
        -- self.left_node = block(in_channels, out_channels, stride=stride)
        self.left_node = block(in_channels, out_channels, { stride = stride })
        self.right_node = block(out_channels, out_channels, { stride = 1 })
    else
        self.root = Root((level + 2) * out_channels, out_channels)
        -- for i in reversed(range(1, level)):
        for i = level - 1, 1, -1 do
            -- subtree = Tree(block, in_channels, out_channels, level=i, stride=stride)
            local subtree = Tree(block, in_channels, out_channels, { level = i, stride = stride })
            -- self.__setattr__('level_%d' % i, subtree)
            self:__setattr__(string.format("level_%d", i), subtree)
        end
        self.prev_root = block(in_channels, out_channels, { stride = stride })
        self.left_node = block(out_channels, out_channels, { stride = 1 })
        self.right_node = block(out_channels, out_channels, { stride = 1 })
    end
end

function Tree:forward(x)
    -- xs = [self.prev_root(x)] if self.level > 1 else []
    local xs = self.level > 1 and { self.prev_root(x) } or {}
    for i = self.level - 1, 1, -1 do
        -- level_i = self.__getattr__('level_%d' % i)
        local level_i = self:__getattr__(string.format("level_%d", i))
        x = level_i(x)
        -- xs.append(x)
        xs[#xs + 1] = x
    end
    x = self.left_node(x)
    xs[#xs + 1] = x
    x = self.right_node(x)
    xs[#xs + 1] = x
    local out = self.root(xs)
    return out
end

-- class DLA(nn.Module):  (widths / 8: 16 -> 2, ..., 512 -> 64)
local DLA = nn.Module:extend("DLA")
-- def __init__(self, block=BasicBlock, num_classes=10):
nn.signature(DLA, "self, block=BasicBlock, num_classes=10")
function DLA:init(block, num_classes)
    self.base = nn.Sequential(
        nn.Conv2d(3, 2, { kernel_size = 3, stride = 1, padding = 1, bias = false }),
        nn.BatchNorm2d(2),
        nn.ReLU(true)
    )

    self.layer1 = nn.Sequential(
        nn.Conv2d(2, 2, { kernel_size = 3, stride = 1, padding = 1, bias = false }),
        nn.BatchNorm2d(2),
        nn.ReLU(true)
    )

    self.layer2 = nn.Sequential(
        nn.Conv2d(2, 4, { kernel_size = 3, stride = 1, padding = 1, bias = false }),
        nn.BatchNorm2d(4),
        nn.ReLU(true)
    )

    -- self.layer3 = Tree(block,  32,  64, level=1, stride=1)
    self.layer3 = Tree(block, 4, 8, { level = 1, stride = 1 })
    self.layer4 = Tree(block, 8, 16, { level = 2, stride = 2 })
    self.layer5 = Tree(block, 16, 32, { level = 2, stride = 2 })
    self.layer6 = Tree(block, 32, 64, { level = 1, stride = 2 })
    self.linear = nn.Linear(64, num_classes)
end

function DLA:forward(x)
    local out = self.base(x)
    out = self.layer1(out)
    out = self.layer2(out)
    out = self.layer3(out)
    out = self.layer4(out)
    out = self.layer5(out)
    out = self.layer6(out)
    out = F.avg_pool2d(out, 4)
    -- out = out.view(out.size(0), -1)
    out = out:view(out:size(1), -1)
    out = self.linear(out)
    return out
end

describe("kuangliu/pytorch-cifar models/dla.py", function()
    it("DLA: Tree levels by __setattr__/__getattr__, output (2, 10), SGD steps", function()
        tide.manual_seed(0)
        local net = DLA()
        -- Tree(level=2) registered level_1 as a child: its parameters are the net's
        assert.is_true(tide.isinstance(net.layer4.level_1, Tree))
        assert.are.equal(net.layer4.level_1, net.layer4:__getattr__("level_1"))
        local n = 0
        for name in pairs(net:state_dict()) do
            if name:match("^layer4%.level_1%.") then n = n + 1 end
        end
        assert.is_true(n > 0)
        -- x = torch.randn(1, 3, 32, 32); y = net(x); print(y.size())
        local x = tide.randn(1, 3, 32, 32)
        local y = net(x)
        assert.are.equal("tide.Size({1, 10})", tostring(y:size()))
        train_steps(net, 2, 2)
    end)

    it("nn.signature: a class as a default (block=BasicBlock, norm_layer=nn.BatchNorm2d)", function()
        -- DLA() took block=BasicBlock: its trees' nodes are BasicBlocks
        local net = DLA({ num_classes = 3 })
        assert.is_true(tide.isinstance(net.layer3.left_node, BasicBlock))
        assert.are.equal(3, net.linear.out_features)
        local Net = nn.Module:extend("Net34")
        nn.signature(Net, "self, c, norm_layer=nn.BatchNorm2d")
        function Net:init(c, norm_layer)
            self.bn = norm_layer(c)
        end
        assert.is_true(tide.isinstance(Net(4).bn, nn.BatchNorm2d))
        assert.is_true(tide.isinstance(Net(4, { norm_layer = nn.InstanceNorm2d }).bn, nn.InstanceNorm2d))
        -- a name no class was made with raises, naming it
        local ok, err = pcall(nn.signature, nn.Module:extend("Net34b"), "self, block=NoSuchBlock34")
        assert.is_false(ok)
        assert.matches("the default block=NoSuchBlock34 is not a Python literal", err, 1, true)
    end)

    it("Module:__getattr__ of a missing name raises naming it; __setattr__ of a tensor/number", function()
        local t = Tree(BasicBlock, 2, 2, { level = 2 })
        local ok, err = pcall(function() return t:__getattr__("level_2") end)
        assert.is_false(ok)
        assert.matches("'Tree' object has no attribute 'level_2'", err, 1, true)
        t:__setattr__("scale", 3)
        assert.are.equal(3, t.scale)
        t:__setattr__("w", nn.Parameter(tide.ones(2)))
        assert.is_not_nil(t:named_parameters()["w"])
        ok, err = pcall(function() return t:__setattr__(5, 1) end)
        assert.is_false(ok)
        assert.matches("__setattr__", err, 1, true)
    end)
end)

---------------------------------------------------------------------------------------------
-- models/dpn.py
---------------------------------------------------------------------------------------------
-- class Bottleneck(nn.Module):
local Bottleneck = nn.Module:extend("Bottleneck")
function Bottleneck:init(last_planes, in_planes, out_planes, dense_depth, stride, first_layer)
    self.out_planes = out_planes
    self.dense_depth = dense_depth

    self.conv1 = nn.Conv2d(last_planes, in_planes, { kernel_size = 1, bias = false })
    self.bn1 = nn.BatchNorm2d(in_planes)
    -- self.conv2 = nn.Conv2d(in_planes, in_planes, kernel_size=3, stride=stride, padding=1, groups=32, bias=False)
    self.conv2 = nn.Conv2d(in_planes, in_planes,
        { kernel_size = 3, stride = stride, padding = 1, groups = 32, bias = false })
    self.bn2 = nn.BatchNorm2d(in_planes)
    self.conv3 = nn.Conv2d(in_planes, out_planes + dense_depth, { kernel_size = 1, bias = false })
    self.bn3 = nn.BatchNorm2d(out_planes + dense_depth)

    self.shortcut = nn.Sequential()
    if first_layer then
        self.shortcut = nn.Sequential(
            nn.Conv2d(last_planes, out_planes + dense_depth, { kernel_size = 1, stride = stride, bias = false }),
            nn.BatchNorm2d(out_planes + dense_depth)
        )
    end
end

function Bottleneck:forward(x)
    local out = F.relu(self.bn1(self.conv1(x)))
    out = F.relu(self.bn2(self.conv2(out)))
    out = self.bn3(self.conv3(out))
    x = self.shortcut(x)
    local d = self.out_planes
    -- out = torch.cat([x[:,:d,:,:]+out[:,:d,:,:], x[:,d:,:,:], out[:,d:,:,:]], 1)
    out = tide.cat({ x[{ {}, { 1, d }, {}, {} }] + out[{ {}, { 1, d }, {}, {} }], x[{ {}, { d + 1, -1 }, {}, {} }],
        out[{ {}, { d + 1, -1 }, {}, {} }] }, 2)
    out = F.relu(out)
    return out
end

-- class DPN(nn.Module):
local DPN = nn.Module:extend("DPN")
function DPN:init(cfg)
    -- in_planes, out_planes = cfg['in_planes'], cfg['out_planes']
    local in_planes, out_planes = cfg["in_planes"], cfg["out_planes"]
    local num_blocks, dense_depth = cfg["num_blocks"], cfg["dense_depth"]

    self.conv1 = nn.Conv2d(3, 64, { kernel_size = 3, stride = 1, padding = 1, bias = false })
    self.bn1 = nn.BatchNorm2d(64)
    self.last_planes = 64
    -- self.layer1 = self._make_layer(in_planes[0], out_planes[0], num_blocks[0], dense_depth[0], stride=1)
    self.layer1 = self:_make_layer(in_planes[1], out_planes[1], num_blocks[1], dense_depth[1], 1)
    self.layer2 = self:_make_layer(in_planes[2], out_planes[2], num_blocks[2], dense_depth[2], 2)
    self.layer3 = self:_make_layer(in_planes[3], out_planes[3], num_blocks[3], dense_depth[3], 2)
    self.layer4 = self:_make_layer(in_planes[4], out_planes[4], num_blocks[4], dense_depth[4], 2)
    -- self.linear = nn.Linear(out_planes[3]+(num_blocks[3]+1)*dense_depth[3], 10)
    self.linear = nn.Linear(out_planes[4] + (num_blocks[4] + 1) * dense_depth[4], 10)
end

function DPN:_make_layer(in_planes, out_planes, num_blocks, dense_depth, stride)
    -- strides = [stride] + [1]*(num_blocks-1)
    local strides = { stride }
    for _ = 1, num_blocks - 1 do strides[#strides + 1] = 1 end
    local layers = {}
    -- for i,stride in enumerate(strides):  (i 1-based: i==0 is i == 1, i+2 is i+1)
    for i, s in ipairs(strides) do
        layers[#layers + 1] = Bottleneck(self.last_planes, in_planes, out_planes, dense_depth, s, i == 1)
        self.last_planes = out_planes + (i + 1) * dense_depth
    end
    -- return nn.Sequential(*layers)
    return nn.Sequential(unpack(layers))
end

function DPN:forward(x)
    local out = F.relu(self.bn1(self.conv1(x)))
    out = self.layer1(out)
    out = self.layer2(out)
    out = self.layer3(out)
    out = self.layer4(out)
    out = F.avg_pool2d(out, 4)
    out = out:view(out:size(1), -1)
    out = self.linear(out)
    return out
end

-- def DPN26(): shrunk (in_planes stay multiples of groups=32)
local function DPN26()
    local cfg = {
        -- 'in_planes': (96,192,384,768),
        in_planes = { 32, 32, 64, 64 },
        out_planes = { 16, 32, 64, 128 },
        num_blocks = { 2, 1, 1, 2 },
        dense_depth = { 4, 8, 6, 16 },
    }
    return DPN(cfg)
end

-- every float entry of the state_dict, by sorted name, as sin(0.7 j + 1.3 i) / 2 (running_var
-- |.| + 0.5): the fill /tmp reference applies in PyTorch 1.13
local function fill(model)
    local sd = model:state_dict()
    local names = {}
    for name in pairs(sd) do
        names[#names + 1] = name
    end
    table.sort(names)
    tide.no_grad(function()
        for i, name in ipairs(names) do
            local p = sd[name]
            if p:is_floating_point() then
                local v = tide.sin(tide.arange(p:numel(), { dtype = tide.float64 }) * 0.7 + i * 1.3) * 0.5
                if name:match("running_var$") then
                    v = v:abs() + 0.5
                end
                p:copy_(v:view(p:size()):float())
            end
        end
    end)
end

describe("kuangliu/pytorch-cifar models/dpn.py", function()
    it("DPN: the dense split x[:, :d] + out[:, :d], x[:, d:], out[:, d:]; PyTorch's numbers", function()
        local net = DPN26()
        fill(net)
        local x = tide.sin(tide.arange(2 * 3 * 32 * 32, { dtype = tide.float64 }) * 0.1):view(2, 3, 32, 32):float()
        -- PyTorch 1.13, net.eval() then net.train()
        net:eval()
        ported.assert_close_list({ 11.340467, -26.457825, 28.75489, -18.509651, 0.935273, 18.534946, -28.397444,
            26.379578, -13.072644, -7.267144, 11.337177, -26.455124, 28.753979, -18.510927, 0.938173, 18.531702,
            -28.395294, 26.379469, -13.074627, -7.263948 }, net(x):flatten():tolist(), 1e-4, "eval")
        net:train()
        ported.assert_close_list({ 15.506796, -23.206205, 19.52319, -7.380128, -7.170596, 20.032743, -22.624846,
            15.889222, -2.503374, -13.241599, 15.379444, -23.153072, 19.567774, -7.502712, -7.024218, 19.927299,
            -22.606966, 15.966809, -2.642121, -13.103046 }, net(x):flatten():tolist(), 1e-4, "train")
        -- the last block's channels: out_planes + (num_blocks + 1) * dense_depth
        assert.are.equal(128 + 3 * 16, net.linear.in_features)
    end)

    it("DPN26 (shrunk): output (2, 10), SGD steps", function()
        tide.manual_seed(0)
        local net = DPN26()
        local y = net(tide.randn(2, 3, 32, 32))
        assert.are.equal("tide.Size({2, 10})", tostring(y:size()))
        train_steps(net, 2, 2)
    end)
end)

---------------------------------------------------------------------------------------------
-- models/googlenet.py (widths / 8)
---------------------------------------------------------------------------------------------
-- class Inception(nn.Module):
local Inception = nn.Module:extend("Inception")
function Inception:init(in_planes, n1x1, n3x3red, n3x3, n5x5red, n5x5, pool_planes)
    -- 1x1 conv branch
    self.b1 = nn.Sequential(
        nn.Conv2d(in_planes, n1x1, { kernel_size = 1 }),
        nn.BatchNorm2d(n1x1),
        nn.ReLU(true)
    )

    -- 1x1 conv -> 3x3 conv branch
    self.b2 = nn.Sequential(
        nn.Conv2d(in_planes, n3x3red, { kernel_size = 1 }),
        nn.BatchNorm2d(n3x3red),
        nn.ReLU(true),
        nn.Conv2d(n3x3red, n3x3, { kernel_size = 3, padding = 1 }),
        nn.BatchNorm2d(n3x3),
        nn.ReLU(true)
    )

    -- 1x1 conv -> 5x5 conv branch
    self.b3 = nn.Sequential(
        nn.Conv2d(in_planes, n5x5red, { kernel_size = 1 }),
        nn.BatchNorm2d(n5x5red),
        nn.ReLU(true),
        nn.Conv2d(n5x5red, n5x5, { kernel_size = 3, padding = 1 }),
        nn.BatchNorm2d(n5x5),
        nn.ReLU(true),
        nn.Conv2d(n5x5, n5x5, { kernel_size = 3, padding = 1 }),
        nn.BatchNorm2d(n5x5),
        nn.ReLU(true)
    )

    -- 3x3 pool -> 1x1 conv branch
    self.b4 = nn.Sequential(
        -- nn.MaxPool2d(3, stride=1, padding=1),
        nn.MaxPool2d(3, { stride = 1, padding = 1 }),
        nn.Conv2d(in_planes, pool_planes, { kernel_size = 1 }),
        nn.BatchNorm2d(pool_planes),
        nn.ReLU(true)
    )
end

function Inception:forward(x)
    local y1 = self.b1(x)
    local y2 = self.b2(x)
    local y3 = self.b3(x)
    local y4 = self.b4(x)
    -- return torch.cat([y1,y2,y3,y4], 1)
    return tide.cat({ y1, y2, y3, y4 }, 2)
end

-- class GoogLeNet(nn.Module):
local GoogLeNet = nn.Module:extend("GoogLeNet")
function GoogLeNet:init()
    self.pre_layers = nn.Sequential(
        -- nn.Conv2d(3, 192, kernel_size=3, padding=1),
        nn.Conv2d(3, 24, { kernel_size = 3, padding = 1 }),
        nn.BatchNorm2d(24),
        nn.ReLU(true)
    )

    -- self.a3 = Inception(192,  64,  96, 128, 16, 32, 32)
    self.a3 = Inception(24, 8, 12, 16, 2, 4, 4)
    self.b3 = Inception(32, 16, 16, 24, 4, 12, 8)

    self.maxpool = nn.MaxPool2d(3, { stride = 2, padding = 1 })

    self.a4 = Inception(60, 24, 12, 26, 2, 6, 8)
    self.b4 = Inception(64, 20, 14, 28, 3, 8, 8)
    self.c4 = Inception(64, 16, 16, 32, 3, 8, 8)
    self.d4 = Inception(64, 14, 18, 36, 4, 8, 8)
    self.e4 = Inception(66, 32, 20, 40, 4, 16, 16)

    self.a5 = Inception(104, 32, 20, 40, 4, 16, 16)
    self.b5 = Inception(104, 48, 24, 48, 6, 16, 16)

    -- self.avgpool = nn.AvgPool2d(8, stride=1)
    self.avgpool = nn.AvgPool2d(8, { stride = 1 })
    self.linear = nn.Linear(128, 10)
end

function GoogLeNet:forward(x)
    local out = self.pre_layers(x)
    out = self.a3(out)
    out = self.b3(out)
    out = self.maxpool(out)
    out = self.a4(out)
    out = self.b4(out)
    out = self.c4(out)
    out = self.d4(out)
    out = self.e4(out)
    out = self.maxpool(out)
    out = self.a5(out)
    out = self.b5(out)
    out = self.avgpool(out)
    out = out:view(out:size(1), -1)
    out = self.linear(out)
    return out
end

describe("kuangliu/pytorch-cifar models/googlenet.py", function()
    it("GoogLeNet (widths / 8): Inception's four branches concatenated, output (2, 10), SGD steps", function()
        tide.manual_seed(0)
        local net = GoogLeNet()
        -- x = torch.randn(1,3,32,32); y = net(x); print(y.size())
        local y = net(tide.randn(1, 3, 32, 32))
        assert.are.equal("tide.Size({1, 10})", tostring(y:size()))
        -- each Inception's output channels: n1x1 + n3x3 + n5x5 + pool_planes (b3's: 480 / 8)
        assert.are.equal("tide.Size({1, 60, 32, 32})",
            tostring(net.b3(net.a3(net.pre_layers(tide.randn(1, 3, 32, 32)))):size()))
        train_steps(net, 2, 2)
    end)
end)

---------------------------------------------------------------------------------------------
-- main.py (CIFAR10 replaced by random 3x32x32 tensors, utils.progress_bar by a no-op)
---------------------------------------------------------------------------------------------
describe("kuangliu/pytorch-cifar main.py", function()
    it("train()/test() with outputs.max(1), the checkpoint save, resume, CosineAnnealingLR", function()
        local dir = os.tmpname()
        os.remove(dir)
        local ckpt = dir .. "-ckpt.pth"
        local function progress_bar() end
        local cudnn = tide.backends.cudnn

        local function main(args)
            tide.manual_seed(0)
            -- device = 'cuda' if torch.cuda.is_available() else 'cpu'
            local device = tide.cuda.is_available() and "cuda" or "cpu"
            local best_acc = 0 -- best test accuracy
            local start_epoch = 0 -- start from epoch 0 or last checkpoint epoch

            -- trainset = torchvision.datasets.CIFAR10(..., transform=transform_train): 4 random images
            local trainset = tide.data.TensorDataset(tide.randn(4, 3, 32, 32), tide.randint(1, 11, { 4 }))
            -- trainloader = torch.utils.data.DataLoader(trainset, batch_size=128, shuffle=True, num_workers=2)
            local trainloader = tide.data.DataLoader(trainset, { batch_size = 2, shuffle = true, num_workers = 2 })
            local testset = tide.data.TensorDataset(tide.randn(2, 3, 32, 32), tide.randint(1, 11, { 2 }))
            local testloader = tide.data.DataLoader(testset, { batch_size = 2, shuffle = false, num_workers = 2 })

            -- Model
            -- net = SimpleDLA()  (models/dla.py's DLA here)
            local net = DLA()
            net = net:to(device)
            if device == "cuda" then
                net = nn.DataParallel(net)
                cudnn.benchmark = true
            end

            if args.resume then
                -- Load checkpoint.
                -- checkpoint = torch.load('./checkpoint/ckpt.pth')
                local checkpoint = tide.load(ckpt)
                net:load_state_dict(checkpoint["net"])
                best_acc = checkpoint["acc"]
                start_epoch = checkpoint["epoch"]
            end

            local criterion = nn.CrossEntropyLoss()
            -- optimizer = optim.SGD(net.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
            local optimizer = optim.SGD(net:parameters(), { lr = args.lr, momentum = 0.9, weight_decay = 5e-4 })
            -- scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=200)
            local scheduler = tide.optim.lr_scheduler.CosineAnnealingLR(optimizer, { T_max = 200 })

            local losses = {}
            -- Training
            local function train(epoch) -- luacheck: ignore epoch
                net:train()
                local train_loss = 0
                local correct = 0
                local total = 0
                -- for batch_idx, (inputs, targets) in enumerate(trainloader):
                for batch_idx, inputs, targets in trainloader:enumerate(0) do
                    -- inputs, targets = inputs.to(device), targets.to(device)
                    inputs, targets = inputs:to(device), targets:to(device)
                    optimizer:zero_grad()
                    local outputs = net(inputs)
                    local loss = criterion(outputs, targets)
                    loss:backward()
                    optimizer:step()

                    -- train_loss += loss.item()
                    train_loss = train_loss + loss:item()
                    -- _, predicted = outputs.max(1)
                    local _, predicted = outputs:max(2)
                    -- total += targets.size(0)
                    total = total + targets:size(1)
                    -- correct += predicted.eq(targets).sum().item()
                    correct = correct + predicted:eq(targets):sum():item()

                    -- progress_bar(batch_idx, len(trainloader), ...)  (loader:len(): Lua 5.1 has no __len on a table)
                    progress_bar(batch_idx, trainloader:len(), string.format("Loss: %.3f | Acc: %.3f%% (%d/%d)",
                        train_loss / (batch_idx + 1), 100. * correct / total, correct, total))
                end
                losses[#losses + 1] = train_loss / trainloader:len()
                assert_finite(losses[#losses], "train loss")
            end

            local function test(epoch)
                net:eval()
                local test_loss = 0
                local correct = 0
                local total = 0
                -- with torch.no_grad():
                tide.no_grad(function()
                    for batch_idx, inputs, targets in testloader:enumerate(0) do
                        inputs, targets = inputs:to(device), targets:to(device)
                        local outputs = net(inputs)
                        local loss = criterion(outputs, targets)

                        test_loss = test_loss + loss:item()
                        local _, predicted = outputs:max(2)
                        total = total + targets:size(1)
                        correct = correct + predicted:eq(targets):sum():item()

                        progress_bar(batch_idx, testloader:len(), string.format("Loss: %.3f | Acc: %.3f%% (%d/%d)",
                            test_loss / (batch_idx + 1), 100. * correct / total, correct, total))
                    end
                end)

                -- Save checkpoint.
                local acc = 100. * correct / total
                -- if acc > best_acc:  (>= here: random data may score 0 on every epoch)
                if acc >= best_acc then
                    local state = {
                        -- 'net': net.state_dict(),
                        net = net:state_dict(),
                        acc = acc,
                        epoch = epoch,
                    }
                    -- torch.save(state, './checkpoint/ckpt.pth')
                    tide.save(state, ckpt)
                    best_acc = acc
                end
            end

            -- for epoch in range(start_epoch, start_epoch+200):
            for epoch = start_epoch, start_epoch + args.epochs - 1 do
                train(epoch)
                test(epoch)
                scheduler:step()
            end
            return net, losses, best_acc, start_epoch, optimizer
        end

        local net, losses, best_acc, _, optimizer = main({ lr = 0.05, resume = false, epochs = 2 })
        assert.is_true(losses[#losses] < losses[1], "train loss went from " .. losses[1] .. " to " .. losses[#losses])
        -- CosineAnnealingLR(T_max=200) after 2 steps: 0.05 * (1 + cos(2 pi / 200)) / 2
        assert.is_true(ported.close(optimizer.param_groups[1].lr, 0.05 * (1 + math.cos(2 * math.pi / 200)) / 2, 1e-9))
        -- python main.py --resume: the checkpoint's weights, acc and epoch
        local checkpoint = tide.load(ckpt)
        assert.are.equal(best_acc, checkpoint["acc"])
        local net2, _, best2, start2 = main({ lr = 0.05, resume = true, epochs = 0 })
        assert.are.equal(best_acc, best2)
        assert.are.equal(checkpoint["epoch"], start2)
        assert.is_true(tide.equal(checkpoint["net"]["linear.weight"], net2.linear.weight))
        assert.is_true(checkpoint["epoch"] >= 0 and net ~= nil)
        os.remove(ckpt)
    end)
end)
