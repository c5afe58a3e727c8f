-- ported_scripts40_spec.lua — aladdinpersson/Machine-Learning-Collection ported line for line:
-- object_detection/YOLO's model.py (Yolov1, architecture_config shrunk 16x in channels), loss.py
-- (YoloLoss) and utils.py (intersection_over_union, non_max_suppression), checked against PyTorch
-- 1.13 values; image_segmentation/semantic_segmentation_unet/model.py (UNET). The Python line
-- stands above each Lua line that differs; `-- GAP:` marks a form tide cannot write as Python.
local tide = require("tide")
local nn = tide.nn
local optim = tide.optim

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list
local unpack = table.unpack or unpack -- luacheck: ignore

-- utils.py
local function intersection_over_union(boxes_preds, boxes_labels, box_format)
    box_format = box_format or "midpoint"
    local box1_x1, box1_y1, box1_x2, box1_y2, box2_x1, box2_y1, box2_x2, box2_y2
    if box_format == "midpoint" then
        -- box1_x1 = boxes_preds[..., 0:1] - boxes_preds[..., 2:3] / 2
        box1_x1 = boxes_preds[{ "...", { 1, 1 } }] - boxes_preds[{ "...", { 3, 3 } }] / 2
        box1_y1 = boxes_preds[{ "...", { 2, 2 } }] - boxes_preds[{ "...", { 4, 4 } }] / 2
        box1_x2 = boxes_preds[{ "...", { 1, 1 } }] + boxes_preds[{ "...", { 3, 3 } }] / 2
        box1_y2 = boxes_preds[{ "...", { 2, 2 } }] + boxes_preds[{ "...", { 4, 4 } }] / 2
        box2_x1 = boxes_labels[{ "...", { 1, 1 } }] - boxes_labels[{ "...", { 3, 3 } }] / 2
        box2_y1 = boxes_labels[{ "...", { 2, 2 } }] - boxes_labels[{ "...", { 4, 4 } }] / 2
        box2_x2 = boxes_labels[{ "...", { 1, 1 } }] + boxes_labels[{ "...", { 3, 3 } }] / 2
        box2_y2 = boxes_labels[{ "...", { 2, 2 } }] + boxes_labels[{ "...", { 4, 4 } }] / 2
    end
    if box_format == "corners" then
        box1_x1 = boxes_preds[{ "...", { 1, 1 } }]
        box1_y1 = boxes_preds[{ "...", { 2, 2 } }]
        box1_x2 = boxes_preds[{ "...", { 3, 3 } }]
        box1_y2 = boxes_preds[{ "...", { 4, 4 } }] -- (N, 1)
        box2_x1 = boxes_labels[{ "...", { 1, 1 } }]
        box2_y1 = boxes_labels[{ "...", { 2, 2 } }]
        box2_x2 = boxes_labels[{ "...", { 3, 3 } }]
        box2_y2 = boxes_labels[{ "...", { 4, 4 } }]
    end
    -- x1 = torch.max(box1_x1, box2_x1)
    local x1 = tide.max(box1_x1, box2_x1)
    local y1 = tide.max(box1_y1, box2_y1)
    local x2 = tide.min(box1_x2, box2_x2)
    local y2 = tide.min(box1_y2, box2_y2)

    -- .clamp(0) is for the case when they do not intersect
    local intersection = (x2 - x1):clamp(0) * (y2 - y1):clamp(0)

    -- box1_area = abs((box1_x2 - box1_x1) * (box1_y2 - box1_y1))
    local box1_area = tide.abs((box1_x2 - box1_x1) * (box1_y2 - box1_y1))
    local box2_area = tide.abs((box2_x2 - box2_x1) * (box2_y2 - box2_y1))

    return intersection / (box1_area + box2_area - intersection + 1e-6)
end

local function non_max_suppression(bboxes, iou_threshold, threshold, box_format)
    box_format = box_format or "corners"
    -- assert type(bboxes) == list
    assert(type(bboxes) == "table")
    -- bboxes = [box for box in bboxes if box[1] > threshold]
    local kept = {}
    for _, box in ipairs(bboxes) do
        if box[2] > threshold then kept[#kept + 1] = box end
    end
    bboxes = kept
    -- bboxes = sorted(bboxes, key=lambda x: x[1], reverse=True)
    table.sort(bboxes, function(a, b) return a[2] > b[2] end)
    local bboxes_after_nms = {}

    while #bboxes > 0 do
        -- chosen_box = bboxes.pop(0)
        local chosen_box = table.remove(bboxes, 1)
        local rest = {}
        for _, box in ipairs(bboxes) do
            -- box[0] != chosen_box[0] or intersection_over_union(torch.tensor(chosen_box[2:]),
            --     torch.tensor(box[2:]), box_format=box_format) < iou_threshold
            if box[1] ~= chosen_box[1]
                or intersection_over_union(tide.tensor({ unpack(chosen_box, 3) }),
                    tide.tensor({ unpack(box, 3) }), box_format):item() < iou_threshold then
                rest[#rest + 1] = box
            end
        end
        bboxes = rest
        bboxes_after_nms[#bboxes_after_nms + 1] = chosen_box
    end
    return bboxes_after_nms
end

-- loss.py
local YoloLoss = nn.Module:extend("YoloLoss")
-- def __init__(self, S=7, B=2, C=20):
function YoloLoss:init(S, B, C)
    -- self.mse = nn.MSELoss(reduction="sum")
    self.mse = nn.MSELoss({ reduction = "sum" })
    self.S = S or 7
    self.B = B or 2
    self.C = C or 20
    self.lambda_noobj = 0.5
    self.lambda_coord = 5
end

function YoloLoss:forward(predictions, target)
    -- predictions = predictions.reshape(-1, self.S, self.S, self.C + self.B * 5)
    predictions = predictions:reshape(-1, self.S, self.S, self.C + self.B * 5)
    -- iou_b1 = intersection_over_union(predictions[..., 21:25], target[..., 21:25])
    local iou_b1 = intersection_over_union(predictions[{ "...", { 22, 25 } }], target[{ "...", { 22, 25 } }])
    local iou_b2 = intersection_over_union(predictions[{ "...", { 27, 30 } }], target[{ "...", { 22, 25 } }])
    -- ious = torch.cat([iou_b1.unsqueeze(0), iou_b2.unsqueeze(0)], dim=0)
    local ious = tide.cat({ iou_b1:unsqueeze(1), iou_b2:unsqueeze(1) }, { dim = 1 })
    -- iou_maxes, bestbox = torch.max(ious, dim=0)
    local iou_maxes, bestbox = tide.max(ious, { dim = 1 })
    -- indices are 1-based: PyTorch's 0/1 box choice is bestbox - 1
    bestbox = bestbox - 1
    -- exists_box = target[..., 20].unsqueeze(3)  # in paper this is Iobj_i
    local exists_box = target[{ "...", 21 }]:unsqueeze(4)

    local box_predictions = exists_box * (
        bestbox * predictions[{ "...", { 27, 30 } }]
        + (1 - bestbox) * predictions[{ "...", { 22, 25 } }]
    )
    local box_targets = exists_box * target[{ "...", { 22, 25 } }]

    -- box_predictions[..., 2:4] = torch.sign(box_predictions[..., 2:4]) * torch.sqrt(
    --     torch.abs(box_predictions[..., 2:4] + 1e-6))
    box_predictions[{ "...", { 3, 4 } }] = tide.sign(box_predictions[{ "...", { 3, 4 } }]) * tide.sqrt(
        tide.abs(box_predictions[{ "...", { 3, 4 } }] + 1e-6))
    box_targets[{ "...", { 3, 4 } }] = tide.sqrt(box_targets[{ "...", { 3, 4 } }])

    local box_loss = self.mse(
        tide.flatten(box_predictions, { end_dim = -2 }),
        tide.flatten(box_targets, { end_dim = -2 })
    )

    -- pred_box = bestbox * predictions[..., 25:26] + (1 - bestbox) * predictions[..., 20:21]
    local pred_box = bestbox * predictions[{ "...", { 26, 26 } }] + (1 - bestbox) * predictions[{ "...", { 21, 21 } }]

    local object_loss = self.mse(
        tide.flatten(exists_box * pred_box),
        tide.flatten(exists_box * target[{ "...", { 21, 21 } }] * iou_maxes)
    )

    -- torch.flatten((1 - exists_box) * predictions[..., 20:21], start_dim=1)
    local no_object_loss = self.mse(
        tide.flatten((1 - exists_box) * predictions[{ "...", { 21, 21 } }], { start_dim = 2 }),
        tide.flatten((1 - exists_box) * target[{ "...", { 21, 21 } }], { start_dim = 2 })
    )
    -- no_object_loss += self.mse(...)
    no_object_loss = no_object_loss + self.mse(
        tide.flatten((1 - exists_box) * predictions[{ "...", { 26, 26 } }], { start_dim = 2 }),
        tide.flatten((1 - exists_box) * target[{ "...", { 21, 21 } }], { start_dim = 2 })
    )

    -- torch.flatten(exists_box * predictions[..., :20], end_dim=-2,)
    local class_loss = self.mse(
        tide.flatten(exists_box * predictions[{ "...", { 1, 20 } }], { end_dim = -2 }),
        tide.flatten(exists_box * target[{ "...", { 1, 20 } }], { end_dim = -2 })
    )

    local loss = (
        self.lambda_coord * box_loss -- first two rows in paper
        + object_loss -- third row in paper
        + self.lambda_noobj * no_object_loss -- forth row
        + class_loss -- fifth row
    )
    return loss, { box_loss, object_loss, no_object_loss, class_loss }
end

-- model.py: architecture_config with every channel count / 16 (64 -> 4, 1024 -> 64)
-- Tuple is structured by (kernel_size, filters, stride, padding)
local architecture_config = {
    { 7, 4, 2, 3 },
    "M",
    { 3, 12, 1, 1 },
    "M",
    { 1, 8, 1, 0 },
    { 3, 16, 1, 1 },
    { 1, 16, 1, 0 },
    { 3, 32, 1, 1 },
    "M",
    -- [(1, 256, 1, 0), (3, 512, 1, 1), 4]: a Python list holds two tuples and a repeat count
    { list = true, { 1, 16, 1, 0 }, { 3, 32, 1, 1 }, 4 },
    { 1, 32, 1, 0 },
    { 3, 64, 1, 1 },
    "M",
    { list = true, { 1, 32, 1, 0 }, { 3, 64, 1, 1 }, 2 },
    { 3, 64, 1, 1 },
    { 3, 64, 2, 1 },
    { 3, 64, 1, 1 },
    { 3, 64, 1, 1 },
}

local CNNBlock = nn.Module:extend("CNNBlock")
-- def __init__(self, in_channels, out_channels, **kwargs):
function CNNBlock:init(in_channels, out_channels, kwargs)
    -- self.conv = nn.Conv2d(in_channels, out_channels, bias=False, **kwargs)
    self.conv = nn.Conv2d(in_channels, out_channels, {
        bias = false, kernel_size = kwargs.kernel_size, stride = kwargs.stride, padding = kwargs.padding })
    self.batchnorm = nn.BatchNorm2d(out_channels)
    self.leakyrelu = nn.LeakyReLU(0.1)
end

function CNNBlock:forward(x)
    return self.leakyrelu(self.batchnorm(self.conv(x)))
end

local Yolov1 = nn.Module:extend("Yolov1")
-- def __init__(self, in_channels=3, **kwargs):
function Yolov1:init(kwargs)
    self.architecture = architecture_config
    self.in_channels = kwargs.in_channels or 3
    self.darknet = self:_create_conv_layers(self.architecture)
    self.fcs = self:_create_fcs(kwargs.split_size, kwargs.num_boxes, kwargs.num_classes)
end

function Yolov1:forward(x)
    x = self.darknet(x)
    -- return self.fcs(torch.flatten(x, start_dim=1))
    return self.fcs(tide.flatten(x, { start_dim = 2 }))
end

function Yolov1:_create_conv_layers(architecture)
    local layers = {}
    local in_channels = self.in_channels
    for _, x in ipairs(architecture) do
        -- if type(x) == tuple:
        if type(x) == "table" and not x.list then
            -- CNNBlock(in_channels, x[1], kernel_size=x[0], stride=x[2], padding=x[3])
            layers[#layers + 1] = CNNBlock(in_channels, x[2], { kernel_size = x[1], stride = x[3], padding = x[4] })
            in_channels = x[2]
        elseif type(x) == "string" then
            -- nn.MaxPool2d(kernel_size=(2, 2), stride=(2, 2))
            layers[#layers + 1] = nn.MaxPool2d({ kernel_size = { 2, 2 }, stride = { 2, 2 } })
        elseif type(x) == "table" and x.list then
            local conv1, conv2, num_repeats = x[1], x[2], x[3]
            for _ = 1, num_repeats do
                layers[#layers + 1] = CNNBlock(in_channels, conv1[2],
                    { kernel_size = conv1[1], stride = conv1[3], padding = conv1[4] })
                layers[#layers + 1] = CNNBlock(conv1[2], conv2[2],
                    { kernel_size = conv2[1], stride = conv2[3], padding = conv2[4] })
                in_channels = conv2[2]
            end
        end
    end
    -- return nn.Sequential(*layers)
    return nn.Sequential(unpack(layers))
end

function Yolov1:_create_fcs(split_size, num_boxes, num_classes)
    local S, B, C = split_size, num_boxes, num_classes
    return nn.Sequential(
        nn.Flatten(),
        -- nn.Linear(1024 * S * S, 496) (1024 / 16 channels here)
        nn.Linear(64 * S * S, 496),
        nn.Dropout(0.0),
        nn.LeakyReLU(0.1),
        nn.Linear(496, S * S * (C + B * 5))
    )
end

describe("aladdinpersson YOLO (object_detection/YOLO)", function()
    it("utils.py intersection_over_union (midpoint, corners) and non_max_suppression match PyTorch", function()
        local a = tide.tensor({ { 0.5, 0.5, 0.4, 0.6 }, { 0.3, 0.2, 0.2, 0.2 }, { 0.1, 0.1, 0.5, 0.5 } })
        local b = tide.tensor({ { 0.45, 0.55, 0.5, 0.5 }, { 0.8, 0.8, 0.1, 0.1 }, { 0.2, 0.2, 0.6, 0.4 } })
        assert_close_list({ 0.689652681350708, 0.0, 0.4736827611923218 },
            intersection_over_union(a, b):flatten():tolist(), 1e-5, "midpoint iou")
        assert_close_list({ 0.0, 0.0, 0.33333149552345276 },
            intersection_over_union(a, b, "corners"):flatten():tolist(), 1e-5, "corners iou")
        local bb = { { 0, 0.9, 0.1, 0.1, 0.5, 0.5 }, { 0, 0.8, 0.12, 0.1, 0.5, 0.52 }, { 1, 0.85, 0.1, 0.1, 0.5, 0.5 },
            { 0, 0.7, 0.6, 0.6, 0.9, 0.9 }, { 1, 0.3, 0.0, 0.0, 0.2, 0.2 } }
        -- non_max_suppression(bb, iou_threshold=0.5, threshold=0.4)
        local nms = non_max_suppression(bb, 0.5, 0.4)
        -- PyTorch: [[0, 0.9, ...], [1, 0.85, ...], [0, 0.7, ...]]
        assert.are.equal(3, #nms)
        assert.are.same({ 0.9, 0.85, 0.7 }, { nms[1][2], nms[2][2], nms[3][2] })
    end)

    it("loss.py YoloLoss on fixed predictions/targets matches PyTorch", function()
        local S, B, C = 2, 2, 20
        local predictions = (tide.sin(tide.arange(2 * S * S * 30):float()) * 0.5 + 0.5):reshape(2, S * S * 30)
        local target = tide.cos(tide.arange(2 * S * S * 30):float()) * 0.5 + 0.5
        target = target:reshape(2, S, S, 30)
        -- target[..., 20] = (torch.arange(2*S*S) % 2).reshape(2,S,S).float()
        target[{ "...", 21 }] = (tide.arange(2 * S * S) % 2):reshape(2, S, S):float()
        local loss, parts = YoloLoss(S, B, C)(predictions, target)
        assert_close_list({ 3.266206741333008, 0.7838623523712158, 2.8160059452056885, 20.827497482299805 },
            { parts[1]:item(), parts[2]:item(), parts[3]:item(), parts[4]:item() }, 1e-4, "loss parts")
        assert_close_list({ 39.35039520263672 }, { loss:item() }, 1e-4, "loss")
    end)

    it("model.py Yolov1(split_size=2, num_boxes=2, num_classes=20) on 128x128 trains with YoloLoss", function()
        tide.manual_seed(0)
        -- model = Yolov1(split_size=7, num_boxes=2, num_classes=20).to(DEVICE)
        local model = Yolov1({ split_size = 2, num_boxes = 2, num_classes = 20 })
        -- optimizer = optim.Adam(model.parameters(), lr=LEARNING_RATE, weight_decay=WEIGHT_DECAY)
        local optimizer = optim.Adam(model:parameters(), { lr = 2e-4, weight_decay = 0 })
        local loss_fn = YoloLoss(2, 2, 20)
        local x = tide.randn(2, 3, 128, 128)
        local y = tide.rand(2, 2, 2, 30)
        y[{ "...", 21 }] = tide.tensor({ { { 1, 0 }, { 0, 1 } }, { { 1, 1 }, { 0, 0 } } })
        local out = model(x)
        assert.are.same({ 2, 2 * 2 * 30 }, { out:size(1), out:size(2) })
        local losses = {}
        for _ = 1, 4 do
            out = model(x)
            local loss = loss_fn(out, y)
            losses[#losses + 1] = loss:item()
            assert_finite(losses[#losses], "yolo loss")
            optimizer:zero_grad()
            loss:backward()
            optimizer:step()
        end
        assert.is_true(losses[#losses] < losses[1])
    end)
end)

-- image_segmentation/semantic_segmentation_unet/model.py
describe("aladdinpersson semantic_segmentation_unet/model.py", function()
    local F = nn.functional
    local DoubleConv = nn.Module:extend("DoubleConv")
    function DoubleConv:init(in_channels, out_channels)
        self.conv = nn.Sequential(
            -- nn.Conv2d(in_channels, out_channels, 3, 1, 1, bias=False)
            nn.Conv2d(in_channels, out_channels, 3, 1, 1, { bias = false }),
            nn.BatchNorm2d(out_channels),
            -- nn.ReLU(inplace=True)
            nn.ReLU({ inplace = true }),
            nn.Conv2d(out_channels, out_channels, 3, 1, 1, { bias = false }),
            nn.BatchNorm2d(out_channels),
            nn.ReLU({ inplace = true })
        )
    end

    function DoubleConv:forward(x)
        return self.conv(x)
    end

    local UNET = nn.Module:extend("UNET")
    -- def __init__(self, in_channels=3, out_channels=1, features=[64, 128, 256, 512])
    function UNET:init(in_channels, out_channels, features)
        in_channels, out_channels = in_channels or 3, out_channels or 1
        features = features or { 64, 128, 256, 512 }
        self.ups = nn.ModuleList()
        self.downs = nn.ModuleList()
        self.pool = nn.MaxPool2d({ kernel_size = 2, stride = 2 })
        -- Down part of UNET
        for _, feature in ipairs(features) do
            self.downs:append(DoubleConv(in_channels, feature))
            in_channels = feature
        end
        -- Up part of UNET: for feature in reversed(features):
        for i = #features, 1, -1 do
            local feature = features[i]
            self.ups:append(nn.ConvTranspose2d(feature * 2, feature, { kernel_size = 2, stride = 2 }))
            self.ups:append(DoubleConv(feature * 2, feature))
        end
        -- self.bottleneck = DoubleConv(features[-1], features[-1]*2)
        self.bottleneck = DoubleConv(features[#features], features[#features] * 2)
        self.final_conv = nn.Conv2d(features[1], out_channels, { kernel_size = 1 })
    end

    function UNET:forward(x)
        local skip_connections = {}
        for _, down in ipairs(self.downs) do
            x = down(x)
            skip_connections[#skip_connections + 1] = x
            x = self.pool(x)
        end
        x = self.bottleneck(x)
        -- skip_connections = skip_connections[::-1]
        local reversed = {}
        for i = #skip_connections, 1, -1 do reversed[#reversed + 1] = skip_connections[i] end
        skip_connections = reversed

        -- for idx in range(0, len(self.ups), 2):
        for idx = 1, #self.ups, 2 do
            x = self.ups[idx](x)
            -- skip_connection = skip_connections[idx//2]
            local skip_connection = skip_connections[(idx + 1) / 2]
            -- if x.shape != skip_connection.shape:
            if x.shape ~= skip_connection.shape then
                -- x = TF.resize(x, size=skip_connection.shape[2:]) (the repo's comment allows
                -- F.interpolate; TF.resize on a tensor is bilinear)
                x = F.interpolate(x, { size = skip_connection.shape[{ { 3, -1 } }], mode = "bilinear" })
            end
            -- concat_skip = torch.cat((skip_connection, x), dim=1)
            local concat_skip = tide.cat({ skip_connection, x }, { dim = 2 })
            x = self.ups[idx + 1](concat_skip)
        end
        return self.final_conv(x)
    end

    it("test(): preds.shape == x.shape on an odd 21x21 input (resize path), and trains", function()
        tide.manual_seed(0)
        -- x = torch.randn((3, 1, 161, 161))
        local x = tide.randn({ 2, 1, 21, 21 })
        -- model = UNET(in_channels=1, out_channels=1) (features shrunk to [4, 8])
        local model = UNET(1, 1, { 4, 8 })
        local preds = model(x)
        -- assert preds.shape == x.shape
        assert.is_true(preds.shape == x.shape)
        -- train.py: loss_fn = nn.BCEWithLogitsLoss(); optimizer = optim.Adam(model.parameters(), lr=LEARNING_RATE)
        local loss_fn = nn.BCEWithLogitsLoss()
        local optimizer = optim.Adam(model:parameters(), { lr = 1e-2 })
        local targets = tide.rand(2, 1, 21, 21):gt(0.5):float() -- (t > 0.5): Lua's > on tables gives a boolean
        local losses = {}
        for _ = 1, 4 do
            local predictions = model(x)
            local loss = loss_fn(predictions, targets)
            losses[#losses + 1] = loss:item()
            assert_finite(losses[#losses], "unet loss")
            optimizer:zero_grad()
            loss:backward()
            optimizer:step()
        end
        assert.is_true(losses[#losses] < losses[1])
    end)
end)
