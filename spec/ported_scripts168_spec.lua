-- ported_scripts168_spec.lua — utkuozbulak/pytorch-cnn-visualizations:
-- src/vanilla_backprop.py (VanillaBackprop: a backward hook on the first layer capturing
-- grad_in[0]), src/guided_backprop.py (GuidedBackprop: update_relus's backward hooks clamping
-- each ReLU's gradient with the forward outputs its forward hooks stored), src/smooth_grad.py
-- (generate_smooth_grad), src/gradcam.py (CamExtractor with register_hook on a conv output,
-- GradCam.generate_cam) and src/misc_functions.py's convert_to_grayscale (numpy there, tide
-- here), ported line for line at tiny sizes: a small AlexNet-like `features` (Conv2d / ReLU /
-- MaxPool2d) and `classifier` stand in for torchvision's pretrained AlexNet, weights and the
-- 1 x 3 x 16 x 16 image by formula, the values checked against PyTorch 1.13 running the same
-- classes. The Python line stands above each Lua line that differs from it. Class targets and
-- Sequential's module names are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional

local ported = require("spec.support.ported")
local class = ported.class

-- the stand-in for torchvision's models.alexnet(pretrained=True): features, a flatten, classifier
local TinyAlexNet = nn.Module:extend("TinyAlexNet")
function TinyAlexNet:init()
    self.features = nn.Sequential(nn.Conv2d(3, 4, 3, { padding = 1 }), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(4, 6, 3, { padding = 1 }), nn.ReLU(), nn.MaxPool2d(2))
    self.classifier = nn.Sequential(nn.Linear(96, 16), nn.ReLU(), nn.Linear(16, 5))
end
function TinyAlexNet:forward(x)
    x = self.features(x)
    x = x:view(x:size(1), -1)
    return self.classifier(x)
end

-- parameter j (0-based, named_parameters order) is 0.3 sin(0.7 i + j + 1) over its flat index i
local function make_model()
    local m = TinyAlexNet()
    tide.no_grad(function()
        for j, np_ in ipairs(m:named_parameters()) do
            local p = np_[2]
            local i = tide.arange(p:numel(), { dtype = "float64" })
            p:copy_((0.3 * tide.sin(0.7 * i + j)):view(p.shape))
        end
    end)
    return m
end

-- preprocess_image's Variable(im_as_ten, requires_grad=True), by formula
local function make_img()
    local i = tide.arange(3 * 16 * 16, { dtype = "float64" })
    return tide.cos(0.13 * i):float():view(1, 3, 16, 16):requires_grad_(true)
end

-- GAP: the first layer is a Conv2d; PyTorch's deprecated register_backward_hook there gives the
-- last autograd node's grad_in (input, weight, bias), which tide raises on (docs/API.md
-- "register_backward_hook"); its grad_in[0], the input's gradient, is the full hook's
-- grad_input[1], so the ports below register the full hook on it
local function hook_first_layer(model, hook_function)
    -- first_layer = list(self.model.features._modules.items())[0][1]
    local first_layer = model.features:named_children()[1][2]
    -- first_layer.register_backward_hook(hook_function)
    first_layer:register_full_backward_hook(hook_function)
end

---------------------------------------------------------------------------------------------
-- src/misc_functions.py convert_to_grayscale
---------------------------------------------------------------------------------------------
-- def convert_to_grayscale(im_as_arr):
local function convert_to_grayscale(im_as_arr)
    -- grayscale_im = np.sum(np.abs(im_as_arr), axis=0)
    local grayscale_im = im_as_arr:abs():sum(1)
    -- im_max = np.percentile(grayscale_im, 99)  (numpy's linear interpolation, quantile's too)
    local im_max = grayscale_im:quantile(0.99):item()
    -- im_min = np.min(grayscale_im)
    local im_min = grayscale_im:min():item()
    -- grayscale_im = (np.clip((grayscale_im - im_min) / (im_max - im_min), 0, 1))
    grayscale_im = ((grayscale_im - im_min) / (im_max - im_min)):clamp(0, 1)
    -- grayscale_im = np.expand_dims(grayscale_im, axis=0)
    grayscale_im = grayscale_im:unsqueeze(1)
    return grayscale_im
end

---------------------------------------------------------------------------------------------
-- src/vanilla_backprop.py
---------------------------------------------------------------------------------------------
-- class VanillaBackprop():
local VanillaBackprop = class("VanillaBackprop")
-- def __init__(self, model):
function VanillaBackprop:__init__(model)
    self.model = model
    self.gradients = nil
    -- Put model in evaluation mode
    self.model:eval()
    -- Hook the first layer to get the gradient
    self:hook_layers()
end

-- def hook_layers(self):
function VanillaBackprop:hook_layers()
    -- def hook_function(module, grad_in, grad_out):
    local function hook_function(_, grad_in, _)
        -- self.gradients = grad_in[0]
        self.gradients = grad_in[1]
    end
    -- Register hook to the first layer (GAP: the full hook, see hook_first_layer)
    hook_first_layer(self.model, hook_function)
end

-- def generate_gradients(self, input_image, target_class):
local function generate_gradients(self, input_image, target_class)
    -- Forward
    -- model_output = self.model(input_image)
    local model_output = self.model(input_image)
    -- Zero grads
    -- self.model.zero_grad()
    self.model:zero_grad()
    -- Target for backprop
    -- one_hot_output = torch.FloatTensor(1, model_output.size()[-1]).zero_()
    local one_hot_output = tide.FloatTensor(1, model_output:size(-1)):zero_()
    -- one_hot_output[0][target_class] = 1
    one_hot_output[1][target_class] = 1
    -- Backward pass
    -- model_output.backward(gradient=one_hot_output)
    model_output:backward({ gradient = one_hot_output })
    -- Convert Pytorch variable to numpy array
    -- [0] to get rid of the first channel (1,3,224,224)
    -- gradients_as_arr = self.gradients.data.numpy()[0]
    local gradients_as_arr = self.gradients:detach()[1]
    return gradients_as_arr
end
VanillaBackprop.generate_gradients = generate_gradients

---------------------------------------------------------------------------------------------
-- src/guided_backprop.py
---------------------------------------------------------------------------------------------
-- class GuidedBackprop():
local GuidedBackprop = class("GuidedBackprop")
-- def __init__(self, model):
function GuidedBackprop:__init__(model)
    self.model = model
    self.gradients = nil
    -- self.forward_relu_outputs = []
    self.forward_relu_outputs = {}
    -- Put model in evaluation mode
    self.model:eval()
    self:update_relus()
    self:hook_layers()
end

-- def hook_layers(self):
GuidedBackprop.hook_layers = VanillaBackprop.hook_layers

-- def update_relus(self):
function GuidedBackprop:update_relus()
    -- def relu_backward_hook_function(module, grad_in, grad_out):
    local function relu_backward_hook_function(_, grad_in, _)
        -- Get last forward output
        -- corresponding_forward_output = self.forward_relu_outputs[-1]
        local corresponding_forward_output = self.forward_relu_outputs[#self.forward_relu_outputs]
        -- corresponding_forward_output[corresponding_forward_output > 0] = 1
        corresponding_forward_output[corresponding_forward_output:gt(0)] = 1
        -- modified_grad_out = corresponding_forward_output * torch.clamp(grad_in[0], min=0.0)
        local modified_grad_out = corresponding_forward_output *
            tide.clamp(grad_in[1], { min = 0.0 })
        -- del self.forward_relu_outputs[-1]  # Remove last forward output
        table.remove(self.forward_relu_outputs)
        -- return (modified_grad_out,)
        return { modified_grad_out }
    end

    -- def relu_forward_hook_function(module, ten_in, ten_out):
    local function relu_forward_hook_function(_, _, ten_out)
        -- self.forward_relu_outputs.append(ten_out)
        table.insert(self.forward_relu_outputs, ten_out)
    end

    -- Loop through layers, hook up ReLUs
    -- for pos, module in self.model.features._modules.items():
    for _, module in self.model.features:named_children() do
        -- if isinstance(module, ReLU):
        if tide.isinstance(module, nn.ReLU) then
            module:register_backward_hook(relu_backward_hook_function)
            module:register_forward_hook(relu_forward_hook_function)
        end
    end
end

-- def generate_gradients(self, input_image, target_class): as VanillaBackprop's, line for line
GuidedBackprop.generate_gradients = generate_gradients

---------------------------------------------------------------------------------------------
-- src/smooth_grad.py
---------------------------------------------------------------------------------------------
-- GAP (by choice): torch.randn's stream is not tide's, so the noise is a fixed list by formula,
-- noise k = mean + std sin(0.91 i + k) over the flat index i, the same in the PyTorch check
local function make_noise(k, shape, mean, std)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    local i = tide.arange(n, { dtype = "float64" })
    return (mean + std * tide.sin(0.91 * i + k)):float():view(shape)
end

-- def generate_smooth_grad(Backprop, prep_img, target_class, param_n, param_sigma_multiplier):
local function generate_smooth_grad(Backprop, prep_img, target_class, param_n,
                                    param_sigma_multiplier)
    -- Generate an empty image/matrix
    -- smooth_grad = np.zeros(prep_img.size()[1:])
    local smooth_grad = tide.zeros(prep_img.shape[2], prep_img.shape[3], prep_img.shape[4])

    local mean = 0
    -- sigma = param_sigma_multiplier / (torch.max(prep_img) - torch.min(prep_img)).item()
    local sigma = param_sigma_multiplier / (tide.max(prep_img) - tide.min(prep_img)):item()
    -- for x in range(param_n):
    for x = 1, param_n do
        -- Generate noise
        -- noise = Variable(prep_img.data.new(prep_img.size()).normal_(mean, sigma**2))
        local noise = make_noise(x, prep_img.shape, mean, sigma ^ 2)
        -- Add noise to the image
        local noisy_img = prep_img + noise
        -- Calculate gradients
        -- vanilla_grads = Backprop.generate_gradients(noisy_img, target_class)
        local vanilla_grads = Backprop:generate_gradients(noisy_img, target_class)
        -- Add gradients to smooth_grad
        smooth_grad = smooth_grad + vanilla_grads
    end
    -- Average it out
    smooth_grad = smooth_grad / param_n
    return smooth_grad
end

---------------------------------------------------------------------------------------------
-- src/gradcam.py
---------------------------------------------------------------------------------------------
-- class CamExtractor():
local CamExtractor = class("CamExtractor")
-- def __init__(self, model, target_layer):
function CamExtractor:__init__(model, target_layer)
    self.model = model
    self.target_layer = target_layer
    self.gradients = nil
end

-- def save_gradient(self, grad):
function CamExtractor:save_gradient(grad)
    self.gradients = grad
end

-- def forward_pass_on_convolutions(self, x):
function CamExtractor:forward_pass_on_convolutions(x)
    local conv_output = nil
    -- for module_pos, module in self.model.features._modules.items():
    for module_pos, module in self.model.features:named_children() do
        x = module(x) -- Forward
        -- if int(module_pos) == self.target_layer:
        if tonumber(module_pos) == self.target_layer then
            -- x.register_hook(self.save_gradient)
            x:register_hook(function(grad) return self:save_gradient(grad) end)
            conv_output = x -- Save the convolution output on that layer
        end
    end
    return conv_output, x
end

-- def forward_pass(self, x):
function CamExtractor:forward_pass(x)
    -- Forward pass on the convolutions
    local conv_output
    conv_output, x = self:forward_pass_on_convolutions(x)
    -- x = x.view(x.size(0), -1)  # Flatten
    x = x:view(x:size(1), -1)
    -- Forward pass on the classifier
    x = self.model.classifier(x)
    return conv_output, x
end

-- class GradCam():
local GradCam = class("GradCam")
-- def __init__(self, model, target_layer):
function GradCam:__init__(model, target_layer)
    self.model = model
    self.model:eval()
    -- Define extractor
    self.extractor = CamExtractor(self.model, target_layer)
end

-- def generate_cam(self, input_image, target_class=None):
function GradCam:generate_cam(input_image, target_class)
    -- Full forward pass
    -- conv_output, model_output = self.extractor.forward_pass(input_image)
    local conv_output, model_output = self.extractor:forward_pass(input_image)
    if target_class == nil then
        -- target_class = np.argmax(model_output.data.numpy())
        target_class = model_output:detach():argmax():item()
    end
    -- Target for backprop
    -- one_hot_output = torch.FloatTensor(1, model_output.size()[-1]).zero_()
    local one_hot_output = tide.FloatTensor(1, model_output:size(-1)):zero_()
    -- one_hot_output[0][target_class] = 1
    one_hot_output[1][target_class] = 1
    -- Zero grads
    self.model.features:zero_grad()
    self.model.classifier:zero_grad()
    -- Backward pass with specified target
    -- model_output.backward(gradient=one_hot_output, retain_graph=True)
    model_output:backward({ gradient = one_hot_output, retain_graph = true })
    -- Get hooked gradients
    -- guided_gradients = self.extractor.gradients.data.numpy()[0]
    local guided_gradients = self.extractor.gradients:detach()[1]
    -- Get convolution outputs
    -- target = conv_output.data.numpy()[0]
    local target = conv_output:detach()[1]
    -- Get weights from gradients
    -- weights = np.mean(guided_gradients, axis=(1, 2))  # Take averages for each gradient
    local weights = guided_gradients:mean({ 2, 3 })
    -- Create empty numpy array for cam
    -- cam = np.ones(target.shape[1:], dtype=np.float32)
    local cam = tide.ones(target.shape[2], target.shape[3], { dtype = "float32" })
    -- Multiply each weight with its conv output and then, sum
    -- for i, w in enumerate(weights):
    for i, w in ipairs(weights:tolist()) do
        -- cam += w * target[i, :, :]
        cam = cam + w * target[i]
    end
    -- cam = np.maximum(cam, 0)
    cam = tide.clamp(cam, { min = 0 })
    -- cam = (cam - np.min(cam)) / (np.max(cam) - np.min(cam))  # Normalize between 0-1
    cam = (cam - cam:min()) / (cam:max() - cam:min())
    -- cam = np.uint8(cam * 255)  # Scale between 0-255 to visualize
    cam = (cam * 255):to("uint8")
    -- cam = np.uint8(Image.fromarray(cam).resize((input_image.shape[2],
    --                input_image.shape[3]), Image.ANTIALIAS))/255
    -- GAP (by choice): no PIL here; the resize is F.interpolate bilinear (align_corners false),
    -- in float, not rounded back to uint8 (the PyTorch check does the same)
    cam = F.interpolate(cam:float():view(1, 1, cam:size(1), cam:size(2)),
        { size = { input_image.shape[3], input_image.shape[4] }, mode = "bilinear",
            align_corners = false })[1][1] / 255
    return cam, weights
end

---------------------------------------------------------------------------------------------
-- the checks against PyTorch 1.13 (the same classes, model, image and noise in the venv)
---------------------------------------------------------------------------------------------
-- a flattened tensor's sum, absolute sum, first six values and 1-based argmax
local function assert_matches(t, want, tol, what)
    local flat = t:double():reshape(-1)
    assert(flat:numel() == want.n, what .. ": " .. flat:numel() .. " values, PyTorch " .. want.n)
    ported.assert_close_list({ want.sum, want.abs }, { flat:sum():item(), flat:abs():sum():item() },
        tol, what .. " (sum, abs sum)")
    local first = {}
    for i = 1, 6 do first[i] = flat[i]:item() end
    ported.assert_close_list(want.first, first, tol, what .. " first")
    assert.equal(want.argmax, flat:argmax():item(), what .. " argmax")
end

describe("ported pytorch-cnn-visualizations (vanilla, guided, smooth grad, Grad-CAM)", function()
    it("the deprecated backward hook on the first conv raises as documented", function()
        local model = make_model()
        local first_layer = model.features:named_children()[1][2]
        local ok, err = pcall(first_layer.register_backward_hook, first_layer, function() end)
        assert.is_false(ok)
        assert.truthy(tostring(err):find("tide: register_backward_hook: the deprecated non-full " ..
            "backward hook of a module with parameters (Conv2d)", 1, true))
    end)

    it("VanillaBackprop, generate_smooth_grad and convert_to_grayscale match PyTorch", function()
        local model, img = make_model(), make_img()
        local out = model(img)
        ported.assert_close_list({ 0.60765308, 0.77032638, -0.071404584, -0.79096544, -0.46044791 },
            out:reshape(-1):tolist(), 1e-5, "model output")
        local VBP = VanillaBackprop(model)
        -- vanilla_grads = VBP.generate_gradients(prep_img, target_class): class 2 0-based
        local vanilla_grads = VBP:generate_gradients(img, 3)
        assert.same({ 3, 16, 16 }, vanilla_grads.shape)
        -- the hooked first-layer input gradient is the image's own gradient
        assert.is_true(tide.allclose(vanilla_grads, img.grad[1]))
        assert_matches(vanilla_grads, { n = 768, sum = -0.010867558252357412,
            abs = 6.222783353317936, argmax = 661, first = { 5.0970248e-05, 0.0039115599,
                0.0059913341, 0.0047374899, 0.0070082769, -0.0008248706 } }, 1e-5, "vanilla")
        local gray = convert_to_grayscale(vanilla_grads)
        assert.same({ 1, 16, 16 }, gray.shape)
        assert_matches(gray, { n = 256, sum = 72.01792561000912, abs = 72.01792561000912,
            argmax = 132, first = { 0.003082202, 0.13783295, 0.2130594, 0.16730821, 0.24397609,
                0.027134329 } }, 1e-4, "vanilla grayscale")
        -- param_n = 3 (the script's 50), param_sigma_multiplier = 4
        local smooth_grad = generate_smooth_grad(VBP, img, 3, 3, 4)
        assert.same({ 3, 16, 16 }, smooth_grad.shape)
        assert_matches(smooth_grad, { n = 768, sum = 0.39799441829230386, abs = 9.859745078345137,
            argmax = 666, first = { -0.0027250655, 0.0031064145, 0.016298162, 0.024580342,
                0.026339812, 0.017798332 } }, 1e-5, "smooth grad")
    end)

    it("GuidedBackprop's ReLU hooks match PyTorch's", function()
        -- register_backward_hook on a ReLU warns once as PyTorch's deprecation does (captured)
        require("tide._warn").reset("register_backward_hook")
        local _, said, GBP = require("spec.support.warnings")(GuidedBackprop, make_model())
        assert.equal(1, #said)
        assert.truthy(said[1]:find("tide: warning: register_backward_hook is deprecated", 1, true))
        local guided_grads = GBP:generate_gradients(make_img(), 3)
        -- every stored forward output was popped by its backward hook
        assert.equal(0, #GBP.forward_relu_outputs)
        assert_matches(guided_grads, { n = 768, sum = 0.18015277769018212, abs = 6.274457820819862,
            argmax = 548, first = { 0.0, 0.0, 0.0, 2.1290962e-05, -0.0004758272, -0.0022166451 } },
            1e-5, "guided")
        assert_matches(convert_to_grayscale(guided_grads), { n = 256, sum = 38.6638786541007,
            abs = 38.6638786541007, argmax = 36, first = { 0.0, 0.0, 0.0, 0.00023625547,
                0.0097607607, 0.041868217 } }, 1e-4, "guided grayscale")
    end)

    it("GradCam's map matches PyTorch's", function()
        -- grad_cam = GradCam(pretrained_model, target_layer=11): here the second ReLU, "5"
        local grad_cam = GradCam(make_model(), 5)
        local img = make_img()
        local cam, weights = grad_cam:generate_cam(img, 3)
        ported.assert_close_list({ -0.00040100375190377235, 0.0003682907554320991,
            0.0005505330627784133, -0.00014476903015747666, -0.0006093112751841545,
            -0.00010261742863804102 }, weights:tolist(), 1e-7, "Grad-CAM weights")
        assert.same({ 16, 16 }, cam.shape)
        assert_matches(cam, { n = 256, sum = 165.58431376039516, abs = 165.58431376039516,
            argmax = 145, first = { 0.20784314, 0.15686275, 0.054901961, 0.0029411765,
                0.00098039221, 0.0068627452 } }, 1e-5, "cam")
        -- target_class=None: the argmax of the output (class 1 of 5 here)
        assert_matches(grad_cam:generate_cam(img), { n = 256, sum = 69.80392154399306,
            abs = 69.80392154399306, argmax = 4, first = { 0.74901962, 0.81176472, 0.93725491,
                0.99901962, 0.99705881, 0.98039216 } }, 1e-5, "cam (target_class None)")
    end)
end)
