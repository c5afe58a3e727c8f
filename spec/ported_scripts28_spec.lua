-- ported_scripts28_spec.lua — torchvision's classification models ported line for line at tiny
-- widths: models/resnet.py (conv3x3, conv1x1, BasicBlock, Bottleneck with downsample, groups,
-- width_per_group and dilation, ResNet with _make_layer, zero_init_residual and the kaiming init
-- loop over self.modules(); ResNeXt and wide variants through the same constructor),
-- models/mobilenetv2.py (_make_divisible, InvertedResidual over Conv2dNormActivation,
-- MobileNetV2) and models/shufflenetv2.py (channel_shuffle, InvertedResidual with chunk/cat,
-- ShuffleNetV2 with setattr'd stages and x.mean([2, 3])). Each forward is checked against
-- PyTorch 1.13 on the same deterministic weights (/tmp reference: the classes copied into plain
-- torch), then trained a few steps. ResNet's 64/128/256/512 widths are 8/16/32/64 here.
-- The Python line stands above each Lua line that differs from it.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local isinstance = tide.isinstance

-- every float entry of the state_dict, by sorted name, as sin(0.7 j + 1.3 i) / 2 (running_var
-- |.| + 0.5): the same fill the PyTorch reference applies
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

local function check_forward(model, want, train, hw)
    hw = hw or 16
    fill(model)
    model:train(train)
    local x = tide.sin(tide.arange(2 * 3 * hw * hw, { dtype = tide.float64 }) * 0.1):view(2, 3, hw, hw):float()
    local y = model(x)
    ported.assert_close_list(want, y:flatten():tolist(), 1e-4, "forward")
end

-- a few SGD steps on one random batch: losses finite and the last below the first
local function train_steps(model, nclasses, steps)
    tide.manual_seed(0)
    local images = tide.randn(4, 3, 16, 16)
    local target = tide.randint(1, nclasses + 1, { 4 })
    -- criterion = nn.CrossEntropyLoss()
    local criterion = nn.CrossEntropyLoss()
    -- optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=args.momentum, weight_decay=args.weight_decay)
    local optimizer = optim.SGD(model:parameters(), 0.05, { momentum = 0.9, weight_decay = 1e-4 })
    model:train()
    local losses = {}
    for _ = 1, steps or 4 do
        local output = model(images)
        local loss = criterion(output, target)
        optimizer:zero_grad()
        loss:backward()
        optimizer:step()
        losses[#losses + 1] = loss:item()
        assert_finite(losses[#losses], "loss")
    end
    assert.is_true(losses[#losses] < losses[1], "loss did not decrease: " .. table.concat(losses, " "))
    return losses
end

---------------------------------------------------------------------------------------------
-- 1. torchvision/models/resnet.py
---------------------------------------------------------------------------------------------
describe("torchvision/models/resnet.py", function()
    -- def conv3x3(in_planes, out_planes, stride=1, groups=1, dilation=1):
    local function conv3x3(in_planes, out_planes, stride, groups, dilation)
        stride, groups, dilation = stride or 1, groups or 1, dilation or 1
        -- return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride,
        --                  padding=dilation, groups=groups, bias=False, dilation=dilation)
        return nn.Conv2d(in_planes, out_planes, { kernel_size = 3, stride = stride,
            padding = dilation, groups = groups, bias = false, dilation = dilation })
    end

    -- def conv1x1(in_planes, out_planes, stride=1):
    local function conv1x1(in_planes, out_planes, stride)
        -- return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)
        return nn.Conv2d(in_planes, out_planes, { kernel_size = 1, stride = stride or 1, bias = false })
    end

    -- class BasicBlock(nn.Module):
    local BasicBlock = nn.Module:extend("BasicBlock")
    -- expansion = 1
    BasicBlock.expansion = 1

    -- def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1,
    --              base_width=64, dilation=1, norm_layer=None):
    nn.signature(BasicBlock, "self, inplanes, planes, stride=1, downsample=None, groups=1, " ..
        "base_width=64, dilation=1, norm_layer=None")
    function BasicBlock:init(inplanes, planes, stride, downsample, groups, base_width, dilation, norm_layer)
        if norm_layer == nil then
            norm_layer = nn.BatchNorm2d
        end
        if groups ~= 1 or base_width ~= 64 then
            -- raise ValueError('BasicBlock only supports groups=1 and base_width=64')
            error("BasicBlock only supports groups=1 and base_width=64")
        end
        if dilation > 1 then
            error("Dilation > 1 not supported in BasicBlock")
        end
        -- Both self.conv1 and self.downsample layers downsample the input when stride != 1
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        -- self.relu = nn.ReLU(inplace=True)
        self.relu = nn.ReLU({ inplace = true })
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride
    end

    function BasicBlock:forward(x)
        local identity = x

        local out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)

        out = self.conv2(out)
        out = self.bn2(out)

        -- if self.downsample is not None:
        if self.downsample ~= nil then
            identity = self.downsample(x)
        end

        -- out += identity
        out = out + identity
        out = self.relu(out)

        return out
    end

    -- class Bottleneck(nn.Module):
    local Bottleneck = nn.Module:extend("Bottleneck")
    Bottleneck.expansion = 4

    -- def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1,
    --              base_width=64, dilation=1, norm_layer=None):
    nn.signature(Bottleneck, "self, inplanes, planes, stride=1, downsample=None, groups=1, " ..
        "base_width=64, dilation=1, norm_layer=None")
    function Bottleneck:init(inplanes, planes, stride, downsample, groups, base_width, dilation, norm_layer)
        if norm_layer == nil then
            norm_layer = nn.BatchNorm2d
        end
        -- width = int(planes * (base_width / 64.)) * groups
        local width = math.floor(planes * (base_width / 64.)) * groups
        -- Both self.conv2 and self.downsample layers downsample the input when stride != 1
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = norm_layer(width)
        self.conv2 = conv3x3(width, width, stride, groups, dilation)
        self.bn2 = norm_layer(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU({ inplace = true })
        self.downsample = downsample
        self.stride = stride
    end

    function Bottleneck:forward(x)
        local identity = x

        local out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)

        out = self.conv2(out)
        out = self.bn2(out)
        out = self.relu(out)

        out = self.conv3(out)
        out = self.bn3(out)

        if self.downsample ~= nil then
            identity = self.downsample(x)
        end

        out = out + identity
        out = self.relu(out)

        return out
    end

    -- class ResNet(nn.Module):
    local ResNet = nn.Module:extend("ResNet")

    -- def __init__(self, block, layers, num_classes=1000, zero_init_residual=False,
    --              groups=1, width_per_group=64, replace_stride_with_dilation=None,
    --              norm_layer=None):
    nn.signature(ResNet, [[self, block, layers, num_classes=1000, zero_init_residual=False,
                 groups=1, width_per_group=64, replace_stride_with_dilation=None,
                 norm_layer=None]])
    function ResNet:init(block, layers, num_classes, zero_init_residual, groups, width_per_group,
                         replace_stride_with_dilation, norm_layer)
        if norm_layer == nil then
            norm_layer = nn.BatchNorm2d
        end
        self._norm_layer = norm_layer

        -- self.inplanes = 64
        self.inplanes = 8
        self.dilation = 1
        if replace_stride_with_dilation == nil then
            -- each element in the tuple indicates if we should replace
            -- the 2x2 stride with a dilated convolution instead
            replace_stride_with_dilation = { false, false, false }
        end
        if #replace_stride_with_dilation ~= 3 then
            error("replace_stride_with_dilation should be None or a 3-element tuple")
        end
        self.groups = groups
        self.base_width = width_per_group
        -- self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.conv1 = nn.Conv2d(3, self.inplanes, { kernel_size = 7, stride = 2, padding = 3, bias = false })
        self.bn1 = norm_layer(self.inplanes)
        self.relu = nn.ReLU({ inplace = true })
        -- self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.maxpool = nn.MaxPool2d({ kernel_size = 3, stride = 2, padding = 1 })
        -- self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer1 = self:_make_layer(block, 8, layers[1])
        -- self.layer2 = self._make_layer(block, 128, layers[1], stride=2,
        --                                dilate=replace_stride_with_dilation[0])
        self.layer2 = self:_make_layer(block, 16, layers[2], { stride = 2,
            dilate = replace_stride_with_dilation[1] })
        self.layer3 = self:_make_layer(block, 32, layers[3], { stride = 2,
            dilate = replace_stride_with_dilation[2] })
        self.layer4 = self:_make_layer(block, 64, layers[4], { stride = 2,
            dilate = replace_stride_with_dilation[3] })
        -- self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.avgpool = nn.AdaptiveAvgPool2d({ 1, 1 })
        -- self.fc = nn.Linear(512 * block.expansion, num_classes)
        self.fc = nn.Linear(64 * block.expansion, num_classes)

        -- for m in self.modules():
        for _, m in ipairs(self:modules()) do
            if isinstance(m, nn.Conv2d) then
                -- nn.init.kaiming_normal_(m.weight, mode='fan_out', nonlinearity='relu')
                nn.init.kaiming_normal_(m.weight, { mode = "fan_out", nonlinearity = "relu" })
            -- elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
            elseif isinstance(m, { nn.BatchNorm2d, nn.GroupNorm }) then
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
            end
        end

        -- Zero-initialize the last BN in each residual branch,
        -- so that the residual branch starts with zeros, and each residual block behaves like an identity.
        if zero_init_residual then
            for _, m in ipairs(self:modules()) do
                if isinstance(m, Bottleneck) then
                    nn.init.constant_(m.bn3.weight, 0)
                elseif isinstance(m, BasicBlock) then
                    nn.init.constant_(m.bn2.weight, 0)
                end
            end
        end
    end

    -- def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
    function ResNet:_make_layer(block, planes, blocks, kw)
        kw = kw or {}
        local stride, dilate = kw.stride or 1, kw.dilate or false
        local norm_layer = self._norm_layer
        local downsample = nil
        local previous_dilation = self.dilation
        if dilate then
            -- self.dilation *= stride
            self.dilation = self.dilation * stride
            stride = 1
        end
        if stride ~= 1 or self.inplanes ~= planes * block.expansion then
            downsample = nn.Sequential(
                conv1x1(self.inplanes, planes * block.expansion, stride),
                norm_layer(planes * block.expansion)
            )
        end

        local layers = {}
        -- layers.append(block(self.inplanes, planes, stride, downsample, self.groups,
        --                     self.base_width, previous_dilation, norm_layer))
        table.insert(layers, block(self.inplanes, planes, stride, downsample, self.groups,
            self.base_width, previous_dilation, norm_layer))
        self.inplanes = planes * block.expansion
        -- for _ in range(1, blocks):
        for _ = 2, blocks do
            -- layers.append(block(self.inplanes, planes, groups=self.groups,
            --                     base_width=self.base_width, dilation=self.dilation,
            --                     norm_layer=norm_layer))
            table.insert(layers, block(self.inplanes, planes, { groups = self.groups,
                base_width = self.base_width, dilation = self.dilation,
                norm_layer = norm_layer }))
        end

        -- return nn.Sequential(*layers)
        return nn.Sequential(unpack(layers))
    end

    function ResNet:forward(x)
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu(x)
        x = self.maxpool(x)

        x = self.layer1(x)
        x = self.layer2(x)
        x = self.layer3(x)
        x = self.layer4(x)

        x = self.avgpool(x)
        -- x = x.reshape(x.size(0), -1)
        x = x:reshape(x:size(1), -1)
        x = self.fc(x)

        return x
    end

    -- def _resnet(arch, block, layers, pretrained, progress, **kwargs):
    local function _resnet(_arch, block, layers, _pretrained, _progress, kwargs)
        -- model = ResNet(block, layers, **kwargs)
        return ResNet(block, layers, kwargs) -- (a table by name is Python's **kwargs)
    end

    it("a [1,1,1,1] BasicBlock ResNet matches PyTorch's forward and trains", function()
        tide.manual_seed(0)
        -- model = ResNet(BasicBlock, [1, 1, 1, 1], num_classes=5)
        local model = ResNet(BasicBlock, { 1, 1, 1, 1 }, { num_classes = 5 })
        -- kaiming_normal_(mode='fan_out'): std sqrt(2 / (out_channels * 3 * 3)) on layer1's conv
        local w = model.layer1[1].conv1.weight
        assert.is_true(math.abs(w:std():item() - math.sqrt(2 / (8 * 9))) < 0.1)
        assert.are.equal(1, model.bn1.weight:min():item())
        assert.is_nil(model.layer1[1].downsample)
        assert.is_true(isinstance(model.layer2[1].downsample, nn.Sequential))
        check_forward(model, { 3.2183657, 1.6285465, -1.0205069, -3.0955992, -3.2929049, 3.6607983,
            2.3996532, -0.4082214, -3.029223, -3.8144011 }, true)
        train_steps(ResNet(BasicBlock, { 1, 1, 1, 1 }, { num_classes = 5 }), 5)
    end)

    it("ResNeXt (groups, width_per_group) with replace_stride_with_dilation matches PyTorch", function()
        tide.manual_seed(0)
        -- ResNet(Bottleneck, [1, 1, 1, 1], num_classes=5, groups=2, width_per_group=16,
        --        replace_stride_with_dilation=[False, True, True])
        local model = ResNet(Bottleneck, { 1, 1, 1, 1 }, { num_classes = 5, groups = 2, width_per_group = 16,
            replace_stride_with_dilation = { false, true, true } })
        assert.are.equal(4, model.dilation)
        assert.are.same({ 2, 2 }, { unpack(model.layer4[1].conv2.dilation) })
        assert.are.equal(2, model.layer4[1].conv2.groups)
        check_forward(model, { 22.8803329, -25.0185776, 26.0959377, -28.2833557, 28.2792377, 22.7677612,
            -24.9151459, 26.0033646, -28.2031879, 28.2128124 }, true)
    end)

    it("resnext/wide_resnet kwargs through _resnet, zero_init_residual, BasicBlock's ValueError", function()
        tide.manual_seed(0)
        -- def resnext50_32x4d(**kwargs): kwargs['groups'] = 32; kwargs['width_per_group'] = 4
        local kwargs = { num_classes = 3, zero_init_residual = true }
        kwargs["groups"] = 4
        kwargs["width_per_group"] = 32
        local resnext = _resnet("resnext_tiny", Bottleneck, { 1, 2, 1, 1 }, false, true, kwargs)
        -- width = int(8 * (32 / 64.)) * 4 = 16
        assert.are.same({ 16, 4, 3, 3 }, { unpack(resnext.layer1[1].conv2.weight:size()) })
        assert.are.equal(0, resnext.layer2[2].bn3.weight:abs():max():item())
        -- wide_resnet50_2: kwargs['width_per_group'] = 64 * 2
        local wide = _resnet("wide_tiny", Bottleneck, { 1, 1, 1, 1 }, false, true,
            { num_classes = 3, width_per_group = 64 * 2 })
        assert.are.same({ 16, 8, 1, 1 }, { unpack(wide.layer1[1].conv1.weight:size()) })
        train_steps(wide, 3, 3)
        -- BasicBlock(8, 8, groups=2) raises ValueError
        assert.has_error(function()
            _resnet("bad", BasicBlock, { 1, 1, 1, 1 }, false, true, { groups = 2 })
        end)
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. torchvision/models/mobilenetv2.py
---------------------------------------------------------------------------------------------
describe("torchvision/models/mobilenetv2.py", function()
    -- def _make_divisible(v, divisor, min_value=None):
    local function _make_divisible(v, divisor, min_value)
        if min_value == nil then
            min_value = divisor
        end
        -- new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
        local new_v = math.max(min_value, math.floor(math.floor(v + divisor / 2) / divisor) * divisor)
        -- Make sure that round down does not go down by more than 10%.
        if new_v < 0.9 * v then
            new_v = new_v + divisor
        end
        return new_v
    end

    -- torchvision.ops.misc.Conv2dNormActivation(in, out, kernel_size=3, stride=1, padding=None,
    --     groups=1, norm_layer=nn.BatchNorm2d, activation_layer=nn.ReLU, dilation=1, inplace=True, bias=None)
    local Conv2dNormActivation = nn.Sequential:extend("Conv2dNormActivation")
    nn.signature(Conv2dNormActivation, "in_channels, out_channels, kernel_size=3, stride=1, " ..
        "padding=None, groups=1, norm_layer=None, activation_layer=None, dilation=1, inplace=True, bias=None")
    function Conv2dNormActivation:init(in_channels, out_channels, kernel_size, stride, padding, groups,
                                       norm_layer, activation_layer, dilation, inplace, bias)
        -- (torchvision's defaults norm_layer=torch.nn.BatchNorm2d, activation_layer=torch.nn.ReLU)
        norm_layer, activation_layer = norm_layer or nn.BatchNorm2d, activation_layer or nn.ReLU
        -- padding = (kernel_size - 1) // 2 * dilation
        if padding == nil then
            padding = math.floor((kernel_size - 1) / 2) * dilation
        end
        -- bias = norm_layer is None
        if bias == nil then
            bias = norm_layer == nil
        end
        local layers = { nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding,
            { dilation = dilation, groups = groups, bias = bias }) }
        table.insert(layers, norm_layer(out_channels))
        -- params = {} if inplace is None else {"inplace": inplace}
        table.insert(layers, activation_layer({ inplace = inplace }))
        -- super().__init__(*layers)
        nn.Sequential.init(self, unpack(layers))
        self.out_channels = out_channels
    end

    -- class InvertedResidual(nn.Module):
    local InvertedResidual = nn.Module:extend("MobileInvertedResidual")
    -- def __init__(self, inp: int, oup: int, stride: int, expand_ratio: int, norm_layer = None):
    nn.signature(InvertedResidual, "self, inp: int, oup: int, stride: int, expand_ratio: int, norm_layer=None")
    function InvertedResidual:init(inp, oup, stride, expand_ratio, norm_layer)
        self.stride = stride
        -- assert stride in [1, 2]
        assert(stride == 1 or stride == 2)

        if norm_layer == nil then
            norm_layer = nn.BatchNorm2d
        end

        -- hidden_dim = int(round(inp * expand_ratio))
        local hidden_dim = math.floor(inp * expand_ratio + 0.5)
        self.use_res_connect = self.stride == 1 and inp == oup

        local layers = {}
        if expand_ratio ~= 1 then
            -- pw
            -- layers.append(Conv2dNormActivation(inp, hidden_dim, kernel_size=1, norm_layer=norm_layer, activation_layer=nn.ReLU6))
            table.insert(layers,
                Conv2dNormActivation(inp, hidden_dim, { kernel_size = 1, norm_layer = norm_layer, activation_layer = nn.ReLU6 }))
        end
        -- layers.extend([...])
        for _, m in ipairs({
            -- dw
            Conv2dNormActivation(hidden_dim, hidden_dim, { stride = stride, groups = hidden_dim,
                norm_layer = norm_layer, activation_layer = nn.ReLU6 }),
            -- pw-linear
            -- nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False),
            nn.Conv2d(hidden_dim, oup, 1, 1, 0, { bias = false }),
            norm_layer(oup),
        }) do
            table.insert(layers, m)
        end
        self.conv = nn.Sequential(unpack(layers))
        self.out_channels = oup
        self._is_cn = stride > 1
    end

    function InvertedResidual:forward(x)
        if self.use_res_connect then
            return x + self.conv(x)
        else
            return self.conv(x)
        end
    end

    -- class MobileNetV2(nn.Module):
    local MobileNetV2 = nn.Module:extend("MobileNetV2")
    nn.signature(MobileNetV2, [[self, num_classes: int = 1000, width_mult: float = 1.0,
        inverted_residual_setting = None, round_nearest: int = 8, block = None, norm_layer = None]])
    function MobileNetV2:init(num_classes, width_mult, inverted_residual_setting, round_nearest, block, norm_layer)
        if block == nil then
            block = InvertedResidual
        end
        if norm_layer == nil then
            norm_layer = nn.BatchNorm2d
        end

        local input_channel = 32
        local last_channel = 1280

        if inverted_residual_setting == nil then
            inverted_residual_setting = {
                -- t, c, n, s
                { 1, 16, 1, 1 },
                { 6, 24, 2, 2 },
                { 6, 32, 3, 2 },
                { 6, 64, 4, 2 },
                { 6, 96, 3, 1 },
                { 6, 160, 3, 2 },
                { 6, 320, 1, 1 },
            }
        end

        -- only check the first element, assuming user knows t,c,n,s are required
        if #inverted_residual_setting == 0 or #inverted_residual_setting[1] ~= 4 then
            error("inverted_residual_setting should be non-empty or a 4-element list")
        end

        -- building first layer
        input_channel = _make_divisible(input_channel * width_mult, round_nearest)
        -- self.last_channel = _make_divisible(last_channel * max(1.0, width_mult), round_nearest)
        self.last_channel = _make_divisible(last_channel * math.max(1.0, width_mult), round_nearest)
        local features = {
            Conv2dNormActivation(3, input_channel, { stride = 2, norm_layer = norm_layer, activation_layer = nn.ReLU6 }),
        }
        -- building inverted residual blocks
        -- for t, c, n, s in inverted_residual_setting:
        for _, tcns in ipairs(inverted_residual_setting) do
            local t, c, n, s = unpack(tcns)
            local output_channel = _make_divisible(c * width_mult, round_nearest)
            -- for i in range(n):
            for i = 0, n - 1 do
                -- stride = s if i == 0 else 1
                local stride = i == 0 and s or 1
                -- features.append(block(input_channel, output_channel, stride, expand_ratio=t, norm_layer=norm_layer))
                table.insert(features, block(input_channel, output_channel, stride, { expand_ratio = t, norm_layer = norm_layer }))
                input_channel = output_channel
            end
        end
        -- building last several layers
        table.insert(features,
            Conv2dNormActivation(input_channel, self.last_channel, { kernel_size = 1, norm_layer = norm_layer,
                activation_layer = nn.ReLU6 }))
        -- make it nn.Sequential
        self.features = nn.Sequential(unpack(features))

        -- building classifier
        self.classifier = nn.Sequential(
            nn.Dropout(0.2),
            nn.Linear(self.last_channel, num_classes)
        )

        -- weight initialization
        for _, m in ipairs(self:modules()) do
            if isinstance(m, nn.Conv2d) then
                -- nn.init.kaiming_normal_(m.weight, mode="fan_out")
                nn.init.kaiming_normal_(m.weight, { mode = "fan_out" })
                -- if m.bias is not None:
                if m.bias ~= nil then
                    nn.init.zeros_(m.bias)
                end
            elseif isinstance(m, { nn.BatchNorm2d, nn.GroupNorm }) then
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elseif isinstance(m, nn.Linear) then
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.zeros_(m.bias)
            end
        end
    end

    function MobileNetV2:_forward_impl(x)
        x = self.features(x)
        -- Cannot use "squeeze" as batch-size can be 1
        -- x = nn.functional.adaptive_avg_pool2d(x, (1, 1))
        x = nn.functional.adaptive_avg_pool2d(x, { 1, 1 })
        -- x = torch.flatten(x, 1)
        x = tide.flatten(x, 2)
        x = self.classifier(x)
        return x
    end

    function MobileNetV2:forward(x)
        return self:_forward_impl(x)
    end

    it("_make_divisible rounds as torchvision's", function()
        -- 16 1280 8 72 16 in Python
        assert.are.same({ 16, 1280, 8, 72, 16 }, { _make_divisible(32 * 0.5, 8),
            _make_divisible(1280 * math.max(1.0, 0.5), 8), _make_divisible(24 * 0.35, 8),
            _make_divisible(96 * 0.75, 8), _make_divisible(10, 8) })
    end)

    it("a width_mult=0.5 MobileNetV2 matches PyTorch's eval forward and trains", function()
        tide.manual_seed(0)
        local setting = { { 1, 16, 1, 1 }, { 6, 24, 2, 2 }, { 6, 32, 1, 2 } }
        -- MobileNetV2(num_classes=5, width_mult=0.5, inverted_residual_setting=setting)
        local model = MobileNetV2({ num_classes = 5, width_mult = 0.5, inverted_residual_setting = setting })
        assert.are.equal(1280, model.last_channel)
        assert.is_true(model.features[3].use_res_connect == false and model.features[4].use_res_connect == true)
        assert.are.equal(0, model.classifier[2].bias:abs():max():item())
        assert.is_true(isinstance(model.features[1], nn.Sequential))
        assert.is_true(isinstance(model.features[1][3], nn.ReLU6))
        check_forward(model, { -27.0186596, -24.9403133, 68.2669296, -83.4058914, 64.5230789, -27.0185909,
            -24.9412575, 68.268364, -83.4072495, 64.5238113 }, false)
        tide.manual_seed(1)
        train_steps(MobileNetV2({ num_classes = 5, width_mult = 0.5, inverted_residual_setting = setting }), 5)
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. torchvision/models/shufflenetv2.py
---------------------------------------------------------------------------------------------
describe("torchvision/models/shufflenetv2.py", function()
    -- def channel_shuffle(x: Tensor, groups: int) -> Tensor:
    local function channel_shuffle(x, groups)
        -- batchsize, num_channels, height, width = x.size()
        local batchsize, num_channels, height, width = unpack(x:size())
        -- channels_per_group = num_channels // groups
        local channels_per_group = math.floor(num_channels / groups)

        -- reshape
        x = x:view(batchsize, groups, channels_per_group, height, width)

        -- x = torch.transpose(x, 1, 2).contiguous()
        x = tide.transpose(x, 2, 3):contiguous()

        -- flatten
        x = x:view(batchsize, -1, height, width)

        return x
    end

    -- class InvertedResidual(nn.Module):
    local InvertedResidual = nn.Module:extend("ShuffleInvertedResidual")

    -- @staticmethod
    -- def depthwise_conv(i, o, kernel_size, stride=1, padding=0, bias=False):
    function InvertedResidual.depthwise_conv(i, o, kernel_size, kw)
        kw = kw or {}
        -- return nn.Conv2d(i, o, kernel_size, stride, padding, bias=bias, groups=i)
        return nn.Conv2d(i, o, kernel_size, kw.stride or 1, kw.padding or 0, { bias = kw.bias or false, groups = i })
    end

    nn.signature(InvertedResidual, "self, inp: int, oup: int, stride: int")
    function InvertedResidual:init(inp, oup, stride)
        -- if not (1 <= stride <= 3):
        if not (1 <= stride and stride <= 3) then
            error("illegal stride value")
        end
        self.stride = stride

        -- branch_features = oup // 2
        local branch_features = math.floor(oup / 2)
        -- if (self.stride == 1) and (inp != branch_features << 1):
        if self.stride == 1 and inp ~= branch_features * 2 then
            error(string.format("Invalid combination of stride %d, inp %d and oup %d values.", stride, inp, oup))
        end

        if self.stride > 1 then
            self.branch1 = nn.Sequential(
                -- self.depthwise_conv(inp, inp, kernel_size=3, stride=self.stride, padding=1),
                self.depthwise_conv(inp, inp, 3, { stride = self.stride, padding = 1 }),
                nn.BatchNorm2d(inp),
                -- nn.Conv2d(inp, branch_features, kernel_size=1, stride=1, padding=0, bias=False),
                nn.Conv2d(inp, branch_features, { kernel_size = 1, stride = 1, padding = 0, bias = false }),
                nn.BatchNorm2d(branch_features),
                nn.ReLU({ inplace = true })
            )
        else
            self.branch1 = nn.Sequential()
        end

        self.branch2 = nn.Sequential(
            nn.Conv2d(
                -- inp if (self.stride > 1) else branch_features,
                self.stride > 1 and inp or branch_features,
                branch_features,
                { kernel_size = 1,
                stride = 1,
                padding = 0,
                bias = false }
            ),
            nn.BatchNorm2d(branch_features),
            nn.ReLU({ inplace = true }),
            self.depthwise_conv(branch_features, branch_features, 3, { stride = self.stride, padding = 1 }),
            nn.BatchNorm2d(branch_features),
            nn.Conv2d(branch_features, branch_features, { kernel_size = 1, stride = 1, padding = 0, bias = false }),
            nn.BatchNorm2d(branch_features),
            nn.ReLU({ inplace = true })
        )
    end

    function InvertedResidual:forward(x)
        local out
        if self.stride == 1 then
            -- x1, x2 = x.chunk(2, dim=1)
            local x1, x2 = unpack(x:chunk(2, { dim = 2 }))
            -- out = torch.cat((x1, self.branch2(x2)), dim=1)
            out = tide.cat({ x1, self.branch2(x2) }, { dim = 2 })
        else
            out = tide.cat({ self.branch1(x), self.branch2(x) }, { dim = 2 })
        end

        out = channel_shuffle(out, 2)

        return out
    end

    -- class ShuffleNetV2(nn.Module):
    local ShuffleNetV2 = nn.Module:extend("ShuffleNetV2")
    -- def __init__(self, stages_repeats, stages_out_channels, num_classes=1000, inverted_residual=InvertedResidual):
    nn.signature(ShuffleNetV2, "self, stages_repeats, stages_out_channels, num_classes=1000, inverted_residual=None")
    function ShuffleNetV2:init(stages_repeats, stages_out_channels, num_classes, inverted_residual)
        -- (torchvision's default inverted_residual=InvertedResidual)
        inverted_residual = inverted_residual or InvertedResidual
        if #stages_repeats ~= 3 then
            error("expected stages_repeats as list of 3 positive ints")
        end
        if #stages_out_channels ~= 5 then
            error("expected stages_out_channels as list of 5 positive ints")
        end
        self._stage_out_channels = stages_out_channels

        local input_channels = 3
        -- output_channels = self._stage_out_channels[0]
        local output_channels = self._stage_out_channels[1]
        self.conv1 = nn.Sequential(
            -- nn.Conv2d(input_channels, output_channels, 3, 2, 1, bias=False),
            nn.Conv2d(input_channels, output_channels, 3, 2, 1, { bias = false }),
            nn.BatchNorm2d(output_channels),
            nn.ReLU({ inplace = true })
        )
        input_channels = output_channels

        self.maxpool = nn.MaxPool2d({ kernel_size = 3, stride = 2, padding = 1 })

        -- stage_names = [f"stage{i}" for i in [2, 3, 4]]
        local stage_names = {}
        for _, i in ipairs({ 2, 3, 4 }) do
            stage_names[#stage_names + 1] = "stage" .. i
        end
        -- for name, repeats, output_channels in zip(stage_names, stages_repeats, self._stage_out_channels[1:]):
        for k, name in ipairs(stage_names) do
            local repeats, out_ch = stages_repeats[k], self._stage_out_channels[k + 1]
            local seq = { inverted_residual(input_channels, out_ch, 2) }
            -- for i in range(repeats - 1):
            for _ = 1, repeats - 1 do
                table.insert(seq, inverted_residual(out_ch, out_ch, 1))
            end
            -- setattr(self, name, nn.Sequential(*seq))
            self[name] = nn.Sequential(unpack(seq))
            input_channels = out_ch
        end

        -- output_channels = self._stage_out_channels[-1]
        output_channels = self._stage_out_channels[#self._stage_out_channels]
        self.conv5 = nn.Sequential(
            nn.Conv2d(input_channels, output_channels, 1, 1, 0, { bias = false }),
            nn.BatchNorm2d(output_channels),
            nn.ReLU({ inplace = true })
        )

        self.fc = nn.Linear(output_channels, num_classes)
    end

    function ShuffleNetV2:_forward_impl(x)
        -- See note [TorchScript super()]
        x = self.conv1(x)
        x = self.maxpool(x)
        x = self.stage2(x)
        x = self.stage3(x)
        x = self.stage4(x)
        x = self.conv5(x)
        -- x = x.mean([2, 3])  # globalpool
        x = x:mean({ 3, 4 })
        x = self.fc(x)
        return x
    end

    function ShuffleNetV2:forward(x)
        return self:_forward_impl(x)
    end

    it("channel_shuffle interleaves the two groups' channels", function()
        local x = tide.arange(6):float():view(1, 6, 1, 1)
        assert.are.same({ 0, 3, 1, 4, 2, 5 }, channel_shuffle(x, 2):flatten():tolist())
    end)

    it("a tiny ShuffleNetV2 matches PyTorch's forward and trains", function()
        tide.manual_seed(0)
        -- ShuffleNetV2([2, 2, 1], [8, 16, 32, 64, 64], num_classes=5)
        local model = ShuffleNetV2({ 2, 2, 1 }, { 8, 16, 32, 64, 64 }, { num_classes = 5 })
        local names = {}
        for name in pairs(model:state_dict()) do
            -- (Sequential entries are 1-based in tide's names: PyTorch's stage3.0.branch1.0.weight)
            if name:match("^stage3%.1%.branch1%.1%.weight$") then
                names[#names + 1] = name
            end
        end
        assert.are.same({ "stage3.1.branch1.1.weight" }, names)
        assert.are.equal(0, #model.stage2[2].branch1)
        check_forward(model, { -0.1425267, -2.9618933, -3.9855475, -2.5318077, 0.534678, -0.2872078,
            -3.2184618, -4.1917996, -2.5573509, 0.7059923 }, true)
        train_steps(ShuffleNetV2({ 2, 2, 1 }, { 8, 16, 32, 64, 64 }, { num_classes = 5 }), 5)
        -- InvertedResidual(8, 16, 1): inp != branch_features << 1 raises
        assert.has_error(function() InvertedResidual(8, 16, 1) end)
    end)
end)

---------------------------------------------------------------------------------------------
-- the gaps these ports met
---------------------------------------------------------------------------------------------
describe("gaps met porting torchvision's models", function()
    -- (fixed: lua/tide/nn/Conv2d.lua, MaxPool2d.lua, AvgPool2d.lua, _signature.lua, Module.lua,
    -- nn/init.lua (nn.signature), pytorch_args.lua (a class passed as the last argument is a value))
    it("nn.Conv2d has PyTorch's kernel_size/stride/padding/dilation, and forward follows a set", function()
        tide.manual_seed(0)
        local x = tide.randn(1, 2, 9, 9)
        local conv = nn.Conv2d(2, 3, 3, { stride = 2, padding = 1, bias = false })
        assert.are.same({ 3, 3 }, conv.kernel_size)
        assert.are.same({ 2, 2 }, conv.stride)
        assert.are.same({ 1, 1 }, conv.padding)
        assert.are.same({ 1, 1 }, conv.dilation)
        assert.are.equal("same", nn.Conv2d(2, 3, 3, { padding = "same" }).padding)
        -- the stride-to-dilation surgery: m.stride = (1, 1); m.dilation = (2, 2); m.padding = (2, 2)
        conv.stride = { 1, 1 }
        conv.dilation = { 2, 2 }
        conv.padding = { 2, 2 }
        local want = F.conv2d(x, conv.weight, nil, { stride = 1, padding = 2, dilation = 2 })
        assert.are.same({ 1, 3, 9, 9 }, { unpack(conv(x):size()) })
        assert.is_true((conv(x) - want):abs():max():item() < 1e-6)
        conv.stride = 3 -- an int, as PyTorch's F.conv2d takes
        assert.are.same({ 1, 3, 3, 3 }, { unpack(conv(x):size()) })
        -- bad values raise naming the value; the geometry stays as it was
        conv.stride = 0
        assert.has_error(function() conv(x) end,
            "tide: Conv2d: expected stride to be an integer >= 1, got 0")
        conv.stride = 3
        conv.kernel_size = { 5, 5 }
        assert.has_error(function() conv(x) end, "tide: Conv2d: kernel_size is the weight's shape " ..
            "{3, 3} and cannot be set; make a new nn.Conv2d for another kernel")
        conv.kernel_size = { 3, 3 }
        conv.padding = "same"
        assert.has_error(function() conv(x) end, 'tide: Conv2d: padding "same" can only be given ' ..
            "to the constructor; set padding to {h, w} integers instead")
        conv.padding = { 2, 2 }
        assert.are.same({ 1, 3, 3, 3 }, { unpack(conv(x):size()) })
    end)

    it("nn.Conv1d and nn.ConvTranspose1d have PyTorch's 1-tuples, and forward follows a set", function()
        tide.manual_seed(0)
        local x = tide.randn(1, 2, 9)
        local conv = nn.Conv1d(2, 3, 3, { stride = 2, padding = 1, bias = false })
        assert.are.same({ { 3 }, { 2 }, { 1 }, { 1 } },
            { conv.kernel_size, conv.stride, conv.padding, conv.dilation })
        assert.are.equal("same", nn.Conv1d(2, 3, 4, { padding = "same" }).padding)
        -- WaveGlow: time_cutoff = self.upsample.kernel_size[0] - self.upsample.stride[0]
        local up = nn.ConvTranspose1d(2, 2, 8, { stride = 4 })
        assert.are.equal(4, up.kernel_size[1] - up.stride[1])
        assert.are.same({ { 0 }, { 0 }, { 1 } }, { up.padding, up.output_padding, up.dilation })
        conv.stride, conv.dilation, conv.padding = { 1 }, { 2 }, { 2 }
        local want = F.conv1d(x, conv.weight, nil, { stride = 1, padding = 2, dilation = 2 })
        assert.are.same({ 1, 3, 9 }, { unpack(conv(x):size()) })
        assert.is_true((conv(x) - want):abs():max():item() < 1e-6)
        conv.stride = 3 -- a number, as F.conv1d takes
        assert.are.same({ 1, 3, 3 }, { unpack(conv(x):size()) })
        assert.are.equal("Conv1d(2, 3, kernel_size={3}, stride=3, padding={2}, dilation={2}, " ..
            "bias=false)  [18 parameters]", tostring(conv))
        -- bad values raise naming the value; the geometry stays as it was
        conv.stride = { 0 }
        assert.has_error(function() conv(x) end,
            "tide: Conv1d: expected stride to be an integer >= 1, got 0")
        conv.stride = { 3, 3 }
        assert.has_error(function() conv(x) end, "tide: Conv1d: expected stride to be an " ..
            "integer or a 1-element list such as {3} (PyTorch's (3,)), got {3, 3}")
        conv.stride = 3
        conv.kernel_size = { 5 }
        assert.has_error(function() conv(x) end, "tide: Conv1d: kernel_size is the weight's " ..
            "shape {3} and cannot be set; make a new nn.Conv1d for another kernel")
        conv.kernel_size = { 3 }
        conv.padding = "same"
        assert.has_error(function() conv(x) end, 'tide: Conv1d: padding "same" can only be ' ..
            "given to the constructor; set padding to {n} instead")
        conv.padding = { 2 }
        assert.are.same({ 1, 3, 3 }, { unpack(conv(x):size()) })
        -- an uneven "same" pads the input itself; a padding set since replaces it
        local same = nn.Conv1d(2, 3, 4, { padding = "same", bias = false })
        assert.are.same({ 1, 3, 9 }, { unpack(same(x):size()) })
        same.padding = { 0 }
        assert.are.same({ 1, 3, 6 }, { unpack(same(x):size()) })
        up.output_padding = { 1 }
        assert.are.same({ 1, 2, 41 }, { unpack(up(x):size()) })
        up.kernel_size = 4
        assert.has_error(function() up(x) end, "tide: ConvTranspose1d: kernel_size is the " ..
            "weight's shape {8} and cannot be set; make a new nn.ConvTranspose1d for another kernel")
    end)

    it("nn.MaxPool2d has PyTorch's kernel_size/stride/padding/dilation as given", function()
        -- nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        local pool = nn.MaxPool2d({ kernel_size = 3, stride = 2, padding = 1 })
        assert.are.same({ 3, 2, 1, 1 }, { pool.kernel_size, pool.stride, pool.padding, pool.dilation })
        assert.are.equal(4, nn.MaxPool2d(4).stride) -- stride defaults to kernel_size
        local x = tide.arange(64):float():view(1, 1, 8, 8)
        assert.are.same({ 1, 1, 4, 4 }, { unpack(pool(x):size()) })
        pool.stride = 1
        assert.are.same({ 1, 1, 8, 8 }, { unpack(pool(x):size()) })
        -- nn.AvgPool2d the same: stride defaults to kernel_size
        local avg = nn.AvgPool2d(4)
        assert.are.same({ 4, 4, 0 }, { avg.kernel_size, avg.stride, avg.padding })
        avg.stride = 2
        assert.are.same({ 1, 1, 3, 3 }, { unpack(avg(x):size()) })
    end)

    it("nn.signature: a user's class takes Python's parameters with defaults and keywords", function()
        local Block = nn.Module:extend("SigBlock")
        -- def __init__(self, inplanes, planes, stride=1, downsample=None, norm_layer=None, k=(1, 2), name='b'):
        nn.signature(Block, "self, inplanes, planes: int, stride=1, downsample=None, norm_layer=None, " ..
            "k=(1, 2), name='b', *, flag=True")
        local got
        function Block:init(inplanes, planes, stride, downsample, norm_layer, k, name, flag)
            got = { inplanes, planes, stride, downsample, norm_layer, k, name, flag }
        end
        Block(4, 8)
        assert.are.same({ 4, 8, 1, nil, nil, { 1, 2 }, "b", true }, got)
        -- Block(4, 8, 2, None, nn.BatchNorm2d): a class passed positionally is a value
        Block(4, 8, 2, nil, nn.BatchNorm2d)
        assert.are.equal(nn.BatchNorm2d, got[5])
        Block(4, { planes = 3, flag = false, norm_layer = nn.BatchNorm2d })
        assert.are.same({ 4, 3, 1, false }, { got[1], got[2], got[3], got[8] })
        assert.are.equal(nn.BatchNorm2d, got[5])
        assert.has_error(function() Block(4) end,
            "tide: SigBlock: missing its required argument planes (argument #2, or {planes =})")
        assert.has_error(function() Block(4, 8, { strides = 2 }) end)
        assert.has_error(function() Block(4, 8, 2, { stride = 2 }) end)
        -- a class default (norm_layer=nn.BatchNorm2d) is taken (spec/ported_scripts34_spec.lua);
        -- another non-literal raises
        assert.has_error(function() nn.signature(Block, "a, act=torch.relu") end,
            "tide: nn.signature: SigBlock: the default act=torch.relu is not a Python " ..
            "literal (None, True, False, a number, a string or a tuple of them) nor an nn.Module " ..
            "class (nn.X, or a Module:extend(\"torch.relu\") class defined before nn.signature); " ..
            "define it first, or write act=None and set it in init, as PyTorch's own " ..
            "`if norm_layer is None:` does")
        assert.has_error(function() nn.signature(Block, "a=1, b") end)
        -- (**kwargs is taken since ported_scripts42; *args is still refused)
        assert.has_error(function() nn.signature(Block, "a, *args") end)
    end)
end)
