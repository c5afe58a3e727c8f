-- ported_scripts132_spec.lua — pytorch/vision 0.14's DeepLabV3:
-- torchvision/models/segmentation/deeplabv3.py (DeepLabV3, DeepLabHead, ASPPConv with dilation,
-- ASPPPooling with AdaptiveAvgPool2d and a bilinear F.interpolate back, ASPP with its project
-- Sequential and Dropout, _deeplabv3_resnet's wiring), segmentation/_utils.py
-- (_SimpleSegmentationModel's forward: interpolate to the input size, the aux branch),
-- segmentation/fcn.py's FCNHead and torchvision/models/_utils.py's IntermediateLayerGetter
-- (the named children up to the last returned layer, the return_layers mapping), ported line
-- for line at tiny sizes: a backbone of two Conv2d+BN+ReLU stages (layer3 -> "aux", a dilated
-- layer4 -> "out", an fc the getter drops) stands in for the ResNet; in_channels 8,
-- num_classes 3, atrous_rates {2, 3}, ASPP width 16 (torchvision's 256), input 2 x 3 x 16 x 16.
-- Values are checked against PyTorch 1.13 on weights from a fixed formula (eval mode), then
-- 2 SGD steps of references/segmentation/train.py (its param groups with the aux head at
-- lr * 10, its criterion: cross_entropy with ignore_index 255, aux weighted 0.5) on fixed
-- targets. The Python line stands above each Lua line that differs from it. Dims and class
-- labels are 1-based; the ignore label 255 stays 255 (labels 1..3 never reach it).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

---------------------------------------------------------------------------------------------
-- torchvision/models/_utils.py
---------------------------------------------------------------------------------------------
-- class IntermediateLayerGetter(nn.ModuleDict):
local IntermediateLayerGetter = nn.ModuleDict:extend("IntermediateLayerGetter")
-- def __init__(self, model: nn.Module, return_layers: Dict[str, str]) -> None:
function IntermediateLayerGetter:init(model, return_layers)
    -- if not set(return_layers).issubset([name for name, _ in model.named_children()]):
    local children = {}
    for _, nc in ipairs(model:named_children()) do children[nc[1]] = true end
    for name in pairs(return_layers) do
        if not children[name] then
            -- raise ValueError("return_layers are not present in model")
            error("return_layers are not present in model")
        end
    end
    local orig_return_layers = return_layers
    -- return_layers = {str(k): str(v) for k, v in return_layers.items()}
    local remaining = {}
    for k, v in pairs(return_layers) do remaining[tostring(k)] = tostring(v) end
    -- layers = OrderedDict()
    local layers = {}
    -- for name, module in model.named_children():
    for _, nc in ipairs(model:named_children()) do
        local name, module = nc[1], nc[2]
        -- layers[name] = module
        layers[#layers + 1] = { name, module }
        -- if name in return_layers:
        if remaining[name] then
            -- del return_layers[name]
            remaining[name] = nil
        end
        -- if not return_layers:
        if next(remaining) == nil then
            break
        end
    end
    -- super().__init__(layers)
    nn.ModuleDict.init(self, layers)
    self.return_layers = orig_return_layers
end

function IntermediateLayerGetter:forward(x)
    -- out = OrderedDict()  (a Lua table: read by key, its order is not kept)
    local out = {}
    -- for name, module in self.items():
    for _, item in ipairs(self:items()) do
        local name, module = item[1], item[2]
        x = module(x)
        -- if name in self.return_layers:
        if self.return_layers[name] then
            local out_name = self.return_layers[name]
            out[out_name] = x
        end
    end
    return out
end

---------------------------------------------------------------------------------------------
-- torchvision/models/segmentation/_utils.py
---------------------------------------------------------------------------------------------
-- class _SimpleSegmentationModel(nn.Module):
local _SimpleSegmentationModel = nn.Module:extend("_SimpleSegmentationModel")
-- def __init__(self, backbone, classifier, aux_classifier=None):
function _SimpleSegmentationModel:init(backbone, classifier, aux_classifier)
    self.backbone = backbone
    self.classifier = classifier
    self.aux_classifier = aux_classifier
end

function _SimpleSegmentationModel:forward(x)
    -- input_shape = x.shape[-2:]
    local input_shape = x:size()[{ { -2, -1 } }]
    -- contract: features is a dict of tensors
    local features = self.backbone(x)

    -- result = OrderedDict()
    local result = {}
    -- x = features["out"]
    x = features.out
    x = self.classifier(x)
    -- x = F.interpolate(x, size=input_shape, mode="bilinear", align_corners=False)
    x = F.interpolate(x, { size = input_shape, mode = "bilinear", align_corners = false })
    -- result["out"] = x
    result.out = x

    -- if self.aux_classifier is not None:
    if self.aux_classifier ~= nil then
        -- x = features["aux"]
        x = features.aux
        x = self.aux_classifier(x)
        -- x = F.interpolate(x, size=input_shape, mode="bilinear", align_corners=False)
        x = F.interpolate(x, { size = input_shape, mode = "bilinear", align_corners = false })
        -- result["aux"] = x
        result.aux = x
    end

    return result
end

---------------------------------------------------------------------------------------------
-- torchvision/models/segmentation/fcn.py
---------------------------------------------------------------------------------------------
-- class FCNHead(nn.Sequential):
local FCNHead = nn.Sequential:extend("FCNHead")
-- def __init__(self, in_channels: int, channels: int) -> None:
function FCNHead:init(in_channels, channels)
    -- inter_channels = in_channels // 4
    local inter_channels = math.floor(in_channels / 4)
    local layers = {
        -- nn.Conv2d(in_channels, inter_channels, 3, padding=1, bias=False),
        nn.Conv2d(in_channels, inter_channels, 3, { padding = 1, bias = false }),
        nn.BatchNorm2d(inter_channels),
        nn.ReLU(),
        nn.Dropout(0.1),
        nn.Conv2d(inter_channels, channels, 1),
    }
    -- super().__init__(*layers)
    nn.Sequential.init(self, unpack(layers))
end

---------------------------------------------------------------------------------------------
-- torchvision/models/segmentation/deeplabv3.py
---------------------------------------------------------------------------------------------
-- class DeepLabV3(_SimpleSegmentationModel):
local DeepLabV3 = _SimpleSegmentationModel:extend("DeepLabV3")

-- tiny: torchvision hard-codes 256 channels in DeepLabHead and ASPP's default
local WIDTH = 16
local ATROUS_RATES = { 2, 3 } -- torchvision's [12, 24, 36]

local ASPP -- the class below (Python looks it up when DeepLabHead runs)

-- class DeepLabHead(nn.Sequential):
local DeepLabHead = nn.Sequential:extend("DeepLabHead")
-- def __init__(self, in_channels: int, num_classes: int) -> None:
function DeepLabHead:init(in_channels, num_classes)
    -- super().__init__(
    nn.Sequential.init(self,
        -- ASPP(in_channels, [12, 24, 36]),
        ASPP(in_channels, ATROUS_RATES, WIDTH),
        -- nn.Conv2d(256, 256, 3, padding=1, bias=False),
        nn.Conv2d(WIDTH, WIDTH, 3, { padding = 1, bias = false }),
        -- nn.BatchNorm2d(256),
        nn.BatchNorm2d(WIDTH),
        nn.ReLU(),
        -- nn.Conv2d(256, num_classes, 1),
        nn.Conv2d(WIDTH, num_classes, 1)
    )
end

-- class ASPPConv(nn.Sequential):
local ASPPConv = nn.Sequential:extend("ASPPConv")
-- def __init__(self, in_channels: int, out_channels: int, dilation: int) -> None:
function ASPPConv:init(in_channels, out_channels, dilation)
    local modules = {
        -- nn.Conv2d(in_channels, out_channels, 3, padding=dilation, dilation=dilation, bias=False),
        nn.Conv2d(in_channels, out_channels, 3,
            { padding = dilation, dilation = dilation, bias = false }),
        nn.BatchNorm2d(out_channels),
        nn.ReLU(),
    }
    -- super().__init__(*modules)
    nn.Sequential.init(self, unpack(modules))
end

-- class ASPPPooling(nn.Sequential):
local ASPPPooling = nn.Sequential:extend("ASPPPooling")
-- def __init__(self, in_channels: int, out_channels: int) -> None:
function ASPPPooling:init(in_channels, out_channels)
    -- super().__init__(
    nn.Sequential.init(self,
        nn.AdaptiveAvgPool2d(1),
        -- nn.Conv2d(in_channels, out_channels, 1, bias=False),
        nn.Conv2d(in_channels, out_channels, 1, { bias = false }),
        nn.BatchNorm2d(out_channels),
        nn.ReLU()
    )
end

function ASPPPooling:forward(x)
    -- size = x.shape[-2:]
    local size = x:size()[{ { -2, -1 } }]
    -- for mod in self:
    for _, mod in ipairs(self) do
        x = mod(x)
    end
    -- return F.interpolate(x, size=size, mode="bilinear", align_corners=False)
    return F.interpolate(x, { size = size, mode = "bilinear", align_corners = false })
end

-- class ASPP(nn.Module):
ASPP = nn.Module:extend("ASPP")
-- def __init__(self, in_channels: int, atrous_rates: List[int], out_channels: int = 256) -> None:
function ASPP:init(in_channels, atrous_rates, out_channels)
    out_channels = out_channels or 256
    local modules = {}
    -- modules.append(
    --     nn.Sequential(nn.Conv2d(in_channels, out_channels, 1, bias=False),
    --                   nn.BatchNorm2d(out_channels), nn.ReLU())
    -- )
    modules[#modules + 1] = nn.Sequential(nn.Conv2d(in_channels, out_channels, 1,
        { bias = false }), nn.BatchNorm2d(out_channels), nn.ReLU())

    -- rates = tuple(atrous_rates)
    local rates = { unpack(atrous_rates) }
    -- for rate in rates:
    for _, rate in ipairs(rates) do
        -- modules.append(ASPPConv(in_channels, out_channels, rate))
        modules[#modules + 1] = ASPPConv(in_channels, out_channels, rate)
    end

    -- modules.append(ASPPPooling(in_channels, out_channels))
    modules[#modules + 1] = ASPPPooling(in_channels, out_channels)

    self.convs = nn.ModuleList(modules)

    self.project = nn.Sequential(
        -- nn.Conv2d(len(self.convs) * out_channels, out_channels, 1, bias=False),
        nn.Conv2d(#self.convs * out_channels, out_channels, 1, { bias = false }),
        nn.BatchNorm2d(out_channels),
        nn.ReLU(),
        nn.Dropout(0.5)
    )
end

function ASPP:forward(x)
    local _res = {}
    -- for conv in self.convs:
    for _, conv in ipairs(self.convs) do
        -- _res.append(conv(x))
        _res[#_res + 1] = conv(x)
    end
    -- res = torch.cat(_res, dim=1)
    local res = tide.cat(_res, 2)
    return self.project(res)
end

-- the stand-in for resnet50(replace_stride_with_dilation=[False, True, True]): its layer3
-- (stride 2) and a dilated layer4, then an fc that IntermediateLayerGetter leaves out
local Backbone = nn.Module:extend("Backbone")
function Backbone:init()
    self.layer3 = nn.Sequential(nn.Conv2d(3, 8, 3, { stride = 2, padding = 1, bias = false }),
        nn.BatchNorm2d(8), nn.ReLU())
    self.layer4 = nn.Sequential(nn.Conv2d(8, 8, 3, { padding = 2, dilation = 2, bias = false }),
        nn.BatchNorm2d(8), nn.ReLU())
    self.fc = nn.Linear(8, 3)
end

-- def _deeplabv3_resnet(backbone: ResNet, num_classes: int, aux: Optional[bool]) -> DeepLabV3:
local function _deeplabv3_resnet(backbone, num_classes, aux)
    -- return_layers = {"layer4": "out"}
    local return_layers = { layer4 = "out" }
    if aux then
        -- return_layers["layer3"] = "aux"
        return_layers.layer3 = "aux"
    end
    -- backbone = IntermediateLayerGetter(backbone, return_layers=return_layers)
    backbone = IntermediateLayerGetter(backbone, return_layers)

    -- aux_classifier = FCNHead(1024, num_classes) if aux else None
    local aux_classifier = aux and FCNHead(8, num_classes) or nil
    -- classifier = DeepLabHead(2048, num_classes)
    local classifier = DeepLabHead(8, num_classes)
    return DeepLabV3(backbone, classifier, aux_classifier)
end

---------------------------------------------------------------------------------------------
-- references/segmentation/train.py
---------------------------------------------------------------------------------------------
-- def criterion(inputs, target):
local function criterion(inputs, target)
    local losses = {}
    local n = 0
    -- for name, x in inputs.items():
    for name, x in pairs(inputs) do
        -- losses[name] = nn.functional.cross_entropy(x, target, ignore_index=255)
        losses[name] = F.cross_entropy(x, target, { ignore_index = 255 })
        n = n + 1
    end
    -- if len(losses) == 1:
    if n == 1 then
        -- return losses["out"]
        return losses.out
    end
    -- return losses["out"] + 0.5 * losses["aux"]
    return losses.out + 0.5 * losses.aux
end

---------------------------------------------------------------------------------------------
-- the checks
---------------------------------------------------------------------------------------------
-- every parameter, in named_parameters order (k = 0, 1, ...), set from a fixed formula:
-- p.copy_((0.3 * torch.sin(0.731 * torch.arange(p.numel()) + 1.37 * k)).view(p.shape))
local function fill_from_formula(model)
    tide.no_grad(function()
        for k, np in ipairs(model:named_parameters()) do
            local p = np[2]
            local v = (tide.arange(p:numel()):float() * 0.731 + 1.37 * (k - 1)):sin() * 0.3
            p:copy_(v:view(p.shape))
        end
    end)
end

-- a tensor's sum, sum of |.| and first four entries
local function summary(t)
    local f = t:flatten():tolist()
    return { t:sum():item(), t:abs():sum():item(), f[1], f[2], f[3], f[4] }
end

-- x = torch.sin(0.37 * torch.arange(2 * 3 * 16 * 16) + 0.5).view(2, 3, 16, 16)
local function image()
    return (tide.arange(2 * 3 * 16 * 16):float() * 0.37 + 0.5):sin():view(2, 3, 16, 16)
end

-- lab = (torch.arange(2 * 16 * 16) * 7 % 3).view(2, 16, 16); lab[:, :2, :] = 255
-- (plus one: 1-based classes; 255 stays the ignore label)
local function labels()
    local lab = ((tide.arange(2 * 16 * 16) * 7) % 3 + 1):view(2, 16, 16)
    lab[{ {}, { 1, 2 }, {} }] = 255
    return lab
end

local function make_model()
    local model = _deeplabv3_resnet(Backbone(), 3, true)
    fill_from_formula(model)
    return model
end

describe("pytorch/vision DeepLabV3 (ASPP head, FCN aux head, IntermediateLayerGetter)", function()
    it("IntermediateLayerGetter keeps the children up to the last returned layer", function()
        local model = make_model()
        assert.are.same({ "layer3", "layer4" }, model.backbone:keys())
        assert.is_nil(model.backbone.fc)
        -- PyTorch's names, 0-based list keys shifted to tide's 1-based ones
        local want = { "backbone.layer3.0.weight", "backbone.layer3.1.weight",
            "backbone.layer3.1.bias", "backbone.layer4.0.weight", "backbone.layer4.1.weight",
            "backbone.layer4.1.bias", "classifier.0.convs.0.0.weight",
            "classifier.0.convs.0.1.weight", "classifier.0.convs.0.1.bias",
            "classifier.0.convs.1.0.weight", "classifier.0.convs.1.1.weight",
            "classifier.0.convs.1.1.bias", "classifier.0.convs.2.0.weight",
            "classifier.0.convs.2.1.weight", "classifier.0.convs.2.1.bias",
            "classifier.0.convs.3.1.weight", "classifier.0.convs.3.2.weight",
            "classifier.0.convs.3.2.bias", "classifier.0.project.0.weight",
            "classifier.0.project.1.weight", "classifier.0.project.1.bias",
            "classifier.1.weight", "classifier.2.weight", "classifier.2.bias",
            "classifier.4.weight", "classifier.4.bias", "aux_classifier.0.weight",
            "aux_classifier.1.weight", "aux_classifier.1.bias", "aux_classifier.4.weight",
            "aux_classifier.4.bias" }
        local names = {}
        for i, np in ipairs(model:named_parameters()) do names[i] = np[1] end
        for i, n in ipairs(want) do
            want[i] = n:gsub("%.(%d+)", function(d) return "." .. (tonumber(d) + 1) end)
        end
        assert.are.same(want, names)
        assert.are.same({ 16, 8, 3, 3 }, model.classifier[1].convs[3][1].weight.shape)
        assert.are.same({ 3, 3 }, model.classifier[1].convs[3][1].dilation)
        assert.has_error(function()
            IntermediateLayerGetter(Backbone(), { layer5 = "out" })
        end, "return_layers are not present in model")
    end)

    it("ASPP, the out and aux logits and the loss match PyTorch (eval)", function()
        local model = make_model()
        model:eval()
        tide.no_grad(function()
            local x = image()
            local feats = model.backbone(x)
            assert.are.same({ 2, 8, 8, 8 }, feats.out.shape)
            assert.are.same({ 2, 8, 8, 8 }, feats.aux.shape)
            local a = model.classifier[1](feats.out)
            assert.are.same({ 2, 16, 8, 8 }, a.shape)
            assert_close_list({ 162.31247, 162.31247, 0.17892049, 0.17883146, 0.18478903,
                0.18360026 }, summary(a), 1e-5, "aspp")
            local r = model(x)
            assert.are.same({ 2, 3, 16, 16 }, r.out.shape)
            assert.are.same({ 2, 3, 16, 16 }, r.aux.shape)
            assert_close_list({ 243.31416, 243.31416, 0.19157434, 0.18481097, 0.1712842,
                0.16454439 }, summary(r.out), 1e-5, "out")
            assert_close_list({ -380.23862, 387.28351, 0.023575604, 0.022737605, 0.021061609,
                0.020333532 }, summary(r.aux), 1e-5, "aux")
            assert_close_list({ 1.6576457 }, { criterion(r, labels()):item() }, 1e-5, "loss")
        end)
    end)

    it("trains: train.py's SGD param groups, 2 steps, PyTorch's losses", function()
        local model = make_model()
        local x, lab = image(), labels()
        local lr = 0.01
        local params_to_optimize = {
            -- {"params": [p for p in model_without_ddp.backbone.parameters() if p.requires_grad]},
            { params = model.backbone:parameters() },
            -- {"params": [p for p in model_without_ddp.classifier.parameters()
            --     if p.requires_grad]},
            { params = model.classifier:parameters() },
        }
        -- params_to_optimize.append({"params": params, "lr": args.lr * 10})
        params_to_optimize[#params_to_optimize + 1] =
            { params = model.aux_classifier:parameters(), lr = lr * 10 }
        -- optimizer = torch.optim.SGD(params_to_optimize, lr=args.lr, momentum=args.momentum,
        --     weight_decay=args.weight_decay)
        local optimizer = optim.SGD(params_to_optimize,
            { lr = lr, momentum = 0.9, weight_decay = 1e-4 })
        model:train()
        -- the Dropouts in eval on both sides, so that the losses compare (BN keeps batch stats)
        for _, m in ipairs(model:modules()) do
            if tide.isinstance(m, nn.Dropout) then m:eval() end
        end
        local losses = {}
        for step = 1, 3 do
            local output = model(x)
            local loss = criterion(output, lab)
            losses[step] = loss:item()
            assert_finite(losses[step], "loss")
            if step < 3 then
                optimizer:zero_grad()
                loss:backward()
                optimizer:step()
            end
        end
        assert_close_list({ 1.6634092, 1.6629685, 1.6621703 }, losses, 1e-5, "losses")
        assert.is_true(losses[3] < losses[2] and losses[2] < losses[1])
        -- BN's running stats, updated in the three train-mode forwards
        assert_close_list({ -0.021849565, 0.70983976, -0.066948518, 0.069195263, -0.063530952,
            0.050595716 }, summary(model.classifier[1].project[2].running_mean), 1e-4, "rm")
        assert_close_list({ 6.8230381, 6.8230381, 0.92143023, 0.82744527, 0.7727409,
            0.88890076 }, summary(model.backbone.layer3[2].running_var), 1e-4, "rv")
        -- with the Dropouts back in train mode, two forwards draw different masks
        model:train()
        tide.no_grad(function()
            local a, b = model(x).out, model(x).out
            assert.is_true((a - b):abs():max():item() > 1e-4)
        end)
    end)
end)
