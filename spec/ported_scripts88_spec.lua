-- ported_scripts88_spec.lua — attribution methods: TianhongDai/integrated-gradient-pytorch
-- (utils.py's calculate_outputs_and_gradients and pre_processing, integrated_gradients.py's
-- integrated_gradients and random_baseline_integrated_gradients), pkdn/pytorch-smoothgrad's
-- lib/gradients.py (VanillaGrad, SmoothGrad) and utkuozbulak/pytorch-cnn-visualizations'
-- src/vanilla_backprop.py and src/guided_backprop.py (VanillaBackprop, GuidedBackprop with
-- ReLU forward/backward hooks), ported line for line at tiny sizes: a tiny conv classifier
-- (features: conv-relu-conv-relu-maxpool, classifier: Linear) on one 8x8x3 image, 4 classes,
-- in place of the ImageNet models. The Python line stands above each Lua line that differs.
-- numpy arrays become tide tensors; class indices are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local class = ported.class

-- the tiny classifier, with a fixed formula over each parameter's index in named_parameters
-- order (PyTorch's values below come from the same weights; eval mode)
local Net = nn.Module:extend("Net")
function Net:init()
    self.features = nn.Sequential(nn.Conv2d(3, 4, 3, { padding = 1 }), nn.ReLU(),
        nn.Conv2d(4, 4, 3, { padding = 1 }), nn.ReLU(), nn.MaxPool2d(2))
    self.classifier = nn.Linear(64, 4)
end
function Net:forward(x)
    x = self.features(x)
    return self.classifier(x:view(x:size(1), -1))
end

local function make_model()
    local m = Net()
    tide.no_grad(function()
        for k, np_ in ipairs(m:named_parameters()) do
            local p = np_[2]
            local j = tide.arange(p:numel(), { dtype = "float64" })
            p:copy_((0.25 * tide.sin(0.9 * j + 1.7 * k)):view(p.shape))
        end
    end)
    return m:eval()
end

-- the image, HWC in 0..255 as cv2.imread gives it (float64, as numpy's arithmetic makes it)
local function make_image()
    local rows = {}
    for h = 0, 7 do
        local row = {}
        for w = 0, 7 do
            row[w + 1] = {}
            for c = 0, 2 do
                row[w + 1][c + 1] = (37 * h + 11 * w + 53 * c + 7) % 256
            end
        end
        rows[h + 1] = row
    end
    return tide.tensor(rows, { dtype = "float64" })
end

-- checksums of a gradient against PyTorch's: sum, sum of |g|, sum of g * cos(0.3 * j) over the
-- flat (row-major) index j, and the 6th element
local function checksums(g)
    g = g:to("float64"):flatten()
    local wt = tide.cos(0.3 * tide.arange(g:numel(), { dtype = "float64" }))
    return { g:sum():item(), g:abs():sum():item(), (g * wt):sum():item(), g[6]:item() }
end

---------------------------------------------------------------------------------------------
-- 1. TianhongDai/integrated-gradient-pytorch
---------------------------------------------------------------------------------------------
-- def pre_processing(obs, cuda):
local function pre_processing(obs, _cuda)
    -- mean = np.array([0.485, 0.456, 0.406]).reshape([1, 1, 3])
    local mean = tide.tensor({ 0.485, 0.456, 0.406 }, { dtype = "float64" }):reshape({ 1, 1, 3 })
    -- std = np.array([0.229, 0.224, 0.225]).reshape([1, 1, 3])
    local std = tide.tensor({ 0.229, 0.224, 0.225 }, { dtype = "float64" }):reshape({ 1, 1, 3 })
    obs = obs / 255
    obs = (obs - mean) / std
    -- obs = np.transpose(obs, (2, 0, 1))
    obs = obs:permute(3, 1, 2)
    -- obs = np.expand_dims(obs, 0)
    obs = obs:unsqueeze(1)
    -- obs_tensor = torch.tensor(obs, dtype=torch.float32, device=torch_device,
    --                           requires_grad=True)
    local obs_tensor = obs:to("float32"):detach():contiguous():requires_grad_(true)
    return obs_tensor
end

-- def calculate_outputs_and_gradients(inputs, model, target_label_idx, cuda=False):
local function calculate_outputs_and_gradients(inputs, model, target_label_idx, cuda)
    local gradients = {}
    -- for input in inputs:
    for _, input in ipairs(inputs) do
        input = pre_processing(input, cuda)
        local output = model(input)
        -- output = F.softmax(output, dim=1)
        output = F.softmax(output, { dim = 2 })
        if target_label_idx == nil then
            -- target_label_idx = torch.argmax(output, 1).item()
            target_label_idx = tide.argmax(output, 2):item()
        end
        -- index = np.ones((output.size()[0], 1)) * target_label_idx
        -- index = torch.tensor(index, dtype=torch.int64)
        local index = tide.ones({ output:size(1), 1 }, { dtype = "int64" }) * target_label_idx
        -- output = output.gather(1, index)
        output = output:gather(2, index)
        -- clear grad
        model:zero_grad()
        output:backward()
        -- gradient = input.grad.detach().cpu().numpy()[0]
        local gradient = input.grad:detach()[1]
        -- gradients.append(gradient)
        gradients[#gradients + 1] = gradient
    end
    -- gradients = np.array(gradients)
    return tide.stack(gradients), target_label_idx
end

-- def integrated_gradients(inputs, model, target_label_idx, predict_and_gradients, baseline,
--                          steps=50, cuda=False):
local function integrated_gradients(inputs, model, target_label_idx, predict_and_gradients,
                                    baseline, steps, cuda)
    steps = steps or 50
    if baseline == nil then
        baseline = 0 * inputs
    end
    -- scale inputs and compute gradients
    -- scaled_inputs = [baseline + (float(i) / steps) * (inputs - baseline)
    --                  for i in range(0, steps + 1)]
    local scaled_inputs = {}
    for i = 0, steps do
        scaled_inputs[#scaled_inputs + 1] = baseline + (i / steps) * (inputs - baseline)
    end
    local grads = predict_and_gradients(scaled_inputs, model, target_label_idx, cuda)
    -- avg_grads = np.average(grads[:-1], axis=0)
    local avg_grads = grads[{ { 1, -2 } }]:mean(1)
    -- avg_grads = np.transpose(avg_grads, (1, 2, 0))
    avg_grads = avg_grads:permute(2, 3, 1)
    -- delta_X = (pre_processing(inputs, cuda) - pre_processing(baseline, cuda)).detach()
    --     .squeeze(0).cpu().numpy()
    local delta_X = (pre_processing(inputs, cuda) - pre_processing(baseline, cuda)):detach()
        :squeeze(1)
    -- delta_X = np.transpose(delta_X, (1, 2, 0))
    delta_X = delta_X:permute(2, 3, 1)
    local integrated_grad = delta_X * avg_grads
    return integrated_grad
end

-- def random_baseline_integrated_gradients(inputs, model, target_label_idx,
--                                          predict_and_gradients, steps, num_random_trials, cuda):
local function random_baseline_integrated_gradients(inputs, model, target_label_idx,
                                                    predict_and_gradients, steps,
                                                    num_random_trials, cuda)
    local all_intgrads = {}
    -- for i in range(num_random_trials):
    for _ = 1, num_random_trials do
        -- baseline=255.0 *np.random.random(inputs.shape)
        local integrated_grad = integrated_gradients(inputs, model, target_label_idx,
            predict_and_gradients, 255.0 * tide.rand(inputs.shape, { dtype = "float64" }),
            steps, cuda)
        all_intgrads[#all_intgrads + 1] = integrated_grad
    end
    -- avg_intgrads = np.average(np.array(all_intgrads), axis=0)
    local avg_intgrads = tide.stack(all_intgrads):mean(1)
    return avg_intgrads, all_intgrads
end

---------------------------------------------------------------------------------------------
-- 2. pkdn/pytorch-smoothgrad lib/gradients.py
---------------------------------------------------------------------------------------------
-- class VanillaGrad(object):
local VanillaGrad = class("VanillaGrad")
function VanillaGrad:__init__(pretrained_model, cuda)
    self.pretrained_model = pretrained_model
    self.features = pretrained_model.features
    self.cuda = cuda or false
end

-- def __call__(self, x, index=None):
function VanillaGrad:__call__(x, index)
    local output = self.pretrained_model(x)
    if index == nil then
        -- index = np.argmax(output.data.cpu().numpy())
        index = output:detach():argmax():item()
    end
    -- one_hot = np.zeros((1, output.size()[-1]), dtype=np.float32)
    local one_hot = tide.zeros({ 1, output:size(-1) }, { dtype = "float32" })
    -- one_hot[0][index] = 1
    one_hot[1][index] = 1
    -- one_hot = Variable(torch.from_numpy(one_hot), requires_grad=True)
    one_hot:requires_grad_(true)
    -- one_hot = torch.sum(one_hot * output)
    one_hot = tide.sum(one_hot * output)
    -- one_hot.backward(retain_graph=True)
    one_hot:backward(nil, true)
    -- grad = x.grad.data.cpu().numpy()
    local grad = x.grad:detach()
    -- grad = grad[0, :, :, :]
    grad = grad[1]
    return grad
end

-- class SmoothGrad(VanillaGrad):
local SmoothGrad = class("SmoothGrad")
setmetatable(SmoothGrad, { __index = VanillaGrad, __call = getmetatable(SmoothGrad).__call })
-- def __init__(self, pretrained_model, cuda=False, stdev_spread=0.15, n_samples=25,
--              magnitude=True):
function SmoothGrad:__init__(pretrained_model, cuda, stdev_spread, n_samples, magnitude,
                             noise_fn)
    VanillaGrad.__init__(self, pretrained_model, cuda)
    self.stdev_spread = stdev_spread or 0.15
    self.n_samples = n_samples or 25
    if magnitude == nil then magnitude = true end
    self.magnitutde = magnitude
    -- the noise source: np.random.normal(0, stdev, x.shape) unless the check pastes its own
    self.noise_fn = noise_fn or function(_, stdev, shape)
        return tide.normal(0, stdev, shape)
    end
end

-- def __call__(self, x, index=None):
function SmoothGrad:__call__(x, index)
    -- x = x.data.cpu().numpy()
    x = x:detach()
    -- stdev = self.stdev_spread * (np.max(x) - np.min(x))
    local stdev = self.stdev_spread * (x:max():item() - x:min():item())
    -- total_gradients = np.zeros_like(x)
    local total_gradients = tide.zeros_like(x)
    -- for i in range(self.n_samples):
    for i = 1, self.n_samples do
        -- noise = np.random.normal(0, stdev, x.shape).astype(np.float32)
        local noise = self.noise_fn(i, stdev, x.shape):to("float32")
        local x_plus_noise = x + noise
        -- x_plus_noise = Variable(torch.from_numpy(x_plus_noise), requires_grad=True)
        x_plus_noise:requires_grad_(true)
        local output = self.pretrained_model(x_plus_noise)
        if index == nil then
            -- index = np.argmax(output.data.cpu().numpy())
            index = output:detach():argmax():item()
        end
        -- one_hot = np.zeros((1, output.size()[-1]), dtype=np.float32)
        local one_hot = tide.zeros({ 1, output:size(-1) }, { dtype = "float32" })
        -- one_hot[0][index] = 1
        one_hot[1][index] = 1
        -- one_hot = Variable(torch.from_numpy(one_hot), requires_grad=True)
        one_hot:requires_grad_(true)
        -- one_hot = torch.sum(one_hot * output)
        one_hot = tide.sum(one_hot * output)
        -- if x_plus_noise.grad is not None:
        if x_plus_noise.grad ~= nil then
            -- x_plus_noise.grad.data.zero_()
            x_plus_noise.grad:zero_()
        end
        -- one_hot.backward(retain_graph=True)
        one_hot:backward(nil, true)
        -- grad = x_plus_noise.grad.data.cpu().numpy()
        local grad = x_plus_noise.grad:detach()
        if self.magnitutde then
            -- total_gradients += (grad * grad)
            total_gradients = total_gradients + (grad * grad)
        else
            total_gradients = total_gradients + grad
        end
    end
    -- avg_gradients = total_gradients[0, :, :, :] / self.n_samples
    local avg_gradients = total_gradients[1] / self.n_samples
    return avg_gradients
end

---------------------------------------------------------------------------------------------
-- 3. utkuozbulak/pytorch-cnn-visualizations src/vanilla_backprop.py, src/guided_backprop.py
---------------------------------------------------------------------------------------------
-- class VanillaBackprop():
local VanillaBackprop = class("VanillaBackprop")
function VanillaBackprop:__init__(model)
    self.model = model
    self.gradients = nil
    -- Put model in evaluation mode
    self.model:eval()
    -- Hook the first layer to get the gradient
    self:hook_layers()
end

function VanillaBackprop:hook_layers()
    local function hook_function(_module, grad_in, _grad_out)
        -- self.gradients = grad_in[0]
        self.gradients = grad_in[1]
    end
    -- Register hook to the first layer
    -- first_layer = list(self.model.features._modules.items())[0][1]
    local first_layer = self.model.features:named_children()[1][2]
    -- first_layer.register_backward_hook(hook_function)
    -- GAP: the deprecated register_backward_hook on a module with parameters (this conv) raises
    -- (its grad_in would hold the weight's gradients too); the full hook gives the same
    -- grad_in[0] (the gradient of the conv's input) here
    first_layer:register_full_backward_hook(hook_function)
end

-- def generate_gradients(self, input_image, target_class):
function VanillaBackprop:generate_gradients(input_image, target_class)
    -- Forward
    local model_output = self.model(input_image)
    -- Zero grads
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

-- class GuidedBackprop():
local GuidedBackprop = class("GuidedBackprop")
function GuidedBackprop:__init__(model)
    self.model = model
    self.gradients = nil
    self.forward_relu_outputs = {}
    -- Put model in evaluation mode
    self.model:eval()
    self:update_relus()
    self:hook_layers()
end

GuidedBackprop.hook_layers = VanillaBackprop.hook_layers

function GuidedBackprop:update_relus()
    -- def relu_backward_hook_function(module, grad_in, grad_out):
    local function relu_backward_hook_function(_module, grad_in, _grad_out)
        -- Get last forward output
        -- corresponding_forward_output = self.forward_relu_outputs[-1]
        local corresponding_forward_output = self.forward_relu_outputs[#self.forward_relu_outputs]
        -- corresponding_forward_output[corresponding_forward_output > 0] = 1
        corresponding_forward_output[corresponding_forward_output:gt(0)] = 1
        -- modified_grad_out = corresponding_forward_output * torch.clamp(grad_in[0], min=0.0)
        local modified_grad_out = corresponding_forward_output
            * tide.clamp(grad_in[1], { min = 0.0 })
        -- del self.forward_relu_outputs[-1]  # Remove last forward output
        table.remove(self.forward_relu_outputs)
        -- return (modified_grad_out,)
        return { modified_grad_out }
    end

    -- def relu_forward_hook_function(module, ten_in, ten_out):
    local function relu_forward_hook_function(_module, _ten_in, ten_out)
        -- self.forward_relu_outputs.append(ten_out)
        self.forward_relu_outputs[#self.forward_relu_outputs + 1] = ten_out
    end

    -- Loop through layers, hook up ReLUs
    -- for pos, module in self.model.features._modules.items():
    for _, pos_module in ipairs(self.model.features:named_children()) do
        local module = pos_module[2]
        -- if isinstance(module, ReLU):
        if tide.isinstance(module, nn.ReLU) then
            -- module.register_backward_hook(relu_backward_hook_function)
            -- (on a module without parameters, the deprecated hook is the full one)
            module:register_backward_hook(relu_backward_hook_function)
            module:register_forward_hook(relu_forward_hook_function)
        end
    end
end

GuidedBackprop.generate_gradients = VanillaBackprop.generate_gradients

---------------------------------------------------------------------------------------------
-- checks against PyTorch 1.13 (the same weights, image and noise; eval mode)
---------------------------------------------------------------------------------------------
describe("ported_scripts88: attribution methods", function()
    local TOL = 2e-4

    it("integrated-gradient-pytorch: vanilla gradients, IG (4 steps), completeness", function()
        local model = make_model()
        local img = make_image()
        -- gradients, label_index = calculate_outputs_and_gradients([img], model, None)
        local gradients, label_index = calculate_outputs_and_gradients({ img }, model, nil)
        assert.are.equal(2, label_index)
        assert.are.same({ 1, 3, 8, 8 }, gradients.shape)
        ported.assert_close_list({ 0.01929345536, 1.252803257, 0.03057629396, 0.00939619448 },
            checksums(gradients[1]), TOL, "vanilla gradients")
        -- attributions = integrated_gradients(img, model, label_index,
        --     calculate_outputs_and_gradients, baseline=None, steps=4)
        local attributions = integrated_gradients(img, model, label_index,
            calculate_outputs_and_gradients, nil, 4)
        assert.are.same({ 8, 8, 3 }, attributions.shape)
        local ig = checksums(attributions)
        ported.assert_close_list({ 0.05003193297, 1.215075796, -0.00582355696, -0.0006778525421 },
            ig, TOL, "integrated gradients")
        -- completeness: the attributions add up to F(x) - F(baseline), roughly at 4 steps
        -- (PyTorch: 0.0500319 against 0.0695673)
        local p1, p0 = tide.no_grad(function()
            return F.softmax(model(pre_processing(img)), { dim = 2 })[{ 1, label_index }]:item(),
                F.softmax(model(pre_processing(0 * img)), { dim = 2 })[{ 1, label_index }]:item()
        end)
        assert.is_true(ported.close(p1 - p0, 0.06956733763, 1e-4))
        assert.is_true(math.abs(ig[1] - (p1 - p0)) < 0.5 * math.abs(p1 - p0))
    end)

    it("integrated-gradient-pytorch: random_baseline_integrated_gradients", function()
        local model = make_model()
        local img = make_image()
        tide.manual_seed(88)
        local avg, trials = random_baseline_integrated_gradients(img, model, 2,
            calculate_outputs_and_gradients, 2, 2, false)
        assert.are.same({ 8, 8, 3 }, avg.shape)
        assert.are.equal(2, #trials)
        -- the average of the trials, and random baselines differ from trial to trial
        local want = (trials[1] + trials[2]) / 2
        assert.is_true(tide.allclose(avg, want))
        assert.is_false(tide.allclose(trials[1], trials[2]))
        assert_finite(avg:abs():sum():item(), "average attributions")
    end)

    it("pytorch-smoothgrad: VanillaGrad and SmoothGrad (fixed noise, magnitude on and off)",
        function()
            local model = make_model()
            local x = pre_processing(make_image())
            local vanilla_grad = VanillaGrad(model)
            local g = vanilla_grad(x)
            assert.are.same({ 3, 8, 8 }, g.shape)
            ported.assert_close_list({ 0.2274141648, 7.855407307, 0.2902916234, 0.04970698059 },
                checksums(g), TOL, "VanillaGrad")
            -- the noise pasted in both: stdev * sin(1.1 * j + 2.3 * i) over x's flat index j
            local function noise_fn(i, stdev, shape)
                local n = 1
                for _, s in ipairs(shape) do n = n * s end
                local j = tide.arange(n, { dtype = "float64" }):view(shape)
                return stdev * tide.sin(1.1 * j + 2.3 * i)
            end
            local want = {
                [true] = { 0.3001040936, 0.3001040936, -0.003375741436, 0.0008133354131 },
                [false] = { 0.03658685612, 4.182854621, -0.377503894, -0.02128203772 },
            }
            for _, magnitude in ipairs({ true, false }) do
                local smooth_grad = SmoothGrad(model, false, 0.15, 3, magnitude, noise_fn)
                -- the index found by VanillaGrad (2), as the smoothgrad check passes it
                local sg = smooth_grad(x, 2)
                assert.are.same({ 3, 8, 8 }, sg.shape)
                ported.assert_close_list(want[magnitude], checksums(sg), TOL,
                    "SmoothGrad magnitude=" .. tostring(magnitude))
            end
        end)

    it("pytorch-cnn-visualizations: VanillaBackprop and GuidedBackprop hooks", function()
        local img = make_image()
        local vbp = VanillaBackprop(make_model())
        local vg = vbp:generate_gradients(pre_processing(img), 2)
        ported.assert_close_list({ 0.2274141648, 7.855407307, 0.2902916234, 0.04970698059 },
            checksums(vg), TOL, "VanillaBackprop")
        local gbp = GuidedBackprop(make_model())
        local guided_grads = gbp:generate_gradients(pre_processing(img), 2)
        assert.are.same({ 3, 8, 8 }, guided_grads.shape)
        ported.assert_close_list({ 0.2294849143, 14.27510643, -0.7818950822, 0.05403650925 },
            checksums(guided_grads), TOL, "GuidedBackprop")
        -- every stored forward output was used up by the backward hooks
        assert.are.equal(0, #gbp.forward_relu_outputs)
        -- the deprecated hook on a module with parameters raises, naming the full one
        assert.has_error(function()
            nn.Conv2d(3, 4, 3):register_backward_hook(function() end)
        end, "tide: register_backward_hook: the deprecated non-full backward hook of a module " ..
            "with parameters (Conv2d) gives its last operation's gradients, weights' included, " ..
            "which tide does not build; use register_full_backward_hook(fn) (grad_input[1] is " ..
            "the gradient of the module's first input)")
    end)
end)
