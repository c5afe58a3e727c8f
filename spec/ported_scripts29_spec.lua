-- ported_scripts29_spec.lua — torchvision's classification models ported line for line at tiny
-- sizes: torchvision/models/densenet.py (_DenseLayer with bn_function, any_requires_grad and the
-- memory-efficient torch.utils.checkpoint path, _DenseBlock as an nn.ModuleDict, _Transition,
-- DenseNet's OrderedDict features and init loop), squeezenet.py (Fire, SqueezeNet 1_0 and 1_1),
-- vgg.py (VGG, make_layers with the cfgs dict, _initialize_weights), and torchvision/ops'
-- SqueezeExcitation and stochastic_depth as EfficientNet's MBConv uses them. Each forward is
-- checked against PyTorch 1.13 on the same deterministic weights (arange-based fills) to 1e-5,
-- then trained a few steps on random data. The Python line stands above each Lua line that
-- differs from it. densenet.py is the current torchvision one, written from knowledge (the
-- stored copies were older); squeezenet.py and vgg.py are from pytorch/vision.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local init = nn.init
local cp = tide.utils
local unpack = table.unpack or unpack -- luacheck: ignore

local function assert_finite(x)
    assert.is_true(x == x and x ~= math.huge and x ~= -math.huge, "not finite: " .. tostring(x))
end

local function max_abs_diff(a, b)
    return (a:double() - b:double()):abs():max():item()
end

-- deterministic weights, the same in the Python reference:
--   the state_dict entries but num_batches_tracked, sorted by their tide names (1-based digits),
--   the i-th (0-based) filled with sin(arange(numel) * 0.37 + i) * 0.3 (running_var: abs + 1)
local function fill_deterministic(model)
    local sd = model:state_dict()
    local names = {}
    for k in pairs(sd) do
        if not k:match("num_batches_tracked$") then names[#names + 1] = k end
    end
    table.sort(names)
    tide.no_grad(function()
        for i, n in ipairs(names) do
            local p = sd[n]
            local v = tide.sin(tide.arange(p:numel(), { dtype = tide.float64 }) * 0.37 + (i - 1)) * 0.3
            if n:match("running_var$") then v = v:abs() + 1 end
            p:copy_(v:view(p.shape))
        end
    end)
end

local function train_steps(model, x, y, steps)
    local optimizer = optim.SGD(model:parameters(), { lr = 0.01, momentum = 0.9 })
    local criterion = nn.CrossEntropyLoss()
    local losses = {}
    for _ = 1, steps do
        optimizer:zero_grad()
        local loss = criterion(model(x), y)
        loss:backward()
        optimizer:step()
        losses[#losses + 1] = loss:item()
    end
    for _, l in ipairs(losses) do assert_finite(l) end
    assert.is_true(losses[#losses] < losses[1], table.concat(losses, " "))
    return losses
end

---------------------------------------------------------------------------------------------
-- 1. torchvision/models/densenet.py
---------------------------------------------------------------------------------------------
describe("torchvision/models/densenet.py", function()
    -- class _DenseLayer(nn.Module):
    local _DenseLayer = nn.Module:extend("_DenseLayer")
    function _DenseLayer:init(num_input_features, growth_rate, bn_size, drop_rate, memory_efficient)
        -- memory_efficient: bool = False
        if memory_efficient == nil then memory_efficient = false end
        self.norm1 = nn.BatchNorm2d(num_input_features)
        self.relu1 = nn.ReLU({ inplace = true })
        self.conv1 = nn.Conv2d(num_input_features, bn_size * growth_rate, { kernel_size = 1, stride = 1, bias = false })
        self.norm2 = nn.BatchNorm2d(bn_size * growth_rate)
        self.relu2 = nn.ReLU({ inplace = true })
        self.conv2 = nn.Conv2d(bn_size * growth_rate, growth_rate, { kernel_size = 3, stride = 1, padding = 1, bias = false })
        -- self.drop_rate = float(drop_rate)
        self.drop_rate = drop_rate
        self.memory_efficient = memory_efficient
    end

    function _DenseLayer:bn_function(inputs)
        local concated_features = tide.cat(inputs, 2)
        local bottleneck_output = self.conv1(self.relu1(self.norm1(concated_features)))
        return bottleneck_output
    end

    function _DenseLayer:any_requires_grad(input)
        -- for tensor in input:
        for _, tensor in ipairs(input) do
            if tensor.requires_grad then
                return true
            end
        end
        return false
    end

    function _DenseLayer:call_checkpoint_bottleneck(input)
        -- def closure(*inputs):
        local function closure(...)
            -- return self.bn_function(inputs)
            return self:bn_function({ ... })
        end
        -- return cp.checkpoint(closure, *input, use_reentrant=False)
        local args = { unpack(input) }
        args[#args + 1] = { use_reentrant = false }
        return cp.checkpoint(closure, unpack(args, 1, #input + 1))
    end

    function _DenseLayer:forward(input)
        local prev_features
        -- if isinstance(input, Tensor):
        if tide.is_tensor(input) then
            prev_features = { input }
        else
            prev_features = input
        end
        local bottleneck_output
        if self.memory_efficient and self:any_requires_grad(prev_features) then
            bottleneck_output = self:call_checkpoint_bottleneck(prev_features)
        else
            bottleneck_output = self:bn_function(prev_features)
        end
        local new_features = self.conv2(self.relu2(self.norm2(bottleneck_output)))
        if self.drop_rate > 0 then
            new_features = F.dropout(new_features, { p = self.drop_rate, training = self.training })
        end
        return new_features
    end

    -- class _DenseBlock(nn.ModuleDict):
    local _DenseBlock = nn.ModuleDict:extend("_DenseBlock")
    function _DenseBlock:init(num_layers, num_input_features, bn_size, growth_rate, drop_rate, memory_efficient)
        -- super().__init__()
        nn.ModuleDict.init(self)
        -- for i in range(num_layers):
        for i = 0, num_layers - 1 do
            -- layer = _DenseLayer(num_input_features + i * growth_rate, growth_rate=growth_rate,
            --     bn_size=bn_size, drop_rate=drop_rate, memory_efficient=memory_efficient)
            local layer = _DenseLayer(num_input_features + i * growth_rate, growth_rate, bn_size, drop_rate,
                memory_efficient)
            -- self.add_module("denselayer%d" % (i + 1), layer)
            self:add_module(string.format("denselayer%d", i + 1), layer)
        end
    end

    function _DenseBlock:forward(init_features)
        local features = { init_features }
        -- for name, layer in self.items():
        for _, item in ipairs(self:items()) do
            local layer = item[2]
            local new_features = layer(features)
            -- features.append(new_features)
            features[#features + 1] = new_features
        end
        return tide.cat(features, 2)
    end

    -- class _Transition(nn.Sequential):
    local _Transition = nn.Sequential:extend("_Transition")
    function _Transition:init(num_input_features, num_output_features)
        nn.Sequential.init(self)
        self.norm = nn.BatchNorm2d(num_input_features)
        self.relu = nn.ReLU({ inplace = true })
        self.conv = nn.Conv2d(num_input_features, num_output_features, { kernel_size = 1, stride = 1, bias = false })
        self.pool = nn.AvgPool2d({ kernel_size = 2, stride = 2 })
    end

    -- class DenseNet(nn.Module):
    local DenseNet = nn.Module:extend("DenseNet")
    -- def __init__(self, growth_rate=32, block_config=(6, 12, 24, 16), num_init_features=64,
    --              bn_size=4, drop_rate=0, num_classes=1000, memory_efficient=False):
    function DenseNet:init(opts)
        local growth_rate = opts.growth_rate or 32
        local block_config = opts.block_config or { 6, 12, 24, 16 }
        local num_init_features = opts.num_init_features or 64
        local bn_size = opts.bn_size or 4
        local drop_rate = opts.drop_rate or 0
        local num_classes = opts.num_classes or 1000
        local memory_efficient = opts.memory_efficient or false

        -- First convolution
        -- self.features = nn.Sequential(OrderedDict([("conv0", ...), ("norm0", ...), ...]))
        self.features = nn.Sequential({
            { "conv0", nn.Conv2d(3, num_init_features, { kernel_size = 7, stride = 2, padding = 3, bias = false }) },
            { "norm0", nn.BatchNorm2d(num_init_features) },
            { "relu0", nn.ReLU({ inplace = true }) },
            { "pool0", nn.MaxPool2d({ kernel_size = 3, stride = 2, padding = 1 }) },
        })

        -- Each denseblock
        local num_features = num_init_features
        -- for i, num_layers in enumerate(block_config):
        for i0, num_layers in ipairs(block_config) do
            local i = i0 - 1
            local block = _DenseBlock(num_layers, num_features, bn_size, growth_rate, drop_rate, memory_efficient)
            self.features:add_module(string.format("denseblock%d", i + 1), block)
            num_features = num_features + num_layers * growth_rate
            if i ~= #block_config - 1 then
                -- trans = _Transition(num_input_features=num_features, num_output_features=num_features // 2)
                local trans = _Transition(num_features, math.floor(num_features / 2))
                self.features:add_module(string.format("transition%d", i + 1), trans)
                num_features = math.floor(num_features / 2)
            end
        end

        -- Final batch norm
        self.features:add_module("norm5", nn.BatchNorm2d(num_features))

        -- Linear layer
        self.classifier = nn.Linear(num_features, num_classes)

        -- Official init from torch repo.
        for _, m in ipairs(self:modules()) do
            if tide.isinstance(m, nn.Conv2d) then
                init.kaiming_normal_(m.weight)
            elseif tide.isinstance(m, nn.BatchNorm2d) then
                init.constant_(m.weight, 1)
                init.constant_(m.bias, 0)
            elseif tide.isinstance(m, nn.Linear) then
                init.constant_(m.bias, 0)
            end
        end
    end

    function DenseNet:forward(x)
        local features = self.features(x)
        local out = F.relu(features, { inplace = true })
        out = F.adaptive_avg_pool2d(out, { 1, 1 })
        out = tide.flatten(out, 2)
        out = self.classifier(out)
        return out
    end

    it("builds the named tree, matches PyTorch on fixed weights, trains", function()
        tide.manual_seed(0)
        local model = DenseNet({ growth_rate = 4, block_config = { 2, 2 }, num_init_features = 8, bn_size = 2,
            num_classes = 5 })
        local keys = model:state_dict()
        assert.is_not_nil(keys["features.denseblock1.denselayer2.conv2.weight"])
        assert.is_not_nil(keys["features.transition1.conv.weight"])
        assert.is_not_nil(keys["features.norm5.running_var"])
        assert.are.same({ 8, 3, 7, 7 }, keys["features.conv0.weight"].shape)
        fill_deterministic(model)
        model:eval()
        local x = tide.sin(tide.arange(2 * 3 * 16 * 16, { dtype = tide.float64 }) * 0.11):view(2, 3, 16, 16):float()
        local out = model(x)
        assert.are.same({ 2, 5 }, out.shape)
        -- PyTorch 1.13, the same class source and fill: -1.8220961093902588, out[0,0], out[1,4]
        assert.is_true(math.abs(out:sum():item() - (-1.8220961093902588)) < 1e-5)
        assert.is_true(math.abs(out[1][1]:item() - (-0.24713824689388275)) < 1e-5)
        assert.is_true(math.abs(out[2][5]:item() - (-0.06703895330429077)) < 1e-5)
        -- train: a few SGD steps on random images
        model:train()
        local xb, yb = tide.randn(4, 3, 16, 16), tide.tensor({ 1, 2, 3, 4 })
        train_steps(model, xb, yb, 4)
    end)

    it("memory_efficient=True: the checkpointed bottleneck gives the same output and grads", function()
        tide.manual_seed(0)
        local a = DenseNet({ growth_rate = 4, block_config = { 2, 1 }, num_init_features = 8, bn_size = 2,
            num_classes = 3 })
        local b = DenseNet({ growth_rate = 4, block_config = { 2, 1 }, num_init_features = 8, bn_size = 2,
            num_classes = 3, memory_efficient = true })
        fill_deterministic(a)
        fill_deterministic(b)
        local x = tide.randn(2, 3, 16, 16)
        local la = a(x):pow(2):sum()
        local lb = b(x):pow(2):sum()
        assert.is_true(math.abs(la:item() - lb:item()) < 1e-4)
        la:backward()
        lb:backward()
        local ga = a.features.denseblock1.denselayer2.conv1.weight.grad
        local gb = b.features.denseblock1.denselayer2.conv1.weight.grad
        assert.is_true(max_abs_diff(ga, gb) < 1e-4)
        -- any_requires_grad: the first dense layer's input (the stem's output) requires grad
        local layer = b.features.denseblock1.denselayer1
        assert.is_true(layer:any_requires_grad({ tide.zeros(1), tide.zeros(1):requires_grad_() }))
        assert.is_false(layer:any_requires_grad({ tide.zeros(1) }))
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. torchvision/models/squeezenet.py
---------------------------------------------------------------------------------------------
describe("torchvision/models/squeezenet.py", function()
    -- class Fire(nn.Module):
    local Fire = nn.Module:extend("Fire")
    function Fire:init(inplanes, squeeze_planes, expand1x1_planes, expand3x3_planes)
        self.inplanes = inplanes
        self.squeeze = nn.Conv2d(inplanes, squeeze_planes, { kernel_size = 1 })
        self.squeeze_activation = nn.ReLU({ inplace = true })
        self.expand1x1 = nn.Conv2d(squeeze_planes, expand1x1_planes, { kernel_size = 1 })
        self.expand1x1_activation = nn.ReLU({ inplace = true })
        self.expand3x3 = nn.Conv2d(squeeze_planes, expand3x3_planes, { kernel_size = 3, padding = 1 })
        self.expand3x3_activation = nn.ReLU({ inplace = true })
    end

    function Fire:forward(x)
        x = self.squeeze_activation(self.squeeze(x))
        -- return torch.cat([self.expand1x1_activation(self.expand1x1(x)), self.expand3x3_activation(self.expand3x3(x))], 1)
        return tide.cat(
            { self.expand1x1_activation(self.expand1x1(x)), self.expand3x3_activation(self.expand3x3(x)) }, 2
        )
    end

    -- class SqueezeNet(nn.Module): (channels divided by 8: 96 -> 12, Fire(96, 16, 64, 64) -> Fire(12, 2, 8, 8))
    local SqueezeNet = nn.Module:extend("SqueezeNet")
    -- def __init__(self, version: str = "1_0", num_classes: int = 1000, dropout: float = 0.5)
    function SqueezeNet:init(version, num_classes, dropout)
        version, num_classes, dropout = version or "1_0", num_classes or 1000, dropout or 0.5
        self.num_classes = num_classes
        if version == "1_0" then
            self.features = nn.Sequential(
                nn.Conv2d(3, 12, { kernel_size = 7, stride = 2 }),
                nn.ReLU({ inplace = true }),
                nn.MaxPool2d({ kernel_size = 3, stride = 2, ceil_mode = true }),
                Fire(12, 2, 8, 8),
                Fire(16, 2, 8, 8),
                Fire(16, 4, 16, 16),
                nn.MaxPool2d({ kernel_size = 3, stride = 2, ceil_mode = true }),
                Fire(32, 4, 16, 16),
                Fire(32, 6, 24, 24),
                Fire(48, 6, 24, 24),
                Fire(48, 8, 32, 32),
                nn.MaxPool2d({ kernel_size = 3, stride = 2, ceil_mode = true }),
                Fire(64, 8, 32, 32)
            )
        elseif version == "1_1" then
            self.features = nn.Sequential(
                nn.Conv2d(3, 8, { kernel_size = 3, stride = 2 }),
                nn.ReLU({ inplace = true }),
                nn.MaxPool2d({ kernel_size = 3, stride = 2, ceil_mode = true }),
                Fire(8, 2, 8, 8),
                Fire(16, 2, 8, 8),
                nn.MaxPool2d({ kernel_size = 3, stride = 2, ceil_mode = true }),
                Fire(16, 4, 16, 16),
                Fire(32, 4, 16, 16),
                nn.MaxPool2d({ kernel_size = 3, stride = 2, ceil_mode = true }),
                Fire(32, 6, 24, 24),
                Fire(48, 6, 24, 24),
                Fire(48, 8, 32, 32),
                Fire(64, 8, 32, 32)
            )
        else
            -- raise ValueError(f"Unsupported SqueezeNet version {version}: 1_0 or 1_1 expected")
            error(string.format("Unsupported SqueezeNet version %s: 1_0 or 1_1 expected", version))
        end

        -- Final convolution is initialized differently from the rest
        local final_conv = nn.Conv2d(64, self.num_classes, { kernel_size = 1 })
        self.classifier = nn.Sequential(
            nn.Dropout({ p = dropout }), final_conv, nn.ReLU({ inplace = true }), nn.AdaptiveAvgPool2d({ 1, 1 })
        )

        for _, m in ipairs(self:modules()) do
            if tide.isinstance(m, nn.Conv2d) then
                -- if m is final_conv:
                if rawequal(m, final_conv) then
                    init.normal_(m.weight, { mean = 0.0, std = 0.01 })
                else
                    init.kaiming_uniform_(m.weight)
                end
                if m.bias ~= nil then
                    init.constant_(m.bias, 0)
                end
            end
        end
    end

    function SqueezeNet:forward(x)
        x = self.features(x)
        x = self.classifier(x)
        return tide.flatten(x, 2)
    end

    it("1_0 and 1_1: init, forward against PyTorch, training", function()
        tide.manual_seed(0)
        -- PyTorch 1.13 on the same source and fill: out.sum(), out[0,0], out[1,5]
        local want = { ["1_0"] = { 5.509077548980713, 0.0, 0.9653233289718628 },
            ["1_1"] = { 3.7130942344665527, 0.0, 0.7497881650924683 } }
        for _, case in ipairs({ { "1_0" }, { "1_1" } }) do
            local model = SqueezeNet(case[1], 6)
            -- the init loop: final_conv normal(0, 0.01), biases 0
            assert.is_true(model.classifier[2].weight:std():item() < 0.05)
            assert.are.equal(0, model.features[1].bias:abs():sum():item())
            fill_deterministic(model)
            model:eval()
            local out = model(tide.sin(tide.arange(2 * 3 * 32 * 32, { dtype = tide.float64 }) * 0.11)
                :view(2, 3, 32, 32):float())
            assert.are.same({ 2, 6 }, out.shape)
            local w = want[case[1]]
            assert.is_true(math.abs(out:sum():item() - w[1]) < 1e-5)
            assert.is_true(math.abs(out[1][1]:item() - w[2]) < 1e-5)
            assert.is_true(math.abs(out[2][6]:item() - w[3]) < 1e-5)
            model:train()
            train_steps(model, tide.randn(4, 3, 32, 32), tide.tensor({ 1, 2, 3, 4 }), 4)
        end
        assert.has_error(function() SqueezeNet("1_2") end, "Unsupported SqueezeNet version 1_2: 1_0 or 1_1 expected")
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. torchvision/models/vgg.py
---------------------------------------------------------------------------------------------
describe("torchvision/models/vgg.py", function()
    -- class VGG(nn.Module): (classifier 512 * 7 * 7 -> 4096 shrunk to 16 * 7 * 7 -> 32)
    local VGG = nn.Module:extend("VGG")
    -- def __init__(self, features: nn.Module, num_classes: int = 1000, init_weights: bool = True, dropout: float = 0.5)
    function VGG:init(features, num_classes, init_weights, dropout)
        num_classes = num_classes or 1000
        if init_weights == nil then init_weights = true end
        dropout = dropout or 0.5
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d({ 7, 7 })
        self.classifier = nn.Sequential(
            nn.Linear(16 * 7 * 7, 32),
            nn.ReLU(true),
            nn.Dropout({ p = dropout }),
            nn.Linear(32, 32),
            nn.ReLU(true),
            nn.Dropout({ p = dropout }),
            nn.Linear(32, num_classes)
        )
        if init_weights then
            for _, m in ipairs(self:modules()) do
                if tide.isinstance(m, nn.Conv2d) then
                    -- nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                    init.kaiming_normal_(m.weight, { mode = "fan_out", nonlinearity = "relu" })
                    if m.bias ~= nil then
                        init.constant_(m.bias, 0)
                    end
                elseif tide.isinstance(m, nn.BatchNorm2d) then
                    init.constant_(m.weight, 1)
                    init.constant_(m.bias, 0)
                elseif tide.isinstance(m, nn.Linear) then
                    init.normal_(m.weight, 0, 0.01)
                    init.constant_(m.bias, 0)
                end
            end
        end
    end

    function VGG:forward(x)
        x = self.features(x)
        x = self.avgpool(x)
        x = tide.flatten(x, 2)
        x = self.classifier(x)
        return x
    end

    -- def make_layers(cfg: List[Union[str, int]], batch_norm: bool = False) -> nn.Sequential:
    local function make_layers(cfg, batch_norm)
        local layers = {}
        local in_channels = 3
        for _, v in ipairs(cfg) do
            if v == "M" then
                -- layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
                layers[#layers + 1] = nn.MaxPool2d({ kernel_size = 2, stride = 2 })
            else
                -- v = cast(int, v)
                local conv2d = nn.Conv2d(in_channels, v, { kernel_size = 3, padding = 1 })
                if batch_norm then
                    -- layers += [conv2d, nn.BatchNorm2d(v), nn.ReLU(inplace=True)]
                    for _, l in ipairs({ conv2d, nn.BatchNorm2d(v), nn.ReLU({ inplace = true }) }) do
                        layers[#layers + 1] = l
                    end
                else
                    -- layers += [conv2d, nn.ReLU(inplace=True)]
                    for _, l in ipairs({ conv2d, nn.ReLU({ inplace = true }) }) do
                        layers[#layers + 1] = l
                    end
                end
                in_channels = v
            end
        end
        -- return nn.Sequential(*layers)
        return nn.Sequential(unpack(layers))
    end

    -- cfgs: Dict[str, List[Union[str, int]]] = {"A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"], ...}
    -- (channels divided by 32, and a tiny custom list)
    local cfgs = {
        A = { 2, "M", 4, "M", 8, 8, "M", 16, 16, "M", 16, 16, "M" },
        tiny = { 4, "M", 16 },
    }

    it("make_layers(cfgs['A'], batch_norm) and a tiny cfg: init, forward against PyTorch, training", function()
        tide.manual_seed(0)
        local a = VGG(make_layers(cfgs["A"], false), 5)
        assert.are.equal(21, #a.features)
        assert.are.equal(29, #make_layers(cfgs["A"], true))
        -- the init loop: Linear weights normal(0, 0.01), biases 0
        assert.is_true(a.classifier[1].weight:std():item() < 0.02)
        assert.are.equal(0, a.classifier[1].bias:abs():sum():item())
        -- PyTorch 1.13 on the same source and fill, the model then .double(), the input float64:
        -- out.sum(), out[0,0], out[1,4]
        local want = { A = { -3.6354781260654256, 0.37157018505907347, 0.043682856185270846 },
            tiny = { -0.77024726870464943, -0.64793057344868421, 0.28602800895312785 } }
        for _, case in ipairs({ { "A", false }, { "tiny", true } }) do
            local model = VGG(make_layers(cfgs[case[1]], case[2]), 5)
            fill_deterministic(model)
            model:eval()
            -- in float64: in float32, A's hidden units (up to 46) cancel to outputs of 0.4, and
            -- rounding moves out.sum() by 1e-5 (PyTorch's own float32 sums differ by CPU)
            model:double()
            local out = model(tide.sin(tide.arange(2 * 3 * 32 * 32, { dtype = tide.float64 }) * 0.11)
                :view(2, 3, 32, 32))
            assert.are.same({ 2, 5 }, out.shape)
            local w = want[case[1]]
            assert.is_true(math.abs(out:sum():item() - w[1]) < 1e-10)
            assert.is_true(math.abs(out[1][1]:item() - w[2]) < 1e-10)
            assert.is_true(math.abs(out[2][5]:item() - w[3]) < 1e-10)
            model:train()
            tide.manual_seed(1)
            local m2 = VGG(make_layers(cfgs[case[1]], case[2]), 5, true, 0.0)
            train_steps(m2, tide.randn(4, 3, 32, 32), tide.tensor({ 1, 2, 3, 4 }), 5)
        end
    end)
end)

---------------------------------------------------------------------------------------------
-- 4. torchvision/ops/misc.py SqueezeExcitation, ops/stochastic_depth.py, as in EfficientNet's MBConv
---------------------------------------------------------------------------------------------
describe("torchvision/ops SqueezeExcitation and stochastic_depth", function()
    -- def stochastic_depth(input: Tensor, p: float, mode: str, training: bool = True) -> Tensor:
    local function stochastic_depth(input, p, mode, training)
        if training == nil then training = true end
        if p < 0.0 or p > 1.0 then
            error(string.format("drop probability has to be between 0 and 1, but got %s", tostring(p)))
        end
        if mode ~= "batch" and mode ~= "row" then
            error(string.format("mode has to be either 'batch' or 'row', but got %s", tostring(mode)))
        end
        if not training or p == 0.0 then
            return input
        end
        local survival_rate = 1.0 - p
        local size
        if mode == "row" then
            -- size = [input.shape[0]] + [1] * (input.ndim - 1)
            size = { input.shape[1] }
            for _ = 1, input.ndim - 1 do size[#size + 1] = 1 end
        else
            -- size = [1] * input.ndim
            size = {}
            for _ = 1, input.ndim do size[#size + 1] = 1 end
        end
        -- noise = torch.empty(size, dtype=input.dtype, device=input.device)
        local noise = tide.empty(size, { dtype = input.dtype, device = input.device })
        noise = noise:bernoulli_(survival_rate)
        if survival_rate > 0.0 then
            noise:div_(survival_rate)
        end
        return input * noise
    end

    -- class StochasticDepth(nn.Module):
    local StochasticDepth = nn.Module:extend("StochasticDepth")
    function StochasticDepth:init(p, mode)
        self.p = p
        self.mode = mode
    end
    function StochasticDepth:forward(input)
        return stochastic_depth(input, self.p, self.mode, self.training)
    end

    -- class SqueezeExcitation(torch.nn.Module):
    local SqueezeExcitation = nn.Module:extend("SqueezeExcitation")
    -- def __init__(self, input_channels, squeeze_channels, activation=torch.nn.ReLU, scale_activation=torch.nn.Sigmoid)
    function SqueezeExcitation:init(input_channels, squeeze_channels, activation, scale_activation)
        activation, scale_activation = activation or nn.ReLU, scale_activation or nn.Sigmoid
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = activation()
        self.scale_activation = scale_activation()
    end
    function SqueezeExcitation:_scale(input)
        local scale = self.avgpool(input)
        scale = self.fc1(scale)
        scale = self.activation(scale)
        scale = self.fc2(scale)
        return self.scale_activation(scale)
    end
    function SqueezeExcitation:forward(input)
        local scale = self:_scale(input)
        return scale * input
    end

    -- MBConv (efficientnet.py), its layers inlined: expand 1x1, depthwise 3x3, SE, project 1x1
    local MBConv = nn.Module:extend("MBConv")
    function MBConv:init(cnf_in, expand_ratio, stochastic_depth_prob)
        local expanded_channels = cnf_in * expand_ratio
        local squeeze_channels = math.max(1, math.floor(cnf_in / 4))
        local layers = {}
        -- Conv2dNormActivation(..., kernel_size=1, norm_layer=norm_layer, activation_layer=nn.SiLU)
        layers[#layers + 1] = nn.Sequential(nn.Conv2d(cnf_in, expanded_channels, 1, { bias = false }),
            nn.BatchNorm2d(expanded_channels), nn.SiLU({ inplace = true }))
        layers[#layers + 1] = nn.Sequential(nn.Conv2d(expanded_channels, expanded_channels, 3,
            { padding = 1, groups = expanded_channels, bias = false }), nn.BatchNorm2d(expanded_channels),
            nn.SiLU({ inplace = true }))
        -- layers.append(se_layer(expanded_channels, squeeze_channels, activation=partial(nn.SiLU, inplace=True)))
        layers[#layers + 1] = SqueezeExcitation(expanded_channels, squeeze_channels,
            function() return nn.SiLU({ inplace = true }) end)
        layers[#layers + 1] = nn.Sequential(nn.Conv2d(expanded_channels, cnf_in, 1, { bias = false }),
            nn.BatchNorm2d(cnf_in))
        -- self.block = nn.Sequential(*layers)
        self.block = nn.Sequential(unpack(layers))
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
    end
    function MBConv:forward(input)
        local result = self.block(input)
        -- if self.use_res_connect: result = self.stochastic_depth(result); result += input
        result = self.stochastic_depth(result)
        result = result + input
        return result
    end

    it("stochastic_depth: row and batch noise, scaling, eval and p=0 identity, bad p and mode", function()
        tide.manual_seed(0)
        local x = tide.ones(64, 3, 2, 2)
        local y = stochastic_depth(x, 0.5, "row")
        -- each row is all 0 or all 2 (1 / survival_rate)
        local per_row = y:view(64, -1)
        assert.is_true(tide.equal(per_row:amax({ dim = 2 }), per_row:amin({ dim = 2 })))
        local kept = per_row[{ {}, 1 }]:gt(0):sum():item()
        assert.is_true(kept > 10 and kept < 54)
        assert.is_true(per_row:max():item() == 2)
        local yb = stochastic_depth(x, 0.5, "batch")
        assert.are.equal(1, tide.unique(yb):numel())
        assert.are.equal(x, stochastic_depth(x, 0.5, "row", false))
        assert.are.equal(x, stochastic_depth(x, 0.0, "row"))
        assert.are.equal(0, stochastic_depth(x, 1.0, "row"):abs():sum():item())
        assert.has_error(function() stochastic_depth(x, 1.5, "row") end,
            "drop probability has to be between 0 and 1, but got 1.5")
        assert.has_error(function() stochastic_depth(x, 0.5, "col") end,
            "mode has to be either 'batch' or 'row', but got col")
    end)

    it("SqueezeExcitation against PyTorch; MBConv trains", function()
        local se = SqueezeExcitation(4, 2)
        fill_deterministic(se)
        local x = tide.sin(tide.arange(2 * 4 * 5 * 5, { dtype = tide.float64 }) * 0.11):view(2, 4, 5, 5):float()
        local out = se(x)
        -- PyTorch 1.13 on the same source and fill: out.sum(), out[0,0,0,0], out[1,3,4,4]
        assert.is_true(math.abs(out:sum():item() - 9.602252960205078) < 1e-5)
        assert.is_true(math.abs(out[1][1][1][1]:item() - 0.0) < 1e-5)
        assert.is_true(math.abs(out[2][4][5][5]:item() - 0.05001339316368103) < 1e-5)
        tide.manual_seed(0)
        local model = nn.Sequential(MBConv(4, 4, 0.2), MBConv(4, 2, 0.2), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
            nn.Linear(4, 3))
        train_steps(model, tide.randn(6, 4, 8, 8), tide.tensor({ 1, 2, 3, 1, 2, 3 }), 5)
        model:eval()
        local a = model(tide.ones(1, 4, 8, 8))
        assert.is_true(tide.equal(a, model(tide.ones(1, 4, 8, 8))))
    end)
end)
