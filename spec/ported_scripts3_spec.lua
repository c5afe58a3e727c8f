-- ported_scripts3_spec.lua — more real PyTorch scripts ported line for line: pytorch/examples'
-- fast_neural_style (transformer_net.py, utils.py, vgg.py with VGG16's 23 feature layers shrunk
-- to a few channels, and neural_style.py's train and stylize), the tutorial "Neural Transfer
-- Using PyTorch" (advanced/neural_style_tutorial.py, VGG19 shrunk to a small conv stack), and
-- reinforcement_learning/reinforce.py (with a small fake environment in place of gym's
-- CartPole). Each port keeps the script's layers, calls and keyword arguments (a Python
-- keyword is a name in a trailing table), shrunk to tiny sizes and random data, and runs a few
-- training steps. The Python line stands above each Lua line that differs from it; a line tide
-- cannot write as Python does is marked `-- GAP:`. Dims, indices and class targets are 1-based.
-- The last blocks test what these ports needed: nn.Sequential's add_module with any name, its
-- OrderedDict form, slices s[{{a, b}}] (ModuleList's too), PyTorch's renumbering, and tile
-- (PyTorch's repeat) returning a copy.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite

local function assert_close(expected, got, tol, what)
    local t = got:tolist()
    local function walk(e, g, path)
        if type(e) == "table" then
            assert.are.equal(#e, #g, what .. ": length at " .. path)
            for i = 1, #e do
                walk(e[i], g[i], path .. "[" .. i .. "]")
            end
        else
            assert(math.abs(e - g) <= tol * (1 + math.abs(e)),
                string.format("%s%s: expected %.8g, got %.8g", what, path, e, g))
        end
    end
    walk(expected, t, "")
end

-- Python's isinstance(m, cls)
local isinstance = tide.isinstance

-- Python's collections.namedtuple: the fields by position (for zip and iteration) and by name
local function namedtuple(_, fields)
    return function(...)
        local t = { ... }
        for i, name in ipairs(fields) do
            t[name] = t[i]
        end
        return t
    end
end

---------------------------------------------------------------------------------------------
-- 1. fast_neural_style: transformer_net.py, utils.py, vgg.py, neural_style.py
---------------------------------------------------------------------------------------------
describe("fast_neural_style/neural_style", function()
    -- ---- transformer_net.py (channels 32, 64, 128 shrunk to 4, 8, 8) ----
    local C1, C2, C3 = 4, 8, 8

    -- class ConvLayer(torch.nn.Module):
    local ConvLayer = nn.Module:extend("ConvLayer")
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
        local reflection_padding = math.floor(kernel_size / 2)
        self.reflection_pad = nn.ReflectionPad2d(reflection_padding)
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride)
    end

    function UpsampleConvLayer:forward(x)
        local x_in = x
        if self.upsample then
            -- x_in = torch.nn.functional.interpolate(x_in, mode='nearest', scale_factor=self.upsample)
            x_in = tide.nn.functional.interpolate(x_in, { mode = "nearest", scale_factor = self.upsample })
        end
        local out = self.reflection_pad(x_in)
        out = self.conv2d(out)
        return out
    end

    -- class TransformerNet(torch.nn.Module):
    local TransformerNet = nn.Module:extend("TransformerNet")
    function TransformerNet:init()
        -- Initial convolution layers
        -- self.conv1 = ConvLayer(3, 32, kernel_size=9, stride=1)
        self.conv1 = ConvLayer(3, C1, 9, 1)
        -- self.in1 = torch.nn.InstanceNorm2d(32, affine=True)
        self.in1 = nn.InstanceNorm2d(C1, { affine = true })
        self.conv2 = ConvLayer(C1, C2, 3, 2)
        self.in2 = nn.InstanceNorm2d(C2, { affine = true })
        self.conv3 = ConvLayer(C2, C3, 3, 2)
        self.in3 = nn.InstanceNorm2d(C3, { affine = true })
        -- Residual layers
        self.res1 = ResidualBlock(C3)
        self.res2 = ResidualBlock(C3)
        self.res3 = ResidualBlock(C3)
        self.res4 = ResidualBlock(C3)
        self.res5 = ResidualBlock(C3)
        -- Upsampling Layers
        -- self.deconv1 = UpsampleConvLayer(128, 64, kernel_size=3, stride=1, upsample=2)
        self.deconv1 = UpsampleConvLayer(C3, C2, 3, 1, 2)
        self.in4 = nn.InstanceNorm2d(C2, { affine = true })
        self.deconv2 = UpsampleConvLayer(C2, C1, 3, 1, 2)
        self.in5 = nn.InstanceNorm2d(C1, { affine = true })
        self.deconv3 = ConvLayer(C1, 3, 9, 1)
        -- Non-linearities
        self.relu = nn.ReLU()
    end

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

    -- ---- utils.py ----
    local utils = {}
    function utils.gram_matrix(y)
        -- (b, ch, h, w) = y.size()
        local b, ch, h, w = unpack(y:size())
        local features = y:view(b, ch, w * h)
        -- features_t = features.transpose(1, 2)
        local features_t = features:transpose(2, 3)
        local gram = features:bmm(features_t) / (ch * h * w)
        return gram
    end

    function utils.normalize_batch(batch)
        -- normalize using imagenet mean and std
        -- mean = batch.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
        local mean = batch:new_tensor({ 0.485, 0.456, 0.406 }):view(-1, 1, 1)
        local std = batch:new_tensor({ 0.229, 0.224, 0.225 }):view(-1, 1, 1)
        batch = batch:div_(255.0)
        return (batch - mean) / std
    end

    -- ---- vgg.py: models.vgg16(...).features shrunk: its 23 first layers (conv, relu,
    -- maxpool at VGG16's places) with 4 and 8 channels and random weights ----
    local function vgg16_features()
        local cfg = { 4, 4, "M", 8, 8, "M", 8, 8, 8, "M", 8, 8, 8 }
        local layers, in_channels = {}, 3
        for _, v in ipairs(cfg) do
            if v == "M" then
                layers[#layers + 1] = nn.MaxPool2d({ kernel_size = 2, stride = 2 })
            else
                layers[#layers + 1] = nn.Conv2d(in_channels, v, { kernel_size = 3, padding = 1 })
                layers[#layers + 1] = nn.ReLU({ inplace = true })
                in_channels = v
            end
        end
        return nn.Sequential(unpack(layers))
    end

    -- class Vgg16(torch.nn.Module):
    local Vgg16 = nn.Module:extend("Vgg16")
    -- def __init__(self, requires_grad=False):
    function Vgg16:init(requires_grad)
        -- vgg_pretrained_features = models.vgg16(weights=models.VGG16_Weights.IMAGENET1K_V1).features
        local vgg_pretrained_features = vgg16_features()
        assert.are.equal(23, #vgg_pretrained_features)
        self.slice1 = nn.Sequential()
        self.slice2 = nn.Sequential()
        self.slice3 = nn.Sequential()
        self.slice4 = nn.Sequential()
        -- for x in range(4):
        for x = 1, 4 do
            -- self.slice1.add_module(str(x), vgg_pretrained_features[x])
            self.slice1:add_module(tostring(x), vgg_pretrained_features[x])
        end
        -- for x in range(4, 9):
        for x = 5, 9 do
            self.slice2:add_module(tostring(x), vgg_pretrained_features[x])
        end
        for x = 10, 16 do
            self.slice3:add_module(tostring(x), vgg_pretrained_features[x])
        end
        for x = 17, 23 do
            self.slice4:add_module(tostring(x), vgg_pretrained_features[x])
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
        local vgg_outputs = namedtuple("VggOutputs", { "relu1_2", "relu2_2", "relu3_3", "relu4_3" })
        local out = vgg_outputs(h_relu1_2, h_relu2_2, h_relu3_3, h_relu4_3)
        return out
    end

    it("utils.gram_matrix and utils.normalize_batch (div_ in place), against PyTorch", function()
        -- x = torch.arange(24.).view(2, 3, 2, 2) * 10
        local x = tide.arange(24):float():view(2, 3, 2, 2) * 10
        local y = utils.normalize_batch(x)
        -- batch.div_(255.0) divided the caller's tensor too, as in PyTorch
        assert_close({ { 0.0, 0.03921568766236305 }, { 0.0784313753247261, 0.11764705926179886 } },
            x[1][1], 1e-6, "x after normalize_batch")
        assert_close({ { 1.6813944578170776, 1.8556864261627197 }, { 2.0299782752990723, 2.204270362854004 } },
            y[2][3], 1e-5, "normalize_batch")
        local g = utils.gram_matrix(y)
        assert.are.same({ 2, 3, 3 }, g.shape)
        assert_close({ { { 1.1666998863220215, 0.6780151724815369, 0.1046634316444397 },
                { 0.6780151724815369, 0.39642468094825745, 0.06588003039360046 },
                { 0.1046634316444397, 0.06588003039360046, 0.020025048404932022 } },
            { { 0.024756351485848427, 0.07894856482744217, 0.13803254067897797 },
                { 0.07894856482744217, 0.3650396764278412, 0.6784650683403015 },
                { 0.13803254067897797, 0.6784650683403015, 1.2708567380905151 } } }, g, 1e-5,
            "gram_matrix")
    end)

    it("ConvLayer, UpsampleConvLayer (interpolate nearest, scale_factor=2), InstanceNorm2d(affine=True)",
        function()
            local up = UpsampleConvLayer(2, 1, 3, 1, 2)
            -- with torch.no_grad(): weight.copy_(torch.arange(18.).view(1,2,3,3)/10); bias.fill_(0.5)
            tide.no_grad(function()
                up.conv2d.weight:copy_(tide.arange(18):float():view(1, 2, 3, 3) / 10)
                up.conv2d.bias:fill_(0.5)
            end)
            local out = up(tide.arange(8):float():view(1, 2, 2, 2))
            assert.are.same({ 1, 1, 4, 4 }, out.shape)
            -- PyTorch 1.13's numbers
            assert_close({ { 47.3, 53.0, 58.1, 62.6 }, { 61.1, 66.8, 71.9, 76.4 },
                { 71.3, 77.0, 82.1, 86.6 }, { 77.9, 83.6, 88.7, 93.2 } }, out[1][1], 1e-5, "upsample conv")
            local inorm = nn.InstanceNorm2d(1, { affine = true })
            tide.no_grad(function()
                inorm.weight:fill_(2)
                inorm.bias:fill_(0.1)
            end)
            assert_close({ { -3.7897744178771973, -2.904675245285034, -2.112745523452759, -1.4139841794967651 },
                { -1.6469042301177979, -0.7618057727813721, 0.030124109238386154, 0.7288859486579895 },
                { -0.06304389983415604, 0.8220539689064026, 1.6139838695526123, 2.3127455711364746 },
                { 0.9618054032325745, 1.8469043970108032, 2.638834238052368, 3.3375961780548096 } },
                inorm(out)[1][1], 1e-5, "instance norm")
            -- InstanceNorm2d keeps no running stats by default: its state is weight and bias
            local keys = {}
            for k in pairs(inorm:state_dict()) do
                keys[#keys + 1] = k
            end
            table.sort(keys)
            assert.are.same({ "bias", "weight" }, keys)
            -- ConvLayer(1, 1, kernel_size=3, stride=2): reflection pad 1, then a stride-2 conv
            local cl = ConvLayer(1, 1, 3, 2)
            tide.no_grad(function()
                cl.conv2d.weight:copy_(tide.arange(9):float():view(1, 1, 3, 3) / 10 - 0.4)
                cl.conv2d.bias:fill_(0)
            end)
            assert_close({ { 0.0, 0.6 }, { 7.2, 7.8 } }, cl(tide.arange(16):float():view(1, 1, 4, 4))[1][1], 1e-5,
                "ConvLayer")
        end)

    it("train: TransformerNet, Vgg16 features by name, content + style mse_loss, Adam; then stylize",
        function()
            local batch_size, image_size, epochs, lr = 2, 16, 3, 1e-3
            local content_weight, style_weight, log_interval = 1e5, 1e10, 1
            -- device = torch.device("cpu")
            local device = tide.device("cpu")
            -- np.random.seed(args.seed); torch.manual_seed(args.seed)
            tide.manual_seed(42)

            -- transforms.ToTensor(), transforms.Lambda(lambda x: x.mul(255)): 4 random images
            local images = tide.rand(4, 3, image_size, image_size):mul(255)
            -- train_dataset = datasets.ImageFolder(args.dataset, transform)
            local train_dataset = tide.data.TensorDataset(images, tide.zeros(4, { dtype = tide.int64 }))
            -- train_loader = DataLoader(train_dataset, batch_size=args.batch_size)
            local train_loader = tide.data.DataLoader(train_dataset, { batch_size = batch_size })

            -- transformer = TransformerNet().to(device)
            local transformer = TransformerNet():to(device)
            -- optimizer = Adam(transformer.parameters(), args.lr)
            local optimizer = optim.Adam(transformer:parameters(), lr)
            local mse_loss = nn.MSELoss()

            -- vgg = Vgg16(requires_grad=False).to(device)
            local vgg = Vgg16(false):to(device)
            -- the slices hold VGG16's layers 0-3, 4-8, 9-15, 16-22 under those names (1-based)
            assert.are.same({ 4, 5, 7, 7 }, { #vgg.slice1, #vgg.slice2, #vgg.slice3, #vgg.slice4 })
            assert.is_true(isinstance(vgg.slice2[1], nn.MaxPool2d))
            assert.are.equal(vgg.slice2["5"], vgg.slice2[1])
            assert.is_true(isinstance(vgg.slice4[-1], nn.ReLU))
            for _, p in ipairs(vgg:parameters()) do
                assert.is_false(p.requires_grad)
            end
            -- style = utils.load_image(args.style_image, size=args.style_size); style = style_transform(style)
            local style = tide.rand(3, image_size, image_size):mul(255)
            -- style = style.repeat(args.batch_size, 1, 1, 1).to(device)
            -- GAP: repeat is a Lua keyword (t:repeat(...) does not parse): PyTorch's Tensor.repeat
            -- is tide's tile
            style = style:tile(batch_size, 1, 1, 1):to(device)
            assert.are.same({ batch_size, 3, image_size, image_size }, style.shape)

            local features_style = vgg(utils.normalize_batch(style))
            assert.are.same({ batch_size, 4, 16, 16 }, features_style.relu1_2.shape)
            assert.are.same({ batch_size, 8, 2, 2 }, features_style.relu4_3.shape)
            -- gram_style = [utils.gram_matrix(y) for y in features_style]
            local gram_style = {}
            for i, y in ipairs(features_style) do
                gram_style[i] = utils.gram_matrix(y)
            end
            assert.are.same({ batch_size, 8, 8 }, gram_style[2].shape)

            local epoch_totals = {}
            -- for e in range(args.epochs):
            for e = 0, epochs - 1 do
                transformer:train()
                local agg_content_loss = 0.
                local agg_style_loss = 0.
                local count = 0
                local batch_id = 0
                -- for batch_id, (x, _) in enumerate(train_loader):
                for x, _ in train_loader:iter() do
                    -- n_batch = len(x)
                    local n_batch = #x
                    count = count + n_batch
                    optimizer:zero_grad()

                    x = x:to(device)
                    local y = transformer(x)
                    assert.are.same(x.shape, y.shape)

                    y = utils.normalize_batch(y)
                    x = utils.normalize_batch(x)

                    local features_y = vgg(y)
                    local features_x = vgg(x)

                    -- content_loss = args.content_weight * mse_loss(features_y.relu2_2, features_x.relu2_2)
                    local content_loss = content_weight * mse_loss(features_y.relu2_2, features_x.relu2_2)

                    local style_loss = 0.
                    -- for ft_y, gm_s in zip(features_y, gram_style):
                    for i = 1, #features_y do
                        local ft_y, gm_s = features_y[i], gram_style[i]
                        local gm_y = utils.gram_matrix(ft_y)
                        -- style_loss += mse_loss(gm_y, gm_s[:n_batch, :, :])
                        style_loss = style_loss + mse_loss(gm_y, gm_s[{ { 1, n_batch }, {}, {} }])
                    end
                    -- style_loss *= args.style_weight
                    style_loss = style_loss * style_weight

                    local total_loss = content_loss + style_loss
                    total_loss:backward()
                    optimizer:step()

                    -- agg_content_loss += content_loss.item()
                    agg_content_loss = agg_content_loss + content_loss:item()
                    agg_style_loss = agg_style_loss + style_loss:item()

                    if (batch_id + 1) % log_interval == 0 then
                        -- mesg = "{}\tEpoch {}:\t[{}/{}]\tcontent: {:.6f}\tstyle: {:.6f}\ttotal: {:.6f}".format(
                        --     time.ctime(), e + 1, count, len(train_dataset), ...)
                        local mesg = string.format("%s\tEpoch %d:\t[%d/%d]\tcontent: %.6f\tstyle: %.6f\ttotal: %.6f",
                            os.date(), e + 1, count, train_dataset:len(),
                            agg_content_loss / (batch_id + 1),
                            agg_style_loss / (batch_id + 1),
                            (agg_content_loss + agg_style_loss) / (batch_id + 1))
                        assert.is_truthy(mesg:find("Epoch " .. (e + 1), 1, true))
                    end
                    batch_id = batch_id + 1
                end
                assert.are.equal(4, count)
                assert_finite(agg_content_loss, "content loss")
                assert_finite(agg_style_loss, "style loss")
                epoch_totals[e + 1] = agg_content_loss + agg_style_loss
            end
            -- the loader's batches are copies: normalize_batch's div_ left the dataset as it was
            assert.is_true(images:max():item() > 1)
            -- the frozen VGG got no gradients; the transformer trained
            assert.is_nil(vgg.slice1[1].weight.grad)
            assert.is_not_nil(transformer.res3.conv1.conv2d.weight.grad)
            assert.is_true(epoch_totals[epochs] < epoch_totals[1],
                "fast neural style loss fell: " .. epoch_totals[1] .. " -> " .. epoch_totals[epochs])

            -- save model
            -- transformer.eval().cpu()
            transformer:eval():cpu()
            local save_model_path = os.tmpname()
            -- torch.save(transformer.state_dict(), save_model_path)
            tide.save(transformer:state_dict(), save_model_path)

            -- ---- stylize ----
            -- content_image = content_transform(content_image); content_image.unsqueeze(0).to(device)
            local content_image = tide.rand(3, 12, 12):mul(255):unsqueeze(1):to(device)
            local output
            -- with torch.no_grad():
            tide.no_grad(function()
                local style_model = TransformerNet()
                local state_dict = tide.load(save_model_path)
                -- an old checkpoint's InstanceNorm keys, which the script drops
                state_dict["in1.running_mean"] = tide.zeros(C1)
                state_dict["res2.in2.running_var"] = tide.ones(C3)
                -- remove saved deprecated running_* keys in InstanceNorm from the checkpoint
                -- for k in list(state_dict.keys()):
                local keys = {}
                for k in pairs(state_dict) do
                    keys[#keys + 1] = k
                end
                for _, k in ipairs(keys) do
                    -- if re.search(r'in\d+\.running_(mean|var)$', k):
                    if k:find("in%d+%.running_mean$") or k:find("in%d+%.running_var$") then
                        -- del state_dict[k]
                        state_dict[k] = nil
                    end
                end
                style_model:load_state_dict(state_dict)
                style_model:to(device)
                style_model:eval()
                -- output = style_model(content_image).cpu()
                output = style_model(content_image):cpu()
                assert.is_true(tide.allclose(output, transformer(content_image), { atol = 1e-5 }))
            end)
            os.remove(save_model_path)
            assert.are.same({ 1, 3, 12, 12 }, output.shape)
            assert.is_nil(output.grad_fn)
            -- utils.save_image(args.output_image, output[0]):
            -- img = data.clone().clamp(0, 255).numpy(); img = img.transpose(1, 2, 0).astype("uint8")
            local img = output[1]:clone():clamp(0, 255):permute(2, 3, 1):to(tide.uint8)
            assert.are.same({ 12, 12, 3 }, img.shape)
        end)
end)

---------------------------------------------------------------------------------------------
-- 2. Neural Transfer Using PyTorch (advanced_source/neural_style_tutorial.py)
---------------------------------------------------------------------------------------------
describe("neural_style_tutorial.py", function()
    -- class ContentLoss(nn.Module):
    local ContentLoss = nn.Module:extend("ContentLoss")
    -- def __init__(self, target,):
    function ContentLoss:init(target)
        -- we 'detach' the target content from the tree used to dynamically compute the gradient
        self.target = target:detach()
    end

    function ContentLoss:forward(input)
        self.loss = F.mse_loss(input, self.target)
        return input
    end

    local function gram_matrix(input)
        -- a, b, c, d = input.size()  # a=batch size(=1)
        local a, b, c, d = unpack(input:size())
        -- features = input.view(a * b, c * d)  # resize F_XL into \hat F_XL
        local features = input:view(a * b, c * d)
        -- G = torch.mm(features, features.t())  # compute the gram product
        local G = tide.mm(features, features:t())
        -- we 'normalize' the values of the gram matrix by dividing by the number of element
        return G:div(a * b * c * d)
    end

    -- class StyleLoss(nn.Module):
    local StyleLoss = nn.Module:extend("StyleLoss")
    function StyleLoss:init(target_feature)
        self.target = gram_matrix(target_feature):detach()
    end

    function StyleLoss:forward(input)
        local G = gram_matrix(input)
        self.loss = F.mse_loss(G, self.target)
        return input
    end

    -- class Normalization(nn.Module):
    local Normalization = nn.Module:extend("Normalization")
    function Normalization:init(mean, std)
        -- .view the mean and std to make them [C x 1 x 1] so that they can directly work with
        -- image Tensor of shape [B x C x H x W].
        -- self.mean = torch.tensor(mean).view(-1, 1, 1)
        self.mean = tide.tensor(mean):view(-1, 1, 1)
        self.std = tide.tensor(std):view(-1, 1, 1)
    end

    function Normalization:forward(img)
        -- normalize img
        return (img - self.mean) / self.std
    end

    -- Python's `x in list`
    local function contains(list, x)
        for _, v in ipairs(list) do
            if v == x then
                return true
            end
        end
        return false
    end

    local device = tide.device("cpu")

    -- desired depth layers to compute style/content losses :
    local content_layers_default = { "conv_4" }
    local style_layers_default = { "conv_1", "conv_2", "conv_3", "conv_4", "conv_5" }

    -- def get_style_model_and_losses(cnn, normalization_mean, normalization_std, style_img,
    --     content_img, content_layers=content_layers_default, style_layers=style_layers_default):
    local function get_style_model_and_losses(cnn, normalization_mean, normalization_std,
                                              style_img, content_img,
                                              content_layers, style_layers)
        content_layers = content_layers or content_layers_default
        style_layers = style_layers or style_layers_default
        -- cnn = copy.deepcopy(cnn)
        cnn = tide.deepcopy(cnn)

        -- normalization module
        local normalization = Normalization(normalization_mean, normalization_std):to(device)

        -- just in order to have an iterable access to or list of content/syle losses
        local content_losses = {}
        local style_losses = {}

        -- assuming that cnn is a nn.Sequential, so we make a new nn.Sequential
        -- to put in modules that are supposed to be activated sequentially
        local model = nn.Sequential(normalization)

        local i = 0 -- increment every time we see a conv
        -- for layer in cnn.children():
        for _, layer in ipairs(cnn:children()) do
            local name
            if isinstance(layer, nn.Conv2d) then
                i = i + 1
                -- name = 'conv_{}'.format(i)
                name = string.format("conv_%d", i)
            elseif isinstance(layer, nn.ReLU) then
                name = string.format("relu_%d", i)
                -- The in-place version doesn't play very nicely with the ContentLoss
                -- and StyleLoss we insert below. So we replace with out-of-place ones here.
                -- layer = nn.ReLU(inplace=False)
                layer = nn.ReLU({ inplace = false })
            elseif isinstance(layer, nn.MaxPool2d) then
                name = string.format("pool_%d", i)
            elseif isinstance(layer, nn.BatchNorm2d) then
                name = string.format("bn_%d", i)
            else
                -- raise RuntimeError('Unrecognized layer: {}'.format(layer.__class__.__name__))
                error(string.format("Unrecognized layer: %s", layer.__name))
            end

            model:add_module(name, layer)

            -- if name in content_layers:
            if contains(content_layers, name) then
                -- add content loss:
                local target = model(content_img):detach()
                local content_loss = ContentLoss(target)
                -- model.add_module("content_loss_{}".format(i), content_loss)
                model:add_module(string.format("content_loss_%d", i), content_loss)
                -- content_losses.append(content_loss)
                content_losses[#content_losses + 1] = content_loss
            end

            if contains(style_layers, name) then
                -- add style loss:
                local target_feature = model(style_img):detach()
                local style_loss = StyleLoss(target_feature)
                model:add_module(string.format("style_loss_%d", i), style_loss)
                style_losses[#style_losses + 1] = style_loss
            end
        end

        -- now we trim off the layers after the last content and style losses
        -- for i in range(len(model) - 1, -1, -1):
        for k = #model, 1, -1 do
            i = k -- Python's loop variable outlives the loop
            if isinstance(model[i], ContentLoss) or isinstance(model[i], StyleLoss) then
                break
            end
        end

        -- model = model[:(i + 1)]
        model = model[{ { 1, i } }]

        return model, style_losses, content_losses
    end

    -- def get_input_optimizer(input_img):
    local function get_input_optimizer(input_img)
        -- this line to show that input is a parameter that requires a gradient
        -- optimizer = optim.LBFGS([input_img])
        local optimizer = optim.LBFGS({ input_img })
        return optimizer
    end

    -- def run_style_transfer(cnn, normalization_mean, normalization_std, content_img, style_img,
    --                        input_img, num_steps=300, style_weight=1000000, content_weight=1):
    local function run_style_transfer(cnn, normalization_mean, normalization_std,
                                      content_img, style_img, input_img, num_steps,
                                      style_weight, content_weight, log)
        num_steps = num_steps or 300
        style_weight = style_weight or 1000000
        content_weight = content_weight or 1
        -- print('Building the style transfer model..')
        local model, style_losses, content_losses = get_style_model_and_losses(cnn,
            normalization_mean, normalization_std, style_img, content_img)

        -- We want to optimize the input and not the model parameters so we
        -- update all the requires_grad fields accordingly
        input_img:requires_grad_(true)
        -- We also put the model in evaluation mode, so that specific layers
        -- such as dropout or batch normalization layers behave correctly.
        model:eval()
        model:requires_grad_(false)

        local optimizer = get_input_optimizer(input_img)

        -- print('Optimizing..')
        local run = { 0 }
        -- while run[0] <= num_steps:
        while run[1] <= num_steps do
            local function closure()
                -- correct the values of updated input image
                -- with torch.no_grad():
                tide.no_grad(function()
                    input_img:clamp_(0, 1)
                end)

                optimizer:zero_grad()
                model(input_img)
                local style_score = 0
                local content_score = 0

                -- for sl in style_losses:
                for _, sl in ipairs(style_losses) do
                    -- style_score += sl.loss
                    style_score = style_score + sl.loss
                end
                for _, cl in ipairs(content_losses) do
                    content_score = content_score + cl.loss
                end

                -- style_score *= style_weight
                style_score = style_score * style_weight
                content_score = content_score * content_weight

                local loss = style_score + content_score
                loss:backward()

                -- run[0] += 1
                run[1] = run[1] + 1
                log[#log + 1] = loss:item()
                if run[1] % 50 == 0 then
                    -- print('Style Loss : {:4f} Content Loss: {:4f}'.format(style_score.item(), content_score.item()))
                    local line = string.format("Style Loss : %4f Content Loss: %4f", style_score:item(),
                        content_score:item())
                    assert.is_truthy(line:find("Style Loss", 1, true))
                end

                return style_score + content_score
            end

            -- optimizer.step(closure)
            optimizer:step(closure)
        end

        -- a last correction...
        -- with torch.no_grad():
        tide.no_grad(function()
            input_img:clamp_(0, 1)
        end)

        return input_img, model, style_losses, content_losses
    end

    -- models.vgg19(pretrained=True).features shrunk: VGG19's first blocks (conv, ReLU(inplace),
    -- MaxPool2d) with a BatchNorm2d (vgg19_bn's) and 4 channels
    local function tiny_vgg19_features()
        return nn.Sequential(
            nn.Conv2d(3, 4, { kernel_size = 3, padding = 1 }), nn.ReLU({ inplace = true }),
            nn.Conv2d(4, 4, { kernel_size = 3, padding = 1 }), nn.BatchNorm2d(4), nn.ReLU({ inplace = true }),
            nn.MaxPool2d({ kernel_size = 2, stride = 2 }),
            nn.Conv2d(4, 4, { kernel_size = 3, padding = 1 }), nn.ReLU({ inplace = true }),
            nn.Conv2d(4, 4, { kernel_size = 3, padding = 1 }), nn.ReLU({ inplace = true }),
            nn.MaxPool2d({ kernel_size = 2, stride = 2 }),
            nn.Conv2d(4, 4, { kernel_size = 3, padding = 1 }), nn.ReLU({ inplace = true }),
            nn.Conv2d(4, 4, { kernel_size = 3, padding = 1 }), nn.ReLU({ inplace = true }),
            nn.MaxPool2d({ kernel_size = 2, stride = 2 }))
    end

    it("gram_matrix and Normalization against PyTorch", function()
        local t = tide.arange(12):float():view(1, 3, 2, 2) / 10
        assert_close({ { 0.011666666716337204, 0.03166666626930237, 0.05166666582226753 },
            { 0.03166666626930237, 0.10499999672174454, 0.1783333420753479 },
            { 0.05166666582226753, 0.1783333420753479, 0.3050000071525574 } }, gram_matrix(t), 1e-6, "gram")
        -- cnn_normalization_mean = torch.tensor([0.485, 0.456, 0.406]).to(device)
        local cnn_normalization_mean = tide.tensor({ 0.485, 0.456, 0.406 }):to(device)
        local cnn_normalization_std = tide.tensor({ 0.229, 0.224, 0.225 }):to(device)
        -- Normalization(mean, std) with tensors: torch.tensor(t) copies them
        local norm = Normalization(cnn_normalization_mean, cnn_normalization_std)
        assert.are.same({ 3, 1, 1 }, norm.mean.shape)
        assert_close({ -2.1179039478302, -0.2499999701976776, 1.7511112689971924 },
            norm(t)[{ 1, {}, 1, 1 }], 1e-6, "Normalization")
        -- a plain tensor field: no parameter, no buffer (as in the tutorial)
        assert.are.equal(0, #norm:parameters())
        assert.is_false(rawequal(norm.mean:data_ptr(), cnn_normalization_mean:data_ptr()))
    end)

    it("get_style_model_and_losses (add_module by name, model[:(i + 1)]) and LBFGS on the image", function()
        tide.manual_seed(3)
        local imsize = 16
        -- style_img = image_loader("./data/images/neural-style/picasso.jpg"): [1, 3, imsize, imsize]
        local style_img = tide.rand(1, 3, imsize, imsize)
        local content_img = tide.rand(1, 3, imsize, imsize)
        -- assert style_img.size() == content_img.size()
        assert.are.same(style_img:size(), content_img:size())

        -- cnn = models.vgg19(pretrained=True).features.to(device).eval()
        local cnn = tiny_vgg19_features():to(device):eval()
        local cnn_normalization_mean = tide.tensor({ 0.485, 0.456, 0.406 }):to(device)
        local cnn_normalization_std = tide.tensor({ 0.229, 0.224, 0.225 }):to(device)

        local model, style_losses, content_losses = get_style_model_and_losses(cnn,
            cnn_normalization_mean, cnn_normalization_std, style_img, content_img)
        -- the model's layers by name, trimmed after style_loss_5 (the last loss module)
        local names = {}
        -- for name, _ in model.named_children():
        for name in model:named_children() do
            names[#names + 1] = name
        end
        assert.are.same({ "1", "conv_1", "style_loss_1", "relu_1", "conv_2", "style_loss_2", "bn_2",
            "relu_2", "pool_2", "conv_3", "style_loss_3", "relu_3", "conv_4", "content_loss_4",
            "style_loss_4", "relu_4", "pool_4", "conv_5", "style_loss_5" }, names)
        assert.are.equal(19, #model)
        assert.is_true(isinstance(model[-1], StyleLoss))
        assert.is_true(isinstance(model[1], Normalization))
        assert.are.equal(5, #style_losses)
        assert.are.equal(1, #content_losses)
        assert.are.equal(model.content_loss_4, content_losses[1])
        -- the copy's ReLUs are new, out of place; the cnn's own layers stay as they were
        assert.is_false(model.relu_1.inplace)
        assert.is_true(cnn[2].inplace)
        assert.is_false(rawequal(model.conv_1, cnn[1]))
        -- the style targets are the detached gram matrices of the style image's features
        assert.is_false(style_losses[1].target.requires_grad)
        assert.are.same({ 4, 4 }, style_losses[3].target.shape)

        -- a layer the walk does not know raises RuntimeError('Unrecognized layer: ...')
        local ok, err = pcall(get_style_model_and_losses, nn.Sequential(nn.Tanh()),
            cnn_normalization_mean, cnn_normalization_std, style_img, content_img)
        assert.is_false(ok)
        assert.is_truthy(tostring(err):find("Unrecognized layer: Tanh", 1, true))

        -- input_img = content_img.clone()
        local input_img = content_img:clone()
        local log = {}
        -- output = run_style_transfer(cnn, cnn_normalization_mean, cnn_normalization_std,
        --                             content_img, style_img, input_img)
        local output, m2 = run_style_transfer(cnn, cnn_normalization_mean, cnn_normalization_std,
            content_img, style_img, input_img, 20, nil, nil, log)
        assert.are.equal(input_img, output)
        assert.is_true(input_img.requires_grad)
        assert.is_true(input_img.is_leaf)
        assert.is_false(m2.training)
        for _, p in ipairs(m2:parameters()) do
            assert.is_false(p.requires_grad)
            assert.is_nil(p.grad)
        end
        -- the image stays in [0, 1]
        assert.is_true(output:min():item() >= 0 and output:max():item() <= 1)
        assert.is_true(#log > 20, "LBFGS evaluated the closure " .. #log .. " times")
        for k = 1, #log do
            assert_finite(log[k], "style transfer loss")
        end
        assert.is_true(log[#log] < log[1], "style transfer loss fell: " .. log[1] .. " -> " .. log[#log])
        -- the old tutorial's form: input_img.data.clamp_(0, 1) clamps the image itself
        input_img.data:add_(2):clamp_(0, 1)
        assert.are.equal(1, input_img:min():item())
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. reinforcement_learning/reinforce.py
---------------------------------------------------------------------------------------------
describe("reinforcement_learning/reinforce.py", function()
    -- a CartPole stand-in: 4 numbers of state, reward 1 a step; the pole falls (terminated)
    -- when the action is not the one the state's first number asks for; truncated at 20 steps
    local FakeEnv = {}
    FakeEnv.__index = FakeEnv
    local function make_env()
        return setmetatable({ spec = { reward_threshold = 15 } }, FakeEnv)
    end

    function FakeEnv:reset()
        self.t = 0
        self.state = { math.random() * 2 - 1, math.random() - 0.5, math.random() - 0.5, math.random() - 0.5 }
        return self.state, {}
    end

    function FakeEnv:step(action)
        self.t = self.t + 1
        local wanted = self.state[1] > 0 and 2 or 1
        local terminated = action ~= wanted and self.t > 1
        local truncated = self.t >= 20
        self.state = { math.random() * 2 - 1, math.random() - 0.5, math.random() - 0.5, math.random() - 0.5 }
        return self.state, 1.0, terminated, truncated, {}
    end

    it("Policy with Dropout, Categorical, saved_log_probs, normalized returns, torch.cat(policy_loss).sum()",
        function()
            local gamma, log_interval = 0.99, 10
            local Categorical = tide.distributions.Categorical
            -- env = gym.make('CartPole-v1', render_mode=render_mode); env.reset(seed=args.seed)
            math.randomseed(543)
            local env = make_env()
            env:reset()
            -- torch.manual_seed(args.seed)
            tide.manual_seed(543)

            -- class Policy(nn.Module):
            local Policy = nn.Module:extend("Policy")
            function Policy:init()
                self.affine1 = nn.Linear(4, 128)
                -- self.dropout = nn.Dropout(p=0.6)
                self.dropout = nn.Dropout({ p = 0.6 })
                self.affine2 = nn.Linear(128, 2)

                self.saved_log_probs = {}
                self.rewards = {}
            end

            function Policy:forward(x)
                x = self.affine1(x)
                x = self.dropout(x)
                x = F.relu(x)
                local action_scores = self.affine2(x)
                -- return F.softmax(action_scores, dim=1)
                return F.softmax(action_scores, { dim = 2 })
            end

            local policy = Policy()
            -- optimizer = optim.Adam(policy.parameters(), lr=1e-2)
            local optimizer = optim.Adam(policy:parameters(), { lr = 1e-2 })
            -- eps = np.finfo(np.float32).eps.item()
            local eps = tide.finfo(tide.float32).eps
            assert.are.equal(1.1920928955078125e-07, eps)

            local function select_action(state)
                -- state = torch.from_numpy(state).float().unsqueeze(0)
                state = tide.tensor(state):float():unsqueeze(1)
                local probs = policy(state)
                assert.are.same({ 1, 2 }, probs.shape)
                local m = Categorical(probs)
                local action = m:sample()
                -- policy.saved_log_probs.append(m.log_prob(action))
                table.insert(policy.saved_log_probs, m:log_prob(action))
                return action:item()
            end

            local function finish_episode()
                local R = 0
                local policy_loss = {}
                -- returns = deque()
                local returns = {}
                -- for r in policy.rewards[::-1]:
                for k = #policy.rewards, 1, -1 do
                    local r = policy.rewards[k]
                    R = r + gamma * R
                    -- returns.appendleft(R)
                    table.insert(returns, 1, R)
                end
                returns = tide.tensor(returns)
                returns = (returns - returns:mean()) / (returns:std() + eps)
                -- for log_prob, R in zip(policy.saved_log_probs, returns):
                for k = 1, #policy.saved_log_probs do
                    local log_prob, Rk = policy.saved_log_probs[k], returns[k]
                    -- policy_loss.append(-log_prob * R)
                    table.insert(policy_loss, -log_prob * Rk)
                end
                optimizer:zero_grad()
                policy_loss = tide.cat(policy_loss):sum()
                policy_loss:backward()
                optimizer:step()
                -- del policy.rewards[:]
                for k = #policy.rewards, 1, -1 do
                    policy.rewards[k] = nil
                end
                -- del policy.saved_log_probs[:]
                for k = #policy.saved_log_probs, 1, -1 do
                    policy.saved_log_probs[k] = nil
                end
                return returns, policy_loss
            end

            -- the returns' normalization against PyTorch: rewards [1, 1, 1, 0, 1]
            do
                local saved = policy:state_dict()
                local before = {}
                for k, v in pairs(saved) do
                    before[k] = v:clone()
                end
                policy.rewards = { 1.0, 1.0, 1.0, 0.0, 1.0 }
                for _ = 1, 5 do
                    select_action({ 0.1, 0.2, 0.3, 0.4 })
                end
                local returns, loss = finish_episode()
                assert.are.equal("float32", returns.dtype)
                assert_close({ 1.3771384954452515, 0.6171792149543762, -0.15045639872550964,
                    -0.9258459210395813, -0.9180145263671875 }, returns, 1e-5, "normalized returns")
                assert.are.same({}, loss.shape)
                assert.are.equal(0, #policy.rewards)
                assert.are.equal(0, #policy.saved_log_probs)
                policy:load_state_dict(before)
            end

            local first_rewards, last_rewards = {}, {}
            local running_reward = 10
            local solved = false
            -- for i_episode in count(1):
            for i_episode = 1, 120 do
                local state = env:reset()
                local ep_reward = 0
                local t = 1
                -- for t in range(1, 10000):  # Don't infinite loop while learning
                while t < 10000 do
                    local action = select_action(state)
                    local reward, terminated, truncated
                    -- state, reward, terminated, truncated, _ = env.step(action)
                    state, reward, terminated, truncated = env:step(action)
                    -- policy.rewards.append(reward)
                    table.insert(policy.rewards, reward)
                    ep_reward = ep_reward + reward
                    if terminated or truncated then
                        break
                    end
                    t = t + 1
                end
                assert.is_true(t >= 2)

                running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
                finish_episode()
                if i_episode <= 20 then
                    first_rewards[#first_rewards + 1] = ep_reward
                end
                last_rewards[#last_rewards + 1] = ep_reward
                if #last_rewards > 20 then
                    table.remove(last_rewards, 1)
                end
                if i_episode % log_interval == 0 then
                    -- print(f'Episode {i_episode}\tLast reward: {ep_reward:.2f}\tAverage reward: {running_reward:.2f}')
                    local line = string.format("Episode %d\tLast reward: %.2f\tAverage reward: %.2f", i_episode,
                        ep_reward, running_reward)
                    assert.is_truthy(line:find("Episode " .. i_episode, 1, true))
                end
                if running_reward > env.spec.reward_threshold then
                    solved = true
                    break
                end
            end
            local function mean(xs)
                local s = 0
                for _, x in ipairs(xs) do
                    s = s + x
                end
                return s / #xs
            end
            assert_finite(running_reward, "running reward")
            assert.is_true(solved or mean(last_rewards) > mean(first_rewards),
                "REINFORCE reward rose: " .. mean(first_rewards) .. " -> " .. mean(last_rewards))
        end)
end)

---------------------------------------------------------------------------------------------
-- the gaps these ports met, fixed (PyTorch 1.13's behaviour)
---------------------------------------------------------------------------------------------
describe("nn.Sequential as PyTorch's: layers are the children in order, whatever their names", function()
    it("add_module(name, m) and s.name = m append a layer that forward runs and #s counts", function()
        local s = nn.Sequential(nn.ReLU())
        -- s.add_module("conv_1", nn.Linear(2, 3)); s.tail = nn.Tanh()
        local lin = nn.Linear(2, 3)
        assert.are.equal(lin, s:add_module("conv_1", lin))
        s.tail = nn.Tanh()
        assert.are.equal(3, #s)
        assert.are.equal(lin, s[2])
        assert.are.equal(s.tail, s[3])
        assert.are.equal(s.tail, s[-1])
        local x = tide.randn(1, 2)
        -- forward runs all three: tanh(linear(relu(x)))
        assert.is_true(s(x):equal(tide.tanh(lin(F.relu(x)))))
        local keys = {}
        for k in pairs(s:state_dict()) do
            keys[#keys + 1] = k
        end
        table.sort(keys)
        assert.are.same({ "conv_1.bias", "conv_1.weight" }, keys)
        -- register_module is add_module; an existing name keeps its place (PyTorch's)
        local lin4 = nn.Linear(2, 4)
        s:register_module("conv_1", lin4)
        assert.are.equal(3, #s)
        assert.are.equal(lin4, s[2])
        assert.are.same({ 1, 4 }, s(x).shape)
        -- append names the next layer by its position: PyTorch's str(len(s)), 1-based
        s:append(nn.ReLU())
        assert.are.same({ "1", "conv_1", "tail", "4" }, s._modules)
        -- vgg.py's slices: add_module(str(x), features[x]) for x in 5..9 on an empty Sequential
        local feats = nn.Sequential(nn.ReLU(), nn.Tanh(), nn.Sigmoid())
        local slice2 = nn.Sequential()
        for k = 2, 3 do
            slice2:add_module(tostring(k), feats[k])
        end
        assert.are.equal(2, #slice2)
        assert.are.equal(feats[2], slice2[1])
        assert.are.equal(feats[3], slice2["3"])
    end)

    it("nn.Sequential({{name, m}, ...}) is PyTorch's Sequential(OrderedDict([...]))", function()
        local conv1, relu1 = nn.Conv2d(1, 2, 3), nn.ReLU()
        -- nn.Sequential(OrderedDict([('conv1', nn.Conv2d(1, 2, 3)), ('relu1', nn.ReLU())]))
        local s = nn.Sequential({ { "conv1", conv1 }, { "relu1", relu1 } })
        assert.are.equal(2, #s)
        assert.are.equal(conv1, s.conv1)
        assert.are.equal(relu1, s[2])
        assert.are.same({ 1, 2, 2, 2 }, s(tide.randn(1, 1, 4, 4)).shape)
        -- a Lua table of names has no order: it raises instead of making an empty Sequential
        assert.has_error(function() nn.Sequential({ conv1 = conv1 }) end,
            "tide: Sequential: got a table with the key conv1; a Lua table keeps no order, so " ..
            "named layers are a list of {name, module} pairs (PyTorch's OrderedDict): " ..
            "nn.Sequential({{\"conv1\", m1}, {\"relu1\", m2}})")
        assert.has_error(function() nn.Sequential({ { "a", conv1 }, relu1 }) end,
            "tide: Sequential: entry 2 is not a {name, module} pair; give all modules, or all " ..
            "{name, module} pairs (PyTorch's OrderedDict)")
    end)

    it("s[{{a, b}}] is PyTorch's s[a-1:b]: a Sequential of those layers under their names", function()
        local s = nn.Sequential(nn.ReLU())
        s:add_module("conv_1", nn.Linear(2, 3))
        s:add_module("style_loss_1", nn.Identity())
        s.tail = nn.Tanh()
        -- model = model[:(i + 1)]
        local t = s[{ { 1, 2 } }]
        assert.is_true(isinstance(t, nn.Sequential))
        assert.are.same({ "1", "conv_1" }, t._modules)
        assert.are.equal(s[2], t[2]) -- the same modules, as PyTorch's
        -- s[-2:], s[::2], s[1:2], s[:]
        assert.are.same({ "style_loss_1", "tail" }, s[{ { -2, -1 } }]._modules)
        assert.are.same({ "1", "style_loss_1" }, s[{ { 1, -1, 2 } }]._modules)
        assert.are.same({ "conv_1" }, s[{ { 2 } }]._modules)
        assert.are.equal(4, #s[{ {} }])
        -- past the end is cut off, an empty range is empty (Python's slices)
        assert.are.equal(4, #s[{ { 1, 10 } }])
        assert.are.equal(0, #s[{ { 3, 2 } }])
        local msg = "tide: Sequential: a slice is s[{{first, last}}] or s[{{first, last, step}}] " ..
            "(1-based, inclusive, negative from the end; step >= 1), as a tensor's first dim: " ..
            "PyTorch's s[:i] is s[{{1, i}}]"
        assert.has_error(function() return s[{ 1, 2 }] end, msg)
        assert.has_error(function() return s[{ { 1, 2 }, { 1 } }] end, msg)
        assert.has_error(function() return s[{ { 1, 4, 0 } }] end, msg)
        assert.are.equal(4, #s)
    end)

    it("pop renames the layers by position, insert needs numbered layers, s[i] = m past the end raises",
        function()
            local s = nn.Sequential(nn.ReLU())
            local lin = nn.Linear(2, 3)
            s:add_module("conv_1", lin)
            s.tail = nn.Tanh()
            -- PyTorch's del s[i]: the others renamed "0".."n-2" (here "1".."n-1")
            local relu = s[1]
            assert.are.equal(relu, s:pop(1))
            assert.are.same({ "1", "2" }, s._modules)
            assert.are.equal(lin, s[1])
            assert.are.equal(lin, s["1"])
            assert.is_nil(rawget(s, "conv_1"))
            assert.are.equal(2, #s)
            local x = tide.randn(1, 2)
            assert.is_true(s(x):equal(tide.tanh(lin(x))))
            -- numbered again, insert works
            s:insert(1, nn.ReLU())
            assert.are.same({ "1", "2", "3" }, s._modules)
            assert.are.equal(lin, s[2])
            s:add_module("named", nn.Identity())
            -- PyTorch 1.13's insert moves the children named str(k): a KeyError here
            assert.has_error(function() s:insert(1, nn.ReLU()) end,
                "tide: Sequential:insert: layer 4 is named \"named\", not \"4\"; insert renumbers " ..
                "layers named by their positions; build a new nn.Sequential (or append)")
            assert.are.equal(4, #s)
            -- s[i] = m past the layers raises (PyTorch's IndexError), leaving s as it was
            assert.has_error(function() s[5] = nn.ReLU() end,
                "tide: Sequential: s[5] = v: index out of range 1..4; add a layer with s:append(m)")
            assert.are.equal(4, #s)
            assert.is_nil(rawget(s, 5))
        end)
end)

describe("t:tile (PyTorch's repeat) copies", function()
    it("never a view of t nor one with stride 0, so in-place ops on it stay in it", function()
        local x = tide.tensor({ 1.0, 2.0 }, { dtype = tide.float32 })
        -- z = x.repeat(1); z.fill_(7): x stays [1, 2] in PyTorch
        local z = x:tile(1)
        z:fill_(7)
        assert.are.same({ 1, 2 }, x:tolist())
        -- style.repeat(args.batch_size, 1, 1, 1) then normalize_batch's div_: each copy its own
        local w = tide.tensor({ { 1.0, 2.0 } }, { dtype = tide.float32 }):tile(3, 1)
        assert.are.same({ 2, 1 }, w:stride())
        w[1]:fill_(0)
        assert.are.same({ { 0, 0 }, { 1, 2 }, { 1, 2 } }, w:tolist())
        w:div_(2)
        assert.are.same({ { 0, 0 }, { 0.5, 1 }, { 0.5, 1 } }, w:tolist())
        -- the gradient adds up over the copies
        local g = tide.tensor({ 1.0, 2.0 }, { dtype = tide.float32, requires_grad = true })
        g:tile(3):mul(tide.arange(6):float()):sum():backward()
        assert.are.same({ 6, 9 }, g.grad:tolist())
    end)
end)

describe("nn.ModuleList slices", function()
    it("ml[{{a, b}}] is PyTorch's ml[a-1:b]: a ModuleList of those modules, renumbered", function()
        local ml = nn.ModuleList({ nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 2), nn.Tanh() })
        -- for layer in self.layers[:-1]:
        local head = ml[{ { 1, -2 } }]
        assert.is_true(isinstance(head, nn.ModuleList))
        assert.are.equal(3, #head)
        assert.are.equal(ml[3], head[3])
        -- self.layers[1::2]
        local odd = ml[{ { 2, -1, 2 } }]
        assert.are.same({ "1", "2" }, odd._modules)
        assert.are.equal(ml[4], odd[2])
        assert.are.equal(4, #ml[{ {} }])
        assert.are.equal(0, #ml[{ { 4, 3 } }])
        assert.has_error(function() return ml[{ 1, 2 }] end,
            "tide: ModuleList: a slice is ml[{{first, last}}] or ml[{{first, last, step}}] " ..
            "(1-based, inclusive, negative from the end; step >= 1), as a tensor's first dim: " ..
            "PyTorch's ml[:-1] is ml[{{1, -2}}]")
        -- a negative index alone is still the module from the end
        assert.are.equal(ml[4], ml[-1])
    end)
end)
