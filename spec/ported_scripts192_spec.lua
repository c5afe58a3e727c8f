-- ported_scripts192_spec.lua — pytorch/examples' fast_neural_style/neural_style/:
-- transformer_net.py (TransformerNet, ConvLayer with ReflectionPad2d, InstanceNorm2d(affine=True),
-- ResidualBlock, UpsampleConvLayer with F.interpolate(mode='nearest', scale_factor=2)), utils.py
-- (gram_matrix, normalize_batch with the ImageNet mean / std made by new_tensor ... view), vgg.py
-- (Vgg16's four slices returning a namedtuple) and neural_style.py's training step (content loss:
-- mse between relu2_2 features; style loss: mse between gram matrices summed over the layers;
-- Adam), ported line for line at tiny sizes: images 2 x 3 x 16 x 16, TransformerNet's channel
-- widths divided by 8 (32/64/128 -> 4/8/16). Vgg16's pretrained torchvision features are replaced
-- by a tiny frozen stack with the same slice structure (4 slices, one conv + relu each, 2x2 max
-- pools at the start of slices 2-4, widths 4/8/8/8): the namedtuple and the loss code are as in
-- the script. The Python line stands above each Lua line that differs from it.
-- Values: PyTorch 1.13 on the same weights (a formula over each parameter's index in
-- named_parameters order) and inputs.
local tide = require("tide")
local nn = tide.nn
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- PyTorch 1.13's values for the same weights and inputs
local REF = {
    n_params = 62,
    count = 28467,
    -- normalize_batch(x.clone()): sum, sum of |.|, first six entries
    norm = { 359.74176025390625, 2179.24072265625,
        { 1.1122828, 1.7343426, 2.1305325, 2.2472308, 2.0686419, 1.6189376 } },
    -- transformer(x)
    y = { 204.71652221679688, 732.7898559570312,
        { 0.218905, 0.268764, 0.3303553, 0.3457368, 0.2758064, 0.1446596 } },
    -- gram_matrix(transformer(x))
    gram = { 0.13269585371017456, 1.3707629442214966,
        { 0.1364909, -0.0253059, -0.0896393, -0.0253059, 0.1684219, -0.0542783 } },
    -- [gm.sum() for gm in gram_style]
    gram_style = { 2.578051805496216, 3.622572422027588, 14.32255744934082, 50.8049430847168 },
    -- step 1: the style mse of each layer (before style_weight)
    per_layer = { 0.0022406659554690123, 0.06708682328462601, 12.580622673034668,
        215.31631469726562 },
    -- step 1: conv1.conv2d.weight.grad.sum(), deconv3.conv2d.bias.grad
    grad = { -462527397888.0, { -25768675328.0, -29438646272.0, -29842819072.0 } },
    -- after one Adam step: first entries of a few parameters
    after = {
        { "conv1.conv2d.weight", { 0.0, 0.2002843, 0.2982263, 0.2437788 } },
        { "in1.weight", { 0.1172654, -0.0970447, -0.2607664, -0.2937292 } },
        { "res3.in1.weight", { -0.0769195, -0.251856, -0.2956089, -0.1897987 } },
        { "in5.bias", { -0.2246625, -0.0350341, 0.1710055, 0.2931544 } },
        { "deconv3.conv2d.bias", { 0.2859781, 0.1505842, -0.0612434 } },
    },
    -- the sum of the weights and of deconv3's bias after that step: the other biases have a
    -- gradient that is rounding noise (a conv bias an InstanceNorm follows, an InstanceNorm bias
    -- whose shift a later InstanceNorm removes), so Adam's first step there has a random sign
    after_sum = 1.2350668981671333,
    -- content_loss, style_loss, total_loss of two steps
    losses = { { 198676.875, 2279662682112.0, 2279662944256.0 },
        { 198391.375, 2271359270912.0, 2271359533056.0 } },
}

---------------------------------------------------------------------------------------------
-- transformer_net.py
---------------------------------------------------------------------------------------------
-- class ConvLayer(torch.nn.Module):
local ConvLayer = nn.Module:extend("ConvLayer")
-- def __init__(self, in_channels, out_channels, kernel_size, stride):
function ConvLayer:init(in_channels, out_channels, kernel_size, stride)
    -- reflection_padding = kernel_size // 2
    local reflection_padding = math.floor(kernel_size / 2)
    self.reflection_pad = nn.ReflectionPad2d(reflection_padding)
    self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride)
end

function ConvLayer:forward(x)
    local out = self.reflection_pad(x)
    out = self.conv2d(out)
    return out
end

-- class ResidualBlock(torch.nn.Module):
local ResidualBlock = nn.Module:extend("ResidualBlock")
function ResidualBlock:init(channels)
    -- self.conv1 = ConvLayer(channels, channels, kernel_size=3, stride=1)
    self.conv1 = ConvLayer(channels, channels, 3, 1)
    -- self.in1 = torch.nn.InstanceNorm2d(channels, affine=True)
    self.in1 = nn.InstanceNorm2d(channels, { affine = true })
    self.conv2 = ConvLayer(channels, channels, 3, 1)
    self.in2 = nn.InstanceNorm2d(channels, { affine = true })
    self.relu = nn.ReLU()
end

function ResidualBlock:forward(x)
    local residual = x
    local out = self.relu(self.in1(self.conv1(x)))
    out = self.in2(self.conv2(out))
    out = out + residual
    return out
end

-- class UpsampleConvLayer(torch.nn.Module):
local UpsampleConvLayer = nn.Module:extend("UpsampleConvLayer")
-- def __init__(self, in_channels, out_channels, kernel_size, stride, upsample=None):
function UpsampleConvLayer:init(in_channels, out_channels, kernel_size, stride, upsample)
    self.upsample = upsample
    -- reflection_padding = kernel_size // 2
    local reflection_padding = math.floor(kernel_size / 2)
    self.reflection_pad = nn.ReflectionPad2d(reflection_padding)
    self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride)
end

function UpsampleConvLayer:forward(x)
    local x_in = x
    if self.upsample then
        -- x_in = torch.nn.functional.interpolate(x_in, mode='nearest', scale_factor=self.upsample)
        x_in = nn.functional.interpolate(x_in, { mode = "nearest", scale_factor = self.upsample })
    end
    local out = self.reflection_pad(x_in)
    out = self.conv2d(out)
    return out
end

-- class TransformerNet(torch.nn.Module): (widths 32/64/128 divided by 8)
local TransformerNet = nn.Module:extend("TransformerNet")
function TransformerNet:init()
    -- Initial convolution layers
    -- self.conv1 = ConvLayer(3, 32, kernel_size=9, stride=1)
    self.conv1 = ConvLayer(3, 4, 9, 1)
    -- self.in1 = torch.nn.InstanceNorm2d(32, affine=True)
    self.in1 = nn.InstanceNorm2d(4, { affine = true })
    -- self.conv2 = ConvLayer(32, 64, kernel_size=3, stride=2)
    self.conv2 = ConvLayer(4, 8, 3, 2)
    -- self.in2 = torch.nn.InstanceNorm2d(64, affine=True)
    self.in2 = nn.InstanceNorm2d(8, { affine = true })
    -- self.conv3 = ConvLayer(64, 128, kernel_size=3, stride=2)
    self.conv3 = ConvLayer(8, 16, 3, 2)
    -- self.in3 = torch.nn.InstanceNorm2d(128, affine=True)
    self.in3 = nn.InstanceNorm2d(16, { affine = true })
    -- Residual layers
    -- self.res1 = ResidualBlock(128) ... self.res5 = ResidualBlock(128)
    self.res1 = ResidualBlock(16)
    self.res2 = ResidualBlock(16)
    self.res3 = ResidualBlock(16)
    self.res4 = ResidualBlock(16)
    self.res5 = ResidualBlock(16)
    -- Upsampling Layers
    -- self.deconv1 = UpsampleConvLayer(128, 64, kernel_size=3, stride=1, upsample=2)
    self.deconv1 = UpsampleConvLayer(16, 8, 3, 1, 2)
    -- self.in4 = torch.nn.InstanceNorm2d(64, affine=True)
    self.in4 = nn.InstanceNorm2d(8, { affine = true })
    -- self.deconv2 = UpsampleConvLayer(64, 32, kernel_size=3, stride=1, upsample=2)
    self.deconv2 = UpsampleConvLayer(8, 4, 3, 1, 2)
    -- self.in5 = torch.nn.InstanceNorm2d(32, affine=True)
    self.in5 = nn.InstanceNorm2d(4, { affine = true })
    -- self.deconv3 = ConvLayer(32, 3, kernel_size=9, stride=1)
    self.deconv3 = ConvLayer(4, 3, 9, 1)
    -- Non-linearities
    self.relu = nn.ReLU()
end

-- def forward(self, X):
function TransformerNet:forward(X)
    local y = self.relu(self.in1(self.conv1(X)))
    y = self.relu(self.in2(self.conv2(y)))
    y = self.relu(self.in3(self.conv3(y)))
    y = self.res1(y)
    y = self.res2(y)
    y = self.res3(y)
    y = self.res4(y)
    y = self.res5(y)
    y = self.relu(self.in4(self.deconv1(y)))
    y = self.relu(self.in5(self.deconv2(y)))
    y = self.deconv3(y)
    return y
end

---------------------------------------------------------------------------------------------
-- vgg.py (torchvision's pretrained vgg16 features replaced by a tiny frozen stack)
---------------------------------------------------------------------------------------------
-- VggOutputs's fields, in the namedtuple's order (zip(features_y, gram_style) walks them)
local VGG_FIELDS = { "relu1_2", "relu2_2", "relu3_3", "relu4_3" }

-- class Vgg16(torch.nn.Module):
local Vgg16 = nn.Module:extend("Vgg16")
-- def __init__(self, requires_grad=False):
function Vgg16:init(requires_grad)
    -- vgg_pretrained_features = models.vgg16(weights=models.VGG16_Weights.IMAGENET1K_V1).features
    local vgg_pretrained_features = {
        nn.Conv2d(3, 4, 3, 1, 1), nn.ReLU(),
        nn.MaxPool2d(2, 2), nn.Conv2d(4, 8, 3, 1, 1), nn.ReLU(),
        nn.MaxPool2d(2, 2), nn.Conv2d(8, 8, 3, 1, 1), nn.ReLU(),
        nn.MaxPool2d(2, 2), nn.Conv2d(8, 8, 3, 1, 1), nn.ReLU(),
    }
    self.slice1 = nn.Sequential()
    self.slice2 = nn.Sequential()
    self.slice3 = nn.Sequential()
    self.slice4 = nn.Sequential()
    -- for x in range(4): (here range(2), range(2, 5), range(5, 8), range(8, 11))
    for x = 0, 1 do
        -- self.slice1.add_module(str(x), vgg_pretrained_features[x])
        self.slice1:add_module(tostring(x), vgg_pretrained_features[x + 1])
    end
    for x = 2, 4 do
        self.slice2:add_module(tostring(x), vgg_pretrained_features[x + 1])
    end
    for x = 5, 7 do
        self.slice3:add_module(tostring(x), vgg_pretrained_features[x + 1])
    end
    for x = 8, 10 do
        self.slice4:add_module(tostring(x), vgg_pretrained_features[x + 1])
    end
    if not requires_grad then
        -- for param in self.parameters():
        for _, param in ipairs(self:parameters()) do
            param.requires_grad = false
        end
    end
end

function Vgg16:forward(X)
    local h = self.slice1(X)
    local h_relu1_2 = h
    h = self.slice2(h)
    local h_relu2_2 = h
    h = self.slice3(h)
    local h_relu3_3 = h
    h = self.slice4(h)
    local h_relu4_3 = h
    -- vgg_outputs = namedtuple("VggOutputs", ['relu1_2', 'relu2_2', 'relu3_3', 'relu4_3'])
    -- out = vgg_outputs(h_relu1_2, h_relu2_2, h_relu3_3, h_relu4_3)
    -- (a Lua table with the fields, and the same tensors as a list for the zip)
    local out = { h_relu1_2, h_relu2_2, h_relu3_3, h_relu4_3 }
    for i, name in ipairs(VGG_FIELDS) do out[name] = out[i] end
    return out
end

---------------------------------------------------------------------------------------------
-- utils.py
---------------------------------------------------------------------------------------------
-- def gram_matrix(y):
local function gram_matrix(y)
    -- (b, ch, h, w) = y.size()
    local b, ch, h, w = unpack(y:size())
    local features = y:view(b, ch, w * h)
    -- features_t = features.transpose(1, 2)
    local features_t = features:transpose(2, 3)
    local gram = features:bmm(features_t) / (ch * h * w)
    return gram
end

-- def normalize_batch(batch):
local function normalize_batch(batch)
    -- normalize using imagenet mean and std
    -- mean = batch.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
    local mean = batch:new_tensor({ 0.485, 0.456, 0.406 }):view(-1, 1, 1)
    local std = batch:new_tensor({ 0.229, 0.224, 0.225 }):view(-1, 1, 1)
    batch = batch:div_(255.0)
    return (batch - mean) / std
end

---------------------------------------------------------------------------------------------
-- the checks
---------------------------------------------------------------------------------------------
-- every parameter, in named_parameters order (k = 0, 1, ...), set from a fixed formula:
-- p.copy_((0.3 * torch.sin(0.731 * torch.arange(p.numel()).float() + 1.37 * k + off))
--     .view(p.shape))   (off 0 for the transformer, 0.5 for the vgg stand-in)
local function fill_from_formula(model, off)
    tide.no_grad(function()
        for k, np in ipairs(model:named_parameters()) do
            local p = np[2]
            local v = (tide.arange(p:numel()):float() * 0.731 + (1.37 * (k - 1) + off)):sin() * 0.3
            p:copy_(v:view(p.shape))
        end
    end)
end

-- x = 127.5 + 127.5 * torch.sin(0.37 * torch.arange(2*3*16*16).float() + 0.5).view(2, 3, 16, 16)
local function content_batch()
    return (tide.arange(2 * 3 * 16 * 16):float() * 0.37 + 0.5):sin():view(2, 3, 16, 16) * 127.5
        + 127.5
end

-- style = 127.5 + 127.5 * torch.cos(0.23 * torch.arange(3*16*16).float()).view(3, 16, 16)
local function style_image()
    return (tide.arange(3 * 16 * 16):float() * 0.23):cos():view(3, 16, 16) * 127.5 + 127.5
end

local function summary(t)
    return t:sum():item(), t:abs():sum():item(), t:flatten():narrow(1, 1, 6):tolist()
end

local function check_summary(ref, t, what)
    local s, a, first = summary(t)
    assert_close_list({ ref[1], ref[2] }, { s, a }, 1e-4, what .. " sums")
    assert_close_list(ref[3], first, 1e-4, what)
end

local function models()
    local transformer = TransformerNet()
    fill_from_formula(transformer, 0.0)
    -- vgg = Vgg16(requires_grad=False).to(device)
    local vgg = Vgg16(false)
    fill_from_formula(vgg, 0.5)
    return transformer, vgg
end

describe("pytorch/examples fast_neural_style", function()
    it("TransformerNet: parameters, output, gram_matrix, normalize_batch", function()
        local transformer = models()
        local params = transformer:parameters()
        assert.are.equal(REF.n_params, #params)
        local count = 0
        for _, p in ipairs(params) do count = count + p:numel() end
        assert.are.equal(REF.count, count)

        local x = content_batch()
        local nb = normalize_batch(x:clone())
        assert.are.same({ 2, 3, 16, 16 }, nb:size())
        check_summary(REF.norm, nb, "normalize_batch")
        -- normalize_batch divides its argument in place (batch.div_(255.0))
        local x2 = content_batch()
        normalize_batch(x2)
        assert.is_true(math.abs(x2:max():item() - 1) < 1e-4)

        local y = transformer(x)
        assert.are.same({ 2, 3, 16, 16 }, y:size())
        check_summary(REF.y, y, "TransformerNet")
        local g = gram_matrix(y)
        assert.are.same({ 2, 3, 3 }, g:size())
        check_summary(REF.gram, g, "gram_matrix")
    end)

    it("the training step: content and style losses, gradients, Adam", function()
        local transformer, vgg = models()
        -- optimizer = Adam(transformer.parameters(), args.lr)
        local optimizer = tide.optim.Adam(transformer:parameters(), 1e-3)
        local mse_loss = nn.MSELoss()
        for _, p in ipairs(vgg:parameters()) do assert.is_false(p.requires_grad) end

        -- style = style.repeat(args.batch_size, 1, 1, 1).to(device)
        local style = style_image()["repeat"](style_image(), 2, 1, 1, 1)
        local features_style = vgg(normalize_batch(style))
        -- gram_style = [utils.gram_matrix(y) for y in features_style]
        local gram_style = {}
        for i, y in ipairs(features_style) do gram_style[i] = gram_matrix(y) end
        local gs = {}
        for i, gm in ipairs(gram_style) do gs[i] = gm:sum():item() end
        assert_close_list(REF.gram_style, gs, 1e-4, "gram_style")

        local content_weight, style_weight = 1e5, 1e10
        local losses = {}
        for step = 1, 2 do
            -- for batch_id, (x, _) in enumerate(train_loader): (the same batch twice)
            local x = content_batch()
            -- n_batch = len(x)
            local n_batch = #x
            optimizer:zero_grad()

            local y = transformer(x)

            y = normalize_batch(y)
            x = normalize_batch(x)

            local features_y = vgg(y)
            local features_x = vgg(x)

            -- content_loss = args.content_weight * mse_loss(features_y.relu2_2, features_x.relu2_2)
            local content_loss = content_weight * mse_loss(features_y.relu2_2,
                features_x.relu2_2)

            local style_loss = 0.
            local per = {}
            -- for ft_y, gm_s in zip(features_y, gram_style):
            for i, ft_y in ipairs(features_y) do
                local gm_s = gram_style[i]
                local gm_y = gram_matrix(ft_y)
                -- style_loss += mse_loss(gm_y, gm_s[:n_batch, :, :])
                local l = mse_loss(gm_y, gm_s:narrow(1, 1, n_batch))
                per[i] = l:item()
                style_loss = style_loss + l
            end
            -- style_loss *= args.style_weight
            style_loss = style_loss * style_weight

            local total_loss = content_loss + style_loss
            total_loss:backward()
            if step == 1 then
                assert_close_list(REF.per_layer, per, 1e-4, "style mse per layer")
                local tp = transformer.conv1.conv2d.weight.grad:sum():item()
                assert_close_list({ REF.grad[1] }, { tp }, 1e-3, "conv1 weight grad sum")
                assert_close_list(REF.grad[2], transformer.deconv3.conv2d.bias.grad:tolist(),
                    1e-4, "deconv3 bias grad")
                for _, p in ipairs(vgg:parameters()) do assert.is_nil(p.grad) end
            end
            optimizer:step()

            losses[step] = { content_loss:item(), style_loss:item(), total_loss:item() }
            for _, v in ipairs(losses[step]) do assert_finite(v, "loss") end
            if step == 1 then
                local named = {}
                for _, np in ipairs(transformer:named_parameters()) do named[np[1]] = np[2] end
                for _, pair in ipairs(REF.after) do
                    local p = named[pair[1]]
                    local first = p:flatten():narrow(1, 1, #pair[2]):tolist()
                    assert_close_list(pair[2], first, 1e-5, pair[1] .. " after Adam")
                end
                local sum = 0
                for name, p in pairs(named) do
                    if name:match("weight$") or name:match("^deconv3") then
                        sum = sum + p:sum():item()
                    end
                end
                assert_close_list({ REF.after_sum }, { sum }, 1e-4, "parameter sum after Adam")
            end
        end
        for step = 1, 2 do
            assert_close_list(REF.losses[step], losses[step], 1e-4, "losses " .. step)
        end
        assert.is_true(losses[2][3] < losses[1][3])
    end)
end)
