-- ported_scripts35_spec.lua — kuangliu/pytorch-cifar models ported line for line: efficientnet.py
-- (swish, drop_connect, SE, Block, EfficientNet with its cfg dict), regnet.py (SE, Block with group
-- width, RegNet, RegNetX_200MF/RegNetY_400MF), preact_resnet.py (PreActBlock, PreActBottleneck,
-- PreActResNet18), senet.py (BasicBlock and PreActBlock with SE via F.avg_pool2d(out, out.size(2))),
-- pnasnet.py (SepConv, CellA, CellB, PNASNet) and dla_simple.py (BasicBlock, Root, Tree, SimpleDLA).
-- Widths are shrunk (channels divided by 8-16) and block counts cut, on 3x32x32 images, 2 per batch,
-- 10 classes: output shape, then a few SGD steps with the loss finite and decreasing; SENet's
-- forward is checked against PyTorch 1.13 on deterministic weights. The Python line stands above
-- each Lua line that differs from it. Dims and class targets are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- Python's sum(list)
local function sum(t)
    local s = 0
    for _, v in ipairs(t) do s = s + v end
    return s
end

-- a few SGD steps of main.py's loop on 2 random images: loss finite and decreasing
local function train_steps(net, steps)
    tide.manual_seed(0)
    local inputs = tide.randn(2, 3, 32, 32)
    local targets = tide.tensor({ 3, 7 })
    -- criterion = nn.CrossEntropyLoss()
    local criterion = nn.CrossEntropyLoss()
    -- optimizer = optim.SGD(net.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    local optimizer = optim.SGD(net:parameters(), { lr = 0.05, momentum = 0.9, weight_decay = 5e-4 })
    net:train()
    local first, last
    for _ = 1, steps or 4 do
        optimizer:zero_grad()
        local outputs = net(inputs)
        local loss = criterion(outputs, targets)
        loss:backward()
        optimizer:step()
        assert_finite(loss:item(), "loss")
        first = first or loss:item()
        last = loss:item()
    end
    assert.is_true(last < first, string.format("loss %g -> %g", first, last))
    -- _, predicted = outputs.max(1)
    net:eval()
    local _, predicted = net(inputs):max(2)
    assert.are.same({ 2 }, predicted.shape)
end

---------------------------------------------------------------------------------------------
-- 1. models/efficientnet.py
---------------------------------------------------------------------------------------------
describe("pytorch-cifar models/efficientnet.py", function()
    local function swish(x)
        -- return x * x.sigmoid()
        return x * x:sigmoid()
    end

    local function drop_connect(x, drop_ratio)
        local keep_ratio = 1.0 - drop_ratio
        -- mask = torch.empty([x.shape[0], 1, 1, 1], dtype=x.dtype, device=x.device)
        local mask = tide.empty({ x.shape[1], 1, 1, 1 }, { dtype = x.dtype, device = x.device })
        -- mask.bernoulli_(keep_ratio)
        mask:bernoulli_(keep_ratio)
        -- x.div_(keep_ratio)
        x:div_(keep_ratio)
        -- x.mul_(mask)
        x:mul_(mask)
        return x
    end

    -- class SE(nn.Module): '''Squeeze-and-Excitation block with Swish.'''
    local SE = nn.Module:extend("SE")
    function SE:init(in_channels, se_channels)
        -- self.se1 = nn.Conv2d(in_channels, se_channels, kernel_size=1, bias=True)
        self.se1 = nn.Conv2d(in_channels, se_channels, { kernel_size = 1, bias = true })
        self.se2 = nn.Conv2d(se_channels, in_channels, { kernel_size = 1, bias = true })
    end

    function SE:forward(x)
        -- out = F.adaptive_avg_pool2d(x, (1, 1))
        local out = F.adaptive_avg_pool2d(x, { 1, 1 })
        out = swish(self.se1(out))
        -- out = self.se2(out).sigmoid()
        out = self.se2(out):sigmoid()
        out = x * out
        return out
    end

    -- class Block(nn.Module): '''expansion + depthwise + pointwise + squeeze-excitation'''
    local Block = nn.Module:extend("Block")
    -- def __init__(self, in_channels, out_channels, kernel_size, stride, expand_ratio=1, se_ratio=0., drop_rate=0.):
    nn.signature(Block, "in_channels, out_channels, kernel_size, stride, expand_ratio=1, se_ratio=0., drop_rate=0.")
    function Block:init(in_channels, out_channels, kernel_size, stride, expand_ratio, se_ratio, drop_rate)
        self.stride = stride
        self.drop_rate = drop_rate
        self.expand_ratio = expand_ratio
        -- Expansion
        local channels = expand_ratio * in_channels
        -- self.conv1 = nn.Conv2d(in_channels, channels, kernel_size=1, stride=1, padding=0, bias=False)
        self.conv1 = nn.Conv2d(in_channels, channels, { kernel_size = 1, stride = 1, padding = 0, bias = false })
        self.bn1 = nn.BatchNorm2d(channels)
        -- Depthwise conv
        -- self.conv2 = nn.Conv2d(channels, channels, kernel_size=kernel_size, stride=stride,
        --                        padding=(1 if kernel_size == 3 else 2), groups=channels, bias=False)
        self.conv2 = nn.Conv2d(channels, channels, { kernel_size = kernel_size, stride = stride,
            padding = (kernel_size == 3 and 1 or 2), groups = channels, bias = false })
        self.bn2 = nn.BatchNorm2d(channels)
        -- SE layers
        -- se_channels = int(in_channels * se_ratio)
        local se_channels = math.floor(in_channels * se_ratio)
        self.se = SE(channels, se_channels)
        -- Output
        self.conv3 = nn.Conv2d(channels, out_channels, { kernel_size = 1, stride = 1, padding = 0, bias = false })
        self.bn3 = nn.BatchNorm2d(out_channels)
        -- Skip connection if in and out shapes are the same (MV-V2 style)
        self.has_skip = (stride == 1) and (in_channels == out_channels)
    end

    function Block:forward(x)
        -- out = x if self.expand_ratio == 1 else swish(self.bn1(self.conv1(x)))
        local out = self.expand_ratio == 1 and x or swish(self.bn1(self.conv1(x)))
        out = swish(self.bn2(self.conv2(out)))
        out = self.se(out)
        out = self.bn3(self.conv3(out))
        if self.has_skip then
            if self.training and self.drop_rate > 0 then
                out = drop_connect(out, self.drop_rate)
            end
            out = out + x
        end
        return out
    end

    local EfficientNet = nn.Module:extend("EfficientNet")
    -- def __init__(self, cfg, num_classes=10):
    nn.signature(EfficientNet, "cfg, num_classes=10")
    function EfficientNet:init(cfg, num_classes)
        self.cfg = cfg
        -- self.conv1 = nn.Conv2d(3, 32, kernel_size=3, stride=1, padding=1, bias=False)  (32 -> 4)
        self.conv1 = nn.Conv2d(3, 4, { kernel_size = 3, stride = 1, padding = 1, bias = false })
        self.bn1 = nn.BatchNorm2d(4)
        -- self.layers = self._make_layers(in_channels=32)
        self.layers = self:_make_layers(4)
        -- self.linear = nn.Linear(cfg['out_channels'][-1], num_classes)
        self.linear = nn.Linear(cfg["out_channels"][#cfg["out_channels"]], num_classes)
    end

    function EfficientNet:_make_layers(in_channels)
        local layers = {}
        -- cfg = [self.cfg[k] for k in ['expansion', 'out_channels', 'num_blocks', 'kernel_size', 'stride']]
        local cfg = {}
        for _, k in ipairs({ "expansion", "out_channels", "num_blocks", "kernel_size", "stride" }) do
            cfg[#cfg + 1] = self.cfg[k]
        end
        local b = 0
        -- blocks = sum(self.cfg['num_blocks'])
        local blocks = sum(self.cfg["num_blocks"])
        -- for expansion, out_channels, num_blocks, kernel_size, stride in zip(*cfg):
        for j = 1, #cfg[1] do
            local expansion, out_channels, num_blocks, kernel_size, stride =
                cfg[1][j], cfg[2][j], cfg[3][j], cfg[4][j], cfg[5][j]
            -- strides = [stride] + [1] * (num_blocks - 1)
            local strides = { stride }
            for _ = 1, num_blocks - 1 do strides[#strides + 1] = 1 end
            for _, s in ipairs(strides) do
                local drop_rate = self.cfg["drop_connect_rate"] * b / blocks
                -- layers.append(Block(in_channels, out_channels, kernel_size, stride, expansion,
                --                     se_ratio=0.25, drop_rate=drop_rate))
                layers[#layers + 1] = Block(in_channels, out_channels, kernel_size, s, expansion,
                    { se_ratio = 0.25, drop_rate = drop_rate })
                in_channels = out_channels
            end
            -- (b is never incremented in the script: every drop_rate is 0)
        end
        -- return nn.Sequential(*layers)
        return nn.Sequential(unpack(layers))
    end

    function EfficientNet:forward(x)
        local out = swish(self.bn1(self.conv1(x)))
        out = self.layers(out)
        out = F.adaptive_avg_pool2d(out, 1)
        -- out = out.view(out.size(0), -1)
        out = out:view(out:size(1), -1)
        local dropout_rate = self.cfg["dropout_rate"]
        if self.training and dropout_rate > 0 then
            -- out = F.dropout(out, p=dropout_rate)
            out = F.dropout(out, { p = dropout_rate })
        end
        out = self.linear(out)
        return out
    end

    local function EfficientNetB0()
        -- shrunk: 'num_blocks': [1, 2, 2, 3, 3, 4, 1], 'out_channels': [16, 24, 40, 80, 112, 192, 320], ...
        local cfg = {
            num_blocks = { 1, 2, 1 },
            expansion = { 1, 6, 6 },
            out_channels = { 4, 6, 8 },
            kernel_size = { 3, 3, 5 },
            stride = { 1, 2, 2 },
            dropout_rate = 0.2,
            drop_connect_rate = 0.2,
        }
        return EfficientNet(cfg)
    end

    it("drop_connect: torch.empty(dtype=, device=), bernoulli_, div_, mul_ in place", function()
        tide.manual_seed(3)
        local x = tide.ones(64, 2, 1, 1)
        local y = drop_connect(x, 0.5)
        assert.is_true(rawequal(x, y))
        local vals = {}
        for _, v in ipairs(y:flatten():tolist()) do vals[v] = true end
        assert.is_true(vals[0] and vals[2])
        -- both channels of a sample share its mask
        assert.are.same(y[{ {}, 1 }]:tolist(), y[{ {}, 2 }]:tolist())
    end)

    it("EfficientNetB0 (shrunk): test() shape, Block's has_skip, then SGD steps", function()
        tide.manual_seed(0)
        local net = EfficientNetB0()
        -- x = torch.randn(2, 3, 32, 32); y = net(x); print(y.shape)
        local x = tide.randn(2, 3, 32, 32)
        local y = net(x)
        assert.are.same({ 2, 10 }, y.shape)
        assert.are.equal(4, #net.layers)
        assert.is_true(net.layers[1].has_skip)
        assert.is_false(net.layers[2].has_skip)
        assert.is_true(net.layers[3].has_skip)
        -- drop_connect on a skip block in training, with a nonzero rate
        net.layers[3].drop_rate = 0.2
        train_steps(net, 3)
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. models/regnet.py
---------------------------------------------------------------------------------------------
describe("pytorch-cifar models/regnet.py", function()
    -- class SE(nn.Module): '''Squeeze-and-Excitation block.'''
    local SE = nn.Module:extend("SE")
    function SE:init(in_planes, se_planes)
        self.se1 = nn.Conv2d(in_planes, se_planes, { kernel_size = 1, bias = true })
        self.se2 = nn.Conv2d(se_planes, in_planes, { kernel_size = 1, bias = true })
    end

    function SE:forward(x)
        local out = F.adaptive_avg_pool2d(x, { 1, 1 })
        out = F.relu(self.se1(out))
        out = self.se2(out):sigmoid()
        out = x * out
        return out
    end

    local Block = nn.Module:extend("Block")
    function Block:init(w_in, w_out, stride, group_width, bottleneck_ratio, se_ratio)
        -- 1x1
        -- w_b = int(round(w_out * bottleneck_ratio))
        local w_b = math.floor(w_out * bottleneck_ratio + 0.5)
        self.conv1 = nn.Conv2d(w_in, w_b, { kernel_size = 1, bias = false })
        self.bn1 = nn.BatchNorm2d(w_b)
        -- 3x3
        -- num_groups = w_b // group_width
        local num_groups = math.floor(w_b / group_width)
        self.conv2 = nn.Conv2d(w_b, w_b, { kernel_size = 3,
            stride = stride, padding = 1, groups = num_groups, bias = false })
        self.bn2 = nn.BatchNorm2d(w_b)
        -- se
        self.with_se = se_ratio > 0
        if self.with_se then
            local w_se = math.floor(w_in * se_ratio + 0.5)
            self.se = SE(w_b, w_se)
        end
        -- 1x1
        self.conv3 = nn.Conv2d(w_b, w_out, { kernel_size = 1, bias = false })
        self.bn3 = nn.BatchNorm2d(w_out)

        self.shortcut = nn.Sequential()
        if stride ~= 1 or w_in ~= w_out then
            self.shortcut = nn.Sequential(
                nn.Conv2d(w_in, w_out, { kernel_size = 1, stride = stride, bias = false }),
                nn.BatchNorm2d(w_out)
            )
        end
    end

    function Block:forward(x)
        local out = F.relu(self.bn1(self.conv1(x)))
        out = F.relu(self.bn2(self.conv2(out)))
        if self.with_se then
            out = self.se(out)
        end
        out = self.bn3(self.conv3(out))
        -- out += self.shortcut(x)
        out = out + self.shortcut(x)
        out = F.relu(out)
        return out
    end

    local RegNet = nn.Module:extend("RegNet")
    nn.signature(RegNet, "cfg, num_classes=10")
    function RegNet:init(cfg, num_classes)
        self.cfg = cfg
        -- self.in_planes = 64  (64 -> 8)
        self.in_planes = 8
        self.conv1 = nn.Conv2d(3, 8, { kernel_size = 3, stride = 1, padding = 1, bias = false })
        self.bn1 = nn.BatchNorm2d(8)
        -- self.layer1 = self._make_layer(0)
        self.layer1 = self:_make_layer(1)
        self.layer2 = self:_make_layer(2)
        self.layer3 = self:_make_layer(3)
        self.layer4 = self:_make_layer(4)
        -- self.linear = nn.Linear(self.cfg['widths'][-1], num_classes)
        self.linear = nn.Linear(self.cfg["widths"][#self.cfg["widths"]], num_classes)
    end

    function RegNet:_make_layer(idx)
        local depth = self.cfg["depths"][idx]
        local width = self.cfg["widths"][idx]
        local stride = self.cfg["strides"][idx]
        local group_width = self.cfg["group_width"]
        local bottleneck_ratio = self.cfg["bottleneck_ratio"]
        local se_ratio = self.cfg["se_ratio"]

        local layers = {}
        -- for i in range(depth):
        for i = 0, depth - 1 do
            -- s = stride if i == 0 else 1
            local s = i == 0 and stride or 1
            layers[#layers + 1] = Block(self.in_planes, width, s, group_width, bottleneck_ratio, se_ratio)
            self.in_planes = width
        end
        return nn.Sequential(unpack(layers))
    end

    function RegNet:forward(x)
        local out = F.relu(self.bn1(self.conv1(x)))
        out = self.layer1(out)
        out = self.layer2(out)
        out = self.layer3(out)
        out = self.layer4(out)
        out = F.adaptive_avg_pool2d(out, { 1, 1 })
        out = out:view(out:size(1), -1)
        out = self.linear(out)
        return out
    end

    local function RegNetX_200MF()
        -- shrunk: 'depths': [1, 1, 4, 7], 'widths': [24, 56, 152, 368], 'group_width': 8
        local cfg = {
            depths = { 1, 1, 2, 1 },
            widths = { 4, 8, 12, 16 },
            strides = { 1, 1, 2, 2 },
            group_width = 4,
            bottleneck_ratio = 1,
            se_ratio = 0,
        }
        return RegNet(cfg)
    end

    local function RegNetY_400MF()
        local cfg = {
            depths = { 1, 1, 1, 1 },
            widths = { 4, 8, 12, 16 },
            strides = { 1, 1, 2, 2 },
            group_width = 4,
            bottleneck_ratio = 1,
            se_ratio = 0.25,
        }
        return RegNet(cfg)
    end

    it("RegNetX_200MF (shrunk): grouped 3x3 convs, identity nn.Sequential() shortcut, SGD steps", function()
        tide.manual_seed(0)
        local net = RegNetX_200MF()
        local y = net(tide.randn(2, 3, 32, 32))
        assert.are.same({ 2, 10 }, y.shape)
        assert.are.equal(3, net.layer3[1].conv2.groups)
        assert.are.equal(0, #net.layer3[2].shortcut)
        assert.is_nil(net.layer1[1].se)
        train_steps(net, 3)
    end)

    it("RegNetY_400MF (shrunk): the SE block with w_se = int(round(w_in * se_ratio))", function()
        tide.manual_seed(0)
        local net = RegNetY_400MF()
        assert.are.equal(2, net.layer3[1].se.se1.out_channels)
        train_steps(net, 3)
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. models/preact_resnet.py
---------------------------------------------------------------------------------------------
describe("pytorch-cifar models/preact_resnet.py", function()
    -- class PreActBlock(nn.Module): '''Pre-activation version of the BasicBlock.'''
    local PreActBlock = nn.Module:extend("PreActBlock")
    PreActBlock.expansion = 1

    -- def __init__(self, in_planes, planes, stride=1):
    nn.signature(PreActBlock, "in_planes, planes, stride=1")
    function PreActBlock:init(in_planes, planes, stride)
        self.bn1 = nn.BatchNorm2d(in_planes)
        self.conv1 = nn.Conv2d(in_planes, planes, { kernel_size = 3, stride = stride, padding = 1, bias = false })
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, { kernel_size = 3, stride = 1, padding = 1, bias = false })

        if stride ~= 1 or in_planes ~= self.expansion * planes then
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_planes, self.expansion * planes, { kernel_size = 1, stride = stride, bias = false })
            )
        end
    end

    function PreActBlock:forward(x)
        local out = F.relu(self.bn1(x))
        -- shortcut = self.shortcut(out) if hasattr(self, 'shortcut') else x  (a missing field reads nil)
        local shortcut = self.shortcut ~= nil and self.shortcut(out) or x
        out = self.conv1(out)
        out = self.conv2(F.relu(self.bn2(out)))
        -- out += shortcut
        out = out + shortcut
        return out
    end

    -- class PreActBottleneck(nn.Module): '''Pre-activation version of the original Bottleneck module.'''
    local PreActBottleneck = nn.Module:extend("PreActBottleneck")
    PreActBottleneck.expansion = 4

    nn.signature(PreActBottleneck, "in_planes, planes, stride=1")
    function PreActBottleneck:init(in_planes, planes, stride)
        self.bn1 = nn.BatchNorm2d(in_planes)
        self.conv1 = nn.Conv2d(in_planes, planes, { kernel_size = 1, bias = false })
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, { kernel_size = 3, stride = stride, padding = 1, bias = false })
        self.bn3 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, self.expansion * planes, { kernel_size = 1, bias = false })

        if stride ~= 1 or in_planes ~= self.expansion * planes then
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_planes, self.expansion * planes, { kernel_size = 1, stride = stride, bias = false })
            )
        end
    end

    function PreActBottleneck:forward(x)
        local out = F.relu(self.bn1(x))
        local shortcut = self.shortcut ~= nil and self.shortcut(out) or x
        out = self.conv1(out)
        out = self.conv2(F.relu(self.bn2(out)))
        out = self.conv3(F.relu(self.bn3(out)))
        out = out + shortcut
        return out
    end

    local PreActResNet = nn.Module:extend("PreActResNet")
    nn.signature(PreActResNet, "block, num_blocks, num_classes=10")
    function PreActResNet:init(block, num_blocks, num_classes)
        -- self.in_planes = 64  (widths / 8)
        self.in_planes = 8
        self.conv1 = nn.Conv2d(3, 8, { kernel_size = 3, stride = 1, padding = 1, bias = false })
        -- self.layer1 = self._make_layer(block, 64, num_blocks[0], stride=1)
        self.layer1 = self:_make_layer(block, 8, num_blocks[1], { stride = 1 })
        self.layer2 = self:_make_layer(block, 16, num_blocks[2], { stride = 2 })
        self.layer3 = self:_make_layer(block, 32, num_blocks[3], { stride = 2 })
        self.layer4 = self:_make_layer(block, 64, num_blocks[4], { stride = 2 })
        -- self.linear = nn.Linear(512*block.expansion, num_classes)
        self.linear = nn.Linear(64 * block.expansion, num_classes)
    end

    function PreActResNet:_make_layer(block, planes, num_blocks, stride)
        -- strides = [stride] + [1]*(num_blocks-1)
        local strides = { stride }
        for _ = 1, num_blocks - 1 do strides[#strides + 1] = 1 end
        local layers = {}
        for _, s in ipairs(strides) do
            layers[#layers + 1] = block(self.in_planes, planes, s)
            self.in_planes = planes * block.expansion
        end
        return nn.Sequential(unpack(layers))
    end

    -- def _make_layer(self, block, planes, num_blocks, stride): called with stride= by name
    nn.signature(PreActResNet, "block, planes, num_blocks, stride", "_make_layer")

    function PreActResNet:forward(x)
        local out = self.conv1(x)
        out = self.layer1(out)
        out = self.layer2(out)
        out = self.layer3(out)
        out = self.layer4(out)
        out = F.avg_pool2d(out, 4)
        out = out:view(out:size(1), -1)
        out = self.linear(out)
        return out
    end

    -- def PreActResNet18(): return PreActResNet(PreActBlock, [2,2,2,2])  (shrunk: [1,1,1,1])
    local function PreActResNet18()
        return PreActResNet(PreActBlock, { 1, 1, 1, 1 })
    end

    local function PreActResNet50()
        return PreActResNet(PreActBottleneck, { 1, 1, 1, 1 })
    end

    it("PreActResNet18 (shrunk): hasattr(self, 'shortcut'), test() shape, SGD steps", function()
        tide.manual_seed(0)
        local net = PreActResNet18()
        -- y = net((torch.randn(1,3,32,32))); print(y.size())
        local y = net(tide.randn(1, 3, 32, 32))
        assert.are.same({ 1, 10 }, y:size())
        assert.is_nil(net.layer1[1].shortcut)
        assert.is_not_nil(net.layer2[1].shortcut)
        train_steps(net, 3)
    end)

    it("PreActResNet50 (shrunk): PreActBottleneck with expansion = 4", function()
        tide.manual_seed(0)
        local net = PreActResNet50()
        assert.are.equal(256, net.linear.in_features)
        assert.is_not_nil(net.layer1[1].shortcut)
        train_steps(net, 3)
    end)
end)

---------------------------------------------------------------------------------------------
-- 4. models/senet.py
---------------------------------------------------------------------------------------------
describe("pytorch-cifar models/senet.py", function()
    local BasicBlock = nn.Module:extend("BasicBlock")
    nn.signature(BasicBlock, "in_planes, planes, stride=1")
    function BasicBlock:init(in_planes, planes, stride)
        self.conv1 = nn.Conv2d(in_planes, planes, { kernel_size = 3, stride = stride, padding = 1, bias = false })
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, { kernel_size = 3, stride = 1, padding = 1, bias = false })
        self.bn2 = nn.BatchNorm2d(planes)

        self.shortcut = nn.Sequential()
        if stride ~= 1 or in_planes ~= planes then
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_planes, planes, { kernel_size = 1, stride = stride, bias = false }),
                nn.BatchNorm2d(planes)
            )
        end

        -- SE layers
        -- self.fc1 = nn.Conv2d(planes, planes//16, kernel_size=1)  # Use nn.Conv2d instead of nn.Linear
        self.fc1 = nn.Conv2d(planes, math.floor(planes / 16), { kernel_size = 1 })
        self.fc2 = nn.Conv2d(math.floor(planes / 16), planes, { kernel_size = 1 })
    end

    function BasicBlock:forward(x)
        local out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))

        -- Squeeze
        -- w = F.avg_pool2d(out, out.size(2))
        local w = F.avg_pool2d(out, out:size(3))
        w = F.relu(self.fc1(w))
        w = F.sigmoid(self.fc2(w))
        -- Excitation
        out = out * w -- New broadcasting feature from v0.2!

        out = out + self.shortcut(x)
        out = F.relu(out)
        return out
    end

    local PreActBlock = nn.Module:extend("PreActBlock")
    nn.signature(PreActBlock, "in_planes, planes, stride=1")
    function PreActBlock:init(in_planes, planes, stride)
        self.bn1 = nn.BatchNorm2d(in_planes)
        self.conv1 = nn.Conv2d(in_planes, planes, { kernel_size = 3, stride = stride, padding = 1, bias = false })
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, { kernel_size = 3, stride = 1, padding = 1, bias = false })

        if stride ~= 1 or in_planes ~= planes then
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_planes, planes, { kernel_size = 1, stride = stride, bias = false })
            )
        end

        -- SE layers
        self.fc1 = nn.Conv2d(planes, math.floor(planes / 16), { kernel_size = 1 })
        self.fc2 = nn.Conv2d(math.floor(planes / 16), planes, { kernel_size = 1 })
    end

    function PreActBlock:forward(x)
        local out = F.relu(self.bn1(x))
        local shortcut = self.shortcut ~= nil and self.shortcut(out) or x
        out = self.conv1(out)
        out = self.conv2(F.relu(self.bn2(out)))

        -- Squeeze
        local w = F.avg_pool2d(out, out:size(3))
        w = F.relu(self.fc1(w))
        w = F.sigmoid(self.fc2(w))
        -- Excitation
        out = out * w

        out = out + shortcut
        return out
    end

    local SENet = nn.Module:extend("SENet")
    nn.signature(SENet, "block, num_blocks, num_classes=10")
    function SENet:init(block, num_blocks, num_classes)
        -- self.in_planes = 64  (widths / 4: planes//16 must stay >= 1)
        self.in_planes = 16

        self.conv1 = nn.Conv2d(3, 16, { kernel_size = 3, stride = 1, padding = 1, bias = false })
        self.bn1 = nn.BatchNorm2d(16)
        self.layer1 = self:_make_layer(block, 16, num_blocks[1], { stride = 1 })
        self.layer2 = self:_make_layer(block, 32, num_blocks[2], { stride = 2 })
        self.layer3 = self:_make_layer(block, 64, num_blocks[3], { stride = 2 })
        self.layer4 = self:_make_layer(block, 128, num_blocks[4], { stride = 2 })
        -- self.linear = nn.Linear(512, num_classes)
        self.linear = nn.Linear(128, num_classes)
    end

    function SENet:_make_layer(block, planes, num_blocks, stride)
        local strides = { stride }
        for _ = 1, num_blocks - 1 do strides[#strides + 1] = 1 end
        local layers = {}
        for _, st in ipairs(strides) do
            layers[#layers + 1] = block(self.in_planes, planes, st)
            self.in_planes = planes
        end
        return nn.Sequential(unpack(layers))
    end
    nn.signature(SENet, "block, planes, num_blocks, stride", "_make_layer")

    function SENet:forward(x)
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

    -- the reference's fill: every floating state_dict entry, by sorted name (0-based i),
    -- p.copy_(torch.sin(torch.arange(p.numel(), dtype=torch.float64) * 0.37 + i).view(p.shape) * 0.3)
    local function fill(model)
        local sd = model:state_dict()
        local names = {}
        for name in pairs(sd) do names[#names + 1] = name end
        table.sort(names)
        tide.no_grad(function()
            for i, name in ipairs(names) do
                local p = sd[name]
                if p:is_floating_point() then
                    local v = tide.sin(tide.arange(p:numel(), { dtype = tide.float64 }) * 0.37 + (i - 1)) * 0.3
                    p:copy_(v:view(p.shape))
                end
            end
        end)
        return #names
    end

    it("SENet(BasicBlock) forward matches PyTorch 1.13 on deterministic weights (train and eval)", function()
        local net = SENet(BasicBlock, { 1, 1, 1, 1 })
        assert.are.equal(90, fill(net))
        -- x = torch.sin(torch.arange(2*3*32*32, dtype=torch.float32).view(2, 3, 32, 32) * 0.05)
        local x = tide.sin(tide.arange(2 * 3 * 32 * 32, { dtype = tide.float32 }):view(2, 3, 32, 32) * 0.05)
        local y = net(x)
        assert.are.same({ 2, 10 }, y.shape)
        assert_close_list({ 3.8814680576324463, -4.056900501251221, 4.45790958404541, -3.8116190433502197 },
            y[{ 1, { 1, 4 } }]:tolist(), 1e-4, "train y[0, :4]")
        assert_close_list({ -1.3776084184646606, 0.5870299935340881, 0.40258312225341797 },
            y[{ 2, { -3, -1 } }]:tolist(), 1e-4, "train y[1, -3:]")
        -- running_var filled with sin values goes negative: eval on fresh running stats
        fill(net)
        for _, m in ipairs(net:modules()) do
            if tide.isinstance(m, nn.BatchNorm2d) then m:reset_running_stats() end
        end
        net:eval()
        local ye = net(x)
        assert_close_list({ 3.854172945022583, -4.0088725090026855, 4.391812801361084 },
            ye[{ 1, { 1, 3 } }]:tolist(), 1e-4, "eval y[0, :3]")
    end)

    it("SENet18 (PreActBlock, shrunk) and SENet(BasicBlock): test() shape, SGD steps", function()
        tide.manual_seed(0)
        -- def SENet18(): return SENet(PreActBlock, [2,2,2,2])  (shrunk: [1,1,1,1])
        local net = SENet(PreActBlock, { 1, 1, 1, 1 })
        local y = net(tide.randn(1, 3, 32, 32))
        assert.are.same({ 1, 10 }, y:size())
        train_steps(net, 2)
        train_steps(SENet(BasicBlock, { 1, 1, 1, 1 }), 2)
    end)
end)

---------------------------------------------------------------------------------------------
-- 5. models/pnasnet.py
---------------------------------------------------------------------------------------------
describe("pytorch-cifar models/pnasnet.py", function()
    -- class SepConv(nn.Module): '''Separable Convolution.'''
    local SepConv = nn.Module:extend("SepConv")
    nn.signature(SepConv, "in_planes, out_planes, kernel_size, stride")
    function SepConv:init(in_planes, out_planes, kernel_size, stride)
        -- self.conv1 = nn.Conv2d(in_planes, out_planes, kernel_size, stride,
        --                        padding=(kernel_size-1)//2, bias=False, groups=in_planes)
        self.conv1 = nn.Conv2d(in_planes, out_planes, kernel_size, stride,
            { padding = math.floor((kernel_size - 1) / 2), bias = false, groups = in_planes })
        self.bn1 = nn.BatchNorm2d(out_planes)
    end

    function SepConv:forward(x)
        return self.bn1(self.conv1(x))
    end

    local CellA = nn.Module:extend("CellA")
    nn.signature(CellA, "in_planes, out_planes, stride=1")
    function CellA:init(in_planes, out_planes, stride)
        self.stride = stride
        -- self.sep_conv1 = SepConv(in_planes, out_planes, kernel_size=7, stride=stride)
        self.sep_conv1 = SepConv(in_planes, out_planes, { kernel_size = 7, stride = stride })
        if stride == 2 then
            self.conv1 = nn.Conv2d(in_planes, out_planes, { kernel_size = 1, stride = 1, padding = 0, bias = false })
            self.bn1 = nn.BatchNorm2d(out_planes)
        end
    end

    function CellA:forward(x)
        local y1 = self.sep_conv1(x)
        -- y2 = F.max_pool2d(x, kernel_size=3, stride=self.stride, padding=1)
        local y2 = F.max_pool2d(x, { kernel_size = 3, stride = self.stride, padding = 1 })
        if self.stride == 2 then
            y2 = self.bn1(self.conv1(y2))
        end
        return F.relu(y1 + y2)
    end

    local CellB = nn.Module:extend("CellB")
    nn.signature(CellB, "in_planes, out_planes, stride=1")
    function CellB:init(in_planes, out_planes, stride)
        self.stride = stride
        -- Left branch
        self.sep_conv1 = SepConv(in_planes, out_planes, { kernel_size = 7, stride = stride })
        self.sep_conv2 = SepConv(in_planes, out_planes, { kernel_size = 3, stride = stride })
        -- Right branch
        self.sep_conv3 = SepConv(in_planes, out_planes, { kernel_size = 5, stride = stride })
        if stride == 2 then
            self.conv1 = nn.Conv2d(in_planes, out_planes, { kernel_size = 1, stride = 1, padding = 0, bias = false })
            self.bn1 = nn.BatchNorm2d(out_planes)
        end
        -- Reduce channels
        self.conv2 = nn.Conv2d(2 * out_planes, out_planes, { kernel_size = 1, stride = 1, padding = 0, bias = false })
        self.bn2 = nn.BatchNorm2d(out_planes)
    end

    function CellB:forward(x)
        -- Left branch
        local y1 = self.sep_conv1(x)
        local y2 = self.sep_conv2(x)
        -- Right branch
        local y3 = F.max_pool2d(x, { kernel_size = 3, stride = self.stride, padding = 1 })
        if self.stride == 2 then
            y3 = self.bn1(self.conv1(y3))
        end
        local y4 = self.sep_conv3(x)
        -- Concat & reduce channels
        local b1 = F.relu(y1 + y2)
        local b2 = F.relu(y3 + y4)
        -- y = torch.cat([b1,b2], 1)
        local y = tide.cat({ b1, b2 }, 2)
        return F.relu(self.bn2(self.conv2(y)))
    end

    local PNASNet = nn.Module:extend("PNASNet")
    nn.signature(PNASNet, "cell_type, num_cells, num_planes")
    function PNASNet:init(cell_type, num_cells, num_planes)
        self.in_planes = num_planes
        self.cell_type = cell_type

        self.conv1 = nn.Conv2d(3, num_planes, { kernel_size = 3, stride = 1, padding = 1, bias = false })
        self.bn1 = nn.BatchNorm2d(num_planes)

        -- self.layer1 = self._make_layer(num_planes, num_cells=6)  (shrunk: num_cells=num_cells)
        self.layer1 = self:_make_layer(num_planes, { num_cells = num_cells })
        self.layer2 = self:_downsample(num_planes * 2)
        self.layer3 = self:_make_layer(num_planes * 2, { num_cells = num_cells })
        self.layer4 = self:_downsample(num_planes * 4)
        self.layer5 = self:_make_layer(num_planes * 4, { num_cells = num_cells })

        self.linear = nn.Linear(num_planes * 4, 10)
    end

    function PNASNet:_make_layer(planes, num_cells)
        local layers = {}
        -- for _ in range(num_cells):
        for _ = 1, num_cells do
            -- layers.append(self.cell_type(self.in_planes, planes, stride=1))
            layers[#layers + 1] = self.cell_type(self.in_planes, planes, { stride = 1 })
            self.in_planes = planes
        end
        return nn.Sequential(unpack(layers))
    end

    nn.signature(PNASNet, "planes, num_cells", "_make_layer")

    function PNASNet:_downsample(planes)
        local layer = self.cell_type(self.in_planes, planes, { stride = 2 })
        self.in_planes = planes
        return layer
    end

    function PNASNet:forward(x)
        local out = F.relu(self.bn1(self.conv1(x)))
        out = self.layer1(out)
        out = self.layer2(out)
        out = self.layer3(out)
        out = self.layer4(out)
        out = self.layer5(out)
        out = F.avg_pool2d(out, 8)
        out = self.linear(out:view(out:size(1), -1))
        return out
    end

    -- def PNASNetA(): return PNASNet(CellA, num_cells=6, num_planes=44)  (shrunk)
    local function PNASNetA()
        return PNASNet(CellA, { num_cells = 1, num_planes = 4 })
    end

    local function PNASNetB()
        return PNASNet(CellB, { num_cells = 1, num_planes = 4 })
    end

    it("PNASNetA (shrunk): SepConv with positional kernel_size, stride; the cell_type a module class", function()
        tide.manual_seed(0)
        local net = PNASNetA()
        -- x = torch.randn(1,3,32,32); y = net(x)
        local y = net(tide.randn(1, 3, 32, 32))
        assert.are.same({ 1, 10 }, y.shape)
        assert.are.same({ 7, 7 }, net.layer1[1].sep_conv1.conv1.kernel_size)
        assert.are.equal(4, net.layer1[1].sep_conv1.conv1.groups)
        train_steps(net, 3)
    end)

    it("PNASNetB (shrunk): CellB's two branches and torch.cat([b1,b2], 1), SGD steps", function()
        tide.manual_seed(0)
        local net = PNASNetB()
        assert.are.same({ 16, 32, 1, 1 }, net.layer4.conv2.weight.shape)
        train_steps(net, 3)
    end)
end)

---------------------------------------------------------------------------------------------
-- 6. models/dla_simple.py
---------------------------------------------------------------------------------------------
describe("pytorch-cifar models/dla_simple.py", function()
    local BasicBlock = nn.Module:extend("BasicBlock")
    BasicBlock.expansion = 1

    nn.signature(BasicBlock, "in_planes, planes, stride=1")
    function BasicBlock:init(in_planes, planes, stride)
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
        out = out + self.shortcut(x)
        out = F.relu(out)
        return out
    end

    local Root = nn.Module:extend("Root")
    nn.signature(Root, "in_channels, out_channels, kernel_size=1")
    function Root:init(in_channels, out_channels, kernel_size)
        -- self.conv = nn.Conv2d(in_channels, out_channels, kernel_size,
        --                       stride=1, padding=(kernel_size - 1) // 2, bias=False)
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

    local Tree = nn.Module:extend("Tree")
    nn.signature(Tree, "block, in_channels, out_channels, level=1, stride=1")
    function Tree:init(block, in_channels, out_channels, level, stride)
        self.root = Root(2 * out_channels, out_channels)
        if level == 1 then
            self.left_tree = block(in_channels, out_channels, { stride = stride })
            self.right_tree = block(out_channels, out_channels, { stride = 1 })
        else
            -- self.left_tree = Tree(block, in_channels, out_channels, level=level-1, stride=stride)
            self.left_tree = Tree(block, in_channels, out_channels, { level = level - 1, stride = stride })
            self.right_tree = Tree(block, out_channels, out_channels, { level = level - 1, stride = 1 })
        end
    end

    function Tree:forward(x)
        local out1 = self.left_tree(x)
        local out2 = self.right_tree(out1)
        -- out = self.root([out1, out2])
        local out = self.root({ out1, out2 })
        return out
    end

    local SimpleDLA = nn.Module:extend("SimpleDLA")
    -- def __init__(self, block=BasicBlock, num_classes=10):
    nn.signature(SimpleDLA, "block=None, num_classes=10")
    function SimpleDLA:init(block, num_classes)
        block = block or BasicBlock
        -- channels / 8: 16, 32, 64, 128, 256, 512 -> 2, 4, 8, 16, 32, 64
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

    function SimpleDLA:forward(x)
        local out = self.base(x)
        out = self.layer1(out)
        out = self.layer2(out)
        out = self.layer3(out)
        out = self.layer4(out)
        out = self.layer5(out)
        out = self.layer6(out)
        out = F.avg_pool2d(out, 4)
        out = out:view(out:size(1), -1)
        out = self.linear(out)
        return out
    end

    it("SimpleDLA (shrunk): Tree recursion with level=, Root(torch.cat(xs, 1)), test() shape, SGD steps", function()
        tide.manual_seed(0)
        local net = SimpleDLA()
        -- x = torch.randn(1, 3, 32, 32); y = net(x); print(y.size())
        local y = net(tide.randn(1, 3, 32, 32))
        assert.are.same({ 1, 10 }, y:size())
        assert.is_true(tide.isinstance(net.layer4.left_tree, Tree))
        assert.is_true(tide.isinstance(net.layer3.left_tree, BasicBlock))
        assert.are.same({ 64, 128, 1, 1 }, net.layer6.root.conv.weight.shape)
        train_steps(net, 3)
    end)

    it("main.py: train(epoch)/test(epoch) on a DataLoader, CosineAnnealingLR, checkpoint save and resume", function()
        tide.manual_seed(0)
        local device = tide.cuda.is_available() and "cuda" or "cpu"
        local best_acc = 0 -- best test accuracy
        local start_epoch = 0 -- start from epoch 0 or last checkpoint epoch
        -- trainset = torchvision.datasets.CIFAR10(...): 2 random normalized 3x32x32 images
        local trainset = tide.data.TensorDataset(tide.randn(2, 3, 32, 32), tide.randint(1, 11, { 2 }))
        -- trainloader = torch.utils.data.DataLoader(trainset, batch_size=128, shuffle=True, num_workers=2)
        local trainloader = tide.data.DataLoader(trainset, { batch_size = 2, shuffle = true, num_workers = 0 })
        local testloader = tide.data.DataLoader(trainset, { batch_size = 2, shuffle = false, num_workers = 0 })

        local net = SimpleDLA()
        net = net:to(device)
        local criterion = nn.CrossEntropyLoss()
        -- optimizer = optim.SGD(net.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
        local optimizer = optim.SGD(net:parameters(), { lr = 0.05, momentum = 0.9, weight_decay = 5e-4 })
        -- scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=200)
        local scheduler = tide.optim.lr_scheduler.CosineAnnealingLR(optimizer, { T_max = 200 })
        local path = os.tmpname()
        local losses = {}

        local function train(epoch) -- luacheck: ignore epoch
            net:train()
            local train_loss = 0
            local correct = 0
            local total = 0
            -- for batch_idx, (inputs, targets) in enumerate(trainloader):
            for batch_idx, inputs, targets in trainloader:enumerate(0) do -- luacheck: ignore batch_idx
                inputs, targets = inputs:to(device), targets:to(device)
                optimizer:zero_grad()
                local outputs = net(inputs)
                local loss = criterion(outputs, targets)
                loss:backward()
                optimizer:step()

                train_loss = train_loss + loss:item()
                local _, predicted = outputs:max(2)
                -- total += targets.size(0)
                total = total + targets:size(1)
                -- correct += predicted.eq(targets).sum().item()
                correct = correct + predicted:eq(targets):sum():item()
            end
            losses[#losses + 1] = train_loss
            assert.are.equal(2, total)
            assert.is_true(correct >= 0 and correct <= total)
        end

        local function test(epoch)
            net:eval()
            local correct, total = 0, 0
            -- with torch.no_grad():
            tide.no_grad(function()
                for _, inputs, targets in testloader:enumerate(0) do
                    inputs, targets = inputs:to(device), targets:to(device)
                    local outputs = net(inputs)
                    assert_finite(criterion(outputs, targets):item(), "test loss")
                    local _, predicted = outputs:max(2)
                    total = total + targets:size(1)
                    correct = correct + predicted:eq(targets):sum():item()
                end
            end)
            -- Save checkpoint.
            local acc = 100. * correct / total
            if acc >= best_acc then
                -- state = {'net': net.state_dict(), 'acc': acc, 'epoch': epoch}
                local state = { net = net:state_dict(), acc = acc, epoch = epoch }
                -- torch.save(state, './checkpoint/ckpt.pth')
                tide.save(state, path)
                best_acc = acc
            end
        end

        -- for epoch in range(start_epoch, start_epoch+200):
        for epoch = start_epoch, start_epoch + 2 do
            train(epoch)
            test(epoch)
            scheduler:step()
        end
        assert.is_true(losses[3] < losses[1])
        -- the cosine schedule after 3 steps of T_max=200
        assert.is_true(math.abs(optimizer.param_groups[1].lr - 0.025 * (1 + math.cos(math.pi * 3 / 200))) < 1e-9)

        -- if args.resume: checkpoint = torch.load('./checkpoint/ckpt.pth')
        local checkpoint = tide.load(path)
        os.remove(path)
        local resumed = SimpleDLA()
        resumed:load_state_dict(checkpoint["net"])
        best_acc = checkpoint["acc"]
        start_epoch = checkpoint["epoch"]
        assert.is_true(start_epoch >= 0 and start_epoch <= 2)
        assert.are.equal(best_acc, checkpoint.acc)
    end)
end)

---------------------------------------------------------------------------------------------
-- the gaps these ports met
---------------------------------------------------------------------------------------------
describe("pytorch-cifar gaps", function()
    it("a user class's dict argument (EfficientNet(cfg)) is positional; a typo'd keyword still raises", function()
        local Net = nn.Module:extend("Net")
        nn.signature(Net, "cfg, num_classes=10")
        function Net:init(cfg, num_classes)
            self.cfg, self.num_classes = cfg, num_classes
        end
        local cfg = { widths = { 4, 8 }, depth = 2 }
        local net = Net(cfg)
        assert.is_true(rawequal(cfg, net.cfg))
        assert.are.equal(10, net.num_classes)
        assert.are.equal(3, Net(cfg, { num_classes = 3 }).num_classes)
        assert.are.equal(5, Net({ cfg = cfg, num_classes = 5 }).num_classes)
        assert.has_error(function() Net(cfg, { num_clases = 3 }) end,
            'tide: Net: unknown option "num_clases" (did you mean "num_classes"?)')
    end)

    it("F.max_pool2d/avg_pool2d/adaptive_avg_pool2d take kernel_size (output_size) by name", function()
        local x = tide.randn(1, 2, 8, 8)
        -- F.max_pool2d(x, kernel_size=3, stride=1, padding=1)
        assert.are.same({ 1, 2, 8, 8 }, F.max_pool2d(x, { kernel_size = 3, stride = 1, padding = 1 }).shape)
        assert.is_true(F.avg_pool2d(x, { kernel_size = 2 }):equal(F.avg_pool2d(x, 2)))
        assert.are.same({ 1, 2, 1, 1 }, F.adaptive_avg_pool2d(x, { output_size = 1 }).shape)
        assert.has_error(function() F.max_pool2d(x, 2, { kernel_size = 2 }) end,
            "tide: max_pool2d: kernel_size given twice, as argument #2 and by name; pass it once")
    end)

    it("BatchNorm2d:reset_running_stats() and reset_parameters(), as PyTorch's", function()
        local bn = nn.BatchNorm2d(3)
        bn(tide.randn(4, 3, 2, 2) * 3 + 1)
        tide.no_grad(function() bn.weight:fill_(2) end)
        assert.are.equal(1, bn.num_batches_tracked:item())
        bn:reset_running_stats()
        assert.are.same({ 0, 0, 0 }, bn.running_mean:tolist())
        assert.are.same({ 1, 1, 1 }, bn.running_var:tolist())
        assert.are.equal(0, bn.num_batches_tracked:item())
        assert.are.same({ 2, 2, 2 }, bn.weight:tolist())
        bn:reset_parameters()
        assert.are.same({ 1, 1, 1 }, bn.weight:tolist())
        assert.has_error(function() bn:reset_running_stats(true) end,
            "tide: BatchNorm2d:reset_running_stats() takes no arguments, got 1; call m:reset_running_stats()")
        local inorm = nn.InstanceNorm2d(3, { track_running_stats = true })
        inorm:reset_running_stats()
        assert.are.same({ 1, 1, 1 }, inorm.running_var:tolist())
    end)
end)
