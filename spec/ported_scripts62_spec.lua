-- ported_scripts62_spec.lua — jacobgil/pytorch-grad-cam's core: pytorch_grad_cam/
-- activations_and_gradients.py (ActivationsAndGradients: forward hooks on the target layers, a
-- tensor hook for the gradients, release), base_cam.py (BaseCAM: forward with targets,
-- compute_cam_per_layer, aggregate_multi_layers, get_target_width_height), grad_cam.py,
-- grad_cam_plusplus.py, xgrad_cam.py, utils/model_targets.py (ClassifierOutputTarget) and
-- utils/image.py (scale_cam_image, show_cam_on_image), ported line for line on a tiny CNN
-- (2 convs, 8x8 inputs, 3 classes) with weights from a fixed formula. The Python line stands
-- above each Lua line that differs from it. numpy's arrays are tide tensors here (np.mean ->
-- :mean, np.maximum(x, 0) -> :clamp_min(0)); class categories are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list
local class = ported.class

---------------------------------------------------------------------------------------------
-- utils/model_targets.py
---------------------------------------------------------------------------------------------
-- class ClassifierOutputTarget:
local ClassifierOutputTarget = class("ClassifierOutputTarget")
function ClassifierOutputTarget:__init__(category)
    self.category = category
end
function ClassifierOutputTarget:__call__(model_output)
    -- if len(model_output.shape) == 1:
    if model_output.ndim == 1 then
        return model_output[self.category]
    end
    -- return model_output[:, self.category]
    return model_output:select(2, self.category)
end

---------------------------------------------------------------------------------------------
-- utils/image.py
---------------------------------------------------------------------------------------------
-- def scale_cam_image(cam, target_size=None):
local function scale_cam_image(cam, target_size)
    local result = {}
    -- for img in cam:
    for i = 1, cam:size(1) do
        local img = cam[i]
        img = img - img:min()
        img = img / (1e-7 + img:max())
        if target_size ~= nil then
            -- GAP: cv2.resize(np.float32(img), target_size) is written with F.interpolate
            -- (bilinear, align_corners=False is cv2's INTER_LINEAR); target_size is (w, h)
            img = F.interpolate(img:float()[{ tide.newaxis, tide.newaxis }], {
                size = { target_size[2], target_size[1] }, mode = "bilinear",
                align_corners = false })[1][1]
        end
        -- result.append(img)
        result[#result + 1] = img
    end
    -- result = np.float32(result)
    return tide.stack(result):float()
end

-- def show_cam_on_image(img, mask, use_rgb=False, colormap=cv2.COLORMAP_JET, image_weight=0.5):
-- img (H, W, 3) in [0, 1], mask (H, W) in [0, 1]
local function show_cam_on_image(img, mask, use_rgb, image_weight)
    image_weight = image_weight or 0.5
    -- heatmap = cv2.applyColorMap(np.uint8(255 * mask), colormap)
    -- GAP: cv2's COLORMAP_JET lookup table is the piecewise-linear jet formula here, on the
    -- uint8-rounded mask; its channels come in BGR order as cv2's
    local v = (255 * mask):floor() / 255
    local function ch(c) return (1.5 - (4 * v - c):abs()):clamp(0, 1) end
    local heatmap = tide.stack({ ch(1), ch(2), ch(3) }, 3) -- B, G, R
    if use_rgb then
        -- heatmap = cv2.cvtColor(heatmap, cv2.COLOR_BGR2RGB)
        heatmap = heatmap:flip(3)
    end
    -- heatmap = np.float32(heatmap) / 255  (the formula is already in [0, 1])
    -- heatmap = np.float32(np.uint8(255 * heatmap)) / 255
    heatmap = (255 * heatmap):floor() / 255
    -- if np.max(img) > 1:
    if img:max():item() > 1 then
        error("The input image should np.float32 in the range [0, 1]")
    end
    if image_weight < 0 or image_weight > 1 then
        error("image_weight should be in the range [0, 1]. Got: " .. image_weight)
    end
    local cam = (1 - image_weight) * heatmap + image_weight * img
    cam = cam / cam:max()
    -- return np.uint8(255 * cam)
    return (255 * cam):to("uint8")
end

---------------------------------------------------------------------------------------------
-- activations_and_gradients.py
---------------------------------------------------------------------------------------------
-- class ActivationsAndGradients:
local ActivationsAndGradients = class("ActivationsAndGradients")
-- def __init__(self, model, target_layers, reshape_transform, detach=True):
function ActivationsAndGradients:__init__(model, target_layers, reshape_transform, detach)
    self.model = model
    self.gradients = {}
    self.activations = {}
    self.reshape_transform = reshape_transform
    -- self.detach = detach
    self.detach = detach ~= false
    self.handles = {}
    -- for target_layer in target_layers:
    for _, target_layer in ipairs(target_layers) do
        -- self.handles.append(target_layer.register_forward_hook(self.save_activation))
        table.insert(self.handles, target_layer:register_forward_hook(function(...)
            return self:save_activation(...)
        end))
        table.insert(self.handles, target_layer:register_forward_hook(function(...)
            return self:save_gradient(...)
        end))
    end
end

-- def save_activation(self, module, input, output):
function ActivationsAndGradients:save_activation(_, _, output)
    local activation = output
    if self.detach then
        if self.reshape_transform ~= nil then
            activation = self.reshape_transform(activation)
        end
        -- self.activations.append(activation.cpu().detach())
        table.insert(self.activations, activation:cpu():detach())
    else
        table.insert(self.activations, activation)
    end
end

-- def save_gradient(self, module, input, output):
function ActivationsAndGradients:save_gradient(_, _, output)
    -- if not hasattr(output, "requires_grad") or not output.requires_grad:
    if not tide.is_tensor(output) or not output.requires_grad then
        return
    end
    -- Gradients are computed in reverse order
    local function _store_grad(grad)
        if self.detach then
            if self.reshape_transform ~= nil then
                grad = self.reshape_transform(grad)
            end
            -- self.gradients = [grad.cpu().detach()] + self.gradients
            table.insert(self.gradients, 1, grad:cpu():detach())
        else
            table.insert(self.gradients, 1, grad)
        end
    end
    output:register_hook(_store_grad)
end

-- def __call__(self, x):
function ActivationsAndGradients:__call__(x)
    self.gradients = {}
    self.activations = {}
    return self.model(x)
end

function ActivationsAndGradients:clear()
    for _, a in ipairs(self.activations) do a:detach_() end
    for _, g in ipairs(self.gradients) do g:detach_() end
    self.activations = {}
    self.gradients = {}
end

function ActivationsAndGradients:release()
    self:clear()
    -- for handle in self.handles: handle.remove()
    for _, handle in ipairs(self.handles) do
        handle.remove()
    end
    self.handles = {}
end

---------------------------------------------------------------------------------------------
-- base_cam.py
---------------------------------------------------------------------------------------------
-- class BaseCAM:
local BaseCAM = class("BaseCAM")
-- def __init__(self, model, target_layers, reshape_transform=None, compute_input_gradient=False,
--              uses_gradients=True, tta_transforms=None, detach=True):
-- GAP: tta_transforms (ttach) and the hpu device are left out: no aug_smooth
function BaseCAM:__init__(model, target_layers, reshape_transform)
    self.model = model
    self.model:eval()
    self.target_layers = target_layers
    self.reshape_transform = reshape_transform
    self.compute_input_gradient = false
    self.uses_gradients = true
    self.detach = true
    self.activations_and_grads = ActivationsAndGradients(self.model, target_layers,
        reshape_transform, self.detach)
end

function BaseCAM:get_cam_weights()
    error("get_cam_weights must be implemented by subclass")
end

-- def get_cam_image(self, input_tensor, target_layer, targets, activations, grads, eigen_smooth):
function BaseCAM:get_cam_image(input_tensor, target_layer, targets, activations, grads)
    local weights = self:get_cam_weights(input_tensor, target_layer, targets, activations, grads)
    local weighted_activations
    if activations.ndim == 4 then
        -- weighted_activations = weights[:, :, None, None] * activations
        weighted_activations = weights[{ {}, {}, tide.newaxis, tide.newaxis }] * activations
    else
        error(string.format("Invalid activation shape. Get %d.", activations.ndim))
    end
    -- GAP: eigen_smooth (get_2d_projection, an SVD) is not ported
    -- cam = weighted_activations.sum(axis=1)
    return weighted_activations:sum(2)
end

-- def forward(self, input_tensor, targets, eigen_smooth=False):
function BaseCAM:forward(input_tensor, targets)
    -- self.outputs = outputs = self.activations_and_grads(input_tensor)
    local outputs = self.activations_and_grads(input_tensor)
    self.outputs = outputs
    if targets == nil then
        -- target_categories = np.argmax(outputs.cpu().data.numpy(), axis=-1)
        local target_categories = outputs:detach():argmax(-1):totable()
        targets = {}
        for i, category in ipairs(target_categories) do
            targets[i] = ClassifierOutputTarget(category)
        end
    end
    if self.uses_gradients then
        self.model:zero_grad()
        -- loss = sum([target(output) for target, output in zip(targets, outputs)])
        local loss = 0
        for i, target in ipairs(targets) do
            loss = loss + target(outputs[i])
        end
        -- loss.backward(retain_graph=True)
        loss:backward({ retain_graph = true })
    end
    local cam_per_layer = self:compute_cam_per_layer(input_tensor, targets)
    return self:aggregate_multi_layers(cam_per_layer)
end

-- def get_target_width_height(self, input_tensor):
function BaseCAM:get_target_width_height(input_tensor)
    if input_tensor.ndim == 4 then
        local width, height = input_tensor:size(-1), input_tensor:size(-2)
        -- return width, height
        return { width, height }
    elseif input_tensor.ndim == 5 then
        return { input_tensor:size(-1), input_tensor:size(-2), input_tensor:size(-3) }
    end
    error("Invalid input_tensor shape. Only 2D or 3D images are supported.")
end

-- def compute_cam_per_layer(self, input_tensor, targets, eigen_smooth):
function BaseCAM:compute_cam_per_layer(input_tensor, targets)
    local activations_list = self.activations_and_grads.activations
    local grads_list = self.activations_and_grads.gradients
    local target_size = self:get_target_width_height(input_tensor)
    local cam_per_target_layer = {}
    -- for i in range(len(self.target_layers)):
    for i = 1, #self.target_layers do
        local target_layer = self.target_layers[i]
        local layer_activations, layer_grads = activations_list[i], grads_list[i]
        local cam = self:get_cam_image(input_tensor, target_layer, targets, layer_activations,
            layer_grads)
        -- cam = np.maximum(cam, 0)
        cam = cam:clamp_min(0)
        local scaled = scale_cam_image(cam, target_size)
        -- cam_per_target_layer.append(scaled[:, None, :])
        cam_per_target_layer[#cam_per_target_layer + 1] = scaled:unsqueeze(2)
    end
    return cam_per_target_layer
end

-- def aggregate_multi_layers(self, cam_per_target_layer):
function BaseCAM:aggregate_multi_layers(cam_per_target_layer)
    -- cam_per_target_layer = np.concatenate(cam_per_target_layer, axis=1)
    cam_per_target_layer = tide.cat(cam_per_target_layer, 2)
    cam_per_target_layer = cam_per_target_layer:clamp_min(0)
    -- result = np.mean(cam_per_target_layer, axis=1)
    local result = cam_per_target_layer:mean(2)
    return scale_cam_image(result)
end

function BaseCAM:__call__(input_tensor, targets)
    return self:forward(input_tensor, targets)
end

-- def __exit__(...): self.activations_and_grads.release()
function BaseCAM:release()
    self.activations_and_grads:release()
end

-- a subclass of BaseCAM that overrides get_cam_weights (Python's class GradCAM(BaseCAM))
local function subclass(name, get_cam_weights)
    local cls = class(name)
    for k, v in pairs(BaseCAM) do
        if k ~= "__index" and k ~= "__name" and cls[k] == nil or k == "__init__" then
            cls[k] = v
        end
    end
    cls.get_cam_weights = get_cam_weights
    return cls
end

-- grad_cam.py: class GradCAM(BaseCAM)
local GradCAM = subclass("GradCAM", function(_, _, _, _, _, grads)
    if grads.ndim == 4 then
        -- return np.mean(grads, axis=(2, 3))
        return grads:mean({ 3, 4 })
    elseif grads.ndim == 5 then
        return grads:mean({ 3, 4, 5 })
    end
    error("Invalid grads shape.Shape of grads should be 4 (2D image) or 5 (3D image).")
end)

-- grad_cam_plusplus.py: class GradCAMPlusPlus(BaseCAM)
local GradCAMPlusPlus = subclass("GradCAMPlusPlus", function(_, _, _, _, activations, grads)
    local grads_power_2 = grads ^ 2
    local grads_power_3 = grads_power_2 * grads
    -- Equation 19 in https://arxiv.org/abs/1710.11063
    -- sum_activations = np.sum(activations, axis=(2, 3))
    local sum_activations = activations:sum({ 3, 4 })
    local eps = 0.000001
    -- aij = grads_power_2 / (2 * grads_power_2 +
    --                        sum_activations[:, :, None, None] * grads_power_3 + eps)
    local aij = grads_power_2 / (2 * grads_power_2
        + sum_activations[{ {}, {}, tide.newaxis, tide.newaxis }] * grads_power_3 + eps)
    -- aij = np.where(grads != 0, aij, 0)
    aij = tide.where(grads:ne(0), aij, 0)
    -- weights = np.maximum(grads, 0) * aij
    local weights = grads:clamp_min(0) * aij
    -- weights = np.sum(weights, axis=(2, 3))
    return weights:sum({ 3, 4 })
end)

-- xgrad_cam.py: class XGradCAM(BaseCAM)
local XGradCAM = subclass("XGradCAM", function(_, _, _, _, activations, grads)
    local sum_activations = activations:sum({ 3, 4 })
    local eps = 1e-7
    -- weights = grads * activations / (sum_activations[:, :, None, None] + eps)
    local weights = grads * activations
        / (sum_activations[{ {}, {}, tide.newaxis, tide.newaxis }] + eps)
    -- weights = weights.sum(axis=(2, 3))
    return weights:sum({ 3, 4 })
end)

---------------------------------------------------------------------------------------------
-- the tiny CNN, weights from a fixed formula (the same in /tmp's PyTorch 1.13 script)
---------------------------------------------------------------------------------------------
local function make_model()
    local model = nn.Sequential(nn.Conv2d(3, 4, 3, { padding = 1 }), nn.ReLU(),
        nn.Conv2d(4, 4, 3, { padding = 1 }), nn.ReLU(), nn.AvgPool2d(2), nn.Flatten(),
        nn.Linear(64, 3))
    tide.no_grad(function()
        for k, p in ipairs(model:parameters()) do
            -- p.copy_((torch.sin(0.7*torch.arange(n) + k) * 0.3).view(p.shape))  (k 0-based)
            local n = p:numel()
            p:copy_((tide.sin(0.7 * tide.arange(n):float() + (k - 1)) * 0.3):view(p.shape))
        end
    end)
    return model
end
local function make_input()
    return tide.cos(0.3 * tide.arange(2 * 3 * 64):float()):view(2, 3, 8, 8)
end

-- PyTorch 1.13's CAMs, every third pixel of each row and column (r[:, ::3, ::3])
local REF = {
    out = { 0.2830051, -0.9376317, -1.592237, 1.67692, 1.714505, 0.641426 },
    gradcam = { 0.423155, 0.7407216, 0.1812638, 0.5996058, 0.5677668, 0, 0.3540832, 0, 0,
        0.3334581, 0.3937351, 0.1637088, 0.6031968, 0.6844878, 0, 0.739365, 0.463318, 0 },
    pp = { 0.3077252, 0.7710591, 0.2472722, 0.5087051, 0.7145342, 0, 0.4040594, 0, 0, 0, 0,
        0.0746875, 0, 0.2081265, 0.9052218, 0, 0.4238012, 0.4632041 },
    xgrad = { 0, 0, 0, 0, 0, 0.4183225, 0, 0.358547, 0.6827574, 0, 0, 0.1503107, 0, 0.6772041,
        0.9999999, 0.2310856, 0.8070471, 0.4325973 },
    multi = { 0, 0, 0, 0, 0, 0.2806904, 0, 0.2980875, 0.9520855, 0.2457055, 0.04216417, 0,
        0.339305, 0.3865488, 0.03684908, 0.3061774, 0.1760856, 0.02473192 },
}

local function every_third(cam)
    return cam:index_select(2, tide.tensor({ 1, 4, 7 })):index_select(3, tide.tensor({ 1, 4, 7 }))
        :reshape(-1):totable()
end
local function targets_of(list)
    local t = {}
    for i, c in ipairs(list) do t[i] = ClassifierOutputTarget(c) end
    return t
end

describe("ported_scripts62 pytorch-grad-cam", function()
    local model, x
    before_each(function()
        model, x = make_model(), make_input()
    end)

    it("the tiny CNN's logits are PyTorch's", function()
        assert_close_list(REF.out, model(x):reshape(-1):totable(), 1e-4, "logits")
    end)

    it("ActivationsAndGradients: hooks fire, release removes them", function()
        local before = model(x):detach()
        local ag = ActivationsAndGradients(model, { model[3] }, nil, true)
        assert.are.equal(2, #model[3]._forward_hooks)
        local out = ag(x)
        assert.are.equal(1, #ag.activations)
        assert.are.same({ 2, 4, 8, 8 }, ag.activations[1]:size())
        assert.is_false(ag.activations[1].requires_grad)
        out:select(2, 1):sum():backward()
        assert.are.equal(1, #ag.gradients)
        assert.are.same({ 2, 4, 8, 8 }, ag.gradients[1]:size())
        ag:release()
        assert.are.equal(0, #ag.activations)
        assert.is_nil(model[3]._forward_hooks)
        -- no hook left: another forward records nothing and gives the same outputs
        local after = model(x)
        after:sum():backward()
        assert.are.equal(0, #ag.activations)
        assert.are.equal(0, #ag.gradients)
        assert.is_true(tide.equal(before, after:detach()))
    end)

    it("GradCAM (targets=None: argmax) matches PyTorch and lies in [0, 1]", function()
        local cam_obj = GradCAM(model, { model[3] })
        assert.are.same({ 8, 8 }, cam_obj:get_target_width_height(x))
        local cam = cam_obj(x, nil)
        assert.are.same({ 2, 8, 8 }, cam:size())
        assert.are.equal("float32", cam.dtype)
        assert.is_true(cam:min():item() >= 0 and cam:max():item() <= 1)
        assert_close_list(REF.gradcam, every_third(cam), 1e-4, "gradcam")
        cam_obj:release()
        assert.is_nil(model[3]._forward_hooks)
    end)

    it("GradCAM++ and XGradCAM with ClassifierOutputTarget match PyTorch", function()
        -- targets [2, 0] in Python
        local pp = GradCAMPlusPlus(model, { model[3] })
        local cam = pp(x, targets_of({ 3, 1 }))
        pp:release()
        assert.is_true(cam:min():item() >= 0 and cam:max():item() <= 1)
        assert_close_list(REF.pp, every_third(cam), 1e-3, "gradcam++")
        local xg = XGradCAM(model, { model[3] })
        cam = xg(x, targets_of({ 2, 2 }))
        xg:release()
        assert_close_list(REF.xgrad, every_third(cam), 1e-3, "xgradcam")
    end)

    it("two target layers (conv1 and the 4x4 pool, resized) aggregate as PyTorch's", function()
        local cam_obj = GradCAM(model, { model[1], model[5] })
        local cam = cam_obj(x, targets_of({ 1, 3 }))
        cam_obj:release()
        assert.are.same({ 2, 8, 8 }, cam:size())
        assert.is_true(cam:min():item() >= 0 and cam:max():item() <= 1)
        assert_close_list(REF.multi, every_third(cam), 1e-4, "multi-layer")
        assert.is_nil(model[1]._forward_hooks)
        assert.is_nil(model[5]._forward_hooks)
    end)

    it("show_cam_on_image overlays a jet heatmap as uint8", function()
        local mask = tide.tensor({ { 0, 0.25 }, { 0.5, 1 } })
        local img = tide.full({ 2, 2, 3 }, 0.5)
        local out = show_cam_on_image(img, mask, true)
        assert.are.same({ 2, 2, 3 }, out:size())
        assert.are.equal("uint8", out.dtype)
        -- mask 1 in RGB is jet's dark red (0.5, 0, 0) + 0.5 * 0.5 grey, mask 0 dark blue, over the
        -- max, mask 0.5's green (0.25, 0.75, 0.25)
        local t = out:totable()
        assert.are.same({ 169, 85, 85 }, t[2][2])
        assert.are.same({ 85, 85, 169 }, t[1][1])
        assert.has_error(function() show_cam_on_image(img * 3, mask) end,
            "The input image should np.float32 in the range [0, 1]")
    end)
end)
